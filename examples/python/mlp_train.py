"""A plain-JAX MLP trained for a few SGD steps twice: with hlo.jit and with
jax.jit, from the same initial parameters and batches. Prints both losses per
step and checks they agree within tolerance.

usage: python3 examples/python/mlp_train.py [--steps N] [--backend cpu|interp]
(needs the hlo package — `pip install .` at the repository root — and jax)."""
import argparse
import time

import jax
import jax.numpy as jnp
import numpy as np

import hlo


def init(key, sizes):
    params = []
    for k, (m, n) in zip(jax.random.split(key, len(sizes) - 1), zip(sizes[:-1], sizes[1:])):
        params.append({"w": jax.random.normal(k, (m, n)) / np.sqrt(m), "b": jnp.zeros(n)})
    return params


def predict(params, x):
    for p in params[:-1]:
        x = jax.nn.relu(x @ p["w"] + p["b"])
    return x @ params[-1]["w"] + params[-1]["b"]


def loss(params, x, y):
    logits = predict(params, x)
    return -jnp.mean(jnp.sum(jax.nn.log_softmax(logits) * jax.nn.one_hot(y, logits.shape[-1]),
                             axis=-1))


def sgd_step(params, x, y, lr):
    value, grads = jax.value_and_grad(loss)(params, x, y)
    return jax.tree_util.tree_map(lambda p, g: p - lr * g, params, grads), value


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--steps", type=int, default=5)
    ap.add_argument("--backend", default="cpu")
    a = ap.parse_args()
    rng = np.random.default_rng(0)
    # a toy problem: 4 classes of points around 4 centres in 16 dims
    centres = rng.standard_normal((4, 16)).astype(np.float32) * 2
    batches = []
    for _ in range(a.steps):
        y = rng.integers(0, 4, 64).astype(np.int32)
        x = (centres[y] + rng.standard_normal((64, 16))).astype(np.float32)
        batches.append((x, y))
    p0 = init(jax.random.PRNGKey(0), [16, 32, 32, 4])

    h_step = hlo.jit(sgd_step, backend=a.backend, donate_argnums=0)
    j_step = jax.jit(sgd_step)
    hp = jax.tree_util.tree_map(np.asarray, p0)
    jp = p0
    worst = 0.0
    print("step   hlo.jit loss   jax.jit loss   rel. diff")
    t0 = time.perf_counter()
    for i, (x, y) in enumerate(batches):
        hp, hl = h_step(hp, x, y, np.float32(0.1))
        jp, jl = j_step(jp, x, y, np.float32(0.1))
        d = abs(float(hl) - float(jl)) / max(abs(float(jl)), 1e-12)
        worst = max(worst, d)
        print("%4d   %12.6f   %12.6f   %9.2e" % (i, float(hl), float(jl), d))
    print("%d steps in %.2f s (first one compiles); executables held: %d"
          % (a.steps, time.perf_counter() - t0, h_step.cache_size()))
    pdiff = max(float(np.max(np.abs(h - np.asarray(j))))
                for h, j in zip(jax.tree_util.tree_leaves(hp), jax.tree_util.tree_leaves(jp)))
    print("largest parameter difference after training: %.3g" % pdiff)
    ok = worst <= 1e-4 and pdiff <= 1e-4
    print("losses agree within 1e-4" if ok else "MISMATCH beyond 1e-4")
    raise SystemExit(0 if ok else 1)


if __name__ == "__main__":
    main()
