/* interp_linalg_internal.h — what the interpreter's linear-algebra kernel
 * files (interp_linalg.c, interp_conv.c, interp_fft.c, interp_rng.c) share:
 * their register functions, reading integer-list attributes without
 * allocating, and loading a tensor's elements into a flat array of one
 * arithmetic domain. Private to those files. */
#ifndef HLO_INTERP_INTERP_LINALG_INTERNAL_H
#define HLO_INTERP_INTERP_LINALG_INTERNAL_H
#include <stdbool.h>
#include <stdint.h>
#include "interp/interp.h"

/* Largest rank (and attribute list length) these kernels accept. */
#define LA_MAX_RANK 64

/* Register the kernels of one file into the core's table; called by
 * interp_register_linalg. */
void interp_register_conv(interp_kernel *table);  /* convolution, dynamic_conv */
void interp_register_fft(interp_kernel *table);   /* fft */
void interp_register_rng(interp_kernel *table);   /* rng, rng_bit_generator */

/* The arithmetic a kernel does for an element type: bool (or/and),
 * wrapping integers (signed or unsigned, carried in uint64), floats (in
 * double) or complex numbers (two doubles). */
typedef enum la_domain { LA_BOOL, LA_SINT, LA_UINT, LA_FLOAT, LA_COMPLEX } la_domain;
/* The domain of element type `t` (every float type, f8 to f64: LA_FLOAT). */
la_domain la_domain_of(hlo_dtype t);

/* The integer list of attribute `at` (ATTR_DENSE_ARRAY, ATTR_ARRAY of
 * ATTR_INT, or integer ATTR_DENSE, splat expanded) copied into buf[0..cap).
 * Sets *out_n. Returns false when `at` is none of those or holds more than
 * `cap` values. */
bool la_attr_ints(const hlo_attr *at, int64_t *buf, uint32_t cap, uint32_t *out_n);

/* Whether float (or complex) arithmetic on element type `t` is done in
 * single precision: every float type but f64 (complex: but complex<f64>).
 * The spec multiplies and adds in the element type; XLA computes types
 * narrower than f32 in f32, and the conformance corpus's expected values
 * come from XLA, so accumulating in f32 (f64 for f64) matches both. */
bool la_single(hlo_dtype t);
/* acc += a * b on complex numbers (re, im pairs), in float arithmetic when
 * `single`, else double. */
void la_cmac(double *acc, const double *a, const double *b, bool single);

/* A malloc'd array of the elements of `t` as doubles: num_elems of them, or
 * 2*num_elems (re, im interleaved) when `cplx`. NULL when out of memory
 * (a tensor with no elements gives a 1-element allocation). Yours to free. */
double *la_load_f64(const tensor *t, bool cplx);
/* A malloc'd array of the elements of `t` as uint64: signed integers
 * sign-extended, unsigned zero-extended, bool 0/1. NULL when out of memory. */
uint64_t *la_load_u64(const tensor *t);
/* Writes one accumulated value into element i of `t` in domain `d`:
 * f[0] (and f[1] for complex) for LA_FLOAT/LA_COMPLEX, u for the others. */
void la_store(tensor *t, la_domain d, int64_t i, const double *f, uint64_t u);
#endif
