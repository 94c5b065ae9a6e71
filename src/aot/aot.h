/* aot.h — ahead-of-time compilation (issue 11): a compiled model shipped
 * as one generated C library that needs nothing but libc, libm, pthreads,
 * the matrix products' library (a CBLAS, OpenBLAS or oneDNN; none with
 * blas "none") and, for LAPACK custom calls, the system LAPACK. `hlo
 * compile FILE --emit=lib -o DIR` is its front end
 * (tools/builtin/compile.c).
 *
 * The CPU backend compiles the module as for a run, on a capturing backend
 * table of this folder (aot_backend.c: no C compiler runs; gemm output
 * fusion and chains as the CPU backend makes them; sort / conv / window
 * taken in the forms printed here); the compiled executable (programs of
 * steps over arena slots, src/runtime/executable_cpu_internal.h) is then
 * printed as C: every kernel's source (src/backend/cpu/emit_c.c's dialect,
 * its functions `static`), the constants, the buffer plan as offsets into
 * one caller-provided scratch buffer, one function per program (while as a
 * C loop, case / if as a switch), gemm steps split in row blocks over a
 * team of pthreads as the CPU backend splits them (the epilogue kernel run
 * on each block right after it, a chained product after that), data
 * movement, sorts (the interpreter's merge sort), convolutions and window
 * ops (the interpreter's folds), reverse, general gathers and the LAPACK
 * custom calls jaxlib emits (potrf, getrf on the Fortran routines; trsm as
 * the interpreter) on helpers printed into the file. Other steps that run
 * on the interpreter (other custom calls, rng, fft, ...) cannot be printed
 * yet: the emit fails naming the op and its location.
 *
 * Layering: above runtime (it includes runtime's internal headers, and
 * interp_lapack.h for the custom calls' options), below tools. */
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
  bool no_blas;         /* gemms on the library's own loops: no dependency at all
                           (the same as blas "none") */
  const char *blas;     /* the matrix products' library: "cblas" (any CBLAS, -lblas:
                           Debian's libblas.so.3 alternative decides which), "openblas"
                           (OpenBLAS linked by path), "dnnl" (the CPU backend's choice:
                           oneDNN for f32 and bf16, CBLAS for f64 and tiny f32;
                           -ldnnl -lblas), "none" (own loops); NULL: "none" with
                           no_blas, else $HLO_AOT_BLAS, else "cblas". NAME.h's
                           NAME_LINK_FLAGS says what to link with */
  bool no_build;        /* write NAME.h and NAME.c only (no compiler run) */
  bool constants_file;  /* constants of AOT_CONSTANTS_FILE_MIN bytes or more go to
                           DIR/NAME.bin (NAME_load_constants / NAME_set_constants
                           before the first run) instead of into NAME.c; false:
                           $HLO_AOT_CONSTANTS=file turns it on */
  const char *march;    /* the CPU NAME.c is built for (-march=...); NULL: $HLO_AOT_MARCH,
                           else "native" (this machine's CPU, as hlo's own kernels are
                           built: vector code of its width); "" or "none": no -march
                           (the compiler's default, portable) */
  const char *cc;       /* the C compiler; NULL: $HLO_CC, else "cc" (words split at
                           spaces, as the JIT's) */
} aot_options;

/* The smallest constant --constants=file writes to NAME.bin (bytes). */
#define AOT_CONSTANTS_FILE_MIN 1024

/* Compiles the module in file `path` ("-": standard input) for the CPU and
 * writes DIR/NAME.h, DIR/NAME.c (and DIR/NAME.bin with constants_file:
 * a 64-byte header, "HLOAOTC1", the file's size and the FNV-1a 64 hash of
 * the rest, then each large constant at a 64-byte aligned offset; the
 * folder `out_dir` is made), then, unless
 * o->no_build, builds DIR/libNAME.a and DIR/libNAME.so from NAME.c with the
 * C compiler (hlo's kernel flags: -O2 -std=c11 -fPIC -fno-math-errno
 * -fno-trapping-math -ffp-contract=off -march=MARCH, and gcc's -fvect-cost-model=dynamic; -shared for the .so, linked with -lm,
 * -lpthread and the BLAS's flags, NAME_LINK_FLAGS). `o` may be NULL (defaults). NAME.h documents the
 * library's API (NAME_scratch_bytes, NAME_run, NAME_strerror, the
 * signature as data).
 * Errors: the module's parse / verify / pass errors; HLO_UNIMPLEMENTED at
 * the op for a step that cannot be embedded yet ("--emit=lib: stablehlo.sort
 * at model.mlir:12:3 runs on the interpreter ..."), for dynamic shapes, and
 * for non-tensor arguments or results; HLO_INVALID_ARGUMENT for a bad name;
 * HLO_UNAVAILABLE when a file cannot be written or the compiler cannot
 * start; HLO_INTERNAL when the compiler fails (its messages in the status,
 * the full log in DIR/NAME.build.log); HLO_INVALID_ARGUMENT for an unknown
 * blas; HLO_RESOURCE_EXHAUSTED. */
HLO_MUST_USE hlo_status aot_emit_lib(const char *path, const char *out_dir, const aot_options *o);

#endif /* HLO_AOT_AOT_H */
