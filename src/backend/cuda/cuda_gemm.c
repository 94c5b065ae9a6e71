/* cuda_gemm.c — the CUDA backend's gemm slot (backend_gemm in backend.h)
 * through cuBLASLt.
 *
 * Row-major to column-major: a row-major matrix of r rows and row stride ld
 * is, to a column-major library, its transpose with leading dimension ld.
 * So C = op(A) op(B) (row-major, m x n) is computed as the column-major
 * C^T (n x m, ld = ldc) = op(B)^T op(A)^T: cuBLASLt's "A" operand is our B
 * (stored n x k column-major when not trans_b: no transpose; k x n when
 * trans_b: CUBLAS_OP_T) and its "B" operand our A (k x m, or m x k
 * transposed when trans_a). Batches are strided batches (BATCH_COUNT and
 * STRIDED_BATCH_OFFSET on every layout).
 *
 * Types (A and B -> C): F32 -> F32 in CUBLAS_COMPUTE_32F (full f32), or
 * CUBLAS_COMPUTE_32F_FAST_TF32 (operands rounded to TF32 on tensor cores,
 * f32 sums) where the dot allows it (backend_gemm.allow_tf32: precision
 * DEFAULT, as XLA does on GPUs) unless HLO_CUDA_TF32=0; F64 -> F64 in
 * CUBLAS_COMPUTE_64F; BF16 -> BF16 or F32 and F16 -> F16 or F32 in
 * CUBLAS_COMPUTE_32F (f32 accumulation, f32 alpha and beta).
 *
 * One cuBLASLt handle and one 32 MiB workspace (device memory), made on the
 * first gemm. A plan (the matmul and layout descriptors and the algorithm
 * cuBLASLt's heuristic picks first) is made once per (types, shape,
 * layout, operand alignment) and kept in a small table (a mutex guards
 * it; plans are never freed, so a plan found stays valid without the
 * lock); when the table is full, a plan is made and destroyed around the
 * call. The alignment of each operand (the largest power of two up to 256
 * dividing its address and its batch stride in bytes) is given to the
 * heuristic (cuBLASLt assumes 256 bytes otherwise) and is part of the key.
 *
 * Asynchronous: the matmul is enqueued on the backend's stream; errors
 * cuBLASLt reports at the call are HLO_INTERNAL. */
#include <limits.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "backend/cuda/cuda_api.h"
#include "support/status.h"

#define CUDA_GEMM_WORKSPACE (32u << 20)
#define CUDA_GEMM_PLANS 256

typedef struct gemm_key {
  int32_t dtype, c_dtype;
  int32_t trans_a, trans_b;
  int64_t batch, m, n, k;
  int64_t lda, ldb, ldc, sa, sb, sc; /* resolved (never 0) */
  uint32_t align_a, align_b, align_c;
  uint32_t tf32;                     /* CUBLAS_COMPUTE_32F_FAST_TF32 */
} gemm_key;

/* Whether f32 products that allow it (backend_gemm.allow_tf32) use TF32:
 * yes, as XLA on GPUs, unless the environment variable HLO_CUDA_TF32 is
 * "0" (full f32 everywhere), read once. Measured on the H200: every model
 * within 5e-3 of XLA's outputs with TF32, within 1e-4 with HLO_CUDA_TF32=0
 * (tests/gpu/run.sh runs them both ways; the conformance corpus runs in
 * full f32, the spec's semantics). */
bool cuda_tf32_enabled(void) {
  static int on = -1;
  int v = __atomic_load_n(&on, __ATOMIC_RELAXED);
  if (v < 0) {
    const char *e = getenv("HLO_CUDA_TF32");
    v = !(e && !strcmp(e, "0"));
    __atomic_store_n(&on, v, __ATOMIC_RELAXED);
  }
  return v;
}

typedef struct gemm_plan {
  gemm_key key;
  cublasLtMatmulDesc_t desc;
  cublasLtMatrixLayout_t la, lb, lc; /* cuBLASLt's A (our B), B (our A), C and D */
  cublasLtMatmulAlgo_t algo;
  size_t workspace;
} gemm_plan;

static struct {
  pthread_once_t once;
  hlo_status_code code;
  char message[512];
  cublasLtHandle_t handle;
  void *workspace;
  size_t workspace_bytes;
  pthread_mutex_t lock;
  gemm_plan plans[CUDA_GEMM_PLANS];
  uint32_t num_plans;
} g_lt = {.once = PTHREAD_ONCE_INIT, .lock = PTHREAD_MUTEX_INITIALIZER};

static hlo_status lt_error(const cublaslt_api *lt, cublasStatus_t r, const char *what) {
  const char *name = lt ? lt->cublasLtGetStatusName(r) : NULL;
  return status_new(HLO_INTERNAL, "cuBLASLt: %s: %s (%d)", what, name ? name : "status", r);
}

/* The handle and the workspace (called with the context current). */
static void lt_start(void) {
  const cuda_device_state *s = cuda_state();
  cublasStatus_t r = s->lt->cublasLtCreate(&g_lt.handle);
  if (r != CUBLAS_STATUS_SUCCESS) {
    const char *name = s->lt->cublasLtGetStatusName(r);
    snprintf(g_lt.message, sizeof g_lt.message, "cuBLASLt: cublasLtCreate: %s (%d)",
             name ? name : "status", r);
    g_lt.code = HLO_UNAVAILABLE;
    return;
  }
  CUdeviceptr p = 0;
  if (s->cu->cuMemAlloc_v2(&p, CUDA_GEMM_WORKSPACE) == CUDA_SUCCESS) {
    g_lt.workspace = (void *)(uintptr_t)p;
    g_lt.workspace_bytes = CUDA_GEMM_WORKSPACE;
  } /* else no workspace: fewer algorithms, still correct */
  g_lt.code = HLO_OK;
}

static void plan_destroy(const cublaslt_api *lt, gemm_plan *p) {
  if (p->desc) lt->cublasLtMatmulDescDestroy(p->desc);
  if (p->la) lt->cublasLtMatrixLayoutDestroy(p->la);
  if (p->lb) lt->cublasLtMatrixLayoutDestroy(p->lb);
  if (p->lc) lt->cublasLtMatrixLayoutDestroy(p->lc);
  memset(p, 0, sizeof *p);
}

static int lt_type(hlo_dtype t) {
  switch (t) {
  case HLO_F32: return CUDA_R_32F;
  case HLO_F64: return CUDA_R_64F;
  case HLO_BF16: return CUDA_R_16BF;
  case HLO_F16: return CUDA_R_16F;
  default: return -1;
  }
}

/* A column-major layout of rows x cols, leading dimension ld, `batch`
 * matrices `stride` elements apart. */
static cublasStatus_t make_layout(const cublaslt_api *lt, cublasLtMatrixLayout_t *out, int type,
                                  int64_t rows, int64_t cols, int64_t ld, int64_t batch,
                                  int64_t stride) {
  cublasStatus_t r = lt->cublasLtMatrixLayoutCreate(out, type, (uint64_t)rows, (uint64_t)cols, ld);
  if (r || batch == 1) return r;
  int32_t count = (int32_t)batch;
  r = lt->cublasLtMatrixLayoutSetAttribute(*out, CUBLASLT_MATRIX_LAYOUT_BATCH_COUNT, &count,
                                           sizeof count);
  if (!r)
    r = lt->cublasLtMatrixLayoutSetAttribute(*out, CUBLASLT_MATRIX_LAYOUT_STRIDED_BATCH_OFFSET,
                                             &stride, sizeof stride);
  return r;
}

/* Makes plan p for key k: descriptors and the heuristic's first algorithm. */
static hlo_status plan_make(const cuda_device_state *s, const gemm_key *k, gemm_plan *p) {
  const cublaslt_api *lt = s->lt;
  memset(p, 0, sizeof *p);
  p->key = *k;
  bool f64 = k->dtype == HLO_F64;
  int compute = f64 ? CUBLAS_COMPUTE_64F : k->tf32 ? CUBLAS_COMPUTE_32F_FAST_TF32
                                                   : CUBLAS_COMPUTE_32F;
  int scale = f64 ? CUDA_R_64F : CUDA_R_32F;
  int ab = lt_type((hlo_dtype)k->dtype), ct = lt_type((hlo_dtype)k->c_dtype);
  const char *what = "cublasLtMatmulDescCreate";
  cublasStatus_t r = lt->cublasLtMatmulDescCreate(&p->desc, compute, scale);
  int32_t op_a = k->trans_b ? CUBLAS_OP_T : CUBLAS_OP_N; /* cuBLASLt's A is our B */
  int32_t op_b = k->trans_a ? CUBLAS_OP_T : CUBLAS_OP_N;
  if (!r) what = "cublasLtMatmulDescSetAttribute",
          r = lt->cublasLtMatmulDescSetAttribute(p->desc, CUBLASLT_MATMUL_DESC_TRANSA, &op_a,
                                                 sizeof op_a);
  if (!r)
    r = lt->cublasLtMatmulDescSetAttribute(p->desc, CUBLASLT_MATMUL_DESC_TRANSB, &op_b,
                                           sizeof op_b);
  if (!r) what = "cublasLtMatrixLayoutCreate",
          r = make_layout(lt, &p->la, ab, k->trans_b ? k->k : k->n, k->trans_b ? k->n : k->k,
                          k->ldb, k->batch, k->sb);
  if (!r)
    r = make_layout(lt, &p->lb, ab, k->trans_a ? k->m : k->k, k->trans_a ? k->k : k->m, k->lda,
                    k->batch, k->sa);
  if (!r) r = make_layout(lt, &p->lc, ct, k->n, k->m, k->ldc, k->batch, k->sc);
  cublasLtMatmulPreference_t pref = NULL;
  if (!r) what = "cublasLtMatmulPreferenceCreate", r = lt->cublasLtMatmulPreferenceCreate(&pref);
  uint64_t ws = g_lt.workspace_bytes;
  if (!r) what = "cublasLtMatmulPreferenceSetAttribute",
          r = lt->cublasLtMatmulPreferenceSetAttribute(
              pref, CUBLASLT_MATMUL_PREF_MAX_WORKSPACE_BYTES, &ws, sizeof ws);
  /* cuBLASLt's A is our B: alignments swap too */
  const uint32_t aligns[4] = {k->align_b, k->align_a, k->align_c, k->align_c};
  for (int i = 0; i < 4 && !r; i++)
    r = lt->cublasLtMatmulPreferenceSetAttribute(
        pref, CUBLASLT_MATMUL_PREF_MIN_ALIGNMENT_A_BYTES + i, &aligns[i], sizeof aligns[i]);
  cublasLtMatmulHeuristicResult_t res;
  memset(&res, 0, sizeof res);
  int found = 0;
  if (!r) what = "cublasLtMatmulAlgoGetHeuristic",
          r = lt->cublasLtMatmulAlgoGetHeuristic(g_lt.handle, p->desc, p->la, p->lb, p->lc, p->lc,
                                                 pref, 1, &res, &found);
  if (pref) lt->cublasLtMatmulPreferenceDestroy(pref);
  hlo_status st = NULL;
  if (r == CUBLAS_STATUS_NOT_SUPPORTED || (!r && (found < 1 || res.state)))
    st = status_new(HLO_UNIMPLEMENTED,
                    "cuBLASLt has no algorithm for a %s x %s -> %s gemm of batch %lld, "
                    "m %lld, n %lld, k %lld (trans_a %d, trans_b %d)",
                    hlo_dtype_name((hlo_dtype)k->dtype), hlo_dtype_name((hlo_dtype)k->dtype),
                    hlo_dtype_name((hlo_dtype)k->c_dtype), (long long)k->batch, (long long)k->m,
                    (long long)k->n, (long long)k->k, k->trans_a, k->trans_b);
  else if (r)
    st = lt_error(lt, r, what);
  if (st) {
    plan_destroy(lt, p);
    return st;
  }
  p->algo = res.algo;
  p->workspace = res.workspaceSize;
  return NULL;
}

/* The largest power of two up to 256 dividing the address and the batch
 * stride in bytes. */
static uint32_t alignment_of(const void *ptr, int64_t batch, int64_t stride, size_t elt) {
  uint64_t v = (uint64_t)(uintptr_t)ptr | 256u;
  if (batch > 1) v |= (uint64_t)stride * elt;
  return (uint32_t)(v & -v);
}

/* Zeroes C when k is 0 (no product to run). */
static hlo_status zero_c(const cuda_device_state *s, const gemm_key *k, void *c, size_t ce) {
  CUdeviceptr base = (CUdeviceptr)(uintptr_t)c;
  CUresult r = CUDA_SUCCESS;
  if (k->ldc == k->n && (k->batch == 1 || k->sc == k->m * k->n)) {
    r = s->cu->cuMemsetD8Async(base, 0, (size_t)(k->batch * k->m * k->n) * ce, s->stream);
  } else {
    for (int64_t b = 0; b < k->batch && !r; b++)
      for (int64_t i = 0; i < k->m && !r; i++)
        r = s->cu->cuMemsetD8Async(base + (CUdeviceptr)((b * k->sc + i * k->ldc) * (int64_t)ce), 0,
                                   (size_t)k->n * ce, s->stream);
  }
  return r ? cuda_error(s, r, "gemm with k = 0 (cuMemsetD8Async)") : NULL;
}

hlo_status cuda_gemm(const backend_gemm *g, const void *a, const void *b, void *c) {
  bool ok_types = (g->dtype == HLO_F32 && g->c_dtype == HLO_F32) ||
                  (g->dtype == HLO_F64 && g->c_dtype == HLO_F64) ||
                  ((g->dtype == HLO_BF16 || g->dtype == HLO_F16) &&
                   (g->c_dtype == g->dtype || g->c_dtype == HLO_F32));
  if (!ok_types)
    return status_new(HLO_UNIMPLEMENTED, "the cuda gemm takes f32, f64, bf16 and f16 (c: the "
                      "same or f32 for bf16/f16), not %s x %s -> %s",
                      hlo_dtype_name(g->dtype), hlo_dtype_name(g->dtype),
                      hlo_dtype_name(g->c_dtype));
  const int64_t dims[] = {g->batch, g->m, g->n, g->k, g->lda, g->ldb, g->ldc};
  for (size_t i = 0; i < sizeof dims / sizeof *dims; i++)
    if (dims[i] < 0 || dims[i] > INT_MAX)
      return status_new(HLO_INVALID_ARGUMENT,
                        "gemm: batch %lld, m %lld, n %lld, k %lld, lda %lld, ldb %lld, ldc %lld: "
                        "past cuBLASLt's int",
                        (long long)g->batch, (long long)g->m, (long long)g->n, (long long)g->k,
                        (long long)g->lda, (long long)g->ldb, (long long)g->ldc);
  if (g->batch_stride_a < 0 || g->batch_stride_b < 0 || g->batch_stride_c < 0)
    return status_new(HLO_INVALID_ARGUMENT, "gemm: a negative batch stride");
  if (!g->batch || !g->m || !g->n) return NULL;
  gemm_key k;
  memset(&k, 0, sizeof k);
  k.dtype = g->dtype, k.c_dtype = g->c_dtype;
  k.trans_a = g->trans_a, k.trans_b = g->trans_b;
  k.batch = g->batch, k.m = g->m, k.n = g->n, k.k = g->k;
  k.lda = g->lda ? g->lda : (g->trans_a ? g->m : g->k);
  k.ldb = g->ldb ? g->ldb : (g->trans_b ? g->k : g->n);
  k.ldc = g->ldc ? g->ldc : g->n;
  k.sa = g->batch_stride_a ? g->batch_stride_a : g->m * g->k;
  k.sb = g->batch_stride_b ? g->batch_stride_b : g->k * g->n;
  k.sc = g->batch_stride_c ? g->batch_stride_c : g->m * g->n;
  size_t ae = hlo_dtype_size(g->dtype), ce = hlo_dtype_size(g->c_dtype);
  const cuda_device_state *s = cuda_state();
  HLO_TRY(cuda_make_current(s, "gemm"));
  if (!g->k) return zero_c(s, &k, c, ce);
  if (k.lda < (g->trans_a ? g->m : g->k) || k.ldb < (g->trans_b ? g->k : g->n) || k.ldc < g->n)
    return status_new(HLO_INVALID_ARGUMENT, "gemm: a row stride shorter than its row");
  k.align_a = alignment_of(a, k.batch, k.sa, ae);
  k.align_b = alignment_of(b, k.batch, k.sb, ae);
  k.align_c = alignment_of(c, k.batch, k.sc, ce);
  k.tf32 = g->allow_tf32 && g->dtype == HLO_F32 && cuda_tf32_enabled();
  pthread_once(&g_lt.once, lt_start);
  if (g_lt.code != HLO_OK) return status_new(g_lt.code, "%s", g_lt.message);
  /* the plan: from the table, else made (and kept while there is room) */
  gemm_plan *plan = NULL, temp;
  bool owned = false;
  pthread_mutex_lock(&g_lt.lock);
  for (uint32_t i = 0; i < g_lt.num_plans && !plan; i++)
    if (!memcmp(&g_lt.plans[i].key, &k, sizeof k)) plan = &g_lt.plans[i];
  hlo_status st = NULL;
  if (!plan) {
    gemm_plan *slot = g_lt.num_plans < CUDA_GEMM_PLANS ? &g_lt.plans[g_lt.num_plans] : &temp;
    st = plan_make(s, &k, slot);
    if (!st) {
      plan = slot;
      if (slot == &temp) owned = true;
      else g_lt.num_plans++;
    }
  }
  pthread_mutex_unlock(&g_lt.lock);
  if (st) return st;
  const float one_f = 1, zero_f = 0;
  const double one_d = 1, zero_d = 0;
  bool f64 = g->dtype == HLO_F64;
  cublasStatus_t r = s->lt->cublasLtMatmul(
      g_lt.handle, plan->desc, f64 ? (const void *)&one_d : (const void *)&one_f, b, plan->la, a,
      plan->lb, f64 ? (const void *)&zero_d : (const void *)&zero_f, c, plan->lc, c, plan->lc,
      &plan->algo, plan->workspace ? g_lt.workspace : NULL, plan->workspace, s->stream);
  if (owned) plan_destroy(s->lt, plan);
  return r ? lt_error(s->lt, r, "cublasLtMatmul") : NULL;
}
