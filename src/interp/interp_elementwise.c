/* interp_elementwise.c — kernels of the spec's elementwise ops.
 *
 * Each kernel walks the result's elements in row-major order and computes
 * each as the spec's semantics say, on the element's class: booleans and
 * integers (two's complement, wrapping as int_wrap does), floats, complex.
 *
 * Floats: every value of a float type narrower than f64 is exactly a
 * `float`, so ops on them are computed in float with the float libm
 * functions (expf, tanhf, ...) — the way XLA computes f16/bf16 in f32 — and
 * rounded to the result type (elem_set_f64: nearest even). f64 uses the
 * double functions. Add/subtract/multiply/divide/sqrt are computed in double
 * and rounded once, which equals the correctly rounded float result.
 * Complex values use <complex.h> in double precision.
 *
 * Where the spec leaves integer edge cases open (division by zero, shift
 * amounts of at least the bit width, float-to-integer overflow) we follow
 * XLA, whose results the test corpus records: x / 0 = -1 (all ones),
 * INT_MIN / -1 = INT_MIN, x % 0 = x, INT_MIN % -1 = 0; shift_left and
 * shift_right_logical by >= width give 0, shift_right_arithmetic gives the
 * sign fill; float-to-integer converts truncate and saturate, NaN gives 0.
 *
 * Float-to-float converts are float_convert's (bit for bit as ml_dtypes,
 * the spec leaving them open); integer-to-float converts round once to f32
 * or f64 and go through f32 to the narrower types, as XLA and ml_dtypes do. */
#include <complex.h>
#ifndef CMPLX /* glibc defines CMPLX for GCC only */
#define CMPLX(x, y) __builtin_complex((double)(x), (double)(y))
#endif
#include <math.h>
#include <string.h>
#include "interp/interp.h"
#include "support/float.h"

typedef double complex cplx;

/* ------------------------------------------------------------- helpers */

static bool is_f64(hlo_dtype t) { return t == HLO_F64; }

/* A mask of the low dtype_bits(t) bits. */
static uint64_t width_mask(hlo_dtype t) {
  int bits = dtype_bits(t);
  return bits >= 64 ? UINT64_MAX : (((uint64_t)1 << bits) - 1);
}

/* An integer element as int64: signed types sign-extended, unsigned types
 * zero-extended (ui64 above INT64_MAX wraps; arithmetic on the bits is the
 * same). */
static int64_t get_int(hlo_dtype t, const void *d, int64_t i) {
  if (dtype_class(t) == HLO_CLASS_UINT) return (int64_t)elem_get_u64(t, d, i);
  return elem_get_i64(t, d, i);
}

static cplx get_c(hlo_dtype t, const void *d, int64_t i) {
  double re, im;
  elem_get_c128(t, d, i, &re, &im);
  return CMPLX(re, im);
}

static void set_c(hlo_dtype t, void *d, int64_t i, cplx z) {
  elem_set_c128(t, d, i, creal(z), cimag(z));
}

/* Element `i` of `x`, where a 0-d `x` is broadcast (clamp, select). */
static int64_t bidx(const tensor *x, int64_t i) { return x->num_elems == 1 ? 0 : i; }

static hlo_status need_shape(const hlo_op *op, const tensor *x, int64_t n, const char *what) {
  if (x->type->kind != TYPE_TENSOR)
    return interp_error(op, HLO_INVALID_ARGUMENT, "%s must be a tensor", what);
  if (x->num_elems != n)
    return interp_error(op, HLO_INVALID_ARGUMENT, "%s has %lld elements, the result %lld", what,
                        (long long)x->num_elems, (long long)n);
  return NULL;
}

static hlo_status bad_type(const hlo_op *op, hlo_dtype t) {
  return interp_error(op, HLO_UNIMPLEMENTED, "element type %s is not supported",
                      hlo_dtype_name(t));
}

/* ------------------------------------------------------- float helpers */

/* Calls the float version of a libm function for narrow types and the
 * double one for f64. */
#define FL(t, x, fd, ff) (is_f64(t) ? fd(x) : (double)ff((float)(x)))

static double round_afz(double x) { return round(x); }
static double round_even(double x) {
  double r = rint(x); /* default mode: ties to even */
  return r;
}

static double logistic_f(hlo_dtype t, double x) {
  if (is_f64(t)) return 1.0 / (1.0 + exp(-x));
  float f = (float)x;
  return (double)(1.0f / (1.0f + expf(-f)));
}

static double rsqrt_f(hlo_dtype t, double x) {
  if (is_f64(t)) return 1.0 / sqrt(x);
  return (double)(1.0f / sqrtf((float)x));
}

static double sign_f(double x) {
  if (isnan(x)) return x;
  if (x == 0) return x; /* keeps -0.0 / +0.0 */
  return x < 0 ? -1.0 : 1.0;
}

/* IEEE maximum / minimum: NaN propagates; +0 > -0. */
static double max_f(double a, double b) {
  if (isnan(a)) return a;
  if (isnan(b)) return b;
  if (a == 0 && b == 0) return signbit(a) ? b : a;
  return a > b ? a : b;
}
static double min_f(double a, double b) {
  if (isnan(a)) return a;
  if (isnan(b)) return b;
  if (a == 0 && b == 0) return signbit(a) ? a : b;
  return a < b ? a : b;
}

/* Lexicographic (real, imag) order of complex numbers. */
static bool c_less(cplx a, cplx b) {
  return creal(a) < creal(b) || (creal(a) == creal(b) && cimag(a) < cimag(b));
}

/* ------------------------------------------------------ integer helpers */

static int64_t ipow(int64_t base, int64_t e, bool is_unsigned) {
  if (!is_unsigned && e < 0) {
    if (base == 1) return 1;
    if (base == -1) return (e & 1) ? -1 : 1;
    return 0;
  }
  uint64_t b = (uint64_t)base, r = 1, ue = (uint64_t)e;
  while (ue) {
    if (ue & 1) r *= b;
    b *= b;
    ue >>= 1;
  }
  return (int64_t)r;
}

static int popcount64(uint64_t x) { return __builtin_popcountll(x); }

static int64_t clz_t(hlo_dtype t, int64_t v) {
  int bits = dtype_bits(t);
  uint64_t u = (uint64_t)v & width_mask(t);
  if (u == 0) return bits;
  return __builtin_clzll(u) - (64 - bits);
}

/* --------------------------------------------------------- unary ops */

static bool unary_float(hlo_opcode c, hlo_dtype t, double x, double *r) {
  switch (c) {
  case OP_ABS: *r = fabs(x); return true;
  case OP_CBRT: *r = FL(t, x, cbrt, cbrtf); return true;
  case OP_CEIL: *r = ceil(x); return true;
  case OP_FLOOR: *r = floor(x); return true;
  case OP_COSINE: *r = FL(t, x, cos, cosf); return true;
  case OP_SINE: *r = FL(t, x, sin, sinf); return true;
  case OP_TAN: *r = FL(t, x, tan, tanf); return true;
  case OP_TANH: *r = FL(t, x, tanh, tanhf); return true;
  case OP_EXPONENTIAL: *r = FL(t, x, exp, expf); return true;
  case OP_EXPONENTIAL_MINUS_ONE: *r = FL(t, x, expm1, expm1f); return true;
  case OP_LOG: *r = FL(t, x, log, logf); return true;
  case OP_LOG_PLUS_ONE: *r = FL(t, x, log1p, log1pf); return true;
  case OP_LOGISTIC: *r = logistic_f(t, x); return true;
  case OP_NEGATE: *r = -x; return true;
  case OP_ROUND_NEAREST_AFZ: *r = round_afz(x); return true;
  case OP_ROUND_NEAREST_EVEN: *r = round_even(x); return true;
  case OP_RSQRT: *r = rsqrt_f(t, x); return true;
  case OP_SIGN: *r = sign_f(x); return true;
  case OP_SQRT: *r = sqrt(x); return true;
  case OP_REAL: *r = x; return true;
  case OP_IMAG: *r = 0; return true;
  default: return false;
  }
}

static cplx c_logistic(cplx z) { return 1.0 / (1.0 + cexp(-z)); }

/* The unary ops on complex values; false when `c` has none. */
static bool unary_complex(hlo_opcode c, cplx z, cplx *r) {
  switch (c) {
  case OP_CBRT: *r = cpow(z, 1.0 / 3.0); return true;
  case OP_COSINE: *r = ccos(z); return true;
  case OP_SINE: *r = csin(z); return true;
  case OP_TAN: *r = ctan(z); return true;
  case OP_TANH: *r = ctanh(z); return true;
  case OP_EXPONENTIAL: *r = cexp(z); return true;
  case OP_EXPONENTIAL_MINUS_ONE: {
    /* exp(z) - 1 accurately for small |z|: expm1(x)·cos y - 2 sin²(y/2)
     * + i exp(x) sin y. */
    double x = creal(z), y = cimag(z), s = sin(y / 2);
    if (y == 0) { /* real argument: keep the imaginary part an exact 0 (C99 cexp) */
      *r = CMPLX(expm1(x), y);
      return true;
    }
    *r = CMPLX(expm1(x) * cos(y) - 2 * s * s, exp(x) * sin(y));
    return true;
  }
  case OP_LOG: *r = clog(z); return true;
  case OP_LOG_PLUS_ONE: {
    double x = creal(z), y = cimag(z);
    /* log|1+z| = 0.5·log1p(2x + x² + y²) for small z */
    double l = fabs(x) < 0.5 && fabs(y) < 0.5 ? 0.5 * log1p(2 * x + x * x + y * y)
                                              : log(cabs(1.0 + z));
    *r = CMPLX(l, atan2(y, 1.0 + x));
    return true;
  }
  case OP_LOGISTIC: *r = c_logistic(z); return true;
  case OP_NEGATE: *r = -z; return true;
  case OP_RSQRT: *r = 1.0 / csqrt(z); return true;
  case OP_SQRT: *r = csqrt(z); return true;
  case OP_SIGN:
    if (isnan(creal(z)) || isnan(cimag(z))) *r = CMPLX(NAN, NAN);
    else if (creal(z) == 0 && cimag(z) == 0) *r = CMPLX(0.0, 0.0);
    else *r = z / cabs(z);
    return true;
  default: return false;
  }
}

/* The unary ops on integer and bool values (wrapping); false when `c` has
 * none. */
static bool unary_int(hlo_opcode c, hlo_dtype t, int64_t x, int64_t *r) {
  bool is_bool = dtype_class(t) == HLO_CLASS_BOOL;
  switch (c) {
  case OP_ABS: *r = x < 0 ? (int64_t)(0 - (uint64_t)x) : x; return true;
  case OP_NEGATE: *r = (int64_t)(0 - (uint64_t)x); return true;
  case OP_NOT: *r = is_bool ? !x : ~x; return true;
  case OP_POPCNT: *r = popcount64((uint64_t)x & width_mask(t)); return true;
  case OP_COUNT_LEADING_ZEROS: *r = clz_t(t, x); return true;
  case OP_SIGN:
    if (dtype_class(t) == HLO_CLASS_UINT) *r = x != 0;
    else *r = x < 0 ? -1 : x > 0;
    return true;
  default: return false;
  }
}

static hlo_status k_unary(interp *it, const hlo_op *op, tensor *const *in,
                          const hlo_type *const *rt, tensor **out) {
  (void)it;
  const tensor *x = in[0];
  hlo_dtype t = x->type->dtype, rtd = rt[0]->dtype;
  tensor *r;
  HLO_TRY(tensor_create(rt[0], &op->loc, &r));
  hlo_opcode c = op->opcode;
  hlo_status st = need_shape(op, x, r->num_elems, "operand");
  if (st) {
    tensor_release(r);
    return st;
  }
  switch (dtype_class(t)) {
  case HLO_CLASS_BOOL:
  case HLO_CLASS_SINT:
  case HLO_CLASS_UINT:
    for (int64_t i = 0; i < r->num_elems; i++) {
      int64_t v;
      if (!unary_int(c, t, get_int(t, x->data, i), &v)) {
        st = bad_type(op, t);
        break;
      }
      elem_set_i64(rtd, r->data, i, v);
    }
    break;
  case HLO_CLASS_FLOAT:
    for (int64_t i = 0; i < r->num_elems; i++) {
      double v;
      if (c == OP_IS_FINITE) {
        elem_set_i64(rtd, r->data, i, isfinite(elem_get_f64(t, x->data, i)));
        continue;
      }
      if (!unary_float(c, t, elem_get_f64(t, x->data, i), &v)) {
        st = bad_type(op, t);
        break;
      }
      elem_set_f64(rtd, r->data, i, v);
    }
    break;
  case HLO_CLASS_COMPLEX:
    for (int64_t i = 0; i < r->num_elems; i++) {
      cplx z = get_c(t, x->data, i), v;
      if (c == OP_ABS) {
        elem_set_f64(rtd, r->data, i, cabs(z));
      } else if (c == OP_REAL) {
        elem_set_f64(rtd, r->data, i, creal(z));
      } else if (c == OP_IMAG) {
        elem_set_f64(rtd, r->data, i, cimag(z));
      } else if (unary_complex(c, z, &v)) {
        set_c(rtd, r->data, i, v);
      } else {
        st = bad_type(op, t);
        break;
      }
    }
    break;
  }
  if (st) {
    tensor_release(r);
    return st;
  }
  *out = r;
  return NULL;
}

/* -------------------------------------------------------- binary ops */

static bool binary_int(hlo_opcode c, hlo_dtype t, int64_t a, int64_t b, int64_t *r) {
  hlo_dtype_class cls = dtype_class(t);
  bool is_bool = cls == HLO_CLASS_BOOL, is_u = cls == HLO_CLASS_UINT;
  uint64_t ua = (uint64_t)a, ub = (uint64_t)b;
  int bits = dtype_bits(t);
  switch (c) {
  case OP_ADD: *r = is_bool ? (a | b) : (int64_t)(ua + ub); return true;
  case OP_SUBTRACT: *r = is_bool ? (a & !b) : (int64_t)(ua - ub); return true;
  case OP_MULTIPLY: *r = is_bool ? (a & b) : (int64_t)(ua * ub); return true;
  case OP_AND: *r = a & b; return true;
  case OP_OR: *r = a | b; return true;
  case OP_XOR: *r = a ^ b; return true;
  case OP_MAXIMUM:
    if (is_u) *r = ua > ub ? a : b;
    else *r = a > b ? a : b;
    return true;
  case OP_MINIMUM:
    if (is_u) *r = ua < ub ? a : b;
    else *r = a < b ? a : b;
    return true;
  case OP_DIVIDE:
    if (b == 0) *r = -1;
    else if (is_u) *r = (int64_t)(ua / ub);
    else if (b == -1) *r = (int64_t)(0 - ua); /* INT_MIN / -1 wraps to INT_MIN */
    else *r = a / b;
    return true;
  case OP_REMAINDER:
    if (b == 0) *r = a;
    else if (is_u) *r = (int64_t)(ua % ub);
    else if (b == -1) *r = 0;
    else *r = a % b;
    return true;
  case OP_POWER: *r = ipow(a, b, is_u || is_bool); return true;
  case OP_SHIFT_LEFT:
  case OP_SHIFT_RIGHT_LOGICAL:
  case OP_SHIFT_RIGHT_ARITHMETIC: {
    uint64_t sh = ub & width_mask(t);
    uint64_t bitsv = ua & width_mask(t);
    /* arithmetic shifts act on the bit pattern as two's complement, for
     * unsigned types too (spec: shift_right_arithmetic; XLA does the same) */
    bool neg = bits > 0 && ((bitsv >> (bits - 1)) & 1);
    int64_t sx = neg && bits < 64 ? (int64_t)(bitsv | ~width_mask(t)) : (int64_t)bitsv;
    if (sh >= (uint64_t)bits) {
      *r = c == OP_SHIFT_RIGHT_ARITHMETIC ? (neg ? -1 : 0) : 0;
      return true;
    }
    if (c == OP_SHIFT_LEFT) *r = (int64_t)(bitsv << sh);
    else if (c == OP_SHIFT_RIGHT_LOGICAL) *r = (int64_t)(bitsv >> sh);
    else *r = sx >> sh;
    return true;
  }
  default: return false;
  }
}

/* The binary ops on float values in double; false when `c` has none. */
static bool binary_float(hlo_opcode c, hlo_dtype t, double a, double b, double *r) {
  switch (c) {
  case OP_ADD: *r = a + b; return true;
  case OP_SUBTRACT: *r = a - b; return true;
  case OP_MULTIPLY: *r = a * b; return true;
  case OP_DIVIDE: *r = a / b; return true;
  case OP_REMAINDER: *r = fmod(a, b); return true;
  case OP_MAXIMUM: *r = max_f(a, b); return true;
  case OP_MINIMUM: *r = min_f(a, b); return true;
  case OP_POWER: *r = is_f64(t) ? pow(a, b) : (double)powf((float)a, (float)b); return true;
  case OP_ATAN2: *r = is_f64(t) ? atan2(a, b) : (double)atan2f((float)a, (float)b); return true;
  default: return false;
  }
}

/* The binary ops on complex values; false when `c` has none. */
static bool binary_complex(hlo_opcode c, cplx a, cplx b, cplx *r) {
  switch (c) {
  case OP_ADD: *r = a + b; return true;
  case OP_SUBTRACT: *r = a - b; return true;
  case OP_MULTIPLY: *r = a * b; return true;
  case OP_DIVIDE: *r = a / b; return true;
  case OP_POWER: *r = cpow(a, b); return true;
  case OP_MAXIMUM: *r = c_less(a, b) ? b : a; return true;
  case OP_MINIMUM: *r = c_less(b, a) ? b : a; return true;
  case OP_ATAN2: {
    /* atan2(y, x) = -i · log((x + i·y) / sqrt(x² + y²)) */
    cplx num = b + I * a;
    *r = -I * clog(num / csqrt(b * b + a * a));
    return true;
  }
  default: return false;
  }
}

static hlo_status k_binary(interp *it, const hlo_op *op, tensor *const *in,
                           const hlo_type *const *rt, tensor **out) {
  (void)it;
  const tensor *x = in[0], *y = in[1];
  hlo_dtype t = x->type->dtype, rtd = rt[0]->dtype;
  tensor *r;
  HLO_TRY(tensor_create(rt[0], &op->loc, &r));
  hlo_status st = need_shape(op, x, r->num_elems, "lhs");
  if (!st) st = need_shape(op, y, r->num_elems, "rhs");
  hlo_opcode c = op->opcode;
  if (!st && c == OP_COMPLEX) {
    for (int64_t i = 0; i < r->num_elems; i++)
      elem_set_c128(rtd, r->data, i, elem_get_f64(t, x->data, i), elem_get_f64(t, y->data, i));
  } else if (!st) {
    switch (dtype_class(t)) {
    case HLO_CLASS_BOOL:
    case HLO_CLASS_SINT:
    case HLO_CLASS_UINT:
      for (int64_t i = 0; i < r->num_elems && !st; i++) {
        int64_t v;
        if (!binary_int(c, t, get_int(t, x->data, i), get_int(t, y->data, i), &v))
          st = bad_type(op, t);
        else
          elem_set_i64(rtd, r->data, i, v);
      }
      break;
    case HLO_CLASS_FLOAT:
      for (int64_t i = 0; i < r->num_elems && !st; i++) {
        double v;
        if (!binary_float(c, t, elem_get_f64(t, x->data, i), elem_get_f64(t, y->data, i), &v))
          st = bad_type(op, t);
        else
          elem_set_f64(rtd, r->data, i, v);
      }
      break;
    case HLO_CLASS_COMPLEX:
      for (int64_t i = 0; i < r->num_elems && !st; i++) {
        cplx v;
        if (!binary_complex(c, get_c(t, x->data, i), get_c(t, y->data, i), &v))
          st = bad_type(op, t);
        else
          set_c(rtd, r->data, i, v);
      }
      break;
    }
  }
  if (st) {
    tensor_release(r);
    return st;
  }
  *out = r;
  return NULL;
}

/* ------------------------------------------------------------ compare */

typedef enum { CMP_EQ, CMP_NE, CMP_GE, CMP_GT, CMP_LE, CMP_LT } cmp_dir;
typedef enum { CT_FLOAT, CT_TOTALORDER, CT_SIGNED, CT_UNSIGNED } cmp_type;

static int three_way_d(double a, double b) { return a < b ? -1 : a > b ? 1 : 0; }

/* comparison_direction `d` on a three-way result; unordered (NaN) operands
 * satisfy only NE. */
static bool apply_dir(cmp_dir d, int cmp, bool unordered) {
  if (unordered) return d == CMP_NE;
  switch (d) {
  case CMP_EQ: return cmp == 0;
  case CMP_NE: return cmp != 0;
  case CMP_GE: return cmp >= 0;
  case CMP_GT: return cmp > 0;
  case CMP_LE: return cmp <= 0;
  case CMP_LT: return cmp < 0;
  }
  return false;
}

/* Total-order key of a float's bits: -NaN < -inf < ... < -0 < +0 < ... <
 * +inf < +NaN (IEEE-754 totalOrder). */
static uint64_t total_key(hlo_dtype t, uint64_t bits) {
  int nb = dtype_bits(t);
  uint64_t sign = (uint64_t)1 << (nb - 1), mask = width_mask(t);
  bits &= mask;
  return (bits & sign) ? (~bits & mask) : (bits | sign);
}

static hlo_status k_compare(interp *it, const hlo_op *op, tensor *const *in,
                            const hlo_type *const *rt, tensor **out) {
  (void)it;
  const tensor *x = in[0], *y = in[1];
  hlo_dtype t = x->type->dtype;
  const hlo_attr *da = op_attr(op, "comparison_direction");
  if (!da || da->kind != ATTR_ENUM || !da->u.en.value)
    return interp_error(op, HLO_INVALID_ARGUMENT, "missing comparison_direction");
  static const char *dirs[] = {"EQ", "NE", "GE", "GT", "LE", "LT"};
  int d = -1;
  for (int k = 0; k < 6; k++)
    if (!strcmp(da->u.en.value, dirs[k])) d = k;
  if (d < 0)
    return interp_error(op, HLO_INVALID_ARGUMENT, "unknown comparison_direction %s",
                        da->u.en.value);
  hlo_dtype_class cls = dtype_class(t);
  cmp_type ct = cls == HLO_CLASS_SINT ? CT_SIGNED
                : (cls == HLO_CLASS_UINT || cls == HLO_CLASS_BOOL) ? CT_UNSIGNED
                                                                   : CT_FLOAT;
  const hlo_attr *ta = op_attr(op, "compare_type");
  if (ta && ta->kind == ATTR_ENUM && ta->u.en.value && !strcmp(ta->u.en.value, "TOTALORDER") &&
      cls == HLO_CLASS_FLOAT)
    ct = CT_TOTALORDER;
  tensor *r;
  HLO_TRY(tensor_create(rt[0], &op->loc, &r));
  hlo_status st = need_shape(op, x, r->num_elems, "lhs");
  if (!st) st = need_shape(op, y, r->num_elems, "rhs");
  for (int64_t i = 0; i < r->num_elems && !st; i++) {
    bool v = false;
    switch (cls) {
    case HLO_CLASS_BOOL:
    case HLO_CLASS_UINT: {
      uint64_t a = elem_get_u64(t, x->data, i), b = elem_get_u64(t, y->data, i);
      v = apply_dir((cmp_dir)d, a < b ? -1 : a > b, false);
      break;
    }
    case HLO_CLASS_SINT: {
      int64_t a = elem_get_i64(t, x->data, i), b = elem_get_i64(t, y->data, i);
      v = apply_dir((cmp_dir)d, a < b ? -1 : a > b, false);
      break;
    }
    case HLO_CLASS_FLOAT:
      if (ct == CT_TOTALORDER) {
        uint64_t a = total_key(t, elem_get_bits(t, x->data, i));
        uint64_t b = total_key(t, elem_get_bits(t, y->data, i));
        v = apply_dir((cmp_dir)d, a < b ? -1 : a > b, false);
      } else {
        double a = elem_get_f64(t, x->data, i), b = elem_get_f64(t, y->data, i);
        v = apply_dir((cmp_dir)d, three_way_d(a, b), isnan(a) || isnan(b));
      }
      break;
    case HLO_CLASS_COMPLEX: {
      cplx a = get_c(t, x->data, i), b = get_c(t, y->data, i);
      if (d == CMP_EQ) v = a == b;
      else if (d == CMP_NE) v = a != b;
      else {
        bool un = isnan(creal(a)) || isnan(cimag(a)) || isnan(creal(b)) || isnan(cimag(b));
        int cmp = c_less(a, b) ? -1 : c_less(b, a) ? 1 : 0;
        v = apply_dir((cmp_dir)d, cmp, un);
      }
      break;
    }
    }
    elem_set_i64(rt[0]->dtype, r->data, i, v);
  }
  if (st) {
    tensor_release(r);
    return st;
  }
  *out = r;
  return NULL;
}

/* ------------------------------------------------------ clamp, select */

/* Copies element `j` of `src` to element `i` of `dst` (same dtype). */
static void copy_elem(hlo_dtype t, void *dst, int64_t i, const void *src, int64_t j) {
  size_t s = hlo_dtype_size(t);
  memcpy((uint8_t *)dst + (size_t)i * s, (const uint8_t *)src + (size_t)j * s, s);
}

/* clamp(min, operand, max) = minimum(maximum(operand, min), max), with 0-d
 * min/max broadcast. */
static hlo_status k_clamp(interp *it, const hlo_op *op, tensor *const *in,
                          const hlo_type *const *rt, tensor **out) {
  (void)it;
  const tensor *mn = in[0], *x = in[1], *mx = in[2];
  hlo_dtype t = x->type->dtype;
  tensor *r;
  HLO_TRY(tensor_create(rt[0], &op->loc, &r));
  int64_t n = r->num_elems;
  hlo_status st = need_shape(op, x, n, "operand");
  if (!st && mn->num_elems != 1) st = need_shape(op, mn, n, "min");
  if (!st && mx->num_elems != 1) st = need_shape(op, mx, n, "max");
  for (int64_t i = 0; i < n && !st; i++) {
    int64_t im = bidx(mn, i), iM = bidx(mx, i);
    switch (dtype_class(t)) {
    case HLO_CLASS_BOOL:
    case HLO_CLASS_SINT:
    case HLO_CLASS_UINT: {
      int64_t v, tmp;
      binary_int(OP_MAXIMUM, t, get_int(t, x->data, i), get_int(t, mn->data, im), &tmp);
      binary_int(OP_MINIMUM, t, tmp, get_int(t, mx->data, iM), &v);
      elem_set_i64(rt[0]->dtype, r->data, i, v);
      break;
    }
    case HLO_CLASS_FLOAT: {
      double v = min_f(max_f(elem_get_f64(t, x->data, i), elem_get_f64(t, mn->data, im)),
                       elem_get_f64(t, mx->data, iM));
      elem_set_f64(rt[0]->dtype, r->data, i, v);
      break;
    }
    case HLO_CLASS_COMPLEX: {
      cplx v, tmp;
      binary_complex(OP_MAXIMUM, get_c(t, x->data, i), get_c(t, mn->data, im), &tmp);
      binary_complex(OP_MINIMUM, tmp, get_c(t, mx->data, iM), &v);
      set_c(rt[0]->dtype, r->data, i, v);
      break;
    }
    }
  }
  if (st) {
    tensor_release(r);
    return st;
  }
  *out = r;
  return NULL;
}

static hlo_status k_select(interp *it, const hlo_op *op, tensor *const *in,
                           const hlo_type *const *rt, tensor **out) {
  (void)it;
  const tensor *p = in[0], *a = in[1], *b = in[2];
  tensor *r;
  HLO_TRY(tensor_create(rt[0], &op->loc, &r));
  int64_t n = r->num_elems;
  hlo_status st = need_shape(op, a, n, "on_true");
  if (!st) st = need_shape(op, b, n, "on_false");
  if (!st && p->num_elems != 1) st = need_shape(op, p, n, "pred");
  if (!st && a->type->dtype != rt[0]->dtype)
    st = interp_error(op, HLO_INVALID_ARGUMENT, "on_true and result element types differ");
  for (int64_t i = 0; i < n && !st; i++) {
    bool pv = elem_get_i64(p->type->dtype, p->data, bidx(p, i)) != 0;
    copy_elem(rt[0]->dtype, r->data, i, pv ? a->data : b->data, i);
  }
  if (st) {
    tensor_release(r);
    return st;
  }
  *out = r;
  return NULL;
}

/* ------------------------------------------------------------ convert */

/* Integer `v` (sign-magnitude: `neg`, `mag`) to float type `t`, as XLA and
 * ml_dtypes convert: f64 and f32 round once (C's conversion), the narrower
 * types through f32 (two roundings for |v| > 2^24). */
static void set_float_from_int(hlo_dtype t, void *d, int64_t i, bool neg, uint64_t mag) {
  if (t == HLO_F64) {
    double v = (double)mag;
    elem_set_f64(t, d, i, neg ? -v : v);
    return;
  }
  float v = (float)mag;
  if (neg) v = -v;
  uint32_t b;
  memcpy(&b, &v, 4);
  elem_set_bits(t, d, i, float_convert(HLO_F32, t, b));
}

/* The real part of element `i` of float or complex tensor data of type `s`
 * converted to float type `t` (float_convert: bit for bit as ml_dtypes). */
static uint64_t float_bits_to(hlo_dtype s, const void *d, int64_t i, hlo_dtype t) {
  if (s == HLO_C64 || s == HLO_C128) {
    hlo_dtype part = s == HLO_C64 ? HLO_F32 : HLO_F64;
    return float_convert(part, t, elem_get_bits(part, d, 2 * i));
  }
  return float_convert(s, t, elem_get_bits(s, d, i));
}

/* Float to integer type `t`: truncate toward zero, saturate, NaN → 0. */
static void set_int_from_float(hlo_dtype t, void *d, int64_t i, double v) {
  if (isnan(v)) {
    elem_set_i64(t, d, i, 0);
    return;
  }
  v = trunc(v);
  if (dtype_class(t) == HLO_CLASS_UINT) {
    uint64_t mx = int_max(t);
    if (v <= 0) elem_set_u64(t, d, i, 0);
    else if (v >= (double)mx) elem_set_u64(t, d, i, mx);
    else elem_set_u64(t, d, i, (uint64_t)v);
  } else {
    int64_t mn = int_min(t);
    int64_t mx = (int64_t)int_max(t);
    if (v <= (double)mn) elem_set_i64(t, d, i, mn);
    else if (v >= (double)mx) elem_set_i64(t, d, i, mx);
    else elem_set_i64(t, d, i, (int64_t)v);
  }
}

static hlo_status k_convert(interp *it, const hlo_op *op, tensor *const *in,
                            const hlo_type *const *rt, tensor **out) {
  (void)it;
  const tensor *x = in[0];
  hlo_dtype s = x->type->dtype, t = rt[0]->dtype;
  tensor *r;
  HLO_TRY(tensor_create(rt[0], &op->loc, &r));
  hlo_status st = need_shape(op, x, r->num_elems, "operand");
  if (st) {
    tensor_release(r);
    return st;
  }
  hlo_dtype_class sc = dtype_class(s), tc = dtype_class(t);
  for (int64_t i = 0; i < r->num_elems; i++) {
    if (tc == HLO_CLASS_BOOL) {
      bool v;
      if (sc == HLO_CLASS_FLOAT || sc == HLO_CLASS_COMPLEX) v = elem_get_f64(s, x->data, i) != 0;
      else v = elem_get_u64(s, x->data, i) != 0;
      elem_set_i64(t, r->data, i, v);
    } else if (tc == HLO_CLASS_SINT || tc == HLO_CLASS_UINT) {
      if (sc == HLO_CLASS_FLOAT || sc == HLO_CLASS_COMPLEX)
        set_int_from_float(t, r->data, i, elem_get_f64(s, x->data, i));
      else
        elem_set_i64(t, r->data, i, get_int(s, x->data, i));
    } else if (tc == HLO_CLASS_FLOAT) {
      if (sc == HLO_CLASS_SINT) {
        int64_t iv = elem_get_i64(s, x->data, i);
        set_float_from_int(t, r->data, i, iv < 0, iv < 0 ? 0 - (uint64_t)iv : (uint64_t)iv);
      } else if (sc == HLO_CLASS_UINT || sc == HLO_CLASS_BOOL) {
        set_float_from_int(t, r->data, i, false, elem_get_u64(s, x->data, i));
      } else {
        elem_set_bits(t, r->data, i, float_bits_to(s, x->data, i, t));
      }
    } else { /* complex */
      if (sc == HLO_CLASS_COMPLEX) {
        set_c(t, r->data, i, get_c(s, x->data, i));
      } else if (sc == HLO_CLASS_UINT) {
        elem_set_c128(t, r->data, i, (double)elem_get_u64(s, x->data, i), 0);
      } else {
        elem_set_c128(t, r->data, i, elem_get_f64(s, x->data, i), 0);
      }
    }
  }
  *out = r;
  return NULL;
}

/* ---------------------------------------------------- bitcast_convert */

/* Bits of element `i` of a buffer of type `t` (≤ 64-bit types). */
static uint64_t bits_at(hlo_dtype t, const uint8_t *d, int64_t i) {
  return elem_get_bits(t, d, i) & width_mask(t);
}

static hlo_status k_bitcast_convert(interp *it, const hlo_op *op, tensor *const *in,
                                    const hlo_type *const *rt, tensor **out) {
  (void)it;
  const tensor *x = in[0];
  hlo_dtype s = x->type->dtype, t = rt[0]->dtype;
  int sb = dtype_bits(s), tb = dtype_bits(t);
  tensor *r;
  HLO_TRY(tensor_create(rt[0], &op->loc, &r));
  if ((int64_t)sb * x->num_elems != (int64_t)tb * r->num_elems) {
    tensor_release(r);
    return interp_error(op, HLO_INVALID_ARGUMENT, "operand and result sizes in bits differ");
  }
  if (sb % 8 == 0 && tb % 8 == 0 && hlo_dtype_size(s) * 8 == (size_t)sb &&
      hlo_dtype_size(t) * 8 == (size_t)tb) {
    /* Byte types: row-major little-endian bytes are the bits. */
    memcpy(r->data, x->data, r->nbytes);
  } else if (sb > 64 || tb > 64) {
    tensor_release(r);
    return bad_type(op, sb > 64 ? s : t);
  } else if (sb == tb) {
    for (int64_t i = 0; i < r->num_elems; i++)
      elem_set_bits(t, r->data, i, bits_at(s, x->data, i));
  } else if (tb < sb) {
    int k = sb / tb;
    for (int64_t i = 0; i < x->num_elems; i++) {
      uint64_t b = bits_at(s, x->data, i);
      for (int j = 0; j < k; j++)
        elem_set_bits(t, r->data, i * k + j, (b >> (j * tb)) & width_mask(t));
    }
  } else {
    int k = tb / sb;
    for (int64_t i = 0; i < r->num_elems; i++) {
      uint64_t b = 0;
      for (int j = 0; j < k; j++) b |= bits_at(s, x->data, i * k + j) << (j * sb);
      elem_set_bits(t, r->data, i, b);
    }
  }
  /* Sub-byte integer storage is sign-extended for signed types. */
  if (tb < 8 && dtype_class(t) == HLO_CLASS_SINT)
    for (int64_t i = 0; i < r->num_elems; i++)
      elem_set_i64(t, r->data, i, int_wrap(t, (int64_t)elem_get_bits(t, r->data, i)));
  *out = r;
  return NULL;
}

/* ---------------------------------------------------- reduce_precision */

/* XLA's reduce-precision on the bit pattern of a value of float type `t`
 * (xla/service/elemental_ir_emitter.cc EmitReducePrecisionIR): round the
 * mantissa to `mbits` bits (ties to even), then flush exponents outside
 * the range of an `ebits`-bit exponent to ±inf / ±0. NaN stays NaN. */
static uint64_t reduce_precision_bits(const float_format *f, uint64_t x, int ebits, int mbits) {
  int src_m = f->mant_bits, src_e = f->exp_bits, nb = f->bits;
  uint64_t mask = nb >= 64 ? UINT64_MAX : (((uint64_t)1 << nb) - 1);
  uint64_t orig = x;
  uint64_t exp_mask = (((uint64_t)1 << src_e) - 1) << src_m;
  uint64_t mant_mask = ((uint64_t)1 << src_m) - 1;
  bool is_nan = (x & exp_mask) == exp_mask && (x & mant_mask) != 0;
  if (mbits < src_m) {
    uint64_t last = (uint64_t)1 << (src_m - mbits);
    uint64_t base_bias = (last >> 1) - 1;
    uint64_t last_bit = (x & last) >> (src_m - mbits);
    x = (x + last_bit + base_bias) & ~(last - 1) & mask;
  }
  if (ebits < src_e) {
    uint64_t sign = (uint64_t)1 << (nb - 1);
    int64_t bias = ((int64_t)1 << (src_e - 1)) - 1;
    int64_t rbias = ((int64_t)1 << (ebits - 1)) - 1;
    uint64_t rmax = (uint64_t)(bias + rbias), rmin = (uint64_t)(bias - rbias);
    uint64_t e = x & exp_mask;
    if (e > (rmax << src_m)) x = (x & sign) | exp_mask;
    else if (e <= (rmin << src_m)) x = x & sign;
  }
  if (is_nan) {
    /* NaNs stay NaN when the reduced format has mantissa bits; with none,
     * it cannot hold a NaN and the result is inf of the same sign. */
    if (mbits > 0) return orig;
    return (orig & ((uint64_t)1 << (nb - 1))) | exp_mask;
  }
  return x & mask;
}

static hlo_status k_reduce_precision(interp *it, const hlo_op *op, tensor *const *in,
                                     const hlo_type *const *rt, tensor **out) {
  (void)it;
  const tensor *x = in[0];
  hlo_dtype t = x->type->dtype;
  float_format f;
  if (!float_format_of(t, &f) || f.specials != FLOAT_IEEE) return bad_type(op, t);
  int64_t eb = op_attr_int(op, "exponent_bits", -1), mb = op_attr_int(op, "mantissa_bits", -1);
  if (eb < 1 || mb < 0)
    return interp_error(op, HLO_INVALID_ARGUMENT, "bad exponent_bits/mantissa_bits");
  tensor *r;
  HLO_TRY(tensor_create(rt[0], &op->loc, &r));
  for (int64_t i = 0; i < r->num_elems; i++) {
    uint64_t b = elem_get_bits(t, x->data, i);
    elem_set_bits(t, r->data, i,
                  reduce_precision_bits(&f, b, eb > 60 ? 60 : (int)eb, mb > 60 ? 60 : (int)mb));
  }
  *out = r;
  return NULL;
}

/* ------------------------------------------------------- registration */

void interp_register_elementwise(interp_kernel *table) {
  static const hlo_opcode unary[] = {
      OP_ABS, OP_CBRT, OP_CEIL, OP_COUNT_LEADING_ZEROS, OP_COSINE, OP_EXPONENTIAL,
      OP_EXPONENTIAL_MINUS_ONE, OP_FLOOR, OP_IMAG, OP_IS_FINITE, OP_LOG, OP_LOG_PLUS_ONE,
      OP_LOGISTIC, OP_NEGATE, OP_NOT, OP_POPCNT, OP_REAL, OP_ROUND_NEAREST_AFZ,
      OP_ROUND_NEAREST_EVEN, OP_RSQRT, OP_SIGN, OP_SINE, OP_SQRT, OP_TAN, OP_TANH,
  };
  static const hlo_opcode binary[] = {
      OP_ADD, OP_AND, OP_ATAN2, OP_COMPLEX, OP_DIVIDE, OP_MAXIMUM, OP_MINIMUM, OP_MULTIPLY,
      OP_OR, OP_POWER, OP_REMAINDER, OP_SHIFT_LEFT, OP_SHIFT_RIGHT_ARITHMETIC,
      OP_SHIFT_RIGHT_LOGICAL, OP_SUBTRACT, OP_XOR,
  };
  for (size_t i = 0; i < sizeof unary / sizeof unary[0]; i++) table[unary[i]] = k_unary;
  for (size_t i = 0; i < sizeof binary / sizeof binary[0]; i++) table[binary[i]] = k_binary;
  table[OP_COMPARE] = k_compare;
  table[OP_CLAMP] = k_clamp;
  table[OP_SELECT] = k_select;
  table[OP_CONVERT] = k_convert;
  table[OP_BITCAST_CONVERT] = k_bitcast_convert;
  table[OP_REDUCE_PRECISION] = k_reduce_precision;
  interp_register_quant(table);
}
