/* test_loop_kernel.c — stablehlo.while over 0-d values run as one LOOP
 * kernel (codegen/lower_while.c, kernel.h "Loops", cstyle.c print_loop):
 * each program's results on the CPU backend against the interpreter's,
 * bit for bit (tl_backends_agree), with runtime_cpu_stats.loop_kernels
 * saying whether the loop became one kernel; the loops that keep the
 * control step (a carried tensor, a nested while, HLO_LOOP_KERNELS=0);
 * and the kernel printed for C and for CUDA (compiled by NVRTC where it
 * is present). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "backend/cpu/cpu.h"
#include "codegen/cstyle.h"
#include "codegen/lower_while.h"
#include "ir/ir.h"
#include "runtime/runtime.h"
#include "test.h"
#include "testlib.h"

/* Runs `text` on both backends (integers 0..8 and floats in [-2, 2) at
 * random); true when they agree bit for bit. *stats: what the CPU
 * backend made. */
static bool agree(const char *name, const char *text, runtime_cpu_stats *stats) {
  memset(stats, 0, sizeof *stats);
  bool skipped = false;
  hlo_compile_options o = {.backend = HLO_BACKEND_CPU, .no_tiering = true, .no_cache = true};
  bool ok = tl_backends_agree(name, text, &o, 0, 0, 11, stats, &skipped);
  if (skipped) stats->loop_kernels = UINT32_MAX;
  return ok;
}

#define ONE_KERNEL(s) ((s).loop_kernels == UINT32_MAX || ((s).loop_kernels == 1 && !(s).control))
#define CONTROL(s) ((s).loop_kernels == UINT32_MAX || ((s).loop_kernels == 0 && (s).control == 1))

/* Collatz from x + 1 (>= 1: it ends), counting steps: floor_divide and
 * remainder as jnp prints them (sign fix-ups), a select, i32. */
static const char *collatz =
    "func.func @main(%x: tensor<i32>) -> (tensor<i32>, tensor<i32>) {\n"
    "  %c0 = stablehlo.constant dense<0> : tensor<i32>\n"
    "  %c1 = stablehlo.constant dense<1> : tensor<i32>\n"
    "  %n0 = stablehlo.add %x, %c1 : tensor<i32>\n"
    "  %r:2 = stablehlo.while(%n = %n0, %k = %c0) : tensor<i32>, tensor<i32>\n"
    "  cond {\n"
    "    %one = stablehlo.constant dense<1> : tensor<i32>\n"
    "    %p = stablehlo.compare NE, %n, %one, SIGNED : (tensor<i32>, tensor<i32>) -> tensor<i1>\n"
    "    stablehlo.return %p : tensor<i1>\n"
    "  } do {\n"
    "    %two = stablehlo.constant dense<2> : tensor<i32>\n"
    "    %three = stablehlo.constant dense<3> : tensor<i32>\n"
    "    %one = stablehlo.constant dense<1> : tensor<i32>\n"
    "    %zero = stablehlo.constant dense<0> : tensor<i32>\n"
    "    %m = stablehlo.remainder %n, %two : tensor<i32>\n"
    "    %even = stablehlo.compare EQ, %m, %zero, SIGNED : (tensor<i32>, tensor<i32>) -> tensor<i1>\n"
    "    %h = stablehlo.divide %n, %two : tensor<i32>\n"
    "    %t = stablehlo.multiply %n, %three : tensor<i32>\n"
    "    %t1 = stablehlo.add %t, %one : tensor<i32>\n"
    "    %nn = stablehlo.select %even, %h, %t1 : tensor<i1>, tensor<i32>\n"
    "    %k1 = stablehlo.add %k, %one : tensor<i32>\n"
    "    stablehlo.return %nn, %k1 : tensor<i32>, tensor<i32>\n"
    "  }\n"
    "  return %r#0, %r#1 : tensor<i32>, tensor<i32>\n"
    "}\n";

TEST(collatz_is_one_kernel) {
  runtime_cpu_stats s;
  CHECK(agree("collatz", collatz, &s));
  CHECK(ONE_KERNEL(s));
}

/* A counter to an outer bound %n, an f32 accumulator of an outer %x
 * (values read from outside the regions: loaded before the loop), i * x
 * through a convert; with %n = 0 it runs no iteration. */
TEST(outer_values_and_floats) {
  const char *text =
      "func.func @main(%n: tensor<i32>, %x: tensor<f32>) -> (tensor<i32>, tensor<f32>) {\n"
      "  %c0 = stablehlo.constant dense<0> : tensor<i32>\n"
      "  %f0 = stablehlo.constant dense<0.5> : tensor<f32>\n"
      "  %r:2 = stablehlo.while(%i = %c0, %acc = %f0) : tensor<i32>, tensor<f32>\n"
      "  cond {\n"
      "    %p = stablehlo.compare LT, %i, %n, SIGNED : (tensor<i32>, tensor<i32>) -> tensor<i1>\n"
      "    stablehlo.return %p : tensor<i1>\n"
      "  } do {\n"
      "    %one = stablehlo.constant dense<1> : tensor<i32>\n"
      "    %fi = stablehlo.convert %i : (tensor<i32>) -> tensor<f32>\n"
      "    %t = stablehlo.multiply %fi, %x : tensor<f32>\n"
      "    %e = stablehlo.exponential %t : tensor<f32>\n"
      "    %a1 = stablehlo.add %acc, %e : tensor<f32>\n"
      "    %i1 = stablehlo.add %i, %one : tensor<i32>\n"
      "    stablehlo.return %i1, %a1 : tensor<i32>, tensor<f32>\n"
      "  }\n"
      "  return %r#0, %r#1 : tensor<i32>, tensor<f32>\n"
      "}\n";
  runtime_cpu_stats s;
  CHECK(agree("outer_values", text, &s));
  CHECK(ONE_KERNEL(s));
}

/* Carried values that take each other's old values (a Fibonacci step:
 * (a, b) <- (b, a + b)) and a carried i1 toggled each step, i64, the
 * result returned twice. */
TEST(swaps_bools_and_i64) {
  const char *text =
      "func.func @main(%n: tensor<i32>) -> (tensor<i64>, tensor<i64>, tensor<i1>, tensor<i64>) {\n"
      "  %c0 = stablehlo.constant dense<0> : tensor<i32>\n"
      "  %a0 = stablehlo.constant dense<0> : tensor<i64>\n"
      "  %b0 = stablehlo.constant dense<1> : tensor<i64>\n"
      "  %f = stablehlo.constant dense<false> : tensor<i1>\n"
      "  %r:4 = stablehlo.while(%i = %c0, %a = %a0, %b = %b0, %t = %f)\n"
      "      : tensor<i32>, tensor<i64>, tensor<i64>, tensor<i1>\n"
      "  cond {\n"
      "    %p = stablehlo.compare LT, %i, %n, SIGNED : (tensor<i32>, tensor<i32>) -> tensor<i1>\n"
      "    stablehlo.return %p : tensor<i1>\n"
      "  } do {\n"
      "    %one = stablehlo.constant dense<1> : tensor<i32>\n"
      "    %s = stablehlo.add %a, %b : tensor<i64>\n"
      "    %nt = stablehlo.not %t : tensor<i1>\n"
      "    %i1 = stablehlo.add %i, %one : tensor<i32>\n"
      "    stablehlo.return %i1, %b, %s, %nt : tensor<i32>, tensor<i64>, tensor<i64>, tensor<i1>\n"
      "  }\n"
      "  return %r#1, %r#2, %r#3, %r#1 : tensor<i64>, tensor<i64>, tensor<i1>, tensor<i64>\n"
      "}\n";
  runtime_cpu_stats s;
  CHECK(agree("swaps", text, &s));
  CHECK(ONE_KERNEL(s));
}

/* bf16 carried (each op rounded to bf16, as the interpreter does) and a
 * scalar Newton iteration for sqrt(|y| + 1) in f32 with a data-dependent
 * exit (|x*x - a| > 1e-6 and at most 40 steps). */
TEST(bf16_and_newton) {
  const char *text =
      "func.func @main(%y: tensor<f32>, %h: tensor<bf16>) -> (tensor<f32>, tensor<bf16>, tensor<i32>) {\n"
      "  %c0 = stablehlo.constant dense<0> : tensor<i32>\n"
      "  %one = stablehlo.constant dense<1.0> : tensor<f32>\n"
      "  %ay = stablehlo.abs %y : tensor<f32>\n"
      "  %a = stablehlo.add %ay, %one : tensor<f32>\n"
      "  %r:3 = stablehlo.while(%x = %a, %g = %h, %i = %c0) : tensor<f32>, tensor<bf16>, tensor<i32>\n"
      "  cond {\n"
      "    %xx = stablehlo.multiply %x, %x : tensor<f32>\n"
      "    %d = stablehlo.subtract %xx, %a : tensor<f32>\n"
      "    %ad = stablehlo.abs %d : tensor<f32>\n"
      "    %eps = stablehlo.constant dense<1.0e-6> : tensor<f32>\n"
      "    %far = stablehlo.compare GT, %ad, %eps, FLOAT : (tensor<f32>, tensor<f32>) -> tensor<i1>\n"
      "    %lim = stablehlo.constant dense<40> : tensor<i32>\n"
      "    %few = stablehlo.compare LT, %i, %lim, SIGNED : (tensor<i32>, tensor<i32>) -> tensor<i1>\n"
      "    %p = stablehlo.and %far, %few : tensor<i1>\n"
      "    stablehlo.return %p : tensor<i1>\n"
      "  } do {\n"
      "    %q = stablehlo.divide %a, %x : tensor<f32>\n"
      "    %s = stablehlo.add %x, %q : tensor<f32>\n"
      "    %half = stablehlo.constant dense<0.5> : tensor<f32>\n"
      "    %x1 = stablehlo.multiply %s, %half : tensor<f32>\n"
      "    %hb = stablehlo.constant dense<0.3> : tensor<bf16>\n"
      "    %g1 = stablehlo.multiply %g, %hb : tensor<bf16>\n"
      "    %ob = stablehlo.constant dense<1.0> : tensor<bf16>\n"
      "    %g2 = stablehlo.add %g1, %ob : tensor<bf16>\n"
      "    %i1c = stablehlo.constant dense<1> : tensor<i32>\n"
      "    %i1 = stablehlo.add %i, %i1c : tensor<i32>\n"
      "    stablehlo.return %x1, %g2, %i1 : tensor<f32>, tensor<bf16>, tensor<i32>\n"
      "  }\n"
      "  return %r#0, %r#1, %r#2 : tensor<f32>, tensor<bf16>, tensor<i32>\n"
      "}\n";
  runtime_cpu_stats s;
  CHECK(agree("bf16_newton", text, &s));
  CHECK(ONE_KERNEL(s));
}

/* Loops that keep the control step, with the same results: a carried
 * tensor of 4 elements; a while nested in the body; and the collatz loop
 * with HLO_LOOP_KERNELS=0. */
TEST(other_loops_keep_the_control_step) {
  const char *vec =
      "func.func @main(%v: tensor<4xf32>) -> tensor<4xf32> {\n"
      "  %c0 = stablehlo.constant dense<0> : tensor<i32>\n"
      "  %r:2 = stablehlo.while(%i = %c0, %x = %v) : tensor<i32>, tensor<4xf32>\n"
      "  cond {\n"
      "    %three = stablehlo.constant dense<3> : tensor<i32>\n"
      "    %p = stablehlo.compare LT, %i, %three, SIGNED : (tensor<i32>, tensor<i32>) -> tensor<i1>\n"
      "    stablehlo.return %p : tensor<i1>\n"
      "  } do {\n"
      "    %one = stablehlo.constant dense<1> : tensor<i32>\n"
      "    %x1 = stablehlo.multiply %x, %x : tensor<4xf32>\n"
      "    %i1 = stablehlo.add %i, %one : tensor<i32>\n"
      "    stablehlo.return %i1, %x1 : tensor<i32>, tensor<4xf32>\n"
      "  }\n"
      "  return %r#1 : tensor<4xf32>\n"
      "}\n";
  runtime_cpu_stats s;
  CHECK(agree("vector_state", vec, &s));
  CHECK(CONTROL(s));
  const char *nested =
      "func.func @main(%n: tensor<i32>) -> tensor<i32> {\n"
      "  %c0 = stablehlo.constant dense<0> : tensor<i32>\n"
      "  %r:2 = stablehlo.while(%i = %c0, %acc = %c0) : tensor<i32>, tensor<i32>\n"
      "  cond {\n"
      "    %p = stablehlo.compare LT, %i, %n, SIGNED : (tensor<i32>, tensor<i32>) -> tensor<i1>\n"
      "    stablehlo.return %p : tensor<i1>\n"
      "  } do {\n"
      "    %one = stablehlo.constant dense<1> : tensor<i32>\n"
      "    %z = stablehlo.constant dense<0> : tensor<i32>\n"
      "    %in:2 = stablehlo.while(%j = %z, %s = %acc) : tensor<i32>, tensor<i32>\n"
      "    cond {\n"
      "      %q = stablehlo.compare LT, %j, %i, SIGNED : (tensor<i32>, tensor<i32>) -> tensor<i1>\n"
      "      stablehlo.return %q : tensor<i1>\n"
      "    } do {\n"
      "      %o = stablehlo.constant dense<1> : tensor<i32>\n"
      "      %j1 = stablehlo.add %j, %o : tensor<i32>\n"
      "      %s1 = stablehlo.add %s, %j : tensor<i32>\n"
      "      stablehlo.return %j1, %s1 : tensor<i32>, tensor<i32>\n"
      "    }\n"
      "    %i1 = stablehlo.add %i, %one : tensor<i32>\n"
      "    stablehlo.return %i1, %in#1 : tensor<i32>, tensor<i32>\n"
      "  }\n"
      "  return %r#1 : tensor<i32>\n"
      "}\n";
  CHECK(agree("nested", nested, &s));
  /* the outer loop is a control step; the inner one (in its body) a kernel */
  CHECK(s.loop_kernels == UINT32_MAX || (s.loop_kernels == 1 && s.control == 1));
  setenv("HLO_LOOP_KERNELS", "0", 1);
  CHECK(agree("collatz_off", collatz, &s));
  CHECK(CONTROL(s));
  unsetenv("HLO_LOOP_KERNELS");
}

/* The kernel itself: the loop's cut (kernel.h), its dump, and its text for
 * C (the loop and the break) and for CUDA, compiled by NVRTC where it is
 * present. */
TEST(loop_kernel_prints_for_c_and_cuda) {
  hlo_module_ir *m = tl_parse_text("collatz.mlir", collatz, TL_VERIFY, NULL);
  CHECK(m != NULL);
  if (!m) return;
  hlo_func *f = module_entry(m, NULL);
  const hlo_op *w = NULL;
  for (const hlo_op *op = f ? f->body.block.first : NULL; op; op = op->next)
    if (op->opcode == OP_WHILE) w = op;
  CHECK(w != NULL);
  kernel *k = NULL;
  hlo_status st = w ? lower_scalar_while(w, "loop_k", &k) : NULL;
  CHECK(!st && k);
  hlo_status_free(st);
  if (k) {
    CHECK_EQ_INT(k->rank, 0);
    CHECK_EQ_INT(k->loop.num_carried, 2);
    CHECK_EQ_INT(k->num_inputs, 2); /* the two init values */
    CHECK_EQ_INT(k->num_outputs, 2);
    CHECK(k->loop.begin <= k->loop.cond_end && k->loop.cond_end < k->num_body);
    CHECK(!kernel_check_schedule(k));
    strbuf pr = {0};
    kernel_print(k, &pr);
    CHECK(pr.data && strstr(pr.data, "loop (p0 = %0, p1 = %1) cond:"));
    sb_free(&pr);
    strbuf ct = {0};
    CHECK(!cstyle_emit_kernel(cpu_c_dialect(), k, &ct));
    CHECK(ct.data && strstr(ct.data, "for (;;) {") && strstr(ct.data, "break;") &&
          strstr(ct.data, "out1[0] = (c1);"));
    sb_free(&ct);
    static const char *const want[] = {"for (;;) {", "break;"};
    CHECK(tl_cuda_prints_and_compiles("loop_kernel_prints_for_c_and_cuda", k, "loop_k", want, 2));
  }
  kernel_destroy(k);
  module_free(m);
}

/* Not a loop one kernel runs: a carried tensor, located at the while. */
TEST(lower_scalar_while_rejects_other_loops) {
  const char *text =
      "func.func @main(%v: tensor<2xi32>) -> tensor<2xi32> {\n"
      "  %r = stablehlo.while(%x = %v) : tensor<2xi32>\n"
      "  cond {\n"
      "    %f = stablehlo.constant dense<false> : tensor<i1>\n"
      "    stablehlo.return %f : tensor<i1>\n"
      "  } do {\n"
      "    stablehlo.return %x : tensor<2xi32>\n"
      "  }\n"
      "  return %r : tensor<2xi32>\n"
      "}\n";
  hlo_module_ir *m = tl_parse_text("vec.mlir", text, TL_VERIFY, NULL);
  CHECK(m != NULL);
  if (!m) return;
  hlo_func *f = module_entry(m, NULL);
  const hlo_op *w = f ? f->body.block.first : NULL;
  CHECK(w && w->opcode == OP_WHILE);
  kernel *k = NULL;
  hlo_status st = w ? lower_scalar_while(w, "k", &k) : NULL;
  CHECK(st && hlo_status_code_of(st) == HLO_UNIMPLEMENTED && !k);
  CHECK(st && strstr(hlo_status_message(st), "not 0-d"));
  hlo_status_free(st);
  module_free(m);
}

/* A loop kernel must be one every backend takes: at most
 * KERNEL_MAX_LOOP_BUFFERS (64, the CUDA kernels' CUDA_MAX_BUFS) buffers. A
 * loop kernel has one input per carried value plus one per outer value its
 * regions read, and one output per carried value: here 32 carried values
 * (the most lower_scalar_while takes) and an outer bound %n read by the
 * condition, 33 inputs + 32 outputs = 65 buffers. Found by review: the
 * kernel was made, ran on the CPU, and failed the whole compile on the
 * cuda backend ("65 buffers"). Now lower_scalar_while refuses it and the
 * control step runs the loop. */
TEST(loop_of_65_buffers_keeps_the_control_step) {
  strbuf t = {0};
  sb_puts(&t, "func.func @main(%n: tensor<i32>, %x: tensor<f32>) -> tensor<f32> {\n"
              "  %c0 = stablehlo.constant dense<0> : tensor<i32>\n"
              "  %r:32 = stablehlo.while(%i = %c0");
  for (int j = 1; j < 32; j++) sb_printf(&t, ", %%v%d = %%x", j);
  sb_puts(&t, ") : tensor<i32>");
  for (int j = 1; j < 32; j++) sb_puts(&t, ", tensor<f32>");
  sb_puts(&t, "\n  cond {\n"
              "    %p = stablehlo.compare LT, %i, %n, SIGNED : (tensor<i32>, tensor<i32>) -> tensor<i1>\n"
              "    stablehlo.return %p : tensor<i1>\n"
              "  } do {\n"
              "    %one = stablehlo.constant dense<1> : tensor<i32>\n"
              "    %i1 = stablehlo.add %i, %one : tensor<i32>\n");
  for (int j = 1; j < 32; j++)
    sb_printf(&t, "    %%w%d = stablehlo.add %%v%d, %%v%d : tensor<f32>\n", j, j, j % 31 + 1);
  sb_puts(&t, "    stablehlo.return %i1");
  for (int j = 1; j < 32; j++) sb_printf(&t, ", %%w%d", j);
  sb_puts(&t, " : tensor<i32>");
  for (int j = 1; j < 32; j++) sb_puts(&t, ", tensor<f32>");
  sb_puts(&t, "\n  }\n  return %r#31 : tensor<f32>\n}\n");
  runtime_cpu_stats s;
  CHECK(agree("carried32_outer1", t.data, &s));
  CHECK(CONTROL(s));
  hlo_module_ir *m = tl_parse_text("carried32.mlir", t.data, TL_VERIFY, NULL);
  sb_free(&t);
  CHECK(m != NULL);
  if (!m) return;
  hlo_func *f = module_entry(m, NULL);
  const hlo_op *w = NULL;
  for (const hlo_op *op = f ? f->body.block.first : NULL; op; op = op->next)
    if (op->opcode == OP_WHILE) w = op;
  kernel *k = NULL;
  hlo_status st = w ? lower_scalar_while(w, "loop65", &k) : NULL;
  CHECK(st && hlo_status_code_of(st) == HLO_UNIMPLEMENTED && !k);
  CHECK(st && strstr(hlo_status_message(st), "too many values"));
  hlo_status_free(st);
  kernel_destroy(k);
  module_free(m);
}

TEST_MAIN()
