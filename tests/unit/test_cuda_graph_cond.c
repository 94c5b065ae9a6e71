/* test_cuda_graph_cond.c — conditional graph nodes in the runtime
 * (executable_cpu_cond_graph.c, executable_cpu_graph.c) on the CUDA
 * backend's graph_cond_* slots.
 *
 * Everywhere (no GPU needed), on the fake graph device (fake_device.h)
 * with conditional nodes: a loop without a known trip count (Collatz, a
 * scan whose trip count is an argument) one WHILE node, a case and an if
 * one SWITCH node, the shared models with control flow decided on the
 * device, bit-identical to eager runs; nested conditionals fall back, a
 * capture that fails with conditional nodes in it runs eagerly and right;
 * HLO_CUDA_COND_GRAPHS=0, or a backend that cannot make the nodes: not
 * deferred.
 * The driver's conditional nodes on the mock driver:
 * test_cuda_graph_mock.c; graph replay: test_cuda_graph_replay.c. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "backend/backend.h"
#include "passes/pass_manager.h"
#include "fake_device.h"
#include "test.h"
#include "testlib.h"

/* while loops over 0-d values run as one kernel (codegen/lower_while.h;
 * test_loop_kernel.c): off here, to test the conditional graph nodes that
 * run the other loops */
__attribute__((constructor)) static void no_loop_kernels(void) {
  setenv("HLO_LOOP_KERNELS", "0", 1);
}

FAKE_DEVICE_CHECKS()

/* ---- conditional WHILE nodes (loops without a known trip count) ---- */

/* Runs e on the device argument `arg` (its value set to v first, in the
 * same buffer) and checks the two i32 results against want (when set). */
static void collatz_run(gx_exec *e, tensor *arg, int32_t v, int32_t *out) {
  *(int32_t *)arg->data = v;
  hlo_status st = fk.copy(arg->device->ptr, &v, 4);
  CHECK(!st);
  hlo_status_free(st);
  uint8_t *want[2] = {0};
  CHECK_EQ_INT(gx_run(e, &arg, 1, want), 0);
  for (int i = 0; i < 2; i++) {
    if (want[i]) memcpy(&out[i], want[i], 4);
    free(want[i]);
  }
}

/* The loop becomes one conditional WHILE node of the graph: run 1 is
 * deferred and issued call by call (the predicate read after each
 * iteration, as eagerly), run 2 captured (the cond, the node: the body
 * recorded once) and launched, runs 3.. launched without their steps (the
 * same key) whatever the trip count: 111 iterations (27), none (1), 8 (6),
 * 1 (2); results the eager executable's. With HLO_CUDA_COND_GRAPHS=0, or a
 * backend that cannot make the nodes, the old path: not deferred. */
TEST(graph_cond_while_collatz) {
  gx_exec eager, g;
  fk_cond_ok = true;
  fk_faults = 0;
  if (!gx_make_piped(collatz_program, true, NULL, PASS_PIPELINE_CPU, &eager)) return;
  if (!gx_make_piped(collatz_program, false, NULL, PASS_PIPELINE_CPU, &g)) {
    gx_free(&eager);
    return;
  }
  const hlo_type *t = eager.x->f->body.block.args[0].type; /* eager's: it lives to the end */
  tensor *ae = gx_arg(t, 1, true), *ag = gx_arg(t, 1, true);
  static const int32_t inputs[] = {27, 27, 27, 1, 6, 2, 97, 27};
  int graphs0 = fk_graph_launches;
  for (size_t i = 0; i < sizeof inputs / sizeof *inputs; i++) {
    int32_t we[2] = {-1, -1}, wg[2] = {-2, -2};
    collatz_run(&eager, ae, inputs[i], we);
    fk_cond_iters = 0;
    collatz_run(&g, ag, inputs[i], wg);
    CHECK_EQ_INT(wg[0], we[0]);
    CHECK_EQ_INT(wg[1], we[1]);
    if (i >= 1) CHECK_EQ_INT(fk_cond_iters, we[0]); /* the node ran every iteration */
  }
  CHECK_EQ_INT(inputs[0], 27);
  int32_t w27[2];
  collatz_run(&eager, ae, 27, w27);
  CHECK_EQ_INT(w27[0], 111);
  CHECK_EQ_INT(w27[1], 1);
  uint64_t c[5], cc[2];
  gx_counters(&g, c);
  cpu_dev_graph_cond_counters(g.x, cc);
  CHECK_EQ_INT(c[0], 8);  /* every run deferred */
  CHECK_EQ_INT(c[1], 1);  /* one capture */
  CHECK_EQ_INT(c[2], 7);  /* runs 2 to 8: one graph launch each */
  CHECK_EQ_INT(c[3], 0);
  CHECK_EQ_INT(c[4], 6);  /* runs 3 to 8: the same key, steps skipped */
  CHECK_EQ_INT(cc[0], 2); /* runs 1 and 2 recorded the node */
  CHECK_EQ_INT(cc[1], 1);
  CHECK_EQ_INT(fk_graph_launches - graphs0, 7);
  CHECK_EQ_INT(fk_faults, 0);
  /* the graph: the cond's calls, the node's begin, the body, the cond
   * again, the setting of the predicate, the copies back into the carried
   * slots, the end, the copies out */
  int begin = -1, set = -1, end = -1;
  for (int i = 0; i < fk_last_graph_calls; i++) {
    if (fk_rec[i].kind == 6) {
      CHECK(begin < 0);
      begin = i;
    }
    if (fk_rec[i].kind == 7) {
      CHECK(set < 0);
      set = i;
    }
    if (fk_rec[i].kind == 8) {
      CHECK(end < 0);
      end = i;
    }
  }
  CHECK(begin >= 1 && set > begin + 1 && end > set);
  if (begin >= 1 && set > begin && end > set) {
    CHECK(fk_rec[begin].p[0] == fk_rec[set].p[0]); /* one predicate buffer */
    CHECK_EQ_INT(fk_rec[begin].value[0], 1);       /* an i1 */
    CHECK_EQ_INT(fk_rec[begin].value[1], 1);
    /* the cond's kernel before the node and before the setting in it */
    int k0 = begin - 1, k1 = set - 1;
    while (k0 > 0 && fk_rec[k0].kind != 0) k0--;
    CHECK(fk_rec[k0].kind == 0 && fk_rec[k1].kind == 0);
    CHECK(fk_rec[k0].m == fk_rec[k1].m && fk_rec[k0].index == fk_rec[k1].index);
    char shape[64];
    int ns = 0;
    for (int i = 0; i < fk_last_graph_calls && ns + 1 < (int)sizeof shape; i++)
      shape[ns++] = "KGBFgs({)|"[fk_rec[i].kind];
    shape[ns] = 0;
    printf("graph_cond_while_collatz: the graph: %s (K kernel, B copy, ( begin, { set, ) end)\n",
           shape);
    printf("graph_cond_while_collatz: %d calls: %d before the node, %d in its body, %d after\n",
           fk_last_graph_calls, begin, end - begin - 1, fk_last_graph_calls - end - 1);
  }
  tensor_release(ae);
  tensor_release(ag);
  gx_free(&g);
  /* HLO_CUDA_COND_GRAPHS=0: not deferred (the predicate read each iteration) */
  setenv("HLO_CUDA_COND_GRAPHS", "0", 1);
  bool made = gx_make_piped(collatz_program, false, NULL, PASS_PIPELINE_CPU, &g);
  unsetenv("HLO_CUDA_COND_GRAPHS");
  if (made) {
    ag = gx_arg(t, 1, true);
    for (int i = 0; i < 3; i++) {
      int32_t wg[2] = {0, 0};
      collatz_run(&g, ag, 27, wg);
      CHECK_EQ_INT(wg[0], 111);
    }
    gx_counters(&g, c);
    CHECK_EQ_INT(c[0], 0);
    tensor_release(ag);
    gx_free(&g);
  }
  /* a backend that cannot make them now (graph_cond_takes false): the same */
  fk_cond_ok = false;
  if (gx_make_piped(collatz_program, false, NULL, PASS_PIPELINE_CPU, &g)) {
    ag = gx_arg(t, 1, true);
    for (int i = 0; i < 3; i++) {
      int32_t wg[2] = {0, 0};
      collatz_run(&g, ag, 6, wg);
      CHECK_EQ_INT(wg[0], 8);
    }
    gx_counters(&g, c);
    CHECK_EQ_INT(c[0], 0);
    tensor_release(ag);
    gx_free(&g);
  }
  gx_free(&eager);
  CHECK_EQ_INT(fk_live_graphs, 0);
}

/* A scan whose trip count is an argument (lstm_scan without a known trip
 * count: a dynamic_slice, a gemm, kernels and a dynamic_update_slice per
 * iteration) is one graph with a conditional node: runs 2 and 3 launch it,
 * run 3 with other values (5 iterations instead of 4) in the same buffers;
 * results the eager executable's, bit for bit, nothing run outside the
 * graph on run 3. */
TEST(graph_cond_while_scan) {
  char text[4096];
  scan_text(text, sizeof text, 4, true);
  fk_cond_ok = true;
  fk_faults = 0;
  int graphs0 = fk_graph_launches, calls1 = -1;
  uint64_t c[5];
  fk_cond_iters = 0;
  if (!gx_compare_runs(text, 4, 3, c, &calls1)) {
    fk_cond_ok = false;
    return;
  }
  fk_cond_ok = false;
  CHECK_EQ_INT(c[0], 3);
  CHECK_EQ_INT(c[1], 1);
  CHECK_EQ_INT(c[2], 2);
  CHECK_EQ_INT(c[3], 0);
  CHECK_EQ_INT(c[4], 1); /* run 3: the same key as run 2 */
  CHECK_EQ_INT(fk_graph_launches - graphs0, 2);
  CHECK_EQ_INT(fk_eager_calls, 0);
  CHECK_EQ_INT(fk_faults, 0);
  CHECK_EQ_INT(fk_cond_iters, 4 + 5); /* run 2: 4 iterations, run 3: 5 */
  int nodes = 0, body = 0, inside = 0;
  for (int i = 0; i < fk_last_graph_calls; i++) {
    nodes += fk_rec[i].kind == 6;
    inside += fk_rec[i].kind == 6 ? 1 : fk_rec[i].kind == 8 ? -1 : 0;
    body += inside && fk_rec[i].kind < 6;
  }
  CHECK_EQ_INT(nodes, 1);
  CHECK(body >= 4); /* a slice, a gemm, a kernel, an update: recorded once */
  printf("graph_cond_while_scan: %d calls in the graph, %d in the loop's body\n",
         fk_last_graph_calls, body);
}

/* ---- conditional IF / SWITCH nodes (a case / if) ---- */

/* An if (its predicate computed on the device) of two results, both
 * read after it. */
static const char *if_program =
    "func.func @main(%i: tensor<i32>, %x: tensor<5xf32>) -> (tensor<5xf32>, tensor<5xf32>) {\n"
    "  %one = stablehlo.constant dense<1> : tensor<i32>\n"
    "  %p = stablehlo.compare GT, %i, %one, SIGNED : (tensor<i32>, tensor<i32>) -> tensor<i1>\n"
    "  %r:2 = \"stablehlo.if\"(%p) ({\n"
    "    %a = stablehlo.sine %x : tensor<5xf32>\n"
    "    %b = stablehlo.exponential %x : tensor<5xf32>\n"
    "    stablehlo.return %a, %b : tensor<5xf32>, tensor<5xf32>\n"
    "  }, {\n"
    "    %a = stablehlo.cosine %x : tensor<5xf32>\n"
    "    %b = stablehlo.tanh %x : tensor<5xf32>\n"
    "    stablehlo.return %a, %b : tensor<5xf32>, tensor<5xf32>\n"
    "  }) : (tensor<i1>) -> (tensor<5xf32>, tensor<5xf32>)\n"
    "  %s = stablehlo.add %r#0, %r#1 : tensor<5xf32>\n"
    "  return %s, %r#1 : tensor<5xf32>, tensor<5xf32>\n"
    "}\n";

/* Runs `text` on the fake backend (conditional nodes on) and eagerly for
 * each selector of sels (set in the same device buffer); every result
 * bit-identical; c, cc: the graph executable's counters. */
static bool gx_case_runs(const char *text, const int32_t *sels, int n, uint64_t c[5],
                         uint64_t cc[2]) {
  gx_exec eager, g;
  fk_cond_ok = true;
  if (!gx_make_piped(text, true, NULL, PASS_PIPELINE_CPU, &eager)) return false;
  if (!gx_make_piped(text, false, NULL, PASS_PIPELINE_CPU, &g)) {
    gx_free(&eager);
    return false;
  }
  const hlo_func *f = g.x->f;
  tensor *args[2], *eargs[2];
  for (int i = 0; i < 2; i++) {
    args[i] = gx_arg(f->body.block.args[i].type, 31 + (uint64_t)i, true);
    eargs[i] = gx_arg(f->body.block.args[i].type, 31 + (uint64_t)i, true);
  }
  uint32_t nres = f->num_results;
  for (int k = 0; k < n; k++) {
    for (int a = 0; a < 2; a++) {
      tensor *t = a ? eargs[0] : args[0];
      *(int32_t *)t->data = sels[k];
      hlo_status st = fk.copy(t->device->ptr, &sels[k], 4);
      CHECK(!st);
      hlo_status_free(st);
    }
    uint8_t *want[2] = {0};
    CHECK_EQ_INT(gx_run(&eager, eargs, 2, want), 0);
    fk_cond_iters = 0;
    int bad = gx_run(&g, args, 2, want); /* compared with the eager bytes */
    if (bad) printf("  selector %d (run %d): results differ\n", sels[k], k + 1);
    CHECK_EQ_INT(bad, 0);
    if (k >= 1) CHECK_EQ_INT(fk_cond_iters, 1); /* the node chose a branch */
    for (uint32_t i = 0; i < nres; i++) free(want[i]);
  }
  gx_counters(&g, c);
  cpu_dev_graph_cond_counters(g.x, cc);
  for (int i = 0; i < 2; i++) {
    tensor_release(args[i]);
    tensor_release(eargs[i]);
  }
  gx_free(&g);
  gx_free(&eager);
  fk_cond_ok = false;
  return true;
}

/* A case (shared/models/cond_switch with its selector computed on the
 * device) and an if: one graph with a SWITCH node (IF: two branches) whose
 * selector the device reads: run 1 issued call by call (the selector read
 * on the host), run 2 captured, runs 3.. launched without their steps,
 * each with another selector in the same buffer (out of range takes the
 * last branch); results the eager executable's, bit for bit. */
TEST(graph_cond_case_and_if) {
  /* run 1 (call by call) takes branch 2, run 2 (the capture) branch 1 */
  static const int32_t sels[] = {3, 2, 1, 1, 9, -4, 2, 0};
  static const int32_t if_sels[] = {0, 3, 1, 2, 9, -4, 2, 0}; /* run 1: branch 1 */
  int n = (int)(sizeof sels / sizeof *sels);
  uint64_t c[5], cc[2];
  fk_faults = 0;
  int graphs0 = fk_graph_launches;
  if (!gx_case_runs(case_program, sels, n, c, cc)) return;
  CHECK_EQ_INT(c[0], (uint64_t)n);
  CHECK_EQ_INT(c[1], 1);
  CHECK_EQ_INT(c[2], (uint64_t)n - 1);
  CHECK_EQ_INT(c[3], 0);
  CHECK_EQ_INT(c[4], (uint64_t)n - 2);
  CHECK_EQ_INT(cc[0], 2);
  CHECK_EQ_INT(cc[1], 1);
  CHECK_EQ_INT(fk_graph_launches - graphs0, n - 1);
  int nexts = 0, begin = -1;
  for (int i = 0; i < fk_last_graph_calls; i++) {
    nexts += fk_rec[i].kind == 9;
    if (fk_rec[i].kind == 6) begin = i;
  }
  CHECK_EQ_INT(nexts, 2); /* three branches */
  CHECK(begin >= 0 && fk_rec[begin].value[2] == BACKEND_COND_SWITCH && fk_rec[begin].index == 3 &&
        fk_rec[begin].value[3] == 1 && fk_rec[begin].value[0] == 4);
  printf("graph_cond_case_and_if: case: %d calls in one graph\n", fk_last_graph_calls);
  if (!gx_case_runs(if_program, if_sels, n, c, cc)) return;
  CHECK_EQ_INT(c[0], (uint64_t)n);
  CHECK_EQ_INT(c[1], 1);
  CHECK_EQ_INT(c[2], (uint64_t)n - 1);
  CHECK_EQ_INT(c[3], 0);
  CHECK_EQ_INT(cc[1], 1);
  nexts = 0, begin = -1;
  for (int i = 0; i < fk_last_graph_calls; i++) {
    nexts += fk_rec[i].kind == 9;
    if (fk_rec[i].kind == 6) begin = i;
  }
  CHECK_EQ_INT(nexts, 1);
  CHECK(begin >= 0 && fk_rec[begin].value[2] == BACKEND_COND_IF && fk_rec[begin].value[1] == 1);
  CHECK_EQ_INT(fk_faults, 0);
  printf("graph_cond_case_and_if: if: %d calls in one graph\n", fk_last_graph_calls);
}

/* ---- the shared models, the fallbacks ---- */

/* The shared models with control flow decided on the device
 * (while_collatz: a loop without a known trip count, its argument 27;
 * cond_switch: a case; lstm_scan: a scan) on the fake graph backend with
 * conditional nodes: one graph each, captured on run 2, replayed on runs 3
 * and 4; results bit-identical to eager runs. Skipped without ../shared. */
TEST(graph_cond_shared_models) {
  static const char *const models[] = {"while_collatz", "cond_switch", "lstm_scan"};
  const char *shared = getenv("HLO_SHARED");
  for (size_t m = 0; m < sizeof models / sizeof *models; m++) {
    char path[512];
    snprintf(path, sizeof path, "%s/models/%s/%s.mlir", shared ? shared : "../shared", models[m],
             models[m]);
    size_t len = 0;
    char *text = tl_read_file(path, &len);
    if (!text) {
      printf("graph_cond_shared_models: skipped: no %s\n", path);
      return;
    }
    fk_cond_ok = true;
    gx_exec eager, g;
    bool ok = gx_make_piped(text, true, NULL, PASS_PIPELINE_CPU, &eager);
    if (ok && !gx_make_piped(text, false, NULL, PASS_PIPELINE_CPU, &g)) {
      gx_free(&eager);
      ok = false;
    }
    free(text);
    if (!ok) {
      fk_cond_ok = false;
      return;
    }
    const hlo_func *f = g.x->f;
    uint32_t n = f->num_args;
    tensor **args = calloc(n, sizeof *args);
    uint8_t **want = calloc(f->num_results, sizeof *want);
    for (uint32_t i = 0; i < n; i++) {
      args[i] = gx_arg(f->body.block.args[i].type, 41 + i, true);
      if (args[i]->type->dtype == HLO_I32 && args[i]->num_elems == 1) {
        int32_t v = m == 0 ? 27 : 2; /* Collatz of 27: 111 steps; branch 2 */
        *(int32_t *)args[i]->data = v;
        hlo_status st = fk.copy(args[i]->device->ptr, &v, 4);
        CHECK(!st);
        hlo_status_free(st);
      }
    }
    CHECK_EQ_INT(gx_run(&eager, args, n, want), 0);
    fk_faults = 0;
    for (int run = 0; run < 4; run++) CHECK_EQ_INT(gx_run(&g, args, n, want), 0);
    uint64_t c[5], cc[2];
    gx_counters(&g, c);
    cpu_dev_graph_cond_counters(g.x, cc);
    CHECK_EQ_INT(c[0], 4);
    CHECK_EQ_INT(c[1], 1);
    CHECK_EQ_INT(c[2], 3);
    CHECK_EQ_INT(c[3], 0);
    CHECK_EQ_INT(fk_faults, 0);
    if (m < 2) CHECK_EQ_INT(cc[1], 1);
    printf("graph_cond_shared_models: %s: %d calls in one graph, %llu conditional node(s), "
           "bit-identical to eager runs; %s\n", models[m], fk_last_graph_calls,
           (unsigned long long)cc[1], fk_dag_text(g.x));
    for (uint32_t i = 0; i < n; i++) tensor_release(args[i]);
    for (uint32_t i = 0; i < f->num_results; i++) free(want[i]);
    free(args);
    free(want);
    gx_free(&g);
    gx_free(&eager);
    fk_cond_ok = false;
  }
}

/* Conditional nodes are not nested: an if inside a loop without a known
 * trip count keeps the old path (not deferred), with the eager results. */
TEST(graph_cond_nested_falls_back) {
  static const char *text =
      "func.func @main(%n: tensor<i32>, %x: tensor<4xf32>) -> (tensor<i32>, tensor<4xf32>) {\n"
      "  %r:2 = stablehlo.while(%i = %n, %y = %x) : tensor<i32>, tensor<4xf32>\n"
      "    cond {\n"
      "      %z = stablehlo.constant dense<0> : tensor<i32>\n"
      "      %p = stablehlo.compare GT, %i, %z, SIGNED : (tensor<i32>, tensor<i32>) -> tensor<i1>\n"
      "      stablehlo.return %p : tensor<i1>\n"
      "    } do {\n"
      "      %one = stablehlo.constant dense<1> : tensor<i32>\n"
      "      %two = stablehlo.constant dense<2> : tensor<i32>\n"
      "      %m = stablehlo.remainder %i, %two : tensor<i32>\n"
      "      %z = stablehlo.constant dense<0> : tensor<i32>\n"
      "      %e = stablehlo.compare EQ, %m, %z, SIGNED : (tensor<i32>, tensor<i32>) -> tensor<i1>\n"
      "      %v = \"stablehlo.if\"(%e) ({\n"
      "        %a = stablehlo.sine %y : tensor<4xf32>\n"
      "        stablehlo.return %a : tensor<4xf32>\n"
      "      }, {\n"
      "        %a = stablehlo.cosine %y : tensor<4xf32>\n"
      "        stablehlo.return %a : tensor<4xf32>\n"
      "      }) : (tensor<i1>) -> tensor<4xf32>\n"
      "      %j = stablehlo.subtract %i, %one : tensor<i32>\n"
      "      stablehlo.return %j, %v : tensor<i32>, tensor<4xf32>\n"
      "    }\n"
      "  return %r#0, %r#1 : tensor<i32>, tensor<4xf32>\n"
      "}\n";
  gx_exec eager, g;
  fk_cond_ok = true;
  if (!gx_make_piped(text, true, NULL, PASS_PIPELINE_CPU, &eager)) return;
  if (!gx_make_piped(text, false, NULL, PASS_PIPELINE_CPU, &g)) {
    gx_free(&eager);
    return;
  }
  tensor *args[2];
  for (int i = 0; i < 2; i++) args[i] = gx_arg(g.x->f->body.block.args[i].type, 51 + (uint64_t)i, true);
  int32_t v = 5;
  *(int32_t *)args[0]->data = v;
  hlo_status st = fk.copy(args[0]->device->ptr, &v, 4);
  CHECK(!st);
  hlo_status_free(st);
  uint8_t *want[2] = {0};
  CHECK_EQ_INT(gx_run(&eager, args, 2, want), 0);
  for (int run = 0; run < 3; run++) CHECK_EQ_INT(gx_run(&g, args, 2, want), 0);
  uint64_t c[5];
  gx_counters(&g, c);
  CHECK_EQ_INT(c[0], 0);
  for (int i = 0; i < 2; i++) {
    free(want[i]);
    tensor_release(args[i]);
  }
  gx_free(&g);
  gx_free(&eager);
  fk_cond_ok = false;
}

/* A capture that fails with conditional nodes in it (graph_end's error):
 * the calls go one by one (the loop's predicate read on the host), the
 * results right; nothing left open in the backend. */
TEST(graph_cond_capture_fails) {
  gx_exec eager, g;
  fk_cond_ok = true;
  if (!gx_make_piped(collatz_program, true, NULL, PASS_PIPELINE_CPU, &eager)) return;
  if (!gx_make_piped(collatz_program, false, NULL, PASS_PIPELINE_CPU, &g)) {
    gx_free(&eager);
    return;
  }
  const hlo_type *t = g.x->f->body.block.args[0].type;
  tensor *ae = gx_arg(t, 1, true), *ag = gx_arg(t, 1, true);
  static const int32_t inputs[] = {27, 6, 7, 1};
  fk_fail_end = true;
  for (int i = 0; i < 4; i++) {
    int32_t we[2] = {-1, -1}, wg[2] = {-2, -2};
    collatz_run(&eager, ae, inputs[i], we);
    collatz_run(&g, ag, inputs[i], wg);
    CHECK_EQ_INT(wg[0], we[0]);
    CHECK_EQ_INT(wg[1], we[1]);
  }
  fk_fail_end = false;
  uint64_t c[5];
  gx_counters(&g, c);
  CHECK_EQ_INT(c[0], 4);
  CHECK_EQ_INT(c[1], 3); /* runs 2, 3, 4 tried */
  CHECK_EQ_INT(c[3], 3);
  CHECK_EQ_INT(c[2], 0);
  CHECK_EQ_INT(fk_cond_depth, 0);
  tensor_release(ae);
  tensor_release(ag);
  gx_free(&g);
  gx_free(&eager);
  fk_cond_ok = false;
  CHECK_EQ_INT(fk_live_graphs, 0);
}

TEST_MAIN()
