"""The examples in examples/python run and agree with what they compare
against (their exit status says so)."""
import os
import subprocess
import sys

import pytest

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))


def run(*args):
    r = subprocess.run([sys.executable] + list(args), cwd=ROOT, capture_output=True, text=True,
                       timeout=300)
    assert r.returncode == 0, r.stdout + r.stderr
    return r.stdout


def test_mlp_train():
    pytest.importorskip("jax")
    out = run("examples/python/mlp_train.py", "--steps", "3")
    assert "losses agree within 1e-4" in out


def test_run_mlir():
    out = run("examples/python/run_mlir.py")
    err = float(out.split("relative error against XLA:CPU")[1].split()[0])
    assert err < 1e-5, out
