/* row_locality.h — may the leading dimension of some arguments be padded
 * with extra rows without changing the real rows' results? (an analysis,
 * used by `hlo run --pad-to-bucket`; the rules are in row_locality.c). */
#ifndef HLO_PASSES_ROW_LOCALITY_H
#define HLO_PASSES_ROW_LOCALITY_H
#include <stdbool.h>
#include <stdint.h>

#include "ir/ir.h"

/* Per function result: how it relates to the padded rows. */
typedef enum rl_result_kind {
  RL_RESULT_CLEAN,   /* independent of the padding: the same padded or not */
  RL_RESULT_ROWS,    /* row-aligned on dim 0: cut it back to the real rows */
} rl_result_kind;

typedef struct row_locality {
  bool ok;               /* padding provably cannot change the real rows' results */
  /* when !ok: */
  const hlo_op *op;      /* the first op that mixes rows (NULL: a result is at fault) */
  const char *why;       /* what it does with them: "sums over them" */
  int result;            /* the result at fault when op is NULL, else -1 */
  int cls;               /* the row class involved (see arg_class), or -1 */
  /* when ok: num_results entries (caller-owned array passed in) */
  rl_result_kind *kinds;
  int *result_class;     /* the row class of each RL_RESULT_ROWS result */
} row_locality;

/* Analyses the dynamic (unrefined) entry function `f` of `m`. arg_class[i]
 * is -1 for an argument that is not padded, else the class (0, 1, ...) of
 * argument i's leading dimension: arguments of one class have the same row
 * count N_c and are padded to the same size. `assertions_checked`: the
 * caller has checked the program's `shape_assertion` custom calls at the
 * unpadded sizes (by refining a copy), so that they may read row counts.
 * out->kinds and out->result_class must point at f->num_results entries.
 * Returns false only on out of memory. */
bool row_locality_analyse(const hlo_module_ir *m, const hlo_func *f, const int *arg_class,
                          bool assertions_checked, row_locality *out);

#endif
