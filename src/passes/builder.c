/* builder.c — IR-building helpers for passes (see builder.h). */
#include "passes/builder.h"

#include <math.h>
#include <string.h>
#include "ir/element.h"
#include "support/float.h"

void builder_at(builder *b, hlo_module_ir *m, hlo_op *before) {
  memset(b, 0, sizeof *b);
  b->m = m;
  b->before = before;
  b->loc = before->loc;
}

void builder_at_end(builder *b, hlo_module_ir *m, hlo_block *blk, hlo_loc loc) {
  memset(b, 0, sizeof *b);
  b->m = m;
  b->block = blk;
  b->loc = loc;
}

hlo_status builder_status(const builder *b) {
  if (!b->failed) return NULL;
  return status_at(HLO_RESOURCE_EXHAUSTED, &b->loc, "out of memory while building IR");
}

/* ---------------------------------------------------------------- types */

hlo_type *b_type(builder *b, hlo_dtype dt, uint32_t rank, const int64_t *dims) {
  if (b->failed) return NULL;
  hlo_type *t = type_tensor(&b->m->arena, dt, rank, dims);
  if (!t) b->failed = true;
  return t;
}

hlo_type *b_type_like(builder *b, const hlo_type *t, hlo_dtype dt) {
  if (!t) { b->failed = true; return NULL; }
  return b_type(b, dt, t->rank, t->dims);
}

hlo_dtype dtype_part(hlo_dtype dt) {
  if (dt == HLO_C64) return HLO_F32;
  if (dt == HLO_C128) return HLO_F64;
  return dt;
}

hlo_dtype dtype_complex_of(hlo_dtype dt) {
  if (dt == HLO_F32) return HLO_C64;
  if (dt == HLO_F64) return HLO_C128;
  return dt;
}

/* --------------------------------------------------------------- op making */

hlo_op *b_op(builder *b, hlo_opcode opc, hlo_value *const *operands, uint32_t n,
             hlo_type *const *result_types, uint32_t nres, uint32_t nregions) {
  if (b->failed) return NULL;
  for (uint32_t i = 0; i < n; i++)
    if (!operands[i]) { b->failed = true; return NULL; }
  for (uint32_t i = 0; i < nres; i++)
    if (!result_types[i]) { b->failed = true; return NULL; }
  hlo_op *op = op_create(b->m, opc, operands, n, result_types, nres, nregions, b->loc);
  if (!op) { b->failed = true; return NULL; }
  if (b->before) op_insert_before(b->before, op);
  else block_append(b->block, op);
  return op;
}

void b_set_attr(builder *b, hlo_op *op, const char *name, hlo_attr *value) {
  if (!op || !value) { b->failed = true; return; }
  hlo_status st = op_set_attr(b->m, op, name, value);
  if (st) { hlo_status_free(st); b->failed = true; }
}

hlo_attr *b_i64s(builder *b, const int64_t *v, uint32_t n) {
  if (b->failed) return NULL;
  hlo_attr *at = attr_dense_array_i64(&b->m->arena, v, n);
  if (!at) b->failed = true;
  return at;
}

static hlo_value *result0(builder *b, hlo_op *op) {
  if (!op) { b->failed = true; return NULL; }
  return &op->results[0];
}

/* ------------------------------------------------------------ constants */

hlo_value *b_constant(builder *b, hlo_attr *value) {
  if (!value || value->kind != ATTR_DENSE) { b->failed = true; return NULL; }
  hlo_type *t = (hlo_type *)value->u.dense.type;
  hlo_op *op = b_op(b, OP_CONSTANT, NULL, 0, &t, 1, 0);
  b_set_attr(b, op, "value", value);
  return b->failed ? NULL : result0(b, op);
}

/* Writes one element of `dt` holding v (double) or iv (integer, when
 * use_int) into buf. */
static void put_elem(hlo_dtype dt, uint8_t *buf, double v, int64_t iv, bool use_int) {
  switch (dtype_class(dt)) {
    case HLO_CLASS_BOOL:
      elem_set_i64(dt, buf, 0, use_int ? iv != 0 : v != 0);
      break;
    case HLO_CLASS_SINT:
      elem_set_i64(dt, buf, 0, use_int ? iv : (int64_t)v);
      break;
    case HLO_CLASS_UINT:
      elem_set_u64(dt, buf, 0, use_int ? (uint64_t)iv : (uint64_t)(int64_t)v);
      break;
    case HLO_CLASS_FLOAT:
      elem_set_f64(dt, buf, 0, use_int ? (double)iv : v);
      break;
    case HLO_CLASS_COMPLEX:
      elem_set_c128(dt, buf, 0, use_int ? (double)iv : v, 0.0);
      break;
  }
}

/* A splat constant of t's type from `iv` (use_int) or `v`. */
static hlo_value *splat_of(builder *b, const hlo_type *t, double v, int64_t iv, bool use_int) {
  if (b->failed || !t) { b->failed = true; return NULL; }
  uint8_t buf[16] = {0};
  put_elem(t->dtype, buf, v, iv, use_int);
  hlo_type *ty = b_type_like(b, t, t->dtype);
  if (!ty) return NULL;
  hlo_attr *at = attr_dense(&b->m->arena, ty, buf, hlo_dtype_size(t->dtype), true);
  if (!at) { b->failed = true; return NULL; }
  return b_constant(b, at);
}

hlo_value *b_const_of(builder *b, const hlo_type *t, double v) {
  return splat_of(b, t, v, 0, false);
}

hlo_value *b_const_int_of(builder *b, const hlo_type *t, int64_t v) {
  return splat_of(b, t, 0, v, true);
}

hlo_value *b_const_like(builder *b, double v, const hlo_value *x) {
  if (!x) { b->failed = true; return NULL; }
  return splat_of(b, x->type, v, 0, false);
}

hlo_value *b_const_int_like(builder *b, int64_t v, const hlo_value *x) {
  if (!x) { b->failed = true; return NULL; }
  return splat_of(b, x->type, 0, v, true);
}

double dtype_max_finite(hlo_dtype dt) {
  dt = dtype_part(dt);
  if (dt == HLO_F64) return 1.7976931348623157e308;
  float_format f;
  if (!float_format_of(dt, &f)) return 0;
  /* The largest finite bit pattern: for IEEE formats exponent all-ones minus
   * one with a full mantissa; other formats differ, so search downwards from
   * the all-ones pattern for the largest finite value. */
  uint64_t top = ((uint64_t)1 << (f.bits - 1)) - 1; /* sign bit clear */
  for (uint64_t bits = top;; bits--) {
    double v = float_decode(dt, bits);
    if (isfinite(v)) return v;
    if (bits == 0) return 0;
  }
}

double dtype_smallest_normal(hlo_dtype dt) {
  dt = dtype_part(dt);
  float_format f;
  if (!float_format_of(dt, &f)) return 0;
  return ldexp(1.0, 1 - f.bias);
}

double dtype_smallest_subnormal(hlo_dtype dt) {
  dt = dtype_part(dt);
  float_format f;
  if (!float_format_of(dt, &f)) return 0;
  return ldexp(1.0, 1 - f.bias - f.mant_bits);
}

hlo_value *b_max_finite_like(builder *b, const hlo_value *x) {
  if (!x) { b->failed = true; return NULL; }
  return b_const_like(b, dtype_max_finite(x->type->dtype), x);
}

hlo_value *b_inf_like(builder *b, const hlo_value *x, bool negative) {
  return b_const_like(b, negative ? -INFINITY : INFINITY, x);
}

hlo_value *b_smallest_normal_like(builder *b, const hlo_value *x) {
  if (!x) { b->failed = true; return NULL; }
  return b_const_like(b, dtype_smallest_normal(x->type->dtype), x);
}

hlo_value *b_smallest_like(builder *b, const hlo_value *x) {
  if (!x) { b->failed = true; return NULL; }
  return b_const_like(b, dtype_smallest_subnormal(x->type->dtype), x);
}

/* ---------------------------------------------------------- elementwise */

hlo_value *b_unary_to(builder *b, hlo_opcode opc, hlo_value *x, hlo_dtype dt) {
  if (!x) { b->failed = true; return NULL; }
  hlo_type *t = b_type_like(b, x->type, dt);
  return result0(b, b_op(b, opc, &x, 1, &t, 1, 0));
}

hlo_value *b_unary(builder *b, hlo_opcode opc, hlo_value *x) {
  if (!x) { b->failed = true; return NULL; }
  if (opc == OP_ABS) return b_unary_to(b, opc, x, dtype_part(x->type->dtype));
  return result0(b, b_op(b, opc, &x, 1, &x->type, 1, 0));
}

hlo_value *b_binary(builder *b, hlo_opcode opc, hlo_value *x, hlo_value *y) {
  if (!x || !y) { b->failed = true; return NULL; }
  hlo_value *ops[2] = {x, y};
  return result0(b, b_op(b, opc, ops, 2, &x->type, 1, 0));
}

hlo_value *b_compare_typed(builder *b, const char *dir, const char *type, hlo_value *x,
                           hlo_value *y) {
  if (!x || !y) { b->failed = true; return NULL; }
  hlo_value *ops[2] = {x, y};
  hlo_type *t = b_type_like(b, x->type, HLO_I1);
  hlo_op *op = b_op(b, OP_COMPARE, ops, 2, &t, 1, 0);
  if (!op) return NULL;
  arena *a = &b->m->arena;
  b_set_attr(b, op, "comparison_direction", attr_enum(a, "stablehlo", "comparison_direction", dir));
  if (type) b_set_attr(b, op, "compare_type", attr_enum(a, "stablehlo", "comparison_type", type));
  return b->failed ? NULL : &op->results[0];
}

hlo_value *b_compare(builder *b, const char *dir, hlo_value *x, hlo_value *y) {
  if (!x) { b->failed = true; return NULL; }
  const char *type = "FLOAT";
  switch (dtype_class(x->type->dtype)) {
    case HLO_CLASS_SINT: type = "SIGNED"; break;
    case HLO_CLASS_UINT:
    case HLO_CLASS_BOOL: type = "UNSIGNED"; break;
    default: break;
  }
  return b_compare_typed(b, dir, type, x, y);
}

hlo_value *b_select(builder *b, hlo_value *pred, hlo_value *on_true, hlo_value *on_false) {
  if (!pred || !on_true || !on_false) { b->failed = true; return NULL; }
  hlo_value *ops[3] = {pred, on_true, on_false};
  return result0(b, b_op(b, OP_SELECT, ops, 3, &on_true->type, 1, 0));
}

hlo_value *b_clamp(builder *b, hlo_value *lo, hlo_value *x, hlo_value *hi) {
  if (!lo || !x || !hi) { b->failed = true; return NULL; }
  hlo_value *ops[3] = {lo, x, hi};
  return result0(b, b_op(b, OP_CLAMP, ops, 3, &x->type, 1, 0));
}

hlo_value *b_complex(builder *b, hlo_value *re, hlo_value *im) {
  if (!re || !im) { b->failed = true; return NULL; }
  hlo_value *ops[2] = {re, im};
  hlo_type *t = b_type_like(b, re->type, dtype_complex_of(re->type->dtype));
  return result0(b, b_op(b, OP_COMPLEX, ops, 2, &t, 1, 0));
}

hlo_value *b_convert(builder *b, hlo_value *x, hlo_dtype dt) {
  return b_unary_to(b, OP_CONVERT, x, dt);
}

/* ------------------------------------------------------------ shape ops */

hlo_value *b_broadcast_in_dim(builder *b, hlo_value *x, hlo_type *t, const int64_t *dims,
                              uint32_t ndims) {
  if (!x || !t) { b->failed = true; return NULL; }
  hlo_op *op = b_op(b, OP_BROADCAST_IN_DIM, &x, 1, &t, 1, 0);
  b_set_attr(b, op, "broadcast_dimensions", b_i64s(b, dims, ndims));
  return b->failed ? NULL : &op->results[0];
}

hlo_value *b_broadcast_to(builder *b, hlo_value *x, uint32_t rank, const int64_t *dims) {
  if (!x) { b->failed = true; return NULL; }
  const hlo_type *xt = x->type;
  if (xt->rank == rank && (rank == 0 || memcmp(xt->dims, dims, rank * sizeof *dims) == 0))
    return x;
  if (xt->rank > rank) { b->failed = true; return NULL; }
  int64_t bd[64];
  if (xt->rank > 64) { b->failed = true; return NULL; }
  for (uint32_t i = 0; i < xt->rank; i++) bd[i] = rank - xt->rank + i;
  hlo_type *t = b_type(b, xt->dtype, rank, dims);
  return b_broadcast_in_dim(b, x, t, bd, xt->rank);
}

hlo_value *b_reshape(builder *b, hlo_value *x, hlo_type *t) {
  if (!x || !t) { b->failed = true; return NULL; }
  return result0(b, b_op(b, OP_RESHAPE, &x, 1, &t, 1, 0));
}

hlo_value *b_transpose(builder *b, hlo_value *x, const int64_t *perm) {
  if (!x) { b->failed = true; return NULL; }
  uint32_t r = x->type->rank;
  int64_t dims[64];
  if (r > 64) { b->failed = true; return NULL; }
  for (uint32_t i = 0; i < r; i++) dims[i] = x->type->dims[perm[i]];
  hlo_type *t = b_type(b, x->type->dtype, r, dims);
  if (!t) return NULL;
  hlo_op *op = b_op(b, OP_TRANSPOSE, &x, 1, &t, 1, 0);
  b_set_attr(b, op, "permutation", b_i64s(b, perm, r));
  return b->failed ? NULL : &op->results[0];
}

hlo_attr *b_dot_dims(builder *b, const int64_t *lb, uint32_t nlb, const int64_t *rb, uint32_t nrb,
                     const int64_t *lc, uint32_t nlc, const int64_t *rc, uint32_t nrc) {
  arena *a = &b->m->arena;
  hlo_attr *at = arena_alloc(a, sizeof *at);
  named_attr *f = arena_calloc(a, 4, sizeof *f);
  if (!at || !f) { b->failed = true; return NULL; }
  at->kind = ATTR_STRUCT;
  at->u.st.name = "stablehlo.dot";
  at->u.st.fields = f;
  uint32_t k = 0;
  if (nlb) { f[k].name = "lhs_batching_dimensions"; f[k++].value = b_i64s(b, lb, nlb); }
  if (nrb) { f[k].name = "rhs_batching_dimensions"; f[k++].value = b_i64s(b, rb, nrb); }
  if (nlc) { f[k].name = "lhs_contracting_dimensions"; f[k++].value = b_i64s(b, lc, nlc); }
  if (nrc) { f[k].name = "rhs_contracting_dimensions"; f[k++].value = b_i64s(b, rc, nrc); }
  at->u.st.n = k;
  return b->failed ? NULL : at;
}

hlo_value *b_slice(builder *b, hlo_value *x, const int64_t *start, const int64_t *limit,
                   const int64_t *strides) {
  if (!x) { b->failed = true; return NULL; }
  uint32_t r = x->type->rank;
  int64_t dims[64], ones[64];
  if (r > 64) { b->failed = true; return NULL; }
  for (uint32_t i = 0; i < r; i++) {
    int64_t s = strides ? strides[i] : 1;
    ones[i] = s;
    dims[i] = s > 0 && limit[i] > start[i] ? (limit[i] - start[i] + s - 1) / s : 0;
  }
  hlo_type *t = b_type(b, x->type->dtype, r, dims);
  hlo_op *op = b_op(b, OP_SLICE, &x, 1, &t, 1, 0);
  b_set_attr(b, op, "start_indices", b_i64s(b, start, r));
  b_set_attr(b, op, "limit_indices", b_i64s(b, limit, r));
  b_set_attr(b, op, "strides", b_i64s(b, ones, r));
  return b->failed ? NULL : &op->results[0];
}

hlo_value *b_iota(builder *b, hlo_type *t, int64_t dim) {
  hlo_op *op = b_op(b, OP_IOTA, NULL, 0, &t, 1, 0);
  if (!op) return NULL;
  hlo_attr *at = attr_int(&b->m->arena, dim, HLO_I64);
  b_set_attr(b, op, "iota_dimension", at);
  return b->failed ? NULL : &op->results[0];
}

hlo_value *b_concatenate(builder *b, hlo_value *const *xs, uint32_t n, int64_t dim) {
  if (n == 0 || !xs[0]) { b->failed = true; return NULL; }
  const hlo_type *t0 = xs[0]->type;
  int64_t dims[64];
  if (t0->rank > 64 || dim < 0 || (uint64_t)dim >= t0->rank) { b->failed = true; return NULL; }
  memcpy(dims, t0->dims, t0->rank * sizeof *dims);
  dims[dim] = 0;
  for (uint32_t i = 0; i < n; i++) {
    if (!xs[i]) { b->failed = true; return NULL; }
    dims[dim] += xs[i]->type->dims[dim];
  }
  hlo_type *t = b_type(b, t0->dtype, t0->rank, dims);
  hlo_op *op = b_op(b, OP_CONCATENATE, xs, n, &t, 1, 0);
  if (!op) return NULL;
  b_set_attr(b, op, "dimension", attr_int(&b->m->arena, dim, HLO_I64));
  return b->failed ? NULL : &op->results[0];
}
