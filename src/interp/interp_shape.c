/* interp_shape.c — the reference interpreter's data-movement kernels:
 * constant, iota, broadcast_in_dim, broadcast, reshape, transpose, slice,
 * dynamic_slice, dynamic_update_slice, real_dynamic_slice, concatenate, pad,
 * reverse, tuple, get_tuple_element, get_dimension_size, set_dimension_size
 * and the dynamic_* shape variants; plus the helpers of
 * interp_shape_internal.h shared with interp_gather.c, interp_reduce.c and
 * interp_sort.c.
 *
 * Each kernel walks the result's index space as the spec's semantics read
 * (reference/stablehlo-spec.md, section of the op's name) and copies whole
 * elements (hlo_dtype_size bytes), so every element type moves unchanged.
 * Attributes are not trusted: every operand index computed from them is
 * bounds-checked, and a bad one is a located error, never a crash. */
#include <string.h>
#include "support/fill.h"
#include "interp/interp_shape_internal.h"
#include "interp/interp_util.h"

/* ------------------------------------------------------------ helpers */

hlo_status ish_attr_ints(const hlo_op *op, arena *a, const char *name, bool required,
                         int64_t **out, uint32_t *out_n) {
  *out = NULL;
  *out_n = 0;
  const hlo_attr *at = op_attr(op, name);
  if (!at) {
    if (required) return interp_error(op, HLO_INVALID_ARGUMENT, "missing attribute `%s`", name);
    return NULL;
  }
  if (!attr_as_ints(a, at, out, out_n))
    return interp_error(op, HLO_INVALID_ARGUMENT, "attribute `%s` is not an integer list", name);
  return NULL;
}

hlo_status ish_field_ints(const hlo_op *op, arena *a, const hlo_attr *st, const char *name,
                          int64_t **out, uint32_t *out_n) {
  *out = NULL;
  *out_n = 0;
  const hlo_attr *at = attr_field(st, name);
  if (!at) return NULL;
  if (at->kind == ATTR_INT) { /* a one-element list written as a scalar */
    int64_t *v = arena_alloc(a, sizeof *v);
    if (!v) return interp_error(op, HLO_RESOURCE_EXHAUSTED, "out of memory");
    *v = at->u.i.v;
    *out = v;
    *out_n = 1;
    return NULL;
  }
  if (!attr_as_ints(a, at, out, out_n))
    return interp_error(op, HLO_INVALID_ARGUMENT, "field `%s` is not an integer list", name);
  return NULL;
}

int64_t ish_field_int(const hlo_attr *st, const char *name, int64_t dflt) {
  const hlo_attr *at = attr_field(st, name);
  if (at && at->kind == ATTR_INT) return at->u.i.v;
  return dflt;
}

hlo_status ish_check_tensor(const hlo_op *op, const tensor *v, const char *what) {
  if (!v || !v->type || v->type->kind != TYPE_TENSOR)
    return interp_error(op, HLO_INVALID_ARGUMENT, "%s is not a tensor", what);
  if (v->type->rank > ISH_MAX_RANK)
    return interp_error(op, HLO_UNIMPLEMENTED, "%s has rank %u; at most %d is supported", what,
                        v->type->rank, ISH_MAX_RANK);
  return NULL;
}

hlo_status ish_check_result_type(const hlo_op *op, const hlo_type *t) {
  if (!t || t->kind != TYPE_TENSOR)
    return interp_error(op, HLO_INVALID_ARGUMENT, "result is not a tensor");
  if (!type_is_static(t))
    return interp_error(op, HLO_UNIMPLEMENTED, "result type has a dynamic shape");
  if (t->rank > ISH_MAX_RANK)
    return interp_error(op, HLO_UNIMPLEMENTED, "result has rank %u; at most %d is supported",
                        t->rank, ISH_MAX_RANK);
  return NULL;
}

hlo_status ish_check_same_dtype(const hlo_op *op, const hlo_type *t, const tensor *v) {
  if (t->dtype != v->type->dtype)
    return interp_error(op, HLO_INVALID_ARGUMENT,
                        "result element type %s differs from operand element type %s",
                        hlo_dtype_name(t->dtype), hlo_dtype_name(v->type->dtype));
  return NULL;
}

bool ish_same_dims(const hlo_type *a, const hlo_type *b) {
  if (a->rank != b->rank) return false;
  for (uint32_t d = 0; d < a->rank; d++)
    if (a->dims[d] != b->dims[d]) return false;
  return true;
}

bool ish_in_bounds(const int64_t *dims, uint32_t rank, const int64_t *idx) {
  for (uint32_t d = 0; d < rank; d++)
    if (idx[d] < 0 || idx[d] >= dims[d]) return false;
  return true;
}

int64_t ish_read_index(const tensor *v, int64_t i) {
  hlo_dtype t = v->type->dtype;
  if (dtype_class(t) == HLO_CLASS_UINT) {
    uint64_t u = elem_get_u64(t, v->data, i);
    return u > (uint64_t)INT64_MAX ? INT64_MAX : (int64_t)u;
  }
  return elem_get_i64(t, v->data, i);
}

hlo_status ish_check_int_tensor(const hlo_op *op, const tensor *v, const char *what) {
  HLO_TRY(ish_check_tensor(op, v, what));
  hlo_dtype_class c = dtype_class(v->type->dtype);
  if (c != HLO_CLASS_SINT && c != HLO_CLASS_UINT && c != HLO_CLASS_BOOL)
    return interp_error(op, HLO_INVALID_ARGUMENT, "%s must have an integer element type, not %s",
                        what, hlo_dtype_name(v->type->dtype));
  return NULL;
}

hlo_status ish_read_int_vector(const hlo_op *op, arena *a, const tensor *v, const char *what,
                               int64_t n, int64_t **out, uint32_t *out_n) {
  HLO_TRY(ish_check_int_tensor(op, v, what));
  if (v->type->rank > 1)
    return interp_error(op, HLO_INVALID_ARGUMENT, "%s must be 1-dimensional", what);
  if (n >= 0 && v->num_elems != n)
    return interp_error(op, HLO_INVALID_ARGUMENT, "%s has %lld elements; expected %lld", what,
                        (long long)v->num_elems, (long long)n);
  if (v->num_elems > ISH_MAX_RANK * 1024)
    return interp_error(op, HLO_INVALID_ARGUMENT, "%s is too long", what);
  int64_t *p = arena_calloc(a, v->num_elems ? (size_t)v->num_elems : 1, sizeof *p);
  if (!p) return interp_error(op, HLO_RESOURCE_EXHAUSTED, "out of memory");
  for (int64_t i = 0; i < v->num_elems; i++) p[i] = ish_read_index(v, i);
  *out = p;
  *out_n = (uint32_t)v->num_elems;
  return NULL;
}

void ish_convert_elem(hlo_dtype dt, void *dst, int64_t di, hlo_dtype st, const void *src,
                      int64_t si) {
  if (dt == st) {
    size_t sz = hlo_dtype_size(dt);
    memcpy((uint8_t *)dst + (size_t)di * sz, (const uint8_t *)src + (size_t)si * sz, sz);
    return;
  }
  hlo_dtype_class dc = dtype_class(dt), sc = dtype_class(st);
  switch (dc) {
  case HLO_CLASS_COMPLEX: {
    double re, im;
    elem_get_c128(st, src, si, &re, &im);
    elem_set_c128(dt, dst, di, re, im);
    break;
  }
  case HLO_CLASS_FLOAT:
    elem_set_f64(dt, dst, di, elem_get_f64(st, src, si));
    break;
  case HLO_CLASS_BOOL:
    if (sc == HLO_CLASS_FLOAT || sc == HLO_CLASS_COMPLEX)
      elem_set_i64(dt, dst, di, elem_get_f64(st, src, si) != 0);
    else
      elem_set_i64(dt, dst, di, elem_get_u64(st, src, si) != 0);
    break;
  default:
    if (sc == HLO_CLASS_UINT) elem_set_u64(dt, dst, di, elem_get_u64(st, src, si));
    else elem_set_i64(dt, dst, di, elem_get_i64(st, src, si));
    break;
  }
}

const hlo_type *ish_region_arg_type(interp *it, const hlo_region *r, uint32_t i,
                                    hlo_dtype fallback) {
  if (r && i < r->block.num_args) {
    const hlo_type *t = r->block.args[i].type;
    if (t && t->kind == TYPE_TENSOR && t->rank == 0) return t;
  }
  return interp_scalar_type(it, fallback);
}

hlo_status ish_scalar_from(const hlo_op *op, const hlo_type *t, const tensor *src, int64_t i,
                           tensor **out) {
  if (!t) return interp_error(op, HLO_RESOURCE_EXHAUSTED, "out of memory");
  tensor *s;
  HLO_TRY(tensor_create(t, &op->loc, &s));
  ish_convert_elem(t->dtype, s->data, 0, src->type->dtype, src->data, i);
  *out = s;
  return NULL;
}

hlo_status ish_run_body(interp *it, const hlo_op *op, const hlo_region *r,
                        tensor *const *args, uint32_t nargs, tensor **out, uint32_t nout) {
  uint32_t got = 0;
  HLO_TRY(interp_run_region(it, r, args, nargs, out, nout, &got));
  hlo_status st = NULL;
  if (got != nout) {
    st = interp_error(op, HLO_INVALID_ARGUMENT, "body returned %u values; expected %u", got, nout);
  } else {
    for (uint32_t i = 0; i < nout && !st; i++)
      if (!out[i] || !out[i]->type || out[i]->type->kind != TYPE_TENSOR || out[i]->num_elems != 1)
        st = interp_error(op, HLO_INVALID_ARGUMENT, "body result %u is not a 0-d tensor", i);
  }
  if (st) ish_release_all(out, got);
  return st;
}

void ish_release_all(tensor **v, uint32_t n) { iu_release_all(v, n); }

/* Checks that `op` has at least `n` operands. */
static hlo_status need_operands(const hlo_op *op, uint32_t n) {
  if (op->num_operands < n)
    return interp_error(op, HLO_INVALID_ARGUMENT, "expected %u operands, got %u", n,
                        op->num_operands);
  return NULL;
}

/* Creates the result tensor of static tensor type `t`. */
static hlo_status new_result(const hlo_op *op, const hlo_type *t, tensor **out) {
  HLO_TRY(ish_check_result_type(op, t));
  return tensor_create(t, &op->loc, out);
}

/* Copies element `si` of `s` to element `di` of `r` (same element type). */
static inline void copy_elem(tensor *r, int64_t di, const tensor *s, int64_t si) {
  size_t sz = hlo_dtype_size(r->type->dtype);
  memcpy(r->data + (size_t)di * sz, s->data + (size_t)si * sz, sz);
}

/* Writes the integer `v` to element `i` of `data` of type `t` as a value of
 * that type (iota's semantics: convert the index). */
static void set_from_int(hlo_dtype t, void *data, int64_t i, int64_t v) {
  switch (dtype_class(t)) {
  case HLO_CLASS_FLOAT: elem_set_f64(t, data, i, (double)v); break;
  case HLO_CLASS_COMPLEX: elem_set_c128(t, data, i, (double)v, 0); break;
  case HLO_CLASS_UINT: elem_set_u64(t, data, i, (uint64_t)v); break;
  default: elem_set_i64(t, data, i, v); break;
  }
}

/* The common prologue of a one-operand data-movement kernel: checks the
 * operand and result, creates the result. */
static hlo_status unary_prologue(const hlo_op *op, tensor *const *in, const hlo_type *t,
                                 tensor **out) {
  HLO_TRY(need_operands(op, 1));
  HLO_TRY(ish_check_tensor(op, in[0], "operand"));
  HLO_TRY(ish_check_result_type(op, t));
  HLO_TRY(ish_check_same_dtype(op, t, in[0]));
  return tensor_create(t, &op->loc, out);
}

/* The located "operand index out of bounds" error. */
static hlo_status oob(const hlo_op *op, tensor *r) {
  tensor_release(r);
  return interp_error(op, HLO_OUT_OF_RANGE,
                      "operand index out of bounds (attributes inconsistent with the shapes)");
}

/* ----------------------------------------------------------- constant */

/* constant: result = value (spec "constant"). A quantized constant seen by a
 * kernel with a float result type is dequantized here:
 * (storage - zero_point) * scale, per axis when the type says so. */
static hlo_status k_constant(interp *it, const hlo_op *op, tensor *const *in,
                             const hlo_type *const *rt, tensor **out) {
  (void)it, (void)in;
  const hlo_attr *v = op_attr(op, "value");
  if (!v || v->kind != ATTR_DENSE || !v->u.dense.type || v->u.dense.type->kind != TYPE_TENSOR)
    return interp_error(op, HLO_UNIMPLEMENTED, "`value` is not a dense elements attribute");
  const hlo_type *t = rt[0];
  HLO_TRY(ish_check_result_type(op, t));
  int64_t n = type_num_elements(t);
  hlo_dtype st = v->u.dense.type->dtype, dt = t->dtype;
  size_t ssz = hlo_dtype_size(st);
  bool splat = v->u.dense.splat;
  if (v->u.dense.num_elems != n && !(splat && v->u.dense.num_elems >= 1))
    return interp_error(op, HLO_INVALID_ARGUMENT, "`value` has %lld elements; result has %lld",
                        (long long)v->u.dense.num_elems, (long long)n);
  if (n > 0 && (!v->u.dense.data || v->u.dense.nbytes < (splat ? ssz : (size_t)n * ssz)))
    return interp_error(op, HLO_INVALID_ARGUMENT, "`value` holds too few bytes");
  tensor *r;
  HLO_TRY(tensor_create(t, &op->loc, &r));
  const quant_params *q = op->num_results ? op->results[0].type->quant : NULL;
  if (!q) q = v->u.dense.type->quant;
  bool deq = q && !t->quant && dtype_class(dt) == HLO_CLASS_FLOAT;
  if (n == 0) {
    /* nothing to copy */
  } else if (!deq && dt == st && !splat) {
    memcpy(r->data, v->u.dense.data, (size_t)n * ssz);
  } else if (!deq && dt == st && splat) {
    /* a splat of hundreds of MB in milliseconds, not an element at a time */
    fill_elements(r->data, v->u.dense.data, (size_t)n, ssz);
  } else {
    int64_t inner = 1;
    if (deq && q->axis >= 0 && (uint32_t)q->axis < t->rank)
      for (uint32_t d = (uint32_t)q->axis + 1; d < t->rank; d++) inner *= t->dims[d];
    for (int64_t i = 0; i < n; i++) {
      int64_t si = splat ? 0 : i;
      if (deq) {
        uint32_t k = 0;
        if (q->axis >= 0 && (uint32_t)q->axis < t->rank && q->num_scales > 1)
          k = (uint32_t)((i / inner) % t->dims[q->axis]);
        if (k >= q->num_scales) k = 0;
        double s = elem_get_f64(st, v->u.dense.data, si);
        double zp = q->zero_points ? (double)q->zero_points[k] : 0.0;
        elem_set_f64(dt, r->data, i, (s - zp) * q->scales[k]);
      } else {
        ish_convert_elem(dt, r->data, i, st, v->u.dense.data, si);
      }
    }
  }
  *out = r;
  return NULL;
}

/* --------------------------------------------------------------- iota */

/* Fills `r` with result[index] = index[dim] (spec "iota"). */
static hlo_status fill_iota(const hlo_op *op, tensor *r, int64_t dim) {
  const hlo_type *t = r->type;
  if (dim < 0 || dim >= (int64_t)t->rank) {
    tensor_release(r);
    return interp_error(op, HLO_INVALID_ARGUMENT, "iota_dimension %lld out of range for rank %u",
                        (long long)dim, t->rank);
  }
  int64_t idx[ISH_MAX_RANK] = {0};
  for (int64_t i = 0; i < r->num_elems; i++) {
    set_from_int(t->dtype, r->data, i, idx[dim]);
    index_next(t->dims, t->rank, idx);
  }
  return NULL;
}

static hlo_status k_iota(interp *it, const hlo_op *op, tensor *const *in,
                         const hlo_type *const *rt, tensor **out) {
  (void)it, (void)in;
  tensor *r;
  HLO_TRY(new_result(op, rt[0], &r));
  HLO_TRY(fill_iota(op, r, op_attr_int(op, "iota_dimension", -1)));
  *out = r;
  return NULL;
}

/* Checks that the 1-d integer tensor `v` (an output_shape operand) equals
 * the dims of result type `t`. */
static hlo_status check_output_shape(const hlo_op *op, const tensor *v, const hlo_type *t,
                                     const char *what) {
  arena a;
  arena_init(&a);
  int64_t *s;
  uint32_t n;
  hlo_status st = ish_read_int_vector(op, &a, v, what, t->rank, &s, &n);
  for (uint32_t d = 0; !st && d < n; d++)
    if (s[d] != t->dims[d])
      st = interp_error(op, HLO_INVALID_ARGUMENT,
                        "%s[%u] = %lld differs from the result dimension %lld", what, d,
                        (long long)s[d], (long long)t->dims[d]);
  arena_deinit(&a);
  return st;
}

/* dynamic_iota: iota whose shape comes from the `output_shape` operand. */
static hlo_status k_dynamic_iota(interp *it, const hlo_op *op, tensor *const *in,
                                 const hlo_type *const *rt, tensor **out) {
  (void)it;
  HLO_TRY(need_operands(op, 1));
  HLO_TRY(ish_check_result_type(op, rt[0]));
  HLO_TRY(check_output_shape(op, in[0], rt[0], "output_shape"));
  tensor *r;
  HLO_TRY(tensor_create(rt[0], &op->loc, &r));
  HLO_TRY(fill_iota(op, r, op_attr_int(op, "iota_dimension", -1)));
  *out = r;
  return NULL;
}

/* ---------------------------------------------------------- broadcast */

/* result[result_index] = operand[operand_index] with operand_index[d] = 0
 * when dim(operand, d) = 1, else result_index[broadcast_dimensions[d]]
 * (spec "broadcast_in_dim"). */
static hlo_status broadcast_in_dim(const hlo_op *op, const tensor *x, const int64_t *bd,
                                   uint32_t nbd, tensor *r) {
  const hlo_type *ot = x->type, *t = r->type;
  if (nbd != ot->rank) {
    tensor_release(r);
    return interp_error(op, HLO_INVALID_ARGUMENT,
                        "broadcast_dimensions has %u entries; operand rank is %u", nbd, ot->rank);
  }
  for (uint32_t d = 0; d < nbd; d++)
    if (bd[d] < 0 || bd[d] >= (int64_t)t->rank) {
      tensor_release(r);
      return interp_error(op, HLO_INVALID_ARGUMENT, "broadcast_dimensions[%u] = %lld out of range",
                          d, (long long)bd[d]);
    }
  int64_t ri[ISH_MAX_RANK] = {0}, oi[ISH_MAX_RANK];
  for (int64_t i = 0; i < r->num_elems; i++) {
    for (uint32_t d = 0; d < ot->rank; d++) oi[d] = ot->dims[d] == 1 ? 0 : ri[bd[d]];
    if (!ish_in_bounds(ot->dims, ot->rank, oi)) return oob(op, r);
    copy_elem(r, i, x, index_linear(ot->dims, ot->rank, oi));
    index_next(t->dims, t->rank, ri);
  }
  return NULL;
}

static hlo_status k_broadcast_in_dim(interp *it, const hlo_op *op, tensor *const *in,
                                     const hlo_type *const *rt, tensor **out) {
  (void)it;
  tensor *r;
  HLO_TRY(unary_prologue(op, in, rt[0], &r));
  arena a;
  arena_init(&a);
  int64_t *bd;
  uint32_t n;
  hlo_status st = ish_attr_ints(op, &a, "broadcast_dimensions", true, &bd, &n);
  if (st) tensor_release(r);
  else st = broadcast_in_dim(op, in[0], bd, n, r);
  arena_deinit(&a);
  if (!st) *out = r;
  return st;
}

/* dynamic_broadcast_in_dim: broadcast_in_dim to the shape given by the
 * `output_dimensions` operand (which must match the static result type). */
static hlo_status k_dynamic_broadcast_in_dim(interp *it, const hlo_op *op, tensor *const *in,
                                             const hlo_type *const *rt, tensor **out) {
  (void)it;
  HLO_TRY(need_operands(op, 2));
  HLO_TRY(ish_check_result_type(op, rt[0]));
  HLO_TRY(check_output_shape(op, in[1], rt[0], "output_dimensions"));
  return k_broadcast_in_dim(it, op, in, rt, out);
}

/* broadcast (deprecated): result dims = broadcast_sizes ++ dims(operand);
 * result[i0..., j...] = operand[j...]. */
static hlo_status k_broadcast(interp *it, const hlo_op *op, tensor *const *in,
                              const hlo_type *const *rt, tensor **out) {
  (void)it;
  tensor *r;
  HLO_TRY(unary_prologue(op, in, rt[0], &r));
  const hlo_type *ot = in[0]->type, *t = rt[0];
  if (t->rank < ot->rank) {
    tensor_release(r);
    return interp_error(op, HLO_INVALID_ARGUMENT, "result rank below operand rank");
  }
  uint32_t lead = t->rank - ot->rank, n;
  arena a;
  arena_init(&a);
  int64_t *sizes;
  hlo_status st = ish_attr_ints(op, &a, "broadcast_sizes", false, &sizes, &n);
  if (!st && sizes && n != lead)
    st = interp_error(op, HLO_INVALID_ARGUMENT, "broadcast_sizes has %u entries; expected %u", n,
                      lead);
  for (uint32_t d = 0; !st && sizes && d < n; d++)
    if (sizes[d] != t->dims[d])
      st = interp_error(op, HLO_INVALID_ARGUMENT, "broadcast_sizes[%u] differs from the result",
                        d);
  arena_deinit(&a);
  if (st) {
    tensor_release(r);
    return st;
  }
  int64_t ri[ISH_MAX_RANK] = {0};
  for (int64_t i = 0; i < r->num_elems; i++) {
    if (!ish_in_bounds(ot->dims, ot->rank, ri + lead)) return oob(op, r);
    copy_elem(r, i, in[0], index_linear(ot->dims, ot->rank, ri + lead));
    index_next(t->dims, t->rank, ri);
  }
  *out = r;
  return NULL;
}

/* ------------------------------------------------------------ reshape */

/* reshape: the same elements in row-major order (spec "reshape"). Also
 * dynamic_reshape (whose output_shape must match the result type) and
 * set_dimension_size on static shapes, which only copies. */
static hlo_status k_reshape(interp *it, const hlo_op *op, tensor *const *in,
                            const hlo_type *const *rt, tensor **out) {
  (void)it;
  HLO_TRY(need_operands(op, 1));
  HLO_TRY(ish_check_tensor(op, in[0], "operand"));
  HLO_TRY(ish_check_result_type(op, rt[0]));
  HLO_TRY(ish_check_same_dtype(op, rt[0], in[0]));
  if (op->opcode == OP_DYNAMIC_RESHAPE) {
    HLO_TRY(need_operands(op, 2));
    HLO_TRY(check_output_shape(op, in[1], rt[0], "output_shape"));
  }
  if (type_num_elements(rt[0]) != in[0]->num_elems)
    return interp_error(op, HLO_INVALID_ARGUMENT,
                        "result has %lld elements; operand has %lld",
                        (long long)type_num_elements(rt[0]), (long long)in[0]->num_elems);
  tensor *r;
  HLO_TRY(tensor_create(rt[0], &op->loc, &r));
  if (r->nbytes) memcpy(r->data, in[0]->data, r->nbytes);
  *out = r;
  return NULL;
}

/* set_dimension_size: with static shapes the result is the operand; the
 * size operand must equal the dimension's size. */
static hlo_status k_set_dimension_size(interp *it, const hlo_op *op, tensor *const *in,
                                       const hlo_type *const *rt, tensor **out) {
  HLO_TRY(need_operands(op, 2));
  HLO_TRY(ish_check_tensor(op, in[0], "operand"));
  HLO_TRY(ish_check_int_tensor(op, in[1], "size"));
  int64_t d = op_attr_int(op, "dimension", -1);
  if (d < 0 || d >= (int64_t)in[0]->type->rank || in[1]->num_elems != 1)
    return interp_error(op, HLO_INVALID_ARGUMENT, "bad dimension or size operand");
  if (ish_read_index(in[1], 0) != in[0]->type->dims[d])
    return interp_error(op, HLO_UNIMPLEMENTED,
                        "set_dimension_size to a size other than the static one");
  return k_reshape(it, op, in, rt, out);
}

/* ---------------------------------------------------------- transpose */

/* result[result_index] = operand[operand_index] where
 * result_index[d] = operand_index[permutation[d]] (spec "transpose"). */
static hlo_status k_transpose(interp *it, const hlo_op *op, tensor *const *in,
                              const hlo_type *const *rt, tensor **out) {
  (void)it;
  tensor *r;
  HLO_TRY(unary_prologue(op, in, rt[0], &r));
  const hlo_type *ot = in[0]->type, *t = rt[0];
  arena a;
  arena_init(&a);
  int64_t *perm;
  uint32_t n;
  hlo_status st = ish_attr_ints(op, &a, "permutation", true, &perm, &n);
  if (!st && (n != ot->rank || n != t->rank))
    st = interp_error(op, HLO_INVALID_ARGUMENT, "permutation has %u entries; rank is %u", n,
                      ot->rank);
  for (uint32_t d = 0; !st && d < n; d++)
    if (perm[d] < 0 || perm[d] >= (int64_t)n)
      st = interp_error(op, HLO_INVALID_ARGUMENT, "permutation[%u] = %lld out of range", d,
                        (long long)perm[d]);
  if (!st) {
    int64_t ri[ISH_MAX_RANK] = {0}, oi[ISH_MAX_RANK] = {0};
    for (int64_t i = 0; i < r->num_elems; i++) {
      for (uint32_t d = 0; d < n; d++) oi[perm[d]] = ri[d];
      if (!ish_in_bounds(ot->dims, ot->rank, oi)) {
        arena_deinit(&a);
        return oob(op, r);
      }
      copy_elem(r, i, in[0], index_linear(ot->dims, ot->rank, oi));
      index_next(t->dims, t->rank, ri);
    }
  }
  arena_deinit(&a);
  if (st) tensor_release(r);
  else *out = r;
  return st;
}

/* -------------------------------------------------------------- slice */

/* result[ri] = operand[start + ri * strides], every index bounds-checked
 * (spec "slice", "real_dynamic_slice"). */
static hlo_status strided_copy(const hlo_op *op, const tensor *x, const int64_t *start,
                               const int64_t *strides, tensor *r) {
  const hlo_type *ot = x->type, *t = r->type;
  if (ot->rank != t->rank) {
    tensor_release(r);
    return interp_error(op, HLO_INVALID_ARGUMENT, "result rank %u differs from operand rank %u",
                        t->rank, ot->rank);
  }
  int64_t ri[ISH_MAX_RANK] = {0}, oi[ISH_MAX_RANK];
  for (int64_t i = 0; i < r->num_elems; i++) {
    bool ok = true;
    for (uint32_t d = 0; d < t->rank; d++) {
      int64_t s = strides ? strides[d] : 1, step;
      if (__builtin_mul_overflow(ri[d], s, &step) || __builtin_add_overflow(start[d], step, &oi[d]))
        ok = false;
    }
    if (!ok || !ish_in_bounds(ot->dims, ot->rank, oi)) return oob(op, r);
    copy_elem(r, i, x, index_linear(ot->dims, ot->rank, oi));
    index_next(t->dims, t->rank, ri);
  }
  return NULL;
}

/* strided_copy after checking that every stride (when given) is positive;
 * like strided_copy, releases `r` on failure. */
static hlo_status checked_strided_copy(const hlo_op *op, const tensor *x, const int64_t *start,
                                       const int64_t *strides, tensor *r) {
  for (uint32_t d = 0; strides && d < x->type->rank; d++)
    if (strides[d] <= 0) {
      tensor_release(r);
      return interp_error(op, HLO_INVALID_ARGUMENT, "strides must be positive");
    }
  return strided_copy(op, x, start, strides, r);
}

static hlo_status k_slice(interp *it, const hlo_op *op, tensor *const *in,
                          const hlo_type *const *rt, tensor **out) {
  (void)it;
  tensor *r;
  HLO_TRY(unary_prologue(op, in, rt[0], &r));
  uint32_t rank = in[0]->type->rank;
  arena a;
  arena_init(&a);
  int64_t *start, *limit, *strides;
  uint32_t ns, nl, nt;
  hlo_status st = ish_attr_ints(op, &a, "start_indices", true, &start, &ns);
  if (!st) st = ish_attr_ints(op, &a, "limit_indices", true, &limit, &nl);
  if (!st) st = ish_attr_ints(op, &a, "strides", false, &strides, &nt);
  if (!st && (ns != rank || nl != rank || (strides && nt != rank)))
    st = interp_error(op, HLO_INVALID_ARGUMENT, "slice attributes must have %u entries", rank);
  if (st) tensor_release(r);
  else st = checked_strided_copy(op, in[0], start, strides, r);
  arena_deinit(&a);
  if (!st) *out = r;
  return st;
}

/* real_dynamic_slice: slice with start/limit/strides given as operands. */
static hlo_status k_real_dynamic_slice(interp *it, const hlo_op *op, tensor *const *in,
                                       const hlo_type *const *rt, tensor **out) {
  (void)it;
  HLO_TRY(need_operands(op, 4));
  tensor *r;
  HLO_TRY(unary_prologue(op, in, rt[0], &r));
  uint32_t rank = in[0]->type->rank;
  arena a;
  arena_init(&a);
  int64_t *start, *limit, *strides;
  uint32_t n;
  hlo_status st = ish_read_int_vector(op, &a, in[1], "start_indices", rank, &start, &n);
  if (!st) st = ish_read_int_vector(op, &a, in[2], "limit_indices", rank, &limit, &n);
  if (!st) st = ish_read_int_vector(op, &a, in[3], "strides", rank, &strides, &n);
  if (st) tensor_release(r);
  else st = checked_strided_copy(op, in[0], start, strides, r);
  arena_deinit(&a);
  if (!st) *out = r;
  return st;
}

/* Reads the start indices of dynamic_slice / dynamic_update_slice: rank
 * 0-d integer operands from in[first], clamped to [0, dim - size[d]]. */
static hlo_status clamped_starts(const hlo_op *op, tensor *const *in, uint32_t first,
                                 const hlo_type *ot, const int64_t *size, int64_t *start) {
  if (op->num_operands != first + ot->rank)
    return interp_error(op, HLO_INVALID_ARGUMENT, "expected %u start index operands, got %u",
                        ot->rank, op->num_operands - first);
  for (uint32_t d = 0; d < ot->rank; d++) {
    HLO_TRY(ish_check_int_tensor(op, in[first + d], "start index"));
    if (in[first + d]->num_elems != 1)
      return interp_error(op, HLO_INVALID_ARGUMENT, "start index %u is not a scalar", d);
    if (size[d] < 0 || size[d] > ot->dims[d])
      return interp_error(op, HLO_INVALID_ARGUMENT,
                          "size %lld of dimension %u exceeds the operand's %lld",
                          (long long)size[d], d, (long long)ot->dims[d]);
    int64_t s = ish_read_index(in[first + d], 0), hi = ot->dims[d] - size[d];
    start[d] = s < 0 ? 0 : s > hi ? hi : s;
  }
  return NULL;
}

/* dynamic_slice: start = clamp(start_indices, 0, dim(operand) -
 * slice_sizes); result[ri] = operand[start + ri] (spec "dynamic_slice"). */
static hlo_status k_dynamic_slice(interp *it, const hlo_op *op, tensor *const *in,
                                  const hlo_type *const *rt, tensor **out) {
  (void)it;
  tensor *r;
  HLO_TRY(unary_prologue(op, in, rt[0], &r));
  const hlo_type *ot = in[0]->type;
  int64_t start[ISH_MAX_RANK];
  hlo_status st = NULL;
  int64_t size[ISH_MAX_RANK];
  if (rt[0]->rank != ot->rank)
    st = interp_error(op, HLO_INVALID_ARGUMENT, "result rank differs from operand rank");
  for (uint32_t d = 0; !st && d < ot->rank; d++) size[d] = rt[0]->dims[d];
  arena a;
  arena_init(&a);
  int64_t *ss;
  uint32_t nss;
  if (!st) st = ish_attr_ints(op, &a, "slice_sizes", false, &ss, &nss);
  if (!st && ss) {
    if (nss != ot->rank)
      st = interp_error(op, HLO_INVALID_ARGUMENT, "slice_sizes must have %u entries", ot->rank);
    for (uint32_t d = 0; !st && d < nss; d++)
      if (ss[d] != size[d])
        st = interp_error(op, HLO_INVALID_ARGUMENT,
                          "slice_sizes[%u] = %lld differs from the result dimension", d,
                          (long long)ss[d]);
  }
  arena_deinit(&a);
  if (!st) st = clamped_starts(op, in, 1, ot, size, start);
  if (st) {
    tensor_release(r);
    return st;
  }
  HLO_TRY(strided_copy(op, in[0], start, NULL, r));
  *out = r;
  return NULL;
}

/* dynamic_update_slice: result = operand with result[start + ui] = update[ui]
 * where start is clamped to [0, dim(operand) - dim(update)]. */
static hlo_status k_dynamic_update_slice(interp *it, const hlo_op *op, tensor *const *in,
                                         const hlo_type *const *rt, tensor **out) {
  (void)it;
  HLO_TRY(need_operands(op, 2));
  HLO_TRY(ish_check_tensor(op, in[1], "update"));
  tensor *r;
  HLO_TRY(unary_prologue(op, in, rt[0], &r));
  const hlo_type *ot = in[0]->type, *ut = in[1]->type;
  int64_t start[ISH_MAX_RANK];
  hlo_status st = NULL;
  if (ut->rank != ot->rank || rt[0]->rank != ot->rank || ut->dtype != ot->dtype ||
      r->nbytes != in[0]->nbytes)
    st = interp_error(op, HLO_INVALID_ARGUMENT, "update and result must match the operand");
  if (!st) st = clamped_starts(op, in, 2, ot, ut->dims, start);
  if (st) {
    tensor_release(r);
    return st;
  }
  if (r->nbytes) memcpy(r->data, in[0]->data, r->nbytes);
  int64_t ui[ISH_MAX_RANK] = {0}, ri[ISH_MAX_RANK];
  for (int64_t i = 0; i < in[1]->num_elems; i++) {
    for (uint32_t d = 0; d < ot->rank; d++) ri[d] = start[d] + ui[d];
    if (!ish_in_bounds(ot->dims, ot->rank, ri)) return oob(op, r);
    copy_elem(r, index_linear(ot->dims, ot->rank, ri), in[1], i);
    index_next(ut->dims, ut->rank, ui);
  }
  *out = r;
  return NULL;
}

/* -------------------------------------------------------- concatenate */

/* concatenate: the inputs laid one after another along `dimension` (spec
 * "concatenate"): each input's element at index i goes to the result at i
 * plus the running offset in that dimension. */
static hlo_status k_concatenate(interp *it, const hlo_op *op, tensor *const *in,
                                const hlo_type *const *rt, tensor **out) {
  (void)it;
  HLO_TRY(need_operands(op, 1));
  const hlo_type *t = rt[0];
  HLO_TRY(ish_check_result_type(op, t));
  int64_t dim = op_attr_int(op, "dimension", -1);
  if (dim < 0 || dim >= (int64_t)t->rank)
    return interp_error(op, HLO_INVALID_ARGUMENT, "dimension %lld out of range for rank %u",
                        (long long)dim, t->rank);
  for (uint32_t k = 0; k < op->num_operands; k++) {
    HLO_TRY(ish_check_tensor(op, in[k], "input"));
    HLO_TRY(ish_check_same_dtype(op, t, in[k]));
    if (in[k]->type->rank != t->rank)
      return interp_error(op, HLO_INVALID_ARGUMENT, "input %u has rank %u; result has rank %u",
                          k, in[k]->type->rank, t->rank);
  }
  tensor *r;
  HLO_TRY(tensor_create(t, &op->loc, &r));
  int64_t offset = 0;
  for (uint32_t k = 0; k < op->num_operands; k++) {
    const hlo_type *it_ = in[k]->type;
    int64_t ii[ISH_MAX_RANK] = {0}, ri[ISH_MAX_RANK];
    for (int64_t i = 0; i < in[k]->num_elems; i++) {
      memcpy(ri, ii, sizeof(int64_t) * t->rank);
      ri[dim] += offset;
      if (!ish_in_bounds(t->dims, t->rank, ri)) return oob(op, r);
      copy_elem(r, index_linear(t->dims, t->rank, ri), in[k], i);
      index_next(it_->dims, it_->rank, ii);
    }
    offset += it_->dims[dim];
  }
  if (offset != t->dims[dim]) {
    tensor_release(r);
    return interp_error(op, HLO_INVALID_ARGUMENT,
                        "inputs add up to %lld along dimension %lld; result has %lld",
                        (long long)offset, (long long)dim, (long long)t->dims[dim]);
  }
  *out = r;
  return NULL;
}

/* ---------------------------------------------------------------- pad */

/* result[ri] = operand[oi] where ri = low + oi * (interior + 1), and
 * padding_value elsewhere (spec "pad"); negative low/high drop elements. */
static hlo_status pad_fill(const hlo_op *op, const tensor *x, const tensor *pv,
                           const int64_t *low, const int64_t *high, const int64_t *interior,
                           tensor *r) {
  const hlo_type *ot = x->type, *t = r->type;
  hlo_status st = NULL;
  if (t->rank != ot->rank) st = interp_error(op, HLO_INVALID_ARGUMENT, "rank mismatch");
  if (!st && (pv->num_elems != 1 || pv->type->dtype != t->dtype))
    st = interp_error(op, HLO_INVALID_ARGUMENT, "padding_value must be a 0-d %s tensor",
                      hlo_dtype_name(t->dtype));
  for (uint32_t d = 0; !st && d < t->rank; d++) {
    int64_t size, holes;
    if (interior[d] < 0)
      st = interp_error(op, HLO_INVALID_ARGUMENT, "interior_padding must be non-negative");
    else if (__builtin_mul_overflow(ot->dims[d] > 0 ? ot->dims[d] - 1 : 0, interior[d], &holes) ||
             __builtin_add_overflow(holes, ot->dims[d], &size) ||
             __builtin_add_overflow(size, low[d], &size) ||
             __builtin_add_overflow(size, high[d], &size) || size != t->dims[d])
      st = interp_error(op, HLO_INVALID_ARGUMENT,
                        "padded size of dimension %u differs from the result's %lld", d,
                        (long long)t->dims[d]);
  }
  if (st) {
    tensor_release(r);
    return st;
  }
  int64_t ri[ISH_MAX_RANK] = {0}, oi[ISH_MAX_RANK];
  for (int64_t i = 0; i < r->num_elems; i++) {
    bool in_operand = true;
    for (uint32_t d = 0; d < t->rank && in_operand; d++) {
      int64_t p;
      if (__builtin_sub_overflow(ri[d], low[d], &p) || p < 0 || p % (interior[d] + 1) != 0)
        in_operand = false;
      else {
        oi[d] = p / (interior[d] + 1);
        if (oi[d] >= ot->dims[d]) in_operand = false;
      }
    }
    if (in_operand) copy_elem(r, i, x, index_linear(ot->dims, ot->rank, oi));
    else copy_elem(r, i, pv, 0);
    index_next(t->dims, t->rank, ri);
  }
  return NULL;
}

static hlo_status k_pad(interp *it, const hlo_op *op, tensor *const *in,
                        const hlo_type *const *rt, tensor **out) {
  (void)it;
  HLO_TRY(need_operands(op, 2));
  HLO_TRY(ish_check_tensor(op, in[1], "padding_value"));
  tensor *r;
  HLO_TRY(unary_prologue(op, in, rt[0], &r));
  uint32_t rank = in[0]->type->rank;
  arena a;
  arena_init(&a);
  int64_t *lo, *hi, *inner;
  uint32_t n1, n2, n3;
  hlo_status st = ish_attr_ints(op, &a, "edge_padding_low", true, &lo, &n1);
  if (!st) st = ish_attr_ints(op, &a, "edge_padding_high", true, &hi, &n2);
  if (!st) st = ish_attr_ints(op, &a, "interior_padding", true, &inner, &n3);
  if (!st && (n1 != rank || n2 != rank || n3 != rank))
    st = interp_error(op, HLO_INVALID_ARGUMENT, "padding attributes must have %u entries", rank);
  if (st) tensor_release(r);
  else st = pad_fill(op, in[0], in[1], lo, hi, inner, r);
  arena_deinit(&a);
  if (!st) *out = r;
  return st;
}

/* dynamic_pad: pad with the paddings given as operands. */
static hlo_status k_dynamic_pad(interp *it, const hlo_op *op, tensor *const *in,
                                const hlo_type *const *rt, tensor **out) {
  (void)it;
  HLO_TRY(need_operands(op, 5));
  HLO_TRY(ish_check_tensor(op, in[1], "padding_value"));
  tensor *r;
  HLO_TRY(unary_prologue(op, in, rt[0], &r));
  uint32_t rank = in[0]->type->rank, n;
  arena a;
  arena_init(&a);
  int64_t *lo, *hi, *inner;
  hlo_status st = ish_read_int_vector(op, &a, in[2], "edge_padding_low", rank, &lo, &n);
  if (!st) st = ish_read_int_vector(op, &a, in[3], "edge_padding_high", rank, &hi, &n);
  if (!st) st = ish_read_int_vector(op, &a, in[4], "interior_padding", rank, &inner, &n);
  if (st) tensor_release(r);
  else st = pad_fill(op, in[0], in[1], lo, hi, inner, r);
  arena_deinit(&a);
  if (!st) *out = r;
  return st;
}

/* ------------------------------------------------------------ reverse */

/* result[ri] = operand[oi] with oi[d] = dim(result, d) - ri[d] - 1 for d in
 * dimensions, else ri[d] (spec "reverse"). */
static hlo_status k_reverse(interp *it, const hlo_op *op, tensor *const *in,
                            const hlo_type *const *rt, tensor **out) {
  (void)it;
  tensor *r;
  HLO_TRY(unary_prologue(op, in, rt[0], &r));
  const hlo_type *ot = in[0]->type, *t = rt[0];
  arena a;
  arena_init(&a);
  int64_t *dims;
  uint32_t n;
  bool rev[ISH_MAX_RANK] = {false};
  hlo_status st = ish_attr_ints(op, &a, "dimensions", true, &dims, &n);
  if (!st && t->rank != ot->rank) st = interp_error(op, HLO_INVALID_ARGUMENT, "rank mismatch");
  for (uint32_t k = 0; !st && k < n; k++) {
    if (dims[k] < 0 || dims[k] >= (int64_t)t->rank)
      st = interp_error(op, HLO_INVALID_ARGUMENT, "dimensions[%u] = %lld out of range", k,
                        (long long)dims[k]);
    else rev[dims[k]] = true;
  }
  arena_deinit(&a);
  if (st) {
    tensor_release(r);
    return st;
  }
  int64_t ri[ISH_MAX_RANK] = {0}, oi[ISH_MAX_RANK];
  for (int64_t i = 0; i < r->num_elems; i++) {
    for (uint32_t d = 0; d < t->rank; d++) oi[d] = rev[d] ? t->dims[d] - ri[d] - 1 : ri[d];
    if (!ish_in_bounds(ot->dims, ot->rank, oi)) return oob(op, r);
    copy_elem(r, i, in[0], index_linear(ot->dims, ot->rank, oi));
    index_next(t->dims, t->rank, ri);
  }
  *out = r;
  return NULL;
}

/* ------------------------------------------------------------- tuples */

static hlo_status k_tuple(interp *it, const hlo_op *op, tensor *const *in,
                          const hlo_type *const *rt, tensor **out) {
  (void)it;
  if (!rt[0] || rt[0]->kind != TYPE_TUPLE)
    return interp_error(op, HLO_INVALID_ARGUMENT, "result is not a tuple");
  return tensor_create_tuple(rt[0], in, op->num_operands, &op->loc, out);
}

static hlo_status k_get_tuple_element(interp *it, const hlo_op *op, tensor *const *in,
                                      const hlo_type *const *rt, tensor **out) {
  (void)it, (void)rt;
  HLO_TRY(need_operands(op, 1));
  int64_t index = op_attr_int(op, "index", -1);
  if (!in[0] || !in[0]->type || in[0]->type->kind != TYPE_TUPLE)
    return interp_error(op, HLO_INVALID_ARGUMENT, "operand is not a tuple");
  if (index < 0 || index >= (int64_t)in[0]->num_tuple)
    return interp_error(op, HLO_INVALID_ARGUMENT, "index %lld out of range for a %u-tuple",
                        (long long)index, in[0]->num_tuple);
  *out = tensor_retain(in[0]->tuple[index]);
  return NULL;
}

/* get_dimension_size: dim(operand, dimension) as a 0-d integer. */
static hlo_status k_get_dimension_size(interp *it, const hlo_op *op, tensor *const *in,
                                       const hlo_type *const *rt, tensor **out) {
  (void)it;
  HLO_TRY(need_operands(op, 1));
  HLO_TRY(ish_check_tensor(op, in[0], "operand"));
  int64_t d = op_attr_int(op, "dimension", -1);
  if (d < 0 || d >= (int64_t)in[0]->type->rank)
    return interp_error(op, HLO_INVALID_ARGUMENT, "dimension %lld out of range for rank %u",
                        (long long)d, in[0]->type->rank);
  tensor *r;
  HLO_TRY(new_result(op, rt[0], &r));
  if (r->num_elems != 1) {
    tensor_release(r);
    return interp_error(op, HLO_INVALID_ARGUMENT, "result is not a 0-d tensor");
  }
  set_from_int(rt[0]->dtype, r->data, 0, in[0]->type->dims[d]);
  *out = r;
  return NULL;
}

/* ------------------------------------------------------- registration */

/* Fills `table` with the data-movement kernels (and, through
 * interp_register_gather, gather/dynamic_gather/scatter). */
void interp_register_shape(interp_kernel *table) {
  table[OP_CONSTANT] = k_constant;
  table[OP_IOTA] = k_iota;
  table[OP_DYNAMIC_IOTA] = k_dynamic_iota;
  table[OP_BROADCAST_IN_DIM] = k_broadcast_in_dim;
  table[OP_DYNAMIC_BROADCAST_IN_DIM] = k_dynamic_broadcast_in_dim;
  table[OP_BROADCAST] = k_broadcast;
  table[OP_RESHAPE] = k_reshape;
  table[OP_DYNAMIC_RESHAPE] = k_reshape;
  table[OP_SET_DIMENSION_SIZE] = k_set_dimension_size;
  table[OP_TRANSPOSE] = k_transpose;
  table[OP_SLICE] = k_slice;
  table[OP_REAL_DYNAMIC_SLICE] = k_real_dynamic_slice;
  table[OP_DYNAMIC_SLICE] = k_dynamic_slice;
  table[OP_DYNAMIC_UPDATE_SLICE] = k_dynamic_update_slice;
  table[OP_CONCATENATE] = k_concatenate;
  table[OP_PAD] = k_pad;
  table[OP_DYNAMIC_PAD] = k_dynamic_pad;
  table[OP_REVERSE] = k_reverse;
  table[OP_TUPLE] = k_tuple;
  table[OP_GET_TUPLE_ELEMENT] = k_get_tuple_element;
  table[OP_GET_DIMENSION_SIZE] = k_get_dimension_size;
  interp_register_gather(table);
}
