/* libcudnn_mock.c — a mock cuDNN 9 for the CUDA unit tests
 * (tests/unit/test_cuda_cudnn.c), built by the Makefile into
 * $(BUILD)/tests/libcudnn_mock.so beside the test binaries and loaded by
 * the backend through HLO_CUDNN_LIB. It exports every function of
 * CUDNN_FUNCTIONS (src/backend/cuda/cuda_cudnn.h) with cuDNN's signatures.
 *
 * "Device memory" is host memory (the mock driver's, or the test's own
 * buffers): cudnnConvolutionForward / BackwardData / BackwardFilter are
 * plain host loops over the descriptors (f32 and f64 data, sums in
 * double; other types CUDNN_STATUS_NOT_SUPPORTED at the call), after the
 * checks cuDNN makes (the output dims the forward convolution derives from
 * x, w and the convolution must be y's; C = groups x the filter's C; K a
 * multiple of groups): CUDNN_STATUS_BAD_PARAM otherwise, so a wrong mapping
 * fails loudly. cudnnTransformTensor is a strided copy.
 *
 * The algorithm queries return two results: algorithm 1, non-deterministic,
 * mock_cudnn_ws bytes, then algorithm 0, deterministic, mock_cudnn_ws
 * bytes; the workspace queries answer mock_cudnn_ws.
 *
 * What a test reads (dlsym on dlopen(RTLD_NOLOAD)): the last convolution
 * run: mock_cudnn_kind (1 forward, 2 backward data, 3 backward filter),
 * mock_cudnn_x / _y (dims then strides, 5 + 5 ints; x and y as the call
 * names them: dx / dy for the backward calls), mock_cudnn_w (dims, 5),
 * mock_cudnn_w_format, mock_cudnn_pad / _stride / _dil (3 each),
 * mock_cudnn_mode, mock_cudnn_groups, mock_cudnn_math, mock_cudnn_algo,
 * mock_cudnn_ws_ptr / mock_cudnn_ws_size (the workspace passed),
 * mock_cudnn_stream; counters mock_cudnn_runs, mock_cudnn_transforms,
 * mock_cudnn_creates, mock_cudnn_finds (cudnnFind* calls). What it sets: mock_cudnn_ws (default 4096),
 * mock_cudnn_fail (a function's name: that function returns
 * mock_cudnn_fail_status, default CUDNN_STATUS_EXECUTION_FAILED 5000).
 * cudnnGetVersion: 90100, or $MOCK_CUDNN_VERSION. */
#include <stdbool.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>

typedef int cudnnStatus_t;
enum { OK = 0, BAD_PARAM = 2000, NOT_SUPPORTED = 3000, EXECUTION_FAILED = 5000 };
enum { T_FLOAT = 0, T_DOUBLE = 1, T_HALF = 2, T_BF16 = 9 };

typedef struct tensor {
  int type, nb, dims[8], strides[8];
} tensor;
typedef struct filter {
  int type, format, nb, dims[8];
} filter;
typedef struct conv {
  int n, pad[8], stride[8], dil[8], mode, compute, groups, math;
} conv;
typedef struct perf {
  int algo;
  cudnnStatus_t status;
  float time;
  size_t memory;
  int determinism, mathType, reserved[3];
} perf;

int mock_cudnn_kind, mock_cudnn_x[10], mock_cudnn_y[10], mock_cudnn_w[5], mock_cudnn_w_format;
int mock_cudnn_pad[3], mock_cudnn_stride[3], mock_cudnn_dil[3], mock_cudnn_mode, mock_cudnn_groups;
int mock_cudnn_math, mock_cudnn_algo;
void *mock_cudnn_ws_ptr, *mock_cudnn_stream;
size_t mock_cudnn_ws_size;
int mock_cudnn_runs, mock_cudnn_transforms, mock_cudnn_creates;
size_t mock_cudnn_ws = 4096;
char mock_cudnn_fail[64];
int mock_cudnn_fail_status = EXECUTION_FAILED;

static void *g_stream;

#define FAIL_POINT(name)                                  \
  do {                                                    \
    if (!strcmp(mock_cudnn_fail, name)) return mock_cudnn_fail_status; \
  } while (0)

/* 90100 (9.1.0), or $MOCK_CUDNN_VERSION when set (the compilation cache's
 * test: choices tuned for another cuDNN are tuned again) */
size_t cudnnGetVersion(void) {
  const char *v = getenv("MOCK_CUDNN_VERSION");
  return v && *v ? (size_t)strtoull(v, NULL, 10) : 90100;
}

const char *cudnnGetErrorString(cudnnStatus_t s) {
  switch (s) {
  case OK: return "CUDNN_STATUS_SUCCESS";
  case BAD_PARAM: return "CUDNN_STATUS_BAD_PARAM";
  case NOT_SUPPORTED: return "CUDNN_STATUS_NOT_SUPPORTED";
  case EXECUTION_FAILED: return "CUDNN_STATUS_EXECUTION_FAILED";
  case 1001: return "CUDNN_STATUS_NOT_INITIALIZED";
  default: return "CUDNN_STATUS_UNKNOWN";
  }
}

cudnnStatus_t cudnnCreate(void **h) {
  FAIL_POINT("cudnnCreate");
  static int handle;
  *h = &handle;
  mock_cudnn_creates++;
  return OK;
}
cudnnStatus_t cudnnSetStream(void *h, void *s) {
  FAIL_POINT("cudnnSetStream");
  (void)h;
  g_stream = s;
  return OK;
}

cudnnStatus_t cudnnCreateTensorDescriptor(tensor **d) {
  *d = calloc(1, sizeof **d);
  return *d ? OK : BAD_PARAM;
}
cudnnStatus_t cudnnSetTensorNdDescriptor(tensor *d, int type, int nb, const int *dims,
                                         const int *strides) {
  FAIL_POINT("cudnnSetTensorNdDescriptor");
  if (nb < 3 || nb > 8) return BAD_PARAM;
  d->type = type, d->nb = nb;
  for (int i = 0; i < nb; i++) {
    if (dims[i] < 1 || strides[i] < 1) return BAD_PARAM;
    d->dims[i] = dims[i], d->strides[i] = strides[i];
  }
  return OK;
}
cudnnStatus_t cudnnDestroyTensorDescriptor(tensor *d) {
  free(d);
  return OK;
}
cudnnStatus_t cudnnCreateFilterDescriptor(filter **d) {
  *d = calloc(1, sizeof **d);
  return *d ? OK : BAD_PARAM;
}
cudnnStatus_t cudnnSetFilterNdDescriptor(filter *d, int type, int format, int nb, const int *dims) {
  FAIL_POINT("cudnnSetFilterNdDescriptor");
  if (nb < 3 || nb > 8 || (format != 0 && format != 1)) return BAD_PARAM;
  d->type = type, d->format = format, d->nb = nb;
  for (int i = 0; i < nb; i++) {
    if (dims[i] < 1) return BAD_PARAM;
    d->dims[i] = dims[i];
  }
  return OK;
}
cudnnStatus_t cudnnDestroyFilterDescriptor(filter *d) {
  free(d);
  return OK;
}
cudnnStatus_t cudnnCreateConvolutionDescriptor(conv **d) {
  *d = calloc(1, sizeof **d);
  if (*d) (*d)->groups = 1;
  return *d ? OK : BAD_PARAM;
}
cudnnStatus_t cudnnSetConvolutionNdDescriptor(conv *d, int n, const int *pad, const int *stride,
                                              const int *dil, int mode, int compute) {
  FAIL_POINT("cudnnSetConvolutionNdDescriptor");
  if (n < 1 || n > 6 || (mode != 0 && mode != 1)) return BAD_PARAM;
  d->n = n, d->mode = mode, d->compute = compute;
  for (int i = 0; i < n; i++) {
    if (pad[i] < 0 || stride[i] < 1 || dil[i] < 1) return BAD_PARAM;
    d->pad[i] = pad[i], d->stride[i] = stride[i], d->dil[i] = dil[i];
  }
  return OK;
}
cudnnStatus_t cudnnSetConvolutionGroupCount(conv *d, int g) {
  if (g < 1) return BAD_PARAM;
  d->groups = g;
  return OK;
}
cudnnStatus_t cudnnSetConvolutionMathType(conv *d, int m) {
  if (m < 0 || m > 3) return BAD_PARAM;
  d->math = m;
  return OK;
}
cudnnStatus_t cudnnDestroyConvolutionDescriptor(conv *d) {
  free(d);
  return OK;
}

/* ---- shapes ---- */

/* x, w, conv consistent with y (cuDNN's forward output dims) */
static cudnnStatus_t check(const tensor *x, const filter *w, const conv *c, const tensor *y) {
  int nb = x->nb;
  if (y->nb != nb || w->nb != nb || c->n != nb - 2 || x->type != y->type || x->type != w->type)
    return BAD_PARAM;
  int G = c->groups;
  if (x->dims[1] != w->dims[1] * G || w->dims[0] % G || y->dims[1] != w->dims[0] ||
      y->dims[0] != x->dims[0])
    return BAD_PARAM;
  for (int s = 0; s < nb - 2; s++) {
    int ek = (w->dims[2 + s] - 1) * c->dil[s] + 1;
    int num = x->dims[2 + s] + 2 * c->pad[s] - ek;
    if (num < 0 || num / c->stride[s] + 1 != y->dims[2 + s]) return BAD_PARAM;
  }
  return OK;
}

static cudnnStatus_t algos(const tensor *x, const filter *w, const conv *c, const tensor *y,
                           int requested, int *returned, perf *p) {
  FAIL_POINT("algorithm_v7");
  cudnnStatus_t r = check(x, w, c, y);
  if (r) return r;
  int n = requested < 2 ? requested : 2;
  for (int i = 0; i < n; i++) {
    memset(&p[i], 0, sizeof p[i]);
    p[i].algo = i == 0 ? 1 : 0;
    p[i].memory = mock_cudnn_ws;
    p[i].determinism = i == 0 ? 0 : 1;
    p[i].mathType = c->math;
  }
  *returned = n;
  return OK;
}

cudnnStatus_t cudnnGetConvolutionForwardAlgorithm_v7(void *h, tensor *x, filter *w, conv *c,
                                                     tensor *y, int req, int *ret, perf *p) {
  return algos(x, w, c, y, req, ret, p);
}
cudnnStatus_t cudnnGetConvolutionBackwardDataAlgorithm_v7(void *h, filter *w, tensor *dy, conv *c,
                                                          tensor *dx, int req, int *ret, perf *p) {
  return algos(dx, w, c, dy, req, ret, p);
}
cudnnStatus_t cudnnGetConvolutionBackwardFilterAlgorithm_v7(void *h, tensor *x, tensor *dy,
                                                            conv *c, filter *dw, int req,
                                                            int *ret, perf *p) {
  return algos(x, dw, c, dy, req, ret, p);
}
int mock_cudnn_finds;
cudnnStatus_t cudnnFindConvolutionForwardAlgorithm(void *h, tensor *x, filter *w, conv *c,
                                                   tensor *y, int req, int *ret, perf *p) {
  mock_cudnn_finds++;
  return algos(x, w, c, y, req, ret, p);
}
cudnnStatus_t cudnnFindConvolutionBackwardDataAlgorithm(void *h, filter *w, tensor *dy, conv *c,
                                                        tensor *dx, int req, int *ret, perf *p) {
  mock_cudnn_finds++;
  return algos(dx, w, c, dy, req, ret, p);
}
cudnnStatus_t cudnnFindConvolutionBackwardFilterAlgorithm(void *h, tensor *x, tensor *dy, conv *c,
                                                          filter *dw, int req, int *ret, perf *p) {
  mock_cudnn_finds++;
  return algos(x, dw, c, dy, req, ret, p);
}
cudnnStatus_t cudnnGetConvolutionForwardWorkspaceSize(void *h, tensor *x, filter *w, conv *c,
                                                      tensor *y, int algo, size_t *bytes) {
  *bytes = mock_cudnn_ws;
  return check(x, w, c, y);
}
cudnnStatus_t cudnnGetConvolutionBackwardDataWorkspaceSize(void *h, filter *w, tensor *dy, conv *c,
                                                           tensor *dx, int algo, size_t *bytes) {
  *bytes = mock_cudnn_ws;
  return check(dx, w, c, dy);
}
cudnnStatus_t cudnnGetConvolutionBackwardFilterWorkspaceSize(void *h, tensor *x, tensor *dy,
                                                             conv *c, filter *dw, int algo,
                                                             size_t *bytes) {
  *bytes = mock_cudnn_ws;
  return check(x, dw, c, dy);
}

/* ---- the arithmetic ---- */

static double get(int type, const void *p, long long i) {
  return type == T_DOUBLE ? ((const double *)p)[i] : ((const float *)p)[i];
}
static void put(int type, void *p, long long i, double v) {
  if (type == T_DOUBLE) ((double *)p)[i] = v;
  else ((float *)p)[i] = (float)v;
}
static long long elems(const int *dims, int nb) {
  long long n = 1;
  for (int i = 0; i < nb; i++) n *= dims[i];
  return n;
}
/* offset of [a, b, sp...] */
static long long toff(const tensor *t, int a, int b, const int *sp) {
  long long o = (long long)a * t->strides[0] + (long long)b * t->strides[1];
  for (int s = 0; s < t->nb - 2; s++) o += (long long)sp[s] * t->strides[2 + s];
  return o;
}
static long long woff(const filter *w, int k, int c, const int *r) {
  int S = w->nb - 2;
  long long o = k;
  if (w->format == 0) {
    o = o * w->dims[1] + c;
    for (int s = 0; s < S; s++) o = o * w->dims[2 + s] + r[s];
  } else {
    for (int s = 0; s < S; s++) o = o * w->dims[2 + s] + r[s];
    o = o * w->dims[1] + c;
  }
  return o;
}
static bool next(int *idx, const int *dims, int n) {
  for (int i = n; i-- > 0;) {
    if (++idx[i] < dims[i]) return true;
    idx[i] = 0;
  }
  return false;
}

static void record(int kind, const tensor *x, const filter *w, const conv *c, const tensor *y,
                   int algo, void *ws, size_t wsb) {
  mock_cudnn_kind = kind;
  memset(mock_cudnn_x, 0, sizeof mock_cudnn_x), memset(mock_cudnn_y, 0, sizeof mock_cudnn_y);
  memset(mock_cudnn_w, 0, sizeof mock_cudnn_w);
  for (int i = 0; i < x->nb && i < 5; i++) {
    mock_cudnn_x[i] = x->dims[i], mock_cudnn_x[5 + i] = x->strides[i];
    mock_cudnn_y[i] = y->dims[i], mock_cudnn_y[5 + i] = y->strides[i];
    mock_cudnn_w[i] = w->dims[i];
  }
  mock_cudnn_w_format = w->format;
  for (int s = 0; s < 3; s++)
    mock_cudnn_pad[s] = s < c->n ? c->pad[s] : 0, mock_cudnn_stride[s] = s < c->n ? c->stride[s] : 0,
    mock_cudnn_dil[s] = s < c->n ? c->dil[s] : 0;
  mock_cudnn_mode = c->mode, mock_cudnn_groups = c->groups, mock_cudnn_math = c->math;
  mock_cudnn_algo = algo, mock_cudnn_ws_ptr = ws, mock_cudnn_ws_size = wsb;
  mock_cudnn_stream = g_stream;
  mock_cudnn_runs++;
}

/* The one loop: for every (n, k, o, c, r) with i = o * stride + r' * dil -
 * pad inside x (r' = r, or R - 1 - r for CUDNN_CONVOLUTION), the product
 * x[n, g * Cg + c, i] * w[k, c, r] belongs to y[n, k, o] (forward), to
 * dx (backward data) or to dw (backward filter). */
static cudnnStatus_t run(int kind, const tensor *x, void *xp, const filter *w, void *wp,
                         const conv *c, const tensor *y, void *yp) {
  cudnnStatus_t r0 = check(x, w, c, y);
  if (r0) return r0;
  int type = x->type;
  if (type != T_FLOAT && type != T_DOUBLE) return NOT_SUPPORTED;
  int S = x->nb - 2, G = c->groups, K = w->dims[0], Cg = w->dims[1], N = x->dims[0];
  int Kg = K / G;
  /* the output, zeroed, summed in double */
  long long outn = kind == 1 ? elems(y->dims, y->nb) : kind == 2 ? elems(x->dims, x->nb)
                                                                  : elems(w->dims, w->nb);
  double *acc = calloc((size_t)outn, sizeof *acc);
  if (!acc) return EXECUTION_FAILED;
  int odims[6], rdims[6], o[6], r[6], i[6];
  for (int s = 0; s < S; s++) odims[s] = y->dims[2 + s], rdims[s] = w->dims[2 + s];
  /* dense indices of the accumulator: forward [n, k, o] of y's dims row-major;
   * backward data [n, c, i] of x's; backward filter w's own offset */
  for (int n = 0; n < N; n++)
    for (int k = 0; k < K; k++)
      for (int cc = 0; cc < Cg; cc++) {
        int cx = (k / Kg) * Cg + cc;
        memset(o, 0, sizeof o);
        do {
          memset(r, 0, sizeof r);
          do {
            bool in = true;
            for (int s = 0; s < S && in; s++) {
              int rr = c->mode == 0 ? rdims[s] - 1 - r[s] : r[s];
              i[s] = o[s] * c->stride[s] + rr * c->dil[s] - c->pad[s];
              in = i[s] >= 0 && i[s] < x->dims[2 + s];
            }
            if (!in) continue;
            if (kind == 1) {
              long long yi = (long long)n * K + k;
              for (int s = 0; s < S; s++) yi = yi * odims[s] + o[s];
              acc[yi] += get(type, xp, toff(x, n, cx, i)) * get(type, wp, woff(w, k, cc, r));
            } else if (kind == 2) {
              long long xi = (long long)n * x->dims[1] + cx;
              for (int s = 0; s < S; s++) xi = xi * x->dims[2 + s] + i[s];
              acc[xi] += get(type, yp, toff(y, n, k, o)) * get(type, wp, woff(w, k, cc, r));
            } else {
              acc[woff(w, k, cc, r)] +=
                  get(type, xp, toff(x, n, cx, i)) * get(type, yp, toff(y, n, k, o));
            }
          } while (next(r, rdims, S));
        } while (next(o, odims, S));
      }
  /* store */
  if (kind == 3) {
    for (long long e = 0; e < outn; e++) put(type, wp, e, acc[e]);
  } else {
    const tensor *t = kind == 1 ? y : x;
    void *p = kind == 1 ? yp : xp;
    int d[8] = {0};
    long long e = 0;
    do {
      put(type, p, toff(t, d[0], d[1], d + 2), acc[e++]);
    } while (next(d, t->dims, t->nb));
  }
  free(acc);
  return OK;
}

cudnnStatus_t cudnnConvolutionForward(void *h, const void *alpha, tensor *xd, const void *x,
                                      filter *wd, const void *w, conv *cd, int algo, void *ws,
                                      size_t wsb, const void *beta, tensor *yd, void *y) {
  FAIL_POINT("cudnnConvolutionForward");
  record(1, xd, wd, cd, yd, algo, ws, wsb);
  return run(1, xd, (void *)x, wd, (void *)w, cd, yd, y);
}
cudnnStatus_t cudnnConvolutionBackwardData(void *h, const void *alpha, filter *wd, const void *w,
                                           tensor *dyd, const void *dy, conv *cd, int algo,
                                           void *ws, size_t wsb, const void *beta, tensor *dxd,
                                           void *dx) {
  FAIL_POINT("cudnnConvolutionBackwardData");
  record(2, dxd, wd, cd, dyd, algo, ws, wsb);
  return run(2, dxd, dx, wd, (void *)w, cd, dyd, (void *)dy);
}
cudnnStatus_t cudnnConvolutionBackwardFilter(void *h, const void *alpha, tensor *xd,
                                             const void *x, tensor *dyd, const void *dy, conv *cd,
                                             int algo, void *ws, size_t wsb, const void *beta,
                                             filter *dwd, void *dw) {
  FAIL_POINT("cudnnConvolutionBackwardFilter");
  record(3, xd, dwd, cd, dyd, algo, ws, wsb);
  return run(3, xd, (void *)x, dwd, dw, cd, dyd, (void *)dy);
}

cudnnStatus_t cudnnTransformTensor(void *h, const void *alpha, tensor *xd, const void *x,
                                   const void *beta, tensor *yd, void *y) {
  FAIL_POINT("cudnnTransformTensor");
  if (xd->nb != yd->nb || xd->type != yd->type) return BAD_PARAM;
  for (int i = 0; i < xd->nb; i++)
    if (xd->dims[i] != yd->dims[i]) return BAD_PARAM;
  size_t es = xd->type == T_DOUBLE ? 8 : xd->type == T_FLOAT ? 4 : 2;
  int d[8] = {0};
  do {
    long long a = 0, b = 0;
    for (int i = 0; i < xd->nb; i++) a += (long long)d[i] * xd->strides[i], b += (long long)d[i] * yd->strides[i];
    memcpy((char *)y + b * (long long)es, (const char *)x + a * (long long)es, es);
  } while (next(d, xd->dims, xd->nb));
  mock_cudnn_transforms++;
  return OK;
}
