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
uint64_t cpu_devmem_box_calls(bool reset);

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
    /* three arguments in; the results stay on the device */
    CHECK_EQ_INT(copies, 3);
    CHECK_EQ_INT(bytes, sizeof a + sizeof b + sizeof c);
    for (int r = 0; r < 2 && got; r++) CHECK(hlo_buffer_on_device(got[r]));
    /* read: each downloaded once, on the first ask */
    for (int r = 0; r < 2 && got; r++) {
      CHECK(hlo_buffer_data(got[r]) != NULL);
      CHECK(hlo_buffer_data(got[r]) != NULL);
    }
    cpu_devmem_counters(&copies, &bytes, NULL, true);
    CHECK_EQ_INT(copies, 2);
    CHECK_EQ_INT(bytes, 8 * 4 * 4 + 8 * 16 * 4);
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

/* Arguments placed on the device once (hlo_executable_device_put) and
 * results fed back as arguments (hlo_executable_run_buffers): runs of a
 * program of device steps then copy nothing at all; a result read on the
 * host is downloaded once; a device buffer given to a host executable (the
 * interpreter) is downloaded for it; a program returning its argument
 * returns its bytes. Every figure is checked against the interpreter. */
TEST(device_resident_arguments_and_results) {
  hlo_module *m = NULL;
  hlo_executable *e = NULL, *ei = NULL;
  hlo_status st = hlo_module_parse("device_only", device_only, strlen(device_only), &m);
  CHECK(!st);
  if (!st) st = hlo_executable_compile(m, NULL, &devmem_single, &e);
  if (skipped_for(st, "device_resident_arguments_and_results")) {
    hlo_module_destroy(m);
    return;
  }
  if (!st) st = hlo_executable_create(m, NULL, HLO_BACKEND_INTERP, &ei);
  CHECK(!st);
  float a[8 * 16], b[16 * 4], c[8 * 4];
  for (int i = 0; i < 8 * 16; i++) a[i] = (float)((i % 7) - 3) * 0.01f;
  for (int i = 0; i < 16 * 4; i++) b[i] = (float)((i % 5) - 2) * 0.02f;
  for (int i = 0; i < 8 * 4; i++) c[i] = (float)(i % 3) * 0.03f;
  int64_t da[2] = {8, 16}, db[2] = {16, 4}, dc[2] = {8, 4};
  hlo_buffer_view v[3] = {{HLO_F32, 2, da, a}, {HLO_F32, 2, db, b}, {HLO_F32, 2, dc, c}};
  hlo_buffer *dev[3] = {NULL, NULL, NULL};
  uint64_t copies = 0, bytes = 0;
  cpu_devmem_counters(NULL, NULL, NULL, true);
  for (int i = 0; i < 3 && !st; i++) st = hlo_executable_device_put(e, &v[i], &dev[i]);
  CHECK(!st);
  cpu_devmem_counters(&copies, &bytes, NULL, true);
  CHECK_EQ_INT(copies, 3);
  CHECK_EQ_INT(bytes, sizeof a + sizeof b + sizeof c);
  for (int i = 0; i < 3 && !st; i++) CHECK(hlo_buffer_on_device(dev[i]));
  /* run 1: device arguments; run 2: its first result fed back as `c`
   * (8x4): nothing moves in either */
  hlo_buffer **r1 = NULL, **r2 = NULL;
  if (!st) st = hlo_executable_run_buffers(e, (const hlo_buffer *const *)dev, 3, &r1);
  CHECK(!st);
  const hlo_buffer *args2[3] = {dev[0], dev[1], r1 ? r1[0] : NULL};
  if (!st) st = hlo_executable_run_buffers(e, args2, 3, &r2);
  CHECK(!st);
  cpu_devmem_counters(&copies, &bytes, NULL, true);
  CHECK_EQ_INT(copies, 0);
  /* the interpreter on the same chain, fed the device buffers (downloaded
   * for it: two fetches, r1[0] was not on the host yet) */
  hlo_buffer **w1 = NULL, **w2 = NULL;
  if (!st) st = hlo_executable_run_buffers(ei, (const hlo_buffer *const *)dev, 3, &w1);
  if (!st) st = hlo_executable_run_buffers(ei, args2, 3, &w2);
  CHECK(!st);
  for (int r = 0; r < 2 && !st; r++) {
    const float *g = hlo_buffer_data(r2[r]), *w = hlo_buffer_data(w2[r]);
    CHECK(g && w);
    size_t n = hlo_buffer_nbytes(r2[r]) / 4;
    int bad = 0;
    for (size_t i = 0; g && w && i < n; i++) bad += fabsf(g[i] - w[i]) > 1e-4f * (1 + fabsf(w[i]));
    CHECK_EQ_INT(bad, 0);
    CHECK(!hlo_buffer_on_device(w2[r]));
  }
  CHECK(!hlo_buffer_fetch(r1[0]));
  for (int r = 0; r < 2; r++) {
    if (r1) hlo_buffer_destroy(r1[r]);
    if (r2) hlo_buffer_destroy(r2[r]);
    if (w1) hlo_buffer_destroy(w1[r]);
    if (w2) hlo_buffer_destroy(w2[r]);
  }
  free(r1), free(r2), free(w1), free(w2);
  /* wrong arguments: a NULL buffer, a tuple count mismatch, a shape misfit */
  const hlo_buffer *bad3[3] = {dev[0], NULL, dev[2]};
  hlo_buffer **r3 = NULL;
  hlo_status e1 = hlo_executable_run_buffers(e, bad3, 3, &r3);
  CHECK(e1 && hlo_status_code_of(e1) == HLO_INVALID_ARGUMENT);
  hlo_status_free(e1);
  const hlo_buffer *swapped[3] = {dev[1], dev[0], dev[2]};
  e1 = hlo_executable_run_buffers(e, swapped, 3, &r3);
  CHECK(e1 && hlo_status_code_of(e1) == HLO_INVALID_ARGUMENT);
  if (e1) CHECK(strstr(hlo_status_message(e1), "argument 0") != NULL);
  hlo_status_free(e1);
  e1 = hlo_executable_run_buffers(e, (const hlo_buffer *const *)dev, 2, &r3);
  CHECK(e1 && hlo_status_code_of(e1) == HLO_INVALID_ARGUMENT);
  hlo_status_free(e1);
  CHECK(r3 == NULL);
  for (int i = 0; i < 3; i++) hlo_buffer_destroy(dev[i]);
  if (st) hlo_status_free(st);
  hlo_executable_destroy(ei);
  hlo_executable_destroy(e);
  hlo_module_destroy(m);
}

/* A program returning its argument, the same value twice, and a constant,
 * on device-resident arguments: each result holds the right bytes. */
TEST(device_resident_pass_through_results) {
  const char *t =
      "func.func @main(%a: tensor<4xf32>) -> (tensor<4xf32>, tensor<4xf32>, tensor<4xf32>, "
      "tensor<2xf32>) {\n"
      "  %e = stablehlo.exponential %a : tensor<4xf32>\n"
      "  %k = stablehlo.constant dense<[5.0, 6.0]> : tensor<2xf32>\n"
      "  return %a, %e, %e, %k : tensor<4xf32>, tensor<4xf32>, tensor<4xf32>, tensor<2xf32>\n"
      "}\n";
  hlo_module *m = NULL;
  hlo_executable *e = NULL;
  hlo_status st = hlo_module_parse("pass_through", t, strlen(t), &m);
  CHECK(!st);
  if (!st) st = hlo_executable_compile(m, NULL, &devmem_fused, &e);
  if (skipped_for(st, "device_resident_pass_through_results")) {
    hlo_module_destroy(m);
    return;
  }
  CHECK(!st);
  float a[4] = {0.5f, -1.0f, 2.0f, 0.0f};
  int64_t d4[1] = {4};
  hlo_buffer_view v = {HLO_F32, 1, d4, a};
  hlo_buffer *da = NULL, **r = NULL;
  if (!st) st = hlo_executable_device_put(e, &v, &da);
  for (int rep = 0; rep < 2 && !st; rep++) {
    st = hlo_executable_run_buffers(e, (const hlo_buffer *const *)&da, 1, &r);
    CHECK(!st);
    if (st) break;
    const float *r0 = hlo_buffer_data(r[0]), *r1 = hlo_buffer_data(r[1]),
                *r2 = hlo_buffer_data(r[2]), *r3 = hlo_buffer_data(r[3]);
    CHECK(r0 && r1 && r2 && r3);
    for (int i = 0; r0 && r1 && r2 && i < 4; i++) {
      CHECK(r0[i] == a[i]);
      CHECK(fabsf(r1[i] - expf(a[i])) <= 1e-5f * expf(a[i]));
      CHECK(r2[i] == r1[i]);
    }
    if (r3) CHECK(r3[0] == 5.0f && r3[1] == 6.0f);
    for (int k = 0; k < 4; k++) hlo_buffer_destroy(r[k]);
    free(r);
    r = NULL;
  }
  hlo_buffer_destroy(da);
  if (st) hlo_status_free(st);
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

/* agree(), and the copy steps ran on the backend's copy_box / fill_box
 * (at least min_boxes calls over the two runs of tl_backends_agree on cpu-devmem). */
static void agree_on_boxes(const char *name, const char *text, const hlo_compile_options *o,
                           unsigned ulp_mask, uint64_t min_boxes) {
  static uint64_t seed = 4242;
  bool skipped = false;
  (void)cpu_devmem_box_calls(true);
  CHECK(tl_backends_agree(name, text, o, ulp_mask, 64, seed++, NULL, &skipped));
  uint64_t boxes = cpu_devmem_box_calls(true);
  if (!skipped && boxes < min_boxes) {
    fprintf(stderr, "%s: %llu copy_box / fill_box calls, want >= %llu\n", name,
            (unsigned long long)boxes, (unsigned long long)min_boxes);
    CHECK(boxes >= min_boxes);
  }
}

/* dynamic_slice, dynamic_update_slice (in place and not) and pad on the
 * device (copy_box / fill_box), on operands a kernel wrote (valid on the
 * device only), start indices computed on the device, some out of range
 * (clamped: the spec's rule, the host code's function), several element
 * sizes, negative edge and interior padding. */
TEST(copy_steps_on_the_device_agree) {
  const char *t =
      "func.func @main(%a: tensor<6x5x7xf32>, %u: tensor<2x3x4xf32>, %i: tensor<i32>, %j: tensor<i32>)\n"
      "    -> (tensor<2x5x3xf32>, tensor<6x5x7xf32>, tensor<6x5x7xf32>, tensor<3x5x3xf32>,\n"
      "        tensor<1x1x1xf32>) {\n"
      "  %e = stablehlo.exponential %a : tensor<6x5x7xf32>\n"
      "  %h = stablehlo.constant dense<100> : tensor<i32>\n"
      "  %t = stablehlo.constant dense<20> : tensor<i32>\n"
      "  %big = stablehlo.multiply %i, %h : tensor<i32>\n"
      "  %neg = stablehlo.subtract %j, %t : tensor<i32>\n"
      "  %d = stablehlo.dynamic_slice %e, %i, %big, %j, sizes = [2, 5, 3]\n"
      "      : (tensor<6x5x7xf32>, tensor<i32>, tensor<i32>, tensor<i32>) -> tensor<2x5x3xf32>\n"
      "  %n = stablehlo.negate %u : tensor<2x3x4xf32>\n"
      "  %w = stablehlo.dynamic_update_slice %e, %n, %big, %j, %neg\n"
      "      : (tensor<6x5x7xf32>, tensor<2x3x4xf32>, tensor<i32>, tensor<i32>, tensor<i32>)"
      " -> tensor<6x5x7xf32>\n"
      "  %w2 = stablehlo.dynamic_update_slice %w, %n, %i, %neg, %j\n"
      "      : (tensor<6x5x7xf32>, tensor<2x3x4xf32>, tensor<i32>, tensor<i32>, tensor<i32>)"
      " -> tensor<6x5x7xf32>\n"
      "  %z = stablehlo.constant dense<-3.5> : tensor<f32>\n"
      "  %p = stablehlo.pad %n, %z, low = [0, -1, 1], high = [1, 1, -2], interior = [0, 1, 0]\n"
      "      : (tensor<2x3x4xf32>, tensor<f32>) -> tensor<3x5x3xf32>\n"
      "  %one = stablehlo.dynamic_slice %e, %neg, %i, %big, sizes = [1, 1, 1]\n"
      "      : (tensor<6x5x7xf32>, tensor<i32>, tensor<i32>, tensor<i32>) -> tensor<1x1x1xf32>\n"
      "  %o = stablehlo.add %w2, %e : tensor<6x5x7xf32>\n"
      "  return %d, %w, %o, %p, %one : tensor<2x5x3xf32>, tensor<6x5x7xf32>, tensor<6x5x7xf32>,\n"
      "      tensor<3x5x3xf32>, tensor<1x1x1xf32>\n"
      "}\n";
  agree_on_boxes("copies_f32_single", t, &devmem_single, 0x1f, 2 * 6);
  agree_on_boxes("copies_f32_fused", t, &devmem_fused, 0x1f, 2 * 3);
  /* element sizes 1, 2, 8 and 16; interior padding on the innermost dim */
  const char *t2 =
      "func.func @main(%a: tensor<9x10xi8>, %b: tensor<4x6xf64>, %c: tensor<5x3xcomplex<f64>>,\n"
      "    %h: tensor<7x9xi16>, %i: tensor<i32>)\n"
      "    -> (tensor<3x4xi8>, tensor<4x6xf64>, tensor<8x5xcomplex<f64>>, tensor<14x25xi16>) {\n"
      "  %na = stablehlo.negate %a : tensor<9x10xi8>\n"
      "  %s = stablehlo.dynamic_slice %na, %i, %i, sizes = [3, 4]\n"
      "      : (tensor<9x10xi8>, tensor<i32>, tensor<i32>) -> tensor<3x4xi8>\n"
      "  %nb = stablehlo.negate %b : tensor<4x6xf64>\n"
      "  %u = stablehlo.dynamic_slice %nb, %i, %i, sizes = [2, 2]\n"
      "      : (tensor<4x6xf64>, tensor<i32>, tensor<i32>) -> tensor<2x2xf64>\n"
      "  %w = stablehlo.dynamic_update_slice %nb, %u, %i, %i\n"
      "      : (tensor<4x6xf64>, tensor<2x2xf64>, tensor<i32>, tensor<i32>) -> tensor<4x6xf64>\n"
      "  %zc = stablehlo.constant dense<(1.0, -2.0)> : tensor<complex<f64>>\n"
      "  %pc = stablehlo.pad %c, %zc, low = [1, 0], high = [2, 2], interior = [0, 0]\n"
      "      : (tensor<5x3xcomplex<f64>>, tensor<complex<f64>>) -> tensor<8x5xcomplex<f64>>\n"
      "  %nh = stablehlo.negate %h : tensor<7x9xi16>\n"
      "  %zh = stablehlo.constant dense<7> : tensor<i16>\n"
      "  %ph = stablehlo.pad %nh, %zh, low = [1, -2], high = [0, 2], interior = [1, 2]\n"
      "      : (tensor<7x9xi16>, tensor<i16>) -> tensor<14x25xi16>\n"
      "  return %s, %w, %pc, %ph : tensor<3x4xi8>, tensor<4x6xf64>, tensor<8x5xcomplex<f64>>,\n"
      "      tensor<14x25xi16>\n"
      "}\n";
  agree_on_boxes("copies_sizes_single", t2, &devmem_single, 0, 2 * 5);
  agree_on_boxes("copies_sizes_fused", t2, &devmem_fused, 0, 2 * 3);
}

/* The row gathers JAX emits, on gather_rows: x[idx] of a table a kernel
 * wrote (indices 0..8 over 6 rows, some minus 3: clamped both ways) and
 * take_along_axis (batching dims). */
TEST(row_gather_on_the_device_agrees) {
  const char *t =
      "func.func @main(%a: tensor<6x40xf32>, %i: tensor<5x3x1xi32>, %l: tensor<2x3x7xf32>,\n"
      "    %j: tensor<2x3x1x1xi32>) -> (tensor<5x3x40xf32>, tensor<2x3x1xf32>) {\n"
      "  %e = stablehlo.exponential %a : tensor<6x40xf32>\n"
      "  %k = stablehlo.constant dense<3> : tensor<5x3x1xi32>\n"
      "  %m = stablehlo.subtract %i, %k : tensor<5x3x1xi32>\n"
      "  %g = \"stablehlo.gather\"(%e, %m) <{dimension_numbers = #stablehlo.gather<offset_dims = [2],\n"
      "      collapsed_slice_dims = [0], start_index_map = [0], index_vector_dim = 2>,\n"
      "      indices_are_sorted = false, slice_sizes = array<i64: 1, 40>}>\n"
      "      : (tensor<6x40xf32>, tensor<5x3x1xi32>) -> tensor<5x3x40xf32>\n"
      "  %n = stablehlo.negate %l : tensor<2x3x7xf32>\n"
      "  %h = \"stablehlo.gather\"(%n, %j) <{dimension_numbers = #stablehlo.gather<\n"
      "      collapsed_slice_dims = [2], operand_batching_dims = [0, 1],\n"
      "      start_indices_batching_dims = [0, 1], start_index_map = [2], index_vector_dim = 3>,\n"
      "      indices_are_sorted = false, slice_sizes = array<i64: 1, 1, 1>}>\n"
      "      : (tensor<2x3x7xf32>, tensor<2x3x1x1xi32>) -> tensor<2x3x1xf32>\n"
      "  return %g, %h : tensor<5x3x40xf32>, tensor<2x3x1xf32>\n"
      "}\n";
  agree_on_boxes("gather_single", t, &devmem_single, 1, 2 * 2);
  agree_on_boxes("gather_fused", t, &devmem_fused, 1, 2 * 2);
}

/* The row scatters JAX emits (x.at[idx].add(u) / .set(u), and
 * take_along_axis' gradient with batching dims), on scatter_rows: indices
 * 0..8 minus 2 over 6 rows (repeated rows, out-of-range windows skipped),
 * the operand a kernel wrote. The set's indices are unique: with repeats
 * the interpreter and the host path disagree already (which update wins
 * is implementation-defined in the spec). */
TEST(row_scatter_on_the_device_agrees) {
  const char *t =
      "func.func @main(%a: tensor<6x8xf32>, %i: tensor<9x1xi32>, %u: tensor<9x8xf32>,\n"
      "    %b: tensor<2x3x7xf32>, %j: tensor<2x3x1x1xi32>, %v: tensor<2x3x1xf32>)\n"
      "    -> (tensor<6x8xf32>, tensor<6x8xf32>, tensor<2x3x7xf32>) {\n"
      "  %e = stablehlo.exponential %a : tensor<6x8xf32>\n"
      "  %k = stablehlo.constant dense<2> : tensor<9x1xi32>\n"
      "  %m = stablehlo.subtract %i, %k : tensor<9x1xi32>\n"
      "  %s = \"stablehlo.scatter\"(%e, %m, %u) <{indices_are_sorted = false,\n"
      "      scatter_dimension_numbers = #stablehlo.scatter<update_window_dims = [1],\n"
      "      inserted_window_dims = [0], scatter_dims_to_operand_dims = [0], index_vector_dim = 1>,\n"
      "      unique_indices = false}> ({\n"
      "  ^bb0(%x: tensor<f32>, %y: tensor<f32>):\n"
      "    %z = stablehlo.add %x, %y : tensor<f32>\n"
      "    stablehlo.return %z : tensor<f32>\n"
      "  }) : (tensor<6x8xf32>, tensor<9x1xi32>, tensor<9x8xf32>) -> tensor<6x8xf32>\n"
      "  %q = stablehlo.constant dense<[[5], [-1], [0], [3], [9], [1], [2], [4], [7]]>"
      " : tensor<9x1xi32>\n"
      "  %t = \"stablehlo.scatter\"(%e, %q, %u) <{indices_are_sorted = false,\n"
      "      scatter_dimension_numbers = #stablehlo.scatter<update_window_dims = [1],\n"
      "      inserted_window_dims = [0], scatter_dims_to_operand_dims = [0], index_vector_dim = 1>,\n"
      "      unique_indices = false}> ({\n"
      "  ^bb0(%x: tensor<f32>, %y: tensor<f32>):\n"
      "    stablehlo.return %y : tensor<f32>\n"
      "  }) : (tensor<6x8xf32>, tensor<9x1xi32>, tensor<9x8xf32>) -> tensor<6x8xf32>\n"
      "  %n = stablehlo.negate %b : tensor<2x3x7xf32>\n"
      "  %w = \"stablehlo.scatter\"(%n, %j, %v) <{indices_are_sorted = false,\n"
      "      scatter_dimension_numbers = #stablehlo.scatter<inserted_window_dims = [2],\n"
      "      input_batching_dims = [0, 1], scatter_indices_batching_dims = [0, 1],\n"
      "      scatter_dims_to_operand_dims = [2], index_vector_dim = 3>,\n"
      "      unique_indices = false}> ({\n"
      "  ^bb0(%x: tensor<f32>, %y: tensor<f32>):\n"
      "    %z = stablehlo.add %x, %y : tensor<f32>\n"
      "    stablehlo.return %z : tensor<f32>\n"
      "  }) : (tensor<2x3x7xf32>, tensor<2x3x1x1xi32>, tensor<2x3x1xf32>) -> tensor<2x3x7xf32>\n"
      "  return %s, %t, %w : tensor<6x8xf32>, tensor<6x8xf32>, tensor<2x3x7xf32>\n"
      "}\n";
  agree_on_boxes("scatter_single", t, &devmem_single, 1, 2 * 3);
  agree_on_boxes("scatter_fused", t, &devmem_fused, 1, 2 * 3);
}

/* A scan as JAX writes one: a while loop slicing layer `it` out of a
 * stacked parameter (dynamic_slice), computing on it, and writing the
 * result into a carried stack (dynamic_update_slice, in place), the
 * counter pushed past the end once (clamped). */
static const char *scan_text =
    "func.func @main(%p: tensor<8x16x32xf32>, %x: tensor<16x32xf32>) -> tensor<8x16x32xf32> {\n"
    "  %c0 = stablehlo.constant dense<0> : tensor<i32>\n"
    "  %s0 = stablehlo.constant dense<0.0> : tensor<8x16x32xf32>\n"
    "  %r:3 = stablehlo.while(%it = %c0, %h = %x, %acc = %s0) : tensor<i32>, tensor<16x32xf32>,\n"
    "      tensor<8x16x32xf32>\n"
    "   cond {\n"
    "    %n = stablehlo.constant dense<9> : tensor<i32>\n"
    "    %lt = stablehlo.compare LT, %it, %n : (tensor<i32>, tensor<i32>) -> tensor<i1>\n"
    "    stablehlo.return %lt : tensor<i1>\n"
    "  } do {\n"
    "    %one = stablehlo.constant dense<1> : tensor<i32>\n"
    "    %l = stablehlo.dynamic_slice %p, %it, %c0, %c0, sizes = [1, 16, 32]\n"
    "        : (tensor<8x16x32xf32>, tensor<i32>, tensor<i32>, tensor<i32>) -> tensor<1x16x32xf32>\n"
    "    %l2 = stablehlo.reshape %l : (tensor<1x16x32xf32>) -> tensor<16x32xf32>\n"
    "    %m = stablehlo.multiply %h, %l2 : tensor<16x32xf32>\n"
    "    %y = stablehlo.tanh %m : tensor<16x32xf32>\n"
    "    %y3 = stablehlo.reshape %y : (tensor<16x32xf32>) -> tensor<1x16x32xf32>\n"
    "    %d = stablehlo.dynamic_update_slice %acc, %y3, %it, %c0, %c0\n"
    "        : (tensor<8x16x32xf32>, tensor<1x16x32xf32>, tensor<i32>, tensor<i32>, tensor<i32>)"
    " -> tensor<8x16x32xf32>\n"
    "    %it2 = stablehlo.add %it, %one : tensor<i32>\n"
    "    stablehlo.return %it2, %y, %d : tensor<i32>, tensor<16x32xf32>, tensor<8x16x32xf32>\n"
    "  }\n"
    "  %o = stablehlo.add %r#2, %p : tensor<8x16x32xf32>\n"
    "  return %o : tensor<8x16x32xf32>\n"
    "}\n";

TEST(while_scan_slices_and_updates_on_the_device) {
  agree_on_boxes("scan_single", scan_text, &devmem_single, 1, 2 * 9 * 2);
  /* fused: the update is the root of its producers' kernel (fusion.c rule 6,
   * in place): only the dynamic_slice is a box */
  agree_on_boxes("scan_fused", scan_text, &devmem_fused, 1, 2 * 9);
}

/* Counted copies: a dynamic_slice / dynamic_update_slice program (and the
 * scan loop) moves its arguments in and its small indices (a granule each)
 * out, never a whole operand: before the copy steps ran on the device, each
 * downloaded its operand and uploaded its result. */
TEST(copy_steps_move_only_arguments_and_indices) {
  const char *t =
      "func.func @main(%a: tensor<64x256xf32>, %u: tensor<4x256xf32>, %i: tensor<i32>)\n"
      "    -> (tensor<64x256xf32>, tensor<4x256xf32>) {\n"
      "  %e = stablehlo.exponential %a : tensor<64x256xf32>\n"
      "  %k = stablehlo.constant dense<7> : tensor<i32>\n"
      "  %j = stablehlo.multiply %i, %k : tensor<i32>\n"
      "  %z = stablehlo.constant dense<0> : tensor<i32>\n"
      "  %s = stablehlo.dynamic_slice %e, %j, %z, sizes = [4, 256]\n"
      "      : (tensor<64x256xf32>, tensor<i32>, tensor<i32>) -> tensor<4x256xf32>\n"
      "  %t = stablehlo.tanh %s : tensor<4x256xf32>\n"
      "  %v = stablehlo.add %t, %u : tensor<4x256xf32>\n"
      "  %w = stablehlo.dynamic_update_slice %e, %v, %i, %z\n"
      "      : (tensor<64x256xf32>, tensor<4x256xf32>, tensor<i32>, tensor<i32>) -> tensor<64x256xf32>\n"
      "  %o = stablehlo.negate %w : tensor<64x256xf32>\n"
      "  return %o, %t : tensor<64x256xf32>, tensor<4x256xf32>\n"
      "}\n";
  static float a[64 * 256], u[4 * 256], p[8 * 16 * 32], x[16 * 32];
  int32_t i = 3;
  for (int k = 0; k < 64 * 256; k++) a[k] = (float)(k % 11) * 0.05f - 0.25f;
  for (int k = 0; k < 4 * 256; k++) u[k] = (float)(k % 5) * 0.1f;
  for (int k = 0; k < 8 * 16 * 32; k++) p[k] = (float)(k % 13) * 0.07f - 0.4f;
  for (int k = 0; k < 16 * 32; k++) x[k] = (float)(k % 3) * 0.3f + 0.1f;
  int64_t da[2] = {64, 256}, du[2] = {4, 256}, dp[3] = {8, 16, 32}, dx[2] = {16, 32};
  hlo_buffer_view v1[3] = {{HLO_F32, 2, da, a}, {HLO_F32, 2, du, u}, {HLO_I32, 0, NULL, &i}};
  hlo_buffer_view v2[2] = {{HLO_F32, 3, dp, p}, {HLO_F32, 2, dx, x}};
  struct {
    const char *name, *text;
    hlo_buffer_view *in;
    int nin, nout;
    uint64_t arg_bytes, max_small; /* small copies: indices, predicates */
  } cases[2] = {
      {"ds_dus", t, v1, 3, 2, sizeof a + sizeof u, 2},
      {"scan", scan_text, v2, 2, 1, sizeof p + sizeof x, 2 * 10},
  };
  for (int c = 0; c < 2; c++) {
    hlo_module *m = NULL;
    hlo_executable *e = NULL;
    hlo_status st = hlo_module_parse(cases[c].name, cases[c].text, strlen(cases[c].text), &m);
    CHECK(!st);
    if (!st) st = hlo_executable_compile(m, NULL, &devmem_fused, &e);
    if (skipped_for(st, "copy_steps_move_only_arguments_and_indices")) {
      hlo_module_destroy(m);
      return;
    }
    CHECK(!st);
    for (int rep = 0; rep < 2 && !st; rep++) {
      hlo_buffer **got = NULL;
      uint64_t copies = 0, bytes = 0;
      cpu_devmem_counters(NULL, NULL, NULL, true);
      (void)cpu_devmem_box_calls(true);
      st = hlo_executable_run(e, cases[c].in, (uint32_t)cases[c].nin, &got);
      CHECK(!st);
      cpu_devmem_counters(&copies, &bytes, NULL, true);
      uint64_t boxes = cpu_devmem_box_calls(true);
      if (rep == 1)
        printf("copy_steps_move_only_arguments_and_indices: %s: %llu copies, %llu bytes, "
               "%llu boxes per run\n", cases[c].name, (unsigned long long)copies,
               (unsigned long long)bytes, (unsigned long long)boxes);
      /* the float arguments in (the i32 index is read on the host: never
       * uploaded), a granule per small download; results stay put */
      /* (the dynamic_update_slice is its update's kernel: fusion.c rule 6) */
      CHECK(boxes >= 1);
      CHECK(bytes <= cases[c].arg_bytes + cases[c].max_small * 64);
      CHECK(copies <= 2 + cases[c].max_small);
      for (int r = 0; got && r < cases[c].nout; r++) {
        CHECK(hlo_buffer_on_device(got[r]));
        hlo_buffer_destroy(got[r]);
      }
      free(got);
    }
    if (st) hlo_status_free(st);
    hlo_executable_destroy(e);
    hlo_module_destroy(m);
  }
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
