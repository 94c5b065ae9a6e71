/* gemm.h — the CPU backend's matrix products (gemm.c), for the backend
 * table (cpu_gemm in cpu.h) and for other CPU code that needs a GEMM
 * (convolution's im2col products): one place decides which library runs
 * which product, and with how many threads.
 *
 * The libraries, chosen by measurement on the project's machine
 * (bench/BLAS.md has the table and how to re-run it):
 *   f32        oneDNN's dnnl_sgemm (AVX-512 kernels), except tiny products
 *              (M*N*K <= CPU_GEMM_SMALL) which OpenBLAS's small-matrix
 *              kernels do faster (with B transposed, on an untransposed
 *              copy of B: CPU_GEMM_TB_COPY);
 *   f64        OpenBLAS's cblas_dgemm (oneDNN has none);
 *   bf16       oneDNN's dnnl_gemm_bf16bf16f32 (AMX tiles on this CPU; f32
 *              accumulation), rounded to bf16 once at the end when the
 *              result is bf16; on a CPU without AVX-512 (oneDNN answers
 *              dnnl_unimplemented) A and B widened to f32 (exact) and the
 *              f32 product (same f32 products and sums; slower).
 * OpenBLAS's kernels are its own choice for the CPU, except where it falls
 * back to its SSE3 set on a model it does not know (0.3.21 on Emerald
 * Rapids): gemm.c then chooses again at start-up (openblas_core_fix).
 * LAPACK (the interpreter's linear algebra) is OpenBLAS's too. Both
 * libraries are linked by path (the Makefile), not through Debian's
 * libblas.so.3 alternative.
 *
 * Threads: the libraries run single-threaded (OpenBLAS told once,
 * OpenMP's team size set to 1 before each call, as it is per calling
 * thread), and a product large enough is split over hlo's own thread pool
 * (support/thread_pool.h, HLO_NUM_THREADS threads): C's rows, or its
 * columns when it is wider than tall, in blocks, one library call a block;
 * a batch of at least as many matrices as blocks wanted, a matrix a block,
 * a smaller batch each matrix in blocks. With an epilogue
 * (cpu_gemm_epilogue) only rows are split, and the thread that computed a
 * block of rows runs the epilogue on it right after. So
 * there is one set of threads, ours, whose workers sleep when idle and
 * whose late workers' chunks the others take: no OpenMP team spinning at a
 * barrier for a thread the OS has descheduled (measured on this 2-core
 * machine under other load: oneDNN's own 2-thread runs fell to under 1
 * GFLOP/s on 64^3..512^2 products; bench/BLAS.md). A product made inside a
 * pool job runs on its calling thread (the pool runs nested calls inline).
 *
 * All functions are thread-safe. */
#ifndef HLO_BACKEND_CPU_GEMM_H
#define HLO_BACKEND_CPU_GEMM_H
#include <stdbool.h>
#include <stdint.h>
#include "backend/backend.h"

/* Products of at most this many multiply-adds (M*N*K per matrix) go to
 * OpenBLAS's small-matrix path (bench/BLAS.md: the crossover). */
#define CPU_GEMM_SMALL ((int64_t)64 * 64 * 64)
/* Products of fewer multiply-adds run on one thread; larger ones are split
 * over the pool in blocks of CPU_GEMM_UNIT rows (columns), into at most
 * CPU_GEMM_CHUNKS_PER_THREAD chunks a thread (each chunk repacks the other
 * operand: few chunks; the pool's atomic chunk claiming still lets a
 * thread take a late thread's chunk). */
#ifndef CPU_GEMM_SPLIT /* (overridable with -D, for measuring) */
#define CPU_GEMM_SPLIT ((int64_t)128 * 128 * 128)
#endif
#ifndef CPU_GEMM_UNIT
#define CPU_GEMM_UNIT 16
#endif
/* f32 products of at most CPU_GEMM_SWAP_M rows with op(B) transposed,
 * at least 4 times wider than tall and at most CPU_GEMM_SWAP_ELEMS
 * elements of C, run as their transpose (C^T = B op(A)^T into a scratch,
 * then transposed into C; gemm.c says why). */
#ifndef CPU_GEMM_SWAP_M
#define CPU_GEMM_SWAP_M 32
#endif
#ifndef CPU_GEMM_SWAP_ELEMS
#define CPU_GEMM_SWAP_ELEMS 16384
#endif
/* f32 products of at most CPU_GEMM_SMALL multiply-adds with B transposed
 * (A not), at least CPU_GEMM_TB_COPY_M rows and a B of at most
 * CPU_GEMM_TB_COPY floats run on an untransposed copy of B (gemm.c says
 * why). */
#ifndef CPU_GEMM_TB_COPY_M
#define CPU_GEMM_TB_COPY_M 8
#endif
#ifndef CPU_GEMM_TB_COPY
#define CPU_GEMM_TB_COPY 4096
#endif
/* Each block's library call packs the operand that all blocks of a matrix
 * share (B for row blocks, A for column blocks); when it is over this many
 * bytes a single matrix is split into one block a thread instead of
 * CPU_GEMM_CHUNKS_PER_THREAD (512x1024x1024 f32, one thread: 1, 2 and 4
 * row blocks of one product take 6.7, 6.9 and 7.3 ms; 256x256x256 costs
 * the same in 1 to 16 blocks; bench/BLAS.md). */
#ifndef CPU_GEMM_REPACK_BYTES
#define CPU_GEMM_REPACK_BYTES ((size_t)1 << 20)
#endif
#ifndef CPU_GEMM_CHUNKS_PER_THREAD
#define CPU_GEMM_CHUNKS_PER_THREAD 2
#endif

/* The batched product of backend_gemm (backend.h), with the result's type
 * given apart: C[b] (m x n, c_dtype) = op(A[b]) * op(B[b]), A and B of type
 * g->dtype, row-major, laid out as g's strides say (dense by default),
 * g->c_dtype ignored; denormal inputs
 * and results are flushed to zero inside the call (FTZ/DAZ, as XLA:CPU
 * computes; the calling thread's mode is restored). Types: f32 -> f32,
 * f64 -> f64, bf16 -> bf16 or f32. C is overwritten. Errors:
 * HLO_UNIMPLEMENTED for another pairing of types, HLO_INVALID_ARGUMENT for
 * negative sizes, sizes past the libraries' int or strides shorter than a
 * row (or negative, or past the int), HLO_RESOURCE_EXHAUSTED
 * when the f32 scratch of a bf16 result (or, on a CPU without oneDNN's bf16
 * kernels, the f32 copies of A and B) cannot be allocated, HLO_INTERNAL
 * when oneDNN reports a failure. */
HLO_MUST_USE hlo_status cpu_gemm_ex(const backend_gemm *g, hlo_dtype c_dtype, const void *a,
                                    const void *b, void *c);
/* cpu_gemm_ex runs with C's type g->c_dtype, and cpu_gemm_epilogue with an
 * epilogue (backend.h, backend_gemm_epilogue: its contract; ep NULL or
 * ep->fn NULL: none) are declared in cpu.h, as the backend's slots. */

/* One row-major product with leading dimensions, for callers that walk
 * sub-matrices: C (m x n, row stride ldc) = op(A) op(B) + beta * C, A
 * stored m x k (k x m when ta) with row stride lda, B stored k x n (n x k
 * when tb) with row stride ldb. beta 0 ignores C's old contents (NaNs
 * too). Sizes must be >= 0 and fit the libraries' int (callers check:
 * these cannot fail). The same library choice as cpu_gemm_ex. */
void cpu_sgemm(bool ta, bool tb, int64_t m, int64_t n, int64_t k, const float *a, int64_t lda,
               const float *b, int64_t ldb, float beta, float *c, int64_t ldc);
void cpu_dgemm(bool ta, bool tb, int64_t m, int64_t n, int64_t k, const double *a, int64_t lda,
               const double *b, int64_t ldb, double beta, double *c, int64_t ldc);

/* Threads a product may be split over: hlo's pool's (HLO_NUM_THREADS). */
int cpu_gemm_threads(void);

#endif /* HLO_BACKEND_CPU_GEMM_H */
