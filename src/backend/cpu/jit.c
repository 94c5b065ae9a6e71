/* jit.c — compiling generated C with the system C compiler into a shared
 * object and loading it with dlopen (see cpu.h).
 *
 * All kernels of a module are one translation unit, so one compiler run
 * builds them all (the compiler's start-up dominates small kernels); the
 * caller may compile several modules in parallel threads. The compiler is
 * started with posix_spawnp (no shell, so no quoting issues) with its output
 * sent to a log file we quote from on failure. The temporary folder is
 * removed as soon as the library is loaded.
 *
 * Flags: -O2 with gcc's -O3 vectorizer cost model (-fvect-cost-model=
 * dynamic; gcc 12's -O2 default, "very-cheap", left even a 16-wide bias add
 * scalar; clang ignores the flag); -fno-math-errno lets sqrtf etc. inline
 * (results unchanged); -ffp-contract=off keeps a*b+c two roundings (no FMA
 * contraction), as the spec and the interpreter compute it. */
#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <spawn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>
#include "backend/cpu/cpu.h"

extern char **environ;

struct cpu_jit {
  void *handle;
};

static hlo_status write_file(const char *path, const char *text) {
  FILE *f = fopen(path, "w");
  if (!f) return status_new(HLO_INTERNAL, "cannot write %s: %s", path, strerror(errno));
  size_t n = strlen(text);
  bool ok = fwrite(text, 1, n, f) == n;
  ok = fclose(f) == 0 && ok;
  return ok ? NULL : status_new(HLO_INTERNAL, "cannot write %s", path);
}

/* The first lines of the compiler's log (malloc'd, or NULL). */
static char *read_log(const char *path) {
  FILE *f = fopen(path, "r");
  if (!f) return NULL;
  char *buf = malloc(2049);
  size_t n = buf ? fread(buf, 1, 2048, f) : 0;
  fclose(f);
  if (buf) buf[n] = 0;
  return buf;
}

/* Runs argv with stdout and stderr to `log`; *exit_code is its status.
 * Errors: HLO_UNAVAILABLE when it cannot be started. */
static hlo_status run(char *const *argv, const char *log, int *exit_code) {
  posix_spawn_file_actions_t fa;
  if (posix_spawn_file_actions_init(&fa))
    return status_new(HLO_RESOURCE_EXHAUSTED, "out of memory");
  posix_spawn_file_actions_addopen(&fa, 1, log, O_WRONLY | O_CREAT | O_TRUNC, 0600);
  posix_spawn_file_actions_adddup2(&fa, 1, 2);
  pid_t pid;
  int rc = posix_spawnp(&pid, argv[0], &fa, NULL, argv, environ);
  posix_spawn_file_actions_destroy(&fa);
  if (rc)
    return status_new(HLO_UNAVAILABLE,
                      "no C compiler: cannot run `%s` (%s); install one (gcc or clang) or set "
                      "HLO_CC", argv[0], strerror(rc));
  int ws;
  while (waitpid(pid, &ws, 0) < 0)
    if (errno != EINTR) return status_new(HLO_INTERNAL, "waitpid: %s", strerror(errno));
  *exit_code = WIFEXITED(ws) ? WEXITSTATUS(ws) : 128 + (WIFSIGNALED(ws) ? WTERMSIG(ws) : 0);
  if (*exit_code == 127)
    return status_new(HLO_UNAVAILABLE, "no C compiler: `%s` could not be run; set HLO_CC",
                      argv[0]);
  return NULL;
}

static void remove_dir(const char *dir, const char *const *files, int n) {
  char p[4096];
  for (int i = 0; i < n; i++) {
    if (snprintf(p, sizeof p, "%s/%s", dir, files[i]) < (int)sizeof p) unlink(p);
  }
  rmdir(dir);
}

hlo_status cpu_jit_compile(const char *source, const char *cc, const char *dump_dir,
                           const char *const *names, uint32_t n, cpu_kernel_fn *fns,
                           cpu_jit **out) {
  *out = NULL;
  if (!cc || !*cc) cc = getenv("HLO_CC");
  if (!cc || !*cc) cc = "cc";
  if (dump_dir && n) {
    char p[4096];
    if (snprintf(p, sizeof p, "%s/%s.c", dump_dir, names[0]) >= (int)sizeof p)
      return status_new(HLO_INVALID_ARGUMENT, "dump folder name too long");
    HLO_TRY(write_file(p, source));
  }
  const char *tmp = getenv("TMPDIR");
  char dir[4096], src[4200], so[4200], log[4200];
  snprintf(dir, sizeof dir, "%s/hlo-jit-XXXXXX", tmp && *tmp ? tmp : "/tmp");
  if (!mkdtemp(dir))
    return status_new(HLO_INTERNAL, "cannot make a temporary folder %s: %s", dir, strerror(errno));
  static const char *const files[] = {"k.c", "k.so", "cc.log"};
  snprintf(src, sizeof src, "%s/k.c", dir);
  snprintf(so, sizeof so, "%s/k.so", dir);
  snprintf(log, sizeof log, "%s/cc.log", dir);
  hlo_status st = write_file(src, source);
  int code = 0;
  if (!st) {
    char *argv[] = {(char *)cc, "-O2", "-fvect-cost-model=dynamic", "-march=native", "-fPIC",
                    "-shared", "-fno-math-errno", "-ffp-contract=off", "-std=gnu11", "-o", so,
                    src, "-lm", NULL};
    st = run(argv, log, &code);
  }
  if (!st && code) {
    char *msg = read_log(log);
    st = status_new(HLO_INTERNAL, "the C compiler `%s` failed (exit %d) on the generated code:\n%s",
                    cc, code, msg ? msg : "(no output)");
    free(msg);
  }
  void *h = NULL;
  if (!st) {
    h = dlopen(so, RTLD_NOW | RTLD_LOCAL);
    if (!h) st = status_new(HLO_INTERNAL, "cannot load the compiled kernels: %s", dlerror());
  }
  remove_dir(dir, files, 3);
  for (uint32_t i = 0; i < n && !st; i++) {
    void *sym = dlsym(h, names[i]);
    if (!sym) st = status_new(HLO_INTERNAL, "compiled kernels lack %s", names[i]);
    else memcpy(&fns[i], &sym, sizeof sym); /* object -> function pointer, as POSIX allows */
  }
  cpu_jit *j = st ? NULL : malloc(sizeof *j);
  if (!st && !j) st = status_new(HLO_RESOURCE_EXHAUSTED, "out of memory");
  if (st) {
    if (h) dlclose(h);
    return st;
  }
  j->handle = h;
  *out = j;
  return NULL;
}

void cpu_jit_destroy(cpu_jit *j) {
  if (!j) return;
  dlclose(j->handle);
  free(j);
}
