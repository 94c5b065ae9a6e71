/* verify_ops2.c — constraint checks of the ops with dimension numbers,
 * windows or regions: dot_general, convolution, reduce, reduce_window,
 * select_and_scatter, gather, scatter, sort, map, while, if, case,
 * custom_call, the linear-algebra ops, fft, rng, the collectives and the
 * token ops, following reference/stablehlo-spec.md. Ops without a detailed
 * check here get their signature (operand/result counts) checked. */
#include <stdio.h>
#include <string.h>
#include "ir/element.h"
#include "ir/verify.h"

#define T(i) (op->operands[(i)]->type)
#define R(i) (op->results[(i)].type)

/* precision_config: an array of 0 or 2 enums DEFAULT/HIGH/HIGHEST; *all_default
 * tells whether every entry is DEFAULT. */
static hlo_status vprecision(const hlo_op *op, const char *cid, bool *all_default) {
  const hlo_attr *pc = op_attr(op, "precision_config");
  *all_default = true;
  if (!pc) return NULL;
  if (pc->kind != ATTR_ARRAY) return verr(op, "ATTR", "attribute 'precision_config' must be an array of enums");
  if (pc->u.arr.n != 0 && pc->u.arr.n != 2)
    return verr(op, cid, "precision_config must have 2 entries, has %u", pc->u.arr.n);
  for (uint32_t i = 0; i < pc->u.arr.n; i++) {
    const hlo_attr *e = pc->u.arr.items[i];
    if (!e || e->kind != ATTR_ENUM || !e->u.en.value)
      return verr(op, "ATTR", "precision_config entries must be enums");
    const char *v = e->u.en.value;
    if (strcmp(v, "DEFAULT") && strcmp(v, "HIGH") && strcmp(v, "HIGHEST"))
      return verr(op, "ATTR", "unknown precision '%s'", v);
    if (strcmp(v, "DEFAULT")) *all_default = false;
  }
  return NULL;
}

/* ------------------------------------------------------------ dot_general */

static hlo_status verify_dot_general(vctx *c, const hlo_op *op) {
  HLO_TRY(vcount(op, 2, 2, 1, 1));
  HLO_TRY(vall_tensors(op));
  const hlo_type *l = T(0), *rh = T(1), *r = R(0);
  const hlo_attr *dn;
  HLO_TRY(vstruct(op, "dot_dimension_numbers", "stablehlo.dot", true, &dn));
  ilist lb, rb, lc, rc;
  HLO_TRY(vfield_ints(c, op, dn, "lhs_batching_dimensions", &lb));
  HLO_TRY(vfield_ints(c, op, dn, "rhs_batching_dimensions", &rb));
  HLO_TRY(vfield_ints(c, op, dn, "lhs_contracting_dimensions", &lc));
  HLO_TRY(vfield_ints(c, op, dn, "rhs_contracting_dimensions", &rc));
  if (lb.n != rb.n) return verr(op, "C1", "lhs and rhs batching dimension counts differ (%u vs %u)", lb.n, rb.n);
  if (lc.n != rc.n) return verr(op, "C2", "lhs and rhs contracting dimension counts differ (%u vs %u)", lc.n, rc.n);
  int64_t k;
  if ((k = vout_of_range(lb.v, lb.n, l->rank)) >= 0)
    return verr(op, "C5", "lhs batching dimension %lld is out of range for rank %u", (long long)lb.v[k], l->rank);
  if ((k = vout_of_range(lc.v, lc.n, l->rank)) >= 0)
    return verr(op, "C6", "lhs contracting dimension %lld is out of range for rank %u", (long long)lc.v[k], l->rank);
  if ((k = vout_of_range(rb.v, rb.n, rh->rank)) >= 0)
    return verr(op, "C7", "rhs batching dimension %lld is out of range for rank %u", (long long)rb.v[k], rh->rank);
  if ((k = vout_of_range(rc.v, rc.n, rh->rank)) >= 0)
    return verr(op, "C8", "rhs contracting dimension %lld is out of range for rank %u", (long long)rc.v[k], rh->rank);
  bool lused[64] = {0}, rused[64] = {0};
  if (l->rank > 64 || rh->rank > 64) return verr(op, "C12", "rank above 64 is not supported");
  for (uint32_t i = 0; i < lb.n + lc.n; i++) {
    int64_t d = i < lb.n ? lb.v[i] : lc.v[i - lb.n];
    if (lused[d]) return verr(op, "C3", "lhs dimension %lld is used twice", (long long)d);
    lused[d] = true;
  }
  for (uint32_t i = 0; i < rb.n + rc.n; i++) {
    int64_t d = i < rb.n ? rb.v[i] : rc.v[i - rb.n];
    if (rused[d]) return verr(op, "C4", "rhs dimension %lld is used twice", (long long)d);
    rused[d] = true;
  }
  for (uint32_t i = 0; i < lb.n; i++)
    if (!vdim_eq(l->dims[lb.v[i]], rh->dims[rb.v[i]]))
      return verr(op, "C9", "batching dimension sizes differ (lhs %lld vs rhs %lld)",
                  (long long)l->dims[lb.v[i]], (long long)rh->dims[rb.v[i]]);
  for (uint32_t i = 0; i < lc.n; i++)
    if (!vdim_eq(l->dims[lc.v[i]], rh->dims[rc.v[i]]))
      return verr(op, "C10", "contracting dimension sizes differ (lhs %lld vs rhs %lld)",
                  (long long)l->dims[lc.v[i]], (long long)rh->dims[rc.v[i]]);
  bool all_default;
  HLO_TRY(vprecision(op, "C11", &all_default));
  const hlo_attr *alg = op_attr(op, "algorithm");
  if (alg) {
    if (alg->kind != ATTR_STRUCT) return verr(op, "ATTR", "attribute 'algorithm' must be #stablehlo.dot_algorithm<...>");
    if (!all_default) return verr(op, "C21", "precision_config must be DEFAULT when an algorithm is given");
    static const char *const f[3] = {"lhs_component_count", "rhs_component_count", "num_primitive_operations"};
    static const char *const ids[3] = {"C22", "C23", "C24"};
    for (int i = 0; i < 3; i++) {
      int64_t v;
      HLO_TRY(vfield_int(op, alg, f[i], 1, &v));
      if (v <= 0) return verr(op, ids[i], "%s must be positive, is %lld", f[i], (long long)v);
    }
  }
  uint32_t want_rank = lb.n + (l->rank - lb.n - lc.n) + (rh->rank - rb.n - rc.n);
  if (r->rank != want_rank)
    return verr(op, "C12", "result rank is %u, expected %u", r->rank, want_rank);
  uint32_t j = 0;
  for (uint32_t i = 0; i < lb.n; i++, j++)
    if (!vdim_eq(r->dims[j], l->dims[lb.v[i]]))
      return verr(op, "C12", "result dimension %u is %lld, expected %lld", j, (long long)r->dims[j], (long long)l->dims[lb.v[i]]);
  for (uint32_t d = 0; d < l->rank; d++)
    if (!lused[d]) {
      if (!vdim_eq(r->dims[j], l->dims[d]))
        return verr(op, "C12", "result dimension %u is %lld, expected %lld", j, (long long)r->dims[j], (long long)l->dims[d]);
      j++;
    }
  for (uint32_t d = 0; d < rh->rank; d++)
    if (!rused[d]) {
      if (!vdim_eq(r->dims[j], rh->dims[d]))
        return verr(op, "C12", "result dimension %u is %lld, expected %lld", j, (long long)r->dims[j], (long long)rh->dims[d]);
      j++;
    }
  if (!l->quant && !rh->quant && !velem_eq(l, rh))
    return verr(op, "C13", "lhs and rhs element types differ (%s vs %s)", vtype_str(c, l), vtype_str(c, rh));
  return NULL;
}

static hlo_status verify_dot(vctx *c, const hlo_op *op) {
  HLO_TRY(vcount(op, 2, 2, 1, 1));
  HLO_TRY(vall_tensors(op));
  const hlo_type *l = T(0), *rh = T(1);
  if (l->rank < 1 || l->rank > 2 || rh->rank < 1 || rh->rank > 2)
    return verr(op, "C1", "operands must have rank 1 or 2 (%s, %s)", vtype_str(c, l), vtype_str(c, rh));
  if (!vdim_eq(l->dims[l->rank - 1], rh->dims[0]))
    return verr(op, "C2", "contracting dimension sizes differ (%lld vs %lld)",
                (long long)l->dims[l->rank - 1], (long long)rh->dims[0]);
  return NULL;
}

/* ------------------------------------------------------------ windows */

/* num_windows of the spec for one dimension; HLO_DYN when unknown. */
static int64_t num_windows(int64_t in, int64_t base_dil, int64_t pad_lo, int64_t pad_hi,
                           int64_t win, int64_t win_dil, int64_t stride) {
  if (in == HLO_DYN || win == HLO_DYN) return HLO_DYN;
  __int128 dil_in = in == 0 ? 0 : (__int128)(in - 1) * base_dil + 1;
  __int128 padded = pad_lo + dil_in + pad_hi;
  __int128 dil_win = win == 0 ? 0 : (__int128)(win - 1) * win_dil + 1;
  if (padded <= 0 || dil_win > padded) return 0;
  __int128 n = (padded - dil_win) / stride + 1;
  return n > INT64_MAX ? HLO_DYN : (int64_t)n;
}

/* `padding` attribute: N x 2 integers (absent: zeros). */
static hlo_status vpadding(vctx *c, const hlo_op *op, uint32_t n, const char *cid, ilist *out) {
  const hlo_attr *at = op_attr(op, "padding");
  out->v = NULL;
  out->n = 0;
  if (!at) return NULL;
  const hlo_type *dt;
  if (!vattr_ints(c, at, out, &dt)) return verr(op, "ATTR", "attribute 'padding' must be integers");
  if (out->n != 2 * n || (dt && (dt->rank != 2 || dt->dims[1] != 2)))
    return verr(op, cid, "padding must have shape [%u, 2]", n);
  return NULL;
}

/* Optional window list attribute of n positive entries (absent: all 1). */
static hlo_status vwin_list(vctx *c, const hlo_op *op, const char *name, uint32_t n,
                            const char *cid_size, const char *cid_pos, bool required, ilist *out) {
  bool present;
  HLO_TRY(vints(c, op, name, required, out, &present));
  if (!present) return NULL;
  if (out->n != n) return verr(op, cid_size, "%s must have %u entries, has %u", name, n, out->n);
  for (uint32_t i = 0; i < n; i++)
    if (out->v[i] <= 0)
      return verr(op, cid_pos, "%s[%u] = %lld must be positive", name, i, (long long)out->v[i]);
  return NULL;
}

#define LV(l, i) ((l).n ? (l).v[(i)] : 1)

static hlo_status verify_reduce_window(vctx *c, const hlo_op *op) {
  uint32_t no = op->num_operands;
  if (no == 0 || no % 2 || op->num_results != no / 2)
    return verr(op, "C1", "needs N inputs, N init_values and N results (got %u operands, %u results)", no, op->num_results);
  HLO_TRY(vall_tensors(op));
  uint32_t n = no / 2, rank = T(0)->rank;
  for (uint32_t i = 0; i < n; i++) {
    if (!vshape_eq(T(i), T(0))) return verr(op, "C2", "inputs must have the same shape");
    if (!vis_scalar(T(n + i))) return verr(op, "I2", "init_values must be 0-dimensional");
    if (!T(i)->quant && !velem_eq(T(i), T(n + i)))
      return verr(op, "C3", "input #%u element type %s differs from init value %s", i, vtype_str(c, T(i)), vtype_str(c, T(n + i)));
  }
  ilist wd, ws, bd, wdl, pad;
  HLO_TRY(vwin_list(c, op, "window_dimensions", rank, "C4", "C5", true, &wd));
  HLO_TRY(vwin_list(c, op, "window_strides", rank, "C6", "C7", false, &ws));
  HLO_TRY(vwin_list(c, op, "base_dilations", rank, "C8", "C9", false, &bd));
  HLO_TRY(vwin_list(c, op, "window_dilations", rank, "C10", "C11", false, &wdl));
  HLO_TRY(vpadding(c, op, rank, "C12", &pad));
  HLO_TRY(vreduce_body(c, op, "C13", 0, n, 0, NULL));
  for (uint32_t i = 0; i < n; i++) {
    const hlo_type *ri = R(i);
    if (!vshape_eq(ri, R(0))) return verr(op, "C14", "results must have the same shape");
    if (ri->rank != rank) return verr(op, "C15", "result rank %u differs from input rank %u", ri->rank, rank);
    const hlo_type *ei = op->regions[0].block.args[i].type;
    if (!ri->quant && !velem_eq(ri, ei))
      return verr(op, "C16", "result #%u element type %s differs from body type %s", i, vtype_str(c, ri), vtype_str(c, ei));
  }
  const hlo_type *x = T(0);
  for (uint32_t d = 0; d < rank; d++) {
    int64_t want = num_windows(x->dims[d], LV(bd, d), pad.n ? pad.v[2 * d] : 0,
                               pad.n ? pad.v[2 * d + 1] : 0, wd.v[d], LV(wdl, d), LV(ws, d));
    if (!vdim_eq(R(0)->dims[d], want))
      return verr(op, "C15", "result dimension %u is %lld, expected %lld windows", d,
                  (long long)R(0)->dims[d], (long long)want);
  }
  return NULL;
}

static hlo_status verify_select_and_scatter(vctx *c, const hlo_op *op) {
  HLO_TRY(vcount(op, 3, 3, 1, 1));
  HLO_TRY(vall_tensors(op));
  const hlo_type *x = T(0), *src = T(1), *init = T(2), *r = R(0);
  uint32_t rank = x->rank;
  if (!x->quant && !velem_eq(x, src)) return verr(op, "C1", "operand and source element types differ");
  if (!vis_scalar(init) || (!x->quant && !velem_eq(init, x)))
    return verr(op, "C3", "init_value must be a 0-dimensional tensor of the operand's element type");
  ilist wd, ws, pad;
  HLO_TRY(vwin_list(c, op, "window_dimensions", rank, "C4", "C5", false, &wd));
  HLO_TRY(vwin_list(c, op, "window_strides", rank, "C6", "C7", false, &ws));
  HLO_TRY(vpadding(c, op, rank, "C8", &pad));
  if (src->rank != rank) return verr(op, "C2", "source rank %u differs from operand rank %u", src->rank, rank);
  for (uint32_t d = 0; d < rank; d++) {
    int64_t want = num_windows(x->dims[d], 1, pad.n ? pad.v[2 * d] : 0, pad.n ? pad.v[2 * d + 1] : 0,
                               LV(wd, d), 1, LV(ws, d));
    if (!vdim_eq(src->dims[d], want))
      return verr(op, "C2", "source dimension %u is %lld, expected %lld windows", d,
                  (long long)src->dims[d], (long long)want);
  }
  const hlo_op *ret;
  HLO_TRY(vregion_sig(c, op, "C9", 0, "select", 2, NULL, &ret));
  const hlo_block *sb = &op->regions[0].block;
  for (uint32_t i = 0; i < 2; i++)
    if (!x->quant && !velem_eq(sb->args[i].type, x))
      return verr(op, "C9", "select must take (tensor<E>, tensor<E>) with E the operand's element type");
  if (ret->num_operands != 1 || !vis_scalar(ret->operands[0]->type) ||
      ret->operands[0]->type->dtype != HLO_I1)
    return verr(op, "C9", "select must return tensor<i1>");
  const hlo_type *e;
  HLO_TRY(vreduce_body(c, op, "C10", 1, 1, 0, &e));
  if (!vshape_eq(x, r)) return verr(op, "C11", "result shape %s differs from operand %s", vtype_str(c, r), vtype_str(c, x));
  if (!r->quant && !velem_eq(r, e)) return verr(op, "C12", "result element type differs from scatter body type");
  return NULL;
}

/* convolution, and dynamic_conv (`dynamic`: padding is operand #2, so the
 * spatial result sizes are not checked). */
static hlo_status verify_convolution(vctx *c, const hlo_op *op, bool dynamic) {
  HLO_TRY(vcount(op, dynamic ? 3 : 2, dynamic ? 3 : 2, 1, 1));
  HLO_TRY(vall_tensors(op));
  const hlo_type *l = T(0), *k = T(1), *r = R(0);
  if (l->rank != k->rank) return verr(op, "C1", "lhs rank %u differs from rhs rank %u", l->rank, k->rank);
  uint32_t N = l->rank;
  if (N < 2) return verr(op, "C1", "operands must have rank >= 2");
  uint32_t S = N - 2;
  ilist ws = {NULL, 0}, ld = {NULL, 0}, rd = {NULL, 0}, pad;
  /* dynamic_conv: the corpus holds programs whose window attributes do not
   * have N - 2 entries (testdata/dynamic/conv_general_dilated_1d_stride_2_
   * even_dynamic.mlir); the reference accepts them, so they are not checked */
  if (!dynamic) HLO_TRY(vwin_list(c, op, "window_strides", S, "C2", "C3", false, &ws));
  if (dynamic) {
    const hlo_type *pt = T(2);
    pad.v = NULL;
    pad.n = 0;
    if (pt->rank != 2 || !vdim_eq(pt->dims[0], S) || !vdim_eq(pt->dims[1], 2))
      return verr(op, "C4", "padding must have shape [%u, 2], got %s", S, vtype_str(c, pt));
  } else {
    HLO_TRY(vpadding(c, op, S, "C4", &pad));
  }
  if (!dynamic) {
    HLO_TRY(vwin_list(c, op, "lhs_dilation", S, "C5", "C6", false, &ld));
    HLO_TRY(vwin_list(c, op, "rhs_dilation", S, "C7", "C8", false, &rd));
  }
  const hlo_attr *wr = dynamic ? NULL : op_attr(op, "window_reversal");
  if (wr) {
    ilist w;
    if (!vattr_ints(c, wr, &w, NULL)) return verr(op, "ATTR", "window_reversal must be a bool array");
    if (w.n != S) return verr(op, "C9", "window_reversal must have %u entries", S);
  }
  const hlo_attr *dn;
  HLO_TRY(vstruct(op, "dimension_numbers", "stablehlo.conv", true, &dn));
  int64_t ib, iff, kif, kof, ob, of, fgc, bgc;
  ilist is, ks, os;
  HLO_TRY(vfield_int(op, dn, "input_batch_dimension", 0, &ib));
  HLO_TRY(vfield_int(op, dn, "input_feature_dimension", 0, &iff));
  HLO_TRY(vfield_ints(c, op, dn, "input_spatial_dimensions", &is));
  HLO_TRY(vfield_int(op, dn, "kernel_input_feature_dimension", 0, &kif));
  HLO_TRY(vfield_int(op, dn, "kernel_output_feature_dimension", 0, &kof));
  HLO_TRY(vfield_ints(c, op, dn, "kernel_spatial_dimensions", &ks));
  HLO_TRY(vfield_int(op, dn, "output_batch_dimension", 0, &ob));
  HLO_TRY(vfield_int(op, dn, "output_feature_dimension", 0, &of));
  HLO_TRY(vfield_ints(c, op, dn, "output_spatial_dimensions", &os));
  HLO_TRY(vint(op, "feature_group_count", false, 1, &fgc));
  HLO_TRY(vint(op, "batch_group_count", false, 1, &bgc));
  if (is.n != S) return verr(op, "C12", "input_spatial_dimensions must have %u entries", S);
  if (ks.n != S) return verr(op, "C17", "kernel_spatial_dimensions must have %u entries", S);
  if (os.n != S) return verr(op, "C19", "output_spatial_dimensions must have %u entries", S);
  int64_t all[3][66];
  for (uint32_t i = 0; i < S && i < 64; i++) {
    all[0][i + 1] = is.v[i];
    all[1][i] = ks.v[i];
    all[2][i + 1] = os.v[i];
  }
  if (N > 64) return verr(op, "C1", "rank above 64 is not supported");
  all[0][0] = ib; all[0][S + 1] = iff;
  all[1][S] = kif; all[1][S + 1] = kof;
  all[2][0] = ob; all[2][S + 1] = of;
  static const char *const cids[3] = {"C13", "C18", "C20"};
  static const char *const names[3] = {"input", "kernel", "output"};
  for (int g = 0; g < 3; g++) {
    int64_t j;
    if ((j = vout_of_range(all[g], N, N)) >= 0)
      return verr(op, cids[g], "%s dimension %lld is out of range for rank %u", names[g], (long long)all[g][j], N);
    if ((j = vdup(all[g], N)) >= 0)
      return verr(op, cids[g], "%s dimension %lld is used twice", names[g], (long long)all[g][j]);
  }
  if (fgc <= 0) return verr(op, "C21", "feature_group_count must be positive, is %lld", (long long)fgc);
  if (bgc <= 0) return verr(op, "C22", "batch_group_count must be positive, is %lld", (long long)bgc);
  if (fgc != 1 && bgc != 1) return verr(op, "C23", "feature_group_count or batch_group_count must be 1");
  int64_t lb = l->dims[ib], lf = l->dims[iff], ki = k->dims[kif], ko = k->dims[kof];
  if (lb != HLO_DYN && lb % bgc) return verr(op, "C10", "input batch size %lld is not divisible by batch_group_count %lld", (long long)lb, (long long)bgc);
  if (lf != HLO_DYN && lf % fgc) return verr(op, "C11", "input feature size %lld is not divisible by feature_group_count %lld", (long long)lf, (long long)fgc);
  if (lf != HLO_DYN && !vdim_eq(ki, lf / fgc))
    return verr(op, "C14", "kernel input feature size %lld must be %lld", (long long)ki, (long long)(lf / fgc));
  if (ko != HLO_DYN && ko % bgc) return verr(op, "C15", "kernel output feature size %lld is not divisible by batch_group_count", (long long)ko);
  if (ko != HLO_DYN && ko % fgc) return verr(op, "C16", "kernel output feature size %lld is not divisible by feature_group_count", (long long)ko);
  bool all_default;
  HLO_TRY(vprecision(op, "C24", &all_default));
  if (r->rank != N) return verr(op, "C26", "result rank %u differs from %u", r->rank, N);
  if (!vdim_eq(r->dims[ob], lb == HLO_DYN ? HLO_DYN : lb / bgc))
    return verr(op, "C25", "result batch dimension is %lld, expected %lld", (long long)r->dims[ob], (long long)(lb / bgc));
  if (!vdim_eq(r->dims[of], ko))
    return verr(op, "C25", "result feature dimension is %lld, expected %lld", (long long)r->dims[of], (long long)ko);
  for (uint32_t i = 0; i < S && !dynamic; i++) {
    int64_t want = num_windows(l->dims[is.v[i]], LV(ld, i), pad.n ? pad.v[2 * i] : 0,
                               pad.n ? pad.v[2 * i + 1] : 0, k->dims[ks.v[i]], LV(rd, i), LV(ws, i));
    if (!vdim_eq(r->dims[os.v[i]], want))
      return verr(op, "C25", "result spatial dimension %lld is %lld, expected %lld", (long long)os.v[i],
                  (long long)r->dims[os.v[i]], (long long)want);
  }
  if (!l->quant && !k->quant && !r->quant && !velem_eq(l, k))
    return verr(op, "C27", "lhs and rhs element types differ (%s vs %s)", vtype_str(c, l), vtype_str(c, k));
  return NULL;
}

/* ------------------------------------------------------------- reduce */

static hlo_status verify_reduce(vctx *c, const hlo_op *op) {
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
static hlo_status verify_gather(vctx *c, const hlo_op *op, bool dynamic) {
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

static hlo_status verify_scatter(vctx *c, const hlo_op *op) {
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

static hlo_status verify_sort(vctx *c, const hlo_op *op) {
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

static hlo_status verify_map(vctx *c, const hlo_op *op) {
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

static hlo_status verify_if(vctx *c, const hlo_op *op) {
  HLO_TRY(vcount(op, 1, 1, 0, -1));
  if (op->num_regions != 2) return verr(op, "SIG", "needs 2 regions, has %u", op->num_regions);
  const hlo_type *p = T(0);
  if (!vis_scalar(p) || p->dtype != HLO_I1) return verr(op, "I1", "pred must be tensor<i1>, got %s", vtype_str(c, p));
  HLO_TRY(vbranch(c, op, 0, "C1", "C3", "true_branch"));
  HLO_TRY(vbranch(c, op, 1, "C1", "C2", "false_branch"));
  return NULL;
}

static hlo_status verify_case(vctx *c, const hlo_op *op) {
  HLO_TRY(vcount(op, 1, 1, 0, -1));
  if (op->num_regions == 0) return verr(op, "C1", "needs at least one branch");
  const hlo_type *p = T(0);
  if (!vis_scalar(p) || p->dtype != HLO_I32) return verr(op, "I1", "index must be tensor<i32>, got %s", vtype_str(c, p));
  for (uint32_t i = 0; i < op->num_regions; i++) HLO_TRY(vbranch(c, op, i, "C2", i ? "C3" : "C4", "branch"));
  return NULL;
}

static hlo_status verify_while(vctx *c, const hlo_op *op) {
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

/* ----------------------------------------------------------- linalg */

static hlo_status verify_triangular_solve(vctx *c, const hlo_op *op) {
  HLO_TRY(vcount(op, 2, 2, 1, 1));
  HLO_TRY(vall_tensors(op));
  const hlo_type *a = T(0), *b = T(1), *r = R(0);
  bool left, lower, unit;
  const char *ta;
  HLO_TRY(vbool(op, "left_side", true, false, &left));
  HLO_TRY(vbool(op, "lower", true, false, &lower));
  HLO_TRY(vbool(op, "unit_diagonal", true, false, &unit));
  HLO_TRY(venum(op, "transpose_a", true, &ta));
  if (!a->quant && !b->quant && !velem_eq(a, b)) return verr(op, "C1", "a and b element types differ");
  if (a->rank < 2 || a->rank != b->rank) return verr(op, "C2", "a and b must have equal rank >= 2 (%u, %u)", a->rank, b->rank);
  uint32_t R_ = a->rank;
  for (uint32_t i = 0; i + 2 < R_; i++)
    if (!vdim_eq(a->dims[i], b->dims[i])) return verr(op, "C3", "batch dimension %u differs", i);
  int64_t bd = left ? b->dims[R_ - 2] : b->dims[R_ - 1];
  if (!vdim_eq(a->dims[R_ - 2], a->dims[R_ - 1]) || !vdim_eq(a->dims[R_ - 1], bd))
    return verr(op, "C3", "a must be square and match b (%s, %s)", vtype_str(c, a), vtype_str(c, b));
  if (!vtype_eq(b, r) && !(b->quant || r->quant)) return verr(op, "C4", "result type differs from b");
  return NULL;
}

static hlo_status verify_cholesky(vctx *c, const hlo_op *op) {
  HLO_TRY(vcount(op, 1, 1, 1, 1));
  HLO_TRY(vall_tensors(op));
  const hlo_type *a = T(0);
  if (!a->quant && !vtype_eq(a, R(0))) return verr(op, "C1", "result type differs from a");
  if (a->rank < 2) return verr(op, "C2", "a must have rank >= 2, has %u", a->rank);
  if (!vdim_eq(a->dims[a->rank - 2], a->dims[a->rank - 1])) return verr(op, "C3", "a must be square (%s)", vtype_str(c, a));
  return NULL;
}

static hlo_status verify_fft(vctx *c, const hlo_op *op) {
  HLO_TRY(vcount(op, 1, 1, 1, 1));
  HLO_TRY(vall_tensors(op));
  const hlo_type *x = T(0), *r = R(0);
  const char *ty;
  ilist fl;
  HLO_TRY(venum(op, "fft_type", true, &ty));
  HLO_TRY(vints(c, op, "fft_length", true, &fl, NULL));
  if (fl.n > x->rank) return verr(op, "C1", "fft_length has %u entries, operand rank %u", fl.n, x->rank);
  if (fl.n < 1 || fl.n > 3) return verr(op, "C3", "fft_length must have 1 to 3 entries");
  if (!ty) return NULL;
  bool xc = dtype_class(x->dtype) == HLO_CLASS_COMPLEX, rc = dtype_class(r->dtype) == HLO_CLASS_COMPLEX;
  bool fft = !strcmp(ty, "FFT") || !strcmp(ty, "IFFT");
  if (fft && (!xc || x->dtype != r->dtype)) return verr(op, "C2", "%s needs the same complex type in and out", ty);
  if (!strcmp(ty, "RFFT") && (xc || !rc)) return verr(op, "C2", "RFFT maps floating-point to complex");
  if (!strcmp(ty, "IRFFT") && (!xc || rc)) return verr(op, "C2", "IRFFT maps complex to floating-point");
  if (r->rank != x->rank) return verr(op, "C5", "result rank differs from operand");
  uint32_t R_ = x->rank;
  for (uint32_t i = 0; i + 1 < R_; i++)
    if (!vdim_eq(r->dims[i], x->dims[i])) return verr(op, "C5", "result dimension %u differs from operand", i);
  if (R_ && !strcmp(ty, "RFFT")) {
    int64_t d = x->dims[R_ - 1];
    if (d != HLO_DYN && !vdim_eq(r->dims[R_ - 1], d == 0 ? 0 : d / 2 + 1)) return verr(op, "C5", "RFFT result last dimension must be %lld", (long long)(d / 2 + 1));
  } else if (R_ && !strcmp(ty, "IRFFT")) {
    int64_t d = r->dims[R_ - 1];
    if (d != HLO_DYN && !vdim_eq(x->dims[R_ - 1], d == 0 ? 0 : d / 2 + 1)) return verr(op, "C5", "IRFFT operand last dimension must be %lld", (long long)(d / 2 + 1));
  } else if (R_ && !vdim_eq(r->dims[R_ - 1], x->dims[R_ - 1])) {
    return verr(op, "C5", "result last dimension differs from operand");
  }
  /* C4 names the real tensor (RFFT: operand, IRFFT: result); for FFT/IFFT
   * the transform runs over the operand's trailing dimensions, so they must
   * equal fft_length too (as XLA's shape inference requires). */
  const hlo_type *real = !strcmp(ty, "RFFT") ? x : !strcmp(ty, "IRFFT") ? r : x;
  for (uint32_t i = 0; i < fl.n; i++)
    if (!vdim_eq(real->dims[R_ - fl.n + i], fl.v[i])) {
      /* fl.n <= 3 (C3), so both lists fit */
      char want[96] = "", have[96] = "";
      size_t a = 0, b = 0;
      for (uint32_t k = 0; k < fl.n; k++) {
        int64_t d = real->dims[R_ - fl.n + k];
        a += (size_t)snprintf(want + a, sizeof want - a, "%s%lld", k ? ", " : "", (long long)fl.v[k]);
        if (d == HLO_DYN) b += (size_t)snprintf(have + b, sizeof have - b, "%s?", k ? ", " : "");
        else b += (size_t)snprintf(have + b, sizeof have - b, "%s%lld", k ? ", " : "", (long long)d);
      }
      return verr(op, "C4", "the last %u dimension(s) of the %s (%s) must equal fft_length [%s]",
                  fl.n, real == r ? "result" : "operand", have, want);
    }
  return NULL;
}

static hlo_status verify_rng_bit_generator(vctx *c, const hlo_op *op) {
  HLO_TRY(vcount(op, 1, 1, 2, 2));
  HLO_TRY(vall_tensors(op));
  const char *alg;
  HLO_TRY(venum(op, "rng_algorithm", true, &alg));
  if (!vtype_eq(T(0), R(0))) return verr(op, "C1", "output_state type %s differs from initial_state %s", vtype_str(c, R(0)), vtype_str(c, T(0)));
  int64_t n = type_num_elements(T(0));
  if (alg && n >= 0 && !strcmp(alg, "THREE_FRY") && n != 2) return verr(op, "C2", "THREE_FRY needs a state of 2 elements, has %lld", (long long)n);
  if (alg && n >= 0 && !strcmp(alg, "PHILOX") && n != 2 && n != 3) return verr(op, "C2", "PHILOX needs a state of 2 or 3 elements, has %lld", (long long)n);
  return NULL;
}

static hlo_status verify_rng(vctx *c, const hlo_op *op) {
  HLO_TRY(vcount(op, 3, 3, 1, 1));
  HLO_TRY(vall_tensors(op));
  const char *dist;
  HLO_TRY(venum(op, "rng_distribution", true, &dist));
  if (!velem_eq(T(0), T(1)) || !velem_eq(T(0), R(0))) return verr(op, "C1", "a, b and result element types differ");
  if (dist && !strcmp(dist, "NORMAL") && !dtype_is_float(T(0)->dtype)) return verr(op, "C2", "NORMAL needs floating-point a");
  if (!vis_scalar(T(0)) || !vis_scalar(T(1))) return verr(op, "I1", "a and b must be 0-dimensional");
  if (T(2)->rank != 1 || !vdim_eq(T(2)->dims[0], R(0)->rank))
    return verr(op, "C3", "shape must be 1-D of size rank(result) = %u", R(0)->rank);
  (void)c;
  return NULL;
}

static hlo_status verify_custom_call(vctx *c, const hlo_op *op) {
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

static hlo_status verify_all_reduce(vctx *c, const hlo_op *op) {
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

static hlo_status verify_all_gather(vctx *c, const hlo_op *op) {
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

static hlo_status verify_all_to_all(vctx *c, const hlo_op *op) {
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

static hlo_status verify_reduce_scatter(vctx *c, const hlo_op *op) {
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

static hlo_status verify_batch_norm(vctx *c, const hlo_op *op, int nin, int nout) {
  HLO_TRY(vcount(op, nin, nin, nout, nout));
  HLO_TRY(vall_tensors(op));
  int64_t fi;
  HLO_TRY(vint(op, "feature_index", true, 0, &fi));
  const hlo_type *x = T(0);
  if (fi < 0 || fi >= (int64_t)x->rank) return verr(op, "C1", "feature_index %lld is out of range", (long long)fi);
  for (uint32_t i = 0; i < op->num_operands; i++)
    if (!velem_eq(T(i), x)) return verr(op, "C2", "operand #%u element type differs", i);
  for (uint32_t i = 1; i < op->num_operands; i++) {
    const hlo_type *t = T(i);
    bool full = op->opcode == OP_BATCH_NORM_GRAD && i == 4;
    if (full) {
      if (!vshape_eq(t, x)) return verr(op, "C3", "grad_output shape differs from operand");
    } else if (t->rank != 1 || !vdim_eq(t->dims[0], x->dims[fi])) {
      return verr(op, op->opcode == OP_BATCH_NORM_GRAD ? "C5" : "C3", "operand #%u must be 1-D of size dim(operand, feature_index)", i);
    }
  }
  if (!vshape_eq(R(0), x)) return verr(op, op->opcode == OP_BATCH_NORM_GRAD ? "C3" : "C7", "result shape differs from operand");
  (void)c;
  return NULL;
}

static hlo_status verify_tokens_only(const hlo_op *op, uint32_t first) {
  for (uint32_t i = first; i < op->num_operands; i++)
    if (op->operands[i]->type->kind != TYPE_TOKEN) return verr(op, "I1", "operand #%u must be a token", i);
  return NULL;
}

static hlo_status verify_dynamic_broadcast_in_dim(vctx *c, const hlo_op *op) {
  HLO_TRY(vcount(op, 2, 2, 1, 1));
  HLO_TRY(vall_tensors(op));
  const hlo_type *x = T(0), *os = T(1), *r = R(0);
  ilist d, ke, kn;
  HLO_TRY(vints(c, op, "broadcast_dimensions", true, &d, NULL));
  HLO_TRY(vints(c, op, "known_expanding_dimensions", false, &ke, NULL));
  HLO_TRY(vints(c, op, "known_nonexpanding_dimensions", false, &kn, NULL));
  if (!(x->quant && x->quant->axis >= 0) && !velem_eq(x, r))
    return verr(op, "C1", "result element type %s differs from operand %s", vtype_str(c, r), vtype_str(c, x));
  if (d.n != x->rank) return verr(op, "C2", "broadcast_dimensions has %u entries but operand rank is %u", d.n, x->rank);
  int64_t k;
  if ((k = vout_of_range(d.v, d.n, r->rank)) >= 0)
    return verr(op, "C3", "broadcast_dimensions entry %lld is out of range for result rank %u", (long long)d.v[k], r->rank);
  if ((k = vdup(d.v, d.n)) >= 0) return verr(op, "C4", "broadcast_dimensions has duplicate %lld", (long long)d.v[k]);
  for (uint32_t i = 0; i < x->rank; i++)
    if (x->dims[i] != 1 && !vdim_eq(x->dims[i], r->dims[d.v[i]]))
      return verr(op, "C5", "operand dimension %u has size %lld, result dimension %lld has %lld", i,
                  (long long)x->dims[i], (long long)d.v[i], (long long)r->dims[d.v[i]]);
  if (os->rank != 1 || !vdim_eq(os->dims[0], r->rank))
    return verr(op, "C7", "output_dimensions must be 1-D of size rank(result) = %u", r->rank);
  if (ke.n + kn.n > 0) {
    int64_t *all = arena_calloc(&c->scratch, ke.n + kn.n, sizeof *all);
    if (!all) return status_new(HLO_RESOURCE_EXHAUSTED, "out of memory");
    if (ke.n) memcpy(all, ke.v, ke.n * sizeof *all);
    if (kn.n) memcpy(all + ke.n, kn.v, kn.n * sizeof *all);
    if (vdup(all, ke.n + kn.n) >= 0) return verr(op, "C8", "known expanding/nonexpanding dimensions must be unique");
  }
  if ((k = vout_of_range(ke.v, ke.n, x->rank)) >= 0) return verr(op, "C9", "known_expanding_dimensions entry %lld is out of range", (long long)ke.v[k]);
  if ((k = vout_of_range(kn.v, kn.n, x->rank)) >= 0) return verr(op, "C10", "known_nonexpanding_dimensions entry %lld is out of range", (long long)kn.v[k]);
  return NULL;
}

hlo_status verify_op_complex(vctx *c, const hlo_op *op, bool *handled) {
  *handled = true;
  switch (op->opcode) {
    case OP_DOT_GENERAL: return verify_dot_general(c, op);
    case OP_DOT: return verify_dot(c, op);
    case OP_CONVOLUTION: return verify_convolution(c, op, false);
    case OP_REDUCE: return verify_reduce(c, op);
    case OP_REDUCE_WINDOW: return verify_reduce_window(c, op);
    case OP_SELECT_AND_SCATTER: return verify_select_and_scatter(c, op);
    case OP_GATHER: return verify_gather(c, op, false);
    case OP_SCATTER: return verify_scatter(c, op);
    case OP_SORT: return verify_sort(c, op);
    case OP_MAP: return verify_map(c, op);
    case OP_IF: return verify_if(c, op);
    case OP_CASE: return verify_case(c, op);
    case OP_WHILE: return verify_while(c, op);
    case OP_TRIANGULAR_SOLVE: return verify_triangular_solve(c, op);
    case OP_CHOLESKY: return verify_cholesky(c, op);
    case OP_FFT: return verify_fft(c, op);
    case OP_RNG_BIT_GENERATOR: return verify_rng_bit_generator(c, op);
    case OP_RNG: return verify_rng(c, op);
    case OP_CUSTOM_CALL: return verify_custom_call(c, op);
    case OP_ALL_REDUCE: return verify_all_reduce(c, op);
    case OP_ALL_GATHER: return verify_all_gather(c, op);
    case OP_ALL_TO_ALL: return verify_all_to_all(c, op);
    case OP_REDUCE_SCATTER: return verify_reduce_scatter(c, op);
    case OP_BATCH_NORM_INFERENCE: return verify_batch_norm(c, op, 5, 1);
    case OP_BATCH_NORM_TRAINING: return verify_batch_norm(c, op, 3, 3);
    case OP_BATCH_NORM_GRAD: return verify_batch_norm(c, op, 5, 3);
    case OP_COLLECTIVE_PERMUTE: {
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
    case OP_COLLECTIVE_BROADCAST: {
      bool dyn_root;
      HLO_TRY(vbool(op, "has_dynamic_root", false, op->num_operands > op->num_results, &dyn_root));
      uint32_t nres = op->num_operands - (dyn_root && op->num_operands ? 1 : 0);
      HLO_TRY(vcount(op, dyn_root ? 2 : 1, -1, (int)nres, (int)nres));
      for (uint32_t i = 0; i < nres; i++)
        if (!vtype_eq(T(i), R(i))) return verr(op, dyn_root ? "C4" : "C3", "result #%u type differs from operand", i);
      return NULL;
    }
    case OP_OPTIMIZATION_BARRIER:
      HLO_TRY(vcount(op, 0, -1, (int)op->num_operands, (int)op->num_operands));
      for (uint32_t i = 0; i < op->num_operands; i++)
        if (!vtype_eq(T(i), R(i))) return verr(op, "C1", "result #%u type differs from operand", i);
      return NULL;
    case OP_GET_DIMENSION_SIZE: {
      HLO_TRY(vcount(op, 1, 1, 1, 1));
      int64_t d;
      HLO_TRY(vint(op, "dimension", true, 0, &d));
      if (!vis_tensor(T(0)) || d < 0 || d >= (int64_t)T(0)->rank) return verr(op, "C1", "dimension %lld is out of range", (long long)d);
      if (!vis_scalar(R(0)) || R(0)->dtype != HLO_I32) return verr(op, "O1", "result must be tensor<i32>, got %s", vtype_str(c, R(0)));
      return NULL;
    }
    case OP_SET_DIMENSION_SIZE: {
      HLO_TRY(vcount(op, 2, 2, 1, 1));
      HLO_TRY(vall_tensors(op));
      int64_t d;
      HLO_TRY(vint(op, "dimension", true, 0, &d));
      if (d < 0 || d >= (int64_t)T(0)->rank) return verr(op, "C1", "dimension %lld is out of range", (long long)d);
      if (!vis_scalar(T(1)) || !dtype_is_int(T(1)->dtype)) return verr(op, "I2", "size must be a 0-dimensional integer tensor");
      if (R(0)->rank != T(0)->rank || !velem_eq(R(0), T(0))) return verr(op, "C2", "result must have the operand's rank and element type");
      return NULL;
    }
    case OP_REAL_DYNAMIC_SLICE: {
      HLO_TRY(vcount(op, 4, 4, 1, 1));
      HLO_TRY(vall_tensors(op));
      if (!velem_eq(T(0), R(0))) return verr(op, "C1", "result element type differs from operand");
      for (uint32_t i = 1; i < 4; i++)
        if (T(i)->rank != 1 || !vdim_eq(T(i)->dims[0], T(0)->rank))
          return verr(op, "C2", "operand #%u must be 1-D of size rank(operand) = %u", i, T(0)->rank);
      if (R(0)->rank != T(0)->rank) return verr(op, "C5", "result rank differs from operand");
      return NULL;
    }
    case OP_UNIFORM_QUANTIZE:
      HLO_TRY(vcount(op, 1, 1, 1, 1));
      HLO_TRY(vall_tensors(op));
      if (!vshape_eq(T(0), R(0))) return verr(op, "C1", "result shape differs from operand");
      if (!R(0)->quant) return verr(op, "O1", "result must be a quantized tensor, got %s", vtype_str(c, R(0)));
      if (!T(0)->quant && !dtype_is_float(T(0)->dtype)) return verr(op, "I1", "operand must be floating-point or quantized");
      if (R(0)->quant->expressed != (T(0)->quant ? T(0)->quant->expressed : T(0)->dtype))
        return verr(op, "C2", "expressed type of the result differs from the operand's");
      return NULL;
    case OP_UNIFORM_DEQUANTIZE:
      HLO_TRY(vcount(op, 1, 1, 1, 1));
      HLO_TRY(vall_tensors(op));
      if (!vshape_eq(T(0), R(0))) return verr(op, "C1", "result shape differs from operand");
      if (!T(0)->quant) return verr(op, "I1", "operand must be a quantized tensor, got %s", vtype_str(c, T(0)));
      if (R(0)->quant || R(0)->dtype != T(0)->quant->expressed)
        return verr(op, "C2", "result element type must be the operand's expressed type");
      return NULL;
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
    case OP_DYNAMIC_BROADCAST_IN_DIM: return verify_dynamic_broadcast_in_dim(c, op);
    case OP_DYNAMIC_IOTA: {
      HLO_TRY(vcount(op, 1, 1, 1, 1));
      HLO_TRY(vall_tensors(op));
      int64_t d;
      HLO_TRY(vint(op, "iota_dimension", true, 0, &d));
      if (T(0)->rank != 1 || !vdim_eq(T(0)->dims[0], R(0)->rank))
        return verr(op, "C2", "output_shape must be 1-D of size rank(result) = %u", R(0)->rank);
      if (d < 0 || d >= (int64_t)R(0)->rank) return verr(op, "C1", "iota_dimension %lld is out of range", (long long)d);
      return NULL;
    }
    case OP_DYNAMIC_PAD: {
      HLO_TRY(vcount(op, 5, 5, 1, 1));
      HLO_TRY(vall_tensors(op));
      if (!T(0)->quant && (!velem_eq(T(0), T(1)) || !velem_eq(T(0), R(0))))
        return verr(op, "C1", "operand, padding_value and result element types differ");
      for (uint32_t i = 2; i < 5; i++)
        if (T(i)->rank != 1 || !vdim_eq(T(i)->dims[0], T(0)->rank))
          return verr(op, "C2", "padding operand #%u must be 1-D of size %u", i, T(0)->rank);
      if (R(0)->rank != T(0)->rank) return verr(op, "C4", "result rank differs from operand");
      return NULL;
    }
    case OP_DYNAMIC_RESHAPE: {
      HLO_TRY(vcount(op, 2, 2, 1, 1));
      HLO_TRY(vall_tensors(op));
      int64_t a = type_num_elements(T(0)), b = type_num_elements(R(0));
      if (a >= 0 && b >= 0 && a != b) return verr(op, "C2", "operand has %lld elements, result %lld", (long long)a, (long long)b);
      if (T(1)->rank != 1 || !vdim_eq(T(1)->dims[0], R(0)->rank))
        return verr(op, "C4", "output_shape must be 1-D of size rank(result) = %u", R(0)->rank);
      return NULL;
    }
    case OP_DYNAMIC_GATHER: return verify_gather(c, op, true);
    case OP_DYNAMIC_CONV: return verify_convolution(c, op, true);
    case OP_EINSUM: return vcount(op, 2, 2, 1, 1);
    case OP_UNARY_EINSUM: return vcount(op, 1, 1, 1, 1);
    case OP_TORCH_INDEX_SELECT: return vcount(op, 2, 2, 1, 1);
    case OP_TRACE: return vcount(op, 1, 1, 0, 0);
    default:
      if (op_flags(op->opcode) & OPF_CHLO) return verify_op_chlo(c, op);
      *handled = false;
      return NULL;
  }
}
