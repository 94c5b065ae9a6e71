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
 * It has copy_box, fill_box, gather_rows and scatter_rows (plain C
 * loops), so that the runtime's device path of dynamic_slice,
 * dynamic_update_slice, pad and the row gather / scatter runs here as on
 * a GPU.
 *
 * The counters (cpu_devmem_counters, cpu_devmem_box_calls) let tests
 * prove what moved: every `copy` call, its bytes, every `alloc`, and
 * every copy_box / fill_box / gather_rows / scatter_rows call. */
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include "backend/backend.h"
#include "support/status.h"

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

static uint64_t n_boxes;

/* The number of copy_box / fill_box / gather_rows / scatter_rows calls
 * since the last reset (reset: zeroes it after reading). Declared by the tests that use it. */
uint64_t cpu_devmem_box_calls(bool reset);

uint64_t cpu_devmem_box_calls(bool reset) {
  uint64_t n = __atomic_load_n(&n_boxes, __ATOMIC_RELAXED);
  if (reset) __atomic_store_n(&n_boxes, 0, __ATOMIC_RELAXED);
  return n;
}

static hlo_status box_check(const backend_box *b) {
  if (b->rank > BACKEND_BOX_MAX_RANK)
    return status_new(HLO_INVALID_ARGUMENT, "copy_box: rank %u past %d", b->rank,
                      BACKEND_BOX_MAX_RANK);
  if (b->esize != 1 && b->esize != 2 && b->esize != 4 && b->esize != 8 && b->esize != 16)
    return status_new(HLO_INVALID_ARGUMENT, "copy_box: element size %u", b->esize);
  __atomic_add_fetch(&n_boxes, 1, __ATOMIC_RELAXED);
  return NULL;
}

/* Walks the box in row-major order: src NULL fills with value. A row of
 * the innermost dim is one memcpy when both strides are 1. */
static void box_walk(uint8_t *dst, const uint8_t *src, const uint8_t *value,
                     const backend_box *b) {
  uint32_t r = b->rank;
  size_t es = b->esize;
  for (uint32_t d = 0; d < r; d++)
    if (b->dims[d] <= 0) return;
  int64_t idx[BACKEND_BOX_MAX_RANK] = {0};
  int64_t inner = r ? b->dims[r - 1] : 1;
  int64_t ds = r ? b->dst_strides[r - 1] : 1, ss = r ? b->src_strides[r - 1] : 1;
  for (;;) {
    int64_t doff = b->dst_off, soff = b->src_off;
    for (uint32_t d = 0; d + 1 < r; d++) {
      doff += idx[d] * b->dst_strides[d];
      soff += idx[d] * b->src_strides[d];
    }
    if (src && ds == 1 && ss == 1) {
      memmove(dst + (size_t)doff * es, src + (size_t)soff * es, (size_t)inner * es);
    } else {
      for (int64_t j = 0; j < inner; j++)
        memcpy(dst + (size_t)(doff + j * ds) * es,
               src ? src + (size_t)(soff + j * ss) * es : value, es);
    }
    int d = (int)r - 2;
    while (d >= 0 && ++idx[d] == b->dims[d]) idx[d--] = 0;
    if (d < 0) return;
  }
}

/* The integer of `size` bytes at p (signed or not). */
static int64_t read_index(const void *p, uint32_t size, bool is_signed) {
  switch (size) {
  case 1: return is_signed ? (int64_t) * (const int8_t *)p : (int64_t) * (const uint8_t *)p;
  case 2: return is_signed ? (int64_t) * (const int16_t *)p : (int64_t) * (const uint16_t *)p;
  case 4: return is_signed ? (int64_t) * (const int32_t *)p : (int64_t) * (const uint32_t *)p;
  default: return *(const int64_t *)p;
  }
}

/* copy_box with start indices read in this "device" memory (backend_box's
 * ndyn), as the CUDA kernel does. */
static hlo_status devmem_copy_box(void *dst, const void *src, const backend_box *box) {
  HLO_TRY(box_check(box));
  if (box->ndyn > BACKEND_BOX_MAX_RANK ||
      (box->ndyn && box->dyn_size != 1 && box->dyn_size != 2 && box->dyn_size != 4 &&
       box->dyn_size != 8))
    return status_new(HLO_INVALID_ARGUMENT, "copy_box: %u start indices of %u bytes", box->ndyn,
                      box->dyn_size);
  backend_box b = *box;
  for (uint32_t d = 0; d < box->ndyn; d++) {
    int64_t v = read_index(box->dyn_index[d], box->dyn_size, box->dyn_signed);
    v = v < 0 ? 0 : v > box->dyn_max[d] ? box->dyn_max[d] : v;
    *(box->dyn_dst ? &b.dst_off : &b.src_off) += v * box->dyn_stride[d];
  }
  box_walk(dst, src, NULL, &b);
  return NULL;
}

static hlo_status devmem_gather_rows(void *out, const void *src, const void *idx,
                                     const backend_rows *r) {
  uint32_t is = r->idx_size;
  if (is != 1 && is != 2 && is != 4 && is != 8)
    return status_new(HLO_INVALID_ARGUMENT, "gather_rows: index size %u", is);
  __atomic_add_fetch(&n_boxes, 1, __ATOMIC_RELAXED);
  const uint8_t *ip = idx;
  for (int64_t i = 0; i < r->nidx; i++) {
    int64_t v = 0;
    if (is == 1) v = r->idx_signed ? (int64_t)((const int8_t *)ip)[i] : ((const uint8_t *)ip)[i];
    if (is == 2) v = r->idx_signed ? (int64_t)((const int16_t *)ip)[i] : ((const uint16_t *)ip)[i];
    if (is == 4) v = r->idx_signed ? (int64_t)((const int32_t *)ip)[i] : ((const uint32_t *)ip)[i];
    if (is == 8) v = ((const int64_t *)ip)[i];
    v = v < 0 ? 0 : v > r->nrows - 1 ? r->nrows - 1 : v;
    int64_t row = (i / r->per_batch) * r->nrows + v;
    memcpy((uint8_t *)out + i * r->row_bytes, (const uint8_t *)src + row * r->row_bytes,
           (size_t)r->row_bytes);
  }
  return NULL;
}

static int64_t devmem_index(const backend_rows *r, const void *idx, int64_t i) {
  const uint8_t *ip = idx;
  switch (r->idx_size) {
  case 1: return r->idx_signed ? (int64_t)((const int8_t *)ip)[i] : ((const uint8_t *)ip)[i];
  case 2: return r->idx_signed ? (int64_t)((const int16_t *)ip)[i] : ((const uint16_t *)ip)[i];
  case 4: return r->idx_signed ? (int64_t)((const int32_t *)ip)[i] : ((const uint32_t *)ip)[i];
  default: return ((const int64_t *)ip)[i];
  }
}

static hlo_status devmem_scatter_rows(void *out, const void *upd, const void *idx,
                                      const backend_rows *r) {
  uint32_t is = r->idx_size;
  if (is != 1 && is != 2 && is != 4 && is != 8)
    return status_new(HLO_INVALID_ARGUMENT, "scatter_rows: index size %u", is);
  hlo_dtype dt = r->dtype;
  if (r->add && dt != HLO_F32 && dt != HLO_F64 && dt != HLO_I32 && dt != HLO_I64)
    return status_new(HLO_INVALID_ARGUMENT, "scatter_rows: add of element type %d", (int)dt);
  __atomic_add_fetch(&n_boxes, 1, __ATOMIC_RELAXED);
  size_t rb = (size_t)r->row_bytes;
  for (int64_t i = 0; i < r->nidx; i++) {
    int64_t v = devmem_index(r, idx, i);
    if (v < 0 || v >= r->nrows) continue;
    uint8_t *o = (uint8_t *)out + ((i / r->per_batch) * r->nrows + v) * (int64_t)rb;
    const uint8_t *u = (const uint8_t *)upd + i * (int64_t)rb;
    if (!r->add) {
      memcpy(o, u, rb);
    } else if (dt == HLO_F32) {
      for (size_t k = 0; k < rb / 4; k++) ((float *)o)[k] += ((const float *)u)[k];
    } else if (dt == HLO_F64) {
      for (size_t k = 0; k < rb / 8; k++) ((double *)o)[k] += ((const double *)u)[k];
    } else if (dt == HLO_I32) {
      for (size_t k = 0; k < rb / 4; k++)
        ((uint32_t *)o)[k] += ((const uint32_t *)u)[k];
    } else {
      for (size_t k = 0; k < rb / 8; k++)
        ((uint64_t *)o)[k] += ((const uint64_t *)u)[k];
    }
  }
  return NULL;
}

static hlo_status devmem_fill_box(void *dst, const void *value, const backend_box *box) {
  HLO_TRY(box_check(box));
  box_walk(dst, NULL, value, box);
  return NULL;
}

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
  b.copy_box = devmem_copy_box;
  b.dyn_box = true;
  b.fill_box = devmem_fill_box;
  b.gather_rows = devmem_gather_rows;
  b.scatter_rows = devmem_scatter_rows;
  devmem = b;
}

const backend *backend_cpu_devmem(void) {
  pthread_once(&devmem_once, devmem_init);
  return &devmem;
}
