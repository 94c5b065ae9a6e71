/* test_cpu_liveout.c — temporaries in result memory (executable_cpu_buffers.c,
 * place_in_results; XLA's buffer assigner reusing live-out allocations):
 * on the CPU backend, program 0's results that are written after a
 * temporary dies are allocated when a run starts and may hold that
 * temporary (or a while loop's state, or a region's arena) first. Checks:
 * a temporary dying before the result is written leaves the arena; one
 * read by the step writing the result does not; a loop's state dying
 * before the result does; results are the interpreter's (every program
 * through tl_backends_agree), each run's results are memory of their own
 * (a second run changes none of the first's), the caller's arguments are
 * never written (also those donated with tf.aliasing_output: this runtime
 * gives no result an argument's memory), results that are arguments,
 * constants or one value returned twice are right, and the dump names
 * the values in each result's allocation. */
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "hlo/hlo.h"
#include "runtime/runtime.h"
#include "test.h"
#include "testlib.h"

/* The memory figures of `text` compiled for the CPU backend (NULL: it
 * does not compile); *m and *e to destroy. With dump_dir, the dump there. */
static const runtime_cpu_stats *compile_stats(const char *name, const char *text,
                                              const char *dump_dir, hlo_module **m,
                                              hlo_executable **e) {
  hlo_compile_options o = {.backend = HLO_BACKEND_CPU, .no_cache = true, .dump_dir = dump_dir};
  *m = NULL, *e = NULL;
  hlo_status st = hlo_module_parse(name, text, strlen(text), m);
  if (!st) st = hlo_executable_compile(*m, NULL, &o, e);
  if (st) hlo_status_print(st, stderr);
  hlo_status_free(st);
  return *e ? runtime_executable_cpu_stats(*e) : NULL;
}

/* Two 16 KB pads live at once, each dying at its reduce, before the
 * result's product (which reads a matrix made from the reduced rows)
 * writes the 16 KB result: one of them lies in the result's allocation,
 * so the arena holds 16 KB of them, not 32 (before: 32768 bytes). */
static const char *two_pads =
    "func.func @main(%a: tensor<63x64xf32>, %b: tensor<63x64xf32>, %c: tensor<64x64xf32>)\n"
    "    -> tensor<64x64xf32> {\n"
    "  %z = stablehlo.constant dense<0.0> : tensor<f32>\n"
    "  %t = stablehlo.pad %a, %z, low = [1, 0], high = [0, 0], interior = [0, 0] :\n"
    "       (tensor<63x64xf32>, tensor<f32>) -> tensor<64x64xf32>\n"
    "  %u = stablehlo.pad %b, %z, low = [0, 0], high = [1, 0], interior = [0, 0] :\n"
    "       (tensor<63x64xf32>, tensor<f32>) -> tensor<64x64xf32>\n"
    "  %s = stablehlo.reduce(%t init: %z) applies stablehlo.maximum across dimensions = [1] :\n"
    "       (tensor<64x64xf32>, tensor<f32>) -> tensor<64xf32>\n"
    "  %w = stablehlo.reduce(%u init: %z) applies stablehlo.add across dimensions = [1] :\n"
    "       (tensor<64x64xf32>, tensor<f32>) -> tensor<64xf32>\n"
    "  %sw = stablehlo.multiply %s, %w : tensor<64xf32>\n"
    "  %sb = stablehlo.broadcast_in_dim %sw, dims = [0] : (tensor<64xf32>) -> tensor<64x64xf32>\n"
    "  %m = stablehlo.add %sb, %c : tensor<64x64xf32>\n"
    "  %r = stablehlo.dot_general %m, %c, contracting_dims = [1] x [0] :\n"
    "       (tensor<64x64xf32>, tensor<64x64xf32>) -> tensor<64x64xf32>\n"
    "  return %r : tensor<64x64xf32>\n"
    "}\n";

TEST(temporary_dying_before_the_result_lies_in_it) {
  bool skipped = false;
  CHECK(tl_backends_agree("two_pads", two_pads, NULL, 0x1f, 8, 3, NULL, &skipped));
  if (skipped) return;
  hlo_module *m;
  hlo_executable *e;
  char dir[] = "/tmp/hlo_liveout_XXXXXX";
  CHECK(mkdtemp(dir) != NULL);
  const runtime_cpu_stats *cs = compile_stats("two_pads", two_pads, dir, &m, &e);
  CHECK(cs != NULL);
  if (cs) {
    if (cs->temp_bytes >= 32768 || getenv("MEMDBG"))
      fprintf(stderr, "  arena %lld bytes, less than 32768 expected\n", (long long)cs->temp_bytes);
    CHECK(cs->temp_bytes < 32768); /* one pad in the result */
    CHECK(cs->temp_bytes >= 16384); /* the other in the arena (live with the first) */
    CHECK_EQ_INT(cs->out_bytes, 16384);
    CHECK_EQ_INT(cs->peak_bytes, cs->arg_bytes + cs->out_bytes + cs->temp_bytes +
                                     cs->heap_peak_bytes);
  }
  /* the dump names the pad in the result's allocation */
  char path[256], line[512];
  snprintf(path, sizeof path, "%s/buffer_assignment.txt", dir);
  FILE *fp = fopen(path, "r");
  CHECK(fp != NULL);
  bool named = false, pad_in = false;
  while (fp && fgets(line, sizeof line, fp)) {
    if (strstr(line, "in the allocation of result %r : tensor<64x64xf32>")) named = true;
    else if (named && !pad_in && strstr(line, "tensor<64x64xf32>") &&
             (strstr(line, "%t :") || strstr(line, "%u :")))
      pad_in = true;
  }
  if (fp) fclose(fp);
  CHECK(named);
  CHECK(pad_in);
  remove(path);
  rmdir(dir);
  /* two runs: the first's result is not changed by the second (each run
   * allocates its results), the arguments are never written */
  float a[63 * 64], b[63 * 64], c[64 * 64], a0[63 * 64], b0[63 * 64], c0[64 * 64];
  for (int i = 0; i < 63 * 64; i++) {
    a[i] = (float)(i % 5) - 1.0f;
    b[i] = (float)(i % 3) * 0.5f;
  }
  for (int i = 0; i < 64 * 64; i++) c[i] = (float)(i % 7) * 0.125f;
  memcpy(a0, a, sizeof a);
  memcpy(b0, b, sizeof b);
  memcpy(c0, c, sizeof c);
  const int64_t dims[2] = {63, 64}, cdims[2] = {64, 64};
  hlo_buffer_view args[3] = {{HLO_F32, 2, dims, a}, {HLO_F32, 2, dims, b}, {HLO_F32, 2, cdims, c}};
  hlo_buffer **res[2] = {NULL, NULL};
  float first[64 * 64];
  for (int run = 0; run < 2 && e; run++) {
    hlo_status st = hlo_executable_run(e, args, 3, &res[run]);
    CHECK(st == NULL);
    hlo_status_free(st);
    if (run == 0 && res[0]) memcpy(first, hlo_buffer_data(res[0][0]), sizeof first);
  }
  CHECK(memcmp(a, a0, sizeof a) == 0 && memcmp(b, b0, sizeof b) == 0);
  CHECK(memcmp(c, c0, sizeof c) == 0);
  if (res[0] && res[1]) {
    CHECK(hlo_buffer_data(res[0][0]) != hlo_buffer_data(res[1][0]));
    CHECK(memcmp(first, hlo_buffer_data(res[0][0]), sizeof first) == 0);
    CHECK(memcmp(first, hlo_buffer_data(res[1][0]), sizeof first) == 0);
    /* r = (max(t row i) * sum(u row i) + c[i][k]) . c, to float rounding */
    const float *r = hlo_buffer_data(res[0][0]);
    for (int i = 0; i < 64; i += 7) {
      float mx = 0, sm = 0;
      for (int j = 0; j < 64; j++) {
        float tv = i == 0 ? 0.0f : a[(i - 1) * 64 + j], uv = i == 63 ? 0.0f : b[i * 64 + j];
        if (tv > mx) mx = tv;
        sm += uv;
      }
      for (int j = 0; j < 64; j += 5) {
        double want = 0;
        for (int k = 0; k < 64; k++) want += ((double)mx * sm + c[i * 64 + k]) * c[k * 64 + j];
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

/* The temporary is read by the step writing the result (a transpose:
 * not elementwise, so not written over it either): their live ranges
 * meet, it keeps its arena slot. */
TEST(temporary_read_by_the_result_writer_stays) {
  const char *text =
      "func.func @main(%a: tensor<63x64xf32>) -> tensor<64x64xf32> {\n"
      "  %z = stablehlo.constant dense<0.0> : tensor<f32>\n"
      "  %t = stablehlo.pad %a, %z, low = [1, 0], high = [0, 0], interior = [0, 0] :\n"
      "       (tensor<63x64xf32>, tensor<f32>) -> tensor<64x64xf32>\n"
      "  %r = stablehlo.transpose %t, dims = [1, 0] : (tensor<64x64xf32>) -> tensor<64x64xf32>\n"
      "  return %r : tensor<64x64xf32>\n"
      "}\n";
  bool skipped = false;
  CHECK(tl_backends_agree("meets", text, NULL, 0x1f, 8, 4, NULL, &skipped));
  if (skipped) return;
  hlo_module *m;
  hlo_executable *e;
  const runtime_cpu_stats *cs = compile_stats("meets", text, NULL, &m, &e);
  CHECK(cs != NULL);
  if (cs) CHECK(cs->temp_bytes >= 16384);
  hlo_executable_destroy(e);
  hlo_module_destroy(m);
}

/* A while loop's 16 KB state (its slot in the arena, written in place by
 * the body) dies at the reduce after the loop; the result, written after
 * it, holds it: the arena keeps only scalars and rows (before: 16640
 * bytes, after: 256). */
TEST(loop_state_lies_in_a_result) {
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
  CHECK(tl_backends_agree("loop_state", text, NULL, 0x1f, 8, 6, NULL, &skipped));
  if (skipped) return;
  hlo_module *m;
  hlo_executable *e;
  const runtime_cpu_stats *cs = compile_stats("loop_state", text, NULL, &m, &e);
  CHECK(cs != NULL);
  if (cs) {
    if (cs->temp_bytes >= 16384 || getenv("MEMDBG"))
      fprintf(stderr, "  arena %lld bytes, less than 16384 expected\n", (long long)cs->temp_bytes);
    CHECK(cs->temp_bytes < 16384);
  }
  hlo_executable_destroy(e);
  hlo_module_destroy(m);
}

/* Results that are not allocations of the run's (an argument passed
 * through, a constant, one value returned twice) beside one that holds a
 * temporary, with an argument donated to a result of its type, the
 * passed-through one (tf.aliasing_output: this runtime still gives the
 * result memory of its own, and never writes the argument): every result
 * is right, on two runs. */
TEST(passed_through_twice_and_donated) {
  const char *text =
      "func.func @main(%a: tensor<63x64xf32> {tf.aliasing_output = 1 : i32},\n"
      "                %b: tensor<63x64xf32>) -> (tensor<64x64xf32>, tensor<63x64xf32>,\n"
      "                tensor<4xf32>, tensor<64xf32>, tensor<64xf32>) {\n"
      "  %z = stablehlo.constant dense<0.0> : tensor<f32>\n"
      "  %k = stablehlo.constant dense<[1.0, 2.0, 3.0, 4.0]> : tensor<4xf32>\n"
      "  %t = stablehlo.pad %a, %z, low = [1, 0], high = [0, 0], interior = [0, 0] :\n"
      "       (tensor<63x64xf32>, tensor<f32>) -> tensor<64x64xf32>\n"
      "  %u = stablehlo.pad %b, %z, low = [0, 0], high = [1, 0], interior = [0, 0] :\n"
      "       (tensor<63x64xf32>, tensor<f32>) -> tensor<64x64xf32>\n"
      "  %s = stablehlo.reduce(%t init: %z) applies stablehlo.maximum across dimensions = [1] :\n"
      "       (tensor<64x64xf32>, tensor<f32>) -> tensor<64xf32>\n"
      "  %w = stablehlo.reduce(%u init: %z) applies stablehlo.add across dimensions = [1] :\n"
      "       (tensor<64x64xf32>, tensor<f32>) -> tensor<64xf32>\n"
      "  %sw = stablehlo.multiply %s, %w : tensor<64xf32>\n"
      "  %sb = stablehlo.broadcast_in_dim %sw, dims = [0] : (tensor<64xf32>) -> tensor<64x64xf32>\n"
      "  %r = stablehlo.dot_general %sb, %sb, contracting_dims = [1] x [0] :\n"
      "       (tensor<64x64xf32>, tensor<64x64xf32>) -> tensor<64x64xf32>\n"
      "  return %r, %b, %k, %sw, %sw : tensor<64x64xf32>, tensor<63x64xf32>, tensor<4xf32>,\n"
      "         tensor<64xf32>, tensor<64xf32>\n"
      "}\n";
  bool skipped = false;
  CHECK(tl_backends_agree("passed_through", text, NULL, 0x1f, 8, 8, NULL, &skipped));
  if (skipped) return;
  hlo_module *m;
  hlo_executable *e;
  const runtime_cpu_stats *cs = compile_stats("passed_through", text, NULL, &m, &e);
  CHECK(cs != NULL);
  if (cs) CHECK(cs->temp_bytes <= 32768); /* %t in %r: before, 49152 (t, u, sb at one step) */
  float a[63 * 64], b[63 * 64], a0[63 * 64];
  for (int i = 0; i < 63 * 64; i++) {
    a[i] = (float)(i % 9) - 3.0f;
    b[i] = (float)(i % 4) * 0.25f;
  }
  memcpy(a0, a, sizeof a);
  const int64_t dims[2] = {63, 64};
  hlo_buffer_view args[2] = {{HLO_F32, 2, dims, a}, {HLO_F32, 2, dims, b}};
  hlo_buffer **res[2] = {NULL, NULL};
  for (int run = 0; run < 2 && e; run++) {
    hlo_status st = hlo_executable_run(e, args, 2, &res[run]);
    CHECK(st == NULL);
    hlo_status_free(st);
  }
  CHECK(memcmp(a, a0, sizeof a) == 0);
  for (int run = 0; run < 2 && res[run]; run++) {
    const float *r = hlo_buffer_data(res[run][0]), *pb = hlo_buffer_data(res[run][1]);
    const float *k = hlo_buffer_data(res[run][2]);
    const float *s1 = hlo_buffer_data(res[run][3]), *s2 = hlo_buffer_data(res[run][4]);
    CHECK(memcmp(pb, b, sizeof b) == 0);
    CHECK(k[0] == 1.0f && k[3] == 4.0f);
    CHECK(memcmp(s1, s2, 64 * sizeof(float)) == 0);
    for (int i = 0; i < 64; i++) {
      float mx = 0, sm = 0;
      for (int j = 0; j < 64; j++) {
        float t = i == 0 ? 0.0f : a[(i - 1) * 64 + j], u = i == 63 ? 0.0f : b[i * 64 + j];
        if (t > mx) mx = t;
        sm += u;
      }
      CHECK(s1[i] == mx * sm);
      (void)r; /* r: the interpreter's (tl_backends_agree) */
    }
  }
  for (int run = 0; run < 2; run++) {
    for (int i = 0; res[run] && i < 5; i++) hlo_buffer_destroy(res[run][i]);
    free(res[run]);
  }
  hlo_executable_destroy(e);
  hlo_module_destroy(m);
}

TEST_MAIN()
