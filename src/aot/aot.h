/* aot.h — ahead-of-time compilation (issue 11): a compiled model shipped
 * as one generated C library that needs nothing but libc, libm (and a
 * CBLAS unless --no-blas). `hlo compile FILE --emit=lib -o DIR` is its
 * front end (tools/builtin/compile.c).
 *
 * The CPU backend compiles the module as for a run, on a capturing backend
 * table of this folder (aot_backend.c: no C compiler runs, no gemm output
 * fusion, sort / conv / window taken in the forms printed here); the
 * compiled executable (programs of steps over arena slots,
 * src/runtime/executable_cpu_internal.h) is then printed as C: every
 * kernel's source (src/backend/cpu/emit_c.c's dialect, its functions
 * `static`), the constants, the buffer plan as offsets into one
 * caller-provided scratch buffer, one function per program (while as a C
 * loop, case / if as a switch), gemm steps on CBLAS or on the library's own
 * loops, data movement, sorts (the interpreter's merge sort), convolutions
 * and window ops (the interpreter's folds) and reverse on helpers printed
 * into the file, the large kernels on a team of pthreads when the caller
 * asks for threads. Steps that run on the interpreter otherwise (custom
 * calls, rng, fft, ...) cannot be printed yet: the emit fails naming the op
 * and its location.
 *
 * Layering: above runtime (it includes runtime's internal headers), below
 * tools. */
#ifndef HLO_AOT_AOT_H
#define HLO_AOT_AOT_H
#include <stdbool.h>
#include "support/status.h"

/* How aot_emit_lib works. Zeroed: defaults. */
typedef struct aot_options {
  const char *name;     /* the library's name NAME (a C identifier: files NAME.h,
                           NAME.c, libNAME.a, libNAME.so; symbols NAME_*); NULL:
                           the file's base name up to its first '.', with every
                           other character than [A-Za-z0-9_] made '_' */
  const char *entry;    /* the entry function; NULL: @main (module_entry's rule) */
  bool no_blas;         /* gemms on the library's own loops: no dependency at all */
  bool no_build;        /* write NAME.h and NAME.c only (no compiler run) */
  const char *cc;       /* the C compiler; NULL: $HLO_CC, else "cc" (words split at
                           spaces, as the JIT's) */
} aot_options;

/* Compiles the module in file `path` ("-": standard input) for the CPU and
 * writes DIR/NAME.h, DIR/NAME.c (the folder `out_dir` is made), then, unless
 * o->no_build, builds DIR/libNAME.a and DIR/libNAME.so from NAME.c with the
 * C compiler (-O2 -std=c11 -fPIC; -shared for the .so, linked with -lm and,
 * unless no_blas, -lblas). `o` may be NULL (defaults). NAME.h documents the
 * library's API (NAME_scratch_bytes, NAME_run, NAME_strerror, the
 * signature as data).
 * Errors: the module's parse / verify / pass errors; HLO_UNIMPLEMENTED at
 * the op for a step that cannot be embedded yet ("--emit=lib: stablehlo.sort
 * at model.mlir:12:3 runs on the interpreter ..."), for dynamic shapes, and
 * for non-tensor arguments or results; HLO_INVALID_ARGUMENT for a bad name;
 * HLO_UNAVAILABLE when a file cannot be written or the compiler cannot
 * start; HLO_INTERNAL when the compiler fails (its messages in the status,
 * the full log in DIR/NAME.build.log); HLO_RESOURCE_EXHAUSTED. */
HLO_MUST_USE hlo_status aot_emit_lib(const char *path, const char *out_dir, const aot_options *o);

#endif /* HLO_AOT_AOT_H */
