/* test_cpu_loop.c — stablehlo.while on fixed buffers
 * (src/runtime/executable_cpu_loop.c): each program's results on the CPU
 * backend against the interpreter's (tl_backends_agree: two runs of one
 * executable, bit for bit), and whether the loop ran on fixed buffers
 * (runtime_cpu_stats.fixed_loop_runs, one per loop run) or step by step.
 * Covers each kind of carried slot (a value passed through, one written in
 * place, one made anew: double-buffered), results that are another
 * argument (a swap), one value returned twice, a constant, an outer
 * value, a GEMM and a reshape in the body, a dynamic_update_slice scan,
 * a known trip count, a loop with a data-dependent exit, and the loops
 * that keep run_while's path (a sort in the body; state past the
 * path's own-memory limit) with the same results. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "hlo/hlo.h"
#include "runtime/runtime.h"
#include "test.h"
#include "testlib.h"

/* The loops of this file over 0-d values would run as one kernel each
 * (codegen/lower_while.h; test_loop_kernel.c): off, to test the loop
 * machinery they would otherwise skip. */
__attribute__((constructor)) static void no_loop_kernels(void) {
  setenv("HLO_LOOP_KERNELS", "0", 1);
}

/* Runs `text` on both backends; *runs gets fixed_loop_runs. Results
 * bit for bit, but those in ulp_mask within 16 ULP (a GEMM sums in
 * another order). */
static bool agree_within(const char *name, const char *text, unsigned ulp_mask, uint64_t *runs) {
  runtime_cpu_stats cs = {0};
  bool skipped = false;
  /* not tiered: both runs on the native code */
  hlo_compile_options o = {.backend = HLO_BACKEND_CPU, .no_tiering = true, .no_cache = true};
  bool ok = tl_backends_agree(name, text, &o, ulp_mask, 16, 7, &cs, &skipped);
  *runs = skipped ? UINT64_MAX : cs.fixed_loop_runs;
  return ok;
}

static bool agree(const char *name, const char *text, uint64_t *runs) {
  return agree_within(name, text, 0, runs);
}

/* The loops below run twice (tl_backends_agree's two runs): taken on
 * fixed buffers both times, or never. */
#define FIXED(runs) ((runs) == UINT64_MAX || (runs) == 2)
#define STEPWISE(runs) ((runs) == UINT64_MAX || (runs) == 0)

/* The cond region of a loop over the counter %i: while %i < n (a
 * decimal literal), then the body's opening. */
#define COND_I_BELOW(n)                                                                         \
  "    cond {\n"                                                                                \
  "      %n = stablehlo.constant dense<" #n "> : tensor<i32>\n"                                \
  "      %g = stablehlo.compare LT, %i, %n, SIGNED : (tensor<i32>, tensor<i32>) -> tensor<i1>\n" \
  "      stablehlo.return %g : tensor<i1>\n"                                                    \
  "    } do {\n"

/* Collatz from arg + 1 (1..9): a data-dependent exit, two scalar carried
 * values made anew each iteration. */
static const char *collatz =
    "func.func @main(%a: tensor<i32>) -> (tensor<i32>, tensor<i32>) {\n"
    "  %one = stablehlo.constant dense<1> : tensor<i32>\n"
    "  %z = stablehlo.constant dense<0> : tensor<i32>\n"
    "  %n0 = stablehlo.add %a, %one : tensor<i32>\n"
    "  %r:2 = stablehlo.while(%n = %n0, %k = %z) : tensor<i32>, tensor<i32>\n"
    "    cond {\n"
    "      %c1 = stablehlo.constant dense<1> : tensor<i32>\n"
    "      %g = stablehlo.compare NE, %n, %c1, SIGNED : (tensor<i32>, tensor<i32>) -> tensor<i1>\n"
    "      stablehlo.return %g : tensor<i1>\n"
    "    } do {\n"
    "      %c1 = stablehlo.constant dense<1> : tensor<i32>\n"
    "      %c2 = stablehlo.constant dense<2> : tensor<i32>\n"
    "      %c3 = stablehlo.constant dense<3> : tensor<i32>\n"
    "      %c0 = stablehlo.constant dense<0> : tensor<i32>\n"
    "      %m = stablehlo.remainder %n, %c2 : tensor<i32>\n"
    "      %e = stablehlo.compare EQ, %m, %c0, SIGNED : (tensor<i32>, tensor<i32>) -> tensor<i1>\n"
    "      %h = stablehlo.divide %n, %c2 : tensor<i32>\n"
    "      %t = stablehlo.multiply %n, %c3 : tensor<i32>\n"
    "      %t1 = stablehlo.add %t, %c1 : tensor<i32>\n"
    "      %nn = stablehlo.select %e, %h, %t1 : tensor<i1>, tensor<i32>\n"
    "      %k1 = stablehlo.add %k, %c1 : tensor<i32>\n"
    "      stablehlo.return %nn, %k1 : tensor<i32>, tensor<i32>\n"
    "    }\n"
    "  return %r#0, %r#1 : tensor<i32>, tensor<i32>\n"
    "}\n";

TEST(data_dependent_exit) {
  uint64_t runs;
  CHECK(agree("collatz", collatz, &runs));
  CHECK(FIXED(runs));
}

/* A fori loop: a counter, an accumulator updated in place, a vector passed
 * through unchanged, and an outer value read by the body. */
static const char *fori =
    "func.func @main(%w: tensor<8xf32>, %b: tensor<8xf32>, %x: tensor<8xf32>)\n"
    "    -> (tensor<8xf32>, tensor<8xf32>, tensor<i32>) {\n"
    "  %z = stablehlo.constant dense<0> : tensor<i32>\n"
    "  %r:3 = stablehlo.while(%i = %z, %acc = %x, %ww = %w) : tensor<i32>, tensor<8xf32>, tensor<8xf32>\n"
    COND_I_BELOW(5)
    "      %one = stablehlo.constant dense<1> : tensor<i32>\n"
    "      %i1 = stablehlo.add %i, %one : tensor<i32>\n"
    "      %m = stablehlo.multiply %acc, %ww : tensor<8xf32>\n"
    "      %a1 = stablehlo.add %m, %b : tensor<8xf32>\n"
    "      stablehlo.return %i1, %a1, %ww : tensor<i32>, tensor<8xf32>, tensor<8xf32>\n"
    "    }\n"
    "  return %r#1, %r#2, %r#0 : tensor<8xf32>, tensor<8xf32>, tensor<i32>\n"
    "}\n";

TEST(counter_accumulator_and_passed_through) {
  uint64_t runs;
  CHECK(agree("fori", fori, &runs));
  CHECK(FIXED(runs));
}

/* Results that are the other argument (a swap: each slot's next state is
 * read from the other's current one), one value returned twice, and a
 * constant result. */
static const char *swap =
    "func.func @main(%x: tensor<4xf32>, %y: tensor<4xf32>)\n"
    "    -> (tensor<4xf32>, tensor<4xf32>, tensor<4xf32>, tensor<4xf32>, tensor<4xf32>) {\n"
    "  %z = stablehlo.constant dense<0> : tensor<i32>\n"
    "  %r:6 = stablehlo.while(%i = %z, %a = %x, %b = %y, %s = %x, %t = %y, %c = %x)\n"
    "      : tensor<i32>, tensor<4xf32>, tensor<4xf32>, tensor<4xf32>, tensor<4xf32>, tensor<4xf32>\n"
    COND_I_BELOW(3)
    "      %one = stablehlo.constant dense<1> : tensor<i32>\n"
    "      %i1 = stablehlo.add %i, %one : tensor<i32>\n"
    "      %u = stablehlo.add %a, %b : tensor<4xf32>\n"
    "      %v = stablehlo.multiply %u, %s : tensor<4xf32>\n"
    "      %k = stablehlo.constant dense<[1.0, 2.0, 3.0, 4.0]> : tensor<4xf32>\n"
    "      stablehlo.return %i1, %b, %a, %v, %v, %k\n"
    "          : tensor<i32>, tensor<4xf32>, tensor<4xf32>, tensor<4xf32>, tensor<4xf32>, tensor<4xf32>\n"
    "    }\n"
    "  return %r#1, %r#2, %r#3, %r#4, %r#5\n"
    "      : tensor<4xf32>, tensor<4xf32>, tensor<4xf32>, tensor<4xf32>, tensor<4xf32>\n"
    "}\n";

TEST(swapped_twice_returned_and_constant_results) {
  uint64_t runs;
  CHECK(agree("swap", swap, &runs));
  CHECK(FIXED(runs));
}

/* A GEMM (a BLAS step) and reshapes (aliases) in the body. */
static const char *gemm =
    "func.func @main(%x: tensor<16x16xf32>, %w: tensor<16x16xf32>) -> tensor<256xf32> {\n"
    "  %z = stablehlo.constant dense<0> : tensor<i32>\n"
    "  %x1 = stablehlo.reshape %x : (tensor<16x16xf32>) -> tensor<256xf32>\n"
    "  %r:2 = stablehlo.while(%i = %z, %a = %x1) : tensor<i32>, tensor<256xf32>\n"
    COND_I_BELOW(4)
    "      %one = stablehlo.constant dense<1> : tensor<i32>\n"
    "      %i1 = stablehlo.add %i, %one : tensor<i32>\n"
    "      %m = stablehlo.reshape %a : (tensor<256xf32>) -> tensor<16x16xf32>\n"
    "      %p = stablehlo.dot_general %m, %w, contracting_dims = [1] x [0] :\n"
    "           (tensor<16x16xf32>, tensor<16x16xf32>) -> tensor<16x16xf32>\n"
    "      %h = stablehlo.constant dense<0.0625> : tensor<16x16xf32>\n"
    "      %q = stablehlo.multiply %p, %h : tensor<16x16xf32>\n"
    "      %f = stablehlo.reshape %q : (tensor<16x16xf32>) -> tensor<256xf32>\n"
    "      stablehlo.return %i1, %f : tensor<i32>, tensor<256xf32>\n"
    "    }\n"
    "  return %r#1 : tensor<256xf32>\n"
    "}\n";

TEST(gemm_and_reshapes_in_the_body) {
  uint64_t runs;
  CHECK(agree_within("gemm", gemm, 1, &runs));
  CHECK(FIXED(runs));
}

/* A scan: each iteration reads a row (dynamic_slice) and writes a row of a
 * stacked result in place (dynamic_update_slice). */
static const char *scan =
    "func.func @main(%xs: tensor<6x8xf32>, %h0: tensor<8xf32>) -> (tensor<6x8xf32>, tensor<8xf32>) {\n"
    "  %z = stablehlo.constant dense<0> : tensor<i32>\n"
    "  %f0 = stablehlo.constant dense<0.0> : tensor<6x8xf32>\n"
    "  %r:3 = stablehlo.while(%i = %z, %h = %h0, %ys = %f0) : tensor<i32>, tensor<8xf32>, tensor<6x8xf32>\n"
    COND_I_BELOW(6)
    "      %one = stablehlo.constant dense<1> : tensor<i32>\n"
    "      %c0 = stablehlo.constant dense<0> : tensor<i32>\n"
    "      %row = stablehlo.dynamic_slice %xs, %i, %c0, sizes = [1, 8] :\n"
    "             (tensor<6x8xf32>, tensor<i32>, tensor<i32>) -> tensor<1x8xf32>\n"
    "      %r1 = stablehlo.reshape %row : (tensor<1x8xf32>) -> tensor<8xf32>\n"
    "      %s = stablehlo.add %h, %r1 : tensor<8xf32>\n"
    "      %hf = stablehlo.constant dense<0.5> : tensor<8xf32>\n"
    "      %h1 = stablehlo.multiply %s, %hf : tensor<8xf32>\n"
    "      %h2 = stablehlo.reshape %h1 : (tensor<8xf32>) -> tensor<1x8xf32>\n"
    "      %ys1 = stablehlo.dynamic_update_slice %ys, %h2, %i, %c0 :\n"
    "             (tensor<6x8xf32>, tensor<1x8xf32>, tensor<i32>, tensor<i32>) -> tensor<6x8xf32>\n"
    "      %i1 = stablehlo.add %i, %one : tensor<i32>\n"
    "      stablehlo.return %i1, %h1, %ys1 : tensor<i32>, tensor<8xf32>, tensor<6x8xf32>\n"
    "    }\n"
    "  return %r#2, %r#1 : tensor<6x8xf32>, tensor<8xf32>\n"
    "}\n";

TEST(scan_with_slices_in_place) {
  uint64_t runs;
  CHECK(agree("scan", scan, &runs));
  CHECK(FIXED(runs));
}

/* A loop whose trip count the compiler knows (while-loop-trip-count):
 * the cond is not run. */
static const char *known_trips =
    "func.func @main(%x: tensor<3xi32>) -> tensor<3xi32> {\n"
    "  %z = stablehlo.constant dense<0> : tensor<i32>\n"
    "  %r:2 = stablehlo.while(%i = %z, %a = %x) : tensor<i32>, tensor<3xi32>\n"
    COND_I_BELOW(7)
    "      %one = stablehlo.constant dense<1> : tensor<i32>\n"
    "      %i1 = stablehlo.add %i, %one : tensor<i32>\n"
    "      %b = stablehlo.broadcast_in_dim %i, dims = [] : (tensor<i32>) -> tensor<3xi32>\n"
    "      %a1 = stablehlo.multiply %a, %b : tensor<3xi32>\n"
    "      %a2 = stablehlo.add %a1, %a : tensor<3xi32>\n"
    "      stablehlo.return %i1, %a2 : tensor<i32>, tensor<3xi32>\n"
    "    }\n"
    "  return %r#1 : tensor<3xi32>\n"
    "}\n";

TEST(known_trip_count) {
  uint64_t runs;
  CHECK(agree("known_trips", known_trips, &runs));
  CHECK(FIXED(runs));
}

/* The init value of a carried slot that the body ALSO reads directly (a
 * captured value): the slot written in place must not be the init's own
 * buffer, or the body's direct reads see the updated state from the
 * second iteration on ((4 x^2)^2 expected, not (8 x^2)^2). The result is
 * not the loop's own, so that the state lies in the arena. */
static const char *init_also_captured =
    "func.func @main(%x: tensor<1024xf32>) -> tensor<1024xf32> {\n"
    "  %z = stablehlo.constant dense<0> : tensor<i32>\n"
    "  %init = stablehlo.multiply %x, %x : tensor<1024xf32>\n"
    "  %r:2 = stablehlo.while(%a = %init, %i = %z) : tensor<1024xf32>, tensor<i32>\n"
    COND_I_BELOW(3)
    "      %one = stablehlo.constant dense<1> : tensor<i32>\n"
    "      %i1 = stablehlo.add %i, %one : tensor<i32>\n"
    "      %s = stablehlo.add %a, %init : tensor<1024xf32>\n"
    "      stablehlo.return %s, %i1 : tensor<1024xf32>, tensor<i32>\n"
    "    }\n"
    "  %o = stablehlo.multiply %r#0, %r#0 : tensor<1024xf32>\n"
    "  return %o : tensor<1024xf32>\n"
    "}\n";

TEST(init_value_also_read_by_the_body) {
  uint64_t runs;
  CHECK(agree("init_also_captured", init_also_captured, &runs));
  CHECK(FIXED(runs));
}

/* A large splat in the body (128 KiB: filled at run time into the body's
 * arena, STEP_FILL) updated by a dynamic_update_slice and reduced into the
 * carried vector: the fill runs every iteration in its arena slot. */
static const char *body_fill =
    "func.func @main(%x: tensor<1x128xf32>) -> tensor<1x128xf32> {\n"
    "  %z = stablehlo.constant dense<0> : tensor<i32>\n"
    "  %r:2 = stablehlo.while(%a = %x, %i = %z) : tensor<1x128xf32>, tensor<i32>\n"
    COND_I_BELOW(4)
    "      %one = stablehlo.constant dense<1> : tensor<i32>\n"
    "      %c0 = stablehlo.constant dense<0> : tensor<i32>\n"
    "      %i1 = stablehlo.add %i, %one : tensor<i32>\n"
    "      %big = stablehlo.constant dense<0.5> : tensor<256x128xf32>\n"
    "      %u = stablehlo.dynamic_update_slice %big, %a, %i, %c0 :\n"
    "           (tensor<256x128xf32>, tensor<1x128xf32>, tensor<i32>, tensor<i32>) -> tensor<256x128xf32>\n"
    "      %f = stablehlo.constant dense<0.0> : tensor<f32>\n"
    "      %s = stablehlo.reduce(%u init: %f) applies stablehlo.add across dimensions = [0] :\n"
    "           (tensor<256x128xf32>, tensor<f32>) -> tensor<128xf32>\n"
    "      %s1 = stablehlo.reshape %s : (tensor<128xf32>) -> tensor<1x128xf32>\n"
    "      stablehlo.return %s1, %i1 : tensor<1x128xf32>, tensor<i32>\n"
    "    }\n"
    "  return %r#0 : tensor<1x128xf32>\n"
    "}\n";

TEST(large_splat_filled_in_the_body) {
  uint64_t runs;
  /* a sum over 256 rows in another order than the interpreter's */
  CHECK(agree_within("body_fill", body_fill, 1, &runs));
  CHECK(FIXED(runs));
}

/* A sort in the body: not a step of the fixed path; run_while runs it. */
static const char *with_sort =
    "func.func @main(%x: tensor<5xf32>) -> tensor<5xf32> {\n"
    "  %z = stablehlo.constant dense<0> : tensor<i32>\n"
    "  %r:2 = stablehlo.while(%i = %z, %a = %x) : tensor<i32>, tensor<5xf32>\n"
    COND_I_BELOW(2)
    "      %one = stablehlo.constant dense<1> : tensor<i32>\n"
    "      %i1 = stablehlo.add %i, %one : tensor<i32>\n"
    "      %n = stablehlo.negate %a : tensor<5xf32>\n"
    "      %s = \"stablehlo.sort\"(%n) ({\n"
    "      ^bb0(%p: tensor<f32>, %q: tensor<f32>):\n"
    "        %lt = stablehlo.compare LT, %p, %q, FLOAT : (tensor<f32>, tensor<f32>) -> tensor<i1>\n"
    "        stablehlo.return %lt : tensor<i1>\n"
    "      }) {dimension = 0 : i64, is_stable = true} : (tensor<5xf32>) -> tensor<5xf32>\n"
    "      stablehlo.return %i1, %s : tensor<i32>, tensor<5xf32>\n"
    "    }\n"
    "  return %r#1 : tensor<5xf32>\n"
    "}\n";

TEST(sort_in_the_body_runs_step_by_step) {
  uint64_t runs;
  CHECK(agree("with_sort", with_sort, &runs));
  CHECK(STEPWISE(runs));
}

/* State past the path's own-memory limit (a 1.2 MB buffer for a slot
 * written in place, the loop's result being an allocation of its own):
 * run_while's path, which takes the dying operand over instead. */
static const char *big_state =
    "func.func @main(%x: tensor<300000xf32>) -> tensor<300000xf32> {\n"
    "  %z = stablehlo.constant dense<0> : tensor<i32>\n"
    "  %r:2 = stablehlo.while(%i = %z, %a = %x) : tensor<i32>, tensor<300000xf32>\n"
    COND_I_BELOW(2)
    "      %one = stablehlo.constant dense<1> : tensor<i32>\n"
    "      %i1 = stablehlo.add %i, %one : tensor<i32>\n"
    "      %a1 = stablehlo.multiply %a, %a : tensor<300000xf32>\n"
    "      %a2 = stablehlo.add %a1, %x : tensor<300000xf32>\n"
    "      stablehlo.return %i1, %a2 : tensor<i32>, tensor<300000xf32>\n"
    "    }\n"
    "  return %r#1 : tensor<300000xf32>\n"
    "}\n";

TEST(large_state_keeps_the_stepwise_path) {
  uint64_t runs;
  CHECK(agree("big_state", big_state, &runs));
  CHECK(STEPWISE(runs));
}

TEST_MAIN()
