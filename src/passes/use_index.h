/* use_index.h — the def-use facts of one function: for each value, the ops
 * (and operand slots) that read it, nested regions included. Built once in
 * O(ops) (DESIGN.md, "Passes") and kept true by the passes that edit the IR
 * through it: a pass that creates an op calls use_index_add_op, one that
 * removes an op calls use_index_erase, and uses are redirected with
 * use_index_replace_all. The IR stays the source of truth; the index is
 * keyed by value pointer, so new values need no renumbering.
 *
 * Ownership: use_index_build returns an index that is yours
 * (use_index_free); the use arrays it lends are valid until the next
 * change to the index. */
#ifndef HLO_PASSES_USE_INDEX_H
#define HLO_PASSES_USE_INDEX_H
#include <stdbool.h>
#include <stdint.h>
#include "ir/ir.h"

/* One use: operand `operand` of op `user` is the value. */
typedef struct use_ref {
  hlo_op *user;
  uint32_t operand;
} use_ref;

typedef struct use_index use_index;

/* Indexes every operand of every op of `f` (nested regions included).
 * Errors: HLO_RESOURCE_EXHAUSTED. */
HLO_MUST_USE hlo_status use_index_build(hlo_func *f, use_index **out);
/* Frees the index (NULL is fine). */
void use_index_free(use_index *ui);

/* The uses of `v` (lent; *n gets their count, 0 when none). */
const use_ref *use_index_uses(const use_index *ui, const hlo_value *v, uint32_t *n);
/* The number of uses of `v`. */
uint32_t use_index_count(const use_index *ui, const hlo_value *v);
/* Whether any result of `op` has a use. */
bool use_index_op_used(const use_index *ui, const hlo_op *op);

/* Records the operands of `op` (and of the ops of its regions) as uses.
 * Call once for each op a pass creates. Errors: HLO_RESOURCE_EXHAUSTED. */
HLO_MUST_USE hlo_status use_index_add_op(use_index *ui, hlo_op *op);
/* Forgets the uses by `op` and by the ops of its regions. */
void use_index_remove_op(use_index *ui, hlo_op *op);
/* Makes every use of `from` a use of `to` (the operands are rewritten in
 * the IR). `to` must have from's type where it matters; not checked.
 * Errors: HLO_RESOURCE_EXHAUSTED (the IR may then be half rewritten). */
HLO_MUST_USE hlo_status use_index_replace_all(use_index *ui, hlo_value *from, hlo_value *to);
/* use_index_remove_op, then op_erase_tree: removes `op` (its results must
 * be unused) from the IR and the index. */
void use_index_erase(use_index *ui, hlo_op *op);
#endif
