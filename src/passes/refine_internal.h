/* refine_internal.h — what the two files of the refine-shapes pass share:
 * refine_shapes.c (the driver: argument types, inlining, constant folding of
 * shape computations, dynamic_* ops to static ops, shape assertions) and
 * refine_infer.c (result-shape inference from operand shapes). */
#ifndef HLO_PASSES_REFINE_INTERNAL_H
#define HLO_PASSES_REFINE_INTERNAL_H
#include "ir/ir.h"

/* Recomputes the result types of `op` from its (refined) operand types and
 * attributes, following the spec's shape formulas (elementwise, dot_general,
 * dot, einsum, reduce, transpose, concatenate, slice, pad, gather,
 * convolution, reduce_window, fft, batch_norm_*, collectives, while,
 * if/case, chlo's broadcast_* and top_k, ...), and sets op->results[i].type to the
 * new types (new objects in m's arena; the old types are never edited).
 * Only tensor results with a dynamic dimension are replaced; a replaced type
 * must fit the declared one (same rank and element type; static dims equal).
 * Elementwise ops are checked first: operands whose sizes conflict (or
 * conflict with a static result type) are the inputs' fault, and the error
 * names the inputs the sizes come from ("the sizes of input 0 dim 0 (5) and
 * input 1 dim 0 (7) must agree for this add").
 * Errors (located at op): HLO_UNIMPLEMENTED when the op's shape cannot be
 * inferred; HLO_INVALID_ARGUMENT when the inferred shape conflicts with the
 * declared one or an attribute is malformed; HLO_RESOURCE_EXHAUSTED. */
HLO_MUST_USE hlo_status refine_infer_op(hlo_module_ir *m, hlo_op *op);

/* Sets result `i` of `op` to `t` after checking that `t` fits the declared
 * type (as refine_infer_op). */
HLO_MUST_USE hlo_status refine_set_result(hlo_op *op, uint32_t i, hlo_type *t);

/* A tensor type with `like`'s element type (and quantization) and the given
 * shape, in m's arena; NULL on out of memory. */
hlo_type *refine_type_like(hlo_module_ir *m, const hlo_type *like, uint32_t rank,
                           const int64_t *dims);

/* The text of a type for messages ("tensor<?x3xf32>"), in a static-free
 * caller buffer of `n` bytes. */
void refine_type_str(const hlo_type *t, char *buf, size_t n);
#endif
