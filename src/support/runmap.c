/* runmap.c — runs of equal byte states over [0, n) (runmap.h). */
#include "support/runmap.h"
#include <stdlib.h>
#include <string.h>
#include "support/status.h"

hlo_status runmap_init(runmap *m, size_t n) {
  memset(m, 0, sizeof *m);
  m->at = malloc(16 * sizeof *m->at);
  m->state = malloc(16);
  if (!m->at || !m->state) {
    runmap_free(m);
    return status_new(HLO_RESOURCE_EXHAUSTED, "out of memory");
  }
  m->n = n;
  m->at[0] = 0;
  m->state[0] = 0;
  m->count = 1;
  m->cap = 16;
  return NULL;
}

void runmap_free(runmap *m) {
  free(m->at);
  free(m->state);
  memset(m, 0, sizeof *m);
}

uint32_t runmap_find(const runmap *m, size_t i, size_t *end) {
  uint32_t lo = 0, hi = m->count; /* at[lo] <= i < at[hi] (at[count] = n) */
  while (hi - lo > 1) {
    uint32_t mid = lo + (hi - lo) / 2;
    if (m->at[mid] <= i) lo = mid;
    else hi = mid;
  }
  if (end) *end = lo + 1 < m->count ? m->at[lo + 1] : m->n;
  return lo;
}

uint8_t runmap_get(const runmap *m, size_t i) { return m->state[runmap_find(m, i, NULL)]; }

hlo_status runmap_set(runmap *m, size_t b, size_t e, uint8_t state) {
  if (e > m->n) e = m->n;
  if (b >= e) return NULL;
  if (m->count + 2 > m->cap) {
    uint32_t cap = 2 * m->cap;
    size_t *at = realloc(m->at, cap * sizeof *at);
    if (!at) return status_new(HLO_RESOURCE_EXHAUSTED, "out of memory");
    m->at = at;
    uint8_t *st = realloc(m->state, cap);
    if (!st) return status_new(HLO_RESOURCE_EXHAUSTED, "out of memory");
    m->state = st;
    m->cap = cap;
  }
  size_t last_end;
  uint32_t first = runmap_find(m, b, NULL), last = runmap_find(m, e - 1, &last_end);
  /* runs first..last become: [at[first], b) in first's state (when not
   * empty), [b, e) in `state`, [e, last_end) in last's (when not empty) */
  size_t nat[3];
  uint8_t nst[3];
  uint32_t k = 0;
  if (m->at[first] < b) nat[k] = m->at[first], nst[k++] = m->state[first];
  nat[k] = b, nst[k++] = state;
  if (e < last_end) nat[k] = e, nst[k++] = m->state[last];
  /* drop a new run equal to the one before it (the run before `first`
   * for the first of them) */
  uint32_t j = 0;
  for (uint32_t i = 0; i < k; i++) {
    uint8_t prev_known = j ? 1 : first > 0;
    uint8_t prev = j ? nst[j - 1] : first > 0 ? m->state[first - 1] : 0;
    if (prev_known && prev == nst[i]) continue;
    nat[j] = nat[i], nst[j++] = nst[i];
  }
  /* the run after `last` merges into the new last when equal */
  uint32_t tail = last + 1;
  uint8_t end_state = j ? nst[j - 1] : m->state[first - 1];
  if (tail < m->count && m->state[tail] == end_state) tail++;
  memmove(m->at + first + j, m->at + tail, (m->count - tail) * sizeof *m->at);
  memmove(m->state + first + j, m->state + tail, m->count - tail);
  for (uint32_t i = 0; i < j; i++) m->at[first + i] = nat[i], m->state[first + i] = nst[i];
  m->count = m->count - (tail - first) + j;
  return NULL;
}
