#!/usr/bin/env python3
"""Checks hlo's text against JAX's own MLIR (the StableHLO dialect JAX ships),
both ways:
- what `hlo print` writes, JAX's MLIR parses: every program under
  ../shared/models, every Nth file of ../shared/conformance/testdata (those
  hold only StableHLO, chlo and func ops; the interpret/ files use the check
  dialect, which JAX's MLIR lacks) and every program of tests/jax;
- what JAX's MLIR prints (its pretty forms, from the same files parsed and
  printed back by MLIR), hlo parses and prints back identically (issue 12:
  the pretty forms hlo reads are MLIR's grammar, so none of MLIR's may be
  refused).

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
    here = os.path.dirname(os.path.abspath(__file__))
    files += sorted(glob.glob(os.path.join(here, "jax", "*", "*", "program.mlir")))
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
    p2, f2 = mlir_printed_parses(hlo, files, ctx)
    passed += p2
    failed += f2
    print(f"mlir-compat: {passed} passed, {failed} failed")
    return 1 if failed else 0


def mlir_printed_parses(hlo, files, ctx):
    """MLIR's printed form of each file (those MLIR parses) must parse in hlo
    and print back identically: hlo print of it, then hlo print of that."""
    import tempfile
    passed = failed = 0
    with tempfile.TemporaryDirectory() as tmp:
        for f in files:
            try:
                from jax._src.lib.mlir import ir
                m = ir.Module.parse(open(f).read(), context=ctx)
            except Exception:
                continue  # not MLIR's (hlo-only syntax); nothing to compare
            src = os.path.join(tmp, "mlir.mlir")
            with open(src, "w") as fh:
                fh.write(m.operation.get_asm(enable_debug_info=False))
            p1 = subprocess.run([hlo, "print", "--no-verify", src], capture_output=True, text=True)
            if p1.returncode != 0:
                failed += 1
                print(f"FAIL {f}: hlo refuses MLIR's printed form: {p1.stderr.strip()[:300]}")
                continue
            again = os.path.join(tmp, "again.mlir")
            with open(again, "w") as fh:
                fh.write(p1.stdout)
            p2 = subprocess.run([hlo, "print", "--no-verify", again], capture_output=True, text=True)
            if p2.returncode != 0 or p2.stdout != p1.stdout:
                failed += 1
                print(f"FAIL {f}: MLIR's printed form does not round-trip in hlo")
                continue
            passed += 1
    return passed, failed


if __name__ == "__main__":
    sys.exit(main())
