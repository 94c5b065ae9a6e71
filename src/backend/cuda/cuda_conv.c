/* cuda_conv.c — stablehlo.convolution on the GPU (cuda_conv.h): the
 * kernels' source, the host-side plan and driver, and the device's
 * launch / GEMM operations.
 *
 * The tiled path is the im2col path's GEMM (below) without its matrix:
 * cv_tile's thread gathers A's values for its rows straight from the input
 * (row m decoded once into the batch and the output positions; a window
 * position decoded once for all its input features, which then step by the
 * input's feature stride) and B's from the kernel in place, for one
 * contraction lane; fused multiply-adds in the accumulator type. Register
 * tiles, no shared memory: the reuse between neighbouring threads (the
 * same input under a 3x3 window, the same kernel row) is left to L1, and
 * the kernels stay plain per-thread code that the tests run on the host.
 * Split contractions sum through the scratch (cv_ksum, a fixed tree of
 * fan-in CUDA_CONV_KSUM_FAN, lane order), so a result's bits depend on the
 * shape only, never on scheduling; they are not the interpreter's (the
 * order differs, and fused multiply-adds round once per product-sum).
 *
 * The im2col path mirrors the CPU backend's decomposition
 * (backend/cpu/conv.c). The convolution of group g is C_g = A_g * B_g:
 *   - M (rows of A and C): the output's dims but its feature dim, in the
 *     output's memory order; each moves one input dim (the batch, or
 *     spatial dim s: position = out * stride - padding_low);
 *   - K (the sum): the kernel's dims but its output feature dim, in the
 *     kernel's memory order; each moves one input dim (the input feature,
 *     or spatial dim s: k * rhs_dilation, or (size - 1 - k) * rhs_dilation
 *     when reversed);
 *   - A[m][k] = the input at the summed positions (zero where a position
 *     falls into padding or an lhs-dilation hole: position % lhs_dilation
 *     != 0), gathered into the scratch by cv_im2col as [G][rows][K]; B the
 *     kernel in place when its output feature dim is innermost (K x C_out)
 *     or outermost (C_out x K, transposed), else repacked to K x C_out by
 *     cv_pack;
 *   - one GEMM per chunk of M rows, batched over the groups (the groups'
 *     slices of B and of the output are batch strides): with the output's
 *     feature dim innermost it writes the output in place (ldc = C_out);
 *     otherwise it writes C^T ([G][C_out/G][rows]) into the scratch and
 *     cv_store scatters it into the output (reads and writes along M, the
 *     output's contiguous side).
 * bf16 and f16 stay in their type: cuBLASLt multiplies them exactly and
 * sums in f32 (CUBLAS_COMPUTE_32F), rounding once into the result; f32 is
 * summed in full f32 (no TF32), f64 in f64.
 *
 * The kernels are one unit (cuda_conv_kernel_source): the parameter
 * structs (written once, below, as a macro that is both compiled here and
 * stringified into the unit, so host and device agree on the layout), the
 * direct kernel once per element type and the data-movement kernels once
 * per element size (they copy bits), each body instantiated by #define
 * before it. One thread per element with grid-stride loops (cv_im2col: one
 * block per row of A, its threads along K, K's decode in 32-bit), 64-bit
 * indices elsewhere. The unit is compiled and loaded once per process
 * (pthread_once; a failure is remembered and reported by every later
 * call) and never unloaded.
 *
 * The direct path is the interpreter's loop, so it gives the
 * interpreter's bits on the GPU too: NVRTC compiles without FMA
 * contraction and with IEEE rounding (backend/cuda/nvrtc.c), and bf16 /
 * f16 round to nearest even (bit arithmetic; PTX cvt.rn). */
#include "backend/cuda/cuda_conv.h"
#include <limits.h>
#include <math.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "backend/cuda/cuda_api.h"
#include "backend/cuda/cuda_cudnn.h"
#include "backend/cuda/nvrtc.h"
#include "support/status.h"

/* ------------------------------------------------------------ the unit */

/* The kernels' parameter structs (each kernel takes one, by value). Array
 * sizes are BACKEND_CONV_MAX_RANK (8) and BACKEND_CONV_MAX_SPATIAL (6). */
#define CV_STRUCTS                                                                            \
  typedef struct cv_direct_args {                                                             \
    const void *lhs;                                                                          \
    const void *rhs;                                                                          \
    void *out;                                                                                \
    long long total, R, S, ob, ofeat, ls_b, ls_f, ks_i, ks_o, cin, cout_g, bout, bgc, fgc,    \
        kwin;                                                                                 \
    long long rdims[8], osp[6], stride[6], pad_lo[6], rdil[6], ldil[6], lsz[6], lsp[6],       \
        ksz[6], ksp[6], rev[6];                                                               \
  } cv_direct_args;                                                                           \
  typedef struct cv_im2col_args {                                                             \
    const void *in;                                                                           \
    void *a;                                                                                  \
    long long m0, ml, K, rows, nm, nk, nin, in_group_off;                                     \
    long long m_size[8], m_in[8], m_coef[8], m_cst[8], k_size[8], k_in[8], k_coef[8],         \
        k_cst[8], in_size[8], in_ldil[8], in_stride[8];                                       \
  } cv_im2col_args;                                                                           \
  typedef struct cv_pack_args {                                                               \
    const void *src;                                                                          \
    void *dst;                                                                                \
    long long total, cout, post;                                                              \
  } cv_pack_args;                                                                             \
  typedef struct cv_store_args {                                                              \
    const void *ct;                                                                           \
    void *out;                                                                                \
    long long m0, ml, total, nm, os_f;                                                        \
    long long m_size[8], m_ostride[8];                                                        \
  } cv_store_args;                                                                            \
  typedef struct cv_tile_args {                                                               \
    const void *lhs;                                                                          \
    const void *rhs;                                                                          \
    void *out;                                                                                \
    long long total, final, M, cout_g, tm, tn, ntm, ntn, ksw, ksc, cin, ls_b, ls_f, ks_i, ks_o, \
        in_group_off, os_f, S, kwin, nm;                                                      \
    long long m_size[8], m_ostride[8], m_sp[8];                                               \
    int ksz[3], rev[3], rdil[3], ldil[3], lsz[3], stride[3], pad_lo[3];                       \
    long long ksp[3], lsp[3];                                                                 \
  } cv_tile_args;                                                                             \
  typedef struct cv_ksum_args {                                                               \
    const void *src;                                                                          \
    void *dst;                                                                                \
    long long n, cnt, fan, final, M, cout_g, os_f, nm;                                        \
    long long m_size[8], m_ostride[8];                                                        \
  } cv_ksum_args;

CV_STRUCTS
_Static_assert(BACKEND_CONV_MAX_RANK == 8 && BACKEND_CONV_MAX_SPATIAL == 6,
               "cv_*_args array sizes");

#define CV_STR2(...) #__VA_ARGS__
#define CV_STR(...) CV_STR2(__VA_ARGS__)

/* The direct kernel, instantiated per type: CV_T (storage), CV_ACC (the
 * interpreter's accumulator), CV_LOAD, CV_STORE, CV_NAME. The
 * interpreter's loop (interp/interp_conv.c) on one result element. */
static const char direct_body[] =
    "CV_KERNEL(CV_NAME(cv_direct), cv_direct_args) {\n"
    "  const CV_T *lhs = (const CV_T *)a.lhs;\n"
    "  const CV_T *rhs = (const CV_T *)a.rhs;\n"
    "  CV_T *out = (CV_T *)a.out;\n"
    "  long long step = (long long)gridDim.x * blockDim.x;\n"
    "  for (long long t = (long long)blockIdx.x * blockDim.x + threadIdx.x; t < a.total;\n"
    "       t += step) {\n"
    "    /* loops over the fixed array sizes, unrolled: the arrays stay in registers */\n"
    "    long long idx[8], pbase[6], kidx[6], r = t;\n"
    "    CV_UNROLL for (int d = 7; d >= 0; d--) {\n"
    "      if (d >= a.R) continue;\n"
    "      idx[d] = r % a.rdims[d];\n"
    "      r /= a.rdims[d];\n"
    "    }\n"
    "    long long b = 0, of = 0, op[6];\n"
    "    CV_UNROLL for (int d = 0; d < 8; d++) {\n"
    "      if (d >= a.R) break;\n"
    "      if (d == a.ob) b = idx[d];\n"
    "      if (d == a.ofeat) of = idx[d];\n"
    "      CV_UNROLL for (int s = 0; s < 6; s++)\n"
    "        if (s < a.S && d == a.osp[s]) op[s] = idx[d];\n"
    "    }\n"
    "    long long g = of / a.cout_g;\n"
    "    long long lbase = (a.bgc ? g * a.bout + b : b) * a.ls_b + (a.fgc ? g * a.cin : 0) * a.ls_f;\n"
    "    long long kbase = of * a.ks_o;\n"
    "    CV_UNROLL for (int s = 0; s < 6; s++) {\n"
    "      pbase[s] = s < a.S ? op[s] * a.stride[s] - a.pad_lo[s] : 0;\n"
    "      kidx[s] = 0;\n"
    "    }\n"
    "    CV_ACC acc = 0;\n"
    "    for (long long w = 0; w < a.kwin; w++) {\n"
    "      long long loff = lbase, koff = kbase;\n"
    "      int inside = 1;\n"
    "      CV_UNROLL for (int s = 0; s < 6; s++) {\n"
    "        if (s >= a.S) break;\n"
    "        long long k = kidx[s], kk = a.rev[s] ? a.ksz[s] - 1 - k : k;\n"
    "        long long pos = pbase[s] + kk * a.rdil[s], dl = a.ldil[s];\n"
    "        if (dl != 1) {\n"
    "          if (pos < 0 || pos % dl != 0) inside = 0;\n"
    "          else pos /= dl;\n"
    "        }\n"
    "        if (pos < 0 || pos >= a.lsz[s]) inside = 0;\n"
    "        loff += pos * a.lsp[s];\n"
    "        koff += k * a.ksp[s];\n"
    "      }\n"
    "      if (inside)\n"
    "        for (long long ci = 0; ci < a.cin; ci++) {\n"
    "          CV_ACC lv = (CV_ACC)CV_LOAD(lhs[loff + ci * a.ls_f]);\n"
    "          CV_ACC kv = (CV_ACC)CV_LOAD(rhs[koff + ci * a.ks_i]);\n"
    "          CV_ACC prod = lv * kv;\n"
    "          acc = acc + prod;\n"
    "        }\n"
    "      CV_UNROLL for (int s = 5; s >= 0; s--) { /* the next window position */\n"
    "        if (s >= a.S) continue;\n"
    "        if (++kidx[s] < a.ksz[s]) break;\n"
    "        kidx[s] = 0;\n"
    "      }\n"
    "    }\n"
    "    out[t] = CV_STORE(acc);\n"
    "  }\n"
    "}\n";

/* The tiled implicit GEMM and its split-K sums, instantiated per type as
 * the direct kernel (CV_FMA: the accumulator's fused multiply-add). One
 * thread per (group, row tile, feature tile, contraction lane), the lane
 * fastest, then the feature tile: a warp's lanes read neighbouring window
 * positions (contiguous along the input's innermost spatial dim), its
 * feature tiles the same input. Row m decodes into the batch and output
 * spatial positions once per thread; window position w into kernel
 * indices once per w, its input features then in a loop of plain strides.
 * A row or feature past the tile (tm, tn, M, C_out/G) is neither loaded
 * nor stored. */
static const char tile_body[] =
    "CV_KERNEL(CV_TILE_NAME, cv_tile_args) {\n"
    "  const CV_T *lhs = (const CV_T *)a.lhs;\n"
    "  const CV_T *rhs = (const CV_T *)a.rhs;\n"
    "  long long step = (long long)gridDim.x * blockDim.x, ks = a.ksw * a.ksc;\n"
    "  for (long long t = (long long)blockIdx.x * blockDim.x + threadIdx.x; t < a.total;\n"
    "       t += step) {\n"
    "    long long lane = t % ks, tile = t / ks;\n"
    "    long long nt = tile % a.ntn, rest = tile / a.ntn, mt = rest % a.ntm, g = rest / a.ntm;\n"
    "    long long jw = lane % a.ksw, jc = lane / a.ksw, m0 = mt * a.tm, n0 = nt * a.tn;\n"
    "    long long nlim = a.cout_g - n0 < a.tn ? a.cout_g - n0 : a.tn;\n"
    "    const CV_T *gl = lhs + g * a.in_group_off;\n"
    "    const CV_T *gk = rhs + (g * a.cout_g + n0) * a.ks_o;\n"
    "    long long lb[CV_TM], om[CV_TM];\n"
    "    int pb[CV_TM][3], rv[CV_TM];\n"
    "    CV_UNROLL for (int r = 0; r < CV_TM; r++) { /* the rows: batch and positions */\n"
    "      unsigned int m = (unsigned int)(m0 + r); /* M < 2^31 */\n"
    "      long long b = 0, o = 0;\n"
    "      int op[3] = {0, 0, 0};\n"
    "      rv[r] = r < a.tm && m0 + r < a.M;\n"
    "      if (!rv[r]) m = 0;\n"
    "      CV_UNROLL for (int i = 7; i >= 0; i--) {\n"
    "        if (i >= a.nm) continue;\n"
    "        unsigned int co = m % (unsigned int)a.m_size[i];\n"
    "        m /= (unsigned int)a.m_size[i];\n"
    "        o += co * a.m_ostride[i];\n"
    "        if (a.m_sp[i] < 0) b = co;\n"
    "        CV_UNROLL for (int s = 0; s < 3; s++)\n"
    "          if (a.m_sp[i] == s) op[s] = (int)co;\n"
    "      }\n"
    "      lb[r] = b * a.ls_b;\n"
    "      om[r] = o;\n"
    "      CV_UNROLL for (int s = 0; s < 3; s++) pb[r][s] = op[s] * a.stride[s] - a.pad_lo[s];\n"
    "    }\n"
    "    CV_ACC acc[CV_TM][CV_TN];\n"
    "    CV_UNROLL for (int r = 0; r < CV_TM; r++)\n"
    "      CV_UNROLL for (int n = 0; n < CV_TN; n++) acc[r][n] = 0;\n"
    "    for (long long w = jw; w < a.kwin; w += a.ksw) {\n"
    "      long long ko = 0, lo[CV_TM];\n"
    "      unsigned int wr = (unsigned int)w; /* kwin < 2^31 */\n"
    "      int kk[3] = {0, 0, 0}, ok[CV_TM];\n"
    "      CV_UNROLL for (int s = 2; s >= 0; s--) { /* w row-major over the window */\n"
    "        if (s >= a.S) continue;\n"
    "        int k = (int)(wr % (unsigned int)a.ksz[s]);\n"
    "        wr /= (unsigned int)a.ksz[s];\n"
    "        ko += k * a.ksp[s];\n"
    "        kk[s] = (a.rev[s] ? a.ksz[s] - 1 - k : k) * a.rdil[s];\n"
    "      }\n"
    "      CV_UNROLL for (int r = 0; r < CV_TM; r++) {\n"
    "        lo[r] = lb[r];\n"
    "        ok[r] = rv[r];\n"
    "        CV_UNROLL for (int s = 0; s < 3; s++) {\n"
    "          if (s >= a.S) break;\n"
    "          int pos = pb[r][s] + kk[s], dl = a.ldil[s];\n"
    "          if (dl != 1) {\n"
    "            if (pos < 0 || pos % dl != 0) ok[r] = 0;\n"
    "            else pos /= dl;\n"
    "          }\n"
    "          if (pos < 0 || pos >= a.lsz[s]) ok[r] = 0;\n"
    "          lo[r] += pos * a.lsp[s];\n"
    "        }\n"
    "      }\n"
    "      for (long long ci = jc; ci < a.cin; ci += a.ksc) {\n"
    "        /* rows and features past tm, tn: skipped by uniform branches */\n"
    "        CV_ACC bv[CV_TN];\n"
    "        const CV_T *kp = gk + ko + ci * a.ks_i;\n"
    "        CV_UNROLL for (int n = 0; n < CV_TN; n++) {\n"
    "          if (n >= a.tn) break;\n"
    "          bv[n] = n < nlim ? (CV_ACC)CV_LOAD(kp[n * a.ks_o]) : (CV_ACC)0;\n"
    "        }\n"
    "        CV_UNROLL for (int r = 0; r < CV_TM; r++) {\n"
    "          if (r >= a.tm) break;\n"
    "          CV_ACC av = ok[r] ? (CV_ACC)CV_LOAD(gl[lo[r] + ci * a.ls_f]) : (CV_ACC)0;\n"
    "          CV_UNROLL for (int n = 0; n < CV_TN; n++) {\n"
    "            if (n >= a.tn) break;\n"
    "            acc[r][n] = CV_FMA(av, bv[n], acc[r][n]);\n"
    "          }\n"
    "        }\n"
    "      }\n"
    "    }\n"
    "    CV_UNROLL for (int r = 0; r < CV_TM; r++) {\n"
    "      if (!rv[r]) continue;\n"
    "      CV_UNROLL for (int n = 0; n < CV_TN; n++) {\n"
    "        if (n >= nlim) continue;\n"
    "        if (a.final)\n"
    "          ((CV_T *)a.out)[om[r] + (g * a.cout_g + n0 + n) * a.os_f] = CV_STORE(acc[r][n]);\n"
    "        else /* partials [group][row][feature][lane] */\n"
    "          ((CV_ACC *)a.out)[((g * a.M + m0 + r) * a.cout_g + n0 + n) * ks + lane] =\n"
    "              acc[r][n];\n"
    "      }\n"
    "    }\n"
    "  }\n"
    "}\n";

/* cv_tile's split sums (cuda_conv.h), per type. */
static const char ksum_body[] =
    "CV_KERNEL(CV_NAME(cv_ksum), cv_ksum_args) {\n"
    "  const CV_ACC *src = (const CV_ACC *)a.src;\n"
    "  long long step = (long long)gridDim.x * blockDim.x, per = (a.cnt + a.fan - 1) / a.fan;\n"
    "  for (long long t = (long long)blockIdx.x * blockDim.x + threadIdx.x; t < a.n * per;\n"
    "       t += step) {\n"
    "    long long e = t / per, j = t - e * per, c = a.cnt - j * a.fan;\n"
    "    const CV_ACC *p = src + e * a.cnt + j * a.fan;\n"
    "    if (c > a.fan) c = a.fan;\n"
    "    CV_ACC sum = 0;\n"
    "    for (long long i = 0; i < c; i++) sum = sum + p[i];\n"
    "    if (!a.final) {\n"
    "      ((CV_ACC *)a.dst)[t] = sum;\n"
    "      continue;\n"
    "    }\n"
    "    long long n = e % a.cout_g, gm = e / a.cout_g, m = gm % a.M, g = gm / a.M;\n"
    "    long long off = (g * a.cout_g + n) * a.os_f;\n"
    "    for (long long i = a.nm - 1; i >= 0; i--) {\n"
    "      off += (m % a.m_size[i]) * a.m_ostride[i];\n"
    "      m /= a.m_size[i];\n"
    "    }\n"
    "    ((CV_T *)a.dst)[off] = CV_STORE(sum);\n"
    "  }\n"
    "}\n";

/* The data-movement kernels, instantiated per element size: CV_U (an
 * unsigned integer of that size), CV_UNAME. */
static const char move_body[] =
    "CV_KERNEL(CV_UNAME(cv_im2col), cv_im2col_args) {\n"
    "  const CV_U *in = (const CV_U *)a.in;\n"
    "  CV_U *A = (CV_U *)a.a;\n"
    "  unsigned int K = (unsigned int)a.K;\n"
    "  for (long long row = blockIdx.x; row < a.rows; row += gridDim.x) {\n"
    "    long long g = row / a.ml, r = a.m0 + (row - g * a.ml), qm[8];\n"
    "    for (long long d = 0; d < a.nin; d++) qm[d] = 0;\n"
    "    for (long long i = a.nm - 1; i >= 0; i--) {\n"
    "      long long co = r % a.m_size[i];\n"
    "      r /= a.m_size[i];\n"
    "      qm[a.m_in[i]] += a.m_cst[i] + a.m_coef[i] * co;\n"
    "    }\n"
    "    const CV_U *gin = in + g * a.in_group_off;\n"
    "    CV_U *dst = A + row * a.K;\n"
    "    for (unsigned int k = threadIdx.x; k < K; k += blockDim.x) {\n"
    "      long long q[8];\n"
    "      for (long long d = 0; d < a.nin; d++) q[d] = qm[d];\n"
    "      unsigned int kr = k;\n"
    "      for (long long i = a.nk - 1; i >= 0; i--) {\n"
    "        unsigned int sz = (unsigned int)a.k_size[i], co = kr % sz;\n"
    "        kr /= sz;\n"
    "        q[a.k_in[i]] += a.k_cst[i] + a.k_coef[i] * (long long)co;\n"
    "      }\n"
    "      long long off = 0;\n"
    "      int ok = 1;\n"
    "      for (long long d = 0; d < a.nin && ok; d++) {\n"
    "        long long v = q[d], dl = a.in_ldil[d];\n"
    "        if (v < 0) ok = 0;\n"
    "        else if (dl != 1) {\n"
    "          if (v % dl != 0) ok = 0;\n"
    "          else v /= dl;\n"
    "        }\n"
    "        if (v >= a.in_size[d]) ok = 0;\n"
    "        off += v * a.in_stride[d];\n"
    "      }\n"
    "      dst[k] = ok ? gin[off] : (CV_U)0;\n"
    "    }\n"
    "  }\n"
    "}\n"
    "CV_KERNEL(CV_UNAME(cv_pack), cv_pack_args) {\n"
    "  const CV_U *src = (const CV_U *)a.src;\n"
    "  CV_U *dst = (CV_U *)a.dst;\n"
    "  long long step = (long long)gridDim.x * blockDim.x;\n"
    "  for (long long t = (long long)blockIdx.x * blockDim.x + threadIdx.x; t < a.total;\n"
    "       t += step) {\n"
    "    long long b = t % a.post, r = t / a.post, o = r % a.cout, p = r / a.cout;\n"
    "    dst[(p * a.post + b) * a.cout + o] = src[t];\n"
    "  }\n"
    "}\n"
    "CV_KERNEL(CV_UNAME(cv_store), cv_store_args) {\n"
    "  const CV_U *ct = (const CV_U *)a.ct;\n"
    "  CV_U *out = (CV_U *)a.out;\n"
    "  long long step = (long long)gridDim.x * blockDim.x;\n"
    "  for (long long t = (long long)blockIdx.x * blockDim.x + threadIdx.x; t < a.total;\n"
    "       t += step) {\n"
    "    long long mi = t % a.ml, f = t / a.ml, r = a.m0 + mi, off = f * a.os_f;\n"
    "    for (long long i = a.nm - 1; i >= 0; i--) {\n"
    "      off += (r % a.m_size[i]) * a.m_ostride[i];\n"
    "      r /= a.m_size[i];\n"
    "    }\n"
    "    out[off] = ct[t];\n"
    "  }\n"
    "}\n";

/* The device prelude: what cuda_conv_kernel_body needs (see the header). */
static const char device_prelude[] =
    "/* hlo's convolution kernels (backend/cuda/cuda_conv.c). No #include. */\n"
    "#define CV_KERNEL(name, T) extern \"C\" __global__ void __launch_bounds__(256) "
    "name(const T a)\n"
    "#define CV_D static __device__ __forceinline__\n"
    "#define CV_UNROLL _Pragma(\"unroll\")\n"
    "CV_D float cv_bf16_to_f32(unsigned short h) { return __uint_as_float((unsigned int)h << 16); }\n"
    "CV_D unsigned short cv_f32_to_bf16(float f) {\n"
    "  unsigned int u = __float_as_uint(f);\n"
    "  if ((u & 0x7fffffffu) > 0x7f800000u) return (unsigned short)((u >> 16) | 0x40u);\n"
    "  u += 0x7fffu + ((u >> 16) & 1u);\n"
    "  return (unsigned short)(u >> 16);\n"
    "}\n"
    "CV_D float cv_f16_to_f32(unsigned short h) {\n"
    "  float f;\n"
    "  asm(\"cvt.f32.f16 %0, %1;\" : \"=f\"(f) : \"h\"(h));\n"
    "  return f;\n"
    "}\n"
    "CV_D unsigned short cv_f32_to_f16(float f) {\n"
    "  unsigned short h;\n"
    "  asm(\"cvt.rn.f16.f32 %0, %1;\" : \"=h\"(h) : \"f\"(f));\n"
    "  return h;\n"
    "}\n"
    "CV_D float cv_fmaf(float x, float y, float z) { return __fmaf_rn(x, y, z); }\n"
    "CV_D double cv_fma(double x, double y, double z) { return __fma_rn(x, y, z); }\n";

static const char *const kernel_names[CUDA_CONV_NUM_KERNELS] = {
    "cv_direct_f32", "cv_direct_f64", "cv_direct_bf16", "cv_direct_f16",
    "cv_im2col_2",   "cv_im2col_4",   "cv_im2col_8",    "cv_pack_2",
    "cv_pack_4",     "cv_pack_8",     "cv_store_2",     "cv_store_4",
    "cv_store_8",    "cv_tile_f32",   "cv_tile_f64",   "cv_tile_bf16",  "cv_tile_f16",
    "cv_ksum_f32",   "cv_ksum_f64",   "cv_ksum_bf16",  "cv_ksum_f16",   "cv_tiles_f32",
    "cv_tiles_f64",  "cv_tiles_bf16", "cv_tiles_f16"};

const char *cuda_conv_kernel_name(cuda_conv_kernel k) {
  return (unsigned)k < CUDA_CONV_NUM_KERNELS ? kernel_names[k] : "?";
}

static struct {
  pthread_once_t once;
  char body[81920];
  char source[86016];
} g_src = {.once = PTHREAD_ONCE_INIT};

/* Appends to buf (cap bytes) at *len; the sizes above hold the unit with
 * room to spare (a static assert would need the text's length). */
static void append(char *buf, size_t cap, size_t *len, const char *text) {
  size_t n = strlen(text);
  if (*len + n + 1 > cap) abort(); /* a programming error: grow the buffers */
  memcpy(buf + *len, text, n + 1);
  *len += n;
}

static void build_source(void) {
  static const char *const types[4][2] = {
      {"f32", "#define CV_T float\n#define CV_ACC float\n#define CV_LOAD(x) (x)\n"
              "#define CV_STORE(x) (x)\n#define CV_FMA cv_fmaf\n"},
      {"f64", "#define CV_T double\n#define CV_ACC double\n#define CV_LOAD(x) (x)\n"
              "#define CV_STORE(x) (x)\n#define CV_FMA cv_fma\n"},
      {"bf16", "#define CV_T unsigned short\n#define CV_ACC float\n"
               "#define CV_LOAD(x) cv_bf16_to_f32(x)\n#define CV_STORE(x) cv_f32_to_bf16(x)\n"
               "#define CV_FMA cv_fmaf\n"},
      {"f16", "#define CV_T unsigned short\n#define CV_ACC float\n"
              "#define CV_LOAD(x) cv_f16_to_f32(x)\n#define CV_STORE(x) cv_f32_to_f16(x)\n"
              "#define CV_FMA cv_fmaf\n"}};
  static const char *const units[3][2] = {
      {"2", "unsigned short"}, {"4", "unsigned int"}, {"8", "unsigned long long"}};
  size_t n = 0;
  char line[256];
  append(g_src.body, sizeof g_src.body, &n, "/* the kernels' parameters */\n");
  append(g_src.body, sizeof g_src.body, &n, CV_STR(CV_STRUCTS));
  append(g_src.body, sizeof g_src.body, &n, "\n");
  for (int i = 0; i < 4; i++) {
    append(g_src.body, sizeof g_src.body, &n, types[i][1]);
    snprintf(line, sizeof line, "#define CV_NAME(n) n##_%s\n", types[i][0]);
    append(g_src.body, sizeof g_src.body, &n, line);
    append(g_src.body, sizeof g_src.body, &n, direct_body);
    for (int v = 0; v < 2; v++) { /* the tiles: the largest, and a small one */
      snprintf(line, sizeof line,
               "#define CV_TM %d\n#define CV_TN %d\n#define CV_TILE_NAME %s_%s\n",
               v ? CUDA_CONV_TILE_SMALL_M : CUDA_CONV_TILE_M,
               v ? CUDA_CONV_TILE_SMALL_N : CUDA_CONV_TILE_N, v ? "cv_tiles" : "cv_tile",
               types[i][0]);
      append(g_src.body, sizeof g_src.body, &n, line);
      append(g_src.body, sizeof g_src.body, &n, tile_body);
      append(g_src.body, sizeof g_src.body, &n,
             "#undef CV_TM\n#undef CV_TN\n#undef CV_TILE_NAME\n");
    }
    append(g_src.body, sizeof g_src.body, &n, ksum_body);
    append(g_src.body, sizeof g_src.body, &n,
           "#undef CV_T\n#undef CV_ACC\n#undef CV_LOAD\n#undef CV_STORE\n#undef CV_NAME\n"
           "#undef CV_FMA\n");
  }
  for (int i = 0; i < 3; i++) {
    snprintf(line, sizeof line, "#define CV_U %s\n#define CV_UNAME(n) n##_%s\n", units[i][1],
             units[i][0]);
    append(g_src.body, sizeof g_src.body, &n, line);
    append(g_src.body, sizeof g_src.body, &n, move_body);
    append(g_src.body, sizeof g_src.body, &n, "#undef CV_U\n#undef CV_UNAME\n");
  }
  size_t m = 0;
  append(g_src.source, sizeof g_src.source, &m, device_prelude);
  append(g_src.source, sizeof g_src.source, &m, g_src.body);
}

const char *cuda_conv_kernel_body(void) {
  pthread_once(&g_src.once, build_source);
  return g_src.body;
}

const char *cuda_conv_kernel_source(void) {
  pthread_once(&g_src.once, build_source);
  return g_src.source;
}

/* ------------------------------------------------------------ the plan */

enum { MAXR = BACKEND_CONV_MAX_RANK, BLOCK = 256 };
#define GRID_MAX ((int64_t)1 << 30)

typedef enum kmode { KOF_INNER, KOF_OUTER, KOF_PACK } kmode;

/* The im2col path's plan (the header's decomposition). */
typedef struct plan {
  size_t es;                        /* bytes of an element */
  int64_t G, cin_g, cout, cout_g, bout;
  int64_t M, K;
  uint32_t nm, nk, nin;             /* M axes, K axes, input dims (2 + S) */
  int64_t m_size[MAXR], m_in[MAXR], m_coef[MAXR], m_cst[MAXR], m_ostride[MAXR];
  int64_t k_size[MAXR], k_in[MAXR], k_coef[MAXR], k_cst[MAXR];
  int64_t in_size[MAXR], in_ldil[MAXR], in_stride[MAXR]; /* 0 batch, 1 feature, 2+s */
  int64_t in_group_off;             /* input elements between groups */
  int64_t os_f;                     /* output elements between features */
  bool row_out;                     /* the output's feature dim innermost */
  kmode km;
  int64_t kpost;                    /* kernel elements after its output feature dim */
  int64_t mc;                       /* rows of M per chunk */
  size_t row_bytes;                 /* scratch per row of a chunk */
  size_t pack_bytes, a_bytes, c_bytes; /* scratch parts, each rounded up to 256 */
  bool fits_int;                    /* every GEMM size within cuBLASLt's int */
} plan;

static size_t round256(size_t n) { return (n + 255) & ~(size_t)255; }

static int64_t dim_stride(const int64_t *dims, uint32_t rank, uint32_t d) {
  int64_t s = 1;
  for (uint32_t i = d + 1; i < rank; i++) s *= dims[i];
  return s;
}

static void make_plan(const backend_conv *c, size_t target, plan *p) {
  memset(p, 0, sizeof *p);
  uint32_t R = c->rank, S = c->num_spatial;
  p->es = hlo_dtype_size(c->result_dtype);
  p->G = conv_group_count(c);
  p->cin_g = c->rhs_dims[c->kernel_input_feature_dimension];
  p->cout = c->rhs_dims[c->kernel_output_feature_dimension];
  p->cout_g = p->G ? p->cout / p->G : 0;
  p->bout = c->result_dims[c->output_batch_dimension];
  int64_t ist_b = dim_stride(c->lhs_dims, R, c->input_batch_dimension);
  int64_t ist_f = dim_stride(c->lhs_dims, R, c->input_feature_dimension);
  p->in_group_off = c->batch_group_count > 1 ? p->bout * ist_b : p->cin_g * ist_f;
  p->nin = 2 + S;
  p->in_size[0] = p->bout, p->in_ldil[0] = 1, p->in_stride[0] = ist_b;
  p->in_size[1] = p->cin_g, p->in_ldil[1] = 1, p->in_stride[1] = ist_f;
  for (uint32_t s = 0; s < S; s++) {
    uint32_t d = c->input_spatial_dimensions[s];
    p->in_size[2 + s] = c->lhs_dims[d];
    p->in_ldil[2 + s] = c->lhs_dilation[s];
    p->in_stride[2 + s] = dim_stride(c->lhs_dims, R, d);
  }
  p->M = 1;
  for (uint32_t d = 0; d < R; d++) { /* M: the output's dims but the feature dim */
    if (d == c->output_feature_dimension) continue;
    uint32_t i = p->nm++;
    p->m_size[i] = c->result_dims[d], p->m_in[i] = 0, p->m_coef[i] = 1, p->m_cst[i] = 0;
    p->m_ostride[i] = dim_stride(c->result_dims, R, d);
    for (uint32_t s = 0; s < S; s++)
      if (c->output_spatial_dimensions[s] == d)
        p->m_in[i] = 2 + s, p->m_coef[i] = c->window_strides[s], p->m_cst[i] = -c->padding_low[s];
    p->M *= p->m_size[i];
  }
  p->os_f = dim_stride(c->result_dims, R, c->output_feature_dimension);
  p->row_out = c->output_feature_dimension == R - 1;
  p->K = 1;
  for (uint32_t d = 0; d < R; d++) { /* K: the kernel's dims but the output feature dim */
    if (d == c->kernel_output_feature_dimension) continue;
    uint32_t i = p->nk++;
    p->k_size[i] = c->rhs_dims[d], p->k_in[i] = 1, p->k_coef[i] = 1, p->k_cst[i] = 0;
    for (uint32_t s = 0; s < S; s++)
      if (c->kernel_spatial_dimensions[s] == d) {
        int64_t r = c->rhs_dilation[s], n = c->rhs_dims[d];
        p->k_in[i] = 2 + s;
        p->k_coef[i] = c->window_reversal[s] ? -r : r;
        p->k_cst[i] = c->window_reversal[s] ? (n - 1) * r : 0;
      }
    p->K *= p->k_size[i];
  }
  uint32_t kof = c->kernel_output_feature_dimension;
  p->km = kof == R - 1 ? KOF_INNER : kof == 0 ? KOF_OUTER : KOF_PACK;
  p->kpost = dim_stride(c->rhs_dims, R, kof);
  /* chunks of M: rows of A (G x K) plus, for C^T, G x C_out/G */
  p->row_bytes = (size_t)(p->G * (p->K + (p->row_out ? 0 : p->cout_g))) * p->es;
  p->mc = p->row_bytes ? (int64_t)(target / p->row_bytes) : p->M;
  if (p->mc < 1) p->mc = 1;
  if (p->mc > p->M) p->mc = p->M;
  if (p->mc > INT_MAX) p->mc = INT_MAX;
  p->fits_int = p->K <= INT_MAX && p->cout <= INT_MAX && p->G <= INT_MAX; /* mc <= INT_MAX */
  p->pack_bytes = p->km == KOF_PACK ? round256((size_t)(p->K * p->cout) * p->es) : 0;
  p->a_bytes = round256((size_t)(p->G * p->mc * p->K) * p->es);
  p->c_bytes = p->row_out ? 0 : round256((size_t)(p->G * p->mc * p->cout_g) * p->es);
}

bool cuda_conv_takes(const backend_conv *c) {
  return conv_all_dtype(c, HLO_F32) || conv_all_dtype(c, HLO_F64) ||
         conv_all_dtype(c, HLO_BF16) || conv_all_dtype(c, HLO_F16);
}

/* The tiled kernel's arguments for `c` but its shape (tm, tn, ntm, ntn,
 * ksw, ksc, total, final, out); false when the tiled path does not take
 * `c`: more than CUDA_CONV_TILE_MAX_SPATIAL spatial dims, 2^31 rows (M)
 * or more, or a window position, size or attribute past the kernel's
 * 32-bit positions. */
static bool tile_args(const backend_conv *c, const plan *p, cv_tile_args *a) {
  memset(a, 0, sizeof *a);
  uint32_t R = c->rank, S = c->num_spatial;
  if (S > CUDA_CONV_TILE_MAX_SPATIAL || p->M >= INT_MAX) return false;
  const double lim = (double)(1 << 30);
  for (uint32_t s = 0; s < S; s++) {
    double osz = (double)c->result_dims[c->output_spatial_dimensions[s]];
    double ksz = (double)c->rhs_dims[c->kernel_spatial_dimensions[s]];
    double lsz = (double)c->lhs_dims[c->input_spatial_dimensions[s]];
    double reach = osz * (double)c->window_strides[s] + ksz * (double)c->rhs_dilation[s] +
                   fabs((double)c->padding_low[s]);
    if (reach >= lim || lsz >= lim || (double)c->lhs_dilation[s] >= lim) return false;
  }
  a->M = p->M, a->cout_g = p->cout_g;
  a->cin = p->cin_g;
  a->ls_b = p->in_stride[0], a->ls_f = p->in_stride[1];
  a->ks_i = dim_stride(c->rhs_dims, R, c->kernel_input_feature_dimension);
  a->ks_o = dim_stride(c->rhs_dims, R, c->kernel_output_feature_dimension);
  a->in_group_off = p->in_group_off;
  a->os_f = p->os_f;
  a->S = S;
  a->nm = p->nm;
  for (uint32_t i = 0; i < p->nm; i++) {
    a->m_size[i] = p->m_size[i], a->m_ostride[i] = p->m_ostride[i];
    a->m_sp[i] = p->m_in[i] >= 2 ? p->m_in[i] - 2 : -1;
  }
  a->kwin = 1;
  for (uint32_t s = 0; s < S; s++) {
    a->ksz[s] = (int)c->rhs_dims[c->kernel_spatial_dimensions[s]];
    a->ksp[s] = dim_stride(c->rhs_dims, R, c->kernel_spatial_dimensions[s]);
    a->rev[s] = c->window_reversal[s];
    a->rdil[s] = (int)c->rhs_dilation[s];
    a->ldil[s] = (int)c->lhs_dilation[s];
    a->lsz[s] = (int)c->lhs_dims[c->input_spatial_dimensions[s]];
    a->lsp[s] = dim_stride(c->lhs_dims, R, c->input_spatial_dimensions[s]);
    a->stride[s] = (int)c->window_strides[s];
    a->pad_lo[s] = (int)c->padding_low[s];
    a->kwin *= a->ksz[s];
    if (a->kwin >= INT_MAX) return false;
  }
  return true;
}

static int64_t ceil_div(int64_t x, int64_t y) { return (x + y - 1) / y; }

/* Scratch of the tiled path's partial sums: `n` outputs x ks lanes, then
 * (more than CUDA_CONV_KSUM_FAN lanes) the first cv_ksum pass's sums. */
static size_t tile_partial_bytes(int64_t n, int64_t ks, size_t acc) {
  if (ks <= 1) return 0;
  size_t b = round256((size_t)(n * ks) * acc);
  if (ks > CUDA_CONV_KSUM_FAN)
    b += round256((size_t)(n * ceil_div(ks, CUDA_CONV_KSUM_FAN)) * acc);
  return b;
}

static int64_t tile_threads(int64_t G, int64_t M, int64_t N, int64_t tm, int64_t tn,
                            int64_t ks) {
  return G * ceil_div(M, tm) * ceil_div(N, tn) * ks;
}

/* The tiled path's cost model (an H200; bench/CONV.md has the reasoning):
 * a thread's step (one window position and input feature) issues about
 * 3 (tm + tn) + tm tn + 5 instructions (an address and a load per row and
 * feature, a fused multiply-add per pair, the loop), each window position
 * about 25 S + 8 tm S more (its decode, each row's bounds), each thread
 * about 400 + 80 tm more (its indices in 64-bit); the GPU issues
 * TILE_ISSUE_PER_NS thread-instructions a nanosecond when it has
 * CUDA_CONV_TILE_THREADS threads or more, proportionally less with fewer
 * (the loads' latency then shows). A split contraction adds the partial
 * sums' bytes (written, then read) at TILE_BYTES_PER_NS and
 * TILE_PASS_NS a cv_ksum pass. */
#define TILE_ISSUE_PER_NS 28000.0 /* 132 SMs x 4 schedulers x 32 lanes x 1.7 GHz */
#define TILE_BYTES_PER_NS 3000.0  /* 3 TB/s (of HBM's ~4.8; L2 holds most) */
#define TILE_PASS_NS 2000.0       /* a launch in a replayed graph, and its tail */

static double tile_cost_ns(int64_t G, int64_t M, int64_t N, int64_t kwin, int64_t cin, int64_t S,
                           size_t acc, int64_t tm, int64_t tn, int64_t cw, int64_t cc) {
  int64_t ks = ceil_div(kwin, cw) * ceil_div(cin, cc);
  int64_t threads = tile_threads(G, M, N, tm, tn, ks);
  double wsteps = (double)ceil_div(kwin, ceil_div(kwin, cw));
  double steps = wsteps * (double)ceil_div(cin, ceil_div(cin, cc));
  double instr = (double)threads * (steps * (double)(3 * (tm + tn) + tm * tn + 5) +
                                    wsteps * (double)(25 * S + 8 * tm * S) + 400.0 + 80.0 * tm);
  double fill = (double)threads / CUDA_CONV_TILE_THREADS;
  double t = instr / TILE_ISSUE_PER_NS / (fill < 1 ? fill : 1);
  if (ks > 1) {
    double passes = 0;
    for (int64_t n = ks; n > 1; n = ceil_div(n, CUDA_CONV_KSUM_FAN)) passes++;
    t += 2.0 * (double)(G * M * N) * (double)ks * (double)acc / TILE_BYTES_PER_NS +
         passes * TILE_PASS_NS;
  }
  return t;
}

/* The header's rule 3: for each tile (tm of 4, 2, 1 rows; tn of
 * min(N, 8) features, halved down to 1), the contraction split in halves
 * (the longer of a lane's window positions and input features) until the
 * threads reach CUDA_CONV_TILE_THREADS, a lane would keep fewer than
 * CUDA_CONV_TILE_MIN_LANE products, or the partial sums would pass
 * `target` bytes; of those the cheapest by tile_cost_ns (the first on a
 * tie: the larger tile). */
static void tile_shape(const plan *p, const cv_tile_args *a, size_t target,
                       cuda_conv_tile_shape *sh) {
  int64_t M = p->M, N = p->cout_g, G = p->G, T = CUDA_CONV_TILE_THREADS;
  int64_t kwin = a->kwin > 0 ? a->kwin : 1, cin = a->cin > 0 ? a->cin : 1;
  size_t acc = p->es == 8 ? 8 : 4;
  double best = -1;
  memset(sh, 0, sizeof *sh);
#define KS_OF(w, f) (ceil_div(kwin, (w)) * ceil_div(cin, (f)))
  for (int64_t tm = CUDA_CONV_TILE_M; tm >= 1; tm /= 2) {
    if (tm > M && tm > 1) continue;
    for (int64_t tn = N < CUDA_CONV_TILE_N ? N : CUDA_CONV_TILE_N; tn >= 1; tn = tn / 2) {
      int64_t cw = kwin, cc = cin; /* window positions, input features per lane */
      while (tile_threads(G, M, N, tm, tn, KS_OF(cw, cc)) < T) {
        int64_t nw = cw, nc = cc;
        if (cw >= cc) nw = (cw + 1) / 2;
        else nc = (cc + 1) / 2;
        if (nw * nc < CUDA_CONV_TILE_MIN_LANE || (nw == cw && nc == cc)) break;
        if (tile_partial_bytes(G * M * N, KS_OF(nw, nc), acc) > target) break;
        cw = nw, cc = nc;
      }
      double cost = tile_cost_ns(G, M, N, kwin, cin, a->S, acc, tm, tn, cw, cc);
      if (best < 0 || cost < best) {
        best = cost;
        sh->tm = tm, sh->tn = tn;
        sh->ksw = ceil_div(kwin, cw), sh->ksc = ceil_div(cin, cc);
        sh->est_us = cost / 1000;
      }
      if (tn == 1) break;
    }
  }
  sh->ks = sh->ksw * sh->ksc;
  sh->threads = tile_threads(G, M, N, sh->tm, sh->tn, sh->ks);
#undef KS_OF
}

bool cuda_conv_tile_plan(const backend_conv *c, size_t target, cuda_conv_tile_shape *out) {
  memset(out, 0, sizeof *out);
  if (!cuda_conv_takes(c) || conv_result_elements(c) == 0) return false;
  plan p;
  make_plan(c, target, &p);
  cv_tile_args a;
  if (!tile_args(c, &p, &a)) return false;
  tile_shape(&p, &a, target, out);
  return true;
}

/* Our own paths' rule (the header's 1 to 4). */
static cuda_conv_path choose_ours(const backend_conv *c) {
  if (!cuda_conv_takes(c) || conv_result_elements(c) == 0) return CUDA_CONV_DIRECT;
  plan p;
  make_plan(c, CUDA_CONV_SCRATCH_TARGET, &p);
  cv_tile_args ta;
  bool tiled = tile_args(c, &p, &ta);
  if (p.K == 0) return p.fits_int ? CUDA_CONV_IM2COL : CUDA_CONV_DIRECT; /* a memset */
  /* 1. tiny, with short sums: one launch, the interpreter's bits (a long
   * sum into few outputs would be a few threads' serial loop) */
  if (conv_macs(c) <= CUDA_CONV_DIRECT_MAX_MACS && (p.K <= CUDA_CONV_DIRECT_MAX_K || !tiled))
    return CUDA_CONV_DIRECT;
  /* 2. a GEMM large on every side: cuBLASLt */
  if (p.fits_int && p.row_bytes <= CUDA_CONV_SCRATCH_TARGET && p.cout_g >= CUDA_CONV_GEMM_MIN_N &&
      p.K >= CUDA_CONV_GEMM_MIN_K &&
      (p.M >= CUDA_CONV_GEMM_MIN_M || p.M * p.cout_g >= CUDA_CONV_GEMM_MIN_MN))
    return CUDA_CONV_IM2COL;
  /* 3. the tiled kernel */
  if (tiled) return CUDA_CONV_TILED;
  /* 4. the forms it does not take: few output features per group over a
   * short window (depthwise: a GEMM of n < 4 is a matrix-vector product
   * that rereads the whole im2col matrix; a long window stays on im2col:
   * one thread would sum all of it alone); an im2col row alone past the
   * target */
  if (!p.fits_int || (p.cout_g < 4 && p.K <= 4096) || p.row_bytes > CUDA_CONV_SCRATCH_TARGET)
    return CUDA_CONV_DIRECT;
  return CUDA_CONV_IM2COL;
}

/* Whether the cuDNN path takes `c` on the started backend (the plan made
 * with the context current), and its scratch. A failure is no answer but
 * "no" (our paths), except with HLO_CUDNN=1: then the path is taken and
 * cuda_conv reports the failure. */
static bool cudnn_takes(const backend_conv *c, size_t *bytes) {
  *bytes = 0;
  if (!cuda_cudnn_allowed()) return false;
  const cuda_device_state *s = cuda_state();
  if (!s) return false;
  cuda_cudnn_desc d;
  if (!cuda_cudnn_map(c, &d)) return false;
  bool takes = false;
  hlo_status st = cuda_make_current(s, "convolution through cuDNN");
  if (!st) st = cuda_cudnn_plan(c, &takes, bytes);
  if (st) {
    hlo_status_free(st);
    return cuda_cudnn_forced();
  }
  return takes;
}

cuda_conv_path cuda_conv_choose(const backend_conv *c) {
  cuda_conv_path ours = choose_ours(c);
  if (!cuda_conv_takes(c) || conv_result_elements(c) == 0) return ours;
  /* 0. cuDNN where it loaded and takes the form; tiny ones stay on the
   * direct path (the interpreter's bits) unless HLO_CUDNN=1 */
  if (conv_macs(c) <= CUDA_CONV_DIRECT_MAX_MACS && ours == CUDA_CONV_DIRECT &&
      !cuda_cudnn_forced())
    return ours;
  size_t bytes;
  return cudnn_takes(c, &bytes) ? CUDA_CONV_CUDNN : ours;
}

size_t cuda_conv_path_scratch_bytes(const backend_conv *c, cuda_conv_path path, size_t target) {
  if (!cuda_conv_takes(c) || conv_result_elements(c) == 0) return 0;
  if (path == CUDA_CONV_AUTO) path = cuda_conv_choose(c);
  if (path == CUDA_CONV_DIRECT) return 0;
  if (path == CUDA_CONV_CUDNN) {
    size_t bytes;
    return cudnn_takes(c, &bytes) ? bytes : 0;
  }
  plan p;
  make_plan(c, target, &p);
  if (path == CUDA_CONV_TILED) {
    cv_tile_args a;
    if (p.K == 0 || !tile_args(c, &p, &a)) return 0;
    cuda_conv_tile_shape sh;
    tile_shape(&p, &a, target, &sh);
    return tile_partial_bytes(p.G * p.M * p.cout_g, sh.ks, p.es == 8 ? 8 : 4);
  }
  if (p.K == 0 || !p.fits_int) return 0;
  return p.pack_bytes + p.a_bytes + p.c_bytes;
}

/* ------------------------------------------------------------ the driver */

static uint32_t grid_for(int64_t n, int64_t per_block) {
  int64_t g = (n + per_block - 1) / per_block;
  if (g < 1) g = 1;
  return (uint32_t)(g > GRID_MAX ? GRID_MAX : g);
}

static hlo_status run_direct(const backend_conv *c, const void *lhs, const void *rhs,
                             void *output, const cuda_conv_ops *ops) {
  uint32_t R = c->rank, S = c->num_spatial;
  cv_direct_args a;
  memset(&a, 0, sizeof a);
  a.lhs = lhs, a.rhs = rhs, a.out = output;
  a.total = conv_result_elements(c);
  a.R = R, a.S = S;
  for (uint32_t d = 0; d < R; d++) a.rdims[d] = c->result_dims[d];
  a.ob = c->output_batch_dimension, a.ofeat = c->output_feature_dimension;
  a.ls_b = dim_stride(c->lhs_dims, R, c->input_batch_dimension);
  a.ls_f = dim_stride(c->lhs_dims, R, c->input_feature_dimension);
  a.ks_i = dim_stride(c->rhs_dims, R, c->kernel_input_feature_dimension);
  a.ks_o = dim_stride(c->rhs_dims, R, c->kernel_output_feature_dimension);
  a.cin = c->rhs_dims[c->kernel_input_feature_dimension];
  int64_t G = conv_group_count(c);
  a.cout_g = c->rhs_dims[c->kernel_output_feature_dimension] / G;
  a.bout = c->result_dims[c->output_batch_dimension];
  a.bgc = c->batch_group_count > 1, a.fgc = c->feature_group_count > 1;
  a.kwin = 1;
  for (uint32_t s = 0; s < S; s++) {
    a.osp[s] = c->output_spatial_dimensions[s];
    a.stride[s] = c->window_strides[s];
    a.pad_lo[s] = c->padding_low[s];
    a.rdil[s] = c->rhs_dilation[s];
    a.ldil[s] = c->lhs_dilation[s];
    a.lsz[s] = c->lhs_dims[c->input_spatial_dimensions[s]];
    a.lsp[s] = dim_stride(c->lhs_dims, R, c->input_spatial_dimensions[s]);
    a.ksz[s] = c->rhs_dims[c->kernel_spatial_dimensions[s]];
    a.ksp[s] = dim_stride(c->rhs_dims, R, c->kernel_spatial_dimensions[s]);
    a.rev[s] = c->window_reversal[s];
    a.kwin *= a.ksz[s];
  }
  cuda_conv_kernel k = c->result_dtype == HLO_F32   ? CUDA_CONV_K_DIRECT_F32
                       : c->result_dtype == HLO_F64 ? CUDA_CONV_K_DIRECT_F64
                       : c->result_dtype == HLO_BF16 ? CUDA_CONV_K_DIRECT_BF16
                                                     : CUDA_CONV_K_DIRECT_F16;
  return ops->launch(ops->ctx, k, grid_for(a.total, BLOCK), BLOCK, &a, sizeof a);
}

/* The kernel of a data-movement family for element size es. */
static cuda_conv_kernel move_kernel(cuda_conv_kernel first, size_t es) {
  return (cuda_conv_kernel)(first + (es == 2 ? 0 : es == 4 ? 1 : 2));
}

static hlo_status run_im2col(const backend_conv *c, size_t target, const void *lhs,
                             const void *rhs, void *output, void *scratch,
                             const cuda_conv_ops *ops) {
  plan p;
  make_plan(c, target, &p);
  if (!p.fits_int)
    return status_at(HLO_INVALID_ARGUMENT, &c->loc, "convolution on the cuda backend: matrix "
                     "sizes (M %lld, K %lld, N %lld) are past cuBLASLt's int", (long long)p.M,
                     (long long)p.K, (long long)p.cout);
  size_t es = p.es;
  if (p.K == 0) /* an empty window or no input features: every sum is +0 */
    return ops->zero(ops->ctx, output, (size_t)conv_result_elements(c) * es);
  char *pack = scratch, *abuf = pack + p.pack_bytes, *cbuf = abuf + p.a_bytes;
  const char *kb = rhs;
  if (p.km == KOF_PACK) {
    cv_pack_args pa = {rhs, pack, p.K * p.cout, p.cout, p.kpost};
    HLO_TRY(ops->launch(ops->ctx, move_kernel(CUDA_CONV_K_PACK_2, es), grid_for(pa.total, BLOCK),
                        BLOCK, &pa, sizeof pa));
    kb = pack;
  }
  bool kt = p.km == KOF_OUTER; /* B stored C_out x K */
  cv_im2col_args ia;
  memset(&ia, 0, sizeof ia);
  ia.in = lhs, ia.a = abuf, ia.K = p.K, ia.nm = p.nm, ia.nk = p.nk, ia.nin = p.nin;
  ia.in_group_off = p.in_group_off;
  for (uint32_t i = 0; i < MAXR; i++) {
    ia.m_size[i] = p.m_size[i], ia.m_in[i] = p.m_in[i], ia.m_coef[i] = p.m_coef[i];
    ia.m_cst[i] = p.m_cst[i], ia.k_size[i] = p.k_size[i], ia.k_in[i] = p.k_in[i];
    ia.k_coef[i] = p.k_coef[i], ia.k_cst[i] = p.k_cst[i], ia.in_size[i] = p.in_size[i];
    ia.in_ldil[i] = p.in_ldil[i], ia.in_stride[i] = p.in_stride[i];
  }
  cv_store_args sa;
  memset(&sa, 0, sizeof sa);
  sa.ct = cbuf, sa.out = output, sa.nm = p.nm, sa.os_f = p.os_f;
  for (uint32_t i = 0; i < MAXR; i++) sa.m_size[i] = p.m_size[i], sa.m_ostride[i] = p.m_ostride[i];
  uint32_t iblock = p.K >= BLOCK ? BLOCK : (uint32_t)((p.K + 31) / 32 * 32);
  for (int64_t m0 = 0; m0 < p.M; m0 += p.mc) {
    int64_t ml = p.M - m0 < p.mc ? p.M - m0 : p.mc;
    ia.m0 = m0, ia.ml = ml, ia.rows = p.G * ml;
    HLO_TRY(ops->launch(ops->ctx, move_kernel(CUDA_CONV_K_IM2COL_2, es),
                        grid_for(ia.rows, 1), iblock, &ia, sizeof ia));
    backend_gemm g;
    memset(&g, 0, sizeof g);
    g.dtype = g.c_dtype = c->result_dtype;
    g.batch = p.G, g.k = p.K;
    if (p.row_out) { /* C (ml x C_out/G, in place) = A * B */
      g.m = ml, g.n = p.cout_g;
      g.trans_a = false, g.lda = p.K, g.batch_stride_a = ml * p.K;
      g.trans_b = kt, g.ldb = kt ? p.K : p.cout, g.batch_stride_b = kt ? p.cout_g * p.K : p.cout_g;
      g.ldc = p.cout, g.batch_stride_c = p.cout_g;
      HLO_TRY(ops->gemm(ops->ctx, &g, abuf, kb, (char *)output + (size_t)(m0 * p.cout) * es));
    } else { /* C^T (C_out/G x ml, scratch) = B^T * A^T, then stored */
      g.m = p.cout_g, g.n = ml;
      g.trans_a = !kt, g.lda = kt ? p.K : p.cout, g.batch_stride_a = kt ? p.cout_g * p.K : p.cout_g;
      g.trans_b = true, g.ldb = p.K, g.batch_stride_b = ml * p.K;
      g.ldc = ml, g.batch_stride_c = p.cout_g * ml;
      HLO_TRY(ops->gemm(ops->ctx, &g, kb, abuf, cbuf));
      sa.m0 = m0, sa.ml = ml, sa.total = p.G * p.cout_g * ml;
      HLO_TRY(ops->launch(ops->ctx, move_kernel(CUDA_CONV_K_STORE_2, es),
                          grid_for(sa.total, BLOCK), BLOCK, &sa, sizeof sa));
    }
  }
  return NULL;
}

/* The tiled path: cv_tile, then (split contraction) cv_ksum passes. */
static hlo_status run_tiled(const backend_conv *c, size_t target,
                            const cuda_conv_tile_shape *forced, const void *lhs,
                            const void *rhs, void *output, void *scratch,
                            const cuda_conv_ops *ops) {
  plan p;
  make_plan(c, target, &p);
  cv_tile_args a;
  if (!tile_args(c, &p, &a))
    return status_at(HLO_INVALID_ARGUMENT, &c->loc, "convolution on the cuda backend: the tiled "
                     "kernel does not take this form (more than %d spatial dims, or positions "
                     "past 32 bits)", CUDA_CONV_TILE_MAX_SPATIAL);
  if (p.K == 0) /* an empty window or no input features: every sum is +0 */
    return ops->zero(ops->ctx, output, (size_t)conv_result_elements(c) * p.es);
  cuda_conv_tile_shape sh;
  if (forced) {
    sh = *forced;
    sh.est_us = 0;
    sh.ks = sh.ksw * sh.ksc;
    sh.threads = tile_threads(p.G, p.M, p.cout_g, sh.tm, sh.tn, sh.ks);
  } else {
    tile_shape(&p, &a, target, &sh);
  }
  int ti = c->result_dtype == HLO_F32 ? 0 : c->result_dtype == HLO_F64 ? 1
           : c->result_dtype == HLO_BF16 ? 2 : 3;
  size_t acc = p.es == 8 ? 8 : 4;
  int64_t ne = p.G * p.M * p.cout_g;
  a.lhs = lhs, a.rhs = rhs;
  a.tm = sh.tm, a.tn = sh.tn, a.ksw = sh.ksw, a.ksc = sh.ksc, a.total = sh.threads;
  a.ntm = ceil_div(p.M, sh.tm), a.ntn = ceil_div(p.cout_g, sh.tn);
  a.final = sh.ks == 1;
  a.out = sh.ks == 1 ? output : scratch;
  bool small = sh.tm <= CUDA_CONV_TILE_SMALL_M && sh.tn <= CUDA_CONV_TILE_SMALL_N;
  cuda_conv_kernel tk = small ? CUDA_CONV_K_TILES_F32 : CUDA_CONV_K_TILE_F32;
  HLO_TRY(ops->launch(ops->ctx, (cuda_conv_kernel)(tk + ti),
                      grid_for(a.total, BLOCK), BLOCK, &a, sizeof a));
  if (sh.ks == 1) return NULL;
  char *buf[2] = {scratch, (char *)scratch + round256((size_t)(ne * sh.ks) * acc)};
  cv_ksum_args k;
  memset(&k, 0, sizeof k);
  k.n = ne, k.fan = CUDA_CONV_KSUM_FAN, k.M = p.M, k.cout_g = p.cout_g, k.os_f = p.os_f;
  k.nm = p.nm;
  for (uint32_t i = 0; i < MAXR; i++) k.m_size[i] = p.m_size[i], k.m_ostride[i] = p.m_ostride[i];
  int cur = 0;
  for (int64_t cnt = sh.ks;;) { /* a fixed tree: CUDA_CONV_KSUM_FAN lanes at a time, in order */
    int64_t per = ceil_div(cnt, CUDA_CONV_KSUM_FAN);
    k.src = buf[cur], k.cnt = cnt, k.final = per == 1;
    k.dst = per == 1 ? output : buf[1 - cur];
    HLO_TRY(ops->launch(ops->ctx, (cuda_conv_kernel)(CUDA_CONV_K_KSUM_F32 + ti),
                        grid_for(ne * per, BLOCK), BLOCK, &k, sizeof k));
    if (per == 1) return NULL;
    cnt = per, cur = 1 - cur;
  }
}

hlo_status cuda_conv_run(const backend_conv *c, cuda_conv_path path, size_t target,
                         const void *lhs, const void *rhs, void *output, void *scratch,
                         const cuda_conv_ops *ops) {
  if (!cuda_conv_takes(c))
    return status_at(HLO_UNIMPLEMENTED, &c->loc, "convolution on the cuda backend: element types "
                     "%s x %s -> %s are not supported (f32, f64, bf16 or f16, all alike)",
                     hlo_dtype_name(c->lhs_dtype), hlo_dtype_name(c->rhs_dtype),
                     hlo_dtype_name(c->result_dtype));
  if (conv_result_elements(c) == 0) return NULL;
  bool chosen = path == CUDA_CONV_AUTO;
  if (chosen) path = choose_ours(c); /* ops run our kernels only: cuDNN is cuda_conv_by's */
  if (path == CUDA_CONV_CUDNN)
    return status_at(HLO_INVALID_ARGUMENT, &c->loc, "convolution on the cuda backend: the cuDNN "
                     "path runs on the device only (cuda_conv_by)");
  if (path == CUDA_CONV_DIRECT) return run_direct(c, lhs, rhs, output, ops);
  if (cuda_conv_path_scratch_bytes(c, path, target) > 0 && !scratch)
    return status_at(HLO_INVALID_ARGUMENT, &c->loc, "convolution on the cuda backend: no scratch "
                     "(%zu bytes needed)", cuda_conv_path_scratch_bytes(c, path, target));
  if (path == CUDA_CONV_TILED) return run_tiled(c, target, NULL, lhs, rhs, output, scratch, ops);
  hlo_status st = run_im2col(c, target, lhs, rhs, output, scratch, ops);
  if (st && chosen && hlo_status_code_of(st) == HLO_UNIMPLEMENTED) {
    /* cuBLASLt has no algorithm for a GEMM (strides it declines): the
     * direct path writes the whole output over what the chunks before wrote */
    hlo_status_free(st);
    return run_direct(c, lhs, rhs, output, ops);
  }
  return st;
}

static bool shape_ok(const cuda_conv_tile_shape *sh) {
  return sh->tm >= 1 && sh->tm <= CUDA_CONV_TILE_M && sh->tn >= 1 && sh->tn <= CUDA_CONV_TILE_N &&
         sh->ksw >= 1 && sh->ksc >= 1 && sh->ksw <= INT_MAX && sh->ksc <= INT_MAX;
}

size_t cuda_conv_tile_scratch_bytes(const backend_conv *c, const cuda_conv_tile_shape *shape) {
  if (!cuda_conv_takes(c) || conv_result_elements(c) == 0 || !shape_ok(shape)) return 0;
  plan p;
  make_plan(c, CUDA_CONV_SCRATCH_TARGET, &p);
  return p.K == 0 ? 0 : tile_partial_bytes(p.G * p.M * p.cout_g, shape->ksw * shape->ksc,
                                           p.es == 8 ? 8 : 4);
}

hlo_status cuda_conv_run_tiled(const backend_conv *c, const cuda_conv_tile_shape *shape,
                               const void *lhs, const void *rhs, void *output, void *scratch,
                               const cuda_conv_ops *ops) {
  if (!cuda_conv_takes(c))
    return cuda_conv_run(c, CUDA_CONV_TILED, CUDA_CONV_SCRATCH_TARGET, lhs, rhs, output, scratch,
                         ops);
  if (!shape_ok(shape))
    return status_at(HLO_INVALID_ARGUMENT, &c->loc, "convolution on the cuda backend: tile shape "
                     "%lld x %lld, split %lld x %lld out of range", (long long)shape->tm,
                     (long long)shape->tn, (long long)shape->ksw, (long long)shape->ksc);
  if (conv_result_elements(c) == 0) return NULL;
  if (cuda_conv_tile_scratch_bytes(c, shape) > 0 && !scratch)
    return status_at(HLO_INVALID_ARGUMENT, &c->loc, "convolution on the cuda backend: no scratch "
                     "(%zu bytes needed)", cuda_conv_tile_scratch_bytes(c, shape));
  return run_tiled(c, CUDA_CONV_SCRATCH_TARGET, shape, lhs, rhs, output, scratch, ops);
}

/* ------------------------------------------------------------ the device */

static struct {
  pthread_once_t once;
  hlo_status_code code;
  char message[4608];
  CUmodule mod;
  CUfunction fns[CUDA_CONV_NUM_KERNELS];
} g_mod = {.once = PTHREAD_ONCE_INIT};

/* Compiles and loads the unit (once; the context is current: callers made
 * it so before pthread_once). */
static void module_load(void) {
  const cuda_device_state *s = cuda_state();
  if (!s) {
    g_mod.code = HLO_UNAVAILABLE;
    snprintf(g_mod.message, sizeof g_mod.message, "the cuda backend is not started");
    return;
  }
  void *cubin = NULL;
  size_t len = 0;
  hlo_status st = nvrtc_compile_cached(cuda_conv_kernel_source(), "hlo_conv.cu",
                                       s->cc_major * 10 + s->cc_minor, &cubin, &len);
  CUresult r = CUDA_SUCCESS;
  const char *what = "cuModuleLoadData";
  if (!st) r = s->cu->cuModuleLoadData(&g_mod.mod, cubin);
  for (int k = 0; !st && !r && k < CUDA_CONV_NUM_KERNELS; k++) {
    what = kernel_names[k];
    r = s->cu->cuModuleGetFunction(&g_mod.fns[k], g_mod.mod, kernel_names[k]);
  }
  free(cubin);
  if (!st && r) st = cuda_error(s, r, what);
  if (st) {
    g_mod.code = hlo_status_code_of(st);
    snprintf(g_mod.message, sizeof g_mod.message, "the cuda convolution kernels: %s",
             hlo_status_message(st));
    hlo_status_free(st);
    return;
  }
  g_mod.code = HLO_OK;
}

static hlo_status module_ready(const cuda_device_state *s) {
  HLO_TRY(cuda_make_current(s, "convolution"));
  pthread_once(&g_mod.once, module_load);
  return g_mod.code == HLO_OK ? NULL : status_new(g_mod.code, "%s", g_mod.message);
}

static hlo_status dev_launch(void *ctx, cuda_conv_kernel k, uint32_t grid, uint32_t block,
                             const void *args, size_t args_bytes) {
  const cuda_device_state *s = ctx;
  (void)args_bytes; /* the driver knows the parameter's size from the cubin */
  void *params[] = {(void *)(uintptr_t)args};
  CUresult r = s->cu->cuLaunchKernel(g_mod.fns[k], grid, 1, 1, block, 1, 1, 0, s->stream, params,
                                     NULL);
  if (!r) return NULL;
  char what[128];
  snprintf(what, sizeof what, "launching %s (grid %u, block %u)", kernel_names[k], grid, block);
  return cuda_error(s, r, what);
}

static hlo_status dev_gemm(void *ctx, const backend_gemm *g, const void *a, const void *b,
                           void *c) {
  (void)ctx;
  return cuda_gemm(g, a, b, c);
}

static hlo_status dev_zero(void *ctx, void *dst, size_t bytes) {
  const cuda_device_state *s = ctx;
  CUresult r = s->cu->cuMemsetD8Async((CUdeviceptr)(uintptr_t)dst, 0, bytes, s->stream);
  return r ? cuda_error(s, r, "convolution (cuMemsetD8Async)") : NULL;
}

size_t cuda_conv_scratch_bytes(const backend_conv *c) {
  const cuda_device_state *s = cuda_state();
  if (s && cuda_conv_takes(c)) hlo_status_free(module_ready(s)); /* compile now; errors later */
  return cuda_conv_path_scratch_bytes(c, CUDA_CONV_AUTO, CUDA_CONV_SCRATCH_TARGET);
}

hlo_status cuda_conv_by(const backend_conv *c, cuda_conv_path path, const void *lhs,
                        const void *rhs, void *output, void *scratch) {
  if (!cuda_conv_takes(c)) /* the message: cuda_conv_run's */
    return cuda_conv_run(c, path, CUDA_CONV_SCRATCH_TARGET, lhs, rhs, output, scratch, NULL);
  const cuda_device_state *s = cuda_state();
  if (!s)
    return status_at(HLO_UNAVAILABLE, &c->loc, "convolution on the cuda backend: the backend is "
                     "not started");
  if (conv_result_elements(c) > 0 &&
      (path == CUDA_CONV_CUDNN || (path == CUDA_CONV_AUTO && cuda_conv_choose(c) == CUDA_CONV_CUDNN))) {
    HLO_TRY(cuda_make_current(s, "convolution through cuDNN"));
    return cuda_cudnn_conv(c, lhs, rhs, output, scratch, s->stream);
  }
  hlo_status st = module_ready(s);
  if (st) return st;
  cuda_conv_ops ops = {dev_launch, dev_gemm, dev_zero, (void *)(uintptr_t)s};
  return cuda_conv_run(c, path, CUDA_CONV_SCRATCH_TARGET, lhs, rhs, output, scratch, &ops);
}

hlo_status cuda_conv(const backend_conv *c, const void *lhs, const void *rhs, void *output,
                     void *scratch) {
  return cuda_conv_by(c, CUDA_CONV_AUTO, lhs, rhs, output, scratch);
}
