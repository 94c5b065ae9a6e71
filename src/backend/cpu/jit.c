/* jit.c — compiling generated C with the system C compiler into shared
 * objects and loading them with dlopen (see cpu.h).
 *
 * A module comes as one or more translation units (cpu_backend.c splits its
 * kernels into up to HLO_NUM_THREADS units, each with the dialect's
 * preamble). Each unit is first looked up in the kernel cache
 * (kernel_cache.h: keyed by the compiler's identity, the CPU's, the flags
 * and the source); the misses are compiled by concurrent compiler processes
 * (at most thread_pool_default_threads() at once), each to its own shared
 * object, and every object is loaded (several small objects load as fast as
 * one: no link step is needed to merge them). A compiled unit goes into the
 * cache (written to a temporary name in the cache folder, then renamed);
 * without a usable cache it is built in a temporary folder, removed again
 * once loaded (the object stays mapped). The compiler is started with
 * posix_spawnp (no shell, so no quoting issues) with its output sent to a
 * log file we quote from on failure.
 *
 * Flags (bench/THREADS.md has the measurements): -O2 with gcc's -O3
 * vectorizer cost model (-fvect-cost-model=dynamic; gcc 12's -O2 default,
 * "very-cheap", left even a 16-wide bias add scalar; clang ignores the
 * flag); -fno-math-errno lets sqrtf etc. inline (results unchanged);
 * -ffp-contract=off keeps a*b+c two roundings (no FMA contraction), as the
 * spec and the interpreter compute it; -pipe (no temporary assembly file)
 * and no -g. */
#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <spawn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/utsname.h>
#include <sys/wait.h>
#include <unistd.h>
#include "backend/cpu/cpu.h"
#include "backend/cpu/kernel_cache.h"
#include "support/thread_pool.h"

extern char **environ;

/* The compiler flags, but the output and input names. */
static const char *const cc_flags[] = {
    "-O2", "-fvect-cost-model=dynamic", "-march=native", "-fPIC", "-shared", "-pipe",
    "-fno-math-errno", "-ffp-contract=off", "-std=gnu11",
};
enum { NUM_FLAGS = sizeof cc_flags / sizeof *cc_flags, MAX_EXTRA = 32 };

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

struct cpu_jit {
  uint32_t n;
  void **handles;
};

static hlo_status write_file(const char *path, const char *text) {
  FILE *f = fopen(path, "w");
  if (!f) return status_new(HLO_INTERNAL, "cannot write %s: %s", path, strerror(errno));
  size_t n = strlen(text);
  bool ok = fwrite(text, 1, n, f) == n;
  ok = fclose(f) == 0 && ok;
  return ok ? NULL : status_new(HLO_INTERNAL, "cannot write %s", path);
}

/* The first `max` bytes of a file (malloc'd, NUL-terminated), or NULL. */
static char *read_head(const char *path, size_t max) {
  FILE *f = fopen(path, "r");
  if (!f) return NULL;
  char *buf = malloc(max + 1);
  size_t n = buf ? fread(buf, 1, max, f) : 0;
  fclose(f);
  if (buf) buf[n] = 0;
  return buf;
}

/* Starts argv with stdout and stderr to `log` (NULL: /dev/null). Errors:
 * HLO_UNAVAILABLE when it cannot be started. */
static hlo_status spawn(char *const *argv, const char *log, pid_t *pid) {
  posix_spawn_file_actions_t fa;
  if (posix_spawn_file_actions_init(&fa))
    return status_new(HLO_RESOURCE_EXHAUSTED, "out of memory");
  posix_spawn_file_actions_addopen(&fa, 1, log ? log : "/dev/null",
                                   O_WRONLY | O_CREAT | O_TRUNC, 0600);
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

/* The compiler's identity: its resolved path and the first line of
 * `CC --version`, read once per compiler name (a few are remembered). */
enum { MAX_COMPILERS = 4, CC_ID_MAX = 4096 + 1024 + 8 };
static struct {
  char name[256];
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

static void compiler_identity(const char *cc, char out[CC_ID_MAX]) {
  size_t cap = CC_ID_MAX;
  pthread_mutex_lock(&compilers_mu);
  for (int i = 0; i < num_compilers; i++)
    if (!strcmp(compilers[i].name, cc)) {
      snprintf(out, cap, "%s", compilers[i].id);
      pthread_mutex_unlock(&compilers_mu);
      return;
    }
  pthread_mutex_unlock(&compilers_mu);
  char real[4096], version[1024] = "";
  resolve_path(cc, real);
  const char *tmp = getenv("TMPDIR");
  char log[4200];
  snprintf(log, sizeof log, "%s/hlo-ccver-%ld-XXXXXX", tmp && *tmp ? tmp : "/tmp", (long)getpid());
  int fd = mkstemp(log);
  if (fd >= 0) {
    close(fd);
    char *argv[] = {(char *)cc, "--version", NULL};
    pid_t pid;
    hlo_status st = spawn(argv, log, &pid);
    if (!st) {
      wait_exit(pid);
      char *head = read_head(log, sizeof version - 1);
      if (head) {
        head[strcspn(head, "\n")] = 0;
        snprintf(version, sizeof version, "%s", head);
        free(head);
      }
    }
    hlo_status_free(st);
    unlink(log);
  }
  snprintf(out, cap, "%s\n%s", real, version);
  pthread_mutex_lock(&compilers_mu);
  if (num_compilers < MAX_COMPILERS && strlen(cc) < sizeof compilers[0].name) {
    snprintf(compilers[num_compilers].name, sizeof compilers[0].name, "%s", cc);
    memcpy(compilers[num_compilers].id, out, CC_ID_MAX);
    num_compilers++;
  }
  pthread_mutex_unlock(&compilers_mu);
}

/* --------------------------------------------------------------- compile */

typedef struct unit_state {
  char key[KERNEL_CACHE_KEY_HEX];
  char so[KERNEL_CACHE_PATH_MAX];   /* what is loaded */
  char out[KERNEL_CACHE_PATH_MAX];  /* the compiler's output */
  char src[KERNEL_CACHE_PATH_MAX], log[KERNEL_CACHE_PATH_MAX];
  bool hit, to_cache, committed, started;
  pid_t pid;
  int exit_code;
  void *handle;
} unit_state;

/* Looks up u's kernels in handle h; false when one is missing. */
static bool find_symbols(void *h, const cpu_jit_unit *u) {
  for (uint32_t i = 0; i < u->n; i++) {
    void *sym = dlsym(h, u->names[i]);
    if (!sym) return false;
    memcpy(&u->fns[i], &sym, sizeof sym); /* object -> function pointer, as POSIX allows */
  }
  return true;
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

/* Starts the compiler on unit i (source written to the work folder). */
static hlo_status start_unit(const char *cc, const flag_list *fl, const char *work, uint32_t i,
                             unit_state *s, const char *source) {
  if (snprintf(s->src, sizeof s->src, "%s/u%u.c", work, i) >= (int)sizeof s->src ||
      snprintf(s->log, sizeof s->log, "%s/u%u.log", work, i) >= (int)sizeof s->log ||
      (!s->to_cache && snprintf(s->out, sizeof s->out, "%s/u%u.so", work, i) >= (int)sizeof s->out))
    return status_new(HLO_INVALID_ARGUMENT, "temporary folder name too long: %s", work);
  HLO_TRY(write_file(s->src, source));
  char *argv[NUM_FLAGS + MAX_EXTRA + 6];
  int a = 0;
  argv[a++] = (char *)cc;
  for (int f = 0; f < fl->n; f++) argv[a++] = (char *)fl->v[f];
  argv[a++] = "-o";
  argv[a++] = s->out;
  argv[a++] = s->src;
  argv[a++] = "-lm";
  argv[a] = NULL;
  HLO_TRY(spawn(argv, s->log, &s->pid));
  s->started = true;
  return NULL;
}

/* Waits for unit s; an error quoting the compiler's log when it failed. */
static hlo_status finish_unit(const char *cc, unit_state *s) {
  s->started = false;
  s->exit_code = wait_exit(s->pid);
  if (s->exit_code == 0) return NULL;
  if (s->exit_code == 127)
    return status_new(HLO_UNAVAILABLE, "no C compiler: `%s` could not be run; set HLO_CC", cc);
  char *msg = read_head(s->log, 2048);
  hlo_status st =
      status_new(HLO_INTERNAL, "the C compiler `%s` failed (exit %d) on the generated code:\n%s",
                 cc, s->exit_code, msg && *msg ? msg : "(no output)");
  free(msg);
  return st;
}

/* Frees the state: unloads what was loaded when `unload`, removes the
 * temporary files and the work folder. */
static void cleanup(unit_state *us, uint32_t nunits, const char *work, bool unload) {
  for (uint32_t i = 0; i < nunits; i++) {
    unit_state *s = &us[i];
    if (s->started) wait_exit(s->pid);
    if (unload && s->handle) dlclose(s->handle);
    if (work[0]) {
      unlink(s->src);
      unlink(s->log);
    }
    /* the compiler's output, unless it became a cache entry (a loaded
       object stays mapped) */
    if (!s->hit && !s->committed && s->out[0]) unlink(s->out);
  }
  if (work[0]) rmdir(work);
  free(us);
}

hlo_status cpu_jit_compile_units(const cpu_jit_unit *units, uint32_t nunits, const char *cc,
                                 const char *dump_dir, cpu_jit **out) {
  *out = NULL;
  if (!cc || !*cc) cc = getenv("HLO_CC");
  if (!cc || !*cc) cc = "cc";
  if (dump_dir) HLO_TRY(dump_units(units, nunits, dump_dir));
  unit_state *us = calloc(nunits ? nunits : 1, sizeof *us);
  cpu_jit *j = calloc(1, sizeof *j);
  void **handles = calloc(nunits ? nunits : 1, sizeof *handles);
  char work[4096] = "";
  if (!us || !j || !handles) {
    free(us), free(j), free(handles);
    return status_new(HLO_RESOURCE_EXHAUSTED, "out of memory");
  }

  /* 1. the cache */
  flag_list fl;
  get_flags(&fl);
  char dir[KERNEL_CACHE_PATH_MAX];
  bool cache = kernel_cache_dir(dir);
  static pthread_once_t cpu_once = PTHREAD_ONCE_INIT;
  char ccid[CC_ID_MAX];
  if (cache) {
    pthread_once(&cpu_once, read_cpu_identity);
    compiler_identity(cc, ccid);
  }
  uint32_t misses = 0;
  for (uint32_t i = 0; i < nunits; i++) {
    unit_state *s = &us[i];
    if (cache) {
      const char *parts[NUM_FLAGS + MAX_EXTRA + 3];
      size_t np = 0;
      parts[np++] = ccid;
      parts[np++] = cpu_identity;
      for (int f = 0; f < fl.n; f++) parts[np++] = fl.v[f];
      parts[np++] = units[i].source;
      kernel_cache_key(parts, np, s->key);
      if (kernel_cache_lookup(dir, s->key, s->so)) {
        s->handle = dlopen(s->so, RTLD_NOW | RTLD_LOCAL);
        s->hit = s->handle && find_symbols(s->handle, &units[i]);
        if (!s->hit) {  /* a bad entry: recompiled and replaced */
          if (s->handle) dlclose(s->handle);
          s->handle = NULL;
          kernel_cache_remove(dir, s->key);
        }
      }
      s->to_cache = !s->hit && kernel_cache_temp_path(dir, s->key, s->out);
    }
    misses += !s->hit;
  }

  /* 2. the misses, at most P compilers at once */
  hlo_status st = NULL;
  if (misses) {
    const char *tmp = getenv("TMPDIR");
    snprintf(work, sizeof work, "%s/hlo-jit-XXXXXX", tmp && *tmp ? tmp : "/tmp");
    if (!mkdtemp(work)) {
      st = status_new(HLO_INTERNAL, "cannot make a temporary folder %s: %s", work,
                      strerror(errno));
      work[0] = 0;
    }
  }
  uint32_t parallel = (uint32_t)thread_pool_default_threads(), running = 0, next_wait = 0;
  for (uint32_t i = 0; i < nunits && !st; i++) {
    if (us[i].hit) continue;
    while (running >= parallel && !st) {  /* wait for the oldest one still running */
      while (!us[next_wait].started) next_wait++;
      st = finish_unit(cc, &us[next_wait]);
      running--;
    }
    if (!st) st = start_unit(cc, &fl, work, i, &us[i], units[i].source);
    running += us[i].started;
  }
  for (uint32_t i = 0; i < nunits; i++) {
    if (!us[i].started) continue;
    hlo_status s2 = finish_unit(cc, &us[i]);
    if (st) hlo_status_free(s2);
    else st = s2;
  }

  /* 3. store and load what was compiled */
  for (uint32_t i = 0; i < nunits && !st; i++) {
    unit_state *s = &us[i];
    if (s->hit) continue;
    s->committed = s->to_cache && kernel_cache_commit(dir, s->key, s->out, s->so);
    if (!s->committed) snprintf(s->so, sizeof s->so, "%s", s->out);
    s->handle = dlopen(s->so, RTLD_NOW | RTLD_LOCAL);
    if (!s->handle) {
      st = status_new(HLO_INTERNAL, "cannot load the compiled kernels: %s", dlerror());
      if (s->committed) kernel_cache_remove(dir, s->key);
    } else if (!find_symbols(s->handle, &units[i])) {
      if (s->committed) kernel_cache_remove(dir, s->key);
      st = status_new(HLO_INTERNAL, "compiled kernels lack one of %u kernels (first %s)",
                      units[i].n, units[i].n ? units[i].names[0] : "?");
    }
  }
  for (uint32_t i = 0; i < nunits; i++) handles[i] = us[i].handle;
  cleanup(us, nunits, work, st != NULL);
  if (st) {
    free(j);
    free(handles);
    return st;
  }
  j->n = nunits;
  j->handles = handles;
  *out = j;
  return NULL;
}

hlo_status cpu_jit_compile(const char *source, const char *cc, const char *dump_dir,
                           const char *const *names, uint32_t n, cpu_kernel_fn *fns,
                           cpu_jit **out) {
  cpu_jit_unit u = {.source = source, .names = names, .n = n, .fns = fns};
  return cpu_jit_compile_units(&u, 1, cc, dump_dir, out);
}

void cpu_jit_destroy(cpu_jit *j) {
  if (!j) return;
  for (uint32_t i = 0; i < j->n; i++)
    if (j->handles[i]) dlclose(j->handles[i]);
  free(j->handles);
  free(j);
}
