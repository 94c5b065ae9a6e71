/* executable_cpu_copy.c — the data-movement thunks the CPU backend runs
 * natively, without the interpreter's per-element index arithmetic and
 * region calls: dynamic_slice, dynamic_update_slice (in place when the
 * buffer assignment lets its output share the operand's slot), pad, and
 * the row forms of gather and scatter that JAX emits
 * for `x[idx]`, `x.at[idx].add(u)` / `.set(u)` and (with batching dims)
 * `jnp.take_along_axis` and its gradient. Each takes its buffers
 * (operands, then the result) as pointers; semantics per the spec
 * (clamped start indices; scatter skips out-of-bounds windows; updates in
 * row-major order of the update index space, as the interpreter).
 *
 * On a device backend with copy_box / fill_box (backend.h: cuda,
 * cpu-devmem), dynamic_slice, dynamic_update_slice, pad and fills run
 * there instead (cpu_run_copy_on_backend): each is one box, or a fill and
 * a box, on device pointers; only the start indices / pad value (a few
 * bytes) are read on the host, clamped by the same function as here. The
 * row gather and scatter run on gather_rows / scatter_rows (indices read
 * on the device; scatter in place as here when the output shares the
 * operand's memory). */
#include <string.h>
#include "ir/element.h"
#include "runtime/executable_cpu_internal.h"
#include "support/arena.h"
#include "support/fill.h"

#define COPY_MAX_RANK 16

static bool static_nonempty(const hlo_type *t) {
  return t && t->kind == TYPE_TENSOR && type_is_static(t) && !t->quant &&
         t->rank <= COPY_MAX_RANK && type_num_elements(t) > 0;
}

static bool int_scalar(const hlo_type *t) {
  if (!t || t->kind != TYPE_TENSOR || !type_is_static(t) || t->rank != 0) return false;
  hlo_dtype_class c = dtype_class(t->dtype);
  return (c == HLO_CLASS_SINT || c == HLO_CLASS_UINT) && t->dtype != HLO_UI64;
}

/* ------------------------------------------------------------ forms */

static bool dslice_form(const hlo_op *op) {
  uint32_t first = op->opcode == OP_DYNAMIC_SLICE ? 1 : 2;
  if (op->num_results != 1) return false;
  const hlo_type *ot = op->operands[0]->type, *rt = op->results[0].type;
  if (!static_nonempty(ot) || !static_nonempty(rt) || ot->dtype != rt->dtype ||
      op->num_operands != first + ot->rank)
    return false;
  if (first == 2) {
    const hlo_type *ut = op->operands[1]->type;
    if (!static_nonempty(ut) || ut->dtype != ot->dtype || ut->rank != ot->rank) return false;
    for (uint32_t d = 0; d < ot->rank; d++)
      if (ut->dims[d] > ot->dims[d]) return false;
  }
  for (uint32_t i = first; i < op->num_operands; i++)
    if (!int_scalar(op->operands[i]->type)) return false;
  return true;
}

/* pad on static tensors of one element type. */
static bool pad_form(const hlo_op *op) {
  if (op->num_operands != 2 || op->num_results != 1) return false;
  const hlo_type *ot = op->operands[0]->type, *rt = op->results[0].type;
  if (!static_nonempty(rt) || !ot || ot->kind != TYPE_TENSOR || !type_is_static(ot) ||
      ot->dtype != rt->dtype || ot->rank != rt->rank || ot->quant)
    return false;
  return op_attr(op, "interior_padding") && op_attr(op, "edge_padding_low") &&
         op_attr(op, "edge_padding_high");
}

/* The integer list field `name` of struct attribute `st` (absent: empty). */
static bool field(arena *a, const hlo_attr *st, const char *name, int64_t **v, uint32_t *n) {
  const hlo_attr *f = attr_field(st, name);
  *v = NULL;
  *n = 0;
  return !f || attr_as_ints(a, f, v, n);
}

static bool is_list(const int64_t *v, uint32_t n, int64_t first, uint32_t want) {
  if (n != want) return false;
  for (uint32_t i = 0; i < n; i++)
    if (v[i] != first + (int64_t)i) return false;
  return true;
}

/* The row form shared by gather and scatter, with nb >= 0 leading
 * BATCHING dims: operand [B..., N, rest...] (rank r), indices [B..., K...,
 * 1] with index_vector_dim its last dim, dim nb the only one indexed
 * (collapsed / inserted), the batching dims of operand and indices both
 * [0, nb) (jnp.take_along_axis and its gradient), and the window dims the
 * trailing dims of the result / updates: out[b, k, :] = operand[b, idx[b,
 * k], :]. `win` is the offset_dims / update_window_dims list, `coll` the
 * collapsed / inserted list, `map` start_index_map /
 * scatter_dims_to_operand_dims, `ob` / `ib` the operand / indices
 * batching dims. *nb gets the number of batching dims. */
static bool row_form(const hlo_op *op, const char *attr, bool scatter, const hlo_type *wt,
                     uint32_t *nb_out) {
  const hlo_type *ot = op->operands[0]->type, *it = op->operands[1]->type;
  if (!static_nonempty(ot) || !static_nonempty(wt) || !it || it->kind != TYPE_TENSOR ||
      !type_is_static(it) || it->rank < 1 || it->dims[it->rank - 1] != 1 || ot->rank < 1)
    return false;
  hlo_dtype_class ic = dtype_class(it->dtype);
  if ((ic != HLO_CLASS_SINT && ic != HLO_CLASS_UINT) || it->dtype == HLO_UI64) return false;
  const hlo_attr *dn = op_attr(op, attr);
  if (!dn || dn->kind != ATTR_STRUCT) return false;
  arena a;
  arena_init(&a);
  int64_t *win, *coll, *ob, *ib, *map;
  uint32_t nwin, ncoll, nob, nib, nmap;
  uint32_t nbatch = it->rank - 1;
  bool ok = field(&a, dn, scatter ? "update_window_dims" : "offset_dims", &win, &nwin) &&
            field(&a, dn, scatter ? "inserted_window_dims" : "collapsed_slice_dims", &coll, &ncoll) &&
            field(&a, dn, scatter ? "input_batching_dims" : "operand_batching_dims", &ob, &nob) &&
            field(&a, dn, scatter ? "scatter_indices_batching_dims" : "start_indices_batching_dims",
                  &ib, &nib) &&
            field(&a, dn, scatter ? "scatter_dims_to_operand_dims" : "start_index_map", &map, &nmap);
  const hlo_attr *ivd = attr_field(dn, "index_vector_dim");
  int64_t iv = ivd && ivd->kind == ATTR_INT ? ivd->u.i.v : 0; /* absent: 0 */
  uint32_t nb = nob;
  ok = ok && nb < ot->rank && nb <= nbatch && iv == (int64_t)it->rank - 1 &&
       is_list(ob, nob, 0, nb) && is_list(ib, nib, 0, nb) && is_list(coll, ncoll, nb, 1) &&
       is_list(map, nmap, nb, 1) && is_list(win, nwin, nbatch, ot->rank - 1 - nb) &&
       wt->rank == nbatch + ot->rank - 1 - nb;
  for (uint32_t d = 0; ok && d < nb; d++) ok = it->dims[d] == ot->dims[d];
  for (uint32_t d = 0; ok && d < nbatch; d++) ok = wt->dims[d] == it->dims[d];
  for (uint32_t d = nb + 1; ok && d < ot->rank; d++) ok = wt->dims[nbatch + d - nb - 1] == ot->dims[d];
  if (ok && !scatter) {
    const hlo_attr *ss = op_attr(op, "slice_sizes");
    int64_t *s;
    uint32_t n;
    ok = ss && attr_as_ints(&a, ss, &s, &n) && n == ot->rank;
    for (uint32_t d = 0; ok && d < n; d++) ok = s[d] == (d <= nb ? 1 : ot->dims[d]);
  }
  arena_deinit(&a);
  if (nb_out) *nb_out = nb;
  return ok;
}

/* The row form's batching dims of gather/scatter step s (0 when none). */
static uint32_t row_batch_dims(const step *s) {
  uint32_t nb = 0;
  if (s->kind == STEP_GATHER)
    (void)row_form(s->op, "dimension_numbers", false, s->op->results[0].type, &nb);
  else
    (void)row_form(s->op, "scatter_dimension_numbers", true, s->op->operands[2]->type, &nb);
  return nb;
}

/* The combiner of a scatter region: SCATTER_ADD (add of its two
 * arguments) or SCATTER_SET (returns the update); -1 for anything else. */
enum { SCATTER_SET, SCATTER_ADD };
static int scatter_combiner(const hlo_op *op) {
  if (op->num_regions != 1) return -1;
  const hlo_block *b = &op->regions[0].block;
  if (b->num_args != 2 || !b->last || b->last->num_operands != 1) return -1;
  const hlo_value *r = b->last->operands[0];
  if (r == &b->args[1] && b->first == b->last) return SCATTER_SET;
  const hlo_op *o = r->def;
  if (!o || o != b->first || o->next != b->last || o->opcode != OP_ADD) return -1;
  bool args = (o->operands[0] == &b->args[0] && o->operands[1] == &b->args[1]) ||
              (o->operands[0] == &b->args[1] && o->operands[1] == &b->args[0]);
  return args ? SCATTER_ADD : -1;
}

step_kind cpu_copy_form(const hlo_op *op) {
  switch (op->opcode) {
  case OP_DYNAMIC_SLICE: return dslice_form(op) ? STEP_DSLICE : STEP_INTERP;
  case OP_DYNAMIC_UPDATE_SLICE: return dslice_form(op) ? STEP_DUS : STEP_INTERP;
  case OP_PAD: return pad_form(op) ? STEP_PAD : STEP_INTERP;
  case OP_GATHER:
    return op->num_operands == 2 && op->num_results == 1 &&
                   row_form(op, "dimension_numbers", false, op->results[0].type, NULL)
               ? STEP_GATHER
               : STEP_INTERP;
  case OP_SCATTER: {
    if (op->num_operands != 3 || op->num_results != 1) return STEP_INTERP;
    const hlo_type *ot = op->operands[0]->type, *ut = op->operands[2]->type;
    int comb = scatter_combiner(op);
    hlo_dtype dt = ot ? ot->dtype : HLO_F32;
    bool add_ok = dt == HLO_F32 || dt == HLO_F64 || dt == HLO_I32 || dt == HLO_I64;
    if (comb < 0 || (comb == SCATTER_ADD && !add_ok) || !ut || ut->dtype != dt ||
        !row_form(op, "scatter_dimension_numbers", true, ut, NULL))
      return STEP_INTERP;
    return STEP_SCATTER;
  }
  default:
    return STEP_INTERP;
  }
}

/* ------------------------------------------------------------ running */

/* Copies the block of extent size[0..rank) from src (dims sdims) at
 * sstart to dst (dims ddims) at dstart, es bytes per element, row by row
 * of the innermost dimension. */
static void copy_block(uint8_t *dst, const int64_t *ddims, const int64_t *dstart,
                       const uint8_t *src, const int64_t *sdims, const int64_t *sstart,
                       const int64_t *size, uint32_t rank, size_t es) {
  if (rank == 0) {
    memcpy(dst, src, es);
    return;
  }
  for (uint32_t d = 0; d < rank; d++)
    if (size[d] <= 0) return;
  int64_t idx[COPY_MAX_RANK] = {0};
  size_t row = (size_t)size[rank - 1] * es;
  for (;;) {
    int64_t so = 0, doff = 0;
    for (uint32_t d = 0; d < rank; d++) {
      int64_t i = d == rank - 1 ? 0 : idx[d];
      so = so * sdims[d] + sstart[d] + i;
      doff = doff * ddims[d] + dstart[d] + i;
    }
    memcpy(dst + (size_t)doff * es, src + (size_t)so * es, row);
    int d = (int)rank - 2;
    while (d >= 0 && ++idx[d] == size[d]) idx[d--] = 0;
    if (d < 0) return;
  }
}

static int64_t clamp(int64_t v, int64_t lo, int64_t hi) { return v < lo ? lo : v > hi ? hi : v; }

/* Start index operand k (a scalar in bufs[k]) clamped to [0, hi]. */
static int64_t start_at(const step *s, void *const *bufs, uint32_t k, int64_t hi) {
  return clamp(elem_get_i64(s->in[k]->type->dtype, bufs[k], 0), 0, hi);
}

static void run_dslice(const step *s, void *const *bufs) {
  const hlo_type *ot = s->in[0]->type;
  uint32_t rank = ot->rank;
  size_t es = hlo_dtype_size(ot->dtype);
  int64_t start[COPY_MAX_RANK], zero[COPY_MAX_RANK] = {0};
  uint8_t *out = bufs[s->nin];
  if (s->kind == STEP_DSLICE) {
    const hlo_type *rt = s->out[0]->type;
    for (uint32_t d = 0; d < rank; d++) start[d] = start_at(s, bufs, 1 + d, ot->dims[d] - rt->dims[d]);
    copy_block(out, rt->dims, zero, bufs[0], ot->dims, start, rt->dims, rank, es);
    return;
  }
  const hlo_type *ut = s->in[1]->type;
  for (uint32_t d = 0; d < rank; d++) start[d] = start_at(s, bufs, 2 + d, ot->dims[d] - ut->dims[d]);
  if (out != bufs[0]) memcpy(out, bufs[0], (size_t)type_num_elements(ot) * es);
  copy_block(out, ot->dims, start, bufs[1], ut->dims, zero, ut->dims, rank, es);
}

/* pad's geometry, per dim d of rank: the operand indices [first, first +
 * count) that land in the result, and where: low + i * stride. *empty when
 * nothing of the operand lands in the result. */
hlo_status cpu_pad_geometry(const step *s, int64_t *first, int64_t *count, int64_t *stride,
                            int64_t *low, bool *empty) {
  const hlo_type *ot = s->in[0]->type, *rt = s->out[0]->type;
  uint32_t rank = ot->rank;
  arena a;
  arena_init(&a);
  int64_t *lo, *in;
  uint32_t nl, ni;
  bool ok = attr_as_ints(&a, op_attr(s->op, "edge_padding_low"), &lo, &nl) &&
            attr_as_ints(&a, op_attr(s->op, "interior_padding"), &in, &ni) && nl == rank &&
            ni == rank;
  *empty = type_num_elements(ot) <= 0;
  for (uint32_t d = 0; ok && d < rank; d++) {
    stride[d] = in[d] + 1;
    low[d] = lo[d];
    int64_t f = lo[d] >= 0 ? 0 : (-lo[d] + stride[d] - 1) / stride[d];
    int64_t l = rt->dims[d] - 1 - lo[d];
    l = l < 0 ? -1 : l / stride[d];
    if (l > ot->dims[d] - 1) l = ot->dims[d] - 1;
    first[d] = f;
    count[d] = l - f + 1;
    *empty |= count[d] <= 0;
  }
  arena_deinit(&a);
  if (!ok) return status_at(HLO_INTERNAL, &s->op->loc, "pad: unreadable padding attributes");
  return NULL;
}

/* pad: the result filled with the padding value, then each operand
 * element that lands inside it (edge padding may be negative) copied to
 * low + i * (interior + 1), a row at a time when the innermost dim has no
 * interior padding. */
static hlo_status run_pad(const step *s, void *const *bufs) {
  const hlo_type *ot = s->in[0]->type, *rt = s->out[0]->type;
  size_t es = hlo_dtype_size(rt->dtype);
  uint8_t *out = bufs[2];
  const uint8_t *src = bufs[0];
  fill_elements(out, bufs[1], (size_t)type_num_elements(rt), es);
  uint32_t rank = ot->rank;
  int64_t first[COPY_MAX_RANK] = {0}, count[COPY_MAX_RANK] = {0};
  int64_t stride[COPY_MAX_RANK] = {0}, low[COPY_MAX_RANK] = {0};
  bool empty;
  HLO_TRY(cpu_pad_geometry(s, first, count, stride, low, &empty));
  if (empty) return NULL; /* nothing of the operand lands in the result */
  int64_t idx[COPY_MAX_RANK] = {0};
  uint32_t r1 = rank - 1;
  for (;;) {
    int64_t so = 0, doff = 0;
    for (uint32_t d = 0; d < rank; d++) {
      int64_t i = first[d] + (d == r1 ? 0 : idx[d]);
      so = so * ot->dims[d] + i;
      doff = doff * rt->dims[d] + low[d] + i * stride[d];
    }
    if (stride[r1] == 1) {
      memcpy(out + (size_t)doff * es, src + (size_t)so * es, (size_t)count[r1] * es);
    } else {
      for (int64_t j = 0; j < count[r1]; j++)
        memcpy(out + (size_t)(doff + j * stride[r1]) * es, src + (size_t)(so + j) * es, es);
    }
    int d = (int)rank - 2;
    while (d >= 0 && ++idx[d] == count[d]) idx[d--] = 0;
    if (d < 0) return NULL;
  }
}

/* The row view of a gather/scatter step's operand [B..., N, rest...]:
 * batches (the product of its nb batching dims), rows per batch (N),
 * elements per row, and indices per batch (the indices' count / batches). */
typedef struct row_view {
  int64_t batches, nrows, row_elems, per_batch;
} row_view;

static row_view row_view_of(const step *s) {
  const hlo_type *ot = s->in[0]->type, *it = s->in[1]->type;
  uint32_t nb = row_batch_dims(s);
  row_view v = {1, ot->dims[nb], 1, 0};
  for (uint32_t d = 0; d < nb; d++) v.batches *= ot->dims[d];
  for (uint32_t d = nb + 1; d < ot->rank; d++) v.row_elems *= ot->dims[d];
  v.per_batch = type_num_elements(it) / v.batches;
  return v;
}

static void run_gather(const step *s, void *const *bufs) {
  const hlo_type *ot = s->in[0]->type, *it = s->in[1]->type;
  row_view v = row_view_of(s);
  int64_t nidx = type_num_elements(it);
  size_t row = (size_t)v.row_elems * hlo_dtype_size(ot->dtype);
  const uint8_t *src = bufs[0];
  uint8_t *out = bufs[2];
  for (int64_t i = 0; i < nidx; i++) {
    int64_t b = i / v.per_batch;
    int64_t r = clamp(elem_get_i64(it->dtype, bufs[1], i), 0, v.nrows - 1);
    memcpy(out + (size_t)i * row, src + (size_t)(b * v.nrows + r) * row, row);
  }
}

static void run_scatter(const step *s, void *const *bufs) {
  const hlo_type *ot = s->in[0]->type, *it = s->in[1]->type;
  row_view v = row_view_of(s);
  int64_t nidx = type_num_elements(it), re = v.row_elems;
  hlo_dtype dt = ot->dtype;
  size_t es = hlo_dtype_size(dt), row = (size_t)re * es;
  uint8_t *out = bufs[3];
  const uint8_t *upd = bufs[2];
  if (out != bufs[0]) memcpy(out, bufs[0], (size_t)(v.batches * v.nrows) * row);
  bool add = scatter_combiner(s->op) == SCATTER_ADD;
  for (int64_t i = 0; i < nidx; i++) {
    int64_t b = i / v.per_batch, r = elem_get_i64(it->dtype, bufs[1], i);
    if (r < 0 || r >= v.nrows) continue; /* the window is out of bounds: skipped */
    uint8_t *o = out + (size_t)(b * v.nrows + r) * row;
    const uint8_t *u = upd + (size_t)i * row;
    if (!add) {
      memcpy(o, u, row);
    } else if (dt == HLO_F32) {
      float *po = (float *)o;
      const float *pu = (const float *)u;
      for (int64_t k = 0; k < re; k++) po[k] += pu[k];
    } else if (dt == HLO_F64) {
      double *po = (double *)o;
      const double *pu = (const double *)u;
      for (int64_t k = 0; k < re; k++) po[k] += pu[k];
    } else if (dt == HLO_I32) {
      int32_t *po = (int32_t *)o;
      const int32_t *pu = (const int32_t *)u;
      for (int64_t k = 0; k < re; k++) po[k] = (int32_t)((uint32_t)po[k] + (uint32_t)pu[k]);
    } else {
      int64_t *po = (int64_t *)o;
      const int64_t *pu = (const int64_t *)u;
      for (int64_t k = 0; k < re; k++) po[k] = (int64_t)((uint64_t)po[k] + (uint64_t)pu[k]);
    }
  }
}

/* A splat constant filled into its buffer (bufs[0]: the step has no
 * operands). The element's bytes are the interpreter's (element.c reads
 * the literal), so the fill equals the constant made at compile time. */
static hlo_status fill_value(const step *s, uint8_t elem[16]) {
  const hlo_type *t = s->out[0]->type;
  const hlo_attr *a = op_attr(s->op, "value");
  size_t es = hlo_dtype_size(t->dtype);
  if (!a || a->kind != ATTR_DENSE || es > 16 || !a->u.dense.data)
    return status_at(HLO_INTERNAL, &s->op->loc, "fill step without a splat value");
  memcpy(elem, a->u.dense.data, es);
  return NULL;
}

static hlo_status run_fill(const step *s, void *const *bufs) {
  const hlo_type *t = s->out[0]->type;
  uint8_t elem[16];
  HLO_TRY(fill_value(s, elem));
  fill_elements(bufs[0], elem, (size_t)type_num_elements(t), hlo_dtype_size(t->dtype));
  return NULL;
}

/* ------------------------------------------------ on the backend (boxes) */


/* The row-major strides of dims[0..rank) (elements). */
static void strides_of(const int64_t *dims, uint32_t rank, int64_t *st) {
  int64_t m = 1;
  for (uint32_t d = rank; d-- > 0;) {
    st[d] = m;
    m *= dims[d];
  }
}

/* Makes *b (offsets zero) from a box of rank <= COPY_MAX_RANK: dims of
 * extent 1 dropped, a dim merged into the next inner one when both sides'
 * strides chain (outer stride = inner stride x inner extent). False when
 * more than BACKEND_BOX_MAX_RANK dims remain. An empty box is rank 1,
 * extent 0. */
static bool squeeze_box(uint32_t rank, const int64_t *dims, const int64_t *ds, const int64_t *ss,
                        size_t es, backend_box *b) {
  memset(b, 0, sizeof *b);
  b->esize = (uint32_t)es;
  int64_t kd[COPY_MAX_RANK], kds[COPY_MAX_RANK], kss[COPY_MAX_RANK];
  uint32_t n = 0;
  for (uint32_t d = 0; d < rank; d++) {
    if (dims[d] <= 0) {
      b->rank = 1;
      return true;
    }
    if (dims[d] == 1) continue;
    if (n && kds[n - 1] == ds[d] * dims[d] && kss[n - 1] == ss[d] * dims[d]) {
      kd[n - 1] *= dims[d]; /* merged into the previous (outer) one */
      kds[n - 1] = ds[d];
      kss[n - 1] = ss[d];
      continue;
    }
    kd[n] = dims[d];
    kds[n] = ds[d];
    kss[n] = ss[d];
    n++;
  }
  if (n > BACKEND_BOX_MAX_RANK) return false;
  b->rank = n;
  for (uint32_t d = 0; d < n; d++) {
    b->dims[d] = kd[d];
    b->dst_strides[d] = kds[d];
    b->src_strides[d] = kss[d];
  }
  return true;
}

/* The boxes of step s (DSLICE, DUS, PAD): the box of the slice / update /
 * pad interior, offsets left zero; false when it has too many dims. */
static bool step_box(const step *s, backend_box *b) {
  const hlo_type *ot = s->in[0]->type;
  uint32_t rank = ot->rank;
  size_t es = hlo_dtype_size(ot->dtype);
  int64_t ost[COPY_MAX_RANK], xst[COPY_MAX_RANK];
  strides_of(ot->dims, rank, ost);
  if (s->kind == STEP_DSLICE) { /* result (dense) <- operand */
    const hlo_type *rt = s->out[0]->type;
    strides_of(rt->dims, rank, xst);
    return squeeze_box(rank, rt->dims, xst, ost, es, b);
  }
  if (s->kind == STEP_DUS) { /* operand-shaped result <- update (dense) */
    const hlo_type *ut = s->in[1]->type;
    strides_of(ut->dims, rank, xst);
    return squeeze_box(rank, ut->dims, ost, xst, es, b);
  }
  /* PAD: result at low + i * stride <- operand at first + i */
  const hlo_type *rt = s->out[0]->type;
  int64_t first[COPY_MAX_RANK], count[COPY_MAX_RANK], stride[COPY_MAX_RANK], low[COPY_MAX_RANK];
  int64_t rst[COPY_MAX_RANK], dst[COPY_MAX_RANK];
  bool empty;
  hlo_status st = cpu_pad_geometry(s, first, count, stride, low, &empty);
  if (st) {
    hlo_status_free(st);
    return false;
  }
  if (empty) {
    memset(b, 0, sizeof *b);
    b->esize = (uint32_t)es;
    b->rank = 1;
    return true;
  }
  strides_of(rt->dims, rank, rst);
  for (uint32_t d = 0; d < rank; d++) dst[d] = stride[d] * rst[d];
  return squeeze_box(rank, count, dst, ost, es, b);
}

bool cpu_copy_on_backend(const backend *be, const step *s) {
  backend_box b;
  if (s->nout != 1) return false;
  size_t es = hlo_dtype_size(s->out[0]->type->dtype);
  if (es != 1 && es != 2 && es != 4 && es != 8 && es != 16) return false;
  if (s->kind == STEP_FILL) return be->fill_box && s->nin == 0;
  if (s->kind == STEP_GATHER) return be->gather_rows != NULL;
  if (s->kind == STEP_SCATTER) return be->scatter_rows && be->copy_box;
  if (!be->copy_box || (s->kind != STEP_DSLICE && s->kind != STEP_DUS && s->kind != STEP_PAD))
    return false;
  if (s->kind == STEP_PAD && !be->fill_box) return false;
  return step_box(s, &b);
}

bool cpu_copy_indices_on_device(const backend *be, const step *s) {
  return be && be->dyn_box && (s->kind == STEP_DSLICE || s->kind == STEP_DUS) &&
         s->in[0]->type->rank <= BACKEND_BOX_MAX_RANK;
}

/* Box b's start offsets read on the device from the index operands
 * dev[first..first+rank) (cpu_copy_indices_on_device): index d clamped to
 * [0, hi[d]], times the operand's stride ost[d]; dims with hi[d] 0 add
 * nothing and are left out. */
static void device_starts(const step *s, void *const *dev, uint32_t first, const int64_t *hi,
                          const int64_t *ost, bool dst, backend_box *b) {
  const hlo_type *it = s->in[first]->type;
  uint32_t rank = s->in[0]->type->rank, k = 0;
  b->dyn_size = (uint32_t)hlo_dtype_size(it->dtype);
  b->dyn_signed = dtype_class(it->dtype) == HLO_CLASS_SINT;
  b->dyn_dst = dst;
  /* a dim the slice spans whole (bound 0) starts at 0 whatever its index:
   * left out, so its stride (often 1) does not keep the copy from wider
   * elements */
  for (uint32_t d = 0; d < rank; d++) {
    if (hi[d] <= 0) continue;
    b->dyn_index[k] = dev[first + d];
    b->dyn_max[k] = hi[d];
    b->dyn_stride[k] = ost[d];
    k++;
  }
  b->ndyn = k;
}

hlo_status cpu_run_copy_on_backend(const backend *be, const step *s, void *const *host,
                                   void *const *dev) {
  if (s->kind == STEP_GATHER) { /* the indices stay on the device */
    const hlo_type *it = s->in[1]->type;
    row_view v = row_view_of(s);
    backend_rows r = {type_num_elements(it), v.per_batch, v.nrows,
                      v.row_elems * (int64_t)hlo_dtype_size(s->in[0]->type->dtype),
                      (uint32_t)hlo_dtype_size(it->dtype),
                      dtype_class(it->dtype) == HLO_CLASS_SINT, false, HLO_F32};
    return be->gather_rows(dev[2], dev[0], dev[1], &r);
  }
  if (s->kind == STEP_SCATTER) { /* the operand (unless in place), then the rows */
    const hlo_type *it = s->in[1]->type, *ot = s->in[0]->type;
    row_view v = row_view_of(s);
    size_t es = hlo_dtype_size(ot->dtype);
    if (dev[3] != dev[0]) {
      backend_box all = {.rank = 1, .esize = 1, .dims = {v.batches * v.nrows * v.row_elems *
                                                         (int64_t)es},
                         .dst_strides = {1}, .src_strides = {1}};
      HLO_TRY(be->copy_box(dev[3], dev[0], &all));
    }
    backend_rows r = {type_num_elements(it), v.per_batch, v.nrows, v.row_elems * (int64_t)es,
                      (uint32_t)hlo_dtype_size(it->dtype),
                      dtype_class(it->dtype) == HLO_CLASS_SINT,
                      scatter_combiner(s->op) == SCATTER_ADD, ot->dtype};
    return be->scatter_rows(dev[3], dev[2], dev[1], &r);
  }
  if (s->kind == STEP_FILL) {
    const hlo_type *t = s->out[0]->type;
    uint8_t elem[16];
    HLO_TRY(fill_value(s, elem));
    backend_box all = {.rank = 1, .esize = (uint32_t)hlo_dtype_size(t->dtype),
                       .dims = {type_num_elements(t)}, .dst_strides = {1}, .src_strides = {1}};
    return be->fill_box(dev[0], elem, &all);
  }
  const hlo_type *ot = s->in[0]->type;
  uint32_t rank = ot->rank;
  size_t es = hlo_dtype_size(ot->dtype);
  int64_t ost[COPY_MAX_RANK];
  strides_of(ot->dims, rank, ost);
  backend_box b;
  if (!step_box(s, &b))
    return status_at(HLO_INTERNAL, &s->op->loc, "%s: no box on the backend",
                     op_name(s->op->opcode));
  void *out = dev[s->nin];
  bool on_device = cpu_copy_indices_on_device(be, s);
  int64_t hi[COPY_MAX_RANK];
  if (s->kind == STEP_DSLICE) {
    const hlo_type *rt = s->out[0]->type;
    for (uint32_t d = 0; d < rank; d++) hi[d] = ot->dims[d] - rt->dims[d];
    if (on_device) device_starts(s, dev, 1, hi, ost, false, &b);
    else
      for (uint32_t d = 0; d < rank; d++) b.src_off += start_at(s, host, 1 + d, hi[d]) * ost[d];
    return be->copy_box(out, dev[0], &b);
  }
  if (s->kind == STEP_DUS) {
    const hlo_type *ut = s->in[1]->type;
    for (uint32_t d = 0; d < rank; d++) hi[d] = ot->dims[d] - ut->dims[d];
    if (on_device) device_starts(s, dev, 2, hi, ost, true, &b);
    else
      for (uint32_t d = 0; d < rank; d++) b.dst_off += start_at(s, host, 2 + d, hi[d]) * ost[d];
    if (out != dev[0]) { /* not in place: the operand first, on the stream */
      backend_box all = {.rank = 1, .esize = (uint32_t)es, .dims = {type_num_elements(ot)},
                         .dst_strides = {1}, .src_strides = {1}};
      HLO_TRY(be->copy_box(out, dev[0], &all));
    }
    return be->copy_box(out, dev[1], &b);
  }
  /* PAD: the whole result filled with the value (host[1], downloaded),
   * then the interior */
  const hlo_type *rt = s->out[0]->type;
  backend_box all = {.rank = 1, .esize = (uint32_t)es, .dims = {type_num_elements(rt)},
                     .dst_strides = {1}, .src_strides = {1}};
  HLO_TRY(be->fill_box(out, host[1], &all));
  if (b.dims[0] <= 0) return NULL;
  int64_t first[COPY_MAX_RANK], count[COPY_MAX_RANK], stride[COPY_MAX_RANK], low[COPY_MAX_RANK];
  int64_t rst[COPY_MAX_RANK];
  bool empty;
  HLO_TRY(cpu_pad_geometry(s, first, count, stride, low, &empty));
  strides_of(rt->dims, rank, rst);
  for (uint32_t d = 0; d < rank; d++) {
    b.src_off += first[d] * ost[d];
    b.dst_off += (low[d] + first[d] * stride[d]) * rst[d];
  }
  return be->copy_box(out, dev[0], &b);
}

hlo_status cpu_run_copy(const step *s, void *const *bufs) {
  switch (s->kind) {
  case STEP_DSLICE: case STEP_DUS: run_dslice(s, bufs); return NULL;
  case STEP_PAD: return run_pad(s, bufs);
  case STEP_GATHER: run_gather(s, bufs); return NULL;
  case STEP_SCATTER: run_scatter(s, bufs); return NULL;
  case STEP_FILL: return run_fill(s, bufs);
  default: return status_at(HLO_INTERNAL, &s->op->loc, "not a data-movement step");
  }
}
