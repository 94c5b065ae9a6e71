/* conv.h — the CPU backend's convolution: a backend_conv
 * (backend/conv_describe.h) computed by one of three paths, chosen per
 * description:
 *   - small convolutions (CPU_CONV_DIRECT_MAX_MACS multiply-adds at most):
 *     the interpreter's own loop on raw buffers, so they give the
 *     interpreter's bits (the conformance corpus checks XLA's values within
 *     3 ULP, which a GEMM's other summation order can miss);
 *   - oneDNN's convolution primitives (conv_onednn.c) for the f32 forms
 *     they take (forward and backward-filter shapes, no lhs dilation or
 *     window reversal): about 2x faster than im2col on a CNN's convolutions
 *     (bench/CONV.md);
 *   - im2col + GEMM (conv.c) for everything else (f64, bf16 and f16 too):
 *     the input gathered into a bounded scratch buffer chunk by chunk, one
 *     GEMM (gemm.h) per chunk and group, the result written in the op's own
 *     output layout. */
#ifndef HLO_BACKEND_CPU_CONV_H
#define HLO_BACKEND_CPU_CONV_H
#include <stdbool.h>
#include <stddef.h>
#include "backend/conv_describe.h"

/* Whether cpu_conv computes `c`: every form the description holds (any
 * dimension numbers, padding, strides, dilations, reversal, groups) whose
 * lhs, rhs and result are all f32, all f64, all bf16 or all f16 (the last
 * two widened to f32, summed in f32 and rounded once, as the interpreter
 * does). Anything else (integers, complex, mixed types) stays on the
 * interpreter. */
bool cpu_conv_takes(const backend_conv *c);

/* Bytes of scratch memory cpu_conv needs for `c` (0 when none): the chosen
 * path's (oneDNN's when it takes `c`, else im2col's; a oneDNN primitive
 * that fails at run time falls back to im2col with scratch of its own).
 * The same value for the same description, every time. The first call for a description makes its oneDNN primitives
 * (milliseconds; cached for the process), so call it at compile time. */
size_t cpu_conv_scratch_bytes(const backend_conv *c);

/* The im2col chunk size cpu_conv aims for (bytes). */
#define CPU_CONV_SCRATCH_TARGET ((size_t)1 << 20)

/* Computes convolution `c` (cpu_conv_takes(c) must hold), by the direct
 * loop when cpu_conv_direct_takes(c), else by oneDNN when
 * cpu_conv_onednn_takes(c), else by im2col: `lhs` (the input) and `rhs`
 * (the kernel), `output` the result, each dense row-major in its own
 * type's layout (borrowed; output overwritten). `scratch` holds at least
 * cpu_conv_scratch_bytes(c) bytes, 64-byte aligned is best (borrowed; may
 * be NULL when that is 0). Sums differ from the interpreter's only in
 * order (f32 sums in f32, as the interpreter's do). Thread-safe (calls on
 * different scratch buffers may run at once). Uses hlo's thread pool and
 * the GEMM library's threads (gemm.h), never both at once.
 * Errors (at c->loc): HLO_UNIMPLEMENTED when !cpu_conv_takes(c);
 * HLO_INVALID_ARGUMENT when a matrix size or leading dimension is past
 * BLAS's int. */
HLO_MUST_USE hlo_status cpu_conv(const backend_conv *c, const void *lhs, const void *rhs,
                                 void *output, void *scratch);

/* Convolutions of at most this many multiply-adds take the direct loop
 * (counted without the window positions in lhs-dilation holes, which it
 * skips), and lhs-dilated ones of up to 8 times as many whose im2col matrix
 * would be larger than their result (a small transposed convolution: no
 * scratch). */
#define CPU_CONV_DIRECT_MAX_MACS ((int64_t)1 << 14)

/* The direct path alone (conv.c): whether cpu_conv takes it for `c` (a
 * type cpu_conv_takes and at most CPU_CONV_DIRECT_MAX_MACS multiply-adds),
 * and the convolution (any size; no scratch): the interpreter's
 * operations in the interpreter's order, so the interpreter's bits. Errors:
 * HLO_UNIMPLEMENTED when !cpu_conv_takes(c). */
bool cpu_conv_direct_takes(const backend_conv *c);
HLO_MUST_USE hlo_status cpu_conv_direct(const backend_conv *c, const void *lhs, const void *rhs,
                                        void *output);

/* The im2col path alone (conv.c). Scratch: an im2col chunk bounded by
 * CPU_CONV_SCRATCH_TARGET (more only when one row of the im2col matrix
 * alone is larger), plus a repacked copy of the kernel when its
 * output-feature dim is neither its outermost nor its innermost (always
 * for bf16 / f16: widened to f32), plus for bf16 / f16 the f32 result of
 * one chunk. Errors as cpu_conv's. */
size_t cpu_conv_im2col_scratch_bytes(const backend_conv *c);
HLO_MUST_USE hlo_status cpu_conv_im2col(const backend_conv *c, const void *lhs, const void *rhs,
                                        void *output, void *scratch);

/* The oneDNN path alone (conv_onednn.c): whether it takes `c` (f32; the
 * forms its header lists; oneDNN accepts the shapes and picks a JIT
 * implementation; false too when the environment sets HLO_CONV_NO_ONEDNN),
 * its scratch (the weights in oneDNN's layout; with pieces, their partial
 * weights and scratchpads), and the convolution. Thread-safe. Errors:
 * HLO_UNIMPLEMENTED when it does not take `c`; HLO_INTERNAL when a
 * primitive fails to run (cpu_conv then falls back to im2col). */
bool cpu_conv_onednn_takes(const backend_conv *c);
size_t cpu_conv_onednn_scratch_bytes(const backend_conv *c);
HLO_MUST_USE hlo_status cpu_conv_onednn(const backend_conv *c, const void *lhs, const void *rhs,
                                        void *output, void *scratch);

#endif /* HLO_BACKEND_CPU_CONV_H */
