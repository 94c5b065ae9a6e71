/* kernel_cache.c — the on-disk cache of compiled kernel objects (see
 * kernel_cache.h for the key, the layout and the robustness rules). */
#include "backend/cpu/kernel_cache.h"
#include "support/cache_dir.h"
#include <dirent.h>
#include <errno.h>
#include <signal.h>
#include <fcntl.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>
#if !defined(HLO_NO_XXHASH) && defined(__has_include)
#if __has_include(<xxhash.h>)
#define HAVE_XXHASH 1
#endif
#endif
#ifdef HAVE_XXHASH
#define XXH_INLINE_ALL
#include <xxhash.h>
#else
/* Without libxxhash-dev: FNV-1a 64 (Fowler, Noll, Vo; the public-domain
 * reference parameters), twice with different bases for a 128-bit key.
 * Slower and weaker than XXH3, but the build needs no package; keys then
 * differ from an XXH3 build's (misses, never wrong hits across builds). */
#define HAVE_XXHASH 0
typedef struct fnv128 {
  uint64_t a, b;
} fnv128;
static void fnv_update(fnv128 *h, const void *p, size_t n) {
  const unsigned char *s = p;
  for (size_t i = 0; i < n; i++) {
    h->a = (h->a ^ s[i]) * 1099511628211ull;
    h->b = (h->b ^ s[i]) * 1099511628211ull;
  }
}
static uint64_t fnv64(const void *p, size_t n) {
  fnv128 h = {1469598103934665603ull, 0};
  fnv_update(&h, p, n);
  return h.a;
}
#endif

#define TRAILER_MAGIC "HLOKC001"
enum { TRAILER_BYTES = 32, MAX_ENTRY_BYTES = 1 << 30 };

bool kernel_cache_dir(const char *root, char out_dir[KERNEL_CACHE_PATH_MAX]) {
  return cache_dir_sub(root, "kernels", out_dir);
}

void kernel_cache_key(const char *const *parts, size_t n, char out[KERNEL_CACHE_KEY_HEX]) {
#if HAVE_XXHASH
  XXH3_state_t st;
  XXH3_128bits_reset(&st);
  for (size_t i = 0; i < n; i++) {
    const char *s = parts[i] ? parts[i] : "";
    uint64_t len = strlen(s);
    XXH3_128bits_update(&st, &len, sizeof len);
    XXH3_128bits_update(&st, s, len);
  }
  XXH128_hash_t h = XXH3_128bits_digest(&st);
  uint64_t hi = h.high64, lo = h.low64;
#else
  fnv128 h = {1469598103934665603ull, 0x6c62272e07bb0142ull};
  for (size_t i = 0; i < n; i++) {
    const char *s = parts[i] ? parts[i] : "";
    uint64_t len = strlen(s);
    fnv_update(&h, &len, sizeof len);
    fnv_update(&h, s, len);
  }
  uint64_t hi = h.a, lo = h.b;
#endif
  snprintf(out, KERNEL_CACHE_KEY_HEX, "%016llx%016llx", (unsigned long long)hi,
           (unsigned long long)lo);
}

/* The checksum of an entry's object. */
static uint64_t checksum(const void *p, size_t n) {
#if HAVE_XXHASH
  return XXH3_64bits(p, n);
#else
  return fnv64(p, n);
#endif
}

static bool entry_path(const char *dir, const char *key, char out[KERNEL_CACHE_PATH_MAX]) {
  int w = snprintf(out, KERNEL_CACHE_PATH_MAX, "%s/%s.so", dir, key);
  return w > 0 && w < KERNEL_CACHE_PATH_MAX;
}

static void put_u64(unsigned char *p, uint64_t v) {
  for (int i = 0; i < 8; i++) p[i] = (unsigned char)(v >> (8 * i));
}
static uint64_t get_u64(const unsigned char *p) {
  uint64_t v = 0;
  for (int i = 0; i < 8; i++) v |= (uint64_t)p[i] << (8 * i);
  return v;
}

/* Reads the whole of fd (size bytes) into a malloc'd buffer, or NULL. */
static unsigned char *read_all(int fd, size_t size) {
  unsigned char *buf = malloc(size ? size : 1);
  size_t got = 0;
  while (buf && got < size) {
    ssize_t r = read(fd, buf + got, size - got);
    if (r < 0 && errno == EINTR) continue;
    if (r <= 0) {
      free(buf);
      return NULL;
    }
    got += (size_t)r;
  }
  return buf;
}

/* 1: valid, 0: invalid (corrupt, truncated), -1: absent or unreadable.
 * When valid and `bytes` is set, *bytes (malloc'd, yours) and *len receive
 * the object without its trailer. */
static int check_entry(const char *path, void **bytes, size_t *len) {
  int fd = open(path, O_RDONLY | O_CLOEXEC | O_NONBLOCK); /* a FIFO must not block */
  if (fd < 0) return -1;
  struct stat st;
  int ok = 0;
  if (fstat(fd, &st) == 0 && S_ISREG(st.st_mode) && st.st_size > TRAILER_BYTES &&
      st.st_size <= MAX_ENTRY_BYTES) {
    unsigned char *buf = read_all(fd, (size_t)st.st_size);
    if (buf) {
      size_t n = (size_t)st.st_size - TRAILER_BYTES;
      const unsigned char *t = buf + n;
      ok = !memcmp(t, TRAILER_MAGIC, 8) && get_u64(t + 8) == n &&
           get_u64(t + 16) == checksum(buf, n) && get_u64(t + 24) == 0;
      if (ok && bytes) {
        *bytes = buf;
        *len = n;
        buf = NULL;
      }
      free(buf);
    } else {
      ok = -1;
    }
  }
  close(fd);
  return ok;
}

/* Marks a good entry used now: the cache's eviction removes the least
 * recently used files first, by mtime (best effort: a read-only cache
 * still hits). */
static void touch(const char *path) { utimensat(AT_FDCWD, path, NULL, 0); }

bool kernel_cache_lookup(const char *dir, const char *key, char out_path[KERNEL_CACHE_PATH_MAX]) {
  if (!dir || !entry_path(dir, key, out_path)) return false;
  int c = check_entry(out_path, NULL, NULL);
  if (c == 0) unlink(out_path);
  if (c == 1) touch(out_path);
  return c == 1;
}

bool kernel_cache_load(const char *dir, const char *key, char out_path[KERNEL_CACHE_PATH_MAX],
                       void **bytes, size_t *len) {
  *bytes = NULL;
  *len = 0;
  if (!dir || !entry_path(dir, key, out_path)) return false;
  int c = check_entry(out_path, bytes, len);
  if (c == 0) unlink(out_path);
  if (c == 1) touch(out_path);
  return c == 1;
}

/* A new empty file DIR/.tmp-KEY-PID-COUNT-NS.SUFFIX, unique in the process
 * and among processes (the pid is what kernel_cache_sweep reads back). */
static bool make_temp(const char *dir, const char *key, const char *suffix,
                      char out_path[KERNEL_CACHE_PATH_MAX]) {
  static _Atomic unsigned counter;
  struct timespec ts;
  clock_gettime(CLOCK_REALTIME, &ts);
  for (int attempt = 0; attempt < 4; attempt++) {
    unsigned c = atomic_fetch_add(&counter, 1);
    int w = snprintf(out_path, KERNEL_CACHE_PATH_MAX, "%s/.tmp-%s-%ld-%u-%lx.%s", dir, key,
                     (long)getpid(), c, (unsigned long)ts.tv_nsec, suffix);
    if (w <= 0 || w >= KERNEL_CACHE_PATH_MAX) return false;
    /* made here, so an unwritable folder is found before the compiler runs */
    /* 0644 (less the umask): a cache shared between users is readable by all */
    int fd = open(out_path, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0644);
    if (fd >= 0) {
      close(fd);
      return true;
    }
    if (errno != EEXIST) return false;
  }
  return false;
}

bool kernel_cache_temp_path(const char *dir, const char *key,
                            char out_path[KERNEL_CACHE_PATH_MAX]) {
  return make_temp(dir, key, "so", out_path);
}

bool kernel_cache_commit(const char *dir, const char *key, const char *tmp_path,
                         char out_path[KERNEL_CACHE_PATH_MAX]) {
  bool ok = false;
  int fd = open(tmp_path, O_RDWR | O_CLOEXEC);
  struct stat st;
  if (fd >= 0 && fstat(fd, &st) == 0 && S_ISREG(st.st_mode) && st.st_size > 0 &&
      st.st_size <= MAX_ENTRY_BYTES - TRAILER_BYTES) {
    size_t len = (size_t)st.st_size;
    unsigned char *buf = read_all(fd, len);
    if (buf) {
      unsigned char t[TRAILER_BYTES];
      memcpy(t, TRAILER_MAGIC, 8);
      put_u64(t + 8, len);
      put_u64(t + 16, checksum(buf, len));
      put_u64(t + 24, 0);
      free(buf);
      ok = pwrite(fd, t, sizeof t, (off_t)len) == (ssize_t)sizeof t;
    }
  }
  if (fd >= 0) ok = close(fd) == 0 && ok;
  return ok && entry_path(dir, key, out_path) && rename(tmp_path, out_path) == 0;
}

bool kernel_cache_store(const char *dir, const char *key, const void *bytes, size_t len,
                        int *err) {
  char tmp[KERNEL_CACHE_PATH_MAX], p[KERNEL_CACHE_PATH_MAX];
  int e = 0;
  if (err) *err = 0;
  if (!dir || !bytes || !len || len > MAX_ENTRY_BYTES - TRAILER_BYTES) {
    if (err) *err = EINVAL;
    return false;
  }
  errno = 0;
  if (!entry_path(dir, key, p) || !make_temp(dir, key, "so", tmp)) {
    if (err) *err = errno ? errno : ENAMETOOLONG;
    return false;
  }
  unsigned char t[TRAILER_BYTES];
  memcpy(t, TRAILER_MAGIC, 8);
  put_u64(t + 8, len);
  put_u64(t + 16, checksum(bytes, len));
  put_u64(t + 24, 0);
  int fd = open(tmp, O_WRONLY | O_TRUNC | O_CLOEXEC);
  if (fd < 0) e = errno;
  const unsigned char *parts[2] = {bytes, t};
  size_t lens[2] = {len, sizeof t};
  for (int i = 0; i < 2 && !e; i++)
    for (size_t done = 0; done < lens[i] && !e;) {
      ssize_t w = write(fd, parts[i] + done, lens[i] - done);
      if (w < 0 && errno == EINTR) continue;
      if (w <= 0) e = w < 0 ? errno : ENOSPC;
      else done += (size_t)w;
    }
  if (fd >= 0 && close(fd) != 0 && !e) e = errno;
  if (!e && rename(tmp, p) != 0) e = errno;
  if (e) {
    unlink(tmp);
    if (err) *err = e;
    return false;
  }
  return true;
}

void kernel_cache_remove(const char *dir, const char *key) {
  char p[KERNEL_CACHE_PATH_MAX];
  if (dir && entry_path(dir, key, p)) unlink(p);
}

/* ------------------------------------------------------------------ notes */

static bool note_path(const char *dir, const char *key, char out[KERNEL_CACHE_PATH_MAX]) {
  int w = snprintf(out, KERNEL_CACHE_PATH_MAX, "%s/%s.note", dir, key);
  return w > 0 && w < KERNEL_CACHE_PATH_MAX;
}

bool kernel_cache_read_note(const char *dir, const char *key, double max_age_s, char *out,
                            size_t cap) {
  char p[KERNEL_CACHE_PATH_MAX];
  if (!dir || !cap || !note_path(dir, key, p)) return false;
  out[0] = 0;
  int fd = open(p, O_RDONLY | O_CLOEXEC | O_NONBLOCK);
  if (fd < 0) return false;
  struct stat st;
  ssize_t n = -1;
  if (fstat(fd, &st) == 0 && S_ISREG(st.st_mode) &&
      (max_age_s <= 0 || difftime(time(NULL), st.st_mtime) <= max_age_s))
    n = read(fd, out, cap - 1);
  close(fd);
  /* a note is one line ending in '\n': anything else (empty, cut short) is
     absent */
  if (n <= 0 || out[n - 1] != '\n') {
    out[0] = 0;
    return false;
  }
  out[n - 1] = 0;
  return strchr(out, '\n') == NULL;
}

void kernel_cache_write_note(const char *dir, const char *key, const char *text) {
  char tmp[KERNEL_CACHE_PATH_MAX], p[KERNEL_CACHE_PATH_MAX];
  if (!dir || strchr(text, '\n') || !note_path(dir, key, p) || !make_temp(dir, key, "note", tmp))
    return;
  int fd = open(tmp, O_WRONLY | O_TRUNC | O_CLOEXEC);
  size_t n = strlen(text);
  bool ok = fd >= 0 && write(fd, text, n) == (ssize_t)n && write(fd, "\n", 1) == 1;
  if (fd >= 0) ok = close(fd) == 0 && ok;
  if (!ok || rename(tmp, p) != 0) unlink(tmp);
}

/* ------------------------------------------------------------------ sweep */

void kernel_cache_sweep(const char *dir) {
  DIR *d = dir ? opendir(dir) : NULL;
  if (!d) return;
  time_t now = time(NULL);
  pid_t self = getpid();
  struct dirent *e;
  while ((e = readdir(d))) {
    /* ".tmp-" KEY (32 hex digits) "-" PID "-" ... */
    const char *n = e->d_name;
    if (strncmp(n, ".tmp-", 5) || strlen(n) < 5 + 32 + 2 || n[5 + 32] != '-') continue;
    char *end = NULL;
    long pid = strtol(n + 5 + 32 + 1, &end, 10);
    char p[KERNEL_CACHE_PATH_MAX];
    struct stat st;
    if (snprintf(p, sizeof p, "%s/%s", dir, n) >= (int)sizeof p || lstat(p, &st) != 0 ||
        !S_ISREG(st.st_mode))
      continue;
    double age = difftime(now, st.st_mtime);
    bool dead = end && *end == '-' && pid > 0 && pid != (long)self && kill((pid_t)pid, 0) != 0 &&
                errno == ESRCH;
    if (age > KERNEL_CACHE_STALE_S || (dead && age > KERNEL_CACHE_DEAD_GRACE_S)) unlink(p);
  }
  closedir(d);
}
