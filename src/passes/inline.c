/* inline.c — the inline pass: every func.call (and stablehlo.composite: the
 * spec makes it "semantically equivalent to calling decomposition") is
 * replaced by a copy of its callee's body, recursively, in every function;
 * then the private functions nothing refers to any more are removed.
 *
 * One forward walk per function in program order: a call's results are
 * recorded as renamed to the values its inlined body returns, and the
 * operands of every later op are looked up in that map as the walk reaches
 * them (every use of a value comes after its definition, in the same block
 * or in a region of a later op), so the pass costs O(ops + inlined ops)
 * rather than a walk of the function per call. The copies keep the callee's
 * source locations. A call graph with a cycle (recursion) is refused
 * before anything is changed. */
#include <string.h>

#include "passes/pass_util.h"
#include "passes/passes.h"

#define MAX_INLINED ((uint64_t)1 << 22) /* ops copied at most per module (an
                                           acyclic call graph can still blow up) */

typedef struct inliner {
  hlo_module_ir *m;
  bool composites;
  ptrmap renames; /* call result -> the value that replaces it */
  uint64_t count;
} inliner;

static hlo_status oom(const hlo_op *op) {
  return status_at(HLO_RESOURCE_EXHAUSTED, &op->loc, "out of memory while inlining");
}

/* The final replacement of `v` (following renames of renames). */
static hlo_value *resolve(const inliner *in, hlo_value *v) {
  for (int guard = 0; guard < 1 << 20; guard++) {
    hlo_value *r = ptrmap_get(&in->renames, v);
    if (!r) return v;
    v = r;
  }
  return v;
}

/* Copies the callee's body before `call`, records the renames of its
 * results and unlinks it. */
static hlo_status inline_one(inliner *in, hlo_op *call) {
  bool comp = call->opcode == OP_COMPOSITE;
  const hlo_attr *c = op_attr(call, comp ? "decomposition" : "callee");
  const char *name = c && (c->kind == ATTR_SYMBOL || c->kind == ATTR_STRING) ? c->u.str.s : NULL;
  hlo_func *f = name ? module_find_func(in->m, name) : NULL;
  if (!f)
    return status_at(HLO_NOT_FOUND, &call->loc, "inline: %s of an unknown function @%s",
                     comp ? "composite" : "call", name ? name : "?");
  const hlo_block *body = &f->body.block;
  const hlo_op *ret = body->last;
  if (!ret || ret->opcode != OP_FUNC_RETURN || ret->num_operands != call->num_results ||
      body->num_args != call->num_operands)
    return status_at(HLO_INVALID_ARGUMENT, &call->loc,
                     "inline: @%s does not match the signature of the %s", name,
                     comp ? "composite" : "call");
  for (uint32_t i = 0; i < call->num_results; i++)
    if (!type_equal(ret->operands[i]->type, call->results[i].type) &&
        !type_same_shape(ret->operands[i]->type, call->results[i].type))
      return status_at(HLO_INVALID_ARGUMENT, &call->loc,
                       "inline: result %u of @%s does not have the %s's result type", i, name,
                       comp ? "composite" : "call");
  ptrmap vm = {0};
  hlo_status st = NULL;
  for (uint32_t i = 0; i < body->num_args && !st; i++)
    if (!ptrmap_put(&vm, &body->args[i], call->operands[i])) st = oom(call);
  for (const hlo_op *o = body->first; o && !st; o = o->next) {
    if (o == ret) break;
    st = op_clone(in->m, o, NULL, call, &vm, &in->count, MAX_INLINED, NULL);
  }
  for (uint32_t i = 0; i < call->num_results && !st; i++) {
    hlo_value *v = ptrmap_get(&vm, ret->operands[i]);
    if (!ptrmap_put(&in->renames, &call->results[i], v ? v : ret->operands[i])) st = oom(call);
  }
  ptrmap_free(&vm);
  if (st) return status_note(st, "while inlining @%s", name);
  op_unlink(call);
  return NULL;
}

static hlo_status inline_block(inliner *in, hlo_block *b) {
  for (hlo_op *op = b->first; op;) {
    for (uint32_t k = 0; k < op->num_operands; k++) op->operands[k] = resolve(in, op->operands[k]);
    if (op->opcode == OP_FUNC_CALL || (in->composites && op->opcode == OP_COMPOSITE)) {
      hlo_op *prev = op->prev;
      HLO_TRY(inline_one(in, op));
      op = prev ? prev->next : b->first; /* walk the inlined ops too */
      continue;
    }
    for (uint32_t r = 0; r < op->num_regions; r++)
      HLO_TRY(inline_block(in, &op->regions[r].block));
    op = op->next;
  }
  return NULL;
}

/* ---------------------------------------------- recursion check */

/* The function a call (or, with `composites`, a composite) refers to. */
static hlo_func *callee_of(const hlo_module_ir *m, const hlo_op *op, bool composites) {
  const char *attr = op->opcode == OP_FUNC_CALL ? "callee"
                     : composites && op->opcode == OP_COMPOSITE ? "decomposition" : NULL;
  const hlo_attr *c = attr ? op_attr(op, attr) : NULL;
  if (!c || (c->kind != ATTR_SYMBOL && c->kind != ATTR_STRING)) return NULL;
  return module_find_func(m, c->u.str.s);
}

typedef struct graph_walk {
  const hlo_module_ir *m;
  bool composites;
  ptrmap state; /* hlo_func * -> (void *)1 while on the DFS path, 2 when done */
} graph_walk;

static hlo_status visit_func(graph_walk *g, hlo_func *f, int depth);

static hlo_status visit_calls(graph_walk *g, const hlo_block *b, int depth) {
  for (const hlo_op *op = b->first; op; op = op->next) {
    hlo_func *c = callee_of(g->m, op, g->composites);
    if (c) {
      uintptr_t s = (uintptr_t)ptrmap_get(&g->state, c);
      if (s == 1)
        return status_at(HLO_INVALID_ARGUMENT, &op->loc,
                         "inline: @%s calls itself (directly or through other functions); a "
                         "recursive call cannot be inlined",
                         c->name);
      if (s == 0) HLO_TRY(visit_func(g, c, depth + 1));
    }
    for (uint32_t r = 0; r < op->num_regions; r++)
      HLO_TRY(visit_calls(g, &op->regions[r].block, depth));
  }
  return NULL;
}

static hlo_status visit_func(graph_walk *g, hlo_func *f, int depth) {
  if (depth > 10000)
    return status_at(HLO_RESOURCE_EXHAUSTED, &f->loc, "inline: calls nest over 10000 deep");
  if (!ptrmap_put(&g->state, f, (void *)1)) return status_new(HLO_RESOURCE_EXHAUSTED, "out of memory");
  HLO_TRY(visit_calls(g, &f->body.block, depth));
  if (!ptrmap_put(&g->state, f, (void *)2)) return status_new(HLO_RESOURCE_EXHAUSTED, "out of memory");
  return NULL;
}

/* Fails, located at the call, when the call graph has a cycle. */
static hlo_status check_no_recursion(const hlo_module_ir *m, bool composites) {
  graph_walk g = {m, composites, {0}};
  hlo_status st = NULL;
  for (hlo_func *f = m->funcs; f && !st; f = f->next)
    if (!ptrmap_get(&g.state, f)) st = visit_func(&g, f, 0);
  ptrmap_free(&g.state);
  return st;
}

/* ------------------------------------------------------------ the pass */

hlo_status pass_inline(hlo_module_ir *m, const hlo_pass_options *o) {
  inliner in = {m, !(o && o->keep_composites), {0}, 0};
  /* a dead recursive helper is no reason to fail: drop the dead first */
  HLO_TRY(module_remove_dead_funcs(m, o ? o->entry : NULL, NULL));
  HLO_TRY(check_no_recursion(m, in.composites));
  hlo_status st = NULL;
  for (hlo_func *f = m->funcs; f && !st; f = f->next) {
    st = inline_block(&in, &f->body.block);
    if (st) st = status_note(st, "while inlining calls in @%s", f->name);
  }
  ptrmap_free(&in.renames);
  if (st) return st;
  return module_remove_dead_funcs(m, o ? o->entry : NULL, NULL);
}
