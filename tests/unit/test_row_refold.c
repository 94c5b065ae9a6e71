/* test_row_refold.c — the exact refold of a max or min row fold with plain
 * compares (codegen/cstyle.c, fast_minmax and print_exact_refold): a row
 * whose fast fold met a NaN element, or made a 0 or NaN value, is folded
 * again in one loop — the sign bits of its zeros, or the NaN the exact
 * combiner keeps when folded from the init over the row in row-major
 * order. Every case is checked bit for bit, NaN payloads included, against
 * that sequential fold written here in C:
 *   - f32 (32 lanes) and f64 (16 lanes), max and min;
 *   - the combiner with the accumulator first (stablehlo.maximum %acc, %x:
 *     the first NaN wins) and with the element first (the last NaN wins);
 *   - a fold over two dims (the row loops nested: the search leaves both);
 *   - the folded value kept in a temporary (a softmax's max, which its
 *     exp stage reads again);
 *   - a NaN init (the accumulator first: the init itself) and a +0 init
 *     (ReLU's max: the sign of zero rows);
 *   - rows of -0 and +0 in every order, NaNs of several payloads and signs
 *     in lanes and the tail, all -inf, negatives only, random rows.
 * The generated C is dumped and checked to hold the refold, so the
 * comparison is not vacuous. Without a C compiler the test prints
 * "skipped". */
#include <dirent.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "hlo/hlo.h"
#include "test.h"
#include "testlib.h"

enum { ROWS = 24, COLS = 67, MID = 3 };

static uint64_t rng = 0x2545F4914F6CDD1Dull;
static uint64_t rnd64(void) {
  rng ^= rng << 13, rng ^= rng >> 7, rng ^= rng << 17;
  return rng;
}

/* ---------------------------------------------------------- reference */

/* IEEE maximum / minimum as the kernels' hlo_max / hlo_min: the first NaN
 * operand, else the second's; +0 > -0. */
static double ref_max(double a, double b) {
  if (a != a) return a;
  if (b != b) return b;
  if (a == b) return signbit(a) ? b : a;
  return a > b ? a : b;
}
static double ref_min(double a, double b) {
  if (a != a) return a;
  if (b != b) return b;
  if (a == b) return signbit(a) ? a : b;
  return a < b ? a : b;
}
static float ref_maxf(float a, float b) {
  if (a != a) return a;
  if (b != b) return b;
  if (a == b) return signbit(a) ? b : a;
  return a > b ? a : b;
}
static float ref_minf(float a, float b) {
  if (a != a) return a;
  if (b != b) return b;
  if (a == b) return signbit(a) ? a : b;
  return a < b ? a : b;
}

/* ---------------------------------------------------------- the rows */

static const uint32_t nan32[4] = {0x7fc00001u, 0x7fc00002u, 0xffc00123u, 0x7fa00004u};
static const uint64_t nan64[4] = {0x7ff8000000000001ull, 0x7ff8000000000002ull,
                                  0xfff8000000000123ull, 0x7ff4000000000004ull};

/* Element i (of n) of row r, as a double; *nan_k >= 0: it is NaN number
 * nan_k instead (its bits set by the caller, per type). */
static double row_value(int64_t r, int64_t i, int64_t n, int *nan_k) {
  *nan_k = -1;
  int64_t c = i % COLS;
  switch (r % 12) {
  case 0: return -0.0;                                        /* all -0 */
  case 1: return i % 2 ? 0.0 : -0.0;                          /* -0, +0, ... */
  case 2: return i % 2 ? -0.0 : 0.0;                          /* +0, -0, ... */
  case 3:                                                     /* two NaNs in lanes */
    if (i == 5) *nan_k = 0;
    if (i == 40) *nan_k = 1;
    return (double)c;
  case 4:                                                     /* NaN in a lane and the tail */
    if (i == 3) *nan_k = 1;
    if (i == n - 1) *nan_k = 0;
    return -(double)c;
  case 5: return -INFINITY;                                   /* all -inf */
  case 6: return -1.0 - (double)i;                            /* negatives only */
  case 7: return i == n - 2 ? 0.0 : -1.0 - (double)c;         /* a lone +0 in the tail */
  case 8: return i == 7 ? -0.0 : 1.0 + (double)c;             /* one -0 among positives */
  case 9:                                                     /* signed and signalling NaNs */
    if (i == 10) *nan_k = 2;
    if (i == 20) *nan_k = 3;
    if (i == n - 3) *nan_k = 0;
    return 1.0;
  case 10: return i == 0 ? 0.0 : (i % 3 ? -0.0 : -2.0);       /* +0 first, then <= 0 */
  default: {                                                  /* random, a NaN in some */
    if (r % 24 == 23 && i == n / 2) *nan_k = 1;
    double u = (double)(rnd64() >> 11) / 9007199254740992.0;
    return (u - 0.5) * 8.0;
  }
  }
}

static void fill_f32(float *x, int64_t rows, int64_t n) {
  for (int64_t r = 0; r < rows; r++)
    for (int64_t i = 0; i < n; i++) {
      int k;
      float v = (float)row_value(r, i, n, &k);
      if (k >= 0) memcpy(&v, &nan32[k], 4);
      x[r * n + i] = v;
    }
}

static void fill_f64(double *x, int64_t rows, int64_t n) {
  for (int64_t r = 0; r < rows; r++)
    for (int64_t i = 0; i < n; i++) {
      int k;
      double v = row_value(r, i, n, &k);
      if (k >= 0) memcpy(&v, &nan64[k], 8);
      x[r * n + i] = v;
    }
}

/* ---------------------------------------------------------- running */

static void remove_dir(const char *dir) {
  DIR *d = opendir(dir);
  struct dirent *e;
  while (d && (e = readdir(d))) {
    if (!strcmp(e->d_name, ".") || !strcmp(e->d_name, "..")) continue;
    char p[512];
    snprintf(p, sizeof p, "%s/%s", dir, e->d_name);
    unlink(p);
  }
  if (d) closedir(d);
  rmdir(dir);
}

static int compiler = -1; /* -1 unknown, 0 none (skipped), 1 yes */

/* Compiles `text` for the CPU (its C dumped, checked to hold every needle),
 * runs it on the one argument `arg`, and returns its `nres` results
 * (caller frees with free_results), or NULL when skipped or failed. */
static hlo_buffer **run_cpu(const char *what, const char *text, const hlo_buffer_view *arg,
                            const char *const *needles, int nneedles) {
  if (compiler == 0) return NULL;
  hlo_module *mod = NULL;
  hlo_status st = hlo_module_parse("row_refold.mlir", text, strlen(text), &mod);
  if (st) hlo_status_print(st, stderr);
  CHECK(!st);
  char dir[] = "/tmp/hlo_row_refold_XXXXXX";
  bool made = mkdtemp(dir) != NULL;
  CHECK(made);
  hlo_buffer **got = NULL;
  hlo_executable *e = NULL;
  if (!st && made) {
    hlo_compile_options o;
    memset(&o, 0, sizeof o);
    o.backend = HLO_BACKEND_CPU;
    o.dump_dir = dir;
    st = hlo_executable_compile(mod, NULL, &o, &e);
    if (!st) st = hlo_executable_run(e, arg, 1, &got);
  }
  if (st && hlo_status_code_of(st) == HLO_UNAVAILABLE) {
    printf("  %s: skipped: no C compiler (%s)\n", what, hlo_status_message(st));
    compiler = 0;
  } else {
    if (st) hlo_status_print(st, stderr);
    CHECK(!st);
    compiler = 1;
  }
  for (int i = 0; !st && made && i < nneedles; i++) {
    bool has = tl_dump_has(dir, needles[i]);
    if (!has) printf("  %s: the generated C has no \"%s\"\n", what, needles[i]);
    CHECK(has);
  }
  if (made) remove_dir(dir);
  hlo_executable_destroy(e);
  hlo_module_destroy(mod);
  bool failed = st != NULL;
  hlo_status_free(st);
  return failed ? NULL : got;
}

static void free_results(hlo_buffer **b, int n) {
  for (int i = 0; b && i < n; i++) hlo_buffer_destroy(b[i]);
  free(b);
}

/* Compares got[0..rows) with want bit for bit; prints the first misses. */
static void check_f32(const char *what, const float *got, const float *want, int64_t rows) {
  int64_t bad = 0;
  for (int64_t r = 0; r < rows; r++) {
    uint32_t a, b;
    memcpy(&a, &got[r], 4);
    memcpy(&b, &want[r], 4);
    if (a != b && bad++ < 4)
      printf("  %s: row %lld (pattern %lld): got 0x%08x, want 0x%08x\n", what, (long long)r,
             (long long)(r % 12), a, b);
  }
  CHECK_EQ_INT(bad, 0);
}

static void check_f64(const char *what, const double *got, const double *want, int64_t rows) {
  int64_t bad = 0;
  for (int64_t r = 0; r < rows; r++) {
    uint64_t a, b;
    memcpy(&a, &got[r], 8);
    memcpy(&b, &want[r], 8);
    if (a != b && bad++ < 4)
      printf("  %s: row %lld (pattern %lld): got 0x%016llx, want 0x%016llx\n", what,
             (long long)r, (long long)(r % 12), (unsigned long long)a, (unsigned long long)b);
  }
  CHECK_EQ_INT(bad, 0);
}

/* ---------------------------------------------------------- programs */

/* max and min over the rows of a [ROWS, COLS] f32 (accumulator first) */
static const char *k_f32 =
    "func.func @main(%x: tensor<24x67xf32>) -> (tensor<24xf32>, tensor<24xf32>) {\n"
    "  %ninf = stablehlo.constant dense<0xFF800000> : tensor<f32>\n"
    "  %pinf = stablehlo.constant dense<0x7F800000> : tensor<f32>\n"
    "  %mx = stablehlo.reduce(%x init: %ninf) applies stablehlo.maximum across dimensions = [1] "
    ": (tensor<24x67xf32>, tensor<f32>) -> tensor<24xf32>\n"
    "  %mn = stablehlo.reduce(%x init: %pinf) applies stablehlo.minimum across dimensions = [1] "
    ": (tensor<24x67xf32>, tensor<f32>) -> tensor<24xf32>\n"
    "  return %mx, %mn : tensor<24xf32>, tensor<24xf32>\n"
    "}\n";

TEST(f32_rows_refold_to_the_sequential_fold) {
  static float x[ROWS * COLS];
  fill_f32(x, ROWS, COLS);
  int64_t dims[2] = {ROWS, COLS};
  hlo_buffer_view arg = {HLO_F32, 2, dims, x};
  const char *needles[] = {"hlo_z0 &= hlo_fbits", "goto hlo_found0;"};
  hlo_buffer **got = run_cpu("f32 max/min", k_f32, &arg, needles, 2);
  if (!got) return;
  float want_mx[ROWS], want_mn[ROWS];
  for (int64_t r = 0; r < ROWS; r++) {
    float a = -INFINITY, b = INFINITY;
    for (int64_t i = 0; i < COLS; i++) {
      a = ref_maxf(a, x[r * COLS + i]);
      b = ref_minf(b, x[r * COLS + i]);
    }
    want_mx[r] = a, want_mn[r] = b;
  }
  check_f32("f32 max", hlo_buffer_data(got[0]), want_mx, ROWS);
  check_f32("f32 min", hlo_buffer_data(got[1]), want_mn, ROWS);
  free_results(got, 2);
}

/* the same in f64 (16 lanes of 8 bytes) */
static const char *k_f64 =
    "func.func @main(%x: tensor<24x67xf64>) -> (tensor<24xf64>, tensor<24xf64>) {\n"
    "  %ninf = stablehlo.constant dense<0xFFF0000000000000> : tensor<f64>\n"
    "  %pinf = stablehlo.constant dense<0x7FF0000000000000> : tensor<f64>\n"
    "  %mx = stablehlo.reduce(%x init: %ninf) applies stablehlo.maximum across dimensions = [1] "
    ": (tensor<24x67xf64>, tensor<f64>) -> tensor<24xf64>\n"
    "  %mn = stablehlo.reduce(%x init: %pinf) applies stablehlo.minimum across dimensions = [1] "
    ": (tensor<24x67xf64>, tensor<f64>) -> tensor<24xf64>\n"
    "  return %mx, %mn : tensor<24xf64>, tensor<24xf64>\n"
    "}\n";

TEST(f64_rows_refold_to_the_sequential_fold) {
  static double x[ROWS * COLS];
  fill_f64(x, ROWS, COLS);
  int64_t dims[2] = {ROWS, COLS};
  hlo_buffer_view arg = {HLO_F64, 2, dims, x};
  const char *needles[] = {"hlo_z0 &= hlo_dbits", "uint64_t hlo_z"};
  hlo_buffer **got = run_cpu("f64 max/min", k_f64, &arg, needles, 2);
  if (!got) return;
  double want_mx[ROWS], want_mn[ROWS];
  for (int64_t r = 0; r < ROWS; r++) {
    double a = -INFINITY, b = INFINITY;
    for (int64_t i = 0; i < COLS; i++) {
      a = ref_max(a, x[r * COLS + i]);
      b = ref_min(b, x[r * COLS + i]);
    }
    want_mx[r] = a, want_mn[r] = b;
  }
  check_f64("f64 max", hlo_buffer_data(got[0]), want_mx, ROWS);
  check_f64("f64 min", hlo_buffer_data(got[1]), want_mn, ROWS);
  free_results(got, 2);
}

/* the element first in the combiner: maximum(%e, %acc), minimum(%e, %acc) */
static const char *k_elem_first =
    "func.func @main(%x: tensor<24x67xf32>) -> (tensor<24xf32>, tensor<24xf32>) {\n"
    "  %ninf = stablehlo.constant dense<0xFF800000> : tensor<f32>\n"
    "  %pinf = stablehlo.constant dense<0x7F800000> : tensor<f32>\n"
    "  %mx = stablehlo.reduce(%x init: %ninf) across dimensions = [1] "
    ": (tensor<24x67xf32>, tensor<f32>) -> tensor<24xf32>\n"
    "    reducer(%a: tensor<f32>, %e: tensor<f32>) {\n"
    "      %m = stablehlo.maximum %e, %a : tensor<f32>\n"
    "      stablehlo.return %m : tensor<f32>\n"
    "    }\n"
    "  %mn = stablehlo.reduce(%x init: %pinf) across dimensions = [1] "
    ": (tensor<24x67xf32>, tensor<f32>) -> tensor<24xf32>\n"
    "    reducer(%a: tensor<f32>, %e: tensor<f32>) {\n"
    "      %m = stablehlo.minimum %e, %a : tensor<f32>\n"
    "      stablehlo.return %m : tensor<f32>\n"
    "    }\n"
    "  return %mx, %mn : tensor<24xf32>, tensor<24xf32>\n"
    "}\n";

TEST(element_first_combiner_keeps_the_last_nan) {
  static float x[ROWS * COLS];
  fill_f32(x, ROWS, COLS);
  int64_t dims[2] = {ROWS, COLS};
  hlo_buffer_view arg = {HLO_F32, 2, dims, x};
  const char *needles[] = {"hlo_z0 &= hlo_fbits", "hlo_nan0"};
  hlo_buffer **got = run_cpu("element-first max/min", k_elem_first, &arg, needles, 2);
  if (!got) return;
  float want_mx[ROWS], want_mn[ROWS];
  for (int64_t r = 0; r < ROWS; r++) {
    float a = -INFINITY, b = INFINITY;
    for (int64_t i = 0; i < COLS; i++) {
      a = ref_maxf(x[r * COLS + i], a);
      b = ref_minf(x[r * COLS + i], b);
    }
    want_mx[r] = a, want_mn[r] = b;
  }
  check_f32("element-first max", hlo_buffer_data(got[0]), want_mx, ROWS);
  check_f32("element-first min", hlo_buffer_data(got[1]), want_mn, ROWS);
  free_results(got, 2);
}

/* a fold over two dims [MID, COLS] of a [ROWS, MID, COLS] f32 */
static const char *k_two_dims =
    "func.func @main(%x: tensor<24x3x67xf32>) -> (tensor<24xf32>, tensor<24xf32>) {\n"
    "  %ninf = stablehlo.constant dense<0xFF800000> : tensor<f32>\n"
    "  %pinf = stablehlo.constant dense<0x7F800000> : tensor<f32>\n"
    "  %mx = stablehlo.reduce(%x init: %ninf) applies stablehlo.maximum across dimensions = "
    "[1, 2] : (tensor<24x3x67xf32>, tensor<f32>) -> tensor<24xf32>\n"
    "  %mn = stablehlo.reduce(%x init: %pinf) applies stablehlo.minimum across dimensions = "
    "[1, 2] : (tensor<24x3x67xf32>, tensor<f32>) -> tensor<24xf32>\n"
    "  return %mx, %mn : tensor<24xf32>, tensor<24xf32>\n"
    "}\n";

TEST(two_dim_rows_refold_to_the_sequential_fold) {
  enum { N = MID * COLS };
  static float x[ROWS * N];
  fill_f32(x, ROWS, N);
  int64_t dims[3] = {ROWS, MID, COLS};
  hlo_buffer_view arg = {HLO_F32, 3, dims, x};
  const char *needles[] = {"goto hlo_found0;", "hlo_found0:"};
  hlo_buffer **got = run_cpu("two-dim max/min", k_two_dims, &arg, needles, 2);
  if (!got) return;
  float want_mx[ROWS], want_mn[ROWS];
  for (int64_t r = 0; r < ROWS; r++) {
    float a = -INFINITY, b = INFINITY;
    for (int64_t i = 0; i < N; i++) {
      a = ref_maxf(a, x[r * N + i]);
      b = ref_minf(b, x[r * N + i]);
    }
    want_mx[r] = a, want_mn[r] = b;
  }
  check_f32("two-dim max", hlo_buffer_data(got[0]), want_mx, ROWS);
  check_f32("two-dim min", hlo_buffer_data(got[1]), want_mn, ROWS);
  free_results(got, 2);
}

/* a NaN init and a +0 init (ReLU's max): max(%x) from NaN, max(%x) from +0
 * (the NaN is the default quiet NaN: the kernel printer writes NaN
 * constants without their payload) */
static const char *k_inits =
    "func.func @main(%x: tensor<24x67xf32>) -> (tensor<24xf32>, tensor<24xf32>) {\n"
    "  %nan = stablehlo.constant dense<0x7FC00000> : tensor<f32>\n"
    "  %zero = stablehlo.constant dense<0.0> : tensor<f32>\n"
    "  %a = stablehlo.reduce(%x init: %nan) applies stablehlo.maximum across dimensions = [1] "
    ": (tensor<24x67xf32>, tensor<f32>) -> tensor<24xf32>\n"
    "  %b = stablehlo.reduce(%x init: %zero) applies stablehlo.maximum across dimensions = [1] "
    ": (tensor<24x67xf32>, tensor<f32>) -> tensor<24xf32>\n"
    "  return %a, %b : tensor<24xf32>, tensor<24xf32>\n"
    "}\n";

TEST(nan_and_zero_inits_fold_exactly) {
  static float x[ROWS * COLS];
  fill_f32(x, ROWS, COLS);
  int64_t dims[2] = {ROWS, COLS};
  hlo_buffer_view arg = {HLO_F32, 2, dims, x};
  const char *needles[] = {"hlo_z0 = hlo_fbits((float)0x0p+0f)", "hlo_x0 = (__builtin_nanf(\"\"));"};
  hlo_buffer **got = run_cpu("NaN and +0 inits", k_inits, &arg, needles, 2);
  if (!got) return;
  float want_a[ROWS], want_b[ROWS], init_nan;
  uint32_t u = 0x7fc00000u;
  memcpy(&init_nan, &u, 4);
  for (int64_t r = 0; r < ROWS; r++) {
    float a = init_nan, b = 0.0f;
    for (int64_t i = 0; i < COLS; i++) {
      a = ref_maxf(a, x[r * COLS + i]);
      b = ref_maxf(b, x[r * COLS + i]);
    }
    want_a[r] = a, want_b[r] = b;
  }
  check_f32("NaN init", hlo_buffer_data(got[0]), want_a, ROWS);
  check_f32("+0 init", hlo_buffer_data(got[1]), want_b, ROWS);
  free_results(got, 2);
}

/* a softmax's max over a divided row, the divided row (a divide: worth
 * keeping) kept in a temporary for the exp stage: the refold reads the
 * temporary */
static const char *k_temp =
    "func.func @main(%x: tensor<24x67xf32>) -> (tensor<24x67xf32>, tensor<24xf32>) {\n"
    "  %ninf = stablehlo.constant dense<0xFF800000> : tensor<f32>\n"
    "  %c = stablehlo.constant dense<3.0> : tensor<24x67xf32>\n"
    "  %s = stablehlo.divide %x, %c : tensor<24x67xf32>\n"
    "  %m = stablehlo.reduce(%s init: %ninf) applies stablehlo.maximum across dimensions = [1] "
    ": (tensor<24x67xf32>, tensor<f32>) -> tensor<24xf32>\n"
    "  %mb = stablehlo.broadcast_in_dim %m, dims = [0] : (tensor<24xf32>) -> tensor<24x67xf32>\n"
    "  %d = stablehlo.subtract %s, %mb : tensor<24x67xf32>\n"
    "  %e = stablehlo.exponential %d : tensor<24x67xf32>\n"
    "  return %e, %m : tensor<24x67xf32>, tensor<24xf32>\n"
    "}\n";

TEST(a_temporary_row_refolds_from_the_temporary) {
  static float x[ROWS * COLS];
  fill_f32(x, ROWS, COLS);
  int64_t dims[2] = {ROWS, COLS};
  hlo_buffer_view arg = {HLO_F32, 2, dims, x};
  const char *needles[] = {"&= hlo_fbits((float)tmp", "hlo_nan0"};
  hlo_buffer **got = run_cpu("softmax max from a temporary", k_temp, &arg, needles, 2);
  if (!got) return;
  float want[ROWS];
  for (int64_t r = 0; r < ROWS; r++) {
    float a = -INFINITY;
    for (int64_t i = 0; i < COLS; i++) a = ref_maxf(a, x[r * COLS + i] / 3.0f);
    want[r] = a;
  }
  check_f32("max of a temporary", hlo_buffer_data(got[1]), want, ROWS);
  free_results(got, 2);
}

TEST_MAIN()
