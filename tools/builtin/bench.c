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
#include "support/status.h"

static const char *const usage_bench =
    "usage: hlo bench FILE [--input A.npy | --arg LITERAL]... [--backend interp|cpu]\n"
    "                 [--passes LIST] [--dump-to DIR] [--profile]\n"
    "                 [--iters N] [--warmup K] [--seed S] [--entry NAME] [--json]\n"
    "                 [--cache-dir DIR] [--no-cache] [--cache-max-bytes N]\n"
    "                 [--log-compiles] [--explain-cache-misses]\n"
    "\n"
    "Compiles the entry function (@main, or the only function) of FILE once, runs it\n"
    "K times to warm up, then N times timed, and prints the median and minimum time\n"
    "per run, the first run's time and the compile time by stage (read, parse,\n"
    "verify, prepare).\n"
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
    "  --json              print one JSON object: file, entry, backend, iters, warmup,\n"
    "                      median_us, min_us, mean_us, max_us, first_run_us,\n"
    "                      compile_ms, stages_ms {read, parse, verify, prepare, ...},\n"
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
  cli_cache_opts cache;          /* the compilation cache's flags */
} bench_flags;

static void print_text(const bench_flags *fl, const char *entry, const hlo_compile_times *ct,
                       const hlo_bench_result *r) {
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
  printf("\n");
}

static void print_json(const bench_flags *fl, const char *entry, const hlo_compile_times *ct,
                       const hlo_bench_result *r) {
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
  printf("}, \"cache\": \"%s\", \"device_start_ms\": %.4f, \"inputs\": \"%s\", "
         "\"seed\": %llu}\n",
         ct->cache ? ct->cache : "off", ct->device_start_ms, fl->in.n ? "given" : "random",
         fl->seed);
}

/* Compiles, makes the inputs, times; prints the report. */
static hlo_status bench(const bench_flags *fl) {
  hlo_compile_times ct;
  hlo_module *m = NULL;
  hlo_executable *e = NULL;
  hlo_compile_options co = {.backend = fl->backend, .passes = fl->passes,
                            .dump_dir = fl->dump_dir};
  cli_cache_apply(&fl->cache, &co);
  HLO_TRY(hlo_bench_compile(fl->file, fl->entry, &co, &ct, &m, &e));
  const hlo_func *f = runtime_executable_entry(e);
  hlo_random_inputs *rnd = NULL;
  run_inputs given = {0};
  const hlo_buffer_view *views = NULL;
  hlo_status st = NULL;
  if (fl->in.n) {
    st = cli_check_input_count(f, &fl->in);
    if (!st) st = cli_load_inputs(f, &fl->in, &given);
    views = given.views;
  } else {
    st = hlo_random_inputs_create(e, fl->seed, &rnd);
    if (st && hlo_status_code_of(st) == HLO_UNIMPLEMENTED)
      status_note(st, "give this program its inputs with --input");
    if (!st) views = hlo_random_inputs_views(rnd);
  }
  hlo_bench_result r;
  hlo_bench_options o = {(int)fl->iters, fl->warmup < 0 ? 0 : fl->warmup == 0 ? -1 : (int)fl->warmup,
                         0, 0};
  if (!st && fl->profile) {
    /* one run first, so that one-time costs (a library's thread start and
     * code generation) stay out of the per-step times */
    hlo_buffer **res = NULL;
    st = hlo_executable_run(e, views, (int)f->num_args, &res);
    for (uint32_t k = 0; res && k < f->num_results; k++) hlo_buffer_destroy(res[k]);
    free(res);
    if (!st && !runtime_executable_profile(e, true))
      fprintf(stderr, "hlo bench: --profile: only the compiled backends (cpu, cuda) have thunks to time\n");
  }
  if (!st) st = hlo_bench_run(e, views, (int)f->num_args, &o, &r);
  if (!st && fl->profile) runtime_executable_profile_print(e, stderr, 40);
  if (!st && fl->json) print_json(fl, f->name, &ct, &r);
  else if (!st) print_text(fl, f->name, &ct, &r);
  hlo_random_inputs_destroy(rnd);
  cli_free_inputs(&given);
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
