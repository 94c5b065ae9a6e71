/* bench.c — `hlo bench`: compile a program once, run it warm, print the
 * median and minimum time per run and the compile time by stage (or one
 * JSON object). A thin layer over include/hlo/bench.h, where the timing and
 * the random inputs live. */
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "builtin.h"
#include "hlo/bench.h"
#include "hlo/hlo.h"
#include "runtime/runtime.h"
#include "runtime/tiered.h"
#include "support/status.h"

static const char *const usage_bench =
    "usage: hlo bench FILE [--input A.npy | --arg LITERAL]... [--backend interp|cpu]\n"
    "                 [--passes LIST] [--dump-to DIR] [--profile]\n"
    "                 [--iters N] [--warmup K] [--seed S] [--entry NAME] [--json]\n"
    "                 [--cache-dir DIR] [--no-cache] [--cache-max-bytes N]\n"
    "                 [--log-compiles] [--explain-cache-misses] [--no-tiering]\n"
    "\n"
    "Compiles the entry function (@main, or the only function) of FILE once, runs it\n"
    "K times to warm up, then N times timed, and prints the median and minimum time\n"
    "per run, the first run's time and the compile time by stage (read, parse,\n"
    "verify, prepare).\n"
    "\n"
    "A compile that misses the cache is tiered (docs/tiered.md): it is ready once\n"
    "hlo's own stages are done, the first run starts at once (on the interpreter\n"
    "while the C compiler works in the background, when that is estimated to be\n"
    "quicker), then bench waits for the native code; the warm-up and timed runs\n"
    "are native. Reported: ready (read to the compile's return), first result\n"
    "(ready + the first run) and its tier, and the compile time until the native\n"
    "code was loaded (its stages as without tiering).\n"
    "\n"
    "  --input A.npy       the next argument of the entry function, in order, as for\n"
    "                      `hlo run`; without any, random inputs from the argument\n"
    "                      types by the rule of ../shared/tools/xla_run.py: normal\n"
    "                      floats (rounded to f32, then to the type; never all\n"
    "                      zeros), integers in [0, 8), booleans 0/1\n"
    "  --arg LITERAL       the next argument as an MLIR literal (as `hlo run`)\n"
    "  --seed S            seed of the random inputs (default 0, as xla_run.py)\n"
    "  --backend cpu       compiled for this CPU (the default; see hlo run --help)\n"
    "  --backend interp    the reference interpreter\n"
    "  --backend cuda|cpu-devmem  NVIDIA GPU 0 / the CPU backend with its buffers kept apart\n"
    "                      from the host's, as a GPU's are (see hlo run --help)\n"
    "  --passes LIST       the pass pipeline (default: the backend's; see hlo run --help)\n"
    "  --dump-to DIR       dump each pass's module and the generated C to DIR\n"
    "  --profile           (cpu, cuda) print the time of each thunk (kernel, BLAS\n"
    "                      call, interpreter op) per run to stderr, slowest first\n"
    "                      (cuda: each waits for the device: launches serialise)\n"
    "  --iters N           timed runs (N >= 1). Default: adaptive, so the timed runs\n"
    "                      take about 2 s in all: floor(2 s / the last warm-up run),\n"
    "                      at least 1 (a program slower than 2 s runs once), at\n"
    "                      most 100000\n"
    "  --warmup K          untimed runs first (default 1; 0 only with --iters)\n"
    "  --entry NAME        time function @NAME instead of @main\n"
    "  --no-tiering        compile the native code before the first run (also\n"
    "                      HLO_TIERING=0; --profile and --dump-to never tier)\n"
    "  --json              print one JSON object: file, entry, backend, iters, warmup,\n"
    "                      median_us, min_us, mean_us, max_us, first_run_us,\n"
    "                      compile_ms, stages_ms {read, parse, verify, prepare, ...},\n"
    "                      ready_ms, first_result_ms, first_run_tier (\"interp\" or\n"
    "                      \"native\"),\n"
    "                      cache (\"hit\", \"miss\" or \"off\"), device_start_ms,\n"
    "                      inputs (\"random\" or \"given\"), seed\n"
    CLI_CACHE_USAGE
    "\n"
    "Random inputs follow xla_run.py's distribution and seed but not numpy's bit\n"
    "stream; for the very same data on both, save XLA's (xla_run.py --save-inputs\n"
    "DIR) and pass them with --input. Times are wall-clock per call, results freed\n"
    "outside the timing.\n";

/* Parses a whole decimal integer in [lo, hi] into *out. */
static bool parse_int(const char *s, long lo, long hi, long *out) {
  if (!*s) return false;
  errno = 0;
  char *end;
  long v = strtol(s, &end, 10);
  if (*end || errno || v < lo || v > hi) return false;
  *out = v;
  return true;
}

/* A duration given in microseconds, in a unit that suits it. */
static void fmt_us(char *buf, size_t n, double us) {
  if (us < 1e3) snprintf(buf, n, "%.1f us", us);
  else if (us < 1e6) snprintf(buf, n, "%.3f ms", us / 1e3);
  else snprintf(buf, n, "%.3f s", us / 1e6);
}

typedef struct bench_flags {
  cli_input_list in;
  const char *file, *entry;
  long iters, warmup;  /* iters 0: adaptive; warmup -1: not given */
  unsigned long long seed;
  bool json;
  hlo_backend_kind backend;
  const char *passes, *dump_dir; /* compile options (NULL: the backend's own) */
  bool profile;                  /* print the time per thunk (cpu) */
  bool no_tiering;               /* --no-tiering */
  cli_cache_opts cache;          /* the compilation cache's flags */
} bench_flags;

static void print_text(const bench_flags *fl, const char *entry, const hlo_compile_times *ct,
                       const runtime_bench_first *fr, const hlo_bench_result *r) {
  char med[32], mn[32], mean[32], mx[32], first[32];
  fmt_us(med, sizeof med, r->median_us);
  fmt_us(mn, sizeof mn, r->min_us);
  fmt_us(mean, sizeof mean, r->mean_us);
  fmt_us(mx, sizeof mx, r->max_us);
  fmt_us(first, sizeof first, r->first_us);
  printf("%s: @%s on %s, %d timed run%s after %d warm-up%s, %s inputs", fl->file, entry,
         cli_backend_name(fl->backend), r->iters, r->iters == 1 ? "" : "s", r->warmup, r->warmup == 1 ? "" : "s",
         fl->in.n ? "given" : "random");
  if (!fl->in.n) printf(" (seed %llu)", fl->seed);
  printf("\n  run:     median %s  min %s  (mean %s, max %s; first run %s)\n", med, mn, mean, mx,
         first);
  printf("  compile: %.3f ms (", ct->total_ms);
  for (int i = 0; i < ct->num_stages; i++)
    printf("%s%s %.3f", i ? ", " : "", ct->stages[i].name, ct->stages[i].ms);
  printf(")%s%s", ct->cache ? "; cache " : "", ct->cache ? ct->cache : "");
  if (ct->device_start_ms > 0) printf("; device start %.3f ms (not in compile)", ct->device_start_ms);
  printf("\n  first result: %.3f ms (ready %.3f ms, then the first run on the %s)\n",
         fr->first_result_ms, fr->ready_ms,
         fr->first_run_tier && !strcmp(fr->first_run_tier, "interp") ? "interpreter"
                                                                      : "native code");
}

static void print_json(const bench_flags *fl, const char *entry, const hlo_compile_times *ct,
                       const runtime_bench_first *fr, const hlo_bench_result *r) {
  printf("{\"file\": ");
  cli_json_string(stdout, fl->file);
  printf(", \"entry\": ");
  cli_json_string(stdout, entry);
  printf(", \"backend\": \"%s\", \"iters\": %d, \"warmup\": %d, \"median_us\": %.3f, "
         "\"min_us\": %.3f, \"mean_us\": %.3f, \"max_us\": %.3f, \"first_run_us\": %.3f, "
         "\"compile_ms\": %.4f, \"stages_ms\": {",
         cli_backend_name(fl->backend), r->iters, r->warmup, r->median_us, r->min_us, r->mean_us, r->max_us, r->first_us,
         ct->total_ms);
  for (int i = 0; i < ct->num_stages; i++) {
    printf("%s", i ? ", " : "");
    cli_json_string(stdout, ct->stages[i].name);
    printf(": %.4f", ct->stages[i].ms);
  }
  printf("}, \"ready_ms\": %.4f, \"first_result_ms\": %.4f, \"first_run_tier\": \"%s\"",
         fr->ready_ms, fr->first_result_ms, fr->first_run_tier ? fr->first_run_tier : "native");
  printf(", \"cache\": \"%s\", \"device_start_ms\": %.4f, \"inputs\": \"%s\", "
         "\"seed\": %llu}\n",
         ct->cache ? ct->cache : "off", ct->device_start_ms, fl->in.n ? "given" : "random",
         fl->seed);
}

/* The inputs of the runs, made once the executable exists (before its
 * first run: runtime_bench_first). */
typedef struct bench_inputs {
  const bench_flags *fl;
  hlo_random_inputs *rnd;
  run_inputs given;
  const hlo_buffer_view *views;
} bench_inputs;

static hlo_status make_inputs(void *ctx, hlo_executable *e, const hlo_buffer_view **views) {
  bench_inputs *bi = ctx;
  const bench_flags *fl = bi->fl;
  const hlo_func *f = runtime_executable_entry(e);
  hlo_status st = NULL;
  if (fl->in.n) {
    st = cli_check_input_count(f, &fl->in);
    if (!st) st = cli_load_inputs(f, &fl->in, &bi->given);
    bi->views = bi->given.views;
  } else {
    st = hlo_random_inputs_create(e, fl->seed, &bi->rnd);
    if (st && hlo_status_code_of(st) == HLO_UNIMPLEMENTED)
      status_note(st, "give this program its inputs with --input");
    if (!st) bi->views = hlo_random_inputs_views(bi->rnd);
  }
  *views = bi->views;
  return st;
}

/* Compiles (the first run at once), makes the inputs, times; prints the
 * report. */
static hlo_status bench(const bench_flags *fl) {
  hlo_compile_times ct;
  hlo_module *m = NULL;
  hlo_executable *e = NULL;
  /* --profile times the native code's thunks: compiled first */
  hlo_compile_options co = {.backend = fl->backend, .passes = fl->passes,
                            .dump_dir = fl->dump_dir,
                            .no_tiering = fl->no_tiering || fl->profile};
  cli_cache_apply(&fl->cache, &co);
  bench_inputs bi = {.fl = fl};
  runtime_bench_first fr = {.inputs = make_inputs, .ctx = &bi};
  /* the CPU backend (tiered): the first run between the compile's return
   * and the native code; it also keeps one-time costs (a library's thread
   * start, code generation) out of --profile's per-step times. The other
   * backends: compiled, then the runs, as always (their first run is the
   * warm-up's) */
  bool early = fl->backend == HLO_BACKEND_CPU;
  hlo_status st;
  if (early) {
    st = runtime_bench_compile_tiered(fl->file, fl->entry, &co, &ct, &fr, &m, &e);
  } else {
    st = hlo_bench_compile(fl->file, fl->entry, &co, &ct, &m, &e);
    const hlo_buffer_view *views = NULL;
    if (!st) st = make_inputs(&bi, e, &views);
    if (!st && fl->profile) {
      hlo_buffer **res = NULL;
      st = hlo_executable_run(e, views, hlo_executable_num_args(e), &res);
      for (int k = 0; res && k < hlo_executable_num_results(e); k++) hlo_buffer_destroy(res[k]);
      free(res);
    }
  }
  const hlo_func *f = e ? runtime_executable_entry(e) : NULL;
  hlo_bench_result r;
  hlo_bench_options o = {(int)fl->iters, fl->warmup < 0 ? 0 : fl->warmup == 0 ? -1 : (int)fl->warmup,
                         0, 0};
  if (!st && fl->profile && !runtime_executable_profile(e, true))
    fprintf(stderr, "hlo bench: --profile: only the compiled backends (cpu, cuda) have thunks to time\n");
  if (!st) st = hlo_bench_run(e, bi.views, (int)f->num_args, &o, &r);
  /* the first native run: the compile's first run when it was native */
  if (!st && early && fr.first_run_tier && !strcmp(fr.first_run_tier, "native"))
    r.first_us = (fr.first_result_ms - fr.ready_ms) * 1e3;
  if (!st && !early) { /* no tier but the backend's own: ready once compiled */
    fr.ready_ms = ct.total_ms;
    fr.first_result_ms = ct.total_ms + r.first_us * 1e-3;
    fr.first_run_tier = fl->backend == HLO_BACKEND_INTERP ? "interp" : "native";
  }
  if (!st && fl->profile) runtime_executable_profile_print(e, stderr, 40);
  if (!st && fl->json) print_json(fl, f->name, &ct, &fr, &r);
  else if (!st) print_text(fl, f->name, &ct, &fr, &r);
  hlo_random_inputs_destroy(bi.rnd);
  cli_free_inputs(&bi.given);
  hlo_executable_destroy(e);
  hlo_module_destroy(m);
  return st;
}

int cmd_bench(int argc, char **argv) {
  static bench_flags fl;
  memset(&fl, 0, sizeof fl);
  fl.warmup = -1;
  fl.backend = HLO_BACKEND_CPU;
  for (int i = 0; i < argc; i++) {
    const char *a = argv[i];
    bool has_val = i + 1 < argc;
    int cf = cli_cache_flag("bench", argc, argv, &i, &fl.cache);
    if (cf < 0) return 2;
    if (cf > 0) continue;
    if (cli_is_flag(a, "--help") || cli_is_flag(a, "-h")) { fputs(usage_bench, stdout); return 0; }
    else if (cli_is_flag(a, "--json")) fl.json = true;
    else if ((cli_is_flag(a, "--input") || cli_is_flag(a, "-i") || cli_is_flag(a, "--arg")) &&
             has_val) {
      if (fl.in.n == CLI_MAX_INPUTS) { fprintf(stderr, "hlo bench: too many inputs\n"); return 2; }
      fl.in.is_literal[fl.in.n] = cli_is_flag(a, "--arg");
      fl.in.inputs[fl.in.n++] = argv[++i];
    } else if (cli_is_flag(a, "--entry") && has_val) fl.entry = argv[++i];
    else if (cli_is_flag(a, "--passes") && has_val) fl.passes = argv[++i];
    else if (cli_is_flag(a, "--profile")) fl.profile = true;
    else if (cli_is_flag(a, "--no-tiering")) fl.no_tiering = true;
    else if (cli_is_flag(a, "--dump-to") && has_val) fl.dump_dir = argv[++i];
    else if (cli_is_flag(a, "--backend") && has_val) {
      ++i;
      if (!cli_parse_backend("bench", argv[i], &fl.backend)) return 2;
    } else if (cli_is_flag(a, "--iters") && has_val) {
      if (!parse_int(argv[++i], 1, INT_MAX, &fl.iters)) {
        fprintf(stderr, "hlo bench: --iters '%s': expected a whole number of runs, at least 1\n",
                argv[i]);
        return 2;
      }
    } else if (cli_is_flag(a, "--warmup") && has_val) {
      if (!parse_int(argv[++i], 0, INT_MAX, &fl.warmup)) {
        fprintf(stderr, "hlo bench: --warmup '%s': expected a whole number of runs, 0 or more\n",
                argv[i]);
        return 2;
      }
    } else if (cli_is_flag(a, "--seed") && has_val) {
      const char *s = argv[++i];
      char *end;
      errno = 0;
      fl.seed = strtoull(s, &end, 10);
      if (!*s || *end || errno || *s == '-') {
        fprintf(stderr, "hlo bench: --seed '%s': expected a non-negative whole number\n", s);
        return 2;
      }
    } else if (a[0] == '-' && a[1]) {
      fprintf(stderr, "hlo bench: unknown flag or missing value '%s'\n%s", a, usage_bench);
      return 2;
    } else if (!fl.file) fl.file = a;
    else { fprintf(stderr, "hlo bench: more than one FILE ('%s')\n%s", a, usage_bench); return 2; }
  }
  if (!fl.file) { fprintf(stderr, "hlo bench: missing FILE\n%s", usage_bench); return 2; }
  if (fl.warmup == 0 && fl.iters == 0) {
    fprintf(stderr, "hlo bench: --warmup 0 needs --iters N: the adaptive count is taken from a "
            "warm-up run\n");
    return 2;
  }
  hlo_status st = bench(&fl);
  return st ? cli_report(st) : 0;
}
