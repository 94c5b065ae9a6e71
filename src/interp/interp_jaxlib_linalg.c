/* interp_jaxlib_linalg.c — custom-call kernels whose algorithm is jaxlib's
 * own rather than one LAPACK routine: the perturbed tridiagonal solve, the
 * rank-1 Cholesky update, and cuBLAS's symmetric rank-k update (BLAS ?syrk
 * on the CPU). See interp_lapack.h for the shared conventions.
 *
 *   tridiagonal_solve_perturbed_ffi (cpu), cu_ / hip_tridiagonal_solve_perturbed
 *       (dl, d, du, b) -> x: lax.linalg.tridiagonal_solve(perturb_singular=
 *       True). jaxlib/tridiagonal_solve_perturbed.h
 *       (SolveWithGaussianEliminationWithPivotingAndPerturbSingular, after
 *       LAPACK's ?lagtf / ?lagts): a partially pivoted LU with the forward
 *       solve fused in, then back substitution where a pivot below 1 whose
 *       reciprocal or quotient would overflow is moved away from zero by
 *       eps * max|U| (doubling), or the row scaled up (MaybePerturbPivot).
 *       b and x are column-major per batch (the layouts JAX gives them).
 *   cu_ / hip_cholesky_update_ffi   (r, w) -> (r', w'): lax.linalg.
 *       cholesky_update. jaxlib/gpu/linalg_kernels.cu.cc
 *       (CholeskyUpdateKernel): for each row k of the upper-triangular r
 *       (as the row-major buffer holds it), a Givens rotation (c, s) from
 *       (r[k][k], w[k]) (drotg: scaled by max(|a|, |b|), c = a / h,
 *       s = -b / h) is applied to (r[k][k..n), w[k..n)); f32 and f64 only.
 *   cusolver_ / hipsolver_syrk_ffi  (a, c, alpha, beta) -> c': lax.linalg.
 *       symmetric_product. jaxlib/gpu/solver_kernels_ffi.cc (SyrkImpl): the
 *       row-major buffers are read column-major as cuBLAS does, so with
 *       transpose = false ?syrk('U', 'T', n = rows, k = cols, lda = k) writes
 *       alpha a a^T + beta c into the lower triangle of the row-major result
 *       and leaves the strict upper triangle as c had it (JAX documents only
 *       the lower triangle); transpose = true gives alpha a^T a + beta c.
 *       Complex types use ?syrk too (a a^T, not a a^H), as jaxlib does.
 */
#include <complex.h>
#include <float.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include "interp/interp_lapack.h"
#include "interp/interp_util.h"
#include "ir/element.h"
#include "support/arena.h"

/* ------------------------------------------------ perturbed tridiagonal */

/* MaybePerturbPivot and the solve, for one scalar type T with real type R
 * (ABS: |x| of a T, RABS: of an R, RE: real part, EPS / RMIN / RMAX: numeric_limits<R>). */
#define TDS_DEFINE(SFX, T, R, ABS, RABS, RE, EPS, RMIN, RMAX)                                 \
  static void perturb_pivot_##SFX(R perturb, T *pivot, T *row, int k) {                       \
    const R one = 1, tiny = RMIN, small = one / RMAX;                                         \
    const R safemin = small < tiny ? tiny : small * (one + EPS);                              \
    const R bignum = one / safemin;                                                           \
    R abs_pivot = ABS(*pivot);                                                                \
    if (abs_pivot >= one) return;                                                             \
    perturb = RABS(perturb) > safemin ? RABS(perturb) : safemin;                              \
    perturb = copysign(perturb, RE(*pivot));                                                  \
    R max_factor = 0;                                                                         \
    for (int j = 0; j < k; j++)                                                               \
      if (ABS(row[j]) > max_factor) max_factor = ABS(row[j]);                                 \
    bool stop = false;                                                                        \
    while (abs_pivot < one && !stop) {                                                        \
      if (abs_pivot < safemin) {                                                              \
        if (abs_pivot == 0 || max_factor * safemin > abs_pivot) {                             \
          *pivot += perturb;                                                                  \
          perturb *= 2;                                                                       \
        } else {                                                                              \
          *pivot *= bignum;                                                                   \
          for (int j = 0; j < k; j++) row[j] *= bignum;                                       \
          stop = true;                                                                        \
        }                                                                                     \
      } else if (max_factor > abs_pivot * bignum) {                                           \
        *pivot += perturb;                                                                    \
        perturb *= 2;                                                                         \
      } else {                                                                                \
        stop = true;                                                                          \
      }                                                                                       \
      abs_pivot = ABS(*pivot);                                                                \
    }                                                                                         \
  }                                                                                           \
  /* One system: dl, d, du (n), rhs / x (n x k column-major), u (3n), row (k). */             \
  static void tds_##SFX(int n, int k, const T *dl, const T *d, const T *du, const T *rhs,     \
                        T *x, T *u, T *row) {                                                 \
    if (n == 0) return;                                                                       \
    if (n == 1) {                                                                             \
      T p = d[0];                                                                             \
      for (int j = 0; j < k; j++) row[j] = rhs[j * n];                                        \
      perturb_pivot_##SFX(EPS * ABS(p), &p, row, k);                                          \
      for (int j = 0; j < k; j++) x[j * n] = row[j] / p;                                      \
      return;                                                                                 \
    }                                                                                         \
    for (int i = 0; i < 3 * n; i++) u[i] = 0;                                                 \
    T *u0 = u, *u1 = u + n, *u2 = u + 2 * n;                                                  \
    u0[0] = d[0];                                                                             \
    u1[0] = du[0];                                                                            \
    R max_abs_u = ABS(u0[0]) > ABS(u1[0]) ? ABS(u0[0]) : ABS(u1[0]);                          \
    R scale1 = ABS(u0[0]) + ABS(u1[0]);                                                       \
    for (int j = 0; j < k; j++) x[j * n] = rhs[j * n];                                        \
    for (int i = 0; i < n - 1; i++) {                                                         \
      u0[i + 1] = d[i + 1];                                                                   \
      R scale2 = ABS(dl[i + 1]) + ABS(u0[i + 1]);                                             \
      if (i < n - 2) scale2 += ABS(du[i + 1]);                                                \
      if (dl[i + 1] == 0) {                                                                   \
        scale1 = scale2;                                                                      \
        u1[i + 1] = du[i + 1];                                                                \
        u2[i] = 0;                                                                            \
        for (int j = 0; j < k; j++) x[i + 1 + j * n] = rhs[i + 1 + j * n];                    \
      } else {                                                                                \
        const R piv1 = u0[i] == 0 ? (R)0 : ABS(u0[i]) / scale1;                               \
        const R piv2 = ABS(dl[i + 1]) / scale2;                                               \
        if (piv2 <= piv1) {                                                                   \
          scale1 = scale2;                                                                    \
          const T factor = dl[i + 1] / u0[i];                                                 \
          u0[i + 1] -= factor * u1[i];                                                        \
          u1[i + 1] = du[i + 1];                                                              \
          u2[i] = 0;                                                                          \
          for (int j = 0; j < k; j++)                                                         \
            x[i + 1 + j * n] = rhs[i + 1 + j * n] - factor * x[i + j * n];                    \
        } else {                                                                              \
          const T factor = u0[i] / dl[i + 1];                                                 \
          const T utmp = u1[i];                                                               \
          u0[i] = dl[i + 1];                                                                  \
          u0[i + 1] = utmp - factor * d[i + 1];                                               \
          u1[i] = d[i + 1];                                                                   \
          if (i < n - 2) {                                                                    \
            u2[i] = du[i + 1];                                                                \
            u1[i + 1] = -factor * du[i + 1];                                                  \
          }                                                                                   \
          for (int j = 0; j < k; j++) {                                                       \
            x[i + 1 + j * n] = x[i + j * n] - factor * rhs[i + 1 + j * n];                    \
            x[i + j * n] = rhs[i + 1 + j * n];                                                \
          }                                                                                   \
          scale1 = ABS(u0[i + 1]) + ABS(u1[i + 1]);                                           \
        }                                                                                     \
      }                                                                                       \
      if (i < n - 2) {                                                                        \
        if (ABS(u0[i]) > max_abs_u) max_abs_u = ABS(u0[i]);                                   \
        if (ABS(u1[i]) > max_abs_u) max_abs_u = ABS(u1[i]);                                   \
        if (ABS(u2[i]) > max_abs_u) max_abs_u = ABS(u2[i]);                                   \
      }                                                                                       \
    }                                                                                         \
    if (ABS(u0[n - 1]) > max_abs_u) max_abs_u = ABS(u0[n - 1]);                               \
    const R perturb = EPS * max_abs_u;                                                        \
    for (int i = n - 1; i >= 0; i--) {                                                        \
      T p = u0[i];                                                                            \
      for (int j = 0; j < k; j++) {                                                           \
        T v = x[i + j * n];                                                                   \
        if (i + 1 < n) v -= u1[i] * x[i + 1 + j * n];                                         \
        if (i + 2 < n) v -= u2[i] * x[i + 2 + j * n];                                         \
        row[j] = v;                                                                           \
      }                                                                                       \
      perturb_pivot_##SFX(copysign(perturb, RE(p)), &p, row, k);                              \
      const T inv = (T)1 / p;                                                                 \
      for (int j = 0; j < k; j++) x[i + j * n] = row[j] * inv;                                \
    }                                                                                         \
  }

#define ID_RE(x) (x)
TDS_DEFINE(s, float, float, fabsf, fabsf, ID_RE, FLT_EPSILON, FLT_MIN, FLT_MAX)
TDS_DEFINE(d, double, double, fabs, fabs, ID_RE, DBL_EPSILON, DBL_MIN, DBL_MAX)
TDS_DEFINE(c, float complex, float, cabsf, fabsf, crealf, FLT_EPSILON, FLT_MIN, FLT_MAX)
TDS_DEFINE(z, double complex, double, cabs, fabs, creal, DBL_EPSILON, DBL_MIN, DBL_MAX)

hlo_status cc_tridiagonal_solve_perturbed(interp *it, const hlo_op *op, tensor *const *in,
                                          const hlo_type *const *rt, tensor **out,
                                          const cc_target *t) {
  (void)it;
  int prec, n, k;
  int64_t batch;
  HLO_TRY(lk_check_results(op, t, 1, 1));
  if (op->num_operands != 4)
    return interp_error(op, HLO_INVALID_ARGUMENT, "%s: expected operands (dl, d, du, b)",
                        t->name);
  HLO_TRY(lk_matrix_operand(op, t, in[3], &prec, &batch, &n, &k));
  hlo_dtype dt = in[3]->type->dtype;
  for (int i = 0; i < 3; i++)
    if (in[i]->type->kind != TYPE_TENSOR || in[i]->type->dtype != dt ||
        in[i]->type->rank != in[3]->type->rank - 1 || in[i]->num_elems != batch * n)
      return interp_error(op, HLO_INVALID_ARGUMENT,
                          "%s: dl, d, du must be (..., %d) tensors of b's type and batch",
                          t->name, n);
  HLO_TRY(lk_check_result(op, t, 0, rt[0], dt, batch * n * k));
  if (!type_same_shape(rt[0], in[3]->type))
    return interp_error(op, HLO_INVALID_ARGUMENT, "%s: x must have b's shape", t->name);
  size_t es = hlo_dtype_size(dt);
  uint8_t *bufs[4] = {NULL, NULL, NULL, NULL};
  hlo_status st = NULL;
  for (uint32_t i = 0; i < 4 && !st; i++) st = lk_to_physical(op, i, in[i], i == 3, &bufs[i]);
  uint8_t *x = st ? NULL : xmalloc((size_t)batch * n * k * es + 1);
  uint8_t *work = st ? NULL : xmalloc(((size_t)3 * n + k) * es + 1);
  if (!st && (!x || !work)) st = interp_error(op, HLO_RESOURCE_EXHAUSTED, "out of memory");
  for (int64_t b = 0; b < batch && !st; b++) {
    size_t dv = (size_t)b * n * es, mv = (size_t)b * n * k * es;
    void *u = work, *row = work + (size_t)3 * n * es;
    switch (prec) {
      case 0: tds_s(n, k, (void *)(bufs[0] + dv), (void *)(bufs[1] + dv), (void *)(bufs[2] + dv),
                    (void *)(bufs[3] + mv), (void *)(x + mv), u, row); break;
      case 1: tds_d(n, k, (void *)(bufs[0] + dv), (void *)(bufs[1] + dv), (void *)(bufs[2] + dv),
                    (void *)(bufs[3] + mv), (void *)(x + mv), u, row); break;
      case 2: tds_c(n, k, (void *)(bufs[0] + dv), (void *)(bufs[1] + dv), (void *)(bufs[2] + dv),
                    (void *)(bufs[3] + mv), (void *)(x + mv), u, row); break;
      default: tds_z(n, k, (void *)(bufs[0] + dv), (void *)(bufs[1] + dv), (void *)(bufs[2] + dv),
                     (void *)(bufs[3] + mv), (void *)(x + mv), u, row); break;
    }
  }
  if (!st) st = lk_from_physical(op, 0, rt[0], x, &out[0]);
  for (int i = 0; i < 4; i++) free(bufs[i]);
  free(x);
  free(work);
  return st;
}

/* --------------------------------------------------- Cholesky update */

#define CHOL_UPDATE_DEFINE(T, SQRT, FABS)                                                      \
  static void chol_update_##T(int n, T *r, T *w) {                                             \
    for (int k = 0; k < n; k++) {                                                              \
      T a = r[k * n + k], b = w[k], c = 1, s = 0;                                              \
      if (b != 0) {                                                                            \
        T den = FABS(a) > FABS(b) ? FABS(a) : FABS(b);                                         \
        a /= den;                                                                              \
        b /= den;                                                                              \
        T rh = 1 / SQRT(a * a + b * b);                                                        \
        c = a * rh;                                                                            \
        s = -(b * rh);                                                                         \
      }                                                                                        \
      for (int i = k; i < n; i++) {                                                            \
        T ri = c * r[k * n + i] - s * w[i];                                                    \
        w[i] = s * r[k * n + i] + c * w[i];                                                    \
        r[k * n + i] = ri;                                                                     \
      }                                                                                        \
    }                                                                                          \
  }
CHOL_UPDATE_DEFINE(float, sqrtf, fabsf)
CHOL_UPDATE_DEFINE(double, sqrt, fabs)

hlo_status cc_cholesky_update(interp *it, const hlo_op *op, tensor *const *in,
                              const hlo_type *const *rt, tensor **out, const cc_target *t) {
  (void)it;
  int prec, m, n;
  int64_t batch;
  HLO_TRY(lk_check_results(op, t, 2, 2));
  if (op->num_operands != 2)
    return interp_error(op, HLO_INVALID_ARGUMENT, "%s: expected operands (r, w)", t->name);
  HLO_TRY(lk_matrix_operand(op, t, in[0], &prec, &batch, &m, &n));
  hlo_dtype dt = in[0]->type->dtype;
  if (prec > 1)
    return interp_error(op, HLO_INVALID_ARGUMENT, "%s: the element type must be f32 or f64",
                        t->name);
  if (m != n)
    return interp_error(op, HLO_INVALID_ARGUMENT, "%s: r must be square", t->name);
  if (in[1]->type->kind != TYPE_TENSOR || in[1]->type->dtype != dt ||
      in[1]->num_elems != batch * n)
    return interp_error(op, HLO_INVALID_ARGUMENT, "%s: w must be (..., %d) of r's type",
                        t->name, n);
  HLO_TRY(lk_check_result(op, t, 0, rt[0], dt, batch * n * n));
  HLO_TRY(lk_check_result(op, t, 1, rt[1], dt, batch * n));
  uint8_t *r = NULL, *w = NULL;
  hlo_status st = lk_to_physical(op, 0, in[0], false, &r);
  if (!st) st = lk_to_physical(op, 1, in[1], false, &w);
  for (int64_t b = 0; b < batch && !st; b++) {
    if (prec == 0) chol_update_float(n, (float *)(void *)r + b * n * n, (float *)(void *)w + b * n);
    else chol_update_double(n, (double *)(void *)r + b * n * n, (double *)(void *)w + b * n);
  }
  if (!st) st = lk_from_physical(op, 0, rt[0], r, &out[0]);
  if (!st) {
    st = lk_from_physical(op, 1, rt[1], w, &out[1]);
    if (st) iu_release_all(out, 1);
  }
  free(r);
  free(w);
  return st;
}

/* ------------------------------------------------------------- syrk */

#define SYRK(p)                                                                               \
  void p##syrk_(const char *, const char *, const int *, const int *, const void *,           \
                const void *, const int *, const void *, void *, const int *, size_t, size_t)
SYRK(s); SYRK(d); SYRK(c); SYRK(z);
typedef void (*syrk_fn)(const char *, const char *, const int *, const int *, const void *,
                        const void *, const int *, const void *, void *, const int *, size_t,
                        size_t);
static const syrk_fn syrk_fns[4] = {ssyrk_, dsyrk_, csyrk_, zsyrk_};

hlo_status cc_syrk(interp *it, const hlo_op *op, tensor *const *in, const hlo_type *const *rt,
                   tensor **out, const cc_target *t) {
  (void)it;
  int prec, rows, cols;
  int64_t batch;
  HLO_TRY(lk_check_results(op, t, 1, 1));
  if (op->num_operands != 4)
    return interp_error(op, HLO_INVALID_ARGUMENT, "%s: expected operands (a, c, alpha, beta)",
                        t->name);
  HLO_TRY(lk_matrix_operand(op, t, in[0], &prec, &batch, &rows, &cols));
  hlo_dtype dt = in[0]->type->dtype;
  bool transpose = lk_config_bool(op, "transpose", false);
  int n = transpose ? cols : rows, k = transpose ? rows : cols;
  if (in[1]->type->kind != TYPE_TENSOR || in[1]->type->dtype != dt ||
      in[1]->type->rank != in[0]->type->rank || in[1]->num_elems != batch * n * n ||
      in[1]->type->dims[in[1]->type->rank - 1] != n)
    return interp_error(op, HLO_INVALID_ARGUMENT, "%s: c must be (..., %d, %d) of a's type",
                        t->name, n, n);
  for (int i = 2; i < 4; i++)
    if (in[i]->type->kind != TYPE_TENSOR || in[i]->type->dtype != dt || in[i]->num_elems != 1)
      return interp_error(op, HLO_INVALID_ARGUMENT,
                          "%s: alpha and beta must be scalars of a's type", t->name);
  HLO_TRY(lk_check_result(op, t, 0, rt[0], dt, batch * n * n));
  uint8_t *a = NULL, *c = NULL;
  hlo_status st = lk_to_physical(op, 0, in[0], false, &a);
  if (!st) st = lk_to_physical(op, 1, in[1], false, &c);
  size_t es = hlo_dtype_size(dt);
  int lda = (transpose ? n : k) > 1 ? (transpose ? n : k) : 1, ldc = n > 1 ? n : 1;
  for (int64_t b = 0; b < batch && !st && n > 0; b++)
    syrk_fns[prec]("U", transpose ? "N" : "T", &n, &k, in[2]->data, a + (size_t)b * n * k * es,
                   &lda, in[3]->data, c + (size_t)b * n * n * es, &ldc, 1, 1);
  if (!st) st = lk_from_physical(op, 0, rt[0], c, &out[0]);
  free(a);
  free(c);
  return st;
}
