/* compile_cache.h — the persistent compilation cache (issue 8): a folder of
 * self-contained entries, one per compiled executable, each a checksummed
 * file of named sections (the optimised module, the kernels' machine code,
 * a metadata text), plus the per-kernel object cache beside it.
 *
 * Layout of the cache root ROOT (support/cache_dir.h):
 *   ROOT/executables/KEY.hlox   one entry per executable (this file's format)
 *   ROOT/kernels/KEY.so         compiled kernel units (backend/cpu/kernel_cache.h)
 *   ROOT/.../.tmp-*             temporaries being written (swept when stale)
 * Nothing in an entry names a path outside the entry: moving ROOT elsewhere
 * keeps every entry valid.
 *
 * Entry file format (little-endian), version COMPILE_CACHE_FORMAT:
 *   header (48 bytes): magic "HLOXCACH" (8) | u32 format version | u32
 *     number of sections | u64 length of the whole file | 16-byte XXH3-128
 *     of every byte after the header (low 64 bits, then high, each
 *     little-endian) | 8 zero bytes
 *   sections, in order: u32 name length (1..255) | name bytes (no NUL) |
 *     u64 data length | data bytes (no padding: data is not aligned, copy
 *     typed values out with memcpy)
 * A reader checks, in order: the file opens, is a regular file of at most
 * 4 GiB and is at least a header long (else "unreadable: REASON", "not a
 * regular file", "too large", "truncated"); the magic ("not a cache
 * entry"); the version ("format version N, this hlo reads M"); the length
 * field against the file's size ("truncated" / "trailing bytes"); the
 * reserved bytes are zero ("corrupt header"); the checksum ("checksum
 * mismatch"); every section inside the file and none left over, which also
 * checks the number of sections ("corrupt section table"). Every header
 * byte is thus checked although the checksum covers only what follows it.
 *
 * Metadata: the section "meta" is text, one `name=value` per line (value to
 * the end of the line), written by the caller (the runtime's
 * executable_cache.c). Fields the cache itself reads: `function` (the entry
 * function), `module` (module name), `arg.N` / `result.N` (types, e.g.
 * tensor<64x128xf32>), `created` (unix seconds). Other fields (backend,
 * passes, compiler, target, hlo_version, module_hash, ...) are compared by
 * compile_cache_explain by name.
 *
 * Last use: a hit sets the entry file's mtime to now (utimensat); eviction
 * removes least recently used files (entries and kernel objects alike)
 * until the cache is at most its bound.
 *
 * Thread safety: all calls may run concurrently, in one process or many
 * (entries are written under a temporary name in the same folder and
 * rename(2)d into place: a reader sees a whole entry or none; two writers of
 * one key both succeed, one wins). */
#ifndef HLO_RUNTIME_COMPILE_CACHE_H
#define HLO_RUNTIME_COMPILE_CACHE_H
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include "hlo/hlo.h"

#define COMPILE_CACHE_FORMAT 1u
#define COMPILE_CACHE_KEY_HEX 33          /* 32 hex digits and a NUL */
#define COMPILE_CACHE_DEFAULT_MAX_BYTES (4ull << 30)
#define COMPILE_CACHE_PATH_MAX 4096
#include "support/cache_dir.h"

/* The root itself is resolved by support/cache_dir.h (cache_dir_root:
 * --cache-dir, $HLO_CACHE_DIR, $XDG_CACHE_HOME/hlo, $HOME/.cache/hlo, or
 * off), shared with the kernel cache of the backends. */

/* The bound: `max_bytes` when non-zero, else $HLO_CACHE_MAX_BYTES (a
 * number of bytes, optionally with a K, M or G suffix, powers of 1024),
 * else COMPILE_CACHE_DEFAULT_MAX_BYTES. *out_err (may be NULL) is set to
 * a message (static) when the variable is set but malformed (the default is
 * then returned); the message does not name the variable (callers print
 * "HLO_CACHE_MAX_BYTES: MESSAGE"). */
uint64_t compile_cache_max_bytes(uint64_t max_bytes, const char **out_err);

/* The key of parts[0..n) (NUL-terminated strings, each hashed with its
 * length as a little-endian u64; NULL hashes as ""): XXH3-128 as 32
 * lowercase hex digits (high 64 bits first). Keys given to the functions
 * below are file names: 1 to 32 characters of [0-9A-Za-z_]. */
void compile_cache_key(const char *const *parts, size_t n, char out[COMPILE_CACHE_KEY_HEX]);

/* One named section of an entry (name NUL-terminated, data lent). */
typedef struct cache_section {
  const char *name;
  const void *data;
  size_t len;
} cache_section;

/* Writes the entry `key` under ROOT/executables (creating ROOT mode 0700
 * and the folder 0755, less the umask, when missing; the file 0644) from
 * sections secs[0..n), atomically (temporary + rename), then evicts least
 * recently used files until the cache holds at most `max_bytes` (0:
 * compile_cache_max_bytes(0)); the new entry is kept. An entry that alone
 * is larger than the bound is not stored at all (the rest is still evicted
 * down to the bound): HLO_RESOURCE_EXHAUSTED "the entry (N bytes) is larger
 * than the cache's bound (M bytes: ...)". Section names: 1..255 bytes; data
 * may be NULL only when len is 0. Errors: HLO_INVALID_ARGUMENT for a
 * malformed key or section; HLO_UNAVAILABLE naming the path and errno's
 * text when the folder cannot be made or the file written (the temporary is
 * removed; the caller warns and goes on); HLO_RESOURCE_EXHAUSTED (out of
 * memory, an entry over 4 GiB or over the bound). */
HLO_MUST_USE hlo_status compile_cache_store(const char *root, const char *key,
                                            const cache_section *secs, uint32_t n,
                                            uint64_t max_bytes);

/* An entry read whole into memory and checked (see the format above). */
typedef struct cache_entry cache_entry;

typedef enum cache_lookup {
  CACHE_MISS = 0,  /* no entry for the key */
  CACHE_HIT,       /* *out holds the checked entry; its mtime is now */
  CACHE_BAD,       /* an entry was there but failed a check: removed;
                      *why says which check, e.g. "checksum mismatch" */
} cache_lookup;

/* Looks up `key` under ROOT/executables. On CACHE_BAD, *why (may be NULL)
 * receives a malloc'd message (yours) naming the file and the failed
 * check, whole: "cache entry PATH: checksum mismatch" (print it as is); the
 * file has been removed (CACHE_BAD is returned only when it was, or when it
 * had been replaced meanwhile). An entry that cannot be used and is NOT
 * removed is a miss after one warning line printed here ("hlo: warning:
 * cache entry PATH: CHECK; OUTCOME, recompiling"): an entry this process
 * may not read (EACCES, EPERM: another user's, in a shared cache; OUTCOME
 * "not removed"), or a bad entry whose unlink failed (OUTCOME "could not
 * remove it: ERRNO TEXT"). Never fails otherwise: an unreadable folder, a
 * malformed key, running out of memory or of file descriptors is a miss. */
cache_lookup compile_cache_load(const char *root, const char *key, cache_entry **out,
                                char **why);

/* Removes the entry `key` (one that loaded but turned out unusable) and
 * writes what happened to outcome[0..cap) (may be NULL): "removed" (or it
 * was gone already) or "could not remove it: ERRNO TEXT", for the caller's
 * warning. True when removed. */
bool compile_cache_remove(const char *root, const char *key, char *outcome, size_t cap);

/* Section `name` of `e` (data lent, valid while `e` lives; *len its length),
 * or NULL when absent. */
const void *cache_entry_section(const cache_entry *e, const char *name, size_t *len);
/* The i-th section (i < cache_entry_num_sections): name and data lent. */
uint32_t cache_entry_num_sections(const cache_entry *e);
cache_section cache_entry_section_at(const cache_entry *e, uint32_t i);
void cache_entry_free(cache_entry *e);

/* A `meta` field's value (NUL-terminated copy into out, at most cap - 1
 * bytes): false when absent. `meta` is the section's text (len bytes). */
bool cache_meta_get(const char *meta, size_t len, const char *name, char *out, size_t cap);

/* One entry as `hlo cache list` shows it. Strings malloc'd, owned by the
 * listing. */
typedef struct cache_listing_entry {
  char key[COMPILE_CACHE_KEY_HEX];
  char *meta;          /* the meta section's text (NUL-terminated), or NULL
                          when the entry is unreadable or bad */
  char *problem;       /* NULL, or why the entry is bad (verify) */
  uint64_t bytes;      /* file size */
  int64_t last_used;   /* mtime, unix seconds */
} cache_listing_entry;

typedef struct cache_listing {
  cache_listing_entry *entries;  /* most recently used first */
  uint32_t n;
  uint64_t entry_bytes;          /* sum over executables/ */
  uint64_t kernel_bytes;         /* sum over kernels/ (objects and notes) */
  uint32_t kernel_files;
  uint64_t alias_bytes;          /* sum over aliases/ (executable_cache.c) */
  uint32_t alias_files;
} cache_listing;

/* Lists ROOT's entries, reading each one's meta section (only the header,
 * the section table up to "meta" and that section, so that `hlo cache list`
 * stays fast over thousands of entries); a failed header or section-table
 * check sets `problem` even so. With `verify`, every entry is checked whole
 * (as compile_cache_load does, the checksum streamed) and `problem` set for
 * the bad ones; nothing is removed or touched. A missing ROOT is an empty
 * listing. Errors: HLO_RESOURCE_EXHAUSTED. */
HLO_MUST_USE hlo_status compile_cache_list(const char *root, bool verify, cache_listing *out);
void cache_listing_free(cache_listing *l);

/* Removes every entry (executables/KEY.hlox), kernel object and note
 * (kernels/KEY.EXT), alias and temporary (.tmp-*) under ROOT, but the
 * temporaries of live processes (".tmp-KEY-PID-...", PID alive on this
 * machine, at most an hour old: a store in progress, which renames it into
 * place); other files and the folders stay. *out_files / *out_bytes (may be NULL): what was removed.
 * Errors: HLO_UNAVAILABLE when a file cannot be removed (naming the first;
 * the others are still removed). */
HLO_MUST_USE hlo_status compile_cache_clear(const char *root, uint64_t *out_files,
                                            uint64_t *out_bytes);

/* Removes least recently used files under ROOT/executables (KEY.hlox) and
 * ROOT/kernels (KEY.EXT: an object and its note count as one, last used at
 * the newer of the two mtimes) until the total is at most max_bytes;
 * `keep` (a path, may be NULL; compared by device and inode) is never
 * removed, nor temporaries. Never fails. */
void compile_cache_evict(const char *root, uint64_t max_bytes, const char *keep);

/* Removes stale temporaries (".tmp-*" older than an hour, or than five
 * minutes when the process named in them is gone) under ROOT/executables.
 * Never fails. */
void compile_cache_sweep(const char *root);

/* Miss explanation: among the listed entries whose `function` and `module`
 * fields equal those of `want` (a meta text of the program being compiled;
 * entries without meta are skipped), the closest (fewest differing fields,
 * a field present on one side only counting as differing; among the
 * entries with the fewest, the most recently used: the greatest last_used,
 * then the first listed), and a malloc'd text (yours) of what
 * differs, one line per field, each ending in '\n', arguments then results
 * (by N) then the other fields, such as
 *   argument 2: shape 64x128 -> 64x256
 *   argument 0: element type f32 -> bf16
 *   result 0: shape 4 -> 8
 *   argument 3: (absent) -> tensor<f32>       (other types: both values)
 *   option passes: cpu -> default             (a field named option.passes)
 *   passes: cpu -> default                    (any other field: NAME: old -> new)
 *   hlo_version: 0.1.0+3f2a -> 0.1.0+9bc1
 *   module_hash: the program's text differs (same signature and options)
 * (cached value first, then the wanted one; module_hash alone as shown,
 * with other differences "...differs too"). Never compared: `created`,
 * `units`, `compile_ms`, `last_used`, `pid` (they vary between equal
 * compiles). When no entry is for the same function the text is "no cached
 * entry for @F of module M\n" and *out_key is ""; otherwise *out_key (may
 * be NULL) gets the closest entry's key. NULL only on out of memory. */
char *compile_cache_explain(const cache_listing *l, const char *want,
                            char out_key[COMPILE_CACHE_KEY_HEX]);

#endif /* HLO_RUNTIME_COMPILE_CACHE_H */
