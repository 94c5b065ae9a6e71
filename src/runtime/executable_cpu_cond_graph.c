/* executable_cpu_cond_graph.c — conditional graph nodes in a deferred run
 * of a device executable: a while loop without a known trip count
 * recorded as a WHILE node, a case / if as a SWITCH node (the design: the
 * header comment of executable_cpu_device.c; the backend's graph_cond_*
 * slots, backend.h). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "runtime/executable_cpu_device_internal.h"

/* ---- conditional WHILE nodes: the loop's predicate (the design: the
 * header comment) ---- */

/* The device pointer of host memory p[0..bytes) where it is valid on the
 * device: the arena's, or an entry's (a result's allocation holding
 * temporaries: where its granules are); false elsewhere. */
static bool dev_ptr(const cpu_dev *d, const uint8_t *p, size_t bytes, uint8_t **out) {
  if (cpu_dev_in_arena(d, p)) {
    if (!cpu_dev_valid_on_dev(d, p, bytes)) return false;
    *out = d->arena + (p - d->host_arena);
    return true;
  }
  int64_t i = cpu_dev_find(d, p);
  if (i < 0 || !cpu_dev_valid_on_dev(d, p, bytes) || !d->e[i].dev ||
      p + bytes > d->e[i].host + d->e[i].bytes)
    return false;
  *out = d->e[i].dev + (p - d->e[i].host);
  return true;
}

/* Whether tensor t is held by its loop only (and the device entry for it):
 * nothing else reads the buffer, so the node may write it. */
static bool held_alone(const cpu_exec *x, const tensor *t) {
  return (int64_t)__atomic_load_n(&t->refcount, __ATOMIC_ACQUIRE) ==
         1 + (int64_t)cpu_dev_holds(x, t);
}

/* A loop-owned buffer of `bytes` (kept across runs: the first free one of
 * that size, else a new one). Errors: out of (device) memory. */
static hlo_status cond_temp(cpu_exec *x, size_t bytes, uint8_t **out) {
  graph_state *g = &x->dev->g;
  uint32_t k = 0;
  while (k < g->ntmp && (g->tmp[k].busy || g->tmp[k].bytes != bytes)) k++;
  if (k == g->ntmp) {
    ctemp *n = realloc(g->tmp, (g->ntmp + 1) * sizeof *n);
    if (!n) return cpu_oom();
    g->tmp = n;
    void *p = x->dev->real->alloc(bytes);
    if (!p)
      return status_new(HLO_RESOURCE_EXHAUSTED, "out of device memory for a loop's buffer of %zu "
                        "bytes", bytes);
    g->tmp[g->ntmp++] = (ctemp){p, bytes, false};
  }
  g->tmp[k].busy = true;
  *out = g->tmp[k].p;
  return NULL;
}

/* Appends a record of kind `kind` with pointers p[0..np) (and the
 * predicate's size and form) to the run's calls. */
static hlo_status cond_push(graph_state *g, gcall_kind kind, const void *const *p, uint32_t np,
                            uint64_t bytes, uint32_t bit, uint32_t index) {
  gcall c;
  memset(&c, 0, sizeof c);
  c.kind = kind;
  c.bytes = bytes;
  c.nin = bit;
  c.index = index;
  c.u.cond.kind = BACKEND_COND_WHILE;
  c.u.cond.nbranches = 1;
  return cpu_dev_glist_add(&g->calls, &c, p, np);
}

static hlo_status cond_copy(graph_state *g, void *dst, const void *src, size_t n) {
  const void *p[2] = {dst, src};
  return cond_push(g, GC_COPY, p, 2, n, 0, 0);
}

/* The loop's node cannot be made now: this run and the later ones issue
 * call by call (the caller then reads the predicate as an eager loop). */
static void cond_refuse(cpu_exec *x, const char *why) {
  graph_state *g = &x->dev->g;
  g->eligible = false;
  g->why = why;
  if (g->verbose)
    fprintf(stderr, "hlo: @%s: run %llu: no conditional graph node: %s\n", x->f->name,
            (unsigned long long)g->runs, why);
  /* the rest of the run eager (the host reads the predicate; a value valid
   * on the host needs no download, which would end the deferral: ended
   * here; an error is the backend's, met again by its next call) */
  hlo_status_free(cpu_dev_graph_flush(x, false));
}

static bool overlap(const uint8_t *a, size_t na, const uint8_t *b, size_t nb) {
  return a < b + nb && b < a + na;
}

/* The first read of loop w's predicate (at host[0..bytes)) in a deferred
 * run: the carried values' buffers are noted (a), a loop-owned slot made
 * for each that is not the loop's alone and that the body replaces, the
 * node begun (its predicate set from the cond's result, computed by the
 * calls recorded so far), and the host told "true": it walks the body
 * once, recorded into the node. */
static hlo_status cond_open(cpu_exec *x, uint32_t k, uint8_t *host, size_t bytes, bool *took) {
  cpu_dev *d = x->dev;
  graph_state *g = &d->g;
  const cwhile *w = &g->cw[k];
  const program *pc = &x->progs[w->cond], *pb = &x->progs[w->body];
  uint32_t n = pc->block->num_args;
  uint8_t *flag = NULL;
  if (!dev_ptr(d, host, bytes, &flag)) {
    cond_refuse(x, "a while loop's predicate is not on the device");
    return NULL;
  }
  if (n > g->capcs) {
    cslot *c = realloc(g->cs, n * sizeof *c);
    if (!c) return cpu_oom();
    g->cs = c;
    g->capcs = n;
  }
  for (uint32_t i = 0; i < n; i++) {
    const tensor *t = w->snap[i];
    cslot *c = &g->cs[i];
    memset(c, 0, sizeof *c);
    if (!t) {
      cond_refuse(x, "a while loop's carried value was not bound at its cond's calls");
      return NULL;
    }
    c->bytes = t->nbytes;
    if (c->bytes && !dev_ptr(d, t->data, t->nbytes, &c->a)) {
      cond_refuse(x, "a while loop's carried value is not on the device");
      return NULL;
    }
    c->s = c->a;
  }
  for (uint32_t i = 0; i < n; i++) {
    const tensor *t = w->snap[i];
    cslot *c = &g->cs[i];
    bool passed = pb->block->last->operands[i] == &pb->block->args[i];
    if (!c->bytes || passed || held_alone(x, t)) continue;
    /* shared (a constant, an argument, a value read after the loop): the
     * node carries it in a buffer of its own, from a copy */
    HLO_TRY(cond_temp(x, c->bytes, &c->s));
    HLO_TRY(cond_copy(g, c->s, c->a, c->bytes));
  }
  const void *p[1] = {flag};
  HLO_TRY(cond_push(g, GC_COND_BEGIN, p, 1, w->pred_size, w->pred_bit, COND_OPEN));
  memset(w->snap, 0, w->n * sizeof *w->snap); /* the next snapshot: the cond after the body */
  g->open = (int32_t)k;
  g->open_at = g->calls.n - 1;
  g->open_flag = flag;
  g->ncs = n;
  memset(host, 0, bytes);
  host[0] = 1; /* true: the body is walked (recorded) once */
  *took = true;
  return NULL;
}

/* Rewrites, in the calls from `from` on, every pointer into a[0..bytes)
 * to the same offset of s (the body's recorded calls then work on the
 * loop-owned slot). */
static void cond_rebase(graph_state *g, uint32_t from, const uint8_t *a, size_t bytes,
                        uint8_t *s) {
  for (uint32_t i = from; i < g->calls.n; i++) {
    gcall *c = &g->calls.c[i];
    for (uint32_t j = 0; j < c->nptr; j++) {
      uint8_t *q = g->calls.p[c->ptr0 + j];
      if (q >= a && q < a + bytes) g->calls.p[c->ptr0 + j] = s + (q - a);
    }
    if (c->kind == GC_COPY_BOX)
      for (uint32_t j = 0; j < c->u.box.ndyn && j < BACKEND_BOX_MAX_RANK; j++) {
        const uint8_t *q = c->u.box.dyn_index[j];
        if (q >= a && q < a + bytes) c->u.box.dyn_index[j] = s + (q - a);
      }
  }
}

/* The second read of the predicate of the open loop: the body and the
 * cond after it are recorded; the node is closed: the body's calls moved
 * onto the loop-owned slots, the predicate set, the new values copied into
 * the carried slots (the next iteration reads them there); after the node,
 * the carried slots copied to where the host's walk left the results (b).
 * The host is told "false": its walk ends. */
static hlo_status cond_close(cpu_exec *x, uint8_t *host, size_t bytes, bool *took) {
  cpu_dev *d = x->dev;
  graph_state *g = &d->g;
  const cwhile *w = &g->cw[g->open];
  uint32_t n = g->ncs;
  const char *bad = NULL;
  for (uint32_t i = 0; i < n && !bad; i++) {
    const tensor *t = w->snap[i];
    cslot *c = &g->cs[i];
    if (!c->bytes) continue;
    if (!t || t->nbytes != c->bytes || !dev_ptr(d, t->data, t->nbytes, &c->b))
      bad = "a carried value the body made is not on the device";
    else if (c->b != c->a && !held_alone(x, t))
      bad = "a carried value the body made is not the loop's alone";
    else if (c->s != c->a && overlap(c->b, c->bytes, c->a, c->bytes))
      bad = "the body wrote over a carried value that is not the loop's alone";
  }
  /* the copies between slots must not overlap (each value's buffers are
   * the loop's own or fresh: checked, not expected) */
  for (uint32_t i = 0; i < n && !bad; i++)
    for (uint32_t j = 0; j < n && !bad; j++) {
      const cslot *ci = &g->cs[i], *cj = &g->cs[j];
      if (i == j || !ci->bytes || !cj->bytes || ci->b == ci->s || cj->b == cj->s) continue;
      if (overlap(ci->s, ci->bytes, cj->s, cj->bytes) ||
          overlap(ci->s, ci->bytes, cj->b, cj->bytes))
        bad = "the buffers of two carried values overlap";
    }
  if (bad) {
    g->eligible = false;
    g->cond_on = false;
    g->why = bad;
    return status_new(HLO_INTERNAL, "device executable: a while loop of @%s cannot be a "
                      "conditional graph node: %s (HLO_CUDA_COND_GRAPHS=0 runs it without)",
                      x->f->name, bad);
  }
  for (uint32_t i = 0; i < n; i++)
    if (g->cs[i].bytes && g->cs[i].s != g->cs[i].a)
      cond_rebase(g, g->open_at + 1, g->cs[i].a, g->cs[i].bytes, g->cs[i].s);
  const void *p[1] = {g->open_flag};
  HLO_TRY(cond_push(g, GC_COND_SET, p, 1, w->pred_size, w->pred_bit, 0));
  for (uint32_t i = 0; i < n; i++)
    if (g->cs[i].bytes && g->cs[i].b != g->cs[i].s)
      HLO_TRY(cond_copy(g, g->cs[i].s, g->cs[i].b, g->cs[i].bytes));
  HLO_TRY(cond_push(g, GC_COND_END, NULL, 0, 0, 0, g->open_at));
  g->calls.c[g->open_at].index = g->calls.n - 1;
  for (uint32_t i = 0; i < n; i++)
    if (g->cs[i].bytes && g->cs[i].b != g->cs[i].s)
      HLO_TRY(cond_copy(g, g->cs[i].b, g->cs[i].s, g->cs[i].bytes));
  memset(w->snap, 0, w->n * sizeof *w->snap);
  g->open = -1;
  g->cond_nodes++;
  memset(host, 0, bytes); /* false: the walk ends (the node runs the iterations) */
  *took = true;
  return NULL;
}

/* cpu_dev_host_in in a deferred run with conditional loops: when
 * host[0..bytes) is the predicate of one (its cond's arguments bound: its
 * cond was just run), *took and the host's copy of the predicate written
 * (see cond_open, cond_close); else nothing (an ordinary read). */
static hlo_status case_open(cpu_exec *x, uint32_t k, uint8_t *host, size_t bytes, bool *took);

hlo_status cpu_dev_cond_pred(cpu_exec *x, uint8_t *host, size_t bytes, bool *took) {
  graph_state *g = &x->dev->g;
  *took = false;
  for (uint32_t k = 0; k < g->ncc && g->open < 0 && g->copen < 0 && !g->prerun; k++) {
    const ccase *c = &g->cc[k];
    const uint8_t *at = cpu_dev_temp_host(x, c->sel); /* the arena or a result's allocation */
    if (at && host == at && bytes == c->pred_size) return case_open(x, k, host, bytes, took);
  }
  if (g->prerun || g->copen >= 0) return NULL;
  for (uint32_t k = 0; k < g->ncw; k++) {
    if (g->open >= 0 && (uint32_t)g->open != k) continue;
    const cwhile *w = &g->cw[k];
    const program *pf = &x->progs[w->cond];
    const hlo_value *f = w->flag;
    if (!pf->arena || bytes != w->pred_size || host != pf->arena + x->offset[f->id]) continue;
    return g->open >= 0 ? cond_close(x, host, bytes, took) : cond_open(x, k, host, bytes, took);
  }
  return NULL;
}

/* ---- conditional IF / SWITCH nodes: a case's selector (the design: the
 * header comment) ---- */

/* The read of case k's selector (at host[0..bytes)) in a deferred run: its
 * branches but the first are run now, each recorded into a list of its
 * own (cbody), their results held (cres); the host is told "branch 0" and
 * walks it, recorded from copen_at on; cpu_dev_case_poll then closes the node. */
static hlo_status case_open(cpu_exec *x, uint32_t k, uint8_t *host, size_t bytes, bool *took) {
  cpu_dev *d = x->dev;
  graph_state *g = &d->g;
  const ccase *c = &g->cc[k];
  const step *s = c->s;
  uint8_t *sel = NULL;
  if (!dev_ptr(d, host, bytes, &sel)) {
    cond_refuse(x, "a case's selector is not on the device");
    return NULL;
  }
  uint32_t nb = s->nsub, nout = s->nout;
  if (nb - 1 > g->ncbody) {
    glist *n = realloc(g->cbody, (nb - 1) * sizeof *n);
    if (!n) return cpu_oom();
    for (uint32_t i = g->ncbody; i < nb - 1; i++) n[i] = (glist){0};
    g->cbody = n;
    g->ncbody = nb - 1;
  }
  uint32_t need = (nb - 1) * nout;
  if (need > g->capcres) {
    tensor **n = realloc(g->cres, need * sizeof *n);
    if (!n) return cpu_oom();
    g->cres = n;
    g->capcres = need;
  }
  g->ncres = 0;
  g->prerun = true;
  hlo_status st = NULL;
  for (uint32_t b = 1; b < nb && !st; b++) {
    glist saved = g->calls;
    g->calls = g->cbody[b - 1];
    g->calls.n = g->calls.np = 0;
    tensor **res = NULL;
    uint32_t nr = 0;
    st = cpu_run_program(x, s->sub[b], NULL, 0, &res, &nr);
    g->cbody[b - 1] = g->calls;
    g->calls = saved;
    if (!st && nr != nout)
      st = status_new(HLO_INTERNAL, "device executable: branch %u returned %u values, expected "
                      "%u", b, nr, nout);
    for (uint32_t i = 0; i < nr; i++) {
      if (!st) g->cres[g->ncres++] = res[i];
      else tensor_release(res[i]);
    }
    free(res);
  }
  g->prerun = false;
  if (st) return st;
  g->copen = (int32_t)k;
  g->copen_at = g->calls.n;
  g->copen_sel = sel;
  memset(host, 0, bytes); /* branch 0: a case's index 0, an if's true */
  if (c->kind == BACKEND_COND_IF) host[0] = 1;
  *took = true;
  return NULL;
}

/* After the host's walk of branch 0 of the open case: when its results are
 * found (each bound to its value: a later step runs; or, for a one-result
 * case, `result`, the run's result cpu_dev_result is handing over, when
 * program 0 returns it there), the node is made: branch 0's calls since
 * copen_at moved after a GC_COND_BEGIN, each other branch's after a
 * GC_COND_NEXT, followed by copies of its results into branch 0's (the
 * buffers the host's walk goes on with), then GC_COND_END. */
hlo_status cpu_dev_case_poll(cpu_exec *x, const tensor *result) {
  cpu_dev *d = x->dev;
  graph_state *g = &d->g;
  const ccase *c = &g->cc[g->copen];
  const step *s = c->s;
  uint32_t nout = s->nout, nb = s->nsub;
  if (nout > g->capcs) {
    cslot *n = realloc(g->cs, nout * sizeof *n);
    if (!n) return cpu_oom();
    g->cs = n;
    g->capcs = nout;
  }
  const hlo_op *t0 = x->progs[0].block->last;
  for (uint32_t i = 0; i < nout; i++) {
    const tensor *t = s->out[i]->id < x->nvals ? x->vals[s->out[i]->id] : NULL;
    if (!t && result && nout == 1 && t0 && g->nresults < t0->num_operands &&
        t0->operands[g->nresults] == s->out[0])
      t = result;
    if (!t) return NULL; /* not past the case yet */
    cslot *cs = &g->cs[i];
    memset(cs, 0, sizeof *cs);
    cs->bytes = t->nbytes;
    if (cs->bytes && (!dev_ptr(d, t->data, t->nbytes, &cs->a) ||
                      (int64_t)__atomic_load_n(&t->refcount, __ATOMIC_ACQUIRE) >
                          2 + (int64_t)cpu_dev_holds(x, t))) {
      g->eligible = false;
      g->cond_on = false;
      g->copen = -1;
      return status_new(HLO_INTERNAL, "device executable: a case's result of @%s is not its own "
                        "buffer on the device (HLO_CUDA_COND_GRAPHS=0 runs it without)",
                        x->f->name);
    }
  }
  /* branch 0's calls, out of the list (they go into the node) */
  glist b0 = {0};
  hlo_status st = NULL;
  for (uint32_t i = g->copen_at; i < g->calls.n && !st; i++)
    st = cpu_dev_glist_add(&b0, &g->calls.c[i], (const void *const *)g->calls.p + g->calls.c[i].ptr0,
                   g->calls.c[i].nptr);
  if (!st && g->copen_at < g->calls.n) {
    g->calls.np = g->calls.c[g->copen_at].ptr0;
    g->calls.n = g->copen_at;
  }
  gcall bc;
  memset(&bc, 0, sizeof bc);
  bc.kind = GC_COND_BEGIN;
  bc.bytes = c->pred_size;
  bc.nin = c->pred_bit;
  bc.u.cond.kind = c->kind;
  bc.u.cond.nbranches = nb;
  bc.u.cond.is_signed = c->pred_signed;
  const void *sp[1] = {g->copen_sel};
  uint32_t at = g->calls.n;
  if (!st) st = cpu_dev_glist_add(&g->calls, &bc, sp, 1);
  for (uint32_t i = 0; i < b0.n && !st; i++)
    st = cpu_dev_glist_add(&g->calls, &b0.c[i], (const void *const *)b0.p + b0.c[i].ptr0, b0.c[i].nptr);
  uint32_t first_next = g->calls.n;
  for (uint32_t b = 1; b < nb && !st; b++) {
    st = cond_push(g, GC_COND_NEXT, NULL, 0, 0, 0, 0);
    const glist *l = &g->cbody[b - 1];
    for (uint32_t i = 0; i < l->n && !st; i++)
      st = cpu_dev_glist_add(&g->calls, &l->c[i], (const void *const *)l->p + l->c[i].ptr0, l->c[i].nptr);
    for (uint32_t i = 0; i < nout && !st; i++) {
      const tensor *r = g->cres[(b - 1) * nout + i];
      uint8_t *src = NULL;
      if (!g->cs[i].bytes) continue;
      if (!r || r->nbytes != g->cs[i].bytes || !dev_ptr(d, r->data, r->nbytes, &src) ||
          overlap(src, r->nbytes, g->cs[i].a, g->cs[i].bytes))
        st = status_new(HLO_INTERNAL, "device executable: branch %u's result %u of a case of @%s "
                        "is not on the device apart", b, i, x->f->name);
      else
        st = cond_copy(g, g->cs[i].a, src, r->nbytes);
    }
  }
  uint32_t end = g->calls.n;
  if (!st) st = cond_push(g, GC_COND_END, NULL, 0, 0, 0, at);
  cpu_dev_glist_free(&b0);
  for (uint32_t i = 0; i < g->ncres; i++) tensor_release(g->cres[i]);
  g->ncres = 0;
  g->copen = -1;
  if (st) {
    g->eligible = false;
    g->cond_on = false;
    return st;
  }
  g->calls.c[at].index = end;
  g->calls.c[end].u.cond.kind = c->kind;
  for (uint32_t i = first_next; i < end; i++)
    if (g->calls.c[i].kind == GC_COND_NEXT) g->calls.c[i].index = end;
  g->cond_nodes++;
  return NULL;
}
