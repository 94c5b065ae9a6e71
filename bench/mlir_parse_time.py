#!/usr/bin/env python3
"""Times MLIR's own parser (the one JAX ships, in C++) on each file: best of N
runs of ir.Module.parse, in milliseconds, one "NAME\tMS" line per file.
usage: mlir_parse_time.py RUNS FILE..."""
import os
import sys
import time

from jax._src.interpreters import mlir
from jax._src.lib.mlir import ir

runs = int(sys.argv[1])
ctx = mlir.make_ir_context()
for path in sys.argv[2:]:
    text = open(path).read()
    best = 1e30
    for _ in range(runs):
        t0 = time.perf_counter()
        ir.Module.parse(text, context=ctx)
        best = min(best, time.perf_counter() - t0)
    print(f"{os.path.basename(path)}\t{best * 1e3:.3f}")
