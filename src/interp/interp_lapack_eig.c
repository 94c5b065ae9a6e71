/* interp_lapack_eig.c — LAPACK-backed custom-call kernels for the SVD
 * (?gesvd, ?gesdd, and cuSOLVER / hipSOLVER gesvd, gesdd, gesvdj, gesvdp), the
 * nonsymmetric eigensolver (?geev, also the {cu,hip}hybrid_eig_* targets
 * whose GPU builds call LAPACK or MAGMA), the Schur decomposition (?gees),
 * the Hessenberg reduction (?gehrd) and the tridiagonal reduction (?sytrd /
 * ?hetrd, also cuSOLVER sytrd). See interp_lapack.h for the conventions.
 *
 * Jacobi and polar SVDs (gesvdj, gesvdp) are computed with the
 * divide-and-conquer routine ?gesdd: the decomposition is the same up to
 * the signs (phases) of singular vector pairs, which no caller may rely on.
 * Operands and results follow jaxlib's FFI handlers (jaxlib/cpu/
 * lapack_kernels.cc, jaxlib/gpu/solver_kernels_ffi.cc, hybrid_kernels.cc):
 *   ?gesvd, ?gesdd  a -> (a, s, u, vt, info); mode 'A' / 'S' / 'N'
 *   gpu gesvd     a -> (a, s, u, vt, info); compute_uv, full_matrices,
 *                 transposed: a row-major operand (m < n) is decomposed as
 *                 its buffer, the column-major n x m transpose, so u and vt
 *                 trade places (JAX swaps them back)
 *   gpu gesvdj    a -> (a, s, u, v, info): V itself (JAX transposes it)
 *   ?geev / hybrid  real a -> (wr, wi, vl, vr, info), complex a -> (w, vl,
 *                 vr, info); eigenvectors always complex (conjugate pairs
 *                 of real LAPACK's packed form unpacked); options
 *                 compute_left / compute_right ('N' / 'V') or left / right
 *   ?gees         real a -> (t, vs, wr, wi, sdim, info), complex -> (t, vs,
 *                 w, sdim, info); mode 'V' / 'N', sort 'N' only
 *   ?gehrd        a -> (a, tau (n-1), info); low, high (ilo, ihi)
 *   ?sytrd        a -> (a, d (n) real, e (n-1) real, tau (n-1), info)
 */
#include <stdlib.h>
#include <string.h>
#include "interp/interp_lapack.h"
#include "interp/interp_util.h"
#include "ir/element.h"
#include "support/arena.h"

/* Fortran LAPACK (gfortran: hidden CHARACTER lengths at the end). */
#define GESVD_R(p)                                                                          \
  void p##gesvd_(const char *, const char *, const int *, const int *, void *, const int *, \
                 void *, void *, const int *, void *, const int *, void *, const int *,     \
                 int *, size_t, size_t)
#define GESVD_C(p)                                                                          \
  void p##gesvd_(const char *, const char *, const int *, const int *, void *, const int *, \
                 void *, void *, const int *, void *, const int *, void *, const int *,     \
                 void *, int *, size_t, size_t)
GESVD_R(s); GESVD_R(d); GESVD_C(c); GESVD_C(z);
#define GESDD_R(p)                                                                          \
  void p##gesdd_(const char *, const int *, const int *, void *, const int *, void *, void *, \
                 const int *, void *, const int *, void *, const int *, int *, int *, size_t)
#define GESDD_C(p)                                                                          \
  void p##gesdd_(const char *, const int *, const int *, void *, const int *, void *, void *, \
                 const int *, void *, const int *, void *, const int *, void *, int *, int *, \
                 size_t)
GESDD_R(s); GESDD_R(d); GESDD_C(c); GESDD_C(z);
#define GEEV_R(p)                                                                            \
  void p##geev_(const char *, const char *, const int *, void *, const int *, void *, void *, \
                void *, const int *, void *, const int *, void *, const int *, int *, size_t, \
                size_t)
#define GEEV_C(p)                                                                            \
  void p##geev_(const char *, const char *, const int *, void *, const int *, void *, void *, \
                const int *, void *, const int *, void *, const int *, void *, int *, size_t, \
                size_t)
GEEV_R(s); GEEV_R(d); GEEV_C(c); GEEV_C(z);
#define GEES_R(p)                                                                            \
  void p##gees_(const char *, const char *, void *, const int *, void *, const int *, int *, \
                void *, void *, void *, const int *, void *, const int *, int *, int *,       \
                size_t, size_t)
#define GEES_C(p)                                                                            \
  void p##gees_(const char *, const char *, void *, const int *, void *, const int *, int *, \
                void *, void *, const int *, void *, const int *, void *, int *, int *,       \
                size_t, size_t)
GEES_R(s); GEES_R(d); GEES_C(c); GEES_C(z);
#define GEHRD(p)                                                                           \
  void p##gehrd_(const int *, const int *, const int *, void *, const int *, void *, void *, \
                 const int *, int *)
GEHRD(s); GEHRD(d); GEHRD(c); GEHRD(z);
#define SYTRD(p, r)                                                                          \
  void p##r##trd_(const char *, const int *, void *, const int *, void *, void *, void *,    \
                  void *, const int *, int *, size_t)
SYTRD(s, sy); SYTRD(d, sy); SYTRD(c, he); SYTRD(z, he);

/* One SVD of the column-major m x n matrix a (destroyed): ?gesvd when
 * `qr`, else ?gesdd; jobz 'A', 'S' or 'N' (for gesvd both jobu and jobvt).
 * work / lwork from a query (lwork -1), rwork and iwork sized by the
 * caller (svd_rwork). */
static void call_svd(int prec, bool qr, char jobz, int m, int n, void *a, void *s, void *u,
                     int ldu, void *vt, int ldvt, void *work, int lwork, void *rwork, int *iwork,
                     int *info) {
  int lda = m > 1 ? m : 1;
  if (qr) {
    switch (prec) {
      case 0: sgesvd_(&jobz, &jobz, &m, &n, a, &lda, s, u, &ldu, vt, &ldvt, work, &lwork, info,
                      1, 1); break;
      case 1: dgesvd_(&jobz, &jobz, &m, &n, a, &lda, s, u, &ldu, vt, &ldvt, work, &lwork, info,
                      1, 1); break;
      case 2: cgesvd_(&jobz, &jobz, &m, &n, a, &lda, s, u, &ldu, vt, &ldvt, work, &lwork, rwork,
                      info, 1, 1); break;
      default: zgesvd_(&jobz, &jobz, &m, &n, a, &lda, s, u, &ldu, vt, &ldvt, work, &lwork, rwork,
                       info, 1, 1); break;
    }
    return;
  }
  switch (prec) {
    case 0: sgesdd_(&jobz, &m, &n, a, &lda, s, u, &ldu, vt, &ldvt, work, &lwork, iwork, info, 1);
      break;
    case 1: dgesdd_(&jobz, &m, &n, a, &lda, s, u, &ldu, vt, &ldvt, work, &lwork, iwork, info, 1);
      break;
    case 2: cgesdd_(&jobz, &m, &n, a, &lda, s, u, &ldu, vt, &ldvt, work, &lwork, rwork, iwork,
                    info, 1); break;
    default: zgesdd_(&jobz, &m, &n, a, &lda, s, u, &ldu, vt, &ldvt, work, &lwork, rwork, iwork,
                     info, 1); break;
  }
}

/* The SVD of each of `batch` column-major m x n matrices in `a`: singular
 * values to s (batch x min(m, n), real), u (batch x urows x ucols) and vt
 * (batch x vrows x n), column-major; info per matrix. u / vt sizes must fit
 * jobz ('A': m x m, n x n; 'S': m x k, k x n; 'N': not written). */
static hlo_status svd_batch(const hlo_op *op, const cc_target *t, int prec, bool qr, char jobz,
                            int m, int n, int64_t batch, uint8_t *a, uint8_t *s, uint8_t *u,
                            int urows, int ucols, uint8_t *vt, int vrows, int *info) {
  int k = m < n ? m : n;
  if (m == 0 || n == 0) return NULL;
  size_t es = hlo_dtype_size(prec == 0 ? HLO_F32 : prec == 1 ? HLO_F64 : prec == 2 ? HLO_C64
                                                                                  : HLO_C128);
  size_t rs = hlo_dtype_size(lk_real_dtype(prec));
  int64_t mx = m > n ? m : n;
  size_t lrwork = (size_t)(5 * (int64_t)k * k + 7 * k + 2 * mx * k + 2 * (int64_t)k * k + 5 * k + 1);
  uint8_t *rwork = prec >= 2 ? xcalloc(lrwork, rs) : NULL, *work = NULL;
  int *iwork = xcalloc((size_t)(8 * k) + 1, sizeof *iwork);
  hlo_status st = NULL;
  if (!iwork || (prec >= 2 && !rwork)) st = interp_error(op, HLO_RESOURCE_EXHAUSTED, "out of memory");
  int ldu = urows > 1 ? urows : 1, ldvt = vrows > 1 ? vrows : 1, lwork = -1, q = 0;
  double wq[2] = {0, 0};
  if (!st) {
    call_svd(prec, qr, jobz, m, n, a, s, u, ldu, vt, ldvt, wq, -1, rwork, iwork, &q);
    st = lk_alloc_work_over(op, prec, wq, 1, es, &lwork, &work);
  }
  size_t usz = (size_t)urows * ucols, vsz = (size_t)vrows * n;
  size_t reals = (size_t)m * n * (prec >= 2 ? 2 : 1);
  for (int64_t b = 0; b < batch && !st; b++) {
    /* LAPACK's ?gesdd reports a NaN in A as info = -4 (JAX then gives NaN results), but an
     * infinity sends it, and ?gesvd, into an endless QR iteration (XLA:CPU hangs on it too):
     * treat every non-finite matrix as ?gesdd treats a NaN. */
    if (lk_has_non_finite(prec, a + (size_t)b * m * n * es, reals)) {
      info[b] = -4;
      continue;
    }
    call_svd(prec, qr, jobz, m, n, a + (size_t)b * m * n * es, s + (size_t)b * k * rs,
             u + b * usz * es, ldu, vt + b * vsz * es, ldvt, work, lwork, rwork, iwork, &info[b]);
  }
  free(rwork);
  free(work);
  free(iwork);
  return st;
}

/* The shared body of the SVD kernels: operand 0 in buffer `a` (column-major
 * m x n batches); results (a, s, u, vt, info[, zeroed workspaces]); with
 * `as_v`, result 3 gets V = vt^H (n x vrows) instead of vt. */
static hlo_status svd_common(const hlo_op *op, const hlo_type *const *rt, tensor **out,
                             const cc_target *t, const tensor *x, uint8_t *a, int prec, bool qr,
                             char jobz, int m, int n, int64_t batch, bool as_v) {
  int k = m < n ? m : n;
  int urows = m, ucols = jobz == 'A' ? m : k, vrows = jobz == 'A' ? n : k;
  if (jobz == 'N') ucols = vrows = 0;
  hlo_dtype real = lk_real_dtype(prec);
  size_t es = hlo_dtype_size(x->type->dtype), rs = hlo_dtype_size(real);
  HLO_TRY(lk_check_result(op, t, 1, rt[1], real, batch * k));
  int64_t usz = (int64_t)urows * ucols, vsz = (int64_t)vrows * n;
  if (jobz != 'N') {
    HLO_TRY(lk_check_result(op, t, 2, rt[2], x->type->dtype, batch * usz));
    HLO_TRY(lk_check_result(op, t, 3, rt[3], x->type->dtype, batch * vsz));
  }
  uint8_t *s = xcalloc((size_t)(batch * k) + 1, rs);
  uint8_t *u = xcalloc((size_t)(batch * usz) + 1, es), *vt = xcalloc((size_t)(batch * vsz) + 1, es);
  int *info = xcalloc((size_t)batch + 1, sizeof *info);
  hlo_status st = NULL;
  if (!s || !u || !vt || !info) st = interp_error(op, HLO_RESOURCE_EXHAUSTED, "out of memory");
  if (!st) st = svd_batch(op, t, prec, qr, jobz, m, n, batch, a, s, u, urows, ucols, vt, vrows, info);
  if (!st && as_v && jobz != 'N') {
    /* V (n x vrows, column-major) = conj(vt)^T, vt being vrows x n. */
    uint8_t *v = xcalloc((size_t)(batch * vsz) + 1, es);
    if (!v) st = interp_error(op, HLO_RESOURCE_EXHAUSTED, "out of memory");
    for (int64_t b = 0; b < batch && !st; b++)
      for (int i = 0; i < n; i++)
        for (int j = 0; j < vrows; j++) {
          uint8_t *dst = v + ((size_t)(b * vsz) + (size_t)j * n + i) * es;
          memcpy(dst, vt + ((size_t)(b * vsz) + (size_t)i * vrows + j) * es, es);
          if (prec == 2) ((float *)dst)[1] = -((float *)dst)[1];
          if (prec == 3) ((double *)dst)[1] = -((double *)dst)[1];
        }
    if (!st) {
      free(vt);
      vt = v;
    }
  }
  if (!st) st = lk_from_physical(op, 0, rt[0], a, &out[0]);
  if (!st) st = lk_from_physical(op, 1, rt[1], s, &out[1]);
  if (!st) st = jobz == 'N' ? tensor_create(rt[2], &op->loc, &out[2])
                            : lk_from_physical(op, 2, rt[2], u, &out[2]);
  if (!st) st = jobz == 'N' ? tensor_create(rt[3], &op->loc, &out[3])
                            : lk_from_physical(op, 3, rt[3], vt, &out[3]);
  if (!st) st = lk_int_result(op, 4, rt[4], info, batch, &out[4]);
  if (!st) st = lk_zero_results(op, rt, 5, out);
  free(s);
  free(u);
  free(vt);
  free(info);
  if (st) iu_release_all(out, op->num_results);
  return st;
}

/* The cpu targets lapack_?gesvd_ffi (`qr`: ?gesvd) and lapack_?gesdd_ffi
 * (?gesdd): a -> (a, s, u, vt, info[, workspaces]); option mode 'A' (full
 * u, vt), 'S' (reduced) or 'N' (values only; u and vt are zeros). */
static hlo_status cpu_svd(const hlo_op *op, tensor *const *in, const hlo_type *const *rt,
                          tensor **out, const cc_target *t, bool qr) {
  int prec, m, n;
  int64_t batch;
  HLO_TRY(lk_check_results(op, t, 5, 8));
  HLO_TRY(lk_matrix_operand(op, t, in[0], &prec, &batch, &m, &n));
  char jobz = lk_config_char(op, "mode", 'S');
  if (jobz != 'A' && jobz != 'S' && jobz != 'N')
    return interp_error(op, HLO_INVALID_ARGUMENT, "%s: mode must be 'A', 'S' or 'N'", t->name);
  uint8_t *a;
  HLO_TRY(lk_to_physical(op, 0, in[0], true, &a));
  hlo_status st = svd_common(op, rt, out, t, in[0], a, prec, qr, jobz, m, n, batch, false);
  free(a);
  return st;
}

hlo_status cc_gesvd(interp *it, const hlo_op *op, tensor *const *in, const hlo_type *const *rt,
                    tensor **out, const cc_target *t) {
  (void)it;
  return cpu_svd(op, in, rt, out, t, true);
}

hlo_status cc_gesdd(interp *it, const hlo_op *op, tensor *const *in, const hlo_type *const *rt,
                    tensor **out, const cc_target *t) {
  (void)it;
  return cpu_svd(op, in, rt, out, t, false);
}

/* The GPU SVD targets (options compute_uv, full_matrices: both default
 * true). gesvd / gesdd (not `jacobi`): a row-major operand is decomposed as
 * its buffer, the column-major n x m transpose (what the GPU kernel does),
 * so its u is the transpose of vt's slot. gesvdj / gesvdp (`jacobi`): ?gesdd
 * of the column-major matrix, slot 3 gets V itself. */
static hlo_status gpu_svd(const hlo_op *op, tensor *const *in, const hlo_type *const *rt,
                          tensor **out, const cc_target *t, bool jacobi) {
  int prec, m, n;
  int64_t batch;
  HLO_TRY(lk_check_results(op, t, 5, 5));
  HLO_TRY(lk_matrix_operand(op, t, in[0], &prec, &batch, &m, &n));
  char jobz = !lk_config_bool(op, "compute_uv", true)          ? 'N'
              : lk_config_bool(op, "full_matrices", true) ? 'A'
                                                          : 'S';
  uint8_t *a;
  bool tr = false;
  if (jacobi) HLO_TRY(lk_to_physical(op, 0, in[0], true, &a));
  else HLO_TRY(lk_to_physical_any(op, 0, in[0], &a, &tr));
  bool qr = !jacobi && strstr(t->name, "gesdd") == NULL;
  hlo_status st = svd_common(op, rt, out, t, in[0], a, prec, qr, jobz, tr ? n : m, tr ? m : n,
                             batch, jacobi);
  free(a);
  return st;
}

hlo_status cc_gpu_gesvd(interp *it, const hlo_op *op, tensor *const *in,
                        const hlo_type *const *rt, tensor **out, const cc_target *t) {
  (void)it;
  return gpu_svd(op, in, rt, out, t, false);
}

hlo_status cc_gpu_gesvdj(interp *it, const hlo_op *op, tensor *const *in,
                         const hlo_type *const *rt, tensor **out, const cc_target *t) {
  (void)it;
  return gpu_svd(op, in, rt, out, t, true);
}

/* A 'N' / 'V' option given as a character (`ckey`) or a bool (`bkey`). */
static char job_option(const hlo_op *op, const char *ckey, const char *bkey, char dflt) {
  int64_t v;
  if (lk_config_int(op, ckey, &v)) return v == 'V' ? 'V' : 'N';
  if (lk_config_int(op, bkey, &v)) return v ? 'V' : 'N';
  return dflt;
}

/* Real LAPACK's packed eigenvectors (n x n, column-major; a conjugate pair
 * j, j+1 (wi[j] > 0) stored as re, im columns) to complex columns. */
static void unpack_real_vectors(int prec, int n, const uint8_t *v, const uint8_t *wi,
                                uint8_t *out) {
  for (int j = 0; j < n; j++) {
    double im = prec == 0 ? ((const float *)wi)[j] : ((const double *)wi)[j];
    bool pair = im > 0 && j + 1 < n;
    for (int i = 0; i < n; i++) {
      double re_ = prec == 0 ? ((const float *)v)[(size_t)j * n + i]
                             : ((const double *)v)[(size_t)j * n + i];
      double im_ = !pair ? 0.0
                   : prec == 0 ? ((const float *)v)[(size_t)(j + 1) * n + i]
                               : ((const double *)v)[(size_t)(j + 1) * n + i];
      size_t o0 = (size_t)j * n + i, o1 = (size_t)(j + 1) * n + i;
      if (prec == 0) {
        float *c = (float *)out;
        c[2 * o0] = (float)re_, c[2 * o0 + 1] = (float)im_;
        if (pair) c[2 * o1] = (float)re_, c[2 * o1 + 1] = (float)-im_;
      } else {
        double *c = (double *)out;
        c[2 * o0] = re_, c[2 * o0 + 1] = im_;
        if (pair) c[2 * o1] = re_, c[2 * o1 + 1] = -im_;
      }
    }
    if (pair) j++;
  }
}

static void call_geev(int prec, char jl, char jr, int n, void *a, void *wr, void *wi, void *vl,
                      void *vr, void *work, int lwork, void *rwork, int *info) {
  int ld = n > 1 ? n : 1;
  switch (prec) {
    case 0: sgeev_(&jl, &jr, &n, a, &ld, wr, wi, vl, &ld, vr, &ld, work, &lwork, info, 1, 1);
      break;
    case 1: dgeev_(&jl, &jr, &n, a, &ld, wr, wi, vl, &ld, vr, &ld, work, &lwork, info, 1, 1);
      break;
    case 2: cgeev_(&jl, &jr, &n, a, &ld, wr, vl, &ld, vr, &ld, work, &lwork, rwork, info, 1, 1);
      break;
    default: zgeev_(&jl, &jr, &n, a, &ld, wr, vl, &ld, vr, &ld, work, &lwork, rwork, info, 1, 1);
      break;
  }
}

hlo_status cc_geev(interp *it, const hlo_op *op, tensor *const *in, const hlo_type *const *rt,
                   tensor **out, const cc_target *t) {
  (void)it;
  int prec, n;
  int64_t batch;
  HLO_TRY(lk_square_operand(op, t, in[0], &prec, &batch, &n));
  bool cplx = prec >= 2;
  HLO_TRY(lk_check_results(op, t, cplx ? 4 : 5, cplx ? 4 : 5));
  char jl = job_option(op, "compute_left", "left", 'N');
  char jr = job_option(op, "compute_right", "right", 'V');
  hlo_dtype dt = in[0]->type->dtype, cdt = prec == 0 || prec == 2 ? HLO_C64 : HLO_C128;
  size_t es = hlo_dtype_size(dt), cs = hlo_dtype_size(cdt);
  uint32_t nw = cplx ? 1 : 2;
  for (uint32_t i = 0; i < nw; i++)
    HLO_TRY(lk_check_result(op, t, i, rt[i], dt, batch * n));
  HLO_TRY(lk_check_result(op, t, nw, rt[nw], cdt, batch * n * n));
  HLO_TRY(lk_check_result(op, t, nw + 1, rt[nw + 1], cdt, batch * n * n));
  uint8_t *a;
  HLO_TRY(lk_to_physical(op, 0, in[0], true, &a));
  size_t nn = (size_t)n * n;
  uint8_t *w0 = xcalloc((size_t)(batch * n) + 1, es), *w1 = xcalloc((size_t)(batch * n) + 1, es);
  uint8_t *vl = xcalloc((size_t)batch * nn + 1, cs), *vr = xcalloc((size_t)batch * nn + 1, cs);
  uint8_t *tl = xcalloc(nn + 1, es), *tr = xcalloc(nn + 1, es);
  uint8_t *rwork = xcalloc((size_t)(2 * n) + 1, es), *work = NULL;
  int *info = xcalloc((size_t)batch + 1, sizeof *info);
  hlo_status st = NULL;
  if (!w0 || !w1 || !vl || !vr || !tl || !tr || !rwork || !info)
    st = interp_error(op, HLO_RESOURCE_EXHAUSTED, "out of memory");
  int lwork = -1, q = 0;
  double wq[2] = {0, 0};
  if (!st && n > 0) {
    call_geev(prec, jl, jr, n, a, w0, w1, tl, tr, wq, -1, rwork, &q);
    st = lk_alloc_work_over(op, prec, wq, 4 * n, es, &lwork, &work);
  }
  for (int64_t b = 0; b < batch && !st && n > 0; b++) {
    uint8_t *wrb = w0 + (size_t)b * n * es, *wib = w1 + (size_t)b * n * es;
    /* Complex: the eigenvectors go straight to the results. */
    uint8_t *lo = cplx ? vl + b * nn * cs : tl, *ro = cplx ? vr + b * nn * cs : tr;
    call_geev(prec, jl, jr, n, a + b * nn * es, wrb, wib, lo, ro, work, lwork, rwork, &info[b]);
    if (!st && !cplx && info[b] == 0) {
      if (jl == 'V') unpack_real_vectors(prec, n, tl, wib, vl + b * nn * cs);
      if (jr == 'V') unpack_real_vectors(prec, n, tr, wib, vr + b * nn * cs);
    }
  }
  if (!st) st = lk_from_physical(op, 0, rt[0], w0, &out[0]);
  if (!st && !cplx) st = lk_from_physical(op, 1, rt[1], w1, &out[1]);
  if (!st) st = lk_from_physical(op, nw, rt[nw], vl, &out[nw]);
  if (!st) st = lk_from_physical(op, nw + 1, rt[nw + 1], vr, &out[nw + 1]);
  if (!st) st = lk_int_result(op, nw + 2, rt[nw + 2], info, batch, &out[nw + 2]);
  free(a), free(w0), free(w1), free(vl), free(vr), free(tl), free(tr), free(rwork), free(work);
  free(info);
  if (st) iu_release_all(out, op->num_results);
  return st;
}

static void call_gees(int prec, char jobvs, int n, void *a, int *sdim, void *wr, void *wi,
                      void *vs, void *work, int lwork, void *rwork, int *bwork, int *info) {
  int ld = n > 1 ? n : 1;
  char sort = 'N';
  switch (prec) {
    case 0: sgees_(&jobvs, &sort, NULL, &n, a, &ld, sdim, wr, wi, vs, &ld, work, &lwork, bwork,
                   info, 1, 1); break;
    case 1: dgees_(&jobvs, &sort, NULL, &n, a, &ld, sdim, wr, wi, vs, &ld, work, &lwork, bwork,
                   info, 1, 1); break;
    case 2: cgees_(&jobvs, &sort, NULL, &n, a, &ld, sdim, wr, vs, &ld, work, &lwork, rwork, bwork,
                   info, 1, 1); break;
    default: zgees_(&jobvs, &sort, NULL, &n, a, &ld, sdim, wr, vs, &ld, work, &lwork, rwork,
                    bwork, info, 1, 1); break;
  }
}

hlo_status cc_gees(interp *it, const hlo_op *op, tensor *const *in, const hlo_type *const *rt,
                   tensor **out, const cc_target *t) {
  (void)it;
  int prec, n;
  int64_t batch;
  HLO_TRY(lk_square_operand(op, t, in[0], &prec, &batch, &n));
  bool cplx = prec >= 2;
  HLO_TRY(lk_check_results(op, t, cplx ? 5 : 6, cplx ? 5 : 6));
  if (lk_config_char(op, "sort", 'N') != 'N')
    return interp_error(op, HLO_UNIMPLEMENTED, "%s: sorting eigenvalues is not supported",
                        t->name);
  char jobvs = lk_config_char(op, "mode", 'V') == 'V' ? 'V' : 'N';
  hlo_dtype dt = in[0]->type->dtype;
  size_t es = hlo_dtype_size(dt), nn = (size_t)n * n;
  uint32_t nw = cplx ? 1 : 2;
  HLO_TRY(lk_check_result(op, t, 1, rt[1], dt, batch * (int64_t)nn));
  for (uint32_t i = 0; i < nw; i++)
    HLO_TRY(lk_check_result(op, t, 2 + i, rt[2 + i], dt, batch * n));
  uint8_t *a;
  HLO_TRY(lk_to_physical(op, 0, in[0], true, &a));
  uint8_t *vs = xcalloc((size_t)batch * nn + 1, es), *w0 = xcalloc((size_t)(batch * n) + 1, es);
  uint8_t *w1 = xcalloc((size_t)(batch * n) + 1, es), *rwork = xcalloc((size_t)n + 1, es);
  uint8_t *work = NULL;
  int *bwork = xcalloc((size_t)n + 1, sizeof(int)), *info = xcalloc((size_t)batch + 1, sizeof(int));
  int *sdim = xcalloc((size_t)batch + 1, sizeof(int));
  hlo_status st = NULL;
  if (!vs || !w0 || !w1 || !rwork || !bwork || !info || !sdim)
    st = interp_error(op, HLO_RESOURCE_EXHAUSTED, "out of memory");
  int lwork = -1, q = 0, qs = 0;
  double wq[2] = {0, 0};
  if (!st && n > 0) {
    call_gees(prec, jobvs, n, a, &qs, w0, w1, vs, wq, -1, rwork, bwork, &q);
    st = lk_alloc_work_over(op, prec, wq, 3 * n, es, &lwork, &work);
  }
  for (int64_t b = 0; b < batch && !st && n > 0; b++) {
    call_gees(prec, jobvs, n, a + b * nn * es, &sdim[b], w0 + (size_t)b * n * es,
              w1 + (size_t)b * n * es, vs + b * nn * es, work, lwork, rwork, bwork, &info[b]);
  }
  if (!st) st = lk_from_physical(op, 0, rt[0], a, &out[0]);
  if (!st) st = lk_from_physical(op, 1, rt[1], vs, &out[1]);
  if (!st) st = lk_from_physical(op, 2, rt[2], w0, &out[2]);
  if (!st && !cplx) st = lk_from_physical(op, 3, rt[3], w1, &out[3]);
  if (!st) st = lk_int_result(op, nw + 2, rt[nw + 2], sdim, batch, &out[nw + 2]);
  if (!st) st = lk_int_result(op, nw + 3, rt[nw + 3], info, batch, &out[nw + 3]);
  free(a), free(vs), free(w0), free(w1), free(rwork), free(work), free(bwork), free(info);
  free(sdim);
  if (st) iu_release_all(out, op->num_results);
  return st;
}

static void call_gehrd(int prec, int n, int ilo, int ihi, void *a, void *tau, void *work,
                       int lwork, int *info) {
  int ld = n > 1 ? n : 1;
  switch (prec) {
    case 0: sgehrd_(&n, &ilo, &ihi, a, &ld, tau, work, &lwork, info); break;
    case 1: dgehrd_(&n, &ilo, &ihi, a, &ld, tau, work, &lwork, info); break;
    case 2: cgehrd_(&n, &ilo, &ihi, a, &ld, tau, work, &lwork, info); break;
    default: zgehrd_(&n, &ilo, &ihi, a, &ld, tau, work, &lwork, info); break;
  }
}

hlo_status cc_gehrd(interp *it, const hlo_op *op, tensor *const *in, const hlo_type *const *rt,
                    tensor **out, const cc_target *t) {
  (void)it;
  int prec, n;
  int64_t batch;
  HLO_TRY(lk_check_results(op, t, 3, 3));
  HLO_TRY(lk_square_operand(op, t, in[0], &prec, &batch, &n));
  int64_t lo = 1, hi = n;
  lk_config_int(op, "low", &lo);
  lk_config_int(op, "high", &hi);
  if (n > 0 && (lo < 1 || hi > n || lo > hi))
    return interp_error(op, HLO_INVALID_ARGUMENT, "%s: needs 1 <= low <= high <= n", t->name);
  int nt = n > 1 ? n - 1 : 0;
  hlo_dtype dt = in[0]->type->dtype;
  size_t es = hlo_dtype_size(dt), nn = (size_t)n * n;
  HLO_TRY(lk_check_result(op, t, 1, rt[1], dt, batch * nt));
  uint8_t *a;
  HLO_TRY(lk_to_physical(op, 0, in[0], true, &a));
  uint8_t *tau = xcalloc((size_t)(batch * n) + 1, es), *work = NULL, *tt = NULL;
  int *info = xcalloc((size_t)batch + 1, sizeof(int));
  hlo_status st = NULL;
  if (!tau || !info) st = interp_error(op, HLO_RESOURCE_EXHAUSTED, "out of memory");
  int lwork = -1, q = 0;
  double wq[2] = {0, 0};
  if (!st && n > 0) {
    call_gehrd(prec, n, (int)lo, (int)hi, a, tau, wq, -1, &q);
    st = lk_alloc_work(op, prec, wq, n, es, &lwork, &work);
  }
  /* LAPACK's tau has n - 1 entries per matrix: pack them. */
  for (int64_t b = 0; b < batch && !st && n > 0; b++) {
    call_gehrd(prec, n, (int)lo, (int)hi, a + b * nn * es, tau + (size_t)b * nt * es, work, lwork,
               &info[b]);
  }
  if (!st) st = lk_from_physical(op, 0, rt[0], a, &out[0]);
  if (!st) st = lk_from_physical(op, 1, rt[1], tau, &out[1]);
  if (!st) st = lk_int_result(op, 2, rt[2], info, batch, &out[2]);
  free(a), free(tau), free(work), free(info), free(tt);
  if (st) iu_release_all(out, op->num_results);
  return st;
}

static void call_sytrd(int prec, char uplo, int n, void *a, void *d, void *e, void *tau,
                       void *work, int lwork, int *info) {
  int ld = n > 1 ? n : 1;
  switch (prec) {
    case 0: ssytrd_(&uplo, &n, a, &ld, d, e, tau, work, &lwork, info, 1); break;
    case 1: dsytrd_(&uplo, &n, a, &ld, d, e, tau, work, &lwork, info, 1); break;
    case 2: chetrd_(&uplo, &n, a, &ld, d, e, tau, work, &lwork, info, 1); break;
    default: zhetrd_(&uplo, &n, a, &ld, d, e, tau, work, &lwork, info, 1); break;
  }
}

hlo_status cc_sytrd(interp *it, const hlo_op *op, tensor *const *in, const hlo_type *const *rt,
                    tensor **out, const cc_target *t) {
  (void)it;
  int prec, n;
  int64_t batch;
  HLO_TRY(lk_check_results(op, t, 5, 5));
  HLO_TRY(lk_square_operand(op, t, in[0], &prec, &batch, &n));
  char uplo = lk_config_uplo(op);
  int ne = n > 1 ? n - 1 : 0;
  hlo_dtype dt = in[0]->type->dtype, real = lk_real_dtype(prec);
  size_t es = hlo_dtype_size(dt), rs = hlo_dtype_size(real), nn = (size_t)n * n;
  HLO_TRY(lk_check_result(op, t, 1, rt[1], real, batch * n));
  HLO_TRY(lk_check_result(op, t, 2, rt[2], real, batch * ne));
  HLO_TRY(lk_check_result(op, t, 3, rt[3], dt, batch * ne));
  uint8_t *a;
  HLO_TRY(lk_to_physical(op, 0, in[0], true, &a));
  uint8_t *d = xcalloc((size_t)(batch * n) + 1, rs), *e = xcalloc((size_t)(batch * n) + 1, rs);
  uint8_t *tau = xcalloc((size_t)(batch * n) + 1, es), *work = NULL;
  int *info = xcalloc((size_t)batch + 1, sizeof(int));
  hlo_status st = NULL;
  if (!d || !e || !tau || !info) st = interp_error(op, HLO_RESOURCE_EXHAUSTED, "out of memory");
  int lwork = -1, q = 0;
  double wq[2] = {0, 0};
  if (!st && n > 0) {
    call_sytrd(prec, uplo, n, a, d, e, tau, wq, -1, &q);
    st = lk_alloc_work(op, prec, wq, n, es, &lwork, &work);
  }
  for (int64_t b = 0; b < batch && !st && n > 0; b++) {
    call_sytrd(prec, uplo, n, a + b * nn * es, d + (size_t)b * n * rs, e + (size_t)b * ne * rs,
               tau + (size_t)b * ne * es, work, lwork, &info[b]);
  }
  if (!st) st = lk_from_physical(op, 0, rt[0], a, &out[0]);
  if (!st) st = lk_from_physical(op, 1, rt[1], d, &out[1]);
  if (!st) st = lk_from_physical(op, 2, rt[2], e, &out[2]);
  if (!st) st = lk_from_physical(op, 3, rt[3], tau, &out[3]);
  if (!st) st = lk_int_result(op, 4, rt[4], info, batch, &out[4]);
  free(a), free(d), free(e), free(tau), free(work), free(info);
  if (st) iu_release_all(out, op->num_results);
  return st;
}
