/* aot_internal.h — what the files of src/aot share: the capturing backend
 * table (aot_backend.c) that the CPU executable is compiled on for
 * --emit=lib and the module it makes; the emitter's state (emit_lib.c: the
 * plan, the programs, the files); the step printers (emit_steps.c); the C
 * text of the library's helpers (lib_text.c). */
#ifndef HLO_AOT_AOT_INTERNAL_H
#define HLO_AOT_AOT_INTERNAL_H
#include <stdbool.h>
#include <stdint.h>
#include "backend/backend.h"
#include "runtime/executable_cpu_internal.h"
#include "support/strbuf.h"

/* The backend_module of aot_backend(): every kernel's C source (the CPU
 * backend's C dialect with `static` kernels, no preamble), in order, and
 * each kernel's name and tile count (the launch covers tiles [0, tiles)). */
struct backend_module {
  char *source;          /* the kernels' definitions (owned) */
  uint32_t n;
  char **names;          /* n names (owned) */
  int64_t *tiles;        /* n tile counts */
  int64_t *points;       /* n: the size of each kernel's index space (its work) */
};

/* A backend table for cpu_exec_create that compiles nothing: `compile`
 * prints the kernels' C into a backend_module (above); `gemm`,
 * gemm_epilogue and launch_tiles are present (so matmuls become gemm
 * steps, merged with the kernel reading their rows and chained as the CPU
 * backend does: executable_cpu_epilogue.c) but must never be called; sort, conv and window take the
 * forms emit_lib.c prints (aot_backend.c: aot_sort_takes, aot_conv_takes,
 * aot_window_takes), the others stay interpreter steps, which --emit=lib
 * reports. Static; lent. */
const backend *aot_backend(void);

/* Which library runs the matrix products (aot.h, aot_options.blas). */
typedef enum aot_blas {
  AOT_BLAS_CBLAS,     /* any CBLAS: cblas_sgemm / cblas_dgemm, linked as -lblas */
  AOT_BLAS_OPENBLAS,  /* the same calls, OpenBLAS linked by path (not the alternative) */
  AOT_BLAS_DNNL,      /* the CPU backend's choice: oneDNN for f32 and bf16, CBLAS for
                         f64 and tiny f32 products (-ldnnl -lblas) */
  AOT_BLAS_NONE,      /* the library's own loops: no dependency */
} aot_blas;

/* The state of one --emit=lib (emit_lib.c). Offsets are bytes into the
 * library's scratch buffer `s`. */
typedef struct emitter {
  const cpu_exec *x;           /* the compiled executable (on aot_backend) */
  const char *name;            /* NAME: the prefix of every symbol */
  aot_blas blas;
  const hlo_value **byid;      /* every value of the function by id */
  int64_t *base;               /* by program: its arena's offset */
  uint32_t *parent_prog, *parent_step; /* by program: the control step owning it */
  int64_t *slot;               /* by value id: its own slot's offset (-1: none) */
  int64_t *stage;              /* by value id of a body's block arg: staging slot (-1) */
  int64_t *sort_tmp;           /* by value id of a sort's first result: its index arrays */
  int64_t *gemm_ws;            /* by value id of a gemm's C (a chain's C2): the f32
                                  workspace of a bf16 product on oneDNN (-1: none) */
  int64_t scratch;             /* bytes in all */
  strbuf *c;                   /* where steps print their calls (a program's body) */
  strbuf *fns;                 /* functions the steps define (sorts), printed before
                                  the programs */
  uint32_t nsorts;
  uint32_t nchains;            /* chain functions printed so far */
  bool lapack;                 /* calls LAPACK (custom calls lapack_*_ffi): -llapack */
  int64_t *cfile;              /* by value id: a constant's offset in NAME.bin (-1: in
                                  NAME.c) */
  int64_t cfile_bytes;         /* NAME.bin's size (0: no file) */
  const hlo_value **same_as;   /* by value id: a loop buffer that is this value's bytes
                                  (passed through, never written), or NULL */
  int32_t *res_of;             /* by value id: the entry's result i computed in the
                                  caller's results[i] (-1: in the scratch) */
  bool constants_file;         /* large constants to NAME.bin (aot_options) */
  const char *march;           /* the -march the library is built for (the header says) */
} emitter;

/* The C expression (a `void *`) of value v's buffer during a run: an
 * argument, a constant's array, an arena offset, a slot of its own, a loop
 * buffer, an alias's operand's (emit_lib.c), printed into buf[0..n).
 * Errors: HLO_INTERNAL for a value without a buffer. */
HLO_MUST_USE hlo_status aot_ptr(const emitter *E, const hlo_value *v, char *buf, size_t n);
/* aot_ptr into char array `buf`, returning its error from the caller. */
#define AOT_PTR(v, buf) HLO_TRY(aot_ptr(E, (v), (buf), sizeof(buf)))
/* HLO_UNIMPLEMENTED at step q's op: "--emit=lib: OP WHY and cannot be
 * embedded yet". */
HLO_MUST_USE hlo_status aot_unsupported(const step *q, const char *why);
/* "{d0, d1, ...}" ("{0}" when n is 0: C has no empty initializer). */
void aot_print_dims(strbuf *c, const int64_t *d, uint32_t n);
/* The C type of an integer element type that indexes (i8 .. i64, ui8 ..
 * ui32), or NULL. */
const char *aot_int_ctype(hlo_dtype t);

/* emit_steps.c: prints the call of data step q (every kind but while and
 * case) into E->c, and any function it needs into E->fns. Errors:
 * HLO_UNIMPLEMENTED (aot_unsupported) for an interpreter step other than
 * reverse or a form the library lacks; aot_ptr's. */
HLO_MUST_USE hlo_status aot_emit_data_step(emitter *E, const step *q);
/* Prints a fill of splat constant `op` (of type t) into the buffer `dst`
 * (a C expression). Errors: HLO_INTERNAL for an op without a splat. */
HLO_MUST_USE hlo_status aot_emit_fill_to(emitter *E, const hlo_op *op, const hlo_type *t,
                                         const char *dst);

/* Whether a gemm of these types needs an f32 workspace of batch x m x n
 * (a bf16 result on oneDNN). */
bool aot_gemm_needs_ws(aot_blas blas, const backend_gemm *g);

/* lib_text.c: the kernels' preamble `pre` (the CPU backend's C dialect)
 * with its _Float16 helpers kept where the compiler has the type and
 * portable ones elsewhere; the library's helpers, their names prefixed
 * with `name` (gemms on the library `blas`). */
void aot_put_preamble(strbuf *c, const char *pre);
void aot_put_helpers(strbuf *c, const char *name, aot_blas blas);
/* The LAPACK helpers (potrf, getrf on the Fortran routines; trsm). */
void aot_put_lapack(strbuf *c, const char *name);
/* emit_steps.c: the workspace bytes of a LAPACK custom call the library
 * runs (step q, STEP_INTERP), or -1 when q is none. */
int64_t aot_lapack_ws(const step *q);

#endif /* HLO_AOT_AOT_INTERNAL_H */
