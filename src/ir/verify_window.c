/* verify_window.c — constraint checks of the windowed ops: convolution (and
 * dynamic_conv), reduce_window and select_and_scatter, with their shared
 * window-attribute helpers, following reference/stablehlo-spec.md. */
#include <stdio.h>
#include <string.h>
#include "ir/element.h"
#include "ir/verify.h"

#define T(i) (op->operands[(i)]->type)
#define R(i) (op->results[(i)].type)

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

hlo_status verify_reduce_window(vctx *c, const hlo_op *op) {
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

hlo_status verify_select_and_scatter(vctx *c, const hlo_op *op) {
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
hlo_status verify_convolution(vctx *c, const hlo_op *op, bool dynamic) {
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
