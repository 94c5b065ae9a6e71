/* interp_linalg.c — interpreter kernels for dot_general, dot,
 * triangular_solve, cholesky and the batch_norm_* ops, plus the helpers
 * the other linear-algebra kernel files share (interp_linalg_internal.h).
 *
 * Semantics follow the StableHLO spec (shared/reference/stablehlo-spec.md)
 * section of each op. Accumulation is done in f32 (float types up to f32),
 * double (f64, complex<f64>) or in wrapping 64-bit integers, then rounded /
 * wrapped once into the result type; a dot_general with an `algorithm`
 * follows it instead (operands rounded or split into its precision types,
 * products and sums in its accumulation type; see dot_algorithm.h). Attribute values are never trusted: every dimension number is
 * checked against the operand ranks and shapes, and a bad one is a located
 * HLO_INVALID_ARGUMENT. */
#include <complex.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include "interp/interp_linalg_internal.h"
#include "ir/dot_algorithm.h"
#include "interp/interp_util.h"
#include "support/float.h"

/* ------------------------------------------------------------ helpers */

la_domain la_domain_of(hlo_dtype t) {
  switch (dtype_class(t)) {
    case HLO_CLASS_BOOL: return LA_BOOL;
    case HLO_CLASS_SINT: return LA_SINT;
    case HLO_CLASS_UINT: return LA_UINT;
    case HLO_CLASS_COMPLEX: return LA_COMPLEX;
    default: return LA_FLOAT;
  }
}

bool la_attr_ints(const hlo_attr *at, int64_t *buf, uint32_t cap, uint32_t *out_n) {
  *out_n = 0;
  if (!at) return false;
  switch (at->kind) {
    case ATTR_DENSE_ARRAY:
      if (at->u.darr.n > cap) return false;
      if (at->u.darr.n && !at->u.darr.ints) return false;  /* a float array */
      for (uint32_t i = 0; i < at->u.darr.n; i++) buf[i] = at->u.darr.ints[i];
      *out_n = at->u.darr.n;
      return true;
    case ATTR_ARRAY:
      if (at->u.arr.n > cap) return false;
      for (uint32_t i = 0; i < at->u.arr.n; i++) {
        const hlo_attr *e = at->u.arr.items[i];
        if (!e || e->kind != ATTR_INT) return false;
        buf[i] = e->u.i.v;
      }
      *out_n = at->u.arr.n;
      return true;
    case ATTR_DENSE: {
      const hlo_type *t = at->u.dense.type;
      if (!t || t->kind != TYPE_TENSOR) return false;
      hlo_dtype dt = t->dtype;
      if (!dtype_is_int(dt) && dtype_class(dt) != HLO_CLASS_BOOL) return false;
      int64_t n = at->u.dense.num_elems;
      if (n < 0 || n > (int64_t)cap) return false;
      size_t es = hlo_dtype_size(dt);
      size_t need = at->u.dense.splat ? (n ? es : 0) : (size_t)n * es;
      if (at->u.dense.nbytes < need) return false;
      for (int64_t i = 0; i < n; i++)
        buf[i] = dtype_class(dt) == HLO_CLASS_UINT
                     ? (int64_t)elem_get_u64(dt, at->u.dense.data, at->u.dense.splat ? 0 : i)
                     : elem_get_i64(dt, at->u.dense.data, at->u.dense.splat ? 0 : i);
      *out_n = (uint32_t)n;
      return true;
    }
    default:
      return false;
  }
}

double *la_load_f64(const tensor *t, bool cplx) {
  int64_t n = t->num_elems;
  size_t cnt = (size_t)(n > 0 ? n : 1) * (cplx ? 2 : 1);
  double *v = malloc(cnt * sizeof(double));
  if (!v) return NULL;
  hlo_dtype dt = t->type->dtype;
  for (int64_t i = 0; i < n; i++) {
    if (cplx)
      elem_get_c128(dt, t->data, i, &v[2 * i], &v[2 * i + 1]);
    else
      v[i] = elem_get_f64(dt, t->data, i);
  }
  return v;
}

uint64_t *la_load_u64(const tensor *t) {
  int64_t n = t->num_elems;
  uint64_t *v = malloc((size_t)(n > 0 ? n : 1) * sizeof(uint64_t));
  if (!v) return NULL;
  hlo_dtype dt = t->type->dtype;
  bool is_u = dtype_class(dt) == HLO_CLASS_UINT;
  for (int64_t i = 0; i < n; i++)
    v[i] = is_u ? elem_get_u64(dt, t->data, i) : (uint64_t)elem_get_i64(dt, t->data, i);
  return v;
}

void la_store(tensor *t, la_domain d, int64_t i, const double *f, uint64_t u) {
  hlo_dtype dt = t->type->dtype;
  switch (d) {
    case LA_FLOAT: elem_set_f64(dt, t->data, i, f[0]); break;
    case LA_COMPLEX: elem_set_c128(dt, t->data, i, f[0], f[1]); break;
    case LA_SINT: elem_set_i64(dt, t->data, i, (int64_t)u); break;
    case LA_UINT: elem_set_u64(dt, t->data, i, u); break;
    case LA_BOOL: elem_set_i64(dt, t->data, i, u ? 1 : 0); break;
  }
}

bool la_single(hlo_dtype t) { return t != HLO_F64 && t != HLO_C128; }

void la_cmac(double *acc, const double *a, const double *b, bool single) {
  if (single) {
    float ar = (float)a[0], ai = (float)a[1], br = (float)b[0], bi = (float)b[1];
    float re = ar * br - ai * bi, im = ar * bi + ai * br;
    acc[0] = (float)((float)acc[0] + re);
    acc[1] = (float)((float)acc[1] + im);
  } else {
    acc[0] += a[0] * b[0] - a[1] * b[1];
    acc[1] += a[0] * b[1] + a[1] * b[0];
  }
}

/* Row-major strides of dims[0..rank). */
static void strides_of(const int64_t *dims, uint32_t rank, int64_t *st) {
  int64_t s = 1;
  for (uint32_t i = rank; i-- > 0;) {
    st[i] = s;
    s *= dims[i];
  }
}

/* Checks that `t` is a static dense tensor type of rank <= LA_MAX_RANK. */
static hlo_status check_tensor(const hlo_op *op, const hlo_type *t, const char *what) {
  if (!t || t->kind != TYPE_TENSOR || !type_is_static(t))
    return interp_error(op, HLO_INVALID_ARGUMENT, "%s must be a static tensor", what);
  if (t->rank > LA_MAX_RANK)
    return interp_error(op, HLO_UNIMPLEMENTED, "%s has rank %u, more than %d", what, t->rank,
                        LA_MAX_RANK);
  return NULL;
}

/* ------------------------------------------------------- dot_general */

/* Reads an optional dimension list field of the dot_dimension_numbers
 * struct (absent = empty). */
static hlo_status dot_dims_field(const hlo_op *op, const hlo_attr *dn, const char *name,
                                 int64_t *buf, uint32_t *n) {
  *n = 0;
  const hlo_attr *f = dn ? attr_field(dn, name) : NULL;
  if (!f) return NULL;
  if (!la_attr_ints(f, buf, LA_MAX_RANK, n))
    return interp_error(op, HLO_INVALID_ARGUMENT, "dot_dimension_numbers.%s is not a list of "
                        "at most %d integers", name, LA_MAX_RANK);
  return NULL;
}

/* Checks that dims[0..n) are in [0, rank) and, together with the `used`
 * marks, unique; marks them. */
static hlo_status check_dims_unique(const hlo_op *op, const int64_t *dims, uint32_t n,
                                    uint32_t rank, bool *used, const char *what) {
  for (uint32_t i = 0; i < n; i++) {
    if (dims[i] < 0 || dims[i] >= (int64_t)rank)
      return interp_error(op, HLO_INVALID_ARGUMENT, "%s dimension %lld out of range [0, %u)",
                          what, (long long)dims[i], rank);
    if (used[dims[i]])
      return interp_error(op, HLO_INVALID_ARGUMENT, "%s dimension %lld repeated", what,
                          (long long)dims[i]);
    used[dims[i]] = true;
  }
  return NULL;
}

/* dot_general per the spec: result dims = batch, lhs free, rhs free. */
/* The float case of dot_general, one row of results at a time: for each
 * (batch, lhs free) index, the results over all rhs free indices are
 * accumulated together, walking k in the same ascending order as the
 * one-element-at-a-time loop (so every result is summed in exactly the same
 * order and comes out bit-identical), but reading rhs rows contiguously.
 * `single`: accumulate in float (f32 and narrower), else in double. */
static hlo_status dot_float_rows(const hlo_op *op, tensor *res, const double *lf, const double *rf,
                                 bool single, int64_t K, const int64_t *coff, const int64_t *lst,
                                 const int64_t *rst, const int64_t *lb, const int64_t *rb,
                                 uint32_t nb, const int64_t *lfree, uint32_t nlf,
                                 const int64_t *rfree, uint32_t nrf) {
  const hlo_type *rt = res->type;
  int64_t R = 1;
  for (uint32_t i = 0; i < nrf; i++) R *= rt->dims[nb + nlf + i];
  int64_t *roff = malloc(sizeof(int64_t) * (size_t)R);
  double *acc = malloc(sizeof(double) * (size_t)R);
  float *facc = malloc(sizeof(float) * (size_t)R);
  if (!roff || !acc || !facc) {
    free(roff); free(acc); free(facc);
    return interp_error(op, HLO_RESOURCE_EXHAUSTED, "out of memory");
  }
  int64_t jidx[LA_MAX_RANK] = {0};
  for (int64_t j = 0; j < R; j++) {
    int64_t o = 0;
    for (uint32_t i = 0; i < nrf; i++) o += jidx[i] * rst[rfree[i]];
    roff[j] = o;
    index_next(rt->dims + nb + nlf, nrf, jidx);
  }
  int64_t rows = res->num_elems / R;
  int64_t idx[LA_MAX_RANK] = {0}; /* over the result's batch + lhs free dims */
  for (int64_t row = 0; row < rows; row++) {
    int64_t lo = 0, ro = 0;
    for (uint32_t i = 0; i < nb; i++) {
      lo += idx[i] * lst[lb[i]];
      ro += idx[i] * rst[rb[i]];
    }
    for (uint32_t i = 0; i < nlf; i++) lo += idx[nb + i] * lst[lfree[i]];
    if (single) {
      for (int64_t j = 0; j < R; j++) facc[j] = 0;
      for (int64_t k = 0; k < K; k++) {
        float l = (float)lf[lo + coff[2 * k]];
        const double *rrow = rf + ro + coff[2 * k + 1];
        for (int64_t j = 0; j < R; j++) facc[j] += l * (float)rrow[roff[j]];
      }
      for (int64_t j = 0; j < R; j++) acc[j] = facc[j];
    } else {
      for (int64_t j = 0; j < R; j++) acc[j] = 0;
      for (int64_t k = 0; k < K; k++) {
        double l = lf[lo + coff[2 * k]];
        const double *rrow = rf + ro + coff[2 * k + 1];
        for (int64_t j = 0; j < R; j++) acc[j] += l * rrow[roff[j]];
      }
    }
    for (int64_t j = 0; j < R; j++) la_store(res, LA_FLOAT, row * R + j, &acc[j], 0);
    index_next(rt->dims, nb + nlf, idx);
  }
  free(roff);
  free(acc);
  free(facc);
  return NULL;
}

/* The float case of dot_general under a dot algorithm (dot_algorithm.h),
 * one row of results at a time like dot_float_rows: each operand element is
 * split into alg->splits parts rounded to the side's precision type; the
 * primitive dots (pairs of parts, in hlo_dot_algorithm_pairs' order) are
 * accumulated into one accumulator per result, each product and each sum
 * rounded to alg->acc_type (the spec: products and sums in the accumulation
 * type), k ascending; before the last (high x high) pair of a multi-pass
 * algorithm a NaN accumulator becomes 0. allow_imprecise_accumulation is
 * not used: the accumulation is always the exact-rounding one. */
static hlo_status dot_algorithm_rows(const hlo_op *op, const hlo_dot_algorithm *alg, tensor *res,
                                     const double *lf, int64_t nl, const double *rf, int64_t nr,
                                     int64_t K, const int64_t *coff, const int64_t *lst,
                                     const int64_t *rst, const int64_t *lb, const int64_t *rb,
                                     uint32_t nb, const int64_t *lfree, uint32_t nlf,
                                     const int64_t *rfree, uint32_t nrf) {
  const hlo_type *rt = res->type;
  int ns = alg->splits > 0 ? alg->splits : 1;
  int64_t R = 1;
  for (uint32_t i = 0; i < nrf; i++) R *= rt->dims[nb + nlf + i];
  int64_t *roff = malloc(sizeof(int64_t) * (size_t)R);
  double *acc = malloc(sizeof(double) * (size_t)R);
  double *lp = malloc(sizeof(double) * (size_t)(nl * ns));
  double *rp = malloc(sizeof(double) * (size_t)(nr * ns));
  if (!roff || !acc || !lp || !rp) {
    free(roff); free(acc); free(lp); free(rp);
    return interp_error(op, HLO_RESOURCE_EXHAUSTED, "out of memory");
  }
  double parts[3];
  for (int64_t i = 0; i < nl; i++) {
    hlo_dot_algorithm_split(alg, 0, lf[i], parts);
    for (int s = 0; s < ns; s++) lp[s * nl + i] = parts[s];
  }
  for (int64_t i = 0; i < nr; i++) {
    hlo_dot_algorithm_split(alg, 1, rf[i], parts);
    for (int s = 0; s < ns; s++) rp[s * nr + i] = parts[s];
  }
  const int *pairs;
  int np = hlo_dot_algorithm_pairs(alg, &pairs);
  hlo_dtype at = alg->acc_type;
  int64_t jidx[LA_MAX_RANK] = {0};
  for (int64_t j = 0; j < R; j++) {
    int64_t o = 0;
    for (uint32_t i = 0; i < nrf; i++) o += jidx[i] * rst[rfree[i]];
    roff[j] = o;
    index_next(rt->dims + nb + nlf, nrf, jidx);
  }
  int64_t rows = res->num_elems / R;
  int64_t idx[LA_MAX_RANK] = {0};
  for (int64_t row = 0; row < rows; row++) {
    int64_t lo = 0, ro = 0;
    for (uint32_t i = 0; i < nb; i++) {
      lo += idx[i] * lst[lb[i]];
      ro += idx[i] * rst[rb[i]];
    }
    for (uint32_t i = 0; i < nlf; i++) lo += idx[nb + i] * lst[lfree[i]];
    for (int64_t j = 0; j < R; j++) acc[j] = 0;
    for (int p = 0; p < np; p++) {
      const double *L = lp + pairs[2 * p] * nl, *Rs = rp + pairs[2 * p + 1] * nr;
      if (np > 1 && p == np - 1)
        for (int64_t j = 0; j < R; j++)
          if (isnan(acc[j])) acc[j] = 0;
      for (int64_t k = 0; k < K; k++) {
        double l = L[lo + coff[2 * k]];
        const double *rrow = Rs + ro + coff[2 * k + 1];
        /* Sums of two values of the accumulation type are computed in
         * double and rounded once: double has more than 2p+2 bits for
         * every p <= 24, so that is the correctly rounded sum; products of
         * precision-type values (<= 24 significant bits) are exact in
         * double and rounded once. */
        if (at == HLO_F64) {
          for (int64_t j = 0; j < R; j++) acc[j] += l * rrow[roff[j]];
        } else if (at == HLO_F32) {
          for (int64_t j = 0; j < R; j++)
            acc[j] = (float)(acc[j] + (double)(float)(l * rrow[roff[j]]));
        } else {
          for (int64_t j = 0; j < R; j++)
            acc[j] = float_round(at, acc[j] + float_round(at, l * rrow[roff[j]]));
        }
      }
    }
    for (int64_t j = 0; j < R; j++) la_store(res, LA_FLOAT, row * R + j, &acc[j], 0);
    index_next(rt->dims, nb + nlf, idx);
  }
  free(roff); free(acc); free(lp); free(rp);
  return NULL;
}

static hlo_status dot_general_impl(const hlo_op *op, const tensor *lhs, const tensor *rhs,
                                   const int64_t *lb, const int64_t *rb, uint32_t nb,
                                   const int64_t *lc, const int64_t *rc, uint32_t nc,
                                   const hlo_dot_algorithm *alg, const hlo_type *rt,
                                   tensor **out) {
  HLO_TRY(check_tensor(op, lhs->type, "lhs"));
  HLO_TRY(check_tensor(op, rhs->type, "rhs"));
  HLO_TRY(check_tensor(op, rt, "result"));
  const hlo_type *lt = lhs->type, *rht = rhs->type;
  bool lused[LA_MAX_RANK] = {0}, rused[LA_MAX_RANK] = {0};
  HLO_TRY(check_dims_unique(op, lb, nb, lt->rank, lused, "lhs batching"));
  HLO_TRY(check_dims_unique(op, lc, nc, lt->rank, lused, "lhs contracting"));
  HLO_TRY(check_dims_unique(op, rb, nb, rht->rank, rused, "rhs batching"));
  HLO_TRY(check_dims_unique(op, rc, nc, rht->rank, rused, "rhs contracting"));
  for (uint32_t i = 0; i < nb; i++)
    if (lt->dims[lb[i]] != rht->dims[rb[i]])
      return interp_error(op, HLO_INVALID_ARGUMENT, "(C9): batching dimension "
                          "sizes differ (%lld vs %lld)", (long long)lt->dims[lb[i]],
                          (long long)rht->dims[rb[i]]);
  for (uint32_t i = 0; i < nc; i++)
    if (lt->dims[lc[i]] != rht->dims[rc[i]])
      return interp_error(op, HLO_INVALID_ARGUMENT, "(C10): contracting dimension "
                          "sizes differ (%lld vs %lld)", (long long)lt->dims[lc[i]],
                          (long long)rht->dims[rc[i]]);
  int64_t lfree[LA_MAX_RANK], rfree[LA_MAX_RANK];
  uint32_t nlf = 0, nrf = 0;
  for (uint32_t d = 0; d < lt->rank; d++)
    if (!lused[d]) lfree[nlf++] = d;
  for (uint32_t d = 0; d < rht->rank; d++)
    if (!rused[d]) rfree[nrf++] = d;
  /* (C12) result shape. */
  bool shape_ok = rt->rank == nb + nlf + nrf;
  for (uint32_t i = 0; shape_ok && i < nb; i++) shape_ok = rt->dims[i] == lt->dims[lb[i]];
  for (uint32_t i = 0; shape_ok && i < nlf; i++) shape_ok = rt->dims[nb + i] == lt->dims[lfree[i]];
  for (uint32_t i = 0; shape_ok && i < nrf; i++)
    shape_ok = rt->dims[nb + nlf + i] == rht->dims[rfree[i]];
  if (!shape_ok)
    return interp_error(op, HLO_INVALID_ARGUMENT, "(C12): result shape does not "
                        "match batch + lhs free + rhs free dimensions");

  tensor *res;
  HLO_TRY(tensor_create(rt, &op->loc, &res));
  if (res->num_elems == 0 || lhs->num_elems == 0 || rhs->num_elems == 0) {
    *out = res;  /* empty result, or empty contraction: zeros */
    return NULL;
  }
  la_domain dom = la_domain_of(rt->dtype);
  int64_t lst[LA_MAX_RANK], rst[LA_MAX_RANK];
  strides_of(lt->dims, lt->rank, lst);
  strides_of(rht->dims, rht->rank, rst);
  /* Offsets of every contracting index (row-major over lc's dims). */
  int64_t K = 1;
  int64_t cdims[LA_MAX_RANK];
  for (uint32_t i = 0; i < nc; i++) {
    cdims[i] = lt->dims[lc[i]];
    K *= cdims[i];  /* <= num_elems of lhs, which is non-zero */
  }
  int64_t *coff = malloc(sizeof(int64_t) * 2 * (size_t)K);
  double *lf, *rf;
  uint64_t *lu, *ru;
  bool fl = dom == LA_FLOAT || dom == LA_COMPLEX, cx = dom == LA_COMPLEX;
  bool single = la_single(rt->dtype);
  bool loaded = iu_load_operands(lhs, rhs, fl, cx, &lf, &rf, &lu, &ru);
  if (!coff || !loaded) {
    free(coff); free(lf); free(rf); free(lu); free(ru);
    tensor_release(res);
    return interp_error(op, HLO_RESOURCE_EXHAUSTED, "out of memory");
  }
  {
    int64_t cidx[LA_MAX_RANK] = {0};
    for (int64_t k = 0; k < K; k++) {
      int64_t lo = 0, ro = 0;
      for (uint32_t i = 0; i < nc; i++) {
        lo += cidx[i] * lst[lc[i]];
        ro += cidx[i] * rst[rc[i]];
      }
      coff[2 * k] = lo;
      coff[2 * k + 1] = ro;
      index_next(cdims, nc, cidx);
    }
  }
  if (alg && dom == LA_FLOAT) {
    hlo_status st = dot_algorithm_rows(op, alg, res, lf, lhs->num_elems, rf, rhs->num_elems, K,
                                       coff, lst, rst, lb, rb, nb, lfree, nlf, rfree, nrf);
    free(coff); free(lf); free(rf); free(lu); free(ru);
    if (st) { tensor_release(res); return st; }
    *out = res;
    return NULL;
  }
  if (dom == LA_FLOAT) {
    hlo_status st = dot_float_rows(op, res, lf, rf, single, K, coff, lst, rst, lb, rb, nb, lfree,
                                   nlf, rfree, nrf);
    free(coff); free(lf); free(rf); free(lu); free(ru);
    if (st) { tensor_release(res); return st; }
    *out = res;
    return NULL;
  }
  int64_t idx[LA_MAX_RANK] = {0};
  for (int64_t r = 0; r < res->num_elems; r++) {
    int64_t lo = 0, ro = 0;
    for (uint32_t i = 0; i < nb; i++) {
      lo += idx[i] * lst[lb[i]];
      ro += idx[i] * rst[rb[i]];
    }
    for (uint32_t i = 0; i < nlf; i++) lo += idx[nb + i] * lst[lfree[i]];
    for (uint32_t i = 0; i < nrf; i++) ro += idx[nb + nlf + i] * rst[rfree[i]];
    double acc[2] = {0, 0};
    uint64_t uacc = 0;
    switch (dom) {
      case LA_FLOAT:
        if (single) {
          float fa = 0;
          for (int64_t k = 0; k < K; k++)
            fa += (float)lf[lo + coff[2 * k]] * (float)rf[ro + coff[2 * k + 1]];
          acc[0] = fa;
        } else {
          for (int64_t k = 0; k < K; k++) acc[0] += lf[lo + coff[2 * k]] * rf[ro + coff[2 * k + 1]];
        }
        break;
      case LA_COMPLEX:
        for (int64_t k = 0; k < K; k++)
          la_cmac(acc, &lf[2 * (lo + coff[2 * k])], &rf[2 * (ro + coff[2 * k + 1])], single);
        break;
      case LA_SINT:
      case LA_UINT:
        for (int64_t k = 0; k < K; k++) uacc += lu[lo + coff[2 * k]] * ru[ro + coff[2 * k + 1]];
        break;
      case LA_BOOL:
        for (int64_t k = 0; k < K && !uacc; k++)
          uacc = (lu[lo + coff[2 * k]] & ru[ro + coff[2 * k + 1]]) != 0;
        break;
    }
    la_store(res, dom, r, acc, uacc);
    index_next(rt->dims, rt->rank, idx);
  }
  free(coff); free(lf); free(rf); free(lu); free(ru);
  *out = res;
  return NULL;
}

static hlo_status k_dot_general(interp *it, const hlo_op *op, tensor *const *in,
                                const hlo_type *const *result_types, tensor **out) {
  (void)it;
  if (op->num_operands != 2 || op->num_results != 1)
    return interp_error(op, HLO_INVALID_ARGUMENT, "expects 2 operands and 1 result");
  const hlo_attr *dn = op_attr(op, "dot_dimension_numbers");
  if (dn && dn->kind != ATTR_STRUCT)
    return interp_error(op, HLO_INVALID_ARGUMENT, "dot_dimension_numbers is not a "
                        "#stablehlo.dot attribute");
  int64_t lb[LA_MAX_RANK], rb[LA_MAX_RANK], lc[LA_MAX_RANK], rc[LA_MAX_RANK];
  uint32_t nlb, nrb, nlc, nrc;
  HLO_TRY(dot_dims_field(op, dn, "lhs_batching_dimensions", lb, &nlb));
  HLO_TRY(dot_dims_field(op, dn, "rhs_batching_dimensions", rb, &nrb));
  HLO_TRY(dot_dims_field(op, dn, "lhs_contracting_dimensions", lc, &nlc));
  HLO_TRY(dot_dims_field(op, dn, "rhs_contracting_dimensions", rc, &nrc));
  if (nlb != nrb)
    return interp_error(op, HLO_INVALID_ARGUMENT, "(C1): %u lhs vs %u rhs "
                        "batching dimensions", nlb, nrb);
  if (nlc != nrc)
    return interp_error(op, HLO_INVALID_ARGUMENT, "(C2): %u lhs vs %u rhs "
                        "contracting dimensions", nlc, nrc);
  /* The algorithm (verified; re-checked here, as attributes are untrusted):
   * hlo runs the combinations of dot_algorithm.h and refuses any other. */
  hlo_dot_algorithm alg;
  bool has_alg;
  char err[160];
  if (!hlo_dot_algorithm_decode(op_attr(op, "algorithm"), &alg, &has_alg, err, sizeof err))
    return interp_error(op, HLO_INVALID_ARGUMENT, "%s", err);
  if (has_alg) {
    char text[400];
    hlo_dot_algorithm_format(&alg, text, sizeof text);
    if (!hlo_dot_algorithm_match(&alg))
      return status_note(interp_error(op, HLO_UNIMPLEMENTED, "unsupported dot algorithm <%s>",
                                      text), "hlo runs %s", hlo_dot_algorithm_supported());
    /* Integer operands are multiplied exactly (the algorithm's float
     * precision types do not apply; the StableHLO interpreter's test of an
     * algorithm on i64 expects the exact product); complex: refused. */
    if (la_domain_of(result_types[0]->dtype) == LA_COMPLEX ||
        la_domain_of(in[0]->type->dtype) == LA_COMPLEX)
      return interp_error(op, HLO_UNIMPLEMENTED, "dot algorithm %s on complex operands is "
                          "not supported", alg.preset);
  }
  return dot_general_impl(op, in[0], in[1], lb, rb, nlb, lc, rc, nlc, has_alg ? &alg : NULL,
                          result_types[0], out);
}

/* dot: the deprecated form; rank-1/2 operands, contracting lhs's last
 * dimension with rhs's first. */
static hlo_status k_dot(interp *it, const hlo_op *op, tensor *const *in,
                        const hlo_type *const *result_types, tensor **out) {
  (void)it;
  if (op->num_operands != 2 || op->num_results != 1)
    return interp_error(op, HLO_INVALID_ARGUMENT, "expects 2 operands and 1 result");
  uint32_t lr = in[0]->type->rank, rr = in[1]->type->rank;
  if (in[0]->type->kind != TYPE_TENSOR || in[1]->type->kind != TYPE_TENSOR || lr < 1 ||
      lr > 2 || rr < 1 || rr > 2)
    return interp_error(op, HLO_INVALID_ARGUMENT, "dot expects operands of rank 1 or 2");
  int64_t lc = lr - 1, rc = 0;
  return dot_general_impl(op, in[0], in[1], NULL, NULL, 0, &lc, &rc, 1, NULL, result_types[0], out);
}

/* ------------------------------------------------ triangular_solve */

/* triangular_solve: substitution row by row (left side) or column by
 * column (right side), in the order of XLA's SolveDirectly, computed in
 * double and rounded once into the result type. (XLA itself inverts the
 * diagonal blocks in the element type for small batches; that is less
 * accurate, so this oracle does not copy it.) Values travel as double
 * complex (imaginary part 0 for real types); ts_ctx keeps the rounding
 * hooks at double so a narrower emulation stays a one-line change. */
typedef struct ts_ctx {
  hlo_dtype et;   /* real type of an element (complex<f32>: f32) */
  hlo_dtype acc;  /* dot accumulation type */
  bool cplx;
} ts_ctx;

static double complex ts_round(hlo_dtype t, double complex z) {
  return CMPLX(float_round(t, creal(z)), float_round(t, cimag(z)));
}

static double complex ts_mul(hlo_dtype t, double complex x, double complex y) {
  double xr = creal(x), xi = cimag(x), yr = creal(y), yi = cimag(y);
  if (xi == 0 && yi == 0) return CMPLX(float_round(t, xr * yr), 0);
  return CMPLX(float_round(t, float_round(t, xr * yr) - float_round(t, xi * yi)),
               float_round(t, float_round(t, xr * yi) + float_round(t, xi * yr)));
}

static double complex ts_div(const ts_ctx *c, double complex x, double complex y) {
  if (!c->cplx) return CMPLX(float_round(c->et, creal(x) / creal(y)), 0);
  return ts_round(c->et, x / y);
}

/* sum_k x[k * xs] * y[k * ys] over k in [0, n), accumulated in c->acc,
 * rounded to the element type. */
static double complex ts_dot(const ts_ctx *c, const double complex *x, int64_t xs,
                             const double complex *y, int64_t ys, int64_t n) {
  double complex s = 0;
  for (int64_t k = 0; k < n; k++) s = ts_round(c->acc, s + ts_mul(c->acc, x[k * xs], y[k * ys]));
  return ts_round(c->et, s);
}

/* Element (p, q) of op(a): transposed for trans 1 and 2, conjugated for 2. */
static double complex ts_op(const double complex *A, int64_t n, int trans, int64_t p, int64_t q) {
  double complex z = trans ? A[q * n + p] : A[p * n + q];
  return trans == 2 ? conj(z) : z;
}

/* XLA's SolveDirectly: row by row (left) or column by column (right)
 * substitution. `v` is scratch for n values. */
static void ts_direct(const ts_ctx *c, const double complex *A, const double complex *B,
                      double complex *X, int64_t n, int64_t rows, int64_t cols, bool left,
                      bool lower, int trans, bool unit, double complex *v) {
  memcpy(X, B, sizeof(double complex) * (size_t)(rows * cols));
  bool op_lower = lower ^ (trans != 0);
  /* left: op(a) X = B, X[j] depends on X[k], k < j when op(a) is lower;
   * right: X op(a) = B, column j depends on k < j when op(a) is upper. */
  bool ascending = left ? op_lower : !op_lower;
  int64_t m = left ? cols : rows;
  for (int64_t i = 0; i < n; i++) {
    int64_t j = ascending ? i : n - 1 - i;
    int64_t k0 = ascending ? 0 : j + 1, k1 = ascending ? j : n;
    for (int64_t k = k0; k < k1; k++) v[k - k0] = left ? ts_op(A, n, trans, j, k) : ts_op(A, n, trans, k, j);
    double complex diag = ts_op(A, n, trans, j, j);
    for (int64_t r = 0; r < m; r++) {
      double complex dot = left ? ts_dot(c, v, 1, &X[k0 * cols + r], cols, k1 - k0)
                                : ts_dot(c, &X[r * cols + k0], 1, v, 1, k1 - k0);
      double complex *xe = left ? &X[j * cols + r] : &X[r * cols + j];
      *xe = ts_round(c->et, *xe - dot);
      if (!unit) *xe = ts_div(c, *xe, diag);
    }
  }
}

/* Shared batch-of-matrices shape check: rank >= 2, square trailing dims. */
static hlo_status check_square_batch(const hlo_op *op, const hlo_type *t, const char *what) {
  HLO_TRY(check_tensor(op, t, what));
  if (t->rank < 2)
    return interp_error(op, HLO_INVALID_ARGUMENT, "%s must have rank >= 2", what);
  if (t->dims[t->rank - 1] != t->dims[t->rank - 2])
    return interp_error(op, HLO_INVALID_ARGUMENT, "%s must be square in its last two "
                        "dimensions", what);
  return NULL;
}

static hlo_status k_triangular_solve(interp *it, const hlo_op *op, tensor *const *in,
                                     const hlo_type *const *result_types, tensor **out) {
  (void)it;
  if (op->num_operands != 2 || op->num_results != 1)
    return interp_error(op, HLO_INVALID_ARGUMENT, "expects 2 operands and 1 result");
  const hlo_type *at = in[0]->type, *bt = in[1]->type, *rt = result_types[0];
  HLO_TRY(check_square_batch(op, at, "a"));
  HLO_TRY(check_tensor(op, bt, "b"));
  HLO_TRY(check_tensor(op, rt, "result"));
  bool left = op_attr_bool(op, "left_side", false);
  bool lower = op_attr_bool(op, "lower", false);
  bool unit = op_attr_bool(op, "unit_diagonal", false);
  int trans = 0; /* 0 none, 1 transpose, 2 adjoint */
  const hlo_attr *ta = op_attr(op, "transpose_a");
  if (ta) {
    const char *v = ta->kind == ATTR_ENUM ? ta->u.en.value : NULL;
    if (v && !strcmp(v, "NO_TRANSPOSE")) trans = 0;
    else if (v && !strcmp(v, "TRANSPOSE")) trans = 1;
    else if (v && !strcmp(v, "ADJOINT")) trans = 2;
    else
      return interp_error(op, HLO_INVALID_ARGUMENT, "transpose_a must be NO_TRANSPOSE, "
                          "TRANSPOSE or ADJOINT");
  }
  uint32_t R = at->rank;
  if (bt->rank != R || rt->rank != R)
    return interp_error(op, HLO_INVALID_ARGUMENT, "(C2): a, b and result "
                        "must have the same rank");
  for (uint32_t d = 0; d + 2 < R; d++)
    if (at->dims[d] != bt->dims[d])
      return interp_error(op, HLO_INVALID_ARGUMENT, "(C3): batch "
                          "dimensions of a and b differ");
  for (uint32_t d = 0; d < R; d++)
    if (rt->dims[d] != bt->dims[d])
      return interp_error(op, HLO_INVALID_ARGUMENT, "(C4): result shape "
                          "differs from b's");
  int64_t n = at->dims[R - 1];
  int64_t brow = bt->dims[R - 2], bcol = bt->dims[R - 1];
  if ((left ? brow : bcol) != n)
    return interp_error(op, HLO_INVALID_ARGUMENT, "(C3): dim(a, -1) = %lld "
                        "but dim(b, %d) = %lld", (long long)n, left ? -2 : -1,
                        (long long)(left ? brow : bcol));
  tensor *res;
  HLO_TRY(tensor_create(rt, &op->loc, &res));
  if (res->num_elems == 0) {
    *out = res;
    return NULL;
  }
  int64_t nbatch = res->num_elems / (brow * bcol);
  bool cplx = dtype_class(rt->dtype) == HLO_CLASS_COMPLEX;
  ts_ctx c = {HLO_F64, HLO_F64, cplx};
  size_t nn = (size_t)(n * n), nb = (size_t)(brow * bcol);
  double complex *A = malloc(sizeof(double complex) * (nn + 2 * nb + (size_t)n + 1));
  double *a = la_load_f64(in[0], true), *b = la_load_f64(in[1], true);
  if (!A || !a || !b) {
    free(A); free(a); free(b);
    tensor_release(res);
    return interp_error(op, HLO_RESOURCE_EXHAUSTED, "out of memory");
  }
  double complex *B = A + nn, *X = B + nb, *v = X + nb;
  for (int64_t bi = 0; bi < nbatch; bi++) {
    for (size_t i = 0; i < nn; i++) A[i] = CMPLX(a[2 * (bi * nn + i)], a[2 * (bi * nn + i) + 1]);
    for (size_t i = 0; i < nb; i++) B[i] = CMPLX(b[2 * (bi * nb + i)], b[2 * (bi * nb + i) + 1]);
    ts_direct(&c, A, B, X, n, brow, bcol, left, lower, trans, unit, v);
    for (size_t i = 0; i < nb; i++) {
      double w[2] = {creal(X[i]), cimag(X[i])};
      la_store(res, cplx ? LA_COMPLEX : LA_FLOAT, bi * (int64_t)nb + (int64_t)i, w, 0);
    }
  }
  free(A); free(a); free(b);
  *out = res;
  return NULL;
}

/* --------------------------------------------------------- cholesky */

static hlo_status k_cholesky(interp *it, const hlo_op *op, tensor *const *in,
                             const hlo_type *const *result_types, tensor **out) {
  (void)it;
  if (op->num_operands != 1 || op->num_results != 1)
    return interp_error(op, HLO_INVALID_ARGUMENT, "expects 1 operand and 1 result");
  const hlo_type *at = in[0]->type, *rt = result_types[0];
  HLO_TRY(check_square_batch(op, at, "a"));
  HLO_TRY(check_tensor(op, rt, "result"));
  if (rt->rank != at->rank || memcmp(rt->dims, at->dims, sizeof(int64_t) * at->rank))
    return interp_error(op, HLO_INVALID_ARGUMENT, "(C1): result shape differs "
                        "from a's");
  bool lower = op_attr_bool(op, "lower", false);
  tensor *res;
  HLO_TRY(tensor_create(rt, &op->loc, &res));
  if (res->num_elems == 0) {
    *out = res;
    return NULL;
  }
  int64_t n = at->dims[at->rank - 1];
  int64_t nbatch = res->num_elems / (n * n);
  double complex *L = malloc(sizeof(double complex) * (size_t)(n * n));
  double *a = la_load_f64(in[0], true);
  if (!L || !a) {
    free(L); free(a);
    tensor_release(res);
    return interp_error(op, HLO_RESOURCE_EXHAUSTED, "out of memory");
  }
  bool cplx = dtype_class(rt->dtype) == HLO_CLASS_COMPLEX;
  for (int64_t bi = 0; bi < nbatch; bi++) {
    const double *ab = a + 2 * bi * n * n;
    /* Lower-triangle view of the Hermitian input: from the lower triangle
     * when `lower`, else the conjugate of the upper triangle. */
#define A_LOW(i, j)                                                              \
  (lower ? ab[2 * ((i) * n + (j))] + I * ab[2 * ((i) * n + (j)) + 1]             \
         : ab[2 * ((j) * n + (i))] - I * ab[2 * ((j) * n + (i)) + 1])
    bool ok = true;
    memset(L, 0, sizeof(double complex) * (size_t)(n * n));
    for (int64_t j = 0; j < n && ok; j++) {
      double d = creal(A_LOW(j, j));
      for (int64_t k = 0; k < j; k++) d -= creal(L[j * n + k] * conj(L[j * n + k]));
      if (!(d > 0)) {
        ok = false;
        break;
      }
      double ljj = sqrt(d);
      L[j * n + j] = ljj;
      for (int64_t i = j + 1; i < n; i++) {
        double complex s = A_LOW(i, j);
        for (int64_t k = 0; k < j; k++) s -= L[i * n + k] * conj(L[j * n + k]);
        L[i * n + j] = s / ljj;
      }
    }
#undef A_LOW
    for (int64_t i = 0; i < n; i++)
      for (int64_t j = 0; j < n; j++) {
        double v[2];
        if (!ok) {
          v[0] = v[1] = NAN;  /* not positive definite: implementation-defined */
        } else {
          /* upper result U = L^H */
          double complex x = lower ? L[i * n + j] : conj(L[j * n + i]);
          v[0] = creal(x);
          v[1] = cimag(x);
        }
        la_store(res, cplx ? LA_COMPLEX : LA_FLOAT, bi * n * n + i * n + j, v, 0);
      }
  }
  free(L); free(a);
  *out = res;
  return NULL;
}

/* -------------------------------------------------------- batch_norm */

/* Operand layout around feature_index: the operand is viewed as
 * [outer, features, inner]. */
typedef struct bn_shape {
  int64_t outer, features, inner, n;
  hlo_dtype dt;
  double eps;
} bn_shape;

/* Checks the operands of a batch_norm op (`n_vectors` feature vectors after
 * the operand) and fills `s` with the feature dimension and sizes. */
static hlo_status bn_setup(const hlo_op *op, tensor *const *in, uint32_t n_vectors,
                           const hlo_type *const *result_types, bn_shape *s) {
  const hlo_type *t = in[0]->type;
  HLO_TRY(check_tensor(op, t, "operand"));
  if (dtype_class(t->dtype) != HLO_CLASS_FLOAT)
    return interp_error(op, HLO_INVALID_ARGUMENT, "operand must have a floating-point type");
  const hlo_attr *fi = op_attr(op, "feature_index");
  if (!fi || fi->kind != ATTR_INT)
    return interp_error(op, HLO_INVALID_ARGUMENT, "missing integer feature_index");
  int64_t f = fi->u.i.v;
  if (f < 0 || f >= (int64_t)t->rank)
    return interp_error(op, HLO_INVALID_ARGUMENT, "(C1): feature_index %lld out of range "
                        "[0, %u)", (long long)f, t->rank);
  const hlo_attr *ep = op_attr(op, "epsilon");
  if (!ep || (ep->kind != ATTR_FLOAT && ep->kind != ATTR_INT))
    return interp_error(op, HLO_INVALID_ARGUMENT, "missing float epsilon");
  double eps = ep->kind == ATTR_FLOAT ? ep->u.f.v : (double)ep->u.i.v;
  /* epsilon is an f32 constant, broadcast as element_type(operand) */
  s->eps = float_round(t->dtype, float_round(HLO_F32, eps));
  s->dt = t->dtype;
  s->features = t->dims[f];
  s->outer = 1;
  s->inner = 1;
  for (int64_t d = 0; d < f; d++) s->outer *= t->dims[d];
  for (uint32_t d = (uint32_t)f + 1; d < t->rank; d++) s->inner *= t->dims[d];
  s->n = in[0]->num_elems;
  /* Per-feature vectors (operands 1..n_vectors) must be 1-D of size
   * `features`; further operands (grad_output) the operand's shape. */
  for (uint32_t i = 1; i < op->num_operands; i++) {
    const hlo_type *vt = in[i]->type;
    HLO_TRY(check_tensor(op, vt, "operand"));
    if (i <= n_vectors) {
      if (vt->rank != 1 || vt->dims[0] != s->features)
        return interp_error(op, HLO_INVALID_ARGUMENT, "operand #%u must be 1-D of size "
                            "dim(operand, feature_index) = %lld", i, (long long)s->features);
    } else if (vt->rank != t->rank || memcmp(vt->dims, t->dims, sizeof(int64_t) * t->rank)) {
      return interp_error(op, HLO_INVALID_ARGUMENT, "operand #%u must have the operand's "
                          "shape", i);
    }
  }
  for (uint32_t i = 0; i < op->num_results; i++) {
    const hlo_type *r = result_types[i];
    HLO_TRY(check_tensor(op, r, "result"));
    bool ok = i == 0 ? (r->rank == t->rank && !memcmp(r->dims, t->dims, sizeof(int64_t) * t->rank))
                     : (r->rank == 1 && r->dims[0] == s->features);
    if (!ok || dtype_class(r->dtype) != HLO_CLASS_FLOAT)
      return interp_error(op, HLO_INVALID_ARGUMENT, "result #%u has the wrong type", i);
  }
  return NULL;
}

/* Element (o, c, i) of a [outer, features, inner] view. */
#define BN_AT(s, o, c, i) (((o) * (s)->features + (c)) * (s)->inner + (i))

/* Per-feature sums in element-type arithmetic (rounded after each add). */
static void bn_sum(const bn_shape *s, const double *x, double *sum) {
  for (int64_t c = 0; c < s->features; c++) {
    double acc = 0;
    for (int64_t o = 0; o < s->outer; o++)
      for (int64_t i = 0; i < s->inner; i++) acc = float_round(s->dt, acc + x[BN_AT(s, o, c, i)]);
    sum[c] = acc;
  }
}

/* Allocates results 0..nres-1 and loads operands; frees everything and
 * returns an error on failure. */
static hlo_status bn_alloc(const hlo_op *op, tensor *const *in, uint32_t nin,
                           const hlo_type *const *rts, uint32_t nres, double **vals,
                           tensor **res) {
  hlo_status st = NULL;
  for (uint32_t i = 0; i < nres; i++) res[i] = NULL;
  for (uint32_t i = 0; i < nin; i++) vals[i] = NULL;
  for (uint32_t i = 0; i < nres && !st; i++) st = tensor_create(rts[i], &op->loc, &res[i]);
  for (uint32_t i = 0; i < nin && !st; i++) {
    vals[i] = la_load_f64(in[i], false);
    if (!vals[i]) st = interp_error(op, HLO_RESOURCE_EXHAUSTED, "out of memory");
  }
  if (st) {
    for (uint32_t i = 0; i < nres; i++) tensor_release(res[i]);
    for (uint32_t i = 0; i < nin; i++) free(vals[i]);
  }
  return st;
}

/* batch_norm_inference's normalization of x with given mean/variance. */
static void bn_normalize(const bn_shape *s, const double *x, const double *scale,
                         const double *offset, const double *mean, const double *var,
                         tensor *outt) {
  hlo_dtype dt = s->dt;
  for (int64_t o = 0; o < s->outer; o++)
    for (int64_t c = 0; c < s->features; c++) {
      double stddev = float_round(dt, sqrt(float_round(dt, var[c] + s->eps)));
      for (int64_t i = 0; i < s->inner; i++) {
        int64_t e = BN_AT(s, o, c, i);
        double centered = float_round(dt, x[e] - mean[c]);
        double norm = float_round(dt, centered / stddev);
        double v = float_round(dt, float_round(dt, scale[c] * norm) + offset[c]);
        elem_set_f64(outt->type->dtype, outt->data, e, v);
      }
    }
}

static hlo_status k_batch_norm_inference(interp *it, const hlo_op *op, tensor *const *in,
                                         const hlo_type *const *result_types, tensor **out) {
  (void)it;
  if (op->num_operands != 5 || op->num_results != 1)
    return interp_error(op, HLO_INVALID_ARGUMENT, "expects 5 operands and 1 result");
  bn_shape s;
  HLO_TRY(bn_setup(op, in, 4, result_types, &s));
  double *v[5];
  tensor *res[1];
  HLO_TRY(bn_alloc(op, in, 5, result_types, 1, v, res));
  /* operands: operand, scale, offset, mean, variance */
  bn_normalize(&s, v[0], v[1], v[2], v[3], v[4], res[0]);
  for (int i = 0; i < 5; i++) free(v[i]);
  out[0] = res[0];
  return NULL;
}

static hlo_status k_batch_norm_training(interp *it, const hlo_op *op, tensor *const *in,
                                        const hlo_type *const *result_types, tensor **out) {
  (void)it;
  if (op->num_operands != 3 || op->num_results != 3)
    return interp_error(op, HLO_INVALID_ARGUMENT, "expects 3 operands and 3 results");
  bn_shape s;
  HLO_TRY(bn_setup(op, in, 2, result_types, &s));
  double *v[3];
  tensor *res[3];
  HLO_TRY(bn_alloc(op, in, 3, result_types, 3, v, res));
  hlo_dtype dt = s.dt;
  double *mean = calloc((size_t)s.features * 2 + 1, sizeof(double));
  double *sq = calloc((size_t)(s.n > 0 ? s.n : 1), sizeof(double));
  if (!mean || !sq) {
    free(mean); free(sq);
    for (int i = 0; i < 3; i++) { free(v[i]); tensor_release(res[i]); }
    return interp_error(op, HLO_RESOURCE_EXHAUSTED, "out of memory");
  }
  double *var = mean + s.features;
  double divisor = float_round(dt, (double)(s.outer * s.inner));
  bn_sum(&s, v[0], mean);
  for (int64_t c = 0; c < s.features; c++) mean[c] = float_round(dt, mean[c] / divisor);
  for (int64_t o = 0; o < s.outer; o++)
    for (int64_t c = 0; c < s.features; c++)
      for (int64_t i = 0; i < s.inner; i++) {
        int64_t e = BN_AT(&s, o, c, i);
        double centered = float_round(dt, v[0][e] - mean[c]);
        sq[e] = float_round(dt, centered * centered);
      }
  bn_sum(&s, sq, var);
  for (int64_t c = 0; c < s.features; c++) var[c] = float_round(dt, var[c] / divisor);
  bn_normalize(&s, v[0], v[1], v[2], mean, var, res[0]);
  for (int64_t c = 0; c < s.features; c++) {
    elem_set_f64(res[1]->type->dtype, res[1]->data, c, mean[c]);
    elem_set_f64(res[2]->type->dtype, res[2]->data, c, var[c]);
  }
  free(mean); free(sq);
  for (int i = 0; i < 3; i++) { free(v[i]); out[i] = res[i]; }
  return NULL;
}

static hlo_status k_batch_norm_grad(interp *it, const hlo_op *op, tensor *const *in,
                                    const hlo_type *const *result_types, tensor **out) {
  (void)it;
  if (op->num_operands != 5 || op->num_results != 3)
    return interp_error(op, HLO_INVALID_ARGUMENT, "expects 5 operands and 3 results");
  bn_shape s;
  HLO_TRY(bn_setup(op, in, 3, result_types, &s));
  double *v[5];
  tensor *res[3];
  HLO_TRY(bn_alloc(op, in, 5, result_types, 3, v, res));
  /* operands: operand, scale, mean, variance, grad_output */
  const double *x = v[0], *scale = v[1], *mean = v[2], *var = v[3], *gy = v[4];
  hlo_dtype dt = s.dt;
  size_t nn = (size_t)(s.n > 0 ? s.n : 1);
  double *t1 = calloc(nn, sizeof(double)), *t2 = calloc(nn, sizeof(double));
  double *sums = calloc((size_t)s.features * 4 + 1, sizeof(double));
  if (!t1 || !t2 || !sums) {
    free(t1); free(t2); free(sums);
    for (int i = 0; i < 5; i++) free(v[i]);
    for (int i = 0; i < 3; i++) tensor_release(res[i]);
    return interp_error(op, HLO_RESOURCE_EXHAUSTED, "out of memory");
  }
  double *sum_gy = sums, *sum_gyc = sums + s.features, *sum_gyn = sums + 2 * s.features;
  /* t1 = grad_output * centered_operand, t2 = grad_output * normalized */
  for (int64_t o = 0; o < s.outer; o++)
    for (int64_t c = 0; c < s.features; c++) {
      double stddev = float_round(dt, sqrt(float_round(dt, var[c] + s.eps)));
      for (int64_t i = 0; i < s.inner; i++) {
        int64_t e = BN_AT(&s, o, c, i);
        double centered = float_round(dt, x[e] - mean[c]);
        double norm = float_round(dt, centered / stddev);
        t1[e] = float_round(dt, gy[e] * centered);
        t2[e] = float_round(dt, gy[e] * norm);
      }
    }
  bn_sum(&s, gy, sum_gy);   /* i2, grad_offset */
  bn_sum(&s, t1, sum_gyc);  /* i3 */
  bn_sum(&s, t2, sum_gyn);  /* grad_scale */
  double epf = float_round(dt, (double)(s.outer * s.inner));  /* elements_per_feature */
  for (int64_t o = 0; o < s.outer; o++)
    for (int64_t c = 0; c < s.features; c++) {
      double ve = float_round(dt, var[c] + s.eps);
      double stddev = float_round(dt, sqrt(ve));
      double coef = float_round(dt, float_round(dt, scale[c] / stddev) / epf);
      for (int64_t i = 0; i < s.inner; i++) {
        int64_t e = BN_AT(&s, o, c, i);
        double centered = float_round(dt, x[e] - mean[c]);
        double i1 = float_round(dt, gy[e] * epf);
        double i4 = float_round(dt, sum_gyc[c] * centered);
        double i5 = float_round(dt, i4 / ve);
        double i6 = float_round(dt, float_round(dt, i1 - sum_gy[c]) - i5);
        elem_set_f64(res[0]->type->dtype, res[0]->data, e, coef * i6);
      }
    }
  for (int64_t c = 0; c < s.features; c++) {
    elem_set_f64(res[1]->type->dtype, res[1]->data, c, sum_gyn[c]);
    elem_set_f64(res[2]->type->dtype, res[2]->data, c, sum_gy[c]);
  }
  free(t1); free(t2); free(sums);
  for (int i = 0; i < 5; i++) free(v[i]);
  for (int i = 0; i < 3; i++) out[i] = res[i];
  return NULL;
}

/* ------------------------------------------------------------ register */

void interp_register_linalg(interp_kernel *table) {
  table[OP_DOT_GENERAL] = k_dot_general;
  table[OP_DOT] = k_dot;
  table[OP_TRIANGULAR_SOLVE] = k_triangular_solve;
  table[OP_CHOLESKY] = k_cholesky;
  table[OP_BATCH_NORM_INFERENCE] = k_batch_norm_inference;
  table[OP_BATCH_NORM_TRAINING] = k_batch_norm_training;
  table[OP_BATCH_NORM_GRAD] = k_batch_norm_grad;
  interp_register_conv(table);
  interp_register_fft(table);
  interp_register_rng(table);
}
