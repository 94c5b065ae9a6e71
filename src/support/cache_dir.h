/* cache_dir.h — where hlo's on-disk caches live: one root folder shared by
 * the compilation cache (runtime/compile_cache.h: ROOT/executables) and the
 * backends' kernel object caches (backend/cpu/kernel_cache.h:
 * ROOT/kernels). */
#ifndef HLO_SUPPORT_CACHE_DIR_H
#define HLO_SUPPORT_CACHE_DIR_H
#include <stdbool.h>
#include <stddef.h>

#define CACHE_DIR_PATH_MAX 4096

/* How a cache root resolved (cache_dir_resolve). */
typedef enum cache_dir_result {
  CACHE_DIR_OK = 0,    /* out holds the root */
  CACHE_DIR_OFF,       /* turned off on purpose (an off word) */
  CACHE_DIR_UNUSABLE,  /* no root can be named: *why says why */
} cache_dir_result;

/* Resolves the cache root into out: `dir` when non-NULL and non-empty,
 * else $HLO_CACHE_DIR when set and non-empty (an empty value is treated as
 * unset), else $XDG_CACHE_HOME/hlo (when absolute, as the XDG Base
 * Directory specification asks), else $HOME/.cache/hlo. A value of off, 0,
 * false or no (any case) in `dir` or $HLO_CACHE_DIR means no cache:
 * CACHE_DIR_OFF. CACHE_DIR_UNUSABLE when no candidate is set or the path is
 * PATH_MAX long or more; then why[0..cap) (may be NULL) gets a reason
 * ("the cache folder from --cache-dir is 5000 bytes long, more than 4095",
 * "no cache folder: none of ... is set"). Creates and prints nothing. */
cache_dir_result cache_dir_resolve(const char *dir, char out[CACHE_DIR_PATH_MAX], char *why,
                                   size_t cap);

/* cache_dir_resolve, true when CACHE_DIR_OK. A root that cannot be used
 * (CACHE_DIR_UNUSABLE) is not silent: the first time in a process it
 * prints one line to stderr, "hlo: warning: the compilation cache is off:
 * REASON". An off word prints nothing. Creates nothing. */
bool cache_dir_root(const char *dir, char out[CACHE_DIR_PATH_MAX]);

/* Resolves ROOT/sub (cache_dir_root(dir) joined with `sub`) into out and
 * creates it when missing: ROOT mode 0700 (a root hlo makes is private),
 * `sub` 0755 less the umask (as shared as the root: make the root
 * group-writable to share it); false when the cache is off or the folder
 * cannot be created or written. */
bool cache_dir_sub(const char *dir, const char *sub, char out[CACHE_DIR_PATH_MAX]);

#endif /* HLO_SUPPORT_CACHE_DIR_H */
