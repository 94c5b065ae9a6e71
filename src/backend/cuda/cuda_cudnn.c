/* cuda_cudnn.c — convolutions through cuDNN 9 (cuda_cudnn.h). */
#include "backend/cuda/cuda_cudnn.h"
#include <dlfcn.h>
#include <limits.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "support/status.h"

/* ------------------------------------------------------------ the load */

static cudnn_api g_api;
static hlo_status_code g_load_code;
static char g_load_message[2048];
static pthread_once_t g_load_once = PTHREAD_ONCE_INIT;

#define CUDNN_API_NAME(name, ret, params) #name,
static const char *const cudnn_names[] = {CUDNN_FUNCTIONS(CUDNN_API_NAME)};

static void append_tried(char *buf, size_t cap, const char *path, const char *why) {
  size_t n = strlen(buf);
  if (n < cap) snprintf(buf + n, cap - n, "%s%s (%s)", n ? "; " : "", path, why);
}

static void *try_open(const char *path, char *tried, size_t cap) {
  void *lib = dlopen(path, RTLD_NOW | RTLD_LOCAL);
  if (!lib) {
    const char *e = dlerror();
    append_tried(tried, cap, path, e ? e : "not found");
  }
  return lib;
}

static void load_cudnn(void) {
  char tried[1536] = "";
  const char *env = getenv("HLO_CUDNN_LIB");
  const char *names[2] = {"libcudnn.so.9", "libcudnn.so"};
  void *lib = NULL;
  char path[1024] = "";
  const char *drv = getenv("HLO_CUDA_LIB");
  if ((!env || !*env) && drv && *drv) {
    /* a driver chosen by path (the unit tests' mock): a system cuDNN would
     * run on the real driver, beside it; only HLO_CUDNN_LIB then */
    g_load_code = HLO_UNAVAILABLE;
    snprintf(g_load_message, sizeof g_load_message, "cuDNN 9 not looked for: HLO_CUDA_LIB names "
             "the driver (%.900s), so only HLO_CUDNN_LIB names a cuDNN", drv);
    return;
  }
  if (env && *env) {
    lib = try_open(env, tried, sizeof tried);
    if (lib) snprintf(path, sizeof path, "%s", env);
  } else {
    for (int i = 0; i < 2 && !lib; i++)
      if ((lib = try_open(names[i], tried, sizeof tried))) snprintf(path, sizeof path, "%s", names[i]);
    const char *dirs = getenv("HLO_CUDNN_DIR");
    while (!lib && dirs && *dirs) {
      const char *end = strchr(dirs, ':');
      size_t len = end ? (size_t)(end - dirs) : strlen(dirs);
      for (int i = 0; i < 2 && !lib && len; i++) {
        char p[1024];
        int w = snprintf(p, sizeof p, "%.*s/%s", (int)len, dirs, names[i]);
        if (w > 0 && (size_t)w < sizeof p && (lib = try_open(p, tried, sizeof tried)))
          snprintf(path, sizeof path, "%s", p);
      }
      dirs = end ? end + 1 : NULL;
    }
  }
  if (!lib) {
    g_load_code = HLO_UNAVAILABLE;
    snprintf(g_load_message, sizeof g_load_message, "cuDNN 9 did not load: tried %s", tried);
    return;
  }
  void *slots[sizeof cudnn_names / sizeof *cudnn_names];
  for (size_t i = 0; i < sizeof slots / sizeof *slots; i++) {
    dlerror();
    slots[i] = dlsym(lib, cudnn_names[i]);
    if (!slots[i]) {
      g_load_code = HLO_UNAVAILABLE;
      snprintf(g_load_message, sizeof g_load_message, "cuDNN (%s) lacks %s", path, cudnn_names[i]);
      dlclose(lib);
      return;
    }
  }
  size_t i = 0;
#define CUDNN_API_SET(name, ret, params) memcpy(&g_api.name, &slots[i++], sizeof(void *));
  CUDNN_FUNCTIONS(CUDNN_API_SET)
#undef CUDNN_API_SET
  g_api.version = g_api.cudnnGetVersion();
  snprintf(g_api.path, sizeof g_api.path, "%s", path);
  if (g_api.version < 90000) {
    g_load_code = HLO_UNAVAILABLE;
    snprintf(g_load_message, sizeof g_load_message, "cuDNN (%s) is version %zu: 9 or later needed",
             path, g_api.version);
    return; /* kept loaded: symbols may be in use nowhere, harmless */
  }
  g_load_code = HLO_OK;
}

hlo_status cudnn_load(const cudnn_api **out) {
  pthread_once(&g_load_once, load_cudnn);
  if (g_load_code != HLO_OK) return status_new(g_load_code, "%s", g_load_message);
  *out = &g_api;
  return NULL;
}

/* ------------------------------------------------------------ settings */

static int env_mode(void) { /* -1 unset / other, 0 off, 1 forced */
  static int mode = -2;
  int v = __atomic_load_n(&mode, __ATOMIC_RELAXED);
  if (v == -2) {
    const char *e = getenv("HLO_CUDNN");
    v = e && !strcmp(e, "0") ? 0 : e && !strcmp(e, "1") ? 1 : -1;
    __atomic_store_n(&mode, v, __ATOMIC_RELAXED);
  }
  return v;
}

bool cuda_cudnn_allowed(void) { return env_mode() != 0; }
bool cuda_cudnn_forced(void) { return env_mode() == 1; }

/* Whether plans time the algorithms (cudnnFind*): unless HLO_CUDNN_FIND=0. */
static bool find_enabled(void) {
  static int on = -1;
  int v = __atomic_load_n(&on, __ATOMIC_RELAXED);
  if (v < 0) {
    const char *e = getenv("HLO_CUDNN_FIND");
    v = !(e && !strcmp(e, "0"));
    __atomic_store_n(&on, v, __ATOMIC_RELAXED);
  }
  return v;
}

/* ------------------------------------------------------------ the mapping */

static void row_strides(const int64_t *dims, uint32_t rank, int64_t *st) {
  int64_t s = 1;
  for (uint32_t d = rank; d-- > 0;) st[d] = s, s *= dims[d];
}

/* dims / strides of operand (dims, rank) as [d0, d1, sp[0..S)] */
static void pick(const int64_t *dims, uint32_t rank, uint32_t d0, uint32_t d1, const uint32_t *sp,
                 uint32_t S, int *od, int *os) {
  int64_t st[BACKEND_CONV_MAX_RANK];
  row_strides(dims, rank, st);
  od[0] = (int)dims[d0], os[0] = (int)st[d0];
  od[1] = (int)dims[d1], os[1] = (int)st[d1];
  for (uint32_t s = 0; s < S; s++) od[2 + s] = (int)dims[sp[s]], os[2 + s] = (int)st[sp[s]];
}

/* the packed order of w for `format`: NCHW [K, C, sp], NHWC [K, sp, C] */
static bool in_format(uint32_t k0, uint32_t k1, const uint32_t *sp, uint32_t S, int format) {
  if (k0 != 0) return false;
  for (uint32_t s = 0; s < S; s++)
    if (sp[s] != (format == CUDNN_TENSOR_NCHW ? 2 + s : 1 + s)) return false;
  return k1 == (format == CUDNN_TENSOR_NCHW ? 1u : S + 1);
}

static void set_filter(cuda_cudnn_desc *d, const int64_t *dims, uint32_t rank, uint32_t k0,
                       uint32_t k1, const uint32_t *sp, uint32_t S) {
  pick(dims, rank, k0, k1, sp, S, d->w_dims, d->w_strides);
  /* x's feature dim innermost: NHWC kernels want an NHWC filter */
  bool x_nhwc = d->x_strides[1] == 1 && d->x_dims[1] > 1;
  if (in_format(k0, k1, sp, S, CUDNN_TENSOR_NCHW)) {
    d->w_format = CUDNN_TENSOR_NCHW, d->w_packed = true;
  } else if (in_format(k0, k1, sp, S, CUDNN_TENSOR_NHWC)) {
    d->w_format = CUDNN_TENSOR_NHWC, d->w_packed = true;
  } else {
    d->w_format = x_nhwc ? CUDNN_TENSOR_NHWC : CUDNN_TENSOR_NCHW, d->w_packed = false;
  }
}

static bool map_forward(const backend_conv *c, bool rev_all, cuda_cudnn_desc *d) {
  uint32_t S = c->num_spatial;
  if (c->batch_group_count != 1) return false;
  for (uint32_t s = 0; s < S; s++) {
    int64_t X = c->lhs_dims[c->input_spatial_dimensions[s]];
    int64_t K = c->rhs_dims[c->kernel_spatial_dimensions[s]];
    int64_t Y = c->result_dims[c->output_spatial_dimensions[s]];
    int64_t pl = c->padding_low[s], ek = (K - 1) * c->rhs_dilation[s] + 1;
    if (c->lhs_dilation[s] != 1 || pl < 0 || pl > INT_MAX / 4 || X + 2 * pl < ek ||
        (X + 2 * pl - ek) / c->window_strides[s] + 1 != Y)
      return false;
    d->pad[s] = (int)pl, d->stride[s] = (int)c->window_strides[s];
    d->dilation[s] = (int)c->rhs_dilation[s];
  }
  d->kind = CUDA_CUDNN_FORWARD;
  pick(c->lhs_dims, c->rank, c->input_batch_dimension, c->input_feature_dimension,
       c->input_spatial_dimensions, S, d->x_dims, d->x_strides);
  pick(c->result_dims, c->rank, c->output_batch_dimension, c->output_feature_dimension,
       c->output_spatial_dimensions, S, d->y_dims, d->y_strides);
  set_filter(d, c->rhs_dims, c->rank, c->kernel_output_feature_dimension,
             c->kernel_input_feature_dimension, c->kernel_spatial_dimensions, S);
  d->mode = rev_all ? CUDNN_CONVOLUTION : CUDNN_CROSS_CORRELATION;
  d->groups = (int)c->feature_group_count;
  return true;
}

static bool map_backward_data(const backend_conv *c, bool rev_all, cuda_cudnn_desc *d) {
  uint32_t S = c->num_spatial;
  if (c->batch_group_count != 1 || c->feature_group_count != 1) return false;
  for (uint32_t s = 0; s < S; s++) {
    int64_t O = c->lhs_dims[c->input_spatial_dimensions[s]];
    int64_t R = c->rhs_dims[c->kernel_spatial_dimensions[s]];
    int64_t X = c->result_dims[c->output_spatial_dimensions[s]];
    int64_t st = c->lhs_dilation[s], er = (R - 1) * c->rhs_dilation[s] + 1;
    int64_t p = er - 1 - c->padding_low[s];
    if (c->window_strides[s] != 1 || p < 0 || p > INT_MAX / 4 || X + 2 * p < er ||
        (X + 2 * p - er) / st + 1 != O)
      return false;
    d->pad[s] = (int)p, d->stride[s] = (int)st, d->dilation[s] = (int)c->rhs_dilation[s];
  }
  d->kind = CUDA_CUDNN_BACKWARD_DATA;
  pick(c->lhs_dims, c->rank, c->input_batch_dimension, c->input_feature_dimension,
       c->input_spatial_dimensions, S, d->y_dims, d->y_strides);
  pick(c->result_dims, c->rank, c->output_batch_dimension, c->output_feature_dimension,
       c->output_spatial_dimensions, S, d->x_dims, d->x_strides);
  set_filter(d, c->rhs_dims, c->rank, c->kernel_input_feature_dimension,
             c->kernel_output_feature_dimension, c->kernel_spatial_dimensions, S);
  d->mode = rev_all ? CUDNN_CROSS_CORRELATION : CUDNN_CONVOLUTION;
  d->groups = 1;
  return true;
}

static bool map_backward_filter(const backend_conv *c, bool rev_none, cuda_cudnn_desc *d) {
  uint32_t S = c->num_spatial;
  if (!rev_none || c->feature_group_count != 1) return false;
  for (uint32_t s = 0; s < S; s++) {
    int64_t X = c->lhs_dims[c->input_spatial_dimensions[s]];
    int64_t O = c->rhs_dims[c->kernel_spatial_dimensions[s]];
    int64_t R = c->result_dims[c->output_spatial_dimensions[s]];
    int64_t p = c->padding_low[s], st = c->rhs_dilation[s], dil = c->window_strides[s];
    int64_t er = (R - 1) * dil + 1;
    if (c->lhs_dilation[s] != 1 || p < 0 || p > INT_MAX / 4 || X + 2 * p < er ||
        (X + 2 * p - er) / st + 1 != O)
      return false;
    d->pad[s] = (int)p, d->stride[s] = (int)st, d->dilation[s] = (int)dil;
  }
  d->kind = CUDA_CUDNN_BACKWARD_FILTER;
  pick(c->lhs_dims, c->rank, c->input_feature_dimension, c->input_batch_dimension,
       c->input_spatial_dimensions, S, d->x_dims, d->x_strides);
  pick(c->rhs_dims, c->rank, c->kernel_input_feature_dimension,
       c->kernel_output_feature_dimension, c->kernel_spatial_dimensions, S, d->y_dims,
       d->y_strides);
  set_filter(d, c->result_dims, c->rank, c->output_feature_dimension, c->output_batch_dimension,
             c->output_spatial_dimensions, S);
  d->mode = CUDNN_CROSS_CORRELATION;
  d->groups = (int)c->batch_group_count;
  return true;
}

static int64_t product(const int64_t *dims, const uint32_t *sp, uint32_t S) {
  int64_t p = 1;
  for (uint32_t s = 0; s < S; s++) p *= dims[sp[s]];
  return p;
}

bool cuda_cudnn_map(const backend_conv *c, cuda_cudnn_desc *out) {
  memset(out, 0, sizeof *out);
  uint32_t S = c->num_spatial;
  if (S < 2 || S > 3 || c->rank != S + 2) return false;
  hlo_dtype t = c->lhs_dtype;
  if (!conv_all_dtype(c, t)) return false;
  switch (t) {
  case HLO_F32:
    out->dtype = CUDNN_DATA_FLOAT, out->compute = CUDNN_DATA_FLOAT;
    out->math = c->precision[0] == BACKEND_PRECISION_DEFAULT &&
                        c->precision[1] == BACKEND_PRECISION_DEFAULT && cuda_tf32_enabled()
                    ? CUDNN_DEFAULT_MATH : CUDNN_FMA_MATH;
    break;
  case HLO_F64: out->dtype = out->compute = CUDNN_DATA_DOUBLE, out->math = CUDNN_DEFAULT_MATH; break;
  case HLO_F16: out->dtype = CUDNN_DATA_HALF, out->compute = CUDNN_DATA_FLOAT; break;
  case HLO_BF16: out->dtype = CUDNN_DATA_BFLOAT16, out->compute = CUDNN_DATA_FLOAT; break;
  default: return false;
  }
  int64_t lim = INT_MAX;
  if (conv_lhs_elements(c) <= 0 || conv_rhs_elements(c) <= 0 || conv_result_elements(c) <= 0 ||
      conv_lhs_elements(c) > lim || conv_rhs_elements(c) > lim || conv_result_elements(c) > lim)
    return false;
  bool rev_all = true, rev_none = true, lhs_dil = false;
  for (uint32_t s = 0; s < S; s++) {
    rev_all &= c->window_reversal[s], rev_none &= !c->window_reversal[s];
    lhs_dil |= c->lhs_dilation[s] > 1;
    if (c->window_strides[s] > INT_MAX / 4 || c->rhs_dilation[s] > INT_MAX / 4 ||
        c->lhs_dilation[s] > INT_MAX / 4)
      return false;
  }
  if (!rev_all && !rev_none) return false;
  out->nb = (int)S + 2;
  cuda_cudnn_desc keep = *out;
  bool ok;
  if (lhs_dil) {
    ok = map_backward_data(c, rev_all, out);
  } else if (c->batch_group_count > 1) {
    ok = map_backward_filter(c, rev_none, out);
  } else {
    bool wgrad = product(c->rhs_dims, c->kernel_spatial_dimensions, S) >
                 product(c->result_dims, c->output_spatial_dimensions, S);
    ok = wgrad ? map_backward_filter(c, rev_none, out) : map_forward(c, rev_all, out);
    if (!ok) {
      *out = keep;
      ok = wgrad ? map_forward(c, rev_all, out) : map_backward_filter(c, rev_none, out);
    }
  }
  if (!ok) memset(out, 0, sizeof *out);
  return ok;
}

/* ------------------------------------------------------------ plans */

#define CUDNN_PLANS 512
#define KEY_LEN 112

typedef struct cudnn_plan {
  int64_t key[KEY_LEN];
  bool takes;
  cuda_cudnn_desc d;
  cudnnTensorDescriptor_t xd, yd, w_src, w_pack; /* w_src / w_pack: the filter's copy */
  cudnnFilterDescriptor_t wd;
  cudnnConvolutionDescriptor_t cd;
  int algo, algo_math; /* the algorithm and the math type it runs in */
  bool timed;          /* chosen from cudnnFind's timings (else the heuristic's list) */
  bool built;          /* descriptors made, workspace asked for (else: a kept choice, at
                          compile time; built at the first run) */
  size_t ws_bytes, w_off, scratch;
} cudnn_plan;

/* A choice kept by the compilation cache (cuda_cudnn_import): the plan of
 * the description `key` takes `algo` in `math` with at least `ws` bytes. */
typedef struct cudnn_hint {
  int64_t key[KEY_LEN];
  int32_t algo, math;
  uint64_t ws;
  bool timed;
} cudnn_hint;

static struct {
  pthread_mutex_t lock;
  bool handle_tried;
  hlo_status_code handle_code;
  char handle_message[2048];
  cudnnHandle_t handle;
  cudnn_plan plans[CUDNN_PLANS];
  uint32_t num_plans;
  cudnn_hint *hints; /* cuda_cudnn_import's, a key at most once */
  uint32_t num_hints, cap_hints;
} g = {.lock = PTHREAD_MUTEX_INITIALIZER};

static const cudnn_hint *hint_find(const int64_t *key) {
  for (uint32_t i = 0; i < g.num_hints; i++)
    if (!memcmp(g.hints[i].key, key, sizeof g.hints[i].key)) return &g.hints[i];
  return NULL;
}

static void key_of(const backend_conv *c, int64_t *k) {
  memset(k, 0, KEY_LEN * sizeof *k);
  size_t n = 0;
  k[n++] = c->lhs_dtype, k[n++] = c->rhs_dtype, k[n++] = c->result_dtype, k[n++] = c->rank;
  for (uint32_t d = 0; d < c->rank; d++)
    k[n++] = c->lhs_dims[d], k[n++] = c->rhs_dims[d], k[n++] = c->result_dims[d];
  k[n++] = c->input_batch_dimension, k[n++] = c->input_feature_dimension;
  k[n++] = c->kernel_input_feature_dimension, k[n++] = c->kernel_output_feature_dimension;
  k[n++] = c->output_batch_dimension, k[n++] = c->output_feature_dimension;
  for (uint32_t s = 0; s < c->num_spatial; s++) {
    k[n++] = c->input_spatial_dimensions[s], k[n++] = c->kernel_spatial_dimensions[s];
    k[n++] = c->output_spatial_dimensions[s], k[n++] = c->window_strides[s];
    k[n++] = c->padding_low[s], k[n++] = c->padding_high[s], k[n++] = c->lhs_dilation[s];
    k[n++] = c->rhs_dilation[s], k[n++] = c->window_reversal[s];
  }
  k[n++] = c->feature_group_count, k[n++] = c->batch_group_count;
  k[n++] = c->precision[0], k[n++] = c->precision[1];
}

static const char *status_text(const cudnn_api *a, cudnnStatus_t r) {
  const char *s = a->cudnnGetErrorString ? a->cudnnGetErrorString(r) : NULL;
  return s ? s : "unknown status";
}

static hlo_status call_error(const cudnn_api *a, const backend_conv *c, const char *what,
                             cudnnStatus_t r) {
  return status_at(HLO_INTERNAL, &c->loc, "convolution through cuDNN: %s: %s (%d)", what,
                   status_text(a, r), r);
}

/* cuDNN's answer for a form it does not take (no error: our paths then) */
static bool declined(cudnnStatus_t r) { return r / 1000 == 2 || r / 1000 == 3; }

static void plan_destroy(const cudnn_api *a, cudnn_plan *p) {
  if (p->xd) a->cudnnDestroyTensorDescriptor(p->xd);
  if (p->yd) a->cudnnDestroyTensorDescriptor(p->yd);
  if (p->w_src) a->cudnnDestroyTensorDescriptor(p->w_src);
  if (p->w_pack) a->cudnnDestroyTensorDescriptor(p->w_pack);
  if (p->wd) a->cudnnDestroyFilterDescriptor(p->wd);
  if (p->cd) a->cudnnDestroyConvolutionDescriptor(p->cd);
  p->xd = p->yd = p->w_src = p->w_pack = NULL, p->wd = NULL, p->cd = NULL;
}

static size_t round256(size_t n) { return (n + 255) & ~(size_t)255; }

/* The packed strides of w in format f. */
static void packed_strides(const cuda_cudnn_desc *d, int *st) {
  int nb = d->nb;
  if (d->w_format == CUDNN_TENSOR_NCHW) {
    int s = 1;
    for (int i = nb; i-- > 0;) st[i] = s, s *= d->w_dims[i];
  } else { /* [K, sp..., C] */
    int s = 1;
    st[1] = s, s *= d->w_dims[1];
    for (int i = nb; i-- > 2;) st[i] = s, s *= d->w_dims[i];
    st[0] = s;
  }
}

/* The scratch of plan p with `ws` bytes of workspace: the workspace, then
 * the packed filter (256-byte aligned); p->takes. */
static void plan_layout(cudnn_plan *p, size_t ws) {
  const cuda_cudnn_desc *d = &p->d;
  size_t welems = 1;
  for (int i = 0; i < d->nb; i++) welems *= (size_t)d->w_dims[i];
  p->ws_bytes = ws;
  p->w_off = round256(ws);
  size_t es = d->dtype == CUDNN_DATA_DOUBLE ? 8 : d->dtype == CUDNN_DATA_FLOAT ? 4 : 2;
  p->scratch = p->w_off + (d->w_packed ? 0 : round256(welems * es));
  p->takes = true;
}

/* Ends plan p with algorithm `algo` in math type `math` (what the
 * algorithm list said), at least `min_ws` bytes of workspace: the math
 * type set, the workspace asked for, the scratch laid out, p->takes. A
 * failed call: its status, *what names it. */
static cudnnStatus_t plan_finish(const cudnn_api *a, cudnn_plan *p, int algo, int math,
                                 size_t min_ws, const char **what) {
  const cuda_cudnn_desc *d = &p->d;
  p->algo = algo;
  if (d->dtype == CUDNN_DATA_FLOAT && d->math == CUDNN_FMA_MATH) math = CUDNN_FMA_MATH;
  p->algo_math = math;
  *what = "cudnnSetConvolutionMathType";
  cudnnStatus_t r = a->cudnnSetConvolutionMathType(p->cd, math);
  size_t ws = 0;
  if (!r) {
    switch (d->kind) {
    case CUDA_CUDNN_FORWARD:
      *what = "cudnnGetConvolutionForwardWorkspaceSize";
      r = a->cudnnGetConvolutionForwardWorkspaceSize(g.handle, p->xd, p->wd, p->cd, p->yd, algo,
                                                     &ws);
      break;
    case CUDA_CUDNN_BACKWARD_DATA:
      *what = "cudnnGetConvolutionBackwardDataWorkspaceSize";
      r = a->cudnnGetConvolutionBackwardDataWorkspaceSize(g.handle, p->wd, p->yd, p->cd, p->xd,
                                                          algo, &ws);
      break;
    default:
      *what = "cudnnGetConvolutionBackwardFilterWorkspaceSize";
      r = a->cudnnGetConvolutionBackwardFilterWorkspaceSize(g.handle, p->xd, p->yd, p->cd, p->wd,
                                                            algo, &ws);
      break;
    }
  }
  if (r) return r;
  if (ws < min_ws) ws = min_ws;
  if (ws > CUDA_CUDNN_WORKSPACE_MAX) return CUDNN_STATUS_NOT_SUPPORTED;
  plan_layout(p, ws);
  p->built = true;
  return CUDNN_STATUS_SUCCESS;
}

/* The plan of a choice the compilation cache kept (h), at compile time:
 * what cuda_conv needs to know then (whether cuDNN takes c, its scratch)
 * without cuDNN's handle or descriptors (cudnnCreate and cuDNN's first
 * calls cost tens of milliseconds: a warm compile must not pay them). The
 * first run builds it (find_plan). */
static void plan_from_hint(const backend_conv *c, const cudnn_hint *h, cudnn_plan *p) {
  p->takes = false;
  if (!cuda_cudnn_map(c, &p->d)) return;
  if (!p->d.w_packed && p->d.dtype == CUDNN_DATA_BFLOAT16) return;
  const cuda_cudnn_desc *d = &p->d;
  p->algo = h->algo;
  p->algo_math = d->dtype == CUDNN_DATA_FLOAT && d->math == CUDNN_FMA_MATH ? CUDNN_FMA_MATH : h->math;
  p->timed = h->timed;
  plan_layout(p, (size_t)h->ws);
}

/* Makes p for c (p->key set; the lock held). A declined form: p->takes
 * false, no error. */
static hlo_status plan_make(const cudnn_api *a, const backend_conv *c, cudnn_plan *p) {
  p->takes = false;
  if (!cuda_cudnn_map(c, &p->d)) return NULL;
  /* a bf16 kernel not packed: cudnnTransformTensor's bf16 support is not
   * something we rely on; our paths take it */
  if (!p->d.w_packed && p->d.dtype == CUDNN_DATA_BFLOAT16) return NULL;
  const cuda_cudnn_desc *d = &p->d;
  const char *what = "cudnnCreateTensorDescriptor";
  cudnnStatus_t r = a->cudnnCreateTensorDescriptor(&p->xd);
  if (!r) r = a->cudnnCreateTensorDescriptor(&p->yd);
  if (!r) what = "cudnnCreateFilterDescriptor", r = a->cudnnCreateFilterDescriptor(&p->wd);
  if (!r) what = "cudnnCreateConvolutionDescriptor",
          r = a->cudnnCreateConvolutionDescriptor(&p->cd);
  if (r) {
    plan_destroy(a, p);
    return call_error(a, c, what, r);
  }
  /* the descriptors: a refusal here is cuDNN declining the form */
  what = "cudnnSetTensorNdDescriptor";
  r = a->cudnnSetTensorNdDescriptor(p->xd, d->dtype, d->nb, d->x_dims, d->x_strides);
  if (!r) r = a->cudnnSetTensorNdDescriptor(p->yd, d->dtype, d->nb, d->y_dims, d->y_strides);
  if (!r) what = "cudnnSetFilterNdDescriptor",
          r = a->cudnnSetFilterNdDescriptor(p->wd, d->dtype, d->w_format, d->nb, d->w_dims);
  if (!r) what = "cudnnSetConvolutionNdDescriptor",
          r = a->cudnnSetConvolutionNdDescriptor(p->cd, d->nb - 2, d->pad, d->stride, d->dilation,
                                                 d->mode, d->compute);
  if (!r) what = "cudnnSetConvolutionGroupCount",
          r = a->cudnnSetConvolutionGroupCount(p->cd, d->groups);
  if (!r) what = "cudnnSetConvolutionMathType",
          r = a->cudnnSetConvolutionMathType(p->cd, d->math);
  if (!r && !d->w_packed) {
    int pst[5];
    packed_strides(d, pst);
    what = "cudnnCreateTensorDescriptor";
    r = a->cudnnCreateTensorDescriptor(&p->w_src);
    if (!r) r = a->cudnnCreateTensorDescriptor(&p->w_pack);
    if (!r) what = "cudnnSetTensorNdDescriptor",
            r = a->cudnnSetTensorNdDescriptor(p->w_src, d->dtype, d->nb, d->w_dims, d->w_strides);
    if (!r) r = a->cudnnSetTensorNdDescriptor(p->w_pack, d->dtype, d->nb, d->w_dims, pst);
  }
  /* the algorithm: one the compilation cache kept for this description
   * (tuned for this GPU, cuDNN and TF32 setting: cuda_cudnn_import checked
   * them), else cudnnFind's or the heuristic's list. A kept one cuDNN
   * refuses now is tuned again. */
  const cudnn_hint *h = r ? NULL : hint_find(p->key);
  if (h) {
    r = plan_finish(a, p, h->algo, h->math, (size_t)h->ws, &what);
    if (!r) {
      p->timed = h->timed;
      return NULL;
    }
    if (!declined(r)) {
      plan_destroy(a, p);
      return call_error(a, c, what, r);
    }
    p->takes = false;
    what = "cudnnSetConvolutionMathType";
    r = a->cudnnSetConvolutionMathType(p->cd, d->math);
  }
  cudnnConvolutionAlgoPerf_t perf[16];
  memset(perf, 0, sizeof perf);
  int n = 0;
  /* timed (cudnnFind*: runs each algorithm once, its own buffers, on the
   * backend's stream) at compile time; the heuristic inside a capture (no
   * run possible there) or with HLO_CUDNN_FIND=0 */
  bool find = find_enabled() && !cuda_capture_stream();
  if (!r && find) {
    const cuda_device_state *s = cuda_state();
    r = a->cudnnSetStream(g.handle, s ? s->stream : NULL);
    what = "cudnnSetStream";
  }
  /* once: a second Find (kernels loaded) measured no better on the H200 */
  if (!r && find) {
    switch (d->kind) {
    case CUDA_CUDNN_FORWARD:
      what = "cudnnFindConvolutionForwardAlgorithm";
      r = a->cudnnFindConvolutionForwardAlgorithm(g.handle, p->xd, p->wd, p->cd, p->yd, 16, &n,
                                                  perf);
      break;
    case CUDA_CUDNN_BACKWARD_DATA:
      what = "cudnnFindConvolutionBackwardDataAlgorithm";
      r = a->cudnnFindConvolutionBackwardDataAlgorithm(g.handle, p->wd, p->yd, p->cd, p->xd, 16,
                                                       &n, perf);
      break;
    default:
      what = "cudnnFindConvolutionBackwardFilterAlgorithm";
      r = a->cudnnFindConvolutionBackwardFilterAlgorithm(g.handle, p->xd, p->yd, p->cd, p->wd,
                                                         16, &n, perf);
      break;
    }
  }
  if (!r && !find) {
    switch (d->kind) {
    case CUDA_CUDNN_FORWARD:
      what = "cudnnGetConvolutionForwardAlgorithm_v7";
      r = a->cudnnGetConvolutionForwardAlgorithm_v7(g.handle, p->xd, p->wd, p->cd, p->yd, 16, &n,
                                                    perf);
      break;
    case CUDA_CUDNN_BACKWARD_DATA:
      what = "cudnnGetConvolutionBackwardDataAlgorithm_v7";
      r = a->cudnnGetConvolutionBackwardDataAlgorithm_v7(g.handle, p->wd, p->yd, p->cd, p->xd, 16,
                                                         &n, perf);
      break;
    default:
      what = "cudnnGetConvolutionBackwardFilterAlgorithm_v7";
      r = a->cudnnGetConvolutionBackwardFilterAlgorithm_v7(g.handle, p->xd, p->yd, p->cd, p->wd,
                                                           16, &n, perf);
      break;
    }
  }
  if (r) {
    plan_destroy(a, p);
    return declined(r) ? NULL : call_error(a, c, what, r);
  }
  int pick_i = -1, any_i = -1;
  if (n > 16) n = 16;
  for (int i = 0; i < n && pick_i < 0; i++) {
    const cudnnConvolutionAlgoPerf_t *q = &perf[i];
    if (q->status != CUDNN_STATUS_SUCCESS || q->memory > CUDA_CUDNN_WORKSPACE_MAX) continue;
    /* full f32 asked for: no tensor-op (TF32) algorithm */
    if (d->dtype == CUDNN_DATA_FLOAT && d->math == CUDNN_FMA_MATH &&
        q->mathType != CUDNN_FMA_MATH && q->mathType != CUDNN_DEFAULT_MATH)
      continue;
    if (any_i < 0) any_i = i;
    if (q->determinism == CUDNN_DETERMINISTIC) pick_i = i;
  }
  /* the deterministic one first, unless (timed) it is over twice the fastest */
  if (pick_i < 0 || (find && perf[pick_i].time > 2 * perf[any_i].time)) pick_i = any_i;
  if (pick_i < 0) {
    plan_destroy(a, p);
    return NULL; /* no algorithm: our paths */
  }
  p->timed = find;
  r = plan_finish(a, p, perf[pick_i].algo, perf[pick_i].mathType, perf[pick_i].memory, &what);
  if (r) {
    plan_destroy(a, p);
    return declined(r) ? NULL : call_error(a, c, what, r);
  }
  return NULL;
}

/* The library and the handle (the lock held). */
static hlo_status ready(const cudnn_api **a) {
  HLO_TRY(cudnn_load(a));
  if (!g.handle_tried) {
    g.handle_tried = true;
    cudnnStatus_t r = (*a)->cudnnCreate(&g.handle);
    if (r) {
      g.handle_code = HLO_UNAVAILABLE;
      snprintf(g.handle_message, sizeof g.handle_message, "cuDNN (%.1000s): cudnnCreate: %.200s (%d)",
               (*a)->path, status_text(*a, r), r);
    } else {
      g.handle_code = HLO_OK;
    }
  }
  return g.handle_code == HLO_OK ? NULL : status_new(g.handle_code, "%s", g.handle_message);
}

/* The plan for c (the lock held): from the table, else made and kept
 * (or, the table full, made into *temp: the caller destroys it). `run`:
 * for a run (built: the handle and descriptors made); else for the
 * compile, where a choice the compilation cache kept makes a plan without
 * cuDNN (plan_from_hint; *a is then NULL). A kept plan built at its first
 * run whose choice cuDNN refuses now is tuned again, within the scratch
 * planned at compile time (else an error). */
static hlo_status find_plan(const backend_conv *c, const cudnn_api **a, cudnn_plan **out,
                            cudnn_plan *temp, bool run) {
  *out = NULL;
  *a = NULL;
  int64_t key[KEY_LEN];
  key_of(c, key);
  /* the math type depends on HLO_CUDA_TF32, read once: not in the key */
  cudnn_plan *p = NULL;
  for (uint32_t i = 0; i < g.num_plans && !p; i++)
    if (!memcmp(g.plans[i].key, key, sizeof key)) p = &g.plans[i];
  const cudnn_hint *h = p ? NULL : hint_find(key);
  if (!run && (h || (p && !p->built))) {
    if (!p) {
      p = g.num_plans < CUDNN_PLANS ? &g.plans[g.num_plans++] : temp;
      memset(p, 0, sizeof *p);
      memcpy(p->key, key, sizeof key);
      plan_from_hint(c, h, p);
    }
    *out = p;
    return NULL;
  }
  HLO_TRY(ready(a));
  if (p && p->takes && !p->built) { /* a kept choice's first run */
    cudnn_plan *q = calloc(1, sizeof *q);
    if (!q) return status_new(HLO_RESOURCE_EXHAUSTED, "out of memory");
    memcpy(q->key, key, sizeof key);
    hlo_status st = plan_make(*a, c, q);
    if (!st && (!q->takes || q->scratch > p->scratch)) {
      st = status_at(HLO_INTERNAL, &c->loc, "convolution through cuDNN: the algorithm kept in "
                     "the compilation cache (%d) is refused now, and %s (scratch %zu bytes, "
                     "planned %zu): clear the cache (hlo cache clear)", p->algo,
                     q->takes ? "the one tuned again needs more scratch" : "no other is taken",
                     q->scratch, p->scratch);
      plan_destroy(*a, q);
    }
    if (!st) *p = *q;
    free(q);
    HLO_TRY(st);
  }
  if (p) {
    *out = p;
    return NULL;
  }
  cudnn_plan *slot = g.num_plans < CUDNN_PLANS ? &g.plans[g.num_plans] : temp;
  memset(slot, 0, sizeof *slot);
  memcpy(slot->key, key, sizeof key);
  HLO_TRY(plan_make(*a, c, slot));
  if (slot != temp) g.num_plans++;
  *out = slot;
  return NULL;
}

hlo_status cuda_cudnn_plan(const backend_conv *c, bool *takes, size_t *scratch_bytes) {
  *takes = false, *scratch_bytes = 0;
  const cudnn_api *a = NULL;
  cudnn_plan *p = NULL, *temp = calloc(1, sizeof *temp);
  if (!temp) return status_new(HLO_RESOURCE_EXHAUSTED, "out of memory");
  pthread_mutex_lock(&g.lock);
  hlo_status st = find_plan(c, &a, &p, temp, false);
  if (!st) *takes = p->takes, *scratch_bytes = p->takes ? p->scratch : 0;
  if (p == temp) plan_destroy(a, temp);
  pthread_mutex_unlock(&g.lock);
  free(temp);
  return st;
}

hlo_status cuda_cudnn_conv(const backend_conv *c, const void *lhs, const void *rhs, void *output,
                           void *scratch, CUstream stream) {
  const cudnn_api *a = NULL;
  cudnn_plan *p = NULL, *temp = calloc(1, sizeof *temp);
  if (!temp) return status_new(HLO_RESOURCE_EXHAUSTED, "out of memory");
  pthread_mutex_lock(&g.lock);
  hlo_status st = find_plan(c, &a, &p, temp, true);
  if (st && hlo_status_code_of(st) != HLO_UNAVAILABLE) { /* a plan's call: located already */
    pthread_mutex_unlock(&g.lock);
    free(temp);
    return st;
  }
  if (st) { /* the load or the handle */
    pthread_mutex_unlock(&g.lock);
    free(temp);
    hlo_status wrapped = status_at(hlo_status_code_of(st), &c->loc, "convolution through cuDNN%s: %s",
                                   cuda_cudnn_forced() ? " (HLO_CUDNN=1)" : "",
                                   hlo_status_message(st));
    hlo_status_free(st);
    return wrapped;
  }
  if (!p->takes) {
    if (p == temp) plan_destroy(a, temp);
    pthread_mutex_unlock(&g.lock);
    free(temp);
    return status_at(HLO_UNIMPLEMENTED, &c->loc, "convolution through cuDNN: cuDNN does not take "
                     "this form");
  }
  const cuda_cudnn_desc *d = &p->d;
  const float one_f = 1, zero_f = 0;
  const double one_d = 1, zero_d = 0;
  bool f64 = d->dtype == CUDNN_DATA_DOUBLE;
  const void *one = f64 ? (const void *)&one_d : (const void *)&one_f;
  const void *zero = f64 ? (const void *)&zero_d : (const void *)&zero_f;
  void *ws = p->ws_bytes ? scratch : NULL;
  void *wbuf = (char *)scratch + p->w_off;
  if ((p->ws_bytes || !d->w_packed) && !scratch) {
    st = status_at(HLO_INVALID_ARGUMENT, &c->loc, "convolution through cuDNN: no scratch (%zu "
                   "bytes needed)", p->scratch);
    goto done;
  }
  const char *what = "cudnnSetStream";
  cudnnStatus_t r = a->cudnnSetStream(g.handle, stream);
  if (!r && d->kind != CUDA_CUDNN_BACKWARD_FILTER && !d->w_packed) {
    what = "cudnnTransformTensor (the kernel, packed)";
    r = a->cudnnTransformTensor(g.handle, one, p->w_src, rhs, zero, p->w_pack, wbuf);
    rhs = wbuf;
  }
  if (!r) {
    switch (d->kind) {
    case CUDA_CUDNN_FORWARD:
      what = "cudnnConvolutionForward";
      r = a->cudnnConvolutionForward(g.handle, one, p->xd, lhs, p->wd, rhs, p->cd, p->algo, ws,
                                     p->ws_bytes, zero, p->yd, output);
      break;
    case CUDA_CUDNN_BACKWARD_DATA:
      what = "cudnnConvolutionBackwardData";
      r = a->cudnnConvolutionBackwardData(g.handle, one, p->wd, rhs, p->yd, lhs, p->cd, p->algo,
                                          ws, p->ws_bytes, zero, p->xd, output);
      break;
    default:
      what = "cudnnConvolutionBackwardFilter";
      r = a->cudnnConvolutionBackwardFilter(g.handle, one, p->xd, lhs, p->yd, rhs, p->cd, p->algo,
                                            ws, p->ws_bytes, zero, p->wd,
                                            d->w_packed ? output : wbuf);
      if (!r && !d->w_packed)
        what = "cudnnTransformTensor (the weight gradient, unpacked)",
        r = a->cudnnTransformTensor(g.handle, one, p->w_pack, wbuf, zero, p->w_src, output);
      break;
    }
  }
  if (r) st = call_error(a, c, what, r);
done:
  if (p == temp) plan_destroy(a, temp);
  pthread_mutex_unlock(&g.lock);
  free(temp);
  return st;
}

/* ------------------------------------------------------------ kept choices */

/* The section's layout (cuda_cudnn.h): little-endian as the machine is
 * (the entry's key holds the target). */
#define KEPT_MAGIC "HLOCUDNN"
#define KEPT_FORMAT 1u
#define KEPT_HEAD 32                            /* magic, format, count, version, tf32, target length */
#define KEPT_TARGET_MAX 511
#define KEPT_RECORD (KEY_LEN * 8 + 24)          /* key, algo, math, ws, timed, zero */

/* What the choices depend on besides the description: the GPU (the
 * backend's target text), cuDNN's version, TF32. */
static void identity(const cudnn_api *a, size_t *version, uint32_t *tf32, const char **target) {
  const cuda_device_state *s = cuda_state();
  *version = a ? a->version : 0;
  *tf32 = cuda_tf32_enabled();
  *target = s ? s->target : "";
}

static void put32(unsigned char **p, uint32_t v) { memcpy(*p, &v, 4), *p += 4; }
static void put64(unsigned char **p, uint64_t v) { memcpy(*p, &v, 8), *p += 8; }
static uint32_t get32(const unsigned char **p) {
  uint32_t v;
  memcpy(&v, *p, 4), *p += 4;
  return v;
}
static uint64_t get64(const unsigned char **p) {
  uint64_t v;
  memcpy(&v, *p, 8), *p += 8;
  return v;
}

hlo_status cuda_cudnn_export(const backend_conv *cs, uint32_t n, void **out, size_t *len) {
  *out = NULL, *len = 0;
  pthread_mutex_lock(&g.lock);
  if (!g.num_plans || !n) {
    pthread_mutex_unlock(&g.lock);
    return NULL;
  }
  /* the plans of cs that take their conv, each once */
  uint32_t *pick = malloc(n * sizeof *pick), np = 0;
  if (!pick) {
    pthread_mutex_unlock(&g.lock);
    return status_new(HLO_RESOURCE_EXHAUSTED, "out of memory");
  }
  int64_t key[KEY_LEN];
  for (uint32_t i = 0; i < n; i++) {
    key_of(&cs[i], key);
    for (uint32_t j = 0; j < g.num_plans; j++) {
      if (!g.plans[j].takes || memcmp(g.plans[j].key, key, sizeof key)) continue;
      bool seen = false;
      for (uint32_t k = 0; k < np && !seen; k++) seen = pick[k] == j;
      if (!seen) pick[np++] = j;
      break;
    }
  }
  size_t version;
  uint32_t tf32;
  const char *target;
  identity(g_load_code == HLO_OK ? &g_api : NULL, &version, &tf32, &target);
  size_t tl = strnlen(target, KEPT_TARGET_MAX);
  size_t bytes = KEPT_HEAD + tl + (size_t)np * KEPT_RECORD;
  unsigned char *buf = np ? malloc(bytes) : NULL, *p = buf;
  if (np && !buf) {
    free(pick);
    pthread_mutex_unlock(&g.lock);
    return status_new(HLO_RESOURCE_EXHAUSTED, "out of memory");
  }
  if (buf) {
    memcpy(p, KEPT_MAGIC, 8), p += 8;
    put32(&p, KEPT_FORMAT), put32(&p, np), put64(&p, version), put32(&p, tf32),
        put32(&p, (uint32_t)tl);
    memcpy(p, target, tl), p += tl;
    for (uint32_t k = 0; k < np; k++) {
      const cudnn_plan *q = &g.plans[pick[k]];
      memcpy(p, q->key, sizeof q->key), p += sizeof q->key;
      put32(&p, (uint32_t)q->algo), put32(&p, (uint32_t)q->algo_math), put64(&p, q->ws_bytes);
      put32(&p, q->timed), put32(&p, 0);
    }
    *out = buf, *len = bytes;
  }
  free(pick);
  pthread_mutex_unlock(&g.lock);
  return NULL;
}

static backend_tuning_kept bad(char *why, size_t cap, const char *what) {
  if (cap) snprintf(why, cap, "its cuDNN algorithms are corrupt (%s)", what);
  return BACKEND_TUNING_BAD;
}

backend_tuning_kept cuda_cudnn_import(const void *data, size_t len, char *why, size_t cap) {
  if (cap) why[0] = 0;
  const unsigned char *p = data, *end = p + len;
  if (!data || len < KEPT_HEAD) return bad(why, cap, "truncated");
  if (memcmp(p, KEPT_MAGIC, 8)) return bad(why, cap, "no magic");
  p += 8;
  uint32_t format = get32(&p), count = get32(&p);
  uint64_t version = get64(&p);
  uint32_t tf32 = get32(&p), tl = get32(&p);
  if (format != KEPT_FORMAT) {
    if (cap) snprintf(why, cap, "its cuDNN algorithms are of format %u, this hlo reads %u", format,
                      KEPT_FORMAT);
    return BACKEND_TUNING_BAD;
  }
  if (tl > KEPT_TARGET_MAX || tf32 > 1) return bad(why, cap, "bad header");
  if ((size_t)(end - p) < tl) return bad(why, cap, "truncated");
  const char *target = (const char *)p;
  p += tl;
  size_t rest = (size_t)(end - p);
  if (rest % KEPT_RECORD || rest / KEPT_RECORD != count)
    return bad(why, cap, rest / KEPT_RECORD < count ? "truncated" : "length does not match");
  /* the records, checked before any is used */
  for (const unsigned char *q = p; q < end; q += KEPT_RECORD) {
    const unsigned char *f = q + KEY_LEN * 8;
    uint32_t algo = get32(&f), math = get32(&f);
    uint64_t ws = get64(&f);
    uint32_t timed = get32(&f), zero = get32(&f);
    if (algo > 64 || math > CUDNN_FMA_MATH || ws > CUDA_CUDNN_WORKSPACE_MAX || timed > 1 || zero)
      return bad(why, cap, "a bad record");
  }
  /* what they were tuned for; cuDNN itself only when it is allowed */
  if (!cuda_cudnn_allowed()) return BACKEND_TUNING_UNUSED;
  const cudnn_api *a = NULL;
  hlo_status st = cudnn_load(&a);
  if (st) {
    hlo_status_free(st);
    return BACKEND_TUNING_UNUSED;
  }
  size_t now_version;
  uint32_t now_tf32;
  const char *now_target;
  identity(a, &now_version, &now_tf32, &now_target);
  size_t ntl = strnlen(now_target, KEPT_TARGET_MAX);
  if (now_version != version || now_tf32 != tf32 || ntl != tl || memcmp(now_target, target, tl)) {
    if (cap)
      snprintf(why, cap, "its cuDNN algorithms were tuned for cuDNN %llu, TF32 %s, %.*s; this is "
               "cuDNN %llu, TF32 %s, %.*s", (unsigned long long)version, tf32 ? "on" : "off",
               (int)tl, target, (unsigned long long)now_version, now_tf32 ? "on" : "off", (int)ntl,
               now_target);
    return BACKEND_TUNING_STALE;
  }
  bool find = find_enabled();
  uint32_t skipped = 0;
  pthread_mutex_lock(&g.lock);
  for (const unsigned char *q = p; q < end; q += KEPT_RECORD) {
    cudnn_hint h;
    memcpy(h.key, q, sizeof h.key);
    const unsigned char *f = q + sizeof h.key;
    h.algo = (int32_t)get32(&f), h.math = (int32_t)get32(&f);
    h.ws = get64(&f);
    h.timed = get32(&f) != 0;
    if (find && !h.timed) { /* the heuristic's choice, and timing is on now */
      skipped++;
      continue;
    }
    cudnn_hint *slot = (cudnn_hint *)hint_find(h.key);
    if (!slot && g.num_hints == g.cap_hints) {
      uint32_t cap2 = g.cap_hints ? 2 * g.cap_hints : 64;
      cudnn_hint *v = realloc(g.hints, cap2 * sizeof *v);
      if (!v) break; /* out of memory: the rest are tuned */
      g.hints = v, g.cap_hints = cap2;
    }
    if (!slot) slot = &g.hints[g.num_hints++];
    *slot = h;
  }
  pthread_mutex_unlock(&g.lock);
  if (skipped) {
    if (cap)
      snprintf(why, cap, "%u of its cuDNN algorithms were the heuristic's (HLO_CUDNN_FIND=0), "
               "timing is on", skipped);
    return BACKEND_TUNING_STALE;
  }
  return BACKEND_TUNING_USED;
}
