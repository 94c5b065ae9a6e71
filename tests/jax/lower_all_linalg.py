#!/usr/bin/env python3
"""lower_all_linalg.py — a live check that hlo knows every linear-algebra
custom_call target this machine's JAX emits.

Lowers, for "cpu", "cuda" and "rocm", for f32, f64, c64 and c128, batched
and not:
  - every function of gen_linalg.FUNCS (jnp.linalg, jax.scipy.linalg and
    jax.lax.linalg as the fixtures use them: Cholesky, QR in every mode and
    with pivoting, SVD in every mode and algorithm, eigh / eig / eigvals,
    Schur, Hessenberg, LU, solves, tridiagonal reductions and solves, ...);
  - every public function of jax.lax.linalg, found with dir() / inspect (so
    a function a new JAX adds is lowered too), on arguments made from its
    parameter names (ARGS below), with its defaults, then each boolean
    keyword flipped and each member of an enum keyword (SvdAlgorithm,
    EighImplementation, ...) one at a time. A required parameter ARGS does
    not know fails the run (add a recipe); combinations JAX itself rejects
    (a TypeError / ValueError / RuntimeError, e.g. complex
    symmetric_product, or eig's CUSOLVER algorithm, whose lowering asks the
    absent cuSOLVER its version) are counted, their reasons printed, and
    skipped. All of jax.lax.linalg's functions take a matrix except
    lu_pivots_to_permutation (int32 pivots), which has a recipe too;
    the enum classes and *_p primitives are not functions.
It collects every custom_call target, prints a table of the targets seen per
platform, and runs `BUILD/hlo check` on each program: the check fails,
naming them, when hlo warns that a target is not registered (or a program
does not verify).

Needs pip JAX; without it, says so and exits 0 (the committed fixtures of
tests/jax/linalg cover the same targets without Python).
usage: python3 tests/jax/lower_all_linalg.py [BUILD_DIR]   (default build)
"""
import functools
import inspect
import os
import re
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))


# Arguments of jax.lax.linalg functions by parameter name: (shape after the
# batch, integer?). Matrices are 4 x 4 so every side / transpose option fits.
ARGS = {
    "x": ((4, 4), False), "a": ((4, 4), False), "a_matrix": ((4, 4), False),
    "r_matrix": ((4, 4), False), "c_matrix": ((4, 4), False), "b": ((4, 4), False),
    "c": ((4, 4), False), "w_vector": ((4,), False), "dl": ((4,), False),
    "d": ((4,), False), "du": ((4,), False), "taus": ((3,), False),
    "pivots": ((4,), True),
}
STATIC = {"permutation_size": 4}  # required non-array parameters


def lax_linalg_cases(np, jax):
  """(label, fn, arg structs builder) for every public jax.lax.linalg
  function and option variant; and the list of problems (unknown
  parameters)."""
  from jax.extend.core import Primitive
  lin = jax.lax.linalg
  enums = {n: getattr(lin, n) for n in dir(lin)
           if not n.startswith("_") and isinstance(getattr(lin, n), type)}
  cases, problems = [], []
  for name in sorted(dir(lin)):
    obj = getattr(lin, name)
    if name.startswith("_") or isinstance(obj, (type, Primitive)) or \
        not callable(obj):
      continue
    try:
      sig = inspect.signature(obj)
    except (TypeError, ValueError):
      problems.append(f"jax.lax.linalg.{name}: no signature")
      continue
    arrays, static, variants = [], {}, [{}]
    for p in sig.parameters.values():
      if p.default is inspect.Parameter.empty:
        if p.name in ARGS:
          arrays.append(p.name)
        elif p.name in STATIC:
          static[p.name] = STATIC[p.name]
        else:
          problems.append(f"jax.lax.linalg.{name}: no argument recipe for parameter "
                          f"'{p.name}' (add one to ARGS / STATIC)")
          arrays = None
          break
        continue
      ann = str(p.annotation)
      if p.kind != p.KEYWORD_ONLY and p.kind != p.POSITIONAL_OR_KEYWORD:
        continue
      if re.fullmatch(r"bool", ann):
        variants.append({p.name: not p.default})
      elif re.fullmatch(r"bool \| None", ann):
        variants += [{p.name: True}, {p.name: False}]
      else:
        for en, cls in enums.items():
          if re.search(rf"\b{en}\b", ann):
            variants += [{p.name: m} for m in cls]
    if arrays is None:
      continue
    for kw in variants:
      fn = functools.partial(obj, **static, **kw)
      opts = ",".join(f"{k}={getattr(v, 'name', v)}" for k, v in kw.items())
      cases.append((f"lax.linalg.{name}({opts})", fn, arrays, not kw))
  return cases, problems


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
  lowered = rejected = 0
  reasons = {}    # why JAX refused -> functions
  dtypes = (np.float32, np.float64, np.complex64, np.complex128)
  # (name, fn, list of (dtype, batch, args)) for both sources
  work = []
  for name, (fn, batched) in g.FUNCS.items():
    work.append((name, fn, [
        (dt, b, [g.make_input(name, dt, b)]) for dt in dtypes
        if not (name in g.REAL_ONLY and np.issubdtype(dt, np.complexfloating))
        for b in (((), (2,)) if batched else ((),))]))
  cases, problems = lax_linalg_cases(np, jax)
  for label, fn, arrays, base in cases:
    work.append((label, fn, [
        (dt, b, [jax.ShapeDtypeStruct(b + ARGS[p][0], np.int32 if ARGS[p][1] else dt)
                 for p in arrays])
        for dt in dtypes for b in (((), (2,)) if base else ((),))]))
  with tempfile.TemporaryDirectory() as tmp:
    for name, fn, variants in work:
      for plat in ("cpu", "cuda", "rocm"):
        for dtype, batch, args in variants:
          try:
            text = jax.jit(fn).trace(*args).lower(lowering_platforms=(plat,)).as_text()
          except NotImplementedError:
            continue  # no lowering of this function for this platform
          except (TypeError, ValueError, RuntimeError) as e:
            # JAX refuses this type / shape / option combination (or needs a
            # GPU library to pick a lowering, e.g. eig's CUSOLVER algorithm)
            rejected += 1
            why = f"{type(e).__name__}: {(str(e).splitlines() or [''])[0][:90]}"
            reasons.setdefault(why, set()).add(name.split("(")[0])
            continue
          lowered += 1
          label = f"{name}/{g.SHORT[dtype]}{list(batch) if batch else ''}/{plat}"
          for t in set(re.findall(r"custom_call @([\w.$-]+)", text)):
            seen.setdefault(plat, {}).setdefault(t, set()).add(name.split("(")[0])
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
  print(f"lowered {lowered} programs ({len(cases)} jax.lax.linalg function / option "
        f"variants; {rejected} type / option combinations JAX refused)")
  for why in sorted(reasons):
    print(f"  refused by JAX: {why} ({', '.join(sorted(reasons[why]))})")
  fail = False
  for p in problems:
    print(f"FAIL {p}")
    fail = True
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
