/* reduction_layout_normalizer.c — XLA's ReductionLayoutNormalizer, in the
 * form our kernels need: a `stablehlo.reduce` over dimensions that are not
 * the operand's trailing ones becomes a transpose that moves the reduced
 * dimensions last (kept dimensions first, in order; reduced dimensions
 * ascending) and a reduce over those trailing dimensions. The CPU kernels
 * reduce trailing dimensions only (codegen/kernel.h); the fusion pass then
 * folds the transpose into the reduction kernel's index map, so no copy is
 * made.
 *
 * Exactness: the reduce visits the reduced elements in the same order
 * (reduced dimensions ascending, row-major), so the result is bit-exact.
 * Left alone: reduces already over trailing dimensions, dynamic or quantized
 * types, and reduces over no dimension. */
#include <string.h>
#include "passes/builder.h"
#include "passes/passes.h"
#include "passes/use_index.h"
#include "support/arena.h"

#define RN_MAX_RANK 16

/* The permutation (kept dims, then reduced dims ascending) of a reduce of
 * rank `rank` over dims[0..nd); false when it is the identity or invalid. */
static bool normal_perm(uint32_t rank, const int64_t *dims, uint32_t nd, int64_t *perm) {
  bool red[RN_MAX_RANK] = {false};
  for (uint32_t i = 0; i < nd; i++) {
    if (dims[i] < 0 || dims[i] >= (int64_t)rank || red[dims[i]]) return false;
    red[dims[i]] = true;
  }
  uint32_t k = 0;
  for (uint32_t d = 0; d < rank; d++)
    if (!red[d]) perm[k++] = d;
  for (uint32_t d = 0; d < rank; d++)
    if (red[d]) perm[k++] = d;
  for (uint32_t d = 0; d < rank; d++)
    if (perm[d] != (int64_t)d) return true;
  return false;
}

/* Whether the reduce `op` is one this pass rewrites; fills perm. */
static bool candidate(const hlo_op *op, int64_t *perm, uint32_t *nd_out) {
  if (op->opcode != OP_REDUCE || op->num_operands < 2 || op->num_operands % 2 ||
      op->num_regions != 1)
    return false;
  uint32_t n = op->num_operands / 2;
  const hlo_type *t0 = op->operands[0]->type;
  for (uint32_t i = 0; i < n; i++) {
    const hlo_type *t = op->operands[i]->type;
    if (!t || t->kind != TYPE_TENSOR || !type_is_static(t) || t->quant ||
        t->rank > RN_MAX_RANK || t->rank != t0->rank ||
        memcmp(t->dims, t0->dims, t->rank * sizeof *t->dims))
      return false;
  }
  const hlo_attr *a = op_attr(op, "dimensions");
  arena ar;
  arena_init(&ar);
  int64_t *dims;
  uint32_t nd;
  bool ok = a && attr_as_ints(&ar, a, &dims, &nd) && nd > 0 && nd <= t0->rank &&
            normal_perm(t0->rank, dims, nd, perm);
  arena_deinit(&ar);
  *nd_out = nd;
  return ok;
}

static hlo_status normalize(hlo_module_ir *m, use_index *ui, hlo_op *op, const int64_t *perm,
                            uint32_t nd) {
  uint32_t n = op->num_operands / 2;
  uint32_t rank = op->operands[0]->type->rank;
  builder b;
  builder_at(&b, m, op);
  for (uint32_t i = 0; i < n; i++) {
    hlo_value *t = b_transpose(&b, op->operands[i], perm);
    HLO_TRY(builder_status(&b));
    HLO_TRY(use_index_add_op(ui, t->def));
    /* the reduce now reads the transpose (the index keeps the old use
     * until the op is re-indexed below) */
    use_index_remove_op(ui, op);
    op->operands[i] = t;
    HLO_TRY(use_index_add_op(ui, op));
  }
  int64_t dims[RN_MAX_RANK];
  for (uint32_t k = 0; k < nd; k++) dims[k] = (int64_t)(rank - nd + k);
  hlo_attr *a = b_i64s(&b, dims, nd);
  HLO_TRY(builder_status(&b));
  return op_set_attr(m, op, "dimensions", a);
}

static hlo_status normalize_block(hlo_module_ir *m, use_index *ui, hlo_block *blk) {
  for (hlo_op *op = blk->first; op; op = op->next) {
    for (uint32_t r = 0; r < op->num_regions; r++)
      HLO_TRY(normalize_block(m, ui, &op->regions[r].block));
    int64_t perm[RN_MAX_RANK];
    uint32_t nd = 0;
    if (candidate(op, perm, &nd)) HLO_TRY(normalize(m, ui, op, perm, nd));
  }
  return NULL;
}

hlo_status pass_reduction_layout_normalizer(hlo_module_ir *m, const hlo_pass_options *o) {
  (void)o;
  for (hlo_func *f = m->funcs; f; f = f->next) {
    use_index *ui;
    HLO_TRY(use_index_build(f, &ui));
    hlo_status st = normalize_block(m, ui, &f->body.block);
    use_index_free(ui);
    HLO_TRY(st);
  }
  return NULL;
}
