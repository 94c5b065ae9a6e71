/* test_interp_core.c — the interpreter's core, elementwise, control-flow and
 * check kernels.
 *
 * Unit tests build small programs as text, run them with interp_call and
 * look at the values. The corpus test runs every conformance file
 * ($HLO_SHARED or ../shared: conformance/interpret and conformance/testdata)
 * whose ops all belong to these kernels (decided by scanning op names), and
 * prints "passed N of M" with the failures; handpicked files must pass. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "interp/interp.h"
#include "parse/parse.h"
#include "support/arena.h"
#include "test.h"
#include "testlib.h"

/* Parses `text` as one module and runs its entry function with no
 * arguments; returns the status (NULL on success). */
static hlo_status run_text(const char *text) {
  tl_run r;
  hlo_status st = tl_run_text("test.mlir", text, 0, NULL, NULL, 0, &r);
  tl_run_free(&r);
  return st;
}

/* Runs `text` expecting success; prints the error otherwise. */
static bool runs_ok(const char *text) {
  hlo_status st = run_text(text);
  if (st) {
    hlo_status_print(st, stderr);
    hlo_status_free(st);
    return false;
  }
  return true;
}

/* Runs `text` expecting failure with `code`; true when it fails that way. */
static bool fails_with(const char *text, hlo_status_code code, const char *substr) {
  hlo_status st = run_text(text);
  bool ok = st && hlo_status_code_of(st) == code &&
            (!substr || strstr(hlo_status_message(st), substr));
  if (!ok && st) hlo_status_print(st, stderr);
  hlo_status_free(st);
  return ok;
}

/* ----------------------------------------------------------- unit tests */

TEST(tensor_basics) {
  arena a;
  arena_init(&a);
  int64_t dims[2] = {2, 3};
  hlo_type *t = type_tensor(&a, HLO_F32, 2, dims);
  tensor *x = tensor_new(t);
  CHECK(x != NULL);
  CHECK_EQ_INT(x->num_elems, 6);
  CHECK_EQ_INT(x->nbytes, 24);
  CHECK(tensor_retain(x) == x);
  CHECK_EQ_INT(x->refcount, 2);
  tensor_release(x);
  tensor *tup = NULL;
  hlo_status st = tensor_create_tuple(NULL, &x, 1, NULL, &tup);
  CHECK(st == NULL);
  CHECK_EQ_INT(x->refcount, 2);
  tensor_release(x);
  tensor_release(tup);
  int64_t huge[2] = {INT64_C(1) << 31, INT64_C(1) << 31};
  hlo_type *h = type_tensor(&a, HLO_F64, 2, huge);
  CHECK(tensor_new(h) == NULL);
  tensor *y = NULL;
  st = tensor_create(h, NULL, &y);
  CHECK(hlo_status_code_of(st) == HLO_RESOURCE_EXHAUSTED);
  hlo_status_free(st);
  arena_deinit(&a);
}

TEST(index_helpers) {
  int64_t dims[3] = {2, 3, 4}, idx[3] = {1, 2, 3}, back[3];
  CHECK_EQ_INT(index_linear(dims, 3, idx), 23);
  index_unlinear(dims, 3, 17, back);
  CHECK(back[0] == 1 && back[1] == 1 && back[2] == 1);
  int64_t it[3] = {0, 0, 0};
  int steps = 1;
  while (index_next(dims, 3, it)) steps++;
  CHECK_EQ_INT(steps, 24);
}

TEST(elementwise_int_edges) {
  CHECK(runs_ok("func.func @main() {\n"
                "  %a = stablehlo.constant dense<[7, -128, 5, -7]> : tensor<4xi8>\n"
                "  %b = stablehlo.constant dense<[0, -1, 2, 2]> : tensor<4xi8>\n"
                "  %d = stablehlo.divide %a, %b : tensor<4xi8>\n"
                "  check.expect_eq_const %d, dense<[-1, -128, 2, -3]> : tensor<4xi8>\n"
                "  %r = stablehlo.remainder %a, %b : tensor<4xi8>\n"
                "  check.expect_eq_const %r, dense<[7, 0, 1, -1]> : tensor<4xi8>\n"
                "  %s = stablehlo.constant dense<[8, 9, 1, 3]> : tensor<4xi8>\n"
                "  %l = stablehlo.shift_left %a, %s : tensor<4xi8>\n"
                "  check.expect_eq_const %l, dense<[0, 0, 10, -56]> : tensor<4xi8>\n"
                "  %q = stablehlo.shift_right_arithmetic %a, %s : tensor<4xi8>\n"
                "  check.expect_eq_const %q, dense<[0, -1, 2, -1]> : tensor<4xi8>\n"
                "  %g = stablehlo.shift_right_logical %a, %s : tensor<4xi8>\n"
                "  check.expect_eq_const %g, dense<[0, 0, 2, 31]> : tensor<4xi8>\n"
                "  %c = stablehlo.count_leading_zeros %a : tensor<4xi8>\n"
                "  check.expect_eq_const %c, dense<[5, 0, 5, 0]> : tensor<4xi8>\n"
                "  %p = stablehlo.popcnt %a : tensor<4xi8>\n"
                "  check.expect_eq_const %p, dense<[3, 1, 2, 6]> : tensor<4xi8>\n"
                "  %e = stablehlo.constant dense<[-1, -2, 3, 0]> : tensor<4xi8>\n"
                "  %w = stablehlo.power %b, %e : tensor<4xi8>\n"
                "  check.expect_eq_const %w, dense<[0, 1, 8, 1]> : tensor<4xi8>\n"
                "  func.return\n"
                "}\n"));
}

TEST(elementwise_float_edges) {
  CHECK(fails_with(
      "func.func @main() {\n"
      "  %a = stablehlo.constant dense<[0x7FC00000, -0.0, 2.5, -2.5]> : tensor<4xf32>\n"
      "  %b = stablehlo.constant dense<[1.0, 0.0, 3.5, -3.5]> : tensor<4xf32>\n"
      "  %m = stablehlo.maximum %a, %b : tensor<4xf32>\n"
      "  %n = stablehlo.is_finite %m : (tensor<4xf32>) -> tensor<4xi1>\n"
      "  check.expect_eq_const %n, dense<[false, true, true, true]> : tensor<4xi1>\n"
      "  %z = stablehlo.minimum %a, %b : tensor<4xf32>\n"
      "  check.expect_eq_const %z, dense<[1.0, -0.0, 2.5, -3.5]> : tensor<4xf32>\n"
      "  func.return\n"
      "}\n",
      HLO_FAILED_CHECK, "element [0] is not equal: nan")); /* min(NaN, 1) is NaN */
  CHECK(runs_ok("func.func @main() {\n"
                "  %a = stablehlo.constant dense<[2.5, -2.5, 3.5, 0.5]> : tensor<4xf32>\n"
                "  %r = stablehlo.round_nearest_even %a : tensor<4xf32>\n"
                "  check.expect_eq_const %r, dense<[2.0, -2.0, 4.0, 0.0]> : tensor<4xf32>\n"
                "  %z = stablehlo.round_nearest_afz %a : tensor<4xf32>\n"
                "  check.expect_eq_const %z, dense<[3.0, -3.0, 4.0, 1.0]> : tensor<4xf32>\n"
                "  %i = stablehlo.convert %a : (tensor<4xf32>) -> tensor<4xi32>\n"
                "  check.expect_eq_const %i, dense<[2, -2, 3, 0]> : tensor<4xi32>\n"
                "  %big = stablehlo.constant dense<[1.0e10, -1.0e10, 0x7FC00000, 300.0]> : tensor<4xf32>\n"
                "  %s = stablehlo.convert %big : (tensor<4xf32>) -> tensor<4xi8>\n"
                "  check.expect_eq_const %s, dense<[127, -128, 0, 127]> : tensor<4xi8>\n"
                "  func.return\n"
                "}\n"));
}

TEST(compare_totalorder) {
  CHECK(runs_ok(
      "func.func @main() {\n"
      "  %a = stablehlo.constant dense<[-0.0, 0xFFC00000, 1.0, 0x7FC00000]> : tensor<4xf32>\n"
      "  %b = stablehlo.constant dense<[0.0, 0xFF800000, 0x7FC00000, 0x7FC00000]> : tensor<4xf32>\n"
      "  %t = stablehlo.compare LT, %a, %b, TOTALORDER : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xi1>\n"
      "  check.expect_eq_const %t, dense<[true, true, true, false]> : tensor<4xi1>\n"
      "  %f = stablehlo.compare EQ, %a, %b, FLOAT : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xi1>\n"
      "  check.expect_eq_const %f, dense<[true, false, false, false]> : tensor<4xi1>\n"
      "  func.return\n"
      "}\n"));
}

TEST(bitcast_rank_change) {
  CHECK(runs_ok("func.func @main() {\n"
                "  %a = stablehlo.constant dense<[1, 258]> : tensor<2xi16>\n"
                "  %b = stablehlo.bitcast_convert %a : (tensor<2xi16>) -> tensor<2x2xi8>\n"
                "  check.expect_eq_const %b, dense<[[1, 0], [2, 1]]> : tensor<2x2xi8>\n"
                "  %c = stablehlo.bitcast_convert %b : (tensor<2x2xi8>) -> tensor<2xi16>\n"
                "  check.expect_eq_const %c, dense<[1, 258]> : tensor<2xi16>\n"
                "  func.return\n"
                "}\n"));
}

TEST(control_flow) {
  CHECK(runs_ok(
      "func.func @main() {\n"
      "  %init = stablehlo.constant dense<0> : tensor<i64>\n"
      "  %one = stablehlo.constant dense<1> : tensor<i64>\n"
      "  %ten = stablehlo.constant dense<10> : tensor<i64>\n"
      "  %r:2 = stablehlo.while(%i = %init, %acc = %init) : tensor<i64>, tensor<i64>\n"
      "   cond {\n"
      "    %c = stablehlo.compare LT, %i, %ten : (tensor<i64>, tensor<i64>) -> tensor<i1>\n"
      "    stablehlo.return %c : tensor<i1>\n"
      "  } do {\n"
      "    %n = stablehlo.add %i, %one : tensor<i64>\n"
      "    %s = stablehlo.add %acc, %i : tensor<i64>\n"
      "    stablehlo.return %n, %s : tensor<i64>, tensor<i64>\n"
      "  }\n"
      "  check.expect_eq_const %r#1, dense<45> : tensor<i64>\n"
      "  %idx = stablehlo.constant dense<7> : tensor<i32>\n"
      "  %k = \"stablehlo.case\"(%idx) ({\n"
      "    stablehlo.return %one : tensor<i64>\n"
      "  }, {\n"
      "    stablehlo.return %ten : tensor<i64>\n"
      "  }) : (tensor<i32>) -> tensor<i64>\n"
      "  check.expect_eq_const %k, dense<10> : tensor<i64>\n"
      "  %x = func.call @twice(%ten) : (tensor<i64>) -> tensor<i64>\n"
      "  check.expect_eq_const %x, dense<20> : tensor<i64>\n"
      "  func.return\n"
      "}\n"
      "func.func private @twice(%a: tensor<i64>) -> tensor<i64> {\n"
      "  %b = stablehlo.add %a, %a : tensor<i64>\n"
      "  func.return %b : tensor<i64>\n"
      "}\n"));
}

TEST(check_failures) {
  CHECK(fails_with("func.func @main() {\n"
                   "  %a = stablehlo.constant dense<[1, 2, 3]> : tensor<3xi32>\n"
                   "  check.expect_eq_const %a, dense<[1, 2, 4]> : tensor<3xi32>\n"
                   "  func.return\n"
                   "}\n",
                   HLO_FAILED_CHECK, "[2]"));
  CHECK(fails_with("func.func @main() {\n"
                   "  %a = stablehlo.constant dense<[1.0, 2.0]> : tensor<2xf32>\n"
                   "  check.expect_almost_eq_const %a, dense<[1.0, 2.001]> : tensor<2xf32>\n"
                   "  func.return\n"
                   "}\n",
                   HLO_FAILED_CHECK, "2.00099993"));
  CHECK(runs_ok("func.func @main() {\n"
                "  %a = stablehlo.constant dense<[1.0, 2.0]> : tensor<2xf32>\n"
                "  check.expect_almost_eq_const %a, dense<[1.0, 2.00001]> : tensor<2xf32>\n"
                "  func.return\n"
                "}\n"));
}

TEST(quantized_add) {
  CHECK(runs_ok(
      "func.func @main() {\n"
      "  %a = stablehlo.constant dense<[1.0, 2.0]> : tensor<2xf32>\n"
      "  %q = stablehlo.uniform_quantize %a : (tensor<2xf32>) -> tensor<2x!quant.uniform<i8:f32, 0.5:1>>\n"
      "  %s = stablehlo.add %q, %q : tensor<2x!quant.uniform<i8:f32, 0.5:1>>\n"
      "  %d = stablehlo.uniform_dequantize %s : (tensor<2x!quant.uniform<i8:f32, 0.5:1>>) -> tensor<2xf32>\n"
      "  check.expect_almost_eq_const %d, dense<[2.0, 4.0]> : tensor<2xf32>\n"
      "  func.return\n"
      "}\n"));
}

TEST(missing_kernel_is_unimplemented) {
  CHECK(fails_with("func.func @main() {\n"
                   "  %a = stablehlo.constant dense<2.0> : tensor<f32>\n"
                   "  %b = \"chlo.lgamma\"(%a) : (tensor<f32>) -> tensor<f32>\n"
                   "  func.return\n"
                   "}\n",
                   HLO_UNIMPLEMENTED, "no interpreter kernel for chlo.lgamma"));
}

static const char *const recursion_text = "func.func @main() {\n"
                                         "  %a = stablehlo.constant dense<2.0> : tensor<f32>\n"
                                         "  %b = func.call @f(%a) : (tensor<f32>) -> tensor<f32>\n"
                                         "  func.return\n"
                                         "}\n"
                                         "func.func private @f(%x: tensor<f32>) -> tensor<f32> {\n"
                                         "  %y = func.call @f(%x) : (tensor<f32>) -> tensor<f32>\n"
                                         "  func.return %y : tensor<f32>\n"
                                         "}\n";

TEST(runaway_recursion_is_an_error) {
  CHECK(fails_with(recursion_text, HLO_RESOURCE_EXHAUSTED, "nest deeper"));
  /* located at the recursive call (line 7), not a bare message */
  hlo_status st = run_text(recursion_text);
  char *buf = NULL;
  size_t len = 0;
  FILE *f = open_memstream(&buf, &len);
  CHECK(f != NULL);
  if (f) {
    hlo_status_print(st, f);
    fclose(f);
    CHECK(buf && strstr(buf, "test.mlir:7:") != NULL);
    if (buf && !strstr(buf, "test.mlir:7:")) fprintf(stderr, "got: %s\n", buf);
  }
  free(buf);
  hlo_status_free(st);
}

TEST(map_and_if) {
  CHECK(runs_ok("func.func @main() {\n"
                "  %a = stablehlo.constant dense<[1, 2, 3]> : tensor<3xi32>\n"
                "  %b = stablehlo.constant dense<[10, 20, 30]> : tensor<3xi32>\n"
                "  %m = \"stablehlo.map\"(%a, %b) ({\n"
                "  ^bb0(%x: tensor<i32>, %y: tensor<i32>):\n"
                "    %p = stablehlo.multiply %x, %y : tensor<i32>\n"
                "    stablehlo.return %p : tensor<i32>\n"
                "  }) {dimensions = array<i64: 0>} : (tensor<3xi32>, tensor<3xi32>) -> tensor<3xi32>\n"
                "  check.expect_eq_const %m, dense<[10, 40, 90]> : tensor<3xi32>\n"
                "  %t = stablehlo.constant dense<false> : tensor<i1>\n"
                "  %r = \"stablehlo.if\"(%t) ({\n"
                "    stablehlo.return %a : tensor<3xi32>\n"
                "  }, {\n"
                "    stablehlo.return %b : tensor<3xi32>\n"
                "  }) : (tensor<i1>) -> tensor<3xi32>\n"
                "  check.expect_eq_const %r, dense<[10, 20, 30]> : tensor<3xi32>\n"
                "  func.return\n"
                "}\n"));
}

TEST(per_axis_quantize) {
  CHECK(runs_ok(
      "func.func @main() {\n"
      "  %a = stablehlo.constant dense<[[1.0, 1.0], [2.0, 2.0]]> : tensor<2x2xf32>\n"
      "  %q = stablehlo.uniform_quantize %a : (tensor<2x2xf32>) -> "
      "tensor<2x2x!quant.uniform<i8:f32:1, {0.5:0, 0.25:4}>>\n"
      "  %s = stablehlo.bitcast_convert %q : (tensor<2x2x!quant.uniform<i8:f32:1, {0.5:0, "
      "0.25:4}>>) -> tensor<2x2xi8>\n"
      "  check.expect_eq_const %s, dense<[[2, 8], [4, 12]]> : tensor<2x2xi8>\n"
      "  %d = stablehlo.uniform_dequantize %q : (tensor<2x2x!quant.uniform<i8:f32:1, {0.5:0, "
      "0.25:4}>>) -> tensor<2x2xf32>\n"
      "  check.expect_almost_eq_const %d, dense<[[1.0, 1.0], [2.0, 2.0]]> : tensor<2x2xf32>\n"
      "  func.return\n"
      "}\n"));
}

static int cleanups;
static void count_cleanup(void *p) {
  cleanups++;
  free(p);
}

TEST(fork_shares_probe_state) {
  const char *text = "func.func @main(%a: tensor<2xf32>) -> tensor<2xf32> {\n"
                     "  %b = stablehlo.add %a, %a : tensor<2xf32>\n"
                     "  func.return %b : tensor<2xf32>\n"
                     "}\n";
  hlo_status st;
  hlo_module_ir *m = tl_parse_text("fork.mlir", text, 0, &st);
  CHECK(st == NULL);
  if (st) {
    hlo_status_free(st);
    return;
  }
  interp *root = NULL, *child = NULL;
  CHECK(interp_create(m, NULL, &root) == NULL);
  interp_process p = {1, 2, 4, 4, NULL};
  CHECK(interp_fork(root, &p, &child) == NULL);
  CHECK_EQ_INT(interp_current_process(child)->partition_id, 2);
  CHECK_EQ_INT(interp_current_process(root)->num_replicas, 1);
  interp_set_probe_state(root, malloc(4), count_cleanup);
  CHECK(interp_probe_state(child) == interp_probe_state(root));
  hlo_func *f = module_entry(m, NULL);
  tensor *arg = tensor_new(f->body.block.args[0].type);
  float two[2] = {1.5f, -2.0f};
  memcpy(arg->data, two, sizeof two);
  tensor **res = NULL;
  CHECK(interp_call(child, f, &arg, 1, &res) == NULL);
  if (res) {
    float got[2];
    memcpy(got, res[0]->data, sizeof got);
    CHECK(got[0] == 3.0f && got[1] == -4.0f);
    tensor_release(res[0]);
    free(res);
  }
  tensor_release(arg);
  cleanups = 0;
  interp_destroy(root);
  CHECK_EQ_INT(cleanups, 0);
  interp_destroy(child);
  CHECK_EQ_INT(cleanups, 1);
  module_free(m);
}

TEST(out_of_memory_is_reported) {
  const char *text = "func.func @main() {\n"
                     "  %a = stablehlo.constant dense<[1.0, 2.0]> : tensor<2xf32>\n"
                     "  %r:2 = stablehlo.while(%i = %a, %j = %a) : tensor<2xf32>, tensor<2xf32>\n"
                     "   cond {\n"
                     "    %c = stablehlo.constant dense<false> : tensor<i1>\n"
                     "    stablehlo.return %c : tensor<i1>\n"
                     "  } do {\n"
                     "    stablehlo.return %i, %j : tensor<2xf32>, tensor<2xf32>\n"
                     "  }\n"
                     "  %b = stablehlo.add %r#0, %a : tensor<2xf32>\n"
                     "  check.expect_eq_const %b, dense<[2.0, 4.0]> : tensor<2xf32>\n"
                     "  func.return\n"
                     "}\n";
  int bad = 0, ok_runs = 0;
  for (long n = 1; n < 400; n++) {
    hlo_fail_alloc_after = n;
    hlo_status st = run_text(text);
    hlo_fail_alloc_after = 0;
    hlo_status_code c = hlo_status_code_of(st);
    if (c == HLO_OK) ok_runs++;
    else if (c != HLO_RESOURCE_EXHAUSTED && c != HLO_PARSE_ERROR) {
      hlo_status_print(st, stderr);
      bad++;
    }
    hlo_status_free(st);
  }
  CHECK_EQ_INT(bad, 0);
  CHECK(ok_runs > 0); /* with enough allocations it succeeds */
}

TEST(convert_large_int_rounds_once) {
  /* 2^63 + 2^39 + 1 is just above the midpoint between two f32 values;
   * converting through a nearest-even double would make it a tie and round
   * down. */
  CHECK(runs_ok("func.func @main() {\n"
                "  %a = stablehlo.constant dense<9223372586610589697> : tensor<ui64>\n"
                "  %f = stablehlo.convert %a : (tensor<ui64>) -> tensor<f32>\n"
                "  check.expect_eq_const %f, dense<9.223373136366403584e18> : tensor<f32>\n"
                "  func.return\n"
                "}\n"));
}

/* ------------------------------------------------------ the corpus run */

static const char *const my_ops[] = {
    /* elementwise */
    "abs", "cbrt", "ceil", "count_leading_zeros", "cosine", "exponential",
    "exponential_minus_one", "floor", "imag", "is_finite", "log", "log_plus_one", "logistic",
    "negate", "not", "popcnt", "real", "round_nearest_afz", "round_nearest_even", "rsqrt",
    "sign", "sine", "sqrt", "tan", "tanh", "convert", "bitcast_convert", "reduce_precision",
    "add", "and", "atan2", "complex", "divide", "maximum", "minimum", "multiply", "or",
    "power", "remainder", "shift_left", "shift_right_arithmetic", "shift_right_logical",
    "subtract", "xor", "clamp", "compare", "select", "uniform_quantize", "uniform_dequantize",
    /* control */
    "while", "if", "case", "map", "composite", "optimization_barrier", "return",
    /* needed by every file */
    "constant", "custom_call",
};

static bool is_my_op(const char *s, size_t n) {
  for (size_t i = 0; i < sizeof my_ops / sizeof my_ops[0]; i++)
    if (strlen(my_ops[i]) == n && !memcmp(my_ops[i], s, n)) return true;
  return false;
}

static bool ident_char(char c) {
  return (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '_';
}

/* True when every stablehlo op of `text` is ours, it uses no chlo or
 * interpreter ops, its custom calls are all check.* and it is meant to run
 * on the interpreter. */
static bool file_is_mine(const char *text) {
  if (!strstr(text, "--interpret") || strstr(text, "RUN-DISABLED")) return false;
  /* HLO_CORE_ALL=1: every interpreter file (a debugging aid). */
  if (getenv("HLO_CORE_ALL")) return !strstr(text, "?x") && !strstr(text, "<?");
  if (strstr(text, "chlo.") || strstr(text, "interpreter.") || strstr(text, "--args") ||
      strstr(text, "expect_serialized_eq") || strstr(text, "?x") || strstr(text, "<?"))
    return false;
  for (const char *p = text; (p = strstr(p, "stablehlo.")); p += 10) {
    if (p > text && (ident_char(p[-1]) || p[-1] == '#')) continue;
    const char *s = p + 10, *e = s;
    while (ident_char(*e)) e++;
    if (!is_my_op(s, (size_t)(e - s))) return false;
    if (e - s == 11 && !memcmp(s, "custom_call", 11)) {
      const char *q = e;
      while (*q == ' ' || *q == '"' || *q == '(') q++;
      if (strncmp(q, "@check.", 7) != 0) return false;
    }
  }
  return true;
}

/* Runs every piece of `path`; NULL when all pass, else the first error. */
static hlo_status run_file(const char *path) {
  tl_file tf;
  hlo_status st = tl_file_read(path, &tf);
  if (!st && strstr(tf.text, "split-input-file")) st = tl_file_split(&tf);
  for (size_t i = 0; i < tf.num_pieces && !st; i++) {
    /* Skip pieces without a function (a trailing comment). */
    if (!tl_piece_has(tf.text, tf.pieces[i].begin, tf.pieces[i].end, "func")) continue;
    tl_run r;
    st = tl_run_entry(&tf.src, tf.pieces[i].begin, tf.pieces[i].end, 0, NULL, &r);
    tl_run_free(&r);
  }
  tl_file_free(&tf);
  return st;
}

static int corpus_run, corpus_passed;
static tl_paths corpus_fail;

static void run_corpus(const char *sub, bool recurse) {
  char dir[4096];
  snprintf(dir, sizeof dir, "%s/%s", tl_shared_dir(), sub);
  tl_paths ps = {0};
  CHECK(tl_list_mlir(dir, recurse, NULL, NULL, &ps));
  tl_paths_sort(&ps);
  for (size_t i = 0; i < ps.n; i++) {
    size_t len;
    char *text = tl_read_file(ps.v[i], &len);
    bool mine = text && file_is_mine(text);
    free(text);
    if (!mine) {
      free(ps.v[i]);
      continue;
    }
    corpus_run++;
    hlo_status st = run_file(ps.v[i]);
    if (!st) {
      corpus_passed++;
      free(ps.v[i]);
    } else {
      if (getenv("HLO_TEST_VERBOSE")) hlo_status_print(st, stderr);
      hlo_status_free(st);
      if (corpus_fail.n == corpus_fail.cap) {
        corpus_fail.cap = corpus_fail.cap ? corpus_fail.cap * 2 : 64;
        corpus_fail.v = realloc(corpus_fail.v, corpus_fail.cap * sizeof *corpus_fail.v);
      }
      corpus_fail.v[corpus_fail.n++] = ps.v[i];
    }
  }
  free(ps.v);
}

static bool failed_in_corpus(const char *suffix) {
  for (size_t i = 0; i < corpus_fail.n; i++) {
    size_t a = strlen(corpus_fail.v[i]), b = strlen(suffix);
    if (a >= b && !strcmp(corpus_fail.v[i] + a - b, suffix)) return true;
  }
  return false;
}

TEST(corpus) {
  char probe[4096];
  snprintf(probe, sizeof probe, "%s/conformance/interpret/add.mlir", tl_shared_dir());
  FILE *f = fopen(probe, "r");
  if (!f) {
    printf("corpus: skipped, no corpus under %s (set HLO_SHARED)\n", tl_shared_dir());
    return;
  }
  fclose(f);
  run_corpus("conformance/interpret", false);
  run_corpus("conformance/testdata", false);
  run_corpus("conformance/testdata/quantized", false);
  printf("corpus: passed %d of %d files whose ops are all core/elementwise/control/check\n",
         corpus_passed, corpus_run);
  for (size_t i = 0; i < corpus_fail.n; i++) printf("  FAILED %s\n", corpus_fail.v[i]);
  CHECK(corpus_run > 100);
  static const char *const must_pass[] = {
      "interpret/add.mlir",      "interpret/abs.mlir",      "interpret/while.mlir",
      "interpret/case.mlir",     "interpret/if.mlir",       "interpret/compare.mlir",
      "interpret/convert.mlir",  "interpret/divide.mlir",   "interpret/bitcast_convert.mlir",
      "interpret/check.mlir",    "interpret/call.mlir",     "interpret/remainder.mlir",
  };
  for (size_t i = 0; i < sizeof must_pass / sizeof must_pass[0]; i++) {
    if (failed_in_corpus(must_pass[i])) {
      fprintf(stderr, "must-pass file failed: %s\n", must_pass[i]);
      CHECK(!failed_in_corpus(must_pass[i]));
    }
  }
  tl_paths_free(&corpus_fail);
}

TEST_MAIN()
