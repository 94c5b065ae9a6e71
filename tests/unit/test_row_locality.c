/* test_row_locality.c — the row-locality analysis (src/passes/row_locality.c)
 * behind `hlo run --pad-to-bucket`: each rule both ways, on small programs
 * whose first argument (tensor<?x...>) is padded unless a test says. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ir/ir.h"
#include "passes/row_locality.h"
#include "test.h"
#include "testlib.h"

typedef struct verdict {
  bool ran, ok;
  char op[64];           /* the mixing op's name without dialect, "" when none */
  unsigned line;         /* its line */
  char why[160];
  int result;
  int nres;
  rl_result_kind kinds[8];
  int cls[8];
} verdict;

/* Runs the analysis on @main of `text`, with arguments padded by `classes`
 * (one char per argument: '0'/'1' the class, '-' not padded). */
static verdict analyse_cls(const char *text, const char *classes, bool checked) {
  verdict v;
  memset(&v, 0, sizeof v);
  hlo_status st = NULL;
  hlo_module_ir *m = tl_parse_text("t.mlir", text, TL_VERIFY, &st);
  if (!m) {
    hlo_status_print(st, stderr);
    hlo_status_free(st);
    return v;
  }
  const hlo_func *f = module_entry(m, NULL);
  int cls[16];
  for (uint32_t i = 0; i < f->num_args && i < 16; i++)
    cls[i] = classes[i] == '-' || !classes[i] ? -1 : classes[i] - '0';
  row_locality rl = {.kinds = v.kinds, .result_class = v.cls};
  v.ran = f->num_results <= 8 && row_locality_analyse(m, f, cls, checked, &rl);
  v.ok = rl.ok;
  v.result = rl.result;
  v.nres = (int)f->num_results;
  if (rl.op) {
    const char *n = op_name(rl.op->opcode), *dot = strchr(n, '.');
    snprintf(v.op, sizeof v.op, "%s", dot ? dot + 1 : n);
    v.line = rl.op->loc.line;
  }
  if (rl.why) snprintf(v.why, sizeof v.why, "%s", rl.why);
  module_free(m);
  return v;
}

static verdict analyse(const char *text) { return analyse_cls(text, "0", true); }

#define EXPECT_OK(v, kind0)                  \
  do {                                       \
    CHECK((v).ran);                          \
    CHECK((v).ok);                           \
    CHECK_EQ_INT((v).kinds[0], (kind0));     \
  } while (0)
#define EXPECT_MIX(v, opname, whytext)       \
  do {                                       \
    CHECK((v).ran);                          \
    CHECK(!(v).ok);                          \
    CHECK_STR((v).op, (opname));             \
    CHECK(strstr((v).why, (whytext)) != NULL); \
  } while (0)

#define FN(sig, body) "func.func @main" sig " {\n" body "}\n"

/* ---------------------------------------------------------- elementwise */
TEST(elementwise_rows) {
  verdict v = analyse(FN("(%x: tensor<?x4xf32>) -> tensor<?x4xf32>",
                         "  %0 = stablehlo.exponential %x : tensor<?x4xf32>\n"
                         "  %1 = stablehlo.multiply %0, %x : tensor<?x4xf32>\n"
                         "  %c = stablehlo.constant dense<1.0> : tensor<f32>\n"
                         "  %2 = stablehlo.clamp %c, %1, %c : (tensor<f32>, tensor<?x4xf32>, tensor<f32>) -> tensor<?x4xf32>\n"
                         "  return %2 : tensor<?x4xf32>\n"));
  EXPECT_OK(v, RL_RESULT_ROWS);
  CHECK_EQ_INT(v.cls[0], 0);
}

TEST(elementwise_two_classes_mix) {
  verdict v = analyse_cls(FN("(%x: tensor<?x4xf32>, %y: tensor<?x4xf32>) -> tensor<?x4xf32>",
                             "  %0 = stablehlo.add %x, %y : tensor<?x4xf32>\n"
                             "  return %0 : tensor<?x4xf32>\n"), "01", true);
  EXPECT_MIX(v, "add", "rows of different sizes");
  v = analyse_cls(FN("(%x: tensor<?x4xf32>, %y: tensor<?x4xf32>) -> tensor<?x4xf32>",
                     "  %0 = stablehlo.add %x, %y : tensor<?x4xf32>\n"
                     "  return %0 : tensor<?x4xf32>\n"), "00", true);
  EXPECT_OK(v, RL_RESULT_ROWS);
}

/* x / N (a mean's divisor) mixes; N used as x's own shape does not. */
TEST(count_as_data_mixes_count_as_shape_does_not) {
  verdict v = analyse(FN("(%x: tensor<?x4xf32>) -> tensor<?x4xf32>",
      "  %c4 = stablehlo.constant dense<[4]> : tensor<1xi32>\n"
      "  %n = stablehlo.get_dimension_size %x, dim = 0 : (tensor<?x4xf32>) -> tensor<i32>\n"
      "  %n1 = stablehlo.reshape %n : (tensor<i32>) -> tensor<1xi32>\n"
      "  %s = stablehlo.concatenate %n1, %c4, dim = 0 : (tensor<1xi32>, tensor<1xi32>) -> tensor<2xi32>\n"
      "  %one = stablehlo.constant dense<1.0> : tensor<f32>\n"
      "  %b = stablehlo.dynamic_broadcast_in_dim %one, %s, dims = [] : (tensor<f32>, tensor<2xi32>) -> tensor<?x4xf32>\n"
      "  %y = stablehlo.add %x, %b : tensor<?x4xf32>\n"
      "  return %y : tensor<?x4xf32>\n"));
  EXPECT_OK(v, RL_RESULT_ROWS);
  v = analyse(FN("(%x: tensor<?x4xf32>) -> tensor<?x4xf32>",
      "  %c4 = stablehlo.constant dense<[4]> : tensor<1xi32>\n"
      "  %n = stablehlo.get_dimension_size %x, dim = 0 : (tensor<?x4xf32>) -> tensor<i32>\n"
      "  %n1 = stablehlo.reshape %n : (tensor<i32>) -> tensor<1xi32>\n"
      "  %s = stablehlo.concatenate %n1, %c4, dim = 0 : (tensor<1xi32>, tensor<1xi32>) -> tensor<2xi32>\n"
      "  %f = stablehlo.convert %n : (tensor<i32>) -> tensor<f32>\n"
      "  %b = stablehlo.dynamic_broadcast_in_dim %f, %s, dims = [] : (tensor<f32>, tensor<2xi32>) -> tensor<?x4xf32>\n"
      "  %y = stablehlo.divide %x, %b : tensor<?x4xf32>\n"
      "  return %y : tensor<?x4xf32>\n"));
  EXPECT_MIX(v, "dynamic_broadcast_in_dim", "computed from their count");
  /* N/2 as a shape (JAX's 2*b reshape) mixes */
  v = analyse(FN("(%x: tensor<?xf32>) -> tensor<2x?xf32>",
      "  %c2 = stablehlo.constant dense<2> : tensor<i32>\n"
      "  %c2v = stablehlo.constant dense<[2]> : tensor<1xi32>\n"
      "  %n = stablehlo.get_dimension_size %x, dim = 0 : (tensor<?xf32>) -> tensor<i32>\n"
      "  %h = stablehlo.divide %n, %c2 : tensor<i32>\n"
      "  %h1 = stablehlo.reshape %h : (tensor<i32>) -> tensor<1xi32>\n"
      "  %s = stablehlo.concatenate %c2v, %h1, dim = 0 : (tensor<1xi32>, tensor<1xi32>) -> tensor<2xi32>\n"
      "  %y = stablehlo.dynamic_reshape %x, %s : (tensor<?xf32>, tensor<2xi32>) -> tensor<2x?xf32>\n"
      "  return %y : tensor<2x?xf32>\n"));
  EXPECT_MIX(v, "dynamic_reshape", "computed from their count");
}

TEST(count_returned_mixes) {
  verdict v = analyse(FN("(%x: tensor<?x4xf32>) -> tensor<i32>",
      "  %n = stablehlo.get_dimension_size %x, dim = 0 : (tensor<?x4xf32>) -> tensor<i32>\n"
      "  return %n : tensor<i32>\n"));
  CHECK(v.ran && !v.ok);
  CHECK_EQ_INT(v.result, 0);
  CHECK(strstr(v.why, "count") != NULL);
  /* the size of another dimension is not the count */
  v = analyse(FN("(%x: tensor<?x4xf32>) -> tensor<i32>",
      "  %n = stablehlo.get_dimension_size %x, dim = 1 : (tensor<?x4xf32>) -> tensor<i32>\n"
      "  return %n : tensor<i32>\n"));
  EXPECT_OK(v, RL_RESULT_CLEAN);
}

/* ------------------------------------------------------------ broadcast */
TEST(broadcast_in_dim) {
  verdict v = analyse(FN("(%x: tensor<?xf32>) -> tensor<4x?xf32>",
      "  %0 = stablehlo.broadcast_in_dim %x, dims = [1] : (tensor<?xf32>) -> tensor<4x?xf32>\n"
      "  %1 = stablehlo.transpose %0, dims = [1, 0] : (tensor<4x?xf32>) -> tensor<?x4xf32>\n"
      "  %2 = stablehlo.transpose %1, dims = [1, 0] : (tensor<?x4xf32>) -> tensor<4x?xf32>\n"
      "  return %2 : tensor<4x?xf32>\n"));
  CHECK(v.ran && !v.ok); /* rows on dim 1 of the result: cannot be cut back */
  CHECK_EQ_INT(v.result, 0);
  CHECK(strstr(v.why, "other than 0") != NULL);
  v = analyse(FN("(%x: tensor<?xf32>) -> tensor<?x4xf32>",
      "  %0 = stablehlo.broadcast_in_dim %x, dims = [1] : (tensor<?xf32>) -> tensor<4x?xf32>\n"
      "  %1 = stablehlo.transpose %0, dims = [1, 0] : (tensor<4x?xf32>) -> tensor<?x4xf32>\n"
      "  return %1 : tensor<?x4xf32>\n"));
  EXPECT_OK(v, RL_RESULT_ROWS);
}

TEST(dynamic_iota_with_the_count) {
  verdict v = analyse(FN("(%x: tensor<?xf32>) -> tensor<?xf32>",
      "  %n = stablehlo.get_dimension_size %x, dim = 0 : (tensor<?xf32>) -> tensor<i32>\n"
      "  %n1 = stablehlo.reshape %n : (tensor<i32>) -> tensor<1xi32>\n"
      "  %i = stablehlo.dynamic_iota %n1, dim = 0 : (tensor<1xi32>) -> tensor<?xf32>\n"
      "  %y = stablehlo.add %x, %i : tensor<?xf32>\n"
      "  return %y : tensor<?xf32>\n"));
  EXPECT_OK(v, RL_RESULT_ROWS);
  v = analyse(FN("(%x: tensor<?xf32>) -> tensor<?xf32>",
      "  %one = stablehlo.constant dense<1> : tensor<i32>\n"
      "  %n = stablehlo.get_dimension_size %x, dim = 0 : (tensor<?xf32>) -> tensor<i32>\n"
      "  %m = stablehlo.add %n, %one : tensor<i32>\n"
      "  %n1 = stablehlo.reshape %m : (tensor<i32>) -> tensor<1xi32>\n"
      "  %i = stablehlo.dynamic_iota %n1, dim = 0 : (tensor<1xi32>) -> tensor<?xf32>\n"
      "  return %i : tensor<?xf32>\n"));
  EXPECT_MIX(v, "dynamic_iota", "computed from their count");
}

/* -------------------------------------------------------------- reshape */
TEST(reshape_keeps_leading_dim) {
  verdict v = analyse(FN("(%x: tensor<?x4xf32>) -> tensor<?x2x2xf32>",
      "  %0 = stablehlo.reshape %x : (tensor<?x4xf32>) -> tensor<?x2x2xf32>\n"
      "  return %0 : tensor<?x2x2xf32>\n"));
  EXPECT_OK(v, RL_RESULT_ROWS);
  v = analyse(FN("(%x: tensor<?x4xf32>) -> tensor<?xf32>",
      "  %0 = stablehlo.reshape %x : (tensor<?x4xf32>) -> tensor<?xf32>\n"
      "  return %0 : tensor<?xf32>\n"));
  EXPECT_MIX(v, "reshape", "reshapes across them");
}

/* ---------------------------------------------------------- dot_general */
TEST(dot_general_free_dim) {
  verdict v = analyse_cls(FN("(%x: tensor<?x4xf32>, %w: tensor<4x3xf32>) -> tensor<?x3xf32>",
      "  %0 = stablehlo.dot_general %x, %w, contracting_dims = [1] x [0] : (tensor<?x4xf32>, tensor<4x3xf32>) -> tensor<?x3xf32>\n"
      "  return %0 : tensor<?x3xf32>\n"), "0-", true);
  EXPECT_OK(v, RL_RESULT_ROWS);
  v = analyse(FN("(%x: tensor<?x4xf32>) -> tensor<4x4xf32>",
      "  %0 = stablehlo.dot_general %x, %x, contracting_dims = [0] x [0] : (tensor<?x4xf32>, tensor<?x4xf32>) -> tensor<4x4xf32>\n"
      "  return %0 : tensor<4x4xf32>\n"));
  EXPECT_MIX(v, "dot_general", "contracts over them");
  /* x * x^T: every row against every row */
  v = analyse(FN("(%x: tensor<?x4xf32>) -> tensor<?x?xf32>",
      "  %0 = stablehlo.dot_general %x, %x, contracting_dims = [1] x [1] : (tensor<?x4xf32>, tensor<?x4xf32>) -> tensor<?x?xf32>\n"
      "  return %0 : tensor<?x?xf32>\n"));
  EXPECT_MIX(v, "dot_general", "every row");
}

TEST(dot_general_batch_dim) {
  verdict v = analyse_cls(FN("(%x: tensor<?x3x4xf32>, %y: tensor<?x4x5xf32>) -> tensor<?x3x5xf32>",
      "  %0 = stablehlo.dot_general %x, %y, batching_dims = [0] x [0], contracting_dims = [2] x [1] : (tensor<?x3x4xf32>, tensor<?x4x5xf32>) -> tensor<?x3x5xf32>\n"
      "  return %0 : tensor<?x3x5xf32>\n"), "00", true);
  EXPECT_OK(v, RL_RESULT_ROWS);
  v = analyse_cls(FN("(%x: tensor<?x3x4xf32>, %y: tensor<?x4x5xf32>) -> tensor<?x3x5xf32>",
      "  %0 = stablehlo.dot_general %x, %y, batching_dims = [0] x [0], contracting_dims = [2] x [1] : (tensor<?x3x4xf32>, tensor<?x4x5xf32>) -> tensor<?x3x5xf32>\n"
      "  return %0 : tensor<?x3x5xf32>\n"), "0-", true);
  EXPECT_MIX(v, "dot_general", "batch dimension against an unpadded operand");
}

/* ----------------------------------------------------- reduce and friends */
TEST(reduce_other_dim_vs_row_dim) {
  verdict v = analyse(FN("(%x: tensor<?x4xf32>) -> tensor<?xf32>",
      "  %z = stablehlo.constant dense<0.0> : tensor<f32>\n"
      "  %0 = stablehlo.reduce(%x init: %z) applies stablehlo.add across dimensions = [1] : (tensor<?x4xf32>, tensor<f32>) -> tensor<?xf32>\n"
      "  return %0 : tensor<?xf32>\n"));
  EXPECT_OK(v, RL_RESULT_ROWS);
  v = analyse(FN("(%x: tensor<?x4xf32>) -> tensor<4xf32>",
      "  %z = stablehlo.constant dense<0.0> : tensor<f32>\n"
      "  %0 = stablehlo.reduce(%x init: %z) applies stablehlo.add across dimensions = [0] : (tensor<?x4xf32>, tensor<f32>) -> tensor<4xf32>\n"
      "  return %0 : tensor<4xf32>\n"));
  EXPECT_MIX(v, "reduce", "sums over them");
  CHECK_EQ_INT(v.line, 3);
  /* an unpadded argument may be summed over */
  v = analyse_cls(FN("(%x: tensor<?x4xf32>) -> tensor<4xf32>",
      "  %z = stablehlo.constant dense<0.0> : tensor<f32>\n"
      "  %0 = stablehlo.reduce(%x init: %z) applies stablehlo.add across dimensions = [0] : (tensor<?x4xf32>, tensor<f32>) -> tensor<4xf32>\n"
      "  return %0 : tensor<4xf32>\n"), "-", true);
  EXPECT_OK(v, RL_RESULT_CLEAN);
}

TEST(reduce_window) {
  verdict v = analyse(FN("(%x: tensor<?x4xf32>) -> tensor<?x3xf32>",
      "  %z = stablehlo.constant dense<0.0> : tensor<f32>\n"
      "  %0 = \"stablehlo.reduce_window\"(%x, %z) ({\n"
      "  ^bb0(%a: tensor<f32>, %b: tensor<f32>):\n"
      "    %s = stablehlo.add %a, %b : tensor<f32>\n"
      "    stablehlo.return %s : tensor<f32>\n"
      "  }) {window_dimensions = array<i64: 1, 2>} : (tensor<?x4xf32>, tensor<f32>) -> tensor<?x3xf32>\n"
      "  return %0 : tensor<?x3xf32>\n"));
  EXPECT_OK(v, RL_RESULT_ROWS);
  v = analyse(FN("(%x: tensor<?x4xf32>) -> tensor<?x4xf32>",
      "  %z = stablehlo.constant dense<0.0> : tensor<f32>\n"
      "  %0 = \"stablehlo.reduce_window\"(%x, %z) ({\n"
      "  ^bb0(%a: tensor<f32>, %b: tensor<f32>):\n"
      "    %s = stablehlo.add %a, %b : tensor<f32>\n"
      "    stablehlo.return %s : tensor<f32>\n"
      "  }) {window_dimensions = array<i64: 2, 1>, padding = dense<[[1, 0], [0, 0]]> : tensor<2x2xi64>} : (tensor<?x4xf32>, tensor<f32>) -> tensor<?x4xf32>\n"
      "  return %0 : tensor<?x4xf32>\n"));
  EXPECT_MIX(v, "reduce_window", "window across them");
}

TEST(sort_dims) {
  const char *body =
      "  %0 = \"stablehlo.sort\"(%x) ({\n"
      "  ^bb0(%a: tensor<f32>, %b: tensor<f32>):\n"
      "    %c = stablehlo.compare LT, %a, %b : (tensor<f32>, tensor<f32>) -> tensor<i1>\n"
      "    stablehlo.return %c : tensor<i1>\n"
      "  }) {dimension = %d : i64} : (tensor<?x4xf32>) -> tensor<?x4xf32>\n"
      "  return %0 : tensor<?x4xf32>\n";
  char text[1024], b[800];
  for (int d = 0; d < 2; d++) {
    const char *p = strstr(body, "%d");
    snprintf(b, sizeof b, "%.*s%d%s", (int)(p - body), body, d, p + 2);
    snprintf(text, sizeof text, "func.func @main(%%x: tensor<?x4xf32>) -> tensor<?x4xf32> {\n%s}\n", b);
    verdict v = analyse(text);
    if (d == 1) EXPECT_OK(v, RL_RESULT_ROWS);
    else EXPECT_MIX(v, "sort", "sorts across them");
  }
}

/* -------------------------------------------------- slice, pad, concatenate */
TEST(slice_pad_concatenate) {
  verdict v = analyse(FN("(%x: tensor<?x4xf32>) -> tensor<?x6xf32>",
      "  %z = stablehlo.constant dense<0.0> : tensor<f32>\n"
      "  %0 = stablehlo.pad %x, %z, low = [0, 1], high = [0, 1], interior = [0, 0] : (tensor<?x4xf32>, tensor<f32>) -> tensor<?x6xf32>\n"
      "  return %0 : tensor<?x6xf32>\n"));
  EXPECT_OK(v, RL_RESULT_ROWS);
  v = analyse(FN("(%x: tensor<?x4xf32>) -> tensor<?x4xf32>",
      "  %z = stablehlo.constant dense<0.0> : tensor<f32>\n"
      "  %0 = stablehlo.pad %x, %z, low = [1, 0], high = [0, 0], interior = [0, 0] : (tensor<?x4xf32>, tensor<f32>) -> tensor<?x4xf32>\n"
      "  return %0 : tensor<?x4xf32>\n"));
  EXPECT_MIX(v, "pad", "pads along them");
  v = analyse(FN("(%x: tensor<?x4xf32>) -> tensor<?x8xf32>",
      "  %0 = stablehlo.concatenate %x, %x, dim = 1 : (tensor<?x4xf32>, tensor<?x4xf32>) -> tensor<?x8xf32>\n"
      "  return %0 : tensor<?x8xf32>\n"));
  EXPECT_OK(v, RL_RESULT_ROWS);
  v = analyse(FN("(%x: tensor<?x4xf32>) -> tensor<?x4xf32>",
      "  %0 = stablehlo.concatenate %x, %x, dim = 0 : (tensor<?x4xf32>, tensor<?x4xf32>) -> tensor<?x4xf32>\n"
      "  return %0 : tensor<?x4xf32>\n"));
  EXPECT_MIX(v, "concatenate", "concatenates along them");
  v = analyse(FN("(%x: tensor<?x4xf32>) -> tensor<2x4xf32>",
      "  %0 = \"stablehlo.slice\"(%x) {start_indices = array<i64: 0, 0>, limit_indices = array<i64: 2, 4>, strides = array<i64: 1, 1>} : (tensor<?x4xf32>) -> tensor<2x4xf32>\n"
      "  return %0 : tensor<2x4xf32>\n"));
  EXPECT_MIX(v, "slice", "slices along them");
}

TEST(reverse) {
  verdict v = analyse(FN("(%x: tensor<?x4xf32>) -> tensor<?x4xf32>",
      "  %0 = stablehlo.reverse %x, dims = [1] : tensor<?x4xf32>\n"
      "  return %0 : tensor<?x4xf32>\n"));
  EXPECT_OK(v, RL_RESULT_ROWS);
  v = analyse(FN("(%x: tensor<?x4xf32>) -> tensor<?x4xf32>",
      "  %0 = stablehlo.reverse %x, dims = [0] : tensor<?x4xf32>\n"
      "  return %0 : tensor<?x4xf32>\n"));
  EXPECT_MIX(v, "reverse", "reverses them");
}

/* ------------------------------------------------- opaque ops and control */
TEST(gather_and_custom_call_mix) {
  verdict v = analyse(FN("(%x: tensor<?x4xf32>) -> tensor<?x4xf32>",
      "  %0 = stablehlo.custom_call @foo(%x) : (tensor<?x4xf32>) -> tensor<?x4xf32>\n"
      "  return %0 : tensor<?x4xf32>\n"));
  EXPECT_MIX(v, "custom_call", "opaque custom_call");
  v = analyse(FN("(%x: tensor<?x4xf32>, %w: tensor<4xf32>) -> tensor<?x4xf32>",
      "  %0 = stablehlo.custom_call @foo(%w) : (tensor<4xf32>) -> tensor<4xf32>\n"
      "  %1 = stablehlo.broadcast_in_dim %0, dims = [1] : (tensor<4xf32>) -> tensor<4x4xf32>\n"
      "  return %x : tensor<?x4xf32>\n"));
  EXPECT_OK(v, RL_RESULT_ROWS); /* on unpadded values only */
}

TEST(shape_assertion_only_when_checked) {
  const char *t = FN("(%x: tensor<?x4xf32>) -> tensor<?x4xf32>",
      "  %one = stablehlo.constant dense<1> : tensor<i32>\n"
      "  %n = stablehlo.get_dimension_size %x, dim = 0 : (tensor<?x4xf32>) -> tensor<i32>\n"
      "  %ok = stablehlo.compare GE, %n, %one, SIGNED : (tensor<i32>, tensor<i32>) -> tensor<i1>\n"
      "  stablehlo.custom_call @shape_assertion(%ok, %n) {error_message = \"b >= 1\", has_side_effect = true} : (tensor<i1>, tensor<i32>) -> ()\n"
      "  return %x : tensor<?x4xf32>\n");
  verdict v = analyse_cls(t, "0", true);
  EXPECT_OK(v, RL_RESULT_ROWS);
  v = analyse_cls(t, "0", false);
  EXPECT_MIX(v, "custom_call", "shape assertion");
}

#define LOOP(V, T)                                                                  \
  "  %c0 = stablehlo.constant dense<0> : tensor<i32>\n"                              \
  "  %c1 = stablehlo.constant dense<1> : tensor<i32>\n"                              \
  "  %c3 = stablehlo.constant dense<3> : tensor<i32>\n"                              \
  "  %r:2 = stablehlo.while(%i = %c0, %v = " V ") : tensor<i32>, " T "\n"            \
  "   cond {\n"                                                                     \
  "    %lt = stablehlo.compare LT, %i, %c3, SIGNED : (tensor<i32>, tensor<i32>) -> tensor<i1>\n" \
  "    stablehlo.return %lt : tensor<i1>\n"                                          \
  "  } do {\n"                                                                      \
  "    %i1 = stablehlo.add %i, %c1 : tensor<i32>\n"                                  \
  "    stablehlo.return %i1, %v : tensor<i32>, " T "\n"                              \
  "  }\n"

TEST(while_on_rows_mixes_on_clean_does_not) {
  verdict v = analyse(FN("(%x: tensor<?x4xf32>) -> tensor<?x4xf32>",
                         LOOP("%x", "tensor<?x4xf32>") "  return %r#1 : tensor<?x4xf32>\n"));
  EXPECT_MIX(v, "while", "control flow");
  v = analyse(FN("(%x: tensor<?x4xf32>, %w: tensor<4xf32>) -> (tensor<?x4xf32>, tensor<4xf32>)",
                 LOOP("%w", "tensor<4xf32>") "  return %x, %r#1 : tensor<?x4xf32>, tensor<4xf32>\n"));
  EXPECT_OK(v, RL_RESULT_ROWS);
  CHECK_EQ_INT(v.kinds[1], RL_RESULT_CLEAN);
}

/* ---------------------------------------------------------------- calls */
TEST(calls_are_followed) {
  verdict v = analyse(
      "func.func @main(%x: tensor<?x4xf32>) -> tensor<?x4xf32> {\n"
      "  %0 = func.call @f(%x) : (tensor<?x4xf32>) -> tensor<?x4xf32>\n"
      "  return %0 : tensor<?x4xf32>\n}\n"
      "func.func private @f(%a: tensor<?x4xf32>) -> tensor<?x4xf32> {\n"
      "  %0 = stablehlo.tanh %a : tensor<?x4xf32>\n"
      "  return %0 : tensor<?x4xf32>\n}\n");
  EXPECT_OK(v, RL_RESULT_ROWS);
  v = analyse(
      "func.func @main(%x: tensor<?x4xf32>) -> tensor<4xf32> {\n"
      "  %0 = func.call @f(%x) : (tensor<?x4xf32>) -> tensor<4xf32>\n"
      "  return %0 : tensor<4xf32>\n}\n"
      "func.func private @f(%a: tensor<?x4xf32>) -> tensor<4xf32> {\n"
      "  %z = stablehlo.constant dense<0.0> : tensor<f32>\n"
      "  %0 = stablehlo.reduce(%a init: %z) applies stablehlo.maximum across dimensions = [0] : (tensor<?x4xf32>, tensor<f32>) -> tensor<4xf32>\n"
      "  return %0 : tensor<4xf32>\n}\n");
  EXPECT_MIX(v, "reduce", "maximum over them");
  CHECK_EQ_INT(v.line, 7); /* inside the callee */
}

/* constants and iotas are not row-dependent; a static result is fine */
TEST(clean_results) {
  verdict v = analyse(FN("(%x: tensor<?x4xf32>) -> (tensor<?x4xf32>, tensor<3xi32>)",
      "  %0 = stablehlo.iota dim = 0 : tensor<3xi32>\n"
      "  return %x, %0 : tensor<?x4xf32>, tensor<3xi32>\n"));
  EXPECT_OK(v, RL_RESULT_ROWS);
  CHECK_EQ_INT(v.kinds[1], RL_RESULT_CLEAN);
}

TEST_MAIN()
