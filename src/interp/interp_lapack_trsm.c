/* interp_lapack_trsm.c — the lapack_?trsm_ffi kernel: a batch of
 * triangular solves op(A) X = alpha B (side 'L') or X op(A) = alpha B
 * (side 'R'), computed here rather than with BLAS ?trsm.
 *
 * Why not the reference BLAS: its ?trsm skips an entry whose right-hand
 * side is exactly zero (`IF (B(K,J).NE.ZERO)`), so a zero on the diagonal
 * of A meets no division and the result stays finite; jaxlib's BLAS
 * (OpenBLAS, through scipy) multiplies every entry by the reciprocal of the
 * diagonal it computed beforehand, so 0 * (1/0) gives NaN and a nonzero
 * entry +-inf. jnp.linalg.inv / solve of a singular matrix give NaN / inf
 * under XLA:CPU for that reason. This loop does what OpenBLAS does:
 *   - alpha == 0 sets the result to zero, alpha != 1 scales b first;
 *   - the diagonal is inverted once: 1 / a for real types, and for complex
 *     OpenBLAS's compinv (ratio = ai / ar or ar / ai, the larger part
 *     dividing; a zero diagonal gives NaN + NaN i);
 *   - substitution in the column ("axpy") order, each update a fused
 *     multiply-add for real types (a plain complex product otherwise).
 * Rounding may still differ from OpenBLAS's blocked kernels in the last
 * bit; NaN / inf patterns of singular systems are those of XLA:CPU.
 *
 * Operands (a, b[, alpha]) and the result x in b's shape follow jaxlib's
 * TriMatrixEquationSolver (jaxlib/cpu/lapack_kernels.cc); options side,
 * uplo, trans_x ('N', 'T', 'C'), diag ('N', 'U') are ui8 characters of
 * mhlo.backend_config. a may be one matrix for the whole batch. */
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include "interp/interp_lapack.h"
#include "interp/interp_util.h"
#include "ir/element.h"
#include "support/arena.h"

/* How to walk A: M, the matrix of the equivalent left-side system M Y = C
 * (Y: columns of X for side 'L', rows of X for side 'R'). */
typedef struct {
  int k;          /* order of A */
  bool tr;        /* M[i][j] = A[j][i] (else A[i][j]) */
  bool conj;      /* conjugate A's entries */
  bool lower;     /* M is lower triangular: forward substitution */
  bool unit;      /* unit diagonal: no division */
  int64_t count;  /* right-hand sides per matrix */
  int64_t base;   /* step between right-hand sides in b */
  int64_t stride; /* step between entries of one right-hand side */
} trsm_plan;

/* Real types: T float or double, FMA its fused multiply-add. */
#define TRSM_REAL(NAME, T, FMA)                                                             \
  static void NAME(const trsm_plan *p, const T *a, T *b, T alpha, T *inv) {                \
    int k = p->k;                                                                           \
    for (int i = 0; i < k; i++) inv[i] = p->unit ? (T)1 : (T)1 / a[(size_t)i * k + i];      \
    for (int64_t j = 0; j < p->count; j++) {                                                \
      T *y = b + j * p->base;                                                               \
      if (alpha == (T)0)                                                                    \
        for (int i = 0; i < k; i++) y[i * p->stride] = 0;                                   \
      else if (alpha != (T)1)                                                               \
        for (int i = 0; i < k; i++) y[i * p->stride] *= alpha;                              \
      for (int s = 0; s < k; s++) {                                                         \
        int c = p->lower ? s : k - 1 - s;                                                   \
        T yc = p->unit ? y[c * p->stride] : y[c * p->stride] * inv[c];                      \
        y[c * p->stride] = yc;                                                              \
        int lo = p->lower ? c + 1 : 0, hi = p->lower ? k : c;                               \
        for (int i = lo; i < hi; i++) {                                                     \
          T m = p->tr ? a[(size_t)i * k + c] : a[(size_t)c * k + i];                        \
          y[i * p->stride] = FMA(-yc, m, y[i * p->stride]);                                 \
        }                                                                                   \
      }                                                                                     \
    }                                                                                       \
  }
TRSM_REAL(trsm_f32, float, fmaf)
TRSM_REAL(trsm_f64, double, fma)

/* Complex types: T float or double, entries interleaved (re, im); FABS its
 * absolute value. */
#define TRSM_COMPLEX(NAME, T, FABS)                                                          \
  static void NAME(const trsm_plan *p, const T *a, T *b, const T *alpha, T *inv) {           \
    int k = p->k;                                                                            \
    for (int i = 0; i < k; i++) {                                                            \
      T ar = a[2 * ((size_t)i * k + i)], ai = a[2 * ((size_t)i * k + i) + 1];                \
      if (p->conj) ai = -ai;                                                                 \
      if (p->unit) {                                                                         \
        inv[2 * i] = 1, inv[2 * i + 1] = 0;                                                  \
      } else if (FABS(ar) >= FABS(ai)) { /* OpenBLAS compinv */                              \
        T ratio = ai / ar, den = (T)1 / (ar * ((T)1 + ratio * ratio));                       \
        inv[2 * i] = den, inv[2 * i + 1] = -ratio * den;                                     \
      } else {                                                                               \
        T ratio = ar / ai, den = (T)1 / (ai * ((T)1 + ratio * ratio));                       \
        inv[2 * i] = ratio * den, inv[2 * i + 1] = -den;                                     \
      }                                                                                      \
    }                                                                                        \
    bool zero = alpha[0] == 0 && alpha[1] == 0, one = alpha[0] == 1 && alpha[1] == 0;        \
    for (int64_t j = 0; j < p->count; j++) {                                                 \
      T *y = b + 2 * j * p->base;                                                            \
      for (int i = 0; i < k && !one; i++) {                                                  \
        T *e = y + 2 * i * p->stride, r = e[0], im = e[1];                                   \
        e[0] = zero ? 0 : r * alpha[0] - im * alpha[1];                                      \
        e[1] = zero ? 0 : r * alpha[1] + im * alpha[0];                                      \
      }                                                                                      \
      for (int s = 0; s < k; s++) {                                                          \
        int c = p->lower ? s : k - 1 - s;                                                    \
        T *e = y + 2 * c * p->stride, yr = e[0], yi = e[1];                                  \
        if (!p->unit) {                                                                      \
          T r = yr * inv[2 * c] - yi * inv[2 * c + 1];                                       \
          yi = yr * inv[2 * c + 1] + yi * inv[2 * c];                                        \
          yr = r;                                                                            \
          e[0] = yr, e[1] = yi;                                                              \
        }                                                                                    \
        int lo = p->lower ? c + 1 : 0, hi = p->lower ? k : c;                                \
        for (int i = lo; i < hi; i++) {                                                      \
          const T *m = a + 2 * (p->tr ? (size_t)i * k + c : (size_t)c * k + i);              \
          T mr = m[0], mi = p->conj ? -m[1] : m[1];                                          \
          T *d = y + 2 * i * p->stride;                                                      \
          d[0] -= yr * mr - yi * mi;                                                         \
          d[1] -= yr * mi + yi * mr;                                                         \
        }                                                                                    \
      }                                                                                      \
    }                                                                                        \
  }
TRSM_COMPLEX(trsm_c64, float, fabsf)
TRSM_COMPLEX(trsm_c128, double, fabs)

hlo_status cc_trsm(interp *it, const hlo_op *op, tensor *const *in, const hlo_type *const *rt,
                   tensor **out, const cc_target *t) {
  (void)it;
  int prec, m, n, pa, ka, kb;
  int64_t batch, batch_a;
  HLO_TRY(lk_check_results(op, t, 1, 1));
  if (op->num_operands < 2 || op->num_operands > 3)
    return interp_error(op, HLO_INVALID_ARGUMENT, "%s: expected operands (a, b[, alpha])",
                        t->name);
  HLO_TRY(lk_matrix_operand(op, t, in[1], &prec, &batch, &m, &n));
  HLO_TRY(lk_matrix_operand(op, t, in[0], &pa, &batch_a, &ka, &kb));
  char side = lk_config_char(op, "side", 'L'), uplo = lk_config_char(op, "uplo", 'L');
  char trans = lk_config_char(op, "trans_x", 'N'), diag = lk_config_char(op, "diag", 'N');
  if ((side != 'L' && side != 'R') || (uplo != 'L' && uplo != 'U') ||
      (trans != 'N' && trans != 'T' && trans != 'C') || (diag != 'N' && diag != 'U'))
    return interp_error(op, HLO_INVALID_ARGUMENT,
                        "%s: options side '%c', uplo '%c', trans_x '%c', diag '%c': expected "
                        "side L/R, uplo L/U, trans_x N/T/C, diag N/U", t->name, side, uplo,
                        trans, diag);
  int k = side == 'L' ? m : n;
  if (pa != prec || ka != k || kb != k || (batch_a != batch && batch_a != 1))
    return interp_error(op, HLO_INVALID_ARGUMENT,
                        "%s: a must be a %dx%d matrix of b's type for side '%c'", t->name, k, k,
                        side);
  if (rt[0]->kind != TYPE_TENSOR || rt[0]->dtype != in[1]->type->dtype ||
      type_num_elements(rt[0]) != in[1]->num_elems)
    return interp_error(op, HLO_INVALID_ARGUMENT, "%s: the result must have b's type", t->name);
  double alpha[2] = {1.0, 0.0};
  float alpha_f[2] = {1.0f, 0.0f};
  if (op->num_operands == 3) {
    if (!in[2] || in[2]->type->kind != TYPE_TENSOR || in[2]->type->dtype != in[1]->type->dtype ||
        in[2]->num_elems != 1)
      return interp_error(op, HLO_INVALID_ARGUMENT, "%s: alpha must be a scalar of b's type",
                          t->name);
    memcpy(prec == 0 || prec == 2 ? (void *)alpha_f : (void *)alpha, in[2]->data,
           hlo_dtype_size(in[2]->type->dtype));
  }
  uint8_t *a, *b;
  HLO_TRY(lk_to_physical(op, 0, in[0], true, &a));
  hlo_status st = lk_to_physical(op, 1, in[1], true, &b);
  if (st) {
    free(a);
    return st;
  }
  size_t es = hlo_dtype_size(in[1]->type->dtype);
  uint8_t *inv = xcalloc((size_t)k + 1, es);
  if (!inv) st = interp_error(op, HLO_RESOURCE_EXHAUSTED, "out of memory");
  /* Y = columns of B (side 'L') or rows of B (side 'R'); M = op(A) or
   * op(A)^T. B is column-major m x n. */
  bool left = side == 'L';
  trsm_plan p = {.k = k,
                 .tr = (trans != 'N') != !left,
                 .conj = trans == 'C',
                 .unit = diag == 'U',
                 .count = left ? n : m,
                 .base = left ? m : 1,
                 .stride = left ? 1 : m};
  p.lower = (uplo == 'L') != p.tr;
  size_t bstep = (size_t)m * n * es, astep = batch_a == 1 ? 0 : (size_t)k * k * es;
  for (int64_t i = 0; i < batch && !st && m > 0 && n > 0; i++) {
    void *ai = a + i * astep, *bi = b + i * bstep;
    switch (prec) {
      case 0: trsm_f32(&p, ai, bi, alpha_f[0], (float *)inv); break;
      case 1: trsm_f64(&p, ai, bi, alpha[0], (double *)inv); break;
      case 2: trsm_c64(&p, ai, bi, alpha_f, (float *)inv); break;
      default: trsm_c128(&p, ai, bi, alpha, (double *)inv); break;
    }
  }
  if (!st) st = lk_from_physical(op, 0, rt[0], b, &out[0]);
  free(a);
  free(b);
  free(inv);
  return st;
}
