/* buffer_assignment.h — placing an executable's temporary buffers in one
 * arena (XLA's buffer assignment, its heap simulator part): each buffer has
 * a size and a live range over the thunk schedule; buffers whose live
 * ranges do not overlap may share bytes.
 *
 * The algorithm is XLA's GlobalDecreasingSizeBestFitHeap: buffers are
 * placed largest first (ties: earliest start), each at the lowest
 * offset where it overlaps no placed buffer that is live at the same time
 * (best fit over the gaps between those buffers). O(n^2) in the number of
 * buffers, which is the number of materialised values (hundreds). */
#ifndef HLO_RUNTIME_BUFFER_ASSIGNMENT_H
#define HLO_RUNTIME_BUFFER_ASSIGNMENT_H
#include <stdbool.h>
#include <stdint.h>
#include "support/status.h"

/* One buffer. A buffer is live over steps [start, end], both included: it
 * is written at `start` and last read at `end`, so a buffer written at step
 * s never shares bytes with one read at s (a thunk reads its inputs while
 * writing its outputs). */
typedef struct ba_buffer {
  int64_t bytes;   /* size in bytes (0: takes no space, offset 0) */
  uint32_t start;  /* the step that writes it */
  uint32_t end;    /* the last step that reads it (>= start) */
  int64_t offset;  /* out: its byte offset in the arena */
} ba_buffer;

/* Assigns every buffer of bufs[0..n) an offset (a multiple of its
 * alignment: `align`, a power of two, or with `small` ba_buffer_align's)
 * so that buffers live at the same time never overlap (each taking its
 * size rounded up to `align`, or with `small` its size exactly), and
 * returns in *out_bytes the arena size this needs. Errors:
 * HLO_RESOURCE_EXHAUSTED (memory for the work lists, or sizes whose sum
 * overflows int64). */
HLO_MUST_USE hlo_status ba_pack(ba_buffer *bufs, uint32_t n, int64_t align, bool small,
                                int64_t *out_bytes);

/* The alignment ba_pack gives a buffer of `bytes`: `align` (a power of
 * two) for a buffer at least that large, else the smallest power of two
 * that holds it (a multiple of its element size, as every element size is
 * a power of two), so that small buffers (scalars, shape vectors) do not
 * each take a whole cache line. Used with ba_pack's `small`: not where
 * memory is tracked per 64-byte granule (the device runtime,
 * executable_cpu_device.c), where two buffers must never share one. */
int64_t ba_buffer_align(int64_t bytes, int64_t align);

/* The largest sum of the sizes of buffers live at one step: a lower bound
 * of any packing's arena size (ba_pack's result minus this is the
 * fragmentation). */
int64_t ba_peak_live(const ba_buffer *bufs, uint32_t n);

#endif
