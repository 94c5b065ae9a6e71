/* test_buffer_assignment.c — the heap simulator of buffer assignment
 * (src/runtime/buffer_assignment.c): buffers live at the same step never
 * share bytes, offsets are aligned, the arena holds every buffer, reuse
 * happens when live ranges are disjoint, and the packing is never smaller
 * than the peak of live bytes (a lower bound any packing must meet). */
#include <stdint.h>
#include "runtime/buffer_assignment.h"
#include "test.h"

static uint64_t rng = 99;
static uint32_t rnd(uint32_t n) {
  rng = rng * 6364136223846793005ULL + 1442695040888963407ULL;
  return (uint32_t)((rng >> 33) % n);
}

/* Whether any two buffers live at one step overlap in bytes. */
static bool overlaps(const ba_buffer *b, uint32_t n, int64_t align) {
  for (uint32_t i = 0; i < n; i++)
    for (uint32_t j = i + 1; j < n; j++) {
      if (!b[i].bytes || !b[j].bytes) continue;
      bool time = !(b[i].end < b[j].start || b[j].end < b[i].start);
      int64_t ei = b[i].offset + ((b[i].bytes + align - 1) & ~(align - 1));
      int64_t ej = b[j].offset + ((b[j].bytes + align - 1) & ~(align - 1));
      bool bytes = b[i].offset < ej && b[j].offset < ei;
      if (time && bytes) return true;
    }
  return false;
}

TEST(disjoint_lifetimes_share) {
  /* a chain: each buffer read only by the next step: two slots suffice */
  ba_buffer b[6];
  for (uint32_t i = 0; i < 6; i++) b[i] = (ba_buffer){1000, i, i + 1, -1};
  int64_t total = 0;
  CHECK(ba_pack(b, 6, 64, &total) == NULL);
  CHECK_EQ_INT(total, 2 * 1024);
  CHECK(!overlaps(b, 6, 64));
  CHECK_EQ_INT(ba_peak_live(b, 6), 2000);
}

TEST(live_together_never_share) {
  ba_buffer b[3] = {{100, 0, 5, 0}, {200, 1, 4, 0}, {50, 2, 3, 0}};
  int64_t total = 0;
  CHECK(ba_pack(b, 3, 64, &total) == NULL);
  CHECK_EQ_INT(total, 128 + 256 + 64);
  CHECK(!overlaps(b, 3, 64));
  for (int i = 0; i < 3; i++) CHECK(b[i].offset % 64 == 0);
}

TEST(empty_and_zero_sized) {
  int64_t total = 7;
  CHECK(ba_pack(NULL, 0, 64, &total) == NULL);
  CHECK_EQ_INT(total, 0);
  ba_buffer z[2] = {{0, 0, 3, 0}, {64, 1, 2, 0}};
  CHECK(ba_pack(z, 2, 64, &total) == NULL);
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
    CHECK(ba_pack(b, n, 64, &total) == NULL);
    CHECK(!overlaps(b, n, 64));
    CHECK(total >= ba_peak_live(b, n));
    for (uint32_t i = 0; i < n; i++) CHECK(b[i].offset >= 0 && b[i].offset + b[i].bytes <= total);
  }
}

TEST(too_large_is_an_error) {
  ba_buffer b[2] = {{INT64_MAX - 10, 0, 1, 0}, {INT64_MAX - 10, 0, 1, 0}};
  int64_t total = 0;
  hlo_status st = ba_pack(b, 2, 64, &total);
  CHECK(st && hlo_status_code_of(st) == HLO_RESOURCE_EXHAUSTED);
  hlo_status_free(st);
}

TEST_MAIN()
