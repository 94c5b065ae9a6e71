#!/usr/bin/env python3
"""Exports the programs bundled in examples/models/ with JAX: the StableHLO
text JAX lowers each to, its inputs, and XLA:CPU's outputs as .npy files.

usage: python3 tools/export_example.py [OUT_DIR]   (default examples/models)
Needs `pip install jax` (XLA:CPU). Deterministic: fixed PRNG seeds."""
import json
import os
import sys

import jax
import jax.numpy as jnp
import numpy as np

jax.config.update("jax_default_matmul_precision", "highest")


def mlp_block(x, w1, b1, w2, b2, gamma, beta):
    """A transformer feed-forward block: dense, GELU, dense, residual, LayerNorm."""
    h = jax.nn.gelu(x @ w1 + b1, approximate=True)
    y = x + h @ w2 + b2
    mean = jnp.mean(y, axis=-1, keepdims=True)
    var = jnp.mean(jnp.square(y - mean), axis=-1, keepdims=True)
    return (y - mean) * jax.lax.rsqrt(var + 1e-5) * gamma + beta


def mlp_args():
    k = jax.random.split(jax.random.PRNGKey(0), 4)
    d, f, n = 64, 256, 32
    return [
        jax.random.normal(k[0], (n, d), jnp.float32),
        jax.random.normal(k[1], (d, f), jnp.float32) / np.sqrt(d),
        jnp.full((f,), 0.01, jnp.float32),
        jax.random.normal(k[2], (f, d), jnp.float32) / np.sqrt(f),
        jnp.zeros((d,), jnp.float32),
        jnp.ones((d,), jnp.float32),
        jnp.zeros((d,), jnp.float32),
    ]


PROGRAMS = {"mlp_block": (mlp_block, mlp_args)}


def export(name, fn, make_args, out_dir):
    args = make_args()
    d = os.path.join(out_dir, name)
    os.makedirs(os.path.join(d, "inputs"), exist_ok=True)
    os.makedirs(os.path.join(d, "expected"), exist_ok=True)
    lowered = jax.jit(fn).lower(*args)
    with open(os.path.join(d, name + ".mlir"), "w") as f:
        f.write(lowered.as_text())
    for i, a in enumerate(args):
        np.save(os.path.join(d, "inputs", f"arg{i}.npy"), np.asarray(a))
    outs = jax.jit(fn)(*args)
    outs = outs if isinstance(outs, (list, tuple)) else [outs]
    for i, o in enumerate(outs):
        np.save(os.path.join(d, "expected", f"out{i}.npy"), np.asarray(o))
    meta = {"name": name, "jax": jax.__version__, "function": fn.__name__,
            "inputs": [{"shape": list(a.shape), "dtype": str(a.dtype)} for a in args],
            "outputs": [{"shape": list(o.shape), "dtype": str(o.dtype)} for o in outs],
            "expected_from": "XLA:CPU, matmul precision highest"}
    with open(os.path.join(d, "meta.json"), "w") as f:
        json.dump(meta, f, indent=1)
    print(f"exported {name} to {d}")


if __name__ == "__main__":
    out = sys.argv[1] if len(sys.argv) > 1 else "examples/models"
    for name, (fn, mk) in PROGRAMS.items():
        export(name, fn, mk, out)
