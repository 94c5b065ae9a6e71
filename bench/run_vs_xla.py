#!/usr/bin/env python3
"""hlo's CPU backend against XLA:CPU on the same programs, same inputs, same machine, same run
(issue 7's benchmark; `make bench`, second part).

  python3 bench/run_vs_xla.py [--build DIR] [--shared DIR] [--only SUBSTR ...] [--results FILE]
                              [--xla-iters N]

Programs: every f32 program of ../shared/perf and every f32 model of ../shared/models (a program
is f32 when no bf16/f16/f8 type appears in it; a model's NAME.cpu.mlir is taken over NAME.mlir,
since XLA:CPU cannot run the cuda/rocm targets of the other).

For each program, in this order:
  1. XLA: `python3 ../shared/tools/xla_run.py FILE --platform cpu --json --save-inputs DIR`
     (--xla-iters timed runs after 3 warm-ups): its median, compile time (cold, in a fresh
     process), and its cost analysis (flops, bytes accessed), which give the GFLOP/s and GB/s
     columns for both (the same program does the same work).
  2. hlo cold: `hlo bench FILE --input DIR/argK.npy ... --iters 1 --warmup 0 --json` with
     HLO_CACHE_DIR set to a fresh folder (no compiled kernel cached): the cold compile time, and
     its split into hlo's own stages (read, parse, verify, passes, lower, prepare) and the C
     compiler's (cc).
  3. hlo warm: the same with the cache (the adaptive iteration count: about 2 s of timed runs):
     the median per run, and the warm compile time (kernels from the cache).
  4. `hlo bench --profile`: each GEMM the program calls (its shape and time per call in the
     program), then `bench/blas/gemm_rate --shapes ...` (the BLAS library alone on one matrix of
     that shape): the GEMM table, program rate against the library's own.

Columns: hlo and XLA median per run (ms), hlo/XLA (below 1: hlo is faster), achieved GFLOP/s and
GB/s of hlo's run (XLA's flop and byte counts), cold compile (hlo total until the native code is
loaded, hlo's own stages, XLA), warm compile (hlo), then the cold first result (docs/tiered.md):
hlo's "ready ms" (read to the tiered compile's return) and "1st ms" (ready + the first run, on the
interpreter while the native code is pending), against XLA's "XLA 1st" = its compile + its median
run: a LOWER BOUND for XLA's first run (a first run is slower than the median: allocation, caches). Both use every core of the machine (hlo: HLO_NUM_THREADS, default all).
With --results FILE the tables replace the section "## CPU backend vs XLA:CPU" of FILE (made if
missing), with the date and machine. Needs jax (pip) for the XLA columns.
"""
import argparse, glob, json, os, platform, re, subprocess, sys, tempfile, time

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
SECTION = "## CPU backend vs XLA:CPU"


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


def run(cmd, timeout, env=None):
    """(stdout, stderr, None) or (None, None, reason)."""
    try:
        p = subprocess.run(cmd, capture_output=True, text=True, timeout=timeout, env=env)
    except subprocess.TimeoutExpired:
        return None, None, f"over {timeout:g} s"
    if p.returncode != 0:
        msg = (p.stderr.strip().splitlines() or ["exit %d" % p.returncode])[-1]
        return None, None, msg[:80]
    return p.stdout, p.stderr, None


def last_json(out):
    for line in reversed((out or "").strip().splitlines()):
        if line.startswith("{"):
            return json.loads(line)
    return None


def sorted_args(d):
    return sorted(glob.glob(os.path.join(d, "arg*.npy")),
                  key=lambda s: int(re.findall(r"\d+", os.path.basename(s))[0]))


def input_flags(inputs):
    return [a for f in inputs for a in ("--input", f)]


GEMM_ROW = re.compile(r"^\s*\S+\s+gemm\s+([0-9.]+)\s+[0-9.]+\s+([0-9.e+]+)\s+dot_general "
                      r"(\d+)x(\d+)x(\d+)(?: batched x(\d+))?")


def gemm_rows(hlo, path, inputs, median_ms):
    """[(m, n, k, ms per call, batch)] of the program's GEMM steps, from `hlo bench --profile`
    (about a second of runs): a step in a loop body is called several times per run."""
    iters = str(max(1, min(20, int(1000 / max(median_ms, 1e-3)))))
    out, err, why = run([hlo, "bench", path, "--profile", "--iters", iters, "--warmup", "0"] +
                        input_flags(inputs), 600)
    rows = []
    for line in (err or "").splitlines():
        g = GEMM_ROW.match(line)
        if g:
            calls = max(float(g.group(2)), 1e-9)
            rows.append((int(g.group(3)), int(g.group(4)), int(g.group(5)),
                         float(g.group(1)) / calls, int(g.group(6) or 1)))
    return rows


def lib_rates(tool, shapes):
    """{(m, n, k): library GFLOP/s} from bench/blas/gemm_rate, or {} without the tool."""
    if not os.access(tool, os.X_OK) or not shapes:
        return {}
    spec = [f"{m},{n},{k}" for m, n, k in sorted(shapes)]
    out, err, why = run([tool, "--shapes"] + spec, 600)
    rates = {}
    for line in (out or "").splitlines():
        rate = re.search(r"([0-9.]+) GFLOP/s", line)
        g = re.match(r"\s*(\d+)[x,](\d+)[x,](\d+)", line)
        if g and rate:
            rates[(int(g.group(1)), int(g.group(2)), int(g.group(3)))] = float(rate.group(1))
    return rates


def fmt(v, w, p=3):
    return f"{v:{w}.{p}f}" if v is not None else f"{'-':>{w}}"


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--build", default="build")
    ap.add_argument("--shared", default=os.environ.get("HLO_SHARED", os.path.join(ROOT, "..", "shared")))
    ap.add_argument("--xla-iters", type=int, default=20)
    ap.add_argument("--only", action="append", default=[], help="programs whose name contains this")
    ap.add_argument("--results", help="update this markdown file's section with the tables")
    args = ap.parse_args()
    hlo = os.path.join(args.build, "hlo")
    gemm_tool = os.path.join(args.build, "bench", "blas", "gemm_rate")
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
    lines = []

    def say(s=""):
        print(s, flush=True)
        lines.append(s)

    say(f"Measured {time.strftime('%Y-%m-%d %H:%M')} on {platform.machine()}, {os.cpu_count()} cores "
        f"({platform.processor() or platform.platform()}); hlo --backend cpu vs XLA:CPU (jax "
        f"{jax.__version__ if have_jax else '-'}), same inputs, same run. Times in ms.")
    say()
    say("```")
    hdr = (f"{'program':30} {'hlo ms':>9} {'XLA ms':>9} {'hlo/XLA':>7} {'GFLOP/s':>8} {'GB/s':>7} "
           f"{'cold ms':>8} {'ours ms':>8} {'XLA ms':>8} {'warm ms':>8} "
           f"{'ready ms':>8} {'1st ms':>8} {'XLA 1st':>8}  note")
    say(hdr)
    say("-" * len(hdr))
    ratios, gemms = [], []
    with tempfile.TemporaryDirectory(prefix="hlo_vs_xla.") as tmp:
        for name, path in progs:
            d = os.path.join(tmp, name)
            xla, xerr = None, "no jax"
            if have_jax:
                out, _, xerr = run([sys.executable, xla_run, path, "--platform", "cpu", "--json",
                                    "--iters", str(args.xla_iters), "--warmup", "3",
                                    "--save-inputs", d], 900)
                xla = last_json(out)
            inputs = sorted_args(d) or sorted_args(os.path.join(os.path.dirname(path), "inputs"))
            notes = []
            env = dict(os.environ, HLO_CACHE_DIR=os.path.join(tmp, "cache-" + name))
            out, _, err = run([hlo, "bench", path, "--json", "--iters", "1", "--warmup", "0"] +
                              input_flags(inputs), 600, env)
            cold = last_json(out)
            if err:
                notes.append("hlo cold: " + err)
            out, _, err = run([hlo, "bench", path, "--json"] + input_flags(inputs), 600, env)
            warm = last_json(out)
            if err:
                notes.append("hlo: " + err)
            if not xla:
                notes.append("XLA: " + (xerr or "no output"))
            hm = warm["median_us"] / 1e3 if warm else None
            xm = xla["median_us"] / 1e3 if xla else None
            ratio = hm / xm if hm and xm else None
            if ratio:
                ratios.append((name, ratio))
            gf = xla["flops"] / (hm * 1e6) if xla and hm and xla.get("flops", -1) > 0 else None
            gb = xla["bytes_accessed"] / (hm * 1e6) if xla and hm and xla.get("bytes_accessed", -1) > 0 else None
            cms = cold["compile_ms"] if cold else None
            ours = cms - cold["stages_ms"].get("cc", 0) if cold else None
            xc = xla["compile_s"] * 1e3 if xla else None
            wc = warm["compile_ms"] if warm else None
            ready = cold.get("ready_ms") if cold else None
            first = cold.get("first_result_ms") if cold else None
            if cold and cold.get("first_run_tier") == "interp":
                notes.append("1st run interpreted")
            xfirst = xc + xm if xc is not None and xm is not None else None
            if warm:
                notes.insert(0, f"{warm['iters']} runs")
            say(f"{name:30} {fmt(hm, 9)} {fmt(xm, 9)} {fmt(ratio, 7, 2)} {fmt(gf, 8, 1)} {fmt(gb, 7, 1)} "
                f"{fmt(cms, 8, 1)} {fmt(ours, 8, 1)} {fmt(xc, 8, 1)} {fmt(wc, 8, 1)} "
                f"{fmt(ready, 8, 1)} {fmt(first, 8, 1)} {fmt(xfirst, 8, 1)}  {'; '.join(notes)}")
            if warm:
                for m, n, k, ms, batch in gemm_rows(hlo, path, inputs, hm):
                    gemms.append((name, m, n, k, ms, batch))
    say("```")
    if ratios:
        worst = max(ratios, key=lambda r: r[1])
        say()
        say(f"{sum(r <= 1.0 for _, r in ratios)} of {len(ratios)} programs at or below 1.0; "
            f"worst {worst[0]} at {worst[1]:.2f}.")
    if gemms:
        rates = lib_rates(gemm_tool, {(m, n, k) for _, m, n, k, _, b in gemms})
        say()
        say("GEMMs inside the programs (hlo --profile: time per call, all of a batch's matrices; "
            "hlo splits a product over its 2 threads) against the BLAS library alone on one "
            "matrix of the same shape, untransposed, one thread (bench/blas/gemm_rate):")
        say()
        say("```")
        say(f"{'program':30} {'[B x] M x N x K':>22} {'ms/call':>9} {'GFLOP/s':>8} {'library':>8} {'ratio':>6}")
        for name, m, n, k, ms, batch in gemms:
            g = 2.0 * batch * m * n * k / (ms * 1e6) if ms > 0 else None
            lib = rates.get((m, n, k))
            shape = f"{str(batch) + 'x' if batch > 1 else ''}{m}x{n}x{k}"
            say(f"{name:30} {shape:>22} {fmt(ms, 9, 4)} {fmt(g, 8, 1)} {fmt(lib, 8, 1)} "
                f"{fmt(g / lib if g and lib else None, 6, 2)}")
        say("```")
    if args.results:
        update_results(args.results, lines)


def update_results(path, lines):
    """Replaces (or appends) SECTION of the markdown file with the lines."""
    text = open(path).read() if os.path.exists(path) else "# Benchmark results\n"
    body = SECTION + " (`make bench`, second part: `bench/run_vs_xla.py`)\n\n" + "\n".join(lines) + "\n"
    start = text.find(SECTION)
    if start < 0:
        text = text.rstrip("\n") + "\n\n" + body
    else:
        nxt = text.find("\n## ", start + len(SECTION))
        text = text[:start] + body + (text[nxt + 1:] if nxt >= 0 else "")
    with open(path, "w") as f:
        f.write(text)


if __name__ == "__main__":
    main()
