/* window.h — the CPU backend's reduce_window and select_and_scatter: a
 * backend_window (backend/window_describe.h) computed natively, with the
 * interpreter's semantics and, where the interpreter's order is kept, its
 * bits (window.c says how).
 *
 * Element types: f32, f64, bf16, f16 (computed in f32 and rounded to the
 * type after every step, as the interpreter rounds every body result), i1,
 * i8, i16, i32, i64, ui8, ui16, ui32, ui64; reducers add, maximum, minimum,
 * multiply (and `and` / `or` on integers and i1); select directions GE, GT,
 * LE, LT. Anything else stays on the interpreter.
 *
 * Results equal the interpreter's bit for bit: every result element is the
 * same left fold over the same elements in the same order (reduce_window:
 * init, then the window in row-major order, padding and dilation holes
 * folding the init value; select_and_scatter: the select walk in window
 * order, the scatters into one result element in row-major source order),
 * with the same rounding per step. The one exception: a NaN result may
 * carry another NaN's payload or quiet bit than the interpreter's (which
 * passes values through double). */
#ifndef HLO_BACKEND_CPU_WINDOW_H
#define HLO_BACKEND_CPU_WINDOW_H
#include <stdbool.h>
#include "backend/window_describe.h"

/* Whether cpu_reduce_window / cpu_select_and_scatter compute `w`: an
 * element type and reducer listed above, windows of fewer than 2^31
 * elements. */
bool cpu_window_takes(const backend_window *w);

/* reduce_window `w` (kind BACKEND_REDUCE_WINDOW, cpu_window_takes(w)):
 * inputs[0] the operand (dense row-major, w->operand_dims), inputs[1] the
 * init value (one element), outputs[0] the result (w->window_out_dims;
 * overwritten, must not overlap the inputs). Element type w->dtype
 * throughout. All borrowed; no scratch. Spreads rows of the result over
 * hlo's thread pool (support/thread_pool.h) when there is enough work.
 * Thread-safe. Errors (at w->loc): HLO_UNIMPLEMENTED when the kind is wrong
 * or !cpu_window_takes(w). */
HLO_MUST_USE hlo_status cpu_reduce_window(const backend_window *w, void *const *inputs,
                                          void *const *outputs);

/* select_and_scatter `w` (kind BACKEND_SELECT_AND_SCATTER,
 * cpu_window_takes(w)): `operand` (w->operand_dims), `source`
 * (w->window_out_dims), `init` (one element), `output` the result
 * (w->operand_dims; overwritten, must not overlap the inputs). All
 * borrowed; no scratch. Uses hlo's thread pool over the outermost dim when
 * the windows along it do not overlap (stride >= window size) and there is
 * enough work. Thread-safe. Errors as cpu_reduce_window's. */
HLO_MUST_USE hlo_status cpu_select_and_scatter(const backend_window *w, const void *operand,
                                               const void *source, const void *init,
                                               void *output);

#endif /* HLO_BACKEND_CPU_WINDOW_H */
