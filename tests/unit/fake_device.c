/* fake_device.c — the fake graph device of the runtime's CUDA graph tests
 * and executables on it (fake_device.h says what it is). */
#include "fake_device.h"
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "passes/pass_manager.h"
#include "testlib.h"

/* ---- checks: counted in the test file's counters (test.h's) ---- */

static int fd_failed_none, fd_cur_none; /* before fd_count_checks_in */
static int *fd_failed_checks = &fd_failed_none, *fd_cur_failed = &fd_cur_none;

void fd_count_checks_in(int *failed_checks, int *cur_failed) {
  fd_failed_checks = failed_checks;
  fd_cur_failed = cur_failed;
}

/* test.h's checks, on the bound counters */
#define TEST_FAIL() (++*fd_failed_checks, *fd_cur_failed = 1)
#include "test.h"

/* ---- the fake graph backend ---- */

backend fk;                    /* the fake table */
static const backend *fk_dm;   /* cpu-devmem */
static bool fk_capturing;
bool fk_fail_end;
fk_call fk_rec[FK_MAX_CALLS];  /* the capture's calls */
int fk_nrec;
bool fk_logging;               /* eager calls logged too (fk_elog) */
fk_call fk_elog[FK_MAX_CALLS];
int fk_nelog;
static uint32_t fk_nbufs[FK_MAX_KERNELS]; /* buffers of each kernel, from the executable's steps */
int fk_faults, fk_live_graphs, fk_graph_launches, fk_last_graph_calls;
int fk_eager_launches, fk_eager_gemms, fk_eager_calls; /* work run outside graphs */
bool fk_cond_ok;               /* graph_cond_takes' answer (off: as a driver < 12.4) */
int fk_cond_depth, fk_cond_iters; /* bodies open in the capture; iterations run */

/* A captured graph: its records. */
typedef struct fk_graph {
  fk_call *c;
  int n;
} fk_graph;
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

/* ---- executables on it ---- */

/* gx_make_on with the module first run through pass pipeline `passes`
 * (NULL: none; PASS_PIPELINE_CPU: fusion and while loops' known trip
 * counts, as `hlo run` compiles). */
bool gx_make_piped(const char *text, bool graphs_off, const backend *be,
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

bool gx_make_on(const char *text, bool graphs_off, const backend *be, gx_exec *e) {
  return gx_make_piped(text, graphs_off, be, NULL, e);
}

bool gx_make(const char *text, bool graphs_off, gx_exec *e) {
  return gx_make_on(text, graphs_off, NULL, e);
}

void gx_free(gx_exec *e) {
  if (e->x) cpu_exec_destroy(e->x);
  if (e->it) interp_destroy(e->it);
  if (e->ir) module_free(e->ir);
}

/* tensor_device.release of a device copy of its own (gx_arg_on). */
void gx_release_device(tensor_device *d) {
  const backend *be = d->backend;
  be->free(d->ptr);
  free(d);
}

/* A host tensor of @main's argument type `t` filled from seed, placed on
 * the device of `be` (NULL: the fake's) when on_device (as
 * hlo_executable_device_put does). */
tensor *gx_arg_on(const hlo_type *t, uint64_t seed, bool on_device, const backend *be) {
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

tensor *gx_arg(const hlo_type *t, uint64_t seed, bool on_device) {
  return gx_arg_on(t, seed, on_device, NULL);
}

/* The bytes of result r (downloaded when only on the device) into a new
 * malloc'd buffer. */
uint8_t *gx_bytes(const tensor *r) {
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
int gx_run(gx_exec *e, tensor **args, uint32_t nargs, uint8_t **want) {
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
void gx_set(tensor **to, tensor *const *from, uint32_t n) {
  for (uint32_t i = 0; i < n; i++) {
    memcpy(to[i]->data, from[i]->data, to[i]->nbytes);
    hlo_status st = fk.copy(to[i]->device->ptr, from[i]->data, to[i]->nbytes);
    CHECK(!st);
    hlo_status_free(st);
  }
}

void gx_counters(const gx_exec *e, uint64_t c[5]) { cpu_dev_graph_counters(e->x, c); }

/* Runs `text` (through PASS_PIPELINE_CPU) on the fake graph backend and
 * eagerly (HLO_CUDA_GRAPHS=0), nruns times on the same device arguments,
 * their values changed in place before the last run; every result
 * bit-identical to the eager executable's. c gets the graph executable's
 * counters; calls1, the calls its first run issued one by one (-1: not
 * logged); the eager log of that run stays in fk_elog. false when the
 * executables could not be made. */
bool gx_compare_runs(const char *text, int nargs, int nruns, uint64_t c[5], int *calls1) {
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

/* The last capture's DAG on the fake (x's counters and the fake's own
 * edges: top-level records and the records they follow) as text. */
const char *fk_dag_text_d(const uint64_t d[5]) {
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

const char *fk_dag_text(const cpu_exec *x) {
  uint64_t d[5];
  cpu_dev_graph_dag_counters(x, d);
  return fk_dag_text_d(d);
}

/* ---- programs more than one test file runs ---- */

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
void scan_text(char *buf, size_t n, int trips, bool trips_arg) {
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

/* A Collatz loop (shared/models/while_collatz, its helpers inlined): the
 * trip count depends on the argument's value. */
const char *const collatz_program =
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

/* A case of three branches on its argument minus one (sine, 2 cosine,
 * cube). */
const char *const case_program =
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

/* Two independent branches: exp then multiply, of each argument. */
const char *const dag_branches =
    "func.func @main(%a: tensor<256xf32>, %b: tensor<256xf32>) -> (tensor<256xf32>, "
    "tensor<256xf32>) {\n"
    "  %x = stablehlo.exponential %a : tensor<256xf32>\n"
    "  %x2 = stablehlo.multiply %x, %a : tensor<256xf32>\n"
    "  %y = stablehlo.exponential %b : tensor<256xf32>\n"
    "  %y2 = stablehlo.multiply %y, %b : tensor<256xf32>\n"
    "  return %x2, %y2 : tensor<256xf32>, tensor<256xf32>\n"
    "}\n";
