/* dot_algorithm.h — dot_general's `algorithm` attribute
 * (#stablehlo.dot_algorithm<...>): decoding it, matching it against the
 * algorithms hlo runs, and the numerics of each (operand rounding, the bf16
 * and tf32 splits of the multi-pass algorithms, the order of the primitive
 * dots). Shared by the verifier (which refuses what is not listed here) and
 * the interpreter (which computes it).
 *
 * The supported list is StableHLO's known-algorithm table
 * (getKnownDotAlgorithm in stablehlo/dialect/Base.cpp), which is also what
 * XLA converts to its PrecisionConfig::Algorithm and what every
 * jax.lax.DotAlgorithmPreset lowers to (JAX 0.10.2, cpu and cuda):
 *   lhs, rhs precision   accumulation  primitive ops   preset
 *   f16, f16             f16           1               F16_F16_F16
 *   f16, f16             f32           1               F16_F16_F32
 *   bf16, bf16           bf16          1               BF16_BF16_BF16
 *   bf16, bf16           f32           1, 3, 6, 9      BF16_BF16_F32[_X3/_X6/_X9]
 *   tf32, tf32           f32           1, 3            TF32_TF32_F32[_X3]
 *   f32, f32             f32           1               F32_F32_F32
 *   f64, f64             f64           1               F64_F64_F64
 *   any f8, any f8       f32           1               ANY_F8_ANY_F8_F32[_FAST_ACCUM]
 * always with lhs/rhs_component_count = 1 (the multi-pass algorithms are
 * told apart by num_primitive_operations, as StableHLO and XLA do), and
 * allow_imprecise_accumulation = true only for the f8 one. */
#ifndef HLO_IR_DOT_ALGORITHM_H
#define HLO_IR_DOT_ALGORITHM_H
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include "ir/ir.h"

/* The decoded fields of a dot algorithm attribute. A precision type is an
 * hlo_dtype, or TF32 (f32 with a 10-bit mantissa), which is not an element
 * type. */
typedef struct hlo_dot_algorithm {
  hlo_dtype lhs_type, rhs_type, acc_type; /* HLO_F32 with *_tf32 set for tf32 */
  bool lhs_tf32, rhs_tf32, acc_tf32;
  int64_t lhs_components, rhs_components, primitive_ops;
  bool allow_imprecise;
  /* Set by hlo_dot_algorithm_match: the XLA/JAX preset name
   * ("BF16_BF16_F32_X3"), and the number of parts each operand is split
   * into (1; 2 for the X3 presets; 3 for BF16 X6 and X9). */
  const char *preset;
  int splits;
} hlo_dot_algorithm;

/* Decodes `alg` (an ATTR_STRUCT "stablehlo.dot_algorithm"; NULL or a struct
 * with no fields: *out_present = false, the spec's empty algorithm) into
 * *out. On a malformed attribute returns false and writes a message
 * ("lhs_precision_type must be a float type, got 'i8'") to err[0..errn).
 * Precision types are read from their spelling (ATTR_OPAQUE "bf16", "tf32",
 * "f8E4M3FN", or ATTR_TYPE of a scalar). */
bool hlo_dot_algorithm_decode(const hlo_attr *alg, hlo_dot_algorithm *out, bool *out_present,
                              char *err, size_t errn);

/* Whether hlo runs `a` (the table above); sets a->preset and a->splits. */
bool hlo_dot_algorithm_match(hlo_dot_algorithm *a);

/* The algorithm's fields as text ("lhs_precision_type = bf16, ...,
 * allow_imprecise_accumulation = false") into buf[0..n). */
void hlo_dot_algorithm_format(const hlo_dot_algorithm *a, char *buf, size_t n);

/* The supported list, one line of text (static storage), for messages. */
const char *hlo_dot_algorithm_supported(void);

/* `x` rounded to nearest even to the lhs (side 0) or rhs (side 1) precision
 * type of `a`. tf32 keeps f32's exponent range with 10 stored mantissa bits
 * (subnormals: multiples of 2^-136). */
double hlo_dot_algorithm_round(const hlo_dot_algorithm *a, int side, double x);

/* Splits `x` into a->splits parts in the side's precision type, as XLA's
 * Triton emitter does (triton BF16x3/x6/x9 and TF32x3): part0 = round(x),
 * then each next part = round(r) with r the f32 remainder r = f32(r - part).
 * One split: part0 = round(x). */
void hlo_dot_algorithm_split(const hlo_dot_algorithm *a, int side, double x, double *parts);

/* The primitive dots of `a`, in the order their products are accumulated
 * into one f32 accumulator: pairs[2i] is the lhs part, pairs[2i+1] the rhs
 * part (0 = high). Before the last pair (high x high) a NaN accumulator is
 * replaced by 0 (for multi-pass algorithms: the correction terms of an
 * infinite input are inf - inf = NaN, which the high product then
 * overrides, as XLA does). Returns the pair count (1, 3, 6 or 9). */
int hlo_dot_algorithm_pairs(const hlo_dot_algorithm *a, const int **out_pairs);
#endif
