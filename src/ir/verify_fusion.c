/* verify_fusion.c — the checks of hlo.fusion (its definition is in ops.def;
 * the fusion pass, src/passes/fusion.c, makes it):
 *   ATTR  `kind` is the string "loop", "input", "row" or "output"; `name`, when
 *         present, is a string;
 *   SIG   one region whose block takes one argument per operand, each of
 *         the operand's type; at least one result;
 *   C1    the body ends with stablehlo.return of one value per result, each
 *         of the result's type;
 *   C2    the body is isolated from above: every operand of every op in it
 *         (nested regions included) is defined inside the body;
 *   C3    an "input" fusion returns the result of a stablehlo.reduce made in
 *         its body. */
#include <string.h>
#include "ir/verify.h"

/* `b` is `anc` or nested in it. */
static bool inside(const hlo_block *anc, const hlo_block *b) {
  for (int depth = 0; b && depth < 100000; depth++) {
    if (b == anc) return true;
    const hlo_op *po = b->parent ? b->parent->parent : NULL;
    b = po ? po->parent : NULL;
  }
  return false;
}

/* C2 over the ops of `b` (and their regions), against the body `body`. */
static hlo_status check_isolated(const hlo_op *fus, const hlo_block *body, const hlo_block *b,
                                 int depth) {
  if (depth > 64) return verr(fus, "C2", "regions nested too deeply");
  for (const hlo_op *op = b->first; op; op = op->next) {
    for (uint32_t i = 0; i < op->num_operands; i++) {
      const hlo_value *v = op->operands[i];
      const hlo_block *db = v->def ? v->def->parent : v->block;
      if (!inside(body, db))
        return verr(fus, "C2", "%s in the body reads operand #%u from outside the fusion (the "
                    "body must be isolated from above)", vop_name(op), i);
    }
    for (uint32_t r = 0; r < op->num_regions; r++)
      HLO_TRY(check_isolated(fus, body, &op->regions[r].block, depth + 1));
  }
  return NULL;
}

hlo_status verify_fusion(vctx *c, const hlo_op *op) {
  const hlo_attr *k = op_attr(op, "kind");
  if (!k || k->kind != ATTR_STRING)
    return verr(op, "ATTR", "requires a string attribute 'kind' (\"loop\", \"input\" or \"output\")");
  bool is_input = !strcmp(k->u.str.s, "input");
  if (strcmp(k->u.str.s, "loop") && !is_input && strcmp(k->u.str.s, "output") &&
      strcmp(k->u.str.s, "row")) /* row: reductions and their consumers (fusion.c) */
    return verr(op, "ATTR", "kind \"%s\" is not \"loop\", \"input\", \"row\" or \"output\"",
                k->u.str.s);
  const hlo_attr *nm = op_attr(op, "name");
  if (nm && nm->kind != ATTR_STRING) return verr(op, "ATTR", "'name' must be a string");
  if (op->num_regions != 1) return verr(op, "SIG", "expects one region, has %u", op->num_regions);
  if (op->num_results == 0) return verr(op, "SIG", "expects at least one result");
  const hlo_block *b = &op->regions[0].block;
  if (b->num_args != op->num_operands)
    return verr(op, "SIG", "the body takes %u argument(s) for %u operand(s)", b->num_args,
                op->num_operands);
  for (uint32_t i = 0; i < b->num_args; i++)
    if (!vtype_eq(b->args[i].type, op->operands[i]->type))
      return verr(op, "SIG", "body argument #%u has type %s, operand #%u %s", i,
                  vtype_str(c, b->args[i].type), i, vtype_str(c, op->operands[i]->type));
  const hlo_op *ret = b->last;
  if (!ret || ret->opcode != OP_RETURN)
    return verr(op, "C1", "the body must end with stablehlo.return");
  if (ret->num_operands != op->num_results)
    return verr(op, "C1", "the body returns %u value(s) for %u result(s)", ret->num_operands,
                op->num_results);
  for (uint32_t i = 0; i < op->num_results; i++)
    if (!vtype_eq(ret->operands[i]->type, op->results[i].type))
      return verr(op, "C1", "the body returns %s as result #%u of type %s",
                  vtype_str(c, ret->operands[i]->type), i, vtype_str(c, op->results[i].type));
  HLO_TRY(check_isolated(op, b, b, 0));
  if (is_input) {
    const hlo_op *d = ret->operands[0]->def;
    if (!d || d->opcode != OP_REDUCE || d->parent != b)
      return verr(op, "C3", "an \"input\" fusion must return the result of a stablehlo.reduce "
                  "of its body");
  }
  return NULL;
}
