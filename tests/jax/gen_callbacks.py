#!/usr/bin/env python3
"""gen_callbacks.py — fixtures tests/jax/callbacks/CASE: host callbacks into
Python (custom_call @xla_ffi_python_cpu_callback) as jax.debug.print,
jax.debug.callback, jax.pure_callback and io_callback lower them.

A C program cannot call into a Python process that is gone, so hlo:
  - skips a callback whose results carry no data (none, or only a token:
    jax.debug.print, jax.debug.callback, io_callback returning None) with
    one warning naming the target, and runs on: expected/ holds XLA:CPU's
    result of the program (jax.jit(f) on this machine), and expect_output
    the warning (once, even when the callback is reached several times);
  - fails on one whose results are used (pure_callback, io_callback) with
    a located error naming the JAX feature: expect_error.
The programs are lowered for "cpu" (JAX refuses to lower callbacks for a
platform other than the one it runs on).

usage: python3 tests/jax/gen_callbacks.py   (rewrites tests/jax/callbacks/)
"""
import os
import shutil

import numpy as np
import jax
import jax.numpy as jnp
from jax.experimental import io_callback

OUT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "callbacks")
WARN = "warning: skipping host callback 'xla_ffi_python_cpu_callback'"


def debug_print(x):
  jax.debug.print("x = {x}", x=x)
  return x * 2


def debug_print_loop(x):
  def body(i, c):
    jax.debug.print("c = {c}", c=c)
    return c + 1
  return jax.lax.fori_loop(0, 3, body, x)


def debug_callback(x):
  jax.debug.callback(lambda v: None, x)
  return jnp.sin(x)


def io_none(x):
  io_callback(lambda v: None, None, x)
  return x + 1


def pure(x):
  return jax.pure_callback(lambda v: v * 2, jax.ShapeDtypeStruct(x.shape, x.dtype), x) + 1


def io_used(x):
  return io_callback(lambda v: v * 2, jax.ShapeDtypeStruct(x.shape, x.dtype), x) + 1


# name -> (function, expect_error lines or None for a run that succeeds)
CASES = {
    "debug_print": (debug_print, None),
    "debug_print_loop": (debug_print_loop, None),
    "debug_callback": (debug_callback, None),
    "io_callback_none": (io_none, None),
    "pure_callback": (pure, ["program.mlir:", "xla_ffi_python_cpu_callback",
                             "jax.pure_callback", "Python package"]),
    "io_callback": (io_used, ["program.mlir:", "xla_ffi_python_cpu_callback",
                              "io_callback", "Python package"]),
}


def main():
  if os.path.isdir(OUT):
    shutil.rmtree(OUT)
  x = np.arange(3, dtype=np.float32)
  for name, (fn, err) in CASES.items():
    d = os.path.join(OUT, name)
    os.makedirs(os.path.join(d, "inputs"))
    text = jax.jit(fn).trace(x).lower(lowering_platforms=("cpu",)).as_text()
    with open(os.path.join(d, "program.mlir"), "w") as f:
      f.write(text)
    np.save(os.path.join(d, "inputs", "arg0.npy"), x)
    if err:
      with open(os.path.join(d, "expect_error"), "w") as f:
        f.write("\n".join(err) + "\n")
      continue
    os.makedirs(os.path.join(d, "expected"))
    np.save(os.path.join(d, "expected", "out0.npy"), np.asarray(jax.jit(fn)(x)))
    with open(os.path.join(d, "expect_output"), "w") as f:
      f.write(WARN + "\n")
  print(f"wrote {len(CASES)} cases to {OUT}")


if __name__ == "__main__":
  main()
