/* conv.c — stablehlo.convolution on the CPU (conv.h): the im2col + GEMM
 * path, the direct loop for tiny convolutions (the interpreter's sums, at
 * the end of the file), and cpu_conv, which picks among them and the oneDNN
 * path (conv_onednn.c).
 *
 * The convolution of one group is a matrix product C = A * B:
 *   - M (rows of A and C): the output's non-feature dims (batch and spatial)
 *     in the output's memory order;
 *   - K (the sum): the kernel's non-output-feature dims (input feature and
 *     kernel spatial) in the kernel's memory order;
 *   - N: the group's output features;
 *   - A[m][k]: the input element that output position m meets at window
 *     element k (zero where that falls into padding or an lhs-dilation hole),
 *     gathered by im2col; B[k][n]: the kernel, read in place when its output
 *     feature dim is its innermost (B stored K x N) or outermost (B stored
 *     N x K), else repacked to K x N once per call.
 * The output is written in place too: when its feature dim is innermost it
 * is C (M x N, leading dim C_out); otherwise its dims before the feature dim
 * are "blocks" and, per block, it is C transposed (N x L, L the product of
 * the dims after the feature dim), computed as B^T * A^T.
 *
 * im2col writes A either row by row (A[m][k]) or column by column (A^T,
 * [k][m]): whichever makes the innermost copy run along the input's
 * contiguous dim (NHWC forward: along the input features; the backward-filter
 * convolution, whose "batch" is the input feature: along the batch). Every
 * M or K axis moves one input dim (batch, feature, or spatial dim s, where
 * an output spatial axis and a kernel spatial axis both move it:
 *   position = out * stride + k' * rhs_dilation - padding_low,
 *   k' = reversed ? size - 1 - k : k,
 * in lhs-dilated coordinates: valid when divisible by lhs_dilation and the
 * quotient is inside the input). The copy is done in 2-D blocks: a run
 * along A's innermost axis (a1) times a run along the other matrix side's
 * innermost axis (a2), with the valid part of each run computed, not
 * tested element by element (except under lhs dilation).
 *
 * Memory: im2col goes chunk by chunk over M (and over K when one K row is
 * past the target: the GEMMs then accumulate, beta = 1) into the caller's
 * scratch, bounded by CPU_CONV_SCRATCH_TARGET (1 MB: the chunk stays in L2
 * for its GEMM; bench/CONV.md). Groups (feature or batch) are separate
 * GEMMs on slices of input, kernel and output. Threads: a chunk's im2col
 * is spread over hlo's thread pool by M ranges, then its GEMM runs on the
 * GEMM library's threads (gemm.h). */
#include "backend/cpu/conv.h"
#include <stdlib.h>
#include "backend/cpu/gemm.h"
#include <limits.h>
#include <stdint.h>
#include <string.h>
#include "support/float.h"
#include "support/status.h"
#include "support/thread_pool.h"

enum { MAXR = BACKEND_CONV_MAX_RANK };

/* An input dim: 0 the batch, 1 the feature, 2 + s spatial dim s. */
typedef struct in_dim {
  int64_t size;    /* valid positions / lhs_dilation: [0, size) */
  int64_t ldil;    /* lhs_dilation (1 for batch and feature) */
  int64_t stride;  /* elements between neighbours in the input */
} in_dim;

/* An axis of M or K: moves input dim `in` by `coef` per step, from `cst`. */
typedef struct axis {
  int64_t size;
  uint32_t in;
  int64_t coef, cst;
} axis;

typedef enum kmode { KOF_INNER, KOF_OUTER, KOF_PACK } kmode;

typedef struct plan {
  hlo_dtype dt;                   /* the operands' and result's element type */
  size_t es;                      /* computed in: 4 (f32; bf16 and f16 too) or 8 (f64) */
  size_t ies;                     /* bytes of an operand / result element */
  bool narrow;                    /* bf16 / f16: widened to f32, rounded once at the end */
  int64_t G, cin_g, cout, cout_g, bout;
  int64_t in_group_off;           /* input elements between groups */
  uint32_t nin;                   /* input dims: 2 + S */
  in_dim ind[MAXR];
  uint32_t nm, nk;
  axis max[MAXR], kax[MAXR];      /* M and K axes of size > 1, outermost first */
  int64_t q_base[MAXR];           /* input positions the size-1 axes give */
  int64_t M, K;
  bool row_out;                   /* output feature dim innermost */
  int64_t nblocks, blen;          /* M = nblocks * blen */
  kmode km;
  int64_t kpre, kpost;            /* kernel: elements before / after kof (KOF_PACK) */
  bool a_row;                     /* A stored [m][k] (else [k][m]) */
  int64_t mc, kc;                 /* chunk sizes over one block's M and over K */
  size_t pack_bytes, a_bytes;     /* scratch parts, each rounded to 64 */
  size_t c_bytes;                 /* narrow: the f32 result of one chunk */
} plan;

static size_t round64(size_t n) { return (n + 63) & ~(size_t)63; }

/* Elements between neighbours along dim d of a row-major shape. */
static int64_t dim_stride(const int64_t *dims, uint32_t rank, uint32_t d) {
  int64_t s = 1;
  for (uint32_t i = d + 1; i < rank; i++) s *= dims[i];
  return s;
}

/* How well a run along axis `a` of `p` copies: its length, four times that
 * when it reads the input contiguously. */
static int64_t run_score(const plan *p, const axis *a) {
  const in_dim *d = &p->ind[a->in];
  bool unit = d->ldil == 1 && (a->coef * d->stride == 1 || a->coef * d->stride == -1);
  return a->size * (unit ? 4 : 1);
}

/* Drops the axes of size 1 from ax[0..*n) (keeping the last when all are),
 * adding the positions they stand at to q_base. */
static void compact(axis *ax, uint32_t *n, int64_t *q_base) {
  uint32_t k = 0;
  for (uint32_t i = 0; i < *n; i++) {
    if (ax[i].size == 1 && !(i == *n - 1 && k == 0)) q_base[ax[i].in] += ax[i].cst;
    else ax[k++] = ax[i];
  }
  *n = k;
}

static void make_plan(const backend_conv *c, plan *p) {
  memset(p, 0, sizeof *p);
  uint32_t R = c->rank, S = c->num_spatial;
  p->dt = c->result_dtype;
  p->es = p->dt == HLO_F64 ? 8 : 4;
  p->ies = hlo_dtype_size(p->dt);
  p->narrow = p->dt == HLO_BF16 || p->dt == HLO_F16;
  p->G = conv_group_count(c);
  p->cin_g = c->rhs_dims[c->kernel_input_feature_dimension];
  p->cout = c->rhs_dims[c->kernel_output_feature_dimension];
  p->cout_g = p->cout / p->G;
  p->bout = c->result_dims[c->output_batch_dimension];
  int64_t ist_b = dim_stride(c->lhs_dims, R, c->input_batch_dimension);
  int64_t ist_f = dim_stride(c->lhs_dims, R, c->input_feature_dimension);
  p->in_group_off = c->batch_group_count > 1 ? p->bout * ist_b : p->cin_g * ist_f;
  p->nin = 2 + S;
  p->ind[0] = (in_dim){p->bout, 1, ist_b};
  p->ind[1] = (in_dim){p->cin_g, 1, ist_f};
  for (uint32_t s = 0; s < S; s++) {
    uint32_t d = c->input_spatial_dimensions[s];
    p->ind[2 + s] = (in_dim){c->lhs_dims[d], c->lhs_dilation[s], dim_stride(c->lhs_dims, R, d)};
  }
  /* M: the output's dims but the feature dim, in memory order */
  p->M = 1;
  for (uint32_t d = 0; d < R; d++) {
    if (d == c->output_feature_dimension) continue;
    axis a = {c->result_dims[d], 0, 1, 0};
    for (uint32_t s = 0; s < S; s++)
      if (c->output_spatial_dimensions[s] == d)
        a = (axis){c->result_dims[d], 2 + s, c->window_strides[s], -c->padding_low[s]};
    p->max[p->nm++] = a;
    p->M *= a.size;
  }
  p->row_out = c->output_feature_dimension == R - 1;
  p->blen = p->row_out ? p->M : dim_stride(c->result_dims, R, c->output_feature_dimension);
  p->nblocks = p->blen ? p->M / p->blen : 0;
  /* K: the kernel's dims but the output feature dim, in memory order */
  p->K = 1;
  for (uint32_t d = 0; d < R; d++) {
    if (d == c->kernel_output_feature_dimension) continue;
    axis a = {c->rhs_dims[d], 1, 1, 0};
    for (uint32_t s = 0; s < S; s++)
      if (c->kernel_spatial_dimensions[s] == d) {
        int64_t r = c->rhs_dilation[s], n = c->rhs_dims[d];
        a = c->window_reversal[s] ? (axis){n, 2 + s, -r, (n - 1) * r} : (axis){n, 2 + s, r, 0};
      }
    p->kax[p->nk++] = a;
    p->K *= a.size;
  }
  compact(p->max, &p->nm, p->q_base);
  compact(p->kax, &p->nk, p->q_base);
  uint32_t kof = c->kernel_output_feature_dimension;
  p->km = p->narrow ? KOF_PACK : kof == R - 1 ? KOF_INNER : kof == 0 ? KOF_OUTER : KOF_PACK;
  p->kpost = dim_stride(c->rhs_dims, R, kof);
  p->kpre = p->kpost ? p->K / p->kpost : 0;
  p->a_row = run_score(p, &p->kax[p->nk - 1]) >= run_score(p, &p->max[p->nm - 1]);
  /* chunks: one block's M (all of M when rows are output) times K, cut
   * down to the target, K only when a few hundred rows of it do not fit */
  int64_t E = (int64_t)(CPU_CONV_SCRATCH_TARGET / p->es);
  p->mc = p->blen;
  p->kc = p->K;
  if (p->blen > 0 && p->K > 0 && p->blen > E / p->K) {
    int64_t rows = p->blen < 256 ? p->blen : 256;
    if (p->K > E / rows) p->kc = E / rows > 0 ? E / rows : 1;
    p->mc = E / p->kc;
    if (p->mc < 1) p->mc = 1;
    if (p->mc > p->blen) p->mc = p->blen;
  }
  p->pack_bytes = p->km == KOF_PACK ? round64((size_t)(p->K * p->cout) * p->es) : 0;
  p->a_bytes = round64((size_t)(p->mc * p->kc) * p->es);
  p->c_bytes = p->narrow ? round64((size_t)(p->mc * p->cout_g) * p->es) : 0;
}

bool cpu_conv_takes(const backend_conv *c) {
  return conv_all_dtype(c, HLO_F32) || conv_all_dtype(c, HLO_F64) ||
         conv_all_dtype(c, HLO_BF16) || conv_all_dtype(c, HLO_F16);
}

size_t cpu_conv_im2col_scratch_bytes(const backend_conv *c) {
  if (!cpu_conv_takes(c) || conv_result_elements(c) == 0) return 0;
  plan p;
  make_plan(c, &p);
  if (p.K == 0) return 0;
  return p.pack_bytes + p.a_bytes + p.c_bytes;
}

/* ---------------------------------------------------------------- im2col */

static int64_t floor_div(int64_t a, int64_t b) { /* b > 0 */
  int64_t q = a / b;
  return (a % b != 0 && a < 0) ? q - 1 : q;
}

/* Whether position q (lhs-dilated coordinates) of dim d holds an input
 * element; its index in *idx. */
static inline bool pos_valid(const in_dim *d, int64_t q, int64_t *idx) {
  if (q < 0) return false;
  if (d->ldil == 1) {
    *idx = q;
    return q < d->size;
  }
  if (q % d->ldil) return false;
  *idx = q / d->ldil;
  return *idx < d->size;
}

/* The i in [0, len) whose positions q0 + i * step of dim d are inside
 * (lhs_dilation 1): [*lo, *hi). */
static void valid_range(const in_dim *d, int64_t q0, int64_t step, int64_t len, int64_t *lo,
                        int64_t *hi) {
  int64_t ql = q0 + (len - 1) * step;
  if (q0 >= 0 && q0 < d->size && ql >= 0 && ql < d->size) { /* the usual case */
    *lo = 0, *hi = len;
    return;
  }
  int64_t l, h;
  if (step > 0) {
    l = q0 >= 0 ? 0 : floor_div(-q0 + step - 1, step);
    h = q0 >= d->size ? 0 : floor_div(d->size - q0 + step - 1, step);
  } else if (step < 0) {
    int64_t s = -step;
    l = q0 < d->size ? 0 : floor_div(q0 - d->size + s, s);
    h = q0 < 0 ? 0 : q0 / s + 1;
  } else {
    l = 0;
    h = q0 >= 0 && q0 < d->size ? len : 0;
  }
  if (l > len) l = len;
  if (h > len) h = len;
  if (h < l) h = l;
  *lo = l, *hi = h;
}

/* dst[0..n) = src[0..n): short runs (a few features) are the common case,
 * where a memcpy call costs more than the copy; fixed-size memcpys become
 * vector moves. */
static inline void copy_float(float *restrict dst, const float *restrict src, int64_t n) {
  for (; n >= 16; n -= 16, dst += 16, src += 16) memcpy(dst, src, 64);
  for (; n >= 4; n -= 4, dst += 4, src += 4) memcpy(dst, src, 16);
  for (; n > 0; n--) *dst++ = *src++;
}

static inline void copy_double(double *restrict dst, const double *restrict src, int64_t n) {
  for (; n >= 8; n -= 8, dst += 8, src += 8) memcpy(dst, src, 64);
  for (; n >= 2; n -= 2, dst += 2, src += 2) memcpy(dst, src, 16);
  for (; n > 0; n--) *dst++ = *src++;
}

/* One 2-D block of A: len2 rows (lda apart) of len1 elements; element
 * (i2, i1) is the input at position q1 + i1*s1 of dim d1 and q2 + i2*s2 of
 * dim d2 (src has every other dim applied), zero outside. When d1 == d2
 * (`same`) the position is q1 + i1*s1 + i2*s2 of that one dim. */
#define DEFINE_BLOCK(NAME, T, S, LOAD, RUN)                                                \
  static void NAME(T *dst, int64_t lda, const S *src, const in_dim *d1, int64_t q1,       \
                   int64_t s1, int64_t len1, const in_dim *d2, int64_t q2, int64_t s2,    \
                   int64_t len2, bool same) {                                             \
    int64_t lo2 = 0, hi2 = len2, lo1 = 0, hi1 = len1;                                     \
    bool per_elem = d1->ldil != 1 || (!same && d2->ldil != 1);                            \
    if (!per_elem && !same) {                                                             \
      valid_range(d2, q2, s2, len2, &lo2, &hi2);                                          \
      valid_range(d1, q1, s1, len1, &lo1, &hi1);                                          \
    }                                                                                     \
    for (int64_t i2 = 0; i2 < len2; i2++) {                                               \
      T *row = dst + i2 * lda;                                                            \
      if (i2 < lo2 || i2 >= hi2) {                                                        \
        memset(row, 0, (size_t)len1 * sizeof(T));                                        \
        continue;                                                                         \
      }                                                                                   \
      const S *srow = src;                                                                \
      int64_t qq = q1, idx;                                                               \
      if (same) {                                                                         \
        qq += i2 * s2;                                                                    \
      } else if (!pos_valid(d2, q2 + i2 * s2, &idx)) {                                   \
        memset(row, 0, (size_t)len1 * sizeof(T));                                        \
        continue;                                                                         \
      } else {                                                                            \
        srow += idx * d2->stride;                                                         \
      }                                                                                   \
      if (per_elem) {                                                                     \
        for (int64_t i = 0; i < len1; i++)                                                \
          row[i] = pos_valid(d1, qq + i * s1, &idx) ? LOAD(srow[idx * d1->stride]) : (T)0; \
        continue;                                                                         \
      }                                                                                   \
      if (same) valid_range(d1, qq, s1, len1, &lo1, &hi1);                                \
      for (int64_t i = 0; i < lo1; i++) row[i] = (T)0;                                    \
      if (hi1 > lo1) {                                                                    \
        int64_t st = s1 * d1->stride;                                                     \
        const S *s0 = srow + (qq + lo1 * s1) * d1->stride;                                \
        if (st == 1)                                                                      \
          RUN(row + lo1, s0, hi1 - lo1);                                                  \
        else                                                                              \
          for (int64_t i = 0; i < hi1 - lo1; i++) row[lo1 + i] = LOAD(s0[i * st]);       \
      }                                                                                   \
      for (int64_t i = hi1; i < len1; i++) row[i] = (T)0;                                 \
    }                                                                                     \
  }
#define LOAD_SAME(x) (x)
#define LOAD_BF16(x) bf16_widen(x)
#define LOAD_F16(x) f16_to_f32(x)
static inline float bf16_widen(uint16_t b) {
  uint32_t u = (uint32_t)b << 16;
  float f;
  memcpy(&f, &u, 4);
  return f;
}
static inline void run_bf16(float *restrict dst, const uint16_t *restrict src, int64_t n) {
  for (int64_t i = 0; i < n; i++) dst[i] = bf16_widen(src[i]);
}
static inline void run_f16(float *restrict dst, const uint16_t *restrict src, int64_t n) {
  for (int64_t i = 0; i < n; i++) dst[i] = f16_to_f32(src[i]);
}
DEFINE_BLOCK(block_f32, float, float, LOAD_SAME, copy_float)
DEFINE_BLOCK(block_f64, double, double, LOAD_SAME, copy_double)
DEFINE_BLOCK(block_bf16, float, uint16_t, LOAD_BF16, run_bf16)
DEFINE_BLOCK(block_f16, float, uint16_t, LOAD_F16, run_f16)

/* A walk over a flat range of an axis list in runs along the last axis. */
typedef struct seg_walk {
  const axis *ax;
  uint32_t n;
  int64_t co[MAXR];
  int64_t x, end;
} seg_walk;

static void walk_start(seg_walk *w, const axis *ax, uint32_t n, int64_t x0, int64_t len) {
  w->ax = ax;
  w->n = n;
  w->x = x0;
  w->end = x0 + len;
  for (uint32_t i = n; i-- > 0;) {
    w->co[i] = x0 % ax[i].size;
    x0 /= ax[i].size;
  }
}

/* The next run: its length (0: done); coordinates at its start in w->co. */
static inline int64_t walk_len(const seg_walk *w) {
  if (w->x >= w->end) return 0;
  int64_t rest = w->ax[w->n - 1].size - w->co[w->n - 1];
  return rest < w->end - w->x ? rest : w->end - w->x;
}

static inline void walk_next(seg_walk *w, int64_t len) {
  w->x += len;
  w->co[w->n - 1] += len;
  for (uint32_t i = w->n; i-- > 0 && w->co[i] >= w->ax[i].size;) {
    w->co[i] = 0;
    if (i) w->co[i - 1]++;
  }
}

/* Adds the positions the axes of `w` (at its coordinates) give to q[]. */
static inline void add_positions(const seg_walk *w, int64_t *q) {
  for (uint32_t i = 0; i < w->n; i++) q[w->ax[i].in] += w->ax[i].cst + w->ax[i].coef * w->co[i];
}

/* Fills the rows [ms, me) of A, the chunk of M range [m0, ...) and K range
 * [k0, k0+klen), the input `in` already offset to the group. A is
 * [..][lda = klen] (a_row) or [klen][lda = the chunk's M length]. Blocks: a run along A's contiguous axis a1 (K's innermost
 * when a_row, else M's) times a run along the other side's innermost a2. */
static void im2col(const plan *p, const char *in, int64_t m0, int64_t ms, int64_t me,
                   int64_t k0, int64_t klen, char *a, int64_t lda) {
  const axis *a1 = p->a_row ? &p->kax[p->nk - 1] : &p->max[p->nm - 1];
  const axis *a2 = p->a_row ? &p->max[p->nm - 1] : &p->kax[p->nk - 1];
  uint32_t d1 = a1->in, d2 = a2->in;
  seg_walk mw, kw, kw0;
  walk_start(&kw0, p->kax, p->nk, k0, klen);
  for (walk_start(&mw, p->max, p->nm, ms, me - ms); walk_len(&mw); walk_next(&mw, walk_len(&mw))) {
    int64_t ml = walk_len(&mw), mloc = mw.x - m0;
    int64_t qm[MAXR];
    memcpy(qm, p->q_base, sizeof qm);
    add_positions(&mw, qm);
    for (kw = kw0; walk_len(&kw); walk_next(&kw, walk_len(&kw))) {
      int64_t kl = walk_len(&kw), kloc = kw.x - k0;
      int64_t q[MAXR];
      memcpy(q, qm, sizeof q);
      add_positions(&kw, q);
      int64_t len1 = p->a_row ? kl : ml, len2 = p->a_row ? ml : kl;
      int64_t dst0 = p->a_row ? mloc * lda + kloc : kloc * lda + mloc;
      /* the dims neither run moves: checked once for the block */
      int64_t off = 0;
      bool ok = true;
      for (uint32_t d = 0; d < p->nin && ok; d++) {
        if (d == d1 || d == d2) continue;
        int64_t idx;
        ok = pos_valid(&p->ind[d], q[d], &idx);
        if (ok) off += idx * p->ind[d].stride;
      }
      char *dst = a + (size_t)dst0 * p->es;
      if (!ok) {
        for (int64_t i2 = 0; i2 < len2; i2++)
          memset(dst + (size_t)(i2 * lda) * p->es, 0, (size_t)len1 * p->es);
        continue;
      }
      const in_dim *i1 = &p->ind[d1], *i2 = &p->ind[d2];
      bool same = d1 == d2;
      if (p->dt == HLO_F32)
        block_f32((float *)dst, lda, (const float *)in + off, i1, q[d1], a1->coef, len1, i2,
                  q[d2], a2->coef, len2, same);
      else if (p->dt == HLO_F64)
        block_f64((double *)dst, lda, (const double *)in + off, i1, q[d1], a1->coef, len1, i2,
                  q[d2], a2->coef, len2, same);
      else if (p->dt == HLO_BF16)
        block_bf16((float *)dst, lda, (const uint16_t *)in + off, i1, q[d1], a1->coef, len1, i2,
                   q[d2], a2->coef, len2, same);
      else
        block_f16((float *)dst, lda, (const uint16_t *)in + off, i1, q[d1], a1->coef, len1, i2,
                  q[d2], a2->coef, len2, same);
    }
  }
}

/* im2col of a whole chunk, spread over the thread pool by M ranges when
 * it is large enough to pay for the wake-up. */
typedef struct im2col_job {
  const plan *p;
  const char *in;
  int64_t m0, k0, klen, lda;
  char *a;
} im2col_job;

static void im2col_part(void *ctx, int64_t begin, int64_t end) {
  const im2col_job *j = ctx;
  im2col(j->p, j->in, j->m0, j->m0 + begin, j->m0 + end, j->k0, j->klen, j->a, j->lda);
}

static void im2col_chunk(const plan *p, const char *in, int64_t m0, int64_t mlen, int64_t k0,
                         int64_t klen, char *a) {
  im2col_job j = {p, in, m0, k0, klen, p->a_row ? klen : mlen, a};
  if (mlen * klen < ((int64_t)1 << 16)) {
    im2col_part(&j, 0, mlen);
    return;
  }
  thread_pool *tp = thread_pool_global();
  thread_pool_parallel_for(tp, mlen, 2 * (int64_t)thread_pool_num_threads(tp), im2col_part, &j);
}

/* Kernel [pre][cout][post] -> packed [pre*post][cout] (K x N), bf16 and
 * f16 widened to f32. */
static void pack_kernel(const plan *p, const char *k, char *out) {
  size_t es = p->es, ies = p->ies;
  for (int64_t a = 0; a < p->kpre; a++)
    for (int64_t o = 0; o < p->cout; o++) {
      const char *src = k + (size_t)((a * p->cout + o) * p->kpost) * ies;
      char *dst = out + (size_t)(a * p->kpost * p->cout + o) * es;
      for (int64_t b = 0; b < p->kpost; b++) {
        char *d = dst + (size_t)(b * p->cout) * es;
        if (!p->narrow) {
          memcpy(d, src + (size_t)b * es, es);
          continue;
        }
        uint16_t h;
        memcpy(&h, src + (size_t)b * 2, 2);
        float f = p->dt == HLO_BF16 ? bf16_widen(h) : f16_to_f32(h);
        memcpy(d, &f, 4);
      }
    }
}

/* Narrow results: the f32 chunk `cb` (rows x cols, row stride ldb) rounded
 * once into out (row stride ldo). */
static void store_narrow(const plan *p, const float *cb, int64_t rows, int64_t cols, int64_t ldb,
                         char *out, int64_t ldo) {
  for (int64_t r = 0; r < rows; r++) {
    uint16_t *o = (uint16_t *)(void *)(out + (size_t)(r * ldo) * 2);
    const float *c = cb + r * ldb;
    if (p->dt == HLO_BF16)
      for (int64_t i = 0; i < cols; i++) o[i] = f32_to_bf16(c[i]);
    else
      for (int64_t i = 0; i < cols; i++) o[i] = f32_to_f16(c[i]);
  }
}

/* C (m x n, ldc) = beta * C + op(A) * op(B), row-major, beta 0 or 1, through
 * the backend's one choice of library (gemm.h). */
static void gemm(const plan *p, bool ta, bool tb, int64_t m, int64_t n, int64_t k,
                 const char *a, int64_t lda, const char *b, int64_t ldb, bool accumulate,
                 char *c, int64_t ldc) {
  if (p->es == 4)
    cpu_sgemm(ta, tb, m, n, k, (const float *)a, lda, (const float *)b, ldb,
              accumulate ? 1.0f : 0.0f, (float *)c, ldc);
  else
    cpu_dgemm(ta, tb, m, n, k, (const double *)a, lda, (const double *)b, ldb,
              accumulate ? 1.0 : 0.0, (double *)c, ldc);
}

hlo_status cpu_conv_im2col(const backend_conv *c, const void *lhs, const void *rhs,
                           void *output, void *scratch) {
  if (!cpu_conv_takes(c))
    return status_at(HLO_UNIMPLEMENTED, &c->loc, "convolution on the cpu backend: element types "
                     "%s x %s -> %s are not supported (f32, f64, bf16 or f16, all alike)",
                     hlo_dtype_name(c->lhs_dtype), hlo_dtype_name(c->rhs_dtype),
                     hlo_dtype_name(c->result_dtype));
  int64_t nres = conv_result_elements(c);
  if (nres == 0) return NULL;
  plan p;
  make_plan(c, &p);
  if (p.K == 0) { /* an empty window or no input features: every sum is 0 (+0 bits) */
    memset(output, 0, (size_t)nres * p.ies);
    return NULL;
  }
  int64_t kld = p.km == KOF_OUTER ? p.K : p.cout;
  if (p.mc > INT_MAX || p.kc > INT_MAX || p.cout > INT_MAX || p.blen > INT_MAX || kld > INT_MAX)
    return status_at(HLO_INVALID_ARGUMENT, &c->loc, "convolution on the cpu backend: matrix "
                     "sizes (M %lld, K %lld, N %lld) are past BLAS's int", (long long)p.M,
                     (long long)p.K, (long long)p.cout);
  size_t es = p.es, ies = p.ies;
  char *pack = scratch, *abuf = (char *)scratch + p.pack_bytes, *cbuf = abuf + p.a_bytes;
  const char *kb = rhs;
  if (p.km == KOF_PACK) {
    pack_kernel(&p, rhs, pack);
    kb = pack;
  }
  const char *in = lhs;
  char *out = output;
  for (int64_t blk = 0; blk < p.nblocks; blk++)
    for (int64_t j0 = 0; j0 < p.blen; j0 += p.mc) {
      int64_t ml = p.blen - j0 < p.mc ? p.blen - j0 : p.mc, m0 = blk * p.blen + j0;
      for (int64_t g = 0; g < p.G; g++) {
        for (int64_t k0 = 0; k0 < p.K; k0 += p.kc) {
          int64_t kl = p.K - k0 < p.kc ? p.K - k0 : p.kc;
          im2col_chunk(&p, in + (size_t)(g * p.in_group_off) * ies, m0, ml, k0, kl, abuf);
          int64_t lda = p.a_row ? kl : ml;
          /* B's (K x N) slice: rows k0.., columns of group g */
          bool bt = p.km == KOF_OUTER; /* stored N x K */
          const char *bp = bt ? kb + (size_t)(g * p.cout_g * p.K + k0) * es
                              : kb + (size_t)(k0 * p.cout + g * p.cout_g) * es;
          /* narrow types: into the f32 chunk cbuf, rounded after the last K chunk */
          if (p.row_out) {
            char *cp = p.narrow ? cbuf : out + (size_t)(m0 * p.cout + g * p.cout_g) * es;
            gemm(&p, !p.a_row, bt, ml, p.cout_g, kl, abuf, lda, bp, kld, k0 > 0, cp,
                 p.narrow ? p.cout_g : p.cout);
          } else {
            char *cp = p.narrow ? cbuf
                                : out + (size_t)(blk * p.cout * p.blen + g * p.cout_g * p.blen +
                                                 j0) * es;
            gemm(&p, !bt, p.a_row, p.cout_g, ml, kl, bp, kld, abuf, lda, k0 > 0, cp,
                 p.narrow ? ml : p.blen);
          }
        }
        if (p.narrow && p.row_out)
          store_narrow(&p, (const float *)cbuf, ml, p.cout_g, p.cout_g,
                       out + (size_t)(m0 * p.cout + g * p.cout_g) * ies, p.cout);
        else if (p.narrow)
          store_narrow(&p, (const float *)cbuf, p.cout_g, ml, ml,
                       out + (size_t)(blk * p.cout * p.blen + g * p.cout_g * p.blen + j0) * ies,
                       p.blen);
      }
    }
  return NULL;
}

/* ------------------------------------------------------ the direct loop */

/* The interpreter's sums (interp/interp_conv.c), on raw buffers: for each
 * result element, the window positions in row-major order of the spatial
 * dims (those in padding or a dilation hole skipped), the kernel input
 * features innermost, each product added in the element type's accumulator
 * (float for f32 / bf16 / f16, double for f64; multiply, then add: no fused
 * multiply-add), rounded once. The same operations in the same order for
 * every element: the interpreter's bits. Faster than the interpreter's walk
 * by keeping the accumulators of up to DIRECT_BLOCK output features at once
 * (each still sees its own terms in the interpreter's order), so a window
 * position is decoded once for all of them and the innermost loop runs
 * along the kernel's output features: in runs of DIRECT_RUN with a constant
 * count where they are contiguous (vectorised at -O2; each lane is one
 * accumulator, so the order stays the interpreter's), and a lhs dilation
 * that is a power of two tested by mask and shift, not `%` and `/`
 * (group_norm_convT's transposed convolution: 31.5 -> 24.9 us;
 * bench/KERNELS.md, section 4). */
enum { DIRECT_BLOCK = 64, DIRECT_RUN = 8 };
#define DEFINE_DIRECT(NAME, T, ACC, LOAD, STORE)                                           \
  static void NAME(const backend_conv *c, const T *lhs, const T *rhs, T *out) {           \
    uint32_t R = c->rank, S = c->num_spatial;                                              \
    int64_t lst[MAXR], kst[MAXR], ost[MAXR], ksz[MAXR], odims[MAXR], idx[MAXR] = {0};      \
    uint32_t odim_of[MAXR], nod = 0; /* the result's dims but its feature dim */           \
    for (uint32_t d = 0; d < R; d++) {                                                     \
      lst[d] = dim_stride(c->lhs_dims, R, d);                                              \
      kst[d] = dim_stride(c->rhs_dims, R, d);                                              \
      ost[d] = dim_stride(c->result_dims, R, d);                                           \
      if (d != c->output_feature_dimension) odim_of[nod] = d, odims[nod++] = c->result_dims[d]; \
    }                                                                                      \
    int64_t kwin = 1;                                                                      \
    for (uint32_t s = 0; s < S; s++) {                                                     \
      ksz[s] = c->rhs_dims[c->kernel_spatial_dimensions[s]];                               \
      kwin *= ksz[s];                                                                      \
    }                                                                                      \
    int64_t cin = c->rhs_dims[c->kernel_input_feature_dimension];                          \
    int64_t cout = c->rhs_dims[c->kernel_output_feature_dimension];                        \
    int64_t G = conv_group_count(c), cout_g = cout / G;                                    \
    int64_t bout = c->result_dims[c->output_batch_dimension];                              \
    int64_t ls_f = lst[c->input_feature_dimension], ks_i = kst[c->kernel_input_feature_dimension]; \
    int64_t ks_o = kst[c->kernel_output_feature_dimension];                                \
    int64_t os_f = ost[c->output_feature_dimension];                                       \
    int64_t npos = conv_result_elements(c) / (cout ? cout : 1);                            \
    /* the window's parameters per spatial dim, out of the loops */                      \
    int64_t rd[MAXR], ldil[MAXR], lsz[MAXR], lsp[MAXR], ksp[MAXR], pbase[MAXR];            \
    int dsh[MAXR]; /* log2 of a power-of-two lhs dilation, else -1 */                      \
    bool rev[MAXR];                                                                        \
    for (uint32_t s = 0; s < S; s++) {                                                     \
      rd[s] = c->rhs_dilation[s], ldil[s] = c->lhs_dilation[s], rev[s] = c->window_reversal[s]; \
      dsh[s] = -1;                                                                         \
      for (int e = 0; e < 62 && dsh[s] < 0; e++)                                           \
        if (ldil[s] == (int64_t)1 << e) dsh[s] = e;                                        \
      lsz[s] = c->lhs_dims[c->input_spatial_dimensions[s]];                                \
      lsp[s] = lst[c->input_spatial_dimensions[s]];                                        \
      ksp[s] = kst[c->kernel_spatial_dimensions[s]];                                       \
    }                                                                                      \
    int64_t ls_b = lst[c->input_batch_dimension];                                          \
    ACC acc[DIRECT_BLOCK];                                                                 \
    for (int64_t pi = 0; pi < npos; pi++) {                                                \
      int64_t b = idx[c->output_batch_dimension], obase = 0;                               \
      for (uint32_t d = 0; d < R; d++) obase += idx[d] * ost[d];                           \
      for (uint32_t s = 0; s < S; s++)                                                     \
        pbase[s] = idx[c->output_spatial_dimensions[s]] * c->window_strides[s] -           \
                   c->padding_low[s];                                                      \
      for (int64_t g = 0; g < G; g++)                                                      \
        for (int64_t j0 = 0; j0 < cout_g; j0 += DIRECT_BLOCK) {                            \
          int64_t nj = cout_g - j0 < DIRECT_BLOCK ? cout_g - j0 : DIRECT_BLOCK;            \
          int64_t of0 = g * cout_g + j0;                                                   \
          int64_t lbatch = c->batch_group_count > 1 ? g * bout + b : b;                    \
          int64_t fbase = c->feature_group_count > 1 ? g * cin : 0;                        \
          for (int64_t j = 0; j < nj; j++) acc[j] = 0;                                     \
          int64_t kidx[MAXR] = {0};                                                        \
          for (int64_t w = 0; w < kwin; w++) {                                             \
            int64_t loff = lbatch * ls_b + fbase * ls_f, koff = of0 * ks_o;                \
            bool inside = true;                                                            \
            for (uint32_t s = 0; s < S && inside; s++) {                                   \
              int64_t k = kidx[s], kk = rev[s] ? ksz[s] - 1 - k : k;                       \
              int64_t pos = pbase[s] + kk * rd[s], dl = ldil[s];                           \
              int64_t q; /* pos / dl, when it divides */                                 \
              if (dl == 1) q = pos;                                                        \
              else if (pos < 0) q = -1;                                                    \
              else if (dsh[s] >= 0) q = pos & (dl - 1) ? -1 : pos >> dsh[s];               \
              else q = pos % dl ? -1 : pos / dl;                                           \
              if ((uint64_t)q >= (uint64_t)lsz[s])                                         \
                inside = false;                                                            \
              else                                                                         \
                loff += q * lsp[s];                                                        \
              koff += k * ksp[s];                                                          \
            }                                                                              \
            for (int64_t ci = 0; inside && ci < cin; ci++) {                               \
              ACC lv = (ACC)LOAD(lhs[loff + ci * ls_f]);                                   \
              const T *kr = rhs + koff + ci * ks_i;                                        \
              int64_t j = 0;                                                               \
              if (ks_o == 1) /* runs of DIRECT_RUN: a constant count, vectorised */        \
                for (; j + DIRECT_RUN <= nj; j += DIRECT_RUN)                              \
                  for (int64_t r = 0; r < DIRECT_RUN; r++) {                               \
                    ACC prod = lv * (ACC)LOAD(kr[j + r]);                                  \
                    acc[j + r] = acc[j + r] + prod;                                        \
                  }                                                                        \
              for (; j < nj; j++) {                                                        \
                ACC prod = lv * (ACC)LOAD(kr[j * ks_o]);                                   \
                acc[j] = acc[j] + prod;                                                    \
              }                                                                            \
            }                                                                              \
            for (uint32_t s = S; s-- > 0;) { /* next window position */                    \
              if (++kidx[s] < ksz[s]) break;                                               \
              kidx[s] = 0;                                                                 \
            }                                                                              \
          }                                                                                \
          for (int64_t j = 0; j < nj; j++) out[obase + (of0 + j) * os_f] = STORE(acc[j]);  \
        }                                                                                  \
      for (uint32_t i = nod; i-- > 0;) { /* next result position */                        \
        if (++idx[odim_of[i]] < odims[i]) break;                                           \
        idx[odim_of[i]] = 0;                                                               \
      }                                                                                    \
    }                                                                                      \
  }
#define STORE_SAME(x) (x)
DEFINE_DIRECT(direct_f32, float, float, LOAD_SAME, STORE_SAME)
DEFINE_DIRECT(direct_f64, double, double, LOAD_SAME, STORE_SAME)
DEFINE_DIRECT(direct_bf16, uint16_t, float, LOAD_BF16, f32_to_bf16)
DEFINE_DIRECT(direct_f16, uint16_t, float, LOAD_F16, f32_to_f16)

/* The multiply-adds the direct loop does: conv_macs less the window
 * positions that fall into lhs-dilation holes (skipped; about 1 -
 * 1/lhs_dilation of them along each spatial dim). */
static double direct_macs(const backend_conv *c) {
  double m = conv_macs(c);
  for (uint32_t s = 0; s < c->num_spatial; s++) m /= (double)c->lhs_dilation[s];
  return m;
}

bool cpu_conv_direct_takes(const backend_conv *c) {
  if (!cpu_conv_takes(c)) return false;
  double macs = direct_macs(c);
  if (macs <= (double)CPU_CONV_DIRECT_MAX_MACS) return true;
  /* a small transposed (lhs-dilated) convolution, whose im2col matrix
   * would be mostly dilation holes and outgrow its result: the loop skips
   * the holes and needs no scratch (undilated ones are faster by im2col:
   * cnn_sgd_step's 41K-MAC convolutions took twice as long by the loop) */
  bool dilated = false;
  for (uint32_t s = 0; s < c->num_spatial; s++) dilated |= c->lhs_dilation[s] > 1;
  return dilated && macs <= (double)CPU_CONV_DIRECT_MAX_MACS * 8 &&
         cpu_conv_im2col_scratch_bytes(c) >
             (size_t)conv_result_elements(c) * hlo_dtype_size(c->result_dtype);
}

hlo_status cpu_conv_direct(const backend_conv *c, const void *lhs, const void *rhs,
                           void *output) {
  if (!cpu_conv_takes(c))
    return status_at(HLO_UNIMPLEMENTED, &c->loc, "convolution on the cpu backend: element types "
                     "%s x %s -> %s are not supported", hlo_dtype_name(c->lhs_dtype),
                     hlo_dtype_name(c->rhs_dtype), hlo_dtype_name(c->result_dtype));
  switch (c->result_dtype) {
  case HLO_F32: direct_f32(c, lhs, rhs, output); break;
  case HLO_F64: direct_f64(c, lhs, rhs, output); break;
  case HLO_BF16: direct_bf16(c, lhs, rhs, output); break;
  default: direct_f16(c, lhs, rhs, output); break;
  }
  return NULL;
}

/* ------------------------------------------------------------- dispatch */

size_t cpu_conv_scratch_bytes(const backend_conv *c) {
  if (cpu_conv_direct_takes(c)) return 0;
  if (cpu_conv_onednn_takes(c)) return cpu_conv_onednn_scratch_bytes(c);
  return cpu_conv_im2col_scratch_bytes(c);
}

hlo_status cpu_conv(const backend_conv *c, const void *lhs, const void *rhs, void *output,
                    void *scratch) {
  if (cpu_conv_direct_takes(c)) return cpu_conv_direct(c, lhs, rhs, output);
  if (cpu_conv_onednn_takes(c)) {
    hlo_status st = cpu_conv_onednn(c, lhs, rhs, output, scratch);
    if (!st) return NULL;
    hlo_status_free(st);
    /* (never seen) a primitive that fails to run: im2col, with scratch of
     * its own when it needs more than the caller gave for oneDNN */
    size_t need = cpu_conv_im2col_scratch_bytes(c), have = cpu_conv_onednn_scratch_bytes(c);
    if (need > have) {
      void *own = aligned_alloc(64, (need + 63) & ~(size_t)63);
      if (!own) return status_at(HLO_RESOURCE_EXHAUSTED, &c->loc, "out of memory for %zu bytes of "
                                 "convolution scratch", need);
      st = cpu_conv_im2col(c, lhs, rhs, output, own);
      free(own);
      return st;
    }
  }
  return cpu_conv_im2col(c, lhs, rhs, output, scratch);
}
