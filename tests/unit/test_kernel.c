/* test_kernel.c — the kernel representation (codegen/kernel.h) and the
 * lowering of fusions into it (codegen/lower_fusion.c), checked on the
 * printed kernel (kernel_print) without compiling anything; the C-style
 * printer with a second, CUDA-like dialect, to show the printer only
 * follows its dialect table. End-to-end runs are in test_cpu_jit.c. */
#include <math.h>
#include <stdio.h>
#include <string.h>
#include "codegen/cstyle.h"
#include "codegen/lower_fusion.h"
#include "test.h"
#include "testlib.h"

/* Parses `text`, lowers every op of @main's body (but the return) with the
 * first returned value as the output. The status is returned; *out_k and
 * the printed kernel (*out_text, malloc'd) are set on success. */
static hlo_status lower_text(const char *text, kernel **out_k, char **out_text) {
  *out_k = NULL;
  *out_text = NULL;
  hlo_source src = tl_source("k.mlir", text);
  hlo_status st = NULL;
  hlo_module_ir *m = tl_parse_piece(&src, 0, strlen(text), &st);
  if (!m) return st;
  hlo_func *f = module_entry(m, NULL);
  const hlo_op *ops[64];
  uint32_t n = 0;
  const hlo_value *outv = NULL;
  for (const hlo_op *op = f->body.block.first; op; op = op->next) {
    if (op->opcode == OP_FUNC_RETURN) outv = op->operands[0];
    else if (n < 64) ops[n++] = op;
  }
  st = lower_fusion(ops, n, &outv, 1, "k", out_k);
  if (!st) {
    strbuf sb;
    sb_init(&sb);
    kernel_print(*out_k, &sb);
    *out_text = sb_take(&sb);
  }
  /* the kernel borrows the module's values and source (buffer.value, loc):
   * the module is freed here, so drop them */
  if (*out_k) {
    memset(&(*out_k)->loc, 0, sizeof (*out_k)->loc);
    for (uint32_t i = 0; i < (*out_k)->num_inputs; i++) (*out_k)->inputs[i].value = NULL;
    for (uint32_t i = 0; i < (*out_k)->num_outputs; i++) (*out_k)->outputs[i].buf.value = NULL;
    for (uint32_t i = 0; i < (*out_k)->num_inputs; i++) (*out_k)->inputs[i].literal = NULL;
  }
  module_free(m);
  return st;
}

#define FN(sig, body) "func.func @main(" sig "{\n" body "}\n"

TEST(layout_ops_compose_into_one_load) {
  kernel *k;
  char *txt;
  hlo_status st = lower_text(
      FN("%x: tensor<4x6xf32>) -> tensor<3x2x5xf32> ",
         "  %0 = stablehlo.transpose %x, dims = [1, 0] : (tensor<4x6xf32>) -> tensor<6x4xf32>\n"
         "  %1 = stablehlo.slice %0 [0:6:2, 1:3] : (tensor<6x4xf32>) -> tensor<3x2xf32>\n"
         "  %2 = stablehlo.broadcast_in_dim %1, dims = [0, 1] : (tensor<3x2xf32>) -> tensor<3x2x5xf32>\n"
         "  %3 = stablehlo.exponential %2 : tensor<3x2x5xf32>\n"
         "  return %3 : tensor<3x2x5xf32>\n"),
      &k, &txt);
  CHECK(!st);
  if (!st) {
    /* out[i, j, b] = exp(x[j + 1, 2 i]): one load, the layout ops gone */
    CHECK(strstr(txt, "%0 = load in0[x1 + 1, 2*x0] : f32\n") != NULL);
    CHECK(strstr(txt, "%1 = exponential %0 : f32\n") != NULL);
    CHECK(k->num_body == 2 && k->num_inputs == 1);
    kernel_affine lin = kernel_map_linear(&k->body[0].map, k->inputs[0].dims);
    CHECK_EQ_INT(lin.offset, 6);
    CHECK_EQ_INT(lin.coeff[0], 2);
    CHECK_EQ_INT(lin.coeff[1], 6);
    CHECK_EQ_INT(lin.coeff[2], 0);
  }
  free(txt);
  kernel_destroy(k);
  hlo_status_free(st);
}

TEST(shared_values_are_computed_once) {
  kernel *k;
  char *txt;
  hlo_status st = lower_text(
      FN("%x: tensor<8xf32>) -> tensor<8xf32> ",
         "  %0 = stablehlo.multiply %x, %x : tensor<8xf32>\n"
         "  %1 = stablehlo.multiply %x, %x : tensor<8xf32>\n"
         "  %2 = stablehlo.add %0, %1 : tensor<8xf32>\n"
         "  %3 = stablehlo.add %2, %0 : tensor<8xf32>\n"
         "  return %3 : tensor<8xf32>\n"),
      &k, &txt);
  CHECK(!st);
  if (!st) CHECK_EQ_INT(k->num_body, 4); /* load, multiply, add, add */
  free(txt);
  kernel_destroy(k);
  hlo_status_free(st);
}

TEST(reshape_maps) {
  kernel *k;
  char *txt;
  /* splitting a dim stays affine per dim */
  hlo_status st = lower_text(
      FN("%x: tensor<24xf32>) -> tensor<4x6xf32> ",
         "  %0 = stablehlo.reshape %x : (tensor<24xf32>) -> tensor<4x6xf32>\n"
         "  %1 = stablehlo.negate %0 : tensor<4x6xf32>\n"
         "  return %1 : tensor<4x6xf32>\n"),
      &k, &txt);
  CHECK(!st);
  if (!st) CHECK(strstr(txt, "load in0[6*x0 + x1]") != NULL);
  free(txt);
  kernel_destroy(k);
  hlo_status_free(st);
  /* merging rows pairwise needs div/mod per dim: a flat map */
  st = lower_text(FN("%x: tensor<4x6xf32>) -> tensor<2x12xf32> ",
                     "  %0 = stablehlo.reshape %x : (tensor<4x6xf32>) -> tensor<2x12xf32>\n"
                     "  return %0 : tensor<2x12xf32>\n"),
                  &k, &txt);
  CHECK(!st);
  if (!st) CHECK(strstr(txt, "load in0[flat 12*x0 + x1]") != NULL);
  free(txt);
  kernel_destroy(k);
  hlo_status_free(st);
  /* ... and a transpose under it is not expressible yet: a located error */
  st = lower_text(FN("%x: tensor<6x4xf32>) -> tensor<2x12xf32> ",
                     "  %0 = stablehlo.transpose %x, dims = [1, 0] : (tensor<6x4xf32>) -> tensor<4x6xf32>\n"
                     "  %1 = stablehlo.reshape %0 : (tensor<4x6xf32>) -> tensor<2x12xf32>\n"
                     "  return %1 : tensor<2x12xf32>\n"),
                  &k, &txt);
  CHECK(st && hlo_status_code_of(st) == HLO_UNIMPLEMENTED);
  if (st) {
    CHECK(strstr(hlo_status_message(st), "stablehlo.transpose") != NULL);
    CHECK(status_loc(st) && status_loc(st)->line == 2);
  }
  free(txt);
  kernel_destroy(k);
  hlo_status_free(st);
}

/* A reshape of a tensor with no elements (a zero dim makes a zero row-major
 * stride): lowered without dividing by it (it crashed with SIGFPE), to a
 * kernel of no tiles. */
TEST(reshape_of_zero_elements) {
  kernel *k;
  char *txt;
  hlo_status st = lower_text(
      FN("%x: tensor<4x0x3x1xf32>) -> tensor<0x2xf32> ",
         "  %0 = stablehlo.reshape %x : (tensor<4x0x3x1xf32>) -> tensor<0xf32>\n"
         "  %1 = stablehlo.exponential %0 : tensor<0xf32>\n"
         "  %2 = stablehlo.broadcast_in_dim %1, dims = [0] : (tensor<0xf32>) -> tensor<0x2xf32>\n"
         "  return %2 : tensor<0x2xf32>\n"),
      &k, &txt);
  CHECK(!st);
  if (!st) {
    CHECK_EQ_INT(kernel_num_tiles(k), 0);
    CHECK(!kernel_check_schedule(k));
    CHECK(!k->body[0].map.flat); /* a flat map would refuse the broadcast */
  }
  free(txt);
  kernel_destroy(k);
  hlo_status_free(st);
}

/* A plain dialect for the reduction test. */
static const cstyle_dialect *plain_dialect(void) {
  static cstyle_dialect d;
  d.name = "plain";
  d.kernel_prefix = "void";
  d.restrict_kw = "restrict";
  d.tile_open = "for (int64_t t = tile_begin; t < tile_end; t++) {";
  d.tile_close = "}";
  d.inf = "INF";
  d.nan = "NAN";
  static const hlo_opcode ops[] = {OP_ADD, OP_SUBTRACT, OP_MULTIPLY, OP_MAXIMUM, OP_MINIMUM};
  static const char *const text[] = {"($0 + $1)", "($0 - $1)", "($0 * $1)", "max($0, $1)", "min($0, $1)"};
  for (int i = 0; i < 5; i++) d.float_ops[ops[i]] = d.int_ops[ops[i]] = text[i];
  return &d;
}

/* Reduction lanes (kernel.h, reduce_lanes): a combiner with an identity
 * on rows of at least 2 L elements gets L = 128 bytes / the accumulator's
 * size partial accumulators (f32 sums accumulate in f64: 16 lanes from
 * -0.0; f32 max: 32 lanes from -inf); short rows and combiners without an
 * identity keep one accumulator; the C holds the lanes' loop. */
TEST(reduction_lanes) {
  static const struct {
    const char *comb, *type, *init;
    int cols;
    uint32_t lanes;
  } cases[] = {
      {"add", "f32", "0.0", 256, 16},     {"maximum", "f32", "0xFF800000", 256, 32},
      {"add", "f32", "0.0", 31, 0},       {"subtract", "f32", "0.0", 256, 0},
      {"multiply", "i8", "1", 256, 64},   {"minimum", "ui64", "7", 64, 16},
  };
  for (size_t c = 0; c < sizeof cases / sizeof *cases; c++) {
    char text[800];
    snprintf(text, sizeof text,
             "func.func @main(%%x: tensor<4x%dx%s>) -> tensor<4x%s> {\n"
             "  %%z = stablehlo.constant dense<%s> : tensor<%s>\n"
             "  %%0 = stablehlo.reduce(%%x init: %%z) applies stablehlo.%s across dimensions = [1] : "
             "(tensor<4x%dx%s>, tensor<%s>) -> tensor<4x%s>\n"
             "  return %%0 : tensor<4x%s>\n}\n",
             cases[c].cols, cases[c].type, cases[c].type, cases[c].init, cases[c].type,
             cases[c].comb, cases[c].cols, cases[c].type, cases[c].type, cases[c].type,
             cases[c].type);
    kernel *k;
    char *txt;
    hlo_status st = lower_text(text, &k, &txt);
    CHECK(!st);
    if (!st) {
      CHECK_EQ_INT(k->sched.reduce_lanes[0], cases[c].lanes);
      CHECK(!kernel_check_schedule(k));
      if (c == 0) CHECK(k->stages[0].identity.f == 0 && signbit(k->stages[0].identity.f));
      if (c == 1) CHECK(isinf(k->stages[0].identity.f) && k->stages[0].identity.f < 0);
      if (c == 5) CHECK_EQ_INT(k->stages[0].identity.i, -1); /* all ones */
      strbuf sb;
      sb_init(&sb);
      hlo_status e = cstyle_emit_kernel(plain_dialect(), k, &sb);
      CHECK(!e);
      hlo_status_free(e);
      CHECK((strstr(sb_cstr(&sb), "accl0[xl]") != NULL) == (cases[c].lanes > 0));
      sb_free(&sb);
      /* lanes need an identity: the schedule check refuses them otherwise */
      if (c == 3) {
        k->sched.reduce_lanes[0] = 8;
        hlo_status bad = kernel_check_schedule(k);
        CHECK(bad != NULL);
        hlo_status_free(bad);
      }
    }
    free(txt);
    kernel_destroy(k);
    hlo_status_free(st);
  }
}

TEST(reduce_kernel) {
  kernel *k;
  char *txt;
  hlo_status st = lower_text(
      FN("%x: tensor<3x4x5xf32>) -> tensor<3xf32> ",
         "  %z = stablehlo.constant dense<0.0> : tensor<f32>\n"
         "  %0 = stablehlo.exponential %x : tensor<3x4x5xf32>\n"
         "  %1 = stablehlo.reduce(%0 init: %z) applies stablehlo.add across dimensions = [1, 2] : (tensor<3x4x5xf32>, tensor<f32>) -> tensor<3xf32>\n"
         "  return %1 : tensor<3xf32>\n"),
      &k, &txt);
  CHECK(!st);
  if (!st) {
    CHECK_EQ_INT(k->num_reduce_dims, 2);
    CHECK_EQ_INT(k->sched.num_thread_dims, 1);
    CHECK_EQ_INT(kernel_num_tiles(k), 3);
    CHECK(strstr(txt, "index_space [3, 4 red, 5 red]") != NULL);
    /* an f32 sum accumulates in f64 (kernel.h, acc_dtype) */
    CHECK_EQ_INT(k->stages[0].acc_dtype, HLO_F64);
    CHECK_EQ_INT(k->num_stages, 2);
    CHECK(strstr(txt, "%c2 = add %c0, %c1 : f64") != NULL);
    CHECK(strstr(txt, "accumulator %c2 in f64") != NULL);
    CHECK(strstr(txt, "row value = reduce(%1) : f32") != NULL);
    CHECK(strstr(txt, "row stage0 : f32") != NULL);
    CHECK(strstr(txt, "out0: tensor<3xf32> at [x0] = %2 (stage1)") != NULL);
  }
  free(txt);
  kernel_destroy(k);
  hlo_status_free(st);
  /* a reduce over a leading dim is not a row reduction: unimplemented */
  st = lower_text(
      FN("%x: tensor<3x4xf32>) -> tensor<4xf32> ",
         "  %z = stablehlo.constant dense<0.0> : tensor<f32>\n"
         "  %1 = stablehlo.reduce(%x init: %z) applies stablehlo.add across dimensions = [0] : (tensor<3x4xf32>, tensor<f32>) -> tensor<4xf32>\n"
         "  return %1 : tensor<4xf32>\n"),
      &k, &txt);
  CHECK(st && hlo_status_code_of(st) == HLO_UNIMPLEMENTED);
  CHECK(st && strstr(hlo_status_message(st), "trailing") != NULL);
  free(txt);
  kernel_destroy(k);
  hlo_status_free(st);
}

TEST(unsupported_ops_and_types_are_located_errors) {
  kernel *k;
  char *txt;
  hlo_status st = lower_text(
      FN("%x: tensor<4x4xf32>) -> tensor<4x4xf32> ",
         "  %0 = stablehlo.dot_general %x, %x, contracting_dims = [1] x [0] : (tensor<4x4xf32>, tensor<4x4xf32>) -> tensor<4x4xf32>\n"
         "  return %0 : tensor<4x4xf32>\n"),
      &k, &txt);
  CHECK(st && hlo_status_code_of(st) == HLO_UNIMPLEMENTED);
  CHECK(st && status_loc(st) && status_loc(st)->line == 2);
  hlo_status_free(st);
  st = lower_text(FN("%x: tensor<4xcomplex<f32>>) -> tensor<4xcomplex<f32>> ",
                     "  %0 = stablehlo.add %x, %x : tensor<4xcomplex<f32>>\n"
                     "  return %0 : tensor<4xcomplex<f32>>\n"),
                  &k, &txt);
  CHECK(st && hlo_status_code_of(st) == HLO_UNIMPLEMENTED);
  CHECK(st && strstr(hlo_status_message(st), "complex<f32>") != NULL);
  hlo_status_free(st);
  /* an output that is an argument is not made by the fusion */
  st = lower_text(FN("%x: tensor<4xf32>) -> tensor<4xf32> ",
                     "  %0 = stablehlo.negate %x : tensor<4xf32>\n"
                     "  return %x : tensor<4xf32>\n"),
                  &k, &txt);
  CHECK(st && hlo_status_code_of(st) == HLO_INVALID_ARGUMENT);
  hlo_status_free(st);
}

TEST(schedule) {
  kernel *k;
  int64_t dims[2] = {3, 10000};
  hlo_status st = kernel_create("s", 2, dims, NULL, &k);
  CHECK(!st);
  if (st) return;
  kernel_schedule_default(k, 0);
  CHECK_EQ_INT(k->sched.num_thread_dims, 2);
  CHECK_EQ_INT(k->sched.tile[0], 1);
  CHECK_EQ_INT(k->sched.tile[1], 4096);
  CHECK_EQ_INT(kernel_num_tiles(k), 9);
  st = kernel_check_schedule(k);
  CHECK(!st);
  k->num_reduce_dims = 1;
  st = kernel_check_schedule(k); /* a split reduction dim */
  CHECK(st && hlo_status_code_of(st) == HLO_INTERNAL);
  hlo_status_free(st);
  kernel_destroy(k);
}

/* A second dialect: the printer follows the table (a CUDA-shaped prefix and
 * tile scope; no text for exponential). */
TEST(dialects) {
  static cstyle_dialect d;
  d.name = "cuda-like";
  d.kernel_prefix = "extern \"C\" __global__ void";
  d.restrict_kw = "__restrict__";
  d.tile_open = "{ const int64_t t = tile_begin + blockIdx.x; if (t < tile_end) {";
  d.tile_close = "}}";
  d.inf = "__int_as_float(0x7f800000)";
  d.nan = "__int_as_float(0x7fc00000)";
  d.float_ops[OP_ADD] = "__fadd_rn($0, $1)";
  kernel *k;
  char *txt;
  hlo_status st = lower_text(FN("%x: tensor<2x3xf32>) -> tensor<2x3xf32> ",
                                "  %0 = stablehlo.add %x, %x : tensor<2x3xf32>\n"
                                "  return %0 : tensor<2x3xf32>\n"),
                             &k, &txt);
  CHECK(!st);
  strbuf sb;
  sb_init(&sb);
  if (!st) st = cstyle_emit_kernel(&d, k, &sb);
  CHECK(!st);
  const char *c = sb_cstr(&sb);
  CHECK(strstr(c, "extern \"C\" __global__ void k(void *const *bufs") != NULL);
  CHECK(strstr(c, "const float *__restrict__ in0") != NULL);
  CHECK(strstr(c, "blockIdx.x") != NULL);
  CHECK(strstr(c, "= __fadd_rn(v0, v0);") != NULL);
  sb_free(&sb);
  free(txt);
  kernel_destroy(k);
  hlo_status_free(st);
  st = lower_text(FN("%x: tensor<2xf32>) -> tensor<2xf32> ",
                     "  %0 = stablehlo.exponential %x : tensor<2xf32>\n"
                     "  return %0 : tensor<2xf32>\n"),
                  &k, &txt);
  CHECK(!st);
  sb_init(&sb);
  if (!st) st = cstyle_emit_kernel(&d, k, &sb);
  CHECK(st && hlo_status_code_of(st) == HLO_UNIMPLEMENTED);
  CHECK(st && strstr(hlo_status_message(st), "stablehlo.exponential") != NULL);
  sb_free(&sb);
  free(txt);
  kernel_destroy(k);
  hlo_status_free(st);
}

/* kernel_tiles_rows (kernel.h): which rows of a buffer tile t touches. */
TEST(tiles_rows) {
  kernel *k;
  char *txt;
  /* elementwise 6x8: tile t = row t of the input and the output */
  hlo_status st = lower_text(FN("%x: tensor<6x8xf32>) -> tensor<6x8xf32> ",
                                "  %0 = stablehlo.negate %x : tensor<6x8xf32>\n"
                                "  return %0 : tensor<6x8xf32>\n"),
                             &k, &txt);
  CHECK(!st);
  int64_t r = 0;
  if (!st) {
    CHECK(kernel_tiles_rows(k, 0, &r) && r == 1);
    CHECK(kernel_tiles_rows(k, 1, &r) && r == 1);
    CHECK(!kernel_tiles_rows(k, 2, &r)); /* no such buffer */
    /* tiles of half a row: no whole rows per tile */
    k->sched.tile[1] = 4;
    CHECK(!kernel_tiles_rows(k, 0, &r));
    /* two rows per tile */
    k->sched.tile[0] = 2;
    k->sched.tile[1] = 8;
    CHECK(kernel_tiles_rows(k, 0, &r) && r == 2);
  }
  free(txt);
  kernel_destroy(k);
  hlo_status_free(st);
  /* a transposed read: tile t reads column t, every row */
  st = lower_text(FN("%x: tensor<8x6xf32>) -> tensor<6x8xf32> ",
                     "  %0 = stablehlo.transpose %x, dims = [1, 0] : (tensor<8x6xf32>) -> tensor<6x8xf32>\n"
                     "  return %0 : tensor<6x8xf32>\n"),
                  &k, &txt);
  CHECK(!st);
  if (!st) {
    CHECK(!kernel_tiles_rows(k, 0, &r));
    CHECK(kernel_tiles_rows(k, 1, &r) && r == 1);
  }
  free(txt);
  kernel_destroy(k);
  hlo_status_free(st);
}

/* Stages (kernel.h): a softmax lowers to REDUCE, REDUCE, MAP with exp kept
 * in a temporary; the schedule check refuses a row value read before its
 * stage. */
TEST(row_stages) {
  kernel *k;
  char *txt;
  hlo_status st = lower_text(
      FN("%x: tensor<4x64xf32>) -> tensor<4x64xf32> ",
         "  %ninf = stablehlo.constant dense<0xFF800000> : tensor<f32>\n"
         "  %zero = stablehlo.constant dense<0.0> : tensor<f32>\n"
         "  %m = stablehlo.reduce(%x init: %ninf) applies stablehlo.maximum across dimensions = [1] : (tensor<4x64xf32>, tensor<f32>) -> tensor<4xf32>\n"
         "  %mb = stablehlo.broadcast_in_dim %m, dims = [0] : (tensor<4xf32>) -> tensor<4x64xf32>\n"
         "  %d = stablehlo.subtract %x, %mb : tensor<4x64xf32>\n"
         "  %e = stablehlo.exponential %d : tensor<4x64xf32>\n"
         "  %s = stablehlo.reduce(%e init: %zero) applies stablehlo.add across dimensions = [1] : (tensor<4x64xf32>, tensor<f32>) -> tensor<4xf32>\n"
         "  %sb = stablehlo.broadcast_in_dim %s, dims = [0] : (tensor<4xf32>) -> tensor<4x64xf32>\n"
         "  %y = stablehlo.divide %e, %sb : tensor<4x64xf32>\n"
         "  return %y : tensor<4x64xf32>\n"),
      &k, &txt);
  CHECK(!st);
  if (!st) {
    CHECK_EQ_INT(k->num_stages, 3);
    CHECK_EQ_INT(k->stages[0].kind, KSTAGE_REDUCE);
    CHECK_EQ_INT(k->stages[1].kind, KSTAGE_REDUCE);
    CHECK_EQ_INT(k->stages[2].kind, KSTAGE_MAP);
    CHECK_EQ_INT(k->stages[1].acc_dtype, HLO_F64);
    CHECK_EQ_INT(k->num_temps, 1);
    CHECK_EQ_INT(k->temps[0].stage, 1);
    CHECK(strstr(txt, "= temp0 : f32") != NULL);
    CHECK(strstr(txt, "= row stage1 : f32") != NULL);
    CHECK(!kernel_check_schedule(k));
    /* the output's row value read by the first stage: refused */
    uint32_t i = k->stages[0].body_begin;
    kinst saved = k->body[i];
    k->body[i] = kinst_make(KI_ROW, HLO_F32);
    k->body[i].input = 1;
    hlo_status bad = kernel_check_schedule(k);
    CHECK(bad && hlo_status_code_of(bad) == HLO_INTERNAL);
    hlo_status_free(bad);
    k->body[i] = saved;
    static cstyle_dialect d;
    d = *plain_dialect();
    d.float_ops[OP_EXPONENTIAL] = "exp$f($0)";
    d.float_ops[OP_DIVIDE] = "($0 / $1)";
    strbuf sb;
    sb_init(&sb);
    hlo_status e = cstyle_emit_kernel(&d, k, &sb);
    CHECK(!e);
    hlo_status_free(e);
    CHECK(strstr(sb_cstr(&sb), "float tmp0[64];") != NULL);
    CHECK(strstr(sb_cstr(&sb), "const float r1 = ((float)acc1);") != NULL);
    sb_free(&sb);
  }
  free(txt);
  kernel_destroy(k);
  hlo_status_free(st);
}

TEST_MAIN()
