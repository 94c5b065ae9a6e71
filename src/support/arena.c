/* arena.c — bump allocator in chunks of at least 64 KiB. */
#include "support/arena.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

struct arena_chunk {
  arena_chunk *prev;
  size_t cap;
  _Alignas(16) unsigned char data[];
};

long hlo_fail_alloc_after = 0;

static int should_fail(void) {
  if (hlo_fail_alloc_after <= 0) return 0;
  if (--hlo_fail_alloc_after == 0) return 1;
  return 0;
}

void *xmalloc(size_t n) {
  if (should_fail()) return NULL;
  return malloc(n ? n : 1);
}

void *xmalloc_aligned64(size_t n) {
  if (should_fail() || n > SIZE_MAX - 63) return NULL;
  return aligned_alloc(64, n ? (n + 63) & ~(size_t)63 : 64);
}

void *xrealloc(void *p, size_t n) {
  if (should_fail()) return NULL;
  return realloc(p, n ? n : 1);
}

void *xcalloc(size_t count, size_t size) {
  if (should_fail()) return NULL;
  return calloc(count ? count : 1, size ? size : 1);
}

void arena_init(arena *a) { memset(a, 0, sizeof *a); }

void arena_deinit(arena *a) {
  arena_chunk *c = a->head;
  while (c) {
    arena_chunk *p = c->prev;
    free(c);
    c = p;
  }
  memset(a, 0, sizeof *a);
}

void *arena_alloc(arena *a, size_t n) {
  if (n > ((size_t)1 << 40)) return NULL;
  n = (n + 15) & ~(size_t)15;
  if (!a->head || a->used + n > a->head->cap) {
    size_t cap = n > 65536 ? n : 65536;
    arena_chunk *c = xmalloc(sizeof(arena_chunk) + cap);
    if (!c) return NULL;
    c->prev = a->head;
    c->cap = cap;
    a->head = c;
    a->used = 0;
  }
  void *p = a->head->data + a->used;
  a->used += n;
  a->total += n;
  memset(p, 0, n);
  return p;
}

void *arena_calloc(arena *a, size_t count, size_t size) {
  if (size && count > ((size_t)1 << 40) / size) return NULL;
  return arena_alloc(a, count * size);
}

char *arena_strndup(arena *a, const char *s, size_t n) {
  char *p = arena_alloc(a, n + 1);
  if (!p) return NULL;
  if (n) memcpy(p, s, n);
  p[n] = 0;
  return p;
}

char *arena_strdup(arena *a, const char *s) { return arena_strndup(a, s, strlen(s)); }

void *arena_memdup(arena *a, const void *p, size_t n) {
  void *q = arena_alloc(a, n);
  if (q && n) memcpy(q, p, n);
  return q;
}
