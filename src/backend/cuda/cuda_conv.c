/* cuda_conv.c — stablehlo.convolution on the GPU (cuda_conv.h): the
 * kernels' source, the host-side plan and driver, and the device's
 * launch / GEMM operations.
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
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "backend/cuda/cuda_api.h"
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
  } cv_store_args;

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
    "}\n";

static const char *const kernel_names[CUDA_CONV_NUM_KERNELS] = {
    "cv_direct_f32", "cv_direct_f64", "cv_direct_bf16", "cv_direct_f16",
    "cv_im2col_2",   "cv_im2col_4",   "cv_im2col_8",    "cv_pack_2",
    "cv_pack_4",     "cv_pack_8",     "cv_store_2",     "cv_store_4",
    "cv_store_8"};

const char *cuda_conv_kernel_name(cuda_conv_kernel k) {
  return (unsigned)k < CUDA_CONV_NUM_KERNELS ? kernel_names[k] : "?";
}

static struct {
  pthread_once_t once;
  char body[40960];
  char source[45056];
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
              "#define CV_STORE(x) (x)\n"},
      {"f64", "#define CV_T double\n#define CV_ACC double\n#define CV_LOAD(x) (x)\n"
              "#define CV_STORE(x) (x)\n"},
      {"bf16", "#define CV_T unsigned short\n#define CV_ACC float\n"
               "#define CV_LOAD(x) cv_bf16_to_f32(x)\n#define CV_STORE(x) cv_f32_to_bf16(x)\n"},
      {"f16", "#define CV_T unsigned short\n#define CV_ACC float\n"
              "#define CV_LOAD(x) cv_f16_to_f32(x)\n#define CV_STORE(x) cv_f32_to_f16(x)\n"}};
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
    append(g_src.body, sizeof g_src.body, &n,
           "#undef CV_T\n#undef CV_ACC\n#undef CV_LOAD\n#undef CV_STORE\n#undef CV_NAME\n");
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

cuda_conv_path cuda_conv_choose(const backend_conv *c) {
  if (!cuda_conv_takes(c) || conv_result_elements(c) == 0) return CUDA_CONV_DIRECT;
  plan p;
  make_plan(c, CUDA_CONV_SCRATCH_TARGET, &p);
  if (!p.fits_int) return CUDA_CONV_DIRECT;
  if (p.K == 0) return CUDA_CONV_IM2COL; /* every sum empty: a memset */
  /* tiny convolutions: one launch; few output features per group over a
   * short window (depthwise): a GEMM of n < 4 is a matrix-vector product
   * that rereads the whole im2col matrix (a long window stays on im2col:
   * one thread would sum all of it alone); an im2col row alone past the
   * target */
  if (conv_macs(c) <= CUDA_CONV_DIRECT_MAX_MACS || (p.cout_g < 4 && p.K <= 4096) ||
      p.row_bytes > CUDA_CONV_SCRATCH_TARGET)
    return CUDA_CONV_DIRECT;
  return CUDA_CONV_IM2COL;
}

size_t cuda_conv_path_scratch_bytes(const backend_conv *c, cuda_conv_path path, size_t target) {
  if (!cuda_conv_takes(c) || conv_result_elements(c) == 0) return 0;
  if (path == CUDA_CONV_AUTO) path = cuda_conv_choose(c);
  if (path != CUDA_CONV_IM2COL) return 0;
  plan p;
  make_plan(c, target, &p);
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
  if (chosen) path = cuda_conv_choose(c);
  if (path == CUDA_CONV_DIRECT) return run_direct(c, lhs, rhs, output, ops);
  if (cuda_conv_path_scratch_bytes(c, path, target) > 0 && !scratch)
    return status_at(HLO_INVALID_ARGUMENT, &c->loc, "convolution on the cuda backend: no scratch "
                     "(%zu bytes needed)", cuda_conv_path_scratch_bytes(c, path, target));
  hlo_status st = run_im2col(c, target, lhs, rhs, output, scratch, ops);
  if (st && chosen && hlo_status_code_of(st) == HLO_UNIMPLEMENTED) {
    /* cuBLASLt has no algorithm for a GEMM (strides it declines): the
     * direct path writes the whole output over what the chunks before wrote */
    hlo_status_free(st);
    return run_direct(c, lhs, rhs, output, ops);
  }
  return st;
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
  hlo_status st = module_ready(s);
  if (st) return st;
  cuda_conv_ops ops = {dev_launch, dev_gemm, dev_zero, (void *)(uintptr_t)s};
  return cuda_conv_run(c, path, CUDA_CONV_SCRATCH_TARGET, lhs, rhs, output, scratch, &ops);
}

hlo_status cuda_conv(const backend_conv *c, const void *lhs, const void *rhs, void *output,
                     void *scratch) {
  return cuda_conv_by(c, CUDA_CONV_AUTO, lhs, rhs, output, scratch);
}
