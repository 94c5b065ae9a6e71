/* runtime.h — internal entry points of the runtime shared with tools/ and
 * tests (the public ones are in include/hlo/hlo.h). */
#ifndef HLO_RUNTIME_RUNTIME_H
#define HLO_RUNTIME_RUNTIME_H
#include <stdio.h>
#include "hlo/hlo.h"
#include "interp/interp.h"
#include "ir/ir.h"

/* Largest rank of a result the C API hands out. */
#define HLO_MAX_RANK 32

/* Reads a whole file ("-" = stdin) into a malloc'd buffer (yours).
 * Errors: HLO_NOT_FOUND (with the path and the system's reason),
 * HLO_RESOURCE_EXHAUSTED. */
HLO_MUST_USE hlo_status runtime_read_file(const char *path, char **out_text, size_t *out_len);
/* The IR of a public module (lent; NULL for NULL). */
hlo_module_ir *runtime_module_ir(hlo_module *m);
/* Wraps an IR module as a public one, taking ownership; NULL on OOM. */
hlo_module *runtime_module_wrap(hlo_module_ir *ir);
/* hlo_executable_create for the interpreter with explicit interpreter
 * options (probe directory, print stream); `opts` is copied. Errors as
 * hlo_executable_create. */
HLO_MUST_USE hlo_status runtime_executable_create(hlo_module *m, const char *entry,
                                                  const interp_options *opts,
                                                  hlo_executable **out);
/* The entry function of an executable (lent). */
const hlo_func *runtime_executable_entry(const hlo_executable *e);
/* Runs the entry function on interpreter values (borrowed), serialised with
 * other runs of `e`; *out is a malloc'd array of num_results new references.
 * With dynamic shapes the results' types live in the shape specialization
 * that ran them: read them before the next run of `e` (which may evict it);
 * the data stays yours. Errors: HLO_INVALID_ARGUMENT for a wrong count, else
 * interp_call's. */
HLO_MUST_USE hlo_status runtime_run_tensors(hlo_executable *e, tensor *const *args, uint32_t n,
                                            tensor ***out);
/* What the CPU backend made of an executable's entry function. */
typedef struct runtime_cpu_stats {
  uint32_t ops;            /* ops of the function and of its compiled regions (constants too) */
  uint32_t constants;      /* top-level constants, made at compile time */
  uint32_t fills;          /* large splat constants filled at run time instead (STEP_FILL) */
  uint32_t kernels;        /* kernel thunks (one generated kernel each) */
  uint32_t blas;           /* BLAS thunks (gemm) */
  uint32_t epilogues;      /* of which run a kernel on their rows (output fusion) */
  uint32_t gemm_chains;    /* of which run a second GEMM on those rows (attention, MLP) */
  uint32_t convs;          /* convolution library calls */
  uint32_t windows;        /* reduce_window / select_and_scatter native calls */
  uint32_t sorts;          /* sort native calls (comparator recognised: sort_describe) */
  uint32_t interp;         /* interpreter thunks */
  uint32_t control;        /* while/case/if steps (their regions compiled as programs) */
  uint32_t loop_kernels;   /* while loops over 0-d values run as one kernel each (of `kernels`;
                              codegen/lower_while.h) */
  uint32_t copies;         /* data movement run natively (dynamic_slice, pad, gather, ...) */
  uint32_t aliases;        /* reshapes and same-width bitcasts: no copy, the operand's bytes */
  double compile_ms;       /* all of cpu_exec_create: lowering, C compile and load */
  double lower_ms;         /* lowering fusions to kernels, thunks, constants */
  double cc_ms;            /* the backend's compile: C emission, the C compiler, loading */
  uint32_t units;          /* translation units of the kernels (backend_compile_stats) */
  uint32_t units_from_entry;        /* loaded from a compilation cache entry */
  uint32_t units_from_kernel_cache; /* loaded from the kernel cache */
  uint32_t units_compiled;          /* compiled by the C compiler */
  char interp_ops[200];    /* the ops of the interpreter thunks: "sort, while x2" */
  /* memory, in bytes (buffer assignment; as XLA's memory_analysis()) */
  int64_t arg_bytes;       /* the arguments */
  int64_t out_bytes;       /* the results (each its own allocation) */
  int64_t const_bytes;     /* constants made at compile time */
  int64_t temp_bytes;      /* the arena of temporaries (kernel and library-call results) */
  int64_t heap_peak_bytes; /* interpreter thunks' temporaries live at once, at most */
  int64_t peak_bytes;      /* arguments + results + arena + heap peak */
  uint32_t arena_buffers;  /* values placed in the arena */
  /* counted while running (the others are fixed at compile time): */
  uint64_t fixed_loop_runs; /* while loops run on fixed buffers (executable_cpu_loop.c),
                               one per loop run; the others ran step by step */
} runtime_cpu_stats;
/* hlo_executable_compile with the interpreter's options too (probe
 * directory, print stream; copied). Errors as hlo_executable_compile. */
HLO_MUST_USE hlo_status runtime_executable_create_on(hlo_module *m, const char *entry,
                                                     const hlo_compile_options *co,
                                                     const interp_options *opts,
                                                     hlo_executable **out);
/* An internal backend kind beside the public ones (hlo_backend_kind), for
 * hlo_compile_options.backend: the CPU backend with its buffers kept apart
 * from the host's, as a GPU's are (backend_cpu_devmem): tests the
 * executable's device-memory path without a GPU (`--backend cpu-devmem`).
 * Compiled as HLO_BACKEND_CPU is (the `cpu` pipeline, the cache). */
#define RUNTIME_BACKEND_CPU_DEVMEM ((hlo_backend_kind)100)
/* The backend table a compiled backend kind compiles for (HLO_BACKEND_CPU,
 * HLO_BACKEND_CUDA, RUNTIME_BACKEND_CPU_DEVMEM), or NULL: the interpreter,
 * an unknown kind, or CUDA when backend_cuda fails (no driver). */
struct backend;
const struct backend *runtime_backend(hlo_backend_kind k);
/* The CPU backend's statistics of `e`, or NULL when `e` does not run on it. */
const runtime_cpu_stats *runtime_executable_cpu_stats(const hlo_executable *e);
/* Per-thunk timing of the CPU backend's runs of `e` (cpu_exec_profile):
 * false when `e` does not run on it (nothing to profile). */
bool runtime_executable_profile(hlo_executable *e, bool on);
/* Prints the gathered per-thunk times, slowest first (cpu_exec_profile_print). */
void runtime_executable_profile_print(const hlo_executable *e, FILE *out, uint32_t max_rows);
/* The module `e` runs (lent): the optimised private copy when a pass
 * pipeline ran (fusions as `hlo.fusion` ops), else the caller's module;
 * for a dynamic-shaped entry, the most recent specialization (NULL before
 * the first run). */
const hlo_module_ir *runtime_executable_module_ir(const hlo_executable *e);
/* The report of the pass pipeline `e` ran (per pass: time, ops before and
 * after; n == 0 when none ran), lent. */
struct pass_report;
const struct pass_report *runtime_executable_pass_report(const hlo_executable *e);
/* What the compilation cache did in the last compile of `e` (for a
 * dynamic entry: of the last specialisation made): "hit", "miss" or "off"
 * (not used: the interpreter, check, dump, no_cache); *out_ms (may be NULL)
 * gets the cache's own time in it (key, lookup or load, store). Static. */
const char *runtime_executable_cache_result(const hlo_executable *e, double *out_ms);
#endif
