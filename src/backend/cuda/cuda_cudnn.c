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
  int algo;
  size_t ws_bytes, w_off, scratch;
} cudnn_plan;

static struct {
  pthread_mutex_t lock;
  bool handle_tried;
  hlo_status_code handle_code;
  char handle_message[2048];
  cudnnHandle_t handle;
  cudnn_plan plans[CUDNN_PLANS];
  uint32_t num_plans;
} g = {.lock = PTHREAD_MUTEX_INITIALIZER};

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
  size_t welems = 1;
  for (int i = 0; i < d->nb; i++) welems *= (size_t)d->w_dims[i];
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
  /* the algorithm: the heuristic's list, best first */
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
  p->algo = perf[pick_i].algo;
  int math = perf[pick_i].mathType;
  if (d->dtype == CUDNN_DATA_FLOAT && d->math == CUDNN_FMA_MATH) math = CUDNN_FMA_MATH;
  what = "cudnnSetConvolutionMathType";
  r = a->cudnnSetConvolutionMathType(p->cd, math);
  size_t ws = 0;
  if (!r) {
    switch (d->kind) {
    case CUDA_CUDNN_FORWARD:
      what = "cudnnGetConvolutionForwardWorkspaceSize";
      r = a->cudnnGetConvolutionForwardWorkspaceSize(g.handle, p->xd, p->wd, p->cd, p->yd, p->algo,
                                                     &ws);
      break;
    case CUDA_CUDNN_BACKWARD_DATA:
      what = "cudnnGetConvolutionBackwardDataWorkspaceSize";
      r = a->cudnnGetConvolutionBackwardDataWorkspaceSize(g.handle, p->wd, p->yd, p->cd, p->xd,
                                                          p->algo, &ws);
      break;
    default:
      what = "cudnnGetConvolutionBackwardFilterWorkspaceSize";
      r = a->cudnnGetConvolutionBackwardFilterWorkspaceSize(g.handle, p->xd, p->yd, p->cd, p->wd,
                                                            p->algo, &ws);
      break;
    }
  }
  if (r) {
    plan_destroy(a, p);
    return declined(r) ? NULL : call_error(a, c, what, r);
  }
  if (ws < perf[pick_i].memory) ws = perf[pick_i].memory;
  p->ws_bytes = ws;
  p->w_off = round256(ws);
  size_t es = d->dtype == CUDNN_DATA_DOUBLE ? 8 : d->dtype == CUDNN_DATA_FLOAT ? 4 : 2;
  p->scratch = p->w_off + (d->w_packed ? 0 : round256(welems * es));
  p->takes = true;
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
 * (or, the table full, made into *temp: the caller destroys it). */
static hlo_status find_plan(const backend_conv *c, const cudnn_api **a, cudnn_plan **out,
                            cudnn_plan *temp) {
  *out = NULL;
  HLO_TRY(ready(a));
  int64_t key[KEY_LEN];
  key_of(c, key);
  /* the math type depends on HLO_CUDA_TF32, read once: not in the key */
  for (uint32_t i = 0; i < g.num_plans; i++)
    if (!memcmp(g.plans[i].key, key, sizeof key)) {
      *out = &g.plans[i];
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
  hlo_status st = find_plan(c, &a, &p, temp);
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
  hlo_status st = find_plan(c, &a, &p, temp);
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
