/* interp_check.c — the check dialect of the conformance corpus
 * (check.expect_eq, expect_eq_const, expect_almost_eq(_const),
 * expect_close) and the `@check.*` custom calls of its testdata files.
 *
 * Semantics (shared/conformance/README.md, after stablehlo's CheckOps.cpp and
 * Element.cpp areApproximatelyEqual):
 *   exact        element-wise ==: integers and bools equal, IEEE float ==
 *                (-0 == +0, NaN != NaN), complex component-wise.
 *   almost equal floats: both NaN, or ==, or both finite and |a - b| <= tol
 *                (in double); complex component-wise; integers exact.
 *   close        min <= ULP distance <= max; a non-finite element must be
 *                bitwise equal to the other or both must be NaN.
 * A failed check is HLO_FAILED_CHECK at the check op, naming the first
 * differing element's index and both values. */
#include <math.h>
#include <stdio.h>
#include <string.h>
#include "interp/interp.h"
#include "support/float.h"

typedef enum { MODE_EXACT, MODE_ALMOST, MODE_CLOSE } check_mode;

typedef struct check_rule {
  check_mode mode;
  double tol;                 /* MODE_ALMOST */
  uint64_t min_ulp, max_ulp;  /* MODE_CLOSE */
} check_rule;

/* A view of expected or actual values: a tensor or a dense literal. */
typedef struct vals {
  hlo_dtype dtype;
  const quant_params *quant;
  const uint8_t *data;
  bool splat;
  int64_t n;
} vals;

static bool almost_eq_f(double a, double b, double tol) {
  if (isnan(a) && isnan(b)) return true;
  if (a == b) return true;
  if (!isfinite(a) || !isfinite(b)) return false;
  return fabs(a - b) <= tol;
}

/* Position of float bits on a line of consecutive values (so the ULP
 * distance is the difference; -0 and +0 coincide). */
static int64_t ulp_key(hlo_dtype t, uint64_t bits) {
  int nb = dtype_bits(t);
  uint64_t sign = (uint64_t)1 << (nb - 1);
  uint64_t mag = bits & (sign - 1);
  return (bits & sign) ? -(int64_t)mag : (int64_t)mag;
}

/* check.expect_close on one float element: both non-finite and equal (or
 * both NaN), or an ULP distance within [min_ulp, max_ulp]. */
static bool close_f(hlo_dtype t, uint64_t ab, uint64_t eb, const check_rule *r) {
  double a = float_decode(t, ab), e = float_decode(t, eb);
  if (t == HLO_F64) {
    memcpy(&a, &ab, 8);
    memcpy(&e, &eb, 8);
  } else if (t == HLO_F32) {
    uint32_t a32 = (uint32_t)ab, e32 = (uint32_t)eb;
    float fa, fe;
    memcpy(&fa, &a32, 4);
    memcpy(&fe, &e32, 4);
    a = fa;
    e = fe;
  }
  if (!isfinite(a) || !isfinite(e)) return ab == eb || (isnan(a) && isnan(e));
  int64_t ka = ulp_key(t, ab), ke = ulp_key(t, eb);
  uint64_t d = ka > ke ? (uint64_t)(ka - ke) : (uint64_t)(ke - ka);
  return d >= r->min_ulp && d <= r->max_ulp;
}

static uint64_t float_bits(hlo_dtype t, const uint8_t *data, int64_t i) {
  return elem_get_bits(t, data, i);
}

/* Float part `part` (0 real, 1 imag) of a complex element as the bits of
 * its component type. */
static uint64_t complex_part_bits(hlo_dtype t, const uint8_t *data, int64_t i, int part) {
  if (t == HLO_C64) {
    uint32_t v;
    memcpy(&v, data + (size_t)i * 8 + (size_t)part * 4, 4);
    return v;
  }
  uint64_t v;
  memcpy(&v, data + (size_t)i * 16 + (size_t)part * 8, 8);
  return v;
}

/* Element ia of the actual values matches element ie of the expected ones
 * under rule `r` (exact, within tolerance, or within ULPs). */
static bool elem_matches(const vals *a, int64_t ia, const vals *e, int64_t ie,
                         const check_rule *r) {
  hlo_dtype t = a->dtype;
  switch (dtype_class(t)) {
  case HLO_CLASS_BOOL:
  case HLO_CLASS_SINT:
  case HLO_CLASS_UINT:
    if (dtype_class(e->dtype) == HLO_CLASS_FLOAT)
      return almost_eq_f(elem_get_f64(t, a->data, ia), elem_get_f64(e->dtype, e->data, ie),
                         r->mode == MODE_EXACT ? 0 : r->tol);
    if (dtype_class(t) == HLO_CLASS_UINT)
      return elem_get_u64(t, a->data, ia) == elem_get_u64(e->dtype, e->data, ie);
    return elem_get_i64(t, a->data, ia) == elem_get_i64(e->dtype, e->data, ie);
  case HLO_CLASS_FLOAT: {
    if (r->mode == MODE_CLOSE && e->dtype == t)
      return close_f(t, float_bits(t, a->data, ia), float_bits(t, e->data, ie), r);
    double x = elem_get_f64(t, a->data, ia), y = elem_get_f64(e->dtype, e->data, ie);
    if (r->mode == MODE_EXACT) return x == y;
    return almost_eq_f(x, y, r->mode == MODE_ALMOST ? r->tol : 0);
  }
  case HLO_CLASS_COMPLEX: {
    if (r->mode == MODE_CLOSE && e->dtype == t) {
      hlo_dtype pt = t == HLO_C64 ? HLO_F32 : HLO_F64;
      for (int p = 0; p < 2; p++)
        if (!close_f(pt, complex_part_bits(t, a->data, ia, p), complex_part_bits(t, e->data, ie, p),
                     r))
          return false;
      return true;
    }
    double ar, ai, er, ei;
    elem_get_c128(t, a->data, ia, &ar, &ai);
    elem_get_c128(e->dtype, e->data, ie, &er, &ei);
    if (r->mode == MODE_EXACT) return ar == er && ai == ei;
    return almost_eq_f(ar, er, r->tol) && almost_eq_f(ai, ei, r->tol);
  }
  }
  return false;
}

/* Element i of `v` as text for a mismatch message. */
static void format_elem(char *buf, size_t n, const vals *v, int64_t i) {
  hlo_dtype t = v->dtype;
  switch (dtype_class(t)) {
  case HLO_CLASS_BOOL:
    snprintf(buf, n, "%s", elem_get_i64(t, v->data, i) ? "true" : "false");
    break;
  case HLO_CLASS_SINT:
    snprintf(buf, n, "%lld", (long long)elem_get_i64(t, v->data, i));
    break;
  case HLO_CLASS_UINT:
    snprintf(buf, n, "%llu", (unsigned long long)elem_get_u64(t, v->data, i));
    break;
  case HLO_CLASS_FLOAT:
    snprintf(buf, n, t == HLO_F64 ? "%.17g" : "%.9g", elem_get_f64(t, v->data, i));
    break;
  case HLO_CLASS_COMPLEX: {
    double re, im;
    elem_get_c128(t, v->data, i, &re, &im);
    snprintf(buf, n, t == HLO_C128 ? "(%.17g, %.17g)" : "(%.9g, %.9g)", re, im);
    break;
  }
  }
}

/* The multi-index `[i, j, ...]` of linear index `lin` in type `t`. */
static void format_index(char *buf, size_t n, const hlo_type *t, int64_t lin) {
  int64_t idx[16] = {0};
  uint32_t rank = t->rank <= 16 ? t->rank : 0;
  if (rank) index_unlinear(t->dims, rank, lin, idx);
  size_t used = (size_t)snprintf(buf, n, "[");
  for (uint32_t d = 0; d < rank && used < n; d++)
    used += (size_t)snprintf(buf + used, n - used, d ? ", %lld" : "%lld", (long long)idx[d]);
  if (used < n) snprintf(buf + used, n - used, "]");
}

static const char *mode_name(check_mode m) {
  return m == MODE_EXACT ? "equal" : m == MODE_ALMOST ? "almost equal" : "close";
}

/* Compares actual tensor `x` with expected values `e`. */
static hlo_status compare(interp *it, const hlo_op *op, const char *who, const tensor *x,
                          const vals *e, const check_rule *r) {
  if (x->type->kind != TYPE_TENSOR)
    return interp_error(op, HLO_INVALID_ARGUMENT, "can only check tensors");
  tensor *deq = NULL;
  const tensor *ax = x;
  if (x->type->quant && !e->quant && dtype_class(e->dtype) == HLO_CLASS_FLOAT) {
    /* A quantized result against float values: compare the dequantized. */
    HLO_TRY(interp_dequantize(it, op, x, &deq));
    ax = deq;
  }
  vals a = {ax->type->dtype, ax->type->quant, ax->data, false, ax->num_elems};
  hlo_status st = NULL;
  if (!e->splat && e->n != a.n) {
    st = status_at(HLO_FAILED_CHECK, &op->loc, "%s: actual has %lld elements, expected %lld", who,
                   (long long)a.n, (long long)e->n);
  } else if (dtype_class(a.dtype) != dtype_class(e->dtype) &&
             !(dtype_class(e->dtype) == HLO_CLASS_FLOAT && dtype_is_int(a.dtype))) {
    st = status_at(HLO_FAILED_CHECK, &op->loc, "%s: actual element type %s, expected %s", who,
                   hlo_dtype_name(a.dtype), hlo_dtype_name(e->dtype));
  } else {
    for (int64_t i = 0; i < a.n; i++) {
      int64_t ie = e->splat ? 0 : i;
      if (elem_matches(&a, i, e, ie, r)) continue;
      char ia[256], va[96], ve[96];
      format_index(ia, sizeof ia, ax->type, i);
      format_elem(va, sizeof va, &a, i);
      format_elem(ve, sizeof ve, e, ie);
      if (r->mode == MODE_CLOSE)
        st = status_at(HLO_FAILED_CHECK, &op->loc,
                       "%s: element %s is not close (ULP distance %llu..%llu): %s (actual) vs %s "
                       "(expected)",
                       who, ia, (unsigned long long)r->min_ulp, (unsigned long long)r->max_ulp, va,
                       ve);
      else
        st = status_at(HLO_FAILED_CHECK, &op->loc,
                       "%s: element %s is not %s: %s (actual) vs %s (expected)", who, ia,
                       mode_name(r->mode), va, ve);
      break;
    }
  }
  tensor_release(deq);
  return st;
}

static vals tensor_vals(const tensor *x) {
  vals v = {x->type->dtype, x->type->quant, x->data, false, x->num_elems};
  return v;
}

static hlo_status literal_vals(const hlo_op *op, vals *out) {
  const hlo_attr *a = op_attr(op, "value");
  if (!a || a->kind != ATTR_DENSE || !a->u.dense.type)
    return interp_error(op, HLO_INVALID_ARGUMENT, "missing dense `value` attribute");
  out->dtype = a->u.dense.type->dtype;
  out->quant = a->u.dense.type->quant;
  out->data = a->u.dense.data;
  out->splat = a->u.dense.splat;
  out->n = a->u.dense.num_elems;
  return NULL;
}

/* A float or integer attribute as a double, or `dflt`. */
static double attr_double(const hlo_op *op, const char *name, double dflt) {
  const hlo_attr *a = op_attr(op, name);
  if (!a) return dflt;
  if (a->kind == ATTR_FLOAT) return a->u.f.v;
  if (a->kind == ATTR_INT) return (double)a->u.i.v;
  return dflt;
}

/* Kernel of the check.expect_* ops: compares operand 0 with operand 1 or
 * the `value` literal; HLO_FAILED_CHECK names the first mismatch. */
static hlo_status k_expect(interp *it, const hlo_op *op, tensor *const *in,
                           const hlo_type *const *rt, tensor **out) {
  (void)rt;
  (void)out;
  check_rule r = {MODE_EXACT, 0, 0, 0};
  vals e;
  switch (op->opcode) {
  case OP_CHECK_EXPECT_EQ_CONST:
  case OP_CHECK_EXPECT_ALMOST_EQ_CONST:
    HLO_TRY(literal_vals(op, &e));
    break;
  default:
    if (op->num_operands < 2)
      return interp_error(op, HLO_INVALID_ARGUMENT, "expects two operands");
    e = tensor_vals(in[1]);
    break;
  }
  if (op->num_operands < 1) return interp_error(op, HLO_INVALID_ARGUMENT, "expects an operand");
  if (op->opcode == OP_CHECK_EXPECT_ALMOST_EQ || op->opcode == OP_CHECK_EXPECT_ALMOST_EQ_CONST) {
    r.mode = MODE_ALMOST;
    r.tol = attr_double(op, "tolerance", 1e-4);
  } else if (op->opcode == OP_CHECK_EXPECT_CLOSE) {
    r.mode = MODE_CLOSE;
    int64_t mx = op_attr_int(op, "max_ulp_difference", 0);
    int64_t mn = op_attr_int(op, "min_ulp_difference", 0);
    r.max_ulp = (uint64_t)mx;
    r.min_ulp = (uint64_t)mn;
  }
  return compare(it, op, op_name(op->opcode), in[0], &e, &r);
}

hlo_status interp_check_custom_call(interp *it, const hlo_op *op, tensor *const *in,
                                    const hlo_type *const *result_types, tensor **out) {
  const hlo_attr *ta = op_attr(op, "call_target_name");
  if (!ta || (ta->kind != ATTR_STRING && ta->kind != ATTR_SYMBOL))
    return interp_error(op, HLO_INVALID_ARGUMENT, "missing call_target_name");
  const char *name = ta->u.str.s;
  if (op->num_operands != 2)
    return interp_error(op, HLO_INVALID_ARGUMENT, "@%s expects (actual, expected) operands",
                        name);
  check_rule r = {MODE_EXACT, 0, 0, 0};
  bool returns_pred = false;
  if (!strcmp(name, "check.expect_eq")) {
    r.mode = MODE_EXACT;
  } else if (!strcmp(name, "check.expect_close")) {
    r.mode = MODE_CLOSE;
    r.max_ulp = 3;
  } else if (!strcmp(name, "check.expect_almost_eq")) {
    r.mode = MODE_ALMOST;
    r.tol = 1e-3;
  } else if (!strcmp(name, "check.eq")) {
    r.mode = MODE_ALMOST; /* integers compare exactly in MODE_ALMOST too */
    r.tol = 1e-4;
    returns_pred = true;
  } else {
    return interp_error(op, HLO_NOT_FOUND, "unknown check target @%s", name);
  }
  vals e = tensor_vals(in[1]);
  char who[128];
  snprintf(who, sizeof who, "custom_call @%s", name);
  HLO_TRY(compare(it, op, who, in[0], &e, &r));
  for (uint32_t i = 0; i < op->num_results; i++) {
    const hlo_type *t = result_types[i];
    if (t->kind == TYPE_TOKEN || t->kind == TYPE_TENSOR) {
      hlo_status st = tensor_create(t, &op->loc, &out[i]);
      if (!st && t->kind == TYPE_TENSOR && returns_pred)
        for (int64_t k = 0; k < out[i]->num_elems; k++) elem_set_i64(t->dtype, out[i]->data, k, 1);
      if (st) {
        for (uint32_t j = 0; j < i; j++) {
          tensor_release(out[j]);
          out[j] = NULL;
        }
        return st;
      }
    } else {
      for (uint32_t j = 0; j < i; j++) {
        tensor_release(out[j]);
        out[j] = NULL;
      }
      return interp_error(op, HLO_INVALID_ARGUMENT, "@%s: unexpected result type", name);
    }
  }
  return NULL;
}

void interp_register_check(interp_kernel *table) {
  table[OP_CHECK_EXPECT_EQ] = k_expect;
  table[OP_CHECK_EXPECT_EQ_CONST] = k_expect;
  table[OP_CHECK_EXPECT_ALMOST_EQ] = k_expect;
  table[OP_CHECK_EXPECT_ALMOST_EQ_CONST] = k_expect;
  table[OP_CHECK_EXPECT_CLOSE] = k_expect;
}
