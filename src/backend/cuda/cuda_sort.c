/* cuda_sort.c — stablehlo.sort on the GPU (cuda_sort.h).
 *
 * One kernel, hlo_sort_rows, generic over a parameter block
 * (cuda_sort_desc: the keys' types, comparison kinds, canonicalisation
 * steps and packing, the operands' addresses and element sizes, the row
 * geometry), so every sort of a program shares one compiled module:
 * compiled by NVRTC for the device's architecture when the first sort is
 * taken (sort_takes, at the runtime's compile time) or run, once per
 * process (a mutex; a failure is remembered and given again), loaded with
 * cuModuleLoadData into the backend's context and never unloaded.
 *
 * Why this design (bench/SORT.md, "GPU"): the sorts JAX programs hold are
 * small (top_k of 24x8, sorts of 6x20): what they cost on a GPU is the
 * launch, so a call is one launch. A block sorts several rows at once
 * (each row padded to a power of two p; up to SORT_TILE elements a block)
 * with one bitonic network over all of them, in shared memory: keys made
 * order-preserving integers (a unique order with the position as the last
 * tiebreak, so any correct sorting network gives the stable result, the
 * interpreter's), which also makes the comparisons in the network plain
 * integer compares. Rows longer than shared memory holds run the same
 * kernel one row a block over global scratch (correct, not fast: one SM
 * a row; a multi-block merge would be the next step).
 * A row where a FLOAT key holds a NaN is detected while loading and
 * re-sorted by one thread with the interpreter's merge sort (rare: the
 * price is one thread's serial sort of that row). */
#include "backend/cuda/cuda_sort.h"
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "backend/cpu/sort.h"
#include "backend/cuda/cuda_api.h"
#include "backend/cuda/nvrtc.h"
#include "ir/element.h"
#include "support/status.h"

/* Elements a block sorts at once (rows of p elements, as many as fit). */
#define SORT_TILE 2048
/* Threads a block. */
#define SORT_BLOCK 256
/* Shared memory every device gives a block without opting in. */
#define SORT_SHARED_DEFAULT (48 * 1024)
#define SORT_GRID_MAX 2147483647u

/* The device prelude: what the body needs of the host prelude's names. */
#define SORT_PRELUDE                                                                     \
  "/* No #include: NVRTC compiles this alone. */\n"                                      \
  NVRTC_INT_TYPEDEFS                                                                     \
  "typedef unsigned long long uintptr_t;\n"                                              \
  "#define SK_KERNEL extern \"C\" __global__ void __launch_bounds__(256)\n"              \
  "#define SK_DEV static __device__ __forceinline__\n"                                   \
  "#define SK_GRID_CONST const __grid_constant__\n"                                      \
  "#define SK_TX ((int64_t)threadIdx.x)\n"                                               \
  "#define SK_NTX ((int64_t)blockDim.x)\n"                                               \
  "#define SK_BX ((int64_t)blockIdx.x)\n"                                                \
  "#define SK_NBX ((int64_t)gridDim.x)\n"                                                \
  "#define SK_SYNC() __syncthreads()\n"                                                  \
  "extern __shared__ uint64_t sk_smem[];\n"                                              \
  "SK_DEV uint32_t wk_f2u(float f) { return __float_as_uint(f); }\n"                     \
  "SK_DEV float wk_u2f(uint32_t u) { return __uint_as_float(u); }\n"                     \
  "SK_DEV uint64_t wk_d2u(double f) { return (uint64_t)__double_as_longlong(f); }\n"     \
  "SK_DEV double wk_u2d(uint64_t u) { return __longlong_as_double((long long)u); }\n"

/* The kernel (see cuda_sort_source_body in cuda_sort.h). */
#define SORT_BODY \
  "/* The sort kernel (backend/cuda/cuda_sort.c). Compiled by NVRTC after the\n" \
  " * device prelude, and by the tests with a host C compiler after a host\n" \
  " * prelude: only C written the same in C11 and C++17, and the prelude's\n" \
  " * macros (SK_KERNEL, SK_DEV, SK_GRID_CONST, SK_TX, SK_NTX, SK_BX, SK_NBX,\n" \
  " * SK_SYNC, sk_smem, wk_f2u, wk_u2f, wk_d2u, wk_u2d). */\n" \
  "#define SK_MAXOP 16\n" \
  "#define SK_MAXK 8\n" \
  "#define SK_MAXC 4\n" \
  "enum { SK_SINT, SK_UINT, SK_BOOL, SK_F16, SK_BF16, SK_F32, SK_F64 };\n" \
  "/* A key (cuda_sort.h: cuda_sort_key, field for field). */\n" \
  "typedef struct sk_key {\n" \
  "  int64_t operand, offset, size, nbits, kind, total, descending, quiet, word, width, ncanon;\n" \
  "  int64_t canon_nan[SK_MAXC];\n" \
  "  double eq[SK_MAXC], canon_value[SK_MAXC];\n" \
  "  uint64_t to_bits[SK_MAXC];\n" \
  "} sk_key;\n" \
  "/* The launch parameter (cuda_sort.h: cuda_sort_desc, field for field). */\n" \
  "typedef struct sk_desc {\n" \
  "  int64_t nops, nkeys, nwords, len, inner, nrows, p, lp, rpb, sstride;\n" \
  "  uint64_t scratch;\n" \
  "  int64_t unused;\n" \
  "  int64_t esize[SK_MAXOP];\n" \
  "  uint64_t in[SK_MAXOP], out[SK_MAXOP];\n" \
  "  sk_key key[SK_MAXK];\n" \
  "} sk_desc;\n" \
  "\n" \
  "/* n (1, 2, 4 or 8) bytes at p, zero-extended */\n" \
  "SK_DEV uint64_t sk_load(const uint8_t *p, int64_t n) {\n" \
  "  if (n == 1) return *p;\n" \
  "  if (n == 2) return *(const uint16_t *)p;\n" \
  "  if (n == 4) return *(const uint32_t *)p;\n" \
  "  return *(const uint64_t *)p;\n" \
  "}\n" \
  "\n" \
  "/* f16 bits -> float, exact (NaN stays NaN) */\n" \
  "SK_DEV float sk_f16(uint32_t h) {\n" \
  "  uint32_t sign = (h & 0x8000u) << 16, e = (h >> 10) & 0x1fu, m = h & 0x3ffu;\n" \
  "  if (e == 31) return wk_u2f(sign | 0x7f800000u | (m ? 0x400000u | (m << 13) : 0u));\n" \
  "  if (e == 0) {\n" \
  "    float v = (float)m * 5.9604644775390625e-08f; /* m * 2^-24, exact */\n" \
  "    return sign ? -v : v;\n" \
  "  }\n" \
  "  return wk_u2f(sign | ((e + 112u) << 23) | (m << 13));\n" \
  "}\n" \
  "\n" \
  "/* IEEE totalOrder key of a float of nbits bits: -NaN < -inf < .. < -0 <\n" \
  " * +0 < .. < +inf < +NaN (the CPU sort's total_key) */\n" \
  "SK_DEV uint64_t sk_total(uint64_t bits, int64_t nbits) {\n" \
  "  uint64_t sign = (uint64_t)1 << (nbits - 1);\n" \
  "  uint64_t mask = nbits == 64 ? ~(uint64_t)0 : ((uint64_t)1 << nbits) - 1;\n" \
  "  bits &= mask;\n" \
  "  return (bits & sign) ? (~bits & mask) : (bits | sign);\n" \
  "}\n" \
  "\n" \
  "/* Key k of the element at e (the element's first byte): an ascending\n" \
  " * order-preserving integer of k->width bits. A FLOAT key's value (after\n" \
  " * the canonicalisation, negated when descending) goes to *v, and *nan is\n" \
  " * set when it is NaN (the integer is then meaningless). */\n" \
  "SK_DEV uint64_t sk_keyval(const sk_key *k, const uint8_t *e, double *v, int *nan) {\n" \
  "  uint64_t bits = sk_load(e + k->offset, k->size);\n" \
  "  uint64_t mask = k->width >= 64 ? ~(uint64_t)0 : ((uint64_t)1 << k->width) - 1;\n" \
  "  uint64_t u;\n" \
  "  if (k->kind == SK_SINT) {\n" \
  "    uint64_t m = (uint64_t)1 << (k->nbits - 1);\n" \
  "    uint64_t nmask = k->nbits >= 64 ? ~(uint64_t)0 : ((uint64_t)1 << k->nbits) - 1;\n" \
  "    u = ((bits & nmask) ^ m) & mask; /* v + 2^(nbits-1) */\n" \
  "  } else if (k->kind == SK_UINT) {\n" \
  "    u = bits & mask;\n" \
  "  } else if (k->kind == SK_BOOL) {\n" \
  "    u = bits & 1u;\n" \
  "  } else {\n" \
  "    double x;\n" \
  "    if (k->kind == SK_F16) x = (double)sk_f16((uint32_t)bits);\n" \
  "    else if (k->kind == SK_BF16) x = (double)wk_u2f((uint32_t)bits << 16);\n" \
  "    else if (k->kind == SK_F32) x = (double)wk_u2f((uint32_t)bits);\n" \
  "    else x = wk_u2d(bits);\n" \
  "    int isn = x != x;\n" \
  "    double val = x;\n" \
  "    if (k->quiet && isn) bits |= (uint64_t)1 << 22;\n" \
  "    for (int64_t c = 0; c < k->ncanon; c++)\n" \
  "      if (k->canon_nan[c] ? isn : x == k->eq[c]) {\n" \
  "        bits = k->to_bits[c];\n" \
  "        val = k->canon_value[c];\n" \
  "        break;\n" \
  "      }\n" \
  "    if (k->total) {\n" \
  "      u = sk_total(bits, k->nbits);\n" \
  "    } else {\n" \
  "      if (k->descending) val = -val;\n" \
  "      *v = val;\n" \
  "      if (val != val) *nan = 1;\n" \
  "      if (val == 0) val = 0.0; /* -0 as +0 */\n" \
  "      if (k->width == 32) return sk_total(wk_f2u((float)val), 32);\n" \
  "      return sk_total(wk_d2u(val), 64);\n" \
  "    }\n" \
  "  }\n" \
  "  return k->descending ? mask - u : u;\n" \
  "}\n" \
  "\n" \
  "/* The element at position j of the row starting at element `base`, for\n" \
  " * operand op. */\n" \
  "SK_DEV const uint8_t *sk_elem(const sk_desc *d, int64_t op, int64_t base, int64_t j) {\n" \
  "  return (const uint8_t *)(uintptr_t)d->in[op] + (base + j * d->inner) * d->esize[op];\n" \
  "}\n" \
  "\n" \
  "/* The comparator itself on positions a, b of the row at `base`: whether\n" \
  " * a sorts before b (the chain or(lt, and(eq, rest)); FLOAT keys by IEEE\n" \
  " * compare of their values, the others by their integers). */\n" \
  "SK_DEV int sk_less(const sk_desc *d, int64_t base, int64_t a, int64_t b) {\n" \
  "  for (int64_t k = 0; k < d->nkeys; k++) {\n" \
  "    const sk_key *key = &d->key[k];\n" \
  "    double va = 0, vb = 0;\n" \
  "    int nan = 0;\n" \
  "    uint64_t ua = sk_keyval(key, sk_elem(d, key->operand, base, a), &va, &nan);\n" \
  "    uint64_t ub = sk_keyval(key, sk_elem(d, key->operand, base, b), &vb, &nan);\n" \
  "    if (!key->total && key->kind >= SK_F16) {\n" \
  "      if (va < vb) return 1;\n" \
  "      if (!(va == vb)) return 0;\n" \
  "    } else {\n" \
  "      if (ua < ub) return 1;\n" \
  "      if (ua != ub) return 0;\n" \
  "    }\n" \
  "  }\n" \
  "  return 0;\n" \
  "}\n" \
  "\n" \
  "/* The interpreter's bottom-up merge sort (interp/interp_sort.c: the same\n" \
  " * comparisons in the same order) of positions perm[0..len), tmp scratch. */\n" \
  "SK_DEV void sk_merge_sort(const sk_desc *d, int64_t base, int32_t *perm, int32_t *tmp) {\n" \
  "  int64_t len = d->len;\n" \
  "  for (int64_t j = 0; j < len; j++) perm[j] = (int32_t)j;\n" \
  "  for (int64_t width = 1; width < len; width *= 2) {\n" \
  "    for (int64_t lo = 0; lo < len; lo += 2 * width) {\n" \
  "      int64_t mid = lo + width < len ? lo + width : len;\n" \
  "      int64_t hi = lo + 2 * width < len ? lo + 2 * width : len;\n" \
  "      int64_t i = lo, j = mid, o = lo;\n" \
  "      while (i < mid && j < hi) {\n" \
  "        int right_first = sk_less(d, base, perm[j], perm[i]);\n" \
  "        tmp[o++] = right_first ? perm[j++] : perm[i++];\n" \
  "      }\n" \
  "      while (i < mid) tmp[o++] = perm[i++];\n" \
  "      while (j < hi) tmp[o++] = perm[j++];\n" \
  "    }\n" \
  "    for (int64_t j = 0; j < len; j++) perm[j] = tmp[j];\n" \
  "    if (width > len / 2) break;\n" \
  "  }\n" \
  "}\n" \
  "\n" \
  "/* The first element of row `row` (rows: the slices along the sorted dim). */\n" \
  "SK_DEV int64_t sk_row_base(const sk_desc *d, int64_t row) {\n" \
  "  if (d->inner == 1) return row * d->len; /* sorted along the last dim: no division */\n" \
  "  /* 32-bit division when both fit (the 64-bit one is a long sequence on a GPU) */\n" \
  "  int64_t o = ((uint64_t)row | (uint64_t)d->inner) >> 32 ? row / d->inner\n" \
  "                                                          : (int64_t)((uint32_t)row / (uint32_t)d->inner);\n" \
  "  return o * d->len * d->inner + (row - o * d->inner);\n" \
  "}\n" \
  "\n" \
  "/* Whether element a of the block's array sorts after element b: the key\n" \
  " * words, then the position. */\n" \
  "SK_DEV int sk_after(const uint64_t *key, const int32_t *idx, int64_t np, int64_t nw, int64_t a,\n" \
  "                    int64_t b) {\n" \
  "  for (int64_t w = 0; w < nw; w++) {\n" \
  "    uint64_t x = key[w * np + a], y = key[w * np + b];\n" \
  "    if (x != y) return x > y;\n" \
  "  }\n" \
  "  return idx[a] > idx[b];\n" \
  "}\n" \
  "\n" \
  "/* Copies one element of `size` bytes. */\n" \
  "SK_DEV void sk_copy(uint8_t *dst, const uint8_t *src, int64_t size) {\n" \
  "  if (size == 4) *(uint32_t *)dst = *(const uint32_t *)src;\n" \
  "  else if (size == 8) *(uint64_t *)dst = *(const uint64_t *)src;\n" \
  "  else if (size == 2) *(uint16_t *)dst = *(const uint16_t *)src;\n" \
  "  else if (size == 1) *dst = *src;\n" \
  "  else for (int64_t i = 0; i < size; i += 8) *(uint64_t *)(dst + i) = *(const uint64_t *)(src + i);\n" \
  "}\n" \
  "\n" \
  "/* Sorts every row: a block takes d.rpb consecutive rows at a time (a\n" \
  " * grid-stride loop over such groups), each padded to d.p elements in\n" \
  " * shared memory (or, when d.scratch is set, in the block's d.sstride\n" \
  " * bytes of that global scratch): nwords key words (word-major) and the\n" \
  " * positions, then a flag per row (a FLOAT key holds a NaN). Load, a\n" \
  " * bitonic network over every row at once (compare-exchanges never cross a\n" \
  " * row), the merge sort for flagged rows, then the gather of every\n" \
  " * operand. */\n" \
  "SK_KERNEL hlo_sort_rows(SK_GRID_CONST sk_desc d) {\n" \
  "  const int64_t np = d.p * d.rpb, nw = d.nwords;\n" \
  "  uint64_t *key = d.scratch ? (uint64_t *)(uintptr_t)(d.scratch + (uint64_t)SK_BX * (uint64_t)d.sstride)\n" \
  "                            : sk_smem;\n" \
  "  int32_t *idx = (int32_t *)(key + nw * np);\n" \
  "  int32_t *flag = idx + np;\n" \
  "  int64_t ngroups = (d.nrows + d.rpb - 1) / d.rpb;\n" \
  "  for (int64_t g = SK_BX; g < ngroups; g += SK_NBX) {\n" \
  "    int64_t row0 = g * d.rpb;\n" \
  "    for (int64_t r = SK_TX; r < d.rpb; r += SK_NTX) flag[r] = 0;\n" \
  "    SK_SYNC();\n" \
  "    for (int64_t e = SK_TX; e < np; e += SK_NTX) {\n" \
  "      int64_t r = e >> d.lp, j = e - (r << d.lp), row = row0 + r;\n" \
  "      idx[e] = (int32_t)j; /* padding: positions len.. p-1, after every real one */\n" \
  "      if (row >= d.nrows || j >= d.len) {\n" \
  "        for (int64_t w = 0; w < nw; w++) key[w * np + e] = ~(uint64_t)0;\n" \
  "        continue;\n" \
  "      }\n" \
  "      int64_t base = sk_row_base(&d, row);\n" \
  "      uint64_t words[SK_MAXK];\n" \
  "      for (int64_t w = 0; w < nw; w++) words[w] = 0;\n" \
  "      int nan = 0;\n" \
  "      for (int64_t k = 0; k < d.nkeys; k++) {\n" \
  "        const sk_key *kk = &d.key[k];\n" \
  "        double v = 0;\n" \
  "        uint64_t u = sk_keyval(kk, sk_elem(&d, kk->operand, base, j), &v, &nan);\n" \
  "        words[kk->word] = kk->width >= 64 ? u : (words[kk->word] << kk->width) | u;\n" \
  "      }\n" \
  "      for (int64_t w = 0; w < nw; w++) key[w * np + e] = words[w];\n" \
  "      if (nan) flag[r] = 1;\n" \
  "    }\n" \
  "    SK_SYNC();\n" \
  "    for (int64_t k = 2; k <= d.p; k <<= 1)\n" \
  "      for (int64_t j = k >> 1; j > 0; j >>= 1) {\n" \
  "        for (int64_t t = SK_TX; t < np / 2; t += SK_NTX) {\n" \
  "          int64_t a = ((t & ~(j - 1)) << 1) | (t & (j - 1)), b = a | j;\n" \
  "          int up = (a & (d.p - 1) & k) == 0; /* every row ascending at the end */\n" \
  "          if (sk_after(key, idx, np, nw, a, b) == up) {\n" \
  "            for (int64_t w = 0; w < nw; w++) {\n" \
  "              uint64_t x = key[w * np + a];\n" \
  "              key[w * np + a] = key[w * np + b];\n" \
  "              key[w * np + b] = x;\n" \
  "            }\n" \
  "            int32_t x = idx[a];\n" \
  "            idx[a] = idx[b];\n" \
  "            idx[b] = x;\n" \
  "          }\n" \
  "        }\n" \
  "        SK_SYNC();\n" \
  "      }\n" \
  "    /* rows with a NaN under a FLOAT key: the interpreter's merge sort, one\n" \
  "     * thread a row, the row's first key word as scratch (2p positions) */\n" \
  "    for (int64_t r = SK_TX; r < d.rpb; r += SK_NTX)\n" \
  "      if (flag[r] && row0 + r < d.nrows)\n" \
  "        sk_merge_sort(&d, sk_row_base(&d, row0 + r), idx + (r << d.lp),\n" \
  "                      (int32_t *)(key + (r << d.lp)));\n" \
  "    SK_SYNC();\n" \
  "    for (int64_t e = SK_TX; e < np; e += SK_NTX) {\n" \
  "      int64_t r = e >> d.lp, j = e - (r << d.lp), row = row0 + r;\n" \
  "      if (row >= d.nrows || j >= d.len) continue;\n" \
  "      int64_t base = sk_row_base(&d, row), from = idx[e];\n" \
  "      for (int64_t op = 0; op < d.nops; op++) {\n" \
  "        int64_t es = d.esize[op];\n" \
  "        sk_copy((uint8_t *)(uintptr_t)d.out[op] + (base + j * d.inner) * es,\n" \
  "                sk_elem(&d, op, base, from), es);\n" \
  "      }\n" \
  "    }\n" \
  "    SK_SYNC();\n" \
  "  }\n" \
  "}\n"
static const char sort_source[] = SORT_PRELUDE SORT_BODY;
static const char sort_body[] = SORT_BODY;

const char *cuda_sort_source(void) { return sort_source; }
const char *cuda_sort_source_body(void) { return sort_body; }

/* ---- what is taken, and the plan ---- */

/* The kernel's element kind of key type t (CUDA_SORT_*). */
static int64_t key_kind(hlo_dtype t) {
  switch (t) {
  case HLO_F16: return CUDA_SORT_F16;
  case HLO_BF16: return CUDA_SORT_BF16;
  case HLO_F32: return CUDA_SORT_F32;
  case HLO_F64: return CUDA_SORT_F64;
  default: break;
  }
  hlo_dtype_class c = dtype_class(t);
  return c == HLO_CLASS_BOOL ? CUDA_SORT_BOOL : c == HLO_CLASS_SINT ? CUDA_SORT_SINT
                                                                    : CUDA_SORT_UINT;
}

/* The bits key k takes in a packed word: a FLOAT key's value as f32 bits
 * for f16, bf16 and f32 keys (their values, negated or not, are f32
 * values), as f64 bits for f64; i1 one bit; else the type's width. */
static int64_t key_width(const backend_sort_key *k) {
  if (k->cmp == BACKEND_SORT_FLOAT) return k->dtype == HLO_F64 ? 64 : 32;
  return dtype_bits(k->dtype);
}

bool cuda_sort_plan(const backend_sort *s, size_t shared_limit, void *const *inputs,
                    void *const *outputs, cuda_sort_desc *d, cuda_sort_geometry *geo) {
  if (!cpu_sort_takes(s)) return false;
  memset(d, 0, sizeof *d);
  memset(geo, 0, sizeof *geo);
  d->nops = s->num_operands;
  d->nkeys = s->nkeys;
  int64_t total = 1;
  for (uint32_t i = 0; i < s->rank; i++) total *= s->dims[i];
  d->len = s->dims[s->dimension];
  d->inner = 1;
  for (uint32_t i = s->dimension + 1; i < s->rank; i++) d->inner *= s->dims[i];
  d->nrows = d->len ? total / d->len : 0;
  for (uint32_t k = 0; k < s->num_operands; k++) {
    d->esize[k] = (int64_t)hlo_dtype_size(s->dtypes[k]);
    d->in[k] = inputs ? (uint64_t)(uintptr_t)inputs[k] : 0;
    d->out[k] = outputs ? (uint64_t)(uintptr_t)outputs[k] : 0;
  }
  /* the keys, packed greedily key 0 first: a key that does not fit what
   * is left of the current 64-bit word starts the next one */
  int64_t used = 64;
  d->nwords = 0;
  for (uint32_t k = 0; k < s->nkeys; k++) {
    const backend_sort_key *bk = &s->keys[k];
    cuda_sort_key *ck = &d->key[k];
    ck->operand = bk->operand;
    ck->offset = bk->part == 1 ? d->esize[bk->operand] / 2 : 0;
    ck->size = (int64_t)hlo_dtype_size(bk->dtype);
    ck->nbits = dtype_bits(bk->dtype);
    ck->kind = key_kind(bk->dtype);
    ck->total = bk->cmp == BACKEND_SORT_TOTALORDER;
    ck->descending = bk->descending;
    ck->quiet = bk->part >= 0 && bk->dtype == HLO_F32;
    ck->width = key_width(bk);
    if (used + ck->width > 64) {
      d->nwords++;
      used = 0;
    }
    ck->word = d->nwords - 1;
    used += ck->width;
    ck->ncanon = bk->ncanon;
    for (uint32_t c = 0; c < bk->ncanon; c++) {
      ck->canon_nan[c] = bk->canon[c].is_nan;
      ck->eq[c] = bk->canon[c].eq_value;
      ck->to_bits[c] = bk->canon[c].to_bits;
      uint64_t bits = bk->canon[c].to_bits;
      ck->canon_value[c] = elem_get_f64(bk->dtype, &bits, 0);
    }
  }
  /* rows padded to p = 2^lp; a block holds rpb of them */
  int64_t p = 1, lp = 0;
  while (p < d->len) p <<= 1, lp++;
  d->p = p;
  d->lp = lp;
  size_t per_row = (size_t)p * (size_t)(8 * d->nwords + 4) + 4;
  if (per_row > shared_limit) {
    /* one row a block, in global scratch: a block's part 256-byte aligned */
    size_t stride = (per_row + 255) / 256 * 256;
    int64_t blocks = d->nrows < CUDA_SORT_LONG_BLOCKS ? d->nrows : CUDA_SORT_LONG_BLOCKS;
    if (blocks < 1) blocks = 1;
    if (stride > CUDA_SORT_SCRATCH_MAX / (size_t)blocks) return false;
    d->rpb = 1;
    d->sstride = (int64_t)stride;
    geo->block = SORT_BLOCK;
    geo->grid = (unsigned)blocks;
    geo->scratch = stride * (size_t)blocks;
    return true;
  }
  int64_t rpb = p >= SORT_TILE ? 1 : SORT_TILE / p;
  if ((size_t)rpb * per_row > shared_limit) rpb = (int64_t)(shared_limit / per_row);
  if (rpb > d->nrows) rpb = d->nrows;
  if (rpb < 1) rpb = 1;
  d->rpb = rpb;
  int64_t np = p * rpb, groups = (d->nrows + rpb - 1) / rpb;
  int64_t threads = (np / 2 + 31) / 32 * 32;
  geo->block = threads < 32 ? 32 : threads > SORT_BLOCK ? SORT_BLOCK : (unsigned)threads;
  geo->grid = groups > (int64_t)SORT_GRID_MAX ? SORT_GRID_MAX : (unsigned)(groups < 1 ? 1 : groups);
  geo->shared = ((size_t)np * (size_t)(8 * d->nwords + 4) + 4 * (size_t)rpb + 7) / 8 * 8;
  return true;
}

/* ---- the scratch for long rows, kept for the process ---- */

/* The current scratch (the biggest so far) and every one before it: a
 * call recorded into a CUDA graph may replay with an older one, so none
 * is ever freed. */
static pthread_mutex_t g_scratch_lock = PTHREAD_MUTEX_INITIALIZER;
static CUdeviceptr g_scratch;
static size_t g_scratch_bytes;

/* At least `bytes` of scratch (the context is current): its address in
 * *out. Grows by allocating max(bytes, 2 x the current) bytes; the old
 * one is left allocated (above). */
static hlo_status scratch_get(const cuda_device_state *s, size_t bytes, CUdeviceptr *out) {
  hlo_status st = NULL;
  pthread_mutex_lock(&g_scratch_lock);
  if (bytes > g_scratch_bytes) {
    size_t want = g_scratch_bytes * 2 > bytes ? g_scratch_bytes * 2 : bytes;
    if (want > CUDA_SORT_SCRATCH_MAX) want = bytes;
    CUdeviceptr p = 0;
    CUresult r = s->cu->cuMemAlloc_v2(&p, want);
    if (r) {
      st = status_note(cuda_error(s, r, "cuMemAlloc"), "the sort's scratch (%zu bytes)", want);
    } else {
      g_scratch = p; /* the old one stays allocated: a recorded graph may still use it */
      g_scratch_bytes = want;
    }
  }
  *out = g_scratch;
  pthread_mutex_unlock(&g_scratch_lock);
  return st;
}

/* ---- the module, loaded once per process ---- */

static pthread_mutex_t g_lock = PTHREAD_MUTEX_INITIALIZER;
static struct {
  _Atomic int done;       /* 1 once the fields below are set (under g_lock) */
  hlo_status_code code;
  char message[4608];
  CUmodule mod;
  CUfunction fn;
  size_t shared_limit;    /* dynamic shared memory a launch may ask for */
} g_mod;

/* Compiles and loads the kernel (the context is current: the caller made
 * it so); the outcome goes to g_mod. */
static void load_module(const cuda_device_state *s) {
  void *cubin = NULL;
  size_t len = 0;
  int arch = s->cc_major * 10 + s->cc_minor;
  hlo_status st = nvrtc_compile_cached(sort_source, "hlo_sort.cu", arch, &cubin, &len);
  if (!st) {
    CUresult r = s->cu->cuModuleLoadData(&g_mod.mod, cubin);
    if (r) {
      g_mod.mod = NULL;
      st = cuda_error(s, r, "cuModuleLoadData (the sort kernel)");
    }
  }
  if (!st) {
    CUresult r = s->cu->cuModuleGetFunction(&g_mod.fn, g_mod.mod, "hlo_sort_rows");
    if (r) st = status_note(cuda_error(s, r, "cuModuleGetFunction"), "kernel hlo_sort_rows");
  }
  g_mod.shared_limit = SORT_SHARED_DEFAULT;
  if (!st && s->max_shared_optin > SORT_SHARED_DEFAULT) {
    /* opt into the device's limit; where that fails, stay at 48 KiB */
    CUresult r = s->cu->cuFuncSetAttribute(
        g_mod.fn, CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES, s->max_shared_optin);
    if (!r) g_mod.shared_limit = (size_t)s->max_shared_optin;
  }
  free(cubin);
  if (st) {
    if (g_mod.mod) (void)s->cu->cuModuleUnload(g_mod.mod);
    g_mod.mod = NULL;
    g_mod.code = hlo_status_code_of(st);
    snprintf(g_mod.message, sizeof g_mod.message, "%s", hlo_status_message(st));
    hlo_status_free(st);
  } else {
    g_mod.code = HLO_OK;
  }
  atomic_store_explicit(&g_mod.done, 1, memory_order_release);
}

/* Whether the module is loaded, loading it on the first call (the
 * context is current); false when that failed (g_mod says why). */
static bool module_ready(const cuda_device_state *s) {
  if (!atomic_load_explicit(&g_mod.done, memory_order_acquire)) {
    pthread_mutex_lock(&g_lock);
    if (!atomic_load_explicit(&g_mod.done, memory_order_relaxed)) load_module(s);
    pthread_mutex_unlock(&g_lock);
  }
  return g_mod.code == HLO_OK;
}

bool cuda_sort_takes(const backend_sort *s) {
  cuda_sort_desc d;
  cuda_sort_geometry geo;
  const cuda_device_state *st = cuda_state();
  if (!st) return s && cuda_sort_plan(s, SORT_SHARED_DEFAULT, NULL, NULL, &d, &geo);
  if (!s || !cpu_sort_takes(s)) return false;
  /* with a started backend: compile and load the kernel now (the runtime
   * asks at compile time), decline when it does not load, and answer for
   * the device's shared memory */
  hlo_status e = cuda_make_current(st, "sort_takes");
  bool ok = !e && module_ready(st) && cuda_sort_plan(s, g_mod.shared_limit, NULL, NULL, &d, &geo);
  CUdeviceptr scratch = 0;
  if (ok && geo.scratch && d.nrows > 0) {
    e = scratch_get(st, geo.scratch, &scratch);
    ok = !e;
  }
  hlo_status_free(e);
  return ok;
}

hlo_status cuda_sort(const backend_sort *s, void *const *inputs, void *const *outputs) {
  if (!s) return status_new(HLO_INVALID_ARGUMENT, "sort on the cuda backend: no description");
  char what[160];
  if (!cpu_sort_takes(s)) {
    sort_describe_print(s, what, sizeof what);
    return status_new(HLO_UNIMPLEMENTED, "sort on the cuda backend: a form not supported (%s)",
                      what);
  }
  const cuda_device_state *st = cuda_state();
  if (!st)
    return status_new(HLO_UNAVAILABLE, "sort on the cuda backend: the backend is not started");
  HLO_TRY(cuda_make_current(st, "sort"));
  if (!module_ready(st))
    return status_new(g_mod.code, "sort on the cuda backend: %s", g_mod.message);
  cuda_sort_desc d;
  cuda_sort_geometry geo;
  if (!cuda_sort_plan(s, g_mod.shared_limit, inputs, outputs, &d, &geo)) {
    sort_describe_print(s, what, sizeof what);
    return status_new(HLO_UNIMPLEMENTED, "sort on the cuda backend: rows of %lld elements need "
                      "more than %zu bytes of scratch (%s)", (long long)d.len,
                      (size_t)CUDA_SORT_SCRATCH_MAX, what);
  }
  if (d.nrows == 0) return NULL;
  if (geo.scratch) {
    CUdeviceptr scratch = 0;
    HLO_TRY(scratch_get(st, geo.scratch, &scratch));
    d.scratch = (uint64_t)scratch;
  }
  void *params[] = {&d};
  CUresult r = st->cu->cuLaunchKernel(g_mod.fn, geo.grid, 1, 1, geo.block, 1, 1,
                                      (unsigned)geo.shared, st->stream, params, NULL);
  return r ? cuda_error(st, r, "launching sort (cuLaunchKernel)") : NULL;
}
