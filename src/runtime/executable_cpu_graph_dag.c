/* executable_cpu_graph_dag.c — a deferred run's recorded calls captured
 * as a DAG of their data dependencies rather than a chain, so independent
 * work runs concurrently when the graph is launched (graph recording and
 * replay: executable_cpu_device.c, whose header comment has the rest).
 *
 * The captured graph is a DAG of the data dependencies, not a chain
 * (cpu_dev_issue_dag; backend.h graph_deps_get / graph_deps_set: on CUDA, the one
 * capture stream's dependency set; HLO_CUDA_GRAPH_DAG=0, or a backend
 * without the slots, captures the chain). Ranges: every device pointer a
 * step gets from cpu_dev_in (read) and cpu_dev_out (written, a conv's
 * scratch too) with its bytes goes into the step's RANGE GROUP (a new one
 * at the first such call after a recorded call), shared by all the calls
 * the step then makes (gcall.grp); a device copy (GC_COPY) has a group of
 * its own (src read, dst written). Call b follows call a when a range of
 * one overlaps a range of the other and either is written (RAW, WAR, WAW:
 * buffer assignment reuses memory), when both are the same step's (a
 * step's calls stay a chain), or when both use state the backend keeps
 * (gemm, conv, reduce_window, select_and_scatter, sort: cuBLASLt's
 * workspace, the sort's scratch), each edge only when not implied by
 * another. BARRIERS (after every call since the previous barrier that
 * nothing follows; every later call after them): a call some pointer of
 * which (a box's start indices too) lies in no range of its group (its
 * ranges unknown: no group, out of memory, pointers a conditional loop
 * rewrote) and every conditional node from its BEGIN to its END (its
 * bodies are chains). At the end the dependency set is every call nothing
 * follows, so the capture ends joined. A launch is bit-identical either
 * way: each call reads what the chain would have given it.
 */
#include <stdlib.h>
#include <string.h>
#include "runtime/executable_cpu_device_internal.h"

/* A new range group (its id: index + 1), or 0 when out of memory (then
 * every call is a barrier: grp_bad). */
static uint32_t dag_group_new(graph_state *g) {
  if (g->grp_bad) return 0;
  if (g->ngrp == g->capgrp) {
    uint32_t cap = g->capgrp ? 2 * g->capgrp : 64;
    ggroup *n = realloc(g->grp, cap * sizeof *n);
    if (!n) {
      g->grp_bad = true;
      return 0;
    }
    g->grp = n;
    g->capgrp = cap;
  }
  g->grp[g->ngrp] = (ggroup){g->nrg, 0};
  return ++g->ngrp;
}

/* Adds [p, p + bytes) (written when w) to group k, the last one made. */
static void dag_range(graph_state *g, uint32_t k, const void *p, size_t bytes, bool w) {
  if (!k || g->grp_bad) return;
  if (k != g->ngrp) { /* not expected: a range that would be lost makes every call a barrier */
    g->grp_bad = true;
    return;
  }
  if (g->nrg == g->caprg) {
    uint32_t cap = g->caprg ? 2 * g->caprg : 256;
    grange *n = realloc(g->rg, cap * sizeof *n);
    if (!n) {
      g->grp_bad = true;
      return;
    }
    g->rg = n;
    g->caprg = cap;
  }
  g->rg[g->nrg++] = (grange){(uintptr_t)p, (uintptr_t)p + bytes, w};
  g->grp[k - 1].nr++;
}

/* A step's operand (cpu_dev_in) or result (cpu_dev_out, w) at device
 * address p in a deferred run: into the step's group (a new one when a
 * call was recorded since the last such note). */
void cpu_dev_dag_note(graph_state *g, const void *p, size_t bytes, bool w) {
  if (!g->dag) return;
  if (!g->grp_open) {
    g->grp_cur = dag_group_new(g);
    g->grp_open = true;
  }
  dag_range(g, g->grp_cur, p, bytes, w);
}

/* Call c's group as it is recorded: a device copy's own (its exact
 * ranges), else the step's. */
void cpu_dev_dag_assign(graph_state *g, gcall *c, const void *const *p) {
  if (!g->dag) return;
  if (c->kind == GC_COPY) {
    uint32_t k = dag_group_new(g);
    dag_range(g, k, p[1], (size_t)c->bytes, false);
    dag_range(g, k, p[0], (size_t)c->bytes, true);
    c->grp = k;
  } else {
    c->grp = g->grp_cur;
  }
  g->grp_open = false;
}

/* Calls that use state the backend keeps (cuBLASLt's workspace: gemms and
 * the im2col conv; the sort's and the window's scratch): serialized with
 * one another. */
static bool dag_lib(uint32_t kind) {
  return kind == GC_GEMM || kind == GC_CONV || kind == GC_REDUCE_WINDOW ||
         kind == GC_SELECT_SCATTER || kind == GC_SORT;
}

static bool dag_covered(const graph_state *g, const ggroup *G, const void *p) {
  uintptr_t a = (uintptr_t)p;
  if (!p) return true;
  for (uint32_t r = G->r0; r < G->r0 + G->nr; r++)
    if (a >= g->rg[r].lo && (a < g->rg[r].hi || a == g->rg[r].lo)) return true;
  return false;
}

/* The ranges of call c (pointers p): its group, when every pointer it
 * passes (a box's start indices too) lies in one of the group's ranges;
 * else NULL (a barrier). */
static const ggroup *dag_known(const graph_state *g, const gcall *c, void *const *p) {
  if (g->grp_bad || !c->grp || c->grp > g->ngrp || c->kind >= GC_COND_BEGIN) return NULL;
  const ggroup *G = &g->grp[c->grp - 1];
  for (uint32_t i = 0; i < c->nptr; i++)
    if (!dag_covered(g, G, p[i])) return NULL;
  if (c->kind == GC_COPY_BOX)
    for (uint32_t d = 0; d < c->u.box.ndyn && d < BACKEND_BOX_MAX_RANK; d++)
      if (!dag_covered(g, G, c->u.box.dyn_index[d])) return NULL;
  return G;
}

/* Whether b must follow a (RAW, WAR, WAW on overlapping ranges; one step's
 * calls; backend state). */
static bool dag_conflict(const graph_state *g, const gcall *a, const ggroup *A, const gcall *b,
                         const ggroup *B) {
  if (a->grp == b->grp) return true;
  if (dag_lib(a->kind) && dag_lib(b->kind)) return true;
  for (uint32_t i = A->r0; i < A->r0 + A->nr; i++)
    for (uint32_t j = B->r0; j < B->r0 + B->nr; j++) {
      const grange *ra = &g->rg[i], *rb = &g->rg[j];
      if ((ra->w || rb->w) && ra->lo < rb->hi && rb->lo < ra->hi) return true;
    }
  return false;
}

/* A growable array of node handles. */
typedef struct dnodes {
  void **v;
  size_t n, cap;
} dnodes;

static bool dn_reserve(dnodes *a, size_t more) {
  if (a->n + more <= a->cap) return true;
  size_t cap = a->cap ? 2 * a->cap : 256;
  while (cap < a->n + more) cap *= 2;
  void **n = realloc(a->v, cap * sizeof *n);
  if (!n) return false;
  a->v = n;
  a->cap = cap;
  return true;
}

/* Appends the recording's current dependency nodes to a. */
static hlo_status dn_tail(const backend *be, dnodes *a) {
  size_t k = 0;
  HLO_TRY(be->graph_deps_get(a->v + a->n, a->cap - a->n, &k));
  if (a->n + k > a->cap) {
    if (!dn_reserve(a, k)) return cpu_oom();
    HLO_TRY(be->graph_deps_get(a->v + a->n, a->cap - a->n, &k));
  }
  a->n += k;
  return NULL;
}

/* Issues list l into the recording as a DAG (capture only): a call whose
 * ranges are known (dag_known) follows exactly the last calls it conflicts
 * with since the last barrier (those not already its ancestors), or the
 * barrier; a barrier (unknown ranges, a conditional node from its BEGIN to
 * its END) follows every call since the last barrier that nothing follows,
 * and every later call follows it. At the end the dependency set is every
 * call nothing follows. Counts in g->dag_*. */
hlo_status cpu_dev_issue_dag(cpu_exec *x, const glist *l) {
  graph_state *g = &x->dev->g;
  const backend *be = x->dev->real;
  uint32_t n = l->n, words = (n + 63) / 64;
  const ggroup **G = calloc(n ? n : 1, sizeof *G);
  uint64_t *anc = calloc((size_t)n * words + 1, sizeof *anc);
  uint32_t *depth = calloc(n ? n : 1, sizeof *depth), *front = calloc(n ? n : 1, sizeof *front);
  size_t *t0 = calloc(n ? n : 1, sizeof *t0), *tn = calloc(n ? n : 1, sizeof *tn);
  bool *used = calloc(n ? n : 1, sizeof *used);
  dnodes nodes = {0}, deps = {0};
  hlo_status st = NULL;
  uint64_t edges = 0, barriers = 0, calls = 0;
  uint32_t nfront = 0, bdepth = 0, maxdepth = 0;
  size_t b0 = 0, bn = 0; /* the last barrier's terminal nodes: nodes.v[b0 .. b0 + bn) */
  if (!G || !anc || !depth || !front || !t0 || !tn || !used || !dn_reserve(&nodes, 64) ||
      !dn_reserve(&deps, 64))
    st = cpu_oom();
  for (uint32_t i = 0; i < n && !st; i++) {
    const gcall *c = &l->c[i];
    void *const *p = l->p + c->ptr0;
    const ggroup *gi = dag_known(g, c, p);
    deps.n = 0;
    calls++;
    if (gi) {
      G[i] = gi;
      uint64_t *ai = anc + (size_t)i * words;
      uint32_t d = bdepth;
      bool any = false;
      for (uint32_t k = nfront; k-- > 0 && !st;) {
        uint32_t j = front[k];
        if ((ai[j / 64] >> (j % 64)) & 1) continue; /* already an ancestor */
        if (!dag_conflict(g, &l->c[j], G[j], c, gi)) continue;
        any = true;
        used[j] = true;
        const uint64_t *aj = anc + (size_t)j * words;
        for (uint32_t w = 0; w < words; w++) ai[w] |= aj[w];
        ai[j / 64] |= 1ull << (j % 64);
        if (!dn_reserve(&deps, tn[j])) st = cpu_oom();
        else memcpy(deps.v + deps.n, nodes.v + t0[j], tn[j] * sizeof *deps.v), deps.n += tn[j];
        edges++;
        if (depth[j] > d) d = depth[j];
      }
      if (st) break;
      if (!any && bn) {
        if (!dn_reserve(&deps, bn)) {
          st = cpu_oom();
          break;
        }
        memcpy(deps.v, nodes.v + b0, bn * sizeof *deps.v);
        deps.n = bn;
        edges++;
      }
      depth[i] = d + 1;
      if (depth[i] > maxdepth) maxdepth = depth[i];
      st = be->graph_deps_set(deps.v, deps.n);
      if (!st) st = cpu_dev_issue_one(be, c, p);
      t0[i] = nodes.n;
      if (!st) st = dn_tail(be, &nodes);
      tn[i] = nodes.n - t0[i];
      front[nfront++] = i;
      continue;
    }
    /* a barrier: after every call since the last one that nothing follows */
    uint32_t d = bdepth;
    for (uint32_t k = 0; k < nfront && !st; k++) {
      uint32_t j = front[k];
      if (depth[j] > d) d = depth[j];
      if (used[j]) continue;
      if (!dn_reserve(&deps, tn[j])) st = cpu_oom();
      else memcpy(deps.v + deps.n, nodes.v + t0[j], tn[j] * sizeof *deps.v), deps.n += tn[j];
      edges++;
    }
    if (!nfront && bn) {
      if (!dn_reserve(&deps, bn)) st = cpu_oom();
      else memcpy(deps.v, nodes.v + b0, bn * sizeof *deps.v), deps.n = bn, edges++;
    }
    if (st) break;
    st = be->graph_deps_set(deps.v, deps.n);
    if (st) break;
    if (c->kind == GC_COND_BEGIN) { /* the node, through its END */
      uint32_t end = i;
      int open = 0;
      for (uint32_t k = i; k < n; k++) {
        if (l->c[k].kind == GC_COND_BEGIN) open++;
        if (l->c[k].kind == GC_COND_END && !--open) {
          end = k;
          break;
        }
      }
      if (open) { /* not closed: the rest of the list as the chain */
        end = n - 1;
      }
      glist sub = *l;
      sub.c = l->c + i;
      sub.n = end - i + 1;
      st = cpu_dev_issue_all(be, &sub, true);
      i = end;
    } else if (c->kind >= GC_COND_BEGIN) {
      glist sub = *l;
      sub.c = l->c + i;
      sub.n = 1;
      st = cpu_dev_issue_all(be, &sub, true);
    } else {
      st = cpu_dev_issue_one(be, c, p);
    }
    barriers++;
    bdepth = d + 1;
    if (bdepth > maxdepth) maxdepth = bdepth;
    b0 = nodes.n;
    if (!st) st = dn_tail(be, &nodes);
    bn = nodes.n - b0;
    nfront = 0;
  }
  if (!st) { /* the end: every call nothing follows */
    deps.n = 0;
    for (uint32_t k = 0; k < nfront && !st; k++) {
      uint32_t j = front[k];
      if (used[j]) continue;
      if (!dn_reserve(&deps, tn[j])) st = cpu_oom();
      else memcpy(deps.v + deps.n, nodes.v + t0[j], tn[j] * sizeof *deps.v), deps.n += tn[j];
    }
    if (!nfront && bn && !st) {
      if (!dn_reserve(&deps, bn)) st = cpu_oom();
      else memcpy(deps.v, nodes.v + b0, bn * sizeof *deps.v), deps.n = bn;
    }
    if (!st) st = be->graph_deps_set(deps.v, deps.n);
  }
  g->dag_calls = calls;
  g->dag_edges = edges;
  g->dag_depth = maxdepth;
  g->dag_barriers = barriers;
  free(G), free(anc), free(depth), free(front), free(t0), free(tn), free(used);
  free(nodes.v), free(deps.v);
  return st;
}
