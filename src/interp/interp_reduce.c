/* interp_reduce.c — the reference interpreter's reductions: reduce,
 * reduce_window and select_and_scatter (reference/stablehlo-spec.md,
 * sections of those names); sort lives in interp_sort.c and is registered
 * from here.
 *
 * Bodies run through interp_run_region on 0-d tensors. The spec leaves the
 * reduction order to the implementation (any full binary tree over init and
 * the elements in ascending row-major order). reduce uses the balanced
 * pairwise tree over (init, x0, x1, ...) — the error of a float sum then
 * grows with log(n) rather than n, as in XLA's vectorised reductions —
 * whenever the body's accumulator and element types agree; otherwise, and
 * for reduce_window's small windows, the plain left fold
 * acc = body(acc..., x...). */
#include <stdlib.h>
#include <string.h>
#include "interp/interp_shape_internal.h"
#include "interp/interp_util.h"

/* Folds one element into the accumulators: acc = body(acc..., x...) where
 * x[k] is element `xi[k]` of xs[k] (or of the init value when xs[k] is
 * NULL: a padding element). Replaces acc[0..n) with new references. */
static hlo_status fold(interp *it, const hlo_op *op, const hlo_region *body, uint32_t n,
                       const hlo_type *const *x_types, tensor *const *xs, int64_t xi,
                       tensor *const *inits, tensor **acc) {
  tensor *args[2 * ISH_MAX_RANK] = {0}, *outs[ISH_MAX_RANK] = {0};
  hlo_status st = NULL;
  for (uint32_t k = 0; k < n; k++) args[k] = acc[k];
  for (uint32_t k = 0; k < n && !st; k++)
    st = ish_scalar_from(op, x_types[k], xs[k] ? xs[k] : inits[k], xs[k] ? xi : 0,
                         &args[n + k]);
  if (!st) st = ish_run_body(it, op, body, args, 2 * n, outs, n);
  ish_release_all(args + n, n);
  if (st) return st;
  for (uint32_t k = 0; k < n; k++) {
    tensor_release(acc[k]);
    acc[k] = outs[k];
  }
  return NULL;
}

/* Checks the variadic (inputs..., init_values...) operands of reduce and
 * reduce_window: n inputs of one shape, n 0-d init values, n results. */
static hlo_status check_variadic(const hlo_op *op, tensor *const *in,
                                 const hlo_type *const *rt, uint32_t *out_n) {
  if (op->num_operands < 2 || op->num_operands % 2)
    return interp_error(op, HLO_INVALID_ARGUMENT, "expected 2N operands, got %u",
                        op->num_operands);
  uint32_t n = op->num_operands / 2;
  if (n > ISH_MAX_RANK || op->num_results != n || op->num_regions < 1)
    return interp_error(op, HLO_INVALID_ARGUMENT, "expected %u results and a body", n);
  for (uint32_t k = 0; k < n; k++) {
    HLO_TRY(ish_check_tensor(op, in[k], "input"));
    HLO_TRY(ish_check_tensor(op, in[n + k], "init value"));
    HLO_TRY(ish_check_result_type(op, rt[k]));
    if (in[n + k]->num_elems != 1)
      return interp_error(op, HLO_INVALID_ARGUMENT, "init value %u is not a 0-d tensor", k);
    if (!ish_same_dims(in[k]->type, in[0]->type) || !ish_same_dims(rt[k], rt[0]))
      return interp_error(op, HLO_INVALID_ARGUMENT, "inputs (and results) must share a shape");
  }
  *out_n = n;
  return NULL;
}

/* Creates the n results, the 0-d body argument types (acc_t: the first
 * half of the body's arguments, x_t: the second half). */
static hlo_status prepare(interp *it, const hlo_op *op, tensor *const *in,
                          const hlo_type *const *rt, uint32_t n, tensor **res,
                          const hlo_type **acc_t, const hlo_type **x_t) {
  const hlo_region *body = &op->regions[0];
  for (uint32_t k = 0; k < n; k++) {
    acc_t[k] = ish_region_arg_type(it, body, k, in[n + k]->type->dtype);
    x_t[k] = ish_region_arg_type(it, body, n + k, in[k]->type->dtype);
    if (!acc_t[k] || !x_t[k]) return interp_error(op, HLO_RESOURCE_EXHAUSTED, "out of memory");
    HLO_TRY(tensor_create(rt[k], &op->loc, &res[k]));
  }
  return NULL;
}

/* Stores acc[k] into element `i` of res[k] and releases acc. */
static void store(tensor **res, tensor **acc, uint32_t n, int64_t i) {
  for (uint32_t k = 0; k < n; k++)
    ish_convert_elem(res[k]->type->dtype, res[k]->data, i, acc[k]->type->dtype, acc[k]->data, 0);
  ish_release_all(acc, n);
}

/* ------------------------------------------------------------- reduce */

/* out[0..n) = body(a..., b...); releases a and b. */
static hlo_status combine(interp *it, const hlo_op *op, const hlo_region *body, uint32_t n,
                          tensor **a, tensor **b, tensor **out) {
  tensor *args[2 * ISH_MAX_RANK] = {0}, *outs[ISH_MAX_RANK] = {0};
  for (uint32_t k = 0; k < n; k++) {
    args[k] = a[k];
    args[n + k] = b[k];
  }
  hlo_status st = ish_run_body(it, op, body, args, 2 * n, outs, n);
  ish_release_all(args, 2 * n);
  if (st) return st;
  for (uint32_t k = 0; k < n; k++) out[k] = outs[k];
  return NULL;
}

/* The pairwise reduction of one result element: leaves init, then the
 * `inner` elements at linear indices lin(w) of the inputs, combined as a
 * binary counter does (merge the top two partial results while they cover
 * equally many leaves), then the rest right to left. The result goes to
 * acc[0..n). */
typedef struct pw_stack {
  tensor *v[65][ISH_MAX_RANK];
  int level[65];
  int sp;
} pw_stack;

static void pw_release(pw_stack *s, uint32_t n) {
  for (int i = 0; i < s->sp; i++) ish_release_all(s->v[i], n);
  s->sp = 0;
}

/* Merges the top two partial results of `s` while they cover equally many
 * leaves (a binary counter step). */
static hlo_status pw_push(interp *it, const hlo_op *op, const hlo_region *body, uint32_t n,
                          pw_stack *s) {
  while (s->sp >= 2 && s->level[s->sp - 1] == s->level[s->sp - 2]) {
    tensor *r[ISH_MAX_RANK] = {0};
    hlo_status st = combine(it, op, body, n, s->v[s->sp - 2], s->v[s->sp - 1], r);
    if (st) {
      s->sp -= 2; /* combine released both */
      return st;
    }
    s->sp--;
    memcpy(s->v[s->sp - 1], r, sizeof r);
    s->level[s->sp - 1]++;
  }
  return NULL;
}

/* reduce: results...[j] = the fold over inputs...[j with the `dimensions`
 * axes walked] (spec "reduce"). */
static hlo_status reduce(interp *it, const hlo_op *op, tensor *const *in, uint32_t n,
                         const int64_t *dims, uint32_t nd, tensor **res,
                         const hlo_type *const *acc_t, const hlo_type *const *x_t) {
  const hlo_type *xt = in[0]->type, *t = res[0]->type;
  bool red[ISH_MAX_RANK] = {false};
  for (uint32_t k = 0; k < nd; k++) {
    if (dims[k] < 0 || dims[k] >= (int64_t)xt->rank || red[dims[k]])
      return interp_error(op, HLO_INVALID_ARGUMENT, "dimensions[%u] = %lld invalid", k,
                          (long long)dims[k]);
    red[dims[k]] = true;
  }
  /* Kept axes in order must be the result's shape; reduced axes ascending. */
  int64_t kept[ISH_MAX_RANK], rax[ISH_MAX_RANK], rdims[ISH_MAX_RANK];
  uint32_t nk = 0, nr = 0;
  for (uint32_t d = 0; d < xt->rank; d++) {
    if (red[d]) {
      rax[nr] = d;
      rdims[nr++] = xt->dims[d];
    } else {
      kept[nk++] = d;
    }
  }
  if (nk != t->rank)
    return interp_error(op, HLO_INVALID_ARGUMENT, "result rank %u; expected %u", t->rank, nk);
  for (uint32_t j = 0; j < nk; j++)
    if (t->dims[j] != xt->dims[kept[j]])
      return interp_error(op, HLO_INVALID_ARGUMENT, "result dimension %u is %lld; expected %lld",
                          j, (long long)t->dims[j], (long long)xt->dims[kept[j]]);
  int64_t inner = 1;
  for (uint32_t j = 0; j < nr; j++) inner *= rdims[j];
  const hlo_region *body = &op->regions[0];
  bool pairwise = true;
  for (uint32_t k = 0; k < n; k++)
    if (acc_t[k]->dtype != x_t[k]->dtype) pairwise = false;
  if (pairwise) {
    pw_stack *s = xcalloc(1, sizeof *s);
    if (!s) return interp_error(op, HLO_RESOURCE_EXHAUSTED, "out of memory");
    int64_t ri[ISH_MAX_RANK] = {0}, wi[ISH_MAX_RANK], xi[ISH_MAX_RANK];
    hlo_status st = NULL;
    for (int64_t i = 0; i < res[0]->num_elems && !st; i++, index_next(t->dims, t->rank, ri)) {
      memset(s->v[0], 0, sizeof s->v[0]);
      s->sp = 1;
      for (uint32_t k = 0; k < n && !st; k++)
        st = ish_scalar_from(op, acc_t[k], in[n + k], 0, &s->v[0][k]);
      s->level[0] = 0;
      for (uint32_t j = 0; j < nk; j++) xi[kept[j]] = ri[j];
      memset(wi, 0, sizeof wi);
      for (int64_t w = 0; w < inner && !st; w++) {
        for (uint32_t j = 0; j < nr; j++) xi[rax[j]] = wi[j];
        int64_t lin = index_linear(xt->dims, xt->rank, xi);
        memset(s->v[s->sp], 0, sizeof s->v[s->sp]);
        s->level[s->sp++] = 0;
        for (uint32_t k = 0; k < n && !st; k++)
          st = ish_scalar_from(op, x_t[k], in[k], lin, &s->v[s->sp - 1][k]);
        if (!st) st = pw_push(it, op, body, n, s);
        index_next(rdims, nr, wi);
      }
      while (!st && s->sp > 1) {
        tensor *r[ISH_MAX_RANK] = {0};
        st = combine(it, op, body, n, s->v[s->sp - 2], s->v[s->sp - 1], r);
        if (st) {
          s->sp -= 2; /* combine released both */
          break;
        }
        s->sp--;
        memcpy(s->v[s->sp - 1], r, sizeof r);
      }
      if (!st) {
        store(res, s->v[0], n, i);
        s->sp = 0;
      }
    }
    pw_release(s, n);
    free(s);
    return st;
  }
  tensor *acc[ISH_MAX_RANK] = {0};
  int64_t ri[ISH_MAX_RANK] = {0}, wi[ISH_MAX_RANK], xi[ISH_MAX_RANK];
  for (int64_t i = 0; i < res[0]->num_elems; i++, index_next(t->dims, t->rank, ri)) {
    hlo_status st = NULL;
    for (uint32_t k = 0; k < n && !st; k++)
      st = ish_scalar_from(op, acc_t[k], in[n + k], 0, &acc[k]);
    for (uint32_t j = 0; j < nk; j++) xi[kept[j]] = ri[j];
    memset(wi, 0, sizeof wi);
    for (int64_t w = 0; w < inner && !st; w++) {
      for (uint32_t j = 0; j < nr; j++) xi[rax[j]] = wi[j];
      st = fold(it, op, body, n, x_t, in, index_linear(xt->dims, xt->rank, xi), in + n, acc);
      index_next(rdims, nr, wi);
    }
    if (st) {
      ish_release_all(acc, n);
      return st;
    }
    store(res, acc, n, i);
  }
  return NULL;
}

static hlo_status k_reduce(interp *it, const hlo_op *op, tensor *const *in,
                           const hlo_type *const *rt, tensor **out) {
  uint32_t n;
  HLO_TRY(check_variadic(op, in, rt, &n));
  arena a;
  arena_init(&a);
  int64_t *dims;
  uint32_t nd;
  tensor *res[ISH_MAX_RANK] = {0};
  const hlo_type *acc_t[ISH_MAX_RANK], *x_t[ISH_MAX_RANK];
  hlo_status st = ish_attr_ints(op, &a, "dimensions", true, &dims, &nd);
  if (!st) st = prepare(it, op, in, rt, n, res, acc_t, x_t);
  if (!st) st = reduce(it, op, in, n, dims, nd, res, acc_t, x_t);
  arena_deinit(&a);
  return iu_finish(st, res, n, out);
}

/* ------------------------------------------------------ reduce_window */

/* The window attributes of reduce_window / select_and_scatter, each with
 * `rank` entries (defaults filled in). */
typedef struct window {
  int64_t *dims, *strides, *base_dil, *win_dil, *pad; /* pad: rank x 2 */
} window;

/* Reads an optional per-dimension attribute with default `dflt`. */
static hlo_status window_attr(const hlo_op *op, arena *a, const char *name, bool required,
                              uint32_t rank, int64_t per, int64_t dflt, int64_t **out) {
  uint32_t n;
  HLO_TRY(ish_attr_ints(op, a, name, required, out, &n));
  if (*out) {
    if (n != rank * per)
      return interp_error(op, HLO_INVALID_ARGUMENT, "`%s` has %u entries; expected %lld", name,
                          n, (long long)(rank * per));
    return NULL;
  }
  int64_t *v = arena_calloc(a, rank * per + 1, sizeof *v);
  if (!v) return interp_error(op, HLO_RESOURCE_EXHAUSTED, "out of memory");
  for (uint32_t i = 0; i < rank * per; i++) v[i] = dflt;
  *out = v;
  return NULL;
}

/* Reads the window attributes for an operand of rank `rank`; `dilations`
 * says whether the op has base_dilations / window_dilations. */
static hlo_status read_window(const hlo_op *op, arena *a, uint32_t rank, bool dilations,
                              window *w) {
  HLO_TRY(window_attr(op, a, "window_dimensions", true, rank, 1, 1, &w->dims));
  HLO_TRY(window_attr(op, a, "window_strides", false, rank, 1, 1, &w->strides));
  HLO_TRY(window_attr(op, a, "base_dilations", false, rank, 1, 1, &w->base_dil));
  HLO_TRY(window_attr(op, a, "window_dilations", false, rank, 1, 1, &w->win_dil));
  HLO_TRY(window_attr(op, a, "padding", false, rank, 2, 0, &w->pad));
  for (uint32_t d = 0; d < rank; d++) {
    if (w->dims[d] < 0 || w->strides[d] <= 0 || w->base_dil[d] <= 0 || w->win_dil[d] <= 0 ||
        (!dilations && (w->base_dil[d] != 1 || w->win_dil[d] != 1)))
      return interp_error(op, HLO_INVALID_ARGUMENT, "window attributes invalid in dimension %u",
                          d);
    if (w->pad[2 * d] < -(INT64_C(1) << 40) || w->pad[2 * d] > (INT64_C(1) << 40) ||
        w->pad[2 * d + 1] < -(INT64_C(1) << 40) || w->pad[2 * d + 1] > (INT64_C(1) << 40) ||
        w->strides[d] > (INT64_C(1) << 26) || w->base_dil[d] > (INT64_C(1) << 26) ||
        w->win_dil[d] > (INT64_C(1) << 26) || w->dims[d] > (INT64_C(1) << 26))
      return interp_error(op, HLO_OUT_OF_RANGE, "window attributes too large in dimension %u",
                          d);
  }
  return NULL;
}

/* reduce_window: results...[ri] = the fold over the window of the padded,
 * base-dilated inputs starting at ri * window_strides with elements
 * window_dilations apart (spec "reduce_window"). Padding and dilation holes
 * hold the init values, as the spec's pad(...) makes them. */
static hlo_status reduce_window(interp *it, const hlo_op *op, tensor *const *in, uint32_t n,
                                const window *w, tensor **res, const hlo_type *const *acc_t,
                                const hlo_type *const *x_t) {
  const hlo_type *xt = in[0]->type, *t = res[0]->type;
  uint32_t R = xt->rank;
  if (t->rank != R)
    return interp_error(op, HLO_INVALID_ARGUMENT, "result rank differs from input rank");
  int64_t padded[ISH_MAX_RANK], inner = 1;
  for (uint32_t d = 0; d < R; d++) {
    int64_t dil = xt->dims[d] > 0 ? (xt->dims[d] - 1) * w->base_dil[d] + 1 : 0;
    padded[d] = w->pad[2 * d] + dil + w->pad[2 * d + 1];
    if (__builtin_mul_overflow(inner, w->dims[d], &inner) || inner > (INT64_C(1) << 40))
      return interp_error(op, HLO_OUT_OF_RANGE, "window too large");
  }
  const hlo_region *body = &op->regions[0];
  tensor *acc[ISH_MAX_RANK] = {0}, *xs[ISH_MAX_RANK];
  int64_t ri[ISH_MAX_RANK] = {0}, wi[ISH_MAX_RANK], xi[ISH_MAX_RANK];
  for (int64_t i = 0; i < res[0]->num_elems; i++, index_next(t->dims, R, ri)) {
    hlo_status st = NULL;
    for (uint32_t k = 0; k < n && !st; k++)
      st = ish_scalar_from(op, acc_t[k], in[n + k], 0, &acc[k]);
    memset(wi, 0, sizeof wi);
    for (int64_t e = 0; e < inner && !st; e++, index_next(w->dims, R, wi)) {
      bool hole = false;
      for (uint32_t d = 0; d < R && !st; d++) {
        int64_t p = ri[d] * w->strides[d] + wi[d] * w->win_dil[d];
        if (p < 0 || p >= padded[d]) {
          st = interp_error(op, HLO_OUT_OF_RANGE,
                            "window reaches past the padded input in dimension %u", d);
          break;
        }
        int64_t q = p - w->pad[2 * d];
        if (q < 0 || q % w->base_dil[d]) hole = true;
        else if ((xi[d] = q / w->base_dil[d]) >= xt->dims[d]) hole = true;
      }
      if (st) break;
      for (uint32_t k = 0; k < n; k++) xs[k] = hole ? NULL : in[k];
      st = fold(it, op, body, n, x_t, xs, hole ? 0 : index_linear(xt->dims, R, xi), in + n, acc);
    }
    if (st) {
      ish_release_all(acc, n);
      return st;
    }
    store(res, acc, n, i);
  }
  return NULL;
}

static hlo_status k_reduce_window(interp *it, const hlo_op *op, tensor *const *in,
                                  const hlo_type *const *rt, tensor **out) {
  uint32_t n;
  HLO_TRY(check_variadic(op, in, rt, &n));
  arena a;
  arena_init(&a);
  window w;
  tensor *res[ISH_MAX_RANK] = {0};
  const hlo_type *acc_t[ISH_MAX_RANK], *x_t[ISH_MAX_RANK];
  hlo_status st = read_window(op, &a, in[0]->type->rank, true, &w);
  if (!st) st = prepare(it, op, in, rt, n, res, acc_t, x_t);
  if (!st) st = reduce_window(it, op, in, n, &w, res, acc_t, x_t);
  arena_deinit(&a);
  return iu_finish(st, res, n, out);
}

/* ------------------------------------------------- select_and_scatter */

/* select_and_scatter (spec "select_and_scatter"): for each source index in
 * row-major order, the window over the padded operand is walked in
 * row-major order skipping padding; the first element is selected, and
 * each next one replaces it unless select(selected, current) is true.
 * Then result[selected] = scatter(result[selected], source[source_index]),
 * the result starting as init_value everywhere. */
static hlo_status select_and_scatter(interp *it, const hlo_op *op, tensor *const *in,
                                     const window *w, tensor *r) {
  const tensor *x = in[0], *src = in[1];
  const hlo_type *xt = x->type, *stt = src->type;
  uint32_t R = xt->rank;
  const hlo_region *sel = &op->regions[0], *sca = &op->regions[1];
  const hlo_type *sel_t0 = ish_region_arg_type(it, sel, 0, xt->dtype);
  const hlo_type *sel_t1 = ish_region_arg_type(it, sel, 1, xt->dtype);
  const hlo_type *sca_t0 = ish_region_arg_type(it, sca, 0, r->type->dtype);
  const hlo_type *sca_t1 = ish_region_arg_type(it, sca, 1, stt->dtype);
  if (!sel_t0 || !sel_t1 || !sca_t0 || !sca_t1)
    return interp_error(op, HLO_RESOURCE_EXHAUSTED, "out of memory");
  for (int64_t i = 0; i < r->num_elems; i++)
    ish_convert_elem(r->type->dtype, r->data, i, in[2]->type->dtype, in[2]->data, 0);
  int64_t inner = 1;
  for (uint32_t d = 0; d < R; d++)
    if (__builtin_mul_overflow(inner, w->dims[d], &inner) || inner > (INT64_C(1) << 40))
      return interp_error(op, HLO_OUT_OF_RANGE, "window too large");
  int64_t si[ISH_MAX_RANK] = {0}, wi[ISH_MAX_RANK], xi[ISH_MAX_RANK];
  for (int64_t s = 0; s < src->num_elems; s++, index_next(stt->dims, R, si)) {
    int64_t selected = -1;
    memset(wi, 0, sizeof wi);
    for (int64_t e = 0; e < inner; e++, index_next(w->dims, R, wi)) {
      for (uint32_t d = 0; d < R; d++) xi[d] = si[d] * w->strides[d] + wi[d] - w->pad[2 * d];
      if (!ish_in_bounds(xt->dims, R, xi)) continue;
      int64_t cur = index_linear(xt->dims, R, xi);
      if (selected < 0) {
        selected = cur;
        continue;
      }
      tensor *args[2] = {0}, *res1 = NULL;
      hlo_status st = ish_scalar_from(op, sel_t0, x, selected, &args[0]);
      if (!st) st = ish_scalar_from(op, sel_t1, x, cur, &args[1]);
      if (!st) st = ish_run_body(it, op, sel, args, 2, &res1, 1);
      ish_release_all(args, 2);
      if (st) return st;
      bool keep = elem_get_u64(res1->type->dtype, res1->data, 0) != 0;
      tensor_release(res1);
      if (!keep) selected = cur;
    }
    if (selected < 0) continue;
    tensor *args[2] = {0}, *res1 = NULL;
    hlo_status st = ish_scalar_from(op, sca_t0, r, selected, &args[0]);
    if (!st) st = ish_scalar_from(op, sca_t1, src, s, &args[1]);
    if (!st) st = ish_run_body(it, op, sca, args, 2, &res1, 1);
    ish_release_all(args, 2);
    if (st) return st;
    ish_convert_elem(r->type->dtype, r->data, selected, res1->type->dtype, res1->data, 0);
    tensor_release(res1);
  }
  return NULL;
}

static hlo_status k_select_and_scatter(interp *it, const hlo_op *op, tensor *const *in,
                                       const hlo_type *const *rt, tensor **out) {
  if (op->num_operands != 3 || op->num_regions != 2)
    return interp_error(op, HLO_INVALID_ARGUMENT, "expected 3 operands and 2 regions");
  HLO_TRY(ish_check_tensor(op, in[0], "operand"));
  HLO_TRY(ish_check_tensor(op, in[1], "source"));
  HLO_TRY(ish_check_tensor(op, in[2], "init_value"));
  HLO_TRY(ish_check_result_type(op, rt[0]));
  uint32_t R = in[0]->type->rank;
  if (in[1]->type->rank != R || in[2]->num_elems != 1 || !type_same_shape(rt[0], in[0]->type))
    return interp_error(op, HLO_INVALID_ARGUMENT, "operand, source, init_value and result disagree");
  arena a;
  arena_init(&a);
  window w;
  tensor *r = NULL;
  hlo_status st = read_window(op, &a, R, false, &w);
  if (!st) st = tensor_create(rt[0], &op->loc, &r);
  if (!st) st = select_and_scatter(it, op, in, &w, r);
  arena_deinit(&a);
  return iu_finish(st, &r, 1, out);
}

/* Fills `table` with reduce, reduce_window, select_and_scatter and (through
 * interp_register_sort) sort. */
void interp_register_reduce(interp_kernel *table) {
  table[OP_REDUCE] = k_reduce;
  table[OP_REDUCE_WINDOW] = k_reduce_window;
  table[OP_SELECT_AND_SCATTER] = k_select_and_scatter;
  interp_register_sort(table);
}
