/* interp_quant.c — quantized tensors in the interpreter: the spec's
 * dequantize and quantize ("Quantization computations"), and the kernels of
 * uniform_quantize and uniform_dequantize. */
#include <math.h>
#include <string.h>
#include "interp/interp.h"
#include "support/float.h"

/* Coordinate of linear index `lin` along dimension `axis` of type `t`. */
static int64_t axis_coord(const hlo_type *t, int64_t lin, int32_t axis) {
  int64_t stride = 1;
  for (uint32_t d = t->rank; d-- > (uint32_t)axis + 1;) stride *= t->dims[d];
  return (lin / stride) % t->dims[axis];
}

/* Scale and zero point applying to element `lin` of a tensor of type `t`. */
static void params_at(const hlo_type *t, int64_t lin, double *scale, int64_t *zp) {
  const quant_params *q = t->quant;
  uint32_t k = 0;
  if (q->axis >= 0 && (uint32_t)q->axis < t->rank && q->num_scales > 1) {
    int64_t c = axis_coord(t, lin, q->axis);
    k = c < (int64_t)q->num_scales ? (uint32_t)c : q->num_scales - 1;
  }
  *scale = q->scales[k];
  *zp = q->zero_points ? q->zero_points[k] : 0;
}

/* x rounded to float type `e` (no-op for f64). */
static double rnd(hlo_dtype e, double x) { return e == HLO_F64 ? x : float_round(e, x); }

hlo_status interp_dequantize(interp *it, const hlo_op *op, const tensor *q, tensor **out) {
  *out = NULL;
  const hlo_type *qt = q->type;
  if (!qt || qt->kind != TYPE_TENSOR || !qt->quant)
    return interp_error(op, HLO_INTERNAL, "dequantize of a non-quantized tensor");
  const hlo_type *et = interp_expressed_type(it, qt);
  if (!et) return interp_error(op, HLO_RESOURCE_EXHAUSTED, "out of memory");
  tensor *r;
  HLO_TRY(tensor_create(et, &op->loc, &r));
  hlo_dtype e = et->dtype;
  for (int64_t i = 0; i < q->num_elems; i++) {
    double scale;
    int64_t zp;
    params_at(qt, i, &scale, &zp);
    int64_t s = elem_get_i64(qt->dtype, q->data, i);
    double v = rnd(e, rnd(e, (double)(s - zp)) * rnd(e, scale));
    elem_set_f64(e, r->data, i, v);
  }
  *out = r;
  return NULL;
}

hlo_status interp_quantize(interp *it, const hlo_op *op, const tensor *x, const hlo_type *qt,
                           tensor **out) {
  (void)it;
  *out = NULL;
  if (!qt || qt->kind != TYPE_TENSOR || !qt->quant)
    return interp_error(op, HLO_INTERNAL, "quantize to a non-quantized type");
  if (x->type->kind != TYPE_TENSOR || x->num_elems != type_num_elements(qt))
    return interp_error(op, HLO_INTERNAL, "quantize: shape mismatch");
  tensor *r;
  HLO_TRY(tensor_create(qt, &op->loc, &r));
  const quant_params *q = qt->quant;
  hlo_dtype e = q->expressed;
  double lo = rnd(e, (double)q->storage_min), hi = rnd(e, (double)q->storage_max);
  for (int64_t i = 0; i < x->num_elems; i++) {
    double scale;
    int64_t zp;
    params_at(qt, i, &scale, &zp);
    double v = elem_get_f64(x->type->dtype, x->data, i);
    v = rnd(e, v / rnd(e, scale));
    v = rnd(e, v + rnd(e, (double)zp));
    if (v < lo) v = lo;
    if (v > hi) v = hi;
    v = nearbyint(v); /* round_nearest_even under the default rounding mode */
    int64_t s = isnan(v) ? 0 : (int64_t)v;
    elem_set_i64(qt->dtype, r->data, i, s);
  }
  *out = r;
  return NULL;
}

/* uniform_quantize: float → quantized is quantize; quantized → quantized
 * is quantize(dequantize(operand)) (the spec's uniform_quantize). */
static hlo_status k_uniform_quantize(interp *it, const hlo_op *op, tensor *const *in,
                                     const hlo_type *const *rt, tensor **out) {
  const hlo_type *qt = rt[0];
  if (!qt->quant)
    return interp_error(op, HLO_INVALID_ARGUMENT, "result must be a quantized tensor");
  if (in[0]->type->quant) {
    tensor *f;
    HLO_TRY(interp_dequantize(it, op, in[0], &f));
    hlo_status st = interp_quantize(it, op, f, qt, out);
    tensor_release(f);
    return st;
  }
  return interp_quantize(it, op, in[0], qt, out);
}

/* uniform_dequantize: the spec's dequantize. */
static hlo_status k_uniform_dequantize(interp *it, const hlo_op *op, tensor *const *in,
                                       const hlo_type *const *rt, tensor **out) {
  if (!in[0]->type->quant)
    return interp_error(op, HLO_INVALID_ARGUMENT, "operand must be a quantized tensor");
  tensor *f;
  HLO_TRY(interp_dequantize(it, op, in[0], &f));
  if (f->type->dtype != rt[0]->dtype) {
    /* Expressed type differs from the declared result: convert. */
    tensor *r;
    hlo_status st = tensor_create(rt[0], &op->loc, &r);
    if (st) {
      tensor_release(f);
      return st;
    }
    for (int64_t i = 0; i < f->num_elems; i++)
      elem_set_f64(rt[0]->dtype, r->data, i, elem_get_f64(f->type->dtype, f->data, i));
    tensor_release(f);
    f = r;
  } else {
    f->type = rt[0];
  }
  *out = f;
  return NULL;
}

void interp_register_quant(interp_kernel *table) {
  if (!table[OP_UNIFORM_QUANTIZE]) table[OP_UNIFORM_QUANTIZE] = k_uniform_quantize;
  if (!table[OP_UNIFORM_DEQUANTIZE]) table[OP_UNIFORM_DEQUANTIZE] = k_uniform_dequantize;
}
