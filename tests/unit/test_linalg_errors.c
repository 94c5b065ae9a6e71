/* Unit tests of the linear-algebra custom calls on bad data and bad names
 * (src/interp/interp_lapack_xerbla.c, interp_lapack_trsm.c,
 * interp_custom_call.c):
 *   - hlo's xerbla_ overrides reference LAPACK's and BLAS's (which print
 *     and STOP the process) in this very link (libhlo.a, then the shared
 *     -llapack -lblas): a LAPACK and a BLAS routine given an illegal
 *     argument return, and the report is recorded;
 *   - NaN input to ?geev / ?gesdd / cusolver gesvdj returns LAPACK's info
 *     in the info result (as jaxlib's handlers do) instead of failing;
 *   - ?trsm with a zero diagonal gives NaN / inf as OpenBLAS does
 *     (reference BLAS would skip zero right-hand sides), and right-side,
 *     transposed, conjugated complex solves are right (reconstruction);
 *   - an unknown target's error is short and suggests a near name;
 *     CustomSPMDPartitioning is explained. */
#include "test.h"
#include "testlib.h"

#include <complex.h>
#include <math.h>
#include <stdint.h>
#include "interp/interp.h"
#include "interp/interp_lapack.h"
#include "parse/parse.h"

/* Reference LAPACK / BLAS entry points called directly (gfortran ABI). */
void dpotrf_(const char *, const int *, double *, const int *, int *, size_t);
void sgebal_(const char *, const int *, float *, const int *, int *, int *, float *, int *,
             size_t);
void dtrsm_(const char *, const char *, const char *, const char *, const int *, const int *,
            const double *, const double *, const int *, double *, const int *, size_t, size_t,
            size_t, size_t);

TEST(xerbla_override_records_and_returns) {
  char name[LK_XERBLA_NAME_MAX];
  int arg = 0;
  lk_xerbla_clear();
  /* LAPACK: an illegal UPLO. Reference xerbla would print and exit. */
  double a[4] = {4, 1, 1, 3};
  int n = 2, info = 0;
  dpotrf_("X", &n, a, &n, &info, 1);
  CHECK_EQ_INT(info, -1);
  CHECK_EQ_INT(lk_xerbla_take(name, &arg), 1);
  CHECK_STR(name, "DPOTRF");
  CHECK_EQ_INT(arg, 1);
  CHECK_EQ_INT(lk_xerbla_take(NULL, NULL), 0);
  /* LAPACK 3.11+ ?GEBAL reports a NaN in the matrix as argument 3 (what
   * killed jnp.linalg.eig of a NaN matrix). */
  float f[4] = {NAN, 1, 2, 3}, scale[2];
  int ilo = 0, ihi = 0;
  sgebal_("B", &n, f, &n, &ilo, &ihi, scale, &info, 1);
  CHECK_EQ_INT(info, -3);
  CHECK_EQ_INT(lk_xerbla_take(name, &arg), 1);
  CHECK_STR(name, "SGEBAL");
  CHECK_EQ_INT(arg, 3);
  /* BLAS (libblas.so has its own xerbla_): an illegal SIDE. */
  double one = 1, b[2] = {1, 2};
  dtrsm_("Q", "L", "N", "N", &n, &n, &one, a, &n, b, &n, 1, 1, 1, 1);
  CHECK_EQ_INT(lk_xerbla_take(name, &arg), 1);
  CHECK_STR(name, "DTRSM");
  CHECK_EQ_INT(arg, 1);
}

/* A 3x3 real NaN matrix through lapack_sgeev_ffi and a complex one through
 * cuhybrid_eig_comp: no exit, no error; the results come back with an info
 * (JAX masks results where info != 0). */
TEST(geev_nan_returns) {
  arena ar;
  arena_init(&ar);
  const char *text =
      "func.func @main(%a: tensor<3x3xf32>) -> (tensor<3xf32>, tensor<3xf32>, tensor<i32>) {\n"
      "  %0:5 = stablehlo.custom_call @lapack_sgeev_ffi(%a) {mhlo.backend_config = "
      "{compute_left = 78 : ui8, compute_right = 86 : ui8}, operand_layouts = [dense<[0, 1]> : "
      "tensor<2xindex>], result_layouts = [dense<0> : tensor<1xindex>, dense<0> : "
      "tensor<1xindex>, dense<[0, 1]> : tensor<2xindex>, dense<[0, 1]> : tensor<2xindex>, "
      "dense<> : tensor<0xindex>]} : (tensor<3x3xf32>) -> (tensor<3xf32>, tensor<3xf32>, "
      "tensor<3x3xcomplex<f32>>, tensor<3x3xcomplex<f32>>, tensor<i32>)\n"
      "  return %0#0, %0#1, %0#4 : tensor<3xf32>, tensor<3xf32>, tensor<i32>\n}\n";
  float A[9];
  for (int i = 0; i < 9; i++) A[i] = NAN;
  int64_t d[2] = {3, 3};
  tensor *x = tl_tensor(&ar, HLO_F32, 2, d, A);
  tl_run r;
  hlo_status st = tl_run_text("geev.mlir", text, 0, NULL, &x, 1, &r);
  if (st) hlo_status_print(st, stderr);
  CHECK(st == NULL);
  if (!st) {
    /* Either LAPACK gave up (info != 0: JAX writes NaN) or it returned NaN. */
    int32_t info = *(int32_t *)r.res[2]->data;
    CHECK(info != 0 || isnan(((float *)r.res[0]->data)[0]));
  }
  tl_run_free(&r);
  hlo_status_free(st);
  tensor_release(x);
  const char *textc =
      "func.func @main(%a: tensor<2x2xcomplex<f32>>) -> (tensor<2xcomplex<f32>>, tensor<i32>) "
      "{\n"
      "  %0:4 = stablehlo.custom_call @cuhybrid_eig_comp(%a) {mhlo.backend_config = {left = "
      "false, magma = 0 : i32, right = true}, operand_layouts = [dense<[0, 1]> : "
      "tensor<2xindex>], result_layouts = [dense<0> : tensor<1xindex>, dense<[0, 1]> : "
      "tensor<2xindex>, dense<[0, 1]> : tensor<2xindex>, dense<> : tensor<0xindex>]} : "
      "(tensor<2x2xcomplex<f32>>) -> (tensor<2xcomplex<f32>>, tensor<2x2xcomplex<f32>>, "
      "tensor<2x2xcomplex<f32>>, tensor<i32>)\n"
      "  return %0#0, %0#3 : tensor<2xcomplex<f32>>, tensor<i32>\n}\n";
  float C[8] = {1, 0, NAN, 0, 2, 0, 3, 0};
  int64_t d2[2] = {2, 2};
  x = tl_tensor(&ar, HLO_C64, 2, d2, C);
  st = tl_run_text("eigc.mlir", textc, 0, NULL, &x, 1, &r);
  if (st) hlo_status_print(st, stderr);
  CHECK(st == NULL);
  if (!st) {
    int32_t info = *(int32_t *)r.res[1]->data;
    CHECK(info != 0 || isnan(((float *)r.res[0]->data)[0]));
  }
  tl_run_free(&r);
  hlo_status_free(st);
  tensor_release(x);
  arena_deinit(&ar);
}

/* ?gesdd and cusolver gesvdj of a matrix holding NaN: LAPACK's ?gesdd
 * returns info = -4 (its NaN check), which goes to the info result. */
TEST(svd_nan_info_not_error) {
  arena ar;
  arena_init(&ar);
  const char *text =
      "func.func @main(%a: tensor<2x2xf32>) -> (tensor<i32>, tensor<i32>) {\n"
      "  %0:5 = stablehlo.custom_call @lapack_sgesdd_ffi(%a) {mhlo.backend_config = {mode = 78 : "
      "ui8}, operand_layouts = [dense<[0, 1]> : tensor<2xindex>], result_layouts = [dense<[0, "
      "1]> : tensor<2xindex>, dense<0> : tensor<1xindex>, dense<[0, 1]> : tensor<2xindex>, "
      "dense<[0, 1]> : tensor<2xindex>, dense<> : tensor<0xindex>]} : (tensor<2x2xf32>) -> "
      "(tensor<2x2xf32>, tensor<2xf32>, tensor<2x2xf32>, tensor<2x2xf32>, tensor<i32>)\n"
      "  %1:5 = stablehlo.custom_call @cusolver_gesvdj_ffi(%a) {mhlo.backend_config = "
      "{compute_uv = true, full_matrices = false}, operand_layouts = [dense<[0, 1]> : "
      "tensor<2xindex>], result_layouts = [dense<[0, 1]> : tensor<2xindex>, dense<0> : "
      "tensor<1xindex>, dense<[0, 1]> : tensor<2xindex>, dense<[0, 1]> : tensor<2xindex>, "
      "dense<> : tensor<0xindex>]} : (tensor<2x2xf32>) -> (tensor<2x2xf32>, tensor<2xf32>, "
      "tensor<2x2xf32>, tensor<2x2xf32>, tensor<i32>)\n"
      "  return %0#4, %1#4 : tensor<i32>, tensor<i32>\n}\n";
  const float A[4] = {1, NAN, 2, 3};
  int64_t d[2] = {2, 2};
  tensor *x = tl_tensor(&ar, HLO_F32, 2, d, A);
  tl_run r;
  hlo_status st = tl_run_text("svd.mlir", text, 0, NULL, &x, 1, &r);
  if (st) hlo_status_print(st, stderr);
  CHECK(st == NULL);
  if (!st) {
    CHECK_EQ_INT(*(int32_t *)r.res[0]->data, -4);
    CHECK_EQ_INT(*(int32_t *)r.res[1]->data, -4);
  }
  tl_run_free(&r);
  hlo_status_free(st);
  tensor_release(x);
  arena_deinit(&ar);
}

/* An infinity in the matrix: reference ?gesdd and ?gesvd loop forever on it
 * (XLA:CPU hangs too); hlo answers info = -4, as ?gesdd does for a NaN, for
 * the cpu (lapack_sgesdd_ffi, full u/vt) and the GPU-named (gesvdj) targets. */
TEST(svd_inf_returns_info) {
  arena ar;
  arena_init(&ar);
  const char *text =
      "func.func @main(%a: tensor<3x3xf32>) -> (tensor<i32>, tensor<i32>) {\n"
      "  %0:5 = stablehlo.custom_call @lapack_sgesdd_ffi(%a) {mhlo.backend_config = {mode = 65 : "
      "ui8}, operand_layouts = [dense<[0, 1]> : tensor<2xindex>], result_layouts = [dense<[0, "
      "1]> : tensor<2xindex>, dense<0> : tensor<1xindex>, dense<[0, 1]> : tensor<2xindex>, "
      "dense<[0, 1]> : tensor<2xindex>, dense<> : tensor<0xindex>]} : (tensor<3x3xf32>) -> "
      "(tensor<3x3xf32>, tensor<3xf32>, tensor<3x3xf32>, tensor<3x3xf32>, tensor<i32>)\n"
      "  %1:5 = stablehlo.custom_call @cusolver_gesvdj_ffi(%a) {mhlo.backend_config = "
      "{compute_uv = true, full_matrices = true}, operand_layouts = [dense<[0, 1]> : "
      "tensor<2xindex>], result_layouts = [dense<[0, 1]> : tensor<2xindex>, dense<0> : "
      "tensor<1xindex>, dense<[0, 1]> : tensor<2xindex>, dense<[0, 1]> : tensor<2xindex>, "
      "dense<> : tensor<0xindex>]} : (tensor<3x3xf32>) -> (tensor<3x3xf32>, tensor<3xf32>, "
      "tensor<3x3xf32>, tensor<3x3xf32>, tensor<i32>)\n"
      "  return %0#4, %1#4 : tensor<i32>, tensor<i32>\n}\n";
  const float A[9] = {INFINITY, 1, 0, 1, 1, 0, 0, 0, 1};
  int64_t d[2] = {3, 3};
  tensor *x = tl_tensor(&ar, HLO_F32, 2, d, A);
  tl_run r;
  hlo_status st = tl_run_text("svd_inf.mlir", text, 0, NULL, &x, 1, &r);
  if (st) hlo_status_print(st, stderr);
  CHECK(st == NULL);
  if (!st) {
    CHECK_EQ_INT(*(int32_t *)r.res[0]->data, -4);
    CHECK_EQ_INT(*(int32_t *)r.res[1]->data, -4);
  }
  tl_run_free(&r);
  hlo_status_free(st);
  tensor_release(x);
  arena_deinit(&ar);
}

static const char *trsm_f32_text =
    "func.func @main(%a: tensor<2x2xf32>, %b: tensor<2x2xf32>) -> tensor<2x2xf32> {\n"
    "  %0 = stablehlo.custom_call @lapack_strsm_ffi(%a, %b) {mhlo.backend_config = {diag = 78 : "
    "ui8, side = 76 : ui8, trans_x = 78 : ui8, uplo = 76 : ui8}, operand_layouts = [dense<[0, "
    "1]> : tensor<2xindex>, dense<[0, 1]> : tensor<2xindex>], result_layouts = [dense<[0, 1]> "
    ": tensor<2xindex>]} : (tensor<2x2xf32>, tensor<2x2xf32>) -> tensor<2x2xf32>\n"
    "  return %0 : tensor<2x2xf32>\n}\n";

/* lower(A) X = B with A = [[0, 0], [1, 0]], B = [[0, 1], [1, 2]] (row-major):
 * OpenBLAS (scipy.linalg.blas.strsm) gives [[nan, inf], [nan, -inf]];
 * reference BLAS would leave the zero entry alone. */
TEST(trsm_zero_diagonal_nan_inf) {
  arena ar;
  arena_init(&ar);
  const float A[4] = {0, 0, 1, 0}, B[4] = {0, 1, 1, 2};
  int64_t d[2] = {2, 2};
  tensor *args[2] = {tl_tensor(&ar, HLO_F32, 2, d, A), tl_tensor(&ar, HLO_F32, 2, d, B)};
  tl_run r;
  hlo_status st = tl_run_text("trsm0.mlir", trsm_f32_text, 0, NULL, args, 2, &r);
  if (st) hlo_status_print(st, stderr);
  CHECK(st == NULL);
  if (!st) {
    const float *X = (const float *)r.res[0]->data;
    CHECK(isnan(X[0]) && isnan(X[2]));
    CHECK(isinf(X[1]) && X[1] > 0);
    CHECK(isinf(X[3]) && X[3] < 0);
  }
  tl_run_free(&r);
  hlo_status_free(st);
  tensor_release(args[0]);
  tensor_release(args[1]);
  arena_deinit(&ar);
}

/* Complex right-side solves X op(A) = alpha B for op = N, T, C and both
 * triangles, checked by multiplying back; and a zero complex diagonal
 * giving NaN (OpenBLAS's reciprocal of 0 + 0i). */
TEST(trsm_complex_right_side_and_zero) {
  arena ar;
  arena_init(&ar);
  static const char *const opts[4] = {
      "diag = 78 : ui8, side = 82 : ui8, trans_x = 78 : ui8, uplo = 76 : ui8",
      "diag = 78 : ui8, side = 82 : ui8, trans_x = 84 : ui8, uplo = 85 : ui8",
      "diag = 78 : ui8, side = 82 : ui8, trans_x = 67 : ui8, uplo = 76 : ui8",
      "diag = 78 : ui8, side = 82 : ui8, trans_x = 67 : ui8, uplo = 85 : ui8"};
  const double complex A[9] = {2 + 1 * I, 1 - 2 * I, 3 + 0.5 * I, 0.5 + I, 3 - I,
                               -1 + I,    2 * I,     1 + 3 * I,   4 + 2 * I};
  const double complex B[6] = {1 + I, 2, -1 + 3 * I, 0.5 * I, 4 - I, 2 + 2 * I};
  const double complex alpha = 2 - I;
  int64_t da[2] = {3, 3}, db[2] = {2, 3};
  for (int v = 0; v < 4; v++) {
    char text[2048];
    snprintf(text, sizeof text,
             "func.func @main(%%a: tensor<3x3xcomplex<f64>>, %%b: tensor<2x3xcomplex<f64>>, "
             "%%s: tensor<complex<f64>>) -> tensor<2x3xcomplex<f64>> {\n"
             "  %%0 = stablehlo.custom_call @lapack_ztrsm_ffi(%%a, %%b, %%s) "
             "{mhlo.backend_config = {%s}, operand_layouts = [dense<[0, 1]> : tensor<2xindex>, "
             "dense<[0, 1]> : tensor<2xindex>, dense<> : tensor<0xindex>], result_layouts = "
             "[dense<[0, 1]> : tensor<2xindex>]} : (tensor<3x3xcomplex<f64>>, "
             "tensor<2x3xcomplex<f64>>, tensor<complex<f64>>) -> tensor<2x3xcomplex<f64>>\n"
             "  return %%0 : tensor<2x3xcomplex<f64>>\n}\n",
             opts[v]);
    tensor *args[3] = {tl_tensor(&ar, HLO_C128, 2, da, A), tl_tensor(&ar, HLO_C128, 2, db, B),
                       tl_tensor(&ar, HLO_C128, 0, NULL, &alpha)};
    tl_run r;
    hlo_status st = tl_run_text("ztrsm.mlir", text, 0, NULL, args, 3, &r);
    if (st) hlo_status_print(st, stderr);
    CHECK(st == NULL);
    if (!st) {
      const double complex *X = (const double complex *)r.res[0]->data;
      bool lower = v == 0 || v == 2, tr = v > 0, cj = v >= 2;
      for (int i = 0; i < 2; i++)
        for (int j = 0; j < 3; j++) {
          double complex s = 0;
          for (int k = 0; k < 3; k++) {
            /* op(A)[k][j] from the triangle of A that is used. */
            int r0 = tr ? j : k, c0 = tr ? k : j;
            bool in_tri = lower ? r0 >= c0 : r0 <= c0;
            double complex e = in_tri ? A[r0 * 3 + c0] : 0;
            s += X[i * 3 + k] * (cj ? conj(e) : e);
          }
          CHECK(cabs(s - alpha * B[i * 3 + j]) < 1e-12);
        }
    }
    tl_run_free(&r);
    hlo_status_free(st);
    for (int i = 0; i < 3; i++) tensor_release(args[i]);
  }
  /* A zero complex diagonal: every entry NaN (XLA:CPU's inv of a singular
   * complex matrix is NaN everywhere). */
  const char *text0 =
      "func.func @main(%a: tensor<2x2xcomplex<f32>>, %b: tensor<2x1xcomplex<f32>>) -> "
      "tensor<2x1xcomplex<f32>> {\n"
      "  %0 = stablehlo.custom_call @lapack_ctrsm_ffi(%a, %b) {mhlo.backend_config = {diag = 78 "
      ": ui8, side = 76 : ui8, trans_x = 78 : ui8, uplo = 85 : ui8}, operand_layouts = "
      "[dense<[0, 1]> : tensor<2xindex>, dense<[0, 1]> : tensor<2xindex>], result_layouts = "
      "[dense<[0, 1]> : tensor<2xindex>]} : (tensor<2x2xcomplex<f32>>, "
      "tensor<2x1xcomplex<f32>>) -> tensor<2x1xcomplex<f32>>\n"
      "  return %0 : tensor<2x1xcomplex<f32>>\n}\n";
  const float A0[8] = {1, 0, 2, 0, 0, 0, 0, 0}, B0[4] = {1, 0, 0, 0};
  int64_t d22[2] = {2, 2}, d21[2] = {2, 1};
  tensor *args0[2] = {tl_tensor(&ar, HLO_C64, 2, d22, A0), tl_tensor(&ar, HLO_C64, 2, d21, B0)};
  tl_run r;
  hlo_status st = tl_run_text("ctrsm.mlir", text0, 0, NULL, args0, 2, &r);
  CHECK(st == NULL);
  if (!st) {
    const float *X = (const float *)r.res[0]->data;
    for (int i = 0; i < 4; i++) CHECK(isnan(X[i]));
  }
  tl_run_free(&r);
  hlo_status_free(st);
  tensor_release(args0[0]);
  tensor_release(args0[1]);
  arena_deinit(&ar);
}

/* The error of running custom_call @`target` on a tensor<2xf32>. */
static hlo_status run_target(const char *target) {
  char text[512];
  snprintf(text, sizeof text,
           "func.func @main() -> tensor<2xf32> {\n"
           "  %%c = stablehlo.constant dense<1.0> : tensor<2xf32>\n"
           "  %%0 = stablehlo.custom_call @%s(%%c) {backend_config = \"139935345788048\"} : "
           "(tensor<2xf32>) -> tensor<2xf32>\n"
           "  return %%0 : tensor<2xf32>\n}\n",
           target);
  static char keep[512]; /* the module's locations point into its text */
  memcpy(keep, text, sizeof keep);
  tl_run r;
  return tl_run_text("t.mlir", keep, 0, NULL, NULL, 0, &r);
}

TEST(unknown_target_short_with_suggestion) {
  hlo_status st = run_target("lapack_sgetrf_fi");
  CHECK_EQ_INT(hlo_status_code_of(st), HLO_NOT_FOUND);
  const char *m = st ? hlo_status_message(st) : "";
  CHECK(strstr(m, "'lapack_sgetrf_fi' is not registered"));
  CHECK(strstr(m, "did you mean 'lapack_sgetrf_ffi'?"));
  CHECK(strstr(m, "lapack_*") && strstr(m, "cusolver_*"));
  CHECK(strlen(m) < 500);
  hlo_status_free(st);
  st = run_target("Cusolver_Potrf_ffi"); /* case differs only */
  CHECK(st && strstr(hlo_status_message(st), "did you mean 'cusolver_potrf_ffi'?"));
  hlo_status_free(st);
  st = run_target("my_kernel"); /* nothing near: no suggestion */
  CHECK(st && strstr(hlo_status_message(st), "'my_kernel' is not registered (known:"));
  CHECK(st && !strstr(hlo_status_message(st), "did you mean"));
  hlo_status_free(st);
  st = run_target("CustomSPMDPartitioning");
  CHECK_EQ_INT(hlo_status_code_of(st), HLO_UNIMPLEMENTED);
  CHECK(st && strstr(hlo_status_message(st), "jax.experimental.custom_partitioning"));
  CHECK(st && strstr(hlo_status_message(st), "only JAX can run it"));
  hlo_status_free(st);
}

TEST_MAIN()
