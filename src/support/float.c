/* float.c — conversions between the float element types, bit for bit as
 * ml_dtypes (and XLA) convert them; see float.h for the rules. */
#include "support/float.h"

#include <math.h>
#include <stdbool.h>
#include <string.h>

int float_format_of(hlo_dtype t, float_format *f) {
  switch (t) {
#define F(T, e, m, b, n, s) case HLO_##T: *f = (float_format){e, m, b, n, s}; return 1;
    F(F4E2M1FN, 2, 1, 1, 4, FLOAT_FINITE)
    F(F6E2M3FN, 2, 3, 1, 6, FLOAT_FINITE)
    F(F6E3M2FN, 3, 2, 3, 6, FLOAT_FINITE)
    F(F8E3M4, 3, 4, 3, 8, FLOAT_IEEE)
    F(F8E4M3, 4, 3, 7, 8, FLOAT_IEEE)
    F(F8E4M3FN, 4, 3, 7, 8, FLOAT_FN)
    F(F8E4M3FNUZ, 4, 3, 8, 8, FLOAT_FNUZ)
    F(F8E4M3B11FNUZ, 4, 3, 11, 8, FLOAT_FNUZ)
    F(F8E5M2, 5, 2, 15, 8, FLOAT_IEEE)
    F(F8E5M2FNUZ, 5, 2, 16, 8, FLOAT_FNUZ)
    F(F8E8M0FNU, 8, 0, 127, 8, FLOAT_E8M0)
    F(BF16, 8, 7, 127, 16, FLOAT_IEEE)
    F(F16, 5, 10, 15, 16, FLOAT_IEEE)
    F(F32, 8, 23, 127, 32, FLOAT_IEEE)
    F(F64, 11, 52, 1023, 64, FLOAT_IEEE)
#undef F
    default: return 0;
  }
}

/* ------------------------------------------------- unpacked values */

enum { K_ZERO, K_FINITE, K_INF, K_NAN };

/* A value taken apart: kind, sign, and for finite values
 * |x| = man * 2^(exp - 52) with man's leading 1 at bit 52; for NaNs the
 * trailing significand left-aligned at bit 63 (the quiet bit first). */
typedef struct unpacked {
  int kind;
  bool sign;
  int exp;
  uint64_t man;
  uint64_t payload;
} unpacked;

static uint64_t low_mask(int n) { return n >= 64 ? UINT64_MAX : (((uint64_t)1 << n) - 1); }

static unpacked unpack(const float_format *f, uint64_t bits) {
  unpacked u = {K_FINITE, false, 0, 0, 0};
  bits &= low_mask(f->bits);
  if (f->specials == FLOAT_E8M0) { /* unsigned, exponent only, no zero */
    if (bits == 0xFF) u.kind = K_NAN;
    u.exp = (int)bits - f->bias;
    u.man = (uint64_t)1 << 52;
    return u;
  }
  int M = f->mant_bits;
  u.sign = (bits >> (f->bits - 1)) & 1;
  uint64_t e = (bits >> M) & low_mask(f->exp_bits), m = bits & low_mask(M);
  uint64_t emax = low_mask(f->exp_bits);
  if ((f->specials == FLOAT_IEEE && e == emax) ||
      (f->specials == FLOAT_FN && e == emax && m == low_mask(M)) ||
      (f->specials == FLOAT_FNUZ && u.sign && e == 0 && m == 0)) {
    u.kind = f->specials == FLOAT_IEEE && m == 0 ? K_INF : K_NAN;
    u.payload = M ? m << (64 - M) : 0;
    return u;
  }
  if (e == 0 && m == 0) { u.kind = K_ZERO; return u; }
  if (e == 0) { /* subnormal: normalize */
    int p = 63 - __builtin_clzll(m);
    u.exp = p + 1 - f->bias - M;
    u.man = m << (52 - p);
  } else {
    u.exp = (int)e - f->bias;
    u.man = (m | ((uint64_t)1 << M)) << (52 - M);
  }
  return u;
}

/* Largest finite encoding (no sign). */
static uint64_t max_bits(const float_format *f) {
  uint64_t emax = low_mask(f->exp_bits), mmax = low_mask(f->mant_bits);
  switch (f->specials) {
    case FLOAT_IEEE: return (emax - 1) << f->mant_bits | mmax;
    case FLOAT_FN: return emax << f->mant_bits | (mmax - 1);
    case FLOAT_E8M0: return 0xFE;
    default: return emax << f->mant_bits | mmax;
  }
}

static uint64_t sign_bit(const float_format *f, bool s) {
  return s && f->specials != FLOAT_E8M0 ? (uint64_t)1 << (f->bits - 1) : 0;
}

/* ml_dtypes' `±quiet_NaN()` of the format: the canonical NaN with the
 * input's sign (FNUZ and E8M0 have a single NaN; f4/f6 have none and
 * ml_dtypes' quiet_NaN() is -0, so +NaN gives -0 and -NaN gives +0). */
static uint64_t nan_bits(const float_format *f, bool s) {
  switch (f->specials) {
    case FLOAT_IEEE:
      return sign_bit(f, s) | low_mask(f->exp_bits) << f->mant_bits |
             ((uint64_t)1 << (f->mant_bits - 1));
    case FLOAT_FN: return sign_bit(f, s) | low_mask(f->bits - 1);
    case FLOAT_FNUZ: return (uint64_t)1 << (f->bits - 1);
    case FLOAT_E8M0: return 0xFF;
    case FLOAT_FINITE: return sign_bit(f, !s);
  }
  return 0;
}

/* ml_dtypes' `±infinity()`: overflow and infinite inputs. Formats without
 * inf give their NaN (FN, FNUZ, E8M0) or saturate (f4/f6). */
static uint64_t inf_bits(const float_format *f, bool s) {
  switch (f->specials) {
    case FLOAT_IEEE: return sign_bit(f, s) | low_mask(f->exp_bits) << f->mant_bits;
    case FLOAT_FINITE: return sign_bit(f, s) | max_bits(f);
    default: return nan_bits(f, s);
  }
}

/* Packs `u` into format `t`, rounding to nearest even as ml_dtypes'
 * ConvertImpl does (ml_dtypes/include/float8.h): the significand is
 * aligned to the target (denormalizing below its normal range), rounded
 * by adding a bias term, and added to the biased exponent so that a carry
 * moves into the exponent. For f8E8M0FNU (no mantissa bits) the bit kept
 * is the implicit one, so ties round up (3.0 -> 4.0, 0.75 -> 1.0). */
static uint64_t pack(const float_format *f, const unpacked *u) {
  if (f->specials == FLOAT_E8M0 && u->kind != K_NAN && (u->sign || u->kind == K_ZERO))
    return 0xFF; /* no zero, no negative values: NaN */
  switch (u->kind) {
    case K_NAN: return nan_bits(f, u->sign);
    case K_INF: return inf_bits(f, u->sign);
    case K_ZERO: return f->specials == FLOAT_FNUZ ? 0 : sign_bit(f, u->sign);
    default: break;
  }
  int M = f->mant_bits;
  int base = u->exp + f->bias - 1; /* biased exponent - 1 */
  int adj = base < 0 ? -base : 0;
  int shift = 52 - M + adj;
  if (shift > 54) shift = 54;
  uint64_t nm = u->man, aligned = nm;
  if (shift > 0) {
    nm += ((nm >> shift) & 1) + ((uint64_t)1 << (shift - 1)) - 1;
    aligned = nm >> shift;
  }
  uint64_t r = aligned + ((uint64_t)(base > 0 ? base : 0) << M);
  if (r > max_bits(f)) return inf_bits(f, u->sign);
  if (r == 0 && f->specials == FLOAT_FNUZ) return 0;
  return sign_bit(f, u->sign) | r;
}

/* NaN to NaN between f16, f32 and f64 (and bf16 to f32/f64) keeps the
 * sign and the leading payload bits and sets the quiet bit, as the CPU
 * (and so XLA, and numpy for f32 <-> f64) converts; bf16 -> f32 is a plain
 * shift as in ml_dtypes. Other pairs give the canonical NaN. */
static bool nan_keeps_payload(hlo_dtype from, hlo_dtype to) {
  bool from_std = from == HLO_F16 || from == HLO_F32 || from == HLO_F64 || from == HLO_BF16;
  bool to_std = to == HLO_F16 || to == HLO_F32 || to == HLO_F64;
  return from_std && to_std && !(from == HLO_BF16 && to == HLO_F16);
}

/* One rounding from `from` to `to` (no ml_dtypes routing through f32). */
static uint64_t convert_direct(hlo_dtype from, hlo_dtype to, uint64_t bits) {
  float_format ff, tf;
  if (!float_format_of(from, &ff) || !float_format_of(to, &tf)) return 0;
  if (from == to) return bits & low_mask(ff.bits);
  unpacked u = unpack(&ff, bits);
  if (u.kind == K_NAN && nan_keeps_payload(from, to)) {
    uint64_t quiet = from == HLO_BF16 && to == HLO_F32 ? 0 : (uint64_t)1 << 63;
    uint64_t p = (u.payload | quiet) >> (64 - tf.mant_bits);
    if (p == 0) p = (uint64_t)1 << (tf.mant_bits - 1);
    return sign_bit(&tf, u.sign) | low_mask(tf.exp_bits) << tf.mant_bits | p;
  }
  return pack(&tf, &u);
}

uint64_t float_convert(hlo_dtype from, hlo_dtype to, uint64_t bits) {
  /* ml_dtypes converts f64 to bf16 and to the 8/6/4-bit types through f32
   * (two roundings); f64 -> f16 (numpy) and f64 -> f32 round once. */
  if (from == HLO_F64 && to != HLO_F64 && to != HLO_F32 && to != HLO_F16) {
    bits = convert_direct(HLO_F64, HLO_F32, bits);
    from = HLO_F32;
  }
  return convert_direct(from, to, bits);
}

double float_decode(hlo_dtype t, uint64_t bits) {
  if (t == HLO_F32) { uint32_t u = (uint32_t)bits; float x; memcpy(&x, &u, 4); return x; }
  uint64_t b = t == HLO_F64 ? bits : convert_direct(t, HLO_F64, bits);
  double d;
  memcpy(&d, &b, 8);
  return d;
}

uint64_t float_encode(hlo_dtype t, double x) {
  if (t == HLO_F32) { float y = (float)x; uint32_t u; memcpy(&u, &y, 4); return u; }
  uint64_t u;
  memcpy(&u, &x, 8);
  return t == HLO_F64 ? u : convert_direct(HLO_F64, t, u);
}

double float_round(hlo_dtype t, double x) {
  if (t == HLO_F64) return x;
  if (t == HLO_F32) return (float)x;
  return float_decode(t, float_encode(t, x));
}

float bf16_to_f32(uint16_t b) {
  uint32_t u = (uint32_t)b << 16;
  float f;
  memcpy(&f, &u, 4);
  return f;
}

uint16_t f32_to_bf16(float f) {
  uint32_t u;
  memcpy(&u, &f, 4);
  if ((u & 0x7fffffff) > 0x7f800000) return (uint16_t)(((u >> 16) & 0x8000) | 0x7fc0);
  u += 0x7fff + ((u >> 16) & 1);
  return (uint16_t)(u >> 16);
}

float f16_to_f32(uint16_t h) { return (float)float_decode(HLO_F16, h); }
uint16_t f32_to_f16(float f) { return (uint16_t)float_encode(HLO_F16, f); }
