/* test_buffer_assignment.c — the heap simulator of buffer assignment
 * (src/runtime/buffer_assignment.c): buffers live at the same step never
 * share bytes, offsets are aligned, the arena holds every buffer, reuse
 * happens when live ranges are disjoint, and the packing is never smaller
 * than the peak of live bytes (a lower bound any packing must meet), small
 * buffers pack below the alignment; and the
 * CPU executable's while buffers: a body whose rounds update two carried
 * values through kernels that each read both writes every round in place
 * over the carried buffers (executable_cpu_buffers.c, plan_carried); a
 * result written over a temporary that dies at its kernel
 * (plan_results_over_temps); a scan body's slices made when they are read
 * (schedule_program). */
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "hlo/hlo.h"
#include "runtime/buffer_assignment.h"
#include "runtime/runtime.h"
#include "test.h"
#include "testlib.h"

static uint64_t rng = 99;
static uint32_t rnd(uint32_t n) {
  rng = rng * 6364136223846793005ULL + 1442695040888963407ULL;
  return (uint32_t)((rng >> 33) % n);
}

/* Whether any two buffers live at one step overlap in bytes (each taking
 * its size rounded up to `align`, or with `small` its size). */
static bool overlaps_as(const ba_buffer *b, uint32_t n, int64_t align, bool small) {
  for (uint32_t i = 0; i < n; i++)
    for (uint32_t j = i + 1; j < n; j++) {
      if (!b[i].bytes || !b[j].bytes) continue;
      bool time = !(b[i].end < b[j].start || b[j].end < b[i].start);
      int64_t ai = small ? 1 : align, aj = ai;
      int64_t ei = b[i].offset + ((b[i].bytes + ai - 1) & ~(ai - 1));
      int64_t ej = b[j].offset + ((b[j].bytes + aj - 1) & ~(aj - 1));
      bool bytes = b[i].offset < ej && b[j].offset < ei;
      if (time && bytes) return true;
    }
  return false;
}

static bool overlaps(const ba_buffer *b, uint32_t n, int64_t align) {
  return overlaps_as(b, n, align, false);
}

TEST(disjoint_lifetimes_share) {
  /* a chain: each buffer read only by the next step: two slots suffice */
  ba_buffer b[6];
  for (uint32_t i = 0; i < 6; i++) b[i] = (ba_buffer){1000, i, i + 1, -1};
  int64_t total = 0;
  CHECK(ba_pack(b, 6, 64, false, &total) == NULL);
  CHECK_EQ_INT(total, 2 * 1024);
  CHECK(!overlaps(b, 6, 64));
  CHECK_EQ_INT(ba_peak_live(b, 6), 2000);
}

TEST(live_together_never_share) {
  ba_buffer b[3] = {{100, 0, 5, 0}, {200, 1, 4, 0}, {50, 2, 3, 0}};
  int64_t total = 0;
  CHECK(ba_pack(b, 3, 64, false, &total) == NULL);
  CHECK_EQ_INT(total, 128 + 256 + 64);
  CHECK(!overlaps(b, 3, 64));
  for (int i = 0; i < 3; i++) CHECK(b[i].offset % 64 == 0);
}

TEST(empty_and_zero_sized) {
  int64_t total = 7;
  CHECK(ba_pack(NULL, 0, 64, false, &total) == NULL);
  CHECK_EQ_INT(total, 0);
  ba_buffer z[2] = {{0, 0, 3, 0}, {64, 1, 2, 0}};
  CHECK(ba_pack(z, 2, 64, false, &total) == NULL);
  CHECK_EQ_INT(total, 64);
  CHECK_EQ_INT(z[0].offset, 0);
}

TEST(random_programs) {
  /* random live ranges and sizes: no overlap, arena >= peak live, every
   * buffer inside the arena */
  for (int trial = 0; trial < 300; trial++) {
    uint32_t n = 1 + rnd(60);
    ba_buffer b[60];
    for (uint32_t i = 0; i < n; i++) {
      uint32_t s = rnd(40);
      b[i] = (ba_buffer){(int64_t)rnd(5000), s, s + rnd(10), -1};
    }
    int64_t total = 0;
    CHECK(ba_pack(b, n, 64, false, &total) == NULL);
    CHECK(!overlaps(b, n, 64));
    CHECK(total >= ba_peak_live(b, n));
    for (uint32_t i = 0; i < n; i++) CHECK(b[i].offset >= 0 && b[i].offset + b[i].bytes <= total);
  }
}

TEST(small_buffers_pack_below_the_alignment) {
  /* four scalars and a 24-byte vector live together: 24 + 4 * 4 bytes
   * (each at a multiple of the power of two that holds it), not five cache
   * lines; a 100-byte buffer keeps the 64-byte alignment */
  CHECK_EQ_INT(ba_buffer_align(4, 64), 4);
  CHECK_EQ_INT(ba_buffer_align(24, 64), 32);
  CHECK_EQ_INT(ba_buffer_align(1, 64), 1);
  CHECK_EQ_INT(ba_buffer_align(100, 64), 64);
  CHECK_EQ_INT(ba_buffer_align(0, 64), 1);
  ba_buffer b[5] = {{4, 0, 3, 0}, {4, 0, 3, 0}, {4, 1, 3, 0}, {4, 1, 2, 0}, {24, 0, 3, 0}};
  int64_t total = 0;
  CHECK(ba_pack(b, 5, 64, true, &total) == NULL);
  CHECK_EQ_INT(total, 40);
  CHECK(!overlaps_as(b, 5, 64, true));
  for (int i = 0; i < 5; i++) CHECK(b[i].offset % ba_buffer_align(b[i].bytes, 64) == 0);
  ba_buffer c[2] = {{100, 0, 1, 0}, {4, 0, 1, 0}};
  CHECK(ba_pack(c, 2, 64, true, &total) == NULL);
  CHECK_EQ_INT(c[0].offset % 64, 0);
  CHECK(!overlaps_as(c, 2, 64, true));
  /* without `small` every buffer takes whole 64-byte lines */
  CHECK(ba_pack(b, 5, 64, false, &total) == NULL);
  CHECK_EQ_INT(total, 5 * 64);
  /* random mixes of small and large: no overlap, aligned, inside */
  for (int trial = 0; trial < 300; trial++) {
    uint32_t n = 1 + rnd(60);
    ba_buffer r[60];
    for (uint32_t i = 0; i < n; i++) {
      uint32_t s = rnd(40);
      r[i] = (ba_buffer){(int64_t)(rnd(3) ? rnd(70) : rnd(3000)), s, s + rnd(10), -1};
    }
    CHECK(ba_pack(r, n, 64, true, &total) == NULL);
    CHECK(!overlaps_as(r, n, 64, true));
    CHECK(total >= ba_peak_live(r, n));
    for (uint32_t i = 0; i < n; i++) {
      CHECK(r[i].offset >= 0 && r[i].offset + r[i].bytes <= total);
      CHECK(r[i].offset % ba_buffer_align(r[i].bytes, 64) == 0);
    }
  }
}

TEST(too_large_is_an_error) {
  ba_buffer b[2] = {{INT64_MAX - 10, 0, 1, 0}, {INT64_MAX - 10, 0, 1, 0}};
  int64_t total = 0;
  hlo_status st = ba_pack(b, 2, 64, false, &total);
  CHECK(st && hlo_status_code_of(st) == HLO_RESOURCE_EXHAUSTED);
  hlo_status_free(st);
}

/* Two carried words updated by rounds of separate kernels (each value read
 * twice, so fusion keeps them apart), as threefry's loop body: x += y;
 * y = y ^ x, three times. Every round writes over the carried buffers:
 * the body needs no 4 KB slot of its own. Results are checked against
 * the interpreter. */
TEST(while_rounds_in_place) {
  const char *text =
      "func.func @main(%x: tensor<1024xui32>, %y: tensor<1024xui32>) -> (tensor<1024xui32>, "
      "tensor<1024xui32>) {\n"
      "  %c0 = stablehlo.constant dense<0> : tensor<i32>\n"
      "  %0:3 = stablehlo.while(%i = %c0, %a = %x, %b = %y) : tensor<i32>, tensor<1024xui32>, "
      "tensor<1024xui32>\n"
      "    cond {\n"
      "      %n = stablehlo.constant dense<3> : tensor<i32>\n"
      "      %g = stablehlo.compare LT, %i, %n, SIGNED : (tensor<i32>, tensor<i32>) -> tensor<i1>\n"
      "      stablehlo.return %g : tensor<i1>\n"
      "    } do {\n"
      "      %one = stablehlo.constant dense<1> : tensor<i32>\n"
      "      %i1 = stablehlo.add %i, %one : tensor<i32>\n"
      "      %x1 = stablehlo.add %a, %b : tensor<1024xui32>\n"
      "      %y1 = stablehlo.xor %b, %x1 : tensor<1024xui32>\n"
      "      %x2 = stablehlo.add %x1, %y1 : tensor<1024xui32>\n"
      "      %y2 = stablehlo.xor %x2, %y1 : tensor<1024xui32>\n"
      "      %x3 = stablehlo.add %x2, %y2 : tensor<1024xui32>\n"
      "      %y3 = stablehlo.xor %x3, %y2 : tensor<1024xui32>\n"
      "      stablehlo.return %i1, %x3, %y3 : tensor<i32>, tensor<1024xui32>, tensor<1024xui32>\n"
      "    }\n"
      "  return %0#1, %0#2 : tensor<1024xui32>, tensor<1024xui32>\n"
      "}\n";
  bool skipped = false;
  CHECK(tl_backends_agree("while_rounds_in_place", text, NULL, 0, 0, 7, NULL, &skipped));
  if (skipped) return;
  hlo_module *m = NULL;
  hlo_executable *e = NULL;
  hlo_compile_options o = {.backend = HLO_BACKEND_CPU, .no_cache = true};
  hlo_status st = hlo_module_parse("while_rounds_in_place", text, strlen(text), &m);
  if (!st) st = hlo_executable_compile(m, NULL, &o, &e);
  if (st) hlo_status_print(st, stderr);
  CHECK(st == NULL);
  const runtime_cpu_stats *cs = e ? runtime_executable_cpu_stats(e) : NULL;
  CHECK(cs != NULL);
  if (cs) {
    /* the loop's state is its own copies of the caller's arguments,
     * written in place by every round: the arena holds the scalars only
     * (before: 12352 bytes, three 4 KB round temporaries) */
    if (cs->temp_bytes >= 4096 || getenv("MEMDBG"))
      fprintf(stderr, "  arena %lld bytes, less than 4096 expected\n", (long long)cs->temp_bytes);
    CHECK(cs->temp_bytes < 4096);
    CHECK(cs->heap_peak_bytes <= 64); /* the scalars */
  }
  hlo_status_free(st);
  hlo_executable_destroy(e);
  hlo_module_destroy(m);
}

/* The arena and interpreter figures of `text` compiled for `backend`
 * (NULL: does not compile). */
static const runtime_cpu_stats *compile_stats(const char *name, const char *text,
                                              hlo_backend_kind backend, hlo_module **m,
                                              hlo_executable **e) {
  hlo_compile_options o = {.backend = backend, .no_cache = true};
  hlo_status st = hlo_module_parse(name, text, strlen(text), m);
  if (!st) st = hlo_executable_compile(*m, NULL, &o, e);
  if (st) hlo_status_print(st, stderr);
  hlo_status_free(st);
  return *e ? runtime_executable_cpu_stats(*e) : NULL;
}

/* A result made by the last reader of a temporary of its type, reading it
 * elementwise (a pad: not fusible, so a buffer): the result is written
 * over it, in the temporary's own allocation, which becomes the result
 * (XLA's temporaries in live-out allocations): no 16 KB slot in the arena
 * (before: 16384 bytes, peak 49152 -> 32768). A temporary that something
 * reads after the result's kernel keeps its slot. Results are checked
 * against the interpreter. */
TEST(result_over_dying_temporary) {
  const char *text =
      "func.func @main(%a: tensor<63x64xf32>) -> (tensor<64x64xf32>, tensor<64xf32>) {\n"
      "  %z = stablehlo.constant dense<0.0> : tensor<f32>\n"
      "  %v = stablehlo.pad %a, %z, low = [1, 0], high = [0, 0], interior = [0, 0] :\n"
      "       (tensor<63x64xf32>, tensor<f32>) -> tensor<64x64xf32>\n"
      "  %s = stablehlo.reduce(%v init: %z) applies stablehlo.maximum across dimensions = [1] :\n"
      "       (tensor<64x64xf32>, tensor<f32>) -> tensor<64xf32>\n"
      "  %one = stablehlo.constant dense<1.0> : tensor<64x64xf32>\n"
      "  %r = stablehlo.add %v, %one : tensor<64x64xf32>\n"
      "  return %r, %s : tensor<64x64xf32>, tensor<64xf32>\n"
      "}\n";
  /* the same, but the temporary is read again after the result is made */
  const char *late =
      "func.func @main(%a: tensor<63x64xf32>) -> (tensor<64x64xf32>, tensor<64xf32>) {\n"
      "  %z = stablehlo.constant dense<0.0> : tensor<f32>\n"
      "  %v = stablehlo.pad %a, %z, low = [1, 0], high = [0, 0], interior = [0, 0] :\n"
      "       (tensor<63x64xf32>, tensor<f32>) -> tensor<64x64xf32>\n"
      "  %one = stablehlo.constant dense<1.0> : tensor<64x64xf32>\n"
      "  %r = stablehlo.add %v, %one : tensor<64x64xf32>\n"
      "  %s = stablehlo.reduce(%v init: %z) applies stablehlo.maximum across dimensions = [1] :\n"
      "       (tensor<64x64xf32>, tensor<f32>) -> tensor<64xf32>\n"
      "  return %r, %s : tensor<64x64xf32>, tensor<64xf32>\n"
      "}\n";
  bool skipped = false;
  CHECK(tl_backends_agree("result_over_dying_temporary", text, NULL, 0, 0, 11, NULL, &skipped));
  CHECK(tl_backends_agree("result_over_dying_temporary_late", late, NULL, 0, 0, 11, NULL,
                          &skipped));
  if (skipped) return;
  hlo_module *m = NULL;
  hlo_executable *e = NULL;
  const runtime_cpu_stats *cs = compile_stats("r", text, HLO_BACKEND_CPU, &m, &e);
  CHECK(cs != NULL);
  if (cs) {
    if (cs->temp_bytes >= 16384 || getenv("MEMDBG"))
      fprintf(stderr, "  arena %lld bytes, less than 16384 expected\n", (long long)cs->temp_bytes);
    CHECK(cs->temp_bytes < 16384);
    CHECK(cs->heap_peak_bytes == 0); /* the pad is the result's memory: not counted again */
    CHECK_EQ_INT(cs->out_bytes, 16384 + 256);
  }
  /* run twice: each run's result is its own memory (the first must not
   * change when the second runs) */
  float in[63 * 64];
  for (int i = 0; i < 63 * 64; i++) in[i] = (float)(i % 7) * 0.25f - 0.5f;
  const int64_t dims[2] = {63, 64};
  hlo_buffer_view arg = {HLO_F32, 2, dims, in};
  hlo_buffer **res[2] = {NULL, NULL};
  for (int run = 0; run < 2 && e; run++) {
    if (run == 1) in[0] = 1.0f;
    hlo_status st = hlo_executable_run(e, &arg, 1, &res[run]);
    CHECK(st == NULL);
    hlo_status_free(st);
  }
  for (int run = 0; run < 2 && res[run]; run++) {
    const float *r = hlo_buffer_data(res[run][0]);
    CHECK(r != NULL && hlo_buffer_nbytes(res[run][0]) == 64 * 64 * sizeof(float));
    /* row 0 is the padding; element i of a lands at 64 + i */
    for (int i = 0; r && i < 64; i++) CHECK(r[i] == 1.0f);
    for (int i = 0; r && i < 63 * 64; i += 97) {
      float x = i == 0 ? (run == 0 ? -0.5f : 1.0f) : in[i];
      CHECK(r[64 + i] == x + 1.0f);
    }
    hlo_buffer_destroy(res[run][0]);
    hlo_buffer_destroy(res[run][1]);
    free(res[run]);
  }
  hlo_executable_destroy(e);
  hlo_module_destroy(m);
  m = NULL, e = NULL;
  cs = compile_stats("late", late, HLO_BACKEND_CPU, &m, &e);
  CHECK(cs != NULL);
  if (cs) CHECK(cs->temp_bytes >= 16384); /* the pad outlives the result's kernel */
  hlo_executable_destroy(e);
  hlo_module_destroy(m);
}

/* A scan body as JAX orders it: the slices of a carried stack (4 KB each)
 * all made first, each read by its own product later. The memory-aware
 * step order (schedule_program) makes each slice just before its reader,
 * so one slice is live at a time: the arena holds 4 KB of slices, not 16
 * (before: 16388 bytes, after: 4104). Results are checked against the
 * interpreter. */
TEST(scan_slices_made_when_read) {
  const char *text =
      "func.func @main(%st: tensor<4x32x32xi32>, %x: tensor<1x32xi32>) -> tensor<1x32xi32> {\n"
      "  %c0 = stablehlo.constant dense<0> : tensor<i32>\n"
      "  %r:3 = stablehlo.while(%i = %c0, %s = %st, %v = %x) : tensor<i32>, tensor<4x32x32xi32>,"
      " tensor<1x32xi32>\n"
      "    cond {\n"
      "      %n = stablehlo.constant dense<2> : tensor<i32>\n"
      "      %g = stablehlo.compare LT, %i, %n, SIGNED : (tensor<i32>, tensor<i32>) -> tensor<i1>\n"
      "      stablehlo.return %g : tensor<i1>\n"
      "    } do {\n"
      "      %z = stablehlo.constant dense<0> : tensor<i32>\n"
      "      %one = stablehlo.constant dense<1> : tensor<i32>\n"
      "      %j1 = stablehlo.add %i, %one : tensor<i32>\n"
      "      %j2 = stablehlo.add %j1, %one : tensor<i32>\n"
      "      %j3 = stablehlo.add %j2, %one : tensor<i32>\n"
      "      %a0 = stablehlo.dynamic_slice %s, %i, %z, %z, sizes = [1, 32, 32] : (tensor<4x32x32xi32>,"
      " tensor<i32>, tensor<i32>, tensor<i32>) -> tensor<1x32x32xi32>\n"
      "      %a1 = stablehlo.dynamic_slice %s, %j1, %z, %z, sizes = [1, 32, 32] : (tensor<4x32x32xi32>,"
      " tensor<i32>, tensor<i32>, tensor<i32>) -> tensor<1x32x32xi32>\n"
      "      %a2 = stablehlo.dynamic_slice %s, %j2, %z, %z, sizes = [1, 32, 32] : (tensor<4x32x32xi32>,"
      " tensor<i32>, tensor<i32>, tensor<i32>) -> tensor<1x32x32xi32>\n"
      "      %a3 = stablehlo.dynamic_slice %s, %j3, %z, %z, sizes = [1, 32, 32] : (tensor<4x32x32xi32>,"
      " tensor<i32>, tensor<i32>, tensor<i32>) -> tensor<1x32x32xi32>\n"
      "      %b0 = stablehlo.reshape %a0 : (tensor<1x32x32xi32>) -> tensor<32x32xi32>\n"
      "      %b1 = stablehlo.reshape %a1 : (tensor<1x32x32xi32>) -> tensor<32x32xi32>\n"
      "      %b2 = stablehlo.reshape %a2 : (tensor<1x32x32xi32>) -> tensor<32x32xi32>\n"
      "      %b3 = stablehlo.reshape %a3 : (tensor<1x32x32xi32>) -> tensor<32x32xi32>\n"
      "      %v1 = stablehlo.dot_general %v, %b0, contracting_dims = [1] x [0] : (tensor<1x32xi32>,"
      " tensor<32x32xi32>) -> tensor<1x32xi32>\n"
      "      %v2 = stablehlo.dot_general %v1, %b1, contracting_dims = [1] x [0] : (tensor<1x32xi32>,"
      " tensor<32x32xi32>) -> tensor<1x32xi32>\n"
      "      %v3 = stablehlo.dot_general %v2, %b2, contracting_dims = [1] x [0] : (tensor<1x32xi32>,"
      " tensor<32x32xi32>) -> tensor<1x32xi32>\n"
      "      %v4 = stablehlo.dot_general %v3, %b3, contracting_dims = [1] x [0] : (tensor<1x32xi32>,"
      " tensor<32x32xi32>) -> tensor<1x32xi32>\n"
      "      stablehlo.return %j1, %s, %v4 : tensor<i32>, tensor<4x32x32xi32>, tensor<1x32xi32>\n"
      "    }\n"
      "  return %r#2 : tensor<1x32xi32>\n"
      "}\n";
  bool skipped = false;
  CHECK(tl_backends_agree("scan_slices_made_when_read", text, NULL, 0, 0, 5, NULL, &skipped));
  if (skipped) return;
  hlo_module *m = NULL;
  hlo_executable *e = NULL;
  const runtime_cpu_stats *cs = compile_stats("scan", text, HLO_BACKEND_CPU, &m, &e);
  CHECK(cs != NULL);
  if (cs) {
    if (cs->temp_bytes >= 8192 || getenv("MEMDBG"))
      fprintf(stderr, "  arena %lld bytes, less than 8192 expected\n", (long long)cs->temp_bytes);
    CHECK(cs->temp_bytes < 8192);
  }
  hlo_executable_destroy(e);
  hlo_module_destroy(m);
}

TEST_MAIN()
