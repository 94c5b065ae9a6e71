"""Host callbacks inside hlo.jit (python/hlo/_callback.py over the C API's
custom-call handlers): jax.pure_callback, jax.debug.print (unordered and
ordered: effect tokens), jax.debug.callback and io_callback, each against
jax.jit; callbacks inside loops; several functions with their own callbacks;
threads; a callback's exception as hlo.HloError chained to it; callables
forgotten with their executable."""
import gc
import threading

import numpy as np
import pytest

import hlo
from hlo import _callback

jax = pytest.importorskip("jax")
jnp = jax.numpy
from jax.experimental import io_callback  # noqa: E402

BACKENDS = [b for b in ("cpu", "interp") if b in hlo.backends()]


def _sin_cb(x):
    return jax.pure_callback(lambda a: np.sin(a).astype(a.dtype),
                             jax.ShapeDtypeStruct(x.shape, x.dtype), x)


@pytest.mark.parametrize("backend", BACKENDS)
def test_pure_callback_matches_jax(backend, path):
    def f(x, y):
        s = _sin_cb(x * 2)
        return s * y + 1
    x = np.linspace(-2, 2, 12, dtype=np.float32).reshape(3, 4)
    y = np.arange(12, dtype=np.float32).reshape(3, 4)
    got = hlo.jit(f, backend=backend)(x, y)
    want = np.asarray(jax.jit(f)(x, y))
    assert got.dtype == want.dtype and got.shape == want.shape
    # XLA contracts s * y + 1 into one FMA: an ulp apart at most.
    np.testing.assert_allclose(got, want, rtol=1e-6, atol=1e-6)
    # The callback's own values are exact.
    cb = hlo.jit(lambda x: _sin_cb(x * 2), backend=backend)(x)
    np.testing.assert_array_equal(cb, np.asarray(jax.jit(lambda x: _sin_cb(x * 2))(x)))


@pytest.mark.parametrize("backend", BACKENDS)
def test_pure_callback_several_results_and_types(backend):
    def host(a, b):
        a, b = np.asarray(a), np.asarray(b)     # JAX hands the callback jax.Arrays
        return {"sum": (a.astype(np.int64).sum() + b).astype(np.int32),
                "neg": -a, "flag": np.array(a.max() > 2)}

    def f(a, b):
        shapes = {"sum": jax.ShapeDtypeStruct((), jnp.int32),
                  "neg": jax.ShapeDtypeStruct(a.shape, a.dtype),
                  "flag": jax.ShapeDtypeStruct((), jnp.bool_)}
        r = jax.pure_callback(host, shapes, a, b)
        return r["sum"] * 2, r["neg"], r["flag"]
    a = np.array([1, 2, 3], np.int32)
    b = np.int32(10)
    got = hlo.jit(f, backend=backend)(a, b)
    want = jax.jit(f)(a, b)
    for g, w in zip(got, want):
        assert g.dtype == np.asarray(w).dtype
        np.testing.assert_array_equal(g, np.asarray(w))
    assert int(got[0]) == 32 and bool(got[2])


@pytest.mark.parametrize("backend", BACKENDS)
def test_callback_in_a_loop(backend):
    calls = []

    def host(i, v):
        calls.append(int(i))
        return (v * 2).astype(v.dtype)

    def f(x):
        def body(i, v):
            return jax.pure_callback(host, jax.ShapeDtypeStruct(v.shape, v.dtype), i, v) + 1
        return jax.lax.fori_loop(0, 4, body, x)
    x = np.ones(3, np.float32)
    got = hlo.jit(f, backend=backend)(x)
    assert calls == [0, 1, 2, 3]
    np.testing.assert_array_equal(got, np.asarray(jax.jit(f)(x)))


@pytest.mark.parametrize("backend", BACKENDS)
def test_debug_print_output(backend, capsys):
    def f(x):
        jax.debug.print("x is {x} and the sum {s}", x=x, s=x.sum())
        return x * 3
    x = np.array([1.0, 2.0], np.float32)
    got = hlo.jit(f, backend=backend)(x)
    out = capsys.readouterr().out
    np.testing.assert_array_equal(got, x * 3)
    assert "x is [1. 2.] and the sum 3.0" in out
    jax.jit(f)(x)
    jax.effects_barrier()
    assert capsys.readouterr().out == out      # JAX prints the same line


@pytest.mark.parametrize("backend", BACKENDS)
def test_ordered_debug_print_with_tokens(backend, capsys):
    def f(x):
        jax.debug.print("first {x}", x=x, ordered=True)
        y = x + 1
        jax.debug.print("second {y}", y=y, ordered=True)
        return y * 2, x
    lowered = hlo.jit(f, backend=backend).lower(np.float32(1.5))
    assert "!stablehlo.token" in lowered.as_text()     # JAX's effect tokens
    c = lowered.compile()
    assert [t.kind for t in c.input_types] == ["token", "tensor"]
    got = c(np.float32(1.5))
    assert isinstance(got, tuple) and len(got) == 2
    assert float(got[0]) == 5.0 and float(got[1]) == 1.5
    assert capsys.readouterr().out == "first 1.5\nsecond 2.5\n"
    # Through the jitted function too (its cache).
    got = hlo.jit(f, backend=backend)(np.float32(0.5))
    assert float(got[0]) == 3.0
    assert capsys.readouterr().out == "first 0.5\nsecond 1.5\n"


@pytest.mark.parametrize("backend", BACKENDS)
def test_debug_callback_and_io_callback(backend):
    seen = []

    def f(x):
        jax.debug.callback(lambda v: seen.append(("debug", v.tolist())), x)
        y = io_callback(lambda v: np.asarray(v * 10), jax.ShapeDtypeStruct(x.shape, x.dtype),
                        x)
        z = io_callback(lambda v: (seen.append(("io", v.tolist())), v - 1)[1],
                        jax.ShapeDtypeStruct(x.shape, x.dtype), y, ordered=True)
        return z
    x = np.array([1, 2], np.int32)
    got = hlo.jit(f, backend=backend)(x)
    np.testing.assert_array_equal(got, [9, 19])
    assert ("debug", [1, 2]) in seen and ("io", [10, 20]) in seen
    seen.clear()
    want = jax.jit(f)(x)
    jax.effects_barrier()
    np.testing.assert_array_equal(got, np.asarray(want))


def test_functions_keep_their_own_callbacks():
    f = hlo.jit(lambda x: jax.pure_callback(lambda a: a + 1, jax.ShapeDtypeStruct((2,),
                                                                                  jnp.float32), x))
    g = hlo.jit(lambda x: jax.pure_callback(lambda a: a * 100, jax.ShapeDtypeStruct((2,),
                                                                                    jnp.float32),
                                            x))
    x = np.array([1.0, 2.0], np.float32)
    np.testing.assert_array_equal(f(x), [2.0, 3.0])
    np.testing.assert_array_equal(g(x), [100.0, 200.0])
    np.testing.assert_array_equal(f(x), [2.0, 3.0])


def test_callbacks_from_threads():
    f = hlo.jit(lambda x: _sin_cb(x) + x)
    xs = [np.full((4,), i, np.float32) for i in range(6)]
    out = [None] * len(xs)

    def work(i):
        for _ in range(5):
            out[i] = f(xs[i])
    ts = [threading.Thread(target=work, args=(i,)) for i in range(len(xs))]
    for t in ts:
        t.start()
    for t in ts:
        t.join()
    for x, o in zip(xs, out):
        np.testing.assert_array_equal(o, np.sin(x) + x)


@pytest.mark.parametrize("backend", BACKENDS)
def test_callback_error_is_hlo_error(backend, path):
    def bad(a):
        raise ValueError("no good: %r" % (tuple(a.shape),))

    def f(x):
        return jax.pure_callback(bad, jax.ShapeDtypeStruct(x.shape, x.dtype), x) + 1
    with pytest.raises(hlo.HloError) as ei:
        hlo.jit(f, backend=backend)(np.zeros(3, np.float32))
    e = ei.value
    assert "ValueError" in e.message and "no good: (3,)" in e.message
    assert "jax.pure_callback" in e.message
    assert ".mlir:" in e.diagnostic                       # located at the call
    assert isinstance(e.__cause__, ValueError)


def test_callback_wrong_result_is_hlo_error():
    def f(x):      # the callback's result has the wrong shape
        return jax.pure_callback(lambda a: np.zeros(5, np.float32),
                                 jax.ShapeDtypeStruct(x.shape, x.dtype), x)
    with pytest.raises(hlo.HloError) as ei:
        hlo.jit(f)(np.zeros(3, np.float32))
    assert "shape" in ei.value.message


def test_callables_forgotten_with_the_executable():
    gc.collect()
    before = len(_callback._callables)
    f = hlo.jit(lambda x: _sin_cb(x) * 2)
    f(np.ones(2, np.float32))
    f(np.ones(3, np.float32))
    assert len(_callback._callables) == before + 2
    f.clear_cache()
    gc.collect()
    assert len(_callback._callables) == before


def test_callback_reentering_its_function_is_an_error():
    box = {}

    def host(a):
        return np.asarray(box["f"](np.asarray(a)))   # the same function, same signature

    box["f"] = hlo.jit(lambda x: jax.pure_callback(host, jax.ShapeDtypeStruct((2,),
                                                                              jnp.float32), x))
    with pytest.raises(hlo.HloError) as ei:
        box["f"](np.ones(2, np.float32))
    assert "wait for itself" in str(ei.value.__cause__)
    # Another function called from a callback is fine.
    g = hlo.jit(lambda x: x * 2)
    h = hlo.jit(lambda x: jax.pure_callback(lambda a: np.asarray(g(np.asarray(a))),
                                            jax.ShapeDtypeStruct((2,), jnp.float32), x))
    np.testing.assert_array_equal(h(np.ones(2, np.float32)), [2.0, 2.0])
