#!/usr/bin/env python3
"""table.py — gemm_rate's raw lines (bench/blas/measure.sh's output) as one
markdown table per element type and thread count: a row per shape, a column
per library, GFLOP/s, the best of each row in bold.

Usage: python3 bench/blas/table.py [--cpu] RESULTS [RESULTS2 ...]
--cpu: the rate by CPU time (gemm_rate's "cpu" column) instead of wall time.
When several files are given, each cell is the best of the runs (the runs
are of one machine at different times: the best is the least disturbed).
"""
import sys


def main(paths):
    col = 6
    if paths and paths[0] == "--cpu":
        col, paths = 8, paths[1:]
    cells = {}  # (dtype, threads) -> shape -> lib -> gflops
    order = []
    libs = []
    for p in paths:
        for line in open(p):
            if line.startswith("#") or "GFLOP/s" not in line:
                continue
            f = line.split()
            if col >= len(f) or f[col + 1:col + 2] != ["cpu" if col == 8 else "GFLOP/s"]:
                continue
            shape, dtype, lib, threads, gf = f[0], f[1], f[2], f[3], float(f[col])
            if lib not in libs:
                libs.append(lib)
            key = (dtype, threads)
            if key not in cells:
                cells[key] = {}
                order.append(key)
            row = cells[key].setdefault(shape, {})
            row[lib] = max(gf, row.get(lib, 0.0))
    for key in order:
        rows = cells[key]
        cols = [l for l in libs if any(l in r for r in rows.values())]
        print("\n%s, %s thread%s (GFLOP/s%s):\n" % (key[0], key[1], "" if key[1] == "1" else "s",
                                              " by CPU time" if col == 8 else ""))
        print("| shape M,N,K,batch:tt | " + " | ".join(cols) + " |")
        print("|---|" + "---:|" * len(cols))
        for shape, r in rows.items():
            best = max(r.values())
            out = []
            for c in cols:
                if c not in r:
                    out.append("")
                elif r[c] == best:
                    out.append("**%.1f**" % r[c])
                else:
                    out.append("%.1f" % r[c])
            print("| %s | %s |" % (shape, " | ".join(out)))


if __name__ == "__main__":
    if len(sys.argv) < 2:
        sys.stderr.write(__doc__)
        sys.exit(2)
    main(sys.argv[1:])
