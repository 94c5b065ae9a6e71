/* test_passes.c — the pass manager (src/passes/pass_manager.c) and the
 * shared pass machinery: pipeline parsing and its errors, verification after
 * each pass naming the pass that broke the IR, the before/after dumps (read
 * back by the parser and verifier), the report, the use index, the rule
 * table of simplify, and every pass under out-of-memory injection.
 * The passes' rewrites themselves are checked by the .mlir files of tests/passes
 * (tests/suite_passes.sh) and their semantics by test_passes_oracle.c. */
#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "ir/ir.h"
#include "parse/parse.h"
#include "passes/pass_manager.h"
#include "passes/pass_util.h"
#include "passes/use_index.h"
#include "support/arena.h"
#include "test.h"
#include "testlib.h"

static const char *k_prog =
    "func.func @main(%x: tensor<4xf32>, %i: tensor<4xi32>) -> (tensor<4xf32>, tensor<4xi32>) {\n"
    "  %a = call @helper(%x) : (tensor<4xf32>) -> tensor<4xf32>\n"
    "  %z = stablehlo.constant dense<0> : tensor<4xi32>\n"
    "  %b = stablehlo.add %i, %z : tensor<4xi32>\n"
    "  %c = stablehlo.constant dense<[1, 2, 3, 4]> : tensor<4xi32>\n"
    "  %d = stablehlo.multiply %c, %c : tensor<4xi32>\n"
    "  %e = stablehlo.add %b, %d : tensor<4xi32>\n"
    "  %f = stablehlo.add %b, %d : tensor<4xi32>\n"
    "  %g = stablehlo.add %e, %f : tensor<4xi32>\n"
    "  return %a, %g : tensor<4xf32>, tensor<4xi32>\n"
    "}\n"
    "func.func private @helper(%y: tensor<4xf32>) -> tensor<4xf32> {\n"
    "  %0 = chlo.square %y : tensor<4xf32> -> tensor<4xf32>\n"
    "  %1 = stablehlo.negate %0 : tensor<4xf32>\n"
    "  %2 = stablehlo.negate %1 : tensor<4xf32>\n"
    "  return %2 : tensor<4xf32>\n"
    "}\n";

/* ------------------------------------------------------------ pipelines */

TEST(pipeline_names_are_checked) {
  CHECK(pass_pipeline_check(NULL) == NULL);
  CHECK(pass_pipeline_check("inline, dce ,cse") == NULL);
  hlo_status st = pass_pipeline_check("inline,frobnicate,dce");
  CHECK(st != NULL);
  CHECK_EQ_INT(hlo_status_code_of(st), HLO_INVALID_ARGUMENT);
  CHECK(strstr(hlo_status_message(st), "unknown pass 'frobnicate'") != NULL);
  CHECK(strstr(hlo_status_message(st), "constant-fold") != NULL); /* lists the passes */
  hlo_status_free(st);
  st = pass_pipeline_check("inline,,dce");
  CHECK(st && strstr(hlo_status_message(st), "empty pass name"));
  hlo_status_free(st);
  for (uint32_t i = 0; pass_at(i); i++) {
    const pass_info *p = pass_at(i);
    CHECK(pass_lookup(p->name, strlen(p->name)) == p);
    CHECK(p->summary && p->summary[0]);
  }
  CHECK(pass_lookup("dc", 2) == NULL);
}

TEST(default_pipeline_runs_and_reports) {
  hlo_module_ir *m = tl_parse_text("t.mlir", k_prog, 0, NULL);
  CHECK(m != NULL);
  if (!m) return;
  pass_report rep;
  hlo_status st = pass_pipeline_run(m, NULL, &rep);
  CHECK(st == NULL);
  if (st) hlo_status_print(st, stderr);
  hlo_status_free(st);
  CHECK_EQ_INT(rep.n, 7);
  CHECK_STR(rep.stats[0].name, "inline");
  CHECK_STR(rep.stats[rep.n - 1].name, "dce");
  CHECK(rep.stats[0].ops_before == 11); /* 8 in @main, 3 in @helper */
  CHECK(rep.stats[rep.n - 1].ops_after < rep.stats[0].ops_before);
  CHECK(rep.total_ms >= 0);
  for (uint32_t i = 1; i < rep.n; i++) CHECK(rep.stats[i].ops_before == rep.stats[i - 1].ops_after);
  char *text = module_print(m);
  CHECK(text && !strstr(text, "@helper") && !strstr(text, "chlo") && !strstr(text, "negate"));
  /* (c*c) folded, b + 0 gone, e and f merged */
  CHECK(text && strstr(text, "dense<[1, 4, 9, 16]>"));
  CHECK(text && strstr(text, "stablehlo.add %arg1, %c"));
  free(text);
  /* values are numbered for the interpreter */
  hlo_func *f = module_entry(m, NULL);
  CHECK(f && f->num_values > 0);
  FILE *out = tmpfile();
  if (out) {
    pass_report_print(&rep, out);
    CHECK(ftell(out) > 0);
    fclose(out);
  }
  pass_report_free(&rep);
  CHECK(rep.stats == NULL && rep.n == 0);
  module_free(m);
}

/* A pass that breaks the IR: gives the first add of @main a result type of
 * another element type. */
static hlo_status break_ir(hlo_module_ir *m, const hlo_pass_options *o) {
  (void)o;
  hlo_func *f = module_entry(m, NULL);
  for (hlo_op *op = f->body.block.first; op; op = op->next)
    if (op->opcode == OP_ADD) {
      op->results[0].type = type_tensor(&m->arena, HLO_I64, op->results[0].type->rank,
                                        op->results[0].type->dims);
      break;
    }
  return NULL;
}

static hlo_status fail_pass(hlo_module_ir *m, const hlo_pass_options *o) {
  (void)m, (void)o;
  return status_new(HLO_UNIMPLEMENTED, "cannot do this");
}

TEST(verify_after_each_pass_names_the_pass) {
  hlo_module_ir *m = tl_parse_text("t.mlir", k_prog, 0, NULL);
  if (!m) { CHECK(m != NULL); return; }
  static const pass_info breaker = {"breaker", break_ir, "breaks the IR"};
  const pass_info *list[] = {pass_lookup("inline", 6), &breaker, pass_lookup("dce", 3)};
  pass_pipeline_options po = {.pipeline = "inline,breaker,dce", .verify_each = true};
  pass_report rep;
  hlo_status st = pass_run_list(m, &po, list, 3, &rep);
  CHECK(st != NULL);
  if (st) {
    CHECK(strstr(hlo_status_message(st), "after pass 'breaker' (2 of 3)") ==
          hlo_status_message(st));
    CHECK(status_loc(st) && status_loc(st)->line == 4); /* the add that broke */
    hlo_status_free(st);
  }
  CHECK_EQ_INT(rep.n, 2); /* dce did not run */
  pass_report_free(&rep);
  module_free(m);

  /* without verification the broken IR goes through */
  m = tl_parse_text("t.mlir", k_prog, 0, NULL);
  po.verify_each = false;
  st = pass_run_list(m, &po, list, 3, NULL);
  CHECK(st == NULL);
  hlo_status_free(st);
  module_free(m);

  /* a pass's own error gets a note naming it */
  m = tl_parse_text("t.mlir", k_prog, 0, NULL);
  static const pass_info failer = {"failer", fail_pass, "fails"};
  const pass_info *list2[] = {&failer};
  po.pipeline = "failer";
  st = pass_run_list(m, &po, list2, 1, NULL);
  CHECK(st && hlo_status_code_of(st) == HLO_UNIMPLEMENTED);
  if (st) {
    char *buf = NULL;
    size_t len = 0;
    FILE *mf = open_memstream(&buf, &len);
    hlo_status_print(st, mf);
    fclose(mf);
    CHECK(buf && strstr(buf, "in pass 'failer' (1 of 1"));
    free(buf);
  }
  hlo_status_free(st);
  module_free(m);
}

TEST(input_that_does_not_verify_is_reported) {
  hlo_module_ir *m = tl_parse_text("t.mlir",
      "func.func @main(%x: tensor<4xf32>) -> tensor<4xf32> {\n"
      "  %a = stablehlo.add %x, %x : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xi32>\n"
      "  return %x : tensor<4xf32>\n"
      "}\n", 0, NULL);
  if (!m) { CHECK(m != NULL); return; }
  hlo_status st = pass_pipeline_run(m, NULL, NULL);
  CHECK(st != NULL);
  char *buf = NULL;
  size_t len = 0;
  FILE *mf = open_memstream(&buf, &len);
  hlo_status_print(st, mf);
  fclose(mf);
  CHECK(buf && strstr(buf, "does not verify"));
  free(buf);
  hlo_status_free(st);
  module_free(m);
}

/* ---------------------------------------------------------------- dumps */

static char *read_all(const char *path) {
  size_t len;
  return tl_read_file(path, &len);
}

TEST(dumps_read_back) {
  char dir[] = "/tmp/hlo_pm_dumpXXXXXX";
  if (!mkdtemp(dir)) { CHECK(0); return; }
  char sub[64];
  snprintf(sub, sizeof sub, "%s/a/b", dir); /* made on demand */
  hlo_module_ir *m = tl_parse_text("t.mlir", k_prog, 0, NULL);
  if (!m) { CHECK(m != NULL); return; }
  pass_pipeline_options po = {.pipeline = "inline,chlo-legalize,simplify",
                              .verify_each = true, .dump_dir = sub, .first_dump_index = 7};
  pass_report rep;
  hlo_status st = pass_pipeline_run(m, &po, &rep);
  CHECK(st == NULL);
  hlo_status_free(st);
  CHECK_EQ_INT(rep.next_dump_index, 10);
  pass_report_free(&rep);
  static const char *const names[] = {"0007.inline", "0008.chlo-legalize", "0009.simplify"};
  char *prev_after = NULL;
  int files = 0;
  for (int i = 0; i < 3; i++) {
    for (int w = 0; w < 2; w++) {
      char path[256];
      snprintf(path, sizeof path, "%s/%s.%s.mlir", sub, names[i], w ? "after" : "before");
      char *text = read_all(path);
      CHECK(text != NULL);
      if (!text) continue;
      files++;
      hlo_module_ir *back = tl_parse_text(path, text, TL_VERIFY, &st);
      CHECK(st == NULL);
      if (st) hlo_status_print(st, stderr);
      hlo_status_free(st);
      module_free(back);
      if (w == 0 && prev_after) CHECK_STR(text, prev_after); /* before(k) = after(k-1) */
      if (w == 1) {
        free(prev_after);
        prev_after = text;
      } else {
        free(text);
      }
    }
  }
  CHECK_EQ_INT(files, 6);
  /* the last dump is the module */
  char *now = module_print(m);
  CHECK(now && prev_after && strcmp(now, prev_after) == 0);
  free(now);
  free(prev_after);
  module_free(m);
  /* clean up */
  for (int i = 0; i < 3; i++)
    for (int w = 0; w < 2; w++) {
      char path[256];
      snprintf(path, sizeof path, "%s/%s.%s.mlir", sub, names[i], w ? "after" : "before");
      unlink(path);
    }
  char a[64];
  snprintf(a, sizeof a, "%s/a", dir);
  rmdir(sub);
  rmdir(a);
  rmdir(dir);
}

TEST(unwritable_dump_folder_is_an_error) {
  hlo_module_ir *m = tl_parse_text("t.mlir", k_prog, 0, NULL);
  if (!m) { CHECK(m != NULL); return; }
  pass_pipeline_options po = {.pipeline = "dce", .dump_dir = "/proc/version/dumps"};
  hlo_status st = pass_pipeline_run(m, &po, NULL);
  CHECK(st && hlo_status_code_of(st) == HLO_UNAVAILABLE);
  CHECK(st && strstr(hlo_status_message(st), "/proc/version"));
  hlo_status_free(st);
  module_free(m);
}

/* ------------------------------------------------------------ use index */

TEST(use_index_tracks_uses) {
  hlo_module_ir *m = tl_parse_text("t.mlir",
      "func.func @main(%x: tensor<4xf32>, %p: tensor<i1>) -> tensor<4xf32> {\n"
      "  %a = stablehlo.negate %x : tensor<4xf32>\n"
      "  %b = stablehlo.add %a, %a : tensor<4xf32>\n"
      "  %c = \"stablehlo.if\"(%p) ({\n"
      "    stablehlo.return %a : tensor<4xf32>\n"
      "  }, {\n"
      "    stablehlo.return %x : tensor<4xf32>\n"
      "  }) : (tensor<i1>) -> tensor<4xf32>\n"
      "  return %b : tensor<4xf32>\n"
      "}\n", 0, NULL);
  if (!m) { CHECK(m != NULL); return; }
  hlo_func *f = module_entry(m, NULL);
  use_index *ui;
  hlo_status st = use_index_build(f, &ui);
  CHECK(st == NULL);
  if (st) { hlo_status_free(st); module_free(m); return; }
  hlo_op *neg = f->body.block.first, *add = neg->next, *iff = add->next;
  hlo_value *x = &f->body.block.args[0], *a = &neg->results[0];
  CHECK_EQ_INT(use_index_count(ui, a), 3); /* twice by add, once in the region */
  CHECK_EQ_INT(use_index_count(ui, x), 2); /* negate, the else region */
  CHECK(use_index_op_used(ui, add));
  CHECK(!use_index_op_used(ui, iff));
  /* redirect a's uses to x: the IR changes too */
  st = use_index_replace_all(ui, a, x);
  CHECK(st == NULL);
  CHECK_EQ_INT(use_index_count(ui, a), 0);
  CHECK_EQ_INT(use_index_count(ui, x), 5);
  CHECK(add->operands[0] == x && add->operands[1] == x);
  CHECK(iff->regions[0].block.first->operands[0] == x);
  /* erasing the if forgets the uses of both its regions */
  use_index_erase(ui, iff);
  CHECK_EQ_INT(use_index_count(ui, x), 3);
  CHECK(iff->parent == NULL);
  use_index_erase(ui, neg);
  CHECK_EQ_INT(use_index_count(ui, x), 2);
  use_index_free(ui);
  CHECK(module_verify(m) == NULL);
  module_free(m);
}

TEST(ptrmap_put_get_delete) {
  ptrmap pm = {0};
  int keys[1000];
  for (int i = 0; i < 1000; i++) CHECK(ptrmap_put(&pm, &keys[i], &keys[(i + 1) % 1000]));
  CHECK_EQ_INT(pm.n, 1000);
  for (int i = 0; i < 1000; i += 2) ptrmap_del(&pm, &keys[i]);
  CHECK_EQ_INT(pm.n, 500);
  for (int i = 0; i < 1000; i++) {
    CHECK(ptrmap_has(&pm, &keys[i]) == (i % 2 == 1));
    if (i % 2) CHECK(ptrmap_get(&pm, &keys[i]) == &keys[(i + 1) % 1000]);
  }
  for (int i = 0; i < 1000; i += 2) CHECK(ptrmap_put(&pm, &keys[i], NULL));
  CHECK(ptrmap_has(&pm, &keys[0]) && ptrmap_get(&pm, &keys[0]) == NULL);
  ptrmap_free(&pm);
  CHECK(pm.cap == 0);
}

/* ---------------------------------------------------------- simplify */

TEST(simplify_rules_state_their_conditions) {
  uint32_t n = 0;
  const char *name, *valid;
  hlo_opcode op;
  const char *seen[256];
  for (; simplify_rule_info(n, &name, &op, &valid); n++) {
    CHECK(name && name[0] && valid && strlen(valid) > 10);
    CHECK(op_name(op) != NULL);
    for (uint32_t k = 0; k < n && k < 256; k++) CHECK(strcmp(seen[k], name) != 0);
    if (n < 256) seen[n] = name;
  }
  CHECK(n >= 12);
  CHECK(!simplify_rule_info(n, NULL, NULL, NULL));
}

/* ------------------------------------------------------ out of memory */

TEST(every_pass_survives_out_of_memory) {
  /* the default pipeline with allocation N failing, for every N until one
   * run succeeds: each run either succeeds or says it ran out of memory */
  int ran = 0, oom = 0;
  for (long n = 1; n < 20000; n++) {
    hlo_module_ir *m = tl_parse_text("t.mlir", k_prog, 0, NULL);
    if (!m) { CHECK(m != NULL); return; }
    hlo_fail_alloc_after = n;
    hlo_status st = pass_pipeline_run(m, NULL, NULL);
    hlo_fail_alloc_after = 0;
    ran++;
    if (!st) {
      module_free(m);
      break;
    }
    oom++;
    if (hlo_status_code_of(st) != HLO_RESOURCE_EXHAUSTED) {
      fprintf(stderr, "allocation %ld failing gave: %s\n", n, hlo_status_message(st));
      CHECK(hlo_status_code_of(st) == HLO_RESOURCE_EXHAUSTED);
    }
    hlo_status_free(st);
    module_free(m);
  }
  printf("  out of memory at each of the first %d allocations: reported every time\n", oom);
  CHECK(ran > 50 && oom == ran - 1);
}

TEST(pipeline_on_a_model_survives_out_of_memory) {
  /* 600 failure points spread over all the allocations the default
   * pipeline makes on a real program (every one when there are fewer) */
  char path[700];
  snprintf(path, sizeof path, "%s/models/llama_block_f32/llama_block_f32.mlir", tl_shared_dir());
  tl_file tf;
  hlo_status st = tl_file_read(path, &tf);
  if (st) {
    printf("pipeline_on_a_model_survives_out_of_memory: skipped: no %s\n", path);
    hlo_status_free(st);
    tl_file_free(&tf);
    return;
  }
  hlo_module_ir *m = tl_parse_piece(&tf.src, 0, tf.len, &st);
  CHECK(m != NULL);
  const long big = 1L << 40;
  hlo_fail_alloc_after = big;
  st = pass_pipeline_run(m, NULL, NULL);
  long total = big - hlo_fail_alloc_after;
  hlo_fail_alloc_after = 0;
  CHECK(st == NULL);
  hlo_status_free(st);
  module_free(m);
  int bad = 0;
  long points = total < 600 ? total : 600;
  for (long k = 0; k < points; k++) {
    long n = 1 + (long)((double)k * (double)total / (double)points);
    m = tl_parse_piece(&tf.src, 0, tf.len, &st);
    if (!m) break;
    hlo_fail_alloc_after = n;
    st = pass_pipeline_run(m, NULL, NULL);
    hlo_fail_alloc_after = 0;
    if (!st || hlo_status_code_of(st) != HLO_RESOURCE_EXHAUSTED) {
      bad++;
      fprintf(stderr, "allocation %ld of %ld failing gave: %s\n", n, total,
              st ? hlo_status_message(st) : "success");
    }
    hlo_status_free(st);
    module_free(m);
  }
  printf("  llama_block_f32: %ld allocations; failing at %ld of them: reported every time\n",
         total, points);
  CHECK_EQ_INT(bad, 0);
  tl_file_free(&tf);
}

TEST_MAIN()
