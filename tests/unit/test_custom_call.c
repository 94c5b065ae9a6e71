/* Unit tests of src/interp/interp_custom_call.c: each LAPACK / cuSOLVER
 * target on small matrices (checked by reconstruction: L L^T = A, P A = L U,
 * A X = B, Q R = A), layouts and batches, pivots_to_permutation, unknown
 * targets (an error only when executed), and the real JAX programs
 * models/linalg_ops (CUDA and CPU variants) against their expected outputs. */
#include "test.h"
#include "testlib.h"

#include <complex.h>
#include <stdint.h>
#include "interp/interp.h"
#include "parse/parse.h"
#include "support/npy.h"

static const char *potrf_d =
    "func.func @main(%a: tensor<3x3xf64>) -> (tensor<3x3xf64>, tensor<i32>) {\n"
    "  %0:2 = stablehlo.custom_call @lapack_dpotrf_ffi(%a) {mhlo.backend_config = {uplo = 76 : "
    "ui8}, operand_layouts = [dense<[0, 1]> : tensor<2xindex>], result_layouts = [dense<[0, 1]> "
    ": tensor<2xindex>, dense<> : tensor<0xindex>]} : (tensor<3x3xf64>) -> (tensor<3x3xf64>, "
    "tensor<i32>)\n"
    "  return %0#0, %0#1 : tensor<3x3xf64>, tensor<i32>\n}\n";

TEST(potrf_double_lower) {
  arena ar;
  arena_init(&ar);
  const double A[9] = {4, 2, 0.5, 2, 5, 1, 0.5, 1, 3};
  int64_t d[2] = {3, 3};
  tensor *x = tl_tensor(&ar, HLO_F64, 2, d, A);
  tl_run r;
  hlo_status st = tl_run_text("potrf.mlir", potrf_d, 0, NULL, &x, 1, &r);
  if (st) hlo_status_print(st, stderr);
  CHECK(st == NULL);
  if (!st) {
    const double *L = (const double *)r.res[0]->data;
    CHECK_EQ_INT(*(int32_t *)r.res[1]->data, 0);
    /* L L^T over the lower triangle reproduces A; the upper triangle is
     * untouched (JAX masks it). */
    for (int i = 0; i < 3; i++)
      for (int j = 0; j <= i; j++) {
        double s = 0;
        for (int k = 0; k <= j; k++) s += L[i * 3 + k] * L[j * 3 + k];
        CHECK(fabs(s - A[i * 3 + j]) < 1e-12);
      }
    CHECK(L[0 * 3 + 2] == 0.5);
    CHECK(fabs(L[0] - 2.0) < 1e-15);
  }
  tl_run_free(&r);
  hlo_status_free(st);
  tensor_release(x);
  /* Not positive definite: info > 0. */
  const double B[9] = {1, 2, 0, 2, 1, 0, 0, 0, 1};
  x = tl_tensor(&ar, HLO_F64, 2, d, B);
  st = tl_run_text("potrf.mlir", potrf_d, 0, NULL, &x, 1, &r);
  CHECK(st == NULL);
  if (!st) CHECK(*(int32_t *)r.res[1]->data > 0);
  tl_run_free(&r);
  hlo_status_free(st);
  tensor_release(x);
  arena_deinit(&ar);
}

TEST(potrf_cusolver_batched_f32_and_complex) {
  arena ar;
  arena_init(&ar);
  /* Batch of two 2x2, layout minor-to-major [1, 2, 0]. */
  const char *text =
      "func.func @main(%a: tensor<2x2x2xf32>) -> (tensor<2x2x2xf32>, tensor<2xi32>) {\n"
      "  %0:2 = stablehlo.custom_call @cusolver_potrf_ffi(%a) {mhlo.backend_config = {lower = "
      "true}, operand_layouts = [dense<[1, 2, 0]> : tensor<3xindex>], result_layouts = "
      "[dense<[1, 2, 0]> : tensor<3xindex>, dense<0> : tensor<1xindex>]} : (tensor<2x2x2xf32>) "
      "-> (tensor<2x2x2xf32>, tensor<2xi32>)\n"
      "  return %0#0, %0#1 : tensor<2x2x2xf32>, tensor<2xi32>\n}\n";
  const float A[8] = {4, 2, 2, 5, 9, 3, 3, 5};
  int64_t d[3] = {2, 2, 2};
  tensor *x = tl_tensor(&ar, HLO_F32, 3, d, A);
  tl_run r;
  hlo_status st = tl_run_text("potrf.mlir", text, 0, NULL, &x, 1, &r);
  if (st) hlo_status_print(st, stderr);
  CHECK(st == NULL);
  if (!st) {
    const float *L = (const float *)r.res[0]->data;
    CHECK(fabsf(L[0] - 2) < 1e-6f && fabsf(L[2] - 1) < 1e-6f && fabsf(L[3] - 2) < 1e-6f);
    CHECK(fabsf(L[4] - 3) < 1e-6f && fabsf(L[6] - 1) < 1e-6f && fabsf(L[7] - 2) < 1e-6f);
    CHECK(((int32_t *)r.res[1]->data)[0] == 0 && ((int32_t *)r.res[1]->data)[1] == 0);
  }
  tl_run_free(&r);
  hlo_status_free(st);
  tensor_release(x);
  /* complex<f64> Hermitian [[4, 2i], [-2i, 5]] = L L^H with L = [[2, 0], [-i, 2]]. */
  const char *ztext =
      "func.func @main(%a: tensor<2x2xcomplex<f64>>) -> (tensor<2x2xcomplex<f64>>, tensor<i32>) {\n"
      "  %0:2 = stablehlo.custom_call @lapack_zpotrf_ffi(%a) {mhlo.backend_config = {uplo = 76 : "
      "ui8}, operand_layouts = [dense<[0, 1]> : tensor<2xindex>], result_layouts = [dense<[0, "
      "1]> : tensor<2xindex>, dense<> : tensor<0xindex>]} : (tensor<2x2xcomplex<f64>>) -> "
      "(tensor<2x2xcomplex<f64>>, tensor<i32>)\n"
      "  return %0#0, %0#1 : tensor<2x2xcomplex<f64>>, tensor<i32>\n}\n";
  const double Z[8] = {4, 0, 0, 2, 0, -2, 5, 0};
  int64_t dz[2] = {2, 2};
  x = tl_tensor(&ar, HLO_C128, 2, dz, Z);
  st = tl_run_text("zpotrf.mlir", ztext, 0, NULL, &x, 1, &r);
  if (st) hlo_status_print(st, stderr);
  CHECK(st == NULL);
  if (!st) {
    const double *L = (const double *)r.res[0]->data;
    CHECK(fabs(L[0] - 2) < 1e-12 && fabs(L[1]) < 1e-12);        /* L00 = 2 */
    CHECK(fabs(L[4]) < 1e-12 && fabs(L[5] + 1) < 1e-12);        /* L10 = -i */
    CHECK(fabs(L[6] - 2) < 1e-12 && fabs(L[7]) < 1e-12);        /* L11 = 2 */
  }
  tl_run_free(&r);
  hlo_status_free(st);
  tensor_release(x);
  arena_deinit(&ar);
}

TEST(getrf_pivots_reconstruct) {
  arena ar;
  arena_init(&ar);
  const char *text =
      "func.func @main(%a: tensor<3x3xf64>) -> (tensor<3x3xf64>, tensor<3xi32>, tensor<i32>) {\n"
      "  %0:3 = stablehlo.custom_call @lapack_dgetrf_ffi(%a) {operand_layouts = [dense<[0, 1]> "
      ": tensor<2xindex>], result_layouts = [dense<[0, 1]> : tensor<2xindex>, dense<0> : "
      "tensor<1xindex>, dense<> : tensor<0xindex>]} : (tensor<3x3xf64>) -> (tensor<3x3xf64>, "
      "tensor<3xi32>, tensor<i32>)\n"
      "  return %0#0, %0#1, %0#2 : tensor<3x3xf64>, tensor<3xi32>, tensor<i32>\n}\n";
  const double A[9] = {1, 2, 3, 4, 5, 6, 7, 8, 10};
  int64_t d[2] = {3, 3};
  tensor *x = tl_tensor(&ar, HLO_F64, 2, d, A);
  tl_run r;
  hlo_status st = tl_run_text("getrf.mlir", text, 0, NULL, &x, 1, &r);
  if (st) hlo_status_print(st, stderr);
  CHECK(st == NULL);
  if (!st) {
    const double *LU = (const double *)r.res[0]->data;
    const int32_t *ipiv = (const int32_t *)r.res[1]->data;
    CHECK_EQ_INT(*(int32_t *)r.res[2]->data, 0);
    CHECK_EQ_INT(ipiv[0], 3);  /* 1-based: row 3 (7, 8, 10) is the first pivot */
    double PA[9];
    memcpy(PA, A, sizeof PA);
    for (int i = 0; i < 3; i++) {
      int j = ipiv[i] - 1;
      for (int c = 0; c < 3; c++) {
        double t = PA[i * 3 + c];
        PA[i * 3 + c] = PA[j * 3 + c];
        PA[j * 3 + c] = t;
      }
    }
    for (int i = 0; i < 3; i++)
      for (int j = 0; j < 3; j++) {
        double s = 0;
        for (int k = 0; k < 3; k++) {
          double l = k < i ? LU[i * 3 + k] : k == i ? 1 : 0;
          double u = k <= j ? LU[k * 3 + j] : 0;
          s += l * u;
        }
        CHECK(fabs(s - PA[i * 3 + j]) < 1e-12);
      }
  }
  tl_run_free(&r);
  hlo_status_free(st);
  tensor_release(x);
  arena_deinit(&ar);
}

TEST(trsm_left_lower_and_upper) {
  arena ar;
  arena_init(&ar);
  const char *text =
      "func.func @main(%a: tensor<3x3xf32>, %b: tensor<3x2xf32>) -> (tensor<3x2xf32>, "
      "tensor<3x2xf32>) {\n"
      "  %0 = stablehlo.custom_call @lapack_strsm_ffi(%a, %b) {mhlo.backend_config = {diag = 78 "
      ": ui8, side = 76 : ui8, trans_x = 78 : ui8, uplo = 76 : ui8}, operand_layouts = "
      "[dense<[0, 1]> : tensor<2xindex>, dense<[0, 1]> : tensor<2xindex>], result_layouts = "
      "[dense<[0, 1]> : tensor<2xindex>]} : (tensor<3x3xf32>, tensor<3x2xf32>) -> "
      "tensor<3x2xf32>\n"
      "  %1 = stablehlo.custom_call @lapack_strsm_ffi(%a, %b) {mhlo.backend_config = {diag = 85 "
      ": ui8, side = 76 : ui8, trans_x = 84 : ui8, uplo = 85 : ui8}, operand_layouts = "
      "[dense<[0, 1]> : tensor<2xindex>, dense<[0, 1]> : tensor<2xindex>], result_layouts = "
      "[dense<[0, 1]> : tensor<2xindex>]} : (tensor<3x3xf32>, tensor<3x2xf32>) -> "
      "tensor<3x2xf32>\n"
      "  return %0, %1 : tensor<3x2xf32>, tensor<3x2xf32>\n}\n";
  const float A[9] = {2, 5, 7, 1, 3, 11, 4, 2, 4};
  const float B[6] = {2, 4, 7, 11, 19, 23};
  int64_t da[2] = {3, 3}, db[2] = {3, 2};
  tensor *args[2] = {tl_tensor(&ar, HLO_F32, 2, da, A), tl_tensor(&ar, HLO_F32, 2, db, B)};
  tl_run r;
  hlo_status st = tl_run_text("trsm.mlir", text, 0, NULL, args, 2, &r);
  if (st) hlo_status_print(st, stderr);
  CHECK(st == NULL);
  if (!st) {
    const float *X = (const float *)r.res[0]->data, *Y = (const float *)r.res[1]->data;
    for (int i = 0; i < 3; i++)
      for (int c = 0; c < 2; c++) {
        /* lower(A) X = B, non-unit diagonal */
        float s = 0;
        for (int k = 0; k <= i; k++) s += A[i * 3 + k] * X[k * 2 + c];
        CHECK(fabsf(s - B[i * 2 + c]) < 1e-4f);
        /* upper(A)^T Y = B with a unit diagonal */
        float t = 0;
        for (int k = 0; k <= i; k++) t += (k == i ? 1.0f : A[k * 3 + i]) * Y[k * 2 + c];
        CHECK(fabsf(t - B[i * 2 + c]) < 1e-3f);
      }
  }
  tl_run_free(&r);
  hlo_status_free(st);
  tensor_release(args[0]);
  tensor_release(args[1]);
  arena_deinit(&ar);
}

TEST(geqrf_orgqr_reconstruct) {
  arena ar;
  arena_init(&ar);
  const char *text =
      "func.func @main(%a: tensor<4x3xf64>) -> (tensor<4x3xf64>, tensor<4x3xf64>) {\n"
      "  %0:2 = stablehlo.custom_call @lapack_dgeqrf_ffi(%a) {operand_layouts = [dense<[0, 1]> : "
      "tensor<2xindex>], result_layouts = [dense<[0, 1]> : tensor<2xindex>, dense<0> : "
      "tensor<1xindex>]} : (tensor<4x3xf64>) -> (tensor<4x3xf64>, tensor<3xf64>)\n"
      "  %1 = stablehlo.custom_call @lapack_dorgqr_ffi(%0#0, %0#1) {operand_layouts = [dense<[0, "
      "1]> : tensor<2xindex>, dense<0> : tensor<1xindex>], result_layouts = [dense<[0, 1]> : "
      "tensor<2xindex>]} : (tensor<4x3xf64>, tensor<3xf64>) -> tensor<4x3xf64>\n"
      "  return %0#0, %1 : tensor<4x3xf64>, tensor<4x3xf64>\n}\n";
  const double A[12] = {1, 2, 3, 4, 5, 6, 7, 8, 10, 1, 0, 1};
  int64_t d[2] = {4, 3};
  tensor *x = tl_tensor(&ar, HLO_F64, 2, d, A);
  tl_run r;
  hlo_status st = tl_run_text("qr.mlir", text, 0, NULL, &x, 1, &r);
  if (st) hlo_status_print(st, stderr);
  CHECK(st == NULL);
  if (!st) {
    const double *R = (const double *)r.res[0]->data, *Q = (const double *)r.res[1]->data;
    for (int i = 0; i < 4; i++)
      for (int j = 0; j < 3; j++) {
        double s = 0;
        for (int k = 0; k <= j; k++) s += Q[i * 3 + k] * R[k * 3 + j];
        CHECK(fabs(s - A[i * 3 + j]) < 1e-12);
      }
    for (int a = 0; a < 3; a++)  /* Q has orthonormal columns */
      for (int b = 0; b < 3; b++) {
        double s = 0;
        for (int i = 0; i < 4; i++) s += Q[i * 3 + a] * Q[i * 3 + b];
        CHECK(fabs(s - (a == b)) < 1e-12);
      }
  }
  tl_run_free(&r);
  hlo_status_free(st);
  tensor_release(x);
  arena_deinit(&ar);
}

TEST(syevd_eigendecomposition) {
  arena ar;
  arena_init(&ar);
  const char *text =
      "func.func @main(%a: tensor<3x3xf64>) -> (tensor<3x3xf64>, tensor<3xf64>, tensor<i32>) {\n"
      "  %0:3 = stablehlo.custom_call @lapack_dsyevd_ffi(%a) {mhlo.backend_config = {mode = 86 : "
      "ui8, uplo = 76 : ui8}, operand_layouts = [dense<[0, 1]> : tensor<2xindex>], "
      "result_layouts = [dense<[0, 1]> : tensor<2xindex>, dense<0> : tensor<1xindex>, dense<> : "
      "tensor<0xindex>]} : (tensor<3x3xf64>) -> (tensor<3x3xf64>, tensor<3xf64>, tensor<i32>)\n"
      "  return %0#0, %0#1, %0#2 : tensor<3x3xf64>, tensor<3xf64>, tensor<i32>\n}\n";
  const double A[9] = {2, -1, 0, -1, 2, -1, 0, -1, 2};
  int64_t d[2] = {3, 3};
  tensor *x = tl_tensor(&ar, HLO_F64, 2, d, A);
  tl_run r;
  hlo_status st = tl_run_text("eigh.mlir", text, 0, NULL, &x, 1, &r);
  if (st) hlo_status_print(st, stderr);
  CHECK(st == NULL);
  if (!st) {
    const double *V = (const double *)r.res[0]->data, *w = (const double *)r.res[1]->data;
    CHECK_EQ_INT(*(int32_t *)r.res[2]->data, 0);
    CHECK(fabs(w[0] - (2 - sqrt(2.0))) < 1e-12 && fabs(w[1] - 2) < 1e-12 &&
          fabs(w[2] - (2 + sqrt(2.0))) < 1e-12);
    for (int i = 0; i < 3; i++)  /* A v_j = w_j v_j, v_j the columns of V */
      for (int j = 0; j < 3; j++) {
        double s = 0;
        for (int k = 0; k < 3; k++) s += A[i * 3 + k] * V[k * 3 + j];
        CHECK(fabs(s - w[j] * V[i * 3 + j]) < 1e-12);
      }
  }
  tl_run_free(&r);
  hlo_status_free(st);
  tensor_release(x);
  /* complex<f32> Hermitian [[2, i], [-i, 2]]: eigenvalues 1 and 3 (f32). */
  const char *ctext =
      "func.func @main(%a: tensor<2x2xcomplex<f32>>) -> (tensor<2x2xcomplex<f32>>, tensor<2xf32>, "
      "tensor<i32>) {\n"
      "  %0:3 = stablehlo.custom_call @lapack_cheevd_ffi(%a) {mhlo.backend_config = {mode = 86 : "
      "ui8, uplo = 76 : ui8}, operand_layouts = [dense<[0, 1]> : tensor<2xindex>], "
      "result_layouts = [dense<[0, 1]> : tensor<2xindex>, dense<0> : tensor<1xindex>, dense<> : "
      "tensor<0xindex>]} : (tensor<2x2xcomplex<f32>>) -> (tensor<2x2xcomplex<f32>>, "
      "tensor<2xf32>, tensor<i32>)\n"
      "  return %0#0, %0#1, %0#2 : tensor<2x2xcomplex<f32>>, tensor<2xf32>, tensor<i32>\n}\n";
  const float C[8] = {2, 0, 0, 1, 0, -1, 2, 0};
  int64_t d2[2] = {2, 2};
  x = tl_tensor(&ar, HLO_C64, 2, d2, C);
  st = tl_run_text("heevd.mlir", ctext, 0, NULL, &x, 1, &r);
  if (st) hlo_status_print(st, stderr);
  CHECK(st == NULL);
  if (!st) {
    const float *w = (const float *)r.res[1]->data;
    CHECK(fabsf(w[0] - 1) < 1e-5f && fabsf(w[1] - 3) < 1e-5f);
  }
  tl_run_free(&r);
  hlo_status_free(st);
  tensor_release(x);
  arena_deinit(&ar);
}

TEST(gesdd_reconstruct) {
  arena ar;
  arena_init(&ar);
  const char *text =
      "func.func @main(%a: tensor<3x2xf64>) -> (tensor<2xf64>, tensor<3x2xf64>, tensor<2x2xf64>, "
      "tensor<i32>) {\n"
      "  %0:5 = stablehlo.custom_call @lapack_dgesdd_ffi(%a) {mhlo.backend_config = {mode = 83 : "
      "ui8}, operand_layouts = [dense<[0, 1]> : tensor<2xindex>], result_layouts = [dense<[0, "
      "1]> : tensor<2xindex>, dense<0> : tensor<1xindex>, dense<[0, 1]> : tensor<2xindex>, "
      "dense<[0, 1]> : tensor<2xindex>, dense<> : tensor<0xindex>]} : (tensor<3x2xf64>) -> "
      "(tensor<3x2xf64>, tensor<2xf64>, tensor<3x2xf64>, tensor<2x2xf64>, tensor<i32>)\n"
      "  return %0#1, %0#2, %0#3, %0#4 : tensor<2xf64>, tensor<3x2xf64>, tensor<2x2xf64>, "
      "tensor<i32>\n}\n";
  const double A[6] = {3, 1, 1, 3, 2, -2};
  int64_t d[2] = {3, 2};
  tensor *x = tl_tensor(&ar, HLO_F64, 2, d, A);
  tl_run r;
  hlo_status st = tl_run_text("svd.mlir", text, 0, NULL, &x, 1, &r);
  if (st) hlo_status_print(st, stderr);
  CHECK(st == NULL);
  if (!st) {
    const double *sv = (const double *)r.res[0]->data, *U = (const double *)r.res[1]->data;
    const double *Vt = (const double *)r.res[2]->data;
    CHECK_EQ_INT(*(int32_t *)r.res[3]->data, 0);
    CHECK(sv[0] >= sv[1] && sv[1] > 0);
    for (int i = 0; i < 3; i++)
      for (int j = 0; j < 2; j++) {
        double t = 0;
        for (int k = 0; k < 2; k++) t += U[i * 2 + k] * sv[k] * Vt[k * 2 + j];
        CHECK(fabs(t - A[i * 2 + j]) < 1e-12);
      }
  }
  tl_run_free(&r);
  hlo_status_free(st);
  tensor_release(x);
  arena_deinit(&ar);
}

TEST(lu_pivots_to_permutation) {
  arena ar;
  arena_init(&ar);
  const char *text =
      "func.func @main(%p: tensor<2x3xi32>) -> tensor<2x4xi32> {\n"
      "  %0 = stablehlo.custom_call @cu_lu_pivots_to_permutation(%p) : (tensor<2x3xi32>) -> "
      "tensor<2x4xi32>\n"
      "  return %0 : tensor<2x4xi32>\n}\n";
  const int32_t P[6] = {2, 2, 2, 3, 1, 2};
  int64_t d[2] = {2, 3};
  tensor *x = tl_tensor(&ar, HLO_I32, 2, d, P);
  tl_run r;
  hlo_status st = tl_run_text("perm.mlir", text, 0, NULL, &x, 1, &r);
  CHECK(st == NULL);
  if (!st) {
    const int32_t *p = (const int32_t *)r.res[0]->data;
    /* [0,1,2,3]: swap(0,2) -> [2,1,0,3]; swap(1,2) -> [2,0,1,3]; swap(2,2). */
    CHECK(p[0] == 2 && p[1] == 0 && p[2] == 1 && p[3] == 3);
    /* [0,1,2,3]: swap(0,3) -> [3,1,2,0]; swap(1,1); swap(2,2). */
    CHECK(p[4] == 3 && p[5] == 1 && p[6] == 2 && p[7] == 0);
  }
  tl_run_free(&r);
  hlo_status_free(st);
  tensor_release(x);
  arena_deinit(&ar);
}

TEST(unknown_target_fails_only_when_run) {
  const char *text =
      "func.func private @never(%x: tensor<2xf32>) -> tensor<2xf32> {\n"
      "  %0 = stablehlo.custom_call @foo(%x) : (tensor<2xf32>) -> tensor<2xf32>\n"
      "  return %0 : tensor<2xf32>\n}\n"
      "func.func @main() -> tensor<i32> {\n"
      "  %0 = stablehlo.constant dense<7> : tensor<i32>\n"
      "  return %0 : tensor<i32>\n}\n";
  tl_run r;
  hlo_status st = tl_run_text("u.mlir", text, 0, NULL, NULL, 0, &r);
  CHECK(st == NULL);
  tl_run_free(&r);
  hlo_status_free(st);
  const char *text2 =
      "func.func @main() -> tensor<2xf32> {\n"
      "  %c = stablehlo.constant dense<1.0> : tensor<2xf32>\n"
      "  %0 = stablehlo.custom_call @foo(%c) : (tensor<2xf32>) -> tensor<2xf32>\n"
      "  return %0 : tensor<2xf32>\n}\n";
  st = tl_run_text("u.mlir", text2, 0, NULL, NULL, 0, &r);
  CHECK_EQ_INT(hlo_status_code_of(st), HLO_NOT_FOUND);
  CHECK(st && strstr(hlo_status_message(st), "custom_call target 'foo' is not registered"));
  /* Families, not the ~100 names (tests/unit/test_linalg_errors.c checks
   * the suggestions). */
  CHECK(st && strstr(hlo_status_message(st), "lapack_*"));
  CHECK(st && !strstr(hlo_status_message(st), "lapack_spotrf_ffi"));
  const hlo_loc *loc = status_loc(st);
  CHECK(loc && loc->line == 3);
  hlo_status_free(st);
  /* Wrong element type for a typed target. */
  const char *text3 =
      "func.func @main() -> (tensor<2x2xf64>, tensor<i32>) {\n"
      "  %c = stablehlo.constant dense<[[1.0, 0.0], [0.0, 1.0]]> : tensor<2x2xf64>\n"
      "  %0:2 = stablehlo.custom_call @lapack_spotrf_ffi(%c) : (tensor<2x2xf64>) -> "
      "(tensor<2x2xf64>, tensor<i32>)\n"
      "  return %0#0, %0#1 : tensor<2x2xf64>, tensor<i32>\n}\n";
  st = tl_run_text("u.mlir", text3, 0, NULL, NULL, 0, &r);
  CHECK_EQ_INT(hlo_status_code_of(st), HLO_INVALID_ARGUMENT);
  hlo_status_free(st);
}

/* models/linalg_ops/<file> on inputs/argK.npy must give expected/outK.npy
 * within 1e-4 relative (norm of the difference over norm of the reference). */
static void run_model(const char *file) {
  char dir[1024], path[1200];
  snprintf(dir, sizeof dir, "%s/models/linalg_ops", tl_shared_dir());
  snprintf(path, sizeof path, "%s/%s", dir, file);
  size_t len = 0;
  char *text = tl_read_file(path, &len);
  if (!text) {
    printf("linalg model %s: skipped, not found (set HLO_SHARED)\n", path);
    return;
  }
  arena ar;
  arena_init(&ar);
  tensor *args[2] = {NULL, NULL};
  for (int i = 0; i < 2; i++) {
    snprintf(path, sizeof path, "%s/inputs/arg%d.npy", dir, i);
    npy_array a;
    hlo_status st = npy_read(path, &a);
    CHECK(st == NULL);
    hlo_status_free(st);
    args[i] = tl_tensor(&ar, a.dtype, (uint32_t)a.rank, a.dims, a.data);
    npy_free(&a);
  }
  tl_run r;
  hlo_status st = tl_run_text(file, text, 0, NULL, args, 2, &r);
  if (st) hlo_status_print(st, stderr);
  CHECK(st == NULL);
  for (uint32_t i = 0; !st && i < r.n; i++) {
    snprintf(path, sizeof path, "%s/expected/out%u.npy", dir, i);
    npy_array e;
    hlo_status est = npy_read(path, &e);
    CHECK(est == NULL);
    hlo_status_free(est);
    CHECK(e.nbytes == r.res[i]->nbytes && e.dtype == HLO_F32);
    if (e.nbytes == r.res[i]->nbytes && e.dtype == HLO_F32) {
      double num = 0, den = 0;
      const float *got = (const float *)r.res[i]->data, *want = e.data;
      for (size_t k = 0; k < e.nbytes / 4; k++) {
        num += ((double)got[k] - want[k]) * ((double)got[k] - want[k]);
        den += (double)want[k] * want[k];
      }
      double rel = den > 0 ? sqrt(num / den) : sqrt(num);
      if (!(rel <= 1e-4)) fprintf(stderr, "%s out%u: relative error %g\n", file, i, rel);
      CHECK(rel <= 1e-4);
    }
    npy_free(&e);
  }
  if (!st) tl_run_free(&r);
  hlo_status_free(st);
  tensor_release(args[0]);
  tensor_release(args[1]);
  arena_deinit(&ar);
  free(text);
}

TEST(model_linalg_ops_cpu) { run_model("linalg_ops.cpu.mlir"); }
TEST(model_linalg_ops_cuda) { run_model("linalg_ops.mlir"); }

/* Host callbacks: one returning only a token is skipped (the program runs
 * on); one whose result is data fails, naming the JAX feature. */
TEST(python_callbacks_skip_or_fail) {
  const char *skip =
      "func.func @main(%x: tensor<2xf32>) -> tensor<2xf32> {\n"
      "  %t = stablehlo.create_token : !stablehlo.token\n"
      "  %0 = stablehlo.custom_call @xla_ffi_python_cpu_callback(%t, %x) {has_side_effect = "
      "true} : (!stablehlo.token, tensor<2xf32>) -> !stablehlo.token\n"
      "  stablehlo.custom_call @xla_python_cpu_callback(%x) {has_side_effect = true} : "
      "(tensor<2xf32>) -> ()\n"
      "  %1 = stablehlo.add %x, %x : tensor<2xf32>\n"
      "  return %1 : tensor<2xf32>\n}\n";
  arena ar;
  arena_init(&ar);
  const float X[2] = {1.5f, -2.0f};
  int64_t d[1] = {2};
  tensor *x = tl_tensor(&ar, HLO_F32, 1, d, X);
  tl_run r;
  hlo_status st = tl_run_text("cb.mlir", skip, 0, NULL, &x, 1, &r);
  if (st) hlo_status_print(st, stderr);
  CHECK(st == NULL);
  if (!st) CHECK(((float *)r.res[0]->data)[1] == -4.0f);
  tl_run_free(&r);
  hlo_status_free(st);
  const char *pure =
      "func.func @main(%x: tensor<2xf32>) -> tensor<2xf32> {\n"
      "  %0 = stablehlo.custom_call @xla_ffi_python_cpu_callback(%x) : (tensor<2xf32>) -> "
      "tensor<2xf32>\n"
      "  return %0 : tensor<2xf32>\n}\n";
  st = tl_run_text("cb.mlir", pure, 0, NULL, &x, 1, &r);
  CHECK_EQ_INT(hlo_status_code_of(st), HLO_UNIMPLEMENTED);
  CHECK(st && strstr(hlo_status_message(st), "jax.pure_callback"));
  CHECK(st && strstr(hlo_status_message(st), "Python package"));
  CHECK(st && status_loc(st) && status_loc(st)->line == 2);
  hlo_status_free(st);
  CHECK(interp_custom_call_known("xla_ffi_python_gpu_callback"));
  tensor_release(x);
  arena_deinit(&ar);
}

/* interp_first_time (the skipped-callback warning's once-only state): per
 * interpreter family, shared by forks, fresh for a new interpreter even
 * over a module at the same address. */
TEST(first_time_per_interpreter_family) {
  const char *text = "func.func @main() -> tensor<i32> {\n"
                     "  %0 = stablehlo.constant dense<1> : tensor<i32>\n"
                     "  return %0 : tensor<i32>\n}\n";
  for (int round = 0; round < 2; round++) {
    hlo_source src = tl_source("once.mlir", text);
    tl_run r;
    hlo_status st = tl_prepare(&src, 0, src.len, 0, NULL, &r);
    CHECK(st == NULL);
    if (st) {
      hlo_status_free(st);
      return;
    }
    CHECK(interp_first_time(r.it, "xla_python_cpu_callback"));
    CHECK(!interp_first_time(r.it, "xla_python_cpu_callback"));
    CHECK(interp_first_time(r.it, "xla_ffi_python_cpu_callback"));
    interp *f = NULL;
    st = interp_fork(r.it, NULL, &f);
    CHECK(st == NULL);
    if (!st) CHECK(!interp_first_time(f, "xla_ffi_python_cpu_callback"));
    interp_destroy(f);
    tl_run_free(&r);
  }
}

/* Real ?geev of a rotation: eigenvalues +-i and complex eigenvectors
 * unpacked from LAPACK's real pair form, checked by A v = w v. */
TEST(geev_real_rotation_complex_pair) {
  const char *text =
      "func.func @main(%a: tensor<2x2xf64>) -> (tensor<2xf64>, tensor<2xf64>, "
      "tensor<2x2xcomplex<f64>>, tensor<2x2xcomplex<f64>>, tensor<i32>) {\n"
      "  %0:5 = stablehlo.custom_call @lapack_dgeev_ffi(%a) {mhlo.backend_config = "
      "{compute_left = 86 : ui8, compute_right = 86 : ui8}, operand_layouts = [dense<[0, 1]> : "
      "tensor<2xindex>], result_layouts = [dense<0> : tensor<1xindex>, dense<0> : "
      "tensor<1xindex>, dense<[0, 1]> : tensor<2xindex>, dense<[0, 1]> : tensor<2xindex>, "
      "dense<> : tensor<0xindex>]} : (tensor<2x2xf64>) -> (tensor<2xf64>, tensor<2xf64>, "
      "tensor<2x2xcomplex<f64>>, tensor<2x2xcomplex<f64>>, tensor<i32>)\n"
      "  return %0#0, %0#1, %0#2, %0#3, %0#4 : tensor<2xf64>, tensor<2xf64>, "
      "tensor<2x2xcomplex<f64>>, tensor<2x2xcomplex<f64>>, tensor<i32>\n}\n";
  arena ar;
  arena_init(&ar);
  const double A[4] = {0, -1, 1, 0};
  int64_t d[2] = {2, 2};
  tensor *x = tl_tensor(&ar, HLO_F64, 2, d, A);
  tl_run r;
  hlo_status st = tl_run_text("geev.mlir", text, 0, NULL, &x, 1, &r);
  if (st) hlo_status_print(st, stderr);
  CHECK(st == NULL);
  if (!st) {
    const double *wr = (const double *)r.res[0]->data, *wi = (const double *)r.res[1]->data;
    CHECK_EQ_INT(*(int32_t *)r.res[4]->data, 0);
    CHECK(fabs(wr[0]) < 1e-12 && fabs(fabs(wi[0]) - 1) < 1e-12 && fabs(wi[0] + wi[1]) < 1e-12);
    const double complex *v = (const double complex *)r.res[3]->data; /* row-major v[i][j] */
    for (int j = 0; j < 2; j++) {
      double complex w = wr[j] + I * wi[j];
      double nrm = 0;
      for (int i = 0; i < 2; i++) {
        double complex av = A[i * 2 + 0] * v[0 * 2 + j] + A[i * 2 + 1] * v[1 * 2 + j];
        CHECK(cabs(av - w * v[i * 2 + j]) < 1e-12);
        nrm += cabs(v[i * 2 + j]) * cabs(v[i * 2 + j]);
      }
      CHECK(fabs(nrm - 1) < 1e-12);
    }
  }
  tl_run_free(&r);
  hlo_status_free(st);
  tensor_release(x);
  arena_deinit(&ar);
}

/* cusparse_gtsv2_ffi: a solvable system (checked by substitution), then a
 * singular one: NaN. JAX's convention: dl[0] = du[n-1] = 0. */
TEST(gtsv2_solve_and_singular) {
  const char *text =
      "func.func @main(%dl: tensor<3xf64>, %d: tensor<3xf64>, %du: tensor<3xf64>, %b: "
      "tensor<3x1xf64>) -> tensor<3x1xf64> {\n"
      "  %0 = stablehlo.custom_call @cusparse_gtsv2_ffi(%dl, %d, %du, %b) {operand_layouts = "
      "[dense<0> : tensor<1xindex>, dense<0> : tensor<1xindex>, dense<0> : tensor<1xindex>, "
      "dense<[0, 1]> : tensor<2xindex>], result_layouts = [dense<[0, 1]> : tensor<2xindex>]} : "
      "(tensor<3xf64>, tensor<3xf64>, tensor<3xf64>, tensor<3x1xf64>) -> tensor<3x1xf64>\n"
      "  return %0 : tensor<3x1xf64>\n}\n";
  arena ar;
  arena_init(&ar);
  const double DL[3] = {0, 1, 2}, D[3] = {4, 5, 6}, DU[3] = {1, 1, 0}, B[3] = {1, 2, 3};
  const double Z[3] = {0, 0, 0};
  int64_t d1[1] = {3}, d2[2] = {3, 1};
  tensor *in[4] = {tl_tensor(&ar, HLO_F64, 1, d1, DL), tl_tensor(&ar, HLO_F64, 1, d1, D),
                   tl_tensor(&ar, HLO_F64, 1, d1, DU), tl_tensor(&ar, HLO_F64, 2, d2, B)};
  tl_run r;
  hlo_status st = tl_run_text("gtsv.mlir", text, 0, NULL, in, 4, &r);
  if (st) hlo_status_print(st, stderr);
  CHECK(st == NULL);
  if (!st) {
    const double *X = (const double *)r.res[0]->data;
    for (int i = 0; i < 3; i++) {
      double s = D[i] * X[i] + (i > 0 ? DL[i] * X[i - 1] : 0) + (i < 2 ? DU[i] * X[i + 1] : 0);
      CHECK(fabs(s - B[i]) < 1e-12);
    }
  }
  tl_run_free(&r);
  hlo_status_free(st);
  tensor_release(in[1]);
  in[1] = tl_tensor(&ar, HLO_F64, 1, d1, Z);
  tensor_release(in[0]);
  in[0] = tl_tensor(&ar, HLO_F64, 1, d1, Z);
  st = tl_run_text("gtsv.mlir", text, 0, NULL, in, 4, &r);
  CHECK(st == NULL);
  if (!st) CHECK(isnan(((const double *)r.res[0]->data)[0]));
  tl_run_free(&r);
  hlo_status_free(st);
  for (int i = 0; i < 4; i++) tensor_release(in[i]);
  arena_deinit(&ar);
}

/* Refusals: gees with sorting (not supported), gesvdj with a u of the
 * wrong shape. */
TEST(gees_sort_and_bad_svd_shapes_refused) {
  const char *gees =
      "func.func @main(%a: tensor<2x2xf32>) -> tensor<2x2xf32> {\n"
      "  %0:6 = stablehlo.custom_call @lapack_sgees_ffi(%a) {mhlo.backend_config = {mode = 86 : "
      "ui8, sort = 83 : ui8}} : (tensor<2x2xf32>) -> (tensor<2x2xf32>, tensor<2x2xf32>, "
      "tensor<2xf32>, tensor<2xf32>, tensor<i32>, tensor<i32>)\n"
      "  return %0#0 : tensor<2x2xf32>\n}\n";
  arena ar;
  arena_init(&ar);
  const float A[4] = {1, 2, 3, 4};
  int64_t d[2] = {2, 2};
  tensor *x = tl_tensor(&ar, HLO_F32, 2, d, A);
  tl_run r;
  hlo_status st = tl_run_text("gees.mlir", gees, 0, NULL, &x, 1, &r);
  CHECK_EQ_INT(hlo_status_code_of(st), HLO_UNIMPLEMENTED);
  CHECK(st && strstr(hlo_status_message(st), "sort"));
  hlo_status_free(st);
  const char *svdj =
      "func.func @main(%a: tensor<2x2xf32>) -> tensor<2xf32> {\n"
      "  %0:5 = stablehlo.custom_call @cusolver_gesvdj_ffi(%a) {mhlo.backend_config = "
      "{compute_uv = true, full_matrices = true}, operand_layouts = [dense<[0, 1]> : "
      "tensor<2xindex>]} : (tensor<2x2xf32>) -> (tensor<2x2xf32>, tensor<2xf32>, "
      "tensor<2x3xf32>, tensor<2x2xf32>, tensor<i32>)\n"
      "  return %0#1 : tensor<2xf32>\n}\n";
  st = tl_run_text("svdj.mlir", svdj, 0, NULL, &x, 1, &r);
  CHECK_EQ_INT(hlo_status_code_of(st), HLO_INVALID_ARGUMENT);
  CHECK(st && strstr(hlo_status_message(st), "cusolver_gesvdj_ffi"));
  hlo_status_free(st);
  tensor_release(x);
  arena_deinit(&ar);
}

/* Writes `tmpl` (NULL: out itself) into out with every `key` replaced by
 * `val` (test programs written once for several types / targets). */
static void subst(char *out, size_t cap, const char *tmpl, const char *key, const char *val) {
  char buf[4096];
  snprintf(buf, sizeof buf, "%s", tmpl ? tmpl : out);
  size_t n = 0, kl = strlen(key), vl = strlen(val);
  for (const char *p = buf; *p && n + 1 < cap;) {
    if (!strncmp(p, key, kl) && n + vl + 1 < cap) {
      memcpy(out + n, val, vl);
      n += vl;
      p += kl;
    } else {
      out[n++] = *p++;
    }
  }
  out[n] = 0;
}

/* cusolver_syrk_ffi (jaxlib's SyrkImpl on row-major buffers): transpose =
 * false gives alpha a a^T + beta c in the lower triangle and leaves c's
 * strict upper triangle; transpose = true gives alpha a^T a + beta c;
 * complex is the symmetric (unconjugated) product. */
TEST(syrk_lower_triangle_transpose_complex) {
  const char *tmpl =
      "func.func @main(%a: tensor<@A>, %c: tensor<2x2xf64>) -> tensor<2x2xf64> {\n"
      "  %al = stablehlo.constant dense<2.0> : tensor<f64>\n"
      "  %be = stablehlo.constant dense<0.5> : tensor<f64>\n"
      "  %0 = stablehlo.custom_call @@S(%a, %c, %al, %be) {mhlo.backend_config = "
      "{transpose = @R}, operand_layouts = [dense<[1, 0]> : tensor<2xindex>, dense<[1, 0]> : "
      "tensor<2xindex>, dense<> : tensor<0xindex>, dense<> : tensor<0xindex>], result_layouts = "
      "[dense<[1, 0]> : tensor<2xindex>]} : (tensor<@A>, tensor<2x2xf64>, tensor<f64>, "
      "tensor<f64>) -> tensor<2x2xf64>\n"
      "  return %0 : tensor<2x2xf64>\n}\n";
  char text[2048];
  arena ar;
  arena_init(&ar);
  const double A[6] = {1, 2, 3, 4, 5, 6}, C[4] = {1, 2, 3, 4};
  int64_t d23[2] = {2, 3}, d32[2] = {3, 2}, d22[2] = {2, 2};
  for (int tr = 0; tr < 2; tr++) {
    /* a is 2x3 (a a^T) or 3x2 (a^T a): the same 2x2 product. */
    subst(text, sizeof text, tmpl, "@A", tr ? "3x2xf64" : "2x3xf64");
    subst(text, sizeof text, NULL, "@S", tr ? "hipsolver_syrk_ffi" : "cusolver_syrk_ffi");
    subst(text, sizeof text, NULL, "@R", tr ? "true" : "false");
    tensor *in[2] = {tl_tensor(&ar, HLO_F64, 2, tr ? d32 : d23, A),
                     tl_tensor(&ar, HLO_F64, 2, d22, C)};
    tl_run r;
    hlo_status st = tl_run_text("syrk.mlir", text, 0, NULL, in, 2, &r);
    if (st) hlo_status_print(st, stderr);
    CHECK(st == NULL);
    if (!st) {
      const double *X = (const double *)r.res[0]->data;
      for (int i = 0; i < 2; i++)
        for (int j = 0; j <= i; j++) {
          double p = 0;
          for (int k = 0; k < 3; k++)
            p += tr ? A[k * 2 + i] * A[k * 2 + j] : A[i * 3 + k] * A[j * 3 + k];
          CHECK(fabs(X[i * 2 + j] - (2 * p + 0.5 * C[i * 2 + j])) < 1e-12);
        }
      CHECK(X[1] == C[1]); /* the strict upper triangle is c's */
    }
    tl_run_free(&r);
    tensor_release(in[0]);
    tensor_release(in[1]);
  }
  /* complex<f32>: a = [[1+i, 2]] (1x2), c = 0: a a^T = (1+i)^2 + 4 = 4 + 2i. */
  const char *ctext =
      "func.func @main(%a: tensor<1x2xcomplex<f32>>, %c: tensor<1x1xcomplex<f32>>) -> "
      "tensor<1x1xcomplex<f32>> {\n"
      "  %al = stablehlo.constant dense<(1.0, 0.0)> : tensor<complex<f32>>\n"
      "  %be = stablehlo.constant dense<(0.0, 0.0)> : tensor<complex<f32>>\n"
      "  %0 = stablehlo.custom_call @cusolver_syrk_ffi(%a, %c, %al, %be) {mhlo.backend_config = "
      "{transpose = false}} : (tensor<1x2xcomplex<f32>>, tensor<1x1xcomplex<f32>>, "
      "tensor<complex<f32>>, tensor<complex<f32>>) -> tensor<1x1xcomplex<f32>>\n"
      "  return %0 : tensor<1x1xcomplex<f32>>\n}\n";
  const float complex AC[2] = {1 + 1 * I, 2}, CC[1] = {0};
  int64_t d12[2] = {1, 2}, d11[2] = {1, 1};
  tensor *in[2] = {tl_tensor(&ar, HLO_C64, 2, d12, AC), tl_tensor(&ar, HLO_C64, 2, d11, CC)};
  tl_run r;
  hlo_status st = tl_run_text("syrk_c.mlir", ctext, 0, NULL, in, 2, &r);
  if (st) hlo_status_print(st, stderr);
  CHECK(st == NULL);
  if (!st) {
    float complex x = ((const float complex *)r.res[0]->data)[0];
    CHECK(fabsf(crealf(x) - 4) < 1e-6f && fabsf(cimagf(x) - 2) < 1e-6f);
  }
  tl_run_free(&r);
  tensor_release(in[0]);
  tensor_release(in[1]);
  arena_deinit(&ar);
}

/* cu_cholesky_update_ffi: R upper with R^T R = A; the result R' is upper
 * triangular with a positive diagonal and R'^T R' = A + w w^T. Complex is
 * refused (jaxlib's kernel is f32 / f64 only). */
TEST(cholesky_update_rank_one) {
  const char *tmpl =
      "func.func @main(%r: tensor<3x3x@T>, %w: tensor<3x@T>) -> (tensor<3x3x@T>, tensor<3x@T>) "
      "{\n"
      "  %0:2 = stablehlo.custom_call @cu_cholesky_update_ffi(%r, %w) {operand_layouts = "
      "[dense<[1, 0]> : tensor<2xindex>, dense<0> : tensor<1xindex>], result_layouts = "
      "[dense<[1, 0]> : tensor<2xindex>, dense<0> : tensor<1xindex>]} : (tensor<3x3x@T>, "
      "tensor<3x@T>) -> (tensor<3x3x@T>, tensor<3x@T>)\n"
      "  return %0#0, %0#1 : tensor<3x3x@T>, tensor<3x@T>\n}\n";
  char text[1536];
  subst(text, sizeof text, tmpl, "@T", "f64");
  arena ar;
  arena_init(&ar);
  const double R[9] = {2, 1, -1, 0, 3, 0.5, 0, 0, 1.5}, W[3] = {1, -2, 0.5};
  int64_t d33[2] = {3, 3}, d3[1] = {3};
  tensor *in[2] = {tl_tensor(&ar, HLO_F64, 2, d33, R), tl_tensor(&ar, HLO_F64, 1, d3, W)};
  tl_run r;
  hlo_status st = tl_run_text("cholupd.mlir", text, 0, NULL, in, 2, &r);
  if (st) hlo_status_print(st, stderr);
  CHECK(st == NULL);
  if (!st) {
    const double *X = (const double *)r.res[0]->data;
    for (int i = 0; i < 3; i++) {
      CHECK(X[i * 3 + i] > 0);
      for (int j = 0; j < i; j++) CHECK(X[i * 3 + j] == 0);
      for (int j = 0; j < 3; j++) {
        double a = W[i] * W[j], b = 0;
        for (int k = 0; k < 3; k++) {
          a += R[k * 3 + i] * R[k * 3 + j];
          b += X[k * 3 + i] * X[k * 3 + j];
        }
        CHECK(fabs(a - b) < 1e-12);
      }
    }
  }
  tl_run_free(&r);
  tensor_release(in[0]);
  tensor_release(in[1]);
  subst(text, sizeof text, tmpl, "@T", "complex<f64>");
  const double complex RC[9] = {1, 0, 0, 0, 1, 0, 0, 0, 1}, WC[3] = {0};
  in[0] = tl_tensor(&ar, HLO_C128, 2, d33, RC);
  in[1] = tl_tensor(&ar, HLO_C128, 1, d3, WC);
  st = tl_run_text("cholupd_c.mlir", text, 0, NULL, in, 2, &r);
  CHECK_EQ_INT(hlo_status_code_of(st), HLO_INVALID_ARGUMENT);
  CHECK(st && strstr(hlo_status_message(st), "f32 or f64"));
  hlo_status_free(st);
  tensor_release(in[0]);
  tensor_release(in[1]);
  arena_deinit(&ar);
}

/* tridiagonal_solve_perturbed_ffi: a regular system is solved (checked by
 * substitution); an all-zero one, where gtsv gives NaN, gives finite values
 * (its zero pivots perturbed); b's batch must match the diagonals'. */
TEST(tridiagonal_solve_perturbed_regular_and_singular) {
  const char *text =
      "func.func @main(%dl: tensor<3xf32>, %d: tensor<3xf32>, %du: tensor<3xf32>, %b: "
      "tensor<3x2xf32>) -> tensor<3x2xf32> {\n"
      "  %0 = stablehlo.custom_call @tridiagonal_solve_perturbed_ffi(%dl, %d, %du, %b) "
      "{operand_layouts = [dense<0> : tensor<1xindex>, dense<0> : tensor<1xindex>, dense<0> : "
      "tensor<1xindex>, dense<[0, 1]> : tensor<2xindex>], result_layouts = [dense<[0, 1]> : "
      "tensor<2xindex>]} : (tensor<3xf32>, tensor<3xf32>, tensor<3xf32>, tensor<3x2xf32>) -> "
      "tensor<3x2xf32>\n"
      "  return %0 : tensor<3x2xf32>\n}\n";
  arena ar;
  arena_init(&ar);
  /* dl[1] = 5 > d[0]: elimination swaps rows 0 and 1. */
  const float DL[3] = {0, 5, 2}, D[3] = {1, 1, 6}, DU[3] = {2, 1, 0}, B[6] = {1, 2, 3, 4, 5, 6};
  const float Z[3] = {0, 0, 0};
  int64_t d1[1] = {3}, d2[2] = {3, 2};
  tensor *in[4] = {tl_tensor(&ar, HLO_F32, 1, d1, DL), tl_tensor(&ar, HLO_F32, 1, d1, D),
                   tl_tensor(&ar, HLO_F32, 1, d1, DU), tl_tensor(&ar, HLO_F32, 2, d2, B)};
  tl_run r;
  hlo_status st = tl_run_text("tds.mlir", text, 0, NULL, in, 4, &r);
  if (st) hlo_status_print(st, stderr);
  CHECK(st == NULL);
  if (!st) {
    const float *X = (const float *)r.res[0]->data; /* row-major 3x2 */
    for (int j = 0; j < 2; j++)
      for (int i = 0; i < 3; i++) {
        float s = D[i] * X[i * 2 + j] + (i > 0 ? DL[i] * X[(i - 1) * 2 + j] : 0) +
                  (i < 2 ? DU[i] * X[(i + 1) * 2 + j] : 0);
        CHECK(fabsf(s - B[i * 2 + j]) < 1e-5f);
      }
  }
  tl_run_free(&r);
  for (int i = 0; i < 3; i++) {
    tensor_release(in[i]);
    in[i] = tl_tensor(&ar, HLO_F32, 1, d1, Z);
  }
  st = tl_run_text("tds.mlir", text, 0, NULL, in, 4, &r);
  CHECK(st == NULL);
  if (!st)
    for (int i = 0; i < 6; i++) CHECK(isfinite(((const float *)r.res[0]->data)[i]));
  tl_run_free(&r);
  hlo_status_free(st);
  for (int i = 0; i < 4; i++) tensor_release(in[i]);
  const char *bad =
      "func.func @main(%dl: tensor<2xf32>, %d: tensor<2xf32>, %du: tensor<2xf32>, %b: "
      "tensor<3x1xf32>) -> tensor<3x1xf32> {\n"
      "  %0 = stablehlo.custom_call @cu_tridiagonal_solve_perturbed(%dl, %d, %du, %b) : "
      "(tensor<2xf32>, tensor<2xf32>, tensor<2xf32>, tensor<3x1xf32>) -> tensor<3x1xf32>\n"
      "  return %0 : tensor<3x1xf32>\n}\n";
  int64_t e1[1] = {2}, e2[2] = {3, 1};
  tensor *bin[4] = {tl_tensor(&ar, HLO_F32, 1, e1, Z), tl_tensor(&ar, HLO_F32, 1, e1, Z),
                    tl_tensor(&ar, HLO_F32, 1, e1, Z), tl_tensor(&ar, HLO_F32, 2, e2, Z)};
  st = tl_run_text("tds_bad.mlir", bad, 0, NULL, bin, 4, &r);
  CHECK_EQ_INT(hlo_status_code_of(st), HLO_INVALID_ARGUMENT);
  CHECK(st && strstr(hlo_status_message(st), "cu_tridiagonal_solve_perturbed"));
  hlo_status_free(st);
  for (int i = 0; i < 4; i++) tensor_release(bin[i]);
  arena_deinit(&ar);
}

TEST_MAIN()
