/* interp_util.h — small helpers that kernel files of several families
 * (shape, reduce, gather, collective, custom_call, linalg, conv) share:
 * releasing a set of result tensors, handing results over at the end of a
 * kernel, and loading the two operands of a multiply-accumulate kernel.
 * Private to src/interp; not a public interface. */
#ifndef HLO_INTERP_INTERP_UTIL_H
#define HLO_INTERP_INTERP_UTIL_H
#include <stdbool.h>
#include <stdint.h>
#include "interp/interp.h"

/* Releases v[0..n) (NULL entries allowed) and sets each to NULL. */
void iu_release_all(tensor **v, uint32_t n);

/* The end of a kernel that built results res[0..n): when `st` is NULL,
 * moves them to out[0..n); otherwise releases them (iu_release_all).
 * Returns `st`, so a kernel ends with `return iu_finish(st, res, n, out);`. */
hlo_status iu_finish(hlo_status st, tensor **res, uint32_t n, tensor **out);

/* Loads the elements of `lhs` and `rhs` for a multiply-accumulate kernel
 * (dot_general, convolution): when `fl`, as doubles into *lf / *rf
 * (re, im interleaved when `cx`; la_load_f64), else as uint64 into *lu /
 * *ru (la_load_u64); the other pair is set to NULL. Returns false when out
 * of memory, with all four freed and NULL. The arrays are the caller's to
 * free. */
bool iu_load_operands(const tensor *lhs, const tensor *rhs, bool fl, bool cx, double **lf,
                      double **rf, uint64_t **lu, uint64_t **ru);

#endif
