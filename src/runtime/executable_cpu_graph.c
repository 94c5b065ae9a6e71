/* executable_cpu_graph.c — graph replay of a device executable's runs:
 * the recording of a deferred run through a shadow backend table, issuing
 * the recorded calls (one graph launch, a capture, or one by one), graph
 * buffers and the pool results give them back to, which programs are
 * eligible, the run's key and replay without the steps. The device memory
 * side (the host mirror, entries, the arena's validity) is
 * executable_cpu_device.c; a capture as a DAG executable_cpu_graph_dag.c;
 * conditional nodes' recording executable_cpu_cond_graph.c; the private
 * types executable_cpu_device_internal.h.
 *
 * Graph replay (a backend with the graph_* slots: CUDA graphs). Small
 * programs are bound by the cost of launching each kernel and library
 * call, so a run of program 0 that is device work only is recorded once
 * and replayed with one graph launch. Eligible (graph_eligible): steps
 * that are kernels, gemms (no epilogue), conv / window / sort calls,
 * aliases, data movement that reads nothing on the host (fills, row gather
 * / scatter, dynamic_slice and dynamic_update_slice whose start indices
 * the backend reads on the device, pad whose padding value is a constant),
 * while loops of a known trip count (hlo.known_trip_count:
 * passes/while_loop_trip_count.c) whose body is eligible: the body's calls
 * are recorded iteration after iteration (the graph holds the loop
 * unrolled; its cond is never run), and, on a backend with the
 * graph_cond_* slots, while loops WITHOUT a known trip count and case / if
 * recorded as conditional nodes (below); at least two calls in all and at
 * most GRAPH_MAX_CALLS (a run that passes that is issued call by call and
 * the executable defers no more); no interpreter step; run without
 * --profile or --check, HLO_CUDA_GRAPHS
 * not "0" when the executable was made ("verbose": each capture, and why
 * a program is not replayed, told on stderr). Arguments that are device
 * buffers of this backend are read in place; the others are uploaded
 * before the run into graph buffers (below), so that their device
 * pointers too are the same run after run. Such a run is DEFERRED
 * (cpu_dev_graph_defer): x->be is switched to a shadow table whose work slots
 * record each call (the pointers and parameters: launch, gemm, conv, ...,
 * and device to device copies) instead of enqueueing it, while the host
 * side of the run goes on as before; buffers the run allocates for its
 * tensors are GRAPH BUFFERS kept across runs (cpu_dev_graph_buffer: the first one
 * of the size that no live tensor of the run holds, so runs making the
 * same allocations and frees get the same pointers, and a loop's
 * iterations reuse the buffers of values that died), and frees wait until
 * the calls are issued. When the steps are done (cpu_dev_graph_flush: the first
 * result handed over) the calls are issued: with one graph launch when a
 * graph captured earlier recorded exactly the same calls (same kernels,
 * parameters and pointers: arguments, arena, constants, graph buffers);
 * else, from the second deferred run on (the first warms the libraries
 * up: cuBLASLt's plans, NVRTC units), captured into a new graph
 * (graph_begin, the calls, graph_end; GRAPH_SLOTS kept, the oldest
 * replaced; GRAPH_MAX_CAPTURES per executable) and launched; else one by
 * one as before. A capture that fails issues the calls one by one: the
 * run is right either way. Anything that must touch memory on the host
 * during a deferred run (an upload, a download: not expected in an
 * eligible program) first issues the calls so far one by one and ends
 * the deferral for the run. A graph replays exactly the calls it
 * recorded, so its results are the eager ones, bit for bit.
 *
 * The captured graph is a DAG of the data dependencies, not a chain:
 * executable_cpu_graph_dag.c (its header comment has the design).
 *
 * Results of a deferred run are handed the graph buffers they lie in (no
 * copy: a replay is one launch); a released result gives its buffer back
 * (gpool, shared with the results: they may outlive the executable) so
 * that the next run writes the same address; a buffer still held is
 * remade (a training loop feeding results back alternates two graphs).
 *
 * Conditional WHILE nodes (a loop whose trip count the device decides:
 * CUDA 12.4's conditional graph nodes; backend.h graph_cond_*;
 * HLO_CUDA_COND_GRAPHS=0 turns them off). Eligible (cond_while_eligible):
 * a loop of program 0 (or unrolled in a known loop), not inside another
 * such loop, whose cond and body are eligible, whose predicate is an
 * integer or i1 computed by its cond into the cond's arena, and whose body
 * returns for each carried value either that value passed through in its
 * slot or a value the body computes (not a constant, an outer value, a
 * carried value of another slot, one value twice). The host's walk is not
 * changed: the runtime runs the cond and reads the predicate
 * (cond_value -> cpu_dev_host_in), which a deferred run intercepts
 * (cpu_dev_cond_pred): at the first read (cond_open), the cond's calls so far stay
 * before the node; the carried values' buffers (a: the tensors the cond's
 * arguments were bound to at its calls, cond_snap) are noted, a
 * loop-owned buffer (s: cond_temp, kept across runs) made and copied into
 * for each that is not the loop's alone (a constant, an argument, a value
 * read after the loop) and that the body replaces; GC_COND_BEGIN is
 * recorded and the host told "true". The host walks the body once and
 * the cond after it, all recorded after BEGIN. At the second read
 * (cond_close): the body's calls are moved from each a to its s (pointers
 * into a rewritten: the recorded calls then work on the loop's own slots),
 * GC_COND_SET recorded (the condition set from the predicate the cond just
 * wrote), then copies of the values the body left elsewhere (b: fresh
 * buffers, held by the loop alone) into their slots, GC_COND_END, and
 * after the node copies from the slots to b (where the host's walk left
 * the results: right for any trip count, 0 included); the host is told
 * "false". So every iteration of the node starts and ends with the carried
 * values at the same addresses, and replays the same calls: the node runs
 * the loop as the eager path does, value for value (bit for bit: the same
 * kernels on the same values). The host's copy of the predicate gets the
 * told value only (its state stays "valid on the device"). Issued call by
 * call (cpu_dev_issue_all without a capture: the first deferred run, a failed
 * capture), a node runs as the eager loop: its predicate downloaded before
 * the body and after each iteration. A run whose deferral ends inside the
 * body (not expected) goes on eagerly if the first predicate holds, else
 * fails with an error naming HLO_CUDA_COND_GRAPHS=0; any other surprise
 * at the first read makes the executable defer no more (verbose says why).
 *
 * Conditional IF / SWITCH nodes (a case / if of program 0: CUDA 12.8's
 * SWITCH nodes; cond_case_eligible): its branches eligible, its selector
 * an integer or i1 computed into the arena, each branch returning values
 * it computes, each result read by a later call of program 0 (or the one
 * result returned by program 0). The runtime reads the selector
 * (run_case -> cpu_dev_host_in), which a deferred run intercepts
 * (case_open): every branch but the first is run there
 * (cpu_run_program), its calls recorded into a list of its own and its
 * results held; the host is told "branch 0" (case 0, if true) and walks
 * it, recorded into the run's list. Once the host is past the case (its
 * results bound: cpu_dev_case_poll, at the next recorded call, host read or
 * result), the node is made: GC_COND_BEGIN (the selector's device
 * pointer), branch 0's calls, then per other branch GC_COND_NEXT, its
 * calls and copies of its results into branch 0's (the buffers the host
 * goes on with: every branch leaves its results there), GC_COND_END. The
 * device picks the branch as stablehlo.case does (out of range: the
 * last), so each launch runs the one branch the eager path would. Call by
 * call, the selector is read on the host and the one branch issued.
 * The predicates of two conditional nodes must not share a buffer
 * (preds_overlap: reads are told apart by address); verbose
 * (HLO_CUDA_GRAPHS=verbose) tells the loops and cases made nodes and the
 * nodes each capture holds.
 *
 * Replay without the steps (cpu_dev_replay): the calls of an eligible
 * program follow from its KEY alone (cpu_dev_graph_key: the arguments' device
 * pointers and what the runtime's decisions read of the argument tensors,
 * every graph buffer's pointer, the arena's validity runs), as it reads
 * nothing on the host.
 * The graph that a run launched keeps that run's key and how its results
 * were made (each handed a graph buffer: grecipe); a later run with the
 * same key, word for word, launches that graph without running its steps
 * and makes its results so. Any other run records and compares its calls
 * as above. */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "passes/passes.h" /* WHILE_KNOWN_TRIP_COUNT */
#include "runtime/executable_cpu_device_internal.h"

/* The executable whose run is deferred on this thread (the shadow table's
 * slots take no context; a run is one thread's, start to end). */
static _Thread_local cpu_exec *g_rec;

/* Appends call *c with pointers p[0..np) to l. Errors: out of memory. */
hlo_status cpu_dev_glist_add(glist *l, const gcall *c, const void *const *p, uint32_t np) {
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

void cpu_dev_glist_free(glist *l) {
  free(l->c);
  free(l->p);
  *l = (glist){0};
}

/* Whether two lists record the same calls (kernels, parameters, pointers). */
static bool glist_equal(const glist *a, const glist *b) {
  return a->n == b->n && a->np == b->np && !memcmp(a->c, b->c, a->n * sizeof *a->c) &&
         !memcmp(a->p, b->p, a->np * sizeof *a->p);
}

/* Enqueues recorded call c (its pointers p) on be. */
hlo_status cpu_dev_issue_one(const backend *be, const gcall *c, void *const *p) {
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
  case GC_COPY: return cpu_dev_copy_d2d(be, p[0], p[1], (size_t)c->bytes);
  case GC_COND_BEGIN: case GC_COND_SET: case GC_COND_END: case GC_COND_NEXT:
    break; /* cpu_dev_issue_all's */
  }
  return status_new(HLO_INTERNAL, "device executable: a recorded call of kind %u", c->kind);
}

/* The predicate of conditional record c (p: its pointers) as the backend
 * takes it. */
static backend_cond cond_of(const gcall *c, void *const *p) {
  backend_cond b;
  memset(&b, 0, sizeof b);
  b.kind = c->u.cond.kind;
  b.pred = c->nptr ? p[0] : NULL;
  b.pred_size = (uint32_t)c->bytes;
  b.pred_bit = c->nin != 0;
  b.pred_signed = c->u.cond.is_signed;
  b.nbranches = c->u.cond.nbranches;
  return b;
}

/* The integer of conditional record c (p: its pointers), read on the host
 * (the queued work first): one small download, as the eager path makes;
 * sign-extended when signed. */
static hlo_status pred_value(const backend *be, const gcall *c, void *const *p, uint64_t *out) {
  uint8_t b[8] = {0};
  size_t n = c->bytes <= sizeof b ? (size_t)c->bytes : sizeof b;
  HLO_TRY(be->synchronize());
  HLO_TRY(be->copy(b, p[0], n));
  uint64_t v = 0;
  for (size_t i = 0; i < n; i++) v |= (uint64_t)b[i] << (8 * i);
  if (c->u.cond.is_signed && n && n < 8 && ((v >> (8 * n - 1)) & 1)) v |= ~0ull << (8 * n);
  *out = v;
  return NULL;
}

/* Reads the predicate of conditional record c on the host (the queued work
 * first): one small download, as an eager loop makes. */
static hlo_status pred_read(const backend *be, const gcall *c, void *const *p, bool *go) {
  uint64_t v = 0;
  HLO_TRY(pred_value(be, c, p, &v));
  *go = c->nin ? (v & 1) != 0 : v != 0;
  return NULL;
}

/* The branch an IF or SWITCH record c takes (stablehlo.if: true takes
 * branch 0; stablehlo.case: an index out of range the last). */
static hlo_status branch_read(const backend *be, const gcall *c, void *const *p, uint32_t *b) {
  uint64_t v = 0;
  HLO_TRY(pred_value(be, c, p, &v));
  uint32_t n = c->u.cond.nbranches;
  if (c->u.cond.kind == BACKEND_COND_IF) *b = (c->nin ? (v & 1) : v != 0) ? 0 : 1;
  else if (c->u.cond.is_signed) *b = (int64_t)v < 0 || (int64_t)v >= (int64_t)n ? n - 1 : (uint32_t)v;
  else *b = v >= n ? n - 1 : (uint32_t)v;
  return NULL;
}

/* Issues list l on be: into the recording when `capture` (a conditional
 * node through the graph_cond slots), else call by call, a conditional
 * node run as the eager loop runs (its predicate read on the host at its
 * start and after each iteration). An unfinished node (a run whose
 * deferral ended inside the body) goes on when its predicate holds; when
 * it does not, its body was walked on the host already: an error. */
hlo_status cpu_dev_issue_all(const backend *be, const glist *l, bool capture) {
  bool again = false;
  for (uint32_t i = 0; i < l->n; i++) {
    const gcall *c = &l->c[i];
    void *const *p = l->p + c->ptr0;
    backend_cond bc;
    if (c->kind >= GC_COND_BEGIN) bc = cond_of(c, p); /* u.cond is a conditional record's only */
    else memset(&bc, 0, sizeof bc);
    switch ((gcall_kind)c->kind) {
    case GC_COND_BEGIN: {
      if (capture) {
        HLO_TRY(be->graph_cond_begin(&bc));
        break;
      }
      if (c->u.cond.kind != BACKEND_COND_WHILE) { /* on at the start of branch b */
        uint32_t b = 0;
        HLO_TRY(branch_read(be, c, p, &b));
        for (uint32_t k = i + 1; b && k < l->n && k < c->index; k++)
          if (l->c[k].kind == GC_COND_NEXT && !--b) i = k;
        break;
      }
      bool go = false;
      HLO_TRY(pred_read(be, c, p, &go));
      if (!go && c->index == COND_OPEN)
        return status_new(HLO_INTERNAL, "device executable: a while loop's deferral ended in its "
                          "body, whose first iteration does not run (set HLO_CUDA_COND_GRAPHS=0)");
      if (!go) i = c->index; /* on after its END */
      break;
    }
    case GC_COND_SET:
      if (capture) HLO_TRY(be->graph_cond_set(&bc));
      else HLO_TRY(pred_read(be, c, p, &again));
      break;
    case GC_COND_END:
      if (capture) HLO_TRY(be->graph_cond_end());
      else if (again && l->c[c->index].u.cond.kind == BACKEND_COND_WHILE)
        i = c->index; /* the body again */
      again = false;
      break;
    case GC_COND_NEXT:
      if (capture) HLO_TRY(be->graph_cond_next());
      else i = c->index - 1; /* a branch's end: on at the node's END */
      break;
    default: HLO_TRY(cpu_dev_issue_one(be, c, p)); break;
    }
  }
  return NULL;
}

/* Conditional nodes in l. */
static uint32_t cond_count(const glist *l) {
  uint32_t n = 0;
  for (uint32_t i = 0; i < l->n; i++) n += l->c[i].kind == GC_COND_BEGIN;
  return n;
}

static void key_push(gkey *k, uint64_t w) {
  if (!k->ok) return;
  if (k->n == k->cap) {
    uint32_t cap = k->cap ? 2 * k->cap : 32;
    uint64_t *n = realloc(k->w, cap * sizeof *n);
    if (!n) {
      k->ok = false;
      return;
    }
    k->w = n;
    k->cap = cap;
  }
  k->w[k->n++] = w;
}

static bool key_equal(const gkey *a, const gkey *b) {
  return a->ok && b->ok && a->n == b->n && !memcmp(a->w, b->w, a->n * sizeof *a->w);
}

/* Copies src into dst (dst's memory reused); dst->ok false when out of
 * memory. */
static void key_copy(gkey *dst, const gkey *src) {
  dst->n = 0;
  dst->ok = src->ok;
  for (uint32_t i = 0; i < src->n && dst->ok; i++) key_push(dst, src->w[i]);
}

void cpu_dev_recipe_push(grecipe *r, uint32_t k, bool hv) {
  if (!r->ok) return;
  if (r->n == r->cap) {
    uint32_t cap = r->cap ? 2 * r->cap : 8;
    uint32_t *n = realloc(r->res, cap * sizeof *n);
    if (n) r->res = n;
    bool *h = n ? realloc(r->hv, cap * sizeof *h) : NULL;
    if (h) r->hv = h;
    if (!n || !h) {
      r->ok = false;
      return;
    }
    r->cap = cap;
  }
  r->res[r->n] = k;
  r->hv[r->n++] = hv;
  if (k == RECIPE_BAD) r->ok = false;
}

static void recipe_copy(grecipe *dst, const grecipe *src) {
  dst->n = 0;
  dst->ok = src->ok;
  for (uint32_t i = 0; i < src->n && dst->ok; i++)
    cpu_dev_recipe_push(dst, src->res[i], src->hv[i]);
}

static void slot_forget(gslot *v) {
  v->key.ok = false;
  v->recipe.ok = false;
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
    st = g->dag ? cpu_dev_issue_dag(x, &g->calls) : cpu_dev_issue_all(be, &g->calls, true);
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
    if (g->dag) { /* a driver without the dependency calls, say: the next capture a chain */
      g->dag = false;
      if (g->verbose) fprintf(stderr, "hlo: @%s: later captures are chains\n", x->f->name);
    }
    return cpu_dev_issue_all(be, &g->calls, false);
  }
  uint32_t nodes = cond_count(&g->calls);
  g->cond_captured += nodes;
  if (g->verbose && nodes)
    fprintf(stderr, "hlo: graph capture %llu of @%s: %u calls, %u CUDA conditional "
            "node(s)\n", (unsigned long long)g->captures, x->f->name, g->calls.n, nodes);
  else if (g->verbose)
    fprintf(stderr, "hlo: graph capture %llu of @%s: %u calls\n",
            (unsigned long long)g->captures, x->f->name, g->calls.n);
  if (g->verbose && g->dag)
    fprintf(stderr, "hlo: graph capture %llu of @%s: a DAG of %llu nodes (calls), %llu edges, "
            "critical path %llu, %llu barrier(s)\n", (unsigned long long)g->captures,
            x->f->name, (unsigned long long)g->dag_calls, (unsigned long long)g->dag_edges,
            (unsigned long long)g->dag_depth, (unsigned long long)g->dag_barriers);
  else if (g->verbose)
    fprintf(stderr, "hlo: graph capture %llu of @%s: a chain (HLO_CUDA_GRAPH_DAG=0 or no "
            "graph_deps slots)\n", (unsigned long long)g->captures, x->f->name);
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
  slot_forget(v);
  g->launched = v;
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
hlo_status cpu_dev_graph_flush(cpu_exec *x, bool allow_graph) {
  cpu_dev *d = x->dev;
  graph_state *g = &d->g;
  if (!g->deferring) return NULL;
  if (g->prerun || g->copen >= 0) {
    /* a case's branches recorded, its node not made: not expected (the
     * host walked branch 0 whatever the selector) */
    g->eligible = false;
    g->cond_on = false;
    g->why = "a run ended its deferral inside a case's branches";
    hlo_status err = status_new(HLO_INTERNAL, "device executable: a deferred run of @%s %s "
                                "(HLO_CUDA_COND_GRAPHS=0 runs it without)", x->f->name,
                                g->prerun ? "ended inside a case's branch"
                                          : "could not close a case's conditional node");
    /* its calls are not issued (the host walked a branch the selector may
     * not take): the run fails; the deferral ends */
    g->copen = -1;
    g->deferring = false;
    x->be = d->real;
    g_rec = NULL;
    g->calls.n = g->calls.np = 0;
    for (uint32_t i = 0; i < g->ndfree; i++) d->real->free(g->dfree[i]);
    g->ndfree = 0;
    return err;
  }
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
      g->launched = hit;
      st = be->graph_launch(hit->exec);
    } else if (allow_graph && g->warm && g->captures < GRAPH_MAX_CAPTURES) {
      st = graph_capture_launch(x);
    } else {
      st = cpu_dev_issue_all(be, &g->calls, false);
    }
    g->warm = true;
  }
  if (g->open >= 0) { /* ended inside a loop's body: the rest of the run is eager */
    g->open = -1;
    g->eligible = false;
    g->why = "a run ended its deferral inside a conditional loop's body";
  }
  for (uint32_t i = 0; i < g->ndfree; i++) be->free(g->dfree[i]);
  g->ndfree = 0;
  return st;
}

/* Notes, for each conditional loop, the tensors its cond's arguments are
 * bound to now (a call of its cond's, or any other: then none is bound). */
static void cond_snap(cpu_exec *x) {
  graph_state *g = &x->dev->g;
  for (uint32_t k = 0; k < g->ncw; k++) {
    const hlo_block *b = x->progs[g->cw[k].cond].block;
    for (uint32_t i = 0; i < g->cw[k].n && i < b->num_args; i++) {
      uint32_t id = b->args[i].id;
      if (id < x->nvals && x->vals[id]) g->cw[k].snap[i] = x->vals[id];
    }
  }
}

/* Records call c with pointers p[0..np) in the deferred run of this
 * thread. At GRAPH_MAX_CALLS calls the run stops being deferred: the calls
 * so far are issued one by one, this one too, and the rest of the run is
 * eager; the executable defers no later run (its runs are that long). */
static hlo_status rec_push(gcall *c, const void *const *p, uint32_t np) {
  cpu_exec *x = g_rec;
  if (!x || !x->dev || !x->dev->g.deferring)
    return status_new(HLO_INTERNAL, "device executable: a call recorded outside a deferred run");
  graph_state *g = &x->dev->g;
  cond_snap(x);
  if (g->copen >= 0 && !g->prerun) HLO_TRY(cpu_dev_case_poll(x, NULL));
  if (g->calls.n >= GRAPH_MAX_CALLS && g->open < 0 && g->copen < 0 && !g->prerun) {
    g->eligible = false;
    g->why = "more calls than a graph takes (GRAPH_MAX_CALLS)";
    if (g->verbose)
      fprintf(stderr, "hlo: @%s: a run makes over %d device calls: not replayed as a graph\n",
              x->f->name, (int)GRAPH_MAX_CALLS);
    HLO_TRY(cpu_dev_graph_flush(x, false));
    return cpu_dev_issue_one(x->dev->real, c, (void *const *)p);
  }
  cpu_dev_dag_assign(g, c, p);
  return cpu_dev_glist_add(&g->calls, c, p, np);
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
    HLO_TRY(cpu_dev_graph_flush(x, false));
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
    HLO_TRY(cpu_dev_graph_flush(g_rec, false));
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
    HLO_TRY(cpu_dev_graph_flush(g_rec, false));
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
  HLO_TRY(cpu_dev_graph_flush(x, false));
  return x->be->synchronize();
}

static hlo_status shadow_copy(void *dst, const void *src, size_t n) {
  cpu_exec *x = g_rec;
  if (!x) return rec_push(NULL, NULL, 0);
  HLO_TRY(cpu_dev_graph_flush(x, false));
  return x->be->copy(dst, src, n);
}

/* A copy between device buffers (cpu_dev_copy): recorded in a deferred
 * run, else the backend's copy. */
hlo_status cpu_dev_graph_copy(cpu_exec *x, void *dst, const void *src, size_t n) {
  if (!n) return NULL;
  if (!x->dev->g.deferring) return x->dev->real->copy(dst, src, n);
  gcall c;
  memset(&c, 0, sizeof c);
  c.kind = GC_COPY;
  c.bytes = n;
  const void *p[2] = {dst, src};
  return rec_push(&c, p, 2);
}

/* Frees device buffer p: after the deferred calls when the run is
 * deferred (they may still read it). */
void cpu_dev_buffer_free(cpu_exec *x, void *p) {
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
    hlo_status_free(cpu_dev_graph_flush(x, false));
  }
  x->dev->real->free(p);
}

/* Takes pool's reference (graph_state.pool, gresult.pool) off; the last
 * one frees it. */
static void gpool_unref(gpool *pool) {
  if (__atomic_sub_fetch(&pool->refs, 1, __ATOMIC_ACQ_REL)) return;
  pthread_mutex_destroy(&pool->mu);
  free(pool->ret);
  free(pool);
}

/* The pointer given back for graph buffer k (the pool's: see gpool), or
 * NULL. */
static void *gpool_take(gpool *pool, uint32_t k) {
  if (!pool) return NULL;
  pthread_mutex_lock(&pool->mu);
  void *p = k < pool->n ? pool->ret[k] : NULL;
  if (p) pool->ret[k] = NULL;
  pthread_mutex_unlock(&pool->mu);
  return p;
}

/* tensor_device.release of a result holding graph buffer k: the buffer
 * goes back to the executable's pool for its next run (the same pointer:
 * the graphs that wrote it fit again), or is freed when the executable is
 * gone or has another buffer there by now. */
static void release_graph_result(tensor_device *dv) {
  gresult *r = (gresult *)dv;
  gpool *pool = r->pool;
  bool kept = false;
  pthread_mutex_lock(&pool->mu);
  if (!pool->dead && r->k < pool->n && !pool->ret[r->k]) {
    pool->ret[r->k] = dv->ptr;
    kept = true;
  }
  const backend *be = pool->be;
  pthread_mutex_unlock(&pool->mu);
  if (!kept) be->free(dv->ptr);
  gpool_unref(pool);
  free(r);
}

/* The graph buffer for an allocation of `bytes` in a deferred run: the
 * first one of that size no live tensor of the run holds, else a new one
 * (kept across runs). Runs that make the same allocations and frees in
 * the same order so get the same pointers (a graph recorded with them fits
 * again), and a buffer freed in a run (a loop iteration's value) serves
 * the run's later allocations, as the backend's own pool would. A buffer
 * handed to a result is taken back from the pool when the result was
 * released, else remade. *index: the buffer's. Errors: out of (device)
 * memory. */
hlo_status cpu_dev_graph_buffer(cpu_exec *x, size_t bytes, void **out, uint32_t *index) {
  graph_state *g = &x->dev->g;
  const backend *be = x->dev->real;
  uint32_t k = 0;
  while (k < g->ngb && (g->gb[k].busy || g->gb[k].bytes != bytes)) k++;
  if (k == g->ngb) {
    if (g->pool) { /* the pool's table grows with it */
      pthread_mutex_lock(&g->pool->mu);
      void **r = realloc(g->pool->ret, (g->ngb + 1) * sizeof *r);
      if (r) {
        r[g->ngb] = NULL;
        g->pool->ret = r;
        g->pool->n = g->ngb + 1;
      }
      pthread_mutex_unlock(&g->pool->mu);
      if (!r) return cpu_oom();
    }
    gbuffer *n = realloc(g->gb, (g->ngb + 1) * sizeof *n);
    if (!n) return cpu_oom();
    g->gb = n;
    g->gb[g->ngb++] = (gbuffer){NULL, bytes, false};
  }
  gbuffer *b = &g->gb[k];
  if (!b->p) b->p = gpool_take(g->pool, k);
  if (!b->p) {
    b->p = be->alloc(bytes);
    if (!b->p)
      return status_new(HLO_RESOURCE_EXHAUSTED, "out of device memory for a buffer of %zu bytes",
                        bytes);
  }
  b->busy = true;
  *out = b->p;
  *index = k;
  return NULL;
}

static bool program_eligible(cpu_exec *x, uint32_t pi, uint64_t *calls, int depth);

/* Whether while step s (no known trip count) is recorded as a conditional
 * WHILE node (see the design): NULL, its cond and body added to *calls
 * (each once, the cond twice: before the node and in its body, and the
 * node's copies); else why not. */
static const char *cond_while_eligible(cpu_exec *x, const step *s, uint64_t *calls, int depth) {
  graph_state *g = &x->dev->g;
  const backend *be = x->dev->real;
  static const char *const no = "a while loop without a known trip count (its predicate read "
                                "on the host)";
  if (!g->cond_on) return no;
  if (g->walk_in_cond)
    return "a while loop without a known trip count inside another one (conditional graph "
           "nodes are not nested)";
  uint32_t n = s->op->num_operands;
  if (s->nsub != 2 || !n) return no;
  const program *pc = &x->progs[s->sub[0]], *pb = &x->progs[s->sub[1]];
  const hlo_op *ct = pc->block->last, *bt = pb->block->last;
  if (pc->block->num_args != n || pb->block->num_args != n || !ct || ct->num_operands != 1 ||
      !bt || bt->num_operands != n)
    return no;
  const hlo_value *flag = ct->operands[0];
  hlo_dtype_class k = flag->type->kind == TYPE_TENSOR ? dtype_class(flag->type->dtype)
                                                      : HLO_CLASS_FLOAT;
  int64_t fb = cpu_value_bytes(flag);
  if (type_num_elements(flag->type) != 1 ||
      (k != HLO_CLASS_BOOL && k != HLO_CLASS_SINT && k != HLO_CLASS_UINT) ||
      (fb != 1 && fb != 2 && fb != 4 && fb != 8))
    return "a while loop whose predicate is no integer (conditional graph nodes)";
  if (flag->id >= x->nvals || x->home[flag->id] != HOME_ARENA || x->prog_of[flag->id] != s->sub[0])
    return "a while loop whose predicate is not computed by its cond on the device "
           "(conditional graph nodes)";
  /* each carried result is the body's own new value, or the carried value
   * passed through in its slot: nothing else writes or holds the buffers
   * the node's iterations carry values in */
  for (uint32_t i = 0; i < n; i++) {
    const hlo_value *r = bt->operands[i];
    for (uint32_t j = 0; j < i; j++)
      if (bt->operands[j] == r)
        return "a while body returning one value twice (conditional graph nodes)";
    if (r >= pb->block->args && r < pb->block->args + n) {
      if (r != &pb->block->args[i])
        return "a while body passing a carried value to another slot (conditional graph nodes)";
      continue;
    }
    if (r->id >= x->nvals || x->prog_of[r->id] != s->sub[1] || x->consts[r->id] ||
        x->home[r->id] == HOME_CONST || x->home[r->id] == HOME_ARG)
      return "a while body returning a value it does not compute (conditional graph nodes)";
  }
  backend_cond bc = {BACKEND_COND_WHILE, NULL, (uint32_t)fb, flag->type->dtype == HLO_I1, false,
                     1};
  if (!be->graph_cond_takes(&bc))
    return "a while loop without a known trip count (the backend cannot make conditional graph "
           "nodes now: a CUDA driver older than 12.4?)";
  uint64_t cc = 0, bc_calls = 0;
  g->walk_in_cond = true;
  bool ok = program_eligible(x, s->sub[0], &cc, depth + 1) &&
            program_eligible(x, s->sub[1], &bc_calls, depth + 1);
  g->walk_in_cond = false;
  if (!ok) return g->why;
  *calls += 2 * cc + bc_calls + 3 + 3 * (uint64_t)n + s->nin + s->nout;
  for (uint32_t i = 0; i < g->ncw; i++)
    if (g->cw[i].s == s) return NULL;
  if (g->ncw == g->capcw) {
    uint32_t cap = g->capcw ? 2 * g->capcw : 4;
    cwhile *c = realloc(g->cw, cap * sizeof *c);
    if (!c) return "out of memory";
    g->cw = c;
    g->capcw = cap;
  }
  const tensor **snap = calloc(n, sizeof *snap);
  if (!snap) return "out of memory";
  g->cw[g->ncw++] = (cwhile){s, s->sub[0], s->sub[1], flag, (uint32_t)fb,
                             flag->type->dtype == HLO_I1, snap, n};
  return NULL;
}

/* Whether case step s is recorded as an IF or SWITCH node: NULL, its
 * branches added to *calls; else why not. */
static const char *cond_case_eligible(cpu_exec *x, const step *s, uint64_t *calls, int depth) {
  graph_state *g = &x->dev->g;
  static const char *const no = "a case / if (its selector read on the host)";
  if (!g->cond_on) return no;
  if (g->walk_in_cond)
    return "a case / if inside a conditional graph node (they are not nested)";
  bool is_if = s->op->opcode == OP_IF;
  if (!s->nsub || s->nin < 1 || (is_if && s->nsub != 2)) return no;
  if (depth)
    return "a case / if inside a loop's body (conditional graph nodes: program 0's only)";
  /* its results are found when the host's walk is past it (cpu_dev_case_poll):
   * each is read by a later call of program 0, or it is the one result,
   * returned by program 0 (cpu_dev_result) */
  const program *p0 = &x->progs[0];
  const hlo_op *t0 = p0->block->last;
  for (uint32_t i = 0; i < s->nout; i++) {
    bool read = false, returned = false;
    for (uint32_t j = (uint32_t)(s - p0->steps) + 1; j < p0->nsteps && !read; j++) {
      const step *q = &p0->steps[j];
      if (q->elided || !step_is_native(q->kind)) continue;
      for (uint32_t k = 0; k < q->nin && !read; k++) read = q->in[k] == s->out[i];
    }
    for (uint32_t k = 0; t0 && k < t0->num_operands; k++) returned |= t0->operands[k] == s->out[i];
    if (!read && !(returned && s->nout == 1))
      return "a case / if with a result no later call reads (conditional graph nodes)";
  }
  const hlo_value *sel = s->in[0];
  hlo_dtype_class k = sel->type->kind == TYPE_TENSOR ? dtype_class(sel->type->dtype)
                                                     : HLO_CLASS_FLOAT;
  int64_t sb = cpu_value_bytes(sel);
  if (type_num_elements(sel->type) != 1 ||
      (k != HLO_CLASS_BOOL && k != HLO_CLASS_SINT && k != HLO_CLASS_UINT) ||
      (sb != 1 && sb != 2 && sb != 4 && sb != 8))
    return "a case / if whose selector is no integer (conditional graph nodes)";
  uint32_t sel_in = 0;
  if (cpu_dev_arena_at(x, sel, &sel_in) < 0)
    return "a case / if whose selector is not computed on the device (conditional graph nodes)";
  /* each branch's results are its own new values */
  for (uint32_t b = 0; b < s->nsub; b++) {
    const hlo_op *t = x->progs[s->sub[b]].block->last;
    if (!t || t->num_operands != s->nout) return no;
    for (uint32_t i = 0; i < t->num_operands; i++) {
      const hlo_value *r = t->operands[i];
      for (uint32_t j = 0; j < i; j++)
        if (t->operands[j] == r)
          return "a case / if branch returning one value twice (conditional graph nodes)";
      if (r->id >= x->nvals || x->prog_of[r->id] != s->sub[b] || x->consts[r->id] ||
          x->home[r->id] == HOME_CONST || x->home[r->id] == HOME_ARG)
        return "a case / if branch returning a value it does not compute (conditional graph "
               "nodes)";
    }
  }
  backend_cond bc = {is_if ? BACKEND_COND_IF : BACKEND_COND_SWITCH, NULL, (uint32_t)sb,
                     sel->type->dtype == HLO_I1, k == HLO_CLASS_SINT, s->nsub};
  if (!x->dev->real->graph_cond_takes(&bc) || !x->dev->real->graph_cond_next)
    return "a case / if (the backend cannot make conditional graph nodes now: a CUDA driver "
           "older than 12.8?)";
  uint64_t n = 0;
  g->walk_in_cond = true;
  for (uint32_t b = 0; b < s->nsub; b++) {
    uint64_t c = 0;
    bool ok = program_eligible(x, s->sub[b], &c, depth + 1);
    n += c;
    if (!ok) {
      g->walk_in_cond = false;
      return g->why;
    }
  }
  g->walk_in_cond = false;
  *calls += n + (uint64_t)s->nout * s->nsub + s->nsub + 2;
  for (uint32_t i = 0; i < g->ncc; i++)
    if (g->cc[i].s == s) return NULL;
  if (g->ncc == g->capcc) {
    uint32_t cap = g->capcc ? 2 * g->capcc : 4;
    ccase *c = realloc(g->cc, cap * sizeof *c);
    if (!c) return "out of memory";
    g->cc = c;
    g->capcc = cap;
  }
  g->cc[g->ncc++] = (ccase){s, sel, bc.kind, (uint32_t)sb, bc.pred_bit, bc.pred_signed};
  return NULL;
}

/* Whether two conditional nodes' predicates may lie in one buffer (the
 * reads that the deferred run intercepts are told apart by address). */
static bool preds_overlap(cpu_exec *x) {
  graph_state *g = &x->dev->g;
  uint32_t n = g->ncw + g->ncc;
  for (uint32_t i = 0; i < n; i++)
    for (uint32_t j = 0; j < i; j++) {
      const hlo_value *a = i < g->ncw ? g->cw[i].flag : g->cc[i - g->ncw].sel;
      const hlo_value *b = j < g->ncw ? g->cw[j].flag : g->cc[j - g->ncw].sel;
      uint32_t ia = 0, ib = 0; /* the arena (0) or a result's allocation */
      int64_t pa = cpu_dev_arena_at(x, a, &ia), pb = cpu_dev_arena_at(x, b, &ib);
      if (ia == ib && pa < pb + cpu_value_bytes(b) && pb < pa + cpu_value_bytes(a)) return true;
    }
  return false;
}

/* Walks program pi for graph_eligible: whether its steps are device work
 * only, a while with a known trip count counting as its body's steps that
 * many times (its cond is not run), one without as a conditional node
 * (cond_while_eligible); *calls gets the calls one run of it makes
 * (saturating at GRAPH_MAX_CALLS + 1); kernels' buffer counts into
 * g->knbufs. */
static bool program_eligible(cpu_exec *x, uint32_t pi, uint64_t *calls, int depth) {
  const backend *be = x->dev->real;
  graph_state *g = &x->dev->g;
  const program *p = &x->progs[pi];
  uint64_t n = 0;
  if (depth > 32) {
    g->why = "loops nested too deep";
    return false;
  }
  for (uint32_t i = 0; i < p->nsteps; i++) {
    const step *s = &p->steps[i];
    if (s->elided) continue;
    n += s->kind != STEP_ALIAS && s->kind != STEP_WHILE;
    switch (s->kind) {
    case STEP_KERNEL:
      if (s->kernel < g->nk) g->knbufs[s->kernel] = s->nin + s->nout;
      break;
    case STEP_GEMM:
      if (s->epilogue) {
        g->why = "a gemm with an epilogue";
        return false;
      }
      break;
    case STEP_CONV: case STEP_WINDOW: case STEP_SORT: case STEP_ALIAS: break;
    case STEP_FILL: case STEP_GATHER: case STEP_SCATTER:
      if (!cpu_copy_on_backend(be, s)) { /* else on the host mirror */
        g->why = "data movement on the host";
        return false;
      }
      break;
    case STEP_DSLICE: case STEP_DUS: /* when the device reads the start indices */
      if (!cpu_copy_on_backend(be, s) || !cpu_copy_indices_on_device(be, s)) {
        g->why = "dynamic_slice / dynamic_update_slice with start indices read on the host";
        return false;
      }
      break;
    case STEP_PAD: /* on the device, its padding value a constant (no download) */
      if (!cpu_copy_on_backend(be, s) || s->nin < 2 || !s->in[1]->def ||
          s->in[1]->def->opcode != OP_CONSTANT) {
        g->why = "a pad whose padding value is read on the host";
        return false;
      }
      break;
    case STEP_WHILE: {
      /* with a known trip count: the body that many times, unrolled */
      int64_t trips = op_attr_int(s->op, WHILE_KNOWN_TRIP_COUNT, -1);
      if (trips < 0) { /* a conditional WHILE node */
        const char *why = cond_while_eligible(x, s, &n, depth);
        if (why) {
          g->why = why;
          return false;
        }
        break;
      }
      if (s->nsub != 2) {
        g->why = "a while loop without a known trip count (its predicate read on the host)";
        return false;
      }
      uint64_t body = 0;
      if (!program_eligible(x, s->sub[1], &body, depth + 1)) return false;
      /* the loop's own copies (init values, results out of the state) */
      n += s->nin + s->nout;
      n += body && (uint64_t)trips > (GRAPH_MAX_CALLS + 1) / body ? GRAPH_MAX_CALLS + 1
                                                                 : body * (uint64_t)trips;
      break;
    }
    case STEP_CASE: { /* an IF or SWITCH node */
      const char *why = cond_case_eligible(x, s, &n, depth);
      if (why) {
        g->why = why;
        return false;
      }
      break;
    }
    default:
      g->why = "an interpreter step (on the host)";
      return false;
    }
    if (n > GRAPH_MAX_CALLS) break;
  }
  *calls = n > GRAPH_MAX_CALLS ? GRAPH_MAX_CALLS + 1 : n;
  return true;
}

/* Whether program 0 is device work only (see the design); fills the
 * buffer counts of its kernels; g->why says why not. */
static bool graph_eligible(cpu_exec *x) {
  graph_state *g = &x->dev->g;
  uint32_t nk = 0;
  for (uint32_t pi = 0; pi < x->nprogs; pi++)
    for (uint32_t i = 0; i < x->progs[pi].nsteps; i++) {
      const step *s = &x->progs[pi].steps[i];
      if (s->kind == STEP_KERNEL && s->kernel + 1 > nk) nk = s->kernel + 1;
    }
  free(g->knbufs);
  g->knbufs = calloc(nk ? nk : 1, sizeof *g->knbufs);
  g->nk = g->knbufs ? nk : 0;
  if (!g->knbufs) {
    g->why = "out of memory";
    return false;
  }
  uint64_t calls = 0;
  for (uint32_t i = 0; i < g->ncw; i++) free(g->cw[i].snap);
  g->ncw = g->ncc = 0;
  g->walk_in_cond = false;
  bool ok = program_eligible(x, 0, &calls, 0);
  if (ok && preds_overlap(x)) {
    ok = false;
    g->why = "two conditional graph nodes' predicates in one buffer";
  }
  if (!ok) {
    for (uint32_t i = 0; i < g->ncw; i++) free(g->cw[i].snap);
    g->ncw = g->ncc = 0;
    return false;
  }
  if (calls > GRAPH_MAX_CALLS) {
    g->why = "more calls than a graph takes (GRAPH_MAX_CALLS)";
    return false;
  }
  /* a replay is one graph launch (results are handed the graph buffers
   * they lie in, not copied): worth it from two calls on */
  if (calls < 2) {
    g->why = "fewer than two calls";
    return false;
  }
  if (g->verbose && g->ncw)
    fprintf(stderr, "hlo: @%s: %u while loop(s) without a known trip count recorded as CUDA "
            "conditional WHILE nodes\n", x->f->name, g->ncw);
  if (g->verbose && g->ncc)
    fprintf(stderr, "hlo: @%s: %u case / if recorded as CUDA conditional SWITCH nodes\n",
            x->f->name, g->ncc);
  return true;
}

/* Before a run (cpu_dev_begin_run): whether it may be deferred (the
 * state reset for it). */
bool cpu_dev_graph_may_defer(cpu_exec *x) {
  graph_state *g = &x->dev->g;
  g->calls.n = g->calls.np = 0;
  g->launched = g->replay = NULL;
  g->key.n = 0, g->key.ok = false;
  g->recipe.n = 0, g->recipe.ok = true;
  g->open = g->copen = -1;
  g->prerun = false;
  g->nresults = 0;
  for (uint32_t i = 0; i < g->ncres; i++) tensor_release(g->cres[i]);
  g->ncres = 0;
  for (uint32_t i = 0; i < g->ncw; i++) memset(g->cw[i].snap, 0, g->cw[i].n * sizeof *g->cw[i].snap);
  for (uint32_t i = 0; i < g->ngb; i++) g->gb[i].busy = false;
  for (uint32_t i = 0; i < g->ntmp; i++) g->tmp[i].busy = false;
  if (!g->enabled || x->profile || x->check) return false;
  if (!g->checked) {
    g->checked = true;
    g->eligible = graph_eligible(x);
  }
  if (!g->eligible && g->verbose && !g->told) {
    g->told = true;
    fprintf(stderr, "hlo: @%s is not replayed as a graph: %s\n", x->f->name,
            g->why ? g->why : "?");
  }
  /* a buffer handed to a result: given back by now, else remade now (as
   * the run would when it takes it: the key holds every buffer's pointer) */
  for (uint32_t i = 0; g->eligible && i < g->ngb; i++) {
    if (!g->gb[i].p) g->gb[i].p = gpool_take(g->pool, i);
    if (!g->gb[i].p) g->gb[i].p = x->dev->real->alloc(g->gb[i].bytes);
  }
  return g->eligible;
}

/* Defers the run: the work calls recorded from now on. */
void cpu_dev_graph_defer(cpu_exec *x) {
  graph_state *g = &x->dev->g;
  g->deferring = true;
  g->runs++;
  g->ngrp = g->nrg = g->grp_cur = 0;
  g->grp_open = g->grp_bad = false;
  x->be = &g->shadow;
  g_rec = x;
}

/* The graph state's start (cpu_dev_create): the shadow table, the switch. */
void cpu_dev_graph_init(cpu_dev *d) {
  const backend *be = d->real;
  graph_state *g = &d->g;
  const char *env = getenv("HLO_CUDA_GRAPHS");
  g->enabled = be->graph_begin && be->graph_end && be->graph_launch && be->graph_destroy &&
               !(env && !strcmp(env, "0"));
  g->verbose = g->enabled && env && !strcmp(env, "verbose");
  const char *cenv = getenv("HLO_CUDA_COND_GRAPHS");
  g->cond_on = g->enabled && be->graph_cond_takes && be->graph_cond_begin &&
               be->graph_cond_set && be->graph_cond_end && !(cenv && !strcmp(cenv, "0"));
  const char *denv = getenv("HLO_CUDA_GRAPH_DAG");
  g->dag = g->enabled && be->graph_deps_get && be->graph_deps_set && !(denv && !strcmp(denv, "0"));
  g->open = g->copen = -1;
  if (g->enabled) {
    g->pool = calloc(1, sizeof *g->pool);
    if (g->pool && pthread_mutex_init(&g->pool->mu, NULL)) {
      free(g->pool);
      g->pool = NULL;
    }
    if (g->pool) g->pool->refs = 1, g->pool->be = be;
  }
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

void cpu_dev_graph_free(cpu_dev *d) {
  graph_state *g = &d->g;
  for (uint32_t i = 0; i < GRAPH_SLOTS; i++) {
    if (g->slot[i].exec) d->real->graph_destroy(g->slot[i].exec);
    cpu_dev_glist_free(&g->slot[i].calls);
    free(g->slot[i].key.w);
    free(g->slot[i].recipe.res);
    free(g->slot[i].recipe.hv);
  }
  free(g->key.w);
  free(g->recipe.res);
  free(g->recipe.hv);
  cpu_dev_glist_free(&g->calls);
  free(g->grp);
  free(g->rg);
  for (uint32_t i = 0; i < g->ngb; i++) d->real->free(g->gb[i].p);
  if (g->pool) { /* results still out free their buffers themselves */
    pthread_mutex_lock(&g->pool->mu);
    g->pool->dead = true;
    for (uint32_t i = 0; i < g->pool->n; i++) d->real->free(g->pool->ret[i]);
    pthread_mutex_unlock(&g->pool->mu);
    gpool_unref(g->pool);
  }
  for (uint32_t i = 0; i < g->ndfree; i++) d->real->free(g->dfree[i]);
  for (uint32_t i = 0; i < g->ntmp; i++) d->real->free(g->tmp[i].p);
  free(g->tmp);
  for (uint32_t i = 0; i < g->ncw; i++) free(g->cw[i].snap);
  free(g->cw);
  free(g->cc);
  for (uint32_t i = 0; i < g->ncbody; i++) cpu_dev_glist_free(&g->cbody[i]);
  free(g->cbody);
  for (uint32_t i = 0; i < g->ncres; i++) tensor_release(g->cres[i]);
  free(g->cres);
  free(g->cs);
  free(g->gb);
  free(g->dfree);
  free(g->knbufs);
}

/* Graph replay's counters (tests; declared by them): out[0] deferred runs,
 * out[1] captures (failed ones included), out[2] graph launches, out[3]
 * failed captures, out[4] launches without the steps (cpu_dev_replay).
 * Zeros for an executable off a device backend. */
void cpu_dev_graph_counters(const cpu_exec *x, uint64_t out[5]);
void cpu_dev_graph_counters(const cpu_exec *x, uint64_t out[5]) {
  const graph_state *g = x && x->dev ? &x->dev->g : NULL;
  out[0] = g ? g->runs : 0;
  out[1] = g ? g->captures : 0;
  out[2] = g ? g->launches : 0;
  out[3] = g ? g->failures : 0;
  out[4] = g ? g->replays : 0;
}

/* Conditional nodes (tests; declared by them): out[0] recorded by
 * deferred runs, out[1] in captured graphs. Zeros off a device backend. */
/* The last DAG capture's shape (tests): out[0] calls, out[1] edges
 * between them, out[2] the longest path, out[3] barriers; out[4] 1 when
 * captures are DAGs. Zeros off a device backend. */
void cpu_dev_graph_dag_counters(const cpu_exec *x, uint64_t out[5]);
void cpu_dev_graph_dag_counters(const cpu_exec *x, uint64_t out[5]) {
  const graph_state *g = x->dev ? &x->dev->g : NULL;
  out[0] = g ? g->dag_calls : 0;
  out[1] = g ? g->dag_edges : 0;
  out[2] = g ? g->dag_depth : 0;
  out[3] = g ? g->dag_barriers : 0;
  out[4] = g && g->dag;
}

void cpu_dev_graph_cond_counters(const cpu_exec *x, uint64_t out[2]);
void cpu_dev_graph_cond_counters(const cpu_exec *x, uint64_t out[2]) {
  const graph_state *g = x && x->dev ? &x->dev->g : NULL;
  out[0] = g ? g->cond_nodes : 0;
  out[1] = g ? g->cond_captured : 0;
}

/* The run's key (gkey; before it is deferred, its arguments registered):
 * per argument its device pointer (the caller's or the graph buffer it
 * was uploaded into), whether it is lent, valid on the host, borrowed,
 * its reference count (the runtime writes a loop's carried value in place
 * by it), which earlier argument has the same data; then every graph
 * buffer's pointer; then the arena's validity runs (a copy between
 * buffers runs on the device or on the host by where its source is
 * valid). A tuple argument: no key. */
void cpu_dev_graph_key(cpu_exec *x, tensor *const *args, uint32_t n) {
  cpu_dev *d = x->dev;
  graph_state *g = &d->g;
  gkey *k = &g->key;
  k->n = 0;
  k->ok = true;
  key_push(k, n);
  for (uint32_t i = 0; i < n; i++) {
    const tensor *t = args[i];
    if (!t || (t->type && t->type->kind == TYPE_TUPLE)) {
      k->ok = false;
      return;
    }
    int64_t e = t->nbytes && t->data ? cpu_dev_find(d, t->data) : -1;
    uint32_t same = 0;
    for (uint32_t j = 0; j < i && !same; j++)
      if (args[j] && args[j]->data == t->data) same = j + 1;
    uint64_t flags = (e >= 0 && d->e[e].lent) | (uint64_t)(e >= 0 && (d->e[e].state & ON_HOST)) << 1 |
                     (uint64_t)t->borrowed << 2 | (uint64_t)(t->device != NULL) << 3 |
                     (uint64_t)same << 8 |
                     (uint64_t)__atomic_load_n(&t->refcount, __ATOMIC_ACQUIRE) << 32;
    key_push(k, e >= 0 ? (uint64_t)(uintptr_t)d->e[e].dev : 0);
    key_push(k, flags);
    key_push(k, t->nbytes);
  }
  key_push(k, g->ngb);
  for (uint32_t i = 0; i < g->ngb; i++) key_push(k, (uint64_t)(uintptr_t)g->gb[i].p);
  /* the arena's validity (a copy runs on the device or the host by it) */
  key_push(k, d->granules.count);
  for (uint32_t i = 0; i < d->granules.count; i++)
    key_push(k, (uint64_t)d->granules.at[i] << 8 | d->granules.state[i]);
}

/* Hands graph buffer k to result r (r->device, given back to the pool
 * when r is released: release_graph_result), its host mirror valid when
 * hv. Errors: out of memory. */
hlo_status cpu_dev_hand_graph_buffer(cpu_exec *x, tensor *r, uint32_t k, bool hv) {
  cpu_dev *d = x->dev;
  gresult *gr = malloc(sizeof *gr);
  if (!gr) return cpu_oom();
  gr->d = (tensor_device){d->g.gb[k].p, d->real, hv, true, release_graph_result};
  gr->pool = d->g.pool;
  gr->k = k;
  __atomic_add_fetch(&d->g.pool->refs, 1, __ATOMIC_ACQ_REL);
  r->device = &gr->d;
  d->g.gb[k].p = NULL;
  d->g.gb[k].busy = false;
  return NULL;
}

void cpu_dev_results_done(cpu_exec *x, uint32_t nres) {
  cpu_dev *d = x->dev;
  if (!d || !d->g.launched) return;
  graph_state *g = &d->g;
  gslot *v = g->launched;
  g->launched = NULL;
  /* every result a graph buffer of its own (or without bytes), none twice */
  bool ok = g->key.ok && g->recipe.ok && g->recipe.n == nres;
  for (uint32_t i = 0; ok && i < nres; i++)
    for (uint32_t j = 0; ok && j < i; j++)
      ok = g->recipe.res[i] == RECIPE_NONE || g->recipe.res[i] != g->recipe.res[j];
  if (!ok) {
    if (g->verbose && !g->told_recipe) {
      uint32_t bad = 0;
      while (bad < g->recipe.n && g->recipe.res[bad] != RECIPE_BAD) bad++;
      g->told_recipe = true;
      fprintf(stderr, "hlo: @%s: its graph is replayed with its steps run: %s\n", x->f->name,
              !g->key.ok ? "a tuple argument" :
              bad < g->recipe.n ? "a result is no graph buffer of its own (an argument, a constant, "
                                  "a tuple)" : "a result appears twice");
      if (bad < g->recipe.n) fprintf(stderr, "hlo:   result %u\n", bad);
    }
    slot_forget(v);
    return;
  }
  key_copy(&v->key, &g->key);
  recipe_copy(&v->recipe, &g->recipe);
  if (!v->key.ok || !v->recipe.ok) slot_forget(v);
}

hlo_status cpu_dev_replay(cpu_exec *x, bool *replayed) {
  *replayed = false;
  cpu_dev *d = x->dev;
  if (!d || !d->g.deferring || !d->g.key.ok) return NULL;
  graph_state *g = &d->g;
  gslot *v = NULL;
  for (uint32_t i = 0; i < GRAPH_SLOTS && !v; i++)
    if (g->slot[i].exec && g->slot[i].recipe.ok && key_equal(&g->slot[i].key, &g->key))
      v = &g->slot[i];
  if (!v) return NULL;
  /* the run's steps are not run: the graph makes what they would */
  g->deferring = false;
  x->be = d->real;
  g_rec = NULL;
  g->warm = true;
  v->used = g->runs;
  g->launches++;
  g->replays++;
  g->replay = v;
  g->nreplayed = 0;
  *replayed = true;
  return d->real->graph_launch(v->exec);
}

hlo_status cpu_dev_replay_result(cpu_exec *x, tensor *r) {
  cpu_dev *d = x->dev;
  graph_state *g = d ? &d->g : NULL;
  if (!g || !g->replay || g->nreplayed >= g->replay->recipe.n)
    return status_new(HLO_INTERNAL, "device executable: a replayed run has no result %u",
                      g ? g->nreplayed : 0);
  uint32_t i = g->nreplayed++, k = g->replay->recipe.res[i];
  if (k == RECIPE_NONE) return NULL;
  if (k >= g->ngb || !g->gb[k].p || g->gb[k].bytes != r->nbytes || r->device)
    return status_new(HLO_INTERNAL, "device executable: result %u of a replayed run has no graph "
                      "buffer", i);
  return cpu_dev_hand_graph_buffer(x, r, k, g->replay->recipe.hv[i]);
}
