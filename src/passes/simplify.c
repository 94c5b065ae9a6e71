/* simplify.c — algebraic simplification and canonicalisation: ONE table of
 * local rules {op, name, match, rewrite, valid_when}, run to a fixed point by
 * one worklist driver (the shape of XLA's algebraic_simplifier and of MLIR's
 * greedy pattern driver; ideas taken, no code).
 *
 * A rule applies to one opcode with one result. `match` looks at the op and
 * its operands' producers without changing anything; `rewrite` returns the
 * value that replaces the op's result: an existing value, or one it builds
 * with the builder (inserted right before the op). The driver then
 * redirects the uses, removes the op, indexes the new ops, and queues what
 * may simplify next: the new ops, the readers of the result, and the
 * producers of the removed op's operands (removed in turn when unused and
 * pure). The driver checks that the replacement has exactly the op's type.
 *
 * Every rule's `valid_when` states when it preserves the spec's semantics
 * (NaN, -0, integer overflow): a rule that holds only for integers says so
 * and its match checks the element type. Quantized types are never touched
 * (their ops are dequantize-op-quantize). One caveat shared with XLA: rules
 * that return x for x*1, -(-x) hand back a signalling NaN as it is, where
 * computing the op would quiet it; JAX programs never make signalling NaNs.
 *
 * Cost: O(ops) work plus the rewrites, each O(its uses); a use index built
 * once per function (use_index.h) answers every def-use question. */
#include <stdlib.h>
#include <string.h>

#include "ir/element.h"
#include "passes/builder.h"
#include "passes/pass_util.h"
#include "passes/passes.h"
#include "passes/use_index.h"
#include "support/arena.h"

#define MAX_RANK 64

typedef struct rw {
  hlo_module_ir *m;
  builder b; /* set before each rewrite: inserts before the op */
} rw;

typedef struct simplify_rule {
  hlo_opcode op;
  const char *name;
  bool (*match)(const hlo_op *op);
  hlo_value *(*rewrite)(rw *c, hlo_op *op);
  const char *valid_when;
} simplify_rule;

/* ------------------------------------------------------------ helpers */

static bool plain_tensor(const hlo_type *t) {
  return t && t->kind == TYPE_TENSOR && !t->quant && type_is_static(t) && t->rank <= MAX_RANK;
}

static hlo_type *rtype(const hlo_op *op) { return op->results[0].type; }
static hlo_value *opnd(const hlo_op *op, uint32_t i) { return op->operands[i]; }

/* Every operand and the result are plain tensors. */
static bool all_plain(const hlo_op *op) {
  if (op->num_results != 1 || !plain_tensor(rtype(op))) return false;
  for (uint32_t i = 0; i < op->num_operands; i++)
    if (!plain_tensor(opnd(op, i)->type)) return false;
  return true;
}

static bool int_or_bool(const hlo_type *t) { return dtype_is_int(t->dtype) || t->dtype == HLO_I1; }

/* The integer value of splat constant `v` (of an int or i1 type). */
static bool splat_int(const hlo_value *v, int64_t *out) {
  const uint8_t *p = value_splat_bytes(v);
  if (!p || !int_or_bool(v->type)) return false;
  *out = (int64_t)elem_get_bits(v->type->dtype, p, 0);
  return true;
}

static bool splat_int_is(const hlo_value *v, int64_t want) {
  int64_t x;
  return splat_int(v, &x) && x == want;
}

/* All bits set: -1 of a signed type, the maximum of an unsigned one, true. */
static bool splat_all_ones(const hlo_value *v) {
  int64_t x;
  if (!splat_int(v, &x)) return false;
  int bits = dtype_bits(v->type->dtype);
  uint64_t mask = bits >= 64 ? ~(uint64_t)0 : (((uint64_t)1 << bits) - 1);
  return ((uint64_t)x & mask) == mask;
}

static bool splat_float_one(const hlo_value *v) {
  const uint8_t *p = value_splat_bytes(v);
  return p && dtype_is_float(v->type->dtype) && elem_get_f64(v->type->dtype, p, 0) == 1.0;
}

static const hlo_op *def_of(const hlo_value *v, hlo_opcode c) {
  return v->def && v->def->opcode == c && v->def->num_results == 1 ? v->def : NULL;
}

/* The i64 list of attribute `name` when it is a dense array. */
static bool ints_attr(const hlo_op *op, const char *name, const int64_t **out, uint32_t *n) {
  const hlo_attr *a = op_attr(op, name);
  if (!a || a->kind != ATTR_DENSE_ARRAY || !a->u.darr.ints) {
    if (a && a->kind == ATTR_DENSE_ARRAY && a->u.darr.n == 0) { /* empty list */
      *out = NULL;
      *n = 0;
      return true;
    }
    return false;
  }
  *out = a->u.darr.ints;
  *n = a->u.darr.n;
  return true;
}

static bool is_iota(const int64_t *v, uint32_t n) {
  for (uint32_t i = 0; i < n; i++)
    if (v[i] != (int64_t)i) return false;
  return true;
}

/* The operand (index k) returned as is when its type is exactly op's. */
static bool operand_fits(const hlo_op *op, uint32_t k) {
  return k < op->num_operands && type_equal(opnd(op, k)->type, rtype(op));
}

/* A splat constant of op's result type holding the element at `bytes`. */
static hlo_value *splat_like_result(rw *c, const hlo_op *op, const uint8_t *bytes) {
  hlo_attr *a = attr_dense(&c->m->arena, rtype(op), bytes, hlo_dtype_size(rtype(op)->dtype), true);
  if (!a) {
    c->b.failed = true;
    return NULL;
  }
  return b_constant(&c->b, a);
}

/* ------------------------------------------------ arithmetic and logic */

static bool m_add_zero(const hlo_op *op) {
  return all_plain(op) && int_or_bool(rtype(op)) &&
         ((splat_int_is(opnd(op, 1), 0) && operand_fits(op, 0)) ||
          (splat_int_is(opnd(op, 0), 0) && operand_fits(op, 1)));
}
static hlo_value *r_add_zero(rw *c, hlo_op *op) {
  (void)c;
  return splat_int_is(opnd(op, 1), 0) && operand_fits(op, 0) ? opnd(op, 0) : opnd(op, 1);
}

static bool m_sub_zero(const hlo_op *op) {
  return all_plain(op) && int_or_bool(rtype(op)) && splat_int_is(opnd(op, 1), 0) &&
         operand_fits(op, 0);
}
static hlo_value *r_first(rw *c, hlo_op *op) {
  (void)c;
  return opnd(op, 0);
}

static bool is_one(const hlo_value *v) {
  return int_or_bool(v->type) ? splat_int_is(v, 1) : splat_float_one(v);
}
static bool m_mul_one(const hlo_op *op) {
  if (!all_plain(op) || !(int_or_bool(rtype(op)) || dtype_is_float(rtype(op)->dtype))) return false;
  return (is_one(opnd(op, 1)) && operand_fits(op, 0)) || (is_one(opnd(op, 0)) && operand_fits(op, 1));
}
static hlo_value *r_mul_one(rw *c, hlo_op *op) {
  (void)c;
  return is_one(opnd(op, 1)) && operand_fits(op, 0) ? opnd(op, 0) : opnd(op, 1);
}

static bool m_mul_zero(const hlo_op *op) {
  return all_plain(op) && int_or_bool(rtype(op)) &&
         ((splat_int_is(opnd(op, 1), 0) && operand_fits(op, 1)) ||
          (splat_int_is(opnd(op, 0), 0) && operand_fits(op, 0)));
}
static hlo_value *r_mul_zero(rw *c, hlo_op *op) {
  (void)c;
  return splat_int_is(opnd(op, 1), 0) && operand_fits(op, 1) ? opnd(op, 1) : opnd(op, 0);
}

/* x op x -> x (and, or, max, min of integers). */
static bool m_idempotent(const hlo_op *op) {
  return all_plain(op) && int_or_bool(rtype(op)) && opnd(op, 0) == opnd(op, 1) &&
         operand_fits(op, 0);
}

/* and(x, all ones) -> x; and(x, 0) -> 0. */
static bool m_and_const(const hlo_op *op) {
  if (!all_plain(op) || !int_or_bool(rtype(op))) return false;
  for (uint32_t k = 0; k < 2; k++) {
    const hlo_value *cst = opnd(op, k);
    if ((splat_all_ones(cst) && operand_fits(op, 1 - k)) || (splat_int_is(cst, 0) && operand_fits(op, k)))
      return true;
  }
  return false;
}
static hlo_value *r_and_const(rw *c, hlo_op *op) {
  (void)c;
  for (uint32_t k = 0; k < 2; k++) {
    hlo_value *cst = opnd(op, k);
    if (splat_int_is(cst, 0) && operand_fits(op, k)) return cst;
    if (splat_all_ones(cst) && operand_fits(op, 1 - k)) return opnd(op, 1 - k);
  }
  return NULL;
}

/* or(x, 0) -> x; or(x, all ones) -> all ones. */
static bool m_or_const(const hlo_op *op) {
  if (!all_plain(op) || !int_or_bool(rtype(op))) return false;
  for (uint32_t k = 0; k < 2; k++) {
    const hlo_value *cst = opnd(op, k);
    if ((splat_int_is(cst, 0) && operand_fits(op, 1 - k)) || (splat_all_ones(cst) && operand_fits(op, k)))
      return true;
  }
  return false;
}
static hlo_value *r_or_const(rw *c, hlo_op *op) {
  (void)c;
  for (uint32_t k = 0; k < 2; k++) {
    hlo_value *cst = opnd(op, k);
    if (splat_all_ones(cst) && operand_fits(op, k)) return cst;
    if (splat_int_is(cst, 0) && operand_fits(op, 1 - k)) return opnd(op, 1 - k);
  }
  return NULL;
}

/* f(f(x)) -> x for the involutions negate and not. */
static bool m_involution(const hlo_op *op) {
  const hlo_op *in = def_of(opnd(op, 0), op->opcode);
  return in && all_plain(op) && plain_tensor(opnd(in, 0)->type) &&
         type_equal(opnd(in, 0)->type, rtype(op));
}
static hlo_value *r_involution(rw *c, hlo_op *op) {
  (void)c;
  return opnd(opnd(op, 0)->def, 0);
}

/* ---------------------------------------------------------- conversions */

static bool m_convert_same(const hlo_op *op) { return all_plain(op) && operand_fits(op, 0); }

/* ------------------------------------------------------------ selection */

static bool m_select_const_pred(const hlo_op *op) {
  if (!all_plain(op) || !value_splat_bytes(opnd(op, 0))) return false;
  return operand_fits(op, 1) && operand_fits(op, 2);
}
static hlo_value *r_select_const_pred(rw *c, hlo_op *op) {
  (void)c;
  int64_t p;
  if (!splat_int(opnd(op, 0), &p)) return NULL;
  return p ? opnd(op, 1) : opnd(op, 2);
}

static bool m_select_same(const hlo_op *op) {
  return all_plain(op) && opnd(op, 1) == opnd(op, 2) && operand_fits(op, 1);
}
static hlo_value *r_second(rw *c, hlo_op *op) {
  (void)c;
  return opnd(op, 1);
}

static bool m_gte_tuple(const hlo_op *op) {
  const hlo_op *t = op->operands[0]->def;
  const hlo_attr *ix = op_attr(op, "index");
  if (!t || t->opcode != OP_TUPLE || !ix || ix->kind != ATTR_INT) return false;
  int64_t i = ix->u.i.v;
  return i >= 0 && i < t->num_operands && type_equal(t->operands[i]->type, rtype(op));
}
static hlo_value *r_gte_tuple(rw *c, hlo_op *op) {
  (void)c;
  return op->operands[0]->def->operands[op_attr(op, "index")->u.i.v];
}

/* ------------------------------------------------------- layout ops */

/* An op that only rearranges (broadcast_in_dim, reshape, transpose) applied
 * to a splat constant. */
static bool m_splat_operand(const hlo_op *op) {
  return all_plain(op) && value_splat_bytes(opnd(op, 0)) &&
         opnd(op, 0)->type->dtype == rtype(op)->dtype;
}
static hlo_value *r_splat_operand(rw *c, hlo_op *op) {
  return splat_like_result(c, op, value_splat_bytes(opnd(op, 0)));
}

static bool m_transpose_identity(const hlo_op *op) {
  const int64_t *p;
  uint32_t n;
  return all_plain(op) && ints_attr(op, "permutation", &p, &n) && is_iota(p, n) &&
         operand_fits(op, 0);
}

static bool m_transpose_transpose(const hlo_op *op) {
  const hlo_op *in = def_of(opnd(op, 0), OP_TRANSPOSE);
  const int64_t *p, *q;
  uint32_t np, nq;
  return in && all_plain(op) && plain_tensor(opnd(in, 0)->type) &&
         ints_attr(op, "permutation", &p, &np) && ints_attr(in, "permutation", &q, &nq) &&
         np == nq && np == rtype(op)->rank;
}
static hlo_value *r_transpose_transpose(rw *c, hlo_op *op) {
  const hlo_op *in = opnd(op, 0)->def;
  const int64_t *p, *q;
  uint32_t n, nq;
  ints_attr(op, "permutation", &p, &n);
  ints_attr(in, "permutation", &q, &nq);
  /* result dim i = inner result dim p[i] = x dim q[p[i]] */
  int64_t perm[MAX_RANK];
  for (uint32_t i = 0; i < n; i++) {
    if (p[i] < 0 || p[i] >= n) return NULL;
    perm[i] = q[p[i]];
  }
  hlo_value *x = opnd(in, 0);
  if (is_iota(perm, n) && type_equal(x->type, rtype(op))) return x;
  hlo_op *t = b_op(&c->b, OP_TRANSPOSE, &x, 1, &op->results[0].type, 1, 0);
  b_set_attr(&c->b, t, "permutation", b_i64s(&c->b, perm, n));
  return c->b.failed ? NULL : &t->results[0];
}

static bool m_reshape_reshape(const hlo_op *op) {
  const hlo_op *in = def_of(opnd(op, 0), OP_RESHAPE);
  return in && all_plain(op) && plain_tensor(opnd(in, 0)->type) &&
         opnd(in, 0)->type->dtype == rtype(op)->dtype;
}
static hlo_value *r_reshape_reshape(rw *c, hlo_op *op) {
  hlo_value *x = opnd(opnd(op, 0)->def, 0);
  if (type_equal(x->type, rtype(op))) return x;
  return b_reshape(&c->b, x, rtype(op));
}

/* reshape(broadcast_in_dim(scalar)) -> broadcast_in_dim(scalar). */
static bool m_reshape_broadcast_scalar(const hlo_op *op) {
  const hlo_op *in = def_of(opnd(op, 0), OP_BROADCAST_IN_DIM);
  return in && all_plain(op) && plain_tensor(opnd(in, 0)->type) && opnd(in, 0)->type->rank == 0 &&
         opnd(in, 0)->type->dtype == rtype(op)->dtype;
}
static hlo_value *r_reshape_broadcast_scalar(rw *c, hlo_op *op) {
  hlo_value *s = opnd(opnd(op, 0)->def, 0);
  return b_broadcast_in_dim(&c->b, s, rtype(op), NULL, 0);
}

static bool m_broadcast_identity(const hlo_op *op) {
  const int64_t *d;
  uint32_t n;
  return all_plain(op) && ints_attr(op, "broadcast_dimensions", &d, &n) && is_iota(d, n) &&
         operand_fits(op, 0);
}

static bool m_broadcast_broadcast(const hlo_op *op) {
  const hlo_op *in = def_of(opnd(op, 0), OP_BROADCAST_IN_DIM);
  const int64_t *d, *e;
  uint32_t nd, ne;
  return in && all_plain(op) && plain_tensor(opnd(in, 0)->type) &&
         ints_attr(op, "broadcast_dimensions", &d, &nd) &&
         ints_attr(in, "broadcast_dimensions", &e, &ne) && nd == opnd(op, 0)->type->rank &&
         ne == opnd(in, 0)->type->rank;
}
static hlo_value *r_broadcast_broadcast(rw *c, hlo_op *op) {
  const hlo_op *in = opnd(op, 0)->def;
  const int64_t *d, *e;
  uint32_t nd, ne;
  ints_attr(op, "broadcast_dimensions", &d, &nd);
  ints_attr(in, "broadcast_dimensions", &e, &ne);
  /* x dim i -> inner result dim e[i] -> result dim d[e[i]] */
  int64_t dims[MAX_RANK];
  for (uint32_t i = 0; i < ne; i++) {
    if (e[i] < 0 || e[i] >= nd) return NULL;
    dims[i] = d[e[i]];
  }
  return b_broadcast_in_dim(&c->b, opnd(in, 0), rtype(op), dims, ne);
}

/* The start, limit and strides (NULL when absent: all 1) of slice `op`. */
static bool slice_params(const hlo_op *op, const int64_t **s, const int64_t **l,
                         const int64_t **st, uint32_t rank) {
  uint32_t ns, nl, nst;
  if (!ints_attr(op, "start_indices", s, &ns) || !ints_attr(op, "limit_indices", l, &nl) ||
      ns != rank || nl != rank)
    return false;
  if (!ints_attr(op, "strides", st, &nst)) *st = NULL;
  else if (nst != rank) return false;
  return true;
}
static bool m_slice_full(const hlo_op *op) {
  const int64_t *s, *l, *st;
  if (!all_plain(op) || !operand_fits(op, 0)) return false;
  const hlo_type *t = opnd(op, 0)->type;
  if (!slice_params(op, &s, &l, &st, t->rank)) return false;
  for (uint32_t i = 0; i < t->rank; i++)
    if (s[i] != 0 || l[i] != t->dims[i] || (st && st[i] != 1)) return false;
  return true;
}

/* slice(slice(x)): element k of the outer along a dim is x[s1 + (s2 + k*t2)*t1]. */
static bool m_slice_slice(const hlo_op *op) {
  const hlo_op *in = def_of(opnd(op, 0), OP_SLICE);
  const int64_t *s, *l, *st;
  return in && all_plain(op) && plain_tensor(opnd(in, 0)->type) &&
         slice_params(op, &s, &l, &st, rtype(op)->rank) &&
         slice_params(in, &s, &l, &st, rtype(op)->rank);
}
static hlo_value *r_slice_slice(rw *c, hlo_op *op) {
  const hlo_op *in = opnd(op, 0)->def;
  uint32_t r = rtype(op)->rank;
  const int64_t *s1, *l1, *t1, *s2, *l2, *t2;
  slice_params(in, &s1, &l1, &t1, r);
  slice_params(op, &s2, &l2, &t2, r);
  int64_t start[MAX_RANK], limit[MAX_RANK], stride[MAX_RANK];
  for (uint32_t i = 0; i < r; i++) {
    int64_t a = t1 ? t1[i] : 1, b = t2 ? t2[i] : 1, n = rtype(op)->dims[i];
    start[i] = s1[i] + s2[i] * a;
    stride[i] = a * b;
    limit[i] = start[i] + (n - 1) * stride[i] + 1; /* one past the last index taken */
    if (n == 0) start[i] = limit[i] = 0, stride[i] = 1; /* (start may be past the end) */
  }
  hlo_value *x = opnd(in, 0);
  hlo_op *sl = b_op(&c->b, OP_SLICE, &x, 1, &op->results[0].type, 1, 0);
  b_set_attr(&c->b, sl, "start_indices", b_i64s(&c->b, start, r));
  b_set_attr(&c->b, sl, "limit_indices", b_i64s(&c->b, limit, r));
  b_set_attr(&c->b, sl, "strides", b_i64s(&c->b, stride, r));
  return c->b.failed ? NULL : &sl->results[0];
}

static bool m_dynamic_slice_full(const hlo_op *op) {
  const int64_t *ss;
  uint32_t n;
  if (!all_plain(op) || !operand_fits(op, 0) || !ints_attr(op, "slice_sizes", &ss, &n)) return false;
  const hlo_type *t = opnd(op, 0)->type;
  if (n != t->rank) return false;
  for (uint32_t i = 0; i < n; i++)
    if (ss[i] != t->dims[i]) return false;
  return true;
}

static bool m_dynamic_update_slice_full(const hlo_op *op) {
  return all_plain(op) && operand_fits(op, 0) && operand_fits(op, 1);
}

static bool m_concatenate_single(const hlo_op *op) {
  return op->num_operands == 1 && all_plain(op) && operand_fits(op, 0);
}

static bool m_pad_zero(const hlo_op *op) {
  static const char *const names[] = {"edge_padding_low", "edge_padding_high", "interior_padding"};
  if (!all_plain(op) || !operand_fits(op, 0)) return false;
  for (int k = 0; k < 3; k++) {
    const int64_t *v;
    uint32_t n;
    if (!ints_attr(op, names[k], &v, &n)) return false;
    for (uint32_t i = 0; i < n; i++)
      if (v[i] != 0) return false;
  }
  return true;
}

/* reverse along no dimension of size > 1 */
static bool m_reverse_noop(const hlo_op *op) {
  const int64_t *d;
  uint32_t n;
  if (!all_plain(op) || !operand_fits(op, 0) || !ints_attr(op, "dimensions", &d, &n)) return false;
  const hlo_type *t = rtype(op);
  for (uint32_t i = 0; i < n; i++)
    if (d[i] < 0 || d[i] >= t->rank || t->dims[d[i]] > 1) return false;
  return true;
}

static bool m_reverse_reverse(const hlo_op *op) {
  const hlo_op *in = def_of(opnd(op, 0), OP_REVERSE);
  const int64_t *d, *e;
  uint32_t nd, ne;
  if (!in || !all_plain(op) || !ints_attr(op, "dimensions", &d, &nd) ||
      !ints_attr(in, "dimensions", &e, &ne) || nd != ne || !type_equal(opnd(in, 0)->type, rtype(op)))
    return false;
  for (uint32_t i = 0; i < nd; i++) { /* the same set (the verifier rejects duplicates) */
    bool found = false;
    for (uint32_t j = 0; j < ne && !found; j++) found = d[i] == e[j];
    if (!found) return false;
  }
  return true;
}
static hlo_value *r_inner_operand(rw *c, hlo_op *op) {
  (void)c;
  return opnd(opnd(op, 0)->def, 0);
}

/* ------------------------------------------------------------ the table */

static const simplify_rule k_rules[] = {
    {OP_ADD, "add_zero", m_add_zero, r_add_zero,
     "integers and i1 only: x + 0 is x (no overflow possible). Not floats: -0 + +0 is +0"},
    {OP_SUBTRACT, "subtract_zero", m_sub_zero, r_first,
     "integers only: x - 0 is x. (Floats would hold too, x - +0 keeping -0, but are left alone)"},
    {OP_MULTIPLY, "multiply_one", m_mul_one, r_mul_one,
     "integers, i1 and real floats: x * 1 is x exactly (also -0, inf, NaN). Not complex: "
     "(a+bi)(1+0i) computes a*1 - b*0, NaN when b is inf"},
    {OP_MULTIPLY, "multiply_zero", m_mul_zero, r_mul_zero,
     "integers and i1 only: x * 0 is 0. Not floats: NaN * 0 and inf * 0 are NaN, -x * 0 is -0"},
    {OP_AND, "and_self", m_idempotent, r_first, "integers and i1: x & x is x"},
    {OP_OR, "or_self", m_idempotent, r_first, "integers and i1: x | x is x"},
    {OP_MAXIMUM, "maximum_self", m_idempotent, r_first,
     "integers and i1 only: max(x, x) is x. (Floats left alone: NaN operands)"},
    {OP_MINIMUM, "minimum_self", m_idempotent, r_first, "integers and i1 only: min(x, x) is x"},
    {OP_AND, "and_constant", m_and_const, r_and_const,
     "integers and i1: x & ~0 is x, x & 0 is 0 (bitwise, no overflow)"},
    {OP_OR, "or_constant", m_or_const, r_or_const,
     "integers and i1: x | 0 is x, x | ~0 is ~0 (bitwise)"},
    {OP_NEGATE, "negate_negate", m_involution, r_involution,
     "always: integer negation wraps (-(-INT_MIN) is INT_MIN), float negation flips the sign bit"},
    {OP_NOT, "not_not", m_involution, r_involution, "always: bitwise not is an involution"},
    {OP_CONVERT, "convert_same_type", m_convert_same, r_first,
     "always: a convert to the operand's own type changes no value"},
    {OP_SELECT, "select_constant_pred", m_select_const_pred, r_select_const_pred,
     "always: a splat predicate picks one operand everywhere"},
    {OP_SELECT, "select_same_branches", m_select_same, r_second,
     "always: select(p, x, x) is x whatever p"},
    {OP_GET_TUPLE_ELEMENT, "get_tuple_element_of_tuple", m_gte_tuple, r_gte_tuple,
     "always: element i of tuple(x0, ..) is xi"},
    {OP_BROADCAST_IN_DIM, "broadcast_splat_constant", m_splat_operand, r_splat_operand,
     "always: every element of the result is the splat's one value"},
    {OP_RESHAPE, "reshape_splat_constant", m_splat_operand, r_splat_operand,
     "always: rearranging equal elements gives equal elements"},
    {OP_TRANSPOSE, "transpose_splat_constant", m_splat_operand, r_splat_operand,
     "always: rearranging equal elements gives equal elements"},
    {OP_BROADCAST_IN_DIM, "broadcast_identity", m_broadcast_identity, r_first,
     "always: same shape and broadcast_dimensions = [0..rank) copies each element to itself"},
    {OP_BROADCAST_IN_DIM, "broadcast_of_broadcast", m_broadcast_broadcast, r_broadcast_broadcast,
     "always: composing the dimension maps (x dim i -> inner dim e[i] -> result dim d[e[i]])"},
    {OP_TRANSPOSE, "transpose_identity", m_transpose_identity, r_first,
     "always: the identity permutation moves nothing"},
    {OP_TRANSPOSE, "transpose_of_transpose", m_transpose_transpose, r_transpose_transpose,
     "always: composed permutation perm[i] = inner[outer[i]] (dropped when the identity)"},
    {OP_RESHAPE, "reshape_same_type", m_convert_same, r_first,
     "always: a reshape to the operand's own shape"},
    {OP_RESHAPE, "reshape_of_reshape", m_reshape_reshape, r_reshape_reshape,
     "always: reshapes keep row-major element order, so two are one"},
    {OP_RESHAPE, "reshape_of_scalar_broadcast", m_reshape_broadcast_scalar,
     r_reshape_broadcast_scalar, "always: a broadcast scalar has the same value in every shape"},
    {OP_SLICE, "slice_full", m_slice_full, r_first,
     "always: start 0, limit = dims, stride 1 takes every element"},
    {OP_SLICE, "slice_of_slice", m_slice_slice, r_slice_slice,
     "always: start s1 + s2*t1, stride t1*t2 (element k of the outer is x[s1 + (s2 + k*t2)*t1]); "
     "an empty result slices [0:0]"},
    {OP_DYNAMIC_SLICE, "dynamic_slice_full", m_dynamic_slice_full, r_first,
     "always: the spec clamps start indices to [0, dim - size] = 0 when size = dim"},
    {OP_DYNAMIC_UPDATE_SLICE, "dynamic_update_slice_full", m_dynamic_update_slice_full, r_second,
     "always: an update of the operand's full shape is clamped to index 0 and replaces it all"},
    {OP_CONCATENATE, "concatenate_single", m_concatenate_single, r_first,
     "always: the concatenation of one operand is that operand"},
    {OP_PAD, "pad_zero", m_pad_zero, r_first,
     "always: zero edge and interior padding adds no element"},
    {OP_REVERSE, "reverse_noop", m_reverse_noop, r_first,
     "always: reversing dimensions of size 0 or 1 moves nothing"},
    {OP_REVERSE, "reverse_of_reverse", m_reverse_reverse, r_inner_operand,
     "always: reversing the same dimensions twice"},
};

#define NUM_RULES (sizeof k_rules / sizeof k_rules[0])

bool simplify_rule_info(uint32_t i, const char **out_name, hlo_opcode *out_op,
                        const char **out_valid_when) {
  if (i >= NUM_RULES) return false;
  if (out_name) *out_name = k_rules[i].name;
  if (out_op) *out_op = k_rules[i].op;
  if (out_valid_when) *out_valid_when = k_rules[i].valid_when;
  return true;
}

/* ------------------------------------------------------------ the driver */

typedef struct driver {
  hlo_module_ir *m;
  use_index *ui;
  hlo_op **stack;
  size_t n, cap;
  ptrmap queued;
  int16_t first_rule[OP_COUNT]; /* index of the first rule of each opcode, -1 when none */
  uint64_t rewrites, erased, budget;
} driver;

static hlo_status oom(void) { return status_new(HLO_RESOURCE_EXHAUSTED, "out of memory in simplify"); }

static hlo_status push(driver *d, hlo_op *op) {
  if (!op || !op->parent || ptrmap_has(&d->queued, op)) return NULL;
  if (d->n == d->cap) {
    size_t nc = d->cap ? d->cap * 2 : 256;
    hlo_op **ns = xrealloc(d->stack, nc * sizeof *ns);
    if (!ns) return oom();
    d->stack = ns;
    d->cap = nc;
  }
  if (!ptrmap_put(&d->queued, op, op)) return oom();
  d->stack[d->n++] = op;
  return NULL;
}

/* Queues the ops of `b` (nested ones before the op holding them) in
 * program order. */
static hlo_status collect(driver *d, hlo_block *b) {
  for (hlo_op *op = b->first; op; op = op->next) {
    for (uint32_t r = 0; r < op->num_regions; r++) HLO_TRY(collect(d, &op->regions[r].block));
    HLO_TRY(push(d, op));
  }
  return NULL;
}

/* Removes `op` (unused, pure) and queues the producers of its operands. */
static hlo_status erase(driver *d, hlo_op *op) {
  hlo_op *defs[8];
  uint32_t nd = 0;
  for (uint32_t k = 0; k < op->num_operands && nd < 8; k++)
    if (op->operands[k]->def) defs[nd++] = op->operands[k]->def;
  use_index_erase(d->ui, op);
  d->erased++;
  for (uint32_t i = 0; i < nd; i++) HLO_TRY(push(d, defs[i]));
  return NULL;
}

/* Applies rule `r` (matched) to `op`. */
static hlo_status apply(driver *d, const simplify_rule *r, hlo_op *op) {
  rw c = {d->m, {0}};
  builder_at(&c.b, d->m, op);
  hlo_op *mark = op->prev;
  hlo_block *blk = op->parent;
  hlo_value *v = r->rewrite(&c, op);
  if (c.b.failed) return builder_status(&c.b);
  /* index and queue the ops the rewrite made (between mark and op) */
  for (hlo_op *o = mark ? mark->next : blk->first; o && o != op; o = o->next) {
    HLO_TRY(use_index_add_op(d->ui, o));
    HLO_TRY(push(d, o));
  }
  if (!v) return NULL; /* declined after all (made nothing live) */
  if (!type_equal(v->type, op->results[0].type))
    return status_at(HLO_INTERNAL, &op->loc,
                     "simplify: rule %s made a value of another type than %s's result", r->name,
                     op_name(op->opcode));
  uint32_t nu;
  const use_ref *u = use_index_uses(d->ui, &op->results[0], &nu);
  for (uint32_t i = 0; i < nu; i++) HLO_TRY(push(d, u[i].user));
  HLO_TRY(use_index_replace_all(d->ui, &op->results[0], v));
  if (v->def) HLO_TRY(push(d, v->def));
  HLO_TRY(erase(d, op));
  if (++d->rewrites > d->budget)
    return status_at(HLO_INTERNAL, &op->loc,
                     "simplify: no fixed point after %llu rewrites (rules undo each other?); "
                     "last: %s",
                     (unsigned long long)d->rewrites, r->name);
  return NULL;
}

static hlo_status visit(driver *d, hlo_op *op) {
  if (!op->parent) return NULL; /* removed meanwhile */
  if (op_is_pure(op) && !use_index_op_used(d->ui, op)) return erase(d, op);
  if (op->num_results != 1) return NULL;
  int first = d->first_rule[op->opcode];
  if (first < 0) return NULL;
  for (size_t i = (size_t)first; i < NUM_RULES; i++)
    if (k_rules[i].op == op->opcode && k_rules[i].match(op)) return apply(d, &k_rules[i], op);
  return NULL;
}

static hlo_status simplify_func(driver *d, hlo_func *f) {
  HLO_TRY(use_index_build(f, &d->ui));
  d->n = 0;
  hlo_status st = collect(d, &f->body.block);
  /* pop in program order: reverse the initial stack */
  for (size_t i = 0; !st && i < d->n / 2; i++) {
    hlo_op *t = d->stack[i];
    d->stack[i] = d->stack[d->n - 1 - i];
    d->stack[d->n - 1 - i] = t;
  }
  d->budget = d->rewrites + 8 * (uint64_t)d->n + 1024;
  while (!st && d->n) {
    hlo_op *op = d->stack[--d->n];
    ptrmap_del(&d->queued, op);
    st = visit(d, op);
  }
  use_index_free(d->ui);
  d->ui = NULL;
  return st;
}

hlo_status pass_simplify(hlo_module_ir *m, const hlo_pass_options *o) {
  (void)o;
  driver *d = xcalloc(1, sizeof *d);
  if (!d) return oom();
  d->m = m;
  for (int i = 0; i < OP_COUNT; i++) d->first_rule[i] = -1;
  for (size_t i = NUM_RULES; i-- > 0;) d->first_rule[k_rules[i].op] = (int16_t)i;
  hlo_status st = NULL;
  for (hlo_func *f = m->funcs; f && !st; f = f->next) st = simplify_func(d, f);
  free(d->stack);
  ptrmap_free(&d->queued);
  free(d);
  return st;
}
