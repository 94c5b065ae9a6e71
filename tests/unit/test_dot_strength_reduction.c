/* test_dot_strength_reduction.c — the dot-strength-reduction pass
 * (src/passes/dot_strength_reduction.c): for hand-written dots, (a) the IR
 * after the pass (which dots become broadcast/multiply/reduce, which stay),
 * (b) the interpreter on the rewritten module against the interpreter on
 * the module as written, on random inputs (floats within a few ulps of the
 * largest result, integers exactly), and (c) the CPU backend with the CUDA
 * pipeline (`cuda`: the generated reduce-fusion kernels) against the
 * interpreter; also that the CUDA pipeline, and only it, holds the pass. */
#include <string.h>
#include "passes/pass_manager.h"
#include "passes/passes.h"
#include "test.h"
#include "testlib.h"

#define DOT(LT, RT, OT, DIMS)                                                                   \
  "func.func @main(%a: tensor<" LT ">, %b: tensor<" RT ">) -> tensor<" OT "> {\n"              \
  "  %0 = stablehlo.dot_general %a, %b, " DIMS " : (tensor<" LT ">, tensor<" RT ">) -> tensor<" \
  OT ">\n"                                                                                     \
  "  return %0 : tensor<" OT ">\n"                                                             \
  "}\n"

typedef struct dsr_case {
  const char *name, *text;
  bool rewritten; /* the pass replaces the dot */
  int converts;   /* converts the rewrite makes (bf16/f16/mixed types) */
  bool is_float;  /* compare within ulps (else exactly) */
} dsr_case;

static const dsr_case k_cases[] = {
    {"matmul", DOT("8x16xf32", "16x4xf32", "8x4xf32", "contracting_dims = [1] x [0]"), true, 0,
     true},
    {"batch", DOT("2x8x16xf32", "2x16x4xf32", "2x8x4xf32",
                  "batching_dims = [0] x [0], contracting_dims = [2] x [1]"),
     true, 0, true},
    {"batch_not_leading", DOT("8x3x16xf32", "16x3x4xf32", "3x8x4xf32",
                              "batching_dims = [1] x [1], contracting_dims = [2] x [0]"),
     true, 0, true},
    {"two_contracting", DOT("4x3x5xf32", "3x5x6xf32", "4x6xf32",
                            "contracting_dims = [1, 2] x [0, 1]"),
     true, 0, true},
    {"two_contracting_swapped", DOT("5x4x3xf32", "6x3x5xf32", "4x6xf32",
                                    "contracting_dims = [2, 0] x [1, 2]"),
     true, 0, true},
    {"contracting_first", DOT("16x8xf32", "4x16xf32", "8x4xf32", "contracting_dims = [0] x [1]"),
     true, 0, true},
    {"vector_matrix", DOT("16xf32", "16x4xf32", "4xf32", "contracting_dims = [0] x [0]"), true, 0,
     true},
    {"matrix_vector", DOT("4x16xf32", "16xf32", "4xf32", "contracting_dims = [1] x [0]"), true, 0,
     true},
    {"vector_vector", DOT("32xf32", "32xf32", "f32", "contracting_dims = [0] x [0]"), true, 0,
     true},
    {"outer", DOT("8xf32", "4xf32", "8x4xf32", "contracting_dims = [] x []"), true, 0, true},
    {"outer_bf16", DOT("2x8xbf16", "2x4xbf16", "2x8x4xbf16", "batching_dims = [0] x [0]"), true, 3,
     true},
    {"bf16_f32", DOT("8x16xbf16", "16x4xbf16", "8x4xf32", "contracting_dims = [1] x [0]"), true,
     2, true},
    {"bf16_bf16", DOT("8x16xbf16", "16x4xbf16", "8x4xbf16", "contracting_dims = [1] x [0]"), true,
     3, true},
    {"f16", DOT("2x8x16xf16", "2x16x4xf16", "2x8x4xf16",
                "batching_dims = [0] x [0], contracting_dims = [2] x [1]"),
     true, 3, true},
    {"f64", DOT("8x16xf64", "16x4xf64", "8x4xf64", "contracting_dims = [1] x [0]"), true, 0,
     true},
    {"i32", DOT("8x16xi32", "16x4xi32", "8x4xi32", "contracting_dims = [1] x [0]"), true, 0,
     false},
    {"i8_i32", DOT("8x16xi8", "16x4xi8", "8x4xi32", "contracting_dims = [1] x [0]"), true, 2,
     false},
    {"lstm_like", DOT("4x64xf32", "64x16xf32", "4x16xf32", "contracting_dims = [1] x [0]"), true,
     0, true},
    {"zero_rows", DOT("0x16xf32", "16x4xf32", "0x4xf32", "contracting_dims = [1] x [0]"), true, 0,
     true},
    {"zero_k", DOT("8x0xf32", "0x4xf32", "8x4xf32", "contracting_dims = [1] x [0]"), true, 0,
     true},
    /* 2^18 multiply-adds exactly: still rewritten */
    {"at_threshold", DOT("64x64xf32", "64x64xf32", "64x64xf32", "contracting_dims = [1] x [0]"),
     true, 0, true},
    /* over the threshold (2^21) and over the contraction bound: left alone */
    {"over_threshold",
     DOT("128x128xf32", "128x128xf32", "128x128xf32", "contracting_dims = [1] x [0]"), false, 0,
     true},
    {"long_k", DOT("1x8192xf32", "8192x1xf32", "1x1xf32", "contracting_dims = [1] x [0]"), false,
     0, true},
};

/* Counts the ops of opcode `opc` in `blk` and its regions. */
static int count_ops(const hlo_block *blk, hlo_opcode opc) {
  int n = 0;
  for (const hlo_op *op = blk->first; op; op = op->next) {
    n += op->opcode == opc;
    for (uint32_t r = 0; r < op->num_regions; r++) n += count_ops(&op->regions[r].block, opc);
  }
  return n;
}

/* (a): the IR after the pass. */
static void check_ir(const dsr_case *c) {
  hlo_module_ir *m = tl_parse_text(c->name, c->text, TL_VERIFY, NULL);
  CHECK(m != NULL);
  if (!m) return;
  hlo_status st = pass_dot_strength_reduction(m, NULL);
  if (!st) st = module_verify(m);
  if (st) {
    fprintf(stderr, "%s: ", c->name);
    hlo_status_print(st, stderr);
    hlo_status_free(st);
    CHECK(!"pass or verification failed");
    module_free(m);
    return;
  }
  hlo_func *f = module_entry(m, NULL);
  CHECK(f != NULL);
  if (f) {
    const hlo_block *b = &f->body.block;
    int dots = count_ops(b, OP_DOT_GENERAL), reds = count_ops(b, OP_REDUCE),
        bcs = count_ops(b, OP_BROADCAST_IN_DIM), muls = count_ops(b, OP_MULTIPLY),
        cvs = count_ops(b, OP_CONVERT);
    /* outer products (no contracting dims) need no reduce */
    int want_reds = c->rewritten && !strstr(c->name, "outer");
    if (dots != !c->rewritten || reds != want_reds || bcs != 2 * c->rewritten ||
        muls != c->rewritten || cvs != c->converts)
      fprintf(stderr, "%s: %d dot_general, %d reduce, %d broadcast_in_dim, %d multiply, %d convert\n",
              c->name, dots, reds, bcs, muls, cvs);
    CHECK_EQ_INT(dots, !c->rewritten);
    CHECK_EQ_INT(reds, want_reds);
    CHECK_EQ_INT(bcs, 2 * c->rewritten);
    CHECK_EQ_INT(muls, c->rewritten);
    CHECK_EQ_INT(cvs, c->converts);
  }
  module_free(m);
}

TEST(ir_after_pass) {
  for (size_t i = 0; i < sizeof k_cases / sizeof k_cases[0]; i++) check_ir(&k_cases[i]);
}

/* (b): the interpreter, rewritten against as written. The sum runs in the
 * same order (contracting dims row-major); only the accumulation type may
 * differ from the interpreter's dot (f32 for bf16/f16), hence a few ulps. */
TEST(interpreter_agrees) {
  hlo_compile_options o = {.backend = HLO_BACKEND_INTERP, .passes = "dot-strength-reduction"};
  for (size_t i = 0; i < sizeof k_cases / sizeof k_cases[0]; i++) {
    const dsr_case *c = &k_cases[i];
    bool ok = tl_backends_agree(c->name, c->text, &o, c->is_float ? 1u : 0u, 4, 1000 + i, NULL,
                                NULL);
    if (!ok) fprintf(stderr, "  (interpreter, %s)\n", c->name);
    CHECK(ok);
  }
}

/* (c): the CPU backend with the CUDA pipeline against the interpreter: the
 * rewritten dots run as generated reduce-fusion kernels. */
TEST(cpu_backend_cuda_pipeline_agrees) {
  hlo_compile_options o = {.backend = HLO_BACKEND_CPU, .passes = "cuda"};
  for (size_t i = 0; i < sizeof k_cases / sizeof k_cases[0]; i++) {
    const dsr_case *c = &k_cases[i];
    runtime_cpu_stats stats;
    bool skipped = false;
    bool ok = tl_backends_agree(c->name, c->text, &o, c->is_float ? 1u : 0u, 16, 2000 + i,
                                &stats, &skipped);
    if (!ok) fprintf(stderr, "  (cpu backend, cuda pipeline, %s)\n", c->name);
    CHECK(ok);
    /* a rewritten dot is a kernel, never a GEMM or an interpreter step (an
     * empty result needs no kernel at all) */
    if (ok && !skipped && c->rewritten) {
      if (stats.blas || stats.interp)
        fprintf(stderr, "%s: %u blas, %u interpreter thunks\n", c->name, stats.blas, stats.interp);
      CHECK_EQ_INT(stats.blas, 0);
      CHECK_EQ_INT(stats.interp, 0);
    }
    if (ok && !skipped && !c->rewritten) CHECK_EQ_INT(stats.blas, 1);
  }
}

/* A dot with an epilogue: the broadcasts, the multiply, the reduce and the
 * elementwise ops after it become one fusion, and no GEMM is called. */
TEST(one_fusion_with_epilogue) {
  const char *text =
      "func.func @main(%a: tensor<8x16xf32>, %b: tensor<4x16xf32>, %c: tensor<8x4xf32>) -> "
      "tensor<8x4xf32> {\n"
      "  %t = stablehlo.transpose %b, dims = [1, 0] : (tensor<4x16xf32>) -> tensor<16x4xf32>\n"
      "  %0 = stablehlo.dot_general %a, %t, contracting_dims = [1] x [0] : "
      "(tensor<8x16xf32>, tensor<16x4xf32>) -> tensor<8x4xf32>\n"
      "  %1 = stablehlo.add %0, %c : tensor<8x4xf32>\n"
      "  %2 = stablehlo.tanh %1 : tensor<8x4xf32>\n"
      "  return %2 : tensor<8x4xf32>\n"
      "}\n";
  hlo_module_ir *m = tl_parse_text("epilogue.mlir", text, TL_VERIFY, NULL);
  CHECK(m != NULL);
  if (!m) return;
  pass_pipeline_options po = {.pipeline = PASS_PIPELINE_CUDA, .verify_each = true};
  hlo_status st = pass_pipeline_run(m, &po, NULL);
  CHECK(st == NULL);
  if (st) {
    hlo_status_print(st, stderr);
    hlo_status_free(st);
  } else {
    hlo_func *f = module_entry(m, NULL);
    const hlo_block *b = &f->body.block;
    int top = 0, fusions = 0;
    for (const hlo_op *op = b->first; op; op = op->next) {
      top++;
      fusions += op->opcode == OP_FUSION;
    }
    CHECK_EQ_INT(count_ops(b, OP_DOT_GENERAL), 0);
    CHECK_EQ_INT(count_ops(b, OP_TRANSPOSE), 0); /* folded, then absorbed by a broadcast */
    CHECK_EQ_INT(fusions, 1);
    CHECK_EQ_INT(top, 2); /* the fusion and the return */
  }
  module_free(m);
  bool ok = tl_backends_agree("epilogue.mlir", text,
                              &(hlo_compile_options){.backend = HLO_BACKEND_CPU, .passes = "cuda"},
                              1, 16, 7, NULL, NULL);
  CHECK(ok);
}

/* The CUDA pipeline is the CPU one plus this pass; the CPU one lacks it. */
TEST(pipelines) {
  CHECK(strstr(PASS_PIPELINE_CUDA, "dot-strength-reduction") != NULL);
  CHECK(strstr(PASS_PIPELINE_CPU, "dot-strength-reduction") == NULL);
  hlo_status st = pass_pipeline_check(PASS_PIPELINE_CUDA);
  CHECK(st == NULL);
  hlo_status_free(st);
  CHECK(pass_lookup("dot-strength-reduction", strlen("dot-strength-reduction")) != NULL);
}

TEST_MAIN()
