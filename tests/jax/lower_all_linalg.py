#!/usr/bin/env python3
"""lower_all_linalg.py — a live check that hlo knows every linear-algebra
custom_call target this machine's JAX emits.

Lowers every function of gen_linalg.FUNCS (jnp.linalg, jax.scipy.linalg,
jax.lax.linalg: Cholesky, QR in every mode and with pivoting, SVD in every
mode and algorithm, eigh / eig / eigvals, Schur, Hessenberg, LU, solves,
tridiagonal reductions and solves, ...) for "cpu", "cuda" and "rocm", for
f32, f64, c64 and c128, batched and not, collects every custom_call target,
prints a table of the targets seen per platform, and runs `BUILD/hlo check`
on each program: the check fails, naming them, when hlo warns that a target
is not registered (or a program does not verify).

Needs pip JAX; without it, says so and exits 0 (the committed fixtures of
tests/jax/linalg cover the same targets without Python).
usage: python3 tests/jax/lower_all_linalg.py [BUILD_DIR]   (default build)
"""
import os
import re
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))


def main():
  build = sys.argv[1] if len(sys.argv) > 1 else "build"
  hlo = os.path.join(ROOT, build, "hlo")
  try:
    import numpy as np
    import jax
    sys.path.insert(0, HERE)
    import gen_linalg as g
  except ImportError as e:
    print(f"lower_all_linalg: skipped: jax not importable ({e})")
    return 0
  if not os.access(hlo, os.X_OK):
    print(f"lower_all_linalg: {hlo} not built")
    return 1
  seen = {}       # platform -> {target: set of functions}
  unknown = {}    # target -> set of "function/dtype/platform"
  broken = []
  lowered = 0
  with tempfile.TemporaryDirectory() as tmp:
    for name, (fn, batched) in g.FUNCS.items():
      for plat in ("cpu", "cuda", "rocm"):
        for dtype in (np.float32, np.float64, np.complex64, np.complex128):
          if name in g.REAL_ONLY and np.issubdtype(dtype, np.complexfloating):
            continue
          for batch in ((), (2,)) if batched else ((),):
            a = g.make_input(name, dtype, batch)
            try:
              text = jax.jit(fn).trace(a).lower(lowering_platforms=(plat,)).as_text()
            except NotImplementedError:
              continue  # no lowering of this function for this platform
            lowered += 1
            label = f"{name}/{g.SHORT[dtype]}{list(batch) if batch else ''}/{plat}"
            for t in set(re.findall(r"custom_call @([\w.$-]+)", text)):
              seen.setdefault(plat, {}).setdefault(t, set()).add(name)
            path = os.path.join(tmp, "p.mlir")
            with open(path, "w") as f:
              f.write(text)
            r = subprocess.run([hlo, "check", path], capture_output=True, text=True)
            for t in re.findall(r"custom_call target '([^']+)' is not registered", r.stderr):
              unknown.setdefault(t, set()).add(label)
            if r.returncode != 0:
              broken.append(f"{label}: {r.stderr.strip().splitlines()[0][:200]}")
  for plat in ("cpu", "cuda", "rocm"):
    targets = seen.get(plat, {})
    print(f"{plat}: {len(targets)} targets")
    for t in sorted(targets):
      print(f"  {t:40s} {', '.join(sorted(targets[t]))}")
  print(f"lowered {lowered} programs")
  fail = False
  for t in sorted(unknown):
    print(f"FAIL target '{t}' is unknown to hlo: {', '.join(sorted(unknown[t])[:4])}")
    fail = True
  for b in broken:
    print(f"FAIL hlo check: {b}")
    fail = True
  print("lower_all_linalg: " + ("FAIL" if fail else "ok"))
  return 1 if fail else 0


if __name__ == "__main__":
  sys.exit(main())
