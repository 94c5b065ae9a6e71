"""hlo.jit beside jax.jit: same results, pytrees, static and donated
arguments, one executable per signature, .lower / .compile."""
import numpy as np
import pytest

import hlo

jax = pytest.importorskip("jax")
jnp = jax.numpy


def test_issue_example():
    out = hlo.jit(lambda x: jnp.sin(x) * 2)(jnp.arange(3.0))
    assert isinstance(out, np.ndarray)
    np.testing.assert_allclose(out, np.sin(np.arange(3.0, dtype=np.float32)) * 2, rtol=1e-6)


@pytest.mark.parametrize("backend", ["cpu", "interp"])
def test_matches_jax(path, backend):
    def f(x, w, b):
        return jax.nn.gelu(x @ w + b).sum(axis=0)
    r = np.random.default_rng(1)
    args = (r.standard_normal((8, 16), np.float32), r.standard_normal((16, 4), np.float32),
            r.standard_normal(4).astype(np.float32))
    got = hlo.jit(f, backend=backend)(*args)
    want = np.asarray(jax.jit(f)(*args))
    np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-5)


def test_pytrees_in_and_out(path):
    def f(params, batch):
        h = batch["x"] @ params["w"] + params["b"]
        return {"out": h, "stats": (h.mean(), [h.max()])}
    params = {"w": np.ones((3, 2), np.float32), "b": np.arange(2, dtype=np.float32)}
    batch = {"x": np.arange(6, dtype=np.float32).reshape(2, 3)}
    got = hlo.jit(f)(params, batch)
    want = jax.jit(f)(params, batch)
    assert jax.tree_util.tree_structure(got) == jax.tree_util.tree_structure(want)
    for g, w in zip(jax.tree_util.tree_leaves(got), jax.tree_util.tree_leaves(want)):
        np.testing.assert_allclose(g, np.asarray(w), rtol=1e-6)


def test_static_argnums_and_names(path):
    def f(x, n, *, mode):
        y = x * n
        return y + 1 if mode == "plus" else y - 1
    hf = hlo.jit(f, static_argnums=1, static_argnames="mode")
    x = np.arange(4, dtype=np.float32)
    np.testing.assert_array_equal(hf(x, 3, mode="plus"), x * 3 + 1)
    np.testing.assert_array_equal(hf(x, 2, mode="minus"), x * 2 - 1)
    np.testing.assert_array_equal(hf(x, 3, mode="plus"), x * 3 + 1)
    assert hf.cache_size() == 2
    # a static argument named by position is static by name too (as in JAX)
    g = hlo.jit(lambda x, k: x[:k], static_argnames="k")
    assert g(x, 2).shape == (2,) and g(x, k=3).shape == (3,)


def test_one_executable_per_signature(path):
    hf = hlo.jit(lambda x: x * 2)
    hf(np.ones(3, np.float32))
    hf(np.zeros(3, np.float32))
    assert hf.cache_size() == 1
    hf(np.ones(4, np.float32))
    hf(np.ones(3, np.int32))
    hf(2.0)
    assert hf.cache_size() == 4
    np.testing.assert_array_equal(hf(np.ones(3, np.int32)), np.full(3, 2, np.int32))


def test_donate_argnums(path):
    def step(w, g):
        return w - 0.1 * g
    hf = hlo.jit(step, donate_argnums=0)
    w = np.ones(5, np.float32)
    g = np.arange(5, dtype=np.float32)
    low = hf.lower(w, g)
    assert "jax.buffer_donor" in low.as_text() or "tf.aliasing_output" in low.as_text()
    np.testing.assert_allclose(hf(w, g), w - 0.1 * g, rtol=1e-6)


def test_scalars_kwargs_and_canonicalisation(path):
    f = lambda x, y=1.0: x * y  # noqa: E731
    hf = hlo.jit(f)
    out = hf(np.arange(3.0), y=2)      # float64 in, x64 off: float32 as in JAX
    want = np.asarray(jax.jit(f)(np.arange(3.0), y=2))
    assert out.dtype == want.dtype
    np.testing.assert_array_equal(out, want)


def test_jax_arrays_in(path):
    hf = hlo.jit(lambda a, b: a @ b)
    a = jnp.ones((2, 3))
    b = jnp.ones((3, 4))
    np.testing.assert_array_equal(hf(a, b), np.full((2, 4), 3, np.float32))


def test_non_contiguous_inputs_are_copied(path):
    hf = hlo.jit(lambda x: x + 1)
    x = np.arange(6, dtype=np.float32).reshape(2, 3).T
    np.testing.assert_array_equal(hf(x), x + 1)


def test_lower_and_compile():
    def f(x):
        return jnp.tanh(x) * 3
    hf = hlo.jit(f)
    x = np.linspace(-1, 1, 8, dtype=np.float32)
    low = hf.lower(x)
    text = low.as_text()
    assert "stablehlo.tanh" in text and "func.func public @main" in text
    c = low.compile()
    assert [repr(t) for t in c.input_types] == ["f32[8]"]
    assert [repr(t) for t in c.output_types] == ["f32[8]"]
    ca = c.cost_analysis()
    assert ca["transcendentals"] == 8
    assert c.memory_analysis().argument_size_in_bytes == 32
    assert "func.func" in c.as_text()
    np.testing.assert_allclose(c(x), np.tanh(x) * 3, rtol=1e-5)


def test_wrong_structure_for_compiled():
    c = hlo.jit(lambda x, y: x + y).lower(np.ones(2, np.float32), np.ones(2, np.float32)).compile()
    with pytest.raises(hlo.HloError):
        c(np.ones(2, np.float32))


def test_while_and_cond(path):
    def f(n, x):
        def body(c):
            i, acc = c
            return i + 1, acc + jnp.sin(acc)
        _, acc = jax.lax.while_loop(lambda c: c[0] < n, body, (0, x))
        return jax.lax.cond(n > 3, lambda a: a * 2, lambda a: a, acc)
    x = np.linspace(0, 1, 5, dtype=np.float32)
    for n in (2, 5):
        np.testing.assert_allclose(hlo.jit(f)(np.int32(n), x), np.asarray(jax.jit(f)(n, x)),
                                   rtol=1e-5)


def test_decorator_forms():
    @hlo.jit
    def f(x):
        return x + 1

    @hlo.jit(static_argnums=1)
    def g(x, k):
        return x * k
    assert f(np.int32(1)) == 2 and g(np.int32(2), 3) == 6
    assert f.__name__ == "f"


def test_threads_share_one_jitted_function(path):
    import threading
    hf = hlo.jit(lambda x, k: x * k + jnp.cos(x))
    errors = []

    def work(k):
        try:
            for n in (3, 4, 3, 4):
                x = np.full(n, k, np.float32)
                want = x * np.float32(k) + np.cos(x)
                np.testing.assert_allclose(hf(x, np.float32(k)), want, rtol=1e-5)
        except Exception as e:     # reported below
            errors.append(repr(e))

    threads = [threading.Thread(target=work, args=(k,)) for k in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert errors == [] and hf.cache_size() == 2


def test_static_values_of_another_type_recompile(path):
    # 2 == 2.0 and they hash alike, but JAX traces them differently
    def f(x, n):
        return x * n
    hf = hlo.jit(f, static_argnums=1)
    x = np.arange(3, dtype=np.int32)
    a, b = hf(x, 2), hf(x, 2.0)
    assert hf.cache_size() == 2
    assert a.dtype == np.asarray(jax.jit(f, static_argnums=1)(x, 2)).dtype
    assert b.dtype == np.asarray(jax.jit(f, static_argnums=1)(x, 2.0)).dtype


def test_negative_static_argnums(path):
    hf = hlo.jit(lambda x, n: x * n, static_argnums=-1)
    np.testing.assert_array_equal(hf(np.ones(2, np.float32), 5), np.full(2, 5, np.float32))
