/* cost_analysis.h — FLOPs, transcendentals and bytes accessed of a program,
 * counted the way XLA's HloCostAnalysis counts them (what JAX's
 * `compiled.cost_analysis()` reports): an analysis, the module is not changed.
 *
 * The rules, per op (source: XLA's xla/service/hlo_cost_analysis.cc; see
 * cost_analysis.c for each one):
 *   - elementwise ops (arithmetic, compare, select, clamp, convert,
 *     bitcast_convert, logic): 1 flop per result element; the transcendental
 *     ones (exp, expm1, log, log1p, logistic, power, sqrt, rsqrt, cbrt, tanh,
 *     sin, cos, tan, atan2, erf) count 1 transcendental per element instead.
 *     `logistic` counts as XLA:CPU sees it after its LogisticExpander,
 *     1/(1+exp(-x)): 3 flops and 1 transcendental per element.
 *   - dot_general / dot: 2 * (result elements) * (product of the lhs
 *     contracting dims) — batch dims are in the result.
 *   - convolution: 2 * (input features / feature_group_count) * (output
 *     features) * (batch / batch_group_count) * the product over spatial dims
 *     of the number of (output, kernel) position pairs that read a real input
 *     element (padding and dilation holes excluded), as XLA computes it.
 *   - reduce: (input elements - output elements) * the body's flops, after
 *     XLA:CPU's tree-reduction rewrite (a reduced dimension over 32 becomes a
 *     padded reduce_window of 32 and a smaller reduce, unless the reduce is
 *     an f32/f64 add/max/min over 4096 elements or more, which XLA:CPU hands
 *     to YNNPACK); reduce_window: (window size - 1) * output elements * the
 *     body's flops;
 *     select_and_scatter, map, scatter, sort (n log2 n), fft, cholesky,
 *     triangular_solve, rng: XLA's formulas.
 *   - call: its callee's cost; while: the body's and the condition's cost
 *     ONCE (XLA does not know the trip count); if/case: the maximum over the
 *     branches of each count.
 *   - custom_call: unknown: XLA reports -1 flops and -1 bytes for each, and
 *     so does this analysis (`num_unknown` counts them).
 *   - bytes accessed: operand bytes + result bytes per op, with XLA's
 *     exceptions (constants, parameters, get_tuple_element, reshape — a
 *     bitcast on XLA:CPU's row-major layouts — and transposes of size-1 dims
 *     only: 0; slice and dynamic_slice: twice the result;
 *     dynamic_update_slice: twice the update; gather/scatter; tuple: 8 bytes
 *     a pointer).
 *   - dead ops (no effect, results unused) are not counted: XLA's DCE
 *     removes them first.
 *
 * XLA measures its OPTIMISED program: simplified, CSE'd, constants folded,
 * fused. This analysis counts the module it is given, so its flops agree with
 * XLA's to the extent that those optimisations leave the arithmetic alone:
 * x * 1 deleted, a duplicated reduction merged by CSE, or a cheap producer
 * that XLA's fusion duplicates into two consumers (and then counts twice)
 * make the counts differ until our own passes do the same (see
 * tests/suite_cost.sh for the programs where that is so today). Bytes
 * accessed will not agree before our own fusion exists: XLA counts a
 * fusion's inputs and outputs only, not its intermediates.
 *
 * chlo: run pass_chlo_legalize first (XLA decomposes chlo ops the same way),
 * except that chlo.erf, chlo.square and chlo.top_k are costed directly when
 * still present (XLA keeps erf and top_k as single HLO ops; square is a
 * multiply). Other chlo ops are an HLO_UNIMPLEMENTED error. */
#ifndef HLO_PASSES_COST_ANALYSIS_H
#define HLO_PASSES_COST_ANALYSIS_H
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include "ir/ir.h"

/* The three counts XLA's cost_analysis() reports. */
typedef struct cost_counts {
  double flops;
  double transcendentals;
  double bytes_accessed;
} cost_counts;

/* One op of the program and what it costs. */
typedef struct cost_row {
  const hlo_op *op;     /* lent: lives in the analysed module */
  uint32_t depth;       /* 0: an op of the entry function; d+1: an op of the
                           body of a func.call/while/if/case row of depth d */
  int32_t parent;       /* index of that enclosing row, -1 at depth 0 */
  cost_counts cost;     /* the op's cost; for call/while/if/case it includes
                           its bodies (its nested rows are not added again) */
} cost_row;

/* The analysis of one entry function. */
typedef struct cost_report {
  const char *entry;    /* the entry function's name (lent from the module) */
  cost_counts total;    /* the program's totals = sum of the depth-0 rows */
  uint32_t num_rows;
  cost_row *rows;       /* in program order, a body's rows after its op's row;
                           malloc'd, freed by cost_report_free */
  uint32_t num_unknown; /* custom calls counted as XLA does (-1 flops, -1 bytes) */
} cost_report;

/* Analyses the entry function `entry` of `m` (NULL: @main, see
 * module_entry) and fills *out (which cost_report_free releases; zeroed on
 * error). The module must be verified and static (refine shapes first), and
 * chlo ops legalized except those named above. `m` is not changed.
 * Errors: HLO_NOT_FOUND when there is no such entry function or a called
 * function is missing; HLO_UNIMPLEMENTED at an op that has dynamic
 * dimensions or is a chlo op XLA decomposes (legalize first);
 * HLO_INVALID_ARGUMENT for recursive calls; HLO_RESOURCE_EXHAUSTED. */
HLO_MUST_USE hlo_status cost_analysis(const hlo_module_ir *m, const char *entry,
                                      cost_report *out);

/* Frees the rows of `r` and zeroes it. NULL and zeroed reports are fine. */
void cost_report_free(cost_report *r);

/* A short label of a row's op for tables: "dot_general", "custom_call
 * @lapack_spotrf_ffi", "call @silu" (the op name without its dialect
 * unless it is not stablehlo). Writes at most `cap` bytes (NUL included)
 * to `buf` and returns buf. */
const char *cost_op_label(const hlo_op *op, char *buf, size_t cap);

/* Writes `r` to `f` as one JSON object:
 *   {"entry": "main", "flops": F, "transcendentals": T, "bytes accessed": B,
 *    "unknown": N, "ops": [{"op": LABEL, "loc": "FILE:LINE:COL", "depth": D,
 *    "flops": F, "transcendentals": T, "bytes accessed": B}, ...]}
 * The totals use the key names of JAX's cost_analysis(). With
 * `skip_zero`, rows whose three counts are all 0 are left out of "ops".
 * Errors: HLO_UNAVAILABLE when writing fails. */
HLO_MUST_USE hlo_status cost_report_write_json(const cost_report *r, bool skip_zero, FILE *f);

#endif /* HLO_PASSES_COST_ANALYSIS_H */
