/* cse.c — common subexpression elimination within each block.
 *
 * A forward walk keeps a hash table of the pure, region-free ops seen so far
 * in the block, keyed by (opcode, operand pointers, result types,
 * attributes). An op equal to an earlier one has its uses redirected to the
 * earlier op's results and is removed; since the walk redirects before it
 * reaches the readers, chains of duplicates collapse in one walk. Operands
 * of commutative integer ops are compared in either order (integer
 * add/multiply/and/or/xor/max/min are exactly commutative; float ones are
 * left alone: with two NaN operands the payload that survives depends on the
 * order). Each block is its own scope: regions are not searched across.
 * Uses a use index built once per function (O(ops)). */
#include <stdlib.h>
#include <string.h>

#include "ir/element.h"
#include "passes/pass_util.h"
#include "passes/passes.h"
#include "passes/use_index.h"
#include "support/arena.h"

typedef struct cse_table {
  hlo_op **slots;
  uint64_t *hashes; /* hash of slots[i] */
  size_t cap, n;
} cse_table;

static uint64_t mix(uint64_t h, uint64_t v) {
  h ^= v + 0x9E3779B97F4A7C15ull + (h << 6) + (h >> 2);
  return h;
}

static uint64_t hash_bytes(uint64_t h, const uint8_t *p, size_t n) {
  for (size_t i = 0; i < n; i++) h = (h ^ p[i]) * 0x100000001B3ull;
  return h;
}

static uint64_t hash_type(uint64_t h, const hlo_type *t) {
  h = mix(h, (uint64_t)t->kind);
  if (t->kind == TYPE_TENSOR) {
    h = mix(h, (uint64_t)t->dtype);
    h = mix(h, t->rank);
    for (uint32_t i = 0; i < t->rank; i++) h = mix(h, (uint64_t)t->dims[i]);
  }
  return h;
}

static bool commutative(const hlo_op *op) {
  switch (op->opcode) {
    case OP_ADD: case OP_MULTIPLY: case OP_AND: case OP_OR: case OP_XOR:
    case OP_MAXIMUM: case OP_MINIMUM: {
      const hlo_type *t = op->results[0].type;
      return op->num_operands == 2 && t->kind == TYPE_TENSOR && !t->quant &&
             (dtype_is_int(t->dtype) || t->dtype == HLO_I1);
    }
    default:
      return false;
  }
}

static uint64_t hash_op(const hlo_op *op) {
  uint64_t h = mix(0, (uint64_t)op->opcode);
  h = mix(h, op->num_operands);
  if (commutative(op)) {
    uint64_t a = (uint64_t)(uintptr_t)op->operands[0], b = (uint64_t)(uintptr_t)op->operands[1];
    h = mix(h, a ^ b);
    h = mix(h, a + b);
  } else {
    for (uint32_t i = 0; i < op->num_operands; i++) h = mix(h, (uint64_t)(uintptr_t)op->operands[i]);
  }
  for (uint32_t i = 0; i < op->num_results; i++) h = hash_type(h, op->results[i].type);
  h = mix(h, op->num_attrs);
  for (uint32_t i = 0; i < op->num_attrs; i++) {
    const hlo_attr *a = op->attrs[i].value;
    /* attributes may come in any order: combine them order-independently */
    uint64_t ah = hash_bytes(0xCBF29CE484222325ull, (const uint8_t *)op->attrs[i].name,
                             strlen(op->attrs[i].name));
    if (a) {
      ah = mix(ah, (uint64_t)a->kind);
      if (a->kind == ATTR_DENSE && a->u.dense.data)
        ah = hash_bytes(ah, a->u.dense.data, a->u.dense.nbytes);
      else if (a->kind == ATTR_INT)
        ah = mix(ah, (uint64_t)a->u.i.v);
      else if (a->kind == ATTR_ENUM && a->u.en.value)
        ah = hash_bytes(ah, (const uint8_t *)a->u.en.value, strlen(a->u.en.value));
    }
    h += ah * 0x2545F4914F6CDD1Dull;
  }
  return h;
}

static bool attrs_equal(const hlo_op *a, const hlo_op *b) {
  if (a->num_attrs != b->num_attrs) return false;
  for (uint32_t i = 0; i < a->num_attrs; i++) {
    const hlo_attr *bv = op_attr(b, a->attrs[i].name);
    if (!bv || !a->attrs[i].value || !attr_equal(a->attrs[i].value, bv)) return false;
  }
  return true;
}

static bool ops_equal(const hlo_op *a, const hlo_op *b) {
  if (a->opcode != b->opcode || a->num_operands != b->num_operands ||
      a->num_results != b->num_results)
    return false;
  bool same = true;
  for (uint32_t i = 0; i < a->num_operands && same; i++) same = a->operands[i] == b->operands[i];
  if (!same && !(commutative(a) && a->operands[0] == b->operands[1] &&
                 a->operands[1] == b->operands[0]))
    return false;
  for (uint32_t i = 0; i < a->num_results; i++)
    if (!type_equal(a->results[i].type, b->results[i].type)) return false;
  return attrs_equal(a, b);
}

/* Whether `op` may be merged with an identical earlier op. */
static bool cse_candidate(const hlo_op *op) {
  if (op->num_regions || op->num_results == 0 || !op_is_pure(op)) return false;
  /* an optimization_barrier exists to keep values apart */
  return op->opcode != OP_OPTIMIZATION_BARRIER;
}

/* The earlier op equal to `op` (whose hash is h), or NULL after inserting
 * op. *oom set when the table cannot grow. */
static hlo_op *lookup_or_insert(cse_table *t, hlo_op *op, uint64_t h, bool *oom) {
  if ((t->n + 1) * 2 > t->cap) {
    size_t nc = t->cap ? t->cap * 2 : 64;
    hlo_op **ns = xcalloc(nc, sizeof *ns);
    uint64_t *nh = xcalloc(nc, sizeof *nh);
    if (!ns || !nh) {
      free(ns);
      free(nh);
      *oom = true;
      return NULL;
    }
    for (size_t i = 0; i < t->cap; i++) {
      if (!t->slots[i]) continue;
      size_t k = (size_t)t->hashes[i] & (nc - 1);
      while (ns[k]) k = (k + 1) & (nc - 1);
      ns[k] = t->slots[i];
      nh[k] = t->hashes[i];
    }
    free(t->slots);
    free(t->hashes);
    t->slots = ns;
    t->hashes = nh;
    t->cap = nc;
  }
  size_t k = (size_t)h & (t->cap - 1);
  while (t->slots[k]) {
    if (t->hashes[k] == h && ops_equal(t->slots[k], op)) return t->slots[k];
    k = (k + 1) & (t->cap - 1);
  }
  t->slots[k] = op;
  t->hashes[k] = h;
  t->n++;
  return NULL;
}

static hlo_status cse_block(use_index *ui, hlo_block *b, uint64_t *merged) {
  cse_table t = {0};
  hlo_status st = NULL;
  for (hlo_op *op = b->first, *next; op && !st; op = next) {
    next = op->next;
    for (uint32_t r = 0; r < op->num_regions && !st; r++)
      st = cse_block(ui, &op->regions[r].block, merged);
    if (st || !cse_candidate(op)) continue;
    bool oom = false;
    hlo_op *prev = lookup_or_insert(&t, op, hash_op(op), &oom);
    if (oom) {
      st = status_at(HLO_RESOURCE_EXHAUSTED, &op->loc, "out of memory in cse");
      break;
    }
    if (!prev) continue;
    for (uint32_t i = 0; i < op->num_results && !st; i++)
      st = use_index_replace_all(ui, &op->results[i], &prev->results[i]);
    if (st) break;
    use_index_erase(ui, op);
    ++*merged;
  }
  free(t.slots);
  free(t.hashes);
  return st;
}

hlo_status pass_cse(hlo_module_ir *m, const hlo_pass_options *o) {
  (void)o;
  for (hlo_func *f = m->funcs; f; f = f->next) {
    use_index *ui;
    HLO_TRY(use_index_build(f, &ui));
    uint64_t merged = 0;
    hlo_status st = cse_block(ui, &f->body.block, &merged);
    use_index_free(ui);
    HLO_TRY(st);
  }
  return NULL;
}
