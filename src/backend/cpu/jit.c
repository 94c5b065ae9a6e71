/* jit.c — compiling generated C with the system C compiler into shared
 * objects and loading them with dlopen (see cpu.h; bench/COMPILE.md has
 * where a cold compile's time goes and why the choices below).
 *
 * A module comes as one or more translation units (cpu_backend.c splits its
 * kernels over up to HLO_NUM_THREADS units by their estimated compile
 * time). Each unit is first looked up in the kernel cache (kernel_cache.h:
 * keyed by the compiler's identity, the CPU's, the flags and the source);
 * the misses are compiled by concurrent compiler processes (at most
 * thread_pool_default_threads() at once), each to its own shared object,
 * and every object is loaded (several small objects load as fast as one: no
 * link step is needed to merge them). The compiler writes into a private
 * folder, "hlo-jit-PID-XXXXXX" in $TMPDIR (else /tmp), never into the cache
 * folder; the object's bytes are read back, the file removed, and the
 * object loaded from the bytes (jit_load.c: a memfd, so neither a noexec
 * $TMPDIR nor a noexec cache folder matters), then stored in the kernel
 * cache best effort (kernel_cache_store: a full, read-only or just-cleared
 * cache folder costs one warning per process, never the compile). A kernel
 * cache hit is loaded from its bytes the same way.
 *
 * Objects (issue 8): before all that, a unit whose object the caller gives
 * (backend_compile_options.objects, keyed by object_key: the compiler's
 * identity, the CPU, the flags and the source) is loaded from those bytes
 * (no compiler process, no kernel cache); an object that does not load or
 * lacks a kernel is ignored. Every loaded unit keeps its object's bytes
 * (the given ones copied, the kernel cache entry's, or the compiler's
 * output), for cpu_jit_objects and the compilation cache.
 *
 * The compiler ($HLO_CC or the caller's `cc`, split into words at spaces, so
 * "gcc -m64" works) is started with posix_spawnp (no shell): the source on
 * its standard input (`-x c -`) and its messages into a file, both
 * unlinked temporaries, so an interrupted run leaves no source or log
 * behind; the only named temporaries are the private folders
 * "hlo-jit-PID-*" in $TMPDIR and the stores in progress ".tmp-KEY-PID-*" in
 * the cache folder, and the first compile of a process sweeps those of dead
 * processes (and any older than an hour).
 *
 * Flags: -O2 with gcc's -O3 vectorizer cost model (-fvect-cost-model=
 * dynamic; gcc 12's -O2 default, "very-cheap", left even a 16-wide bias add
 * scalar; clang ignores the flag); -fno-math-errno lets sqrtf etc. inline
 * (results unchanged); -fno-trapping-math lets gcc if-convert a loop whose
 * body has a select around arithmetic (hlo_expf's clamp, after PRE moved
 * x*log2e into one arm: without it SiLU, GELU, logistic and softmax exp
 * loops stayed scalar on AVX2, "control flow in loop"; with AVX-512's masks
 * they vectorised anyway): kernels timed alone on an AVX2 EPYC, SiLU 1552 ->
 * 220 us, GELU 5406 -> 1067 us (bench/COMPILE.md); no value changes (FP
 * exception flags are never read; reassociation stays off);
 * -ffp-contract=off keeps a*b+c two roundings (no FMA
 * contraction), as the spec and the interpreter compute it; -pipe (no
 * temporary assembly file) and no -g. Link: -nostdlib -lgcc — no start
 * files and no libc/libm to search (half of the link's time): the kernels'
 * calls into libc and libm (memcpy, fmod, ...) bind to the process's own
 * copies when the object is loaded (libm is made global once first), and
 * libgcc's helpers (f16 conversions without F16C) are linked in statically.
 * Flags that need a runtime library (e.g. --coverage in HLO_CC_FLAGS) must
 * name it there too. */
#include <dirent.h>
#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <signal.h>
#include <spawn.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/utsname.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>
#include "backend/cpu/cpu.h"
#include "backend/cpu/jit_load.h"
#include "backend/cpu/kernel_cache.h"
#include "support/thread_pool.h"

extern char **environ;

/* The compiler flags, but the output and input names. */
static const char *const cc_flags[] = {
    "-O2", "-fvect-cost-model=dynamic", "-march=native", "-fPIC", "-shared", "-pipe",
    "-fno-math-errno", "-fno-trapping-math", "-ffp-contract=off", "-std=gnu11",
};
/* After the input: what the object is linked with (see the top). */
static const char *const link_flags[] = {"-nostdlib", "-lgcc"};
enum {
  NUM_FLAGS = sizeof cc_flags / sizeof *cc_flags,
  NUM_LINK = sizeof link_flags / sizeof *link_flags,
  MAX_EXTRA = 32,
  MAX_CC_WORDS = 16,
};

/* The flags of one compile: cc_flags, then $HLO_CC_FLAGS split at spaces
 * (appended, so e.g. HLO_CC_FLAGS=-O3 wins over -O2; part of the cache
 * key). */
typedef struct flag_list {
  const char *v[NUM_FLAGS + MAX_EXTRA];
  int n;
  char buf[1024];
} flag_list;

static void get_flags(flag_list *f) {
  f->n = 0;
  for (int i = 0; i < NUM_FLAGS; i++) f->v[f->n++] = cc_flags[i];
  const char *e = getenv("HLO_CC_FLAGS");
  snprintf(f->buf, sizeof f->buf, "%s", e ? e : "");
  for (char *save = NULL, *t = strtok_r(f->buf, " \t", &save); t && f->n < NUM_FLAGS + MAX_EXTRA;
       t = strtok_r(NULL, " \t", &save))
    f->v[f->n++] = t;
}

/* The compiler command: its words (HLO_CC="gcc -m64" is gcc with -m64). */
typedef struct cc_cmd {
  const char *w[MAX_CC_WORDS];
  int n;
  char buf[1024];
  char text[1024];  /* the command as given, for messages and the key */
} cc_cmd;

static hlo_status split_cc(const char *cc, cc_cmd *c) {
  c->n = 0;
  if (snprintf(c->buf, sizeof c->buf, "%s", cc) >= (int)sizeof c->buf)
    return status_new(HLO_INVALID_ARGUMENT, "the C compiler command is too long: %.60s...", cc);
  snprintf(c->text, sizeof c->text, "%s", cc);
  for (char *save = NULL, *t = strtok_r(c->buf, " \t\n", &save); t;
       t = strtok_r(NULL, " \t\n", &save)) {
    if (c->n == MAX_CC_WORDS)
      return status_new(HLO_INVALID_ARGUMENT, "the C compiler command `%s` has over %d words",
                        cc, MAX_CC_WORDS);
    c->w[c->n++] = t;
  }
  if (!c->n) return status_new(HLO_INVALID_ARGUMENT, "the C compiler command is empty (HLO_CC)");
  return NULL;
}

struct cpu_jit {
  uint32_t n;
  void **handles;
  backend_object *objects;  /* n; bytes malloc'd */
};

static const char *tmp_dir(void) {
  const char *t = getenv("TMPDIR");
  return t && *t ? t : "/tmp";
}

/* An unlinked temporary file open for reading and writing (so nothing is
 * left behind, whatever happens to the process); -1 on failure. */
static int anon_file(void) {
  char p[4200];
  snprintf(p, sizeof p, "%s/hlo-jit-%ld-XXXXXX", tmp_dir(), (long)getpid());
  int fd = mkostemp(p, O_CLOEXEC); /* a child gets it only as its stdin/stdout (dup2) */
  if (fd >= 0) unlink(p);
  return fd;
}

static bool write_all(int fd, const char *s, size_t n) {
  while (n) {
    ssize_t w = write(fd, s, n);
    if (w < 0 && errno == EINTR) continue;
    if (w <= 0) return false;
    s += w, n -= (size_t)w;
  }
  return true;
}

/* The first `max` bytes of fd from its start (malloc'd, NUL-terminated), or
 * NULL. */
static char *read_head_fd(int fd, size_t max) {
  char *buf = malloc(max + 1);
  if (!buf) return NULL;
  size_t n = 0;
  while (n < max) {
    ssize_t r = pread(fd, buf + n, max - n, (off_t)n);
    if (r < 0 && errno == EINTR) continue;
    if (r <= 0) break;
    n += (size_t)r;
  }
  buf[n] = 0;
  return buf;
}

static hlo_status write_file(const char *path, const char *text) {
  FILE *f = fopen(path, "w");
  if (!f) return status_new(HLO_INTERNAL, "cannot write %s: %s", path, strerror(errno));
  size_t n = strlen(text);
  bool ok = fwrite(text, 1, n, f) == n;
  ok = fclose(f) == 0 && ok;
  return ok ? NULL : status_new(HLO_INTERNAL, "cannot write %s", path);
}

/* Starts argv with stdin from `in` (-1: /dev/null) and stdout and stderr to
 * `out` (-1: /dev/null). Errors: HLO_UNAVAILABLE when it cannot be
 * started. */
static hlo_status spawn(char *const *argv, int in, int out, pid_t *pid) {
  posix_spawn_file_actions_t fa;
  if (posix_spawn_file_actions_init(&fa))
    return status_new(HLO_RESOURCE_EXHAUSTED, "out of memory");
  if (in >= 0) posix_spawn_file_actions_adddup2(&fa, in, 0);
  else posix_spawn_file_actions_addopen(&fa, 0, "/dev/null", O_RDONLY, 0);
  if (out >= 0) posix_spawn_file_actions_adddup2(&fa, out, 1);
  else posix_spawn_file_actions_addopen(&fa, 1, "/dev/null", O_WRONLY, 0);
  posix_spawn_file_actions_adddup2(&fa, 1, 2);
  int rc = posix_spawnp(pid, argv[0], &fa, NULL, argv, environ);
  posix_spawn_file_actions_destroy(&fa);
  if (rc)
    return status_new(HLO_UNAVAILABLE,
                      "no C compiler: cannot run `%s` (%s); install one (gcc or clang) or set "
                      "HLO_CC", argv[0], strerror(rc));
  return NULL;
}

/* Waits for `pid`; its exit status (128 + signal when killed). */
static int wait_exit(pid_t pid) {
  int ws;
  while (waitpid(pid, &ws, 0) < 0)
    if (errno != EINTR) return 255;
  return WIFEXITED(ws) ? WEXITSTATUS(ws) : 128 + (WIFSIGNALED(ws) ? WTERMSIG(ws) : 0);
}

/* ------------------------------------------------------------ identity */

/* The host CPU, for the cache key (-march=native code runs only where the
 * same features exist): /proc/cpuinfo's first processor's vendor, family,
 * model and flags lines (x86; arm64: its CPU part and Features lines), else
 * uname's machine. */
static char cpu_identity[8192];
static pthread_once_t cpu_once = PTHREAD_ONCE_INIT;  /* read_cpu_identity, once */
static void read_cpu_identity(void) {
  FILE *f = fopen("/proc/cpuinfo", "r");
  size_t len = 0;
  char line[8192];
  while (f && fgets(line, sizeof line, f) && line[0] != '\n') {
    if (strncmp(line, "vendor_id", 9) && strncmp(line, "cpu family", 10) &&
        strncmp(line, "model", 5) && strncmp(line, "flags", 5) &&
        strncmp(line, "Features", 8) && strncmp(line, "CPU ", 4)) /* the last two: arm64 */
      continue;
    size_t n = strlen(line);
    if (len + n >= sizeof cpu_identity) break;
    memcpy(cpu_identity + len, line, n + 1);
    len += n;
  }
  if (f) fclose(f);
  struct utsname u;
  if (len == 0 && uname(&u) == 0) snprintf(cpu_identity, sizeof cpu_identity, "%s", u.machine);
}

/* The compiler's identity: the command as given, its first word's resolved
 * path and the first line of `CC --version`. The version line is read once
 * per compiler per process and kept in the cache folder as a note keyed by
 * the resolved file's inode, size and modification time (a new compiler
 * binary is a new note), so a warm run starts no process at all; a note is
 * trusted for CPU_JIT_CC_NOTE_S, then read again (a wrapper script whose
 * compiler behind it changed keeps its own stat). */
#define CPU_JIT_CC_NOTE_S (24 * 3600.0)
enum { MAX_COMPILERS = 4, CC_ID_MAX = 4096 + 1024 + 1024 + 8 };
static struct {
  char name[1024];
  char id[CC_ID_MAX];
} compilers[MAX_COMPILERS];
static int num_compilers;
static pthread_mutex_t compilers_mu = PTHREAD_MUTEX_INITIALIZER;

/* Resolves `cc` through PATH (as posix_spawnp does) to a real path. */
static void resolve_path(const char *cc, char out[4096]) {
  out[0] = 0;
  if (strchr(cc, '/')) {
    if (!realpath(cc, out)) snprintf(out, 4096, "%s", cc);
    return;
  }
  const char *path = getenv("PATH");
  for (const char *p = path ? path : "/usr/bin:/bin"; *p;) {
    const char *e = strchr(p, ':');
    size_t n = e ? (size_t)(e - p) : strlen(p);
    char cand[4096];
    if (snprintf(cand, sizeof cand, "%.*s/%s", (int)n, n ? p : ".", cc) < (int)sizeof cand &&
        access(cand, X_OK) == 0 && realpath(cand, out))
      return;
    p += n + (e ? 1 : 0);
  }
  snprintf(out, 4096, "%s", cc);
}

/* Whether `file` (a command's first word) names an executable file, looked
 * up through PATH as posix_spawnp looks it up (a name with a '/' is taken
 * as it is); *err gets the errno of the failure. */
static bool can_exec(const char *file, int *err) {
  *err = ENOENT;
  if (strchr(file, '/')) {
    struct stat sb;
    if (access(file, X_OK) != 0) {
      *err = errno;
      return false;
    }
    if (stat(file, &sb) == 0 && S_ISDIR(sb.st_mode)) {
      *err = EACCES; /* what posix_spawn says of a directory */
      return false;
    }
    return true;
  }
  const char *path = getenv("PATH");
  for (const char *p = path ? path : "/usr/bin:/bin"; *p;) {
    const char *e = strchr(p, ':');
    size_t n = e ? (size_t)(e - p) : strlen(p);
    char cand[4096];
    struct stat sb;
    if (snprintf(cand, sizeof cand, "%.*s/%s", (int)n, n ? p : ".", file) < (int)sizeof cand &&
        access(cand, X_OK) == 0 && stat(cand, &sb) == 0 && !S_ISDIR(sb.st_mode))
      return true;
    p += n + (e ? 1 : 0);
  }
  return false;
}

hlo_status cpu_jit_check_compiler(const char *cc_text) {
  if (!cc_text || !*cc_text) cc_text = getenv("HLO_CC");
  if (!cc_text || !*cc_text) cc_text = "cc";
  cc_cmd cc;
  HLO_TRY(split_cc(cc_text, &cc));
  int err;
  if (can_exec(cc.w[0], &err)) return NULL;
  /* spawn()'s words: the same error a compile would give */
  return status_new(HLO_UNAVAILABLE,
                    "no C compiler: cannot run `%s` (%s); install one (gcc or clang) or set "
                    "HLO_CC", cc.w[0], strerror(err));
}

/* The first line of `cc --version` (empty when it cannot be run). */
static void run_version(const cc_cmd *cc, char *out, size_t cap) {
  out[0] = 0;
  int fd = anon_file();
  if (fd < 0) return;
  const char *argv[MAX_CC_WORDS + 2];
  int a = 0;
  for (int i = 0; i < cc->n; i++) argv[a++] = cc->w[i];
  argv[a++] = "--version";
  argv[a] = NULL;
  pid_t pid;
  hlo_status st = spawn((char *const *)argv, -1, fd, &pid);
  if (!st && wait_exit(pid) == 0) {
    char *head = read_head_fd(fd, cap - 1);
    if (head) {
      head[strcspn(head, "\n")] = 0;
      snprintf(out, cap, "%s", head);
      free(head);
    }
  }
  hlo_status_free(st);
  close(fd);
}

static void compiler_identity(const cc_cmd *cc, const char *dir, char out[CC_ID_MAX]) {
  pthread_mutex_lock(&compilers_mu);
  for (int i = 0; i < num_compilers; i++)
    if (!strcmp(compilers[i].name, cc->text)) {
      memcpy(out, compilers[i].id, CC_ID_MAX);
      pthread_mutex_unlock(&compilers_mu);
      return;
    }
  pthread_mutex_unlock(&compilers_mu);
  char real[4096], version[1024] = "", stamp[128] = "", note[KERNEL_CACHE_KEY_HEX];
  resolve_path(cc->w[0], real);
  struct stat sb;
  bool noted = false;
  if (stat(real, &sb) == 0) {
    snprintf(stamp, sizeof stamp, "%llu %llu %lld %lld.%09ld", (unsigned long long)sb.st_dev,
             (unsigned long long)sb.st_ino, (long long)sb.st_size, (long long)sb.st_mtim.tv_sec,
             (long)sb.st_mtim.tv_nsec);
    const char *parts[] = {"hlo compiler version note 1", real, stamp, cc->text};
    kernel_cache_key(parts, 4, note);
    noted = kernel_cache_read_note(dir, note, CPU_JIT_CC_NOTE_S, version, sizeof version);
  }
  if (!noted) {
    run_version(cc, version, sizeof version);
    if (stamp[0] && version[0]) kernel_cache_write_note(dir, note, version);
  }
  snprintf(out, CC_ID_MAX, "%s\n%s\n%s", cc->text, real, version);
  pthread_mutex_lock(&compilers_mu);
  if (num_compilers < MAX_COMPILERS) {
    snprintf(compilers[num_compilers].name, sizeof compilers[0].name, "%s", cc->text);
    memcpy(compilers[num_compilers].id, out, CC_ID_MAX);
    num_compilers++;
  }
  pthread_mutex_unlock(&compilers_mu);
}

/* ------------------------------------------------------------ sweeping */

/* Whether process `pid` is gone (on this machine). */
static bool pid_dead(long pid) {
  return pid > 0 && pid != (long)getpid() && kill((pid_t)pid, 0) != 0 && errno == ESRCH;
}

/* Removes `path`: a file, or a folder with files only (the old layout's
 * work folders). */
static void remove_path(const char *path) {
  if (unlink(path) == 0 || errno != EISDIR) return;
  DIR *d = opendir(path);
  struct dirent *e;
  while (d && (e = readdir(d))) {
    if (!strcmp(e->d_name, ".") || !strcmp(e->d_name, "..")) continue;
    char p[4200];
    if (snprintf(p, sizeof p, "%s/%s", path, e->d_name) < (int)sizeof p) unlink(p);
  }
  if (d) closedir(d);
  rmdir(path);
}

void cpu_jit_sweep_temporaries(const char *dir) {
  DIR *d = opendir(dir);
  if (!d) return;
  time_t now = time(NULL);
  struct dirent *e;
  static const char *const prefixes[] = {"hlo-jit-", "hlo-ccver-"};
  while ((e = readdir(d))) {
    const char *n = e->d_name;
    size_t pl = 0;
    for (int i = 0; i < 2 && !pl; i++)
      if (!strncmp(n, prefixes[i], strlen(prefixes[i]))) pl = strlen(prefixes[i]);
    if (!pl) continue;
    char p[4200];
    struct stat sb;
    if (snprintf(p, sizeof p, "%s/%s", dir, n) >= (int)sizeof p || lstat(p, &sb) != 0) continue;
    if (sb.st_uid != geteuid()) continue;
    /* "PREFIX-PID-XXXXXX" (this layout) or "PREFIX-XXXXXX" (the old one) */
    char *end = NULL;
    long pid = strtol(n + pl, &end, 10);
    bool has_pid = end && end != n + pl && *end == '-';
    double age = difftime(now, sb.st_mtime);
    if (age > CPU_JIT_STALE_S || (has_pid && age > CPU_JIT_DEAD_GRACE_S && pid_dead(pid)))
      remove_path(p);
  }
  closedir(d);
}

/* The sweep of this process: once, at its first compile. */
static void sweep_once(const char *cache_dir) {
  static atomic_flag done = ATOMIC_FLAG_INIT;
  if (atomic_flag_test_and_set(&done)) return;
  cpu_jit_sweep_temporaries(tmp_dir());
  if (cache_dir) kernel_cache_sweep(cache_dir);
}

/* libm in the global scope, for the kernels' calls (see the top). */
static void load_libm(void) {
  if (!dlopen("libm.so.6", RTLD_LAZY | RTLD_GLOBAL)) dlopen("libm.so", RTLD_LAZY | RTLD_GLOBAL);
}

/* --------------------------------------------------------------- compile */

typedef struct unit_state {
  char okey[KERNEL_CACHE_KEY_HEX];  /* the object key (see object_key) */
  char key[KERNEL_CACHE_KEY_HEX];   /* the kernel cache's key */
  char out[KERNEL_CACHE_PATH_MAX];  /* the compiler's output, in the private folder */
  int src_fd, log_fd;               /* unlinked temporaries: the source, the messages */
  bool hit, started;
  bool from_object;                 /* loaded from a given object (hit is set too) */
  pid_t pid;
  int exit_code;
  void *handle;
  void *bytes;                      /* the loaded object's bytes (malloc'd) */
  size_t len;
} unit_state;

/* Looks up u's kernels in handle h; the index of the first missing one, or
 * u->n when all are there. */
static uint32_t find_symbols(void *h, const cpu_jit_unit *u) {
  for (uint32_t i = 0; i < u->n; i++) {
    void *sym = dlsym(h, u->names[i]);
    if (!sym) return i;
    memcpy(&u->fns[i], &sym, sizeof sym); /* object -> function pointer, as POSIX allows */
  }
  return u->n;
}

static hlo_status dump_units(const cpu_jit_unit *units, uint32_t nunits, const char *dump_dir) {
  for (uint32_t i = 0; i < nunits; i++) {
    if (!units[i].n) continue;
    char p[4096];
    if (snprintf(p, sizeof p, "%s/%s.c", dump_dir, units[i].names[0]) >= (int)sizeof p)
      return status_new(HLO_INVALID_ARGUMENT, "dump folder name too long");
    HLO_TRY(write_file(p, units[i].source));
  }
  return NULL;
}

/* The kernel of unit u whose text holds line `line` of its source (by
 * u->lines), or u->n when unknown. */
static uint32_t kernel_at_line(const cpu_jit_unit *u, long line) {
  if (!u->lines || line <= 0) return u->n;
  uint32_t k = u->n;
  for (uint32_t i = 0; i < u->n; i++)
    if (u->lines[i] <= (uint64_t)line) k = i;
  return k;
}

/* An error about unit u's kernel k (u->n: the unit as a whole), located
 * at that kernel's op when the caller gave locations: "MSG kernel k3" or
 * "MSG one of kernels k0 ... k3", then `detail`. */
static hlo_status unit_error(hlo_status_code code, const cpu_jit_unit *u, uint32_t k,
                             const char *msg, const char *detail) {
  const hlo_loc *loc = NULL;
  char what[512];
  if (k < u->n) {
    loc = u->locs ? u->locs[k] : NULL;
    snprintf(what, sizeof what, "kernel %s%s", u->names[k],
             loc && loc->line ? " (the fusion here)" : "");
  } else if (u->n == 1) {
    loc = u->locs ? u->locs[0] : NULL;
    snprintf(what, sizeof what, "kernel %s%s", u->names[0],
             loc && loc->line ? " (the fusion here)" : "");
  } else {
    snprintf(what, sizeof what, "one of the %u kernels %s ... %s", u->n, u->n ? u->names[0] : "",
             u->n ? u->names[u->n - 1] : "");
  }
  return status_at(code, loc, "%s %s%s%s", msg, what, detail && *detail ? ":\n" : "",
                   detail ? detail : "");
}

/* Starts the compiler on unit i. */
static hlo_status start_unit(const cc_cmd *cc, const flag_list *fl, unit_state *s,
                             const char *source, bool default_link, const char *work,
                             uint32_t index) {
  if (snprintf(s->out, sizeof s->out, "%s/u%u%s.so", work, index, default_link ? "-l" : "") >=
      (int)sizeof s->out) {
    s->out[0] = 0;
    return status_new(HLO_INTERNAL, "the temporary folder name %s is too long", work);
  }
  if (s->src_fd >= 0) close(s->src_fd);
  if (s->log_fd >= 0) close(s->log_fd);
  s->src_fd = anon_file();
  s->log_fd = anon_file();
  if (s->src_fd < 0 || s->log_fd < 0 || !write_all(s->src_fd, source, strlen(source)) ||
      lseek(s->src_fd, 0, SEEK_SET) != 0)
    return status_new(HLO_INTERNAL, "cannot write a temporary file in %s: %s", tmp_dir(),
                      strerror(errno));
  const char *argv[MAX_CC_WORDS + NUM_FLAGS + MAX_EXTRA + NUM_LINK + 8];
  int a = 0;
  for (int i = 0; i < cc->n; i++) argv[a++] = cc->w[i];
  for (int f = 0; f < fl->n; f++) argv[a++] = fl->v[f];
  argv[a++] = "-o";
  argv[a++] = s->out;
  argv[a++] = "-x";
  argv[a++] = "c";
  argv[a++] = "-";
  if (default_link) argv[a++] = "-lm";
  else
    for (int f = 0; f < NUM_LINK; f++) argv[a++] = link_flags[f];
  argv[a] = NULL;
  HLO_TRY(spawn((char *const *)argv, s->src_fd, s->log_fd, &s->pid));
  s->started = true;
  return NULL;
}

/* Waits for unit s; an error quoting the compiler's messages, located at
 * the kernel they point into, when it failed. */
static hlo_status finish_unit(const cc_cmd *cc, const cpu_jit_unit *u, unit_state *s) {
  s->started = false;
  s->exit_code = wait_exit(s->pid);
  if (s->exit_code == 0) return NULL;
  if (s->exit_code == 127)
    return status_new(HLO_UNAVAILABLE, "no C compiler: `%s` could not be run; set HLO_CC",
                      cc->text);
  char *msg = read_head_fd(s->log_fd, 2048);
  /* the first "<stdin>:LINE:" names the kernel */
  long line = 0;
  for (const char *at = msg ? strstr(msg, "<stdin>:") : NULL; at && line <= 0;
       at = strstr(at + 8, "<stdin>:"))
    line = strtol(at + 8, NULL, 10);
  char head[1200];
  snprintf(head, sizeof head, "the C compiler `%.1100s` failed (exit %d) on", cc->text,
           s->exit_code);
  hlo_status st = unit_error(HLO_INTERNAL, u, kernel_at_line(u, line), head,
                             msg && *msg ? msg : "(no output)");
  free(msg);
  return st;
}

/* Frees the state: unloads what was loaded when `unload`, removes the
 * temporary files and the private folder `work` (when made). */
static void cleanup(unit_state *us, uint32_t nunits, bool unload, const char *work) {
  for (uint32_t i = 0; i < nunits; i++) {
    unit_state *s = &us[i];
    if (s->started) wait_exit(s->pid);
    if (unload && s->handle) dlclose(s->handle);
    if (s->src_fd >= 0) close(s->src_fd);
    if (s->log_fd >= 0) close(s->log_fd);
    if (s->out[0]) unlink(s->out);
    free(s->bytes);
  }
  free(us);
  if (work && work[0]) remove_path(work);
}

static double now_ms(void) {
  struct timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return (double)t.tv_sec * 1e3 + (double)t.tv_nsec / 1e6;
}

/* The object key of a unit (backend_object.key): a hash of everything that
 * decides what its code computes and where it runs — the compiler's
 * identity (compiler_identity: the command's words, its resolved path and
 * version line), the host CPU's identity, the compile and link flags
 * ($HLO_CC_FLAGS included) and the source. An object from the compilation
 * cache is thus loaded only where the same compiler, invoked the same way,
 * would have made it (HLO_CC="gcc -ffast-math" and plain gcc never share
 * an object). The kernel cache's key is derived from it (kernel_key). */
static void object_key(const char *ccid, const flag_list *fl, const char *source,
                       char out[KERNEL_CACHE_KEY_HEX]) {
  const char *parts[NUM_FLAGS + MAX_EXTRA + NUM_LINK + 4];
  size_t np = 0;
  parts[np++] = "hlo cpu object 2";
  parts[np++] = ccid;
  parts[np++] = cpu_identity;
  for (int f = 0; f < fl->n; f++) parts[np++] = fl->v[f];
  for (int f = 0; f < NUM_LINK; f++) parts[np++] = link_flags[f];
  parts[np++] = source;
  kernel_cache_key(parts, np, out);
}

static void kernel_key(const char *ccid, const char *okey, char out[KERNEL_CACHE_KEY_HEX]) {
  const char *parts[] = {ccid, okey};
  kernel_cache_key(parts, 2, out);
}

/* Loads unit u from the first of o's objects whose key is s->okey and that
 * loads with all of u's kernels (their functions set); false (nothing
 * loaded) when none does. The bytes are copied into s. */
static bool load_given(const backend_compile_options *o, const cpu_jit_unit *u, unit_state *s) {
  for (uint32_t i = 0; i < o->num_objects; i++) {
    const backend_object *ob = &o->objects[i];
    if (memcmp(ob->key, s->okey, KERNEL_CACHE_KEY_HEX - 1) || ob->key[KERNEL_CACHE_KEY_HEX - 1])
      continue;
    void *h = cpu_jit_load_bytes(ob->bytes, ob->len);
    void *copy = h && find_symbols(h, u) == u->n ? malloc(ob->len) : NULL;
    if (copy) {
      memcpy(copy, ob->bytes, ob->len);
      s->handle = h;
      s->bytes = copy;
      s->len = ob->len;
      return true;
    }
    if (h) dlclose(h);
  }
  return false;
}

/* Makes the private folder of a compile's objects, "hlo-jit-PID-XXXXXX" in
 * $TMPDIR (else /tmp; the sweep reads the pid back), into work. */
static hlo_status make_work_dir(char work[KERNEL_CACHE_PATH_MAX]) {
  const char *dirs[2] = {tmp_dir(), "/tmp"};
  int err = 0;
  for (int i = 0; i < 2; i++) {
    if (i && !strcmp(dirs[0], dirs[1])) break;
    if (snprintf(work, KERNEL_CACHE_PATH_MAX, "%s/hlo-jit-%ld-XXXXXX", dirs[i],
                 (long)getpid()) >= KERNEL_CACHE_PATH_MAX) {
      err = ENAMETOOLONG;
      continue;
    }
    if (mkdtemp(work)) return NULL;
    err = errno;
  }
  hlo_status st = status_new(HLO_INTERNAL, "cannot make a temporary folder in %s: %s", tmp_dir(),
                             strerror(err));
  work[0] = 0;
  return st;
}

/* Stores a compiled unit in the kernel cache, best effort: a failure (a
 * full disk, a folder made read-only or removed meanwhile) is one warning
 * per process, never an error. */
static void store_unit(const char *dir, const unit_state *s) {
  int err = 0;
  if (kernel_cache_store(dir, s->key, s->bytes, s->len, &err)) return;
  static atomic_flag warned = ATOMIC_FLAG_INIT;
  if (!atomic_flag_test_and_set(&warned))
    fprintf(stderr, "hlo: warning: the kernel cache: cannot store compiled code in %s: %s (it is "
            "used, not cached)\n", dir, strerror(err ? err : EIO));
}

hlo_status cpu_jit_compile_units(const cpu_jit_unit *units, uint32_t nunits, const char *cc_text,
                                 const char *dump_dir, cpu_jit **out) {
  backend_compile_options o = {.cc = cc_text, .dump_dir = dump_dir};
  return cpu_jit_compile_with(units, nunits, &o, out);
}

/* The compiler command of a compile: o->cc, else $HLO_CC, else "cc". */
static const char *cc_text_of(const backend_compile_options *o) {
  const char *t = o ? o->cc : NULL;
  if (!t || !*t) t = getenv("HLO_CC");
  if (!t || !*t) t = "cc";
  return t;
}

hlo_status cpu_jit_compile_with(const cpu_jit_unit *units, uint32_t nunits,
                                const backend_compile_options *opts, cpu_jit **out) {
  double t0 = now_ms();
  static const backend_compile_options no_options;
  if (!opts) opts = &no_options;
  *out = NULL;
  cc_cmd cc;
  HLO_TRY(split_cc(cc_text_of(opts), &cc));
  if (opts->dump_dir) HLO_TRY(dump_units(units, nunits, opts->dump_dir));
  unit_state *us = calloc(nunits ? nunits : 1, sizeof *us);
  cpu_jit *j = calloc(1, sizeof *j);
  void **handles = calloc(nunits ? nunits : 1, sizeof *handles);
  backend_object *objects = calloc(nunits ? nunits : 1, sizeof *objects);
  if (!us || !j || !handles || !objects) {
    free(us), free(j), free(handles), free(objects);
    return status_new(HLO_RESOURCE_EXHAUSTED, "out of memory");
  }
  for (uint32_t i = 0; i < nunits; i++) us[i].src_fd = us[i].log_fd = -1;
  static pthread_once_t libm_once = PTHREAD_ONCE_INIT;
  pthread_once(&libm_once, load_libm);
  pthread_once(&cpu_once, read_cpu_identity);

  /* 1. the given objects (no compiler process on a warm run: the compiler's
     identity comes from its note, see compiler_identity) */
  char dir[KERNEL_CACHE_PATH_MAX];
  bool cache = kernel_cache_dir(opts->cache_root, dir);
  char ccid[CC_ID_MAX];
  compiler_identity(&cc, cache ? dir : NULL, ccid);
  flag_list fl;
  get_flags(&fl);
  uint32_t from_objects = 0, from_cache = 0;
  for (uint32_t i = 0; i < nunits; i++) {
    object_key(ccid, &fl, units[i].source, us[i].okey);
    if (opts->objects && opts->num_objects && load_given(opts, &units[i], &us[i]))
      us[i].from_object = us[i].hit = true, from_objects++;
  }

  /* 2. the kernel cache, for the rest: its bytes loaded from memory (a
     cache folder on a noexec mount still hits) */
  uint32_t misses = 0;
  for (uint32_t i = 0; i < nunits; i++) {
    unit_state *s = &us[i];
    if (s->from_object) continue;
    if (cache) {
      char path[KERNEL_CACHE_PATH_MAX];
      kernel_key(ccid, s->okey, s->key);
      if (kernel_cache_load(dir, s->key, path, &s->bytes, &s->len)) {
        s->handle = cpu_jit_load_bytes(s->bytes, s->len);
        s->hit = s->handle && find_symbols(s->handle, &units[i]) == units[i].n;
        if (!s->hit) {  /* a bad entry: recompiled and replaced */
          if (s->handle) dlclose(s->handle);
          s->handle = NULL;
          free(s->bytes);
          s->bytes = NULL;
          s->len = 0;
          kernel_cache_remove(dir, s->key);
        }
      }
    }
    from_cache += s->hit;
    misses += !s->hit;
  }

  /* 3. the misses, at most P compilers at once, each writing its object into
     a private folder in $TMPDIR (never into the cache folder: a `hlo cache
     clear`, a full disk or a noexec mount there cannot fail a compile); the
     sweep of stale temporaries runs while the first ones compile */
  hlo_status st = NULL;
  char work[KERNEL_CACHE_PATH_MAX] = "";
  if (misses) st = make_work_dir(work);
  uint32_t parallel = (uint32_t)thread_pool_default_threads(), running = 0, next_wait = 0;
  bool swept = false;
  for (uint32_t i = 0; i < nunits && !st; i++) {
    if (us[i].hit) continue;
    while (running >= parallel && !st) {  /* wait for the oldest one still running */
      if (!swept) sweep_once(cache ? dir : NULL), swept = true;
      while (!us[next_wait].started) next_wait++;
      st = finish_unit(&cc, &units[next_wait], &us[next_wait]);
      running--;
    }
    if (!st) st = start_unit(&cc, &fl, &us[i], units[i].source, false, work, i);
    running += us[i].started;
  }
  if (misses && !swept) sweep_once(cache ? dir : NULL);
  for (uint32_t i = 0; i < nunits; i++) {
    if (!us[i].started) continue;
    hlo_status s2 = finish_unit(&cc, &units[i], &us[i]);
    if (st) hlo_status_free(s2);
    else st = s2;
  }

  /* 4. load what was compiled from its bytes (a memory file: $TMPDIR may be
     noexec), then store it in the kernel cache (best effort); an object
     that does not load is compiled once more with the compiler's default
     link (a runtime library the flags need, e.g. -fsanitize=undefined added
     by a wrapper), and that one is kept */
  for (uint32_t i = 0; i < nunits && !st; i++) {
    unit_state *s = &us[i];
    if (s->hit) continue;
    char why[1024] = "";
    for (int attempt = 0; attempt < 2 && !s->handle && !st; attempt++) {
      if (attempt) {
        st = start_unit(&cc, &fl, s, units[i].source, true, work, i);
        if (!st) st = finish_unit(&cc, &units[i], s);
        if (st) break;
      }
      free(s->bytes);
      s->bytes = NULL;
      if (!cpu_jit_read_file(s->out, &s->bytes, &s->len)) {
        st = unit_error(HLO_INTERNAL, &units[i], units[i].n, "cannot read the compiled code of",
                        s->out);
        break;
      }
      unlink(s->out);
      s->out[0] = 0;
      s->handle = cpu_jit_load_bytes(s->bytes, s->len);
      if (!s->handle) {
        const char *e = dlerror();
        snprintf(why, sizeof why, "%s", e ? e : "the compiler's output is not a loadable object");
      }
    }
    if (st) break;
    uint32_t missing = s->handle ? find_symbols(s->handle, &units[i]) : 0;
    if (!s->handle) {
      st = unit_error(HLO_INTERNAL, &units[i], units[i].n, "cannot load the compiled code of",
                      why);
    } else if (missing < units[i].n) {
      st = unit_error(HLO_INTERNAL, &units[i], missing, "the compiled code lacks", NULL);
    } else if (cache) {
      store_unit(dir, s);
    }
  }
  for (uint32_t i = 0; i < nunits && !st; i++) {
    handles[i] = us[i].handle;
    memcpy(objects[i].key, us[i].okey, sizeof objects[i].key);
    objects[i].bytes = us[i].bytes;
    objects[i].len = us[i].len;
    us[i].bytes = NULL;
  }
  cleanup(us, nunits, st != NULL, work);
  if (st) {
    free(j);
    free(handles);
    free(objects);
    return st;
  }
  j->n = nunits;
  j->handles = handles;
  j->objects = objects;
  if (opts->stats) {
    *opts->stats = (backend_compile_stats){
        .units = nunits, .from_objects = from_objects, .from_kernel_cache = from_cache,
        .compiled = nunits - from_objects - from_cache, .cc_ms = now_ms() - t0};
  }
  *out = j;
  return NULL;
}

/* The "model name" value of cpu_identity (x86), else its first line. */
static void cpu_model_name(char *out, size_t cap) {
  const char *m = strstr(cpu_identity, "model name");
  const char *colon = m ? strchr(m, ':') : NULL;
  const char *v = colon ? colon + 1 : cpu_identity;
  while (*v == ' ' || *v == '\t') v++;
  size_t n = strcspn(v, "\n");
  snprintf(out, cap, "%.*s", (int)n, v);
}

/* The targets made so far, one per compiler command and $HLO_CC_FLAGS
 * (never freed: the text is lent for the process's life). */
typedef struct target_node {
  struct target_node *next;
  char *cc, *flags;
  char text[];
} target_node;
static target_node *targets;
static pthread_mutex_t targets_mu = PTHREAD_MUTEX_INITIALIZER;

static const char *find_target(const char *cc, const char *flags) {
  pthread_mutex_lock(&targets_mu);
  const target_node *t = targets;
  while (t && (strcmp(t->cc, cc) || strcmp(t->flags, flags))) t = t->next;
  pthread_mutex_unlock(&targets_mu);
  return t ? t->text : NULL;
}

const char *cpu_jit_target_with(const backend_compile_options *o) {
  const char *cc_text = cc_text_of(o);
  const char *flags_env = getenv("HLO_CC_FLAGS");
  if (!flags_env) flags_env = "";
  const char *found = find_target(cc_text, flags_env);
  if (found) return found;
  pthread_once(&cpu_once, read_cpu_identity);
  char model[256], id[KERNEL_CACHE_KEY_HEX], dir[KERNEL_CACHE_PATH_MAX];
  cpu_model_name(model, sizeof model);
  const char *parts[1] = {cpu_identity};
  kernel_cache_key(parts, 1, id);
  /* the compiler: its words, resolved path and version line (the note in
     the kernel cache keeps this cheap: no process on a warm run) */
  char ccid[CC_ID_MAX];
  cc_cmd cc;
  hlo_status bad = split_cc(cc_text, &cc);
  strbuf b;
  sb_init(&b);
  sb_printf(&b, "%s (cpu %.12s); cc", model[0] ? model : "unknown cpu", id);
  if (bad) {
    hlo_status_free(bad);
    snprintf(ccid, sizeof ccid, "%s", cc_text);
  } else {
    compiler_identity(&cc, kernel_cache_dir(o ? o->cache_root : NULL, dir) ? dir : NULL, ccid);
  }
  /* "TEXT\nPATH\nVERSION" on one line: cc `TEXT` = PATH (VERSION) */
  char *nl1 = strchr(ccid, '\n'), *nl2 = nl1 ? strchr(nl1 + 1, '\n') : NULL;
  if (nl1 && nl2)
    sb_printf(&b, " `%.*s` = %.*s (%s)", (int)(nl1 - ccid), ccid, (int)(nl2 - nl1 - 1), nl1 + 1,
              nl2 + 1);
  else
    sb_printf(&b, " `%s`", ccid);
  flag_list fl;
  get_flags(&fl);
  sb_puts(&b, "; flags");
  for (int f = 0; f < fl.n; f++) sb_printf(&b, " %s", fl.v[f]);
  for (int f = 0; f < NUM_LINK; f++) sb_printf(&b, " %s", link_flags[f]);
  for (char *p = b.oom ? NULL : b.data; p && *p; p++)
    if (*p == '\n') *p = ' ';
  size_t tl = b.oom ? 0 : b.len, cl = strlen(cc_text), fl_len = strlen(flags_env);
  target_node *t = b.oom ? NULL : malloc(sizeof *t + tl + 1 + cl + 1 + fl_len + 1);
  if (!t) {
    sb_free(&b);
    return "unknown target (out of memory)";
  }
  memcpy(t->text, b.data, tl + 1);
  t->cc = t->text + tl + 1;
  memcpy(t->cc, cc_text, cl + 1);
  t->flags = t->cc + cl + 1;
  memcpy(t->flags, flags_env, fl_len + 1);
  sb_free(&b);
  pthread_mutex_lock(&targets_mu);
  const target_node *old = targets;
  while (old && (strcmp(old->cc, t->cc) || strcmp(old->flags, t->flags))) old = old->next;
  if (old) {  /* another thread made it meanwhile */
    pthread_mutex_unlock(&targets_mu);
    free(t);
    return old->text;
  }
  t->next = targets;
  targets = t;
  pthread_mutex_unlock(&targets_mu);
  return t->text;
}

const char *cpu_jit_target(void) { return cpu_jit_target_with(NULL); }

uint32_t cpu_jit_objects(const cpu_jit *j, const backend_object **out) {
  *out = j ? j->objects : NULL;
  return j ? j->n : 0;
}

hlo_status cpu_jit_compile(const char *source, const char *cc, const char *dump_dir,
                           const char *const *names, uint32_t n, cpu_kernel_fn *fns,
                           cpu_jit **out) {
  cpu_jit_unit u = {.source = source, .names = names, .n = n, .fns = fns};
  return cpu_jit_compile_units(&u, 1, cc, dump_dir, out);
}

void cpu_jit_destroy(cpu_jit *j) {
  if (!j) return;
  for (uint32_t i = 0; i < j->n; i++) {
    if (j->handles[i]) dlclose(j->handles[i]);
    free((void *)j->objects[i].bytes);
  }
  free(j->handles);
  free(j->objects);
  free(j);
}
