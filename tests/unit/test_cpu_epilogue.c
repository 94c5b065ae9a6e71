/* test_cpu_epilogue.c — output fusion of a GEMM and the kernel that reads
 * its rows (runtime/executable_cpu_epilogue.c): which pairs are merged
 * (the statistics' `epilogues`) and that the merged step computes what the
 * interpreter does, on shapes whose rows split unevenly over the threads. */
#include "test.h"
#include "testlib.h"

static const hlo_compile_options cpu_opts = {.backend = HLO_BACKEND_CPU};

/* bias + GELU-like (tanh) + row sum: the mlp block's epilogue */
#define MLP(M, K, N)                                                                            \
  "func.func @main(%x: tensor<" #M "x" #K "xf32>, %w: tensor<" #K "x" #N "xf32>, %b: tensor<" #N \
  "xf32>) -> (tensor<" #M "x" #N "xf32>, tensor<" #M "xf32>) {\n"                               \
  "  %0 = stablehlo.dot_general %x, %w, contracting_dims = [1] x [0] : (tensor<" #M "x" #K      \
  "xf32>, tensor<" #K "x" #N "xf32>) -> tensor<" #M "x" #N "xf32>\n"                            \
  "  %1 = stablehlo.broadcast_in_dim %b, dims = [1] : (tensor<" #N "xf32>) -> tensor<" #M "x" #N \
  "xf32>\n"                                                                                     \
  "  %2 = stablehlo.add %0, %1 : tensor<" #M "x" #N "xf32>\n"                                   \
  "  %3 = stablehlo.tanh %2 : tensor<" #M "x" #N "xf32>\n"                                      \
  "  %4 = stablehlo.multiply %2, %3 : tensor<" #M "x" #N "xf32>\n"                              \
  "  %z = stablehlo.constant dense<0.0> : tensor<f32>\n"                                        \
  "  %5 = stablehlo.reduce(%4 init: %z) applies stablehlo.add across dimensions = [1] : "      \
  "(tensor<" #M "x" #N "xf32>, tensor<f32>) -> tensor<" #M "xf32>\n"                            \
  "  return %4, %5 : tensor<" #M "x" #N "xf32>, tensor<" #M "xf32>\n"                           \
  "}\n"

TEST(gemm_with_elementwise_epilogue) {
  /* rows 1, 3, 7, 64, 129: fewer rows than threads, uneven splits */
  static const char *texts[] = {MLP(1, 16, 8), MLP(3, 16, 40), MLP(7, 33, 5), MLP(64, 32, 96),
                                MLP(129, 64, 72)};
  for (size_t i = 0; i < sizeof texts / sizeof *texts; i++) {
    runtime_cpu_stats cs = {0};
    bool skipped = false;
    CHECK(tl_backends_agree("mlp.mlir", texts[i], &cpu_opts, 0x3, 64, 7 + i, &cs, &skipped));
    if (skipped) return;
    CHECK_EQ_INT(cs.blas, 1);
    CHECK_EQ_INT(cs.epilogues, 1);
  }
}

TEST(not_merged) {
  /* the consumer reads the product transposed (a tile of it is a column):
   * no epilogue; the consumer also needs a value made after the GEMM from
   * the product's own reduction: no epilogue either */
  static const char *text =
      "func.func @main(%x: tensor<6x8xf32>, %w: tensor<8x6xf32>) -> tensor<6x6xf32> {\n"
      "  %0 = stablehlo.dot_general %x, %w, contracting_dims = [1] x [0] : (tensor<6x8xf32>, "
      "tensor<8x6xf32>) -> tensor<6x6xf32>\n"
      "  %1 = stablehlo.transpose %0, dims = [1, 0] : (tensor<6x6xf32>) -> tensor<6x6xf32>\n"
      "  %2 = stablehlo.exponential %1 : tensor<6x6xf32>\n"
      "  return %2 : tensor<6x6xf32>\n"
      "}\n";
  runtime_cpu_stats cs = {0};
  bool skipped = false;
  CHECK(tl_backends_agree("transposed.mlir", text, &cpu_opts, 0x1, 64, 3, &cs, &skipped));
  if (skipped) return;
  CHECK_EQ_INT(cs.blas, 1);
  CHECK_EQ_INT(cs.epilogues, 0);
}

TEST(softmax_rows_after_gemm) {
  /* the attention pattern: scores = q k^T, then a row softmax that reads
   * the scores in two kernels (max, then exp / sum / divide); a second
   * GEMM reads the probabilities */
  static const char *text =
      "func.func @main(%q: tensor<37x16xf32>, %k: tensor<37x16xf32>, %v: tensor<37x16xf32>) -> "
      "tensor<37x16xf32> {\n"
      "  %s = stablehlo.dot_general %q, %k, contracting_dims = [1] x [1] : (tensor<37x16xf32>, "
      "tensor<37x16xf32>) -> tensor<37x37xf32>\n"
      "  %ninf = stablehlo.constant dense<0xFF800000> : tensor<f32>\n"
      "  %m = stablehlo.reduce(%s init: %ninf) applies stablehlo.maximum across dimensions = [1] : "
      "(tensor<37x37xf32>, tensor<f32>) -> tensor<37xf32>\n"
      "  %mb = stablehlo.broadcast_in_dim %m, dims = [0] : (tensor<37xf32>) -> tensor<37x37xf32>\n"
      "  %d = stablehlo.subtract %s, %mb : tensor<37x37xf32>\n"
      "  %e = stablehlo.exponential %d : tensor<37x37xf32>\n"
      "  %z = stablehlo.constant dense<0.0> : tensor<f32>\n"
      "  %t = stablehlo.reduce(%e init: %z) applies stablehlo.add across dimensions = [1] : "
      "(tensor<37x37xf32>, tensor<f32>) -> tensor<37xf32>\n"
      "  %tb = stablehlo.broadcast_in_dim %t, dims = [0] : (tensor<37xf32>) -> tensor<37x37xf32>\n"
      "  %p = stablehlo.divide %e, %tb : tensor<37x37xf32>\n"
      "  %o = stablehlo.dot_general %p, %v, contracting_dims = [1] x [0] : (tensor<37x37xf32>, "
      "tensor<37x16xf32>) -> tensor<37x16xf32>\n"
      "  return %o : tensor<37x16xf32>\n"
      "}\n";
  runtime_cpu_stats cs = {0};
  bool skipped = false;
  CHECK(tl_backends_agree("attention.mlir", text, &cpu_opts, 0x1, 64, 11, &cs, &skipped));
  if (skipped) return;
  CHECK_EQ_INT(cs.blas, 2);
  CHECK(cs.epilogues >= 1);
  /* 37x37x16: one block, nothing to chain (CHAIN_MIN_WORK) */
  CHECK_EQ_INT(cs.gemm_chains, 0);
}

TEST(check_mode_keeps_steps_apart) {
  /* --check compiles without output fusion: each kernel is compared */
  hlo_compile_options o = cpu_opts;
  o.check = true;
  runtime_cpu_stats cs = {0};
  bool skipped = false;
  CHECK(tl_backends_agree("mlp.mlir", MLP(9, 16, 24), &o, 0x3, 64, 5, &cs, &skipped));
  if (skipped) return;
  CHECK_EQ_INT(cs.epilogues, 0);
}

TEST(epilogue_in_place_over_the_product) {
  /* bias + tanh over the 40x64 product, read only by a second GEMM: the
   * epilogue writes over the product's own rows (no second buffer), and
   * the restrict-free kernel still computes the interpreter's values */
  static const char *text =
      "func.func @main(%x: tensor<40x24xf32>, %w: tensor<24x64xf32>, %b: tensor<64xf32>, "
      "%v: tensor<64x8xf32>) -> tensor<40x8xf32> {\n"
      "  %0 = stablehlo.dot_general %x, %w, contracting_dims = [1] x [0] : (tensor<40x24xf32>, "
      "tensor<24x64xf32>) -> tensor<40x64xf32>\n"
      "  %1 = stablehlo.broadcast_in_dim %b, dims = [1] : (tensor<64xf32>) -> tensor<40x64xf32>\n"
      "  %2 = stablehlo.add %0, %1 : tensor<40x64xf32>\n"
      "  %3 = stablehlo.tanh %2 : tensor<40x64xf32>\n"
      "  %4 = stablehlo.dot_general %3, %v, contracting_dims = [1] x [0] : (tensor<40x64xf32>, "
      "tensor<64x8xf32>) -> tensor<40x8xf32>\n"
      "  return %4 : tensor<40x8xf32>\n"
      "}\n";
  runtime_cpu_stats cs = {0};
  bool skipped = false;
  CHECK(tl_backends_agree("inplace.mlir", text, &cpu_opts, 0x1, 64, 13, &cs, &skipped));
  if (skipped) return;
  CHECK_EQ_INT(cs.epilogues, 1);
  CHECK_EQ_INT(cs.gemm_chains, 0); /* 40x64x24: one block, not chained */
  hlo_module *m = NULL;
  hlo_executable *e = NULL;
  hlo_status st = hlo_module_parse("inplace.mlir", text, strlen(text), &m);
  if (!st) st = hlo_executable_compile(m, NULL, &cpu_opts, &e);
  hlo_memory_analysis ma = {0};
  if (!st) st = hlo_executable_memory_analysis(e, &ma);
  CHECK(st == NULL);
  hlo_status_free(st);
  /* the product (10240 bytes) and the tanh share one slot */
  CHECK(ma.temp_bytes >= 40 * 64 * 4 && ma.temp_bytes < 2 * 40 * 64 * 4);
  hlo_executable_destroy(e);
  hlo_module_destroy(m);
}

TEST(product_also_returned) {
  /* the product is a result of the program as well as the kernel's input
   * (logits and their softmax): not merged, both results right */
  static const char *text =
      "func.func @main(%a: tensor<7x5xf32>, %b: tensor<5x3xf32>) -> (tensor<7x3xf32>, "
      "tensor<7x3xf32>) {\n"
      "  %0 = stablehlo.dot_general %a, %b, contracting_dims = [1] x [0] : (tensor<7x5xf32>, "
      "tensor<5x3xf32>) -> tensor<7x3xf32>\n"
      "  %1 = stablehlo.exponential %0 : tensor<7x3xf32>\n"
      "  return %1, %0 : tensor<7x3xf32>, tensor<7x3xf32>\n"
      "}\n";
  runtime_cpu_stats cs = {0};
  bool skipped = false;
  CHECK(tl_backends_agree("returned.mlir", text, &cpu_opts, 0x3, 64, 17, &cs, &skipped));
  if (skipped) return;
  CHECK_EQ_INT(cs.epilogues, 0);
}

/* A batched product ([B..., M, N] scores) and a softmax over its rows: the
 * row kernel runs as the batched GEMM's epilogue, tile b*M + r after row r
 * of matrix b (executable_cpu_epilogue.c, kernel_tiles_flat_rows). */
TEST(softmax_rows_after_batched_gemm) {
  static const char *texts[] = {
      /* [6, 17, 19]: batch 6 */
      "func.func @main(%a: tensor<6x17x8xf32>, %b: tensor<6x8x19xf32>) -> tensor<6x17x19xf32> {\n"
      "  %s = stablehlo.dot_general %a, %b, batching_dims = [0] x [0], contracting_dims = [2] x "
      "[1] : (tensor<6x17x8xf32>, tensor<6x8x19xf32>) -> tensor<6x17x19xf32>\n"
      "  %ninf = stablehlo.constant dense<0xFF800000> : tensor<f32>\n"
      "  %m = stablehlo.reduce(%s init: %ninf) applies stablehlo.maximum across dimensions = [2] "
      ": (tensor<6x17x19xf32>, tensor<f32>) -> tensor<6x17xf32>\n"
      "  %mb = stablehlo.broadcast_in_dim %m, dims = [0, 1] : (tensor<6x17xf32>) -> "
      "tensor<6x17x19xf32>\n"
      "  %d = stablehlo.subtract %s, %mb : tensor<6x17x19xf32>\n"
      "  %e = stablehlo.exponential %d : tensor<6x17x19xf32>\n"
      "  %z = stablehlo.constant dense<0.0> : tensor<f32>\n"
      "  %t = stablehlo.reduce(%e init: %z) applies stablehlo.add across dimensions = [2] : "
      "(tensor<6x17x19xf32>, tensor<f32>) -> tensor<6x17xf32>\n"
      "  %tb = stablehlo.broadcast_in_dim %t, dims = [0, 1] : (tensor<6x17xf32>) -> "
      "tensor<6x17x19xf32>\n"
      "  %p = stablehlo.divide %e, %tb : tensor<6x17x19xf32>\n"
      "  return %p : tensor<6x17x19xf32>\n"
      "}\n",
      /* [2, 3, 33, 40]: two batch dims, scaled by a divide (attention's
       * 1/sqrt(d)), rows longer than the reduction lanes */
      "func.func @main(%a: tensor<2x3x33x16xf32>, %b: tensor<2x3x40x16xf32>) -> "
      "tensor<2x3x33x40xf32> {\n"
      "  %s0 = stablehlo.dot_general %a, %b, batching_dims = [0, 1] x [0, 1], contracting_dims = "
      "[3] x [3] : (tensor<2x3x33x16xf32>, tensor<2x3x40x16xf32>) -> tensor<2x3x33x40xf32>\n"
      "  %c = stablehlo.constant dense<4.0e+00> : tensor<2x3x33x40xf32>\n"
      "  %s = stablehlo.divide %s0, %c : tensor<2x3x33x40xf32>\n"
      "  %ninf = stablehlo.constant dense<0xFF800000> : tensor<f32>\n"
      "  %m = stablehlo.reduce(%s init: %ninf) applies stablehlo.maximum across dimensions = [3] "
      ": (tensor<2x3x33x40xf32>, tensor<f32>) -> tensor<2x3x33xf32>\n"
      "  %mb = stablehlo.broadcast_in_dim %m, dims = [0, 1, 2] : (tensor<2x3x33xf32>) -> "
      "tensor<2x3x33x40xf32>\n"
      "  %d = stablehlo.subtract %s, %mb : tensor<2x3x33x40xf32>\n"
      "  %e = stablehlo.exponential %d : tensor<2x3x33x40xf32>\n"
      "  %z = stablehlo.constant dense<0.0> : tensor<f32>\n"
      "  %t = stablehlo.reduce(%e init: %z) applies stablehlo.add across dimensions = [3] : "
      "(tensor<2x3x33x40xf32>, tensor<f32>) -> tensor<2x3x33xf32>\n"
      "  %tb = stablehlo.broadcast_in_dim %t, dims = [0, 1, 2] : (tensor<2x3x33xf32>) -> "
      "tensor<2x3x33x40xf32>\n"
      "  %p = stablehlo.divide %e, %tb : tensor<2x3x33x40xf32>\n"
      "  return %p : tensor<2x3x33x40xf32>\n"
      "}\n"};
  for (size_t i = 0; i < sizeof texts / sizeof *texts; i++) {
    runtime_cpu_stats cs = {0};
    bool skipped = false;
    CHECK(tl_backends_agree("batched_softmax.mlir", texts[i], &cpu_opts, 0x1, 64, 19 + i, &cs,
                            &skipped));
    if (skipped) return;
    CHECK_EQ_INT(cs.blas, 1);
    CHECK_EQ_INT(cs.epilogues, 1);
  }
}

TEST(epilogues_of_products_with_a_leading_dim_of_one) {
  /* JAX's [1, S, D] activations: the product [1, 37, 40] is an m x n
   * GEMM whose rows are spread over two dims; SiLU(gate) * up over it (an
   * elementwise kernel reading two products) and an RMSNorm-like row kernel
   * over the next product both run as epilogues */
  static const char *text =
      "func.func @main(%x: tensor<1x37x24xf32>, %wg: tensor<24x40xf32>, %wu: tensor<24x40xf32>, "
      "%wd: tensor<40x24xf32>) -> tensor<1x37x24xf32> {\n"
      "  %g = stablehlo.dot_general %x, %wg, contracting_dims = [2] x [0] : (tensor<1x37x24xf32>, "
      "tensor<24x40xf32>) -> tensor<1x37x40xf32>\n"
      "  %u = stablehlo.dot_general %x, %wu, contracting_dims = [2] x [0] : (tensor<1x37x24xf32>, "
      "tensor<24x40xf32>) -> tensor<1x37x40xf32>\n"
      "  %sg = stablehlo.logistic %g : tensor<1x37x40xf32>\n"
      "  %si = stablehlo.multiply %g, %sg : tensor<1x37x40xf32>\n"
      "  %h = stablehlo.multiply %si, %u : tensor<1x37x40xf32>\n"
      "  %d = stablehlo.dot_general %h, %wd, contracting_dims = [2] x [0] : (tensor<1x37x40xf32>, "
      "tensor<40x24xf32>) -> tensor<1x37x24xf32>\n"
      "  %sq = stablehlo.multiply %d, %d : tensor<1x37x24xf32>\n"
      "  %z = stablehlo.constant dense<0.0> : tensor<f32>\n"
      "  %ss = stablehlo.reduce(%sq init: %z) applies stablehlo.add across dimensions = [2] : "
      "(tensor<1x37x24xf32>, tensor<f32>) -> tensor<1x37xf32>\n"
      "  %sb = stablehlo.broadcast_in_dim %ss, dims = [0, 1] : (tensor<1x37xf32>) -> "
      "tensor<1x37x24xf32>\n"
      "  %r = stablehlo.rsqrt %sb : tensor<1x37x24xf32>\n"
      "  %y = stablehlo.multiply %d, %r : tensor<1x37x24xf32>\n"
      "  return %y : tensor<1x37x24xf32>\n"
      "}\n";
  runtime_cpu_stats cs = {0};
  bool skipped = false;
  CHECK(tl_backends_agree("leading_one.mlir", text, &cpu_opts, 0x1, 64, 29, &cs, &skipped));
  if (skipped) return;
  CHECK_EQ_INT(cs.blas, 3);
  CHECK_EQ_INT(cs.epilogues, 2);
}

TEST(batched_not_merged_when_a_tile_spans_matrices) {
  /* a reduction over the batch's rows (dim 1 of [4, 9, 5]): a tile of the
   * kernel reads a column of each matrix, not a row: no epilogue */
  static const char *text =
      "func.func @main(%a: tensor<4x9x3xf32>, %b: tensor<4x3x5xf32>) -> tensor<4x5xf32> {\n"
      "  %s = stablehlo.dot_general %a, %b, batching_dims = [0] x [0], contracting_dims = [2] x "
      "[1] : (tensor<4x9x3xf32>, tensor<4x3x5xf32>) -> tensor<4x9x5xf32>\n"
      "  %e = stablehlo.exponential %s : tensor<4x9x5xf32>\n"
      "  %z = stablehlo.constant dense<0.0> : tensor<f32>\n"
      "  %t = stablehlo.reduce(%e init: %z) applies stablehlo.add across dimensions = [1] : "
      "(tensor<4x9x5xf32>, tensor<f32>) -> tensor<4x5xf32>\n"
      "  return %t : tensor<4x5xf32>\n"
      "}\n";
  runtime_cpu_stats cs = {0};
  bool skipped = false;
  CHECK(tl_backends_agree("batched_cols.mlir", text, &cpu_opts, 0x1, 64, 23, &cs, &skipped));
  if (skipped) return;
  CHECK_EQ_INT(cs.blas, 1);
  CHECK_EQ_INT(cs.epilogues, 0);
}

/* Attention, softmax(q k^T) v, at sizes the GEMM splits over the threads
 * in row blocks: the second product runs on each block of the softmax's
 * rows (gemm_chain), with an epilogue of its own (a bias and tanh) and its
 * result returned; batched over 3 heads as well. */
#define ATTN(B, S, D)                                                                            \
  "func.func @main(%q: tensor<" #B "x" #S "x" #D "xf32>, %k: tensor<" #B "x" #S "x" #D           \
  "xf32>, %v: tensor<" #B "x" #S "x" #D "xf32>, %c: tensor<" #D "xf32>) -> tensor<" #B "x" #S    \
  "x" #D "xf32> {\n"                                                                             \
  "  %s = stablehlo.dot_general %q, %k, batching_dims = [0] x [0], contracting_dims = [2] x "   \
  "[2] : (tensor<" #B "x" #S "x" #D "xf32>, tensor<" #B "x" #S "x" #D "xf32>) -> tensor<" #B    \
  "x" #S "x" #S "xf32>\n"                                                                        \
  "  %ninf = stablehlo.constant dense<0xFF800000> : tensor<f32>\n"                              \
  "  %m = stablehlo.reduce(%s init: %ninf) applies stablehlo.maximum across dimensions = [2] : " \
  "(tensor<" #B "x" #S "x" #S "xf32>, tensor<f32>) -> tensor<" #B "x" #S "xf32>\n"               \
  "  %mb = stablehlo.broadcast_in_dim %m, dims = [0, 1] : (tensor<" #B "x" #S                    \
  "xf32>) -> tensor<" #B "x" #S "x" #S "xf32>\n"                                                 \
  "  %d = stablehlo.subtract %s, %mb : tensor<" #B "x" #S "x" #S "xf32>\n"                       \
  "  %e = stablehlo.exponential %d : tensor<" #B "x" #S "x" #S "xf32>\n"                         \
  "  %z = stablehlo.constant dense<0.0> : tensor<f32>\n"                                        \
  "  %t = stablehlo.reduce(%e init: %z) applies stablehlo.add across dimensions = [2] : "       \
  "(tensor<" #B "x" #S "x" #S "xf32>, tensor<f32>) -> tensor<" #B "x" #S "xf32>\n"               \
  "  %tb = stablehlo.broadcast_in_dim %t, dims = [0, 1] : (tensor<" #B "x" #S                    \
  "xf32>) -> tensor<" #B "x" #S "x" #S "xf32>\n"                                                 \
  "  %p = stablehlo.divide %e, %tb : tensor<" #B "x" #S "x" #S "xf32>\n"                         \
  "  %o = stablehlo.dot_general %p, %v, batching_dims = [0] x [0], contracting_dims = [2] x "   \
  "[1] : (tensor<" #B "x" #S "x" #S "xf32>, tensor<" #B "x" #S "x" #D "xf32>) -> tensor<" #B    \
  "x" #S "x" #D "xf32>\n"                                                                        \
  "  %cb = stablehlo.broadcast_in_dim %c, dims = [2] : (tensor<" #D "xf32>) -> tensor<" #B "x"  \
  #S "x" #D "xf32>\n"                                                                            \
  "  %oc = stablehlo.add %o, %cb : tensor<" #B "x" #S "x" #D "xf32>\n"                           \
  "  %y = stablehlo.tanh %oc : tensor<" #B "x" #S "x" #D "xf32>\n"                               \
  "  return %y : tensor<" #B "x" #S "x" #D "xf32>\n"                                             \
  "}\n"

TEST(chained_gemm_on_the_epilogue_rows) {
  static const char *texts[] = {ATTN(1, 300, 48), ATTN(3, 200, 40), ATTN(1, 5, 3),
                                ATTN(2, 129, 64), ATTN(1, 512, 64)};
  /* the first product's multiply-adds against CHAIN_MIN_WORK (128^3):
   * 300*300*48, 3*200*200*40, 5*5*3 (one block: not chained), 2*129*129*64,
   * 512*512*64; in the last, each block's second product (128x64x512 on
   * two threads) is itself over CPU_GEMM_SPLIT: made inside a block of the
   * split first product, it is one library call (gemm.c, in_split), not
   * split again */
  static const int chained[] = {1, 1, 0, 1, 1};
  for (size_t i = 0; i < sizeof texts / sizeof *texts; i++) {
    runtime_cpu_stats cs = {0};
    bool skipped = false;
    /* exp of scores summed over 48-64 terms: a few hundred ulps from the
     * interpreter's order (1e-4 relative at most, the models' tolerance) */
    CHECK(tl_backends_agree("chain.mlir", texts[i], &cpu_opts, 0x1, 2048, 31 + i, &cs, &skipped));
    if (skipped) return;
    CHECK_EQ_INT(cs.blas, 2);
    CHECK_EQ_INT(cs.epilogues, 2);
    CHECK_EQ_INT(cs.gemm_chains, chained[i]);
  }
}

TEST(not_chained) {
  /* the second product reads the softmax as its right operand (columns,
   * not rows), or needs a value made from the first product's whole
   * (its sum), or has other rows: no chain */
  static const char *texts[] = {
      "func.func @main(%a: tensor<64x32xf32>, %w: tensor<32x64xf32>, %v: tensor<16x64xf32>) -> "
      "tensor<16x64xf32> {\n"
      "  %0 = stablehlo.dot_general %a, %w, contracting_dims = [1] x [0] : (tensor<64x32xf32>, "
      "tensor<32x64xf32>) -> tensor<64x64xf32>\n"
      "  %1 = stablehlo.tanh %0 : tensor<64x64xf32>\n"
      "  %2 = stablehlo.dot_general %v, %1, contracting_dims = [1] x [0] : (tensor<16x64xf32>, "
      "tensor<64x64xf32>) -> tensor<16x64xf32>\n"
      "  return %2 : tensor<16x64xf32>\n"
      "}\n",
      "func.func @main(%a: tensor<64x32xf32>, %w: tensor<32x64xf32>) -> tensor<64x64xf32> {\n"
      "  %0 = stablehlo.dot_general %a, %w, contracting_dims = [1] x [0] : (tensor<64x32xf32>, "
      "tensor<32x64xf32>) -> tensor<64x64xf32>\n"
      "  %1 = stablehlo.tanh %0 : tensor<64x64xf32>\n"
      "  %z = stablehlo.constant dense<0.0> : tensor<f32>\n"
      "  %s = stablehlo.reduce(%0 init: %z) applies stablehlo.add across dimensions = [0] : "
      "(tensor<64x64xf32>, tensor<f32>) -> tensor<64xf32>\n"
      "  %sb = stablehlo.broadcast_in_dim %s, dims = [1] : (tensor<64xf32>) -> tensor<64x64xf32>\n"
      "  %2 = stablehlo.dot_general %1, %sb, contracting_dims = [1] x [0] : (tensor<64x64xf32>, "
      "tensor<64x64xf32>) -> tensor<64x64xf32>\n"
      "  return %2 : tensor<64x64xf32>\n"
      "}\n"};
  for (size_t i = 0; i < sizeof texts / sizeof *texts; i++) {
    runtime_cpu_stats cs = {0};
    bool skipped = false;
    CHECK(tl_backends_agree("no_chain.mlir", texts[i], &cpu_opts, 0x1, 64, 41 + i, &cs,
                            &skipped));
    if (skipped) return;
    CHECK_EQ_INT(cs.gemm_chains, 0);
  }
}

TEST_MAIN()
