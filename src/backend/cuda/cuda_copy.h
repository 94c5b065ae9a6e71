/* cuda_copy.h — the CUDA backend's copy_box, fill_box, gather_rows and
 * scatter_rows slots (backend.h: backend_box, backend_rows): a box of elements copied
 * between, or filled in, device buffers, and rows gathered / scattered at
 * device indices, by the kernels of one CUDA C source (cuda_copy_source),
 * compiled by NVRTC for the device's architecture on the first call, once
 * per process, and loaded with cuModuleLoadData (as cuda_window.c's
 * kernels). The runtime runs dynamic_slice, dynamic_update_slice, pad,
 * splat fills and row gathers / scatters (x[idx], x.at[idx].add,
 * take_along_axis and its gradient) on them
 * (runtime/executable_cpu_copy.c), so those steps no longer move their
 * operands across PCIe.
 *
 * The kernel is generic over a parameter block (cuda_copy_desc, passed by
 * value): one thread per element of the box, grid-stride over 64-bit
 * element indices; a thread turns its index into the box's coordinates
 * (row-major) and reads / writes at the strided offsets. Element sizes 1,
 * 2, 4, 8 and 16 bytes (16: one uint4 when both buffers are 16-byte
 * aligned, else two 8-byte words).
 *
 * Fast path (cuda_copy_make_desc): when the innermost dim is contiguous on
 * both sides (stride 1) and the buffers, the offsets, the outer strides
 * and the innermost extent allow it, elements are regrouped into wider
 * ones, up to 16 bytes per thread (a row of 256 f32 copies as 64 uint4
 * moves); a fill's value is repeated to the wider element.
 *
 * Memory: every pointer is device memory of the backend (cuda_backend.c);
 * the calls enqueue one kernel on the backend's one stream and return
 * without waiting. */
#ifndef HLO_BACKEND_CUDA_CUDA_COPY_H
#define HLO_BACKEND_CUDA_CUDA_COPY_H
#include <stdbool.h>
#include <stdint.h>
#include "backend/backend.h"
#include "hlo/hlo.h"

/* The kernel's parameter block (the source's cb_desc, field for field):
 * per-dim lists have `rank` entries, the rest zero. */
typedef struct cuda_copy_desc {
  int64_t rank;
  int64_t esize;          /* 1, 2, 4, 8 or 16 bytes */
  int64_t n;              /* elements of the box */
  int64_t fill;           /* 1: write `value`, src unused */
  int64_t aligned16;      /* esize 16 and both buffers 16-byte aligned */
  int64_t dst_off, src_off;
  int64_t unused0;
  int64_t dims[BACKEND_BOX_MAX_RANK];
  int64_t ds[BACKEND_BOX_MAX_RANK]; /* dst strides (elements) */
  int64_t ss[BACKEND_BOX_MAX_RANK]; /* src strides (elements) */
  uint8_t value[16];      /* fill: the element, repeated to esize */
  /* start indices read on the device (backend_box's ndyn), in elements of
   * esize: offset += clamp(*dyn_ptr[d], 0, dyn_max[d]) * dyn_stride[d] */
  int64_t ndyn, dyn_size, dyn_signed, dyn_dst;
  int64_t dyn_max[BACKEND_BOX_MAX_RANK], dyn_stride[BACKEND_BOX_MAX_RANK];
  uint64_t dyn_ptr[BACKEND_BOX_MAX_RANK]; /* device addresses */
} cuda_copy_desc;

/* hlo_gather_rows' parameter block (the source's gr_desc): backend_rows
 * with rows moved in words of wsize bytes (the widest of 16, 8, 4, 2, 1
 * dividing the row and both buffers' alignment), `words` a row. */
typedef struct cuda_gather_desc {
  int64_t nidx, per_batch, nrows, words, wsize, idx_size, idx_signed, unused0;
} cuda_gather_desc;

/* The CUDA C source of the kernels (static): extern "C" hlo_copy_box(
 * cuda_copy_desc, void *dst, const void *src) and hlo_gather_rows(
 * cuda_gather_desc, void *out, const void *src, const void *idx): one
 * thread per word of the output, the index read and clamped per word. */
const char *cuda_copy_source(void);

/* Makes the kernel's parameter block for box b on buffers dst and src
 * (src NULL for a fill; value: the fill's element of b->esize bytes, else
 * NULL), regrouping into wider elements where it can (the fast path
 * above); dims of extent 1 are kept. Needs no GPU. Errors:
 * HLO_INVALID_ARGUMENT for a rank past BACKEND_BOX_MAX_RANK or another
 * element size. */
HLO_MUST_USE hlo_status cuda_copy_make_desc(const backend_box *b, const void *dst,
                                            const void *src, const void *value,
                                            cuda_copy_desc *out);

/* backend.copy_box / backend.fill_box on the GPU (contract in backend.h).
 * The first call compiles and loads the kernel (once per process; a
 * failure is remembered and given again). Errors: HLO_INVALID_ARGUMENT as
 * cuda_copy_make_desc, HLO_UNAVAILABLE (the backend is not started, no
 * NVRTC), HLO_INTERNAL (the compile, the load or the launch failed).
 * Thread-safe. */
HLO_MUST_USE hlo_status cuda_copy_box(void *dst, const void *src, const backend_box *box);
HLO_MUST_USE hlo_status cuda_fill_box(void *dst, const void *value, const backend_box *box);

/* gather_rows' parameter block for r on out and src. Needs no GPU.
 * Errors: HLO_INVALID_ARGUMENT for another index size or sizes that are
 * not positive (nidx and, with it, per_batch may be 0). */
HLO_MUST_USE hlo_status cuda_gather_make_desc(const backend_rows *r, const void *out,
                                              const void *src, cuda_gather_desc *d);
/* backend.gather_rows on the GPU (contract in backend.h); errors as
 * cuda_copy_box's and cuda_gather_make_desc's. Thread-safe. */
HLO_MUST_USE hlo_status cuda_gather_rows(void *out, const void *src, const void *idx,
                                         const backend_rows *r);
/* scatter_rows' parameter block (the same struct: unused0 the op, 0 set,
 * 1..4 add of f32, f64, i32, i64; an add's word is its element). Errors
 * as cuda_gather_make_desc's, and HLO_INVALID_ARGUMENT for another add
 * type or rows not a whole number of its elements. */
HLO_MUST_USE hlo_status cuda_scatter_make_desc(const backend_rows *r, const void *out,
                                               const void *upd, cuda_gather_desc *d);
/* backend.scatter_rows on the GPU (contract in backend.h): one thread per
 * (batch, word of a row) walks the batch's indices in order, so repeated
 * rows are updated in the interpreter's order (no atomics; deterministic).
 * Errors as cuda_scatter_make_desc's and cuda_copy_box's. Thread-safe. */
HLO_MUST_USE hlo_status cuda_scatter_rows(void *out, const void *upd, const void *idx,
                                          const backend_rows *r);

#endif /* HLO_BACKEND_CUDA_CUDA_COPY_H */
