/* interp_gather.c — the reference interpreter's gather, dynamic_gather and
 * scatter kernels (reference/stablehlo-spec.md, "gather", "dynamic_gather",
 * "scatter"), batching dimensions included.
 *
 * gather walks the result's index space and computes each element's operand
 * index as the spec reads (start indices clamped so the slice fits);
 * scatter walks the updates' index space in row-major order (our
 * implementation-defined schedule) and skips updates whose result index is
 * out of bounds. */
#include <string.h>
#include "interp/interp_shape_internal.h"
#include "interp/interp_util.h"

/* The dimension numbers of a gather or scatter, in gather's terms:
 * offset_dims ~ update_window_dims, collapsed_slice_dims ~
 * inserted_window_dims, operand_batching_dims ~ input_batching_dims,
 * start_indices_batching_dims ~ scatter_indices_batching_dims,
 * start_index_map ~ scatter_dims_to_operand_dims. */
typedef struct gdims {
  int64_t *offset, *collapsed, *obatch, *ibatch, *index_map;
  uint32_t n_offset, n_collapsed, n_obatch, n_ibatch, n_index_map;
  int64_t index_vector_dim;
} gdims;

/* Reads the dimension numbers from struct attribute `name` of `op`; `sc`
 * selects scatter's field names. */
static hlo_status read_gdims(const hlo_op *op, arena *a, const char *name, bool sc, gdims *g) {
  const hlo_attr *st = op_attr(op, name);
  if (!st || st->kind != ATTR_STRUCT)
    return interp_error(op, HLO_INVALID_ARGUMENT, "missing or malformed `%s`", name);
  HLO_TRY(ish_field_ints(op, a, st, sc ? "update_window_dims" : "offset_dims", &g->offset,
                         &g->n_offset));
  HLO_TRY(ish_field_ints(op, a, st, sc ? "inserted_window_dims" : "collapsed_slice_dims",
                         &g->collapsed, &g->n_collapsed));
  HLO_TRY(ish_field_ints(op, a, st, sc ? "input_batching_dims" : "operand_batching_dims",
                         &g->obatch, &g->n_obatch));
  HLO_TRY(ish_field_ints(op, a, st,
                         sc ? "scatter_indices_batching_dims" : "start_indices_batching_dims",
                         &g->ibatch, &g->n_ibatch));
  HLO_TRY(ish_field_ints(op, a, st, sc ? "scatter_dims_to_operand_dims" : "start_index_map",
                         &g->index_map, &g->n_index_map));
  g->index_vector_dim = ish_field_int(st, "index_vector_dim", 0);
  return NULL;
}

/* The precomputed walk plan shared by gather and scatter.
 *   operand_rank   rank of the operand (gather) / inputs (scatter)
 *   outer_rank     rank of the result (gather) / updates (scatter)
 *   batch_dims     outer dims not in offset dims (gather's batch_dims,
 *                  scatter's update_scatter_dims), in order
 *   offset_of[d]   for operand dim d: the outer dim that gives its offset,
 *                  or -1 for collapsed / batching dims
 *   batch_of[d]    for operand dim d: index into batch_index of the
 *                  batching dim feeding it, or -1 */
typedef struct plan {
  uint32_t operand_rank, outer_rank, indices_rank, nbatch;
  int64_t batch_dims[ISH_MAX_RANK];
  int64_t offset_of[ISH_MAX_RANK];
  int64_t batch_of[ISH_MAX_RANK];
} plan;

/* Validates the dimension numbers against the shapes (the spec's
 * constraints that keep every index computed below in range) and fills
 * `p`. `what_outer` names the outer tensor in messages. */
static hlo_status make_plan(const hlo_op *op, const gdims *g, const hlo_type *operand_t,
                            const hlo_type *indices_t, const hlo_type *outer_t, plan *p) {
  uint32_t R = operand_t->rank, O = outer_t->rank, I = indices_t->rank;
  int64_t ivd = g->index_vector_dim;
  p->operand_rank = R;
  p->outer_rank = O;
  p->indices_rank = I;
  if (ivd < 0 || ivd > (int64_t)I)
    return interp_error(op, HLO_INVALID_ARGUMENT, "index_vector_dim %lld out of range",
                        (long long)ivd);
  int64_t index_len = ivd < (int64_t)I ? indices_t->dims[ivd] : 1;
  if ((int64_t)g->n_index_map != index_len)
    return interp_error(op, HLO_INVALID_ARGUMENT,
                        "index map has %u entries; the index vector has %lld", g->n_index_map,
                        (long long)index_len);
  bool is_offset[ISH_MAX_RANK] = {false};
  for (uint32_t k = 0; k < g->n_offset; k++) {
    if (g->offset[k] < 0 || g->offset[k] >= (int64_t)O || is_offset[g->offset[k]])
      return interp_error(op, HLO_INVALID_ARGUMENT, "offset/window dims invalid");
    is_offset[g->offset[k]] = true;
  }
  p->nbatch = 0;
  for (uint32_t d = 0; d < O; d++)
    if (!is_offset[d]) p->batch_dims[p->nbatch++] = d;
  if (p->nbatch != I - (ivd < (int64_t)I ? 1u : 0u))
    return interp_error(op, HLO_INVALID_ARGUMENT,
                        "%u batch dimensions, but the indices have %u", p->nbatch,
                        I - (ivd < (int64_t)I ? 1u : 0u));
  for (uint32_t b = 0, j = 0; b < p->nbatch; b++, j++) {
    if ((int64_t)j == ivd) j++;
    if (indices_t->dims[j] != outer_t->dims[p->batch_dims[b]])
      return interp_error(op, HLO_INVALID_ARGUMENT,
                          "batch dimension %lld has size %lld; the indices' dimension %u has %lld",
                          (long long)p->batch_dims[b], (long long)outer_t->dims[p->batch_dims[b]],
                          j, (long long)indices_t->dims[j]);
  }
  bool taken[ISH_MAX_RANK] = {false};
  for (uint32_t d = 0; d < R; d++) p->offset_of[d] = p->batch_of[d] = -1;
  for (uint32_t k = 0; k < g->n_collapsed; k++) {
    if (g->collapsed[k] < 0 || g->collapsed[k] >= (int64_t)R || taken[g->collapsed[k]])
      return interp_error(op, HLO_INVALID_ARGUMENT, "collapsed/inserted dims invalid");
    taken[g->collapsed[k]] = true;
  }
  if (g->n_obatch != g->n_ibatch)
    return interp_error(op, HLO_INVALID_ARGUMENT, "batching dims differ in number");
  for (uint32_t k = 0; k < g->n_obatch; k++) {
    int64_t od = g->obatch[k], id = g->ibatch[k];
    if (od < 0 || od >= (int64_t)R || taken[od] || id < 0 || id >= (int64_t)I || id == ivd)
      return interp_error(op, HLO_INVALID_ARGUMENT, "batching dims invalid");
    taken[od] = true;
    p->batch_of[od] = id - (id < ivd ? 0 : 1);
  }
  uint32_t j = 0;
  for (uint32_t d = 0; d < R; d++) {
    if (taken[d]) continue;
    if (j >= g->n_offset)
      return interp_error(op, HLO_INVALID_ARGUMENT, "too few offset/window dims for the operand");
    p->offset_of[d] = g->offset[j++];
  }
  if (j != g->n_offset)
    return interp_error(op, HLO_INVALID_ARGUMENT, "too many offset/window dims for the operand");
  for (uint32_t k = 0; k < g->n_index_map; k++)
    if (g->index_map[k] < 0 || g->index_map[k] >= (int64_t)R)
      return interp_error(op, HLO_INVALID_ARGUMENT, "index map entry %lld out of range",
                          (long long)g->index_map[k]);
  return NULL;
}

/* Reads start_index[k] for batch index `bi` (spec: start_indices[bi0, ...,
 * :, ..., biN] with `:` at index_vector_dim, or [start_indices[bi]]). */
static int64_t read_start(const plan *p, const tensor *indices, int64_t ivd, const int64_t *bi,
                          int64_t k) {
  int64_t si[ISH_MAX_RANK];
  uint32_t b = 0;
  for (uint32_t d = 0; d < p->indices_rank; d++) si[d] = (int64_t)d == ivd ? k : bi[b++];
  return ish_read_index(indices, index_linear(indices->type->dims, p->indices_rank, si));
}

/* gather: result[ri] = operand[full_start_index + full_batching_index +
 * full_offset_index] (spec "gather"); writes into the created `r`. */
static hlo_status gather(const hlo_op *op, const tensor *x, const tensor *indices,
                         const int64_t *ss, uint32_t nss, const gdims *g, tensor *r) {
  const hlo_type *ot = x->type, *t = r->type;
  plan p;
  HLO_TRY(make_plan(op, g, ot, indices->type, t, &p));
  if (nss != ot->rank)
    return interp_error(op, HLO_INVALID_ARGUMENT, "slice_sizes has %u entries; rank is %u", nss,
                        ot->rank);
  for (uint32_t d = 0; d < nss; d++)
    if (ss[d] < 0 || ss[d] > ot->dims[d])
      return interp_error(op, HLO_INVALID_ARGUMENT,
                          "slice_sizes[%u] = %lld outside [0, %lld]", d, (long long)ss[d],
                          (long long)ot->dims[d]);
  int64_t ri[ISH_MAX_RANK] = {0}, bi[ISH_MAX_RANK], oi[ISH_MAX_RANK];
  size_t sz = hlo_dtype_size(t->dtype);
  for (int64_t i = 0; i < r->num_elems; i++) {
    for (uint32_t b = 0; b < p.nbatch; b++) bi[b] = ri[p.batch_dims[b]];
    for (uint32_t d = 0; d < ot->rank; d++) {
      oi[d] = p.offset_of[d] >= 0 ? ri[p.offset_of[d]] : 0;
      if (p.batch_of[d] >= 0) oi[d] += bi[p.batch_of[d]];
    }
    for (uint32_t k = 0; k < g->n_index_map; k++) {
      int64_t d = g->index_map[k];
      int64_t s = read_start(&p, indices, g->index_vector_dim, bi, k);
      int64_t hi = ot->dims[d] - ss[d];
      s = s < 0 ? 0 : s; /* clamp(0, s, hi) = min(max(s, 0), hi) */
      s = s > hi ? hi : s;
      oi[d] += s;
    }
    if (!ish_in_bounds(ot->dims, ot->rank, oi))
      return interp_error(op, HLO_OUT_OF_RANGE,
                          "operand index out of bounds (slice_sizes inconsistent with shapes)");
    memcpy(r->data + (size_t)i * sz,
           x->data + (size_t)index_linear(ot->dims, ot->rank, oi) * sz, sz);
    index_next(t->dims, t->rank, ri);
  }
  return NULL;
}

/* gather and dynamic_gather (whose slice_sizes is the third operand). */
static hlo_status k_gather(interp *it, const hlo_op *op, tensor *const *in,
                           const hlo_type *const *rt, tensor **out) {
  (void)it;
  bool dyn = op->opcode == OP_DYNAMIC_GATHER;
  if (op->num_operands != (dyn ? 3u : 2u))
    return interp_error(op, HLO_INVALID_ARGUMENT, "expected %u operands", dyn ? 3u : 2u);
  HLO_TRY(ish_check_tensor(op, in[0], "operand"));
  HLO_TRY(ish_check_int_tensor(op, in[1], "start_indices"));
  HLO_TRY(ish_check_result_type(op, rt[0]));
  HLO_TRY(ish_check_same_dtype(op, rt[0], in[0]));
  arena a;
  arena_init(&a);
  gdims g;
  int64_t *ss = NULL;
  uint32_t nss = 0;
  tensor *r = NULL;
  hlo_status st = read_gdims(op, &a, "dimension_numbers", false, &g);
  if (!st) {
    if (dyn) st = ish_read_int_vector(op, &a, in[2], "slice_sizes", -1, &ss, &nss);
    else st = ish_attr_ints(op, &a, "slice_sizes", true, &ss, &nss);
  }
  if (!st) st = tensor_create(rt[0], &op->loc, &r);
  if (!st) st = gather(op, in[0], in[1], ss, nss, &g, r);
  arena_deinit(&a);
  return iu_finish(st, &r, 1, out);
}

/* scatter: results = inputs, then for each update_index in row-major order,
 * results...[result_index] = update_computation(results...[result_index],
 * updates...[update_index]) when result_index is in bounds (spec
 * "scatter"). */
static hlo_status scatter(interp *it, const hlo_op *op, tensor *const *in, uint32_t n,
                          const gdims *g, tensor **res) {
  const tensor *indices = in[n];
  tensor *const *upd = in + n + 1;
  const hlo_type *ot = in[0]->type, *ut = upd[0]->type;
  plan p;
  HLO_TRY(make_plan(op, g, ot, indices->type, ut, &p));
  const hlo_region *body = &op->regions[0];
  const hlo_type *arg_t[2 * ISH_MAX_RANK];
  for (uint32_t k = 0; k < n; k++) {
    arg_t[k] = ish_region_arg_type(it, body, k, in[k]->type->dtype);
    arg_t[n + k] = ish_region_arg_type(it, body, n + k, upd[k]->type->dtype);
    if (!arg_t[k] || !arg_t[n + k])
      return interp_error(op, HLO_RESOURCE_EXHAUSTED, "out of memory");
  }
  int64_t ui[ISH_MAX_RANK] = {0}, bi[ISH_MAX_RANK], ri[ISH_MAX_RANK];
  tensor *args[2 * ISH_MAX_RANK] = {0}, *outs[ISH_MAX_RANK] = {0};
  for (int64_t i = 0; i < upd[0]->num_elems; i++, index_next(ut->dims, ut->rank, ui)) {
    for (uint32_t b = 0; b < p.nbatch; b++) bi[b] = ui[p.batch_dims[b]];
    bool ok = true;
    for (uint32_t d = 0; d < ot->rank; d++) {
      ri[d] = p.offset_of[d] >= 0 ? ui[p.offset_of[d]] : 0;
      if (p.batch_of[d] >= 0) ri[d] += bi[p.batch_of[d]];
    }
    for (uint32_t k = 0; k < g->n_index_map && ok; k++) {
      int64_t d = g->index_map[k];
      int64_t s = read_start(&p, indices, g->index_vector_dim, bi, k);
      if (__builtin_add_overflow(ri[d], s, &ri[d])) ok = false;
    }
    if (!ok || !ish_in_bounds(ot->dims, ot->rank, ri)) continue;
    int64_t li = index_linear(ot->dims, ot->rank, ri);
    hlo_status st = NULL;
    for (uint32_t k = 0; k < n && !st; k++) {
      st = ish_scalar_from(op, arg_t[k], res[k], li, &args[k]);
      if (!st) st = ish_scalar_from(op, arg_t[n + k], upd[k], i, &args[n + k]);
    }
    if (!st) st = ish_run_body(it, op, body, args, 2 * n, outs, n);
    ish_release_all(args, 2 * n);
    if (st) return st;
    for (uint32_t k = 0; k < n; k++)
      ish_convert_elem(res[k]->type->dtype, res[k]->data, li, outs[k]->type->dtype,
                       outs[k]->data, 0);
    ish_release_all(outs, n);
  }
  return NULL;
}

static hlo_status k_scatter(interp *it, const hlo_op *op, tensor *const *in,
                            const hlo_type *const *rt, tensor **out) {
  if (op->num_operands < 3 || op->num_operands % 2 != 1)
    return interp_error(op, HLO_INVALID_ARGUMENT, "expected 2N+1 operands, got %u",
                        op->num_operands);
  uint32_t n = (op->num_operands - 1) / 2;
  if (n > ISH_MAX_RANK || op->num_results != n || op->num_regions < 1)
    return interp_error(op, HLO_INVALID_ARGUMENT, "expected %u results and a body", n);
  HLO_TRY(ish_check_int_tensor(op, in[n], "scatter_indices"));
  for (uint32_t k = 0; k < n; k++) {
    HLO_TRY(ish_check_tensor(op, in[k], "input"));
    HLO_TRY(ish_check_tensor(op, in[n + 1 + k], "update"));
    HLO_TRY(ish_check_result_type(op, rt[k]));
    HLO_TRY(ish_check_same_dtype(op, rt[k], in[k]));
    if (!type_same_shape(rt[k], in[k]->type) ||
        !ish_same_dims(in[k]->type, in[0]->type) ||
        in[n + 1 + k]->num_elems != in[n + 1]->num_elems)
      return interp_error(op, HLO_INVALID_ARGUMENT, "inputs, updates and results must agree");
  }
  arena a;
  arena_init(&a);
  gdims g;
  hlo_status st = read_gdims(op, &a, "scatter_dimension_numbers", true, &g);
  tensor *res[ISH_MAX_RANK] = {0};
  for (uint32_t k = 0; k < n && !st; k++) {
    st = tensor_create(rt[k], &op->loc, &res[k]);
    if (!st && res[k]->nbytes) memcpy(res[k]->data, in[k]->data, res[k]->nbytes);
  }
  if (!st) st = scatter(it, op, in, n, &g, res);
  arena_deinit(&a);
  return iu_finish(st, res, n, out);
}

/* Fills `table` with gather, dynamic_gather and scatter. */
void interp_register_gather(interp_kernel *table) {
  table[OP_GATHER] = k_gather;
  table[OP_DYNAMIC_GATHER] = k_gather;
  table[OP_SCATTER] = k_scatter;
}
