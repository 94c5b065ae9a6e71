/* interp_solver.c — LAPACK-backed custom-call kernels for tridiagonal
 * solves (?gtsv; cuSPARSE / hipSPARSE gtsv2), QR with column pivoting
 * (?geqp3; the {cu,hip}hybrid_geqp3 targets) and applying Q of a QR
 * (?ormqr / ?unmqr; cuSOLVER / hipSOLVER ormqr). See interp_lapack.h.
 *
 * Conventions (jaxlib/cpu/lapack_kernels.cc, jaxlib/gpu/
 * sparse_kernels / solver_kernels_ffi.cc, hybrid_kernels.cc):
 *   ?gtsv    (dl, d, du, b) -> (dl, d, du, x, info): dl[0] and du[n-1] are
 *            outside the matrix (JAX's convention), b is (..., n, nrhs)
 *            column-major; LAPACK's factors overwrite dl / d / du
 *   gtsv2    (dl, d, du, b) -> x; a singular system gives NaN (a GPU gives
 *            inf / NaN there too; jaxlib's CPU path masks with NaN)
 *   ?geqp3   (a, jpvt) -> (a, jpvt, tau): jpvt in and out 1-based (0 in:
 *            a free column), tau (..., min(m, n))
 *   ?ormqr   (a, tau, c) -> c: Q (or Q^H, transpose = true) of the
 *            reflectors in a / tau times c (left = true) or c times it
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include "interp/interp_lapack.h"
#include "interp/interp_util.h"
#include "ir/element.h"
#include "support/arena.h"

#define GTSV(p)                                                                              \
  void p##gtsv_(const int *, const int *, void *, void *, void *, void *, const int *, int *)
GTSV(s); GTSV(d); GTSV(c); GTSV(z);
#define GEQP3_R(p)                                                                            \
  void p##geqp3_(const int *, const int *, void *, const int *, int *, void *, void *,         \
                 const int *, int *)
#define GEQP3_C(p)                                                                            \
  void p##geqp3_(const int *, const int *, void *, const int *, int *, void *, void *,         \
                 const int *, void *, int *)
GEQP3_R(s); GEQP3_R(d); GEQP3_C(c); GEQP3_C(z);
#define ORMQR(p, r)                                                                           \
  void p##r##mqr_(const char *, const char *, const int *, const int *, const int *,           \
                  const void *, const int *, const void *, void *, const int *, void *,        \
                  const int *, int *, size_t, size_t)
ORMQR(s, or); ORMQR(d, or); ORMQR(c, un); ORMQR(z, un);

typedef void (*gtsv_fn)(const int *, const int *, void *, void *, void *, void *, const int *,
                        int *);
static const gtsv_fn gtsv_fns[4] = {sgtsv_, dgtsv_, cgtsv_, zgtsv_};

/* The shared body of gtsv / gtsv2: solves each batch in place; info per
 * batch. dl, d, du: batch x n; b: batch x n x nrhs column-major. */
static hlo_status gtsv_batch(const hlo_op *op, const cc_target *t, tensor *const *in, int *prec,
                             int64_t *batch, int *n, int *nrhs, uint8_t **bufs, int **info) {
  for (int i = 0; i < 4; i++) bufs[i] = NULL;
  *info = NULL;
  if (op->num_operands != 4)
    return interp_error(op, HLO_INVALID_ARGUMENT, "%s: expected operands (dl, d, du, b)",
                        t->name);
  HLO_TRY(lk_matrix_operand(op, t, in[3], prec, batch, n, nrhs));
  hlo_dtype dt = in[3]->type->dtype;
  for (int i = 0; i < 3; i++)
    if (in[i]->type->kind != TYPE_TENSOR || in[i]->type->dtype != dt ||
        in[i]->num_elems != *batch * *n)
      return interp_error(op, HLO_INVALID_ARGUMENT,
                          "%s: dl, d, du must be (..., %d) tensors of b's type", t->name, *n);
  hlo_status st = NULL;
  for (int i = 0; i < 4 && !st; i++) st = lk_to_physical(op, (uint32_t)i, in[i], i == 3, &bufs[i]);
  *info = xcalloc((size_t)*batch + 1, sizeof(int));
  if (!st && !*info) st = interp_error(op, HLO_RESOURCE_EXHAUSTED, "out of memory");
  size_t es = hlo_dtype_size(dt);
  int ldb = *n > 1 ? *n : 1;
  for (int64_t b = 0; b < *batch && !st && *n > 0; b++) {
    size_t off = (size_t)b * *n * es;
    gtsv_fns[*prec](n, nrhs, bufs[0] + off + es, bufs[1] + off, bufs[2] + off,
                    bufs[3] + (size_t)b * *n * *nrhs * es, &ldb, &(*info)[b]);
  }
  return st;
}

hlo_status cc_gtsv(interp *it, const hlo_op *op, tensor *const *in, const hlo_type *const *rt,
                   tensor **out, const cc_target *t) {
  (void)it;
  int prec, n, nrhs, *info;
  int64_t batch;
  uint8_t *bufs[4];
  HLO_TRY(lk_check_results(op, t, 5, 5));
  hlo_status st = gtsv_batch(op, t, in, &prec, &batch, &n, &nrhs, bufs, &info);
  for (uint32_t i = 0; i < 4 && !st; i++) st = lk_from_physical(op, i, rt[i], bufs[i], &out[i]);
  if (!st) st = lk_int_result(op, 4, rt[4], info, batch, &out[4]);
  for (int i = 0; i < 4; i++) free(bufs[i]);
  free(info);
  if (st) iu_release_all(out, op->num_results);
  return st;
}

hlo_status cc_gtsv2(interp *it, const hlo_op *op, tensor *const *in, const hlo_type *const *rt,
                    tensor **out, const cc_target *t) {
  (void)it;
  int prec, n, nrhs, *info;
  int64_t batch;
  uint8_t *bufs[4];
  HLO_TRY(lk_check_results(op, t, 1, 1));
  hlo_status st = gtsv_batch(op, t, in, &prec, &batch, &n, &nrhs, bufs, &info);
  if (!st) {
    /* A singular system: NaN for the whole right-hand side block. */
    hlo_dtype real = lk_real_dtype(prec);
    int64_t per = (int64_t)n * nrhs * (prec >= 2 ? 2 : 1);
    for (int64_t b = 0; b < batch; b++)
      if (info[b] > 0)
        for (int64_t i = 0; i < per; i++) {
          if (real == HLO_F32) ((float *)bufs[3])[b * per + i] = NAN;
          else ((double *)bufs[3])[b * per + i] = NAN;
        }
    st = lk_from_physical(op, 0, rt[0], bufs[3], &out[0]);
  }
  for (int i = 0; i < 4; i++) free(bufs[i]);
  free(info);
  return st;
}

static void call_geqp3(int prec, int m, int n, void *a, int *jpvt, void *tau, void *work,
                       int lwork, void *rwork, int *info) {
  int ld = m > 1 ? m : 1;
  switch (prec) {
    case 0: sgeqp3_(&m, &n, a, &ld, jpvt, tau, work, &lwork, info); break;
    case 1: dgeqp3_(&m, &n, a, &ld, jpvt, tau, work, &lwork, info); break;
    case 2: cgeqp3_(&m, &n, a, &ld, jpvt, tau, work, &lwork, rwork, info); break;
    default: zgeqp3_(&m, &n, a, &ld, jpvt, tau, work, &lwork, rwork, info); break;
  }
}

hlo_status cc_geqp3(interp *it, const hlo_op *op, tensor *const *in, const hlo_type *const *rt,
                    tensor **out, const cc_target *t) {
  (void)it;
  int prec, m, n;
  int64_t batch;
  HLO_TRY(lk_check_results(op, t, 3, 3));
  if (op->num_operands != 2)
    return interp_error(op, HLO_INVALID_ARGUMENT, "%s: expected operands (a, jpvt)", t->name);
  HLO_TRY(lk_matrix_operand(op, t, in[0], &prec, &batch, &m, &n));
  const tensor *jp = in[1];
  if (jp->type->kind != TYPE_TENSOR || !dtype_is_int(jp->type->dtype) ||
      jp->num_elems != batch * n)
    return interp_error(op, HLO_INVALID_ARGUMENT, "%s: jpvt must be (..., %d) integers",
                        t->name, n);
  int k = m < n ? m : n;
  hlo_dtype dt = in[0]->type->dtype;
  size_t es = hlo_dtype_size(dt), mn = (size_t)m * n;
  HLO_TRY(lk_check_result(op, t, 2, rt[2], dt, batch * k));
  uint8_t *a;
  HLO_TRY(lk_to_physical(op, 0, in[0], true, &a));
  int *jpvt = xcalloc((size_t)(batch * n) + 1, sizeof(int));
  uint8_t *tau = xcalloc((size_t)(batch * k) + 1, es), *work = NULL;
  uint8_t *rwork = xcalloc((size_t)(2 * n) + 1, es);
  hlo_status st = NULL;
  if (!jpvt || !tau || !rwork) st = interp_error(op, HLO_RESOURCE_EXHAUSTED, "out of memory");
  for (int64_t i = 0; i < batch * n && !st; i++) {
    int64_t v = elem_get_i64(jp->type->dtype, jp->data, i);
    jpvt[i] = v < 0 || v > n ? 0 : (int)v;
  }
  int lwork = -1, info = 0;
  double wq[2] = {0, 0};
  if (!st && m > 0 && n > 0) {
    call_geqp3(prec, m, n, a, jpvt, tau, wq, -1, rwork, &info);
    st = lk_alloc_work(op, prec, wq, 3 * n + 1, es, &lwork, &work);
  }
  for (int64_t b = 0; b < batch && !st && m > 0 && n > 0; b++) {
    call_geqp3(prec, m, n, a + b * mn * es, jpvt + b * n, tau + (size_t)b * k * es, work, lwork,
               rwork, &info); /* info < 0 only for bad arguments; none out (jaxlib) */
  }
  if (!st) st = lk_from_physical(op, 0, rt[0], a, &out[0]);
  if (!st) st = lk_int_result(op, 1, rt[1], jpvt, batch * n, &out[1]);
  if (!st) st = lk_from_physical(op, 2, rt[2], tau, &out[2]);
  free(a), free(jpvt), free(tau), free(work), free(rwork);
  if (st) iu_release_all(out, op->num_results);
  return st;
}

static void call_ormqr(int prec, char side, char trans, int m, int n, int k, const void *a,
                       int lda, const void *tau, void *c, void *work, int lwork, int *info) {
  int ldc = m > 1 ? m : 1;
  switch (prec) {
    case 0: sormqr_(&side, &trans, &m, &n, &k, a, &lda, tau, c, &ldc, work, &lwork, info, 1, 1);
      break;
    case 1: dormqr_(&side, &trans, &m, &n, &k, a, &lda, tau, c, &ldc, work, &lwork, info, 1, 1);
      break;
    case 2: cunmqr_(&side, &trans, &m, &n, &k, a, &lda, tau, c, &ldc, work, &lwork, info, 1, 1);
      break;
    default: zunmqr_(&side, &trans, &m, &n, &k, a, &lda, tau, c, &ldc, work, &lwork, info, 1, 1);
      break;
  }
}

hlo_status cc_ormqr(interp *it, const hlo_op *op, tensor *const *in, const hlo_type *const *rt,
                    tensor **out, const cc_target *t) {
  (void)it;
  int prec, pa, m, n, ra, ca;
  int64_t batch, batch_a;
  HLO_TRY(lk_check_results(op, t, 1, 1));
  if (op->num_operands != 3)
    return interp_error(op, HLO_INVALID_ARGUMENT, "%s: expected operands (a, tau, c)", t->name);
  HLO_TRY(lk_matrix_operand(op, t, in[2], &prec, &batch, &m, &n));
  HLO_TRY(lk_matrix_operand(op, t, in[0], &pa, &batch_a, &ra, &ca));
  bool left = lk_config_bool(op, "left", true), tr = lk_config_bool(op, "transpose", false);
  const tensor *tau = in[1];
  int k = tau->type->rank >= 1 ? (int)tau->type->dims[tau->type->rank - 1] : -1;
  if (pa != prec || batch_a != batch || ra != (left ? m : n) || k < 0 || k > ra ||
      tau->type->dtype != in[2]->type->dtype || tau->num_elems != batch * k)
    return interp_error(op, HLO_INVALID_ARGUMENT,
                        "%s: a must be (..., %d, k) and tau (..., k) of c's type", t->name,
                        left ? m : n);
  size_t es = hlo_dtype_size(in[2]->type->dtype);
  uint8_t *a = NULL, *tp = NULL, *c = NULL, *work = NULL;
  hlo_status st = lk_to_physical(op, 0, in[0], true, &a);
  if (!st) st = lk_to_physical(op, 1, tau, false, &tp);
  if (!st) st = lk_to_physical(op, 2, in[2], true, &c);
  char side = left ? 'L' : 'R', trans = !tr ? 'N' : prec >= 2 ? 'C' : 'T';
  int lda = ra > 1 ? ra : 1, lwork = -1, info = 0;
  double wq[2] = {0, 0};
  if (!st && m > 0 && n > 0) {
    call_ormqr(prec, side, trans, m, n, k, a, lda, tp, c, wq, -1, &info);
    st = lk_alloc_work(op, prec, wq, (m > n ? m : n) + 1, es, &lwork, &work);
  }
  for (int64_t b = 0; b < batch && !st && m > 0 && n > 0; b++) {
    call_ormqr(prec, side, trans, m, n, k, a + (size_t)b * ra * ca * es, lda,
               tp + (size_t)b * k * es, c + (size_t)b * m * n * es, work, lwork, &info);
  }
  if (!st) st = lk_from_physical(op, 0, rt[0], c, &out[0]);
  free(a), free(tp), free(c), free(work);
  return st;
}
