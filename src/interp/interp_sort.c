/* interp_sort.c — the reference interpreter's sort kernel
 * (reference/stablehlo-spec.md, "sort").
 *
 * Every 1-d slice along `dimension` is sorted together across the inputs
 * with a bottom-up merge sort that calls the comparator region as
 * comparator(lhs0, rhs0, lhs1, rhs1, ...). Merge sort is stable, so it
 * serves is_stable = true and false alike. */
#include <stdlib.h>
#include <string.h>
#include "interp/interp_shape_internal.h"
#include "support/arena.h"

/* The state of sorting one slice. */
typedef struct sorter {
  interp *it;
  const hlo_op *op;
  const hlo_region *cmp;
  uint32_t n;        /* inputs */
  int64_t len;       /* slice length */
  tensor **elems;    /* elems[k * len + j]: 0-d tensor of input k, position j */
} sorter;

/* *out = comparator(elements a, elements b): true when a sorts before b. */
static hlo_status less(const sorter *s, int64_t a, int64_t b, bool *out) {
  tensor *args[2 * ISH_MAX_RANK], *res = NULL;
  for (uint32_t k = 0; k < s->n; k++) {
    args[2 * k] = s->elems[k * s->len + a];
    args[2 * k + 1] = s->elems[k * s->len + b];
  }
  HLO_TRY(ish_run_body(s->it, s->op, s->cmp, args, 2 * s->n, &res, 1));
  *out = elem_get_u64(res->type->dtype, res->data, 0) != 0;
  tensor_release(res);
  return NULL;
}

/* Sorts perm[0..len) stably by the comparator, using tmp as scratch. */
static hlo_status merge_sort(const sorter *s, int64_t *perm, int64_t *tmp) {
  int64_t len = s->len;
  for (int64_t width = 1; width < len; width *= 2) {
    for (int64_t lo = 0; lo < len; lo += 2 * width) {
      int64_t mid = lo + width < len ? lo + width : len;
      int64_t hi = lo + 2 * width < len ? lo + 2 * width : len;
      int64_t i = lo, j = mid, o = lo;
      while (i < mid && j < hi) {
        bool right_first;
        HLO_TRY(less(s, perm[j], perm[i], &right_first));
        tmp[o++] = right_first ? perm[j++] : perm[i++];
      }
      while (i < mid) tmp[o++] = perm[i++];
      while (j < hi) tmp[o++] = perm[j++];
    }
    memcpy(perm, tmp, sizeof *perm * (size_t)len);
    if (width > len / 2) break;
  }
  return NULL;
}

/* Sorts every slice of in[0..n) along `dim` into res[0..n). */
static hlo_status sort_all(interp *it, const hlo_op *op, tensor *const *in, uint32_t n,
                           uint32_t dim, tensor **res) {
  const hlo_type *xt = in[0]->type;
  uint32_t R = xt->rank;
  int64_t len = xt->dims[dim], stride = 1;
  for (uint32_t d = dim + 1; d < R; d++) stride *= xt->dims[d];
  if (len == 0 || in[0]->num_elems == 0) return NULL;
  sorter s = {it, op, &op->regions[0], n, len, NULL};
  const hlo_type *arg_t[ISH_MAX_RANK];
  for (uint32_t k = 0; k < n; k++) {
    arg_t[k] = ish_region_arg_type(it, s.cmp, 2 * k, in[k]->type->dtype);
    if (!arg_t[k]) return interp_error(op, HLO_RESOURCE_EXHAUSTED, "out of memory");
  }
  s.elems = xcalloc((size_t)n * (size_t)len, sizeof *s.elems);
  int64_t *perm = xcalloc((size_t)len, sizeof *perm), *tmp = xcalloc((size_t)len, sizeof *tmp);
  hlo_status st = NULL;
  if (!s.elems || !perm || !tmp) st = interp_error(op, HLO_RESOURCE_EXHAUSTED, "out of memory");
  /* The outer index space: the shape with `dim` set to 1. */
  int64_t odims[ISH_MAX_RANK], oi[ISH_MAX_RANK] = {0};
  for (uint32_t d = 0; d < R; d++) odims[d] = d == dim ? 1 : xt->dims[d];
  int64_t nslices = in[0]->num_elems / len;
  for (int64_t sl = 0; sl < nslices && !st; sl++, index_next(odims, R, oi)) {
    int64_t base = index_linear(xt->dims, R, oi);
    for (uint32_t k = 0; k < n && !st; k++)
      for (int64_t j = 0; j < len && !st; j++)
        st = ish_scalar_from(op, arg_t[k], in[k], base + j * stride, &s.elems[k * len + j]);
    for (int64_t j = 0; j < len; j++) perm[j] = j;
    if (!st) st = merge_sort(&s, perm, tmp);
    if (!st) {
      for (uint32_t k = 0; k < n; k++) {
        size_t sz = hlo_dtype_size(res[k]->type->dtype);
        for (int64_t j = 0; j < len; j++)
          memcpy(res[k]->data + (size_t)(base + j * stride) * sz,
                 in[k]->data + (size_t)(base + perm[j] * stride) * sz, sz);
      }
    }
    for (int64_t j = 0; j < (int64_t)n * len; j++) {
      tensor_release(s.elems[j]);
      s.elems[j] = NULL;
    }
  }
  free(s.elems);
  free(perm);
  free(tmp);
  return st;
}

/* sort: results = inputs with every slice along `dimension` (negative counts
 * from the back) sorted by the comparator. */
static hlo_status k_sort(interp *it, const hlo_op *op, tensor *const *in,
                         const hlo_type *const *rt, tensor **out) {
  uint32_t n = op->num_operands;
  if (n < 1 || n > ISH_MAX_RANK || op->num_results != n || op->num_regions < 1)
    return interp_error(op, HLO_INVALID_ARGUMENT, "expected N inputs, N results, a comparator");
  for (uint32_t k = 0; k < n; k++) {
    HLO_TRY(ish_check_tensor(op, in[k], "input"));
    HLO_TRY(ish_check_result_type(op, rt[k]));
    HLO_TRY(ish_check_same_dtype(op, rt[k], in[k]));
    if (!type_same_shape(rt[k], in[k]->type) || !ish_same_dims(in[k]->type, in[0]->type))
      return interp_error(op, HLO_INVALID_ARGUMENT, "inputs and results must share a shape");
  }
  uint32_t R = in[0]->type->rank;
  int64_t dim = op_attr_int(op, "dimension", -1);
  if (dim < 0) dim += R;
  if (R == 0 || dim < 0 || dim >= (int64_t)R)
    return interp_error(op, HLO_INVALID_ARGUMENT, "dimension %lld out of range for rank %u",
                        (long long)op_attr_int(op, "dimension", -1), R);
  tensor *res[ISH_MAX_RANK] = {0};
  hlo_status st = NULL;
  for (uint32_t k = 0; k < n && !st; k++) st = tensor_create(rt[k], &op->loc, &res[k]);
  if (!st) st = sort_all(it, op, in, n, (uint32_t)dim, res);
  if (st) {
    ish_release_all(res, n);
    return st;
  }
  for (uint32_t k = 0; k < n; k++) out[k] = res[k];
  return NULL;
}

/* Fills `table` with sort. */
void interp_register_sort(interp_kernel *table) { table[OP_SORT] = k_sort; }
