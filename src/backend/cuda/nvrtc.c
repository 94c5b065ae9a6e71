/* nvrtc.c — NVRTC loaded with dlopen (see nvrtc.h). The toolkit's nvrtc.h
 * is not included: the few declarations below are written out (the ABI has
 * been stable since CUDA 11), so the build needs no CUDA toolkit.
 *
 * Libraries tried, in order: libnvrtc.so.13, libnvrtc.so.12, libnvrtc.so
 * (the dynamic loader's search path), then
 * /usr/local/cuda/lib64/libnvrtc.so.13. The environment variable
 * HLO_NVRTC_LIB, when set and non-empty, replaces that list by its own
 * (paths or names separated by ':'); HLO_NVRTC_LIB=/nonexistent simulates
 * a machine without NVRTC (the tests do, in a child process: the library
 * is loaded once per process). */
#include "backend/cpu/kernel_cache.h"
#include "backend/cuda/nvrtc.h"
#include <dlfcn.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "support/status.h"

/* nvrtc.h's types: nvrtcResult is an enum (NVRTC_SUCCESS = 0), nvrtcProgram
 * a pointer to an opaque struct. */
typedef int nvrtc_result;
typedef struct nvrtc_prog_s *nvrtc_program;

/* The symbols used: name, return type, parameters. */
#define NVRTC_SYMBOLS(X)                                                                     \
  X(nvrtcVersion, nvrtc_result, (int *major, int *minor))                                    \
  X(nvrtcGetErrorString, const char *, (nvrtc_result r))                                     \
  X(nvrtcCreateProgram, nvrtc_result,                                                        \
    (nvrtc_program * prog, const char *src, const char *name, int num_headers,               \
     const char *const *headers, const char *const *include_names))                          \
  X(nvrtcDestroyProgram, nvrtc_result, (nvrtc_program * prog))                               \
  X(nvrtcCompileProgram, nvrtc_result,                                                       \
    (nvrtc_program prog, int num_options, const char *const *options))                       \
  X(nvrtcGetProgramLogSize, nvrtc_result, (nvrtc_program prog, size_t *size))                \
  X(nvrtcGetProgramLog, nvrtc_result, (nvrtc_program prog, char *log))                       \
  X(nvrtcGetCUBINSize, nvrtc_result, (nvrtc_program prog, size_t *size))                     \
  X(nvrtcGetCUBIN, nvrtc_result, (nvrtc_program prog, char *cubin))

static struct {
#define X(name, ret, params) ret(*name) params;
  NVRTC_SYMBOLS(X)
#undef X
  void *lib;
  char version[32];
  char error[768]; /* why loading failed, "" when loaded */
} g;

static pthread_once_t g_once = PTHREAD_ONCE_INIT;

static const char *const default_libs[] = {"libnvrtc.so.13", "libnvrtc.so.12", "libnvrtc.so",
                                           "/usr/local/cuda/lib64/libnvrtc.so.13"};

/* Tries to open `name`; on failure appends "NAME (dlerror)" to g.error. */
static bool try_open(const char *name, size_t *used) {
  g.lib = dlopen(name, RTLD_NOW | RTLD_LOCAL);
  if (g.lib) return true;
  const char *e = dlerror();
  int n = snprintf(g.error + *used, sizeof g.error - *used, "%s%s (%s)", *used ? "; " : "", name,
                   e ? e : "not found");
  if (n > 0) *used = *used + (size_t)n < sizeof g.error ? *used + (size_t)n : sizeof g.error - 1;
  return false;
}

static void load_once(void) {
  size_t used = 0;
  const char *env = getenv("HLO_NVRTC_LIB");
  if (env && *env) {
    char list[1024];
    snprintf(list, sizeof list, "%s", env);
    char *save = NULL;
    for (char *p = strtok_r(list, ":", &save); p && !g.lib; p = strtok_r(NULL, ":", &save))
      try_open(p, &used);
  } else {
    for (size_t i = 0; i < sizeof default_libs / sizeof *default_libs && !g.lib; i++)
      try_open(default_libs[i], &used);
  }
  if (!g.lib) return;
  char missing[64] = "";
#define X(name, ret, params)                                              \
  if (!missing[0]) {                                                      \
    *(void **)&g.name = dlsym(g.lib, #name);                              \
    if (!g.name) snprintf(missing, sizeof missing, "%s", #name);          \
  }
  NVRTC_SYMBOLS(X)
#undef X
  if (missing[0]) {
    snprintf(g.error, sizeof g.error, "libnvrtc lacks the symbol %s", missing);
    dlclose(g.lib);
    g.lib = NULL;
    return;
  }
  int major = 0, minor = 0;
  if (g.nvrtcVersion(&major, &minor) != 0) {
    snprintf(g.error, sizeof g.error, "nvrtcVersion failed");
    dlclose(g.lib);
    g.lib = NULL;
    return;
  }
  snprintf(g.version, sizeof g.version, "nvrtc %d.%d", major, minor);
  g.error[0] = 0;
}

hlo_status nvrtc_load(void) {
  pthread_once(&g_once, load_once);
  if (g.lib) return NULL;
  return status_new(HLO_UNAVAILABLE, "cannot load NVRTC (the CUDA runtime compiler): tried %s",
                    g.error);
}

const char *nvrtc_version_text(void) {
  pthread_once(&g_once, load_once);
  return g.lib ? g.version : NULL;
}

hlo_status nvrtc_compile(const char *source, const char *name, int arch, void **cubin,
                         size_t *len) {
  *cubin = NULL;
  *len = 0;
  HLO_TRY(nvrtc_load());
  if (arch < 50 || arch > 999)
    return status_new(HLO_INVALID_ARGUMENT, "nvrtc: architecture sm_%d", arch);
  nvrtc_program prog = NULL;
  nvrtc_result r = g.nvrtcCreateProgram(&prog, source, name ? name : "hlo.cu", 0, NULL, NULL);
  if (r != 0)
    return status_new(r == 1 ? HLO_RESOURCE_EXHAUSTED : HLO_INTERNAL,
                      "nvrtc: cannot create program %s: %s", name ? name : "hlo.cu",
                      g.nvrtcGetErrorString(r));
  char arch_opt[48];
  snprintf(arch_opt, sizeof arch_opt, "--gpu-architecture=sm_%d", arch);
  /* IEEE single precision (no --use_fast_math): exact divides and square
   * roots, denormals kept, and no contraction of a * b + c into an FMA, so
   * the kernels round as the interpreter's C does, op by op (the device's
   * libm functions differ from glibc's by an ULP or two). */
  const char *opts[] = {arch_opt,         "-default-device", "--std=c++17",   "--ftz=false",
                        "--prec-div=true", "--prec-sqrt=true", "--fmad=false", "-lineinfo"};
  r = g.nvrtcCompileProgram(prog, (int)(sizeof opts / sizeof *opts), opts);
  hlo_status st = NULL;
  if (r != 0) {
    size_t n = 0;
    char *log = NULL;
    if (g.nvrtcGetProgramLogSize(prog, &n) == 0 && n > 0 && (log = malloc(n + 1))) {
      if (g.nvrtcGetProgramLog(prog, log) != 0) log[0] = 0;
      log[n] = 0;
    }
    st = status_new(r == 1 ? HLO_RESOURCE_EXHAUSTED : HLO_INTERNAL,
                    "nvrtc: %s does not compile for sm_%d (%s):\n%.4096s", name ? name : "hlo.cu",
                    arch, g.nvrtcGetErrorString(r), log ? log : "(no log)");
    free(log);
  } else {
    size_t n = 0;
    if (g.nvrtcGetCUBINSize(prog, &n) != 0 || n == 0) {
      st = status_new(HLO_INTERNAL, "nvrtc: no cubin for %s (sm_%d)", name ? name : "hlo.cu", arch);
    } else if (!(*cubin = malloc(n))) {
      st = status_new(HLO_RESOURCE_EXHAUSTED, "out of memory");
    } else if (g.nvrtcGetCUBIN(prog, *cubin) != 0) {
      free(*cubin);
      *cubin = NULL;
      st = status_new(HLO_INTERNAL, "nvrtc: cannot read the cubin of %s", name ? name : "hlo.cu");
    } else {
      *len = n;
    }
  }
  g.nvrtcDestroyProgram(&prog);
  return st;
}

hlo_status nvrtc_compile_cached(const char *source, const char *name, int arch, void **cubin,
                                size_t *len) {
  *cubin = NULL;
  *len = 0;
  HLO_TRY(nvrtc_load());
  char dir[KERNEL_CACHE_PATH_MAX], key[KERNEL_CACHE_KEY_HEX], path[KERNEL_CACHE_PATH_MAX];
  char arch_text[16];
  snprintf(arch_text, sizeof arch_text, "sm_%d", arch);
  const char *parts[4] = {"cuda library unit", g.version, arch_text, source};
  bool cached = kernel_cache_dir(NULL, dir);
  if (cached) {
    kernel_cache_key(parts, 4, key);
    if (kernel_cache_load(dir, key, path, cubin, len)) return NULL;
  }
  HLO_TRY(nvrtc_compile(source, name, arch, cubin, len));
  if (cached) (void)kernel_cache_store(dir, key, *cubin, *len, NULL);
  return NULL;
}
