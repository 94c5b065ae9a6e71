/* bench.c — timing a program: the compile stages of making an executable and
 * warm runs of it (include/hlo/bench.h), what `hlo bench` reports. */
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "hlo/bench.h"
#include "hlo/hlo.h"
#include "ir/ir.h"
#include "parse/parse.h"
#include "passes/pass_manager.h"
#include "runtime/runtime.h"
#include "runtime/tiered.h"
#include "support/arena.h"
#include "support/status.h"

static double now_ms(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (double)ts.tv_sec * 1e3 + 1e-6 * (double)ts.tv_nsec;
}

static void add_stage(hlo_compile_times *t, const char *name, double ms) {
  if (t->num_stages >= HLO_MAX_STAGES) return;
  t->stages[t->num_stages].name = name;
  t->stages[t->num_stages].ms = ms;
  t->num_stages++;
  t->total_ms += ms;
}

/* One run of `e` on `views`, its results freed; *ms its time. */
static hlo_status first_run(hlo_executable *e, const hlo_buffer_view *views, double *ms) {
  hlo_buffer **res = NULL;
  double t0 = now_ms();
  hlo_status st = hlo_executable_run(e, views, hlo_executable_num_args(e), &res);
  *ms = now_ms() - t0;
  for (int k = 0; res && k < hlo_executable_num_results(e); k++) hlo_buffer_destroy(res[k]);
  free(res);
  return st;
}

/* hlo_bench_compile's body; with `first`, the compile may tier and the
 * first run runs between the compile's return and the wait for the native
 * code (runtime_bench_compile_tiered). */
static hlo_status compile_timed(const char *path, const char *entry,
                                const hlo_compile_options *opts, hlo_compile_times *times,
                                runtime_bench_first *first, hlo_module **out_module,
                                hlo_executable **out_exe) {
  *out_module = NULL;
  *out_exe = NULL;
  memset(times, 0, sizeof *times);
  if (opts && opts->backend != HLO_BACKEND_INTERP && opts->backend != HLO_BACKEND_CPU) {
    /* a device backend started first (its error, if any, comes from the
     * compile below, as without this) */
    double ts = now_ms();
    (void)runtime_backend(opts->backend);
    times->device_start_ms = now_ms() - ts;
  }
  double t0 = now_ms();
  char *text;
  size_t len;
  HLO_TRY(runtime_read_file(path, &text, &len));
  double t1 = now_ms();
  add_stage(times, "read", t1 - t0);
  hlo_source src = {strcmp(path, "-") == 0 ? "<stdin>" : path, text, len, 1};
  hlo_module_ir *ir = NULL;
  hlo_status st = parse_module(&src, 0, len, &ir);
  free(text); /* the module keeps its own copy of the source */
  if (st) return st;
  double t2 = now_ms();
  add_stage(times, "parse", t2 - t1);
  st = module_verify(ir);
  if (st) { module_free(ir); return st; }
  double t3 = now_ms();
  add_stage(times, "verify", t3 - t2);
  hlo_module *m = runtime_module_wrap(ir);
  if (!m) { module_free(ir); return status_new(HLO_RESOURCE_EXHAUSTED, "out of memory"); }
  hlo_executable *e = NULL;
  st = hlo_executable_compile(m, entry, opts, &e);
  if (st) { hlo_module_destroy(m); return st; }
  double rest = now_ms() - t3;
  if (first) {
    /* ready: the first run at once (interpreted while the native code is
     * pending), then the wait; the stages end where the native code was
     * loaded (in the background), the first run not counted in them */
    first->ready_ms = now_ms() - t0;
    const hlo_buffer_view *views = NULL;
    double run_ms = 0;
    st = first->inputs(first->ctx, e, &views);
    if (!st) st = first_run(e, views, &run_ms);
    first->first_result_ms = first->ready_ms + run_ms;
    first->first_run_tier = runtime_executable_last_run_tier(e);
    hlo_status wst = hlo_executable_wait(e);
    if (!st) st = wst;
    else hlo_status_free(wst);
    if (st) {
      hlo_executable_destroy(e);
      hlo_module_destroy(m);
      return st;
    }
    double native_ms;
    runtime_executable_tier_ms(e, NULL, &native_ms);
    rest = native_ms;
  }
  const pass_report *rep = runtime_executable_pass_report(e);
  const runtime_cpu_stats *cs = runtime_executable_cpu_stats(e);
  double cache_ms = 0;
  times->cache = runtime_executable_cache_result(e, &cache_ms);
  bool hit = !strcmp(times->cache, "hit");
  if ((rep && rep->n) || hit) {  /* a hit ran no pass: 0 */
    double ms = rep && rep->n ? rep->total_ms : 0;
    add_stage(times, "passes", ms);
    rest -= ms;
  }
  if (cs) {
    add_stage(times, "lower", cs->lower_ms);
    add_stage(times, "cc", cs->cc_ms);
    rest -= cs->lower_ms + cs->cc_ms;
  }
  rest -= cache_ms;
  add_stage(times, "prepare", rest > 0 ? rest : 0);
  if (cs) add_stage(times, "cache", cache_ms);
  *out_module = m;
  *out_exe = e;
  return NULL;
}

hlo_status hlo_bench_compile(const char *path, const char *entry, const hlo_compile_options *opts,
                             hlo_compile_times *times, hlo_module **out_module,
                             hlo_executable **out_exe) {
  /* the stages of a whole compile: never tiered (`hlo compile`, `hlo dot`,
   * `hlo memory` report the native code) */
  hlo_compile_options o = opts ? *opts : (hlo_compile_options){0};
  o.no_tiering = true;
  return compile_timed(path, entry, &o, times, NULL, out_module, out_exe);
}

hlo_status runtime_bench_compile_tiered(const char *path, const char *entry,
                                        const hlo_compile_options *opts,
                                        hlo_compile_times *times, runtime_bench_first *first,
                                        hlo_module **out_module, hlo_executable **out_exe) {
  return compile_timed(path, entry, opts, times, first, out_module, out_exe);
}

/* One run of `e`, its results freed; *ms is the time of the run alone. */
static hlo_status timed_run(hlo_executable *e, hlo_buffer *const *args, int num_args,
                            double *ms) {
  hlo_buffer **res = NULL;
  double t0 = now_ms();
  hlo_status st =
      hlo_executable_run_buffers(e, (const hlo_buffer *const *)args, num_args, &res);
  *ms = now_ms() - t0;
  if (st) return st;
  int nres = hlo_executable_num_results(e);
  for (int k = 0; k < nres; k++) hlo_buffer_destroy(res[k]);
  free(res);
  return NULL;
}

static int cmp_double(const void *a, const void *b) {
  double x = *(const double *)a, y = *(const double *)b;
  return (x > y) - (x < y);
}

static hlo_status bench_on(hlo_executable *e, hlo_buffer *const *args, int num_args,
                           const hlo_bench_options *opts, hlo_bench_result *out);

hlo_status hlo_bench_run(hlo_executable *e, const hlo_buffer_view *args, int num_args,
                         const hlo_bench_options *opts, hlo_bench_result *out) {
  memset(out, 0, sizeof *out);
  if (num_args < 0 || (num_args > 0 && !args))
    return status_new(HLO_INVALID_ARGUMENT, "bench: %d arguments%s", num_args,
                      num_args > 0 ? " and no argument array" : "");
  /* the arguments on the executable's device once, before any run (as
   * jax.device_put before timing a jitted call): runs read them in place */
  hlo_buffer **bufs = xcalloc(num_args ? (size_t)num_args : 1, sizeof *bufs);
  if (!bufs) return status_new(HLO_RESOURCE_EXHAUSTED, "out of memory");
  hlo_status st = NULL;
  for (int i = 0; i < num_args && !st; i++) {
    st = hlo_executable_device_put(e, &args[i], &bufs[i]);
    if (st) status_note(st, "placing argument %d", i);
  }
  if (!st) st = bench_on(e, bufs, num_args, opts, out);
  for (int i = 0; i < num_args; i++) hlo_buffer_destroy(bufs[i]);
  free(bufs);
  return st;
}

static hlo_status bench_on(hlo_executable *e, hlo_buffer *const *args, int num_args,
                           const hlo_bench_options *opts, hlo_bench_result *out) {
  memset(out, 0, sizeof *out);
  hlo_bench_options o = opts ? *opts : (hlo_bench_options){0};
  if (o.iters < 0 || o.warmup < -1 || o.max_iters < 0 || o.target_seconds < 0)
    return status_new(HLO_INVALID_ARGUMENT,
                      "bench: iters (%d), warmup (%d), max_iters (%d) and target_seconds (%g) "
                      "must not be negative (warmup -1 means none)",
                      o.iters, o.warmup, o.max_iters, o.target_seconds);
  int warmup = o.warmup == 0 ? 1 : o.warmup < 0 ? 0 : o.warmup;
  if (o.iters == 0 && warmup == 0)
    return status_new(HLO_INVALID_ARGUMENT,
                      "bench: an adaptive count (iters 0) needs a warm-up run to time");
  double target_ms = (o.target_seconds > 0 ? o.target_seconds : 2.0) * 1e3;
  int max_iters = o.max_iters > 0 ? o.max_iters : 100000;
  double last = 0;
  for (int i = 0; i < warmup; i++) {
    HLO_TRY(timed_run(e, args, num_args, &last));
    if (i == 0) out->first_us = last * 1e3;
  }
  int iters = o.iters;
  if (iters == 0) {
    double n = last > 0 ? target_ms / last : (double)max_iters;
    iters = n < 1 ? 1 : n > max_iters ? max_iters : (int)n;
  }
  double *ts = xmalloc((size_t)iters * sizeof *ts);
  if (!ts) return status_new(HLO_RESOURCE_EXHAUSTED, "out of memory for %d timings", iters);
  double sum = 0;
  for (int i = 0; i < iters; i++) {
    hlo_status st = timed_run(e, args, num_args, &ts[i]);
    if (st) { free(ts); return st; }
    sum += ts[i];
  }
  if (warmup == 0) out->first_us = ts[0] * 1e3;
  qsort(ts, (size_t)iters, sizeof *ts, cmp_double);
  out->iters = iters;
  out->warmup = warmup;
  out->median_us = ts[iters / 2] * 1e3;
  out->min_us = ts[0] * 1e3;
  out->max_us = ts[iters - 1] * 1e3;
  out->mean_us = sum / iters * 1e3;
  free(ts);
  return NULL;
}
