/* test_cuda_graph_dag.c — the runtime's captured graph as a DAG of the
 * data dependencies (executable_cpu_graph_dag.c) on the backend's
 * graph_deps_get / graph_deps_set slots.
 *
 * Everywhere (no GPU needed), on the fake graph device (fake_device.h: it
 * keeps the recording's dependency set, and replays a graph without
 * conditional nodes in the topological order that runs the LAST ready
 * node first, so a missing edge changes results): two independent
 * branches give two roots and no edge between them, a chain stays a
 * chain, buffers reused by buffer assignment get their write-after-read
 * edges (every hazard between kernels ordered), two independent gemms are
 * serialized (cuBLASLt's workspace), HLO_CUDA_GRAPH_DAG=0 gives the chain;
 * every result bit-identical to an eager executable's.
 * The DAG on the mock driver: test_cuda_graph_mock.c. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "backend/backend.h"
#include "fake_device.h"
#include "test.h"
#include "testlib.h"

FAKE_DEVICE_CHECKS()

/* ---- the captured graph as a DAG (executable_cpu_graph_dag.c cpu_dev_issue_dag) ----
 *
 * dag_run: `text` on the fake graph backend (no passes: one step per op),
 * an eager executable's results against runs 2..4 of a deferred one (run 2
 * captured, all replayed in the reordered topological order: a missing
 * edge shows); HLO_CUDA_GRAPH_DAG=0 at its making when `chain`. The
 * fake's records of the last capture stay in fk_rec. */
static bool dag_run(const char *text, bool chain, uint64_t d[5]) {
  gx_exec eager, g;
  if (!gx_make(text, true, &eager)) return false;
  if (chain) setenv("HLO_CUDA_GRAPH_DAG", "0", 1);
  bool ok = gx_make(text, false, &g);
  unsetenv("HLO_CUDA_GRAPH_DAG");
  if (!ok) {
    gx_free(&eager);
    return false;
  }
  const hlo_func *f = g.x->f;
  uint32_t n = f->num_args;
  tensor *args[8];
  uint8_t *want[8] = {0};
  for (uint32_t i = 0; i < n && i < 8; i++)
    args[i] = gx_arg(f->body.block.args[i].type, 61 + i, true);
  CHECK_EQ_INT(gx_run(&eager, args, n, want), 0);
  fk_faults = 0;
  for (int run = 0; run < 4; run++) CHECK_EQ_INT(gx_run(&g, args, n, want), 0);
  uint64_t c[5];
  gx_counters(&g, c);
  CHECK_EQ_INT(c[1], 1); /* one capture */
  CHECK_EQ_INT(c[3], 0);
  CHECK_EQ_INT(fk_faults, 0);
  cpu_dev_graph_dag_counters(g.x, d);
  for (uint32_t i = 0; i < n && i < 8; i++) tensor_release(args[i]);
  for (uint32_t i = 0; i < f->num_results && i < 8; i++) free(want[i]);
  gx_free(&g);
  gx_free(&eager);
  return true;
}

/* Whether record `to` of the last capture descends from record `from`. */
static bool fk_reaches(int from, int to) {
  if (from == to) return true;
  const fk_call *c = &fk_rec[to];
  if (c->dep_all) return from < to;
  for (int k = 0; k < c->ndep; k++)
    if (c->dep[k] >= from && fk_reaches(from, c->dep[k])) return true;
  return false;
}

static const char *dag_chain =
    "func.func @main(%a: tensor<256xf32>) -> tensor<256xf32> {\n"
    "  %x = stablehlo.exponential %a : tensor<256xf32>\n"
    "  %y = stablehlo.negate %x : tensor<256xf32>\n"
    "  %z = stablehlo.exponential %y : tensor<256xf32>\n"
    "  %w = stablehlo.negate %z : tensor<256xf32>\n"
    "  return %w : tensor<256xf32>\n"
    "}\n";

/* Temporaries of one size, dying early: buffer assignment reuses their
 * memory, so a later write lands where an earlier call reads (WAR). */
static const char *dag_reuse =
    "func.func @main(%a: tensor<256xf32>, %b: tensor<256xf32>) -> (tensor<256xf32>, "
    "tensor<256xf32>) {\n"
    "  %t1 = stablehlo.exponential %a : tensor<256xf32>\n"
    "  %t2 = stablehlo.multiply %t1, %a : tensor<256xf32>\n"
    "  %t3 = stablehlo.exponential %b : tensor<256xf32>\n"
    "  %t4 = stablehlo.multiply %t3, %b : tensor<256xf32>\n"
    "  %t5 = stablehlo.add %t2, %t4 : tensor<256xf32>\n"
    "  %t6 = stablehlo.exponential %t5 : tensor<256xf32>\n"
    "  %t7 = stablehlo.multiply %t6, %a : tensor<256xf32>\n"
    "  %t8 = stablehlo.negate %t5 : tensor<256xf32>\n"
    "  %t9 = stablehlo.multiply %t8, %b : tensor<256xf32>\n"
    "  %t10 = stablehlo.add %t7, %t9 : tensor<256xf32>\n"
    "  %t11 = stablehlo.negate %t10 : tensor<256xf32>\n"
    "  %t12 = stablehlo.exponential %t7 : tensor<256xf32>\n"
    "  %t13 = stablehlo.add %t11, %t12 : tensor<256xf32>\n"
    "  return %t13, %t9 : tensor<256xf32>, tensor<256xf32>\n"
    "}\n";

static const char *dag_gemms =
    "func.func @main(%a: tensor<16x16xf32>, %b: tensor<16x16xf32>, %c: tensor<16x16xf32>, "
    "%d: tensor<16x16xf32>) -> (tensor<16x16xf32>, tensor<16x16xf32>) {\n"
    "  %x = stablehlo.dot_general %a, %b, contracting_dims = [1] x [0] : (tensor<16x16xf32>, "
    "tensor<16x16xf32>) -> tensor<16x16xf32>\n"
    "  %y = stablehlo.dot_general %c, %d, contracting_dims = [1] x [0] : (tensor<16x16xf32>, "
    "tensor<16x16xf32>) -> tensor<16x16xf32>\n"
    "  return %x, %y : tensor<16x16xf32>, tensor<16x16xf32>\n"
    "}\n";

/* Every pair of kernel records of the last capture where a later one
 * writes (its last pointer: one output) what an earlier one passes, or
 * reads what an earlier one writes, must be ordered; *war: such pairs
 * where the later one writes a buffer the earlier one only read. All
 * buffers here have one size, so equal pointers are the same buffer. */
static bool fk_hazards_ordered(int *war) {
  *war = 0;
  for (int j = 0; j < fk_nrec; j++)
    for (int i = 0; i < j; i++) {
      const fk_call *a = &fk_rec[i], *b = &fk_rec[j];
      if (a->kind || b->kind) continue;
      void *wa = a->p[a->np - 1], *wb = b->p[b->np - 1];
      bool raw = false, w_after_r = false;
      for (uint32_t k = 0; k + 1 < b->np; k++) raw |= b->p[k] == wa;
      for (uint32_t k = 0; k + 1 < a->np; k++) w_after_r |= a->p[k] == wb;
      if (!(raw || w_after_r || wa == wb)) continue;
      if (w_after_r && !raw && wa != wb) ++*war;
      if (!fk_reaches(i, j)) return false;
    }
  return true;
}

TEST(graph_dag) {
  uint64_t d[5];
  /* two independent branches: no edge between them */
  if (!dag_run(dag_branches, false, d)) return;
  CHECK_EQ_INT(d[4], 1);
  CHECK_EQ_INT(d[0], 4);
  CHECK_EQ_INT(d[1], 2);
  CHECK_EQ_INT(d[2], 2);
  CHECK_EQ_INT(d[3], 0);
  int roots = 0;
  for (int i = 0; i < fk_nrec; i++) roots += fk_rec[i].node && !fk_rec[i].ndep;
  CHECK_EQ_INT(roots, 2);
  for (int i = 0; i < fk_nrec; i++)
    for (int j = 0; j < fk_nrec; j++) /* a record of one branch never reaches the other's */
      if (i != j && fk_rec[i].ndep == 0 && fk_rec[j].ndep == 0) CHECK(!fk_reaches(i, j));
  printf("graph_dag: two branches: %s\n", fk_dag_text_d(d));

  /* a chain stays a chain */
  if (!dag_run(dag_chain, false, d)) return;
  CHECK_EQ_INT(d[0], 4);
  CHECK_EQ_INT(d[1], 3);
  CHECK_EQ_INT(d[2], 4);
  for (int i = 1; i < fk_nrec; i++) CHECK(fk_rec[i].ndep == 1 && fk_rec[i].dep[0] == i - 1);

  /* HLO_CUDA_GRAPH_DAG=0: the branches as a chain */
  if (!dag_run(dag_branches, true, d)) return;
  CHECK_EQ_INT(d[4], 0);
  CHECK_EQ_INT(fk_rec[0].ndep, 0);
  for (int i = 1; i < fk_nrec; i++) CHECK(fk_rec[i].ndep == 1 && fk_rec[i].dep[0] == i - 1);

  /* buffers reused: every hazard ordered, write-after-read ones among them */
  if (!dag_run(dag_reuse, false, d)) return;
  int war = 0;
  CHECK(fk_hazards_ordered(&war));
  CHECK(war > 0);
  printf("graph_dag: reused buffers: %d write-after-read pair(s) ordered; %s\n", war,
         fk_dag_text_d(d));

  /* two independent gemms: serialized (cuBLASLt's one workspace) */
  if (!dag_run(dag_gemms, false, d)) return;
  int g0 = -1, g1 = -1;
  for (int i = 0; i < fk_nrec; i++)
    if (fk_rec[i].kind == 1) {
      if (g0 < 0) g0 = i;
      else g1 = i;
    }
  CHECK(g0 >= 0 && g1 > g0);
  if (g0 >= 0 && g1 > g0) CHECK(fk_reaches(g0, g1));
  printf("graph_dag: two gemms: serialized; %s\n", fk_dag_text_d(d));
}

TEST_MAIN()
