/* float.h — every floating-point element type of the spec, to and from
 * double, rounding to nearest even.
 *
 * Formats (exponent bits, mantissa bits, bias, special values) follow the
 * spec's "Types" section and the definitions it cites: IEEE 754 (f16, f32,
 * f64), bfloat16, the OCP 8-bit float spec and LLVM APFloat's f8E4M3FN /
 * f8E5M2 / *FNUZ / f8E4M3B11FNUZ / f8E3M4 / f8E4M3, and the OCP Microscaling
 * spec (f4E2M1FN, f6E2M3FN, f6E3M2FN, f8E8M0FNU). */
#ifndef HLO_SUPPORT_FLOAT_H
#define HLO_SUPPORT_FLOAT_H
#include <stdint.h>
#include "hlo/hlo.h"

typedef enum float_specials {
  FLOAT_IEEE,        /* inf and NaN at the all-ones exponent */
  FLOAT_FN,          /* no inf; NaN is all-ones exponent and mantissa */
  FLOAT_FNUZ,        /* no inf, no -0; NaN is the sign bit alone (0x80) */
  FLOAT_FINITE,      /* no inf, no NaN (f4/f6 MX types) */
  FLOAT_E8M0,        /* exponent only, unsigned, NaN 0xFF, no zero */
} float_specials;

typedef struct float_format {
  int exp_bits, mant_bits, bias, bits;
  float_specials specials;
} float_format;

/* The format of float type `t`; returns 0 when `t` is not a float type. */
int float_format_of(hlo_dtype t, float_format *out);
/* Converts the bit pattern `bits` (low bits) of float type `from` to float
 * type `to`, bit for bit as ml_dtypes converts (the reference for the
 * types the spec leaves open; XLA agrees except where README says):
 * rounding to nearest even (f8E8M0FNU: ties up, 3.0 -> 4.0, as its only
 * kept bit is the implicit one); f64 goes through f32 (two roundings) on
 * its way to bf16 and the 8/6/4-bit types, once to f16 and f32; overflow
 * and inf give inf (IEEE formats), the NaN (FN, FNUZ, E8M0: -1000 ->
 * f8E4M3FN 0xFF) or the largest finite value with the sign (f4/f6); NaN
 * gives the target's canonical NaN with the input's sign (f4/f6 have no
 * NaN: ml_dtypes gives -0 for +NaN, +0 for -NaN), except between f16, f32
 * and f64 (and bf16 -> f32/f64), where the leading payload bits and the sign
 * are kept and the NaN is quieted, as the CPU and XLA do (0xFF800001 ->
 * f16 0xFE00). Zero keeps its sign (FNUZ: +0; E8M0 has no zero: NaN), and so
 * does a result rounded to zero; negative values give NaN in f8E8M0FNU.
 * Returns 0 when either type is not a float type. */
uint64_t float_convert(hlo_dtype from, hlo_dtype to, uint64_t bits);
/* The value of the bit pattern `bits` (low bits) of float type `t`
 * (exact; NaNs keep their sign, as float_convert to f64). */
double float_decode(hlo_dtype t, uint64_t bits);
/* The bit pattern of `x` rounded once to nearest even in float type `t`
 * (the result of an op of type `t` computed in double): float_convert's
 * rules for an f64 source, without the rounding through f32. */
uint64_t float_encode(hlo_dtype t, double x);
/* x rounded to float type `t` and back (the value an op of type `t` yields). */
double float_round(hlo_dtype t, double x);
/* Half-precision helpers, for speed where they matter: exact widening, and
 * narrowing rounded to nearest even as float_convert (f32_to_bf16 gives
 * the canonical NaN with the input's sign; f32_to_f16 is
 * float_encode(HLO_F16, .)). */
float bf16_to_f32(uint16_t b);
uint16_t f32_to_bf16(float f);
float f16_to_f32(uint16_t h);
uint16_t f32_to_f16(float f);
#endif
