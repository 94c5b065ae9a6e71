/* chlo_legalize.c — the chlo-legalize-to-stablehlo pass: walks every function
 * (nested regions first), rewrites each chlo op into StableHLO ops inserted
 * before it, redirects the uses of its results and unlinks it.
 *
 * This file holds the walk, the broadcasting binary ops (chlo.broadcast_*,
 * numpy-style broadcasting or explicit broadcast_dimensions), the constant
 * ops and rank_specialization_cluster; the math lives in chlo_special.c and
 * chlo_trig.c, the ops with regions or several results in chlo_control.c.
 * Semantics: the chlo dialect's, as stablehlo's ChloLegalizeToStablehlo.cpp
 * decomposes them (see chlo_lower.h). */
#include <string.h>

#include "passes/chlo_lower.h"
#include "passes/passes.h"
#include "ir/element.h"

#define MAX_RANK 64

static hlo_status unsupported(const hlo_op *op, const char *why) {
  return status_at(HLO_UNIMPLEMENTED, &op->loc, "%s: %s", op_name(op->opcode), why);
}

static hlo_status unsupported_type(const hlo_op *op) {
  const hlo_type *t = op->num_operands ? op->operands[0]->type : NULL;
  return status_at(HLO_UNIMPLEMENTED, &op->loc, "%s: element type %s is not supported",
                   op_name(op->opcode),
                   t && t->kind == TYPE_TENSOR ? hlo_dtype_name(t->dtype) : "(non-tensor)");
}

/* ------------------------------------------------------- broadcasting ops */

/* x broadcast to the shape of `rt` (keeping x's element type): unchanged
 * when the shapes agree; by `bdims` when given and x has the lower rank;
 * otherwise numpy-style (trailing dimensions aligned). */
static hlo_value *bcast(builder *b, hlo_value *x, const hlo_type *rt, const int64_t *bdims,
                        uint32_t nbdims) {
  const hlo_type *xt = x->type;
  if (xt->rank == rt->rank &&
      (rt->rank == 0 || memcmp(xt->dims, rt->dims, rt->rank * sizeof *rt->dims) == 0))
    return x;
  hlo_type *t = b_type(b, xt->dtype, rt->rank, rt->dims);
  if (bdims && nbdims == xt->rank && xt->rank < rt->rank)
    return b_broadcast_in_dim(b, x, t, bdims, nbdims);
  int64_t d[MAX_RANK];
  for (uint32_t i = 0; i < xt->rank; i++) d[i] = rt->rank - xt->rank + i;
  return b_broadcast_in_dim(b, x, t, d, xt->rank);
}

/* The StableHLO op a chlo.broadcast_* op becomes (OP_COUNT when none). */
static hlo_opcode bcast_target(hlo_opcode c) {
  switch (c) {
    case OP_CHLO_BROADCAST_ADD: return OP_ADD;
    case OP_CHLO_BROADCAST_AND: return OP_AND;
    case OP_CHLO_BROADCAST_ATAN2: return OP_ATAN2;
    case OP_CHLO_BROADCAST_COMPARE: return OP_COMPARE;
    case OP_CHLO_BROADCAST_COMPLEX: return OP_COMPLEX;
    case OP_CHLO_BROADCAST_DIVIDE: return OP_DIVIDE;
    case OP_CHLO_BROADCAST_MAXIMUM: return OP_MAXIMUM;
    case OP_CHLO_BROADCAST_MINIMUM: return OP_MINIMUM;
    case OP_CHLO_BROADCAST_MULTIPLY: return OP_MULTIPLY;
    case OP_CHLO_BROADCAST_NEXT_AFTER: return OP_CHLO_NEXT_AFTER;
    case OP_CHLO_BROADCAST_OR: return OP_OR;
    case OP_CHLO_BROADCAST_POLYGAMMA: return OP_CHLO_POLYGAMMA;
    case OP_CHLO_BROADCAST_POWER: return OP_POWER;
    case OP_CHLO_BROADCAST_REMAINDER: return OP_REMAINDER;
    case OP_CHLO_BROADCAST_SELECT: return OP_SELECT;
    case OP_CHLO_BROADCAST_SHIFT_LEFT: return OP_SHIFT_LEFT;
    case OP_CHLO_BROADCAST_SHIFT_RIGHT_ARITHMETIC: return OP_SHIFT_RIGHT_ARITHMETIC;
    case OP_CHLO_BROADCAST_SHIFT_RIGHT_LOGICAL: return OP_SHIFT_RIGHT_LOGICAL;
    case OP_CHLO_BROADCAST_SUBTRACT: return OP_SUBTRACT;
    case OP_CHLO_BROADCAST_XOR: return OP_XOR;
    case OP_CHLO_BROADCAST_ZETA: return OP_CHLO_ZETA;
    default: return OP_COUNT;
  }
}

/* The stablehlo spelling of a chlo comparison enum value, or NULL. */
static const char *enum_value(const hlo_attr *at) {
  if (!at) return NULL;
  if (at->kind == ATTR_ENUM) return at->u.en.value;
  return NULL;
}

static hlo_value *lower_binary_chlo(builder *b, hlo_opcode c, hlo_value *x, hlo_value *y) {
  switch (c) {
    case OP_CHLO_NEXT_AFTER: return chlo_next_after(b, x, y);
    case OP_CHLO_POLYGAMMA: return chlo_polygamma(b, x, y);
    case OP_CHLO_ZETA: return chlo_zeta(b, x, y);
    case OP_CHLO_MULHI: return chlo_mulhi(b, x, y);
    default: return NULL;
  }
}

/* chlo.broadcast_*: broadcasts the operands numpy-style to the result shape
 * and applies the StableHLO op. */
static hlo_status lower_broadcast(builder *b, hlo_op *op, hlo_value **out) {
  hlo_opcode target = bcast_target(op->opcode);
  const hlo_type *rt = op->results[0].type;
  if (rt->kind != TYPE_TENSOR || !type_is_static(rt) || rt->rank > MAX_RANK)
    return unsupported(op, "result must be a static tensor");
  for (uint32_t i = 0; i < op->num_operands; i++)
    if (op->operands[i]->type->kind != TYPE_TENSOR || !type_is_static(op->operands[i]->type) ||
        op->operands[i]->type->rank > rt->rank)
      return unsupported(op, "operands must be static tensors of rank <= the result's");
  int64_t *bd = NULL;
  uint32_t nbd = 0;
  const hlo_attr *bda = op_attr(op, "broadcast_dimensions");
  if (bda && !attr_as_ints(&b->m->arena, bda, &bd, &nbd))
    return unsupported(op, "malformed broadcast_dimensions");
  hlo_value *ops[3];
  uint32_t n = op->num_operands;
  if (n > 3 || (target == OP_SELECT ? n != 3 : n != 2))
    return unsupported(op, "wrong operand count");
  for (uint32_t i = 0; i < n; i++) ops[i] = bcast(b, op->operands[i], rt, bd, nbd);
  if (b->failed) return builder_status(b);
  if (target == OP_CHLO_NEXT_AFTER || target == OP_CHLO_POLYGAMMA || target == OP_CHLO_ZETA) {
    out[0] = lower_binary_chlo(b, target, ops[0], ops[1]);
    if (!out[0] && !b->failed) return unsupported_type(op);
    return builder_status(b);
  }
  hlo_type *t = (hlo_type *)rt;
  hlo_op *o = b_op(b, target, ops, n, &t, 1, 0);
  if (!o) return builder_status(b);
  if (target == OP_COMPARE) {
    const char *dir = enum_value(op_attr(op, "comparison_direction"));
    if (!dir) return unsupported(op, "missing comparison_direction");
    const char *ct = enum_value(op_attr(op, "compare_type"));
    arena *a = &b->m->arena;
    b_set_attr(b, o, "comparison_direction",
               attr_enum(a, "stablehlo", "comparison_direction", dir));
    if (ct && strcmp(ct, "NOTYPE") != 0)
      b_set_attr(b, o, "compare_type", attr_enum(a, "stablehlo", "comparison_type", ct));
  }
  out[0] = &o->results[0];
  return builder_status(b);
}

/* ------------------------------------------------------------ constants */

static hlo_status lower_constant_like(builder *b, hlo_op *op, hlo_value **out) {
  hlo_type *rt = op->results[0].type;
  const hlo_attr *v = op_attr(op, "value");
  if (!v) return unsupported(op, "missing 'value'");
  if (!type_is_static(rt)) return unsupported(op, "dynamic result shape");
  switch (v->kind) {
    case ATTR_FLOAT: out[0] = b_const_of(b, rt, v->u.f.v); break;
    case ATTR_INT: out[0] = b_const_int_of(b, rt, v->u.i.v); break;
    case ATTR_BOOL: out[0] = b_const_int_of(b, rt, v->u.b); break;
    case ATTR_DENSE:
      if (v->u.dense.type->dtype != rt->dtype || v->u.dense.nbytes < hlo_dtype_size(rt->dtype))
        return unsupported(op, "value of another element type");
      out[0] = b_constant(b, attr_dense(&b->m->arena, rt, v->u.dense.data,
                                        hlo_dtype_size(rt->dtype), true));
      break;
    default: return unsupported(op, "unsupported 'value' attribute");
  }
  return builder_status(b);
}

static hlo_status lower_constant(builder *b, hlo_op *op, hlo_value **out) {
  const hlo_attr *v = op_attr(op, "value");
  if (!v || v->kind != ATTR_DENSE) return unsupported(op, "expected a dense 'value'");
  out[0] = b_constant(b, (hlo_attr *)v);
  return builder_status(b);
}

/* rank_specialization_cluster: its body, inlined before it. */
static hlo_status lower_cluster(hlo_op *op, hlo_value **out) {
  if (op->num_regions != 1) return unsupported(op, "expected one region");
  hlo_block *body = &op->regions[0].block;
  hlo_op *term = body->last;
  if (body->num_args != op->num_operands || !term || term->num_operands != op->num_results)
    return unsupported(op, "malformed body");
  while (body->first && body->first != term) {
    hlo_op *o = body->first;
    op_unlink(o);
    op_insert_before(op, o);
    for (uint32_t i = 0; i < body->num_args; i++)
      for (uint32_t k = 0; k < o->num_operands; k++)
        if (o->operands[k] == &body->args[i]) o->operands[k] = op->operands[i];
    for (uint32_t i = 0; i < body->num_args; i++)
      for (uint32_t r = 0; r < o->num_regions; r++)
        block_replace_uses(&o->regions[r].block, &body->args[i], op->operands[i]);
  }
  for (uint32_t k = 0; k < term->num_operands; k++) {
    hlo_value *v = term->operands[k];
    out[k] = (!v->def && v->block == body) ? op->operands[v->index] : v;
  }
  return NULL;
}

/* ------------------------------------------------------------- the walk */

typedef hlo_value *(*unary_fn)(builder *, hlo_value *);

/* The value-level decomposition of a unary chlo op, or NULL. */
static unary_fn unary_lowering(hlo_opcode c) {
  switch (c) {
    case OP_CHLO_ACOS: return chlo_acos;
    case OP_CHLO_ACOSH: return chlo_acosh;
    case OP_CHLO_ASIN: return chlo_asin;
    case OP_CHLO_ASINH: return chlo_asinh;
    case OP_CHLO_ATAN: return chlo_atan;
    case OP_CHLO_ATANH: return chlo_atanh;
    case OP_CHLO_BESSEL_I1E: return chlo_bessel_i1e;
    case OP_CHLO_CONJ: return chlo_conj;
    case OP_CHLO_COSH: return chlo_cosh;
    case OP_CHLO_DIGAMMA: return chlo_digamma;
    case OP_CHLO_ERF: return chlo_erf;
    case OP_CHLO_ERF_INV: return chlo_erf_inv;
    case OP_CHLO_ERFC: return chlo_erfc;
    case OP_CHLO_IS_INF: return chlo_is_inf;
    case OP_CHLO_IS_NEG_INF: return chlo_is_neg_inf;
    case OP_CHLO_IS_POS_INF: return chlo_is_pos_inf;
    case OP_CHLO_LGAMMA: return chlo_lgamma;
    case OP_CHLO_SINH: return chlo_sinh;
    case OP_CHLO_SQUARE: return chlo_square;
    case OP_CHLO_TAN: return chlo_tan;
    default: return NULL;
  }
}

/* Replaces chlo op `op` by its decomposition (checking the result shapes),
 * redirects its uses in `f` and unlinks it. */
static hlo_status rewrite_op(hlo_module_ir *m, hlo_func *f, hlo_op *op) {
  hlo_value *outs[16] = {0};
  hlo_value **out = outs;
  if (op->num_results > 16) {
    out = arena_calloc(&m->arena, op->num_results, sizeof *out);
    if (!out) return status_new(HLO_RESOURCE_EXHAUSTED, "out of memory");
  }
  for (uint32_t i = 0; i < op->num_operands; i++)
    if (op->operands[i]->type->kind != TYPE_TENSOR)
      return unsupported(op, "operands must be tensors");
  builder b;
  builder_at(&b, m, op);
  hlo_status st = NULL;
  unary_fn uf = unary_lowering(op->opcode);
  if (uf) {
    if (op->num_operands != 1 || op->num_results != 1) return unsupported(op, "expected one operand");
    out[0] = uf(&b, op->operands[0]);
    if (!out[0] && !b.failed) return unsupported_type(op);
    st = builder_status(&b);
  } else if (bcast_target(op->opcode) != OP_COUNT) {
    st = lower_broadcast(&b, op, out);
  } else {
    switch (op->opcode) {
      case OP_CHLO_NEXT_AFTER:
      case OP_CHLO_POLYGAMMA:
      case OP_CHLO_ZETA:
      case OP_CHLO_MULHI:
        if (op->num_operands != 2 || op->num_results != 1) return unsupported(op, "expected two operands");
        out[0] = lower_binary_chlo(&b, op->opcode, op->operands[0], op->operands[1]);
        if (!out[0] && !b.failed) return unsupported_type(op);
        st = builder_status(&b);
        break;
      case OP_CHLO_CONSTANT_LIKE: st = lower_constant_like(&b, op, out); break;
      case OP_CHLO_CONSTANT: st = lower_constant(&b, op, out); break;
      case OP_CHLO_TOP_K: st = chlo_lower_top_k(m, op, out); break;
      case OP_CHLO_SCAN: st = chlo_lower_scan(m, op, out); break;
      case OP_CHLO_RAGGED_DOT: st = chlo_lower_ragged_dot(m, op, out); break;
      case OP_CHLO_RANK_SPECIALIZATION_CLUSTER: st = lower_cluster(op, out); break;
      default: return unsupported(op, "no decomposition to StableHLO");
    }
  }
  if (st) return st;
  for (uint32_t i = 0; i < op->num_results; i++) {
    const hlo_type *want = op->results[i].type;
    if (!out[i] || !type_same_shape(out[i]->type, want))
      return status_at(HLO_INTERNAL, &op->loc, "%s: decomposition produced a value of the wrong type",
                       op_name(op->opcode));
  }
  for (uint32_t i = 0; i < op->num_results; i++)
    block_replace_uses(&f->body.block, &op->results[i], out[i]);
  op_unlink(op);
  return NULL;
}

static hlo_status legalize_block(hlo_module_ir *m, hlo_func *f, hlo_block *blk) {
  for (hlo_op *op = blk->first; op;) {
    for (uint32_t r = 0; r < op->num_regions; r++)
      HLO_TRY(legalize_block(m, f, &op->regions[r].block));
    hlo_op *next = op->next;
    /* a cluster's yield goes away with its cluster */
    if ((op_flags(op->opcode) & OPF_CHLO) && op->opcode != OP_CHLO_YIELD)
      HLO_TRY(rewrite_op(m, f, op));
    op = next;
  }
  return NULL;
}

hlo_status pass_chlo_legalize(hlo_module_ir *m) {
  for (hlo_func *f = m->funcs; f; f = f->next)
    HLO_RETURN_IF_ERROR(legalize_block(m, f, &f->body.block), "while legalizing chlo in @%s",
                        f->name ? f->name : "?");
  return NULL;
}
