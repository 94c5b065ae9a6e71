/* row_locality.c — may some arguments' leading dimension be padded with
 * extra rows without changing the real rows' results? An analysis (it
 * changes nothing) for `hlo run --pad-to-bucket`.
 *
 * It runs on the dynamic entry function (before shape refinement, so that a
 * size read from a padded dimension is still visible as such), following
 * func.call and composite decompositions into their callees, and gives each
 * value one of these states:
 *
 *   CLEAN     independent of the padding: the same value and shape whether
 *             the arguments are padded or not
 *   ROW(d,c)  row-aligned on dim d for row class c: its size along d is the
 *             class's row count N_c (the real count unpadded, the bucket
 *             padded), and its element at index i along d depends only on
 *             row i of the padded arguments of class c and on CLEAN values.
 *             So its first N_c rows are the same padded or not.
 *   NVAL(c)   an integer scalar or 1-element tensor equal to N_c
 *             (get_dimension_size of a ROW(d,c) value along d)
 *   SHAPE(m,c) a 1-D integer shape vector: element k equals N_c for the
 *             bits k of mask m, the other elements are CLEAN
 *   NDEP(c)   some other value computed from N_c (e.g. N_c/2, N_c >= 1)
 *
 * The padded arguments start ROW(0, class). The rules (anything not listed
 * "mixes rows" when an operand is not CLEAN; with all operands CLEAN, and
 * no region reading a value that is not, an op's results are CLEAN):
 *   - elementwise ops (incl. select, compare, convert, clamp; scalar
 *     operands of select/clamp): operands CLEAN or ROW on the same (d, c) ->
 *     ROW(d, c) (a CLEAN operand of a ROW one's shape would need size N_c
 *     both padded and not: the padded run fails loudly); only
 *     CLEAN/NVAL/SHAPE/NDEP operands -> NDEP (convert to a >= 32-bit integer
 *     type keeps NVAL/SHAPE); ROW combined with NVAL/NDEP mixes (x / N: a
 *     mean).
 *   - broadcast_in_dim: ROW(d) -> ROW(broadcast_dimensions[d]) when both
 *     that result dim and operand dim d are dynamic.
 *   - dynamic_broadcast_in_dim(x, shape), dynamic_iota(shape): shape SHAPE
 *     with one bit e (and x CLEAN or ROW(d) with broadcast_dimensions[d] ==
 *     e) -> ROW(e); CLEAN shape and CLEAN x -> CLEAN.
 *   - reshape / dynamic_reshape (shape SHAPE with bit 0 only): ROW(0) ->
 *     ROW(0) when the trailing dims are static with equal products.
 *   - transpose: the row dim moves.
 *   - dot_general / dot: the row dim a batch dim of both operands (same
 *     class), or a free dim of one operand while the other is CLEAN.
 *     Contracting it mixes.
 *   - reduce, reduce_window (window 1, stride 1, no padding or dilation
 *     along it), sort, cholesky / triangular_solve / fft batch dims: along
 *     other dims only; the init values CLEAN.
 *   - pad (none along it), reverse (along other dims), concatenate (along
 *     another dim, every operand ROW on it): keep ROW. A slice of a ROW
 *     value mixes: its limits are static, so along the dynamic row dim it
 *     takes a fixed number of rows (and along other dims, in a dynamic
 *     program, JAX emits real_dynamic_slice, which mixes too).
 *     Concatenating NVAL/SHAPE/CLEAN 1-D integer tensors builds a SHAPE;
 *     slicing a SHAPE keeps the bits inside.
 *   - get_dimension_size of ROW(d, c) along d -> NVAL(c).
 *   - custom_call @shape_assertion: any operands, when the caller checked
 *     the assertions at the unpadded sizes (assertions_checked); the padded
 *     run checks them again at the padded sizes, failing loudly at worst.
 *   - func.call, composite: the callee with the operands' states.
 *   - optimization_barrier: each operand's state to its result.
 * Mixing (the analysis stops at the first): a reduce / dot / sort / window
 * over the row dim, gather, scatter, dynamic_slice, dynamic_update_slice,
 * custom_call, while / if / case / map on row-dependent values, rng, a row
 * count used as data or as a shape other than one row dim, and so on.
 * Results: CLEAN is fine; ROW(0, c) is cut back to N_c rows; anything else
 * (rows on another dim, a value computed from a count) is refused. */
#include "passes/row_locality.h"

#include <stdlib.h>
#include <string.h>

#include "ir/element.h"
#include "passes/pass_util.h"

enum { K_CLEAN = 0, K_ROW, K_NVAL, K_SHAPE, K_NDEP };

typedef struct rl_state {
  unsigned kind, dim, cls;
  uint32_t mask;
} rl_state;

_Static_assert(sizeof(uintptr_t) >= 8, "row_locality packs states into pointers");

static void *pack(rl_state s) {
  return (void *)(uintptr_t)((uint64_t)s.kind | (uint64_t)(s.dim & 0xff) << 8 |
                             (uint64_t)(s.cls & 0xffff) << 16 | (uint64_t)s.mask << 32);
}
static rl_state unpack(void *p) {
  uint64_t x = (uint64_t)(uintptr_t)p;
  rl_state s = {(unsigned)(x & 0xff), (unsigned)(x >> 8 & 0xff), (unsigned)(x >> 16 & 0xffff),
                (uint32_t)(x >> 32)};
  return s;
}
static const rl_state CLEAN = {K_CLEAN, 0, 0, 0};
static rl_state mk(unsigned kind, unsigned dim, unsigned cls, uint32_t mask) {
  rl_state s = {kind, dim, cls, mask};
  return s;
}

typedef struct ctx {
  const hlo_module_ir *m;
  bool assertions_checked;
  int depth;
  arena ar;            /* attr_as_ints' copies */
  row_locality *out;
  bool oom;
} ctx;

typedef struct frame {
  ptrmap map;          /* value -> packed state; absent: CLEAN */
} frame;

static rl_state get(const frame *fr, const hlo_value *v) { return unpack(ptrmap_get(&fr->map, v)); }

static bool set(ctx *c, frame *fr, const hlo_value *v, rl_state s) {
  if (s.kind == K_CLEAN) return true;
  if (!ptrmap_put(&fr->map, v, pack(s))) { c->oom = true; return false; }
  return true;
}

/* Records the first mixing op; returns false (stop). */
static bool mix(ctx *c, const hlo_op *op, const char *why, rl_state s) {
  if (c->out->op == NULL && c->out->result < 0) {
    c->out->ok = false;
    c->out->op = op;
    c->out->why = why;
    c->out->cls = s.kind == K_CLEAN ? -1 : (int)s.cls;
  }
  return false;
}

static bool ints(ctx *c, const hlo_op *op, const char *name, int64_t **v, uint32_t *n) {
  const hlo_attr *a = op_attr(op, name);
  *v = NULL;
  *n = 0;
  if (!a) return true;
  return attr_as_ints(&c->ar, a, v, n);
}

static bool field_ints(ctx *c, const hlo_attr *st, const char *name, int64_t **v, uint32_t *n) {
  const hlo_attr *a = st ? attr_field(st, name) : NULL;
  *v = NULL;
  *n = 0;
  if (!a) return true;
  return attr_as_ints(&c->ar, a, v, n);
}

static bool listed(const int64_t *v, uint32_t n, int64_t x) {
  for (uint32_t i = 0; i < n; i++)
    if (v[i] == x) return true;
  return false;
}

static const hlo_type *vtype(const hlo_value *v) { return v->type; }
static bool is_tensor(const hlo_type *t) { return t && t->kind == TYPE_TENSOR; }
static bool dyn_dim(const hlo_type *t, unsigned d) {
  return is_tensor(t) && d < t->rank && t->dims[d] == HLO_DYN;
}

/* The product of dims [1, rank) of t, or -1 when one is dynamic. */
static int64_t trailing_product(const hlo_type *t) {
  if (!is_tensor(t)) return -1;
  int64_t p = 1;
  for (uint32_t d = 1; d < t->rank; d++) {
    if (t->dims[d] == HLO_DYN || t->dims[d] < 0) return -1;
    p *= t->dims[d];
  }
  return p;
}

/* The first operand state that is not CLEAN (CLEAN when none). */
static rl_state first_dirty(const frame *fr, const hlo_op *op) {
  for (uint32_t i = 0; i < op->num_operands; i++) {
    rl_state s = get(fr, op->operands[i]);
    if (s.kind != K_CLEAN) return s;
  }
  return CLEAN;
}

/* Whether some op inside `op`'s regions reads an outer value that is not
 * CLEAN (region values themselves are never in the map). */
static bool region_reads_dirty(const frame *fr, const hlo_op *op, rl_state *s) {
  for (uint32_t r = 0; r < op->num_regions; r++)
    for (const hlo_op *o = op->regions[r].block.first; o; o = o->next) {
      for (uint32_t i = 0; i < o->num_operands; i++) {
        rl_state x = get(fr, o->operands[i]);
        if (x.kind != K_CLEAN) { *s = x; return true; }
      }
      if (region_reads_dirty(fr, o, s)) return true;
    }
  return false;
}

static bool set_all(ctx *c, frame *fr, const hlo_op *op, rl_state s) {
  for (uint32_t k = 0; k < op->num_results; k++)
    if (!set(c, fr, &op->results[k], s)) return false;
  return true;
}

/* The combined state of operands that must be CLEAN or ROW on one (d, c):
 * *row true and *s the row when some is ROW; *count when some is
 * NVAL/SHAPE/NDEP (only valid without ROW). False when they disagree. */
static bool combine_rows(const frame *fr, hlo_value *const *vs, uint32_t n, rl_state *s,
                         bool *row, bool *count, rl_state *bad) {
  *row = *count = false;
  *s = CLEAN;
  rl_state cnt = CLEAN;
  for (uint32_t i = 0; i < n; i++) {
    rl_state x = get(fr, vs[i]);
    if (x.kind == K_CLEAN) continue;
    if (x.kind == K_ROW) {
      if (*row && (x.dim != s->dim || x.cls != s->cls)) { *bad = x; return false; }
      *row = true;
      *s = x;
    } else {
      if (!*count) cnt = x;
      *count = true;
    }
  }
  if (*row && *count) { *bad = cnt; return false; }
  if (*count) *s = cnt;
  return true;
}

static const char *reduce_verb(const hlo_op *op) {
  const hlo_op *b = op->num_regions ? op->regions[0].block.first : NULL;
  if (b && b->opcode == OP_ADD) return "sums over them";
  if (b && b->opcode == OP_MAXIMUM) return "takes a maximum over them";
  if (b && b->opcode == OP_MINIMUM) return "takes a minimum over them";
  if (b && b->opcode == OP_MULTIPLY) return "multiplies over them";
  return "reduces over them";
}

static bool analyse_func(ctx *c, const hlo_func *f, const rl_state *args, rl_state *results);

/* dot_general's dimension numbers (dot: contracting lhs's last with rhs's first). */
static bool dot_dims(ctx *c, const hlo_op *op, int64_t **lb, uint32_t *nb, int64_t **rb,
                     int64_t **lc, uint32_t *nc, int64_t **rc) {
  static int64_t lc1[1], rc1[1] = {0};
  uint32_t nrb = 0, nrc = 0;
  if (op->opcode == OP_DOT) {
    const hlo_type *lt = vtype(op->operands[0]);
    if (!is_tensor(lt) || lt->rank == 0) return false;
    lc1[0] = (int64_t)lt->rank - 1;
    *lb = *rb = NULL;
    *nb = 0;
    *lc = lc1;
    *rc = rc1;
    *nc = 1;
    return true;
  }
  const hlo_attr *dn = op_attr(op, "dot_dimension_numbers");
  if (!dn || dn->kind != ATTR_STRUCT) return false;
  if (!field_ints(c, dn, "lhs_batching_dimensions", lb, nb) ||
      !field_ints(c, dn, "rhs_batching_dimensions", rb, &nrb) ||
      !field_ints(c, dn, "lhs_contracting_dimensions", lc, nc) ||
      !field_ints(c, dn, "rhs_contracting_dimensions", rc, &nrc))
    return false;
  return nrb == *nb && nrc == *nc;
}

/* The position of free (non-batch, non-contracting) dim d among the free
 * dims of an operand of rank r, or -1 when d is not free. */
static int free_pos(unsigned d, uint32_t r, const int64_t *b, uint32_t nb, const int64_t *cd,
                    uint32_t nc) {
  if (listed(b, nb, d) || listed(cd, nc, d)) return -1;
  int k = 0;
  for (unsigned i = 0; i < d && i < r; i++)
    if (!listed(b, nb, i) && !listed(cd, nc, i)) k++;
  return k;
}

static bool do_dot(ctx *c, frame *fr, const hlo_op *op) {
  rl_state l = get(fr, op->operands[0]), r = get(fr, op->operands[1]);
  if (l.kind == K_CLEAN && r.kind == K_CLEAN) return true;
  if (l.kind != K_ROW && r.kind != K_ROW) return set_all(c, fr, op, mk(K_NDEP, 0, l.kind ? l.cls : r.cls, 0));
  if ((l.kind != K_ROW && l.kind != K_CLEAN) || (r.kind != K_ROW && r.kind != K_CLEAN))
    return mix(c, op, "combines them with their count", l.kind == K_ROW ? r : l);
  int64_t *lb, *rb, *lc, *rc;
  uint32_t nb, nc;
  if (!dot_dims(c, op, &lb, &nb, &rb, &lc, &nc, &rc))
    return mix(c, op, "has dimension numbers this analysis cannot read", l.kind ? l : r);
  const hlo_type *lt = vtype(op->operands[0]), *rt = vtype(op->operands[1]);
  if (!is_tensor(lt) || !is_tensor(rt)) return mix(c, op, "mixes them", l.kind ? l : r);
  if (l.kind == K_ROW && r.kind == K_ROW) {
    for (uint32_t k = 0; k < nb; k++)
      if (lb[k] == l.dim && rb[k] == r.dim && l.cls == r.cls)
        return set_all(c, fr, op, mk(K_ROW, k, l.cls, 0));
    return mix(c, op, listed(lc, nc, l.dim) ? "contracts over them" : "multiplies rows of one "
               "operand with every row of the other", l);
  }
  if (l.kind == K_ROW) {
    int p = free_pos(l.dim, lt->rank, lb, nb, lc, nc);
    if (p < 0) return mix(c, op, listed(lc, nc, l.dim) ? "contracts over them"
                          : "uses them as a batch dimension against an unpadded operand", l);
    return set_all(c, fr, op, mk(K_ROW, nb + (unsigned)p, l.cls, 0));
  }
  int p = free_pos(r.dim, rt->rank, rb, nb, rc, nc);
  if (p < 0) return mix(c, op, listed(rc, nc, r.dim) ? "contracts over them"
                        : "uses them as a batch dimension against an unpadded operand", r);
  unsigned lfree = lt->rank - nb - nc;
  return set_all(c, fr, op, mk(K_ROW, nb + lfree + (unsigned)p, r.cls, 0));
}

/* The mask of a shape operand: SHAPE's, NVAL's bit 0, 0 for CLEAN; false
 * for NDEP / ROW (a shape computed from a count some other way). */
static bool shape_mask(rl_state s, uint32_t *mask) {
  if (s.kind == K_CLEAN) { *mask = 0; return true; }
  if (s.kind == K_SHAPE) { *mask = s.mask; return true; }
  if (s.kind == K_NVAL) { *mask = 1; return true; }
  return false;
}

static int single_bit(uint32_t m) {
  if (!m || (m & (m - 1))) return -1;
  int k = 0;
  while (!(m & 1u)) { m >>= 1; k++; }
  return k;
}

/* reduce / reduce_window / sort: inputs then (reduce, reduce_window) inits. */
static bool do_reduction(ctx *c, frame *fr, const hlo_op *op) {
  uint32_t nin = op->opcode == OP_SORT ? op->num_operands : op->num_operands / 2;
  rl_state s, bad;
  bool row, count;
  if (!combine_rows(fr, op->operands, nin, &s, &row, &count, &bad))
    return mix(c, op, "combines them with other rows or their count", bad);
  for (uint32_t i = nin; i < op->num_operands; i++)
    if (get(fr, op->operands[i]).kind != K_CLEAN)
      return mix(c, op, "starts from a value computed from them", get(fr, op->operands[i]));
  rl_state rs;
  if (region_reads_dirty(fr, op, &rs)) return mix(c, op, "reads them inside its body", rs);
  if (!row && !count) return true;
  if (count) return set_all(c, fr, op, mk(K_NDEP, 0, s.cls, 0));
  const hlo_type *t = vtype(op->operands[0]);
  if (op->opcode == OP_REDUCE) {
    int64_t *dims;
    uint32_t n;
    if (!ints(c, op, "dimensions", &dims, &n)) return mix(c, op, "mixes them", s);
    if (listed(dims, n, s.dim)) return mix(c, op, reduce_verb(op), s);
    unsigned nd = s.dim;
    for (uint32_t i = 0; i < n; i++)
      if (dims[i] >= 0 && dims[i] < (int64_t)s.dim) nd--;
    return set_all(c, fr, op, mk(K_ROW, nd, s.cls, 0));
  }
  if (op->opcode == OP_SORT) {
    int64_t d = op_attr_int(op, "dimension", -1);
    if (d < 0 && is_tensor(t)) d += t->rank;
    if (d == (int64_t)s.dim) return mix(c, op, "sorts across them", s);
    return set_all(c, fr, op, mk(K_ROW, s.dim, s.cls, 0));
  }
  /* reduce_window */
  int64_t *wd, *ws, *bd, *wdl, *pad;
  uint32_t nwd, nws, nbd, nwdl, npad;
  if (!ints(c, op, "window_dimensions", &wd, &nwd) || !ints(c, op, "window_strides", &ws, &nws) ||
      !ints(c, op, "base_dilations", &bd, &nbd) || !ints(c, op, "window_dilations", &wdl, &nwdl) ||
      !ints(c, op, "padding", &pad, &npad))
    return mix(c, op, "mixes them", s);
  unsigned d = s.dim;
  bool ok = d < nwd && wd[d] == 1 && (!nws || (d < nws && ws[d] == 1)) &&
            (!nbd || (d < nbd && bd[d] == 1)) && (!nwdl || (d < nwdl && wdl[d] == 1)) &&
            (!npad || (2 * d + 1 < npad && pad[2 * d] == 0 && pad[2 * d + 1] == 0));
  if (!ok) return mix(c, op, "runs a window across them", s);
  return set_all(c, fr, op, mk(K_ROW, d, s.cls, 0));
}

static bool do_call(ctx *c, frame *fr, const hlo_op *op, const char *attr) {
  const hlo_attr *a = op_attr(op, attr);
  const hlo_func *callee = NULL;
  if (a && (a->kind == ATTR_SYMBOL || a->kind == ATTR_STRING)) {
    char name[256];
    size_t n = a->u.str.len;
    const char *s = a->u.str.s;
    if (n && s[0] == '@') { s++; n--; }
    if (n < sizeof name) {
      memcpy(name, s, n);
      name[n] = 0;
      callee = module_find_func(c->m, name);
    }
  }
  rl_state d = first_dirty(fr, op);
  if (d.kind == K_CLEAN) return true;
  if (!callee || callee->num_args != op->num_operands || callee->num_results != op->num_results)
    return mix(c, op, "calls a function this analysis cannot follow with them", d);
  if (c->depth > 64) return mix(c, op, "calls functions too deeply nested to follow", d);
  rl_state *args = calloc(op->num_operands + 1, sizeof *args);
  rl_state *res = calloc(op->num_results + 1, sizeof *res);
  bool ok = args && res;
  if (!ok) c->oom = true;
  for (uint32_t i = 0; ok && i < op->num_operands; i++) args[i] = get(fr, op->operands[i]);
  if (ok) {
    c->depth++;
    ok = analyse_func(c, callee, args, res);
    c->depth--;
  }
  for (uint32_t k = 0; ok && k < op->num_results; k++) ok = set(c, fr, &op->results[k], res[k]);
  free(args);
  free(res);
  return ok;
}

static bool is_custom_target(const hlo_op *op, const char *name) {
  const hlo_attr *t = op_attr(op, "call_target_name");
  return t && (t->kind == ATTR_STRING || t->kind == ATTR_SYMBOL) &&
         t->u.str.len == strlen(name) && !memcmp(t->u.str.s, name, t->u.str.len);
}

/* One op: sets its results' states; false to stop (mixing or out of memory). */
static bool step(ctx *c, frame *fr, const hlo_op *op) {
  unsigned flags = op_flags(op->opcode);
  rl_state x0 = op->num_operands ? get(fr, op->operands[0]) : CLEAN;
  const hlo_type *rt = op->num_results ? op->results[0].type : NULL;
  const hlo_type *t0 = op->num_operands ? vtype(op->operands[0]) : NULL;
  switch (op->opcode) {
  case OP_FUNC_CALL: return do_call(c, fr, op, "callee");
  case OP_COMPOSITE: return do_call(c, fr, op, "decomposition");
  case OP_DOT:
  case OP_DOT_GENERAL: return do_dot(c, fr, op);
  case OP_REDUCE:
  case OP_REDUCE_WINDOW:
  case OP_SORT: return do_reduction(c, fr, op);
  case OP_OPTIMIZATION_BARRIER:
    for (uint32_t i = 0; i < op->num_operands && i < op->num_results; i++)
      if (!set(c, fr, &op->results[i], get(fr, op->operands[i]))) return false;
    return true;
  case OP_CUSTOM_CALL:
    if (is_custom_target(op, "shape_assertion") && c->assertions_checked) return true;
    break;
  case OP_GET_DIMENSION_SIZE: {
    int64_t d = op_attr_int(op, "dimension", -1);
    if (x0.kind == K_ROW && d == (int64_t)x0.dim) return set_all(c, fr, op, mk(K_NVAL, 0, x0.cls, 0));
    return true;
  }
  case OP_BROADCAST_IN_DIM: {
    if (x0.kind == K_CLEAN) return true;
    if (x0.kind != K_ROW) return set_all(c, fr, op, mk(K_NDEP, 0, x0.cls, 0));
    int64_t *bd;
    uint32_t n;
    if (!ints(c, op, "broadcast_dimensions", &bd, &n) || x0.dim >= n || bd[x0.dim] < 0 ||
        !dyn_dim(rt, (unsigned)bd[x0.dim]) || !dyn_dim(t0, x0.dim))
      return mix(c, op, "broadcasts along them", x0);
    return set_all(c, fr, op, mk(K_ROW, (unsigned)bd[x0.dim], x0.cls, 0));
  }
  case OP_DYNAMIC_BROADCAST_IN_DIM: {
    rl_state sh = get(fr, op->operands[1]);
    uint32_t mask;
    if (!shape_mask(sh, &mask)) return mix(c, op, "takes its shape from a value computed from their count", sh);
    if (x0.kind == K_CLEAN && mask == 0) return true;
    int e = single_bit(mask);
    if (e < 0) return mix(c, op, mask ? "gives several dimensions their count"
                                      : "broadcasts them to a size that is not their count", x0);
    if (x0.kind == K_CLEAN) return set_all(c, fr, op, mk(K_ROW, (unsigned)e, sh.cls, 0));
    if (x0.kind != K_ROW || x0.cls != sh.cls) return mix(c, op, "broadcasts a value computed from their count", x0);
    int64_t *bd;
    uint32_t n;
    if (!ints(c, op, "broadcast_dimensions", &bd, &n) || x0.dim >= n || bd[x0.dim] != e)
      return mix(c, op, "broadcasts along them", x0);
    return set_all(c, fr, op, mk(K_ROW, (unsigned)e, x0.cls, 0));
  }
  case OP_DYNAMIC_IOTA: {
    uint32_t mask;
    if (!shape_mask(x0, &mask)) return mix(c, op, "takes its shape from a value computed from their count", x0);
    if (mask == 0) return true;
    int e = single_bit(mask);
    if (e < 0) return mix(c, op, "gives several dimensions their count", x0);
    return set_all(c, fr, op, mk(K_ROW, (unsigned)e, x0.cls, 0));
  }
  case OP_RESHAPE:
  case OP_DYNAMIC_RESHAPE: {
    rl_state sh = op->opcode == OP_DYNAMIC_RESHAPE ? get(fr, op->operands[1]) : CLEAN;
    uint32_t mask;
    if (!shape_mask(sh, &mask)) return mix(c, op, "takes its shape from a value computed from their count", sh);
    if (x0.kind == K_CLEAN && mask == 0) return true;
    if (x0.kind == K_ROW) {
      bool lead = x0.dim == 0 && dyn_dim(t0, 0) && dyn_dim(rt, 0) &&
                  trailing_product(t0) >= 0 && trailing_product(t0) == trailing_product(rt);
      if (op->opcode == OP_DYNAMIC_RESHAPE) lead = lead && mask == 1 && sh.cls == x0.cls;
      if (!lead) return mix(c, op, "reshapes across them", x0);
      return set_all(c, fr, op, mk(K_ROW, 0, x0.cls, 0));
    }
    if (mask) return mix(c, op, "reshapes a value that is not row-aligned to their count", sh);
    if ((x0.kind == K_NVAL || x0.kind == K_SHAPE) && is_tensor(rt) && type_num_elements(rt) == 1)
      return set_all(c, fr, op, x0.kind == K_NVAL || x0.mask ? mk(K_NVAL, 0, x0.cls, 0) : CLEAN);
    if (x0.kind == K_SHAPE && is_tensor(rt) && rt->rank == 1) return set_all(c, fr, op, x0);
    return set_all(c, fr, op, mk(K_NDEP, 0, x0.cls, 0));
  }
  case OP_TRANSPOSE: {
    if (x0.kind == K_CLEAN) return true;
    if (x0.kind != K_ROW) return set_all(c, fr, op, mk(K_NDEP, 0, x0.cls, 0));
    int64_t *p;
    uint32_t n;
    if (!ints(c, op, "permutation", &p, &n)) return mix(c, op, "mixes them", x0);
    for (uint32_t j = 0; j < n; j++)
      if (p[j] == (int64_t)x0.dim) return set_all(c, fr, op, mk(K_ROW, j, x0.cls, 0));
    return mix(c, op, "mixes them", x0);
  }
  case OP_SLICE: {
    if (x0.kind == K_CLEAN) return true;
    int64_t *st, *lim, *str;
    uint32_t ns, nl, nst;
    if (!ints(c, op, "start_indices", &st, &ns) || !ints(c, op, "limit_indices", &lim, &nl) ||
        !ints(c, op, "strides", &str, &nst))
      return mix(c, op, "slices them", x0);
    if (x0.kind == K_SHAPE && ns == 1 && nl == 1) {
      int64_t s1 = nst ? str[0] : 1;
      uint32_t m = 0, k = 0;
      for (int64_t i = st[0]; s1 > 0 && i < lim[0] && i < 32; i += s1, k++)
        if (i >= 0 && (x0.mask >> i & 1u)) m |= 1u << k;
      return set_all(c, fr, op, m ? mk(K_SHAPE, 0, x0.cls, m) : CLEAN);
    }
    if (x0.kind != K_ROW) return set_all(c, fr, op, mk(K_NDEP, 0, x0.cls, 0));
    /* a slice's limits are static numbers: along a dynamic row dim it takes
     * a fixed number of rows, never "all of them" */
    return mix(c, op, "slices along them", x0);
  }
  case OP_REVERSE: {
    if (x0.kind == K_CLEAN) return true;
    if (x0.kind != K_ROW) return set_all(c, fr, op, mk(K_NDEP, 0, x0.cls, 0));
    int64_t *dims;
    uint32_t n;
    if (!ints(c, op, "dimensions", &dims, &n) || listed(dims, n, x0.dim))
      return mix(c, op, "reverses them", x0);
    return set_all(c, fr, op, x0);
  }
  case OP_PAD: {
    rl_state pv = get(fr, op->operands[1]);
    if (x0.kind == K_CLEAN && pv.kind == K_CLEAN) return true;
    if (x0.kind != K_ROW) {
      if (pv.kind == K_ROW) return mix(c, op, "mixes them", pv);
      return set_all(c, fr, op, mk(K_NDEP, 0, x0.kind ? x0.cls : pv.cls, 0));
    }
    if (pv.kind != K_CLEAN) return mix(c, op, "pads with a value computed from them", pv);
    int64_t *lo, *hi, *in;
    uint32_t nlo, nhi, nin;
    unsigned d = x0.dim;
    if (!ints(c, op, "edge_padding_low", &lo, &nlo) || !ints(c, op, "edge_padding_high", &hi, &nhi) ||
        !ints(c, op, "interior_padding", &in, &nin) || d >= nlo || d >= nhi || lo[d] || hi[d] ||
        (nin && (d >= nin || in[d])))
      return mix(c, op, "pads along them", x0);
    return set_all(c, fr, op, x0);
  }
  case OP_CONCATENATE: {
    rl_state s, bad;
    bool row, count;
    int64_t dim = op_attr_int(op, "dimension", -1);
    if (!combine_rows(fr, op->operands, op->num_operands, &s, &row, &count, &bad))
      return mix(c, op, "concatenates them with other rows or their count", bad);
    if (!row && !count) return true;
    if (row) {
      for (uint32_t i = 0; i < op->num_operands; i++)
        if (get(fr, op->operands[i]).kind != K_ROW) return mix(c, op, "concatenates along them", s);
      if (dim == (int64_t)s.dim) return mix(c, op, "concatenates along them", s);
      return set_all(c, fr, op, s);
    }
    /* a shape vector from pieces */
    if (dim == 0 && is_tensor(rt) && rt->rank == 1 && dtype_is_int(rt->dtype)) {
      uint32_t mask = 0;
      int64_t off = 0;
      bool shape = true;
      for (uint32_t i = 0; i < op->num_operands && shape; i++) {
        const hlo_type *ti = vtype(op->operands[i]);
        rl_state xi = get(fr, op->operands[i]);
        if (!is_tensor(ti) || ti->rank != 1 || ti->dims[0] < 0) { shape = false; break; }
        if (xi.kind != K_CLEAN && xi.cls != s.cls) shape = false;
        else if (xi.kind == K_NVAL && ti->dims[0] == 1 && off < 32) mask |= 1u << off;
        else if (xi.kind == K_SHAPE && off < 32) mask |= xi.mask << off;
        else if (xi.kind != K_CLEAN) shape = false;
        off += ti->dims[0];
      }
      if (shape && off <= 32) return set_all(c, fr, op, mk(K_SHAPE, 0, s.cls, mask));
    }
    return set_all(c, fr, op, mk(K_NDEP, 0, s.cls, 0));
  }
  case OP_CHOLESKY:
  case OP_TRIANGULAR_SOLVE:
  case OP_FFT: {
    rl_state s, bad;
    bool row, count;
    if (!combine_rows(fr, op->operands, op->num_operands, &s, &row, &count, &bad))
      return mix(c, op, "combines them with other rows or their count", bad);
    if (!row && !count) return true;
    if (count) return mix(c, op, "uses their count", s);
    int64_t *fl;
    uint32_t nfl = 2;
    if (op->opcode == OP_FFT && !ints(c, op, "fft_length", &fl, &nfl)) return mix(c, op, "mixes them", s);
    for (uint32_t i = 0; i < op->num_operands; i++)
      if (get(fr, op->operands[i]).kind != K_ROW) return mix(c, op, "mixes them", s);
    if (!is_tensor(t0) || s.dim + nfl >= t0->rank)
      return mix(c, op, op->opcode == OP_FFT ? "transforms along them" : "solves across them", s);
    return set_all(c, fr, op, s);
  }
  default: break;
  }
  if ((flags & OPF_ELEMENTWISE) && !(flags & OPF_REGIONS)) {
    rl_state s, bad;
    bool row, count;
    if (!combine_rows(fr, op->operands, op->num_operands, &s, &row, &count, &bad))
      return mix(c, op, bad.kind == K_ROW ? "combines rows of different sizes"
                                          : "combines them with a value computed from their count",
                 bad);
    if (row) return set_all(c, fr, op, s);
    if (!count) return true;
    if (op->opcode == OP_CONVERT && is_tensor(rt) && dtype_is_int(rt->dtype) &&
        hlo_dtype_size(rt->dtype) >= 4 && (s.kind == K_NVAL || s.kind == K_SHAPE))
      return set_all(c, fr, op, s);
    return set_all(c, fr, op, mk(K_NDEP, 0, s.cls, 0));
  }
  /* everything else: CLEAN operands (and region reads) only */
  rl_state d = first_dirty(fr, op);
  if (d.kind == K_CLEAN && !region_reads_dirty(fr, op, &d)) return true;
  const char *why = "mixes them";
  switch (op->opcode) {
  case OP_CUSTOM_CALL: why = "is an opaque custom_call on them"; break;
  case OP_WHILE: case OP_IF: case OP_CASE: why = "runs control flow on them"; break;
  case OP_GATHER: case OP_DYNAMIC_GATHER: case OP_SCATTER: case OP_TORCH_INDEX_SELECT:
    why = "indexes across them"; break;
  case OP_DYNAMIC_SLICE: case OP_REAL_DYNAMIC_SLICE: why = "slices along them"; break;
  case OP_DYNAMIC_UPDATE_SLICE: why = "updates a slice of them"; break;
  case OP_DYNAMIC_PAD: why = "pads them"; break;
  case OP_CONVOLUTION: case OP_DYNAMIC_CONV: why = "convolves across them"; break;
  case OP_RNG: case OP_RNG_BIT_GENERATOR: why = "draws random numbers from them"; break;
  default: break;
  }
  if (d.kind != K_ROW && op->opcode == OP_CUSTOM_CALL && is_custom_target(op, "shape_assertion"))
    why = "checks a shape assertion on their count";
  return mix(c, op, why, d);
}

static bool analyse_block(ctx *c, frame *fr, const hlo_block *b, rl_state *results,
                          uint32_t nres) {
  for (const hlo_op *op = b->first; op; op = op->next) {
    if (op->opcode == OP_FUNC_RETURN || op->opcode == OP_RETURN) {
      for (uint32_t k = 0; k < op->num_operands && k < nres; k++)
        results[k] = get(fr, op->operands[k]);
      continue;
    }
    if (!step(c, fr, op)) return false;
  }
  return true;
}

static bool analyse_func(ctx *c, const hlo_func *f, const rl_state *args, rl_state *results) {
  frame fr;
  memset(&fr, 0, sizeof fr);
  bool ok = true;
  for (uint32_t i = 0; i < f->num_args && ok; i++) ok = set(c, &fr, &f->body.block.args[i], args[i]);
  for (uint32_t k = 0; k < f->num_results; k++) results[k] = CLEAN;
  if (ok) ok = analyse_block(c, &fr, &f->body.block, results, f->num_results);
  ptrmap_free(&fr.map);
  return ok;
}

bool row_locality_analyse(const hlo_module_ir *m, const hlo_func *f, const int *arg_class,
                          bool assertions_checked, row_locality *out) {
  rl_result_kind *kinds = out->kinds;
  int *rcls = out->result_class;
  memset(out, 0, sizeof *out);
  out->kinds = kinds;
  out->result_class = rcls;
  out->ok = true;
  out->result = -1;
  out->cls = -1;
  ctx c = {.m = m, .assertions_checked = assertions_checked, .out = out};
  arena_init(&c.ar);
  rl_state *args = calloc(f->num_args + 1, sizeof *args);
  rl_state *res = calloc(f->num_results + 1, sizeof *res);
  if (!args || !res) c.oom = true;
  for (uint32_t i = 0; !c.oom && i < f->num_args; i++)
    if (arg_class[i] >= 0) args[i] = mk(K_ROW, 0, (unsigned)arg_class[i], 0);
  bool ran = !c.oom && analyse_func(&c, f, args, res);
  for (uint32_t k = 0; ran && k < f->num_results; k++) {
    rcls[k] = -1;
    if (res[k].kind == K_CLEAN) { kinds[k] = RL_RESULT_CLEAN; continue; }
    if (res[k].kind == K_ROW && res[k].dim == 0) {
      kinds[k] = RL_RESULT_ROWS;
      rcls[k] = (int)res[k].cls;
      continue;
    }
    out->ok = false;
    out->result = (int)k;
    out->cls = (int)res[k].cls;
    out->why = res[k].kind == K_ROW ? "carries them on a dimension other than 0, so it cannot be "
                                      "cut back"
                                    : "is computed from their count";
    break;
  }
  free(args);
  free(res);
  arena_deinit(&c.ar);
  return !c.oom;
}
