/* element.h — reading and writing one element of any element type in the
 * storage layout of dtypes.def (host buffers, dense literals, interpreter
 * tensors).
 *
 * Values travel as: int64 (bool, signed), uint64 (unsigned), double (float),
 * or two doubles (complex). Writing wraps integers to the type's width (two's
 * complement, as the spec's integer arithmetic does) and rounds floats to
 * nearest even (support/float.h). */
#ifndef HLO_IR_ELEMENT_H
#define HLO_IR_ELEMENT_H
#include <stdbool.h>
#include <stdint.h>
#include "hlo/hlo.h"

/* The class of `t` (bool, signed, unsigned, float, complex) from dtypes.def.
 * `t` must be a valid hlo_dtype (these index the table unchecked). */
hlo_dtype_class dtype_class(hlo_dtype t);
/* Bit width of `t` (i4: 4, complex<f32>: 64). */
int dtype_bits(hlo_dtype t);
bool dtype_is_int(hlo_dtype t);     /* SINT or UINT (not bool) */
bool dtype_is_float(hlo_dtype t);
/* The dtype spelled `s[0..n)` ("f32", "complex<f64>"); false if none. */
bool dtype_parse(const char *s, size_t n, hlo_dtype *out);

/* Element `i` of `data` as the given representation. Reading an integer as
 * double converts; reading a float as int64 truncates toward zero (the
 * caller keeps it in range: NaN/out-of-range is undefined in C); complex
 * read as a real gives the real part. */
int64_t elem_get_i64(hlo_dtype t, const void *data, int64_t i);
uint64_t elem_get_u64(hlo_dtype t, const void *data, int64_t i);
double elem_get_f64(hlo_dtype t, const void *data, int64_t i);
/* Complex element as (re, im); real types give im = 0. */
void elem_get_c128(hlo_dtype t, const void *data, int64_t i, double *re, double *im);
/* Raw storage bits of element i (zero-extended). */
uint64_t elem_get_bits(hlo_dtype t, const void *data, int64_t i);

/* Element `i` of `data` from the given representation: integers wrap to the
 * type (int_wrap), floats round to nearest even, a real written to a complex
 * type gets im = 0, a float written to an integer type truncates (NaN -> 0,
 * clamped to the int64/uint64 range; callers saturate first where the spec
 * says so). elem_set_bits stores the low storage bits unchanged. */
void elem_set_i64(hlo_dtype t, void *data, int64_t i, int64_t v);  /* wraps */
void elem_set_u64(hlo_dtype t, void *data, int64_t i, uint64_t v); /* wraps */
void elem_set_f64(hlo_dtype t, void *data, int64_t i, double v);   /* rounds */
void elem_set_c128(hlo_dtype t, void *data, int64_t i, double re, double im);
void elem_set_bits(hlo_dtype t, void *data, int64_t i, uint64_t bits);

/* Wraps `v` to the range of integer type `t` (sign-extends for SINT,
 * zero-extends for UINT, 0/1 for bool). */
int64_t int_wrap(hlo_dtype t, int64_t v);
/* Smallest and largest value of integer type `t` (bool: 0 and 1; unsigned
 * min is 0; non-integer types give 0 from int_min). */
int64_t int_min(hlo_dtype t);
uint64_t int_max(hlo_dtype t);
#endif
