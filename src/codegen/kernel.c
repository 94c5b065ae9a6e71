/* kernel.c — building, scheduling and printing kernels (see kernel.h). */
#include "codegen/kernel.h"
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include "ir/element.h"

static hlo_status oom(void) { return status_new(HLO_RESOURCE_EXHAUSTED, "out of memory"); }

hlo_status kernel_create(const char *name, uint32_t rank, const int64_t *dims, const hlo_loc *loc,
                         kernel **out) {
  *out = NULL;
  if (rank > KERNEL_MAX_RANK)
    return status_at(HLO_UNIMPLEMENTED, loc, "kernel of rank %u (at most %d)", rank,
                     KERNEL_MAX_RANK);
  kernel *k = calloc(1, sizeof *k);
  if (!k) return oom();
  k->name = strdup(name);
  if (!k->name) {
    free(k);
    return oom();
  }
  k->rank = rank;
  k->num_stages = 1; /* stage 0: a MAP stage (zeroed) */
  for (uint32_t d = 0; d < rank; d++) {
    k->dims[d] = dims[d];
    k->sched.tile[d] = dims[d] > 0 ? dims[d] : 1;
  }
  if (loc) k->loc = *loc;
  *out = k;
  return NULL;
}

void kernel_destroy(kernel *k) {
  if (!k) return;
  free(k->name);
  free(k->inputs);
  free(k->outputs);
  free(k->body);
  free(k->comb);
  free(k);
}

static hlo_status fill_buffer(kernel_buffer *b, hlo_dtype dt, uint32_t rank, const int64_t *dims,
                              const hlo_value *v) {
  if (rank > KERNEL_MAX_RANK)
    return status_new(HLO_UNIMPLEMENTED, "kernel buffer of rank %u (at most %d)", rank,
                      KERNEL_MAX_RANK);
  memset(b, 0, sizeof *b);
  b->dtype = dt;
  b->rank = rank;
  for (uint32_t d = 0; d < rank; d++) b->dims[d] = dims[d];
  b->value = v;
  return NULL;
}

hlo_status kernel_add_input(kernel *k, hlo_dtype dt, uint32_t rank, const int64_t *dims,
                            const hlo_value *v, uint32_t *out_index) {
  kernel_buffer *n = realloc(k->inputs, (k->num_inputs + 1) * sizeof *n);
  if (!n) return oom();
  k->inputs = n;
  HLO_TRY(fill_buffer(&n[k->num_inputs], dt, rank, dims, v));
  *out_index = k->num_inputs++;
  return NULL;
}

hlo_status kernel_add_output(kernel *k, hlo_dtype dt, uint32_t rank, const int64_t *dims,
                             const hlo_value *v, const kernel_map *map, uint32_t value) {
  kernel_output *n = realloc(k->outputs, (k->num_outputs + 1) * sizeof *n);
  if (!n) return oom();
  k->outputs = n;
  kernel_output *o = &n[k->num_outputs];
  memset(o, 0, sizeof *o); /* no dynamic update (dus_operand 0) */
  HLO_TRY(fill_buffer(&o->buf, dt, rank, dims, v));
  o->map = *map;
  o->value = value;
  o->stage = k->num_stages ? k->num_stages - 1 : 0;
  k->num_outputs++;
  return NULL;
}

kinst kinst_make(kinst_kind kind, hlo_dtype dtype) {
  kinst in;
  memset(&in, 0, sizeof in); /* zero padding too: CSE compares bytes */
  in.kind = kind;
  in.dtype = dtype;
  in.guard = -1;
  in.indirect = -1;
  return in;
}

/* Appends `in` to list (*list, *n, *cap), reusing an identical instruction
 * at or after `from` (CSE by structure within a stage). */
static hlo_status list_add(kinst **list, uint32_t *n, uint32_t *cap, uint32_t from,
                           const kinst *in, bool cse, uint32_t *out_index) {
  /* CSE: instructions are built from kinst_make (zeroed), so equal
   * instructions are equal bytes. KI_PARAM is never merged with another kind. */
  for (uint32_t i = from; cse && i < *n; i++)
    if (!memcmp(&(*list)[i], in, sizeof *in)) {
      *out_index = i;
      return NULL;
    }
  if (*n == *cap) {
    uint32_t nc = *cap ? *cap * 2 : 16;
    kinst *nl = realloc(*list, nc * sizeof *nl);
    if (!nl) return oom();
    *list = nl;
    *cap = nc;
  }
  (*list)[*n] = *in;
  *out_index = (*n)++;
  return NULL;
}

hlo_status kernel_add_inst(kernel *k, bool comb, const kinst *in, uint32_t *out_index) {
  if (!k->num_stages) k->num_stages = 1;
  kernel_stage *st = &k->stages[k->num_stages - 1];
  if (comb) {
    HLO_TRY(list_add(&k->comb, &k->num_comb, &k->cap_comb, st->comb_begin, in, true, out_index));
    st->comb_end = k->num_comb;
  } else {
    HLO_TRY(list_add(&k->body, &k->num_body, &k->cap_body, st->body_begin, in, true, out_index));
    st->body_end = k->num_body;
  }
  return NULL;
}

hlo_status kernel_begin_stage(kernel *k, kernel_stage_kind kind, uint32_t *out_stage) {
  if (k->num_stages == 1 && k->stages[0].body_begin == k->stages[0].body_end &&
      k->stages[0].comb_begin == k->stages[0].comb_end && !k->num_outputs) {
    k->num_stages = 0; /* the empty stage 0 of kernel_create */
  }
  if (k->num_stages >= KERNEL_MAX_STAGES)
    return status_at(HLO_UNIMPLEMENTED, &k->loc, "kernel %s: more than %d stages", k->name,
                     KERNEL_MAX_STAGES);
  kernel_stage *st = &k->stages[k->num_stages];
  memset(st, 0, sizeof *st);
  st->kind = kind;
  st->body_begin = st->body_end = k->num_body;
  st->comb_begin = st->comb_end = k->num_comb;
  k->sched.reduce_lanes[k->num_stages] = 0;
  *out_stage = k->num_stages++;
  return NULL;
}

hlo_status kernel_append_stage(kernel *k, const kernel *part, uint32_t *out_stage,
                               uint32_t *out_offset) {
  const kernel_stage *ps = &part->stages[part->num_stages - 1];
  uint32_t s;
  HLO_TRY(kernel_begin_stage(k, ps->kind, &s));
  kernel_stage *st = &k->stages[s];
  uint32_t boff = k->num_body - ps->body_begin, coff = k->num_comb - ps->comb_begin;
  for (uint32_t i = ps->body_begin; i < ps->body_end; i++) {
    kinst in = part->body[i];
    for (uint32_t a = 0; a < in.num_args; a++) in.args[a] += boff;
    if (in.guard >= 0) in.guard += (int32_t)boff;
    uint32_t idx;
    HLO_TRY(list_add(&k->body, &k->num_body, &k->cap_body, 0, &in, false, &idx));
  }
  for (uint32_t i = ps->comb_begin; i < ps->comb_end; i++) {
    kinst in = part->comb[i];
    for (uint32_t a = 0; a < in.num_args; a++) in.args[a] += coff;
    uint32_t idx;
    HLO_TRY(list_add(&k->comb, &k->num_comb, &k->cap_comb, 0, &in, false, &idx));
  }
  st->body_end = k->num_body;
  st->comb_end = k->num_comb;
  st->value = ps->value + boff;
  st->comb_result = ps->comb_result + coff;
  st->dtype = ps->dtype;
  st->acc_dtype = ps->acc_dtype;
  st->init = ps->init;
  st->identity = ps->identity;
  for (uint32_t o = 0; o < part->num_outputs; o++) {
    const kernel_output *po = &part->outputs[o];
    if (po->stage != part->num_stages - 1) continue;
    HLO_TRY(kernel_add_output(k, po->buf.dtype, po->buf.rank, po->buf.dims, po->buf.value,
                              &po->map, po->value + boff));
    k->outputs[k->num_outputs - 1].stage = s;
  }
  *out_stage = s;
  if (out_offset) *out_offset = boff;
  return NULL;
}

kernel_map kernel_map_identity(uint32_t rank) {
  kernel_map m;
  memset(&m, 0, sizeof m);
  m.rank = rank;
  for (uint32_t d = 0; d < rank && d < KERNEL_MAX_RANK; d++) m.dim[d].coeff[d] = 1;
  return m;
}

kernel_affine kernel_map_linear(const kernel_map *m, const int64_t *dims) {
  kernel_affine r;
  memset(&r, 0, sizeof r);
  if (m->flat) return m->dim[0];
  int64_t stride = 1;
  for (uint32_t j = m->rank; j-- > 0;) {
    r.offset += stride * m->dim[j].offset;
    for (uint32_t i = 0; i < KERNEL_MAX_RANK; i++) r.coeff[i] += stride * m->dim[j].coeff[i];
    stride *= dims[j];
  }
  return r;
}

int64_t kernel_num_tiles(const kernel *k) {
  int64_t n = 1;
  for (uint32_t d = 0; d < k->sched.num_thread_dims; d++)
    n *= (k->dims[d] + k->sched.tile[d] - 1) / k->sched.tile[d];
  return n;
}

void kernel_schedule_default(kernel *k, int64_t inner_tile) {
  uint32_t np = k->rank - k->num_reduce_dims;
  if (inner_tile <= 0) inner_tile = 4096;
  for (uint32_t d = 0; d < k->rank; d++) k->sched.tile[d] = k->dims[d] > 0 ? k->dims[d] : 1;
  k->sched.num_thread_dims = np;
  k->sched.row_threads = 0;
  for (uint32_t d = 0; d + 1 < np; d++) k->sched.tile[d] = 1;
  if (np > 0 && k->num_reduce_dims == 0) {
    int64_t n = k->dims[np - 1];
    k->sched.tile[np - 1] = n > inner_tile ? inner_tile : (n > 0 ? n : 1);
  } else if (np > 0) {
    k->sched.tile[np - 1] = 1;
  }
  for (uint32_t s = 0; s < k->num_stages; s++) {
    kernel_stage *st = &k->stages[s];
    k->sched.reduce_lanes[s] = 0;
    int64_t id_i;
    double id_f;
    if (!k->num_reduce_dims || st->kind != KSTAGE_REDUCE || !kernel_stage_identity(k, s, &id_i, &id_f))
      continue;
    int size = dtype_bits(st->acc_dtype) / 8;
    uint32_t lanes = (uint32_t)(128 / (size > 0 ? size : 1));
    if (lanes > 64) lanes = 64;
    if (lanes < 8) lanes = 8;
    if (k->dims[k->rank - 1] >= 2 * (int64_t)lanes) {
      k->sched.reduce_lanes[s] = lanes;
      if (dtype_is_float(st->acc_dtype)) st->identity.f = id_f;
      else st->identity.i = id_i;
    }
  }
}

bool kernel_stage_identity(const kernel *k, uint32_t stage, int64_t *i, double *f) {
  *i = 0;
  *f = 0;
  if (stage >= k->num_stages) return false;
  const kernel_stage *st = &k->stages[stage];
  uint32_t b = st->comb_begin;
  if (st->kind != KSTAGE_REDUCE || st->comb_end - b != 3 || st->comb_result != b + 2) return false;
  const kinst *p0 = &k->comb[b], *p1 = &k->comb[b + 1], *r = &k->comb[b + 2];
  if (p0->kind != KI_PARAM || p1->kind != KI_PARAM || p0->input == p1->input ||
      r->kind != KI_OP || r->num_args != 2 || r->args[0] == r->args[1] || r->args[0] < b ||
      r->args[0] > b + 1 || r->args[1] < b || r->args[1] > b + 1 || r->dtype != st->acc_dtype)
    return false;
  hlo_dtype dt = st->acc_dtype;
  hlo_dtype_class cls = dtype_class(dt);
  bool fl = cls == HLO_CLASS_FLOAT, bo = cls == HLO_CLASS_BOOL, un = cls == HLO_CLASS_UINT;
  if (!fl && !bo && cls != HLO_CLASS_SINT && !un) return false;
  int bits = dtype_bits(dt);
  switch (r->op) {
  case OP_ADD: *f = -0.0; return true;
  case OP_OR: case OP_XOR: return !fl;
  case OP_MULTIPLY: *i = 1, *f = 1.0; return true;
  case OP_AND: *i = bo ? 1 : -1; return !fl;
  case OP_MAXIMUM:
    if (fl) *f = -HUGE_VAL;
    else if (cls == HLO_CLASS_SINT) *i = (int64_t)((uint64_t)0 - ((uint64_t)1 << (bits - 1)));
    return true;
  case OP_MINIMUM:
    if (fl) *f = HUGE_VAL;
    else if (bo) *i = 1;
    else if (un) *i = bits >= 64 ? -1 : (int64_t)(((uint64_t)1 << bits) - 1);
    else *i = (int64_t)(((uint64_t)1 << (bits - 1)) - 1);
    return true;
  default:
    return false;
  }
}

bool kernel_op_expensive(hlo_opcode op) {
  switch (op) {
  case OP_DIVIDE: case OP_REMAINDER: case OP_EXPONENTIAL: case OP_EXPONENTIAL_MINUS_ONE:
  case OP_LOG: case OP_LOG_PLUS_ONE: case OP_LOGISTIC: case OP_TANH: case OP_SINE:
  case OP_COSINE: case OP_TAN: case OP_SQRT: case OP_RSQRT: case OP_CBRT: case OP_POWER:
  case OP_ATAN2:
    return true;
  default:
    return false;
  }
}

/* Whether affine `a` has a non-zero coefficient on a row variable. */
static bool affine_on_row(const kernel *k, const kernel_affine *a) {
  for (uint32_t d = k->rank - k->num_reduce_dims; d < k->rank && d < KERNEL_MAX_RANK; d++)
    if (a->coeff[d]) return true;
  return false;
}

void kernel_row_varying(const kernel *k, bool *out) {
  for (uint32_t i = 0; i < k->num_body; i++) {
    const kinst *in = &k->body[i];
    bool v = false;
    if (k->num_reduce_dims) {
      switch (in->kind) {
      case KI_LOAD:
        for (uint32_t j = 0; j < (in->map.flat ? 1 : in->map.rank) && !v; j++)
          v = affine_on_row(k, &in->map.dim[j]);
        if (in->guard >= 0 && (uint32_t)in->guard < i) v = v || out[in->guard];
        break;
      case KI_INDEX: v = affine_on_row(k, &in->index); break;
      case KI_TEMP: v = true; break;
      case KI_OP:
        for (uint32_t a = 0; a < in->num_args; a++) v = v || (in->args[a] < i && out[in->args[a]]);
        break;
      default: break;
      }
    }
    out[i] = v;
  }
}

bool kernel_has_dus(const kernel *k) {
  for (uint32_t i = 0; i < k->num_outputs; i++)
    if (kernel_output_dus(&k->outputs[i])) return true;
  return false;
}

bool kernel_tiles_rows(const kernel *k, uint32_t buffer, int64_t *rows_per_tile) {
  *rows_per_tile = 0;
  if (buffer >= k->num_inputs + k->num_outputs || kernel_has_dus(k)) return false;
  const kernel_schedule *s = &k->sched;
  uint32_t T = s->num_thread_dims;
  int64_t n[KERNEL_MAX_RANK], W[KERNEL_MAX_RANK];
  for (uint32_t d = 0; d < T; d++) n[d] = (k->dims[d] + s->tile[d] - 1) / s->tile[d];
  int64_t w = 1;
  for (uint32_t d = T; d-- > 0;) {
    W[d] = w;
    w *= n[d] > 0 ? n[d] : 1;
  }
  int64_t r = -1;
  bool any = false;
  /* one map: the leading dim is sum_d c_d x_d with x_d = t_d s_d + u_d over
   * the thread dims: tile t = sum_d t_d W_d covers rows [t r, (t+1) r) iff
   * c_d s_d = r W_d for every split thread dim and sum_d c_d (s_d - 1) < r */
  for (uint32_t i = 0; i <= k->num_body; i++) {
    const kernel_map *m;
    if (buffer >= k->num_inputs) {
      if (i > 0) break;
      m = &k->outputs[buffer - k->num_inputs].map;
    } else {
      if (i == k->num_body) break;
      const kinst *in = &k->body[i];
      if (in->kind != KI_LOAD || in->input != buffer) continue;
      m = &in->map;
    }
    if (m->flat || m->rank == 0) return false;
    const kernel_affine *a = &m->dim[0];
    if (a->offset != 0) return false;
    for (uint32_t d = T; d < KERNEL_MAX_RANK; d++)
      if (a->coeff[d]) return false;
    int64_t within = 0, rr = -1;
    for (uint32_t d = 0; d < T; d++) {
      int64_t c = a->coeff[d];
      if (c < 0) return false;
      within += c * (s->tile[d] - 1);
      if (n[d] <= 1) continue;
      if (c == 0 || (c * s->tile[d]) % W[d]) return false;
      int64_t q = c * s->tile[d] / W[d];
      if (rr >= 0 && rr != q) return false;
      rr = q;
    }
    if (rr < 0) rr = within + 1; /* one tile: it covers the rows it reads */
    if (within >= rr || (r >= 0 && r != rr)) return false;
    r = rr;
    any = true;
  }
  if (!any) return false;
  *rows_per_tile = r;
  return true;
}

/* Whether the access a (a linear map over buffer b of last dim n) at the
 * tile-1 thread coordinates reads or writes only elements of flat row
 * sum_d x_d W_d (kernel_tiles_flat_rows). */
static bool flat_row_access(const kernel *k, kernel_affine a, int64_t n) {
  const kernel_schedule *s = &k->sched;
  uint32_t T = s->num_thread_dims;
  /* the element's linear offset: n * (the tile index) + an offset in
   * [0, n) over the other index variables' ranges */
  int64_t w = n, lo = a.offset, hi = a.offset;
  for (uint32_t d = k->rank; d-- > 0;) {
    if (k->dims[d] == 1) continue; /* x_d is 0 */
    if (d < T && s->tile[d] == 1) {
      if (a.coeff[d] != w) return false;
      w *= k->dims[d];
      continue;
    }
    int64_t c = a.coeff[d] * (k->dims[d] - 1);
    if (c < 0) lo += c;
    else hi += c;
  }
  for (uint32_t d = k->rank; d < KERNEL_MAX_RANK; d++)
    if (a.coeff[d]) return false;
  return lo >= 0 && hi < n;
}

bool kernel_tiles_flat_rows(const kernel *k, uint32_t buffer) {
  bool is_out = buffer >= k->num_inputs;
  if ((is_out && buffer - k->num_inputs >= k->num_outputs) || kernel_has_dus(k)) return false;
  const kernel_buffer *b =
      is_out ? &k->outputs[buffer - k->num_inputs].buf : &k->inputs[buffer];
  const kernel_schedule *s = &k->sched;
  uint32_t T = s->num_thread_dims;
  if (b->rank < 1 || T < 1) return false;
  int64_t n = b->dims[b->rank - 1], rows = 1;
  for (uint32_t j = 0; j + 1 < b->rank; j++) rows *= b->dims[j];
  /* thread dims of tile 1 number the tiles; unsplit ones lie within one */
  for (uint32_t d = 0; d < T; d++)
    if (s->tile[d] != 1 && s->tile[d] != k->dims[d]) return false;
  if (n <= 0 || rows <= 0 || kernel_num_tiles(k) != rows) return false;
  if (is_out)
    return flat_row_access(k, kernel_map_linear(&k->outputs[buffer - k->num_inputs].map, b->dims),
                           n);
  bool any = false;
  for (uint32_t i = 0; i < k->num_body; i++) {
    const kinst *q = &k->body[i];
    if (q->kind != KI_LOAD || q->input != buffer) continue;
    if (!flat_row_access(k, kernel_map_linear(&q->map, b->dims), n)) return false;
    any = true;
  }
  return any;
}

/* A LOOP kernel's rules (kernel.h, Loops). */
static hlo_status check_loop(const kernel *k) {
  const kernel_loop *l = &k->loop;
  bool ok = k->rank == 0 && k->num_stages == 1 && k->stages[0].kind == KSTAGE_MAP &&
            !k->num_temps && l->num_carried <= KERNEL_MAX_LOOP_CARRIED && l->begin <= l->cond_end &&
            l->cond_end <= k->num_body && l->cond < l->cond_end && k->body[l->cond].dtype == HLO_I1;
  for (uint32_t i = 0; ok && i < l->num_carried; i++) {
    const kinst *p = l->param[i] < k->num_body ? &k->body[l->param[i]] : NULL;
    ok = l->init[i] < l->begin && l->next[i] < k->num_body && p && l->param[i] >= l->begin &&
         p->kind == KI_PARAM && p->input == i && p->dtype == k->body[l->init[i]].dtype &&
         p->dtype == k->body[l->next[i]].dtype;
  }
  for (uint32_t i = 0; ok && i < k->num_body; i++)
    if (k->body[i].kind == KI_PARAM)
      ok = i >= l->begin && k->body[i].input < l->num_carried;
    else
      ok = k->body[i].kind == KI_LOAD || k->body[i].kind == KI_CONST || k->body[i].kind == KI_OP;
  for (uint32_t i = 0; ok && i < k->num_outputs; i++) {
    uint32_t v = k->outputs[i].value;
    ok = !kernel_output_dus(&k->outputs[i]) &&
         (v < l->begin || (v < k->num_body && k->body[v].kind == KI_PARAM));
  }
  return ok ? NULL : status_new(HLO_INTERNAL, "kernel %s: the loop breaks its rules", k->name);
}

hlo_status kernel_check_schedule(const kernel *k) {
  const kernel_schedule *s = &k->sched;
  uint32_t np = k->rank - k->num_reduce_dims;
  if (s->num_thread_dims > np)
    return status_new(HLO_INTERNAL, "kernel %s: %u thread dims but %u parallel dims", k->name,
                      s->num_thread_dims, np);
  for (uint32_t d = 0; d < k->rank; d++) {
    int64_t n = k->dims[d] > 0 ? k->dims[d] : 1;
    if (s->tile[d] < 1 || s->tile[d] > n)
      return status_new(HLO_INTERNAL, "kernel %s: tile %lld of dim %u (size %lld)", k->name,
                        (long long)s->tile[d], d, (long long)k->dims[d]);
    if (d >= np && s->tile[d] != n)
      return status_new(HLO_INTERNAL, "kernel %s: reduction dim %u is split", k->name, d);
  }
  if (k->num_stages < 1 || k->num_stages > KERNEL_MAX_STAGES)
    return status_new(HLO_INTERNAL, "kernel %s: %u stages", k->name, k->num_stages);
  for (uint32_t i = 0; i < k->num_outputs; i++) {
    const kernel_output *out = &k->outputs[i];
    if (!kernel_output_dus(out)) continue;
    kernel_map id = kernel_map_identity(k->rank);
    bool ok = k->num_outputs == 1 && !k->num_reduce_dims && k->rank >= 1 &&
              out->buf.rank == k->rank && !out->map.flat && out->map.rank == k->rank &&
              out->dus_operand <= k->num_inputs &&
              k->inputs[out->dus_operand - 1].dtype == out->buf.dtype &&
              k->inputs[out->dus_operand - 1].rank == out->buf.rank;
    for (uint32_t j = 0; ok && j < k->rank; j++) {
      /* the identity (a unit dim's variable may be dropped: always 0) */
      ok = (!memcmp(&out->map.dim[j], &id.dim[j], sizeof id.dim[j]) ||
            (k->dims[j] == 1 && out->map.dim[j].offset == 0)) &&
           k->dims[j] <= out->buf.dims[j] &&
           k->inputs[out->dus_operand - 1].dims[j] == out->buf.dims[j] &&
           out->dus_start[j] <= k->num_inputs &&
           (!out->dus_start[j] || (k->inputs[out->dus_start[j] - 1].rank == 0 &&
                                   dtype_is_int(k->inputs[out->dus_start[j] - 1].dtype)));
    }
    if (!ok)
      return status_new(HLO_INTERNAL, "kernel %s: dynamic-update output %u breaks its rules",
                        k->name, i);
  }
  uint32_t next_body = 0, next_comb = 0;
  for (uint32_t st = 0; st < k->num_stages; st++) {
    const kernel_stage *g = &k->stages[st];
    if (g->body_begin != next_body || g->body_end < g->body_begin || g->comb_begin != next_comb ||
        g->comb_end < g->comb_begin)
      return status_new(HLO_INTERNAL, "kernel %s: stage %u's ranges are not contiguous", k->name, st);
    next_body = g->body_end;
    next_comb = g->comb_end;
    if (g->kind == KSTAGE_REDUCE &&
        (!k->num_reduce_dims || g->value < g->body_begin || g->value >= g->body_end ||
         g->comb_result < g->comb_begin || g->comb_result >= g->comb_end))
      return status_new(HLO_INTERNAL, "kernel %s: REDUCE stage %u without a row, value or combiner",
                        k->name, st);
    for (uint32_t i = g->body_begin; i < g->body_end; i++) {
      const kinst *in = &k->body[i];
      for (uint32_t a = 0; a < in->num_args; a++)
        if (in->args[a] < g->body_begin || in->args[a] >= i)
          return status_new(HLO_INTERNAL, "kernel %s: instruction %u reads %u outside its stage",
                            k->name, i, in->args[a]);
      if (in->kind == KI_LOAD && in->guard >= 0 &&
          ((uint32_t)in->guard < g->body_begin || (uint32_t)in->guard >= i))
        return status_new(HLO_INTERNAL, "kernel %s: instruction %u's guard is outside its stage",
                          k->name, i);
      if (in->kind == KI_ROW &&
          (in->input >= st || k->stages[in->input].kind != KSTAGE_REDUCE))
        return status_new(HLO_INTERNAL, "kernel %s: instruction %u reads the row value of stage %u",
                          k->name, i, in->input);
      if (in->kind == KI_TEMP &&
          (in->input >= k->num_temps || k->temps[in->input].stage >= st))
        return status_new(HLO_INTERNAL, "kernel %s: instruction %u reads temporary %u", k->name,
                          i, in->input);
      if (in->kind == KI_LOAD && in->input >= k->num_inputs)
        return status_new(HLO_INTERNAL, "kernel %s: instruction %u loads input %u", k->name, i,
                          in->input);
    }
    uint32_t l = s->reduce_lanes[st];
    if (l > 1 && (g->kind != KSTAGE_REDUCE || (l & (l - 1)) || l > 1024))
      return status_new(HLO_INTERNAL, "kernel %s: %u reduction lanes (a power of two up to 1024, "
                        "reductions only)", k->name, l);
    int64_t id_i;
    double id_f;
    if (l > 1 && !kernel_stage_identity(k, st, &id_i, &id_f))
      return status_new(HLO_INTERNAL, "kernel %s: reduction lanes need a combiner with an identity",
                        k->name);
  }
  if (k->loop.num_carried) HLO_TRY(check_loop(k));
  uint32_t rt = s->row_threads;
  if (rt > 1) {
    if ((rt & (rt - 1)) || rt < 32 || rt > 1024 || !k->num_reduce_dims)
      return status_new(HLO_INTERNAL, "kernel %s: %u threads per row (a power of two, 32..1024, "
                        "reductions only)", k->name, rt);
    if (s->num_thread_dims != np)
      return status_new(HLO_INTERNAL, "kernel %s: threads per row need every parallel dim a "
                        "thread dim", k->name);
    for (uint32_t d = 0; d < np; d++)
      if (s->tile[d] != 1 && k->dims[d] > 1)
        return status_new(HLO_INTERNAL, "kernel %s: threads per row need tiles of one row", k->name);
    for (uint32_t st = 0; st < k->num_stages; st++)
      if (s->reduce_lanes[st] > 1)
        return status_new(HLO_INTERNAL, "kernel %s: threads per row and reduction lanes", k->name);
  }
  if (next_body != k->num_body || next_comb != k->num_comb)
    return status_new(HLO_INTERNAL, "kernel %s: instructions outside every stage", k->name);
  for (uint32_t t = 0; t < k->num_temps; t++) {
    const kernel_temp *tp = &k->temps[t];
    if (tp->stage >= k->num_stages || tp->value < k->stages[tp->stage].body_begin ||
        tp->value >= k->stages[tp->stage].body_end || !k->num_reduce_dims)
      return status_new(HLO_INTERNAL, "kernel %s: temporary %u", k->name, t);
  }
  for (uint32_t o = 0; o < k->num_outputs; o++) {
    const kernel_output *out = &k->outputs[o];
    if (out->stage >= k->num_stages || k->stages[out->stage].kind != KSTAGE_MAP ||
        out->value < k->stages[out->stage].body_begin || out->value >= k->stages[out->stage].body_end)
      return status_new(HLO_INTERNAL, "kernel %s: output %u is not stored by a MAP stage's value",
                        k->name, o);
  }
  return NULL;
}

hlo_dtype kernel_compute_dtype(hlo_dtype dt) {
  return dt == HLO_BF16 || dt == HLO_F16 ? HLO_F32 : dt;
}

bool kernel_dtype_supported(hlo_dtype dt) {
  switch (dt) {
  case HLO_I1: case HLO_I8: case HLO_I16: case HLO_I32: case HLO_I64:
  case HLO_UI8: case HLO_UI16: case HLO_UI32: case HLO_UI64:
  case HLO_BF16: case HLO_F16: case HLO_F32: case HLO_F64:
    return true;
  default:
    return false;
  }
}

/* ------------------------------------------------------------- printing */

static void print_affine(strbuf *o, const kernel_affine *a) {
  bool any = false;
  for (uint32_t i = 0; i < KERNEL_MAX_RANK; i++) {
    if (!a->coeff[i]) continue;
    if (any) sb_puts(o, " + ");
    if (a->coeff[i] != 1) sb_printf(o, "%lld*", (long long)a->coeff[i]);
    sb_printf(o, "x%u", i);
    any = true;
  }
  if (a->offset || !any) sb_printf(o, "%s%lld", any ? " + " : "", (long long)a->offset);
}

static void print_map(strbuf *o, const kernel_map *m) {
  if (m->flat) {
    sb_puts(o, "[flat ");
    print_affine(o, &m->dim[0]);
    sb_putc(o, ']');
    return;
  }
  sb_putc(o, '[');
  for (uint32_t j = 0; j < m->rank; j++) {
    if (j) sb_puts(o, ", ");
    print_affine(o, &m->dim[j]);
  }
  sb_putc(o, ']');
}

static void print_buffer(strbuf *o, const kernel_buffer *b) {
  sb_puts(o, "tensor<");
  for (uint32_t d = 0; d < b->rank; d++) sb_printf(o, "%lldx", (long long)b->dims[d]);
  sb_printf(o, "%s>", hlo_dtype_name(b->dtype));
}

static const char *const cmp_names[] = {"EQ", "NE", "LT", "LE", "GT", "GE"};

static void print_insts(strbuf *o, const char *pfx, const kinst *l, uint32_t from, uint32_t n) {
  for (uint32_t i = from; i < n; i++) {
    const kinst *in = &l[i];
    sb_printf(o, "  %%%s%u = ", pfx, i);
    switch (in->kind) {
    case KI_LOAD:
      sb_printf(o, "load in%u", in->input);
      print_map(o, &in->map);
      if (in->guard >= 0) sb_printf(o, " if %%%s%d", pfx, in->guard);
      break;
    case KI_CONST:
      if (dtype_is_float(in->dtype)) sb_printf(o, "constant %.9g", in->cval.f);
      else sb_printf(o, "constant %lld", (long long)in->cval.i);
      break;
    case KI_INDEX:
      sb_puts(o, "index ");
      print_affine(o, &in->index);
      break;
    case KI_PARAM: sb_printf(o, "param %u", in->input); break;
    case KI_ROW: sb_printf(o, "row stage%u", in->input); break;
    case KI_TEMP: sb_printf(o, "temp%u", in->input); break;
    case KI_OP: {
      const char *nm = op_name(in->op);
      sb_puts(o, nm && !strncmp(nm, "stablehlo.", 10) ? nm + 10 : nm ? nm : "?");
      if (in->op == OP_COMPARE) sb_printf(o, " %s", cmp_names[in->cmp]);
      for (uint32_t a = 0; a < in->num_args; a++) sb_printf(o, "%s %%%s%u", a ? "," : "", pfx, in->args[a]);
      break;
    }
    }
    sb_printf(o, " : %s\n", hlo_dtype_name(in->dtype));
  }
}

void kernel_print(const kernel *k, strbuf *o) {
  sb_printf(o, "kernel @%s index_space [", k->name);
  for (uint32_t d = 0; d < k->rank; d++)
    sb_printf(o, "%s%lld%s", d ? ", " : "", (long long)k->dims[d],
              d >= k->rank - k->num_reduce_dims ? " red" : "");
  sb_puts(o, "] tiles [");
  for (uint32_t d = 0; d < k->rank; d++)
    sb_printf(o, "%s%lld", d ? ", " : "", (long long)k->sched.tile[d]);
  sb_printf(o, "] thread_dims %u", k->sched.num_thread_dims);
  if (k->sched.row_threads > 1) sb_printf(o, " row_threads %u", k->sched.row_threads);
  sb_puts(o, "\n");
  for (uint32_t i = 0; i < k->num_inputs; i++) {
    sb_printf(o, "  in%u: ", i);
    print_buffer(o, &k->inputs[i]);
    sb_puts(o, k->inputs[i].literal ? " (constant)\n" : "\n");
  }
  for (uint32_t t = 0; t < k->num_temps; t++)
    sb_printf(o, "  temp%u: %s per row, stage %u stores %%%u\n", t,
              hlo_dtype_name(k->temps[t].dtype), k->temps[t].stage, k->temps[t].value);
  bool many = k->num_stages > 1 || (k->num_stages == 1 && k->stages[0].kind == KSTAGE_REDUCE);
  for (uint32_t s = 0; s < k->num_stages; s++) {
    const kernel_stage *st = &k->stages[s];
    if (many) {
      sb_printf(o, " stage%u %s", s, st->kind == KSTAGE_REDUCE ? "reduce" : "map");
      if (k->sched.reduce_lanes[s] > 1) sb_printf(o, " reduce_lanes %u", k->sched.reduce_lanes[s]);
      sb_putc(o, '\n');
    }
    if (k->loop.num_carried) {
      const kernel_loop *l = &k->loop;
      print_insts(o, "", k->body, 0, l->begin);
      sb_puts(o, "  loop (");
      for (uint32_t i = 0; i < l->num_carried; i++)
        sb_printf(o, "%sp%u = %%%u", i ? ", " : "", i, l->init[i]);
      sb_puts(o, ") cond:\n");
      print_insts(o, "", k->body, l->begin, l->cond_end);
      sb_printf(o, "  while %%%u do:\n", l->cond);
      print_insts(o, "", k->body, l->cond_end, k->num_body);
      sb_puts(o, "  next (");
      for (uint32_t i = 0; i < l->num_carried; i++)
        sb_printf(o, "%sp%u = %%%u", i ? ", " : "", i, l->next[i]);
      sb_puts(o, ")\n");
      continue;
    }
    print_insts(o, "", k->body, st->body_begin, st->body_end);
    if (st->kind == KSTAGE_REDUCE) {
      sb_puts(o, "  combiner:\n");
      print_insts(o, "c", k->comb, st->comb_begin, st->comb_end);
      sb_printf(o, "  accumulator %%c%u in %s\n", st->comb_result, hlo_dtype_name(st->acc_dtype));
      if (dtype_is_float(st->dtype)) sb_printf(o, "  init %.9g\n", st->init.f);
      else sb_printf(o, "  init %lld\n", (long long)st->init.i);
      sb_printf(o, "  row value = reduce(%%%u) : %s\n", st->value, hlo_dtype_name(st->dtype));
    }
  }
  for (uint32_t i = 0; i < k->num_outputs; i++) {
    sb_printf(o, "  out%u: ", i);
    print_buffer(o, &k->outputs[i].buf);
    sb_puts(o, " at ");
    print_map(o, &k->outputs[i].map);
    sb_printf(o, " = %%%u", k->outputs[i].value);
    if (many) sb_printf(o, " (stage%u)", k->outputs[i].stage);
    if (kernel_output_dus(&k->outputs[i])) {
      sb_printf(o, " update of in%u at starts [", k->outputs[i].dus_operand - 1);
      for (uint32_t j = 0; j < k->outputs[i].buf.rank; j++) {
        uint32_t st = k->outputs[i].dus_start[j];
        if (st) sb_printf(o, "%sin%u", j ? ", " : "", st - 1);
        else sb_printf(o, "%s0", j ? ", " : "");
      }
      sb_puts(o, "] clamped");
    }
    sb_putc(o, '\n');
  }
}
