/* cuda_conv.h — the CUDA backend's convolution (the backend's conv,
 * conv_takes and conv_scratch_bytes slots, backend.h): a backend_conv
 * (backend/conv_describe.h) computed on the GPU by one of three paths,
 * chosen per description by cuda_conv_choose (the cost rule, below):
 *   - the tiled implicit GEMM (cv_tile or, for tiles of at most
 *     CUDA_CONV_TILE_SMALL_M x CUDA_CONV_TILE_SMALL_N, cv_tiles; then
 *     cv_ksum): the convolution read as
 *     the GEMM C[m][n] = sum_k A[m][k] B[k][n] of the im2col path (below)
 *     without building A: each thread computes a tile of up to
 *     CUDA_CONV_TILE_M rows (output positions) x CUDA_CONV_TILE_N output
 *     features over one "lane" of the contraction (window positions
 *     w = jw, jw + ksw, ... and input features c = jc, jc + ksc, ...),
 *     gathering the input in place (no im2col matrix) with fused
 *     multiply-adds in the accumulator type (f32 for f32 / bf16 / f16, f64
 *     for f64). One lane (ks = 1): the thread rounds and stores its tile.
 *     Several lanes (split-K, for weight gradients: a long contraction into
 *     a small output): each lane writes its partial sums to the scratch and
 *     cv_ksum adds them, 64 at a time in lane order, in as many passes as
 *     needed (a fixed tree; no atomics): the same bits on every run, but
 *     NOT the interpreter's bits (another summation order, and fused
 *     multiply-adds): within a relative norm of 1e-4 (f32);
 *   - im2col + GEMM (the CPU backend's decomposition, backend/cpu/conv.c):
 *     a kernel of ours gathers the input into an im2col matrix in the
 *     scratch (M rows: the output's non-feature dims; K columns: the
 *     kernel's non-output-feature dims), chunk by chunk over M, then one
 *     cuBLASLt GEMM per chunk (cuda_gemm, full f32: no TF32), batched over
 *     the groups, writes the result in place (output feature dim innermost)
 *     or its transpose into the scratch, which a third kernel stores in the
 *     output's layout. For GEMMs large on every side, where cuBLASLt's rate
 *     pays for the im2col matrix;
 *   - the direct loop: one thread per result element, the interpreter's
 *     sums in the interpreter's order (interp/interp_conv.c: window
 *     positions row-major, input features innermost, multiply then add in
 *     f32 for f32 / bf16 / f16 and f64 for f64, rounded once): the
 *     interpreter's bits. For tiny convolutions (the conformance corpus
 *     compares some within a few ULP), and the forms the other two cannot
 *     take.
 * All three take every form conv_describe describes (any dimension
 * numbers, up to BACKEND_CONV_MAX_SPATIAL spatial dims (the tiled path up
 * to CUDA_CONV_TILE_MAX_SPATIAL), strides, negative padding, lhs and rhs
 * dilation, window reversal, feature and batch groups) in f32, f64, bf16
 * and f16.
 *
 * A fourth path, cuDNN (CUDA_CONV_CUDNN; backend/cuda/cuda_cudnn.h: the
 * forms it maps, its algorithm and workspace), is chosen first on a started
 * backend where libcudnn 9 loaded, cuda_cudnn_map takes the form and cuDNN
 * has an algorithm for it (the plan, made once per description at
 * compile time: the same answer at run time), except for the tiny
 * convolutions rule 1 below keeps on the direct path. HLO_CUDNN=0 turns it
 * off; HLO_CUDNN=1 also takes the tiny ones and makes a cuDNN that does
 * not load an error (naming what was tried) instead of our paths. Without
 * cuDNN, our three paths, silently. It runs only through cuda_conv_by
 * (cuda_conv_run's ops are our kernels').
 *
 * The cost rule (cuda_conv_choose; numbers for an H200: 132 SMs, ~60
 * TFLOP/s of f32 FMA, ~4 TB/s; bench/CONV.md has the reasoning):
 *   1. at most CUDA_CONV_DIRECT_MAX_MACS multiply-adds, and sums of at most
 *      CUDA_CONV_DIRECT_MAX_K products: direct (one launch, the
 *      interpreter's bits);
 *   2. a GEMM of at least CUDA_CONV_GEMM_MIN_N output features per group,
 *      CUDA_CONV_GEMM_MIN_K contraction and CUDA_CONV_GEMM_MIN_M rows:
 *      im2col + cuBLASLt (its rate, tens of TFLOP/s, beats ours and the
 *      im2col matrix is cheap beside the GEMM);
 *   3. else tiled, when its sizes fit (CUDA_CONV_TILE_MAX_SPATIAL, 32-bit
 *      positions and rows); its tile and split (cuda_conv_tile_shape): for each tile
 *      (4, 2, 1 rows x up to 8, 4, 2, 1 features) the contraction split in
 *      halves (the longer of a lane's window and features) until the
 *      threads fill the GPU (CUDA_CONV_TILE_THREADS), while a lane keeps
 *      CUDA_CONV_TILE_MIN_LANE products and the partials fit the scratch
 *      target; of those the cheapest by a model of instructions issued,
 *      occupancy and the partials' traffic (cuda_conv.c, tile_cost_ns);
 *   4. otherwise the old rules: direct for few output features over a
 *      short window or an im2col row past the scratch target, else im2col.
 *
 * The kernels are one CUDA C unit (cuda_conv_kernel_source), compiled by
 * NVRTC for the device's architecture once per process, on the first
 * conv_scratch_bytes or conv call after backend_cuda succeeded, and loaded
 * with cuModuleLoadData; every call is asynchronous, in order on the
 * backend's one stream. The half of this file below the slots exposes the
 * kernels' source and the host-side driver over replaceable launch / GEMM
 * operations, so that tests run the same arithmetic on the CPU. */
#ifndef HLO_BACKEND_CUDA_CUDA_CONV_H
#define HLO_BACKEND_CUDA_CUDA_CONV_H
#include <stdbool.h>
#include <stddef.h>
#include "backend/backend.h"

/* Whether cuda_conv computes `c`: lhs, rhs and result all f32, all f64,
 * all bf16 or all f16, any form. Needs no device. */
bool cuda_conv_takes(const backend_conv *c);

/* Bytes of device scratch cuda_conv needs for `c` (0 for the direct path),
 * the same every time for the same description. When the backend is
 * started it also compiles and loads the kernels (once per process: call
 * it at compile time); a failure there is reported by cuda_conv. */
size_t cuda_conv_scratch_bytes(const backend_conv *c);

/* Enqueues convolution `c` on the backend's stream: lhs, rhs and output
 * device pointers, dense row-major in their type's layout (borrowed;
 * output overwritten whole), scratch a device buffer of at least
 * cuda_conv_scratch_bytes(c) bytes (may be NULL when that is 0; 256-byte
 * alignment is best). Returns before the GPU finishes. Errors (at c->loc):
 * HLO_UNIMPLEMENTED when !cuda_conv_takes(c); HLO_UNAVAILABLE before
 * backend_cuda succeeded; HLO_INTERNAL when the kernels do not compile or
 * load, or a launch or GEMM fails (its message). A GEMM cuBLASLt has no
 * algorithm for (HLO_UNIMPLEMENTED) is no error: the direct path computes
 * the convolution instead. */
HLO_MUST_USE hlo_status cuda_conv(const backend_conv *c, const void *lhs, const void *rhs,
                                  void *output, void *scratch);

/* ---- the paths, their kernels and their driver (for tests) ---- */

/* The scratch cuda_conv aims an im2col chunk at (bytes): the im2col
 * matrix of a chunk of M rows plus, for an output whose feature dim is not
 * innermost, the chunk's transposed result. */
#define CUDA_CONV_SCRATCH_TARGET ((size_t)64 << 20)

/* Convolutions of at most this many multiply-adds, each result a sum of
 * at most CUDA_CONV_DIRECT_MAX_K products, take the direct path. */
#define CUDA_CONV_DIRECT_MAX_MACS ((double)(1 << 20))
#define CUDA_CONV_DIRECT_MAX_K 4096

/* The GEMM sizes (per group) from which im2col + cuBLASLt is chosen over
 * the tiled kernel: output features, contraction, and rows or rows x
 * output features. Fitted on the H200 (2026-12-02, cnn_sgd_step_64x28x28,
 * each conv timed on both paths): im2col won the 64x14x14x16 -> 32
 * forward conv (N 32, K 144, M 12544: 72 vs 85 us) and its weight
 * gradient (N 32, K 12544, M 144: 98 vs 180 us); the tiled kernel won the
 * N 16 forms (41 vs 63, 81 vs 121 us) and the 3x3x1x16 weight gradient
 * (M 9, K 50176: 64 vs 285 us). */
#define CUDA_CONV_GEMM_MIN_N 32
#define CUDA_CONV_GEMM_MIN_K 64
#define CUDA_CONV_GEMM_MIN_M 2048
#define CUDA_CONV_GEMM_MIN_MN 4096

/* The tiled kernel: its largest tile (rows x output features, the sizes
 * its registers are compiled for), the spatial dims it takes, the threads
 * its shape aims at (about 16 warps per SM on 132 SMs), the fewest
 * products a contraction lane keeps, the partial sums each cv_ksum thread
 * adds. */
#define CUDA_CONV_TILE_M 4
#define CUDA_CONV_TILE_N 8
/* cv_tiles: the same kernel compiled for tiles of at most this many rows
 * and features (fewer registers: more threads resident), run for tiles
 * that fit it. */
#define CUDA_CONV_TILE_SMALL_M 2
#define CUDA_CONV_TILE_SMALL_N 4
#define CUDA_CONV_TILE_MAX_SPATIAL 3
#define CUDA_CONV_TILE_THREADS 65536
#define CUDA_CONV_TILE_MIN_LANE 32
#define CUDA_CONV_KSUM_FAN 64

typedef enum cuda_conv_path {
  CUDA_CONV_AUTO,   /* cuda_conv's choice (the header's rules) */
  CUDA_CONV_DIRECT,
  CUDA_CONV_IM2COL,
  CUDA_CONV_TILED,
  CUDA_CONV_CUDNN   /* cuDNN (cuda_cudnn.h): device only, through cuda_conv_by */
} cuda_conv_path;

/* The tiled path's shape for a convolution: tile rows tm (1 ..
 * CUDA_CONV_TILE_M) and output features tn (1 .. CUDA_CONV_TILE_N), the
 * contraction split into ksw lanes over window positions times ksc lanes
 * over input features (ks = ksw * ksc; 1: no split, no scratch), the
 * threads of cv_tile (groups x row tiles x feature tiles x ks), and the
 * cost model's estimate of its time on an H200 (microseconds; 0 where no
 * rule chose the shape). */
typedef struct cuda_conv_tile_shape {
  int64_t tm, tn, ksw, ksc, ks, threads;
  double est_us;
} cuda_conv_tile_shape;

/* Whether the tiled path takes `c` (spatial dims, 32-bit positions and
 * rows), and its shape by the header's rule 3 (with partial sums of at
 * most `target` bytes); false (and *out zeroed) when it does not take it. */
bool cuda_conv_tile_plan(const backend_conv *c, size_t target, cuda_conv_tile_shape *out);

/* The kernels of the unit, by the name each has in it. */
typedef enum cuda_conv_kernel {
  CUDA_CONV_K_DIRECT_F32, CUDA_CONV_K_DIRECT_F64, CUDA_CONV_K_DIRECT_BF16, CUDA_CONV_K_DIRECT_F16,
  CUDA_CONV_K_IM2COL_2, CUDA_CONV_K_IM2COL_4, CUDA_CONV_K_IM2COL_8, /* by element bytes */
  CUDA_CONV_K_PACK_2, CUDA_CONV_K_PACK_4, CUDA_CONV_K_PACK_8,
  CUDA_CONV_K_STORE_2, CUDA_CONV_K_STORE_4, CUDA_CONV_K_STORE_8,
  CUDA_CONV_K_TILE_F32, CUDA_CONV_K_TILE_F64, CUDA_CONV_K_TILE_BF16, CUDA_CONV_K_TILE_F16,
  CUDA_CONV_K_KSUM_F32, CUDA_CONV_K_KSUM_F64, CUDA_CONV_K_KSUM_BF16, CUDA_CONV_K_KSUM_F16,
  CUDA_CONV_K_TILES_F32, CUDA_CONV_K_TILES_F64, CUDA_CONV_K_TILES_BF16, CUDA_CONV_K_TILES_F16,
  CUDA_CONV_NUM_KERNELS
} cuda_conv_kernel;

/* The kernel's name in the unit ("cv_direct_f32", ...; static). */
const char *cuda_conv_kernel_name(cuda_conv_kernel k);

/* The unit's source for NVRTC: a device prelude (CV_KERNEL, CV_D, the
 * bf16 / f16 conversions through PTX, fused multiply-adds) followed by cuda_conv_kernel_body().
 * Static, built once (thread-safe). */
const char *cuda_conv_kernel_source(void);

/* The part of the unit that is plain C as much as CUDA C: the parameter
 * structs and the kernels. It needs from a prelude: CV_KERNEL(name, T)
 * (the head of a kernel `name` taking one parameter `a` of struct type T
 * by value), CV_D (a helper function's qualifiers), CV_UNROLL (before a
 * loop of constant trip count: unroll it, or nothing), blockIdx, blockDim,
 * gridDim, threadIdx (with .x), cv_bf16_to_f32, cv_f32_to_bf16,
 * cv_f16_to_f32, cv_f32_to_f16 (round to nearest even), and cv_fmaf /
 * cv_fma (x * y + z rounded once, float / double). Uses no shared
 * memory and no barrier: every thread's work depends on its indices only,
 * so running the threads one after another gives the same result. Static. */
const char *cuda_conv_kernel_body(void);

/* What the driver does with the device: launch kernel k on `grid` blocks
 * of `block` threads with its one parameter (args: the kernel's parameter
 * struct, args_bytes long, lent for the call), run a GEMM (backend_gemm's
 * contract, on device pointers), zero `bytes` bytes at dst. All in stream
 * order. */
typedef struct cuda_conv_ops {
  HLO_MUST_USE hlo_status (*launch)(void *ctx, cuda_conv_kernel k, uint32_t grid, uint32_t block,
                                    const void *args, size_t args_bytes);
  HLO_MUST_USE hlo_status (*gemm)(void *ctx, const backend_gemm *g, const void *a, const void *b,
                                  void *c);
  HLO_MUST_USE hlo_status (*zero)(void *ctx, void *dst, size_t bytes);
  void *ctx;
} cuda_conv_ops;

/* The path cuda_conv takes for `c` (never CUDA_CONV_AUTO; the header's
 * cost rule), and the scratch a path needs with im2col chunks, or the
 * tiled path's partial sums, aimed at `target` bytes (CUDA_CONV_AUTO: the
 * path cuda_conv takes; 0 for the direct path and a tiled one that does
 * not split its contraction). An im2col chunk has at least one row of M
 * whatever the target. */
cuda_conv_path cuda_conv_choose(const backend_conv *c);
size_t cuda_conv_path_scratch_bytes(const backend_conv *c, cuda_conv_path path, size_t target);

/* The driver: convolution `c` by `path` (CUDA_CONV_AUTO: cuda_conv's
 * choice) with chunks aimed at `target` bytes, through `ops`, on buffers
 * as cuda_conv's (scratch of cuda_conv_path_scratch_bytes(c, path,
 * target) bytes). cuda_conv is cuda_conv_run(c, CUDA_CONV_AUTO,
 * CUDA_CONV_SCRATCH_TARGET, ..., the device's ops). With CUDA_CONV_AUTO, a
 * GEMM that ops->gemm declines (HLO_UNIMPLEMENTED) falls back to the direct
 * path (it overwrites the whole output). Errors: as cuda_conv's;
 * HLO_INVALID_ARGUMENT for the im2col path on sizes past cuBLASLt's int
 * (cuda_conv takes the direct path there), for the tiled path on a form
 * cuda_conv_tile_plan refuses, and for a missing scratch; whatever ops
 * return. */
HLO_MUST_USE hlo_status cuda_conv_run(const backend_conv *c, cuda_conv_path path, size_t target,
                                      const void *lhs, const void *rhs, void *output,
                                      void *scratch, const cuda_conv_ops *ops);

/* The tiled path with a given shape (tm 1 .. CUDA_CONV_TILE_M, tn 1 ..
 * CUDA_CONV_TILE_N, ksw and ksc >= 1; ks and threads are recomputed), for
 * tests of the kernels' every split: as cuda_conv_run(c, CUDA_CONV_TILED,
 * ...) otherwise, with a scratch of cuda_conv_tile_scratch_bytes(c, shape)
 * bytes. Errors: HLO_INVALID_ARGUMENT for a shape out of range or a form
 * the tiled path does not take (cuda_conv_tile_plan false); as
 * cuda_conv_run's. */
size_t cuda_conv_tile_scratch_bytes(const backend_conv *c, const cuda_conv_tile_shape *shape);
HLO_MUST_USE hlo_status cuda_conv_run_tiled(const backend_conv *c,
                                            const cuda_conv_tile_shape *shape, const void *lhs,
                                            const void *rhs, void *output, void *scratch,
                                            const cuda_conv_ops *ops);

/* cuda_conv by a given path (CUDA_CONV_AUTO: as cuda_conv), on the device
 * with the default target; scratch of cuda_conv_path_scratch_bytes(c,
 * path, CUDA_CONV_SCRATCH_TARGET) bytes. Errors as cuda_conv_run's. */
HLO_MUST_USE hlo_status cuda_conv_by(const backend_conv *c, cuda_conv_path path, const void *lhs,
                                     const void *rhs, void *output, void *scratch);

#endif /* HLO_BACKEND_CUDA_CUDA_CONV_H */
