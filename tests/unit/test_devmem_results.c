/* test_devmem_results.c — temporaries in result allocations on a device
 * backend (executable_cpu_buffers.c's place_in_results; XLA's reuse of
 * live-out allocations), through the testing backend cpu-devmem (the CPU
 * backend with device_memory = true, allocations poisoned with 0xA5,
 * copies counted: backend/cpu/cpu_devmem.c). The device mirror
 * (executable_cpu_device.c) tracks such an allocation per 64-byte granule,
 * as its arena. Checks, each against the interpreter (tl_backends_agree:
 * two runs on random inputs):
 *   - two temporaries live at once in one result's allocation, a loop's
 *     state (first written on the host mirror: the argument copied in;
 *     then on the device) and a gemm's product (on the device), both read
 *     by one kernel, then the result written over them: the arena holds
 *     neither, the result is right, and a run copies the host-written
 *     state up alone (8 KB), not the whole allocation;
 *   - a while loop's state (written in place by the body, on the device)
 *     in the result's allocation;
 *   - a case's branch arena (a gemm's 16 KB product) in the result's
 *     allocation, both branches;
 *   - a kernel's result written over a gemm's product dying there (its
 *     own allocation, which becomes the result; written in place);
 *   - each run's results are memory of their own: a second run changes
 *     none of the first's, the arguments are never written.
 * When no C compiler can be started the tests print "skipped" and pass. */
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "hlo/hlo.h"
#include "runtime/runtime.h"
#include "test.h"
#include "testlib.h"

/* backend/cpu/cpu_devmem.c's counters (not in a header: tests only). */
void cpu_devmem_counters(uint64_t *copies, uint64_t *bytes, uint64_t *allocs, bool reset);

static const hlo_compile_options devmem = {.backend = RUNTIME_BACKEND_CPU_DEVMEM,
                                           .no_cache = true};

/* `text` compiled for cpu-devmem (NULL: it does not compile, or the
 * backend is unavailable: *skipped); *m and *e to destroy. */
static const runtime_cpu_stats *compile_devmem(const char *name, const char *text,
                                               hlo_module **m, hlo_executable **e,
                                               bool *skipped) {
  *m = NULL, *e = NULL;
  *skipped = false;
  hlo_status st = hlo_module_parse(name, text, strlen(text), m);
  if (!st) st = hlo_executable_compile(*m, NULL, &devmem, e);
  if (st && hlo_status_code_of(st) == HLO_UNAVAILABLE) {
    printf("%s: skipped (%s)\n", name, hlo_status_message(st));
    *skipped = true;
  } else if (st) {
    hlo_status_print(st, stderr);
  }
  hlo_status_free(st);
  return *e ? runtime_executable_cpu_stats(*e) : NULL;
}

/* x, carried through a loop (its state slot first written on the host
 * mirror: the copy of the argument in; then in place by the body's
 * kernels), and y . w (a gemm, on the device), both 32x64 (8 KB), live at
 * once and concatenated by one kernel into m; the result r = m . c
 * (16 KB) is written after both die: both lie in r's allocation (offsets
 * 0 and 8192), the arena holds m alone (16 KB; before: 32 KB and more). */
static const char *mixed =
    "func.func @main(%x: tensor<32x64xf32>, %y: tensor<32x64xf32>, %w: tensor<64x64xf32>,\n"
    "                %c: tensor<64x64xf32>) -> tensor<64x64xf32> {\n"
    "  %e = stablehlo.dot_general %y, %w, contracting_dims = [1] x [0] :\n"
    "       (tensor<32x64xf32>, tensor<64x64xf32>) -> tensor<32x64xf32>\n"
    "  %c0 = stablehlo.constant dense<0> : tensor<i32>\n"
    "  %0:2 = stablehlo.while(%i = %c0, %a = %x) : tensor<i32>, tensor<32x64xf32>\n"
    "    cond {\n"
    "      %n = stablehlo.constant dense<2> : tensor<i32>\n"
    "      %g = stablehlo.compare LT, %i, %n, SIGNED : (tensor<i32>, tensor<i32>) -> tensor<i1>\n"
    "      stablehlo.return %g : tensor<i1>\n"
    "    } do {\n"
    "      %one = stablehlo.constant dense<1> : tensor<i32>\n"
    "      %i1 = stablehlo.add %i, %one : tensor<i32>\n"
    "      %a1 = stablehlo.multiply %a, %a : tensor<32x64xf32>\n"
    "      %a2 = stablehlo.subtract %a1, %a : tensor<32x64xf32>\n"
    "      stablehlo.return %i1, %a2 : tensor<i32>, tensor<32x64xf32>\n"
    "    }\n"
    "  %m = stablehlo.concatenate %0#1, %e, dim = 0 :\n"
    "       (tensor<32x64xf32>, tensor<32x64xf32>) -> tensor<64x64xf32>\n"
    "  %r = stablehlo.dot_general %m, %c, contracting_dims = [1] x [0] :\n"
    "       (tensor<64x64xf32>, tensor<64x64xf32>) -> tensor<64x64xf32>\n"
    "  return %r : tensor<64x64xf32>\n"
    "}\n";

TEST(host_and_device_temporaries_in_one_result) {
  bool skipped = false;
  CHECK(tl_backends_agree("mixed", mixed, &devmem, 0x1f, 8, 3, NULL, &skipped));
  if (skipped) return;
  hlo_module *m;
  hlo_executable *e;
  const runtime_cpu_stats *cs = compile_devmem("mixed", mixed, &m, &e, &skipped);
  if (skipped) {
    hlo_module_destroy(m);
    return;
  }
  CHECK(cs != NULL);
  if (cs) {
    if (cs->temp_bytes != 16384 || getenv("MEMDBG"))
      fprintf(stderr, "  arena %lld bytes, 16384 expected\n", (long long)cs->temp_bytes);
    CHECK_EQ_INT(cs->temp_bytes, 16384); /* m alone: s and e in r's allocation */
    CHECK_EQ_INT(cs->out_bytes, 16384);
  }
  float x[32 * 64], y[32 * 64], w[64 * 64], c[64 * 64], x0[32 * 64], y0[32 * 64];
  for (int i = 0; i < 32 * 64; i++) {
    x[i] = (float)((i * 37) % 101) * 0.01f - 0.5f;
    y[i] = (float)(i % 5) * 0.25f - 0.5f;
  }
  for (int i = 0; i < 64 * 64; i++) {
    w[i] = (float)(i % 7) * 0.125f - 0.375f;
    c[i] = (float)(i % 3) * 0.5f - 0.5f;
  }
  memcpy(x0, x, sizeof x);
  memcpy(y0, y, sizeof y);
  const int64_t d32[2] = {32, 64}, d64[2] = {64, 64};
  hlo_buffer_view args[4] = {{HLO_F32, 2, d32, x}, {HLO_F32, 2, d32, y}, {HLO_F32, 2, d64, w},
                             {HLO_F32, 2, d64, c}};
  hlo_buffer **res[2] = {NULL, NULL};
  float first[64 * 64];
  for (int run = 0; run < 2 && e; run++) {
    uint64_t copies = 0, bytes = 0;
    cpu_devmem_counters(NULL, NULL, NULL, true);
    hlo_status st = hlo_executable_run(e, args, 4, &res[run]);
    CHECK(st == NULL);
    hlo_status_free(st);
    cpu_devmem_counters(&copies, &bytes, NULL, true);
    /* up: y, w, c and the loop's state (8 KB: x copied into its slot on
     * the host, then read by the body: the granules of the slot, not r's
     * whole allocation); the result stays on the device */
    if (bytes != sizeof y + sizeof w + sizeof c + 32 * 64 * 4 || getenv("MEMDBG"))
      fprintf(stderr, "  run %d: %llu copies, %llu bytes\n", run, (unsigned long long)copies,
              (unsigned long long)bytes);
    CHECK_EQ_INT(bytes, sizeof y + sizeof w + sizeof c + 32 * 64 * 4);
    if (run == 0 && res[0]) memcpy(first, hlo_buffer_data(res[0][0]), sizeof first);
  }
  CHECK(memcmp(x, x0, sizeof x) == 0 && memcmp(y, y0, sizeof y) == 0);
  if (res[0] && res[1]) {
    CHECK(memcmp(first, hlo_buffer_data(res[0][0]), sizeof first) == 0);
    CHECK(memcmp(first, hlo_buffer_data(res[1][0]), sizeof first) == 0);
    /* r row i = (the loop's row i, or (y . w) row i - 32) . c, to rounding */
    const float *r = hlo_buffer_data(res[0][0]);
    for (int i = 0; i < 64; i += 9) {
      double row[64];
      if (i < 32) { /* two rounds of a = a * a - a */
        for (int k = 0; k < 64; k++) {
          float a = x[i * 64 + k];
          for (int n = 0; n < 2; n++) a = a * a - a;
          row[k] = a;
        }
      } else {
        for (int k = 0; k < 64; k++) {
          row[k] = 0;
          for (int j = 0; j < 64; j++) row[k] += (double)y[(i - 32) * 64 + j] * w[j * 64 + k];
        }
      }
      for (int j = 0; j < 64; j += 5) {
        double want = 0;
        for (int k = 0; k < 64; k++) want += row[k] * c[k * 64 + j];
        CHECK(fabs(r[i * 64 + j] - want) <= 1e-4 * (fabs(want) + 1));
      }
    }
  }
  for (int run = 0; run < 2; run++) {
    if (res[run]) hlo_buffer_destroy(res[run][0]);
    free(res[run]);
  }
  hlo_executable_destroy(e);
  hlo_module_destroy(m);
}

/* A while loop's 16 KB state (its slot written in place by the body's
 * kernels, on the device) dies at the reduce after the loop; the result,
 * written after it, holds it: the arena keeps scalars and rows only
 * (before: 16 KB and more). */
TEST(loop_state_in_a_result_on_the_device) {
  const char *text =
      "func.func @main(%x: tensor<64x64xf32>) -> tensor<64x64xf32> {\n"
      "  %c0 = stablehlo.constant dense<0> : tensor<i32>\n"
      "  %z = stablehlo.constant dense<0.0> : tensor<f32>\n"
      "  %h = stablehlo.constant dense<0.5> : tensor<64x64xf32>\n"
      "  %x0 = stablehlo.multiply %x, %h : tensor<64x64xf32>\n"
      "  %0:2 = stablehlo.while(%i = %c0, %a = %x0) : tensor<i32>, tensor<64x64xf32>\n"
      "    cond {\n"
      "      %n = stablehlo.constant dense<3> : tensor<i32>\n"
      "      %g = stablehlo.compare LT, %i, %n, SIGNED : (tensor<i32>, tensor<i32>) -> tensor<i1>\n"
      "      stablehlo.return %g : tensor<i1>\n"
      "    } do {\n"
      "      %one = stablehlo.constant dense<1> : tensor<i32>\n"
      "      %i1 = stablehlo.add %i, %one : tensor<i32>\n"
      "      %a1 = stablehlo.multiply %a, %a : tensor<64x64xf32>\n"
      "      %a2 = stablehlo.subtract %a1, %a : tensor<64x64xf32>\n"
      "      stablehlo.return %i1, %a2 : tensor<i32>, tensor<64x64xf32>\n"
      "    }\n"
      "  %s = stablehlo.reduce(%0#1 init: %z) applies stablehlo.add across dimensions = [1] :\n"
      "       (tensor<64x64xf32>, tensor<f32>) -> tensor<64xf32>\n"
      "  %sb = stablehlo.broadcast_in_dim %s, dims = [1] : (tensor<64xf32>) -> tensor<64x64xf32>\n"
      "  %r = stablehlo.add %sb, %x : tensor<64x64xf32>\n"
      "  return %r : tensor<64x64xf32>\n"
      "}\n";
  bool skipped = false;
  CHECK(tl_backends_agree("loop_state", text, &devmem, 0x1f, 8, 6, NULL, &skipped));
  if (skipped) return;
  hlo_module *m;
  hlo_executable *e;
  const runtime_cpu_stats *cs = compile_devmem("loop_state", text, &m, &e, &skipped);
  CHECK(skipped || cs != NULL);
  if (cs) {
    if (cs->temp_bytes >= 16384 || getenv("MEMDBG"))
      fprintf(stderr, "  arena %lld bytes, less than 16384 expected\n", (long long)cs->temp_bytes);
    CHECK(cs->temp_bytes < 16384);
  }
  hlo_executable_destroy(e);
  hlo_module_destroy(m);
}

/* A case whose branches each make a 16 KB product (their arena: the
 * case's block) and return its row sums or maxima; the result, a 16 KB
 * kernel output written after the case, holds the branches' arena (the
 * arena keeps the small values only). Both branches run (the selector is
 * a random argument). */
TEST(case_arena_in_a_result_on_the_device) {
  const char *text =
      "func.func @main(%k: tensor<i32>, %x: tensor<64x64xf32>, %c: tensor<64x64xf32>)\n"
      "    -> tensor<64x64xf32> {\n"
      "  %z = stablehlo.constant dense<0.0> : tensor<f32>\n"
      "  %v = \"stablehlo.case\"(%k) ({\n"
      "    %t = stablehlo.dot_general %x, %c, contracting_dims = [1] x [0] :\n"
      "         (tensor<64x64xf32>, tensor<64x64xf32>) -> tensor<64x64xf32>\n"
      "    %s = stablehlo.reduce(%t init: %z) applies stablehlo.add across dimensions = [1] :\n"
      "         (tensor<64x64xf32>, tensor<f32>) -> tensor<64xf32>\n"
      "    stablehlo.return %s : tensor<64xf32>\n"
      "  }, {\n"
      "    %t = stablehlo.dot_general %c, %x, contracting_dims = [1] x [0] :\n"
      "         (tensor<64x64xf32>, tensor<64x64xf32>) -> tensor<64x64xf32>\n"
      "    %s = stablehlo.reduce(%t init: %z) applies stablehlo.maximum across dimensions = [1] :\n"
      "         (tensor<64x64xf32>, tensor<f32>) -> tensor<64xf32>\n"
      "    stablehlo.return %s : tensor<64xf32>\n"
      "  }) : (tensor<i32>) -> tensor<64xf32>\n"
      "  %vb = stablehlo.broadcast_in_dim %v, dims = [0] : (tensor<64xf32>) -> tensor<64x64xf32>\n"
      "  %m = stablehlo.multiply %vb, %c : tensor<64x64xf32>\n"
      "  %r = stablehlo.add %m, %x : tensor<64x64xf32>\n"
      "  return %r : tensor<64x64xf32>\n"
      "}\n";
  bool skipped = false;
  /* random selectors 0..8: branch 0, or 1 (out of range: the last) */
  for (uint64_t seed = 1; seed <= 4 && !skipped; seed++)
    CHECK(tl_backends_agree("case_arena", text, &devmem, 0x1f, 64, seed, NULL, &skipped));
  if (skipped) return;
  hlo_module *m;
  hlo_executable *e;
  const runtime_cpu_stats *cs = compile_devmem("case_arena", text, &m, &e, &skipped);
  CHECK(skipped || cs != NULL);
  if (cs) {
    if (cs->temp_bytes >= 16384 || getenv("MEMDBG"))
      fprintf(stderr, "  arena %lld bytes, less than 16384 expected\n", (long long)cs->temp_bytes);
    CHECK(cs->temp_bytes < 16384); /* the case's 16 KB block in r's allocation */
  }
  hlo_executable_destroy(e);
  hlo_module_destroy(m);
}

/* A kernel result written over a temporary that dies there
 * (plan_results_over_temps: XLA's CanShareOperandBufferWithUser): the
 * gemm's product t is made in an allocation of its own, which becomes the
 * result r = tanh(t) + c, written in place on the device. The arena holds
 * nothing (before: t's 16 KB); each run's result is memory of its own. */
TEST(result_written_over_a_dying_product_on_the_device) {
  const char *text =
      "func.func @main(%a: tensor<64x64xf32>, %b: tensor<64x64xf32>, %c: tensor<64x64xf32>)\n"
      "    -> tensor<64x64xf32> {\n"
      "  %t = stablehlo.dot_general %a, %b, contracting_dims = [1] x [0] :\n"
      "       (tensor<64x64xf32>, tensor<64x64xf32>) -> tensor<64x64xf32>\n"
      "  %h = stablehlo.tanh %t : tensor<64x64xf32>\n"
      "  %r = stablehlo.add %h, %c : tensor<64x64xf32>\n"
      "  return %r : tensor<64x64xf32>\n"
      "}\n";
  bool skipped = false;
  CHECK(tl_backends_agree("over_product", text, &devmem, 0x1f, 64, 5, NULL, &skipped));
  if (skipped) return;
  hlo_module *m;
  hlo_executable *e;
  const runtime_cpu_stats *cs = compile_devmem("over_product", text, &m, &e, &skipped);
  CHECK(skipped || cs != NULL);
  if (cs) {
    if (cs->temp_bytes != 0 || getenv("MEMDBG"))
      fprintf(stderr, "  arena %lld bytes, 0 expected\n", (long long)cs->temp_bytes);
    CHECK_EQ_INT(cs->temp_bytes, 0);
    CHECK_EQ_INT(cs->out_bytes, 16384);
  }
  float a[64 * 64], b[64 * 64], c[64 * 64], first[64 * 64];
  for (int i = 0; i < 64 * 64; i++) {
    a[i] = (float)(i % 11) * 0.05f - 0.25f;
    b[i] = (float)(i % 13) * 0.04f - 0.25f;
    c[i] = (float)(i % 3);
  }
  const int64_t dims[2] = {64, 64};
  hlo_buffer_view args[3] = {{HLO_F32, 2, dims, a}, {HLO_F32, 2, dims, b}, {HLO_F32, 2, dims, c}};
  hlo_buffer **res[2] = {NULL, NULL};
  for (int run = 0; run < 2 && e; run++) {
    if (run == 1) c[0] = 100.0f; /* the second run's result differs in one element */
    hlo_status st = hlo_executable_run(e, args, 3, &res[run]);
    CHECK(st == NULL);
    hlo_status_free(st);
    if (run == 0 && res[0]) memcpy(first, hlo_buffer_data(res[0][0]), sizeof first);
  }
  if (res[0] && res[1]) {
    const float *r0 = hlo_buffer_data(res[0][0]), *r1 = hlo_buffer_data(res[1][0]);
    CHECK(memcmp(first, r0, sizeof first) == 0); /* the second run wrote its own memory */
    CHECK(r1[0] - r0[0] == 100.0f);
    for (int i = 0; i < 64; i += 7)
      for (int j = 0; j < 64; j += 5) {
        double t = 0;
        for (int k = 0; k < 64; k++) t += (double)a[i * 64 + k] * b[k * 64 + j];
        double want = tanh(t) + (i == 0 && j == 0 ? 0.0 : c[i * 64 + j]);
        CHECK(fabs(r0[i * 64 + j] - want) <= 1e-4 * (fabs(want) + 1));
      }
  }
  for (int run = 0; run < 2; run++) {
    if (res[run]) hlo_buffer_destroy(res[run][0]);
    free(res[run]);
  }
  hlo_executable_destroy(e);
  hlo_module_destroy(m);
}

TEST_MAIN()
