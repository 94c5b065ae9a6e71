/* executable_cpu_device.c — the executable on a backend whose buffers live
 * in memory of their own (backend.device_memory: a GPU, or the testing
 * backend cpu-devmem). The CPU path (device_memory false) never calls in
 * here: x->dev is NULL and every step runs on host buffers as before.
 *
 * Design. The executable keeps its host data structures as they are (the
 * host arena of program 0 with its regions' slices, heap tensors,
 * constants, the caller's arguments): on a device backend they are the
 * HOST MIRROR. Each piece of memory a device step touches also has a
 * device copy, and a validity state per piece (valid on the host, on the
 * device, or both), tracked by MEMORY, not by value name, so that the
 * runtime's aliasing (reshapes over their operand's bytes, in-place
 * kernels, a while body writing over its carried value, loop state slots)
 * needs no extra rule:
 *   - the arena: one device arena of the host arena's size and layout (a
 *     value at host offset o is at device offset o), with a state byte per
 *     64-byte granule (buffer assignment places slots at multiples of 64,
 *     so two live values never share a granule);
 *   - a tensor (argument, heap value, constant): an ENTRY {host data,
 *     bytes, device buffer, state}, made the first time a device step
 *     reads or writes it, holding a reference to the tensor so that its
 *     host memory (the entry's key) cannot be freed and reused while the
 *     entry lives. Entries are dropped once they hold the last reference
 *     (after each step), and all but the constants' at the end of a run.
 *     Constants are uploaded once, at compile time (pinned entries).
 * A device step (kernel, gemm; conv, window, sort when the backend has
 * the slot; data movement — dynamic_slice, dynamic_update_slice, pad,
 * splat fills, row gather / scatter — when it has copy_box, fill_box,
 * gather_rows, scatter_rows, after downloading only the few bytes of start
 * indices or pad value — none for the start indices when the backend's
 * copy_box reads them on the device, dyn_box) takes device pointers: its inputs are uploaded
 * where the device copy is stale (cpu_dev_in), its outputs marked valid on
 * the device only (cpu_dev_out). Every other step (interpreter thunks,
 * while/case predicates, the host forms of the above) runs on the host
 * mirror: its inputs are downloaded where the host copy is stale
 * (cpu_dev_host_in), its outputs marked valid on the host only
 * (cpu_dev_host_out). Copies between buffers (cpu_dev_copy) run device to
 * device when the source is valid there. So a program of device steps
 * only copies its arguments in and its results out; a while loop's
 * predicate is one small download per iteration (none with a known trip
 * count: passes/while_loop_trip_count.c).
 *
 * Arguments and results that stay on the device: an argument tensor
 * carrying a device copy of this backend (tensor.device: a caller's
 * hlo_buffer from hlo_executable_device_put or an earlier run) is
 * registered before the run as a LENT entry (valid on the device, its
 * device memory the caller's, never freed here: cpu_dev_begin_run); after
 * the run a result whose bytes are in a device buffer of its own is handed
 * that buffer (cpu_dev_result: tensor.device, owned), so neither is
 * copied.
 *
 * Graph replay (a backend with the graph_* slots: CUDA graphs). Small
 * programs are bound by the cost of launching each kernel and library
 * call, so a run of program 0 that is device work only is recorded once
 * and replayed with one graph launch. Eligible: a program with no region
 * (no while / case / if) whose steps are kernels, gemms (no epilogue),
 * conv / window / sort calls, aliases and the data movement that reads
 * nothing on the host (fills, row gather / scatter on the backend: not
 * dynamic_slice, dynamic_update_slice or pad, whose start indices or
 * padding value the host reads), with at least two calls more than results
 * (a replay costs a launch and a copy per result), run without --profile
 * or --check, HLO_CUDA_GRAPHS not "0" when the executable was made
 * ("verbose": each capture, and why one failed, told on stderr).
 * Arguments that are device buffers of this backend are read in place;
 * the others are uploaded before the run into graph buffers (below), so
 * that their device pointers too are the same run after run (as an eager
 * run uploads them, once each). Such a run is DEFERRED (graph_defer):
 * x->be is switched to a shadow table whose work slots record each call
 * (the pointers and parameters: launch, gemm, conv, ..., and device to
 * device copies) instead of enqueueing it, while the host side of the run
 * goes on as before; buffers the run would allocate for its tensors come
 * from the executable's GRAPH BUFFERS (the k-th allocation of the run the
 * k-th buffer, kept across runs: a result is then copied out of it into a
 * buffer of its own when handed to the caller, cpu_dev_result) and frees
 * wait until the calls are issued. When the steps are done (graph_flush:
 * the first result handed over) the calls are issued: with one graph
 * launch when a graph captured earlier recorded exactly the same calls
 * (same kernels, parameters and pointers: arguments, arena, constants,
 * graph buffers); else, from the second deferred run on (the first warms
 * the libraries up: cuBLASLt's plans, NVRTC units), captured into a new
 * graph (graph_begin, the calls, graph_end; GRAPH_SLOTS kept, the oldest
 * replaced; GRAPH_MAX_CAPTURES per executable) and launched; else one by
 * one as before. A capture that fails issues the calls one by one: the
 * run is right either way. Anything that must touch memory on the host
 * during a deferred run (an upload, a download: not expected in an
 * eligible program) first issues the calls so far one by one and ends
 * the deferral for the run. A graph replays exactly the calls it
 * recorded, so its results are the eager ones, bit for bit. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "runtime/executable_cpu_internal.h"
#include "support/runmap.h"

enum { ON_HOST = 1, ON_DEV = 2 };

typedef struct dev_entry {
  uint8_t *host;        /* the host mirror (key): a tensor's data */
  size_t bytes;
  uint8_t *dev;         /* its device buffer (backend alloc) */
  uint8_t state;        /* ON_HOST | ON_DEV */
  bool pinned;          /* a constant's: kept for the executable's life */
  bool lent;            /* dev is not the entry's to free: an argument's device copy (the
                           caller's), a graph buffer, a result's (handed over) */
  bool gbuf;            /* dev is a graph buffer (copied out when a result) */
  tensor *owner;        /* a reference: keeps `host` allocated */
} dev_entry;

/* ---- graph replay (the design: the header comment) ---- */

enum {
  GRAPH_SLOTS = 4,          /* captured graphs kept per executable */
  GRAPH_MAX_CAPTURES = 8,   /* captures per executable, failed ones included */
};

/* The kinds of a recorded call: the backend's work slots, and a device to
 * device copy (issued as copy_box). */
typedef enum gcall_kind {
  GC_LAUNCH, GC_GEMM, GC_CONV, GC_REDUCE_WINDOW, GC_SELECT_SCATTER, GC_SORT, GC_COPY_BOX,
  GC_FILL_BOX, GC_GATHER, GC_SCATTER, GC_COPY,
} gcall_kind;

/* One recorded call. Zeroed before it is filled field by field, so that
 * two records of the same call compare equal byte for byte (memcmp). */
typedef struct gcall {
  uint32_t kind;            /* gcall_kind */
  uint32_t index;           /* GC_LAUNCH: the kernel */
  uint32_t ptr0, nptr;      /* its pointers: glist.p[ptr0 .. ptr0 + nptr) */
  uint32_t nin;             /* GC_SORT: inputs (then as many outputs) */
  uint32_t pad_;
  backend_module *mod;      /* GC_LAUNCH: the module */
  const void *desc;         /* the conv, window or sort descriptor (the step's) */
  uint64_t bytes;           /* GC_COPY */
  union {
    backend_gemm g;
    backend_box box;
    backend_rows rows;
  } u;
  uint8_t value[16];        /* GC_FILL_BOX: the element */
} gcall;

typedef struct glist {
  gcall *c;
  uint32_t n, cap;
  void **p;
  uint32_t np, capp;
} glist;

typedef struct gslot {
  void *exec;               /* the backend's graph (NULL: empty slot) */
  glist calls;              /* what it recorded */
  uint64_t used;            /* the run that last launched it (replacement: the oldest) */
} gslot;

typedef struct gbuffer {
  void *p;
  size_t bytes;
} gbuffer;

typedef struct graph_state {
  bool enabled;             /* the backend has graphs, HLO_CUDA_GRAPHS is not 0 */
  bool verbose;             /* HLO_CUDA_GRAPHS=verbose: each capture told on stderr */
  bool checked, eligible;   /* program 0 is device work only (graph_eligible) */
  bool deferring;           /* this run's work calls are being recorded */
  bool warm;                /* a deferred run was issued (the libraries are set up) */
  uint32_t *knbufs;         /* buffers of each kernel (inputs + outputs), by index */
  uint32_t nk;
  glist calls;              /* the run's recorded calls */
  gslot slot[GRAPH_SLOTS];
  gbuffer *gb;              /* graph buffers, by allocation order in a run */
  uint32_t ngb, k;          /* how many; the next one of this run */
  void **dfree;             /* frees deferred to the issue */
  uint32_t ndfree, capdfree;
  uint64_t runs, captures, launches, failures;
  backend shadow;           /* x->be while deferring */
} graph_state;

struct cpu_dev {
  uint8_t *arena;       /* the device arena (progs[0].temp_bytes, rounded up) */
  uint8_t *host_arena;  /* progs[0].arena when the device arena was made */
  size_t arena_bytes;
  /* the state (ON_HOST | ON_DEV) of each 64-byte granule of the arena, as
   * runs (support/runmap.h): a step's bookkeeping costs O(runs), not
   * O(bytes / 64) (a 128 MiB buffer is 2M granules, one run) */
  runmap granules;
  dev_entry *e;
  uint32_t n, cap;
  void *empty;          /* a device pointer for zero-byte buffers */
  const backend *real;  /* the backend (x->be but while a run is deferred) */
  graph_state g;
};

#define GRANULE 64

static hlo_status graph_flush(cpu_exec *x, bool allow_graph);

/* An upload (or a copy between device buffers) on the backend; a deferred
 * run's calls are issued first (graph replay: order). */
static hlo_status be_copy(cpu_exec *x, void *dst, const void *src, size_t n) {
  if (!n) return NULL;
  if (x->dev->g.deferring) HLO_TRY(graph_flush(x, false));
  return x->dev->real->copy(dst, src, n);
}

/* A download: the device's queued work first (launches may be
 * asynchronous; the host reads what they wrote). */
static hlo_status be_download(cpu_exec *x, void *dst, const void *src, size_t n) {
  if (!n) return NULL;
  if (x->dev->g.deferring) HLO_TRY(graph_flush(x, false));
  HLO_TRY(x->dev->real->synchronize());
  return x->dev->real->copy(dst, src, n);
}

/* ---- graph replay: recording, issuing, capturing ---- */

/* The executable whose run is deferred on this thread (the shadow table's
 * slots take no context; a run is one thread's, start to end). */
static _Thread_local cpu_exec *g_rec;

/* Appends call *c with pointers p[0..np) to l. Errors: out of memory. */
static hlo_status glist_add(glist *l, const gcall *c, const void *const *p, uint32_t np) {
  if (l->n == l->cap) {
    uint32_t cap = l->cap ? 2 * l->cap : 32;
    gcall *nc = realloc(l->c, cap * sizeof *nc);
    if (!nc) return cpu_oom();
    l->c = nc;
    l->cap = cap;
  }
  if (l->np + np > l->capp) {
    uint32_t cap = l->capp ? 2 * l->capp : 128;
    while (cap < l->np + np) cap *= 2;
    void **npp = realloc(l->p, cap * sizeof *npp);
    if (!npp) return cpu_oom();
    l->p = npp;
    l->capp = cap;
  }
  gcall *d = &l->c[l->n++];
  memcpy(d, c, sizeof *d); /* padding too: lists are compared with memcmp */
  d->ptr0 = l->np;
  d->nptr = np;
  for (uint32_t i = 0; i < np; i++) l->p[l->np++] = (void *)(uintptr_t)p[i];
  return NULL;
}

static void glist_free(glist *l) {
  free(l->c);
  free(l->p);
  *l = (glist){0};
}

/* Whether two lists record the same calls (kernels, parameters, pointers). */
static bool glist_equal(const glist *a, const glist *b) {
  return a->n == b->n && a->np == b->np && !memcmp(a->c, b->c, a->n * sizeof *a->c) &&
         !memcmp(a->p, b->p, a->np * sizeof *a->p);
}

/* Copies n bytes between device buffers on the stream: copy_box over the
 * widest element (16, 8, 4, 2, 1 bytes) that divides n and both
 * addresses; the backend's copy when it lacks copy_box. */
static hlo_status copy_d2d(const backend *be, void *dst, const void *src, size_t n) {
  if (!n) return NULL;
  if (!be->copy_box) return be->copy(dst, src, n);
  uint32_t e = 16;
  while (e > 1 && ((n | (uintptr_t)dst | (uintptr_t)src) & (e - 1))) e /= 2;
  backend_box b;
  memset(&b, 0, sizeof b);
  b.rank = 1;
  b.esize = e;
  b.dims[0] = (int64_t)(n / e);
  b.dst_strides[0] = b.src_strides[0] = 1;
  return be->copy_box(dst, src, &b);
}

/* Enqueues recorded call c (its pointers p) on be. */
static hlo_status issue_one(const backend *be, const gcall *c, void *const *p) {
  switch ((gcall_kind)c->kind) {
  case GC_LAUNCH: return be->launch(c->mod, c->index, p);
  case GC_GEMM: return be->gemm(&c->u.g, p[0], p[1], p[2]);
  case GC_CONV: return be->conv(c->desc, p[0], p[1], p[2], p[3]);
  case GC_REDUCE_WINDOW: return be->reduce_window(c->desc, p, p + 2);
  case GC_SELECT_SCATTER: return be->select_and_scatter(c->desc, p[0], p[1], p[2], p[3]);
  case GC_SORT: return be->sort(c->desc, p, p + c->nin);
  case GC_COPY_BOX: return be->copy_box(p[0], p[1], &c->u.box);
  case GC_FILL_BOX: return be->fill_box(p[0], c->value, &c->u.box);
  case GC_GATHER: return be->gather_rows(p[0], p[1], p[2], &c->u.rows);
  case GC_SCATTER: return be->scatter_rows(p[0], p[1], p[2], &c->u.rows);
  case GC_COPY: return copy_d2d(be, p[0], p[1], (size_t)c->bytes);
  }
  return status_new(HLO_INTERNAL, "device executable: a recorded call of kind %u", c->kind);
}

static hlo_status issue_all(const backend *be, const glist *l) {
  for (uint32_t i = 0; i < l->n; i++) HLO_TRY(issue_one(be, &l->c[i], l->p + l->c[i].ptr0));
  return NULL;
}

/* The graph captured with exactly the calls of this run, or NULL. */
static gslot *graph_find(graph_state *g) {
  for (uint32_t i = 0; i < GRAPH_SLOTS; i++)
    if (g->slot[i].exec && glist_equal(&g->slot[i].calls, &g->calls)) return &g->slot[i];
  return NULL;
}

/* Captures the run's calls into a new graph (kept in the empty or least
 * recently launched slot) and launches it; when the capture fails, the
 * calls are issued one by one instead. */
static hlo_status graph_capture_launch(cpu_exec *x) {
  cpu_dev *d = x->dev;
  graph_state *g = &d->g;
  const backend *be = d->real;
  g->captures++;
  void *exec = NULL;
  hlo_status st = be->graph_begin();
  if (!st) {
    st = issue_all(be, &g->calls);
    hlo_status e = be->graph_end(&exec);
    if (!st) st = e;
    else hlo_status_free(e);
  }
  if (st) {
    if (g->verbose)
      fprintf(stderr, "hlo: graph capture %llu of @%s (%u calls) failed, run call by call: %s\n",
              (unsigned long long)g->captures, x->f->name, g->calls.n, hlo_status_message(st));
    hlo_status_free(st);
    if (exec) be->graph_destroy(exec);
    g->failures++;
    return issue_all(be, &g->calls);
  }
  if (g->verbose)
    fprintf(stderr, "hlo: graph capture %llu of @%s: %u calls\n",
            (unsigned long long)g->captures, x->f->name, g->calls.n);
  gslot *v = NULL; /* an empty slot, else the least recently launched */
  for (uint32_t i = 0; i < GRAPH_SLOTS && !v; i++)
    if (!g->slot[i].exec) v = &g->slot[i];
  if (!v) {
    v = &g->slot[0];
    for (uint32_t i = 1; i < GRAPH_SLOTS; i++)
      if (g->slot[i].used < v->used) v = &g->slot[i];
  }
  if (v->exec) be->graph_destroy(v->exec);
  v->exec = exec;
  v->used = g->runs;
  glist spare = v->calls; /* the run's list is kept; the slot's old one reused */
  v->calls = g->calls;
  g->calls = spare;
  g->calls.n = g->calls.np = 0;
  g->launches++;
  return be->graph_launch(exec);
}

/* Ends a deferred run's recording (x->be back to the backend) and issues
 * its calls: one graph launch when a graph recorded the same calls; else
 * a capture (allow_graph, from the second deferred run on); else one by
 * one. Then the deferred frees. A no-op when the run is not deferred. */
static hlo_status graph_flush(cpu_exec *x, bool allow_graph) {
  cpu_dev *d = x->dev;
  graph_state *g = &d->g;
  if (!g->deferring) return NULL;
  g->deferring = false;
  x->be = d->real;
  g_rec = NULL;
  const backend *be = d->real;
  hlo_status st = NULL;
  if (g->calls.n) {
    gslot *hit = allow_graph ? graph_find(g) : NULL;
    if (hit) {
      hit->used = g->runs;
      g->launches++;
      st = be->graph_launch(hit->exec);
    } else if (allow_graph && g->warm && g->captures < GRAPH_MAX_CAPTURES) {
      st = graph_capture_launch(x);
    } else {
      st = issue_all(be, &g->calls);
    }
    g->warm = true;
  }
  for (uint32_t i = 0; i < g->ndfree; i++) be->free(g->dfree[i]);
  g->ndfree = 0;
  return st;
}

/* Records call c with pointers p[0..np) in the deferred run of this
 * thread. */
static hlo_status rec_push(gcall *c, const void *const *p, uint32_t np) {
  cpu_exec *x = g_rec;
  if (!x || !x->dev || !x->dev->g.deferring)
    return status_new(HLO_INTERNAL, "device executable: a call recorded outside a deferred run");
  return glist_add(&x->dev->g.calls, c, p, np);
}

static void box_record(gcall *c, const backend_box *b) {
  c->u.box.rank = b->rank;
  c->u.box.esize = b->esize;
  c->u.box.dst_off = b->dst_off;
  c->u.box.src_off = b->src_off;
  for (uint32_t i = 0; i < b->rank && i < BACKEND_BOX_MAX_RANK; i++) {
    c->u.box.dims[i] = b->dims[i];
    c->u.box.dst_strides[i] = b->dst_strides[i];
    c->u.box.src_strides[i] = b->src_strides[i];
  }
  /* start indices read on the device: their addresses are part of the
   * call (a replay reads the values they hold then) */
  c->u.box.ndyn = b->ndyn;
  c->u.box.dyn_size = b->dyn_size;
  c->u.box.dyn_signed = b->dyn_signed;
  c->u.box.dyn_dst = b->dyn_dst;
  for (uint32_t i = 0; i < b->ndyn && i < BACKEND_BOX_MAX_RANK; i++) {
    c->u.box.dyn_index[i] = b->dyn_index[i];
    c->u.box.dyn_max[i] = b->dyn_max[i];
    c->u.box.dyn_stride[i] = b->dyn_stride[i];
  }
}

static void rows_record(gcall *c, const backend_rows *r) {
  c->u.rows.nidx = r->nidx;
  c->u.rows.per_batch = r->per_batch;
  c->u.rows.nrows = r->nrows;
  c->u.rows.row_bytes = r->row_bytes;
  c->u.rows.idx_size = r->idx_size;
  c->u.rows.idx_signed = r->idx_signed;
  c->u.rows.add = r->add;
  c->u.rows.dtype = r->dtype;
}

static hlo_status rec_launch(backend_module *m, uint32_t index, void *const *bufs) {
  cpu_exec *x = g_rec;
  if (!x) return rec_push(NULL, NULL, 0); /* its error */
  const graph_state *g = &x->dev->g;
  if (index >= g->nk || !g->knbufs[index]) { /* a kernel no step named: issued now */
    HLO_TRY(graph_flush(x, false));
    return x->be->launch(m, index, bufs);
  }
  gcall c;
  memset(&c, 0, sizeof c);
  c.kind = GC_LAUNCH;
  c.index = index;
  c.mod = m;
  return rec_push(&c, (const void *const *)bufs, g->knbufs[index]);
}

static hlo_status rec_gemm(const backend_gemm *gm, const void *a, const void *b, void *out) {
  gcall c;
  memset(&c, 0, sizeof c);
  c.kind = GC_GEMM;
  c.u.g.dtype = gm->dtype;
  c.u.g.c_dtype = gm->c_dtype;
  c.u.g.batch = gm->batch;
  c.u.g.m = gm->m;
  c.u.g.n = gm->n;
  c.u.g.k = gm->k;
  c.u.g.trans_a = gm->trans_a;
  c.u.g.trans_b = gm->trans_b;
  c.u.g.lda = gm->lda;
  c.u.g.ldb = gm->ldb;
  c.u.g.ldc = gm->ldc;
  c.u.g.batch_stride_a = gm->batch_stride_a;
  c.u.g.batch_stride_b = gm->batch_stride_b;
  c.u.g.batch_stride_c = gm->batch_stride_c;
  c.u.g.allow_tf32 = gm->allow_tf32;
  const void *p[3] = {a, b, out};
  return rec_push(&c, p, 3);
}

static hlo_status rec_conv(const backend_conv *cv, const void *lhs, const void *rhs, void *out,
                           void *scratch) {
  gcall c;
  memset(&c, 0, sizeof c);
  c.kind = GC_CONV;
  c.desc = cv;
  const void *p[4] = {lhs, rhs, out, scratch};
  return rec_push(&c, p, 4);
}

static hlo_status rec_reduce_window(const backend_window *w, void *const *in, void *const *out) {
  gcall c;
  memset(&c, 0, sizeof c);
  c.kind = GC_REDUCE_WINDOW;
  c.desc = w;
  const void *p[3] = {in[0], in[1], out[0]}; /* {operand, init}, {result} */
  return rec_push(&c, p, 3);
}

static hlo_status rec_select_scatter(const backend_window *w, const void *operand,
                                     const void *source, const void *init, void *out) {
  gcall c;
  memset(&c, 0, sizeof c);
  c.kind = GC_SELECT_SCATTER;
  c.desc = w;
  const void *p[4] = {operand, source, init, out};
  return rec_push(&c, p, 4);
}

static hlo_status rec_sort(const backend_sort *so, void *const *in, void *const *out) {
  enum { MAXOPS = 64 };
  if (!g_rec) return rec_push(NULL, NULL, 0);
  uint32_t n = so->num_operands;
  if (n > MAXOPS) { /* more than a record holds: issued now */
    HLO_TRY(graph_flush(g_rec, false));
    return g_rec->be->sort(so, in, out);
  }
  gcall c;
  memset(&c, 0, sizeof c);
  c.kind = GC_SORT;
  c.desc = so;
  c.nin = n;
  const void *p[2 * MAXOPS];
  for (uint32_t i = 0; i < n; i++) p[i] = in[i], p[n + i] = out[i];
  return rec_push(&c, p, 2 * n);
}

static hlo_status rec_copy_box(void *dst, const void *src, const backend_box *b) {
  gcall c;
  memset(&c, 0, sizeof c);
  c.kind = GC_COPY_BOX;
  box_record(&c, b);
  const void *p[2] = {dst, src};
  return rec_push(&c, p, 2);
}

static hlo_status rec_fill_box(void *dst, const void *value, const backend_box *b) {
  if (!value || b->esize > sizeof ((gcall *)0)->value) { /* the backend's error, now */
    if (!g_rec) return rec_push(NULL, NULL, 0);
    HLO_TRY(graph_flush(g_rec, false));
    return g_rec->be->fill_box(dst, value, b);
  }
  gcall c;
  memset(&c, 0, sizeof c);
  c.kind = GC_FILL_BOX;
  box_record(&c, b);
  memcpy(c.value, value, b->esize);
  const void *p[1] = {dst};
  return rec_push(&c, p, 1);
}

static hlo_status rec_gather(void *out, const void *src, const void *idx, const backend_rows *r) {
  gcall c;
  memset(&c, 0, sizeof c);
  c.kind = GC_GATHER;
  rows_record(&c, r);
  const void *p[3] = {out, src, idx};
  return rec_push(&c, p, 3);
}

static hlo_status rec_scatter(void *out, const void *upd, const void *idx, const backend_rows *r) {
  gcall c;
  memset(&c, 0, sizeof c);
  c.kind = GC_SCATTER;
  rows_record(&c, r);
  const void *p[3] = {out, upd, idx};
  return rec_push(&c, p, 3);
}

/* The shadow's synchronize and copy: the deferred calls issued first. */
static hlo_status shadow_synchronize(void) {
  cpu_exec *x = g_rec;
  if (!x) return rec_push(NULL, NULL, 0);
  HLO_TRY(graph_flush(x, false));
  return x->be->synchronize();
}

static hlo_status shadow_copy(void *dst, const void *src, size_t n) {
  cpu_exec *x = g_rec;
  if (!x) return rec_push(NULL, NULL, 0);
  HLO_TRY(graph_flush(x, false));
  return x->be->copy(dst, src, n);
}

/* A copy between device buffers (cpu_dev_copy): recorded in a deferred
 * run, else the backend's copy. */
static hlo_status be_copy_d2d(cpu_exec *x, void *dst, const void *src, size_t n) {
  if (!n) return NULL;
  if (!x->dev->g.deferring) return x->dev->real->copy(dst, src, n);
  gcall c;
  memset(&c, 0, sizeof c);
  c.kind = GC_COPY;
  c.bytes = n;
  const void *p[2] = {dst, src};
  return glist_add(&x->dev->g.calls, &c, p, 2);
}

/* Frees device buffer p: after the deferred calls when the run is
 * deferred (they may still read it). */
static void dev_free(cpu_exec *x, void *p) {
  graph_state *g = &x->dev->g;
  if (p && g->deferring) {
    if (g->ndfree == g->capdfree) {
      uint32_t cap = g->capdfree ? 2 * g->capdfree : 16;
      void **n = realloc(g->dfree, cap * sizeof *n);
      if (n) g->dfree = n, g->capdfree = cap;
    }
    if (g->ndfree < g->capdfree) {
      g->dfree[g->ndfree++] = p;
      return;
    }
    /* no room to wait: the calls go now (an error here is the backend's,
     * and is met again by the next call that needs the device) */
    hlo_status_free(graph_flush(x, false));
  }
  x->dev->real->free(p);
}

/* The graph buffer for the run's next allocation of `bytes` (kept across
 * runs: the k-th allocation of a run gets the k-th buffer, remade when its
 * size differs). Errors: out of device memory. */
static hlo_status graph_buffer(cpu_exec *x, size_t bytes, void **out) {
  graph_state *g = &x->dev->g;
  const backend *be = x->dev->real;
  if (g->k == g->ngb) {
    gbuffer *n = realloc(g->gb, (g->ngb + 1) * sizeof *n);
    if (!n) return cpu_oom();
    g->gb = n;
    g->gb[g->ngb++] = (gbuffer){NULL, 0};
  }
  gbuffer *b = &g->gb[g->k];
  if (b->p && b->bytes != bytes) {
    be->free(b->p); /* stream-ordered: after the work queued before */
    b->p = NULL;
  }
  if (!b->p) {
    b->p = be->alloc(bytes);
    if (!b->p)
      return status_new(HLO_RESOURCE_EXHAUSTED, "out of device memory for a buffer of %zu bytes",
                        bytes);
    b->bytes = bytes;
  }
  g->k++;
  *out = b->p;
  return NULL;
}

/* Whether program 0 is device work only (see the design); fills the
 * buffer counts of its kernels. */
static bool graph_eligible(cpu_exec *x) {
  const backend *be = x->dev->real;
  graph_state *g = &x->dev->g;
  if (x->nprogs != 1) return false;
  const program *p = &x->progs[0];
  uint32_t nk = 0;
  for (uint32_t i = 0; i < p->nsteps; i++)
    if (p->steps[i].kind == STEP_KERNEL && p->steps[i].kernel + 1 > nk)
      nk = p->steps[i].kernel + 1;
  free(g->knbufs);
  g->knbufs = calloc(nk ? nk : 1, sizeof *g->knbufs);
  g->nk = g->knbufs ? nk : 0;
  if (!g->knbufs) return false;
  uint32_t work = 0; /* calls a run makes */
  for (uint32_t i = 0; i < p->nsteps; i++) {
    const step *s = &p->steps[i];
    if (s->elided) continue;
    work += s->kind != STEP_ALIAS;
    switch (s->kind) {
    case STEP_KERNEL: g->knbufs[s->kernel] = s->nin + s->nout; break;
    case STEP_GEMM:
      if (s->epilogue) return false;
      break;
    case STEP_CONV: case STEP_WINDOW: case STEP_SORT: case STEP_ALIAS: break;
    case STEP_FILL: case STEP_GATHER: case STEP_SCATTER:
      if (!cpu_copy_on_backend(be, s)) return false; /* else on the host mirror */
      break;
    case STEP_DSLICE: case STEP_DUS: /* when the device reads the start indices */
      if (!cpu_copy_on_backend(be, s) || !cpu_copy_indices_on_device(be, s)) return false;
      break;
    default: return false; /* interpreter, control, host reads of indices or values */
    }
  }
  /* a replay costs a graph launch and a copy per result: worth it when
   * that is fewer calls than the run's own */
  uint32_t nres = p->block && p->block->last ? p->block->last->num_operands : 0;
  return work >= nres + 2;
}

/* Before a run (cpu_dev_begin_run): whether it may be deferred (the
 * state reset for it). */
static bool graph_may_defer(cpu_exec *x) {
  graph_state *g = &x->dev->g;
  g->calls.n = g->calls.np = 0;
  g->k = 0;
  if (!g->enabled || x->profile || x->check) return false;
  if (!g->checked) {
    g->checked = true;
    g->eligible = graph_eligible(x);
  }
  return g->eligible;
}

/* Defers the run: the work calls recorded from now on. */
static void graph_defer(cpu_exec *x) {
  graph_state *g = &x->dev->g;
  g->deferring = true;
  g->runs++;
  x->be = &g->shadow;
  g_rec = x;
}

/* The graph state's start (cpu_dev_create): the shadow table, the switch. */
static void graph_init(cpu_dev *d) {
  const backend *be = d->real;
  graph_state *g = &d->g;
  const char *env = getenv("HLO_CUDA_GRAPHS");
  g->enabled = be->graph_begin && be->graph_end && be->graph_launch && be->graph_destroy &&
               !(env && !strcmp(env, "0"));
  g->verbose = g->enabled && env && !strcmp(env, "verbose");
  g->shadow = *be;
  backend *sh = &g->shadow;
  sh->launch = rec_launch;
  sh->synchronize = shadow_synchronize;
  sh->copy = shadow_copy;
  if (be->gemm) sh->gemm = rec_gemm;
  if (be->conv) sh->conv = rec_conv;
  if (be->reduce_window) sh->reduce_window = rec_reduce_window;
  if (be->select_and_scatter) sh->select_and_scatter = rec_select_scatter;
  if (be->sort) sh->sort = rec_sort;
  if (be->copy_box) sh->copy_box = rec_copy_box;
  if (be->fill_box) sh->fill_box = rec_fill_box;
  if (be->gather_rows) sh->gather_rows = rec_gather;
  if (be->scatter_rows) sh->scatter_rows = rec_scatter;
  sh->gemm_epilogue = NULL; /* a step with an epilogue is never deferred */
  sh->launch_tiles = NULL;
}

static void graph_free(cpu_dev *d) {
  graph_state *g = &d->g;
  for (uint32_t i = 0; i < GRAPH_SLOTS; i++) {
    if (g->slot[i].exec) d->real->graph_destroy(g->slot[i].exec);
    glist_free(&g->slot[i].calls);
  }
  glist_free(&g->calls);
  for (uint32_t i = 0; i < g->ngb; i++) d->real->free(g->gb[i].p);
  for (uint32_t i = 0; i < g->ndfree; i++) d->real->free(g->dfree[i]);
  free(g->gb);
  free(g->dfree);
  free(g->knbufs);
}

/* Graph replay's counters (tests; declared by them): out[0] deferred runs,
 * out[1] captures (failed ones included), out[2] graph launches, out[3]
 * failed captures. Zeros for an executable off a device backend. */
void cpu_dev_graph_counters(const cpu_exec *x, uint64_t out[4]);
void cpu_dev_graph_counters(const cpu_exec *x, uint64_t out[4]) {
  const graph_state *g = x && x->dev ? &x->dev->g : NULL;
  out[0] = g ? g->runs : 0;
  out[1] = g ? g->captures : 0;
  out[2] = g ? g->launches : 0;
  out[3] = g ? g->failures : 0;
}

hlo_status cpu_dev_create(cpu_exec *x) {
  cpu_dev *d = calloc(1, sizeof *d);
  if (!d) return cpu_oom();
  x->dev = d;
  d->real = x->be;
  graph_init(d);
  d->empty = d->real->alloc(GRANULE);
  if (!d->empty) return status_new(HLO_RESOURCE_EXHAUSTED, "out of device memory");
  /* constants: uploaded once, now */
  for (uint32_t i = 0; i < x->nvals; i++) {
    tensor *t = x->consts[i];
    if (!t || t->type->kind != TYPE_TENSOR || !t->nbytes) continue;
    void *p;
    HLO_TRY(cpu_dev_in(x, t, t->data, t->nbytes, &p));
    d->e[d->n - 1].pinned = true;
  }
  return NULL;
}

static void drop_entry(cpu_exec *x, uint32_t i) {
  cpu_dev *d = x->dev;
  if (!d->e[i].lent) dev_free(x, d->e[i].dev);
  tensor_release(d->e[i].owner);
  d->e[i] = d->e[--d->n];
}

void cpu_dev_destroy(cpu_exec *x) {
  cpu_dev *d = x->dev;
  if (!d) return;
  if (d->g.deferring) { /* not expected: every run ends with cpu_dev_end_run */
    hlo_status_free(graph_flush(x, false));
  }
  while (d->n) drop_entry(x, d->n - 1);
  free(d->e);
  graph_free(d);
  d->real->free(d->arena);
  d->real->free(d->empty);
  runmap_free(&d->granules);
  free(d);
  x->dev = NULL;
}

hlo_status cpu_dev_arena(cpu_exec *x) {
  cpu_dev *d = x->dev;
  const program *p0 = &x->progs[0];
  if (d->arena) return NULL;
  size_t bytes = p0->temp_bytes > 0 ? ((size_t)p0->temp_bytes + 63) & ~(size_t)63 : 64;
  HLO_TRY(runmap_init(&d->granules, bytes / GRANULE)); /* never written: state 0 */
  d->arena = d->real->alloc(bytes);
  if (!d->arena) {
    runmap_free(&d->granules);
    return status_new(HLO_RESOURCE_EXHAUSTED, "out of device memory for %zu bytes of "
                      "temporaries", bytes);
  }
  d->host_arena = p0->arena;
  d->arena_bytes = bytes;
  return NULL;
}

/* The entry whose host range holds p, or -1. */
static int64_t find(const cpu_dev *d, const uint8_t *p) {
  for (uint32_t i = 0; i < d->n; i++)
    if (p >= d->e[i].host && p < d->e[i].host + d->e[i].bytes) return i;
  return -1;
}

static bool in_dev_arena(const cpu_dev *d, const uint8_t *p) {
  return d->host_arena && p >= d->host_arena && p < d->host_arena + d->arena_bytes;
}

/* Moves the granules [g0, g1) of the arena that lack `want` (and hold the
 * other side's valid bytes) to that side. */
static hlo_status arena_sync(cpu_exec *x, size_t g0, size_t g1, uint8_t want) {
  cpu_dev *d = x->dev;
  uint8_t other = want == ON_DEV ? ON_HOST : ON_DEV;
  size_t g = g0;
  while (g < g1) {
    size_t e;
    uint8_t s = d->granules.state[runmap_find(&d->granules, g, &e)];
    if (e > g1) e = g1;
    if (!(s & want) && (s & other)) {
      size_t off = g * GRANULE, n = (e - g) * GRANULE;
      if (want == ON_DEV) HLO_TRY(be_copy(x, d->arena + off, d->host_arena + off, n));
      else HLO_TRY(be_download(x, d->host_arena + off, d->arena + off, n));
      HLO_TRY(runmap_set(&d->granules, g, e, s | want));
    }
    g = e;
  }
  return NULL;
}

static void arena_range(const cpu_dev *d, const uint8_t *p, size_t bytes, size_t *g0,
                        size_t *g1) {
  size_t off = (size_t)(p - d->host_arena);
  size_t end = off + bytes;
  if (end > d->arena_bytes) end = d->arena_bytes;
  *g0 = off / GRANULE;
  *g1 = (end + GRANULE - 1) / GRANULE;
}

/* Grows the entry table by one; its index in *out. */
static hlo_status entry_slot(cpu_dev *d, uint32_t *out) {
  if (d->n == d->cap) {
    uint32_t cap = d->cap ? 2 * d->cap : 16;
    dev_entry *e = realloc(d->e, cap * sizeof *e);
    if (!e) return cpu_oom();
    d->e = e;
    d->cap = cap;
  }
  *out = d->n++;
  return NULL;
}

/* The entry for tensor memory host[0..bytes) (owner: its tensor, or NULL
 * when unknown: then none is made), made when missing; -1 when none. */
static hlo_status entry_of(cpu_exec *x, tensor *owner, uint8_t *host, size_t bytes, bool make,
                           int64_t *out) {
  cpu_dev *d = x->dev;
  *out = find(d, host);
  if (*out >= 0 || !make || !owner) return NULL;
  bool gbuf = d->g.deferring; /* a deferred run's buffers: the graph's, kept across runs */
  void *dev = NULL;
  if (gbuf) {
    HLO_TRY(graph_buffer(x, bytes, &dev));
  } else {
    dev = d->real->alloc(bytes);
    if (!dev)
      return status_new(HLO_RESOURCE_EXHAUSTED, "out of device memory for a buffer of %zu bytes",
                        bytes);
  }
  uint32_t i = 0;
  hlo_status st = entry_slot(d, &i);
  if (st) {
    if (!gbuf) d->real->free(dev);
    return st;
  }
  d->e[i] = (dev_entry){host, bytes, dev, ON_HOST, false, gbuf, gbuf, tensor_retain(owner)};
  *out = i;
  return NULL;
}

hlo_status cpu_dev_in(cpu_exec *x, tensor *owner, void *host, size_t bytes, void **dev) {
  cpu_dev *d = x->dev;
  uint8_t *p = host;
  if (!bytes) {
    *dev = in_dev_arena(d, p) ? d->arena + (p - d->host_arena) : d->empty;
    return NULL;
  }
  if (in_dev_arena(d, p)) {
    size_t g0, g1;
    arena_range(d, p, bytes, &g0, &g1);
    HLO_TRY(arena_sync(x, g0, g1, ON_DEV));
    *dev = d->arena + (p - d->host_arena);
    return NULL;
  }
  int64_t i;
  HLO_TRY(entry_of(x, owner, p, bytes, true, &i));
  if (i < 0)
    return status_new(HLO_INTERNAL, "device executable: a buffer of %zu bytes has no device "
                      "copy", bytes);
  dev_entry *e = &d->e[i];
  if (!(e->state & ON_DEV)) {
    HLO_TRY(be_copy(x, e->dev, e->host, e->bytes));
    e->state |= ON_DEV;
  }
  *dev = e->dev + (p - e->host);
  return NULL;
}

hlo_status cpu_dev_out(cpu_exec *x, tensor *owner, void *host, size_t bytes, void **dev) {
  cpu_dev *d = x->dev;
  uint8_t *p = host;
  if (!bytes) {
    *dev = in_dev_arena(d, p) ? d->arena + (p - d->host_arena) : d->empty;
    return NULL;
  }
  if (in_dev_arena(d, p)) {
    size_t g0, g1;
    arena_range(d, p, bytes, &g0, &g1);
    HLO_TRY(runmap_set(&d->granules, g0, g1, ON_DEV));
    *dev = d->arena + (p - d->host_arena);
    return NULL;
  }
  int64_t i;
  HLO_TRY(entry_of(x, owner, p, bytes, true, &i));
  if (i < 0)
    return status_new(HLO_INTERNAL, "device executable: a buffer of %zu bytes has no device "
                      "copy", bytes);
  dev_entry *e = &d->e[i];
  /* a write of part of the entry keeps the rest where it is valid */
  if (p != e->host || bytes < e->bytes) {
    if (!(e->state & ON_DEV)) HLO_TRY(be_copy(x, e->dev, e->host, e->bytes));
  }
  e->state = ON_DEV;
  *dev = e->dev + (p - e->host);
  return NULL;
}

hlo_status cpu_dev_host_in(cpu_exec *x, const void *host, size_t bytes) {
  cpu_dev *d = x->dev;
  const uint8_t *p = host;
  if (!d || !bytes || !p) return NULL;
  if (in_dev_arena(d, p)) {
    size_t g0, g1;
    arena_range(d, p, bytes, &g0, &g1);
    return arena_sync(x, g0, g1, ON_HOST);
  }
  int64_t i = find(d, p);
  if (i < 0) return NULL; /* host memory only */
  dev_entry *e = &d->e[i];
  if (!(e->state & ON_HOST)) {
    HLO_TRY(be_download(x, e->host, e->dev, e->bytes));
    e->state |= ON_HOST;
  }
  return NULL;
}

hlo_status cpu_dev_host_out(cpu_exec *x, const void *host, size_t bytes) {
  cpu_dev *d = x->dev;
  const uint8_t *p = host;
  if (!d || !bytes || !p) return NULL;
  if (in_dev_arena(d, p)) {
    size_t g0, g1;
    arena_range(d, p, bytes, &g0, &g1);
    return runmap_set(&d->granules, g0, g1, ON_HOST);
  }
  int64_t i = find(d, p);
  if (i < 0) return NULL;
  dev_entry *e = &d->e[i];
  /* a write of part of the entry: the rest must be valid on the host first */
  if ((p != e->host || bytes < e->bytes) && !(e->state & ON_HOST))
    HLO_TRY(be_download(x, e->host, e->dev, e->bytes));
  e->state = ON_HOST;
  return NULL;
}

hlo_status cpu_dev_tensor_host(cpu_exec *x, const tensor *t) {
  if (!x->dev || !t) return NULL;
  if (t->type && t->type->kind == TYPE_TUPLE) {
    for (uint32_t i = 0; i < t->num_tuple; i++) HLO_TRY(cpu_dev_tensor_host(x, t->tuple[i]));
    return NULL;
  }
  return cpu_dev_host_in(x, t->data, t->nbytes);
}

hlo_status cpu_dev_tensor_wrote(cpu_exec *x, const tensor *t) {
  if (!x->dev || !t) return NULL;
  if (t->type && t->type->kind == TYPE_TUPLE) {
    for (uint32_t i = 0; i < t->num_tuple; i++) HLO_TRY(cpu_dev_tensor_wrote(x, t->tuple[i]));
    return NULL;
  }
  return cpu_dev_host_out(x, t->data, t->nbytes);
}

/* Whether the memory at p is valid on the device (and not only there: the
 * state bits of its arena granules or entry). */
static bool valid_on_dev(const cpu_dev *d, const uint8_t *p, size_t bytes) {
  if (in_dev_arena(d, p)) {
    size_t g0, g1;
    arena_range(d, p, bytes, &g0, &g1);
    for (size_t g = g0, e; g < g1; g = e)
      if (!(d->granules.state[runmap_find(&d->granules, g, &e)] & ON_DEV)) return false;
    return true;
  }
  int64_t i = find(d, p);
  return i >= 0 && (d->e[i].state & ON_DEV);
}

/* Whether the memory at p is valid on the host (untracked memory is;
 * arena granules never written are garbage on both sides). */
static bool valid_on_host(const cpu_dev *d, const uint8_t *p, size_t bytes) {
  if (in_dev_arena(d, p)) {
    size_t g0, g1;
    arena_range(d, p, bytes, &g0, &g1);
    for (size_t g = g0, e; g < g1; g = e)
      if (d->granules.state[runmap_find(&d->granules, g, &e)] == ON_DEV) return false;
    return true;
  }
  int64_t i = find(d, p);
  return i < 0 || (d->e[i].state & ON_HOST);
}

hlo_status cpu_dev_copy(cpu_exec *x, tensor *dst_owner, void *dst, const void *src,
                        size_t bytes) {
  cpu_dev *d = x->dev;
  if (!bytes) return NULL;
  /* on the host when src is valid there (the copy is then valid on the
   * host, as a host step's output); on the device when it is only there */
  if (d && !valid_on_host(d, src, bytes) && valid_on_dev(d, src, bytes)) {
    void *ds, *dd;
    HLO_TRY(cpu_dev_in(x, NULL, (void *)src, bytes, &ds));
    HLO_TRY(cpu_dev_out(x, dst_owner, dst, bytes, &dd));
    return be_copy_d2d(x, dd, ds, bytes);
  }
  if (d) HLO_TRY(cpu_dev_host_in(x, src, bytes));
  memcpy(dst, src, bytes);
  return d ? cpu_dev_host_out(x, dst, bytes) : NULL;
}

bool cpu_dev_holds(const cpu_exec *x, const tensor *t) {
  const cpu_dev *d = x->dev;
  if (!d || !t) return false;
  for (uint32_t i = 0; i < d->n; i++)
    if (d->e[i].owner == t) return true;
  return false;
}

void cpu_dev_sweep(cpu_exec *x) {
  cpu_dev *d = x->dev;
  for (uint32_t i = 0; i < d->n;) {
    if (!d->e[i].pinned && __atomic_load_n(&d->e[i].owner->refcount, __ATOMIC_ACQUIRE) == 1)
      drop_entry(x, i);
    else
      i++;
  }
}

void cpu_dev_end_run(cpu_exec *x) {
  cpu_dev *d = x->dev;
  if (!d) return;
  /* a deferred run is flushed by its results or the run's synchronize;
   * after an error before those, its calls are issued here (as an eager
   * run would have: its error, if any, is the backend's again later) */
  if (d->g.deferring) hlo_status_free(graph_flush(x, false));
  for (uint32_t i = 0; i < d->n;) {
    if (!d->e[i].pinned) drop_entry(x, i);
    else i++;
  }
}

/* Registers the device copy of one argument tensor (see cpu_dev_begin_run);
 * *all_lent is cleared for one with bytes and no such copy. */
static hlo_status lend_argument(cpu_exec *x, tensor *t, bool *all_lent) {
  cpu_dev *d = x->dev;
  if (t->type && t->type->kind == TYPE_TUPLE) {
    for (uint32_t i = 0; i < t->num_tuple; i++) HLO_TRY(lend_argument(x, t->tuple[i], all_lent));
    return NULL;
  }
  if (!t->nbytes || !t->data) return NULL;
  if (!t->device || t->device->backend != (const void *)d->real) {
    *all_lent = false;
    return NULL;
  }
  if (find(d, t->data) >= 0) return NULL; /* the same tensor passed twice */
  uint32_t i = 0;
  HLO_TRY(entry_slot(d, &i));
  uint8_t state = ON_DEV | (t->device->host_valid ? ON_HOST : 0);
  d->e[i] = (dev_entry){t->data, t->nbytes, t->device->ptr, state, false, true, false,
                        tensor_retain(t)};
  return NULL;
}

/* A deferred run's host argument (one with bytes and no device copy of
 * this backend; tuples: their elements): uploaded now, before the run is
 * deferred, into the run's next graph buffer, so that its device pointer
 * is the same run after run (a graph reads it there). */
static hlo_status upload_argument(cpu_exec *x, tensor *t) {
  cpu_dev *d = x->dev;
  if (t->type && t->type->kind == TYPE_TUPLE) {
    for (uint32_t i = 0; i < t->num_tuple; i++) HLO_TRY(upload_argument(x, t->tuple[i]));
    return NULL;
  }
  if (!t->nbytes || !t->data || (t->device && t->device->backend == (const void *)d->real))
    return NULL;
  if (find(d, t->data) >= 0) return NULL; /* the same tensor passed twice */
  void *dev = NULL;
  uint32_t i = 0;
  HLO_TRY(graph_buffer(x, t->nbytes, &dev));
  HLO_TRY(entry_slot(d, &i));
  d->e[i] = (dev_entry){t->data, t->nbytes, dev, ON_HOST, false, true, true, tensor_retain(t)};
  HLO_TRY(d->real->copy(dev, t->data, t->nbytes));
  d->e[i].state = ON_HOST | ON_DEV;
  return NULL;
}

hlo_status cpu_dev_begin_run(cpu_exec *x, tensor *const *args, uint32_t n) {
  if (!x->dev) return NULL;
  bool all_lent = true;
  for (uint32_t i = 0; i < n; i++)
    if (args[i]) HLO_TRY(lend_argument(x, args[i], &all_lent));
  if (!graph_may_defer(x)) return NULL;
  for (uint32_t i = 0; i < n && !all_lent; i++)
    if (args[i]) HLO_TRY(upload_argument(x, args[i]));
  graph_defer(x);
  return NULL;
}

/* tensor_device.release of a result's own device copy. */
static void release_own_copy(tensor_device *dv) {
  const backend *be = dv->backend;
  be->free(dv->ptr);
  free(dv);
}

hlo_status cpu_dev_result(cpu_exec *x, tensor *r) {
  cpu_dev *d = x->dev;
  if (!d || !r) return NULL;
  HLO_TRY(graph_flush(x, true)); /* the steps are done: their calls go */
  if (r->type && r->type->kind == TYPE_TUPLE) {
    for (uint32_t i = 0; i < r->num_tuple; i++) HLO_TRY(cpu_dev_result(x, r->tuple[i]));
    return NULL;
  }
  if (!r->nbytes || !r->data) return NULL;
  if (r->device && r->device->own) return NULL; /* a result given twice: moved already */
  int64_t k = find(d, r->data);
  if (k >= 0) {
    dev_entry *e = &d->e[k];
    bool own = e->owner == r && !e->pinned && (!e->lent || e->gbuf) && e->host == r->data &&
               e->bytes == r->nbytes && !r->borrowed && !r->device && (e->state & ON_DEV);
    if (own && e->gbuf) {
      /* a graph buffer stays the graph's: the result gets a copy (on the
       * stream, after the work that wrote it) */
      void *fresh = d->real->alloc(e->bytes);
      if (!fresh)
        return status_new(HLO_RESOURCE_EXHAUSTED, "out of device memory for a result of %zu "
                          "bytes", e->bytes);
      tensor_device *dv = malloc(sizeof *dv);
      hlo_status st = dv ? copy_d2d(d->real, fresh, e->dev, e->bytes) : cpu_oom();
      if (st) {
        free(dv);
        d->real->free(fresh);
        return st;
      }
      *dv = (tensor_device){fresh, d->real, (e->state & ON_HOST) != 0, true, release_own_copy};
      r->device = dv;
      return NULL;
    }
    if (own) {
      tensor_device *dv = malloc(sizeof *dv);
      if (!dv) return cpu_oom();
      *dv = (tensor_device){e->dev, d->real, (e->state & ON_HOST) != 0, true, release_own_copy};
      r->device = dv;
      e->dev = NULL; /* the result's now: drop_entry frees nothing */
      e->lent = true;
      return NULL;
    }
  }
  return cpu_dev_host_in(x, r->data, r->nbytes);
}
