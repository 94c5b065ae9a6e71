/* gemm.c — the CPU backend's matrix products (gemm.h says which library
 * runs which product and why; bench/BLAS.md has the measurements).
 *
 * The libraries' headers are not needed to build: the few entry points are
 * declared here, as the CBLAS standard, OpenBLAS and oneDNN define them.
 * dnnl_sgemm is oneDNN's public C API (oneapi/dnnl/dnnl.h);
 * dnnl_gemm_bf16bf16f32 is exported by libdnnl.so.2 (C linkage) with
 * dnnl_sgemm's arguments and row-major contract, A and B bf16 (uint16_t
 * bits), but is not declared in Debian's 2.6 headers: its prototype is
 * written here (test_gemm checks every transpose pair against a double
 * sum). It needs AVX-512 (AMX where the CPU has it); elsewhere oneDNN
 * returns an error and bf16 products fail with HLO_INTERNAL. */
#include "backend/cpu/gemm.h"

#include <dlfcn.h>
#include <limits.h>
#include <pthread.h>
#if defined(__x86_64__) || defined(__i386__)
#include <xmmintrin.h>
#define HLO_HAVE_MXCSR 1
#endif
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>
#include "backend/cpu/cpu.h"
#include "support/float.h"
#include "support/thread_pool.h"

enum { CBLAS_ROW_MAJOR = 101, CBLAS_NO_TRANS = 111, CBLAS_TRANS = 112 };

void cblas_sgemm(int order, int trans_a, int trans_b, int m, int n, int k, float alpha,
                 const float *a, int lda, const float *b, int ldb, float beta, float *c, int ldc);
void cblas_dgemm(int order, int trans_a, int trans_b, int m, int n, int k, double alpha,
                 const double *a, int lda, const double *b, int ldb, double beta, double *c,
                 int ldc);
void openblas_set_num_threads(int num_threads);

typedef int dnnl_status; /* dnnl_status_t: 0 is dnnl_success */
dnnl_status dnnl_sgemm(char transa, char transb, int64_t m, int64_t n, int64_t k, float alpha,
                       const float *a, int64_t lda, const float *b, int64_t ldb, float beta,
                       float *c, int64_t ldc);
dnnl_status dnnl_gemm_bf16bf16f32(char transa, char transb, int64_t m, int64_t n, int64_t k,
                                  float alpha, const uint16_t *a, int64_t lda, const uint16_t *b,
                                  int64_t ldb, float beta, float *c, int64_t ldc);

/* ------------------------------------------------------------- threads */

static pthread_once_t threads_once = PTHREAD_ONCE_INIT;
static void (*omp_set_num_threads_fn)(int);

static void threads_init(void) {
  openblas_set_num_threads(1);
  /* libgomp is loaded as the libraries' dependency; looked up rather than
   * linked so that a build against a pthread BLAS still links */
  *(void **)&omp_set_num_threads_fn = dlsym(RTLD_DEFAULT, "omp_set_num_threads");
}

/* Before each library call: the one-time setup, then the calling thread's
 * OpenMP team size, 1 (OpenMP's thread count is per calling thread: a
 * worker of hlo's pool would otherwise start a team of its own). */
static void threads_enter(void) {
  pthread_once(&threads_once, threads_init);
  if (omp_set_num_threads_fn) omp_set_num_threads_fn(1);
}

int cpu_gemm_threads(void) { return thread_pool_num_threads(thread_pool_global()); }

/* ------------------------------------------------------ one product */

static int at_least_1(int64_t v) { return v < 1 ? 1 : (int)v; }

typedef enum gemm_kind { GEMM_F32, GEMM_F64, GEMM_BF16 } gemm_kind;

/* One product on the calling thread (the libraries single-threaded), with
 * denormals flushed (gemm_ftz). bf16: A and B bf16, C f32. Returns
 * oneDNN's status (0: done). */
static int gemm1_ieee(gemm_kind kind, bool ta, bool tb, int64_t m, int64_t n, int64_t k,
                      const void *a, int64_t lda, const void *b, int64_t ldb, double beta, void *c,
                      int64_t ldc);
static int gemm1(gemm_kind kind, bool ta, bool tb, int64_t m, int64_t n, int64_t k, const void *a,
                 int64_t lda, const void *b, int64_t ldb, double beta, void *c, int64_t ldc) {
  /* Denormal operands and results are read and written as zero inside the
   * library call, as XLA:CPU computes everywhere (FTZ/DAZ): with denormals
   * a training step's weight gradients ran 3x slower (20.8 s vs 6.8 s on
   * llama_train_step_4L_512d). The thread's own mode is restored after, so
   * kernels and the interpreter keep IEEE denormals. */
#ifdef HLO_HAVE_MXCSR
  unsigned csr = _mm_getcsr();
  _mm_setcsr(csr | 0x8040u); /* FTZ (bit 15) and DAZ (bit 6) */
  int r = gemm1_ieee(kind, ta, tb, m, n, k, a, lda, b, ldb, beta, c, ldc);
  _mm_setcsr(csr);
  return r;
#else
  return gemm1_ieee(kind, ta, tb, m, n, k, a, lda, b, ldb, beta, c, ldc);
#endif
}

static int gemm1_ieee(gemm_kind kind, bool ta, bool tb, int64_t m, int64_t n, int64_t k,
                      const void *a, int64_t lda, const void *b, int64_t ldb, double beta, void *c,
                      int64_t ldc) {
  threads_enter();
  int lda1 = at_least_1(lda), ldb1 = at_least_1(ldb);
  int ota = ta ? CBLAS_TRANS : CBLAS_NO_TRANS, otb = tb ? CBLAS_TRANS : CBLAS_NO_TRANS;
  if (kind == GEMM_F64) {
    cblas_dgemm(CBLAS_ROW_MAJOR, ota, otb, (int)m, (int)n, (int)k, 1.0, a, lda1, b, ldb1, beta, c,
                (int)ldc);
    return 0;
  }
  if (kind == GEMM_BF16)
    return dnnl_gemm_bf16bf16f32(ta ? 'T' : 'N', tb ? 'T' : 'N', m, n, k, 1.0f, a, lda1, b, ldb1,
                                 (float)beta, c, ldc);
  if ((double)m * (double)n * (double)k > (double)CPU_GEMM_SMALL &&
      dnnl_sgemm(ta ? 'T' : 'N', tb ? 'T' : 'N', m, n, k, 1.0f, a, lda1, b, ldb1, (float)beta, c,
                 ldc) == 0)
    return 0;
  /* tiny products (OpenBLAS's small-matrix kernels are faster there), and
   * (never seen) a oneDNN failure */
  cblas_sgemm(CBLAS_ROW_MAJOR, ota, otb, (int)m, (int)n, (int)k, 1.0f, a, lda1, b, ldb1,
              (float)beta, c, (int)ldc);
  return 0;
}

/* One product split over hlo's pool: C's rows (or, when it is wider than
 * tall, its columns) in blocks of CPU_GEMM_UNIT, one library call a chunk. */
typedef struct split {
  gemm_kind kind;
  bool ta, tb, by_rows;
  int64_t m, n, k, lda, ldb, ldc;
  const char *a, *b;
  char *c;
  double beta;
  _Atomic int status; /* the first non-zero library status */
} split;

static void split_chunk(void *ctx, int64_t begin, int64_t end) {
  split *s = ctx;
  int64_t dim = s->by_rows ? s->m : s->n, lo = begin * CPU_GEMM_UNIT,
          hi = end * CPU_GEMM_UNIT < dim ? end * CPU_GEMM_UNIT : dim;
  size_t es = s->kind == GEMM_F64 ? 8 : s->kind == GEMM_F32 ? 4 : 2,
         ces = s->kind == GEMM_F64 ? 8 : 4;
  const char *a = s->a, *b = s->b;
  char *c = s->c;
  int64_t m = s->m, n = s->n;
  if (s->by_rows) { /* rows lo..hi of op(A) and C */
    a += (size_t)(s->ta ? lo : lo * s->lda) * es;
    c += (size_t)(lo * s->ldc) * ces;
    m = hi - lo;
  } else { /* columns lo..hi of op(B) and C */
    b += (size_t)(s->tb ? lo * s->ldb : lo) * es;
    c += (size_t)lo * ces;
    n = hi - lo;
  }
  int st = gemm1(s->kind, s->ta, s->tb, m, n, s->k, a, s->lda, b, s->ldb, s->beta, c, s->ldc);
  int zero = 0;
  if (st) atomic_compare_exchange_strong(&s->status, &zero, st);
}

/* Runs `s` (m, n > 0), split when hlo's pool has threads and the product
 * is large enough; returns the library's status (0: done). */
static int gemm_split(split *s) {
  thread_pool *pool = thread_pool_global();
  int threads = thread_pool_num_threads(pool);
  s->by_rows = s->m >= s->n;
  int64_t dim = s->by_rows ? s->m : s->n, units = (dim + CPU_GEMM_UNIT - 1) / CPU_GEMM_UNIT;
  atomic_init(&s->status, 0);
  if (threads < 2 || units < 2 ||
      (double)s->m * (double)s->n * (double)s->k < (double)CPU_GEMM_SPLIT)
    split_chunk(s, 0, units);
  else
    thread_pool_parallel_for(pool, units, (int64_t)threads * CPU_GEMM_CHUNKS_PER_THREAD,
                             split_chunk, s);
  return atomic_load(&s->status);
}

void cpu_sgemm(bool ta, bool tb, int64_t m, int64_t n, int64_t k, const float *a, int64_t lda,
               const float *b, int64_t ldb, float beta, float *c, int64_t ldc) {
  if (m <= 0 || n <= 0) return;
  split s = {.kind = GEMM_F32, .ta = ta, .tb = tb, .m = m, .n = n, .k = k, .lda = lda,
             .ldb = ldb, .ldc = ldc, .a = (const char *)a, .b = (const char *)b,
             .c = (char *)c, .beta = beta};
  (void)gemm_split(&s); /* f32 cannot fail: OpenBLAS takes what oneDNN refuses */
}

void cpu_dgemm(bool ta, bool tb, int64_t m, int64_t n, int64_t k, const double *a, int64_t lda,
               const double *b, int64_t ldb, double beta, double *c, int64_t ldc) {
  if (m <= 0 || n <= 0) return;
  split s = {.kind = GEMM_F64, .ta = ta, .tb = tb, .m = m, .n = n, .k = k, .lda = lda,
             .ldb = ldb, .ldc = ldc, .a = (const char *)a, .b = (const char *)b,
             .c = (char *)c, .beta = beta};
  (void)gemm_split(&s);
}

/* ------------------------------------------------------ the batched form */

/* Matrices [begin, end) of a batch, each on the calling thread (when the
 * batch is spread over the pool) or split (when it is not). */
typedef struct batch {
  const backend_gemm *g;
  hlo_dtype c_dtype;
  const char *a, *b;
  char *c;
  bool split_each;
  _Atomic int status;   /* the first non-zero library status */
  _Atomic int no_memory;
} batch;

static void batch_chunk(void *ctx, int64_t begin, int64_t end) {
  batch *bt = ctx;
  const backend_gemm *g = bt->g;
  int64_t m = g->m, n = g->n, k = g->k;
  size_t es = hlo_dtype_size(g->dtype), ces = hlo_dtype_size(bt->c_dtype);
  size_t sa = (size_t)(m * k) * es, sb = (size_t)(k * n) * es, sc = (size_t)(m * n) * ces;
  gemm_kind kind = g->dtype == HLO_F32 ? GEMM_F32 : g->dtype == HLO_F64 ? GEMM_F64 : GEMM_BF16;
  float *scratch = NULL; /* bf16 -> bf16: the f32 result before rounding */
  if (g->dtype == HLO_BF16 && bt->c_dtype == HLO_BF16) {
    scratch = malloc((size_t)(m * n) * sizeof(float));
    if (!scratch) {
      atomic_store(&bt->no_memory, 1);
      return;
    }
  }
  for (int64_t i = begin; i < end; i++) {
    char *pc = bt->c + (size_t)i * sc;
    split s = {.kind = kind, .ta = g->trans_a, .tb = g->trans_b, .m = m, .n = n, .k = k,
               .lda = g->trans_a ? m : k, .ldb = g->trans_b ? k : n, .ldc = n,
               .a = bt->a + (size_t)i * sa, .b = bt->b + (size_t)i * sb,
               .c = scratch ? (char *)scratch : pc, .beta = 0};
    int st;
    if (bt->split_each) {
      st = gemm_split(&s);
    } else {
      s.by_rows = true;
      atomic_init(&s.status, 0);
      split_chunk(&s, 0, (m + CPU_GEMM_UNIT - 1) / CPU_GEMM_UNIT);
      st = atomic_load(&s.status);
    }
    if (st) {
      int zero = 0;
      atomic_compare_exchange_strong(&bt->status, &zero, st);
      break;
    }
    if (scratch) {
      uint16_t *o = (uint16_t *)pc;
      for (int64_t j = 0; j < m * n; j++) o[j] = f32_to_bf16(scratch[j]);
    }
  }
  free(scratch);
}

hlo_status cpu_gemm_ex(const backend_gemm *g, hlo_dtype c_dtype, const void *a, const void *b,
                       void *c) {
  bool same = g->dtype == c_dtype && (g->dtype == HLO_F32 || g->dtype == HLO_F64 ||
                                      g->dtype == HLO_BF16);
  bool widen = g->dtype == HLO_BF16 && c_dtype == HLO_F32;
  if (!same && !widen)
    return status_new(HLO_UNIMPLEMENTED, "gemm: %s x %s -> %s is not supported",
                      hlo_dtype_name(g->dtype), hlo_dtype_name(g->dtype),
                      hlo_dtype_name(c_dtype));
  if (g->batch < 0 || g->m < 0 || g->n < 0 || g->k < 0 || g->m > INT_MAX || g->n > INT_MAX ||
      g->k > INT_MAX)
    return status_new(HLO_INVALID_ARGUMENT,
                      "gemm: sizes %lld x %lld x %lld (batch %lld) are negative or past the "
                      "BLAS library's int",
                      (long long)g->m, (long long)g->n, (long long)g->k, (long long)g->batch);
  if (g->m == 0 || g->n == 0 || g->batch == 0) return NULL;
  if (g->k == 0) { /* BLAS would be asked for lda >= 1 of an empty matrix: the sum is 0 */
    memset(c, 0, (size_t)(g->m * g->n) * hlo_dtype_size(c_dtype) * (size_t)g->batch);
    return NULL; /* all-zero bytes: +0 in f32, f64 and bf16 alike */
  }
  thread_pool *pool = thread_pool_global();
  int threads = thread_pool_num_threads(pool);
  batch bt = {.g = g, .c_dtype = c_dtype, .a = a, .b = b, .c = c};
  atomic_init(&bt.status, 0);
  atomic_init(&bt.no_memory, 0);
  double work = (double)g->m * (double)g->n * (double)g->k;
  /* a batch of at least as many matrices as threads: a matrix per chunk;
   * fewer: one after the other, each split over the pool */
  if (threads >= 2 && g->batch >= threads && work * (double)g->batch >= (double)CPU_GEMM_SPLIT) {
    thread_pool_parallel_for(pool, g->batch, 0, batch_chunk, &bt);
  } else {
    bt.split_each = true;
    batch_chunk(&bt, 0, g->batch);
  }
  if (atomic_load(&bt.no_memory)) return status_new(HLO_RESOURCE_EXHAUSTED, "gemm: out of memory");
  int st = atomic_load(&bt.status);
  if (st) return status_new(HLO_INTERNAL, "gemm: oneDNN's bf16 gemm failed (status %d)", st);
  return NULL;
}

hlo_status cpu_gemm(const backend_gemm *g, const void *a, const void *b, void *c) {
  return cpu_gemm_ex(g, g->c_dtype, a, b, c);
}
