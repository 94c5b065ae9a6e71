/* while_loop_trip_count.c — XLA's WhileLoopTripCountAnnotator: a
 * stablehlo.while whose number of iterations is known when the program is
 * compiled gets the attribute `hlo.known_trip_count = N : i64`, so that a
 * runtime can run the body N times without evaluating the condition (on a
 * GPU: no download of the predicate, a host round trip, per iteration).
 *
 * The form recognised is the one JAX's fori_loop and scan print (XLA's
 * ComputeWhileLoopTripCount handles the same "induction variable" form):
 *   - carried value k is a scalar integer whose init operand is a
 *     stablehlo.constant c0;
 *   - the condition region holds only constants, one stablehlo.compare and
 *     the return, and returns `compare LT, %arg_k, N` (or `GT, N, %arg_k`,
 *     or LE / GE with N + 1), N a constant, SIGNED or UNSIGNED as the type;
 *   - the body returns `add %arg_k, s` (or `add s, %arg_k`) at position k,
 *     s a constant >= 1.
 * Then the loop runs max(0, ceil((N - c0) / s)) times, provided the
 * counter never wraps (c0 + trips * s fits the type; else no attribute).
 * The condition has no effect (only constants and a compare), so skipping
 * it changes nothing but time. Nested loops are annotated too. */
#include <string.h>
#include "passes/pass_util.h"
#include "passes/passes.h"

/* The value of a scalar integer constant v (a splat of one element) in *out;
 * false for anything else. */
static bool int_constant(const hlo_value *v, int64_t *out, bool *is_unsigned) {
  const hlo_type *t = v->type;
  if (!t || t->kind != TYPE_TENSOR || type_num_elements(t) != 1) return false;
  const uint8_t *b = value_splat_bytes(v);
  if (!b) return false;
  int8_t i8;
  int16_t i16;
  int32_t i32;
  uint16_t u16;
  uint32_t u32;
  uint64_t u64;
  *is_unsigned = false;
  switch (t->dtype) {
  case HLO_I8: memcpy(&i8, b, 1); *out = i8; return true;
  case HLO_I16: memcpy(&i16, b, 2); *out = i16; return true;
  case HLO_I32: memcpy(&i32, b, 4); *out = i32; return true;
  case HLO_I64: memcpy(out, b, 8); return true;
  case HLO_UI8: *out = b[0]; break;
  case HLO_UI16: memcpy(&u16, b, 2); *out = u16; break;
  case HLO_UI32: memcpy(&u32, b, 4); *out = u32; break;
  case HLO_UI64:
    memcpy(&u64, b, 8);
    if (u64 > (uint64_t)INT64_MAX) return false;
    *out = (int64_t)u64;
    break;
  default: return false;
  }
  *is_unsigned = true;
  return true;
}

/* The largest value of the integer type dt (I8..I64, UI8..UI64 up to
 * INT64_MAX). */
static int64_t type_max(hlo_dtype dt) {
  switch (dt) {
  case HLO_I8: return INT8_MAX;
  case HLO_I16: return INT16_MAX;
  case HLO_I32: return INT32_MAX;
  case HLO_UI8: return UINT8_MAX;
  case HLO_UI16: return UINT16_MAX;
  case HLO_UI32: return UINT32_MAX;
  default: return INT64_MAX;
  }
}

static const char *direction_of(const hlo_op *cmp) {
  const hlo_attr *a = op_attr(cmp, "comparison_direction");
  return a && a->kind == ATTR_ENUM ? a->u.en.value : NULL;
}

/* Whether the compare's type matches the counter's signedness (no
 * compare_type attribute: the operands' own). */
static bool compare_type_ok(const hlo_op *cmp, bool is_unsigned) {
  const hlo_attr *a = op_attr(cmp, "compare_type");
  if (!a) return true;
  if (a->kind != ATTR_ENUM) return false;
  return !strcmp(a->u.en.value, is_unsigned ? "UNSIGNED" : "SIGNED") ||
         !strcmp(a->u.en.value, "NOTYPE");
}

/* The exclusive bound N of `counter < N` that the condition block tests,
 * for carried value k; false when the block is not of the form above. */
static bool cond_bound(const hlo_block *cb, uint32_t k, bool is_unsigned, int64_t *bound) {
  const hlo_op *ret = cb->last, *cmp = NULL;
  if (!ret || ret->num_operands != 1) return false;
  for (const hlo_op *op = cb->first; op && op != ret; op = op->next) {
    if (op->opcode == OP_CONSTANT) continue;
    if (op->opcode != OP_COMPARE || cmp) return false;
    cmp = op;
  }
  if (!cmp || ret->operands[0] != &cmp->results[0] || cmp->num_operands != 2 ||
      !compare_type_ok(cmp, is_unsigned))
    return false;
  const char *dir = direction_of(cmp);
  if (!dir) return false;
  const hlo_value *arg = &cb->args[k];
  bool left = cmp->operands[0] == arg, right = cmp->operands[1] == arg;
  if (left == right) return false;
  int64_t n;
  bool u;
  if (!int_constant(cmp->operands[left ? 1 : 0], &n, &u) || u != is_unsigned) return false;
  /* counter < n, counter <= n, n > counter, n >= counter */
  if ((left && !strcmp(dir, "LT")) || (right && !strcmp(dir, "GT"))) *bound = n;
  else if ((left && !strcmp(dir, "LE")) || (right && !strcmp(dir, "GE"))) {
    if (n == INT64_MAX) return false;
    *bound = n + 1;
  } else
    return false;
  return true;
}

/* The step s of `add %arg_k, s` returned at position k of the body. */
static bool body_step(const hlo_block *bb, uint32_t k, bool is_unsigned, int64_t *step) {
  const hlo_op *ret = bb->last;
  if (!ret || ret->num_operands <= k) return false;
  const hlo_value *r = ret->operands[k];
  const hlo_op *add = r->def;
  if (!add || add->opcode != OP_ADD || add->num_operands != 2) return false;
  const hlo_value *arg = &bb->args[k];
  bool left = add->operands[0] == arg, right = add->operands[1] == arg;
  if (left == right) return false;
  bool u;
  return int_constant(add->operands[left ? 1 : 0], step, &u) && u == is_unsigned && *step >= 1;
}

/* The trip count of while `op`, or -1 when it is not known. */
static int64_t trip_count(const hlo_op *op) {
  if (op->num_regions != 2) return -1;
  const hlo_block *cb = &op->regions[0].block, *bb = &op->regions[1].block;
  for (uint32_t k = 0; k < op->num_operands; k++) {
    if (k >= cb->num_args || k >= bb->num_args) return -1;
    int64_t c0, bound, step;
    bool is_unsigned;
    if (!int_constant(op->operands[k], &c0, &is_unsigned)) continue;
    if (!cond_bound(cb, k, is_unsigned, &bound) || !body_step(bb, k, is_unsigned, &step))
      continue;
    if (c0 >= bound) return 0;
    /* (bound - c0) may exceed INT64_MAX only for i64 extremes: refuse */
    if (c0 < 0 && bound > INT64_MAX + c0) return -1;
    int64_t span = bound - c0, trips = span / step + (span % step != 0);
    /* the counter's value after the last iteration, c0 + trips * step,
     * must fit the type (else it wraps and the loop goes on): the last
     * value tested true, c0 + (trips - 1) * step < bound, at most
     * max - step */
    int64_t max = type_max(op->operands[k]->type->dtype);
    if (step > max || c0 + (trips - 1) * step > max - step) return -1;
    return trips;
  }
  return -1;
}

static hlo_status annotate_block(hlo_module_ir *m, hlo_block *b) {
  for (hlo_op *op = b->first; op; op = op->next) {
    for (uint32_t r = 0; r < op->num_regions; r++) HLO_TRY(annotate_block(m, &op->regions[r].block));
    if (op->opcode != OP_WHILE) continue;
    int64_t n = trip_count(op);
    if (n < 0) continue;
    hlo_attr *a = attr_int(&m->arena, n, HLO_I64);
    if (!a) return status_new(HLO_RESOURCE_EXHAUSTED, "out of memory");
    HLO_TRY(op_set_attr(m, op, WHILE_KNOWN_TRIP_COUNT, a));
  }
  return NULL;
}

hlo_status pass_while_loop_trip_count(hlo_module_ir *m, const hlo_pass_options *o) {
  (void)o;
  for (hlo_func *f = m->funcs; f; f = f->next) HLO_TRY(annotate_block(m, &f->body.block));
  return NULL;
}
