/* test_gemm.c — the CPU backend's matrix products (backend/cpu/gemm.h):
 * f32, f64, bf16 -> f32 and bf16 -> bf16 against a double-precision sum on
 * every entry, for all four transpose pairs, batches, shapes on both sides
 * of the small-product crossover (OpenBLAS below, oneDNN above); exact
 * results where the sums are exact, bf16 results rounded once to nearest
 * even; K = 0; NaN in, NaN out; beta 0 ignoring NaN garbage in C and beta 1
 * accumulating, with leading dimensions past the matrix; the errors; and
 * products from several threads at once (the one-time thread setup);
 * strided operands (a batch dim inside the rows); small products with B
 * transposed around the copy of B (sizes, strides, beta); the epilogue's contract
 * on pools of 1 to 7 threads (child processes); OpenBLAS's kernels are not
 * its SSE3 fallback on a CPU with AVX2 or AVX-512. The pool has 3 threads
 * unless HLO_NUM_THREADS says otherwise, so that the split paths run on
 * any machine. */
#include <dlfcn.h>
#include <pthread.h>
#include <spawn.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/wait.h>
#include "backend/cpu/cpu.h"
#include "backend/cpu/gemm.h"
#include "support/float.h"
#include "test.h"

__attribute__((constructor)) static void three_threads(void) {
  setenv("HLO_NUM_THREADS", "3", 0); /* before the pool's first use */
}

static _Thread_local uint64_t rng = 0x9E3779B97F4A7C15ull;
static double uniform(void) { /* in [-1, 1) */
  rng ^= rng << 13, rng ^= rng >> 7, rng ^= rng << 17;
  return (double)(rng >> 11) / 9007199254740992.0 * 2 - 1;
}

/* The layout of backend_gemm (backend.h): strides in elements, the dense
 * ones where a field is 0. */
typedef struct layout {
  int64_t lda, ldb, ldc, sa, sb, sc;
  size_t na, nb, nc; /* elements spanned by A, B and C */
} layout;
static int64_t or_dense(int64_t v, int64_t d) { return v ? v : d; }
static layout layout_of(const backend_gemm *g) {
  layout l;
  l.lda = or_dense(g->lda, g->trans_a ? g->m : g->k);
  l.ldb = or_dense(g->ldb, g->trans_b ? g->k : g->n);
  l.ldc = or_dense(g->ldc, g->n);
  l.sa = or_dense(g->batch_stride_a, g->m * g->k);
  l.sb = or_dense(g->batch_stride_b, g->k * g->n);
  l.sc = or_dense(g->batch_stride_c, g->m * g->n);
  int64_t ra = g->trans_a ? g->k : g->m, ca = g->trans_a ? g->m : g->k;
  int64_t rb = g->trans_b ? g->n : g->k, cb = g->trans_b ? g->k : g->n;
  l.na = (size_t)((g->batch - 1) * l.sa + (ra - 1) * l.lda + ca);
  l.nb = (size_t)((g->batch - 1) * l.sb + (rb - 1) * l.ldb + cb);
  l.nc = (size_t)((g->batch - 1) * l.sc + (g->m - 1) * l.ldc + g->n);
  return l;
}

/* element (b, i, p) of op(A) and (b, p, j) of op(B), as doubles */
static double get(const void *x, hlo_dtype t, size_t idx) {
  if (t == HLO_F64) return ((const double *)x)[idx];
  if (t == HLO_F32) return ((const float *)x)[idx];
  return bf16_to_f32(((const uint16_t *)x)[idx]);
}
static void put(void *x, hlo_dtype t, size_t idx, double v) {
  if (t == HLO_F64) ((double *)x)[idx] = v;
  else if (t == HLO_F32) ((float *)x)[idx] = (float)v;
  else ((uint16_t *)x)[idx] = f32_to_bf16((float)v);
}
static size_t a_index(const backend_gemm *g, const layout *l, int64_t b, int64_t i, int64_t p) {
  return (size_t)(b * l->sa + (g->trans_a ? p * l->lda + i : i * l->lda + p));
}
static size_t b_index(const backend_gemm *g, const layout *l, int64_t b, int64_t p, int64_t j) {
  return (size_t)(b * l->sb + (g->trans_b ? j * l->ldb + p : p * l->ldb + j));
}
static size_t c_index(const layout *l, int64_t b, int64_t i, int64_t j) {
  return (size_t)(b * l->sc + i * l->ldc + j);
}

/* What an epilogue saw (run_case with an epilogue): each row's calls, the
 * rows as they were when the hook ran (then the hook negates them in C). */
typedef struct seen {
  const backend_gemm *g;
  const layout *l;
  hlo_dtype ct;
  void *c, *snap;
  _Atomic int *calls; /* per row of every matrix */
  _Atomic int bad_block;
} seen;

static void record_rows(void *ctx, int64_t batch, int64_t lo, int64_t hi) {
  seen *e = ctx;
  if (batch < 0 || batch >= e->g->batch || lo < 0 || lo >= hi || hi > e->g->m) {
    atomic_fetch_add(&e->bad_block, 1);
    return;
  }
  for (int64_t i = lo; i < hi; i++) {
    atomic_fetch_add(&e->calls[batch * e->g->m + i], 1);
    for (int64_t j = 0; j < e->g->n; j++) {
      size_t x = c_index(e->l, batch, i, j);
      double v = get(e->c, e->ct, x);
      put(e->snap, e->ct, x, v);
      put(e->c, e->ct, x, -v);
    }
  }
}

/* Runs cpu_gemm_ex (cpu_gemm_epilogue when `epi`) on random operands (or
 * small integers when `ints`: then every sum is exact) and returns the
 * number of entries off the double sum by more than tol * sum |a||b|
 * (bf16 C: plus half an ulp of bf16), plus the elements of C's buffer
 * outside its matrices that were written. With an epilogue: the values
 * compared are those the hook saw, every row must have had exactly one
 * call, and C must hold them negated (the hook's write, untouched after). */
static int run_case_ep(backend_gemm g, hlo_dtype ct, double tol, int ints, int epi) {
  size_t es = hlo_dtype_size(g.dtype), ces = hlo_dtype_size(ct);
  layout l = layout_of(&g);
  size_t na = l.na, nb = l.nb, nc = l.nc;
  void *a = malloc(na * es + 1), *b = malloc(nb * es + 1), *c = malloc(nc * ces + 1),
       *snap = malloc(nc * ces + 1);
  _Atomic int *calls = calloc((size_t)(g.batch * g.m) + 1, sizeof *calls);
  for (size_t i = 0; i < na + nb; i++) {
    double v = ints ? (double)((int)(uniform() * 8)) : uniform();
    if (i < na) put(a, g.dtype, i, v);
    else put(b, g.dtype, i - na, v);
  }
  memset(c, 0xff, nc * ces); /* NaN garbage: C must be overwritten */
  memset(snap, 0xff, nc * ces);
  g.c_dtype = ct;
  seen e = {.g = &g, .l = &l, .ct = ct, .c = c, .snap = snap, .calls = calls};
  atomic_init(&e.bad_block, 0);
  backend_gemm_epilogue ep = {record_rows, &e};
  hlo_status st = epi ? cpu_gemm_epilogue(&g, a, b, c, &ep) : cpu_gemm_ex(&g, ct, a, b, c);
  CHECK(st == NULL);
  const void *res = epi ? snap : c;
  int bad = atomic_load(&e.bad_block);
  for (int64_t bi = 0; !st && bi < g.batch; bi++)
    for (int64_t i = 0; i < g.m; i++) {
      if (epi && atomic_load(&calls[bi * g.m + i]) != 1) {
        if (bad < 3)
          fprintf(stderr, "  epilogue: row %lld of matrix %lld seen %d times\n", (long long)i,
                  (long long)bi, atomic_load(&calls[bi * g.m + i]));
        bad++;
      }
      for (int64_t j = 0; j < g.n; j++) {
        double sum = 0, mag = 0;
        for (int64_t p = 0; p < g.k; p++) {
          double u = get(a, g.dtype, a_index(&g, &l, bi, i, p)),
                 v = get(b, g.dtype, b_index(&g, &l, bi, p, j));
          sum += u * v;
          mag += fabs(u * v);
        }
        size_t x = c_index(&l, bi, i, j);
        double got = get(res, ct, x);
        double err = tol * mag + (ct == HLO_BF16 ? fabs(sum) / 256 : 0);
        if (ints && ct != HLO_BF16) err = 0; /* exact */
        if (ints && ct == HLO_BF16) sum = bf16_to_f32(f32_to_bf16((float)sum)), err = 0;
        bool wrong = !(fabs(got - sum) <= err);
        if (epi && !wrong) wrong = get(c, ct, x) != -got && !(isnan(got) && isnan(get(c, ct, x)));
        if (wrong) {
          if (bad < 3)
            fprintf(stderr,
                    "  %s->%s %lldx%lldx%lld b%lld t%d%d%s: C[%lld][%lld][%lld] = %.9g, want "
                    "%.9g (C after: %.9g)\n",
                    hlo_dtype_name(g.dtype), hlo_dtype_name(ct), (long long)g.m, (long long)g.n,
                    (long long)g.k, (long long)g.batch, g.trans_a, g.trans_b,
                    epi ? " epilogue" : "", (long long)bi, (long long)i, (long long)j, got, sum,
                    get(c, ct, x));
          bad++;
        }
      }
    }
  /* the gaps between C's rows and matrices keep their garbage */
  char *hit = calloc(nc + 1, 1);
  for (int64_t bi = 0; bi < g.batch; bi++)
    for (int64_t i = 0; i < g.m; i++)
      for (int64_t j = 0; j < g.n; j++) hit[c_index(&l, bi, i, j)] = 1;
  for (size_t x = 0; x < nc; x++)
    if (!hit[x] && !isnan(get(c, ct, x))) {
      if (bad < 3) fprintf(stderr, "  element %zu of C's buffer, outside C, written\n", x);
      bad++;
    }
  free(hit);
  hlo_status_free(st);
  free(a);
  free(b);
  free(c);
  free(snap);
  free(calls);
  return bad;
}

static int run_case(backend_gemm g, hlo_dtype ct, double tol, int ints) {
  return run_case_ep(g, ct, tol, ints, 0);
}

/* shapes: below and above CPU_GEMM_SMALL (64^3), odd sizes, a K of 1;
 * past CPU_GEMM_SPLIT (128^3): split by rows (200 x 150), by columns
 * (40 x 600), and a batch spread over the pool (4 x 64 x 64 x 256); few
 * rows, many columns (run as the transposed product when B is transposed:
 * 32 x 256, 20 x 90) */
static const int64_t shapes[][4] = {{1, 1, 1, 1},      {3, 5, 7, 2},     {8, 16, 4, 3},
                                    {33, 17, 65, 1},   {64, 64, 64, 1},  {65, 64, 64, 1},
                                    {100, 37, 130, 2}, {7, 300, 1, 1},   {129, 70, 200, 1},
                                    {200, 150, 90, 1}, {40, 600, 100, 1}, {64, 64, 256, 4},
                                    {32, 256, 100, 1}, {20, 90, 160, 1}};

static int sweep(hlo_dtype t, hlo_dtype ct, double tol, int ints) {
  int bad = 0;
  for (size_t s = 0; s < sizeof shapes / sizeof shapes[0]; s++)
    for (int tt = 0; tt < 4; tt++) {
      backend_gemm g = {.dtype = t, .c_dtype = t, .m = shapes[s][0], .n = shapes[s][1], .k = shapes[s][2],
                        .batch = shapes[s][3], .trans_a = tt & 1, .trans_b = (tt >> 1) & 1};
      bad += run_case(g, ct, tol, ints);
    }
  return bad;
}

TEST(f32_against_double) { CHECK_EQ_INT(sweep(HLO_F32, HLO_F32, 2e-5, 0), 0); }
TEST(f32_exact_on_integers) { CHECK_EQ_INT(sweep(HLO_F32, HLO_F32, 0, 1), 0); }
TEST(f64_against_double) { CHECK_EQ_INT(sweep(HLO_F64, HLO_F64, 1e-13, 0), 0); }
TEST(bf16_to_f32) { CHECK_EQ_INT(sweep(HLO_BF16, HLO_F32, 2e-5, 0), 0); }
TEST(bf16_to_f32_exact_on_integers) { CHECK_EQ_INT(sweep(HLO_BF16, HLO_F32, 0, 1), 0); }
TEST(bf16_to_bf16_rounded_once) { CHECK_EQ_INT(sweep(HLO_BF16, HLO_BF16, 2e-5, 0), 0); }
/* integer sums past 256 are not all bf16 numbers: each must be the exact
 * sum rounded once to nearest even (e.g. 257 -> 256, 259 -> 260) */
TEST(bf16_to_bf16_exact_sum_rounded_to_even) {
  CHECK_EQ_INT(sweep(HLO_BF16, HLO_BF16, 0, 1), 0);
  uint16_t a[2] = {f32_to_bf16(1.0f), f32_to_bf16(1.0f)}, b[2] = {f32_to_bf16(256.0f),
                                                                  f32_to_bf16(3.0f)};
  uint16_t c = 0;
  backend_gemm g = {.dtype = HLO_BF16, .c_dtype = HLO_BF16, .batch = 1, .m = 1, .n = 1, .k = 2};
  CHECK(cpu_gemm(&g, a, b, &c) == NULL);
  CHECK_EQ_INT(c, f32_to_bf16(260.0f)); /* 259 -> 260 (even) */
  b[1] = f32_to_bf16(1.0f);
  CHECK(cpu_gemm(&g, a, b, &c) == NULL);
  CHECK_EQ_INT(c, f32_to_bf16(256.0f)); /* 257 -> 256 (even) */
}

TEST(k_zero_gives_zeros) {
  hlo_dtype ts[] = {HLO_F32, HLO_F64, HLO_BF16};
  for (int i = 0; i < 3; i++) {
    unsigned char c[2 * 4 * 3 * 8 + 8];
    memset(c, 0xff, sizeof c);
    backend_gemm g = {.dtype = ts[i], .c_dtype = ts[i], .batch = 2, .m = 4, .n = 3, .k = 0};
    CHECK(cpu_gemm(&g, NULL, NULL, c) == NULL);
    size_t bytes = 2 * 4 * 3 * hlo_dtype_size(ts[i]);
    int nonzero = 0;
    for (size_t j = 0; j < bytes; j++) nonzero += c[j] != 0;
    CHECK_EQ_INT(nonzero, 0);
    CHECK_EQ_INT(c[bytes], 0xff); /* nothing past the result */
  }
  float c = 5;
  backend_gemm g = {.dtype = HLO_F32, .c_dtype = HLO_F32, .batch = 1, .m = 0, .n = 1, .k = 4};
  CHECK(cpu_gemm(&g, NULL, NULL, &c) == NULL);
  CHECK(c == 5);
}

TEST(nan_propagates) {
  for (int big = 0; big < 2; big++) { /* OpenBLAS's and oneDNN's path */
    int64_t n = big ? 80 : 4;
    float *a = calloc((size_t)(n * n), 4), *b = calloc((size_t)(n * n), 4),
          *c = calloc((size_t)(n * n), 4);
    a[0] = NAN;
    for (int64_t i = 0; i < n * n; i++) b[i] = 1;
    backend_gemm g = {.dtype = HLO_F32, .c_dtype = HLO_F32, .batch = 1, .m = n, .n = n, .k = n};
    CHECK(cpu_gemm(&g, a, b, c) == NULL);
    CHECK(isnan(c[0]) && isnan(c[n - 1]));
    CHECK(c[n] == 0); /* row 1 has no NaN */
    free(a), free(b), free(c);
  }
  uint16_t a[2] = {f32_to_bf16(NAN), 0}, b[2] = {f32_to_bf16(1), f32_to_bf16(1)}, c = 0;
  backend_gemm g = {.dtype = HLO_BF16, .c_dtype = HLO_BF16, .batch = 1, .m = 1, .n = 1, .k = 2};
  CHECK(cpu_gemm(&g, a, b, &c) == NULL);
  CHECK(isnan(bf16_to_f32(c)));
}

/* cpu_sgemm / cpu_dgemm on a sub-block (leading dims past the matrix):
 * beta 0 overwrites NaN garbage, beta 1 adds, the padding is untouched. */
TEST(strided_beta) {
  for (int big = 0; big < 2; big++) {
    int64_t m = big ? 70 : 5, n = big ? 66 : 4, k = big ? 90 : 3, ld = 100;
    float *a = malloc((size_t)(m * ld) * 4), *b = malloc((size_t)(k * ld) * 4),
          *c = malloc((size_t)(m * ld) * 4);
    double *ad = malloc((size_t)(m * ld) * 8), *bd = malloc((size_t)(k * ld) * 8),
           *cd = malloc((size_t)(m * ld) * 8);
    for (int64_t i = 0; i < m * ld; i++) a[i] = (float)(ad[i] = (int)(uniform() * 4));
    for (int64_t i = 0; i < k * ld; i++) b[i] = (float)(bd[i] = (int)(uniform() * 4));
    memset(c, 0xff, (size_t)(m * ld) * 4);
    memset(cd, 0xff, (size_t)(m * ld) * 8);
    cpu_sgemm(false, false, m, n, k, a, ld, b, ld, 0.0f, c, ld);
    cpu_dgemm(false, false, m, n, k, ad, ld, bd, ld, 0.0, cd, ld);
    cpu_sgemm(false, false, m, n, k, a, ld, b, ld, 1.0f, c, ld);
    cpu_dgemm(false, false, m, n, k, ad, ld, bd, ld, 1.0, cd, ld);
    int bad = 0, touched = 0;
    for (int64_t i = 0; i < m; i++) {
      for (int64_t j = 0; j < n; j++) {
        double s = 0;
        for (int64_t p = 0; p < k; p++) s += ad[i * ld + p] * bd[p * ld + j];
        bad += c[i * ld + j] != (float)(2 * s) || cd[i * ld + j] != 2 * s;
      }
      for (int64_t j = n; j < ld; j++) touched += !isnan(c[i * ld + j]) || !isnan(cd[i * ld + j]);
    }
    CHECK_EQ_INT(bad, 0);
    CHECK_EQ_INT(touched, 0);
    free(a), free(b), free(c), free(ad), free(bd), free(cd);
  }
}

/* Small f32 products with B transposed (A either way) on both sides of the
 * copy of B into its untransposed form (gemm.h: CPU_GEMM_TB_COPY_M rows,
 * CPU_GEMM_TB_COPY floats of B): sizes around the 8 x 8 blocks of the
 * copy, padded leading dimensions, beta 0 over NaN garbage and beta 1;
 * integer data, so every sum is exact. Then batches through cpu_gemm, the
 * per-matrix B strided past its rows. */
TEST(small_b_transposed) {
  const int64_t ms[] = {1, 7, 8, 9, 31}, ns[] = {1, 7, 8, 15, 17, 64, 65}, ks[] = {1, 8, 13, 64};
  int bad = 0, cases = 0;
  for (int ta = 0; ta < 2; ta++)
    for (size_t x = 0; x < sizeof ms / sizeof *ms; x++)
      for (size_t y = 0; y < sizeof ns / sizeof *ns; y++)
        for (size_t z = 0; z < sizeof ks / sizeof *ks; z++) {
          int64_t m = ms[x], n = ns[y], k = ks[z], lda = (ta ? m : k) + 3, ldb = k + 5,
                  ldc = n + 2;
          float *a = malloc((size_t)((ta ? k : m) * lda) * 4), *b = malloc((size_t)(n * ldb) * 4),
                *c = malloc((size_t)(m * ldc) * 4);
          for (int64_t i = 0; i < (ta ? k : m) * lda; i++) a[i] = (float)(int)(uniform() * 4);
          for (int64_t i = 0; i < n * ldb; i++) b[i] = (float)(int)(uniform() * 4);
          memset(c, 0xff, (size_t)(m * ldc) * 4); /* NaN */
          cpu_sgemm(ta, true, m, n, k, a, lda, b, ldb, 0.0f, c, ldc);
          cpu_sgemm(ta, true, m, n, k, a, lda, b, ldb, 1.0f, c, ldc);
          for (int64_t i = 0; i < m; i++) {
            for (int64_t j = 0; j < n; j++) {
              double sum = 0;
              for (int64_t p = 0; p < k; p++)
                sum += (double)a[ta ? p * lda + i : i * lda + p] * b[j * ldb + p];
              bad += c[i * ldc + j] != (float)(2 * sum);
            }
            for (int64_t j = n; j < ldc; j++) bad += !isnan(c[i * ldc + j]);
          }
          cases++;
          free(a), free(b), free(c);
        }
  CHECK_EQ_INT(cases, 280);
  CHECK_EQ_INT(bad, 0);
  /* batched, B's matrices apart by more than their rows */
  for (int64_t nb = 1; nb <= 9; nb += 4)
    for (int ta = 0; ta < 2; ta++) {
      backend_gemm g = {.dtype = HLO_F32, .c_dtype = HLO_F32, .batch = nb, .m = 16, .n = 13,
                        .k = 24, .trans_a = ta, .trans_b = true, .ldb = 27,
                        .batch_stride_b = 13 * 27 + 4};
      CHECK_EQ_INT(run_case(g, HLO_F32, 0, 1), 0);
      g.m = 9, g.n = 32, g.k = 16, g.ldb = 0, g.batch_stride_b = 0;
      CHECK_EQ_INT(run_case(g, HLO_F32, 0, 1), 0);
    }
}

TEST(errors) {
  float x = 0;
  backend_gemm g = {.dtype = HLO_F16, .c_dtype = HLO_F16, .batch = 1, .m = 1, .n = 1, .k = 1};
  hlo_status st = cpu_gemm(&g, &x, &x, &x);
  CHECK(st && hlo_status_code_of(st) == HLO_UNIMPLEMENTED);
  hlo_status_free(st);
  g.dtype = g.c_dtype = HLO_BF16;
  st = cpu_gemm_ex(&g, HLO_F64, &x, &x, &x);
  CHECK(st && hlo_status_code_of(st) == HLO_UNIMPLEMENTED);
  hlo_status_free(st);
  g.dtype = g.c_dtype = HLO_F32;
  st = cpu_gemm_ex(&g, HLO_BF16, &x, &x, &x);
  CHECK(st && hlo_status_code_of(st) == HLO_UNIMPLEMENTED);
  hlo_status_free(st);
  g.m = -1;
  st = cpu_gemm(&g, &x, &x, &x);
  CHECK(st && hlo_status_code_of(st) == HLO_INVALID_ARGUMENT);
  hlo_status_free(st);
  g.m = 1, g.k = (int64_t)1 << 31;
  st = cpu_gemm(&g, &x, &x, &x);
  CHECK(st && hlo_status_code_of(st) == HLO_INVALID_ARGUMENT);
  CHECK(st && strstr(hlo_status_message(st), "int"));
  hlo_status_free(st);
}

/* Strided operands (backend_gemm's lda..batch_stride_c): a batch dim
 * inside the rows ([rows, batch, cols], the heads of attention), rows with
 * padding, each type (every transpose pair on f32), with and without an
 * epilogue, on one thread and split; the gaps stay untouched. */
TEST(strided_batches) {
  hlo_dtype ts[][2] = {{HLO_F32, HLO_F32}, {HLO_F64, HLO_F64}, {HLO_BF16, HLO_F32},
                       {HLO_BF16, HLO_BF16}};
  int64_t sizes[][4] = {{37, 29, 19, 3}, {100, 120, 64, 3}, {32, 256, 64, 2}}; /* serial, split */
  int bad = 0;
  for (int t = 0; t < 4; t++)
    for (int z = 0; z < 3; z++)
      for (int tt = 0; tt < (t ? 1 : 4); tt++) { /* the transposes on f32 */
        int64_t m = sizes[z][0], n = sizes[z][1], k = sizes[z][2], nb = sizes[z][3];
        bool ta = tt & 1, tb = tt >> 1;
        backend_gemm g = {.dtype = ts[t][0], .batch = nb, .m = m, .n = n, .k = k,
                          .trans_a = ta, .trans_b = tb};
        /* A: [rows][batch][cols] (heads inside rows); B: padded rows, dense
         * batch; C: [m][batch][n] */
        g.lda = nb * (ta ? m : k), g.batch_stride_a = ta ? m : k;
        g.ldb = (tb ? k : n) + 3, g.batch_stride_b = (tb ? n : k) * g.ldb + 5;
        g.ldc = nb * n + 1, g.batch_stride_c = n;
        bad += run_case_ep(g, ts[t][1], ts[t][0] == HLO_F64 ? 1e-13 : 2e-5, 0, 0);
        bad += run_case_ep(g, ts[t][1], 0, 1, 1);
      }
  CHECK_EQ_INT(bad, 0);
  backend_gemm g = {.dtype = HLO_F32, .c_dtype = HLO_F32, .batch = 1, .m = 4, .n = 3, .k = 2,
                    .lda = 1};
  float x[64] = {0};
  hlo_status st = cpu_gemm(&g, x, x, x); /* lda shorter than a row of A */
  CHECK(st && hlo_status_code_of(st) == HLO_INVALID_ARGUMENT && strstr(hlo_status_message(st), "lda"));
  hlo_status_free(st);
  g.lda = 0, g.batch_stride_c = -1;
  st = cpu_gemm(&g, x, x, x);
  CHECK(st && hlo_status_code_of(st) == HLO_INVALID_ARGUMENT);
  hlo_status_free(st);
}

/* The epilogue's contract (backend.h, backend_gemm_epilogue) on this
 * process's pool: every row of every matrix in exactly one call, the rows
 * final when the hook runs (the hook's view is checked against the double
 * sum), nothing written to them after (the hook negates them), on the
 * split paths (a batch over the pool, rows of one matrix, a batch smaller
 * than the threads, one block a thread when B is large), fewer rows than
 * threads, one row, one matrix of a wide product (split by columns
 * without an epilogue), K = 0, every type. */
static int epilogue_cases(bool light) {
  /* m, n, k, batch, whether `light` runs it */
  static const int64_t sh[][5] = {{200, 150, 90, 1, 1}, {40, 600, 100, 1, 0}, {64, 64, 256, 5, 1},
                                  {256, 256, 32, 3, 1}, {3, 2000, 400, 1, 1}, {1, 4096, 600, 1, 1},
                                  {1, 50, 7, 5, 1},     {5, 7, 3, 2, 1},      {3, 4, 0, 2, 1},
                                  {32, 256, 128, 4, 0}, {20, 1030, 256, 1, 1}};
  hlo_dtype ts[][2] = {{HLO_F32, HLO_F32}, {HLO_F64, HLO_F64}, {HLO_BF16, HLO_F32},
                       {HLO_BF16, HLO_BF16}};
  int bad = 0;
  for (size_t z = 0; z < sizeof sh / sizeof sh[0]; z++)
    for (int t = 0; t < 4; t++)
      for (int tt = 0; tt < 4; tt++) {
        /* the transposes on f32 only, the other types on the smaller
         * shapes, the largest untransposed only; `light` (the child
         * processes): f32, no transposes */
        if ((t || light || sh[z][0] * sh[z][1] * sh[z][2] * sh[z][3] > 5000000) && tt) continue;
        if (light && !sh[z][4]) continue;
        if (t && (light || sh[z][0] * sh[z][1] * sh[z][2] * sh[z][3] > 3000000)) continue;
        backend_gemm g = {.dtype = ts[t][0], .batch = sh[z][3], .m = sh[z][0], .n = sh[z][1],
                          .k = sh[z][2], .trans_a = tt & 1, .trans_b = tt >> 1};
        bad += run_case_ep(g, ts[t][1], 0, 1, 1);
      }
  /* random floats: the hook's rows against the double sum */
  backend_gemm g = {.dtype = HLO_F32, .batch = 3, .m = 150, .n = 100, .k = 80};
  bad += run_case_ep(g, HLO_F32, 2e-5, 0, 1);
  /* a NULL epilogue, or a NULL hook: a plain gemm */
  float a[6] = {1, 2, 3, 4, 5, 6}, c[4] = {0};
  backend_gemm s = {.dtype = HLO_F32, .c_dtype = HLO_F32, .batch = 1, .m = 2, .n = 2, .k = 3};
  backend_gemm_epilogue none = {NULL, NULL};
  hlo_status st = cpu_gemm_epilogue(&s, a, a, c, NULL);
  bad += st != NULL || c[0] != 1 * 1 + 2 * 3 + 3 * 5;
  hlo_status_free(st);
  st = cpu_gemm_epilogue(&s, a, a, c, &none);
  bad += st != NULL || c[3] != 4 * 2 + 5 * 4 + 6 * 6;
  hlo_status_free(st);
  return bad;
}

TEST(epilogue) { CHECK_EQ_INT(epilogue_cases(false), 0); }

/* The same (f32, untransposed) in child processes with pools of 1, 2, 4
 * and 7 threads (the pool's size is fixed per process): this binary run
 * again with TEST_GEMM_EPILOGUE_ONLY set runs only epilogue_cases. */
extern char **environ;
__attribute__((constructor)) static void epilogue_child(void) {
  if (!getenv("TEST_GEMM_EPILOGUE_ONLY")) return;
  int bad = epilogue_cases(true);
  printf("epilogue on %s threads: %d bad\n", getenv("HLO_NUM_THREADS"), bad);
  exit(bad ? 1 : 0);
}

TEST(epilogue_on_1_2_4_7_threads) {
  const char *counts[] = {"1", "2", "4", "7"};
  for (int i = 0; i < 4; i++) {
    char threads[32], only[] = "TEST_GEMM_EPILOGUE_ONLY=1";
    snprintf(threads, sizeof threads, "HLO_NUM_THREADS=%s", counts[i]);
    size_t n = 0;
    while (environ[n]) n++;
    char **env = calloc(n + 3, sizeof *env);
    size_t k = 0;
    for (size_t j = 0; j < n; j++)
      if (strncmp(environ[j], "HLO_NUM_THREADS=", 16)) env[k++] = environ[j];
    env[k++] = threads;
    env[k++] = only;
    char *argv[] = {"test_gemm", NULL};
    pid_t pid;
    int rc = posix_spawn(&pid, "/proc/self/exe", NULL, NULL, argv, env);
    CHECK_EQ_INT(rc, 0);
    int status = 0;
    if (!rc) CHECK(waitpid(pid, &status, 0) == pid);
    CHECK(!rc && WIFEXITED(status) && WEXITSTATUS(status) == 0);
    free(env);
  }
}

static void *worker(void *arg) {
  int *bad = arg;
  /* oneDNN's path, OpenBLAS's small path and OpenBLAS's f64, each called
   * from several threads at once */
  backend_gemm g = {.dtype = HLO_F32, .c_dtype = HLO_F32, .batch = 2, .m = 96, .n = 80, .k = 72},
               tiny = {.dtype = HLO_F32, .batch = 3, .m = 12, .n = 20, .k = 9},
               f64 = {.dtype = HLO_F64, .batch = 1, .m = 150, .n = 40, .k = 50};
  for (int r = 0; r < 4; r++)
    *bad += run_case(g, HLO_F32, 0, 1) + run_case(g, HLO_F32, 2e-5, 0) +
            run_case(tiny, HLO_F32, 2e-5, 0) + run_case(f64, HLO_F64, 1e-13, 0);
  return NULL;
}

TEST(from_several_threads) {
  pthread_t t[3];
  int bad[3] = {0, 0, 0};
  for (int i = 0; i < 3; i++) CHECK(pthread_create(&t[i], NULL, worker, &bad[i]) == 0);
  for (int i = 0; i < 3; i++) pthread_join(t[i], NULL);
  CHECK_EQ_INT(bad[0] + bad[1] + bad[2], 0);
  CHECK(cpu_gemm_threads() >= 1);
}

/* OpenBLAS's kernels fit the CPU: not its SSE3 fallback "Prescott" on a CPU
 * with AVX2 or AVX-512, which OpenBLAS 0.3.21 picks for a model it does not
 * know (gemm.c, "OpenBLAS's kernel set", chooses again at start-up) unless
 * the user chose with OPENBLAS_CORETYPE or HLO_OPENBLAS_KEEP_CORE. A
 * product on the small path (OpenBLAS) is checked to run after it. */
TEST(openblas_kernels_fit_the_cpu) {
  char *(*corename)(void);
  *(void **)&corename = dlsym(RTLD_DEFAULT, "openblas_get_corename");
  if (!corename || getenv("OPENBLAS_CORETYPE") || getenv("HLO_OPENBLAS_KEEP_CORE")) return;
#if defined(__x86_64__) && defined(__GNUC__)
  __builtin_cpu_init();
  bool wide = (__builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma")) ||
              __builtin_cpu_supports("avx512f");
  const char *now = corename();
  CHECK(now != NULL);
  if (wide && now) CHECK(strcasecmp(now, "Prescott") != 0);
#endif
  backend_gemm tiny = {.dtype = HLO_F32, .batch = 2, .m = 16, .n = 16, .k = 8},
               f64 = {.dtype = HLO_F64, .batch = 1, .m = 20, .n = 30, .k = 40};
  CHECK_EQ_INT(run_case(tiny, HLO_F32, 2e-5, 0) + run_case(f64, HLO_F64, 1e-13, 0), 0);
}

TEST_MAIN()
