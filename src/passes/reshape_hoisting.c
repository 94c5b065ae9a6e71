/* reshape_hoisting.c — the reshape-hoisting pass: a reshape that merges
 * dims of an elementwise chain reads the chain computed in its own shape
 * instead, so that the broadcasts feeding the chain are not read through
 * the merging reshape.
 *
 * Why: fusion (fusion.c, rule 4) keeps a broadcast out of a kernel that
 * reads it through a reshape merging dims (its index there needs div/mod,
 * which lower_fusion does not make), so the broadcast is materialised at
 * the chain's full size. GroupNorm does exactly this: the normalisation
 * `(x - mean) / std` runs over [N, H, W, G, C/G], with mean and std
 * broadcast from [N, 1, 1, G, 1], and is reshaped to [N, H, W, C] for the
 * affine part: two broadcast tensors as large as the activation were
 * written and read. After this pass the chain runs over [N, H, W, C] and
 * each broadcast is of a tiny [N, 1, 1, C] value (mean broadcast over the
 * group's channels, then merged: a few elements).
 *
 * The rewrite (XLA's ReshapeMover moves reshapes across elementwise ops in
 * the other direction; the algebra is the same, every op computes the same
 * element): for R = reshape(E) with result type T, where
 *   - R's operand type S and T are a pure row-major merge: each dim of T is
 *     the product of a run of consecutive dims of S (no split);
 *   - E is an elementwise op whose only use is R, and so, recursively, is
 *     every elementwise op of the chain below it (the "chain"); each
 *     chain op's operands have the chain's shape (or are scalars);
 *   - every other operand reached (a "leaf") is a reshape (then read from
 *     its operand directly, or through one reshape), a broadcast_in_dim
 *     whose merged form is small (below), a constant, a block argument or
 *     an op fusion does not take into a loop (dot, convolution, reduce, a
 *     call, ...: materialised anyway, so a reshape of it is a free alias);
 *   - at least one leaf is such a broadcast that fills part of a merged
 *     run and broadcasts along the rest of it (GroupNorm's [G] along
 *     [G, C/G]: the case the merged index cannot reach affinely; the
 *     others, such as a row value broadcast along whole runs, are left to
 *     fusion as they are);
 * every chain op is made again with T's dims, each leaf reshaped to T, and
 * R's uses read the new chain. A broadcast leaf B = broadcast_in_dim(X) to
 * S becomes broadcast_in_dim(reshape(broadcast_in_dim(X) to S'), T) where
 * S' keeps, in each merged run of S, the full sizes when the run mixes
 * broadcast dims with dims X fills, and otherwise X's sizes (1 for the
 * broadcast dims): S' merged is T with every all-broadcast run 1. Taken
 * only when S' has at most a quarter of S's elements. Bit-exact. The old
 * chain, R and leaves left without a use are removed. */
#include <stdlib.h>
#include <string.h>

#include "passes/builder.h"
#include "passes/pass_util.h"
#include "passes/passes.h"
#include "passes/use_index.h"

enum { MAX_CHAIN = 64, MAX_RANK = 16 };

/* run[d] (for each dim d of s): the dim of t whose merged run d belongs
 * to, when t is a pure row-major merge of s (every dim of t the product of
 * a non-empty run of consecutive dims of s; unit dims of s join the run
 * before them, or the first). False otherwise. */
static bool merge_runs(const hlo_type *s, const hlo_type *t, uint32_t *run) {
  if (s->rank > MAX_RANK || t->rank > MAX_RANK || t->rank >= s->rank || t->rank == 0)
    return false;
  uint32_t d = 0;
  for (uint32_t j = 0; j < t->rank; j++) {
    int64_t p = 1;
    uint32_t start = d;
    while (d < s->rank && (p < t->dims[j] || d == start)) p *= s->dims[d], run[d++] = j;
    while (d < s->rank && s->dims[d] == 1 && j + 1 == t->rank) run[d++] = j;
    if (p != t->dims[j]) return false;
  }
  return d == s->rank;
}

static bool same_dims(const hlo_type *a, const hlo_type *b) {
  return a->rank == b->rank && (!a->rank || !memcmp(a->dims, b->dims, a->rank * sizeof *a->dims));
}

/* For a broadcast leaf b (broadcast_in_dim of X to s): s2 (rank of s),
 * the shape it is first broadcast to (see the header); false when the
 * broadcast is not one this pass rewrites or s2 is not small. */
static bool bcast_plan(const hlo_op *b, const hlo_type *s, const uint32_t *run, int64_t *s2,
                       bool *mixed) {
  const hlo_attr *a = op_attr(b, "broadcast_dimensions");
  const hlo_type *xt = b->operands[0]->type;
  if (!a || a->kind != ATTR_DENSE_ARRAY || a->u.darr.n != xt->rank ||
      (xt->rank && !a->u.darr.ints) || !type_is_static(xt))
    return false;
  bool full[MAX_RANK] = {false}, bcast[MAX_RANK] = {false};
  bool run_full[MAX_RANK] = {false}, run_bcast[MAX_RANK] = {false};
  for (uint32_t i = 0; i < xt->rank; i++) {
    int64_t d = a->u.darr.ints[i];
    if (d < 0 || d >= (int64_t)s->rank) return false;
    if (xt->dims[i] == s->dims[d] && s->dims[d] > 1) full[d] = true;
  }
  for (uint32_t d = 0; d < s->rank; d++) {
    bcast[d] = s->dims[d] > 1 && !full[d];
    run_full[run[d]] |= full[d];
    run_bcast[run[d]] |= bcast[d];
  }
  int64_t n2 = 1, n = 1;
  *mixed = false;
  for (uint32_t d = 0; d < s->rank; d++) {
    uint32_t j = run[d];
    *mixed |= run_full[j] && run_bcast[j];
    s2[d] = run_full[j] && run_bcast[j] ? s->dims[d] : full[d] ? s->dims[d] : 1;
    n2 *= s2[d];
    n *= s->dims[d];
  }
  return n2 * 4 <= n;
}

typedef struct hoist {
  hlo_module_ir *m;
  use_index *ui;
  const hlo_type *s, *t;  /* the chain's shape, the reshape's */
  uint32_t run[MAX_RANK];
  hlo_op *chain[MAX_CHAIN]; /* chain ops, root first */
  uint32_t nchain;
  bool has_bcast;
} hoist;

static bool is_chain_op(const hoist *h, const hlo_op *op) {
  fusion_role r = fusion_op_fusible(op);
  return op && (op_flags(op->opcode) & OPF_ELEMENTWISE) && op->num_results == 1 &&
         !op->num_regions && (r == FUSION_CHEAP || r == FUSION_EXPENSIVE) &&
         use_index_count(h->ui, &op->results[0]) == 1 && same_dims(op->results[0].type, h->s);
}

/* Whether the chain under op (a chain op) qualifies; records its ops. */
static bool check_chain(hoist *h, hlo_op *op) {
  if (h->nchain == MAX_CHAIN || op->num_operands > 16) return false; /* remake's bound */
  h->chain[h->nchain++] = op;
  for (uint32_t i = 0; i < op->num_operands; i++) {
    const hlo_value *v = op->operands[i];
    if (v->type->kind != TYPE_TENSOR) return false;
    if (v->type->rank == 0) continue;
    if (!same_dims(v->type, h->s)) return false;
    hlo_op *d = v->def;
    if (d && is_chain_op(h, d)) {
      for (uint32_t k = 0; k < h->nchain; k++)
        if (h->chain[k] == d) return false; /* read twice */
      if (!check_chain(h, d)) return false;
      continue;
    }
    if (!d || d->opcode == OP_RESHAPE || d->opcode == OP_CONSTANT) continue;
    if (d->opcode == OP_BROADCAST_IN_DIM) {
      int64_t s2[MAX_RANK];
      bool mixed = false;
      if (!bcast_plan(d, h->s, h->run, s2, &mixed)) return false;
      h->has_bcast |= mixed;
      continue;
    }
    fusion_role r = fusion_op_fusible(d);
    if (r != FUSION_NO && r != FUSION_REDUCE) return false; /* a fusible producer */
  }
  return true;
}

/* v (of shape s) as a value of t's dims, made before the builder's point. */
static hlo_value *leaf_as_t(hoist *h, builder *b, hlo_value *v) {
  if (v->type->rank == 0) return v;
  hlo_type *tt = b_type(b, v->type->dtype, h->t->rank, h->t->dims);
  hlo_op *d = v->def;
  if (d && d->opcode == OP_RESHAPE) {
    hlo_value *src = d->operands[0];
    if (same_dims(src->type, h->t) && src->type->dtype == v->type->dtype) return src;
    return b_reshape(b, src, tt);
  }
  if (d && d->opcode == OP_BROADCAST_IN_DIM) {
    int64_t s2[MAX_RANK], t2[MAX_RANK], ident[MAX_RANK];
    bool mixed = false;
    if (bcast_plan(d, h->s, h->run, s2, &mixed)) {
      const hlo_attr *a = op_attr(d, "broadcast_dimensions");
      hlo_value *x = d->operands[0];
      hlo_type *st2 = b_type(b, v->type->dtype, h->s->rank, s2);
      hlo_value *z = b_broadcast_in_dim(b, x, st2, a->u.darr.ints, a->u.darr.n);
      for (uint32_t j = 0; j < h->t->rank; j++) t2[j] = 1, ident[j] = j;
      for (uint32_t k = 0; k < h->s->rank; k++) t2[h->run[k]] *= s2[k];
      hlo_value *w = b_reshape(b, z, b_type(b, v->type->dtype, h->t->rank, t2));
      return b_broadcast_in_dim(b, w, tt, ident, h->t->rank);
    }
  }
  return b_reshape(b, v, tt);
}

/* The chain under op made again with t's dims. */
static hlo_value *remake(hoist *h, builder *b, hlo_op *op) {
  hlo_value *ops[16];
  if (op->num_operands > 16) {
    b->failed = true;
    return NULL;
  }
  for (uint32_t i = 0; i < op->num_operands; i++) {
    hlo_value *v = op->operands[i];
    bool in_chain = false;
    for (uint32_t k = 0; k < h->nchain && !in_chain; k++) in_chain = h->chain[k] == v->def;
    ops[i] = in_chain ? remake(h, b, v->def) : leaf_as_t(h, b, v);
    if (!ops[i]) {
      b->failed = true;
      return NULL;
    }
  }
  hlo_type *rt = b_type(b, op->results[0].type->dtype, h->t->rank, h->t->dims);
  hlo_op *n = b_op(b, op->opcode, ops, op->num_operands, &rt, 1, 0);
  if (!n) return NULL;
  n->num_attrs = op->num_attrs; /* attributes are never edited in place */
  n->attrs = op->attrs;
  return &n->results[0];
}

/* Rewrites the first reshape of block blk (nested blocks included) that
 * qualifies; *done says whether one did. */
static hlo_status hoist_one(hlo_module_ir *m, use_index *ui, hlo_block *blk, bool *done) {
  for (hlo_op *op = blk->first; op && !*done; op = op->next) {
    for (uint32_t r = 0; r < op->num_regions && !*done; r++)
      HLO_TRY(hoist_one(m, ui, &op->regions[r].block, done));
    if (*done || op->opcode != OP_RESHAPE || op->num_operands != 1 ||
        !use_index_count(ui, &op->results[0]))
      continue;
    hoist h;
    memset(&h, 0, sizeof h);
    h.m = m, h.ui = ui;
    h.s = op->operands[0]->type;
    h.t = op->results[0].type;
    hlo_op *e = op->operands[0]->def;
    if (h.s->kind != TYPE_TENSOR || h.t->kind != TYPE_TENSOR || !type_is_static(h.s) ||
        !type_is_static(h.t) || !merge_runs(h.s, h.t, h.run) || !e || !is_chain_op(&h, e) ||
        e->parent != blk || !check_chain(&h, e) || !h.has_bcast)
      continue;
    builder b;
    builder_at(&b, m, op);
    hlo_value *nv = remake(&h, &b, e);
    HLO_TRY(builder_status(&b));
    block_replace_uses(blk, &op->results[0], nv);
    *done = true;
  }
  return NULL;
}

/* Removes the pure ops of blk (nested blocks included) that nothing reads,
 * last first (dce.c's walk). */
static void drop_dead(use_index *ui, hlo_block *b) {
  for (hlo_op *op = b->last, *prev; op; op = prev) {
    prev = op->prev;
    if (op_is_pure(op) && !use_index_op_used(ui, op)) {
      use_index_erase(ui, op);
      continue;
    }
    for (uint32_t r = op->num_regions; r-- > 0;) drop_dead(ui, &op->regions[r].block);
  }
}

hlo_status pass_reshape_hoisting(hlo_module_ir *m, const hlo_pass_options *o) {
  (void)o;
  for (hlo_func *f = m->funcs; f; f = f->next) {
    bool any = false;
    for (uint32_t round = 0; round < 256; round++) {
      use_index *ui = NULL;
      HLO_TRY(use_index_build(f, &ui));
      bool done = false;
      hlo_status st = hoist_one(m, ui, &f->body.block, &done);
      use_index_free(ui);
      HLO_TRY(st);
      if (!done) break;
      any = true;
    }
    if (!any) continue;
    /* the old chains, reshapes and leaves nothing reads any more */
    use_index *ui = NULL;
    HLO_TRY(use_index_build(f, &ui));
    drop_dead(ui, &f->body.block);
    use_index_free(ui);
  }
  return NULL;
}
