/* arena.h — a bump allocator: many small allocations, freed all at once.
 * Each module's IR lives in one arena; freeing the arena frees the module. */
#ifndef HLO_SUPPORT_ARENA_H
#define HLO_SUPPORT_ARENA_H
#include <stddef.h>
#include <stdint.h>

typedef struct arena_chunk arena_chunk;
typedef struct arena {
  arena_chunk *head;   /* newest chunk */
  size_t used;         /* bytes handed out from head */
  size_t total;        /* bytes handed out over all chunks */
} arena;

/* An empty arena; allocates nothing until first use. */
void arena_init(arena *a);
/* Frees every chunk; `a` is empty again afterwards. */
void arena_deinit(arena *a);
/* `n` bytes aligned to 16, zeroed; NULL when the system is out of memory or
 * `n` is absurd (over 2^40). Valid until arena_deinit. */
void *arena_alloc(arena *a, size_t n);
/* Like arena_alloc for `count` objects of `size` bytes, checking overflow. */
void *arena_calloc(arena *a, size_t count, size_t size);
/* A NUL-terminated copy of `s[0..n)`; NULL on out of memory. */
char *arena_strndup(arena *a, const char *s, size_t n);
/* A copy of the NUL-terminated `s`; NULL on out of memory. */
char *arena_strdup(arena *a, const char *s);
/* A copy of `n` bytes at `p` (p may be NULL when n == 0: an empty, non-NULL
 * allocation is returned); NULL on out of memory. */
void *arena_memdup(arena *a, const void *p, size_t n);

/* Test hook: when > 0, the Nth following allocation through any arena or
 * xmalloc fails (then the counter stops). 0 disables. Not thread-safe; for
 * out-of-memory tests only. */
extern long hlo_fail_alloc_after;
/* malloc/realloc/calloc that honour hlo_fail_alloc_after; a size of 0 is
 * treated as 1, so success is never NULL. NULL on out of memory (xrealloc then
 * leaves `p` allocated). The caller frees with free(). */
void *xmalloc(size_t n);
void *xrealloc(void *p, size_t n);
void *xcalloc(size_t count, size_t size);
/* xmalloc at a 64-byte aligned address (a cache line: tensors that
 * vectorised kernels and libraries read), the size rounded up to 64;
 * honours hlo_fail_alloc_after; NULL on out of memory or a size past
 * SIZE_MAX - 63. The caller frees with free(). */
void *xmalloc_aligned64(size_t n);
#endif
