/* test_cuda_graph_replay.c — graph replay in the runtime
 * (executable_cpu_graph.c) on the CUDA backend's graph slots (graph_begin /
 * graph_end / graph_launch): a deferred run's calls recorded, captured
 * into a graph and launched, or launched without the run's steps.
 *
 * Everywhere (no GPU needed), on the fake graph device (fake_device.h:
 * cpu-devmem whose graph_* slots record the work calls and run them on each
 * graph launch, in the reordered topological order of the capture's DAG):
 * run 1 eager, run 2 captured and launched, run 3 launched (other values in
 * the same buffers), every result bit-identical to an HLO_CUDA_GRAPHS=0
 * executable's; other argument buffers get a second graph, the first
 * buffers the first graph again; host arguments (uploaded into graph
 * buffers) a third, replayed; --profile and a failed capture run eagerly
 * and right; a while loop without a known trip count is never deferred
 * without conditional nodes; a dynamic_slice read on the device and a
 * two-call program are; while loops of a known trip count (the passes run
 * first): the graph holds exactly the calls run 1 issued one by one (the
 * loop unrolled, the same pointers), run 3 replays it without the steps,
 * results bit-identical to eager runs; a loop whose bound is an argument is
 * not deferred (without conditional nodes) and runs right; unrolled past
 * GRAPH_MAX_CALLS (4096) the program runs eagerly, under it one graph;
 * results fed back as arguments (a training loop) alternate two graphs,
 * bit-identical to eager steps, a result released after its executable is
 * freed; the shared models tiny_llama_train_step (two scans: 526 calls),
 * softmax_xent and mlp_block_f32 as one graph each, bit-identical.
 * With a device (backend_cuda succeeds), else "skipped: REASON": graph
 * replay of kernels and a cuBLASLt gemm, and of the shared models: run 2
 * captured, run 3 replayed with other values in the same buffers, results
 * bit-identical to an HLO_CUDA_GRAPHS=0 executable's.
 * Conditional nodes: test_cuda_graph_cond.c; the captured graph as a DAG:
 * test_cuda_graph_dag.c; the runtime's graphs on the mock driver:
 * test_cuda_graph_mock.c; the graph slots themselves on the mock driver:
 * test_cuda_backend.c. */
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "backend/backend.h"
#include "backend/cuda/cuda_api.h"
#include "passes/pass_manager.h"
#include "fake_device.h"
#include "test.h"
#include "testlib.h"

FAKE_DEVICE_CHECKS()

/* The backend in this process, or NULL after printing "skipped: reason". */
static const backend *device(const char *test) {
  const backend *be = NULL;
  hlo_status st = backend_cuda(&be);
  if (st) {
    printf("%s: skipped: %s\n", test, hlo_status_message(st));
    hlo_status_free(st);
    return NULL;
  }
  return be;
}

static const char *graph_program =
    "func.func @main(%a: tensor<8x16xf32>, %b: tensor<16x4xf32>, %c: tensor<8x4xf32>)\n"
    "    -> (tensor<8x4xf32>, tensor<8x16xf32>, tensor<32xf32>) {\n"
    "  %e = stablehlo.exponential %a : tensor<8x16xf32>\n"
    "  %d = stablehlo.dot_general %e, %b, contracting_dims = [1] x [0]\n"
    "      : (tensor<8x16xf32>, tensor<16x4xf32>) -> tensor<8x4xf32>\n"
    "  %s = stablehlo.add %d, %c : tensor<8x4xf32>\n"
    "  %t = stablehlo.tanh %s : tensor<8x4xf32>\n"
    "  %m = stablehlo.multiply %e, %e : tensor<8x16xf32>\n"
    "  %r = stablehlo.reshape %t : (tensor<8x4xf32>) -> tensor<32xf32>\n"
    "  return %t, %m, %r : tensor<8x4xf32>, tensor<8x16xf32>, tensor<32xf32>\n"
    "}\n";

TEST(graph_replay_runs_the_eager_work) {
  gx_exec eager, g;
  if (!gx_make(graph_program, true, &eager)) return;
  if (!gx_make(graph_program, false, &g)) {
    gx_free(&eager);
    return;
  }
  const hlo_func *f = g.x->f;
  tensor *args[3], *args2[3], *host[3];
  for (int i = 0; i < 3; i++) {
    const hlo_type *t = f->body.block.args[i].type;
    args[i] = gx_arg(t, 11 + (uint64_t)i, true);
    args2[i] = gx_arg(t, 101 + (uint64_t)i, true);
    host[i] = gx_arg(t, 11 + (uint64_t)i, false);
  }
  uint8_t *want[3] = {0}, *want2[3] = {0};
  uint64_t c[5];
  /* the eager answers (HLO_CUDA_GRAPHS=0: never deferred) */
  CHECK_EQ_INT(gx_run(&eager, args, 3, want), 0);
  CHECK_EQ_INT(gx_run(&eager, args2, 3, want2), 0);
  CHECK_EQ_INT(gx_run(&eager, args, 3, want), 0);
  gx_counters(&eager, c);
  CHECK_EQ_INT(c[0], 0);
  CHECK_EQ_INT(fk_graph_launches, 0);
  /* run 1: deferred, issued one by one (the warm-up) */
  fk_eager_launches = fk_eager_gemms = fk_faults = 0;
  CHECK_EQ_INT(gx_run(&g, args, 3, want), 0);
  gx_counters(&g, c);
  CHECK_EQ_INT(c[0], 1);
  CHECK_EQ_INT(c[1], 0);
  CHECK_EQ_INT(c[2], 0);
  CHECK(fk_eager_launches >= 3);
  CHECK_EQ_INT(fk_eager_gemms, 1);
  /* runs 2 and 3: one graph, captured on run 2, launched once per run; no
   * kernel or gemm outside it; nothing that breaks a capture. Run 3 reads
   * other values from the same buffers (args2's written into args'): the
   * graph reads its buffers when it runs */
  fk_eager_launches = fk_eager_gemms = 0;
  for (int run = 2; run <= 3; run++) {
    if (run == 3) gx_set(args, args2, 3);
    CHECK_EQ_INT(gx_run(&g, args, 3, run == 3 ? want2 : want), 0);
    if (run == 3) gx_set(args, host, 3); /* back to the first values */
    gx_counters(&g, c);
    CHECK_EQ_INT(c[1], 1);
    CHECK_EQ_INT(c[2], (uint64_t)run - 1);
    CHECK_EQ_INT(fk_graph_launches, run - 1);
  }
  CHECK_EQ_INT(fk_eager_launches, 0);
  CHECK_EQ_INT(fk_eager_gemms, 0);
  CHECK_EQ_INT(fk_faults, 0);
  CHECK_EQ_INT(fk_live_graphs, 1);
  /* other argument buffers (other values): that graph does not fit; a
   * second is captured and gives the eager answer; back to the first
   * buffers: the first graph again, no capture */
  CHECK_EQ_INT(gx_run(&g, args2, 3, want2), 0);
  gx_counters(&g, c);
  CHECK_EQ_INT(c[1], 2);
  CHECK_EQ_INT(c[2], 3);
  CHECK_EQ_INT(gx_run(&g, args, 3, want), 0);
  CHECK_EQ_INT(gx_run(&g, args2, 3, want2), 0);
  gx_counters(&g, c);
  CHECK_EQ_INT(c[1], 2);
  CHECK_EQ_INT(c[2], 5);
  CHECK_EQ_INT(fk_live_graphs, 2);
  /* host arguments: uploaded before the run into graph buffers (the same
   * device pointers each run): a third graph, then that graph again */
  CHECK_EQ_INT(gx_run(&g, host, 3, want), 0);
  gx_counters(&g, c);
  CHECK_EQ_INT(c[1], 3);
  CHECK_EQ_INT(c[2], 6);
  for (int i = 0; i < 3; i++) memcpy(host[i]->data, args2[i]->data, host[i]->nbytes);
  CHECK_EQ_INT(gx_run(&g, host, 3, want2), 0); /* other values: uploaded, read by the graph */
  gx_counters(&g, c);
  CHECK_EQ_INT(c[1], 3);
  CHECK_EQ_INT(c[2], 7);
  CHECK_EQ_INT(fk_live_graphs, 3);
  /* the profile keeps per-step timing: no graph */
  uint64_t before = c[0];
  cpu_exec_profile(g.x, true);
  fk_eager_launches = 0;
  CHECK_EQ_INT(gx_run(&g, args, 3, want), 0);
  gx_counters(&g, c);
  CHECK_EQ_INT(c[0], before);
  CHECK(fk_eager_launches >= 3);
  cpu_exec_profile(g.x, false);
  /* a capture that fails: the run is issued one by one, still right */
  fk_fail_end = true;
  tensor *args3[3];
  for (int i = 0; i < 3; i++) args3[i] = gx_arg(f->body.block.args[i].type, 101 + (uint64_t)i, true);
  CHECK_EQ_INT(gx_run(&g, args3, 3, want2), 0);
  fk_fail_end = false;
  gx_counters(&g, c);
  CHECK_EQ_INT(c[1], 4);
  CHECK_EQ_INT(c[3], 1);
  CHECK_EQ_INT(c[2], 7);
  CHECK_EQ_INT(fk_faults, 0);
  printf("graph_replay_runs_the_eager_work: %llu deferred runs, %llu captures (%llu failed), "
         "%llu graph launches\n", (unsigned long long)c[0], (unsigned long long)c[1],
         (unsigned long long)c[3], (unsigned long long)c[2]);
  for (int i = 0; i < 3; i++) {
    tensor_release(args[i]);
    tensor_release(args2[i]);
    tensor_release(args3[i]);
    tensor_release(host[i]);
    free(want[i]);
    free(want2[i]);
  }
  gx_free(&g);
  gx_free(&eager);
  CHECK_EQ_INT(fk_live_graphs, 0);
}

/* A program with a host read (a while predicate: no known trip count, the
 * module not run through the passes) is never deferred, and agrees with
 * the eager runs; a dynamic_slice whose start indices the backend reads on
 * the device (dyn_box) is no host read: that program is captured and
 * replayed, and agrees too; so is one of two calls and two results (the
 * results are handed the graph buffers, not copied: a replay is one
 * launch). */
TEST(graph_replay_skips_host_reads) {
  static const char *const progs[] = {
      "func.func @main(%a: tensor<4xf32>, %n: tensor<i32>) -> tensor<4xf32> {\n"
      "  %z = stablehlo.constant dense<0> : tensor<i32>\n"
      "  %one = stablehlo.constant dense<1> : tensor<i32>\n"
      "  %r:2 = stablehlo.while(%i = %z, %x = %a) : tensor<i32>, tensor<4xf32>\n"
      "    cond {\n"
      "      %p = stablehlo.compare LT, %i, %n : (tensor<i32>, tensor<i32>) -> tensor<i1>\n"
      "      stablehlo.return %p : tensor<i1>\n"
      "    } do {\n"
      "      %j = stablehlo.add %i, %one : tensor<i32>\n"
      "      %y = stablehlo.exponential %x : tensor<4xf32>\n"
      "      %w = stablehlo.multiply %y, %x : tensor<4xf32>\n"
      "      stablehlo.return %j, %w : tensor<i32>, tensor<4xf32>\n"
      "    }\n"
      "  return %r#1 : tensor<4xf32>\n"
      "}\n",
      "func.func @main(%a: tensor<8x4xf32>, %n: tensor<i32>) -> tensor<2x4xf32> {\n"
      "  %z = stablehlo.constant dense<0> : tensor<i32>\n"
      "  %e = stablehlo.exponential %a : tensor<8x4xf32>\n"
      "  %s = stablehlo.dynamic_slice %e, %n, %z, sizes = [2, 4]\n"
      "      : (tensor<8x4xf32>, tensor<i32>, tensor<i32>) -> tensor<2x4xf32>\n"
      "  %t = stablehlo.tanh %s : tensor<2x4xf32>\n"
      "  return %t : tensor<2x4xf32>\n"
      "}\n",
      "func.func @main(%a: tensor<4xf32>, %n: tensor<i32>) -> (tensor<4xf32>, tensor<4xf32>) {\n"
      "  %e = stablehlo.exponential %a : tensor<4xf32>\n"
      "  %t = stablehlo.tanh %e : tensor<4xf32>\n"
      "  return %e, %t : tensor<4xf32>, tensor<4xf32>\n"
      "}\n",
  };
  for (int k = 0; k < 3; k++) {
    gx_exec eager, g;
    if (!gx_make(progs[k], true, &eager)) return;
    if (!gx_make(progs[k], false, &g)) {
      gx_free(&eager);
      return;
    }
    const hlo_func *f = g.x->f;
    tensor *args[2];
    for (int i = 0; i < 2; i++) args[i] = gx_arg(f->body.block.args[i].type, 7 + (uint64_t)i, true);
    uint8_t *want[2] = {0};
    CHECK_EQ_INT(gx_run(&eager, args, 2, want), 0);
    int launches = fk_graph_launches;
    for (int run = 0; run < 3; run++) CHECK_EQ_INT(gx_run(&g, args, 2, want), 0);
    uint64_t c[5];
    gx_counters(&g, c);
    if (k >= 1) { /* captured on run 2, replayed on run 3 */
      CHECK(c[0] >= 1);
      CHECK(fk_graph_launches > launches);
    } else {
      CHECK_EQ_INT(c[0], 0);
      CHECK_EQ_INT(c[1], 0);
      CHECK_EQ_INT(fk_graph_launches, launches);
    }
    for (int i = 0; i < 2; i++) {
      tensor_release(args[i]);
      free(want[i]);
    }
    gx_free(&g);
    gx_free(&eager);
  }
}

/* A while loop of a known trip count is part of the graph: run 1 is
 * deferred and issued call by call, run 2 captured (each iteration's calls
 * in order: the loop unrolled) and launched, run 3 launched with other
 * values in the same buffers; the graph holds exactly the calls of run 1
 * (the same kernels, parameters and pointers: the graph buffers are the
 * same run after run), nothing ran outside it, and every result is the
 * eager executable's, bit for bit. */
TEST(graph_replay_unrolls_known_loops) {
  char text[4096];
  scan_text(text, sizeof text, 6, false);
  fk_faults = 0;
  int graphs0 = fk_graph_launches, calls1 = -1;
  uint64_t c[5];
  if (!gx_compare_runs(text, 3, 3, c, &calls1)) return;
  CHECK_EQ_INT(c[0], 3);
  CHECK_EQ_INT(c[1], 1);
  CHECK_EQ_INT(c[2], 2);
  CHECK_EQ_INT(c[3], 0);
  CHECK_EQ_INT(c[4], 1); /* run 3: the same key as run 2: its steps skipped */
  CHECK_EQ_INT(fk_graph_launches - graphs0, 2);
  CHECK_EQ_INT(fk_eager_calls, 0); /* run 3: the graph only */
  CHECK_EQ_INT(fk_faults, 0);
  /* 6 iterations of at least a dynamic_slice, a gemm, a kernel and a
   * dynamic_update_slice, unrolled */
  CHECK(calls1 >= 6 * 4);
  CHECK_EQ_INT(fk_last_graph_calls, calls1);
  bool same = calls1 <= FK_MAX_CALLS;
  for (int i = 0; same && i < calls1; i++) /* the calls, not the DAG's fields */
    same = !memcmp(&fk_rec[i], &fk_elog[i], offsetof(fk_call, node));
  CHECK(same);
  int dyn = 0;
  for (int i = 0; i < calls1; i++) dyn += fk_rec[i].kind == 2 && fk_rec[i].box.ndyn > 0;
  CHECK(dyn >= 2 * 6); /* each iteration's slice and update read i on the device */
  printf("graph_replay_unrolls_known_loops: %d calls a run (6 iterations), one graph\n", calls1);
}

/* A loop whose bound is an argument (no known trip count: its predicate
 * read on the host each iteration) is never deferred and runs right; a
 * known loop whose unrolled calls pass GRAPH_MAX_CALLS (4096) is not
 * deferred either (runs eagerly, right). */
TEST(graph_replay_loop_limits) {
  char text[4096];
  scan_text(text, sizeof text, 4, true);
  int graphs0 = fk_graph_launches, calls1 = -1;
  uint64_t c[5];
  if (!gx_compare_runs(text, 4, 3, c, &calls1)) return;
  CHECK_EQ_INT(c[0], 0);
  CHECK_EQ_INT(c[1], 0);
  CHECK_EQ_INT(fk_graph_launches, graphs0);
  CHECK(fk_eager_calls >= 5 * 4); /* run 3: 5 iterations, eagerly */
  scan_text(text, sizeof text, 1100, false); /* 1100 x 4 calls and more */
  if (!gx_compare_runs(text, 3, 2, c, &calls1)) return;
  CHECK(calls1 > 4096);
  CHECK_EQ_INT(c[0], 0);
  CHECK_EQ_INT(c[1], 0);
  CHECK_EQ_INT(fk_graph_launches, graphs0);
  scan_text(text, sizeof text, 600, false); /* under the cap: one graph */
  if (!gx_compare_runs(text, 3, 3, c, &calls1)) return;
  CHECK(calls1 > 600 * 4 && calls1 <= 4096);
  CHECK_EQ_INT(c[1], 1);
  CHECK_EQ_INT(c[2], 2);
  CHECK_EQ_INT(fk_last_graph_calls, calls1);
  printf("graph_replay_loop_limits: 600 iterations: %d calls, one graph; 1100: eager\n", calls1);
}

/* Results fed back as the next run's arguments (a training loop): the
 * results hold the graph buffers they were written in (no copy); the
 * graph buffers a result took are remade, and given back when it is
 * released, so two graphs alternate. Every step bit-identical to the
 * eager executable's; a result released after its executable is gone is
 * freed (ASan: no leak, no use after free). */
TEST(graph_replay_results_fed_back) {
  static const char *text =
      "func.func @main(%p: tensor<8x8xf32>, %x: tensor<8x8xf32>)\n"
      "    -> (tensor<8x8xf32>, tensor<f32>) {\n"
      "  %lr = stablehlo.constant dense<0.125> : tensor<8x8xf32>\n"
      "  %zero = stablehlo.constant dense<0.0> : tensor<f32>\n"
      "  %d = stablehlo.dot_general %p, %x, contracting_dims = [1] x [0]\n"
      "      : (tensor<8x8xf32>, tensor<8x8xf32>) -> tensor<8x8xf32>\n"
      "  %t = stablehlo.tanh %d : tensor<8x8xf32>\n"
      "  %u = stablehlo.multiply %lr, %t : tensor<8x8xf32>\n"
      "  %p2 = stablehlo.subtract %p, %u : tensor<8x8xf32>\n"
      "  %l = stablehlo.reduce(%t init: %zero) applies stablehlo.add across dimensions = [0, 1]\n"
      "      : (tensor<8x8xf32>, tensor<f32>) -> tensor<f32>\n"
      "  return %p2, %l : tensor<8x8xf32>, tensor<f32>\n"
      "}\n";
  gx_exec eager, g;
  if (!gx_make_piped(text, true, NULL, PASS_PIPELINE_CPU, &eager)) return;
  if (!gx_make_piped(text, false, NULL, PASS_PIPELINE_CPU, &g)) {
    gx_free(&eager);
    return;
  }
  const hlo_func *f = g.x->f;
  tensor *pe = gx_arg(f->body.block.args[0].type, 3, true);
  tensor *pg = gx_arg(f->body.block.args[0].type, 3, true);
  tensor *x = gx_arg(f->body.block.args[1].type, 4, true);
  tensor *kept = NULL;
  for (int k = 0; k < 8; k++) {
    tensor *ae[2] = {pe, x}, *ag[2] = {pg, x}, **re = NULL, **rg = NULL;
    hlo_status st = cpu_exec_run(eager.x, ae, 2, &re);
    hlo_status st2 = cpu_exec_run(g.x, ag, 2, &rg);
    CHECK(!st && !st2);
    hlo_status_free(st);
    hlo_status_free(st2);
    if (!re || !rg) break;
    for (int i = 0; i < 2; i++) {
      uint8_t *be = gx_bytes(re[i]), *bg = gx_bytes(rg[i]);
      CHECK(rg[i]->device != NULL); /* left on the device */
      CHECK(be && bg && !memcmp(be, bg, re[i]->nbytes));
      free(be);
      free(bg);
    }
    tensor_release(pe);
    tensor_release(pg);
    pe = re[0], pg = rg[0];
    tensor_release(re[1]);
    if (k == 7) kept = rg[1]; /* held past the executable */
    else tensor_release(rg[1]);
    free(re);
    free(rg);
  }
  uint64_t c[5];
  gx_counters(&g, c);
  CHECK_EQ_INT(c[0], 8);
  /* run 1 issued call by call; then two graphs: (arguments in buffer
   * set A, results in B) and (B, A), captured on runs 2 and 3 */
  CHECK_EQ_INT(c[1], 2);
  CHECK_EQ_INT(c[2], 7);
  CHECK_EQ_INT(c[4], 5); /* runs 4 to 8: keys seen before, steps skipped */
  CHECK_EQ_INT(c[3], 0);
  printf("graph_replay_results_fed_back: 8 steps, %llu captures, %llu graph launches\n",
         (unsigned long long)c[1], (unsigned long long)c[2]);
  tensor_release(pe);
  tensor_release(x);
  gx_free(&eager);
  tensor_release(pg); /* a result held past the executable: freed, not given back */
  gx_free(&g);
  tensor_release(kept);
  CHECK_EQ_INT(fk_live_graphs, 0);
}

/* The shared models with while loops and many calls (tiny_llama_train_step:
 * two scans of known trip counts) on the fake graph backend: one graph,
 * captured on run 2, replayed on runs 3 and 4 (without their steps);
 * results bit-identical to eager runs (HLO_CUDA_GRAPHS=0). Skipped without ../shared. More programs (the
 * larger ones of ../shared/perf: slow on a CPU) with
 * HLO_GRAPH_TEST_PROGRAMS=FILE.mlir[:FILE.mlir...]. */
static void shared_models_on(const backend *be, const char *test) {
  static const char *const models[] = {"tiny_llama_train_step", "softmax_xent", "mlp_block_f32"};
  const char *shared = getenv("HLO_SHARED"), *extra = getenv("HLO_GRAPH_TEST_PROGRAMS");
  size_t nmodels = sizeof models / sizeof *models;
  for (size_t m = 0;; m++) {
    char path[512];
    if (m < nmodels) {
      snprintf(path, sizeof path, "%s/models/%s/%s.mlir", shared ? shared : "../shared",
               models[m], models[m]);
    } else { /* the next of HLO_GRAPH_TEST_PROGRAMS */
      if (!extra || !*extra) break;
      size_t len = strcspn(extra, ":");
      snprintf(path, sizeof path, "%.*s", (int)(len < 500 ? len : 500), extra);
      extra += len + (extra[len] == ':');
    }
    size_t len = 0;
    char *text = tl_read_file(path, &len);
    if (!text) {
      printf("%s: skipped: no %s\n", test, path);
      return;
    }
    gx_exec eager, g;
    bool ok = gx_make_piped(text, true, be, PASS_PIPELINE_CPU, &eager);
    if (ok && !gx_make_piped(text, false, be, PASS_PIPELINE_CPU, &g)) {
      gx_free(&eager);
      ok = false;
    }
    free(text);
    if (!ok) return;
    const hlo_func *f = g.x->f;
    uint32_t n = f->num_args;
    tensor **args = calloc(n, sizeof *args);
    uint8_t **want = calloc(f->num_results, sizeof *want);
    for (uint32_t i = 0; i < n; i++) {
      args[i] = gx_arg_on(f->body.block.args[i].type, 31 + i, true, be);
      /* token ids in range: integers 0..3 (gx_arg), valid for every model here */
    }
    CHECK_EQ_INT(gx_run(&eager, args, n, want), 0);
    int graphs0 = fk_graph_launches;
    fk_faults = 0;
    for (int run = 0; run < 4; run++) {
      fk_eager_calls = 0;
      CHECK_EQ_INT(gx_run(&g, args, n, want), 0);
    }
    uint64_t c[5];
    gx_counters(&g, c);
    CHECK_EQ_INT(c[0], 4);
    CHECK_EQ_INT(c[1], 1);
    CHECK_EQ_INT(c[2], 3);
    /* runs 3 and 4 without their steps (run 3 may differ in key from run 2
     * when run 1 left the arena's validity otherwise: then run 4 only) */
    CHECK(c[4] >= 1 && c[4] <= 2);
    CHECK_EQ_INT(c[3], 0);
    if (!be) { /* the fake's own counts */
      CHECK_EQ_INT(fk_graph_launches - graphs0, 3);
      CHECK_EQ_INT(fk_eager_calls, 0);
      CHECK_EQ_INT(fk_faults, 0);
      printf("%s: %s: %d calls in one graph, bit-identical to eager runs; %s\n", test, path,
             fk_last_graph_calls, fk_dag_text(g.x));
    } else {
      printf("%s: %s: one graph, %llu replays without the steps, bit-identical to eager runs\n",
             test, path, (unsigned long long)c[4]);
    }
    for (uint32_t i = 0; i < n; i++) tensor_release(args[i]);
    for (uint32_t i = 0; i < f->num_results; i++) free(want[i]);
    free(args);
    free(want);
    gx_free(&g);
    gx_free(&eager);
  }
}

TEST(graph_replay_shared_models) { shared_models_on(NULL, "graph_replay_shared_models"); }

/* The same on a device (CUDA): each model one graph, replayed, results
 * bit-identical to an HLO_CUDA_GRAPHS=0 executable's. */
TEST(graph_replay_shared_models_on_device) {
  const backend *be = device("graph_replay_shared_models_on_device");
  if (be) shared_models_on(be, "graph_replay_shared_models_on_device");
}

/* On a device: the same program (kernels and a cuBLASLt gemm) captured on
 * run 2 and replayed on run 3 (other values in the same buffers), every
 * result bit-identical to an HLO_CUDA_GRAPHS=0 executable's. */
TEST(graph_replay_on_device) {
  const backend *be = device("graph_replay_on_device");
  if (!be) return;
  gx_exec eager, g;
  if (!gx_make_on(graph_program, true, be, &eager)) return;
  if (!gx_make_on(graph_program, false, be, &g)) {
    gx_free(&eager);
    return;
  }
  tensor *a[3], *b[3];
  for (int i = 0; i < 3; i++) {
    const hlo_type *t = g.x->f->body.block.args[i].type;
    a[i] = gx_arg_on(t, 5 + (uint64_t)i, true, be);
    b[i] = gx_arg_on(t, 55 + (uint64_t)i, true, be);
  }
  uint8_t *wa[3] = {0}, *wb[3] = {0};
  CHECK_EQ_INT(gx_run(&eager, a, 3, wa), 0);
  CHECK_EQ_INT(gx_run(&eager, b, 3, wb), 0);
  CHECK_EQ_INT(gx_run(&g, a, 3, wa), 0);
  CHECK_EQ_INT(gx_run(&g, a, 3, wa), 0);
  for (int i = 0; i < 3; i++) { /* b's values into a's buffers */
    hlo_status st = be->copy(a[i]->device->ptr, b[i]->data, a[i]->nbytes);
    CHECK(!st);
    hlo_status_free(st);
    memcpy(a[i]->data, b[i]->data, a[i]->nbytes);
  }
  CHECK_EQ_INT(gx_run(&g, a, 3, wb), 0);
  uint64_t c[5];
  cpu_dev_graph_counters(g.x, c);
  CHECK_EQ_INT(c[0], 3);
  CHECK_EQ_INT(c[1], 1);
  CHECK_EQ_INT(c[2], 2);
  CHECK_EQ_INT(c[3], 0);
  printf("graph_replay_on_device: %llu captures (%llu failed), %llu graph launches\n",
         (unsigned long long)c[1], (unsigned long long)c[3], (unsigned long long)c[2]);
  for (int i = 0; i < 3; i++) {
    tensor_release(a[i]);
    tensor_release(b[i]);
    free(wa[i]);
    free(wb[i]);
  }
  gx_free(&g);
  gx_free(&eager);
}

TEST_MAIN()
