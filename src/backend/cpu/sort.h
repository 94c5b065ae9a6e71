/* sort.h — the CPU backend's stablehlo.sort: a described sort
 * (backend/sort_describe.h) run natively, each slice along the sorted
 * dimension independently (rows spread over the thread pool when there is
 * enough work), every operand permuted together. The order is bit for bit
 * the reference interpreter's (interp/interp_sort.c), ties, NaNs and
 * signed zeros included (bench/SORT.md):
 *   - a row whose keys compare as a strict weak order (integers,
 *     TOTALORDER floats, FLOAT keys without a NaN in the row) is sorted
 *     stably on order-preserving integer keys: insertion sort for short
 *     rows, an LSD radix sort for long ones; a stable sort under a strict
 *     weak order has one result, the interpreter's;
 *   - a row where a FLOAT key holds a NaN (IEEE compare: not a strict weak
 *     order, the result depends on the algorithm) runs the interpreter's
 *     own bottom-up merge sort with the comparator evaluated natively, so
 *     it makes the same comparisons and the same order. */
#ifndef HLO_BACKEND_CPU_SORT_H
#define HLO_BACKEND_CPU_SORT_H
#include <stdbool.h>
#include "backend/sort_describe.h"
#include "support/status.h"

/* Whether cpu_sort computes `s` (every described sort with keys of
 * integer, i1, f16, bf16, f32, f64 or complex-part type, payloads up to
 * 16 bytes an element, rows under 2^31 elements). */
bool cpu_sort_takes(const backend_sort *s);

/* Sorts: outputs[k] (s->dims, s->dtypes[k], row-major) = inputs[k] with
 * every slice along s->dimension permuted into the comparator's order
 * (above). Outputs must not share memory with inputs. Errors:
 * HLO_RESOURCE_EXHAUSTED when scratch memory cannot be had. */
HLO_MUST_USE hlo_status cpu_sort(const backend_sort *s, void *const *inputs, void *const *outputs);

#endif /* HLO_BACKEND_CPU_SORT_H */
