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
  HLO_TRY(fill_buffer(&o->buf, dt, rank, dims, v));
  o->map = *map;
  o->value = value;
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

hlo_status kernel_add_inst(kernel *k, bool comb, const kinst *in, uint32_t *out_index) {
  kinst **list = comb ? &k->comb : &k->body;
  uint32_t *n = comb ? &k->num_comb : &k->num_body, *cap = comb ? &k->cap_comb : &k->cap_body;
  /* CSE: instructions are built from kinst_make (zeroed), so equal
   * instructions are equal bytes. KI_PARAM is never merged with another kind. */
  for (uint32_t i = 0; i < *n; i++)
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
  for (uint32_t d = 0; d + 1 < np; d++) k->sched.tile[d] = 1;
  if (np > 0 && k->num_reduce_dims == 0) {
    int64_t n = k->dims[np - 1];
    k->sched.tile[np - 1] = n > inner_tile ? inner_tile : (n > 0 ? n : 1);
  } else if (np > 0) {
    k->sched.tile[np - 1] = 1;
  }
  k->sched.reduce_lanes = 0;
  int64_t id_i;
  double id_f;
  if (k->num_reduce_dims && kernel_reduce_identity(k, &id_i, &id_f)) {
    int size = dtype_bits(k->acc_dtype) / 8;
    uint32_t lanes = (uint32_t)(128 / (size > 0 ? size : 1));
    if (lanes > 64) lanes = 64;
    if (lanes < 8) lanes = 8;
    if (k->dims[k->rank - 1] >= 2 * (int64_t)lanes) {
      k->sched.reduce_lanes = lanes;
      if (dtype_is_float(k->acc_dtype)) k->identity.f = id_f;
      else k->identity.i = id_i;
    }
  }
}

bool kernel_reduce_identity(const kernel *k, int64_t *i, double *f) {
  *i = 0;
  *f = 0;
  if (!k->num_reduce_dims || k->num_comb != 3 || k->comb_result != 2) return false;
  const kinst *p0 = &k->comb[0], *p1 = &k->comb[1], *r = &k->comb[2];
  if (p0->kind != KI_PARAM || p1->kind != KI_PARAM || p0->input == p1->input ||
      r->kind != KI_OP || r->num_args != 2 || r->args[0] == r->args[1] || r->args[0] > 1 ||
      r->args[1] > 1 || r->dtype != k->acc_dtype)
    return false;
  hlo_dtype dt = k->acc_dtype;
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
  uint32_t l = s->reduce_lanes;
  if (l > 1 && (!k->num_reduce_dims || (l & (l - 1)) || l > 1024))
    return status_new(HLO_INTERNAL, "kernel %s: %u reduction lanes (a power of two up to 1024, "
                      "reductions only)", k->name, l);
  int64_t id_i;
  double id_f;
  if (l > 1 && !kernel_reduce_identity(k, &id_i, &id_f))
    return status_new(HLO_INTERNAL, "kernel %s: reduction lanes need a combiner with an identity",
                      k->name);
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

static void print_insts(strbuf *o, const char *pfx, const kinst *l, uint32_t n) {
  for (uint32_t i = 0; i < n; i++) {
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
  if (k->sched.reduce_lanes > 1) sb_printf(o, " reduce_lanes %u", k->sched.reduce_lanes);
  sb_putc(o, '\n');
  for (uint32_t i = 0; i < k->num_inputs; i++) {
    sb_printf(o, "  in%u: ", i);
    print_buffer(o, &k->inputs[i]);
    sb_puts(o, k->inputs[i].literal ? " (constant)\n" : "\n");
  }
  print_insts(o, "", k->body, k->num_body);
  if (k->num_reduce_dims) {
    sb_puts(o, "  combiner:\n");
    print_insts(o, "c", k->comb, k->num_comb);
    sb_printf(o, "  accumulator %%c%u in %s\n", k->comb_result, hlo_dtype_name(k->acc_dtype));
    hlo_dtype dt = k->outputs ? k->outputs[0].buf.dtype : HLO_F32;
    if (dtype_is_float(dt)) sb_printf(o, "  init %.9g\n", k->init.f);
    else sb_printf(o, "  init %lld\n", (long long)k->init.i);
  }
  for (uint32_t i = 0; i < k->num_outputs; i++) {
    sb_printf(o, "  out%u: ", i);
    print_buffer(o, &k->outputs[i].buf);
    sb_puts(o, " at ");
    print_map(o, &k->outputs[i].map);
    sb_printf(o, k->num_reduce_dims ? " = reduce(%%%u)\n" : " = %%%u\n", k->outputs[i].value);
  }
}
