/* verify_regions.c — constraint checks of the ops that carry a body region
 * or index maps: reduce, gather (and dynamic_gather), scatter, sort, map and
 * the control flow ops if, case and while, following
 * reference/stablehlo-spec.md. */
#include <stdio.h>
#include <string.h>
#include "ir/element.h"
#include "ir/verify.h"

#define T(i) (op->operands[(i)]->type)
#define R(i) (op->results[(i)].type)

/* ------------------------------------------------------------- reduce */

hlo_status verify_reduce(vctx *c, const hlo_op *op) {
  uint32_t no = op->num_operands;
  if (no == 0 || no % 2 || op->num_results != no / 2)
    return verr(op, "C3", "needs N inputs, N init_values and N results (got %u operands, %u results)", no, op->num_results);
  HLO_TRY(vall_tensors(op));
  uint32_t n = no / 2;
  const hlo_type *x = T(0);
  for (uint32_t i = 0; i < n; i++) {
    if (!vshape_eq(T(i), x)) return verr(op, "C1", "inputs must have the same shape (%s vs %s)", vtype_str(c, T(i)), vtype_str(c, x));
    if (!vis_scalar(T(n + i))) return verr(op, "I2", "init_values must be 0-dimensional, got %s", vtype_str(c, T(n + i)));
    if (!T(i)->quant && !velem_eq(T(i), T(n + i)))
      return verr(op, "C2", "input #%u element type %s differs from init value %s", i, vtype_str(c, T(i)), vtype_str(c, T(n + i)));
  }
  ilist d;
  HLO_TRY(vints(c, op, "dimensions", true, &d, NULL));
  int64_t k;
  if ((k = vout_of_range(d.v, d.n, x->rank)) >= 0)
    return verr(op, "C4", "dimension %lld is out of range for rank %u", (long long)d.v[k], x->rank);
  if ((k = vdup(d.v, d.n)) >= 0) return verr(op, "C5", "dimensions has duplicate %lld", (long long)d.v[k]);
  HLO_TRY(vreduce_body(c, op, "C6", 0, n, 0, NULL));
  for (uint32_t i = 0; i < n; i++) {
    const hlo_type *ri = R(i);
    if (ri->rank != x->rank - d.n) return verr(op, "C7", "result #%u rank is %u, expected %u", i, ri->rank, x->rank - d.n);
    uint32_t j = 0;
    for (uint32_t a = 0; a < x->rank; a++) {
      bool red = false;
      for (uint32_t b = 0; b < d.n; b++) red |= d.v[b] == (int64_t)a;
      if (red) continue;
      if (!vdim_eq(ri->dims[j], x->dims[a]))
        return verr(op, "C7", "result #%u dimension %u is %lld, expected %lld", i, j, (long long)ri->dims[j], (long long)x->dims[a]);
      j++;
    }
    const hlo_type *ei = op->regions[0].block.args[i].type;
    if (!ri->quant && !velem_eq(ri, ei))
      return verr(op, "C8", "result #%u element type %s differs from body type %s", i, vtype_str(c, ri), vtype_str(c, ei));
  }
  return NULL;
}

/* ------------------------------------------------------ gather/scatter */

/* gather, and dynamic_gather (`dynamic`: slice_sizes is operand #2, so the
 * checks that need its values are skipped). */
hlo_status verify_gather(vctx *c, const hlo_op *op, bool dynamic) {
  HLO_TRY(vcount(op, dynamic ? 3 : 2, dynamic ? 3 : 2, 1, 1));
  HLO_TRY(vall_tensors(op));
  const hlo_type *x = T(0), *si = T(1), *r = R(0);
  const hlo_attr *dn;
  HLO_TRY(vstruct(op, "dimension_numbers", "stablehlo.gather", true, &dn));
  ilist od, cs, ob, sb, sm, ss;
  int64_t ivd;
  HLO_TRY(vfield_ints(c, op, dn, "offset_dims", &od));
  HLO_TRY(vfield_ints(c, op, dn, "collapsed_slice_dims", &cs));
  HLO_TRY(vfield_ints(c, op, dn, "operand_batching_dims", &ob));
  HLO_TRY(vfield_ints(c, op, dn, "start_indices_batching_dims", &sb));
  HLO_TRY(vfield_ints(c, op, dn, "start_index_map", &sm));
  HLO_TRY(vfield_int(op, dn, "index_vector_dim", 0, &ivd));
  if (dynamic) {
    ss.v = NULL;
    ss.n = 0;
    const hlo_type *st = T(2);
    if (st->rank != 1 || !vdim_eq(st->dims[0], x->rank))
      return verr(op, "C11", "slice_sizes must be 1-D of size rank(operand) = %u", x->rank);
  } else {
    HLO_TRY(vints(c, op, "slice_sizes", true, &ss, NULL));
  }
  bool sorted;
  HLO_TRY(vbool(op, "indices_are_sorted", false, false, &sorted));
  if (!si->quant && !dtype_is_int(si->dtype)) return verr(op, "I2", "start_indices must be integers, got %s", vtype_str(c, si));
  if ((int64_t)x->rank != (int64_t)od.n + cs.n + ob.n)
    return verr(op, "C1", "operand rank %u != offset_dims (%u) + collapsed_slice_dims (%u) + operand_batching_dims (%u)", x->rank, od.n, cs.n, ob.n);
  if (ivd < 0 || ivd > (int64_t)si->rank) return verr(op, "C2", "index_vector_dim %lld is out of range", (long long)ivd);
  int64_t nidx = ivd < (int64_t)si->rank ? si->dims[ivd] : 1;
  if (!vdim_eq(nidx, sm.n)) return verr(op, "C3", "start_index_map has %u entries, expected %lld", sm.n, (long long)nidx);
  int64_t k;
  if (vdup(od.v, od.n) >= 0 || !vis_sorted(od.v, od.n)) return verr(op, "C4", "offset_dims must be sorted and unique");
  if ((k = vout_of_range(od.v, od.n, r->rank)) >= 0) return verr(op, "C5", "offset_dims entry %lld is out of range", (long long)od.v[k]);
  int64_t tmp[128];
  if (cs.n + ob.n > 128 || sm.n + ob.n > 128) return verr(op, "C6", "too many dimensions");
  if (cs.n) memcpy(tmp, cs.v, cs.n * sizeof *tmp);
  if (ob.n) memcpy(tmp + cs.n, ob.v, ob.n * sizeof *tmp);
  if (vdup(tmp, cs.n + ob.n) >= 0) return verr(op, "C6", "collapsed_slice_dims and operand_batching_dims must be unique");
  if (!vis_sorted(cs.v, cs.n)) return verr(op, "C7", "collapsed_slice_dims must be sorted");
  if ((k = vout_of_range(cs.v, cs.n, x->rank)) >= 0) return verr(op, "C8", "collapsed_slice_dims entry %lld is out of range", (long long)cs.v[k]);
  if (!vis_sorted(ob.v, ob.n)) return verr(op, "C10", "operand_batching_dims must be sorted");
  if ((k = vout_of_range(ob.v, ob.n, x->rank)) >= 0) return verr(op, "C11", "operand_batching_dims entry %lld is out of range", (long long)ob.v[k]);
  if (vdup(sb.v, sb.n) >= 0) return verr(op, "C13", "start_indices_batching_dims must be unique");
  if ((k = vout_of_range(sb.v, sb.n, si->rank)) >= 0) return verr(op, "C14", "start_indices_batching_dims entry %lld is out of range", (long long)sb.v[k]);
  for (uint32_t i = 0; i < sb.n; i++) if (sb.v[i] == ivd) return verr(op, "C15", "index_vector_dim is in start_indices_batching_dims");
  if (ob.n != sb.n) return verr(op, "C16", "operand_batching_dims and start_indices_batching_dims sizes differ");
  for (uint32_t i = 0; i < ob.n; i++)
    if (!vdim_eq(x->dims[ob.v[i]], si->dims[sb.v[i]])) return verr(op, "C17", "batching dimension sizes differ");
  if (sm.n) memcpy(tmp, sm.v, sm.n * sizeof *tmp);
  if (ob.n) memcpy(tmp + sm.n, ob.v, ob.n * sizeof *tmp);
  if (vdup(tmp, sm.n + ob.n) >= 0) return verr(op, "C18", "start_index_map and operand_batching_dims must be unique");
  if ((k = vout_of_range(sm.v, sm.n, x->rank)) >= 0) return verr(op, "C19", "start_index_map entry %lld is out of range", (long long)sm.v[k]);
  if (dynamic) {
    uint32_t bd = si->rank - (ivd < (int64_t)si->rank ? 1 : 0);
    if (r->rank != bd + od.n) return verr(op, "C13", "result rank is %u, expected %u", r->rank, bd + od.n);
    if (!velem_eq(x, r)) return verr(op, "C14", "result element type %s differs from operand %s", vtype_str(c, r), vtype_str(c, x));
    return NULL;
  }
  if (ss.n != x->rank) return verr(op, "C20", "slice_sizes has %u entries, operand rank is %u", ss.n, x->rank);
  for (uint32_t i = 0; i < ss.n; i++)
    if (ss.v[i] < 0 || (x->dims[i] != HLO_DYN && ss.v[i] > x->dims[i]))
      return verr(op, "C21", "slice_sizes[%u] = %lld is outside [0, %lld]", i, (long long)ss.v[i], (long long)x->dims[i]);
  for (uint32_t i = 0; i < cs.n; i++) if (ss.v[cs.v[i]] > 1) return verr(op, "C9", "collapsed slice size must be <= 1");
  for (uint32_t i = 0; i < ob.n; i++) if (ss.v[ob.v[i]] > 1) return verr(op, "C12", "operand batching slice size must be <= 1");
  /* C22: result shape */
  uint32_t bdims = si->rank - (ivd < (int64_t)si->rank ? 1 : 0);
  if (r->rank != bdims + od.n) return verr(op, "C22", "result rank is %u, expected %u", r->rank, bdims + od.n);
  uint32_t bi = 0, oi = 0, oidx = 0;
  for (uint32_t d = 0; d < r->rank; d++) {
    bool is_off = oidx < od.n && od.v[oidx] == (int64_t)d;
    int64_t want;
    if (is_off) {
      oidx++;
      while (oi < x->rank) {
        bool skip = false;
        for (uint32_t j = 0; j < cs.n; j++) skip |= cs.v[j] == (int64_t)oi;
        for (uint32_t j = 0; j < ob.n; j++) skip |= ob.v[j] == (int64_t)oi;
        if (!skip) break;
        oi++;
      }
      want = oi < x->rank ? ss.v[oi] : HLO_DYN;
      oi++;
    } else {
      if (bi == ivd) bi++;
      want = bi < si->rank ? si->dims[bi] : HLO_DYN;
      bi++;
    }
    if (!vdim_eq(r->dims[d], want))
      return verr(op, "C22", "result dimension %u is %lld, expected %lld", d, (long long)r->dims[d], (long long)want);
  }
  if (!velem_eq(x, r)) return verr(op, "C23", "result element type %s differs from operand %s", vtype_str(c, r), vtype_str(c, x));
  return NULL;
}

hlo_status verify_scatter(vctx *c, const hlo_op *op) {
  uint32_t no = op->num_operands;
  if (no < 3 || (no - 1) % 2 || op->num_results != (no - 1) / 2)
    return verr(op, "C5", "needs N inputs, scatter_indices, N updates and N results");
  HLO_TRY(vall_tensors(op));
  uint32_t n = (no - 1) / 2;
  const hlo_type *x = T(0), *si = T(n), *u = T(n + 1);
  const hlo_attr *dn;
  HLO_TRY(vstruct(op, "scatter_dimension_numbers", "stablehlo.scatter", true, &dn));
  ilist uw, iw, ib, sb, sd;
  int64_t ivd;
  HLO_TRY(vfield_ints(c, op, dn, "update_window_dims", &uw));
  HLO_TRY(vfield_ints(c, op, dn, "inserted_window_dims", &iw));
  HLO_TRY(vfield_ints(c, op, dn, "input_batching_dims", &ib));
  HLO_TRY(vfield_ints(c, op, dn, "scatter_indices_batching_dims", &sb));
  HLO_TRY(vfield_ints(c, op, dn, "scatter_dims_to_operand_dims", &sd));
  HLO_TRY(vfield_int(op, dn, "index_vector_dim", 0, &ivd));
  for (uint32_t i = 0; i < n; i++) {
    if (!vshape_eq(T(i), x)) return verr(op, "C1", "inputs must have the same shape");
    if (!vshape_eq(T(n + 1 + i), u)) return verr(op, "C3", "updates must have the same shape");
    if (!T(i)->quant && !velem_eq(T(n + 1 + i), T(i))) return verr(op, "C6", "update #%u element type differs from input", i);
  }
  if ((int64_t)x->rank != (int64_t)uw.n + iw.n + ib.n)
    return verr(op, "C2", "input rank %u != update_window_dims (%u) + inserted_window_dims (%u) + input_batching_dims (%u)", x->rank, uw.n, iw.n, ib.n);
  int64_t k;
  if (vdup(uw.v, uw.n) >= 0 || !vis_sorted(uw.v, uw.n)) return verr(op, "C7", "update_window_dims must be sorted and unique");
  if ((k = vout_of_range(uw.v, uw.n, u->rank)) >= 0) return verr(op, "C8", "update_window_dims entry %lld is out of range", (long long)uw.v[k]);
  int64_t tmp[128];
  if (iw.n + ib.n > 128 || sd.n + ib.n > 128) return verr(op, "C9", "too many dimensions");
  if (iw.n) memcpy(tmp, iw.v, iw.n * sizeof *tmp);
  if (ib.n) memcpy(tmp + iw.n, ib.v, ib.n * sizeof *tmp);
  if (vdup(tmp, iw.n + ib.n) >= 0) return verr(op, "C9", "inserted_window_dims and input_batching_dims must be unique");
  if (!vis_sorted(iw.v, iw.n)) return verr(op, "C10", "inserted_window_dims must be sorted");
  if ((k = vout_of_range(iw.v, iw.n, x->rank)) >= 0) return verr(op, "C11", "inserted_window_dims entry %lld is out of range", (long long)iw.v[k]);
  if (!vis_sorted(ib.v, ib.n)) return verr(op, "C12", "input_batching_dims must be sorted");
  if ((k = vout_of_range(ib.v, ib.n, x->rank)) >= 0) return verr(op, "C13", "input_batching_dims entry %lld is out of range", (long long)ib.v[k]);
  if (vdup(sb.v, sb.n) >= 0) return verr(op, "C14", "scatter_indices_batching_dims must be unique");
  if ((k = vout_of_range(sb.v, sb.n, si->rank)) >= 0) return verr(op, "C15", "scatter_indices_batching_dims entry %lld is out of range", (long long)sb.v[k]);
  for (uint32_t i = 0; i < sb.n; i++) if (sb.v[i] == ivd) return verr(op, "C16", "index_vector_dim is in scatter_indices_batching_dims");
  if (ib.n != sb.n) return verr(op, "C17", "input_batching_dims and scatter_indices_batching_dims sizes differ");
  for (uint32_t i = 0; i < ib.n; i++)
    if (!vdim_eq(x->dims[ib.v[i]], si->dims[sb.v[i]])) return verr(op, "C18", "batching dimension sizes differ");
  if (ivd < 0 || ivd > (int64_t)si->rank) return verr(op, "C22", "index_vector_dim %lld is out of range", (long long)ivd);
  int64_t nidx = ivd < (int64_t)si->rank ? si->dims[ivd] : 1;
  if (!vdim_eq(nidx, sd.n)) return verr(op, "C19", "scatter_dims_to_operand_dims has %u entries, expected %lld", sd.n, (long long)nidx);
  if (sd.n) memcpy(tmp, sd.v, sd.n * sizeof *tmp);
  if (ib.n) memcpy(tmp + sd.n, ib.v, ib.n * sizeof *tmp);
  if (vdup(tmp, sd.n + ib.n) >= 0) return verr(op, "C20", "scatter_dims_to_operand_dims and input_batching_dims must be unique");
  if ((k = vout_of_range(sd.v, sd.n, x->rank)) >= 0) return verr(op, "C21", "scatter_dims_to_operand_dims entry %lld is out of range", (long long)sd.v[k]);
  /* C4: update shape */
  uint32_t sdims = si->rank - (ivd < (int64_t)si->rank ? 1 : 0);
  if (u->rank != sdims + uw.n) return verr(op, "C4", "updates rank is %u, expected %u", u->rank, sdims + uw.n);
  uint32_t bi = 0, oi = 0, widx = 0;
  for (uint32_t d = 0; d < u->rank; d++) {
    bool is_win = widx < uw.n && uw.v[widx] == (int64_t)d;
    if (is_win) {
      widx++;
      while (oi < x->rank) {
        bool skip = false;
        for (uint32_t j = 0; j < iw.n; j++) skip |= iw.v[j] == (int64_t)oi;
        for (uint32_t j = 0; j < ib.n; j++) skip |= ib.v[j] == (int64_t)oi;
        if (!skip) break;
        oi++;
      }
      if (oi < x->rank && u->dims[d] != HLO_DYN && x->dims[oi] != HLO_DYN && u->dims[d] > x->dims[oi])
        return verr(op, "C4", "updates dimension %u (%lld) exceeds input dimension %u (%lld)", d, (long long)u->dims[d], oi, (long long)x->dims[oi]);
      oi++;
    } else {
      if (bi == ivd) bi++;
      int64_t want = bi < si->rank ? si->dims[bi] : HLO_DYN;
      bi++;
      if (!vdim_eq(u->dims[d], want))
        return verr(op, "C4", "updates dimension %u is %lld, expected %lld", d, (long long)u->dims[d], (long long)want);
    }
  }
  if (n > 64) return verr(op, "C5", "too many inputs");
  const hlo_type *e[64];
  HLO_TRY(vreduce_body(c, op, "C23", 0, n, 0, e));
  for (uint32_t i = 0; i < n; i++) {
    if (!vshape_eq(R(i), T(i))) return verr(op, "C24", "result #%u shape differs from input", i);
    if (!R(i)->quant && !velem_eq(R(i), e[i])) return verr(op, "C25", "result #%u element type differs from body type", i);
  }
  return NULL;
}

/* -------------------------------------------------- sort, map, control */

hlo_status verify_sort(vctx *c, const hlo_op *op) {
  if (op->num_operands == 0) return verr(op, "C1", "needs at least one input");
  HLO_TRY(vcount(op, 1, -1, op->num_operands, op->num_operands));
  HLO_TRY(vall_tensors(op));
  uint32_t n = op->num_operands;
  for (uint32_t i = 0; i < n; i++) {
    if (!vtype_eq(T(i), R(i))) return verr(op, "C2", "result #%u type differs from input", i);
    if (!vshape_eq(T(i), T(0))) return verr(op, "C3", "inputs must have the same shape");
  }
  int64_t dim, rk = T(0)->rank;
  bool stable;
  HLO_TRY(vint(op, "dimension", false, -1, &dim));
  HLO_TRY(vbool(op, "is_stable", false, false, &stable));
  if (dim < -rk || dim >= rk) return verr(op, "C4", "dimension %lld is out of range for rank %lld", (long long)dim, (long long)rk);
  const hlo_op *ret;
  HLO_TRY(vregion_sig(c, op, "C5", 0, "comparator", 2 * n, NULL, &ret));
  const hlo_block *b = &op->regions[0].block;
  for (uint32_t i = 0; i < 2 * n; i++)
    if (!T(i / 2)->quant && !velem_eq(b->args[i].type, T(i / 2)))
      return verr(op, "C5", "comparator argument #%u has type %s, expected element type of %s", i,
                  vtype_str(c, b->args[i].type), vtype_str(c, T(i / 2)));
  if (ret->num_operands != 1 || !vis_scalar(ret->operands[0]->type) || ret->operands[0]->type->dtype != HLO_I1)
    return verr(op, "C5", "comparator must return tensor<i1>");
  return NULL;
}

hlo_status verify_map(vctx *c, const hlo_op *op) {
  if (op->num_operands == 0) return verr(op, "C2", "needs at least one input");
  HLO_TRY(vcount(op, 1, -1, 1, 1));
  HLO_TRY(vall_tensors(op));
  uint32_t n = op->num_operands;
  for (uint32_t i = 0; i < n; i++)
    if (!vshape_eq(T(i), R(0))) return verr(op, "C1", "input #%u shape differs from result", i);
  ilist d;
  HLO_TRY(vints(c, op, "dimensions", true, &d, NULL));
  if (d.n != T(0)->rank) return verr(op, "C3", "dimensions must be range(%u)", T(0)->rank);
  for (uint32_t i = 0; i < d.n; i++) if (d.v[i] != (int64_t)i) return verr(op, "C3", "dimensions must be range(%u)", T(0)->rank);
  const hlo_op *ret;
  HLO_TRY(vregion_sig(c, op, "C4", 0, "computation", n, NULL, &ret));
  const hlo_block *b = &op->regions[0].block;
  for (uint32_t i = 0; i < n; i++)
    if (!T(i)->quant && !velem_eq(b->args[i].type, T(i))) return verr(op, "C4", "computation argument #%u has the wrong element type", i);
  if (ret->num_operands != 1 || !vis_scalar(ret->operands[0]->type) ||
      (!R(0)->quant && !velem_eq(ret->operands[0]->type, R(0))))
    return verr(op, "C4", "computation must return tensor<E'> with E' the result element type");
  return NULL;
}

/* Region `ridx` takes no arguments and returns values of `op`'s result types. */
static hlo_status vbranch(vctx *c, const hlo_op *op, uint32_t ridx, const char *cid_in,
                          const char *cid_out, const char *what) {
  const hlo_block *b = &op->regions[ridx].block;
  if (b->num_args) return verr(op, cid_in, "%s must take no arguments", what);
  const hlo_op *ret = b->last;
  if (!ret || ret->opcode != OP_RETURN) return verr(op, "SIG", "%s must end with stablehlo.return", what);
  if (ret->num_operands != op->num_results)
    return verr(op, cid_out, "%s returns %u value(s), op has %u result(s)", what, ret->num_operands, op->num_results);
  for (uint32_t i = 0; i < op->num_results; i++)
    if (!vtype_eq(ret->operands[i]->type, R(i)))
      return verr(op, cid_out, "%s returns %s for result #%u of type %s", what,
                  vtype_str(c, ret->operands[i]->type), i, vtype_str(c, R(i)));
  return NULL;
}

hlo_status verify_if(vctx *c, const hlo_op *op) {
  HLO_TRY(vcount(op, 1, 1, 0, -1));
  if (op->num_regions != 2) return verr(op, "SIG", "needs 2 regions, has %u", op->num_regions);
  const hlo_type *p = T(0);
  if (!vis_scalar(p) || p->dtype != HLO_I1) return verr(op, "I1", "pred must be tensor<i1>, got %s", vtype_str(c, p));
  HLO_TRY(vbranch(c, op, 0, "C1", "C3", "true_branch"));
  HLO_TRY(vbranch(c, op, 1, "C1", "C2", "false_branch"));
  return NULL;
}

hlo_status verify_case(vctx *c, const hlo_op *op) {
  HLO_TRY(vcount(op, 1, 1, 0, -1));
  if (op->num_regions == 0) return verr(op, "C1", "needs at least one branch");
  const hlo_type *p = T(0);
  if (!vis_scalar(p) || p->dtype != HLO_I32) return verr(op, "I1", "index must be tensor<i32>, got %s", vtype_str(c, p));
  for (uint32_t i = 0; i < op->num_regions; i++) HLO_TRY(vbranch(c, op, i, "C2", i ? "C3" : "C4", "branch"));
  return NULL;
}

hlo_status verify_while(vctx *c, const hlo_op *op) {
  uint32_t n = op->num_operands;
  HLO_TRY(vcount(op, 0, -1, (int)n, (int)n));
  if (op->num_regions != 2) return verr(op, "SIG", "needs 2 regions, has %u", op->num_regions);
  for (uint32_t i = 0; i < n; i++)
    if (!vtype_eq(T(i), R(i))) return verr(op, "C3", "result #%u type %s differs from operand %s", i, vtype_str(c, R(i)), vtype_str(c, T(i)));
  hlo_type **types = NULL;
  if (n) {
    types = arena_calloc(&c->scratch, n, sizeof *types);
    if (!types) return status_new(HLO_RESOURCE_EXHAUSTED, "out of memory");
    for (uint32_t i = 0; i < n; i++) types[i] = op->operands[i]->type;
  }
  const hlo_op *ret;
  HLO_TRY(vregion_sig(c, op, "C1", 0, "cond", n, types, &ret));
  if (ret->num_operands != 1 || !vis_scalar(ret->operands[0]->type) || ret->operands[0]->type->dtype != HLO_I1)
    return verr(op, "C1", "cond must return tensor<i1>");
  HLO_TRY(vregion_sig(c, op, "C2", 1, "body", n, types, &ret));
  if (ret->num_operands != n) return verr(op, "C2", "body returns %u value(s), expected %u", ret->num_operands, n);
  for (uint32_t i = 0; i < n; i++)
    if (!vtype_eq(ret->operands[i]->type, T(i)))
      return verr(op, "C2", "body returns %s for operand #%u of type %s", vtype_str(c, ret->operands[i]->type), i, vtype_str(c, T(i)));
  return NULL;
}
