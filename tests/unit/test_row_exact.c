/* test_row_exact.c — the row kernels' fast paths (codegen/cstyle.c) give
 * the interpreter's bits, on values chosen to hit every branch:
 *   - divides by a row value through a double reciprocal ("Divides by a
 *     row value"): dividends of every kind (zeros of both signs,
 *     subnormals, results that round to subnormals or overflow, inf, NaN)
 *     over divisors hlo_rcp_ok allows (a softmax-like sum, 2^-126,
 *     2^24 - 1, negatives) and refuses (even integers such as 98, whose
 *     subnormal ties would round the other way; 2^24; subnormals; 0; inf;
 *     NaN), plus a divide by the constant sqrt(32) (attention's scale);
 *   - max and min folds with plain compares (fast_minmax): rows of -0 and
 *     +0 in every order, NaN in a lane and in the tail, all -inf, negatives
 *     only, a lone +0 in the tail, random rows;
 *   - the lanes' tree, one loop per level (every fold above goes through
 *     it; rows of 67: 64 in lanes, 3 in the tail).
 * The generated C is dumped (a temporary folder, removed) and checked to
 * use the fast paths, so that the comparison is not vacuous. Results are
 * compared bit for bit (any NaN equals any NaN). Without a C compiler the
 * test prints "skipped". */
#include <dirent.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "hlo/hlo.h"
#include "test.h"
#include "testlib.h"

enum { ROWS = 40, COLS = 67 };

static uint64_t rng = 0x9E3779B97F4A7C15ull;
static uint32_t rnd32(void) {
  rng ^= rng << 13, rng ^= rng >> 7, rng ^= rng << 17;
  return (uint32_t)(rng >> 32);
}
static float bitsf(uint32_t u) {
  float f;
  memcpy(&f, &u, 4);
  return f;
}
static uint32_t fbits(float f) {
  uint32_t u;
  memcpy(&u, &f, 4);
  return u;
}

/* Removes the dump folder (flat: files only). */
static void remove_dir(const char *dir) {
  DIR *d = opendir(dir);
  if (d) {
    struct dirent *e;
    while ((e = readdir(d))) {
      if (!strcmp(e->d_name, ".") || !strcmp(e->d_name, "..")) continue;
      char path[512];
      snprintf(path, sizeof path, "%s/%s", dir, e->d_name);
      unlink(path);
    }
    closedir(d);
  }
  rmdir(dir);
}

static int compiler = -1; /* -1 unknown, 0 none (skipped), 1 yes */

/* Runs `text` on the interpreter and on the CPU (its generated C dumped),
 * compares its `nres` [ROWS, COLS] or [ROWS] f32 results bit for bit, and
 * checks that the C contains every string of needles[0..nneedles). */
static void run_case(const char *what, const char *text, const float *x, const float *w,
                     const int64_t *res_elems, int nres, const char *const *needles,
                     int nneedles) {
  if (compiler == 0) return;
  hlo_module *mod = NULL;
  hlo_status st = hlo_module_parse("row_exact.mlir", text, strlen(text), &mod);
  if (st) hlo_status_print(st, stderr);
  CHECK(!st);
  int64_t dims[2] = {ROWS, COLS};
  hlo_buffer_view args[2] = {{HLO_F32, 2, dims, (void *)x}, {HLO_F32, 2, dims, (void *)w}};
  hlo_buffer **want = NULL, **got = NULL;
  char dir[] = "/tmp/hlo_row_exact_XXXXXX";
  bool made = mkdtemp(dir) != NULL;
  CHECK(made);
  for (int be = 0; be < 2 && !st && made; be++) {
    hlo_compile_options o;
    memset(&o, 0, sizeof o);
    o.backend = be ? HLO_BACKEND_CPU : HLO_BACKEND_INTERP;
    o.dump_dir = be ? dir : NULL;
    hlo_executable *e = NULL;
    st = hlo_executable_compile(mod, NULL, &o, &e);
    if (!st) st = hlo_executable_run(e, args, 2, be ? &got : &want);
    hlo_executable_destroy(e);
  }
  if (st && hlo_status_code_of(st) == HLO_UNAVAILABLE) {
    printf("  %s: skipped: no C compiler (%s)\n", what, hlo_status_message(st));
    compiler = 0;
  } else {
    if (st) hlo_status_print(st, stderr);
    CHECK(!st);
    compiler = 1;
  }
  for (int r = 0; !st && got && want && r < nres; r++) {
    const float *a = hlo_buffer_data(got[r]), *b = hlo_buffer_data(want[r]);
    int64_t bad = 0;
    for (int64_t i = 0; i < res_elems[r]; i++) {
      bool same = fbits(a[i]) == fbits(b[i]) || (isnan(a[i]) && isnan(b[i]));
      if (!same && bad++ < 4)
        printf("  %s: result %d element %lld (row %lld): got %a (0x%08x), want %a (0x%08x)\n",
               what, r, (long long)i, (long long)(res_elems[r] == ROWS ? i : i / COLS),
               (double)a[i], fbits(a[i]), (double)b[i], fbits(b[i]));
    }
    CHECK_EQ_INT(bad, 0);
  }
  if (!st && made)
    for (int i = 0; i < nneedles; i++) {
      bool has = tl_dump_has(dir, needles[i]);
      if (!has) printf("  %s: the generated C has no \"%s\"\n", what, needles[i]);
      CHECK(has);
    }
  if (made) remove_dir(dir);
  hlo_status_free(st);
  for (int r = 0; r < nres; r++) {
    if (got) hlo_buffer_destroy(got[r]);
    if (want) hlo_buffer_destroy(want[r]);
  }
  free(got);
  free(want);
  hlo_module_destroy(mod);
}

#define T "tensor<40x67xf32>"
#define TR "tensor<40xf32>"

/* q = x / max(w) per row (w's rows are constant: the divisor is chosen),
 * s = q / sqrt(32) */
static const char *k_divide =
    "func.func @main(%x: " T ", %w: " T ") -> (" T ", " T ") {\n"
    "  %ninf = stablehlo.constant dense<0xFF800000> : tensor<f32>\n"
    "  %m = stablehlo.reduce(%w init: %ninf) applies stablehlo.maximum across dimensions = [1] : "
    "(" T ", tensor<f32>) -> " TR "\n"
    "  %mb = stablehlo.broadcast_in_dim %m, dims = [0] : (" TR ") -> " T "\n"
    "  %q = stablehlo.divide %x, %mb : " T "\n"
    "  %c = stablehlo.constant dense<5.65685415> : " T "\n"
    "  %s = stablehlo.divide %q, %c : " T "\n"
    "  return %q, %s : " T ", " T "\n"
    "}\n";

/* A dividend of every kind: edge values, then random bit patterns over
 * the whole exponent range (subnormal quotients included). */
static float dividend(int64_t r, int64_t c) {
  static const float edge[] = {0.0f, -0.0f, 1.0f, -1.5f, 0x1p-149f, -0x1p-149f, 0x1.8p-148f,
                               0x1p-126f, 0x1.fffffcp-127f, 3.4028235e38f, -3.4028235e38f,
                               INFINITY, -INFINITY, NAN, 0x1p-100f, 0x1.000002p-100f};
  enum { NE = sizeof edge / sizeof *edge };
  if (r % 4 == 0) return edge[(r / 4 + c) % NE];
  uint32_t u = rnd32();
  if (r % 4 == 1) u &= 0x807fffffu; /* subnormal or zero */
  float f = bitsf(u);
  return isnan(f) ? 1.0f : f;
}

TEST(divides_by_a_row_value_are_the_ieee_quotient) {
  static const float divisors[] = {
      5.656854152679443f, 1.0f, 3.0f, 2.0f, 0x1p-126f, 16777215.0f, -3.0f, -0.1f, 0.1f,
      1.0000001f, 13.378f, 1e-30f, /* allowed */
      98.0f, 6.0f, 16777216.0f, 0x1p30f, 0x1p-127f, 0.0f, INFINITY, 1e30f, -98.0f, 1024.5f};
  enum { ND = sizeof divisors / sizeof *divisors };
  static float x[ROWS * COLS], w[ROWS * COLS];
  for (int64_t r = 0; r < ROWS; r++)
    for (int64_t c = 0; c < COLS; c++) {
      float b = divisors[r % ND];
      /* for 98: subnormal ties, a = 98 (2K+1) 2^-150, which the double
       * reciprocal would round the wrong way for some K (hlo_rcp_ok
       * refuses 98; without that check this row fails) */
      x[r * COLS + c] = fabsf(b) == 98.0f ? 49.0f * (float)(2 * (r * COLS + c) + 1) * 0x1p-149f
                                          : dividend(r, c);
      w[r * COLS + c] = b;
    }
  const int64_t elems[2] = {ROWS * COLS, ROWS * COLS};
  const char *needles[] = {"if (hlo_rcp_ok(v"};
  run_case("row divides", k_divide, x, w, elems, 2, needles, 1);
}

/* max and min of each row of w (x unused but for the signature) */
static const char *k_minmax =
    "func.func @main(%x: " T ", %w: " T ") -> (" TR ", " TR ") {\n"
    "  %ninf = stablehlo.constant dense<0xFF800000> : tensor<f32>\n"
    "  %pinf = stablehlo.constant dense<0x7F800000> : tensor<f32>\n"
    "  %mx = stablehlo.reduce(%w init: %ninf) applies stablehlo.maximum across dimensions = [1] "
    ": (" T ", tensor<f32>) -> " TR "\n"
    "  %mn = stablehlo.reduce(%w init: %pinf) applies stablehlo.minimum across dimensions = [1] "
    ": (" T ", tensor<f32>) -> " TR "\n"
    "  return %mx, %mn : " TR ", " TR "\n"
    "}\n";

TEST(max_and_min_folds_keep_nan_and_signed_zeros) {
  static float x[ROWS * COLS], w[ROWS * COLS];
  for (int64_t r = 0; r < ROWS; r++)
    for (int64_t c = 0; c < COLS; c++) {
      float v;
      switch (r % 10) {
      case 0: v = -0.0f; break;                                 /* all -0 */
      case 1: v = c % 2 ? 0.0f : -0.0f; break;                  /* -0, +0, ... */
      case 2: v = c % 2 ? -0.0f : 0.0f; break;                  /* +0, -0, ... */
      case 3: v = c == 5 ? NAN : (float)c; break;               /* NaN in a lane */
      case 4: v = c == COLS - 1 ? NAN : -(float)c; break;       /* NaN in the tail */
      case 5: v = -INFINITY; break;                             /* all -inf */
      case 6: v = -1.0f - (float)c; break;                      /* negatives only */
      case 7: v = c == COLS - 2 ? 0.0f : -1.0f - (float)c; break; /* a lone +0 in the tail */
      case 8: v = c == 7 ? -0.0f : 1.0f + (float)c; break;      /* one -0 among positives */
      default: v = bitsf(rnd32() & 0xbfffffffu); break;         /* random, no NaN/inf */
      }
      w[r * COLS + c] = v;
      x[r * COLS + c] = 0.0f;
    }
  const int64_t elems[2] = {ROWS, ROWS};
  const char *needles[] = {"hlo_nan"};
  run_case("max/min folds", k_minmax, x, w, elems, 2, needles, 1);
}

TEST_MAIN()
