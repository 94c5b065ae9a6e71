/* emit_c.c — the C dialect of the C-style kernel printer (codegen/cstyle.h):
 * plain C11 that gcc and clang vectorise. Helpers are `static inline` and
 * branch-free where they can be, so the hot loop holds no calls but libm's
 * (the same functions the interpreter uses: tanhf, logf, ..., so the
 * results agree bit for bit). f32 exp (softmax, logistic) is hlo_expf:
 * glibc's expf algorithm inlined without branches, so its loops vectorise
 * (2.5x on a softmax's exp, bench/KERNELS.md), bit for bit glibc's result
 * on every float (test_kernel_ops); f32 tanh (GELU) is hlo_tanhf, glibc's
 * tanhf (fdlibm's, through its expm1f) the same way. On another libm they
 * would still be within an ULP or two, but no longer its bits.
 *
 * Integer arithmetic wraps as the spec says (two's complement): it is done
 * in uint64_t and truncated, never in signed C arithmetic (undefined on
 * overflow). Division and remainder by zero and INT_MIN / -1 give XLA's
 * values (-1 / x / INT_MIN / 0), shifts by >= the width give 0 (or the sign
 * fill), like the interpreter. */
#include "backend/cpu/cpu.h"
#include <pthread.h>

static const char preamble[] =
    "#include <math.h>\n"
    "#include <stdbool.h>\n"
    "#include <stdint.h>\n"
    "#include <string.h>\n"
    "static inline float hlo_bf16_to_f32(uint16_t h) {\n"
    "  uint32_t u = (uint32_t)h << 16; float f; memcpy(&f, &u, 4); return f;\n"
    "}\n"
    "static inline uint16_t hlo_f32_to_bf16(float f) {\n"
    "  uint32_t u; memcpy(&u, &f, 4);\n"
    "  if ((u & 0x7fffffffu) > 0x7f800000u) return (uint16_t)((u >> 16) | 0x40u);\n"
    "  u += 0x7fffu + ((u >> 16) & 1u); return (uint16_t)(u >> 16);\n"
    "}\n"
    "static inline float hlo_f16_to_f32(uint16_t h) {\n"
    "  _Float16 x; memcpy(&x, &h, 2); return (float)x;\n"
    "}\n"
    "static inline uint16_t hlo_f32_to_f16(float f) {\n"
    "  _Float16 x = (_Float16)f; uint16_t h; memcpy(&h, &x, 2); return h;\n"
    "}\n"
    "static inline float hlo_round_bf16(float f) { return hlo_bf16_to_f32(hlo_f32_to_bf16(f)); }\n"
    "static inline float hlo_round_f16(float f) { return (float)(_Float16)f; }\n"
    "static inline float hlo_round_f16_from_f64(double d) { return (float)(_Float16)d; }\n"
    /* IEEE maximum/minimum: NaN propagates, +0 > -0 */
    "static inline float hlo_maxf(float a, float b) {\n"
    "  return a != a ? a : b != b ? b : a == b ? (signbit(a) ? b : a) : a > b ? a : b;\n"
    "}\n"
    "static inline float hlo_minf(float a, float b) {\n"
    "  return a != a ? a : b != b ? b : a == b ? (signbit(a) ? a : b) : a < b ? a : b;\n"
    "}\n"
    "static inline double hlo_max(double a, double b) {\n"
    "  return a != a ? a : b != b ? b : a == b ? (signbit(a) ? b : a) : a > b ? a : b;\n"
    "}\n"
    "static inline double hlo_min(double a, double b) {\n"
    "  return a != a ? a : b != b ? b : a == b ? (signbit(a) ? a : b) : a < b ? a : b;\n"
    "}\n"
    "static inline float hlo_signf(float x) { return x != x || x == 0 ? x : x < 0 ? -1.0f : 1.0f; }\n"
    "static inline double hlo_sign(double x) { return x != x || x == 0 ? x : x < 0 ? -1.0 : 1.0; }\n"
    "/* expf as glibc computes it (sysdeps/ieee754/flt-32/e_expf.c, from Arm's\n"
    "   optimized-routines: exp(x) = 2^(k/32) * 2^(r/32), a 32-entry table and a\n"
    "   cubic in double), with the FMAs glibc's FMA build uses where it picks that\n"
    "   build (x86-64 with FMA and AVX2; elsewhere when fma is fast), so the bits\n"
    "   are libm's (checked on all 2^32 floats), and the special cases as\n"
    "   integer masks: no branch, no call, so loops over it vectorise. */\n"
    "static const uint64_t hlo_exp2f_tab[32] = {\n"
    "  0x3ff0000000000000, 0x3fefd9b0d3158574, 0x3fefb5586cf9890f, 0x3fef9301d0125b51,\n"
    "  0x3fef72b83c7d517b, 0x3fef54873168b9aa, 0x3fef387a6e756238, 0x3fef1e9df51fdee1,\n"
    "  0x3fef06fe0a31b715, 0x3feef1a7373aa9cb, 0x3feedea64c123422, 0x3feece086061892d,\n"
    "  0x3feebfdad5362a27, 0x3feeb42b569d4f82, 0x3feeab07dd485429, 0x3feea47eb03a5585,\n"
    "  0x3feea09e667f3bcd, 0x3fee9f75e8ec5f74, 0x3feea11473eb0187, 0x3feea589994cce13,\n"
    "  0x3feeace5422aa0db, 0x3feeb737b0cdc5e5, 0x3feec49182a3f090, 0x3feed503b23e255d,\n"
    "  0x3feee89f995ad3ad, 0x3feeff76f2fb5e47, 0x3fef199bdd85529c, 0x3fef3720dcef9069,\n"
    "  0x3fef5818dcfba487, 0x3fef7c97337b9b5f, 0x3fefa4afa2a490da, 0x3fefd0765b6e4540,\n"
    "};\n"
    "#if defined(__x86_64__) ? (defined(__FMA__) && defined(__AVX2__)) : defined(__FP_FAST_FMA)\n"
    "#define HLO_EXPF_FMA(a, b, c) __builtin_fma(a, b, c)\n"
    "#else\n"
    "#define HLO_EXPF_FMA(a, b, c) ((a) * (b) + (c))\n"
    "#endif\n"
    "static inline __attribute__((always_inline)) float hlo_expf(float x) {\n"
    "  const double inv = 0x1.71547652b82fep+0 * 32, shift = 0x1.8p+52;\n"
    "  const double c0 = 0x1.c6af84b912394p-5 / 32 / 32 / 32, c1 = 0x1.ebfce50fac4f3p-3 / 32 / 32;\n"
    "  const double c2 = 0x1.62e42ff0c52d6p-1 / 32;\n"
    "  double xd = (double)x, kd = HLO_EXPF_FMA(inv, xd, shift), s;\n"
    "  uint64_t ki, t;\n"
    "  memcpy(&ki, &kd, 8);\n"
    "  kd -= shift;\n"
    "  double r = HLO_EXPF_FMA(inv, xd, -kd);\n"
    "  t = hlo_exp2f_tab[ki % 32] + (ki << 47);\n"
    "  memcpy(&s, &t, 8);\n"
    "  double p = HLO_EXPF_FMA(c0, r, c1), r2 = r * r, y = HLO_EXPF_FMA(c2, r, 1.0);\n"
    "  y = HLO_EXPF_FMA(p, r2, y) * s;\n"
    "  float res = (float)y;\n"
    "  uint32_t ux, ur;\n"
    "  memcpy(&ux, &x, 4);\n"
    "  memcpy(&ur, &res, 4);\n"
    "  /* x > 0x1.62e42ep6 (+inf too) overflows to +inf; x < -0x1.9fe368p6 (-inf\n"
    "     too) underflows to +0; a NaN comes back quieted (glibc's x + x) */\n"
    "  uint32_t m_of = 0u - (uint32_t)((ux > 0x42b17217u) & (ux < 0x80000000u));\n"
    "  uint32_t m_uf = 0u - (uint32_t)(ux > 0xc2cff1b4u);\n"
    "  uint32_t m_nan = 0u - (uint32_t)((ux & 0x7fffffffu) > 0x7f800000u);\n"
    "  ur = (ur & ~m_of) | (0x7f800000u & m_of);\n"
    "  ur &= ~m_uf;\n"
    "  ur = (ur & ~m_nan) | ((ux | 0x00400000u) & m_nan);\n"
    "  memcpy(&res, &ur, 4);\n"
    "  return res;\n"
    "}\n"
    "static inline double hlo_exp(double x) { return exp(x); }\n"
    "static inline __attribute__((always_inline)) uint32_t hlo_fbits(float f) { uint32_t u; memcpy(&u, &f, 4); return u; }\n"
    "static inline __attribute__((always_inline)) float hlo_bitsf(uint32_t u) { float f; memcpy(&f, &u, 4); return f; }\n"
    "/* c ? a : b on the bits, through a mask: always if-converted (gcc merges\n"
    "   chains of ?: into many-way joins its vectoriser refuses) */\n"
    "static inline __attribute__((always_inline)) float hlo_self(uint32_t c, float a, float b) {\n"
    "  uint32_t m = 0u - c;\n"
    "  return hlo_bitsf((hlo_fbits(a) & m) | (hlo_fbits(b) & ~m));\n"
    "}\n"
    "static inline __attribute__((always_inline)) int32_t hlo_seli(uint32_t c, int32_t a, int32_t b) {\n"
    "  uint32_t m = 0u - c;\n"
    "  return (int32_t)(((uint32_t)a & m) | ((uint32_t)b & ~m));\n"
    "}\n"
    "/* glibc's expm1f (fdlibm's s_expm1f.c: x = k ln2 + r, a rational\n"
    "   approximation of r, then one of six reconstructions by k) for |x| <= 44,\n"
    "   not NaN, every case computed and selected, so that it vectorises; bit for\n"
    "   bit glibc's (checked on all 2^32 floats through hlo_tanhf). Shift counts\n"
    "   are clamped so that unselected cases stay defined. */\n"
    "static inline __attribute__((always_inline)) float hlo_expm1f_44(float x) {\n"
    "  const float ln2_hi = 6.9313812256e-01f, ln2_lo = 9.0580006145e-06f, invln2 = 1.4426950216e+00f;\n"
    "  const float Q1 = -3.3333335072e-02f, Q2 = 1.5873016091e-03f, Q3 = -7.9365076090e-05f,\n"
    "              Q4 = 4.0082177293e-06f, Q5 = -2.0109921195e-07f;\n"
    "  uint32_t hx = hlo_fbits(x) & 0x7fffffffu, neg = hlo_fbits(x) >> 31;\n"
    "  /* argument reduction: x = k ln2 + (hi - lo) */\n"
    "  int32_t kr = (int32_t)(invln2 * x + hlo_self(neg, -0.5f, 0.5f));\n"
    "  uint32_t near1 = hx < 0x3F851592u, reduce = hx > 0x3eb17218u;\n"
    "  int32_t k = hlo_seli(reduce, hlo_seli(near1, hlo_seli(neg, -1, 1), kr), 0);\n"
    "  float tk = (float)kr;\n"
    "  float hi = hlo_self(near1, hlo_self(neg, x + ln2_hi, x - ln2_hi), x - tk * ln2_hi);\n"
    "  float lo = hlo_self(near1, hlo_self(neg, -ln2_lo, ln2_lo), tk * ln2_lo);\n"
    "  float xr = hi - lo;\n"
    "  float c = (hi - xr) - lo;\n"
    "  uint32_t k0 = k == 0;\n"
    "  xr = hlo_self(k0, x, xr);\n"
    "  c = hlo_self(k0, 0.0f, c);\n"
    "  float hfx = 0.5f * xr, hxs = xr * hfx;\n"
    "  float r1 = 1.0f + hxs * (Q1 + hxs * (Q2 + hxs * (Q3 + hxs * (Q4 + hxs * Q5))));\n"
    "  float t = 3.0f - r1 * hfx;\n"
    "  float e = hxs * ((r1 - t) / (6.0f - xr * t));\n"
    "  float res0 = xr - (xr * e - hxs);\n"
    "  float e2 = (xr * (e - c) - c) - hxs;\n"
    "  float resm1 = 0.5f * (xr - e2) - 0.5f;\n"
    "  float res1 = hlo_self(xr < -0.25f, -2.0f * (e2 - (xr + 0.5f)), 1.0f + 2.0f * (xr - e2));\n"
    "  uint32_t ku = (uint32_t)k << 23;\n"
    "  float resbig = hlo_bitsf(hlo_fbits(1.0f - (e2 - xr)) + ku) - 1.0f;\n"
    "  int32_t ks = hlo_seli(k < 0, 0, hlo_seli(k > 31, 31, k));\n"
    "  float tsm = hlo_bitsf(0x3f800000u - (0x1000000u >> ks));\n"
    "  float ysm = hlo_bitsf(hlo_fbits(tsm - (e2 - xr)) + ku);\n"
    "  float tmid = hlo_bitsf((uint32_t)(0x7f - k) << 23);\n"
    "  float ymid = hlo_bitsf(hlo_fbits((xr - (e2 + tmid)) + 1.0f) + ku);\n"
    "  float r = hlo_self(k < 23, ysm, ymid);\n"
    "  r = hlo_self((k <= -2) | (k > 56), resbig, r);\n"
    "  r = hlo_self(k == 1, res1, r);\n"
    "  r = hlo_self(k == -1, resm1, r);\n"
    "  r = hlo_self(k0, res0, r);\n"
    "  r = hlo_self(hx < 0x33000000u, x, r);\n"
    "  return hlo_self((hx >= 0x4195b844u) & neg, -1.0f, r);\n"
    "}\n"
    "/* glibc's tanhf (fdlibm's s_tanhf.c: expm1f of -+2|x|, +-1 past 22, x\n"
    "   below 2^-55) without branches: bit for bit glibc's on all 2^32 floats,\n"
    "   and it vectorises. always_inline: a helper left out of line is a call in\n"
    "   the loop. */\n"
    "static inline __attribute__((always_inline)) float hlo_tanhf(float x) {\n"
    "  uint32_t jx = hlo_fbits(x), ix = jx & 0x7fffffffu, neg = jx >> 31;\n"
    "  float ax = hlo_bitsf(ix);\n"
    "  uint32_t big = ix >= 0x3f800000u, finite22 = ix < 0x41b00000u;\n"
    "  float arg = hlo_self(finite22, hlo_self(big, 2.0f * ax, -2.0f * ax), 0.0f);\n"
    "  float t = hlo_expm1f_44(arg);\n"
    "  float z = hlo_self(big, 1.0f - 2.0f / (t + 2.0f), -t / (t + 2.0f));\n"
    "  z = hlo_self(finite22, z, 1.0f);\n"
    "  z = hlo_self(neg, -z, z);\n"
    "  z = hlo_self(ix < 0x24000000u, x, z); /* +-0 and |x| < 2^-55: x (x * (1 + x)) */\n"
    "  float inv = 1.0f / x;\n"
    "  return hlo_self(ix >= 0x7f800000u, hlo_self(neg, inv - 1.0f, inv + 1.0f), z);\n"
    "}\n"
    "static inline double hlo_tanh(double x) { return tanh(x); }\n";

static cstyle_dialect dialect;

static void fill(void) {
  cstyle_dialect *d = &dialect;
  d->name = "c";
  d->preamble = preamble;
  d->kernel_prefix = "void";
  d->restrict_kw = "restrict";
  d->tile_open = "for (int64_t t = tile_begin; t < tile_end; t++) {";
  d->tile_close = "}";
  d->inf = "__builtin_inf$f()";
  d->nan = "__builtin_nan$f(\"\")";

  const char **f = d->float_ops;
  f[OP_ADD] = "($0 + $1)";
  f[OP_SUBTRACT] = "($0 - $1)";
  f[OP_MULTIPLY] = "($0 * $1)";
  f[OP_DIVIDE] = "($0 / $1)";
  f[OP_REMAINDER] = "fmod$f($0, $1)";
  f[OP_MAXIMUM] = "hlo_max$f($0, $1)";
  f[OP_MINIMUM] = "hlo_min$f($0, $1)";
  f[OP_POWER] = "pow$f($0, $1)";
  f[OP_ATAN2] = "atan2$f($0, $1)";
  f[OP_NEGATE] = "(-$0)";
  f[OP_ABS] = "fabs$f($0)";
  f[OP_SIGN] = "hlo_sign$f($0)";
  f[OP_EXPONENTIAL] = "hlo_exp$f($0)";
  f[OP_EXPONENTIAL_MINUS_ONE] = "expm1$f($0)";
  f[OP_LOG] = "log$f($0)";
  f[OP_LOG_PLUS_ONE] = "log1p$f($0)";
  f[OP_LOGISTIC] = "(($T)1 / (($T)1 + hlo_exp$f(-$0)))";
  f[OP_TANH] = "hlo_tanh$f($0)";
  f[OP_SINE] = "sin$f($0)";
  f[OP_COSINE] = "cos$f($0)";
  f[OP_TAN] = "tan$f($0)";
  f[OP_SQRT] = "sqrt$f($0)";
  f[OP_RSQRT] = "(($T)1 / sqrt$f($0))";
  f[OP_CBRT] = "cbrt$f($0)";
  f[OP_FLOOR] = "floor$f($0)";
  f[OP_CEIL] = "ceil$f($0)";
  f[OP_ROUND_NEAREST_AFZ] = "round$f($0)";
  f[OP_ROUND_NEAREST_EVEN] = "rint$f($0)";
  f[OP_IS_FINITE] = "(bool)isfinite($0)";
  f[OP_SELECT] = "($0 ? $1 : $2)";
  f[OP_CLAMP] = "hlo_min$f(hlo_max$f($1, $0), $2)";

  const char **i = d->int_ops;
  i[OP_ADD] = "($T)((uint64_t)$0 + (uint64_t)$1)";
  i[OP_SUBTRACT] = "($T)((uint64_t)$0 - (uint64_t)$1)";
  i[OP_MULTIPLY] = "($T)((uint64_t)$0 * (uint64_t)$1)";
  i[OP_DIVIDE] = "($1 == 0 ? ($T)-1 : $1 == ($T)-1 ? ($T)(0 - (uint64_t)$0) : ($T)($0 / $1))";
  i[OP_REMAINDER] = "($1 == 0 ? $0 : $1 == ($T)-1 ? ($T)0 : ($T)($0 % $1))";
  i[OP_MAXIMUM] = "($0 > $1 ? $0 : $1)";
  i[OP_MINIMUM] = "($0 < $1 ? $0 : $1)";
  i[OP_AND] = "($T)($0 & $1)";
  i[OP_OR] = "($T)($0 | $1)";
  i[OP_XOR] = "($T)($0 ^ $1)";
  i[OP_NOT] = "($T)~$0";
  i[OP_NEGATE] = "($T)(0 - (uint64_t)$0)";
  i[OP_ABS] = "($T)($0 < 0 ? 0 - (uint64_t)$0 : (uint64_t)$0)";
  i[OP_SIGN] = "($T)(($0 > 0) - ($0 < 0))";
  i[OP_SHIFT_LEFT] = "(($U)$1 >= $B ? ($T)0 : ($T)(($U)$0 << ($U)$1))";
  i[OP_SHIFT_RIGHT_LOGICAL] = "(($U)$1 >= $B ? ($T)0 : ($T)(($U)$0 >> ($U)$1))";
  i[OP_SHIFT_RIGHT_ARITHMETIC] =
      "(($U)$1 >= $B ? ($T)(($S)$0 < 0 ? -1 : 0) : ($T)(($S)$0 >> ($U)$1))";
  i[OP_SELECT] = "($0 ? $1 : $2)";
  i[OP_CLAMP] = "(($1 < $0 ? $0 : $1) > $2 ? $2 : ($1 < $0 ? $0 : $1))";

  const char **u = d->uint_ops;
  u[OP_DIVIDE] = "($1 == 0 ? ($T)-1 : ($T)($0 / $1))";
  u[OP_REMAINDER] = "($1 == 0 ? $0 : ($T)($0 % $1))";
  u[OP_ABS] = "$0";
  u[OP_SIGN] = "($T)($0 != 0)";

  const char **b = d->bool_ops;
  b[OP_ADD] = b[OP_OR] = b[OP_MAXIMUM] = "($0 | $1)";
  b[OP_MULTIPLY] = b[OP_AND] = b[OP_MINIMUM] = "($0 & $1)";
  b[OP_SUBTRACT] = "($0 & !$1)";
  b[OP_XOR] = "($0 ^ $1)";
  b[OP_NOT] = "(!$0)";
  b[OP_SELECT] = "($0 ? $1 : $2)";
  b[OP_CLAMP] = "(($1 | $0) & $2)";
}

const cstyle_dialect *cpu_c_dialect(void) {
  static pthread_once_t once = PTHREAD_ONCE_INIT;
  pthread_once(&once, fill);
  return &dialect;
}

hlo_status cpu_emit_source(const kernel *const *ks, uint32_t n, strbuf *out) {
  const cstyle_dialect *d = cpu_c_dialect();
  sb_puts(out, "/* generated by hlo (backend cpu) */\n");
  sb_puts(out, d->preamble);
  for (uint32_t i = 0; i < n; i++) {
    sb_putc(out, '\n');
    HLO_TRY(cstyle_emit_kernel(d, ks[i], out));
  }
  return NULL;
}
