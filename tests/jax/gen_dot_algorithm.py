#!/usr/bin/env python3
"""gen_dot_algorithm.py — fixtures for dot_general's `algorithm` attribute
(tests/jax/dot_algorithm/CASE/), one per jax.lax.DotAlgorithmPreset, plus the
example of issue 6 and an infinite input to a multi-pass algorithm.

Each program is what JAX 0.10.2 prints for
    jax.lax.dot(a, b, precision=PRESET[, preferred_element_type=...])
lowered for cpu, or with lowering_platforms=("cuda",) for the presets XLA:CPU
refuses to lower (F16_F16_F32, BF16_BF16_BF16, BF16_BF16_F32_X9, TF32_*,
ANY_F8_*).

Where the expected values come from (each case's source.txt says which):
- The spec's semantics, computed here in numpy / ml_dtypes, independently of
  hlo: operands rounded (round to nearest even) to lhs/rhs_precision_type
  (tf32: f32 with 10 mantissa bits); for the multi-pass presets each f32
  operand split into parts hi = round(x), mid = round(f32(x - hi)),
  lo = round(f32(x - hi - mid)) and the primitive dots accumulated in one
  f32 accumulator in the order of XLA's Triton emitter (triton
  BF16DotTC/F32DotTC: X3 mid*hi, hi*mid; X6 mid*mid, lo*hi, hi*lo, mid*hi,
  hi*mid; X9 lo*lo, mid*lo, lo*mid, then as X6; a NaN accumulator set to 0;
  then hi*hi); every product and sum rounded to accumulation_type, k
  ascending. hlo must match these bit for bit (cmp --exact).
- XLA:CPU (jax on this machine) where it runs the preset AND gives the
  spec's value: F32_F32_F32 and F64_F64_F64 (cmp --rtol 1e-6: XLA:CPU's
  summation order is its own).
XLA:CPU disagrees with the spec for BF16_BF16_F32, BF16_BF16_F32_X3/X6 and
F16_F16_F16: it ignores the algorithm and returns the plain product of the
storage types (the issue's example gives [[1.0002441, 1.0039062], [2, 1]]
there, not [[1, 1], [2, 1]]); the generator checks and prints this.

Run from the repository root: python3 tests/jax/gen_dot_algorithm.py
"""
import os
import shutil
import sys

import jax
import jax.numpy as jnp
import ml_dtypes
import numpy as np

jax.config.update("jax_enable_x64", True)
P = jax.lax.DotAlgorithmPreset
OUT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "dot_algorithm")
BF16, F32 = ml_dtypes.bfloat16, np.float32

# preset -> (lhs/rhs precision, accumulation, primitive ops, splits)
SPEC = {
    "F16_F16_F16": ("f16", np.float16, 1, 1),
    "F16_F16_F32": ("f16", F32, 1, 1),
    "BF16_BF16_BF16": ("bf16", BF16, 1, 1),
    "BF16_BF16_F32": ("bf16", F32, 1, 1),
    "BF16_BF16_F32_X3": ("bf16", F32, 3, 2),
    "BF16_BF16_F32_X6": ("bf16", F32, 6, 3),
    "BF16_BF16_F32_X9": ("bf16", F32, 9, 3),
    "TF32_TF32_F32": ("tf32", F32, 1, 1),
    "TF32_TF32_F32_X3": ("tf32", F32, 3, 2),
    "F32_F32_F32": ("f32", F32, 1, 1),
    "F64_F64_F64": ("f64", np.float64, 1, 1),
    "ANY_F8_ANY_F8_F32": ("f8", F32, 1, 1),
    "ANY_F8_ANY_F8_F32_FAST_ACCUM": ("f8", F32, 1, 1),
}
PAIRS = {1: [(0, 0)], 3: [(1, 0), (0, 1), (0, 0)],
         6: [(1, 1), (2, 0), (0, 2), (1, 0), (0, 1), (0, 0)],
         9: [(2, 2), (1, 2), (2, 1), (1, 1), (2, 0), (0, 2), (1, 0), (0, 1), (0, 0)]}


def round_tf32(x):
    u = np.asarray(x, F32).view(np.uint32).astype(np.uint64)
    finite = np.isfinite(np.asarray(x, F32))
    r = ((u + 0xFFF + ((u >> 13) & 1)) & ~np.uint64(0x1FFF)).astype(np.uint32).view(F32)
    return np.where(finite, r, np.asarray(x, F32))


def round_to(prec, x):
    """x (any float array) rounded to nearest even to the precision type, as f64."""
    if prec == "tf32":
        return round_tf32(np.asarray(x, F32)).astype(np.float64)
    t = {"f16": np.float16, "bf16": BF16, "f32": F32, "f64": np.float64}.get(prec)
    if t is None:  # f8: the operands already are f8 values
        return np.asarray(x, np.float64)
    return np.asarray(x).astype(t).astype(np.float64)


def spec_dot(a, b, preset):
    """The spec's value of a (M, K) x (K, N) dot under `preset`."""
    prec, acc_t, prims, splits = SPEC[preset]
    def split(x):
        parts, r = [], np.asarray(x, np.float64)
        for i in range(splits):
            p = round_to(prec, r)
            parts.append(p)
            r = (r - p).astype(F32).astype(np.float64)
        return parts
    A, B = split(a), split(b)
    M, K = a.shape
    N = b.shape[1]
    out = np.zeros((M, N), np.float64)
    for i in range(M):
        for j in range(N):
            acc = acc_t(0)
            for n, (pl, pr) in enumerate(PAIRS[prims]):
                if prims > 1 and n == len(PAIRS[prims]) - 1 and np.isnan(acc):
                    acc = acc_t(0)
                for k in range(K):
                    prod = acc_t(A[pl][i, k] * B[pr][k, j])  # exact, then one rounding
                    acc = acc_t(acc + prod)
            out[i, j] = float(acc)
    return out


def lower(fn, args, platform):
    return jax.jit(fn).trace(*args).lower(lowering_platforms=(platform,)).as_text()


def write_case(name, text, inputs, expected, cmp, source):
    d = os.path.join(OUT, name)
    shutil.rmtree(d, ignore_errors=True)
    os.makedirs(os.path.join(d, "inputs"))
    os.makedirs(os.path.join(d, "expected"))
    with open(os.path.join(d, "program.mlir"), "w") as f:
        f.write(text)
    for i, x in enumerate(inputs):
        np.save(os.path.join(d, "inputs", "arg%d.npy" % i), x)
    np.save(os.path.join(d, "expected", "out0.npy"), expected)
    with open(os.path.join(d, "cmp"), "w") as f:
        f.write(cmp + "\n")
    with open(os.path.join(d, "source.txt"), "w") as f:
        f.write(source + "\n")
    print("%-34s %s" % (name, source))


def case(name, preset, a, b, platform, out_dtype=None, npy_in=None):
    p = getattr(P, preset)
    kw = {"preferred_element_type": out_dtype} if out_dtype is not None else {}
    fn = lambda x, y: jax.lax.dot(x, y, precision=p, **kw)
    text = lower(fn, (a, b), platform)
    assert "algorithm = <" in text, preset
    want = spec_dot(np.asarray(a).astype(np.float64) if a.dtype != np.float64 else a,
                    np.asarray(b).astype(np.float64) if b.dtype != np.float64 else b, preset)
    res_t = jax.eval_shape(fn, a, b).dtype
    expected = want.astype(res_t)
    source = "spec (numpy/ml_dtypes)"
    cmp = "--exact"
    if platform == "cpu":
        xla = np.asarray(jax.jit(fn)(a, b)).astype(np.float64)
        plain = (np.asarray(a, np.float64) @ np.asarray(b, np.float64)).astype(res_t).astype(np.float64)
        if preset in ("F32_F32_F32", "F64_F64_F64"):
            assert np.allclose(xla, want, rtol=1e-6, atol=0), (preset, xla, want)
            expected, cmp, source = np.asarray(jax.jit(fn)(a, b)), "--rtol 1e-6", "XLA:CPU (agrees with the spec)"
        elif np.array_equal(xla, expected.astype(np.float64)):
            source = "spec (numpy/ml_dtypes); XLA:CPU gives the same"
        else:
            close = np.allclose(xla, plain, rtol=1e-3)
            source = ("spec (numpy/ml_dtypes); XLA:CPU DISAGREES (max diff %.3g): it %s" %
                      (np.abs(xla - want).max(),
                       "ignores the algorithm (plain product)" if close else "computes something else"))
    else:
        source += "; XLA:CPU cannot run it (lowered for cuda)"
    inputs = [np.asarray(x if npy_in is None else npy_in(x)) for x in (a, b)]
    write_case(name, text, inputs, expected, cmp, source)


def main():
    shutil.rmtree(OUT, ignore_errors=True)
    os.makedirs(OUT)
    rng = np.random.default_rng(6)
    a = rng.standard_normal((3, 5)).astype(F32)
    b = rng.standard_normal((5, 4)).astype(F32)
    # The example: inputs rounded to bf16 first give [[1, 1], [2, 1]].
    ex = np.array([[1 + 2**-12, 1 + 2**-8], [2, 1]], F32)
    eye = np.eye(2, dtype=F32)
    assert np.array_equal(spec_dot(ex, eye, "BF16_BF16_F32"), [[1, 1], [2, 1]])
    case("issue_example_bf16_bf16_f32", "BF16_BF16_F32", ex, eye, "cpu")
    for preset in ("BF16_BF16_F32", "BF16_BF16_F32_X3", "BF16_BF16_F32_X6", "F32_F32_F32"):
        case(preset.lower(), preset, a, b, "cpu")
    case("f64_f64_f64", "F64_F64_F64", a.astype(np.float64), b.astype(np.float64), "cpu")
    case("f16_f16_f16", "F16_F16_F16", (a * 40).astype(np.float16), (b * 40).astype(np.float16), "cpu")
    for preset in ("BF16_BF16_F32_X9", "TF32_TF32_F32", "TF32_TF32_F32_X3", "F16_F16_F32",
                   "BF16_BF16_BF16"):
        case(preset.lower(), preset, a, b, "cuda")
    # f8 operands (given to hlo as float32 .npy, exactly representable); the
    # result asked for in f32 so that it is not rounded to f8 again.
    a8 = (a * 8).astype(ml_dtypes.float8_e4m3fn)
    b8 = (b * 8).astype(ml_dtypes.float8_e5m2)
    for preset in ("ANY_F8_ANY_F8_F32", "ANY_F8_ANY_F8_F32_FAST_ACCUM"):
        case(preset.lower(), preset, a8, b8, "cuda", out_dtype=jnp.float32,
             npy_in=lambda x: np.asarray(x, F32))
    # An infinite input to a multi-pass algorithm: the correction terms are
    # inf - inf = NaN, dropped before hi*hi, so the result is inf, not NaN.
    ai = a.copy()
    ai[0, 0] = np.inf
    case("bf16_x6_inf_input", "BF16_BF16_F32_X6", ai, np.abs(b), "cpu")


if __name__ == "__main__":
    sys.exit(main())
