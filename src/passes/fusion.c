/* fusion.c — the fusion pass: groups producer→consumer chains of cheap ops
 * into hlo.fusion ops (ops.def), each of which a backend computes as one
 * kernel (src/codegen/lower_fusion.c), so that intermediate tensors are
 * never written to memory.
 *
 * THE FUSION KINDS (XLA's HloInstruction::FusionKind):
 *   "loop"   kLoop: the root is an elementwise or layout op; every op of the
 *            body is evaluated at the points of the root's index space
 *            (layout ops only re-index their operand).
 *   "input"  kInput: the root is a reduce (one operand, over its trailing
 *            dims, a constant init value, a one-op combiner: add, multiply,
 *            maximum, minimum, and, or) and the body holds the elementwise
 *            producers of its operand; the index space is the operand's.
 *   "output" kOutput: a dot or convolution with an elementwise epilogue.
 *            Reserved: not made yet.
 * A fusion's body is isolated from above: what it reads from outside is an
 * operand. Multi-output (sibling) fusion is left for later: each fusion has
 * the one result of its root.
 *
 * THE RULES (ideas from XLA's instruction_fusion.cc and gpu_fusible.cc; our
 * own formulation). Which ops may be fused at all is one table, k_fusible
 * below, consulted through fusion_op_fusible (passes.h) so that the code
 * generator can use the same facts; it lists exactly what lower_fusion can
 * lower (op, element-type classes), with each op's role:
 *   CHEAP      elementwise ops that cost about a load (add, select, compare,
 *              convert, ...) and iota;
 *   EXPENSIVE  transcendentals, divide, remainder, power, atan2;
 *   LAYOUT     broadcast_in_dim, reshape, transpose, slice, concatenate;
 *   CONSTANT   stablehlo.constant: never a member; a splat (or one-element)
 *              constant is copied freely into every fusion that reads it,
 *              any other constant is an operand of the fusion;
 *   REDUCE     a reduce of the form above: only ever a root.
 * Groups are formed per block, walking its ops from last to first: each
 * fusible op not yet in a group (other than a constant) starts a group as
 * its root, and its producers join it, scanning backwards, when
 *   1. the producer is CHEAP, EXPENSIVE or LAYOUT (a reduce is only a root);
 *   2. every consumer of the producer is already in the group (uses inside
 *      nested regions count as uses by the enclosing op) — so nothing is
 *      duplicated and the groups stay acyclic (no path leaves a group and
 *      comes back);
 *   3. an EXPENSIVE producer has at least as many elements as the group's
 *      index space (a broadcast after exp would recompute the exp for every
 *      broadcast element);
 *   4. a LAYOUT producer or an iota is not read through a reshape that
 *      merges dims (lower_fusion cannot compose layout ops under a reshape
 *      whose index map needs div/mod; splits and unit dims are affine).
 * The ops of while, if and case bodies (and sdy computations) are fused
 * too, per block, recursively. Scanning backwards, a producer is decided
 * after all of its consumers, so rule 2 sees their final groups. Every
 * fusible op ends in some fusion (a lone one makes a fusion of one op), so a
 * backend sees fusions and the ops it must run itself (dot, convolution,
 * gather, other reduces, ...). Softmax gives four fusions: its exp feeds
 * both the sum and the divide and, being expensive, is not duplicated into
 * the two (XLA's CPU rules give the same); three needs multi-output fusion.
 * Rule 3 is conservative for slice and concatenate, which do not recompute
 * (a refinement for later). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "codegen/kernel.h"
#include "ir/element.h"
#include "passes/pass_util.h"
#include "passes/passes.h"
#include "passes/use_index.h"
#include "support/arena.h"

/* ------------------------------------------------------- the fusible table */

enum { CL_F = 1, CL_I = 2, CL_B = 4, CL_ANY = 7 };

static const struct fusible_row {
  hlo_opcode op;
  uint8_t role;    /* fusion_role */
  uint8_t classes; /* element-type classes of the (first data) operand */
} k_fusible[] = {
    {OP_ADD, FUSION_CHEAP, CL_ANY},          {OP_SUBTRACT, FUSION_CHEAP, CL_ANY},
    {OP_MULTIPLY, FUSION_CHEAP, CL_ANY},     {OP_MAXIMUM, FUSION_CHEAP, CL_ANY},
    {OP_MINIMUM, FUSION_CHEAP, CL_ANY},      {OP_SELECT, FUSION_CHEAP, CL_ANY},
    {OP_COMPARE, FUSION_CHEAP, CL_ANY},      {OP_CONVERT, FUSION_CHEAP, CL_ANY},
    {OP_CLAMP, FUSION_CHEAP, CL_ANY},        {OP_AND, FUSION_CHEAP, CL_I | CL_B},
    {OP_OR, FUSION_CHEAP, CL_I | CL_B},      {OP_XOR, FUSION_CHEAP, CL_I | CL_B},
    {OP_NOT, FUSION_CHEAP, CL_I | CL_B},     {OP_NEGATE, FUSION_CHEAP, CL_F | CL_I},
    {OP_ABS, FUSION_CHEAP, CL_F | CL_I},     {OP_SIGN, FUSION_CHEAP, CL_F | CL_I},
    {OP_SHIFT_LEFT, FUSION_CHEAP, CL_I},     {OP_SHIFT_RIGHT_LOGICAL, FUSION_CHEAP, CL_I},
    {OP_SHIFT_RIGHT_ARITHMETIC, FUSION_CHEAP, CL_I},
    {OP_FLOOR, FUSION_CHEAP, CL_F},          {OP_CEIL, FUSION_CHEAP, CL_F},
    {OP_ROUND_NEAREST_AFZ, FUSION_CHEAP, CL_F}, {OP_ROUND_NEAREST_EVEN, FUSION_CHEAP, CL_F},
    {OP_IS_FINITE, FUSION_CHEAP, CL_F},      {OP_IOTA, FUSION_CHEAP, CL_ANY},
    {OP_DIVIDE, FUSION_EXPENSIVE, CL_F | CL_I}, {OP_REMAINDER, FUSION_EXPENSIVE, CL_F | CL_I},
    {OP_EXPONENTIAL, FUSION_EXPENSIVE, CL_F}, {OP_EXPONENTIAL_MINUS_ONE, FUSION_EXPENSIVE, CL_F},
    {OP_LOG, FUSION_EXPENSIVE, CL_F},        {OP_LOG_PLUS_ONE, FUSION_EXPENSIVE, CL_F},
    {OP_LOGISTIC, FUSION_EXPENSIVE, CL_F},   {OP_TANH, FUSION_EXPENSIVE, CL_F},
    {OP_SINE, FUSION_EXPENSIVE, CL_F},       {OP_COSINE, FUSION_EXPENSIVE, CL_F},
    {OP_TAN, FUSION_EXPENSIVE, CL_F},        {OP_SQRT, FUSION_EXPENSIVE, CL_F},
    {OP_RSQRT, FUSION_EXPENSIVE, CL_F},      {OP_CBRT, FUSION_EXPENSIVE, CL_F},
    {OP_POWER, FUSION_EXPENSIVE, CL_F},      {OP_ATAN2, FUSION_EXPENSIVE, CL_F},
    {OP_BROADCAST_IN_DIM, FUSION_LAYOUT, CL_ANY}, {OP_RESHAPE, FUSION_LAYOUT, CL_ANY},
    {OP_TRANSPOSE, FUSION_LAYOUT, CL_ANY},   {OP_SLICE, FUSION_LAYOUT, CL_ANY},
    {OP_CONCATENATE, FUSION_LAYOUT, CL_ANY}, {OP_CONSTANT, FUSION_CONSTANT, CL_ANY},
    {OP_REDUCE, FUSION_REDUCE, CL_ANY},
};

/* A static, non-quantized tensor type lower_fusion can hold. */
static bool kernel_type(const hlo_type *t) {
  return t && t->kind == TYPE_TENSOR && !t->quant && type_is_static(t) &&
         t->rank <= KERNEL_MAX_RANK && kernel_dtype_supported(t->dtype);
}

static uint8_t dtype_classes(hlo_dtype dt) {
  switch (dtype_class(dt)) {
  case HLO_CLASS_FLOAT: return CL_F;
  case HLO_CLASS_SINT: case HLO_CLASS_UINT: return CL_I;
  case HLO_CLASS_BOOL: return CL_B;
  default: return 0;
  }
}

/* The combiner of a reduce is one op of these on its two arguments. */
static bool simple_combiner(const hlo_op *red) {
  if (red->num_regions != 1) return false;
  const hlo_block *b = &red->regions[0].block;
  const hlo_op *op = b->first;
  if (b->num_args != 2 || !op || !op->next || op->next->opcode != OP_RETURN) return false;
  const hlo_op *ret = op->next;
  if (ret->num_operands != 1 || ret->operands[0] != &op->results[0] || op->num_operands != 2)
    return false;
  if (op->opcode != OP_ADD && op->opcode != OP_MULTIPLY && op->opcode != OP_MAXIMUM &&
      op->opcode != OP_MINIMUM && op->opcode != OP_AND && op->opcode != OP_OR)
    return false;
  bool a0 = op->operands[0] == &b->args[0] && op->operands[1] == &b->args[1];
  bool a1 = op->operands[0] == &b->args[1] && op->operands[1] == &b->args[0];
  return (a0 || a1) && (dtype_classes(op->results[0].type->dtype) &
                        (op->opcode == OP_AND || op->opcode == OP_OR ? CL_I | CL_B : CL_ANY));
}

/* A reduce of one operand over its trailing dims (in order), with a
 * splat-constant init value and a simple combiner. */
static bool fusible_reduce(const hlo_op *op) {
  if (op->num_operands != 2 || op->num_results != 1 || !simple_combiner(op)) return false;
  if (!value_splat_bytes(op->operands[1])) return false;
  const hlo_attr *d = op_attr(op, "dimensions");
  const hlo_type *t = op->operands[0]->type;
  if (!d || d->kind != ATTR_DENSE_ARRAY || !d->u.darr.ints || !d->u.darr.n) return false;
  uint32_t n = d->u.darr.n;
  if (n > t->rank) return false;
  for (uint32_t i = 0; i < n; i++)
    if (d->u.darr.ints[i] != (int64_t)(t->rank - n + i)) return false;
  return true;
}

fusion_role fusion_op_fusible(const hlo_op *op) {
  const struct fusible_row *row = NULL;
  for (size_t i = 0; i < sizeof k_fusible / sizeof k_fusible[0]; i++)
    if (k_fusible[i].op == op->opcode) row = &k_fusible[i];
  if (!row || op->num_results != 1 || !kernel_type(op->results[0].type)) return FUSION_NO;
  for (uint32_t i = 0; i < op->num_operands; i++)
    if (!kernel_type(op->operands[i]->type)) return FUSION_NO;
  /* the operand whose class selects the kernel op (select: its on_true) */
  const hlo_type *ct = op->num_operands
                           ? op->operands[op->opcode == OP_SELECT && op->num_operands > 1]->type
                           : op->results[0].type;
  if (!(dtype_classes(ct->dtype) & row->classes)) return FUSION_NO;
  switch (op->opcode) {
  case OP_COMPARE: {
    const hlo_attr *t = op_attr(op, "compare_type");
    if (t && t->kind == ATTR_ENUM && t->u.en.value && !strcmp(t->u.en.value, "TOTALORDER"))
      return FUSION_NO;
    break;
  }
  case OP_CONSTANT: {
    const hlo_attr *v = op_attr(op, "value");
    if (!v || v->kind != ATTR_DENSE || v->u.dense.resource) return FUSION_NO;
    break;
  }
  case OP_REDUCE:
    if (!fusible_reduce(op)) return FUSION_NO;
    break;
  default:
    break;
  }
  return (fusion_role)row->role;
}

/* ---------------------------------------------------------- grouping */

typedef struct block_ctx {
  hlo_module_ir *m;
  use_index *ui;
  hlo_block *b;
  hlo_op **ops;        /* the block's ops in order (terminator included) */
  uint32_t n;
  ptrmap index;        /* op -> its index + 1 */
  uint8_t *role;       /* fusion_role per op */
  int32_t *group;      /* group per op, -1: none */
  int32_t *cand;       /* the group whose candidate the op is, -1: none */
  uint8_t *flat;       /* candidate read through a reshape that merges dims */
  uint32_t *roots;     /* group -> root op index */
  uint32_t num_groups;
  uint32_t *counter;   /* fusions named so far in the module: the block's are
                          named fusion.(*counter + K) in program order */
} block_ctx;

static hlo_status oom(void) { return status_new(HLO_RESOURCE_EXHAUSTED, "out of memory"); }

/* The index of `op` in the block, or -1 when it is not one of its ops. */
static int64_t op_index(const block_ctx *c, const hlo_op *op) {
  if (!op || op->parent != c->b) return -1;
  return (int64_t)(uintptr_t)ptrmap_get(&c->index, op) - 1;
}

/* The op of c->b that is `op` or encloses it; NULL when none. */
static const hlo_op *ancestor_in_block(const block_ctx *c, const hlo_op *op) {
  for (int depth = 0; op && depth < 100000; depth++) {
    if (op->parent == c->b) return op;
    const hlo_region *r = op->parent ? op->parent->parent : NULL;
    op = r ? r->parent : NULL;
  }
  return NULL;
}

/* Rule 2: every use of the results of ops[j] is by an op of group g. */
static bool consumers_in(const block_ctx *c, uint32_t j, int32_t g) {
  const hlo_op *op = c->ops[j];
  for (uint32_t r = 0; r < op->num_results; r++) {
    uint32_t n = 0;
    const use_ref *u = use_index_uses(c->ui, &op->results[r], &n);
    for (uint32_t k = 0; k < n; k++) {
      int64_t a = op_index(c, ancestor_in_block(c, u[k].user));
      if (a < 0 || c->group[a] != g) return false;
    }
  }
  return true;
}

/* A reshape whose operand index is an affine function of its result index:
 * ignoring dims of size 1, each operand dim is split into a run of result
 * dims with the same product (unit dims added or removed, splits; a merge
 * of dims needs div/mod). */
static bool affine_reshape(const hlo_op *op) {
  const hlo_type *a = op->operands[0]->type, *b = op->results[0].type;
  uint32_t j = 0;
  for (uint32_t i = 0; i < a->rank; i++) {
    if (a->dims[i] == 1) continue;
    int64_t p = 1;
    while (p < a->dims[i] && j < b->rank) p *= b->dims[j++];
    if (p != a->dims[i]) return false;
  }
  for (; j < b->rank; j++)
    if (b->dims[j] != 1) return false;
  return true;
}

/* Marks the producers in this block of the operands of member ops[j] as
 * candidates of group g; *pending counts the candidates not yet scanned. */
static void add_candidates(block_ctx *c, uint32_t j, int32_t g, uint32_t *pending) {
  const hlo_op *op = c->ops[j];
  bool through_flat = c->flat[j] || (op->opcode == OP_RESHAPE && !affine_reshape(op));
  uint32_t nops = op->opcode == OP_REDUCE ? 1 : op->num_operands; /* the init is a constant */
  for (uint32_t i = 0; i < nops; i++) {
    int64_t k = op_index(c, op->operands[i]->def);
    if (k < 0) continue;
    if (c->cand[k] != g) {
      c->cand[k] = g;
      c->flat[k] = 0;
      ++*pending;
    }
    c->flat[k] |= through_flat;
  }
}

/* Rules 1-4 for candidate ops[j] of group g, whose index space has `space`
 * elements. */
static bool may_join(const block_ctx *c, uint32_t j, int32_t g, int64_t space) {
  const hlo_op *op = c->ops[j];
  fusion_role r = (fusion_role)c->role[j];
  if (c->group[j] >= 0 || (r != FUSION_CHEAP && r != FUSION_EXPENSIVE && r != FUSION_LAYOUT))
    return false;
  if (r == FUSION_EXPENSIVE && type_num_elements(op->results[0].type) < space) return false;
  if (c->flat[j] && (r == FUSION_LAYOUT || op->opcode == OP_IOTA)) return false;
  return consumers_in(c, j, g);
}

/* The most ops one fusion holds; a longer chain becomes several fusions. */
#define FUSION_MAX_OPS 128

/* Forms the groups of the block (see the header). */
static hlo_status form_groups(block_ctx *c) {
  for (uint32_t i = c->n; i-- > 0;) {
    fusion_role r = (fusion_role)c->role[i];
    if (c->group[i] >= 0 || r == FUSION_NO || r == FUSION_CONSTANT) continue;
    int32_t g = (int32_t)c->num_groups++;
    c->roots[g] = i;
    c->group[i] = g;
    const hlo_op *root = c->ops[i];
    int64_t space = type_num_elements(r == FUSION_REDUCE ? root->operands[0]->type
                                                         : root->results[0].type);
    uint32_t pending = 0, size = 1;
    add_candidates(c, i, g, &pending);
    for (uint32_t j = i; pending && j-- > 0;) {
      if (c->cand[j] != g) continue;
      pending--;
      /* a bounded group: the lowering recurses along the group's chains
       * (a 4000-op elementwise chain overflowed the stack) */
      if (size >= FUSION_MAX_OPS || !may_join(c, j, g, space)) continue;
      c->group[j] = g;
      size++;
      add_candidates(c, j, g, &pending);
    }
  }
  return NULL;
}

/* ---------------------------------------------------------- rewriting */

/* A constant copied into every fusion that reads it. */
static bool duplicable(const hlo_value *v) {
  return v->def && v->def->opcode == OP_CONSTANT && value_splat_bytes(v) &&
         fusion_op_fusible(v->def) == FUSION_CONSTANT;
}

/* Replaces the ops of group g by one hlo.fusion before its root. */
static hlo_status materialize(block_ctx *c, int32_t g) {
  uint32_t root_i = c->roots[g];
  hlo_op *root = c->ops[root_i];
  uint32_t first = root_i;
  for (uint32_t j = 0; j <= root_i; j++)
    if (c->group[j] == g) {
      first = j;
      break;
    }
  /* the inputs: values read by members, made outside the group */
  hlo_value **inputs = NULL;
  hlo_type **in_types = NULL;
  uint32_t num_in = 0, cap_in = 0;
  ptrmap seen = {0}, vm = {0};
  hlo_status st = NULL;
  for (uint32_t j = first; j <= root_i && !st; j++) {
    if (c->group[j] != g) continue;
    const hlo_op *op = c->ops[j];
    for (uint32_t i = 0; i < op->num_operands && !st; i++) {
      hlo_value *v = op->operands[i];
      int64_t k = op_index(c, v->def);
      if ((k >= 0 && c->group[k] == g) || duplicable(v) || ptrmap_has(&seen, v)) continue;
      if (num_in == cap_in) {
        cap_in = cap_in ? 2 * cap_in : 8;
        hlo_value **ni = xrealloc(inputs, cap_in * sizeof *ni);
        if (ni) inputs = ni;
        hlo_type **nt = xrealloc(in_types, cap_in * sizeof *nt);
        if (nt) in_types = nt;
        if (!ni || !nt) st = oom();
      }
      if (!st && !ptrmap_put(&seen, v, v)) st = oom();
      if (!st) {
        in_types[num_in] = v->type;
        inputs[num_in++] = v;
      }
    }
  }
  hlo_op *fop = NULL;
  if (!st) {
    fop = op_create(c->m, OP_FUSION, inputs, num_in, &root->results[0].type, 1, 1, root->loc);
    if (!fop) st = oom();
    /* the fusion's result keeps the root's SSA name (interpreter.print
     * and probes name values by it) */
    else fop->results[0].name = root->results[0].name;
  }
  hlo_block *body = fop ? &fop->regions[0].block : NULL;
  if (!st) st = block_set_args(c->m, body, in_types, num_in);
  for (uint32_t k = 0; k < num_in && !st; k++)
    if (!ptrmap_put(&vm, inputs[k], &body->args[k])) st = oom();
  uint64_t count = 0;
  for (uint32_t j = first; j <= root_i && !st; j++) {
    if (c->group[j] != g) continue;
    const hlo_op *op = c->ops[j];
    for (uint32_t i = 0; i < op->num_operands && !st; i++)
      if (duplicable(op->operands[i]) && !ptrmap_has(&vm, op->operands[i]))
        st = op_clone(c->m, op->operands[i]->def, body, NULL, &vm, &count, UINT64_MAX, NULL);
    if (!st) st = op_clone(c->m, op, body, NULL, &vm, &count, UINT64_MAX, NULL);
  }
  if (!st) {
    hlo_value *res = ptrmap_get(&vm, &root->results[0]);
    hlo_op *ret = op_create(c->m, OP_RETURN, &res, 1, NULL, 0, 0, root->loc);
    if (!ret) st = oom();
    else block_append(body, ret);
  }
  if (!st) {
    const char *kind = c->role[root_i] == FUSION_REDUCE ? "input" : "loop";
    char name[32];
    snprintf(name, sizeof name, "fusion.%u", *c->counter + c->num_groups - 1 - (uint32_t)g);
    hlo_attr *ka = attr_string(&c->m->arena, kind, strlen(kind));
    hlo_attr *na = attr_string(&c->m->arena, name, strlen(name));
    if (!ka || !na) st = oom();
    if (!st) st = op_set_attr(c->m, fop, "kind", ka);
    if (!st) st = op_set_attr(c->m, fop, "name", na);
  }
  if (!st) {
    op_insert_before(root, fop);
    st = use_index_add_op(c->ui, fop);
  }
  if (!st) st = use_index_replace_all(c->ui, &root->results[0], &fop->results[0]);
  /* the members, consumers first (each is unused when it goes) */
  for (uint32_t j = root_i + 1; j-- > first && !st;)
    if (c->group[j] == g) use_index_erase(c->ui, c->ops[j]);
  free(inputs);
  free(in_types);
  ptrmap_free(&seen);
  ptrmap_free(&vm);
  return st;
}

static hlo_status fuse_block(hlo_module_ir *m, use_index *ui, hlo_block *b, uint32_t *counter,
                             int depth);

/* The regions whose ops are fused too: control flow and sdy computations. */
static bool fuse_inside(const hlo_op *op) {
  switch (op->opcode) {
  case OP_WHILE: case OP_IF: case OP_CASE:
  case OP_SDY_NAMED_COMPUTATION: case OP_SDY_MANUAL_COMPUTATION:
    return true;
  default:
    return false;
  }
}

static hlo_status fuse_block(hlo_module_ir *m, use_index *ui, hlo_block *b, uint32_t *counter,
                             int depth) {
  if (depth > 256) return NULL; /* absurd nesting: leave it unfused */
  block_ctx c = {.m = m, .ui = ui, .b = b, .counter = counter};
  for (hlo_op *op = b->first; op; op = op->next) {
    if (fuse_inside(op))
      for (uint32_t r = 0; r < op->num_regions; r++)
        HLO_TRY(fuse_block(m, ui, &op->regions[r].block, counter, depth + 1));
    c.n++;
  }
  if (!c.n) return NULL;
  c.ops = xcalloc(c.n, sizeof *c.ops);
  c.role = xcalloc(c.n, 1);
  c.group = xmalloc(c.n * sizeof *c.group);
  c.cand = xmalloc(c.n * sizeof *c.cand);
  c.flat = xcalloc(c.n, 1);
  c.roots = xmalloc(c.n * sizeof *c.roots);
  hlo_status st = NULL;
  if (!c.ops || !c.role || !c.group || !c.cand || !c.flat || !c.roots) st = oom();
  uint32_t i = 0;
  for (hlo_op *op = b->first; op && !st; op = op->next, i++) {
    c.ops[i] = op;
    c.role[i] = (uint8_t)fusion_op_fusible(op);
    c.group[i] = c.cand[i] = -1;
    if (!ptrmap_put(&c.index, op, (void *)(uintptr_t)(i + 1))) st = oom();
  }
  if (!st) st = form_groups(&c);
  /* roots from the last to the first: later fusions read earlier roots,
   * which are replaced through the use index */
  for (uint32_t g = 0; g < c.num_groups && !st; g++) st = materialize(&c, (int32_t)g);
  /* splat constants copied into fusions and read by nothing else now */
  for (uint32_t j = 0; j < c.n && !st; j++)
    if (c.role[j] == FUSION_CONSTANT && c.ops[j]->parent == b &&
        !use_index_op_used(ui, c.ops[j]) && duplicable(&c.ops[j]->results[0]))
      use_index_erase(ui, c.ops[j]);
  *counter += c.num_groups;
  free(c.ops);
  free(c.role);
  free(c.group);
  free(c.cand);
  free(c.flat);
  free(c.roots);
  ptrmap_free(&c.index);
  return st;
}

hlo_status pass_fusion(hlo_module_ir *m, const hlo_pass_options *o) {
  (void)o;
  uint32_t counter = 0;
  for (hlo_func *f = m->funcs; f; f = f->next) {
    use_index *ui;
    HLO_TRY(use_index_build(f, &ui));
    hlo_status st = fuse_block(m, ui, &f->body.block, &counter, 0);
    use_index_free(ui);
    HLO_TRY(st);
  }
  return NULL;
}
