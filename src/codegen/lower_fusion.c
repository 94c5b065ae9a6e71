/* lower_fusion.c — a list of StableHLO ops lowered to one kernel.
 *
 * The lowering is XLA's elemental emitter turned into data: gen(v, M, g)
 * makes the body instruction computing value v at the tensor index M (an
 * affine map of the index variables), under guard g (an i1 instruction, or
 * -1). Layout ops do not make instructions: they rewrite M for their operand
 * (broadcast_in_dim drops dims, transpose permutes, slice scales and
 * offsets, reshape re-expresses the linear position) until a value from
 * outside the fusion is reached and loaded through the composed map.
 * Elementwise ops make a KI_OP over their operands at the same M. Results
 * are memoised on (value, map, guard), and kernel_add_inst merges equal
 * instructions, so a DAG is lowered in time linear in its size (times the
 * linear memo search of v0).
 *
 * reshape: its operand's index is delinearize(linearize(M)). We keep it
 * affine when the linear position L = c0 + sum c_i x_i splits into the
 * operand's dims without carries: each term c_i x_i goes to the outermost
 * operand dim whose stride divides c_i, c0 is split into digits, and every
 * dim's largest value (over the index variables' ranges) must stay below its
 * size. That covers reshapes that split or merge dims of what feeds them
 * (the common case: flatten, unflatten, adding unit dims, reshapes of
 * broadcasts). When it does not (a reshape 4x6 -> 2x12 merges pairs of
 * rows: the operand's row is x0*2 + x1/6), the operand gets a FLAT map —
 * the same linear position, all a load needs — which elementwise ops pass
 * on; a layout op under a flat map needs div/mod and is unimplemented.
 *
 * concatenate: each operand k is evaluated at M shifted by its offset along
 * the dimension, its loads guarded by "the point is in operand k's range",
 * and the results chosen by a select chain on the index. */
#include "codegen/lower_fusion.h"
#include <stdlib.h>
#include <string.h>
#include "ir/element.h"

typedef struct memo_entry {
  const hlo_value *v;
  kernel_map map;
  int32_t guard;
  uint32_t inst;
} memo_entry;

/* A memo of one stage (the one being built); `done` keeps those of the
 * stages already appended to the kernel, with absolute instruction indices
 * and their stage in `guard`'s place (entries of unguarded values only). */
typedef struct memo_list {
  memo_entry *e;
  uint32_t n, cap;
} memo_list;

/* A REDUCE stage made for reduce result `v` read at kept-dims map `map`. */
typedef struct reduce_stage {
  const hlo_value *v;
  kernel_map map;
  uint32_t stage;
} reduce_stage;

typedef struct lower_ctx {
  kernel *k;                  /* the kernel: inputs, stages, temporaries, outputs */
  kernel *cur;                /* the builder of the stage being lowered (one stage) */
  const hlo_op *const *ops;
  uint32_t num_ops;
  memo_list memo, done;
  reduce_stage *reds;
  uint32_t num_reds;
  bool *varying;              /* scratch for kernel_row_varying over k */
} lower_ctx;

static hlo_status oom(void) { return status_new(HLO_RESOURCE_EXHAUSTED, "out of memory"); }

static const char *short_name(const hlo_op *op) {
  const char *n = op_name(op->opcode);
  return n ? n : "op";
}

static hlo_status unimpl(const hlo_op *op, const char *what) {
  return status_at(HLO_UNIMPLEMENTED, &op->loc, "%s: %s cannot be lowered into a kernel yet",
                   short_name(op), what);
}

static bool in_fusion(const lower_ctx *c, const hlo_op *op) {
  for (uint32_t i = 0; i < c->num_ops; i++)
    if (c->ops[i] == op) return true;
  return false;
}

/* The integer list of a dense-array attribute (the attribute contract's
 * kind for every int list of the ops lowered here). */
static bool ints_attr(const hlo_op *op, const char *name, const int64_t **out, uint32_t *n) {
  const hlo_attr *a = op_attr(op, name);
  if (!a || a->kind != ATTR_DENSE_ARRAY || (!a->u.darr.ints && a->u.darr.n)) return false;
  *out = a->u.darr.ints;
  *n = a->u.darr.n;
  return true;
}

/* Checks that `t` is a static tensor of a supported element type. */
static hlo_status check_type(const hlo_op *op, const hlo_type *t, const hlo_loc *loc) {
  if (t->kind != TYPE_TENSOR || !type_is_static(t) || t->quant)
    return status_at(HLO_UNIMPLEMENTED, loc, "%s: only static, non-quantized tensors can be lowered into a kernel",
                     op ? short_name(op) : "value");
  if (t->rank > KERNEL_MAX_RANK)
    return status_at(HLO_UNIMPLEMENTED, loc, "%s: rank %u is over the kernel limit of %d",
                     op ? short_name(op) : "value", t->rank, KERNEL_MAX_RANK);
  if (!kernel_dtype_supported(t->dtype))
    return status_at(HLO_UNIMPLEMENTED, loc, "%s: element type %s is not supported in kernels yet",
                     op ? short_name(op) : "value", hlo_dtype_name(t->dtype));
  return NULL;
}

static hlo_status add(lower_ctx *c, const kinst *in, uint32_t *out) {
  return kernel_add_inst(c->cur, false, in, out);
}

static hlo_status memo_add(memo_list *l, const hlo_value *v, const kernel_map *m, int32_t g,
                           uint32_t inst) {
  if (l->n == l->cap) {
    uint32_t nc = l->cap ? l->cap * 2 : 32;
    memo_entry *n = realloc(l->e, nc * sizeof *n);
    if (!n) return oom();
    l->e = n;
    l->cap = nc;
  }
  memo_entry *e = &l->e[l->n++];
  memset(e, 0, sizeof *e);
  e->v = v;
  e->map = *m;
  e->guard = g;
  e->inst = inst;
  return NULL;
}

static hlo_status memo_put(lower_ctx *c, const hlo_value *v, const kernel_map *m, int32_t g,
                           uint32_t inst) {
  return memo_add(&c->memo, v, m, g, inst);
}

static bool memo_find(const memo_list *l, const hlo_value *v, const kernel_map *m, int32_t g,
                      uint32_t *inst) {
  for (uint32_t i = l->n; i-- > 0;) {
    const memo_entry *e = &l->e[i];
    if (e->v == v && e->guard == g && !memcmp(&e->map, m, sizeof *m)) {
      *inst = e->inst;
      return true;
    }
  }
  return false;
}

static bool memo_get(const lower_ctx *c, const hlo_value *v, const kernel_map *m, int32_t g,
                     uint32_t *inst) {
  return memo_find(&c->memo, v, m, g, inst);
}

/* The kernel input holding `v` (added on first use). */
static hlo_status input_of(lower_ctx *c, const hlo_value *v, const hlo_attr *literal,
                           uint32_t *out) {
  for (uint32_t i = 0; i < c->k->num_inputs; i++)
    if (c->k->inputs[i].value == v) {
      *out = i;
      return NULL;
    }
  HLO_TRY(check_type(v->def, v->type, &v->loc));
  HLO_TRY(kernel_add_input(c->k, v->type->dtype, v->type->rank, v->type->dims, v, out));
  c->k->inputs[*out].literal = literal;
  return NULL;
}

static kernel_affine affine_zero(void) {
  kernel_affine a;
  memset(&a, 0, sizeof a);
  return a;
}

/* A constant instruction holding element 0 of dense `at` as `dt`. */
static kinst const_of(const hlo_attr *at, hlo_dtype dt) {
  kinst in = kinst_make(KI_CONST, dt);
  if (dtype_is_float(dt)) in.cval.f = elem_get_f64(dt, at->u.dense.data, 0);
  else if (dtype_class(dt) == HLO_CLASS_UINT) in.cval.i = (int64_t)elem_get_u64(dt, at->u.dense.data, 0);
  else in.cval.i = elem_get_i64(dt, at->u.dense.data, 0);
  return in;
}

static hlo_status gen(lower_ctx *c, const hlo_value *v, const kernel_map *m, int32_t g,
                      uint32_t *out);

/* An i64 constant or index instruction. */
static hlo_status gen_i64(lower_ctx *c, int64_t value, uint32_t *out) {
  kinst in = kinst_make(KI_CONST, HLO_I64);
  in.cval.i = value;
  return add(c, &in, out);
}

static hlo_status gen_op(lower_ctx *c, hlo_opcode opc, hlo_dtype dt, kernel_cmp cmp, uint32_t n,
                         const uint32_t *args, uint32_t *out) {
  kinst in = kinst_make(KI_OP, dt);
  in.op = opc;
  in.cmp = cmp;
  in.num_args = n;
  for (uint32_t i = 0; i < n; i++) in.args[i] = args[i];
  return add(c, &in, out);
}

/* Whether elementwise op `opc` on values of class `cls` is supported. */
static bool op_supported(hlo_opcode opc, hlo_dtype_class cls) {
  bool fl = cls == HLO_CLASS_FLOAT, in = cls == HLO_CLASS_SINT || cls == HLO_CLASS_UINT;
  bool bo = cls == HLO_CLASS_BOOL;
  switch (opc) {
  case OP_ADD: case OP_SUBTRACT: case OP_MULTIPLY: case OP_MAXIMUM: case OP_MINIMUM:
  case OP_SELECT: case OP_COMPARE: case OP_CONVERT: case OP_CLAMP:
    return true;
  case OP_AND: case OP_OR: case OP_XOR: case OP_NOT:
    return in || bo;
  case OP_DIVIDE: case OP_REMAINDER: case OP_NEGATE: case OP_ABS: case OP_SIGN:
    return fl || in;
  case OP_SHIFT_LEFT: case OP_SHIFT_RIGHT_LOGICAL: case OP_SHIFT_RIGHT_ARITHMETIC:
    return in;
  case OP_EXPONENTIAL: case OP_EXPONENTIAL_MINUS_ONE: case OP_LOG: case OP_LOG_PLUS_ONE:
  case OP_LOGISTIC: case OP_TANH: case OP_SINE: case OP_COSINE: case OP_TAN: case OP_SQRT:
  case OP_RSQRT: case OP_CBRT: case OP_FLOOR: case OP_CEIL: case OP_ROUND_NEAREST_AFZ:
  case OP_ROUND_NEAREST_EVEN: case OP_POWER: case OP_ATAN2: case OP_IS_FINITE:
    return fl;
  default:
    return false;
  }
}

static hlo_status compare_dir(const hlo_op *op, kernel_cmp *out) {
  static const char *const names[] = {"EQ", "NE", "LT", "LE", "GT", "GE"};
  const hlo_attr *d = op_attr(op, "comparison_direction");
  const hlo_attr *t = op_attr(op, "compare_type");
  if (t && t->kind == ATTR_ENUM && t->u.en.value && !strcmp(t->u.en.value, "TOTALORDER"))
    return unimpl(op, "compare_type TOTALORDER");
  if (!d || d->kind != ATTR_ENUM || !d->u.en.value)
    return status_at(HLO_INVALID_ARGUMENT, &op->loc, "%s: missing comparison_direction",
                     short_name(op));
  for (int i = 0; i < 6; i++)
    if (!strcmp(d->u.en.value, names[i])) {
      *out = (kernel_cmp)i;
      return NULL;
    }
  return status_at(HLO_INVALID_ARGUMENT, &op->loc, "%s: unknown comparison_direction %s",
                   short_name(op), d->u.en.value);
}

static hlo_status gen_elementwise(lower_ctx *c, const hlo_op *op, const kernel_map *m, int32_t g,
                                  uint32_t *out) {
  hlo_dtype rt = op->results[0].type->dtype;
  hlo_dtype at = op->num_operands ? op->operands[op->num_operands > 1 && op->opcode == OP_SELECT ? 1 : 0]->type->dtype : rt;
  if (!op_supported(op->opcode, dtype_class(at)) || op->num_operands > KINST_MAX_ARGS)
    return unimpl(op, hlo_dtype_name(at));
  kernel_cmp cmp = KCMP_EQ;
  if (op->opcode == OP_COMPARE) HLO_TRY(compare_dir(op, &cmp));
  uint32_t args[KINST_MAX_ARGS];
  kernel_map scalar;
  memset(&scalar, 0, sizeof scalar);
  for (uint32_t i = 0; i < op->num_operands; i++) {
    const hlo_value *a = op->operands[i];
    HLO_TRY(check_type(op, a->type, &op->loc));
    /* select's predicate and clamp's bounds may be 0-d */
    const kernel_map *am = a->type->rank == 0 ? &scalar : m;
    HLO_TRY(gen(c, a, am, g, &args[i]));
  }
  return gen_op(c, op->opcode, rt, cmp, op->num_operands, args, out);
}

/* reshape: the operand's map from the result's map `m` (see the top). */
static bool reshape_affine(lower_ctx *c, const hlo_op *op, const kernel_map *m, kernel_map *om) {
  const hlo_type *rt = op->results[0].type, *ot = op->operands[0]->type;
  kernel_affine lin = kernel_map_linear(m, rt->dims);
  memset(om, 0, sizeof *om);
  om->rank = ot->rank;
  /* no elements: no point of the index space reads it (and a zero stride
   * must not divide below); any map will do */
  for (uint32_t j = 0; j < ot->rank; j++)
    if (ot->dims[j] == 0) return true;
  int64_t stride[KERNEL_MAX_RANK], s = 1;
  for (uint32_t j = ot->rank; j-- > 0;) {
    stride[j] = s;
    s *= ot->dims[j];
  }
  if (lin.offset < 0 || m->flat) return false;
  int64_t rem = lin.offset;
  for (uint32_t j = 0; j < ot->rank; j++) {
    om->dim[j].offset = rem / stride[j];
    rem %= stride[j];
  }
  for (uint32_t i = 0; i < KERNEL_MAX_RANK; i++) {
    int64_t ci = lin.coeff[i];
    if (!ci) continue;
    uint32_t j = 0;
    while (j < ot->rank && (ci < 0 || stride[j] > ci || ci % stride[j])) j++;
    if (j == ot->rank) return false;
    om->dim[j].coeff[i] = ci / stride[j];
  }
  for (uint32_t j = 0; j < ot->rank; j++) {
    int64_t hi = om->dim[j].offset;
    for (uint32_t i = 0; i < c->k->rank; i++) hi += om->dim[j].coeff[i] * (c->k->dims[i] - 1);
    if (hi >= ot->dims[j] && ot->dims[j] > 0) return false;
  }
  return true;
}

/* The operand's map: affine per dim when it can be, else flat (the same
 * linear position). */
static void reshape_map(lower_ctx *c, const hlo_op *op, const kernel_map *m, kernel_map *om) {
  if (reshape_affine(c, op, m, om)) return;
  kernel_affine lin = kernel_map_linear(m, op->results[0].type->dims);
  memset(om, 0, sizeof *om);
  om->rank = op->operands[0]->type->rank;
  om->flat = true;
  om->dim[0] = lin;
}

static hlo_status gen_concat(lower_ctx *c, const hlo_op *op, const kernel_map *m, int32_t g,
                             uint32_t *out) {
  int64_t d = op_attr_int(op, "dimension", -1);
  uint32_t n = op->num_operands;
  if (d < 0 || (uint64_t)d >= m->rank || n == 0)
    return status_at(HLO_INVALID_ARGUMENT, &op->loc, "%s: bad dimension", short_name(op));
  kinst ix = kinst_make(KI_INDEX, HLO_I64);
  ix.index = m->dim[d];
  uint32_t e;
  HLO_TRY(add(c, &ix, &e));
  uint32_t *vals = calloc(n, sizeof *vals), *bounds = calloc(n, sizeof *bounds);
  hlo_status st = vals && bounds ? NULL : oom();
  int64_t off = 0;
  for (uint32_t k = 0; k < n && !st; k++) {
    int64_t size = op->operands[k]->type->dims[d];
    int32_t gk = g;
    uint32_t lo, hi, t, args[2];
    if (k > 0) { /* e >= off */
      st = gen_i64(c, off, &lo);
      args[0] = e, args[1] = lo;
      if (!st) st = gen_op(c, OP_COMPARE, HLO_I1, KCMP_GE, 2, args, &t);
      if (!st && gk >= 0) {
        args[0] = (uint32_t)gk, args[1] = t;
        st = gen_op(c, OP_AND, HLO_I1, KCMP_EQ, 2, args, &t);
      }
      if (!st) gk = (int32_t)t;
    }
    if (!st && k + 1 < n) { /* e < off + size */
      st = gen_i64(c, off + size, &hi);
      args[0] = e, args[1] = hi;
      if (!st) st = gen_op(c, OP_COMPARE, HLO_I1, KCMP_LT, 2, args, &t);
      bounds[k] = t;
      if (!st && gk >= 0) {
        args[0] = (uint32_t)gk, args[1] = t;
        st = gen_op(c, OP_AND, HLO_I1, KCMP_EQ, 2, args, &t);
      }
      if (!st) gk = (int32_t)t;
    }
    kernel_map mk = *m;
    mk.dim[d].offset -= off;
    if (!st) st = gen(c, op->operands[k], &mk, gk, &vals[k]);
    off += size;
  }
  uint32_t r = vals ? vals[n - 1] : 0;
  for (uint32_t k = n - 1; k-- > 0 && !st;) {
    uint32_t args[3] = {bounds[k], vals[k], r};
    st = gen_op(c, OP_SELECT, op->results[0].type->dtype, KCMP_EQ, 3, args, &r);
  }
  free(vals);
  free(bounds);
  if (!st) *out = r;
  return st;
}

static hlo_status gen_reduce(lower_ctx *c, const hlo_op *red, const kernel_map *m, uint32_t *out);
static hlo_status try_temp(lower_ctx *c, const hlo_value *v, const kernel_map *m, uint32_t *out,
                           bool *used);

static hlo_status gen(lower_ctx *c, const hlo_value *v, const kernel_map *mm, int32_t g,
                      uint32_t *out) {
  /* an index variable of a unit dim is always 0: dropped, so that equal
   * indices are equal maps (memo keys, temporaries) */
  kernel_map canon = *mm;
  const kernel_map *m = &canon;
  for (uint32_t d = 0; d < c->k->rank && d < KERNEL_MAX_RANK; d++)
    if (c->k->dims[d] == 1)
      for (uint32_t j = 0; j < (canon.flat ? 1 : canon.rank); j++) canon.dim[j].coeff[d] = 0;
  if (memo_get(c, v, m, g, out)) return NULL;
  const hlo_op *op = v->def;
  if (g < 0 && c->k->num_reduce_dims) {
    bool used = false;
    HLO_TRY(try_temp(c, v, m, out, &used));
    if (used) return memo_put(c, v, m, g, *out);
  }
  if (op && op->opcode == OP_REDUCE && in_fusion(c, op)) {
    HLO_TRY(gen_reduce(c, op, m, out));
    return memo_put(c, v, m, g, *out);
  }
  if (!op || !in_fusion(c, op)) {
    const hlo_attr *lit = op && op->opcode == OP_CONSTANT ? op_attr(op, "value") : NULL;
    uint32_t input;
    HLO_TRY(input_of(c, v, lit, &input));
    kinst in = kinst_make(KI_LOAD, v->type->dtype);
    in.input = input;
    in.map = *m;
    in.guard = g;
    HLO_TRY(add(c, &in, out));
    return memo_put(c, v, m, g, *out);
  }
  HLO_TRY(check_type(op, v->type, &op->loc));
  const hlo_type *rt = v->type;
  if (m->flat && (op->opcode == OP_IOTA || op->opcode == OP_BROADCAST_IN_DIM ||
                  op->opcode == OP_TRANSPOSE || op->opcode == OP_SLICE ||
                  op->opcode == OP_REVERSE || op->opcode == OP_CONCATENATE))
    return unimpl(op, "this op under a reshape whose index map needs div/mod");
  kernel_map om;
  memset(&om, 0, sizeof om);
  const int64_t *ints = NULL;
  uint32_t n = 0;
  switch (op->opcode) {
  case OP_CONSTANT: {
    const hlo_attr *lit = op_attr(op, "value");
    if (!lit || lit->kind != ATTR_DENSE || lit->u.dense.resource)
      return unimpl(op, "this constant");
    if (lit->u.dense.splat || lit->u.dense.num_elems == 1) {
      kinst in = const_of(lit, rt->dtype);
      HLO_TRY(add(c, &in, out));
    } else {
      uint32_t input;
      HLO_TRY(input_of(c, v, lit, &input));
      kinst in = kinst_make(KI_LOAD, rt->dtype);
      in.input = input;
      in.map = *m;
      in.guard = g;
      HLO_TRY(add(c, &in, out));
    }
    break;
  }
  case OP_IOTA: {
    int64_t d = op_attr_int(op, "iota_dimension", -1);
    if (d < 0 || (uint64_t)d >= m->rank)
      return status_at(HLO_INVALID_ARGUMENT, &op->loc, "%s: bad iota_dimension", short_name(op));
    kinst in = kinst_make(KI_INDEX, HLO_I64);
    in.index = m->dim[d];
    HLO_TRY(add(c, &in, out));
    if (rt->dtype != HLO_I64) HLO_TRY(gen_op(c, OP_CONVERT, rt->dtype, KCMP_EQ, 1, out, out));
    break;
  }
  case OP_BROADCAST_IN_DIM: {
    const hlo_type *ot = op->operands[0]->type;
    if (!ints_attr(op, "broadcast_dimensions", &ints, &n) || n != ot->rank)
      return status_at(HLO_INVALID_ARGUMENT, &op->loc, "%s: bad broadcast_dimensions",
                       short_name(op));
    om.rank = ot->rank;
    for (uint32_t j = 0; j < n; j++) {
      if (ints[j] < 0 || (uint64_t)ints[j] >= m->rank)
        return status_at(HLO_INVALID_ARGUMENT, &op->loc, "%s: bad broadcast_dimensions",
                         short_name(op));
      om.dim[j] = ot->dims[j] == 1 ? affine_zero() : m->dim[ints[j]];
    }
    HLO_TRY(gen(c, op->operands[0], &om, g, out));
    break;
  }
  case OP_TRANSPOSE:
    if (!ints_attr(op, "permutation", &ints, &n) || n != m->rank)
      return status_at(HLO_INVALID_ARGUMENT, &op->loc, "%s: bad permutation", short_name(op));
    om.rank = n;
    for (uint32_t i = 0; i < n; i++) {
      if (ints[i] < 0 || (uint64_t)ints[i] >= n)
        return status_at(HLO_INVALID_ARGUMENT, &op->loc, "%s: bad permutation", short_name(op));
      om.dim[ints[i]] = m->dim[i];
    }
    HLO_TRY(gen(c, op->operands[0], &om, g, out));
    break;
  case OP_SLICE: {
    const int64_t *st = NULL;
    uint32_t ns = 0;
    if (!ints_attr(op, "start_indices", &ints, &n) || n != m->rank)
      return status_at(HLO_INVALID_ARGUMENT, &op->loc, "%s: bad start_indices", short_name(op));
    bool has_strides = ints_attr(op, "strides", &st, &ns);
    om.rank = n;
    for (uint32_t j = 0; j < n; j++) {
      int64_t s = has_strides && j < ns ? st[j] : 1;
      om.dim[j].offset = ints[j] + s * m->dim[j].offset;
      for (uint32_t i = 0; i < KERNEL_MAX_RANK; i++) om.dim[j].coeff[i] = s * m->dim[j].coeff[i];
    }
    HLO_TRY(gen(c, op->operands[0], &om, g, out));
    break;
  }
  case OP_REVERSE: { /* index i of a reversed dim reads dims[d] - 1 - i */
    const hlo_type *ot = op->operands[0]->type;
    if (!ints_attr(op, "dimensions", &ints, &n))
      return status_at(HLO_INVALID_ARGUMENT, &op->loc, "%s: bad dimensions", short_name(op));
    om = *m;
    for (uint32_t j = 0; j < n; j++) {
      if (ints[j] < 0 || (uint64_t)ints[j] >= m->rank)
        return status_at(HLO_INVALID_ARGUMENT, &op->loc, "%s: bad dimensions", short_name(op));
      /* the verifier holds the dims unique (reverse's C2) */
      kernel_affine *a = &om.dim[ints[j]];
      const kernel_affine *b = &m->dim[ints[j]];
      a->offset = ot->dims[ints[j]] - 1 - b->offset;
      for (uint32_t i = 0; i < KERNEL_MAX_RANK; i++) a->coeff[i] = -b->coeff[i];
    }
    HLO_TRY(gen(c, op->operands[0], &om, g, out));
    break;
  }
  case OP_RESHAPE:
    HLO_TRY(check_type(op, op->operands[0]->type, &op->loc));
    reshape_map(c, op, m, &om);
    HLO_TRY(gen(c, op->operands[0], &om, g, out));
    break;
  case OP_CONCATENATE:
    HLO_TRY(gen_concat(c, op, m, g, out));
    break;
  default:
    if (!(op_flags(op->opcode) & OPF_ELEMENTWISE)) return unimpl(op, "this op");
    HLO_TRY(gen_elementwise(c, op, m, g, out));
    break;
  }
  return memo_put(c, v, m, g, *out);
}

/* The reduce's combiner region into the current stage's combiner. */
static hlo_status lower_combiner(lower_ctx *c, const hlo_op *red) {
  const hlo_block *b = &red->regions[0].block;
  hlo_dtype dt = red->results[0].type->dtype;
  kernel *k = c->cur;
  if (b->num_args != 2) return unimpl(red, "a reduce of several operands");
  /* values of the block, mapped to combiner instructions by value id order
   * of appearance: a small linear table */
  const hlo_value *vals[64];
  uint32_t insts[64], nv = 0;
  for (uint32_t a = 0; a < 2; a++) {
    kinst p = kinst_make(KI_PARAM, dt);
    p.input = a;
    vals[nv] = &b->args[a];
    HLO_TRY(kernel_add_inst(k, true, &p, &insts[nv]));
    nv++;
  }
  for (const hlo_op *op = b->first; op; op = op->next) {
    if (op->opcode == OP_RETURN || op->opcode == OP_FUNC_RETURN) {
      if (op->num_operands != 1) return unimpl(red, "a reduce of several operands");
      for (uint32_t i = 0; i < nv; i++)
        if (vals[i] == op->operands[0]) {
          k->stages[k->num_stages - 1].comb_result = insts[i];
          return NULL;
        }
      return status_at(HLO_INTERNAL, &op->loc, "reduce body returns an unknown value");
    }
    if (nv == 64 || op->num_results != 1) return unimpl(op, "this reduce body");
    kinst in;
    if (op->opcode == OP_CONSTANT) {
      const hlo_attr *lit = op_attr(op, "value");
      if (!lit || lit->kind != ATTR_DENSE) return unimpl(op, "this constant");
      in = const_of(lit, op->results[0].type->dtype);
    } else {
      hlo_dtype at = op->num_operands ? op->operands[op->opcode == OP_SELECT && op->num_operands > 1 ? 1 : 0]->type->dtype : dt;
      if (!(op_flags(op->opcode) & OPF_ELEMENTWISE) || !op_supported(op->opcode, dtype_class(at)) ||
          op->num_operands > KINST_MAX_ARGS)
        return unimpl(op, "this op in a reduce body");
      in = kinst_make(KI_OP, op->results[0].type->dtype);
      in.op = op->opcode;
      if (op->opcode == OP_COMPARE) HLO_TRY(compare_dir(op, &in.cmp));
      in.num_args = op->num_operands;
      for (uint32_t a = 0; a < op->num_operands; a++) {
        uint32_t i = 0;
        while (i < nv && vals[i] != op->operands[a]) i++;
        if (i == nv) return unimpl(op, "a reduce body reading values from outside");
        in.args[a] = insts[i];
      }
    }
    vals[nv] = &op->results[0];
    HLO_TRY(kernel_add_inst(k, true, &in, &insts[nv]));
    nv++;
  }
  return status_at(HLO_INTERNAL, &red->loc, "reduce body has no terminator");
}

/* Picks the accumulator type of the current REDUCE stage (element type
 * `dt`, combiner lowered) and retypes the combiner's instructions of type
 * `dt` to it (see kernel.h): bf16/f16 accumulate in f32 (the result is
 * rounded once, at the end of the row; XLA's reductions do the same), an
 * f32 combiner that is just add(acc, element) accumulates in f64 (a
 * sequential f32 sum of a long row drifts O(n) ULP from the interpreter's
 * pairwise sum; in f64 it stays within an ULP of the exact sum for rows
 * below ~2^29), anything else in `dt`. */
static void choose_accumulator(kernel *k, hlo_dtype dt) {
  kernel_stage *st = &k->stages[k->num_stages - 1];
  hlo_dtype acc = dt;
  uint32_t b = st->comb_begin;
  if (dt == HLO_BF16 || dt == HLO_F16) {
    acc = HLO_F32;
  } else if (dt == HLO_F32 && st->comb_end - b == 3) {
    const kinst *r = &k->comb[st->comb_result];
    if (r->kind == KI_OP && r->op == OP_ADD && r->num_args == 2 &&
        k->comb[r->args[0]].kind == KI_PARAM && k->comb[r->args[1]].kind == KI_PARAM &&
        r->args[0] != r->args[1])
      acc = HLO_F64;
  }
  st->acc_dtype = acc;
  if (acc == dt) return;
  for (uint32_t i = b; i < st->comb_end; i++)
    if (k->comb[i].dtype == dt) k->comb[i].dtype = acc;
}

/* A new stage builder of `kind` (a one-stage kernel over k's index space). */
static hlo_status new_builder(lower_ctx *c, kernel_stage_kind kind, kernel **out) {
  HLO_TRY(kernel_create("stage", c->k->rank, c->k->dims, &c->k->loc, out));
  (*out)->num_reduce_dims = c->k->num_reduce_dims;
  (*out)->stages[0].kind = kind;
  return NULL;
}

/* Appends builder b's stage to c->k, moving its memo into c->done. */
static hlo_status finish_stage(lower_ctx *c, kernel *b, uint32_t *out_stage) {
  uint32_t off;
  HLO_TRY(kernel_append_stage(c->k, b, out_stage, &off));
  for (uint32_t i = 0; i < c->memo.n; i++) {
    const memo_entry *e = &c->memo.e[i];
    if (e->guard < 0) HLO_TRY(memo_add(&c->done, e->v, &e->map, -1, e->inst + off));
  }
  c->memo.n = 0;
  return NULL;
}

/* Whether map `m` ignores the row variables. */
static bool map_per_row(const kernel *k, const kernel_map *m) {
  if (m->flat) return false;
  for (uint32_t j = 0; j < m->rank; j++)
    for (uint32_t d = k->rank - k->num_reduce_dims; d < k->rank; d++)
      if (m->dim[j].coeff[d]) return false;
  return true;
}

/* The cost of recomputing body instruction `i` of k at every point of a
 * row: 8 per expensive op, 1 per other instruction, over its operand tree
 * (shared operands counted once per use; capped); what does not vary along
 * the row (vary[], kernel_row_varying) is computed once per row: free. */
static int64_t inst_cost(const kernel *k, const bool *vary, uint32_t i, int depth) {
  const kinst *in = &k->body[i];
  if (!vary[i]) return 0;
  int64_t c = in->kind == KI_OP && kernel_op_expensive(in->op) ? 8 : 1;
  if (in->kind != KI_OP || depth > 16) return c;
  for (uint32_t a = 0; a < in->num_args && c < 64; a++) c += inst_cost(k, vary, in->args[a], depth + 1);
  return c;
}

/* Materialising (see kernel.h, Stages): value v at map m was computed by a
 * stage already appended; when it varies along the row and is expensive to
 * compute again, that stage writes it to a temporary (one per value) and
 * *out reads it here. *used says whether it did. */
static hlo_status try_temp(lower_ctx *c, const hlo_value *v, const kernel_map *m, uint32_t *out,
                           bool *used) {
  *used = false;
  kernel *k = c->k;
  uint32_t i;
  if (!memo_find(&c->done, v, m, -1, &i)) return NULL;
  bool *vary = realloc(c->varying, (k->num_body ? k->num_body : 1) * sizeof *vary);
  if (!vary) return oom();
  c->varying = vary;
  kernel_row_varying(k, vary);
  if (inst_cost(k, vary, i, 0) < 8) return NULL;
  uint32_t t = 0;
  while (t < k->num_temps && k->temps[t].value != i) t++;
  if (t == k->num_temps) {
    int64_t row = 1, bytes = 0;
    for (uint32_t d = k->rank - k->num_reduce_dims; d < k->rank; d++) row *= k->dims[d];
    for (uint32_t j = 0; j <= k->num_temps; j++) {
      hlo_dtype dt = j < k->num_temps ? k->temps[j].dtype : k->body[i].dtype;
      bytes += row * (kernel_compute_dtype(dt) == HLO_F64 || dtype_bits(dt) == 64 ? 8 : 4);
    }
    if (k->num_temps == KERNEL_MAX_TEMPS || bytes > KERNEL_MAX_TEMP_BYTES) return NULL;
    uint32_t s = 0;
    while (s + 1 < k->num_stages && k->stages[s].body_end <= i) s++;
    k->temps[t].dtype = k->body[i].dtype;
    k->temps[t].stage = s;
    k->temps[t].value = i;
    k->num_temps++;
  }
  kinst in = kinst_make(KI_TEMP, k->body[i].dtype);
  in.input = t;
  HLO_TRY(add(c, &in, out));
  *used = true;
  return NULL;
}

/* Validates a reduce of the fusion: one operand, over its trailing dims in
 * order, a constant init; *nd = its number of reduced dims. */
static hlo_status check_reduce(const hlo_op *red, uint32_t *nd) {
  if (red->num_operands != 2 || red->num_results != 1 || red->num_regions != 1)
    return unimpl(red, "a reduce of several operands");
  const hlo_value *x = red->operands[0], *init = red->operands[1];
  HLO_TRY(check_type(red, x->type, &red->loc));
  HLO_TRY(check_type(red, red->results[0].type, &red->loc));
  const int64_t *dims;
  uint32_t n;
  if (!ints_attr(red, "dimensions", &dims, &n))
    return status_at(HLO_INVALID_ARGUMENT, &red->loc, "%s: bad dimensions", short_name(red));
  uint32_t rank = x->type->rank;
  if (n > rank) return status_at(HLO_INVALID_ARGUMENT, &red->loc, "%s: bad dimensions", short_name(red));
  for (uint32_t i = 0; i < n; i++)
    if (dims[i] != (int64_t)(rank - n + i))
      return unimpl(red, "a reduce over dims other than the trailing ones (in order)");
  const hlo_op *iop = init->def;
  const hlo_attr *lit = iop && iop->opcode == OP_CONSTANT ? op_attr(iop, "value") : NULL;
  if (!lit || lit->kind != ATTR_DENSE || lit->u.dense.resource)
    return unimpl(red, "a reduce whose init value is not a constant");
  *nd = n;
  return NULL;
}

/* The REDUCE stage of reduce `red` read at kept-dims map m (*out_stage),
 * lowered now when this (reduce, map) has none yet. */
static hlo_status reduce_stage_of(lower_ctx *c, const hlo_op *red, const kernel_map *m,
                                  uint32_t *out_stage) {
  kernel *k = c->k;
  uint32_t nd;
  HLO_TRY(check_reduce(red, &nd));
  const hlo_value *x = red->operands[0];
  uint32_t rank = x->type->rank, kr = rank - nd, np = k->rank - k->num_reduce_dims;
  if (!k->num_reduce_dims || m->rank != kr || !map_per_row(k, m))
    return unimpl(red, "a reduce whose result is read along the row of the kernel");
  uint32_t s = UINT32_MAX;
  for (uint32_t i = 0; i < c->num_reds; i++)
    if (c->reds[i].v == &red->results[0] && !memcmp(&c->reds[i].map, m, sizeof *m))
      s = c->reds[i].stage;
  if (s == UINT32_MAX) {
    /* the operand's index: kept dims from m, reduced dims the row variables
     * (their non-unit dims in order) */
    kernel_map om;
    memset(&om, 0, sizeof om);
    om.rank = rank;
    for (uint32_t j = 0; j < kr; j++) om.dim[j] = m->dim[j];
    uint32_t d = np;
    for (uint32_t j = kr; j < rank; j++) {
      if (x->type->dims[j] == 1) continue;
      while (d < k->rank && k->dims[d] == 1) d++;
      if (d == k->rank || k->dims[d] != x->type->dims[j])
        return unimpl(red, "a reduce whose row differs from the kernel's");
      om.dim[j].coeff[d++] = 1;
    }
    while (d < k->rank && k->dims[d] == 1) d++;
    if (d != k->rank) return unimpl(red, "a reduce whose row differs from the kernel's");
    const hlo_attr *lit = op_attr(red->operands[1]->def, "value");
    kernel *saved = c->cur;
    memo_list saved_memo = c->memo;
    memset(&c->memo, 0, sizeof c->memo);
    kernel *b = NULL;
    hlo_status st = new_builder(c, KSTAGE_REDUCE, &b);
    if (!st) {
      c->cur = b;
      kernel_stage *bs = &b->stages[0];
      hlo_dtype rt = red->results[0].type->dtype;
      kinst iv = const_of(lit, red->operands[1]->type->dtype);
      bs->init.i = iv.cval.i;
      if (dtype_is_float(red->operands[1]->type->dtype)) bs->init.f = iv.cval.f;
      bs->dtype = rt;
      st = lower_combiner(c, red);
      if (!st) choose_accumulator(b, rt);
      uint32_t v = 0;
      if (!st) st = gen(c, x, &om, -1, &v);
      if (!st) {
        b->stages[0].value = v;
        st = finish_stage(c, b, &s);
      }
    }
    free(c->memo.e);
    c->memo = saved_memo;
    c->cur = saved;
    kernel_destroy(b);
    HLO_TRY(st);
    reduce_stage *nr = realloc(c->reds, (c->num_reds + 1) * sizeof *nr);
    if (!nr) return oom();
    c->reds = nr;
    memset(&nr[c->num_reds], 0, sizeof *nr);
    nr[c->num_reds].v = &red->results[0];
    nr[c->num_reds].map = *m;
    nr[c->num_reds].stage = s;
    c->num_reds++;
  }
  *out_stage = s;
  return NULL;
}

/* A reduce's row value at kept-dims map m: a KI_ROW of its REDUCE stage. */
static hlo_status gen_reduce(lower_ctx *c, const hlo_op *red, const kernel_map *m, uint32_t *out) {
  uint32_t s;
  HLO_TRY(reduce_stage_of(c, red, m, &s));
  kinst in = kinst_make(KI_ROW, red->results[0].type->dtype);
  in.input = s;
  return add(c, &in, out);
}

/* The non-unit dims of dims[0..n) into out (their count). */
static uint32_t non_unit(const int64_t *dims, uint32_t n, int64_t *out) {
  uint32_t m = 0;
  for (uint32_t i = 0; i < n; i++)
    if (dims[i] != 1) out[m++] = dims[i];
  return m;
}

/* The map of an output of shape t over the index space (k's dims, the
 * first np parallel): the identity when t is the space; else t's non-unit
 * dims matched in order with the space's (or the parallel dims') non-unit
 * dims, unit dims at 0; or a row-major merge of the space's dims. False
 * when t is none of these. */
static bool output_map(const kernel *k, const hlo_type *t, kernel_map *m) {
  uint32_t np = k->rank - k->num_reduce_dims;
  if (t->rank == k->rank && (!t->rank || !memcmp(t->dims, k->dims, t->rank * sizeof *t->dims))) {
    *m = kernel_map_identity(t->rank);
    return true;
  }
  for (int pass = 0; pass < 2; pass++) {
    uint32_t n = pass ? np : k->rank;
    memset(m, 0, sizeof *m);
    m->rank = t->rank;
    uint32_t d = 0, j = 0;
    bool ok = true;
    for (; j < t->rank && ok; j++) {
      if (t->dims[j] == 1) continue;
      while (d < n && k->dims[d] == 1) d++;
      if (d == n || k->dims[d] != t->dims[j]) ok = false;
      else m->dim[j].coeff[d++] = 1;
    }
    while (ok && d < n && k->dims[d] == 1) d++;
    if (ok && d == n) return true;
  }
  /* a row-major merge of the space: each non-unit dim of t is the product
   * of a run of consecutive dims of the space (softmax's 2x4x32x32 stored
   * as the 8x32x32 a batched dot reads); its index is affine, sum of the
   * run's variables times their strides within the run */
  memset(m, 0, sizeof *m);
  m->rank = t->rank;
  uint32_t d = 0;
  for (uint32_t j = 0; j < t->rank; j++) {
    if (t->dims[j] == 1) continue;
    while (d < k->rank && k->dims[d] == 1) d++;
    uint32_t start = d;
    int64_t p = 1;
    while (d < k->rank && p < t->dims[j]) p *= k->dims[d++];
    if (p != t->dims[j]) return false;
    int64_t stride = 1;
    for (uint32_t e = d; e-- > start;) {
      m->dim[j].coeff[e] = stride;
      stride *= k->dims[e];
    }
  }
  while (d < k->rank && k->dims[d] == 1) d++;
  return d == k->rank;
}

/* A fusion whose root (its one output) is a dynamic_update_slice: XLA's
 * in-place DUS fusion (kernel.h, Dynamic-update outputs). The index space
 * is the update's; the update is lowered as an elementwise kernel's value
 * and stored into the operand-shaped output at the clamped start indices.
 * The operand and the start indices must come from outside the fusion
 * (inputs: the operand is not loaded unless an op of the update reads it,
 * in which case the runtime does not write in place). */
static hlo_status lower_dus(lower_ctx *c, const hlo_value *const *outs, uint32_t no,
                            const char *name, kernel **out) {
  const hlo_op *dus = outs[0]->def;
  if (no != 1) return unimpl(dus, "a dynamic_update_slice root with other outputs");
  if (dus->num_operands < 2 || dus->num_operands != 2 + dus->operands[0]->type->rank)
    return status_at(HLO_INVALID_ARGUMENT, &dus->loc, "%s: bad operands", short_name(dus));
  for (uint32_t i = 0; i < c->num_ops; i++)
    if (c->ops[i]->opcode == OP_REDUCE) return unimpl(dus, "a dynamic_update_slice root with reduces");
  const hlo_value *opnd = dus->operands[0], *upd = dus->operands[1];
  const hlo_type *ot = opnd->type, *ut = upd->type;
  HLO_TRY(check_type(dus, ot, &dus->loc));
  HLO_TRY(check_type(dus, ut, &dus->loc));
  HLO_TRY(check_type(dus, outs[0]->type, &dus->loc));
  if (ot->rank < 1 || ut->rank != ot->rank || ut->dtype != ot->dtype ||
      outs[0]->type->dtype != ot->dtype)
    return unimpl(dus, "this dynamic_update_slice (rank 0, or types that differ)");
  for (uint32_t j = 0; j < ot->rank; j++)
    if (ut->dims[j] < 1 || ut->dims[j] > ot->dims[j] || outs[0]->type->dims[j] != ot->dims[j])
      return unimpl(dus, "a dynamic_update_slice of an empty or too large update");
  for (uint32_t i = 0; i < dus->num_operands; i++)
    if (i != 1 && dus->operands[i]->def && dus->operands[i]->def->opcode != OP_CONSTANT &&
        in_fusion(c, dus->operands[i]->def))
      return unimpl(dus, "a dynamic_update_slice whose operand or start index is computed in the fusion");
  HLO_TRY(kernel_create(name, ut->rank, ut->dims, &dus->loc, &c->k));
  uint32_t base, starts[KERNEL_MAX_RANK];
  HLO_TRY(input_of(c, opnd,
                   opnd->def && opnd->def->opcode == OP_CONSTANT ? op_attr(opnd->def, "value") : NULL,
                   &base));
  for (uint32_t j = 0; j < ot->rank; j++) {
    const hlo_value *sv = dus->operands[2 + j];
    if (sv->type->kind != TYPE_TENSOR || sv->type->rank != 0 || !dtype_is_int(sv->type->dtype))
      return unimpl(dus, "start indices that are not integer scalars");
    const hlo_attr *lit = sv->def && sv->def->opcode == OP_CONSTANT ? op_attr(sv->def, "value") : NULL;
    HLO_TRY(input_of(c, sv, lit, &starts[j]));
  }
  kernel *b = NULL;
  hlo_status st = new_builder(c, KSTAGE_MAP, &b);
  if (!st) c->cur = b;
  kernel_map id = kernel_map_identity(ut->rank);
  uint32_t v = 0, s;
  if (!st) st = gen(c, upd, &id, -1, &v);
  if (!st) st = kernel_add_output(b, ot->dtype, ot->rank, ot->dims, outs[0], &id, v);
  if (!st) st = finish_stage(c, b, &s);
  kernel_destroy(b);
  c->cur = NULL;
  HLO_TRY(st);
  kernel_output *o = &c->k->outputs[0];
  o->dus_operand = base + 1;
  for (uint32_t j = 0; j < ot->rank; j++) o->dus_start[j] = starts[j] + 1;
  o->buf.may_alias = true;
  c->k->inputs[base].may_alias = true;
  kernel_schedule_default(c->k, 0);
  HLO_TRY(kernel_check_schedule(c->k));
  *out = c->k;
  c->k = NULL;
  return NULL;
}

/* Lowers the fusion; `pre` (num_pre): REDUCE stages made first, in order
 * (a first lowering's stages: so that a value computed by a REDUCE stage is
 * there, for a temporary, before a later stage needs it). */
static hlo_status lower(lower_ctx *c, const hlo_value *const *outs, uint32_t no, const char *name,
                        const reduce_stage *pre, uint32_t num_pre, kernel **out) {
  if (no == 0 || c->num_ops == 0)
    return status_new(HLO_INVALID_ARGUMENT, "lower_fusion: no ops or no outputs");
  for (uint32_t i = 0; i < no; i++)
    if (!outs[i]->def || !in_fusion(c, outs[i]->def))
      return status_at(HLO_INVALID_ARGUMENT, &outs[i]->loc,
                       "lower_fusion: output %u is not made by an op of the fusion", i);
  const hlo_op *first = outs[0]->def;
  if (first->opcode == OP_DYNAMIC_UPDATE_SLICE) return lower_dus(c, outs, no, name, out);
  /* the index space: the first output's shape, or the reduced operand's when
   * it is a reduce; with reduces, the trailing dims matching their reduced
   * dims are the row */
  const hlo_op *red = first->opcode == OP_REDUCE ? first : NULL;
  for (uint32_t i = 0; i < c->num_ops && !red; i++)
    if (c->ops[i]->opcode == OP_REDUCE) red = c->ops[i];
  uint32_t nd = 0;
  if (red) HLO_TRY(check_reduce(red, &nd));
  const hlo_type *t = first->opcode == OP_REDUCE ? first->operands[0]->type : outs[0]->type;
  HLO_TRY(check_type(first, t, &first->loc));
  uint32_t nr = 0;
  if (red) {
    const hlo_type *xt = red->operands[0]->type;
    int64_t want[KERNEL_MAX_RANK], have[KERNEL_MAX_RANK];
    uint32_t nw = non_unit(xt->dims + xt->rank - nd, nd, want);
    int64_t tf[KERNEL_MAX_RANK], xf[KERNEL_MAX_RANK];
    uint32_t ntf = non_unit(t->dims, t->rank, tf), nxf = non_unit(xt->dims, xt->rank, xf);
    bool found = false, full = ntf == nxf && !memcmp(tf, xf, ntf * sizeof *tf);
    for (nr = 1; full && nr <= t->rank && !found; nr++) {
      uint32_t nh = non_unit(t->dims + t->rank - nr, nr, have);
      found = nh == nw && !memcmp(have, want, nw * sizeof *want);
      if (found) break;
    }
    if (!found) {
      /* the first output is not of the row's space: the reduce's operand is */
      if (!nd) return unimpl(red, "a reduce over no dims");
      t = xt;
      HLO_TRY(check_type(red, t, &red->loc));
      nr = nd;
    }
  }
  HLO_TRY(kernel_create(name, t->rank, t->dims, &first->loc, &c->k));
  c->k->num_reduce_dims = nr;
  hlo_status st = NULL;
  for (uint32_t i = 0; i < num_pre && !st; i++) {
    uint32_t sn;
    st = reduce_stage_of(c, pre[i].v->def, &pre[i].map, &sn);
  }
  kernel *b = NULL;
  if (!st) st = new_builder(c, KSTAGE_MAP, &b);
  if (!st) c->cur = b;
  for (uint32_t i = 0; i < no && !st; i++) {
    const hlo_type *ti = outs[i]->type;
    st = check_type(outs[i]->def, ti, &outs[i]->def->loc);
    kernel_map m;
    if (!st && !output_map(c->k, ti, &m)) st = unimpl(outs[i]->def, "outputs of different shapes");
    uint32_t v = 0;
    if (!st) st = gen(c, outs[i], &m, -1, &v);
    if (!st) st = kernel_add_output(b, ti->dtype, ti->rank, ti->dims, outs[i], &m, v);
  }
  uint32_t s;
  if (!st) st = finish_stage(c, b, &s);
  kernel_destroy(b);
  c->cur = NULL;
  HLO_TRY(st);
  kernel_schedule_default(c->k, 0);
  *out = c->k;
  c->k = NULL;
  return NULL;
}

hlo_status lower_fusion(const hlo_op *const *ops, uint32_t num_ops, const hlo_value *const *outputs,
                        uint32_t num_outputs, const char *name, kernel **out) {
  lower_ctx c;
  memset(&c, 0, sizeof c);
  c.ops = ops;
  c.num_ops = num_ops;
  *out = NULL;
  hlo_status st = lower(&c, outputs, num_outputs, name, NULL, 0, out);
  if (!st && c.num_reds > 0) {
    /* again, with the REDUCE stages made first (see lower) */
    reduce_stage *pre = c.reds;
    uint32_t num_pre = c.num_reds;
    kernel_destroy(*out);
    *out = NULL;
    free(c.memo.e);
    free(c.done.e);
    free(c.varying);
    memset(&c, 0, sizeof c);
    c.ops = ops;
    c.num_ops = num_ops;
    st = lower(&c, outputs, num_outputs, name, pre, num_pre, out);
    free(pre);
  }
  kernel_destroy(c.k);
  free(c.memo.e);
  free(c.done.e);
  free(c.reds);
  free(c.varying);
  return st;
}
