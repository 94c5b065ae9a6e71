/* tiered.h — tiered execution of the CPU backend (docs/tiered.md): on a
 * compilation-cache miss, an executable is runnable as soon as hlo's own
 * stages are done; its native code (lowering, the C compiler, loading,
 * storing the cache entry) is made by a background thread, and runs that
 * start before it is ready are run by the reference interpreter on the same
 * optimised module, when that can win (the policy below), cancelled
 * between ops once the native code is loaded (interp_set_cancel) and then
 * re-run natively on the same inputs.
 *
 * This header: what api.c needs to decide whether and when to tier (the
 * program's eligibility, the cost estimates), the background thread, and
 * the runtime's internal queries the tools use (the tier of the last run,
 * the ready and native times, the bench's first run). */
#ifndef HLO_RUNTIME_TIERED_H
#define HLO_RUNTIME_TIERED_H
#include <stdbool.h>
#include <stdint.h>
#include "hlo/bench.h"
#include "hlo/hlo.h"
#include "ir/ir.h"
#include "support/status.h"

/* Whether tiering is asked for: not co->no_tiering, and $HLO_TIERING not
 * "0", "false", "no" or "off" (any case). Another value than those and
 * "1", "true", "yes", "on" (or empty) leaves tiering on with a warning on
 * stderr, once a process. */
bool tier_enabled(const hlo_compile_options *co);

/* Whether module `m` may run on the interpreter while its native code is
 * made, and be re-run natively when that run is cancelled: no op anywhere
 * with an effect outside its results (custom_call — a user handler may
 * have side effects —, infeed, outfeed, send, recv, trace,
 * interpreter.print / probe / run_parallel). */
bool tier_program_ok(const hlo_module_ir *m);

/* Whether the C compiler can be started (cpu_jit_check_compiler): NULL, or
 * its HLO_UNAVAILABLE "no C compiler" error. */
HLO_MUST_USE hlo_status tier_check_compiler(void);

/* The estimated time of one interpreter run of `entry` of optimised module
 * `m`, in ms, from its cost analysis (src/passes/cost_analysis.h) and the
 * interpreter's measured rates (tiered.c); a lower bound for a program with
 * while loops (their bodies count once). -1 when the analysis fails. */
double tier_estimate_interp_ms(const hlo_module_ir *m, const char *entry);

/* The estimated wall time of the background compile of `f` (lowering, the C
 * compiler on its fusions, loading), in ms: a bound from the fusion ops
 * and what is in them (the shape of src/backend/cpu/cpu_backend.c's unit
 * cost model, without the kernels' C text). */
double tier_estimate_compile_ms(const hlo_func *f);

/* Whether a run that finds the native code still pending should be
 * interpreted (else it waits): interp_ms (-1: unknown) against the compile
 * still to go, compile_ms estimated in all with elapsed_ms gone (at least a
 * quarter of the estimate is taken to be left: a compile past its estimate
 * is late by an unknown amount). An unknown estimate interprets: the
 * cancel bounds what it costs. */
bool tier_should_interpret(double interp_ms, double compile_ms, double elapsed_ms);

/* ------------------------------------------------ the background thread */

typedef struct tier_job tier_job;

/* Starts a thread that runs fn(ctx), keeps its status, and then sets
 * *done (atomically, release order). Errors: HLO_RESOURCE_EXHAUSTED when
 * no thread can be started (nothing runs then). */
HLO_MUST_USE hlo_status tier_job_start(hlo_status (*fn)(void *ctx), void *ctx, bool *done,
                                       tier_job **out);
/* Waits for the thread, frees the job and returns fn's status (yours). */
HLO_MUST_USE hlo_status tier_job_join(tier_job *j);

/* A copy of error `s`: its code, message, location (the source line taken
 * from `src` when the error names that file) and notes. */
hlo_status tier_status_copy(hlo_status s, const hlo_source *src);

/* Whether $HLO_LOG_COMPILES is on or co->log_compiles is set. */
bool tier_log_compiles(const hlo_compile_options *co);

/* ------------------------------------------ queries (internal: the tools) */

/* The tier of e's native code: "pending" (the background compile is
 * still running), "ready" (it is over, not yet taken over by a run or a
 * wait), "native" (loaded), "failed" (the background compile failed: runs
 * report its error), "interp" (an interpreter executable, or a dynamic one
 * before its first specialisation). Not thread-safe with runs of `e`. */
const char *runtime_executable_tier(const hlo_executable *e);
/* The tier the last run of `e` ran on: "interp" or "native" (NULL before
 * any run). */
const char *runtime_executable_last_run_tier(const hlo_executable *e);
/* Runs of tiered executable `e` so far that started on the interpreter
 * (*interpreted) and, of them, those the native code cancelled and ran
 * again (*cancelled). Either pointer may be NULL. */
void runtime_executable_tier_runs(const hlo_executable *e, uint32_t *interpreted,
                                  uint32_t *cancelled);
/* Times of e's compile from the start of the compile call, in ms:
 * *ready_ms when the call returned, *native_ms when the native code was
 * loaded (and the cache entry stored); for a compile that did not tier
 * both are the call's time; *native_ms is -1 while the native code is
 * pending. Either pointer may be NULL. */
void runtime_executable_tier_ms(const hlo_executable *e, double *ready_ms, double *native_ms);

/* `hlo bench`'s first run: made between the compile's return and the wait
 * for the native code. */
typedef struct runtime_bench_first {
  /* Makes the views of the inputs (e's num_args of them, lent until the
   * bench is over) once the executable exists. */
  hlo_status (*inputs)(void *ctx, hlo_executable *e, const hlo_buffer_view **views);
  void *ctx;
  double ready_ms;            /* out: read to the compile's return */
  double first_result_ms;     /* out: ready_ms + the first run */
  const char *first_run_tier; /* out: "interp" or "native" */
} runtime_bench_first;

/* hlo_bench_compile (include/hlo/bench.h), tiered when `opts` allow it:
 * reads, parses, verifies and compiles `path`, runs the first run at once
 * on first->inputs' views (the interpreter when the native code is
 * pending), then waits for the native code (hlo_executable_wait). `times`
 * are hlo_bench_compile's: the stages until the native code was loaded
 * (the first run not counted in them). Errors: hlo_bench_compile's, the
 * inputs', the first run's and the background compile's. */
HLO_MUST_USE hlo_status runtime_bench_compile_tiered(const char *path, const char *entry,
                                                     const hlo_compile_options *opts,
                                                     hlo_compile_times *times,
                                                     runtime_bench_first *first,
                                                     hlo_module **out_module,
                                                     hlo_executable **out_exe);
#endif /* HLO_RUNTIME_TIERED_H */
