/* test_cost.c — the cost analysis (src/passes/cost_analysis.c) on small
 * hand-written programs whose counts are known. Where a count is XLA's, it
 * was measured with jaxlib 0.10.2's XLA:CPU (`compiled.cost_analysis()` of
 * the same text); the comment says so. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ir/ir.h"
#include "parse/parse.h"
#include "passes/cost_analysis.h"
#include "passes/passes.h"
#include "test.h"
#include "testlib.h"

/* Parses and verifies `text`, legalizes chlo when `legalize`, runs the
 * analysis into *r. Returns the status (printed when unexpected). The module
 * is kept in *out_m (caller frees; NULL when parsing, verifying or
 * legalizing failed) so the rows' ops stay valid. */
static hlo_status analyse(const char *text, bool legalize, hlo_module_ir **out_m, cost_report *r) {
  hlo_status st;
  memset(r, 0, sizeof *r);
  *out_m = tl_parse_text("t.mlir", text, TL_VERIFY | (legalize ? TL_LEGALIZE_CHLO : 0), &st);
  if (!st) st = cost_analysis(*out_m, NULL, r);
  return st;
}

/* The totals of `text` (legalized), or -1e300 flops on error (printed). */
static cost_counts totals(const char *text) {
  hlo_module_ir *m;
  cost_report r;
  hlo_status st = analyse(text, true, &m, &r);
  cost_counts c = r.total;
  if (st) {
    hlo_status_print(st, stderr);
    hlo_status_free(st);
    c.flops = -1e300;
  }
  cost_report_free(&r);
  module_free(m);
  return c;
}

/* Batched dot: [2,3,4] x [2,4,5] -> [2,3,5]: 2 * 30 * 4 flops; bytes are
 * the operands and the result (24 + 40 + 30 floats). */
TEST(dot_general_batched) {
  cost_counts c = totals(
      "func.func @main(%a: tensor<2x3x4xf32>, %b: tensor<2x4x5xf32>) -> tensor<2x3x5xf32> {\n"
      "  %0 = stablehlo.dot_general %a, %b, batching_dims = [0] x [0], contracting_dims = [2] x [1]"
      " : (tensor<2x3x4xf32>, tensor<2x4x5xf32>) -> tensor<2x3x5xf32>\n"
      "  return %0 : tensor<2x3x5xf32>\n}\n");
  CHECK_EQ_INT(c.flops, 240);
  CHECK_EQ_INT(c.transcendentals, 0);
  CHECK_EQ_INT(c.bytes_accessed, (24 + 40 + 30) * 4);
}

/* A loop fusion of exp(a) + b over 8 elements: the fused ops' counts (8 flops,
 * 8 transcendentals), and bytes only for the fusion's operands and result
 * (3 * 32), not for the intermediate the fusion never writes. */
TEST(fusion_counts_contents_bytes_at_its_boundary) {
  cost_counts c = totals(
      "func.func @main(%a: tensor<8xf32>, %b: tensor<8xf32>) -> tensor<8xf32> {\n"
      "  %0 = \"hlo.fusion\"(%a, %b) <{kind = \"loop\", name = \"fusion.0\"}> ({\n"
      "  ^bb0(%p0: tensor<8xf32>, %p1: tensor<8xf32>):\n"
      "    %1 = stablehlo.exponential %p0 : tensor<8xf32>\n"
      "    %2 = stablehlo.add %1, %p1 : tensor<8xf32>\n"
      "    stablehlo.return %2 : tensor<8xf32>\n"
      "  }) : (tensor<8xf32>, tensor<8xf32>) -> tensor<8xf32>\n"
      "  return %0 : tensor<8xf32>\n}\n");
  CHECK_EQ_INT(c.flops, 8);
  CHECK_EQ_INT(c.transcendentals, 8);
  CHECK_EQ_INT(c.bytes_accessed, 3 * 32);
}

/* 3x3 "same" convolution of a 5x5 image, 1 -> 2 features: per spatial dim
 * the (output, kernel) pairs inside the input are 4 + 5 + 4 = 13, so
 * 2 * 1 * 2 * 13 * 13 = 676 flops; XLA:CPU: 676 flops, 372 bytes. */
TEST(convolution_padded) {
  cost_counts c = totals(
      "func.func @main(%x: tensor<1x5x5x1xf32>, %k: tensor<3x3x1x2xf32>) -> tensor<1x5x5x2xf32> {\n"
      "  %0 = stablehlo.convolution(%x, %k) dim_numbers = [b, 0, 1, f]x[0, 1, i, o]->[b, 0, 1, f],"
      " window = {stride = [1, 1], pad = [[1, 1], [1, 1]]} {batch_group_count = 1 : i64,"
      " feature_group_count = 1 : i64} : (tensor<1x5x5x1xf32>, tensor<3x3x1x2xf32>) ->"
      " tensor<1x5x5x2xf32>\n"
      "  return %0 : tensor<1x5x5x2xf32>\n}\n");
  CHECK_EQ_INT(c.flops, 676);
  CHECK_EQ_INT(c.bytes_accessed, 372);
}

/* Strided, grouped convolution: 2 * (3/3) * 6 * 2 * (3*3 valid pairs)^2 =
 * 1944; XLA:CPU: 1944 flops, 1824 bytes. */
TEST(convolution_strided_grouped) {
  cost_counts c = totals(
      "func.func @main(%x: tensor<2x7x7x3xf32>, %k: tensor<3x3x1x6xf32>) -> tensor<2x3x3x6xf32> {\n"
      "  %0 = stablehlo.convolution(%x, %k) dim_numbers = [b, 0, 1, f]x[0, 1, i, o]->[b, 0, 1, f],"
      " window = {stride = [2, 2], pad = [[0, 0], [0, 0]], rhs_dilate = [1, 1]}"
      " {batch_group_count = 1 : i64, feature_group_count = 3 : i64} : (tensor<2x7x7x3xf32>,"
      " tensor<3x3x1x6xf32>) -> tensor<2x3x3x6xf32>\n"
      "  return %0 : tensor<2x3x3x6xf32>\n}\n");
  CHECK_EQ_INT(c.flops, 1944);
  CHECK_EQ_INT(c.bytes_accessed, 1824);
}

static char *reduce_text(int rows, int cols, const char *ty, const char *body) {
  char *t = malloc(1024);
  if (t)
    snprintf(t, 1024,
             "func.func @main(%%x: tensor<%dx%dx%s>) -> tensor<%dx%s> {\n"
             "  %%c = stablehlo.constant dense<0.0> : tensor<%s>\n"
             "  %%0 = stablehlo.reduce(%%x init: %%c) applies stablehlo.%s across dimensions = [1]"
             " : (tensor<%dx%dx%s>, tensor<%s>) -> tensor<%dx%s>\n"
             "  return %%0 : tensor<%dx%s>\n}\n",
             rows, cols, ty, rows, ty, ty, body, rows, cols, ty, ty, rows, ty, rows, ty);
  return t;
}

/* reduce: (inputs - outputs) adds when no reduced dim is over 32; XLA:CPU's
 * tree rewrite of longer ones costs what it measured: f32[16,40] -> 1008
 * (a padded 32-window: 31 * 32 + 16), f32[64,128] -> 8128 (offloaded, not
 * rewritten), f32[1,3000] -> 3009 (rewritten twice), bf16[16,40] -> 1008
 * adds (XLA:CPU's bf16 reports 3680 because it also counts the converts of
 * its bf16 normalisation; the applications are the same). */
TEST(reduce_and_tree_rewrite) {
  static const struct { int r, c; const char *ty; double flops; } k[] = {
      {4, 8, "f32", 28}, {16, 40, "f32", 1008}, {64, 128, "f32", 8128},
      {1, 3000, "f32", 3009}, {64, 64, "f32", 4032}, {16, 128, "f32", 2032},
      {32, 64, "f64", 2016}, {16, 40, "bf16", 1008},
  };
  for (size_t i = 0; i < sizeof k / sizeof k[0]; i++) {
    char *t = reduce_text(k[i].r, k[i].c, k[i].ty, "add");
    CHECK(t != NULL);
    if (!t) return;
    cost_counts c = totals(t);
    if (c.flops != k[i].flops)
      fprintf(stderr, "reduce %dx%dx%s: %.0f flops, want %.0f\n", k[i].r, k[i].c, k[i].ty,
              c.flops, k[i].flops);
    CHECK(c.flops == k[i].flops);
    free(t);
  }
}

/* while: the body and the condition count once (XLA does not use the trip
 * count): 1000 multiplies + 1 add + 1 compare; XLA:CPU: 1002 flops. */
TEST(while_counts_body_once) {
  cost_counts c = totals(
      "func.func @main(%x: tensor<1000xf32>) -> tensor<1000xf32> {\n"
      "  %c0 = stablehlo.constant dense<0> : tensor<i32>\n"
      "  %c1 = stablehlo.constant dense<1> : tensor<i32>\n"
      "  %c5 = stablehlo.constant dense<5> : tensor<i32>\n"
      "  %r:2 = stablehlo.while(%i = %c0, %v = %x) : tensor<i32>, tensor<1000xf32>\n"
      "   cond {\n"
      "    %p = stablehlo.compare LT, %i, %c5, SIGNED : (tensor<i32>, tensor<i32>) -> tensor<i1>\n"
      "    stablehlo.return %p : tensor<i1>\n"
      "  } do {\n"
      "    %n = stablehlo.add %i, %c1 : tensor<i32>\n"
      "    %m = stablehlo.multiply %v, %v : tensor<1000xf32>\n"
      "    stablehlo.return %n, %m : tensor<i32>, tensor<1000xf32>\n"
      "  }\n"
      "  return %r#1 : tensor<1000xf32>\n}\n");
  CHECK_EQ_INT(c.flops, 1002);
  CHECK_EQ_INT(c.transcendentals, 0);
}

/* softmax over rows of f32[2,8]: max (14) + subtract (16) + exp (16
 * transcendentals) + sum (14) + divide (16) = 60 flops. XLA:CPU reports 62:
 * its simplifier turns x / broadcast(s) into x * broadcast(1 / s), 2 more. */
TEST(softmax) {
  cost_counts c = totals(
      "func.func @main(%x: tensor<2x8xf32>) -> tensor<2x8xf32> {\n"
      "  %ninf = stablehlo.constant dense<0xFF800000> : tensor<f32>\n"
      "  %zero = stablehlo.constant dense<0.0> : tensor<f32>\n"
      "  %m = stablehlo.reduce(%x init: %ninf) applies stablehlo.maximum across dimensions = [1]"
      " : (tensor<2x8xf32>, tensor<f32>) -> tensor<2xf32>\n"
      "  %mb = stablehlo.broadcast_in_dim %m, dims = [0] : (tensor<2xf32>) -> tensor<2x8xf32>\n"
      "  %d = stablehlo.subtract %x, %mb : tensor<2x8xf32>\n"
      "  %e = stablehlo.exponential %d : tensor<2x8xf32>\n"
      "  %s = stablehlo.reduce(%e init: %zero) applies stablehlo.add across dimensions = [1]"
      " : (tensor<2x8xf32>, tensor<f32>) -> tensor<2xf32>\n"
      "  %sb = stablehlo.broadcast_in_dim %s, dims = [0] : (tensor<2xf32>) -> tensor<2x8xf32>\n"
      "  %y = stablehlo.divide %e, %sb : tensor<2x8xf32>\n"
      "  return %y : tensor<2x8xf32>\n}\n");
  CHECK_EQ_INT(c.flops, 60);
  CHECK_EQ_INT(c.transcendentals, 16);
}

/* logistic as XLA:CPU's LogisticExpander leaves it (3 flops + 1
 * transcendental an element); chlo.erf stays one transcendental (as XLA
 * keeps it); power is transcendental. XLA:CPU: 96 flops, 96
 * transcendentals for the three on f32[4,8]. */
TEST(transcendentals_and_logistic) {
  const char *text =
      "func.func @main(%x: tensor<4x8xf32>) -> (tensor<4x8xf32>, tensor<4x8xf32>, tensor<4x8xf32>) {\n"
      "  %0 = stablehlo.logistic %x : tensor<4x8xf32>\n"
      "  %1 = chlo.erf %x : tensor<4x8xf32> -> tensor<4x8xf32>\n"
      "  %2 = stablehlo.power %x, %x : tensor<4x8xf32>\n"
      "  return %0, %1, %2 : tensor<4x8xf32>, tensor<4x8xf32>, tensor<4x8xf32>\n}\n";
  hlo_module_ir *m;
  cost_report r;
  hlo_status st = analyse(text, false, &m, &r); /* chlo.erf kept, as XLA keeps it */
  CHECK(st == NULL);
  if (st) { hlo_status_print(st, stderr); hlo_status_free(st); }
  CHECK_EQ_INT(r.total.flops, 96);
  CHECK_EQ_INT(r.total.transcendentals, 96);
  /* rows: logistic, erf, power, and the 3-result return (a tuple: 24 bytes) */
  CHECK_EQ_INT(r.num_rows, 4);
  if (r.num_rows == 4) {
    CHECK(r.rows[0].op->opcode == OP_LOGISTIC);
    CHECK_EQ_INT(r.rows[0].cost.flops, 96);
    CHECK_EQ_INT(r.rows[0].cost.bytes_accessed, 256);
    CHECK_EQ_INT(r.rows[3].cost.bytes_accessed, 24);
  }
  cost_report_free(&r);
  module_free(m);
}

/* Other chlo ops must be legalized first: a located error. */
TEST(chlo_needs_legalization) {
  hlo_module_ir *m;
  cost_report r;
  hlo_status st = analyse(
      "func.func @main(%x: tensor<4xf32>) -> tensor<4xf32> {\n"
      "  %0 = chlo.lgamma %x : tensor<4xf32> -> tensor<4xf32>\n"
      "  return %0 : tensor<4xf32>\n}\n",
      false, &m, &r);
  CHECK(st != NULL);
  if (st) {
    CHECK(hlo_status_code_of(st) == HLO_UNIMPLEMENTED);
    CHECK(status_loc(st) && status_loc(st)->line == 2);
    hlo_status_free(st);
  }
  CHECK(r.num_rows == 0 && r.rows == NULL);
  module_free(m);
}

/* if/case: each count's maximum over the branches; func.call: the callee's
 * cost, with its ops as rows one level deeper; dead ops are not counted. */
TEST(case_call_and_dead_code) {
  const char *text =
      "func.func @main(%i: tensor<i32>, %x: tensor<8xf32>) -> tensor<8xf32> {\n"
      "  %dead = stablehlo.multiply %x, %x : tensor<8xf32>\n"
      "  %0 = \"stablehlo.case\"(%i) ({\n"
      "    %a = stablehlo.add %x, %x : tensor<8xf32>\n"
      "    stablehlo.return %a : tensor<8xf32>\n"
      "  }, {\n"
      "    %e = stablehlo.exponential %x : tensor<8xf32>\n"
      "    %b = stablehlo.multiply %e, %x : tensor<8xf32>\n"
      "    %b2 = stablehlo.multiply %b, %x : tensor<8xf32>\n"
      "    stablehlo.return %b2 : tensor<8xf32>\n"
      "  }) : (tensor<i32>) -> tensor<8xf32>\n"
      "  %1 = func.call @sq(%0) : (tensor<8xf32>) -> tensor<8xf32>\n"
      "  return %1 : tensor<8xf32>\n}\n"
      "func.func private @sq(%y: tensor<8xf32>) -> tensor<8xf32> {\n"
      "  %0 = stablehlo.multiply %y, %y : tensor<8xf32>\n"
      "  return %0 : tensor<8xf32>\n}\n";
  hlo_module_ir *m;
  cost_report r;
  hlo_status st = analyse(text, true, &m, &r);
  CHECK(st == NULL);
  if (st) { hlo_status_print(st, stderr); hlo_status_free(st); }
  /* case: max(8, 16) flops, max(0, 8) transcendentals; call: 8 flops */
  CHECK_EQ_INT(r.total.flops, 24);
  CHECK_EQ_INT(r.total.transcendentals, 8);
  int found_call = 0, found_dead = 0;
  for (uint32_t k = 0; k < r.num_rows; k++) {
    const cost_row *w = &r.rows[k];
    if (w->op->opcode == OP_FUNC_CALL) {
      found_call = 1;
      CHECK_EQ_INT(w->cost.flops, 8);
      CHECK(k + 1 < r.num_rows && r.rows[k + 1].depth == 1 && r.rows[k + 1].parent == (int32_t)k);
    }
    if (w->op->loc.line == 2) found_dead = 1;
  }
  CHECK(found_call);
  CHECK(!found_dead);
  char label[64];
  for (uint32_t k = 0; k < r.num_rows; k++)
    if (r.rows[k].op->opcode == OP_FUNC_CALL)
      CHECK_STR(cost_op_label(r.rows[k].op, label, sizeof label), "func.call @sq");
  cost_report_free(&r);
  module_free(m);
}

/* custom_call: unknown, -1 flops and -1 bytes as XLA reports; a sharding
 * annotation costs nothing. JSON carries JAX's key names. */
TEST(custom_call_and_json) {
  const char *text =
      "func.func @main(%x: tensor<4xf32>) -> tensor<4xf32> {\n"
      "  %s = stablehlo.custom_call @Sharding(%x) {mhlo.sharding = \"{replicated}\"}"
      " : (tensor<4xf32>) -> tensor<4xf32>\n"
      "  %0 = stablehlo.custom_call @my_kernel(%s) : (tensor<4xf32>) -> tensor<4xf32>\n"
      "  %1 = stablehlo.add %0, %0 : tensor<4xf32>\n"
      "  return %1 : tensor<4xf32>\n}\n";
  hlo_module_ir *m;
  cost_report r;
  hlo_status st = analyse(text, true, &m, &r);
  CHECK(st == NULL);
  if (st) { hlo_status_print(st, stderr); hlo_status_free(st); }
  CHECK_EQ_INT(r.num_unknown, 1);
  CHECK_EQ_INT(r.total.flops, 4 - 1);
  CHECK_EQ_INT(r.total.bytes_accessed, 48 - 1);
  char *buf = NULL;
  size_t len = 0;
  FILE *f = open_memstream(&buf, &len);
  CHECK(f != NULL);
  if (f) {
    hlo_status ws = cost_report_write_json(&r, true, f);
    CHECK(ws == NULL);
    hlo_status_free(ws);
    fclose(f);
    CHECK(strstr(buf, "\"flops\": 3, \"transcendentals\": 0, \"bytes accessed\": 47") != NULL);
    CHECK(strstr(buf, "\"op\": \"custom_call @my_kernel\", \"loc\": \"t.mlir:3:8\"") != NULL);
    CHECK(strstr(buf, "Sharding") == NULL); /* no cost: left out with skip_zero */
    free(buf);
  }
  cost_report_free(&r);
  module_free(m);
}

/* Dynamic shapes must be refined first. */
TEST(dynamic_needs_refinement) {
  hlo_module_ir *m;
  cost_report r;
  hlo_status st = analyse(
      "func.func @main(%x: tensor<?xf32>) -> tensor<?xf32> {\n"
      "  %0 = stablehlo.add %x, %x : tensor<?xf32>\n"
      "  return %0 : tensor<?xf32>\n}\n",
      true, &m, &r);
  CHECK(st != NULL && hlo_status_code_of(st) == HLO_UNIMPLEMENTED);
  hlo_status_free(st);
  module_free(m);
}

/* Out of memory on every allocation in turn: an error, never a crash. */
TEST(out_of_memory) {
  const char *text =
      "func.func @main(%x: tensor<8xf32>) -> tensor<8xf32> {\n"
      "  %0 = func.call @sq(%x) : (tensor<8xf32>) -> tensor<8xf32>\n"
      "  return %0 : tensor<8xf32>\n}\n"
      "func.func private @sq(%y: tensor<8xf32>) -> tensor<8xf32> {\n"
      "  %0 = stablehlo.multiply %y, %y : tensor<8xf32>\n"
      "  return %0 : tensor<8xf32>\n}\n";
  hlo_status st;
  hlo_module_ir *m = tl_parse_text("t.mlir", text, 0, &st);
  CHECK(st == NULL);
  if (st) { hlo_status_free(st); return; }
  int ok = 0;
  for (long n = 1; n < 64; n++) {
    cost_report r;
    hlo_fail_alloc_after = n;
    st = cost_analysis(m, NULL, &r);
    hlo_fail_alloc_after = 0;
    if (!st) {
      ok = 1;
      CHECK_EQ_INT(r.total.flops, 8);
      cost_report_free(&r);
      break;
    }
    CHECK(hlo_status_code_of(st) == HLO_RESOURCE_EXHAUSTED);
    CHECK(r.rows == NULL);
    hlo_status_free(st);
  }
  CHECK(ok);
  module_free(m);
}

TEST_MAIN()
