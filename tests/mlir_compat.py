#!/usr/bin/env python3
"""Checks that what `hlo print` writes is MLIR that JAX's own MLIR (the
StableHLO dialect JAX ships) parses: every program under ../shared/models and
every Nth file of ../shared/conformance/testdata (those hold only StableHLO,
chlo and func ops; the interpret/ files use the check dialect, which JAX's
MLIR lacks).

usage: mlir_compat.py HLO_BINARY SHARED_DIR [EVERY_NTH]
Ends with "mlir-compat: N passed, N failed". Without jax it prints why and
"mlir-compat: 0 passed, 0 failed"."""
import glob
import os
import subprocess
import sys


def main():
    hlo, shared = sys.argv[1], sys.argv[2]
    nth = int(sys.argv[3]) if len(sys.argv) > 3 else 4
    try:
        from jax._src.interpreters import mlir
        from jax._src.lib.mlir import ir
    except Exception as e:  # no jax: nothing to compare with
        print(f"mlir-compat: skipped: cannot import jax's MLIR ({e})")
        print("mlir-compat: 0 passed, 0 failed")
        return 0
    ctx = mlir.make_ir_context()
    files = sorted(glob.glob(os.path.join(shared, "models", "*", "*.mlir")))
    files += sorted(glob.glob(os.path.join(shared, "conformance", "testdata", "*.mlir")))[::nth]
    passed = failed = 0
    for f in files:
        p = subprocess.run([hlo, "print", f], capture_output=True, text=True)
        if p.returncode != 0:
            failed += 1
            print(f"FAIL {f}: hlo print exited {p.returncode}: {p.stderr.strip()[:200]}")
            continue
        try:
            ir.Module.parse(p.stdout, context=ctx)
            passed += 1
        except Exception as e:
            failed += 1
            msg = " ".join(str(e).split())[:300]
            print(f"FAIL {f}: JAX's MLIR rejects hlo's printed text: {msg}")
    print(f"mlir-compat: {passed} passed, {failed} failed")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
