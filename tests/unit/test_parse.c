/* test_parse.c — the parser: pretty and generic forms give identical IR
 * (attributes compared with attr_equal), types, dense literals, and errors
 * located at the right line:col. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "ir/element.h"
#include "parse/parse.h"
#include "support/arena.h"
#include "support/float.h"
#include "test.h"
#include "testlib.h"

static bool ops_equal(const hlo_op *a, const hlo_op *b);

static bool blocks_equal(const hlo_block *a, const hlo_block *b) {
  if (a->num_args != b->num_args) return false;
  for (uint32_t i = 0; i < a->num_args; i++)
    if (!type_equal(a->args[i].type, b->args[i].type)) return false;
  const hlo_op *x = a->first, *y = b->first;
  for (; x && y; x = x->next, y = y->next)
    if (!ops_equal(x, y)) return false;
  return !x && !y;
}

/* Operand identity: same defining position (block-arg index or result index
 * of an op at the same place) is approximated by comparing types and
 * kinds; enough for these small tests. */
static bool ops_equal(const hlo_op *a, const hlo_op *b) {
  if (a->opcode != b->opcode) {
    fprintf(stderr, "opcode %s vs %s\n", op_name(a->opcode), op_name(b->opcode));
    return false;
  }
  if (a->num_operands != b->num_operands || a->num_results != b->num_results ||
      a->num_regions != b->num_regions || a->num_attrs != b->num_attrs) {
    fprintf(stderr, "%s: counts differ (ops %u/%u res %u/%u regs %u/%u attrs %u/%u)\n",
            op_name(a->opcode), a->num_operands, b->num_operands, a->num_results, b->num_results,
            a->num_regions, b->num_regions, a->num_attrs, b->num_attrs);
    return false;
  }
  for (uint32_t i = 0; i < a->num_operands; i++) {
    const hlo_value *u = a->operands[i], *v = b->operands[i];
    if (!type_equal(u->type, v->type) || (u->def == NULL) != (v->def == NULL) || u->index != v->index)
      return false;
  }
  for (uint32_t i = 0; i < a->num_results; i++)
    if (!type_equal(a->results[i].type, b->results[i].type)) {
      fprintf(stderr, "%s: result type %u differs\n", op_name(a->opcode), i);
      return false;
    }
  for (uint32_t i = 0; i < a->num_attrs; i++) {
    const hlo_attr *o = op_attr(b, a->attrs[i].name);
    if (!attr_equal(a->attrs[i].value, o)) {
      fprintf(stderr, "%s: attribute %s differs\n", op_name(a->opcode), a->attrs[i].name);
      return false;
    }
  }
  for (uint32_t r = 0; r < a->num_regions; r++)
    if (!blocks_equal(&a->regions[r].block, &b->regions[r].block)) {
      fprintf(stderr, "%s: region %u differs\n", op_name(a->opcode), r);
      return false;
    }
  return true;
}

/* Wraps `body` in a function with the given signature and compares. */
static bool same_ir(const char *sig, const char *pretty, const char *generic) {
  char a[4096], b[4096];
  snprintf(a, sizeof a, "func.func @f(%s) {\n%s\n  func.return\n}\n", sig, pretty);
  snprintf(b, sizeof b, "func.func @f(%s) {\n%s\n  func.return\n}\n", sig, generic);
  hlo_module_ir *x = tl_parse_text("t.mlir", a, 0, NULL), *y = tl_parse_text("t.mlir", b, 0, NULL);
  bool ok = x && y && blocks_equal(&x->funcs->body.block, &y->funcs->body.block);
  module_free(x);
  module_free(y);
  return ok;
}

TEST(pretty_equals_generic_elementwise) {
  CHECK(same_ir("%a: tensor<2xf32>, %b: tensor<2xf32>", "%0 = stablehlo.add %a, %b : tensor<2xf32>",
                "%0 = \"stablehlo.add\"(%a, %b) : (tensor<2xf32>, tensor<2xf32>) -> tensor<2xf32>"));
  CHECK(same_ir("%p: tensor<2xi1>, %a: tensor<2xf32>",
                "%0 = stablehlo.select %p, %a, %a : tensor<2xi1>, tensor<2xf32>",
                "%0 = \"stablehlo.select\"(%p, %a, %a) : (tensor<2xi1>, tensor<2xf32>, tensor<2xf32>) -> tensor<2xf32>"));
  CHECK(same_ir("%a: tensor<2xf32>",
                "%0 = stablehlo.compare  LT, %a, %a,  FLOAT : (tensor<2xf32>, tensor<2xf32>) -> tensor<2xi1>",
                "%0 = \"stablehlo.compare\"(%a, %a) <{compare_type = #stablehlo<comparison_type FLOAT>, "
                "comparison_direction = #stablehlo<comparison_direction LT>}> : (tensor<2xf32>, tensor<2xf32>) -> tensor<2xi1>"));
  CHECK(same_ir("%a: tensor<f16>", "%0 = stablehlo.reduce_precision %a, format = e5m10 : tensor<f16>",
                "%0 = \"stablehlo.reduce_precision\"(%a) <{exponent_bits = 5 : i32, mantissa_bits = 10 : i32}> : (tensor<f16>) -> tensor<f16>"));
  CHECK(same_ir("%a: tensor<2xf32>, %b: tensor<2xf32>",
                "%0 = stablehlo.complex %a, %b : tensor<2xcomplex<f32>>",
                "%0 = \"stablehlo.complex\"(%a, %b) : (tensor<2xf32>, tensor<2xf32>) -> tensor<2xcomplex<f32>>"));
  CHECK(same_ir("%a: tensor<f32>, %b: tensor<f32>",
                "%0:2 = stablehlo.optimization_barrier %a, %b : tensor<f32>, tensor<f32>",
                "%0:2 = \"stablehlo.optimization_barrier\"(%a, %b) : (tensor<f32>, tensor<f32>) -> (tensor<f32>, tensor<f32>)"));
}

TEST(pretty_equals_generic_shape_ops) {
  CHECK(same_ir("%a: tensor<2xf32>",
                "%0 = stablehlo.broadcast_in_dim %a, dims = [1] : (tensor<2xf32>) -> tensor<3x2xf32>",
                "%0 = \"stablehlo.broadcast_in_dim\"(%a) <{broadcast_dimensions = array<i64: 1>}> : (tensor<2xf32>) -> tensor<3x2xf32>"));
  CHECK(same_ir("%a: tensor<2x3xf32>",
                "%0 = stablehlo.transpose %a, dims = [1, 0] : (tensor<2x3xf32>) -> tensor<3x2xf32>",
                "%0 = \"stablehlo.transpose\"(%a) <{permutation = array<i64: 1, 0>}> : (tensor<2x3xf32>) -> tensor<3x2xf32>"));
  CHECK(same_ir("", "%0 = stablehlo.iota dim = 0 : tensor<4xi32>",
                "%0 = \"stablehlo.iota\"() <{iota_dimension = 0 : i64}> : () -> tensor<4xi32>"));
  CHECK(same_ir("%a: tensor<8x8xf32>", "%0 = stablehlo.slice %a [0:2, 1:7:3] : (tensor<8x8xf32>) -> tensor<2x2xf32>",
                "%0 = \"stablehlo.slice\"(%a) <{start_indices = array<i64: 0, 1>, limit_indices = array<i64: 2, 7>, "
                "strides = array<i64: 1, 3>}> : (tensor<8x8xf32>) -> tensor<2x2xf32>"));
  CHECK(same_ir("%a: tensor<8xf32>, %i: tensor<i32>",
                "%0 = stablehlo.dynamic_slice %a, %i, sizes = [2] : (tensor<8xf32>, tensor<i32>) -> tensor<2xf32>",
                "%0 = \"stablehlo.dynamic_slice\"(%a, %i) <{slice_sizes = array<i64: 2>}> : (tensor<8xf32>, tensor<i32>) -> tensor<2xf32>"));
  CHECK(same_ir("%a: tensor<1xf32>",
                "%0 = stablehlo.concatenate %a, %a, dim = 0 : (tensor<1xf32>, tensor<1xf32>) -> tensor<2xf32>",
                "%0 = \"stablehlo.concatenate\"(%a, %a) <{dimension = 0 : i64}> : (tensor<1xf32>, tensor<1xf32>) -> tensor<2xf32>"));
  CHECK(same_ir("%a: tensor<2xf32>, %v: tensor<f32>",
                "%0 = stablehlo.pad %a, %v, low = [1], high = [2], interior = [0] : (tensor<2xf32>, tensor<f32>) -> tensor<5xf32>",
                "%0 = \"stablehlo.pad\"(%a, %v) <{edge_padding_low = array<i64: 1>, edge_padding_high = array<i64: 2>, "
                "interior_padding = array<i64: 0>}> : (tensor<2xf32>, tensor<f32>) -> tensor<5xf32>"));
  CHECK(same_ir("%a: tensor<4xf32>", "%0 = stablehlo.reverse %a, dims = [0] : tensor<4xf32>",
                "%0 = \"stablehlo.reverse\"(%a) <{dimensions = array<i64: 0>}> : (tensor<4xf32>) -> tensor<4xf32>"));
  CHECK(same_ir("%a: tensor<4xf64>",
                "%0 = stablehlo.fft %a, type = RFFT, length = [4] : (tensor<4xf64>) -> tensor<3xcomplex<f64>>",
                "%0 = \"stablehlo.fft\"(%a) <{fft_length = array<i64: 4>, fft_type = #stablehlo<fft_type RFFT>}> : (tensor<4xf64>) -> tensor<3xcomplex<f64>>"));
  CHECK(same_ir("%s: tensor<2xui64>",
                "%0, %1 = stablehlo.rng_bit_generator %s, algorithm =  THREE_FRY : (tensor<2xui64>) -> (tensor<2xui64>, tensor<4xui32>)",
                "%0:2 = \"stablehlo.rng_bit_generator\"(%s) <{rng_algorithm = #stablehlo<rng_algorithm THREE_FRY>}> : (tensor<2xui64>) -> (tensor<2xui64>, tensor<4xui32>)"));
  CHECK(same_ir("%a: tensor<?x2xf32>",
                "%0 = stablehlo.get_dimension_size %a, dim = 0 : (tensor<?x2xf32>) -> tensor<i32>",
                "%0 = \"stablehlo.get_dimension_size\"(%a) <{dimension = 0 : i64}> : (tensor<?x2xf32>) -> tensor<i32>"));
}

TEST(pretty_equals_generic_dot_conv) {
  CHECK(same_ir("%a: tensor<2x3x4xf32>, %b: tensor<2x4x5xf32>",
                "%0 = stablehlo.dot_general %a, %b, batching_dims = [0] x [0], contracting_dims = [2] x [1], "
                "precision = [DEFAULT, HIGHEST] : (tensor<2x3x4xf32>, tensor<2x4x5xf32>) -> tensor<2x3x5xf32>",
                "%0 = \"stablehlo.dot_general\"(%a, %b) <{dot_dimension_numbers = #stablehlo.dot<lhs_batching_dimensions = [0], "
                "rhs_batching_dimensions = [0], lhs_contracting_dimensions = [2], rhs_contracting_dimensions = [1]>, "
                "precision_config = [#stablehlo<precision DEFAULT>, #stablehlo<precision HIGHEST>]}> : "
                "(tensor<2x3x4xf32>, tensor<2x4x5xf32>) -> tensor<2x3x5xf32>"));
  CHECK(same_ir("%a: tensor<3x4xf32>, %b: tensor<4x5xf32>",
                "%0 = stablehlo.dot_general %a, %b, contracting_dims = [1] x [0] : (tensor<3x4xf32>, tensor<4x5xf32>) -> tensor<3x5xf32>",
                "%0 = \"stablehlo.dot_general\"(%a, %b) <{dot_dimension_numbers = #stablehlo.dot<lhs_batching_dimensions = [], "
                "lhs_contracting_dimensions = [1], rhs_contracting_dimensions = [0]>}> : (tensor<3x4xf32>, tensor<4x5xf32>) -> tensor<3x5xf32>"));
  const char *conv_pretty =
      "%0 = stablehlo.convolution(%a, %k) dim_numbers = [b, 0, 1, f]x[0, 1, i, o]->[b, 0, 1, f], "
      "window = {stride = [2, 1], pad = [[1, 1], [0, 2]], lhs_dilate = [1, 1], rhs_dilate = [1, 2], reverse = [false, true]} "
      "{batch_group_count = 1 : i64, feature_group_count = 1 : i64} : (tensor<1x8x8x2xf32>, tensor<3x3x2x4xf32>) -> tensor<1x4x6x4xf32>";
  const char *conv_generic =
      "%0 = \"stablehlo.convolution\"(%a, %k) <{batch_group_count = 1 : i64, dimension_numbers = "
      "#stablehlo.conv<raw input_batch_dimension = 0, input_feature_dimension = 3, input_spatial_dimensions = [1, 2], "
      "kernel_input_feature_dimension = 2, kernel_output_feature_dimension = 3, kernel_spatial_dimensions = [0, 1], "
      "output_batch_dimension = 0, output_feature_dimension = 3, output_spatial_dimensions = [1, 2]>, "
      "feature_group_count = 1 : i64, lhs_dilation = array<i64: 1, 1>, padding = dense<[[1, 1], [0, 2]]> : tensor<2x2xi64>, "
      "rhs_dilation = array<i64: 1, 2>, window_reversal = array<i1: false, true>, window_strides = array<i64: 2, 1>}> : "
      "(tensor<1x8x8x2xf32>, tensor<3x3x2x4xf32>) -> tensor<1x4x6x4xf32>";
  CHECK(same_ir("%a: tensor<1x8x8x2xf32>, %k: tensor<3x3x2x4xf32>", conv_pretty, conv_generic));
  /* the short struct form equals the raw one */
  const char *g2 =
      "%0 = \"stablehlo.convolution\"(%a, %k) <{batch_group_count = 1 : i64, dimension_numbers = "
      "#stablehlo.conv<[b, 0, 1, f]x[0, 1, i, o]->[b, 0, 1, f]>, "
      "feature_group_count = 1 : i64, lhs_dilation = array<i64: 1, 1>, padding = dense<[[1, 1], [0, 2]]> : tensor<2x2xi64>, "
      "rhs_dilation = array<i64: 1, 2>, window_reversal = array<i1: false, true>, window_strides = array<i64: 2, 1>}> : "
      "(tensor<1x8x8x2xf32>, tensor<3x3x2x4xf32>) -> tensor<1x4x6x4xf32>";
  CHECK(same_ir("%a: tensor<1x8x8x2xf32>, %k: tensor<3x3x2x4xf32>", g2, conv_generic));
}

TEST(pretty_equals_generic_regions) {
  CHECK(same_ir("%x: tensor<4x3xf32>, %z: tensor<f32>",
                "%0 = stablehlo.reduce(%x init: %z) applies stablehlo.add across dimensions = [1] : "
                "(tensor<4x3xf32>, tensor<f32>) -> tensor<4xf32>",
                "%0 = \"stablehlo.reduce\"(%x, %z) <{dimensions = array<i64: 1>}> ({\n"
                "  ^bb0(%p: tensor<f32>, %q: tensor<f32>):\n"
                "    %s = \"stablehlo.add\"(%p, %q) : (tensor<f32>, tensor<f32>) -> tensor<f32>\n"
                "    \"stablehlo.return\"(%s) : (tensor<f32>) -> ()\n"
                "  }) : (tensor<4x3xf32>, tensor<f32>) -> tensor<4xf32>"));
  CHECK(same_ir("%x: tensor<4xf32>, %y: tensor<4xi32>, %z: tensor<f32>, %w: tensor<i32>",
                "%0:2 = stablehlo.reduce(%x init: %z), (%y init: %w) across dimensions = [0] : "
                "(tensor<4xf32>, tensor<4xi32>, tensor<f32>, tensor<i32>) -> (tensor<f32>, tensor<i32>)\n"
                "  reducer(%a1: tensor<f32>, %b1: tensor<f32>) (%a2: tensor<i32>, %b2: tensor<i32>) {\n"
                "    %m = stablehlo.maximum %a1, %b1 : tensor<f32>\n"
                "    %n = stablehlo.add %a2, %b2 : tensor<i32>\n"
                "    stablehlo.return %m, %n : tensor<f32>, tensor<i32>\n"
                "  }",
                "%0:2 = \"stablehlo.reduce\"(%x, %y, %z, %w) <{dimensions = array<i64: 0>}> ({\n"
                "  ^bb0(%a1: tensor<f32>, %a2: tensor<i32>, %b1: tensor<f32>, %b2: tensor<i32>):\n"
                "    %m = \"stablehlo.maximum\"(%a1, %b1) : (tensor<f32>, tensor<f32>) -> tensor<f32>\n"
                "    %n = \"stablehlo.add\"(%a2, %b2) : (tensor<i32>, tensor<i32>) -> tensor<i32>\n"
                "    \"stablehlo.return\"(%m, %n) : (tensor<f32>, tensor<i32>) -> ()\n"
                "  }) : (tensor<4xf32>, tensor<4xi32>, tensor<f32>, tensor<i32>) -> (tensor<f32>, tensor<i32>)"));
  CHECK(same_ir("%i: tensor<i64>, %one: tensor<i64>",
                "%r = stablehlo.while(%it = %i) : tensor<i64>\n"
                "  cond {\n"
                "    %c = stablehlo.compare LT, %it, %one : (tensor<i64>, tensor<i64>) -> tensor<i1>\n"
                "    stablehlo.return %c : tensor<i1>\n"
                "  } do {\n"
                "    %n = stablehlo.add %it, %one : tensor<i64>\n"
                "    stablehlo.return %n : tensor<i64>\n"
                "  }",
                "%r = \"stablehlo.while\"(%i) ({\n"
                "  ^bb0(%it: tensor<i64>):\n"
                "    %c = \"stablehlo.compare\"(%it, %one) <{comparison_direction = #stablehlo<comparison_direction LT>}> : (tensor<i64>, tensor<i64>) -> tensor<i1>\n"
                "    \"stablehlo.return\"(%c) : (tensor<i1>) -> ()\n"
                "  }, {\n"
                "  ^bb0(%it: tensor<i64>):\n"
                "    %n = \"stablehlo.add\"(%it, %one) : (tensor<i64>, tensor<i64>) -> tensor<i64>\n"
                "    \"stablehlo.return\"(%n) : (tensor<i64>) -> ()\n"
                "  }) : (tensor<i64>) -> tensor<i64>"));
}

TEST(pretty_equals_generic_misc) {
  CHECK(same_ir("%a: tensor<2xf32>",
                "%0 = stablehlo.custom_call @foo(%a) {backend_config = \"cfg\", has_side_effect = true} : (tensor<2xf32>) -> tensor<2xf32>",
                "%0 = \"stablehlo.custom_call\"(%a) <{backend_config = \"cfg\", call_target_name = \"foo\", has_side_effect = true}> : (tensor<2xf32>) -> tensor<2xf32>"));
  CHECK(same_ir("%a: tensor<f32>",
                "%t = stablehlo.tuple %a, %a : tuple<tensor<f32>, tensor<f32>>\n"
                "%0 = stablehlo.get_tuple_element %t[1] : (tuple<tensor<f32>, tensor<f32>>) -> tensor<f32>",
                "%t = \"stablehlo.tuple\"(%a, %a) : (tensor<f32>, tensor<f32>) -> tuple<tensor<f32>, tensor<f32>>\n"
                "%0 = \"stablehlo.get_tuple_element\"(%t) <{index = 1 : i32}> : (tuple<tensor<f32>, tensor<f32>>) -> tensor<f32>"));
  CHECK(same_ir("%a: tensor<i64>",
                "%0 = stablehlo.composite \"my.op\" %a {composite_attributes = {n = 2 : i64}, decomposition = @impl} : (tensor<i64>) -> tensor<i64>",
                "%0 = \"stablehlo.composite\"(%a) <{composite_attributes = {n = 2 : i64}, decomposition = @impl, name = \"my.op\"}> : (tensor<i64>) -> tensor<i64>"));
  CHECK(same_ir("%a: tensor<i64>", "%0 = call @g(%a) : (tensor<i64>) -> tensor<i64>",
                "%0 = \"func.call\"(%a) <{callee = @g}> : (tensor<i64>) -> tensor<i64>"));
  CHECK(same_ir("%a: tensor<8xf32>",
                "%0, %1 = chlo.top_k(%a, k = 2) : tensor<8xf32> -> (tensor<2xf32>, tensor<2xi32>)",
                "%0:2 = \"chlo.top_k\"(%a) <{k = 2 : i64}> : (tensor<8xf32>) -> (tensor<2xf32>, tensor<2xi32>)"));
  CHECK(same_ir("%a: tensor<f32>", "%0 = chlo.erf_inv %a : tensor<f32> -> tensor<f32>",
                "%0 = \"chlo.erf_inv\"(%a) : (tensor<f32>) -> tensor<f32>"));
  CHECK(same_ir("%a: tensor<2xf32>", "%0 = stablehlo.constant dense<[1.5, -2.0]> : tensor<2xf32>",
                "%0 = \"stablehlo.constant\"() <{value = dense<[1.500000e+00, -2.000000e+00]> : tensor<2xf32>}> : () -> tensor<2xf32>"));
  CHECK(same_ir("%a: tensor<2xi32>", "check.expect_eq_const %a, dense<[1, 2]> : tensor<2xi32>",
                "\"check.expect_eq_const\"(%a) <{value = dense<[1, 2]> : tensor<2xi32>}> : (tensor<2xi32>) -> ()"));
  CHECK(same_ir("%a: tensor<2xf32>", "check.expect_almost_eq %a, %a, tolerance = 0.1 : tensor<2xf32>",
                "\"check.expect_almost_eq\"(%a, %a) <{tolerance = 1.000000e-01 : f64}> : (tensor<2xf32>, tensor<2xf32>) -> ()"));
  CHECK(same_ir("%a: tensor<2xf32>", "check.expect_close %a, %a, max_ulp_difference = 3 : tensor<2xf32>, tensor<2xf32>",
                "\"check.expect_close\"(%a, %a) <{max_ulp_difference = 3 : i64}> : (tensor<2xf32>, tensor<2xf32>) -> ()"));
  CHECK(same_ir("%p: tensor<i1>, %a: tensor<f32>",
                "%0 = stablehlo.if(%p) ({\n  stablehlo.return %a : tensor<f32>\n}, {\n  stablehlo.return %a : tensor<f32>\n}) : (tensor<i1>) -> tensor<f32>",
                "%0 = \"stablehlo.if\"(%p) ({\n  \"stablehlo.return\"(%a) : (tensor<f32>) -> ()\n}, {\n"
                "  \"stablehlo.return\"(%a) : (tensor<f32>) -> ()\n}) : (tensor<i1>) -> tensor<f32>"));
  CHECK(same_ir("", "%0 = stablehlo.after_all : !stablehlo.token",
                "%0 = \"stablehlo.after_all\"() : () -> !stablehlo.token"));
}

TEST(dense_literals) {
  hlo_module_ir *m = tl_parse_text("t.mlir",
      "func.func @f() {\n"
      "  %0 = stablehlo.constant dense<1.0> : tensor<3xbf16>\n"
      "  %1 = stablehlo.constant dense<\"0x0100000002000000\"> : tensor<2xi32>\n"
      "  %2 = stablehlo.constant dense<[true, false]> : tensor<2xi1>\n"
      "  %3 = stablehlo.constant dense<[(1.0, 2.0), (0x7FC00000, -0.0)]> : tensor<2xcomplex<f32>>\n"
      "  %4 = stablehlo.constant dense<[0x7FC0, 1.5]> : tensor<2xbf16>\n"
      "  %5 = stablehlo.constant dense<[-1, 255]> : tensor<2xi8>\n"
      "  %6 = stablehlo.constant dense<> : tensor<0xf32>\n"
      "  %7 = stablehlo.constant dense<\"0x05000000\"> : tensor<3xi32>\n"
      "  %8 = stablehlo.constant dense<[[1, 2, 3], [4, 5, 6]]> : tensor<2x3xui64>\n"
      "  %9 = stablehlo.constant dense<0.1> : tensor<f32>\n"
      "  %10 = stablehlo.constant dense<-8> : tensor<i4>\n"
      "  func.return\n}\n", 0,
      NULL);
  CHECK(m != NULL);
  if (!m) return;
  hlo_op *op = m->funcs->body.block.first;
  const hlo_attr *a = op_attr(op, "value");
  CHECK(a && a->u.dense.splat && a->u.dense.nbytes == 2 && a->u.dense.num_elems == 3);
  CHECK(elem_get_bits(HLO_BF16, a->u.dense.data, 0) == 0x3F80);
  op = op->next;
  a = op_attr(op, "value");
  CHECK(a && !a->u.dense.splat && elem_get_i64(HLO_I32, a->u.dense.data, 1) == 2);
  op = op->next;
  a = op_attr(op, "value");
  CHECK(a && a->u.dense.data[0] == 1 && a->u.dense.data[1] == 0);
  op = op->next;
  a = op_attr(op, "value");
  CHECK(a && a->u.dense.nbytes == 16);
  double re, im;
  elem_get_c128(HLO_C64, a->u.dense.data, 0, &re, &im);
  CHECK(re == 1.0 && im == 2.0);
  CHECK(elem_get_bits(HLO_F32, a->u.dense.data, 2) == 0x7FC00000);
  CHECK(elem_get_bits(HLO_F32, a->u.dense.data, 3) == 0x80000000);
  op = op->next;
  a = op_attr(op, "value");
  CHECK(elem_get_bits(HLO_BF16, a->u.dense.data, 0) == 0x7FC0);
  CHECK(elem_get_bits(HLO_BF16, a->u.dense.data, 1) == 0x3FC0);
  op = op->next;
  a = op_attr(op, "value");
  CHECK(elem_get_i64(HLO_I8, a->u.dense.data, 0) == -1 && elem_get_i64(HLO_I8, a->u.dense.data, 1) == -1);
  op = op->next;
  a = op_attr(op, "value");
  CHECK(a && a->u.dense.num_elems == 0 && a->u.dense.nbytes == 0);
  op = op->next;
  a = op_attr(op, "value");
  CHECK(a && a->u.dense.splat && elem_get_i64(HLO_I32, a->u.dense.data, 0) == 5);
  op = op->next;
  a = op_attr(op, "value");
  CHECK(a && elem_get_u64(HLO_UI64, a->u.dense.data, 5) == 6);
  op = op->next;
  a = op_attr(op, "value");
  CHECK(a && elem_get_bits(HLO_F32, a->u.dense.data, 0) == 0x3DCCCCCD);
  op = op->next;
  a = op_attr(op, "value");
  CHECK(a && elem_get_i64(HLO_I4, a->u.dense.data, 0) == -8);
  module_free(m);
}

TEST(types) {
  hlo_module_ir *m = tl_parse_text("t.mlir",
      "func.func @f(%a: tensor<2x?x3xf32>, %b: tensor<?xf32, #stablehlo.bounds<5>>,\n"
      "             %c: tensor<4x!quant.uniform<i8:f32, 0.1:-3>>,\n"
      "             %d: tensor<2x!quant.uniform<i8<-127:127>:f32:0, {0.1:-3, 0.2}>>,\n"
      "             %e: tuple<tensor<f32>, !stablehlo.token>, %g: tensor<complex<f64>>,\n"
      "             %h: tensor<f8E4M3FN>, %i: tensor<ui2>) {\n"
      "  func.return\n}\n", 0,
      NULL);
  CHECK(m != NULL);
  if (!m) return;
  hlo_block *b = &m->funcs->body.block;
  CHECK_EQ_INT(b->num_args, 8);
  CHECK(b->args[0].type->rank == 3 && b->args[0].type->dims[1] == HLO_DYN);
  CHECK_STR(b->args[1].type->encoding, "#stablehlo.bounds<5>");
  const quant_params *q = b->args[2].type->quant;
  CHECK(q && q->storage == HLO_I8 && q->expressed == HLO_F32 && q->axis == -1 && q->num_scales == 1 &&
        q->scales[0] == 0.1 && q->zero_points[0] == -3 && q->storage_min == -128);
  CHECK(b->args[2].type->dtype == HLO_I8);
  q = b->args[3].type->quant;
  CHECK(q && q->has_range && q->storage_min == -127 && q->axis == 0 && q->num_scales == 2 &&
        q->zero_points[1] == 0 && q->scales[1] == 0.2);
  CHECK(b->args[4].type->kind == TYPE_TUPLE && b->args[4].type->elems[1]->kind == TYPE_TOKEN);
  CHECK(b->args[5].type->dtype == HLO_C128 && b->args[6].type->dtype == HLO_F8E4M3FN);
  CHECK(b->args[7].type->dtype == HLO_UI2);
  module_free(m);
}

TEST(module_structure) {
  hlo_module_ir *m = tl_parse_text("t.mlir",
      "#loc1 = loc(\"x.py\":1:2)\n"
      "module @jit_f attributes {mhlo.num_partitions = 1 : i32} {\n"
      "  func.func public @main(%arg0: tensor<f32> {tf.aliasing_output = 0 : i32}) -> (tensor<f32> {jax.result_info = \"r\"}) {\n"
      "    %0 = stablehlo.custom_call @check.eq(%arg0, %arg0) : (tensor<f32>, tensor<f32>) -> tensor<i1> loc(#loc1)\n"
      "    %1:2 = call @helper(%arg0) : (tensor<f32>) -> (tensor<f32>, tensor<f32>)\n"
      "    %2 = stablehlo.add %1#0, %1#1 : tensor<f32>\n"
      "    return %2 : tensor<f32>\n"
      "  }\n"
      "  func.func private @helper(%x: tensor<f32>) -> (tensor<f32>, tensor<f32>) {\n"
      "    return %x, %x : tensor<f32>, tensor<f32>\n"
      "  }\n"
      "}\n", 0,
      NULL);
  CHECK(m != NULL);
  if (!m) return;
  CHECK_STR(m->name, "jit_f");
  CHECK_EQ_INT(m->num_aliases, 1);
  CHECK_STR(m->aliases[0], "#loc1 = loc(\"x.py\":1:2)");
  CHECK_EQ_INT(m->num_funcs, 2);
  hlo_func *f = m->funcs;
  CHECK_STR(f->visibility, "public");
  CHECK(f->arg_attrs[0].n == 1 && f->result_attrs[0].n == 1);
  hlo_op *op = f->body.block.first;
  CHECK_STR(op->loc_text, "loc(#loc1)");
  CHECK(op->loc.line == 4 && op->loc.col == 10);
  op = op->next->next;
  CHECK(op->operands[1]->index == 1 && op->operands[1]->def == op->prev);
  CHECK(op->next->opcode == OP_FUNC_RETURN);
  module_free(m);
}

TEST(locations_everywhere) {
  hlo_status st0;
  hlo_module_ir *m = tl_parse_text("t.mlir",
      "#loc = loc(unknown)\n"
      "#loc2 = loc(\"f.py\":3:4)\n"
      "module @m {\n"
      "  func.func public @main(%arg0: tensor<4xf32> loc(\"x\"), %z: tensor<f32> loc(#loc2)) -> (tensor<f32>) {\n"
      "    %0 = stablehlo.reduce(%arg0 init: %z) across dimensions = [0] : (tensor<4xf32>, tensor<f32>) -> tensor<f32>\n"
      "     reducer(%a: tensor<f32> loc(#loc2), %b: tensor<f32> loc(#loc2))  {\n"
      "      %1 = stablehlo.add %a, %b : tensor<f32> loc(#loc2)\n"
      "      stablehlo.return %1 : tensor<f32> loc(#loc)\n"
      "    } loc(#loc2)\n"
      "    %2 = \"stablehlo.case\"(%c) ({\n"
      "      stablehlo.return %0 : tensor<f32>\n"
      "    }) : (tensor<i32>) -> tensor<f32> loc(callsite(#loc at #loc2))\n"
      "    return %2 : tensor<f32> loc(#loc)\n"
      "  } loc(#loc)\n"
      "} loc(#loc)\n", 0,
      &st0);
  CHECK(m == NULL && st0); /* %c is undefined */
  hlo_status_free(st0);
  m = tl_parse_text("t.mlir",
      "#loc = loc(unknown)\n"
      "#loc2 = loc(\"f.py\":3:4)\n"
      "module @m {\n"
      "  func.func public @main(%arg0: tensor<4xf32> loc(\"x\"), %z: tensor<f32> loc(#loc2)) -> (tensor<f32>) {\n"
      "    %0 = stablehlo.reduce(%arg0 init: %z) across dimensions = [0] : (tensor<4xf32>, tensor<f32>) -> tensor<f32>\n"
      "     reducer(%a: tensor<f32> loc(#loc2), %b: tensor<f32> loc(#loc2))  {\n"
      "      %1 = stablehlo.add %a, %b : tensor<f32> loc(#loc2)\n"
      "      stablehlo.return %1 : tensor<f32> loc(#loc)\n"
      "    } loc(#loc2)\n"
      "    %c = stablehlo.constant dense<0> : tensor<i32>\n"
      "    %2 = \"stablehlo.case\"(%c) ({\n"
      "      stablehlo.return %0 : tensor<f32>\n"
      "    }) : (tensor<i32>) -> tensor<f32> loc(callsite(#loc at #loc2))\n"
      "    return %2 : tensor<f32> loc(#loc)\n"
      "  } loc(#loc)\n"
      "} loc(#loc)\n", 0,
      NULL);
  CHECK(m != NULL);
  if (!m) return;
  CHECK_EQ_INT(m->num_aliases, 2);
  hlo_op *op = m->funcs->body.block.first;
  CHECK_STR(op->loc_text, "loc(#loc2)");
  CHECK(op->regions[0].block.num_args == 2);
  CHECK_STR(op->regions[0].block.first->loc_text, "loc(#loc2)");
  op = op->next->next;
  CHECK_STR(op->loc_text, "loc(callsite(#loc at #loc2))");
  CHECK(op->regions[0].block.first->operands[0] == &m->funcs->body.block.first->results[0]);
  module_free(m);
}

TEST(generic_module_and_func) {
  hlo_module_ir *g = tl_parse_text("t.mlir",
      "\"builtin.module\"() <{sym_name = \"m\"}> ({\n"
      "^bb0:\n"
      "  \"func.func\"() <{arg_attrs = [{a = 1 : i32}, {}], function_type = (tensor<2xf32>, tensor<2xf32>) -> tensor<2xf32>, "
      "sym_name = \"main\", sym_visibility = \"private\"}> ({\n"
      "  ^bb0(%arg0: tensor<2xf32>, %arg1: tensor<2xf32>):\n"
      "    %0 = \"stablehlo.add\"(%arg0, %arg1) : (tensor<2xf32>, tensor<2xf32>) -> tensor<2xf32>\n"
      "    \"func.return\"(%0) : (tensor<2xf32>) -> ()\n"
      "  }) : () -> ()\n"
      "}) {mhlo.num_replicas = 1 : i32} : () -> ()\n", 0,
      NULL);
  hlo_module_ir *p = tl_parse_text("t.mlir",
      "module @m attributes {mhlo.num_replicas = 1 : i32} {\n"
      "  func.func private @main(%arg0: tensor<2xf32> {a = 1 : i32}, %arg1: tensor<2xf32>) -> tensor<2xf32> {\n"
      "    %0 = stablehlo.add %arg0, %arg1 : tensor<2xf32>\n"
      "    return %0 : tensor<2xf32>\n"
      "  }\n}\n", 0,
      NULL);
  CHECK(g && p);
  if (g && p) {
    CHECK_STR(g->name, "m");
    CHECK(g->attrs.n == 1 && attr_equal(g->attrs.items[0].value, p->attrs.items[0].value));
    hlo_func *a = g->funcs, *b = p->funcs;
    CHECK(a && b && !strcmp(a->name, b->name) && !strcmp(a->visibility, b->visibility));
    CHECK(a->num_args == 2 && a->num_results == 1 && type_equal(a->result_types[0], b->result_types[0]));
    CHECK(a->arg_attrs[0].n == 1 && attr_equal(a->arg_attrs[0].items[0].value, b->arg_attrs[0].items[0].value));
    CHECK(blocks_equal(&a->body.block, &b->body.block));
    CHECK(a->body.block.first->parent == &a->body.block);
    CHECK(a->body.block.first->operands[0] == &a->body.block.args[0]);
  }
  module_free(g);
  module_free(p);
}

/* Parses `text` expecting a parse error at the `occ`-th line containing
 * `needle`, at the column where needle starts; and `msg` in the message. */
static void expect_err(const char *text, const char *needle, const char *msg, int line_fix) {
  hlo_status st;
  hlo_module_ir *m = tl_parse_text("t.mlir", text, 0, &st);
  CHECK(m == NULL);
  CHECK(hlo_status_code_of(st) == HLO_PARSE_ERROR);
  const hlo_loc *l = status_loc(st);
  CHECK(l != NULL);
  const char *p = strstr(text, needle);
  CHECK(p != NULL);
  if (l && p) {
    uint32_t line = 1;
    const char *ls = text;
    for (const char *q = text; q < p; q++)
      if (*q == '\n') { line++; ls = q + 1; }
    uint32_t col = (uint32_t)(p - ls) + 1;
    if (l->line != line + (uint32_t)line_fix || l->col != col) {
      fprintf(stderr, "want %u:%u got %u:%u: %s\n", line, col, l->line, l->col, hlo_status_message(st));
      CHECK(0);
    }
  }
  if (msg && !strstr(hlo_status_message(st), msg)) {
    fprintf(stderr, "message '%s' lacks '%s'\n", hlo_status_message(st), msg);
    CHECK(0);
  }
  hlo_status_free(st);
}

TEST(errors_located) {
  expect_err("func.func @f(%a: tensor<2xf32>) {\n  %0 = stablehlo.add %a, %b : tensor<2xf32>\n  func.return\n}\n",
             "%b", "undefined value '%b'", 0);
  expect_err("func.func @f(%a: tensor<2xf32>) {\n  %a = stablehlo.add %a, %a : tensor<2xf32>\n  func.return\n}\n",
             "%a =", "redefinition", 0);
  expect_err("func.func @f(%a: tensor<2xf32>) {\n  %0 = stablehlo.frobnicate %a : tensor<2xf32>\n}\n",
             "stablehlo.frobnicate", "unknown operation", 0);
  expect_err("func.func @f(%a: tensor<2y3xf32>) {\n}\n", "y3x", "expected 'x' in dimension list, got 'y3xf32'", 0);
  expect_err("func.func @f(%a: tensor<2xf32>) {\n  %0 = stablehlo.add %a, %a : tensor<3xf32>\n}\n",
             "tensor<3xf32>", "does not match", 0);
  expect_err("func.func @f() {\n  %0 = stablehlo.constant dense<300> : tensor<i8>\n}\n", "300", "out of range", 0);
  expect_err("func.func @f() {\n  %0 = stablehlo.constant dense<[1, 2, 3]> : tensor<2xi32>\n}\n", "3]", "more than 2", 0);
  expect_err("func.func @f() {\n  %0 = stablehlo.constant dense<1> : tensor<1099511627777x2xf32>\n}\n",
             "tensor<1099511627777", "too large", 0);
  expect_err("func.func @f(%a: tensor<2xf32>) {\n  %0 = \"stablehlo.nope\"(%a) : (tensor<2xf32>) -> tensor<2xf32>\n}\n",
             "\"stablehlo.nope\"", "unknown operation", 0);
  expect_err("func.func @f(%a: tensor<2xf32>) {\n  %0:2 = stablehlo.optimization_barrier %a, %a : tensor<2xf32>, tensor<2xf32>\n"
             "  %1 = stablehlo.add %0#2, %a : tensor<2xf32>\n}\n",
             "%0#2", "out of range", 0);
  expect_err("func.func @f(%a: tensor<2xf32>) {\n  %0:2 = stablehlo.add %a, %a : tensor<2xf32>\n}\n",
             "stablehlo.add", "1 result(s) but 2", 0);
  expect_err("func.func @f(%a: tensor<2xf32>) {\n  %0 = stablehlo.add %a, %a : tensor<2xi32>\n}\n",
             "tensor<2xi32>", "declared tensor<2xi32>, defined as tensor<2xf32>", 0);
  expect_err("func.func @f() {\n  %0 = stablehlo.constant dense<[[1, 2], [3]]> : tensor<2x2xi32>\n}\n",
             "[3]", "1 elements in dimension 1", 0);
  expect_err("func.func @f() {\n  %0 = stablehlo.constant dense<\"0x0102\"> : tensor<3xi32>\n}\n",
             "\"0x0102\"", "2 bytes", 0);
  expect_err("func.func @f(%a: tensor<2xf32>) {\n  %0 = stablehlo.broadcast_in_dim %a, dims = [0 : (tensor<2xf32>) -> tensor<2xf32>\n}\n",
             ": (tensor", "expected ']'", 0);
  /* truncated: the error points just past the end */
  hlo_status st;
  hlo_module_ir *m = tl_parse_text("t.mlir", "func.func @f(%a: tensor<2xf32>) {\n  %0 = stablehlo.add %a, %a : tensor<2xf32>\n", 0, &st);
  CHECK(m == NULL && status_loc(st) && status_loc(st)->line == 3 && status_loc(st)->col == 1);
  CHECK(strstr(hlo_status_message(st), "end of input") != NULL);
  hlo_status_free(st);
}

TEST(deep_nesting_is_an_error) {
  char buf[8192];
  size_t n = 0;
  n += (size_t)snprintf(buf + n, sizeof buf - n, "func.func @f() attributes {a = ");
  for (int i = 0; i < 1000; i++) buf[n++] = '[';
  buf[n] = 0;
  hlo_status st;
  hlo_module_ir *m = tl_parse_text("t.mlir", buf, 0, &st);
  CHECK(m == NULL && hlo_status_code_of(st) == HLO_PARSE_ERROR && status_loc(st));
  hlo_status_free(st);
  /* regions nested 400 deep, tuples 1000 deep */
  static char big[65536];
  n = (size_t)snprintf(big, sizeof big, "func.func @f(%%i: tensor<i32>) {\n");
  for (int i = 0; i < 400; i++)
    n += (size_t)snprintf(big + n, sizeof big - n, "%%r%d = \"stablehlo.case\"(%%i) ({\n", i);
  m = tl_parse_text("t.mlir", big, 0, &st);
  CHECK(m == NULL && hlo_status_code_of(st) == HLO_PARSE_ERROR && status_loc(st));
  CHECK(st && strstr(hlo_status_message(st), "too deeply"));
  hlo_status_free(st);
  n = (size_t)snprintf(big, sizeof big, "func.func @f(%%a: ");
  for (int i = 0; i < 1000; i++) n += (size_t)snprintf(big + n, sizeof big - n, "tuple<");
  m = tl_parse_text("t.mlir", big, 0, &st);
  CHECK(m == NULL && st && strstr(hlo_status_message(st), "too deeply"));
  hlo_status_free(st);
}

TEST(out_of_memory_is_reported) {
  const char *t =
      "module @m {\n  func.func @f(%a: tensor<2xf32>, %z: tensor<f32>) -> tensor<f32> {\n"
      "    %c = stablehlo.constant dense<[1.0, 2.0]> : tensor<2xf32>\n"
      "    %0 = stablehlo.reduce(%a init: %z) applies stablehlo.add across dimensions = [0] : (tensor<2xf32>, tensor<f32>) -> tensor<f32>\n"
      "    %1 = \"stablehlo.dot_general\"(%a, %c) <{dot_dimension_numbers = #stablehlo.dot<lhs_contracting_dimensions = [0], rhs_contracting_dimensions = [0]>}> : (tensor<2xf32>, tensor<2xf32>) -> tensor<f32>\n"
      "    return %1 : tensor<f32>\n  }\n}\n";
  int ok = 0, oom = 0, other = 0;
  for (long n = 1; n < 400; n++) {
    hlo_fail_alloc_after = n;
    hlo_status st;
    hlo_module_ir *m = tl_parse_text("t.mlir", t, 0, &st);
    hlo_fail_alloc_after = 0;
    if (m) { ok++; module_free(m); continue; }
    if (hlo_status_code_of(st) == HLO_RESOURCE_EXHAUSTED) oom++;
    else { other++; hlo_status_print(st, stderr); }
    hlo_status_free(st);
  }
  CHECK(ok > 0 && oom > 0);
  CHECK_EQ_INT(other, 0);
}

TEST(split) {
  const char *t = "a\n// -----\nb\nc\n// // -----\nd";
  split_piece *p;
  size_t n;
  hlo_status st = parse_split(t, strlen(t), &p, &n);
  CHECK(st == NULL);
  CHECK_EQ_INT(n, 3);
  if (n == 3) {
    CHECK(p[0].begin == 0 && p[0].end == 2 && p[0].first_line == 1);
    CHECK(p[1].begin == 11 && p[1].first_line == 3);
    CHECK(p[2].begin == strlen(t) - 1 && p[2].first_line == 6);
  }
  free(p);
  /* a piece's locations count lines from the file start */
  const char *u = "func.func @f() {\n  func.return\n}\n// -----\nfunc.func @g() {\n  %0 = stablehlo.bad\n}\n";
  st = parse_split(u, strlen(u), &p, &n);
  CHECK(st == NULL && n == 2);
  hlo_source src = {"u.mlir", u, strlen(u), 1};
  hlo_module_ir *m;
  st = parse_module(&src, p[1].begin, p[1].end, &m);
  CHECK(st && status_loc(st) && status_loc(st)->line == 6 && status_loc(st)->col == 8);
  hlo_status_free(st);
  free(p);
}

TEST(attributes) {
  hlo_module_ir *m = tl_parse_text("t.mlir",
      "func.func @f(%a: tensor<2xf32>) attributes {d = {x = [1, \"s\"], y}, e = array<i1: true, false>,\n"
      "    g = #stablehlo.gather<offset_dims = [1], collapsed_slice_dims = [0], start_index_map = [0], index_vector_dim = 1>,\n"
      "    ch = #stablehlo.channel_handle<handle = 1, type = 0>, o = #sdy.thing<[{\"a\"}]>, s = @x::@y,\n"
      "    f = 1.5 : f32, i = -3 : i32, t = tensor<2xf32>, al = #stablehlo.output_operand_alias<output_tuple_indices = [0], operand_index = 0, operand_tuple_indices = []>,\n"
      "    l = dense<[0, 1]> : tensor<2xindex>} {\n"
      "  func.return\n}\n", 0,
      NULL);
  CHECK(m != NULL);
  if (!m) return;
  attr_list *l = &m->funcs->attrs;
  CHECK_EQ_INT(l->n, 11);
  const hlo_attr *d = l->items[0].value;
  CHECK(d->kind == ATTR_DICT && d->u.dict.n == 2 && d->u.dict.entries[1].value->kind == ATTR_UNIT);
  CHECK(l->items[1].value->kind == ATTR_DENSE_ARRAY && l->items[1].value->u.darr.dtype == HLO_I1);
  const hlo_attr *g = l->items[2].value;
  CHECK(g->kind == ATTR_STRUCT && !strcmp(g->u.st.name, "stablehlo.gather") && g->u.st.n == 4);
  const hlo_attr *ivd = attr_field(g, "index_vector_dim");
  CHECK(ivd && ivd->kind == ATTR_INT && ivd->u.i.v == 1);
  CHECK(attr_field(l->items[3].value, "handle")->u.i.v == 1);
  CHECK(l->items[4].value->kind == ATTR_OPAQUE && !strcmp(l->items[4].value->u.str.s, "#sdy.thing<[{\"a\"}]>"));
  CHECK(l->items[5].value->kind == ATTR_SYMBOL && !strcmp(l->items[5].value->u.str.s, "x::@y"));
  CHECK(l->items[6].value->kind == ATTR_FLOAT && l->items[6].value->u.f.dtype == HLO_F32);
  CHECK(l->items[7].value->kind == ATTR_INT && l->items[7].value->u.i.v == -3 && l->items[7].value->u.i.dtype == HLO_I32);
  CHECK(l->items[8].value->kind == ATTR_TYPE);
  CHECK(l->items[9].value->kind == ATTR_STRUCT && l->items[9].value->u.st.n == 2);
  CHECK(l->items[10].value->kind == ATTR_OPAQUE);
  module_free(m);
}

/* Shardy: meshes and shardings are stored structured (ir.h's sdy_*). */
TEST(sdy_structured) {
  hlo_module_ir *m = tl_parse_text("t.mlir",
      "module {\n"
      "  sdy.mesh @mesh = <[\"x\"=4, \"y\"=1], device_ids=[3, 2, 1, 0]> {stablehlo.mesh = {axes = []}}\n"
      "  sdy.mesh @max = <[], device_ids=[0]>\n"
      "  func.func @main(%a: tensor<8x2x3xf32> {sdy.sharding = #sdy.sharding<@mesh, [{\"x\":(1)2, ?}p3, {?}, {}], "
      "replicated={\"x\":(2)2}, unreduced={\"y\"}>}) -> tensor<8x2x3xf32> {\n"
      "    %0 = sdy.sharding_constraint %a <mesh<[\"z\"=2]>, [{\"z\"}, {}, {}]> : tensor<8x2x3xf32>\n"
      "    %1 = sdy.manual_computation(%0) in_shardings=[<@mesh, [{\"x\"}, {}, {}]>] out_shardings=[<@mesh, [{\"x\"}, {}, {}]>] "
      "manual_axes={\"x\"} (%b: tensor<2x2x3xf32>) {\n"
      "      sdy.return %b : tensor<2x2x3xf32>\n"
      "    } : (tensor<8x2x3xf32>) -> tensor<8x2x3xf32>\n"
      "    sdy.sharding_group %1 group_id=3 : tensor<8x2x3xf32>\n"
      "    return %1 : tensor<8x2x3xf32>\n  }\n}\n", 0,
      NULL);
  CHECK(m != NULL);
  if (!m) return;
  CHECK_EQ_INT(m->num_meshes, 2);
  const sdy_mesh_decl *d = module_find_mesh(m, "mesh");
  CHECK(d && d->mesh->num_axes == 2 && !strcmp(d->mesh->axis_names[1], "y") && d->mesh->axis_sizes[0] == 4);
  CHECK(d && d->mesh->num_device_ids == 4 && d->mesh->device_ids[0] == 3 && d->attrs.n == 1);
  CHECK(d && sdy_mesh_num_devices(d->mesh) == 4);
  const sdy_mesh_decl *mx = module_find_mesh(m, "max");
  CHECK(mx && mx->mesh->num_axes == 0 && sdy_mesh_num_devices(mx->mesh) == 1);
  const hlo_func *f = m->funcs;
  const hlo_attr *a = f->arg_attrs[0].items[0].value;
  CHECK(a->kind == ATTR_SDY && a->u.sdy->kind == SDY_SHARDING);
  if (a->kind == ATTR_SDY) {
    const sdy_sharding *sh = a->u.sdy->shardings[0];
    CHECK(!strcmp(sh->mesh_name, "mesh") && sh->rank == 3);
    CHECK(sh->dims[0].num_axes == 1 && sh->dims[0].axes[0].pre_size == 1 && sh->dims[0].axes[0].size == 2);
    CHECK(sh->dims[0].is_open && sh->dims[0].priority == 3 && sh->dims[1].is_open && !sh->dims[2].is_open);
    CHECK(sh->dims[1].priority == -1 && sh->num_replicated == 1 && sh->replicated[0].pre_size == 2);
    CHECK(sh->num_unreduced == 1 && !strcmp(sh->unreduced[0].name, "y"));
    CHECK(sdy_sharding_mesh(m, sh) == d->mesh);
  }
  const hlo_op *c = f->body.block.first;
  CHECK(c->opcode == OP_SDY_SHARDING_CONSTRAINT);
  const hlo_attr *cs = op_attr(c, "sharding");
  CHECK(cs && cs->kind == ATTR_SDY && cs->u.sdy->shardings[0]->mesh_name == NULL &&
        cs->u.sdy->shardings[0]->mesh->axis_sizes[0] == 2);
  const hlo_op *mc = c->next;
  CHECK(mc->opcode == OP_SDY_MANUAL_COMPUTATION && mc->num_regions == 1);
  const hlo_attr *ax = op_attr(mc, "manual_axes");
  CHECK(ax && ax->kind == ATTR_SDY && ax->u.sdy->kind == SDY_AXES && ax->u.sdy->n == 1);
  const hlo_attr *in = op_attr(mc, "in_shardings");
  CHECK(in && in->kind == ATTR_SDY && in->u.sdy->kind == SDY_SHARDING_PER_VALUE && in->u.sdy->n == 1);
  CHECK(mc->regions[0].block.args[0].type->dims[0] == 2);
  const hlo_op *g = mc->next;
  CHECK(g->opcode == OP_SDY_SHARDING_GROUP && op_attr_int(g, "group_id", -1) == 3 && g->num_results == 0);
  module_free(m);
}

TEST(sdy_errors_located) {
  expect_err("module {\n  sdy.mesh @m = <[\"x\"=2]>\n  sdy.mesh @m = <[\"y\"=2]>\n}\n", "sdy.mesh @m = <[\"y", "redefinition of mesh", 0);
  expect_err("module {\n  sdy.mesh @m = <[x=2]>\n}\n", "x=2", "expected mesh axis name string", 0);
  expect_err("func.func @f(%a: tensor<2xf32> {sdy.sharding = #sdy.sharding<@m, [{\"x\"}], bogus={}>}) {\n}\n",
             "bogus", "expected 'replicated' or 'unreduced'", 0);
  expect_err("func.func @f(%a: tensor<2xf32> {sdy.sharding = #sdy.sharding<@m, [{\"x\"}]p>}) {\n}\n",
             "p>}", "expected '>' in sdy sharding", 0);
  expect_err("func.func @f(%a: tensor<2xf32>) {\n  %0 = sdy.sharding_constraint %a <@m, [{\"x\":(0)2}]> : tensor<2xf32>\n}\n",
             "(0)2", "sub-axis sizes must be positive", -0);
}

/* dense_resource literals resolved from the trailing resource section. */
TEST(dense_resource) {
  hlo_module_ir *m = tl_parse_text("t.mlir",
      "module {\n  func.func @main() -> tensor<2xi32> {\n"
      "    %0 = stablehlo.constant dense_resource<blob_1> : tensor<2xi32>\n    return %0 : tensor<2xi32>\n  }\n}\n"
      "{-#\n  dialect_resources: {\n    builtin: {\n      blob_1: \"0x0400000001000000FEFFFFFF\"\n    }\n  }\n#-}\n", 0,
      NULL);
  CHECK(m != NULL);
  if (!m) return;
  CHECK_EQ_INT(m->num_resources, 1);
  const hlo_attr *v = op_attr(m->funcs->body.block.first, "value");
  CHECK(v && v->kind == ATTR_DENSE && v->u.dense.resource && !strcmp(v->u.dense.resource, "blob_1"));
  if (v && v->kind == ATTR_DENSE && v->u.dense.nbytes == 8) {
    int32_t e[2];
    memcpy(e, v->u.dense.data, 8);
    CHECK(e[0] == 1 && e[1] == -2);
  } else {
    CHECK(0);
  }
  CHECK(m->resources[0].alignment == 4);
  module_free(m);
  const char *tail = "    return %0 : tensor<2xi32>\n  }\n}\n";
  char buf[1024];
#define RES_CASE(ref, blob, needle, msg)                                                          \
  snprintf(buf, sizeof buf,                                                                       \
           "module {\n  func.func @main() -> tensor<2xi32> {\n    %%0 = stablehlo.constant " ref  \
           " : tensor<2xi32>\n%s{-#\n  dialect_resources: {\n    builtin: {\n      b: " blob     \
           "\n    }\n  }\n#-}\n", tail);                                                          \
  expect_err(buf, needle, msg, 0)
  RES_CASE("dense_resource<nope>", "\"0x0400000001000000FEFFFFFF\"", "dense_resource<nope>", "no blob named 'nope'");
  RES_CASE("dense_resource<__elided__>", "\"0x0400000001000000FEFFFFFF\"", "dense_resource<__elided__>", "elided");
  RES_CASE("dense_resource<b>", "\"0x0400000001000000\"", "dense_resource<b>", "the blob holds 4 bytes");
  RES_CASE("dense_resource<b>", "\"0x04000000010000G0FEFFFFFF\"", "\"0x04000000010000G0", "invalid hex digit 'G'");
  RES_CASE("dense_resource<b>", "\"0x040000\"", "\"0x040000\"", "shorter than its 4-byte alignment header");
  RES_CASE("dense_resource<b>", "\"0x0300000001000000FEFFFFFF\"", "\"0x0300", "not a power of two");
  RES_CASE("dense_resource<b>", "\"0x04000000010000000\"", "\"0x0400000001000000", "odd number of hex digits");
  RES_CASE("dense_resource<b>", "42", "42\n", "expected a string value");
#undef RES_CASE
  hlo_status st;
  CHECK(tl_parse_text("t.mlir", "module {\n}\n{-#\n  dialect_resources: {\n    builtin: {\n      b: \"0x04000000\"\n", 0, &st) == NULL);
  CHECK(hlo_status_code_of(st) == HLO_PARSE_ERROR && strstr(hlo_status_message(st), "end of input"));
  hlo_status_free(st);
}

/* Every truncation (every 5th byte) and many one-byte corruptions of the
 * sharding and resource fixtures: an error or a module that verifies and
 * prints to text that parses again; never a crash (run under ASan). */
static void parse_damaged(const char *text, size_t len, int *errors) {
  hlo_source src = {"damaged.mlir", text, len, 1};
  hlo_module_ir *m = NULL;
  hlo_status st = parse_module(&src, 0, len, &m);
  if (!st) st = module_verify(m);
  if (st) {
    CHECK(hlo_status_message(st) != NULL);
    (*errors)++;
    hlo_status_free(st);
    module_free(m);
    return;
  }
  char *t = module_print(m);
  CHECK(t != NULL);
  if (t) {
    hlo_module_ir *m2 = tl_parse_text("t.mlir", t, 0, NULL);
    if (!m2) fprintf(stderr, "printed text of a damaged input does not parse:\n%s\n", t);
    CHECK(m2 != NULL);
    module_free(m2);
  }
  free(t);
  module_free(m);
}

static void damage_file(const char *path, void *ctx) {
  int *errors = ctx;
  size_t len;
  char *text = tl_read_file(path, &len);
  CHECK(text != NULL);
  if (!text) return;
  char *buf = malloc(len + 1);
  CHECK(buf != NULL);
  if (!buf) { free(text); return; }
  for (size_t cut = 0; cut < len; cut += 5) {
    memcpy(buf, text, cut);
    buf[cut] = 0;
    parse_damaged(buf, cut, errors);
  }
  static const char subst[] = "<>{}[]\"@%:,?#-0x=p";
  for (size_t at = 0; at < len; at += 3) {
    memcpy(buf, text, len + 1);
    buf[at] = subst[at % (sizeof subst - 1)];
    parse_damaged(buf, len, errors);
  }
  free(buf);
  free(text);
}

TEST(damaged_sharding_and_resource_fixtures) {
  int errors = 0;
  size_t n = tl_for_each_mlir("tests/jax/sharding", true, damage_file, &errors);
  n += tl_for_each_mlir("tests/jax/resources", true, damage_file, &errors);
  printf("damaged fixtures: %zu files, %d variants rejected\n", n, errors);
  CHECK(n >= 10 && errors > 100);
}

/* Out of memory anywhere while reading sdy syntax or a resource section is
 * reported as such, never a crash or another error. */
TEST(out_of_memory_sdy_and_resources) {
  const char *files[2] = {"tests/jax/sharding/sdy_syntax/program.mlir",
                          "tests/jax/resources/f64_two_blobs/program.mlir"};
  for (int f = 0; f < 2; f++) {
    size_t len;
    char *t = tl_read_file(files[f], &len);
    CHECK(t != NULL);
    if (!t) continue;
    int ok = 0, oom = 0, other = 0;
    for (long n = 1; n < 1500 && !ok; n++) {
      hlo_fail_alloc_after = n;
      hlo_status st;
      hlo_module_ir *m = tl_parse_text("t.mlir", t, 0, &st);
      hlo_status vst = m ? module_verify(m) : NULL;
      char *pr = m && !vst ? module_print(m) : NULL;
      hlo_fail_alloc_after = 0;
      if (m && !vst && pr) ok++;
      else if (m && !vst) oom++; /* the printer's NULL is its out-of-memory report */
      else if (hlo_status_code_of(m ? vst : st) == HLO_RESOURCE_EXHAUSTED) oom++;
      else { other++; hlo_status_print(m ? vst : st, stderr); }
      free(pr);
      hlo_status_free(vst);
      module_free(m);
      if (!m) hlo_status_free(st);
    }
    if (ok != 1 || oom < 3) fprintf(stderr, "%s: ok %d oom %d\n", files[f], ok, oom);
    CHECK(ok == 1 && oom >= 3);
    CHECK_EQ_INT(other, 0);
    free(t);
  }
}

/* GSPMD sharding strings (`mhlo.sharding`) decode into gspmd_sharding. */
TEST(gspmd_strings) {
  arena a;
  arena_init(&a);
  gspmd_sharding g;
#define GP(text) gspmd_sharding_parse(&a, text, strlen(text), &g)
  CHECK(GP("") == NULL && g.kind == GSPMD_REPLICATED);
  CHECK(GP("{replicated}") == NULL && g.kind == GSPMD_REPLICATED);
  CHECK(GP("{maximal device=3}") == NULL && g.kind == GSPMD_MAXIMAL && g.device == 3);
  CHECK(GP("{manual}") == NULL && g.kind == GSPMD_MANUAL);
  CHECK(GP("{devices=[2,1]1,0}") == NULL && g.kind == GSPMD_TILED && g.rank == 2 && g.num_devices == 2 &&
        g.devices[0] == 1 && g.devices[1] == 0);
  /* iota(6) reshaped [2,3], transposed (1,0): 0 3 1 4 2 5 */
  CHECK(GP("{devices=[3,2]<=[2,3]T(1,0)}") == NULL && g.num_devices == 6 && g.devices[1] == 3 &&
        g.devices[2] == 1 && g.devices[5] == 5);
  CHECK(GP("{devices=[2,1,2]<=[4] last_tile_dim_replicate}") == NULL && g.last_tile_dim_replicate &&
        g.devices[3] == 3);
  CHECK(GP("{devices=[1,2,2]<=[4] last_tile_dims={manual, replicated}}") == NULL && g.num_subgroups == 2 &&
        !strcmp(g.subgroup_types[0], "manual"));
  CHECK(GP("{{replicated}, {devices=[2]0,1 metadata={op_name=\"a}b\"}}}") == NULL && g.kind == GSPMD_TUPLE &&
        g.num_elems == 2 && g.elems[1].kind == GSPMD_TILED);
  const char *bad[] = {"{devices=[2,1]0}", "{devices=[2]0,1,2}", "{devices=[2]<=[3]}", "{devices=[2,2]<=[2,2]T(0,0)}",
                       "{maximal}", "{bogus}", "{replicated", "{replicated} x", "{devices=[0]}",
                       "{devices=[99999999999]<=[1]}", "{devices=[1]0 last_tile_dims={manual, replicated}}"};
  for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
    hlo_status st = GP(bad[i]);
    if (!st) fprintf(stderr, "accepted bad GSPMD sharding %s\n", bad[i]);
    CHECK(st != NULL && hlo_status_code_of(st) == HLO_INVALID_ARGUMENT);
    hlo_status_free(st);
  }
#undef GP
  arena_deinit(&a);
}

TEST_MAIN()
