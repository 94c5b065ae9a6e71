/* executable_cpu.h — the CPU backend's executable (v0): a function's
 * top-level ops turned into a flat list of THUNKS run in order on host
 * buffers (one allocation per SSA value, an interpreter tensor, released
 * after its last use):
 *   - kernel thunks: each `hlo.fusion` op (when the IR has it), else each
 *     op codegen/lower_fusion.c can lower (elementwise, broadcast_in_dim,
 *     reshape, transpose, slice, concatenate, iota, convert, select,
 *     compare, a reduce over trailing dims), one kernel each, all compiled
 *     by ONE backend compile (one cc run for the CPU backend);
 *   - BLAS thunks: dot_general / dot of f32 or f64 in a plain or batched
 *     matmul form (leading batch dims, one contracting dim) through the
 *     backend's gemm slot; an `algorithm` attribute goes to the interpreter;
 *   - interpreter thunks: every other op, run by the interpreter's kernel
 *     (interp_run_op), with the values its regions capture.
 * Top-level constants are made once, at compile time.
 * The runtime reaches the backend through backend.h only: the CPU's by
 * default, any other table through cpu_exec_options.backend. On a backend
 * with device_memory (CUDA; the testing backend cpu-devmem) every buffer
 * also lives on the device: kernels and library calls run on device
 * pointers, every other step (interpreter thunks, data movement, fills,
 * while/case predicates) on a host mirror, with per-memory validity so
 * that only stale bytes move (executable_cpu_device.c has the design). The
 * CPU path (device_memory false) makes no copy and does no extra work. */
#ifndef HLO_RUNTIME_EXECUTABLE_CPU_H
#define HLO_RUNTIME_EXECUTABLE_CPU_H
#include <stdio.h>
#include "backend/backend.h"
#include "interp/interp.h"
#include "runtime/runtime.h"

typedef struct cpu_exec cpu_exec;

/* How cpu_exec_create compiles. */
typedef struct cpu_exec_options {
  const char *dump_dir;   /* where the generated C goes (NULL: nowhere) */
  bool check;             /* compiled for --check (cpu_exec_check turned on,
                             and every kernel kept a step of its own: no GEMM
                             output fusion, so each is compared) */
  const char *cache_root; /* the kernel cache's root (backend_compile_options) */
  const backend_object *objects; /* kernels from a compilation cache entry */
  uint32_t num_objects;
  /* The backend (NULL: backend_cpu()). One with device_memory runs its
   * kernels and library calls on device buffers and every other step on a
   * host mirror (executable_cpu_device.c: the design); it may lack
   * gemm_epilogue / launch_tiles (then no GEMM output fusion) and the
   * conv / window / sort slots (then the interpreter runs those ops). */
  const backend *backend;
} cpu_exec_options;

/* Compiles function `f` (static shapes; values numbered) of the module `it`
 * interprets, with options `o` (NULL: none). `it` and the module are
 * borrowed and must outlive *out (yours: cpu_exec_destroy).
 * Errors: HLO_UNAVAILABLE when kernels need a C compiler and none starts
 * ("no C compiler: ..."), HLO_INTERNAL when the compiler rejects the code,
 * a constant's interpreter error, HLO_RESOURCE_EXHAUSTED. */
HLO_MUST_USE hlo_status cpu_exec_create(interp *it, const hlo_func *f, const cpu_exec_options *o,
                                        cpu_exec **out);
/* The compiled objects of x's kernels (the backend's module_objects; lent,
 * valid while x lives): what a compilation cache entry stores. */
uint32_t cpu_exec_objects(const cpu_exec *x, const backend_object **out);
/* Runs on args[0..n) (borrowed, already checked against f's parameter
 * types); *out is a malloc'd array of f->num_results new references (yours).
 * Not reentrant: callers serialise runs of one cpu_exec. Errors: any
 * thunk's (located at its op), HLO_RESOURCE_EXHAUSTED. */
HLO_MUST_USE hlo_status cpu_exec_run(cpu_exec *x, tensor *const *args, uint32_t n,
                                     tensor ***out);
/* What the compile made (lent). */
const runtime_cpu_stats *cpu_exec_stats(const cpu_exec *x);
/* Turns per-thunk timing on or off (and clears what was gathered). */
void cpu_exec_profile(cpu_exec *x, bool on);
/* Prints the gathered per-thunk times to `out`, slowest first, at most
 * `max_rows` rows: step index, kind (kernel, gemm, interp), ms per run,
 * share of the total, the op and its line in the program. */
void cpu_exec_profile_print(const cpu_exec *x, FILE *out, uint32_t max_rows);
/* Turns --check on or off (a GEMM merged with its epilogue kernel is then
 * checked on its product only: compile with `check` to compare both): each run then runs every compiled step (kernel,
 * library call) also on the interpreter, on the same inputs, and fails at
 * the first whose results differ beyond the element type's tolerance
 * (f64 1e-10, f32 1e-4, bf16/f16 2e-2 relative, or relative to 1e-2 of the
 * tensor's largest magnitude near zero; integers exact), with
 * HLO_FAILED_CHECK at its op naming the step, its kernel and fused ops. */
void cpu_exec_check(cpu_exec *x, bool on);
/* Frees (NULL is fine). */
void cpu_exec_destroy(cpu_exec *x);

#endif
