/* interp_conv.c — interpreter kernels for convolution and dynamic_conv.
 *
 * Follows the spec's convolution semantics: for every result index, a dot
 * product between a (padded, base-dilated, window-dilated, optionally
 * reversed) window of lhs and the kernel, with feature_group_count /
 * batch_group_count splitting lhs and rhs into groups whose results are
 * concatenated along the output feature dimension. Instead of materializing
 * the padded lhs, each window position is mapped back to an lhs index (or to
 * padding, which contributes zero). Accumulates in double / wrapping 64-bit
 * integers, rounding once into the result type. */
#include <stdlib.h>
#include <string.h>
#include "interp/interp_linalg_internal.h"
#include "interp/interp_util.h"

/* Everything a convolution needs, decoded and checked. */
typedef struct conv_params {
  uint32_t N, S;  /* rank, number of spatial dims (N - 2) */
  int64_t ib, ifeat, isp[LA_MAX_RANK];
  int64_t kif, kof, ksp[LA_MAX_RANK];
  int64_t ob, ofeat, osp[LA_MAX_RANK];
  int64_t stride[LA_MAX_RANK], pad_lo[LA_MAX_RANK], pad_hi[LA_MAX_RANK];
  int64_t ldil[LA_MAX_RANK], rdil[LA_MAX_RANK];
  bool rev[LA_MAX_RANK];
  int64_t fgc, bgc;
} conv_params;

/* An INT field of the stablehlo.conv struct. */
static hlo_status conv_int_field(const hlo_op *op, const hlo_attr *dn, const char *name,
                                 int64_t *out) {
  const hlo_attr *f = attr_field(dn, name);
  if (!f || f->kind != ATTR_INT)
    return interp_error(op, HLO_INVALID_ARGUMENT, "dimension_numbers.%s is missing or not "
                        "an integer", name);
  *out = f->u.i.v;
  return NULL;
}

/* A list field of the stablehlo.conv struct with exactly `want` entries. */
static hlo_status conv_list_field(const hlo_op *op, const hlo_attr *dn, const char *name,
                                  uint32_t want, int64_t *out) {
  const hlo_attr *f = attr_field(dn, name);
  uint32_t n = 0;
  if (want == 0 && !f) return NULL;
  if (!f || !la_attr_ints(f, out, LA_MAX_RANK, &n) || n != want)
    return interp_error(op, HLO_INVALID_ARGUMENT, "dimension_numbers.%s must list %u "
                        "dimensions", name, want);
  return NULL;
}

/* An optional per-spatial-dimension list attribute (default `dflt`),
 * each value required to be positive when `positive`. */
static hlo_status conv_window_attr(const hlo_op *op, const char *name, uint32_t S, int64_t dflt,
                                   bool positive, int64_t *out) {
  const hlo_attr *a = op_attr(op, name);
  if (!a) {
    for (uint32_t i = 0; i < S; i++) out[i] = dflt;
    return NULL;
  }
  uint32_t n = 0;
  if (!la_attr_ints(a, out, LA_MAX_RANK, &n) || n != S)
    return interp_error(op, HLO_INVALID_ARGUMENT, "%s must hold %u integers", name, S);
  for (uint32_t i = 0; positive && i < S; i++)
    if (out[i] <= 0)
      return interp_error(op, HLO_INVALID_ARGUMENT, "%s[%u] = %lld must be positive", name, i,
                          (long long)out[i]);
  return NULL;
}

/* Checks that the listed dimension numbers are unique and in [0, N). */
static hlo_status conv_check_perm(const hlo_op *op, const int64_t *d, uint32_t n, uint32_t N,
                                  const char *what) {
  bool used[LA_MAX_RANK] = {0};
  for (uint32_t i = 0; i < n; i++) {
    if (d[i] < 0 || d[i] >= (int64_t)N)
      return interp_error(op, HLO_INVALID_ARGUMENT, "%s dimension %lld out of "
                          "range [0, %u)", what, (long long)d[i], N);
    if (used[d[i]])
      return interp_error(op, HLO_INVALID_ARGUMENT, "%s dimension %lld repeated",
                          what, (long long)d[i]);
    used[d[i]] = true;
  }
  return NULL;
}

/* Decodes and checks everything but padding (which the caller fills in
 * from the attribute or the dynamic_conv operand) against the shapes. */
static hlo_status conv_decode(const hlo_op *op, const hlo_type *lt, const hlo_type *kt,
                              conv_params *p) {
  if (lt->kind != TYPE_TENSOR || kt->kind != TYPE_TENSOR || !type_is_static(lt) ||
      !type_is_static(kt))
    return interp_error(op, HLO_INVALID_ARGUMENT, "operands must be static tensors");
  if (lt->rank != kt->rank || lt->rank < 2 || lt->rank > LA_MAX_RANK)
    return interp_error(op, HLO_INVALID_ARGUMENT, "(C1): lhs and rhs must have "
                        "the same rank N >= 2");
  p->N = lt->rank;
  p->S = p->N - 2;
  const hlo_attr *dn = op_attr(op, "dimension_numbers");
  if (!dn || dn->kind != ATTR_STRUCT)
    return interp_error(op, HLO_INVALID_ARGUMENT, "missing #stablehlo.conv dimension_numbers");
  HLO_TRY(conv_int_field(op, dn, "input_batch_dimension", &p->ib));
  HLO_TRY(conv_int_field(op, dn, "input_feature_dimension", &p->ifeat));
  HLO_TRY(conv_list_field(op, dn, "input_spatial_dimensions", p->S, p->isp));
  HLO_TRY(conv_int_field(op, dn, "kernel_input_feature_dimension", &p->kif));
  HLO_TRY(conv_int_field(op, dn, "kernel_output_feature_dimension", &p->kof));
  HLO_TRY(conv_list_field(op, dn, "kernel_spatial_dimensions", p->S, p->ksp));
  HLO_TRY(conv_int_field(op, dn, "output_batch_dimension", &p->ob));
  HLO_TRY(conv_int_field(op, dn, "output_feature_dimension", &p->ofeat));
  HLO_TRY(conv_list_field(op, dn, "output_spatial_dimensions", p->S, p->osp));
  int64_t perm[LA_MAX_RANK];
  perm[0] = p->ib;
  memcpy(perm + 1, p->isp, sizeof(int64_t) * p->S);
  perm[p->N - 1] = p->ifeat;
  HLO_TRY(conv_check_perm(op, perm, p->N, p->N, "input"));
  memcpy(perm, p->ksp, sizeof(int64_t) * p->S);
  perm[p->N - 2] = p->kif;
  perm[p->N - 1] = p->kof;
  HLO_TRY(conv_check_perm(op, perm, p->N, p->N, "kernel"));
  perm[0] = p->ob;
  memcpy(perm + 1, p->osp, sizeof(int64_t) * p->S);
  perm[p->N - 1] = p->ofeat;
  HLO_TRY(conv_check_perm(op, perm, p->N, p->N, "output"));
  HLO_TRY(conv_window_attr(op, "window_strides", p->S, 1, true, p->stride));
  HLO_TRY(conv_window_attr(op, "lhs_dilation", p->S, 1, true, p->ldil));
  HLO_TRY(conv_window_attr(op, "rhs_dilation", p->S, 1, true, p->rdil));
  int64_t rv[LA_MAX_RANK];
  HLO_TRY(conv_window_attr(op, "window_reversal", p->S, 0, false, rv));
  for (uint32_t i = 0; i < p->S; i++) p->rev[i] = rv[i] != 0;
  p->fgc = op_attr_int(op, "feature_group_count", 1);
  p->bgc = op_attr_int(op, "batch_group_count", 1);
  if (p->fgc <= 0 || p->bgc <= 0)
    return interp_error(op, HLO_INVALID_ARGUMENT, "(C21, C22): group counts must "
                        "be positive");
  if (p->fgc != 1 && p->bgc != 1)
    return interp_error(op, HLO_INVALID_ARGUMENT, "(C23): feature_group_count "
                        "or batch_group_count must be 1");
  if (lt->dims[p->ib] % p->bgc)
    return interp_error(op, HLO_INVALID_ARGUMENT, "(C10): batch size not "
                        "divisible by batch_group_count");
  if (lt->dims[p->ifeat] % p->fgc)
    return interp_error(op, HLO_INVALID_ARGUMENT, "(C11): input features not "
                        "divisible by feature_group_count");
  if (kt->dims[p->kif] != lt->dims[p->ifeat] / p->fgc)
    return interp_error(op, HLO_INVALID_ARGUMENT, "(C14): kernel input features "
                        "must be input features / feature_group_count");
  if (kt->dims[p->kof] % p->bgc || kt->dims[p->kof] % p->fgc)
    return interp_error(op, HLO_INVALID_ARGUMENT, "(C15, C16): kernel output "
                        "features not divisible by the group count");
  return NULL;
}

/* Checks the result shape (C25) once padding is known. */
static hlo_status conv_check_result(const hlo_op *op, const hlo_type *lt, const hlo_type *kt,
                                    const hlo_type *rt, const conv_params *p) {
  if (rt->kind != TYPE_TENSOR || !type_is_static(rt) || rt->rank != p->N)
    return interp_error(op, HLO_INVALID_ARGUMENT, "(C26): result must be a static "
                        "tensor of rank %u", p->N);
  if (rt->dims[p->ob] != lt->dims[p->ib] / p->bgc || rt->dims[p->ofeat] != kt->dims[p->kof])
    return interp_error(op, HLO_INVALID_ARGUMENT, "(C25): wrong result batch or "
                        "feature size");
  for (uint32_t s = 0; s < p->S; s++) {
    int64_t ld = lt->dims[p->isp[s]], kd = kt->dims[p->ksp[s]];
    /* Sizes are bounded by tensor sizes (< 2^40) and attributes checked
     * below, so the arithmetic is done in __int128 to be safe. */
    __int128 dil_in = ld == 0 ? 0 : (__int128)(ld - 1) * p->ldil[s] + 1;
    __int128 padded = (__int128)p->pad_lo[s] + dil_in + p->pad_hi[s];
    __int128 dil_win = kd == 0 ? 0 : (__int128)(kd - 1) * p->rdil[s] + 1;
    __int128 nw = (padded <= 0 || dil_win > padded) ? 0 : (padded - dil_win) / p->stride[s] + 1;
    if (nw != rt->dims[p->osp[s]])
      return interp_error(op, HLO_INVALID_ARGUMENT, "(C25): result spatial "
                          "dimension %lld should be %lld, is %lld", (long long)p->osp[s],
                          (long long)nw, (long long)rt->dims[p->osp[s]]);
  }
  return NULL;
}

/* The convolution proper, once parameters are checked. */
static hlo_status conv_run(const hlo_op *op, const tensor *lhs, const tensor *rhs,
                           const hlo_type *rt, const conv_params *p, tensor **out) {
  const hlo_type *lt = lhs->type, *kt = rhs->type;
  HLO_TRY(conv_check_result(op, lt, kt, rt, p));
  tensor *res;
  HLO_TRY(tensor_create(rt, &op->loc, &res));
  if (res->num_elems == 0 || lhs->num_elems == 0 || rhs->num_elems == 0) {
    *out = res;
    return NULL;
  }
  la_domain dom = la_domain_of(rt->dtype);
  bool fl = dom == LA_FLOAT || dom == LA_COMPLEX, cx = dom == LA_COMPLEX;
  bool single = la_single(rt->dtype);
  double *lf, *rf;
  uint64_t *lu, *ru;
  if (!iu_load_operands(lhs, rhs, fl, cx, &lf, &rf, &lu, &ru)) {
    tensor_release(res);
    return interp_error(op, HLO_RESOURCE_EXHAUSTED, "out of memory");
  }
  uint32_t N = p->N, S = p->S;
  int64_t lst[LA_MAX_RANK], kst[LA_MAX_RANK];
  {
    int64_t s1 = 1, s2 = 1;
    for (uint32_t i = N; i-- > 0;) {
      lst[i] = s1; s1 *= lt->dims[i];
      kst[i] = s2; s2 *= kt->dims[i];
    }
  }
  int64_t ksdims[LA_MAX_RANK];  /* kernel spatial sizes, in spatial order */
  for (uint32_t s = 0; s < S; s++) ksdims[s] = kt->dims[p->ksp[s]];
  int64_t cin = kt->dims[p->kif];          /* input features per group */
  int64_t cout = kt->dims[p->kof];
  int64_t out_per_fg = cout / p->fgc, out_per_bg = cout / p->bgc;
  int64_t batch_per_bg = lt->dims[p->ib] / p->bgc;
  int64_t idx[LA_MAX_RANK] = {0};
  for (int64_t r = 0; r < res->num_elems; r++) {
    int64_t b = idx[p->ob], of = idx[p->ofeat];
    int64_t lbatch = b, fbase = 0;
    if (p->bgc > 1) lbatch = (of / out_per_bg) * batch_per_bg + b;
    if (p->fgc > 1) fbase = (of / out_per_fg) * cin;
    double acc[2] = {0, 0};
    uint64_t uacc = 0;
    int64_t kidx[LA_MAX_RANK] = {0};
    do {
      /* lhs spatial position for this window element, or skip if it falls
       * into padding or a base-dilation hole. */
      int64_t loff = lbatch * lst[p->ib], koff = of * kst[p->kof];
      bool inside = true;
      for (uint32_t s = 0; s < S && inside; s++) {
        int64_t k = kidx[s];
        int64_t kk = p->rev[s] ? ksdims[s] - 1 - k : k;
        /* 128-bit: attribute values may be huge; C25 bounds the sum. */
        __int128 pos = (__int128)idx[p->osp[s]] * p->stride[s] + (__int128)kk * p->rdil[s] -
                       p->pad_lo[s];
        int64_t ld = lt->dims[p->isp[s]];
        if (pos < 0 || pos % p->ldil[s] != 0 || pos / p->ldil[s] >= ld) inside = false;
        else loff += (int64_t)(pos / p->ldil[s]) * lst[p->isp[s]];
        koff += k * kst[p->ksp[s]];
      }
      if (inside) {
        for (int64_t c = 0; c < cin; c++) {
          int64_t li = loff + (fbase + c) * lst[p->ifeat], ki = koff + c * kst[p->kif];
          switch (dom) {
            case LA_FLOAT:
              if (single) acc[0] = (float)acc[0] + (float)lf[li] * (float)rf[ki];
              else acc[0] += lf[li] * rf[ki];
              break;
            case LA_COMPLEX: la_cmac(acc, &lf[2 * li], &rf[2 * ki], single); break;
            case LA_SINT:
            case LA_UINT: uacc += lu[li] * ru[ki]; break;
            case LA_BOOL: uacc |= (lu[li] & ru[ki]) != 0; break;
          }
        }
      }
    } while (index_next(ksdims, S, kidx));
    la_store(res, dom, r, acc, uacc);
    index_next(rt->dims, N, idx);
  }
  free(lf); free(rf); free(lu); free(ru);
  *out = res;
  return NULL;
}

static hlo_status k_convolution(interp *it, const hlo_op *op, tensor *const *in,
                                const hlo_type *const *result_types, tensor **out) {
  (void)it;
  if (op->num_operands != 2 || op->num_results != 1)
    return interp_error(op, HLO_INVALID_ARGUMENT, "expects 2 operands and 1 result");
  conv_params p;
  HLO_TRY(conv_decode(op, in[0]->type, in[1]->type, &p));
  const hlo_attr *pad = op_attr(op, "padding");
  if (!pad) {
    memset(p.pad_lo, 0, sizeof p.pad_lo);
    memset(p.pad_hi, 0, sizeof p.pad_hi);
  } else {
    int64_t buf[2 * LA_MAX_RANK];
    uint32_t n = 0;
    if (!la_attr_ints(pad, buf, 2 * LA_MAX_RANK, &n) || n != 2 * p.S)
      return interp_error(op, HLO_INVALID_ARGUMENT, "(C4): padding must be %ux2 "
                          "integers", p.S);
    for (uint32_t s = 0; s < p.S; s++) {
      p.pad_lo[s] = buf[2 * s];
      p.pad_hi[s] = buf[2 * s + 1];
    }
  }
  return conv_run(op, in[0], in[1], result_types[0], &p, out);
}

/* dynamic_conv: convolution whose padding comes from operand #2
 * (an (N-2)x2 integer tensor). */
static hlo_status k_dynamic_conv(interp *it, const hlo_op *op, tensor *const *in,
                                 const hlo_type *const *result_types, tensor **out) {
  (void)it;
  if (op->num_operands != 3 || op->num_results != 1)
    return interp_error(op, HLO_INVALID_ARGUMENT, "expects 3 operands and 1 result");
  conv_params p;
  HLO_TRY(conv_decode(op, in[0]->type, in[1]->type, &p));
  const tensor *pad = in[2];
  const hlo_type *pt = pad->type;
  if (pt->kind != TYPE_TENSOR || !dtype_is_int(pt->dtype) || pt->rank != 2 ||
      pt->dims[0] != (int64_t)p.S || pt->dims[1] != 2)
    return interp_error(op, HLO_INVALID_ARGUMENT, "padding must be a %ux2 "
                        "integer tensor", p.S);
  bool is_u = dtype_class(pt->dtype) == HLO_CLASS_UINT;
  for (uint32_t s = 0; s < p.S; s++) {
    p.pad_lo[s] = is_u ? (int64_t)elem_get_u64(pt->dtype, pad->data, 2 * s)
                       : elem_get_i64(pt->dtype, pad->data, 2 * s);
    p.pad_hi[s] = is_u ? (int64_t)elem_get_u64(pt->dtype, pad->data, 2 * s + 1)
                       : elem_get_i64(pt->dtype, pad->data, 2 * s + 1);
  }
  return conv_run(op, in[0], in[1], result_types[0], &p, out);
}

void interp_register_conv(interp_kernel *table) {
  table[OP_CONVOLUTION] = k_convolution;
  table[OP_DYNAMIC_CONV] = k_dynamic_conv;
}
