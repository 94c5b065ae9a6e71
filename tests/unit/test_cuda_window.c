/* test_cuda_window.c — the CUDA backend's reduce_window and
 * select_and_scatter (backend/cuda/cuda_window.h), with or without a GPU.
 *
 * Always:
 *   - the kernels' unit compiles with NVRTC for sm_90 (printed "skipped:
 *     REASON" where libnvrtc does not load);
 *   - cuda_window_takes answers as cpu_window_takes over every element
 *     type, reducer, select direction and kind, and the slots' errors
 *     (wrong kind, a form not taken, no started backend);
 *   - the kernels' index arithmetic and element ops on the CPU: the body
 *     (cuda_window_source_body) after a host prelude (the WK_ macros: a
 *     kernel is a plain function, the thread index a global variable, bit
 *     casts through memcpy) is compiled with the host C compiler ($HLO_CC
 *     or cc, -O1 -shared -fPIC) into a temporary shared object, loaded
 *     with dlopen and run over an emulated grid (every thread index of a
 *     random thread count, so the grid-stride loops wrap), on every case
 *     below; the results must be the CPU backend's (cpu_reduce_window /
 *     cpu_select_and_scatter, themselves checked against the interpreter
 *     bit for bit by test_cpu_window.c) bit for bit, NaN payloads too
 *     (maximum and minimum pass NaNs through), except that any NaN
 *     matches any NaN where a float add or multiply makes it (the
 *     hardware's NaN: x86 and a GPU differ), and every result element
 *     written (the buffers start as garbage; one element past the end
 *     stays untouched).
 * With a GPU (backend_cuda succeeds), else "skipped: no GPU (REASON)":
 *   - the same cases through cuda_reduce_window / cuda_select_and_scatter
 *     on device buffers, against the same CPU results.
 *
 * Cases: pooling forms (NHWC and NCHW max pools 2x2/2 and 3x3/2 padded,
 * sum pools, a min pool with base and window dilations, the
 * select_and_scatter of a max pool's gradient with overlapping windows),
 * inputs all equal (select ties: GE keeps the first in window order, GT
 * takes the last), NaN, infinities and -0 / +0 heavy inputs, every element
 * type; then 150 seeded random reduce_windows and 150 random
 * select_and_scatters (ranks 1-4, windows 1-4, strides 1-3, dilations,
 * padding, negative too for reduce_window; test_cpu_window.c's
 * generator). HLO_TEST_SEED=N draws other random cases. */
#include <dlfcn.h>
#include <math.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>
#include "backend/backend.h"
#include "backend/cpu/window.h"
#include "backend/cuda/cuda_api.h"
#include "backend/cuda/cuda_window.h"
#include "backend/cuda/nvrtc.h"
#include "ir/element.h"
#include "mock/libcuda_mock.h"
#include "test.h"
#include "testlib.h"

static uint64_t rng = 0x9e3779b97f4a7c15ULL;
static int64_t rand_in(int64_t lo, int64_t hi) { return tl_rand_in(&rng, lo, hi); }

static void report(hlo_status st) {
  hlo_status_print(st, stderr);
  hlo_status_free(st);
}

/* ------------------------------------------------------------ cases */

enum { FILL_RANDOM, FILL_SPECIALS, FILL_EQUAL };

typedef struct wcase {
  char what[64];
  backend_window w;
  void *x, *src, *init;           /* host inputs (src: select_and_scatter) */
  void *ref;                      /* the CPU backend's result */
  size_t es;
  int64_t n_res, n_x, n_out;      /* elements: result, operand, window output */
} wcase;

#define MAX_CASES 400
static wcase cases[MAX_CASES];
static int num_cases;

/* A random element of `dt`: few distinct values (ties), -0, and with
 * `specials` NaN and infinities now and then (test_cpu_window.c's). */
static void set_random(hlo_dtype dt, void *data, int64_t i, bool specials) {
  switch (dtype_class(dt)) {
  case HLO_CLASS_FLOAT: {
    int64_t r = rand_in(0, 99);
    double v = (double)rand_in(-12, 12) / 4;
    if (r < 5) v = -0.0;
    else if (r < 40) v += (double)rand_in(0, 1 << 20) / (1 << 22); /* mostly distinct */
    if (specials && r >= 80) v = r >= 96 ? NAN : r >= 92 ? -INFINITY : r >= 88 ? INFINITY
                                 : r >= 84 ? -0.0 : 0.0;
    elem_set_f64(dt, data, i, v);
    break;
  }
  case HLO_CLASS_BOOL: elem_set_i64(dt, data, i, rand_in(0, 1)); break;
  case HLO_CLASS_UINT: elem_set_i64(dt, data, i, rand_in(0, 40)); break;
  default: elem_set_i64(dt, data, i, rand_in(-20, 20)); break;
  }
}

/* An init value: the reducer's identity or (one case in three) another. */
static void set_init(hlo_dtype dt, backend_reducer r, void *data) {
  bool fl = dtype_class(dt) == HLO_CLASS_FLOAT;
  if (rand_in(0, 2) == 0) {
    set_random(dt, data, 0, false);
    return;
  }
  switch (r) {
  case BACKEND_REDUCER_ADD:
  case BACKEND_REDUCER_OR: elem_set_i64(dt, data, 0, 0); break;
  case BACKEND_REDUCER_MUL: elem_set_i64(dt, data, 0, 1); break;
  case BACKEND_REDUCER_AND: elem_set_i64(dt, data, 0, -1); break;
  case BACKEND_REDUCER_MAX:
    if (fl) elem_set_f64(dt, data, 0, -INFINITY);
    else if (dtype_class(dt) == HLO_CLASS_SINT) elem_set_i64(dt, data, 0, int_min(dt));
    else elem_set_i64(dt, data, 0, 0);
    break;
  case BACKEND_REDUCER_MIN:
    if (fl) elem_set_f64(dt, data, 0, INFINITY);
    else elem_set_u64(dt, data, 0, int_max(dt));
    break;
  }
  if (dt == HLO_I1) elem_set_i64(dt, data, 0, elem_get_i64(dt, data, 0) & 1);
}

/* Windows along dim d (the spec's formula). */
static int64_t out_dim(const backend_window *w, uint32_t d) {
  int64_t x = w->operand_dims[d], k = w->window_dimensions[d];
  int64_t dil = x == 0 ? 0 : (x - 1) * w->base_dilations[d] + 1;
  int64_t padded = w->padding_low[d] + dil + w->padding_high[d];
  int64_t dw = k == 0 ? 0 : (k - 1) * w->window_dilations[d] + 1;
  return (padded <= 0 || dw > padded) ? 0 : (padded - dw) / w->window_strides[d] + 1;
}

/* Adds case `w` (window_out_dims filled here) with inputs drawn by `fill`
 * and the CPU backend's result. */
static void add_case(const char *what, backend_window w, int fill) {
  if (num_cases >= MAX_CASES) return;
  for (uint32_t d = 0; d < w.rank; d++) w.window_out_dims[d] = out_dim(&w, d);
  wcase *c = &cases[num_cases];
  memset(c, 0, sizeof *c);
  snprintf(c->what, sizeof c->what, "%s", what);
  c->w = w;
  bool ss = w.kind == BACKEND_SELECT_AND_SCATTER;
  c->es = hlo_dtype_size(w.dtype);
  c->n_x = window_operand_elements(&w);
  c->n_out = window_out_elements(&w);
  c->n_res = ss ? c->n_x : c->n_out;
  c->x = calloc((size_t)c->n_x + 1, c->es);
  c->src = calloc((size_t)c->n_out + 1, c->es);
  c->init = calloc(1, c->es);
  c->ref = calloc((size_t)c->n_res + 1, c->es);
  CHECK(c->x && c->src && c->init && c->ref);
  if (!c->x || !c->src || !c->init || !c->ref) return;
  bool specials = fill == FILL_SPECIALS || (fill == FILL_RANDOM && rand_in(0, 3) == 0);
  for (int64_t e = 0; e < c->n_x; e++) set_random(w.dtype, c->x, e, specials);
  if (fill == FILL_EQUAL) /* every operand element the same value (ties) */
    for (int64_t e = 1; e < c->n_x; e++) memcpy((char *)c->x + e * c->es, c->x, c->es);
  for (int64_t e = 0; e < c->n_out; e++) set_random(w.dtype, c->src, e, false);
  set_init(w.dtype, w.reducer, c->init);
  CHECK(cpu_window_takes(&w) && cuda_window_takes(&w));
  void *ins[2] = {c->x, c->init}, *outs[1] = {c->ref};
  hlo_status st = ss ? cpu_select_and_scatter(&w, c->x, c->src, c->init, c->ref)
                     : cpu_reduce_window(&w, ins, outs);
  CHECK(!st);
  if (st) {
    report(st);
    return;
  }
  num_cases++;
}

static const hlo_dtype rw_types[] = {HLO_F32, HLO_F32, HLO_F32, HLO_F64, HLO_BF16, HLO_F16,
                                     HLO_I32, HLO_I64, HLO_I8,  HLO_UI8, HLO_UI32, HLO_I1,
                                     HLO_I16, HLO_UI16, HLO_UI64};

/* A random window op of rank R (test_cpu_window.c's): sizes 1-7 (0 now
 * and then), windows 1-4, strides 1-3, dilations 1-3, padding -2..3
 * (select_and_scatter: 0..2, no dilations, no empty source). */
static void random_window(backend_window *w, backend_window_kind kind, uint32_t R) {
  memset(w, 0, sizeof *w);
  bool ss = kind == BACKEND_SELECT_AND_SCATTER;
  w->kind = kind;
  w->rank = R;
  w->dtype = rw_types[rand_in(0, sizeof rw_types / sizeof rw_types[0] - 1)];
  bool integral = dtype_class(w->dtype) != HLO_CLASS_FLOAT;
  w->reducer = (backend_reducer)rand_in(0, integral ? 5 : 3);
  if (ss && rand_in(0, 1)) w->reducer = BACKEND_REDUCER_ADD;
  w->select = ss ? (backend_select)rand_in(0, 3) : BACKEND_SELECT_GE;
  for (int tries = 0; tries < 100; tries++) {
    for (uint32_t d = 0; d < R; d++) {
      bool plain = rand_in(0, 3) == 0; /* a dim the window leaves alone */
      w->operand_dims[d] = rand_in(0, 24) || ss ? rand_in(1, 7) : 0;
      w->window_dimensions[d] = plain ? 1 : rand_in(1, 4);
      w->window_strides[d] = plain ? 1 : rand_in(1, 3);
      w->base_dilations[d] = plain || ss || rand_in(0, 3) ? 1 : rand_in(2, 3);
      w->window_dilations[d] = plain || ss || rand_in(0, 2) ? 1 : rand_in(2, 3);
      w->padding_low[d] = plain ? 0 : ss ? rand_in(0, 2) : rand_in(-2, 3);
      w->padding_high[d] = plain ? 0 : ss ? rand_in(0, 2) : rand_in(-2, 3);
    }
    bool empty = false;
    for (uint32_t d = 0; d < R; d++)
      if (out_dim(w, d) == 0) empty = true;
    if (!empty || (!ss && rand_in(0, 9) == 0)) return;
  }
}

/* A rank-4 window of `kind` over dims x, windows k, strides s, padding p
 * (both sides), no dilation. */
static backend_window window4(backend_window_kind kind, hlo_dtype dt, backend_reducer red,
                              const int64_t x[4], const int64_t k[4], const int64_t s[4],
                              const int64_t p[4]) {
  backend_window w;
  memset(&w, 0, sizeof w);
  w.kind = kind;
  w.dtype = dt;
  w.reducer = red;
  w.rank = 4;
  for (uint32_t d = 0; d < 4; d++) {
    w.operand_dims[d] = x[d];
    w.window_dimensions[d] = k[d];
    w.window_strides[d] = s[d];
    w.base_dilations[d] = w.window_dilations[d] = 1;
    w.padding_low[d] = w.padding_high[d] = p[d];
  }
  return w;
}

static void make_cases(void) {
  if (num_cases) return;
  const char *seed = getenv("HLO_TEST_SEED");
  if (seed && strtoull(seed, NULL, 0)) rng = strtoull(seed, NULL, 0);
  static const struct {
    int64_t x[4], k[4], s[4], p[4];
  } pools[] = {
      {{2, 8, 8, 3}, {1, 2, 2, 1}, {1, 2, 2, 1}, {0, 0, 0, 0}},   /* NHWC 2x2/2 */
      {{2, 9, 9, 4}, {1, 3, 3, 1}, {1, 2, 2, 1}, {0, 1, 1, 0}},   /* NHWC 3x3/2, padded */
      {{2, 3, 12, 12}, {1, 1, 2, 2}, {1, 1, 2, 2}, {0, 0, 0, 0}}, /* NCHW 2x2/2 */
      {{2, 3, 9, 9}, {1, 1, 3, 3}, {1, 1, 2, 2}, {0, 0, 1, 1}},   /* NCHW 3x3/2, padded */
      {{1, 12, 12, 1}, {1, 7, 7, 1}, {1, 1, 1, 1}, {0, 2, 2, 0}}, /* big overlapping windows */
  };
  const backend_window_kind RW = BACKEND_REDUCE_WINDOW, SS = BACKEND_SELECT_AND_SCATTER;
  char what[64];
  for (size_t i = 0; i < sizeof pools / sizeof pools[0]; i++) {
    snprintf(what, sizeof what, "max pool %zu", i);
    add_case(what, window4(RW, HLO_F32, BACKEND_REDUCER_MAX, pools[i].x, pools[i].k, pools[i].s,
                           pools[i].p), FILL_RANDOM);
    snprintf(what, sizeof what, "sum pool %zu", i);
    add_case(what, window4(RW, HLO_F32, BACKEND_REDUCER_ADD, pools[i].x, pools[i].k, pools[i].s,
                           pools[i].p), FILL_RANDOM);
    snprintf(what, sizeof what, "max pool gradient %zu", i);
    add_case(what, window4(SS, HLO_F32, BACKEND_REDUCER_ADD, pools[i].x, pools[i].k, pools[i].s,
                           pools[i].p), FILL_RANDOM);
  }
  /* ties: all operand elements equal, overlapping windows (GE keeps the
   * first position, GT moves to the last; LE / LT likewise) */
  static const hlo_dtype tie_types[] = {HLO_F32, HLO_BF16, HLO_I32, HLO_F64};
  for (int sel = 0; sel < 4; sel++) {
    backend_window w = window4(SS, tie_types[sel], BACKEND_REDUCER_ADD, pools[1].x, pools[1].k,
                               pools[1].s, pools[1].p);
    w.select = (backend_select)sel;
    snprintf(what, sizeof what, "ties %s", backend_select_name(w.select));
    add_case(what, w, FILL_EQUAL);
    w.window_strides[1] = w.window_strides[2] = 1; /* 9 windows over most elements */
    snprintf(what, sizeof what, "ties %s, stride 1", backend_select_name(w.select));
    add_case(what, w, FILL_EQUAL);
  }
  /* NaN, infinities and signed zeros: max, min, select GE / LT, f16 / bf16 */
  static const hlo_dtype sp_types[] = {HLO_F32, HLO_F64, HLO_BF16, HLO_F16};
  for (size_t t = 0; t < 4; t++)
    for (int red = 0; red < 4; red++) {
      backend_window w = window4(RW, sp_types[t], (backend_reducer)red, pools[3].x, pools[3].k,
                                 pools[3].s, pools[3].p);
      snprintf(what, sizeof what, "specials %s %s", hlo_dtype_name(w.dtype),
               backend_reducer_name(w.reducer));
      add_case(what, w, FILL_SPECIALS);
      w.kind = SS;
      w.reducer = red & 1 ? BACKEND_REDUCER_MAX : BACKEND_REDUCER_ADD;
      w.select = (backend_select)red;
      w.window_strides[2] = 1;
      snprintf(what, sizeof what, "specials s&s %s %s", hlo_dtype_name(w.dtype),
               backend_select_name(w.select));
      add_case(what, w, FILL_SPECIALS);
    }
  /* a min pool with base and window dilations and negative padding */
  {
    backend_window w = window4(RW, HLO_F32, BACKEND_REDUCER_MIN, pools[3].x, pools[3].k,
                               pools[3].s, pools[3].p);
    w.base_dilations[2] = 2, w.window_dilations[3] = 2, w.padding_low[3] = -1;
    add_case("dilated min pool", w, FILL_RANDOM);
  }
  /* rank 0: one element, a window of one */
  for (int kind = 0; kind < 2; kind++) {
    backend_window w;
    memset(&w, 0, sizeof w);
    w.kind = kind ? SS : RW;
    w.dtype = HLO_F32;
    w.reducer = BACKEND_REDUCER_ADD;
    add_case(kind ? "rank 0 select_and_scatter" : "rank 0 reduce_window", w, FILL_RANDOM);
  }
  for (int i = 0; i < 150; i++) {
    backend_window w;
    random_window(&w, RW, (uint32_t)rand_in(1, 4));
    snprintf(what, sizeof what, "random reduce_window %d", i);
    add_case(what, w, FILL_RANDOM);
  }
  for (int i = 0; i < 150; i++) {
    backend_window w;
    random_window(&w, SS, (uint32_t)rand_in(1, 4));
    snprintf(what, sizeof what, "random select_and_scatter %d", i);
    add_case(what, w, FILL_RANDOM);
  }
}

static void print_window(const backend_window *w) {
  fprintf(stderr, "  %s %s %s %s rank %u:", w->kind ? "select_and_scatter" : "reduce_window",
          hlo_dtype_name(w->dtype), backend_reducer_name(w->reducer),
          w->kind ? backend_select_name(w->select) : "", w->rank);
  for (uint32_t d = 0; d < w->rank; d++)
    fprintf(stderr, " [x %lld k %lld s %lld bd %lld wd %lld pad %lld,%lld]",
            (long long)w->operand_dims[d], (long long)w->window_dimensions[d],
            (long long)w->window_strides[d], (long long)w->base_dilations[d],
            (long long)w->window_dilations[d], (long long)w->padding_low[d],
            (long long)w->padding_high[d]);
  fputc('\n', stderr);
}

/* Whether `got` (n_res elements, then a sentinel element of 0x7f bytes)
 * holds the reference's bits (any NaN for a NaN of a float add or
 * multiply). */
static bool same_result(const char *where, const wcase *c, const void *got) {
  hlo_dtype dt = c->w.dtype;
  /* a NaN that add or multiply makes (inf - inf, 0 x inf, NaN + x) has the
   * hardware's bits (x86: the first NaN operand or -NaN; a GPU: its
   * canonical NaN); maximum and minimum pass NaNs through, bit for bit */
  bool any_nan = dtype_class(dt) == HLO_CLASS_FLOAT &&
                 (c->w.reducer == BACKEND_REDUCER_ADD || c->w.reducer == BACKEND_REDUCER_MUL);
  for (int64_t e = 0; e < c->n_res; e++) {
    uint64_t a = elem_get_bits(dt, got, e), b = elem_get_bits(dt, c->ref, e);
    if (a == b ||
        (any_nan && isnan(elem_get_f64(dt, got, e)) && isnan(elem_get_f64(dt, c->ref, e))))
      continue;
    fprintf(stderr, "%s: %s: element %lld of %lld: got %.17g (bits %llx), cpu %.17g (bits %llx)\n",
            where, c->what, (long long)e, (long long)c->n_res, elem_get_f64(dt, got, e),
            (unsigned long long)a, elem_get_f64(dt, c->ref, e), (unsigned long long)b);
    print_window(&c->w);
    return false;
  }
  const unsigned char *end = (const unsigned char *)got + (size_t)c->n_res * c->es;
  for (size_t i = 0; i < c->es; i++)
    if (end[i] != 0x7f) {
      fprintf(stderr, "%s: %s: written past the end\n", where, c->what);
      return false;
    }
  return true;
}

/* ------------------------------------------------------------ nvrtc */

TEST(nvrtc_compiles) {
  if (getenv("HLO_CUDA_WINDOW_CHILD")) return;
  hlo_status st = nvrtc_load();
  if (st) {
    printf("nvrtc_compiles: skipped: %s\n", hlo_status_message(st));
    hlo_status_free(st);
    return;
  }
  void *cubin = NULL;
  size_t len = 0;
  st = nvrtc_compile(cuda_window_source(), "hlo_window.cu", 90, &cubin, &len);
  if (st) fprintf(stderr, "%s\n", hlo_status_message(st));
  CHECK(!st);
  hlo_status_free(st);
  CHECK(cubin && len > 16);
  /* every kernel is in the cubin (an ELF: the names appear as strings) */
  const hlo_dtype types[] = {HLO_F32, HLO_F64, HLO_BF16, HLO_F16, HLO_I1, HLO_I8, HLO_I16,
                             HLO_I32, HLO_I64, HLO_UI8, HLO_UI16, HLO_UI32, HLO_UI64};
  int found = 0;
  for (size_t t = 0; cubin && t < sizeof types / sizeof types[0]; t++)
    for (int k = 0; k < 2; k++) {
      backend_window w;
      memset(&w, 0, sizeof w);
      w.kind = k ? BACKEND_SELECT_AND_SCATTER : BACKEND_REDUCE_WINDOW;
      w.dtype = types[t];
      const char *name = cuda_window_kernel_name(&w);
      CHECK(name != NULL);
      if (name && memmem(cubin, len, name, strlen(name) + 1)) found++;
      else fprintf(stderr, "kernel %s not in the cubin\n", name ? name : "(none)");
    }
  CHECK_EQ_INT(found, 26);
  printf("nvrtc: %s, cubin of %zu bytes, %d kernels\n", nvrtc_version_text(), len, found);
  free(cubin);
  /* the unit the slots compile for one element type: its kernels only */
  char *unit = cuda_window_unit(HLO_BF16);
  CHECK(unit != NULL);
  CHECK(cuda_window_unit(HLO_C64) == NULL);
  cubin = NULL;
  st = unit ? nvrtc_compile(unit, "hlo_window_bf16.cu", 90, &cubin, &len) : NULL;
  if (st) fprintf(stderr, "%s\n", hlo_status_message(st));
  CHECK(!st);
  hlo_status_free(st);
  CHECK(cubin && memmem(cubin, len, "hlo_window_ss_bf16", 19));
  CHECK(cubin && memmem(cubin, len, "hlo_window_rw_bf16", 19));
  CHECK(cubin && !memmem(cubin, len, "hlo_window_rw_f32", 18));
  CHECK(cubin && !memmem(cubin, len, "hlo_window_ss_f16", 18));
  free(cubin);
  free(unit);
}

/* ------------------------------------------------------------ takes, errors */

TEST(takes_like_cpu) {
  if (getenv("HLO_CUDA_WINDOW_CHILD")) return;
  int taken = 0, total = 0;
  for (int t = 0; t < HLO_DTYPE_COUNT; t++)
    for (int red = 0; red < 6; red++)
      for (int sel = 0; sel < 4; sel++)
        for (int kind = 0; kind < 2; kind++) {
          backend_window w;
          memset(&w, 0, sizeof w);
          w.kind = (backend_window_kind)kind;
          w.dtype = (hlo_dtype)t;
          w.reducer = (backend_reducer)red;
          w.select = (backend_select)sel;
          w.rank = 2;
          w.operand_dims[0] = w.window_out_dims[0] = 3;
          w.operand_dims[1] = w.window_out_dims[1] = 5;
          for (uint32_t d = 0; d < 2; d++)
            w.window_dimensions[d] = w.window_strides[d] = w.base_dilations[d] =
                w.window_dilations[d] = 1;
          bool want = cpu_window_takes(&w);
          CHECK(cuda_window_takes(&w) == want);
          CHECK((cuda_window_kernel_name(&w) != NULL) == want);
          taken += want;
          total++;
        }
  printf("takes: %d of %d forms, as the cpu backend\n", taken, total);
  CHECK(taken > 0 && taken < total);
  /* a window of 2^31 elements or more */
  backend_window w;
  memset(&w, 0, sizeof w);
  w.dtype = HLO_F32;
  w.rank = 2;
  w.window_dimensions[0] = w.window_dimensions[1] = 1 << 16;
  CHECK(!cuda_window_takes(&w) && !cpu_window_takes(&w));
}

TEST(errors) {
  if (getenv("HLO_CUDA_WINDOW_CHILD")) return;
  backend_window w;
  memset(&w, 0, sizeof w);
  w.kind = BACKEND_REDUCE_WINDOW;
  w.dtype = HLO_F32;
  w.rank = 1;
  w.operand_dims[0] = w.window_out_dims[0] = 4;
  w.window_dimensions[0] = w.window_strides[0] = w.base_dilations[0] = w.window_dilations[0] = 1;
  void *ptrs[2] = {NULL, NULL};
  /* the wrong kind, and a form not taken: HLO_UNIMPLEMENTED, no device needed */
  hlo_status st = cuda_select_and_scatter(&w, NULL, NULL, NULL, NULL);
  CHECK(st && hlo_status_code_of(st) == HLO_UNIMPLEMENTED);
  CHECK(st && strstr(hlo_status_message(st), "description is of a reduce_window"));
  hlo_status_free(st);
  w.rank = 9; /* past BACKEND_WINDOW_MAX_RANK */
  st = cuda_reduce_window(&w, ptrs, ptrs);
  CHECK(st && hlo_status_code_of(st) == HLO_UNIMPLEMENTED && !cuda_window_takes(&w));
  hlo_status_free(st);
  w.rank = 1;
  w.dtype = HLO_C64;
  st = cuda_reduce_window(&w, ptrs, ptrs);
  CHECK(st && hlo_status_code_of(st) == HLO_UNIMPLEMENTED);
  CHECK(st && strstr(hlo_status_message(st), hlo_dtype_name(HLO_C64)));
  hlo_status_free(st);
  w.dtype = HLO_F32;
  /* without a started backend: HLO_UNAVAILABLE, nothing launched */
  const backend *be = NULL;
  hlo_status bst = backend_cuda(&be);
  if (bst) {
    st = cuda_reduce_window(&w, ptrs, ptrs);
    CHECK(st && hlo_status_code_of(st) == HLO_UNAVAILABLE);
    hlo_status_free(st);
    hlo_status_free(bst);
  }
}

/* ------------------------------------------------------------ host emulation */

static const char host_prelude[] =
    "#define WK_ALL\n"
    "#include <stdbool.h>\n"
    "#include <stdint.h>\n"
    "#include <string.h>\n"
    "#define WK_KERNEL __attribute__((visibility(\"default\"))) void\n"
    "#define WK_DEV static inline\n"
    "static int64_t wk_tid, wk_nth;\n"
    "void wk_host_thread(int64_t t, int64_t n);\n"
    "void wk_host_thread(int64_t t, int64_t n) { wk_tid = t; wk_nth = n; }\n"
    "#define WK_TID wk_tid\n"
    "#define WK_NTH wk_nth\n"
    "static inline uint32_t wk_f2u(float f) { uint32_t u; memcpy(&u, &f, 4); return u; }\n"
    "static inline float wk_u2f(uint32_t u) { float f; memcpy(&f, &u, 4); return f; }\n"
    "static inline uint64_t wk_d2u(double f) { uint64_t u; memcpy(&u, &f, 8); return u; }\n"
    "static inline double wk_u2d(uint64_t u) { double f; memcpy(&f, &u, 8); return f; }\n";

typedef void (*rw_fn)(cuda_window_desc, const void *, const void *, void *);
typedef void (*ss_fn)(cuda_window_desc, const void *, const void *, const void *, void *);

/* Builds the host shared object of the kernels in `dir`; its handle, or
 * NULL after a failed check. */
static void *build_host_kernels(const char *dir) {
  char src[600], lib[600], cmd[1600];
  snprintf(src, sizeof src, "%s/window.c", dir);
  snprintf(lib, sizeof lib, "%s/window.so", dir);
  FILE *f = fopen(src, "w");
  CHECK(f != NULL);
  if (!f) return NULL;
  fputs(host_prelude, f);
  fputs(cuda_window_source_body(), f);
  CHECK(fclose(f) == 0);
  const char *cc = getenv("HLO_CC");
  snprintf(cmd, sizeof cmd, "%s -std=c11 -O1 -shared -fPIC -o %s %s 2>&1", cc && *cc ? cc : "cc",
           lib, src);
  int rc = system(cmd);
  if (rc != 0) fprintf(stderr, "host build of the kernels failed: %s\n", cmd);
  CHECK(rc == 0);
  void *h = rc == 0 ? dlopen(lib, RTLD_NOW | RTLD_LOCAL) : NULL;
  if (rc == 0 && !h) fprintf(stderr, "dlopen %s: %s\n", lib, dlerror());
  CHECK(rc != 0 || h != NULL);
  unlink(src);
  unlink(lib);
  return h;
}

TEST(host_emulation) {
  if (getenv("HLO_CUDA_WINDOW_CHILD")) return;
  make_cases();
  char dir[] = "/tmp/hlo-cuda-window-XXXXXX";
  CHECK(mkdtemp(dir) != NULL);
  void *h = build_host_kernels(dir);
  rmdir(dir);
  if (!h) return;
  void (*set_thread)(int64_t, int64_t);
  *(void **)&set_thread = dlsym(h, "wk_host_thread");
  CHECK(set_thread != NULL);
  int passed = 0, failed = 0;
  for (int i = 0; set_thread && i < num_cases; i++) {
    const wcase *c = &cases[i];
    const char *name = cuda_window_kernel_name(&c->w);
    void *fn = name ? dlsym(h, name) : NULL;
    CHECK(fn != NULL);
    unsigned char *got = malloc((size_t)(c->n_res + 1) * c->es);
    CHECK(got != NULL);
    if (!fn || !got) {
      free(got);
      failed++;
      continue;
    }
    memset(got, 0x7f, (size_t)(c->n_res + 1) * c->es); /* garbage: each element must be written */
    cuda_window_desc d;
    cuda_window_make_desc(&c->w, &d);
    int64_t nth = rand_in(1, 64); /* fewer threads than elements: the loops wrap */
    for (int64_t t = 0; t < nth; t++) {
      set_thread(t, nth);
      if (c->w.kind == BACKEND_SELECT_AND_SCATTER)
        ((ss_fn)fn)(d, c->x, c->src, c->init, got);
      else
        ((rw_fn)fn)(d, c->x, c->init, got);
    }
    bool ok = same_result("host emulation", c, got);
    passed += ok;
    failed += !ok;
    free(got);
  }
  CHECK_EQ_INT(failed, 0);
  CHECK(num_cases >= 300);
  printf("host emulation: %d cases, %d bit-identical to the cpu backend, %d failed\n", num_cases,
         passed, failed);
  dlclose(h);
}

/* ------------------------------------------------------------ the GPU */

/* Runs every case through the slots on `be`'s device buffers; the count
 * of cases that failed. */
static int run_on_backend(const backend *be, const char *where) {
  /* once wired, the backend's slots are these */
  CHECK(!be->window_takes || be->window_takes == cuda_window_takes);
  CHECK(!be->reduce_window || be->reduce_window == cuda_reduce_window);
  CHECK(!be->select_and_scatter || be->select_and_scatter == cuda_select_and_scatter);
  int passed = 0, failed = 0;
  for (int i = 0; i < num_cases; i++) {
    const wcase *c = &cases[i];
    size_t nres = (size_t)(c->n_res + 1) * c->es;
    void *dx = be->alloc((size_t)c->n_x * c->es), *ds = be->alloc((size_t)c->n_out * c->es);
    void *di = be->alloc(c->es), *dout = be->alloc(nres);
    unsigned char *got = malloc(nres);
    bool ok = dx && ds && di && dout && got;
    CHECK(ok);
    if (ok) {
      memset(got, 0x7f, nres);
      hlo_status st = be->copy(dx, c->x, (size_t)c->n_x * c->es);
      if (!st) st = be->copy(ds, c->src, (size_t)c->n_out * c->es);
      if (!st) st = be->copy(di, c->init, c->es);
      if (!st) st = be->copy(dout, got, nres);
      void *ins[2] = {dx, di}, *outs[1] = {dout};
      if (!st)
        st = c->w.kind == BACKEND_SELECT_AND_SCATTER
                 ? cuda_select_and_scatter(&c->w, dx, ds, di, dout)
                 : cuda_reduce_window(&c->w, ins, outs);
      if (!st) st = be->synchronize();
      if (!st) st = be->copy(got, dout, nres);
      if (st) {
        fprintf(stderr, "%s: %s: ", where, c->what);
        report(st);
        ok = false;
      }
    }
    ok = ok && same_result(where, c, got);
    passed += ok;
    failed += !ok;
    free(got);
    be->free(dx);
    be->free(ds);
    be->free(di);
    be->free(dout);
  }
  printf("%s: %d cases, %d bit-identical to the cpu backend, %d failed\n", where, num_cases,
         passed, failed);
  return failed;
}

TEST(gpu) {
  if (getenv("HLO_CUDA_WINDOW_CHILD")) return;
  const backend *be = NULL;
  hlo_status st = backend_cuda(&be);
  if (st) {
    printf("gpu: skipped: no GPU (%s)\n", hlo_status_message(st));
    hlo_status_free(st);
    return;
  }
  make_cases();
  CHECK_EQ_INT(run_on_backend(be, "gpu"), 0);
}

/* ------------------------------------------------------------ a mock driver */

/* The mock driver (tests/unit/mock/libcuda_mock.h), emulating: its
 * cuLaunchKernel hands each launch (kernel name, grid, block, shared
 * bytes, parameters) to mock_hook, which the test sets: the kernels then
 * run over the emulated grid, so the slots' whole path (checks, the
 * once-per-process NVRTC compile and module load, the kernel lookup, the
 * parameter block, the geometry, the stream) is checked without a GPU. */

static void *g_host;                          /* the host kernels (child) */
static void (*g_set_thread)(int64_t, int64_t);
static int g_bad_launches;

/* mock_hook: runs the launch over the emulated grid (every thread of
 * grid x block, in order). */
static void emulate_launch(const char *name, const unsigned *geo, void **params) {
  void *fn = dlsym(g_host, name);
  bool ok = fn && geo[1] == 1 && geo[2] == 1 && geo[3] == 256 && geo[4] == 1 && geo[5] == 1 &&
            geo[6] == 0 && geo[0] >= 1;
  if (!ok) {
    fprintf(stderr, "mock launch of %s: grid %u x %u x %u, block %u x %u x %u, %u shared\n", name,
            geo[0], geo[1], geo[2], geo[3], geo[4], geo[5], geo[6]);
    g_bad_launches++;
    return;
  }
  cuda_window_desc d;
  memcpy(&d, params[0], sizeof d);
  int64_t n = strstr(name, "_ss_") ? d.n_x : d.n_out, nth = (int64_t)geo[0] * geo[3];
  if (nth < n && geo[0] != 2147483647u) g_bad_launches++; /* a grid too small */
  void *p[4] = {NULL, NULL, NULL, NULL};
  for (int i = 0; i < (strstr(name, "_ss_") ? 4 : 3); i++)
    memcpy(&p[i], params[i + 1], sizeof p[i]);
  for (int64_t t = 0; t < nth; t++) {
    g_set_thread(t, nth);
    if (strstr(name, "_ss_")) ((ss_fn)fn)(d, p[0], p[1], p[2], p[3]);
    else ((rw_fn)fn)(d, p[0], p[1], p[2]);
  }
}

/* cuda_window_takes(arg) on a thread of its own; rank set to 100 when true. */
static void *takes_thread(void *arg) {
  backend_window *w = arg;
  if (cuda_window_takes(w)) w->rank = 100;
  return NULL;
}

/* The child's checks (HLO_CUDA_LIB is the mock): exit status 0 passed, 1
 * failed, 3 skipped (the backend does not start for a reason that is not
 * the mock's: no cuBLASLt, no NVRTC, a driver function the mock lacks). */
static int mock_child(void) {
  const backend *be = NULL;
  hlo_status st = backend_cuda(&be);
  if (st) {
    printf("mock_driver: skipped: the backend does not start on the mock: %s\n",
           hlo_status_message(st));
    hlo_status_free(st);
    return 3;
  }
  void *mock = dlopen(getenv("HLO_CUDA_LIB"), RTLD_NOW | RTLD_NOLOAD);
  CHECK(mock != NULL);
  if (!mock) return 1;
  char dir[] = "/tmp/hlo-cuda-window-XXXXXX";
  CHECK(mkdtemp(dir) != NULL);
  g_host = build_host_kernels(dir);
  rmdir(dir);
  if (!g_host) return 1;
  *(void **)&g_set_thread = dlsym(g_host, "wk_host_thread");
  void **hook = dlsym(mock, "mock_hook");
  int *launches = dlsym(mock, "mock_launches"), *modules = dlsym(mock, "mock_modules");
  CHECK(g_set_thread && hook && launches && modules);
  if (!g_set_thread || !hook || !launches || !modules) return 1;
  *(mock_hook_fn *)hook = emulate_launch;
  /* with the backend started, window_takes loads the type's kernels */
  backend_window w1;
  memset(&w1, 0, sizeof w1);
  w1.dtype = HLO_F16;
  w1.rank = 1;
  w1.operand_dims[0] = w1.window_out_dims[0] = 4;
  w1.window_dimensions[0] = w1.window_strides[0] = w1.base_dilations[0] = 1;
  w1.window_dilations[0] = 1;
  CHECK_EQ_INT(*modules, 0);
  CHECK(cuda_window_takes(&w1));
  CHECK_EQ_INT(*modules, 1);
  CHECK(cuda_window_takes(&w1));
  CHECK_EQ_INT(*modules, 1);
  /* first uses from several threads at once: each type loaded once */
  static const hlo_dtype tt[6] = {HLO_F32, HLO_I32, HLO_F32, HLO_UI8, HLO_I32, HLO_F32};
  backend_window tw[6];
  pthread_t th[6];
  for (int i = 0; i < 6; i++) {
    tw[i] = w1;
    tw[i].dtype = tt[i];
    CHECK(pthread_create(&th[i], NULL, takes_thread, &tw[i]) == 0);
  }
  for (int i = 0; i < 6; i++) CHECK(pthread_join(th[i], NULL) == 0);
  for (int i = 0; i < 6; i++) CHECK(tw[i].rank == 100); /* every answer was true */
  CHECK_EQ_INT(*modules, 4);
  make_cases();
  int expect = 0;
  for (int i = 0; i < num_cases; i++)
    expect += (cases[i].w.kind == BACKEND_SELECT_AND_SCATTER ? cases[i].n_x : cases[i].n_out) > 0;
  printf("mock driver: the backend's window slots are %s\n",
         be->reduce_window ? "cuda_window.h's" : "not wired yet (the host mirror runs them)");
  CHECK_EQ_INT(run_on_backend(be, "mock driver"), 0);
  CHECK_EQ_INT(*launches, expect); /* one launch a case, none for an empty result */
  int types = 0; /* the element types of the cases: one module each, loaded once */
  for (int t = 0; t < HLO_DTYPE_COUNT; t++)
    for (int i = 0; i < num_cases; i++)
      if (cases[i].w.dtype == (hlo_dtype)t) {
        types++;
        break;
      }
  CHECK_EQ_INT(*modules, types);
  CHECK_EQ_INT(g_bad_launches, 0);
  /* wrong kind: an error before anything is launched */
  hlo_status e = cuda_select_and_scatter(&cases[0].w, NULL, NULL, NULL, NULL);
  CHECK(e && hlo_status_code_of(e) == HLO_UNIMPLEMENTED);
  hlo_status_free(e);
  CHECK_EQ_INT(*launches, expect);
  dlclose(g_host);
  return test_failed_checks ? 1 : 0;
}

TEST(mock_driver) {
  if (getenv("HLO_CUDA_WINDOW_CHILD")) {
    int rc = mock_child();
    fflush(stdout);
    fflush(stderr);
    _exit(rc);
  }
  char lib[4096];
  bool have = cuda_mock_path("mock_driver", lib, sizeof lib);
  CHECK(have);
  if (have) {
    fflush(stdout);
    fflush(stderr);
    pid_t pid = fork();
    CHECK(pid >= 0);
    if (pid == 0) {
      setenv("HLO_CUDA_WINDOW_CHILD", "1", 1);
      setenv("HLO_CUDA_LIB", lib, 1);
      char *argv[] = {(char *)"test_cuda_window", NULL};
      execv("/proc/self/exe", argv);
      _exit(99);
    }
    int ws = 0;
    CHECK(pid > 0 && waitpid(pid, &ws, 0) == pid);
    int code = WIFEXITED(ws) ? WEXITSTATUS(ws) : 100 + (WIFSIGNALED(ws) ? WTERMSIG(ws) : 0);
    if (code != 0 && code != 3) fprintf(stderr, "mock_driver: the child exited with %d\n", code);
    CHECK(code == 0 || code == 3);
  }
}

/* Frees the cases (last test). */
TEST(zz_free_cases) {
  for (int i = 0; i < num_cases; i++) {
    free(cases[i].x);
    free(cases[i].src);
    free(cases[i].init);
    free(cases[i].ref);
  }
  num_cases = 0;
}

TEST_MAIN()
