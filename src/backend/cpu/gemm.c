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
 * sum). It needs AVX-512 (AMX where the CPU has it); elsewhere (an AVX2
 * CPU: AMD EPYC before Zen 4, say) oneDNN answers dnnl_unimplemented, and
 * the product is computed in f32 instead: A and B widened to f32 (exact),
 * then sgemm (gemm_bf16_widened: products and sums in f32, as oneDNN's
 * bf16 kernels make them; only the summation order differs). */
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
#include <strings.h>
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

/* ----------------------------------------------- OpenBLAS's kernel set */

/* OpenBLAS (a DYNAMIC_ARCH build, as Debian's) picks its kernels once, when
 * it is loaded, from the CPU's family and model numbers. A model it does
 * not know gets "Prescott", its SSE3 fallback: 0.3.21 does not know model
 * 207 (0xCF, Emerald Rapids), and on such a VM (AVX-512 F/BW/VL/DQ, 2
 * cores) every product hlo gives OpenBLAS ran at a sixth of its rate:
 * 24 GFLOP/s at 32^3 against 153 with the SkylakeX kernels, 27 against 120
 * on 256x1024x64 (bench/blas/gemm_rate, one thread, by CPU time);
 * tiny_llama_train_step's small products made it 478 -> 349 us a run (one
 * thread, min). OpenBLAS's own remedy is the environment variable
 * OPENBLAS_CORETYPE, read at load, before hlo's code runs; so at start-up
 * (a constructor: one thread, no product made yet), when OpenBLAS fell
 * back to Prescott, the variable is unset, and the CPU (with the OS's
 * support, as __builtin_cpu_supports checks it) has AVX-512 F/BW/VL/DQ
 * (SkylakeX kernels) or AVX2 and FMA (Haswell's), OpenBLAS's kernel table
 * is chosen again by its own entry points: gotoblas_dynamic_quit, the
 * variable set for the call, gotoblas_dynamic_init (driver/others/
 * dynamic.c), then the variable removed. Those are looked up, not linked:
 * an OpenBLAS without them (not DYNAMIC_ARCH) or another BLAS is left as
 * it is. HLO_OPENBLAS_KEEP_CORE (any value) turns this off (for measuring
 * it). */
#if defined(__x86_64__) && defined(__GNUC__)
static void openblas_core_fix(void) __attribute__((constructor));
static void openblas_core_fix(void) {
  if (getenv("OPENBLAS_CORETYPE") || getenv("HLO_OPENBLAS_KEEP_CORE")) return;
  char *(*corename)(void);
  void (*dyn_init)(void), (*dyn_quit)(void);
  *(void **)&corename = dlsym(RTLD_DEFAULT, "openblas_get_corename");
  *(void **)&dyn_init = dlsym(RTLD_DEFAULT, "gotoblas_dynamic_init");
  *(void **)&dyn_quit = dlsym(RTLD_DEFAULT, "gotoblas_dynamic_quit");
  if (!corename || !dyn_init || !dyn_quit) return;
  const char *now = corename();
  if (!now || strcasecmp(now, "Prescott")) return;
  __builtin_cpu_init();
  const char *want = NULL;
  if (__builtin_cpu_supports("avx512f") && __builtin_cpu_supports("avx512bw") &&
      __builtin_cpu_supports("avx512vl") && __builtin_cpu_supports("avx512dq"))
    want = "SkylakeX";
  else if (__builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma"))
    want = "Haswell";
  if (!want || setenv("OPENBLAS_CORETYPE", want, 1)) return;
  dyn_quit();
  dyn_init();
  unsetenv("OPENBLAS_CORETYPE");
}
#endif

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
 * denormals flushed. bf16: A and B bf16, C f32. Returns oneDNN's status (0:
 * done). gemm1_ieee is the same without the set-up (threads_enter, FTZ/DAZ)
 * that gemm1 makes around it (run_blocks makes it once for many). */
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
  threads_enter();
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

/* f32 C (m x n, few rows, op(B) transposed) = op(A) B^T computed as its
 * transpose, C^T (n x m) = B op(A)^T, into a scratch, then transposed
 * into C: oneDNN's kernels run the wide form much faster (one thread, 8 x
 * 32x256x256 with both operands transposed: 103 GFLOP/s direct, 134 this
 * way; bench/BLAS.md). Whether it ran (false: no memory for the scratch;
 * the caller then runs the direct form). */
static bool sgemm_swapped(bool ta, int64_t m, int64_t n, int64_t k, const void *a, int64_t lda,
                          const void *b, int64_t ldb, void *c, int64_t ldc) {
  float *s = malloc((size_t)(m * n) * sizeof *s);
  if (!s) return false;
  if (dnnl_sgemm('N', ta ? 'N' : 'T', n, m, k, 1.0f, b, ldb, a, lda, 0.0f, s, m)) {
    free(s);
    return false;
  }
  float *o = c;
  for (int64_t j0 = 0; j0 < n; j0 += 16) { /* 16 columns of C at a time: s's rows stay in L1 */
    int64_t j1 = j0 + 16 < n ? j0 + 16 : n;
    for (int64_t i = 0; i < m; i++)
      for (int64_t j = j0; j < j1; j++) o[i * ldc + j] = s[j * m + i];
  }
  free(s);
  return true;
}

/* bt (k x n, row stride n) = the n x k matrix b (row stride ldb) transposed. */
#if defined(__x86_64__) && defined(__GNUC__)
#include <immintrin.h>
/* 8 x 8 blocks in AVX registers (unpack, shuffle, permute: the usual
 * transpose), the edges one element at a time. */
__attribute__((target("avx2"))) static void transpose_avx2(const float *b, int64_t ldb,
                                                            int64_t n, int64_t k, float *bt) {
  int64_t n8 = n & ~(int64_t)7, k8 = k & ~(int64_t)7;
  for (int64_t j = 0; j < n8; j += 8)
    for (int64_t x = 0; x < k8; x += 8) {
      const float *s = b + j * ldb + x;
      __m256 r0 = _mm256_loadu_ps(s), r1 = _mm256_loadu_ps(s + ldb);
      __m256 r2 = _mm256_loadu_ps(s + 2 * ldb), r3 = _mm256_loadu_ps(s + 3 * ldb);
      __m256 r4 = _mm256_loadu_ps(s + 4 * ldb), r5 = _mm256_loadu_ps(s + 5 * ldb);
      __m256 r6 = _mm256_loadu_ps(s + 6 * ldb), r7 = _mm256_loadu_ps(s + 7 * ldb);
      __m256 t0 = _mm256_unpacklo_ps(r0, r1), t1 = _mm256_unpackhi_ps(r0, r1);
      __m256 t2 = _mm256_unpacklo_ps(r2, r3), t3 = _mm256_unpackhi_ps(r2, r3);
      __m256 t4 = _mm256_unpacklo_ps(r4, r5), t5 = _mm256_unpackhi_ps(r4, r5);
      __m256 t6 = _mm256_unpacklo_ps(r6, r7), t7 = _mm256_unpackhi_ps(r6, r7);
      __m256 u0 = _mm256_shuffle_ps(t0, t2, 0x44), u1 = _mm256_shuffle_ps(t0, t2, 0xEE);
      __m256 u2 = _mm256_shuffle_ps(t1, t3, 0x44), u3 = _mm256_shuffle_ps(t1, t3, 0xEE);
      __m256 u4 = _mm256_shuffle_ps(t4, t6, 0x44), u5 = _mm256_shuffle_ps(t4, t6, 0xEE);
      __m256 u6 = _mm256_shuffle_ps(t5, t7, 0x44), u7 = _mm256_shuffle_ps(t5, t7, 0xEE);
      float *d = bt + x * n + j;
      _mm256_storeu_ps(d, _mm256_permute2f128_ps(u0, u4, 0x20));
      _mm256_storeu_ps(d + n, _mm256_permute2f128_ps(u1, u5, 0x20));
      _mm256_storeu_ps(d + 2 * n, _mm256_permute2f128_ps(u2, u6, 0x20));
      _mm256_storeu_ps(d + 3 * n, _mm256_permute2f128_ps(u3, u7, 0x20));
      _mm256_storeu_ps(d + 4 * n, _mm256_permute2f128_ps(u0, u4, 0x31));
      _mm256_storeu_ps(d + 5 * n, _mm256_permute2f128_ps(u1, u5, 0x31));
      _mm256_storeu_ps(d + 6 * n, _mm256_permute2f128_ps(u2, u6, 0x31));
      _mm256_storeu_ps(d + 7 * n, _mm256_permute2f128_ps(u3, u7, 0x31));
    }
  for (int64_t j = 0; j < n; j++) /* the edges: columns k8.., then rows n8.. */
    for (int64_t x = j < n8 ? k8 : 0; x < k; x++) bt[x * n + j] = b[j * ldb + x];
}
#endif

static void transpose_f32(const float *b, int64_t ldb, int64_t n, int64_t k, float *bt) {
#if defined(__x86_64__) && defined(__GNUC__)
  if (__builtin_cpu_supports("avx2")) {
    transpose_avx2(b, ldb, n, k, bt);
    return;
  }
#endif
  for (int64_t j = 0; j < n; j++) /* row j of b is column j of bt */
    for (int64_t x = 0; x < k; x++) bt[x * n + j] = b[j * ldb + x];
}

/* A tiny f32 product with B transposed (op(A) = A) and B at most
 * CPU_GEMM_TB_COPY floats: B copied into its untransposed form (k x n, a
 * per-thread buffer) first, then OpenBLAS's NN kernel. Its small-matrix
 * kernels do not take this pair (row-major NT is its column-major TN,
 * which OpenBLAS 0.3.21 leaves to its packing path): 32x32x32 ran at
 * about 0.55 of the NN rate (bench/BLAS.md, 2026-12-03). */
static void sgemm_small_nt(int64_t m, int64_t n, int64_t k, const float *a, int lda,
                           const float *b, int ldb, double beta, float *c, int64_t ldc) {
  static _Thread_local float bt[CPU_GEMM_TB_COPY]; /* a thread makes one product at a time */
  transpose_f32(b, ldb, n, k, bt);
  cblas_sgemm(CBLAS_ROW_MAJOR, CBLAS_NO_TRANS, CBLAS_NO_TRANS, (int)m, (int)n, (int)k, 1.0f, a,
              lda, bt, at_least_1(n), (float)beta, c, (int)ldc);
}

enum { DNNL_UNIMPLEMENTED = 3, GEMM_NO_MEMORY = -1 };

/* oneDNN has no bf16 gemm for this CPU (set once it says so). */
static atomic_bool bf16_unimplemented;

/* op(X) of a bf16 matrix stored with leading dimension ld, rows x cols as
 * stored, widened into a dense f32 copy (same layout, ld = cols). NULL: no
 * memory. */
static float *widen_bf16(const uint16_t *x, int64_t rows, int64_t cols, int64_t ld) {
  int64_t count = rows * cols;
  float *w = malloc((size_t)(count > 0 ? count : 1) * sizeof *w);
  if (!w) return NULL;
  for (int64_t r = 0; r < rows; r++)
    for (int64_t j = 0; j < cols; j++) {
      uint32_t u = (uint32_t)x[r * ld + j] << 16; /* bf16 is f32's high half: exact */
      memcpy(&w[r * cols + j], &u, sizeof u);
    }
  return w;
}

/* C (f32) = op(A) op(B) + beta C for bf16 A and B through sgemm on f32
 * copies (see the header comment). Returns 0 or GEMM_NO_MEMORY. */
static int gemm_bf16_widened(bool ta, bool tb, int64_t m, int64_t n, int64_t k, const void *a,
                             int lda, const void *b, int ldb, double beta, void *c,
                             int64_t ldc) {
  int64_t ar = ta ? k : m, ac = ta ? m : k, br = tb ? n : k, bc = tb ? k : n;
  float *wa = widen_bf16(a, ar, ac, lda), *wb = wa ? widen_bf16(b, br, bc, ldb) : NULL;
  if (!wb) {
    free(wa);
    return GEMM_NO_MEMORY;
  }
  if (dnnl_sgemm(ta ? 'T' : 'N', tb ? 'T' : 'N', m, n, k, 1.0f, wa, at_least_1(ac), wb,
                 at_least_1(bc), (float)beta, c, ldc) != 0)
    cblas_sgemm(CBLAS_ROW_MAJOR, ta ? CBLAS_TRANS : CBLAS_NO_TRANS,
                tb ? CBLAS_TRANS : CBLAS_NO_TRANS, (int)m, (int)n, (int)k, 1.0f, wa,
                at_least_1(ac), wb, at_least_1(bc), (float)beta, c, (int)ldc);
  free(wa);
  free(wb);
  return 0;
}

static int gemm1_ieee(gemm_kind kind, bool ta, bool tb, int64_t m, int64_t n, int64_t k,
                      const void *a, int64_t lda, const void *b, int64_t ldb, double beta, void *c,
                      int64_t ldc) {
  int lda1 = at_least_1(lda), ldb1 = at_least_1(ldb);
  int ota = ta ? CBLAS_TRANS : CBLAS_NO_TRANS, otb = tb ? CBLAS_TRANS : CBLAS_NO_TRANS;
  if (kind == GEMM_F64) {
    cblas_dgemm(CBLAS_ROW_MAJOR, ota, otb, (int)m, (int)n, (int)k, 1.0, a, lda1, b, ldb1, beta, c,
                (int)ldc);
    return 0;
  }
  if (kind == GEMM_BF16) {
    if (!atomic_load_explicit(&bf16_unimplemented, memory_order_relaxed)) {
      int st = dnnl_gemm_bf16bf16f32(ta ? 'T' : 'N', tb ? 'T' : 'N', m, n, k, 1.0f, a, lda1, b,
                                     ldb1, (float)beta, c, ldc);
      if (st != DNNL_UNIMPLEMENTED) return st;
      atomic_store_explicit(&bf16_unimplemented, true, memory_order_relaxed);
    }
    return gemm_bf16_widened(ta, tb, m, n, k, a, lda1, b, ldb1, beta, c, ldc);
  }
  if ((double)m * (double)n * (double)k > (double)CPU_GEMM_SMALL && beta == 0 && tb &&
      m <= CPU_GEMM_SWAP_M && n >= 4 * m && m * n <= CPU_GEMM_SWAP_ELEMS &&
      sgemm_swapped(ta, m, n, k, a, lda1, b, ldb1, c, ldc))
    return 0;
  if ((double)m * (double)n * (double)k > (double)CPU_GEMM_SMALL &&
      dnnl_sgemm(ta ? 'T' : 'N', tb ? 'T' : 'N', m, n, k, 1.0f, a, lda1, b, ldb1, (float)beta, c,
                 ldc) == 0)
    return 0;
  /* tiny products (OpenBLAS's small-matrix kernels are faster there), and
   * (never seen) a oneDNN failure */
  if (!ta && tb && m >= CPU_GEMM_TB_COPY_M && n * k <= CPU_GEMM_TB_COPY) {
    sgemm_small_nt(m, n, k, a, lda1, b, ldb1, beta, c, ldc);
    return 0;
  }
  cblas_sgemm(CBLAS_ROW_MAJOR, ota, otb, (int)m, (int)n, (int)k, 1.0f, a, lda1, b, ldb1,
              (float)beta, c, (int)ldc);
  return 0;
}

/* ------------------------------------------------- the split product */

/* A batched product as the library calls see it: sizes, strides in
 * elements, and how it is split. The work is `batch * per` blocks: block
 * (i, j) is rows [j * block, ...) of matrix i (columns when !by_rows), one
 * library call each, then the epilogue on those rows. */
typedef struct prod {
  gemm_kind kind;
  bool ta, tb, by_rows;
  bool round_bf16;        /* bf16 C: each block computed in f32, rounded once */
  int64_t batch, m, n, k;
  int64_t lda, ldb, ldc, sa, sb, sc;
  const char *a, *b;
  char *c;
  double beta;
  const backend_gemm_epilogue *ep;
  int64_t per, block;
  _Atomic int status;     /* the first non-zero library status */
  _Atomic int no_memory;
} prod;

static size_t elem_size(gemm_kind k) { return k == GEMM_F64 ? 8 : k == GEMM_F32 ? 4 : 2; }
static size_t c_elem_size(const prod *p) {
  return p->round_bf16 ? 2 : p->kind == GEMM_F64 ? 8 : 4;
}

static void fail(prod *p, int st) {
  int zero = 0;
  atomic_compare_exchange_strong(&p->status, &zero, st);
}

/* Block `item` of p: its library call, then the epilogue on its rows. set:
 * the thread is set up for the library (gemm1_ieee: see gemm1). */
static void run_block(prod *p, int64_t item, bool set) {
  int64_t i = item / p->per, j = item % p->per, dim = p->by_rows ? p->m : p->n;
  int64_t lo = j * p->block, hi = lo + p->block < dim ? lo + p->block : dim;
  size_t es = elem_size(p->kind), ces = c_elem_size(p);
  const char *a = p->a + (size_t)(i * p->sa) * es, *b = p->b + (size_t)(i * p->sb) * es;
  char *c = p->c + (size_t)(i * p->sc) * ces;
  int64_t m = p->m, n = p->n;
  if (p->by_rows) { /* rows lo..hi of op(A) and C */
    a += (size_t)(p->ta ? lo : lo * p->lda) * es;
    c += (size_t)(lo * p->ldc) * ces;
    m = hi - lo;
  } else { /* columns lo..hi of op(B) and C */
    b += (size_t)(p->tb ? lo * p->ldb : lo) * es;
    c += (size_t)lo * ces;
    n = hi - lo;
  }
  int st;
  if (p->round_bf16) {
    float *s = malloc((size_t)(m * n) * sizeof *s);
    if (!s) {
      atomic_store(&p->no_memory, 1);
      return;
    }
    st = gemm1(p->kind, p->ta, p->tb, m, n, p->k, a, p->lda, b, p->ldb, 0, s, n);
    for (int64_t r = 0; !st && r < m; r++) {
      uint16_t *o = (uint16_t *)c + r * p->ldc;
      for (int64_t x = 0; x < n; x++) o[x] = f32_to_bf16(s[r * n + x]);
    }
    free(s);
  } else {
    st = (set ? gemm1_ieee : gemm1)(p->kind, p->ta, p->tb, m, n, p->k, a, p->lda, b, p->ldb,
                                    p->beta, c, p->ldc);
  }
  if (st == GEMM_NO_MEMORY) {
    atomic_store(&p->no_memory, 1);
    return;
  }
  if (st) {
    fail(p, st);
    return;
  }
  if (p->ep) p->ep->fn(p->ep->ctx, i, lo, hi);
}

/* Blocks [begin, end) of p. Several plain blocks (no epilogue, no bf16
 * rounding: no hlo code between the calls) share one set-up (threads_enter
 * and FTZ/DAZ, as gemm1 makes them): ~10 ns a call, a tenth of a 16x16x8
 * product (bench/BLAS.md, 2026-12-03). */
static void run_blocks(void *ctx, int64_t begin, int64_t end) {
  prod *p = ctx;
  if (p->ep || p->round_bf16 || end - begin < 2) {
    for (int64_t t = begin; t < end; t++) run_block(p, t, false);
    return;
  }
  threads_enter();
#ifdef HLO_HAVE_MXCSR
  unsigned csr = _mm_getcsr();
  _mm_setcsr(csr | 0x8040u); /* FTZ and DAZ, as gemm1 */
#endif
  for (int64_t t = begin; t < end; t++) run_block(p, t, true);
#ifdef HLO_HAVE_MXCSR
  _mm_setcsr(csr);
#endif
}

/* Whether this thread is running blocks of a split product (run_split).
 * A product made meanwhile (the second product of a chain, run by the
 * first's epilogue on each block of rows: executable_cpu_epilogue.c) runs
 * on this thread whatever its split, as the pool runs nested calls inline;
 * split into row blocks it would only pack its shared operand once a
 * block (attention's chained P V: V packed 4 times per block of 256 rows;
 * a large B costs the rate: the panel table of bench/BLAS.md). So it is
 * one library call a matrix. (On naive_attention_1024x64, where V is 256
 * KiB, the two cost the same within noise: 1.26-1.30 ms for P V in 256-
 * and 64-row calls, one thread, 2026-12-03.) */
static _Thread_local bool in_split;

static void run_split(void *ctx, int64_t begin, int64_t end) {
  bool was = in_split;
  in_split = true;
  run_blocks(ctx, begin, end);
  in_split = was;
}

/* Chooses p's split and runs it: on the calling thread when hlo's pool has
 * one thread, the thread is running a block of a split product already
 * (in_split), or the whole product is under CPU_GEMM_SPLIT multiply-adds
 * (one call a matrix), else over the pool in about
 * CPU_GEMM_CHUNKS_PER_THREAD blocks a thread (one when a single matrix's
 * shared operand is large: gemm.h): a matrix a block when the batch has
 * that many, else each matrix in row (column) blocks of a multiple of
 * CPU_GEMM_UNIT. Rows only when there is an epilogue. */
static void prod_run(prod *p) {
  thread_pool *pool = thread_pool_global();
  int threads = thread_pool_num_threads(pool);
  p->by_rows = p->ep || p->m >= p->n;
  int64_t dim = p->by_rows ? p->m : p->n;
  atomic_init(&p->status, 0);
  atomic_init(&p->no_memory, 0);
  double work = (double)p->m * (double)p->n * (double)p->k * (double)p->batch;
  if (threads < 2 || in_split || work < (double)CPU_GEMM_SPLIT) {
    p->per = 1, p->block = dim;
    run_blocks(p, 0, p->batch);
    return;
  }
  /* each block's library call packs the operand all blocks share (B for
   * row blocks): past CPU_GEMM_REPACK_BYTES, one block a thread */
  size_t shared = (size_t)(p->by_rows ? p->k * p->n : p->m * p->k) * elem_size(p->kind);
  int64_t target = (int64_t)threads *
                   (p->batch == 1 && shared > CPU_GEMM_REPACK_BYTES ? 1 : CPU_GEMM_CHUNKS_PER_THREAD);
  int64_t per = (target + p->batch - 1) / p->batch, most = (dim + CPU_GEMM_UNIT - 1) / CPU_GEMM_UNIT;
  if (per > most) per = most;
  int64_t block = (dim + per - 1) / per;
  block = (block + CPU_GEMM_UNIT - 1) / CPU_GEMM_UNIT * CPU_GEMM_UNIT;
  if (block > dim) block = dim;
  p->per = (dim + block - 1) / block, p->block = block;
  thread_pool_parallel_for(pool, p->batch * p->per, 0, run_split, p);
}

void cpu_sgemm(bool ta, bool tb, int64_t m, int64_t n, int64_t k, const float *a, int64_t lda,
               const float *b, int64_t ldb, float beta, float *c, int64_t ldc) {
  if (m <= 0 || n <= 0) return;
  prod p = {.kind = GEMM_F32, .ta = ta, .tb = tb, .batch = 1, .m = m, .n = n, .k = k,
            .lda = lda, .ldb = ldb, .ldc = ldc, .a = (const char *)a, .b = (const char *)b,
            .c = (char *)c, .beta = beta};
  prod_run(&p); /* f32 cannot fail: OpenBLAS takes what oneDNN refuses */
}

void cpu_dgemm(bool ta, bool tb, int64_t m, int64_t n, int64_t k, const double *a, int64_t lda,
               const double *b, int64_t ldb, double beta, double *c, int64_t ldc) {
  if (m <= 0 || n <= 0) return;
  prod p = {.kind = GEMM_F64, .ta = ta, .tb = tb, .batch = 1, .m = m, .n = n, .k = k,
            .lda = lda, .ldb = ldb, .ldc = ldc, .a = (const char *)a, .b = (const char *)b,
            .c = (char *)c, .beta = beta};
  prod_run(&p);
}

/* ------------------------------------------------------ the batched form */

/* `v` when given (non-zero), else `dense`. */
static int64_t or_dense(int64_t v, int64_t dense) { return v ? v : dense; }

static hlo_status gemm_run(const backend_gemm *g, hlo_dtype c_dtype, const void *a,
                           const void *b, void *c, const backend_gemm_epilogue *ep) {
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
  prod p = {.kind = g->dtype == HLO_F32 ? GEMM_F32 : g->dtype == HLO_F64 ? GEMM_F64 : GEMM_BF16,
            .ta = g->trans_a, .tb = g->trans_b, .round_bf16 = c_dtype == HLO_BF16,
            .batch = g->batch, .m = g->m, .n = g->n, .k = g->k,
            .lda = or_dense(g->lda, g->trans_a ? g->m : g->k),
            .ldb = or_dense(g->ldb, g->trans_b ? g->k : g->n), .ldc = or_dense(g->ldc, g->n),
            .a = a, .b = b, .c = c, .beta = 0, .ep = ep && ep->fn ? ep : NULL};
  p.sa = or_dense(g->batch_stride_a, g->m * g->k);
  p.sb = or_dense(g->batch_stride_b, g->k * g->n);
  p.sc = or_dense(g->batch_stride_c, g->m * g->n);
  if (p.lda < (p.ta ? p.m : p.k) || p.ldb < (p.tb ? p.k : p.n) || p.ldc < p.n ||
      p.lda > INT_MAX || p.ldb > INT_MAX || p.ldc > INT_MAX || p.sa < 0 || p.sb < 0 ||
      p.sc < 0)
    return status_new(HLO_INVALID_ARGUMENT,
                      "gemm: strides lda %lld, ldb %lld, ldc %lld (batch strides %lld, %lld, "
                      "%lld) are shorter than a row of %lld x %lld x %lld%s%s, negative or past "
                      "the BLAS library's int",
                      (long long)p.lda, (long long)p.ldb, (long long)p.ldc, (long long)p.sa,
                      (long long)p.sb, (long long)p.sc, (long long)p.m, (long long)p.n,
                      (long long)p.k, p.ta ? ", A transposed" : "", p.tb ? ", B transposed" : "");
  if (g->m == 0 || g->n == 0 || g->batch == 0) return NULL;
  if (g->k == 0) { /* BLAS would be asked for lda >= 1 of an empty matrix: the sum is 0 */
    size_t ces = c_elem_size(&p);
    for (int64_t i = 0; i < p.batch; i++) {
      for (int64_t r = 0; r < p.m; r++) /* all-zero bytes: +0 in f32, f64 and bf16 alike */
        memset((char *)c + (size_t)(i * p.sc + r * p.ldc) * ces, 0, (size_t)p.n * ces);
      if (p.ep) p.ep->fn(p.ep->ctx, i, 0, p.m);
    }
    return NULL;
  }
  prod_run(&p);
  if (atomic_load(&p.no_memory)) return status_new(HLO_RESOURCE_EXHAUSTED, "gemm: out of memory");
  int st = atomic_load(&p.status);
  if (st) return status_new(HLO_INTERNAL, "gemm: oneDNN's bf16 gemm failed (status %d)", st);
  return NULL;
}

hlo_status cpu_gemm_ex(const backend_gemm *g, hlo_dtype c_dtype, const void *a, const void *b,
                       void *c) {
  return gemm_run(g, c_dtype, a, b, c, NULL);
}

hlo_status cpu_gemm(const backend_gemm *g, const void *a, const void *b, void *c) {
  return gemm_run(g, g->c_dtype, a, b, c, NULL);
}

hlo_status cpu_gemm_epilogue(const backend_gemm *g, const void *a, const void *b, void *c,
                             const backend_gemm_epilogue *ep) {
  return gemm_run(g, g->c_dtype, a, b, c, ep);
}
