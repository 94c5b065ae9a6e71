/* buffer_assignment.c — the heap simulator of buffer_assignment.h. */
#include "runtime/buffer_assignment.h"
#include <pthread.h>
#include <stdbool.h>
#include <stdlib.h>

static bool overlap_in_time(const ba_buffer *a, const ba_buffer *b) {
  return !(a->end < b->start || b->end < a->start);
}

/* Sort order: largest first, then earliest start, then index (stable). */
static const ba_buffer *g_bufs;
static int by_size_desc(const void *pa, const void *pb) {
  uint32_t a = *(const uint32_t *)pa, b = *(const uint32_t *)pb;
  const ba_buffer *x = &g_bufs[a], *y = &g_bufs[b];
  if (x->bytes != y->bytes) return x->bytes > y->bytes ? -1 : 1;
  if (x->start != y->start) return x->start < y->start ? -1 : 1;
  return a < b ? -1 : a > b;
}

static int by_offset(const void *pa, const void *pb) {
  const ba_buffer *x = *(const ba_buffer *const *)pa, *y = *(const ba_buffer *const *)pb;
  return x->offset < y->offset ? -1 : x->offset > y->offset;
}

static int64_t round_up(int64_t v, int64_t align) { return (v + align - 1) & ~(align - 1); }

int64_t ba_buffer_align(int64_t bytes, int64_t align) {
  int64_t a = 1;
  while (a < bytes && a < align) a <<= 1;
  return a;
}

/* The bytes a buffer takes in the arena: with `small` its size (the next
 * buffer's own alignment decides where that one may start), else its size
 * rounded up to `align`. */
static int64_t footprint(int64_t bytes, int64_t align, bool small) {
  return small ? bytes : round_up(bytes, align);
}

/* qsort has no context argument in C11: the order array is sorted under a
 * lock so that executables compiled from several threads do not race on
 * g_bufs. */
static pthread_mutex_t sort_lock = PTHREAD_MUTEX_INITIALIZER;

hlo_status ba_pack(ba_buffer *bufs, uint32_t n, int64_t align, bool small, int64_t *out_bytes) {
  *out_bytes = 0;
  if (n == 0) return NULL;
  uint32_t *order = malloc(n * sizeof *order);
  const ba_buffer **live = malloc(n * sizeof *live);
  if (!order || !live) {
    free(order);
    free(live);
    return status_new(HLO_RESOURCE_EXHAUSTED, "out of memory in buffer assignment");
  }
  for (uint32_t i = 0; i < n; i++) order[i] = i;
  pthread_mutex_lock(&sort_lock);
  g_bufs = bufs;
  qsort(order, n, sizeof *order, by_size_desc);
  g_bufs = NULL;
  pthread_mutex_unlock(&sort_lock);
  int64_t total = 0;
  hlo_status st = NULL;
  for (uint32_t k = 0; k < n && !st; k++) {
    ba_buffer *b = &bufs[order[k]];
    if (b->bytes < 0 || b->bytes > INT64_MAX - align) {
      st = status_new(HLO_RESOURCE_EXHAUSTED, "a buffer of %lld bytes is too large",
                      (long long)b->bytes);
      break;
    }
    int64_t size = footprint(b->bytes, align, small);
    int64_t balign = small ? ba_buffer_align(b->bytes, align) : align;
    /* the placed buffers live at the same time, by offset */
    uint32_t nl = 0;
    for (uint32_t j = 0; j < k; j++) {
      const ba_buffer *p = &bufs[order[j]];
      if (p->bytes > 0 && overlap_in_time(p, b)) live[nl++] = p;
    }
    qsort(live, nl, sizeof *live, by_offset);
    /* best fit: the smallest gap that holds it; else after the last */
    int64_t best = -1, best_gap = INT64_MAX, cursor = 0;
    for (uint32_t j = 0; j < nl; j++) {
      int64_t start = round_up(cursor, balign);
      int64_t gap = live[j]->offset - start;
      if (gap >= size && gap < best_gap) {
        best = start;
        best_gap = gap;
      }
      int64_t e = live[j]->offset + footprint(live[j]->bytes, align, small);
      if (e > cursor) cursor = e;
    }
    b->offset = size == 0 ? 0 : best >= 0 ? best : round_up(cursor, balign);
    if (b->offset > INT64_MAX - size) {
      st = status_new(HLO_RESOURCE_EXHAUSTED, "the buffers' sizes overflow");
      break;
    }
    if (b->offset + size > total) total = b->offset + size;
  }
  free(order);
  free(live);
  if (!st) *out_bytes = total;
  return st;
}

int64_t ba_peak_live(const ba_buffer *bufs, uint32_t n) {
  int64_t peak = 0;
  /* the live sum changes only at starts: test each buffer's start step */
  for (uint32_t i = 0; i < n; i++) {
    int64_t sum = 0;
    for (uint32_t j = 0; j < n; j++)
      if (bufs[j].start <= bufs[i].start && bufs[i].start <= bufs[j].end) sum += bufs[j].bytes;
    if (sum > peak) peak = sum;
  }
  return peak;
}
