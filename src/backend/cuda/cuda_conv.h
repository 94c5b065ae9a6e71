/* cuda_conv.h — the CUDA backend's convolution (the backend's conv,
 * conv_takes and conv_scratch_bytes slots, backend.h): a backend_conv
 * (backend/conv_describe.h) computed on the GPU by one of two paths,
 * chosen per description:
 *   - im2col + GEMM (the CPU backend's decomposition, backend/cpu/conv.c):
 *     a kernel of ours gathers the input into an im2col matrix in the
 *     scratch (M rows: the output's non-feature dims; K columns: the
 *     kernel's non-output-feature dims), chunk by chunk over M, then one
 *     cuBLASLt GEMM per chunk (cuda_gemm), batched over the groups, writes
 *     the result in place (output feature dim innermost) or its transpose
 *     into the scratch, which a third kernel stores in the output's layout;
 *   - the direct loop: one thread per result element, the interpreter's
 *     sums in the interpreter's order (interp/interp_conv.c: window
 *     positions row-major, input features innermost, multiply then add in
 *     f32 for f32 / bf16 / f16 and f64 for f64, rounded once): the
 *     interpreter's bits. For small convolutions, those with few output
 *     features per group (under 4) and a short window (K of 4096 at most:
 *     depthwise), and those whose im2col row alone is past the scratch
 *     target or whose sizes are past cuBLASLt's int.
 * Both take every form conv_describe describes (any dimension numbers, up
 * to BACKEND_CONV_MAX_SPATIAL spatial dims, strides, negative padding, lhs
 * and rhs dilation, window reversal, feature and batch groups) in f32,
 * f64, bf16 and f16.
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

/* Convolutions of at most this many multiply-adds take the direct path. */
#define CUDA_CONV_DIRECT_MAX_MACS ((double)(1 << 20))

typedef enum cuda_conv_path {
  CUDA_CONV_AUTO,   /* cuda_conv's choice (the header's rules) */
  CUDA_CONV_DIRECT,
  CUDA_CONV_IM2COL
} cuda_conv_path;

/* The kernels of the unit, by the name each has in it. */
typedef enum cuda_conv_kernel {
  CUDA_CONV_K_DIRECT_F32, CUDA_CONV_K_DIRECT_F64, CUDA_CONV_K_DIRECT_BF16, CUDA_CONV_K_DIRECT_F16,
  CUDA_CONV_K_IM2COL_2, CUDA_CONV_K_IM2COL_4, CUDA_CONV_K_IM2COL_8, /* by element bytes */
  CUDA_CONV_K_PACK_2, CUDA_CONV_K_PACK_4, CUDA_CONV_K_PACK_8,
  CUDA_CONV_K_STORE_2, CUDA_CONV_K_STORE_4, CUDA_CONV_K_STORE_8,
  CUDA_CONV_NUM_KERNELS
} cuda_conv_kernel;

/* The kernel's name in the unit ("cv_direct_f32", ...; static). */
const char *cuda_conv_kernel_name(cuda_conv_kernel k);

/* The unit's source for NVRTC: a device prelude (CV_KERNEL, CV_D, the
 * bf16 / f16 conversions through PTX) followed by cuda_conv_kernel_body().
 * Static, built once (thread-safe). */
const char *cuda_conv_kernel_source(void);

/* The part of the unit that is plain C as much as CUDA C: the parameter
 * structs and the kernels. It needs from a prelude: CV_KERNEL(name, T)
 * (the head of a kernel `name` taking one parameter `a` of struct type T
 * by value), CV_D (a helper function's qualifiers), CV_UNROLL (before a
 * loop of constant trip count: unroll it, or nothing), blockIdx, blockDim,
 * gridDim, threadIdx (with .x), and cv_bf16_to_f32, cv_f32_to_bf16,
 * cv_f16_to_f32, cv_f32_to_f16 (round to nearest even). Uses no shared
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

/* The path cuda_conv takes for `c` (never CUDA_CONV_AUTO), and the
 * scratch a path needs with im2col chunks aimed at `target` bytes
 * (CUDA_CONV_AUTO: the path cuda_conv takes; 0 for the direct path). An
 * im2col chunk has at least one row of M whatever the target. */
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
 * (cuda_conv takes the direct path there); whatever ops return. */
HLO_MUST_USE hlo_status cuda_conv_run(const backend_conv *c, cuda_conv_path path, size_t target,
                                      const void *lhs, const void *rhs, void *output,
                                      void *scratch, const cuda_conv_ops *ops);

/* cuda_conv by a given path (CUDA_CONV_AUTO: as cuda_conv), on the device
 * with the default target; scratch of cuda_conv_path_scratch_bytes(c,
 * path, CUDA_CONV_SCRATCH_TARGET) bytes. Errors as cuda_conv_run's. */
HLO_MUST_USE hlo_status cuda_conv_by(const backend_conv *c, cuda_conv_path path, const void *lhs,
                                     const void *rhs, void *output, void *scratch);

#endif /* HLO_BACKEND_CUDA_CUDA_CONV_H */
