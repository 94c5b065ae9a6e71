/* constant_fold.c — constant folding through the reference interpreter's
 * kernels (the StableHLO interpreter doubles as its constant folder; so
 * folded values are bit for bit what the interpreter computes at run time).
 *
 * A forward walk over every block: an op whose operands are all
 * stablehlo.constant is copied, with copies of those constants, into a
 * one-op function of a scratch module, run there by the interpreter, and
 * replaced by constants holding the results (stored as a splat when every
 * element is equal). Folded results become constants before their readers
 * are reached, so chains fold in one walk.
 *
 * What is folded (XLA's HloConstantFolding makes the same choices): pure
 * ops (pass_util.h) without regions and with at least one operand, whose
 * operands and results are static, unquantized tensors; at most
 * fold_max_elements result elements in all (4096 by default); operands of
 * at most 2^20 elements in all; for the contractions (dot, convolution,
 * fft, triangular_solve, cholesky) result x operand elements at most 2^26.
 * Never: rng and rng_bit_generator (rng is also a side effect), custom
 * calls and other side effects, optimization_barrier, sharding ops, chlo
 * (legalized first), and broadcasts of non-splat constants (they only make
 * the program bigger; a broadcast of a splat folds to a splat). A kernel
 * that fails leaves the op in place: the run reports the error, if that
 * path runs. The scratch module refers to types and attributes of `m`, and
 * is freed with the pass. */
#include <stdlib.h>
#include <string.h>

#include "interp/interp.h"
#include "passes/pass_util.h"
#include "passes/passes.h"
#include "passes/use_index.h"
#include "support/arena.h"

#define DEFAULT_MAX_ELEMENTS 4096
#define MAX_OPERAND_ELEMENTS ((int64_t)1 << 20)
#define MAX_CONTRACTION_WORK ((int64_t)1 << 26)

typedef struct folder {
  hlo_module_ir *m;
  int64_t max_elems;
  use_index *ui;
  uint64_t folded;
} folder;

static bool static_tensor(const hlo_type *t) {
  return t->kind == TYPE_TENSOR && !t->quant && type_is_static(t);
}

static bool never_folded(hlo_opcode c) {
  switch (c) {
    case OP_CONSTANT: case OP_RNG: case OP_RNG_BIT_GENERATOR: case OP_OPTIMIZATION_BARRIER:
    case OP_COMPOSITE: case OP_CUSTOM_CALL: case OP_FUNC_CALL:
    case OP_SDY_SHARDING_CONSTRAINT: case OP_SDY_RESHARD: case OP_SDY_SHARDING_GROUP:
    case OP_SDY_PROPAGATION_BARRIER: case OP_SDY_MANUAL_COMPUTATION:
    case OP_SDY_NAMED_COMPUTATION:
      return true;
    default:
      return (op_flags(c) & OPF_CHLO) != 0;
  }
}

static bool is_contraction(hlo_opcode c) {
  return c == OP_DOT || c == OP_DOT_GENERAL || c == OP_CONVOLUTION || c == OP_FFT ||
         c == OP_TRIANGULAR_SOLVE || c == OP_CHOLESKY;
}

/* Whether `op` is one this pass folds (see the file comment). */
static bool foldable(const folder *fo, const hlo_op *op) {
  if (op->num_operands == 0 || op->num_regions || op->num_results == 0) return false;
  if (never_folded(op->opcode) || !op_is_pure(op)) return false;
  int64_t res = 0, opnd = 0, biggest = 0;
  for (uint32_t i = 0; i < op->num_results; i++) {
    const hlo_type *t = op->results[i].type;
    if (!static_tensor(t)) return false;
    int64_t n = type_num_elements(t);
    if (n < 0 || n > fo->max_elems - res) return false;
    res += n;
  }
  for (uint32_t i = 0; i < op->num_operands; i++) {
    const hlo_value *v = op->operands[i];
    if (!static_tensor(v->type) || !value_constant_attr(v)) return false;
    const hlo_type *at = value_constant_attr(v)->u.dense.type;
    if (!at || at->kind != TYPE_TENSOR || at->quant) return false;
    int64_t n = type_num_elements(v->type);
    if (n < 0 || n > MAX_OPERAND_ELEMENTS - opnd) return false;
    opnd += n;
    if (n > biggest) biggest = n;
  }
  if ((op->opcode == OP_BROADCAST_IN_DIM || op->opcode == OP_BROADCAST) &&
      !value_splat_bytes(op->operands[0]))
    return false;
  if (is_contraction(op->opcode) && biggest && res > MAX_CONTRACTION_WORK / biggest) return false;
  return true;
}

static hlo_status oom(const hlo_op *op) {
  return status_at(HLO_RESOURCE_EXHAUSTED, &op->loc, "out of memory in constant folding");
}

/* A copy of `src` in scratch module `s` with the given operands, sharing
 * src's types and attributes; appended to `b`. */
static hlo_op *copy_into(hlo_module_ir *s, const hlo_op *src, hlo_value **operands,
                         hlo_block *b) {
  hlo_type *rts[16];
  if (src->num_results > 16) return NULL;
  for (uint32_t i = 0; i < src->num_results; i++) rts[i] = src->results[i].type;
  hlo_op *o = op_create(s, src->opcode, operands, src->num_operands, rts, src->num_results, 0,
                        src->loc);
  if (!o) return NULL;
  o->num_attrs = src->num_attrs;
  o->attrs = src->attrs; /* read only */
  block_append(b, o);
  return o;
}

/* Runs `op` on its constant operands in a scratch module; *out (op's
 * num_results new references) on success. A kernel failure is returned as
 * its status (the caller drops it). */
static hlo_status evaluate(const hlo_op *op, tensor **out) {
  hlo_module_ir *s = module_new();
  if (!s) return oom(op);
  hlo_status st = NULL;
  interp *it = NULL;
  tensor **res = NULL;
  hlo_value *ins[64];
  hlo_func *f = arena_calloc(&s->arena, 1, sizeof *f);
  if (!f || op->num_operands > 64 || op->num_results > 16) { st = oom(op); goto done; }
  f->name = "constant_fold";
  f->num_results = op->num_results;
  f->result_types = arena_calloc(&s->arena, op->num_results, sizeof *f->result_types);
  f->result_attrs = arena_calloc(&s->arena, op->num_results, sizeof *f->result_attrs);
  if (!f->result_types || !f->result_attrs) { st = oom(op); goto done; }
  f->body.block.parent = &f->body;
  f->loc = op->loc;
  hlo_block *b = &f->body.block;
  for (uint32_t i = 0; i < op->num_operands; i++) {
    hlo_op *c = copy_into(s, op->operands[i]->def, NULL, b);
    if (!c) { st = oom(op); goto done; }
    ins[i] = &c->results[0];
  }
  hlo_op *o = copy_into(s, op, ins, b);
  if (!o) { st = oom(op); goto done; }
  hlo_value *rv[16];
  for (uint32_t i = 0; i < op->num_results; i++) {
    rv[i] = &o->results[i];
    f->result_types[i] = o->results[i].type;
  }
  hlo_op *ret = op_create(s, OP_FUNC_RETURN, rv, op->num_results, NULL, 0, 0, op->loc);
  if (!ret) { st = oom(op); goto done; }
  block_append(b, ret);
  s->funcs = s->funcs_tail = f;
  s->num_funcs = 1;
  func_number_values(f);
  st = interp_create(s, NULL, &it);
  if (!st) st = interp_call(it, f, NULL, 0, &res);
  if (!st) {
    memcpy(out, res, op->num_results * sizeof *out);
    free(res);
  }
done:
  interp_destroy(it);
  module_free(s);
  return st;
}

/* A constant op holding tensor `v` of type `t`, inserted before `at`; a
 * splat when every element is the same. NULL on out of memory or when the
 * tensor's layout is not the dense attribute's. */
static hlo_op *make_constant(hlo_module_ir *m, hlo_op *at, hlo_type *t, const tensor *v) {
  int64_t n = type_num_elements(t);
  size_t es = hlo_dtype_size(t->dtype);
  if (n < 0 || !v->data || v->nbytes != (size_t)n * es) return NULL;
  bool splat = n > 0;
  for (int64_t i = 1; i < n && splat; i++)
    splat = memcmp(v->data, v->data + (size_t)i * es, es) == 0;
  hlo_attr *a = attr_dense(&m->arena, t, v->data, splat ? es : v->nbytes, splat);
  hlo_op *c = a ? op_create(m, OP_CONSTANT, NULL, 0, &t, 1, 0, at->loc) : NULL;
  if (!c) return NULL;
  hlo_status st = op_set_attr(m, c, "value", a);
  if (st) {
    hlo_status_free(st);
    return NULL;
  }
  c->loc_text = at->loc_text;
  op_insert_before(at, c);
  return c;
}

static hlo_status fold_op(folder *fo, hlo_op *op) {
  tensor *vals[16] = {0};
  hlo_status st = evaluate(op, vals);
  if (st) {
    hlo_status_code code = hlo_status_code_of(st);
    hlo_status_free(st);
    return code == HLO_RESOURCE_EXHAUSTED ? oom(op) : NULL; /* left for run time */
  }
  hlo_op *consts[16] = {0};
  for (uint32_t i = 0; i < op->num_results && !st; i++) {
    if (!vals[i] || vals[i]->type->kind != TYPE_TENSOR) break;
    consts[i] = make_constant(fo->m, op, op->results[i].type, vals[i]);
    if (!consts[i]) st = oom(op);
  }
  for (uint32_t i = 0; i < op->num_results; i++) tensor_release(vals[i]);
  for (uint32_t i = 0; i < op->num_results && !st; i++) {
    if (!consts[i]) return NULL; /* an odd result: keep the op (the constants made are dead) */
    st = use_index_replace_all(fo->ui, &op->results[i], &consts[i]->results[0]);
  }
  if (st) return st;
  use_index_erase(fo->ui, op);
  fo->folded++;
  return NULL;
}

static hlo_status fold_block(folder *fo, hlo_block *b) {
  for (hlo_op *op = b->first, *next; op; op = next) {
    next = op->next;
    for (uint32_t r = 0; r < op->num_regions; r++) HLO_TRY(fold_block(fo, &op->regions[r].block));
    if (foldable(fo, op)) HLO_TRY(fold_op(fo, op));
  }
  return NULL;
}

hlo_status pass_constant_fold(hlo_module_ir *m, const hlo_pass_options *o) {
  folder fo = {m, o && o->fold_max_elements > 0 ? o->fold_max_elements : DEFAULT_MAX_ELEMENTS,
               NULL, 0};
  for (hlo_func *f = m->funcs; f; f = f->next) {
    HLO_TRY(use_index_build(f, &fo.ui));
    hlo_status st = fold_block(&fo, &f->body.block);
    use_index_free(fo.ui);
    fo.ui = NULL;
    HLO_TRY(st);
  }
  return NULL;
}
