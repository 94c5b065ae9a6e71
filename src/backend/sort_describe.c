/* sort_describe.c — a stablehlo.sort and its comparator decoded into a
 * backend_sort (the forms: sort_describe.h). The comparator is matched
 * structurally from its return value down: a lexicographic chain of keys,
 * each key a compare of the same (optionally canonicalised) value of
 * argument 2k and 2k+1. */
#include "backend/sort_describe.h"
#include <stdio.h>
#include <string.h>
#include "ir/element.h"

/* A compared value: block argument `arg` (or its real / imag part) after
 * ncanon canonicalisation steps. */
typedef struct kexpr {
  uint32_t arg;
  int32_t part;
  hlo_dtype dtype;
  uint32_t ncanon;
  backend_sort_canon canon[BACKEND_SORT_MAX_CANON];
} kexpr;

typedef enum { DIR_EQ, DIR_NE, DIR_LT, DIR_GT, DIR_OTHER } cmp_dir;

static bool plain_tensor(const hlo_type *t) {
  return t && t->kind == TYPE_TENSOR && !t->quant && type_is_static(t);
}

static bool scalar_of(const hlo_value *v, hlo_dtype dt) {
  return v && plain_tensor(v->type) && v->type->rank == 0 && v->type->dtype == dt;
}

static bool key_float(hlo_dtype dt) {
  return dt == HLO_F16 || dt == HLO_BF16 || dt == HLO_F32 || dt == HLO_F64;
}

/* The block argument index of `v` in `b`, or -1. */
static int arg_index(const hlo_block *b, const hlo_value *v) {
  for (uint32_t i = 0; i < b->num_args; i++)
    if (v == &b->args[i]) return (int)i;
  return -1;
}

/* v = block argument, or real / imag of a complex block argument. */
static bool base_expr(const hlo_block *b, const hlo_value *v, kexpr *out) {
  memset(out, 0, sizeof *out);
  int a = arg_index(b, v);
  out->part = -1;
  if (a < 0 && v->def && (v->def->opcode == OP_REAL || v->def->opcode == OP_IMAG) &&
      v->def->num_operands == 1) {
    const hlo_value *c = v->def->operands[0];
    a = arg_index(b, c);
    if (a < 0 || !plain_tensor(c->type) ||
        (c->type->dtype != HLO_C64 && c->type->dtype != HLO_C128))
      return false;
    out->part = v->def->opcode == OP_REAL ? 0 : 1;
  }
  if (a < 0 || !plain_tensor(v->type) || v->type->rank != 0) return false;
  out->arg = (uint32_t)a;
  out->dtype = v->type->dtype;
  return true;
}

/* The one element of a constant scalar `v` of type dt: its bits and value. */
static bool const_scalar(const hlo_value *v, hlo_dtype dt, uint64_t *bits, double *val) {
  if (!scalar_of(v, dt) || !v->def || v->def->opcode != OP_CONSTANT) return false;
  const hlo_attr *at = op_attr(v->def, "value");
  if (!at || at->kind != ATTR_DENSE || at->u.dense.resource || !at->u.dense.data ||
      at->u.dense.nbytes < hlo_dtype_size(dt) || !at->u.dense.type ||
      at->u.dense.type->dtype != dt)
    return false;
  *bits = elem_get_bits(dt, at->u.dense.data, 0);
  *val = elem_get_f64(dt, at->u.dense.data, 0);
  return true;
}

static cmp_dir direction(const hlo_op *op) {
  const hlo_attr *da = op_attr(op, "comparison_direction");
  if (!da || da->kind != ATTR_ENUM || !da->u.en.value) return DIR_OTHER;
  const char *d = da->u.en.value;
  return !strcmp(d, "EQ") ? DIR_EQ : !strcmp(d, "NE") ? DIR_NE : !strcmp(d, "LT") ? DIR_LT
         : !strcmp(d, "GT") ? DIR_GT : DIR_OTHER;
}

/* The comparison the interpreter applies to dtype dt under `op`'s
 * compare_type (interp_elementwise.c: the class decides for integers). */
static bool cmp_type(const hlo_op *op, hlo_dtype dt, backend_sort_cmp *out) {
  hlo_dtype_class c = dtype_class(dt);
  if (c == HLO_CLASS_SINT) *out = BACKEND_SORT_SIGNED;
  else if (c == HLO_CLASS_UINT || c == HLO_CLASS_BOOL) *out = BACKEND_SORT_UNSIGNED;
  else if (key_float(dt)) {
    const hlo_attr *ta = op_attr(op, "compare_type");
    bool total = ta && ta->kind == ATTR_ENUM && ta->u.en.value &&
                 !strcmp(ta->u.en.value, "TOTALORDER");
    *out = total ? BACKEND_SORT_TOTALORDER : BACKEND_SORT_FLOAT;
  } else
    return false;
  return true;
}

static bool same_base(const kexpr *a, const kexpr *b) {
  return a->arg == b->arg && a->part == b->part && a->dtype == b->dtype;
}

/* v = a base value, or select(test(x), C, inner) where test is FLOAT
 * `compare NE, x, x` or `compare EQ, x, c` / `EQ, c, x` of the base x
 * of inner, and C a constant of x's type. */
static bool key_expr(const hlo_block *b, const hlo_value *v, int depth, kexpr *out) {
  if (base_expr(b, v, out)) return true;
  const hlo_op *sel = v->def;
  if (depth >= BACKEND_SORT_MAX_CANON || !sel || sel->opcode != OP_SELECT ||
      sel->num_operands != 3 || !plain_tensor(v->type) || v->type->rank != 0 ||
      !key_float(v->type->dtype))
    return false;
  hlo_dtype dt = v->type->dtype;
  backend_sort_canon step;
  memset(&step, 0, sizeof step);
  double unused;
  if (!const_scalar(sel->operands[1], dt, &step.to_bits, &unused)) return false;
  const hlo_op *t = sel->operands[0]->def;
  backend_sort_cmp ct;
  if (!scalar_of(sel->operands[0], HLO_I1) || !t || t->opcode != OP_COMPARE ||
      t->num_operands != 2 || !cmp_type(t, dt, &ct) || ct != BACKEND_SORT_FLOAT)
    return false;
  cmp_dir d = direction(t);
  kexpr x, y;
  if (d == DIR_NE) {
    if (!base_expr(b, t->operands[0], &x) || !base_expr(b, t->operands[1], &y) ||
        !same_base(&x, &y))
      return false;
    step.is_nan = true;
  } else if (d == DIR_EQ) {
    uint64_t bits;
    if (base_expr(b, t->operands[0], &x)) {
      if (!const_scalar(t->operands[1], dt, &bits, &step.eq_value)) return false;
    } else if (base_expr(b, t->operands[1], &x)) {
      if (!const_scalar(t->operands[0], dt, &bits, &step.eq_value)) return false;
    } else
      return false;
  } else
    return false;
  if (!key_expr(b, sel->operands[2], depth + 1, out) || !same_base(&x, out) ||
      out->ncanon >= BACKEND_SORT_MAX_CANON)
    return false;
  memmove(out->canon + 1, out->canon, out->ncanon * sizeof *out->canon);
  out->canon[0] = step;
  out->ncanon++;
  return true;
}

static bool same_key(const backend_sort_key *a, const backend_sort_key *b) {
  if (a->operand != b->operand || a->part != b->part || a->dtype != b->dtype ||
      a->cmp != b->cmp || a->ncanon != b->ncanon)
    return false;
  for (uint32_t i = 0; i < a->ncanon; i++) {
    const backend_sort_canon *x = &a->canon[i], *y = &b->canon[i];
    if (x->is_nan != y->is_nan || x->to_bits != y->to_bits ||
        (!x->is_nan && memcmp(&x->eq_value, &y->eq_value, sizeof x->eq_value)))
      return false;
  }
  return true;
}

/* v = compare DIR of a key's two values (arguments 2k and 2k+1, either
 * order: LT and GT mirrored when swapped): the key (descending for GT) and
 * the direction. */
static bool key_compare(const hlo_block *b, const hlo_value *v, backend_sort_key *k,
                        cmp_dir *dir) {
  const hlo_op *op = v ? v->def : NULL;
  if (!op || op->opcode != OP_COMPARE || op->num_operands != 2 || !scalar_of(v, HLO_I1))
    return false;
  kexpr x, y;
  if (!key_expr(b, op->operands[0], 0, &x) || !key_expr(b, op->operands[1], 0, &y)) return false;
  if (x.arg / 2 != y.arg / 2 || x.arg % 2 == y.arg % 2 || x.part != y.part ||
      x.dtype != y.dtype || x.ncanon != y.ncanon)
    return false;
  memset(k, 0, sizeof *k);
  k->operand = x.arg / 2;
  k->part = x.part;
  k->dtype = x.dtype;
  k->ncanon = x.ncanon;
  memcpy(k->canon, x.canon, sizeof k->canon);
  if (!cmp_type(op, x.dtype, &k->cmp)) return false;
  backend_sort_key other = *k;
  other.ncanon = y.ncanon;
  memcpy(other.canon, y.canon, sizeof other.canon);
  if (!same_key(k, &other)) return false;
  *dir = direction(op);
  bool swapped = x.arg % 2 == 1;
  if (swapped && *dir == DIR_LT) *dir = DIR_GT;
  else if (swapped && *dir == DIR_GT) *dir = DIR_LT;
  k->descending = *dir == DIR_GT;
  return *dir != DIR_OTHER;
}

/* Appends the keys of the chain whose value is v to s. */
static bool chain(const hlo_block *b, const hlo_value *v, backend_sort *s) {
  if (s->nkeys >= BACKEND_SORT_MAX_KEYS || !v) return false;
  backend_sort_key lt, eq;
  cmp_dir d, e;
  if (key_compare(b, v, &lt, &d)) {
    if (d != DIR_LT && d != DIR_GT) return false;
    s->keys[s->nkeys++] = lt;
    return true;
  }
  const hlo_op *op = v->def;
  if (!op || !scalar_of(v, HLO_I1)) return false;
  if (op->opcode == OP_OR && op->num_operands == 2) {
    for (int i = 0; i < 2; i++) {
      const hlo_value *a = op->operands[1 - i];
      if (!key_compare(b, op->operands[i], &lt, &d) || (d != DIR_LT && d != DIR_GT) || !a->def ||
          a->def->opcode != OP_AND || a->def->num_operands != 2)
        continue;
      for (int j = 0; j < 2; j++)
        if (key_compare(b, a->def->operands[j], &eq, &e) && e == DIR_EQ && same_key(&lt, &eq)) {
          s->keys[s->nkeys++] = lt;
          return chain(b, a->def->operands[1 - j], s);
        }
    }
    return false;
  }
  if (op->opcode == OP_SELECT && op->num_operands == 3 &&
      key_compare(b, op->operands[0], &eq, &e) && (e == DIR_EQ || e == DIR_NE)) {
    const hlo_value *l = op->operands[e == DIR_EQ ? 2 : 1], *r = op->operands[e == DIR_EQ ? 1 : 2];
    if (!key_compare(b, l, &lt, &d) || (d != DIR_LT && d != DIR_GT) || !same_key(&lt, &eq))
      return false;
    s->keys[s->nkeys++] = lt;
    return chain(b, r, s);
  }
  return false;
}

bool sort_describe(const hlo_op *op, backend_sort *out) {
  if (!op || op->opcode != OP_SORT || op->num_regions != 1 || op->num_operands < 1 ||
      op->num_operands > BACKEND_SORT_MAX_OPERANDS || op->num_results != op->num_operands)
    return false;
  memset(out, 0, sizeof *out);
  const hlo_type *t0 = op->operands[0]->type;
  if (!plain_tensor(t0) || t0->rank < 1 || t0->rank > BACKEND_SORT_MAX_RANK) return false;
  out->num_operands = op->num_operands;
  out->rank = t0->rank;
  for (uint32_t d = 0; d < t0->rank; d++) out->dims[d] = t0->dims[d];
  const hlo_block *b = &op->regions[0].block;
  if (b->num_args != 2 * op->num_operands) return false;
  for (uint32_t k = 0; k < op->num_operands; k++) {
    const hlo_type *t = op->operands[k]->type, *r = op->results[k].type;
    if (!plain_tensor(t) || !plain_tensor(r) || t->rank != t0->rank || r->rank != t0->rank ||
        t->dtype != r->dtype || hlo_dtype_size(t->dtype) > 16 || hlo_dtype_size(t->dtype) == 0)
      return false;
    for (uint32_t d = 0; d < t0->rank; d++)
      if (t->dims[d] != t0->dims[d] || r->dims[d] != t0->dims[d]) return false;
    if (!scalar_of(&b->args[2 * k], t->dtype) || !scalar_of(&b->args[2 * k + 1], t->dtype))
      return false;
    out->dtypes[k] = t->dtype;
  }
  int64_t dim = op_attr_int(op, "dimension", -1);
  if (dim < 0) dim += t0->rank;
  if (dim < 0 || dim >= (int64_t)t0->rank) return false;
  out->dimension = (uint32_t)dim;
  const hlo_attr *st = op_attr(op, "is_stable");
  out->is_stable = st && st->kind == ATTR_BOOL && st->u.b;
  const hlo_op *ret = b->last;
  if (!ret || ret->opcode != OP_RETURN || ret->num_operands != 1) return false;
  return chain(b, ret->operands[0], out);
}

static const char *cmp_name(backend_sort_cmp c) {
  switch (c) {
  case BACKEND_SORT_SIGNED: return "signed";
  case BACKEND_SORT_UNSIGNED: return "unsigned";
  case BACKEND_SORT_FLOAT: return "float";
  case BACKEND_SORT_TOTALORDER: return "totalorder";
  }
  return "?";
}

void sort_describe_print(const backend_sort *s, char *buf, size_t size) {
  if (!size) return;
  size_t n = 0;
  int w = snprintf(buf, size, "%u operand%s dim %u%s, keys:", s->num_operands,
                   s->num_operands == 1 ? "" : "s", s->dimension, s->is_stable ? " stable" : "");
  n = w > 0 ? (size_t)w : 0;
  for (uint32_t i = 0; i < s->nkeys && n < size; i++) {
    const backend_sort_key *k = &s->keys[i];
    w = snprintf(buf + n, size - n, " #%u%s %s %s%s", k->operand,
                 k->part < 0 ? "" : k->part == 0 ? ".real" : ".imag", k->descending ? "desc" : "asc",
                 cmp_name(k->cmp), k->ncanon ? " canonical" : "");
    if (w < 0) break;
    n += (size_t)w;
  }
}
