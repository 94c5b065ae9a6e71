/* kernel_cache.h — a content-addressed on-disk cache of compiled kernel
 * objects (shared objects the JIT made), so a program compiled before
 * loads in a millisecond instead of running the C compiler (issue 7: the
 * test suite compiles thousands of small programs). It is meant to grow
 * into the whole-executable cache of issue 8; the interface is seven calls
 * (dir, key, lookup, load, temp_path, commit, remove), plus small text notes
 * (read_note, write_note: the JIT keeps each compiler's version line there)
 * and the sweep of stale temporaries.
 *
 * Key: XXH3-128 (xxhash, Debian's libxxhash-dev, used header-only; a build
 * without <xxhash.h> falls back to FNV-1a, see kernel_cache.c) of the
 * parts the caller gives — the JIT gives the compiler's identity (the
 * command, its resolved path and the first line of `cc --version`, kept
 * as a note keyed by the binary's inode, size and mtime), the link flags,
 * the host CPU's identity (-march=native code is CPU-specific:
 * /proc/cpuinfo's vendor, family, model and flags), the flags and the
 * generated source — printed as 32 hex digits.
 *
 * Location: DIR = ROOT/kernels, ROOT the cache root shared with the
 * compilation cache (support/cache_dir.h: the caller's root, else
 * $HLO_CACHE_DIR, else $XDG_CACHE_HOME/hlo, else $HOME/.cache/hlo; created
 * on first use: ROOT 0700, ROOT/kernels 0755 less the umask). A root or
 * HLO_CACHE_DIR of off, 0, false or no (any case) disables the cache (an
 * empty HLO_CACHE_DIR is as if unset). An entry is DIR/KEY.so: the
 * object as the compiler wrote it, followed by a 32-byte trailer (magic
 * "HLOKC001", the object's length, its XXH3-64, 8 zero bytes; the dynamic
 * loader ignores bytes past the ELF's sections), so a truncated or corrupted
 * entry is detected before it is loaded. Notes are DIR/KEY.note; temporaries
 * are DIR/.tmp-KEY-PID-..., swept when stale (kernel_cache_sweep).
 *
 * Robustness: entries are written under a temporary name in DIR and
 * rename(2)d into place (atomic: a reader sees the whole old entry, the whole
 * new one or none; two processes storing one key both succeed, one wins);
 * an entry that fails its check is treated as a miss (the caller recompiles
 * and stores it again, replacing it); an unwritable or uncreatable
 * directory disables the cache (kernel_cache_dir is false); a store that
 * fails (kernel_cache_store: full disk, folder removed) reports its errno
 * and leaves nothing behind. Nothing here returns an error: every failure
 * is a miss.
 *
 * Permissions: entries and notes are created 0644 (less the umask), so a
 * cache folder shared by several users (made group-writable by its owner)
 * is readable by all of them; an entry this process cannot read (EACCES:
 * another user's) is a miss and is never removed.
 *
 * Thread safety: all calls may run concurrently, in one process or many. */
#ifndef HLO_BACKEND_CPU_KERNEL_CACHE_H
#define HLO_BACKEND_CPU_KERNEL_CACHE_H
#include <stdbool.h>
#include <stddef.h>

#define KERNEL_CACHE_KEY_HEX 33  /* 32 hex digits and a NUL */
#define KERNEL_CACHE_PATH_MAX 4096

/* Resolves the cache folder ROOT/kernels into out_dir, ROOT from `root`
 * (cache_dir_root: NULL or "" resolves it from the environment now; "off"
 * and the other off words: no cache), creating it when missing; false when
 * the cache is off or the folder cannot be created or written (the caller
 * then compiles uncached). */
bool kernel_cache_dir(const char *root, char out_dir[KERNEL_CACHE_PATH_MAX]);

/* Writes the key of parts[0..n) (NUL-terminated strings, each hashed with its
 * length, so ("ab","c") and ("a","bc") differ) to out (32 hex digits). */
void kernel_cache_key(const char *const *parts, size_t n, char out[KERNEL_CACHE_KEY_HEX]);

/* Whether folder `dir` holds a valid entry for `key` (its trailer and
 * checksum agree); if so its path is written to out_path. An entry that
 * fails the check is removed (a miss). */
bool kernel_cache_lookup(const char *dir, const char *key, char out_path[KERNEL_CACHE_PATH_MAX]);

/* kernel_cache_lookup that also hands back the entry's object: on a hit,
 * *bytes (malloc'd, yours to free) and *len are the shared object's bytes
 * as the compiler wrote them (the trailer left off), read in the same pass
 * that checks them; on a miss *bytes is NULL and *len 0. */
bool kernel_cache_load(const char *dir, const char *key, char out_path[KERNEL_CACHE_PATH_MAX],
                       void **bytes, size_t *len);

/* A temporary path in `dir` for the compiler's output for `key`, unique in
 * the process and among processes. False when the name does not fit. */
bool kernel_cache_temp_path(const char *dir, const char *key,
                            char out_path[KERNEL_CACHE_PATH_MAX]);

/* Seals the object at `tmp_path` (from kernel_cache_temp_path: appends the
 * trailer) and renames it to the entry of `key` in `dir`, whose path is
 * written to out_path. False when it could not: tmp_path is then left for the
 * caller, still a loadable object (load it from there, then unlink it). */
bool kernel_cache_commit(const char *dir, const char *key, const char *tmp_path,
                         char out_path[KERNEL_CACHE_PATH_MAX]);

/* Stores the shared object bytes[0..len) as the entry of `key` in `dir`
 * (written with its trailer to a temporary in `dir`, then renamed into
 * place). False when it could not (the folder is gone, read-only or full):
 * *err (may be NULL) gets the errno, and nothing is left behind. The JIT
 * compiles into a private folder outside the cache and stores here
 * afterwards, best effort. */
bool kernel_cache_store(const char *dir, const char *key, const void *bytes, size_t len,
                        int *err);

/* Removes the entry of `key` from `dir` (one that passed its check but turned
 * out unusable: dlopen failed or a symbol is missing). */
void kernel_cache_remove(const char *dir, const char *key);

/* Notes: one line of text (no newline) kept in `dir` under `key` (DIR/KEY.note,
 * written atomically like an entry). read_note copies it to out (at most
 * cap - 1 bytes and a NUL) and says whether it was there, whole, and
 * written at most max_age_s seconds ago (<= 0: any age); write_note stores
 * it (rewriting makes it new), silently doing nothing when it cannot. */
bool kernel_cache_read_note(const char *dir, const char *key, double max_age_s, char *out,
                            size_t cap);
void kernel_cache_write_note(const char *dir, const char *key, const char *text);

/* A temporary in the cache folder (".tmp-KEY-PID-...") is stale when older
 * than KERNEL_CACHE_STALE_S seconds, or than KERNEL_CACHE_DEAD_GRACE_S when
 * process PID is gone on this machine (an interrupted run; the grace covers
 * a folder shared with another machine, whose pids mean nothing here). */
#define KERNEL_CACHE_STALE_S 3600
#define KERNEL_CACHE_DEAD_GRACE_S 300
/* Removes the stale temporaries of `dir` (NULL: nothing). Entries are never
 * touched. Never fails. */
void kernel_cache_sweep(const char *dir);

#endif /* HLO_BACKEND_CPU_KERNEL_CACHE_H */
