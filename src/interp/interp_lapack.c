/* interp_lapack.c — the first LAPACK-backed custom-call kernels: Cholesky
 * (?potrf), LU (?getrf), QR (?geqrf,
 * ?orgqr / ?ungqr), the symmetric / Hermitian eigensolver (?syevd / ?heevd,
 * also serving cuSOLVER's syevd and syevj: the Jacobi variant is computed
 * with the divide-and-conquer routine). The SVDs, ?gesdd included, are in
 * interp_lapack_eig.c.
 *
 * Operand and result conventions are those of jaxlib's FFI handlers
 * (jaxlib/cpu/lapack_kernels.cc, jaxlib/gpu/solver_kernels_ffi.cc): getrf
 * returns (lu, ipiv, info) with 1-based LAPACK pivots (JAX subtracts 1
 * afterwards); potrf returns (factor, info) and leaves the other triangle as
 * it was (JAX masks it); geqrf returns (a, tau[, info, workspace]); orgqr takes
 * (a, tau) and returns (a[, info, workspace]). Character options come as ui8
 * entries of mhlo.backend_config (uplo = 76 'L', side, trans_x, diag).
 * The matrix dimensions must be column-major (what JAX emits); anything
 * else is reported as unimplemented.
 */
#include <stdlib.h>
#include <string.h>
#include "interp/interp_lapack.h"
#include "interp/interp_util.h"
#include "ir/element.h"
#include "support/arena.h"

/* ------------------------------------------- Fortran LAPACK / BLAS ABI */

/* gfortran passes the length of each CHARACTER argument as a hidden size_t
 * after the visible arguments. Array arguments are typed void* here: one
 * declaration per precision, called through a table. */
void spotrf_(const char *, const int *, void *, const int *, int *, size_t);
void dpotrf_(const char *, const int *, void *, const int *, int *, size_t);
void cpotrf_(const char *, const int *, void *, const int *, int *, size_t);
void zpotrf_(const char *, const int *, void *, const int *, int *, size_t);
void sgetrf_(const int *, const int *, void *, const int *, int *, int *);
void dgetrf_(const int *, const int *, void *, const int *, int *, int *);
void cgetrf_(const int *, const int *, void *, const int *, int *, int *);
void zgetrf_(const int *, const int *, void *, const int *, int *, int *);
void sgeqrf_(const int *, const int *, void *, const int *, void *, void *, const int *, int *);
void dgeqrf_(const int *, const int *, void *, const int *, void *, void *, const int *, int *);
void cgeqrf_(const int *, const int *, void *, const int *, void *, void *, const int *, int *);
void zgeqrf_(const int *, const int *, void *, const int *, void *, void *, const int *, int *);
void sorgqr_(const int *, const int *, const int *, void *, const int *, const void *, void *,
             const int *, int *);
void dorgqr_(const int *, const int *, const int *, void *, const int *, const void *, void *,
             const int *, int *);
void cungqr_(const int *, const int *, const int *, void *, const int *, const void *, void *,
             const int *, int *);
void zungqr_(const int *, const int *, const int *, void *, const int *, const void *, void *,
             const int *, int *);

void ssyevd_(const char *, const char *, const int *, void *, const int *, void *, void *,
             const int *, int *, const int *, int *, size_t, size_t);
void dsyevd_(const char *, const char *, const int *, void *, const int *, void *, void *,
             const int *, int *, const int *, int *, size_t, size_t);
void cheevd_(const char *, const char *, const int *, void *, const int *, void *, void *,
             const int *, void *, const int *, int *, const int *, int *, size_t, size_t);
void zheevd_(const char *, const char *, const int *, void *, const int *, void *, void *,
             const int *, void *, const int *, int *, const int *, int *, size_t, size_t);

typedef void (*potrf_fn)(const char *, const int *, void *, const int *, int *, size_t);
typedef void (*getrf_fn)(const int *, const int *, void *, const int *, int *, int *);
typedef void (*geqrf_fn)(const int *, const int *, void *, const int *, void *, void *,
                         const int *, int *);
typedef void (*orgqr_fn)(const int *, const int *, const int *, void *, const int *, const void *,
                         void *, const int *, int *);

static const potrf_fn potrf_fns[4] = {spotrf_, dpotrf_, cpotrf_, zpotrf_};
static const getrf_fn getrf_fns[4] = {sgetrf_, dgetrf_, cgetrf_, zgetrf_};
static const geqrf_fn geqrf_fns[4] = {sgeqrf_, dgeqrf_, cgeqrf_, zgeqrf_};
static const orgqr_fn orgqr_fns[4] = {sorgqr_, dorgqr_, cungqr_, zungqr_};

/* ------------------------------------------------------------ kernels */

hlo_status cc_potrf(interp *it, const hlo_op *op, tensor *const *in,
                           const hlo_type *const *rt, tensor **out, const cc_target *t) {
  int prec, n;
  int64_t batch;
  HLO_TRY(lk_check_results(op, t, 2, 2));
  HLO_TRY(lk_square_operand(op, t, in[0], &prec, &batch, &n));
  char uplo = lk_config_uplo(op);
  uint8_t *a;
  HLO_TRY(lk_to_physical(op, 0, in[0], true, &a));
  int *info = xcalloc((size_t)batch + 1, sizeof *info);
  if (!info) {
    free(a);
    return interp_error(op, HLO_RESOURCE_EXHAUSTED, "out of memory");
  }
  size_t step = (size_t)n * n * hlo_dtype_size(in[0]->type->dtype);
  int lda = n > 1 ? n : 1;
  for (int64_t b = 0; b < batch; b++) potrf_fns[prec](&uplo, &n, a + b * step, &lda, &info[b], 1);
  hlo_status st = lk_from_physical(op, 0, rt[0], a, &out[0]);
  if (!st) st = lk_int_result(op, 1, rt[1], info, batch, &out[1]);
  free(a);
  free(info);
  if (st) iu_release_all(out, op->num_results);
  return st;
}

hlo_status cc_getrf(interp *it, const hlo_op *op, tensor *const *in,
                           const hlo_type *const *rt, tensor **out, const cc_target *t) {
  int prec, m, n;
  int64_t batch;
  HLO_TRY(lk_check_results(op, t, 3, 3));
  HLO_TRY(lk_matrix_operand(op, t, in[0], &prec, &batch, &m, &n));
  int k = m < n ? m : n;
  uint8_t *a;
  HLO_TRY(lk_to_physical(op, 0, in[0], true, &a));
  int *info = xcalloc((size_t)batch + 1, sizeof *info);
  int *ipiv = xcalloc((size_t)(batch * k) + 1, sizeof *ipiv);
  hlo_status st = NULL;
  if (!info || !ipiv) st = interp_error(op, HLO_RESOURCE_EXHAUSTED, "out of memory");
  size_t step = (size_t)m * n * hlo_dtype_size(in[0]->type->dtype);
  int lda = m > 1 ? m : 1;
  for (int64_t b = 0; b < batch && !st; b++)
    getrf_fns[prec](&m, &n, a + b * step, &lda, ipiv + b * k, &info[b]);
  if (!st) st = lk_from_physical(op, 0, rt[0], a, &out[0]);
  if (!st) st = lk_int_result(op, 1, rt[1], ipiv, batch * k, &out[1]);
  if (!st) st = lk_int_result(op, 2, rt[2], info, batch, &out[2]);
  free(a);
  free(info);
  free(ipiv);
  if (st) iu_release_all(out, op->num_results);
  return st;
}

hlo_status cc_geqrf(interp *it, const hlo_op *op, tensor *const *in,
                           const hlo_type *const *rt, tensor **out, const cc_target *t) {
  int prec, m, n;
  int64_t batch;
  HLO_TRY(lk_check_results(op, t, 2, 4));
  HLO_TRY(lk_matrix_operand(op, t, in[0], &prec, &batch, &m, &n));
  int k = m < n ? m : n;
  size_t es = hlo_dtype_size(in[0]->type->dtype);
  uint8_t *a;
  HLO_TRY(lk_to_physical(op, 0, in[0], true, &a));
  int lda = m > 1 ? m : 1, info = 0, lwork = -1;
  double wq[2] = {0, 0};
  uint8_t *tau = xcalloc((size_t)(batch * k) + 1, es), *work = NULL;
  int *infos = xcalloc((size_t)batch + 1, sizeof *infos);
  hlo_status st = NULL;
  if (!tau || !infos) st = interp_error(op, HLO_RESOURCE_EXHAUSTED, "out of memory");
  if (!st && m > 0 && n > 0) {
    geqrf_fns[prec](&m, &n, a, &lda, tau, wq, &lwork, &info);
    st = lk_alloc_work(op, prec, wq, n, es, &lwork, &work);
  }
  size_t step = (size_t)m * n * es;
  for (int64_t b = 0; b < batch && !st && m > 0 && n > 0; b++) {
    geqrf_fns[prec](&m, &n, a + b * step, &lda, tau + b * k * es, work, &lwork, &infos[b]);
  }
  if (!st) st = lk_from_physical(op, 0, rt[0], a, &out[0]);
  if (!st) {
    if (type_num_elements(rt[1]) != batch * k || rt[1]->dtype != in[0]->type->dtype)
      st = interp_error(op, HLO_INVALID_ARGUMENT, "%s: tau result has the wrong type", t->name);
    else
      st = lk_from_physical(op, 1, rt[1], tau, &out[1]);
  }
  /* Optional (info, workspace), as jaxlib's geqrf returns them. */
  if (!st && op->num_results > 2) st = lk_int_result(op, 2, rt[2], infos, batch, &out[2]);
  if (!st) st = lk_zero_results(op, rt, op->num_results > 2 ? 3 : 2, out);
  free(a);
  free(infos);
  free(tau);
  free(work);
  if (st) iu_release_all(out, op->num_results);
  return st;
}

hlo_status cc_orgqr(interp *it, const hlo_op *op, tensor *const *in,
                           const hlo_type *const *rt, tensor **out, const cc_target *t) {
  int prec, m, n;
  int64_t batch;
  HLO_TRY(lk_check_results(op, t, 1, 3));
  if (op->num_operands != 2)
    return interp_error(op, HLO_INVALID_ARGUMENT, "%s: expected operands (a, tau)", t->name);
  HLO_TRY(lk_matrix_operand(op, t, in[0], &prec, &batch, &m, &n));
  const tensor *tau = in[1];
  if (!tau || tau->type->kind != TYPE_TENSOR || tau->type->rank < 1 ||
      tau->type->dtype != in[0]->type->dtype)
    return interp_error(op, HLO_INVALID_ARGUMENT, "%s: tau must be a tensor of a's type",
                        t->name);
  int k = (int)tau->type->dims[tau->type->rank - 1];
  if (k > n || n > m || tau->num_elems != batch * k)
    return interp_error(op, HLO_INVALID_ARGUMENT, "%s: needs m >= n >= k (m=%d n=%d k=%d)",
                        t->name, m, n, k);
  size_t es = hlo_dtype_size(in[0]->type->dtype);
  uint8_t *a, *tp;
  HLO_TRY(lk_to_physical(op, 0, in[0], true, &a));
  hlo_status st = lk_to_physical(op, 1, tau, false, &tp);
  if (st) {
    free(a);
    return st;
  }
  int lda = m > 1 ? m : 1, info = 0, lwork = -1;
  double wq[2] = {0, 0};
  uint8_t *work = NULL;
  int *infos = xcalloc((size_t)batch + 1, sizeof *infos);
  if (!infos) st = interp_error(op, HLO_RESOURCE_EXHAUSTED, "out of memory");
  if (!st && m > 0 && n > 0) {
    orgqr_fns[prec](&m, &n, &k, a, &lda, tp, wq, &lwork, &info);
    st = lk_alloc_work(op, prec, wq, n, es, &lwork, &work);
  }
  size_t step = (size_t)m * n * es;
  for (int64_t b = 0; b < batch && !st && m > 0 && n > 0; b++) {
    orgqr_fns[prec](&m, &n, &k, a + b * step, &lda, tp + b * k * es, work, &lwork, &infos[b]);
  }
  if (!st) st = lk_from_physical(op, 0, rt[0], a, &out[0]);
  if (!st && op->num_results > 1) st = lk_int_result(op, 1, rt[1], infos, batch, &out[1]);
  if (!st) st = lk_zero_results(op, rt, op->num_results > 1 ? 2 : 1, out);
  free(a);
  free(infos);
  free(tp);
  free(work);
  if (st) iu_release_all(out, op->num_results);
  return st;
}

/* Symmetric / Hermitian eigendecomposition (?syevd / ?heevd): operand a;
 * results (eigenvectors in a's shape, eigenvalues (..., n) real, info
 * (...)[, workspaces]). Options: mode 'V'/'N' (or compute vectors), uplo /
 * lower. */
hlo_status cc_syevd(interp *it, const hlo_op *op, tensor *const *in,
                           const hlo_type *const *rt, tensor **out, const cc_target *t) {
  int prec, n;
  int64_t batch;
  HLO_TRY(lk_check_results(op, t, 3, 6));
  HLO_TRY(lk_square_operand(op, t, in[0], &prec, &batch, &n));
  char uplo = lk_config_uplo(op), jobz = lk_config_char(op, "mode", 'V');
  hlo_dtype real = prec == 0 || prec == 2 ? HLO_F32 : HLO_F64;
  size_t es = hlo_dtype_size(in[0]->type->dtype), rs = hlo_dtype_size(real);
  if (rt[1]->dtype != real || type_num_elements(rt[1]) != batch * n)
    return interp_error(op, HLO_INVALID_ARGUMENT, "%s: eigenvalues must be %s (..., %d)",
                        t->name, hlo_dtype_name(real), n);
  uint8_t *a;
  HLO_TRY(lk_to_physical(op, 0, in[0], true, &a));
  int lda = n > 1 ? n : 1, lwork = -1, lrwork = -1, liwork = -1, iq = 0, q_info = 0;
  double wq[2] = {0, 0}, rq[2] = {0, 0};
  uint8_t *w = xcalloc((size_t)(batch * n) + 1, rs), *work = NULL, *rwork = NULL;
  int *iwork = NULL, *info = xcalloc((size_t)batch + 1, sizeof *info);
  hlo_status st = NULL;
  if (!w || !info) st = interp_error(op, HLO_RESOURCE_EXHAUSTED, "out of memory");
  bool cplx = prec >= 2;
  if (!st && n > 0) {
    if (prec == 0) ssyevd_(&jobz, &uplo, &n, a, &lda, w, wq, &lwork, &iq, &liwork, &q_info, 1, 1);
    else if (prec == 1)
      dsyevd_(&jobz, &uplo, &n, a, &lda, w, wq, &lwork, &iq, &liwork, &q_info, 1, 1);
    else if (prec == 2)
      cheevd_(&jobz, &uplo, &n, a, &lda, w, wq, &lwork, rq, &lrwork, &iq, &liwork, &q_info, 1, 1);
    else
      zheevd_(&jobz, &uplo, &n, a, &lda, w, wq, &lwork, rq, &lrwork, &iq, &liwork, &q_info, 1, 1);
    double lw = lk_workspace_size(prec, wq), lr = lk_workspace_size(prec == 2 ? 0 : 1, rq);
    lwork = (int)(lw > 1 ? lw : 1) + 2 * n * n + 6 * n + 1;
    lrwork = (int)(lr > 1 ? lr : 1) + 2 * n * n + 5 * n + 1;
    liwork = (iq > 1 ? iq : 1) + 5 * n + 3;
    work = xcalloc((size_t)lwork, es);
    rwork = cplx ? xcalloc((size_t)lrwork, rs) : NULL;
    iwork = xcalloc((size_t)liwork, sizeof *iwork);
    if (!work || (cplx && !rwork) || !iwork)
      st = interp_error(op, HLO_RESOURCE_EXHAUSTED, "out of memory");
  }
  size_t step = (size_t)n * n * es;
  for (int64_t b = 0; b < batch && !st && n > 0; b++) {
    uint8_t *ab = a + b * step, *wb = w + (size_t)b * n * rs;
    if (prec == 0)
      ssyevd_(&jobz, &uplo, &n, ab, &lda, wb, work, &lwork, iwork, &liwork, &info[b], 1, 1);
    else if (prec == 1)
      dsyevd_(&jobz, &uplo, &n, ab, &lda, wb, work, &lwork, iwork, &liwork, &info[b], 1, 1);
    else if (prec == 2)
      cheevd_(&jobz, &uplo, &n, ab, &lda, wb, work, &lwork, rwork, &lrwork, iwork, &liwork,
              &info[b], 1, 1);
    else
      zheevd_(&jobz, &uplo, &n, ab, &lda, wb, work, &lwork, rwork, &lrwork, iwork, &liwork,
              &info[b], 1, 1);
  }
  if (!st) st = lk_from_physical(op, 0, rt[0], a, &out[0]);
  if (!st) st = lk_from_physical(op, 1, rt[1], w, &out[1]);
  if (!st) st = lk_int_result(op, 2, rt[2], info, batch, &out[2]);
  if (!st) st = lk_zero_results(op, rt, 3, out);
  free(a);
  free(w);
  free(work);
  free(rwork);
  free(iwork);
  free(info);
  if (st) iu_release_all(out, op->num_results);
  return st;
}
