/* test_cuda_graph.c — CUDA graphs in the runtime (executable_cpu_device.c,
 * executable_cpu_cond_graph.c) on the CUDA backend's graph slots
 * (graph_begin / graph_end / graph_launch, conditional nodes).
 *
 * Everywhere (no GPU needed):
 *   - graph replay on a fake graph backend (cpu-devmem whose graph_* slots
 *     record the work calls and run them on each graph launch): run 1
 *     eager, run 2 captured and launched, run 3 launched (other values in
 *     the same buffers), every result bit-identical to an
 *     HLO_CUDA_GRAPHS=0 executable's; other argument buffers get a second
 *     graph, the first buffers the first graph again; host arguments
 *     (uploaded into graph buffers) a third, replayed; --profile and a
 *     failed capture run eagerly and right; a while loop without a known
 *     trip count is never deferred without conditional nodes; a
 *     dynamic_slice read on the device and a two-call program are; while
 *     loops of a known trip count (the passes run first): the graph holds
 *     exactly the calls run 1 issued one by one (the loop unrolled, the
 *     same pointers), run 3 replays it without the steps, results
 *     bit-identical to eager runs; a loop whose bound is an argument is not
 *     deferred (without conditional nodes) and runs right; unrolled past GRAPH_MAX_CALLS (4096) the
 *     program runs eagerly, under it one graph; results fed back as
 *     arguments (a training loop) alternate two graphs, bit-identical to
 *     eager steps, a result released after its executable is freed; the
 *     shared models tiny_llama_train_step (two scans: 526 calls),
 *     softmax_xent and mlp_block_f32 as one graph each, bit-identical;
 *   - the captured graph as a DAG (the fake keeps the recording's
 *     dependency set: graph_deps_get / _set, and replays a graph without
 *     conditional nodes in the topological order that runs the LAST ready
 *     node first, so a missing edge changes results): two independent
 *     branches give two roots and no edge between them, a chain stays a
 *     chain, buffers reused by buffer assignment get their write-after-read
 *     edges (every hazard between kernels ordered), two independent gemms
 *     are serialized (cuBLASLt's workspace), HLO_CUDA_GRAPH_DAG=0 gives the
 *     chain; every bit-identical check above runs on the reordered replay;
 *   - conditional nodes on the fake backend: a loop without a known trip
 *     count (Collatz, a scan whose trip count is an argument) one WHILE
 *     node, a case and an if one SWITCH node, the shared models with
 *     control flow decided on the device, bit-identical to eager runs;
 *     nested conditionals fall back, a capture that fails with conditional
 *     nodes in it runs eagerly and right;
 *   - on the mock driver (tests/unit/mock/libcuda_mock.h, in a child
 *     process: launches recorded, not run): an executable (kernels only)
 *     launching its kernels itself on run 1 and by one cuGraphLaunch on
 *     runs 2 and 3, the same kernels on the same buffers; a scan (a while
 *     loop of a known trip count with dynamic_slice / dynamic_update_slice
 *     at the loop counter, read on the device by the library's copy
 *     kernels) the same way (run 3 without walking the steps), the
 *     launches (ours and the library's) identical; a loop without a known
 *     trip count and a case as the driver's conditional nodes (the
 *     capture's structure, the node's and the setter's parameters); every
 *     capture's dependencies set through the backend's graph_deps slots
 *     (cuStreamGetCaptureInfo_v3, cuStreamUpdateCaptureDependencies_v2) on
 *     nodes of the capture only, the mock's edges (nodes - 1: a tree).
 * With a device (backend_cuda succeeds), else "skipped: REASON": graph
 * replay of kernels and a cuBLASLt gemm, and of the shared models: run 2
 * captured, run 3 replayed with other values in the same buffers, results
 * bit-identical to an HLO_CUDA_GRAPHS=0 executable's.
 * The graph slots themselves on the mock driver: test_cuda_backend.c. */
#include <dlfcn.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>
#include "backend/backend.h"
#include "backend/cuda/cuda_api.h"
#include "interp/interp.h"
#include "passes/pass_manager.h"
#include "runtime/executable_cpu_internal.h"
#include "mock/libcuda_mock.h"
#include "test.h"
#include "testlib.h"

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

/* ---- graph replay in the runtime (executable_cpu_device.c) ----
 *
 * A fake graph backend: cpu-devmem (backend/cpu/cpu_devmem.c: kernels and
 * gemms run on the CPU, device buffers of their own) with the graph_*
 * slots. Between graph_begin and graph_end its work slots record their
 * calls instead of running them (as a captured CUDA stream does), and any
 * call that would break a real capture (alloc, free, copy, synchronize) is
 * counted as a fault; graph_launch runs the recorded calls through
 * cpu-devmem. So the executable's results after a replay are real
 * numbers, compared with an eager run's bit for bit. */

/* executable_cpu_device.c's counters (tests only): deferred runs,
 * captures, graph launches, failed captures, launches that skipped the
 * run's steps (a run of the same key as the graph's: cpu_dev_replay). */
void cpu_dev_graph_counters(const cpu_exec *x, uint64_t out[5]);
/* Its conditional nodes: recorded by deferred runs, in captured graphs. */
void cpu_dev_graph_cond_counters(const cpu_exec *x, uint64_t out[2]);

/* Its DAG (tests only): the last DAG capture's calls, edges, longest path,
 * barriers; out[4] 1 when captures are DAGs. */
void cpu_dev_graph_dag_counters(const cpu_exec *x, uint64_t out[5]);

enum { FK_MAX_CALLS = 6000, FK_MAX_PTRS = 16, FK_MAX_KERNELS = 4096, FK_MAX_DEPS = 24 };
typedef struct fk_call {
  int kind; /* 0 launch, 1 gemm, 2 copy_box, 3 fill_box, 4 gather, 5 scatter; a conditional
               node: 6 its begin, 7 the setting of a WHILE's condition in its body, 8 the
               last body's end, 9 the next body's start (IF, SWITCH) (p[0]: the
               predicate; value[0]: its size, [1]: bit 0 only, [2]: the kind, [3]:
               signed, index: the branches) */
  backend_module *m;
  uint32_t index, np;
  void *p[FK_MAX_PTRS];
  backend_gemm g;
  backend_box box;
  backend_rows rows;
  uint8_t value[16];
  /* a top-level record's node (a conditional node: its begin record): the
   * records it follows (graph_deps_*; dep_all: more than FK_MAX_DEPS,
   * every earlier one), node false inside a conditional body */
  bool node, dep_all;
  int ndep, dep[FK_MAX_DEPS];
} fk_call;
typedef struct fk_graph {
  fk_call *c;
  int n;
} fk_graph;

static backend fk;            /* the fake table */
static const backend *fk_dm;  /* cpu-devmem */
static bool fk_capturing, fk_fail_end;
static fk_call fk_rec[FK_MAX_CALLS];  /* the capture's calls */
static int fk_nrec;
static bool fk_logging;               /* eager calls logged too (fk_elog) */
static fk_call fk_elog[FK_MAX_CALLS];
static int fk_nelog;
static uint32_t fk_nbufs[FK_MAX_KERNELS]; /* buffers of each kernel, from the executable's steps */
static int fk_faults, fk_live_graphs, fk_graph_launches, fk_last_graph_calls;
static int fk_eager_launches, fk_eager_gemms, fk_eager_calls; /* work run outside graphs */
static bool fk_cond_ok;               /* graph_cond_takes' answer (off: as a driver < 12.4) */
static int fk_cond_depth, fk_cond_iters; /* bodies open in the capture; iterations run */
/* The capture's dependency set (graph_deps_get / _set): record indices;
 * fk_reorder: a graph replays its nodes in the topological order that
 * takes the LAST ready node first (as far from the capture's order as its
 * edges allow: a missing edge shows in the results) */
static int fk_cur[FK_MAX_CALLS], fk_ncur;
static bool fk_reorder = true;
#define FK_NODE(i) ((void *)(uintptr_t)(0x10000 + (i)))

/* The record of a work call: in the capture (fk_capturing), else in the
 * eager log (fk_logging), else a scratch one; NULL past FK_MAX_CALLS (a
 * fault in a capture). */
static fk_call *fk_record(int kind) {
  static fk_call scratch;
  fk_call *c = &scratch;
  if (fk_capturing) {
    if (fk_nrec == FK_MAX_CALLS) {
      fk_faults++;
      return NULL;
    }
    c = &fk_rec[fk_nrec++];
  } else {
    fk_eager_calls++;
    if (fk_logging && fk_nelog < FK_MAX_CALLS) c = &fk_elog[fk_nelog++];
  }
  memset(c, 0, sizeof *c);
  c->kind = kind;
  if (fk_capturing && !fk_cond_depth && kind <= 6) { /* a node: after fk_cur, then fk_cur */
    c->node = true;
    c->dep_all = fk_ncur > FK_MAX_DEPS;
    for (int i = 0; i < fk_ncur && i < FK_MAX_DEPS; i++) c->dep[c->ndep++] = fk_cur[i];
    fk_cur[0] = fk_nrec - 1, fk_ncur = 1;
  }
  return c;
}

static hlo_status fk_launch(backend_module *m, uint32_t i, void *const *b) {
  fk_call *c = fk_record(0);
  if (!c || i >= FK_MAX_KERNELS || !fk_nbufs[i] || fk_nbufs[i] > FK_MAX_PTRS)
    return status_new(HLO_INTERNAL, "fake: kernel %u unknown", i);
  c->m = m, c->index = i, c->np = fk_nbufs[i];
  memcpy(c->p, b, c->np * sizeof *b);
  if (fk_capturing) return NULL;
  fk_eager_launches++;
  return fk_dm->launch(m, i, b);
}

static hlo_status fk_gemm(const backend_gemm *g, const void *a, const void *b, void *out) {
  fk_call *c = fk_record(1);
  if (!c) return status_new(HLO_INTERNAL, "fake: too many calls");
  c->g = *g, c->p[0] = (void *)(uintptr_t)a, c->p[1] = (void *)(uintptr_t)b, c->p[2] = out;
  if (fk_capturing) return NULL;
  fk_eager_gemms++;
  return fk_dm->gemm(g, a, b, out);
}

static hlo_status fk_copy_box(void *dst, const void *src, const backend_box *b) {
  fk_call *c = fk_record(2);
  if (!c) return status_new(HLO_INTERNAL, "fake: too many calls");
  c->box = *b, c->p[0] = dst, c->p[1] = (void *)(uintptr_t)src;
  return fk_capturing ? NULL : fk_dm->copy_box(dst, src, b);
}

static hlo_status fk_fill_box(void *dst, const void *v, const backend_box *b) {
  fk_call *c = fk_record(3);
  if (!c || b->esize > 16) return status_new(HLO_INTERNAL, "fake: too many calls");
  c->box = *b, c->p[0] = dst;
  memcpy(c->value, v, b->esize);
  return fk_capturing ? NULL : fk_dm->fill_box(dst, v, b);
}

static hlo_status fk_gather(void *out, const void *src, const void *idx, const backend_rows *r) {
  fk_call *c = fk_record(4);
  if (!c) return status_new(HLO_INTERNAL, "fake: too many calls");
  c->rows = *r, c->p[0] = out, c->p[1] = (void *)(uintptr_t)src, c->p[2] = (void *)(uintptr_t)idx;
  return fk_capturing ? NULL : fk_dm->gather_rows(out, src, idx, r);
}

static hlo_status fk_scatter(void *out, const void *upd, const void *idx, const backend_rows *r) {
  fk_call *c = fk_record(5);
  if (!c) return status_new(HLO_INTERNAL, "fake: too many calls");
  c->rows = *r, c->p[0] = out, c->p[1] = (void *)(uintptr_t)upd, c->p[2] = (void *)(uintptr_t)idx;
  return fk_capturing ? NULL : fk_dm->scatter_rows(out, upd, idx, r);
}

static void *fk_alloc(size_t n) {
  if (fk_capturing) fk_faults++;
  return fk_dm->alloc(n);
}
static void fk_free(void *p) {
  if (fk_capturing && p) fk_faults++;
  fk_dm->free(p);
}
static hlo_status fk_copy(void *d, const void *s, size_t n) {
  if (fk_capturing) fk_faults++;
  return fk_dm->copy(d, s, n);
}
static hlo_status fk_synchronize(void) {
  if (fk_capturing) fk_faults++;
  return fk_dm->synchronize();
}

static hlo_status fk_graph_begin(void) {
  if (fk_capturing) return status_new(HLO_INTERNAL, "fake: a capture in a capture");
  fk_capturing = true;
  fk_nrec = 0;
  fk_ncur = 0;
  return NULL;
}

static hlo_status fk_deps_get(void **nodes, size_t cap, size_t *n) {
  if (!fk_capturing || fk_cond_depth) return status_new(HLO_INVALID_ARGUMENT, "fake: no capture");
  for (int i = 0; i < fk_ncur && (size_t)i < cap; i++) nodes[i] = FK_NODE(fk_cur[i]);
  *n = (size_t)fk_ncur;
  return NULL;
}

static hlo_status fk_deps_set(void *const *nodes, size_t n) {
  if (!fk_capturing || fk_cond_depth) return status_new(HLO_INVALID_ARGUMENT, "fake: no capture");
  if (n > FK_MAX_CALLS) return status_new(HLO_INVALID_ARGUMENT, "fake: too many dependencies");
  for (size_t i = 0; i < n; i++) {
    uintptr_t v = (uintptr_t)nodes[i];
    if (v < 0x10000 || v >= 0x10000 + (uintptr_t)fk_nrec || !fk_rec[v - 0x10000].node) {
      fk_faults++;
      return status_new(HLO_INVALID_ARGUMENT, "fake: a dependency on no node of the capture");
    }
    fk_cur[i] = (int)(v - 0x10000);
  }
  fk_ncur = (int)n;
  return NULL;
}

static hlo_status fk_graph_end(void **graph) {
  *graph = NULL;
  if (!fk_capturing) return status_new(HLO_INTERNAL, "fake: no capture");
  fk_capturing = false;
  if (fk_cond_depth) {
    fk_cond_depth = 0;
    return status_new(HLO_INTERNAL, "fake: a conditional body left open");
  }
  if (fk_fail_end) return status_new(HLO_INTERNAL, "fake: the capture failed (test)");
  fk_graph *g = calloc(1, sizeof *g);
  g->c = malloc((size_t)(fk_nrec ? fk_nrec : 1) * sizeof *g->c);
  memcpy(g->c, fk_rec, (size_t)fk_nrec * sizeof *g->c);
  g->n = fk_nrec;
  fk_last_graph_calls = fk_nrec;
  fk_live_graphs++;
  *graph = g;
  return NULL;
}

static bool fk_cond_takes(const backend_cond *c) {
  return fk_cond_ok &&
         (c->kind == BACKEND_COND_WHILE || (c->kind == BACKEND_COND_IF && c->nbranches == 2) ||
          (c->kind == BACKEND_COND_SWITCH && c->nbranches >= 1)) &&
         (c->pred_size == 1 || c->pred_size == 2 || c->pred_size == 4 || c->pred_size == 8);
}

static hlo_status fk_cond_rec(int kind, const backend_cond *c) {
  if (!fk_capturing) return status_new(HLO_INVALID_ARGUMENT, "fake: a conditional node outside a capture");
  if (kind < 8 && !fk_cond_takes(c)) return status_new(HLO_UNAVAILABLE, "fake: no conditional nodes");
  if (kind == 7 && !fk_cond_depth) return status_new(HLO_INVALID_ARGUMENT, "fake: no body open");
  if ((kind == 8 || kind == 9) && !fk_cond_depth)
    return status_new(HLO_INVALID_ARGUMENT, "fake: no body open");
  fk_call *r = fk_record(kind);
  if (!r) return status_new(HLO_INTERNAL, "fake: too many calls");
  if (c) r->p[0] = (void *)(uintptr_t)c->pred, r->value[0] = (uint8_t)c->pred_size,
         r->value[1] = c->pred_bit, r->value[2] = (uint8_t)c->kind, r->value[3] = c->pred_signed,
         r->index = c->nbranches;
  fk_cond_depth += kind == 6 ? 1 : kind == 8 ? -1 : 0;
  return NULL;
}
static hlo_status fk_cond_next(void) { return fk_cond_rec(9, NULL); }
static hlo_status fk_cond_begin(const backend_cond *c) { return fk_cond_rec(6, c); }
static hlo_status fk_cond_set(const backend_cond *c) { return fk_cond_rec(7, c); }
static hlo_status fk_cond_end(void) { return fk_cond_rec(8, NULL); }

/* The condition a conditional record reads: its predicate, on the device. */
static uint64_t fk_pred_value(const fk_call *c) {
  uint8_t b[8] = {0};
  hlo_status st = fk_dm->copy(b, c->p[0], c->value[0]);
  CHECK(!st);
  hlo_status_free(st);
  uint64_t v = 0;
  for (int i = 0; i < c->value[0]; i++) v |= (uint64_t)b[i] << (8 * i);
  if (c->value[3] && c->value[0] < 8 && (v >> (8 * c->value[0] - 1)) & 1) /* sign-extended */
    v |= ~0ull << (8 * c->value[0]);
  return v;
}
static bool fk_pred(const fk_call *c) {
  uint64_t v = fk_pred_value(c);
  return c->value[1] ? (v & 1) : v != 0;
}
/* The body a SWITCH or IF node runs: stablehlo.case's clamp, if's order. */
static uint32_t fk_branch(const fk_call *c) {
  uint64_t v = fk_pred_value(c);
  uint32_t n = c->index;
  if (c->value[2] == BACKEND_COND_IF) return fk_pred(c) ? 0 : 1;
  if (c->value[3]) return (int64_t)v < 0 || (int64_t)v >= (int64_t)n ? n - 1 : (uint32_t)v;
  return v >= n ? n - 1 : (uint32_t)v;
}

static hlo_status fk_run_call(const fk_call *c) {
  switch (c->kind) {
  case 0: return fk_dm->launch(c->m, c->index, c->p);
  case 1: return fk_dm->gemm(&c->g, c->p[0], c->p[1], c->p[2]);
  case 2: return fk_dm->copy_box(c->p[0], c->p[1], &c->box);
  case 3: return fk_dm->fill_box(c->p[0], c->value, &c->box);
  case 4: return fk_dm->gather_rows(c->p[0], c->p[1], c->p[2], &c->rows);
  default: return fk_dm->scatter_rows(c->p[0], c->p[1], c->p[2], &c->rows);
  }
}

/* A graph without conditional records replayed in the topological order of
 * its edges that runs the last ready node first. */
static hlo_status fk_graph_launch_reordered(const fk_graph *g) {
  int n = g->n > 0 ? g->n : 0;
  bool *done = calloc((size_t)n + 1, sizeof *done);
  hlo_status st = NULL;
  for (int left = n; left > 0 && !st; left--) {
    int pick = -1;
    for (int i = n - 1; i >= 0 && pick < 0; i--) {
      if (done[i]) continue;
      const fk_call *c = &g->c[i];
      bool ready = true;
      for (int k = 0; k < (c->dep_all ? i : c->ndep) && ready; k++)
        ready = done[c->dep_all ? k : c->dep[k]];
      if (ready) pick = i;
    }
    if (pick < 0) {
      st = status_new(HLO_INTERNAL, "fake: a cycle in the graph");
      break;
    }
    done[pick] = true;
    st = fk_run_call(&g->c[pick]);
  }
  free(done);
  return st;
}

static hlo_status fk_graph_launch(void *graph) {
  fk_graph *g = graph;
  if (fk_capturing || !g) return status_new(HLO_INTERNAL, "fake: launch during a capture");
  fk_graph_launches++;
  bool conds = false;
  for (int i = 0; i < g->n; i++) conds |= g->c[i].kind >= 6 || !g->c[i].node;
  if (fk_reorder && !conds) return fk_graph_launch_reordered(g);
  bool again = false;
  for (int i = 0; i < g->n; i++) {
    const fk_call *c = &g->c[i];
    hlo_status st = NULL;
    if (c->kind >= 6) { /* a conditional WHILE node, run as the GPU runs it */
      int end = i, depth = 0;
      if (c->kind == 6 && c->value[2] != BACKEND_COND_WHILE) { /* to the start of body b */
        uint32_t b = fk_branch(c);
        for (int k = i + 1; b && k < g->n; k++) {
          if (g->c[k].kind == 9 && !depth && !--b) i = k;
          depth += g->c[k].kind == 6 ? 1 : g->c[k].kind == 8 ? -1 : 0;
        }
        fk_cond_iters++;
      } else if (c->kind == 9) { /* a body's end: after the node's end */
        for (i = i + 1; i < g->n && (g->c[i].kind != 8 || depth); i++)
          depth += g->c[i].kind == 6 ? 1 : g->c[i].kind == 8 ? -1 : 0;
      } else if (c->kind == 6) { /* its end */
        for (end = i + 1; end < g->n && (g->c[end].kind != 8 || depth); end++)
          depth += g->c[end].kind == 6 ? 1 : g->c[end].kind == 8 ? -1 : 0;
        if (!fk_pred(c)) i = end;
      } else if (c->kind == 7) {
        again = fk_pred(c);
        fk_cond_iters++;
      } else { /* an end: a WHILE's body again while its condition holds */
        int b = i - 1;
        for (depth = 0; b >= 0 && (g->c[b].kind != 6 || depth); b--)
          depth += g->c[b].kind == 8 ? 1 : g->c[b].kind == 6 ? -1 : 0;
        if (b >= 0 && g->c[b].value[2] == BACKEND_COND_WHILE && again) i = b;
        again = false;
      }
      continue;
    }
    switch (c->kind) {
    case 0: st = fk_dm->launch(c->m, c->index, c->p); break;
    case 1: st = fk_dm->gemm(&c->g, c->p[0], c->p[1], c->p[2]); break;
    case 2: st = fk_dm->copy_box(c->p[0], c->p[1], &c->box); break;
    case 3: st = fk_dm->fill_box(c->p[0], c->value, &c->box); break;
    case 4: st = fk_dm->gather_rows(c->p[0], c->p[1], c->p[2], &c->rows); break;
    default: st = fk_dm->scatter_rows(c->p[0], c->p[1], c->p[2], &c->rows); break;
    }
    if (st) return st;
  }
  return NULL;
}

static void fk_graph_destroy(void *graph) {
  fk_graph *g = graph;
  if (!g) return;
  fk_live_graphs--;
  free(g->c);
  free(g);
}

static const backend *fake_graph_backend(void) {
  fk_dm = backend_cpu_devmem();
  fk = *fk_dm;
  fk.name = "fake-graph";
  fk.launch = fk_launch, fk.gemm = fk_gemm, fk.copy_box = fk_copy_box;
  fk.fill_box = fk_fill_box, fk.gather_rows = fk_gather, fk.scatter_rows = fk_scatter;
  fk.alloc = fk_alloc, fk.free = fk_free, fk.copy = fk_copy, fk.synchronize = fk_synchronize;
  fk.graph_begin = fk_graph_begin, fk.graph_end = fk_graph_end;
  fk.graph_launch = fk_graph_launch, fk.graph_destroy = fk_graph_destroy;
  fk.graph_cond_takes = fk_cond_takes, fk.graph_cond_begin = fk_cond_begin;
  fk.graph_cond_set = fk_cond_set, fk.graph_cond_next = fk_cond_next;
  fk.graph_cond_end = fk_cond_end;
  fk.graph_deps_get = fk_deps_get, fk.graph_deps_set = fk_deps_set;
  return &fk;
}

/* An executable of @main of `text` on the fake backend (graphs off when
 * graphs_off: HLO_CUDA_GRAPHS=0 at its making), or NULL after printing
 * "skipped" (no C compiler) or failing a check. */
typedef struct gx_exec {
  hlo_module_ir *ir;
  interp *it;
  cpu_exec *x;
} gx_exec;

/* gx_make_on with the module first run through pass pipeline `passes`
 * (NULL: none; PASS_PIPELINE_CPU: fusion and while loops' known trip
 * counts, as `hlo run` compiles). */
static bool gx_make_piped(const char *text, bool graphs_off, const backend *be,
                          const char *passes, gx_exec *e) {
  memset(e, 0, sizeof *e);
  hlo_status st = NULL;
  e->ir = tl_parse_text("graph.mlir", text, TL_VERIFY, &st);
  CHECK(e->ir != NULL);
  if (e->ir && passes) {
    pass_pipeline_options po = {.pipeline = passes, .verify_each = true};
    st = pass_pipeline_run(e->ir, &po, NULL);
    CHECK(!st);
    if (st) {
      module_free(e->ir);
      e->ir = NULL;
    }
  }
  if (!e->ir) {
    hlo_status_print(st, stderr);
    hlo_status_free(st);
    return false;
  }
  interp_options io = {0};
  st = interp_create(e->ir, &io, &e->it);
  hlo_func *f = st ? NULL : module_find_func(e->ir, "main");
  cpu_exec_options o = {.cache_root = "off", .backend = be ? be : fake_graph_backend()};
  /* HLO_CUDA_GRAPHS: "0" for graphs_off, else not "0" ("verbose" kept);
   * the caller's value put back after */
  const char *env = getenv("HLO_CUDA_GRAPHS");
  char *saved = env ? strdup(env) : NULL;
  if (graphs_off) setenv("HLO_CUDA_GRAPHS", "0", 1);
  else if (saved && !strcmp(saved, "0")) unsetenv("HLO_CUDA_GRAPHS");
  if (!st && f) st = cpu_exec_create(e->it, f, &o, &e->x);
  if (saved) setenv("HLO_CUDA_GRAPHS", saved, 1);
  else unsetenv("HLO_CUDA_GRAPHS");
  free(saved);
  if (st && hlo_status_code_of(st) == HLO_UNAVAILABLE) {
    printf("graph replay: skipped: %s\n", hlo_status_message(st));
    hlo_status_free(st);
    return false;
  }
  CHECK(!st && f && e->x);
  if (st) hlo_status_print(st, stderr);
  hlo_status_free(st);
  if (!e->x) return false;
  /* the kernels' buffer counts, for the fake's recording */
  for (uint32_t pi = 0; pi < e->x->nprogs; pi++) {
    const program *p = &e->x->progs[pi];
    for (uint32_t i = 0; i < p->nsteps; i++)
      if (p->steps[i].kind == STEP_KERNEL && p->steps[i].kernel < FK_MAX_KERNELS)
        fk_nbufs[p->steps[i].kernel] = p->steps[i].nin + p->steps[i].nout;
  }
  return true;
}

static bool gx_make_on(const char *text, bool graphs_off, const backend *be, gx_exec *e) {
  return gx_make_piped(text, graphs_off, be, NULL, e);
}

static bool gx_make(const char *text, bool graphs_off, gx_exec *e) {
  return gx_make_on(text, graphs_off, NULL, e);
}

static void gx_free(gx_exec *e) {
  if (e->x) cpu_exec_destroy(e->x);
  if (e->it) interp_destroy(e->it);
  if (e->ir) module_free(e->ir);
}

static void gx_release_device(tensor_device *d) {
  const backend *be = d->backend;
  be->free(d->ptr);
  free(d);
}

/* A host tensor of @main's argument type `t` filled from seed, placed on
 * the device of `be` (NULL: the fake's) when on_device (as
 * hlo_executable_device_put does). */
static tensor *gx_arg_on(const hlo_type *t, uint64_t seed, bool on_device, const backend *be) {
  tensor *v = tensor_new(t);
  if (!v) return NULL;
  uint64_t s = seed;
  for (int64_t i = 0; i < v->num_elems; i++) {
    if (t->dtype == HLO_F32) ((float *)v->data)[i] = (float)tl_rand_in(&s, -40, 40) / 16.0f;
    else if (t->dtype == HLO_I32) ((int32_t *)v->data)[i] = (int32_t)tl_rand_in(&s, 0, 3);
  }
  if (on_device) {
    if (!be) be = &fk;
    tensor_device *d = malloc(sizeof *d);
    void *p = be->alloc(v->nbytes);
    hlo_status st = be->copy(p, v->data, v->nbytes);
    CHECK(d && p && !st);
    hlo_status_free(st);
    *d = (tensor_device){p, be, true, true, gx_release_device};
    v->device = d;
  }
  return v;
}

static tensor *gx_arg(const hlo_type *t, uint64_t seed, bool on_device) {
  return gx_arg_on(t, seed, on_device, NULL);
}

/* The bytes of result r (downloaded when only on the device) into a new
 * malloc'd buffer. */
static uint8_t *gx_bytes(const tensor *r) {
  uint8_t *b = malloc(r->nbytes ? r->nbytes : 1);
  if (!b) return NULL;
  if (r->device && !r->device->host_valid) {
    const backend *be = r->device->backend;
    hlo_status st = be->copy(b, r->device->ptr, r->nbytes);
    CHECK(!st);
    hlo_status_free(st);
  } else {
    memcpy(b, r->data, r->nbytes);
  }
  return b;
}

/* Runs e on args; 0 when every result's bytes equal want's (want[i]
 * NULL: stored there instead, malloc'd). */
static int gx_run(gx_exec *e, tensor **args, uint32_t nargs, uint8_t **want) {
  tensor **res = NULL;
  hlo_status st = cpu_exec_run(e->x, args, nargs, &res);
  CHECK(!st);
  if (st) {
    hlo_status_print(st, stderr);
    hlo_status_free(st);
    return 1;
  }
  int bad = 0;
  for (uint32_t i = 0; i < e->x->f->num_results; i++) {
    uint8_t *b = gx_bytes(res[i]);
    if (!want[i]) want[i] = b;
    else {
      bad |= memcmp(b, want[i], res[i]->nbytes) != 0;
      free(b);
    }
    tensor_release(res[i]);
  }
  free(res);
  return bad;
}

/* Writes the values of from[i] into to[i]'s host data and device buffer
 * (the same pointers, new contents). */
static void gx_set(tensor **to, tensor *const *from, uint32_t n) {
  for (uint32_t i = 0; i < n; i++) {
    memcpy(to[i]->data, from[i]->data, to[i]->nbytes);
    hlo_status st = fk.copy(to[i]->device->ptr, from[i]->data, to[i]->nbytes);
    CHECK(!st);
    hlo_status_free(st);
  }
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

static void gx_counters(const gx_exec *e, uint64_t c[5]) { cpu_dev_graph_counters(e->x, c); }

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

/* A scan: a while loop of a known trip count (4, found by the passes)
 * whose body reads row i of xs (dynamic_slice at the loop counter, read on
 * the device), multiplies by a weight (a gemm), and writes row i of its
 * output (dynamic_update_slice); then a pad by a constant. */
static const char *scan_program =
    "func.func @main(%xs: tensor<4x8xf32>, %h0: tensor<1x8xf32>, %w: tensor<8x8xf32>)\n"
    "    -> (tensor<1x8xf32>, tensor<4x8xf32>, tensor<1x10xf32>) {\n"
    "  %z = stablehlo.constant dense<0> : tensor<i32>\n"
    "  %one = stablehlo.constant dense<1> : tensor<i32>\n"
    "  %n = stablehlo.constant dense<TRIPS> : tensor<i32>\n"
    "  %zero = stablehlo.constant dense<0.0> : tensor<f32>\n"
    "  %o0 = stablehlo.constant dense<0.0> : tensor<4x8xf32>\n"
    "  %r:3 = stablehlo.while(%i = %z, %h = %h0, %o = %o0)\n"
    "      : tensor<i32>, tensor<1x8xf32>, tensor<4x8xf32>\n"
    "    cond {\n"
    "      %p = stablehlo.compare LT, %i, %n : (tensor<i32>, tensor<i32>) -> tensor<i1>\n"
    "      stablehlo.return %p : tensor<i1>\n"
    "    } do {\n"
    "      %k = stablehlo.remainder %i, %n4 : tensor<i32>\n"
    "      %x = stablehlo.dynamic_slice %xs, %k, %z, sizes = [1, 8]\n"
    "          : (tensor<4x8xf32>, tensor<i32>, tensor<i32>) -> tensor<1x8xf32>\n"
    "      %hw = stablehlo.dot_general %h, %w, contracting_dims = [1] x [0]\n"
    "          : (tensor<1x8xf32>, tensor<8x8xf32>) -> tensor<1x8xf32>\n"
    "      %s = stablehlo.add %hw, %x : tensor<1x8xf32>\n"
    "      %h2 = stablehlo.tanh %s : tensor<1x8xf32>\n"
    "      %o2 = stablehlo.dynamic_update_slice %o, %h2, %k, %z\n"
    "          : (tensor<4x8xf32>, tensor<1x8xf32>, tensor<i32>, tensor<i32>) -> tensor<4x8xf32>\n"
    "      %j = stablehlo.add %i, %one : tensor<i32>\n"
    "      stablehlo.return %j, %h2, %o2 : tensor<i32>, tensor<1x8xf32>, tensor<4x8xf32>\n"
    "    }\n"
    "  %pd = stablehlo.pad %r#1, %zero, low = [0, 1], high = [0, 1], interior = [0, 0]\n"
    "      : (tensor<1x8xf32>, tensor<f32>) -> tensor<1x10xf32>\n"
    "  return %r#1, %r#2, %pd : tensor<1x8xf32>, tensor<4x8xf32>, tensor<1x10xf32>\n"
    "}\n";

/* scan_program with its trip count `trips` (and, when trips_arg, the
 * bound read from a fourth argument instead: no known trip count), into
 * buf. */
static void scan_text(char *buf, size_t n, int trips, bool trips_arg) {
  char t[16];
  snprintf(t, sizeof t, "%d", trips);
  const char *src = scan_program;
  size_t k = 0;
  for (; *src && k + 64 < n; src++) {
    if (!strncmp(src, "TRIPS", 5)) {
      k += (size_t)snprintf(buf + k, n - k, "%s", t);
      src += 4;
    } else if (!strncmp(src, "%n4", 3)) { /* the rows: i mod 4 */
      k += (size_t)snprintf(buf + k, n - k, "%%four");
      src += 2;
    } else if (!strncmp(src, "  %n = ", 7) && trips_arg) {
      k += (size_t)snprintf(buf + k, n - k, "  %%unused = ");
      src += 6;
    } else if (!strncmp(src, "%w: tensor<8x8xf32>)", 20) && trips_arg) {
      k += (size_t)snprintf(buf + k, n - k, "%%w: tensor<8x8xf32>, %%n: tensor<i32>)");
      src += 19;
    } else if (!strncmp(src, "  %zero =", 9)) {
      k += (size_t)snprintf(buf + k, n - k, "  %%four = stablehlo.constant dense<4> : tensor<i32>\n");
      buf[k++] = *src;
    } else {
      buf[k++] = *src;
    }
  }
  buf[k] = 0;
}

/* Runs `text` (through PASS_PIPELINE_CPU) on the fake graph backend and
 * eagerly (HLO_CUDA_GRAPHS=0), nruns times on the same device arguments,
 * their values changed in place before the last run; every result
 * bit-identical to the eager executable's. c gets the graph executable's
 * counters; calls1, the calls its first run issued one by one (-1: not
 * logged); the eager log of that run stays in fk_elog. false when the
 * executables could not be made. */
static bool gx_compare_runs(const char *text, int nargs, int nruns, uint64_t c[5],
                            int *calls1) {
  gx_exec eager, g;
  if (!gx_make_piped(text, true, NULL, PASS_PIPELINE_CPU, &eager)) return false;
  if (!gx_make_piped(text, false, NULL, PASS_PIPELINE_CPU, &g)) {
    gx_free(&eager);
    return false;
  }
  tensor *args[4], *args2[4];
  const hlo_func *f = g.x->f;
  for (int i = 0; i < nargs; i++) {
    args[i] = gx_arg(f->body.block.args[i].type, 21 + (uint64_t)i, true);
    args2[i] = gx_arg(f->body.block.args[i].type, 201 + (uint64_t)i, true);
  }
  if (nargs == 4) { /* the trip count argument: 4, and 5 */
    *(int32_t *)args[3]->data = 4, *(int32_t *)args2[3]->data = 5;
    hlo_status st = fk.copy(args[3]->device->ptr, args[3]->data, 4);
    hlo_status st2 = fk.copy(args2[3]->device->ptr, args2[3]->data, 4);
    CHECK(!st && !st2);
    hlo_status_free(st);
    hlo_status_free(st2);
  }
  uint8_t *want[3] = {0}, *want2[3] = {0};
  CHECK_EQ_INT(gx_run(&eager, args, (uint32_t)nargs, want), 0);
  CHECK_EQ_INT(gx_run(&eager, args2, (uint32_t)nargs, want2), 0);
  *calls1 = -1;
  for (int run = 1; run <= nruns; run++) {
    if (run == nruns) gx_set(args, args2, (uint32_t)nargs);
    fk_eager_calls = 0;
    fk_logging = run == 1, fk_nelog = 0;
    CHECK_EQ_INT(gx_run(&g, args, (uint32_t)nargs, run == nruns ? want2 : want), 0);
    fk_logging = false;
    if (run == 1) *calls1 = fk_eager_calls;
  }
  gx_counters(&g, c);
  for (int i = 0; i < nargs; i++) {
    tensor_release(args[i]);
    tensor_release(args2[i]);
  }
  for (int i = 0; i < 3; i++) {
    free(want[i]);
    free(want2[i]);
  }
  gx_free(&g);
  gx_free(&eager);
  return true;
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

/* ---- conditional WHILE nodes (loops without a known trip count) ---- */

/* A Collatz loop (shared/models/while_collatz, its helpers inlined): the
 * trip count depends on the argument's value. */
static const char *collatz_program =
    "func.func @main(%n: tensor<i32>) -> (tensor<i32>, tensor<i32>) {\n"
    "  %c0 = stablehlo.constant dense<0> : tensor<i32>\n"
    "  %r:2 = stablehlo.while(%x = %n, %k = %c0) : tensor<i32>, tensor<i32>\n"
    "    cond {\n"
    "      %one = stablehlo.constant dense<1> : tensor<i32>\n"
    "      %p = stablehlo.compare NE, %x, %one, SIGNED : (tensor<i32>, tensor<i32>) -> tensor<i1>\n"
    "      stablehlo.return %p : tensor<i1>\n"
    "    } do {\n"
    "      %two = stablehlo.constant dense<2> : tensor<i32>\n"
    "      %zero = stablehlo.constant dense<0> : tensor<i32>\n"
    "      %one = stablehlo.constant dense<1> : tensor<i32>\n"
    "      %three = stablehlo.constant dense<3> : tensor<i32>\n"
    "      %m = stablehlo.remainder %x, %two : tensor<i32>\n"
    "      %e = stablehlo.compare EQ, %m, %zero, SIGNED : (tensor<i32>, tensor<i32>) -> tensor<i1>\n"
    "      %h = stablehlo.divide %x, %two : tensor<i32>\n"
    "      %t = stablehlo.multiply %three, %x : tensor<i32>\n"
    "      %t1 = stablehlo.add %t, %one : tensor<i32>\n"
    "      %nx = stablehlo.select %e, %h, %t1 : tensor<i1>, tensor<i32>\n"
    "      %k1 = stablehlo.add %k, %one : tensor<i32>\n"
    "      stablehlo.return %nx, %k1 : tensor<i32>, tensor<i32>\n"
    "    }\n"
    "  return %r#1, %r#0 : tensor<i32>, tensor<i32>\n"
    "}\n";

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

/* A case (shared/models/cond_switch with its selector computed on the
 * device) and an if: one graph with a SWITCH node (IF: two branches) whose
 * selector the device reads: run 1 issued call by call (the selector read
 * on the host), run 2 captured, runs 3.. launched without their steps,
 * each with another selector in the same buffer (out of range takes the
 * last branch); results the eager executable's, bit for bit. */
static const char *case_program =
    "func.func @main(%i: tensor<i32>, %x: tensor<5xf32>) -> tensor<5xf32> {\n"
    "  %one = stablehlo.constant dense<1> : tensor<i32>\n"
    "  %s = stablehlo.subtract %i, %one : tensor<i32>\n"
    "  %r = \"stablehlo.case\"(%s) ({\n"
    "    %a = stablehlo.sine %x : tensor<5xf32>\n"
    "    stablehlo.return %a : tensor<5xf32>\n"
    "  }, {\n"
    "    %a = stablehlo.cosine %x : tensor<5xf32>\n"
    "    %two = stablehlo.constant dense<2.0> : tensor<5xf32>\n"
    "    %b = stablehlo.multiply %a, %two : tensor<5xf32>\n"
    "    stablehlo.return %b : tensor<5xf32>\n"
    "  }, {\n"
    "    %a = stablehlo.multiply %x, %x : tensor<5xf32>\n"
    "    %b = stablehlo.multiply %a, %x : tensor<5xf32>\n"
    "    stablehlo.return %b : tensor<5xf32>\n"
    "  }) : (tensor<i32>) -> tensor<5xf32>\n"
    "  return %r : tensor<5xf32>\n"
    "}\n";
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
/* The last capture's DAG on the fake (x's counters and the fake's own
 * edges: top-level records and the records they follow) as text. */
static const char *fk_dag_text_d(const uint64_t d[5]) {
  static char buf[256];
  int edges = 0, roots = 0;
  for (int i = 0; i < fk_nrec; i++)
    if (fk_rec[i].node) edges += fk_rec[i].dep_all ? i : fk_rec[i].ndep, roots += !fk_rec[i].ndep;
  snprintf(buf, sizeof buf, "DAG %s: %llu nodes, %llu edges, critical path %llu, %llu barriers "
           "(the fake: %d edges, %d roots)", d[4] ? "on" : "off", (unsigned long long)d[0],
           (unsigned long long)d[1], (unsigned long long)d[2], (unsigned long long)d[3], edges,
           roots);
  return buf;
}

static const char *fk_dag_text(const cpu_exec *x) {
  uint64_t d[5];
  cpu_dev_graph_dag_counters(x, d);
  return fk_dag_text_d(d);
}

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

/* ---- the captured graph as a DAG (executable_cpu_device.c issue_dag) ----
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

static const char *dag_branches =
    "func.func @main(%a: tensor<256xf32>, %b: tensor<256xf32>) -> (tensor<256xf32>, "
    "tensor<256xf32>) {\n"
    "  %x = stablehlo.exponential %a : tensor<256xf32>\n"
    "  %x2 = stablehlo.multiply %x, %a : tensor<256xf32>\n"
    "  %y = stablehlo.exponential %b : tensor<256xf32>\n"
    "  %y2 = stablehlo.multiply %y, %b : tensor<256xf32>\n"
    "  return %x2, %y2 : tensor<256xf32>, tensor<256xf32>\n"
    "}\n";

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


/* ---- the runtime's graphs on the mock driver ---- */

#define MOCK(type, name) (*(type *)dlsym(mock, #name))

static void mock_release_device(tensor_device *d) {
  const backend *be = d->backend;
  be->free(d->ptr);
  free(d);
}

/* The kernels ('k' functions: ours) of mock_log[from, to) in *out (malloc'd),
 * their count returned. */
static int mock_kernel_log(void *mock, int from, int to, void **out) {
  const mock_rec *log = dlsym(mock, "mock_log");
  mock_rec *k = malloc((size_t)(to > from ? to - from : 1) * sizeof *k);
  int n = 0;
  for (int i = from; k && i < to; i++)
    if ((uintptr_t)log[i].f < 0x100000) k[n++] = log[i];
  *out = k;
  return n * (int)sizeof *k;
}

/* The runtime's graph replay on the CUDA backend over the mock driver
 * (kernels are not run: the launches are compared): run 1 launches each
 * kernel itself, run 2 captures them and launches the graph, run 3
 * launches the graph only; the kernels that run, with their buffers, are
 * the same each time, and nothing inside a capture breaks it. */
static void mock_runtime_graphs(const backend *be, void *mock) {
  static const char *text =
      "func.func @main(%a: tensor<64xf32>, %b: tensor<64xf32>)\n"
      "    -> (tensor<64xf32>, tensor<8x8xf32>) {\n"
      "  %e = stablehlo.exponential %a : tensor<64xf32>\n"
      "  %m = stablehlo.multiply %e, %b : tensor<64xf32>\n"
      "  %t = stablehlo.tanh %m : tensor<64xf32>\n"
      "  %n = stablehlo.negate %t : tensor<64xf32>\n"
      "  %r = stablehlo.reshape %m : (tensor<64xf32>) -> tensor<8x8xf32>\n"
      "  return %n, %r : tensor<64xf32>, tensor<8x8xf32>\n"
      "}\n";
  setenv("HLO_CACHE_DIR", "off", 1); /* the library units: no kernel cache */
  gx_exec e;
  if (!gx_make_on(text, false, be, &e)) return;
  tensor *args[2];
  for (int i = 0; i < 2; i++) {
    args[i] = tensor_new(e.x->f->body.block.args[i].type);
    CHECK(args[i] != NULL);
    if (!args[i]) return;
    tensor_device *d = malloc(sizeof *d);
    void *p = be->alloc(args[i]->nbytes);
    CHECK(d && p);
    *d = (tensor_device){p, be, false, true, mock_release_device};
    args[i]->device = d;
  }
  int faults = MOCK(int, mock_capture_faults), graphs0 = MOCK(int, mock_graph_launches);
  void *logs[3] = {0};
  int sizes[3] = {0};
  for (int run = 0; run < 3; run++) {
    int from = MOCK(int, mock_nlog);
    tensor **res = NULL;
    hlo_status st = cpu_exec_run(e.x, args, 2, &res);
    CHECK(!st);
    if (st) hlo_status_print(st, stderr);
    hlo_status_free(st);
    for (uint32_t i = 0; res && i < 2; i++) {
      CHECK(res[i]->device != NULL); /* left on the device */
      tensor_release(res[i]);
    }
    free(res);
    sizes[run] = mock_kernel_log(mock, from, MOCK(int, mock_nlog), &logs[run]);
    CHECK_EQ_INT(MOCK(int, mock_graph_launches) - graphs0, run);
  }
  CHECK(sizes[0] > 0);
  for (int run = 1; run < 3; run++)
    CHECK(sizes[run] == sizes[0] && logs[run] && !memcmp(logs[run], logs[0], (size_t)sizes[0]));
  CHECK_EQ_INT(MOCK(int, mock_capture_faults), faults);
  CHECK_EQ_INT(MOCK(int, mock_dag_faults), 0);
  uint64_t c[5];
  cpu_dev_graph_counters(e.x, c);
  CHECK_EQ_INT(c[0], 3);
  CHECK_EQ_INT(c[1], 1);
  CHECK_EQ_INT(c[2], 2);
  CHECK_EQ_INT(c[3], 0);
  /* the capture a DAG on the driver's dependency set: a tree (e, m, t, n
   * a chain, the library's copy of m beside t and n) */
  int launches = sizes[0] / (int)sizeof(mock_rec);
  CHECK_EQ_INT(MOCK(int, mock_dag_faults), 0);
  CHECK(MOCK(int, mock_dag_nodes) >= launches);
  CHECK_EQ_INT(MOCK(int, mock_nedges), MOCK(int, mock_dag_nodes) - 1);
  printf("mock_driver: graph replay: %d kernel launches a run, runs 2 and 3 by cuGraphLaunch; "
         "the capture: %d nodes, %d edges\n", launches, MOCK(int, mock_dag_nodes),
         MOCK(int, mock_nedges));
  for (int i = 0; i < 3; i++) free(logs[i]);
  for (int i = 0; i < 2; i++) tensor_release(args[i]);
  gx_free(&e);
  CHECK_EQ_INT(MOCK(int, mock_graphs), 0);
}

/* The runtime's graph replay of a while loop of a known trip count on the
 * CUDA backend over the mock driver: a scan (dynamic_slice of row i, a
 * kernel, dynamic_update_slice of row i: start indices read on the device
 * by the library's copy kernels) run 3 times: run 1 launches every kernel
 * itself, run 2 captures them all (the 5 iterations unrolled) and launches
 * the graph, run 3 launches the graph only; the kernels run (ours and the
 * library's, with their buffers and parameters) are the same each time. */
static void mock_runtime_loop_graph(const backend *be, void *mock) {
  static const char *text =
      "func.func @main(%xs: tensor<5x64xf32>, %h0: tensor<1x64xf32>)\n"
      "    -> (tensor<1x64xf32>, tensor<5x64xf32>) {\n"
      "  %z = stablehlo.constant dense<0> : tensor<i32>\n"
      "  %one = stablehlo.constant dense<1> : tensor<i32>\n"
      "  %n = stablehlo.constant dense<5> : tensor<i32>\n"
      "  %half = stablehlo.constant dense<0.5> : tensor<1x64xf32>\n"
      "  %o0 = stablehlo.constant dense<0.0> : tensor<5x64xf32>\n"
      "  %r:3 = stablehlo.while(%i = %z, %h = %h0, %o = %o0)\n"
      "      : tensor<i32>, tensor<1x64xf32>, tensor<5x64xf32>\n"
      "    cond {\n"
      "      %p = stablehlo.compare LT, %i, %n : (tensor<i32>, tensor<i32>) -> tensor<i1>\n"
      "      stablehlo.return %p : tensor<i1>\n"
      "    } do {\n"
      "      %x = stablehlo.dynamic_slice %xs, %i, %z, sizes = [1, 64]\n"
      "          : (tensor<5x64xf32>, tensor<i32>, tensor<i32>) -> tensor<1x64xf32>\n"
      "      %m = stablehlo.multiply %h, %half : tensor<1x64xf32>\n"
      "      %s = stablehlo.add %m, %x : tensor<1x64xf32>\n"
      "      %h2 = stablehlo.tanh %s : tensor<1x64xf32>\n"
      "      %o2 = stablehlo.dynamic_update_slice %o, %h2, %i, %z\n"
      "          : (tensor<5x64xf32>, tensor<1x64xf32>, tensor<i32>, tensor<i32>) -> tensor<5x64xf32>\n"
      "      %j = stablehlo.add %i, %one : tensor<i32>\n"
      "      stablehlo.return %j, %h2, %o2 : tensor<i32>, tensor<1x64xf32>, tensor<5x64xf32>\n"
      "    }\n"
      "  return %r#1, %r#2 : tensor<1x64xf32>, tensor<5x64xf32>\n"
      "}\n";
  setenv("HLO_CACHE_DIR", "off", 1);
  gx_exec e;
  if (!gx_make_piped(text, false, be, PASS_PIPELINE_CPU, &e)) return;
  tensor *args[2];
  for (int i = 0; i < 2; i++) {
    args[i] = tensor_new(e.x->f->body.block.args[i].type);
    CHECK(args[i] != NULL);
    if (!args[i]) return;
    tensor_device *d = malloc(sizeof *d);
    void *p = be->alloc(args[i]->nbytes);
    CHECK(d && p);
    *d = (tensor_device){p, be, false, true, mock_release_device};
    args[i]->device = d;
  }
  int faults = MOCK(int, mock_capture_faults), graphs0 = MOCK(int, mock_graph_launches);
  mock_rec *logs[3] = {0};
  int n[3] = {0};
  for (int run = 0; run < 3; run++) {
    int from = MOCK(int, mock_nlog), launches = MOCK(int, mock_launches);
    tensor **res = NULL;
    hlo_status st = cpu_exec_run(e.x, args, 2, &res);
    CHECK(!st);
    if (st) hlo_status_print(st, stderr);
    hlo_status_free(st);
    for (uint32_t i = 0; res && i < 2; i++) {
      CHECK(res[i]->device != NULL);
      tensor_release(res[i]);
    }
    free(res);
    n[run] = MOCK(int, mock_nlog) - from;
    CHECK_EQ_INT(MOCK(int, mock_launches) - launches, n[run]); /* the log kept them all */
    logs[run] = malloc((size_t)(n[run] ? n[run] : 1) * sizeof *logs[run]);
    if (logs[run])
      memcpy(logs[run], (const mock_rec *)dlsym(mock, "mock_log") + from, (size_t)n[run] * sizeof(mock_rec));
    CHECK_EQ_INT(MOCK(int, mock_graph_launches) - graphs0, run);
  }
  /* 5 iterations of a slice, a kernel and an update (the library's copy
   * kernels), and the loop's own fills / copies */
  CHECK(n[0] >= 5 * 3);
  int library = 0;
  for (int i = 0; logs[0] && i < n[0]; i++) library += (uintptr_t)logs[0][i].f >= 0x100000;
  CHECK(library >= 2 * 5);
  for (int run = 1; run < 3; run++)
    CHECK(n[run] == n[0] && logs[run] && logs[0] &&
          !memcmp(logs[run], logs[0], (size_t)n[0] * sizeof(mock_rec)));
  CHECK_EQ_INT(MOCK(int, mock_capture_faults), faults);
  CHECK_EQ_INT(MOCK(int, mock_dag_faults), 0);
  uint64_t c[5];
  cpu_dev_graph_counters(e.x, c);
  CHECK_EQ_INT(c[0], 3);
  CHECK_EQ_INT(c[1], 1);
  CHECK_EQ_INT(c[2], 2);
  CHECK_EQ_INT(c[3], 0);
  CHECK_EQ_INT(c[4], 1);
  CHECK_EQ_INT(MOCK(int, mock_dag_nodes), n[0]);
  printf("mock_driver: a loop of 5 iterations: %d launches a run (%d the library's), runs 2 and "
         "3 by one cuGraphLaunch; the capture: %d nodes, %d edges\n", n[0], library,
         MOCK(int, mock_dag_nodes), MOCK(int, mock_nedges));
  for (int i = 0; i < 3; i++) free(logs[i]);
  for (int i = 0; i < 2; i++) tensor_release(args[i]);
  gx_free(&e);
  CHECK_EQ_INT(MOCK(int, mock_graphs), 0);
}

/* A loop without a known trip count (the Collatz loop) on the CUDA backend
 * over the mock driver (kernels are not run: its memory is zeroed, so the
 * predicate reads false): run 1 is issued call by call (the predicate read
 * on the host: no iteration), run 2 captured: the cond's kernel, a handle,
 * the setter, the WHILE node and its body (the body's kernels, the cond's,
 * the setter, the copies back), then the copies out; run 3 launches the
 * graph. The node's parameters (a conditional WHILE of one body in the
 * context), the setter's (the handle, the i1 predicate) as the driver gets
 * them; nothing in the capture breaks it. HLO_CUDA_COND_GRAPHS=0: not
 * deferred. */
static void mock_runtime_cond_graph(const backend *be, void *mock) {
  setenv("HLO_CACHE_DIR", "off", 1);
  gx_exec e;
  if (!gx_make_piped(collatz_program, false, be, PASS_PIPELINE_CPU, &e)) return;
  tensor *arg = tensor_new(e.x->f->body.block.args[0].type);
  CHECK(arg != NULL);
  if (!arg) return;
  tensor_device *d = malloc(sizeof *d);
  void *p = be->alloc(arg->nbytes);
  CHECK(d && p);
  *d = (tensor_device){p, be, false, true, mock_release_device};
  arg->device = d;
  int faults = MOCK(int, mock_capture_faults), graphs0 = MOCK(int, mock_graph_launches);
  for (int run = 0; run < 3; run++) {
    tensor **res = NULL;
    hlo_status st = cpu_exec_run(e.x, &arg, 1, &res);
    CHECK(!st);
    if (st) hlo_status_print(st, stderr);
    hlo_status_free(st);
    for (uint32_t i = 0; res && i < 2; i++) tensor_release(res[i]);
    free(res);
    CHECK_EQ_INT(MOCK(int, mock_graph_launches) - graphs0, run);
    if (run == 1) {
      const char *tr = (const char *)dlsym(mock, "mock_trace");
      const char *w = strstr(tr, "HSW{");
      CHECK(w != NULL && w > tr && w[-1] == 'k'); /* the cond's kernel first */
      const char *set = w ? strchr(w + 4, 'S') : NULL, *end = w ? strchr(w + 4, '}') : NULL;
      CHECK(set && end && set < end);
      int body = 0;
      for (const char *c = w ? w + 4 : tr; set && c < set; c++) body += *c == 'b';
      CHECK(body >= 2); /* the body's kernels and the cond's */
      CHECK(set && set[1] == 'b'); /* a copy back into a carried slot */
      CHECK(end && end[1] == 'k' && !strchr(end, 'W')); /* the copies out; one node */
      printf("mock_driver: a loop without a known trip count: the capture %s (k kernel, H "
             "handle, S setter, W{ a WHILE node's body, })\n", tr);
    }
  }
  CHECK_EQ_INT(MOCK(int, mock_node_type), CU_GRAPH_NODE_TYPE_CONDITIONAL);
  CHECK_EQ_INT(MOCK(int, mock_node_cond_type), CU_GRAPH_COND_TYPE_WHILE);
  CHECK_EQ_INT(MOCK(int, mock_node_size), 1);
  CHECK_EQ_INT(MOCK(int, mock_nodes), 1);
  CHECK_EQ_INT(MOCK(int, mock_ptx_modules), 1);
  CHECK(MOCK(unsigned long long, mock_set_handle) == MOCK(unsigned long long, mock_handles));
  CHECK_EQ_INT(MOCK(unsigned, mock_set_size), 1);
  CHECK_EQ_INT(MOCK(unsigned, mock_set_bit), 1);
  CHECK(MOCK(void *, mock_set_pred) != NULL);
  CHECK_EQ_INT(MOCK(int, mock_capture_faults), faults);
  CHECK_EQ_INT(MOCK(int, mock_dag_faults), 0);
  uint64_t c[5], cc[2];
  cpu_dev_graph_counters(e.x, c);
  cpu_dev_graph_cond_counters(e.x, cc);
  CHECK_EQ_INT(c[0], 3);
  CHECK_EQ_INT(c[1], 1);
  CHECK_EQ_INT(c[2], 2);
  CHECK_EQ_INT(c[3], 0);
  CHECK_EQ_INT(cc[1], 1);
  tensor_release(arg); /* its type is e's */
  gx_free(&e);
  /* a case of three branches: a SWITCH node of three bodies */
  if (gx_make_piped(case_program, false, be, PASS_PIPELINE_CPU, &e)) {
    tensor *cargs[2];
    for (int i = 0; i < 2; i++) {
      cargs[i] = tensor_new(e.x->f->body.block.args[i].type);
      tensor_device *cd = malloc(sizeof *cd);
      void *cp = cargs[i] ? be->alloc(cargs[i]->nbytes) : NULL;
      CHECK(cargs[i] && cd && cp);
      *cd = (tensor_device){cp, be, false, true, mock_release_device};
      cargs[i]->device = cd;
    }
    for (int run = 0; run < 3; run++) {
      tensor **res = NULL;
      hlo_status st = cpu_exec_run(e.x, cargs, 2, &res);
      CHECK(!st);
      if (st) hlo_status_print(st, stderr);
      hlo_status_free(st);
      if (res) tensor_release(res[0]);
      free(res);
      if (run == 1) {
        const char *tr = (const char *)dlsym(mock, "mock_trace");
        const char *w = strstr(tr, "HIXW{");
        CHECK(w != NULL);
        int bodies = 0, ends = 0;
        for (const char *q = w ? w : tr; *q; q++) bodies += *q == '{', ends += *q == '}';
        CHECK_EQ_INT(bodies, 3);
        CHECK_EQ_INT(ends, 3);
        printf("mock_driver: a case of three branches: the capture %s (I the index setter, XW "
               "a SWITCH node)\n", tr);
      }
    }
    CHECK_EQ_INT(MOCK(int, mock_node_cond_type), CU_GRAPH_COND_TYPE_SWITCH);
    CHECK_EQ_INT(MOCK(int, mock_node_size), 3);
    CHECK_EQ_INT(MOCK(unsigned, mock_index_mode), 2); /* a signed index */
    CHECK_EQ_INT(MOCK(unsigned, mock_index_n), 3);
    CHECK_EQ_INT(MOCK(unsigned, mock_set_size), 4);
    CHECK_EQ_INT(MOCK(int, mock_capture_faults), faults);
    CHECK_EQ_INT(MOCK(int, mock_dag_faults), 0);
  CHECK_EQ_INT(MOCK(int, mock_dag_faults), 0);
    cpu_dev_graph_counters(e.x, c);
    CHECK_EQ_INT(c[1], 1);
    CHECK_EQ_INT(c[3], 0);
    for (int i = 0; i < 2; i++) tensor_release(cargs[i]);
    gx_free(&e);
  }
  setenv("HLO_CUDA_COND_GRAPHS", "0", 1);
  bool made = gx_make_piped(collatz_program, false, be, PASS_PIPELINE_CPU, &e);
  unsetenv("HLO_CUDA_COND_GRAPHS");
  if (made) {
    tensor **res = NULL;
    arg = tensor_new(e.x->f->body.block.args[0].type);
    tensor_device *d2 = malloc(sizeof *d2);
    void *p2 = arg ? be->alloc(arg->nbytes) : NULL;
    CHECK(arg && d2 && p2);
    *d2 = (tensor_device){p2, be, false, true, mock_release_device};
    arg->device = d2;
    hlo_status st = cpu_exec_run(e.x, &arg, 1, &res);
    CHECK(!st);
    hlo_status_free(st);
    for (uint32_t i = 0; res && i < 2; i++) tensor_release(res[i]);
    free(res);
    cpu_dev_graph_counters(e.x, c);
    CHECK_EQ_INT(c[0], 0);
    tensor_release(arg);
    gx_free(&e);
  }
  CHECK_EQ_INT(MOCK(int, mock_graphs), 0);
}

/* Checks, in the child whose HLO_CUDA_LIB is the mock: the runtime's graphs
 * of kernels, of a loop of a known trip count and of conditional nodes.
 * Exit status: 0 passed, 1 failed, 3 skipped. */
/* The DAG on the CUDA backend over the mock driver: two independent
 * branches (dag_branches) captured on run 2 through graph_deps_get / _set
 * (cuStreamGetCaptureInfo_v3, cuStreamUpdateCaptureDependencies_v2, an
 * empty set for the second branch's root): the capture's nodes are two
 * chains, no edge between them. */
static void mock_runtime_dag(const backend *be, void *mock) {
  gx_exec e;
  if (!gx_make_on(dag_branches, false, be, &e)) return;
  tensor *args[2];
  for (int i = 0; i < 2; i++) {
    args[i] = tensor_new(e.x->f->body.block.args[i].type);
    CHECK(args[i] != NULL);
    if (!args[i]) return;
    tensor_device *d = malloc(sizeof *d);
    void *p = be->alloc(args[i]->nbytes);
    CHECK(d && p);
    *d = (tensor_device){p, be, false, true, mock_release_device};
    args[i]->device = d;
  }
  int graphs0 = MOCK(int, mock_graph_launches);
  for (int run = 0; run < 3; run++) {
    tensor **res = NULL;
    hlo_status st = cpu_exec_run(e.x, args, 2, &res);
    CHECK(!st);
    if (st) hlo_status_print(st, stderr);
    hlo_status_free(st);
    for (uint32_t i = 0; res && i < 2; i++) tensor_release(res[i]);
    free(res);
  }
  CHECK_EQ_INT(MOCK(int, mock_graph_launches) - graphs0, 2);
  int nodes = MOCK(int, mock_dag_nodes), nedges = MOCK(int, mock_nedges);
  const int *from = dlsym(mock, "mock_edge_from"), *to = dlsym(mock, "mock_edge_to");
  CHECK(from && to);
  CHECK_EQ_INT(MOCK(int, mock_dag_faults), 0);
  CHECK_EQ_INT(nodes, 4);
  CHECK_EQ_INT(nedges, 2);
  int indeg[64] = {0};
  for (int i = 0; from && to && i < nedges; i++)
    if (to[i] >= 0 && to[i] < 64) indeg[to[i]]++;
  int roots = 0;
  for (int i = 0; i < nodes && i < 64; i++) roots += !indeg[i];
  CHECK_EQ_INT(roots, 2);
  printf("mock_driver: two branches: the capture: %d nodes, %d edges, %d roots\n", nodes, nedges,
         roots);
  for (int i = 0; i < 2; i++) tensor_release(args[i]);
  gx_free(&e);
  CHECK_EQ_INT(MOCK(int, mock_graphs), 0);
}

static int mock_checks(const char *lib) {
  const backend *be = NULL;
  hlo_status st = backend_cuda(&be);
  if (st) {
    bool skip = !strstr(hlo_status_message(st), "mock");
    printf("mock_driver: %s: %s\n", skip ? "skipped" : "failed", hlo_status_message(st));
    hlo_status_free(st);
    return skip ? 3 : 1;
  }
  void *mock = dlopen(lib, RTLD_NOW | RTLD_NOLOAD);
  CHECK(mock != NULL);
  if (!mock) return 1;
  mock_runtime_graphs(be, mock);
  mock_runtime_loop_graph(be, mock);
  mock_runtime_cond_graph(be, mock);
  mock_runtime_dag(be, mock);
  dlclose(mock);
  return test_failed_checks ? 1 : 0;
}

/* The child: the start is once per process, so the mock's checks run in a
 * fresh process, this binary run again (/proc/self/exe) with
 * HLO_CUDA_GRAPH_CHILD=1 and HLO_CUDA_LIB the mock; a constructor runs
 * them before main and exits with their status. */
__attribute__((constructor)) static void child_main(void) {
  const char *c = getenv("HLO_CUDA_GRAPH_CHILD"), *lib = getenv("HLO_CUDA_LIB");
  if (!c || !lib) return;
  int rc = mock_checks(lib);
  fflush(stdout);
  fflush(stderr);
  exit(rc); /* not _exit: LeakSanitizer checks the child too */
}

TEST(mock_driver) {
  char lib[4096];
  bool have = cuda_mock_path("mock_driver", lib, sizeof lib);
  CHECK(have);
  if (!have) return;
  fflush(stdout);
  fflush(stderr);
  pid_t pid = fork();
  CHECK(pid >= 0);
  if (pid == 0) {
    setenv("HLO_CUDA_GRAPH_CHILD", "1", 1);
    setenv("HLO_CUDA_LIB", lib, 1);
    char *argv[] = {(char *)"test_cuda_graph", NULL};
    execv("/proc/self/exe", argv);
    _exit(99);
  }
  int ws = 0;
  CHECK(pid > 0 && waitpid(pid, &ws, 0) == pid);
  int rc = WIFEXITED(ws) ? WEXITSTATUS(ws) : 100 + (WIFSIGNALED(ws) ? WTERMSIG(ws) : 0);
  if (rc != 0 && rc != 3) fprintf(stderr, "mock_driver: the child exited with %d\n", rc);
  CHECK(rc == 0 || rc == 3);
}

TEST_MAIN()
