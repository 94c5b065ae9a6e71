/* cuda_window.c — reduce_window and select_and_scatter on the GPU
 * (cuda_window.h).
 *
 * One CUDA C source holds two kernels per element type (hlo_window_rw_SUF,
 * hlo_window_ss_SUF), generic over a parameter block (cuda_window_desc:
 * dims, strides, padding, dilations, the reducer and the select direction
 * as numbers, so the branch on them is uniform across the grid). The
 * kernels of one element type are compiled by NVRTC for the device's
 * architecture when the first op of that type is taken (window_takes, at
 * the runtime's compile time) or run: the source after
 * "#define WK_ONLY_SUF", once per process (a mutex; a failure is
 * remembered and given again), loaded with cuModuleLoadData into the
 * backend's context, and never unloaded. One type's unit compiles in
 * 0.3 s, all thirteen in 3.8 s (NVRTC 13.0 on this build machine), and a
 * program seldom has more than one type of window op.
 *
 * Launches: blocks of 256 threads, ceil(n / 256) blocks up to 2^31 - 1;
 * the kernels loop grid-stride over 64-bit element indices, so any grid
 * is correct. Work per thread: reduce_window, the window's elements;
 * select_and_scatter, the windows holding the element (ceil(k / stride)
 * per dim at most) times their positions (a window's walk stops once the
 * selection has left the element: it can only move to later positions).
 *
 * Element ops are window.c's, written again for the device: floats
 * narrower than f32 widened exactly and rounded to nearest even after
 * every step (bit-level conversions, the same as support/float.c's,
 * canonical NaN for bf16, payload kept for f16), maximum / minimum with
 * the first NaN propagated and +0 > -0, integer add / multiply wrapping
 * through uint64_t, i1 add = or, multiply = and, maximum = or, minimum =
 * and. The unit is compiled without fast math or FMA contraction
 * (nvrtc.c), so f32 / f64 adds and multiplies round as the host's. */
#include "backend/cuda/cuda_window.h"
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "backend/cuda/cuda_api.h"
#include "backend/cuda/nvrtc.h"
#include "ir/element.h"
#include "support/status.h"

#define WINDOW_BLOCK 256
#define WINDOW_GRID_MAX 2147483647u

/* The device prelude: what the body needs of the host prelude's names. */
#define WINDOW_PRELUDE                                                                   \
  "/* No #include: NVRTC compiles this alone. */\n"                                      \
  "#pragma nv_diag_suppress 177 /* helpers of the other element types, unused */\n"      \
  NVRTC_INT_TYPEDEFS                                                                     \
  "#define WK_KERNEL extern \"C\" __global__ void\n"                                     \
  "#define WK_DEV static __device__ __forceinline__\n"                                   \
  "#define WK_TID ((int64_t)blockIdx.x * blockDim.x + threadIdx.x)\n"                    \
  "#define WK_NTH ((int64_t)gridDim.x * blockDim.x)\n"                                   \
  "WK_DEV uint32_t wk_f2u(float f) { return __float_as_uint(f); }\n"                     \
  "WK_DEV float wk_u2f(uint32_t u) { return __uint_as_float(u); }\n"                     \
  "WK_DEV uint64_t wk_d2u(double f) { return (uint64_t)__double_as_longlong(f); }\n"     \
  "WK_DEV double wk_u2d(uint64_t u) { return __longlong_as_double((long long)u); }\n"

/* The kernels (see cuda_window_source_body in cuda_window.h). */
#define WINDOW_BODY \
  "/* The window kernels (backend/cuda/cuda_window.c). Compiled by NVRTC after\n" \
  " * the device prelude, and by the tests with a host C compiler after a host\n" \
  " * prelude: only C written the same in C11 and C++17, and the prelude's\n" \
  " * macros (WK_KERNEL, WK_DEV, WK_TID, WK_NTH, wk_f2u, wk_u2f, wk_d2u,\n" \
  " * wk_u2d). The kernels of element type SUF are defined when WK_ONLY_SUF\n" \
  " * or WK_ALL is. */\n" \
  "#define WK_MAXR 8\n" \
  "/* The launch parameter (cuda_window.h: cuda_window_desc, field for field). */\n" \
  "typedef struct wk_desc {\n" \
  "  int64_t rank, red, sel, wsize;\n" \
  "  int64_t n_out, n_x, unused0, unused1;\n" \
  "  int64_t x[WK_MAXR], xs[WK_MAXR], out[WK_MAXR], k[WK_MAXR];\n" \
  "  int64_t s[WK_MAXR], bd[WK_MAXR], wd[WK_MAXR], pl[WK_MAXR];\n" \
  "} wk_desc;\n" \
  "\n" \
  "/* a / b for a >= 0, b > 0: 32-bit division when both fit (the\n" \
  " * 64-bit one is a long software sequence on the GPU) */\n" \
  "WK_DEV int64_t wk_div(int64_t a, int64_t b) {\n" \
  "  return ((uint64_t)a | (uint64_t)b) >> 32 ? a / b : (int64_t)((uint32_t)a / (uint32_t)b);\n" \
  "}\n" \
  "\n" \
  "/* bf16 and f16 <-> f32, bit for bit as support/float.c (NaN: bf16 gets the\n" \
  " * canonical NaN with the sign; f16 keeps the leading payload, quieted). */\n" \
  "WK_DEV float wk_bf16_ld(uint16_t h) { return wk_u2f((uint32_t)h << 16); }\n" \
  "WK_DEV uint16_t wk_bf16_st(float f) {\n" \
  "  uint32_t u = wk_f2u(f);\n" \
  "  if ((u & 0x7fffffffu) > 0x7f800000u) return (uint16_t)(((u >> 16) & 0x8000u) | 0x7fc0u);\n" \
  "  u += 0x7fffu + ((u >> 16) & 1u);\n" \
  "  return (uint16_t)(u >> 16);\n" \
  "}\n" \
  "WK_DEV float wk_f16_ld(uint16_t h) {\n" \
  "  uint32_t sign = (uint32_t)(h & 0x8000u) << 16, e = (h >> 10) & 0x1fu, m = h & 0x3ffu;\n" \
  "  if (e == 31) return wk_u2f(sign | 0x7f800000u | (m ? 0x400000u | (m << 13) : 0u));\n" \
  "  if (e == 0) {\n" \
  "    float v = (float)m * 5.9604644775390625e-08f; /* m * 2^-24, exact */\n" \
  "    return sign ? -v : v;\n" \
  "  }\n" \
  "  return wk_u2f(sign | ((e + 112u) << 23) | (m << 13));\n" \
  "}\n" \
  "WK_DEV uint16_t wk_f16_st(float f) {\n" \
  "  uint32_t u = wk_f2u(f), sign = (u >> 16) & 0x8000u, a = u & 0x7fffffffu;\n" \
  "  if (a > 0x7f800000u) return (uint16_t)(sign | 0x7e00u | ((a >> 13) & 0x3ffu));\n" \
  "  if (a >= 0x477ff000u) return (uint16_t)(sign | 0x7c00u); /* 65520 and up: inf */\n" \
  "  if (a < 0x38800000u) { /* under 2^-14: a subnormal (or the smallest normal) */\n" \
  "    float x = wk_u2f(a) * 16777216.0f;       /* in units of 2^-24, exact */\n" \
  "    x = (x + 8388608.0f) - 8388608.0f;        /* rounded to an integer, to even */\n" \
  "    return (uint16_t)(sign | (uint32_t)x);\n" \
  "  }\n" \
  "  uint32_t r = a - 0x38000000u; /* exponent rebiased from 127 to 15 */\n" \
  "  r += 0xfffu + ((r >> 13) & 1u);\n" \
  "  return (uint16_t)(sign | (r >> 13));\n" \
  "}\n" \
  "\n" \
  "/* maximum / minimum: NaN propagates (the first NaN), +0 > -0 (the CPU's) */\n" \
  "WK_DEV float wk_max_f32(float a, float b) {\n" \
  "  float r = a > b ? a : b;\n" \
  "  r = a == b ? wk_u2f(wk_f2u(a) & wk_f2u(b)) : r;\n" \
  "  return a != a ? a : r;\n" \
  "}\n" \
  "WK_DEV float wk_min_f32(float a, float b) {\n" \
  "  float r = a < b ? a : b;\n" \
  "  r = a == b ? wk_u2f(wk_f2u(a) | wk_f2u(b)) : r;\n" \
  "  return a != a ? a : r;\n" \
  "}\n" \
  "WK_DEV double wk_max_f64(double a, double b) {\n" \
  "  double r = a > b ? a : b;\n" \
  "  r = a == b ? wk_u2d(wk_d2u(a) & wk_d2u(b)) : r;\n" \
  "  return a != a ? a : r;\n" \
  "}\n" \
  "WK_DEV double wk_min_f64(double a, double b) {\n" \
  "  double r = a < b ? a : b;\n" \
  "  r = a == b ? wk_u2d(wk_d2u(a) | wk_d2u(b)) : r;\n" \
  "  return a != a ? a : r;\n" \
  "}\n" \
  "\n" \
  "#define WK_SAME(x) (x)\n" \
  "#define WK_F_ADD(T, a, b) ((a) + (b))\n" \
  "#define WK_F_MUL(T, a, b) ((a) * (b))\n" \
  "#define WK_F32_MAX(T, a, b) wk_max_f32(a, b)\n" \
  "#define WK_F32_MIN(T, a, b) wk_min_f32(a, b)\n" \
  "#define WK_F64_MAX(T, a, b) wk_max_f64(a, b)\n" \
  "#define WK_F64_MIN(T, a, b) wk_min_f64(a, b)\n" \
  "#define WK_I_ADD(T, a, b) ((T)((uint64_t)(a) + (uint64_t)(b)))\n" \
  "#define WK_I_MUL(T, a, b) ((T)((uint64_t)(a) * (uint64_t)(b)))\n" \
  "#define WK_I_MAX(T, a, b) ((a) > (b) ? (a) : (b))\n" \
  "#define WK_I_MIN(T, a, b) ((a) < (b) ? (a) : (b))\n" \
  "#define WK_I_AND(T, a, b) ((T)((a) & (b)))\n" \
  "#define WK_I_OR(T, a, b) ((T)((a) | (b)))\n" \
  "\n" \
  "/* Operand offset of window position w (multi-index) for the window whose\n" \
  " * first position is base (per dim: o * stride - padding_low); false for\n" \
  " * padding and base-dilation holes. */\n" \
  "WK_DEV bool wk_offset(const wk_desc *d, const int64_t *base, const int64_t *w,\n" \
  "                      int64_t *off) {\n" \
  "  int64_t o = 0;\n" \
  "  for (int r = 0; r < (int)d->rank; r++) {\n" \
  "    int64_t q = base[r] + w[r] * d->wd[r];\n" \
  "    if (q < 0) return false;\n" \
  "    if (d->bd[r] != 1) {\n" \
  "      int64_t qd = wk_div(q, d->bd[r]);\n" \
  "      if (qd * d->bd[r] != q) return false;\n" \
  "      q = qd;\n" \
  "    }\n" \
  "    if (q >= d->x[r]) return false;\n" \
  "    o += q * d->xs[r];\n" \
  "  }\n" \
  "  *off = o;\n" \
  "  return true;\n" \
  "}\n" \
  "\n" \
  "/* The next multi-index of dims[0..n) in row-major order (within lo..hi:\n" \
  " * wk_next_box). */\n" \
  "WK_DEV void wk_next(int64_t *i, const int64_t *dims, int n) {\n" \
  "  for (int r = n - 1; r >= 0; r--) {\n" \
  "    if (++i[r] < dims[r]) return;\n" \
  "    i[r] = 0;\n" \
  "  }\n" \
  "}\n" \
  "WK_DEV void wk_next_box(int64_t *i, const int64_t *lo, const int64_t *hi, int n) {\n" \
  "  for (int r = n - 1; r >= 0; r--) {\n" \
  "    if (++i[r] <= hi[r]) return;\n" \
  "    i[r] = lo[r];\n" \
  "  }\n" \
  "}\n" \
  "\n" \
  "/* One element type: W its computation type, LD / ST storage <-> W, RND\n" \
  " * the per-step rounding (W -> W), then the reducers. Defines\n" \
  " * hlo_window_rw_SUF and hlo_window_ss_SUF. */\n" \
  "#define WK_TYPE(SUF, T, W, LD, ST, RND, ADD, MAX, MIN, MUL, AND, OR) \\\n" \
  "  WK_DEV W wk_op_##SUF(int64_t red, W a, W b) { \\\n" \
  "    switch (red) { \\\n" \
  "    case 0: return RND(ADD(T, a, b)); \\\n" \
  "    case 1: return RND(MAX(T, a, b)); \\\n" \
  "    case 2: return RND(MIN(T, a, b)); \\\n" \
  "    case 3: return RND(MUL(T, a, b)); \\\n" \
  "    case 4: return RND(AND(T, a, b)); \\\n" \
  "    default: return RND(OR(T, a, b)); \\\n" \
  "    } \\\n" \
  "  } \\\n" \
  "  /* select(a, b) = a DIR b: the selected value a stays when it holds */ \\\n" \
  "  WK_DEV bool wk_sel_##SUF(int64_t sel, W a, W b) { \\\n" \
  "    switch (sel) { \\\n" \
  "    case 0: return a >= b; \\\n" \
  "    case 1: return a > b; \\\n" \
  "    case 2: return a <= b; \\\n" \
  "    default: return a < b; \\\n" \
  "    } \\\n" \
  "  } \\\n" \
  "  /* reduce_window: one thread per result element; init folded left to \\\n" \
  "   * right with the window's elements in row-major window order, init for \\\n" \
  "   * padding and holes (window_describe.h) */ \\\n" \
  "  WK_KERNEL hlo_window_rw_##SUF(wk_desc d, const void *xv, const void *iv, void *ov) { \\\n" \
  "    const T *x = (const T *)xv; \\\n" \
  "    T *out = (T *)ov; \\\n" \
  "    const W init = LD(*(const T *)iv); \\\n" \
  "    int R = (int)d.rank; \\\n" \
  "    for (int64_t i = WK_TID; i < d.n_out; i += WK_NTH) { \\\n" \
  "      int64_t base[WK_MAXR], w[WK_MAXR], rem = i, off = 0; \\\n" \
  "      for (int r = R - 1; r >= 0; r--) { \\\n" \
  "        int64_t o = wk_div(rem, d.out[r]); \\\n" \
  "        base[r] = (rem - o * d.out[r]) * d.s[r] - d.pl[r]; \\\n" \
  "        rem = o; \\\n" \
  "        w[r] = 0; \\\n" \
  "      } \\\n" \
  "      W acc = init; \\\n" \
  "      for (int64_t k = 0; k < d.wsize; k++, wk_next(w, d.k, R)) \\\n" \
  "        acc = wk_op_##SUF(d.red, acc, wk_offset(&d, base, w, &off) ? LD(x[off]) : init); \\\n" \
  "      out[i] = ST(acc); \\\n" \
  "    } \\\n" \
  "  } \\\n" \
  "  /* select_and_scatter: one thread per result (= operand) element p; the \\\n" \
  "   * windows holding p are walked in row-major source order, each one's \\\n" \
  "   * selection redone (the first valid position, replaced by each next one \\\n" \
  "   * unless select(selected, current)); the source elements of the windows \\\n" \
  "   * that select p are folded into init in that order (the interpreter's \\\n" \
  "   * order of scatters into p). */ \\\n" \
  "  WK_KERNEL hlo_window_ss_##SUF(wk_desc d, const void *xv, const void *sv, \\\n" \
  "                                const void *iv, void *ov) { \\\n" \
  "    const T *x = (const T *)xv, *src = (const T *)sv; \\\n" \
  "    T *out = (T *)ov; \\\n" \
  "    const W init = LD(*(const T *)iv); \\\n" \
  "    int R = (int)d.rank; \\\n" \
  "    for (int64_t p = WK_TID; p < d.n_x; p += WK_NTH) { \\\n" \
  "      int64_t lo[WK_MAXR], hi[WK_MAXR], si[WK_MAXR], base[WK_MAXR], w[WK_MAXR]; \\\n" \
  "      int64_t rem = p, nwin = 1, off = 0; \\\n" \
  "      for (int r = R - 1; r >= 0; r--) { \\\n" \
  "        int64_t o = wk_div(rem, d.x[r]), xi = rem - o * d.x[r]; \\\n" \
  "        rem = o; \\\n" \
  "        /* windows s with s * stride - pl <= xi < s * stride - pl + k */ \\\n" \
  "        int64_t a = xi + d.pl[r] - d.k[r] + 1, b = xi + d.pl[r]; \\\n" \
  "        lo[r] = a <= 0 ? 0 : wk_div(a + d.s[r] - 1, d.s[r]); \\\n" \
  "        hi[r] = b < 0 ? -1 : wk_div(b, d.s[r]); \\\n" \
  "        if (hi[r] > d.out[r] - 1) hi[r] = d.out[r] - 1; \\\n" \
  "        nwin = hi[r] < lo[r] ? 0 : nwin * (hi[r] - lo[r] + 1); \\\n" \
  "        si[r] = lo[r]; \\\n" \
  "      } \\\n" \
  "      W acc = init; \\\n" \
  "      bool hit = false; \\\n" \
  "      for (int64_t n = 0; n < nwin; n++, wk_next_box(si, lo, hi, R)) { \\\n" \
  "        int64_t so = 0, sel_off = -1; \\\n" \
  "        W sel_v = init; \\\n" \
  "        for (int r = 0; r < R; r++) { \\\n" \
  "          base[r] = si[r] * d.s[r] - d.pl[r]; \\\n" \
  "          so = so * d.out[r] + si[r]; \\\n" \
  "          w[r] = 0; \\\n" \
  "        } \\\n" \
  "        bool passed = false; \\\n" \
  "        for (int64_t k = 0; k < d.wsize; k++, wk_next(w, d.k, R)) { \\\n" \
  "          if (!wk_offset(&d, base, w, &off)) continue; \\\n" \
  "          W c = LD(x[off]); \\\n" \
  "          if (sel_off < 0 || !wk_sel_##SUF(d.sel, sel_v, c)) sel_v = c, sel_off = off; \\\n" \
  "          passed = passed || off == p; \\\n" \
  "          /* the selection only moves to the current position: once past p \\\n" \
  "           * and away from it, p cannot be selected */ \\\n" \
  "          if (passed && sel_off != p) break; \\\n" \
  "        } \\\n" \
  "        if (sel_off == p) acc = wk_op_##SUF(d.red, acc, LD(src[so])), hit = true; \\\n" \
  "      } \\\n" \
  "      out[p] = hit ? ST(acc) : *(const T *)iv; /* never selected: init's own bits */ \\\n" \
  "    } \\\n" \
  "  }\n" \
  "\n" \
  "#define WK_BF16_RND(v) wk_bf16_ld(wk_bf16_st(v))\n" \
  "#define WK_F16_RND(v) wk_f16_ld(wk_f16_st(v))\n" \
  "/* an integer type: its own computation type, the wrapping reducers */\n" \
  "#define WK_INT_TYPE(SUF, T) \\\n" \
  "  WK_TYPE(SUF, T, T, WK_SAME, WK_SAME, WK_SAME, WK_I_ADD, WK_I_MAX, WK_I_MIN, WK_I_MUL, \\\n" \
  "          WK_I_AND, WK_I_OR)\n" \
  "\n" \
  "#if defined(WK_ALL) || defined(WK_ONLY_f32)\n" \
  "WK_TYPE(f32, float, float, WK_SAME, WK_SAME, WK_SAME,\n" \
  "        WK_F_ADD, WK_F32_MAX, WK_F32_MIN, WK_F_MUL, WK_F_ADD, WK_F_ADD)\n" \
  "#endif\n" \
  "#if defined(WK_ALL) || defined(WK_ONLY_f64)\n" \
  "WK_TYPE(f64, double, double, WK_SAME, WK_SAME, WK_SAME,\n" \
  "        WK_F_ADD, WK_F64_MAX, WK_F64_MIN, WK_F_MUL, WK_F_ADD, WK_F_ADD)\n" \
  "#endif\n" \
  "#if defined(WK_ALL) || defined(WK_ONLY_bf16)\n" \
  "WK_TYPE(bf16, uint16_t, float, wk_bf16_ld, wk_bf16_st, WK_BF16_RND,\n" \
  "        WK_F_ADD, WK_F32_MAX, WK_F32_MIN, WK_F_MUL, WK_F_ADD, WK_F_ADD)\n" \
  "#endif\n" \
  "#if defined(WK_ALL) || defined(WK_ONLY_f16)\n" \
  "WK_TYPE(f16, uint16_t, float, wk_f16_ld, wk_f16_st, WK_F16_RND,\n" \
  "        WK_F_ADD, WK_F32_MAX, WK_F32_MIN, WK_F_MUL, WK_F_ADD, WK_F_ADD)\n" \
  "#endif\n" \
  "#if defined(WK_ALL) || defined(WK_ONLY_i8)\n" \
  "WK_INT_TYPE(i8, int8_t)\n" \
  "#endif\n" \
  "#if defined(WK_ALL) || defined(WK_ONLY_i16)\n" \
  "WK_INT_TYPE(i16, int16_t)\n" \
  "#endif\n" \
  "#if defined(WK_ALL) || defined(WK_ONLY_i32)\n" \
  "WK_INT_TYPE(i32, int32_t)\n" \
  "#endif\n" \
  "#if defined(WK_ALL) || defined(WK_ONLY_i64)\n" \
  "WK_INT_TYPE(i64, int64_t)\n" \
  "#endif\n" \
  "#if defined(WK_ALL) || defined(WK_ONLY_u8)\n" \
  "WK_INT_TYPE(u8, uint8_t)\n" \
  "#endif\n" \
  "#if defined(WK_ALL) || defined(WK_ONLY_u16)\n" \
  "WK_INT_TYPE(u16, uint16_t)\n" \
  "#endif\n" \
  "#if defined(WK_ALL) || defined(WK_ONLY_u32)\n" \
  "WK_INT_TYPE(u32, uint32_t)\n" \
  "#endif\n" \
  "#if defined(WK_ALL) || defined(WK_ONLY_u64)\n" \
  "WK_INT_TYPE(u64, uint64_t)\n" \
  "#endif\n" \
  "/* i1 (one byte, 0 or 1): add = or, multiply = and, maximum = or, minimum = and */\n" \
  "#if defined(WK_ALL) || defined(WK_ONLY_i1)\n" \
  "WK_TYPE(i1, uint8_t, uint8_t, WK_SAME, WK_SAME, WK_SAME,\n" \
  "        WK_I_OR, WK_I_OR, WK_I_AND, WK_I_AND, WK_I_AND, WK_I_OR)\n" \
  "#endif\n"

static const char window_source[] = "#define WK_ALL\n" WINDOW_PRELUDE WINDOW_BODY;
static const char window_body[] = WINDOW_BODY;

const char *cuda_window_source(void) { return window_source; }
const char *cuda_window_source_body(void) { return window_body; }

/* ---- what is taken ---- */

/* The element types and their kernels' suffix. */
static const struct {
  hlo_dtype t;
  const char *suf, *rw, *ss;
} kernels[] = {
    {HLO_F32, "f32", "hlo_window_rw_f32", "hlo_window_ss_f32"},
    {HLO_F64, "f64", "hlo_window_rw_f64", "hlo_window_ss_f64"},
    {HLO_BF16, "bf16", "hlo_window_rw_bf16", "hlo_window_ss_bf16"},
    {HLO_F16, "f16", "hlo_window_rw_f16", "hlo_window_ss_f16"},
    {HLO_I8, "i8", "hlo_window_rw_i8", "hlo_window_ss_i8"},
    {HLO_I16, "i16", "hlo_window_rw_i16", "hlo_window_ss_i16"},
    {HLO_I32, "i32", "hlo_window_rw_i32", "hlo_window_ss_i32"},
    {HLO_I64, "i64", "hlo_window_rw_i64", "hlo_window_ss_i64"},
    {HLO_UI8, "u8", "hlo_window_rw_u8", "hlo_window_ss_u8"},
    {HLO_UI16, "u16", "hlo_window_rw_u16", "hlo_window_ss_u16"},
    {HLO_UI32, "u32", "hlo_window_rw_u32", "hlo_window_ss_u32"},
    {HLO_UI64, "u64", "hlo_window_rw_u64", "hlo_window_ss_u64"},
    {HLO_I1, "i1", "hlo_window_rw_i1", "hlo_window_ss_i1"},
};
enum { NTYPES = sizeof kernels / sizeof kernels[0] };

static int type_index(hlo_dtype t) {
  for (int i = 0; i < NTYPES; i++)
    if (kernels[i].t == t) return i;
  return -1;
}

/* What is taken, device or not (cuda_window_takes without the warm-up). */
static bool takes(const backend_window *w) {
  if (type_index(w->dtype) < 0 || w->rank > BACKEND_WINDOW_MAX_RANK) return false;
  if (dtype_class(w->dtype) == HLO_CLASS_FLOAT &&
      (w->reducer == BACKEND_REDUCER_AND || w->reducer == BACKEND_REDUCER_OR))
    return false;
  if ((unsigned)w->reducer > BACKEND_REDUCER_OR || (unsigned)w->select > BACKEND_SELECT_LT)
    return false;
  int64_t ws = window_size(w);
  return ws >= 0 && ws < INT32_MAX;
}

static const struct type_module *module_for(const cuda_device_state *s, int i);

bool cuda_window_takes(const backend_window *w) {
  if (!takes(w)) return false;
  /* with a started backend: compile and load the type's kernels now (the
   * runtime asks at compile time), and decline when they do not load, so
   * the op stays where it was */
  const cuda_device_state *s = cuda_state();
  if (!s) return true;
  hlo_status st = cuda_make_current(s, "window_takes");
  bool ok = !st && module_for(s, type_index(w->dtype)) != NULL;
  hlo_status_free(st);
  return ok;
}

const char *cuda_window_kernel_name(const backend_window *w) {
  if (!takes(w)) return NULL;
  int i = type_index(w->dtype);
  return w->kind == BACKEND_SELECT_AND_SCATTER ? kernels[i].ss : kernels[i].rw;
}

void cuda_window_make_desc(const backend_window *w, cuda_window_desc *out) {
  memset(out, 0, sizeof *out);
  uint32_t R = w->rank <= BACKEND_WINDOW_MAX_RANK ? w->rank : BACKEND_WINDOW_MAX_RANK;
  out->rank = R;
  out->red = w->reducer;
  out->sel = w->kind == BACKEND_SELECT_AND_SCATTER ? w->select : 0;
  out->wsize = window_size(w);
  out->n_out = window_out_elements(w);
  out->n_x = window_operand_elements(w);
  int64_t stride = 1;
  for (uint32_t d = R; d-- > 0;) {
    out->xs[d] = stride;
    stride *= w->operand_dims[d];
  }
  for (uint32_t d = 0; d < R; d++) {
    out->x[d] = w->operand_dims[d];
    out->out[d] = w->window_out_dims[d];
    out->k[d] = w->window_dimensions[d];
    out->s[d] = w->window_strides[d];
    out->bd[d] = w->base_dilations[d];
    out->wd[d] = w->window_dilations[d];
    out->pl[d] = w->padding_low[d];
  }
}

char *cuda_window_unit(hlo_dtype t) {
  int i = type_index(t);
  if (i < 0) return NULL;
  static const char fmt[] = "#define WK_ONLY_%s\n%s%s";
  size_t n = sizeof fmt + strlen(kernels[i].suf) + sizeof window_source;
  char *u = malloc(n);
  if (u) snprintf(u, n, fmt, kernels[i].suf, WINDOW_PRELUDE, WINDOW_BODY);
  return u;
}

/* ---- the modules: one per element type, loaded once per process ---- */

typedef struct type_module {
  _Atomic int done;       /* 1 once code/message/mod/rw/ss are set (under g_lock) */
  hlo_status_code code;
  char message[4608];
  CUmodule mod;
  CUfunction rw, ss;
} type_module;

static pthread_mutex_t g_lock = PTHREAD_MUTEX_INITIALIZER;
static type_module g_mods[NTYPES];

/* Compiles and loads type i's unit (the context is current: the caller
 * made it so); the outcome goes to g_mods[i]. */
static void load_type(const cuda_device_state *s, int i) {
  type_module *m = &g_mods[i];
  void *cubin = NULL;
  size_t len = 0;
  char *unit = cuda_window_unit(kernels[i].t);
  char name[48];
  snprintf(name, sizeof name, "hlo_window_%s.cu", kernels[i].suf);
  int arch = s->cc_major * 10 + s->cc_minor;
  hlo_status st = unit ? nvrtc_compile_cached(unit, name, arch, &cubin, &len)
                       : status_new(HLO_RESOURCE_EXHAUSTED, "out of memory");
  free(unit);
  if (!st) {
    CUresult r = s->cu->cuModuleLoadData(&m->mod, cubin);
    if (r) {
      m->mod = NULL;
      st = cuda_error(s, r, "cuModuleLoadData (the window kernels)");
    }
  }
  for (int k = 0; k < 2 && !st; k++) {
    const char *fn = k ? kernels[i].ss : kernels[i].rw;
    CUresult r = s->cu->cuModuleGetFunction(k ? &m->ss : &m->rw, m->mod, fn);
    if (r) st = status_note(cuda_error(s, r, "cuModuleGetFunction"), "kernel %s", fn);
  }
  free(cubin);
  if (st) {
    if (m->mod) (void)s->cu->cuModuleUnload(m->mod);
    m->mod = NULL;
    m->code = hlo_status_code_of(st);
    snprintf(m->message, sizeof m->message, "%s", hlo_status_message(st));
    hlo_status_free(st);
  } else {
    m->code = HLO_OK;
  }
  atomic_store_explicit(&m->done, 1, memory_order_release);
}

/* Type i's module, compiled and loaded on the first call (the context is
 * current); NULL when that failed (g_mods[i] says why). */
static const type_module *module_for(const cuda_device_state *s, int i) {
  type_module *tm = &g_mods[i];
  if (!atomic_load_explicit(&tm->done, memory_order_acquire)) {
    pthread_mutex_lock(&g_lock);
    if (!atomic_load_explicit(&tm->done, memory_order_relaxed)) load_type(s, i);
    pthread_mutex_unlock(&g_lock);
  }
  return tm->code == HLO_OK ? tm : NULL;
}

/* Checks `w` against `kind`, makes the context current and loads the
 * module of w's element type: the state in *s, the module in *m. */
static hlo_status prepare(const backend_window *w, backend_window_kind kind, const char *what,
                          const cuda_device_state **s, const type_module **m) {
  *s = NULL;
  *m = NULL;
  if (w->kind != kind)
    return status_at(HLO_UNIMPLEMENTED, &w->loc, "%s on the cuda backend: the description is "
                     "of a %s", what, w->kind == BACKEND_REDUCE_WINDOW ? "reduce_window"
                                                                       : "select_and_scatter");
  if (!takes(w))
    return status_at(HLO_UNIMPLEMENTED, &w->loc, "%s on the cuda backend: element type %s with "
                     "reducer %s (rank %u) is not supported", what, hlo_dtype_name(w->dtype),
                     backend_reducer_name(w->reducer), w->rank);
  const cuda_device_state *st = cuda_state();
  HLO_TRY(cuda_make_current(st, what));
  int i = type_index(w->dtype);
  const type_module *tm = module_for(st, i);
  if (!tm)
    return status_new(g_mods[i].code, "%s on the cuda backend: %s", what, g_mods[i].message);
  *s = st;
  *m = tm;
  return NULL;
}

/* Enqueues `f` over n elements with params. */
static hlo_status launch(const cuda_device_state *s, CUfunction f, int64_t n, void **params,
                         const char *what) {
  if (n <= 0) return NULL;
  int64_t blocks = (n + WINDOW_BLOCK - 1) / WINDOW_BLOCK;
  unsigned grid = blocks > (int64_t)WINDOW_GRID_MAX ? WINDOW_GRID_MAX : (unsigned)blocks;
  CUresult r = s->cu->cuLaunchKernel(f, grid, 1, 1, WINDOW_BLOCK, 1, 1, 0, s->stream, params, NULL);
  return r ? cuda_error(s, r, what) : NULL;
}

hlo_status cuda_reduce_window(const backend_window *w, void *const *inputs, void *const *outputs) {
  const cuda_device_state *s;
  const type_module *m;
  HLO_TRY(prepare(w, BACKEND_REDUCE_WINDOW, "reduce_window", &s, &m));
  cuda_window_desc d;
  cuda_window_make_desc(w, &d);
  const void *x = inputs[0], *init = inputs[1];
  void *out = outputs[0];
  void *params[] = {&d, &x, &init, &out};
  return launch(s, m->rw, d.n_out, params, "launching reduce_window (cuLaunchKernel)");
}

hlo_status cuda_select_and_scatter(const backend_window *w, const void *operand,
                                   const void *source, const void *init, void *output) {
  const cuda_device_state *s;
  const type_module *m;
  HLO_TRY(prepare(w, BACKEND_SELECT_AND_SCATTER, "select_and_scatter", &s, &m));
  cuda_window_desc d;
  cuda_window_make_desc(w, &d);
  void *params[] = {&d, &operand, &source, &init, &output};
  return launch(s, m->ss, d.n_x, params, "launching select_and_scatter (cuLaunchKernel)");
}
