/* float.c — conversions between double and every float element type. */
#include "support/float.h"

#include <math.h>
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

double float_decode(hlo_dtype t, uint64_t bits) {
  if (t == HLO_F64) { double d; memcpy(&d, &bits, 8); return d; }
  if (t == HLO_F32) { uint32_t u = (uint32_t)bits; float x; memcpy(&x, &u, 4); return x; }
  float_format f;
  if (!float_format_of(t, &f)) return 0;
  if (f.specials == FLOAT_E8M0) {
    uint32_t e = bits & 0xFF;
    return e == 0xFF ? NAN : ldexp(1.0, (int)e - 127);
  }
  int sign_shift = f.exp_bits + f.mant_bits;
  uint64_t sign = (bits >> sign_shift) & 1;
  uint64_t e = (bits >> f.mant_bits) & ((1u << f.exp_bits) - 1);
  uint64_t m = bits & ((1u << f.mant_bits) - 1);
  uint64_t emax = (1u << f.exp_bits) - 1, mmax = (1u << f.mant_bits) - 1;
  double v;
  switch (f.specials) {
    case FLOAT_IEEE:
      if (e == emax) return m ? NAN : (sign ? -INFINITY : INFINITY);
      break;
    case FLOAT_FN:
      if (e == emax && m == mmax) return NAN;
      break;
    case FLOAT_FNUZ:
      if (sign && e == 0 && m == 0) return NAN;
      break;
    default: break;
  }
  if (e == 0) v = ldexp((double)m, 1 - f.bias - f.mant_bits);
  else v = ldexp((double)(m | (1u << f.mant_bits)), (int)e - f.bias - f.mant_bits);
  return sign ? -v : v;
}

static uint64_t nan_bits(const float_format *f) {
  switch (f->specials) {
    case FLOAT_IEEE: return (((uint64_t)1 << f->exp_bits) - 1) << f->mant_bits |
                            ((uint64_t)1 << (f->mant_bits - 1));
    case FLOAT_FN: return ((uint64_t)1 << (f->exp_bits + f->mant_bits)) - 1;
    case FLOAT_FNUZ: return (uint64_t)1 << (f->bits - 1);
    case FLOAT_E8M0: return 0xFF;
    case FLOAT_FINITE: return 0;
  }
  return 0;
}

/* Largest finite encoding (no sign). */
static uint64_t max_bits(const float_format *f) {
  uint64_t emax = ((uint64_t)1 << f->exp_bits) - 1, mmax = ((uint64_t)1 << f->mant_bits) - 1;
  switch (f->specials) {
    case FLOAT_IEEE: return (emax - 1) << f->mant_bits | mmax;
    case FLOAT_FN: return emax << f->mant_bits | (mmax - 1);
    default: return emax << f->mant_bits | mmax;
  }
}

uint64_t float_encode(hlo_dtype t, double x) {
  if (t == HLO_F64) { uint64_t u; memcpy(&u, &x, 8); return u; }
  if (t == HLO_F32) { float y = (float)x; uint32_t u; memcpy(&u, &y, 4); return u; }
  float_format f;
  if (!float_format_of(t, &f)) return 0;
  if (f.specials == FLOAT_E8M0) {
    if (isnan(x) || x <= 0 || isinf(x)) return 0xFF;
    int e;
    double m = frexp(x, &e);          /* x = m * 2^e, m in [0.5, 1) */
    int E = e - 1;                    /* x = (2m) * 2^E, 2m in [1, 2) */
    /* round 2m to 1 or 2, ties to even exponent field */
    double r = 2 * m;
    if (r > 1.5 || (r == 1.5 && ((E + 127) & 1))) E++;
    if (E < -127) return 0;           /* underflow: smallest value 2^-127 */
    if (E > 127) return 0xFF;
    return (uint64_t)(E + 127);
  }
  uint64_t sign = signbit(x) ? (uint64_t)1 << (f.bits - 1) : 0;
  if (isnan(x)) return f.specials == FLOAT_FINITE ? sign : nan_bits(&f);
  double a = fabs(x);
  uint64_t maxb = max_bits(&f);
  if (isinf(a)) {
    if (f.specials == FLOAT_IEEE) return sign | (((uint64_t)1 << f.exp_bits) - 1) << f.mant_bits;
    if (f.specials == FLOAT_FINITE) return sign | maxb;
    return nan_bits(&f);
  }
  if (a == 0) return f.specials == FLOAT_FNUZ ? 0 : sign;
  int e;
  frexp(a, &e);
  int E = e - 1;
  int emin = 1 - f.bias;
  int q = (E < emin ? emin : E) - f.mant_bits;  /* exponent of one ulp */
  double n = nearbyint(ldexp(a, -q));           /* ties to even */
  uint64_t enc;
  if (E < emin) {
    enc = (uint64_t)n;   /* subnormal; n == 2^M carries into the min normal */
  } else {
    if (n >= ldexp(1.0, f.mant_bits + 1)) { n /= 2; E++; }
    enc = (uint64_t)(E + f.bias) << f.mant_bits | ((uint64_t)n - ((uint64_t)1 << f.mant_bits));
  }
  if (enc > maxb) {
    if (f.specials == FLOAT_IEEE) return sign | (((uint64_t)1 << f.exp_bits) - 1) << f.mant_bits;
    if (f.specials == FLOAT_FINITE) return sign | maxb;
    return nan_bits(&f);
  }
  if (enc == 0 && f.specials == FLOAT_FNUZ) return 0;
  return sign | enc;
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
  if ((u & 0x7fffffff) > 0x7f800000) return (uint16_t)((u >> 16) | 0x40);
  u += 0x7fff + ((u >> 16) & 1);
  return (uint16_t)(u >> 16);
}

float f16_to_f32(uint16_t h) { return (float)float_decode(HLO_F16, h); }
uint16_t f32_to_f16(float f) { return (uint16_t)float_encode(HLO_F16, f); }
