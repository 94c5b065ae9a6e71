/* dce.c — dead code elimination: removes pure ops (pass_util.h, op_is_pure)
 * whose results nothing reads, then the private functions nothing refers to.
 *
 * One backward walk per block over a use index built once per function:
 * an op is visited after every op that could read its results (later ops of
 * its block, and the ops nested in them, which are visited first), so chains
 * of dead ops go in one walk. A region op that stays has its regions walked
 * before the ops above it, so a value defined above and read only by dead
 * ops in a region is seen dead in time. Keeps the use index it builds true. */
#include "passes/pass_util.h"
#include "passes/passes.h"
#include "passes/use_index.h"

static void dce_block(use_index *ui, hlo_block *b, uint64_t *removed) {
  for (hlo_op *op = b->last, *prev; op; op = prev) {
    prev = op->prev;
    if (op_is_pure(op) && !use_index_op_used(ui, op)) {
      use_index_erase(ui, op);
      ++*removed;
      continue;
    }
    for (uint32_t r = op->num_regions; r-- > 0;) dce_block(ui, &op->regions[r].block, removed);
  }
}

hlo_status pass_dce(hlo_module_ir *m, const hlo_pass_options *o) {
  for (hlo_func *f = m->funcs; f; f = f->next) {
    use_index *ui;
    HLO_TRY(use_index_build(f, &ui));
    uint64_t removed = 0;
    dce_block(ui, &f->body.block, &removed);
    use_index_free(ui);
  }
  return module_remove_dead_funcs(m, o ? o->entry : NULL, NULL);
}
