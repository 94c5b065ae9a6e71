/* refine_shapes.c — the refine-shapes pass (what StableHLO's
 * stablehlo-refine-shapes does, written for hlo's IR): from the concrete
 * argument types of the entry function, make every shape of the program
 * static so that the interpreter can run it.
 *
 * Steps, in program order over the entry function:
 *   1. set the entry's argument types to the concrete ones (after checking
 *      that each fits the declared type: kind, element type, rank, static
 *      dims);
 *   2. inline every func.call and stablehlo.composite (its decomposition;
 *      recursively), so that the shapes and the
 *      dimension-variable arguments (`jax.global_constant`) of callees become
 *      the call site's;
 *   3. walk the ops: fold integer shape computations whose operands are
 *      constants (get_dimension_size of a static dim, convert, reshape,
 *      broadcast_in_dim, concatenate, slice, arithmetic, compare, select,
 *      ...) into stablehlo.constant; replace the dynamic_* ops whose shape
 *      operands are now constants by their static forms (broadcast_in_dim,
 *      iota, reshape, slice, pad, gather, convolution; a real_dynamic_slice
 *      whose start is not constant but whose limit - start folds becomes a
 *      dynamic_slice); take the result shapes of rng and of custom calls
 *      with indices_of_shape_operands from their shape operands; evaluate every
 *      `shape_assertion` custom call (JAX's shape-polymorphism checks);
 *      infer the static result types of every other op (refine_infer.c);
 *   4. set the entry's result types.
 * Functions other than the entry are left as they were (no longer called). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ir/element.h"
#include "passes/builder.h"
#include "passes/passes.h"
#include "passes/refine_internal.h"
#include "support/status.h"

#define MAX_FOLD_ELEMS 4096   /* larger integer tensors are not folded */
#define MAX_INLINED 1000000   /* ops inlined at most (a recursive call graph) */

/* ------------------------------------------------------- value map */

/* Open-addressing map from old values to new ones (cloning). */
typedef struct vmap {
  const hlo_value **keys;
  hlo_value **vals;
  size_t cap, n;
} vmap;

static size_t vhash(const void *p, size_t cap) {
  uintptr_t x = (uintptr_t)p;
  x ^= x >> 17;
  x *= 0x9E3779B97F4A7C15ull;
  return (size_t)(x >> 7) & (cap - 1);
}

static bool vmap_put(vmap *vm, const hlo_value *k, hlo_value *v) {
  if ((vm->n + 1) * 2 > vm->cap) {
    size_t nc = vm->cap ? vm->cap * 2 : 64;
    const hlo_value **nk = calloc(nc, sizeof *nk);
    hlo_value **nv = calloc(nc, sizeof *nv);
    if (!nk || !nv) { free(nk); free(nv); return false; }
    for (size_t i = 0; i < vm->cap; i++) {
      if (!vm->keys[i]) continue;
      size_t h = vhash(vm->keys[i], nc);
      while (nk[h]) h = (h + 1) & (nc - 1);
      nk[h] = vm->keys[i];
      nv[h] = vm->vals[i];
    }
    free(vm->keys);
    free(vm->vals);
    vm->keys = nk;
    vm->vals = nv;
    vm->cap = nc;
  }
  size_t h = vhash(k, vm->cap);
  while (vm->keys[h] && vm->keys[h] != k) h = (h + 1) & (vm->cap - 1);
  if (!vm->keys[h]) vm->n++;
  vm->keys[h] = k;
  vm->vals[h] = v;
  return true;
}

static hlo_value *vmap_get(const vmap *vm, const hlo_value *k) {
  if (!vm->cap) return NULL;
  size_t h = vhash(k, vm->cap);
  while (vm->keys[h]) {
    if (vm->keys[h] == k) return vm->vals[h];
    h = (h + 1) & (vm->cap - 1);
  }
  return NULL;
}

static void vmap_free(vmap *vm) {
  free(vm->keys);
  free(vm->vals);
  memset(vm, 0, sizeof *vm);
}

/* ---------------------------------------------------------- inlining */

static hlo_status oom(const hlo_loc *loc) {
  return status_at(HLO_RESOURCE_EXHAUSTED, loc, "out of memory while refining shapes");
}

static hlo_status clone_block_into(hlo_module_ir *m, const hlo_block *src, hlo_block *dst,
                                   hlo_op *before, vmap *vm, size_t *count);

/* A copy of `src` (attributes shared, regions cloned) with operands mapped
 * through vm; its results are added to vm. Inserted before `before` or
 * appended to `dst`. */
static hlo_status clone_op(hlo_module_ir *m, const hlo_op *src, hlo_block *dst, hlo_op *before,
                           vmap *vm, size_t *count) {
  if (++*count > MAX_INLINED)
    return status_at(HLO_RESOURCE_EXHAUSTED, &src->loc,
                     "refine shapes: inlining calls makes over %d ops (a recursive call?)",
                     MAX_INLINED);
  hlo_value *ops[64], **opv = ops;
  hlo_type *rts[64], **rtv = rts;
  if (src->num_operands > 64) opv = malloc(src->num_operands * sizeof *opv);
  if (src->num_results > 64) rtv = malloc(src->num_results * sizeof *rtv);
  hlo_status st = NULL;
  hlo_op *op = NULL;
  if (!opv || !rtv) { st = oom(&src->loc); goto done; }
  for (uint32_t i = 0; i < src->num_operands; i++) {
    hlo_value *v = vmap_get(vm, src->operands[i]);
    opv[i] = v ? v : src->operands[i];
  }
  for (uint32_t i = 0; i < src->num_results; i++) rtv[i] = src->results[i].type;
  op = op_create(m, src->opcode, opv, src->num_operands, rtv, src->num_results, src->num_regions,
                 src->loc);
  if (!op) { st = oom(&src->loc); goto done; }
  op->loc_text = src->loc_text;
  op->num_attrs = src->num_attrs;
  op->attrs = src->attrs; /* attributes are never edited in place */
  for (uint32_t i = 0; i < src->num_results; i++) {
    op->results[i].name = src->results[i].name;
    op->results[i].loc = src->results[i].loc;
    if (!vmap_put(vm, &src->results[i], &op->results[i])) { st = oom(&src->loc); goto done; }
  }
  if (before) op_insert_before(before, op);
  else block_append(dst, op);
  for (uint32_t r = 0; r < src->num_regions && !st; r++)
    st = clone_block_into(m, &src->regions[r].block, &op->regions[r].block, NULL, vm, count);
done:
  if (opv != ops) free(opv);
  if (rtv != rts) free(rtv);
  return st;
}

/* Clones the ops of `src` into `dst` (a fresh region block: its arguments
 * are made like src's), or, when `before` is set, before that op (then the
 * caller has mapped src's arguments and src's terminator is not cloned). */
static hlo_status clone_block_into(hlo_module_ir *m, const hlo_block *src, hlo_block *dst,
                                   hlo_op *before, vmap *vm, size_t *count) {
  if (!before) {
    hlo_type **ts = malloc((src->num_args ? src->num_args : 1) * sizeof *ts);
    if (!ts) return oom(NULL);
    for (uint32_t i = 0; i < src->num_args; i++) ts[i] = src->args[i].type;
    hlo_status st = block_set_args(m, dst, ts, src->num_args);
    free(ts);
    HLO_TRY(st);
    for (uint32_t i = 0; i < src->num_args; i++) {
      dst->args[i].name = src->args[i].name;
      dst->args[i].loc = src->args[i].loc;
      if (!vmap_put(vm, &src->args[i], &dst->args[i])) return oom(NULL);
    }
  }
  for (const hlo_op *o = src->first; o; o = o->next) {
    if (before && o == src->last && o->opcode == OP_FUNC_RETURN) break;
    HLO_TRY(clone_op(m, o, dst, before, vm, count));
  }
  return NULL;
}

/* Replaces the func.call `call` (in the function whose body is `top`) by a
 * copy of its callee's body; a stablehlo.composite likewise by a copy of its
 * `decomposition` function (the spec: a composite is "semantically
 * equivalent to calling decomposition"), so that its shapes are refined as
 * the call site's. */
static hlo_status inline_call(hlo_module_ir *m, hlo_block *top, hlo_op *call, size_t *count) {
  const hlo_attr *c = op_attr(call, call->opcode == OP_COMPOSITE ? "decomposition" : "callee");
  const char *name = c && (c->kind == ATTR_SYMBOL || c->kind == ATTR_STRING) ? c->u.str.s : NULL;
  hlo_func *f = name ? module_find_func(m, name) : NULL;
  if (!f)
    return status_at(HLO_NOT_FOUND, &call->loc, "refine shapes: call to an unknown function @%s",
                     name ? name : "?");
  const hlo_block *body = &f->body.block;
  const hlo_op *ret = body->last;
  if (!ret || ret->opcode != OP_FUNC_RETURN || ret->num_operands != call->num_results ||
      body->num_args != call->num_operands)
    return status_at(HLO_INVALID_ARGUMENT, &call->loc,
                     "refine shapes: @%s does not match the call's signature", name);
  vmap vm = {0};
  hlo_status st = NULL;
  for (uint32_t i = 0; i < body->num_args && !st; i++)
    if (!vmap_put(&vm, &body->args[i], call->operands[i])) st = oom(&call->loc);
  if (!st) st = clone_block_into(m, body, NULL, call, &vm, count);
  for (uint32_t i = 0; i < call->num_results && !st; i++) {
    hlo_value *v = vmap_get(&vm, ret->operands[i]);
    block_replace_uses(top, &call->results[i], v ? v : ret->operands[i]);
  }
  vmap_free(&vm);
  if (!st) op_unlink(call);
  return st;
}

/* Inlines every call and composite in `b` (and nested regions), including
 * the calls the inlined bodies make. */
static hlo_status inline_calls(hlo_module_ir *m, hlo_block *top, hlo_block *b, size_t *count) {
  for (hlo_op *op = b->first; op;) {
    if (op->opcode == OP_FUNC_CALL || op->opcode == OP_COMPOSITE) {
      hlo_op *prev = op->prev;
      HLO_TRY(inline_call(m, top, op, count));
      op = prev ? prev->next : b->first; /* walk the inlined ops too */
      continue;
    }
    for (uint32_t r = 0; r < op->num_regions; r++)
      HLO_TRY(inline_calls(m, top, &op->regions[r].block, count));
    op = op->next;
  }
  return NULL;
}

/* ------------------------------------------------------- constants */

/* The integer elements of `v` when it is a stablehlo.constant of an integer
 * or i1 type with at most MAX_FOLD_ELEMS elements (in m's arena). */
static bool const_ints(hlo_module_ir *m, const hlo_value *v, int64_t **out, uint32_t *n) {
  const hlo_op *d = v->def;
  if (!d || d->opcode != OP_CONSTANT || v->type->kind != TYPE_TENSOR || v->type->quant) return false;
  hlo_dtype dt = v->type->dtype;
  if (!dtype_is_int(dt) && dt != HLO_I1) return false;
  int64_t ne = type_num_elements(v->type);
  const hlo_attr *a = op_attr(d, "value");
  if (ne < 0 || ne > MAX_FOLD_ELEMS || !a || a->kind != ATTR_DENSE) return false;
  return attr_as_ints(&m->arena, a, out, n) && *n == (uint32_t)ne;
}

/* Replaces every use of op's result 0 by a new stablehlo.constant of type
 * `t` holding ints[0..n) (wrapped to the element type), and unlinks op. */
static hlo_status replace_by_const(hlo_module_ir *m, hlo_block *top, hlo_op *op, hlo_type *t,
                                   const int64_t *ints, int64_t n) {
  size_t es = hlo_dtype_size(t->dtype);
  uint8_t *data = arena_alloc(&m->arena, (size_t)n * es + 1);
  if (!data) return oom(&op->loc);
  for (int64_t k = 0; k < n; k++) elem_set_i64(t->dtype, data, k, ints[k]);
  hlo_attr *a = attr_dense(&m->arena, t, data, (size_t)n * es, false);
  hlo_op *c = a ? op_create(m, OP_CONSTANT, NULL, 0, &t, 1, 0, op->loc) : NULL;
  if (!c || op_set_attr(m, c, "value", a)) return oom(&op->loc);
  c->loc_text = op->loc_text;
  c->results[0].name = op->results[0].name;
  op_insert_before(op, c);
  block_replace_uses(top, &op->results[0], &c->results[0]);
  op_unlink(op);
  return NULL;
}

/* --------------------------------------------------------- folding */

/* Row-major index helpers (the interpreter's, which passes may not use). */
static void unlinear(const int64_t *dims, uint32_t rank, int64_t lin, int64_t *idx) {
  for (uint32_t d = rank; d-- > 0;) {
    idx[d] = dims[d] ? lin % dims[d] : 0;
    lin = dims[d] ? lin / dims[d] : 0;
  }
}

static int64_t linear(const int64_t *dims, uint32_t rank, const int64_t *idx) {
  int64_t l = 0;
  for (uint32_t d = 0; d < rank; d++) l = l * dims[d] + idx[d];
  return l;
}

static bool is_unsigned(hlo_dtype t) { return dtype_class(t) == HLO_CLASS_UINT; }

/* Binary integer op on a, b of type dt; false when it must not fold
 * (division by zero, overflowing division). */
static bool fold_bin(hlo_opcode opc, hlo_dtype dt, int64_t a, int64_t b, int64_t *r) {
  bool u = is_unsigned(dt);
  switch (opc) {
    case OP_ADD: *r = (int64_t)((uint64_t)a + (uint64_t)b); return true;
    case OP_SUBTRACT: *r = (int64_t)((uint64_t)a - (uint64_t)b); return true;
    case OP_MULTIPLY: *r = (int64_t)((uint64_t)a * (uint64_t)b); return true;
    case OP_DIVIDE:
    case OP_REMAINDER:
      if (b == 0 || (!u && b == -1 && a == int_min(dt))) return false;
      if (u) *r = (int64_t)(opc == OP_DIVIDE ? (uint64_t)a / (uint64_t)b : (uint64_t)a % (uint64_t)b);
      else *r = opc == OP_DIVIDE ? a / b : a % b;
      return true;
    case OP_MAXIMUM: *r = (u ? (uint64_t)a > (uint64_t)b : a > b) ? a : b; return true;
    case OP_MINIMUM: *r = (u ? (uint64_t)a < (uint64_t)b : a < b) ? a : b; return true;
    case OP_AND: *r = a & b; return true;
    case OP_OR: *r = a | b; return true;
    case OP_XOR: *r = a ^ b; return true;
    default: return false;
  }
}

static bool fold_compare(const hlo_op *op, hlo_dtype dt, int64_t a, int64_t b, int64_t *r) {
  const hlo_attr *d = op_attr(op, "comparison_direction");
  if (!d || d->kind != ATTR_ENUM) return false;
  const char *s = d->u.en.value;
  int c;
  if (is_unsigned(dt) || dt == HLO_I1) c = (uint64_t)a < (uint64_t)b ? -1 : (uint64_t)a > (uint64_t)b;
  else c = a < b ? -1 : a > b;
  if (!strcmp(s, "EQ")) *r = c == 0;
  else if (!strcmp(s, "NE")) *r = c != 0;
  else if (!strcmp(s, "LT")) *r = c < 0;
  else if (!strcmp(s, "LE")) *r = c <= 0;
  else if (!strcmp(s, "GT")) *r = c > 0;
  else if (!strcmp(s, "GE")) *r = c >= 0;
  else return false;
  return true;
}

/* Folds `op` into a constant when it is an integer computation over
 * constants (the shape arithmetic JAX emits); *folded says whether it did. */
static hlo_status try_fold(hlo_module_ir *m, hlo_block *top, hlo_op *op, bool *folded) {
  *folded = false;
  if (op->num_results != 1 || op->num_operands == 0 || op->num_operands > 8) return NULL;
  hlo_type *rt = op->results[0].type;
  if (rt->kind != TYPE_TENSOR || !type_is_static(rt) || rt->quant ||
      (!dtype_is_int(rt->dtype) && rt->dtype != HLO_I1))
    return NULL;
  int64_t ne = type_num_elements(rt);
  if (ne < 0 || ne > MAX_FOLD_ELEMS) return NULL;
  int64_t *in[8];
  uint32_t nin[8];
  for (uint32_t i = 0; i < op->num_operands; i++)
    if (!const_ints(m, op->operands[i], &in[i], &nin[i])) return NULL;
  int64_t *r = arena_alloc(&m->arena, (size_t)(ne ? ne : 1) * sizeof *r);
  if (!r) return oom(&op->loc);
  hlo_dtype dt = op->operands[0]->type->dtype;
  const hlo_type *t0 = op->operands[0]->type;
  switch (op->opcode) {
    case OP_CONVERT:
      for (int64_t k = 0; k < ne; k++)
        r[k] = rt->dtype == HLO_I1 ? in[0][k] != 0
               : is_unsigned(dt) ? (int64_t)(uint64_t)in[0][k] : in[0][k];
      break;
    case OP_RESHAPE:
      if (nin[0] != ne) return NULL;
      memcpy(r, in[0], (size_t)ne * sizeof *r);
      break;
    case OP_NEGATE:
    case OP_ABS:
    case OP_SIGN:
    case OP_NOT:
      for (int64_t k = 0; k < ne; k++) {
        int64_t a = in[0][k];
        if (op->opcode == OP_NEGATE) r[k] = (int64_t)(0 - (uint64_t)a);
        else if (op->opcode == OP_ABS) r[k] = a < 0 ? (int64_t)(0 - (uint64_t)a) : a;
        else if (op->opcode == OP_SIGN) r[k] = is_unsigned(dt) ? a != 0 : (a > 0) - (a < 0);
        else r[k] = dt == HLO_I1 ? !a : ~a;
      }
      break;
    case OP_ADD: case OP_SUBTRACT: case OP_MULTIPLY: case OP_DIVIDE: case OP_REMAINDER:
    case OP_MAXIMUM: case OP_MINIMUM: case OP_AND: case OP_OR: case OP_XOR:
    case OP_COMPARE:
      if (op->num_operands != 2 || nin[0] != ne || nin[1] != ne) return NULL;
      for (int64_t k = 0; k < ne; k++) {
        bool ok = op->opcode == OP_COMPARE ? fold_compare(op, dt, in[0][k], in[1][k], &r[k])
                                           : fold_bin(op->opcode, dt, in[0][k], in[1][k], &r[k]);
        if (!ok) return NULL;
      }
      break;
    case OP_SELECT:
      if (op->num_operands != 3 || nin[1] != ne || nin[2] != ne || (nin[0] != 1 && nin[0] != ne))
        return NULL;
      for (int64_t k = 0; k < ne; k++) r[k] = in[0][nin[0] == 1 ? 0 : k] ? in[1][k] : in[2][k];
      break;
    case OP_CLAMP: {
      if (op->num_operands != 3 || nin[1] != ne) return NULL;
      dt = op->operands[1]->type->dtype;
      for (int64_t k = 0; k < ne; k++) {
        int64_t lo = in[0][nin[0] == 1 ? 0 : k], hi = in[2][nin[2] == 1 ? 0 : k], x;
        if (!fold_bin(OP_MAXIMUM, dt, in[1][k], lo, &x) || !fold_bin(OP_MINIMUM, dt, x, hi, &r[k]))
          return NULL;
      }
      break;
    }
    case OP_BROADCAST_IN_DIM: {
      int64_t *bd;
      uint32_t nbd;
      const hlo_attr *a = op_attr(op, "broadcast_dimensions");
      if (!a || !attr_as_ints(&m->arena, a, &bd, &nbd) || nbd != t0->rank || rt->rank > 16)
        return NULL;
      int64_t idx[16] = {0}, src[16] = {0};
      for (int64_t k = 0; k < ne; k++) {
        unlinear(rt->dims, rt->rank, k, idx);
        for (uint32_t d = 0; d < nbd; d++) {
          if (bd[d] < 0 || bd[d] >= rt->rank) return NULL;
          src[d] = t0->dims[d] == 1 ? 0 : idx[bd[d]];
        }
        r[k] = in[0][linear(t0->dims, t0->rank, src)];
      }
      break;
    }
    case OP_CONCATENATE: {
      int64_t dim = op_attr_int(op, "dimension", -1);
      if (dim < 0 || dim >= rt->rank || rt->rank > 16) return NULL;
      int64_t idx[16];
      for (int64_t k = 0; k < ne; k++) {
        unlinear(rt->dims, rt->rank, k, idx);
        uint32_t j = 0;
        const hlo_type *tj = op->operands[0]->type;
        while (idx[dim] >= tj->dims[dim]) {
          idx[dim] -= tj->dims[dim];
          if (++j >= op->num_operands) return NULL;
          tj = op->operands[j]->type;
        }
        if (tj->rank != rt->rank) return NULL;
        r[k] = in[j][linear(tj->dims, tj->rank, idx)];
      }
      break;
    }
    case OP_SLICE: {
      int64_t *s, *st;
      uint32_t ns, nst;
      const hlo_attr *a = op_attr(op, "start_indices"), *b = op_attr(op, "strides");
      if (rt->rank != 1 || !a || !attr_as_ints(&m->arena, a, &s, &ns) || ns != 1) return NULL;
      int64_t stride = 1;
      if (b && attr_as_ints(&m->arena, b, &st, &nst) && nst == 1) stride = st[0];
      for (int64_t k = 0; k < ne; k++) {
        int64_t j = s[0] + k * stride;
        if (j < 0 || j >= (int64_t)nin[0]) return NULL;
        r[k] = in[0][j];
      }
      break;
    }
    default:
      return NULL;
  }
  HLO_TRY(replace_by_const(m, top, op, rt, r, ne));
  *folded = true;
  return NULL;
}

/* ------------------------------------------------ dynamic ops to static */

/* The constant integer shape operand `k` of a dynamic_* op. */
static hlo_status shape_operand(hlo_module_ir *m, const hlo_op *op, uint32_t k, const char *what,
                                int64_t **v, uint32_t *n) {
  if (k >= op->num_operands || !const_ints(m, op->operands[k], v, n))
    return status_at(HLO_UNIMPLEMENTED, &op->loc,
                     "refine shapes: %s: its %s operand does not fold to a constant for these "
                     "inputs",
                     op_name(op->opcode), what);
  return NULL;
}

static hlo_status check_sizes(const hlo_op *op, const char *what, const int64_t *v, uint32_t n) {
  for (uint32_t i = 0; i < n; i++)
    if (v[i] < 0)
      return status_at(HLO_INVALID_ARGUMENT, &op->loc,
                       "refine shapes: %s: %s[%u] is %lld; sizes must be >= 0",
                       op_name(op->opcode), what, i, (long long)v[i]);
  return NULL;
}

/* Copies op's attributes except those named in `drop` (NULL-terminated)
 * onto `to`. */
static hlo_status copy_attrs(hlo_module_ir *m, const hlo_op *op, hlo_op *to,
                             const char *const *drop) {
  for (uint32_t i = 0; i < op->num_attrs; i++) {
    bool skip = false;
    for (const char *const *d = drop; d && *d; d++)
      if (!strcmp(op->attrs[i].name, *d)) skip = true;
    if (!skip) HLO_TRY(op_set_attr(m, to, op->attrs[i].name, op->attrs[i].value));
  }
  return NULL;
}

/* Replaces the dynamic op `op` by a new op `opc` over operands
 * op->operands[0..nops), with op's attributes (less `drop`) plus `extra`
 * attributes, whose result type is `rt` or, when NULL, inferred. */
static hlo_status replace_op(hlo_module_ir *m, hlo_block *top, hlo_op *op, hlo_opcode opc,
                             uint32_t nops, hlo_type *rt, const char *const *drop,
                             const char *const *names, hlo_attr *const *vals, uint32_t nextra) {
  hlo_type *t = rt ? rt : op->results[0].type;
  hlo_op *n = op_create(m, opc, op->operands, nops, &t, 1, 0, op->loc);
  if (!n) return oom(&op->loc);
  n->loc_text = op->loc_text;
  n->results[0].name = op->results[0].name;
  HLO_TRY(copy_attrs(m, op, n, drop));
  for (uint32_t i = 0; i < nextra; i++) {
    if (!vals[i]) return oom(&op->loc);
    HLO_TRY(op_set_attr(m, n, names[i], vals[i]));
  }
  op_insert_before(op, n);
  /* the result type must fit the dynamic op's declared one */
  if (rt) {
    n->results[0].type = op->results[0].type;
    HLO_TRY(refine_set_result(n, 0, rt));
  } else {
    HLO_TRY(refine_infer_op(m, n));
  }
  block_replace_uses(top, &op->results[0], &n->results[0]);
  op_unlink(op);
  return NULL;
}

/* ------------------------------------------ symbolic index differences */

#define MAX_AFFINE_DEPTH 64

/* Element `k` of the integer vector `v` as base[kb] + off: `base` is the
 * value the chain of additions of constants starts from (NULL when the
 * element is the constant `off`). Follows add/subtract of constants,
 * concatenate, reshape, broadcast of a scalar, integer convert and clamp
 * whose bounds are equal constants; anything else is its own base. Used to
 * fold limit - start when both are "the same value plus constants" (JAX's
 * slices at a loop counter: start = clamp(i), limit = start + sizes). */
static void elem_affine(hlo_module_ir *m, const hlo_value *v, int64_t k, int depth,
                        const hlo_value **base, int64_t *kb, int64_t *off) {
  *base = v;
  *kb = k;
  *off = 0;
  const hlo_op *d = v->def;
  const hlo_type *t = v->type;
  if (!d || depth > MAX_AFFINE_DEPTH || t->kind != TYPE_TENSOR || t->rank > 1) return;
  int64_t *c;
  uint32_t nc;
  if (const_ints(m, v, &c, &nc)) {
    if (k < (int64_t)nc) { *base = NULL; *off = c[k]; }
    return;
  }
  switch (d->opcode) {
    case OP_ADD:
    case OP_SUBTRACT: {
      const hlo_value *ba, *bb;
      int64_t ka, kbb, oa, ob;
      elem_affine(m, d->operands[0], k, depth + 1, &ba, &ka, &oa);
      elem_affine(m, d->operands[1], k, depth + 1, &bb, &kbb, &ob);
      if (bb == NULL) {
        *base = ba; *kb = ka;
        *off = d->opcode == OP_ADD ? (int64_t)((uint64_t)oa + (uint64_t)ob)
                                   : (int64_t)((uint64_t)oa - (uint64_t)ob);
      } else if (ba == NULL && d->opcode == OP_ADD) {
        *base = bb; *kb = kbb; *off = (int64_t)((uint64_t)oa + (uint64_t)ob);
      }
      return;
    }
    case OP_CONCATENATE: {
      int64_t j = k;
      for (uint32_t i = 0; i < d->num_operands; i++) {
        const hlo_type *ti = d->operands[i]->type;
        int64_t n = ti->rank == 1 && ti->dims[0] != HLO_DYN ? ti->dims[0] : -1;
        if (n < 0) return;
        if (j < n) { elem_affine(m, d->operands[i], j, depth + 1, base, kb, off); return; }
        j -= n;
      }
      return;
    }
    case OP_RESHAPE:
    case OP_CONVERT:
      if (d->operands[0]->type->kind == TYPE_TENSOR && d->operands[0]->type->rank <= 1 &&
          dtype_is_int(d->operands[0]->type->dtype))
        elem_affine(m, d->operands[0], k, depth + 1, base, kb, off);
      return;
    case OP_BROADCAST_IN_DIM:
      if (d->operands[0]->type->kind == TYPE_TENSOR && d->operands[0]->type->rank == 0)
        elem_affine(m, d->operands[0], 0, depth + 1, base, kb, off);
      return;
    default:
      return;
  }
}

/* A real_dynamic_slice whose start_indices are not constants but whose
 * limit_indices - start_indices fold (elem_affine) and whose strides are
 * constants: its result has the static size ceil((limit - start) / stride)
 * per dimension, so it becomes a stablehlo.dynamic_slice at the start
 * (sizes (size - 1) * stride + 1) followed, for strides > 1, by a strided
 * stablehlo.slice. The spec requires 0 <= start <= limit <= dim for
 * real_dynamic_slice (anything else is undefined behaviour); dynamic_slice
 * clamps the start into range, which agrees where the spec defines it. */
static hlo_status real_dynamic_slice_symbolic(hlo_module_ir *m, hlo_block *top, hlo_op *op) {
  const hlo_type *x = op->operands[0]->type, *sit = op->operands[1]->type;
  int64_t *st;
  uint32_t nst;
  HLO_TRY(shape_operand(m, op, 3, "strides", &st, &nst));
  if (x->kind != TYPE_TENSOR || !type_is_static(x) || x->rank > 64 || nst != x->rank ||
      sit->kind != TYPE_TENSOR || sit->rank != 1 || sit->dims[0] != x->rank)
    return status_at(HLO_INVALID_ARGUMENT, &op->loc,
                     "refine shapes: real_dynamic_slice: index operands must have the "
                     "operand's rank %u", x->rank);
  int64_t size[64], extent[64], lim[64];
  for (uint32_t d = 0; d < x->rank; d++) {
    const hlo_value *bs, *bl;
    int64_t ks, kl, os, ol;
    elem_affine(m, op->operands[1], d, 0, &bs, &ks, &os);
    elem_affine(m, op->operands[2], d, 0, &bl, &kl, &ol);
    if (bs != bl || (bs && ks != kl))
      return status_at(HLO_UNIMPLEMENTED, &op->loc,
                       "refine shapes: real_dynamic_slice: neither its start_indices nor "
                       "limit_indices - start_indices (dimension %u) fold to a constant for "
                       "these inputs",
                       d);
    int64_t diff = ol - os;
    if (diff < 0 || diff > x->dims[d] || st[d] <= 0)
      return status_at(HLO_INVALID_ARGUMENT, &op->loc,
                       "refine shapes: real_dynamic_slice: dimension %u: limit - start is %lld "
                       "and stride %lld; they must fit size %lld",
                       d, (long long)diff, (long long)st[d], (long long)x->dims[d]);
    size[d] = (diff + st[d] - 1) / st[d];
    extent[d] = size[d] ? (size[d] - 1) * st[d] + 1 : 0;
    lim[d] = extent[d];
  }
  builder b;
  builder_at(&b, m, op);
  hlo_value *ops[65];
  ops[0] = op->operands[0];
  hlo_type *scalar = b_type(&b, sit->dtype, 0, NULL);
  for (uint32_t d = 0; d < x->rank; d++) {
    int64_t s0 = d, l0 = d + 1;
    hlo_value *e = b_slice(&b, op->operands[1], &s0, &l0, NULL);
    ops[d + 1] = b_reshape(&b, e, scalar);
  }
  hlo_type *dst = refine_type_like(m, x, x->rank, extent);
  hlo_op *ds = dst ? b_op(&b, OP_DYNAMIC_SLICE, ops, x->rank + 1, &dst, 1, 0) : NULL;
  b_set_attr(&b, ds, "slice_sizes", b_i64s(&b, extent, x->rank));
  HLO_TRY(builder_status(&b));
  hlo_value *r = &ds->results[0];
  bool strided = false;
  for (uint32_t d = 0; d < x->rank; d++) strided |= st[d] > 1;
  if (strided) {
    int64_t zero[64] = {0};
    r = b_slice(&b, r, zero, lim, st);
    HLO_TRY(builder_status(&b));
  }
  hlo_op *last = r->def;
  hlo_type *rt = r->type;
  r->type = op->results[0].type; /* the result must fit the declared type */
  HLO_TRY(refine_set_result(last, 0, rt));
  last->results[0].name = op->results[0].name;
  block_replace_uses(top, &op->results[0], r);
  op_unlink(op);
  return NULL;
}

static hlo_status rewrite_dynamic(hlo_module_ir *m, hlo_block *top, hlo_op *op) {
  int64_t *v, *l, *s;
  uint32_t n, nl, ns;
  hlo_type *rt = op->results[0].type;
  switch (op->opcode) {
    case OP_DYNAMIC_BROADCAST_IN_DIM: {
      HLO_TRY(shape_operand(m, op, 1, "output_dimensions", &v, &n));
      HLO_TRY(check_sizes(op, "output_dimensions", v, n));
      static const char *const drop[] = {"known_expanding_dimensions",
                                         "known_nonexpanding_dimensions", NULL};
      return replace_op(m, top, op, OP_BROADCAST_IN_DIM, 1, refine_type_like(m, rt, n, v), drop,
                        NULL, NULL, 0);
    }
    case OP_DYNAMIC_IOTA:
      HLO_TRY(shape_operand(m, op, 0, "output_shape", &v, &n));
      HLO_TRY(check_sizes(op, "output_shape", v, n));
      return replace_op(m, top, op, OP_IOTA, 0, refine_type_like(m, rt, n, v), NULL, NULL, NULL, 0);
    case OP_DYNAMIC_RESHAPE:
      HLO_TRY(shape_operand(m, op, 1, "output_shape", &v, &n));
      HLO_TRY(check_sizes(op, "output_shape", v, n));
      {
        int64_t prod = 1;
        for (uint32_t i = 0; i < n; i++) prod *= v[i];
        if (prod != type_num_elements(op->operands[0]->type))
          return status_at(HLO_INVALID_ARGUMENT, &op->loc,
                           "refine shapes: dynamic_reshape: output_shape has %lld elements, the "
                           "operand %lld",
                           (long long)prod, (long long)type_num_elements(op->operands[0]->type));
      }
      return replace_op(m, top, op, OP_RESHAPE, 1, refine_type_like(m, rt, n, v), NULL, NULL, NULL,
                        0);
    case OP_REAL_DYNAMIC_SLICE: {
      int64_t *st;
      uint32_t nst;
      if (op->num_operands == 4 && (!const_ints(m, op->operands[1], &s, &ns) ||
                                    !const_ints(m, op->operands[2], &l, &nl)))
        return real_dynamic_slice_symbolic(m, top, op);
      HLO_TRY(shape_operand(m, op, 1, "start_indices", &s, &ns));
      HLO_TRY(shape_operand(m, op, 2, "limit_indices", &l, &nl));
      HLO_TRY(shape_operand(m, op, 3, "strides", &st, &nst));
      const hlo_type *x = op->operands[0]->type;
      if (ns != x->rank || nl != ns || nst != ns)
        return status_at(HLO_INVALID_ARGUMENT, &op->loc,
                         "refine shapes: real_dynamic_slice: index operands must have the "
                         "operand's rank %u", x->rank);
      for (uint32_t d = 0; d < ns; d++)
        if (s[d] < 0 || l[d] < s[d] || l[d] > x->dims[d] || st[d] <= 0)
          return status_at(HLO_INVALID_ARGUMENT, &op->loc,
                           "refine shapes: real_dynamic_slice: dimension %u: start %lld, limit "
                           "%lld, stride %lld do not fit size %lld",
                           d, (long long)s[d], (long long)l[d], (long long)st[d],
                           (long long)x->dims[d]);
      static const char *const names[] = {"start_indices", "limit_indices", "strides"};
      hlo_attr *vals[] = {attr_dense_array_i64(&m->arena, s, ns),
                          attr_dense_array_i64(&m->arena, l, ns),
                          attr_dense_array_i64(&m->arena, st, ns)};
      return replace_op(m, top, op, OP_SLICE, 1, NULL, NULL, names, vals, 3);
    }
    case OP_DYNAMIC_PAD: {
      int64_t *in;
      uint32_t nin;
      HLO_TRY(shape_operand(m, op, 2, "edge_padding_low", &s, &ns));
      HLO_TRY(shape_operand(m, op, 3, "edge_padding_high", &l, &nl));
      HLO_TRY(shape_operand(m, op, 4, "interior_padding", &in, &nin));
      HLO_TRY(check_sizes(op, "interior_padding", in, nin));
      static const char *const names[] = {"edge_padding_low", "edge_padding_high",
                                          "interior_padding"};
      hlo_attr *vals[] = {attr_dense_array_i64(&m->arena, s, ns),
                          attr_dense_array_i64(&m->arena, l, nl),
                          attr_dense_array_i64(&m->arena, in, nin)};
      return replace_op(m, top, op, OP_PAD, 2, NULL, NULL, names, vals, 3);
    }
    case OP_DYNAMIC_GATHER: {
      HLO_TRY(shape_operand(m, op, 2, "slice_sizes", &v, &n));
      HLO_TRY(check_sizes(op, "slice_sizes", v, n));
      static const char *const names[] = {"slice_sizes"};
      hlo_attr *vals[] = {attr_dense_array_i64(&m->arena, v, n)};
      return replace_op(m, top, op, OP_GATHER, 2, NULL, NULL, names, vals, 1);
    }
    case OP_DYNAMIC_CONV: {
      HLO_TRY(shape_operand(m, op, 2, "padding", &v, &n));
      if (n % 2)
        return status_at(HLO_INVALID_ARGUMENT, &op->loc,
                         "refine shapes: dynamic_conv: padding must be N x 2");
      int64_t pd[2] = {n / 2, 2};
      hlo_type *pt = type_tensor(&m->arena, HLO_I64, 2, pd);
      if (!pt) return oom(&op->loc);
      static const char *const names[] = {"padding"};
      hlo_attr *vals[] = {attr_dense(&m->arena, pt, v, n * sizeof *v, false)};
      return replace_op(m, top, op, OP_CONVOLUTION, 2, NULL, NULL, names, vals, 1);
    }
    default:
      return NULL;
  }
}

/* `stablehlo.dynamic_reduce_window` (a custom call of StableHLO's
 * experimental dynamic ops: inputs..., init values..., window_dimensions,
 * window_strides, base_dilations, window_dilations, padding; the body is
 * called_computations[0]) to stablehlo.reduce_window. */
static hlo_status rewrite_dynamic_reduce_window(hlo_module_ir *m, hlo_block *top, hlo_op *op) {
  if (op->num_operands < 7 || (op->num_operands - 5) % 2 || op->num_results * 2 + 5 !=
      op->num_operands)
    return status_at(HLO_INVALID_ARGUMENT, &op->loc,
                     "refine shapes: stablehlo.dynamic_reduce_window: wrong operand count");
  uint32_t n = (op->num_operands - 5) / 2;
  static const char *const names[] = {"window_dimensions", "window_strides", "base_dilations",
                                      "window_dilations", "padding"};
  hlo_attr *vals[5];
  for (uint32_t k = 0; k < 5; k++) {
    int64_t *v;
    uint32_t nv;
    HLO_TRY(shape_operand(m, op, 2 * n + k, names[k], &v, &nv));
    if (k < 4) {
      vals[k] = attr_dense_array_i64(&m->arena, v, nv);
    } else {
      int64_t pd[2] = {nv / 2, 2};
      hlo_type *pt = type_tensor(&m->arena, HLO_I64, 2, pd);
      vals[k] = pt ? attr_dense(&m->arena, pt, v, nv * sizeof *v, false) : NULL;
    }
    if (!vals[k]) return oom(&op->loc);
  }
  const hlo_attr *cc = op_attr(op, "called_computations");
  const hlo_attr *sym = cc && cc->kind == ATTR_ARRAY && cc->u.arr.n == 1 ? cc->u.arr.items[0] : NULL;
  hlo_func *body = sym && sym->kind == ATTR_SYMBOL ? module_find_func(m, sym->u.str.s) : NULL;
  if (!body || !body->body.block.last || body->body.block.last->opcode != OP_FUNC_RETURN)
    return status_at(HLO_INVALID_ARGUMENT, &op->loc,
                     "refine shapes: stablehlo.dynamic_reduce_window: no body function");
  hlo_type *rts[64];
  if (op->num_results > 64) return oom(&op->loc);
  for (uint32_t i = 0; i < op->num_results; i++) rts[i] = op->results[i].type;
  hlo_op *rw = op_create(m, OP_REDUCE_WINDOW, op->operands, 2 * n, rts, op->num_results, 1,
                         op->loc);
  if (!rw) return oom(&op->loc);
  rw->loc_text = op->loc_text;
  for (uint32_t k = 0; k < 5; k++) HLO_TRY(op_set_attr(m, rw, names[k], vals[k]));
  vmap vm = {0};
  size_t count = 0;
  hlo_status st = clone_block_into(m, &body->body.block, &rw->regions[0].block, NULL, &vm, &count);
  vmap_free(&vm);
  HLO_TRY(st);
  rw->regions[0].block.last->opcode = OP_RETURN; /* func.return -> stablehlo.return */
  op_insert_before(op, rw);
  HLO_TRY(refine_infer_op(m, rw));
  for (uint32_t i = 0; i < op->num_results; i++)
    block_replace_uses(top, &op->results[i], &rw->results[i]);
  op_unlink(op);
  return NULL;
}

/* ------------------------------------------------- shape assertions */

static bool is_target(const hlo_op *op, const char *name) {
  if (op->opcode != OP_CUSTOM_CALL) return false;
  const hlo_attr *t = op_attr(op, "call_target_name");
  return t && (t->kind == ATTR_STRING || t->kind == ATTR_SYMBOL) &&
         t->u.str.len == strlen(name) && !memcmp(t->u.str.s, name, t->u.str.len);
}

/* Evaluates JAX's `shape_assertion(pred, args...)`: removes it when pred
 * holds; otherwise fails with its error_message, "{K}" replaced by the
 * value of error argument K (as Python's str.format does for JAX). */
static hlo_status check_shape_assertion(hlo_module_ir *m, hlo_op *op) {
  int64_t *p;
  uint32_t np;
  if (op->num_operands < 1 || !const_ints(m, op->operands[0], &p, &np) || np != 1)
    return status_at(HLO_UNIMPLEMENTED, &op->loc,
                     "refine shapes: shape_assertion: its condition does not fold to a "
                     "constant for these inputs");
  if (p[0]) {
    op_unlink(op);
    return NULL;
  }
  const hlo_attr *msg = op_attr(op, "error_message");
  const char *s = msg && msg->kind == ATTR_STRING ? msg->u.str.s : "shape assertion failed";
  size_t len = msg && msg->kind == ATTR_STRING ? msg->u.str.len : strlen(s);
  char *out = malloc(len * 4 + 64);
  if (!out) return oom(&op->loc);
  size_t k = 0;
  for (size_t i = 0; i < len; i++) {
    if (s[i] == '{' && i + 1 < len && s[i + 1] >= '0' && s[i + 1] <= '9') {
      size_t j = i + 1;
      unsigned idx = 0;
      while (j < len && s[j] >= '0' && s[j] <= '9' && idx < 1000) idx = idx * 10 + (unsigned)(s[j++] - '0');
      int64_t *a;
      uint32_t na;
      if (j < len && s[j] == '}' && idx + 1 < op->num_operands &&
          const_ints(m, op->operands[idx + 1], &a, &na) && na == 1) {
        char num[32];
        int w = snprintf(num, sizeof num, "%lld", (long long)a[0]);
        if ((size_t)w <= (j - i + 1) * 4) { /* fits the buffer's margin */
          memcpy(out + k, num, (size_t)w);
          k += (size_t)w;
          i = j;
          continue;
        }
      }
    }
    out[k++] = s[i];
  }
  out[k] = 0;
  hlo_status st = status_at(HLO_INVALID_ARGUMENT, &op->loc, "%s", out);
  free(out);
  return st;
}

/* ------------------------------------------ results given by operands */

/* Ops whose result shape is the value of a shape operand:
 * stablehlo.rng (operand 2) and custom calls with an
 * `indices_of_shape_operands` attribute (result i has the shape held by
 * operand indices_of_shape_operands[i], as jax.export emits for custom calls
 * whose results are dynamic). The result types are set; the op stays. */
static hlo_status refine_from_shape_operands(hlo_module_ir *m, hlo_op *op) {
  int64_t *idx = NULL, rng_idx = 2;
  uint32_t nidx = 1;
  if (op->opcode == OP_RNG) {
    idx = &rng_idx;
  } else {
    const hlo_attr *a = op_attr(op, "indices_of_shape_operands");
    if (!a) return NULL;
    if (!attr_as_ints(&m->arena, a, &idx, &nidx) || nidx != op->num_results)
      return status_at(HLO_INVALID_ARGUMENT, &op->loc,
                       "refine shapes: %s: indices_of_shape_operands must have one entry per "
                       "result",
                       op_name(op->opcode));
  }
  for (uint32_t i = 0; i < nidx && i < op->num_results; i++) {
    hlo_type *rt = op->results[i].type;
    if (type_is_static(rt) || rt->kind != TYPE_TENSOR) continue;
    int64_t *v;
    uint32_t n;
    if (idx[i] < 0 || idx[i] >= op->num_operands)
      return status_at(HLO_INVALID_ARGUMENT, &op->loc,
                       "refine shapes: %s: shape operand %lld is out of range",
                       op_name(op->opcode), (long long)idx[i]);
    HLO_TRY(shape_operand(m, op, (uint32_t)idx[i], "shape", &v, &n));
    HLO_TRY(check_sizes(op, "shape", v, n));
    HLO_TRY(refine_set_result(op, i, refine_type_like(m, rt, n, v)));
  }
  return NULL;
}

/* ---------------------------------------------------------- the walk */

static hlo_status refine_block(hlo_module_ir *m, hlo_block *top, hlo_block *b);

static hlo_status refine_op(hlo_module_ir *m, hlo_block *top, hlo_op *op) {
  switch (op->opcode) {
    case OP_GET_DIMENSION_SIZE: {
      const hlo_type *t = op->operands[0]->type;
      int64_t d = op_attr_int(op, "dimension", -1);
      if (t->kind == TYPE_TENSOR && d >= 0 && d < t->rank && t->dims[d] != HLO_DYN)
        return replace_by_const(m, top, op, op->results[0].type, &t->dims[d], 1);
      return status_at(HLO_UNIMPLEMENTED, &op->loc,
                       "refine shapes: get_dimension_size: dimension %lld is not static",
                       (long long)d);
    }
    case OP_DYNAMIC_BROADCAST_IN_DIM: case OP_DYNAMIC_IOTA: case OP_DYNAMIC_RESHAPE:
    case OP_REAL_DYNAMIC_SLICE: case OP_DYNAMIC_PAD: case OP_DYNAMIC_GATHER:
    case OP_DYNAMIC_CONV:
      return rewrite_dynamic(m, top, op);
    case OP_CUSTOM_CALL:
      if (is_target(op, "shape_assertion")) return check_shape_assertion(m, op);
      if (is_target(op, "stablehlo.dynamic_reduce_window"))
        return rewrite_dynamic_reduce_window(m, top, op);
      HLO_TRY(refine_from_shape_operands(m, op));
      break;
    case OP_RNG:
      HLO_TRY(refine_from_shape_operands(m, op));
      break;
    case OP_SDY_NAMED_COMPUTATION:
    case OP_WHILE:
      /* the loop-carried values keep the operands' types (named_computation:
       * its body takes the operands) */
      for (uint32_t r = 0; r < op->num_regions; r++) {
        hlo_block *rb = &op->regions[r].block;
        if (rb->num_args != op->num_operands)
          return status_at(HLO_INVALID_ARGUMENT, &op->loc, "refine shapes: %s: region "
                           "arguments do not match the operands", op_name(op->opcode));
        for (uint32_t i = 0; i < rb->num_args; i++) rb->args[i].type = op->operands[i]->type;
      }
      break;
    default:
      break;
  }
  for (uint32_t r = 0; r < op->num_regions; r++)
    HLO_TRY(refine_block(m, top, &op->regions[r].block));
  if (op->num_regions == 0) {
    bool folded;
    HLO_TRY(try_fold(m, top, op, &folded));
    if (folded) return NULL;
  }
  return refine_infer_op(m, op);
}

static hlo_status refine_block(hlo_module_ir *m, hlo_block *top, hlo_block *b) {
  for (hlo_op *op = b->first; op;) {
    hlo_op *next = op->next; /* op may be replaced; replacements go before it */
    HLO_TRY(refine_op(m, top, op));
    op = next;
  }
  return NULL;
}

/* ---------------------------------------------------------- the pass */

/* Checks that concrete type `t` fits argument `i` of `f`; the error names
 * the argument and the dimension. */
static hlo_status check_arg(const hlo_func *f, uint32_t i, const hlo_type *t) {
  const hlo_value *a = &f->body.block.args[i];
  const hlo_type *d = a->type;
  char want[256], got[256];
  refine_type_str(d, want, sizeof want);
  refine_type_str(t, got, sizeof got);
  if (t->kind != d->kind || (t->kind == TYPE_TENSOR && t->dtype != d->dtype))
    return status_at(HLO_INVALID_ARGUMENT, &a->loc, "argument %u of @%s is %s; the input is %s",
                     i, f->name, want, got);
  if (t->kind != TYPE_TENSOR) return NULL;
  if (t->rank != d->rank)
    return status_at(HLO_INVALID_ARGUMENT, &a->loc,
                     "argument %u of @%s is %s (rank %u); the input has rank %u (%s)", i, f->name,
                     want, d->rank, t->rank, got);
  for (uint32_t k = 0; k < t->rank; k++) {
    if (t->dims[k] == HLO_DYN || t->dims[k] < 0)
      return status_at(HLO_INVALID_ARGUMENT, &a->loc,
                       "argument %u of @%s: the input's dimension %u is not a concrete size", i,
                       f->name, k);
    if (d->dims[k] != HLO_DYN && d->dims[k] != t->dims[k])
      return status_at(HLO_INVALID_ARGUMENT, &a->loc,
                       "argument %u of @%s is %s: dimension %u must be %lld, the input's is "
                       "%lld (%s)",
                       i, f->name, want, k, (long long)d->dims[k], (long long)t->dims[k], got);
  }
  return NULL;
}

bool module_needs_refinement(const hlo_module_ir *m, const char *entry) {
  const hlo_func *f = module_entry(m, entry);
  if (!f) return false;
  for (uint32_t i = 0; i < f->num_args; i++)
    if (!type_is_static(f->body.block.args[i].type)) return true;
  for (uint32_t i = 0; i < f->num_results; i++)
    if (!type_is_static(f->result_types[i])) return true;
  return false;
}

hlo_status pass_refine_shapes(hlo_module_ir *m, const char *entry, hlo_type *const *arg_types,
                              uint32_t nargs) {
  hlo_func *f = module_entry(m, entry);
  if (!f) return status_new(HLO_NOT_FOUND, "refine shapes: no entry function");
  if (nargs != f->num_args)
    return status_at(HLO_INVALID_ARGUMENT, &f->loc, "@%s takes %u arguments, got %u", f->name,
                     f->num_args, nargs);
  hlo_block *top = &f->body.block;
  for (uint32_t i = 0; i < nargs; i++) {
    hlo_value *a = &top->args[i];
    if (!arg_types[i]) {
      if (!type_is_static(a->type)) {
        char want[256];
        refine_type_str(a->type, want, sizeof want);
        return status_at(HLO_INVALID_ARGUMENT, &a->loc,
                         "argument %u of @%s is %s: give a concrete input shape", i, f->name,
                         want);
      }
      continue;
    }
    HLO_TRY(check_arg(f, i, arg_types[i]));
    if (arg_types[i]->kind == TYPE_TENSOR && !type_is_static(a->type)) {
      hlo_type *t = refine_type_like(m, a->type, arg_types[i]->rank, arg_types[i]->dims);
      if (!t) return oom(&a->loc);
      a->type = t;
    }
  }
  size_t count = 0;
  HLO_TRY(inline_calls(m, top, top, &count));
  HLO_TRY(refine_block(m, top, top));
  const hlo_op *ret = top->last;
  if (!ret || ret->opcode != OP_FUNC_RETURN || ret->num_operands != f->num_results)
    return status_at(HLO_INVALID_ARGUMENT, &f->loc, "refine shapes: @%s has no func.return",
                     f->name);
  for (uint32_t i = 0; i < f->num_results; i++) {
    hlo_type *t = ret->operands[i]->type;
    if (!type_is_static(t))
      return status_at(HLO_UNIMPLEMENTED, &ret->loc,
                       "refine shapes: result %u of @%s stays dynamic", i, f->name);
    f->result_types[i] = t;
  }
  return NULL;
}
