/* interp_collective.c — interpreter.run_parallel and the ops that talk
 * between processes: all_gather, all_reduce, reduce_scatter, all_to_all,
 * collective_broadcast, collective_permute, collective_reduce, send, recv,
 * infeed, outfeed, replica_id, partition_id, after_all, create_token.
 *
 * Semantics follow the spec's "Collective ops" section (process groups from
 * cross_replica / cross_partition / cross_replica_and_partition /
 * flattened_ids) and each op's section; run_parallel follows the reference
 * interpreter (stablehlo/reference/InterpreterOps.cpp evalRunParallelOp): the
 * `programs` attribute is a [num_replicas][num_partitions] array of function
 * symbols, process (r, p) runs programs[r][p] on the next num_args operands
 * (row-major over the grid) and its results are concatenated in the same
 * order; the optional `infeed` attribute lists functions whose results the
 * processes' infeed ops return, first come first served.
 *
 * Each process runs in its own pthread with its own forked interpreter. The
 * processes meet through a `grid`: one mutex and one condition variable.
 * A collective is a rendezvous keyed by (opcode, channel id, process group):
 * each member deposits its operands, the last arrival completes it, every
 * member takes all values, the last reader frees it. Send/recv use FIFO
 * queues per channel handle. Nobody busy-waits. A process that fails sets
 * `failed` and wakes everyone; a waiter that sees it gives up ("aborted").
 * Deadlocks (every live process waiting with nothing changed since) are
 * detected with an epoch counter bumped on every state change and reported
 * as an error instead of hanging.
 */
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include "interp/interp.h"
#include "interp/interp_probe.h"
#include "interp/interp_util.h"
#include "ir/element.h"
#include "support/arena.h"

/* ------------------------------------------------------------ the grid */

typedef struct rdv {
  struct rdv *next;
  hlo_opcode opcode;
  int64_t chan_id;
  uint32_t n;           /* members */
  int32_t *members;     /* flat process ids, group order */
  uint32_t nvals;       /* values per member */
  tensor **vals;        /* n * nvals, owned references */
  uint32_t arrived, read;
  bool complete;
} rdv;

typedef struct chan_msg {
  struct chan_msg *next;
  uint32_t n;
  tensor **vals;        /* owned references */
} chan_msg;

typedef struct chan_q {
  struct chan_q *next;
  int64_t id;
  chan_msg *head, *tail;
} chan_q;

typedef struct grid {
  pthread_mutex_t mu;
  pthread_cond_t cv;
  int64_t num_replicas, num_partitions;
  int nproc;
  bool failed;
  uint64_t epoch;      /* bumped on every change a waiter may wait for */
  bool *done;          /* nproc: process finished */
  bool *waiting;       /* nproc: process is in grid_wait */
  bool *aborted;       /* nproc: process gave up because another failed */
  uint64_t *wait_epoch;
  rdv *rdvs;
  chan_q *channels;
  const hlo_func **infeed;
  uint32_t num_infeed, next_infeed;
} grid;

typedef bool (*ready_fn)(const grid *g, const void *arg);

/* The process index in the grid: replica_id * num_partitions + partition_id. */
static int proc_flat(const interp_process *p) {
  return (int)(p->replica_id * p->num_partitions + p->partition_id);
}

/* Waits (g->mu held) until ready(g, arg) holds. Fails when another process
 * failed, or when every live process is waiting and nothing changed since
 * they started (a deadlock). */
static hlo_status grid_wait(grid *g, int me, ready_fn ready, const void *arg, const hlo_op *op,
                            const char *what) {
  for (;;) {
    if (ready(g, arg)) return NULL;
    if (g->failed) {
      g->aborted[me] = true;
      return interp_error(op, HLO_INTERNAL, "aborted while waiting for %s: another process failed",
                          what);
    }
    g->waiting[me] = true;
    g->wait_epoch[me] = g->epoch;
    bool stuck = true;
    for (int t = 0; t < g->nproc && stuck; t++) {
      if (t == me || g->done[t]) continue;
      if (!g->waiting[t] || g->wait_epoch[t] != g->epoch) stuck = false;
    }
    if (stuck) {
      g->waiting[me] = false;
      g->failed = true;
      g->epoch++;
      pthread_cond_broadcast(&g->cv);
      return interp_error(op, HLO_INVALID_ARGUMENT,
                          "deadlock: process (replica %lld, partition %lld) waits for %s, but "
                          "every other process has finished or is waiting too",
                          (long long)(me / g->num_partitions), (long long)(me % g->num_partitions),
                          what);
    }
    pthread_cond_wait(&g->cv, &g->mu);
    g->waiting[me] = false;
  }
}

static void rdv_free(rdv *r) {
  if (!r) return;
  for (uint32_t i = 0; i < r->n * r->nvals; i++) tensor_release(r->vals[i]);
  free(r->vals);
  free(r->members);
  free(r);
}

static void grid_destroy(grid *g) {
  if (!g) return;
  while (g->rdvs) {
    rdv *r = g->rdvs;
    g->rdvs = r->next;
    rdv_free(r);
  }
  while (g->channels) {
    chan_q *c = g->channels;
    g->channels = c->next;
    while (c->head) {
      chan_msg *m = c->head;
      c->head = m->next;
      for (uint32_t i = 0; i < m->n; i++) tensor_release(m->vals[i]);
      free(m->vals);
      free(m);
    }
    free(c);
  }
  pthread_cond_destroy(&g->cv);
  pthread_mutex_destroy(&g->mu);
  free(g->done);
  free(g->waiting);
  free(g->aborted);
  free(g->wait_epoch);
  free(g->infeed);
  free(g);
}

static bool rdv_ready(const grid *g, const void *arg) {
  (void)g;
  return ((const rdv *)arg)->complete;
}

/* The rendezvous of the calling process in `group` (n distinct flat ids,
 * containing the caller) on `chan_id` for `op`: deposits mine[0..nvals) and
 * returns in *out_all a malloc'd array of n * nvals new references, member
 * by member in group order. */
static hlo_status rendezvous(interp *it, const hlo_op *op, int64_t chan_id, const int32_t *group,
                             uint32_t n, tensor *const *mine, uint32_t nvals, tensor ***out_all) {
  interp_process *proc = interp_current_process(it);
  grid *g = proc->grid;
  int me = proc_flat(proc);
  uint32_t idx = n;
  for (uint32_t i = 0; i < n; i++)
    if (group[i] == me) idx = i;
  if (idx == n) return interp_error(op, HLO_INTERNAL, "process is not in its own process group");
  tensor **all = xcalloc((size_t)n * nvals + 1, sizeof *all);
  if (!all) return interp_error(op, HLO_RESOURCE_EXHAUSTED, "out of memory");
  if (n == 1 || !g) {
    for (uint32_t k = 0; k < nvals; k++) all[k] = tensor_retain(mine[k]);
    *out_all = all;
    return NULL;
  }
  pthread_mutex_lock(&g->mu);
  rdv *r = NULL;
  for (rdv *s = g->rdvs; s; s = s->next) {
    if (!s->complete && s->opcode == op->opcode && s->chan_id == chan_id && s->n == n &&
        !memcmp(s->members, group, n * sizeof *group)) {
      r = s;
      break;
    }
  }
  if (!r) {
    r = calloc(1, sizeof *r);
    if (r) {
      r->members = malloc(n * sizeof *group);
      r->vals = calloc((size_t)n * nvals + 1, sizeof *r->vals);
    }
    if (!r || !r->members || !r->vals) {
      rdv_free(r);
      pthread_mutex_unlock(&g->mu);
      free(all);
      return interp_error(op, HLO_RESOURCE_EXHAUSTED, "out of memory");
    }
    memcpy(r->members, group, n * sizeof *group);
    r->opcode = op->opcode;
    r->chan_id = chan_id;
    r->n = n;
    r->nvals = nvals;
    r->next = g->rdvs;
    g->rdvs = r;
  }
  hlo_status st = NULL;
  if (r->nvals != nvals) {
    st = interp_error(op, HLO_INVALID_ARGUMENT,
                      "processes of one group pass different operand counts (%u vs %u)", nvals,
                      r->nvals);
  } else if (r->vals[(size_t)idx * nvals] || (nvals == 0 && r->arrived == n)) {
    st = interp_error(op, HLO_INTERNAL, "process arrived twice at one collective");
  }
  if (st) {
    g->failed = true;
    g->epoch++;
    pthread_cond_broadcast(&g->cv);
    pthread_mutex_unlock(&g->mu);
    free(all);
    return st;
  }
  for (uint32_t k = 0; k < nvals; k++) r->vals[(size_t)idx * nvals + k] = tensor_retain(mine[k]);
  if (++r->arrived == n) {
    r->complete = true;
    g->epoch++;
    pthread_cond_broadcast(&g->cv);
  }
  st = grid_wait(g, me, rdv_ready, r, op, op_name(op->opcode));
  if (!st) {
    for (size_t i = 0; i < (size_t)n * nvals; i++) all[i] = tensor_retain(r->vals[i]);
    if (++r->read == n) {
      for (rdv **pp = &g->rdvs; *pp; pp = &(*pp)->next) {
        if (*pp == r) {
          *pp = r->next;
          break;
        }
      }
      rdv_free(r);
    }
  }
  pthread_mutex_unlock(&g->mu);
  if (st) {
    free(all);
    return st;
  }
  *out_all = all;
  return NULL;
}

static void release_all(tensor **v, size_t n) {
  if (!v) return;
  for (size_t i = 0; i < n; i++) tensor_release(v[i]);
  free(v);
}

/* ------------------------------------------------------ process groups */

typedef enum group_mode { CROSS_REPLICA, CROSS_PARTITION, CROSS_REPLICA_AND_PARTITION,
                          FLATTENED_IDS } group_mode;

static int64_t channel_id(const hlo_op *op) {
  const hlo_attr *at = op_attr(op, "channel_handle");
  if (!at) return 0;
  const hlo_attr *h = attr_field(at, "handle");
  if (h && h->kind == ATTR_INT) return h->u.i.v;
  return 0;
}

/* Mode of all_gather / all_reduce / reduce_scatter (spec: channel_id and
 * use_global_device_ids). */
static group_mode global_ids_mode(const hlo_op *op) {
  bool global = op_attr_bool(op, "use_global_device_ids", false);
  if (global) return FLATTENED_IDS;
  return channel_id(op) > 0 ? CROSS_REPLICA_AND_PARTITION : CROSS_REPLICA;
}

/* Mode of all_to_all / collective_broadcast / collective_permute /
 * collective_reduce. */
static group_mode channel_mode(const hlo_op *op) {
  return channel_id(op) > 0 ? CROSS_PARTITION : CROSS_REPLICA;
}

/* The rows x cols integers of dense attribute `name` (NULL / 0x0 when
 * absent). *out is malloc'd (yours). */
static hlo_status read_int_matrix(const hlo_op *op, const char *name, int64_t **out,
                                  int64_t *rows, int64_t *cols) {
  *out = NULL;
  *rows = *cols = 0;
  const hlo_attr *at = op_attr(op, name);
  if (!at) return NULL;
  if (at->kind != ATTR_DENSE || !at->u.dense.type || at->u.dense.type->kind != TYPE_TENSOR ||
      !dtype_is_int(at->u.dense.type->dtype) || at->u.dense.type->rank > 2)
    return interp_error(op, HLO_INVALID_ARGUMENT, "%s must be a dense integer matrix", name);
  const hlo_type *t = at->u.dense.type;
  int64_t r = t->rank == 2 ? t->dims[0] : 1, c = t->rank >= 1 ? t->dims[t->rank - 1] : 1;
  if (r < 0 || c < 0 || (r > 0 && c > (1 << 20) / r))
    return interp_error(op, HLO_INVALID_ARGUMENT, "%s is too large", name);
  int64_t *v = xmalloc((size_t)(r * c + 1) * sizeof *v);
  if (!v) return interp_error(op, HLO_RESOURCE_EXHAUSTED, "out of memory");
  for (int64_t i = 0; i < r * c; i++)
    v[i] = elem_get_i64(t->dtype, at->u.dense.data, at->u.dense.splat ? 0 : i);
  *out = v;
  *rows = r;
  *cols = c;
  return NULL;
}

/* The process group (flat ids, duplicates removed) of attribute `name`
 * under `mode` that contains the calling process; *out_n = 0 when none does.
 * An absent or empty attribute means one group of every id. */
static hlo_status my_group(interp *it, const hlo_op *op, const char *name, group_mode mode,
                           int32_t **out, uint32_t *out_n) {
  *out = NULL;
  *out_n = 0;
  interp_process *p = interp_current_process(it);
  int64_t R = p->num_replicas, P = p->num_partitions, me = proc_flat(p);
  int64_t *m, rows, cols;
  HLO_TRY(read_int_matrix(op, name, &m, &rows, &cols));
  int64_t limit = mode == CROSS_PARTITION ? P : mode == FLATTENED_IDS ? R * P : R;
  int64_t mine = mode == CROSS_PARTITION ? p->partition_id : mode == FLATTENED_IDS ? me
                                                                                   : p->replica_id;
  bool implicit = rows == 0 || cols == 0;
  if (implicit) {
    rows = 1;
    cols = limit;
  }
  int32_t *g = xmalloc((size_t)(cols * (mode == CROSS_REPLICA_AND_PARTITION ? P : 1) + 1) *
                       sizeof *g);
  if (!g) {
    free(m);
    return interp_error(op, HLO_RESOURCE_EXHAUSTED, "out of memory");
  }
  hlo_status st = NULL;
  for (int64_t i = 0; i < rows && !st && !*out_n; i++) {
    bool found = false;
    for (int64_t j = 0; j < cols; j++) {
      int64_t id = implicit ? j : m[i * cols + j];
      if (id < 0) continue;  /* padding of ragged groups */
      if (id >= limit) {
        st = interp_error(op, HLO_INVALID_ARGUMENT, "%s: id %lld is out of range (the grid has %lld "
                          "%s)", name, (long long)id, (long long)limit,
                          mode == CROSS_PARTITION ? "partitions" : mode == FLATTENED_IDS
                                                                     ? "processes" : "replicas");
        break;
      }
      if (id == mine) found = true;
    }
    if (st || !found) continue;
    uint32_t n = 0;
    int64_t pcount = mode == CROSS_REPLICA_AND_PARTITION ? P : 1;
    for (int64_t pid = 0; pid < pcount; pid++) {
      for (int64_t j = 0; j < cols; j++) {
        int64_t id = implicit ? j : m[i * cols + j];
        if (id < 0) continue;
        int64_t flat = mode == CROSS_REPLICA ? id * P + p->partition_id
                       : mode == CROSS_PARTITION ? p->replica_id * P + id
                       : mode == FLATTENED_IDS ? id
                                               : id * P + pid;
        bool dup = false;
        for (uint32_t k = 0; k < n; k++) dup |= g[k] == flat;
        if (!dup) g[n++] = (int32_t)flat;
      }
    }
    *out_n = n;
  }
  free(m);
  if (st || !*out_n) {
    free(g);
    *out_n = 0;
    return st;
  }
  *out = g;
  return NULL;
}

static hlo_status need_group(const hlo_op *op, uint32_t n) {
  if (n) return NULL;
  return interp_error(op, HLO_INVALID_ARGUMENT,
                      "the process is in no process group of replica_groups");
}

/* The position of process `me` in group g[0..n); 0 when absent. */
static uint32_t index_in(const int32_t *g, uint32_t n, int me) {
  for (uint32_t i = 0; i < n; i++)
    if (g[i] == me) return i;
  return 0;
}

/* ------------------------------------------------- data-movement helpers */

static int64_t prod(const int64_t *d, uint32_t from, uint32_t to) {
  int64_t p = 1;
  for (uint32_t i = from; i < to; i++) p *= d[i];
  return p;
}

/* Concatenates n parts of shape `pdims` (rank) along `dim` into dst. */
static void concat_raw(uint8_t *dst, const uint8_t *const *parts, uint32_t n,
                       const int64_t *pdims, uint32_t rank, uint32_t dim, size_t es) {
  size_t outer = (size_t)prod(pdims, 0, dim), inner = (size_t)prod(pdims, dim, rank) * es;
  for (size_t o = 0; o < outer; o++)
    for (uint32_t j = 0; j < n; j++)
      memcpy(dst + (o * n + j) * inner, parts[j] + o * inner, inner);
}

/* Part j of k equal parts of `src` (shape dims) along `dim`, into dst. */
static void take_part(uint8_t *dst, const uint8_t *src, const int64_t *dims, uint32_t rank,
                      uint32_t dim, uint32_t k, uint32_t j, size_t es) {
  size_t outer = (size_t)prod(dims, 0, dim), inner = (size_t)prod(dims, dim + 1, rank) * es;
  size_t m = (size_t)(dims[dim] / k);
  for (size_t o = 0; o < outer; o++)
    memcpy(dst + o * m * inner, src + (o * (size_t)dims[dim] + j * m) * inner, m * inner);
}

/* Copies element si of src (type sd) to element di of dst (type dd),
 * converting when the types differ. */
static void elem_copy(hlo_dtype dd, void *dst, int64_t di, hlo_dtype sd, const void *src,
                      int64_t si) {
  if (dd == sd) {
    size_t es = hlo_dtype_size(dd);
    memcpy((uint8_t *)dst + di * es, (const uint8_t *)src + si * es, es);
    return;
  }
  switch (dtype_class(dd)) {
    case HLO_CLASS_COMPLEX: {
      double re, im;
      elem_get_c128(sd, src, si, &re, &im);
      elem_set_c128(dd, dst, di, re, im);
      break;
    }
    case HLO_CLASS_FLOAT: elem_set_f64(dd, dst, di, elem_get_f64(sd, src, si)); break;
    case HLO_CLASS_UINT: elem_set_u64(dd, dst, di, elem_get_u64(sd, src, si)); break;
    default: elem_set_i64(dd, dst, di, elem_get_i64(sd, src, si)); break;
  }
}

static hlo_status check_tensor(const hlo_op *op, const tensor *t, const char *what) {
  if (!t || t->type->kind != TYPE_TENSOR)
    return interp_error(op, HLO_INVALID_ARGUMENT, "%s must be a tensor", what);
  return NULL;
}

/* dst[i] = computation(...computation(parts[0][i], parts[1][i])..., parts[n-1][i])
 * for every element i < num_elems (dst has element type rd), with the op's
 * region 0 as computation (a left fold: one of the binary trees the spec
 * allows). parts[m * stride] is member m's operand. */
static hlo_status fold_tensors(interp *it, const hlo_op *op, tensor *const *parts, size_t stride,
                               uint32_t n, hlo_dtype rd, uint8_t *dst, int64_t num_elems) {
  if (op->num_regions < 1 || op->regions[0].block.num_args != 2)
    return interp_error(op, HLO_INVALID_ARGUMENT,
                        "the computation must be a region of two scalar arguments");
  const hlo_region *r = &op->regions[0];
  const hlo_type *ta = r->block.args[0].type, *tb = r->block.args[1].type;
  if (ta->kind != TYPE_TENSOR || ta->rank != 0 || tb->kind != TYPE_TENSOR || tb->rank != 0)
    return interp_error(op, HLO_INVALID_ARGUMENT, "the computation's arguments must be 0-d tensors");
  for (uint32_t m = 0; m < n; m++)
    if (parts[m * stride]->type->kind != TYPE_TENSOR || parts[m * stride]->num_elems != num_elems)
      return interp_error(op, HLO_INVALID_ARGUMENT,
                          "processes pass operands of different shapes to one collective");
  for (int64_t i = 0; i < num_elems; i++) {
    tensor *acc;
    HLO_TRY(tensor_create(ta, &op->loc, &acc));
    elem_copy(ta->dtype, acc->data, 0, parts[0]->type->dtype, parts[0]->data, i);
    for (uint32_t m = 1; m < n; m++) {
      tensor *b;
      hlo_status st = tensor_create(tb, &op->loc, &b);
      if (st) {
        tensor_release(acc);
        return st;
      }
      const tensor *src = parts[m * stride];
      elem_copy(tb->dtype, b->data, 0, src->type->dtype, src->data, i);
      tensor *args[2] = {acc, b}, *res[1] = {NULL};
      uint32_t nres = 0;
      st = interp_run_region(it, r, args, 2, res, 1, &nres);
      tensor_release(acc);
      tensor_release(b);
      if (st) return st;
      if (nres != 1 || !res[0] || res[0]->type->kind != TYPE_TENSOR || res[0]->num_elems != 1) {
        for (uint32_t k = 0; k < nres; k++) tensor_release(res[k]);
        return interp_error(op, HLO_INVALID_ARGUMENT,
                            "the computation must return one 0-d tensor");
      }
      acc = res[0];
    }
    elem_copy(rd, dst, i, acc->type->dtype, acc->data, 0);
    tensor_release(acc);
  }
  return NULL;
}

/* ---------------------------------------------------------- the kernels */

static hlo_status k_replica_id(interp *it, const hlo_op *op, tensor *const *in,
                               const hlo_type *const *rt, tensor **out) {
  HLO_TRY(tensor_create(rt[0], &op->loc, &out[0]));
  elem_set_u64(rt[0]->dtype, out[0]->data, 0, (uint64_t)interp_current_process(it)->replica_id);
  return NULL;
}

static hlo_status k_partition_id(interp *it, const hlo_op *op, tensor *const *in,
                                 const hlo_type *const *rt, tensor **out) {
  HLO_TRY(tensor_create(rt[0], &op->loc, &out[0]));
  elem_set_u64(rt[0]->dtype, out[0]->data, 0,
               (uint64_t)interp_current_process(it)->partition_id);
  return NULL;
}

static hlo_status k_token(interp *it, const hlo_op *op, tensor *const *in,
                          const hlo_type *const *rt, tensor **out) {
  return tensor_create(rt[0], &op->loc, &out[0]);
}

/* Releases out[0..n) on an error path. */
/* Joins op's process group (attribute replica_groups read in `mode`; an
 * error when the process is in none) and exchanges in[0..nvals) with its
 * members: *all gets (*n) * nvals tensors, member-major (release_all).
 * With `idx`, sets this process's position in the group. */
static hlo_status exchange(interp *it, const hlo_op *op, group_mode mode, tensor *const *in,
                           uint32_t nvals, tensor ***all, uint32_t *n, uint32_t *idx) {
  int32_t *g;
  HLO_TRY(my_group(it, op, "replica_groups", mode, &g, n));
  HLO_TRY(need_group(op, *n));
  if (idx) *idx = index_in(g, *n, proc_flat(interp_current_process(it)));
  hlo_status st = rendezvous(it, op, channel_id(op), g, *n, in, nvals, all);
  free(g);
  return st;
}

/* The end of a collective kernel: releases the exchanged tensors
 * all[0..count) and, when `st` is an error, the results made so far. */
static hlo_status exchange_end(hlo_status st, const hlo_op *op, tensor **all, size_t count,
                               tensor **out) {
  release_all(all, count);
  if (st) iu_release_all(out, op->num_results);
  return st;
}

static hlo_status k_all_gather(interp *it, const hlo_op *op, tensor *const *in,
                               const hlo_type *const *rt, tensor **out) {
  int64_t dim = op_attr_int(op, "all_gather_dim", 0);
  for (uint32_t k = 0; k < op->num_operands; k++) {
    HLO_TRY(check_tensor(op, in[k], "all_gather's operand"));
    if (dim < 0 || (uint64_t)dim >= in[k]->type->rank)
      return interp_error(op, HLO_INVALID_ARGUMENT, "all_gather_dim %lld is out of range",
                          (long long)dim);
  }
  uint32_t n;
  tensor **all;
  HLO_TRY(exchange(it, op, global_ids_mode(op), in, op->num_operands, &all, &n, NULL));
  hlo_status st = NULL;
  const uint8_t **parts = xcalloc(n, sizeof *parts);
  if (!parts) st = interp_error(op, HLO_RESOURCE_EXHAUSTED, "out of memory");
  for (uint32_t k = 0; k < op->num_operands && !st; k++) {
    const hlo_type *t = in[k]->type;
    for (uint32_t m = 0; m < n && !st; m++) {
      tensor *v = all[(size_t)m * op->num_operands + k];
      if (!type_same_shape(v->type, t))
        st = interp_error(op, HLO_INVALID_ARGUMENT,
                          "processes pass operands of different types to all_gather");
      parts[m] = v->data;
    }
    if (st) break;
    if (rt[k]->dtype != t->dtype || type_num_elements(rt[k]) != (int64_t)n * in[k]->num_elems) {
      st = interp_error(op, HLO_INVALID_ARGUMENT,
                        "all_gather result %u has %lld elements, expected %lld (%u processes)", k,
                        (long long)type_num_elements(rt[k]),
                        (long long)((int64_t)n * in[k]->num_elems), n);
      break;
    }
    st = tensor_create(rt[k], &op->loc, &out[k]);
    if (st) break;
    concat_raw(out[k]->data, parts, n, t->dims, t->rank, (uint32_t)dim, hlo_dtype_size(t->dtype));
  }
  free(parts);
  return exchange_end(st, op, all, (size_t)n * op->num_operands, out);
}

static hlo_status k_all_reduce(interp *it, const hlo_op *op, tensor *const *in,
                               const hlo_type *const *rt, tensor **out) {
  for (uint32_t k = 0; k < op->num_operands; k++)
    HLO_TRY(check_tensor(op, in[k], "all_reduce's operand"));
  uint32_t n;
  tensor **all;
  HLO_TRY(exchange(it, op, global_ids_mode(op), in, op->num_operands, &all, &n, NULL));
  hlo_status st = NULL;
  for (uint32_t k = 0; k < op->num_operands && !st; k++) {
    st = tensor_create(rt[k], &op->loc, &out[k]);
    if (!st)
      st = fold_tensors(it, op, all + k, op->num_operands, n, rt[k]->dtype, out[k]->data,
                        out[k]->num_elems);
  }
  return exchange_end(st, op, all, (size_t)n * op->num_operands, out);
}

static hlo_status k_reduce_scatter(interp *it, const hlo_op *op, tensor *const *in,
                                   const hlo_type *const *rt, tensor **out) {
  HLO_TRY(check_tensor(op, in[0], "reduce_scatter's operand"));
  const hlo_type *t = in[0]->type;
  int64_t dim = op_attr_int(op, "scatter_dimension", 0);
  if (dim < 0 || (uint64_t)dim >= t->rank)
    return interp_error(op, HLO_INVALID_ARGUMENT, "scatter_dimension %lld is out of range",
                        (long long)dim);
  uint32_t n, idx;
  tensor **all;
  HLO_TRY(exchange(it, op, global_ids_mode(op), in, 1, &all, &n, &idx));
  hlo_status st = NULL;
  if (t->dims[dim] % n)
    st = interp_error(op, HLO_INVALID_ARGUMENT,
                      "dimension %lld (size %lld) does not split into %u equal parts",
                      (long long)dim, (long long)t->dims[dim], n);
  if (!st && (type_num_elements(rt[0]) * n != in[0]->num_elems))
    st = interp_error(op, HLO_INVALID_ARGUMENT, "reduce_scatter's result shape is not 1/%u of "
                      "the operand's", n);
  size_t es = hlo_dtype_size(rt[0]->dtype);
  uint8_t *reduced = NULL;
  if (!st) {
    reduced = xmalloc((size_t)in[0]->num_elems * es + 1);
    if (!reduced) st = interp_error(op, HLO_RESOURCE_EXHAUSTED, "out of memory");
  }
  /* The reduction runs in the result's element type, at the operand's shape. */
  if (!st) st = fold_tensors(it, op, all, 1, n, rt[0]->dtype, reduced, in[0]->num_elems);
  if (!st) st = tensor_create(rt[0], &op->loc, &out[0]);
  if (!st) take_part(out[0]->data, reduced, t->dims, t->rank, (uint32_t)dim, n, idx, es);
  free(reduced);
  return exchange_end(st, op, all, n, out);
}

static hlo_status k_all_to_all(interp *it, const hlo_op *op, tensor *const *in,
                               const hlo_type *const *rt, tensor **out) {
  int64_t sd = op_attr_int(op, "split_dimension", 0), cd = op_attr_int(op, "concat_dimension", 0);
  int64_t count = op_attr_int(op, "split_count", 0);
  for (uint32_t k = 0; k < op->num_operands; k++) {
    HLO_TRY(check_tensor(op, in[k], "all_to_all's operand"));
    uint32_t rank = in[k]->type->rank;
    if (sd < 0 || sd >= rank || cd < 0 || cd >= rank || count <= 0 ||
        in[k]->type->dims[sd] % count)
      return interp_error(op, HLO_INVALID_ARGUMENT,
                          "split_dimension %lld / concat_dimension %lld / split_count %lld do not "
                          "fit the operand", (long long)sd, (long long)cd, (long long)count);
  }
  int32_t *g;
  uint32_t n;
  HLO_TRY(my_group(it, op, "replica_groups", channel_mode(op), &g, &n));
  HLO_TRY(need_group(op, n));
  if (n != count) {
    free(g);
    return interp_error(op, HLO_INVALID_ARGUMENT,
                        "split_count %lld differs from the process group size %u",
                        (long long)count, n);
  }
  uint32_t idx = index_in(g, n, proc_flat(interp_current_process(it)));
  tensor **all;
  hlo_status st = rendezvous(it, op, channel_id(op), g, n, in, op->num_operands, &all);
  free(g);
  if (st) return st;
  uint8_t **parts = xcalloc(n, sizeof *parts);
  if (!parts) st = interp_error(op, HLO_RESOURCE_EXHAUSTED, "out of memory");
  for (uint32_t k = 0; k < op->num_operands && !st; k++) {
    const hlo_type *t = in[k]->type;
    size_t es = hlo_dtype_size(t->dtype);
    int64_t pdims[64];
    if (t->rank > 64) {
      st = interp_error(op, HLO_UNIMPLEMENTED, "rank over 64");
      break;
    }
    memcpy(pdims, t->dims, t->rank * sizeof *pdims);
    pdims[sd] /= count;
    size_t pbytes = (size_t)(in[k]->num_elems / count) * es;
    for (uint32_t m = 0; m < n && !st; m++) {
      tensor *v = all[(size_t)m * op->num_operands + k];
      if (!type_same_shape(v->type, t)) {
        st = interp_error(op, HLO_INVALID_ARGUMENT,
                          "processes pass operands of different types to all_to_all");
        break;
      }
      parts[m] = xmalloc(pbytes + 1);
      if (!parts[m]) {
        st = interp_error(op, HLO_RESOURCE_EXHAUSTED, "out of memory");
        break;
      }
      take_part(parts[m], v->data, t->dims, t->rank, (uint32_t)sd, n, idx, es);
    }
    if (!st && type_num_elements(rt[k]) != in[k]->num_elems)
      st = interp_error(op, HLO_INVALID_ARGUMENT, "all_to_all's result %u has the wrong shape", k);
    if (!st) st = tensor_create(rt[k], &op->loc, &out[k]);
    if (!st)
      concat_raw(out[k]->data, (const uint8_t *const *)parts, n, pdims, t->rank, (uint32_t)cd, es);
    for (uint32_t m = 0; m < n; m++) {
      free(parts[m]);
      parts[m] = NULL;
    }
  }
  free(parts);
  return exchange_end(st, op, all, (size_t)n * op->num_operands, out);
}

/* The position in the process group of the source / root of result k:
 * 0, or with has_dynamic_root the k-th entry of the last operand (spec:
 * process_groups[i, operands[N][k]]). */
static hlo_status root_index(const hlo_op *op, tensor *const *in, uint32_t k, uint32_t n,
                             int64_t *out) {
  *out = 0;
  if (!op_attr_bool(op, "has_dynamic_root", false)) return NULL;
  const tensor *r = op->num_operands ? in[op->num_operands - 1] : NULL;
  if (!r || r->type->kind != TYPE_TENSOR || !dtype_is_int(r->type->dtype) ||
      r->num_elems <= (int64_t)k)
    return interp_error(op, HLO_INVALID_ARGUMENT,
                        "has_dynamic_root needs a last operand with one root per result");
  int64_t v = elem_get_i64(r->type->dtype, r->data, k);
  if (v < 0 || v >= n)
    return interp_error(op, HLO_INVALID_ARGUMENT,
                        "dynamic root %lld of result %u is outside the process group (size %u)",
                        (long long)v, k, n);
  *out = v;
  return NULL;
}

static hlo_status k_collective_broadcast(interp *it, const hlo_op *op, tensor *const *in,
                                         const hlo_type *const *rt, tensor **out) {
  int32_t *g;
  uint32_t n;
  HLO_TRY(my_group(it, op, "replica_groups", channel_mode(op), &g, &n));
  hlo_status st = NULL;
  if (!n) {  /* not in any group: zeros */
    for (uint32_t k = 0; k < op->num_results && !st; k++)
      st = tensor_create(rt[k], &op->loc, &out[k]);
    if (st) iu_release_all(out, op->num_results);
    return st;
  }
  tensor **all;
  st = rendezvous(it, op, channel_id(op), g, n, in, op->num_operands, &all);
  free(g);
  if (st) return st;
  uint32_t nv = op->num_operands;
  for (uint32_t k = 0; k < op->num_results && !st; k++) {
    int64_t root;
    st = root_index(op, in, k, n, &root);
    if (st) break;
    tensor *src = all[(size_t)root * nv + k];
    st = tensor_create(rt[k], &op->loc, &out[k]);
    if (!st && src->nbytes != out[k]->nbytes)
      st = interp_error(op, HLO_INVALID_ARGUMENT, "collective_broadcast: operand and result "
                        "shapes differ");
    if (!st) memcpy(out[k]->data, src->data, src->nbytes);
  }
  return exchange_end(st, op, all, (size_t)n * op->num_operands, out);
}

static hlo_status k_collective_reduce(interp *it, const hlo_op *op, tensor *const *in,
                                      const hlo_type *const *rt, tensor **out) {
  int32_t *g;
  uint32_t n;
  HLO_TRY(my_group(it, op, "replica_groups", channel_mode(op), &g, &n));
  hlo_status st = NULL;
  for (uint32_t k = 0; k < op->num_results && !st; k++)
    st = tensor_create(rt[k], &op->loc, &out[k]);
  if (st || !n) {
    free(g);
    if (st) iu_release_all(out, op->num_results);
    return st;
  }
  uint32_t me = index_in(g, n, proc_flat(interp_current_process(it)));
  tensor **all;
  st = rendezvous(it, op, channel_id(op), g, n, in, op->num_operands, &all);
  free(g);
  if (st) {
    iu_release_all(out, op->num_results);
    return st;
  }
  /* Only the root (process_group[0], or the dynamic root) keeps the
   * reduction; the others get zeros. */
  for (uint32_t k = 0; k < op->num_results && k < op->num_operands && !st; k++) {
    int64_t root;
    st = root_index(op, in, k, n, &root);
    if (!st && root == me)
      st = fold_tensors(it, op, all + k, op->num_operands, n, rt[k]->dtype, out[k]->data,
                        out[k]->num_elems);
  }
  return exchange_end(st, op, all, (size_t)n * op->num_operands, out);
}

static hlo_status k_collective_permute(interp *it, const hlo_op *op, tensor *const *in,
                                       const hlo_type *const *rt, tensor **out) {
  HLO_TRY(check_tensor(op, in[0], "collective_permute's operand"));
  interp_process *p = interp_current_process(it);
  int me = proc_flat(p);
  int64_t *m, rows, cols;
  HLO_TRY(read_int_matrix(op, "source_target_pairs", &m, &rows, &cols));
  hlo_status st = tensor_create(rt[0], &op->loc, &out[0]);
  if (!st && rows > 0 && cols != 2)
    st = interp_error(op, HLO_INVALID_ARGUMENT, "source_target_pairs must be an Nx2 matrix");
  bool cp = channel_mode(op) == CROSS_PARTITION;
  int64_t limit = cp ? p->num_partitions : p->num_replicas;
  for (int64_t i = 0; i < rows && !st; i++) {
    int64_t s = m[2 * i], t = m[2 * i + 1];
    if (s < 0 || t < 0 || s >= limit || t >= limit) {
      st = interp_error(op, HLO_INVALID_ARGUMENT,
                        "source_target_pairs: pair [%lld, %lld] is out of range (%lld %s)",
                        (long long)s, (long long)t, (long long)limit,
                        cp ? "partitions" : "replicas");
      break;
    }
    int32_t from = (int32_t)(cp ? p->replica_id * p->num_partitions + s
                                : s * p->num_partitions + p->partition_id);
    int32_t to = (int32_t)(cp ? p->replica_id * p->num_partitions + t
                              : t * p->num_partitions + p->partition_id);
    if (from != me && to != me) continue;
    int32_t grp[2] = {from, to};
    tensor **all;
    st = rendezvous(it, op, channel_id(op), grp, from == to ? 1 : 2, in, 1, &all);
    if (st) break;
    if (to == me) {
      if (all[0]->nbytes != out[0]->nbytes)
        st = interp_error(op, HLO_INVALID_ARGUMENT, "collective_permute: operand shapes differ");
      else
        memcpy(out[0]->data, all[0]->data, all[0]->nbytes);
    }
    release_all(all, from == to ? 1 : 2);
  }
  free(m);
  if (st) iu_release_all(out, op->num_results);
  return st;
}

/* ------------------------------------------------ send / recv / feeds */

static chan_q *find_channel(grid *g, int64_t id, bool create) {
  for (chan_q *c = g->channels; c; c = c->next)
    if (c->id == id) return c;
  if (!create) return NULL;
  chan_q *c = calloc(1, sizeof *c);
  if (!c) return NULL;
  c->id = id;
  c->next = g->channels;
  g->channels = c;
  return c;
}

static grid *need_grid(interp *it, const hlo_op *op, hlo_status *st) {
  grid *g = interp_current_process(it)->grid;
  if (!g)
    *st = interp_error(op, HLO_UNIMPLEMENTED,
                       "%s needs a process grid: run it inside interpreter.run_parallel",
                       op_name(op->opcode));
  return g;
}

static hlo_status k_send(interp *it, const hlo_op *op, tensor *const *in,
                         const hlo_type *const *rt, tensor **out) {
  hlo_status st = NULL;
  grid *g = need_grid(it, op, &st);
  if (!g) return st;
  uint32_t n = op->num_operands ? op->num_operands - 1 : 0;  /* last operand is the token */
  chan_msg *msg = calloc(1, sizeof *msg);
  if (msg) msg->vals = calloc(n + 1, sizeof *msg->vals);
  if (!msg || !msg->vals) {
    if (msg) free(msg->vals);
    free(msg);
    return interp_error(op, HLO_RESOURCE_EXHAUSTED, "out of memory");
  }
  msg->n = n;
  for (uint32_t i = 0; i < n; i++) msg->vals[i] = tensor_retain(in[i]);
  pthread_mutex_lock(&g->mu);
  chan_q *c = find_channel(g, channel_id(op), true);
  if (c) {
    if (c->tail) c->tail->next = msg;
    else c->head = msg;
    c->tail = msg;
    g->epoch++;
    pthread_cond_broadcast(&g->cv);
  }
  pthread_mutex_unlock(&g->mu);
  if (!c) {
    for (uint32_t i = 0; i < n; i++) tensor_release(msg->vals[i]);
    free(msg->vals);
    free(msg);
    return interp_error(op, HLO_RESOURCE_EXHAUSTED, "out of memory");
  }
  return tensor_create(rt[0], &op->loc, &out[0]);
}

typedef struct chan_wait {
  int64_t id;
} chan_wait;

static bool chan_ready(const grid *g, const void *arg) {
  int64_t id = ((const chan_wait *)arg)->id;
  for (const chan_q *c = g->channels; c; c = c->next)
    if (c->id == id) return c->head != NULL;
  return false;
}

static hlo_status k_recv(interp *it, const hlo_op *op, tensor *const *in,
                         const hlo_type *const *rt, tensor **out) {
  hlo_status st = NULL;
  grid *g = need_grid(it, op, &st);
  if (!g) return st;
  chan_wait w = {channel_id(op)};
  pthread_mutex_lock(&g->mu);
  st = grid_wait(g, proc_flat(interp_current_process(it)), chan_ready, &w, op,
                 "a value on its channel");
  chan_msg *msg = NULL;
  if (!st) {
    chan_q *c = find_channel(g, w.id, false);
    msg = c->head;
    c->head = msg->next;
    if (!c->head) c->tail = NULL;
  }
  pthread_mutex_unlock(&g->mu);
  if (st) return st;
  uint32_t n = op->num_results ? op->num_results - 1 : 0;
  if (msg->n != n)
    st = interp_error(op, HLO_INVALID_ARGUMENT, "recv expects %u values but send sent %u", n,
                      msg->n);
  for (uint32_t i = 0; i < n && !st; i++) {
    if (!type_same_shape(msg->vals[i]->type, rt[i]))
      st = interp_error(op, HLO_INVALID_ARGUMENT, "recv result %u has a different type than the "
                        "value sent", i);
    else
      out[i] = tensor_retain(msg->vals[i]);
  }
  if (!st) st = tensor_create(rt[n], &op->loc, &out[n]);
  for (uint32_t i = 0; i < msg->n; i++) tensor_release(msg->vals[i]);
  free(msg->vals);
  free(msg);
  if (st) iu_release_all(out, op->num_results);
  return st;
}

static hlo_status k_infeed(interp *it, const hlo_op *op, tensor *const *in,
                           const hlo_type *const *rt, tensor **out) {
  hlo_status st = NULL;
  grid *g = need_grid(it, op, &st);
  if (!g) return st;
  const hlo_func *f = NULL;
  pthread_mutex_lock(&g->mu);
  if (g->next_infeed < g->num_infeed) f = g->infeed[g->next_infeed++];
  pthread_mutex_unlock(&g->mu);
  if (!f)
    return interp_error(op, HLO_OUT_OF_RANGE,
                        "infeed is empty (run_parallel's infeed attribute lists %u functions)",
                        g->num_infeed);
  if (f->num_results + 1 != op->num_results)
    return interp_error(op, HLO_INVALID_ARGUMENT,
                        "infeed function @%s returns %u values, the op expects %u", f->name,
                        f->num_results, op->num_results - 1);
  tensor **res = NULL;
  HLO_RETURN_IF_ERROR(interp_call(it, f, NULL, 0, &res), "while running infeed function @%s",
                      f->name);
  for (uint32_t i = 0; i < f->num_results; i++) {
    if (!st && !type_same_shape(res[i]->type, rt[i]))
      st = interp_error(op, HLO_INVALID_ARGUMENT,
                        "infeed function @%s's result %u does not match the op's result type",
                        f->name, i);
    out[i] = res[i];
  }
  free(res);
  if (!st) st = tensor_create(rt[f->num_results], &op->loc, &out[f->num_results]);
  if (st) iu_release_all(out, op->num_results);
  return st;
}

static hlo_status k_outfeed(interp *it, const hlo_op *op, tensor *const *in,
                            const hlo_type *const *rt, tensor **out) {
  /* The outfeed's other end is implementation-defined; values are dropped
   * (as the reference interpreter's, which nobody reads). */
  return tensor_create(rt[0], &op->loc, &out[0]);
}

/* -------------------------------------------------------- run_parallel */

typedef struct proc_ctx {
  grid *g;
  interp *child;
  const hlo_func *f;
  tensor *const *args;
  uint32_t nargs;
  tensor **results;
  hlo_status st;
  int flat;
  bool started;
} proc_ctx;

/* Thread body of one run_parallel process: runs its function, then marks
 * the grid failed (waking waiters) if it failed. */
static void *proc_main(void *arg) {
  proc_ctx *c = arg;
  c->st = interp_call(c->child, c->f, c->args, c->nargs, &c->results);
  grid *g = c->g;
  pthread_mutex_lock(&g->mu);
  if (c->st && !g->aborted[c->flat]) g->failed = true;
  g->done[c->flat] = true;
  g->epoch++;
  pthread_cond_broadcast(&g->cv);
  pthread_mutex_unlock(&g->mu);
  return NULL;
}

/* The function a symbol attribute names; NULL with *st set otherwise. */
static const hlo_func *lookup_symbol(interp *it, const hlo_op *op, const hlo_attr *a,
                                     hlo_status *st) {
  if (!a || a->kind != ATTR_SYMBOL) {
    *st = interp_error(op, HLO_INVALID_ARGUMENT, "expected a function symbol (@name)");
    return NULL;
  }
  char name[256];
  size_t len = a->u.str.len < sizeof name - 1 ? a->u.str.len : sizeof name - 1;
  memcpy(name, a->u.str.s, len);
  name[len] = 0;
  const hlo_func *f = module_find_func(interp_module(it), name);
  if (!f) *st = interp_error(op, HLO_NOT_FOUND, "function @%s not found", name);
  return f;
}

static hlo_status k_run_parallel(interp *it, const hlo_op *op, tensor *const *in,
                                 const hlo_type *const *rt, tensor **out) {
  const hlo_attr *progs = op_attr(op, "programs");
  if (!progs || progs->kind != ATTR_ARRAY || progs->u.arr.n == 0 ||
      progs->u.arr.items[0]->kind != ATTR_ARRAY || progs->u.arr.items[0]->u.arr.n == 0)
    return interp_error(op, HLO_INVALID_ARGUMENT,
                        "`programs` must be a non-empty array of arrays of function symbols");
  uint32_t R = progs->u.arr.n, P = progs->u.arr.items[0]->u.arr.n;
  if ((uint64_t)R * P > 4096)
    return interp_error(op, HLO_RESOURCE_EXHAUSTED, "too many processes (%u x %u)", R, P);
  int nproc = (int)(R * P);
  hlo_status st = NULL;
  const hlo_func **funcs = xcalloc((size_t)nproc, sizeof *funcs);
  if (!funcs) return interp_error(op, HLO_RESOURCE_EXHAUSTED, "out of memory");
  uint64_t nargs = 0, nres = 0;
  for (uint32_t r = 0; r < R && !st; r++) {
    const hlo_attr *row = progs->u.arr.items[r];
    if (row->kind != ATTR_ARRAY || row->u.arr.n != P) {
      st = interp_error(op, HLO_INVALID_ARGUMENT,
                        "sizes of the second dimension of `programs` should all be %u", P);
      break;
    }
    for (uint32_t p = 0; p < P && !st; p++) {
      const hlo_func *f = lookup_symbol(it, op, row->u.arr.items[p], &st);
      if (!f) break;
      funcs[r * P + p] = f;
      nargs += f->num_args;
      nres += f->num_results;
    }
  }
  if (!st && nargs != op->num_operands)
    st = interp_error(op, HLO_INVALID_ARGUMENT,
                      "number of inputs (%u) should match the sum of the programs' inputs (%llu)",
                      op->num_operands, (unsigned long long)nargs);
  if (!st && nres != op->num_results)
    st = interp_error(op, HLO_INVALID_ARGUMENT,
                      "number of results (%u) should match the sum of the programs' results "
                      "(%llu)", op->num_results, (unsigned long long)nres);
  grid *g = NULL;
  if (!st) {
    g = calloc(1, sizeof *g);
    if (g) {
      g->done = calloc((size_t)nproc, sizeof *g->done);
      g->waiting = calloc((size_t)nproc, sizeof *g->waiting);
      g->aborted = calloc((size_t)nproc, sizeof *g->aborted);
      g->wait_epoch = calloc((size_t)nproc, sizeof *g->wait_epoch);
    }
    if (!g || !g->done || !g->waiting || !g->aborted || !g->wait_epoch) {
      if (g) {
        free(g->done);
        free(g->waiting);
        free(g->aborted);
        free(g->wait_epoch);
        free(g);
      }
      g = NULL;
      st = interp_error(op, HLO_RESOURCE_EXHAUSTED, "out of memory");
    } else {
      pthread_mutex_init(&g->mu, NULL);
      pthread_cond_init(&g->cv, NULL);
      g->num_replicas = R;
      g->num_partitions = P;
      g->nproc = nproc;
    }
  }
  const hlo_attr *inf = op_attr(op, "infeed");
  if (!st && inf) {
    if (inf->kind != ATTR_ARRAY || inf->u.arr.n == 0) {
      st = interp_error(op, HLO_INVALID_ARGUMENT, "`infeed` must be a non-empty array of symbols");
    } else {
      g->infeed = xcalloc(inf->u.arr.n, sizeof *g->infeed);
      if (!g->infeed) st = interp_error(op, HLO_RESOURCE_EXHAUSTED, "out of memory");
      for (uint32_t i = 0; i < inf->u.arr.n && !st; i++) {
        g->infeed[i] = lookup_symbol(it, op, inf->u.arr.items[i], &st);
        if (!st && (g->infeed[i]->num_results < 1 || g->infeed[i]->num_args != 0))
          st = interp_error(op, HLO_INVALID_ARGUMENT,
                            "infeed function @%s should take nothing and return tensors",
                            g->infeed[i]->name);
      }
      g->num_infeed = inf->u.arr.n;
    }
  }
  if (!st) st = interp_probe_prepare(it, op);
  proc_ctx *ctx = NULL;
  pthread_t *threads = NULL;
  if (!st) {
    ctx = xcalloc((size_t)nproc, sizeof *ctx);
    threads = xcalloc((size_t)nproc, sizeof *threads);
    if (!ctx || !threads) st = interp_error(op, HLO_RESOURCE_EXHAUSTED, "out of memory");
  }
  uint32_t arg_pos = 0;
  for (int i = 0; i < nproc && !st; i++) {
    interp_process ip = {i / (int)P, i % (int)P, R, P, g};
    ctx[i].g = g;
    ctx[i].f = funcs[i];
    ctx[i].flat = i;
    ctx[i].args = in + arg_pos;
    ctx[i].nargs = funcs[i]->num_args;
    arg_pos += funcs[i]->num_args;
    st = interp_fork(it, &ip, &ctx[i].child);
  }
  for (int i = 0; i < nproc && !st; i++) {
    if (pthread_create(&threads[i], NULL, proc_main, &ctx[i]) != 0) {
      st = interp_error(op, HLO_RESOURCE_EXHAUSTED, "cannot start a thread for process %d", i);
      pthread_mutex_lock(&g->mu);
      g->failed = true;
      g->epoch++;
      pthread_cond_broadcast(&g->cv);
      pthread_mutex_unlock(&g->mu);
      break;
    }
    ctx[i].started = true;
  }
  if (ctx) {
    for (int i = 0; i < nproc; i++)
      if (ctx[i].started) pthread_join(threads[i], NULL);
  }
  /* Results in process order; the first error that is not an abort wins. */
  int bad = -1;
  for (int i = 0; ctx && i < nproc && !st; i++)
    if (ctx[i].st && (bad < 0 || (g->aborted[bad] && !g->aborted[i]))) bad = i;
  if (bad >= 0) {
    st = status_note(ctx[bad].st, "in process (replica %d, partition %d) of run_parallel",
                     bad / (int)P, bad % (int)P);
    ctx[bad].st = NULL;
  }
  uint32_t rpos = 0;
  for (int i = 0; ctx && i < nproc; i++) {
    if (ctx[i].results) {
      for (uint32_t k = 0; k < ctx[i].f->num_results; k++) {
        if (!st && rpos < op->num_results) out[rpos++] = ctx[i].results[k];
        else tensor_release(ctx[i].results[k]);
      }
      free(ctx[i].results);
    }
    hlo_status_free(ctx[i].st);
    if (ctx[i].child) interp_destroy(ctx[i].child);
  }
  if (st) iu_release_all(out, op->num_results);
  free(ctx);
  free(threads);
  free(funcs);
  grid_destroy(g);
  return st;
}

/* --------------------------------------------------------- registration */

#define SET(opc, fn) \
  do {               \
    if (!table[opc]) table[opc] = fn; \
  } while (0)

void interp_register_collective(interp_kernel *table) {
  SET(OP_INTERP_RUN_PARALLEL, k_run_parallel);
  SET(OP_REPLICA_ID, k_replica_id);
  SET(OP_PARTITION_ID, k_partition_id);
  SET(OP_AFTER_ALL, k_token);
  SET(OP_CREATE_TOKEN, k_token);
  SET(OP_ALL_GATHER, k_all_gather);
  SET(OP_ALL_REDUCE, k_all_reduce);
  SET(OP_REDUCE_SCATTER, k_reduce_scatter);
  SET(OP_ALL_TO_ALL, k_all_to_all);
  SET(OP_COLLECTIVE_BROADCAST, k_collective_broadcast);
  SET(OP_COLLECTIVE_REDUCE, k_collective_reduce);
  SET(OP_COLLECTIVE_PERMUTE, k_collective_permute);
  SET(OP_SEND, k_send);
  SET(OP_RECV, k_recv);
  SET(OP_INFEED, k_infeed);
  SET(OP_OUTFEED, k_outfeed);
  interp_register_probe(table);
}
