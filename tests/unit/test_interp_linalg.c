/* test_interp_linalg.c — the interpreter's linear-algebra, convolution, FFT
 * and random-number kernels (src/interp/interp_linalg.c, interp_conv.c,
 * interp_fft.c, interp_rng.c).
 *
 * Two kinds of tests:
 *  - small generic-form programs checked value by value here (spec examples,
 *    hand-computed results, error cases);
 *  - a corpus driver over the conformance files of these ops. It evaluates
 *    the files' checks itself, so it depends only on the parser and the
 *    interpreter core: the check ops (`check.expect_*` and the
 *    `@check.expect_*` custom calls) are unlinked from the entry function,
 *    the values they compare are returned instead, and compared here with
 *    the corpus README's rules (exact / almost equal / ULP distance). It
 *    prints "passed N of M" with the failures and asserts on handpicked
 *    files. Shared data: $HLO_SHARED or ../shared (from the repo root). */
#include <dirent.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "interp/interp.h"
#include "parse/parse.h"
#include "support/float.h"
#include "test.h"
#include "testlib.h"

/* ------------------------------------------------------ running text */

/* Runs `text`, expecting success and `n` results. */
static bool run_ok(const char *text, tl_run *r, uint32_t n) {
  hlo_status st = tl_run_text("<test>", text, 0, NULL, NULL, 0, r);
  if (st) {
    hlo_status_print(st, stderr);
    hlo_status_free(st);
    return false;
  }
  return r->n == n;
}

static double f64_at(const tensor *t, int64_t i) { return elem_get_f64(t->type->dtype, t->data, i); }
static int64_t i64_at(const tensor *t, int64_t i) { return elem_get_i64(t->type->dtype, t->data, i); }

/* Element-wise |t - want| <= tol over n values. */
static bool near_all(const tensor *t, const double *want, int64_t n, double tol) {
  if (t->num_elems != n) return false;
  for (int64_t i = 0; i < n; i++)
    if (!(fabs(f64_at(t, i) - want[i]) <= tol)) {
      fprintf(stderr, "  element %lld: got %.17g want %.17g\n", (long long)i, f64_at(t, i), want[i]);
      return false;
    }
  return true;
}

static bool ints_all(const tensor *t, const int64_t *want, int64_t n) {
  if (t->num_elems != n) return false;
  for (int64_t i = 0; i < n; i++)
    if (i64_at(t, i) != want[i]) {
      fprintf(stderr, "  element %lld: got %lld want %lld\n", (long long)i,
              (long long)i64_at(t, i), (long long)want[i]);
      return false;
    }
  return true;
}

#define CONST(name, lit, ty) \
  "  %" name " = \"stablehlo.constant\"() <{value = dense<" lit "> : " ty "}> : () -> " ty "\n"
/* The same inside a printf format. */
#define CONSTF(name, lit, ty) \
  "  %%" name " = \"stablehlo.constant\"() <{value = dense<" lit "> : " ty "}> : () -> " ty "\n"

/* ---------------------------------------------------------- dot_general */

TEST(dot_general_batched_spec_example) {
  const char *text =
      "func.func @main() -> tensor<2x2x2xi64> {\n"
      CONST("l", "[[[1, 2], [3, 4]], [[5, 6], [7, 8]]]", "tensor<2x2x2xi64>")
      CONST("r", "[[[1, 0], [0, 1]], [[1, 0], [0, 1]]]", "tensor<2x2x2xi64>")
      "  %0 = \"stablehlo.dot_general\"(%l, %r) <{dot_dimension_numbers = #stablehlo.dot<"
      "lhs_batching_dimensions = [0], rhs_batching_dimensions = [0], "
      "lhs_contracting_dimensions = [2], rhs_contracting_dimensions = [1]>}> : "
      "(tensor<2x2x2xi64>, tensor<2x2x2xi64>) -> tensor<2x2x2xi64>\n"
      "  \"func.return\"(%0) : (tensor<2x2x2xi64>) -> ()\n}\n";
  tl_run r;
  CHECK(run_ok(text, &r, 1));
  if (r.n == 1) {
    int64_t want[] = {1, 2, 3, 4, 5, 6, 7, 8};
    CHECK(ints_all(r.res[0], want, 8));
  }
  tl_run_free(&r);
}

TEST(dot_general_f32_matmul_and_free_dims) {
  /* lhs 2x3, rhs 2x3 contracting 1x1: result = lhs . rhs^T (2x2) */
  const char *text =
      "func.func @main() -> tensor<2x2xf32> {\n"
      CONST("l", "[[1.0, 2.0, 3.0], [4.0, 5.0, 6.0]]", "tensor<2x3xf32>")
      CONST("r", "[[1.0, 0.5, -1.0], [2.0, 0.0, 1.0]]", "tensor<2x3xf32>")
      "  %0 = \"stablehlo.dot_general\"(%l, %r) <{dot_dimension_numbers = #stablehlo.dot<"
      "lhs_contracting_dimensions = [1], rhs_contracting_dimensions = [1]>}> : "
      "(tensor<2x3xf32>, tensor<2x3xf32>) -> tensor<2x2xf32>\n"
      "  \"func.return\"(%0) : (tensor<2x2xf32>) -> ()\n}\n";
  tl_run r;
  CHECK(run_ok(text, &r, 1));
  if (r.n == 1) {
    double want[] = {1 + 1 - 3, 2 + 3, 4 + 2.5 - 6, 8 + 6};
    CHECK(near_all(r.res[0], want, 4, 0));
  }
  tl_run_free(&r);
}

TEST(dot_general_i8_wraps_and_complex) {
  const char *text =
      "func.func @main() -> (tensor<i8>, tensor<complex<f64>>) {\n"
      CONST("a", "[100, 1]", "tensor<2xi8>")
      CONST("b", "[100, 3]", "tensor<2xi8>")
      CONST("c", "[(1.0, 2.0), (0.0, 1.0)]", "tensor<2xcomplex<f64>>")
      CONST("d", "[(3.0, -1.0), (0.0, 1.0)]", "tensor<2xcomplex<f64>>")
      "  %0 = \"stablehlo.dot_general\"(%a, %b) <{dot_dimension_numbers = #stablehlo.dot<"
      "lhs_contracting_dimensions = [0], rhs_contracting_dimensions = [0]>}> : "
      "(tensor<2xi8>, tensor<2xi8>) -> tensor<i8>\n"
      "  %1 = \"stablehlo.dot\"(%c, %d) : "
      "(tensor<2xcomplex<f64>>, tensor<2xcomplex<f64>>) -> tensor<complex<f64>>\n"
      "  \"func.return\"(%0, %1) : (tensor<i8>, tensor<complex<f64>>) -> ()\n}\n";
  tl_run r;
  CHECK(run_ok(text, &r, 2));
  if (r.n == 2) {
    /* 10000 + 3 = 10003 = 39*256 + 19 */
    CHECK_EQ_INT(i64_at(r.res[0], 0), 19);
    double re, im;
    elem_get_c128(r.res[1]->type->dtype, r.res[1]->data, 0, &re, &im);
    /* (1+2i)(3-i) + i*i = 5+5i - 1 */
    CHECK(re == 4.0 && im == 5.0);
  }
  tl_run_free(&r);
}

TEST(dot_general_bad_dimension_is_an_error) {
  const char *text =
      "func.func @main() -> tensor<2x2xf32> {\n"
      CONST("l", "1.0", "tensor<2x3xf32>")
      "  %0 = \"stablehlo.dot_general\"(%l, %l) <{dot_dimension_numbers = #stablehlo.dot<"
      "lhs_contracting_dimensions = [7], rhs_contracting_dimensions = [1]>}> : "
      "(tensor<2x3xf32>, tensor<2x3xf32>) -> tensor<2x2xf32>\n"
      "  \"func.return\"(%0) : (tensor<2x2xf32>) -> ()\n}\n";
  tl_run r;
  hlo_status st = tl_run_text("<test>", text, 0, NULL, NULL, 0, &r);
  CHECK(st != NULL);
  CHECK(hlo_status_code_of(st) == HLO_INVALID_ARGUMENT);
  hlo_status_free(st);
  tl_run_free(&r);
}

/* ------------------------------------------------- dot algorithms */

/* Runs `lhs . rhs` (1xK times Kx1 or 2x2 times 2x2: contracting lhs dim 1
 * with rhs dim 0) of element type `ty` under the dot algorithm with the
 * given fields (alg NULL: none; "HIGHEST": precision_config HIGHEST). */
static hlo_status run_alg(const char *ty, const char *lshape, const char *rshape,
                          const char *oshape, const char *l, const char *r, const char *alg,
                          tl_run *out) {
  static char text[2048];
  char attr[400] = "";
  if (alg && !strcmp(alg, "HIGHEST"))
    snprintf(attr, sizeof attr, ", precision_config = [#stablehlo<precision HIGHEST>, "
             "#stablehlo<precision HIGHEST>]");
  else if (alg)
    snprintf(attr, sizeof attr, ", algorithm = #stablehlo.dot_algorithm<%s>", alg);
  snprintf(text, sizeof text,
           "func.func @main() -> tensor<%s%s> {\n"
           CONSTF("l", "%s", "tensor<%s%s>") CONSTF("r", "%s", "tensor<%s%s>")
           "  %%0 = \"stablehlo.dot_general\"(%%l, %%r) <{dot_dimension_numbers = #stablehlo.dot<"
           "lhs_contracting_dimensions = [1], rhs_contracting_dimensions = [0]>%s}> : "
           "(tensor<%s%s>, tensor<%s%s>) -> tensor<%s%s>\n"
           "  \"func.return\"(%%0) : (tensor<%s%s>) -> ()\n}\n",
           oshape, ty, l, lshape, ty, lshape, ty, r, rshape, ty, rshape, ty, attr, lshape, ty,
           rshape, ty, oshape, ty, oshape, ty);
  return tl_run_text("<test>", text, 0, NULL, NULL, 0, out);
}

#define ALG(l, acc, n, imp)                                                          \
  "lhs_precision_type = " l ", rhs_precision_type = " l ", accumulation_type = " acc \
  ", lhs_component_count = 1, rhs_component_count = 1, num_primitive_operations = " n \
  ", allow_imprecise_accumulation = " imp

/* Runs a dot expecting success and a result equal to want[0..n) exactly. */
static bool alg_values(const char *ty, const char *ls, const char *rs, const char *os,
                       const char *l, const char *r, const char *alg, const double *want,
                       int64_t n) {
  tl_run run;
  hlo_status st = run_alg(ty, ls, rs, os, l, r, alg, &run);
  bool ok = st == NULL && run.n == 1 && run.res[0]->num_elems == n;
  for (int64_t i = 0; ok && i < n; i++) /* exact, infinities included */
    if (f64_at(run.res[0], i) != want[i]) {
      fprintf(stderr, "  element %lld: got %.17g want %.17g\n", (long long)i,
              f64_at(run.res[0], i), want[i]);
      ok = false;
    }
  if (st) hlo_status_print(st, stderr);
  hlo_status_free(st);
  tl_run_free(&run);
  return ok;
}

TEST(dot_algorithm_rounds_operands_to_the_precision_type) {
  /* The example of issue 6: inputs rounded to bf16 first (1 + 2^-12 -> 1,
   * 1 + 2^-8 -> 1, a tie to even), so [[1, 1], [2, 1]] exactly. */
  const char *a = "[[1.000244140625, 1.00390625], [2.0, 1.0]]", *eye = "[[1.0, 0.0], [0.0, 1.0]]";
  double bf[] = {1, 1, 2, 1}, exact[] = {1 + 0x1p-12, 1 + 0x1p-8, 2, 1};
  CHECK(alg_values("f32", "2x2x", "2x2x", "2x2x", a, eye, ALG("bf16", "f32", "1", "false"), bf, 4));
  /* No algorithm, HIGHEST, F32_F32_F32: the f32 product, as before. */
  CHECK(alg_values("f32", "2x2x", "2x2x", "2x2x", a, eye, NULL, exact, 4));
  CHECK(alg_values("f32", "2x2x", "2x2x", "2x2x", a, eye, "HIGHEST", exact, 4));
  CHECK(alg_values("f32", "2x2x", "2x2x", "2x2x", a, eye, ALG("f32", "f32", "1", "false"), exact, 4));
  /* tf32 keeps 10 mantissa bits: 1 + 2^-11 ties to 1, 1 + 3*2^-11 to 1 + 2^-9. */
  double tf[] = {1, 1 + 0x1p-9, 2, 1};
  CHECK(alg_values("f32", "2x2x", "2x2x", "2x2x", "[[1.00048828125, 1.00146484375], [2.0, 1.0]]",
                   eye, ALG("tf32", "f32", "1", "false"), tf, 4));
}

TEST(dot_algorithm_bf16_passes_and_accumulation_type) {
  /* a = 1 + 2^-10 + 2^-20: one bf16 pass sees 1; X3 (hi, mid) adds 2^-10;
   * X6 and X9 (hi, mid, lo) give a exactly. */
  const char *a = "[[1.0009775161743164]]", *one = "[[1.0]]";
  double x1[] = {1}, x3[] = {1 + 0x1p-10}, x6[] = {1 + 0x1p-10 + 0x1p-20};
  CHECK(alg_values("f32", "1x1x", "1x1x", "1x1x", a, one, ALG("bf16", "f32", "1", "false"), x1, 1));
  CHECK(alg_values("f32", "1x1x", "1x1x", "1x1x", a, one, ALG("bf16", "f32", "3", "false"), x3, 1));
  CHECK(alg_values("f32", "1x1x", "1x1x", "1x1x", a, one, ALG("bf16", "f32", "6", "false"), x6, 1));
  CHECK(alg_values("f32", "1x1x", "1x1x", "1x1x", a, one, ALG("bf16", "f32", "9", "false"), x6, 1));
  /* inf: the correction terms are inf - inf = NaN, dropped before hi*hi. */
  double inf[] = {INFINITY};
  CHECK(alg_values("f32", "1x1x", "1x1x", "1x1x", "[[0x7F800000]]", one,
                   ALG("bf16", "f32", "6", "false"), inf, 1));
  /* F16_F16_F16 adds in f16: 2048 + 1 ties back to 2048, twice; an f32
   * accumulator (no algorithm) reaches 2050. */
  const char *l = "[[2048.0, 1.0, 1.0]]", *r = "[[1.0], [1.0], [1.0]]";
  double f16[] = {2048}, f32[] = {2050};
  CHECK(alg_values("f16", "1x3x", "3x1x", "1x1x", l, r, ALG("f16", "f16", "1", "false"), f16, 1));
  CHECK(alg_values("f16", "1x3x", "3x1x", "1x1x", l, r, NULL, f32, 1));
  CHECK(alg_values("f16", "1x3x", "3x1x", "1x1x", l, r, ALG("f16", "f32", "1", "false"), f32, 1));
}

TEST(dot_algorithm_unsupported_is_an_error) {
  static const char *const bad[] = {
      ALG("bf16", "f32", "2", "false"), ALG("bf16", "f32", "1", "true"),
      ALG("f16", "bf16", "1", "false"), ALG("tf32", "f32", "6", "false"),
      "lhs_precision_type = bf16, rhs_precision_type = bf16, accumulation_type = f32, "
      "lhs_component_count = 3, rhs_component_count = 3, num_primitive_operations = 6, "
      "allow_imprecise_accumulation = false"};
  for (size_t i = 0; i < sizeof bad / sizeof *bad; i++) {
    tl_run run;
    hlo_status st = run_alg("f32", "1x1x", "1x1x", "1x1x", "[[1.0]]", "[[1.0]]", bad[i], &run);
    CHECK(st != NULL);
    if (st) {
      CHECK(strstr(hlo_status_message(st), "unsupported dot algorithm") != NULL);
      CHECK(status_loc(st) != NULL && status_loc(st)->line == 4);
    }
    hlo_status_free(st);
    tl_run_free(&run);
  }
}

/* ---------------------------------------------------------- convolution */

#define CONV_LHS "[[[[1], [2], [5], [6]], [[3], [4], [7], [8]], [[10], [11], [14], [15]], [[12], [13], [16], [17]]]]"

TEST(convolution_spec_example) {
  const char *text =
      "func.func @main() -> tensor<1x2x2x1xi64> {\n"
      CONST("l", CONV_LHS, "tensor<1x4x4x1xi64>")
      CONST("r", "1", "tensor<3x3x1x1xi64>")
      "  %0 = \"stablehlo.convolution\"(%l, %r) <{window_strides = array<i64: 4, 4>, "
      "padding = dense<0> : tensor<2x2xi64>, lhs_dilation = array<i64: 2, 2>, "
      "rhs_dilation = array<i64: 1, 1>, window_reversal = array<i1: false, false>, "
      "dimension_numbers = #stablehlo.conv<[b, 0, 1, f]x[0, 1, i, o]->[b, 0, 1, f]>, "
      "batch_group_count = 1 : i64, feature_group_count = 1 : i64}> : "
      "(tensor<1x4x4x1xi64>, tensor<3x3x1x1xi64>) -> tensor<1x2x2x1xi64>\n"
      "  \"func.return\"(%0) : (tensor<1x2x2x1xi64>) -> ()\n}\n";
  tl_run r;
  CHECK(run_ok(text, &r, 1));
  if (r.n == 1) {
    int64_t want[] = {10, 26, 46, 62};
    CHECK(ints_all(r.res[0], want, 4));
  }
  tl_run_free(&r);
}

TEST(dynamic_conv_padding_operand) {
  const char *text =
      "func.func @main() -> tensor<1x2x2x1xi64> {\n"
      CONST("l", CONV_LHS, "tensor<1x4x4x1xi64>")
      CONST("r", "1", "tensor<3x3x1x1xi64>")
      CONST("p", "1", "tensor<2x2xi64>")
      "  %0 = \"stablehlo.dynamic_conv\"(%l, %r, %p) <{window_strides = array<i64: 4, 4>, "
      "lhs_dilation = array<i64: 2, 2>, rhs_dilation = array<i64: 1, 1>, "
      "window_reversal = array<i1: false, false>, "
      "dimension_numbers = #stablehlo.conv<[b, 0, 1, f]x[0, 1, i, o]->[b, 0, 1, f]>, "
      "batch_group_count = 1 : i64, feature_group_count = 1 : i64}> : "
      "(tensor<1x4x4x1xi64>, tensor<3x3x1x1xi64>, tensor<2x2xi64>) -> tensor<1x2x2x1xi64>\n"
      "  \"func.return\"(%0) : (tensor<1x2x2x1xi64>) -> ()\n}\n";
  tl_run r;
  CHECK(run_ok(text, &r, 1));
  if (r.n == 1) {
    int64_t want[] = {1, 5, 10, 14};
    CHECK(ints_all(r.res[0], want, 4));
  }
  tl_run_free(&r);
}

TEST(convolution_feature_groups_and_reversal) {
  /* 1-D, 2 input features in 2 groups (depthwise), kernel width 2,
   * window reversal on: out[o][x] = sum_k in[o][x + 1 - k] * w[o][k]. */
  const char *text =
      "func.func @main() -> tensor<1x2x2xf32> {\n"
      CONST("l", "[[[1.0, 10.0], [2.0, 20.0], [3.0, 30.0]]]", "tensor<1x3x2xf32>")
      CONST("r", "[[[1.0, 3.0]], [[2.0, 4.0]]]", "tensor<2x1x2xf32>")
      "  %0 = \"stablehlo.convolution\"(%l, %r) <{window_reversal = array<i1: true>, "
      "dimension_numbers = #stablehlo.conv<[b, 0, f]x[0, i, o]->[b, 0, f]>, "
      "batch_group_count = 1 : i64, feature_group_count = 2 : i64}> : "
      "(tensor<1x3x2xf32>, tensor<2x1x2xf32>) -> tensor<1x2x2xf32>\n"
      "  \"func.return\"(%0) : (tensor<1x2x2xf32>) -> ()\n}\n";
  tl_run r;
  CHECK(run_ok(text, &r, 1));
  if (r.n == 1) {
    /* x=0: f0: in[1]*w0[0] + in[0]*w0[1] = 2*1 + 1*2 = 4;
     *      f1: 20*3 + 10*4 = 100. x=1: f0: 3*1 + 2*2 = 7; f1: 30*3 + 20*4 = 170 */
    double want[] = {4, 100, 7, 170};
    CHECK(near_all(r.res[0], want, 4, 0));
  }
  tl_run_free(&r);
}

TEST(convolution_bad_result_shape_is_an_error) {
  const char *text =
      "func.func @main() -> tensor<1x3x3x1xi64> {\n"
      CONST("l", "1", "tensor<1x4x4x1xi64>")
      CONST("r", "1", "tensor<3x3x1x1xi64>")
      "  %0 = \"stablehlo.convolution\"(%l, %r) <{padding = dense<[[9223372036854775807, 0], "
      "[0, 0]]> : tensor<2x2xi64>, "
      "dimension_numbers = #stablehlo.conv<[b, 0, 1, f]x[0, 1, i, o]->[b, 0, 1, f]>, "
      "batch_group_count = 1 : i64, feature_group_count = 1 : i64}> : "
      "(tensor<1x4x4x1xi64>, tensor<3x3x1x1xi64>) -> tensor<1x3x3x1xi64>\n"
      "  \"func.return\"(%0) : (tensor<1x3x3x1xi64>) -> ()\n}\n";
  tl_run r;
  hlo_status st = tl_run_text("<test>", text, 0, NULL, NULL, 0, &r);
  CHECK(st != NULL && hlo_status_code_of(st) == HLO_INVALID_ARGUMENT);
  hlo_status_free(st);
  tl_run_free(&r);
}

/* ------------------------------------------------------------------ fft */

TEST(fft_rfft_irfft_round_trip_odd_and_even) {
  /* RFFT then IRFFT over lengths 15 (DFT path) and 16 (radix-2 path);
   * RFFT of x[k] = k checked against a direct DFT. */
  static const int64_t lens[] = {15, 16, 5};
  for (int li = 0; li < 3; li++) {
    int64_t n = lens[li], h = n / 2 + 1;
    char lit[512] = "[", text[4096];
    for (int64_t k = 0; k < n; k++)
      snprintf(lit + strlen(lit), sizeof lit - strlen(lit), "%s%lld.0", k ? ", " : "", (long long)k);
    strcat(lit, "]");
    snprintf(text, sizeof text,
             "func.func @main() -> (tensor<%lldxcomplex<f64>>, tensor<%lldxf64>) {\n"
             "  %%x = \"stablehlo.constant\"() <{value = dense<%s> : tensor<%lldxf64>}> : () -> tensor<%lldxf64>\n"
             "  %%0 = \"stablehlo.fft\"(%%x) <{fft_type = #stablehlo<fft_type RFFT>, fft_length = array<i64: %lld>}> : (tensor<%lldxf64>) -> tensor<%lldxcomplex<f64>>\n"
             "  %%1 = \"stablehlo.fft\"(%%0) <{fft_type = #stablehlo<fft_type IRFFT>, fft_length = array<i64: %lld>}> : (tensor<%lldxcomplex<f64>>) -> tensor<%lldxf64>\n"
             "  \"func.return\"(%%0, %%1) : (tensor<%lldxcomplex<f64>>, tensor<%lldxf64>) -> ()\n}\n",
             (long long)h, (long long)n, lit, (long long)n, (long long)n, (long long)n,
             (long long)n, (long long)h, (long long)n, (long long)h, (long long)n, (long long)h,
             (long long)n);
    tl_run r;
    CHECK(run_ok(text, &r, 2));
    if (r.n == 2) {
      for (int64_t k = 0; k < h; k++) {
        double wr = 0, wi = 0, re, im;
        for (int64_t j = 0; j < n; j++) {
          wr += j * cos(-2 * M_PI * (double)(j * k) / (double)n);
          wi += j * sin(-2 * M_PI * (double)(j * k) / (double)n);
        }
        elem_get_c128(r.res[0]->type->dtype, r.res[0]->data, k, &re, &im);
        CHECK(fabs(re - wr) < 1e-9 && fabs(im - wi) < 1e-9);
      }
      for (int64_t k = 0; k < n; k++) CHECK(fabs(f64_at(r.res[1], k) - (double)k) < 1e-9);
    }
    tl_run_free(&r);
  }
}

TEST(fft_2d_complex_spec_values) {
  const char *text =
      "func.func @main() -> tensor<2x2xcomplex<f64>> {\n"
      CONST("x", "[[(1.0, 2.0), (3.0, -4.0)], [(-5.0, 6.0), (-7.0, -8.0)]]",
            "tensor<2x2xcomplex<f64>>")
      "  %0 = \"stablehlo.fft\"(%x) <{fft_type = #stablehlo<fft_type FFT>, "
      "fft_length = array<i64: 2, 2>}> : (tensor<2x2xcomplex<f64>>) -> tensor<2x2xcomplex<f64>>\n"
      "  \"func.return\"(%0) : (tensor<2x2xcomplex<f64>>) -> ()\n}\n";
  tl_run r;
  CHECK(run_ok(text, &r, 1));
  if (r.n == 1) {
    double want[] = {-8, -4, 0, 20, 16, 0, -4, -8};
    for (int i = 0; i < 4; i++) {
      double re, im;
      elem_get_c128(r.res[0]->type->dtype, r.res[0]->data, i, &re, &im);
      CHECK(fabs(re - want[2 * i]) < 1e-12 && fabs(im - want[2 * i + 1]) < 1e-12);
    }
  }
  tl_run_free(&r);
}

/* -------------------------------------------- triangular_solve, cholesky */

TEST(triangular_solve_spec_example_and_variants) {
  static const char *variants[] = {
      "left_side = true, lower = true, unit_diagonal = false, "
      "transpose_a = #stablehlo<transpose NO_TRANSPOSE>",
      "left_side = false, lower = true, unit_diagonal = false, "
      "transpose_a = #stablehlo<transpose TRANSPOSE>",
  };
  for (int v = 0; v < 2; v++) {
    char text[2048];
    snprintf(text, sizeof text,
             "func.func @main() -> tensor<3x3xf32> {\n"
             CONSTF("a", "[[1.0, 0.0, 0.0], [2.0, 4.0, 0.0], [3.0, 5.0, 6.0]]", "tensor<3x3xf32>")
             CONSTF("b", "[[2.0, 0.0, 0.0], [4.0, 8.0, 0.0], [6.0, 10.0, 12.0]]", "tensor<3x3xf32>")
             "  %%0 = \"stablehlo.triangular_solve\"(%%a, %%b) <{%s}> : "
             "(tensor<3x3xf32>, tensor<3x3xf32>) -> tensor<3x3xf32>\n"
             "  \"func.return\"(%%0) : (tensor<3x3xf32>) -> ()\n}\n",
             variants[v]);
    tl_run r;
    CHECK(run_ok(text, &r, 1));
    if (r.n == 1) {
      if (v == 0) {
        double want[] = {2, 0, 0, 0, 2, 0, 0, 0, 2};
        CHECK(near_all(r.res[0], want, 9, 1e-6));
      } else {
        /* X * A^T = B: check by multiplying back */
        static const double A[3][3] = {{1, 0, 0}, {2, 4, 0}, {3, 5, 6}};
        static const double B[3][3] = {{2, 0, 0}, {4, 8, 0}, {6, 10, 12}};
        for (int i = 0; i < 3; i++)
          for (int j = 0; j < 3; j++) {
            double s = 0;
            for (int k = 0; k < 3; k++) s += f64_at(r.res[0], i * 3 + k) * A[j][k];
            CHECK(fabs(s - B[i][j]) < 1e-5);
          }
      }
    }
    tl_run_free(&r);
  }
}

TEST(triangular_solve_all_variants_complex_residual) {
  /* Every (left_side, lower, transpose_a, unit_diagonal) on a batch of two
   * complex 3x3 matrices; checks op(tri(a)) x = b (or x op(tri(a)) = b)
   * with tri() reading only the selected triangle. */
  static const char *tnames[] = {"NO_TRANSPOSE", "TRANSPOSE", "ADJOINT"};
  const char *alit =
      "[[[(2.0, 1.0), (9.0, 9.0), (7.0, -3.0)], [(1.0, -1.0), (3.0, 0.5), (8.0, 8.0)], "
      "[(0.5, 2.0), (-1.0, 1.0), (4.0, -2.0)]], [[(1.5, 0.0), (2.0, 1.0), (3.0, 3.0)], "
      "[(5.0, 5.0), (-2.0, 1.0), (1.0, -1.0)], [(6.0, 6.0), (7.0, 7.0), (1.0, 1.0)]]]";
  const char *blit = "[[[(1.0, 0.0), (2.0, -1.0), (0.0, 3.0)], [(4.0, 1.0), (-1.0, 0.0), (2.0, 2.0)], "
                     "[(3.0, 0.0), (1.0, 1.0), (-2.0, 0.5)]], [[(0.0, 1.0), (1.0, 0.0), (2.0, 0.0)], "
                     "[(1.0, 1.0), (0.0, -1.0), (3.0, 0.0)], [(0.5, 0.5), (2.0, 2.0), (1.0, -1.0)]]]";
  for (int v = 0; v < 24; v++) {
    bool left = v & 1, lower = v & 2, unit = v & 4;
    int trans = v >> 3;
    char text[4096];
    snprintf(text, sizeof text,
             "func.func @main() -> (tensor<2x3x3xcomplex<f64>>, tensor<2x3x3xcomplex<f64>>, "
             "tensor<2x3x3xcomplex<f64>>) {\n"
             "  %%a = \"stablehlo.constant\"() <{value = dense<%s> : tensor<2x3x3xcomplex<f64>>}> : () -> tensor<2x3x3xcomplex<f64>>\n"
             "  %%b = \"stablehlo.constant\"() <{value = dense<%s> : tensor<2x3x3xcomplex<f64>>}> : () -> tensor<2x3x3xcomplex<f64>>\n"
             "  %%0 = \"stablehlo.triangular_solve\"(%%a, %%b) <{left_side = %s, lower = %s, "
             "unit_diagonal = %s, transpose_a = #stablehlo<transpose %s>}> : "
             "(tensor<2x3x3xcomplex<f64>>, tensor<2x3x3xcomplex<f64>>) -> tensor<2x3x3xcomplex<f64>>\n"
             "  \"func.return\"(%%a, %%b, %%0) : (tensor<2x3x3xcomplex<f64>>, tensor<2x3x3xcomplex<f64>>, "
             "tensor<2x3x3xcomplex<f64>>) -> ()\n}\n",
             alit, blit, left ? "true" : "false", lower ? "true" : "false", unit ? "true" : "false",
             tnames[trans]);
    tl_run r;
    CHECK(run_ok(text, &r, 3));
    if (r.n != 3) {
      tl_run_free(&r);
      continue;
    }
    double maxerr = 0;
    for (int bi = 0; bi < 2; bi++) {
      double ar[3][3], ai[3][3], xr[3][3], xi[3][3], br[3][3], bim[3][3];
      for (int i = 0; i < 9; i++) {
        elem_get_c128(HLO_C128, r.res[0]->data, bi * 9 + i, &ar[i / 3][i % 3], &ai[i / 3][i % 3]);
        elem_get_c128(HLO_C128, r.res[1]->data, bi * 9 + i, &br[i / 3][i % 3], &bim[i / 3][i % 3]);
        elem_get_c128(HLO_C128, r.res[2]->data, bi * 9 + i, &xr[i / 3][i % 3], &xi[i / 3][i % 3]);
      }
      /* op(tri(a)) as (mr, mi) */
      double mr[3][3], mi[3][3];
      for (int i = 0; i < 3; i++)
        for (int j = 0; j < 3; j++) {
          int p = trans ? j : i, q = trans ? i : j;
          bool in_tri = lower ? p >= q : p <= q;
          double re = 0, im = 0;
          if (p == q && unit) re = 1;
          else if (in_tri) { re = ar[p][q]; im = ai[p][q]; }
          mr[i][j] = re;
          mi[i][j] = trans == 2 ? -im : im;
        }
      for (int i = 0; i < 3; i++)
        for (int j = 0; j < 3; j++) {
          double sr = 0, si = 0;
          for (int k = 0; k < 3; k++) {
            double pr = left ? mr[i][k] : xr[i][k], pi = left ? mi[i][k] : xi[i][k];
            double qr = left ? xr[k][j] : mr[k][j], qi = left ? xi[k][j] : mi[k][j];
            sr += pr * qr - pi * qi;
            si += pr * qi + pi * qr;
          }
          maxerr = fmax(maxerr, fabs(sr - br[i][j]) + fabs(si - bim[i][j]));
        }
    }
    if (!(maxerr < 1e-9)) fprintf(stderr, "  variant %d: residual %g\n", v, maxerr);
    CHECK(maxerr < 1e-9);
    tl_run_free(&r);
  }
}

TEST(cholesky_spec_example_and_not_positive_definite) {
  const char *text =
      "func.func @main() -> (tensor<3x3xf64>, tensor<3x3xf64>, tensor<2x2xf32>) {\n"
      CONST("a", "[[1.0, 2.0, 3.0], [2.0, 20.0, 26.0], [3.0, 26.0, 70.0]]", "tensor<3x3xf64>")
      CONST("n", "[[1.0, 2.0], [2.0, 1.0]]", "tensor<2x2xf32>")
      "  %0 = \"stablehlo.cholesky\"(%a) <{lower = true}> : (tensor<3x3xf64>) -> tensor<3x3xf64>\n"
      "  %1 = \"stablehlo.cholesky\"(%a) <{lower = false}> : (tensor<3x3xf64>) -> tensor<3x3xf64>\n"
      "  %2 = \"stablehlo.cholesky\"(%n) <{lower = true}> : (tensor<2x2xf32>) -> tensor<2x2xf32>\n"
      "  \"func.return\"(%0, %1, %2) : (tensor<3x3xf64>, tensor<3x3xf64>, tensor<2x2xf32>) -> ()\n}\n";
  tl_run r;
  CHECK(run_ok(text, &r, 3));
  if (r.n == 3) {
    double lo[] = {1, 0, 0, 2, 4, 0, 3, 5, 6};
    double up[] = {1, 2, 3, 0, 4, 5, 0, 0, 6};
    CHECK(near_all(r.res[0], lo, 9, 1e-12));
    CHECK(near_all(r.res[1], up, 9, 1e-12));
    CHECK(isnan(f64_at(r.res[2], 3)));
  }
  tl_run_free(&r);
}

TEST(cholesky_complex_batch_reads_one_triangle) {
  const char *text =
      "func.func @main() -> (tensor<2x2x2xcomplex<f64>>, tensor<2x2x2xcomplex<f64>>) {\n"
      CONST("lo", "[[[(4.0, 0.0), (99.0, 9.0)], [(2.0, 2.0), (6.0, 0.0)]], "
                  "[[(1.0, 0.0), (99.0, 9.0)], [(0.0, 0.0), (9.0, 0.0)]]]", "tensor<2x2x2xcomplex<f64>>")
      CONST("up", "[[[(4.0, 0.0), (2.0, -2.0)], [(99.0, 9.0), (6.0, 0.0)]], "
                  "[[(1.0, 0.0), (0.0, 0.0)], [(99.0, 9.0), (9.0, 0.0)]]]", "tensor<2x2x2xcomplex<f64>>")
      "  %0 = \"stablehlo.cholesky\"(%lo) <{lower = true}> : (tensor<2x2x2xcomplex<f64>>) -> tensor<2x2x2xcomplex<f64>>\n"
      "  %1 = \"stablehlo.cholesky\"(%up) : (tensor<2x2x2xcomplex<f64>>) -> tensor<2x2x2xcomplex<f64>>\n"
      "  \"func.return\"(%0, %1) : (tensor<2x2x2xcomplex<f64>>, tensor<2x2x2xcomplex<f64>>) -> ()\n}\n";
  tl_run r;
  CHECK(run_ok(text, &r, 2));
  if (r.n == 2) {
    /* lower: [[2, 0], [1+i, 2]], [[1, 0], [0, 3]]; upper: the conjugate transposes */
    static const double lo[] = {2, 0, 0, 0, 1, 1, 2, 0, 1, 0, 0, 0, 0, 0, 3, 0};
    static const double up[] = {2, 0, 1, -1, 0, 0, 2, 0, 1, 0, 0, 0, 0, 0, 3, 0};
    for (int i = 0; i < 8; i++) {
      double re, im;
      elem_get_c128(HLO_C128, r.res[0]->data, i, &re, &im);
      CHECK(fabs(re - lo[2 * i]) < 1e-12 && fabs(im - lo[2 * i + 1]) < 1e-12);
      elem_get_c128(HLO_C128, r.res[1]->data, i, &re, &im);
      CHECK(fabs(re - up[2 * i]) < 1e-12 && fabs(im - up[2 * i + 1]) < 1e-12);
    }
  }
  tl_run_free(&r);
}

TEST(convolution_batch_group_count) {
  const char *text =
      "func.func @main() -> tensor<1x2x2xf32> {\n"
      CONST("l", "[[[1.0], [2.0]], [[3.0], [4.0]]]", "tensor<2x2x1xf32>")
      CONST("r", "[[[10.0, 100.0]]]", "tensor<1x1x2xf32>")
      "  %0 = \"stablehlo.convolution\"(%l, %r) <{"
      "dimension_numbers = #stablehlo.conv<[b, 0, f]x[0, i, o]->[b, 0, f]>, "
      "batch_group_count = 2 : i64, feature_group_count = 1 : i64}> : "
      "(tensor<2x2x1xf32>, tensor<1x1x2xf32>) -> tensor<1x2x2xf32>\n"
      "  \"func.return\"(%0) : (tensor<1x2x2xf32>) -> ()\n}\n";
  tl_run r;
  CHECK(run_ok(text, &r, 1));
  if (r.n == 1) {
    double want[] = {10, 300, 20, 400};
    CHECK(near_all(r.res[0], want, 4, 0));
  }
  tl_run_free(&r);
}

/* ---------------------------------------------------------- batch_norm */

TEST(batch_norm_spec_examples) {
  const char *text =
      "func.func @main() -> (tensor<2x2x2xf64>, tensor<2x2x2xf64>, tensor<2xf64>, tensor<2xf64>, "
      "tensor<2x2x2xf64>, tensor<2xf64>, tensor<2xf64>) {\n"
      CONST("x", "[[[1.0, 2.0], [3.0, 4.0]], [[3.0, 4.0], [1.0, 2.0]]]", "tensor<2x2x2xf64>")
      CONST("one", "1.0", "tensor<2xf64>")
      CONST("mean", "[2.0, 3.0]", "tensor<2xf64>")
      CONST("g", "0.1", "tensor<2x2x2xf64>")
      "  %0 = \"stablehlo.batch_norm_inference\"(%x, %one, %one, %mean, %one) <{epsilon = 0.0 : f32, "
      "feature_index = 2 : i64}> : (tensor<2x2x2xf64>, tensor<2xf64>, tensor<2xf64>, tensor<2xf64>, "
      "tensor<2xf64>) -> tensor<2x2x2xf64>\n"
      "  %1:3 = \"stablehlo.batch_norm_training\"(%x, %one, %one) <{epsilon = 0.0 : f32, "
      "feature_index = 2 : i64}> : (tensor<2x2x2xf64>, tensor<2xf64>, tensor<2xf64>) -> "
      "(tensor<2x2x2xf64>, tensor<2xf64>, tensor<2xf64>)\n"
      "  %2:3 = \"stablehlo.batch_norm_grad\"(%x, %one, %mean, %one, %g) <{epsilon = 0.0 : f32, "
      "feature_index = 2 : i64}> : (tensor<2x2x2xf64>, tensor<2xf64>, tensor<2xf64>, tensor<2xf64>, "
      "tensor<2x2x2xf64>) -> (tensor<2x2x2xf64>, tensor<2xf64>, tensor<2xf64>)\n"
      "  \"func.return\"(%0, %1#0, %1#1, %1#2, %2#0, %2#1, %2#2) : (tensor<2x2x2xf64>, "
      "tensor<2x2x2xf64>, tensor<2xf64>, tensor<2xf64>, tensor<2x2x2xf64>, tensor<2xf64>, "
      "tensor<2xf64>) -> ()\n}\n";
  tl_run r;
  CHECK(run_ok(text, &r, 7));
  if (r.n == 7) {
    double norm[] = {0, 0, 2, 2, 2, 2, 0, 0};
    double mean[] = {2, 3}, var[] = {1, 1}, zeros[8] = {0}, off[] = {0.4, 0.4};
    CHECK(near_all(r.res[0], norm, 8, 1e-12));
    CHECK(near_all(r.res[1], norm, 8, 1e-12));
    CHECK(near_all(r.res[2], mean, 2, 1e-12));
    CHECK(near_all(r.res[3], var, 2, 1e-12));
    CHECK(near_all(r.res[4], zeros, 8, 1e-12));
    CHECK(near_all(r.res[5], zeros, 2, 1e-12));
    CHECK(near_all(r.res[6], off, 2, 1e-12));
  }
  tl_run_free(&r);
}

/* ------------------------------------------------------------------ rng */

TEST(rng_bit_generator_three_fry_spec_example) {
  const char *text =
      "func.func @main() -> (tensor<2xui64>, tensor<2x2xui64>) {\n"
      CONST("s", "[1, 2]", "tensor<2xui64>")
      "  %0:2 = \"stablehlo.rng_bit_generator\"(%s) <{rng_algorithm = "
      "#stablehlo<rng_algorithm THREE_FRY>}> : (tensor<2xui64>) -> (tensor<2xui64>, tensor<2x2xui64>)\n"
      "  \"func.return\"(%0#0, %0#1) : (tensor<2xui64>, tensor<2x2xui64>) -> ()\n}\n";
  tl_run r;
  CHECK(run_ok(text, &r, 2));
  if (r.n == 2) {
    static const uint64_t want[] = {9236835810183407956ull, 16087790271692313299ull,
                                    18212823393184779219ull, 2658481902456610144ull};
    CHECK(elem_get_u64(HLO_UI64, r.res[0]->data, 0) == 1);
    CHECK(elem_get_u64(HLO_UI64, r.res[0]->data, 1) == 6);
    for (int i = 0; i < 4; i++) CHECK(elem_get_u64(HLO_UI64, r.res[1]->data, i) == want[i]);
  }
  tl_run_free(&r);
}

TEST(rng_bit_generator_philox_state_and_32_bit_split) {
  /* PHILOX with a 3-word state advances the 128-bit counter by the number
   * of 4x32 blocks; THREE_FRY 32-bit output of 3x5 splits the largest
   * dimension (5, none even) and uses 3x3 counters. */
  const char *text =
      "func.func @main() -> (tensor<3xui64>, tensor<10xui32>, tensor<2xui64>, tensor<3x5xui32>) {\n"
      CONST("s", "[7, 18446744073709551614, 5]", "tensor<3xui64>")
      CONST("t", "[7, 100]", "tensor<2xui64>")
      "  %0:2 = \"stablehlo.rng_bit_generator\"(%s) <{rng_algorithm = "
      "#stablehlo<rng_algorithm PHILOX>}> : (tensor<3xui64>) -> (tensor<3xui64>, tensor<10xui32>)\n"
      "  %1:2 = \"stablehlo.rng_bit_generator\"(%t) <{rng_algorithm = "
      "#stablehlo<rng_algorithm THREE_FRY>}> : (tensor<2xui64>) -> (tensor<2xui64>, tensor<3x5xui32>)\n"
      "  \"func.return\"(%0#0, %0#1, %1#0, %1#1) : (tensor<3xui64>, tensor<10xui32>, "
      "tensor<2xui64>, tensor<3x5xui32>) -> ()\n}\n";
  tl_run r;
  CHECK(run_ok(text, &r, 4));
  if (r.n == 4) {
    /* 10 words = 3 blocks: counter 2^64-2 + 3 wraps the low word to 1 */
    CHECK(elem_get_u64(HLO_UI64, r.res[0]->data, 0) == 7);
    CHECK(elem_get_u64(HLO_UI64, r.res[0]->data, 1) == 1);
    CHECK(elem_get_u64(HLO_UI64, r.res[0]->data, 2) == 6);
    CHECK(elem_get_u64(HLO_UI64, r.res[2]->data, 1) == 109);
    /* different words, not all equal */
    CHECK(elem_get_u64(HLO_UI32, r.res[1]->data, 0) != elem_get_u64(HLO_UI32, r.res[1]->data, 1));
  }
  tl_run_free(&r);
}

TEST(rng_bit_generator_philox_known_answers) {
  /* Random123's philox4x32-10 known-answer vectors (counter 0 / key 0, and
   * the "pi" vector), through XLA's state layout [key, ctr_lo, ctr_hi]. */
  const char *text =
      "func.func @main() -> (tensor<4xui32>, tensor<4xui32>, tensor<2xui64>) {\n"
      CONST("z", "0", "tensor<3xui64>")
      CONST("p", "[0x299f31d0a4093822, 0x85a308d3243f6a88, 0x0370734413198a2e]", "tensor<3xui64>")
      "  %0:2 = \"stablehlo.rng_bit_generator\"(%z) <{rng_algorithm = "
      "#stablehlo<rng_algorithm PHILOX>}> : (tensor<3xui64>) -> (tensor<3xui64>, tensor<4xui32>)\n"
      "  %1:2 = \"stablehlo.rng_bit_generator\"(%p) <{rng_algorithm = "
      "#stablehlo<rng_algorithm PHILOX>}> : (tensor<3xui64>) -> (tensor<3xui64>, tensor<4xui32>)\n"
      "  %2:2 = \"stablehlo.rng_bit_generator\"(%z) <{rng_algorithm = "
      "#stablehlo<rng_algorithm PHILOX>}> : (tensor<3xui64>) -> (tensor<3xui64>, tensor<2xui64>)\n"
      "  \"func.return\"(%0#1, %1#1, %2#1) : (tensor<4xui32>, tensor<4xui32>, tensor<2xui64>) -> ()\n}\n";
  tl_run r;
  CHECK(run_ok(text, &r, 3));
  if (r.n == 3) {
    static const uint64_t z[] = {0x6627e8d5, 0xe169c58d, 0xbc57ac4c, 0x9b00dbd8};
    static const uint64_t pi[] = {0xd16cfe09, 0x94fdcceb, 0x5001e420, 0x24126ea1};
    for (int i = 0; i < 4; i++) {
      CHECK(elem_get_u64(HLO_UI32, r.res[0]->data, i) == z[i]);
      CHECK(elem_get_u64(HLO_UI32, r.res[1]->data, i) == pi[i]);
    }
    CHECK(elem_get_u64(HLO_UI64, r.res[2]->data, 0) == (z[0] | z[1] << 32));
    CHECK(elem_get_u64(HLO_UI64, r.res[2]->data, 1) == (z[2] | z[3] << 32));
  }
  tl_run_free(&r);
}

TEST(rng_uniform_is_deterministic_and_in_range) {
  const char *text =
      "func.func @main() -> (tensor<50xi32>, tensor<50xf32>, tensor<50xi32>) {\n"
      CONST("a", "-3", "tensor<i32>")
      CONST("b", "4", "tensor<i32>")
      CONST("fa", "1.0", "tensor<f32>")
      CONST("fb", "2.0", "tensor<f32>")
      CONST("sh", "[50]", "tensor<1xi64>")
      "  %0 = \"stablehlo.rng\"(%a, %b, %sh) <{rng_distribution = #stablehlo<rng_distribution UNIFORM>}>"
      " : (tensor<i32>, tensor<i32>, tensor<1xi64>) -> tensor<50xi32>\n"
      "  %1 = \"stablehlo.rng\"(%fa, %fb, %sh) <{rng_distribution = #stablehlo<rng_distribution UNIFORM>}>"
      " : (tensor<f32>, tensor<f32>, tensor<1xi64>) -> tensor<50xf32>\n"
      "  %2 = \"stablehlo.rng\"(%a, %b, %sh) <{rng_distribution = #stablehlo<rng_distribution UNIFORM>}>"
      " : (tensor<i32>, tensor<i32>, tensor<1xi64>) -> tensor<50xi32>\n"
      "  \"func.return\"(%0, %1, %2) : (tensor<50xi32>, tensor<50xf32>, tensor<50xi32>) -> ()\n}\n";
  tl_run r;
  CHECK(run_ok(text, &r, 3));
  if (r.n == 3) {
    bool distinct = false;
    for (int i = 0; i < 50; i++) {
      int64_t v = i64_at(r.res[0], i);
      double f = f64_at(r.res[1], i);
      CHECK(v >= -3 && v < 4);
      CHECK(f >= 1.0 && f < 2.0);
      CHECK(v == i64_at(r.res[2], i));
      if (v != i64_at(r.res[0], 0)) distinct = true;
    }
    CHECK(distinct);
  }
  tl_run_free(&r);
}

/* Hostile attributes and shapes give located errors, never crashes. */
TEST(bad_attributes_are_errors) {
#define F32X4 "tensor<1x4x4x1xf32>"
  static const char *const bodies[] = {
      /* convolution: stride 0, huge dilation, dimension out of range */
      "%0 = \"stablehlo.convolution\"(%x, %k) <{window_strides = array<i64: 0, 1>, "
      "dimension_numbers = #stablehlo.conv<[b, 0, 1, f]x[0, 1, i, o]->[b, 0, 1, f]>}> : "
      "(" F32X4 ", tensor<3x3x1x1xf32>) -> tensor<1x2x2x1xf32>",
      "%0 = \"stablehlo.convolution\"(%x, %k) <{lhs_dilation = array<i64: 9223372036854775807, 1>, "
      "padding = dense<[[-9223372036854775807, 9223372036854775807], [0, 0]]> : tensor<2x2xi64>, "
      "dimension_numbers = #stablehlo.conv<[b, 0, 1, f]x[0, 1, i, o]->[b, 0, 1, f]>}> : "
      "(" F32X4 ", tensor<3x3x1x1xf32>) -> tensor<1x2x2x1xf32>",
      "%0 = \"stablehlo.convolution\"(%x, %k) <{feature_group_count = 0 : i64, "
      "dimension_numbers = #stablehlo.conv<[b, 0, 1, f]x[0, 1, i, o]->[b, 0, 1, f]>}> : "
      "(" F32X4 ", tensor<3x3x1x1xf32>) -> tensor<1x2x2x1xf32>",
      /* dot_general: repeated dimension, mismatched sizes, wrong result shape */
      "%0 = \"stablehlo.dot_general\"(%x, %x) <{dot_dimension_numbers = #stablehlo.dot<"
      "lhs_batching_dimensions = [1], rhs_batching_dimensions = [1], lhs_contracting_dimensions = [1], "
      "rhs_contracting_dimensions = [2]>}> : (" F32X4 ", " F32X4 ") -> tensor<4xf32>",
      "%0 = \"stablehlo.dot_general\"(%x, %k) <{dot_dimension_numbers = #stablehlo.dot<"
      "lhs_contracting_dimensions = [1], rhs_contracting_dimensions = [0]>}> : "
      "(" F32X4 ", tensor<3x3x1x1xf32>) -> tensor<1x4x1x3x1x1xf32>",
      "%0 = \"stablehlo.dot_general\"(%x, %x) <{dot_dimension_numbers = #stablehlo.dot<"
      "lhs_contracting_dimensions = [-1], rhs_contracting_dimensions = [0]>}> : "
      "(" F32X4 ", " F32X4 ") -> tensor<4xf32>",
      /* fft: length does not match, too many lengths */
      "%0 = \"stablehlo.fft\"(%x) <{fft_type = #stablehlo<fft_type RFFT>, fft_length = array<i64: 5>}> : "
      "(" F32X4 ") -> tensor<1x4x4x3xcomplex<f32>>",
      "%0 = \"stablehlo.fft\"(%x) <{fft_type = #stablehlo<fft_type RFFT>, fft_length = array<i64: 1, 1, 1, 1, 1>}> : "
      "(" F32X4 ") -> tensor<1x4x4x1xcomplex<f32>>",
      /* batch_norm: feature_index out of range */
      "%0 = \"stablehlo.batch_norm_inference\"(%x, %v, %v, %v, %v) <{epsilon = 0.0 : f32, feature_index = 9 : i64}> : "
      "(" F32X4 ", tensor<1xf32>, tensor<1xf32>, tensor<1xf32>, tensor<1xf32>) -> " F32X4,
      /* cholesky of a non-square matrix; triangular_solve shape mismatch */
      "%0 = \"stablehlo.cholesky\"(%x) : (" F32X4 ") -> " F32X4,
      "%0 = \"stablehlo.triangular_solve\"(%k, %x) <{left_side = true, lower = true, unit_diagonal = false, "
      "transpose_a = #stablehlo<transpose NO_TRANSPOSE>}> : (tensor<3x3x1x1xf32>, " F32X4 ") -> " F32X4,
      /* rng_bit_generator: 3-word state for THREE_FRY */
      "%0:2 = \"stablehlo.rng_bit_generator\"(%s) <{rng_algorithm = #stablehlo<rng_algorithm THREE_FRY>}> : "
      "(tensor<3xui64>) -> (tensor<3xui64>, tensor<4xui32>)",
  };
  for (size_t i = 0; i < sizeof bodies / sizeof *bodies; i++) {
    char text[4096];
    snprintf(text, sizeof text,
             "func.func @main() {\n"
             CONSTF("x", "1.0", F32X4)
             CONSTF("k", "1.0", "tensor<3x3x1x1xf32>")
             CONSTF("v", "1.0", "tensor<1xf32>")
             CONSTF("s", "1", "tensor<3xui64>")
             "  %s\n"
             "  \"func.return\"() : () -> ()\n}\n",
             bodies[i]);
    tl_run r;
    hlo_status st = tl_run_text("<test>", text, 0, NULL, NULL, 0, &r);
    if (!st) fprintf(stderr, "  bad program #%zu ran without error\n", i);
    else if (getenv("HLO_TEST_VERBOSE")) hlo_status_print(st, stderr);
    CHECK(st != NULL);
    hlo_status_free(st);
    tl_run_free(&r);
  }
#undef F32X4
}

/* ------------------------------------------------------- corpus driver */

/* CMP_EQ_AUTO: exact for integers, almost equal (1e-4) otherwise. */
typedef enum cmp_kind { CMP_EXACT, CMP_ALMOST, CMP_ULP, CMP_EQ_AUTO } cmp_kind;

/* A check the driver took over: the value(s) it compared. */
typedef struct taken_check {
  cmp_kind kind;
  double tol;             /* CMP_ALMOST */
  int64_t max_ulp;        /* CMP_ULP */
  const hlo_attr *want;   /* *_const checks: the literal; else NULL */
  uint32_t first, count;  /* indices into the rewritten return */
} taken_check;

#define MAX_CHECKS 256

/* Ordered integer of a float's bits, for ULP distances (IEEE formats). */
static int64_t ordered_bits(hlo_dtype t, uint64_t b) {
  int w = dtype_bits(t);
  uint64_t sign = (uint64_t)1 << (w - 1);
  int64_t mag = (int64_t)(b & (sign - 1));
  return (b & sign) ? -mag : mag;
}

static bool almost(double a, double b, double tol) {
  if (isnan(a) && isnan(b)) return true;
  if (a == b) return true;
  return isfinite(a) && isfinite(b) && fabs(a - b) <= tol;
}

/* Compares element i of (dt, pa) with element j of (dt, pb). */
static bool elem_match(const taken_check *c0, hlo_dtype dt, const void *pa, int64_t i,
                       const void *pb, int64_t j) {
  taken_check auto_c = *c0;
  if (auto_c.kind == CMP_EQ_AUTO) auto_c.kind = CMP_ALMOST;
  const taken_check *c = &auto_c;
  switch (dtype_class(dt)) {
    case HLO_CLASS_BOOL:
    case HLO_CLASS_SINT: return elem_get_i64(dt, pa, i) == elem_get_i64(dt, pb, j);
    case HLO_CLASS_UINT: return elem_get_u64(dt, pa, i) == elem_get_u64(dt, pb, j);
    case HLO_CLASS_COMPLEX: {
      double ar, ai, br, bi;
      elem_get_c128(dt, pa, i, &ar, &ai);
      elem_get_c128(dt, pb, j, &br, &bi);
      if (c->kind == CMP_EXACT) return ar == br && ai == bi;
      double tol = c->kind == CMP_ALMOST ? c->tol : 1e-5 * fmax(1.0, fmax(fabs(br), fabs(bi)));
      return almost(ar, br, tol) && almost(ai, bi, tol);
    }
    default: {
      double a = elem_get_f64(dt, pa, i), b = elem_get_f64(dt, pb, j);
      if (c->kind == CMP_EXACT) return a == b || (isnan(a) && isnan(b));
      if (c->kind == CMP_ALMOST) return almost(a, b, c->tol);
      if (!isfinite(a) || !isfinite(b))
        return (isnan(a) && isnan(b)) || elem_get_bits(dt, pa, i) == elem_get_bits(dt, pb, j);
      int64_t d = ordered_bits(dt, elem_get_bits(dt, pa, i)) - ordered_bits(dt, elem_get_bits(dt, pb, j));
      return (d < 0 ? -d : d) <= c->max_ulp;
    }
  }
}

/* Takes the check ops out of `f`'s body and makes its return yield the
 * values they compared. Returns the number of checks, or -1 when `f` holds
 * a check this driver does not understand. */
static int take_checks(hlo_module_ir *m, hlo_func *f, taken_check *cs) {
  hlo_block *b = &f->body.block;
  hlo_value *vals[2 * MAX_CHECKS];
  uint32_t nv = 0;
  int n = 0;
  hlo_op *ret = b->last;
  if (!ret || ret->opcode != OP_FUNC_RETURN) return -1;
  for (hlo_op *op = b->first, *next; op; op = next) {
    next = op->next;
    taken_check c = {CMP_EXACT, 1e-4, 3, NULL, nv, 0};
    switch (op->opcode) {
      case OP_CHECK_EXPECT_EQ_CONST: c.want = op_attr(op, "value"); c.count = 1; break;
      case OP_CHECK_EXPECT_ALMOST_EQ_CONST: c.kind = CMP_ALMOST; c.want = op_attr(op, "value"); c.count = 1; break;
      case OP_CHECK_EXPECT_EQ: c.count = 2; break;
      case OP_CHECK_EXPECT_ALMOST_EQ: c.kind = CMP_ALMOST; c.count = 2; break;
      case OP_CHECK_EXPECT_CLOSE:
        c.kind = CMP_ULP;
        c.max_ulp = op_attr_int(op, "max_ulp_difference", 3);
        c.count = 2;
        break;
      case OP_CUSTOM_CALL: {
        const hlo_attr *t = op_attr(op, "call_target_name");
        if (!t || t->kind != ATTR_STRING || t->u.str.len < 6 || memcmp(t->u.str.s, "check.", 6)) continue;
        const char *nm = t->u.str.s + 6;
        size_t ln = t->u.str.len - 6;
        /* check.eq (quantized files): (expected, actual) -> i1, only returned */
        if (op->num_results && !(ln == 2 && !memcmp(nm, "eq", 2))) return -1;
        if (ln == 2 && !memcmp(nm, "eq", 2)) c.kind = CMP_EQ_AUTO;
        else if (ln == 9 && !memcmp(nm, "expect_eq", 9)) c.kind = CMP_EXACT;
        else if (ln == 12 && !memcmp(nm, "expect_close", 12)) c.kind = CMP_ULP;
        else if (ln == 16 && !memcmp(nm, "expect_almost_eq", 16)) { c.kind = CMP_ALMOST; c.tol = 1e-3; }
        else return -1;
        c.count = 2;
        break;
      }
      default: continue;
    }
    if (op->opcode == OP_CHECK_EXPECT_ALMOST_EQ_CONST || op->opcode == OP_CHECK_EXPECT_ALMOST_EQ) {
      const hlo_attr *tol = op_attr(op, "tolerance");
      if (tol && tol->kind == ATTR_FLOAT) c.tol = tol->u.f.v;
    }
    if (n >= MAX_CHECKS || op->num_operands < c.count || (c.count == 1 && !c.want)) return -1;
    for (uint32_t i = 0; i < c.count; i++) vals[nv++] = op->operands[i];
    cs[n++] = c;
    op_unlink(op);
  }
  hlo_value **ops = arena_calloc(&m->arena, nv ? nv : 1, sizeof *ops);
  hlo_type **tys = arena_calloc(&m->arena, nv ? nv : 1, sizeof *tys);
  attr_list *ra = arena_calloc(&m->arena, nv ? nv : 1, sizeof *ra);
  if (!ops || !tys || !ra) return -1;
  for (uint32_t i = 0; i < nv; i++) {
    ops[i] = vals[i];
    tys[i] = vals[i]->type;
  }
  ret->operands = ops;
  ret->num_operands = nv;
  f->num_results = nv;
  f->result_types = tys;
  f->result_attrs = ra;
  return n;
}

/* Replaces each `func.call @g()` in `f` whose callee takes no arguments by
 * constants holding the callee's results (computed by running it), so the
 * driver does not depend on the func.call kernel. */
static hlo_status fold_calls(hlo_module_ir *m, interp *it, hlo_func *f) {
  for (hlo_op *op = f->body.block.first, *next; op; op = next) {
    next = op->next;
    if (op->opcode != OP_FUNC_CALL || op->num_operands) continue;
    const hlo_attr *callee = op_attr(op, "callee");
    if (!callee || callee->kind != ATTR_SYMBOL) continue;
    hlo_func *g = module_find_func(m, callee->u.str.s);
    if (!g || g->num_args || g->num_results != op->num_results) continue;
    tensor **res = NULL;
    HLO_TRY(interp_call(it, g, NULL, 0, &res));
    hlo_status st = NULL;
    for (uint32_t i = 0; i < op->num_results && !st; i++) {
      hlo_type *t = op->results[i].type;
      hlo_op *c = op_create(m, OP_CONSTANT, NULL, 0, &t, 1, 0, op->loc);
      hlo_attr *v = c ? attr_dense(&m->arena, t, res[i]->data, res[i]->nbytes, false) : NULL;
      if (!v) st = status_new(HLO_RESOURCE_EXHAUSTED, "out of memory");
      if (!st) st = op_set_attr(m, c, "value", v);
      if (!st) {
        op_insert_before(op, c);
        block_replace_uses(&f->body.block, &op->results[i], &c->results[0]);
      }
    }
    for (uint32_t i = 0; i < g->num_results; i++) tensor_release(res[i]);
    free(res);
    HLO_TRY(st);
    op_unlink(op);
  }
  func_number_values(f);
  return NULL;
}

/* Compares the returned values with the taken checks; prints mismatches. */
static bool checks_pass(const taken_check *cs, int n, tensor **res, const char *where) {
  for (int k = 0; k < n; k++) {
    const taken_check *c = &cs[k];
    const tensor *a = res[c->first];
    if (a->type->kind != TYPE_TENSOR) return false;
    hlo_dtype dt = a->type->dtype;
    const void *pb;
    int64_t nb;
    bool splat = false;
    if (c->want) {
      if (c->want->kind != ATTR_DENSE || c->want->u.dense.type->dtype != dt) return false;
      pb = c->want->u.dense.data;
      nb = c->want->u.dense.num_elems;
      splat = c->want->u.dense.splat;
    } else {
      const tensor *b = res[c->first + 1];
      if (b->type->kind != TYPE_TENSOR || b->type->dtype != dt) return false;
      pb = b->data;
      nb = b->num_elems;
    }
    if (nb != a->num_elems) {
      fprintf(stderr, "  %s: check #%d: %lld elements vs %lld\n", where, k,
              (long long)a->num_elems, (long long)nb);
      return false;
    }
    for (int64_t i = 0; i < nb; i++)
      if (!elem_match(c, dt, a->data, i, pb, splat ? 0 : i)) {
        fprintf(stderr, "  %s: check #%d: element %lld differs (got %.9g, want %.9g)\n", where,
                k, (long long)i, elem_get_f64(dt, a->data, i), elem_get_f64(dt, pb, splat ? 0 : i));
        return false;
      }
  }
  return true;
}

/* Runs every piece of file `path`; returns pieces passed, sets *total. */
static int run_corpus_file(const char *path, int *total, bool verbose) {
  *total = 0;
  tl_file tf;
  hlo_status st = tl_file_load(path, &tf);
  if (st) {
    hlo_status_free(st);
    tl_file_free(&tf);
    return 0;
  }
  const split_piece *pieces = tf.pieces;
  int passed = 0;
  for (size_t p = 0; p < tf.num_pieces; p++) {
    char where[512];
    snprintf(where, sizeof where, "%s:%u", path, pieces[p].first_line);
    tl_run r = {0};
    taken_check cs[MAX_CHECKS];
    int nc = -1;
    bool ok = false;
    (*total)++;
    r.m = tl_parse_piece(&tf.src, pieces[p].begin, pieces[p].end, &st);
    if (!st) {
      r.f = module_entry(r.m, NULL);
      if (!r.f || r.f->num_args) st = status_new(HLO_NOT_FOUND, "no argument-less entry function");
    }
    if (!st) {
      nc = take_checks(r.m, r.f, cs);
      if (nc < 0) st = status_new(HLO_UNIMPLEMENTED, "unsupported check op");
    }
    if (!st) st = interp_create(r.m, NULL, &r.it);
    if (!st) st = fold_calls(r.m, r.it, r.f);
    if (!st) st = tl_call(&r, NULL, 0);
    if (!st) ok = checks_pass(cs, nc, r.res, where);
    if (st) {
      if (verbose) {
        fprintf(stderr, "  %s: ", where);
        hlo_status_print(st, stderr);
      }
      hlo_status_free(st);
    } else if (!ok && verbose) {
      fprintf(stderr, "  %s: values differ\n", where);
    }
    tl_run_free(&r);
    passed += ok;
  }
  tl_file_free(&tf);
  return passed;
}

/* The whole corpus of these ops: prints "passed N of M" (pieces). */
TEST(corpus_linalg_files) {
  static const char *const interp_files[] = {"dot_general.mlir", "convolution.mlir",
                                             "dynamic_conv.mlir", "fft.mlir",
                                             "triangular_solve.mlir", NULL};
  static const char *const td_prefixes[] = {"dot_general_", "conv_general_dilated_", "fft_",
                                            "triangular_solve_", "rng_bit_generator_",
                                            "cholesky_", "batch_norm_", NULL};
  char path[1024];
  int passed = 0, total = 0;
  for (int i = 0; interp_files[i]; i++) {
    snprintf(path, sizeof path, "%s/conformance/interpret/%s", tl_shared_dir(), interp_files[i]);
    int t;
    passed += run_corpus_file(path, &t, true);
    total += t;
  }
  snprintf(path, sizeof path, "%s/conformance/testdata", tl_shared_dir());
  DIR *d = opendir(path);
  if (!d) {
    printf("corpus: %s not found, skipping the corpus run\n", path);
    return;
  }
  closedir(d);
  tl_paths ps = {0};
  CHECK(tl_list_mlir(path, false, tl_name_has_prefix, td_prefixes, &ps));
  /* quantized variants (the core dequantizes around these kernels) */
  snprintf(path, sizeof path, "%s/conformance/testdata/quantized", tl_shared_dir());
  static const char *const q_prefixes[] = {"dot_general_", "conv_general_dilated_", "convolution_", NULL};
  CHECK(tl_list_mlir(path, false, tl_name_has_prefix, q_prefixes, &ps));
  tl_paths_sort(&ps);
  for (size_t i = 0; i < ps.n; i++) {
    int t;
    passed += run_corpus_file(ps.v[i], &t, true);
    total += t;
  }
  tl_paths_free(&ps);
  printf("corpus (linalg/conv/fft/rng): passed %d of %d\n", passed, total);
  CHECK(total > 0);
}

/* Handpicked files that must pass completely. */
TEST(corpus_handpicked) {
  static const char *const files[] = {
      "interpret/dot_general.mlir",
      "interpret/convolution.mlir",
      "interpret/dynamic_conv.mlir",
      "interpret/fft.mlir",
      "interpret/triangular_solve.mlir",
      "testdata/rng_bit_generator_uint32_4.mlir",
      "testdata/conv_general_dilated_float32_2_3_9_9_float32_12_1_3_3.mlir",
      "testdata/dot_general_int16_4_3_uint16_3_6.mlir",
      "testdata/fft_float32_14_15_16_17.mlir",
      "testdata/triangular_solve_float16_4_4_float16_4_1.mlir",
      NULL,
  };
  for (int i = 0; files[i]; i++) {
    char path[1024];
    snprintf(path, sizeof path, "%s/conformance/%s", tl_shared_dir(), files[i]);
    int t;
    int p = run_corpus_file(path, &t, false);
    if (t == 0) {
      printf("handpicked: %s not found, skipped\n", path);
      continue;
    }
    if (p != t) fprintf(stderr, "handpicked %s: passed %d of %d\n", files[i], p, t);
    CHECK(p == t);
  }
}

TEST_MAIN()
