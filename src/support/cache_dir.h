/* cache_dir.h — where hlo's on-disk caches live: one root folder shared by
 * the compilation cache (runtime/compile_cache.h: ROOT/executables) and the
 * backends' kernel object caches (backend/cpu/kernel_cache.h:
 * ROOT/kernels). */
#ifndef HLO_SUPPORT_CACHE_DIR_H
#define HLO_SUPPORT_CACHE_DIR_H
#include <stdbool.h>

#define CACHE_DIR_PATH_MAX 4096

/* Resolves the cache root into out: `dir` when non-NULL and non-empty,
 * else $HLO_CACHE_DIR when set, else $XDG_CACHE_HOME/hlo (when absolute, as
 * the XDG Base Directory specification asks), else
 * $HOME/.cache/hlo. A value of off, 0, false or no (any case) in `dir` or
 * $HLO_CACHE_DIR, or an empty $HLO_CACHE_DIR, means no cache: returns
 * false. False too when no candidate is set or the path does not fit.
 * Creates nothing. */
bool cache_dir_root(const char *dir, char out[CACHE_DIR_PATH_MAX]);

/* Resolves ROOT/sub (cache_dir_root(dir) joined with `sub`) into out and
 * creates it (and ROOT) when missing, mode 0700; false when the cache is
 * off or the folder cannot be created or written. */
bool cache_dir_sub(const char *dir, const char *sub, char out[CACHE_DIR_PATH_MAX]);

#endif /* HLO_SUPPORT_CACHE_DIR_H */
