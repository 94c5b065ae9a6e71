/* compile_cache.c — the persistent compilation cache's files: the entry
 * format (writing, reading and checking), the listing, clearing, LRU
 * eviction and the sweep of stale temporaries. The contract, the format and
 * the checks are in compile_cache.h; the metadata and the miss explanation
 * are in compile_cache_explain.c. */
#include "runtime/compile_cache.h"
#include <ctype.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>
#include "support/arena.h"
#include "support/path.h"
#include "support/status.h"
#define XXH_INLINE_ALL
#include <xxhash.h>

#define MAGIC "HLOXCACH"
enum {
  HEADER_BYTES = 48,
  SECTION_FIXED_BYTES = 12,      /* u32 name length + u64 data length */
  KEY_MAX = COMPILE_CACHE_KEY_HEX - 1,
  STALE_S = 3600,                /* a temporary older than this is abandoned */
  DEAD_GRACE_S = 300,            /* ... or older than this when its writer is gone */
  WRITE_BUF = 1 << 16,
};
#define MAX_FILE_BYTES (4ull << 30)
#define MAX_META_BYTES (64ull << 20)

/* ------------------------------------------------------------ small helpers */

static void put_u32(unsigned char *p, uint32_t v) {
  for (int i = 0; i < 4; i++) p[i] = (unsigned char)(v >> (8 * i));
}
static void put_u64(unsigned char *p, uint64_t v) {
  for (int i = 0; i < 8; i++) p[i] = (unsigned char)(v >> (8 * i));
}
static uint32_t get_u32(const unsigned char *p) {
  uint32_t v = 0;
  for (int i = 0; i < 4; i++) v |= (uint32_t)p[i] << (8 * i);
  return v;
}
static uint64_t get_u64(const unsigned char *p) {
  uint64_t v = 0;
  for (int i = 0; i < 8; i++) v |= (uint64_t)p[i] << (8 * i);
  return v;
}

/* A key names a file: 1..32 characters of [0-9A-Za-z_]. */
static bool valid_key(const char *key) {
  size_t n = 0;
  if (!key) return false;
  for (; key[n]; n++)
    if (n >= KEY_MAX || !(isalnum((unsigned char)key[n]) || key[n] == '_')) return false;
  return n > 0;
}

/* A kernel-cache file: STEM.EXT with STEM a valid key and EXT 1..8
 * alphanumerics (KEY.so, KEY.note, later KEY.cubin). *out_stem_len: STEM's
 * length. */
static bool kernel_file_name(const char *name, size_t *out_stem_len) {
  const char *dot = strrchr(name, '.');
  if (!dot || dot == name || (size_t)(dot - name) > KEY_MAX) return false;
  for (const char *p = name; p < dot; p++)
    if (!(isalnum((unsigned char)*p) || *p == '_')) return false;
  size_t ext = strlen(dot + 1);
  if (ext < 1 || ext > 8) return false;
  for (const char *p = dot + 1; *p; p++)
    if (!isalnum((unsigned char)*p)) return false;
  *out_stem_len = (size_t)(dot - name);
  return true;
}

/* An entry file: KEY.hlox with KEY valid (its stem copied to key). */
static bool entry_file_name(const char *name, char key[COMPILE_CACHE_KEY_HEX]) {
  size_t n = strlen(name);
  if (n <= 5 || strcmp(name + n - 5, ".hlox") || n - 5 > KEY_MAX) return false;
  memcpy(key, name, n - 5);
  key[n - 5] = 0;
  return valid_key(key);
}

static bool join(char out[COMPILE_CACHE_PATH_MAX], const char *a, const char *b, const char *c) {
  int w = snprintf(out, COMPILE_CACHE_PATH_MAX, "%s/%s%s", a, b, c ? c : "");
  return w > 0 && w < COMPILE_CACHE_PATH_MAX;
}

static bool entry_path(const char *root, const char *key, char out[COMPILE_CACHE_PATH_MAX]) {
  int w = snprintf(out, COMPILE_CACHE_PATH_MAX, "%s/executables/%s.hlox", root, key);
  return w > 0 && w < COMPILE_CACHE_PATH_MAX;
}

static int cmp_ts(struct timespec a, struct timespec b) {
  if (a.tv_sec != b.tv_sec) return a.tv_sec < b.tv_sec ? -1 : 1;
  return a.tv_nsec < b.tv_nsec ? -1 : a.tv_nsec > b.tv_nsec;
}

/* ---------------------------------------------------------------- bound, key */

uint64_t compile_cache_max_bytes(uint64_t max_bytes, const char **out_err) {
  if (out_err) *out_err = NULL;
  if (max_bytes) return max_bytes;
  const char *s = getenv("HLO_CACHE_MAX_BYTES");
  if (!s) return COMPILE_CACHE_DEFAULT_MAX_BYTES;
  uint64_t v = 0;
  const char *p = s;
  bool ok = isdigit((unsigned char)*p);
  for (; ok && isdigit((unsigned char)*p); p++) {
    unsigned d = (unsigned)(*p - '0');
    if (v > (UINT64_MAX - d) / 10) ok = false;
    else v = v * 10 + d;
  }
  unsigned shift = 0;
  if (ok && *p) {
    switch (*p++) {
      case 'k': case 'K': shift = 10; break;
      case 'm': case 'M': shift = 20; break;
      case 'g': case 'G': shift = 30; break;
      default: ok = false; break;
    }
  }
  if (ok && (*p || (shift && v > (UINT64_MAX >> shift)))) ok = false;
  if (!ok) {
    if (out_err)
      *out_err = "expected a number of bytes, optionally with a K, M or G suffix (powers of "
                 "1024); using the default of 4G";
    return COMPILE_CACHE_DEFAULT_MAX_BYTES;
  }
  v <<= shift;
  return v ? v : COMPILE_CACHE_DEFAULT_MAX_BYTES;
}

void compile_cache_key(const char *const *parts, size_t n, char out[COMPILE_CACHE_KEY_HEX]) {
  XXH3_state_t st;
  XXH3_128bits_reset(&st);
  for (size_t i = 0; i < n; i++) {
    const char *s = parts[i] ? parts[i] : "";
    uint64_t len = strlen(s);
    unsigned char l[8];
    put_u64(l, len); /* the same key on every host */
    XXH3_128bits_update(&st, l, sizeof l);
    XXH3_128bits_update(&st, s, len);
  }
  XXH128_hash_t h = XXH3_128bits_digest(&st);
  snprintf(out, COMPILE_CACHE_KEY_HEX, "%016llx%016llx", (unsigned long long)h.high64,
           (unsigned long long)h.low64);
}

/* ------------------------------------------------------------------ checks */

/* Where a check reads an entry's bytes: a buffer holding the whole file, or
 * an open file (pread). */
typedef struct src {
  const unsigned char *buf;
  int fd;
  uint64_t size;
} src;

static bool src_read(const src *s, uint64_t off, void *dst, size_t n) {
  if (off > s->size || n > s->size - off) return false;
  if (s->buf) {
    memcpy(dst, s->buf + off, n);
    return true;
  }
  size_t got = 0;
  while (got < n) {
    ssize_t r = pread(s->fd, (char *)dst + got, n - got, (off_t)(off + got));
    if (r < 0 && errno == EINTR) continue;
    if (r <= 0) {
      if (r == 0) errno = EIO; /* shorter than fstat said */
      return false;
    }
    got += (size_t)r;
  }
  return true;
}

/* Checks the header `h` (HEADER_BYTES of them; `size` the file's size)
 * in the order of compile_cache.h, up to but not including the checksum.
 * False with the failed check in why[cap]. */
static bool check_header(const unsigned char *h, uint64_t size, char *why, size_t cap) {
  if (size == 0) return snprintf(why, cap, "truncated (empty file)"), false;
  if (size < HEADER_BYTES)
    return snprintf(why, cap, "truncated (%llu bytes, shorter than the %d-byte header)",
                    (unsigned long long)size, HEADER_BYTES), false;
  if (memcmp(h, MAGIC, 8)) return snprintf(why, cap, "not a cache entry (bad magic)"), false;
  uint32_t version = get_u32(h + 8);
  if (version != COMPILE_CACHE_FORMAT)
    return snprintf(why, cap, "format version %u, this hlo reads %u", version,
                    COMPILE_CACHE_FORMAT), false;
  uint64_t len = get_u64(h + 16);
  if (len > size)
    return snprintf(why, cap, "truncated (%llu bytes, the header says %llu)",
                    (unsigned long long)size, (unsigned long long)len), false;
  if (len < size)
    return snprintf(why, cap, "trailing bytes (%llu bytes, the header says %llu)",
                    (unsigned long long)size, (unsigned long long)len), false;
  static const unsigned char zero[8];
  if (memcmp(h + 40, zero, 8))
    return snprintf(why, cap, "corrupt header (reserved bytes not zero)"), false;
  return true;
}

/* The 16 checksum bytes of an XXH3-128 hash: low 64 bits, then high, each
 * little-endian. */
static void put_hash(unsigned char out[16], XXH128_hash_t h) {
  put_u64(out, h.low64);
  put_u64(out + 8, h.high64);
}

/* Compares the checksum in header h with that of the bytes after the header
 * (the whole buffer, or the file read in chunks). */
static bool check_sum(const src *s, const unsigned char *h, char *why, size_t cap) {
  unsigned char got[16];
  if (s->buf) {
    put_hash(got, XXH3_128bits(s->buf + HEADER_BYTES, (size_t)(s->size - HEADER_BYTES)));
  } else {
    XXH3_state_t st;
    XXH3_128bits_reset(&st);
    enum { CHUNK = 1 << 20 };
    unsigned char *b = xmalloc(CHUNK);
    if (!b) return snprintf(why, cap, "unreadable: out of memory"), false;
    for (uint64_t off = HEADER_BYTES; off < s->size;) {
      size_t n = s->size - off < CHUNK ? (size_t)(s->size - off) : CHUNK;
      if (!src_read(s, off, b, n)) {
        free(b);
        return snprintf(why, cap, "unreadable: %s", errno ? strerror(errno) : "short read"),
               false;
      }
      XXH3_128bits_update(&st, b, n);
      off += n;
    }
    free(b);
    put_hash(got, XXH3_128bits_digest(&st));
  }
  if (memcmp(got, h + 24, 16)) return snprintf(why, cap, "checksum mismatch"), false;
  return true;
}

/* One section as the table locates it. */
typedef struct sec_loc {
  char name[256];
  uint64_t data_off, data_len;
} sec_loc;

/* Walks the section table of n sections; for each calls fn(ctx, i, loc)
 * (which may be NULL, and stops the walk by returning false). False with
 * "corrupt section table (...)" in why when a section leaves the file, a
 * name is empty, over 255 bytes or holds a NUL, or bytes follow the last
 * section. */
static bool walk_sections(const src *s, uint32_t n, bool (*fn)(void *, uint32_t, const sec_loc *),
                          void *ctx, char *why, size_t cap) {
  uint64_t pos = HEADER_BYTES;
  if (n > (s->size - HEADER_BYTES) / (SECTION_FIXED_BYTES + 1))
    return snprintf(why, cap, "corrupt section table (%u sections in %llu bytes)", n,
                    (unsigned long long)s->size), false;
  for (uint32_t i = 0; i < n; i++) {
    sec_loc l;
    unsigned char b[8];
    if (!src_read(s, pos, b, 4))
      return snprintf(why, cap, "corrupt section table (section %u starts past the end)", i), false;
    uint32_t nl = get_u32(b);
    if (nl == 0 || nl >= sizeof l.name)
      return snprintf(why, cap, "corrupt section table (section %u: name length %u)", i, nl),
             false;
    if (!src_read(s, pos + 4, l.name, nl) || !src_read(s, pos + 4 + nl, b, 8))
      return snprintf(why, cap, "corrupt section table (section %u runs past the end)", i), false;
    l.name[nl] = 0;
    if (strlen(l.name) != nl)
      return snprintf(why, cap, "corrupt section table (section %u: NUL in its name)", i), false;
    l.data_len = get_u64(b);
    l.data_off = pos + 4 + nl + 8;
    if (l.data_len > s->size - l.data_off)
      return snprintf(why, cap, "corrupt section table (section %u `%s`: %llu bytes past the end)",
                      i, l.name, (unsigned long long)(l.data_len - (s->size - l.data_off))), false;
    pos = l.data_off + l.data_len;
    if (fn && !fn(ctx, i, &l)) return true;
  }
  if (pos != s->size)
    return snprintf(why, cap, "corrupt section table (%llu bytes after the last section)",
                    (unsigned long long)(s->size - pos)), false;
  return true;
}

/* The whole check of an entry (header, checksum, sections). */
static bool check_all(const src *s, char *why, size_t cap) {
  unsigned char h[HEADER_BYTES] = {0};
  if (s->size >= HEADER_BYTES && !src_read(s, 0, h, HEADER_BYTES))
    return snprintf(why, cap, "unreadable: %s", errno ? strerror(errno) : "short read"), false;
  return check_header(h, s->size, why, cap) && check_sum(s, h, why, cap) &&
         walk_sections(s, get_u32(h + 12), NULL, NULL, why, cap);
}

/* ------------------------------------------------------------------- load */

struct cache_entry {
  unsigned char *buf;  /* the whole file */
  uint32_t n;
  cache_section *secs; /* names point into `names` */
  char *names;
};

/* Reads size bytes of fd into a malloc'd buffer; NULL with errno set (0 for
 * a short read or out of memory). */
static unsigned char *read_all(int fd, size_t size) {
  unsigned char *buf = xmalloc(size ? size : 1);
  size_t got = 0;
  errno = 0;
  while (buf && got < size) {
    ssize_t r = read(fd, buf + got, size - got);
    if (r < 0 && errno == EINTR) continue;
    if (r <= 0) {
      if (r == 0) errno = 0;
      free(buf);
      return NULL;
    }
    got += (size_t)r;
  }
  return buf;
}

/* Removes path when it is still the file that was checked (dev, ino of
 * `st`), so that a good entry renamed into place meanwhile survives. 0 when
 * removed (or gone already), else the errno of the failed unlink. */
static int unlink_if_same(const char *path, const struct stat *st) {
  struct stat now;
  if (lstat(path, &now) != 0) return 0;
  if (st && (now.st_dev != st->st_dev || now.st_ino != st->st_ino)) return 0;
  return unlink(path) == 0 || errno == ENOENT ? 0 : errno;
}

/* An entry that is there but cannot be used and stays: one warning line,
 * then a miss. */
static cache_lookup kept(const char *path, const char *check, const char *outcome) {
  fprintf(stderr, "hlo: warning: cache entry %s: %s; %s, recompiling\n", path, check, outcome);
  return CACHE_MISS;
}

static cache_lookup bad(const char *path, const struct stat *st, const char *check, char **why) {
  int e = unlink_if_same(path, st);
  if (e) {
    char outcome[160];
    snprintf(outcome, sizeof outcome, "could not remove it: %s", strerror(e));
    return kept(path, check, outcome);
  }
  if (why) {
    size_t n = strlen(path) + strlen(check) + 32;
    *why = xmalloc(n);
    if (*why) snprintf(*why, n, "cache entry %s: %s", path, check);
  }
  return CACHE_BAD;
}

bool compile_cache_remove(const char *root, const char *key, char *outcome, size_t cap) {
  char path[COMPILE_CACHE_PATH_MAX];
  int e = root && valid_key(key) && entry_path(root, key, path)
              ? (unlink(path) == 0 || errno == ENOENT ? 0 : errno)
              : EINVAL;
  if (outcome && cap) {
    if (e) snprintf(outcome, cap, "could not remove it: %s", strerror(e));
    else snprintf(outcome, cap, "removed");
  }
  return e == 0;
}

struct collect_ctx {
  cache_entry *e;
  char *names_at;
};

static bool collect(void *ctx, uint32_t i, const sec_loc *l) {
  struct collect_ctx *c = ctx;
  size_t nl = strlen(l->name);
  memcpy(c->names_at, l->name, nl + 1);
  c->e->secs[i].name = c->names_at;
  c->e->secs[i].data = c->e->buf + l->data_off;
  c->e->secs[i].len = (size_t)l->data_len;
  c->names_at += nl + 1;
  return true;
}

cache_lookup compile_cache_load(const char *root, const char *key, cache_entry **out,
                                char **why) {
  char path[COMPILE_CACHE_PATH_MAX], msg[192];
  *out = NULL;
  if (why) *why = NULL;
  if (!root || !valid_key(key) || !entry_path(root, key, path)) return CACHE_MISS;
  /* a FIFO must not block; a symbolic link (a path outside the entry) is bad */
  int fd = open(path, O_RDONLY | O_CLOEXEC | O_NONBLOCK | O_NOFOLLOW);
  if (fd < 0) {
    int e = errno;
    /* absent, or a problem of this process rather than of the entry */
    if (e == ENOENT || e == ENOTDIR || e == EMFILE || e == ENFILE || e == ENOMEM || e == EINTR)
      return CACHE_MISS;
    snprintf(msg, sizeof msg, "unreadable: %s", strerror(e));
    /* another user's entry in a shared cache (or one made unreadable on
       purpose): not ours to remove */
    if (e == EACCES || e == EPERM) return kept(path, msg, "not removed");
    return bad(path, NULL, msg, why);
  }
  struct stat st;
  if (fstat(fd, &st) != 0) {
    snprintf(msg, sizeof msg, "unreadable: %s", strerror(errno));
    close(fd);
    return bad(path, NULL, msg, why);
  }
  if (!S_ISREG(st.st_mode)) {
    close(fd);
    return bad(path, &st, "not a regular file", why);
  }
  if ((uint64_t)st.st_size > MAX_FILE_BYTES) {
    snprintf(msg, sizeof msg, "too large (%llu bytes; at most 4 GiB)",
             (unsigned long long)st.st_size);
    close(fd);
    return bad(path, &st, msg, why);
  }
  size_t size = (size_t)st.st_size;
  unsigned char *buf = read_all(fd, size);
  if (!buf) {
    int e = errno;
    close(fd);
    if (!e) return CACHE_MISS; /* out of memory; a short read cannot happen for a file
                                  never written in place, and reads as a miss */
    snprintf(msg, sizeof msg, "unreadable: %s", strerror(e));
    if (e == EACCES || e == EPERM) return kept(path, msg, "not removed");
    return bad(path, &st, msg, why);
  }
  src s = {buf, -1, size};
  if (!check_all(&s, msg, sizeof msg)) {
    free(buf);
    close(fd);
    return bad(path, &st, msg, why);
  }
  cache_entry *e = xcalloc(1, sizeof *e);
  uint32_t n = get_u32(buf + 12);
  if (e) {
    e->buf = buf;
    e->n = n;
    e->secs = xcalloc(n ? n : 1, sizeof *e->secs);
    /* each name (at most 255 bytes) and its NUL fit in its table row */
    size_t cap = (size_t)n * 256 + 1 < size + 1 ? (size_t)n * 256 + 1 : size + 1;
    e->names = xmalloc(cap);
  }
  if (!e || !e->secs || !e->names) {
    if (e) cache_entry_free(e);
    else free(buf);
    close(fd);
    return CACHE_MISS;
  }
  struct collect_ctx c = {e, e->names};
  (void)walk_sections(&s, n, collect, &c, msg, sizeof msg); /* checked above */
  futimens(fd, NULL); /* last use: now (best effort: a read-only cache still hits) */
  close(fd);
  *out = e;
  return CACHE_HIT;
}

const void *cache_entry_section(const cache_entry *e, const char *name, size_t *len) {
  for (uint32_t i = 0; e && i < e->n; i++)
    if (!strcmp(e->secs[i].name, name)) {
      if (len) *len = e->secs[i].len;
      return e->secs[i].data;
    }
  if (len) *len = 0;
  return NULL;
}

uint32_t cache_entry_num_sections(const cache_entry *e) { return e ? e->n : 0; }

cache_section cache_entry_section_at(const cache_entry *e, uint32_t i) {
  cache_section none = {NULL, NULL, 0};
  return e && i < e->n ? e->secs[i] : none;
}

void cache_entry_free(cache_entry *e) {
  if (!e) return;
  free(e->buf);
  free(e->secs);
  free(e->names);
  free(e);
}

/* ------------------------------------------------------------------ store */

typedef struct writer {
  int fd;
  int err;        /* errno of the first failed write, or 0 */
  size_t n;
  unsigned char buf[WRITE_BUF];
} writer;

static void raw_write(writer *w, const void *p, size_t n) {
  const char *s = p;
  while (!w->err && n) {
    ssize_t r = write(w->fd, s, n > (1u << 30) ? (1u << 30) : n);
    if (r < 0 && errno == EINTR) continue;
    if (r <= 0) {
      w->err = r < 0 ? errno : ENOSPC;
      return;
    }
    s += r;
    n -= (size_t)r;
  }
}

static void flush(writer *w) {
  raw_write(w, w->buf, w->n);
  w->n = 0;
}

/* Appends n bytes in order: small pieces through the buffer, large ones
 * (after what is buffered) directly. */
static void put(writer *w, const void *p, size_t n) {
  if (n >= sizeof w->buf / 2) {
    flush(w);
    raw_write(w, p, n);
  } else {
    if (w->n + n > sizeof w->buf) flush(w);
    memcpy(w->buf + w->n, p, n);
    w->n += n;
  }
}

/* Opens a new temporary ROOT/executables/.tmp-KEY-PID-COUNTER (O_EXCL). */
static int open_temp(const char *dir, const char *key, char out[COMPILE_CACHE_PATH_MAX]) {
  static _Atomic unsigned counter;
  for (int attempt = 0; attempt < 8; attempt++) {
    unsigned c = atomic_fetch_add(&counter, 1);
    int w = snprintf(out, COMPILE_CACHE_PATH_MAX, "%s/.tmp-%s-%ld-%u", dir, key, (long)getpid(),
                     c);
    if (w <= 0 || w >= COMPILE_CACHE_PATH_MAX) {
      errno = ENAMETOOLONG;
      return -1;
    }
    /* 0644 less the umask: a cache shared between users is readable by all */
    int fd = open(out, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0644);
    if (fd >= 0 || errno != EEXIST) return fd;
  }
  return -1;
}

hlo_status compile_cache_store(const char *root, const char *key, const cache_section *secs,
                               uint32_t n, uint64_t max_bytes) {
  if (!root || !*root) return status_new(HLO_INVALID_ARGUMENT, "compile cache: no root folder");
  if (!valid_key(key))
    return status_new(HLO_INVALID_ARGUMENT,
                      "compile cache: the key `%s` is not 1 to %d letters, digits or _",
                      key ? key : "(null)", KEY_MAX);
  uint64_t total = HEADER_BYTES;
  for (uint32_t i = 0; i < n; i++) {
    size_t nl = secs[i].name ? strlen(secs[i].name) : 0;
    if (nl == 0 || nl > 255 || (!secs[i].data && secs[i].len))
      return status_new(HLO_INVALID_ARGUMENT,
                        "compile cache: section %u has %s", i,
                        nl ? (nl > 255 ? "a name over 255 bytes" : "no data") : "no name");
    total += SECTION_FIXED_BYTES + nl;
    if (secs[i].len > MAX_FILE_BYTES || (total += secs[i].len) > MAX_FILE_BYTES)
      return status_new(HLO_RESOURCE_EXHAUSTED,
                        "compile cache: the entry would exceed 4 GiB (section %u `%s`)", i,
                        secs[i].name);
  }
  char dir[COMPILE_CACHE_PATH_MAX], tmp[COMPILE_CACHE_PATH_MAX], path[COMPILE_CACHE_PATH_MAX];
  if (!join(dir, root, "executables", NULL) || !entry_path(root, key, path))
    return status_new(HLO_UNAVAILABLE, "the path under %s is too long", root);
  uint64_t bound = max_bytes ? max_bytes : compile_cache_max_bytes(0, NULL);
  if (total > bound) {  /* it would be evicted at once: not stored (what is there stays bounded) */
    compile_cache_evict(root, bound, NULL);
    return status_new(HLO_RESOURCE_EXHAUSTED,
                      "the entry (%llu bytes) is larger than the cache's bound (%llu bytes: "
                      "--cache-max-bytes, HLO_CACHE_MAX_BYTES)",
                      (unsigned long long)total, (unsigned long long)bound);
  }
  HLO_TRY(path_make_dirs(root, 0700)); /* a root hlo makes is private ... */
  if (mkdir(dir, 0755) != 0 && errno != EEXIST) /* ... its folders as shared as the root */
    return status_new(HLO_UNAVAILABLE, "cannot create the folder %s: %s", dir,
                      strerror(errno));

  /* the checksum first (XXH3 runs at memory speed), then one sequential write */
  XXH3_state_t hs;
  XXH3_128bits_reset(&hs);
  unsigned char b[8];
  for (uint32_t i = 0; i < n; i++) {
    uint32_t nl = (uint32_t)strlen(secs[i].name);
    put_u32(b, nl);
    XXH3_128bits_update(&hs, b, 4);
    XXH3_128bits_update(&hs, secs[i].name, nl);
    put_u64(b, secs[i].len);
    XXH3_128bits_update(&hs, b, 8);
    if (secs[i].len) XXH3_128bits_update(&hs, secs[i].data, secs[i].len);
  }
  unsigned char h[HEADER_BYTES] = {0};
  memcpy(h, MAGIC, 8);
  put_u32(h + 8, COMPILE_CACHE_FORMAT);
  put_u32(h + 12, n);
  put_u64(h + 16, total);
  put_hash(h + 24, XXH3_128bits_digest(&hs));

  writer *w = xmalloc(sizeof *w);
  if (!w) return status_new(HLO_RESOURCE_EXHAUSTED, "out of memory");
  w->fd = open_temp(dir, key, tmp);
  if (w->fd < 0) {
    hlo_status st = status_new(HLO_UNAVAILABLE, "cannot create a file in %s: %s",
                               dir, strerror(errno));
    free(w);
    return st;
  }
  w->err = 0;
  w->n = 0;
  put(w, h, sizeof h);
  for (uint32_t i = 0; i < n; i++) {
    uint32_t nl = (uint32_t)strlen(secs[i].name);
    put_u32(b, nl);
    put(w, b, 4);
    put(w, secs[i].name, nl);
    put_u64(b, secs[i].len);
    put(w, b, 8);
    if (secs[i].len) put(w, secs[i].data, secs[i].len);
  }
  flush(w);
  int err = w->err;
  if (close(w->fd) != 0 && !err) err = errno;
  free(w);
  if (!err && rename(tmp, path) != 0) err = errno;
  if (err) {
    unlink(tmp);
    return status_new(HLO_UNAVAILABLE, "cannot write %s: %s", path, strerror(err));
  }
  compile_cache_evict(root, bound, path);
  return NULL;
}

/* --------------------------------------------------------------- scanning */

/* One file of the cache as a scan saw it. */
typedef struct cfile {
  char *name;
  int dir;                 /* 0: executables, 1: kernels */
  uint64_t bytes;
  struct timespec mtime;
  dev_t dev;
  ino_t ino;
} cfile;

typedef struct scan {
  cfile *f;
  size_t n, cap;
  bool oom;
} scan;

/* ROOT's folders: entries, kernel objects, and the aliases of
 * executable_cache.c (KEY.alias: the text of a program as given -> its
 * entry's key; tiny files, evicted and cleared like the others). */
enum { NUM_SUBDIRS = 3 };
static const char *const SUBDIRS[NUM_SUBDIRS] = {"executables", "kernels", "aliases"};

/* Adds ROOT/SUBDIRS[dir]'s entry files (dir 0: KEY.hlox) or kernel and
 * alias files (dirs 1, 2: STEM.EXT) to s. A missing folder adds nothing. */
static void scan_dir(const char *root, int dir, scan *s) {
  char p[COMPILE_CACHE_PATH_MAX], key[COMPILE_CACHE_KEY_HEX];
  if (!join(p, root, SUBDIRS[dir], NULL)) return;
  DIR *d = opendir(p);
  if (!d) return;
  struct dirent *de;
  while ((de = readdir(d)) && !s->oom) {
    size_t stem;
    if (dir == 0 ? !entry_file_name(de->d_name, key) : !kernel_file_name(de->d_name, &stem))
      continue;
    struct stat st;
    if (fstatat(dirfd(d), de->d_name, &st, AT_SYMLINK_NOFOLLOW) != 0 || !S_ISREG(st.st_mode))
      continue;
    if (s->n == s->cap) {
      size_t cap = s->cap ? 2 * s->cap : 64;
      cfile *nf = xrealloc(s->f, cap * sizeof *nf);
      if (!nf) {
        s->oom = true;
        break;
      }
      s->f = nf;
      s->cap = cap;
    }
    cfile *f = &s->f[s->n];
    f->name = xmalloc(strlen(de->d_name) + 1);
    if (!f->name) {
      s->oom = true;
      break;
    }
    strcpy(f->name, de->d_name);
    f->dir = dir;
    f->bytes = (uint64_t)st.st_size;
    f->mtime = st.st_mtim;
    f->dev = st.st_dev;
    f->ino = st.st_ino;
    s->n++;
  }
  closedir(d);
}

static void scan_free(scan *s) {
  for (size_t i = 0; i < s->n; i++) free(s->f[i].name);
  free(s->f);
}

/* Orders kernel files by stem (then name), entries after them by name. */
static int cmp_by_group(const void *a, const void *b) {
  const cfile *x = a, *y = b;
  if (x->dir != y->dir) return x->dir - y->dir;
  size_t xs = strcspn(x->name, "."), ys = strcspn(y->name, ".");
  int c = strncmp(x->name, y->name, xs < ys ? xs : ys);
  if (c) return c;
  if (xs != ys) return xs < ys ? -1 : 1;
  return strcmp(x->name, y->name);
}

/* ----------------------------------------------------------------- evict */

/* An eviction unit: files f[first..first+count) of one entry or one kernel
 * (its object and note), last used at the newest of their mtimes. */
typedef struct unit {
  size_t first, count;
  uint64_t bytes;
  struct timespec mtime;
  bool keep;
} unit;

static int cmp_unit_age(const void *a, const void *b) {
  const unit *x = a, *y = b;
  int c = cmp_ts(x->mtime, y->mtime);
  return c ? c : (x->first < y->first ? -1 : x->first > y->first);
}

void compile_cache_evict(const char *root, uint64_t max_bytes, const char *keep) {
  if (!root) return;
  scan s = {0};
  for (int d = 0; d < NUM_SUBDIRS; d++) scan_dir(root, d, &s);
  struct stat ks;
  bool has_keep = keep && stat(keep, &ks) == 0;
  unit *u = s.oom ? NULL : xcalloc(s.n ? s.n : 1, sizeof *u);
  if (!u) {
    scan_free(&s);
    return;
  }
  if (s.n) qsort(s.f, s.n, sizeof *s.f, cmp_by_group);
  size_t nu = 0;
  uint64_t total = 0;
  for (size_t i = 0; i < s.n; i++) {
    const cfile *f = &s.f[i];
    bool same = nu && f->dir == 1 && s.f[u[nu - 1].first].dir == 1 &&
                strcspn(f->name, ".") == strcspn(s.f[u[nu - 1].first].name, ".") &&
                !strncmp(f->name, s.f[u[nu - 1].first].name, strcspn(f->name, "."));
    if (!same) u[nu++] = (unit){.first = i, .mtime = f->mtime};
    unit *x = &u[nu - 1];
    x->count++;
    x->bytes += f->bytes;
    if (cmp_ts(f->mtime, x->mtime) > 0) x->mtime = f->mtime;
    if (has_keep && f->dev == ks.st_dev && f->ino == ks.st_ino) x->keep = true;
    total += f->bytes;
  }
  if (total > max_bytes) {
    qsort(u, nu, sizeof *u, cmp_unit_age);
    for (size_t i = 0; i < nu && total > max_bytes; i++) {
      if (u[i].keep) continue;
      for (size_t j = 0; j < u[i].count; j++) {
        char p[COMPILE_CACHE_PATH_MAX];
        const cfile *f = &s.f[u[i].first + j];
        struct stat now;
        /* only the file that was scanned, unused since: not an entry another
           process has just renamed into place or hit (gone already, by
           another process evicting, is as good) */
        if (join(p, root, SUBDIRS[f->dir], "/") && strlen(p) + strlen(f->name) < sizeof p) {
          strcat(p, f->name);
          if (lstat(p, &now) == 0 && now.st_dev == f->dev && now.st_ino == f->ino &&
              !cmp_ts(now.st_mtim, f->mtime))
            unlink(p);
        }
      }
      total -= u[i].bytes;
    }
  }
  free(u);
  scan_free(&s);
}

/* ------------------------------------------------------------------ sweep */

void compile_cache_sweep(const char *root) {
  char dir[COMPILE_CACHE_PATH_MAX];
  if (!root || !join(dir, root, "executables", NULL)) return;
  DIR *d = opendir(dir);
  if (!d) return;
  time_t now = time(NULL);
  struct dirent *e;
  while ((e = readdir(d))) {
    /* ".tmp-" KEY "-" PID "-" COUNTER */
    const char *n = e->d_name;
    if (strncmp(n, ".tmp-", 5)) continue;
    const char *k = n + 5;
    while (isalnum((unsigned char)*k) || *k == '_') k++;
    char *end = NULL;
    long pid = *k == '-' ? strtol(k + 1, &end, 10) : 0;
    struct stat st;
    if (fstatat(dirfd(d), n, &st, AT_SYMLINK_NOFOLLOW) != 0 || !S_ISREG(st.st_mode)) continue;
    double age = difftime(now, st.st_mtime);
    bool dead = end && *end == '-' && pid > 0 && pid != (long)getpid() &&
                kill((pid_t)pid, 0) != 0 && errno == ESRCH;
    if (age > STALE_S || (dead && age > DEAD_GRACE_S)) unlinkat(dirfd(d), n, 0);
  }
  closedir(d);
}

/* ------------------------------------------------------------------ clear */

/* Whether temporary `name` (".tmp-KEY-PID-...") belongs to a process alive
 * on this machine (kill(pid, 0) succeeds or is refused: another user's) and
 * is not stale. */
static bool temp_is_live(const char *name, const struct stat *st) {
  const char *k = name + 5;
  while (isalnum((unsigned char)*k) || *k == '_') k++;
  char *end = NULL;
  long pid = *k == '-' ? strtol(k + 1, &end, 10) : 0;
  if (!end || *end != '-' || pid <= 0) return false;
  if (difftime(time(NULL), st->st_mtime) > STALE_S) return false;
  return pid == (long)getpid() || kill((pid_t)pid, 0) == 0 || errno == EPERM;
}

hlo_status compile_cache_clear(const char *root, uint64_t *out_files, uint64_t *out_bytes) {
  uint64_t files = 0, bytes = 0;
  hlo_status first = NULL;
  for (int i = 0; root && i < NUM_SUBDIRS; i++) {
    char dir[COMPILE_CACHE_PATH_MAX], key[COMPILE_CACHE_KEY_HEX];
    if (!join(dir, root, SUBDIRS[i], NULL)) continue;
    DIR *d = opendir(dir);
    if (!d) {
      if (errno != ENOENT && !first)
        first = status_new(HLO_UNAVAILABLE, "cannot read the folder %s: %s", dir,
                           strerror(errno));
      continue;
    }
    struct dirent *e;
    while ((e = readdir(d))) {
      size_t stem;
      const char *n = e->d_name;
      bool tmp = !strncmp(n, ".tmp-", 5);
      bool ours = tmp || (i == 0 ? entry_file_name(n, key) : kernel_file_name(n, &stem));
      struct stat st;
      if (!ours || fstatat(dirfd(d), n, &st, AT_SYMLINK_NOFOLLOW) != 0 || S_ISDIR(st.st_mode))
        continue;
      if (tmp && temp_is_live(n, &st)) continue; /* being written now: its writer renames it */
      if (unlinkat(dirfd(d), n, 0) == 0) {
        files++;
        bytes += (uint64_t)st.st_size;
      } else if (errno != ENOENT && !first) {
        first = status_new(HLO_UNAVAILABLE, "cannot remove %s/%s: %s", dir, n, strerror(errno));
      }
    }
    closedir(d);
  }
  if (out_files) *out_files = files;
  if (out_bytes) *out_bytes = bytes;
  return first;
}

/* ------------------------------------------------------------------- list */

struct find_meta {
  sec_loc loc;
  bool found;
};

static bool find_meta(void *ctx, uint32_t i, const sec_loc *l) {
  struct find_meta *m = ctx;
  if (strcmp(l->name, "meta")) return true;
  m->loc = *l;
  m->found = true;
  return false; /* the first one, as cache_entry_section */
}

/* Fills le's meta (and problem when a check fails) from the open entry fd
 * of `size` bytes: the header, the section table up to the meta section
 * and that section; with `verify`, every check. False on out of memory. */
static bool list_one(int fd, uint64_t size, bool verify, cache_listing_entry *le) {
  char why[192] = "";
  src s = {NULL, fd, size};
  unsigned char h[HEADER_BYTES] = {0};
  bool ok;
  if (size > MAX_FILE_BYTES) {
    snprintf(why, sizeof why, "too large (%llu bytes; at most 4 GiB)", (unsigned long long)size);
    ok = false;
  } else if (verify) {
    ok = check_all(&s, why, sizeof why);
  } else {
    ok = (size < HEADER_BYTES || src_read(&s, 0, h, HEADER_BYTES)) &&
         check_header(h, size, why, sizeof why);
    if (!ok && !why[0]) snprintf(why, sizeof why, "unreadable: %s", strerror(errno));
  }
  struct find_meta m = {.found = false};
  if (ok) {
    if (size >= HEADER_BYTES) src_read(&s, 0, h, HEADER_BYTES);
    ok = walk_sections(&s, get_u32(h + 12), find_meta, &m, why, sizeof why);
  }
  if (!ok) {
    le->problem = xmalloc(strlen(why) + 1);
    if (!le->problem) return false;
    strcpy(le->problem, why);
    return true;
  }
  if (m.found && m.loc.data_len <= MAX_META_BYTES) {
    le->meta = xmalloc((size_t)m.loc.data_len + 1);
    if (!le->meta) return false;
    if (!src_read(&s, m.loc.data_off, le->meta, (size_t)m.loc.data_len)) {
      free(le->meta);
      le->meta = NULL;
      return true;
    }
    le->meta[m.loc.data_len] = 0;
  }
  return true;
}

static int cmp_recent(const void *a, const void *b) {
  const cfile *x = a, *y = b;
  int c = cmp_ts(y->mtime, x->mtime);
  return c ? c : strcmp(x->name, y->name);
}

hlo_status compile_cache_list(const char *root, bool verify, cache_listing *out) {
  memset(out, 0, sizeof *out);
  if (!root) return NULL;
  scan s = {0};
  for (int d = 0; d < NUM_SUBDIRS; d++) scan_dir(root, d, &s);  /* aliases counted, not listed */
  if (s.oom) {
    scan_free(&s);
    return status_new(HLO_RESOURCE_EXHAUSTED, "out of memory");
  }
  if (s.n) qsort(s.f, s.n, sizeof *s.f, cmp_recent); /* s.f is NULL when empty */
  out->entries = xcalloc(s.n ? s.n : 1, sizeof *out->entries);
  bool oom = !out->entries;
  for (size_t i = 0; i < s.n && !oom; i++) {
    const cfile *f = &s.f[i];
    if (f->dir == 1) {
      out->kernel_bytes += f->bytes;
      out->kernel_files++;
      continue;
    }
    if (f->dir == 2) {
      out->alias_bytes += f->bytes;
      out->alias_files++;
      continue;
    }
    char p[COMPILE_CACHE_PATH_MAX];
    cache_listing_entry *le = &out->entries[out->n];
    if (!join(p, root, "executables/", f->name)) continue;
    int fd = open(p, O_RDONLY | O_CLOEXEC | O_NONBLOCK | O_NOFOLLOW);
    if (fd < 0 && errno == ENOENT) continue; /* evicted meanwhile */
    struct stat st;
    if (fd >= 0 && fstat(fd, &st) == 0 && S_ISREG(st.st_mode)) {
      oom = !list_one(fd, (uint64_t)st.st_size, verify, le);
      le->bytes = (uint64_t)st.st_size;
      le->last_used = (int64_t)st.st_mtime;
    } else {
      char why[160];
      snprintf(why, sizeof why, "unreadable: %s", strerror(fd < 0 ? errno : EIO));
      le->problem = xmalloc(strlen(why) + 1);
      if (le->problem) strcpy(le->problem, why);
      oom = !le->problem;
      le->bytes = f->bytes;
      le->last_used = (int64_t)f->mtime.tv_sec;
    }
    if (fd >= 0) close(fd);
    entry_file_name(f->name, le->key);
    out->entry_bytes += le->bytes;
    out->n++;
  }
  scan_free(&s);
  if (oom) {
    cache_listing_free(out);
    return status_new(HLO_RESOURCE_EXHAUSTED, "out of memory");
  }
  return NULL;
}

void cache_listing_free(cache_listing *l) {
  if (!l) return;
  for (uint32_t i = 0; l->entries && i < l->n; i++) {
    free(l->entries[i].meta);
    free(l->entries[i].problem);
  }
  free(l->entries);
  memset(l, 0, sizeof *l);
}
