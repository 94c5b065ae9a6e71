/* verify_ops.c — constraint checks of the elementwise ops and of the shape
 * and data-movement ops (broadcast_in_dim, reshape, transpose, slice,
 * dynamic_slice, dynamic_update_slice, concatenate, pad, iota, reverse,
 * constant, tuple, get_tuple_element, bitcast_convert, ...), following the
 * "Constraints" and "Inputs" sections of reference/stablehlo-spec.md. */
#include <string.h>
#include "ir/element.h"
#include "ir/verify.h"

/* Element type classes, as bits. */
enum { K_B = 1, K_S = 2, K_U = 4, K_F = 8, K_C = 16, K_I = K_S | K_U, K_ANY = 31 };

/* The K_* bit of the element class of `t`. */
static unsigned kbit(const hlo_type *t) {
  switch (dtype_class(t->dtype)) {
    case HLO_CLASS_BOOL: return K_B;
    case HLO_CLASS_SINT: return K_S;
    case HLO_CLASS_UINT: return K_U;
    case HLO_CLASS_FLOAT: return K_F;
    case HLO_CLASS_COMPLEX: return K_C;
  }
  return 0;
}

static const char *kdesc(unsigned mask) {
  switch (mask) {
    case K_B | K_I: return "boolean or integer";
    case K_I: return "integer";
    case K_F: return "floating-point";
    case K_F | K_C: return "floating-point or complex";
    case K_S | K_F | K_C: return "signed integer, floating-point or complex";
    case K_I | K_F | K_C: return "integer, floating-point or complex";
    default: return "allowed";
  }
}

/* The element type a complex type's parts have (C64 -> F32). */
static hlo_dtype complex_part(hlo_dtype d) {
  return d == HLO_C64 ? HLO_F32 : d == HLO_C128 ? HLO_F64 : d;
}

/* Operand `i` of op has an element type in `mask` (quantized: accepted). */
static hlo_status vkind(vctx *c, const hlo_op *op, uint32_t i, unsigned mask, const char *cid,
                        const char *what) {
  const hlo_type *t = op->operands[i]->type;
  if (t->quant) return NULL;
  if (!(kbit(t) & mask))
    return verr(op, cid, "%s must be a tensor of %s type, got %s", what, kdesc(mask),
                vtype_str(c, t));
  return NULL;
}

/* Result rule for unary/binary elementwise ops. */
typedef enum { R_SAME, R_I1, R_PART, R_ANY } rrule;

typedef struct ew_info {
  hlo_opcode opc;
  uint8_t nin;
  unsigned mask;
  rrule rule;
  const char *cid; /* the type-equality constraint */
} ew_info;

static const ew_info ew_table[] = {
  {OP_ABS, 1, K_S | K_F | K_C, R_PART, "C2"},
  {OP_CBRT, 1, K_F | K_C, R_SAME, "C1"},
  {OP_CEIL, 1, K_F, R_SAME, "C1"},
  {OP_COUNT_LEADING_ZEROS, 1, K_I, R_SAME, "C1"},
  {OP_COSINE, 1, K_F | K_C, R_SAME, "C1"},
  {OP_EXPONENTIAL, 1, K_F | K_C, R_SAME, "C1"},
  {OP_EXPONENTIAL_MINUS_ONE, 1, K_F | K_C, R_SAME, "C1"},
  {OP_FLOOR, 1, K_F, R_SAME, "C1"},
  {OP_IMAG, 1, K_F | K_C, R_PART, "C2"},
  {OP_IS_FINITE, 1, K_F, R_I1, "C1"},
  {OP_LOG, 1, K_F | K_C, R_SAME, "C1"},
  {OP_LOG_PLUS_ONE, 1, K_F | K_C, R_SAME, "C1"},
  {OP_LOGISTIC, 1, K_F | K_C, R_SAME, "C1"},
  {OP_NEGATE, 1, K_I | K_F | K_C, R_SAME, "C1"},
  {OP_NOT, 1, K_B | K_I, R_SAME, "C1"},
  {OP_POPCNT, 1, K_I, R_SAME, "C1"},
  {OP_REAL, 1, K_F | K_C, R_PART, "C2"},
  {OP_ROUND_NEAREST_AFZ, 1, K_F, R_SAME, "C1"},
  {OP_ROUND_NEAREST_EVEN, 1, K_F, R_SAME, "C1"},
  {OP_RSQRT, 1, K_F | K_C, R_SAME, "C1"},
  {OP_SIGN, 1, K_S | K_F | K_C, R_SAME, "C1"},
  {OP_SINE, 1, K_F | K_C, R_SAME, "C1"},
  {OP_SQRT, 1, K_F | K_C, R_SAME, "C1"},
  {OP_TAN, 1, K_F | K_C, R_SAME, "C1"},
  {OP_TANH, 1, K_F | K_C, R_SAME, "C1"},
  {OP_CONVERT, 1, K_ANY, R_ANY, "C1"},
  {OP_REDUCE_PRECISION, 1, K_F, R_SAME, "C1"},
  {OP_ADD, 2, K_ANY, R_SAME, "C1"},
  {OP_AND, 2, K_B | K_I, R_SAME, "C1"},
  {OP_ATAN2, 2, K_F | K_C, R_SAME, "C1"},
  {OP_DIVIDE, 2, K_I | K_F | K_C, R_SAME, "C1"},
  {OP_MAXIMUM, 2, K_ANY, R_SAME, "C1"},
  {OP_MINIMUM, 2, K_ANY, R_SAME, "C1"},
  {OP_MULTIPLY, 2, K_ANY, R_SAME, "C1"},
  {OP_OR, 2, K_B | K_I, R_SAME, "C1"},
  {OP_POWER, 2, K_I | K_F | K_C, R_SAME, "C1"},
  {OP_REMAINDER, 2, K_I | K_F | K_C, R_SAME, "C1"},
  {OP_SHIFT_LEFT, 2, K_I, R_SAME, "C1"},
  {OP_SHIFT_RIGHT_ARITHMETIC, 2, K_I, R_SAME, "C1"},
  {OP_SHIFT_RIGHT_LOGICAL, 2, K_I, R_SAME, "C1"},
  {OP_SUBTRACT, 2, K_I | K_F | K_C, R_SAME, "C1"},
  {OP_XOR, 2, K_B | K_I, R_SAME, "C1"},
};

static const ew_info *ew_find(hlo_opcode opc) {
  for (size_t i = 0; i < sizeof ew_table / sizeof ew_table[0]; i++)
    if (ew_table[i].opc == opc) return &ew_table[i];
  return NULL;
}

static hlo_status verify_elementwise(vctx *c, const hlo_op *op, const ew_info *e) {
  HLO_TRY(vcount(op, e->nin, e->nin, 1, 1));
  HLO_TRY(vall_tensors(op));
  const hlo_type *r = op->results[0].type;
  const char *in_names[2] = {e->nin == 1 ? "operand" : "lhs", "rhs"};
  for (uint32_t i = 0; i < e->nin; i++) {
    HLO_TRY(vkind(c, op, i, e->mask, i ? "I2" : "I1", in_names[i]));
    if (!vshape_eq(op->operands[i]->type, r))
      return verr(op, e->rule == R_SAME ? e->cid : "C1", "%s shape %s differs from result %s",
                  in_names[i], vtype_str(c, op->operands[i]->type), vtype_str(c, r));
  }
  const hlo_type *a = op->operands[0]->type;
  if (e->nin == 2 && !a->quant && !op->operands[1]->type->quant &&
      !velem_eq(a, op->operands[1]->type))
    return verr(op, e->cid, "lhs and rhs element types differ (%s vs %s)", vtype_str(c, a),
                vtype_str(c, op->operands[1]->type));
  if (a->quant || r->quant || (e->nin == 2 && op->operands[1]->type->quant)) {
    /* quantized: all tensors quantized with the same storage and expressed
     * types (add C2-C4; the baseline_type rule of the others) */
    if (e->rule == R_ANY) return NULL;
    for (uint32_t i = 0; i < e->nin; i++)
      if (!velem_eq(op->operands[i]->type, r) && e->rule == R_SAME)
        return verr(op, op->opcode == OP_ADD ? "C2" : e->cid,
                    "quantized operand %s and result %s must have the same storage and "
                    "expressed types", vtype_str(c, op->operands[i]->type), vtype_str(c, r));
    return NULL;
  }
  switch (e->rule) {
    case R_SAME:
      if (!velem_eq(a, r))
        return verr(op, e->cid, "result element type %s differs from operand %s", vtype_str(c, r),
                    vtype_str(c, a));
      break;
    case R_I1:
      if (r->dtype != HLO_I1)
        return verr(op, "O1", "result must be a tensor of i1, got %s", vtype_str(c, r));
      break;
    case R_PART:
      if (r->dtype != complex_part(a->dtype))
        return verr(op, e->cid, "result element type must be %s (%s of %s), got %s",
                    hlo_dtype_name(complex_part(a->dtype)), vop_name(op),
                    hlo_dtype_name(a->dtype), vtype_str(c, r));
      break;
    case R_ANY: break;
  }
  if (op->opcode == OP_REDUCE_PRECISION) {
    int64_t eb, mb;
    HLO_TRY(vint(op, "exponent_bits", true, 0, &eb));
    HLO_TRY(vint(op, "mantissa_bits", true, 0, &mb));
    if (eb < 1) return verr(op, "C2", "exponent_bits must be >= 1, got %lld", (long long)eb);
    if (mb < 0) return verr(op, "C3", "mantissa_bits must be >= 0, got %lld", (long long)mb);
  }
  return NULL;
}

static hlo_status verify_compare(vctx *c, const hlo_op *op) {
  HLO_TRY(vcount(op, 2, 2, 1, 1));
  HLO_TRY(vall_tensors(op));
  const hlo_type *l = op->operands[0]->type, *rh = op->operands[1]->type, *r = op->results[0].type;
  if (!(l->quant || rh->quant) && !velem_eq(l, rh))
    return verr(op, "C1", "lhs and rhs element types differ (%s vs %s)", vtype_str(c, l),
                vtype_str(c, rh));
  if (!vshape_eq(l, rh) || !vshape_eq(l, r))
    return verr(op, "C2", "shapes of lhs %s, rhs %s and result %s differ", vtype_str(c, l),
                vtype_str(c, rh), vtype_str(c, r));
  if (r->dtype != HLO_I1) return verr(op, "O1", "result must be a tensor of i1");
  const char *dir, *ct;
  HLO_TRY(venum(op, "comparison_direction", true, &dir));
  if (dir && strcmp(dir, "EQ") && strcmp(dir, "NE") && strcmp(dir, "GE") && strcmp(dir, "GT") &&
      strcmp(dir, "LE") && strcmp(dir, "LT"))
    return verr(op, "I3", "unknown comparison_direction '%s'", dir);
  HLO_TRY(venum(op, "compare_type", false, &ct));
  if (ct && !l->quant) {
    unsigned k = kbit(l);
    bool ok = true;
    if (k == K_S) ok = !strcmp(ct, "SIGNED");
    else if (k == K_U || k == K_B) ok = !strcmp(ct, "UNSIGNED");
    else if (k == K_F) ok = !strcmp(ct, "FLOAT") || !strcmp(ct, "TOTALORDER");
    else if (k == K_C) ok = !strcmp(ct, "FLOAT");
    if (!ok)
      return verr(op, "C3", "compare_type %s does not fit element type %s", ct, vtype_str(c, l));
  }
  return NULL;
}

static hlo_status verify_select(vctx *c, const hlo_op *op) {
  HLO_TRY(vcount(op, 3, 3, 1, 1));
  HLO_TRY(vall_tensors(op));
  const hlo_type *p = op->operands[0]->type, *t = op->operands[1]->type,
                 *f = op->operands[2]->type, *r = op->results[0].type;
  if (p->dtype != HLO_I1 || p->quant)
    return verr(op, "I1", "pred must be a tensor of i1, got %s", vtype_str(c, p));
  if (p->rank != 0 && !vshape_eq(p, t))
    return verr(op, "C1", "pred shape %s must be rank 0 or equal to on_true %s", vtype_str(c, p),
                vtype_str(c, t));
  if (!vshape_eq(t, f) || !vshape_eq(t, r) ||
      (!t->quant && !f->quant && !r->quant && (!velem_eq(t, f) || !velem_eq(t, r))))
    return verr(op, "C2", "on_true %s, on_false %s and result %s must have the same type",
                vtype_str(c, t), vtype_str(c, f), vtype_str(c, r));
  return NULL;
}

static hlo_status verify_clamp(vctx *c, const hlo_op *op) {
  HLO_TRY(vcount(op, 3, 3, 1, 1));
  HLO_TRY(vall_tensors(op));
  const hlo_type *mn = op->operands[0]->type, *x = op->operands[1]->type,
                 *mx = op->operands[2]->type, *r = op->results[0].type;
  if (mn->rank != 0 && !vshape_eq(mn, x))
    return verr(op, "C1", "min shape %s must be rank 0 or equal to operand %s", vtype_str(c, mn),
                vtype_str(c, x));
  if (mx->rank != 0 && !vshape_eq(mx, x))
    return verr(op, "C2", "max shape %s must be rank 0 or equal to operand %s", vtype_str(c, mx),
                vtype_str(c, x));
  bool q = mn->quant || x->quant || mx->quant || r->quant;
  if (!q && (!velem_eq(mn, x) || !velem_eq(mx, x)))
    return verr(op, "C3", "min, operand and max element types differ (%s, %s, %s)",
                vtype_str(c, mn), vtype_str(c, x), vtype_str(c, mx));
  if (!vshape_eq(x, r) || (!q && !velem_eq(x, r)))
    return verr(op, "C4", "result %s must have the operand's type %s", vtype_str(c, r),
                vtype_str(c, x));
  return NULL;
}

static hlo_status verify_complex_op(vctx *c, const hlo_op *op) {
  HLO_TRY(vcount(op, 2, 2, 1, 1));
  HLO_TRY(vall_tensors(op));
  const hlo_type *l = op->operands[0]->type, *rh = op->operands[1]->type, *r = op->results[0].type;
  if (l->dtype != HLO_F32 && l->dtype != HLO_F64)
    return verr(op, "I1", "lhs must be a tensor of f32 or f64, got %s", vtype_str(c, l));
  if (!vtype_eq(l, rh)) return verr(op, "C1", "lhs %s and rhs %s differ", vtype_str(c, l), vtype_str(c, rh));
  if (!vshape_eq(l, r)) return verr(op, "C2", "result shape %s differs from lhs %s", vtype_str(c, r), vtype_str(c, l));
  if (complex_part(r->dtype) != l->dtype || r->dtype == l->dtype)
    return verr(op, "C3", "result element type must be complex<%s>, got %s",
                hlo_dtype_name(l->dtype), vtype_str(c, r));
  return NULL;
}

/* ---------------------------------------------------------- shape ops */

static hlo_status verify_broadcast_in_dim(vctx *c, const hlo_op *op) {
  HLO_TRY(vcount(op, 1, 1, 1, 1));
  HLO_TRY(vall_tensors(op));
  const hlo_type *x = op->operands[0]->type, *r = op->results[0].type;
  ilist d;
  HLO_TRY(vints(c, op, "broadcast_dimensions", true, &d, NULL));
  if (!(x->quant && x->quant->axis >= 0) && !velem_eq(x, r))
    return verr(op, "C1", "result element type %s differs from operand %s", vtype_str(c, r),
                vtype_str(c, x));
  if (d.n != x->rank)
    return verr(op, "C2", "broadcast_dimensions has %u entries but operand rank is %u", d.n,
                x->rank);
  int64_t k = vout_of_range(d.v, d.n, r->rank);
  if (k >= 0)
    return verr(op, "C3", "broadcast_dimensions[%lld] = %lld is out of range for result rank %u",
                (long long)k, (long long)d.v[k], r->rank);
  if ((k = vdup(d.v, d.n)) >= 0)
    return verr(op, "C4", "broadcast_dimensions has duplicate %lld", (long long)d.v[k]);
  for (uint32_t i = 0; i < x->rank; i++) {
    int64_t od = x->dims[i], rd = r->dims[d.v[i]];
    if (od != 1 && !vdim_eq(od, rd))
      return verr(op, "C5", "operand dimension %u has size %lld, result dimension %lld has %lld",
                  i, (long long)od, (long long)d.v[i], (long long)rd);
  }
  return NULL;
}

static hlo_status verify_broadcast(vctx *c, const hlo_op *op) {
  HLO_TRY(vcount(op, 1, 1, 1, 1));
  HLO_TRY(vall_tensors(op));
  const hlo_type *x = op->operands[0]->type, *r = op->results[0].type;
  ilist s;
  HLO_TRY(vints(c, op, "broadcast_sizes", true, &s, NULL));
  if (!velem_eq(x, r)) return verr(op, "C1", "element types differ");
  if (r->rank != s.n + x->rank) return verr(op, "C2", "result rank must be %u", s.n + x->rank);
  for (uint32_t i = 0; i < r->rank; i++) {
    int64_t want = i < s.n ? s.v[i] : x->dims[i - s.n];
    if (!vdim_eq(r->dims[i], want))
      return verr(op, "C2", "result dimension %u must be %lld", i, (long long)want);
  }
  return NULL;
}

static hlo_status verify_reshape(vctx *c, const hlo_op *op) {
  HLO_TRY(vcount(op, 1, 1, 1, 1));
  HLO_TRY(vall_tensors(op));
  const hlo_type *x = op->operands[0]->type, *r = op->results[0].type;
  if (!velem_eq(x, r))
    return verr(op, "C1", "result element type %s differs from operand %s", vtype_str(c, r),
                vtype_str(c, x));
  int64_t a = type_num_elements(x), b = type_num_elements(r);
  if (a >= 0 && b >= 0 && a != b)
    return verr(op, "C2", "operand has %lld elements, result %lld", (long long)a, (long long)b);
  return NULL;
}

static hlo_status verify_transpose(vctx *c, const hlo_op *op) {
  HLO_TRY(vcount(op, 1, 1, 1, 1));
  HLO_TRY(vall_tensors(op));
  const hlo_type *x = op->operands[0]->type, *r = op->results[0].type;
  ilist p;
  HLO_TRY(vints(c, op, "permutation", true, &p, NULL));
  if (!velem_eq(x, r))
    return verr(op, "C1", "result element type %s differs from operand %s", vtype_str(c, r),
                vtype_str(c, x));
  if (p.n != x->rank || vout_of_range(p.v, p.n, x->rank) >= 0 || vdup(p.v, p.n) >= 0)
    return verr(op, "C2", "permutation is not a permutation of range(%u)", x->rank);
  if (r->rank != x->rank) return verr(op, "C3", "result rank %u differs from operand %u", r->rank, x->rank);
  for (uint32_t i = 0; i < r->rank; i++)
    if (!vdim_eq(r->dims[i], x->dims[p.v[i]]))
      return verr(op, "C3", "result dimension %u is %lld, expected %lld", i, (long long)r->dims[i],
                  (long long)x->dims[p.v[i]]);
  return NULL;
}

static hlo_status verify_slice(vctx *c, const hlo_op *op) {
  HLO_TRY(vcount(op, 1, 1, 1, 1));
  HLO_TRY(vall_tensors(op));
  const hlo_type *x = op->operands[0]->type, *r = op->results[0].type;
  ilist st, li, sd;
  HLO_TRY(vints(c, op, "start_indices", true, &st, NULL));
  HLO_TRY(vints(c, op, "limit_indices", true, &li, NULL));
  HLO_TRY(vints(c, op, "strides", true, &sd, NULL));
  if (!velem_eq(x, r)) return verr(op, "C1", "element types differ (%s vs %s)", vtype_str(c, x), vtype_str(c, r));
  if (st.n != x->rank || li.n != x->rank || sd.n != x->rank)
    return verr(op, "C2", "start_indices, limit_indices and strides must have %u entries", x->rank);
  if (r->rank != x->rank) return verr(op, "C5", "result rank %u differs from operand %u", r->rank, x->rank);
  for (uint32_t i = 0; i < x->rank; i++) {
    int64_t d = x->dims[i];
    if (st.v[i] < 0 || st.v[i] > li.v[i] || (d != HLO_DYN && li.v[i] > d))
      return verr(op, "C3", "dimension %u: need 0 <= start (%lld) <= limit (%lld) <= size (%lld)",
                  i, (long long)st.v[i], (long long)li.v[i], (long long)d);
    if (sd.v[i] <= 0) return verr(op, "C4", "strides[%u] = %lld must be positive", i, (long long)sd.v[i]);
    int64_t want = (int64_t)(((__int128)li.v[i] - st.v[i] + sd.v[i] - 1) / sd.v[i]);
    if (!vdim_eq(r->dims[i], want))
      return verr(op, "C5", "result dimension %u is %lld, expected %lld", i, (long long)r->dims[i],
                  (long long)want);
  }
  return NULL;
}

/* Operands from `first` on are 0-d integer tensors (dynamic_slice starts). */
static hlo_status vindices_scalars(vctx *c, const hlo_op *op, uint32_t first, const char *cid) {
  for (uint32_t i = first; i < op->num_operands; i++) {
    const hlo_type *t = op->operands[i]->type;
    if (!vis_scalar(t) || !(kbit(t) & K_I))
      return verr(op, "I2", "start index #%u must be a 0-dimensional integer tensor, got %s",
                  i - first, vtype_str(c, t));
    if (i > first && !velem_eq(t, op->operands[first]->type))
      return verr(op, cid, "start indices must all have the same type (%s vs %s)",
                  vtype_str(c, t), vtype_str(c, op->operands[first]->type));
  }
  return NULL;
}

static hlo_status verify_dynamic_slice(vctx *c, const hlo_op *op) {
  HLO_TRY(vcount(op, 1, -1, 1, 1));
  HLO_TRY(vall_tensors(op));
  const hlo_type *x = op->operands[0]->type, *r = op->results[0].type;
  ilist ss;
  HLO_TRY(vints(c, op, "slice_sizes", true, &ss, NULL));
  if (!velem_eq(x, r)) return verr(op, "C1", "element types differ (%s vs %s)", vtype_str(c, x), vtype_str(c, r));
  if (op->num_operands - 1 != x->rank || ss.n != x->rank)
    return verr(op, "C2", "needs %u start indices and slice sizes, got %u and %u", x->rank,
                op->num_operands - 1, ss.n);
  HLO_TRY(vindices_scalars(c, op, 1, "C3"));
  for (uint32_t i = 0; i < x->rank; i++)
    if (ss.v[i] < 0 || (x->dims[i] != HLO_DYN && ss.v[i] > x->dims[i]))
      return verr(op, "C4", "slice_sizes[%u] = %lld is outside [0, %lld]", i, (long long)ss.v[i],
                  (long long)x->dims[i]);
  if (r->rank != x->rank) return verr(op, "C5", "result rank %u differs from operand %u", r->rank, x->rank);
  for (uint32_t i = 0; i < x->rank; i++)
    if (!vdim_eq(r->dims[i], ss.v[i]))
      return verr(op, "C5", "result dimension %u is %lld, slice size %lld", i, (long long)r->dims[i],
                  (long long)ss.v[i]);
  return NULL;
}

static hlo_status verify_dynamic_update_slice(vctx *c, const hlo_op *op) {
  HLO_TRY(vcount(op, 2, -1, 1, 1));
  HLO_TRY(vall_tensors(op));
  const hlo_type *x = op->operands[0]->type, *u = op->operands[1]->type, *r = op->results[0].type;
  if (!vtype_eq(x, r)) return verr(op, "C1", "result %s differs from operand %s", vtype_str(c, r), vtype_str(c, x));
  if (!velem_eq(u, x)) return verr(op, "C2", "update element type %s differs from operand %s", vtype_str(c, u), vtype_str(c, x));
  if (u->rank != x->rank) return verr(op, "C3", "update rank %u differs from operand %u", u->rank, x->rank);
  if (op->num_operands - 2 != x->rank)
    return verr(op, "C4", "needs %u start indices, got %u", x->rank, op->num_operands - 2);
  HLO_TRY(vindices_scalars(c, op, 2, "C5"));
  for (uint32_t i = 0; i < x->rank; i++)
    if (u->dims[i] != HLO_DYN && x->dims[i] != HLO_DYN && u->dims[i] > x->dims[i])
      return verr(op, "C6", "update dimension %u (%lld) exceeds operand (%lld)", i,
                  (long long)u->dims[i], (long long)x->dims[i]);
  return NULL;
}

static hlo_status verify_concatenate(vctx *c, const hlo_op *op) {
  if (op->num_operands == 0) return verr(op, "C3", "needs at least one input");
  HLO_TRY(vcount(op, 1, -1, 1, 1));
  HLO_TRY(vall_tensors(op));
  int64_t dim;
  HLO_TRY(vint(op, "dimension", true, 0, &dim));
  const hlo_type *a = op->operands[0]->type, *r = op->results[0].type;
  if (dim < 0 || dim >= (int64_t)a->rank)
    return verr(op, "C4", "dimension %lld is out of range for rank %u", (long long)dim, a->rank);
  int64_t sum = 0;
  bool dyn = false;
  for (uint32_t i = 0; i < op->num_operands; i++) {
    const hlo_type *t = op->operands[i]->type;
    if (!velem_eq(t, a)) return verr(op, "C1", "input #%u element type %s differs from %s", i, vtype_str(c, t), vtype_str(c, a));
    if (t->rank != a->rank) return verr(op, "C2", "input #%u has rank %u, expected %u", i, t->rank, a->rank);
    for (uint32_t d = 0; d < a->rank; d++)
      if ((int64_t)d != dim && !vdim_eq(t->dims[d], a->dims[d]))
        return verr(op, "C2", "input #%u dimension %u is %lld, expected %lld", i, d,
                    (long long)t->dims[d], (long long)a->dims[d]);
    if (t->dims[dim] == HLO_DYN || __builtin_add_overflow(sum, t->dims[dim], &sum)) dyn = true;
  }
  if (!velem_eq(r, a)) return verr(op, "C5", "result element type %s differs from inputs %s", vtype_str(c, r), vtype_str(c, a));
  if (r->rank != a->rank) return verr(op, "C6", "result rank %u differs from inputs %u", r->rank, a->rank);
  for (uint32_t d = 0; d < a->rank; d++) {
    int64_t want = (int64_t)d == dim ? (dyn ? HLO_DYN : sum) : a->dims[d];
    if (!vdim_eq(r->dims[d], want))
      return verr(op, "C6", "result dimension %u is %lld, expected %lld", d, (long long)r->dims[d],
                  (long long)want);
  }
  return NULL;
}

static hlo_status verify_pad(vctx *c, const hlo_op *op) {
  HLO_TRY(vcount(op, 2, 2, 1, 1));
  HLO_TRY(vall_tensors(op));
  const hlo_type *x = op->operands[0]->type, *pv = op->operands[1]->type, *r = op->results[0].type;
  ilist lo, hi, in;
  HLO_TRY(vints(c, op, "edge_padding_low", true, &lo, NULL));
  HLO_TRY(vints(c, op, "edge_padding_high", true, &hi, NULL));
  HLO_TRY(vints(c, op, "interior_padding", true, &in, NULL));
  if (!vis_scalar(pv)) return verr(op, "I2", "padding_value must be 0-dimensional, got %s", vtype_str(c, pv));
  if (!(x->quant || pv->quant || r->quant) && (!velem_eq(x, pv) || !velem_eq(x, r)))
    return verr(op, "C1", "operand %s, padding_value %s and result %s element types differ",
                vtype_str(c, x), vtype_str(c, pv), vtype_str(c, r));
  if (lo.n != x->rank || hi.n != x->rank || in.n != x->rank)
    return verr(op, "C2", "padding lists must have %u entries (got %u, %u, %u)", x->rank, lo.n,
                hi.n, in.n);
  if (r->rank != x->rank) return verr(op, "C4", "result rank %u differs from operand %u", r->rank, x->rank);
  for (uint32_t i = 0; i < x->rank; i++) {
    if (in.v[i] < 0) return verr(op, "C3", "interior_padding[%u] = %lld is negative", i, (long long)in.v[i]);
    int64_t d = x->dims[i];
    if (d == HLO_DYN) continue;
    __int128 want = (__int128)d + lo.v[i] + hi.v[i] + (__int128)(d > 0 ? d - 1 : 0) * in.v[i];
    if (r->dims[i] != HLO_DYN && (__int128)r->dims[i] != want)
      return verr(op, "C4", "result dimension %u is %lld, expected %lld", i, (long long)r->dims[i],
                  (long long)want);
  }
  return NULL;
}

static hlo_status verify_iota(vctx *c, const hlo_op *op) {
  HLO_TRY(vcount(op, 0, 0, 1, 1));
  HLO_TRY(vall_tensors(op));
  const hlo_type *r = op->results[0].type;
  int64_t d;
  HLO_TRY(vint(op, "iota_dimension", true, 0, &d));
  if (d < 0 || d >= (int64_t)r->rank)
    return verr(op, "C1", "iota_dimension %lld is out of range for rank %u", (long long)d, r->rank);
  (void)c;
  return NULL;
}

static hlo_status verify_reverse(vctx *c, const hlo_op *op) {
  HLO_TRY(vcount(op, 1, 1, 1, 1));
  HLO_TRY(vall_tensors(op));
  const hlo_type *x = op->operands[0]->type, *r = op->results[0].type;
  ilist d;
  HLO_TRY(vints(c, op, "dimensions", true, &d, NULL));
  if (!vtype_eq(x, r)) return verr(op, "C1", "result %s differs from operand %s", vtype_str(c, r), vtype_str(c, x));
  int64_t k;
  if ((k = vdup(d.v, d.n)) >= 0) return verr(op, "C2", "dimensions has duplicate %lld", (long long)d.v[k]);
  if ((k = vout_of_range(d.v, d.n, r->rank)) >= 0)
    return verr(op, "C3", "dimension %lld is out of range for rank %u", (long long)d.v[k], r->rank);
  return NULL;
}

static hlo_status verify_constant(vctx *c, const hlo_op *op) {
  HLO_TRY(vcount(op, 0, 0, 1, 1));
  const hlo_attr *v = op_attr(op, "value");
  if (!v) return verr(op, "ATTR", "missing required attribute 'value'");
  const hlo_type *r = op->results[0].type;
  if (v->kind != ATTR_DENSE) {
    if (v->kind == ATTR_OPAQUE) return NULL; /* dense_resource etc. */
    return verr(op, "ATTR", "attribute 'value' must be dense elements");
  }
  const hlo_type *t = v->u.dense.type;
  if (!vis_tensor(t) || !vis_tensor(r)) return verr(op, "C1", "value and output must be tensors");
  if (!vshape_eq(t, r) || t->dtype != r->dtype || (!t->quant && !r->quant && !velem_eq(t, r)))
    return verr(op, "C1", "value type %s differs from output type %s", vtype_str(c, t), vtype_str(c, r));
  return NULL;
}

static hlo_status verify_tuple(vctx *c, const hlo_op *op) {
  HLO_TRY(vcount(op, 0, -1, 1, 1));
  const hlo_type *r = op->results[0].type;
  if (r->kind != TYPE_TUPLE || r->num_elems != op->num_operands)
    return verr(op, "C1", "result must be a tuple of %u elements, got %s", op->num_operands, vtype_str(c, r));
  for (uint32_t i = 0; i < op->num_operands; i++)
    if (!vtype_eq(r->elems[i], op->operands[i]->type))
      return verr(op, "C1", "tuple element %u has type %s, operand %s", i, vtype_str(c, r->elems[i]),
                  vtype_str(c, op->operands[i]->type));
  return NULL;
}

static hlo_status verify_get_tuple_element(vctx *c, const hlo_op *op) {
  HLO_TRY(vcount(op, 1, 1, 1, 1));
  const hlo_type *t = op->operands[0]->type;
  int64_t idx;
  HLO_TRY(vint(op, "index", true, 0, &idx));
  if (t->kind != TYPE_TUPLE) return verr(op, "I1", "operand must be a tuple, got %s", vtype_str(c, t));
  if (idx < 0 || idx >= (int64_t)t->num_elems)
    return verr(op, "C1", "index %lld is out of range for a tuple of %u", (long long)idx, t->num_elems);
  if (!vtype_eq(op->results[0].type, t->elems[idx]))
    return verr(op, "C2", "result %s differs from tuple element %s", vtype_str(c, op->results[0].type),
                vtype_str(c, t->elems[idx]));
  return NULL;
}

static hlo_status verify_bitcast_convert(vctx *c, const hlo_op *op) {
  HLO_TRY(vcount(op, 1, 1, 1, 1));
  HLO_TRY(vall_tensors(op));
  const hlo_type *x = op->operands[0]->type, *r = op->results[0].type;
  int eb = dtype_bits(x->dtype), rb = dtype_bits(r->dtype);
  bool xc = kbit(x) == K_C, rc = kbit(r) == K_C;
  if ((xc || rc) && !(xc && rc))
    return verr(op, "C2", "cannot bitcast between complex and non-complex (%s to %s)", vtype_str(c, x), vtype_str(c, r));
  uint32_t R = x->rank;
  if (eb == rb) {
    if (!vshape_eq(x, r)) return verr(op, "C1", "result shape %s must equal operand %s", vtype_str(c, r), vtype_str(c, x));
  } else if (rb < eb) {
    if (r->rank != R + 1) return verr(op, "C1", "result rank must be %u", R + 1);
    for (uint32_t i = 0; i < R; i++)
      if (!vdim_eq(r->dims[i], x->dims[i])) return verr(op, "C1", "result dimension %u differs from operand", i);
    if (!vdim_eq(r->dims[R], eb / rb) || eb % rb)
      return verr(op, "C1", "last result dimension must be %d", eb / rb);
  } else {
    if (R == 0 || r->rank != R - 1) return verr(op, "C1", "result rank must be operand rank - 1");
    for (uint32_t i = 0; i + 1 < R; i++)
      if (!vdim_eq(r->dims[i], x->dims[i])) return verr(op, "C1", "result dimension %u differs from operand", i);
    if (!vdim_eq(x->dims[R - 1], rb / eb) || rb % eb)
      return verr(op, "C1", "last operand dimension must be %d", rb / eb);
  }
  return NULL;
}

hlo_status verify_op_basic(vctx *c, const hlo_op *op, bool *handled) {
  *handled = true;
  const ew_info *e = ew_find(op->opcode);
  if (e) return verify_elementwise(c, op, e);
  switch (op->opcode) {
    case OP_COMPARE: return verify_compare(c, op);
    case OP_SELECT: return verify_select(c, op);
    case OP_CLAMP: return verify_clamp(c, op);
    case OP_COMPLEX: return verify_complex_op(c, op);
    case OP_BITCAST_CONVERT: return verify_bitcast_convert(c, op);
    case OP_BROADCAST_IN_DIM: return verify_broadcast_in_dim(c, op);
    case OP_BROADCAST: return verify_broadcast(c, op);
    case OP_RESHAPE: return verify_reshape(c, op);
    case OP_TRANSPOSE: return verify_transpose(c, op);
    case OP_SLICE: return verify_slice(c, op);
    case OP_DYNAMIC_SLICE: return verify_dynamic_slice(c, op);
    case OP_DYNAMIC_UPDATE_SLICE: return verify_dynamic_update_slice(c, op);
    case OP_CONCATENATE: return verify_concatenate(c, op);
    case OP_PAD: return verify_pad(c, op);
    case OP_IOTA: return verify_iota(c, op);
    case OP_REVERSE: return verify_reverse(c, op);
    case OP_CONSTANT: return verify_constant(c, op);
    case OP_TUPLE: return verify_tuple(c, op);
    case OP_GET_TUPLE_ELEMENT: return verify_get_tuple_element(c, op);
    default: *handled = false; return NULL;
  }
}
