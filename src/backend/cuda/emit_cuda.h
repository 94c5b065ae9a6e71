/* emit_cuda.h — the CUDA dialect of the one kernel printer
 * (codegen/cstyle.h) and the GPU schedule of a kernel.
 *
 * A kernel (codegen/kernel.h) is printed as
 *   extern "C" __global__ void NAME(hlo_bufs B, long long tile_begin,
 *                                   long long tile_end)
 * (rows in registers: `extern "C" __global__ __launch_bounds__(BLOCK) void
 * NAME(...)`, BLOCK the launch's block size)
 * where hlo_bufs (defined in the preamble) is
 *   typedef struct { void *p[CUDA_MAX_BUFS]; } hlo_bufs;
 * passed BY VALUE (no device-side pointer array; cuLaunchKernel's
 * kernelParams = { &bufs_struct, &tile_begin, &tile_end }, with
 * tile_begin/tile_end `long long`): p[i] are the kernel's inputs then its
 * outputs, device pointers in storage layout (bf16/f16 as 16-bit words,
 * i1 as bytes), unused slots anything. Tiles [tile_begin, tile_end) of
 * kernel_num_tiles are computed (normally [0, kernel_num_tiles(k))).
 *
 * How a backend launches kernel k (after cuda_schedule(k), emitted with
 * cuda_emit_module, compiled with nvrtc_compile, loaded with
 * cuModuleLoadData and found with cuModuleGetFunction(names[i])):
 *   cuda_geometry g = cuda_launch_geometry(k, num_sms);
 *   if (g.grid_x == 0) nothing to do (no tiles);
 *   if (g.shared_bytes > 48 KiB) once per function:
 *     cuFuncSetAttribute(f, CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES,
 *                        g.shared_bytes)   (at most 64 KiB: kernel.h's
 *                                           KERNEL_MAX_TEMP_BYTES)
 *   cuLaunchKernel(f, g.grid_x, 1, 1, g.block_x, 1, 1, g.shared_bytes,
 *                  stream, params, NULL);
 * Every tile is computed whatever the grid (the kernels loop over the
 * tiles with a grid-stride loop), so a smaller grid is correct too, but
 * block_x must be exactly g.block_x (a kernel whose rows are spread over
 * a block assumes it). */
#ifndef HLO_BACKEND_CUDA_EMIT_CUDA_H
#define HLO_BACKEND_CUDA_EMIT_CUDA_H
#include "codegen/cstyle.h"
#include "codegen/kernel.h"
#include "support/strbuf.h"

#define CUDA_MAX_BUFS 64

/* The CUDA dialect (static, lent). */
const cstyle_dialect *cuda_dialect(void);

/* Rewrites k's schedule (k->sched) for a GPU; the kernel's meaning does
 * not change. Call before cuda_emit_module and cuda_launch_geometry. Every
 * parallel dim becomes a thread dim with tiles of 1 (a tile is one point,
 * or one row of a reduction; consecutive tiles are consecutive innermost
 * indices, so a warp's loads and stores coalesce) but the innermost dim
 * of an elementwise kernel in chunks (CUDA_FORM_CHUNKS: tiles of `vec`);
 * reduction lanes are dropped. Rows held in registers (CUDA_FORM_REG_ROWS)
 * keep row_threads 0; longer rows whose reduction has identities, and rows
 * of more than 32 elements whose reduction has none, run one row per block
 * of row_threads (kernel.h) = the innermost row dim (the row, with several
 * row dims) rounded up to a power of two, 32..256; the others one row per
 * thread. */
void cuda_schedule(kernel *k);

/* Launch geometry of kernel k (scheduled by cuda_schedule) for a device
 * with `num_sms` multiprocessors (0: unknown): grid and block sizes (x
 * only) and the dynamic shared memory bytes (the temporaries of a kernel
 * whose rows are spread over a block, else 0). One tile per thread (a
 * point or a chunk): blocks of 256 threads (fewer, a multiple of 32, under
 * 256 tiles) and ceil(tiles / block) blocks; rows in registers:
 * row_threads * rows_per_block threads (cuda_kernel_form) and one block
 * per rows_per_block rows; one row per block: row_threads threads and one
 * block per row. With num_sms > 0 the grid is capped at what the device
 * holds at once (num_sms * 2048 / block: the kernels loop over their
 * tiles); always at 2^31 - 1; 0 when there are no tiles. */
typedef struct cuda_geometry {
  uint32_t grid_x, block_x;
  uint32_t shared_bytes;
} cuda_geometry;
cuda_geometry cuda_launch_geometry(const kernel *k, int num_sms);

/* How a kernel scheduled by cuda_schedule is computed (emit_cuda.c says
 * why):
 *   CUDA_FORM_POINTS      one tile per thread (elementwise kernels whose
 *                         innermost dim takes no chunks; short rows whose
 *                         reduction has no combiner identity);
 *   CUDA_FORM_CHUNKS      elementwise, a tile is `vec` contiguous points of
 *                         the innermost dim (16-byte loads and stores where
 *                         contiguous and aligned);
 *   CUDA_FORM_REG_ROWS    rows of at most 8192 elements whose reductions
 *                         have identities: a row in the registers of
 *                         `row_threads` threads (a power of two, 1..1024),
 *                         `chunks` chunks of `vec` contiguous elements
 *                         each, `rows_per_block` rows per block, every
 *                         input read once and every output written once;
 *   CUDA_FORM_BLOCK_ROWS  longer rows: one row per block of `row_threads`
 *                         threads (kernel.h), each stage a pass over the
 *                         row, temporaries in shared memory. */
typedef enum cuda_form {
  CUDA_FORM_POINTS,
  CUDA_FORM_CHUNKS,
  CUDA_FORM_REG_ROWS,
  CUDA_FORM_BLOCK_ROWS
} cuda_form;
typedef struct cuda_form_info {
  cuda_form form;
  uint32_t vec, chunks, row_threads, rows_per_block; /* 1 where they do not apply */
} cuda_form_info;
cuda_form_info cuda_kernel_form(const kernel *k);

/* Appends to `out` one CUDA C translation unit holding the preamble and
 * kernels ks[0..n), kernel i named names[i] (a C identifier; extern "C",
 * so cuModuleGetFunction finds it by that name), each preceded by a
 * comment giving its launch geometry. The unit includes no header (NVRTC
 * needs none). Errors: HLO_UNIMPLEMENTED at the kernel's location for an
 * op or type the dialect lacks, or a kernel of more than CUDA_MAX_BUFS
 * buffers; HLO_INTERNAL for a bad schedule (kernel_check_schedule). */
HLO_MUST_USE hlo_status cuda_emit_module(const kernel *const *ks, const char *const *names,
                                         uint32_t n, strbuf *out);

#endif
