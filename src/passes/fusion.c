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
 *   "row"    a row fusion (rule 5 below): reductions over the trailing dims
 *            of one index space, the ops that feed them and the ops that
 *            use their results along the same rows (softmax, LayerNorm,
 *            RMSNorm: one kernel that runs stage after stage over each
 *            row, codegen/kernel.h, Stages); it may have several results
 *            (multi-output: a member read by ops after the fusion).
 *   "output" kOutput: a dot or convolution with an elementwise epilogue.
 *            Reserved: not made yet.
 * A fusion's body is isolated from above: what it reads from outside is an
 * operand. Loop and input fusions have the one result of their root.
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
 *      "Read through" is per group: a producer rejected by one group for
 *      it starts its own group unmarked.
 *   7. a CHEAP producer of two or more operands, read through a broadcast
 *      that adds elements, stays out when joining would cut its cone in
 *      two or more places: its cone is it and the fusible ops all of whose
 *      uses are in the cone (what only it reads); were it to join, the
 *      group would take the cone ops reached from it through ops it may
 *      take (CHEAP, LAYOUT, EXPENSIVE ones passing rule 3) and read each
 *      other cone op they use (a reduce, an EXPENSIVE op rule 3 rejects)
 *      as a result of another fusion made for it alone. Left out, it
 *      starts its own group with them (joined by row merging when one is
 *      a reduce), which has the one result. moe_layer on the CUDA
 *      pipeline: the GELU's last multiply, x * (0.5 * (1 + tanh(..))),
 *      read by a reduce through a broadcast (a strength-reduced dot),
 *      joined that reduce, and the row fusion making x and the tanh had
 *      both as results: two 24x8x32 buffers live at once instead of one
 *      (XLA keeps the whole GELU in one fusion). Recomputing a cheap op
 *      per broadcast element is fine when it saves a buffer; it is not
 *      when it costs one.
 * Then ROW MERGING (rule 5; XLA's GPU emitters fuse a softmax the same way,
 * as one "diamond chain"): a group whose results are read by other groups
 * joins one of them (the first, in block order of their members, that
 * takes it; the other readers, and ops, then read it as an extra result of
 * the fusion: multi-output) when the union
 *   a. holds a reduce, and all its reduces reduce the same row (the same
 *      non-unit trailing dims) of operands of the same non-unit dims;
 *   b. is made of groups whose index spaces are that full shape (or a
 *      row-major merge of its dims: the reshape that feeds softmax's result
 *      to a batched dot, stored through an affine map) or the shape of its
 *      kept dims ("row-level" values such as mean and rsqrt(var + eps),
 *      computed once per row in the kernel, so rule 3 does not apply to
 *      them), or of CHEAP and LAYOUT ops only (a causal mask of iotas:
 *      recomputed at each point that reads it, never a buffer);
 *   c. has every outside reader of its results after its last member (the
 *      fusion takes that member's place; no path leaves it and comes back);
 *   d. has at most FUSION_MAX_OPS ops, and lower_fusion makes one row
 *      kernel of it (the code generator is the judge of what it can hold).
 * Merging repeats to a fixed point, so softmax's four groups (max; exp;
 * sum; divide) and LayerNorm's seven become one fusion each. Nothing is
 * duplicated: an expensive member read by several stages of the kernel is
 * kept in a row temporary (lower_fusion), never computed again per element.
 * The ops of while, if and case bodies (and sdy computations) are fused
 * too, per block, recursively. Scanning backwards, a producer is decided
 * after all of its consumers, so rule 2 sees their final groups. Every
 * fusible op ends in some fusion (a lone one makes a fusion of one op), so a
 * backend sees fusions and the ops it must run itself (dot, convolution,
 * gather, other reduces, ...).
 * Rule 3 is conservative for slice and concatenate, which do not recompute
 * (a refinement for later).
 *
 * Rule 6, IN-PLACE DYNAMIC-UPDATE-SLICE (XLA's loop fusion with a DUS root,
 * CanEmitFusedDynamicUpdateSliceInPlace): a dynamic_update_slice (rank >=
 * 1, integer scalar start indices, a non-empty update) whose update is made
 * in the block by a CHEAP, EXPENSIVE or LAYOUT op starts a "loop" group as
 * its root; only its update's producers join it (rules 1-4 over the
 * update's index space), never the producers of its operand or start
 * indices (they stay inputs), nor an op reading the operand (the kernel
 * never loads it: the in-place question is then exactly a
 * dynamic_update_slice's). A DUS that nothing joins stays unfused (a plain
 * copy, STEP_DUS), and such groups take no part in row merging. The kernel
 * (lower_fusion) runs over the update and stores into the operand-shaped
 * result at the clamped starts; the runtime binds that result to the
 * operand's buffer by the rule it uses for dynamic_update_slice
 * (executable_cpu_buffers.c, merge_buffers / plan_carried, through the
 * kernel step's `inplace`), and where it cannot, the kernel copies the
 * operand into the result first (codegen/kernel.h, Dynamic-update
 * outputs): the fusion is formed whatever buffer assignment decides later
 * (a while body's carried stack is in place or not per run). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "codegen/kernel.h"
#include "codegen/lower_fusion.h"
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
    {OP_CONCATENATE, FUSION_LAYOUT, CL_ANY}, {OP_REVERSE, FUSION_LAYOUT, CL_ANY},
    {OP_CONSTANT, FUSION_CONSTANT, CL_ANY},
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
  uint8_t *bcast;      /* candidate read through a broadcast that adds elements */
  uint32_t *cone;      /* rule 7: the cone_cut call whose cone holds the op */
  uint8_t *cone_in;    /* rule 7: the op would join with that call's op */
  uint32_t cone_gen;
  uint32_t *roots;     /* group -> root op index (the last member, after row merging) */
  uint32_t num_groups;
  int32_t *uf;         /* row merging: group -> its representative (union-find) */
  uint8_t *gred;       /* group holds a reduce */
  int32_t *head, *next; /* row merging: the members of each union, a list */
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
  bool through_bcast =
      c->bcast[j] || (op->opcode == OP_BROADCAST_IN_DIM &&
                      type_num_elements(op->results[0].type) >
                          type_num_elements(op->operands[0]->type));
  uint32_t nops = op->opcode == OP_REDUCE ? 1 : op->num_operands; /* the init is a constant */
  for (uint32_t i = 0; i < nops; i++) {
    int64_t k = op_index(c, op->operands[i]->def);
    if (k < 0) continue;
    if (c->cand[k] != g) {
      c->cand[k] = g;
      c->flat[k] = c->bcast[k] = 0;
      ++*pending;
    }
    c->flat[k] |= through_flat;
    c->bcast[k] |= through_bcast;
  }
}

/* Rule 6 (see the header): whether ops[i] is a dynamic_update_slice that
 * may be the root of a fusion computing its update in place. */
static bool dus_root(const block_ctx *c, uint32_t i) {
  const hlo_op *op = c->ops[i];
  if (op->opcode != OP_DYNAMIC_UPDATE_SLICE || op->num_results != 1 || op->num_operands < 3 ||
      !kernel_type(op->results[0].type))
    return false;
  const hlo_type *ot = op->operands[0]->type, *ut = op->operands[1]->type;
  if (!kernel_type(ot) || !kernel_type(ut) || ot->rank < 1 || ut->rank != ot->rank ||
      op->num_operands != 2 + ot->rank || ut->dtype != ot->dtype ||
      type_num_elements(ut) < 1)
    return false;
  for (uint32_t j = 2; j < op->num_operands; j++) {
    const hlo_type *t = op->operands[j]->type;
    if (t->kind != TYPE_TENSOR || t->rank != 0 || !dtype_is_int(t->dtype)) return false;
  }
  /* the update is made here by an op that may join (not an argument, a
   * dot's result or a reduce: then the DUS alone is a plain copy) */
  int64_t u = op_index(c, op->operands[1]->def);
  if (u < 0 || c->group[u] >= 0) return false;
  fusion_role r = (fusion_role)c->role[u];
  return r == FUSION_CHEAP || r == FUSION_EXPENSIVE || r == FUSION_LAYOUT;
}

/* How far back (in ops) rule 7 looks for the ops that only ops[j] uses. */
#define CONE_WINDOW 512

/* Rule 7 (see the header): the number of values that group g would read
 * from other fusions made for ops[j] alone, were ops[j] to join g. The
 * cone of ops[j] is it and the fusible ops of the block all of whose uses
 * are in the cone (what a group rooted at ops[j] would take, rule 3
 * aside); its ops that g could take (CHEAP, LAYOUT, EXPENSIVE ones at
 * least as large as g's `space`) reached from ops[j] through such ops are
 * g's if ops[j] joins, and each other cone op they read (a reduce, or an
 * expensive op rule 3 leaves out) is then a result of another fusion that
 * only g reads. */
static uint32_t cone_cut(block_ctx *c, uint32_t j, int64_t space) {
  uint32_t stamp = ++c->cone_gen;
  c->cone[j] = stamp; /* in the cone */
  c->cone_in[j] = 1;  /* and g's were ops[j] to join */
  uint32_t cut = 0;
  uint32_t lo = j > CONE_WINDOW ? j - CONE_WINDOW : 0;
  for (uint32_t k = j; k-- > lo;) {
    fusion_role r = (fusion_role)c->role[k];
    if (r != FUSION_CHEAP && r != FUSION_EXPENSIVE && r != FUSION_LAYOUT && r != FUSION_REDUCE)
      continue;
    const hlo_op *op = c->ops[k];
    bool all = true, any = false, read_in = false;
    for (uint32_t q = 0; q < op->num_results && all; q++) {
      uint32_t nu = 0;
      const use_ref *u = use_index_uses(c->ui, &op->results[q], &nu);
      for (uint32_t t = 0; t < nu && all; t++) {
        int64_t a = op_index(c, ancestor_in_block(c, u[t].user));
        if (a < 0 || c->cone[a] != stamp) all = false;
        else any = true, read_in |= c->cone_in[a];
      }
    }
    if (!all || !any) continue;
    c->cone[k] = stamp;
    bool joinable = r == FUSION_CHEAP || r == FUSION_LAYOUT ||
                    (r == FUSION_EXPENSIVE && type_num_elements(op->results[0].type) >= space);
    c->cone_in[k] = read_in && joinable;
    if (read_in && !joinable) cut++;
  }
  return cut;
}

/* Rules 1-4 and 7 for candidate ops[j] of group g, whose index space has
 * `space` elements (and rule 6 for a group whose root is a
 * dynamic_update_slice). */
static bool may_join(block_ctx *c, uint32_t j, int32_t g, int64_t space) {
  const hlo_op *op = c->ops[j];
  fusion_role r = (fusion_role)c->role[j];
  if (c->group[j] >= 0 || (r != FUSION_CHEAP && r != FUSION_EXPENSIVE && r != FUSION_LAYOUT))
    return false;
  const hlo_op *root = c->ops[c->roots[g]];
  if (root->opcode == OP_DYNAMIC_UPDATE_SLICE) {
    for (uint32_t i = 0; i < root->num_operands; i++)
      if (i != 1 && root->operands[i]->def == op) return false; /* operand, starts: inputs */
    for (uint32_t i = 0; i < op->num_operands; i++)
      if (op->operands[i] == root->operands[0]) return false; /* no load of the operand */
  }
  if (r == FUSION_EXPENSIVE && type_num_elements(op->results[0].type) < space) return false;
  if (c->flat[j] && (r == FUSION_LAYOUT || op->opcode == OP_IOTA)) return false;
  if (c->bcast[j] && r == FUSION_CHEAP && op->num_operands >= 2 && cone_cut(c, j, space) >= 2)
    return false;
  return consumers_in(c, j, g);
}

/* The most ops one fusion holds; a longer chain becomes several fusions. */
#define FUSION_MAX_OPS 128
/* A full group still takes up to this many generator ops (below). */
#define FUSION_GEN_SLACK 16

/* Whether ops[j] computes its value from iotas and constants only (within
 * `depth` more ops): a generator, which a group past FUSION_MAX_OPS may
 * still take (up to FUSION_GEN_SLACK more ops): it adds a few index
 * computations and no load, and is never stored (random_normal's threefry
 * counters, iota * 32 + iota of 64x32xui64, were three 16 KB buffers beside
 * the full kernel reading them). */
static bool generator_op(const block_ctx *c, uint32_t j, int depth) {
  const hlo_op *op = c->ops[j];
  if (op->opcode == OP_IOTA || op->opcode == OP_CONSTANT) return true;
  if (depth <= 0 || !op->num_operands || op->num_regions) return false;
  for (uint32_t i = 0; i < op->num_operands; i++) {
    int64_t k = op_index(c, op->operands[i]->def);
    if (k < 0 || !generator_op(c, (uint32_t)k, depth - 1)) return false;
  }
  return true;
}

/* Forms the groups of the block (see the header). */
static hlo_status form_groups(block_ctx *c) {
  for (uint32_t i = c->n; i-- > 0;) {
    fusion_role r = (fusion_role)c->role[i];
    bool dus = r == FUSION_NO && c->group[i] < 0 && dus_root(c, i);
    if (c->group[i] >= 0 || ((r == FUSION_NO) && !dus) || r == FUSION_CONSTANT) continue;
    int32_t g = (int32_t)c->num_groups++;
    c->roots[g] = i;
    c->group[i] = g;
    /* the root is evaluated at its own index space: forget whether it was
     * read through a merging reshape as a (rejected) candidate of an
     * earlier group (a stale bit kept the causal mask's iotas and the
     * broadcasts of softmax's row values out of their consumers) */
    c->flat[i] = c->bcast[i] = 0;
    c->cand[i] = g;
    const hlo_op *root = c->ops[i];
    int64_t space = type_num_elements(r == FUSION_REDUCE ? root->operands[0]->type
                                      : dus                ? root->operands[1]->type
                                                           : root->results[0].type);
    uint32_t pending = 0, size = 1;
    if (dus) { /* only the update's producers (rule 6) */
      uint32_t u = (uint32_t)op_index(c, root->operands[1]->def);
      c->cand[u] = g;
      c->flat[u] = c->bcast[u] = 0;
      pending = 1;
    } else {
      add_candidates(c, i, g, &pending);
    }
    for (uint32_t j = i; pending && j-- > 0;) {
      if (c->cand[j] != g) continue;
      pending--;
      /* a bounded group: the lowering recurses along the group's chains
       * (a 4000-op elementwise chain overflowed the stack) */
      if (size >= FUSION_MAX_OPS + FUSION_GEN_SLACK ||
          (size >= FUSION_MAX_OPS && !generator_op(c, j, 8)) || !may_join(c, j, g, space))
        continue;
      c->group[j] = g;
      size++;
      add_candidates(c, j, g, &pending);
    }
    if (dus && size == 1) { /* nothing joined: the DUS stays a plain copy */
      c->group[i] = c->cand[i] = -1;
      c->cand[op_index(c, root->operands[1]->def)] = -1; /* g is the next group's number */
      c->num_groups--;
    }
  }
  return NULL;
}

/* ------------------------------------------------------ row merging */

/* No path compression: try_merge links tentatively and may undo the link. */
static int32_t uf_find(const block_ctx *c, int32_t g) {
  while (c->uf[g] != g) g = c->uf[g];
  return g;
}

/* The non-unit dims of dims[0..n) into out; their count. */
static uint32_t non_unit_dims(const int64_t *dims, uint32_t n, int64_t *out) {
  uint32_t m = 0;
  for (uint32_t i = 0; i < n; i++)
    if (dims[i] != 1) out[m++] = dims[i];
  return m;
}

/* The row structure of a union of groups (see the header, rule 5): the
 * reduces' operands agree on their non-unit dims (the "full" shape) and on
 * their reduced dims, and every group's index space is full or of the kept
 * dims ("row-level": values computed once per row). */
typedef struct row_shape {
  bool set;
  int64_t full[KERNEL_MAX_RANK], kept[KERNEL_MAX_RANK], red[KERNEL_MAX_RANK];
  uint32_t nfull, nkept, nred;
} row_shape;

static bool row_add_reduce(row_shape *r, const hlo_op *red) {
  const hlo_type *t = red->operands[0]->type;
  uint32_t nd = red->results[0].type->rank <= t->rank ? t->rank - red->results[0].type->rank : 0;
  int64_t full[KERNEL_MAX_RANK], kept[KERNEL_MAX_RANK], rd[KERNEL_MAX_RANK];
  uint32_t nf = non_unit_dims(t->dims, t->rank, full);
  uint32_t nk = non_unit_dims(t->dims, t->rank - nd, kept);
  uint32_t nr = non_unit_dims(t->dims + t->rank - nd, nd, rd);
  if (!r->set) {
    r->set = true;
    memcpy(r->full, full, sizeof full), r->nfull = nf;
    memcpy(r->kept, kept, sizeof kept), r->nkept = nk;
    memcpy(r->red, rd, sizeof rd), r->nred = nr;
    return true;
  }
  return nf == r->nfull && nk == r->nkept && nr == r->nred &&
         !memcmp(full, r->full, nf * sizeof *full) && !memcmp(rd, r->red, nr * sizeof *rd);
}

/* Whether dims d[0..n) are a row-major merge of full[0..nf): each is the
 * product of a run of consecutive dims of full (an equal dim included). */
static bool merges_of(const int64_t *d, uint32_t n, const int64_t *full, uint32_t nf) {
  uint32_t f = 0;
  for (uint32_t i = 0; i < n; i++) {
    int64_t p = 1;
    while (f < nf && p < d[i]) p *= full[f++];
    if (p != d[i]) return false;
  }
  return f == nf;
}

static bool row_space_ok(const row_shape *r, const hlo_type *t) {
  int64_t d[KERNEL_MAX_RANK];
  uint32_t n = non_unit_dims(t->dims, t->rank, d);
  return merges_of(d, n, r->full, r->nfull) ||
         (n == r->nkept && !memcmp(d, r->kept, n * sizeof *d));
}

/* The index space of group g's original root: its result, or a reduce's
 * operand. */
static const hlo_type *root_space(const block_ctx *c, uint32_t root) {
  const hlo_op *op = c->ops[root];
  return c->role[root] == FUSION_REDUCE ? op->operands[0]->type : op->results[0].type;
}

static int cmp_u32(const void *x, const void *y) {
  uint32_t a = *(const uint32_t *)x, b = *(const uint32_t *)y;
  return a < b ? -1 : a > b;
}

/* The members of unions u and (when >= 0) v, in block order, into list
 * (capacity c->n); their count. */
static uint32_t union_members(block_ctx *c, int32_t u, int32_t v, uint32_t *list) {
  uint32_t n = 0;
  for (int32_t j = c->head[u]; j >= 0; j = c->next[j]) list[n++] = (uint32_t)j;
  for (int32_t j = v >= 0 ? c->head[v] : -1; j >= 0; j = c->next[j]) list[n++] = (uint32_t)j;
  qsort(list, n, sizeof *list, cmp_u32);
  return n;
}

/* Whether ops[j] is in union u. */
static bool in_union(block_ctx *c, int64_t j, int32_t u) {
  return j >= 0 && c->group[j] >= 0 && uf_find(c, c->group[j]) == u;
}

/* The values of members[0..n) of union u read outside it (by an op of the
 * block not in u, or the terminator), into outs (capacity: results of the
 * members); the last member's results first. Their count. */
static uint32_t union_outputs(block_ctx *c, int32_t u, const uint32_t *members, uint32_t n,
                              const hlo_value **outs, int64_t *first_user) {
  uint32_t no = 0;
  *first_user = INT64_MAX;
  for (uint32_t pass = 0; pass < 2; pass++)
    for (uint32_t q = 0; q < n; q++) {
      bool last = q + 1 == n;
      if ((pass == 0) != last) continue;
      const hlo_op *op = c->ops[members[q]];
      for (uint32_t r = 0; r < op->num_results; r++) {
        uint32_t nu = 0;
        const use_ref *us = use_index_uses(c->ui, &op->results[r], &nu);
        bool out = false;
        for (uint32_t k = 0; k < nu; k++) {
          int64_t a = op_index(c, ancestor_in_block(c, us[k].user));
          if (in_union(c, a, u)) continue;
          out = true;
          if (a < 0) a = INT64_MAX - 1;
          if (a < *first_user) *first_user = a;
        }
        if (out) outs[no++] = &op->results[r];
      }
    }
  return no;
}

/* Rule 5 for merging union a into union b: see the header. */
static bool try_merge(block_ctx *c, int32_t a, int32_t b, uint32_t *members,
                      const hlo_value **outs, const hlo_op **ops) {
  if (!c->gred[a] && !c->gred[b]) return false;
  if (c->ops[c->roots[a]]->opcode == OP_DYNAMIC_UPDATE_SLICE ||
      c->ops[c->roots[b]]->opcode == OP_DYNAMIC_UPDATE_SLICE)
    return false; /* rule 6: an in-place update is a loop fusion of its own */
  int32_t save = c->uf[a];
  c->uf[a] = b; /* tentatively */
  uint32_t n = union_members(c, a, b, members);
  bool ok = n <= FUSION_MAX_OPS;
  row_shape rs;
  memset(&rs, 0, sizeof rs);
  for (uint32_t q = 0; q < n && ok; q++)
    if (c->role[members[q]] == FUSION_REDUCE) ok = row_add_reduce(&rs, c->ops[members[q]]);
  ok = ok && rs.set;
  /* every original group of the union has a full (or merged: a reshape
   * for the next dot) or row-level space, or is cheap to recompute at
   * each point that reads it (CHEAP and LAYOUT ops only: an iota mask) */
  for (uint32_t g = 0; g < c->num_groups && ok; g++)
    if (uf_find(c, (int32_t)g) == b && !row_space_ok(&rs, root_space(c, c->roots[g]))) {
      for (uint32_t q = 0; q < n && ok; q++)
        ok = c->group[members[q]] != (int32_t)g || c->role[members[q]] == FUSION_CHEAP ||
             c->role[members[q]] == FUSION_LAYOUT;
    }
  int64_t first_user = INT64_MAX;
  uint32_t no = ok ? union_outputs(c, b, members, n, outs, &first_user) : 0;
  /* every outside user comes after the last member: the fusion takes the
   * last member's place, and no path leaves the union and comes back */
  ok = ok && no > 0 && first_user > (int64_t)members[n - 1];
  if (ok) {
    for (uint32_t q = 0; q < n; q++) ops[q] = c->ops[members[q]];
    kernel *k = NULL;
    hlo_status st = lower_fusion(ops, n, outs, no, "row_check", &k);
    ok = !st && k && k->num_reduce_dims > 0;
    hlo_status_free(st);
    kernel_destroy(k);
  }
  if (!ok) {
    c->uf[a] = save;
    return false;
  }
  c->gred[b] = 1;
  /* b's list gets a's members */
  int32_t t = c->head[a];
  while (t >= 0 && c->next[t] >= 0) t = c->next[t];
  if (t >= 0) {
    c->next[t] = c->head[b];
    c->head[b] = c->head[a];
  }
  c->head[a] = -1;
  return true;
}

/* Merges groups into row fusions (rule 5): a group joins a group that
 * reads its results when the union is a row fusion (other readers, after
 * it, read them as extra results); repeated to a fixed point. */
static hlo_status merge_rows(block_ctx *c) {
  bool any_reduce = false;
  for (uint32_t g = 0; g < c->num_groups; g++) any_reduce |= c->gred[g];
  if (!any_reduce) return NULL;
  uint32_t *members = xmalloc(c->n * sizeof *members);
  uint32_t nres = 0;
  for (uint32_t j = 0; j < c->n; j++) nres += c->ops[j]->num_results;
  const hlo_value **outs = xmalloc((nres ? nres : 1) * sizeof *outs);
  const hlo_op **ops = xmalloc(c->n * sizeof *ops);
  if (!members || !outs || !ops) {
    free(members), free(outs), free(ops);
    return oom();
  }
  for (uint32_t g = 0; g < c->num_groups; g++) c->head[g] = -1;
  for (uint32_t j = c->n; j-- > 0;)
    if (c->group[j] >= 0) {
      c->next[j] = c->head[c->group[j]];
      c->head[c->group[j]] = (int32_t)j;
    }
  for (int round = 0, changed = 1; changed && round < 64; round++) {
    changed = 0;
    for (uint32_t g = 0; g < c->num_groups; g++) {
      int32_t a = (int32_t)g;
      if (uf_find(c, a) != a) continue;
      /* the unions reading a's results (a few); a joins the first that
       * takes it, the others then read it as a result of the fusion
       * (multi-output: try_merge checks that they come after it) */
      int32_t cons[4];
      uint32_t ncons = 0;
      bool many = false;
      for (int32_t j = c->head[a]; j >= 0 && !many; j = c->next[j]) {
        const hlo_op *op = c->ops[j];
        for (uint32_t r = 0; r < op->num_results && !many; r++) {
          uint32_t nu = 0;
          const use_ref *us = use_index_uses(c->ui, &op->results[r], &nu);
          for (uint32_t k = 0; k < nu && !many; k++) {
            int64_t x = op_index(c, ancestor_in_block(c, us[k].user));
            if (x < 0 || c->group[x] < 0) continue;
            int32_t h = uf_find(c, c->group[x]);
            bool seen = h == a;
            for (uint32_t q = 0; q < ncons; q++) seen |= cons[q] == h;
            if (seen) continue;
            if (ncons == 4) many = true;
            else cons[ncons++] = h;
          }
        }
      }
      if (many) continue;
      for (uint32_t q = 0; q < ncons; q++)
        if (try_merge(c, a, cons[q], members, outs, ops)) {
          changed = 1;
          break;
        }
    }
  }
  free(members);
  free(outs);
  free(ops);
  /* relabel: each op's group is its union's representative, whose root is
   * the last member */
  for (uint32_t j = 0; j < c->n; j++)
    if (c->group[j] >= 0) {
      int32_t u = uf_find(c, c->group[j]);
      if (u != c->group[j]) c->gred[u] = 2; /* merged */
      c->group[j] = u;
      c->roots[u] = j;
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
  /* the results: the values read outside the group (several for a
   * multi-output row fusion), the root's first */
  uint32_t *members = xmalloc(c->n * sizeof *members);
  uint32_t nres = 0, nm = 0;
  for (uint32_t j = first; j <= root_i && members; j++)
    if (c->group[j] == g) {
      members[nm++] = j;
      nres += c->ops[j]->num_results;
    }
  const hlo_value **outs = xmalloc((nres ? nres : 1) * sizeof *outs);
  hlo_type **out_types = xmalloc((nres ? nres : 1) * sizeof *out_types);
  if (!st && (!members || !outs || !out_types)) st = oom();
  uint32_t no = 0;
  if (!st) {
    int64_t first_user;
    no = union_outputs(c, g, members, nm, outs, &first_user);
    if (!no || outs[0] != &root->results[0]) {
      /* an unused root stays the result; keep it first */
      uint32_t k = 0;
      while (k < no && outs[k] != &root->results[0]) k++;
      if (k == no) no++;
      for (; k > 0; k--) outs[k] = outs[k - 1];
      outs[0] = &root->results[0];
    }
    for (uint32_t k = 0; k < no; k++) out_types[k] = outs[k]->type;
  }
  hlo_op *fop = NULL;
  if (!st) {
    fop = op_create(c->m, OP_FUSION, inputs, num_in, out_types, no, 1, root->loc);
    if (!fop) st = oom();
    /* the fusion's results keep their SSA names (interpreter.print and
     * probes name values by them) */
    else
      for (uint32_t k = 0; k < no; k++) fop->results[k].name = outs[k]->name;
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
    hlo_value **res = xmalloc(no * sizeof *res);
    if (!res) st = oom();
    for (uint32_t k = 0; k < no && !st; k++) res[k] = ptrmap_get(&vm, outs[k]);
    hlo_op *ret = st ? NULL : op_create(c->m, OP_RETURN, res, no, NULL, 0, 0, root->loc);
    if (!st && !ret) st = oom();
    else if (ret) block_append(body, ret);
    free(res);
  }
  if (!st) {
    const char *kind = c->gred[g] == 2 ? "row" : c->role[root_i] == FUSION_REDUCE ? "input" : "loop";
    char name[32];
    uint32_t later = 0; /* fusions after this one in the block */
    for (uint32_t h = (uint32_t)g + 1; h < c->num_groups; h++) later += c->uf[h] == (int32_t)h;
    snprintf(name, sizeof name, "fusion.%u", *c->counter + later);
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
  for (uint32_t k = 0; k < no && !st; k++)
    st = use_index_replace_all(c->ui, (hlo_value *)outs[k], &fop->results[k]);
  free(members);
  free(outs);
  free(out_types);
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
  c.bcast = xcalloc(c.n, 1);
  c.cone = xcalloc(c.n, sizeof *c.cone);
  c.cone_in = xcalloc(c.n, 1);
  c.roots = xmalloc(c.n * sizeof *c.roots);
  c.uf = xmalloc(c.n * sizeof *c.uf);
  c.gred = xcalloc(c.n, 1);
  c.head = xmalloc(c.n * sizeof *c.head);
  c.next = xmalloc(c.n * sizeof *c.next);
  hlo_status st = NULL;
  if (!c.ops || !c.role || !c.group || !c.cand || !c.flat || !c.bcast || !c.cone || !c.cone_in ||
      !c.roots || !c.uf || !c.gred || !c.head || !c.next)
    st = oom();
  uint32_t i = 0;
  for (hlo_op *op = b->first; op && !st; op = op->next, i++) {
    c.ops[i] = op;
    c.role[i] = (uint8_t)fusion_op_fusible(op);
    c.group[i] = c.cand[i] = -1;
    if (!ptrmap_put(&c.index, op, (void *)(uintptr_t)(i + 1))) st = oom();
  }
  if (!st) st = form_groups(&c);
  for (uint32_t g = 0; g < c.num_groups && !st; g++) {
    c.uf[g] = (int32_t)g;
    c.gred[g] = c.role[c.roots[g]] == FUSION_REDUCE;
  }
  if (!st) st = merge_rows(&c);
  /* roots from the last to the first: later fusions read earlier roots,
   * which are replaced through the use index */
  uint32_t made = 0;
  for (uint32_t g = 0; g < c.num_groups && !st; g++)
    if (c.uf[g] == (int32_t)g) {
      st = materialize(&c, (int32_t)g);
      made++;
    }
  /* splat constants copied into fusions and read by nothing else now */
  for (uint32_t j = 0; j < c.n && !st; j++)
    if (c.role[j] == FUSION_CONSTANT && c.ops[j]->parent == b &&
        !use_index_op_used(ui, c.ops[j]) && duplicable(&c.ops[j]->results[0]))
      use_index_erase(ui, c.ops[j]);
  *counter += made;
  free(c.uf);
  free(c.gred);
  free(c.head);
  free(c.next);
  free(c.ops);
  free(c.role);
  free(c.group);
  free(c.cand);
  free(c.flat);
  free(c.bcast);
  free(c.cone);
  free(c.cone_in);
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
