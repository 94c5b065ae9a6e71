/* conv_onednn.c — the convolutions oneDNN's own primitives compute faster
 * than im2col + GEMM (bench/CONV.md: its JIT direct convolutions, about 2x
 * on the convolutions of a CNN training step), for cpu_conv (conv.h).
 *
 * Two forms of an f32 stablehlo.convolution map onto oneDNN primitives,
 * the operands read and written in place in their own layouts (oneDNN
 * memory descriptors with the operands' strides), only the kernel taken
 * through oneDNN's preferred (blocked) weights layout by a reorder:
 *   - forward: a convolution_forward (lhs = src, rhs = weights, result =
 *     dst; feature groups are oneDNN groups);
 *   - backward filter: a stablehlo convolution whose window is larger than
 *     its result (what JAX emits for a weight gradient: lhs [f, 0, 1, b],
 *     rhs [i, 0, 1, o], result [0, 1, b, f]) is oneDNN's
 *     convolution_backward_weights with the roles swapped: src = lhs with
 *     its feature dim as oneDNN's batch and its batch dim as the channels,
 *     diff_dst = rhs (input feature dim as batch), diff_weights = result;
 *     oneDNN's strides are the rhs_dilation, its dilations the window
 *     strides (minus one). Checked: with d[oc][ic][kh] = sum over n, oh of
 *     src[n][ic][oh*S + kh*D - pad] * diff_dst[n][oc][oh], S = rhs_dilation,
 *     D = window_strides, this is the spec's sum with oh the window index.
 * Both need lhs_dilation 1, no window reversal, padding >= 0, batch_group
 * 1, 1 to 3 spatial dims, no empty dim; oneDNN must accept the shapes and
 * pick one of its JIT direct implementations (for the standard layouts:
 * NHWC / NCHW data, any kernel layout). Anything else goes to im2col.
 *
 * Threads ("pieces"), as gemm.h does for GEMMs: every primitive runs on
 * one thread (OpenMP team size 1), and the parallelism is hlo's thread
 * pool's. When the batch (oneDNN's: the true batch in both forms) has at
 * least two pieces per thread, it is cut into about four pieces per
 * thread, each run by a one-thread primitive (user-managed scratchpad, one
 * per piece), the pool handing pieces to threads as they come; the
 * backward filter's pieces write partial weights that are summed, in piece
 * order, at the end. A smaller batch runs on the calling thread alone.
 * Why not oneDNN's own OpenMP team: it splits a primitive's work statically
 * and meets at barriers, so on a machine shared with other jobs one
 * preempted thread stalls the whole convolution for a scheduler slice
 * (bench/CONV.md: 80 ms instead of 2 ms with one busy core beside it);
 * pieces degrade to one core's speed instead. And a oneDNN primitive must
 * run with the OpenMP team size it was made with (else its barriers wait:
 * measured 15 ms for a 3x3x16x32 reorder), so every primitive is made and
 * run under omp_set_num_threads(1).
 *
 * Primitives are made once per description (creating one costs
 * milliseconds) and kept in a process-wide cache (a mutex-guarded list;
 * entries live until exit). Execution is thread-safe: each call makes its
 * own streams and memory objects; reordered weights, partial weights and
 * scratchpads live in the caller's scratch. Environment (for measuring):
 * HLO_CONV_NO_ONEDNN=1 leaves every convolution to im2col;
 * HLO_CONV_ONEDNN_NO_PIECES=1 never cuts pieces (one thread; read when a
 * description is first seen). */
#include <dlfcn.h>
#include <oneapi/dnnl/dnnl.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include "backend/cpu/conv.h"
#include "backend/cpu/gemm.h"
#include "support/status.h"
#include "support/thread_pool.h"

typedef enum onednn_form { FORM_NONE, FORM_FORWARD, FORM_BACKWARD_WEIGHTS } onednn_form;

enum { KEY_LEN = 8 + 3 * BACKEND_CONV_MAX_RANK + 3 * BACKEND_CONV_MAX_SPATIAL + 6 +
                 6 * BACKEND_CONV_MAX_SPATIAL };

/* The descriptors of one primitive's operands (oneDNN's dim order:
 * batch, channels, spatial; the weights' layout oneDNN chose). */
typedef struct onednn_mds {
  dnnl_memory_desc_t lhs, rhs, out, w;
} onednn_mds;

typedef struct onednn_conv {
  int64_t key[KEY_LEN];
  onednn_form form;              /* FORM_NONE: oneDNN does not take it */
  dnnl_primitive_t conv, reorder; /* reorder: user -> oneDNN weights (forward),
                                     oneDNN -> user diff weights (backward); NULL: none */
  onednn_mds md;                 /* of `conv` (the whole batch) */
  size_t w_bytes;                /* bytes of md.w */
  /* pieces: the batch (oneDNN's) cut into npieces pieces of piece_n, each
   * run by a one-thread primitive on the thread pool (chunks claimed as
   * threads come: a thread the OS preempts delays nobody; bench/CONV.md).
   * Backward filter: each piece's partial weights in its own buffer,
   * summed at the end. NULL piece: the whole-batch primitive, one thread. */
  dnnl_primitive_t piece;
  onednn_mds pmd;
  int64_t piece_n, npieces;
  int64_t lhs_n_stride, rhs_n_stride, out_n_stride; /* elements per batch entry */
  size_t pad_bytes;              /* the piece primitive's scratchpad, per piece */
  struct onednn_conv *next;
} onednn_conv;

static pthread_mutex_t cache_mu = PTHREAD_MUTEX_INITIALIZER;
static onednn_conv *cache;
static dnnl_engine_t engine;
static pthread_once_t engine_once = PTHREAD_ONCE_INIT;
static void (*omp_set_num_threads_fn)(int);

static void engine_init(void) {
  if (dnnl_engine_create(&engine, dnnl_cpu, 0) != dnnl_success) engine = NULL;
  *(void **)&omp_set_num_threads_fn = dlsym(RTLD_DEFAULT, "omp_set_num_threads");
}

/* Everything of `c` but its location, as integers. */
static void make_key(const backend_conv *c, int64_t *k) {
  memset(k, 0, KEY_LEN * sizeof *k);
  int n = 0;
  k[n++] = c->lhs_dtype, k[n++] = c->rhs_dtype, k[n++] = c->result_dtype, k[n++] = c->rank;
  k[n++] = c->feature_group_count, k[n++] = c->batch_group_count;
  k[n++] = c->input_batch_dimension * 64 + c->input_feature_dimension;
  k[n++] = (c->kernel_input_feature_dimension * 64 + c->kernel_output_feature_dimension) * 64 * 64 +
           c->output_batch_dimension * 64 + c->output_feature_dimension;
  for (int i = 0; i < BACKEND_CONV_MAX_RANK; i++) {
    k[n++] = c->lhs_dims[i];
    k[n++] = c->rhs_dims[i];
    k[n++] = c->result_dims[i];
  }
  for (int s = 0; s < BACKEND_CONV_MAX_SPATIAL; s++) {
    k[n++] = c->input_spatial_dimensions[s];
    k[n++] = c->kernel_spatial_dimensions[s];
    k[n++] = c->output_spatial_dimensions[s];
    k[n++] = c->window_strides[s], k[n++] = c->padding_low[s], k[n++] = c->padding_high[s];
    k[n++] = c->lhs_dilation[s], k[n++] = c->rhs_dilation[s], k[n++] = c->window_reversal[s];
  }
  k[n++] = c->precision[0] * 4 + c->precision[1];
}

static int64_t dstride(const int64_t *dims, uint32_t rank, uint32_t d) {
  int64_t s = 1;
  for (uint32_t i = d + 1; i < rank; i++) s *= dims[i];
  return s;
}

/* A oneDNN descriptor over the operand shaped `shape` whose dim roles are
 * `roles` (oneDNN's dim r is the operand's dim roles[r]), its first dim cut
 * to n0 entries when n0 > 0. */
static bool strided_md(dnnl_memory_desc_t *md, const int64_t *shape, uint32_t rank,
                       const uint32_t *roles, int nd, int64_t n0) {
  dnnl_dims_t dims, strides;
  for (int r = 0; r < nd; r++) {
    dims[r] = shape[roles[r]];
    strides[r] = dstride(shape, rank, roles[r]);
  }
  if (n0 > 0) dims[0] = n0;
  return dnnl_memory_desc_init_by_strides(md, nd, dims, dnnl_f32, strides) == dnnl_success;
}

/* Whether the implementation oneDNN picked is one of its JIT direct
 * convolutions ("jit:...", "brgconv:..."): its reference one is slow, and
 * its GEMM-based one ("gemm:jit") no faster than im2col + GEMM here
 * (bench/CONV.md). */
static bool fast_impl(const_dnnl_primitive_desc_t pd) {
  const char *impl = NULL;
  if (dnnl_primitive_desc_query(pd, dnnl_query_impl_info_str, 0, &impl) != dnnl_success || !impl)
    return false;
  return !strncmp(impl, "jit", 3) || !strncmp(impl, "brg", 3);
}

/* How `c` maps onto oneDNN (see the header comment). */
typedef struct onednn_map {
  bool bwd;
  int nd;
  int64_t G;
  uint32_t lr[2 + BACKEND_CONV_MAX_SPATIAL], kr[2 + BACKEND_CONV_MAX_SPATIAL],
      orr[2 + BACKEND_CONV_MAX_SPATIAL];
  dnnl_dims_t strides, dilates, pad_l, pad_r;
} onednn_map;

/* The descriptors of the operands for a batch of n0 (<= 0: all). */
static bool make_mds(const backend_conv *c, const onednn_map *mp, int64_t n0, onednn_mds *md) {
  uint32_t R = c->rank;
  int nd = mp->nd;
  if (!strided_md(&md->lhs, c->lhs_dims, R, mp->lr, nd, n0) ||
      !strided_md(&md->out, c->result_dims, R, mp->orr, nd, mp->bwd ? 0 : n0))
    return false;
  if (mp->G > 1) { /* grouped weights: (G, O/G, I/G, spatial...) */
    dnnl_dims_t dims, st;
    int64_t og = c->rhs_dims[c->kernel_output_feature_dimension] / mp->G;
    int64_t so = dstride(c->rhs_dims, R, c->kernel_output_feature_dimension);
    dims[0] = mp->G, st[0] = og * so;
    dims[1] = og, st[1] = so;
    for (int r = 1; r < nd; r++) {
      dims[r + 1] = c->rhs_dims[mp->kr[r]];
      st[r + 1] = dstride(c->rhs_dims, R, mp->kr[r]);
    }
    return dnnl_memory_desc_init_by_strides(&md->rhs, nd + 1, dims, dnnl_f32, st) == dnnl_success;
  }
  return strided_md(&md->rhs, c->rhs_dims, R, mp->kr, nd, mp->bwd ? n0 : 0);
}

/* The convolution primitive over a batch of n0 (<= 0: all) into *out,
 * oneDNN's weights layout into md->w; with `user_pad` its scratchpad is
 * passed in (size into *pad_bytes). False when oneDNN refuses or picks no
 * JIT implementation. */
static bool make_conv(const backend_conv *c, const onednn_map *mp, int64_t n0, bool user_pad,
                      onednn_mds *md, dnnl_primitive_t *out, size_t *pad_bytes) {
  *out = NULL;
  if (!make_mds(c, mp, n0, md)) return false;
  const dnnl_memory_desc_t *user_w = mp->bwd ? &md->out : &md->rhs;
  dnnl_memory_desc_t any_w;
  if (dnnl_memory_desc_init_by_tag(&any_w, user_w->ndims, user_w->dims, dnnl_f32,
                                   dnnl_format_tag_any) != dnnl_success)
    return false;
  dnnl_primitive_attr_t attr = NULL;
  if (user_pad && (dnnl_primitive_attr_create(&attr) != dnnl_success ||
                   dnnl_primitive_attr_set_scratchpad_mode(attr, dnnl_scratchpad_mode_user) !=
                       dnnl_success)) {
    if (attr) dnnl_primitive_attr_destroy(attr);
    return false;
  }
  dnnl_convolution_desc_t fd, bd;
  dnnl_primitive_desc_t fpd = NULL, pd = NULL;
  /* forward_training, not _inference: the same result, but oneDNN 2.6's
   * brgconv takes a path 40x slower for inference with one input channel
   * (bench/CONV.md). Backward: src = lhs, diff_dst = rhs, after the
   * forward hint oneDNN asks for. */
  const dnnl_memory_desc_t *fdst = mp->bwd ? &md->rhs : &md->out;
  bool ok = dnnl_dilated_convolution_forward_desc_init(
                &fd, dnnl_forward_training, dnnl_convolution_direct, &md->lhs, &any_w, NULL, fdst,
                mp->strides, mp->dilates, mp->pad_l, mp->pad_r) == dnnl_success;
  if (ok && !mp->bwd) {
    ok = dnnl_primitive_desc_create(&pd, &fd, attr, engine, NULL) == dnnl_success;
  } else if (ok) {
    ok = dnnl_primitive_desc_create(&fpd, &fd, NULL, engine, NULL) == dnnl_success &&
         dnnl_dilated_convolution_backward_weights_desc_init(
             &bd, dnnl_convolution_direct, &md->lhs, &any_w, NULL, &md->rhs, mp->strides,
             mp->dilates, mp->pad_l, mp->pad_r) == dnnl_success &&
         dnnl_primitive_desc_create(&pd, &bd, attr, engine, fpd) == dnnl_success;
  }
  ok = ok && fast_impl(pd);
  const dnnl_memory_desc_t *w =
      ok ? dnnl_primitive_desc_query_md(
               pd, mp->bwd ? dnnl_query_diff_weights_md : dnnl_query_weights_md, 0)
         : NULL;
  if (w) md->w = *w;
  const dnnl_memory_desc_t *pad = w && user_pad ? dnnl_primitive_desc_query_md(pd, dnnl_query_scratchpad_md, 0) : NULL;
  *pad_bytes = pad ? dnnl_memory_desc_get_size(pad) : 0;
  ok = w && dnnl_primitive_create(out, pd) == dnnl_success;
  if (!ok) *out = NULL;
  if (fpd) dnnl_primitive_desc_destroy(fpd);
  if (pd) dnnl_primitive_desc_destroy(pd);
  if (attr) dnnl_primitive_attr_destroy(attr);
  return ok;
}

/* Scratch the pieces may use for partial weights (backward filter). */
#define PIECES_SCRATCH_MAX ((size_t)16 << 20)

/* The primitives for `c` into e (e->form stays FORM_NONE when oneDNN does
 * not take it). */
static void build(const backend_conv *c, onednn_conv *e) {
  uint32_t S = c->num_spatial;
  if (!engine || !conv_all_dtype(c, HLO_F32) || S < 1 || S > 3 || c->batch_group_count != 1 ||
      conv_lhs_elements(c) == 0 || conv_rhs_elements(c) == 0 || conv_result_elements(c) == 0)
    return;
  int64_t ksp = 1, osp = 1;
  for (uint32_t s = 0; s < S; s++) {
    if (c->lhs_dilation[s] != 1 || c->window_reversal[s] || c->padding_low[s] < 0 ||
        c->padding_high[s] < 0)
      return;
    ksp *= c->rhs_dims[c->kernel_spatial_dimensions[s]];
    osp *= c->result_dims[c->output_spatial_dimensions[s]];
  }
  onednn_map mp;
  memset(&mp, 0, sizeof mp);
  mp.G = c->feature_group_count;
  mp.bwd = ksp > osp && mp.G == 1;
  mp.nd = (int)(2 + S);
  bool bwd = mp.bwd;
  for (uint32_t s = 0; s < S; s++) {
    mp.strides[s] = bwd ? c->rhs_dilation[s] : c->window_strides[s];
    mp.dilates[s] = (bwd ? c->window_strides[s] : c->rhs_dilation[s]) - 1;
    mp.pad_l[s] = c->padding_low[s];
    mp.pad_r[s] = c->padding_high[s];
  }
  mp.lr[0] = bwd ? c->input_feature_dimension : c->input_batch_dimension;
  mp.lr[1] = bwd ? c->input_batch_dimension : c->input_feature_dimension;
  mp.kr[0] = bwd ? c->kernel_input_feature_dimension : c->kernel_output_feature_dimension;
  mp.kr[1] = bwd ? c->kernel_output_feature_dimension : c->kernel_input_feature_dimension;
  mp.orr[0] = bwd ? c->output_feature_dimension : c->output_batch_dimension;
  mp.orr[1] = bwd ? c->output_batch_dimension : c->output_feature_dimension;
  for (uint32_t s = 0; s < S; s++) {
    mp.lr[2 + s] = c->input_spatial_dimensions[s];
    mp.kr[2 + s] = c->kernel_spatial_dimensions[s];
    mp.orr[2 + s] = c->output_spatial_dimensions[s];
  }
  size_t unused;
  if (!make_conv(c, &mp, 0, false, &e->md, &e->conv, &unused)) return;
  e->w_bytes = dnnl_memory_desc_get_size(&e->md.w);
  e->form = bwd ? FORM_BACKWARD_WEIGHTS : FORM_FORWARD;
  /* pieces: about four per thread, the batch cut evenly */
  int threads = cpu_gemm_threads();
  int64_t N = c->lhs_dims[mp.lr[0]], pn = N / (4 * (int64_t)threads);
  if (pn < 1) pn = 1;
  while (N % pn) pn--;
  e->lhs_n_stride = dstride(c->lhs_dims, c->rank, mp.lr[0]);
  e->rhs_n_stride = dstride(c->rhs_dims, c->rank, mp.kr[0]);
  e->out_n_stride = dstride(c->result_dims, c->rank, mp.orr[0]);
  if (threads >= 2 && N / pn >= 2 * (int64_t)threads && !getenv("HLO_CONV_ONEDNN_NO_PIECES") &&
      !(bwd && (size_t)(N / pn) * (e->w_bytes + 64) > PIECES_SCRATCH_MAX)) {
    bool ok = make_conv(c, &mp, pn, true, &e->pmd, &e->piece, &e->pad_bytes) &&
              dnnl_memory_desc_equal(&e->pmd.w, &e->md.w);
    if (!ok && e->piece) dnnl_primitive_destroy(e->piece);
    if (!ok) e->piece = NULL;
    e->piece_n = pn;
    e->npieces = N / pn;
    e->pad_bytes = (e->pad_bytes + 63) & ~(size_t)63;
  }
  /* the weights' reorder (one thread, as every primitive here) */
  const dnnl_memory_desc_t *user_w = bwd ? &e->md.out : &e->md.rhs;
  if (!dnnl_memory_desc_equal(&e->md.w, user_w)) {
    dnnl_primitive_desc_t rpd = NULL;
    bool ok = (bwd ? dnnl_reorder_primitive_desc_create(&rpd, &e->md.w, engine, user_w, engine,
                                                        NULL)
                   : dnnl_reorder_primitive_desc_create(&rpd, user_w, engine, &e->md.w, engine,
                                                        NULL)) == dnnl_success &&
              dnnl_primitive_create(&e->reorder, rpd) == dnnl_success;
    if (rpd) dnnl_primitive_desc_destroy(rpd);
    if (!ok) { /* no oneDNN after all */
      dnnl_primitive_destroy(e->conv);
      if (e->piece) dnnl_primitive_destroy(e->piece);
      e->conv = e->reorder = e->piece = NULL;
      e->form = FORM_NONE;
    }
  }
}

/* The cache entry of `c`, made on first use; NULL only when out of memory. */
static const onednn_conv *lookup(const backend_conv *c) {
  pthread_once(&engine_once, engine_init);
  /* oneDNN sizes a primitive's work split by the OpenMP team of the thread
   * that makes it, and it must run with that team: one thread, always */
  if (omp_set_num_threads_fn) omp_set_num_threads_fn(1);
  int64_t key[KEY_LEN];
  make_key(c, key);
  pthread_mutex_lock(&cache_mu);
  onednn_conv *e = cache;
  while (e && memcmp(e->key, key, sizeof key)) e = e->next;
  if (!e && (e = calloc(1, sizeof *e))) {
    memcpy(e->key, key, sizeof key);
    build(c, e);
    e->next = cache;
    cache = e;
  }
  pthread_mutex_unlock(&cache_mu);
  return e;
}

bool cpu_conv_onednn_takes(const backend_conv *c) {
  if (!conv_all_dtype(c, HLO_F32) || getenv("HLO_CONV_NO_ONEDNN")) return false;
  const onednn_conv *e = lookup(c);
  return e && e->form != FORM_NONE;
}

static size_t round64(size_t n) { return (n + 63) & ~(size_t)63; }

/* Scratch layout: [weights in oneDNN's layout, when reordered | the
 * pieces' partial weights (backward filter) | the pieces' scratchpads]. */
size_t cpu_conv_onednn_scratch_bytes(const backend_conv *c) {
  const onednn_conv *e = cpu_conv_onednn_takes(c) ? lookup(c) : NULL;
  if (!e) return 0;
  size_t w = e->reorder ? round64(e->w_bytes) : 0;
  if (!e->piece) return w;
  size_t partials = e->form == FORM_BACKWARD_WEIGHTS ? (size_t)e->npieces * round64(e->w_bytes) : 0;
  return w + partials + (size_t)e->npieces * e->pad_bytes;
}

/* Runs `prim` with args[0..n) on a new stream; false on failure. */
static bool run_prim(dnnl_primitive_t prim, int n, const dnnl_exec_arg_t *args) {
  dnnl_stream_t stream = NULL;
  bool ok = dnnl_stream_create(&stream, engine, dnnl_stream_default_flags) == dnnl_success &&
            dnnl_primitive_execute(prim, stream, n, args) == dnnl_success &&
            dnnl_stream_wait(stream) == dnnl_success;
  if (stream) dnnl_stream_destroy(stream);
  return ok;
}

/* Runs `prim` on memories over md[i] at ptr[i] (arg kinds kind[i]). */
static bool run_on(dnnl_primitive_t prim, int n, const int *kind,
                   const dnnl_memory_desc_t *const *md, void *const *ptr) {
  dnnl_memory_t m[5] = {NULL};
  dnnl_exec_arg_t a[5];
  bool ok = true;
  for (int i = 0; i < n && ok; i++) {
    ok = dnnl_memory_create(&m[i], md[i], engine, ptr[i]) == dnnl_success;
    a[i].arg = kind[i];
    a[i].memory = m[i];
  }
  ok = ok && run_prim(prim, n, a);
  for (int i = 0; i < n; i++)
    if (m[i]) dnnl_memory_destroy(m[i]);
  return ok;
}

typedef struct piece_job {
  const onednn_conv *e;
  const float *lhs, *rhs, *w;    /* w: forward weights (oneDNN's layout) */
  float *out;
  char *partials, *pads;
  _Atomic bool failed;
} piece_job;

static void run_pieces(void *ctx, int64_t begin, int64_t end) {
  piece_job *j = ctx;
  const onednn_conv *e = j->e;
  if (omp_set_num_threads_fn) omp_set_num_threads_fn(1);
  for (int64_t i = begin; i < end; i++) {
    int64_t n0 = i * e->piece_n;
    void *pad = j->pads + (size_t)i * e->pad_bytes;
    bool ok;
    if (e->form == FORM_FORWARD) {
      const int kind[4] = {DNNL_ARG_SRC, DNNL_ARG_WEIGHTS, DNNL_ARG_DST, DNNL_ARG_SCRATCHPAD};
      const dnnl_memory_desc_t *pad_md = NULL;
      dnnl_memory_desc_t pmd;
      dnnl_dims_t d = {(int64_t)e->pad_bytes};
      ok = dnnl_memory_desc_init_by_tag(&pmd, 1, d, dnnl_u8, dnnl_a) == dnnl_success;
      pad_md = &pmd;
      const dnnl_memory_desc_t *mds[4] = {&e->pmd.lhs, &e->pmd.w, &e->pmd.out, pad_md};
      void *ptr[4] = {(void *)(j->lhs + n0 * e->lhs_n_stride), (void *)j->w,
                      j->out + n0 * e->out_n_stride, pad};
      ok = ok && run_on(e->piece, e->pad_bytes ? 4 : 3, kind, mds, ptr);
    } else {
      const int kind[4] = {DNNL_ARG_SRC, DNNL_ARG_DIFF_DST, DNNL_ARG_DIFF_WEIGHTS,
                           DNNL_ARG_SCRATCHPAD};
      dnnl_memory_desc_t pmd;
      dnnl_dims_t d = {(int64_t)e->pad_bytes};
      ok = dnnl_memory_desc_init_by_tag(&pmd, 1, d, dnnl_u8, dnnl_a) == dnnl_success;
      const dnnl_memory_desc_t *mds[4] = {&e->pmd.lhs, &e->pmd.rhs, &e->pmd.w, &pmd};
      void *ptr[4] = {(void *)(j->lhs + n0 * e->lhs_n_stride),
                      (void *)(j->rhs + n0 * e->rhs_n_stride),
                      j->partials + (size_t)i * round64(e->w_bytes), pad};
      ok = ok && run_on(e->piece, e->pad_bytes ? 4 : 3, kind, mds, ptr);
    }
    if (!ok) j->failed = true;
  }
}

hlo_status cpu_conv_onednn(const backend_conv *c, const void *lhs, const void *rhs, void *output,
                           void *scratch) {
  const onednn_conv *e = cpu_conv_onednn_takes(c) ? lookup(c) : NULL;
  if (!e)
    return status_at(HLO_UNIMPLEMENTED, &c->loc, "convolution: oneDNN does not take this form");
  if (omp_set_num_threads_fn) omp_set_num_threads_fn(1);
  bool bwd = e->form == FORM_BACKWARD_WEIGHTS;
  char *wbuf = e->reorder ? scratch : NULL;
  char *partials = (char *)scratch + (e->reorder ? round64(e->w_bytes) : 0);
  bool ok = true;
  /* forward: the weights into oneDNN's layout first */
  if (!bwd && e->reorder) {
    const int kind[2] = {DNNL_ARG_FROM, DNNL_ARG_TO};
    const dnnl_memory_desc_t *mds[2] = {&e->md.rhs, &e->md.w};
    void *ptr[2] = {(void *)rhs, wbuf};
    ok = run_on(e->reorder, 2, kind, mds, ptr);
  }
  if (ok && e->piece) {
    size_t part_bytes = bwd ? (size_t)e->npieces * round64(e->w_bytes) : 0;
    piece_job j = {e, lhs, rhs, e->reorder ? (const float *)wbuf : rhs, output, partials,
                   partials + part_bytes, false};
    thread_pool *tp = thread_pool_global();
    thread_pool_parallel_for(tp, e->npieces, e->npieces, run_pieces, &j);
    ok = !j.failed;
    if (ok && bwd) { /* the partial weights summed into the first, in piece order */
      float *acc = (float *)partials;
      size_t n = e->w_bytes / sizeof(float);
      for (int64_t i = 1; i < e->npieces; i++) {
        const float *p = (const float *)(partials + (size_t)i * round64(e->w_bytes));
        for (size_t k = 0; k < n; k++) acc[k] += p[k];
      }
      if (e->reorder) {
        const int kind[2] = {DNNL_ARG_FROM, DNNL_ARG_TO};
        const dnnl_memory_desc_t *mds[2] = {&e->md.w, &e->md.out};
        void *ptr[2] = {acc, output};
        ok = run_on(e->reorder, 2, kind, mds, ptr);
      } else {
        memcpy(output, acc, e->w_bytes);
      }
    }
  } else if (ok && !bwd) {
    const int kind[3] = {DNNL_ARG_SRC, DNNL_ARG_WEIGHTS, DNNL_ARG_DST};
    const dnnl_memory_desc_t *mds[3] = {&e->md.lhs, e->reorder ? &e->md.w : &e->md.rhs,
                                        &e->md.out};
    void *ptr[3] = {(void *)lhs, e->reorder ? (void *)wbuf : (void *)rhs, output};
    ok = run_on(e->conv, 3, kind, mds, ptr);
  } else if (ok) {
    const int kind[3] = {DNNL_ARG_SRC, DNNL_ARG_DIFF_DST, DNNL_ARG_DIFF_WEIGHTS};
    const dnnl_memory_desc_t *mds[3] = {&e->md.lhs, &e->md.rhs,
                                        e->reorder ? &e->md.w : &e->md.out};
    void *ptr[3] = {(void *)lhs, (void *)rhs, e->reorder ? (void *)wbuf : output};
    ok = run_on(e->conv, 3, kind, mds, ptr);
    if (ok && e->reorder) {
      const int rk[2] = {DNNL_ARG_FROM, DNNL_ARG_TO};
      const dnnl_memory_desc_t *rm[2] = {&e->md.w, &e->md.out};
      void *rp[2] = {wbuf, output};
      ok = run_on(e->reorder, 2, rk, rm, rp);
    }
  }
  if (!ok)
    return status_at(HLO_INTERNAL, &c->loc, "convolution: a oneDNN primitive failed to run");
  return NULL;
}
