#!/usr/bin/env python3
"""hlo against XLA:CPU on the same programs, same inputs, same machine, same run: the skeleton
of issue 7's benchmark (`make bench`, second part).

  python3 bench/run_vs_xla.py [--build DIR] [--shared DIR] [--max-interp-s S] [--only SUBSTR ...]

Programs: every f32 program of ../shared/perf and every f32 model of ../shared/models (a program
is f32 when no bf16/f16/f8 type appears in it; a model's NAME.cpu.mlir is taken over NAME.mlir,
since XLA:CPU cannot run the cuda/rocm targets of the other).

For each program: a probe, one cold run of `hlo bench FILE --iters 1 --warmup 0` (on a model's
stored inputs/, else hlo's random ones), killed after --max-interp-s (default 20 s): the program is
then skipped on hlo and the table says so. Then XLA: `python3 ../shared/tools/xla_run.py FILE
--platform cpu --json --save-inputs DIR` (--xla-iters timed runs after 3 warm-ups; 3 after 1 for a
program the probe skipped), which runs a model on its stored inputs and a perf program on its random
ones (seed 0). Then hlo on exactly the inputs XLA saved: `hlo bench FILE --json --input DIR/arg0.npy
...`, its count from the probe's time: under 0.2 s the adaptive default (about 2 s of timed runs
after 1 warm-up); up to 5 s, 1 warm-up and 3 timed runs; longer, one cold run (the note says so).

Columns: hlo median and XLA median per run (ms), ratio = hlo / XLA (below 1: hlo is faster), XLA's
compile time and hlo's (parse + verify + prepare; ms), the runs behind each median. XLA:CPU uses
every core it sees; hlo's interpreter one. Needs jax (pip) for the XLA columns; without it the
table has hlo's only.
"""
import argparse, glob, json, os, platform, re, subprocess, sys, tempfile, time

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)


def programs(shared):
    """(name, path) of the f32 programs: perf first, then models."""
    out = []
    for d in sorted(glob.glob(os.path.join(shared, "perf", "*", ""))) + \
             sorted(glob.glob(os.path.join(shared, "models", "*", ""))):
        files = sorted(glob.glob(os.path.join(d, "*.mlir")))
        cpu = [f for f in files if f.endswith(".cpu.mlir")]
        for f in (cpu or files):
            text = open(f).read()
            if re.search(r"x(bf16|f16|f8E\w+)>|<(bf16|f16|f8E\w+)>", text):
                continue
            out.append((os.path.basename(f)[:-len(".mlir")], f))
    return out


def run_json(cmd, timeout):
    """The last JSON line `cmd` prints, or (None, reason)."""
    try:
        p = subprocess.run(cmd, capture_output=True, text=True, timeout=timeout)
    except subprocess.TimeoutExpired:
        return None, f"over {timeout:g} s"
    if p.returncode != 0:
        msg = (p.stderr.strip().splitlines() or ["exit %d" % p.returncode])[0]
        return None, msg[:60]
    for line in reversed(p.stdout.strip().splitlines()):
        if line.startswith("{"):
            return json.loads(line), None
    return None, "no JSON output"


def input_flags(inputs):
    return [a for f in inputs for a in ("--input", f)]


def hlo_probe(hlo, path, inputs, max_s):
    """One cold run of hlo: (seconds, None) or (None, why it failed)."""
    probe, err = run_json([hlo, "bench", path, "--json", "--iters", "1", "--warmup", "0"] +
                          input_flags(inputs), max_s)
    if probe is None:
        return None, ("interp run " + err) if err.startswith("over") else err
    return probe["median_us"] / 1e6, None


def hlo_bench(hlo, path, inputs, t):
    """hlo's figures, the iteration count chosen from the probe's time t: (json, note) or
    (None, why it failed)."""
    base = [hlo, "bench", path, "--json"] + input_flags(inputs)
    if t < 0.2:
        res, err = run_json(base, 60)
    elif t < 5:
        res, err = run_json(base + ["--iters", "3", "--warmup", "1"], 20 * t + 30)
    else:
        res, err = run_json(base + ["--iters", "1", "--warmup", "0"], 3 * t + 30)
        err = err or "1 cold run"
    return (res, err) if res else (None, err)


def sorted_args(d):
    return sorted(glob.glob(os.path.join(d, "arg*.npy")),
                  key=lambda s: int(re.findall(r"\d+", os.path.basename(s))[0]))


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--build", default="build")
    ap.add_argument("--shared", default=os.environ.get("HLO_SHARED", os.path.join(ROOT, "..", "shared")))
    ap.add_argument("--max-interp-s", type=float, default=20.0)
    ap.add_argument("--xla-iters", type=int, default=20)
    ap.add_argument("--only", action="append", default=[], help="programs whose name contains this")
    args = ap.parse_args()
    hlo = os.path.join(args.build, "hlo")
    xla_run = os.path.join(args.shared, "tools", "xla_run.py")
    if not os.access(hlo, os.X_OK):
        sys.exit(f"run_vs_xla: {hlo} is not built (make BUILD={args.build})")
    try:
        import jax  # noqa: F401
        have_jax = True
    except ImportError:
        have_jax = False
        print("(jax is not installed: no XLA columns; pip install jax)")
    progs = [p for p in programs(args.shared) if not args.only or any(s in p[0] for s in args.only)]
    print(f"hlo (interp, 1 thread) vs XLA:CPU ({os.cpu_count()} cores), {time.strftime('%Y-%m-%d')}, "
          f"{platform.machine()}, {len(progs)} f32 programs")
    hdr = f"{'program':34} {'hlo ms':>10} {'XLA ms':>9} {'hlo/XLA':>8} {'XLA comp ms':>11} {'hlo comp ms':>11}  runs (hlo, XLA) / note"
    print(hdr)
    print("-" * len(hdr))
    with tempfile.TemporaryDirectory(prefix="hlo_vs_xla.") as tmp:
        for name, path in progs:
            d = os.path.join(tmp, name)
            stored = sorted_args(os.path.join(os.path.dirname(path), "inputs"))
            # a probe on the stored inputs (or hlo's random ones) says whether the interpreter
            # can run it in time; a program it cannot is big: XLA then runs it 3 times
            t, herr = hlo_probe(hlo, path, stored, args.max_interp_s)
            xla, xerr = None, "no jax"
            if have_jax:
                iters = args.xla_iters if t is not None else 3
                xla, xerr = run_json([sys.executable, xla_run, path, "--platform", "cpu", "--json",
                                      "--iters", str(iters), "--warmup", "1" if t is None else "3",
                                      "--save-inputs", d], 900)
            inputs = sorted_args(d) or stored  # the very inputs XLA ran on
            h = None
            if t is not None:
                h, herr = hlo_bench(hlo, path, inputs, t)
            if herr and not h:
                herr = "skipped, " + herr
            hm = f"{h['median_us'] / 1e3:10.3f}" if h else f"{'-':>10}"
            xm = f"{xla['median_us'] / 1e3:9.3f}" if xla else f"{'-':>9}"
            ratio = f"{'-':>8}"
            if h and xla:
                r = h["median_us"] / xla["median_us"]
                ratio = f"{r:7.0f}x" if r >= 100 else f"{r:7.1f}x" if r >= 10 else f"{r:7.2f}x"
            xc = f"{xla['compile_s'] * 1e3:11.1f}" if xla else f"{'-':>11}"
            hc = f"{h['compile_ms']:11.3f}" if h else f"{'-':>11}"
            notes = [f"{h['iters']}, {xla['iters'] if xla else '-'}" if h else ""]
            if herr:
                notes.append("hlo: " + herr)
            if not xla:
                notes.append("XLA: " + xerr)
            print(f"{name:34} {hm} {xm} {ratio} {xc} {hc}  {'; '.join(n for n in notes if n)}",
                  flush=True)


if __name__ == "__main__":
    main()
