/* test_gemm.c — the CPU backend's matrix products (backend/cpu/gemm.h):
 * f32, f64, bf16 -> f32 and bf16 -> bf16 against a double-precision sum on
 * every entry, for all four transpose pairs, batches, shapes on both sides
 * of the small-product crossover (OpenBLAS below, oneDNN above); exact
 * results where the sums are exact, bf16 results rounded once to nearest
 * even; K = 0; NaN in, NaN out; beta 0 ignoring NaN garbage in C and beta 1
 * accumulating, with leading dimensions past the matrix; the errors; and
 * products from several threads at once (the one-time thread setup). The
 * pool has 3 threads unless HLO_NUM_THREADS says otherwise, so that the
 * split paths run on any machine. */
#include <pthread.h>
#include <stdint.h>
#include <stdlib.h>
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

/* element (b, i, p) of op(A) and (b, p, j) of op(B), as doubles */
static double get(const void *x, hlo_dtype t, size_t idx) {
  if (t == HLO_F64) return ((const double *)x)[idx];
  if (t == HLO_F32) return ((const float *)x)[idx];
  return bf16_to_f32(((const uint16_t *)x)[idx]);
}
static size_t a_index(const backend_gemm *g, int64_t b, int64_t i, int64_t p) {
  return (size_t)(b * g->m * g->k + (g->trans_a ? p * g->m + i : i * g->k + p));
}
static size_t b_index(const backend_gemm *g, int64_t b, int64_t p, int64_t j) {
  return (size_t)(b * g->k * g->n + (g->trans_b ? j * g->k + p : p * g->n + j));
}

/* Runs cpu_gemm_ex on random operands (or small integers when `ints`: then
 * every sum is exact) and returns the number of entries off the double sum
 * by more than tol * sum |a||b| (bf16 C: plus half an ulp of bf16). */
static int run_case(backend_gemm g, hlo_dtype ct, double tol, int ints) {
  size_t es = hlo_dtype_size(g.dtype), ces = hlo_dtype_size(ct);
  size_t na = (size_t)(g.batch * g.m * g.k), nb = (size_t)(g.batch * g.k * g.n),
         nc = (size_t)(g.batch * g.m * g.n);
  void *a = malloc(na * es + 1), *b = malloc(nb * es + 1), *c = malloc(nc * ces + 1);
  for (size_t i = 0; i < na + nb; i++) {
    double v = ints ? (double)((int)(uniform() * 8)) : uniform();
    void *x = i < na ? a : b;
    size_t j = i < na ? i : i - na;
    if (g.dtype == HLO_F64) ((double *)x)[j] = v;
    else if (g.dtype == HLO_F32) ((float *)x)[j] = (float)v;
    else ((uint16_t *)x)[j] = f32_to_bf16((float)v);
  }
  memset(c, 0xff, nc * ces); /* NaN garbage: C must be overwritten */
  hlo_status st = cpu_gemm_ex(&g, ct, a, b, c);
  CHECK(st == NULL);
  int bad = 0;
  for (int64_t bi = 0; !st && bi < g.batch; bi++)
    for (int64_t i = 0; i < g.m; i++)
      for (int64_t j = 0; j < g.n; j++) {
        double sum = 0, mag = 0;
        for (int64_t p = 0; p < g.k; p++) {
          double u = get(a, g.dtype, a_index(&g, bi, i, p)), v = get(b, g.dtype, b_index(&g, bi, p, j));
          sum += u * v;
          mag += fabs(u * v);
        }
        double got = get(c, ct, (size_t)((bi * g.m + i) * g.n + j));
        double err = tol * mag + (ct == HLO_BF16 ? fabs(sum) / 256 : 0);
        if (ints && ct != HLO_BF16) err = 0; /* exact */
        if (ints && ct == HLO_BF16) sum = bf16_to_f32(f32_to_bf16((float)sum)), err = 0;
        if (!(fabs(got - sum) <= err)) {
          if (bad < 3)
            fprintf(stderr, "  %s->%s %lldx%lldx%lld b%lld t%d%d: C[%lld][%lld][%lld] = %.9g, want %.9g\n",
                    hlo_dtype_name(g.dtype), hlo_dtype_name(ct), (long long)g.m, (long long)g.n,
                    (long long)g.k, (long long)g.batch, g.trans_a, g.trans_b, (long long)bi,
                    (long long)i, (long long)j, got, sum);
          bad++;
        }
      }
  hlo_status_free(st);
  free(a);
  free(b);
  free(c);
  return bad;
}

/* shapes: below and above CPU_GEMM_SMALL (64^3), odd sizes, a K of 1;
 * past CPU_GEMM_SPLIT (128^3): split by rows (200 x 150), by columns
 * (40 x 600), and a batch spread over the pool (4 x 64 x 64 x 256) */
static const int64_t shapes[][4] = {{1, 1, 1, 1},      {3, 5, 7, 2},     {8, 16, 4, 3},
                                    {33, 17, 65, 1},   {64, 64, 64, 1},  {65, 64, 64, 1},
                                    {100, 37, 130, 2}, {7, 300, 1, 1},   {129, 70, 200, 1},
                                    {200, 150, 90, 1}, {40, 600, 100, 1}, {64, 64, 256, 4}};

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

TEST_MAIN()
