#!/usr/bin/env python3
"""gen_npycmp.py — fixtures tests/jax/npycmp/CASE: a self-test of npycmp's
complex comparison (tests/tools/npycmp.c), run by tests/suite_jax.sh.

Each case is jax.jit(lambda x: x * (1 + 1e-6)) on a complex64 / complex128
vector lowered for the CPU. The expected value is deliberately the *input*
x, not the product (which XLA:CPU would give): every element then differs
by a relative 1e-6 (9.5e-7 in complex64), which `cmp` --rtol 1e-5 must
accept (the norm-wise relative error over |actual - expected|) and which an
exact comparison would not. Element 1 of x has a NaN real part: the product
is NaN in both parts and the expected value only in one, and npycmp must
count both as NaN at the same place. (A comparator that fails these cases
fails the suite; one that passes everything is caught by the linalg cases'
complex results, which differ from XLA's in the last bits.)

Cases inf_f32 / inf_c64: jax.jit(lambda x: x) on a vector holding +inf and
-inf (and a complex inf): the result equals the input, and npycmp --rtol must
accept equal infinities (they once made the norm NaN and failed).

usage: python3 tests/jax/gen_npycmp.py   (rewrites tests/jax/npycmp/)
"""
import os
import shutil

import numpy as np
import jax

jax.config.update("jax_enable_x64", True)
OUT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "npycmp")


def main():
  if os.path.isdir(OUT):
    shutil.rmtree(OUT)
  for dtype, short in ((np.complex64, "c64"), (np.complex128, "c128")):
    x = np.array([1 + 2j, np.nan + 1j, -3.5 + 0.25j, 4e3 - 7e2j], dtype)
    text = jax.jit(lambda v: v * dtype(1 + 1e-6)).trace(x).lower(
        lowering_platforms=("cpu",)).as_text()
    d = os.path.join(OUT, f"rtol_nan_{short}")
    os.makedirs(os.path.join(d, "inputs"))
    os.makedirs(os.path.join(d, "expected"))
    with open(os.path.join(d, "program.mlir"), "w") as f:
      f.write(text)
    np.save(os.path.join(d, "inputs", "arg0.npy"), x)
    np.save(os.path.join(d, "expected", "out0.npy"), x)
    with open(os.path.join(d, "cmp"), "w") as f:
      f.write("--rtol 1e-5\n")
  for dtype, short in ((np.float32, "f32"), (np.complex64, "c64")):
    x = np.array([1, np.inf, -np.inf, 2], dtype)
    if short == "c64":
      x[3] = complex(np.inf, 1)
    text = jax.jit(lambda v: v).trace(x).lower(lowering_platforms=("cpu",)).as_text()
    d = os.path.join(OUT, f"inf_{short}")
    os.makedirs(os.path.join(d, "inputs"))
    os.makedirs(os.path.join(d, "expected"))
    with open(os.path.join(d, "program.mlir"), "w") as f:
      f.write(text)
    np.save(os.path.join(d, "inputs", "arg0.npy"), x)
    np.save(os.path.join(d, "expected", "out0.npy"), x)
    with open(os.path.join(d, "cmp"), "w") as f:
      f.write("--rtol 1e-6\n")
  print(f"wrote 4 cases to {OUT}")


if __name__ == "__main__":
  main()
