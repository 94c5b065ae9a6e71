/* test_gemm_strided.c — dot_generals that a strided GEMM reads in place
 * (passes/dot_decomposer.h: dot_strided_form_of; the CPU executable's
 * gemm_form): the form each dot gets (batch, sizes, transposes, leading
 * dimensions, batch strides), the dots that have none, and the CPU
 * backend's results against the interpreter's with the dots left as JAX
 * writes them (no pass: each a strided GEMM thunk) and through the CPU
 * pipeline (dot-decomposer leaves them alone). */
#include <string.h>
#include "passes/dot_decomposer.h"
#include "runtime/runtime.h"
#include "test.h"
#include "testlib.h"

/* The form of the first op of @main of `text` (a dot_general); returns
 * whether it has one. */
static bool form_of(const char *text, dot_strided_form *f) {
  hlo_module_ir *m = tl_parse_text("form.mlir", text, TL_VERIFY, NULL);
  CHECK(m != NULL);
  if (!m) return false;
  hlo_func *fn = module_entry(m, NULL);
  bool ok = fn && fn->body.block.first && dot_strided_form_of(fn->body.block.first, f);
  module_free(m);
  return ok;
}

#define DOT(LT, RT, OT, DIMS)                                                                   \
  "func.func @main(%a: tensor<" LT ">, %b: tensor<" RT ">) -> tensor<" OT "> {\n"              \
  "  %0 = stablehlo.dot_general %a, %b, " DIMS " : (tensor<" LT ">, tensor<" RT ">) -> tensor<" \
  OT ">\n"                                                                                     \
  "  return %0 : tensor<" OT ">\n"                                                             \
  "}\n"

TEST(forms) {
  dot_strided_form f;
  /* attention scores: q, k [1, S=16, H=4, D=8], batching dims (0, 2):
   * heads D apart, rows H*D apart, B read transposed */
  CHECK(form_of(DOT("1x16x4x8xf32", "1x16x4x8xf32", "1x4x16x16xf32",
                    "batching_dims = [0, 2] x [0, 2], contracting_dims = [3] x [3]"),
                &f));
  CHECK_EQ_INT(f.batch, 4);
  CHECK_EQ_INT(f.m, 16);
  CHECK_EQ_INT(f.n, 16);
  CHECK_EQ_INT(f.k, 8);
  CHECK(!f.trans_a && f.trans_b);
  CHECK_EQ_INT(f.lda, 32);
  CHECK_EQ_INT(f.ldb, 32);
  CHECK_EQ_INT(f.batch_stride_a, 8);
  CHECK_EQ_INT(f.batch_stride_b, 8);
  /* values times probabilities: v [1, 16, 4, 8] contracted over S (A
   * transposed, lda = H*D), p [1, 4, 16, 16] contracted over its last dim
   * (B transposed, dense) */
  CHECK(form_of(DOT("1x16x4x8xf32", "1x4x16x16xf32", "1x4x8x16xf32",
                    "batching_dims = [0, 2] x [0, 1], contracting_dims = [1] x [3]"),
                &f));
  CHECK_EQ_INT(f.batch, 4);
  CHECK_EQ_INT(f.m, 8);
  CHECK_EQ_INT(f.n, 16);
  CHECK_EQ_INT(f.k, 16);
  CHECK(f.trans_a && f.trans_b);
  CHECK_EQ_INT(f.lda, 32);
  CHECK_EQ_INT(f.ldb, 16);
  CHECK_EQ_INT(f.batch_stride_a, 8);
  CHECK_EQ_INT(f.batch_stride_b, 256);
  /* the canonical batched form: dense strides */
  CHECK(form_of(DOT("2x3x4xf32", "2x4x5xf32", "2x3x5xf32",
                    "batching_dims = [0] x [0], contracting_dims = [2] x [1]"),
                &f));
  CHECK(!f.trans_a && !f.trans_b);
  CHECK_EQ_INT(f.lda, 4);
  CHECK_EQ_INT(f.ldb, 5);
  CHECK_EQ_INT(f.batch_stride_a, 12);
  CHECK_EQ_INT(f.batch_stride_b, 20);
  /* two contracting dims in a chain: K = 48, A transposed */
  CHECK(form_of(DOT("8x6x5xf32", "8x6x7xf32", "5x7xf32", "contracting_dims = [0, 1] x [0, 1]"),
                &f));
  CHECK_EQ_INT(f.k, 48);
  CHECK(f.trans_a && !f.trans_b);
  CHECK_EQ_INT(f.lda, 5);
  CHECK_EQ_INT(f.ldb, 7);
  /* contracting dims listed against memory order: not a chain */
  CHECK(!form_of(DOT("8x6x5xf32", "8x6x7xf32", "5x7xf32", "contracting_dims = [1, 0] x [1, 0]"),
                 &f));
  /* two non-unit batch dims that are not nested */
  CHECK(!form_of(DOT("2x16x4x8xf32", "2x16x4x8xf32", "2x4x16x16xf32",
                     "batching_dims = [0, 2] x [0, 2], contracting_dims = [3] x [3]"),
                 &f));
  /* free dims around the contracting dim */
  CHECK(!form_of(DOT("4x3x5xf32", "3x2xf32", "4x5x2xf32", "contracting_dims = [1] x [0]"), &f));
  /* neither side of the matrix contiguous: [S, H, D] contracting H with S
   * free */
  CHECK(!form_of(DOT("16x4x8xf32", "4x8xf32", "16x8x8xf32", "contracting_dims = [1] x [0]"),
                 &f));
  /* integers, outer products, empty operands */
  CHECK(!form_of(DOT("1x16x4x8xi32", "1x16x4x8xi32", "1x4x16x16xi32",
                     "batching_dims = [0, 2] x [0, 2], contracting_dims = [3] x [3]"),
                 &f));
  CHECK(!form_of(DOT("3xf32", "4xf32", "3x4xf32", "contracting_dims = [] x []"), &f));
  CHECK(!form_of(DOT("0x4xf32", "4x2xf32", "0x2xf32", "contracting_dims = [1] x [0]"), &f));
}

/* q/k/v [1, S, H, D] attention products as JAX writes them, f32 and f64,
 * GQA-free; and a bf16 one. */
static const char *attention =
    "func.func @main(%q: tensor<1x40x3x16xf32>, %k: tensor<1x33x3x16xf32>, "
    "%v: tensor<1x33x3x16xf32>, %x: tensor<1x8x2x4xf64>, %w: tensor<8x2x5xf64>) -> "
    "(tensor<1x40x3x16xf32>, tensor<1x3x40x33xf32>, tensor<1x2x4x5xf64>) {\n"
    "  %s = stablehlo.dot_general %q, %k, batching_dims = [0, 2] x [0, 2], contracting_dims = [3] "
    "x [3] : (tensor<1x40x3x16xf32>, tensor<1x33x3x16xf32>) -> tensor<1x3x40x33xf32>\n"
    "  %o = stablehlo.dot_general %v, %s, batching_dims = [0, 2] x [0, 1], contracting_dims = [1] "
    "x [3] : (tensor<1x33x3x16xf32>, tensor<1x3x40x33xf32>) -> tensor<1x3x16x40xf32>\n"
    "  %t = stablehlo.transpose %o, dims = [0, 3, 1, 2] : (tensor<1x3x16x40xf32>) -> "
    "tensor<1x40x3x16xf32>\n"
    "  %y = stablehlo.dot_general %x, %w, batching_dims = [2] x [1], contracting_dims = [1] x [0] "
    ": (tensor<1x8x2x4xf64>, tensor<8x2x5xf64>) -> tensor<2x1x4x5xf64>\n"
    "  %r = stablehlo.reshape %y : (tensor<2x1x4x5xf64>) -> tensor<1x2x4x5xf64>\n"
    "  return %t, %s, %r : tensor<1x40x3x16xf32>, tensor<1x3x40x33xf32>, tensor<1x2x4x5xf64>\n"
    "}\n";

TEST(cpu_agrees_without_passes) {
  /* every dot a strided GEMM thunk, none on the interpreter */
  static const hlo_compile_options opts = {.backend = HLO_BACKEND_CPU, .passes = "none"};
  runtime_cpu_stats cs = {0};
  bool skipped = false;
  CHECK(tl_backends_agree("attention.mlir", attention, &opts, 0x7, 64, 5, &cs, &skipped));
  if (skipped) return;
  CHECK_EQ_INT(cs.blas, 3);
  CHECK_EQ_INT(cs.interp, 0);
}

TEST(cpu_agrees_through_the_pipeline) {
  static const hlo_compile_options opts = {.backend = HLO_BACKEND_CPU};
  runtime_cpu_stats cs = {0};
  bool skipped = false;
  CHECK(tl_backends_agree("attention.mlir", attention, &opts, 0x7, 64, 9, &cs, &skipped));
  if (skipped) return;
  CHECK_EQ_INT(cs.blas, 3);
  CHECK_EQ_INT(cs.interp, 0);
}

TEST(bf16_strided) {
  static const char *text =
      "func.func @main(%q: tensor<1x24x2x16xbf16>, %k: tensor<1x24x2x16xbf16>) -> "
      "(tensor<1x2x24x24xbf16>, tensor<1x2x24x24xf32>) {\n"
      "  %0 = stablehlo.dot_general %q, %k, batching_dims = [0, 2] x [0, 2], contracting_dims = "
      "[3] x [3] : (tensor<1x24x2x16xbf16>, tensor<1x24x2x16xbf16>) -> tensor<1x2x24x24xbf16>\n"
      "  %1 = stablehlo.dot_general %q, %k, batching_dims = [0, 2] x [0, 2], contracting_dims = "
      "[3] x [3] : (tensor<1x24x2x16xbf16>, tensor<1x24x2x16xbf16>) -> tensor<1x2x24x24xf32>\n"
      "  return %0, %1 : tensor<1x2x24x24xbf16>, tensor<1x2x24x24xf32>\n"
      "}\n";
  static const hlo_compile_options opts = {.backend = HLO_BACKEND_CPU, .passes = "none"};
  runtime_cpu_stats cs = {0};
  bool skipped = false;
  CHECK(tl_backends_agree("bf16.mlir", text, &opts, 0x3, 64, 3, &cs, &skipped));
  if (skipped) return;
  CHECK_EQ_INT(cs.blas, 2);
}

/* A dot with a plain `algorithm` (JAX's dot_product_attention prints
 * BF16_BF16_F32; F32_F32_F32 from precision presets) is a gemm; a
 * multi-pass one (BF16_BF16_F32_X3) stays on the interpreter. */
TEST(plain_dot_algorithms_are_gemms) {
  static const char *text =
      "func.func @main(%q: tensor<2x1x24x16xbf16>, %k: tensor<2x24x16xbf16>, "
      "%a: tensor<24x16xf32>, %b: tensor<16x8xf32>) -> "
      "(tensor<2x1x24x24xf32>, tensor<24x8xf32>, tensor<24x8xf32>) {\n"
      "  %0 = stablehlo.dot_general %q, %k, batching_dims = [0] x [0], contracting_dims = "
      "[3] x [2], algorithm = <lhs_precision_type = bf16, rhs_precision_type = bf16, "
      "accumulation_type = f32, lhs_component_count = 1, rhs_component_count = 1, "
      "num_primitive_operations = 1, allow_imprecise_accumulation = false> : "
      "(tensor<2x1x24x16xbf16>, tensor<2x24x16xbf16>) -> tensor<2x1x24x24xf32>\n"
      "  %1 = stablehlo.dot_general %a, %b, contracting_dims = [1] x [0], algorithm = "
      "<lhs_precision_type = f32, rhs_precision_type = f32, accumulation_type = f32, "
      "lhs_component_count = 1, rhs_component_count = 1, num_primitive_operations = 1, "
      "allow_imprecise_accumulation = false> : (tensor<24x16xf32>, tensor<16x8xf32>) -> "
      "tensor<24x8xf32>\n"
      "  %2 = stablehlo.dot_general %a, %b, contracting_dims = [1] x [0], algorithm = "
      "<lhs_precision_type = bf16, rhs_precision_type = bf16, accumulation_type = f32, "
      "lhs_component_count = 1, rhs_component_count = 1, num_primitive_operations = 3, "
      "allow_imprecise_accumulation = false> : (tensor<24x16xf32>, tensor<16x8xf32>) -> "
      "tensor<24x8xf32>\n"
      "  return %0, %1, %2 : tensor<2x1x24x24xf32>, tensor<24x8xf32>, tensor<24x8xf32>\n"
      "}\n";
  static const hlo_compile_options opts = {.backend = HLO_BACKEND_CPU, .passes = "none"};
  runtime_cpu_stats cs = {0};
  bool skipped = false;
  CHECK(tl_backends_agree("algorithms.mlir", text, &opts, 0x3, 64, 4, &cs, &skipped));
  if (skipped) return;
  CHECK_EQ_INT(cs.blas, 2);
  CHECK_EQ_INT(cs.interp, 1);
}

TEST_MAIN()
