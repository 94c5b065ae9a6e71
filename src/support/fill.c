/* fill.c — see fill.h. */
#include "support/fill.h"
#include <string.h>

#define FILL_BLOCK_BYTES 4096

void fill_elements(void *dst, const void *elem, size_t n, size_t elem_size) {
  if (!n || !elem_size) return;
  unsigned char *d = dst;
  memcpy(d, elem, elem_size);
  /* a block of whole elements, doubled up to about FILL_BLOCK_BYTES */
  size_t done = 1;
  while (done < n && done * elem_size < FILL_BLOCK_BYTES) {
    size_t k = done < n - done ? done : n - done;
    memcpy(d + done * elem_size, d, k * elem_size);
    done += k;
  }
  /* then that block copied along: its source stays in the cache */
  size_t block = done;
  while (done < n) {
    size_t k = block < n - done ? block : n - done;
    memcpy(d + done * elem_size, d, k * elem_size);
    done += k;
  }
}
