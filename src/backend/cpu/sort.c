/* sort.c — the CPU backend's native stablehlo.sort (contract: sort.h; why
 * these algorithms: bench/SORT.md). Per row: the keys are loaded once into
 * 64-bit values (order-preserving integers, or doubles for FLOAT keys), a
 * permutation of the row is sorted, then every operand is gathered through
 * it. */
#include "backend/cpu/sort.h"
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include "ir/element.h"
#include "support/thread_pool.h"

/* Rows this short are insertion-sorted (stable), longer ones radix-sorted
 * (measured: bench/SORT.md). */
#define SORT_INSERTION_MAX 32
/* Sorts of fewer elements run on the calling thread. */
#define SORT_PARALLEL_MIN_ELEMS 16384

/* A loaded key value: an order-preserving unsigned integer (ascending; a
 * descending key stored complemented), or for FLOAT keys the value as a
 * double (negated for a descending key: a > b is -a < -b). */
typedef union kval {
  uint64_t u;
  double d;
} kval;

/* An element's keys packed into one integer (key 0 most significant) and
 * its position in the row. */
typedef struct pair {
  uint64_t k;
  int32_t i;
} pair;

typedef struct sorter {
  const backend_sort *s;
  bool packed;                 /* the keys' widths (packed_width) sum to 64 bits at most */
  void *const *in;
  void *const *out;
  int64_t len, inner, nrows;
  size_t esize[BACKEND_SORT_MAX_OPERANDS];
  double canon_d[BACKEND_SORT_MAX_KEYS][BACKEND_SORT_MAX_CANON]; /* to_bits as doubles */
  int failed;                                                    /* scratch not had */
} sorter;

/* IEEE totalOrder key of a float of `nbits` bits (the interpreter's
 * total_key): -NaN < -inf < ... < -0 < +0 < ... < +inf < +NaN. */
static inline uint64_t total_key(uint64_t bits, int nbits) {
  uint64_t sign = (uint64_t)1 << (nbits - 1);
  uint64_t mask = nbits == 64 ? ~(uint64_t)0 : ((uint64_t)1 << nbits) - 1;
  bits &= mask;
  return (bits & sign) ? (~bits & mask) : (bits | sign);
}

static inline uint64_t load_bits(const uint8_t *e, size_t n) {
  switch (n) {
  case 1: return *e;
  case 2: { uint16_t v; memcpy(&v, e, 2); return v; }
  case 4: { uint32_t v; memcpy(&v, e, 4); return v; }
  default: { uint64_t v; memcpy(&v, e, 8); return v; }
  }
}

static inline int64_t load_signed(const uint8_t *e, size_t n) {
  switch (n) {
  case 1: return (int8_t)*e;
  case 2: { int16_t v; memcpy(&v, e, 2); return v; }
  case 4: { int32_t v; memcpy(&v, e, 4); return v; }
  default: { int64_t v; memcpy(&v, e, 8); return v; }
  }
}

static inline double load_float(hlo_dtype dt, const uint8_t *e) {
  if (dt == HLO_F32) {
    float f;
    memcpy(&f, e, 4);
    return f;
  }
  if (dt == HLO_F64) {
    double d;
    memcpy(&d, e, 8);
    return d;
  }
  return elem_get_f64(dt, e, 0);
}

/* Loads key k of the row starting at element `base` into kv[0..len).
 * Returns whether a FLOAT key value is NaN (the row then needs the
 * interpreter's merge sort). */
static bool load_key(const sorter *so, uint32_t k, int64_t base, kval *kv) {
  const backend_sort_key *key = &so->s->keys[k];
  size_t es = so->esize[key->operand];
  size_t ks = hlo_dtype_size(key->dtype);
  const uint8_t *p = (const uint8_t *)so->in[key->operand] + (key->part == 1 ? es / 2 : 0);
  int64_t len = so->len, step = so->inner;
  const uint8_t *e = p + (size_t)base * es;
  size_t stride = (size_t)step * es;
  bool nan = false;
  bool sub_byte = (size_t)dtype_bits(key->dtype) != 8 * ks; /* i1, i2, i4, ... */
  switch (key->cmp) {
  case BACKEND_SORT_SIGNED:
    for (int64_t j = 0; j < len; j++, e += stride) {
      int64_t v = sub_byte ? elem_get_i64(key->dtype, e, 0) : load_signed(e, ks);
      uint64_t u = (uint64_t)v ^ ((uint64_t)1 << 63);
      kv[j].u = key->descending ? ~u : u;
    }
    break;
  case BACKEND_SORT_UNSIGNED:
    for (int64_t j = 0; j < len; j++, e += stride) {
      uint64_t u = sub_byte ? elem_get_u64(key->dtype, e, 0) : load_bits(e, ks);
      kv[j].u = key->descending ? ~u : u;
    }
    break;
  case BACKEND_SORT_TOTALORDER:
  case BACKEND_SORT_FLOAT: {
    int nbits = dtype_bits(key->dtype);
    bool quiet_part = key->part >= 0 && key->dtype == HLO_F32;
    for (int64_t j = 0; j < len; j++, e += stride) {
      uint64_t bits = load_bits(e, ks);
      double x = load_float(key->dtype, e), v = x;
      /* the interpreter's real / imag of a complex<f32> pass the part through
       * a double: a signaling NaN comes out quiet */
      if (quiet_part && isnan(x)) bits |= (uint64_t)1 << 22;
      for (uint32_t c = 0; c < key->ncanon; c++) {
        const backend_sort_canon *cs = &key->canon[c];
        if (cs->is_nan ? isnan(x) : x == cs->eq_value) {
          bits = cs->to_bits;
          v = so->canon_d[k][c];
          break;
        }
      }
      if (key->cmp == BACKEND_SORT_TOTALORDER) {
        uint64_t u = total_key(bits, nbits);
        kv[j].u = key->descending ? ~u : u;
      } else {
        kv[j].d = key->descending ? -v : v;
        nan |= isnan(v);
      }
    }
    break;
  }
  }
  return nan;
}

/* FLOAT key values without NaN as order-preserving integers (-0 and +0
 * equal, as IEEE compares them). */
static void float_to_ordered(kval *kv, int64_t len) {
  for (int64_t j = 0; j < len; j++) {
    double d = kv[j].d == 0 ? 0.0 : kv[j].d;
    uint64_t b;
    memcpy(&b, &d, 8);
    kv[j].u = total_key(b, 64);
  }
}

/* Lexicographic order of elements a, b over integer keys. */
static inline bool less_u(const kval *kv, uint32_t nk, int64_t len, int32_t a, int32_t b) {
  for (uint32_t k = 0; k < nk; k++) {
    uint64_t x = kv[(int64_t)k * len + a].u, y = kv[(int64_t)k * len + b].u;
    if (x != y) return x < y;
  }
  return false;
}

/* The comparator itself (the chain or(lt, and(eq, rest))), keys of both
 * kinds: comparator(a, b). */
static inline bool less_mixed(const sorter *so, const kval *kv, int32_t a, int32_t b) {
  int64_t len = so->len;
  for (uint32_t k = 0; k < so->s->nkeys; k++) {
    const kval *x = &kv[(int64_t)k * len + a], *y = &kv[(int64_t)k * len + b];
    if (so->s->keys[k].cmp == BACKEND_SORT_FLOAT) {
      if (x->d < y->d) return true;
      if (!(x->d == y->d)) return false;
    } else {
      if (x->u < y->u) return true;
      if (x->u != y->u) return false;
    }
  }
  return false;
}

static void insertion_sort(const kval *kv, uint32_t nk, int64_t len, int32_t *perm) {
  for (int64_t i = 1; i < len; i++) {
    int32_t x = perm[i];
    int64_t j = i;
    while (j > 0 && less_u(kv, nk, len, x, perm[j - 1])) {
      perm[j] = perm[j - 1];
      j--;
    }
    perm[j] = x;
  }
}

/* Stable LSD radix sort of perm by the integer keys, last key first, 8-bit
 * digits; digits equal across the row skipped. Returns the array that
 * holds the result (perm or tmp). */
static int32_t *radix_sort(const kval *kv, uint32_t nk, int64_t len, int32_t *perm,
                           int32_t *tmp) {
  for (uint32_t kk = nk; kk-- > 0;) {
    const kval *col = kv + (int64_t)kk * len;
    uint64_t all_or = 0, all_and = ~(uint64_t)0;
    for (int64_t j = 0; j < len; j++) {
      all_or |= col[j].u;
      all_and &= col[j].u;
    }
    uint64_t varying = all_or ^ all_and;
    for (int d = 0; d < 8; d++) {
      if (!((varying >> (8 * d)) & 255)) continue;
      int64_t off[256], sum = 0;
      memset(off, 0, sizeof off);
      for (int64_t j = 0; j < len; j++) off[(col[j].u >> (8 * d)) & 255]++;
      for (int b = 0; b < 256; b++) {
        int64_t c = off[b];
        off[b] = sum;
        sum += c;
      }
      for (int64_t i = 0; i < len; i++) {
        int32_t e = perm[i];
        tmp[off[(col[e].u >> (8 * d)) & 255]++] = e;
      }
      int32_t *t = perm;
      perm = tmp;
      tmp = t;
    }
  }
  return perm;
}

/* The interpreter's bottom-up merge sort (interp_sort.c, same comparisons
 * in the same order) with the comparator evaluated natively. */
static void merge_sort(const sorter *so, const kval *kv, int32_t *perm, int32_t *tmp) {
  int64_t len = so->len;
  for (int64_t width = 1; width < len; width *= 2) {
    for (int64_t lo = 0; lo < len; lo += 2 * width) {
      int64_t mid = lo + width < len ? lo + width : len;
      int64_t hi = lo + 2 * width < len ? lo + 2 * width : len;
      int64_t i = lo, j = mid, o = lo;
      while (i < mid && j < hi) {
        bool right_first = less_mixed(so, kv, perm[j], perm[i]);
        tmp[o++] = right_first ? perm[j++] : perm[i++];
      }
      while (i < mid) tmp[o++] = perm[i++];
      while (j < hi) tmp[o++] = perm[j++];
    }
    memcpy(perm, tmp, sizeof *perm * (size_t)len);
    if (width > len / 2) break;
  }
}

/* Bits key k takes in a packed key: its type's width; a FLOAT key's value
 * is packed as f32 bits when it is one, else as f64 bits. */
static int packed_width(const backend_sort_key *k) {
  if (k->cmp == BACKEND_SORT_FLOAT) return k->dtype == HLO_F32 ? 32 : 64;
  return dtype_bits(k->dtype);
}

/* The row's keys (FLOAT keys without NaN) packed, key 0 most significant,
 * each an order-preserving integer of packed_width bits (ascending). */
static void pack_keys(const sorter *so, const kval *kv, pair *p) {
  int64_t len = so->len;
  for (int64_t j = 0; j < len; j++) {
    p[j].k = 0;
    p[j].i = (int32_t)j;
  }
  for (uint32_t k = 0; k < so->s->nkeys; k++) {
    const backend_sort_key *key = &so->s->keys[k];
    const kval *col = kv + (int64_t)k * len;
    int w = packed_width(key);
    uint64_t mask = w == 64 ? ~(uint64_t)0 : ((uint64_t)1 << w) - 1;
    for (int64_t j = 0; j < len; j++) {
      uint64_t v;
      if (key->cmp == BACKEND_SORT_FLOAT) {
        /* the value, negated when descending: ascending total order of it
         * (-0 as +0), in its own width */
        double d = col[j].d == 0 ? 0.0 : col[j].d;
        if (w == 32) {
          float f = (float)d;
          uint32_t b;
          memcpy(&b, &f, 4);
          v = total_key(b, 32);
        } else {
          uint64_t b;
          memcpy(&b, &d, 8);
          v = total_key(b, 64);
        }
      } else {
        uint64_t u = key->descending ? ~col[j].u : col[j].u; /* ascending, 64 bits */
        if (key->cmp == BACKEND_SORT_SIGNED) u -= ((uint64_t)1 << 63) - ((uint64_t)1 << (w - 1));
        v = key->descending ? mask - u : u;
      }
      p[j].k = (w == 64 ? 0 : p[j].k << w) | (v & mask);
    }
  }
}

static void insertion_sort_pairs(pair *p, int64_t len) {
  for (int64_t i = 1; i < len; i++) {
    pair x = p[i];
    int64_t j = i;
    while (j > 0 && x.k < p[j - 1].k) {
      p[j] = p[j - 1];
      j--;
    }
    p[j] = x;
  }
}

/* Stable LSD radix sort of p by k in 8-bit digits (4-bit digits measured
 * slower on rows of 64 .. 1024: bench/SORT.md); digits equal across the
 * row (no bit of them varies) skipped. Returns the array holding the
 * result (p or tmp). */
static pair *radix_sort_pairs(pair *p, pair *tmp, int64_t len) {
  const int bits = 8;
  uint64_t all_or = 0, all_and = ~(uint64_t)0;
  for (int64_t j = 0; j < len; j++) {
    all_or |= p[j].k;
    all_and &= p[j].k;
  }
  uint64_t varying = all_or ^ all_and, mask = ((uint64_t)1 << bits) - 1;
  const int nb = 1 << bits;
  for (int shift = 0; shift < 64; shift += bits) {
    if (!((varying >> shift) & mask)) continue;
    int64_t off[256], sum = 0;
    memset(off, 0, sizeof *off * (size_t)nb);
    for (int64_t j = 0; j < len; j++) off[(p[j].k >> shift) & mask]++;
    for (int b = 0; b < nb; b++) {
      int64_t c = off[b];
      off[b] = sum;
      sum += c;
    }
    for (int64_t i = 0; i < len; i++) tmp[off[(p[i].k >> shift) & mask]++] = p[i];
    pair *t = p;
    p = tmp;
    tmp = t;
  }
  return p;
}

/* out[base + j*inner] = in[base + perm[j]*inner] for every operand. */
static void gather_row(const sorter *so, int64_t base, const int32_t *perm) {
  int64_t len = so->len, step = so->inner;
  for (uint32_t k = 0; k < so->s->num_operands; k++) {
    size_t es = so->esize[k];
    const uint8_t *src = (const uint8_t *)so->in[k] + (size_t)base * es;
    uint8_t *dst = (uint8_t *)so->out[k] + (size_t)base * es;
    size_t stride = (size_t)step * es;
    switch (es) {
    case 4:
      for (int64_t j = 0; j < len; j++) memcpy(dst + j * stride, src + perm[j] * stride, 4);
      break;
    case 8:
      for (int64_t j = 0; j < len; j++) memcpy(dst + j * stride, src + perm[j] * stride, 8);
      break;
    default:
      for (int64_t j = 0; j < len; j++) memcpy(dst + j * stride, src + perm[j] * stride, es);
    }
  }
}

static void sort_row(const sorter *so, int64_t row, kval *kv, int32_t *perm, int32_t *tmp,
                     pair *pa, pair *pb) {
  int64_t len = so->len, inner = so->inner;
  int64_t base = (row / inner) * len * inner + row % inner;
  uint32_t nk = so->s->nkeys;
  bool nan = false;
  for (uint32_t k = 0; k < nk; k++) nan |= load_key(so, k, base, kv + (int64_t)k * len);
  for (int64_t j = 0; j < len; j++) perm[j] = (int32_t)j;
  int32_t *res = perm;
  if (nan) {
    merge_sort(so, kv, perm, tmp);
  } else if (so->packed) {
    pack_keys(so, kv, pa);
    pair *p = pa;
    if (len <= SORT_INSERTION_MAX) insertion_sort_pairs(pa, len);
    else p = radix_sort_pairs(pa, pb, len);
    for (int64_t j = 0; j < len; j++) perm[j] = p[j].i;
  } else {
    for (uint32_t k = 0; k < nk; k++)
      if (so->s->keys[k].cmp == BACKEND_SORT_FLOAT) float_to_ordered(kv + (int64_t)k * len, len);
    if (len <= SORT_INSERTION_MAX) insertion_sort(kv, nk, len, perm);
    else res = radix_sort(kv, nk, len, perm, tmp);
  }
  gather_row(so, base, res);
}

/* thread_pool_fn: rows [begin, end), with scratch of their own. */
static void sort_rows(void *ctx, int64_t begin, int64_t end) {
  sorter *so = ctx;
  size_t len = (size_t)so->len;
  kval *kv = malloc(len * so->s->nkeys * sizeof *kv);
  int32_t *perm = malloc(len * sizeof *perm), *tmp = malloc(len * sizeof *tmp);
  pair *pa = so->packed ? malloc(len * sizeof *pa) : NULL;
  pair *pb = so->packed ? malloc(len * sizeof *pb) : NULL;
  if (!kv || !perm || !tmp || (so->packed && (!pa || !pb)))
    __atomic_store_n(&so->failed, 1, __ATOMIC_RELAXED);
  else
    for (int64_t r = begin; r < end; r++) sort_row(so, r, kv, perm, tmp, pa, pb);
  free(pa);
  free(pb);
  free(kv);
  free(perm);
  free(tmp);
}

static bool key_takes(const backend_sort *s, const backend_sort_key *k) {
  if (k->operand >= s->num_operands) return false;
  hlo_dtype op = s->dtypes[k->operand];
  if (k->part >= 0) {
    if (!((op == HLO_C64 && k->dtype == HLO_F32) || (op == HLO_C128 && k->dtype == HLO_F64)))
      return false;
  } else if (op != k->dtype) {
    return false;
  }
  hlo_dtype_class c = dtype_class(k->dtype);
  size_t n = hlo_dtype_size(k->dtype);
  switch (k->cmp) {
  case BACKEND_SORT_SIGNED: return c == HLO_CLASS_SINT && n >= 1 && n <= 8;
  case BACKEND_SORT_UNSIGNED: return (c == HLO_CLASS_UINT || c == HLO_CLASS_BOOL) && n >= 1 && n <= 8;
  case BACKEND_SORT_FLOAT:
  case BACKEND_SORT_TOTALORDER:
    return k->dtype == HLO_F16 || k->dtype == HLO_BF16 || k->dtype == HLO_F32 ||
           k->dtype == HLO_F64;
  }
  return false;
}

bool cpu_sort_takes(const backend_sort *s) {
  if (!s || s->num_operands < 1 || s->num_operands > BACKEND_SORT_MAX_OPERANDS || s->nkeys < 1 ||
      s->nkeys > BACKEND_SORT_MAX_KEYS || s->rank < 1 || s->rank > BACKEND_SORT_MAX_RANK ||
      s->dimension >= s->rank || s->dims[s->dimension] > INT32_MAX)
    return false;
  for (uint32_t k = 0; k < s->num_operands; k++) {
    size_t n = hlo_dtype_size(s->dtypes[k]);
    if (n < 1 || n > 16) return false;
  }
  for (uint32_t k = 0; k < s->nkeys; k++)
    if (!key_takes(s, &s->keys[k]) || s->keys[k].ncanon > BACKEND_SORT_MAX_CANON) return false;
  return true;
}

hlo_status cpu_sort(const backend_sort *s, void *const *inputs, void *const *outputs) {
  if (!cpu_sort_takes(s))
    return status_new(HLO_INVALID_ARGUMENT, "sort: a form the CPU sort does not take");
  sorter so;
  memset(&so, 0, sizeof so);
  so.s = s;
  so.in = inputs;
  so.out = outputs;
  int64_t total = 1;
  for (uint32_t d = 0; d < s->rank; d++) total *= s->dims[d];
  so.len = s->dims[s->dimension];
  so.inner = 1;
  for (uint32_t d = s->dimension + 1; d < s->rank; d++) so.inner *= s->dims[d];
  for (uint32_t k = 0; k < s->num_operands; k++) so.esize[k] = hlo_dtype_size(s->dtypes[k]);
  if (total == 0) return NULL;
  if (so.len == 1) {
    for (uint32_t k = 0; k < s->num_operands; k++)
      memcpy(outputs[k], inputs[k], (size_t)total * so.esize[k]);
    return NULL;
  }
  for (uint32_t k = 0; k < s->nkeys; k++)
    for (uint32_t c = 0; c < s->keys[k].ncanon; c++) {
      uint64_t bits = s->keys[k].canon[c].to_bits;
      so.canon_d[k][c] = elem_get_f64(s->keys[k].dtype, &bits, 0);
    }
  int width = 0;
  for (uint32_t k = 0; k < s->nkeys; k++) width += packed_width(&s->keys[k]);
  so.packed = width <= 64;
  so.nrows = total / so.len;
  if (so.nrows > 1 && total >= SORT_PARALLEL_MIN_ELEMS)
    thread_pool_parallel_for(thread_pool_global(), so.nrows, 0, sort_rows, &so);
  else
    sort_rows(&so, 0, so.nrows);
  if (so.failed) return status_new(HLO_RESOURCE_EXHAUSTED, "out of memory");
  return NULL;
}
