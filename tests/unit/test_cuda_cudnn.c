/* test_cuda_cudnn.c — the CUDA backend's cuDNN path (backend/cuda/cuda_cudnn.c)
 * on the mock cuDNN (tests/unit/mock/libcudnn_mock.c, loaded through
 * HLO_CUDNN_LIB), against the reference interpreter's convolution.
 *
 *   1. map_*: cuda_cudnn_map's descriptors for NCHW / OIHW, NHWC / HWIO
 *      (a kernel not packed: transposed), NHWC / OHWI (packed NHWC),
 *      strides, padding (asymmetric where it changes no output), dilation,
 *      feature groups, window reversal, 3 spatial dims, the transposed conv
 *      (lhs dilation: backward data) and JAX's weight gradient (backward
 *      filter, also with batch groups); and the forms it leaves to our
 *      paths (mixed reversal, negative padding, 1 spatial dim, a padding
 *      that changes the result size, integer types);
 *   2. runs: each case planned (cuda_cudnn_plan) and run (cuda_cudnn_conv)
 *      on host buffers (the mock's device memory is host memory), checked
 *      against interp_run_op (relative norm 1e-5 f32, 1e-12 f64), with the
 *      descriptors the mock received, the workspace (the scratch's start,
 *      the heuristic's deterministic algorithm) and the filter copies;
 *   3. errors: a failing cuDNN call is HLO_INTERNAL naming the call and its
 *      status string; a NOT_SUPPORTED heuristic is no error (our paths);
 *   4. the choice, in child processes with the backend started on the mock
 *      driver: cuda_conv_choose takes cuDNN for a conv past the direct
 *      path's size and cuda_conv computes it there (scratch as
 *      cuda_conv_scratch_bytes said, on the backend's stream), a tiny conv
 *      stays direct; HLO_CUDNN=0 and a missing libcudnn give our paths;
 *      HLO_CUDNN=1 with a missing libcudnn is an error naming the path;
 *   5. on a GPU, only when asked (HLO_CUDNN_TEST_CHILD=real, the real driver,
 *      cuDNN found as the backend finds it, e.g. HLO_CUDNN_DIR from
 *      tests/gpu/deps.sh): the run cases on the real cuDNN (a form cuDNN
 *      declines is printed, not failed), then the five convolutions of
 *      cnn_sgd_step_64x28x28 checked and timed on cuDNN, tiled and im2col,
 *      eagerly and replayed from a CUDA graph;
 *   6. the compilation cache (cache_keeps_choices, children on the mock
 *      driver and cuDNN): cuDNN's choices kept in the entry, so a warm
 *      compile calls no cudnnFind and no cudnnCreate (the first run does);
 *      another TF32 setting or cuDNN version (MOCK_CUDNN_VERSION) tunes
 *      again and rewrites the entry; a truncated or malformed section
 *      rejects the entry with its reason. */
#include <dlfcn.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>
#include "backend/backend.h"
#include "backend/conv_describe.h"
#include "backend/cuda/cuda_api.h"
#include "backend/cuda/cuda_conv.h"
#include "backend/cuda/cuda_cudnn.h"
#include "hlo/hlo.h"
#include "interp/interp.h"
#include "runtime/compile_cache.h"
#include "ir/element.h"
#include "support/strbuf.h"
#include "mock/libcuda_mock.h"
#include "test.h"
#include "testlib.h"

static uint64_t rng = 0x9e3779b97f4a7c15ULL;
static double rand_unit(void) {
  return (double)(tl_xorshift64(&rng) >> 11) / 9007199254740992.0 * 2 - 1;
}

/* the file beside this binary, "" when it is not there */
static bool beside(const char *name, char *buf, size_t cap) {
  char exe[4096];
  ssize_t n = readlink("/proc/self/exe", exe, sizeof exe - 1);
  exe[n > 0 ? n : 0] = 0;
  char *slash = strrchr(exe, '/');
  buf[0] = 0;
  if (!slash) return false;
  slash[1] = 0;
  int w = snprintf(buf, cap, "%s%s", exe, name);
  if (w < 0 || (size_t)w >= cap || access(buf, R_OK)) {
    fprintf(stderr, "no %s beside this binary (make unit builds it)\n", name);
    buf[0] = 0;
    return false;
  }
  return true;
}

/* ------------------------------------------- descriptions (test_cuda_conv.c's) */

static void print_type(strbuf *b, const int64_t *dims, uint32_t rank, hlo_dtype dt) {
  sb_puts(b, "tensor<");
  for (uint32_t i = 0; i < rank; i++) sb_printf(b, "%lldx", (long long)dims[i]);
  sb_printf(b, "%s>", hlo_dtype_name(dt));
}

static void print_dims(strbuf *b, uint32_t rank, uint32_t d0, char c0, uint32_t d1, char c1,
                       const uint32_t *sp, uint32_t S) {
  sb_putc(b, '[');
  for (uint32_t d = 0; d < rank; d++) {
    if (d) sb_puts(b, ", ");
    if (d == d0) sb_putc(b, c0);
    else if (d == d1) sb_putc(b, c1);
    else
      for (uint32_t s = 0; s < S; s++)
        if (sp[s] == d) sb_printf(b, "%u", s);
  }
  sb_putc(b, ']');
}

static void print_list(strbuf *b, const char *name, const int64_t *v, uint32_t n) {
  sb_printf(b, "%s = [", name);
  for (uint32_t i = 0; i < n; i++) sb_printf(b, "%s%lld", i ? ", " : "", (long long)v[i]);
  sb_putc(b, ']');
}

/* The module `@main(lhs, rhs) -> convolution` of `c`, all types `dt`. */
static char *conv_module(const backend_conv *c, hlo_dtype dt) {
  strbuf b;
  sb_init(&b);
  uint32_t R = c->rank, S = c->num_spatial;
  sb_puts(&b, "func.func @main(%lhs: ");
  print_type(&b, c->lhs_dims, R, dt);
  sb_puts(&b, ", %rhs: ");
  print_type(&b, c->rhs_dims, R, dt);
  sb_puts(&b, ") -> ");
  print_type(&b, c->result_dims, R, dt);
  sb_puts(&b, " {\n  %0 = stablehlo.convolution(%lhs, %rhs) dim_numbers = ");
  print_dims(&b, R, c->input_batch_dimension, 'b', c->input_feature_dimension, 'f',
             c->input_spatial_dimensions, S);
  sb_putc(&b, 'x');
  print_dims(&b, R, c->kernel_input_feature_dimension, 'i', c->kernel_output_feature_dimension,
             'o', c->kernel_spatial_dimensions, S);
  sb_puts(&b, "->");
  print_dims(&b, R, c->output_batch_dimension, 'b', c->output_feature_dimension, 'f',
             c->output_spatial_dimensions, S);
  if (S) {
    sb_puts(&b, ", window = {");
    print_list(&b, "stride", c->window_strides, S);
    sb_puts(&b, ", pad = [");
    for (uint32_t s = 0; s < S; s++)
      sb_printf(&b, "%s[%lld, %lld]", s ? ", " : "", (long long)c->padding_low[s],
                (long long)c->padding_high[s]);
    sb_puts(&b, "], ");
    print_list(&b, "lhs_dilate", c->lhs_dilation, S);
    sb_puts(&b, ", ");
    print_list(&b, "rhs_dilate", c->rhs_dilation, S);
    sb_puts(&b, ", reverse = [");
    for (uint32_t s = 0; s < S; s++)
      sb_printf(&b, "%s%s", s ? ", " : "", c->window_reversal[s] ? "true" : "false");
    sb_puts(&b, "]}");
  }
  sb_printf(&b, " {batch_group_count = %lld : i64, feature_group_count = %lld : i64} : (",
            (long long)c->batch_group_count, (long long)c->feature_group_count);
  print_type(&b, c->lhs_dims, R, dt);
  sb_puts(&b, ", ");
  print_type(&b, c->rhs_dims, R, dt);
  sb_puts(&b, ") -> ");
  print_type(&b, c->result_dims, R, dt);
  sb_puts(&b, "\n  func.return %0 : ");
  print_type(&b, c->result_dims, R, dt);
  sb_puts(&b, "\n}\n");
  return sb_take(&b);
}

/* Result dims from the rest (spec C25). */
static void finish_desc(backend_conv *c) {
  uint32_t S = c->num_spatial;
  c->result_dims[c->output_batch_dimension] =
      c->lhs_dims[c->input_batch_dimension] / c->batch_group_count;
  c->result_dims[c->output_feature_dimension] = c->rhs_dims[c->kernel_output_feature_dimension];
  for (uint32_t s = 0; s < S; s++) {
    int64_t ld = c->lhs_dims[c->input_spatial_dimensions[s]];
    int64_t kd = c->rhs_dims[c->kernel_spatial_dimensions[s]];
    int64_t din = ld == 0 ? 0 : (ld - 1) * c->lhs_dilation[s] + 1;
    int64_t padded = c->padding_low[s] + din + c->padding_high[s];
    int64_t dw = kd == 0 ? 0 : (kd - 1) * c->rhs_dilation[s] + 1;
    c->result_dims[c->output_spatial_dimensions[s]] =
        (padded <= 0 || dw > padded) ? 0 : (padded - dw) / c->window_strides[s] + 1;
  }
}

static void wgrad_desc(backend_conv *c, int64_t N, int64_t H, int64_t W, int64_t C, int64_t O,
                       int64_t KH, int64_t KW, int64_t st, int64_t pad, int64_t dil) {
  memset(c, 0, sizeof *c);
  c->rank = 4;
  c->num_spatial = 2;
  c->input_feature_dimension = 0, c->input_spatial_dimensions[0] = 1;
  c->input_spatial_dimensions[1] = 2, c->input_batch_dimension = 3;
  c->kernel_input_feature_dimension = 0, c->kernel_spatial_dimensions[0] = 1;
  c->kernel_spatial_dimensions[1] = 2, c->kernel_output_feature_dimension = 3;
  c->output_spatial_dimensions[0] = 0, c->output_spatial_dimensions[1] = 1;
  c->output_batch_dimension = 2, c->output_feature_dimension = 3;
  int64_t oh = (H + 2 * pad - ((KH - 1) * dil + 1)) / st + 1;
  int64_t ow = (W + 2 * pad - ((KW - 1) * dil + 1)) / st + 1;
  int64_t lhs[4] = {N, H, W, C}, rhs[4] = {N, oh, ow, O};
  for (int d = 0; d < 4; d++) c->lhs_dims[d] = lhs[d], c->rhs_dims[d] = rhs[d];
  for (uint32_t s = 0; s < 2; s++) {
    c->window_strides[s] = dil; /* the forward dilation */
    c->rhs_dilation[s] = st;    /* the forward stride */
    c->lhs_dilation[s] = 1;
    c->padding_low[s] = pad;
    /* high padding: whatever makes the result KH x KW */
    int64_t ld = s ? W : H, kd = s ? ow : oh, want = s ? KW : KH;
    c->padding_high[s] = (want - 1) * dil + (kd - 1) * st + 1 - ld - pad;
  }
  c->feature_group_count = c->batch_group_count = 1;
  finish_desc(c);
}


/* A convolution with the given layouts (dim_numbers letters: "b01f" for
 * the input, "01io" for the kernel, S spatial digits), sizes by role,
 * stride 1 and `pad` on every side. */
static void lay(backend_conv *c, const char *in, const char *ker, const char *out, int64_t B,
                int64_t C, const int64_t *sp, int64_t O, const int64_t *ks, int64_t pad) {
  memset(c, 0, sizeof *c);
  uint32_t R = (uint32_t)strlen(in), S = R - 2;
  c->rank = R;
  c->num_spatial = S;
  for (uint32_t d = 0; d < R; d++) {
    switch (in[d]) {
    case 'b': c->input_batch_dimension = d; c->lhs_dims[d] = B; break;
    case 'f': c->input_feature_dimension = d; c->lhs_dims[d] = C; break;
    default: c->input_spatial_dimensions[in[d] - '0'] = d; c->lhs_dims[d] = sp[in[d] - '0'];
    }
    switch (ker[d]) {
    case 'i': c->kernel_input_feature_dimension = d; c->rhs_dims[d] = C; break;
    case 'o': c->kernel_output_feature_dimension = d; c->rhs_dims[d] = O; break;
    default: c->kernel_spatial_dimensions[ker[d] - '0'] = d; c->rhs_dims[d] = ks[ker[d] - '0'];
    }
    switch (out[d]) {
    case 'b': c->output_batch_dimension = d; break;
    case 'f': c->output_feature_dimension = d; break;
    default: c->output_spatial_dimensions[out[d] - '0'] = d;
    }
  }
  for (uint32_t s = 0; s < S; s++) {
    c->window_strides[s] = c->lhs_dilation[s] = c->rhs_dilation[s] = 1;
    c->padding_low[s] = c->padding_high[s] = pad;
  }
  c->feature_group_count = c->batch_group_count = 1;
  finish_desc(c);
}

static const int64_t sp7x6[] = {7, 6}, sp8x6[] = {8, 6}, k3x3[] = {3, 3};

/* ------------------------------------------------------------ cases */

typedef struct conv_case {
  char what[96];
  backend_conv c; /* conv_describe's, with the op's location */
  hlo_dtype dt;
  char *text;
  tl_run r;
  tensor *in[2], *ref;
} conv_case;

/* The case: the module printed, parsed, described again, its operands
 * random, the interpreter's result. False (checks failed) otherwise. */
static bool make_case(conv_case *k, const char *what, const backend_conv *c0, hlo_dtype dt) {
  memset(k, 0, sizeof *k);
  snprintf(k->what, sizeof k->what, "%s (%s)", what, hlo_dtype_name(dt));
  backend_conv c = *c0;
  c.lhs_dtype = c.rhs_dtype = c.result_dtype = dt;
  k->dt = dt;
  k->text = conv_module(&c, dt);
  hlo_source src = tl_source(k->what, k->text);
  hlo_status st = tl_prepare(&src, 0, strlen(k->text), 0, NULL, &k->r);
  if (st) {
    fprintf(stderr, "%s: does not parse:\n%s", k->what, k->text);
    hlo_status_free(st);
    CHECK(false);
    return false;
  }
  const hlo_op *op = k->r.f->body.block.first;
  bool ok = conv_describe(op, &k->c);
  CHECK(ok);
  if (!ok) return false;
  func_number_values(k->r.f);
  for (int i = 0; i < 2; i++) {
    k->in[i] = tensor_new(op->operands[i]->type);
    CHECK(k->in[i] != NULL);
    if (!k->in[i]) return false;
    for (int64_t e = 0; e < k->in[i]->num_elems; e++) elem_set_f64(dt, k->in[i]->data, e, rand_unit());
  }
  const hlo_value *vals[2] = {op->operands[0], op->operands[1]};
  st = interp_run_op(k->r.it, op, vals, k->in, 2, &k->ref);
  if (st) {
    hlo_status_print(st, stderr);
    hlo_status_free(st);
    CHECK(false);
    return false;
  }
  return true;
}

static void free_case(conv_case *k) {
  if (k->in[0]) tensor_release(k->in[0]);
  if (k->in[1]) tensor_release(k->in[1]);
  if (k->ref) tensor_release(k->ref);
  tl_run_free(&k->r);
  free(k->text);
}

static double g_f32_tol = 1e-5; /* 5e-3 on a GPU with TF32 (real_device) */

static bool compare(const conv_case *k, const void *got) {
  double num = 0, den = 0;
  for (int64_t e = 0; e < k->ref->num_elems; e++) {
    double a = elem_get_f64(k->dt, got, e), w = elem_get_f64(k->dt, k->ref->data, e);
    num += (a - w) * (a - w), den += w * w;
  }
  double tol = k->dt == HLO_F64 ? 1e-12 : g_f32_tol;
  double rel = den == 0 ? num : sqrt(num / den);
  if (!(rel <= tol)) fprintf(stderr, "%s: relative norm %.3g (tolerance %.3g)\n%s", k->what, rel, tol, k->text);
  return rel <= tol;
}

/* ------------------------------------------------------------ the mock */

static char g_mock[4096];
static void *g_mh; /* the mock, once loaded */

static void *mock_sym(const char *name) {
  if (!g_mh && g_mock[0]) g_mh = dlopen(g_mock, RTLD_NOW | RTLD_NOLOAD);
  void *p = g_mh ? dlsym(g_mh, name) : NULL;
  CHECK(p != NULL);
  return p;
}
#define MOCK_INT(name) (*(int *)mock_sym(#name))

/* Sets HLO_CUDNN_LIB to the mock (before the first load). */
static bool use_mock(void) {
  if (!g_mock[0] && !beside("libcudnn_mock.so", g_mock, sizeof g_mock)) return false;
  setenv("HLO_CUDNN_LIB", g_mock, 1);
  return true;
}

typedef struct run_case {
  const char *what;
  backend_conv c;
  hlo_dtype dt;
  int kind;  /* the mock's call */
  int transforms;
} run_case;

/* The run cases (f32 and f64: the mock computes those). */
static int run_cases(run_case *rc) {
  int n = 0;
  backend_conv c;
  lay(&c, "bf01", "oi01", "bf01", 2, 3, sp7x6, 4, k3x3, 1);
  rc[n++] = (run_case){"NCHW / OIHW, pad 1", c, HLO_F32, 1, 0};
  lay(&c, "b01f", "01io", "b01f", 2, 3, sp7x6, 4, k3x3, 1);
  rc[n++] = (run_case){"NHWC / HWIO, pad 1", c, HLO_F64, 1, 1};
  lay(&c, "b01f", "o01i", "b01f", 3, 2, sp7x6, 5, k3x3, 0);
  rc[n++] = (run_case){"NHWC / OHWI", c, HLO_F32, 1, 0};
  lay(&c, "f01b", "i01o", "0b1f", 3, 2, sp7x6, 5, k3x3, 2); /* odd orders everywhere */
  rc[n++] = (run_case){"odd layouts", c, HLO_F64, 1, 1};
  lay(&c, "bf01", "oi01", "bf01", 2, 4, sp8x6, 6, k3x3, 1);
  c.window_strides[0] = 2, c.rhs_dilation[1] = 2, c.padding_high[0] = 0;
  c.feature_group_count = 2, c.rhs_dims[1] = 2;
  finish_desc(&c);
  rc[n++] = (run_case){"strides, dilation, (1, 0) padding, 2 groups", c, HLO_F32, 1, 0};
  lay(&c, "b01f", "01io", "b01f", 2, 3, sp7x6, 4, k3x3, 1);
  c.window_reversal[0] = c.window_reversal[1] = true;
  rc[n++] = (run_case){"reversed window", c, HLO_F32, 1, 1};
  const int64_t sp3[] = {4, 5, 6}, k3[] = {2, 3, 2};
  lay(&c, "b012f", "012io", "b012f", 2, 3, sp3, 4, k3, 1);
  rc[n++] = (run_case){"3-d NDHWC / DHWIO", c, HLO_F32, 1, 1};
  const int64_t sp45[] = {4, 5};
  lay(&c, "b01f", "01io", "b01f", 2, 3, sp45, 4, k3x3, 1);
  for (int s = 0; s < 2; s++) c.lhs_dilation[s] = 2, c.padding_high[s] = 2;
  c.rhs_dilation[1] = 2, c.padding_low[1] = 2, finish_desc(&c);
  rc[n++] = (run_case){"transposed conv (lhs dilation 2)", c, HLO_F32, 2, 1};
  for (int s = 0; s < 2; s++) c.window_reversal[s] = true;
  rc[n++] = (run_case){"transposed conv, reversed", c, HLO_F64, 2, 1};
  lay(&c, "bf01", "io01", "bf01", 2, 3, sp45, 4, k3x3, 1);
  for (int s = 0; s < 2; s++) c.lhs_dilation[s] = 3;
  finish_desc(&c);
  rc[n++] = (run_case){"transposed conv, IOHW kernel packed", c, HLO_F32, 2, 0};
  wgrad_desc(&c, 4, 9, 9, 3, 5, 3, 3, 2, 1, 1);
  rc[n++] = (run_case){"weight gradient, stride 2", c, HLO_F32, 3, 1};
  wgrad_desc(&c, 3, 10, 9, 2, 4, 3, 2, 1, 2, 2);
  rc[n++] = (run_case){"weight gradient, dilation 2", c, HLO_F64, 3, 1};
  wgrad_desc(&c, 4, 6, 6, 4, 6, 3, 3, 1, 1, 1);
  c.batch_group_count = 2, c.rhs_dims[3] = 6;
  finish_desc(&c);
  rc[n++] = (run_case){"weight gradient, 2 batch groups", c, HLO_F32, 3, 1};
  return n;
}

/* With a GPU (HLO_CUDNN_TEST_CHILD=real, the real driver and cuDNN, e.g.
 * HLO_CUDNN_DIR from tests/gpu/deps.sh; HLO_CUDA_TF32=0 for full f32):
 * every run case through cuda_conv_by(CUDA_CONV_CUDNN) on device buffers
 * against the interpreter; exit 0 passed, 1 failed, 3 skipped. */
static int real_device(void) {
  const backend *be = NULL;
  hlo_status st = backend_cuda(&be);
  if (st) {
    printf("real: skipped: %s\n", hlo_status_message(st));
    hlo_status_free(st);
    return 3;
  }
  const cudnn_api *api = NULL;
  st = cudnn_load(&api);
  if (st) {
    printf("real: skipped: %s\n", hlo_status_message(st));
    hlo_status_free(st);
    return 3;
  }
  const char *tf = getenv("HLO_CUDA_TF32");
  if (!(tf && !strcmp(tf, "0"))) g_f32_tol = 5e-3; /* DEFAULT-precision f32 in TF32 */
  printf("real: %s, cuDNN %zu (%s), f32 tolerance %g\n", cuda_state()->name, api->version,
         api->path, g_f32_tol);
  run_case rc[16];
  int n = run_cases(rc);
  for (int i = 0; i < n; i++) {
    conv_case k;
    if (!make_case(&k, rc[i].what, &rc[i].c, rc[i].dt)) continue;
    bool takes = false;
    size_t bytes = 0;
    st = cuda_cudnn_plan(&k.c, &takes, &bytes);
    if (st) hlo_status_print(st, stderr);
    hlo_status_free(st);
    size_t lb = (size_t)k.in[0]->nbytes, rb = (size_t)k.in[1]->nbytes, ob = (size_t)k.ref->nbytes;
    void *dl = be->alloc(lb), *dr = be->alloc(rb), *dout = be->alloc(ob);
    void *ds = bytes ? be->alloc(bytes) : NULL, *host = malloc(ob);
    st = be->copy(dl, k.in[0]->data, lb);
    if (!st) st = be->copy(dr, k.in[1]->data, rb);
    if (!st && !takes) {
      printf("real: %-48s declined by cuDNN (our paths)\n", k.what);
      be->free(dl), be->free(dr), be->free(dout);
      free(host);
      free_case(&k);
      continue;
    }
    if (!st) st = cuda_conv_by(&k.c, CUDA_CONV_CUDNN, dl, dr, dout, ds);
    if (!st) st = be->synchronize();
    if (!st) st = be->copy(host, dout, ob);
    printf("real: %-48s %s, scratch %zu: %s\n", k.what, takes ? "taken" : "NOT TAKEN", bytes,
           st ? hlo_status_message(st) : "ran");
    CHECK(!st || !takes); /* a form cuDNN declines is no error: our paths take it */
    if (st) hlo_status_print(st, stderr);
    else CHECK(compare(&k, host));
    hlo_status_free(st);
    be->free(dl), be->free(dr), be->free(dout);
    if (ds) be->free(ds);
    free(host);
    free_case(&k);
  }
  /* the five convolutions of cnn_sgd_step_64x28x28 (bench/CONV.md): checked, and timed
   * on cuDNN and on our tiled and im2col paths (20 calls after 3, on the stream) */
  backend_conv five[5];
  const int64_t s28[] = {28, 28}, s14[] = {14, 14};
  lay(&five[0], "b01f", "01io", "b01f", 64, 1, s28, 16, k3x3, 1);
  lay(&five[1], "b01f", "01io", "b01f", 64, 16, s14, 32, k3x3, 1);
  wgrad_desc(&five[2], 64, 14, 14, 16, 32, 3, 3, 1, 1, 1);
  lay(&five[3], "b01f", "01oi", "b01f", 64, 32, s14, 16, k3x3, 1);
  wgrad_desc(&five[4], 64, 28, 28, 1, 16, 3, 3, 1, 1, 1);
  const cuda_device_state *cs = cuda_state();
  CUevent e0 = NULL, e1 = NULL;
  (void)cs->cu->cuEventCreate(&e0, CU_EVENT_DEFAULT);
  (void)cs->cu->cuEventCreate(&e1, CU_EVENT_DEFAULT);
  for (int i = 0; i < 5; i++) {
    conv_case k;
    char what[32];
    snprintf(what, sizeof what, "cnn conv %d", i);
    if (!make_case(&k, what, &five[i], HLO_F32)) continue;
    size_t lb = (size_t)k.in[0]->nbytes, rb = (size_t)k.in[1]->nbytes, ob = (size_t)k.ref->nbytes;
    void *dl = be->alloc(lb), *dr = be->alloc(rb), *dout = be->alloc(ob), *host = malloc(ob);
    st = be->copy(dl, k.in[0]->data, lb);
    if (!st) st = be->copy(dr, k.in[1]->data, rb);
    hlo_status_free(st);
    const cuda_conv_path paths[3] = {CUDA_CONV_CUDNN, CUDA_CONV_TILED, CUDA_CONV_IM2COL};
    const char *names[3] = {"cudnn", "tiled", "im2col"};
    printf("real: %s:", what);
    for (int p = 0; p < 3; p++) {
      size_t sb = cuda_conv_path_scratch_bytes(&k.c, paths[p], CUDA_CONV_SCRATCH_TARGET);
      void *ds = sb ? be->alloc(sb) : NULL;
      st = NULL;
      for (int it = 0; it < 3 && !st; it++) st = cuda_conv_by(&k.c, paths[p], dl, dr, dout, ds);
      if (!st) st = be->synchronize();
      if (!st) st = be->copy(host, dout, ob);
      if (!st && !compare(&k, host)) {
        printf(" [%s WRONG]", names[p]);
        CHECK(p != 0);
      }
      float ms = 0, gms = 0;
      if (!st) {
        (void)cs->cu->cuEventRecord(e0, cs->stream);
        for (int it = 0; it < 20 && !st; it++) st = cuda_conv_by(&k.c, paths[p], dl, dr, dout, ds);
        (void)cs->cu->cuEventRecord(e1, cs->stream);
        (void)cs->cu->cuEventSynchronize(e1);
        (void)cs->cu->cuEventElapsedTime(&ms, e0, e1);
      }
      /* the same 20 calls recorded into a CUDA graph (as the runtime runs them), 5 replays */
      void *graph = NULL;
      if (!st) st = be->graph_begin();
      for (int it = 0; it < 20 && !st; it++) st = cuda_conv_by(&k.c, paths[p], dl, dr, dout, ds);
      if (!st) {
        st = be->graph_end(&graph);
      } else {
        void *g2 = NULL;
        hlo_status_free(be->graph_end(&g2));
        be->graph_destroy(g2);
      }
      if (!st) st = be->graph_launch(graph);
      if (!st) st = be->synchronize();
      if (!st) {
        (void)cs->cu->cuEventRecord(e0, cs->stream);
        for (int it = 0; it < 5 && !st; it++) st = be->graph_launch(graph);
        (void)cs->cu->cuEventRecord(e1, cs->stream);
        (void)cs->cu->cuEventSynchronize(e1);
        (void)cs->cu->cuEventElapsedTime(&gms, e0, e1);
      }
      if (!st) st = be->copy(host, dout, ob);
      if (!st && !compare(&k, host)) {
        printf(" [%s WRONG in the graph]", names[p]);
        CHECK(p != 0);
      }
      be->graph_destroy(graph);
      if (st) printf(" %s: %s", names[p], hlo_status_message(st));
      else printf(" %s %.1f us eager, %.1f us in a graph (scratch %zu);", names[p],
                  ms * 1000 / 20, gms * 1000 / 100, sb);
      if (p == 0) CHECK(!st);
      hlo_status_free(st);
      if (ds) be->free(ds);
    }
    printf("\n");
    be->free(dl), be->free(dr), be->free(dout);
    free(host);
    free_case(&k);
  }
  return test_cur_failed ? 1 : 0;
}

/* ------------------------------------------------------------ 4. the choice (children) */

/* The child's checks: exit 0 passed, 1 failed, 3 skipped. */
static int child(const char *mode) {
  const backend *be = NULL;
  hlo_status st = backend_cuda(&be);
  if (st) {
    printf("choice (%s): skipped: the backend does not start on the mock: %s\n", mode,
           hlo_status_message(st));
    hlo_status_free(st);
    return 3;
  }
  const int64_t sp[] = {16, 16};
  backend_conv c;
  lay(&c, "b01f", "01io", "b01f", 8, 8, sp, 16, k3x3, 1); /* 2.4M multiply-adds */
  conv_case k;
  if (!make_case(&k, "choice: NHWC / HWIO 8x16x16x8 -> 16", &c, HLO_F32)) return 1;
  const int64_t tsp[] = {4, 4};
  backend_conv tiny;
  lay(&tiny, "bf01", "oi01", "bf01", 1, 2, tsp, 2, k3x3, 1);
  tiny.lhs_dtype = tiny.rhs_dtype = tiny.result_dtype = HLO_F32;
  cuda_conv_path path = cuda_conv_choose(&k.c);
  size_t bytes = cuda_conv_scratch_bytes(&k.c);
  void *out = malloc((size_t)k.ref->nbytes), *scratch = malloc(bytes ? bytes : 1);
  if (!strcmp(mode, "on")) {
    CHECK_EQ_INT(path, CUDA_CONV_CUDNN);
    CHECK_EQ_INT(cuda_conv_choose(&tiny), CUDA_CONV_DIRECT);
    bool takes = false;
    size_t pb = 0;
    st = cuda_cudnn_plan(&k.c, &takes, &pb);
    CHECK(!st && takes && pb == bytes && bytes > 0);
    hlo_status_free(st);
    memset(out, 0x7f, (size_t)k.ref->nbytes);
    st = cuda_conv(&k.c, k.in[0]->data, k.in[1]->data, out, scratch);
    if (st) hlo_status_print(st, stderr);
    CHECK(!st);
    hlo_status_free(st);
    CHECK(compare(&k, out));
    g_mh = dlopen(getenv("HLO_CUDNN_LIB"), RTLD_NOW | RTLD_NOLOAD);
    CHECK(g_mh != NULL);
    if (g_mh) {
      CHECK_EQ_INT(MOCK_INT(mock_cudnn_kind), 1);
      CHECK(*(void **)mock_sym("mock_cudnn_stream") == (void *)cuda_state()->stream);
      CHECK(*(void **)mock_sym("mock_cudnn_ws_ptr") == scratch);
    }
  } else if (!strcmp(mode, "off") || !strcmp(mode, "missing")) {
    CHECK(path != CUDA_CONV_CUDNN);
    CHECK(path == cuda_conv_choose(&k.c));
    if (!strcmp(mode, "off")) CHECK(dlopen(getenv("HLO_CUDNN_LIB"), RTLD_NOW | RTLD_NOLOAD) == NULL);
  } else { /* forced, missing */
    CHECK_EQ_INT(path, CUDA_CONV_CUDNN);
    st = cuda_conv(&k.c, k.in[0]->data, k.in[1]->data, out, scratch);
    CHECK(st != NULL);
    if (st) {
      const char *m = hlo_status_message(st);
      printf("choice (forced, missing): %s\n", m);
      CHECK_EQ_INT(hlo_status_code_of(st), HLO_UNAVAILABLE);
      CHECK(strstr(m, "/nonexistent/libcudnn.so.9") != NULL);
      CHECK(strstr(m, "HLO_CUDNN=1") != NULL);
      hlo_status_free(st);
    }
  }
  free(out);
  free(scratch);
  free_case(&k);
  return test_cur_failed ? 1 : 0;
}

/* ------------------------------------------------------------ 6. the compilation cache */

/* The child of cache_keeps_choices: compiles the NHWC / HWIO conv program
 * for the cuda backend (mock driver, mock cuDNN) with the compilation cache
 * at $HLO_CUDNN_TEST_CACHE, the compile log and the miss explanation on,
 * runs it once, and prints "finds=N algo=A" (the mock's cudnnFind* calls,
 * the algorithm of the run). Exit 0, 1 failed, 3 skipped. */
static int cache_child(void) {
  const int64_t sp[] = {16, 16};
  backend_conv c;
  lay(&c, "b01f", "01io", "b01f", 8, 8, sp, 16, k3x3, 1);
  char *text = conv_module(&c, HLO_F32);
  hlo_module *m = NULL;
  hlo_executable *e = NULL;
  hlo_compile_options o = {.backend = HLO_BACKEND_CUDA, .cache_dir = getenv("HLO_CUDNN_TEST_CACHE"),
                           .log_compiles = true, .explain_cache_misses = true};
  hlo_status st = hlo_module_parse("conv", text, strlen(text), &m);
  if (!st) st = hlo_executable_compile(m, NULL, &o, &e);
  if (st && hlo_status_code_of(st) == HLO_UNAVAILABLE) {
    printf("cache: skipped: %s\n", hlo_status_message(st));
    hlo_status_free(st);
    hlo_module_destroy(m);
    free(text);
    return 3;
  }
  if (st) hlo_status_print(st, stderr);
  CHECK(!st);
  hlo_status_free(st);
  st = NULL;
  /* cuDNN's handles made by the compile (none for kept choices: the first run makes it) */
  void *h = dlopen(getenv("HLO_CUDNN_LIB"), RTLD_NOW | RTLD_NOLOAD);
  int *creates = h ? dlsym(h, "mock_cudnn_creates") : NULL;
  int compile_creates = creates ? *creates : -1;
  /* one run: the conv through cuDNN with the plan's algorithm */
  size_t nl = 8 * 16 * 16 * 8, nr = 3 * 3 * 8 * 16;
  float *lhs = calloc(nl, sizeof *lhs), *rhs = calloc(nr, sizeof *rhs);
  int64_t ld[4] = {8, 16, 16, 8}, rd[4] = {3, 3, 8, 16};
  hlo_buffer_view v[2] = {{HLO_F32, 4, ld, lhs}, {HLO_F32, 4, rd, rhs}};
  hlo_buffer **res = NULL;
  if (e && lhs && rhs) st = hlo_executable_run(e, v, 2, &res);
  if (st) hlo_status_print(st, stderr);
  CHECK(!st);
  hlo_status_free(st);
  if (res) hlo_buffer_destroy(res[0]);
  free(res);
  free(lhs);
  free(rhs);
  int *finds = h ? dlsym(h, "mock_cudnn_finds") : NULL, *algo = h ? dlsym(h, "mock_cudnn_algo") : NULL;
  int *runs = h ? dlsym(h, "mock_cudnn_runs") : NULL;
  CHECK(finds && algo && runs);
  printf("finds=%d algo=%d runs=%d creates=%d,%d\n", finds ? *finds : -1, algo ? *algo : -1,
         runs ? *runs : -1, compile_creates, creates ? *creates : -1);
  hlo_executable_destroy(e);
  hlo_module_destroy(m);
  free(text);
  return test_cur_failed ? 1 : 0;
}

TEST(a_choice) {
  const char *mode = getenv("HLO_CUDNN_TEST_CHILD");
  if (mode) {
    int rc = !strcmp(mode, "real") ? real_device() : !strcmp(mode, "cache") ? cache_child() : child(mode);
    fflush(stdout);
    fflush(stderr);
    _exit(rc);
  }
  char drv[4096], dnn[4096];
  bool have = cuda_mock_path("choice", drv, sizeof drv) && beside("libcudnn_mock.so", dnn, sizeof dnn);
  CHECK(have);
  if (!have) return;
  const char *modes[] = {"on", "off", "missing", "forced"};
  for (int i = 0; i < 4; i++) {
    fflush(stdout);
    fflush(stderr);
    pid_t pid = fork();
    CHECK(pid >= 0);
    if (pid == 0) {
      setenv("HLO_CUDNN_TEST_CHILD", modes[i], 1);
      setenv("HLO_CUDA_LIB", drv, 1);
      bool missing = i >= 2;
      setenv("HLO_CUDNN_LIB", missing ? "/nonexistent/libcudnn.so.9" : dnn, 1);
      if (i == 1) setenv("HLO_CUDNN", "0", 1);
      else if (i == 3) setenv("HLO_CUDNN", "1", 1);
      else unsetenv("HLO_CUDNN");
      char *argv[] = {(char *)"test_cuda_cudnn", NULL};
      execv("/proc/self/exe", argv);
      _exit(99);
    }
    int ws = 0;
    CHECK(pid > 0 && waitpid(pid, &ws, 0) == pid);
    int code = WIFEXITED(ws) ? WEXITSTATUS(ws) : 100 + (WIFSIGNALED(ws) ? WTERMSIG(ws) : 0);
    if (code != 0 && code != 3) fprintf(stderr, "choice (%s): the child exited with %d\n", modes[i], code);
    CHECK(code == 0 || code == 3);
  }
}

/* ------------------------------------------------------------ 1. the mapping */

TEST(map_forward_layouts) {
  backend_conv c;
  cuda_cudnn_desc d;
  bool tf32 = !(getenv("HLO_CUDA_TF32") && !strcmp(getenv("HLO_CUDA_TF32"), "0"));
  /* NCHW / OIHW: packed NCHW filter, strides as the operands lie */
  lay(&c, "bf01", "oi01", "bf01", 2, 3, sp7x6, 4, k3x3, 1);
  c.lhs_dtype = c.rhs_dtype = c.result_dtype = HLO_F32;
  CHECK(cuda_cudnn_map(&c, &d));
  CHECK_EQ_INT(d.kind, CUDA_CUDNN_FORWARD);
  CHECK_EQ_INT(d.nb, 4);
  CHECK(d.x_dims[0] == 2 && d.x_dims[1] == 3 && d.x_dims[2] == 7 && d.x_dims[3] == 6);
  CHECK(d.x_strides[0] == 126 && d.x_strides[1] == 42 && d.x_strides[2] == 6 && d.x_strides[3] == 1);
  CHECK(d.y_dims[0] == 2 && d.y_dims[1] == 4 && d.y_dims[2] == 7 && d.y_dims[3] == 6);
  CHECK(d.w_dims[0] == 4 && d.w_dims[1] == 3 && d.w_dims[2] == 3 && d.w_dims[3] == 3);
  CHECK(d.w_packed && d.w_format == CUDNN_TENSOR_NCHW);
  CHECK(d.pad[0] == 1 && d.pad[1] == 1 && d.stride[0] == 1 && d.dilation[1] == 1);
  CHECK_EQ_INT(d.mode, CUDNN_CROSS_CORRELATION);
  CHECK_EQ_INT(d.groups, 1);
  CHECK_EQ_INT(d.dtype, CUDNN_DATA_FLOAT);
  CHECK_EQ_INT(d.math, tf32 ? CUDNN_DEFAULT_MATH : CUDNN_FMA_MATH);
  c.precision[0] = BACKEND_PRECISION_HIGHEST; /* full f32 */
  CHECK(cuda_cudnn_map(&c, &d) && d.math == CUDNN_FMA_MATH);
  /* NHWC / HWIO: x strides NHWC, the filter not packed: NHWC copy */
  lay(&c, "b01f", "01io", "b01f", 2, 3, sp7x6, 4, k3x3, 0);
  c.lhs_dtype = c.rhs_dtype = c.result_dtype = HLO_F64;
  CHECK(cuda_cudnn_map(&c, &d));
  CHECK(d.x_strides[0] == 126 && d.x_strides[1] == 1 && d.x_strides[2] == 18 && d.x_strides[3] == 3);
  CHECK(d.w_dims[0] == 4 && d.w_dims[1] == 3 && d.w_dims[2] == 3 && d.w_dims[3] == 3);
  CHECK(d.w_strides[0] == 1 && d.w_strides[1] == 4 && d.w_strides[2] == 36 && d.w_strides[3] == 12);
  CHECK(!d.w_packed && d.w_format == CUDNN_TENSOR_NHWC);
  CHECK(d.dtype == CUDNN_DATA_DOUBLE && d.compute == CUDNN_DATA_DOUBLE);
  /* NHWC / OHWI: packed NHWC */
  lay(&c, "b01f", "o01i", "b01f", 2, 3, sp7x6, 4, k3x3, 0);
  c.lhs_dtype = c.rhs_dtype = c.result_dtype = HLO_BF16;
  CHECK(cuda_cudnn_map(&c, &d));
  CHECK(d.w_packed && d.w_format == CUDNN_TENSOR_NHWC);
  CHECK(d.dtype == CUDNN_DATA_BFLOAT16 && d.compute == CUDNN_DATA_FLOAT);
  /* strides, dilation, padding (1, 0) with stride 2 where the result size
   * is cuDNN's; feature groups; reversal */
  lay(&c, "bf01", "oi01", "bf01", 2, 4, sp8x6, 6, k3x3, 1);
  c.window_strides[0] = 2, c.rhs_dilation[1] = 2, c.padding_high[0] = 0;
  c.feature_group_count = 2, c.rhs_dims[1] = 2;
  c.window_reversal[0] = c.window_reversal[1] = true;
  finish_desc(&c);
  c.lhs_dtype = c.rhs_dtype = c.result_dtype = HLO_F16;
  CHECK(cuda_cudnn_map(&c, &d));
  CHECK(d.kind == CUDA_CUDNN_FORWARD && d.stride[0] == 2 && d.dilation[1] == 2 && d.groups == 2);
  CHECK(d.w_dims[1] == 2 && d.mode == CUDNN_CONVOLUTION && d.dtype == CUDNN_DATA_HALF);
  /* 3 spatial dims, NDHWC / DHWIO */
  const int64_t sp3[] = {4, 5, 6}, k3[] = {2, 3, 2};
  lay(&c, "b012f", "012io", "b012f", 2, 3, sp3, 4, k3, 1);
  c.lhs_dtype = c.rhs_dtype = c.result_dtype = HLO_F32;
  CHECK(cuda_cudnn_map(&c, &d));
  CHECK(d.nb == 5 && d.kind == CUDA_CUDNN_FORWARD && d.w_dims[4] == 2 && !d.w_packed);
}

TEST(map_gradients_and_refusals) {
  backend_conv c;
  cuda_cudnn_desc d;
  /* the transposed conv: lhs dilation 2, pad (1, 2) around a 3x3 window */
  const int64_t sp[] = {4, 5};
  lay(&c, "b01f", "01io", "b01f", 2, 3, sp, 4, k3x3, 1);
  for (int s = 0; s < 2; s++) c.lhs_dilation[s] = 2, c.padding_high[s] = 2;
  finish_desc(&c);
  c.lhs_dtype = c.rhs_dtype = c.result_dtype = HLO_F32;
  CHECK(cuda_cudnn_map(&c, &d));
  CHECK_EQ_INT(d.kind, CUDA_CUDNN_BACKWARD_DATA);
  CHECK(d.stride[0] == 2 && d.stride[1] == 2 && d.pad[0] == 1 && d.pad[1] == 1);
  CHECK(d.y_dims[1] == 3 && d.x_dims[1] == 4 && d.x_dims[2] == 8 && d.x_dims[3] == 10);
  CHECK(d.w_dims[0] == 3 && d.w_dims[1] == 4 && d.mode == CUDNN_CONVOLUTION);
  c.window_strides[0] = 2, finish_desc(&c);
  CHECK(!cuda_cudnn_map(&c, &d)); /* a strided transposed conv: ours */
  /* JAX's weight gradient: backward filter, the result [0, 1, i, o] */
  wgrad_desc(&c, 8, 12, 12, 3, 5, 3, 3, 2, 1, 1);
  c.lhs_dtype = c.rhs_dtype = c.result_dtype = HLO_F32;
  CHECK(cuda_cudnn_map(&c, &d));
  CHECK_EQ_INT(d.kind, CUDA_CUDNN_BACKWARD_FILTER);
  CHECK(d.x_dims[0] == 8 && d.x_dims[1] == 3 && d.y_dims[0] == 8 && d.y_dims[1] == 5);
  CHECK(d.w_dims[0] == 5 && d.w_dims[1] == 3 && d.w_dims[2] == 3 && !d.w_packed);
  CHECK(d.stride[0] == 2 && d.dilation[0] == 1 && d.pad[0] == 1);
  /* with batch groups (a grouped conv's weight gradient) */
  wgrad_desc(&c, 4, 6, 6, 4, 6, 3, 3, 1, 1, 2);
  c.batch_group_count = 2, c.rhs_dims[3] = 6;
  finish_desc(&c);
  c.lhs_dtype = c.rhs_dtype = c.result_dtype = HLO_F64;
  CHECK(cuda_cudnn_map(&c, &d));
  CHECK(d.kind == CUDA_CUDNN_BACKWARD_FILTER && d.groups == 2 && d.w_dims[1] == 2 && d.dilation[0] == 2);
  /* refused */
  lay(&c, "bf01", "oi01", "bf01", 2, 3, sp7x6, 4, k3x3, 1);
  c.lhs_dtype = c.rhs_dtype = c.result_dtype = HLO_F32;
  c.window_reversal[0] = true;
  CHECK(!cuda_cudnn_map(&c, &d)); /* mixed reversal */
  c.window_reversal[0] = false, c.padding_low[0] = -1, finish_desc(&c);
  CHECK(!cuda_cudnn_map(&c, &d)); /* negative padding */
  c.padding_low[0] = 0, c.padding_high[0] = 2, finish_desc(&c);
  CHECK(!cuda_cudnn_map(&c, &d)); /* (0, 2): cuDNN's symmetric 0 gives fewer rows */
  c.padding_low[0] = 1, c.padding_high[0] = 1, finish_desc(&c);
  c.lhs_dtype = c.rhs_dtype = c.result_dtype = HLO_I32;
  CHECK(!cuda_cudnn_map(&c, &d));
  const int64_t sp1[] = {9}, k1[] = {3};
  lay(&c, "bf0", "oi0", "bf0", 2, 3, sp1, 4, k1, 1);
  c.lhs_dtype = c.rhs_dtype = c.result_dtype = HLO_F32;
  CHECK(!cuda_cudnn_map(&c, &d)); /* 1 spatial dim */
}

/* ------------------------------------------------------------ 2. runs */


/* Plans and runs k on the mock; checks the result and what the mock saw. */
static void run_one(conv_case *k, int kind, int transforms) {
  bool takes = false;
  size_t bytes = 0;
  hlo_status st = cuda_cudnn_plan(&k->c, &takes, &bytes);
  if (st) hlo_status_print(st, stderr);
  CHECK(!st && takes);
  hlo_status_free(st);
  if (!takes) {
    fprintf(stderr, "%s: not taken\n%s", k->what, k->text);
    return;
  }
  int runs0 = MOCK_INT(mock_cudnn_runs), tr0 = MOCK_INT(mock_cudnn_transforms);
  unsigned char *scratch = malloc(bytes + 64), *out = malloc((size_t)k->ref->nbytes + 64);
  memset(scratch, 0xa5, bytes + 64);
  memset(out, 0xa5, (size_t)k->ref->nbytes + 64);
  st = cuda_cudnn_conv(&k->c, k->in[0]->data, k->in[1]->data, out, scratch, (CUstream)(uintptr_t)0x5);
  if (st) hlo_status_print(st, stderr);
  CHECK(!st);
  hlo_status_free(st);
  if (!compare(k, out)) CHECK(false);
  for (int i = 0; i < 64; i++) CHECK(out[k->ref->nbytes + i] == 0xa5);
  CHECK_EQ_INT(MOCK_INT(mock_cudnn_runs), runs0 + 1);
  CHECK_EQ_INT(MOCK_INT(mock_cudnn_kind), kind);
  CHECK_EQ_INT(MOCK_INT(mock_cudnn_transforms) - tr0, transforms);
  CHECK_EQ_INT(MOCK_INT(mock_cudnn_algo), 0); /* the deterministic one */
  CHECK(*(void **)mock_sym("mock_cudnn_ws_ptr") == scratch);
  CHECK(*(size_t *)mock_sym("mock_cudnn_ws_size") == 4096);
  CHECK(*(void **)mock_sym("mock_cudnn_stream") == (void *)(uintptr_t)0x5);
  size_t es = k->dt == HLO_F64 ? 8 : 4;
  int64_t welems = k->c.rank && MOCK_INT(mock_cudnn_kind) == 3 ? conv_result_elements(&k->c)
                                                                : conv_rhs_elements(&k->c);
  CHECK_EQ_INT(bytes, 4096 + (transforms ? ((size_t)welems * es + 255) / 256 * 256 : 0));
  free(scratch);
  free(out);
}

TEST(runs_against_interpreter) {
  if (!use_mock()) {
    CHECK(false);
    return;
  }
  const cudnn_api *api = NULL;
  hlo_status st = cudnn_load(&api);
  if (st) hlo_status_print(st, stderr);
  CHECK(!st);
  hlo_status_free(st);
  if (!api) return;
  CHECK(api->version == 90100);
  run_case rc[16];
  int n = run_cases(rc);
  for (int i = 0; i < n; i++) {
    conv_case k;
    if (make_case(&k, rc[i].what, &rc[i].c, rc[i].dt)) run_one(&k, rc[i].kind, rc[i].transforms);
    free_case(&k);
  }
}

/* ------------------------------------------------------------ 3. errors */

TEST(errors_name_the_call) {
  if (!use_mock()) return;
  const cudnn_api *api = NULL;
  hlo_status st = cudnn_load(&api);
  CHECK(!st);
  hlo_status_free(st);
  if (!api) return;
  char *fail = mock_sym("mock_cudnn_fail");
  int *fail_status = mock_sym("mock_cudnn_fail_status");
  if (!fail || !fail_status) return;
  const int64_t sp[] = {5, 5};
  backend_conv c;
  lay(&c, "bf01", "oi01", "bf01", 1, 2, sp, 3, k3x3, 1);
  conv_case k;
  if (!make_case(&k, "errors", &c, HLO_F32)) return;
  strcpy(fail, "cudnnConvolutionForward");
  unsigned char scratch[8192];
  float out[75];
  st = cuda_cudnn_conv(&k.c, k.in[0]->data, k.in[1]->data, out, scratch, NULL);
  CHECK(st != NULL);
  if (st) {
    const char *m = hlo_status_message(st);
    CHECK_EQ_INT(hlo_status_code_of(st), HLO_INTERNAL);
    CHECK(strstr(m, "cudnnConvolutionForward") && strstr(m, "CUDNN_STATUS_EXECUTION_FAILED"));
    hlo_status_free(st);
  }
  /* the heuristic failing: an error; declining (NOT_SUPPORTED): our paths */
  strcpy(fail, "algorithm_v7");
  backend_conv c2 = k.c;
  c2.padding_low[0] = c2.padding_high[0] = 0, finish_desc(&c2);
  bool takes = true;
  size_t bytes = 1;
  st = cuda_cudnn_plan(&c2, &takes, &bytes);
  CHECK(st != NULL && !takes && bytes == 0);
  if (st) {
    CHECK(strstr(hlo_status_message(st), "cudnnFindConvolutionForwardAlgorithm") != NULL);
    CHECK_EQ_INT(hlo_status_code_of(st), HLO_INTERNAL);
    hlo_status_free(st);
  }
  *fail_status = 3000;
  c2.padding_low[1] = c2.padding_high[1] = 0, finish_desc(&c2);
  st = cuda_cudnn_plan(&c2, &takes, &bytes);
  CHECK(!st && !takes);
  hlo_status_free(st);
  st = cuda_cudnn_conv(&c2, k.in[0]->data, k.in[1]->data, out, scratch, NULL);
  CHECK(st && hlo_status_code_of(st) == HLO_UNIMPLEMENTED);
  hlo_status_free(st);
  fail[0] = 0, *fail_status = 5000;
  free_case(&k);
}

/* One compile in a child (cache_child) with the environment `env` ("NAME=VALUE" pairs, NULL
 * ended) added; its output (stdout and stderr) into out[0..cap). The child's exit status, or
 * 100 + the signal. */
static int cache_run(const char *drv, const char *dnn, const char *root, const char *const *env,
                     char *out, size_t cap) {
  char log[4200];
  snprintf(log, sizeof log, "%s/child.log", root);
  fflush(stdout);
  fflush(stderr);
  pid_t pid = fork();
  if (pid == 0) {
    if (!freopen(log, "w", stdout)) _exit(98);
    dup2(fileno(stdout), 2);
    setenv("HLO_CUDNN_TEST_CHILD", "cache", 1);
    setenv("HLO_CUDA_LIB", drv, 1);
    setenv("HLO_CUDNN_LIB", dnn, 1);
    setenv("HLO_CUDNN_TEST_CACHE", root, 1);
    setenv("HLO_CUDNN", "1", 1);
    unsetenv("HLO_CUDA_TF32");
    unsetenv("HLO_CUDNN_FIND");
    unsetenv("MOCK_CUDNN_VERSION");
    for (; env && *env; env++) {
      char name[64];
      const char *eq = strchr(*env, '=');
      snprintf(name, sizeof name, "%.*s", (int)(eq - *env), *env);
      setenv(name, eq + 1, 1);
    }
    char *argv[] = {(char *)"test_cuda_cudnn", NULL};
    execv("/proc/self/exe", argv);
    _exit(99);
  }
  int ws = 0;
  int code = pid > 0 && waitpid(pid, &ws, 0) == pid
                 ? (WIFEXITED(ws) ? WEXITSTATUS(ws) : 100 + (WIFSIGNALED(ws) ? WTERMSIG(ws) : 0))
                 : 97;
  FILE *f = fopen(log, "r");
  size_t n = f ? fread(out, 1, cap - 1, f) : 0;
  out[n] = 0;
  if (f) fclose(f);
  return code;
}

/* The number after "finds=" in a child's output (-1: none). */
static int finds_of(const char *out) {
  const char *p = strstr(out, "finds=");
  return p ? atoi(p + 6) : -1;
}

/* The entry's "conv_tuning" section rewritten by `how` (0: cut to 20 bytes, 1: a record's algorithm
 * 1000, 2: the section removed), the rest as it was (a valid entry, checksum and all). True
 * when there was one entry with such a section. */
static bool tamper(const char *root, int how) {
  cache_listing l;
  hlo_status st = compile_cache_list(root, false, &l);
  if (st) {
    hlo_status_free(st);
    return false;
  }
  bool ok = false;
  if (l.n == 1) {
    cache_entry *e = NULL;
    if (compile_cache_load(root, l.entries[0].key, &e, NULL) == CACHE_HIT) {
      uint32_t ns = cache_entry_num_sections(e), n = 0;
      cache_section secs[64];
      unsigned char *copy = NULL;
      for (uint32_t i = 0; i < ns && n < 64; i++) {
        cache_section s = cache_entry_section_at(e, i);
        if (strcmp(s.name, "conv_tuning")) {
          secs[n++] = s;
          continue;
        }
        ok = true;
        if (how == 2) continue;
        copy = malloc(s.len);
        if (!copy) continue;
        memcpy(copy, s.data, s.len);
        if (how == 0 && s.len > 20) s.len = 20;
        if (how == 1 && s.len >= 4) { /* the last record's algorithm: at the end minus 24 bytes */
          uint32_t bad = 1000;
          memcpy(copy + s.len - 24, &bad, 4);
        }
        s.data = copy;
        secs[n++] = s;
      }
      st = ok ? compile_cache_store(root, l.entries[0].key, secs, n, 0) : NULL;
      if (st) hlo_status_print(st, stderr), hlo_status_free(st), ok = false;
      free(copy);
      cache_entry_free(e);
    }
  }
  cache_listing_free(&l);
  return ok;
}

/* The compilation cache keeps cuDNN's choices (cuda_cudnn_export / _import through
 * executable_cache.c), each compile a new process on the mock driver and cuDNN: a cold
 * compile times the conv (cudnnFind once), a warm one (a hit) times nothing, makes no cuDNN
 * handle (the first run does) and runs the kept algorithm; another TF32 setting or cuDNN version times it again (and the entry keeps the
 * new choice: the next hit times nothing); a truncated or malformed section rejects the
 * entry with the reason ("removed, recompiling"), never a crash; an entry without the
 * section (an older one) is tuned once and gets it. */
TEST(cache_keeps_choices) {
  char drv[4096], dnn[4096];
  bool have = cuda_mock_path("cache", drv, sizeof drv) && beside("libcudnn_mock.so", dnn, sizeof dnn);
  CHECK(have);
  if (!have) return;
  char root[] = "/tmp/hlo-cudnn-cache-XXXXXX";
  CHECK(mkdtemp(root) != NULL);
  static char out[65536];
  static const char *const tf32_off[] = {"HLO_CUDA_TF32=0", NULL};
  static const char *const v92[] = {"MOCK_CUDNN_VERSION=90200", NULL};
  static const char *const nofind[] = {"HLO_CUDNN_FIND=0", NULL};
  struct step {
    const char *what;
    const char *const *env;
    int tamper;        /* -1 none, else tamper()'s `how` first */
    const char *log;   /* in the child's output */
    int finds;         /* cudnnFind calls in the child */
  } steps[] = {
      {"cold", NULL, -1, ": miss ", 1},
      {"warm", NULL, -1, ": hit ", 0},
      {"TF32 off", tf32_off, -1, "were tuned for cuDNN 90100, TF32 on", 1},
      {"TF32 off, again", tf32_off, -1, ": hit ", 0},
      {"TF32 on", NULL, -1, "TF32 off, cuda sm_", 1},
      {"cuDNN 9.2", v92, -1, "this is cuDNN 90200", 1},
      {"cuDNN 9.1, after 9.2", NULL, -1, "were tuned for cuDNN 90200", 1},
      {"heuristic only", nofind, -1, ": hit ", 0},
      {"truncated", NULL, 0, "its cuDNN algorithms are corrupt (truncated); removed, recompiling", 1},
      {"after the truncated one", NULL, -1, ": hit ", 0},
      {"a bad record", NULL, 1, "its cuDNN algorithms are corrupt (a bad record); removed", 1},
      {"no section", NULL, 2, ": hit ", 1},
      {"no section, again", NULL, -1, ": hit ", 0},
  };
  char summary[512] = "";
  for (size_t i = 0; i < sizeof steps / sizeof *steps; i++) {
    const struct step *t = &steps[i];
    if (t->tamper >= 0) CHECK(tamper(root, t->tamper));
    int code = cache_run(drv, dnn, root, t->env, out, sizeof out);
    if (code == 3) {
      printf("cache: skipped (%s)\n", out);
      break;
    }
    int finds = finds_of(out);
    bool miss = i == 0 || t->tamper == 0 || t->tamper == 1; /* else a hit */
    /* cudnnCreate: at the compile when it tunes, else at the first run */
    const char *creates = t->finds ? "creates=1,1" : "creates=0,1";
    bool ok = code == 0 && finds == t->finds && strstr(out, t->log) &&
              strstr(out, "algo=0 runs=1") && strstr(out, creates) && !strstr(out, "AddressSanitizer") &&
              (strstr(out, ": miss ") != NULL) == miss && (strstr(out, ": hit ") != NULL) == !miss;
    if (!ok)
      fprintf(stderr, "cache, %s: exit %d, %d finds (want %d), want \"%s\" in:\n%s\n", t->what,
              code, finds, t->finds, t->log, out);
    CHECK(ok);
    size_t sl = strlen(summary);
    snprintf(summary + sl, sizeof summary - sl, "%s%s %s %d", i ? ", " : "", t->what,
             strstr(out, ": hit ") ? "hit" : "miss", finds);
    if (i == 5) { /* the line that says why (cuDNN 9.2) */
      const char *l = strstr(out, "hlo: cache entry ");
      const char *e = l ? strchr(l, '\n') : NULL;
      if (l) printf("cache: %.*s\n", (int)(e ? e - l : (long)strlen(l)), l);
    }
  }
  printf("cache: compiles (hit or miss, cudnnFind calls): %s\n", summary);
  char cmd[4200];
  snprintf(cmd, sizeof cmd, "rm -rf '%s'", root);
  CHECK(system(cmd) == 0);
}

TEST_MAIN()
