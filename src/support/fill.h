/* fill.h — filling memory with copies of one element (a splat constant,
 * the padding value of stablehlo.pad, a broadcast scalar). */
#ifndef HLO_SUPPORT_FILL_H
#define HLO_SUPPORT_FILL_H
#include <stddef.h>

/* Writes n copies of the elem_size bytes at `elem` to dst (n * elem_size
 * bytes; `elem` must not lie inside them). One element, doubling copies of
 * what is filled up to a block of about 4 KiB, then that block copied
 * along: a pass that only writes (the block stays in L1), at memset's
 * speed for any element size. n == 0 writes nothing. */
void fill_elements(void *dst, const void *elem, size_t n, size_t elem_size);

#endif
