/* cuda_window.h — the CUDA backend's reduce_window and select_and_scatter
 * slots (backend.h: window_takes, reduce_window, select_and_scatter): a
 * backend_window (backend/window_describe.h) computed on the GPU by
 * kernels of one CUDA C source; an element type's kernels are compiled by
 * NVRTC on the first call for that type, once per process.
 *
 * What is taken: exactly what the CPU backend takes (backend/cpu/window.h:
 * cpu_window_takes): element types f32, f64, bf16, f16 (computed in f32
 * and rounded to the type after every step), i1, i8, i16, i32, i64, ui8,
 * ui16, ui32, ui64; reducers add, maximum, minimum, multiply (and `and` /
 * `or` on integers and i1); select directions GE, GT, LE, LT; ranks up to
 * BACKEND_WINDOW_MAX_RANK; windows of fewer than 2^31 elements.
 *
 * Results: the interpreter's bits (and the CPU backend's), NaN payloads
 * excepted as in window.h: every result element is the same left fold
 * over the same elements in the same order with the same rounding per
 * step.
 *   reduce_window: one thread per result element folds init, then the
 *   window's elements in row-major window order (init for padding and
 *   base-dilation holes: window_describe.h's formula).
 *   select_and_scatter, without atomics: one thread per result (=
 *   operand) element p visits the windows that contain p in row-major
 *   source order, redoes each one's selection (the first position inside
 *   the operand, replaced by each next one unless select(selected,
 *   current) holds: the first in window order wins ties for GE / LE), and
 *   folds the source elements of the windows that selected p into init in
 *   that order — the order in which the interpreter scatters into p. So
 *   add is bit-identical too, and the result is deterministic.
 *
 * Memory: every pointer is device memory of the backend (cuda_backend.c);
 * the calls enqueue one kernel on the backend's one stream
 * (cuda_state()->stream) and return without waiting. No scratch.
 *
 * The kernels' source (cuda_window_source_body) is written in the common
 * subset of C11 and C++17 over a few prelude macros, so the tests compile
 * it with the host C compiler and run it over an emulated grid
 * (tests/unit/test_cuda_window.c). */
#ifndef HLO_BACKEND_CUDA_CUDA_WINDOW_H
#define HLO_BACKEND_CUDA_CUDA_WINDOW_H
#include <stdbool.h>
#include <stdint.h>
#include "backend/window_describe.h"
#include "hlo/hlo.h"

/* The kernels' one parameter block after the pointers (passed by value;
 * the source's wk_desc, field for field): per-dim lists have `rank`
 * entries, the rest zero. */
typedef struct cuda_window_desc {
  int64_t rank;
  int64_t red;            /* backend_reducer */
  int64_t sel;            /* backend_select (select_and_scatter) */
  int64_t wsize;          /* elements of a window */
  int64_t n_out;          /* elements of the window output (result / source) */
  int64_t n_x;            /* elements of the operand */
  int64_t unused0, unused1;
  int64_t x[BACKEND_WINDOW_MAX_RANK];   /* operand dims */
  int64_t xs[BACKEND_WINDOW_MAX_RANK];  /* operand strides (elements, row-major) */
  int64_t out[BACKEND_WINDOW_MAX_RANK]; /* window output dims */
  int64_t k[BACKEND_WINDOW_MAX_RANK];   /* window dimensions */
  int64_t s[BACKEND_WINDOW_MAX_RANK];   /* window strides */
  int64_t bd[BACKEND_WINDOW_MAX_RANK];  /* base dilations */
  int64_t wd[BACKEND_WINDOW_MAX_RANK];  /* window dilations */
  int64_t pl[BACKEND_WINDOW_MAX_RANK];  /* padding low */
} cuda_window_desc;

/* Whether cuda_reduce_window / cuda_select_and_scatter compute `w`: the
 * list above (cpu_window_takes' answer). Needs no GPU; but once the CUDA
 * backend is started (backend_cuda), a true answer first compiles and
 * loads the kernels of w's element type (once per process: the runtime
 * asks at compile time, so the first run does not compile), and is false
 * when they do not load (the op then stays where it was; the slots give
 * the error). Thread-safe. */
bool cuda_window_takes(const backend_window *w);

/* reduce_window `w` (kind BACKEND_REDUCE_WINDOW, cuda_window_takes(w)):
 * inputs[0] the operand (dense row-major, w->operand_dims), inputs[1] the
 * init value (one element), outputs[0] the result (w->window_out_dims;
 * overwritten, must not overlap the inputs); element type w->dtype; all
 * device pointers, borrowed. Asynchronous on the backend's stream.
 * Thread-safe. The first use of an element type (this call or
 * cuda_window_takes) compiles that type's kernels (NVRTC, once per
 * process); later calls only launch. Errors: HLO_UNIMPLEMENTED (at
 * w->loc) for the wrong kind or a form not taken (rank, element type,
 * reducer, window size); HLO_UNAVAILABLE when the CUDA backend is not
 * started (backend_cuda) or NVRTC is missing; HLO_INTERNAL for a failed
 * driver call or a kernel NVRTC rejects (its log). */
HLO_MUST_USE hlo_status cuda_reduce_window(const backend_window *w, void *const *inputs,
                                           void *const *outputs);

/* select_and_scatter `w` (kind BACKEND_SELECT_AND_SCATTER,
 * cuda_window_takes(w)): `operand` (w->operand_dims), `source`
 * (w->window_out_dims), `init` (one element), `output` the result
 * (w->operand_dims; overwritten, must not overlap the inputs); device
 * pointers, borrowed. Asynchronous, thread-safe; errors as
 * cuda_reduce_window's. */
HLO_MUST_USE hlo_status cuda_select_and_scatter(const backend_window *w, const void *operand,
                                                const void *source, const void *init,
                                                void *output);

/* ---- for the tests ---- */

/* The whole source for the device: "#define WK_ALL", the device prelude,
 * then the body (every element type's kernels); static. */
const char *cuda_window_source(void);
/* The unit the slots compile for element type t: "#define WK_ONLY_SUF",
 * the device prelude, the body (t's kernels only). malloc'd, yours; NULL
 * when t is not taken or out of memory. */
char *cuda_window_unit(hlo_dtype t);
/* The body alone: the kernels over the prelude's macros WK_KERNEL (the
 * kernel prefix, return type included), WK_DEV (a device helper's
 * prefix), WK_TID and WK_NTH (the global thread index and the thread
 * count, int64_t: a grid-stride loop), and the functions wk_f2u, wk_u2f,
 * wk_d2u, wk_u2d (float / double bits), with int8_t .. uint64_t and bool
 * defined. Its kernels are named as cuda_window_kernel_name gives, with
 * parameters (wk_desc, x, init, out) for reduce_window and (wk_desc, x,
 * source, init, out) for select_and_scatter; an element type's kernels
 * are defined when WK_ALL or WK_ONLY_SUF is (SUF: f32, bf16, u8, i1,
 * ...). Static. */
const char *cuda_window_source_body(void);
/* The kernel computing `w` ("hlo_window_rw_f32", "hlo_window_ss_bf16",
 * ...; static), NULL when !cuda_window_takes(w). */
const char *cuda_window_kernel_name(const backend_window *w);
/* The kernel parameter block of `w`. */
void cuda_window_make_desc(const backend_window *w, cuda_window_desc *out);

#endif /* HLO_BACKEND_CUDA_CUDA_WINDOW_H */
