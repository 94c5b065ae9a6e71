/* window_describe.h — a `stablehlo.reduce_window` or
 * `stablehlo.select_and_scatter` op decoded into one backend-neutral
 * description (backend_window) that native backends read instead of the
 * op's attributes and regions: the CPU backend's window kernels
 * (backend/cpu/window.c) now, a GPU one later.
 *
 * What is described (spec, "reduce_window" and "select_and_scatter"):
 *   - one operand (variadic reduce_window, several operands, is not
 *     described), static and not quantized, of rank 0 .. BACKEND_WINDOW_MAX_RANK;
 *     operand, init value, source and result of one element type;
 *   - window_dimensions, window_strides, padding (negative too) and, for
 *     reduce_window, base_dilations and window_dilations, defaults filled in;
 *   - the region recognised as a known reducer: one binary op of the two
 *     block arguments (either order) returned as is — add, maximum,
 *     minimum, multiply, and, or — on 0-d tensors of the element type;
 *   - for select_and_scatter, the select region recognised as one compare
 *     of the two arguments (GE, GT, LE, LT; arguments swapped: the mirrored
 *     direction) whose compare_type is not TOTALORDER, and the scatter
 *     region as a reducer (above).
 *
 * Semantics (spec; the interpreter, interp/interp_reduce.c, runs the same):
 * reduce_window: result[o] = init folded left to right, acc = body(acc, e),
 * over the window's elements e in row-major window order, where window
 * element w of result index o sits at position
 *   q[d] = o[d] * window_strides[d] + w[d] * window_dilations[d] - padding_low[d]
 * of the base-dilated operand: e = operand[q / base_dilations] when every q[d]
 * is >= 0, a multiple of base_dilations[d] and q[d] / base_dilations[d] <
 * operand dim d; else e = init (padding and dilation holes).
 * select_and_scatter: result = init everywhere; for each source index s in
 * row-major order, the window positions q[d] = s[d] * window_strides[d] +
 * w[d] - padding_low[d] inside the operand are walked in row-major window
 * order; the first is selected, each next one replaces it unless
 * select(selected value, current value) holds; then result[selected] =
 * scatter(result[selected], source[s]) (nothing when no position is inside). */
#ifndef HLO_BACKEND_WINDOW_DESCRIBE_H
#define HLO_BACKEND_WINDOW_DESCRIBE_H
#include <stdbool.h>
#include <stdint.h>
#include "ir/ir.h"

/* Most dims a described window op has. */
#define BACKEND_WINDOW_MAX_RANK 8

typedef enum backend_window_kind {
  BACKEND_REDUCE_WINDOW,
  BACKEND_SELECT_AND_SCATTER,
} backend_window_kind;

/* A region recognised as one binary op (the spec's op of that name; on i1,
 * add is or, multiply is and, maximum is or, minimum is and, as the
 * interpreter computes them). */
typedef enum backend_reducer {
  BACKEND_REDUCER_ADD,
  BACKEND_REDUCER_MAX,
  BACKEND_REDUCER_MIN,
  BACKEND_REDUCER_MUL,
  BACKEND_REDUCER_AND,
  BACKEND_REDUCER_OR,
} backend_reducer;

/* select_and_scatter's select region: select(a, b) = a DIR b, with the
 * compare's FLOAT semantics on floats (NaN: false), SIGNED on signed and
 * UNSIGNED on unsigned integers and i1. */
typedef enum backend_select {
  BACKEND_SELECT_GE,
  BACKEND_SELECT_GT,
  BACKEND_SELECT_LE,
  BACKEND_SELECT_LT,
} backend_select;

/* A window op, decoded. Per-dim lists have `rank` entries. */
typedef struct backend_window {
  backend_window_kind kind;
  hlo_dtype dtype;                   /* operand, init, source and result alike */
  uint32_t rank;
  int64_t operand_dims[BACKEND_WINDOW_MAX_RANK];
  /* reduce_window: the result's dims; select_and_scatter: the source's
   * (the result's are operand_dims) */
  int64_t window_out_dims[BACKEND_WINDOW_MAX_RANK];
  int64_t window_dimensions[BACKEND_WINDOW_MAX_RANK]; /* >= 1 */
  int64_t window_strides[BACKEND_WINDOW_MAX_RANK];    /* >= 1 (default 1) */
  int64_t base_dilations[BACKEND_WINDOW_MAX_RANK];    /* >= 1; always 1 for select_and_scatter */
  int64_t window_dilations[BACKEND_WINDOW_MAX_RANK];  /* >= 1; always 1 for select_and_scatter */
  int64_t padding_low[BACKEND_WINDOW_MAX_RANK];       /* may be negative (default 0) */
  int64_t padding_high[BACKEND_WINDOW_MAX_RANK];
  backend_reducer reducer;           /* reduce_window's body; select_and_scatter's scatter */
  backend_select select;             /* select_and_scatter only */
  hlo_loc loc;                       /* the op's, for errors */
} backend_window;

/* Decodes `op`, a stablehlo.reduce_window with one operand or a
 * stablehlo.select_and_scatter, into *out, checking it against the spec's
 * constraints (one element type throughout, attribute lengths, positive
 * window sizes, strides and dilations, and the result / source shape
 * the spec's formula gives). Returns false (and leaves *out unspecified)
 * for anything else: another op, variadic reduce_window, dynamic or
 * quantized types, regions that are not a known reducer / comparison
 * (see above), promoted region types, attributes past the interpreter's
 * limits (|padding| <= 2^40, strides, dilations and window sizes <= 2^26).
 * A false answer is no error: the interpreter keeps the op. */
bool window_describe(const hlo_op *op, backend_window *out);

/* Element counts: the operand (= select_and_scatter's result) and the
 * window output (reduce_window's result, select_and_scatter's source). */
int64_t window_operand_elements(const backend_window *w);
int64_t window_out_elements(const backend_window *w);

/* Elements in one window (the product of window_dimensions). */
int64_t window_size(const backend_window *w);

/* The spec's names of a reducer ("add", "maximum", ...) and of a select
 * direction ("GE", ...), for messages and notes. */
const char *backend_reducer_name(backend_reducer r);
const char *backend_select_name(backend_select s);

#endif /* HLO_BACKEND_WINDOW_DESCRIBE_H */
