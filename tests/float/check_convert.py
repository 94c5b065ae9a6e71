#!/usr/bin/env python3
"""Bit-exact check of hlo's `stablehlo.convert` against ml_dtypes / numpy.

For every pair (FROM, TO) of float types (f64, f32, f16, bf16 and every
f8/f6/f4 type of the spec) and for float <-> integer pairs, generates inputs
with numpy/ml_dtypes, converts them with hlo (tests/tools/float_convert: a
one-op program run on the interpreter) and compares the result bits with
numpy's `astype` (which ml_dtypes implements for its types).

Inputs: every bit pattern of f16, bf16 and the 8/6/4-bit types; for f32 and
f64, edge values (zeros, subnormal boundaries, max finite of every type
+- half an ulp and ties, inf, NaNs of both signs with payloads) plus seeded
random bit patterns and random values near every target type's range.

The reference is numpy/ml_dtypes, with two deliberate differences that
follow XLA (the spec leaves both open; README documents them):
  * NaN -> NaN between f16, f32 and f64: a signaling NaN is quieted (IEEE
    754 6.2, the CPU's conversion instructions, XLA: f32 0xFF800001 -> f16
    0xFE00); numpy keeps it signaling (0xFC01). The reference is numpy's
    conversion of the quieted input.
  * float -> integer: NaN gives 0 and out-of-range values saturate (XLA's
    convert); numpy/ml_dtypes leave them undefined (garbage). In-range values
    truncate toward zero, compared with numpy.

Prints one row per pair (elements, mismatches, first mismatch) and a last
line "checked N pairs: P passed, F failed"; exits 1 when any pair fails.
usage: check_convert.py --tool build/tests/tools/float_convert [--seed S]
"""
import argparse
import os
import subprocess
import sys
import tempfile

import numpy as np
import ml_dtypes as md

# name (as MLIR spells it), numpy dtype, bit width
FLOATS = [
    ("f64", np.float64, 64), ("f32", np.float32, 32), ("f16", np.float16, 16),
    ("bf16", md.bfloat16, 16), ("f8E3M4", md.float8_e3m4, 8),
    ("f8E4M3", md.float8_e4m3, 8), ("f8E4M3FN", md.float8_e4m3fn, 8),
    ("f8E4M3FNUZ", md.float8_e4m3fnuz, 8),
    ("f8E4M3B11FNUZ", md.float8_e4m3b11fnuz, 8), ("f8E5M2", md.float8_e5m2, 8),
    ("f8E5M2FNUZ", md.float8_e5m2fnuz, 8), ("f8E8M0FNU", md.float8_e8m0fnu, 8),
    ("f6E2M3FN", md.float6_e2m3fn, 6), ("f6E3M2FN", md.float6_e3m2fn, 6),
    ("f4E2M1FN", md.float4_e2m1fn, 4),
]
INTS = [("i8", np.int8), ("i16", np.int16), ("i32", np.int32), ("i64", np.int64),
        ("ui8", np.uint8), ("ui16", np.uint16), ("ui32", np.uint32), ("ui64", np.uint64)]
UINT = {1: np.uint8, 2: np.uint16, 4: np.uint32, 8: np.uint64}
STD = ("f16", "f32", "f64")  # numpy's own IEEE types (NaN quieting rule)


def bits(a):
    return np.ascontiguousarray(a).view(UINT[a.dtype.itemsize])


def from_bits(u, dt):
    return np.ascontiguousarray(u).view(dt)


def edge_values():
    """Values near every type's special points, as float64."""
    v = [0.0, 1.0, 1.5, 2.0, 3.0, 0.75, 0.5, 0.25, 1e-300, 1e300, 5e-324,
         2.0 ** -149, 2.0 ** -150, 1.5 * 2.0 ** -150, 2.0 ** -126, 2.0 ** -127,
         1.5 * 2.0 ** -127, 1.25 * 2.0 ** -127, 2.0 ** 127, 1.5 * 2.0 ** 127,
         2.0 ** 128, 3.4028234663852886e38, 3.4028235677973366e38, 65504.0,
         65520.0, 65519.99, 2.0 ** -24, 2.0 ** -25, 1.5 * 2.0 ** -25,
         1000.0, 448.0, 464.0, 480.0, 57344.0, 61440.0, 240.0, 248.0, 30.0,
         6.0, 7.0, 7.5, 8.0, 28.0, 30.0, 32.0, 15.5, 16.0, 0.1, 1.0 / 3]
    for _, dt, _nb in FLOATS[2:]:
        fi = md.finfo(dt)
        for x in (float(fi.max), float(fi.smallest_normal), float(fi.smallest_subnormal),
                  float(fi.eps)):
            ulp = float(fi.eps) * x
            for d in (0.0, 0.5, -0.5, 0.25, 0.75, 1.0, 0.5 + 2 ** -20, 0.5 - 2 ** -20):
                v.append(x + d * ulp)
            v += [x * 1.5, x * 0.5, x * 0.75, x * 1.25, x * 2]
    v = np.array(v, np.float64)
    v = np.concatenate([v, -v, [np.inf, -np.inf]])
    return v


def nan_patterns(nbits):
    exp = {32: 0x7F800000, 64: 0x7FF0000000000000}[nbits]
    top = 1 << (nbits - 1)
    mbits = {32: 23, 64: 52}[nbits]
    pays = [1, 2, 1 << (mbits - 1), (1 << (mbits - 1)) | 1, (1 << mbits) - 1,
            1 << (mbits - 2), 1 << (mbits - 11), 0x2001 << (mbits - 23)]
    out = []
    for p in pays:
        out += [exp | p, top | exp | p]
    return np.array(out, UINT[nbits // 8])


def inputs_for(name, dt, nb, rng):
    if nb <= 16:
        return from_bits(np.arange(1 << nb, dtype=UINT[max(1, nb // 8) if nb >= 8 else 1]), dt) \
            if nb in (8, 16) else np.arange(1 << nb, dtype=np.uint8).view(dt)
    u = UINT[nb // 8]
    with np.errstate(all="ignore"):
        edge = edge_values().astype(dt)
    rnd = rng.integers(0, np.iinfo(u).max, size=20000, dtype=u, endpoint=True)
    # random values in the range of the narrow types, random sign
    near = (rng.uniform(-1, 1, 20000) * 2.0 ** rng.integers(-140, 20, 20000)).astype(dt)
    return np.concatenate([edge, from_bits(rnd, dt), near, from_bits(nan_patterns(nb), dt)])


def quiet(a, name):
    """Sets the quiet bit of the NaNs of a numpy f16/f32/f64 array."""
    q = {"f16": 0x0200, "f32": 0x00400000, "f64": 0x0008000000000000}[name]
    b = bits(a).copy()
    b[np.isnan(a)] |= b.dtype.type(q)
    return from_bits(b, a.dtype)


def reference(x, fname, tname, tdt):
    with np.errstate(all="ignore"):
        if fname in STD and tname in STD:
            return bits(quiet(x, fname).astype(tdt))
        if np.issubdtype(np.dtype(tdt), np.integer) and fname not in [n for n, _ in INTS]:
            v = np.trunc(x.astype(np.float64))
            ii = np.iinfo(tdt)
            hi = 2.0 ** (ii.bits - (1 if ii.min else 0))  # exact bounds in float
            ok = np.isfinite(v) & (v >= (-hi if ii.min else 0)) & (v < hi)
            ref = np.zeros(len(x), tdt)
            ref[ok] = x[ok].astype(np.float64).astype(tdt)  # exact, in range
            nan = np.isnan(v)
            ref[~ok & ~nan & (v > 0)] = ii.max
            ref[~ok & ~nan & (v < 0)] = ii.min
            return bits(ref) if ref.dtype.itemsize > 1 else ref.view(np.uint8)
        try:
            r = x.astype(tdt)
        except TypeError:  # ml_dtypes lacks this direct cast: through f32, as
            r = x.astype(np.float32).astype(tdt)  # its other casts go
        return bits(r) if r.dtype.itemsize > 1 else r.view(np.uint8)


def run_tool(tool, fname, tname, x, tdt, tmp):
    src = os.path.join(tmp, "in.bin")
    dst = os.path.join(tmp, "out.bin")
    np.ascontiguousarray(x).tofile(src)
    p = subprocess.run([tool, fname, tname, src, dst], capture_output=True, text=True)
    if p.returncode != 0:
        return None, (p.stderr or p.stdout).strip().splitlines()[:1]
    item = np.dtype(tdt).itemsize
    return np.fromfile(dst, UINT[item]), None


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--tool", required=True)
    ap.add_argument("--seed", type=int, default=6)
    args = ap.parse_args()
    rng = np.random.default_rng(args.seed)
    ins = {n: inputs_for(n, dt, nb, rng) for n, dt, nb in FLOATS}
    int_ins = {}
    for n, dt in INTS:
        ii = np.iinfo(dt)
        if ii.bits <= 16:
            int_ins[n] = np.arange(ii.min, ii.max + 1, dtype=np.int64).astype(dt)
        else:
            r = rng.integers(ii.min, ii.max, 5000, dtype=dt, endpoint=True)
            sm = rng.integers(-70000, 70000, 5000).astype(dt)
            p2 = np.array([2 ** k + d for k in range(ii.bits - 1 if ii.min else ii.bits)
                           for d in (-1, 0, 1)], np.float64)
            p2 = p2[(p2 >= ii.min) & (p2 <= ii.max)].astype(dt)
            edge = np.array([ii.min, ii.max, 0, 1], dtype=dt)
            int_ins[n] = np.concatenate([r, sm, p2, edge, (p2 * 3 // 2).astype(dt)])
    pairs = [(f, t) for f in FLOATS for t in FLOATS if f[0] != t[0]]
    pairs += [(f, (n, dt, 0)) for f in FLOATS for n, dt in INTS]
    pairs += [((n, dt, 0), t) for n, dt in INTS for t in FLOATS]
    passed = failed = 0
    print(f"{'from':>14} {'to':>14} {'elements':>9} {'mismatch':>9}  first mismatch (input: hlo, reference)")
    with tempfile.TemporaryDirectory() as tmp:
        for (fname, fdt, _), (tname, tdt, _) in pairs:
            x = ins[fname] if fname in ins else int_ins[fname]
            got, err = run_tool(args.tool, fname, tname, x, tdt, tmp)
            ref = reference(x, fname, tname, tdt)
            if got is None:
                failed += 1
                print(f"{fname:>14} {tname:>14} {len(x):>9} {'ERROR':>9}  {err}")
                continue
            ref = ref.astype(got.dtype)
            bad = np.nonzero(got != ref)[0]
            if len(bad):
                failed += 1
                i = bad[0]
                xb = bits(x[i:i + 1])[0] if x.dtype.itemsize > 1 else x[i:i + 1].view(np.uint8)[0]
                print(f"{fname:>14} {tname:>14} {len(x):>9} {len(bad):>9}  "
                      f"0x{int(xb):x} ({x[i]}): 0x{int(got[i]):x}, 0x{int(ref[i]):x}")
            else:
                passed += 1
                print(f"{fname:>14} {tname:>14} {len(x):>9} {0:>9}")
    print(f"checked {passed + failed} pairs: {passed} passed, {failed} failed")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
