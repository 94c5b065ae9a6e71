#!/usr/bin/env python3
"""gen_tokens.py — tests/jax/tokens/: a @main that takes and returns
!stablehlo.token, as JAX lowers ordered effects.

debug_print_ordered: `jax.debug.print(..., ordered=True)` inside jax.jit;
JAX threads a token through @main (token argument and result) and calls the
host callback custom call. hlo makes the token (no input file) and skips the
token result; the callback is skipped with a warning by hlo's custom-call
handling (the debug print's results are unused). Expected values: XLA:CPU
via jax. token_passthrough/ is hand-made (not written here): a token program
with no callback (after_all, a function passing the token through), testing
the token plumbing alone.

usage: python3 tests/jax/gen_tokens.py   (pip jax; writes tests/jax/tokens/CASE)
"""
import os
import shutil

import jax
import jax.numpy as jnp
import numpy as np

OUT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "tokens")


def f(x):
    jax.debug.print("x = {}", x, ordered=True)
    return jnp.sin(x) * 2


def main():
    d = os.path.join(OUT, "debug_print_ordered")
    shutil.rmtree(d, ignore_errors=True)
    os.makedirs(os.path.join(d, "inputs"))
    os.makedirs(os.path.join(d, "expected"))
    x = np.array([0.5, 1.0, 2.0], np.float32)
    text = jax.jit(f).lower(x).as_text()
    with open(os.path.join(d, "program.mlir"), "w") as fh:
        fh.write(text)
    np.save(os.path.join(d, "inputs", "arg0.npy"), x)
    # @main returns (token, value): the value is result 1
    np.save(os.path.join(d, "expected", "out1.npy"), np.asarray(jax.jit(f)(x)))
    with open(os.path.join(d, "cmp"), "w") as fh:
        fh.write("--rtol 1e-6\n")


if __name__ == "__main__":
    main()
