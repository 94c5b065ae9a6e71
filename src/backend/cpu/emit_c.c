/* emit_c.c — the C dialect of the C-style kernel printer (codegen/cstyle.h):
 * plain C11 that gcc and clang vectorise. Helpers are `static inline` and
 * branch-free where they can be, so the hot loop holds no calls but libm's
 * (the same functions the interpreter uses: expf, tanhf, ..., so the
 * results agree bit for bit).
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
    "static inline double hlo_sign(double x) { return x != x || x == 0 ? x : x < 0 ? -1.0 : 1.0; }\n";

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
  f[OP_EXPONENTIAL] = "exp$f($0)";
  f[OP_EXPONENTIAL_MINUS_ONE] = "expm1$f($0)";
  f[OP_LOG] = "log$f($0)";
  f[OP_LOG_PLUS_ONE] = "log1p$f($0)";
  f[OP_LOGISTIC] = "(($T)1 / (($T)1 + exp$f(-$0)))";
  f[OP_TANH] = "tanh$f($0)";
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
