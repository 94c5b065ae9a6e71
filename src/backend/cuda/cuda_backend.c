/* cuda_backend.c — the CUDA backend's table (backend_cuda in backend.h).
 *
 * Start (once per process, pthread_once): libcuda is loaded (cuda_api.h),
 * cuInit, device 0, its primary context (cuDevicePrimaryCtxRetain: shared
 * with any other user of the runtime API in the process, never destroyed),
 * one non-blocking stream, then NVRTC and cuBLASLt are loaded. A failure
 * is HLO_UNAVAILABLE naming what is missing, and the same error is given
 * again on every later call.
 *
 * Threads: the runtime may call from any thread, so every entry point
 * first makes the context current on the calling thread (cuCtxSetCurrent:
 * a thread-local store in the driver).
 *
 * Order: everything the backend enqueues (launches, gemms, copies) goes to
 * its one stream, in call order. `copy` is synchronous (it waits for the
 * stream: a host buffer may be read right after); launches and gemms are
 * asynchronous; `synchronize` waits for the stream. Graphs: the stream
 * captured (graph_begin / graph_end) and replayed (graph_launch).
 *
 * Compile: each kernel is copied (shallowly: the copy's schedule is the
 * only field changed), scheduled for the GPU (cuda_schedule), and printed
 * with the others into one CUDA C translation unit (cuda_emit_module),
 * kernel i named k<i>; the unit's key is XXH3-128 of the target text and
 * the source (as the CPU backend's objects: each part hashed with its
 * length). An object of that key from options.objects is loaded as is;
 * otherwise NVRTC compiles the unit for the device's architecture. The
 * module keeps the cubin (module_objects). */
#include <errno.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include "backend/cuda/cuda_api.h"
#include "backend/cuda/cuda_conv.h"
#include "backend/cuda/cuda_copy.h"
#include "backend/cuda/cuda_cudnn.h"
#include "backend/cuda/cuda_sort.h"
#include "backend/cuda/cuda_window.h"
#include "backend/cuda/emit_cuda.h"
#include "backend/cuda/nvrtc.h"
#include "support/status.h"
#define XXH_INLINE_ALL
#include <xxhash.h>

/* Dynamic shared memory a block gets without opting in (every GPU since
 * sm_20): above it, cuFuncSetAttribute raises the kernel's limit. */
#define CUDA_DEFAULT_SHARED_BYTES (48 * 1024)

static cuda_device_state state;
static hlo_status_code start_code = HLO_OK;
static char start_message[1024];
static pthread_once_t start_once = PTHREAD_ONCE_INIT;

/* A capture open on this thread (graph_begin): the state every slot then
 * reads is a copy whose stream is the thread's capture stream, so the
 * work it enqueues is recorded there while other threads' work goes on
 * running on the backend's stream. */
static _Thread_local bool tl_capturing;
static _Thread_local cuda_device_state tl_state;
static _Thread_local CUstream tl_stream; /* made on the thread's first capture, kept */

CUstream cuda_capture_stream(void) { return tl_capturing ? tl_state.stream : NULL; }

void cuda_capture_set_stream(CUstream s) {
  if (tl_capturing) tl_state.stream = s;
}

const cuda_device_state *cuda_state(void) {
  if (tl_capturing) return &tl_state;
  return start_code == HLO_OK && state.cu ? &state : NULL;
}

hlo_status cuda_error(const cuda_device_state *s, CUresult r, const char *what) {
  char buf[256];
  return status_new(HLO_INTERNAL, "cuda: %s: %s", what,
                    cuda_result_text(s ? s->cu : NULL, r, buf, sizeof buf));
}

hlo_status cuda_make_current(const cuda_device_state *s, const char *what) {
  if (!s) return status_new(HLO_UNAVAILABLE, "cuda: %s: the backend is not started", what);
  CUresult r = s->cu->cuCtxSetCurrent(s->ctx);
  return r == CUDA_SUCCESS ? NULL : cuda_error(s, r, what);
}

/* Records the start's failure (message printf-style). */
static void start_fail(hlo_status_code code, const char *fmt, ...) HLO_PRINTF(2, 3);
static void start_fail(hlo_status_code code, const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(start_message, sizeof start_message, fmt, ap);
  va_end(ap);
  start_code = code;
}

static void start(void) {
  const cuda_driver_api *cu = NULL;
  hlo_status st = cuda_driver_load(&cu);
  if (st) {
    start_fail(hlo_status_code_of(st), "%s", hlo_status_message(st));
    hlo_status_free(st);
    return;
  }
  char buf[256];
  const char *lib = getenv("HLO_CUDA_LIB");
  if (!lib || !*lib) lib = "libcuda.so.1";
  CUresult r = cu->cuInit(0);
  if (r == CUDA_ERROR_NO_DEVICE) {
    start_fail(HLO_UNAVAILABLE, "no CUDA device (cuInit: %s)",
               cuda_result_text(cu, r, buf, sizeof buf));
    return;
  }
  if (r != CUDA_SUCCESS) {
    start_fail(HLO_UNAVAILABLE, "the cuda backend needs the NVIDIA driver (%s): cuInit: %s%s", lib,
               cuda_result_text(cu, r, buf, sizeof buf),
               r == CUDA_ERROR_STUB_LIBRARY ? " (the toolkit's stub, not a driver)" : "");
    return;
  }
  int count = 0;
  r = cu->cuDeviceGetCount(&count);
  if (r != CUDA_SUCCESS || count < 1) {
    start_fail(HLO_UNAVAILABLE, "no CUDA device%s%s", r ? ": " : "",
               r ? cuda_result_text(cu, r, buf, sizeof buf) : "");
    return;
  }
  cuda_device_state s = {.cu = cu};
  int unified = 0;
  const char *what = "cuDeviceGet";
  r = cu->cuDeviceGet(&s.dev, 0);
  if (!r) what = "cuDeviceGetName", r = cu->cuDeviceGetName(s.name, (int)sizeof s.name - 1, s.dev);
  if (!r) what = "cuDeviceGetAttribute",
          r = cu->cuDeviceGetAttribute(&s.cc_major, CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR,
                                       s.dev);
  if (!r) r = cu->cuDeviceGetAttribute(&s.cc_minor, CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR,
                                       s.dev);
  if (!r) r = cu->cuDeviceGetAttribute(&s.num_sms, CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT, s.dev);
  if (!r) r = cu->cuDeviceGetAttribute(&unified, CU_DEVICE_ATTRIBUTE_UNIFIED_ADDRESSING, s.dev);
  if (!r)
    r = cu->cuDeviceGetAttribute(&s.max_shared_optin,
                                 CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_BLOCK_OPTIN, s.dev);
  if (!r) what = "cuDeviceTotalMem", r = cu->cuDeviceTotalMem_v2(&s.total_mem, s.dev);
  if (!r) what = "cuDevicePrimaryCtxRetain", r = cu->cuDevicePrimaryCtxRetain(&s.ctx, s.dev);
  if (!r) what = "cuCtxSetCurrent", r = cu->cuCtxSetCurrent(s.ctx);
  if (!r) what = "cuStreamCreate", r = cu->cuStreamCreate(&s.stream, CU_STREAM_NON_BLOCKING);
  /* device memory from the driver's stream-ordered pool (cuMemAllocAsync):
   * freed memory stays in the pool for the next run instead of going back
   * to the driver (release threshold: never), so a run's allocations cost
   * no cuMemAlloc / cuMemFree (which synchronises the device) */
  CUmemoryPool pool = NULL;
  if (!r) what = "cuDeviceGetDefaultMemPool", r = cu->cuDeviceGetDefaultMemPool(&pool, s.dev);
  if (!r) {
    unsigned long long keep = ~0ull;
    what = "cuMemPoolSetAttribute";
    r = cu->cuMemPoolSetAttribute(pool, CU_MEMPOOL_ATTR_RELEASE_THRESHOLD, &keep);
  }
  /* The pool's first allocation in a process costs ~11 ms on the H200 (the
   * driver sets the pool up; the next ones 0.01-0.04 ms: measured
   * 2026-12-03 with timing marks, bench/results/gpu.md). It is made here,
   * with the context's own set-up (~240 ms), instead of inside the first
   * compile of the process, whose warm (cache hit) compile is ~1 ms
   * otherwise. The block goes back to the pool, which keeps its memory
   * (release threshold: never). */
  if (!r) {
    CUdeviceptr first = 0;
    what = "cuMemAllocAsync";
    r = cu->cuMemAllocAsync(&first, 256, s.stream);
    if (!r) what = "cuMemFreeAsync", r = cu->cuMemFreeAsync(first, s.stream);
    if (!r) what = "cuStreamSynchronize", r = cu->cuStreamSynchronize(s.stream);
  }
  if (r) {
    start_fail(HLO_UNAVAILABLE, "the cuda backend could not open CUDA device 0: %s: %s", what,
               cuda_result_text(cu, r, buf, sizeof buf));
    return;
  }
  if (!unified) {
    start_fail(HLO_UNAVAILABLE, "CUDA device 0 (%s) lacks unified addressing", s.name);
    return;
  }
  if (s.num_sms < 1) s.num_sms = 1;
  st = nvrtc_load();
  if (st) {
    start_fail(HLO_UNAVAILABLE, "NVRTC not found: %s", hlo_status_message(st));
    hlo_status_free(st);
    return;
  }
  st = cublaslt_load(&s.lt);
  if (st) {
    start_fail(HLO_UNAVAILABLE, "%s", hlo_status_message(st));
    hlo_status_free(st);
    return;
  }
  const char *nv = nvrtc_version_text();
  snprintf(s.target, sizeof s.target, "cuda sm_%d%d %s %s", s.cc_major, s.cc_minor, s.name,
           nv ? nv : "nvrtc ?");
  state = s;
  start_code = HLO_OK;
}

/* ---- modules ---- */

/* One NVRTC unit of a module: kernels [lo, hi), compiled on its own (the
 * units of a module compile in parallel: cuda_compile). */
typedef struct cuda_unit {
  uint32_t lo, hi;
  char *source;
  CUmodule mod;           /* NULL until loaded */
  void *cubin;
  size_t cubin_len;
  hlo_status st;          /* its compile's failure */
  bool cached;            /* the cubin came from the caller's objects */
} cuda_unit;

struct backend_module {
  uint32_t n;
  CUfunction *fns;
  cuda_geometry *geo;
  int64_t *num_tiles;
  uint32_t *num_bufs;
  char **names;           /* the kernels' own names, for errors */
  char *source;           /* the units' sources joined (module_source, --dump-to) */
  uint32_t nunits;
  cuda_unit *units;
  backend_object *objects; /* one a unit: module_objects */
};

static void cuda_module_destroy(backend_module *m) {
  if (!m) return;
  const cuda_device_state *s = cuda_state();
  bool loaded = false;
  for (uint32_t u = 0; m->units && u < m->nunits; u++) loaded |= m->units[u].mod != NULL;
  if (loaded && s) {
    hlo_status st = cuda_make_current(s, "module_destroy");
    /* its kernels may still be queued: wait before unloading them */
    if (!st) (void)s->cu->cuStreamSynchronize(s->stream);
    for (uint32_t u = 0; !st && u < m->nunits; u++)
      if (m->units[u].mod) (void)s->cu->cuModuleUnload(m->units[u].mod);
    hlo_status_free(st);
  }
  for (uint32_t u = 0; m->units && u < m->nunits; u++) {
    free(m->units[u].source);
    free(m->units[u].cubin);
    hlo_status_free(m->units[u].st);
  }
  free(m->units);
  free(m->objects);
  for (uint32_t i = 0; m->names && i < m->n; i++) free(m->names[i]);
  free(m->names);
  free(m->fns);
  free(m->geo);
  free(m->num_tiles);
  free(m->num_bufs);
  free(m->source);
  free(m);
}

static double now_ms(void) {
  struct timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return (double)t.tv_sec * 1e3 + (double)t.tv_nsec / 1e6;
}

/* The object key of a unit: 32 hex digits of XXH3-128 over the target text
 * and the source, each preceded by its length. */
static void object_key(const char *target, const char *source, char out[33]) {
  XXH3_state_t h;
  XXH3_128bits_reset(&h);
  const char *parts[2] = {target, source};
  for (int i = 0; i < 2; i++) {
    uint64_t len = strlen(parts[i]);
    XXH3_128bits_update(&h, &len, sizeof len);
    XXH3_128bits_update(&h, parts[i], len);
  }
  XXH128_hash_t d = XXH3_128bits_digest(&h);
  snprintf(out, 33, "%016llx%016llx", (unsigned long long)d.high64, (unsigned long long)d.low64);
}

static hlo_status write_file(const char *dir, const char *name, const char *text) {
  char p[4096];
  if (snprintf(p, sizeof p, "%s/%s", dir, name) >= (int)sizeof p)
    return status_new(HLO_INVALID_ARGUMENT, "dump folder name too long");
  FILE *f = fopen(p, "w");
  if (!f) return status_new(HLO_INTERNAL, "cannot write %s: %s", p, strerror(errno));
  size_t n = strlen(text);
  bool ok = fwrite(text, 1, n, f) == n;
  ok = fclose(f) == 0 && ok;
  return ok ? NULL : status_new(HLO_INTERNAL, "cannot write %s", p);
}

/* Loads unit u's cubin and finds its kernels; on failure nothing of it is
 * left loaded. */
static hlo_status load_unit(const cuda_device_state *s, backend_module *m, cuda_unit *u) {
  CUresult r = s->cu->cuModuleLoadData(&u->mod, u->cubin);
  if (r) {
    u->mod = NULL;
    return cuda_error(s, r, "cuModuleLoadData");
  }
  for (uint32_t i = u->lo; i < u->hi; i++) {
    char name[24];
    snprintf(name, sizeof name, "k%u", i);
    r = s->cu->cuModuleGetFunction(&m->fns[i], u->mod, name);
    if (r) {
      hlo_status st = cuda_error(s, r, "cuModuleGetFunction");
      (void)s->cu->cuModuleUnload(u->mod);
      u->mod = NULL;
      return status_note(st, "kernel %s (%s)", name, m->names[i]);
    }
    uint32_t shared = m->geo[i].shared_bytes;
    if (shared > CUDA_DEFAULT_SHARED_BYTES) {
      r = s->cu->cuFuncSetAttribute(m->fns[i], CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES,
                                    (int)shared);
      if (r) {
        hlo_status st = cuda_error(s, r, "cuFuncSetAttribute (dynamic shared memory)");
        (void)s->cu->cuModuleUnload(u->mod);
        u->mod = NULL;
        return status_note(st, "kernel %s (%s) asks %u bytes, the device allows %d", name,
                           m->names[i], shared, s->max_shared_optin);
      }
    }
  }
  return NULL;
}

/* Kernels a unit holds at least: NVRTC's fixed cost per program is a few
 * ms, a kernel's own compile some tens. */
#define CUDA_UNIT_MIN_KERNELS 4

/* How many units n kernels are compiled in: one a core of this machine
 * (HLO_NUM_THREADS when set), each of CUDA_UNIT_MIN_KERNELS kernels at
 * least. */
static uint32_t unit_count(uint32_t n) {
  long cores = sysconf(_SC_NPROCESSORS_ONLN);
  const char *e = getenv("HLO_NUM_THREADS");
  if (e && atoi(e) > 0) cores = atoi(e);
  if (cores < 1) cores = 1;
  if (cores > 64) cores = 64;
  uint32_t u = (n + CUDA_UNIT_MIN_KERNELS - 1) / CUDA_UNIT_MIN_KERNELS;
  if (u > (uint32_t)cores) u = (uint32_t)cores;
  return u ? u : 1;
}

typedef struct unit_job {
  cuda_unit *units;
  uint32_t nunits;
  int arch;
  _Atomic uint32_t next;
} unit_job;

/* Compiles the units not yet compiled, taking the next one until none is
 * left (NVRTC is thread-safe across programs). */
static void *compile_units(void *arg) {
  unit_job *j = arg;
  for (;;) {
    uint32_t u = atomic_fetch_add(&j->next, 1);
    if (u >= j->nunits) return NULL;
    cuda_unit *c = &j->units[u];
    if (c->cubin) continue;
    char name[40];
    snprintf(name, sizeof name, "hlo_kernels_%u.cu", u);
    c->st = nvrtc_compile(c->source, name, j->arch, &c->cubin, &c->cubin_len);
  }
}

/* Splits m's kernels into units (unit_count, contiguous runs), emits each,
 * takes the cubin of a unit whose key is among opts' objects, compiles the
 * others in parallel (a thread a unit, the calling one included), loads
 * them all and fills m->objects. Counts units served and compiled, and
 * adds the time spent printing them to *emit_ms. */
static hlo_status make_units(const cuda_device_state *s, backend_module *m, const kernel **cptr,
                             const char **names, const backend_compile_options *opts,
                             uint32_t *from_objects, uint32_t *compiled, double *emit_ms) {
  double t0 = now_ms();
  uint32_t n = m->n, nu = unit_count(n);
  m->units = calloc(nu, sizeof *m->units);
  m->objects = calloc(nu, sizeof *m->objects);
  if (!m->units || !m->objects) return status_new(HLO_RESOURCE_EXHAUSTED, "out of memory");
  m->nunits = nu;
  for (uint32_t u = 0; u < nu; u++) {
    cuda_unit *c = &m->units[u];
    c->lo = (uint32_t)((uint64_t)n * u / nu);
    c->hi = (uint32_t)((uint64_t)n * (u + 1) / nu);
    strbuf src;
    sb_init(&src);
    hlo_status st = cuda_emit_module(cptr + c->lo, names + c->lo, c->hi - c->lo, &src);
    if (!st && src.oom) st = status_new(HLO_RESOURCE_EXHAUSTED, "out of memory");
    if (!st) c->source = sb_take(&src);
    sb_free(&src);
    if (!st && !c->source) st = status_new(HLO_RESOURCE_EXHAUSTED, "out of memory");
    HLO_TRY(st);
    object_key(s->target, c->source, m->objects[u].key);
    for (uint32_t i = 0; opts && i < opts->num_objects && !c->cubin; i++) {
      const backend_object *o = &opts->objects[i];
      if (strncmp(o->key, m->objects[u].key, 33) || !o->bytes || !o->len) continue;
      c->cubin = malloc(o->len); /* our own, aligned copy: module_objects hands it back */
      if (!c->cubin) return status_new(HLO_RESOURCE_EXHAUSTED, "out of memory");
      memcpy(c->cubin, o->bytes, o->len);
      c->cubin_len = o->len;
      c->cached = true;
    }
  }
  *emit_ms += now_ms() - t0;
  unit_job job = {m->units, nu, s->cc_major * 10 + s->cc_minor, 0};
  uint32_t todo = 0;
  for (uint32_t u = 0; u < nu; u++) todo += !m->units[u].cubin;
  pthread_t th[64];
  uint32_t started = 0;
  for (; todo > 1 && started + 1 < todo && started < 64; started++)
    if (pthread_create(&th[started], NULL, compile_units, &job)) break;
  compile_units(&job);
  for (uint32_t t = 0; t < started; t++) pthread_join(th[t], NULL);
  hlo_status st = NULL;
  for (uint32_t u = 0; u < nu && !st; u++) {
    cuda_unit *c = &m->units[u];
    if (c->st) {
      st = c->st;
      c->st = NULL;
      break;
    }
    st = load_unit(s, m, c);
    if (st && c->cached) { /* an object that does not load: compiled after all */
      hlo_status_free(st);
      free(c->cubin);
      c->cubin = NULL;
      c->cached = false;
      st = nvrtc_compile(c->source, "hlo_kernels.cu", job.arch, &c->cubin, &c->cubin_len);
      if (!st) st = load_unit(s, m, c);
    }
    if (st) break;
    *from_objects += c->cached;
    *compiled += !c->cached;
    m->objects[u].bytes = c->cubin;
    m->objects[u].len = c->cubin_len;
  }
  return st;
}

/* m->source: the units' sources one after the other, each with its own
 * preamble (what NVRTC compiled, unit by unit), for module_source and the
 * dump's kernels.cu. Printed once, by make_units (a warm compile prints
 * each unit only to find its key: printing the module a second time as
 * one text cost as much again, ~1 ms of tiny_llama's ~6). */
static hlo_status join_sources(backend_module *m) {
  strbuf src;
  sb_init(&src);
  for (uint32_t u = 0; u < m->nunits; u++) {
    if (m->nunits > 1)
      sb_printf(&src, "/* ---- unit %u of %u: kernels k%u..k%u ---- */\n", u, m->nunits,
                m->units[u].lo, m->units[u].hi ? m->units[u].hi - 1 : 0);
    sb_puts(&src, m->units[u].source ? m->units[u].source : "");
  }
  if (src.oom) {
    sb_free(&src);
    return status_new(HLO_RESOURCE_EXHAUSTED, "out of memory");
  }
  m->source = sb_take(&src);
  if (!m->source) m->source = strdup("");
  return m->source ? NULL : status_new(HLO_RESOURCE_EXHAUSTED, "out of memory");
}

static hlo_status cuda_compile(const kernel *const *ks, uint32_t n,
                               const backend_compile_options *opts, backend_module **out) {
  *out = NULL;
  const cuda_device_state *s = cuda_state();
  HLO_TRY(cuda_make_current(s, "compile"));
  double t0 = now_ms();
  uint32_t cap = n ? n : 1;
  backend_module *m = calloc(1, sizeof *m);
  kernel *copies = calloc(cap, sizeof *copies);
  const kernel **cptr = calloc(cap, sizeof *cptr);
  char (*knames)[24] = calloc(cap, sizeof *knames);
  const char **kname_ptrs = calloc(cap, sizeof *kname_ptrs);
  hlo_status st = NULL;
  if (m) {
    m->n = n;
    m->fns = calloc(cap, sizeof *m->fns);
    m->geo = calloc(cap, sizeof *m->geo);
    m->num_tiles = calloc(cap, sizeof *m->num_tiles);
    m->num_bufs = calloc(cap, sizeof *m->num_bufs);
    m->names = calloc(cap, sizeof *m->names);
  }
  if (!m || !copies || !cptr || !knames || !kname_ptrs || !m->fns || !m->geo || !m->num_tiles ||
      !m->num_bufs || !m->names)
    st = status_new(HLO_RESOURCE_EXHAUSTED, "out of memory");
  for (uint32_t i = 0; i < n && !st; i++) {
    copies[i] = *ks[i];
    cuda_schedule(&copies[i]);
    cptr[i] = &copies[i];
    snprintf(knames[i], sizeof knames[i], "k%u", i);
    kname_ptrs[i] = knames[i];
    m->names[i] = strdup(ks[i]->name ? ks[i]->name : "?");
    if (!m->names[i]) st = status_new(HLO_RESOURCE_EXHAUSTED, "out of memory");
    m->num_bufs[i] = ks[i]->num_inputs + ks[i]->num_outputs;
    if (!st && m->num_bufs[i] > CUDA_MAX_BUFS)
      st = status_at(HLO_UNIMPLEMENTED, &ks[i]->loc,
                     "kernel %s has %u buffers: the cuda backend takes %d at most", ks[i]->name,
                     m->num_bufs[i], CUDA_MAX_BUFS);
    if (!st) {
      m->num_tiles[i] = kernel_num_tiles(&copies[i]);
      m->geo[i] = cuda_launch_geometry(&copies[i], s->num_sms);
    }
  }
  double emit_ms = now_ms() - t0, t1 = now_ms();
  uint32_t from_objects = 0, compiled = 0;
  if (!st && n) st = make_units(s, m, cptr, kname_ptrs, opts, &from_objects, &compiled, &emit_ms);
  if (!st) st = join_sources(m);
  if (!st && opts && opts->dump_dir) st = write_file(opts->dump_dir, "kernels.cu", m->source);
  if (opts && opts->stats) {
    backend_compile_stats *stats = opts->stats;
    stats->units = m ? m->nunits : 0;
    stats->from_objects = from_objects;
    stats->from_kernel_cache = 0;
    stats->compiled = compiled;
    stats->emit_ms = emit_ms;
    stats->cc_ms = now_ms() - t1;
  }
  free(copies);
  free(cptr);
  free(knames);
  free(kname_ptrs);
  if (st) {
    cuda_module_destroy(m);
    return st;
  }
  *out = m;
  return NULL;
}

static const char *cuda_module_source(const backend_module *m) { return m ? m->source : NULL; }

static uint32_t cuda_module_objects(const backend_module *m, const backend_object **out) {
  *out = NULL;
  if (!m || !m->objects) return 0;
  for (uint32_t u = 0; u < m->nunits; u++)
    if (!m->units[u].mod || !m->units[u].cubin) return 0;
  *out = m->objects;
  return m->nunits;
}

/* The kernel's parameter block (emit_cuda.h): CUDA_MAX_BUFS pointers by value. */
typedef struct cuda_bufs {
  void *p[CUDA_MAX_BUFS];
} cuda_bufs;

static hlo_status cuda_launch(backend_module *m, uint32_t index, void *const *bufs) {
  if (!m || index >= m->n)
    return status_new(HLO_INVALID_ARGUMENT, "launch: no kernel %u in the module", index);
  const cuda_device_state *s = cuda_state();
  HLO_TRY(cuda_make_current(s, "launch"));
  cuda_geometry g = m->geo[index];
  long long tile_begin = 0, tile_end = m->num_tiles[index];
  if (tile_end <= 0 || g.grid_x == 0 || g.block_x == 0) return NULL;
  cuda_bufs b;
  memset(&b, 0, sizeof b);
  for (uint32_t i = 0; i < m->num_bufs[index]; i++) b.p[i] = bufs[i];
  void *params[] = {&b, &tile_begin, &tile_end};
  CUresult r = s->cu->cuLaunchKernel(m->fns[index], g.grid_x, 1, 1, g.block_x, 1, 1,
                                     g.shared_bytes, s->stream, params, NULL);
  if (r) {
    char what[160];
    snprintf(what, sizeof what, "launching kernel %u (%s, grid %u, block %u, %u shared bytes)",
             index, m->names[index], g.grid_x, g.block_x, g.shared_bytes);
    return cuda_error(s, r, what);
  }
  return NULL;
}

static void *cuda_alloc(size_t bytes) {
  const cuda_device_state *s = cuda_state();
  hlo_status st = cuda_make_current(s, "alloc");
  if (st) {
    hlo_status_free(st);
    return NULL;
  }
  CUdeviceptr p = 0;
  if (s->cu->cuMemAllocAsync(&p, bytes ? bytes : 1, s->stream) != CUDA_SUCCESS) return NULL;
  return (void *)(uintptr_t)p;
}

static void cuda_free(void *p) {
  if (!p) return;
  const cuda_device_state *s = cuda_state();
  hlo_status st = cuda_make_current(s, "free");
  if (!st) (void)s->cu->cuMemFreeAsync((CUdeviceptr)(uintptr_t)p, s->stream);
  hlo_status_free(st);
}

static hlo_status cuda_copy(void *dst, const void *src, size_t n) {
  if (!n) return NULL;
  const cuda_device_state *s = cuda_state();
  HLO_TRY(cuda_make_current(s, "copy"));
  /* unified addressing: the driver tells host from device pointers */
  CUresult r = s->cu->cuMemcpyAsync((CUdeviceptr)(uintptr_t)dst, (CUdeviceptr)(uintptr_t)src, n,
                                    s->stream);
  if (r) return cuda_error(s, r, "copy (cuMemcpyAsync)");
  r = s->cu->cuStreamSynchronize(s->stream);
  return r ? cuda_error(s, r, "copy (cuStreamSynchronize)") : NULL;
}

static hlo_status cuda_synchronize(void) {
  const cuda_device_state *s = cuda_state();
  HLO_TRY(cuda_make_current(s, "synchronize"));
  CUresult r = s->cu->cuStreamSynchronize(s->stream);
  return r ? cuda_error(s, r, "cuStreamSynchronize") : NULL;
}

/* ---- graphs (backend.h: graph_begin ... graph_destroy) ----
 * Stream capture in RELAXED mode (cuda.h: the calling thread may still
 * make calls that are unsafe during a capture, such as a library's
 * first-use setup; the runtime records no allocation, copy or
 * synchronisation) of a stream of the calling thread's own: between
 * graph_begin and graph_end every slot called on this thread enqueues on
 * it (cuda_state gives the thread a copy of the state with that stream),
 * so work other threads enqueue meanwhile on the backend's stream runs as
 * usual instead of being recorded. cuStreamEndCapture gives the graph,
 * cuGraphInstantiateWithFlags the executable graph that cuGraphLaunch
 * replays on the backend's stream; the graph itself is destroyed at once
 * (the executable one holds what it needs). */

static hlo_status cuda_graph_begin(void) {
  if (tl_capturing)
    return status_new(HLO_INTERNAL, "cuda: graph_begin: a capture is open on this thread");
  const cuda_device_state *s = cuda_state();
  HLO_TRY(cuda_make_current(s, "graph_begin"));
  CUresult r = CUDA_SUCCESS;
  if (!tl_stream) {
    r = s->cu->cuStreamCreate(&tl_stream, CU_STREAM_NON_BLOCKING);
    if (r) {
      tl_stream = NULL;
      return cuda_error(s, r, "graph_begin (cuStreamCreate)");
    }
  }
  r = s->cu->cuStreamBeginCapture_v2(tl_stream, CU_STREAM_CAPTURE_MODE_RELAXED);
  if (r) return cuda_error(s, r, "graph_begin (cuStreamBeginCapture)");
  tl_state = *s;
  tl_state.stream = tl_stream;
  tl_capturing = true;
  return NULL;
}

static hlo_status cuda_graph_end(void **graph) {
  *graph = NULL;
  if (!tl_capturing)
    return status_new(HLO_INTERNAL, "cuda: graph_end: no capture is open on this thread");
  cuda_graph_cond_abort(); /* bodies left open by an error: ended, the capture fails below */
  tl_capturing = false;
  const cuda_device_state *s = cuda_state();
  HLO_TRY(cuda_make_current(s, "graph_end"));
  CUgraph g = NULL;
  CUresult r = s->cu->cuStreamEndCapture(tl_stream, &g);
  if (r) {
    if (g) (void)s->cu->cuGraphDestroy(g);
    return cuda_error(s, r, "graph_end (cuStreamEndCapture)");
  }
  if (!g) return status_new(HLO_INTERNAL, "cuda: graph_end: cuStreamEndCapture gave no graph");
  CUgraphExec e = NULL;
  r = s->cu->cuGraphInstantiateWithFlags(&e, g, 0);
  (void)s->cu->cuGraphDestroy(g);
  if (r) return cuda_error(s, r, "graph_end (cuGraphInstantiateWithFlags)");
  if (!e)
    return status_new(HLO_INTERNAL, "cuda: graph_end: cuGraphInstantiateWithFlags gave no graph");
  *graph = e;
  return NULL;
}

static hlo_status cuda_graph_launch(void *graph) {
  if (!graph) return status_new(HLO_INVALID_ARGUMENT, "cuda: graph_launch: no graph");
  const cuda_device_state *s = cuda_state();
  HLO_TRY(cuda_make_current(s, "graph_launch"));
  CUresult r = s->cu->cuGraphLaunch((CUgraphExec)graph, s->stream);
  return r ? cuda_error(s, r, "cuGraphLaunch") : NULL;
}

static void cuda_graph_destroy(void *graph) {
  if (!graph) return;
  const cuda_device_state *s = cuda_state();
  hlo_status st = cuda_make_current(s, "graph_destroy");
  /* a launch still queued runs to its end (cuda.h: cuGraphExecDestroy) */
  if (!st) (void)s->cu->cuGraphExecDestroy((CUgraphExec)graph);
  hlo_status_free(st);
}

/* The recording's dependency set (backend.h: graph_deps_get / _set): the
 * capture stream's, read with cuStreamGetCaptureInfo_v3 and replaced with
 * cuStreamUpdateCaptureDependencies_v2 (CU_STREAM_SET_CAPTURE_DEPENDENCIES,
 * no edge data: plain edges). So one stream records a DAG. */
static hlo_status cuda_graph_deps_get(void **nodes, size_t cap, size_t *n) {
  *n = 0;
  CUstream cs = cuda_capture_stream();
  if (!cs) return status_new(HLO_INVALID_ARGUMENT, "cuda: graph_deps_get: no recording");
  const cuda_device_state *s = cuda_state();
  if (!s->cu->cuStreamGetCaptureInfo_v3)
    return status_new(HLO_UNAVAILABLE, "cuda: the driver has no cuStreamGetCaptureInfo_v3");
  HLO_TRY(cuda_make_current(s, "graph_deps_get"));
  int status = 0;
  CUgraph graph = NULL;
  const CUgraphNode *deps = NULL;
  const CUgraphEdgeData *edges = NULL;
  size_t nd = 0;
  CUresult r = s->cu->cuStreamGetCaptureInfo_v3(cs, &status, NULL, &graph, &deps, &edges, &nd);
  if (r) return cuda_error(s, r, "graph_deps_get (cuStreamGetCaptureInfo)");
  if (status != CU_STREAM_CAPTURE_STATUS_ACTIVE)
    return status_new(HLO_INTERNAL, "cuda: graph_deps_get: the capture is not active");
  for (size_t i = 0; i < nd && i < cap; i++) nodes[i] = deps[i];
  *n = nd;
  return NULL;
}

static hlo_status cuda_graph_deps_set(void *const *nodes, size_t n) {
  CUstream cs = cuda_capture_stream();
  if (!cs) return status_new(HLO_INVALID_ARGUMENT, "cuda: graph_deps_set: no recording");
  const cuda_device_state *s = cuda_state();
  if (!s->cu->cuStreamUpdateCaptureDependencies_v2)
    return status_new(HLO_UNAVAILABLE,
                      "cuda: the driver has no cuStreamUpdateCaptureDependencies_v2");
  HLO_TRY(cuda_make_current(s, "graph_deps_set"));
  CUresult r = s->cu->cuStreamUpdateCaptureDependencies_v2(cs, (CUgraphNode *)nodes, NULL, n,
                                                            CU_STREAM_SET_CAPTURE_DEPENDENCIES);
  return r ? cuda_error(s, r, "graph_deps_set (cuStreamUpdateCaptureDependencies)") : NULL;
}

static const char *cuda_target(const backend_compile_options *o) {
  (void)o;
  const cuda_device_state *s = cuda_state();
  return s ? s->target : "cuda (not started)";
}

static const backend cuda_backend = {
    .name = "cuda",
    .device_memory = true,
    .compile = cuda_compile,
    .module_source = cuda_module_source,
    .launch = cuda_launch,
    .launch_tiles = NULL,
    .module_destroy = cuda_module_destroy,
    .module_objects = cuda_module_objects,
    .target = cuda_target,
    .alloc = cuda_alloc,
    .free = cuda_free,
    .copy = cuda_copy,
    .synchronize = cuda_synchronize,
    .gemm = cuda_gemm,
    .gemm_epilogue = NULL,
    .conv = cuda_conv,
    .conv_takes = cuda_conv_takes,
    .conv_scratch_bytes = cuda_conv_scratch_bytes,
    .conv_tuning_export = cuda_cudnn_export,
    .conv_tuning_import = cuda_cudnn_import,
    .window_takes = cuda_window_takes,
    .reduce_window = cuda_reduce_window,
    .select_and_scatter = cuda_select_and_scatter,
    .sort_takes = cuda_sort_takes,
    .sort = cuda_sort,
    .copy_box = cuda_copy_box, .dyn_box = true, .fill_box = cuda_fill_box, .gather_rows = cuda_gather_rows,
    .scatter_rows = cuda_scatter_rows,
    .graph_begin = cuda_graph_begin, .graph_end = cuda_graph_end,
    .graph_launch = cuda_graph_launch, .graph_destroy = cuda_graph_destroy,
    .graph_cond_takes = cuda_graph_cond_takes, .graph_cond_begin = cuda_graph_cond_begin,
    .graph_cond_set = cuda_graph_cond_set, .graph_cond_next = cuda_graph_cond_next,
    .graph_cond_end = cuda_graph_cond_end,
    .graph_deps_get = cuda_graph_deps_get, .graph_deps_set = cuda_graph_deps_set,
};

hlo_status backend_cuda(const backend **out) {
  *out = NULL;
  pthread_once(&start_once, start);
  if (start_code != HLO_OK) return status_new(start_code, "%s", start_message);
  *out = &cuda_backend;
  return NULL;
}
