/* interp_control.c — kernels of the control-flow ops: func.call, while, if,
 * case, map, composite and optimization_barrier. Terminators (func.return,
 * stablehlo.return) are not kernels: the core's region walker ends a block
 * at them. */
#include <stdlib.h>
#include <string.h>
#include "interp/interp.h"
#include "support/arena.h"

/* Calls function `name` with `in` (n values) and moves its results to
 * out[0..op->num_results). */
static hlo_status call_named(interp *it, const hlo_op *op, const char *attr, tensor *const *in,
                             uint32_t n, tensor **out) {
  const hlo_attr *a = op_attr(op, attr);
  if (!a || (a->kind != ATTR_SYMBOL && a->kind != ATTR_STRING))
    return interp_error(op, HLO_INVALID_ARGUMENT, "missing `%s` function symbol", attr);
  const hlo_func *f = module_find_func(interp_module(it), a->u.str.s);
  if (!f) return interp_error(op, HLO_NOT_FOUND, "no function named @%s", a->u.str.s);
  if (f->num_results != op->num_results)
    return interp_error(op, HLO_INVALID_ARGUMENT, "@%s returns %u values, the op has %u results",
                        f->name, f->num_results, op->num_results);
  tensor **res;
  HLO_TRY(interp_call(it, f, in, n, &res));
  for (uint32_t i = 0; i < f->num_results; i++) out[i] = res[i];
  free(res);
  return NULL;
}

static hlo_status k_call(interp *it, const hlo_op *op, tensor *const *in,
                         const hlo_type *const *rt, tensor **out) {
  (void)rt;
  return call_named(it, op, "callee", in, op->num_operands, out);
}

/* composite: runs its `decomposition` function (the spec: "semantically
 * equivalent to calling decomposition"). */
static hlo_status k_composite(interp *it, const hlo_op *op, tensor *const *in,
                              const hlo_type *const *rt, tensor **out) {
  (void)rt;
  return call_named(it, op, "decomposition", in, op->num_operands, out);
}

static hlo_status k_barrier(interp *it, const hlo_op *op, tensor *const *in,
                            const hlo_type *const *rt, tensor **out) {
  (void)it;
  (void)rt;
  for (uint32_t i = 0; i < op->num_results && i < op->num_operands; i++)
    out[i] = tensor_retain(in[i]);
  return NULL;
}

static void release_all(tensor **v, uint32_t n) {
  for (uint32_t i = 0; i < n; i++) {
    tensor_release(v[i]);
    v[i] = NULL;
  }
}

/* Runs region `r` with no arguments, writing exactly op->num_results values
 * to out. */
static hlo_status run_branch(interp *it, const hlo_op *op, const hlo_region *r,
                             tensor *const *args, uint32_t nargs, tensor **out) {
  uint32_t n = 0;
  HLO_TRY(interp_run_region(it, r, args, nargs, out, op->num_results, &n));
  if (n != op->num_results) {
    release_all(out, n);
    return interp_error(op, HLO_INVALID_ARGUMENT, "a region returned %u values, expected %u", n,
                        op->num_results);
  }
  return NULL;
}

static hlo_status k_if(interp *it, const hlo_op *op, tensor *const *in,
                       const hlo_type *const *rt, tensor **out) {
  (void)rt;
  if (op->num_regions != 2)
    return interp_error(op, HLO_INVALID_ARGUMENT, "expects 2 regions, has %u", op->num_regions);
  bool pred = elem_get_i64(in[0]->type->dtype, in[0]->data, 0) != 0;
  return run_branch(it, op, &op->regions[pred ? 0 : 1], NULL, 0, out);
}

/* case: runs branches[index]; an index outside [0, N) runs the last branch
 * (the spec's case semantics). */
static hlo_status k_case(interp *it, const hlo_op *op, tensor *const *in,
                         const hlo_type *const *rt, tensor **out) {
  (void)rt;
  if (op->num_regions == 0) return interp_error(op, HLO_INVALID_ARGUMENT, "no branches");
  int64_t idx = elem_get_i64(in[0]->type->dtype, in[0]->data, 0);
  if (idx < 0 || idx >= (int64_t)op->num_regions) idx = op->num_regions - 1;
  return run_branch(it, op, &op->regions[idx], NULL, 0, out);
}

/* while: results = operands; while cond(results): results = body(results). */
static hlo_status k_while(interp *it, const hlo_op *op, tensor *const *in,
                          const hlo_type *const *rt, tensor **out) {
  (void)rt;
  if (op->num_regions != 2)
    return interp_error(op, HLO_INVALID_ARGUMENT, "expects 2 regions, has %u", op->num_regions);
  uint32_t n = op->num_operands;
  if (n != op->num_results)
    return interp_error(op, HLO_INVALID_ARGUMENT, "operand and result counts differ");
  tensor **cur = xcalloc(n ? n : 1, sizeof *cur), **next = xcalloc(n ? n : 1, sizeof *next);
  if (!cur || !next) {
    free(cur);
    free(next);
    return interp_error(op, HLO_RESOURCE_EXHAUSTED, "out of memory");
  }
  for (uint32_t i = 0; i < n; i++) cur[i] = tensor_retain(in[i]);
  hlo_status st = NULL;
  for (;;) {
    tensor *c = NULL;
    uint32_t got = 0;
    st = interp_run_region(it, &op->regions[0], cur, n, &c, 1, &got);
    if (st) break;
    if (got != 1 || !c || c->type->kind != TYPE_TENSOR || c->num_elems != 1) {
      if (got) tensor_release(c);
      st = interp_error(op, HLO_INVALID_ARGUMENT, "cond must return one tensor<i1>");
      break;
    }
    bool go = elem_get_i64(c->type->dtype, c->data, 0) != 0;
    tensor_release(c);
    if (!go) break;
    st = interp_run_region(it, &op->regions[1], cur, n, next, n, &got);
    if (st) break;
    if (got != n) {
      release_all(next, got);
      st = interp_error(op, HLO_INVALID_ARGUMENT, "body returned %u values, expected %u", got, n);
      break;
    }
    release_all(cur, n);
    tensor **tmp = cur;
    cur = next;
    next = tmp;
  }
  if (st) {
    release_all(cur, n);
  } else {
    for (uint32_t i = 0; i < n; i++) out[i] = cur[i];
  }
  free(cur);
  free(next);
  return st;
}

/* The 0-d type with the element type (and quantization) of `t`. */
static const hlo_type *scalar_like(interp *it, const hlo_type *t) {
  if (!t->quant) return interp_scalar_type(it, t->dtype);
  hlo_type *s = type_tensor(interp_arena(it), t->dtype, 0, NULL);
  if (s) s->quant = t->quant;
  return s;
}

/* map: result[i] = computation(inputs[0][i], ..., inputs[N-1][i]) on 0-d
 * tensors (the spec's map; `dimensions` must be 0..R-1, so the index
 * spaces coincide). */
static hlo_status k_map(interp *it, const hlo_op *op, tensor *const *in,
                        const hlo_type *const *rt, tensor **out) {
  if (op->num_regions != 1 || op->num_results != 1)
    return interp_error(op, HLO_INVALID_ARGUMENT, "expects one region and one result");
  uint32_t n = op->num_operands;
  tensor *r;
  HLO_TRY(tensor_create(rt[0], &op->loc, &r));
  tensor **args = xcalloc(n ? n : 1, sizeof *args);
  hlo_status st = args ? NULL : interp_error(op, HLO_RESOURCE_EXHAUSTED, "out of memory");
  for (uint32_t k = 0; k < n && !st; k++) {
    if (in[k]->num_elems != r->num_elems) {
      st = interp_error(op, HLO_INVALID_ARGUMENT, "input %u has a different shape", k);
      break;
    }
    const hlo_type *s = scalar_like(it, in[k]->type);
    if (!s) st = interp_error(op, HLO_RESOURCE_EXHAUSTED, "out of memory");
    else st = tensor_create(s, &op->loc, &args[k]);
  }
  size_t rs = hlo_dtype_size(rt[0]->dtype);
  for (int64_t i = 0; i < r->num_elems && !st; i++) {
    for (uint32_t k = 0; k < n; k++) {
      size_t es = hlo_dtype_size(in[k]->type->dtype);
      memcpy(args[k]->data, in[k]->data + (size_t)i * es, es);
    }
    tensor *v = NULL;
    uint32_t got = 0;
    st = interp_run_region(it, &op->regions[0], args, n, &v, 1, &got);
    if (st) break;
    if (got != 1 || v->type->kind != TYPE_TENSOR || v->num_elems != 1 ||
        hlo_dtype_size(v->type->dtype) != rs) {
      if (got) tensor_release(v);
      st = interp_error(op, HLO_INVALID_ARGUMENT, "computation must return one 0-d tensor");
      break;
    }
    memcpy(r->data + (size_t)i * rs, v->data, rs);
    tensor_release(v);
  }
  if (args) release_all(args, n);
  free(args);
  if (st) {
    tensor_release(r);
    return st;
  }
  *out = r;
  return NULL;
}

void interp_register_control(interp_kernel *table) {
  table[OP_FUNC_CALL] = k_call;
  table[OP_WHILE] = k_while;
  table[OP_IF] = k_if;
  table[OP_CASE] = k_case;
  table[OP_MAP] = k_map;
  table[OP_COMPOSITE] = k_composite;
  table[OP_OPTIMIZATION_BARRIER] = k_barrier;
}
