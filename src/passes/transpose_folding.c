/* transpose_folding.c — XLA's TransposeFolding: a dot_general operand that
 * is a transpose reads the transpose's operand instead, with the dimension
 * numbers mapped through the permutation: dim d of the transposed value is
 * dim perm[d] of its operand. A GEMM then reads the matrix in place (a
 * trans flag after dot-decomposer) instead of a copied transpose.
 *
 * Condition: the dot's result is (batch dims in their listed order, lhs free
 * dims in increasing order, rhs free dims in increasing order), so folding
 * is exact only when the permutation keeps the free dims in the same
 * relative order; the contracting dims keep their listed order, so the
 * products are summed in the same order: bit-exact. The transpose stays if
 * anything else reads it (DCE removes it otherwise). */
#include <string.h>
#include "passes/builder.h"
#include "passes/passes.h"
#include "passes/use_index.h"
#include "support/arena.h"

#define TF_MAX_RANK 16

typedef struct dims_list {
  int64_t v[TF_MAX_RANK];
  uint32_t n;
} dims_list;

static bool read_list(arena *a, const hlo_attr *dn, const char *name, dims_list *out) {
  out->n = 0;
  const hlo_attr *f = attr_field(dn, name);
  if (!f) return true;
  int64_t *v;
  uint32_t n;
  if (!attr_as_ints(a, f, &v, &n) || n > TF_MAX_RANK) return false;
  memcpy(out->v, v, n * sizeof *v);
  out->n = n;
  return true;
}

static bool listed(const dims_list *l, int64_t x) {
  for (uint32_t i = 0; i < l->n; i++)
    if (l->v[i] == x) return true;
  return false;
}

/* The permutation of transpose `t` (rank entries), or false. */
static bool transpose_perm(const hlo_op *t, int64_t *perm, uint32_t rank) {
  const hlo_attr *p = op_attr(t, "permutation");
  arena a;
  arena_init(&a);
  int64_t *v;
  uint32_t n;
  bool ok = p && attr_as_ints(&a, p, &v, &n) && n == rank && rank <= TF_MAX_RANK;
  if (ok) memcpy(perm, v, n * sizeof *v);
  arena_deinit(&a);
  return ok;
}

/* Whether the free dims of an operand of rank `rank` (neither batch nor
 * contracting) stay in increasing order through perm. */
static bool free_order_kept(const int64_t *perm, uint32_t rank, const dims_list *b,
                            const dims_list *c) {
  int64_t last = -1;
  for (uint32_t d = 0; d < rank; d++) {
    if (listed(b, d) || listed(c, d)) continue;
    if (perm[d] <= last) return false;
    last = perm[d];
  }
  return true;
}

/* Tries to fold the transpose feeding operand `side` (0 lhs, 1 rhs) of
 * dot_general `op`; *folded says whether it did. */
static hlo_status fold_side(hlo_module_ir *m, use_index *ui, hlo_op *op, int side,
                            bool *folded) {
  *folded = false;
  hlo_value *x = op->operands[side];
  const hlo_op *t = x->def;
  if (!t || t->opcode != OP_TRANSPOSE || t->num_operands != 1) return NULL;
  const hlo_type *xt = x->type;
  if (!xt || xt->kind != TYPE_TENSOR || !type_is_static(xt) || xt->rank > TF_MAX_RANK)
    return NULL;
  const hlo_attr *dn = op_attr(op, "dot_dimension_numbers");
  if (!dn || dn->kind != ATTR_STRUCT) return NULL;
  int64_t perm[TF_MAX_RANK];
  if (!transpose_perm(t, perm, xt->rank)) return NULL;
  arena a;
  arena_init(&a);
  dims_list lb, rb, lc, rc;
  bool ok = read_list(&a, dn, "lhs_batching_dimensions", &lb) &&
            read_list(&a, dn, "rhs_batching_dimensions", &rb) &&
            read_list(&a, dn, "lhs_contracting_dimensions", &lc) &&
            read_list(&a, dn, "rhs_contracting_dimensions", &rc);
  arena_deinit(&a);
  if (!ok) return NULL;
  dims_list *b = side ? &rb : &lb, *c = side ? &rc : &lc;
  if (!free_order_kept(perm, xt->rank, b, c)) return NULL;
  for (uint32_t i = 0; i < b->n; i++) b->v[i] = perm[b->v[i]];
  for (uint32_t i = 0; i < c->n; i++) c->v[i] = perm[c->v[i]];
  builder bl;
  builder_at(&bl, m, op);
  hlo_attr *nd = b_dot_dims(&bl, lb.v, lb.n, rb.v, rb.n, lc.v, lc.n, rc.v, rc.n);
  HLO_TRY(builder_status(&bl));
  use_index_remove_op(ui, op);
  op->operands[side] = t->operands[0];
  hlo_status st = op_set_attr(m, op, "dot_dimension_numbers", nd);
  if (!st) st = use_index_add_op(ui, op);
  *folded = st == NULL;
  return st;
}

static hlo_status fold_block(hlo_module_ir *m, use_index *ui, hlo_block *blk) {
  for (hlo_op *op = blk->first; op; op = op->next) {
    for (uint32_t r = 0; r < op->num_regions; r++)
      HLO_TRY(fold_block(m, ui, &op->regions[r].block));
    if (op->opcode != OP_DOT_GENERAL || op->num_operands != 2) continue;
    for (int side = 0; side < 2; side++) {
      bool folded = true;
      /* a chain of transposes folds one at a time */
      while (folded) HLO_TRY(fold_side(m, ui, op, side, &folded));
    }
  }
  return NULL;
}

hlo_status pass_transpose_folding(hlo_module_ir *m, const hlo_pass_options *o) {
  (void)o;
  for (hlo_func *f = m->funcs; f; f = f->next) {
    use_index *ui;
    HLO_TRY(use_index_build(f, &ui));
    hlo_status st = fold_block(m, ui, &f->body.block);
    use_index_free(ui);
    HLO_TRY(st);
  }
  return NULL;
}
