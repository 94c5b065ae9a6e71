/* gemm.c — the CPU backend's matrix product (backend.gemm, see backend_gemm
 * in backend.h): cblas_sgemm / cblas_dgemm of the system BLAS, one call per
 * batch matrix. Debian's libblas (the reference BLAS, linked with -lblas)
 * exports the cblas_ symbols; its header is not installed, so the two
 * prototypes and the enum values (the CBLAS standard's) are declared here.
 * Which BLAS is fastest here is measured later (issue 7). */
#include <limits.h>
#include <string.h>
#include "backend/cpu/cpu.h"

enum { CBLAS_ROW_MAJOR = 101, CBLAS_NO_TRANS = 111, CBLAS_TRANS = 112 };

void cblas_sgemm(int order, int trans_a, int trans_b, int m, int n, int k, float alpha,
                 const float *a, int lda, const float *b, int ldb, float beta, float *c, int ldc);
void cblas_dgemm(int order, int trans_a, int trans_b, int m, int n, int k, double alpha,
                 const double *a, int lda, const double *b, int ldb, double beta, double *c,
                 int ldc);

static int at_least_1(int64_t v) { return v < 1 ? 1 : (int)v; }

hlo_status cpu_gemm(const backend_gemm *g, const void *a, const void *b, void *c) {
  if (g->dtype != HLO_F32 && g->dtype != HLO_F64)
    return status_new(HLO_UNIMPLEMENTED, "gemm: element type %s is not supported",
                      hlo_dtype_name(g->dtype));
  if (g->batch < 0 || g->m < 0 || g->n < 0 || g->k < 0 || g->m > INT_MAX || g->n > INT_MAX ||
      g->k > INT_MAX)
    return status_new(HLO_INVALID_ARGUMENT, "gemm: sizes %lld x %lld x %lld are past BLAS's int",
                      (long long)g->m, (long long)g->n, (long long)g->k);
  size_t es = g->dtype == HLO_F32 ? 4 : 8;
  size_t sa = (size_t)(g->m * g->k) * es, sb = (size_t)(g->k * g->n) * es,
         sc = (size_t)(g->m * g->n) * es;
  if (g->m == 0 || g->n == 0) return NULL;
  if (g->k == 0) { /* BLAS would be asked for lda >= 1 of an empty matrix: the sum is 0 */
    memset(c, 0, sc * (size_t)g->batch);
    return NULL;
  }
  int m = (int)g->m, n = (int)g->n, k = (int)g->k;
  int lda = at_least_1(g->trans_a ? m : k), ldb = at_least_1(g->trans_b ? k : n);
  int ta = g->trans_a ? CBLAS_TRANS : CBLAS_NO_TRANS, tb = g->trans_b ? CBLAS_TRANS : CBLAS_NO_TRANS;
  for (int64_t i = 0; i < g->batch; i++) {
    const char *pa = (const char *)a + (size_t)i * sa, *pb = (const char *)b + (size_t)i * sb;
    char *pc = (char *)c + (size_t)i * sc;
    if (g->dtype == HLO_F32)
      cblas_sgemm(CBLAS_ROW_MAJOR, ta, tb, m, n, k, 1.0f, (const float *)pa, lda,
                  (const float *)pb, ldb, 0.0f, (float *)pc, n);
    else
      cblas_dgemm(CBLAS_ROW_MAJOR, ta, tb, m, n, k, 1.0, (const double *)pa, lda,
                  (const double *)pb, ldb, 0.0, (double *)pc, n);
  }
  return NULL;
}
