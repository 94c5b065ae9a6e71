/* test_cpu_conv.c — the convolution description (backend/conv_describe.c)
 * and the CPU backend's convolution (backend/cpu/conv.c: im2col + GEMM;
 * conv_onednn.c: oneDNN's primitives), against the reference interpreter's
 * convolution kernel.
 *
 * Every case is a backend_conv printed as a one-op StableHLO module (so the
 * description is also checked to survive print -> parse -> conv_describe
 * unchanged), run on random inputs by the interpreter (interp_run_op) and
 * by every path of cpu_conv: the direct loop (which must give the
 * interpreter's bits), im2col, and oneDNN where cpu_conv_onednn_takes. f32
 * and f64 results of the last two must agree within the rounding-error
 * bound of a K-term dot product computed in two orders:
 *   |cpu - interp| <= 2 (K + 2) eps sum_k |lhs_k rhs_k|,
 * the sum of absolute products coming from a third (interpreter) run on
 * |lhs| and |rhs|. Cases: every convolution of the conformance corpus
 * (../shared/conformance, retyped to f32 and f64), the convolutions of
 * ../shared/perf/cnn_sgd_step_64x28x28 (batch cut to 4) and
 * ../shared/models/group_norm_convT, shapes that make cpu_conv chunk over
 * M and over K, 400 seeded random attribute combinations (f32, f64, bf16,
 * f16: the narrow types within the f32 bound plus one unit in the last
 * place of the result type) and 120 random
 * convolutions of the forms oneDNN takes (standard layouts, batches cut
 * into pieces). */
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "backend/conv_describe.h"
#include "backend/cpu/conv.h"
#include "interp/interp.h"
#include "ir/element.h"
#include "support/strbuf.h"
#include "test.h"
#include "testlib.h"

static uint64_t rng = 0x9e3779b97f4a7c15ULL;
static uint64_t next_u64(void) { return tl_xorshift64(&rng); }
static int64_t rand_in(int64_t lo, int64_t hi) { return tl_rand_in(&rng, lo, hi); }
static double rand_unit(void) { return (double)(next_u64() >> 11) / 9007199254740992.0 * 2 - 1; }

/* ------------------------------------------------------------ printing */

static void print_type(strbuf *b, const int64_t *dims, uint32_t rank, hlo_dtype dt) {
  sb_puts(b, "tensor<");
  for (uint32_t i = 0; i < rank; i++) sb_printf(b, "%lldx", (long long)dims[i]);
  sb_printf(b, "%s>", hlo_dtype_name(dt));
}

/* One operand's dim_numbers letters: `a` and `bname`/`fname` at dims a, f. */
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
  print_dims(&b, R, c->output_batch_dimension, 'f', c->output_feature_dimension, 'f',
             c->output_spatial_dimensions, S);
  /* (the output's batch letter is 'b': fixed below) */
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
  static const char *const prec[] = {"DEFAULT", "HIGH", "HIGHEST"};
  sb_printf(&b, " {batch_group_count = %lld : i64, feature_group_count = %lld : i64, "
            "precision_config = [#stablehlo<precision %s>, #stablehlo<precision %s>]} : (",
            (long long)c->batch_group_count, (long long)c->feature_group_count,
            prec[c->precision[0]], prec[c->precision[1]]);
  print_type(&b, c->lhs_dims, R, dt);
  sb_puts(&b, ", ");
  print_type(&b, c->rhs_dims, R, dt);
  sb_puts(&b, ") -> ");
  print_type(&b, c->result_dims, R, dt);
  sb_puts(&b, "\n  func.return %0 : ");
  print_type(&b, c->result_dims, R, dt);
  sb_puts(&b, "\n}\n");
  char *text = sb_take(&b);
  /* the output's batch letter: the first 'f' after "->[" that is the batch */
  char *o = strstr(text, "->[");
  if (o && text) {
    char *p = o + 3;
    for (uint32_t d = 0; d < R; d++) {
      while (*p == ' ' || *p == ',') p++;
      if (d == c->output_batch_dimension) *p = 'b';
      while (*p && *p != ',' && *p != ']') p++;
    }
  }
  return text;
}

/* ------------------------------------------------------------ comparing */

static bool same_desc(const backend_conv *a, const backend_conv *b) {
  backend_conv x = *a, y = *b;
  x.lhs_dtype = x.rhs_dtype = x.result_dtype = HLO_F32;
  y.lhs_dtype = y.rhs_dtype = y.result_dtype = HLO_F32;
  memset(&x.loc, 0, sizeof x.loc);
  memset(&y.loc, 0, sizeof y.loc);
  return !memcmp(&x, &y, sizeof x);
}

static int cases_run, cases_failed, cases_onednn;

/* Runs `want` (a description) as type dt on the interpreter and cpu_conv. */
static void check_case(const char *what, const backend_conv *want, hlo_dtype dt) {
  char *text = conv_module(want, dt);
  hlo_source src = tl_source(what, text);
  tl_run r;
  hlo_status st = tl_prepare(&src, 0, strlen(text), 0, NULL, &r);
  bool ok = !st;
  if (st) {
    fprintf(stderr, "%s: module does not parse:\n%s", what, text);
    hlo_status_print(st, stderr);
    hlo_status_free(st);
  }
  const hlo_op *op = ok ? r.f->body.block.first : NULL;
  backend_conv c;
  if (ok && !(ok = conv_describe(op, &c)))
    fprintf(stderr, "%s: conv_describe refused:\n%s", what, text);
  if (ok && !(ok = same_desc(&c, want)))
    fprintf(stderr, "%s: description changed through the text:\n%s", what, text);
  if (ok && !(ok = cpu_conv_takes(&c))) fprintf(stderr, "%s: cpu_conv_takes is false\n", what);
  tensor *in[2] = {NULL, NULL}, *absin[2] = {NULL, NULL}, *ref = NULL, *absref = NULL;
  void *got = NULL, *scratch = NULL;
  if (ok) {
    func_number_values(r.f);
    for (int i = 0; i < 2 && ok; i++) {
      ok = (in[i] = tensor_new(op->operands[i]->type)) &&
           (absin[i] = tensor_new(op->operands[i]->type));
      for (int64_t e = 0; ok && e < in[i]->num_elems; e++) {
        elem_set_f64(dt, in[i]->data, e, rand_unit()); /* rounded to dt */
        elem_set_f64(dt, absin[i]->data, e, fabs(elem_get_f64(dt, in[i]->data, e)));
      }
    }
    const hlo_value *vals[2] = {op->operands[0], op->operands[1]};
    st = ok ? interp_run_op(r.it, op, vals, in, 2, &ref) : NULL;
    if (!st && ok) st = interp_run_op(r.it, op, vals, absin, 2, &absref);
    if (st) {
      hlo_status_print(st, stderr);
      hlo_status_free(st);
      ok = false;
    }
  }
  /* path 0: the direct loop (the interpreter's bits); 1: im2col; 2: oneDNN,
   * where it takes the description */
  bool onednn = ok && cpu_conv_onednn_takes(&c);
  if (onednn) cases_onednn++;
  static const char *const path_name[3] = {"direct", "im2col", "oneDNN"};
  for (int path = 0; ok && path < (onednn ? 3 : 2); path++) {
    size_t sb = path == 2 ? cpu_conv_onednn_scratch_bytes(&c)
                : path == 1 ? cpu_conv_im2col_scratch_bytes(&c) : 0;
    /* the scratch cpu_conv asks for covers the path it takes (oneDNN
     * where it takes the description, else im2col) */
    bool chosen = path == (onednn ? 2 : 1);
    CHECK(cpu_conv_direct_takes(&c) || !chosen || sb <= cpu_conv_scratch_bytes(&c));
    free(got);
    free(scratch);
    got = malloc(ref->nbytes + 1);
    scratch = sb ? malloc(sb) : NULL;
    ok = got && (scratch || !sb);
    if (!ok) break;
    memset(got, 0x7f, ref->nbytes + 1); /* garbage: every element must be written */
    st = path == 2   ? cpu_conv_onednn(&c, in[0]->data, in[1]->data, got, scratch)
         : path == 1 ? cpu_conv_im2col(&c, in[0]->data, in[1]->data, got, scratch)
                     : cpu_conv_direct(&c, in[0]->data, in[1]->data, got);
    if (st) {
      hlo_status_print(st, stderr);
      hlo_status_free(st);
      ok = false;
      break;
    }
    double K = (double)c.rhs_dims[c.kernel_input_feature_dimension];
    for (uint32_t s = 0; s < c.num_spatial; s++) K *= (double)c.rhs_dims[c.kernel_spatial_dimensions[s]];
    /* bf16 / f16 are summed in f32 on both sides and rounded once: the f32
     * bound plus one unit in the last place of the result type (the two f32
     * sums may straddle a rounding boundary) */
    bool narrow = dt == HLO_BF16 || dt == HLO_F16;
    double eps = dt == HLO_F64 ? ldexp(1, -53) : ldexp(1, -24);
    for (int64_t e = 0; e < ref->num_elems && ok; e++) {
      double a = elem_get_f64(dt, got, e), w = elem_get_f64(dt, ref->data, e);
      double tol = 2 * (K + 2) * eps * elem_get_f64(dt, absref->data, e);
      if (path == 0) { /* the same bits (NaNs: any NaN) */
        if (elem_get_bits(dt, got, e) != elem_get_bits(dt, ref->data, e) &&
            !(isnan(a) && isnan(w))) {
          fprintf(stderr, "%s (%s, direct): element %lld: %.17g, interpreter %.17g: bits "
                  "differ\n%s", what, hlo_dtype_name(dt), (long long)e, a, w, text);
          ok = false;
        }
        continue;
      }
      if (narrow) {
        double mx = fmax(fabs(a), fabs(w));
        int mant = dt == HLO_BF16 ? 7 : 10;
        double ulp = mx == 0 ? 0 : ldexp(1, ilogb(mx) - mant);
        tol += fmax(ulp, dt == HLO_BF16 ? ldexp(1, -133) : ldexp(1, -24));
      }
      if (!(fabs(a - w) <= tol)) {
        fprintf(stderr, "%s (%s, %s): element %lld: cpu %.17g, interpreter %.17g (tol %.3g)\n%s",
                what, hlo_dtype_name(dt), path_name[path], (long long)e, a, w, tol,
                text);
        ok = false;
      }
    }
    CHECK(((unsigned char *)got)[ref->nbytes] == 0x7f); /* nothing written past the end */
  }
  cases_run++;
  if (!ok) cases_failed++;
  CHECK(ok);
  free(got);
  free(scratch);
  for (int i = 0; i < 2; i++) {
    tensor_release(in[i]);
    tensor_release(absin[i]);
  }
  tensor_release(ref);
  tensor_release(absref);
  tl_run_free(&r);
  free(text);
}

/* ------------------------------------------------------------ corpus */

typedef struct corpus_ctx {
  int convs, described, quantized, dynamic;
} corpus_ctx;

static void walk_ops(const hlo_block *blk, const char *path, corpus_ctx *cx, int *n) {
  for (const hlo_op *op = blk->first; op; op = op->next) {
    for (uint32_t r = 0; r < op->num_regions; r++) walk_ops(&op->regions[r].block, path, cx, n);
    if (op->opcode != OP_CONVOLUTION) continue;
    cx->convs++;
    backend_conv c;
    bool quant = op->operands[0]->type->quant || op->operands[1]->type->quant ||
                 op->results[0].type->quant;
    bool dyn = !type_is_static(op->operands[0]->type) || !type_is_static(op->operands[1]->type) ||
               !type_is_static(op->results[0].type);
    if (!conv_describe(op, &c)) {
      if (quant) cx->quantized++;
      else if (dyn) cx->dynamic++;
      else {
        fprintf(stderr, "%s: a convolution conv_describe refuses\n", path);
        CHECK(false);
      }
      continue;
    }
    CHECK(!quant && !dyn);
    cx->described++;
    char what[600];
    snprintf(what, sizeof what, "%s#%d", path, (*n)++);
    check_case(what, &c, HLO_F32);
    check_case(what, &c, HLO_F64);
  }
}

static void corpus_file(const char *path, void *ctx) {
  corpus_ctx *cx = ctx;
  tl_file f;
  hlo_status st = tl_file_load(path, &f);
  if (st) {
    hlo_status_free(st);
    tl_file_free(&f);
    return;
  }
  if (!strstr(f.text, "convolution")) {
    tl_file_free(&f);
    return;
  }
  int n = 0;
  for (size_t i = 0; i < f.num_pieces; i++) {
    hlo_module_ir *m = tl_parse_piece(&f.src, f.pieces[i].begin, f.pieces[i].end, &st);
    if (!m) {
      hlo_status_free(st);
      continue;
    }
    for (hlo_func *fn = m->funcs; fn; fn = fn->next) walk_ops(&fn->body.block, path, cx, &n);
    module_free(m);
  }
  tl_file_free(&f);
}

TEST(conformance_convolutions) {
  char dir[512];
  snprintf(dir, sizeof dir, "%s/conformance", tl_shared_dir());
  corpus_ctx cx = {0, 0, 0, 0};
  size_t files = tl_for_each_mlir(dir, true, corpus_file, &cx);
  if (files == 0) {
    printf("conformance_convolutions: skipped (no .mlir files under %s)\n", dir);
    return;
  }
  printf("conformance: %zu files, %d convolutions, %d described and run (f32, f64), "
         "%d quantized and %d dynamic (left to the interpreter)\n", files, cx.convs, cx.described,
         cx.quantized, cx.dynamic);
  CHECK(cx.described >= 15);
  CHECK_EQ_INT(cx.described + cx.quantized + cx.dynamic, cx.convs);
}

/* The convolutions of one program file (all of them must be described and
 * taken), each with its batch dims cut to at most `max_batch`. */
static void program_convs(const char *rel, int64_t max_batch, int expect) {
  char path[512];
  snprintf(path, sizeof path, "%s/%s", tl_shared_dir(), rel);
  tl_file f;
  hlo_status st = tl_file_read(path, &f);
  if (st) {
    printf("%s: skipped (%s)\n", rel, hlo_status_message(st));
    hlo_status_free(st);
    tl_file_free(&f);
    return;
  }
  hlo_module_ir *m = tl_parse_piece(&f.src, 0, f.len, &st);
  CHECK(m != NULL);
  if (!m) hlo_status_free(st);
  int n = 0;
  for (hlo_func *fn = m ? m->funcs : NULL; fn; fn = fn->next)
    for (const hlo_op *op = fn->body.block.first; op; op = op->next) {
      if (op->opcode != OP_CONVOLUTION) continue;
      backend_conv c;
      bool d = conv_describe(op, &c);
      CHECK(d && cpu_conv_takes(&c));
      if (!d) continue;
      printf("%s conv %d: scratch %zu bytes, %s\n", rel, n, cpu_conv_scratch_bytes(&c),
             cpu_conv_direct_takes(&c)   ? "direct"
             : cpu_conv_onednn_takes(&c) ? "oneDNN"
                                         : "im2col");
      CHECK(cpu_conv_scratch_bytes(&c) <= CPU_CONV_SCRATCH_TARGET + (size_t)conv_rhs_elements(&c) * 4 + 128);
      /* the batch of the whole step runs too long on the interpreter under
       * the sanitizers: cut the input batch (and what follows from it) */
      int64_t *ib = &c.lhs_dims[c.input_batch_dimension];
      if (*ib > max_batch) {
        *ib = max_batch * c.batch_group_count;
        c.result_dims[c.output_batch_dimension] = max_batch;
      }
      char what[600];
      snprintf(what, sizeof what, "%s conv %d", rel, n++);
      check_case(what, &c, HLO_F32);
    }
  CHECK_EQ_INT(n, expect);
  module_free(m);
  tl_file_free(&f);
}

TEST(cnn_sgd_step_convolutions) {
  program_convs("perf/cnn_sgd_step_64x28x28/cnn_sgd_step_64x28x28.mlir", 4, 5);
}

TEST(group_norm_convT_convolution) {
  program_convs("models/group_norm_convT/group_norm_convT.mlir", 2, 1);
}

/* ------------------------------------------------------------ constructed */

/* A description from its parts; result dims computed (spec C25). Returns
 * false when some result spatial size would be negative (never: 0 then). */
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

/* A random convolution with S spatial dims: dims of every operand in a
 * random order, small sizes, any window attributes, feature or batch
 * groups; the result shape follows. */
static void random_desc(backend_conv *c, uint32_t S, bool plain) {
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
  int mode = (int)rand_in(0, plain ? 2 : 3); /* 0, 1: no groups; 2: feature; 3: batch */
  int64_t G = mode >= 2 ? rand_in(2, 3) : 1;
  c->feature_group_count = mode == 2 ? G : 1;
  c->batch_group_count = mode == 3 ? G : 1;
  int64_t cin_g = rand_in(1, 4), cout = G * rand_in(1, 3);
  c->lhs_dims[pi[0]] = (mode == 3 ? G : 1) * rand_in(1, 3);
  c->lhs_dims[pi[1]] = cin_g * c->feature_group_count;
  c->rhs_dims[pk[0]] = cin_g;
  c->rhs_dims[pk[1]] = cout;
  for (uint32_t s = 0; s < S; s++) {
    c->input_spatial_dimensions[s] = pi[2 + s];
    c->kernel_spatial_dimensions[s] = pk[2 + s];
    c->output_spatial_dimensions[s] = po[2 + s];
    c->lhs_dims[pi[2 + s]] = rand_in(0, 19) || plain ? rand_in(1, 7) : 0;
    c->rhs_dims[pk[2 + s]] = rand_in(0, 19) || plain ? rand_in(1, 4) : 0;
    c->window_strides[s] = rand_in(1, 3);
    c->padding_low[s] = rand_in(plain ? 0 : -2, 3);
    c->padding_high[s] = rand_in(plain ? 0 : -2, 3);
    c->lhs_dilation[s] = rand_in(0, 2) || plain ? 1 : rand_in(2, 3);
    c->rhs_dilation[s] = rand_in(0, 2) ? 1 : rand_in(2, 3);
    c->window_reversal[s] = plain ? false : rand_in(0, 1);
  }
  c->precision[0] = (backend_precision)rand_in(0, 2);
  c->precision[1] = (backend_precision)rand_in(0, 2);
  finish_desc(c);
}

TEST(random_convolutions) {
  int before = cases_failed;
  for (int i = 0; i < 400; i++) {
    backend_conv c;
    uint32_t S = i % 10 == 0 ? 0 : i % 10 < 5 ? 1 : i % 10 < 9 ? 2 : 3;
    random_desc(&c, S, false);
    char what[64];
    snprintf(what, sizeof what, "random case %d", i);
    static const hlo_dtype types[8] = {HLO_F32, HLO_F32, HLO_F64, HLO_F32,
                                       HLO_BF16, HLO_F32, HLO_F16, HLO_F64};
    check_case(what, &c, types[i % 8]);
  }
  printf("random: 400 cases (f32, f64, bf16, f16), %d failed\n", cases_failed - before);
}

/* A 2-D convolution with the given layouts (letters as in dim_numbers:
 * "b01f"), sizes by role, stride 1 and `pad` on every side. */
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

/* The forms the oneDNN path takes: standard layouts (NHWC / NCHW inputs
 * and results, HWIO / OIHW kernels; and the backward-filter shape JAX
 * emits: lhs [f, 0, 1, b], rhs [i, 0, 1, o], result [0, 1, b, f], with a
 * window as large as the input), no lhs dilation, reversal, negative
 * padding or batch groups, f32: many of these run on both paths; batches of
 * 4 and more are cut into pieces run on the thread pool (conv_onednn.c). */
TEST(random_onednn_forms) {
  static const char *const ins[] = {"b01f", "bf01"}, *const kers[] = {"01io", "oi01", "o01i"},
                           *const outs[] = {"b01f", "bf01"};
  int before = cases_failed, on_before = cases_onednn;
  for (int i = 0; i < 120; i++) {
    backend_conv c;
    if (i % 3 == 2) { /* backward filter: C_in as batch, the batch as features */
      int64_t n = rand_in(1, 12), cin = rand_in(1, 5), cout = rand_in(1, 5), h = rand_in(3, 9),
              w = rand_in(3, 9), kh = rand_in(1, 3), kw = rand_in(1, 3), p = rand_in(0, 1);
      layout_desc(&c, "f01b", "i01o", "01bf", cin, n, h, w, cout, h + 2 * p - kh + 1,
                  w + 2 * p - kw + 1, p);
    } else {
      layout_desc(&c, ins[rand_in(0, 1)], kers[rand_in(0, 2)], outs[rand_in(0, 1)], rand_in(1, 9),
                  rand_in(1, 8), rand_in(1, 9), rand_in(1, 9), rand_in(1, 8), rand_in(1, 3),
                  rand_in(1, 3), rand_in(0, 2));
      int64_t G = rand_in(1, 3);
      if (G > 1) { /* feature groups */
        c.feature_group_count = G;
        c.lhs_dims[c.input_feature_dimension] = G * c.rhs_dims[c.kernel_input_feature_dimension];
        c.rhs_dims[c.kernel_output_feature_dimension] *= G;
      }
      for (uint32_t s = 0; s < 2; s++) {
        c.window_strides[s] = rand_in(1, 2);
        c.rhs_dilation[s] = rand_in(0, 3) ? 1 : 2;
        c.padding_high[s] = rand_in(0, 2);
      }
      finish_desc(&c);
    }
    char what[64];
    snprintf(what, sizeof what, "random oneDNN-form case %d", i);
    check_case(what, &c, HLO_F32);
  }
  printf("random oneDNN forms: 120 cases, %d on oneDNN too, %d failed\n",
         cases_onednn - on_before, cases_failed - before);
  CHECK(cases_onednn - on_before >= 20);
}

TEST(chunked_over_m_and_k) {
  backend_conv c;
  /* M = 6400 rows of K = 800: three M chunks of the im2col */
  layout_desc(&c, "b01f", "01io", "b01f", 4, 32, 40, 40, 8, 5, 5, 2);
  CHECK(cpu_conv_scratch_bytes(&c) <= CPU_CONV_SCRATCH_TARGET);
  CHECK(cpu_conv_scratch_bytes(&c) < (size_t)6400 * 800 * 4);
  check_case("M chunks (NHWC)", &c, HLO_F32);
  /* NCHW in and out, OIHW kernel: the output as per-batch C^T blocks */
  layout_desc(&c, "bf01", "oi01", "bf01", 3, 8, 20, 20, 6, 3, 3, 1);
  check_case("NCHW / OIHW", &c, HLO_F32);
  check_case("NCHW / OIHW", &c, HLO_F64);
  /* a backward-filter shape: K = 16 x 25 x 25 = 10000 per output row, 300
   * rows: chunks over K accumulate (beta = 1) */
  layout_desc(&c, "f01b", "i01o", "01bf", 12, 16, 25, 25, 4, 25, 25, 2);
  CHECK(cpu_conv_scratch_bytes(&c) <= CPU_CONV_SCRATCH_TARGET);
  CHECK(cpu_conv_scratch_bytes(&c) < (size_t)300 * 10000 * 4);
  check_case("K chunks (backward filter)", &c, HLO_F32);
  /* kernel output feature in the middle: repacked */
  layout_desc(&c, "b01f", "0o1i", "b0f1", 2, 5, 9, 7, 3, 3, 2, 1);
  check_case("repacked kernel", &c, HLO_F32);
}

TEST(declines_and_errors) {
  backend_conv c;
  layout_desc(&c, "b01f", "01io", "b01f", 1, 2, 4, 4, 2, 3, 3, 1);
  c.lhs_dtype = c.rhs_dtype = c.result_dtype = HLO_F8E4M3FN;
  CHECK(!cpu_conv_takes(&c));
  hlo_status st = cpu_conv(&c, NULL, NULL, NULL, NULL);
  CHECK(st && hlo_status_code_of(st) == HLO_UNIMPLEMENTED);
  hlo_status_free(st);
  c.lhs_dtype = c.rhs_dtype = c.result_dtype = HLO_I32;
  CHECK(!cpu_conv_takes(&c));
  c.lhs_dtype = c.rhs_dtype = HLO_F32;
  c.result_dtype = HLO_F64;
  CHECK(!cpu_conv_takes(&c));
  /* quantized operands, another op: no description */
  const char *q = "func.func @main(%a: tensor<1x4x4x1x!quant.uniform<i8:f32, 0.5>>, "
                  "%b: tensor<3x3x1x1x!quant.uniform<i8:f32, 0.5>>) -> tensor<1x2x2x1xf32> {\n"
                  "  %0 = stablehlo.convolution(%a, %b) dim_numbers = [b, 0, 1, f]x[0, 1, i, o]"
                  "->[b, 0, 1, f], window = {stride = [1, 1]} {batch_group_count = 1 : i64, "
                  "feature_group_count = 1 : i64} : (tensor<1x4x4x1x!quant.uniform<i8:f32, 0.5>>, "
                  "tensor<3x3x1x1x!quant.uniform<i8:f32, 0.5>>) -> tensor<1x2x2x1xf32>\n"
                  "  func.return %0 : tensor<1x2x2x1xf32>\n}\n";
  hlo_source src = tl_source("quant", q);
  hlo_module_ir *m = tl_parse_piece(&src, 0, strlen(q), &st);
  CHECK(m != NULL);
  if (!m) {
    hlo_status_print(st, stderr);
    hlo_status_free(st);
  } else {
    const hlo_op *op = module_entry(m, NULL)->body.block.first;
    CHECK(op->opcode == OP_CONVOLUTION && !conv_describe(op, &c));
    CHECK(!conv_describe(op->next, &c)); /* func.return */
    module_free(m);
  }
}

TEST_MAIN()
