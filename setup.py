"""Build steps of the Python package that pyproject.toml cannot say: libhlo.so
is built by the repository's Makefile (`make shared`, in $HLO_BUILD_DIR, else
build/pip; $HLO_MAKE_JOBS parallel jobs, else the CPU count) and copied into
the package; the optional C extension hlo._fast is compiled when the Python
headers are present. See docs/python.md."""
import os
import re
import shutil
import subprocess

from setuptools import Distribution, Extension, setup
from setuptools.command.build_py import build_py

ROOT = os.path.dirname(os.path.abspath(__file__))


def hlo_version():
    with open(os.path.join(ROOT, "Makefile")) as f:
        return re.search(r"^HLO_VERSION := (\S+)", f.read(), re.M).group(1)


BUILD = os.environ.get("HLO_BUILD_DIR") or os.path.join("build", "pip")


class BuildPy(build_py):
    """build_py, then libhlo.so from the Makefile into the package."""

    def run(self):
        super().run()
        build = BUILD
        jobs = os.environ.get("HLO_MAKE_JOBS") or str(os.cpu_count() or 1)
        subprocess.check_call(["make", "--no-print-directory", "-j" + jobs, "BUILD=" + build,
                               "shared"], cwd=ROOT)
        dst = os.path.join(self.build_lib, "hlo")
        os.makedirs(dst, exist_ok=True)
        shutil.copy2(os.path.join(ROOT, build, "libhlo.so"), os.path.join(dst, "libhlo.so"))


class BinaryDistribution(Distribution):
    """A wheel with a shared library in it is platform-specific."""

    def has_ext_modules(self):
        return True


SETUPTOOLS_DIR = os.path.join(BUILD, "setuptools")    # not the repository's own build/
os.makedirs(os.path.join(ROOT, SETUPTOOLS_DIR), exist_ok=True)
setup(
    version=hlo_version(),
    cmdclass={"build_py": BuildPy},
    distclass=BinaryDistribution,
    ext_modules=[Extension("hlo._fast", ["python/hlo/_fast.c"], include_dirs=["include"],
                           extra_compile_args=["-O2", "-std=c11"], optional=True)],
    options={"build": {"build_base": SETUPTOOLS_DIR}, "egg_info": {"egg_base": SETUPTOOLS_DIR}},
)
