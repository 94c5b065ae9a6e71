#!/usr/bin/env python3
"""compare.py — tests/suite_aot.sh's comparer: every expected/outK.npy of a
model against OUT_DIR/outK.npy. Floats: relative error norm-wise,
||out - ref|| / ||ref|| <= RTOL (../shared/models/README.md), or with --ulp N
at most N units in the last place apart, element by element; integers and
bools exact. Prints the first difference and exits 1 when any differs.
usage: compare.py OUT_DIR EXPECTED_DIR RTOL [--ulp N]"""
import glob
import os
import sys

import numpy as np


def ulps(a, b):
    ia = a.view(np.int32 if a.dtype == np.float32 else np.int64).astype(np.int64)
    ib = b.view(np.int32 if b.dtype == np.float32 else np.int64).astype(np.int64)
    top = np.int64(1) << (31 if a.dtype == np.float32 else 63)
    ia = np.where(ia < 0, top - ia, ia + 0)  # monotone order
    ib = np.where(ib < 0, top - ib, ib + 0)
    return np.abs(ia - ib)


def main():
    out, exp, rtol = sys.argv[1], sys.argv[2], float(sys.argv[3])
    ulp = int(sys.argv[5]) if len(sys.argv) > 5 and sys.argv[4] == "--ulp" else None
    bad = []
    files = sorted(glob.glob(os.path.join(exp, "out*.npy")))
    if not files:
        print("no expected outputs in " + exp)
        return 1
    for e in files:
        k = os.path.basename(e)
        p = os.path.join(out, k)
        if not os.path.exists(p):
            bad.append(k + ": missing")
            continue
        ref, got = np.load(e), np.load(p)
        if ref.shape != got.shape:
            bad.append("%s: shape %s, expected %s" % (k, got.shape, ref.shape))
            continue
        if ref.dtype.kind == "f":
            got = got.astype(ref.dtype)
            if ulp is not None:
                d = int(ulps(got, ref).max()) if ref.size else 0
                if d > ulp:
                    bad.append("%s: %d ULP apart (at most %d)" % (k, d, ulp))
                continue
            r64, g64 = ref.astype(np.float64), got.astype(np.float64)
            n = np.linalg.norm(r64.ravel())
            err = np.linalg.norm((g64 - r64).ravel()) / (n if n > 0 else 1.0)
            if not np.isfinite(err) or err > rtol:
                bad.append("%s: relative error %.3g > %g" % (k, err, rtol))
        elif ref.dtype != got.dtype and ref.dtype.kind != got.dtype.kind:
            bad.append("%s: dtype %s, expected %s" % (k, got.dtype, ref.dtype))
        elif not np.array_equal(ref, got.astype(ref.dtype)):
            bad.append("%s: %d elements differ" % (k, int((ref != got.astype(ref.dtype)).sum())))
    if bad:
        print("; ".join(bad))
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
