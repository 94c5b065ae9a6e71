/* verify_linalg.c — constraint checks of the linear-algebra and numeric
 * kernels: dot_general (with precision_config and algorithm), dot,
 * triangular_solve, cholesky, fft, batch_norm_{inference,training,grad}, rng
 * and rng_bit_generator, following reference/stablehlo-spec.md. */
#include <stdio.h>
#include <string.h>
#include "ir/dot_algorithm.h"
#include "ir/element.h"
#include "ir/verify.h"

#define T(i) (op->operands[(i)]->type)
#define R(i) (op->results[(i)].type)

/* precision_config: an array of 0 or 2 enums DEFAULT/HIGH/HIGHEST; *all_default
 * tells whether every entry is DEFAULT. */
hlo_status vprecision(const hlo_op *op, const char *cid, bool *all_default) {
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

/* The `algorithm` attribute (C21-C24), and whether hlo runs it: the spec
 * leaves the supported combinations to the implementation and asks for an
 * error, not a fallback, on any other (dot_algorithm.h lists them). */
static hlo_status vdot_algorithm(vctx *c, const hlo_op *op, bool all_default, bool *out_any_f8) {
  const hlo_attr *alg = op_attr(op, "algorithm");
  *out_any_f8 = false;
  if (!alg) return NULL;
  hlo_dot_algorithm a;
  bool present;
  char err[160];
  if (!hlo_dot_algorithm_decode(alg, &a, &present, err, sizeof err)) return verr(op, "ATTR", "%s", err);
  if (!present) return NULL;
  if (!all_default) return verr(op, "C21", "precision_config must be DEFAULT when an algorithm is given");
  static const char *const f[3] = {"lhs_component_count", "rhs_component_count", "num_primitive_operations"};
  const int64_t v[3] = {a.lhs_components, a.rhs_components, a.primitive_ops};
  static const char *const ids[3] = {"C22", "C23", "C24"};
  for (int i = 0; i < 3; i++)
    if (v[i] <= 0) return verr(op, ids[i], "%s must be positive, is %lld", f[i], (long long)v[i]);
  char text[400];
  if (!hlo_dot_algorithm_match(&a)) {
    hlo_dot_algorithm_format(&a, text, sizeof text);
    return status_note(verr(op, "ALG", "unsupported dot algorithm <%s>", text),
                       "hlo runs %s", hlo_dot_algorithm_supported());
  }
  /* Float operands are rounded to the precision types; integer ones are
   * multiplied exactly, as the StableHLO interpreter's own test of an
   * algorithm on i64 operands expects; complex ones hlo does not run. */
  for (int i = 0; i < 3; i++) {
    const hlo_type *t = i < 2 ? T(i) : R(0);
    if (!t->quant && dtype_class(t->dtype) == HLO_CLASS_COMPLEX)
      return verr(op, "ALG", "dot algorithm %s on complex %s is not supported", a.preset,
                  vtype_str(c, t));
  }
  /* ANY_F8_ANY_F8_*: lhs and rhs may be different f8 types (JAX emits
   * f8E4M3FN x f8E5M2); the precision types say which. */
  *out_any_f8 = !strncmp(a.preset, "ANY_F8", 6) && T(0)->dtype == a.lhs_type &&
                T(1)->dtype == a.rhs_type && !T(0)->quant && !T(1)->quant;
  return NULL;
}

hlo_status verify_dot_general(vctx *c, const hlo_op *op) {
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
  bool any_f8;
  HLO_TRY(vdot_algorithm(c, op, all_default, &any_f8));
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
  if (!l->quant && !rh->quant && !any_f8 && !velem_eq(l, rh))
    return verr(op, "C13", "lhs and rhs element types differ (%s vs %s)", vtype_str(c, l), vtype_str(c, rh));
  return NULL;
}

hlo_status verify_dot(vctx *c, const hlo_op *op) {
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

/* ----------------------------------------------------------- linalg */

hlo_status verify_triangular_solve(vctx *c, const hlo_op *op) {
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

hlo_status verify_cholesky(vctx *c, const hlo_op *op) {
  HLO_TRY(vcount(op, 1, 1, 1, 1));
  HLO_TRY(vall_tensors(op));
  const hlo_type *a = T(0);
  if (!a->quant && !vtype_eq(a, R(0))) return verr(op, "C1", "result type differs from a");
  if (a->rank < 2) return verr(op, "C2", "a must have rank >= 2, has %u", a->rank);
  if (!vdim_eq(a->dims[a->rank - 2], a->dims[a->rank - 1])) return verr(op, "C3", "a must be square (%s)", vtype_str(c, a));
  return NULL;
}

hlo_status verify_fft(vctx *c, const hlo_op *op) {
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

hlo_status verify_rng_bit_generator(vctx *c, const hlo_op *op) {
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

hlo_status verify_rng(vctx *c, const hlo_op *op) {
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

hlo_status verify_batch_norm(vctx *c, const hlo_op *op, int nin, int nout) {
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
