/* verify_dynamic.c — constraint checks of the ops whose shapes come from
 * operands: dynamic_broadcast_in_dim, dynamic_iota, dynamic_pad,
 * dynamic_reshape, real_dynamic_slice, get_dimension_size and
 * set_dimension_size, following reference/stablehlo-spec.md. */
#include <stdio.h>
#include <string.h>
#include "ir/element.h"
#include "ir/verify.h"

#define T(i) (op->operands[(i)]->type)
#define R(i) (op->results[(i)].type)

hlo_status verify_dynamic_broadcast_in_dim(vctx *c, const hlo_op *op) {
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

hlo_status verify_get_dimension_size(vctx *c, const hlo_op *op) {
  HLO_TRY(vcount(op, 1, 1, 1, 1));
  int64_t d;
  HLO_TRY(vint(op, "dimension", true, 0, &d));
  if (!vis_tensor(T(0)) || d < 0 || d >= (int64_t)T(0)->rank) return verr(op, "C1", "dimension %lld is out of range", (long long)d);
  if (!vis_scalar(R(0)) || R(0)->dtype != HLO_I32) return verr(op, "O1", "result must be tensor<i32>, got %s", vtype_str(c, R(0)));
  return NULL;
}

hlo_status verify_set_dimension_size(vctx *c, const hlo_op *op) {
  HLO_TRY(vcount(op, 2, 2, 1, 1));
  HLO_TRY(vall_tensors(op));
  int64_t d;
  HLO_TRY(vint(op, "dimension", true, 0, &d));
  if (d < 0 || d >= (int64_t)T(0)->rank) return verr(op, "C1", "dimension %lld is out of range", (long long)d);
  if (!vis_scalar(T(1)) || !dtype_is_int(T(1)->dtype)) return verr(op, "I2", "size must be a 0-dimensional integer tensor");
  if (R(0)->rank != T(0)->rank || !velem_eq(R(0), T(0))) return verr(op, "C2", "result must have the operand's rank and element type");
  return NULL;
}

hlo_status verify_real_dynamic_slice(vctx *c, const hlo_op *op) {
  HLO_TRY(vcount(op, 4, 4, 1, 1));
  HLO_TRY(vall_tensors(op));
  if (!velem_eq(T(0), R(0))) return verr(op, "C1", "result element type differs from operand");
  for (uint32_t i = 1; i < 4; i++)
    if (T(i)->rank != 1 || !vdim_eq(T(i)->dims[0], T(0)->rank))
      return verr(op, "C2", "operand #%u must be 1-D of size rank(operand) = %u", i, T(0)->rank);
  if (R(0)->rank != T(0)->rank) return verr(op, "C5", "result rank differs from operand");
  return NULL;
}

hlo_status verify_dynamic_iota(vctx *c, const hlo_op *op) {
  HLO_TRY(vcount(op, 1, 1, 1, 1));
  HLO_TRY(vall_tensors(op));
  int64_t d;
  HLO_TRY(vint(op, "iota_dimension", true, 0, &d));
  if (T(0)->rank != 1 || !vdim_eq(T(0)->dims[0], R(0)->rank))
    return verr(op, "C2", "output_shape must be 1-D of size rank(result) = %u", R(0)->rank);
  if (d < 0 || d >= (int64_t)R(0)->rank) return verr(op, "C1", "iota_dimension %lld is out of range", (long long)d);
  return NULL;
}

hlo_status verify_dynamic_pad(vctx *c, const hlo_op *op) {
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

hlo_status verify_dynamic_reshape(vctx *c, const hlo_op *op) {
  HLO_TRY(vcount(op, 2, 2, 1, 1));
  HLO_TRY(vall_tensors(op));
  int64_t a = type_num_elements(T(0)), b = type_num_elements(R(0));
  if (a >= 0 && b >= 0 && a != b) return verr(op, "C2", "operand has %lld elements, result %lld", (long long)a, (long long)b);
  if (T(1)->rank != 1 || !vdim_eq(T(1)->dims[0], R(0)->rank))
    return verr(op, "C4", "output_shape must be 1-D of size rank(result) = %u", R(0)->rank);
  return NULL;
}
