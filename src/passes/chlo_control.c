/* chlo_control.c — decompositions of the chlo ops with regions or several
 * results: top_k (iota + sort + slice), scan (one reduce_window for a
 * small cumulative scan, else a stablehlo.while loop) and
 * ragged_dot (one masked dot_general per group).
 *
 * Source: stablehlo's ChloLegalizeToStablehlo.cpp (ConvertTopKOp,
 * ConvertScanOp, ConvertRaggedDotOp, modes 1-3), static shapes only. */
#include <stdlib.h>
#include <string.h>

#include "passes/chlo_lower.h"
#include "ir/element.h"
#include "passes/pass_util.h"

#define MAX_RANK 64

static hlo_status unimpl(const hlo_op *op, const char *what) {
  return status_at(HLO_UNIMPLEMENTED, &op->loc, "%s: %s", op_name(op->opcode), what);
}

static hlo_value *scalar_i64(builder *b, int64_t v) {
  return b_const_int_of(b, b_type(b, HLO_I64, 0, NULL), v);
}

/* ----------------------------------------------------------------- top_k */

hlo_status chlo_lower_top_k(hlo_module_ir *m, hlo_op *op, hlo_value **out) {
  if (op->num_operands != 1 || op->num_results != 2) return unimpl(op, "expected 1 operand, 2 results");
  hlo_value *x = op->operands[0];
  const hlo_type *t = x->type;
  if (t->kind != TYPE_TENSOR || t->rank == 0 || !type_is_static(t) || t->rank > MAX_RANK)
    return unimpl(op, "operand must be a static tensor of rank >= 1");
  hlo_dtype dt = t->dtype;
  if (dtype_class(dt) == HLO_CLASS_COMPLEX) return unimpl(op, "complex operands");
  int64_t k = op_attr_int(op, "k", -1);
  if (k < 0) return unimpl(op, "missing or negative 'k'");
  uint32_t last = t->rank - 1;
  int64_t kk = k < t->dims[last] ? k : t->dims[last];
  hlo_dtype idx_dt = op->results[1].type->dtype;

  builder b;
  builder_at(&b, m, op);
  hlo_value *iota = b_iota(&b, b_type_like(&b, t, idx_dt), last);
  hlo_value *sort_in[2] = {x, iota};
  hlo_type *sort_ty[2] = {(hlo_type *)t, iota ? iota->type : NULL};
  hlo_op *sort = b_op(&b, OP_SORT, sort_in, 2, sort_ty, 2, 1);
  if (!sort) return builder_status(&b);
  b_set_attr(&b, sort, "dimension", attr_int(&m->arena, last, HLO_I64));
  b_set_attr(&b, sort, "is_stable", attr_bool(&m->arena, true));

  /* comparator: a > b (total order for floats), ties by lower index first */
  hlo_block *cb = &sort->regions[0].block;
  hlo_type *sv = b_type(&b, dt, 0, NULL), *si = b_type(&b, idx_dt, 0, NULL);
  hlo_type *args[4] = {sv, sv, si, si};
  if (b.failed) return builder_status(&b);
  HLO_TRY(block_set_args(m, cb, args, 4));
  builder cmp;
  builder_at_end(&cmp, m, cb, op->loc);
  hlo_value *a0 = &cb->args[0], *a1 = &cb->args[1], *i0 = &cb->args[2], *i1 = &cb->args[3];
  hlo_value *gt, *eq;
  if (dtype_is_float(dt)) {
    gt = b_compare_typed(&cmp, "GT", "TOTALORDER", a0, a1);
    eq = b_compare_typed(&cmp, "EQ", "TOTALORDER", a0, a1);
  } else {
    gt = b_compare(&cmp, "GT", a0, a1);
    eq = b_compare(&cmp, "EQ", a0, a1);
  }
  hlo_value *res = B_OR(&cmp, gt, B_AND(&cmp, eq, b_compare(&cmp, "LT", i0, i1)));
  b_op(&cmp, OP_RETURN, &res, 1, NULL, 0, 0);
  if (cmp.failed) return builder_status(&cmp);

  int64_t start[MAX_RANK] = {0}, limit[MAX_RANK];
  memcpy(limit, t->dims, t->rank * sizeof *limit);
  limit[last] = kk;
  out[0] = b_slice(&b, &sort->results[0], start, limit, NULL);
  out[1] = b_slice(&b, &sort->results[1], start, limit, NULL);
  return builder_status(&b);
}

/* ------------------------------------------------------------------ scan */

/* The type of `t` with dimension `dim` removed / set to 1. */
static hlo_type *drop_dim(builder *b, const hlo_type *t, uint32_t dim) {
  int64_t d[MAX_RANK];
  uint32_t n = 0;
  for (uint32_t i = 0; i < t->rank; i++)
    if (i != dim) d[n++] = t->dims[i];
  return b_type(b, t->dtype, n, d);
}
static hlo_type *unit_dim(builder *b, const hlo_type *t, uint32_t dim) {
  int64_t d[MAX_RANK];
  memcpy(d, t->dims, t->rank * sizeof *d);
  d[dim] = 1;
  return b_type(b, t->dtype, t->rank, d);
}

/* The most work (result elements x scan length) a scan is lowered to as a
 * reduce_window: its windows redo a prefix per element (length^2 / 2 per
 * row), against a loop of `length` iterations of three steps each (a
 * dynamic_slice, the body, a dynamic_update_slice: some microseconds each
 * on a CPU, a kernel launch each on a GPU). 2^18 keeps the windows under
 * about a quarter of a millisecond of one core's work. */
#define SCAN_WINDOW_MAX_WORK (INT64_C(1) << 18)

/* Whether the bits of init value `v` (one element of type dt) are their
 * own combination under `opc`: v ⊕ v == v, so that reduce_window's padding
 * elements (init values) fold to the init value itself. */
static bool idempotent_init(hlo_opcode opc, hlo_dtype dt, const uint8_t *v) {
  bool fl = dtype_is_float(dt), in = dtype_is_int(dt) || dtype_class(dt) == HLO_CLASS_BOOL;
  if (!fl && !in) return false;
  double f = fl ? elem_get_f64(dt, v, 0) : 0;
  int64_t i = in ? elem_get_i64(dt, v, 0) : 0;
  switch (opc) {
  case OP_ADD: return fl ? f == 0 : i == 0; /* +0 + +0 = +0, -0 + -0 = -0 */
  case OP_MULTIPLY: return fl ? f == 1 : i == 1;
  case OP_MAXIMUM:
  case OP_MINIMUM: return fl ? f == f : true; /* not NaN */
  case OP_AND:
  case OP_OR: return in;
  default: return false;
  }
}

/* A cumulative scan as one reduce_window (what jnp.cumsum / cumprod /
 * cummax lowered to before chlo.scan; XLA's GPU backend also turns such
 * windows into scans): one input x, one init I, a body that is a single
 * add / multiply / maximum / minimum / and / or of (input, carry) returned
 * as both the output and the new carry, not reversed, I a splat constant
 * with I ⊕ I == I, and at most SCAN_WINDOW_MAX_WORK work. The window along
 * `dimension` is the whole length L, padded L - 1 below with the init
 * value. Bit-exact with the loop: every backend folds a window left to
 * right from the init value, acc = body(acc, x) (interp_reduce.c), so
 * result i folds I ⊕ I ... (= I), then x0 .. xi: the loop's recurrence
 * c_i = x_i ⊕ c_{i-1} from c_{-1} = I, with the body's operand order kept
 * (the carry is the window body's accumulator) in the interpreter; the
 * native windows (window_describe.c) fold acc ⊕ x whatever the body's
 * order, which can differ only in which NaN's payload a sum of two NaNs
 * keeps. The final carry is the last result along the dimension. *done is false (nothing built) when the
 * scan is not of this form. */
static hlo_status scan_as_reduce_window(hlo_module_ir *m, hlo_op *op, hlo_value **out,
                                        bool *done) {
  *done = false;
  if (op->num_operands != 2 || op->num_results != 2 || op->num_regions != 1 ||
      op_attr_bool(op, "is_reverse", false))
    return NULL;
  hlo_block *body = &op->regions[0].block;
  hlo_value *x = op->operands[0], *init = op->operands[1];
  const hlo_type *xt = x->type;
  int64_t dim = op_attr_int(op, "dimension", -1);
  if (body->num_args != 2 || xt->kind != TYPE_TENSOR || !type_is_static(xt) || dim < 0 ||
      (uint64_t)dim >= xt->rank || xt->rank > MAX_RANK || !type_is_static(init->type))
    return NULL;
  /* the body: %r = OPC(%input, %carry) (either order); return %r, %r */
  hlo_op *f = body->first, *term = body->last;
  if (!f || !term || f->next != term || term->opcode != OP_RETURN || term->num_operands != 2 ||
      term->operands[0] != &f->results[0] || term->operands[1] != &f->results[0] ||
      f->num_operands != 2 || f->num_regions || f->num_attrs)
    return NULL;
  hlo_opcode opc = f->opcode;
  if (opc != OP_ADD && opc != OP_MULTIPLY && opc != OP_MAXIMUM && opc != OP_MINIMUM &&
      opc != OP_AND && opc != OP_OR)
    return NULL;
  const hlo_value *in_arg = &body->args[0], *carry_arg = &body->args[1];
  bool in_first = f->operands[0] == in_arg && f->operands[1] == carry_arg;
  if (!in_first && !(f->operands[0] == carry_arg && f->operands[1] == in_arg)) return NULL;
  if (f->results[0].type->rank != 0 && !type_equal(f->results[0].type, init->type)) return NULL;
  /* the init: a splat (a splat constant, or a 0-d value broadcast) */
  hlo_value *scalar = NULL;
  const uint8_t *bits = NULL;
  if (init->def && init->def->opcode == OP_BROADCAST_IN_DIM &&
      init->def->operands[0]->type->rank == 0) {
    scalar = init->def->operands[0];
    bits = value_splat_bytes(scalar);
  } else {
    bits = value_splat_bytes(init);
  }
  if (!bits || !idempotent_init(opc, xt->dtype, bits) || init->type->dtype != xt->dtype)
    return NULL;
  int64_t len = xt->dims[dim], elems = 1;
  for (uint32_t d = 0; d < xt->rank; d++) elems *= xt->dims[d];
  if (len < 2 || elems > SCAN_WINDOW_MAX_WORK / len) return NULL;

  builder b;
  builder_at(&b, m, op);
  hlo_type *st = b_type(&b, xt->dtype, 0, NULL);
  if (b.failed) return builder_status(&b);
  if (!scalar) scalar = b_constant(&b, attr_dense(&m->arena, st, bits, hlo_dtype_size(xt->dtype), false));
  hlo_value *rw_in[2] = {x, scalar};
  hlo_type *rw_t = (hlo_type *)xt;
  hlo_op *rw = scalar ? b_op(&b, OP_REDUCE_WINDOW, rw_in, 2, &rw_t, 1, 1) : NULL;
  if (!rw) return builder_status(&b);
  int64_t wd[MAX_RANK], pad[2 * MAX_RANK] = {0};
  for (uint32_t d = 0; d < xt->rank; d++) wd[d] = (int64_t)d == dim ? len : 1;
  pad[2 * dim] = len - 1;
  int64_t pdims[2] = {xt->rank, 2};
  b_set_attr(&b, rw, "window_dimensions", b_i64s(&b, wd, xt->rank));
  b_set_attr(&b, rw, "padding", attr_dense(&m->arena, b_type(&b, HLO_I64, 2, pdims), pad,
                                           2 * xt->rank * sizeof *pad, false));
  hlo_block *rb = &rw->regions[0].block;
  hlo_type *args[2] = {st, st};
  if (b.failed) return builder_status(&b);
  HLO_TRY(block_set_args(m, rb, args, 2));
  builder r;
  builder_at_end(&r, m, rb, op->loc);
  hlo_value *acc = &rb->args[0], *el = &rb->args[1];
  hlo_value *res = in_first ? b_binary(&r, opc, el, acc) : b_binary(&r, opc, acc, el);
  b_op(&r, OP_RETURN, &res, 1, NULL, 0, 0);
  HLO_TRY(builder_status(&r));
  /* the final carry: the last element along the dimension */
  int64_t start[MAX_RANK] = {0}, limit[MAX_RANK];
  memcpy(limit, xt->dims, xt->rank * sizeof *limit);
  start[dim] = len - 1;
  hlo_value *last = b_slice(&b, &rw->results[0], start, limit, NULL);
  out[0] = &rw->results[0];
  out[1] = last ? b_reshape(&b, last, init->type) : NULL;
  HLO_TRY(builder_status(&b));
  *done = true;
  return NULL;
}

hlo_status chlo_lower_scan(hlo_module_ir *m, hlo_op *op, hlo_value **out) {
  if (op->num_regions != 1) return unimpl(op, "expected one region");
  bool done;
  HLO_TRY(scan_as_reduce_window(m, op, out, &done));
  if (done) return NULL;
  hlo_block *body = &op->regions[0].block;
  uint32_t n = op->num_operands;
  if (body->num_args != n) return unimpl(op, "body argument count differs from operand count");
  /* split operands into inputs and inits */
  uint32_t num_inits = 0;
  const hlo_attr *seg = op_attr(op, "operandSegmentSizes");
  int64_t *segs = NULL;
  uint32_t nseg = 0;
  if (seg && attr_as_ints(&m->arena, seg, &segs, &nseg) && nseg == 2 && segs[0] >= 0 &&
      segs[1] >= 0 && (uint64_t)segs[0] + (uint64_t)segs[1] == n) {
    num_inits = (uint32_t)segs[1];
  } else {
    for (uint32_t i = 0; i < n; i++)
      if (type_equal(op->operands[i]->type, body->args[i].type)) num_inits++;
  }
  uint32_t num_inputs = n - num_inits;
  if (op->num_results < num_inits) return unimpl(op, "fewer results than inits");
  uint32_t num_outs = op->num_results - num_inits;
  int64_t dim = op_attr_int(op, "dimension", 0);
  bool reverse = op_attr_bool(op, "is_reverse", false);
  hlo_op *term = body->last;
  if (!term || !(op_flags(term->opcode) & OPF_TERMINATOR) || term->num_operands != op->num_results)
    return unimpl(op, "body must end in a return of one value per result");
  const hlo_type *ref = num_inputs ? op->operands[0]->type : num_outs ? op->results[0].type : NULL;
  if (!ref || dim < 0 || (uint64_t)dim >= ref->rank || !type_is_static(ref))
    return unimpl(op, "cannot determine the static scan dimension size");
  for (uint32_t i = 0; i < n; i++)
    if (!type_is_static(op->operands[i]->type) || op->operands[i]->type->rank > MAX_RANK)
      return unimpl(op, "dynamic shapes");
  int64_t len = ref->dims[dim];
  if (len == 0) { /* no step: empty outputs, the inits as the final carries */
    builder z;
    builder_at(&z, m, op);
    for (uint32_t i = 0; i < num_outs; i++) {
      hlo_type *rt = op->results[i].type;
      out[i] = b_broadcast_in_dim(&z, b_const_of(&z, b_type(&z, rt->dtype, 0, NULL), 0), rt, NULL, 0);
    }
    for (uint32_t j = 0; j < num_inits; j++) out[num_outs + j] = op->operands[num_inputs + j];
    return builder_status(&z);
  }

  builder b;
  builder_at(&b, m, op);
  uint32_t nw = 1 + num_inits + num_outs;
  hlo_value **init = calloc(nw, sizeof *init);
  hlo_type **wt = calloc(nw, sizeof *wt);
  hlo_value **mapped = calloc(n ? n : 1, sizeof *mapped);
  hlo_status st = NULL;
  if (!init || !wt || !mapped) { st = status_new(HLO_RESOURCE_EXHAUSTED, "out of memory"); goto done; }
  init[0] = scalar_i64(&b, 0);
  for (uint32_t j = 0; j < num_inits; j++) init[1 + j] = op->operands[num_inputs + j];
  for (uint32_t i = 0; i < num_outs; i++) {
    hlo_type *rt = op->results[i].type;
    hlo_value *zero = b_const_of(&b, b_type(&b, rt->dtype, 0, NULL), 0);
    init[1 + num_inits + i] = b_broadcast_in_dim(&b, zero, rt, NULL, 0);
  }
  for (uint32_t i = 0; i < nw; i++) wt[i] = init[i] ? init[i]->type : NULL;
  hlo_op *w = b_op(&b, OP_WHILE, init, nw, wt, nw, 2);
  if (!w) { st = builder_status(&b); goto done; }

  /* cond: index < len */
  hlo_block *cb = &w->regions[0].block, *wb = &w->regions[1].block;
  if ((st = block_set_args(m, cb, wt, nw)) || (st = block_set_args(m, wb, wt, nw))) goto done;
  builder c;
  builder_at_end(&c, m, cb, op->loc);
  hlo_value *lt = b_compare(&c, "LT", &cb->args[0], scalar_i64(&c, len));
  b_op(&c, OP_RETURN, &lt, 1, NULL, 0, 0);
  if ((st = builder_status(&c))) goto done;

  /* body */
  builder d;
  builder_at_end(&d, m, wb, op->loc);
  hlo_value *index = &wb->args[0];
  hlo_value *pos = index;
  if (reverse) pos = B_SUB(&d, scalar_i64(&d, len - 1), index);
  hlo_value *zero_idx = scalar_i64(&d, 0);
  hlo_value *starts[MAX_RANK + 2];
  for (uint32_t i = 0; i < num_inputs; i++) {
    hlo_value *in = op->operands[i];
    const hlo_type *it = in->type;
    starts[0] = in;
    for (uint32_t k = 0; k < it->rank; k++) starts[1 + k] = (int64_t)k == dim ? pos : zero_idx;
    hlo_type *st1 = unit_dim(&d, it, (uint32_t)dim);
    hlo_op *ds = b_op(&d, OP_DYNAMIC_SLICE, starts, 1 + it->rank, &st1, 1, 0);
    if (ds) b_set_attr(&d, ds, "slice_sizes", b_i64s(&d, st1->dims, st1->rank));
    mapped[i] = ds ? b_reshape(&d, &ds->results[0], drop_dim(&d, it, (uint32_t)dim)) : NULL;
  }
  for (uint32_t j = 0; j < num_inits; j++) mapped[num_inputs + j] = &wb->args[1 + j];
  if ((st = builder_status(&d))) goto done;
  /* move the scan body's ops (all but its terminator) into the loop body */
  while (body->first && body->first != term) {
    hlo_op *o = body->first;
    op_unlink(o);
    block_append(wb, o);
  }
  for (uint32_t i = 0; i < n; i++) block_replace_uses(wb, &body->args[i], mapped[i]);
  hlo_value **ret = init; /* reuse: nw slots */
  ret[0] = B_ADD(&d, index, scalar_i64(&d, 1));
  for (uint32_t k = 0; k < term->num_operands; k++) {
    hlo_value *v = term->operands[k];
    if (!v->def && v->block == body) v = mapped[v->index];
    if (k < num_outs) {
      hlo_value *cur = &wb->args[1 + num_inits + k];
      const hlo_type *ot = cur->type;
      hlo_value *upd = b_reshape(&d, v, unit_dim(&d, ot, (uint32_t)dim));
      hlo_value *dus_in[MAX_RANK + 2];
      dus_in[0] = cur;
      dus_in[1] = upd;
      for (uint32_t r = 0; r < ot->rank && r < MAX_RANK; r++)
        dus_in[2 + r] = (int64_t)r == dim ? pos : zero_idx;
      hlo_type *ott = cur->type;
      hlo_op *dus = b_op(&d, OP_DYNAMIC_UPDATE_SLICE, dus_in, 2 + ot->rank, &ott, 1, 0);
      ret[1 + num_inits + k] = dus ? &dus->results[0] : NULL;
    } else {
      ret[1 + (k - num_outs)] = v;
    }
  }
  b_op(&d, OP_RETURN, ret, nw, NULL, 0, 0);
  if ((st = builder_status(&d))) goto done;
  op_unlink(term);
  for (uint32_t i = 0; i < num_outs; i++) out[i] = &w->results[1 + num_inits + i];
  for (uint32_t j = 0; j < num_inits; j++) out[num_outs + j] = &w->results[1 + j];
done:
  free(init);
  free(wt);
  free(mapped);
  return st;
}

/* ------------------------------------------------------------ ragged_dot */

/* Field `name` of the ragged_dot_dimension_numbers attribute, as a list of
 * ints: from an ATTR_STRUCT/DICT, or parsed from opaque `name = [1, 2]` text.
 * Absent fields are empty. Returns false when the field is malformed. */
static bool rd_field(arena *a, const hlo_attr *at, const char *name, int64_t *outv,
                     uint32_t *outn) {
  *outn = 0;
  if (at->kind == ATTR_STRUCT || at->kind == ATTR_DICT) {
    const hlo_attr *f = attr_field(at, name);
    if (!f) return true;
    int64_t *v;
    uint32_t nv;
    if (!attr_as_ints(a, f, &v, &nv) || nv > MAX_RANK) return false;
    memcpy(outv, v, nv * sizeof *v);
    *outn = nv;
    return true;
  }
  if (at->kind != ATTR_OPAQUE) return false;
  const char *s = at->u.str.s, *e = s + at->u.str.len;
  size_t nl = strlen(name);
  for (const char *p = s; p + nl <= e; p++) {
    if (memcmp(p, name, nl) != 0) continue;
    if (p > s && (p[-1] == '_' || (p[-1] >= 'a' && p[-1] <= 'z'))) continue;
    const char *q = p + nl;
    while (q < e && (*q == ' ' || *q == '\n')) q++;
    if (q >= e || *q != '=') continue;
    q++;
    while (q < e && (*q == ' ' || *q == '\n')) q++;
    if (q >= e || *q != '[') return false;
    q++;
    while (q < e && *q != ']') {
      char *endp;
      long long v = strtoll(q, &endp, 10);
      if (endp == q) {
        q++;
        continue;
      }
      if (*outn >= MAX_RANK) return false;
      outv[(*outn)++] = v;
      q = endp;
    }
    return true;
  }
  return true;
}

static hlo_value *dot_general(builder *b, hlo_value *l, hlo_value *r, hlo_type *t, hlo_attr *dd) {
  hlo_value *ops[2] = {l, r};
  hlo_op *o = b_op(b, OP_DOT_GENERAL, ops, 2, &t, 1, 0);
  b_set_attr(b, o, "dot_dimension_numbers", dd);
  return b->failed ? NULL : &o->results[0];
}

static bool contains(const int64_t *v, uint32_t n, int64_t x) {
  for (uint32_t i = 0; i < n; i++)
    if (v[i] == x) return true;
  return false;
}

/* group_sizes[..., i] as an i64 tensor of the batch shape. */
static hlo_value *group_size(builder *b, hlo_value *gs, int64_t i) {
  const hlo_type *t = gs->type;
  int64_t st[MAX_RANK] = {0}, lim[MAX_RANK];
  memcpy(lim, t->dims, t->rank * sizeof *lim);
  st[t->rank - 1] = i;
  lim[t->rank - 1] = i + 1;
  hlo_value *s = b_slice(b, gs, st, lim, NULL);
  hlo_value *r = b_reshape(b, s, b_type(b, t->dtype, t->rank - 1, t->dims));
  if (r && r->type->dtype != HLO_I64) r = b_convert(b, r, HLO_I64);
  return r;
}

/* lhs where start <= iota < limit (broadcast over the batch dims), else 0. */
static hlo_value *ragged_mask(builder *b, hlo_value *lhs, hlo_value *zero, hlo_value *start,
                              hlo_value *limit, hlo_value *iota, uint32_t gs_rank) {
  const hlo_type *lt = lhs->type;
  int64_t bd[MAX_RANK], id[MAX_RANK];
  for (uint32_t d = 0; d + 1 < gs_rank; d++) bd[d] = d;
  for (uint32_t d = 0; d < lt->rank; d++) id[d] = d;
  hlo_type *it = b_type_like(b, lt, HLO_I64);
  hlo_value *sb = b_broadcast_in_dim(b, start, it, bd, gs_rank - 1);
  hlo_value *lb = b_broadcast_in_dim(b, limit, it, bd, gs_rank - 1);
  hlo_value *ib = b_broadcast_in_dim(b, iota, it, id, lt->rank);
  hlo_value *mask = B_AND(b, b_compare(b, "GE", ib, sb), b_compare(b, "LT", ib, lb));
  return b_select(b, mask, lhs, zero);
}

hlo_status chlo_lower_ragged_dot(hlo_module_ir *m, hlo_op *op, hlo_value **out) {
  if (op->num_operands != 3 || op->num_results != 1) return unimpl(op, "expected 3 operands");
  hlo_value *lhs = op->operands[0], *rhs = op->operands[1], *gs = op->operands[2];
  const hlo_attr *dn = op_attr(op, "ragged_dot_dimension_numbers");
  if (!dn) return unimpl(op, "missing ragged_dot_dimension_numbers");
  for (uint32_t i = 0; i < 3; i++)
    if (!type_is_static(op->operands[i]->type) || op->operands[i]->type->rank > MAX_RANK)
      return unimpl(op, "dynamic shapes");
  if (gs->type->rank == 0) return unimpl(op, "group_sizes must have rank >= 1");
  int64_t lb[MAX_RANK], rb[MAX_RANK], lc[MAX_RANK], rc[MAX_RANK], lr[MAX_RANK], rg[MAX_RANK];
  uint32_t nlb, nrb, nlc, nrc, nlr, nrg;
  arena *a = &m->arena;
  if (!rd_field(a, dn, "lhs_batching_dimensions", lb, &nlb) ||
      !rd_field(a, dn, "rhs_batching_dimensions", rb, &nrb) ||
      !rd_field(a, dn, "lhs_contracting_dimensions", lc, &nlc) ||
      !rd_field(a, dn, "rhs_contracting_dimensions", rc, &nrc) ||
      !rd_field(a, dn, "lhs_ragged_dimensions", lr, &nlr) ||
      !rd_field(a, dn, "rhs_group_dimensions", rg, &nrg))
    return unimpl(op, "malformed ragged_dot_dimension_numbers");
  if (nlr != 1) return unimpl(op, "expected exactly one lhs ragged dimension");
  const hlo_type *lt = lhs->type, *rt = rhs->type, *gt = gs->type;
  int64_t ragged = lr[0];
  if (ragged < 0 || (uint64_t)ragged >= lt->rank) return unimpl(op, "bad lhs ragged dimension");
  hlo_type *res_t = op->results[0].type;
  builder b;
  builder_at(&b, m, op);

  if (contains(lb, nlb, ragged)) { /* mode 3: a plain batched dot */
    out[0] = dot_general(&b, lhs, rhs, res_t, b_dot_dims(&b, lb, nlb, rb, nrb, lc, nlc, rc, nrc));
    return builder_status(&b);
  }
  uint32_t gs_rank = gt->rank;
  int64_t g = gt->dims[gs_rank - 1];
  hlo_value *start = b_const_int_of(&b, b_type(&b, HLO_I64, gs_rank - 1, gt->dims), 0);
  int64_t ish[MAX_RANK];
  for (uint32_t d = 0; d < lt->rank; d++) ish[d] = 1;
  ish[ragged] = lt->dims[ragged];
  hlo_value *iota = b_iota(&b, b_type(&b, HLO_I64, lt->rank, ish), ragged);
  hlo_value *zero = b_const_int_like(&b, 0, lhs);

  if (contains(lc, nlc, ragged)) { /* mode 2: ragged contracting dim */
    if (res_t->rank == 0) return unimpl(op, "bad result rank");
    hlo_type *part_t = b_type(&b, res_t->dtype, res_t->rank - 1, res_t->dims + 1);
    hlo_attr *dd = b_dot_dims(&b, lb, nlb, rb, nrb, lc, nlc, rc, nrc);
    hlo_value **parts = calloc(g > 0 ? (size_t)g : 1, sizeof *parts);
    if (!parts) return status_new(HLO_RESOURCE_EXHAUSTED, "out of memory");
    int64_t one_sh[MAX_RANK + 1];
    one_sh[0] = 1;
    memcpy(one_sh + 1, res_t->dims + 1, (res_t->rank - 1) * sizeof *one_sh);
    for (int64_t i = 0; i < g; i++) {
      hlo_value *limit = B_ADD(&b, start, group_size(&b, gs, i));
      hlo_value *masked = ragged_mask(&b, lhs, zero, start, limit, iota, gs_rank);
      hlo_value *dg = dot_general(&b, masked, rhs, part_t, dd);
      parts[i] = b_reshape(&b, dg, b_type(&b, res_t->dtype, res_t->rank, one_sh));
      start = limit;
    }
    out[0] = g > 0 ? b_concatenate(&b, parts, (uint32_t)g, 0) : b_const_int_of(&b, res_t, 0);
    free(parts);
    return builder_status(&b);
  }

  /* mode 1: ragged non-contracting lhs dim; rhs has a group dimension */
  if (nrg != 1 || rg[0] < 0 || (uint64_t)rg[0] >= rt->rank)
    return unimpl(op, "expected one rhs group dimension");
  int64_t gd = rg[0];
  if (rt->dims[gd] != g) return unimpl(op, "group count of rhs and group_sizes differ");
  int64_t arb[MAX_RANK], arc[MAX_RANK];
  for (uint32_t i = 0; i < nrb; i++) arb[i] = rb[i] > gd ? rb[i] - 1 : rb[i];
  for (uint32_t i = 0; i < nrc; i++) arc[i] = rc[i] > gd ? rc[i] - 1 : rc[i];
  hlo_attr *dd = b_dot_dims(&b, lb, nlb, arb, nrb, lc, nlc, arc, nrc);
  hlo_type *rhs_part_t = drop_dim(&b, rt, (uint32_t)gd);
  hlo_value *acc = NULL;
  for (int64_t i = 0; i < g; i++) {
    hlo_value *limit = B_ADD(&b, start, group_size(&b, gs, i));
    hlo_value *masked = ragged_mask(&b, lhs, zero, start, limit, iota, gs_rank);
    int64_t st[MAX_RANK] = {0}, lim[MAX_RANK];
    memcpy(lim, rt->dims, rt->rank * sizeof *lim);
    st[gd] = i;
    lim[gd] = i + 1;
    hlo_value *rs = b_reshape(&b, b_slice(&b, rhs, st, lim, NULL), rhs_part_t);
    hlo_value *dg = dot_general(&b, masked, rs, res_t, dd);
    acc = i == 0 ? dg : B_ADD(&b, acc, dg);
    start = limit;
  }
  out[0] = acc ? acc : b_const_int_of(&b, res_t, 0);
  return builder_status(&b);
}
