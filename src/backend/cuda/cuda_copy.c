/* cuda_copy.c — copy_box, fill_box and gather_rows on the GPU
 * (cuda_copy.h).
 *
 * One CUDA C unit (copy_source) with two kernels, hlo_copy_box generic
 * over cuda_copy_desc and hlo_gather_rows over cuda_gather_desc: compiled
 * by NVRTC for the device's architecture on the first call (a mutex; a
 * failure is remembered and given again), loaded with cuModuleLoadData
 * into the backend's context, never unloaded — cuda_window.c's pattern.
 * Launches: blocks of 256 threads, ceil(n / 256) blocks up to 2^31 - 1
 * (a box of one line, the common case once contiguous dims are merged:
 * ceil(n / (256 * COPY_UNROLL)), each thread moving COPY_UNROLL 16-byte
 * elements at once with no index arithmetic; other boxes find an element's
 * position by 32-bit divisions when n < 2^31); the kernels loop
 * grid-stride over 64-bit element indices, so any grid is correct. The branches on the element size and on fill are uniform
 * across the grid. */
#include "backend/cuda/cuda_copy.h"
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "backend/cuda/cuda_api.h"
#include "backend/cuda/nvrtc.h"
#include "support/status.h"

#define COPY_BLOCK 256
/* elements a thread of a one-line copy keeps in flight (walk1's r == 1) */
#define COPY_UNROLL 4
#define COPY_GRID_MAX 2147483647u
/* scatter_rows: a block per index (scat_rows below) up to this many
 * indices a batch (the leader searches cost O(indices^2 / block) in all),
 * one thread per word of each batch past it (scat_serial: O(indices) a
 * thread) */
#define SCATTER_ROWS_MAX 32768
#define STR_(x) #x
#define STR(x) STR_(x)

/* No #include: NVRTC compiles this alone. The struct is cuda_copy_desc. */
static const char copy_source[] =
    "#define SCATTER_BLOCK " STR(COPY_BLOCK) "\n"
    "#define COPY_UNROLL " STR(COPY_UNROLL) "\n"
    "#define SCATTER_ROWS_MAX " STR(SCATTER_ROWS_MAX) "\n"
    "typedef long long i64;\n"
    "typedef unsigned long long u64;\n"
    "struct cb_desc {\n"
    "  i64 rank, esize, n, fill, aligned16, dst_off, src_off, unused0;\n"
    "  i64 dims[8], ds[8], ss[8];\n"
    "  unsigned char value[16];\n"
    "  i64 ndyn, dyn_size, dyn_signed, dyn_dst;\n"
    "  i64 dyn_max[8], dyn_stride[8];\n"
    "  u64 dyn_ptr[8];\n"
    "};\n"
    "/* the start offset of the box's device-read indices (cuda_copy_desc) */\n"
    "static __device__ __forceinline__ i64 dyn_offset(const cb_desc &d) {\n"
    "  i64 off = 0;\n"
    "  for (int q = 0; q < (int)d.ndyn; q++) {\n"
    "    const void *p = (const void *)d.dyn_ptr[q];\n"
    "    i64 v;\n"
    "    switch (d.dyn_size) {\n"
    "    case 1: v = d.dyn_signed ? (i64)*(const signed char *)p : (i64)*(const unsigned char *)p; break;\n"
    "    case 2: v = d.dyn_signed ? (i64)*(const short *)p : (i64)*(const unsigned short *)p; break;\n"
    "    case 4: v = d.dyn_signed ? (i64)*(const int *)p : (i64)*(const unsigned int *)p; break;\n"
    "    default: v = *(const i64 *)p;\n"
    "    }\n"
    "    v = v < 0 ? 0 : v > d.dyn_max[q] ? d.dyn_max[q] : v;\n"
    "    off += v * d.dyn_stride[q];\n"
    "  }\n"
    "  return off;\n"
    "}\n"
    "template <typename T, bool FILL> static __device__ __forceinline__ void\n"
    "walk1(const cb_desc &d, T *dst, const T *src, T v) {\n"
    "  i64 stride = (i64)gridDim.x * blockDim.x;\n"
    "  int r = (int)d.rank;\n"
    "  i64 inner = r > 0 ? d.dims[r - 1] : 1;\n"
    "  i64 dsi = r > 0 ? d.ds[r - 1] : 0, ssi = r > 0 ? d.ss[r - 1] : 0;\n"
    "  i64 dst0 = d.dst_off, src0 = d.src_off;\n"
    "  if (d.ndyn) {\n"
    "    i64 x = dyn_offset(d);\n"
    "    if (d.dyn_dst) dst0 += x;\n"
    "    else src0 += x;\n"
    "  }\n"
    "  i64 e = (i64)blockIdx.x * blockDim.x + threadIdx.x;\n"
    "  if (r == 1) {\n"
    "    /* one line (a merged contiguous box): no index arithmetic, and\n"
    "     * COPY_UNROLL elements in flight a thread (the launch sizes the grid\n"
    "     * for that) */\n"
    "    for (; e + (COPY_UNROLL - 1) * stride < d.n; e += COPY_UNROLL * stride) {\n"
    "      T a[COPY_UNROLL];\n"
    "      if (!FILL)\n"
    "#pragma unroll\n"
    "        for (int u = 0; u < COPY_UNROLL; u++) a[u] = src[src0 + (e + u * stride) * ssi];\n"
    "#pragma unroll\n"
    "      for (int u = 0; u < COPY_UNROLL; u++) dst[dst0 + (e + u * stride) * dsi] = FILL ? v : a[u];\n"
    "    }\n"
    "    for (; e < d.n; e += stride) dst[dst0 + e * dsi] = FILL ? v : src[src0 + e * ssi];\n"
    "    return;\n"
    "  }\n"
    "  if (d.n <= 0x7fffffffLL) {\n"
    "    /* the element's position by 32-bit divisions (a 64-bit one is a\n"
    "     * long software sequence on the GPU) */\n"
    "    for (; e < d.n; e += stride) {\n"
    "      unsigned row = (unsigned)e / (unsigned)inner, j = (unsigned)e - row * (unsigned)inner;\n"
    "      i64 doff = dst0 + (i64)j * dsi, soff = src0 + (i64)j * ssi;\n"
    "      for (int k = r - 2; k >= 0; k--) {\n"
    "        unsigned q = row / (unsigned)d.dims[k], i = row - q * (unsigned)d.dims[k];\n"
    "        row = q;\n"
    "        doff += (i64)i * d.ds[k];\n"
    "        soff += (i64)i * d.ss[k];\n"
    "      }\n"
    "      if (FILL) dst[doff] = v;\n"
    "      else dst[doff] = src[soff];\n"
    "    }\n"
    "    return;\n"
    "  }\n"
    "  for (; e < d.n; e += stride) {\n"
    "    i64 row = e / inner, j = e - row * inner;\n"
    "    i64 doff = dst0 + j * dsi, soff = src0 + j * ssi;\n"
    "    for (int k = r - 2; k >= 0; k--) {\n"
    "      i64 q = row / d.dims[k], i = row - q * d.dims[k];\n"
    "      row = q;\n"
    "      doff += i * d.ds[k];\n"
    "      soff += i * d.ss[k];\n"
    "    }\n"
    "    if (FILL) dst[doff] = v;\n"
    "    else dst[doff] = src[soff];\n"
    "  }\n"
    "}\n"
    "/* the branch on fill outside the loop: a fill never reads src */\n"
    "template <typename T> static __device__ __forceinline__ void\n"
    "walk(const cb_desc &d, T *dst, const T *src, T v) {\n"
    "  if (d.fill) walk1<T, true>(d, dst, src, v);\n"
    "  else walk1<T, false>(d, dst, src, v);\n"
    "}\n"
    "struct u64x2 { u64 a, b; };\n"
    "template <typename T> static __device__ __forceinline__ T value_of(const cb_desc &d) {\n"
    "  T v;\n"
    "  memcpy(&v, d.value, sizeof v);\n"
    "  return v;\n"
    "}\n"
    "struct gr_desc {\n"
    "  i64 nidx, per_batch, nrows, words, wsize, idx_size, idx_signed, unused0;\n"
    "};\n"
    "static __device__ __forceinline__ i64 index_at(const gr_desc &d, const void *idx, i64 i) {\n"
    "  switch (d.idx_size) {\n"
    "  case 1: return d.idx_signed ? (i64)((const signed char *)idx)[i]\n"
    "                              : (i64)((const unsigned char *)idx)[i];\n"
    "  case 2: return d.idx_signed ? (i64)((const short *)idx)[i]\n"
    "                              : (i64)((const unsigned short *)idx)[i];\n"
    "  case 4: return d.idx_signed ? (i64)((const int *)idx)[i]\n"
    "                              : (i64)((const unsigned int *)idx)[i];\n"
    "  default: return ((const i64 *)idx)[i];\n"
    "  }\n"
    "}\n"
    "template <typename T> static __device__ __forceinline__ void\n"
    "rows(const gr_desc &d, T *out, const T *src, const void *idx) {\n"
    "  i64 stride = (i64)gridDim.x * blockDim.x, n = d.nidx * d.words;\n"
    "  for (i64 e = (i64)blockIdx.x * blockDim.x + threadIdx.x; e < n; e += stride) {\n"
    "    i64 i = e / d.words, k = e - i * d.words;\n"
    "    i64 v = index_at(d, idx, i);\n"
    "    v = v < 0 ? 0 : v > d.nrows - 1 ? d.nrows - 1 : v;\n"
    "    i64 row = (i / d.per_batch) * d.nrows + v;\n"
    "    out[e] = src[row * d.words + k];\n"
    "  }\n"
    "}\n"
    "extern \"C\" __global__ void hlo_gather_rows(gr_desc d, void *out, const void *src,\n"
    "                                           const void *idx) {\n"
    "  switch (d.wsize) {\n"
    "  case 1: rows<unsigned char>(d, (unsigned char *)out, (const unsigned char *)src, idx);\n"
    "    break;\n"
    "  case 2: rows<unsigned short>(d, (unsigned short *)out, (const unsigned short *)src, idx);\n"
    "    break;\n"
    "  case 4: rows<unsigned int>(d, (unsigned int *)out, (const unsigned int *)src, idx);\n"
    "    break;\n"
    "  case 8: rows<u64>(d, (u64 *)out, (const u64 *)src, idx); break;\n"
    "  default: rows<uint4>(d, (uint4 *)out, (const uint4 *)src, idx);\n"
    "  }\n"
    "}\n"
    "/* scatter, for long index lists: one thread per (batch, word of a row),\n"
    "   the batch's indices in order, so repeated rows get their updates in the\n"
    "   interpreter's order (serial in the indices: O(indices) a thread) */\n"
    "template <typename T, int OP> static __device__ __forceinline__ void\n"
    "scat_serial(const gr_desc &d, T *out, const T *upd, const void *idx) {\n"
    "  i64 stride = (i64)gridDim.x * blockDim.x;\n"
    "  i64 batches = d.per_batch > 0 ? d.nidx / d.per_batch : 0, n = batches * d.words;\n"
    "  for (i64 e = (i64)blockIdx.x * blockDim.x + threadIdx.x; e < n; e += stride) {\n"
    "    i64 b = e / d.words, k = e - b * d.words;\n"
    "    for (i64 i = b * d.per_batch; i < (b + 1) * d.per_batch; i++) {\n"
    "      i64 v = index_at(d, idx, i);\n"
    "      if (v < 0 || v >= d.nrows) continue;\n"
    "      T *o = out + (b * d.nrows + v) * d.words + k;\n"
    "      T u = upd[i * d.words + k];\n"
    "      if constexpr (OP == 0) *o = u;\n"
    "      else *o = *o + u;\n"
    "    }\n"
    "  }\n"
    "}\n"
    "/* scatter, one block per index i (its row v): the block is the leader of\n"
    "   row v when no earlier index of the batch names v; the leader finds the\n"
    "   later indices naming v a chunk of blockDim at a time (a ballot per warp,\n"
    "   their positions listed in order in shared memory) and each thread folds\n"
    "   its words of their update rows into the row in index order: the\n"
    "   interpreter's order, so the same bits, with every row in parallel */\n"
    "template <typename T, int OP> static __device__ __forceinline__ void\n"
    "scat_rows(const gr_desc &d, T *out, const T *upd, const void *idx) {\n"
    "  __shared__ int list[SCATTER_BLOCK];\n"
    "  __shared__ int warp_count[SCATTER_BLOCK / 32];\n"
    "  const int lane = threadIdx.x & 31, w = threadIdx.x >> 5, nw = blockDim.x >> 5;\n"
    "  for (i64 i = blockIdx.x; i < d.nidx; i += gridDim.x) {\n"
    "    i64 lo = i / d.per_batch * d.per_batch, hi = lo + d.per_batch;\n"
    "    i64 v = index_at(d, idx, i);\n"
    "    if (v < 0 || v >= d.nrows) continue;\n"
    "    int earlier = 0;\n"
    "    for (i64 j = lo + threadIdx.x; j < i; j += blockDim.x) earlier |= index_at(d, idx, j) == v;\n"
    "    if (__syncthreads_or(earlier)) continue;\n"
    "    T *o = out + (i / d.per_batch * d.nrows + v) * d.words;\n"
    "    for (i64 k0 = 0; k0 < d.words; k0 += blockDim.x) {\n"
    "      i64 k = k0 + threadIdx.x;\n"
    "      T acc = k < d.words ? o[k] : T();\n"
    "      for (i64 c = i; c < hi; c += blockDim.x) {\n"
    "        i64 j = c + threadIdx.x;\n"
    "        bool m = j < hi && index_at(d, idx, j) == v;\n"
    "        unsigned ball = __ballot_sync(0xffffffffu, m);\n"
    "        if (lane == 0) warp_count[w] = __popc(ball);\n"
    "        __syncthreads();\n"
    "        int before = 0, total = 0;\n"
    "        for (int q = 0; q < nw; q++) {\n"
    "          before += q < w ? warp_count[q] : 0;\n"
    "          total += warp_count[q];\n"
    "        }\n"
    "        if (m) list[before + __popc(ball & ((1u << lane) - 1u))] = (int)(j - c);\n"
    "        __syncthreads();\n"
    "        if (k < d.words)\n"
    "          for (int t = 0; t < total; t++) {\n"
    "            T u = upd[(c + list[t]) * d.words + k];\n"
    "            if constexpr (OP == 0) acc = u;\n"
    "            else acc = acc + u;\n"
    "          }\n"
    "        __syncthreads();\n"
    "      }\n"
    "      if (k < d.words) o[k] = acc;\n"
    "    }\n"
    "  }\n"
    "}\n"
    "template <typename T, int OP> static __device__ __forceinline__ void\n"
    "scat(const gr_desc &d, T *out, const T *upd, const void *idx) {\n"
    "  if (d.per_batch <= SCATTER_ROWS_MAX) scat_rows<T, OP>(d, out, upd, idx);\n"
    "  else scat_serial<T, OP>(d, out, upd, idx);\n"
    "}\n"
    "/* op: 0 set (wsize the word), 1 add f32, 2 add f64, 3 add i32, 4 add i64 */\n"
    "extern \"C\" __global__ void hlo_scatter_rows(gr_desc d, void *out, const void *upd,\n"
    "                                            const void *idx) {\n"
    "  switch (d.unused0) {\n"
    "  case 1: scat<float, 1>(d, (float *)out, (const float *)upd, idx); return;\n"
    "  case 2: scat<double, 1>(d, (double *)out, (const double *)upd, idx); return;\n"
    "  case 3: scat<unsigned int, 1>(d, (unsigned int *)out, (const unsigned int *)upd, idx);\n"
    "    return;\n"
    "  case 4: scat<u64, 1>(d, (u64 *)out, (const u64 *)upd, idx); return;\n"
    "  }\n"
    "  switch (d.wsize) {\n"
    "  case 1: scat<unsigned char, 0>(d, (unsigned char *)out, (const unsigned char *)upd, idx);\n"
    "    break;\n"
    "  case 2: scat<unsigned short, 0>(d, (unsigned short *)out, (const unsigned short *)upd,\n"
    "                                  idx); break;\n"
    "  case 4: scat<unsigned int, 0>(d, (unsigned int *)out, (const unsigned int *)upd, idx);\n"
    "    break;\n"
    "  case 8: scat<u64, 0>(d, (u64 *)out, (const u64 *)upd, idx); break;\n"
    "  default: scat<uint4, 0>(d, (uint4 *)out, (const uint4 *)upd, idx);\n"
    "  }\n"
    "}\n"
    "extern \"C\" __global__ void hlo_copy_box(cb_desc d, void *dst, const void *src) {\n"
    "  switch (d.esize) {\n"
    "  case 1: walk<unsigned char>(d, (unsigned char *)dst, (const unsigned char *)src,\n"
    "                              value_of<unsigned char>(d)); break;\n"
    "  case 2: walk<unsigned short>(d, (unsigned short *)dst, (const unsigned short *)src,\n"
    "                               value_of<unsigned short>(d)); break;\n"
    "  case 4: walk<unsigned int>(d, (unsigned int *)dst, (const unsigned int *)src,\n"
    "                             value_of<unsigned int>(d)); break;\n"
    "  case 8: walk<u64>(d, (u64 *)dst, (const u64 *)src, value_of<u64>(d)); break;\n"
    "  default:\n"
    "    if (d.aligned16) walk<uint4>(d, (uint4 *)dst, (const uint4 *)src, value_of<uint4>(d));\n"
    "    else walk<u64x2>(d, (u64x2 *)dst, (const u64x2 *)src, value_of<u64x2>(d));\n"
    "  }\n"
    "}\n";

const char *cuda_copy_source(void) { return copy_source; }

static bool divides(int64_t f, int64_t v) { return v % f == 0; }

hlo_status cuda_copy_make_desc(const backend_box *b, const void *dst, const void *src,
                               const void *value, cuda_copy_desc *out) {
  memset(out, 0, sizeof *out);
  if (b->rank > BACKEND_BOX_MAX_RANK)
    return status_new(HLO_INVALID_ARGUMENT, "copy_box on the cuda backend: rank %u past %d",
                      b->rank, BACKEND_BOX_MAX_RANK);
  uint32_t es = b->esize;
  if (es != 1 && es != 2 && es != 4 && es != 8 && es != 16)
    return status_new(HLO_INVALID_ARGUMENT, "copy_box on the cuda backend: element size %u", es);
  uint32_t r = b->rank;
  out->rank = r;
  out->esize = es;
  out->fill = src == NULL;
  out->dst_off = b->dst_off;
  out->src_off = src ? b->src_off : 0;
  out->n = 1;
  for (uint32_t d = 0; d < r; d++) {
    out->dims[d] = b->dims[d] > 0 ? b->dims[d] : 0;
    out->ds[d] = b->dst_strides[d];
    out->ss[d] = src ? b->src_strides[d] : 0;
    out->n *= out->dims[d];
  }
  if (value) memcpy(out->value, value, es);
  if (b->ndyn > BACKEND_BOX_MAX_RANK ||
      (b->ndyn && b->dyn_size != 1 && b->dyn_size != 2 && b->dyn_size != 4 && b->dyn_size != 8))
    return status_new(HLO_INVALID_ARGUMENT, "copy_box on the cuda backend: %u start indices of "
                      "%u bytes", b->ndyn, b->dyn_size);
  out->ndyn = b->ndyn;
  out->dyn_size = b->dyn_size;
  out->dyn_signed = b->dyn_signed;
  out->dyn_dst = b->dyn_dst;
  for (uint32_t d = 0; d < b->ndyn; d++) {
    out->dyn_max[d] = b->dyn_max[d];
    out->dyn_stride[d] = b->dyn_stride[d];
    out->dyn_ptr[d] = (uint64_t)(uintptr_t)b->dyn_index[d];
  }
  /* the fast path: wider elements over a contiguous innermost dim (the
   * device-read offsets too must be multiples of the wider element) */
  bool contiguous = r > 0 && out->ds[r - 1] == 1 && (!src || out->ss[r - 1] == 1) && out->n > 0;
  for (int64_t w = 16; contiguous && w > (int64_t)es; w /= 2) {
    int64_t f = w / (int64_t)es;
    bool ok = divides(f, out->dims[r - 1]) && divides(f, out->dst_off) &&
              divides(f, out->src_off) && (uintptr_t)dst % (uintptr_t)w == 0 &&
              (!src || (uintptr_t)src % (uintptr_t)w == 0);
    for (uint32_t d = 0; ok && d + 1 < r; d++)
      ok = divides(f, out->ds[d]) && divides(f, out->ss[d]);
    for (int64_t d = 0; ok && d < out->ndyn; d++) ok = divides(f, out->dyn_stride[d]);
    if (!ok) continue;
    out->dims[r - 1] /= f;
    out->n /= f;
    out->dst_off /= f;
    out->src_off /= f;
    for (uint32_t d = 0; d + 1 < r; d++) {
      out->ds[d] /= f;
      out->ss[d] /= f;
    }
    for (int64_t d = 0; d < out->ndyn; d++) out->dyn_stride[d] /= f;
    if (value)
      for (int64_t k = 1; k < f; k++) memcpy(out->value + k * (int64_t)es, value, es);
    out->esize = w;
    break;
  }
  out->aligned16 = out->esize == 16 && (uintptr_t)dst % 16 == 0 &&
                   (!src || (uintptr_t)src % 16 == 0);
  return NULL;
}

/* ---- the module: loaded once per process ---- */

static pthread_mutex_t g_lock = PTHREAD_MUTEX_INITIALIZER;
static _Atomic int g_done;     /* 1 once the fields below are set (under g_lock) */
static hlo_status_code g_code;
static char g_message[4608];
static CUmodule g_mod;
static CUfunction g_fn, g_gather, g_scatter;

/* Compiles and loads the unit (the context is current). */
static void load(const cuda_device_state *s) {
  void *cubin = NULL;
  size_t len = 0;
  int arch = s->cc_major * 10 + s->cc_minor;
  hlo_status st = nvrtc_compile_cached(copy_source, "hlo_copy_box.cu", arch, &cubin, &len);
  if (!st) {
    CUresult r = s->cu->cuModuleLoadData(&g_mod, cubin);
    if (r) {
      g_mod = NULL;
      st = cuda_error(s, r, "cuModuleLoadData (the copy kernel)");
    }
  }
  if (!st) {
    CUresult r = s->cu->cuModuleGetFunction(&g_fn, g_mod, "hlo_copy_box");
    if (r) st = status_note(cuda_error(s, r, "cuModuleGetFunction"), "kernel hlo_copy_box");
  }
  if (!st) {
    CUresult r = s->cu->cuModuleGetFunction(&g_gather, g_mod, "hlo_gather_rows");
    if (r) st = status_note(cuda_error(s, r, "cuModuleGetFunction"), "kernel hlo_gather_rows");
  }
  if (!st) {
    CUresult r = s->cu->cuModuleGetFunction(&g_scatter, g_mod, "hlo_scatter_rows");
    if (r) st = status_note(cuda_error(s, r, "cuModuleGetFunction"), "kernel hlo_scatter_rows");
  }
  free(cubin);
  if (st) {
    if (g_mod) (void)s->cu->cuModuleUnload(g_mod);
    g_mod = NULL;
    g_code = hlo_status_code_of(st);
    snprintf(g_message, sizeof g_message, "%s", hlo_status_message(st));
    hlo_status_free(st);
  } else {
    g_code = HLO_OK;
  }
  atomic_store_explicit(&g_done, 1, memory_order_release);
}

/* Makes the context current and the kernel loaded: the state in *out. */
static hlo_status prepare(const char *what, const cuda_device_state **out) {
  const cuda_device_state *s = cuda_state();
  *out = NULL;
  if (!s)
    return status_new(HLO_UNAVAILABLE, "%s on the cuda backend: the backend is not started",
                      what);
  HLO_TRY(cuda_make_current(s, what));
  if (!atomic_load_explicit(&g_done, memory_order_acquire)) {
    pthread_mutex_lock(&g_lock);
    if (!atomic_load_explicit(&g_done, memory_order_relaxed)) load(s);
    pthread_mutex_unlock(&g_lock);
  }
  if (g_code != HLO_OK) return status_new(g_code, "%s on the cuda backend: %s", what, g_message);
  *out = s;
  return NULL;
}

hlo_status cuda_gather_make_desc(const backend_rows *r, const void *out, const void *src,
                                 cuda_gather_desc *d) {
  memset(d, 0, sizeof *d);
  uint32_t is = r->idx_size;
  if (is != 1 && is != 2 && is != 4 && is != 8)
    return status_new(HLO_INVALID_ARGUMENT, "gather_rows on the cuda backend: index size %u",
                      is);
  if (r->nidx < 0 || (r->nidx > 0 && r->per_batch <= 0) || r->nrows <= 0 || r->row_bytes <= 0)
    return status_new(HLO_INVALID_ARGUMENT, "gather_rows on the cuda backend: bad sizes "
                      "(%lld indices, %lld per batch, %lld rows of %lld bytes)",
                      (long long)r->nidx, (long long)r->per_batch, (long long)r->nrows,
                      (long long)r->row_bytes);
  int64_t w = 16;
  while (w > 1 && (r->row_bytes % w || (uintptr_t)out % (uintptr_t)w ||
                   (uintptr_t)src % (uintptr_t)w))
    w /= 2;
  *d = (cuda_gather_desc){r->nidx, r->per_batch, r->nrows, r->row_bytes / w, w, is,
                          r->idx_signed, 0};
  return NULL;
}

hlo_status cuda_gather_rows(void *out, const void *src, const void *idx, const backend_rows *r) {
  cuda_gather_desc d;
  HLO_TRY(cuda_gather_make_desc(r, out, src, &d));
  int64_t n = d.nidx * d.words;
  if (n <= 0) return NULL;
  const cuda_device_state *s;
  HLO_TRY(prepare("gather_rows", &s));
  int64_t blocks = (n + COPY_BLOCK - 1) / COPY_BLOCK;
  unsigned grid = blocks > (int64_t)COPY_GRID_MAX ? COPY_GRID_MAX : (unsigned)blocks;
  void *params[] = {&d, &out, &src, &idx};
  CUresult res = s->cu->cuLaunchKernel(g_gather, grid, 1, 1, COPY_BLOCK, 1, 1, 0, s->stream,
                                       params, NULL);
  return res ? cuda_error(s, res, "gather_rows (cuLaunchKernel)") : NULL;
}

hlo_status cuda_scatter_make_desc(const backend_rows *r, const void *out, const void *upd,
                                  cuda_gather_desc *d) {
  HLO_TRY(cuda_gather_make_desc(r, out, upd, d));
  if (!r->add) return NULL;
  int64_t es = 0, op = 0;
  switch (r->dtype) {
  case HLO_F32: es = 4, op = 1; break;
  case HLO_F64: es = 8, op = 2; break;
  case HLO_I32: es = 4, op = 3; break;
  case HLO_I64: es = 8, op = 4; break;
  default:
    return status_new(HLO_INVALID_ARGUMENT, "scatter_rows on the cuda backend: add of element "
                      "type %s", hlo_dtype_name(r->dtype));
  }
  if (r->row_bytes % es)
    return status_new(HLO_INVALID_ARGUMENT, "scatter_rows on the cuda backend: rows of %lld "
                      "bytes for elements of %lld", (long long)r->row_bytes, (long long)es);
  d->wsize = es;
  d->words = r->row_bytes / es;
  d->unused0 = op;
  return NULL;
}

hlo_status cuda_scatter_rows(void *out, const void *upd, const void *idx,
                             const backend_rows *r) {
  cuda_gather_desc d;
  HLO_TRY(cuda_scatter_make_desc(r, out, upd, &d));
  int64_t n = d.per_batch > 0 ? d.nidx / d.per_batch * d.words : 0;
  if (n <= 0) return NULL;
  const cuda_device_state *s;
  HLO_TRY(prepare("scatter_rows", &s));
  /* a block per index (scat_rows), or a thread per word of each batch */
  int64_t blocks = d.per_batch <= SCATTER_ROWS_MAX ? d.nidx : (n + COPY_BLOCK - 1) / COPY_BLOCK;
  unsigned grid = blocks > (int64_t)COPY_GRID_MAX ? COPY_GRID_MAX : (unsigned)blocks;
  void *params[] = {&d, &out, &upd, &idx};
  CUresult res = s->cu->cuLaunchKernel(g_scatter, grid, 1, 1, COPY_BLOCK, 1, 1, 0, s->stream,
                                       params, NULL);
  return res ? cuda_error(s, res, "scatter_rows (cuLaunchKernel)") : NULL;
}

static hlo_status run(void *dst, const void *src, const void *value, const backend_box *box,
                      const char *what) {
  cuda_copy_desc d;
  HLO_TRY(cuda_copy_make_desc(box, dst, src, value, &d));
  if (d.n <= 0) return NULL;
  const cuda_device_state *s;
  HLO_TRY(prepare(what, &s));
  /* a one-line box: COPY_UNROLL elements a thread (walk1) */
  int64_t per_block = d.rank == 1 ? COPY_BLOCK * COPY_UNROLL : COPY_BLOCK;
  int64_t blocks = (d.n + per_block - 1) / per_block;
  unsigned grid = blocks > (int64_t)COPY_GRID_MAX ? COPY_GRID_MAX : (unsigned)blocks;
  void *params[] = {&d, &dst, &src};
  CUresult r = s->cu->cuLaunchKernel(g_fn, grid, 1, 1, COPY_BLOCK, 1, 1, 0, s->stream, params,
                                     NULL);
  return r ? cuda_error(s, r, what) : NULL;
}

hlo_status cuda_copy_box(void *dst, const void *src, const backend_box *box) {
  if (!src)
    return status_new(HLO_INVALID_ARGUMENT, "copy_box on the cuda backend: no source buffer");
  return run(dst, src, NULL, box, "copy_box (cuLaunchKernel)");
}

hlo_status cuda_fill_box(void *dst, const void *value, const backend_box *box) {
  if (!value)
    return status_new(HLO_INVALID_ARGUMENT, "fill_box on the cuda backend: no value");
  return run(dst, NULL, value, box, "fill_box (cuLaunchKernel)");
}
