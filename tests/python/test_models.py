"""hlo.jit on the shared models' JAX functions (../shared/models), rebuilt
from ../shared/tools/export_models.py: each function is traced by the JAX
installed here, compiled and run by hlo on the model's saved inputs, and
compared with the results XLA:CPU gave (expected/outK.npy) within the
tolerances of ../shared/models/README.md (and tests/suite_models.sh):
f32 1e-4 relative (norm-wise), bf16 2e-2, integers and bools exact;
random_normal's normal values within 4 ULP (chlo.erf_inv's log: XLA:CPU's
own polynomial)."""
import functools
import json
import os

import numpy as np
import pytest

import hlo

jax = pytest.importorskip("jax")
jnp = jax.numpy

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
SHARED = os.environ.get("HLO_SHARED") or next(
    (d for d in (os.path.join(ROOT, "..", "shared"), os.path.join(ROOT, "shared"))
     if os.path.isdir(os.path.join(d, "models"))), os.path.join(ROOT, "..", "shared"))
EXPORT = os.path.join(SHARED, "tools", "export_models.py")
MODELS = os.path.join(SHARED, "models")


def _programs():
    """export_models.py's functions and small programs, without running the
    script (its top reads sys.argv and writes files): the text from the
    `programs` marker up to `def dt_name`, executed on its own."""
    if not os.path.exists(EXPORT):
        return {}
    with open(EXPORT) as f:
        src = f.read()
    start = src.index("# ---------------------------------------------------------------- programs")
    end = src.index("def dt_name")
    ns = {"np": np, "jax": jax, "jnp": jnp, "lax": jax.lax, "functools": functools}
    try:
        exec(compile(src[start:end], EXPORT, "exec"), ns)
        return {p[0]: p for p in ns["programs"]("small")}
    except Exception as e:     # a newer export script this test does not know
        return {"<export_models.py>": e}


PROGRAMS = _programs()


def _tolerance(name, dtypes):
    if any("bfloat16" in d for d in dtypes):
        return 2e-2
    return 1e-4


@pytest.mark.parametrize("name", sorted(PROGRAMS) or ["<none>"])
def test_model(name):
    if not PROGRAMS:
        pytest.skip("no %s (the shared folder is not here)" % EXPORT)
    prog = PROGRAMS[name]
    if isinstance(prog, Exception):
        pytest.fail("export_models.py could not be read: %r" % prog)
    _, fn, args, kw, donate = prog
    folder = os.path.join(MODELS, name)
    if not os.path.isdir(folder):
        pytest.skip("%s: no saved inputs in %s" % (name, MODELS))
    with open(os.path.join(folder, "meta.json")) as f:
        meta = json.load(f)
    leaves, tree = jax.tree_util.tree_flatten(args)
    assert len(leaves) == len(meta["inputs"])
    saved = []
    for k, m in enumerate(meta["inputs"]):
        a = np.load(os.path.join(folder, "inputs", "arg%d.npy" % k))
        saved.append(a.astype(jnp.dtype(m["dtype"])))
    args = jax.tree_util.tree_unflatten(tree, saved)
    f = hlo.jit(functools.partial(fn, **kw), donate_argnums=tuple(donate))
    got = jax.tree_util.tree_leaves(f(*args))
    assert len(got) == len(meta["outputs"])
    tol = _tolerance(name, [m["dtype"] for m in meta["inputs"] + meta["outputs"]])
    for k, (g, m) in enumerate(zip(got, meta["outputs"])):
        want = np.load(os.path.join(folder, "expected", "out%d.npy" % k))
        assert list(g.shape) == list(m["shape"]) and str(g.dtype) == m["dtype"], (k, g.dtype)
        g = np.asarray(g)
        if g.dtype.kind in "biu":
            np.testing.assert_array_equal(g.astype(want.dtype), want, err_msg="out%d" % k)
            continue
        if name == "random_normal":
            assert g.dtype == np.float32 and want.dtype == np.float32
            gi = g.view(np.int32).astype(np.int64)
            wi = want.view(np.int32).astype(np.int64)
            ulp = np.abs(np.where(gi < 0, -(gi & 0x7FFFFFFF), gi) -
                         np.where(wi < 0, -(wi & 0x7FFFFFFF), wi)).max()
            assert ulp <= 4, "out%d: %d ULP from XLA's" % (k, ulp)
            continue
        g64 = g.astype(np.float64)
        w64 = want.astype(np.float64)
        err = np.linalg.norm(g64 - w64) / max(np.linalg.norm(w64), 1e-30)
        assert err <= tol, "out%d: relative error %.3g > %g" % (k, err, tol)
