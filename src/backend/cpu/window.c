/* window.c — reduce_window and select_and_scatter on the CPU (window.h).
 *
 * Layout of the work. The operand's trailing dims that the window leaves
 * alone (window 1, stride 1, no padding, no base dilation) are merged into
 * one contiguous run of V elements: a max-pool in NHWC has V = C. The dim
 * before that run is the lane dim L (a dummy dim of size 1 when every dim
 * is left alone); the dims before L are the outer dims. A result row is
 * one index of the outer dims: O_L x V elements, contiguous in the result.
 *
 * reduce_window, per row: the row is set to init; then for each window
 * position in row-major order (outer window dims, then the lane dim's),
 * the whole row folds one element in: its position in the outer dims
 * decides, once per row and position, whether the row reads operand data
 * or the init value (padding / dilation hole); along L the data lie in one
 * segment [jlo, jhi) of lanes computed from the bounds (no test or
 * division per element), read with stride window_strides[L] * V, and the
 * lanes outside it fold init. So every result element is the interpreter's
 * fold, in its order: the same bits. Folds of init are skipped where they
 * cannot change the accumulator (maximum, minimum, and, or, i1 ops; add of
 * +0 or integer 0; multiply by 1), which is most real programs. Base
 * dilation along L (rare) takes a per-lane test. With V = 1 (NCHW pools:
 * short rows) a lane takes all its window positions along L in one pass
 * (fold_win), and when init folds are skipped the rows of the last outer
 * dim go by blocks (rw_blocks).
 *
 * select_and_scatter, per source row, in blocks of at most LANES lanes: a
 * select pass (per lane, the selected value and its window position, the
 * first valid position starting it, each next one replacing it unless
 * select(selected, current)), then a scatter pass (for each window
 * position, the lanes that selected it add their source element into the
 * result there; where windows overlap along no dim, the result elements are
 * written without being read, and the initial fill is skipped when the
 * windows tile the operand). Rows run in row-major order, so every result
 * element receives its scatters in row-major source order, as in the
 * interpreter, as long as two lanes of one block never reach one result
 * element; when windows overlap along L (stride < window) they may, and the
 * scatter then goes lane by lane in source order through a table of the
 * window positions' offsets (a block is one L index when the window has
 * more than KMAX positions).
 *
 * Threads: reduce_window's rows are independent: spread over hlo's pool
 * when the work (result elements x window size) passes WORK_MIN;
 * select_and_scatter's rows are spread by their outermost index when
 * windows do not overlap along dim 0 (stride >= window there; the batch
 * dim of a pooling layer), else run in order on the caller.
 *
 * Element ops are the interpreter's: floats narrower than f64 computed in
 * f32 and rounded to the type per step (bf16 / f16; the f32 result of an
 * add / multiply rounded again equals the interpreter's double-computed
 * one rounded once, since f32 has more than 2p + 1 bits for both), maximum
 * and minimum with NaN propagated and +0 > -0, integer add / multiply
 * wrapping, i1 add = or, multiply = and, maximum = or, minimum = and. */
#include "backend/cpu/window.h"
#include <limits.h>
#include <stdint.h>
#include <string.h>
#include "ir/element.h"
#include "support/float.h"
#include "support/status.h"
#include "support/thread_pool.h"

/* The hot loops must vectorize: -O2 of GCC 12 keeps loops of unknown trip
 * count scalar (its "very cheap" cost model), and a float op feeding a
 * select is not if-converted while it may trap (no trap is enabled: the
 * results are the same IEEE operations either way). */
#if defined(__GNUC__) && !defined(__clang__)
#pragma GCC optimize("tree-vectorize", "vect-cost-model=dynamic", "no-trapping-math")
#endif

/* The loops of each element type are compiled for AVX-512, AVX2 and the
 * baseline, the best one the CPU has picked at load time (GCC's function
 * multi-versioning: an ifunc); the baseline alone under the sanitizers,
 * whose run-time starts after ifunc resolvers run. fold_win, whose rows
 * are short (an NCHW pool's output width), stops at AVX2: 16-float vectors
 * leave a 14-lane row to the scalar remainder (measured: bench/WINDOW.md). */
#if defined(__GNUC__) && !defined(__clang__) && defined(__x86_64__) && \
    !defined(__SANITIZE_ADDRESS__) && !defined(__SANITIZE_THREAD__)
#define CLONES __attribute__((target_clones("avx512f", "avx2", "default")))
#define CLONES_SHORT __attribute__((target_clones("avx2", "default")))
#else
#define CLONES
#define CLONES_SHORT
#endif

/* LANES: lanes of a select_and_scatter block; SEGMAX: window sizes along
 * the lane dim whose lane segments are tabled; KMAX: window sizes whose
 * positions' offsets are tabled (select_and_scatter, overlapping windows
 * along the lane dim) */
enum { MAXR = BACKEND_WINDOW_MAX_RANK, LANES = 256, SEGMAX = 64, KMAX = 1024 };

/* Work (result elements x window size) under which one thread runs. */
#define WORK_MIN ((int64_t)1 << 15)

/* ------------------------------------------------------- element ops */

static inline float max_f32(float a, float b) {
  uint32_t ua, ub, uz;
  float z;
  memcpy(&ua, &a, 4);
  memcpy(&ub, &b, 4);
  uz = ua & ub; /* equal values: +0 over -0 */
  memcpy(&z, &uz, 4);
  float r = a > b ? a : b;
  r = a == b ? z : r;
  return a != a ? a : r;
}
static inline float min_f32(float a, float b) {
  uint32_t ua, ub, uz;
  float z;
  memcpy(&ua, &a, 4);
  memcpy(&ub, &b, 4);
  uz = ua | ub; /* equal values: -0 over +0 */
  memcpy(&z, &uz, 4);
  float r = a < b ? a : b;
  r = a == b ? z : r;
  return a != a ? a : r;
}
static inline double max_f64(double a, double b) {
  uint64_t ua, ub, uz;
  double z;
  memcpy(&ua, &a, 8);
  memcpy(&ub, &b, 8);
  uz = ua & ub;
  memcpy(&z, &uz, 8);
  double r = a > b ? a : b;
  r = a == b ? z : r;
  return a != a ? a : r;
}
static inline double min_f64(double a, double b) {
  uint64_t ua, ub, uz;
  double z;
  memcpy(&ua, &a, 8);
  memcpy(&ub, &b, 8);
  uz = ua | ub;
  memcpy(&z, &uz, 8);
  double r = a < b ? a : b;
  r = a == b ? z : r;
  return a != a ? a : r;
}

/* Binary ops on computation values of C type T. */
#define F_ADD(T, a, b) ((a) + (b))
#define F_MUL(T, a, b) ((a) * (b))
#define F32_MAX(T, a, b) max_f32(a, b)
#define F32_MIN(T, a, b) min_f32(a, b)
#define F64_MAX(T, a, b) max_f64(a, b)
#define F64_MIN(T, a, b) min_f64(a, b)
#define I_ADD(T, a, b) ((T)((uint64_t)(a) + (uint64_t)(b))) /* wraps */
#define I_MUL(T, a, b) ((T)((uint64_t)(a) * (uint64_t)(b)))
#define I_MAX(T, a, b) ((a) > (b) ? (a) : (b))
#define I_MIN(T, a, b) ((a) < (b) ? (a) : (b))
#define I_AND(T, a, b) ((T)((a) & (b)))
#define I_OR(T, a, b) ((T)((a) | (b)))

#define SAME(x) (x)

/* One element type's loops. T: storage, W: computation type, LD / ST:
 * storage <-> computation, then the six reducers (unused ones: any). */
typedef struct wops {
  /* d[j*V + v] = op(d[j*V + v], s[j*js + v]) for j < nj, v < V */
  void (*fold)(void *d, const void *s, int64_t nj, int64_t V, int64_t js, backend_reducer r);
  /* d[i] = op(d[i], *init) for i < n */
  void (*fold_init)(void *d, const void *init, int64_t n, backend_reducer r);
  /* d[j] = op(...op(d[j], x[j*js]), ..., x[j*js + (kn-1)*wd]) for j < nj:
   * kn consecutive window positions along the lane dim at once (V = 1); on
   * nm rows, row m at d + m*dstr, x + m*xstr */
  void (*fold_win)(void *d, const void *x, int64_t nm, int64_t dstr, int64_t xstr, int64_t nj,
                   int64_t js, int64_t kn, int64_t wd, backend_reducer r);
  /* lanes i = j*vb + v (j < nj, v < vb) against x[j*js + v]: replace the
   * selected value sv[i] and its position idx[i] by (x, k) when idx[i] < 0
   * or !(sv[i] DIR x) */
  void (*select)(void *sv, int32_t *idx, const void *x, int64_t nj, int64_t vb, int64_t js,
                 int32_t k, backend_select dir);
  /* lanes with idx[j*vb + v] == k: r[j*rjs + v] = op(r[j*rjs + v], s[j*sjs + v]) */
  void (*scatter)(void *r, const void *s, const int32_t *idx, int64_t nj, int64_t vb,
                  int64_t rjs, int64_t sjs, int32_t k, backend_reducer red);
  /* lanes in order (j, then v) with idx[i] >= 0 (i = j*vb + v):
   * r[kofs[idx[i]] + j*rjs + v] = op(that, s[j*sjs + v]) */
  void (*scatter_lanes)(void *r, const void *s, const int32_t *idx, const int64_t *kofs,
                        int64_t nj, int64_t vb, int64_t rjs, int64_t sjs, backend_reducer red);
  /* scatter where every result element is reached by one lane and position
   * at most, so holds init: r[j*rjs + v] = idx == k ? op(*init, s[j*sjs + v])
   * : *init (written, not read) */
  void (*scatter_direct)(void *r, const void *s, const int32_t *idx, const void *init,
                         int64_t nj, int64_t vb, int64_t rjs, int64_t sjs, int32_t k,
                         backend_reducer red);
} wops;

#define FOLD_LOOP(T, W, LD, ST, OP)                                                                      \
  do {                                                                                     \
    if (V == 1 && js == 1) {                                                               \
      for (int64_t j = 0; j < nj; j++) d[j] = ST(OP(T, LD(d[j]), LD(s[j])));               \
    } else if (V == 1) {                                                                   \
      for (int64_t j = 0; j < nj; j++) d[j] = ST(OP(T, LD(d[j]), LD(s[j * js])));          \
    } else {                                                                               \
      for (int64_t j = 0; j < nj; j++) {                                                   \
        T *restrict dj = d + j * V;                                                        \
        const T *restrict sj = s + j * js;                                                 \
        for (int64_t v = 0; v < V; v++) dj[v] = ST(OP(T, LD(dj[v]), LD(sj[v])));           \
      }                                                                                    \
    }                                                                                      \
  } while (0)

#define INIT_LOOP(T, W, LD, ST, OP)                                                                      \
  do {                                                                                     \
    for (int64_t i = 0; i < n; i++) d[i] = ST(OP(T, LD(d[i]), iv));                        \
  } while (0)

#define SEL_LOOP(T, W, LD, CMP)                                                                      \
  do {                                                                                     \
    if (vb == 1) {                                                                         \
      for (int64_t j = 0; j < nj; j++) {                                                   \
        W c = LD(x[j * js]), sel = LD(sv[j]);                                              \
        bool rep = (idx[j] < 0) | !(sel CMP c);                                            \
        sv[j] = rep ? x[j * js] : sv[j];                                                   \
        idx[j] = rep ? k : idx[j];                                                         \
      }                                                                                    \
      break;                                                                               \
    }                                                                                      \
    for (int64_t j = 0; j < nj; j++) {                                                     \
      T *restrict svj = sv + j * vb;                                                       \
      int32_t *restrict ij = idx + j * vb;                                                 \
      const T *restrict xj = x + j * js;                                                   \
      for (int64_t v = 0; v < vb; v++) {                                                   \
        W c = LD(xj[v]), sel = LD(svj[v]);                                                 \
        bool rep = (ij[v] < 0) | !(sel CMP c);                                             \
        svj[v] = rep ? xj[v] : svj[v];                                                     \
        ij[v] = rep ? k : ij[v];                                                           \
      }                                                                                    \
    }                                                                                      \
  } while (0)

/* (every lane in the segment is stored: the ones not selecting k get their
 * own value back, so the loop has no branch; see the threads note above
 * for why no other thread touches them) */
#define SC_LOOP(T, W, LD, ST, OP)                                                                        \
  do {                                                                                     \
    if (vb == 1) {                                                                         \
      for (int64_t j = 0; j < nj; j++)                                                     \
        if (idx[j] == k) r[j * rjs] = ST(OP(T, LD(r[j * rjs]), LD(s[j * sjs])));           \
      break;                                                                               \
    }                                                                                      \
    for (int64_t j = 0; j < nj; j++) {                                                     \
      T *restrict rj = r + j * rjs;                                                        \
      const T *restrict sj = s + j * sjs;                                                  \
      const int32_t *restrict ij = idx + j * vb;                                           \
      for (int64_t v = 0; v < vb; v++) {                                                   \
        T nv = ST(OP(T, LD(rj[v]), LD(sj[v])));                                            \
        rj[v] = ij[v] == k ? nv : rj[v];                                                   \
      }                                                                                    \
    }                                                                                      \
  } while (0)

#define SCL_LOOP(T, W, LD, ST, OP)                                                         \
  do {                                                                                     \
    for (int64_t j = 0; j < nj; j++)                                                       \
      for (int64_t v = 0; v < vb; v++) {                                                   \
        int32_t kk = idx[j * vb + v];                                                      \
        if (kk < 0) continue;                                                              \
        T *e = r + kofs[kk] + j * rjs + v;                                                 \
        *e = ST(OP(T, LD(*e), LD(s[j * sjs + v])));                                        \
      }                                                                                    \
  } while (0)

#define SCD_LOOP(T, W, LD, ST, OP)                                                         \
  do {                                                                                     \
    for (int64_t j = 0; j < nj; j++) {                                                     \
      T *restrict rj = r + j * rjs;                                                        \
      const T *restrict sj = s + j * sjs;                                                  \
      const int32_t *restrict ij = idx + j * vb;                                           \
      for (int64_t v = 0; v < vb; v++) {                                                   \
        T nv = ST(OP(T, iv, LD(sj[v])));                                                   \
        rj[v] = ij[v] == k ? nv : it;                                                      \
      }                                                                                    \
    }                                                                                      \
  } while (0)

#define WIN_BODY(T, W, LD, ST, OP, JS, WD, KN)                                            \
  for (int64_t j = 0; j < nj; j++) {                                                       \
    W a = LD(d[j]);                                                                        \
    for (int64_t t = 0; t < (KN); t++) a = LD(ST(OP(T, a, LD(x[j * (JS) + t * (WD)]))));   \
    d[j] = ST(a);                                                                          \
  }
/* written out for 2 and 3 positions (a loop, even of constant count, is
 * left scalar) */
#define WIN_BODY2(T, W, LD, ST, OP, JS)                                                    \
  for (int64_t j = 0; j < nj; j++) {                                                       \
    W a = LD(ST(OP(T, LD(d[j]), LD(x[j * (JS)]))));                                        \
    d[j] = ST(OP(T, a, LD(x[j * (JS) + 1])));                                              \
  }
#define WIN_BODY3(T, W, LD, ST, OP, JS)                                                    \
  for (int64_t j = 0; j < nj; j++) {                                                       \
    W a = LD(ST(OP(T, LD(d[j]), LD(x[j * (JS)]))));                                        \
    a = LD(ST(OP(T, a, LD(x[j * (JS) + 1]))));                                             \
    d[j] = ST(OP(T, a, LD(x[j * (JS) + 2])));                                              \
  }
/* (constant strides and counts for the common pools: the loads become
 * vector loads and shuffles instead of gathers) */
#define WIN_LOOP(T, W, LD, ST, OP)                                                         \
  do {                                                                                     \
    if (js == 2 && wd == 1 && kn == 2) {                                                   \
      WIN_BODY2(T, W, LD, ST, OP, 2)                                                       \
    } else if (js == 2 && wd == 1 && kn == 3) {                                            \
      WIN_BODY3(T, W, LD, ST, OP, 2)                                                       \
    } else if (js == 1 && wd == 1 && kn == 2) {                                            \
      WIN_BODY2(T, W, LD, ST, OP, 1)                                                       \
    } else if (js == 1 && wd == 1 && kn == 3) {                                            \
      WIN_BODY3(T, W, LD, ST, OP, 1)                                                       \
    } else {                                                                               \
      WIN_BODY(T, W, LD, ST, OP, js, wd, kn)                                               \
    }                                                                                      \
  } while (0)

#define SWITCH_RED(red, LOOP, T, W, LD, ST, ADD, MAX, MIN, MUL, AND, OR)                                 \
  switch (red) {                                                                           \
  case BACKEND_REDUCER_ADD: LOOP(T, W, LD, ST, ADD); break;                                              \
  case BACKEND_REDUCER_MAX: LOOP(T, W, LD, ST, MAX); break;                                              \
  case BACKEND_REDUCER_MIN: LOOP(T, W, LD, ST, MIN); break;                                              \
  case BACKEND_REDUCER_MUL: LOOP(T, W, LD, ST, MUL); break;                                              \
  case BACKEND_REDUCER_AND: LOOP(T, W, LD, ST, AND); break;                                              \
  case BACKEND_REDUCER_OR: LOOP(T, W, LD, ST, OR); break;                                                \
  }

#define DEFINE_OPS(SUF, T, W, LD, ST, ADD, MAX, MIN, MUL, AND, OR)                         \
  CLONES static void fold_##SUF(void *dv, const void *sv_, int64_t nj, int64_t V, int64_t js,    \
                         backend_reducer red) {                                            \
    T *restrict d = dv;                                                                    \
    const T *restrict s = sv_;                                                             \
    SWITCH_RED(red, FOLD_LOOP, T, W, LD, ST, ADD, MAX, MIN, MUL, AND, OR)                                \
  }                                                                                        \
  CLONES_SHORT static void fold_win_##SUF(void *dv, const void *xv, int64_t nm, int64_t dstr, \
                                          int64_t xstr, int64_t nj, int64_t js, int64_t kn, \
                                          int64_t wd, backend_reducer red) {               \
    for (int64_t m = 0; m < nm; m++) {                                                     \
      T *restrict d = (T *)dv + m * dstr;                                                  \
      const T *restrict x = (const T *)xv + m * xstr;                                      \
      SWITCH_RED(red, WIN_LOOP, T, W, LD, ST, ADD, MAX, MIN, MUL, AND, OR)                 \
    }                                                                                      \
  }                                                                                        \
  CLONES static void fold_init_##SUF(void *dv, const void *init, int64_t n, backend_reducer red) { \
    T *restrict d = dv;                                                                    \
    const W iv = LD(*(const T *)init);                                                     \
    SWITCH_RED(red, INIT_LOOP, T, W, LD, ST, ADD, MAX, MIN, MUL, AND, OR)                                \
  }                                                                                        \
  CLONES static void select_##SUF(void *svv, int32_t *restrict idx, const void *xv, int64_t nj,   \
                           int64_t vb, int64_t js, int32_t k, backend_select dir) {        \
    T *restrict sv = svv;                                                                  \
    const T *restrict x = xv;                                                              \
    switch (dir) {                                                                         \
    case BACKEND_SELECT_GE: SEL_LOOP(T, W, LD, >=); break;                                           \
    case BACKEND_SELECT_GT: SEL_LOOP(T, W, LD, >); break;                                            \
    case BACKEND_SELECT_LE: SEL_LOOP(T, W, LD, <=); break;                                           \
    case BACKEND_SELECT_LT: SEL_LOOP(T, W, LD, <); break;                                            \
    }                                                                                      \
  }                                                                                        \
  CLONES static void scatter_##SUF(void *rv, const void *sv_, const int32_t *restrict idx,       \
                            int64_t nj, int64_t vb, int64_t rjs, int64_t sjs, int32_t k,   \
                            backend_reducer red) {                                         \
    T *restrict r = rv;                                                                    \
    const T *restrict s = sv_;                                                             \
    SWITCH_RED(red, SC_LOOP, T, W, LD, ST, ADD, MAX, MIN, MUL, AND, OR)                                  \
  }                                                                                        \
  CLONES static void scatter_lanes_##SUF(void *rv, const void *sv_, const int32_t *idx,           \
                                  const int64_t *kofs, int64_t nj, int64_t vb, int64_t rjs, \
                                  int64_t sjs, backend_reducer red) {                      \
    T *r = rv;                                                                             \
    const T *s = sv_;                                                                      \
    SWITCH_RED(red, SCL_LOOP, T, W, LD, ST, ADD, MAX, MIN, MUL, AND, OR)                   \
  }                                                                                        \
  CLONES static void scatter_direct_##SUF(void *rv, const void *sv_, const int32_t *restrict idx, \
                                   const void *init, int64_t nj, int64_t vb, int64_t rjs,  \
                                   int64_t sjs, int32_t k, backend_reducer red) {          \
    T *restrict r = rv;                                                                    \
    const T *restrict s = sv_;                                                             \
    const T it = *(const T *)init;                                                         \
    const W iv = LD(it);                                                                   \
    SWITCH_RED(red, SCD_LOOP, T, W, LD, ST, ADD, MAX, MIN, MUL, AND, OR)                   \
  }                                                                                        \
  static const wops ops_##SUF = {fold_##SUF, fold_init_##SUF, fold_win_##SUF, select_##SUF, \
                                 scatter_##SUF, scatter_lanes_##SUF, scatter_direct_##SUF};

static inline float ld_bf16(uint16_t b) {
  uint32_t u = (uint32_t)b << 16;
  float f;
  memcpy(&f, &u, 4);
  return f;
}

DEFINE_OPS(f32, float, float, SAME, SAME, F_ADD, F32_MAX, F32_MIN, F_MUL, F_ADD, F_ADD)
DEFINE_OPS(f64, double, double, SAME, SAME, F_ADD, F64_MAX, F64_MIN, F_MUL, F_ADD, F_ADD)
DEFINE_OPS(bf16, uint16_t, float, ld_bf16, f32_to_bf16, F_ADD, F32_MAX, F32_MIN, F_MUL, F_ADD,
           F_ADD)
DEFINE_OPS(f16, uint16_t, float, f16_to_f32, f32_to_f16, F_ADD, F32_MAX, F32_MIN, F_MUL, F_ADD,
           F_ADD)
DEFINE_OPS(i8, int8_t, int8_t, SAME, SAME, I_ADD, I_MAX, I_MIN, I_MUL, I_AND, I_OR)
DEFINE_OPS(i16, int16_t, int16_t, SAME, SAME, I_ADD, I_MAX, I_MIN, I_MUL, I_AND, I_OR)
DEFINE_OPS(i32, int32_t, int32_t, SAME, SAME, I_ADD, I_MAX, I_MIN, I_MUL, I_AND, I_OR)
DEFINE_OPS(i64, int64_t, int64_t, SAME, SAME, I_ADD, I_MAX, I_MIN, I_MUL, I_AND, I_OR)
DEFINE_OPS(u8, uint8_t, uint8_t, SAME, SAME, I_ADD, I_MAX, I_MIN, I_MUL, I_AND, I_OR)
DEFINE_OPS(u16, uint16_t, uint16_t, SAME, SAME, I_ADD, I_MAX, I_MIN, I_MUL, I_AND, I_OR)
DEFINE_OPS(u32, uint32_t, uint32_t, SAME, SAME, I_ADD, I_MAX, I_MIN, I_MUL, I_AND, I_OR)
DEFINE_OPS(u64, uint64_t, uint64_t, SAME, SAME, I_ADD, I_MAX, I_MIN, I_MUL, I_AND, I_OR)
/* i1 (one byte, 0 or 1): add = or, multiply = and, maximum = or, minimum = and */
DEFINE_OPS(i1, uint8_t, uint8_t, SAME, SAME, I_OR, I_OR, I_AND, I_AND, I_AND, I_OR)

static const wops *ops_for(hlo_dtype t) {
  switch (t) {
  case HLO_F32: return &ops_f32;
  case HLO_F64: return &ops_f64;
  case HLO_BF16: return &ops_bf16;
  case HLO_F16: return &ops_f16;
  case HLO_I1: return &ops_i1;
  case HLO_I8: return &ops_i8;
  case HLO_I16: return &ops_i16;
  case HLO_I32: return &ops_i32;
  case HLO_I64: return &ops_i64;
  case HLO_UI8: return &ops_u8;
  case HLO_UI16: return &ops_u16;
  case HLO_UI32: return &ops_u32;
  case HLO_UI64: return &ops_u64;
  default: return NULL;
  }
}

bool cpu_window_takes(const backend_window *w) {
  if (!ops_for(w->dtype) || w->rank > MAXR) return false;
  hlo_dtype_class cls = dtype_class(w->dtype);
  if (cls == HLO_CLASS_FLOAT &&
      (w->reducer == BACKEND_REDUCER_AND || w->reducer == BACKEND_REDUCER_OR))
    return false;
  if ((unsigned)w->reducer > BACKEND_REDUCER_OR || (unsigned)w->select > BACKEND_SELECT_LT)
    return false;
  int64_t ws = window_size(w);
  return ws >= 0 && ws < INT32_MAX;
}

/* -------------------------------------------------------------- plan */

typedef struct plan {
  size_t es;                      /* bytes of an element */
  const wops *ops;
  uint32_t nd;                    /* outer dims */
  /* outer dim q: output size, operand size, window, stride, window and
   * base dilation, padding low, operand stride (elements) */
  int64_t o[MAXR], x[MAXR], k[MAXR], s[MAXR], wd[MAXR], bd[MAXR], pl[MAXR], xst[MAXR];
  int64_t oL, xL, kL, sL, wdL, bdL, plL; /* the lane dim, likewise */
  int64_t V;                      /* the merged trailing run */
  int64_t rows, row_out;          /* outer output indices; O_L * V */
  int64_t wouter;                 /* window positions over the outer dims */
  /* lane window position kl < SEGMAX: the lanes [seg_lo, seg_hi) of
   * [0, O_L) that read operand data (base dilation 1 along L) */
  int64_t seg_lo[SEGMAX], seg_hi[SEGMAX];
} plan;

static int64_t ceil_div(int64_t a, int64_t b) { /* a >= 0, b > 0 */
  return a / b + (a % b != 0);
}

static bool passthrough(const backend_window *w, uint32_t d) {
  return w->window_dimensions[d] == 1 && w->window_strides[d] == 1 && w->padding_low[d] == 0 &&
         w->padding_high[d] == 0 && w->base_dilations[d] == 1;
}

static void make_plan(const backend_window *w, plan *p) {
  memset(p, 0, sizeof *p);
  uint32_t R = w->rank, m = R;
  p->es = hlo_dtype_size(w->dtype);
  p->ops = ops_for(w->dtype);
  while (m > 0 && passthrough(w, m - 1)) m--;
  p->V = 1;
  for (uint32_t d = m; d < R; d++) p->V *= w->operand_dims[d];
  int64_t st[MAXR + 1];
  st[R] = 1;
  for (uint32_t d = R; d-- > 0;) st[d] = st[d + 1] * w->operand_dims[d];
  if (m == 0) {
    p->nd = 0;
    p->oL = p->xL = p->kL = p->sL = p->wdL = p->bdL = 1;
    p->plL = 0;
  } else {
    uint32_t L = m - 1;
    p->nd = L;
    p->oL = w->window_out_dims[L], p->xL = w->operand_dims[L], p->kL = w->window_dimensions[L];
    p->sL = w->window_strides[L], p->wdL = w->window_dilations[L];
    p->bdL = w->base_dilations[L], p->plL = w->padding_low[L];
  }
  p->rows = 1;
  p->wouter = 1;
  for (uint32_t q = 0; q < p->nd; q++) {
    p->o[q] = w->window_out_dims[q], p->x[q] = w->operand_dims[q];
    p->k[q] = w->window_dimensions[q], p->s[q] = w->window_strides[q];
    p->wd[q] = w->window_dilations[q], p->bd[q] = w->base_dilations[q];
    p->pl[q] = w->padding_low[q], p->xst[q] = st[q + 1];
    p->rows *= p->o[q];
    p->wouter *= p->k[q];
  }
  p->row_out = p->oL * p->V;
  for (int64_t kl = 0; kl < p->kL && kl < SEGMAX; kl++) {
    int64_t c = kl * p->wdL - p->plL;
    p->seg_lo[kl] = c >= 0 ? 0 : ceil_div(-c, p->sL);
    p->seg_hi[kl] = p->xL - c > 0 ? ceil_div(p->xL - c, p->sL) : 0;
  }
}

/* The lanes j of [j0, j1) whose position j * sL + kl * wdL - plL lies in
 * [0, xL) (base dilation 1): [*lo, *hi), empty when *hi <= *lo. */
static void lane_segment(const plan *p, int64_t kl, int64_t j0, int64_t j1, int64_t *lo,
                         int64_t *hi) {
  int64_t a, b;
  if (kl < SEGMAX) {
    a = p->seg_lo[kl], b = p->seg_hi[kl];
  } else {
    int64_t c = kl * p->wdL - p->plL;
    a = c >= 0 ? 0 : ceil_div(-c, p->sL);
    b = p->xL - c > 0 ? ceil_div(p->xL - c, p->sL) : 0;
  }
  *lo = a > j0 ? a : j0;
  *hi = b < j1 ? b : j1;
}

/* The operand offset (elements) of outer window position wi for outer
 * output index oi; false when the position is padding or a hole. */
static bool outer_offset_n(const plan *p, const int64_t *oi, const int64_t *wi, uint32_t n,
                           int64_t *off) {
  int64_t o = 0;
  for (uint32_t q = 0; q < n; q++) {
    int64_t pos = oi[q] * p->s[q] + wi[q] * p->wd[q] - p->pl[q];
    if (p->bd[q] == 1) {
      if (pos < 0 || pos >= p->x[q]) return false;
    } else {
      if (pos < 0 || pos % p->bd[q] != 0 || pos / p->bd[q] >= p->x[q]) return false;
      pos /= p->bd[q];
    }
    o += pos * p->xst[q];
  }
  *off = o;
  return true;
}

static bool outer_offset(const plan *p, const int64_t *oi, const int64_t *wi, int64_t *off) {
  return outer_offset_n(p, oi, wi, p->nd, off);
}

/* The next multi-index of dims[0..n) in row-major order. */
static void next_index(int64_t *idx, const int64_t *dims, uint32_t n) {
  for (uint32_t q = n; q-- > 0;) {
    if (++idx[q] < dims[q]) return;
    idx[q] = 0;
  }
}

static void index_of(int64_t lin, const int64_t *dims, uint32_t n, int64_t *idx) {
  for (uint32_t q = n; q-- > 0;) {
    idx[q] = dims[q] ? lin % dims[q] : 0;
    lin = dims[q] ? lin / dims[q] : 0;
  }
}

static void fill(char *dst, const void *elem, int64_t n, size_t es) {
  if (n <= 0) return;
  memcpy(dst, elem, es);
  int64_t done = 1;
  while (done < n) { /* doubling copies */
    int64_t c = done < n - done ? done : n - done;
    memcpy(dst + (size_t)done * es, dst, (size_t)c * es);
    done += c;
  }
}

/* ------------------------------------------------------ reduce_window */

typedef struct rw_job {
  const plan *p;
  backend_reducer red;
  const char *x, *init;
  char *out;
  bool skip_pad;                  /* folds of init cannot change the row */
} rw_job;

/* The whole lane dim's window for one outer position of one row (V = 1,
 * base dilation 1 along L): lanes whose every position reads data take
 * them all in one pass; the lanes at the edges go position by position,
 * in window order, folding init where they fall into padding. */
static void fold_lane_window(const rw_job *j, char *orow, int64_t off) {
  const plan *p = j->p;
  const wops *ops = p->ops;
  size_t es = p->es;
  int64_t kL = p->kL;
  /* lanes valid for every kl: [seg_lo[kL - 1], seg_hi[kL - 1]) ∩ [seg_lo[0],
   * seg_hi[0]) (the segments move down as kl grows) */
  int64_t lo = p->seg_lo[0], hi = p->seg_hi[kL - 1];
  if (lo < 0) lo = 0;
  if (hi > p->oL) hi = p->oL;
  if (hi < lo) hi = lo;
  if (hi > lo)
    ops->fold_win(orow + (size_t)lo * es, j->x + (size_t)(off + lo * p->sL - p->plL) * es, 1, 0,
                  0, hi - lo, p->sL, kL, p->wdL, j->red);
  for (int64_t l = 0; l < p->oL; l++) {
    if (l == lo && hi > lo) l = hi;
    if (l >= p->oL) break;
    /* the valid positions of lane l: kl in [a, b) (q grows with kl) */
    int64_t a = 0, b = kL, q0 = l * p->sL - p->plL;
    while (a < kL && q0 + a * p->wdL < 0) a++;
    while (b > a && q0 + (b - 1) * p->wdL >= p->xL) b--;
    char *dst = orow + (size_t)l * es;
    if (!j->skip_pad)
      for (int64_t kl = 0; kl < a; kl++) ops->fold_init(dst, j->init, 1, j->red);
    if (b > a)
      ops->fold_win(dst, j->x + (size_t)(off + q0 + a * p->wdL) * es, 1, 0, 0, 1, 1, b - a,
                    p->wdL, j->red);
    if (!j->skip_pad)
      for (int64_t kl = b > a ? b : a; kl < kL; kl++) ops->fold_init(dst, j->init, 1, j->red);
  }
}

/* Whether rw_blocks runs `j`: V = 1 (the lane dim is the operand's last),
 * a lane window of 2 .. SEGMAX positions, an outer dim M = nd - 1 without
 * base dilation, and init folds skipped (padding only shortens segments). */
static bool blocked(const rw_job *j) {
  const plan *p = j->p;
  return p->V == 1 && p->bdL == 1 && p->kL > 1 && p->kL <= SEGMAX && p->nd >= 1 &&
         p->bd[p->nd - 1] == 1 && j->skip_pad;
}

/* reduce_window in blocks: a block is one index of the outer dims before
 * M = nd - 1, i.e. O_M rows of O_L lanes. Per window position of those
 * dims and of M, the rows of M whose operand row is inside (a segment,
 * computed like the lanes') are a constant stride apart, so one fold_win
 * call covers all of them (an NCHW pool: one call per channel and window
 * row instead of one per output row). */
static void rw_blocks(void *ctx, int64_t begin, int64_t end) {
  const rw_job *j = ctx;
  const plan *p = j->p;
  const wops *ops = p->ops;
  size_t es = p->es;
  uint32_t M = p->nd - 1;
  int64_t oM = p->o[M], oL = p->oL, kL = p->kL, blk = oM * oL;
  int64_t oi[MAXR] = {0}, wi[MAXR];
  int64_t lo = p->seg_lo[0], hi = p->seg_hi[kL - 1]; /* lanes valid for every kl */
  if (lo < 0) lo = 0;
  if (hi > oL) hi = oL;
  if (hi < lo) hi = lo;
  index_of(begin, p->o, M, oi);
  for (int64_t b = begin; b < end; b++, next_index(oi, p->o, M)) {
    char *ob = j->out + (size_t)(b * blk) * es;
    fill(ob, j->init, blk, es);
    memset(wi, 0, sizeof wi);
    int64_t wo = 1;
    for (uint32_t q = 0; q < M; q++) wo *= p->k[q];
    for (int64_t kk = 0; kk < wo; kk++, next_index(wi, p->k, M)) {
      int64_t off;
      if (!outer_offset_n(p, oi, wi, M, &off)) continue;
      for (int64_t km = 0; km < p->k[M]; km++) {
        int64_t c = km * p->wd[M] - p->pl[M];
        int64_t mlo = c >= 0 ? 0 : ceil_div(-c, p->s[M]);
        int64_t mhi = p->x[M] - c > 0 ? ceil_div(p->x[M] - c, p->s[M]) : 0;
        if (mhi > oM) mhi = oM;
        if (mhi <= mlo) continue;
        char *d0 = ob + (size_t)(mlo * oL) * es;
        int64_t x0 = off + (mlo * p->s[M] + c) * p->xst[M], xstr = p->s[M] * p->xst[M];
        if (hi > lo)
          ops->fold_win(d0 + (size_t)lo * es, j->x + (size_t)(x0 + lo * p->sL - p->plL) * es,
                        mhi - mlo, oL, xstr, hi - lo, p->sL, kL, p->wdL, j->red);
        for (int64_t l = 0; l < oL; l++) { /* the edge lanes, all rows at once */
          if (l == lo && hi > lo) l = hi;
          if (l >= oL) break;
          int64_t a = 0, e = kL, q0 = l * p->sL - p->plL;
          while (a < kL && q0 + a * p->wdL < 0) a++;
          while (e > a && q0 + (e - 1) * p->wdL >= p->xL) e--;
          if (e > a)
            ops->fold_win(d0 + (size_t)l * es, j->x + (size_t)(x0 + q0 + a * p->wdL) * es,
                          mhi - mlo, oL, xstr, 1, 1, e - a, p->wdL, j->red);
        }
      }
    }
  }
}

static void rw_rows(void *ctx, int64_t begin, int64_t end) {
  const rw_job *j = ctx;
  const plan *p = j->p;
  const wops *ops = p->ops;
  size_t es = p->es;
  int64_t V = p->V, rowb = p->row_out;
  int64_t oi[MAXR] = {0}, wi[MAXR];
  index_of(begin, p->o, p->nd, oi);
  for (int64_t r = begin; r < end; r++, next_index(oi, p->o, p->nd)) {
    char *orow = j->out + (size_t)(r * rowb) * es;
    fill(orow, j->init, rowb, es);
    memset(wi, 0, sizeof wi);
    for (int64_t kk = 0; kk < p->wouter; kk++, next_index(wi, p->k, p->nd)) {
      int64_t off;
      if (!outer_offset(p, oi, wi, &off)) {
        if (!j->skip_pad)
          for (int64_t kl = 0; kl < p->kL; kl++) ops->fold_init(orow, j->init, rowb, j->red);
        continue;
      }
      if (V == 1 && p->bdL == 1 && p->kL > 1 && p->kL <= SEGMAX) {
        fold_lane_window(j, orow, off);
        continue;
      }
      for (int64_t kl = 0; kl < p->kL; kl++) {
        int64_t c = kl * p->wdL - p->plL; /* lane j reads position j * sL + c */
        if (p->bdL == 1) {
          int64_t lo, hi;
          lane_segment(p, kl, 0, p->oL, &lo, &hi);
          if (hi < lo) hi = lo;
          if (!j->skip_pad) {
            ops->fold_init(orow, j->init, lo * V, j->red);
            ops->fold_init(orow + (size_t)(hi * V) * es, j->init, (p->oL - hi) * V, j->red);
          }
          if (hi > lo)
            ops->fold(orow + (size_t)(lo * V) * es,
                      j->x + (size_t)(off + (lo * p->sL + c) * V) * es, hi - lo, V, p->sL * V,
                      j->red);
          continue;
        }
        for (int64_t l = 0; l < p->oL; l++) { /* base dilation along L */
          int64_t q = l * p->sL + c;
          char *dst = orow + (size_t)(l * V) * es;
          if (q >= 0 && q % p->bdL == 0 && q / p->bdL < p->xL)
            ops->fold(dst, j->x + (size_t)(off + q / p->bdL * V) * es, 1, V, 0, j->red);
          else if (!j->skip_pad)
            ops->fold_init(dst, j->init, V, j->red);
        }
      }
    }
  }
}

/* Whether folding the init value into any accumulator that started as init
 * leaves it as it is, bit for bit. */
static bool init_is_neutral(const backend_window *w, const void *init) {
  hlo_dtype t = w->dtype;
  if (t == HLO_I1) return true;
  switch (w->reducer) {
  case BACKEND_REDUCER_MAX:
  case BACKEND_REDUCER_MIN:
  case BACKEND_REDUCER_AND:
  case BACKEND_REDUCER_OR: return true; /* idempotent: op(op(i, x), i) = op(i, x) */
  case BACKEND_REDUCER_ADD: /* +0 (an accumulator from +0 is never -0) or 0 */
    return elem_get_bits(t, init, 0) == 0;
  case BACKEND_REDUCER_MUL:
    return dtype_class(t) == HLO_CLASS_FLOAT ? elem_get_f64(t, init, 0) == 1.0
                                             : elem_get_i64(t, init, 0) == 1;
  }
  return false;
}

static hlo_status not_taken(const backend_window *w, const char *what) {
  return status_at(HLO_UNIMPLEMENTED, &w->loc, "%s on the cpu backend: element type %s with "
                   "reducer %s is not supported", what, hlo_dtype_name(w->dtype),
                   backend_reducer_name(w->reducer));
}

hlo_status cpu_reduce_window(const backend_window *w, void *const *inputs, void *const *outputs) {
  if (w->kind != BACKEND_REDUCE_WINDOW || !cpu_window_takes(w))
    return not_taken(w, "reduce_window");
  plan p;
  make_plan(w, &p);
  if (p.rows == 0 || p.row_out == 0) return NULL;
  rw_job j = {&p, w->reducer, inputs[0], inputs[1], outputs[0],
              init_is_neutral(w, inputs[1])};
  double work = (double)p.rows * (double)p.row_out * (double)window_size(w);
  thread_pool *tp = thread_pool_global();
  bool blk = blocked(&j);
  int64_t units = blk ? p.rows / p.o[p.nd - 1] : p.rows;
  thread_pool_fn fn = blk ? rw_blocks : rw_rows;
  if (units >= 2 && work >= (double)WORK_MIN && thread_pool_num_threads(tp) > 1)
    thread_pool_parallel_for(tp, units, 0, fn, &j);
  else
    fn(&j, 0, units);
  return NULL;
}

/* ------------------------------------------------- select_and_scatter */

typedef struct ss_job {
  const plan *p;
  const backend_window *w;
  const char *x, *src, *init;
  char *out;
  int64_t inner_rows;             /* rows per index of outer dim 0 */
  bool direct;                    /* windows overlap along no dim */
} ss_job;

/* The select pass over a lane block's window positions (k numbers them in
 * row-major window order); with `kofs`, the operand offset of each
 * position's lane 0 goes there (positions in padding: not written). */
static void ss_select(const ss_job *jb, const int64_t *oi, int64_t j0, int64_t j1, int64_t v0,
                      int64_t nv, char *sv, int32_t *idx, int64_t *kofs) {
  const plan *p = jb->p;
  size_t es = p->es;
  int64_t V = p->V, wi[MAXR] = {0};
  int32_t k = 0;
  for (int64_t kk = 0; kk < p->wouter; kk++, next_index(wi, p->k, p->nd)) {
    int64_t off;
    if (!outer_offset(p, oi, wi, &off)) {
      k += (int32_t)p->kL;
      continue;
    }
    for (int64_t kl = 0; kl < p->kL; kl++, k++) {
      int64_t c = kl - p->plL, lo, hi;
      if (kofs) kofs[k] = off + c * V;
      lane_segment(p, kl, j0, j1, &lo, &hi);
      if (hi <= lo) continue;
      size_t lane = (size_t)((lo - j0) * nv);
      p->ops->select(sv + lane * es, idx + lane,
                     jb->x + (size_t)(off + (lo * p->sL + c) * V + v0) * es, hi - lo, nv,
                     p->sL * V, k, jb->w->select);
    }
  }
}

/* The scatter pass, one window position at a time (every lane of the
 * block must reach a different result element at each position). */
static void ss_scatter(const ss_job *jb, const int64_t *oi, int64_t srow, int64_t j0,
                       int64_t j1, int64_t v0, int64_t nv, const int32_t *idx) {
  const plan *p = jb->p;
  size_t es = p->es;
  int64_t V = p->V, wi[MAXR] = {0};
  int32_t k = 0;
  for (int64_t kk = 0; kk < p->wouter; kk++, next_index(wi, p->k, p->nd)) {
    int64_t off;
    if (!outer_offset(p, oi, wi, &off)) {
      k += (int32_t)p->kL;
      continue;
    }
    for (int64_t kl = 0; kl < p->kL; kl++, k++) {
      int64_t c = kl - p->plL, lo, hi;
      lane_segment(p, kl, j0, j1, &lo, &hi);
      if (hi <= lo) continue;
      char *r = jb->out + (size_t)(off + (lo * p->sL + c) * V + v0) * es;
      const char *s = jb->src + (size_t)(srow + lo * V + v0) * es;
      if (jb->direct)
        p->ops->scatter_direct(r, s, idx + (lo - j0) * nv, jb->init, hi - lo, nv, p->sL * V, V,
                               k, jb->w->reducer);
      else
        p->ops->scatter(r, s, idx + (lo - j0) * nv, hi - lo, nv, p->sL * V, V, k,
                        jb->w->reducer);
    }
  }
}

static void ss_rows(void *ctx, int64_t begin, int64_t end) {
  const ss_job *jb = ctx;
  const plan *p = jb->p;
  size_t es = p->es;
  int64_t V = p->V;
  int64_t vb = V >= LANES ? LANES : V;
  /* windows overlapping along L: lanes of a block may reach one result
   * element, so scatter lane by lane, in order, from a table of the
   * positions' offsets (one L index a block when the table is too big) */
  bool overlap = p->sL < p->kL, table = overlap && window_size(jb->w) <= KMAX;
  int64_t jstep = V >= LANES || (overlap && !table) ? 1 : LANES / V;
  _Alignas(64) char sv[LANES * 8];
  int32_t idx[LANES];
  int64_t kofs[KMAX];
  int64_t oi[MAXR] = {0};
  int64_t r0 = begin * jb->inner_rows, r1 = end * jb->inner_rows;
  index_of(r0, p->o, p->nd, oi);
  for (int64_t r = r0; r < r1; r++, next_index(oi, p->o, p->nd)) {
    int64_t srow = r * p->row_out;
    for (int64_t j0 = 0; j0 < p->oL; j0 += jstep) {
      int64_t j1 = j0 + jstep < p->oL ? j0 + jstep : p->oL;
      for (int64_t v0 = 0; v0 < V; v0 += vb) {
        int64_t nv = V - v0 < vb ? V - v0 : vb;
        for (int64_t i = 0; i < (j1 - j0) * nv; i++) idx[i] = -1;
        ss_select(jb, oi, j0, j1, v0, nv, sv, idx, table ? kofs : NULL);
        if (table)
          p->ops->scatter_lanes(jb->out + (size_t)(j0 * p->sL * V + v0) * es,
                                jb->src + (size_t)(srow + j0 * V + v0) * es, idx, kofs,
                                j1 - j0, nv, p->sL * V, V, jb->w->reducer);
        else
          ss_scatter(jb, oi, srow, j0, j1, v0, nv, idx);
      }
    }
  }
}

typedef struct fill_job {
  char *out;
  const void *elem;
  size_t es;
} fill_job;

static void fill_part(void *ctx, int64_t begin, int64_t end) {
  const fill_job *f = ctx;
  fill(f->out + (size_t)begin * f->es, f->elem, end - begin, f->es);
}

hlo_status cpu_select_and_scatter(const backend_window *w, const void *operand,
                                  const void *source, const void *init, void *output) {
  if (w->kind != BACKEND_SELECT_AND_SCATTER || !cpu_window_takes(w))
    return not_taken(w, "select_and_scatter");
  plan p;
  make_plan(w, &p);
  int64_t n = window_operand_elements(w);
  thread_pool *tp = thread_pool_global();
  bool threads = thread_pool_num_threads(tp) > 1;
  /* windows that overlap along no dim: each result element is reached by
   * one source element at most, and scattered into without being read;
   * when they also tile the operand exactly, none is left to fill */
  bool direct = true, tiled = true;
  for (uint32_t d = 0; d < w->rank; d++) {
    int64_t k = w->window_dimensions[d], s = w->window_strides[d];
    if (s < k) direct = false;
    if (s != k || w->padding_low[d] || w->padding_high[d] ||
        w->window_out_dims[d] * s != w->operand_dims[d])
      tiled = false;
  }
  fill_job f = {output, init, p.es};
  if (!(direct && tiled)) {
    if (threads && n >= WORK_MIN * 4)
      thread_pool_parallel_for(tp, n, 0, fill_part, &f);
    else
      fill_part(&f, 0, n);
  }
  if (p.rows == 0 || p.row_out == 0) return NULL;
  ss_job j = {&p, w, operand, source, init, output, 1, direct};
  double work = (double)p.rows * (double)p.row_out * (double)window_size(w);
  /* split by the outermost dim when its windows do not overlap */
  if (threads && p.nd >= 1 && p.s[0] >= p.k[0] && p.o[0] >= 2 && work >= (double)WORK_MIN) {
    j.inner_rows = p.rows / p.o[0];
    thread_pool_parallel_for(tp, p.o[0], 0, ss_rows, &j);
  } else {
    ss_rows(&j, 0, p.rows);
  }
  return NULL;
}
