/* test_fusion.c — hlo.fusion and the fusion pass (src/passes/fusion.c):
 * the verifier's checks of hlo.fusion (src/ir/verify_fusion.c), the
 * fusible-op table (fusion_op_fusible), and that every fusion the CPU
 * pipeline makes on the models of ../shared/models is one the code
 * generator can lower (lower_fusion succeeds on its body). The rewrites are
 * checked by tests/passes/fusion*.mlir and the semantics (bit-exact on the
 * interpreter) by test_passes_oracle.c. */
#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "codegen/lower_fusion.h"
#include "ir/ir.h"
#include "parse/parse.h"
#include "passes/pass_manager.h"
#include "passes/pass_util.h"
#include "support/arena.h"
#include "test.h"
#include "testlib.h"

static hlo_module_ir *parse(const char *text) {
  static hlo_source src;
  src = (hlo_source){"t.mlir", text, strlen(text), 1};
  hlo_module_ir *m = NULL;
  hlo_status st = parse_module(&src, 0, src.len, &m);
  if (st) {
    hlo_status_print(st, stderr);
    hlo_status_free(st);
    return NULL;
  }
  return m;
}

/* Verifies `text`: NULL when it verifies, else whether the message has
 * `want`. */
static bool verify_fails_with(const char *text, const char *want) {
  hlo_module_ir *m = parse(text);
  if (!m) return false;
  hlo_status st = module_verify(m);
  bool ok = st && strstr(hlo_status_message(st), want);
  if (!ok) printf("  verify: got %s, want '%s'\n", st ? hlo_status_message(st) : "ok", want);
  hlo_status_free(st);
  module_free(m);
  return ok;
}

#define FUS_HEAD                                                           \
  "func.func @main(%a: tensor<4xf32>) -> tensor<4xf32> {\n"
#define FUS_TAIL "  return %0 : tensor<4xf32>\n}\n"

TEST(verify_fusion_ok_and_errors) {
  hlo_module_ir *m = parse(FUS_HEAD
      "  %0 = \"hlo.fusion\"(%a) <{kind = \"loop\", name = \"fusion.0\"}> ({\n"
      "  ^bb0(%p: tensor<4xf32>):\n"
      "    %1 = stablehlo.exponential %p : tensor<4xf32>\n"
      "    stablehlo.return %1 : tensor<4xf32>\n"
      "  }) : (tensor<4xf32>) -> tensor<4xf32>\n" FUS_TAIL);
  CHECK(m);
  hlo_status st = m ? module_verify(m) : NULL;
  CHECK(!st);
  hlo_status_free(st);
  module_free(m);
  CHECK(verify_fails_with(FUS_HEAD
      "  %0 = \"hlo.fusion\"(%a) <{kind = \"fast\"}> ({\n"
      "  ^bb0(%p: tensor<4xf32>):\n"
      "    stablehlo.return %p : tensor<4xf32>\n"
      "  }) : (tensor<4xf32>) -> tensor<4xf32>\n" FUS_TAIL, "(ATTR): kind \"fast\""));
  CHECK(verify_fails_with(FUS_HEAD
      "  %0 = \"hlo.fusion\"(%a) ({\n"
      "  ^bb0(%p: tensor<4xf32>):\n"
      "    stablehlo.return %p : tensor<4xf32>\n"
      "  }) : (tensor<4xf32>) -> tensor<4xf32>\n" FUS_TAIL, "requires a string attribute 'kind'"));
  /* reads %a from outside instead of its argument */
  CHECK(verify_fails_with(FUS_HEAD
      "  %0 = \"hlo.fusion\"(%a) <{kind = \"loop\"}> ({\n"
      "  ^bb0(%p: tensor<4xf32>):\n"
      "    %1 = stablehlo.add %p, %a : tensor<4xf32>\n"
      "    stablehlo.return %1 : tensor<4xf32>\n"
      "  }) : (tensor<4xf32>) -> tensor<4xf32>\n" FUS_TAIL, "(C2)"));
  CHECK(verify_fails_with(FUS_HEAD
      "  %0 = \"hlo.fusion\"(%a) <{kind = \"loop\"}> ({\n"
      "  ^bb0(%p: tensor<4xi32>):\n"
      "    %1 = stablehlo.convert %p : (tensor<4xi32>) -> tensor<4xf32>\n"
      "    stablehlo.return %1 : tensor<4xf32>\n"
      "  }) : (tensor<4xf32>) -> tensor<4xf32>\n" FUS_TAIL, "body argument #0 has type"));
  CHECK(verify_fails_with(FUS_HEAD
      "  %0 = \"hlo.fusion\"(%a) <{kind = \"input\"}> ({\n"
      "  ^bb0(%p: tensor<4xf32>):\n"
      "    stablehlo.return %p : tensor<4xf32>\n"
      "  }) : (tensor<4xf32>) -> tensor<4xf32>\n" FUS_TAIL, "(C3)"));
  CHECK(verify_fails_with(FUS_HEAD
      "  %0 = \"hlo.fusion\"(%a) <{kind = \"loop\"}> ({\n"
      "  ^bb0(%p: tensor<4xf32>):\n"
      "    %1 = stablehlo.convert %p : (tensor<4xf32>) -> tensor<4xf64>\n"
      "    stablehlo.return %1 : tensor<4xf64>\n"
      "  }) : (tensor<4xf32>) -> tensor<4xf32>\n" FUS_TAIL, "(C1)"));
}

/* The role of the first op of @main's body in `text`. */
static fusion_role first_role(const char *text) {
  hlo_module_ir *m = parse(text);
  if (!m) return (fusion_role)-1;
  fusion_role r = fusion_op_fusible(m->funcs->body.block.first);
  module_free(m);
  return r;
}

TEST(fusible_table) {
  CHECK_EQ_INT(first_role("func.func @main(%a: tensor<4xf32>) -> tensor<4xf32> {\n"
                          "  %0 = stablehlo.exponential %a : tensor<4xf32>\n"
                          "  return %0 : tensor<4xf32>\n}\n"), FUSION_EXPENSIVE);
  CHECK_EQ_INT(first_role("func.func @main(%a: tensor<4xi32>) -> tensor<4xi32> {\n"
                          "  %0 = stablehlo.add %a, %a : tensor<4xi32>\n"
                          "  return %0 : tensor<4xi32>\n}\n"), FUSION_CHEAP);
  CHECK_EQ_INT(first_role("func.func @main(%a: tensor<4xi32>) -> tensor<4xi32> {\n"
                          "  %0 = stablehlo.divide %a, %a : tensor<4xi32>\n"
                          "  return %0 : tensor<4xi32>\n}\n"), FUSION_EXPENSIVE);
  CHECK_EQ_INT(first_role("func.func @main(%a: tensor<4xf32>) -> tensor<4xf32> {\n"
                          "  %0 = stablehlo.and %a, %a : tensor<4xf32>\n"
                          "  return %0 : tensor<4xf32>\n}\n"), FUSION_NO);
  /* complex and f8 are not kernel element types; dynamic shapes neither */
  CHECK_EQ_INT(first_role("func.func @main(%a: tensor<4xcomplex<f32>>) -> tensor<4xcomplex<f32>> {\n"
                          "  %0 = stablehlo.add %a, %a : tensor<4xcomplex<f32>>\n"
                          "  return %0 : tensor<4xcomplex<f32>>\n}\n"), FUSION_NO);
  CHECK_EQ_INT(first_role("func.func @main(%a: tensor<?xf32>) -> tensor<?xf32> {\n"
                          "  %0 = stablehlo.add %a, %a : tensor<?xf32>\n"
                          "  return %0 : tensor<?xf32>\n}\n"), FUSION_NO);
  CHECK_EQ_INT(first_role("func.func @main(%a: tensor<4xf32>) -> tensor<4xi1> {\n"
                          "  %0 = stablehlo.compare LT, %a, %a, TOTALORDER : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xi1>\n"
                          "  return %0 : tensor<4xi1>\n}\n"), FUSION_NO);
  CHECK_EQ_INT(first_role("func.func @main(%a: tensor<4xf32>) -> tensor<4x4xf32> {\n"
                          "  %0 = stablehlo.broadcast_in_dim %a, dims = [1] : (tensor<4xf32>) -> tensor<4x4xf32>\n"
                          "  return %0 : tensor<4x4xf32>\n}\n"), FUSION_LAYOUT);
  /* a reduce whose init value is not a constant */
  CHECK_EQ_INT(first_role("func.func @main(%a: tensor<3x4xf32>, %c: tensor<f32>) -> tensor<3xf32> {\n"
                          "  %0 = stablehlo.reduce(%a init: %c) applies stablehlo.add across dimensions = [1] : "
                          "(tensor<3x4xf32>, tensor<f32>) -> tensor<3xf32>\n"
                          "  return %0 : tensor<3xf32>\n}\n"), FUSION_NO);
}

/* The reduce of @main (its second op, after the init constant) in `dims`,
 * with `comb` as the combiner. */
static fusion_role reduce_role(const char *dims, const char *rt, const char *comb) {
  char prog[1200];
  snprintf(prog, sizeof prog,
           "func.func @main(%%a: tensor<3x4xf32>) -> tensor<%s> {\n"
           "  %%c = stablehlo.constant dense<0.0> : tensor<f32>\n"
           "  %%0 = stablehlo.reduce(%%a init: %%c) applies stablehlo.%s across dimensions = [%s] : "
           "(tensor<3x4xf32>, tensor<f32>) -> tensor<%s>\n  return %%0 : tensor<%s>\n}\n",
           rt, comb, dims, rt, rt);
  hlo_module_ir *m = parse(prog);
  if (!m) return (fusion_role)-1;
  fusion_role r = fusion_op_fusible(m->funcs->body.block.first->next);
  module_free(m);
  return r;
}

TEST(fusible_reduce) {
  CHECK_EQ_INT(reduce_role("1", "3xf32", "add"), FUSION_REDUCE);
  CHECK_EQ_INT(reduce_role("1", "3xf32", "maximum"), FUSION_REDUCE);
  CHECK_EQ_INT(reduce_role("0, 1", "f32", "multiply"), FUSION_REDUCE);
  CHECK_EQ_INT(reduce_role("0", "4xf32", "add"), FUSION_NO);   /* not trailing */
  CHECK_EQ_INT(reduce_role("1", "3xf32", "subtract"), FUSION_NO); /* not a simple combiner */
}

/* ------------------------------------------- fusions the codegen lowers */

typedef struct lower_tally {
  int fusions, failed;
} lower_tally;

static void lower_all(const hlo_block *b, const char *path, lower_tally *t) {
  for (const hlo_op *op = b->first; op; op = op->next) {
    for (uint32_t r = 0; r < op->num_regions; r++) lower_all(&op->regions[r].block, path, t);
    if (op->opcode != OP_FUSION) continue;
    const hlo_block *body = &op->regions[0].block;
    const hlo_op *ops[4096];
    uint32_t n = 0;
    for (const hlo_op *o = body->first; o && o != body->last && n < 4096; o = o->next) ops[n++] = o;
    const hlo_op *ret = body->last;
    const hlo_value *outs[16];
    uint32_t no = ret->num_operands < 16 ? ret->num_operands : 16;
    for (uint32_t i = 0; i < no; i++) outs[i] = ret->operands[i];
    const hlo_attr *nm = op_attr(op, "name");
    kernel *k = NULL;
    hlo_status st = lower_fusion(ops, n, outs, no, nm ? nm->u.str.s : "fusion", &k);
    t->fusions++;
    if (st) {
      t->failed++;
      printf("  %s: %s cannot be lowered: ", path, nm ? nm->u.str.s : "fusion");
      hlo_status_print(st, stdout);
      hlo_status_free(st);
    }
    kernel_destroy(k);
  }
}

TEST(every_model_fusion_lowers) {
  char dir[600];
  snprintf(dir, sizeof dir, "%s/models", tl_shared_dir());
  DIR *d = opendir(dir);
  if (!d) {
    printf("every_model_fusion_lowers: skipped: no %s (set HLO_SHARED)\n", dir);
    return;
  }
  lower_tally t = {0};
  int models = 0;
  for (struct dirent *e; (e = readdir(d));) {
    if (e->d_name[0] == '.') continue;
    static const char *const suffixes[] = {".mlir", ".cpu.mlir"};
    for (int s = 0; s < 2; s++) {
      char path[1400];
      snprintf(path, sizeof path, "%s/%s/%s%s", dir, e->d_name, e->d_name, suffixes[s]);
      tl_file tf;
      hlo_status st = tl_file_read(path, &tf);
      if (st) {
        hlo_status_free(st);
        tl_file_free(&tf);
        continue;
      }
      hlo_module_ir *m = NULL;
      st = parse_module(&tf.src, 0, tf.src.len, &m);
      if (!st && module_needs_refinement(m, NULL)) {
        printf("  %s: skipped: has dynamic shapes\n", path);
      } else if (!st) {
        pass_pipeline_options po = {.pipeline = PASS_PIPELINE_CPU, .verify_each = true};
        st = pass_pipeline_run(m, &po, NULL);
        if (!st) {
          models++;
          for (const hlo_func *f = m->funcs; f; f = f->next) lower_all(&f->body.block, path, &t);
        }
      }
      if (st) {
        printf("  FAIL %s: ", path);
        hlo_status_print(st, stdout);
        t.failed++;
      }
      hlo_status_free(st);
      module_free(m);
      tl_file_free(&tf);
    }
  }
  closedir(d);
  printf("  models: %d, fusions lowered: %d, failed: %d\n", models, t.fusions - t.failed,
         t.failed);
  CHECK(models >= 17);
  CHECK(t.fusions > 100);
  CHECK_EQ_INT(t.failed, 0);
}

/* The CPU pipeline over one conformance file, then lower_all. */
static void conformance_lower(const char *path, void *ctx) {
  lower_tally *t = ctx;
  tl_file tf;
  hlo_status st = tl_file_read(path, &tf);
  hlo_module_ir *m = NULL;
  if (!st) st = parse_module(&tf.src, 0, tf.src.len, &m);
  if (!st && !module_needs_refinement(m, NULL)) {
    pass_pipeline_options po = {.pipeline = PASS_PIPELINE_CPU, .verify_each = true};
    st = pass_pipeline_run(m, &po, NULL);
    if (st) {
      printf("  FAIL %s: ", path);
      hlo_status_print(st, stdout);
      t->failed++;
    } else {
      for (const hlo_func *f = m->funcs; f; f = f->next) lower_all(&f->body.block, path, t);
    }
  }
  hlo_status_free(st);
  module_free(m);
  tl_file_free(&tf);
}

TEST(every_conformance_fusion_lowers) {
  char dir[600];
  snprintf(dir, sizeof dir, "%s/conformance/testdata", tl_shared_dir());
  DIR *d = opendir(dir);
  if (!d) {
    printf("every_conformance_fusion_lowers: skipped: no %s\n", dir);
    return;
  }
  closedir(d);
  lower_tally t = {0};
  tl_for_each_mlir(dir, false, conformance_lower, &t);
  printf("  conformance testdata: fusions lowered: %d, failed: %d\n", t.fusions - t.failed,
         t.failed);
  CHECK(t.fusions > 1000);
  CHECK_EQ_INT(t.failed, 0);
}

/* The pieces of the pass tests (tests/passes/fusion*.mlir), fused. */
TEST(pass_test_fusions_lower) {
  static const char *const files[] = {"tests/passes/fusion.mlir", "tests/passes/fusion_regions.mlir"};
  lower_tally t = {0};
  for (int i = 0; i < 2; i++) {
    tl_file tf;
    hlo_status st = tl_file_load(files[i], &tf);
    if (st) {
      printf("pass_test_fusions_lower: skipped: %s (run from the repo root)\n",
             hlo_status_message(st));
      hlo_status_free(st);
      tl_file_free(&tf);
      return;
    }
    for (size_t p = 0; p < tf.num_pieces; p++) {
      hlo_module_ir *m = tl_parse_piece(&tf.src, tf.pieces[p].begin, tf.pieces[p].end, &st);
      pass_pipeline_options po = {.pipeline = "fusion", .verify_each = true};
      if (!st) st = pass_pipeline_run(m, &po, NULL);
      if (st) {
        printf("  FAIL %s piece %zu: ", files[i], p);
        hlo_status_print(st, stdout);
        t.failed++;
      } else {
        for (const hlo_func *f = m->funcs; f; f = f->next) lower_all(&f->body.block, files[i], &t);
      }
      hlo_status_free(st);
      st = NULL;
      module_free(m);
    }
    tl_file_free(&tf);
  }
  printf("  tests/passes/fusion*.mlir: fusions lowered: %d, failed: %d\n", t.fusions - t.failed,
         t.failed);
  CHECK(t.fusions >= 20);
  CHECK_EQ_INT(t.failed, 0);
}

/* The fusion pass on a model (after the default pipeline) with allocation
 * N failing, at 300 points over all it makes: out of memory is reported
 * every time, never a crash or a wrong status. */
TEST(fusion_survives_out_of_memory) {
  char path[700];
  snprintf(path, sizeof path, "%s/models/llama_block_f32/llama_block_f32.mlir", tl_shared_dir());
  tl_file tf;
  hlo_status st = tl_file_read(path, &tf);
  if (st) {
    printf("fusion_survives_out_of_memory: skipped: no %s\n", path);
    hlo_status_free(st);
    tl_file_free(&tf);
    return;
  }
  pass_pipeline_options def = {.pipeline = PASS_PIPELINE_DEFAULT};
  pass_pipeline_options fus = {.pipeline = "fusion"};
  long total = 0;
  int bad = 0, points = 300;
  for (int k = -1; k < points; k++) {
    hlo_module_ir *m = tl_parse_piece(&tf.src, 0, tf.len, &st);
    if (!st) st = pass_pipeline_run(m, &def, NULL);
    CHECK(st == NULL);
    if (st) {
      hlo_status_free(st);
      module_free(m);
      break;
    }
    const long big = 1L << 40;
    long n = k < 0 ? big : 1 + (long)((double)k * (double)total / (double)points);
    hlo_fail_alloc_after = n;
    st = pass_pipeline_run(m, &fus, NULL);
    if (k < 0) total = big - hlo_fail_alloc_after;
    hlo_fail_alloc_after = 0;
    if (k < 0 ? st != NULL : (!st || hlo_status_code_of(st) != HLO_RESOURCE_EXHAUSTED)) {
      bad++;
      fprintf(stderr, "allocation %ld of %ld failing gave: %s\n", n, total,
              st ? hlo_status_message(st) : "success");
    }
    hlo_status_free(st);
    module_free(m);
  }
  printf("  llama_block_f32: fusion makes %ld allocations; failing at %d of them: reported "
         "every time\n", total, points);
  CHECK(total > 100);
  CHECK_EQ_INT(bad, 0);
  tl_file_free(&tf);
}

/* A fusion's result keeps the SSA name of the root it replaces:
 * interpreter.print and probes name values by it (conformance
 * interpret/printing.mlir printed "%1 = ..." for "%0 = ..." after fusion). */
TEST(fusion_result_keeps_the_root_name) {
  hlo_module_ir *m = parse("func.func @main(%a: tensor<4xf32>) -> tensor<4xf32> {\n"
                           "  %e = stablehlo.exponential %a : tensor<4xf32>\n"
                           "  %sum = stablehlo.add %e, %a : tensor<4xf32>\n"
                           "  return %sum : tensor<4xf32>\n}\n");
  CHECK(m);
  if (!m) return;
  pass_pipeline_options po = {.pipeline = "fusion", .verify_each = true};
  hlo_status st = pass_pipeline_run(m, &po, NULL);
  CHECK(!st);
  hlo_status_free(st);
  const hlo_op *f = m->funcs->body.block.first;
  CHECK(f && !strcmp(op_name(f->opcode), "hlo.fusion"));
  if (f) CHECK_STR(f->results[0].name, "sum");
  module_free(m);
}

/* Rule 7 (fusion.c): a GELU on a reduce's result, read by a second reduce
 * through a broadcast (moe_layer on the CUDA pipeline, its expert dots
 * made multiply-reduces by dot-strength-reduction). The GELU's last
 * multiply, 0.5 * (1 + tanh(..)) * x, reads both x (the first reduce) and
 * the tanh, neither of which the second reduce's group may take (a reduce
 * is only a root; rule 3 keeps the small tanh out); it stays with them, so
 * the first fusion has the one result, the GELU, not x and the tanh (two
 * buffers of its size live at once: moe_layer's peak 98560 bytes for
 * 73984). The second reduce's rows (32) are not the first's (16) and it
 * reads the GELU transposed (its rows 8x4, not 4x8): no row fusion holds
 * the GELU and the second reduce, or all three. */
static const char k_gelu_reduce[] =
    "func.func @main(%a: tensor<4x8x16xf32>, %b: tensor<8x32xf32>) -> tensor<8x4xf32> {\n"
    "  %z = stablehlo.constant dense<0.0> : tensor<f32>\n"
    "  %s = stablehlo.reduce(%a init: %z) applies stablehlo.add across dimensions = [2] :"
    " (tensor<4x8x16xf32>, tensor<f32>) -> tensor<4x8xf32>\n"
    "  %c1 = stablehlo.constant dense<0.044715> : tensor<4x8xf32>\n"
    "  %c2 = stablehlo.constant dense<0.797884583> : tensor<4x8xf32>\n"
    "  %one = stablehlo.constant dense<1.0> : tensor<4x8xf32>\n"
    "  %half = stablehlo.constant dense<0.5> : tensor<4x8xf32>\n"
    "  %s2 = stablehlo.multiply %s, %s : tensor<4x8xf32>\n"
    "  %s3 = stablehlo.multiply %s2, %s : tensor<4x8xf32>\n"
    "  %t = stablehlo.multiply %c1, %s3 : tensor<4x8xf32>\n"
    "  %u = stablehlo.add %s, %t : tensor<4x8xf32>\n"
    "  %v = stablehlo.multiply %c2, %u : tensor<4x8xf32>\n"
    "  %th = stablehlo.tanh %v : tensor<4x8xf32>\n"
    "  %w = stablehlo.add %one, %th : tensor<4x8xf32>\n"
    "  %h = stablehlo.multiply %half, %w : tensor<4x8xf32>\n"
    "  %g = stablehlo.multiply %s, %h : tensor<4x8xf32>\n"
    "  %gb = stablehlo.broadcast_in_dim %g, dims = [1, 0] : (tensor<4x8xf32>) -> tensor<8x4x32xf32>\n"
    "  %bb = stablehlo.broadcast_in_dim %b, dims = [0, 2] : (tensor<8x32xf32>) -> tensor<8x4x32xf32>\n"
    "  %m = stablehlo.multiply %gb, %bb : tensor<8x4x32xf32>\n"
    "  %o = stablehlo.reduce(%m init: %z) applies stablehlo.add across dimensions = [2] :"
    " (tensor<8x4x32xf32>, tensor<f32>) -> tensor<8x4xf32>\n"
    "  return %o : tensor<8x4xf32>\n}\n";

/* Whether fusion `f`'s body has an op `opc`. */
static bool body_has(const hlo_op *f, hlo_opcode opc) {
  for (const hlo_op *op = f->regions[0].block.first; op; op = op->next)
    if (op->opcode == opc) return true;
  return false;
}

TEST(gelu_stays_in_its_producers_fusion) {
  hlo_module_ir *m = parse(k_gelu_reduce);
  CHECK(m);
  if (!m) return;
  pass_pipeline_options po = {.pipeline = "fusion", .verify_each = true};
  hlo_status st = pass_pipeline_run(m, &po, NULL);
  CHECK(!st);
  hlo_status_free(st);
  int fusions = 0;
  const hlo_op *gelu = NULL, *last = NULL;
  for (const hlo_op *op = m->funcs->body.block.first; op; op = op->next) {
    if (op->opcode != OP_FUSION) continue;
    fusions++;
    if (body_has(op, OP_TANH)) gelu = op;
    else last = op;
  }
  /* the GELU with the first reduce (a row fusion: x is row-level), the
   * broadcast, multiply and second reduce after it */
  CHECK_EQ_INT(fusions, 2);
  CHECK(gelu && last);
  if (gelu && last) {
    CHECK_EQ_INT((int)gelu->num_results, 1);          /* the GELU, not x and tanh */
    CHECK(body_has(gelu, OP_REDUCE));                 /* x's reduce is in it */
    const hlo_op *ret = gelu->regions[0].block.last;  /* its root: x * (0.5 * ..) */
    CHECK(ret && ret->num_operands == 1 && ret->operands[0]->def &&
          ret->operands[0]->def->opcode == OP_MULTIPLY);
    CHECK(!body_has(last, OP_TANH));
    CHECK_EQ_INT((int)last->num_operands, 2);         /* %b and the GELU */
  }
  module_free(m);
}

/* Rule 7 leaves alone what only looks like it: an op read through a
 * broadcast whose operands the consumer's group takes (a multiply of two
 * broadcast rows, each of them also read elsewhere) still joins it. */
TEST(broadcast_operand_chain_still_joins) {
  hlo_module_ir *m = parse(
      "func.func @main(%a: tensor<8xf32>, %b: tensor<8xf32>, %c: tensor<4x8xf32>) -> "
      "(tensor<4xf32>, tensor<8xf32>) {\n"
      "  %z = stablehlo.constant dense<0.0> : tensor<f32>\n"
      "  %e = stablehlo.exponential %a : tensor<8xf32>\n"
      "  %l = stablehlo.log %b : tensor<8xf32>\n"
      "  %p = stablehlo.multiply %e, %l : tensor<8xf32>\n"
      "  %q = stablehlo.add %e, %l : tensor<8xf32>\n"
      "  %pb = stablehlo.broadcast_in_dim %p, dims = [1] : (tensor<8xf32>) -> tensor<4x8xf32>\n"
      "  %m = stablehlo.multiply %pb, %c : tensor<4x8xf32>\n"
      "  %o = stablehlo.reduce(%m init: %z) applies stablehlo.add across dimensions = [1] :"
      " (tensor<4x8xf32>, tensor<f32>) -> tensor<4xf32>\n"
      "  return %o, %q : tensor<4xf32>, tensor<8xf32>\n}\n");
  CHECK(m);
  if (!m) return;
  pass_pipeline_options po = {.pipeline = "fusion", .verify_each = true};
  hlo_status st = pass_pipeline_run(m, &po, NULL);
  CHECK(!st);
  hlo_status_free(st);
  /* exp and log are read by two groups (results of their own fusions
   * anyway): the multiply is recomputed in the reduce's fusion */
  bool joined = false;
  for (const hlo_op *op = m->funcs->body.block.first; op; op = op->next)
    if (op->opcode == OP_FUSION && body_has(op, OP_REDUCE))
      joined = body_has(op, OP_BROADCAST_IN_DIM) && body_has(op, OP_MULTIPLY) &&
               op->regions[0].block.first->opcode != OP_REDUCE;
  CHECK(joined);
  int n = 0;
  for (const hlo_op *op = m->funcs->body.block.first; op; op = op->next)
    if (op->opcode == OP_FUSION && body_has(op, OP_REDUCE))
      for (const hlo_op *x = op->regions[0].block.first; x; x = x->next)
        n += x->opcode == OP_MULTIPLY;
  CHECK_EQ_INT(n, 2); /* %p and %m */
  module_free(m);
}

TEST_MAIN()
