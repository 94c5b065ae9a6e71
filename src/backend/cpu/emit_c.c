/* emit_c.c — the C dialect of the C-style kernel printer (codegen/cstyle.h):
 * plain C11 that gcc and clang vectorise. Helpers are `static inline` and
 * branch-free where they can be, so the hot loop holds no calls but libm's
 * (the same functions the interpreter uses: logf, sinf, ..., so the
 * results agree bit for bit). f32 exp (softmax, SiLU, logistic; bf16/f16
 * compute in it) is hlo_expf, the all-f32 polynomial XLA:CPU used before its
 * intrinsic library: NOT libm's bits, at most 1 ULP from the correctly
 * rounded exp and from glibc's expf over all 2^32 floats (logistic within
 * 4 of glibc's formula), no table gather; the exp stage of a softmax 15%
 * and SiLU's 30% cheaper than glibc's algorithm inlined (bench/MATH.md).
 * The preamble has no #include (bench/MATH.md). f32 tanh (GELU; bf16/f16
 * compute in it) is hlo_tanhf, XLA:CPU's fast rational approximation: NOT libm's
 * bits, at most 5 ULP from the correctly rounded tanh and 5 from glibc's
 * tanhf over all 2^32 floats, and 5.8x faster than glibc's algorithm
 * inlined (bench/MATH.md). f64 stays libm's everywhere.
 *
 * Integer arithmetic wraps as the spec says (two's complement): it is done
 * in uint64_t and truncated, never in signed C arithmetic (undefined on
 * overflow). Division and remainder by zero and INT_MIN / -1 give XLA's
 * values (-1 / x / INT_MIN / 0), shifts by >= the width give 0 (or the sign
 * fill), like the interpreter. */
#include "backend/cpu/cpu.h"
#include <pthread.h>

static const char preamble[] =
    /* 512-bit vectors where the target has AVX-512 (gcc's -march=native
       on this Xeon prefers 256-bit ones): a softmax row kernel (exp,
       divide, the lanes' folds) 1.31 -> 0.99 ms a thread, exp alone
       0.60 -> 0.43 ms (bench/ATTENTION.md, "512-bit vectors"). Only the
       vector width of the same loops changes: no reassociation, no
       contraction (-ffp-contract=off), so the bits do not change. */
    "#if defined(__AVX512F__) && defined(__GNUC__) && !defined(__clang__)\n"
    "#pragma GCC target(\"prefer-vector-width=512\")\n"
    "#endif\n"
    /* No #include: the few declarations, types and macros the op tables
       and helpers below use, written out (math.h alone cost ~6 ms of gcc per
       unit; the generated assembly is the same: bench/COMPILE.md). Guarded,
       so the text may follow the system headers (bench/math_ulp.c). The
       libm functions bind to the process's libm at dlopen. */
    "typedef __INT8_TYPE__ int8_t;\n"
    "typedef __INT16_TYPE__ int16_t;\n"
    "typedef __INT32_TYPE__ int32_t;\n"
    "typedef __INT64_TYPE__ int64_t;\n"
    "typedef __UINT8_TYPE__ uint8_t;\n"
    "typedef __UINT16_TYPE__ uint16_t;\n"
    "typedef __UINT32_TYPE__ uint32_t;\n"
    "typedef __UINT64_TYPE__ uint64_t;\n"
    "#ifndef __bool_true_false_are_defined\n"
    "#define bool _Bool\n"
    "#define true 1\n"
    "#define false 0\n"
    "#endif\n"
    "#ifndef signbit\n"
    "#define signbit(x) __builtin_signbit(x)\n"
    "#endif\n"
    "#ifndef isfinite\n"
    "#define isfinite(x) __builtin_isfinite(x)\n"
    "#endif\n"
    "#define memcpy(d, s, n) __builtin_memcpy(d, s, n)\n"
    "double fmod(double, double); float fmodf(float, float);\n"
    "double pow(double, double); float powf(float, float);\n"
    "double atan2(double, double); float atan2f(float, float);\n"
    "double fabs(double); float fabsf(float);\n"
    "double expm1(double); float expm1f(float);\n"
    "double log(double); float logf(float);\n"
    "double log1p(double); float log1pf(float);\n"
    "double sin(double); float sinf(float); double cos(double); float cosf(float);\n"
    "double tan(double); float tanf(float); double sqrt(double); float sqrtf(float);\n"
    "double cbrt(double); float cbrtf(float);\n"
    "double floor(double); float floorf(float);\n"
    "double ceil(double); float ceilf(float);\n"
    "double round(double); float roundf(float);\n"
    "double rint(double); float rintf(float); double exp(double); float expf(float);\n"
    "double tanh(double); float tanhf(float);\n"
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
    "/* f32 exp as XLA:CPU computed it before its intrinsic library\n"
    "   (xla/service/cpu/polynomial_approximations.cc, GenerateVF32Exp; the\n"
    "   polynomial is Cephes expf's): x clamped to 88.72 (beyond: +inf),\n"
    "   +0 below -0x1.9fe368p6 (glibc's threshold) selected at the end, with\n"
    "   x = 0 computed meanwhile: a subnormal product costs a microcode assist\n"
    "   per vector (3x on a masked softmax); n = rint(x log2 e), r = x - n ln2\n"
    "   with ln2 in two parts,\n"
    "   e^r = 1 + r + r^2 P(r), P of degree 5 (Horner, FMA where the target has\n"
    "   it), times 2^n built from exponent bits in two factors (so subnormal\n"
    "   results round once). All f32: no double, no table, no branch, no call,\n"
    "   so it vectorises. NOT glibc's bits: at most 1 ULP from the correctly\n"
    "   rounded exp and 1 from glibc's expf over all 2^32 floats, measured with\n"
    "   FMA (bench/math_ulp.sh, bench/MATH.md); without FMA it is unmeasured.\n"
    "   NaN in gives NaN out (quieted, as glibc's x + x). */\n"
    "#if defined(__x86_64__) ? defined(__FMA__) : defined(__FP_FAST_FMAF)\n"
    "#define HLO_EXPF_FMA(a, b, c) __builtin_fmaf(a, b, c)\n"
    "#else\n"
    "#define HLO_EXPF_FMA(a, b, c) ((a) * (b) + (c))\n"
    "#endif\n"
    "static inline __attribute__((always_inline)) float hlo_expf(float x) {\n"
    "  float xc = x < 88.72283935546875f ? x : 88.72283935546875f; /* NaN too: */\n"
    "  xc = xc >= -0x1.9fe368p6f ? xc : 0.0f; /* no NaN to int; below: +0 */\n"
    "  float n = __builtin_rintf(xc * 1.44269504088896341f);\n"
    "  float r = HLO_EXPF_FMA(-n, 0.693359375f, xc);\n"
    "  r = HLO_EXPF_FMA(-n, -2.12194440e-4f, r);\n"
    "  float p = HLO_EXPF_FMA(1.9875691500e-4f, r, 1.3981999507e-3f);\n"
    "  p = HLO_EXPF_FMA(p, r, 8.3334519073e-3f);\n"
    "  p = HLO_EXPF_FMA(p, r, 4.1665795894e-2f);\n"
    "  p = HLO_EXPF_FMA(p, r, 1.6666665459e-1f);\n"
    "  p = HLO_EXPF_FMA(p, r, 5.0000001201e-1f);\n"
    "  float y = HLO_EXPF_FMA(p, r * r, r) + 1.0f;\n"
    "  int32_t ni = (int32_t)n, n1 = ni >> 1, n2 = ni - n1;\n"
    "  float s1, s2;\n"
    "  uint32_t b1 = (uint32_t)(n1 + 127) << 23, b2 = (uint32_t)(n2 + 127) << 23;\n"
    "  memcpy(&s1, &b1, 4);\n"
    "  memcpy(&s2, &b2, 4);\n"
    "  y = y * s1 * s2;\n"
    "  uint32_t ux, uy, m_nan;\n"
    "  memcpy(&ux, &x, 4);\n"
    "  memcpy(&uy, &y, 4);\n"
    "  m_nan = 0u - (uint32_t)((ux & 0x7fffffffu) > 0x7f800000u);\n"
    "  uy = (uy & ~m_nan) | ((ux | 0x00400000u) & m_nan);\n"
    "  uy &= 0u - (uint32_t)!(x < -0x1.9fe368p6f);\n"
    "  memcpy(&y, &uy, 4);\n"
    "  return y;\n"
    "}\n"
    "static inline double hlo_exp(double x) { return exp(x); }\n"
    "static inline __attribute__((always_inline)) uint32_t hlo_fbits(float f) { uint32_t u; memcpy(&u, &f, 4); return u; }\n"
    "static inline __attribute__((always_inline)) float hlo_bitsf(uint32_t u) { float f; memcpy(&f, &u, 4); return f; }\n"
    "static inline __attribute__((always_inline)) uint64_t hlo_dbits(double f) { uint64_t u; memcpy(&u, &f, 8); return u; }\n"
    "/* c ? a : b on the bits, through a mask: always if-converted (gcc merges\n"
    "   chains of ?: into many-way joins its vectoriser refuses) */\n"
    "static inline __attribute__((always_inline)) float hlo_self(uint32_t c, float a, float b) {\n"
    "  uint32_t m = 0u - c;\n"
    "  return hlo_bitsf((hlo_fbits(a) & m) | (hlo_fbits(b) & ~m));\n"
    "}\n"
    "/* Exact divides by a row value (codegen/cstyle.c, \"Divides by a row\n"
    "   value\", which gives the proof): a / b as (float)((double)a * y)\n"
    "   with y = 1.0 / (double)b is the IEEE quotient for every a when b is\n"
    "   normal, |b| < 2^24 and b is not an even integer other than a power\n"
    "   of two (b = 98 differs on subnormal ties). */\n"
    "static inline __attribute__((always_inline)) bool hlo_rcp_ok(float b) {\n"
    "  uint32_t u = hlo_fbits(b) & 0x7fffffffu;\n"
    "  float h = b * 0.5f;\n"
    "  return u - 0x00800000u < 0x4b800000u - 0x00800000u &&\n"
    "         (h != __builtin_truncf(h) || (u & 0x7fffffu) == 0);\n"
    "}\n"
    "/* f32 tanh as XLA:CPU computes it (xla/codegen/intrinsic/tanh.cc,\n"
    "   EmitFastTanh, earlier xla/service/llvm_ir/math_ops.cc; the rational\n"
    "   approximation is Eigen's generic_fast_tanh_float): x clamped to +-c, where\n"
    "   the approximation is exactly +-1, then an odd degree-13 over an even\n"
    "   degree-6 polynomial (Horner in x^2, one division), and x itself for\n"
    "   |x| < 0.0004. c depends on whether the polynomials use FMA (XLA's two\n"
    "   constants). Error over all 2^32 floats against the correctly rounded\n"
    "   tanh, measured (bench/math_ulp.sh, bench/MATH.md): at most 5 ULP with\n"
    "   FMA, 7 without (glibc's tanhf: 2). The clamp is two compares that keep\n"
    "   NaN (NaN in, NaN out), +-inf give +-1; no branch, no call, no table:\n"
    "   it vectorises. */\n"
    "#if defined(__x86_64__) ? defined(__FMA__) : defined(__FP_FAST_FMAF)\n"
    "#define HLO_TANHF_FMA(a, b, c) __builtin_fmaf(a, b, c)\n"
    "#define HLO_TANHF_CLAMP 7.99881172180175781f\n"
    "#else\n"
    "#define HLO_TANHF_FMA(a, b, c) ((a) * (b) + (c))\n"
    "#define HLO_TANHF_CLAMP 7.90531110763549805f\n"
    "#endif\n"
    "static inline __attribute__((always_inline)) float hlo_tanhf(float x) {\n"
    "  float xc = x > HLO_TANHF_CLAMP ? HLO_TANHF_CLAMP : x;\n"
    "  xc = xc < -HLO_TANHF_CLAMP ? -HLO_TANHF_CLAMP : xc;\n"
    "  float x2 = xc * xc;\n"
    "  float p = HLO_TANHF_FMA(x2, -2.76076847742355e-16f, 2.00018790482477e-13f);\n"
    "  p = HLO_TANHF_FMA(x2, p, -8.60467152213735e-11f);\n"
    "  p = HLO_TANHF_FMA(x2, p, 5.12229709037114e-08f);\n"
    "  p = HLO_TANHF_FMA(x2, p, 1.48572235717979e-05f);\n"
    "  p = HLO_TANHF_FMA(x2, p, 6.37261928875436e-04f);\n"
    "  p = HLO_TANHF_FMA(x2, p, 4.89352455891786e-03f);\n"
    "  p = xc * p;\n"
    "  float q = HLO_TANHF_FMA(x2, 1.19825839466702e-06f, 1.18534705686654e-04f);\n"
    "  q = HLO_TANHF_FMA(x2, q, 2.26843463243900e-03f);\n"
    "  q = HLO_TANHF_FMA(x2, q, 4.89352518554385e-03f);\n"
    "  return hlo_self(fabsf(x) < 0.0004f, x, p / q);\n"
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
  d->rcp_decl = "const double $0 = 1.0 / (double)$1;";
  d->rcp_div = "(float)((double)$0 * $2)";

  /* the op templates every C-like dialect shares (codegen/cstyle.c) */
  cstyle_fill_c_ops(d);
  d->float_ops[OP_IS_FINITE] = "(bool)isfinite($0)";
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
