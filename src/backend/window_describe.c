/* window_describe.c — a reduce_window / select_and_scatter op decoded into
 * a backend_window (window_describe.h). The checks repeat the
 * interpreter's (interp/interp_reduce.c) and the verifier's
 * (ir/verify_window.c): a description exists only for an op the
 * interpreter would run, so a backend taking it computes what the
 * interpreter computes. */
#include "backend/window_describe.h"
#include <string.h>
#include "ir/element.h"
#include "support/arena.h"

enum { MAXR = BACKEND_WINDOW_MAX_RANK };

/* Exactly `want` integers of attribute `name` into buf (absent: `dflt`
 * each, or false when `required`). */
static bool ints_attr(const hlo_op *op, const char *name, bool required, uint32_t want,
                      int64_t dflt, int64_t *buf) {
  const hlo_attr *at = op_attr(op, name);
  if (!at) {
    for (uint32_t i = 0; i < want; i++) buf[i] = dflt;
    return !required;
  }
  arena a;
  arena_init(&a);
  int64_t *v = NULL;
  uint32_t n = 0;
  bool ok = attr_as_ints(&a, at, &v, &n) && n == want;
  if (ok && n) memcpy(buf, v, n * sizeof *v);
  arena_deinit(&a);
  return ok;
}

static bool plain_tensor(const hlo_type *t, hlo_dtype dt) {
  return t && t->kind == TYPE_TENSOR && !t->quant && t->dtype == dt && type_is_static(t) &&
         t->rank <= MAXR && type_num_elements(t) >= 0;
}

/* Whether `v` is a 0-d tensor of type `dt`. */
static bool scalar_of(const hlo_value *v, hlo_dtype dt) {
  return v && plain_tensor(v->type, dt) && v->type->rank == 0;
}

/* The single op of region `r` before its return, when the region takes two
 * 0-d `dt` arguments, that op reads exactly them (as (a0, a1) or (a1, a0):
 * *swapped), and the return gives its one result; else NULL. */
static const hlo_op *binary_region(const hlo_region *r, hlo_dtype dt, bool *swapped) {
  const hlo_block *b = &r->block;
  if (b->num_args != 2 || !scalar_of(&b->args[0], dt) || !scalar_of(&b->args[1], dt)) return NULL;
  const hlo_op *op = b->first;
  if (!op || !op->next || op->next->next || op->num_operands != 2 || op->num_results != 1 ||
      op->num_regions != 0)
    return NULL;
  const hlo_op *ret = op->next;
  if (ret->opcode != OP_RETURN || ret->num_operands != 1 || ret->operands[0] != &op->results[0])
    return NULL;
  const hlo_value *x = op->operands[0], *y = op->operands[1];
  if (x == &b->args[0] && y == &b->args[1]) *swapped = false;
  else if (x == &b->args[1] && y == &b->args[0]) *swapped = true;
  else return NULL;
  return op;
}

/* A reducer region: one of the known binary ops on `dt`, its result `dt`. */
static bool reducer_region(const hlo_region *r, hlo_dtype dt, backend_reducer *out) {
  bool swapped;
  const hlo_op *op = binary_region(r, dt, &swapped);
  if (!op || !scalar_of(&op->results[0], dt)) return false;
  hlo_dtype_class cls = dtype_class(dt);
  bool integral = cls == HLO_CLASS_BOOL || cls == HLO_CLASS_SINT || cls == HLO_CLASS_UINT;
  switch (op->opcode) {
  case OP_ADD: *out = BACKEND_REDUCER_ADD; return true;
  case OP_MAXIMUM: *out = BACKEND_REDUCER_MAX; return true;
  case OP_MINIMUM: *out = BACKEND_REDUCER_MIN; return true;
  case OP_MULTIPLY: *out = BACKEND_REDUCER_MUL; return true;
  case OP_AND: *out = BACKEND_REDUCER_AND; return integral;
  case OP_OR: *out = BACKEND_REDUCER_OR; return integral;
  default: return false;
  }
}

/* A select region: compare GE/GT/LE/LT of the two arguments, i1 result,
 * not TOTALORDER on floats (the mirrored direction when swapped). */
static bool select_region(const hlo_region *r, hlo_dtype dt, backend_select *out) {
  bool swapped;
  const hlo_op *op = binary_region(r, dt, &swapped);
  if (!op || op->opcode != OP_COMPARE || !scalar_of(&op->results[0], HLO_I1)) return false;
  const hlo_attr *da = op_attr(op, "comparison_direction");
  if (!da || da->kind != ATTR_ENUM || !da->u.en.value) return false;
  const hlo_attr *ta = op_attr(op, "compare_type");
  if (ta && (ta->kind != ATTR_ENUM || !ta->u.en.value ||
             (!strcmp(ta->u.en.value, "TOTALORDER") && dtype_class(dt) == HLO_CLASS_FLOAT)))
    return false;
  static const char *const dirs[4] = {"GE", "GT", "LE", "LT"};
  static const backend_select mirror[4] = {BACKEND_SELECT_LE, BACKEND_SELECT_LT,
                                           BACKEND_SELECT_GE, BACKEND_SELECT_GT};
  for (int k = 0; k < 4; k++)
    if (!strcmp(da->u.en.value, dirs[k])) {
      *out = swapped ? mirror[k] : (backend_select)k;
      return true;
    }
  return false;
}

/* Windows along dim d (spec: reduce_window C? / select_and_scatter C2);
 * -1 when the arithmetic leaves the range the backends keep to (2^62). */
static int64_t num_windows(const backend_window *w, uint32_t d) {
  int64_t x = w->operand_dims[d], k = w->window_dimensions[d];
  __int128 dil = x == 0 ? 0 : (__int128)(x - 1) * w->base_dilations[d] + 1;
  __int128 padded = (__int128)w->padding_low[d] + dil + w->padding_high[d];
  __int128 dw = k == 0 ? 0 : (__int128)(k - 1) * w->window_dilations[d] + 1;
  if (padded > ((__int128)1 << 62) || dil > ((__int128)1 << 62)) return -1;
  if (padded <= 0 || dw > padded) return 0;
  return (int64_t)((padded - dw) / w->window_strides[d] + 1);
}

bool window_describe(const hlo_op *op, backend_window *out) {
  backend_window *w = out;
  memset(w, 0, sizeof *w);
  bool rw = op->opcode == OP_REDUCE_WINDOW, ss = op->opcode == OP_SELECT_AND_SCATTER;
  if (rw) {
    if (op->num_operands != 2 || op->num_results != 1 || op->num_regions != 1) return false;
  } else if (ss) {
    if (op->num_operands != 3 || op->num_results != 1 || op->num_regions != 2) return false;
  } else {
    return false;
  }
  const hlo_type *xt = op->operands[0]->type;
  if (!xt || xt->kind != TYPE_TENSOR) return false;
  hlo_dtype dt = xt->dtype;
  const hlo_type *rt = op->results[0].type;
  const hlo_value *init = op->operands[rw ? 1 : 2];
  if (!plain_tensor(xt, dt) || !plain_tensor(rt, dt) || !scalar_of(init, dt) ||
      rt->rank != xt->rank)
    return false;
  uint32_t R = xt->rank;
  w->kind = rw ? BACKEND_REDUCE_WINDOW : BACKEND_SELECT_AND_SCATTER;
  w->dtype = dt;
  w->rank = R;
  w->loc = op->loc;
  for (uint32_t d = 0; d < R; d++) w->operand_dims[d] = xt->dims[d];
  const hlo_type *ot = rt;
  if (ss) {
    ot = op->operands[1]->type;
    if (!plain_tensor(ot, dt) || ot->rank != R) return false;
    for (uint32_t d = 0; d < R; d++)
      if (rt->dims[d] != xt->dims[d]) return false;
  }
  for (uint32_t d = 0; d < R; d++) w->window_out_dims[d] = ot->dims[d];
  int64_t pad[2 * MAXR];
  if (!ints_attr(op, "window_dimensions", true, R, 1, w->window_dimensions) ||
      !ints_attr(op, "window_strides", false, R, 1, w->window_strides) ||
      !ints_attr(op, "padding", false, 2 * R, 0, pad))
    return false;
  if (rw) {
    if (!ints_attr(op, "base_dilations", false, R, 1, w->base_dilations) ||
        !ints_attr(op, "window_dilations", false, R, 1, w->window_dilations))
      return false;
  } else {
    if (op_attr(op, "base_dilations") || op_attr(op, "window_dilations")) return false;
    for (uint32_t d = 0; d < R; d++) w->base_dilations[d] = w->window_dilations[d] = 1;
  }
  const int64_t big = INT64_C(1) << 26, pmax = INT64_C(1) << 40;
  for (uint32_t d = 0; d < R; d++) {
    w->padding_low[d] = pad[2 * d];
    w->padding_high[d] = pad[2 * d + 1];
    if (w->window_dimensions[d] < 1 || w->window_dimensions[d] > big ||
        w->window_strides[d] < 1 || w->window_strides[d] > big || w->base_dilations[d] < 1 ||
        w->base_dilations[d] > big || w->window_dilations[d] < 1 ||
        w->window_dilations[d] > big || pad[2 * d] < -pmax || pad[2 * d] > pmax ||
        pad[2 * d + 1] < -pmax || pad[2 * d + 1] > pmax)
      return false;
    int64_t n = num_windows(w, d);
    if (n < 0 || n != w->window_out_dims[d]) return false;
  }
  int64_t ws = 1;
  for (uint32_t d = 0; d < R; d++)
    if (__builtin_mul_overflow(ws, w->window_dimensions[d], &ws) || ws > (INT64_C(1) << 40))
      return false; /* the interpreter's "window too large" */
  if (ss && ws == 0) return false; /* spec C5: windows are not empty */
  if (rw) return reducer_region(&op->regions[0], dt, &w->reducer);
  return select_region(&op->regions[0], dt, &w->select) &&
         reducer_region(&op->regions[1], dt, &w->reducer);
}

static int64_t product(const int64_t *d, uint32_t n) {
  int64_t p = 1;
  for (uint32_t i = 0; i < n; i++) p *= d[i];
  return p;
}

int64_t window_operand_elements(const backend_window *w) {
  return product(w->operand_dims, w->rank);
}
int64_t window_out_elements(const backend_window *w) {
  return product(w->window_out_dims, w->rank);
}
int64_t window_size(const backend_window *w) { return product(w->window_dimensions, w->rank); }

const char *backend_reducer_name(backend_reducer r) {
  static const char *const names[] = {"add", "maximum", "minimum", "multiply", "and", "or"};
  return (unsigned)r < 6 ? names[r] : "?";
}

const char *backend_select_name(backend_select s) {
  static const char *const names[] = {"GE", "GT", "LE", "LT"};
  return (unsigned)s < 4 ? names[s] : "?";
}
