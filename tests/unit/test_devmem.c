/* test_devmem.c — the executable's device-memory path
 * (runtime/executable_cpu_device.c) on the testing backend cpu-devmem
 * (backend/cpu/cpu_devmem.c: the CPU backend with device_memory = true,
 * allocations poisoned with 0xA5, copies counted), through the C API with
 * RUNTIME_BACKEND_CPU_DEVMEM:
 *   - a program of kernel and gemm steps only copies its arguments in and
 *     its results out, run after run; its constants are uploaded once, at
 *     compile time;
 *   - programs mixing device steps with host steps (interpreter thunks,
 *     data movement, fills, sort / conv / reduce_window, which cpu-devmem
 *     lacks) and control flow (while with carried values written in place,
 *     case, if) agree with the interpreter on random inputs.
 * When no C compiler can be started the tests print "skipped" and pass. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "hlo/hlo.h"
#include "runtime/runtime.h"
#include "test.h"
#include "testlib.h"

#ifndef DEVMEM_KIND
#define DEVMEM_KIND RUNTIME_BACKEND_CPU_DEVMEM
#endif
/* backend/cpu/cpu_devmem.c's counters (not in a header: tests only). */
void cpu_devmem_counters(uint64_t *copies, uint64_t *bytes, uint64_t *allocs, bool reset);

static const hlo_compile_options devmem_single = {.backend = DEVMEM_KIND,
                                                  .passes = "none", .no_cache = true};
static const hlo_compile_options devmem_fused = {.backend = DEVMEM_KIND,
                                                 .no_cache = true};

static bool skipped_for(hlo_status st, const char *test) {
  if (st && hlo_status_code_of(st) == HLO_UNAVAILABLE) {
    printf("%s: skipped (%s)\n", test, hlo_status_message(st));
    hlo_status_free(st);
    return true;
  }
  return false;
}

/* kernels (exponential, add, tanh, multiply by a constant that is no
 * splat) and a gemm: no interpreter thunk */
static const char *device_only =
    "func.func @main(%a: tensor<8x16xf32>, %b: tensor<16x4xf32>, %c: tensor<8x4xf32>)\n"
    "    -> (tensor<8x4xf32>, tensor<8x16xf32>) {\n"
    "  %e = stablehlo.exponential %a : tensor<8x16xf32>\n"
    "  %d = stablehlo.dot_general %e, %b, contracting_dims = [1] x [0]\n"
    "      : (tensor<8x16xf32>, tensor<16x4xf32>) -> tensor<8x4xf32>\n"
    "  %k = stablehlo.constant dense<[[1.0, 2.0, 3.0, 4.0]]> : tensor<1x4xf32>\n"
    "  %kb = stablehlo.broadcast_in_dim %k, dims = [0, 1] : (tensor<1x4xf32>) -> tensor<8x4xf32>\n"
    "  %s = stablehlo.add %d, %c : tensor<8x4xf32>\n"
    "  %s2 = stablehlo.multiply %s, %kb : tensor<8x4xf32>\n"
    "  %t = stablehlo.tanh %s2 : tensor<8x4xf32>\n"
    "  %m = stablehlo.multiply %e, %e : tensor<8x16xf32>\n"
    "  return %t, %m : tensor<8x4xf32>, tensor<8x16xf32>\n"
    "}\n";

TEST(device_steps_copy_only_arguments_and_results) {
  hlo_module *m = NULL;
  hlo_executable *e = NULL;
  hlo_status st = hlo_module_parse("device_only", device_only, strlen(device_only), &m);
  CHECK(!st);
  uint64_t copies = 0, bytes = 0;
  cpu_devmem_counters(NULL, NULL, NULL, true);
  if (!st) st = hlo_executable_compile(m, NULL, &devmem_single, &e);
  if (skipped_for(st, "device_steps_copy_only_arguments_and_results")) {
    hlo_module_destroy(m);
    return;
  }
  CHECK(!st);
  cpu_devmem_counters(&copies, &bytes, NULL, true);
  const runtime_cpu_stats *cs = e ? runtime_executable_cpu_stats(e) : NULL;
  CHECK(cs != NULL);
  if (cs) {
    CHECK_EQ_INT(cs->interp, 0);
    CHECK_EQ_INT(cs->blas, 1);
    CHECK(cs->kernels >= 4);
    CHECK(cs->constants >= 1);
    /* the constants: uploaded at compile time, once each */
    CHECK_EQ_INT(copies, cs->constants);
  }
  float a[8 * 16], b[16 * 4], c[8 * 4];
  for (int i = 0; i < 8 * 16; i++) a[i] = (float)((i % 7) - 3) * 0.1f;
  for (int i = 0; i < 16 * 4; i++) b[i] = (float)((i % 5) - 2) * 0.2f;
  for (int i = 0; i < 8 * 4; i++) c[i] = (float)(i % 3) * 0.3f;
  int64_t da[2] = {8, 16}, db[2] = {16, 4}, dc[2] = {8, 4};
  hlo_buffer_view v[3] = {{HLO_F32, 2, da, a}, {HLO_F32, 2, db, b}, {HLO_F32, 2, dc, c}};
  /* the interpreter's answer */
  hlo_executable *ei = NULL;
  hlo_buffer **want = NULL;
  if (!st) st = hlo_executable_create(m, NULL, HLO_BACKEND_INTERP, &ei);
  if (!st) st = hlo_executable_run(ei, v, 3, &want);
  CHECK(!st);
  for (int rep = 0; rep < 3 && !st; rep++) {
    hlo_buffer **got = NULL;
    cpu_devmem_counters(NULL, NULL, NULL, true);
    st = hlo_executable_run(e, v, 3, &got);
    CHECK(!st);
    cpu_devmem_counters(&copies, &bytes, NULL, true);
    /* three arguments in, two results out: nothing else */
    CHECK_EQ_INT(copies, 5);
    CHECK_EQ_INT(bytes, sizeof a + sizeof b + sizeof c + 8 * 4 * 4 + 8 * 16 * 4);
    for (int r = 0; r < 2 && got && want; r++) {
      const float *g = hlo_buffer_data(got[r]), *w = hlo_buffer_data(want[r]);
      size_t n = hlo_buffer_nbytes(got[r]) / 4;
      CHECK_EQ_INT(n, hlo_buffer_nbytes(want[r]) / 4);
      int bad = 0;
      for (size_t i = 0; i < n; i++) bad += fabsf(g[i] - w[i]) > 1e-4f * (1 + fabsf(w[i]));
      CHECK_EQ_INT(bad, 0);
    }
    for (int r = 0; got && r < 2; r++) hlo_buffer_destroy(got[r]);
    free(got);
  }
  for (int r = 0; want && r < 2; r++) hlo_buffer_destroy(want[r]);
  free(want);
  if (st) hlo_status_free(st);
  hlo_executable_destroy(ei);
  hlo_executable_destroy(e);
  hlo_module_destroy(m);
}

/* Random inputs, devmem vs the interpreter (tl_backends_agree: two runs);
 * results in ulp_mask within 64 ULP (exponential, tanh, sums: the kernels'
 * own approximations, as on the CPU backend), the others bit for bit. */
static void agree(const char *name, const char *text, const hlo_compile_options *o,
                  unsigned ulp_mask, int min_interp) {
  static uint64_t seed = 777;
  runtime_cpu_stats cs;
  memset(&cs, 0, sizeof cs);
  bool skipped = false;
  CHECK(tl_backends_agree(name, text, o, ulp_mask, 64, seed++, &cs, &skipped));
  if (!skipped && min_interp >= 0) CHECK((int)cs.interp >= min_interp);
}

TEST(interpreter_and_copy_steps_between_device_steps) {
  /* sort (an interpreter thunk on cpu-devmem), dynamic_slice and pad
   * (data movement on the host), kernels before and after each */
  const char *t =
      "func.func @main(%a: tensor<16xf32>, %i: tensor<i32>) -> (tensor<16xf32>, tensor<6xf32>) {\n"
      "  %e = stablehlo.exponential %a : tensor<16xf32>\n"
      "  %s = \"stablehlo.sort\"(%e) ({\n"
      "  ^bb0(%x: tensor<f32>, %y: tensor<f32>):\n"
      "    %lt = stablehlo.compare LT, %x, %y : (tensor<f32>, tensor<f32>) -> tensor<i1>\n"
      "    stablehlo.return %lt : tensor<i1>\n"
      "  }) {dimension = 0 : i64, is_stable = true} : (tensor<16xf32>) -> tensor<16xf32>\n"
      "  %n = stablehlo.negate %s : tensor<16xf32>\n"
      "  %d = stablehlo.dynamic_slice %n, %i, sizes = [4] : (tensor<16xf32>, tensor<i32>) -> tensor<4xf32>\n"
      "  %z = stablehlo.constant dense<0.0> : tensor<f32>\n"
      "  %p = stablehlo.pad %d, %z, low = [1], high = [1], interior = [0]\n"
      "      : (tensor<4xf32>, tensor<f32>) -> tensor<6xf32>\n"
      "  %q = stablehlo.add %p, %p : tensor<6xf32>\n"
      "  return %n, %q : tensor<16xf32>, tensor<6xf32>\n"
      "}\n";
  agree("interp_and_copies", t, &devmem_single, 3, 1);
  agree("interp_and_copies_fused", t, &devmem_fused, 3, 1);
}

TEST(while_loop_carried_on_the_device) {
  /* a counter and a vector carried; the body runs kernels and a gemm, the
   * predicate is downloaded per iteration */
  const char *t =
      "func.func @main(%v: tensor<4x4xf32>, %w: tensor<4x4xf32>) -> (tensor<i32>, tensor<4x4xf32>) {\n"
      "  %c0 = stablehlo.constant dense<0> : tensor<i32>\n"
      "  %r:2 = stablehlo.while(%it = %c0, %x = %v) : tensor<i32>, tensor<4x4xf32>\n"
      "   cond {\n"
      "    %n = stablehlo.constant dense<5> : tensor<i32>\n"
      "    %lt = stablehlo.compare LT, %it, %n : (tensor<i32>, tensor<i32>) -> tensor<i1>\n"
      "    stablehlo.return %lt : tensor<i1>\n"
      "  } do {\n"
      "    %one = stablehlo.constant dense<1> : tensor<i32>\n"
      "    %it2 = stablehlo.add %it, %one : tensor<i32>\n"
      "    %m = stablehlo.dot_general %x, %w, contracting_dims = [1] x [0]\n"
      "        : (tensor<4x4xf32>, tensor<4x4xf32>) -> tensor<4x4xf32>\n"
      "    %y = stablehlo.tanh %m : tensor<4x4xf32>\n"
      "    stablehlo.return %it2, %y : tensor<i32>, tensor<4x4xf32>\n"
      "  }\n"
      "  %o = stablehlo.add %r#1, %v : tensor<4x4xf32>\n"
      "  return %r#0, %o : tensor<i32>, tensor<4x4xf32>\n"
      "}\n";
  agree("while_single", t, &devmem_single, 2, -1);
  agree("while_fused", t, &devmem_fused, 2, -1);
}

/* The while loop of while_loop_carried_on_the_device, run with counted
 * copies: its carried matrix stays on the device; what moves per run is
 * the arguments, the results and one small predicate download per
 * iteration (the counter lives in a 64-byte granule of the arena). */
TEST(while_loop_moves_only_its_predicate) {
  const char *t =
      "func.func @main(%v: tensor<32x32xf32>, %w: tensor<32x32xf32>) -> tensor<32x32xf32> {\n"
      "  %c0 = stablehlo.constant dense<0> : tensor<i32>\n"
      "  %r:2 = stablehlo.while(%it = %c0, %x = %v) : tensor<i32>, tensor<32x32xf32>\n"
      "   cond {\n"
      "    %n = stablehlo.constant dense<5> : tensor<i32>\n"
      "    %lt = stablehlo.compare LT, %it, %n : (tensor<i32>, tensor<i32>) -> tensor<i1>\n"
      "    stablehlo.return %lt : tensor<i1>\n"
      "  } do {\n"
      "    %one = stablehlo.constant dense<1> : tensor<i32>\n"
      "    %it2 = stablehlo.add %it, %one : tensor<i32>\n"
      "    %m = stablehlo.dot_general %x, %w, contracting_dims = [1] x [0]\n"
      "        : (tensor<32x32xf32>, tensor<32x32xf32>) -> tensor<32x32xf32>\n"
      "    %y = stablehlo.tanh %m : tensor<32x32xf32>\n"
      "    stablehlo.return %it2, %y : tensor<i32>, tensor<32x32xf32>\n"
      "  }\n"
      "  return %r#1 : tensor<32x32xf32>\n"
      "}\n";
  hlo_module *m = NULL;
  hlo_executable *e = NULL;
  hlo_status st = hlo_module_parse("while_copies", t, strlen(t), &m);
  CHECK(!st);
  if (!st) st = hlo_executable_compile(m, NULL, &devmem_fused, &e);
  if (skipped_for(st, "while_loop_moves_only_its_predicate")) {
    hlo_module_destroy(m);
    return;
  }
  CHECK(!st);
  static float v[32 * 32], w[32 * 32];
  for (int i = 0; i < 32 * 32; i++) v[i] = (float)(i % 9) * 0.01f, w[i] = (float)(i % 4) * 0.02f;
  int64_t dims[2] = {32, 32};
  hlo_buffer_view in[2] = {{HLO_F32, 2, dims, v}, {HLO_F32, 2, dims, w}};
  for (int rep = 0; rep < 2 && !st; rep++) {
    hlo_buffer **got = NULL;
    uint64_t copies = 0, bytes = 0;
    cpu_devmem_counters(NULL, NULL, NULL, true);
    st = hlo_executable_run(e, in, 2, &got);
    CHECK(!st);
    cpu_devmem_counters(&copies, &bytes, NULL, true);
    /* in: v, w; out: the result; 6 predicates of 64 bytes at most; the
     * carried matrix may be copied device to device once (its state slot) */
    uint64_t mat = sizeof v;
    if (rep == 1)
      printf("while_loop_moves_only_its_predicate: %llu copies, %llu bytes per run\n",
             (unsigned long long)copies, (unsigned long long)bytes);
    CHECK(bytes <= 3 * mat + 6 * 64 + mat);
    CHECK(copies <= 3 + 6 + 2);
    if (got) hlo_buffer_destroy(got[0]);
    free(got);
  }
  if (st) hlo_status_free(st);
  hlo_executable_destroy(e);
  hlo_module_destroy(m);
}

TEST(case_and_if_on_a_device_index) {
  const char *t =
      "func.func @main(%i: tensor<i32>, %a: tensor<8xf32>) -> tensor<8xf32> {\n"
      "  %k = stablehlo.constant dense<3> : tensor<i32>\n"
      "  %j = stablehlo.remainder %i, %k : tensor<i32>\n"
      "  %r = \"stablehlo.case\"(%j) ({\n"
      "    %x = stablehlo.exponential %a : tensor<8xf32>\n"
      "    stablehlo.return %x : tensor<8xf32>\n"
      "  }, {\n"
      "    %x = stablehlo.negate %a : tensor<8xf32>\n"
      "    stablehlo.return %x : tensor<8xf32>\n"
      "  }, {\n"
      "    stablehlo.return %a : tensor<8xf32>\n"
      "  }) : (tensor<i32>) -> tensor<8xf32>\n"
      "  %z = stablehlo.constant dense<0.0> : tensor<f32>\n"
      "  %s = stablehlo.reduce(%r init: %z) applies stablehlo.add across dimensions = [0]\n"
      "      : (tensor<8xf32>, tensor<f32>) -> tensor<f32>\n"
      "  %p = stablehlo.compare GT, %s, %z : (tensor<f32>, tensor<f32>) -> tensor<i1>\n"
      "  %q = \"stablehlo.if\"(%p) ({\n"
      "    %y = stablehlo.add %r, %r : tensor<8xf32>\n"
      "    stablehlo.return %y : tensor<8xf32>\n"
      "  }, {\n"
      "    %y = stablehlo.multiply %r, %r : tensor<8xf32>\n"
      "    stablehlo.return %y : tensor<8xf32>\n"
      "  }) : (tensor<i1>) -> tensor<8xf32>\n"
      "  return %q : tensor<8xf32>\n"
      "}\n";
  agree("case_if_single", t, &devmem_single, 1, -1);
  agree("case_if_fused", t, &devmem_fused, 1, -1);
}

TEST(dynamic_update_slice_in_place_and_fills) {
  /* a large splat (a STEP_FILL on the host) updated in place by a
   * dynamic_update_slice in a loop, then read by a kernel */
  const char *t =
      "func.func @main(%u: tensor<1x64xf32>) -> tensor<512x64xf32> {\n"
      "  %z = stablehlo.constant dense<1.5> : tensor<512x64xf32>\n"
      "  %c0 = stablehlo.constant dense<0> : tensor<i32>\n"
      "  %r:2 = stablehlo.while(%it = %c0, %acc = %z) : tensor<i32>, tensor<512x64xf32>\n"
      "   cond {\n"
      "    %n = stablehlo.constant dense<7> : tensor<i32>\n"
      "    %lt = stablehlo.compare LT, %it, %n : (tensor<i32>, tensor<i32>) -> tensor<i1>\n"
      "    stablehlo.return %lt : tensor<i1>\n"
      "  } do {\n"
      "    %one = stablehlo.constant dense<1> : tensor<i32>\n"
      "    %e = stablehlo.exponential %u : tensor<1x64xf32>\n"
      "    %k = stablehlo.multiply %it, %it : tensor<i32>\n"
      "    %d = stablehlo.dynamic_update_slice %acc, %e, %k, %c0\n"
      "        : (tensor<512x64xf32>, tensor<1x64xf32>, tensor<i32>, tensor<i32>) -> tensor<512x64xf32>\n"
      "    %it2 = stablehlo.add %it, %one : tensor<i32>\n"
      "    stablehlo.return %it2, %d : tensor<i32>, tensor<512x64xf32>\n"
      "  }\n"
      "  %o = stablehlo.add %r#1, %r#1 : tensor<512x64xf32>\n"
      "  return %o : tensor<512x64xf32>\n"
      "}\n";
  agree("dus_fill_single", t, &devmem_single, 1, -1);
  agree("dus_fill_fused", t, &devmem_fused, 1, -1);
}

TEST(cuda_without_a_driver_is_unavailable) {
  const char *t = "func.func @main(%a: tensor<4xf32>) -> tensor<4xf32> {\n"
                  "  return %a : tensor<4xf32>\n}\n";
  hlo_module *m = NULL;
  hlo_executable *e = NULL;
  hlo_status st = hlo_module_parse("cuda", t, strlen(t), &m);
  CHECK(!st);
  hlo_compile_options o = {.backend = HLO_BACKEND_CUDA, .no_cache = true};
  if (!st) st = hlo_executable_compile(m, NULL, &o, &e);
  if (st) {
    /* no driver here (the usual case): HLO_UNAVAILABLE, saying what is missing */
    CHECK_EQ_INT(hlo_status_code_of(st), HLO_UNAVAILABLE);
    CHECK(strlen(hlo_status_message(st)) > 0);
    hlo_status_free(st);
  }
  hlo_executable_destroy(e);
  hlo_module_destroy(m);
}

TEST_MAIN()
