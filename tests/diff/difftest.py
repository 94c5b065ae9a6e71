#!/usr/bin/env python3
"""Differential test of hlo against XLA:CPU (through JAX).

A seeded random generator builds many small programs from jax.lax operations
(elementwise ops, conversions, reductions, scans, dot_general, convolutions,
data movement, gather/scatter, sort, top_k, rng_bit_generator, control flow,
linear algebra, fft, ...). Each program is lowered with
jax.jit(f).lower(*args).as_text(); the StableHLO text and the inputs (.npy)
go to a temporary folder, `hlo run` executes it, and every result is compared
with XLA:CPU's (jax.jit(f)(*args), jax_enable_x64, matmul precision
"highest"):
  - integers and bools exactly; data movement exactly (bit for bit);
  - elementwise floats within a few ULP of the result's type (per op, plus an
    absolute slack in units of epsilon for functions with zeros);
  - reductions, dots, convolutions, scans, linalg and fft norm-wise:
    ||hlo - xla||_2 <= rtol * max(||xla||_2, 1), rtol by element type;
  - NaN positions must agree (payloads and signs are not compared), and so
    must the positions and signs of infinities; outside exact comparisons,
    subnormal results count as zero (XLA:CPU flushes them).
  - where XLA departs from the spec's rule, the case compares with the rule
    instead: f64 -> f16/bf16 conversion (XLA rounds twice, through f32);
    convolution with negative padding (XLA:CPU reads outside the input and
    gives garbage; the expected value comes from lax.pad + an unpadded conv).
    Other XLA quirks are tolerated: x / constant is folded to x * (1/c)
    (1 ulp); XLA's f64 chlo decompositions (atanh, asin, ...) are ~40 ulp
    off (64 ulp allowed); complex inputs use finite edge values only (XLA
    returns NaN for sqrt(nan-inf*i), abs(nan+inf*i), unlike C99) and none
    for complex pow (XLA gives NaN where the result is 0).
Inputs avoid what XLA leaves implementation-defined: float->int conversion of
out-of-range values or NaN, integer division by zero and MIN/-1, integer
power with negative exponents, duplicate indices in scatter-set, NaN payloads.

The generators are in tests/diff/gen.py (GENERATORS: kind -> (function,
weight)); 15% of the cases use larger sizes (rank <= 3, dimensions <= 17).

Failures SHRINK: the failing case's categorical choices (op, element types,
directions, ...) are kept and the case is regenerated with smaller limits
(rank, dimension sizes, number of chained ops) and other seeds; the smallest
program that still fails the same way is reported (and saved with --save).

Regressions: tests/diff/regressions/NAME.mlir (first line: `// reason`),
NAME.inK.npy (inputs; bf16 stored as float32), NAME.outK.npy (XLA's results;
bf16 stored as float32) and NAME.json (reason, signature, tolerances). They
are re-run FIRST, before the random cases, and need only numpy (not jax).
tests/diff/regressions/KNOWN.txt lists the regressions that still fail, one a
line:   NAME  SIGNATURE-GLOB  reason...
A case's signature is KIND:CHOICE:... (the generator kind, then its
categorical choices in the order of their names), e.g. "binary:u32:shra".
A known regression that fails is printed as KNOWN and not counted as a
failure (one that passes is counted as passed and printed as FIXED, so the
line can be removed); a random case that fails with a signature matching a
known line's glob is printed as KNOWN and not counted either.

Usage:
  python3 tests/diff/difftest.py --seed 1 --count 300 --time-budget 120 \\
      --hlo build/hlo [--save] [--case I] [--keep DIR] [--kinds K1,K2]
    --seed S         base seed; case I uses random.Random("S:I")
    --count N        number of random cases (stops early at --time-budget s)
    --case I         run only case I (for reproducing a printed failure)
    --kinds LIST     only these generator kinds (see GENERATORS)
    --keep DIR       keep each case's program, inputs and outputs under DIR
    --save           save each (shrunk) new failure under regressions/
    --no-shrink      report failures without shrinking them
    --shrink-budget  seconds of shrinking per failure (default 20)
    --no-regressions / --only-regressions
Prints one line per failure and ends with "diff: N passed, N failed".
The hlo binary is copied to a private temporary path first (others rebuild
build/hlo while tests run).
"""
import argparse
import fnmatch
import hashlib
import json
import os
import random
import shutil
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
REG_DIR = os.path.join(HERE, "regressions")


sys.path.insert(0, HERE)
sys.dont_write_bytecode = True  # no __pycache__ in the source tree
import gen as G  # noqa: E402 - the generators live next to this file
from gen import (np, npdt, dtname, bf16_type, import_jax, FLOATS, eps_of,  # noqa: E402
                 EXACT, Skip, generate, GENERATORS, DEFAULT_LIM)

BIG_LIM = {"rank": 3, "dim": 17, "ops": 3}

# ----------------------------------------------------------------------------
# comparison


def _ordered(a):
    """Float array -> int64 array monotone in the float order (±0 -> 0)."""
    w = a.dtype.itemsize
    it = {2: np.int16, 4: np.int32, 8: np.int64}[w]
    i = a.view(it).astype(np.int64)
    mn = np.int64(np.iinfo(it).min)
    return np.where(i < 0, mn - i, i)


def compare(act, exp, tol, name):
    with np.errstate(all="ignore"):
        return _compare(act, exp, tol, name)


def _compare(act, exp, tol, name):
    """None when act (hlo's .npy) matches exp (XLA's, bf16 as float32 with
    dtype name `name`); else a one-line description of the first mismatch."""
    if act.shape != exp.shape:
        return "shape %s, expected %s" % (act.shape, exp.shape)
    if act.dtype != exp.dtype:
        return "dtype %s, expected %s" % (act.dtype, exp.dtype)
    if act.size == 0:
        return None
    if name == "bf16":
        back = act.astype(bf16_type()).astype(np.float32)
        if not np.array_equal(back, act, equal_nan=True):
            return "bf16 result is not a bf16 value"
        act = act.astype(bf16_type())
        exp = exp.astype(bf16_type())
    kind = act.dtype.kind
    if kind in "biu":
        bad = act != exp
        if not bad.any():
            return None
        k = tuple(int(v) for v in np.argwhere(bad)[0])
        return "%d/%d differ; at %s: hlo %s, xla %s" % (
            int(bad.sum()), act.size, k, act[k], exp[k])
    if kind in "cf" and tol[0] == "crel":
        an = np.isnan(act.real) | np.isnan(act.imag)
        en = np.isnan(exp.real) | np.isnan(exp.imag)
        if (an != en).any():
            k = tuple(int(v) for v in np.argwhere(an != en)[0])
            return "NaN positions differ (%d); at %s: hlo %r, xla %r" % (
                int((an != en).sum()), k, act[k], exp[k])
        a, e = act.astype(np.complex128), exp.astype(np.complex128)
        fin = np.isfinite(a) & np.isfinite(e)
        infbad = ~fin & ~an & (a != e)
        rel = np.where(fin, np.abs(a - e) / np.maximum(np.abs(e), 0.1), 0)
        bad = infbad | (rel > tol[1])
        if not bad.any():
            return None
        k = tuple(int(v) for v in np.argwhere(bad)[0])
        return "%d/%d differ (rel %.3g > %g); at %s: hlo %r, xla %r" % (
            int(bad.sum()), act.size, float(rel[k]), tol[1], k, act[k], exp[k])
    if kind == "c":
        for part in ("real", "imag"):
            m = compare(np.ascontiguousarray(getattr(act, part)),
                        np.ascontiguousarray(getattr(exp, part)), tol,
                        "f32" if act.dtype == np.complex64 else "f64")
            if m:
                return part + ": " + m
        return None
    an, en = np.isnan(act.astype(np.float64)), np.isnan(exp.astype(np.float64))
    if (an != en).any():
        k = tuple(int(v) for v in np.argwhere(an != en)[0])
        return "NaN positions differ (%d); at %s: hlo %r, xla %r" % (
            int((an != en).sum()), k, act[k], exp[k])
    if tol[0] != "exact":
        # XLA:CPU flushes subnormal results to zero (FTZ); so may we
        tiny = {"f64": 2.2250738585072014e-308, "f16": 6.103515625e-05}.get(name, 1.1754944e-38)
        act = np.where(np.abs(act.astype(np.float64)) < tiny, act * 0, act).astype(act.dtype)
        exp = np.where(np.abs(exp.astype(np.float64)) < tiny, exp * 0, exp).astype(exp.dtype)
    a64, e64 = act.astype(np.float64), exp.astype(np.float64)
    ai, ei = np.isinf(a64), np.isinf(e64)
    infbad = (ai | ei) & ~(an | en) & (a64 != e64)
    if tol[0] == "exact":
        # bit for bit, except NaN payloads
        w = act.dtype.itemsize
        it = {2: np.int16, 4: np.int32, 8: np.int64}[w]
        bad = (act.view(it) != exp.view(it)) & ~an
    elif tol[0] == "ulp":
        d = np.abs(_ordered(act) - _ordered(exp))
        eps = eps_of(name if name in FLOATS else "f32")
        bad = (d > tol[1]) & ~(np.abs(a64 - e64) <= tol[2] * eps) & ~an
        bad |= infbad
    else:
        fin = np.isfinite(a64) & np.isfinite(e64)
        if infbad.any():
            bad = infbad
        else:
            err = np.linalg.norm((a64 - e64)[fin])
            ref = max(np.linalg.norm(e64[fin]), 1.0)
            if err <= tol[1] * ref:
                return None
            rel = np.abs(a64 - e64) / np.maximum(np.abs(e64), 1.0)
            rel[~fin] = 0
            k = np.unravel_index(int(np.argmax(rel)), rel.shape)
            return "norm error %.3g > %.3g (worst at %s: hlo %r, xla %r)" % (
                err / ref, tol[1], tuple(int(v) for v in k), act[k], exp[k])
    if not bad.any():
        return None
    k = tuple(int(v) for v in np.argwhere(bad)[0])
    return "%d/%d differ (%s); at %s: hlo %r, xla %r" % (
        int(bad.sum()), act.size, "/".join(str(t) for t in tol), k, act[k], exp[k])


# ----------------------------------------------------------------------------
# running


def to_npy_safe(a):
    """Array as hlo reads/writes it: bf16 -> float32."""
    a = np.asarray(a)
    if a.dtype == np.dtype(bf16_type()):
        return a.astype(np.float32)
    return a


def run_hlo(hlo, mlir, inputs, outdir, timeout=60):
    """Runs hlo; returns (list of output arrays, None) or (None, error)."""
    cmd = [hlo, "run", "--quiet", mlir]
    for p in inputs:
        cmd += ["--input", p]
    cmd += ["--output-dir", outdir]
    try:
        p = subprocess.run(cmd, capture_output=True, text=True, timeout=timeout)
    except subprocess.TimeoutExpired:
        return None, "hlo timed out after %d s" % timeout
    if p.returncode != 0:
        msg = (p.stderr.strip() or p.stdout.strip()).splitlines()
        return None, "hlo exit %d: %s" % (p.returncode, (msg[0] if msg else "")[:300])
    outs = []
    k = 0
    while os.path.exists(os.path.join(outdir, "out%d.npy" % k)):
        outs.append(np.load(os.path.join(outdir, "out%d.npy" % k)))
        k += 1
    return outs, None


class Runner:
    def __init__(self, hlo, keep=None):
        self.tmp = tempfile.mkdtemp(prefix="hlodiff")
        self.hlo = os.path.join(self.tmp, "hlo")
        shutil.copy2(hlo, self.hlo)
        self.keep = keep
        self.n = 0

    def close(self):
        shutil.rmtree(self.tmp, ignore_errors=True)

    def xla(self, case):
        """(mlir text, list of expected arrays) or raises Skip."""
        try:
            jf = G.jax.jit(case.fn, keep_unused=True)
            low = jf.lower(*case.args)
            text = low.as_text()
            outs = G.jax.tree_util.tree_leaves(low.compile()(*case.args))
            if case.expect is not None:
                outs = case.expect(case.args)
        except Exception as e:  # noqa: BLE001 - JAX refuses the program
            raise Skip(str(e).splitlines()[0] if str(e) else type(e).__name__)
        return text, [np.asarray(o) for o in outs]

    def run(self, case):
        """('pass'|'fail'|'skip', message, artefacts)."""
        try:
            text, exps = self.xla(case)
        except Skip as e:
            return "skip", str(e), None
        self.n += 1
        d = os.path.join(self.keep or self.tmp, "case%d" % self.n)
        if os.path.exists(d):
            shutil.rmtree(d)
        os.makedirs(d)
        mlir = os.path.join(d, "prog.mlir")
        with open(mlir, "w") as f:
            f.write(text)
        ins = []
        for i, a in enumerate(case.args):
            p = os.path.join(d, "in%d.npy" % i)
            np.save(p, to_npy_safe(a))
            ins.append(p)
        outs, err = run_hlo(self.hlo, mlir, ins, os.path.join(d, "out"))
        art = (text, case.args, exps)
        if not self.keep:
            shutil.rmtree(d, ignore_errors=True)
        if err:
            return "fail", err, art
        if len(outs) != len(exps):
            return "fail", "%d results, expected %d" % (len(outs), len(exps)), art
        tols = case.tol if isinstance(case.tol, list) else [case.tol] * len(exps)
        for k, (a, e) in enumerate(zip(outs, exps)):
            name = dtname(e.dtype)
            tol = tols[k]
            if name not in FLOATS and name not in ("c64", "c128"):
                tol = EXACT
            m = compare(a, to_npy_safe(e), tol, name)
            if m:
                return "fail", "out%d %s: %s" % (k, name, m), art
        return "pass", "", art


def failure_class(msg):
    return "error" if msg.startswith("hlo") else "mismatch"


def shrink(runner, case, msg, kinds, budget):
    """Smallest case with case's choices that fails in the same class."""
    t0 = time.time()
    best, best_msg = case, msg
    cls = failure_class(msg)
    limits = []
    for ops in (1, 2, 4):
        for rank in range(0, 5):
            for dim in (1, 2, 3, 5):
                limits.append({"rank": rank, "dim": dim, "ops": ops})
    limits.sort(key=lambda l: (l["ops"], l["rank"] + l["dim"], l["rank"]))
    for lim in limits:
        if time.time() - t0 > budget:
            break
        for s in range(6):
            if time.time() - t0 > budget:
                break
            r = random.Random("shrink:%s:%d:%s" % (case.sig, s, sorted(lim.items())))
            try:
                cand = generate(r, lim, case.choices, kinds)
            except Skip:
                continue
            except Exception:  # noqa: BLE001 - generator rejects tiny limits
                continue
            if cand.sig != case.sig or cand.size() >= best.size():
                continue
            st, m, _ = runner.run(cand)
            if st == "fail" and failure_class(m) == cls:
                best, best_msg = cand, m
    return best, best_msg


# ----------------------------------------------------------------------------
# regressions


def load_known():
    """[(name, glob, reason)] from regressions/KNOWN.txt."""
    out = []
    p = os.path.join(REG_DIR, "KNOWN.txt")
    if not os.path.exists(p):
        return out
    for line in open(p):
        line = line.strip()
        if not line or line.startswith("#"):
            continue
        parts = line.split(None, 2)
        out.append((parts[0], parts[1] if len(parts) > 1 else "-",
                    parts[2] if len(parts) > 2 else ""))
    return out


def save_regression(case, msg, art):
    text, args, exps = art
    os.makedirs(REG_DIR, exist_ok=True)
    h = hashlib.sha1(text.encode()).hexdigest()[:6]
    name = "".join(ch if ch.isalnum() else "_" for ch in case.sig).strip("_")[:60] + "_" + h
    reason = "%s (%s)" % (msg, case.sig)
    reason = reason.replace("\n", " ")
    with open(os.path.join(REG_DIR, name + ".mlir"), "w") as f:
        f.write("// " + reason + "\n" + text)
    for i, a in enumerate(args):
        np.save(os.path.join(REG_DIR, "%s.in%d.npy" % (name, i)), to_npy_safe(a))
    tols = case.tol if isinstance(case.tol, list) else [case.tol] * len(exps)
    for i, e in enumerate(exps):
        np.save(os.path.join(REG_DIR, "%s.out%d.npy" % (name, i)), to_npy_safe(e))
    meta = {"reason": reason, "sig": case.sig, "tol": [list(t) for t in tols],
            "dtypes": [dtname(e.dtype) for e in exps], "nin": len(args)}
    with open(os.path.join(REG_DIR, name + ".json"), "w") as f:
        json.dump(meta, f, indent=1)
    return name


def run_regressions(runner, known):
    """Re-runs every saved regression; returns (passed, failed)."""
    passed = failed = 0
    if not os.path.isdir(REG_DIR):
        return 0, 0
    known_names = {k[0]: k[2] for k in known}
    names = sorted(f[:-5] for f in os.listdir(REG_DIR) if f.endswith(".json"))
    for name in names:
        meta = json.load(open(os.path.join(REG_DIR, name + ".json")))
        ins = [os.path.join(REG_DIR, "%s.in%d.npy" % (name, i)) for i in range(meta["nin"])]
        od = os.path.join(runner.tmp, "reg_" + name)
        outs, err = run_hlo(runner.hlo, os.path.join(REG_DIR, name + ".mlir"), ins, od)
        msg = err
        if not err:
            if len(outs) != len(meta["dtypes"]):
                msg = "%d results, expected %d" % (len(outs), len(meta["dtypes"]))
            for k, dn in enumerate(meta["dtypes"]):
                if msg:
                    break
                e = np.load(os.path.join(REG_DIR, "%s.out%d.npy" % (name, k)))
                m = compare(outs[k], e, tuple(meta["tol"][k]), dn)
                if m:
                    msg = "out%d %s: %s" % (k, dn, m)
        shutil.rmtree(od, ignore_errors=True)
        if not msg:
            passed += 1
            if name in known_names:
                print("FIXED regression %s (remove it from KNOWN.txt)" % name)
        elif name in known_names:
            print("KNOWN regression %s: %s" % (name, known_names[name]))
        else:
            failed += 1
            print("FAIL regression %s: %s [%s]" % (name, msg, meta.get("reason", "")))
    return passed, failed


# ----------------------------------------------------------------------------


def main():
    ap = argparse.ArgumentParser(description="differential test: hlo vs XLA:CPU")
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--count", type=int, default=300)
    ap.add_argument("--time-budget", type=float, default=120.0)
    ap.add_argument("--hlo", default="build/hlo")
    ap.add_argument("--case", type=int, default=None)
    ap.add_argument("--kinds", default=None)
    ap.add_argument("--keep", default=None)
    ap.add_argument("--save", action="store_true")
    ap.add_argument("--no-shrink", action="store_true")
    ap.add_argument("--shrink-budget", type=float, default=20.0)
    ap.add_argument("--no-regressions", action="store_true")
    ap.add_argument("--only-regressions", action="store_true")
    ap.add_argument("--verbose", action="store_true")
    a = ap.parse_args()
    if np is None:
        print("diff: SKIPPED: numpy is not installed")
        print("diff: 0 passed, 0 failed")
        return 0
    try:
        import ml_dtypes  # noqa: F401 - bf16 support for .npy files
    except ImportError:
        print("diff: SKIPPED: ml_dtypes (comes with jax) is not installed")
        print("diff: 0 passed, 0 failed")
        return 0
    if not os.path.exists(a.hlo):
        print("diff: no hlo binary at %s" % a.hlo)
        print("diff: 0 passed, 1 failed")
        return 1
    t0 = time.time()
    runner = Runner(a.hlo, a.keep)
    known = load_known()
    passed = failed = 0
    try:
        if not a.no_regressions and a.case is None:
            p, f = run_regressions(runner, known)
            print("diff: regressions: %d passed, %d failed" % (p, f))
            passed += p
            failed += f
        if a.only_regressions:
            print("diff: %d passed, %d failed" % (passed, failed))
            return 1 if failed else 0
        err = import_jax()
        if err:
            print("diff: SKIPPED the random cases: cannot import jax (%s)" % err)
            print("diff: %d passed, %d failed" % (passed, failed))
            return 1 if failed else 0
        kinds = sorted(GENERATORS) if not a.kinds else a.kinds.split(",")
        cases = [a.case] if a.case is not None else range(a.count)
        skipped = ran = known_fail = 0
        shrink_total = 0.0
        for i in cases:
            if time.time() - t0 > a.time_budget:
                print("diff: time budget of %g s reached after %d cases" % (a.time_budget, ran))
                break
            r = random.Random("%d:%d" % (a.seed, i))
            try:
                # now and then larger sizes (blocked / vectorised code paths)
                lim = BIG_LIM if r.random() < 0.15 else DEFAULT_LIM
                case = generate(r, lim, {}, kinds)
            except Skip:
                skipped += 1
                continue
            except Exception as e:  # noqa: BLE001 - a generator bug: report, go on
                skipped += 1
                print("diff: generator error in case %d: %s: %s" % (i, type(e).__name__, e))
                continue
            st, msg, art = runner.run(case)
            if st == "skip":
                skipped += 1
                if a.verbose:
                    print("skip case %d %s: %s" % (i, case.sig, msg))
                continue
            ran += 1
            if st == "pass":
                passed += 1
                continue
            kn = [k for k in known if fnmatch.fnmatchcase(case.sig, k[1])]
            if kn:
                known_fail += 1
                print("KNOWN case %d %s: %s [%s]" % (i, case.sig, msg, kn[0][0]))
                continue
            failed += 1
            line = "FAIL case %d %s: %s\n    repro: --seed %d --case %d%s" % (
                i, case.sig, msg, a.seed, i, " --kinds " + a.kinds if a.kinds else "")
            if not a.no_shrink and shrink_total < 3 * a.shrink_budget + 1:
                ts = time.time()
                small, smsg = shrink(runner, case, msg, kinds, a.shrink_budget)
                shrink_total += time.time() - ts
                if small is not case:
                    line += "\n    shrunk to args %s: %s" % (
                        [tuple(x.shape) for x in small.args], smsg)
                    case, msg = small, smsg
                    st, msg2, art = runner.run(case)
                    if st != "fail":
                        art = None
            print(line)
            if a.save and art:
                print("    saved regressions/%s" % save_regression(case, msg, art))
            elif a.verbose and art:
                print(art[0])
        print("diff: %d random cases run (seed %d), %d skipped, %d known failures, %.0f s"
              % (ran, a.seed, skipped, known_fail, time.time() - t0))
    finally:
        runner.close()
    print("diff: %d passed, %d failed" % (passed, failed))
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
