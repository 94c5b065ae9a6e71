/* test_cpu_exec.c — the CPU backend's executable (runtime/executable_cpu.c)
 * through the C API (HLO_BACKEND_CPU): programs mixing kernel thunks, BLAS
 * thunks and interpreter thunks run on the same inputs as the interpreter
 * (HLO_BACKEND_INTERP over the same module) and must agree: bit for bit
 * except reductions and matmuls (summation order: within a few ULP). The
 * statistics say which op became which thunk. When no C compiler can be
 * started the tests that need one print "skipped" with the reason and pass;
 * HLO_UNAVAILABLE for a missing compiler is tested with HLO_CC pointing
 * nowhere. */
#include <math.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "hlo/hlo.h"
#include "ir/element.h"
#include "runtime/runtime.h"
#include "test.h"
#include "testlib.h"

/* Whether `code` (from creating an executable) means "no C compiler". */
static bool no_cc(hlo_status st, const char *test) {
  if (st && hlo_status_code_of(st) == HLO_UNAVAILABLE) {
    printf("%s: skipped (%s)\n", test, hlo_status_message(st));
    hlo_status_free(st);
    return true;
  }
  return false;
}

/* The CPU backend without its pass pipeline: one thunk per top-level op,
 * which these tests count (fusion has its own tests: test_fusion.c and
 * tests/suite_cpu.sh). */
static const hlo_compile_options single_op_cpu = {.backend = HLO_BACKEND_CPU, .passes = "none"};

typedef struct expect_stats {
  int kernels, blas, interp, control, copies;
} expect_stats;

/* Runs `text` on random inputs on both backends (tl_backends_agree: each
 * call its own seed); result k is compared bit for bit unless
 * (ulp_mask >> k) & 1, then within `ulps`; `want` (may be NULL): the
 * thunks expected. */
static void run_both(const char *test, const char *text, unsigned ulp_mask, double ulps,
                     const expect_stats *want) {
  static uint64_t seed = 12345;
  runtime_cpu_stats cs;
  memset(&cs, 0, sizeof cs);
  bool skipped = false;
  CHECK(tl_backends_agree(test, text, &single_op_cpu, ulp_mask, ulps, seed++, &cs, &skipped));
  if (skipped || !want) return;
  CHECK_EQ_INT(cs.kernels, want->kernels);
  CHECK_EQ_INT(cs.blas, want->blas);
  CHECK_EQ_INT(cs.interp, want->interp);
  CHECK_EQ_INT(cs.control, want->control);
  CHECK_EQ_INT(cs.copies, want->copies);
}

TEST(kernels_blas_and_interpreter_thunks) {
  /* add/broadcast/exp: kernels; dot_general: BLAS; reduce: kernel; while
   * (over 0-d values, reading %n from outside its regions): one LOOP
   * kernel (codegen/lower_while.h; the control step that runs other loops:
   * test_cpu_loop.c); sort: the native sort step (test_cpu_sort.c), no
   * interpreter thunk */
  static const char *text =
      "func.func @main(%x: tensor<6x8xf32>, %w: tensor<8x5xf32>, %b: tensor<5xf32>, %n: tensor<i32>) "
      "-> (tensor<6x5xf32>, tensor<6xf32>, tensor<i32>, tensor<6x8xf32>) {\n"
      "  %0 = stablehlo.exponential %x : tensor<6x8xf32>\n"
      "  %1 = stablehlo.dot_general %0, %w, contracting_dims = [1] x [0] : (tensor<6x8xf32>, tensor<8x5xf32>) -> tensor<6x5xf32>\n"
      "  %2 = stablehlo.broadcast_in_dim %b, dims = [1] : (tensor<5xf32>) -> tensor<6x5xf32>\n"
      "  %3 = stablehlo.add %1, %2 : tensor<6x5xf32>\n"
      "  %z = stablehlo.constant dense<0.0> : tensor<f32>\n"
      "  %4 = stablehlo.reduce(%3 init: %z) applies stablehlo.add across dimensions = [1] : (tensor<6x5xf32>, tensor<f32>) -> tensor<6xf32>\n"
      "  %c0 = stablehlo.constant dense<0> : tensor<i32>\n"
      "  %c1 = stablehlo.constant dense<1> : tensor<i32>\n"
      "  %5:2 = stablehlo.while(%i = %c0, %acc = %c0) : tensor<i32>, tensor<i32>\n"
      "    cond {\n"
      "      %p = stablehlo.compare LT, %i, %n : (tensor<i32>, tensor<i32>) -> tensor<i1>\n"
      "      stablehlo.return %p : tensor<i1>\n"
      "    } do {\n"
      "      %i1 = stablehlo.add %i, %c1 : tensor<i32>\n"
      "      %a1 = stablehlo.add %acc, %i : tensor<i32>\n"
      "      stablehlo.return %i1, %a1 : tensor<i32>, tensor<i32>\n"
      "    }\n"
      "  %6 = \"stablehlo.sort\"(%x) ({\n"
      "    ^bb0(%a: tensor<f32>, %q: tensor<f32>):\n"
      "      %l = stablehlo.compare LT, %a, %q : (tensor<f32>, tensor<f32>) -> tensor<i1>\n"
      "      stablehlo.return %l : tensor<i1>\n"
      "  }) {dimension = 1 : i64} : (tensor<6x8xf32>) -> tensor<6x8xf32>\n"
      "  return %3, %4, %5#1, %6 : tensor<6x5xf32>, tensor<6xf32>, tensor<i32>, tensor<6x8xf32>\n"
      "}\n";
  expect_stats want = {5, 1, 0, 0, 0};
  run_both("mixed", text, 0x3, 8, &want);
}

TEST(gemm_forms) {
  /* batched, transposed operands, several free dims, matrix-vector, f64,
   * the deprecated dot */
  static const char *text =
      "func.func @main(%a: tensor<2x3x4xf32>, %b: tensor<2x4x5xf32>, %at: tensor<2x4x3xf32>, "
      "%bt: tensor<2x5x4xf32>, %v: tensor<4xf64>, %m: tensor<4x7xf64>) -> (tensor<2x3x5xf32>, "
      "tensor<2x3x5xf32>, tensor<2x3x2x5xf32>, tensor<7xf64>, tensor<3x2xf32>) {\n"
      "  %0 = stablehlo.dot_general %a, %b, batching_dims = [0] x [0], contracting_dims = [2] x [1] : (tensor<2x3x4xf32>, tensor<2x4x5xf32>) -> tensor<2x3x5xf32>\n"
      "  %1 = stablehlo.dot_general %at, %bt, batching_dims = [0] x [0], contracting_dims = [1] x [2] : (tensor<2x4x3xf32>, tensor<2x5x4xf32>) -> tensor<2x3x5xf32>\n"
      "  %2 = stablehlo.dot_general %at, %bt, contracting_dims = [1] x [2] : (tensor<2x4x3xf32>, tensor<2x5x4xf32>) -> tensor<2x3x2x5xf32>\n"
      "  %3 = stablehlo.dot_general %v, %m, contracting_dims = [0] x [0] : (tensor<4xf64>, tensor<4x7xf64>) -> tensor<7xf64>\n"
      "  %s = stablehlo.slice %a [0:1, 0:3, 0:4] : (tensor<2x3x4xf32>) -> tensor<1x3x4xf32>\n"
      "  %r = stablehlo.reshape %s : (tensor<1x3x4xf32>) -> tensor<3x4xf32>\n"
      "  %t = stablehlo.slice %b [1:2, 0:4, 0:2] : (tensor<2x4x5xf32>) -> tensor<1x4x2xf32>\n"
      "  %u = stablehlo.reshape %t : (tensor<1x4x2xf32>) -> tensor<4x2xf32>\n"
      "  %4 = stablehlo.dot %r, %u : (tensor<3x4xf32>, tensor<4x2xf32>) -> tensor<3x2xf32>\n"
      "  return %0, %1, %2, %3, %4 : tensor<2x3x5xf32>, tensor<2x3x5xf32>, tensor<2x3x2x5xf32>, tensor<7xf64>, tensor<3x2xf32>\n"
      "}\n";
  /* %2 contracts lhs dim 1 with no batch dims: lhs 2x4x3 has free dims 0
   * and 2 around the contracting dim, not a gemm: interpreter */
  expect_stats want = {2, 4, 1, 0, 0};
  run_both("gemm_forms", text, 0x1f, 8, &want);
}

TEST(algorithm_and_other_types_fall_back_bf16_gemm) {
  static const char *text =
      "func.func @main(%a: tensor<3x4xf32>, %b: tensor<4x2xf32>, %i: tensor<3x4xi32>, %j: tensor<4x2xi32>, "
      "%h: tensor<3x4xbf16>, %k: tensor<4x2xbf16>) -> (tensor<3x2xf32>, tensor<3x2xi32>, tensor<3x2xbf16>, tensor<0x4xf32>) {\n"
      "  %0 = stablehlo.dot_general %a, %b, contracting_dims = [1] x [0], algorithm = <lhs_precision_type = tf32, rhs_precision_type = tf32, accumulation_type = f32, lhs_component_count = 1, rhs_component_count = 1, num_primitive_operations = 1, allow_imprecise_accumulation = false> : (tensor<3x4xf32>, tensor<4x2xf32>) -> tensor<3x2xf32>\n"
      "  %1 = stablehlo.dot_general %i, %j, contracting_dims = [1] x [0] : (tensor<3x4xi32>, tensor<4x2xi32>) -> tensor<3x2xi32>\n"
      "  %2 = stablehlo.dot_general %h, %k, contracting_dims = [1] x [0] : (tensor<3x4xbf16>, tensor<4x2xbf16>) -> tensor<3x2xbf16>\n"
      "  %e = stablehlo.constant dense<> : tensor<0x4xf32>\n"
      "  %3 = stablehlo.add %e, %e : tensor<0x4xf32>\n"
      "  return %0, %1, %2, %3 : tensor<3x2xf32>, tensor<3x2xi32>, tensor<3x2xbf16>, tensor<0x4xf32>\n"
      "}\n";
  /* the bf16 product is a gemm now (oneDNN, summed in f32): within a few
   * ULP of the interpreter's */
  expect_stats want = {0, 1, 3, 0, 0};
  run_both("fallbacks", text, 0x4, 4, &want);
}

TEST(elementwise_bit_exact) {
  static const char *text =
      "func.func @main(%x: tensor<4x9xf32>, %y: tensor<9x4xf32>, %h: tensor<4x9xbf16>, %q: tensor<4x9xi32>) "
      "-> (tensor<4x9xf32>, tensor<4x9xbf16>, tensor<36xi32>, tensor<4x18xf32>, tensor<4x9xi1>) {\n"
      "  %t = stablehlo.transpose %y, dims = [1, 0] : (tensor<9x4xf32>) -> tensor<4x9xf32>\n"
      "  %0 = stablehlo.sine %x : tensor<4x9xf32>\n"
      "  %1 = stablehlo.multiply %0, %t : tensor<4x9xf32>\n"
      "  %2 = stablehlo.exponential %h : tensor<4x9xbf16>\n"
      "  %3 = stablehlo.reshape %q : (tensor<4x9xi32>) -> tensor<36xi32>\n"
      "  %4 = stablehlo.concatenate %x, %1, dim = 1 : (tensor<4x9xf32>, tensor<4x9xf32>) -> tensor<4x18xf32>\n"
      "  %c = stablehlo.constant dense<0.5> : tensor<4x9xf32>\n"
      "  %5 = stablehlo.compare GT, %1, %c, FLOAT : (tensor<4x9xf32>, tensor<4x9xf32>) -> tensor<4x9xi1>\n"
      "  return %1, %2, %3, %4, %5 : tensor<4x9xf32>, tensor<4x9xbf16>, tensor<36xi32>, tensor<4x18xf32>, tensor<4x9xi1>\n"
      "}\n";
  expect_stats want = {6, 0, 0, 0, 0};
  run_both("elementwise", text, 0, 0, &want);
}

TEST(reverse_in_kernels) {
  /* reverse is a layout op of the kernels (an index map running the
   * reversed dims backwards), alone, under a transpose and a slice, and
   * over an elementwise chain (the moves bit for bit): no interpreter thunk once
   * fused (the cpu pipeline) */
  static const char *text =
      "func.func @main(%x: tensor<3x5x7xf32>, %y: tensor<7x5x3xi32>) -> (tensor<3x5x7xf32>, "
      "tensor<5x3x7xf32>, tensor<7x5x3xi32>, tensor<2x5x3xi32>) {\n"
      "  %r = stablehlo.reverse %x, dims = [0, 2] : tensor<3x5x7xf32>\n"
      "  %e = stablehlo.exponential %r : tensor<3x5x7xf32>\n"
      "  %t = stablehlo.transpose %e, dims = [1, 0, 2] : (tensor<3x5x7xf32>) -> tensor<5x3x7xf32>\n"
      "  %u = stablehlo.reverse %t, dims = [1] : tensor<5x3x7xf32>\n"
      "  %v = stablehlo.reverse %y, dims = [0, 1, 2] : tensor<7x5x3xi32>\n"
      "  %s = stablehlo.slice %v [1:5:2, 0:5, 0:3] : (tensor<7x5x3xi32>) -> tensor<2x5x3xi32>\n"
      "  %w = stablehlo.reverse %s, dims = [0] : tensor<2x5x3xi32>\n"
      "  return %e, %u, %v, %w : tensor<3x5x7xf32>, tensor<5x3x7xf32>, tensor<7x5x3xi32>, "
      "tensor<2x5x3xi32>\n"
      "}\n";
  static const hlo_compile_options fused = {.backend = HLO_BACKEND_CPU};
  runtime_cpu_stats cs = {0};
  bool skipped = false;
  /* results 0 and 1 hold an exp: the kernels' is within 1 ULP of libm's */
  CHECK(tl_backends_agree("reverse", text, &fused, 0x3, 1, 77, &cs, &skipped));
  if (!skipped) CHECK_EQ_INT(cs.interp, 0);
}

TEST(data_movement_native) {
  /* dynamic_slice (start indices clamped: the random indices reach 8),
   * dynamic_update_slice twice (the second in place), pad with negative
   * low padding, row gather, scatter-add with out-of-bounds rows (skipped)
   * into a broadcast (in place), scatter-set: all native copy steps */
  static const char *text =
      "func.func @main(%x: tensor<6x8xf32>, %i: tensor<i32>, %j: tensor<i32>, %u: tensor<2x3xf32>, "
      "%t: tensor<10x4xf32>, %g: tensor<3x2x1xi32>, %s: tensor<3x1xi32>, %v: tensor<3x4xf32>) "
      "-> (tensor<3x5xf32>, tensor<6x8xf32>, tensor<7x7xf32>, tensor<3x2x4xf32>, tensor<5x4xf32>, tensor<5x4xf32>) {\n"
      "  %0 = stablehlo.dynamic_slice %x, %i, %j, sizes = [3, 5] : (tensor<6x8xf32>, tensor<i32>, tensor<i32>) -> tensor<3x5xf32>\n"
      "  %n = stablehlo.negate %x : tensor<6x8xf32>\n"
      "  %1 = stablehlo.dynamic_update_slice %n, %u, %i, %j : (tensor<6x8xf32>, tensor<2x3xf32>, tensor<i32>, tensor<i32>) -> tensor<6x8xf32>\n"
      "  %2 = stablehlo.dynamic_update_slice %1, %u, %j, %i : (tensor<6x8xf32>, tensor<2x3xf32>, tensor<i32>, tensor<i32>) -> tensor<6x8xf32>\n"
      "  %z = stablehlo.constant dense<7.5> : tensor<f32>\n"
      "  %3a = stablehlo.pad %x, %z, low = [-1, 2], high = [2, -3], interior = [0, 0] : (tensor<6x8xf32>, tensor<f32>) -> tensor<7x7xf32>\n"
      "  %3b = stablehlo.pad %x, %z, low = [-2, 1], high = [-1, -4], interior = [1, 2] : (tensor<6x8xf32>, tensor<f32>) -> tensor<8x19xf32>\n"
      "  %3c = stablehlo.slice %3b [0:7, 0:7] : (tensor<8x19xf32>) -> tensor<7x7xf32>\n"
      "  %3 = stablehlo.add %3a, %3c : tensor<7x7xf32>\n"
      "  %4 = \"stablehlo.gather\"(%t, %g) <{dimension_numbers = #stablehlo.gather<offset_dims = [2], collapsed_slice_dims = [0], start_index_map = [0], index_vector_dim = 2>, indices_are_sorted = false, slice_sizes = array<i64: 1, 4>}> : (tensor<10x4xf32>, tensor<3x2x1xi32>) -> tensor<3x2x4xf32>\n"
      "  %c0 = stablehlo.constant dense<0.0> : tensor<f32>\n"
      "  %b = stablehlo.broadcast_in_dim %c0, dims = [] : (tensor<f32>) -> tensor<5x4xf32>\n"
      "  %5 = \"stablehlo.scatter\"(%b, %s, %v) <{indices_are_sorted = false, scatter_dimension_numbers = #stablehlo.scatter<update_window_dims = [1], inserted_window_dims = [0], scatter_dims_to_operand_dims = [0], index_vector_dim = 1>, unique_indices = false}> ({\n"
      "  ^bb0(%p: tensor<f32>, %q: tensor<f32>):\n"
      "    %a = stablehlo.add %p, %q : tensor<f32>\n"
      "    stablehlo.return %a : tensor<f32>\n"
      "  }) : (tensor<5x4xf32>, tensor<3x1xi32>, tensor<3x4xf32>) -> tensor<5x4xf32>\n"
      "  %w = stablehlo.slice %t [0:5, 0:4] : (tensor<10x4xf32>) -> tensor<5x4xf32>\n"
      "  %6 = \"stablehlo.scatter\"(%w, %s, %v) <{indices_are_sorted = false, scatter_dimension_numbers = #stablehlo.scatter<update_window_dims = [1], inserted_window_dims = [0], scatter_dims_to_operand_dims = [0], index_vector_dim = 1>, unique_indices = false}> ({\n"
      "  ^bb0(%p: tensor<f32>, %q: tensor<f32>):\n"
      "    stablehlo.return %q : tensor<f32>\n"
      "  }) : (tensor<5x4xf32>, tensor<3x1xi32>, tensor<3x4xf32>) -> tensor<5x4xf32>\n"
      "  return %0, %2, %3, %4, %5, %6 : tensor<3x5xf32>, tensor<6x8xf32>, tensor<7x7xf32>, tensor<3x2x4xf32>, tensor<5x4xf32>, tensor<5x4xf32>\n"
      "}\n";
  expect_stats want = {5, 0, 0, 0, 8};
  run_both("copies", text, 0, 0, &want);
}

TEST(control_flow_programs) {
  /* a while whose body holds a nested while and reads a value from two
   * levels out; a case (the random index reaches 8: out of range takes
   * the last branch); an if */
  static const char *text =
      "func.func @main(%x: tensor<4xf32>, %n: tensor<i32>, %k: tensor<i32>, %p: tensor<i1>) "
      "-> (tensor<4xf32>, tensor<4xf32>, tensor<4xf32>) {\n"
      "  %c0 = stablehlo.constant dense<0> : tensor<i32>\n"
      "  %c1 = stablehlo.constant dense<1> : tensor<i32>\n"
      "  %c2 = stablehlo.constant dense<2> : tensor<i32>\n"
      "  %s = stablehlo.exponential_minus_one %x : tensor<4xf32>\n" /* libm: bit for bit */
      "  %0:2 = stablehlo.while(%i = %c0, %a = %x) : tensor<i32>, tensor<4xf32>\n"
      "    cond {\n"
      "      %lt = stablehlo.compare LT, %i, %n : (tensor<i32>, tensor<i32>) -> tensor<i1>\n"
      "      stablehlo.return %lt : tensor<i1>\n"
      "    } do {\n"
      "      %in:2 = stablehlo.while(%j = %c0, %b = %a) : tensor<i32>, tensor<4xf32>\n"
      "        cond {\n"
      "          %lt2 = stablehlo.compare LT, %j, %c2 : (tensor<i32>, tensor<i32>) -> tensor<i1>\n"
      "          stablehlo.return %lt2 : tensor<i1>\n"
      "        } do {\n"
      "          %m = stablehlo.multiply %b, %s : tensor<4xf32>\n"
      "          %h = stablehlo.sine %m : tensor<4xf32>\n"
      "          %j1 = stablehlo.add %j, %c1 : tensor<i32>\n"
      "          stablehlo.return %j1, %h : tensor<i32>, tensor<4xf32>\n"
      "        }\n"
      "      %i1 = stablehlo.add %i, %c1 : tensor<i32>\n"
      "      stablehlo.return %i1, %in#1 : tensor<i32>, tensor<4xf32>\n"
      "    }\n"
      "  %1 = \"stablehlo.case\"(%k) ({\n"
      "    stablehlo.return %x : tensor<4xf32>\n"
      "  }, {\n"
      "    %e = stablehlo.negate %s : tensor<4xf32>\n"
      "    stablehlo.return %e : tensor<4xf32>\n"
      "  }, {\n"
      "    %f = stablehlo.add %s, %x : tensor<4xf32>\n"
      "    stablehlo.return %f : tensor<4xf32>\n"
      "  }) : (tensor<i32>) -> tensor<4xf32>\n"
      "  %2 = \"stablehlo.if\"(%p) ({\n"
      "    stablehlo.return %s : tensor<4xf32>\n"
      "  }, {\n"
      "    %g = stablehlo.sine %x : tensor<4xf32>\n"
      "    stablehlo.return %g : tensor<4xf32>\n"
      "  }) : (tensor<i1>) -> tensor<4xf32>\n"
      "  return %0#1, %1, %2 : tensor<4xf32>, tensor<4xf32>, tensor<4xf32>\n"
      "}\n";
  expect_stats want = {10, 0, 0, 4, 0};
  run_both("control", text, 0, 0, &want);
}

TEST(while_carried_values_move_between_slots) {
  /* how a body's results become the next carried values: a value passed
   * to another slot (the old %a goes on as %b while %a's slot gets a new
   * value: it must not be written over in place), the same value in two
   * slots, a captured constant, a cond that returns its argument; the
   * entry's arguments (lent, never written) returned as they are */
  static const char *text =
      "func.func @main(%x: tensor<4xf32>, %y: tensor<4xf32>, %n: tensor<i32>) -> (tensor<i32>, "
      "tensor<4xf32>, tensor<4xf32>, tensor<4xf32>, tensor<4xf32>, tensor<i1>, tensor<4xf32>, "
      "tensor<4xf32>) {\n"
      "  %c0 = stablehlo.constant dense<0> : tensor<i32>\n"
      "  %c1 = stablehlo.constant dense<1> : tensor<i32>\n"
      "  %t = stablehlo.constant dense<true> : tensor<i1>\n"
      "  %k = stablehlo.constant dense<1.5> : tensor<4xf32>\n"
      "  %0:7 = stablehlo.while(%i = %c0, %a = %x, %b = %y, %d = %x, %e = %k, %go = %t, %f = %y) "
      ": tensor<i32>, tensor<4xf32>, tensor<4xf32>, tensor<4xf32>, tensor<4xf32>, tensor<i1>, "
      "tensor<4xf32>\n"
      "    cond {\n"
      "      stablehlo.return %go : tensor<i1>\n"
      "    } do {\n"
      "      %i1 = stablehlo.add %i, %c1 : tensor<i32>\n"
      "      %a2 = stablehlo.multiply %a, %b : tensor<4xf32>\n"
      "      %g = stablehlo.compare LT, %i1, %n : (tensor<i32>, tensor<i32>) -> tensor<i1>\n"
      "      %dd = stablehlo.add %d, %e : tensor<4xf32>\n"
      "      stablehlo.return %i1, %a2, %a, %dd, %k, %g, %dd : tensor<i32>, tensor<4xf32>, "
      "tensor<4xf32>, tensor<4xf32>, tensor<4xf32>, tensor<i1>, tensor<4xf32>\n"
      "    }\n"
      "  return %0#0, %0#1, %0#2, %0#3, %0#4, %0#5, %0#6, %x : tensor<i32>, tensor<4xf32>, "
      "tensor<4xf32>, tensor<4xf32>, tensor<4xf32>, tensor<i1>, tensor<4xf32>, tensor<4xf32>\n"
      "}\n";
  run_both("while_moves", text, 0, 0, NULL);
}

/* Compiles `text` (one op per thunk) and checks its buffer assignment:
 * at most max_heap bytes of interpreter-made values live at once (a loop's
 * carried value held outside the arena counts there) and an arena of at
 * most max_temp bytes. */
static void check_plan(const char *test, const char *text, int64_t max_heap, int64_t max_temp) {
  hlo_module *m = NULL;
  hlo_executable *ec = NULL;
  hlo_status st = hlo_module_parse(test, text, strlen(text), &m);
  if (!st) st = hlo_executable_compile(m, NULL, &single_op_cpu, &ec);
  if (no_cc(st, test)) {
    hlo_module_destroy(m);
    return;
  }
  if (st) hlo_status_print(st, stderr);
  CHECK(st == NULL);
  const runtime_cpu_stats *cs = ec ? runtime_executable_cpu_stats(ec) : NULL;
  CHECK(cs != NULL);
  if (cs) {
    if (cs->heap_peak_bytes > max_heap || cs->temp_bytes > max_temp)
      fprintf(stderr, "  %s: heap peak %lld (at most %lld), arena %lld (at most %lld)\n", test,
              (long long)cs->heap_peak_bytes, (long long)max_heap, (long long)cs->temp_bytes,
              (long long)max_temp);
    CHECK(cs->heap_peak_bytes <= max_heap);
    CHECK(cs->temp_bytes <= max_temp);
  }
  hlo_status_free(st);
  hlo_executable_destroy(ec);
  hlo_module_destroy(m);
}

/* The loop state in the arena (XLA's while buffers): carried values whose
 * results later steps read (not the function's results) live in one
 * buffer each for the whole loop, initialised once before it. The init
 * values here are shared: one 64 KiB splat (filled at run time) in two
 * slots and read again after the loop, an exponential in two slots (one
 * written in place, one passed through) and read after the loop; run twice
 * (run_both) so that the second run starts from the state the first left. */
TEST(while_state_shared_between_slots) {
  static const char *text =
      "func.func @main(%x: tensor<4x4096xf32>, %n: tensor<i32>) -> (tensor<4x4096xf32>, "
      "tensor<4x4096xf32>, tensor<4x4096xf32>, tensor<4x4096xf32>) {\n"
      "  %z = stablehlo.constant dense<0.5> : tensor<4x4096xf32>\n"
      "  %c0 = stablehlo.constant dense<0> : tensor<i32>\n"
      "  %c1 = stablehlo.constant dense<1> : tensor<i32>\n"
      "  %c4 = stablehlo.constant dense<4> : tensor<i32>\n"
      "  %w = stablehlo.exponential_minus_one %x : tensor<4x4096xf32>\n"
      "  %0:5 = stablehlo.while(%i = %c0, %a = %z, %b = %z, %c = %w, %d = %w) : tensor<i32>, "
      "tensor<4x4096xf32>, tensor<4x4096xf32>, tensor<4x4096xf32>, tensor<4x4096xf32>\n"
      "    cond {\n"
      "      %lt = stablehlo.compare LT, %i, %c4 : (tensor<i32>, tensor<i32>) -> tensor<i1>\n"
      "      stablehlo.return %lt : tensor<i1>\n"
      "    } do {\n"
      "      %row = stablehlo.dynamic_slice %x, %i, %c0, sizes = [1, 4096] : "
      "(tensor<4x4096xf32>, tensor<i32>, tensor<i32>) -> tensor<1x4096xf32>\n"
      "      %e = stablehlo.sine %row : tensor<1x4096xf32>\n"
      "      %a2 = stablehlo.dynamic_update_slice %a, %e, %i, %c0 : (tensor<4x4096xf32>, "
      "tensor<1x4096xf32>, tensor<i32>, tensor<i32>) -> tensor<4x4096xf32>\n"
      "      %b2 = stablehlo.multiply %b, %c : tensor<4x4096xf32>\n"
      "      %d2 = stablehlo.add %d, %a2 : tensor<4x4096xf32>\n"
      "      %i1 = stablehlo.add %i, %c1 : tensor<i32>\n"
      "      stablehlo.return %i1, %a2, %b2, %c, %d2 : tensor<i32>, tensor<4x4096xf32>, "
      "tensor<4x4096xf32>, tensor<4x4096xf32>, tensor<4x4096xf32>\n"
      "    }\n"
      "  %r1 = stablehlo.add %0#1, %z : tensor<4x4096xf32>\n"
      "  %r2 = stablehlo.multiply %0#2, %w : tensor<4x4096xf32>\n"
      "  %r3 = stablehlo.subtract %0#3, %0#4 : tensor<4x4096xf32>\n"
      "  %r4 = stablehlo.add %w, %x : tensor<4x4096xf32>\n"
      "  return %r1, %r2, %r3, %r4 : tensor<4x4096xf32>, tensor<4x4096xf32>, "
      "tensor<4x4096xf32>, tensor<4x4096xf32>\n"
      "}\n";
  run_both("while_state_shared", text, 0, 0, NULL); /* sine, expm1: libm both sides, bit for bit */
  /* the state in the arena, none on the heap: %w, %z's slot (taken over by
   * %a: it dies at the loop, its other reader %b copies), %b, %d (%c is
   * %w's slot, read only) and the body's 32 KB */
  check_plan("while_state_shared", text, 1024, 4 * 65536 + 32768 + 1024);
}

/* Loop state whose body moves values between slots: the old %a goes on
 * in %b's slot while %a gets a new value, and %c and %d swap; the splat
 * init is also passed through unchanged in %e and written in place in
 * %f (one buffer written, one read: the written one must copy), and the
 * loop's results are read by later steps. */
TEST(while_state_moves_between_slots) {
  static const char *text =
      "func.func @main(%x: tensor<4x4096xf32>, %y: tensor<4x4096xf32>) -> (tensor<4x4096xf32>, "
      "tensor<4x4096xf32>, tensor<4x4096xf32>, tensor<4x4096xf32>) {\n"
      "  %z = stablehlo.constant dense<0.25> : tensor<4x4096xf32>\n"
      "  %c0 = stablehlo.constant dense<0> : tensor<i32>\n"
      "  %c1 = stablehlo.constant dense<1> : tensor<i32>\n"
      "  %c3 = stablehlo.constant dense<3> : tensor<i32>\n"
      "  %u = stablehlo.exponential_minus_one %x : tensor<4x4096xf32>\n"
      "  %v = stablehlo.sine %y : tensor<4x4096xf32>\n"
      "  %0:7 = stablehlo.while(%i = %c0, %a = %u, %b = %v, %c = %u, %d = %v, %e = %z, %f = %z) : "
      "tensor<i32>, tensor<4x4096xf32>, tensor<4x4096xf32>, tensor<4x4096xf32>, "
      "tensor<4x4096xf32>, tensor<4x4096xf32>, tensor<4x4096xf32>\n"
      "    cond {\n"
      "      %lt = stablehlo.compare LT, %i, %c3 : (tensor<i32>, tensor<i32>) -> tensor<i1>\n"
      "      stablehlo.return %lt : tensor<i1>\n"
      "    } do {\n"
      "      %a2 = stablehlo.add %a, %b : tensor<4x4096xf32>\n"
      "      %f2 = stablehlo.multiply %f, %e : tensor<4x4096xf32>\n"
      "      %f3 = stablehlo.add %f2, %c : tensor<4x4096xf32>\n"
      "      %i1 = stablehlo.add %i, %c1 : tensor<i32>\n"
      "      stablehlo.return %i1, %a2, %a, %d, %c, %e, %f3 : tensor<i32>, tensor<4x4096xf32>, "
      "tensor<4x4096xf32>, tensor<4x4096xf32>, tensor<4x4096xf32>, tensor<4x4096xf32>, "
      "tensor<4x4096xf32>\n"
      "    }\n"
      "  %r1 = stablehlo.add %0#1, %0#2 : tensor<4x4096xf32>\n"
      "  %r2 = stablehlo.subtract %0#3, %0#4 : tensor<4x4096xf32>\n"
      "  %r3 = stablehlo.multiply %0#5, %0#6 : tensor<4x4096xf32>\n"
      "  %r4 = stablehlo.add %u, %v : tensor<4x4096xf32>\n"
      "  return %r1, %r2, %r3, %r4 : tensor<4x4096xf32>, tensor<4x4096xf32>, "
      "tensor<4x4096xf32>, tensor<4x4096xf32>\n"
      "}\n";
  run_both("while_state_moves", text, 0, 0, NULL);
}

/* A 64 KiB splat in three slots that all write in place: two loop
 * results are the function's (allocations of their own, filled before the
 * loop), one is read after the loop (a state slot, filled too): the splat's
 * own fill is never read and is elided. */
TEST(while_state_filled_from_a_splat) {
  static const char *text =
      "func.func @main(%x: tensor<1x4096xf32>) -> (tensor<4x4096xf32>, tensor<4x4096xf32>, "
      "tensor<4x4096xf32>) {\n"
      "  %z = stablehlo.constant dense<-1.0> : tensor<4x4096xf32>\n"
      "  %c0 = stablehlo.constant dense<0> : tensor<i32>\n"
      "  %c1 = stablehlo.constant dense<1> : tensor<i32>\n"
      "  %c3 = stablehlo.constant dense<3> : tensor<i32>\n"
      "  %0:4 = stablehlo.while(%i = %c0, %a = %z, %b = %z, %c = %z) : tensor<i32>, "
      "tensor<4x4096xf32>, tensor<4x4096xf32>, tensor<4x4096xf32>\n"
      "    cond {\n"
      "      %lt = stablehlo.compare LT, %i, %c3 : (tensor<i32>, tensor<i32>) -> tensor<i1>\n"
      "      stablehlo.return %lt : tensor<i1>\n"
      "    } do {\n"
      "      %e = stablehlo.exponential_minus_one %x : tensor<1x4096xf32>\n"
      "      %a2 = stablehlo.dynamic_update_slice %a, %e, %i, %c0 : (tensor<4x4096xf32>, "
      "tensor<1x4096xf32>, tensor<i32>, tensor<i32>) -> tensor<4x4096xf32>\n"
      "      %g = stablehlo.negate %x : tensor<1x4096xf32>\n"
      "      %b2 = stablehlo.dynamic_update_slice %b, %g, %i, %c0 : (tensor<4x4096xf32>, "
      "tensor<1x4096xf32>, tensor<i32>, tensor<i32>) -> tensor<4x4096xf32>\n"
      "      %c2 = stablehlo.multiply %c, %c : tensor<4x4096xf32>\n"
      "      %i1 = stablehlo.add %i, %c1 : tensor<i32>\n"
      "      stablehlo.return %i1, %a2, %b2, %c2 : tensor<i32>, tensor<4x4096xf32>, "
      "tensor<4x4096xf32>, tensor<4x4096xf32>\n"
      "    }\n"
      "  %r = stablehlo.add %0#3, %0#1 : tensor<4x4096xf32>\n"
      "  return %0#1, %0#2, %r : tensor<4x4096xf32>, tensor<4x4096xf32>, tensor<4x4096xf32>\n"
      "}\n";
  run_both("while_state_filled", text, 0, 0, NULL);
  /* %c's state and the body's 32 KB in the arena; the splat's own slot
   * elided (every reader fills its own buffer) */
  check_plan("while_state_filled", text, 1024, 65536 + 32768 + 1024);
}

TEST(compile_options_cost_and_memory_through_the_api) {
  /* hlo_executable_compile with the cpu pipeline and a dump folder: the
   * caller's module is not rewritten, the dumps are written, and the cost
   * and memory analyses describe the program */
  static const char *text =
      "func.func @main(%x: tensor<4x8xf32>, %w: tensor<8x2xf32>) -> tensor<4x2xf32> {\n"
      "  %0 = stablehlo.dot_general %x, %w, contracting_dims = [1] x [0] : (tensor<4x8xf32>, tensor<8x2xf32>) -> tensor<4x2xf32>\n"
      "  %1 = stablehlo.exponential %0 : tensor<4x2xf32>\n"
      "  %2 = stablehlo.add %1, %0 : tensor<4x2xf32>\n"
      "  return %2 : tensor<4x2xf32>\n"
      "}\n";
  hlo_module *m = NULL;
  CHECK(hlo_module_parse("opts", text, strlen(text), &m) == NULL);
  if (!m) return;
  char dir[] = "/tmp/hlo_test_dump.XXXXXX";
  CHECK(mkdtemp(dir) != NULL);
  char sub[64];
  snprintf(sub, sizeof sub, "%s/d", dir);
  hlo_compile_options o = {.backend = HLO_BACKEND_CPU, .passes = "cpu", .dump_dir = sub};
  hlo_executable *e = NULL;
  hlo_status st = hlo_executable_compile(m, NULL, &o, &e);
  if (no_cc(st, "compile_options")) {
    hlo_module_destroy(m);
    return;
  }
  CHECK(st == NULL);
  /* the caller's module keeps its 4 ops: the pipeline ran on a copy */
  const hlo_module_ir *ir = runtime_module_ir(m);
  uint32_t n = 0;
  for (const hlo_op *op = ir->funcs->body.block.first; op; op = op->next) n++;
  CHECK_EQ_INT((int)n, 4);
  char path[128];
  snprintf(path, sizeof path, "%s/buffer_assignment.txt", sub);
  FILE *f = fopen(path, "r");
  CHECK(f != NULL);
  if (f) fclose(f);
  hlo_cost_analysis c;
  CHECK(e && hlo_executable_cost_analysis(e, &c) == NULL);
  /* 2*4*8*2 for the dot, 8 for the add; 8 transcendentals (exp) */
  CHECK(c.flops == 136.0);
  CHECK(c.transcendentals == 8.0);
  hlo_memory_analysis ma;
  CHECK(e && hlo_executable_memory_analysis(e, &ma) == NULL);
  CHECK(ma.argument_bytes == 4 * 8 * 4 + 8 * 2 * 4);
  CHECK(ma.output_bytes == 4 * 2 * 4);
  CHECK(ma.peak_bytes >= ma.argument_bytes + ma.output_bytes + ma.temp_bytes);
  hlo_executable_destroy(e);
  /* the interpreter has no buffer assignment; an unknown pass is named */
  hlo_compile_options oi = {.backend = HLO_BACKEND_INTERP};
  CHECK(hlo_executable_compile(m, NULL, &oi, &e) == NULL);
  st = e ? hlo_executable_memory_analysis(e, &ma) : NULL;
  CHECK(st && hlo_status_code_of(st) == HLO_INVALID_ARGUMENT);
  hlo_status_free(st);
  hlo_executable_destroy(e);
  hlo_compile_options ob = {.backend = HLO_BACKEND_CPU, .passes = "simplify,no-such-pass"};
  e = NULL;
  st = hlo_executable_compile(m, NULL, &ob, &e);
  CHECK(st && hlo_status_code_of(st) == HLO_INVALID_ARGUMENT &&
        strstr(hlo_status_message(st), "no-such-pass"));
  CHECK(e == NULL);
  hlo_status_free(st);
  hlo_module_destroy(m);
  char cmd[160];
  snprintf(cmd, sizeof cmd, "rm -rf '%s'", dir);
  CHECK(system(cmd) == 0);
}

TEST(empty_tensors) {
  /* zero-element values (a reduce over a dim of a 3x1x0 operand, after the
   * pipeline's transpose; an empty dynamic_slice) still get buffers: the
   * arena is never empty (a difftest case once failed "has no buffer") */
  static const char *text =
      "func.func @main(%a: tensor<3x1x0xf64>, %b: tensor<3x1x0xi64>) -> (tensor<3x0xf64>, tensor<3x0xi64>) {\n"
      "  %cst = stablehlo.constant dense<0xFFF0000000000000> : tensor<f64>\n"
      "  %c = stablehlo.constant dense<-9223372036854775808> : tensor<i64>\n"
      "  %0:2 = stablehlo.reduce(%a init: %cst), (%b init: %c) across dimensions = [1] : (tensor<3x1x0xf64>, tensor<3x1x0xi64>, tensor<f64>, tensor<i64>) -> (tensor<3x0xf64>, tensor<3x0xi64>)\n"
      "   reducer(%p: tensor<f64>, %q: tensor<f64>) (%r: tensor<i64>, %t: tensor<i64>) {\n"
      "    %1 = stablehlo.maximum %p, %q : tensor<f64>\n"
      "    %2 = stablehlo.maximum %r, %t : tensor<i64>\n"
      "    stablehlo.return %1, %2 : tensor<f64>, tensor<i64>\n"
      "  }\n"
      "  return %0#0, %0#1 : tensor<3x0xf64>, tensor<3x0xi64>\n"
      "}\n";
  hlo_module *m = NULL;
  CHECK(hlo_module_parse("empty", text, strlen(text), &m) == NULL);
  hlo_compile_options o = {.backend = HLO_BACKEND_CPU};
  hlo_executable *e = NULL;
  hlo_status st = m ? hlo_executable_compile(m, NULL, &o, &e) : NULL;
  if (no_cc(st, "empty_tensors")) {
    hlo_module_destroy(m);
    return;
  }
  CHECK(st == NULL);
  int64_t d[3] = {3, 1, 0};
  hlo_buffer_view v[2] = {{HLO_F64, 3, d, ""}, {HLO_I64, 3, d, ""}};
  hlo_buffer **res = NULL;
  st = e ? hlo_executable_run(e, v, 2, &res) : NULL;
  if (st) hlo_status_print(st, stderr);
  CHECK(st == NULL && res != NULL);
  for (int k = 0; res && k < 2; k++) {
    CHECK(hlo_buffer_nbytes(res[k]) == 0);
    hlo_buffer_destroy(res[k]);
  }
  free(res);
  hlo_status_free(st);
  hlo_executable_destroy(e);
  hlo_module_destroy(m);
}

TEST(reshape_aliases_keep_their_bytes) {
  /* a reshape (an alias of an arena slot) returned as a result, or fed to a
   * while, keeps the slot until it is read: a later temporary once took
   * those bytes (a newcomer's fuzzer found it) */
  static const char *text =
      "func.func @main(%a: tensor<4x8xf32>, %w: tensor<8x6xf32>, %b: tensor<3x5xf32>, %n: tensor<i32>) "
      "-> (tensor<2x12xf32>, tensor<3x5xf32>, tensor<3x5xf32>) {\n"
      "  %d = stablehlo.dot_general %a, %w, contracting_dims = [1] x [0] : (tensor<4x8xf32>, tensor<8x6xf32>) -> tensor<4x6xf32>\n"
      "  %r = stablehlo.reshape %d : (tensor<4x6xf32>) -> tensor<2x12xf32>\n"
      "  %z = stablehlo.constant dense<0.0> : tensor<f32>\n"
      "  %e = stablehlo.exponential %b : tensor<3x5xf32>\n"
      "  %m = stablehlo.reduce(%e init: %z) applies stablehlo.add across dimensions = [0] : (tensor<3x5xf32>, tensor<f32>) -> tensor<5xf32>\n"
      "  %o = stablehlo.broadcast_in_dim %m, dims = [1] : (tensor<5xf32>) -> tensor<3x5xf32>\n"
      "  %t = stablehlo.transpose %b, dims = [1, 0] : (tensor<3x5xf32>) -> tensor<5x3xf32>\n"
      "  %q = stablehlo.reshape %t : (tensor<5x3xf32>) -> tensor<3x5xf32>\n"
      "  %c0 = stablehlo.constant dense<0> : tensor<i32>\n"
      "  %c1 = stablehlo.constant dense<1> : tensor<i32>\n"
      "  %w2:2 = stablehlo.while(%x = %q, %k = %c0) : tensor<3x5xf32>, tensor<i32>\n"
      "    cond {\n"
      "      %lt = stablehlo.compare LT, %k, %n : (tensor<i32>, tensor<i32>) -> tensor<i1>\n"
      "      stablehlo.return %lt : tensor<i1>\n"
      "    } do {\n"
      "      %y = stablehlo.multiply %x, %e : tensor<3x5xf32>\n"
      "      %k2 = stablehlo.add %k, %c1 : tensor<i32>\n"
      "      stablehlo.return %y, %k2 : tensor<3x5xf32>, tensor<i32>\n"
      "    }\n"
      "  %f = stablehlo.add %w2#0, %o : tensor<3x5xf32>\n"
      "  return %r, %o, %f : tensor<2x12xf32>, tensor<3x5xf32>, tensor<3x5xf32>\n"
      "}\n";
  run_both("reshape_alias", text, 0x7, 8, NULL);
}

TEST(missing_compiler_is_unavailable) {
  static const char *text =
      "func.func @main(%x: tensor<4xf32>) -> tensor<4xf32> {\n"
      "  %0 = stablehlo.negate %x : tensor<4xf32>\n"
      "  return %0 : tensor<4xf32>\n"
      "}\n";
  static const char *no_kernels =
      "func.func @main(%x: tensor<4xf32>) -> tensor<4xf32> {\n"
      "  %0 = \"stablehlo.sort\"(%x) ({\n"
      "    ^bb0(%a: tensor<f32>, %q: tensor<f32>):\n"
      "      %l = stablehlo.compare GT, %a, %q : (tensor<f32>, tensor<f32>) -> tensor<i1>\n"
      "      stablehlo.return %l : tensor<i1>\n"
      "  }) {dimension = 0 : i64} : (tensor<4xf32>) -> tensor<4xf32>\n"
      "  return %0 : tensor<4xf32>\n"
      "}\n";
  const char *old = getenv("HLO_CC");
  char *saved = old ? strdup(old) : NULL;
  setenv("HLO_CC", "/nonexistent/hlo-no-cc", 1);
  hlo_module *m = NULL;
  hlo_executable *e = NULL;
  hlo_status st = hlo_module_parse("nocc", text, strlen(text), &m);
  CHECK(st == NULL);
  if (!st) st = hlo_executable_compile(m, NULL, &single_op_cpu, &e);
  CHECK(st && hlo_status_code_of(st) == HLO_UNAVAILABLE);
  CHECK(e == NULL);
  if (st) CHECK(strstr(hlo_status_message(st), "no C compiler") != NULL);
  hlo_status_free(st);
  hlo_module_destroy(m);
  /* a program without kernels needs no compiler */
  m = NULL;
  st = hlo_module_parse("nocc2", no_kernels, strlen(no_kernels), &m);
  if (!st) st = hlo_executable_compile(m, NULL, &single_op_cpu, &e);
  CHECK(st == NULL);
  if (!st) {
    float x[4] = {1, 4, -2, 3};
    int64_t d = 4;
    hlo_buffer_view v = {HLO_F32, 1, &d, x};
    hlo_buffer **r = NULL;
    st = hlo_executable_run(e, &v, 1, &r);
    CHECK(st == NULL);
    if (r) {
      const float *o = hlo_buffer_data(r[0]);
      CHECK(o[0] == 4 && o[1] == 3 && o[2] == 1 && o[3] == -2);
      hlo_buffer_destroy(r[0]);
      free(r);
    }
  }
  hlo_status_free(st);
  hlo_executable_destroy(e);
  hlo_module_destroy(m);
  if (saved) setenv("HLO_CC", saved, 1);
  else unsetenv("HLO_CC");
  free(saved);
}

TEST(thunk_errors_are_located) {
  static const char *text =
      "func.func @main(%x: tensor<3xi32>) -> tensor<3xi32> {\n"
      "  %0 = stablehlo.abs %x : tensor<3xi32>\n"
      "  %c = stablehlo.constant dense<[1, 2, 3]> : tensor<3xi32>\n"
      "  stablehlo.custom_call @check.expect_eq(%0, %c) {has_side_effect = true} : (tensor<3xi32>, tensor<3xi32>) -> ()\n"
      "  return %0 : tensor<3xi32>\n"
      "}\n";
  hlo_module *m = NULL;
  hlo_executable *e = NULL;
  hlo_status st = hlo_module_parse("located", text, strlen(text), &m);
  CHECK(st == NULL);
  if (!st) st = hlo_executable_compile(m, NULL, &single_op_cpu, &e);
  if (no_cc(st, "located")) {
    hlo_module_destroy(m);
    return;
  }
  CHECK(st == NULL);
  if (!st) {
    int32_t x[3] = {-1, 2, -4};
    int64_t d = 3;
    hlo_buffer_view v = {HLO_I32, 1, &d, x};
    hlo_buffer **r = NULL;
    st = hlo_executable_run(e, &v, 1, &r);
    CHECK(st != NULL);
    if (st) CHECK(strstr(hlo_status_message(st), "located:4:") != NULL ||
                  strstr(hlo_status_message(st), "check.expect_eq") != NULL);
    CHECK(r == NULL);
  }
  hlo_status_free(st);
  hlo_executable_destroy(e);
  hlo_module_destroy(m);
}

/* One CPU executable run from 4 threads at once (runs take turns on the
 * executable's lock; every result must be right). */
typedef struct cjob {
  hlo_executable *e;
  int ok;
} cjob;

static void *cworker(void *p) {
  cjob *j = p;
  j->ok = 1;
  for (int rep = 0; rep < 10; rep++) {
    float x[64];
    for (int i = 0; i < 64; i++) x[i] = (float)(i % 7) - 3.0f + (float)rep;
    int64_t d[2] = {8, 8};
    hlo_buffer_view v = {HLO_F32, 2, d, x};
    hlo_buffer **r = NULL;
    hlo_status st = hlo_executable_run(j->e, &v, 1, &r);
    if (st) {
      hlo_status_free(st);
      j->ok = 0;
      break;
    }
    const float *o = hlo_buffer_data(r[0]);
    for (int i = 0; i < 8; i++) {
      float want = 0;
      for (int k = 0; k < 8; k++) want += x[i * 8 + k] * 2.0f;
      if (fabsf(o[i] - want) > 1e-4f * (1 + fabsf(want))) j->ok = 0;
    }
    hlo_buffer_destroy(r[0]);
    free(r);
  }
  return NULL;
}

TEST(runs_from_threads) {
  static const char *text =
      "func.func @main(%x: tensor<8x8xf32>) -> tensor<8xf32> {\n"
      "  %two = stablehlo.constant dense<2.0> : tensor<8x8xf32>\n"
      "  %0 = stablehlo.multiply %x, %two : tensor<8x8xf32>\n"
      "  %z = stablehlo.constant dense<0.0> : tensor<f32>\n"
      "  %1 = stablehlo.reduce(%0 init: %z) applies stablehlo.add across dimensions = [1] : (tensor<8x8xf32>, tensor<f32>) -> tensor<8xf32>\n"
      "  return %1 : tensor<8xf32>\n"
      "}\n";
  hlo_module *m = NULL;
  hlo_executable *e = NULL;
  hlo_status st = hlo_module_parse("threads", text, strlen(text), &m);
  CHECK(st == NULL);
  if (!st) st = hlo_executable_compile(m, NULL, &single_op_cpu, &e);
  if (no_cc(st, "threads")) {
    hlo_module_destroy(m);
    return;
  }
  CHECK(st == NULL);
  if (!st) {
    pthread_t th[4];
    cjob jobs[4];
    for (int i = 0; i < 4; i++) {
      jobs[i] = (cjob){e, 0};
      pthread_create(&th[i], NULL, cworker, &jobs[i]);
    }
    for (int i = 0; i < 4; i++) {
      pthread_join(th[i], NULL);
      CHECK(jobs[i].ok);
    }
  }
  hlo_status_free(st);
  hlo_executable_destroy(e);
  hlo_module_destroy(m);
}

TEST_MAIN()
