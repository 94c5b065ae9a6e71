/* pass_util.h — small facilities the IR-to-IR passes share: a pointer map,
 * what an op may be removed or merged for (purity), op counts, copying ops
 * with their regions, and removing functions nothing refers to.
 *
 * Ownership: a ptrmap holds malloc'd tables (ptrmap_free); everything that
 * makes IR allocates it in the module's arena. */
#ifndef HLO_PASSES_PASS_UTIL_H
#define HLO_PASSES_PASS_UTIL_H
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include "ir/ir.h"

/* ---------------------------------------------------------- pointer map */

/* An open-addressing map from non-NULL pointers to pointers. Zero it to
 * start; ptrmap_free when done. Removal is supported (tombstones). */
typedef struct ptrmap {
  const void **keys;
  void **vals;
  size_t cap, n, used; /* capacity (power of two), live keys, live + tombstones */
} ptrmap;

/* Sets map[k] = v. false on out of memory (the map is unchanged). */
bool ptrmap_put(ptrmap *pm, const void *k, void *v);
/* map[k], or NULL when absent. */
void *ptrmap_get(const ptrmap *pm, const void *k);
/* Whether k is a key (also when it maps to NULL). */
bool ptrmap_has(const ptrmap *pm, const void *k);
/* Removes k (no-op when absent). */
void ptrmap_del(ptrmap *pm, const void *k);
/* Frees the tables; leaves `pm` zeroed. */
void ptrmap_free(ptrmap *pm);

/* ------------------------------------------------------------- op facts */

/* Whether `op` computes its results from its operands alone, so that it may
 * be removed when its results are unused, merged with an identical op (CSE)
 * or evaluated at compile time: no OPF_SIDE_EFFECT flag (custom calls, rng,
 * collectives, check ops, func.call, ... carry it), not a terminator, not a
 * stablehlo.composite (its decomposition is not looked at), and every op of
 * its regions is pure too (terminators of those regions excepted). */
bool op_is_pure(const hlo_op *op);

/* Number of ops of `f`, nested regions included, terminators excluded. */
uint64_t func_count_ops(const hlo_func *f);
/* The same summed over every function of `m`. */
uint64_t module_count_ops(const hlo_module_ir *m);

/* Unlinks `op` from its block, and the ops of its regions from theirs (so
 * that `op->parent == NULL` tells a removed op, nested ones included). The
 * memory stays in the arena. Does not touch uses: see use_index_erase. */
void op_erase_tree(hlo_op *op);

/* ------------------------------------------------------------- cloning */

/* A copy of `src`: operands mapped through `vm` (a value missing from vm
 * stays as it is), results recorded in `vm` (old result -> new result),
 * attributes copied shallowly (the array is new, the attribute values are
 * shared: they are never edited in place), regions cloned recursively with
 * their block arguments recorded in `vm`. Inserted before `before` when it
 * is non-NULL, else appended to `dst`. *count is incremented per op made;
 * past `max_count` the copy stops with HLO_RESOURCE_EXHAUSTED. *out (may be
 * NULL) gets the copy. Errors: HLO_RESOURCE_EXHAUSTED (located at src). */
HLO_MUST_USE hlo_status op_clone(hlo_module_ir *m, const hlo_op *src, hlo_block *dst,
                                 hlo_op *before, ptrmap *vm, uint64_t *count,
                                 uint64_t max_count, hlo_op **out);

/* ------------------------------------------------------------ functions */

/* Removes from `m` every private function (visibility "private") that no
 * function outside this set refers to, directly or through others: a
 * reference is a symbol attribute (`@name`, also inside arrays, dictionaries
 * and structs), a string attribute equal to the name, or an opaque
 * attribute's text containing `@name`. The entry function (`entry`, or
 * module_entry's rule when NULL) and public functions are kept.
 * *out_removed (may be NULL) gets the number removed. Errors:
 * HLO_RESOURCE_EXHAUSTED. */
HLO_MUST_USE hlo_status module_remove_dead_funcs(hlo_module_ir *m, const char *entry,
                                                 uint32_t *out_removed);

/* A splat-like constant: when `v` is the result of a stablehlo.constant
 * whose value is a dense attribute with one element or a splat (not a
 * resource, not quantized), returns a pointer to that element's bytes
 * (hlo_dtype_size of its element type); else NULL. */
const uint8_t *value_splat_bytes(const hlo_value *v);
/* The dense `value` attribute of `v`'s defining stablehlo.constant, or NULL
 * when `v` is not a constant's result. */
const hlo_attr *value_constant_attr(const hlo_value *v);
#endif
