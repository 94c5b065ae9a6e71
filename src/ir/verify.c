/* verify.c — the verifier's driver and shared helpers: walks every function,
 * block and region of a module, checks structure (terminators, func.return
 * against the function's result types, func.call against its callee,
 * region signatures, every operand defined before its use in the same or an
 * enclosing block), and dispatches each op to its constraint checks in
 * verify_ops.c / verify_dispatch.c. Constraint ids in messages are those of
 * reference/stablehlo-spec.md ("(C12)"; "(I1)" for an input's type table). */
#include "ir/verify.h"
#include "ir/verify_sdy.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "ir/element.h"
#include "support/strbuf.h"

/* ============================================================ messages */

const char *vop_name(const hlo_op *op) {
  const char *n = op_name(op->opcode);
  if (!n) return "?";
  if (strncmp(n, "stablehlo.", 10) == 0) return n + 10;
  return n;
}

hlo_status verr(const hlo_op *op, const char *cid, const char *fmt, ...) {
  char msg[512];
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(msg, sizeof msg, fmt, ap);
  va_end(ap);
  if (cid && *cid) return status_at(HLO_VERIFY_ERROR, &op->loc, "%s (%s): %s", vop_name(op), cid, msg);
  return status_at(HLO_VERIFY_ERROR, &op->loc, "%s: %s", vop_name(op), msg);
}

/* Appends `t` as text to buf[*len..cap), truncating. */
static void type_text(char *buf, size_t cap, size_t *len, const hlo_type *t) {
#define PUT(...)                                                        \
  do {                                                                  \
    if (*len < cap) {                                                   \
      int k_ = snprintf(buf + *len, cap - *len, __VA_ARGS__);           \
      if (k_ > 0) *len += (size_t)k_ < cap - *len ? (size_t)k_ : cap - *len - 1; \
    }                                                                   \
  } while (0)
  if (!t) { PUT("?"); return; }
  if (t->kind == TYPE_TOKEN) { PUT("!stablehlo.token"); return; }
  if (t->kind == TYPE_TUPLE) {
    PUT("tuple<");
    for (uint32_t i = 0; i < t->num_elems; i++) {
      if (i) PUT(", ");
      type_text(buf, cap, len, t->elems[i]);
    }
    PUT(">");
    return;
  }
  PUT("tensor<");
  for (uint32_t i = 0; i < t->rank; i++) {
    if (t->dims[i] == HLO_DYN) PUT("?x");
    else PUT("%lldx", (long long)t->dims[i]);
  }
  PUT("%s%s>", t->quant ? "!quant." : "", hlo_dtype_name(t->dtype));
#undef PUT
}

const char *vtype_str(vctx *c, const hlo_type *t) {
  char buf[256];
  size_t len = 0;
  buf[0] = 0;
  type_text(buf, sizeof buf, &len, t);
  const char *s = arena_strdup(&c->scratch, buf);
  return s ? s : "?";
}

/* ============================================================== types */

bool vdim_eq(int64_t a, int64_t b) { return a == b || a == HLO_DYN || b == HLO_DYN; }

bool vis_tensor(const hlo_type *t) { return t && t->kind == TYPE_TENSOR; }
bool vis_scalar(const hlo_type *t) { return vis_tensor(t) && t->rank == 0; }

bool vshape_eq(const hlo_type *a, const hlo_type *b) {
  if (!vis_tensor(a) || !vis_tensor(b) || a->rank != b->rank) return false;
  for (uint32_t i = 0; i < a->rank; i++)
    if (!vdim_eq(a->dims[i], b->dims[i])) return false;
  return true;
}

bool velem_eq(const hlo_type *a, const hlo_type *b) {
  if (!vis_tensor(a) || !vis_tensor(b)) return false;
  if (a->dtype != b->dtype) return false;
  if (!a->quant != !b->quant) return false;
  if (a->quant && a->quant->expressed != b->quant->expressed) return false;
  return true;
}

bool vtype_eq(const hlo_type *a, const hlo_type *b) {
  if (!a || !b || a->kind != b->kind) return false;
  if (a->kind == TYPE_TOKEN) return true;
  if (a->kind == TYPE_TUPLE) {
    if (a->num_elems != b->num_elems) return false;
    for (uint32_t i = 0; i < a->num_elems; i++)
      if (!vtype_eq(a->elems[i], b->elems[i])) return false;
    return true;
  }
  return vshape_eq(a, b) && velem_eq(a, b);
}

bool vpromotable(const hlo_type *from, const hlo_type *to) {
  if (!vis_tensor(from) || !vis_tensor(to)) return false;
  if (from->quant || to->quant) return true;
  if (from->dtype == to->dtype) return true;
  if (dtype_class(from->dtype) != dtype_class(to->dtype)) return false;
  return dtype_bits(to->dtype) >= dtype_bits(from->dtype);
}

/* ============================================================== counts */

hlo_status vcount(const hlo_op *op, int min_ops, int max_ops, int min_res, int max_res) {
  int no = (int)op->num_operands, nr = (int)op->num_results;
  if (no < min_ops || (max_ops >= 0 && no > max_ops)) {
    if (min_ops == max_ops) return verr(op, "SIG", "expects %d operand(s), got %d", min_ops, no);
    if (max_ops < 0) return verr(op, "SIG", "expects at least %d operand(s), got %d", min_ops, no);
    return verr(op, "SIG", "expects %d to %d operands, got %d", min_ops, max_ops, no);
  }
  if (nr < min_res || (max_res >= 0 && nr > max_res)) {
    if (min_res == max_res) return verr(op, "SIG", "expects %d result(s), got %d", min_res, nr);
    if (max_res < 0) return verr(op, "SIG", "expects at least %d result(s), got %d", min_res, nr);
    return verr(op, "SIG", "expects %d to %d results, got %d", min_res, max_res, nr);
  }
  return NULL;
}

hlo_status vall_tensors(const hlo_op *op) {
  for (uint32_t i = 0; i < op->num_operands; i++)
    if (!vis_tensor(op->operands[i]->type))
      return verr(op, "SIG", "operand #%u must be a tensor", i);
  for (uint32_t i = 0; i < op->num_results; i++)
    if (!vis_tensor(op->results[i].type)) return verr(op, "SIG", "result #%u must be a tensor", i);
  return NULL;
}

/* ========================================================= attributes */

bool vattr_ints(vctx *c, const hlo_attr *at, ilist *out, const hlo_type **out_dense_type) {
  if (out_dense_type) *out_dense_type = NULL;
  out->v = NULL;
  out->n = 0;
  if (!at) return false;
  if (at->kind == ATTR_DENSE_ARRAY) {
    hlo_dtype d = at->u.darr.dtype;
    if (dtype_class(d) == HLO_CLASS_FLOAT || dtype_class(d) == HLO_CLASS_COMPLEX) return false;
    if (at->u.darr.n && !at->u.darr.ints) return false;
    out->v = at->u.darr.ints;
    out->n = at->u.darr.n;
    return true;
  }
  if (at->kind == ATTR_ARRAY) {
    uint32_t n = at->u.arr.n;
    int64_t *v = n ? arena_calloc(&c->scratch, n, sizeof *v) : NULL;
    if (n && !v) return false;
    for (uint32_t i = 0; i < n; i++) {
      const hlo_attr *it = at->u.arr.items[i];
      if (!it || it->kind != ATTR_INT) return false;
      v[i] = it->u.i.v;
    }
    out->v = v;
    out->n = n;
    return true;
  }
  if (at->kind == ATTR_DENSE) {
    const hlo_type *t = at->u.dense.type;
    if (!vis_tensor(t)) return false;
    hlo_dtype d = t->dtype;
    hlo_dtype_class k = dtype_class(d);
    if (k == HLO_CLASS_FLOAT || k == HLO_CLASS_COMPLEX) return false;
    int64_t n = at->u.dense.num_elems;
    if (n < 0 || n > (1 << 24)) return false;
    size_t esz = hlo_dtype_size(d);
    size_t need = (at->u.dense.splat ? 1 : (size_t)n) * esz;
    if (n && (!at->u.dense.data || at->u.dense.nbytes < need)) return false;
    int64_t *v = n ? arena_calloc(&c->scratch, (size_t)n, sizeof *v) : NULL;
    if (n && !v) return false;
    for (int64_t i = 0; i < n; i++)
      v[i] = elem_get_i64(d, at->u.dense.data, at->u.dense.splat ? 0 : i);
    out->v = v;
    out->n = (uint32_t)n;
    if (out_dense_type) *out_dense_type = t;
    return true;
  }
  return false;
}

hlo_status vints(vctx *c, const hlo_op *op, const char *name, bool required, ilist *out,
                 bool *present) {
  const hlo_attr *at = op_attr(op, name);
  out->v = NULL;
  out->n = 0;
  if (present) *present = at != NULL;
  if (!at) return required ? verr(op, "ATTR", "missing required attribute '%s'", name) : NULL;
  if (!vattr_ints(c, at, out, NULL))
    return verr(op, "ATTR", "attribute '%s' must be an array of integers", name);
  return NULL;
}

hlo_status vfield_ints(vctx *c, const hlo_op *op, const hlo_attr *st, const char *field,
                       ilist *out) {
  out->v = NULL;
  out->n = 0;
  const hlo_attr *at = attr_field(st, field);
  if (!at) return NULL;
  if (!vattr_ints(c, at, out, NULL))
    return verr(op, "ATTR", "field '%s' must be an array of integers", field);
  return NULL;
}

hlo_status vint(const hlo_op *op, const char *name, bool required, int64_t dflt, int64_t *out) {
  const hlo_attr *at = op_attr(op, name);
  *out = dflt;
  if (!at) return required ? verr(op, "ATTR", "missing required attribute '%s'", name) : NULL;
  if (at->kind != ATTR_INT) return verr(op, "ATTR", "attribute '%s' must be an integer", name);
  *out = at->u.i.v;
  return NULL;
}

hlo_status vfield_int(const hlo_op *op, const hlo_attr *st, const char *field, int64_t dflt,
                      int64_t *out) {
  const hlo_attr *at = attr_field(st, field);
  *out = dflt;
  if (!at) return NULL;
  if (at->kind == ATTR_INT) { *out = at->u.i.v; return NULL; }
  if (at->kind == ATTR_DENSE_ARRAY && at->u.darr.n == 1 && at->u.darr.ints) {
    *out = at->u.darr.ints[0];
    return NULL;
  }
  return verr(op, "ATTR", "field '%s' must be an integer", field);
}

hlo_status vbool(const hlo_op *op, const char *name, bool required, bool dflt, bool *out) {
  const hlo_attr *at = op_attr(op, name);
  *out = dflt;
  if (!at) return required ? verr(op, "ATTR", "missing required attribute '%s'", name) : NULL;
  if (at->kind == ATTR_BOOL) *out = at->u.b;
  else if (at->kind == ATTR_UNIT) *out = true;
  else return verr(op, "ATTR", "attribute '%s' must be a bool", name);
  return NULL;
}

hlo_status venum(const hlo_op *op, const char *name, bool required, const char **out) {
  const hlo_attr *at = op_attr(op, name);
  *out = NULL;
  if (!at) return required ? verr(op, "ATTR", "missing required attribute '%s'", name) : NULL;
  if (at->kind == ATTR_ENUM && at->u.en.value) *out = at->u.en.value;
  else if (at->kind == ATTR_STRING) *out = at->u.str.s;
  else if (at->kind == ATTR_OPAQUE) *out = NULL; /* unknown spelling: accept */
  else return verr(op, "ATTR", "attribute '%s' must be an enum", name);
  return NULL;
}

hlo_status vstruct(const hlo_op *op, const char *name, const char *sname, bool required,
                   const hlo_attr **out) {
  const hlo_attr *at = op_attr(op, name);
  *out = NULL;
  if (!at) return required ? verr(op, "ATTR", "missing required attribute '%s'", name) : NULL;
  if (at->kind != ATTR_STRUCT || !at->u.st.name || strcmp(at->u.st.name, sname) != 0)
    return verr(op, "ATTR", "attribute '%s' must be #%s<...>", name, sname);
  *out = at;
  return NULL;
}

static int cmp_i64(const void *a, const void *b) {
  int64_t x = *(const int64_t *)a, y = *(const int64_t *)b;
  return x < y ? -1 : x > y;
}

int64_t vdup(const int64_t *v, uint32_t n) {
  if (n > 64) {
    /* long lists (hostile input): sort a copy, then find the first element
     * that occurs twice */
    int64_t *s = xmalloc((size_t)n * sizeof *s);
    if (s) {
      memcpy(s, v, (size_t)n * sizeof *s);
      qsort(s, n, sizeof *s, cmp_i64);
      bool dup = false;
      int64_t dv = 0;
      for (uint32_t i = 1; i < n && !dup; i++)
        if (s[i] == s[i - 1]) { dup = true; dv = s[i]; }
      free(s);
      if (!dup) return -1;
      bool seen = false;
      for (uint32_t i = 0; i < n; i++)
        if (v[i] == dv) {
          if (seen) return i;
          seen = true;
        }
      return -1;
    }
  }
  for (uint32_t i = 1; i < n; i++)
    for (uint32_t j = 0; j < i; j++)
      if (v[i] == v[j]) return i;
  return -1;
}

int64_t vout_of_range(const int64_t *v, uint32_t n, int64_t bound) {
  for (uint32_t i = 0; i < n; i++)
    if (v[i] < 0 || v[i] >= bound) return i;
  return -1;
}

bool vis_sorted(const int64_t *v, uint32_t n) {
  for (uint32_t i = 1; i < n; i++)
    if (v[i] < v[i - 1]) return false;
  return true;
}

/* ============================================================= regions */

hlo_status vregion_sig(vctx *c, const hlo_op *op, const char *cid, uint32_t ridx,
                       const char *what, uint32_t nargs, hlo_type *const *arg_types,
                       const hlo_op **out_ret) {
  if (out_ret) *out_ret = NULL;
  if (ridx >= op->num_regions) return verr(op, "SIG", "missing region '%s'", what);
  const hlo_block *b = &op->regions[ridx].block;
  if (b->num_args != nargs)
    return verr(op, cid, "%s must take %u argument(s), takes %u", what, nargs, b->num_args);
  for (uint32_t i = 0; i < nargs; i++) {
    const hlo_type *t = b->args[i].type;
    if (arg_types) {
      if (!vtype_eq(t, arg_types[i]))
        return verr(op, cid, "%s argument #%u has type %s, expected %s", what, i, vtype_str(c, t),
                    vtype_str(c, arg_types[i]));
    } else if (!vis_scalar(t)) {
      return verr(op, cid, "%s argument #%u must be a 0-dimensional tensor, got %s", what, i,
                  vtype_str(c, t));
    }
  }
  const hlo_op *ret = b->last;
  if (!ret || ret->opcode != OP_RETURN)
    return verr(op, "SIG", "%s must end with stablehlo.return", what);
  if (out_ret) *out_ret = ret;
  return NULL;
}

hlo_status vreduce_body(vctx *c, const hlo_op *op, const char *cid, uint32_t ridx, uint32_t n,
                        uint32_t first_input, const hlo_type **out_e) {
  const hlo_op *ret;
  HLO_TRY(vregion_sig(c, op, cid, ridx, "body", 2 * n, NULL, &ret));
  const hlo_block *b = &op->regions[ridx].block;
  if (ret->num_operands != n)
    return verr(op, cid, "body must return %u value(s), returns %u", n, ret->num_operands);
  for (uint32_t i = 0; i < n; i++) {
    const hlo_type *e = b->args[i].type, *e2 = b->args[n + i].type;
    const hlo_type *r = ret->operands[i]->type;
    if (!velem_eq(e, e2) || !vis_scalar(r) || !velem_eq(r, e))
      return verr(op, cid, "body must have type (E..., E...) -> (E...) with rank-0 tensors; "
                  "value #%u has %s, %s -> %s", i, vtype_str(c, e), vtype_str(c, e2),
                  vtype_str(c, r));
    const hlo_type *in = (uint64_t)first_input + i < op->num_operands
                             ? op->operands[first_input + i]->type : NULL;
    if (vis_tensor(in) && !vpromotable(in, e))
      return verr(op, cid, "input element type of %s is not promotable to body type %s",
                  vtype_str(c, in), vtype_str(c, e));
    if (out_e) out_e[i] = e;
  }
  return NULL;
}

/* ========================================================== structure */

static hlo_status verify_block(vctx *c, const hlo_block *b, const hlo_func *f);

/* func.call / composite: callee exists and types agree. */
static hlo_status verify_callee(vctx *c, const hlo_op *op, const char *attr, const char *cid,
                                bool check_results) {
  const hlo_attr *at = op_attr(op, attr);
  if (!at) return verr(op, cid, "missing required attribute '%s'", attr);
  if (at->kind != ATTR_SYMBOL || !at->u.str.s)
    return verr(op, cid, "attribute '%s' must be a symbol reference", attr);
  const hlo_func *g = module_find_func(c->m, at->u.str.s);
  if (!g) return verr(op, cid, "callee '@%s' is not defined in the module", at->u.str.s);
  if (g->num_args != op->num_operands)
    return verr(op, cid, "'@%s' takes %u argument(s), called with %u", g->name, g->num_args,
                op->num_operands);
  for (uint32_t i = 0; i < g->num_args; i++) {
    const hlo_type *want =
        g->body.block.args && i < g->body.block.num_args ? g->body.block.args[i].type : NULL;
    if (want && !vtype_eq(op->operands[i]->type, want))
      return verr(op, cid, "argument #%u has type %s but '@%s' expects %s", i,
                  vtype_str(c, op->operands[i]->type), g->name, vtype_str(c, want));
  }
  if (!check_results) return NULL;
  if (g->num_results != op->num_results)
    return verr(op, cid, "'@%s' returns %u value(s), call has %u result(s)", g->name,
                g->num_results, op->num_results);
  for (uint32_t i = 0; i < g->num_results; i++)
    if (!vtype_eq(op->results[i].type, g->result_types[i]))
      return verr(op, cid, "result #%u has type %s but '@%s' returns %s", i,
                  vtype_str(c, op->results[i].type), g->name, vtype_str(c, g->result_types[i]));
  return NULL;
}

/* Ops checked only structurally: chlo, check.*, interpreter.*, and others. */
static hlo_status verify_structural(vctx *c, const hlo_op *op, const hlo_func *f) {
  switch (op->opcode) {
    case OP_FUNC_RETURN: {
      if (op->parent != &f->body.block)
        return verr(op, "SIG", "func.return must be the terminator of a function body");
      if (op->num_operands != f->num_results)
        return verr(op, "SIG", "returns %u value(s) but @%s has %u result(s)", op->num_operands,
                    f->name, f->num_results);
      for (uint32_t i = 0; i < f->num_results; i++)
        if (!vtype_eq(op->operands[i]->type, f->result_types[i]))
          return verr(op, "SIG", "operand #%u has type %s but @%s returns %s", i,
                      vtype_str(c, op->operands[i]->type), f->name,
                      vtype_str(c, f->result_types[i]));
      return NULL;
    }
    case OP_RETURN:
      if (op->parent == &f->body.block)
        return verr(op, "SIG", "stablehlo.return cannot end a function body (use func.return)");
      return NULL;
    case OP_FUNC_CALL: return verify_callee(c, op, "callee", "SIG", true);
    case OP_COMPOSITE: {
      const hlo_attr *nm = op_attr(op, "name");
      if (!nm || nm->kind != ATTR_STRING) return verr(op, "C1", "requires a string 'name'");
      if (!memchr(nm->u.str.s, '.', nm->u.str.len))
        return verr(op, "C1", "name '%s' must be namespaced (dialect.op)", nm->u.str.s);
      return verify_callee(c, op, "decomposition", "C3", true);
    }
    case OP_CHECK_EXPECT_EQ:
    case OP_CHECK_EXPECT_ALMOST_EQ:
    case OP_CHECK_EXPECT_CLOSE:
      HLO_TRY(vcount(op, 2, 2, 0, 0));
      if (!vshape_eq(op->operands[0]->type, op->operands[1]->type) &&
          vis_tensor(op->operands[0]->type) && vis_tensor(op->operands[1]->type))
        return verr(op, "SIG", "operands must have the same shape");
      return NULL;
    case OP_CHECK_EXPECT_EQ_CONST:
    case OP_CHECK_EXPECT_ALMOST_EQ_CONST:
      HLO_TRY(vcount(op, 1, 1, 0, 0));
      if (!op_attr(op, "value")) return verr(op, "ATTR", "missing required attribute 'value'");
      return NULL;
    case OP_CHECK_EXPECT_SERIALIZED_EQ: return vcount(op, 1, -1, 0, 0);
    default: return NULL;
  }
}

/* ------------------------------------------------- definitions, uses */

static size_t ptr_hash(const void *p, size_t cap) {
  uint64_t x = (uint64_t)(uintptr_t)p;
  x ^= x >> 33;
  x *= 0xff51afd7ed558ccdull;
  x ^= x >> 33;
  return (size_t)x & (cap - 1);
}

static bool seen_has(const vctx *c, const hlo_value *v) {
  if (!c->seen_cap) return false;
  for (size_t i = ptr_hash(v, c->seen_cap);; i = (i + 1) & (c->seen_cap - 1)) {
    if (!c->seen[i]) return false;
    if (c->seen[i] == v) return true;
  }
}

/* Adds `v` to the set of values defined so far (grows at half load). */
static hlo_status seen_add(vctx *c, const hlo_value *v) {
  if (2 * (c->seen_n + 1) > c->seen_cap) {
    size_t nc = c->seen_cap ? 2 * c->seen_cap : 1024;
    const hlo_value **ns = xcalloc(nc, sizeof *ns);
    if (!ns) return status_new(HLO_RESOURCE_EXHAUSTED, "out of memory in the verifier");
    for (size_t i = 0; i < c->seen_cap; i++)
      if (c->seen[i]) {
        size_t j = ptr_hash(c->seen[i], nc);
        while (ns[j]) j = (j + 1) & (nc - 1);
        ns[j] = c->seen[i];
      }
    free(c->seen);
    c->seen = ns;
    c->seen_cap = nc;
  }
  size_t i = ptr_hash(v, c->seen_cap);
  while (c->seen[i] && c->seen[i] != v) i = (i + 1) & (c->seen_cap - 1);
  if (!c->seen[i]) {
    c->seen[i] = v;
    c->seen_n++;
  }
  return NULL;
}

/* `anc` is `b` or a block enclosing it. */
static bool block_encloses(const hlo_block *anc, const hlo_block *b) {
  for (int depth = 0; b && depth < 100000; depth++) {
    if (b == anc) return true;
    const hlo_region *r = b->parent;
    const hlo_op *po = r ? r->parent : NULL;
    b = po ? po->parent : NULL;
  }
  return false;
}

/* Operand `i` of `op` is defined before the op, in its block or an
 * enclosing one (StableHLO regions see the values of enclosing blocks). */
static hlo_status check_dominance(const vctx *c, const hlo_op *op, uint32_t i) {
  const hlo_value *v = op->operands[i];
  const hlo_block *def_block = v->def ? v->def->parent : v->block;
  if (!seen_has(c, v) || !def_block || !block_encloses(def_block, op->parent)) {
    if (v->name) return verr(op, "SIG", "operand #%u (%%%s) is used before its definition or "
                             "outside its scope", i, v->name);
    return verr(op, "SIG", "operand #%u is used before its definition or outside its scope", i);
  }
  return NULL;
}

/* A tensor type (or a tuple holding one) whose element count does not fit
 * in int64: the product of its static dimensions overflows and none is 0.
 * Such a type cannot be allocated, indexed or reshaped consistently. */
static bool type_overflows(const hlo_type *t, int depth) {
  if (!t || depth > 64) return false;
  if (t->kind == TYPE_TUPLE) {
    for (uint32_t i = 0; i < t->num_elems; i++)
      if (type_overflows(t->elems[i], depth + 1)) return true;
    return false;
  }
  if (t->kind != TYPE_TENSOR) return false;
  bool over = false;
  int64_t n = 1;
  for (uint32_t i = 0; i < t->rank; i++) {
    int64_t d = t->dims[i];
    if (d == 0) return false;
    if (d < 0) continue; /* dynamic */
    if (n > INT64_MAX / d) over = true;
    else n *= d;
  }
  return over;
}

/* Error "(TYPE)" at `loc` when `t` overflows (type_overflows); `what` names
 * the value ("result #0", "argument #1 of @main"). */
static hlo_status check_type_size(vctx *c, const hlo_loc *loc, const char *who, const char *what,
                                  const hlo_type *t) {
  if (!type_overflows(t, 0)) return NULL;
  return status_at(HLO_VERIFY_ERROR, loc, "%s (TYPE): %s has type %s, whose element count "
                   "overflows int64", who, what, vtype_str(c, t));
}

static hlo_status verify_op(vctx *c, const hlo_op *op, const hlo_func *f) {
  if (op->opcode >= OP_COUNT) return verr(op, NULL, "unknown opcode %d", (int)op->opcode);
  for (uint32_t i = 0; i < op->num_operands; i++) {
    if (!op->operands[i] || !op->operands[i]->type)
      return verr(op, "SIG", "operand #%u has no value", i);
    HLO_TRY(check_dominance(c, op, i));
  }
  for (uint32_t i = 0; i < op->num_results; i++) {
    if (!op->results[i].type) return verr(op, "SIG", "result #%u has no type", i);
    char what[32];
    snprintf(what, sizeof what, "result #%u", i);
    HLO_TRY(check_type_size(c, &op->loc, vop_name(op), what, op->results[i].type));
  }
  if ((op_flags(op->opcode) & OPF_TERMINATOR) && op->next)
    return verr(op, "SIG", "a terminator must be the last operation of its block");
  for (uint32_t r = 0; r < op->num_regions; r++)
    HLO_TRY(verify_block(c, &op->regions[r].block, f));
  bool handled = false;
  HLO_TRY(verify_sdy_op_attrs(c->m, op));
  if (op_is_sdy(op->opcode)) {
    HLO_TRY(verify_sdy_op(c->m, op));
    handled = true;
  }
  if (!handled) HLO_TRY(verify_op_basic(c, op, &handled));
  if (!handled) HLO_TRY(verify_op_complex(c, op, &handled));
  if (!handled) HLO_TRY(verify_structural(c, op, f));
  for (uint32_t i = 0; i < op->num_results; i++) HLO_TRY(seen_add(c, &op->results[i]));
  return NULL;
}

static hlo_status verify_block(vctx *c, const hlo_block *b, const hlo_func *f) {
  for (uint32_t i = 0; i < b->num_args; i++) {
    if (!b->args[i].type)
      return status_at(HLO_VERIFY_ERROR, &f->loc, "func @%s: block argument #%u has no type",
                       f->name, i);
    char what[48];
    const hlo_op *po = b->parent ? b->parent->parent : NULL;
    if (po) snprintf(what, sizeof what, "block argument #%u", i);
    else snprintf(what, sizeof what, "argument #%u of @%.20s", i, f->name ? f->name : "?");
    const hlo_loc *loc = b->args[i].loc.line ? &b->args[i].loc : po ? &po->loc : &f->loc;
    HLO_TRY(check_type_size(c, loc, po ? vop_name(po) : "func", what, b->args[i].type));
    HLO_TRY(seen_add(c, &b->args[i]));
  }
  for (const hlo_op *op = b->first; op; op = op->next) {
    if (op->parent != b) return verr(op, "SIG", "operation is linked into the wrong block");
    HLO_TRY(verify_op(c, op, f));
  }
  return NULL;
}

/* The function's result types have element counts that fit in int64. */
static hlo_status verify_func_results(vctx *c, const hlo_func *f) {
  for (uint32_t i = 0; i < f->num_results; i++) {
    char what[48];
    snprintf(what, sizeof what, "result #%u of @%.20s", i, f->name ? f->name : "?");
    HLO_TRY(check_type_size(c, &f->loc, "func", what, f->result_types[i]));
  }
  return NULL;
}

/* Input-output aliasing (JAX's donation, `tf.aliasing_output = K` on an
 * argument: the argument's buffer may become result K): K an integer
 * naming a result of the argument's type, no result named twice (XLA's
 * HloInputOutputAliasConfig::Verify). */
static hlo_status verify_func_aliasing(const hlo_func *f) {
  for (uint32_t a = 0; f->arg_attrs && a < f->num_args; a++) {
    const attr_list *l = &f->arg_attrs[a];
    for (uint32_t k = 0; k < l->n; k++) {
      if (strcmp(l->items[k].name, "tf.aliasing_output")) continue;
      const hlo_attr *v = l->items[k].value;
      if (!v || v->kind != ATTR_INT)
        return status_at(HLO_VERIFY_ERROR, &f->loc, "func @%s: argument #%u: tf.aliasing_output "
                         "must be an integer (a result index)", f->name, a);
      int64_t r = v->u.i.v;
      if (r < 0 || r >= (int64_t)f->num_results)
        return status_at(HLO_VERIFY_ERROR, &f->loc, "func @%s: argument #%u: tf.aliasing_output "
                         "= %lld names no result (the function has %u)", f->name, a,
                         (long long)r, f->num_results);
      const hlo_type *at = a < f->body.block.num_args ? f->body.block.args[a].type : NULL;
      if (at && f->result_types && !type_equal(at, f->result_types[r]))
        return status_at(HLO_VERIFY_ERROR, &f->loc, "func @%s: argument #%u is aliased to result "
                         "#%lld (tf.aliasing_output) but their types differ", f->name, a,
                         (long long)r);
      for (uint32_t b = 0; b < a; b++)
        for (uint32_t j = 0; j < f->arg_attrs[b].n; j++) {
          const named_attr *o = &f->arg_attrs[b].items[j];
          if (!strcmp(o->name, "tf.aliasing_output") && o->value && o->value->kind == ATTR_INT &&
              o->value->u.i.v == r)
            return status_at(HLO_VERIFY_ERROR, &f->loc, "func @%s: arguments #%u and #%u are both "
                             "aliased to result #%lld (tf.aliasing_output)", f->name, b, a,
                             (long long)r);
        }
    }
  }
  return NULL;
}

static hlo_status verify_func(vctx *c, const hlo_func *f) {
  const hlo_block *b = &f->body.block;
  HLO_TRY(verify_sdy_func(c->m, f));
  HLO_TRY(verify_func_aliasing(f));
  if (!b->first) { /* a declaration */
    for (uint32_t i = 0; i < b->num_args; i++) {
      char what[48];
      snprintf(what, sizeof what, "argument #%u of @%.20s", i, f->name ? f->name : "?");
      HLO_TRY(check_type_size(c, &f->loc, "func", what, b->args[i].type));
    }
    return verify_func_results(c, f);
  }
  if (b->num_args != f->num_args)
    return status_at(HLO_VERIFY_ERROR, &f->loc, "func @%s: body has %u argument(s), signature %u",
                     f->name, b->num_args, f->num_args);
  HLO_TRY(verify_block(c, b, f));
  if (!b->last || b->last->opcode != OP_FUNC_RETURN)
    return status_at(HLO_VERIFY_ERROR, b->last ? &b->last->loc : &f->loc,
                     "func @%s: body must end with func.return", f->name);
  return verify_func_results(c, f);
}

hlo_status module_verify(const hlo_module_ir *m) {
  if (!m) return status_new(HLO_INVALID_ARGUMENT, "module_verify: no module");
  vctx c;
  memset(&c, 0, sizeof c);
  c.m = m;
  arena_init(&c.scratch);
  hlo_status st = verify_sdy_module(m);
  for (const hlo_func *f = m->funcs; f && !st; f = f->next) {
    if (c.seen_cap) memset(c.seen, 0, c.seen_cap * sizeof *c.seen);
    c.seen_n = 0;
    st = verify_func(&c, f);
  }
  free(c.seen);
  arena_deinit(&c.scratch);
  return st;
}
