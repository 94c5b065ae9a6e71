/* verify_collective.c — constraint checks of the collectives (all_reduce,
 * all_gather, all_to_all, reduce_scatter, collective_permute,
 * collective_broadcast), the token and communication ops (after_all,
 * create_token, infeed, outfeed, send, recv, ...) and custom_call, following
 * reference/stablehlo-spec.md. */
#include <stdio.h>
#include <string.h>
#include "ir/element.h"
#include "ir/verify.h"

#define T(i) (op->operands[(i)]->type)
#define R(i) (op->results[(i)].type)

hlo_status verify_custom_call(vctx *c, const hlo_op *op) {
  const hlo_attr *t = op_attr(op, "call_target_name");
  if (!t) return verr(op, "ATTR", "missing required attribute 'call_target_name'");
  if (t->kind != ATTR_STRING) return verr(op, "ATTR", "attribute 'call_target_name' must be a string");
  bool b;
  int64_t v;
  HLO_TRY(vbool(op, "has_side_effect", false, false, &b));
  HLO_TRY(vint(op, "api_version", false, 1, &v));
  const hlo_attr *bc = op_attr(op, "backend_config");
  if (bc && bc->kind != ATTR_STRING && bc->kind != ATTR_DICT && bc->kind != ATTR_OPAQUE)
    return verr(op, "ATTR", "attribute 'backend_config' must be a string or a dictionary");
  /* output_operand_aliases: each entry names an operand in range and,
   * where both ends are plain values (no path into a tuple), a result of
   * the operand's type (MLIR's CustomCallOp verifier) */
  const hlo_attr *al = op_attr(op, "output_operand_aliases");
  if (al && al->kind != ATTR_ARRAY)
    return verr(op, "ATTR", "attribute 'output_operand_aliases' must be a list");
  for (uint32_t k = 0; al && k < al->u.arr.n; k++) {
    const hlo_attr *e = al->u.arr.items[k];
    const hlo_attr *oi = e && e->kind == ATTR_STRUCT ? attr_field(e, "operand_index") : NULL;
    if (!oi || oi->kind != ATTR_INT)
      return verr(op, "ATTR", "output_operand_aliases entry %u is not a "
                  "#stablehlo.output_operand_alias with an operand_index", k);
    if (oi->u.i.v < 0 || oi->u.i.v >= (int64_t)op->num_operands)
      return verr(op, "ATTR", "expects operandIndex in the output_operand_alias attribute to be "
                  "in range [0, %u); got: %lld", op->num_operands, (long long)oi->u.i.v);
    int64_t r, o;
    if (!custom_call_alias(op, k, &r, &o)) continue; /* a path into a tuple */
    if (r < 0 || r >= (int64_t)op->num_results)
      return verr(op, "ATTR", "output_operand_aliases entry %u names result %lld of %u", k,
                  (long long)r, op->num_results);
    const hlo_type *rt = R(r), *ot = T(o);
    if (rt->kind == TYPE_TENSOR && ot->kind == TYPE_TENSOR &&
        (!vshape_eq(rt, ot) || !velem_eq(rt, ot)))
      return verr(op, "ATTR", "shapes mismatch in the output_operand_alias attribute: operand "
                  "%lld and result %lld have different types", (long long)o, (long long)r);
  }
  const hlo_attr *cc = op_attr(op, "called_computations");
  if (cc && cc->kind == ATTR_ARRAY)
    for (uint32_t i = 0; i < cc->u.arr.n; i++) {
      const hlo_attr *sym = cc->u.arr.items[i];
      if (sym && sym->kind == ATTR_SYMBOL && sym->u.str.s && !module_find_func(c->m, sym->u.str.s))
        return verr(op, "ATTR", "called computation '@%s' is not defined", sym->u.str.s);
    }
  return NULL;
}

/* ------------------------------------------------------- collectives */

/* replica_groups (a 2-D integer dense attribute, optional): entries unique,
 * ignoring -1 padding. */
static hlo_status vreplica_groups(vctx *c, const hlo_op *op, const char *cid) {
  const hlo_attr *at = op_attr(op, "replica_groups");
  if (!at || at->kind == ATTR_OPAQUE || at->kind == ATTR_STRUCT) return NULL;
  ilist g;
  const hlo_type *t;
  if (!vattr_ints(c, at, &g, &t)) return verr(op, "ATTR", "attribute 'replica_groups' must be integers");
  int64_t *v = g.n ? arena_calloc(&c->scratch, g.n, sizeof *v) : NULL;
  uint32_t n = 0;
  if (g.n && !v) return status_new(HLO_RESOURCE_EXHAUSTED, "out of memory");
  for (uint32_t i = 0; i < g.n; i++)
    if (g.v[i] != -1) v[n++] = g.v[i];
  int64_t k = vdup(v, n);
  if (k >= 0) return verr(op, cid, "replica_groups contains %lld twice", (long long)v[k]);
  return NULL;
}

hlo_status verify_all_reduce(vctx *c, const hlo_op *op) {
  uint32_t n = op->num_operands;
  HLO_TRY(vcount(op, 1, -1, (int)n, (int)n));
  HLO_TRY(vall_tensors(op));
  for (uint32_t i = 0; i < n; i++) {
    const hlo_type *e;
    HLO_TRY(vreduce_body(c, op, "C5", 0, 1, i, &e));
    if (!vshape_eq(R(i), T(i))) return verr(op, "C6", "result #%u shape differs from operand", i);
    if (!R(i)->quant && !velem_eq(R(i), e)) return verr(op, "C7", "result #%u element type differs from computation type", i);
  }
  return vreplica_groups(c, op, "C1");
}

hlo_status verify_all_gather(vctx *c, const hlo_op *op) {
  uint32_t n = op->num_operands;
  HLO_TRY(vcount(op, 1, -1, (int)n, (int)n));
  HLO_TRY(vall_tensors(op));
  int64_t d;
  HLO_TRY(vint(op, "all_gather_dim", true, 0, &d));
  for (uint32_t i = 0; i < n; i++) {
    if (d < 0 || d >= (int64_t)T(i)->rank) return verr(op, "C1", "all_gather_dim %lld is out of range", (long long)d);
    if (!velem_eq(T(i), R(i)) || R(i)->rank != T(i)->rank) return verr(op, "C6", "result #%u type differs from operand", i);
    for (uint32_t j = 0; j < T(i)->rank; j++)
      if ((int64_t)j != d && !vdim_eq(T(i)->dims[j], R(i)->dims[j])) return verr(op, "C6", "result #%u dimension %u differs", i, j);
  }
  return vreplica_groups(c, op, "C2");
}

hlo_status verify_all_to_all(vctx *c, const hlo_op *op) {
  uint32_t n = op->num_operands;
  HLO_TRY(vcount(op, 1, -1, (int)n, (int)n));
  HLO_TRY(vall_tensors(op));
  int64_t sd, cd, sc;
  HLO_TRY(vint(op, "split_dimension", true, 0, &sd));
  HLO_TRY(vint(op, "concat_dimension", true, 0, &cd));
  HLO_TRY(vint(op, "split_count", true, 1, &sc));
  if (sc <= 0) return verr(op, "C4", "split_count must be positive");
  for (uint32_t i = 0; i < n; i++) {
    int64_t rk = T(i)->rank;
    if (sd < 0 || sd >= rk) return verr(op, "C1", "split_dimension %lld is out of range", (long long)sd);
    if (cd < 0 || cd >= rk) return verr(op, "C3", "concat_dimension %lld is out of range", (long long)cd);
    int64_t sz = T(i)->dims[sd];
    if (sz != HLO_DYN && sz % sc) return verr(op, "C2", "split dimension size %lld is not divisible by split_count %lld", (long long)sz, (long long)sc);
    if (!velem_eq(T(i), R(i)) || R(i)->rank != T(i)->rank) return verr(op, "C9", "result #%u type differs from operand", i);
    for (int64_t d = 0; d < rk; d++) {
      int64_t want = T(i)->dims[d];
      if (want != HLO_DYN && sd != cd && d == sd) want /= sc;
      else if (want != HLO_DYN && sd != cd && d == cd) want = want > INT64_MAX / sc ? HLO_DYN : want * sc;
      if (!vdim_eq(R(i)->dims[d], want))
        return verr(op, "C9", "result #%u dimension %lld is %lld, expected %lld", i, (long long)d,
                    (long long)R(i)->dims[d], (long long)want);
    }
  }
  return vreplica_groups(c, op, "C5");
}

hlo_status verify_reduce_scatter(vctx *c, const hlo_op *op) {
  HLO_TRY(vcount(op, 1, 1, 1, 1));
  HLO_TRY(vall_tensors(op));
  int64_t d;
  HLO_TRY(vint(op, "scatter_dimension", true, 0, &d));
  if (d < 0 || d >= (int64_t)T(0)->rank) return verr(op, "C2", "scatter_dimension %lld is out of range", (long long)d);
  const hlo_type *e;
  HLO_TRY(vreduce_body(c, op, "C7", 0, 1, 0, &e));
  if (R(0)->rank != T(0)->rank) return verr(op, "C8", "result rank differs from operand");
  if (!R(0)->quant && !velem_eq(R(0), e)) return verr(op, "C9", "result element type differs from computation type");
  return vreplica_groups(c, op, "C3");
}

static hlo_status verify_tokens_only(const hlo_op *op, uint32_t first) {
  for (uint32_t i = first; i < op->num_operands; i++)
    if (op->operands[i]->type->kind != TYPE_TOKEN) return verr(op, "I1", "operand #%u must be a token", i);
  return NULL;
}

hlo_status verify_collective_permute(vctx *c, const hlo_op *op) {
  HLO_TRY(vcount(op, 1, 1, 1, 1));
  const hlo_attr *at = op_attr(op, "source_target_pairs");
  ilist p;
  const hlo_type *pt;
  if (!at) return verr(op, "ATTR", "missing required attribute 'source_target_pairs'");
  if (!vattr_ints(c, at, &p, &pt)) return verr(op, "ATTR", "attribute 'source_target_pairs' must be integers");
  if ((pt && (pt->rank != 2 || (pt->dims[1] != 2 && p.n))) || p.n % 2)
    return verr(op, "C1", "source_target_pairs must have shape [N, 2]");
  uint32_t np = p.n / 2;
  int64_t *src = np ? arena_calloc(&c->scratch, np, sizeof *src) : NULL;
  int64_t *dst = np ? arena_calloc(&c->scratch, np, sizeof *dst) : NULL;
  if (np && (!src || !dst)) return status_new(HLO_RESOURCE_EXHAUSTED, "out of memory");
  for (uint32_t i = 0; i < np; i++) {
    src[i] = p.v[2 * i];
    dst[i] = p.v[2 * i + 1];
  }
  int64_t k;
  if ((k = vdup(src, np)) >= 0) return verr(op, "C2", "source %lld appears twice", (long long)src[k]);
  if ((k = vdup(dst, np)) >= 0) return verr(op, "C3", "target %lld appears twice", (long long)dst[k]);
  for (uint32_t i = 0; i < p.n; i++)
    if (p.v[i] < 0) return verr(op, "C4", "source_target_pairs entry %lld is negative", (long long)p.v[i]);
  if (!vtype_eq(T(0), R(0))) return verr(op, "C5", "result type differs from operand");
  return NULL;
}

hlo_status verify_collective_broadcast(vctx *c, const hlo_op *op) {
  bool dyn_root;
  HLO_TRY(vbool(op, "has_dynamic_root", false, op->num_operands > op->num_results, &dyn_root));
  uint32_t nres = op->num_operands - (dyn_root && op->num_operands ? 1 : 0);
  HLO_TRY(vcount(op, dyn_root ? 2 : 1, -1, (int)nres, (int)nres));
  for (uint32_t i = 0; i < nres; i++)
    if (!vtype_eq(T(i), R(i))) return verr(op, dyn_root ? "C4" : "C3", "result #%u type differs from operand", i);
  (void)c;
  return NULL;
}

/* after_all, create_token, partition_id, replica_id, infeed, recv, outfeed,
 * send, cross_replica_sum: operand/result counts and where the tokens go. */
hlo_status verify_token_op(vctx *c, const hlo_op *op) {
  (void)c;
  switch (op->opcode) {
    case OP_AFTER_ALL:
      HLO_TRY(vcount(op, 0, -1, 1, 1));
      return verify_tokens_only(op, 0);
    case OP_CREATE_TOKEN: return vcount(op, 0, 0, 1, 1);
    case OP_PARTITION_ID:
    case OP_REPLICA_ID: return vcount(op, 0, 0, 1, 1);
    case OP_INFEED:
      HLO_TRY(vcount(op, 1, 1, 1, -1));
      if (R(op->num_results - 1)->kind != TYPE_TOKEN) return verr(op, "C3", "last result must be a token");
      return NULL;
    case OP_RECV:
      HLO_TRY(vcount(op, 1, 1, 1, -1));
      if (R(op->num_results - 1)->kind != TYPE_TOKEN) return verr(op, "C3", "last result must be a token");
      return NULL;
    case OP_OUTFEED:
    case OP_SEND:
      HLO_TRY(vcount(op, 1, -1, 1, 1));
      if (T(op->num_operands - 1)->kind != TYPE_TOKEN) return verr(op, "I2", "last operand must be a token");
      return NULL;
    case OP_CROSS_REPLICA_SUM: return vcount(op, 1, -1, op->num_operands, op->num_operands);
    default: return verr(op, "SIG", "not a token op");
  }
}
