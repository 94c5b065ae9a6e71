/* cpu_devmem.c — a testing backend: the CPU backend with its buffers kept
 * apart from the host's, as a GPU's are (backend_cpu_devmem, backend.h).
 *
 * It has the CPU backend's compile, launch and gemm slots, but says
 * device_memory = true, so that the runtime treats every buffer it gets
 * from `alloc` as memory the host must not touch: the executable keeps a
 * host mirror and moves bytes through `copy` (runtime/executable_cpu.h).
 * Its `alloc` fills each new allocation with 0xA5 bytes, so a buffer a
 * kernel reads before the runtime uploaded it holds garbage, never the
 * right answer by luck. Like CUDA v0 it has no gemm_epilogue and no
 * launch_tiles (no GEMM output fusion), and no conv / window / sort slots:
 * those ops run on the host mirror through the interpreter.
 *
 * The counters (cpu_devmem_counters) let tests prove what moved: every
 * `copy` call, its bytes, and every `alloc`. */
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include "backend/backend.h"

/* The counters since the last reset (any pointer may be NULL); `reset`
 * zeroes them after reading. Declared by the tests that use it. */
void cpu_devmem_counters(uint64_t *copies, uint64_t *bytes, uint64_t *allocs, bool reset);

static uint64_t n_copies, n_bytes, n_allocs;

void cpu_devmem_counters(uint64_t *copies, uint64_t *bytes, uint64_t *allocs, bool reset) {
  if (copies) *copies = __atomic_load_n(&n_copies, __ATOMIC_RELAXED);
  if (bytes) *bytes = __atomic_load_n(&n_bytes, __ATOMIC_RELAXED);
  if (allocs) *allocs = __atomic_load_n(&n_allocs, __ATOMIC_RELAXED);
  if (reset) {
    __atomic_store_n(&n_copies, 0, __ATOMIC_RELAXED);
    __atomic_store_n(&n_bytes, 0, __ATOMIC_RELAXED);
    __atomic_store_n(&n_allocs, 0, __ATOMIC_RELAXED);
  }
}

static void *devmem_alloc(size_t bytes) {
  size_t n = bytes ? (bytes + 63) & ~(size_t)63 : 64;
  void *p = aligned_alloc(64, n);
  if (p) {
    memset(p, 0xA5, n); /* poison: a read before an upload gives garbage */
    __atomic_add_fetch(&n_allocs, 1, __ATOMIC_RELAXED);
  }
  return p;
}

static void devmem_free(void *p) { free(p); }

static hlo_status devmem_copy(void *dst, const void *src, size_t n) {
  __atomic_add_fetch(&n_copies, 1, __ATOMIC_RELAXED);
  __atomic_add_fetch(&n_bytes, n, __ATOMIC_RELAXED);
  if (n) memmove(dst, src, n);
  return NULL;
}

static hlo_status devmem_synchronize(void) { return NULL; }

static backend devmem;
static pthread_once_t devmem_once = PTHREAD_ONCE_INIT;

static void devmem_init(void) {
  const backend *c = backend_cpu();
  backend b = {0};
  b.name = "cpu-devmem";
  b.device_memory = true;
  b.compile = c->compile;
  b.module_source = c->module_source;
  b.launch = c->launch;
  b.module_destroy = c->module_destroy;
  b.module_objects = c->module_objects;
  b.target = c->target;
  b.alloc = devmem_alloc;
  b.free = devmem_free;
  b.copy = devmem_copy;
  b.synchronize = devmem_synchronize;
  b.gemm = c->gemm;
  devmem = b;
}

const backend *backend_cpu_devmem(void) {
  pthread_once(&devmem_once, devmem_init);
  return &devmem;
}
