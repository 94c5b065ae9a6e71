/* dot_decomposer.h — the strided matrix-product form of a dot_general:
 * the rule by which dot-decomposer (dot_decomposer.c) leaves a dot alone
 * and by which the CPU executable (gemm_form, runtime/executable_cpu.c)
 * describes it to the backend's GEMM, shared so that the two agree. */
#ifndef HLO_PASSES_DOT_DECOMPOSER_H
#define HLO_PASSES_DOT_DECOMPOSER_H
#include <stdbool.h>
#include <stdint.h>
#include "ir/ir.h"
#include "support/arena.h"

/* A dot_general as `batch` row-major products C[i] = op(A[i]) op(B[i]),
 * op(A) m x k, op(B) k x n, read in place from the operands' dense
 * row-major buffers: A[i] starts at element i * batch_stride_a of the lhs,
 * element (r, c) of the stored matrix (k x m when trans_a, else m x k) at
 * r * lda + c; B likewise with ldb and batch_stride_b. C is the result's
 * own dense buffer, [batch][m][n] (a dot_general's result dims are batch,
 * lhs free, rhs free). Strides are in elements. */
typedef struct dot_strided_form {
  int64_t batch, m, n, k;
  bool trans_a, trans_b;
  int64_t lda, ldb;
  int64_t batch_stride_a, batch_stride_b;
} dot_strided_form;

/* Whether the `algorithm` attribute of dot `op` (absent: true) asks for
 * what a plain library gemm computes on its operand types: one pass
 * (num_primitive_operations 1, one component per operand), each operand in
 * its own element type (bf16, f32 or f64; no tf32), summed in f32 for bf16
 * and f32 operands and in f64 for f64 — the presets BF16_BF16_F32,
 * F32_F32_F32 and F64_F64_F64 of src/ir/dot_algorithm.h, which JAX's
 * dot_product_attention and `precision=` presets print. Any other (a
 * multi-pass split, tf32, a bf16 or f16 accumulator, f8) is false: the
 * interpreter computes those. */
bool dot_algorithm_is_plain(const hlo_op *op);

/* Whether `op`, a stablehlo.dot_general with static non-empty f32, f64 or
 * bf16 operands and result of one type (or bf16 operands, f32 result), no
 * `algorithm` other than a plain one (dot_algorithm_is_plain) and at least
 * one contracting dim, is one strided matrix
 * product as above; fills *out. The rule (dot_decomposer.c's header):
 * on each operand the batch dims (in listed order), the contracting dims
 * (in listed order) and the free dims (in order) each form a chain — their
 * dims of size > 1, in that order, are nested in memory with no gap
 * (stride of each = size x stride of the next), so the group flattens to
 * one index with one stride — and each operand's matrix (free x
 * contracting) has a unit stride on one side. Pure; no allocation kept. */
bool dot_strided_form_of(const hlo_op *op, dot_strided_form *out);

/* A dot_general's dimension numbers (dot_dimension_numbers): batch dims of
 * each operand (nb each, paired in order) and contracting dims (nc each). */
#define DOT_DIMS_MAX_RANK 16
typedef struct dot_dims {
  int64_t lb[DOT_DIMS_MAX_RANK], rb[DOT_DIMS_MAX_RANK], lc[DOT_DIMS_MAX_RANK],
      rc[DOT_DIMS_MAX_RANK];
  uint32_t nb, nc;
} dot_dims;

/* Reads op's dot_dimension_numbers into *d (the integer lists copied out
 * of `a`'s scratch). False when the attribute is missing or malformed, a
 * list is longer than DOT_DIMS_MAX_RANK, or the two operands' batch or
 * contracting lists differ in length. */
bool dot_dims_read(arena *a, const hlo_op *op, dot_dims *d);

/* The free dims of an operand of rank r (neither in its batch list b[nb]
 * nor its contracting list c[nc]), in order, into out; returns their count. */
uint32_t dot_free_dims(uint32_t r, const int64_t *b, uint32_t nb, const int64_t *c, uint32_t nc,
                       int64_t *out);

#endif
