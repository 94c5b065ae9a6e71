/* lower_while.c — a stablehlo.while over 0-d values lowered to one LOOP
 * kernel (kernel.h, Loops).
 *
 * A loop over scalars (a counter, a Collatz step, a bisection, a scalar
 * Newton iteration) costs a runtime little per iteration but many: a
 * kernel call for the condition, one per fusion of the body, the loop's
 * bookkeeping between them, and on a GPU a graph node or a launch each
 * (XLA:GPU copies the predicate to the host every iteration). Lowered here,
 * the whole loop is one kernel: the condition's and the body's ops are
 * inlined as instructions over the carried values, which live in
 * registers; one call runs every iteration.
 *
 * How: each op of the two regions (after fusion: hlo.fusion ops, splat
 * constants, single elementwise ops) is lowered on its own by lower_fusion
 * — so every op that a kernel computes is computed here the same way, bit
 * for bit — into a 0-d kernel, whose instructions are then copied into the
 * loop kernel with its loads replaced by the instructions that compute the
 * values they load: a carried value (KI_PARAM), the result of an earlier
 * op of the region, or a value from outside the while (loaded once, before
 * the loop). */
#include "codegen/lower_while.h"
#include <stdlib.h>
#include <string.h>
#include "codegen/lower_fusion.h"

/* Which instruction of the loop kernel holds each IR value seen so far. */
typedef struct binding {
  const hlo_value *v;
  uint32_t inst;
} binding;

typedef struct env {
  binding *b;
  uint32_t n, cap;
} env;

static const int64_t no_dims[1] = {0}; /* rank 0 */

static hlo_status oom(void) { return status_new(HLO_RESOURCE_EXHAUSTED, "out of memory"); }

static hlo_status not_loop(const hlo_loc *loc, const char *why) {
  return status_at(HLO_UNIMPLEMENTED, loc, "while: %s: not a loop of 0-d values one kernel runs",
                   why);
}

/* The instruction bound to v, or -1 (the latest binding wins). */
static int64_t lookup(const env *e, const hlo_value *v) {
  for (uint32_t i = e->n; i-- > 0;)
    if (e->b[i].v == v) return e->b[i].inst;
  return -1;
}

static hlo_status bind(env *e, const hlo_value *v, uint32_t inst) {
  if (e->n == e->cap) {
    uint32_t nc = e->cap ? e->cap * 2 : 32;
    binding *nb = realloc(e->b, nc * sizeof *nb);
    if (!nb) return oom();
    e->b = nb;
    e->cap = nc;
  }
  e->b[e->n++] = (binding){v, inst};
  return NULL;
}

/* A 0-d static tensor of a type kernels compute. */
static bool scalar_value(const hlo_value *v) {
  const hlo_type *t = v->type;
  return t && t->kind == TYPE_TENSOR && t->rank == 0 && !t->quant &&
         kernel_dtype_supported(t->dtype);
}

/* Whether v is defined inside w (by an op nested in its regions, or as an
 * argument of a block nested there). */
static bool inside(const hlo_value *v, const hlo_op *w) {
  const hlo_block *b = v->def ? v->def->parent : v->block;
  while (b && b->parent && b->parent->parent) {
    const hlo_op *owner = b->parent->parent;
    if (owner == w) return true;
    b = owner->parent;
  }
  return false;
}

static bool is_fusion(const hlo_op *op) {
  const char *n = op_name(op->opcode);
  return n && !strcmp(n, "hlo.fusion") && op->num_regions == 1;
}

static bool is_terminator(const hlo_op *op) {
  return (op_flags(op->opcode) & OPF_TERMINATOR) || op->opcode == OP_RETURN;
}

/* Loads, before the loop, every value the ops of blk (nested regions
 * included) read from outside w: a new kernel input each. */
static hlo_status load_captured(const hlo_op *w, const hlo_block *blk, kernel *k, env *e) {
  for (const hlo_op *op = blk->first; op; op = op->next) {
    for (uint32_t i = 0; i < op->num_operands; i++) {
      const hlo_value *v = op->operands[i];
      if (inside(v, w) || lookup(e, v) >= 0) continue;
      if (!scalar_value(v)) return not_loop(&op->loc, "it reads a value that is not 0-d");
      uint32_t in, at;
      HLO_TRY(kernel_add_input(k, v->type->dtype, 0, no_dims, v, &in));
      kinst ld = kinst_make(KI_LOAD, v->type->dtype);
      ld.input = in;
      ld.map = kernel_map_identity(0);
      HLO_TRY(kernel_add_inst(k, false, &ld, &at));
      HLO_TRY(bind(e, v, at));
    }
    for (uint32_t r = 0; r < op->num_regions; r++)
      HLO_TRY(load_captured(w, &op->regions[r].block, k, e));
  }
  return NULL;
}

/* The value a kernel buffer of op's own lowering stands for outside op: a
 * fusion region's argument is the fusion's operand; anything else itself. */
static const hlo_value *operand_of(const hlo_op *op, const hlo_value *v) {
  if (!is_fusion(op) || v->def || v->block != &op->regions[0].block) return v;
  return v->index < op->num_operands ? op->operands[v->index] : NULL;
}

/* Copies sub's instructions (a 0-d elementwise kernel lowered from op)
 * into k, loads replaced by the bound values, and binds op's results. */
static hlo_status inline_kernel(const hlo_op *op, const kernel *sub, kernel *k, env *e) {
  if (sub->rank != 0 || sub->num_stages != 1 || sub->stages[0].kind != KSTAGE_MAP ||
      sub->num_temps || sub->num_reduce_dims)
    return not_loop(&op->loc, "an op of it is not elementwise");
  uint32_t *map = malloc((sub->num_body ? sub->num_body : 1) * sizeof *map);
  if (!map) return oom();
  hlo_status st = NULL;
  for (uint32_t j = 0; j < sub->num_body && !st; j++) {
    kinst q = sub->body[j];
    if (q.kind == KI_LOAD) {
      const hlo_value *v = q.input < sub->num_inputs ? sub->inputs[q.input].value : NULL;
      const hlo_value *ov = v ? operand_of(op, v) : NULL;
      int64_t at = ov ? lookup(e, ov) : -1;
      if (at < 0 || q.guard >= 0) st = not_loop(&op->loc, "an op reads a value it cannot see");
      else map[j] = (uint32_t)at;
      continue;
    }
    if (q.kind != KI_CONST && q.kind != KI_OP) {
      st = not_loop(&op->loc, "an op of it needs an index or a row");
      break;
    }
    for (uint32_t a = 0; a < q.num_args; a++) q.args[a] = map[q.args[a]];
    st = kernel_add_inst(k, false, &q, &map[j]);
  }
  /* the op's results: a fusion's are its region's returned values */
  const hlo_op *term = is_fusion(op) ? op->regions[0].block.last : NULL;
  for (uint32_t r = 0; r < op->num_results && !st; r++) {
    const hlo_value *inner = term ? (r < term->num_operands ? term->operands[r] : NULL)
                                  : &op->results[r];
    int64_t at = -1;
    for (uint32_t o = 0; o < sub->num_outputs && at < 0; o++)
      if (sub->outputs[o].buf.value == inner) at = map[sub->outputs[o].value];
    if (at < 0) st = not_loop(&op->loc, "an op's result is not computed");
    else st = bind(e, &op->results[r], (uint32_t)at);
  }
  free(map);
  return st;
}

/* Lowers each op of region block blk into k (its arguments bound to the
 * carried values already); *ret is its terminator. */
static hlo_status lower_region(const hlo_block *blk, kernel *k, env *e, const hlo_op **ret) {
  *ret = NULL;
  for (const hlo_op *op = blk->first; op; op = op->next) {
    if (is_terminator(op)) {
      *ret = op;
      break;
    }
    for (uint32_t r = 0; r < op->num_results; r++)
      if (!scalar_value(&op->results[r])) return not_loop(&op->loc, "an op's result is not 0-d");
    const hlo_op *one[1] = {op};
    const hlo_op **ops = one;
    uint32_t n = 1, no = op->num_results;
    const hlo_value *const *outs = NULL;
    const hlo_value *res[8];
    if (is_fusion(op)) {
      const hlo_block *rb = &op->regions[0].block;
      n = 0;
      for (const hlo_op *o = rb->first; o; o = o->next) n += !is_terminator(o);
      ops = calloc(n ? n : 1, sizeof *ops);
      if (!ops) return oom();
      n = 0;
      for (const hlo_op *o = rb->first; o; o = o->next)
        if (!is_terminator(o)) ops[n++] = o;
      if (!rb->last || !is_terminator(rb->last) || rb->last->num_operands != op->num_results) {
        free(ops);
        return not_loop(&op->loc, "a fusion without its results");
      }
      outs = (const hlo_value *const *)rb->last->operands;
    } else {
      if (op->num_regions || no < 1 || no > 8) return not_loop(&op->loc, "an op of it has regions");
      for (uint32_t r = 0; r < no; r++) res[r] = &op->results[r];
      outs = res;
    }
    kernel *sub = NULL;
    hlo_status st = lower_fusion(ops, n, outs, no, "sub", &sub);
    if (ops != one) free(ops);
    if (st) {
      if (hlo_status_code_of(st) == HLO_RESOURCE_EXHAUSTED) return st;
      hlo_status_free(st);
      return not_loop(&op->loc, "an op of it is not lowered into a kernel");
    }
    st = inline_kernel(op, sub, k, e);
    kernel_destroy(sub);
    HLO_TRY(st);
  }
  if (!*ret) return not_loop(&blk->parent->parent->loc, "a region without its return");
  return NULL;
}

/* The instruction of a region's returned value v. */
static hlo_status returned(const hlo_op *ret, const env *e, const hlo_value *v, uint32_t *out) {
  int64_t at = lookup(e, v);
  if (at < 0) return not_loop(&ret->loc, "a returned value is not computed");
  *out = (uint32_t)at;
  return NULL;
}

static hlo_status build(const hlo_op *w, kernel *k, env *e) {
  kernel_loop *l = &k->loop;
  uint32_t nc = w->num_operands;
  const hlo_block *cb = &w->regions[0].block, *bb = &w->regions[1].block;
  /* before the loop: the init values, then what the regions read from outside */
  for (uint32_t i = 0; i < nc; i++) {
    const hlo_value *v = w->operands[i];
    uint32_t in;
    HLO_TRY(kernel_add_input(k, v->type->dtype, 0, no_dims, v, &in));
    kinst ld = kinst_make(KI_LOAD, v->type->dtype);
    ld.input = in;
    ld.map = kernel_map_identity(0);
    HLO_TRY(kernel_add_inst(k, false, &ld, &l->init[i]));
  }
  HLO_TRY(load_captured(w, cb, k, e));
  HLO_TRY(load_captured(w, bb, k, e));
  if (k->num_inputs + w->num_results > KERNEL_MAX_LOOP_BUFFERS)
    return not_loop(&w->loc, "it reads too many values from outside");
  l->begin = k->num_body;
  for (uint32_t i = 0; i < nc; i++) {
    kinst p = kinst_make(KI_PARAM, w->operands[i]->type->dtype);
    p.input = i;
    HLO_TRY(kernel_add_inst(k, false, &p, &l->param[i]));
    HLO_TRY(bind(e, &cb->args[i], l->param[i]));
    HLO_TRY(bind(e, &bb->args[i], l->param[i]));
  }
  const hlo_op *ret = NULL;
  HLO_TRY(lower_region(cb, k, e, &ret));
  if (ret->num_operands != 1 || !scalar_value(ret->operands[0]) ||
      ret->operands[0]->type->dtype != HLO_I1)
    return not_loop(&ret->loc, "the condition is not one i1");
  HLO_TRY(returned(ret, e, ret->operands[0], &l->cond));
  l->cond_end = k->num_body;
  HLO_TRY(lower_region(bb, k, e, &ret));
  if (ret->num_operands != nc) return not_loop(&ret->loc, "the body returns another count");
  for (uint32_t i = 0; i < nc; i++) {
    HLO_TRY(returned(ret, e, ret->operands[i], &l->next[i]));
    if (k->body[l->next[i]].dtype != k->body[l->param[i]].dtype)
      return not_loop(&ret->loc, "the body returns another type");
  }
  l->num_carried = nc;
  kernel_map id = kernel_map_identity(0);
  for (uint32_t i = 0; i < w->num_results; i++)
    HLO_TRY(kernel_add_output(k, w->results[i].type->dtype, 0, no_dims, &w->results[i], &id,
                              l->param[i]));
  kernel_schedule_default(k, 0);
  return kernel_check_schedule(k);
}

hlo_status lower_scalar_while(const hlo_op *w, const char *name, kernel **out) {
  *out = NULL;
  if (w->opcode != OP_WHILE || w->num_regions != 2 || w->num_operands != w->num_results ||
      !w->num_operands || w->num_operands > KERNEL_MAX_LOOP_CARRIED ||
      w->regions[0].block.num_args != w->num_operands ||
      w->regions[1].block.num_args != w->num_operands)
    return not_loop(&w->loc, "its form");
  for (uint32_t i = 0; i < w->num_operands; i++)
    if (!scalar_value(w->operands[i]) || !type_equal(w->operands[i]->type, w->results[i].type))
      return not_loop(&w->loc, "a carried value is not 0-d");
  kernel *k = NULL;
  HLO_TRY(kernel_create(name, 0, no_dims, &w->loc, &k));
  env e = {0};
  hlo_status st = build(w, k, &e);
  free(e.b);
  if (st) {
    kernel_destroy(k);
    return st;
  }
  *out = k;
  return NULL;
}
