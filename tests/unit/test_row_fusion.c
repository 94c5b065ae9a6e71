/* test_row_fusion.c — row fusion (src/passes/fusion.c, rule 5) and the
 * staged row kernels it becomes (codegen/kernel.h, Stages): softmax,
 * LayerNorm and RMSNorm on odd row counts (1, 3, 17, 1000) and row lengths
 * (1, 5, 33, 257), in f32 and bf16, with rows of -inf, NaN and +inf for
 * softmax's max:
 *   - the CPU pipeline makes ONE "row" fusion of each, lowered into ONE
 *     kernel whose stages are the reductions and the final map (asserted
 *     on the kernel: stage kinds, a temporary for softmax's exp, tiles =
 *     rows, kernel_tiles_rows);
 *   - the compiled program (HLO_BACKEND_CPU, with `check`: every compiled
 *     step beside the interpreter) agrees with the interpreter's results:
 *     f32 within 1e-5 relative per element (the sums' order differs), bf16
 *     within 2 bf16 ULP, NaN where the interpreter has NaN;
 *   - llama's causal-masked softmax whose result is reshaped for a batched
 *     dot is one row kernel too (mask inside, divide inside, one result).
 * Without a C compiler the run half prints "skipped". */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "codegen/lower_fusion.h"
#include "hlo/hlo.h"
#include "ir/element.h"
#include "parse/parse.h"
#include "passes/pass_manager.h"
#include "support/float.h"
#include "test.h"

#define FUSION_TEST_MAX 256
#include "testlib.h"

typedef enum { SOFTMAX, LAYERNORM, RMSNORM } prog_kind;

/* The program of `kind` over a [rows, cols] matrix of `ty` (f32, bf16). */
static void program(prog_kind kind, int64_t rows, int64_t cols, const char *ty, char *out,
                    size_t cap) {
  char m[64], r[64], r1[64];
  snprintf(m, sizeof m, "tensor<%lldx%lldx%s>", (long long)rows, (long long)cols, ty);
  snprintf(r, sizeof r, "tensor<%lldx%s>", (long long)rows, ty);
  snprintf(r1, sizeof r1, "tensor<%lldx1x%s>", (long long)rows, ty);
  switch (kind) {
  case SOFTMAX:
    snprintf(out, cap,
             "func.func @main(%%x: %s) -> %s {\n"
             "  %%ninf = stablehlo.constant dense<0xFF80> : tensor<%s>\n"
             "  %%zero = stablehlo.constant dense<0.0> : tensor<%s>\n"
             "  %%m = stablehlo.reduce(%%x init: %%ninf) applies stablehlo.maximum across dimensions = [1] : (%s, tensor<%s>) -> %s\n"
             "  %%mb = stablehlo.broadcast_in_dim %%m, dims = [0] : (%s) -> %s\n"
             "  %%d = stablehlo.subtract %%x, %%mb : %s\n"
             "  %%e = stablehlo.exponential %%d : %s\n"
             "  %%s = stablehlo.reduce(%%e init: %%zero) applies stablehlo.add across dimensions = [1] : (%s, tensor<%s>) -> %s\n"
             "  %%sb = stablehlo.broadcast_in_dim %%s, dims = [0] : (%s) -> %s\n"
             "  %%y = stablehlo.divide %%e, %%sb : %s\n"
             "  return %%y : %s\n}\n",
             m, m, ty, ty, m, ty, r, r, m, m, m, m, ty, r, r, m, m, m);
    /* f32's -inf spelled as an f32 hex literal */
    if (!strcmp(ty, "f32")) {
      char *p = strstr(out, "0xFF80 ");
      if (p) {
        memmove(p + 10, p + 6, strlen(p + 6) + 1);
        memcpy(p, "0xFF800000", 10);
      }
    }
    break;
  case LAYERNORM:
    snprintf(out, cap,
             "func.func @main(%%x: %s, %%g: tensor<%lldx%s>) -> %s {\n"
             "  %%zero = stablehlo.constant dense<0.0> : tensor<%s>\n"
             "  %%n = stablehlo.constant dense<%lld.0> : %s\n"
             "  %%eps = stablehlo.constant dense<1.0e-5> : %s\n"
             "  %%s = stablehlo.reduce(%%x init: %%zero) applies stablehlo.add across dimensions = [1] : (%s, tensor<%s>) -> %s\n"
             "  %%s1 = stablehlo.broadcast_in_dim %%s, dims = [0] : (%s) -> %s\n"
             "  %%mean = stablehlo.divide %%s1, %%n : %s\n"
             "  %%mb = stablehlo.broadcast_in_dim %%mean, dims = [0, 1] : (%s) -> %s\n"
             "  %%c = stablehlo.subtract %%x, %%mb : %s\n"
             "  %%sq = stablehlo.multiply %%c, %%c : %s\n"
             "  %%ss = stablehlo.reduce(%%sq init: %%zero) applies stablehlo.add across dimensions = [1] : (%s, tensor<%s>) -> %s\n"
             "  %%ss1 = stablehlo.broadcast_in_dim %%ss, dims = [0] : (%s) -> %s\n"
             "  %%var = stablehlo.divide %%ss1, %%n : %s\n"
             "  %%ve = stablehlo.add %%var, %%eps : %s\n"
             "  %%rs = stablehlo.rsqrt %%ve : %s\n"
             "  %%rb = stablehlo.broadcast_in_dim %%rs, dims = [0, 1] : (%s) -> %s\n"
             "  %%y = stablehlo.multiply %%c, %%rb : %s\n"
             "  %%gb = stablehlo.broadcast_in_dim %%g, dims = [1] : (tensor<%lldx%s>) -> %s\n"
             "  %%y2 = stablehlo.multiply %%y, %%gb : %s\n"
             "  return %%y2 : %s\n}\n",
             m, (long long)cols, ty, m, ty, (long long)cols, r1, r1, m, ty, r, r, r1, r1, r1, m,
             m, m, m, ty, r, r, r1, r1, r1, r1, r1, m, m, (long long)cols, ty, m, m, m);
    break;
  case RMSNORM:
    snprintf(out, cap,
             "func.func @main(%%x: %s) -> %s {\n"
             "  %%zero = stablehlo.constant dense<0.0> : tensor<%s>\n"
             "  %%n = stablehlo.constant dense<%lld.0> : %s\n"
             "  %%eps = stablehlo.constant dense<1.0e-6> : %s\n"
             "  %%sq = stablehlo.multiply %%x, %%x : %s\n"
             "  %%s = stablehlo.reduce(%%sq init: %%zero) applies stablehlo.add across dimensions = [1] : (%s, tensor<%s>) -> %s\n"
             "  %%s1 = stablehlo.broadcast_in_dim %%s, dims = [0] : (%s) -> %s\n"
             "  %%ms = stablehlo.divide %%s1, %%n : %s\n"
             "  %%me = stablehlo.add %%ms, %%eps : %s\n"
             "  %%rs = stablehlo.rsqrt %%me : %s\n"
             "  %%rb = stablehlo.broadcast_in_dim %%rs, dims = [0, 1] : (%s) -> %s\n"
             "  %%y = stablehlo.multiply %%x, %%rb : %s\n"
             "  return %%y : %s\n}\n",
             m, m, ty, (long long)cols, r1, r1, m, m, ty, r, r, r1, r1, r1, r1, r1, m, m, m);
    break;
  }
}

/* The kernel of the CPU pipeline's only fusion of `text` (NULL when the
 * pipeline does not make exactly one "row" fusion, which is asserted). */
static kernel *row_kernel(const char *text) {
  hlo_source src = tl_source("row.mlir", text);
  hlo_status st = NULL;
  hlo_module_ir *m = tl_parse_piece(&src, 0, src.len, &st);
  CHECK(m != NULL);
  if (!m) {
    hlo_status_print(st, stderr);
    hlo_status_free(st);
    return NULL;
  }
  pass_pipeline_options po = {.pipeline = PASS_PIPELINE_CPU, .verify_each = true};
  st = pass_pipeline_run(m, &po, NULL);
  CHECK(!st);
  kernel *k = NULL;
  const hlo_op *fus = NULL;
  uint32_t nfus = 0;
  for (const hlo_op *op = m->funcs ? m->funcs->body.block.first : NULL; op; op = op->next)
    if (op->opcode == OP_FUSION) fus = op, nfus++;
  CHECK_EQ_INT(nfus, 1);
  const hlo_attr *kind = fus ? op_attr(fus, "kind") : NULL;
  CHECK(kind && kind->kind == ATTR_STRING && !strcmp(kind->u.str.s, "row"));
  if (!st && fus && nfus == 1) {
    const hlo_block *b = &fus->regions[0].block;
    const hlo_op *ops[FUSION_TEST_MAX];
    uint32_t n = 0;
    for (const hlo_op *op = b->first; op && op != b->last && n < FUSION_TEST_MAX; op = op->next)
      ops[n++] = op;
    st = lower_fusion(ops, n, (const hlo_value *const *)b->last->operands, b->last->num_operands,
                      "k", &k);
    CHECK(!st);
  }
  hlo_status_free(st);
  module_free(m);
  return k;
}

/* Inputs: normal-ish values (a fixed LCG), and for softmax rows of -inf,
 * of NaN and with a +inf (when there are enough rows). */
static uint64_t rng = 88172645463325252ull;
static double rnd(void) {
  rng ^= rng << 13, rng ^= rng >> 7, rng ^= rng << 17;
  return (double)(rng >> 11) / 9007199254740992.0 * 6.0 - 3.0;
}

static void fill(hlo_dtype dt, void *data, int64_t rows, int64_t cols, bool specials) {
  for (int64_t i = 0; i < rows * cols; i++) {
    double v = rnd();
    int64_t r = i / cols;
    if (specials && rows >= 3 && r == 1) v = -INFINITY;
    if (specials && rows >= 3 && r == 2 && i % cols == cols / 2) v = NAN;
    if (specials && rows >= 17 && r == 5 && i % cols == 0) v = INFINITY;
    if (dt == HLO_F32) ((float *)data)[i] = (float)v;
    else elem_set_f64(dt, data, i, v);
  }
}

static double get(hlo_dtype dt, const void *data, int64_t i) {
  return dt == HLO_F32 ? ((const float *)data)[i] : elem_get_f64(dt, data, i);
}

static hlo_status run(hlo_module *mod, hlo_backend_kind be, bool check,
                      const hlo_buffer_view *args, int nargs, hlo_buffer ***out) {
  hlo_compile_options o;
  memset(&o, 0, sizeof o);
  o.backend = be;
  o.check = check;
  hlo_executable *e = NULL;
  hlo_status st = hlo_executable_compile(mod, NULL, &o, &e);
  if (!st) st = hlo_executable_run(e, args, nargs, out);
  hlo_executable_destroy(e);
  return st;
}

static int compiler = -1; /* -1 unknown, 0 none (skipped), 1 yes */

/* One case: fusion shape asserted, then run on the CPU and compared. */
static void row_case(prog_kind kind, int64_t rows, int64_t cols, hlo_dtype dt) {
  const char *ty = dt == HLO_F32 ? "f32" : "bf16";
  static char text[8192];
  program(kind, rows, cols, ty, text, sizeof text);
  char what[96];
  snprintf(what, sizeof what, "%s %lldx%lld %s",
           kind == SOFTMAX ? "softmax" : kind == LAYERNORM ? "layernorm" : "rmsnorm",
           (long long)rows, (long long)cols, ty);
  kernel *k = row_kernel(text);
  if (!k) printf("  %s: no row kernel\n", what);
  if (k) {
    uint32_t want_stages = kind == RMSNORM ? 2 : 3;
    if (k->num_stages != want_stages) printf("  %s: %u stages\n", what, k->num_stages);
    CHECK_EQ_INT(k->num_stages, want_stages);
    for (uint32_t s = 0; s + 1 < k->num_stages; s++) CHECK_EQ_INT(k->stages[s].kind, KSTAGE_REDUCE);
    CHECK_EQ_INT(k->stages[k->num_stages - 1].kind, KSTAGE_MAP);
    CHECK_EQ_INT(k->num_reduce_dims, 1);
    CHECK_EQ_INT(kernel_num_tiles(k), rows);
    /* softmax keeps exp(x - max) in a temporary: computed once (a row of
     * one element computes it once per row in each stage instead) */
    bool temp = kind == SOFTMAX && cols > 1;
    if (kind == SOFTMAX && k->num_temps != (uint32_t)temp)
      printf("  %s: %u temporaries\n", what, k->num_temps);
    CHECK_EQ_INT(k->num_temps, (temp ? 1 : 0));
    uint32_t exps = 0;
    for (uint32_t i = 0; i < k->num_body; i++)
      exps += k->body[i].kind == KI_OP && k->body[i].op == OP_EXPONENTIAL;
    if (kind == SOFTMAX) CHECK_EQ_INT(exps, (temp ? 1 : 2));
    int64_t r = 0;
    CHECK(kernel_tiles_rows(k, 0, &r) && r == 1);
    CHECK(kernel_tiles_rows(k, k->num_inputs, &r) && r == 1);
    CHECK(!kernel_check_schedule(k));
    kernel_destroy(k);
  }
  if (compiler == 0) return;
  hlo_module *mod = NULL;
  hlo_status st = hlo_module_parse("row.mlir", text, strlen(text), &mod);
  CHECK(!st);
  int nargs = kind == LAYERNORM ? 2 : 1;
  int64_t dims[2] = {rows, cols}, gdims[1] = {cols};
  size_t es = hlo_dtype_size(dt);
  void *x = malloc((size_t)(rows * cols) * es), *g = malloc((size_t)cols * es);
  fill(dt, x, rows, cols, kind == SOFTMAX);
  fill(dt, g, 1, cols, false);
  hlo_buffer_view args[2] = {{dt, 2, dims, x}, {dt, 1, gdims, g}};
  hlo_buffer **want = NULL, **got = NULL;
  if (!st) st = run(mod, HLO_BACKEND_INTERP, false, args, nargs, &want);
  CHECK(!st);
  hlo_status_free(st);
  /* f32 with `check` (each compiled step beside the interpreter, at its
   * tolerance); bf16 without: the fused kernel keeps the row's sums in f32
   * where the interpreter rounds each partial sum to bf16, and LayerNorm's
   * x - mean amplifies that difference past the per-element tolerance */
  st = mod ? run(mod, HLO_BACKEND_CPU, dt == HLO_F32, args, nargs, &got) : NULL;
  if (st && hlo_status_code_of(st) == HLO_UNAVAILABLE) {
    printf("  skipped: no C compiler (%s)\n", hlo_status_message(st));
    compiler = 0;
  } else {
    if (st) hlo_status_print(st, stderr);
    CHECK(!st);
    compiler = 1;
  }
  if (!st && got && want) {
    const void *a = hlo_buffer_data(got[0]), *b = hlo_buffer_data(want[0]);
    int64_t bad = 0;
    /* f32: 1e-5 relative; bf16: 2 ULP relative or 2^-6 of the largest
     * output (the sums' rounding, see above) */
    double rel = dt == HLO_F32 ? 1e-5 : 2 * 0.0078125, scale = 0;
    for (int64_t i = 0; i < rows * cols; i++)
      if (isfinite(get(dt, b, i))) scale = fmax(scale, fabs(get(dt, b, i)));
    double abs_tol = dt == HLO_F32 ? 1e-6 : scale / 64;
    for (int64_t i = 0; i < rows * cols; i++) {
      double u = get(dt, a, i), v = get(dt, b, i);
      bool ok = isnan(v) ? isnan(u) : u == v || fabs(u - v) <= rel * fabs(v) ||
                                          fabs(u - v) <= abs_tol;
      if (!ok && bad++ < 3)
        printf("  %s: element %lld: got %.9g, want %.9g\n", what, (long long)i, u, v);
    }
    CHECK_EQ_INT(bad, 0);
  }
  hlo_status_free(st);
  for (int i = 0; got && i < 1; i++) hlo_buffer_destroy(got[i]);
  for (int i = 0; want && i < 1; i++) hlo_buffer_destroy(want[i]);
  free(got);
  free(want);
  free(x);
  free(g);
  hlo_module_destroy(mod);
}

static const int64_t k_rows[] = {1, 3, 17, 1000};
static const int64_t k_cols[] = {1, 5, 33, 257};

TEST(softmax_is_one_row_kernel_and_matches_the_interpreter) {
  for (int t = 0; t < 2; t++)
    for (size_t i = 0; i < 4; i++) row_case(SOFTMAX, k_rows[i], k_cols[(i + t) % 4], t ? HLO_BF16 : HLO_F32);
  row_case(SOFTMAX, 17, 1024, HLO_F32); /* lanes, a long row */
}

TEST(layernorm_is_one_row_kernel_and_matches_the_interpreter) {
  for (int t = 0; t < 2; t++)
    for (size_t i = 0; i < 4; i++) row_case(LAYERNORM, k_rows[i], k_cols[(i + 1 + t) % 4], t ? HLO_BF16 : HLO_F32);
}

TEST(rmsnorm_is_one_row_kernel_and_matches_the_interpreter) {
  for (int t = 0; t < 2; t++)
    for (size_t i = 0; i < 4; i++) row_case(RMSNORM, k_rows[i], k_cols[(i + 2 + t) % 4], t ? HLO_BF16 : HLO_F32);
}

/* llama's masked softmax: scores [2, 3, 5, 5] masked by a causal mask of two
 * iotas, softmax over the last dim, the result reshaped to [6, 5, 5] for the
 * next batched dot. ONE row kernel: the mask recomputed inside (one input,
 * no iota buffers), the divide its last stage, ONE output of the merged
 * shape (stored through an affine map); it matches the interpreter. */
TEST(masked_softmax_with_merging_reshape_is_one_row_kernel) {
  const char *text =
      "func.func @main(%x: tensor<2x3x5x5xf32>) -> tensor<6x5x5xf32> {\n"
      "  %ninf = stablehlo.constant dense<0xFF800000> : tensor<f32>\n"
      "  %zero = stablehlo.constant dense<0.0> : tensor<f32>\n"
      "  %big = stablehlo.constant dense<-1.0e+30> : tensor<2x3x5x5xf32>\n"
      "  %i0 = stablehlo.iota dim = 0 : tensor<5x5xi32>\n"
      "  %i1 = stablehlo.iota dim = 1 : tensor<5x5xi32>\n"
      "  %c = stablehlo.compare GE, %i0, %i1, SIGNED : (tensor<5x5xi32>, tensor<5x5xi32>) -> tensor<5x5xi1>\n"
      "  %cb = stablehlo.broadcast_in_dim %c, dims = [2, 3] : (tensor<5x5xi1>) -> tensor<2x3x5x5xi1>\n"
      "  %xm = stablehlo.select %cb, %x, %big : tensor<2x3x5x5xi1>, tensor<2x3x5x5xf32>\n"
      "  %m = stablehlo.reduce(%xm init: %ninf) applies stablehlo.maximum across dimensions = [3] : (tensor<2x3x5x5xf32>, tensor<f32>) -> tensor<2x3x5xf32>\n"
      "  %mb = stablehlo.broadcast_in_dim %m, dims = [0, 1, 2] : (tensor<2x3x5xf32>) -> tensor<2x3x5x5xf32>\n"
      "  %d = stablehlo.subtract %xm, %mb : tensor<2x3x5x5xf32>\n"
      "  %e = stablehlo.exponential %d : tensor<2x3x5x5xf32>\n"
      "  %s = stablehlo.reduce(%e init: %zero) applies stablehlo.add across dimensions = [3] : (tensor<2x3x5x5xf32>, tensor<f32>) -> tensor<2x3x5xf32>\n"
      "  %sb = stablehlo.broadcast_in_dim %s, dims = [0, 1, 2] : (tensor<2x3x5xf32>) -> tensor<2x3x5x5xf32>\n"
      "  %r = stablehlo.divide %e, %sb : tensor<2x3x5x5xf32>\n"
      "  %p = stablehlo.reshape %r : (tensor<2x3x5x5xf32>) -> tensor<6x5x5xf32>\n"
      "  return %p : tensor<6x5x5xf32>\n}\n";
  kernel *k = row_kernel(text);
  CHECK(k != NULL);
  if (k) {
    CHECK_EQ_INT(k->num_inputs, 1);
    CHECK_EQ_INT(k->num_outputs, 1);
    CHECK_EQ_INT(k->num_stages, 3);
    CHECK_EQ_INT(k->stages[k->num_stages - 1].kind, KSTAGE_MAP);
    CHECK_EQ_INT(k->outputs[0].buf.rank, 3);
    CHECK_EQ_INT(k->outputs[0].buf.dims[0], 6);
    CHECK_EQ_INT(kernel_num_tiles(k), 30);
    CHECK(!kernel_check_schedule(k));
    kernel_destroy(k);
  }
  if (compiler == 0) return;
  hlo_module *mod = NULL;
  hlo_status st = hlo_module_parse("masked.mlir", text, strlen(text), &mod);
  CHECK(!st);
  int64_t dims[4] = {2, 3, 5, 5};
  float x[150];
  fill(HLO_F32, x, 30, 5, false);
  hlo_buffer_view args[1] = {{HLO_F32, 4, dims, x}};
  hlo_buffer **want = NULL, **got = NULL;
  if (!st) st = run(mod, HLO_BACKEND_INTERP, false, args, 1, &want);
  CHECK(!st);
  hlo_status_free(st);
  st = mod ? run(mod, HLO_BACKEND_CPU, true, args, 1, &got) : NULL;
  if (st && hlo_status_code_of(st) == HLO_UNAVAILABLE) {
    printf("  skipped: no C compiler (%s)\n", hlo_status_message(st));
  } else {
    if (st) hlo_status_print(st, stderr);
    CHECK(!st);
  }
  if (!st && got && want) {
    const float *a = hlo_buffer_data(got[0]), *b = hlo_buffer_data(want[0]);
    int64_t bad = 0, zeros = 0;
    for (int64_t i = 0; i < 150; i++) {
      zeros += b[i] == 0.0f; /* the masked upper triangle: 10 per 5x5 */
      if (!(fabsf(a[i] - b[i]) <= 1e-6f + 1e-5f * fabsf(b[i])) && bad++ < 3)
        printf("  masked softmax: element %lld: got %.9g, want %.9g\n", (long long)i, a[i], b[i]);
    }
    CHECK_EQ_INT(bad, 0);
    CHECK_EQ_INT(zeros, 60);
  }
  hlo_status_free(st);
  if (got) hlo_buffer_destroy(got[0]);
  if (want) hlo_buffer_destroy(want[0]);
  free(got);
  free(want);
  hlo_module_destroy(mod);
}

TEST_MAIN()
