/* jit_load.c — loading shared objects from bytes, and reading them back
 * (jit_load.h). */
#include "backend/cpu/jit_load.h"
#include <dlfcn.h>
#include <elf.h>
#include <errno.h>
#include <fcntl.h>
#include <link.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

enum { MAX_OBJECT_BYTES = 1 << 30 };

bool cpu_jit_looks_loadable(const void *bytes, size_t len) {
  const unsigned char *b = bytes;
  ElfW(Ehdr) h;
  if (!b || len < sizeof h || memcmp(b, ELFMAG, SELFMAG)) return false;
  memcpy(&h, b, sizeof h);
  unsigned char cls = sizeof(void *) == 8 ? ELFCLASS64 : ELFCLASS32;
  unsigned char data = __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__ ? ELFDATA2LSB : ELFDATA2MSB;
  return b[EI_CLASS] == cls && b[EI_DATA] == data && h.e_type == ET_DYN && h.e_phnum > 0 &&
         h.e_phoff >= sizeof h && h.e_phoff < len;
}

static bool write_all(int fd, const void *p, size_t n) {
  const char *s = p;
  while (n) {
    ssize_t w = write(fd, s, n);
    if (w < 0 && errno == EINTR) continue;
    if (w <= 0) return false;
    s += w, n -= (size_t)w;
  }
  return true;
}

/* dlopen of `path`, unless an object is loaded under that name now: then
 * NULL with *taken set (glibc would hand back that object). */
static void *dlopen_new(const char *path, bool *taken) {
  void *old = dlopen(path, RTLD_LAZY | RTLD_NOLOAD);
  *taken = old != NULL;
  if (old) {
    dlclose(old);
    return NULL;
  }
  return dlopen(path, RTLD_NOW | RTLD_LOCAL);
}

/* The name check and the load happen under one lock, so two threads never
 * pick the same name. */
static pthread_mutex_t load_mu = PTHREAD_MUTEX_INITIALIZER;

/* Through a memory file; *done false when that way is unavailable (no
 * memfd_create, no /proc) and the caller should use a temporary file. */
static void *load_memfd(const void *bytes, size_t len, bool *done) {
  *done = false;
#ifdef MFD_CLOEXEC
  int fd = memfd_create("hlo-object", MFD_CLOEXEC);
  if (fd < 0) return NULL;
  if (!write_all(fd, bytes, len)) {  /* out of memory */
    close(fd);
    *done = true;
    return NULL;
  }
  void *h = NULL;
  bool taken = true;
  pthread_mutex_lock(&load_mu);
  /* "/proc/self/fd/N", "/proc/self/fd//N", ...: one file, different names */
  for (int k = 1; k <= 8 && taken; k++) {
    char p[64];
    snprintf(p, sizeof p, "/proc/self/fd%.*s%d", k, "////////", fd);
    if (access(p, R_OK) != 0) break;  /* no /proc */
    h = dlopen_new(p, &taken);
    *done = !taken;
  }
  pthread_mutex_unlock(&load_mu);
  close(fd);
  return h;
#else
  (void)bytes, (void)len;
  return NULL;
#endif
}

static void *load_tempfile(const void *bytes, size_t len) {
  const char *t = getenv("TMPDIR");
  if (!t || !*t) t = "/tmp";
  for (int attempt = 0; attempt < 4; attempt++) {
    char p[4200];
    if (snprintf(p, sizeof p, "%s/hlo-jit-%ld-XXXXXX", t, (long)getpid()) >= (int)sizeof p)
      return NULL;
    int fd = mkostemp(p, O_CLOEXEC);
    if (fd < 0) return NULL;
    bool ok = write_all(fd, bytes, len);
    ok = close(fd) == 0 && ok;
    bool taken = false;
    void *h = NULL;
    if (ok) {
      pthread_mutex_lock(&load_mu);
      h = dlopen_new(p, &taken);
      pthread_mutex_unlock(&load_mu);
    }
    unlink(p);
    if (!taken) return h;
  }
  return NULL;
}

void *cpu_jit_load_bytes(const void *bytes, size_t len) {
  if (!cpu_jit_looks_loadable(bytes, len)) return NULL;
  bool done;
  void *h = load_memfd(bytes, len, &done);
  return done ? h : load_tempfile(bytes, len);
}

bool cpu_jit_read_file(const char *path, void **bytes, size_t *len) {
  *bytes = NULL;
  *len = 0;
  int fd = open(path, O_RDONLY | O_CLOEXEC | O_NONBLOCK);
  if (fd < 0) return false;
  struct stat st;
  unsigned char *buf = NULL;
  size_t n = 0;
  if (fstat(fd, &st) == 0 && S_ISREG(st.st_mode) && st.st_size > 0 &&
      st.st_size <= MAX_OBJECT_BYTES) {
    n = (size_t)st.st_size;
    buf = malloc(n);
    for (size_t got = 0; buf && got < n;) {
      ssize_t r = pread(fd, buf + got, n - got, (off_t)got);
      if (r < 0 && errno == EINTR) continue;
      if (r <= 0) {
        free(buf);
        buf = NULL;
        break;
      }
      got += (size_t)r;
    }
  }
  close(fd);
  if (!buf) return false;
  *bytes = buf;
  *len = n;
  return true;
}
