/* runmap.h — a map from each index of [0, n) to a small state (one byte),
 * kept as runs of equal states: memory and time grow with the number of
 * runs, not with n. The device-memory runtime keeps the validity (on the
 * host, on the device) of each 64-byte granule of a device arena in one:
 * a 128 MiB buffer is 2M granules but one run.
 *
 * Invariants: runs cover [0, n) in order, each non-empty, neighbours of
 * different states. A new map is one run of state 0. Not thread-safe. */
#ifndef HLO_SUPPORT_RUNMAP_H
#define HLO_SUPPORT_RUNMAP_H
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include "hlo/hlo.h"

typedef struct runmap {
  size_t n;          /* indices [0, n) */
  size_t *at;        /* run i starts at at[i] (at[0] = 0) and ends at at[i + 1] or n */
  uint8_t *state;    /* run i's state */
  uint32_t count, cap;
} runmap;

/* Makes *m a map of [0, n) all state 0. Errors: HLO_RESOURCE_EXHAUSTED
 * (then *m is empty and runmap_free is still fine). */
HLO_MUST_USE hlo_status runmap_init(runmap *m, size_t n);
/* Frees m's runs (m itself is the caller's); a zeroed map is fine. */
void runmap_free(runmap *m);
/* The run holding index i (< m->n): its number; *end (may be NULL) gets
 * the index after the run. O(log runs). */
uint32_t runmap_find(const runmap *m, size_t i, size_t *end);
/* The state of index i (< m->n). */
uint8_t runmap_get(const runmap *m, size_t i);
/* Sets indices [b, e) (clipped to [0, n); nothing when empty) to `state`,
 * merging with equal neighbours. O(runs) at worst (a move of the runs
 * after). Errors: HLO_RESOURCE_EXHAUSTED (m unchanged). */
HLO_MUST_USE hlo_status runmap_set(runmap *m, size_t b, size_t e, uint8_t state);

#endif
