/* refine_infer.c — result-shape inference for the refine-shapes pass: given
 * an op whose operand types are static, the static result types the spec's
 * type constraints determine (the formulas of the spec's "Constraints"
 * sections: dot_general C13, reduce C8, pad C2, gather C5, convolution C25,
 * reduce_window C16, ...). See refine_internal.h. */
#include <stdio.h>
#include <string.h>

#include "ir/element.h"
#include "passes/refine_internal.h"
#include "support/status.h"

#define MAXR 64 /* ranks beyond this are refused (the verifier allows more) */

static hlo_status ierr(const hlo_op *op, hlo_status_code c, const char *msg) {
  return status_at(c, &op->loc, "refine shapes: %s: %s", op_name(op->opcode), msg);
}

void refine_type_str(const hlo_type *t, char *buf, size_t n) {
  if (!t) { snprintf(buf, n, "?"); return; }
  if (t->kind == TYPE_TOKEN) { snprintf(buf, n, "!stablehlo.token"); return; }
  if (t->kind == TYPE_TUPLE) { snprintf(buf, n, "tuple<%u elements>", t->num_elems); return; }
  size_t k = (size_t)snprintf(buf, n, "tensor<");
  for (uint32_t d = 0; d < t->rank && k < n; d++) {
    if (t->dims[d] == HLO_DYN) k += (size_t)snprintf(buf + k, n - k, "?x");
    else k += (size_t)snprintf(buf + k, n - k, "%lldx", (long long)t->dims[d]);
  }
  if (k < n) snprintf(buf + k, n - k, "%s>", hlo_dtype_name(t->dtype));
}

hlo_type *refine_type_like(hlo_module_ir *m, const hlo_type *like, uint32_t rank,
                           const int64_t *dims) {
  hlo_type *t = type_tensor(&m->arena, like->dtype, rank, dims);
  if (t) t->quant = like->quant;
  return t;
}

/* `t` fits declared `d`: same kind; tensors of equal rank and element type
 * whose static dims agree; tuples element-wise. */
static bool fits(const hlo_type *t, const hlo_type *d) {
  if (t->kind != d->kind) return false;
  if (t->kind == TYPE_TOKEN) return true;
  if (t->kind == TYPE_TUPLE) {
    if (t->num_elems != d->num_elems) return false;
    for (uint32_t i = 0; i < t->num_elems; i++)
      if (!fits(t->elems[i], d->elems[i])) return false;
    return true;
  }
  if (t->rank != d->rank || t->dtype != d->dtype) return false;
  for (uint32_t i = 0; i < t->rank; i++)
    if (d->dims[i] != HLO_DYN && d->dims[i] != t->dims[i]) return false;
  return true;
}

hlo_status refine_set_result(hlo_op *op, uint32_t i, hlo_type *t) {
  if (!t) return status_at(HLO_RESOURCE_EXHAUSTED, &op->loc, "out of memory");
  hlo_type *old = op->results[i].type;
  if (!fits(t, old)) {
    char a[256], b[256];
    refine_type_str(t, a, sizeof a);
    refine_type_str(old, b, sizeof b);
    return status_at(HLO_INVALID_ARGUMENT, &op->loc,
                     "refine shapes: %s: result %u is %s for these inputs, which does not fit "
                     "its declared type %s",
                     op_name(op->opcode), i, a, b);
  }
  op->results[i].type = t;
  return NULL;
}

/* The integer list attribute `name` of op (empty when absent). */
static bool ints_attr(hlo_module_ir *m, const hlo_op *op, const char *name, int64_t **v,
                      uint32_t *n) {
  const hlo_attr *a = op_attr(op, name);
  if (!a) { *v = NULL; *n = 0; return true; }
  return attr_as_ints(&m->arena, a, v, n);
}

static bool field_ints(hlo_module_ir *m, const hlo_attr *st, const char *name, int64_t **v,
                       uint32_t *n) {
  const hlo_attr *a = st ? attr_field(st, name) : NULL;
  if (!a) { *v = NULL; *n = 0; return true; }
  return attr_as_ints(&m->arena, a, v, n);
}

static bool contains(const int64_t *v, uint32_t n, int64_t x) {
  for (uint32_t i = 0; i < n; i++)
    if (v[i] == x) return true;
  return false;
}

/* The tensor operand `k` of op, or NULL when it is no static tensor. */
static const hlo_type *opnd(const hlo_op *op, uint32_t k) {
  if (k >= op->num_operands) return NULL;
  const hlo_type *t = op->operands[k]->type;
  return t->kind == TYPE_TENSOR && type_is_static(t) && t->rank <= MAXR ? t : NULL;
}

/* Size of a window-reduced dimension (spec of reduce_window C16 and
 * convolution C25): dilate, pad, slide the dilated window with a stride. */
static int64_t window_out(int64_t in, int64_t base_dil, int64_t lo, int64_t hi, int64_t win,
                          int64_t win_dil, int64_t stride) {
  int64_t padded = (in == 0 ? 0 : (in - 1) * base_dil + 1) + lo + hi;
  int64_t dw = win == 0 ? 0 : (win - 1) * win_dil + 1;
  if (padded < dw || stride <= 0) return 0;
  return (padded - dw) / stride + 1;
}

/* Padding attribute (N x 2 integers) of op into lo/hi (zeros when absent). */
static bool padding_attr(hlo_module_ir *m, const hlo_op *op, uint32_t n, int64_t *lo,
                         int64_t *hi) {
  int64_t *p;
  uint32_t np;
  if (!ints_attr(m, op, "padding", &p, &np)) return false;
  for (uint32_t i = 0; i < n; i++) lo[i] = hi[i] = 0;
  if (np == 0) return true;
  if (np != 2 * n) return false;
  for (uint32_t i = 0; i < n; i++) { lo[i] = p[2 * i]; hi[i] = p[2 * i + 1]; }
  return true;
}

/* Window attribute `name` (n entries, default `dflt`). */
static bool window_attr(hlo_module_ir *m, const hlo_op *op, const char *name, uint32_t n,
                        int64_t dflt, int64_t *out) {
  int64_t *v;
  uint32_t nv;
  if (!ints_attr(m, op, name, &v, &nv)) return false;
  if (nv != 0 && nv != n) return false;
  for (uint32_t i = 0; i < n; i++) out[i] = nv ? v[i] : dflt;
  return true;
}

static hlo_status infer_conv(hlo_module_ir *m, hlo_op *op, int64_t *dims) {
  const hlo_type *x = opnd(op, 0), *k = opnd(op, 1);
  const hlo_attr *dn = op_attr(op, "dimension_numbers");
  if (!x || !k || !dn) return ierr(op, HLO_UNIMPLEMENTED, "operands are not static tensors");
  int64_t *isp, *ksp, *osp;
  uint32_t ns, nk, no;
  if (!field_ints(m, dn, "input_spatial_dimensions", &isp, &ns) ||
      !field_ints(m, dn, "kernel_spatial_dimensions", &ksp, &nk) ||
      !field_ints(m, dn, "output_spatial_dimensions", &osp, &no) || nk != ns || no != ns ||
      ns + 2 != x->rank || ns > MAXR)
    return ierr(op, HLO_INVALID_ARGUMENT, "malformed dimension_numbers");
  const hlo_attr *f;
  int64_t in_b = (f = attr_field(dn, "input_batch_dimension")) ? f->u.i.v : 0;
  int64_t k_of = (f = attr_field(dn, "kernel_output_feature_dimension")) ? f->u.i.v : 0;
  int64_t o_b = (f = attr_field(dn, "output_batch_dimension")) ? f->u.i.v : 0;
  int64_t o_f = (f = attr_field(dn, "output_feature_dimension")) ? f->u.i.v : 0;
  int64_t st[MAXR], ld[MAXR], rd[MAXR], lo[MAXR], hi[MAXR];
  if (!window_attr(m, op, "window_strides", ns, 1, st) ||
      !window_attr(m, op, "lhs_dilation", ns, 1, ld) ||
      !window_attr(m, op, "rhs_dilation", ns, 1, rd) || !padding_attr(m, op, ns, lo, hi))
    return ierr(op, HLO_INVALID_ARGUMENT, "malformed window attributes");
  int64_t bgc = op_attr_int(op, "batch_group_count", 1);
  uint32_t r = x->rank;
  if (in_b < 0 || in_b >= r || k_of < 0 || k_of >= k->rank || o_b < 0 || o_b >= r || o_f < 0 ||
      o_f >= r || bgc <= 0)
    return ierr(op, HLO_INVALID_ARGUMENT, "malformed dimension_numbers");
  dims[o_b] = x->dims[in_b] / bgc;
  dims[o_f] = k->dims[k_of];
  for (uint32_t i = 0; i < ns; i++) {
    if (isp[i] < 0 || isp[i] >= r || ksp[i] < 0 || ksp[i] >= k->rank || osp[i] < 0 ||
        osp[i] >= r)
      return ierr(op, HLO_INVALID_ARGUMENT, "malformed dimension_numbers");
    dims[osp[i]] = window_out(x->dims[isp[i]], ld[i], lo[i], hi[i], k->dims[ksp[i]], rd[i], st[i]);
  }
  return NULL;
}

static hlo_status infer_gather(hlo_module_ir *m, hlo_op *op, uint32_t rank, int64_t *dims) {
  const hlo_type *x = opnd(op, 0), *ix = opnd(op, 1);
  const hlo_attr *dn = op_attr(op, "dimension_numbers");
  int64_t *off, *coll, *obatch, *ss;
  uint32_t noff, ncoll, nob, nss;
  if (!x || !ix || !dn) return ierr(op, HLO_UNIMPLEMENTED, "operands are not static tensors");
  if (!field_ints(m, dn, "offset_dims", &off, &noff) ||
      !field_ints(m, dn, "collapsed_slice_dims", &coll, &ncoll) ||
      !field_ints(m, dn, "operand_batching_dims", &obatch, &nob) ||
      !ints_attr(m, op, "slice_sizes", &ss, &nss) || nss != x->rank)
    return ierr(op, HLO_INVALID_ARGUMENT, "malformed dimension_numbers or slice_sizes");
  const hlo_attr *f = attr_field(dn, "index_vector_dim");
  int64_t ivd = f ? f->u.i.v : 0;
  int64_t batch[MAXR], offs[MAXR];
  uint32_t nb = 0, no = 0;
  for (uint32_t d = 0; d < ix->rank; d++)
    if ((int64_t)d != ivd) batch[nb++] = ix->dims[d];
  for (uint32_t d = 0; d < x->rank; d++)
    if (!contains(coll, ncoll, d) && !contains(obatch, nob, d)) offs[no++] = ss[d];
  if (nb + no != rank || no != noff)
    return ierr(op, HLO_INVALID_ARGUMENT, "result rank does not match dimension_numbers");
  uint32_t bi = 0, oi = 0;
  for (uint32_t d = 0; d < rank; d++) dims[d] = contains(off, noff, d) ? offs[oi++] : batch[bi++];
  return NULL;
}

static hlo_status infer_reduce_window(hlo_module_ir *m, hlo_op *op, int64_t *dims) {
  const hlo_type *x = opnd(op, 0);
  if (!x) return ierr(op, HLO_UNIMPLEMENTED, "operands are not static tensors");
  uint32_t r = x->rank;
  int64_t w[MAXR], st[MAXR], bd[MAXR], wd[MAXR], lo[MAXR], hi[MAXR];
  if (!window_attr(m, op, "window_dimensions", r, 1, w) ||
      !window_attr(m, op, "window_strides", r, 1, st) ||
      !window_attr(m, op, "base_dilations", r, 1, bd) ||
      !window_attr(m, op, "window_dilations", r, 1, wd) || !padding_attr(m, op, r, lo, hi))
    return ierr(op, HLO_INVALID_ARGUMENT, "malformed window attributes");
  for (uint32_t d = 0; d < r; d++) dims[d] = window_out(x->dims[d], bd[d], lo[d], hi[d], w[d], wd[d], st[d]);
  return NULL;
}

static hlo_status infer_dot(hlo_module_ir *m, hlo_op *op, uint32_t rank, int64_t *dims) {
  const hlo_type *a = opnd(op, 0), *b = opnd(op, 1);
  const hlo_attr *dn = op_attr(op, "dot_dimension_numbers");
  int64_t *lb, *lc, *rb, *rc;
  uint32_t nlb, nlc, nrb, nrc;
  if (!a || !b) return ierr(op, HLO_UNIMPLEMENTED, "operands are not static tensors");
  if (!field_ints(m, dn, "lhs_batching_dimensions", &lb, &nlb) ||
      !field_ints(m, dn, "lhs_contracting_dimensions", &lc, &nlc) ||
      !field_ints(m, dn, "rhs_batching_dimensions", &rb, &nrb) ||
      !field_ints(m, dn, "rhs_contracting_dimensions", &rc, &nrc))
    return ierr(op, HLO_INVALID_ARGUMENT, "malformed dot_dimension_numbers");
  uint32_t k = 0;
  for (uint32_t i = 0; i < nlb && k < rank; i++)
    if (lb[i] >= 0 && lb[i] < a->rank) dims[k++] = a->dims[lb[i]];
  for (uint32_t d = 0; d < a->rank && k < rank; d++)
    if (!contains(lb, nlb, d) && !contains(lc, nlc, d)) dims[k++] = a->dims[d];
  for (uint32_t d = 0; d < b->rank && k < rank; d++)
    if (!contains(rb, nrb, d) && !contains(rc, nrc, d)) dims[k++] = b->dims[d];
  if (k != rank) return ierr(op, HLO_INVALID_ARGUMENT, "result rank does not match the operands");
  return NULL;
}

/* stablehlo.fft (spec C2-C5): FFT/IFFT keep the operand's shape; RFFT
 * makes the last dimension fft_length[-1] / 2 + 1, IRFFT fft_length[-1]. */
static hlo_status infer_fft(hlo_module_ir *m, hlo_op *op, uint32_t rank, int64_t *dims) {
  const hlo_type *x = opnd(op, 0);
  const hlo_attr *ty = op_attr(op, "fft_type");
  int64_t *fl;
  uint32_t nfl;
  if (!x) return ierr(op, HLO_UNIMPLEMENTED, "operands are not static tensors");
  if (x->rank != rank || rank == 0 || !ty || ty->kind != ATTR_ENUM ||
      !ints_attr(m, op, "fft_length", &fl, &nfl) || nfl == 0 || nfl > rank)
    return ierr(op, HLO_INVALID_ARGUMENT, "malformed fft_type or fft_length");
  memcpy(dims, x->dims, rank * sizeof *dims);
  if (!strcmp(ty->u.en.value, "RFFT")) dims[rank - 1] = fl[nfl - 1] / 2 + 1;
  else if (!strcmp(ty->u.en.value, "IRFFT")) dims[rank - 1] = fl[nfl - 1];
  return NULL;
}

/* stablehlo.dot (legacy): vector.vector, matrix.vector, vector.matrix,
 * matrix.matrix. */
static hlo_status infer_dot_legacy(hlo_op *op, uint32_t rank, int64_t *dims) {
  const hlo_type *a = opnd(op, 0), *b = opnd(op, 1);
  if (!a || !b) return ierr(op, HLO_UNIMPLEMENTED, "operands are not static tensors");
  uint32_t k = 0;
  if (a->rank == 2) dims[k++] = a->dims[0];
  if (b->rank == 2) dims[k++] = b->dims[1];
  if (k != rank || a->rank > 2 || b->rank > 2)
    return ierr(op, HLO_INVALID_ARGUMENT, "result rank does not match the operands");
  return NULL;
}

/* stablehlo.einsum / unary_einsum: einsum_config "ab,bc->ac" (one letter per
 * dimension); each result letter takes the size it has in the operands. */
static hlo_status infer_einsum(hlo_op *op, uint32_t rank, int64_t *dims) {
  const hlo_attr *c = op_attr(op, "einsum_config");
  if (!c || c->kind != ATTR_STRING) return ierr(op, HLO_INVALID_ARGUMENT, "no einsum_config");
  int64_t size[256];
  for (int i = 0; i < 256; i++) size[i] = HLO_DYN;
  const char *s = c->u.str.s, *e = s + c->u.str.len;
  uint32_t k = 0, d = 0;
  const hlo_type *t = opnd(op, 0);
  for (; s < e && !(s[0] == '-' && s + 1 < e && s[1] == '>'); s++) {
    if (*s == ',') { t = opnd(op, ++k); d = 0; continue; }
    if (*s == ' ') continue;
    if (!t || d >= t->rank) return ierr(op, HLO_INVALID_ARGUMENT, "einsum_config does not match the operands");
    size[(unsigned char)*s] = t->dims[d++];
  }
  if (s >= e) return ierr(op, HLO_INVALID_ARGUMENT, "einsum_config has no '->'");
  d = 0;
  for (s += 2; s < e; s++) {
    if (*s == ' ') continue;
    if (d >= rank || size[(unsigned char)*s] == HLO_DYN)
      return ierr(op, HLO_INVALID_ARGUMENT, "einsum_config does not match the result");
    dims[d++] = size[(unsigned char)*s];
  }
  if (d != rank) return ierr(op, HLO_INVALID_ARGUMENT, "einsum_config does not match the result");
  return NULL;
}

/* chlo.broadcast_*: numpy broadcasting of the operands to the result rank
 * (trailing dimensions aligned, or operand dimension i at result dimension
 * broadcast_dimensions[i]); per dimension the sizes other than 1 agree. */
static hlo_status infer_chlo_broadcast(hlo_module_ir *m, hlo_op *op, uint32_t rank,
                                       int64_t *dims) {
  int64_t *bd;
  uint32_t nbd;
  if (!ints_attr(m, op, "broadcast_dimensions", &bd, &nbd))
    return ierr(op, HLO_INVALID_ARGUMENT, "malformed broadcast_dimensions");
  for (uint32_t d = 0; d < rank; d++) dims[d] = 1;
  for (uint32_t i = 0; i < op->num_operands; i++) {
    const hlo_type *t = opnd(op, i);
    if (!t) return ierr(op, HLO_UNIMPLEMENTED, "operands are not static tensors");
    if (t->rank > rank) return ierr(op, HLO_INVALID_ARGUMENT, "an operand's rank exceeds the result's");
    bool explicit_dims = nbd && nbd == t->rank && t->rank < rank;
    for (uint32_t j = 0; j < t->rank; j++) {
      int64_t rd = explicit_dims ? bd[j] : (int64_t)(rank - t->rank + j);
      if (rd < 0 || rd >= rank) return ierr(op, HLO_INVALID_ARGUMENT, "bad broadcast_dimensions");
      if (t->dims[j] == 1) continue;
      if (dims[rd] != 1 && dims[rd] != t->dims[j]) {
        char msg[160];
        snprintf(msg, sizeof msg, "operand sizes %lld and %lld cannot be broadcast together",
                 (long long)dims[rd], (long long)t->dims[j]);
        return ierr(op, HLO_INVALID_ARGUMENT, msg);
      }
      dims[rd] = t->dims[j];
    }
  }
  return NULL;
}

/* The number of processes in each group of a collective's replica_groups
 * (a G x N dense attribute: N), or 1 when it has none. */
static int64_t group_size(const hlo_op *op) {
  const hlo_attr *g = op_attr(op, "replica_groups");
  if (g && g->kind == ATTR_DENSE && g->u.dense.type->rank == 2 && g->u.dense.type->dims[1] > 0)
    return g->u.dense.type->dims[1];
  return 1;
}

/* The shape of tensor result `ri` of `op` into dims[0..rank). */
static hlo_status infer_one(hlo_module_ir *m, hlo_op *op, uint32_t ri, const hlo_type *rt,
                            int64_t *dims) {
  uint32_t rank = rt->rank;
  const hlo_type *x = opnd(op, 0);
  int64_t *v;
  uint32_t n;
  if (op_flags(op->opcode) & OPF_ELEMENTWISE) {
    /* the operand of highest rank (select's predicate and clamp's bounds
     * may be scalars) */
    const hlo_type *big = NULL;
    for (uint32_t i = 0; i < op->num_operands; i++) {
      const hlo_type *t = opnd(op, i);
      if (!t) return ierr(op, HLO_UNIMPLEMENTED, "operands are not static tensors");
      if (!big || t->rank > big->rank) big = t;
    }
    if (!big) return ierr(op, HLO_UNIMPLEMENTED, "no operands");
    if (op->opcode == OP_BITCAST_CONVERT && big->rank != rank) {
      /* element types of different widths add or drop the last dim */
      for (uint32_t d = 0; d < rank; d++)
        dims[d] = d < big->rank ? big->dims[d] : rt->dims[d];
      return NULL;
    }
    if (big->rank != rank) return ierr(op, HLO_INVALID_ARGUMENT, "rank differs from the operands'");
    memcpy(dims, big->dims, rank * sizeof *dims);
    return NULL;
  }
  switch (op->opcode) {
    case OP_DOT_GENERAL:
      return infer_dot(m, op, rank, dims);
    case OP_CONVOLUTION:
      return infer_conv(m, op, dims);
    case OP_GATHER:
      return infer_gather(m, op, rank, dims);
    case OP_REDUCE_WINDOW:
      return infer_reduce_window(m, op, dims);
    case OP_TRANSPOSE:
      if (!x || !ints_attr(m, op, "permutation", &v, &n) || n != rank || x->rank != rank)
        break;
      for (uint32_t d = 0; d < rank; d++) {
        if (v[d] < 0 || v[d] >= rank) return ierr(op, HLO_INVALID_ARGUMENT, "bad permutation");
        dims[d] = x->dims[v[d]];
      }
      return NULL;
    case OP_CONCATENATE: {
      int64_t dim = op_attr_int(op, "dimension", 0);
      if (!x || x->rank != rank || dim < 0 || dim >= rank) break;
      memcpy(dims, x->dims, rank * sizeof *dims);
      dims[dim] = 0;
      for (uint32_t i = 0; i < op->num_operands; i++) {
        const hlo_type *t = opnd(op, i);
        if (!t || t->rank != rank) return ierr(op, HLO_UNIMPLEMENTED, "operands are not static");
        dims[dim] += t->dims[dim];
      }
      return NULL;
    }
    case OP_SLICE: {
      int64_t *s, *l, *st;
      uint32_t ns, nl, nst;
      if (!x || !ints_attr(m, op, "start_indices", &s, &ns) ||
          !ints_attr(m, op, "limit_indices", &l, &nl) || !ints_attr(m, op, "strides", &st, &nst) ||
          ns != rank || nl != rank || (nst != rank && nst != 0))
        break;
      for (uint32_t d = 0; d < rank; d++) {
        int64_t stride = nst ? st[d] : 1;
        dims[d] = stride > 0 && l[d] > s[d] ? (l[d] - s[d] + stride - 1) / stride : 0;
      }
      return NULL;
    }
    case OP_DYNAMIC_SLICE:
      if (!ints_attr(m, op, "slice_sizes", &v, &n) || n != rank) break;
      memcpy(dims, v, rank * sizeof *dims);
      return NULL;
    case OP_PAD: {
      int64_t *lo, *hi, *in;
      uint32_t a, b, c;
      if (!x || !ints_attr(m, op, "edge_padding_low", &lo, &a) ||
          !ints_attr(m, op, "edge_padding_high", &hi, &b) ||
          !ints_attr(m, op, "interior_padding", &in, &c) || a != rank || b != rank ||
          (c != rank && c != 0) || x->rank != rank)
        break;
      for (uint32_t d = 0; d < rank; d++) {
        int64_t e = x->dims[d], i = c ? in[d] : 0;
        dims[d] = lo[d] + hi[d] + e + (e > 0 ? (e - 1) * i : 0);
        if (dims[d] < 0) return ierr(op, HLO_INVALID_ARGUMENT, "padding gives a negative size");
      }
      return NULL;
    }
    case OP_BROADCAST_IN_DIM:
      if (!x || !ints_attr(m, op, "broadcast_dimensions", &v, &n) || n != x->rank) break;
      memcpy(dims, rt->dims, rank * sizeof *dims);
      for (uint32_t i = 0; i < n; i++)
        if (v[i] >= 0 && v[i] < rank && dims[v[i]] == HLO_DYN && x->dims[i] != 1)
          dims[v[i]] = x->dims[i];
      for (uint32_t d = 0; d < rank; d++)
        if (dims[d] == HLO_DYN) return ierr(op, HLO_UNIMPLEMENTED, "result size is not known");
      return NULL;
    case OP_RESHAPE: {
      int64_t count = x ? type_num_elements(x) : -1, known = 1;
      int dyn = -1;
      if (count < 0) break;
      for (uint32_t d = 0; d < rank; d++) {
        if (rt->dims[d] != HLO_DYN) { known *= rt->dims[d]; continue; }
        if (dyn >= 0) return ierr(op, HLO_UNIMPLEMENTED, "more than one unknown size");
        dyn = (int)d;
      }
      memcpy(dims, rt->dims, rank * sizeof *dims);
      if (dyn >= 0) dims[dyn] = known ? count / known : 0;
      return NULL;
    }
    case OP_REDUCE: {
      if (!x || !ints_attr(m, op, "dimensions", &v, &n)) break;
      uint32_t k = 0;
      for (uint32_t d = 0; d < x->rank && k < rank; d++)
        if (!contains(v, n, d)) dims[k++] = x->dims[d];
      if (k != rank) break;
      return NULL;
    }
    case OP_MAP:
    case OP_REVERSE:
    case OP_DYNAMIC_UPDATE_SLICE:
    case OP_SELECT_AND_SCATTER:
    case OP_CHOLESKY:
    case OP_REDUCE_PRECISION:
      if (!x || x->rank != rank) break;
      memcpy(dims, x->dims, rank * sizeof *dims);
      return NULL;
    case OP_UNIFORM_QUANTIZE:
    case OP_UNIFORM_DEQUANTIZE:
    case OP_CHLO_NEXT_AFTER:
    case OP_CHLO_POLYGAMMA:
    case OP_CHLO_ZETA:
    case OP_CHLO_MULHI:
    case OP_CHLO_CONSTANT_LIKE:
    case OP_BATCH_NORM_INFERENCE:
    case OP_COLLECTIVE_PERMUTE:
    case OP_COLLECTIVE_BROADCAST:
    case OP_CROSS_REPLICA_SUM:
    case OP_SDY_SHARDING_CONSTRAINT:
    case OP_SDY_RESHARD:
    case OP_SDY_PROPAGATION_BARRIER:
      if (!x || x->rank != rank) break;
      memcpy(dims, x->dims, rank * sizeof *dims);
      return NULL;
    case OP_ALL_REDUCE:
    case OP_ALL_GATHER:
    case OP_REDUCE_SCATTER:
    case OP_ALL_TO_ALL: {
      /* variadic: result ri comes from operand ri */
      const hlo_type *t = opnd(op, ri);
      if (!t || t->rank != rank) break;
      memcpy(dims, t->dims, rank * sizeof *dims);
      int64_t g = group_size(op);
      if (op->opcode == OP_ALL_GATHER || op->opcode == OP_REDUCE_SCATTER) {
        int64_t d = op_attr_int(op, op->opcode == OP_ALL_GATHER ? "all_gather_dim"
                                                                : "scatter_dimension", -1);
        if (d < 0 || d >= rank) break;
        dims[d] = op->opcode == OP_ALL_GATHER ? dims[d] * g : dims[d] / g;
      } else if (op->opcode == OP_ALL_TO_ALL) {
        int64_t sd = op_attr_int(op, "split_dimension", -1);
        int64_t cd = op_attr_int(op, "concat_dimension", -1);
        int64_t sc = op_attr_int(op, "split_count", 0);
        if (sd < 0 || sd >= rank || cd < 0 || cd >= rank || sc <= 0) break;
        dims[sd] /= sc;
        dims[cd] *= sc;
      }
      return NULL;
    }
    case OP_RNG_BIT_GENERATOR:
      /* output_state has initial_state's shape; output's is declared */
      if (ri != 0 || !x || x->rank != rank) break;
      memcpy(dims, x->dims, rank * sizeof *dims);
      return NULL;
    case OP_BATCH_NORM_TRAINING:
    case OP_BATCH_NORM_GRAD: {
      /* result 0 has the operand's shape; the others are [dim(operand,
       * feature_index)] (spec C4-C7) */
      int64_t fi = op_attr_int(op, "feature_index", -1);
      if (!x || fi < 0 || fi >= x->rank) break;
      if (ri == 0) {
        if (x->rank != rank) break;
        memcpy(dims, x->dims, rank * sizeof *dims);
      } else {
        if (rank != 1) break;
        dims[0] = x->dims[fi];
      }
      return NULL;
    }
    case OP_BROADCAST: {
      if (!x || !ints_attr(m, op, "broadcast_sizes", &v, &n) || n + x->rank != rank) break;
      memcpy(dims, v, n * sizeof *dims);
      memcpy(dims + n, x->dims, x->rank * sizeof *dims);
      return NULL;
    }
    case OP_DOT:
      return infer_dot_legacy(op, rank, dims);
    case OP_EINSUM:
    case OP_UNARY_EINSUM:
      return infer_einsum(op, rank, dims);
    case OP_FFT:
      return infer_fft(m, op, rank, dims);
    case OP_CHLO_TOP_K: {
      int64_t k = op_attr_int(op, "k", -1);
      if (!x || x->rank != rank || rank == 0 || k < 0 || k > x->dims[rank - 1]) break;
      memcpy(dims, x->dims, rank * sizeof *dims);
      dims[rank - 1] = k;
      return NULL;
    }
    case OP_CHLO_BROADCAST_ADD: case OP_CHLO_BROADCAST_AND: case OP_CHLO_BROADCAST_ATAN2:
    case OP_CHLO_BROADCAST_COMPARE: case OP_CHLO_BROADCAST_COMPLEX:
    case OP_CHLO_BROADCAST_DIVIDE: case OP_CHLO_BROADCAST_MAXIMUM:
    case OP_CHLO_BROADCAST_MINIMUM: case OP_CHLO_BROADCAST_MULTIPLY:
    case OP_CHLO_BROADCAST_NEXT_AFTER: case OP_CHLO_BROADCAST_OR:
    case OP_CHLO_BROADCAST_POLYGAMMA: case OP_CHLO_BROADCAST_POWER:
    case OP_CHLO_BROADCAST_REMAINDER: case OP_CHLO_BROADCAST_SELECT:
    case OP_CHLO_BROADCAST_SHIFT_LEFT: case OP_CHLO_BROADCAST_SHIFT_RIGHT_ARITHMETIC:
    case OP_CHLO_BROADCAST_SHIFT_RIGHT_LOGICAL: case OP_CHLO_BROADCAST_SUBTRACT:
    case OP_CHLO_BROADCAST_XOR: case OP_CHLO_BROADCAST_ZETA:
      return infer_chlo_broadcast(m, op, rank, dims);
    case OP_TRIANGULAR_SOLVE: {
      const hlo_type *b = opnd(op, 1);
      if (!b || b->rank != rank) break;
      memcpy(dims, b->dims, rank * sizeof *dims);
      return NULL;
    }
    default:
      return ierr(op, HLO_UNIMPLEMENTED,
                  "cannot infer a static result shape for this op (its operands or result "
                  "stay dynamic)");
  }
  return ierr(op, HLO_INVALID_ARGUMENT, "malformed attributes or operands");
}

/* ------------------------------------------- where a size comes from */

/* Describes where dimension `d` of `v` comes from, following it back
 * through ops that keep it (elementwise ops, broadcast_in_dim, transpose,
 * loop-carried values) to an argument of the entry function: "input 1 dim
 * 0 (7)"; else "operand K dim D (N)" of `op`. */
static void dim_origin(const hlo_op *op, uint32_t k, uint32_t d, char *buf, size_t n) {
  const hlo_value *v = op->operands[k];
  int64_t size = v->type->dims[d];
  for (int depth = 0; depth < 256; depth++) {
    const hlo_op *def = v->def;
    if (!def) {
      const hlo_region *r = v->block ? v->block->parent : NULL;
      const hlo_op *owner = r ? r->parent : NULL;
      if (!owner) {
        snprintf(buf, n, "input %u dim %u (%lld)", v->index, d, (long long)size);
        return;
      }
      if ((owner->opcode != OP_WHILE && owner->opcode != OP_SDY_NAMED_COMPUTATION) ||
          v->index >= owner->num_operands)
        break;
      v = owner->operands[v->index];
      continue;
    }
    const hlo_value *next = NULL;
    uint32_t nd = d;
    if (op_flags(def->opcode) & OPF_ELEMENTWISE) {
      for (uint32_t i = 0; i < def->num_operands && !next; i++) {
        const hlo_type *t = def->operands[i]->type;
        if (t->kind == TYPE_TENSOR && t->rank == v->type->rank && t->dims[d] == size)
          next = def->operands[i];
      }
    } else if (def->opcode == OP_BROADCAST_IN_DIM || def->opcode == OP_TRANSPOSE) {
      const hlo_attr *a = op_attr(def, def->opcode == OP_TRANSPOSE ? "permutation"
                                                                   : "broadcast_dimensions");
      const hlo_type *t = def->operands[0]->type;
      if (a && a->kind == ATTR_DENSE_ARRAY && t->kind == TYPE_TENSOR) {
        for (uint32_t i = 0; i < a->u.darr.n && !next; i++) {
          if (def->opcode == OP_TRANSPOSE && i == d && a->u.darr.ints[i] < t->rank &&
              t->dims[a->u.darr.ints[i]] == size) {
            next = def->operands[0];
            nd = (uint32_t)a->u.darr.ints[i];
          } else if (def->opcode == OP_BROADCAST_IN_DIM && a->u.darr.ints[i] == d &&
                     i < t->rank && t->dims[i] == size) {
            next = def->operands[0];
            nd = i;
          }
        }
      }
    }
    if (!next) break;
    v = next;
    d = nd;
  }
  snprintf(buf, n, "operand %u dim %u (%lld)", k, d, (long long)op->operands[k]->type->dims[d]);
}

/* An elementwise op (and chlo's same-shape binary ops) needs operands of
 * one shape (select's predicate and clamp's bounds may be scalars) and a
 * result of that shape. Once the inputs' sizes are in, a mismatch is the
 * inputs' fault: say which sizes conflict, naming the inputs. */
static hlo_status check_same_shape(const hlo_op *op) {
  const hlo_type *rt = op->num_results == 1 ? op->results[0].type : NULL;
  if (!rt || rt->kind != TYPE_TENSOR || op->opcode == OP_BITCAST_CONVERT) return NULL;
  int first = -1;
  for (uint32_t i = 0; i < op->num_operands; i++) {
    const hlo_type *t = op->operands[i]->type;
    if (t->kind != TYPE_TENSOR || !type_is_static(t) || t->rank != rt->rank) continue;
    if (first < 0) { first = (int)i; continue; }
    const hlo_type *f = op->operands[first]->type;
    for (uint32_t d = 0; d < t->rank; d++) {
      if (t->dims[d] == f->dims[d]) continue;
      char a[160], b[160];
      dim_origin(op, (uint32_t)first, d, a, sizeof a);
      dim_origin(op, i, d, b, sizeof b);
      return status_at(HLO_INVALID_ARGUMENT, &op->loc,
                       "the sizes of %s and %s must agree for this %s", a, b,
                       op_name(op->opcode) + (strncmp(op_name(op->opcode), "stablehlo.", 10)
                                                  ? 0 : 10));
    }
  }
  if (first < 0) return NULL;
  const hlo_type *f = op->operands[first]->type;
  for (uint32_t d = 0; d < rt->rank; d++) {
    if (rt->dims[d] == HLO_DYN || rt->dims[d] == f->dims[d]) continue;
    char a[160], want[256];
    dim_origin(op, (uint32_t)first, d, a, sizeof a);
    refine_type_str(rt, want, sizeof want);
    return status_at(HLO_INVALID_ARGUMENT, &op->loc,
                     "the size of %s must be %lld for this %s, whose result type is %s", a,
                     (long long)rt->dims[d],
                     op_name(op->opcode) + (strncmp(op_name(op->opcode), "stablehlo.", 10)
                                                ? 0 : 10),
                     want);
  }
  return NULL;
}

hlo_status refine_infer_op(hlo_module_ir *m, hlo_op *op) {
  if (op_flags(op->opcode) & OPF_ELEMENTWISE || op->opcode == OP_CHLO_NEXT_AFTER ||
      op->opcode == OP_CHLO_POLYGAMMA || op->opcode == OP_CHLO_ZETA ||
      op->opcode == OP_CHLO_MULHI)
    HLO_TRY(check_same_shape(op));
  bool all_static = true;
  for (uint32_t i = 0; i < op->num_results; i++)
    if (!type_is_static(op->results[i].type)) all_static = false;
  if (all_static) return NULL;
  switch (op->opcode) {
    case OP_WHILE:
    case OP_OPTIMIZATION_BARRIER:
    case OP_SORT:
    case OP_SCATTER:
      /* results have the operands' types (scatter: of its inputs) */
      for (uint32_t i = 0; i < op->num_results; i++) {
        if (i >= op->num_operands) return ierr(op, HLO_INVALID_ARGUMENT, "too few operands");
        HLO_TRY(refine_set_result(op, i, op->operands[i]->type));
      }
      return NULL;
    case OP_IF:
    case OP_CASE:
    case OP_SDY_NAMED_COMPUTATION: {
      if (op->num_regions == 0 || !op->regions[0].block.last)
        return ierr(op, HLO_INVALID_ARGUMENT, "no branch");
      const hlo_op *ret = op->regions[0].block.last;
      if (ret->num_operands != op->num_results)
        return ierr(op, HLO_INVALID_ARGUMENT, "branch returns the wrong count");
      for (uint32_t i = 0; i < op->num_results; i++)
        HLO_TRY(refine_set_result(op, i, ret->operands[i]->type));
      return NULL;
    }
    case OP_TUPLE: {
      hlo_type *el[256];
      if (op->num_operands > 256) return ierr(op, HLO_UNIMPLEMENTED, "tuple too long");
      for (uint32_t i = 0; i < op->num_operands; i++) el[i] = op->operands[i]->type;
      return refine_set_result(op, 0, type_tuple(&m->arena, op->num_operands, el));
    }
    case OP_GET_TUPLE_ELEMENT: {
      const hlo_type *t = op->operands[0]->type;
      int64_t k = op_attr_int(op, "index", -1);
      if (t->kind != TYPE_TUPLE || k < 0 || k >= t->num_elems)
        return ierr(op, HLO_INVALID_ARGUMENT, "bad tuple index");
      return refine_set_result(op, 0, t->elems[k]);
    }
    default:
      break;
  }
  for (uint32_t i = 0; i < op->num_results; i++) {
    hlo_type *rt = op->results[i].type;
    if (type_is_static(rt)) continue;
    if (rt->kind != TYPE_TENSOR || rt->rank > MAXR)
      return ierr(op, HLO_UNIMPLEMENTED, "a dynamic tuple result");
    int64_t dims[MAXR];
    if (op->opcode == OP_REDUCE && i > 0) {
      /* every result of a variadic reduce has the first one's shape */
      HLO_TRY(refine_set_result(op, i, refine_type_like(m, rt, rt->rank, op->results[0].type->dims)));
      continue;
    }
    HLO_TRY(infer_one(m, op, i, rt, dims));
    HLO_TRY(refine_set_result(op, i, refine_type_like(m, rt, rt->rank, dims)));
  }
  return NULL;
}
