/* test_buffer_assignment.c — the heap simulator of buffer assignment
 * (src/runtime/buffer_assignment.c): buffers live at the same step never
 * share bytes, offsets are aligned, the arena holds every buffer, reuse
 * happens when live ranges are disjoint, and the packing is never smaller
 * than the peak of live bytes (a lower bound any packing must meet), small
 * buffers pack below the alignment; and the
 * CPU executable's while buffers: a body whose rounds update two carried
 * values through kernels that each read both writes every round in place
 * over the carried buffers (executable_cpu_buffers.c, plan_carried). */
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

TEST_MAIN()
