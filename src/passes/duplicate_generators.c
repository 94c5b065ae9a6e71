/* duplicate_generators.c — the duplicate-generators pass: a cheap value
 * computed from nothing but iotas and constants (a "generator": an iota, a
 * broadcast of a constant, an elementwise chain over those, such as
 * threefry's counters `iota * 32 + iota` or an identity mask
 * `iota == iota`) that several fusible ops read is copied, one copy per
 * reader, so that fusion (fusion.c, rule 2: a producer joins a group only
 * when every consumer is in it) puts a copy inside each reader's kernel and
 * the value is never written to memory. Without it, CSE leaves one shared
 * generator that fusion must materialise: a buffer as large as the readers'
 * index space, live from the first reader to the last.
 *
 * XLA: its fusion duplicates any producer that is not expensive into every
 * consumer it can fuse with (InstructionFusion::ShouldFuse with
 * `may_duplicate`), so iotas and their cheap elementwise chains are never
 * buffers; this pass gives our fusion the same result without changing its
 * rules.
 *
 * Rules: a generator is an op whose fusion role (fusion_op_fusible) is
 * CHEAP (elementwise or iota) or LAYOUT, whose operands are all generators
 * or constants (constants themselves are never copied: fusion copies splat
 * constants into each fusion and reads the others as operands). Walking
 * each block from its last op to its first (so a generator is decided
 * after the copies of the generators that read it were made), a generator
 * read by several ops of its own block that fusion may take
 * (fusion_op_fusible not FUSION_NO) gets one copy per such reader after
 * the first (at most 16 readers; more keep sharing it), placed right before
 * the reader; readers in nested regions and non-fusible readers keep the
 * original. Bit-exact (the same ops on the same values). Runs before
 * fusion in the CPU pipeline. */
#include <stdlib.h>

#include "passes/pass_util.h"
#include "passes/passes.h"
#include "passes/use_index.h"

/* Readers of one generator copied at most (beyond it, sharing is cheaper
 * than recomputing in many kernels). */
enum { MAX_COPIES = 16 };

/* Whether op (NULL: a block argument) computes a generator; memoised in
 * `memo` (op -> (void *)1 yes, (void *)2 no). Constants answer no here
 * (they are leaves: see generator_operand). */
static bool is_generator(const hlo_op *op, ptrmap *memo, uint32_t depth);

static bool generator_operand(const hlo_value *v, ptrmap *memo, uint32_t depth) {
  if (!v->def) return false;
  if (v->def->opcode == OP_CONSTANT) return true;
  return is_generator(v->def, memo, depth + 1);
}

static bool is_generator(const hlo_op *op, ptrmap *memo, uint32_t depth) {
  if (!op || depth > 64 || op->num_regions || op->num_results != 1) return false;
  void *m = ptrmap_get(memo, op);
  if (m) return m == (void *)1;
  fusion_role r = fusion_op_fusible(op);
  bool yes = r == FUSION_CHEAP || r == FUSION_LAYOUT;
  for (uint32_t i = 0; yes && i < op->num_operands; i++)
    yes = generator_operand(op->operands[i], memo, depth);
  (void)ptrmap_put(memo, op, yes ? (void *)1 : (void *)2); /* no memory: asked again */
  return yes;
}

static hlo_status dup_block(hlo_module_ir *m, use_index *ui, hlo_block *b, ptrmap *memo,
                            uint64_t *made) {
  for (hlo_op *op = b->last, *prev; op; op = prev) {
    prev = op->prev;
    for (uint32_t r = 0; r < op->num_regions; r++)
      HLO_TRY(dup_block(m, ui, &op->regions[r].block, memo, made));
    if (op->opcode == OP_CONSTANT || !is_generator(op, memo, 0)) continue;
    uint32_t n = 0;
    const use_ref *uses = use_index_uses(ui, &op->results[0], &n);
    if (n < 2) continue;
    /* the readers to give a copy: fusible ops of this block, once each */
    use_ref pick[MAX_COPIES + 1];
    uint32_t np = 0;
    for (uint32_t i = 0; i < n && np <= MAX_COPIES; i++) {
      hlo_op *u = uses[i].user;
      if (u->parent != b || fusion_op_fusible(u) == FUSION_NO) continue;
      bool seen = false;
      for (uint32_t k = 0; k < np && !seen; k++) seen = pick[k].user == u;
      if (!seen) pick[np++] = uses[i];
    }
    if (np < 2 || np > MAX_COPIES) continue;
    /* the first reader in block order keeps the original */
    uint32_t first = 0;
    for (hlo_op *o = op->next; o; o = o->next) {
      bool hit = false;
      for (uint32_t k = 0; k < np && !hit; k++)
        if (pick[k].user == o) first = k, hit = true;
      if (hit) break;
    }
    for (uint32_t k = 0; k < np; k++) {
      if (k == first) continue;
      hlo_op *u = pick[k].user, *copy = NULL;
      ptrmap vm = {0};
      uint64_t count = 0;
      hlo_status st = op_clone(m, op, b, u, &vm, &count, 4, &copy);
      ptrmap_free(&vm);
      HLO_TRY(st);
      HLO_TRY(use_index_add_op(ui, copy));
      /* every operand slot of u that reads op reads the copy */
      use_index_remove_op(ui, u);
      for (uint32_t j = 0; j < u->num_operands; j++)
        if (u->operands[j] == &op->results[0]) u->operands[j] = &copy->results[0];
      HLO_TRY(use_index_add_op(ui, u));
      ++*made;
    }
  }
  return NULL;
}

hlo_status pass_duplicate_generators(hlo_module_ir *m, const hlo_pass_options *o) {
  (void)o;
  for (hlo_func *f = m->funcs; f; f = f->next) {
    use_index *ui = NULL;
    HLO_TRY(use_index_build(f, &ui));
    ptrmap memo = {0};
    uint64_t made = 0;
    hlo_status st = dup_block(m, ui, &f->body.block, &memo, &made);
    ptrmap_free(&memo);
    use_index_free(ui);
    HLO_TRY(st);
  }
  return NULL;
}
