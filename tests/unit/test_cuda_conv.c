/* test_cuda_conv.c — the CUDA backend's convolution (backend/cuda/cuda_conv.c)
 * against the reference interpreter's convolution kernel.
 *
 * Cases (63): random descriptions of every form conv_describe holds (every
 * operand's dims in a random order, 0 to 5 spatial dims, strides, negative
 * padding, lhs and rhs dilation, window reversal, feature and batch groups,
 * empty windows; and 16 more with 1 to 64 channels), the usual layouts
 * (NHWC / HWIO, NCHW / OIHW, a kernel whose output feature dim is in the
 * middle, JAX's backward-filter shape), a depthwise one, two large enough
 * for cuda_conv to pick im2col, the five convolutions of
 * cnn_sgd_step_64x28x28 (batch cut where the host would be slow) and JAX
 * weight gradients of strided, padded and dilated forward convolutions
 * (big windows, long sums into small outputs); types f32, f64, bf16, f16
 * in turn. Each is printed as a one-op module and run by the interpreter
 * (interp_run_op) on random inputs.
 *
 * Everywhere (no GPU needed):
 *   1. the kernels' unit compiles with NVRTC for sm_90 (skipped, saying
 *      why, when NVRTC does not load);
 *   2. the same kernels' body, after a host prelude standing in for CUDA
 *      (blockIdx & co. as globals, CV_KERNEL exporting a wrapper, software
 *      bf16 / f16 conversions checked against support/float.h, fma from
 *      libm), is compiled by the host C compiler ($HLO_CC, else cc; with
 *      ASan when this test has it, so the kernels' memory accesses are
 *      checked too) into a shared object, and cuda_conv_run drives it over
 *      an emulated grid (every block, every thread, one after another) with
 *      a reference GEMM (backend_gemm's contract, summed in f64) that also
 *      checks the GEMM sizes and strides: the direct path must give the
 *      interpreter's bits; the im2col path (default chunks, and chunks of a
 *      few rows), cuda_conv's choice, and the tiled path (its rule's shape,
 *      and on the smaller cases 7 fixed shapes: partial tiles, splits over
 *      the window, the features, both, and past 64 lanes for two cv_ksum
 *      passes) must be within a relative norm of 1e-4 (f32), 1e-10 (f64),
 *      2e-2 (bf16), 5e-3 (f16) of it; output guards and scratch are
 *      poisoned; a GEMM the library declines makes cuda_conv fall back to
 *      the direct path; the rule's paths and shapes for the five cnn
 *      convolutions at full size (printed, with the cost model's estimate);
 * With a device (backend_cuda succeeds), else "skipped: no GPU (REASON)":
 *   3. cuda_conv (its choice), and each path alone, on device buffers, the
 *      same checks. */
#include <dlfcn.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "backend/backend.h"
#include "backend/conv_describe.h"
#include "backend/cuda/cuda_api.h"
#include "backend/cuda/cuda_conv.h"
#include "backend/cuda/nvrtc.h"
#include "interp/interp.h"
#include "ir/element.h"
#include "support/float.h"
#include "support/strbuf.h"
#include "test.h"
#include "testlib.h"

/* the slots' signatures are the backend table's */
static const backend slots_check = {
    .conv = cuda_conv, .conv_takes = cuda_conv_takes, .conv_scratch_bytes = cuda_conv_scratch_bytes};

static uint64_t rng = 0x2545f4914f6cdd1dULL;
static uint64_t next_u64(void) { return tl_xorshift64(&rng); }
static int64_t rand_in(int64_t lo, int64_t hi) { return tl_rand_in(&rng, lo, hi); }
static double rand_unit(void) { return (double)(next_u64() >> 11) / 9007199254740992.0 * 2 - 1; }

/* ------------------------------------------------- descriptions as text */

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

static void shuffle(uint32_t *v, uint32_t n) {
  for (uint32_t i = 0; i < n; i++) v[i] = i;
  for (uint32_t i = n; i > 1; i--) {
    uint32_t j = (uint32_t)(next_u64() % i), t = v[i - 1];
    v[i - 1] = v[j];
    v[j] = t;
  }
}

/* A random convolution with S spatial dims (every operand's dims in a
 * random order, any window attributes, feature or batch groups); spatial
 * sizes up to lmax (input) and kmax (kernel), sometimes 0 when `empty`;
 * input features per group up to cimax, output features per group up to
 * comax. */
static void random_desc_c(backend_conv *c, uint32_t S, int64_t lmax, int64_t kmax, bool empty,
                          int64_t cimax, int64_t comax) {
  memset(c, 0, sizeof *c);
  uint32_t R = S + 2, pi[BACKEND_CONV_MAX_RANK], pk[BACKEND_CONV_MAX_RANK],
           po[BACKEND_CONV_MAX_RANK];
  c->rank = R;
  c->num_spatial = S;
  shuffle(pi, R);
  shuffle(pk, R);
  shuffle(po, R);
  c->input_batch_dimension = pi[0], c->input_feature_dimension = pi[1];
  c->kernel_input_feature_dimension = pk[0], c->kernel_output_feature_dimension = pk[1];
  c->output_batch_dimension = po[0], c->output_feature_dimension = po[1];
  int mode = (int)rand_in(0, 3); /* 0, 1: no groups; 2: feature; 3: batch */
  int64_t G = mode >= 2 ? rand_in(2, 3) : 1;
  c->feature_group_count = mode == 2 ? G : 1;
  c->batch_group_count = mode == 3 ? G : 1;
  int64_t cin_g = rand_in(1, cimax), cout = G * rand_in(1, comax);
  c->lhs_dims[pi[0]] = (mode == 3 ? G : 1) * rand_in(1, 3);
  c->lhs_dims[pi[1]] = cin_g * c->feature_group_count;
  c->rhs_dims[pk[0]] = cin_g;
  c->rhs_dims[pk[1]] = cout;
  for (uint32_t s = 0; s < S; s++) {
    c->input_spatial_dimensions[s] = pi[2 + s];
    c->kernel_spatial_dimensions[s] = pk[2 + s];
    c->output_spatial_dimensions[s] = po[2 + s];
    c->lhs_dims[pi[2 + s]] = empty && !rand_in(0, 9) ? 0 : rand_in(1, lmax);
    c->rhs_dims[pk[2 + s]] = empty && !rand_in(0, 9) ? 0 : rand_in(1, kmax);
    c->window_strides[s] = rand_in(1, 3);
    c->padding_low[s] = rand_in(-2, 3);
    c->padding_high[s] = rand_in(-2, 3);
    c->lhs_dilation[s] = rand_in(0, 2) ? 1 : rand_in(2, 3);
    c->rhs_dilation[s] = rand_in(0, 2) ? 1 : rand_in(2, 3);
    c->window_reversal[s] = rand_in(0, 1);
  }
  finish_desc(c);
}

static void random_desc(backend_conv *c, uint32_t S, int64_t lmax, int64_t kmax, bool empty) {
  random_desc_c(c, S, lmax, kmax, empty, 4, 5);
}

/* A weight gradient as JAX writes it (lhs [f,0,1,b], rhs [i,0,1,o], result
 * [0,1,b,f]: the forward batch N summed with the window, the forward
 * input's C as the batch, its output's O as the features): a forward
 * convolution of an N x H x W x C input with stride `st`, padding `pad`
 * and dilation `dil` into a KH x KW x C x O kernel, differentiated. */
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

/* A 2-D convolution with the given layouts (dim_numbers letters, "b01f"),
 * sizes by role, stride 1 and `pad` on every side. */
static void layout_desc(backend_conv *c, const char *in, const char *ker, const char *out,
                        int64_t B, int64_t C, int64_t H, int64_t W, int64_t O, int64_t KH,
                        int64_t KW, int64_t pad) {
  memset(c, 0, sizeof *c);
  c->rank = 4;
  c->num_spatial = 2;
  for (uint32_t d = 0; d < 4; d++) {
    switch (in[d]) {
    case 'b': c->input_batch_dimension = d; c->lhs_dims[d] = B; break;
    case 'f': c->input_feature_dimension = d; c->lhs_dims[d] = C; break;
    default: c->input_spatial_dimensions[in[d] - '0'] = d; c->lhs_dims[d] = in[d] == '0' ? H : W;
    }
    switch (ker[d]) {
    case 'i': c->kernel_input_feature_dimension = d; c->rhs_dims[d] = C; break;
    case 'o': c->kernel_output_feature_dimension = d; c->rhs_dims[d] = O; break;
    default: c->kernel_spatial_dimensions[ker[d] - '0'] = d; c->rhs_dims[d] = ker[d] == '0' ? KH : KW;
    }
    switch (out[d]) {
    case 'b': c->output_batch_dimension = d; break;
    case 'f': c->output_feature_dimension = d; break;
    default: c->output_spatial_dimensions[out[d] - '0'] = d;
    }
  }
  for (uint32_t s = 0; s < 2; s++) {
    c->window_strides[s] = c->lhs_dilation[s] = c->rhs_dilation[s] = 1;
    c->padding_low[s] = c->padding_high[s] = pad;
  }
  c->feature_group_count = c->batch_group_count = 1;
  finish_desc(c);
}

/* ------------------------------------------------------------ the cases */

enum { MAX_CASES = 96 };
typedef struct conv_case {
  char what[80];
  backend_conv c;
  hlo_dtype dt;
  char *text;
  tl_run r;
  const hlo_op *op;
  tensor *in[2], *ref;
} conv_case;

static conv_case cases[MAX_CASES];
static int num_cases;
static bool cases_ready;

static const hlo_dtype type_cycle[4] = {HLO_F32, HLO_BF16, HLO_F64, HLO_F16};

static void add_case(const char *what, const backend_conv *c, hlo_dtype dt) {
  if (num_cases >= MAX_CASES) return;
  conv_case *k = &cases[num_cases];
  memset(k, 0, sizeof *k);
  snprintf(k->what, sizeof k->what, "%s (%s)", what, hlo_dtype_name(dt));
  k->c = *c;
  k->c.lhs_dtype = k->c.rhs_dtype = k->c.result_dtype = dt;
  k->dt = dt;
  k->text = conv_module(c, dt);
  hlo_source src = tl_source(k->what, k->text);
  hlo_status st = tl_prepare(&src, 0, strlen(k->text), 0, NULL, &k->r);
  if (st) {
    fprintf(stderr, "%s: module does not parse:\n%s", k->what, k->text);
    hlo_status_print(st, stderr);
    hlo_status_free(st);
    CHECK(false);
    return;
  }
  k->op = k->r.f->body.block.first;
  backend_conv d;
  bool ok = conv_describe(k->op, &d);
  CHECK(ok);
  if (!ok) {
    fprintf(stderr, "%s: conv_describe refused:\n%s", k->what, k->text);
    return;
  }
  memset(&d.loc, 0, sizeof d.loc);
  if (memcmp(&d, &k->c, sizeof d)) {
    fprintf(stderr, "%s: the description changed through the text:\n%s", k->what, k->text);
    CHECK(false);
    return;
  }
  func_number_values(k->r.f);
  for (int i = 0; i < 2; i++) {
    k->in[i] = tensor_new(k->op->operands[i]->type);
    CHECK(k->in[i] != NULL);
    if (!k->in[i]) return;
    for (int64_t e = 0; e < k->in[i]->num_elems; e++)
      elem_set_f64(dt, k->in[i]->data, e, rand_unit());
  }
  const hlo_value *vals[2] = {k->op->operands[0], k->op->operands[1]};
  st = interp_run_op(k->r.it, k->op, vals, k->in, 2, &k->ref);
  if (st) {
    hlo_status_print(st, stderr);
    hlo_status_free(st);
    CHECK(false);
    return;
  }
  num_cases++;
}

static void make_cases(void) {
  if (cases_ready) return;
  cases_ready = true;
  backend_conv c;
  int t = 0;
  for (int i = 0; i < 24; i++) { /* every form, 0 to 3 spatial dims */
    uint32_t S = (uint32_t)(i % 4);
    random_desc(&c, S, 7, 4, true);
    char what[64];
    snprintf(what, sizeof what, "random %d (%u spatial)", i, S);
    add_case(what, &c, type_cycle[t++ % 4]);
  }
  for (uint32_t S = 4; S <= 5; S++) { /* many spatial dims, small */
    random_desc(&c, S, 3, 2, false);
    add_case(S == 4 ? "random, 4 spatial" : "random, 5 spatial", &c, type_cycle[t++ % 4]);
  }
  layout_desc(&c, "b01f", "01io", "b01f", 2, 5, 9, 8, 6, 3, 3, 1);
  add_case("NHWC / HWIO", &c, HLO_F32);
  add_case("NHWC / HWIO", &c, HLO_BF16);
  layout_desc(&c, "bf01", "oi01", "bf01", 3, 4, 7, 9, 5, 3, 2, 1);
  add_case("NCHW / OIHW", &c, HLO_F32);
  add_case("NCHW / OIHW", &c, HLO_F16);
  layout_desc(&c, "b01f", "0o1i", "b0f1", 2, 5, 9, 7, 3, 3, 2, 1);
  add_case("kernel output feature in the middle", &c, HLO_F64);
  add_case("kernel output feature in the middle", &c, HLO_BF16);
  layout_desc(&c, "f01b", "i01o", "01bf", 3, 4, 6, 6, 2, 5, 5, 1);
  add_case("backward filter", &c, HLO_F32);
  layout_desc(&c, "b01f", "01io", "b01f", 2, 6, 7, 7, 6, 3, 3, 1); /* depthwise */
  c.feature_group_count = 6;
  c.rhs_dims[2] = 1;
  finish_desc(&c);
  add_case("depthwise", &c, HLO_F32);
  layout_desc(&c, "b01f", "01io", "b01f", 2, 8, 32, 32, 64, 3, 3, 1); /* 9.4M MACs */
  add_case("large NHWC (im2col)", &c, HLO_F32);
  layout_desc(&c, "bf01", "oi01", "bf01", 2, 16, 32, 32, 128, 3, 3, 1); /* 9.4M MACs */
  c.feature_group_count = 2;
  c.rhs_dims[1] = 8;
  finish_desc(&c);
  add_case("large NCHW, 2 groups (im2col)", &c, HLO_BF16);
  /* the five of cnn_sgd_step_64x28x28 (batch cut where the host would be
   * slow), which the tiled kernel takes */
  layout_desc(&c, "b01f", "01io", "b01f", 8, 1, 28, 28, 16, 3, 3, 1);
  add_case("cnn conv 0: forward, C_in 1", &c, HLO_F32);
  layout_desc(&c, "b01f", "01io", "b01f", 4, 16, 14, 14, 32, 3, 3, 1);
  add_case("cnn conv 1: forward", &c, HLO_F32);
  layout_desc(&c, "f01b", "i01o", "01bf", 16, 16, 14, 14, 32, 14, 14, 1);
  add_case("cnn conv 2: weight gradient", &c, HLO_F32);
  layout_desc(&c, "b01f", "01oi", "b01f", 4, 32, 14, 14, 16, 3, 3, 1);
  add_case("cnn conv 3: data gradient", &c, HLO_F32);
  layout_desc(&c, "f01b", "i01o", "01bf", 1, 64, 28, 28, 16, 28, 28, 1);
  add_case("cnn conv 4: weight gradient, C 1, K 50176", &c, HLO_F32);
  add_case("cnn conv 4: weight gradient, C 1, K 50176", &c, HLO_BF16);
  /* weight gradients of strided, padded, dilated forward convolutions */
  wgrad_desc(&c, 16, 20, 20, 3, 8, 3, 3, 2, 1, 1);
  add_case("weight gradient, stride 2", &c, HLO_F32);
  wgrad_desc(&c, 8, 17, 19, 5, 12, 3, 2, 1, 2, 2);
  add_case("weight gradient, dilation 2, pad 2", &c, HLO_F16);
  wgrad_desc(&c, 32, 9, 9, 2, 64, 5, 5, 1, 2, 1);
  add_case("weight gradient, 64 features", &c, HLO_F64);
  wgrad_desc(&c, 64, 12, 12, 1, 1, 3, 3, 3, 0, 1);
  add_case("weight gradient, C 1, O 1, stride 3", &c, HLO_BF16);
  wgrad_desc(&c, 8, 28, 28, 1, 1, 3, 3, 1, 1, 1); /* 56K MACs, sums of 6272 */
  add_case("weight gradient, 9 outputs, sums of 6272 (tiled)", &c, HLO_F32);
  /* 1 .. 64 channels, every form: random attributes */
  for (int i = 0; i < 16; i++) {
    uint32_t S = (uint32_t)(1 + i % 3);
    random_desc_c(&c, S, S == 3 ? 6 : 11, S == 3 ? 3 : 5, false, i % 2 ? 64 : 8,
                  i % 2 ? 6 : 40);
    char what[64];
    snprintf(what, sizeof what, "random wide %d (%u spatial)", i, S);
    add_case(what, &c, type_cycle[t++ % 4]);
  }
}

/* ------------------------------------------------------------ comparing */

/* got (dt elements) against the case's reference: bit for bit (`exact`)
 * or within the type's relative norm. */
static bool compare(const conv_case *k, const void *got, bool exact, const char *how) {
  int64_t n = k->ref->num_elems;
  double num = 0, den = 0;
  for (int64_t e = 0; e < n; e++) {
    double a = elem_get_f64(k->dt, got, e), w = elem_get_f64(k->dt, k->ref->data, e);
    if (exact && elem_get_bits(k->dt, got, e) != elem_get_bits(k->dt, k->ref->data, e)) {
      fprintf(stderr, "%s, %s: element %lld: %.17g, interpreter %.17g: bits differ\n%s", k->what,
              how, (long long)e, a, w, k->text);
      return false;
    }
    num += (a - w) * (a - w);
    den += w * w;
  }
  double tol = k->dt == HLO_F64 ? 1e-10 : k->dt == HLO_F32 ? 1e-4 : k->dt == HLO_BF16 ? 2e-2 : 5e-3;
  bool ok = den == 0 ? num == 0 : sqrt(num / den) <= tol;
  if (!ok)
    fprintf(stderr, "%s, %s: relative norm %.3g (tolerance %.3g)\n%s", k->what, how,
            den == 0 ? num : sqrt(num / den), tol, k->text);
  return ok;
}

/* ------------------------------------------------------------ 1. NVRTC */

TEST(kernels_compile_with_nvrtc) {
  (void)slots_check;
  const char *src = cuda_conv_kernel_source();
  /* the device prelude, then the body the host test runs too */
  CHECK(src && strstr(src, "extern \"C\" __global__") &&
        strstr(src, cuda_conv_kernel_body()) != NULL);
  hlo_status st = nvrtc_load();
  if (st) {
    printf("kernels_compile_with_nvrtc: skipped (%s)\n", hlo_status_message(st));
    hlo_status_free(st);
    return;
  }
  void *cubin = NULL;
  size_t len = 0;
  st = nvrtc_compile(src, "hlo_conv.cu", 90, &cubin, &len);
  if (st) {
    hlo_status_print(st, stderr);
    hlo_status_free(st);
  }
  CHECK(!st && cubin && len > 0);
  /* every kernel is in the cubin under its name (extern "C") */
  for (int k = 0; cubin && k < CUDA_CONV_NUM_KERNELS; k++) {
    const char *name = cuda_conv_kernel_name((cuda_conv_kernel)k);
    bool found = false;
    for (size_t i = 0; !found && i + strlen(name) <= len; i++)
      found = !memcmp((char *)cubin + i, name, strlen(name) + 1);
    if (!found) fprintf(stderr, "kernel %s is not in the cubin\n", name);
    CHECK(found);
  }
  printf("nvrtc: the convolution kernels compile for sm_90 (%zu bytes of cubin)\n", len);
  free(cubin);
}

/* ------------------------------------------------------------ 2. on the host */

static const char host_prelude[] =
    "/* the host's stand-ins for CUDA (tests/unit/test_cuda_conv.c) */\n"
    "typedef struct { unsigned int x, y, z; } cv_dim3;\n"
    "cv_dim3 blockIdx, threadIdx, blockDim, gridDim;\n"
    "#define CV_KERNEL(name, T) CV_KERNEL2(name, T)\n"
    "#define CV_KERNEL2(name, T) void name(const T a); \\\n"
    "  void name##_host(const void *p) { name(*(const T *)p); } void name(const T a)\n"
    "#define CV_D static inline\n"
    "#define CV_UNROLL\n"
    "CV_D unsigned int cv_f2u(float f) { union { float f; unsigned int u; } x; x.f = f; return x.u; }\n"
    "CV_D float cv_u2f(unsigned int u) { union { float f; unsigned int u; } x; x.u = u; return x.f; }\n"
    "CV_D float cv_bf16_to_f32(unsigned short h) { return cv_u2f((unsigned int)h << 16); }\n"
    "CV_D unsigned short cv_f32_to_bf16(float f) {\n"
    "  unsigned int u = cv_f2u(f);\n"
    "  if ((u & 0x7fffffffu) > 0x7f800000u) return (unsigned short)((u >> 16) | 0x40u);\n"
    "  u += 0x7fffu + ((u >> 16) & 1u);\n"
    "  return (unsigned short)(u >> 16);\n"
    "}\n"
    "CV_D float cv_f16_to_f32(unsigned short h) {\n"
    "  unsigned int s = (unsigned int)(h & 0x8000u) << 16, e = (h >> 10) & 0x1fu, m = h & 0x3ffu;\n"
    "  if (e == 0) { float v = (float)m * 5.9604644775390625e-8f; return s ? -v : v; }\n"
    "  if (e == 31) return cv_u2f(s | 0x7f800000u | (m << 13));\n"
    "  return cv_u2f(s | ((e + 112u) << 23) | (m << 13));\n"
    "}\n"
    "CV_D unsigned short cv_f32_to_f16(float f) {\n"
    "  unsigned int x = cv_f2u(f), sign = (x >> 16) & 0x8000u, ax = x & 0x7fffffffu;\n"
    "  if (ax > 0x7f800000u) return (unsigned short)(sign | 0x7e00u | ((ax >> 13) & 0x3ffu));\n"
    "  if (ax >= 0x477ff000u) return (unsigned short)(sign | 0x7c00u);\n"
    "  if (ax < 0x38800000u) {\n"
    "    float v = cv_u2f(ax) * 16777216.0f;\n"
    "    v = (v + 8388608.0f) - 8388608.0f;\n"
    "    return (unsigned short)(sign | (unsigned int)v);\n"
    "  }\n"
    "  unsigned int h = ((((ax >> 23) - 112u) << 10) | ((ax >> 13) & 0x3ffu)), rem = ax & 0x1fffu;\n"
    "  if (rem > 0x1000u || (rem == 0x1000u && (h & 1u))) h++;\n"
    "  return (unsigned short)(sign | h);\n"
    "}\n"
    "CV_D float cv_fmaf(float x, float y, float z) { return __builtin_fmaf(x, y, z); }\n"
    "CV_D double cv_fma(double x, double y, double z) { return __builtin_fma(x, y, z); }\n"
    "float cv_test_f16_to_f32(unsigned short h) { return cv_f16_to_f32(h); }\n"
    "unsigned short cv_test_f32_to_f16(float f) { return cv_f32_to_f16(f); }\n"
    "float cv_test_bf16_to_f32(unsigned short h) { return cv_bf16_to_f32(h); }\n"
    "unsigned short cv_test_f32_to_bf16(float f) { return cv_f32_to_bf16(f); }\n";

typedef struct cv_dim3 {
  unsigned int x, y, z;
} cv_dim3;

typedef struct host_kernels {
  void *so;
  void (*fn[CUDA_CONV_NUM_KERNELS])(const void *);
  cv_dim3 *bidx, *tidx, *bdim, *gdim;
  int launches, gemms, zeros;
  bool gemm_declines; /* host_gemm answers HLO_UNIMPLEMENTED, as cuBLASLt may */
} host_kernels;

static host_kernels hk;
static char hk_error[2048];

/* Writes prelude + body to a temporary folder, compiles it into a shared
 * object and loads it; false (hk_error says why) on failure. */
static bool host_kernels_load(void) {
  char dir[] = "/tmp/hlo_cuda_conv_XXXXXX";
  if (!mkdtemp(dir)) {
    snprintf(hk_error, sizeof hk_error, "mkdtemp failed");
    return false;
  }
  char src[128], so[128], cmd[1024];
  snprintf(src, sizeof src, "%s/conv_host.c", dir);
  snprintf(so, sizeof so, "%s/conv_host.so", dir);
  FILE *f = fopen(src, "w");
  bool ok = f && fputs(host_prelude, f) >= 0 && fputs(cuda_conv_kernel_body(), f) >= 0;
  if (f) ok = fclose(f) == 0 && ok;
  const char *cc = getenv("HLO_CC");
  if (!cc || !*cc) cc = "cc";
#if defined(__SANITIZE_ADDRESS__)
  const char *san = "-fsanitize=address -fno-omit-frame-pointer";
#else
  const char *san = "";
#endif
  snprintf(cmd, sizeof cmd,
           "%s -std=gnu11 -O1 -shared -fPIC -ffp-contract=off %s %s -o %s -lm 2>&1", cc, san, src,
           so);
  FILE *p = ok ? popen(cmd, "r") : NULL;
  size_t used = 0;
  if (p) {
    size_t n;
    while ((n = fread(hk_error + used, 1, sizeof hk_error - 1 - used, p)) > 0) used += n;
    hk_error[used] = 0;
    ok = pclose(p) == 0;
  } else {
    ok = false;
  }
  if (ok) {
    hk.so = dlopen(so, RTLD_NOW | RTLD_LOCAL);
    if (!hk.so) snprintf(hk_error, sizeof hk_error, "dlopen: %s", dlerror());
    ok = hk.so != NULL;
  } else if (!used) {
    snprintf(hk_error, sizeof hk_error, "cannot run %s", cmd);
  }
  unlink(src);
  unlink(so);
  rmdir(dir);
  for (int k = 0; ok && k < CUDA_CONV_NUM_KERNELS; k++) {
    char name[64];
    snprintf(name, sizeof name, "%s_host", cuda_conv_kernel_name((cuda_conv_kernel)k));
    *(void **)&hk.fn[k] = dlsym(hk.so, name);
    if (!hk.fn[k]) snprintf(hk_error, sizeof hk_error, "no %s in the shared object", name);
    ok = hk.fn[k] != NULL;
  }
  if (ok) {
    hk.bidx = dlsym(hk.so, "blockIdx"), hk.tidx = dlsym(hk.so, "threadIdx");
    hk.bdim = dlsym(hk.so, "blockDim"), hk.gdim = dlsym(hk.so, "gridDim");
    ok = hk.bidx && hk.tidx && hk.bdim && hk.gdim;
  }
  return ok;
}

static hlo_status host_launch(void *ctx, cuda_conv_kernel k, uint32_t grid, uint32_t block,
                              const void *args, size_t args_bytes) {
  (void)ctx;
  (void)args_bytes;
  CHECK(grid >= 1 && block >= 1 && block <= 256);
  hk.launches++;
  *hk.gdim = (cv_dim3){grid, 1, 1};
  *hk.bdim = (cv_dim3){block, 1, 1};
  for (uint32_t b = 0; b < grid; b++)
    for (uint32_t t = 0; t < block; t++) {
      *hk.bidx = (cv_dim3){b, 0, 0};
      *hk.tidx = (cv_dim3){t, 0, 0};
      hk.fn[k](args);
    }
  return NULL;
}

/* backend_gemm's contract on the host, summed in f64 and rounded once; the
 * sizes and strides checked against the contract and cuBLASLt's int. */
static hlo_status host_gemm(void *ctx, const backend_gemm *g, const void *a, const void *b,
                            void *c) {
  (void)ctx;
  hk.gemms++;
  if (hk.gemm_declines) return status_new(HLO_UNIMPLEMENTED, "host gemm: declined");
  int64_t lda = g->lda ? g->lda : (g->trans_a ? g->m : g->k);
  int64_t ldb = g->ldb ? g->ldb : (g->trans_b ? g->k : g->n);
  int64_t ldc = g->ldc ? g->ldc : g->n;
  int64_t sa = g->batch_stride_a ? g->batch_stride_a : g->m * g->k;
  int64_t sb = g->batch_stride_b ? g->batch_stride_b : g->k * g->n;
  int64_t sc = g->batch_stride_c ? g->batch_stride_c : g->m * g->n;
  bool ok = g->batch >= 1 && g->m >= 1 && g->n >= 1 && g->k >= 1 && g->m <= INT32_MAX &&
            g->n <= INT32_MAX && g->k <= INT32_MAX && lda >= (g->trans_a ? g->m : g->k) &&
            ldb >= (g->trans_b ? g->k : g->n) && ldc >= g->n && g->c_dtype == g->dtype;
  CHECK(ok);
  if (!ok) return status_new(HLO_INVALID_ARGUMENT, "host gemm: bad sizes");
  for (int64_t bt = 0; bt < g->batch; bt++)
    for (int64_t i = 0; i < g->m; i++)
      for (int64_t j = 0; j < g->n; j++) {
        double acc = 0;
        for (int64_t q = 0; q < g->k; q++) {
          double x = elem_get_f64(g->dtype, a, bt * sa + (g->trans_a ? q * lda + i : i * lda + q));
          double y = elem_get_f64(g->dtype, b, bt * sb + (g->trans_b ? j * ldb + q : q * ldb + j));
          acc += x * y;
        }
        elem_set_f64(g->c_dtype, c, bt * sc + i * ldc + j, acc);
      }
  return NULL;
}

static hlo_status host_zero(void *ctx, void *dst, size_t bytes) {
  (void)ctx;
  hk.zeros++;
  memset(dst, 0, bytes);
  return NULL;
}

TEST(host_conversions_match_support_float) {
  if (!hk.so && !host_kernels_load()) {
    printf("host kernels: skipped (the host C compiler failed: %s)\n", hk_error);
    return;
  }
  float (*h2f)(unsigned short) = (float (*)(unsigned short))dlsym(hk.so, "cv_test_f16_to_f32");
  unsigned short (*f2h)(float) = (unsigned short (*)(float))dlsym(hk.so, "cv_test_f32_to_f16");
  float (*b2f)(unsigned short) = (float (*)(unsigned short))dlsym(hk.so, "cv_test_bf16_to_f32");
  unsigned short (*f2b)(float) = (unsigned short (*)(float))dlsym(hk.so, "cv_test_f32_to_bf16");
  CHECK(h2f && f2h && b2f && f2b);
  if (!h2f || !f2h || !b2f || !f2b) return;
  int bad = 0;
  for (uint32_t h = 0; h < 65536; h++) {
    float x = h2f((unsigned short)h), y = f16_to_f32((uint16_t)h);
    if (memcmp(&x, &y, 4) && !(isnan(x) && isnan(y))) bad++;
    x = b2f((unsigned short)h), y = bf16_to_f32((uint16_t)h);
    if (memcmp(&x, &y, 4) && !(isnan(x) && isnan(y))) bad++;
  }
  for (int i = 0; i < 200000; i++) { /* random bits, and values near f16's range */
    uint32_t u = (uint32_t)next_u64();
    if (i % 2) u = (u & 0x80000000u) | (0x33000000u + u % 0x14800000u);
    float f;
    memcpy(&f, &u, 4);
    if (isnan(f)) continue;
    if (f2h(f) != f32_to_f16(f)) bad++;
    if (f2b(f) != f32_to_bf16(f)) bad++;
  }
  if (bad) fprintf(stderr, "host prelude conversions: %d differ from support/float.h\n", bad);
  CHECK(bad == 0);
}

/* Runs case k by `path` (or, with `shape`, the tiled path in that shape)
 * on the emulated grid; chunks aimed at `target`. */
static bool host_run_any(const conv_case *k, cuda_conv_path path, size_t target,
                         const cuda_conv_tile_shape *shape, const char *how) {
  static const cuda_conv_ops ops = {host_launch, host_gemm, host_zero, NULL};
  size_t nb = k->ref->nbytes;
  size_t sbytes = shape ? cuda_conv_tile_scratch_bytes(&k->c, shape)
                        : cuda_conv_path_scratch_bytes(&k->c, path, target);
  unsigned char *out = malloc(nb + 64), *scratch = sbytes ? malloc(sbytes) : NULL;
  if (!out || (sbytes && !scratch)) {
    free(out);
    free(scratch);
    return false;
  }
  memset(out, 0x7f, nb + 64); /* garbage: every element must be written */
  if (scratch) memset(scratch, 0x7f, sbytes);
  hlo_status st = shape ? cuda_conv_run_tiled(&k->c, shape, k->in[0]->data, k->in[1]->data, out,
                                              scratch, &ops)
                        : cuda_conv_run(&k->c, path, target, k->in[0]->data, k->in[1]->data,
                                        out, scratch, &ops);
  bool ok = !st;
  if (st) {
    fprintf(stderr, "%s, %s: ", k->what, how);
    hlo_status_print(st, stderr);
    hlo_status_free(st);
  }
  for (size_t i = nb; ok && i < nb + 64; i++) ok = out[i] == 0x7f;
  if (!ok && !st) fprintf(stderr, "%s, %s: written past the output\n", k->what, how);
  if (ok) ok = compare(k, out, path == CUDA_CONV_DIRECT && !shape, how);
  free(out);
  free(scratch);
  return ok;
}

static bool host_run(const conv_case *k, cuda_conv_path path, size_t target, const char *how) {
  return host_run_any(k, path, target, NULL, how);
}

/* Tile shapes every case runs in on the host (the rule's own shape too):
 * one row and feature, partial tiles, splits over the window, over the
 * features and both, one past CUDA_CONV_KSUM_FAN lanes (two cv_ksum
 * passes). */
static const cuda_conv_tile_shape host_shapes[] = {
    {1, 1, 1, 1, 0, 0, 0}, {4, 8, 1, 1, 0, 0, 0}, {3, 5, 1, 1, 0, 0, 0},
    {2, 3, 4, 1, 0, 0, 0}, {4, 8, 1, 3, 0, 0, 0}, {1, 2, 5, 7, 0, 0, 0},
    {4, 1, 13, 5, 0, 0, 0}};

TEST(kernels_on_the_host) {
  if (!hk.so && !host_kernels_load()) {
    printf("host kernels: skipped (the host C compiler failed: %s)\n", hk_error);
    return;
  }
  make_cases();
  CHECK(num_cases >= 60);
  int failed = 0, im2col_chosen = 0, tiled_chosen = 0, split = 0, two_pass = 0, chunked = 0;
  int shaped = 0;
  for (int i = 0; i < num_cases; i++) {
    const conv_case *k = &cases[i];
    CHECK(cuda_conv_takes(&k->c));
    bool ok = host_run(k, CUDA_CONV_DIRECT, CUDA_CONV_SCRATCH_TARGET, "direct (host)");
    ok = host_run(k, CUDA_CONV_IM2COL, CUDA_CONV_SCRATCH_TARGET, "im2col (host)") && ok;
    int before = hk.gemms;
    ok = host_run(k, CUDA_CONV_IM2COL, 600, "im2col, small chunks (host)") && ok;
    if (hk.gemms - before > 1) chunked++;
    ok = host_run(k, CUDA_CONV_AUTO, CUDA_CONV_SCRATCH_TARGET, "cuda_conv's choice (host)") && ok;
    cuda_conv_path chosen = cuda_conv_choose(&k->c);
    if (chosen == CUDA_CONV_IM2COL) im2col_chosen++;
    if (chosen == CUDA_CONV_TILED) tiled_chosen++;
    cuda_conv_tile_shape sh;
    if (cuda_conv_tile_plan(&k->c, CUDA_CONV_SCRATCH_TARGET, &sh)) {
      CHECK(sh.tm >= 1 && sh.tm <= CUDA_CONV_TILE_M && sh.tn >= 1 && sh.tn <= CUDA_CONV_TILE_N &&
            sh.ks == sh.ksw * sh.ksc && sh.threads >= sh.ks);
      ok = host_run(k, CUDA_CONV_TILED, CUDA_CONV_SCRATCH_TARGET, "tiled (host)") && ok;
      if (sh.ks > 1) split++;
      if (sh.ks > CUDA_CONV_KSUM_FAN) two_pass++;
      /* small cases in every shape (the big ones: the emulated grid is slow) */
      for (size_t j = 0; conv_macs(&k->c) <= 3e6 && j < sizeof host_shapes / sizeof *host_shapes;
           j++) {
        char how[96];
        const cuda_conv_tile_shape *hs = &host_shapes[j];
        snprintf(how, sizeof how, "tiled %lldx%lld, split %lldx%lld (host)", (long long)hs->tm,
                 (long long)hs->tn, (long long)hs->ksw, (long long)hs->ksc);
        ok = host_run_any(k, CUDA_CONV_TILED, CUDA_CONV_SCRATCH_TARGET, hs, how) && ok;
        shaped++;
      }
    } else {
      CHECK(chosen != CUDA_CONV_TILED);
    }
    CHECK(cuda_conv_path_scratch_bytes(&k->c, CUDA_CONV_AUTO, CUDA_CONV_SCRATCH_TARGET) ==
          cuda_conv_scratch_bytes(&k->c));
    if (!ok) failed++;
  }
  CHECK(failed == 0);
  CHECK(im2col_chosen >= 1 && tiled_chosen >= 5 && split >= 4 && two_pass >= 1 && chunked >= 10);
  printf("host: %d cases x 5 runs (direct, im2col, im2col in small chunks, cuda_conv's choice, "
         "tiled) + %d runs in fixed tile shapes: %d failed; %d launches, %d gemms, %d zero "
         "fills; cuda_conv picks im2col for %d, tiled for %d; the rule splits the contraction "
         "for %d (%d over two cv_ksum passes); %d cases ran in several chunks\n",
         num_cases, shaped, failed, hk.launches, hk.gemms, hk.zeros, im2col_chosen, tiled_chosen,
         split, two_pass, chunked);
}

/* The rule's shapes and paths for the five convolutions of
 * cnn_sgd_step_64x28x28 at full size (printed for bench/CONV.md): im2col
 * for conv 1 (the 16 -> 32 forward conv) and conv 2 (its weight
 * gradient), the tiled kernel for the other three (the paths measured
 * faster on the H200: cuda_conv.h, CUDA_CONV_GEMM_MIN_*). */
TEST(cnn_shapes) {
  backend_conv c[5];
  layout_desc(&c[0], "b01f", "01io", "b01f", 64, 1, 28, 28, 16, 3, 3, 1);
  layout_desc(&c[1], "b01f", "01io", "b01f", 64, 16, 14, 14, 32, 3, 3, 1);
  layout_desc(&c[2], "f01b", "i01o", "01bf", 16, 64, 14, 14, 32, 14, 14, 1);
  layout_desc(&c[3], "b01f", "01oi", "b01f", 64, 32, 14, 14, 16, 3, 3, 1);
  layout_desc(&c[4], "f01b", "i01o", "01bf", 1, 64, 28, 28, 16, 28, 28, 1);
  for (int i = 0; i < 5; i++) {
    c[i].lhs_dtype = c[i].rhs_dtype = c[i].result_dtype = HLO_F32;
    cuda_conv_tile_shape sh;
    bool ok = cuda_conv_tile_plan(&c[i], CUDA_CONV_SCRATCH_TARGET, &sh);
    CHECK(ok && cuda_conv_choose(&c[i]) == (i == 1 || i == 2 ? CUDA_CONV_IM2COL : CUDA_CONV_TILED));
    printf("cnn conv %d: %.1f M MACs, tile %lld x %lld, split %lld x %lld (ks %lld), %lld threads, "
           "scratch %zu bytes, model %.1f us\n", i, conv_macs(&c[i]) / 1e6, (long long)sh.tm,
           (long long)sh.tn, (long long)sh.ksw, (long long)sh.ksc, (long long)sh.ks,
           (long long)sh.threads, cuda_conv_scratch_bytes(&c[i]), sh.est_us);
  }
  /* a small convolution of long sums is not the direct loop's */
  backend_conv tiny;
  wgrad_desc(&tiny, 8, 28, 28, 1, 1, 3, 3, 1, 1, 1);
  tiny.lhs_dtype = tiny.rhs_dtype = tiny.result_dtype = HLO_F32;
  CHECK(conv_macs(&tiny) <= CUDA_CONV_DIRECT_MAX_MACS &&
        cuda_conv_choose(&tiny) == CUDA_CONV_TILED);
  /* a large NHWC forward convolution stays on cuBLASLt */
  backend_conv big;
  layout_desc(&big, "b01f", "01io", "b01f", 32, 64, 56, 56, 128, 3, 3, 1);
  big.lhs_dtype = big.rhs_dtype = big.result_dtype = HLO_F32;
  CHECK(cuda_conv_choose(&big) == CUDA_CONV_IM2COL);
  /* bad shapes are errors */
  cuda_conv_tile_shape bad = {0, 1, 1, 1, 0, 0, 0};
  static const cuda_conv_ops ops = {host_launch, host_gemm, host_zero, NULL};
  hlo_status st = cuda_conv_run_tiled(&c[0], &bad, NULL, NULL, NULL, NULL, &ops);
  CHECK(st && hlo_status_code_of(st) == HLO_INVALID_ARGUMENT);
  hlo_status_free(st);
  bad.tm = 1, bad.tn = CUDA_CONV_TILE_N + 1;
  st = cuda_conv_run_tiled(&c[0], &bad, NULL, NULL, NULL, NULL, &ops);
  CHECK(st && hlo_status_code_of(st) == HLO_INVALID_ARGUMENT);
  hlo_status_free(st);
  CHECK(cuda_conv_tile_scratch_bytes(&c[0], &bad) == 0);
}

/* A GEMM the library declines: cuda_conv's choice falls back to the
 * direct path (the interpreter's bits); the im2col path alone fails. */
TEST(declined_gemm_falls_back_to_direct) {
  if (!hk.so && !host_kernels_load()) {
    printf("host kernels: skipped (the host C compiler failed: %s)\n", hk_error);
    return;
  }
  make_cases();
  int tried = 0;
  static const cuda_conv_ops ops = {host_launch, host_gemm, host_zero, NULL};
  hk.gemm_declines = true;
  for (int i = 0; i < num_cases; i++) {
    const conv_case *k = &cases[i];
    size_t sb = cuda_conv_scratch_bytes(&k->c);
    if (cuda_conv_choose(&k->c) != CUDA_CONV_IM2COL || !sb) continue;
    tried++;
    void *out = malloc(k->ref->nbytes), *scratch = malloc(sb);
    CHECK(out && scratch);
    if (!out || !scratch) break;
    hlo_status st = cuda_conv_run(&k->c, CUDA_CONV_IM2COL, CUDA_CONV_SCRATCH_TARGET,
                                  k->in[0]->data, k->in[1]->data, out, scratch, &ops);
    CHECK(st && hlo_status_code_of(st) == HLO_UNIMPLEMENTED);
    hlo_status_free(st);
    memset(out, 0x7f, k->ref->nbytes);
    st = cuda_conv_run(&k->c, CUDA_CONV_AUTO, CUDA_CONV_SCRATCH_TARGET, k->in[0]->data,
                       k->in[1]->data, out, scratch, &ops);
    CHECK(!st);
    hlo_status_free(st);
    CHECK(compare(k, out, true, "cuda_conv's choice, gemm declined (host)"));
    free(out);
    free(scratch);
  }
  hk.gemm_declines = false;
  CHECK(tried >= 2);
}

/* ------------------------------------------------------------ 3. on a GPU */

TEST(cuda_conv_on_the_gpu) {
  const backend *be = NULL;
  hlo_status st = backend_cuda(&be);
  if (st) {
    printf("cuda_conv_on_the_gpu: skipped: no GPU (%s)\n", hlo_status_message(st));
    hlo_status_free(st);
    return;
  }
  make_cases();
  int failed = 0, runs = 0;
  static const cuda_conv_path paths[4] = {CUDA_CONV_AUTO, CUDA_CONV_DIRECT, CUDA_CONV_IM2COL,
                                          CUDA_CONV_TILED};
  static const char *const how[4] = {"cuda_conv (GPU)", "direct (GPU)", "im2col (GPU)",
                                     "tiled (GPU)"};
  for (int i = 0; i < num_cases; i++) {
    const conv_case *k = &cases[i];
    size_t nb = k->ref->nbytes, lb = k->in[0]->nbytes, rb = k->in[1]->nbytes;
    cuda_conv_tile_shape tsh;
    int np = cuda_conv_tile_plan(&k->c, CUDA_CONV_SCRATCH_TARGET, &tsh) ? 4 : 3;
    for (int p = 0; p < np; p++) {
      size_t sbytes = p == 0 ? cuda_conv_scratch_bytes(&k->c)
                             : cuda_conv_path_scratch_bytes(&k->c, paths[p],
                                                            CUDA_CONV_SCRATCH_TARGET);
      void *dl = be->alloc(lb), *dr = be->alloc(rb), *dout = be->alloc(nb + 64),
           *ds = sbytes ? be->alloc(sbytes) : NULL;
      unsigned char *host = malloc(nb + 64);
      bool ok = dl && dr && dout && (ds || !sbytes) && host;
      if (ok) memset(host, 0x7f, nb + 64);
      hlo_status e = NULL;
      if (ok && lb) e = be->copy(dl, k->in[0]->data, lb);
      if (ok && !e && rb) e = be->copy(dr, k->in[1]->data, rb);
      if (ok && !e) e = be->copy(dout, host, nb + 64);
      if (ok && !e && ds) e = be->copy(ds, host, sbytes < nb + 64 ? sbytes : nb + 64);
      if (ok && !e)
        e = p == 0 ? cuda_conv(&k->c, dl, dr, dout, ds)
                   : cuda_conv_by(&k->c, paths[p], dl, dr, dout, ds);
      if (ok && !e) e = be->synchronize();
      if (ok && !e) e = be->copy(host, dout, nb + 64);
      if (e) {
        hlo_status_print(e, stderr);
        hlo_status_free(e);
        ok = false;
      }
      for (size_t j = nb; ok && j < nb + 64; j++) ok = host[j] == 0x7f;
      if (ok) ok = compare(k, host, paths[p] == CUDA_CONV_DIRECT, how[p]);
      else fprintf(stderr, "%s, %s: failed or wrote past the output\n", k->what, how[p]);
      runs++;
      if (!ok) failed++;
      be->free(dl);
      be->free(dr);
      be->free(dout);
      be->free(ds);
      free(host);
    }
  }
  CHECK(failed == 0);
  printf("gpu: %d runs (%d cases x cuda_conv, direct, im2col, tiled), %d failed\n", runs,
         num_cases, failed);
}

/* ------------------------------------------------------------ declines */

TEST(declines_and_errors) {
  backend_conv c;
  layout_desc(&c, "b01f", "01io", "b01f", 1, 2, 4, 4, 2, 3, 3, 1);
  c.lhs_dtype = c.rhs_dtype = c.result_dtype = HLO_I32;
  CHECK(!cuda_conv_takes(&c));
  CHECK(cuda_conv_scratch_bytes(&c) == 0);
  hlo_status st = cuda_conv(&c, NULL, NULL, NULL, NULL);
  CHECK(st && hlo_status_code_of(st) == HLO_UNIMPLEMENTED);
  hlo_status_free(st);
  c.lhs_dtype = c.rhs_dtype = HLO_F32;
  c.result_dtype = HLO_F64;
  CHECK(!cuda_conv_takes(&c));
  c.result_dtype = HLO_F32;
  CHECK(cuda_conv_takes(&c));
  if (!cuda_state()) { /* not started: an error, never a crash */
    st = cuda_conv(&c, NULL, NULL, NULL, NULL);
    CHECK(st && hlo_status_code_of(st) == HLO_UNAVAILABLE);
    hlo_status_free(st);
  }
  /* im2col needs its scratch */
  static const cuda_conv_ops ops = {host_launch, host_gemm, host_zero, NULL};
  layout_desc(&c, "b01f", "01io", "b01f", 2, 8, 32, 32, 64, 3, 3, 1);
  c.lhs_dtype = c.rhs_dtype = c.result_dtype = HLO_F32;
  /* (on a GPU with cuDNN the choice is cuDNN's, which needs scratch of its
   * own or none: our paths' rule and scratch are checked by name) */
  cuda_conv_path ch = cuda_conv_choose(&c);
  CHECK(ch == CUDA_CONV_IM2COL || ch == CUDA_CONV_CUDNN);
  CHECK(cuda_conv_path_scratch_bytes(&c, CUDA_CONV_IM2COL, CUDA_CONV_SCRATCH_TARGET) > 0);
  /* so does the tiled path when it splits the contraction */
  layout_desc(&c, "f01b", "i01o", "01bf", 1, 64, 28, 28, 16, 28, 28, 1);
  c.lhs_dtype = c.rhs_dtype = c.result_dtype = HLO_F32;
  ch = cuda_conv_choose(&c);
  CHECK(ch == CUDA_CONV_TILED || ch == CUDA_CONV_CUDNN);
  CHECK(cuda_conv_path_scratch_bytes(&c, CUDA_CONV_TILED, CUDA_CONV_SCRATCH_TARGET) > 0);
  st = cuda_conv_run(&c, CUDA_CONV_AUTO, CUDA_CONV_SCRATCH_TARGET, NULL, NULL, NULL, NULL, &ops);
  CHECK(st && hlo_status_code_of(st) == HLO_INVALID_ARGUMENT);
  hlo_status_free(st);
  layout_desc(&c, "b01f", "01io", "b01f", 2, 8, 32, 32, 64, 3, 3, 1);
  c.lhs_dtype = c.rhs_dtype = c.result_dtype = HLO_F32;
  st = cuda_conv_run(&c, CUDA_CONV_AUTO, CUDA_CONV_SCRATCH_TARGET, NULL, NULL, NULL, NULL, &ops);
  CHECK(st && hlo_status_code_of(st) == HLO_INVALID_ARGUMENT);
  hlo_status_free(st);
  /* an empty result: nothing to do, nothing launched */
  int before = hk.launches;
  c.lhs_dims[0] = 0;
  finish_desc(&c);
  st = cuda_conv_run(&c, CUDA_CONV_AUTO, CUDA_CONV_SCRATCH_TARGET, NULL, NULL, NULL, NULL, &ops);
  CHECK(!st && hk.launches == before);
  hlo_status_free(st);
}

TEST(cleanup) {
  for (int i = 0; i < num_cases; i++) {
    tensor_release(cases[i].in[0]);
    tensor_release(cases[i].in[1]);
    tensor_release(cases[i].ref);
    tl_run_free(&cases[i].r);
    free(cases[i].text);
  }
  num_cases = 0;
  if (hk.so) dlclose(hk.so);
  hk.so = NULL;
}

TEST_MAIN()
