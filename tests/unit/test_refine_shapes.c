/* test_refine_shapes.c — the refine-shapes pass (src/passes/refine_shapes.c):
 * small dynamic modules in, the printed static module (or the error) out. */
#include <stdlib.h>
#include <string.h>

#include "ir/ir.h"
#include "parse/parse.h"
#include "passes/passes.h"
#include "test.h"

/* Parses `text`, refines @main for args of shape dims (one rank-`rank` f32
 * or i32 tensor per entry of `ranks`), returns the status; *out_text gets
 * the printed module on success (malloc'd) or NULL. */
static hlo_status refine(const char *text, hlo_dtype dt, uint32_t rank, const int64_t *dims,
                         char **out_text) {
  *out_text = NULL;
  hlo_source src = {"t.mlir", text, strlen(text), 1};
  hlo_module_ir *m = NULL;
  hlo_status st = parse_module(&src, 0, src.len, &m);
  if (st) return st;
  st = module_verify(m);
  hlo_type *t = type_tensor(&m->arena, dt, rank, dims);
  if (!st) st = pass_refine_shapes(m, NULL, &t, 1);
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

TEST_MAIN()
