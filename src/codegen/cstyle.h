/* cstyle.h — the one C-style printer of kernels (codegen/kernel.h), for
 * every target whose language is C-like: plain C for CPUs
 * (backend/cpu/emit_c.c) now, CUDA C later. A target is a DIALECT: a few
 * strings (preamble of helpers, kernel prefix, the restrict keyword, how a
 * tile index is obtained) and op -> text tables; the printer walks the
 * kernel and never decides anything the kernel does not say (tinygrad's
 * renderer/cstyle.py has the same shape).
 *
 * Op templates: a C expression with placeholders $0 $1 $2 (the operands'
 * names), $T (the result's computation type), $U / $S (the unsigned /
 * signed integer type of the result's width), $B (its bit width) and $f
 * (the libm suffix: "f" for float computations, "" for double). A NULL
 * template means "not in this dialect" (an HLO_UNIMPLEMENTED error naming
 * the op). compare and convert are printed by the printer itself (they
 * depend on two types).
 *
 * The generated function, whatever the dialect:
 *   PREFIX NAME(void *const *bufs, int64_t tile_begin, int64_t tile_end)
 * (or the dialect's `params`) bufs = the kernel's inputs then its outputs
 * (host or device pointers in their storage layout); tiles [tile_begin,
 * tile_end) of the tile index space (kernel_num_tiles) are computed by this
 * call (by all the threads of the launch together, on a GPU: see the
 * dialect's tile_open). */
#ifndef HLO_CODEGEN_CSTYLE_H
#define HLO_CODEGEN_CSTYLE_H
#include "codegen/kernel.h"
#include "support/strbuf.h"

typedef struct cstyle_dialect {
  const char *name;          /* "c", "cuda" */
  const char *preamble;      /* includes and static inline helpers, printed once per source:
                                hlo_bf16_to_f32, hlo_f32_to_bf16, hlo_f16_to_f32, hlo_f32_to_f16,
                                hlo_round_bf16, hlo_round_f16 (float rounded to the type, as a
                                float), hlo_round_f16_from_f64 (a double rounded ONCE to f16),
                                hlo_maxf/hlo_max, hlo_minf/hlo_min, hlo_signf/hlo_sign */
  const char *kernel_prefix; /* "void", `extern "C" __global__ void` */
  const char *restrict_kw;   /* "restrict", "__restrict__" */
  const char *tile_open;     /* opens the scope where `t` (int64_t) is this tile's index */
  const char *tile_close;
  const char *inf, *nan;     /* templates of +inf and a quiet NaN in $T (use $f) */
  const char *float_ops[OP_COUNT]; /* float and double computations */
  const char *int_ops[OP_COUNT];   /* signed and unsigned integers */
  const char *uint_ops[OP_COUNT];  /* unsigned overrides of int_ops (NULL: int_ops') */
  const char *bool_ops[OP_COUNT];  /* i1 */
  /* bf16 ops whose operands are bf16 too, computing the bf16 result (as a
   * float holding a bf16 value) in one step: the correctly rounded result,
   * which for add, subtract and multiply is round_bf16(f32 op), since the
   * f32 op of two bf16 values is exact or rounds far from a bf16 tie
   * (emit_cuda.c: packed bf16x2 instructions). NULL entries: the float
   * op's template inside hlo_round_bf16(...). */
  const char *bf16_ops[OP_COUNT];
  /* Exact divides by a row-invariant f32 divisor (cstyle.c, "Divides by
   * a row value"): rcp_decl declares $0, the reciprocal of divisor $1,
   * once per row; rcp_div computes a / b from it ($0 = a, $1 = b, $2 =
   * the reciprocal), the IEEE quotient whenever the preamble's
   * hlo_rcp_ok(b) holds (else the divide is printed). NULL: every divide
   * is printed as the op table's. */
  const char *rcp_decl;
  const char *rcp_div;
  /* The kernel's parameters and the expression of its buffer pointer
   * array: NULL for the C form below (`void *const *bufs, int64_t
   * tile_begin, int64_t tile_end` and `bufs`). */
  const char *params;
  const char *bufs;
  /* Kernels whose schedule has threads per row (kernel.h, row_threads; NULL:
   * the dialect has none, an HLO_INTERNAL error): block_tile_open opens the
   * scope where `t` is the tile (row) of the calling block (closed by
   * tile_close); thread_index is the thread's index in the block (as an
   * int64_t expression), barrier the block-wide barrier statement,
   * shared_kw the qualifier of a block-shared array, dyn_shared_decl the
   * declaration of the block's dynamic shared memory `hlo_smem` (bytes:
   * cstyle_shared_bytes; the temporaries live there), shfl_xor a function
   * (v, lane_mask) -> v of the lane `lane ^ lane_mask` of the warp (of 32
   * lanes), overloaded for every computation type. */
  const char *block_tile_open;
  const char *thread_index;
  const char *barrier;
  const char *shared_kw;
  const char *dyn_shared_decl;
  const char *shfl_xor;
} cstyle_dialect;

/* Fills d's float_ops, int_ops, uint_ops and bool_ops with the templates
 * every C-like language shares (C and CUDA C: the same operators, libm's
 * names, the hlo_* helpers every preamble defines — hlo_max$f, hlo_min$f,
 * hlo_sign$f, hlo_exp$f, hlo_tanh$f — and the integer edge cases the
 * interpreter gives: wrapping arithmetic, x / 0 = -1, INT_MIN / -1 =
 * INT_MIN, x % 0 = x, shifts by at least the width). Leaves
 * float_ops[OP_IS_FINITE] unset: the dialect says how it tests it. */
void cstyle_fill_c_ops(cstyle_dialect *d);

/* Appends to `out` the definition of kernel `k` in dialect `d` (without
 * the preamble). Errors: HLO_UNIMPLEMENTED (located at the kernel's loc)
 * for an op or type the dialect has no text for; HLO_INTERNAL for a bad
 * schedule (kernel_check_schedule). */
HLO_MUST_USE hlo_status cstyle_emit_kernel(const cstyle_dialect *d, const kernel *k, strbuf *out);

/* The dynamic shared memory a block running kernel `k` needs (bytes): its
 * temporaries, each a row of its computation type at a 16-byte aligned
 * offset, when the schedule has threads per row; else 0. */
uint64_t cstyle_shared_bytes(const kernel *k);

/* The C type names the printer uses: the computation type of `dt`
 * ("float" for bf16/f16) and its storage type ("uint16_t" for bf16/f16,
 * "uint8_t" for i1). NULL for types kernels do not support. */
const char *cstyle_compute_type(hlo_dtype dt);
const char *cstyle_storage_type(hlo_dtype dt);
/* Prints, at a kernel's top, the starts of dynamic-update output oi
 * (kernel.h, Dynamic-update outputs): `int64_t o<oi>s<j>` = the 0-d input
 * dus_start[j] - 1 clamped to [0, buf.dims[j] - dims[j]], read once per
 * call (nothing for an ordinary output). The names are the stores'. */
void cstyle_print_dus_starts(strbuf *o, const kernel *k, uint32_t oi);

/* Prints instruction i of `list` (k's body or combiner) as `const T
 * PFXi = EXPR;` after `indent`, its operands named PFX<arg>; a KI_LOAD
 * reads in<N>[...] and an index is printed over the index variables
 * x0..x<rank-1>, which the caller declares; KI_TEMP reads tmp<N>[row
 * position]; param0/param1 name a combiner's parameters. For a dialect's
 * own loop structure (backend/cuda/emit_cuda.c). Errors: as
 * cstyle_emit_kernel's HLO_UNIMPLEMENTED. */
HLO_MUST_USE hlo_status cstyle_print_inst(const cstyle_dialect *d, const kernel *k, strbuf *o,
                                          const kinst *list, uint32_t i, const char *pfx,
                                          const char *param0, const char *param1,
                                          const char *indent);
/* Prints the constant of type dt (i for bool and integers, f for floats)
 * as the printer does (NaN and infinities through the dialect's inf/nan). */
void cstyle_print_const(const cstyle_dialect *d, strbuf *o, hlo_dtype dt, int64_t i, double f);

#endif /* HLO_CODEGEN_CSTYLE_H */
