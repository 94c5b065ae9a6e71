/* interp_shape_internal.h — helpers shared by the interpreter's
 * data-movement and reduction kernels (interp_shape.c, interp_gather.c,
 * interp_reduce.c, interp_sort.c). Not a public interface.
 *
 * Conventions: every helper that can fail returns a status located at the
 * op (interp_error): HLO_INVALID_ARGUMENT for a malformed operand, result
 * type or attribute, HLO_UNIMPLEMENTED for a dynamic shape or a rank over
 * ISH_MAX_RANK, HLO_RESOURCE_EXHAUSTED on out of memory. Integer lists read from attributes live in a
 * caller-owned arena (one per kernel call, freed when the kernel returns),
 * so nothing grows across loop iterations. */
#ifndef HLO_INTERP_INTERP_SHAPE_INTERNAL_H
#define HLO_INTERP_INTERP_SHAPE_INTERNAL_H
#include <stdbool.h>
#include <stdint.h>
#include "interp/interp.h"

/* Largest rank these kernels handle (index arrays live on the stack). */
#define ISH_MAX_RANK 64

/* The integer list attribute `name` of `op` (ATTR_DENSE_ARRAY, ATTR_ARRAY of
 * ints, or an integer ATTR_DENSE), read into `a`. When absent: *out_n = 0
 * and *out = NULL, unless `required`, which is an HLO_INVALID_ARGUMENT
 * error. A present attribute of another kind is an error too (so is out of
 * memory while decoding it, reported as the same HLO_INVALID_ARGUMENT). */
HLO_MUST_USE hlo_status ish_attr_ints(const hlo_op *op, arena *a, const char *name,
                                      bool required, int64_t **out, uint32_t *out_n);
/* The same for field `name` of struct attribute `st` (absent: empty). */
HLO_MUST_USE hlo_status ish_field_ints(const hlo_op *op, arena *a, const hlo_attr *st,
                                       const char *name, int64_t **out, uint32_t *out_n);
/* Integer field `name` of struct attribute `st` (ATTR_INT), or `dflt`. */
int64_t ish_field_int(const hlo_attr *st, const char *name, int64_t dflt);

/* Checks that value `v` (operand `what` of `op`) is a dense tensor of rank
 * at most ISH_MAX_RANK. */
HLO_MUST_USE hlo_status ish_check_tensor(const hlo_op *op, const tensor *v, const char *what);
/* Checks that `t` (result type of `op`) is a static tensor type of rank at
 * most ISH_MAX_RANK. */
HLO_MUST_USE hlo_status ish_check_result_type(const hlo_op *op, const hlo_type *t);
/* Checks that result type `t` has the element type of operand `v` (data
 * movement copies bytes, so the element sizes must agree). */
HLO_MUST_USE hlo_status ish_check_same_dtype(const hlo_op *op, const hlo_type *t,
                                             const tensor *v);

/* true when tensor types `a` and `b` have the same rank and dims. */
bool ish_same_dims(const hlo_type *a, const hlo_type *b);
/* true when 0 <= idx[d] < dims[d] for every d < rank. */
bool ish_in_bounds(const int64_t *dims, uint32_t rank, const int64_t *idx);
/* Element `i` of integer tensor `v` as an int64: signed types sign-extend,
 * unsigned types above INT64_MAX saturate to INT64_MAX (so a clamp or a
 * bounds check treats them as huge, as their true value is). */
int64_t ish_read_index(const tensor *v, int64_t i);
/* Checks that `v` is a tensor of integer (or i1) element type (for index
 * operands). */
HLO_MUST_USE hlo_status ish_check_int_tensor(const hlo_op *op, const tensor *v,
                                             const char *what);
/* Reads the 1-d integer tensor `v` (operand `what`) into `a`; its element
 * count must be `n` (pass -1 to accept any, then *out_n tells). */
HLO_MUST_USE hlo_status ish_read_int_vector(const hlo_op *op, arena *a, const tensor *v,
                                            const char *what, int64_t n, int64_t **out,
                                            uint32_t *out_n);

/* Copies element `si` of `src` to element `di` of `dst`, converting when
 * the element types differ (through int64 / uint64 / double / complex, as
 * the destination's class needs). Same types copy raw bytes. */
void ish_convert_elem(hlo_dtype dt, void *dst, int64_t di, hlo_dtype st, const void *src,
                      int64_t si);

/* The type of argument `i` of region `r`'s block when that is a 0-d tensor
 * type (quantized ones included: their storage moves unchanged); otherwise
 * the 0-d type of `fallback`. */
const hlo_type *ish_region_arg_type(interp *it, const hlo_region *r, uint32_t i,
                                    hlo_dtype fallback);
/* A new 0-d tensor of type `t` holding element `i` of `src` (converted when
 * the element types differ). */
HLO_MUST_USE hlo_status ish_scalar_from(const hlo_op *op, const hlo_type *t, const tensor *src,
                                        int64_t i, tensor **out);
/* Runs region `r` of `op` on `args` and checks that it returned exactly
 * `nout` 0-d tensors; they are written to out[0..nout) as new references.
 * Errors: the body's own, or HLO_INVALID_ARGUMENT for a wrong return. */
HLO_MUST_USE hlo_status ish_run_body(interp *it, const hlo_op *op, const hlo_region *r,
                                     tensor *const *args, uint32_t nargs, tensor **out,
                                     uint32_t nout);
/* Releases v[0..n) and sets them to NULL. */
void ish_release_all(tensor **v, uint32_t n);

/* Kernel registration of the files behind interp_shape.c and
 * interp_reduce.c: gather/dynamic_gather/scatter (interp_gather.c), sort
 * (interp_sort.c). */
void interp_register_gather(interp_kernel *table);
/* sort (interp_sort.c): a stable merge sort driven by the comparator region. */
void interp_register_sort(interp_kernel *table);
#endif
