/* kernel.c — building, scheduling and printing kernels (see kernel.h). */
#include "codegen/kernel.h"
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
  sb_printf(o, "] thread_dims %u\n", k->sched.num_thread_dims);
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
