/* hlo/bench.h — timing programs and drawing random inputs for them: what
 * `hlo bench` is made of, for C programs that want the same figures.
 *
 *   hlo_compile_times ct;  hlo_module *m;  hlo_executable *e;
 *   hlo_random_inputs *in;  hlo_bench_result r;
 *   hlo_status st = hlo_bench_compile("model.mlir", NULL, NULL, &ct, &m, &e);
 *   if (!st) st = hlo_random_inputs_create(e, 0, &in);
 *   if (!st) st = hlo_bench_run(e, hlo_random_inputs_views(in),
 *                               hlo_random_inputs_count(in), NULL, &r);
 *   if (!st) printf("median %.1f us, compiled in %.1f ms\n", r.median_us, ct.total_ms);
 *   (then hlo_random_inputs_destroy, hlo_executable_destroy, hlo_module_destroy)
 *
 * Ownership and errors as in hlo/hlo.h. Implemented in src/runtime/bench.c
 * and src/runtime/random_inputs.c. */
#ifndef HLO_BENCH_H
#define HLO_BENCH_H

#include <stdint.h>

#include "hlo/hlo.h"

#ifdef __cplusplus
extern "C" {
#endif

/* --------------------------------------------------------- random inputs */

/* A small, fast, seeded generator (xoshiro256**, seeded through splitmix64:
 * Blackman and Vigna, https://prng.di.unimi.it/). The same seed gives the same
 * stream on every machine. */
typedef struct hlo_rng {
  uint64_t s[4];
} hlo_rng;

/* Seeds `r` from `seed`. */
void hlo_rng_seed(hlo_rng *r, uint64_t seed);
/* The next 64 random bits. */
uint64_t hlo_rng_next(hlo_rng *r);
/* A standard normal double (Marsaglia's polar method). */
double hlo_rng_normal(hlo_rng *r);

/* Fills `n` elements of type `dt` at `data` (n * hlo_dtype_size(dt) bytes)
 * by the rule of ../shared/tools/xla_run.py, the XLA side of hlo's
 * benchmarks:
 *   - floats: a standard normal rounded to f32, then to `dt` (so f64 and
 *     bf16 hold f32 values, as numpy's `.astype(float32).astype(dt)` gives);
 *     f8E8M0FNU, which has no sign, takes the normal's magnitude;
 *   - complex: real parts then imaginary parts, each a standard normal;
 *   - i1: 0 or 1; other integers: uniform in [0, 8), or [0, max+1) for the
 *     types whose largest value is below 7 (i2: 0..1, ui2: 0..3).
 * A float or complex array that came out all zeros is drawn again (normal
 * floats are never all zeros). The values follow xla_run.py's distribution
 * and seed, not numpy's bit stream: to run both on the very same data, save
 * xla_run.py's inputs (--save-inputs DIR) and pass them to hlo. */
void hlo_random_fill(hlo_rng *r, hlo_dtype dt, size_t n, void *data);

/* Random inputs for every parameter of an executable's entry function. */
typedef struct hlo_random_inputs hlo_random_inputs;

/* Draws an input for each parameter of `e`'s entry function, in order, from
 * one generator seeded with `seed` (hlo_random_fill's rule); a token
 * parameter gets a view of rank HLO_RANK_TOKEN. *out is yours.
 * Errors: HLO_UNIMPLEMENTED for a parameter with a dynamic shape (`?`: its
 * size comes only from real inputs) or a tuple, naming it;
 * HLO_RESOURCE_EXHAUSTED. */
HLO_MUST_USE hlo_status hlo_random_inputs_create(const hlo_executable *e, uint64_t seed,
                                                 hlo_random_inputs **out);
/* Number of views (the entry's parameter count). */
int hlo_random_inputs_count(const hlo_random_inputs *in);
/* The views, one per parameter, lent (valid until destroyed): pass them to
 * hlo_executable_run or hlo_bench_run. */
const hlo_buffer_view *hlo_random_inputs_views(const hlo_random_inputs *in);
/* Frees the inputs (NULL is fine). */
void hlo_random_inputs_destroy(hlo_random_inputs *in);

/* ---------------------------------------------------------------- timing */

/* Most stages hlo_compile_times holds. */
#define HLO_MAX_STAGES 16

/* The time each stage of making an executable took, in order. */
typedef struct hlo_compile_times {
  int num_stages;
  struct {
    const char *name; /* static storage: "read", "parse", "verify", "prepare", ... */
    double ms;
  } stages[HLO_MAX_STAGES];
  double total_ms; /* the sum of the stages */
  /* The compilation cache (docs/cache.md): "hit" (loaded: no pass ran, no
   * compiler started), "miss" (compiled and stored) or "off" (not used).
   * Static storage. */
  const char *cache;
  /* Starting the device before the compile (a GPU backend's first use in
   * the process: the driver, its context, the libraries), in ms; 0 when
   * already started or on a host backend. Not in total_ms: as JAX's
   * client, made before XLA compiles, is not in XLA's compile time. */
  double device_start_ms;
} hlo_compile_times;

/* hlo_module_load + hlo_executable_compile, timing each stage: "read" (the
 * file), "parse", "verify", then what hlo_executable_compile does: "passes"
 * (the pass pipeline, verification after each pass included), and on the
 * CPU backend "lower" (kernels from fusions, thunks, constants), "cc" (the
 * C compiler and loading its output), "prepare" (the rest: for the
 * interpreter, legalizing chlo and numbering values) and "cache" (the
 * compilation cache's own time: key, lookup or load, store; see `cache`). `opts` NULL: the
 * interpreter with no passes. `path` "-" reads standard input; `entry` NULL
 * means @main. On success *out_module and *out_exe are yours (destroy the
 * executable first). Errors: those of hlo_module_load and
 * hlo_executable_compile. */
HLO_MUST_USE hlo_status hlo_bench_compile(const char *path, const char *entry,
                                          const hlo_compile_options *opts,
                                          hlo_compile_times *times, hlo_module **out_module,
                                          hlo_executable **out_exe);

/* How hlo_bench_run times. Zeroed fields take the defaults. */
typedef struct hlo_bench_options {
  int iters;             /* timed runs; 0: adaptive (below) */
  int warmup;            /* untimed runs first; 0: 1; -1: none (then `iters` must be set) */
  double target_seconds; /* adaptive: timed runs take about this long in all; 0: 2.0 */
  int max_iters;         /* adaptive: at most this many runs; 0: 100000 */
} hlo_bench_options;

/* Times per run, in microseconds, of hlo_bench_run. */
typedef struct hlo_bench_result {
  int iters;        /* timed runs */
  int warmup;       /* untimed runs before them */
  double first_us;  /* the first run (warm-up or not): includes one-time work such as
                       specializing a dynamic-shaped program to the inputs' shapes */
  double median_us; /* the median of the timed runs (the upper one of an even count) */
  double min_us, max_us, mean_us;
} hlo_bench_result;

/* Places `args` on the device `e` runs on once (hlo_executable_device_put:
 * for a GPU, uploaded before any run, as JAX's device_put; for the CPU, a
 * host copy), then runs `e` on them (hlo_executable_run_buffers: results
 * stay on the device, not downloaded) `warmup` times, then `iters`
 * times timed, each run's results freed outside the timing; with iters 0
 * the count is adaptive: floor(target_seconds / the last warm-up run's
 * time), clamped to [1, max_iters], so a program slower than the target runs
 * once. Timed with CLOCK_MONOTONIC around each hlo_executable_run call.
 * Errors: HLO_INVALID_ARGUMENT for negative counts or iters 0 with no
 * warm-up; hlo_executable_device_put's (noted "placing argument i"); any
 * run's error (the first, returned as is). */
HLO_MUST_USE hlo_status hlo_bench_run(hlo_executable *e, const hlo_buffer_view *args,
                                      int num_args, const hlo_bench_options *opts,
                                      hlo_bench_result *out);

#ifdef __cplusplus
}
#endif
#endif /* HLO_BENCH_H */
