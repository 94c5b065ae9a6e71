"""pytest setup for the Python package's tests (tests/suite_python.sh runs
them): a private compilation cache for the whole session, never
~/.cache/hlo, and the `fast` fixture that runs a test through both call
paths of hlo.Executable (the hlo._fast extension and ctypes alone)."""
import atexit
import os
import shutil
import tempfile

_cache = tempfile.mkdtemp(prefix="hlo-pytest-cache-")
os.environ["HLO_CACHE_DIR"] = _cache
atexit.register(shutil.rmtree, _cache, True)

import pytest  # noqa: E402

import hlo  # noqa: E402
import hlo._core  # noqa: E402


@pytest.fixture(params=["fast", "ctypes"])
def path(request, monkeypatch):
    """Runs the test with hlo._fast (skipped, with the reason, where it was
    not built) and with ctypes alone."""
    if request.param == "fast":
        if not hlo._core.fast_path_available():
            pytest.skip("hlo._fast not built (no Python headers): ctypes path only")
    else:
        monkeypatch.setattr(hlo._core, "_FAST", None)
    return request.param
