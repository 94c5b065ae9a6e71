/* conv_describe.h — a `stablehlo.convolution` op decoded into one
 * backend-neutral description (backend_conv) that library backends read
 * instead of the op's attributes: the CPU backend's im2col + GEMM
 * (backend/cpu/conv.c) now, cuDNN later.
 *
 * The description holds every form the spec allows (spec, "convolution"):
 * dimension_numbers in any order and any number of spatial dims, window
 * strides, padding (negative too), lhs and rhs dilation, window reversal,
 * feature_group_count and batch_group_count, the three element types and
 * the precision config. Names follow the spec's attributes. Shapes are
 * static; quantized element types and dynamic_conv are not described (they
 * stay on the interpreter).
 *
 * Semantics (spec): for result index (ob, of, osp[..]) of batch group /
 * feature group g, sum over kernel input feature c and kernel spatial
 * index k[..] of lhs[batch, feature, pos[..]] * rhs[c, of, k[..]], where
 *   pos[s] = (osp[s] * window_strides[s] + kk[s] * rhs_dilation[s]
 *             - padding_low[s]) / lhs_dilation[s],
 *   kk[s] = window_reversal[s] ? ksize[s] - 1 - k[s] : k[s],
 * a term being zero unless that division is exact and pos[s] lies in
 * [0, lhs spatial size); with feature groups (G = feature_group_count)
 * feature = g * C_in/G + c, g = of / (C_out/G), batch = ob; with batch
 * groups (G = batch_group_count) batch = g * (B_in/G) + ob, g = of /
 * (C_out/G), feature = c. */
#ifndef HLO_BACKEND_CONV_DESCRIBE_H
#define HLO_BACKEND_CONV_DESCRIBE_H
#include <stdbool.h>
#include <stdint.h>
#include "ir/ir.h"

/* Most dims a described convolution has (rank: batch, feature and up to
 * BACKEND_CONV_MAX_RANK - 2 spatial dims). */
#define BACKEND_CONV_MAX_RANK 8
#define BACKEND_CONV_MAX_SPATIAL (BACKEND_CONV_MAX_RANK - 2)

/* precision_config entries (spec: DEFAULT, HIGH, HIGHEST). */
typedef enum backend_precision {
  BACKEND_PRECISION_DEFAULT, BACKEND_PRECISION_HIGH, BACKEND_PRECISION_HIGHEST
} backend_precision;

/* A convolution, decoded. Dimension numbers are dims of the row-major
 * operand / result (0 .. rank-1); per-spatial-dim lists are indexed by
 * spatial dim s (the order of input_spatial_dimensions, which pairs input
 * spatial dim s with kernel and output spatial dim s). */
typedef struct backend_conv {
  hlo_dtype lhs_dtype, rhs_dtype, result_dtype;
  uint32_t rank;                     /* of lhs, rhs and result alike (>= 2) */
  uint32_t num_spatial;              /* rank - 2 */
  int64_t lhs_dims[BACKEND_CONV_MAX_RANK];
  int64_t rhs_dims[BACKEND_CONV_MAX_RANK];
  int64_t result_dims[BACKEND_CONV_MAX_RANK];
  uint32_t input_batch_dimension, input_feature_dimension;
  uint32_t input_spatial_dimensions[BACKEND_CONV_MAX_SPATIAL];
  uint32_t kernel_input_feature_dimension, kernel_output_feature_dimension;
  uint32_t kernel_spatial_dimensions[BACKEND_CONV_MAX_SPATIAL];
  uint32_t output_batch_dimension, output_feature_dimension;
  uint32_t output_spatial_dimensions[BACKEND_CONV_MAX_SPATIAL];
  int64_t window_strides[BACKEND_CONV_MAX_SPATIAL];   /* >= 1 (default 1) */
  int64_t padding_low[BACKEND_CONV_MAX_SPATIAL];      /* may be negative (default 0) */
  int64_t padding_high[BACKEND_CONV_MAX_SPATIAL];
  int64_t lhs_dilation[BACKEND_CONV_MAX_SPATIAL];     /* >= 1 (default 1) */
  int64_t rhs_dilation[BACKEND_CONV_MAX_SPATIAL];     /* >= 1 (default 1) */
  bool window_reversal[BACKEND_CONV_MAX_SPATIAL];     /* default false */
  int64_t feature_group_count, batch_group_count;     /* >= 1, one of them 1 */
  backend_precision precision[2];                     /* lhs, rhs (default DEFAULT) */
  hlo_loc loc;                                        /* the op's, for errors */
} backend_conv;

/* Decodes `op`, a stablehlo.convolution with static, non-quantized tensor
 * operands and result of rank 2 .. BACKEND_CONV_MAX_RANK, into *out, and
 * checks it against the spec's constraints (dimension numbers a
 * permutation of each operand's dims, positive strides, dilations and group
 * counts, divisible batch / feature sizes, and the result shape of C25).
 * Returns false (and leaves *out unspecified) for anything else: another
 * op, dynamic_conv, dynamic or quantized shapes, an unknown precision, a
 * malformed or inconsistent attribute. A false answer is no error: the
 * interpreter keeps the op and reports what is wrong when it runs. */
bool conv_describe(const hlo_op *op, backend_conv *out);

/* The group count that splits the computation (feature_group_count or
 * batch_group_count, whichever is not 1; 1 when both are). */
int64_t conv_group_count(const backend_conv *c);

/* Element counts of the operands and result (products of their dims). */
int64_t conv_lhs_elements(const backend_conv *c);
int64_t conv_rhs_elements(const backend_conv *c);
int64_t conv_result_elements(const backend_conv *c);

/* Multiply-adds the convolution does as XLA counts them (result elements
 * x kernel input features x kernel window size), for rates (FLOPs = 2x). */
double conv_macs(const backend_conv *c);

/* Whether all three element types are `t` (backends' "can take" tests
 * start here). */
bool conv_all_dtype(const backend_conv *c, hlo_dtype t);

#endif /* HLO_BACKEND_CONV_DESCRIBE_H */
