"""Per-call overhead of the Python package on a tiny function (docs/python.md):
the ctypes binding (hlo.Executable, what the package uses), a minimal
CPython C extension doing the same run (_callbench.c, built here with the
running Python's headers), the C call alone, hlo.jit, and jax.jit.

usage: python3 python/bench/call_overhead.py [--build BUILD_DIR]
(needs numpy and jax; PYTHONPATH=python, HLO_LIBRARY=BUILD/libhlo.so, or
the installed package)."""
import argparse
import os
import subprocess
import sys
import sysconfig
import tempfile
import timeit

import numpy as np

ap = argparse.ArgumentParser()
ap.add_argument("--build", default="build")
ap.add_argument("--reps", type=int, default=20000)
a = ap.parse_args()
if not os.environ.get("HLO_LIBRARY") and os.path.exists(os.path.join(a.build, "libhlo.so")):
    os.environ["HLO_LIBRARY"] = os.path.abspath(os.path.join(a.build, "libhlo.so"))
os.environ.setdefault("HLO_CACHE_DIR", tempfile.mkdtemp(prefix="hlo-bench-cache-"))
import hlo  # noqa: E402

here = os.path.dirname(os.path.abspath(__file__))
root = os.path.dirname(os.path.dirname(here))
tmp = tempfile.mkdtemp(prefix="hlo-callbench-")
so = os.path.join(tmp, "_callbench" + sysconfig.get_config_var("EXT_SUFFIX"))
lib = hlo._lib.lib._name
subprocess.check_call(["cc", "-O2", "-shared", "-fPIC", "-I" + sysconfig.get_paths()["include"],
                       "-I" + os.path.join(root, "include"), os.path.join(here, "_callbench.c"),
                       "-o", so, lib, "-Wl,-rpath," + os.path.dirname(lib)])
sys.path.insert(0, tmp)
import _callbench  # noqa: E402

TEXT = """func.func @main(%x: tensor<3xf32>, %y: tensor<3xf32>) -> tensor<3xf32> {
  %z = stablehlo.add %x, %y : tensor<3xf32>
  return %z : tensor<3xf32>
}
"""
x = np.arange(3, dtype=np.float32)
y = np.ones(3, np.float32)


def best(f, n):
    return min(timeit.repeat(f, number=n, repeat=5)) / n * 1e6


for backend in ("interp", "cpu"):
    exe = hlo.compile(TEXT, backend=backend)
    addr = exe._exe.value
    assert (exe(x, y) == x + y).all() and (_callbench.run(addr, x, x, y) == x + y).all()
    c_alone = min(_callbench.loop(addr, a.reps, x, y) for _ in range(5)) * 1e6
    t_pkg = best(lambda: exe(x, y), a.reps)
    fast, hlo._core._FAST = hlo._core._FAST, None
    t_ctypes = best(lambda: exe(x, y), a.reps)
    hlo._core._FAST = fast
    t_ext = best(lambda: _callbench.run(addr, x, x, y), a.reps)
    print("%-6s C run alone %6.2f us | bare C extension %6.2f us (+%.2f) | hlo.Executable: "
          "ctypes only %6.2f us (+%.2f), with hlo._fast %s" % (
              backend, c_alone, t_ext, t_ext - c_alone, t_ctypes, t_ctypes - c_alone,
              "%6.2f us (+%.2f)" % (t_pkg, t_pkg - c_alone) if fast else "(not built)"))

try:
    import jax
    import jax.numpy as jnp
except ImportError:
    print("jax not installed: hlo.jit vs jax.jit skipped")
    sys.exit(0)
f = lambda x, y: x + y  # noqa: E731
hj = hlo.jit(f)
jj = jax.jit(f)
xj, yj = jnp.asarray(x), jnp.asarray(y)
hj(x, y)
jj(xj, yj).block_until_ready()
t_h = best(lambda: hj(x, y), a.reps)
t_j = best(lambda: jj(xj, yj).block_until_ready(), a.reps)
t_jn = best(lambda: np.asarray(jj(x, y)), a.reps)
print("fast path:", "hlo._fast" if hlo._core._FAST else "ctypes only")
print("hlo.jit(numpy in/out) %6.2f us | jax.jit(jax arrays) %6.2f us | "
      "jax.jit(numpy in, numpy out) %6.2f us" % (t_h, t_j, t_jn))
