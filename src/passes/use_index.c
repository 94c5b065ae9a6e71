/* use_index.c — def-use facts of a function (see use_index.h): a pointer map
 * from each used value to a growable array of its uses. */
#include "passes/use_index.h"

#include <stdlib.h>
#include <string.h>

#include "passes/pass_util.h"
#include "support/arena.h"

typedef struct use_list {
  use_ref *v;
  uint32_t n, cap;
} use_list;

struct use_index {
  ptrmap map; /* hlo_value * -> use_list * */
};

static hlo_status oom(void) {
  return status_new(HLO_RESOURCE_EXHAUSTED, "out of memory while indexing uses");
}

static use_list *list_of(const use_index *ui, const hlo_value *v) {
  return ptrmap_get(&ui->map, v);
}

static bool add_use(use_index *ui, hlo_value *v, hlo_op *user, uint32_t k) {
  use_list *l = list_of(ui, v);
  if (!l) {
    l = xcalloc(1, sizeof *l);
    if (!l) return false;
    if (!ptrmap_put(&ui->map, v, l)) {
      free(l);
      return false;
    }
  }
  if (l->n == l->cap) {
    uint32_t nc = l->cap ? l->cap * 2 : 4;
    use_ref *nv = xrealloc(l->v, nc * sizeof *nv);
    if (!nv) return false;
    l->v = nv;
    l->cap = nc;
  }
  l->v[l->n++] = (use_ref){user, k};
  return true;
}

static void remove_use(use_index *ui, const hlo_value *v, const hlo_op *user, uint32_t k) {
  use_list *l = list_of(ui, v);
  if (!l) return;
  for (uint32_t i = 0; i < l->n; i++) {
    if (l->v[i].user == user && l->v[i].operand == k) {
      l->v[i] = l->v[--l->n];
      return;
    }
  }
}

hlo_status use_index_add_op(use_index *ui, hlo_op *op) {
  for (uint32_t k = 0; k < op->num_operands; k++)
    if (!add_use(ui, op->operands[k], op, k)) return oom();
  for (uint32_t r = 0; r < op->num_regions; r++)
    for (hlo_op *o = op->regions[r].block.first; o; o = o->next) HLO_TRY(use_index_add_op(ui, o));
  return NULL;
}

void use_index_remove_op(use_index *ui, hlo_op *op) {
  for (uint32_t k = 0; k < op->num_operands; k++) remove_use(ui, op->operands[k], op, k);
  for (uint32_t r = 0; r < op->num_regions; r++)
    for (hlo_op *o = op->regions[r].block.first; o; o = o->next) use_index_remove_op(ui, o);
}

hlo_status use_index_build(hlo_func *f, use_index **out) {
  *out = NULL;
  use_index *ui = xcalloc(1, sizeof *ui);
  if (!ui) return oom();
  for (hlo_op *op = f->body.block.first; op; op = op->next) {
    hlo_status st = use_index_add_op(ui, op);
    if (st) {
      use_index_free(ui);
      return st;
    }
  }
  *out = ui;
  return NULL;
}

void use_index_free(use_index *ui) {
  if (!ui) return;
  for (size_t i = 0; i < ui->map.cap; i++) {
    use_list *l = ui->map.vals[i];
    if (!l) continue;
    free(l->v);
    free(l);
  }
  ptrmap_free(&ui->map);
  free(ui);
}

const use_ref *use_index_uses(const use_index *ui, const hlo_value *v, uint32_t *n) {
  use_list *l = list_of(ui, v);
  *n = l ? l->n : 0;
  return l ? l->v : NULL;
}

uint32_t use_index_count(const use_index *ui, const hlo_value *v) {
  use_list *l = list_of(ui, v);
  return l ? l->n : 0;
}

bool use_index_op_used(const use_index *ui, const hlo_op *op) {
  for (uint32_t i = 0; i < op->num_results; i++)
    if (use_index_count(ui, &op->results[i])) return true;
  return false;
}

hlo_status use_index_replace_all(use_index *ui, hlo_value *from, hlo_value *to) {
  if (from == to) return NULL;
  use_list *l = list_of(ui, from);
  if (!l) return NULL;
  while (l->n) {
    use_ref u = l->v[l->n - 1];
    if (!add_use(ui, to, u.user, u.operand)) return oom();
    u.user->operands[u.operand] = to;
    l->n--;
  }
  return NULL;
}

void use_index_erase(use_index *ui, hlo_op *op) {
  use_index_remove_op(ui, op);
  op_erase_tree(op);
}
