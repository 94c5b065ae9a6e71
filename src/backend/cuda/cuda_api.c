/* cuda_api.c — dlopen of libcuda and libcublasLt (cuda_api.h). */
#include "backend/cuda/cuda_api.h"
#include <dlfcn.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "support/status.h"

/* A load's remembered outcome: code HLO_OK, or the error to give again. */
typedef struct load_result {
  hlo_status_code code;
  char message[1024];
} load_result;

static hlo_status again(const load_result *r) {
  return r->code == HLO_OK ? NULL : status_new(r->code, "%s", r->message);
}

/* Resolves every symbol of a table; false (message in r) at the first
 * missing one. `names` and `slots` list them in the table's order. */
static bool resolve(void *lib, const char *const *names, void **slots, size_t n,
                    const char *what, const char *path, load_result *r) {
  for (size_t i = 0; i < n; i++) {
    dlerror();
    void *p = dlsym(lib, names[i]);
    if (!p) {
      const char *e = dlerror();
      snprintf(r->message, sizeof r->message, "%s (%s) lacks %s: %s", what, path, names[i],
               e ? e : "no such symbol");
      r->code = HLO_UNAVAILABLE;
      return false;
    }
    slots[i] = p;
  }
  return true;
}

/* ---- libcuda ---- */

static cuda_driver_api driver;
static load_result driver_result;
static pthread_once_t driver_once = PTHREAD_ONCE_INIT;

#define CUDA_API_NAME(name, ret, params) #name,
static const char *const driver_names[] = {CUDA_DRIVER_FUNCTIONS(CUDA_API_NAME)};

static void load_driver(void) {
  const char *env = getenv("HLO_CUDA_LIB");
  const char *paths[2] = {"libcuda.so.1", "libcuda.so"};
  size_t np = 2;
  if (env && *env) paths[0] = env, np = 1;
  void *lib = NULL;
  const char *path = NULL;
  char err[512] = "";
  for (size_t i = 0; i < np && !lib; i++) {
    lib = dlopen(paths[i], RTLD_NOW | RTLD_LOCAL);
    if (lib) {
      path = paths[i];
    } else if (!err[0]) {
      const char *e = dlerror(); /* the first path's reason: the one that matters */
      snprintf(err, sizeof err, "%s", e ? e : "not found");
    }
  }
  if (!lib) {
    driver_result.code = HLO_UNAVAILABLE;
    snprintf(driver_result.message, sizeof driver_result.message,
             "the cuda backend needs the NVIDIA driver (%s): %s", paths[0], err);
    return;
  }
  void *slots[sizeof driver_names / sizeof *driver_names];
  if (!resolve(lib, driver_names, slots, sizeof slots / sizeof *slots,
               "the NVIDIA driver library", path, &driver_result)) {
    dlclose(lib);
    return;
  }
  size_t i = 0;
#define CUDA_API_SET(name, ret, params) memcpy(&driver.name, &slots[i++], sizeof(void *));
  CUDA_DRIVER_FUNCTIONS(CUDA_API_SET)
  /* optional: NULL when the driver lacks them */
#define CUDA_API_OPTIONAL(name, ret, params)                                                  \
  {                                                                                           \
    void *p = dlsym(lib, #name);                                                              \
    memcpy(&driver.name, &p, sizeof p);                                                       \
  }
  CUDA_DRIVER_OPTIONAL_FUNCTIONS(CUDA_API_OPTIONAL)
  int v = 0;
  if (driver.cuDriverGetVersion(&v) == CUDA_SUCCESS) driver.version = v;
  driver_result.code = HLO_OK;
}

hlo_status cuda_driver_load(const cuda_driver_api **out) {
  *out = NULL;
  pthread_once(&driver_once, load_driver);
  if (driver_result.code != HLO_OK) return again(&driver_result);
  *out = &driver;
  return NULL;
}

const char *cuda_result_text(const cuda_driver_api *cu, CUresult r, char *buf, size_t len) {
  const char *name = NULL, *text = NULL;
  if (cu && cu->cuGetErrorName(r, &name) != CUDA_SUCCESS) name = NULL;
  if (cu && cu->cuGetErrorString(r, &text) != CUDA_SUCCESS) text = NULL;
  if (name && text) snprintf(buf, len, "%s (%s)", name, text);
  else if (name) snprintf(buf, len, "%s", name);
  else snprintf(buf, len, "CUresult %d", r);
  return buf;
}

/* ---- libcublasLt ---- */

static cublaslt_api lt;
static load_result lt_result;
static pthread_once_t lt_once = PTHREAD_ONCE_INIT;
static const char *const lt_names[] = {CUBLASLT_FUNCTIONS(CUDA_API_NAME)};

static void load_lt(void) {
  static const char *const paths[] = {
      "libcublasLt.so.13", "libcublasLt.so.12", "libcublasLt.so",
      "/usr/local/cuda/lib64/libcublasLt.so.13", "/usr/local/cuda/lib64/libcublasLt.so.12",
      "/usr/local/cuda/lib64/libcublasLt.so"};
  void *lib = NULL;
  const char *path = NULL;
  char err[512] = "";
  for (size_t i = 0; i < sizeof paths / sizeof *paths && !lib; i++) {
    lib = dlopen(paths[i], RTLD_NOW | RTLD_LOCAL);
    if (lib) {
      path = paths[i];
    } else {
      const char *e = dlerror();
      snprintf(err, sizeof err, "%s", e ? e : "not found");
    }
  }
  if (!lib) {
    lt_result.code = HLO_UNAVAILABLE;
    snprintf(lt_result.message, sizeof lt_result.message,
             "cuBLASLt not found (tried libcublasLt.so.13, .so.12, .so, and in "
             "/usr/local/cuda/lib64): %s",
             err);
    return;
  }
  void *slots[sizeof lt_names / sizeof *lt_names];
  if (!resolve(lib, lt_names, slots, sizeof slots / sizeof *slots, "cuBLASLt", path,
               &lt_result)) {
    dlclose(lib);
    return;
  }
  size_t i = 0;
#define CUBLASLT_API_SET(name, ret, params) memcpy(&lt.name, &slots[i++], sizeof(void *));
  CUBLASLT_FUNCTIONS(CUBLASLT_API_SET)
  lt.path = path;
  lt_result.code = HLO_OK;
}

hlo_status cublaslt_load(const cublaslt_api **out) {
  *out = NULL;
  pthread_once(&lt_once, load_lt);
  if (lt_result.code != HLO_OK) return again(&lt_result);
  *out = &lt;
  return NULL;
}
