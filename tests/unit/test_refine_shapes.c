/* test_refine_shapes.c — the refine-shapes pass (src/passes/refine_shapes.c):
 * small dynamic modules in, the printed static module (or the error) out. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ir/ir.h"
#include "parse/parse.h"
#include "passes/passes.h"
#include "test.h"
#include "testlib.h"

/* Parses `text`, refines @main for args of shape dims (one rank-`rank` f32
 * or i32 tensor per entry of `ranks`), returns the status; *out_text gets
 * the printed module on success (malloc'd) or NULL. */
static hlo_status refine(const char *text, hlo_dtype dt, uint32_t rank, const int64_t *dims,
                         char **out_text) {
  *out_text = NULL;
  hlo_status st;
  hlo_module_ir *m = tl_parse_text("t.mlir", text, TL_VERIFY, &st);
  if (st) return st;
  hlo_type *t = type_tensor(&m->arena, dt, rank, dims);
  st = pass_refine_shapes(m, NULL, &t, 1);
  if (!st) st = module_verify(m);
  if (!st) *out_text = module_print(m);
  module_free(m);
  return st;
}

static const char *k_iota =
    "func.func @main(%x: tensor<?xf32>) -> tensor<?xf32> {\n"
    "  %n = stablehlo.get_dimension_size %x, dim = 0 : (tensor<?xf32>) -> tensor<i32>\n"
    "  %c = call @inner(%n, %x) : (tensor<i32>, tensor<?xf32>) -> tensor<?xf32>\n"
    "  return %c : tensor<?xf32>\n"
    "}\n"
    "func.func private @inner(%n: tensor<i32> {jax.global_constant = \"b\"}, %x: tensor<?xf32>) -> tensor<?xf32> {\n"
    "  %s = stablehlo.reshape %n : (tensor<i32>) -> tensor<1xi32>\n"
    "  %i = stablehlo.dynamic_iota %s, dim = 0 : (tensor<1xi32>) -> tensor<?xf32>\n"
    "  %y = stablehlo.add %x, %i : tensor<?xf32>\n"
    "  return %y : tensor<?xf32>\n"
    "}\n";

TEST(dynamic_iota_becomes_static_iota) {
  int64_t d[1] = {5};
  char *out;
  hlo_status st = refine(k_iota, HLO_F32, 1, d, &out);
  CHECK(st == NULL);
  if (st) { hlo_status_print(st, stderr); hlo_status_free(st); return; }
  /* main is static; the dynamic ops and the call are gone from it */
  const char *main_end = strstr(out, "func.func private");
  CHECK(main_end != NULL);
  CHECK(strstr(out, "@main(%arg0: tensor<5xf32>) -> tensor<5xf32>") != NULL);
  CHECK(strstr(out, "stablehlo.iota dim = 0 : tensor<5xf32>") != NULL);
  const char *dyn = strstr(out, "dynamic_iota");
  CHECK(dyn == NULL || dyn > main_end);
  const char *call = strstr(out, "call @inner");
  CHECK(call == NULL);
  free(out);
}

TEST(misfit_rank_names_argument) {
  int64_t d[2] = {2, 3};
  char *out;
  hlo_status st = refine(k_iota, HLO_F32, 2, d, &out);
  CHECK(st != NULL);
  if (!st) { free(out); return; }
  CHECK(strstr(hlo_status_message(st), "argument 0 of @main") != NULL);
  CHECK(strstr(hlo_status_message(st), "rank 2") != NULL);
  hlo_status_free(st);
}

static const char *k_assert =
    "func.func @main(%x: tensor<?xf32>) -> tensor<?xf32> {\n"
    "  %c = stablehlo.constant dense<2> : tensor<i32>\n"
    "  %n = stablehlo.get_dimension_size %x, dim = 0 : (tensor<?xf32>) -> tensor<i32>\n"
    "  %p = stablehlo.compare GE, %n, %c, SIGNED : (tensor<i32>, tensor<i32>) -> tensor<i1>\n"
    "  stablehlo.custom_call @shape_assertion(%p, %n) {error_message = \"need b >= 2, got {0}\", has_side_effect = true} : (tensor<i1>, tensor<i32>) -> ()\n"
    "  return %x : tensor<?xf32>\n"
    "}\n";

TEST(shape_assertion_formats_message) {
  int64_t d1[1] = {1}, d3[1] = {3};
  char *out;
  hlo_status st = refine(k_assert, HLO_F32, 1, d1, &out);
  CHECK(st != NULL);
  if (st) {
    CHECK_STR(hlo_status_message(st), "need b >= 2, got 1");
    hlo_status_free(st);
  }
  st = refine(k_assert, HLO_F32, 1, d3, &out);
  CHECK(st == NULL);
  if (st) hlo_status_free(st);
  CHECK(out && strstr(out, "shape_assertion") == NULL);
  free(out);
}

static const char *k_bcast =
    "func.func @main(%x: tensor<?x2xi32>) -> tensor<?x2xi32> {\n"
    "  %n = stablehlo.get_dimension_size %x, dim = 0 : (tensor<?x2xi32>) -> tensor<i32>\n"
    "  %a = stablehlo.reshape %n : (tensor<i32>) -> tensor<1xi32>\n"
    "  %b = stablehlo.constant dense<2> : tensor<1xi32>\n"
    "  %s = stablehlo.concatenate %a, %b, dim = 0 : (tensor<1xi32>, tensor<1xi32>) -> tensor<2xi32>\n"
    "  %o = stablehlo.constant dense<1> : tensor<i32>\n"
    "  %y = stablehlo.dynamic_broadcast_in_dim %o, %s, dims = [] : (tensor<i32>, tensor<2xi32>) -> tensor<?x2xi32>\n"
    "  %z = stablehlo.multiply %x, %y : tensor<?x2xi32>\n"
    "  return %z : tensor<?x2xi32>\n"
    "}\n";

TEST(shape_computation_folds_to_broadcast) {
  int64_t d[2] = {4, 2};
  char *out;
  hlo_status st = refine(k_bcast, HLO_I32, 2, d, &out);
  CHECK(st == NULL);
  if (st) { hlo_status_print(st, stderr); hlo_status_free(st); return; }
  CHECK(strstr(out, "stablehlo.broadcast_in_dim") != NULL);
  CHECK(strstr(out, "(tensor<i32>) -> tensor<4x2xi32>") != NULL);
  CHECK(strstr(out, "dynamic_broadcast_in_dim") == NULL);
  CHECK(strstr(out, "get_dimension_size") == NULL);
  free(out);
}

/* ------------------------------------------------ one test per family */

/* A module whose @main takes one tensor<?x...> argument, the concrete arg
 * shape, and texts that must appear in the refined module's @main. */
typedef struct family_case {
  const char *name, *text;
  hlo_dtype dt;
  uint32_t rank;
  int64_t dims[4];
  const char *want[3];
} family_case;

static const family_case k_families[] = {
    {"composite (through its decomposition)",
     "func.func @main(%x: tensor<?xf32>) -> tensor<?xf32> {\n"
     "  %0 = stablehlo.composite \"my.double\" %x {decomposition = @my.double.impl} : (tensor<?xf32>) -> tensor<?xf32>\n"
     "  return %0 : tensor<?xf32>\n"
     "}\n"
     "func.func private @my.double.impl(%a: tensor<?xf32>) -> tensor<?xf32> {\n"
     "  %0 = stablehlo.add %a, %a : tensor<?xf32>\n"
     "  return %0 : tensor<?xf32>\n"
     "}\n",
     HLO_F32, 1, {4}, {"stablehlo.add %arg0, %arg0 : tensor<4xf32>", "-> tensor<4xf32>", NULL}},
    {"fft RFFT",
     "func.func @main(%x: tensor<?x8xf32>) -> tensor<?x5xcomplex<f32>> {\n"
     "  %0 = stablehlo.fft %x, type = RFFT, length = [8] : (tensor<?x8xf32>) -> tensor<?x5xcomplex<f32>>\n"
     "  return %0 : tensor<?x5xcomplex<f32>>\n"
     "}\n",
     HLO_F32, 2, {3, 8}, {"-> tensor<3x5xcomplex<f32>>", NULL}},
    {"fft IRFFT",
     "func.func @main(%x: tensor<?x5xcomplex<f32>>) -> tensor<?x8xf32> {\n"
     "  %0 = stablehlo.fft %x, type = IRFFT, length = [8] : (tensor<?x5xcomplex<f32>>) -> tensor<?x8xf32>\n"
     "  return %0 : tensor<?x8xf32>\n"
     "}\n",
     HLO_C64, 2, {2, 5}, {"-> tensor<2x8xf32>", NULL}},
    {"dot_general",
     "func.func @main(%x: tensor<?x3xf32>) -> tensor<?x?xf32> {\n"
     "  %0 = stablehlo.dot_general %x, %x, contracting_dims = [1] x [1] : (tensor<?x3xf32>, tensor<?x3xf32>) -> tensor<?x?xf32>\n"
     "  return %0 : tensor<?x?xf32>\n"
     "}\n",
     HLO_F32, 2, {5, 3}, {"-> tensor<5x5xf32>", NULL}},
    {"dot (legacy)",
     "func.func @main(%x: tensor<?x3xf32>) -> tensor<?xf32> {\n"
     "  %c = stablehlo.constant dense<1.0> : tensor<3xf32>\n"
     "  %0 = \"stablehlo.dot\"(%x, %c) : (tensor<?x3xf32>, tensor<3xf32>) -> tensor<?xf32>\n"
     "  return %0 : tensor<?xf32>\n"
     "}\n",
     HLO_F32, 2, {6, 3}, {"-> tensor<6xf32>", NULL}},
    {"einsum",
     "func.func @main(%x: tensor<?x3xf32>) -> tensor<3x?xf32> {\n"
     "  %c = stablehlo.constant dense<1.0> : tensor<3x3xf32>\n"
     "  %0 = \"stablehlo.einsum\"(%c, %x) {einsum_config = \"ij,bj->ib\"} : (tensor<3x3xf32>, tensor<?x3xf32>) -> tensor<3x?xf32>\n"
     "  return %0 : tensor<3x?xf32>\n"
     "}\n",
     HLO_F32, 2, {4, 3}, {"-> tensor<3x4xf32>", NULL}},
    {"convolution",
     "func.func @main(%x: tensor<?x4x1xf32>) -> tensor<?x2x2xf32> {\n"
     "  %w = stablehlo.constant dense<1.0> : tensor<3x1x2xf32>\n"
     "  %0 = stablehlo.convolution(%x, %w) dim_numbers = [b, 0, f]x[0, i, o]->[b, 0, f], window = {stride = [1]} {batch_group_count = 1 : i64, feature_group_count = 1 : i64} : (tensor<?x4x1xf32>, tensor<3x1x2xf32>) -> tensor<?x2x2xf32>\n"
     "  return %0 : tensor<?x2x2xf32>\n"
     "}\n",
     HLO_F32, 3, {5, 4, 1}, {"-> tensor<5x2x2xf32>", NULL}},
    {"chlo.broadcast_add",
     "func.func @main(%x: tensor<?x3xf32>) -> tensor<?x3xf32> {\n"
     "  %c = stablehlo.constant dense<1.0> : tensor<3xf32>\n"
     "  %0 = chlo.broadcast_add %x, %c : (tensor<?x3xf32>, tensor<3xf32>) -> tensor<?x3xf32>\n"
     "  return %0 : tensor<?x3xf32>\n"
     "}\n",
     HLO_F32, 2, {2, 3}, {"-> tensor<2x3xf32>", NULL}},
    {"chlo.top_k",
     "func.func @main(%x: tensor<?x5xf32>) -> (tensor<?x2xf32>, tensor<?x2xi32>) {\n"
     "  %0:2 = chlo.top_k(%x, k = 2) : tensor<?x5xf32> -> (tensor<?x2xf32>, tensor<?x2xi32>)\n"
     "  return %0#0, %0#1 : tensor<?x2xf32>, tensor<?x2xi32>\n"
     "}\n",
     HLO_F32, 2, {3, 5}, {"tensor<3x2xf32>, tensor<3x2xi32>", NULL}},
    {"sort (variadic)",
     "func.func @main(%x: tensor<?xf32>) -> tensor<?xi32> {\n"
     "  %i = stablehlo.constant dense<0> : tensor<i32>\n"
     "  %n = stablehlo.get_dimension_size %x, dim = 0 : (tensor<?xf32>) -> tensor<i32>\n"
     "  %s = stablehlo.reshape %n : (tensor<i32>) -> tensor<1xi32>\n"
     "  %k = stablehlo.dynamic_iota %s, dim = 0 : (tensor<1xi32>) -> tensor<?xi32>\n"
     "  %0:2 = \"stablehlo.sort\"(%x, %k) ({\n"
     "  ^bb0(%a: tensor<f32>, %b: tensor<f32>, %c: tensor<i32>, %d: tensor<i32>):\n"
     "    %p = stablehlo.compare LT, %a, %b : (tensor<f32>, tensor<f32>) -> tensor<i1>\n"
     "    stablehlo.return %p : tensor<i1>\n"
     "  }) {dimension = 0 : i64} : (tensor<?xf32>, tensor<?xi32>) -> (tensor<?xf32>, tensor<?xi32>)\n"
     "  return %0#1 : tensor<?xi32>\n"
     "}\n",
     HLO_F32, 1, {7}, {"-> tensor<7xi32>", NULL}},
    {"reduce (variadic) and reduce_window",
     "func.func @main(%x: tensor<?x4xf32>) -> (tensor<?xf32>, tensor<?x3xf32>) {\n"
     "  %z = stablehlo.constant dense<0.0> : tensor<f32>\n"
     "  %0:2 = stablehlo.reduce(%x init: %z), (%x init: %z) across dimensions = [1] : (tensor<?x4xf32>, tensor<?x4xf32>, tensor<f32>, tensor<f32>) -> (tensor<?xf32>, tensor<?xf32>)\n"
     "   reducer(%a: tensor<f32>, %b: tensor<f32>) (%c: tensor<f32>, %d: tensor<f32>) {\n"
     "    %s = stablehlo.add %a, %b : tensor<f32>\n"
     "    %t = stablehlo.add %c, %d : tensor<f32>\n"
     "    stablehlo.return %s, %t : tensor<f32>, tensor<f32>\n"
     "  }\n"
     "  %1 = \"stablehlo.reduce_window\"(%x, %z) ({\n"
     "  ^bb0(%a: tensor<f32>, %b: tensor<f32>):\n"
     "    %s = stablehlo.add %a, %b : tensor<f32>\n"
     "    stablehlo.return %s : tensor<f32>\n"
     "  }) {window_dimensions = array<i64: 1, 2>} : (tensor<?x4xf32>, tensor<f32>) -> tensor<?x3xf32>\n"
     "  return %0#1, %1 : tensor<?xf32>, tensor<?x3xf32>\n"
     "}\n",
     HLO_F32, 2, {6, 4}, {"-> (tensor<6xf32>, tensor<6x3xf32>)", NULL}},
    {"rng (shape operand)",
     "func.func @main(%x: tensor<?xf32>) -> tensor<?xf32> {\n"
     "  %a = stablehlo.constant dense<0.0> : tensor<f32>\n"
     "  %b = stablehlo.constant dense<1.0> : tensor<f32>\n"
     "  %n = stablehlo.get_dimension_size %x, dim = 0 : (tensor<?xf32>) -> tensor<i32>\n"
     "  %m = stablehlo.convert %n : (tensor<i32>) -> tensor<i64>\n"
     "  %s = stablehlo.reshape %m : (tensor<i64>) -> tensor<1xi64>\n"
     "  %0 = stablehlo.rng %a, %b, %s, distribution = UNIFORM : (tensor<f32>, tensor<f32>, tensor<1xi64>) -> tensor<?xf32>\n"
     "  return %0 : tensor<?xf32>\n"
     "}\n",
     HLO_F32, 1, {5}, {"-> tensor<5xf32>", NULL}},
    {"custom_call with indices_of_shape_operands",
     "func.func @main(%x: tensor<?xf32>) -> tensor<?xf32> {\n"
     "  %n = stablehlo.get_dimension_size %x, dim = 0 : (tensor<?xf32>) -> tensor<i32>\n"
     "  %s = stablehlo.reshape %n : (tensor<i32>) -> tensor<1xi32>\n"
     "  %0 = stablehlo.custom_call @my_target(%x, %s) {indices_of_shape_operands = dense<1> : tensor<1xi64>} : (tensor<?xf32>, tensor<1xi32>) -> tensor<?xf32>\n"
     "  return %0 : tensor<?xf32>\n"
     "}\n",
     HLO_F32, 1, {3}, {"-> tensor<3xf32>", NULL}},
    {"triangular_solve and cholesky",
     "func.func @main(%x: tensor<?x3x3xf32>) -> tensor<?x3x3xf32> {\n"
     "  %0 = stablehlo.cholesky %x, lower = true : tensor<?x3x3xf32>\n"
     "  %1 = \"stablehlo.triangular_solve\"(%0, %x) {left_side = true, lower = true, unit_diagonal = false, transpose_a = #stablehlo<transpose NO_TRANSPOSE>} : (tensor<?x3x3xf32>, tensor<?x3x3xf32>) -> tensor<?x3x3xf32>\n"
     "  return %1 : tensor<?x3x3xf32>\n"
     "}\n",
     HLO_F32, 3, {2, 3, 3}, {"-> tensor<2x3x3xf32>", NULL}},
    {"batch_norm_training",
     "func.func @main(%x: tensor<?x2xf32>) -> (tensor<?x2xf32>, tensor<2xf32>) {\n"
     "  %s = stablehlo.constant dense<1.0> : tensor<2xf32>\n"
     "  %0:3 = \"stablehlo.batch_norm_training\"(%x, %s, %s) {epsilon = 1.0e-3 : f32, feature_index = 1 : i64} : (tensor<?x2xf32>, tensor<2xf32>, tensor<2xf32>) -> (tensor<?x2xf32>, tensor<2xf32>, tensor<2xf32>)\n"
     "  return %0#0, %0#1 : tensor<?x2xf32>, tensor<2xf32>\n"
     "}\n",
     HLO_F32, 2, {4, 2}, {"-> (tensor<4x2xf32>, tensor<2xf32>)", NULL}},
    {"reduce_precision, map, select_and_scatter",
     "func.func @main(%x: tensor<?xf32>) -> tensor<?xf32> {\n"
     "  %z = stablehlo.constant dense<0.0> : tensor<f32>\n"
     "  %0 = stablehlo.reduce_precision %x, format = e5m10 : tensor<?xf32>\n"
     "  %1 = \"stablehlo.map\"(%0, %x) ({\n"
     "  ^bb0(%a: tensor<f32>, %b: tensor<f32>):\n"
     "    %s = stablehlo.add %a, %b : tensor<f32>\n"
     "    stablehlo.return %s : tensor<f32>\n"
     "  }) {dimensions = array<i64: 0>} : (tensor<?xf32>, tensor<?xf32>) -> tensor<?xf32>\n"
     "  %2 = \"stablehlo.select_and_scatter\"(%1, %1, %z) ({\n"
     "  ^bb0(%a: tensor<f32>, %b: tensor<f32>):\n"
     "    %p = stablehlo.compare GE, %a, %b : (tensor<f32>, tensor<f32>) -> tensor<i1>\n"
     "    stablehlo.return %p : tensor<i1>\n"
     "  }, {\n"
     "  ^bb0(%a: tensor<f32>, %b: tensor<f32>):\n"
     "    %s = stablehlo.add %a, %b : tensor<f32>\n"
     "    stablehlo.return %s : tensor<f32>\n"
     "  }) {window_dimensions = array<i64: 1>} : (tensor<?xf32>, tensor<?xf32>, tensor<f32>) -> tensor<?xf32>\n"
     "  return %2 : tensor<?xf32>\n"
     "}\n",
     HLO_F32, 1, {5}, {"-> tensor<5xf32>", NULL}},
    {"broadcast (legacy) and all_reduce",
     "func.func @main(%x: tensor<?xf32>) -> tensor<2x?xf32> {\n"
     "  %0 = \"stablehlo.broadcast\"(%x) {broadcast_sizes = array<i64: 2>} : (tensor<?xf32>) -> tensor<2x?xf32>\n"
     "  %1 = \"stablehlo.all_reduce\"(%0) ({\n"
     "  ^bb0(%a: tensor<f32>, %b: tensor<f32>):\n"
     "    %s = stablehlo.add %a, %b : tensor<f32>\n"
     "    stablehlo.return %s : tensor<f32>\n"
     "  }) {replica_groups = dense<[[0]]> : tensor<1x1xi64>} : (tensor<2x?xf32>) -> tensor<2x?xf32>\n"
     "  return %1 : tensor<2x?xf32>\n"
     "}\n",
     HLO_F32, 1, {3}, {"-> tensor<2x3xf32>", NULL}},
    {"real_dynamic_slice at a dynamic start, strided",
     "func.func @main(%x: tensor<?xf32>) -> tensor<?xf32> {\n"
     "  %n = stablehlo.get_dimension_size %x, dim = 0 : (tensor<?xf32>) -> tensor<i32>\n"
     "  %two = stablehlo.constant dense<2> : tensor<i32>\n"
     "  %i = stablehlo.divide %n, %two : tensor<i32>\n"
     "  %r = stablehlo.custom_call @opaque(%i) : (tensor<i32>) -> tensor<i32>\n"
     "  %s = stablehlo.reshape %r : (tensor<i32>) -> tensor<1xi32>\n"
     "  %c = stablehlo.constant dense<3> : tensor<1xi32>\n"
     "  %l = stablehlo.add %s, %c : tensor<1xi32>\n"
     "  %st = stablehlo.constant dense<2> : tensor<1xi32>\n"
     "  %0 = stablehlo.real_dynamic_slice %x, %s, %l, %st : (tensor<?xf32>, tensor<1xi32>, tensor<1xi32>, tensor<1xi32>) -> tensor<?xf32>\n"
     "  return %0 : tensor<?xf32>\n"
     "}\n",
     HLO_F32, 1, {8},
     {"sizes = [3] : (tensor<8xf32>, tensor<i32>) -> tensor<3xf32>",
      "stablehlo.slice", "-> tensor<2xf32>"}},
};

TEST(every_family_refines) {
  for (size_t i = 0; i < sizeof k_families / sizeof *k_families; i++) {
    const family_case *c = &k_families[i];
    char *out;
    hlo_status st = refine(c->text, c->dt, c->rank, c->dims, &out);
    if (st) {
      fprintf(stderr, "  family '%s': ", c->name);
      hlo_status_print(st, stderr);
      hlo_status_free(st);
      CHECK(st == NULL);
      continue;
    }
    const char *main_end = strstr(out, "func.func private");
    for (int k = 0; k < 3 && c->want[k]; k++) {
      const char *hit = strstr(out, c->want[k]);
      if (!hit || (main_end && hit > main_end))
        fprintf(stderr, "  family '%s': no '%s' in @main of\n%s\n", c->name, c->want[k], out);
      CHECK(hit != NULL && (!main_end || hit < main_end));
    }
    free(out);
  }
}

TEST(conflicting_input_sizes_name_the_inputs) {
  static const char *text =
      "func.func @main(%x: tensor<?xf32>) -> tensor<?x2xf32> {\n"
      "  %c = stablehlo.constant dense<1.0> : tensor<4x2xf32>\n"
      "  %b = stablehlo.broadcast_in_dim %x, dims = [0] : (tensor<?xf32>) -> tensor<?x2xf32>\n"
      "  %0 = stablehlo.multiply %b, %c : (tensor<?x2xf32>, tensor<4x2xf32>) -> tensor<?x2xf32>\n"
      "  return %0 : tensor<?x2xf32>\n"
      "}\n";
  int64_t d[1] = {3};
  char *out;
  hlo_status st = refine(text, HLO_F32, 1, d, &out);
  CHECK(st != NULL);
  if (!st) { free(out); return; }
  /* followed back through broadcast_in_dim to the input */
  CHECK(strstr(hlo_status_message(st), "the sizes of input 0 dim 0 (3) and operand 1 dim 0 (4) "
               "must agree for this multiply") != NULL);
  hlo_status_free(st);
}

TEST_MAIN()
