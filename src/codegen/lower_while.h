/* lower_while.h — a stablehlo.while over 0-d values lowered to one LOOP
 * kernel (codegen/kernel.h, Loops). */
#ifndef HLO_CODEGEN_LOWER_WHILE_H
#define HLO_CODEGEN_LOWER_WHILE_H
#include "codegen/kernel.h"

/* Lowers the while op `w` into a new LOOP kernel named `name` (*out, yours:
 * kernel_destroy): the whole loop in one call, its condition and body
 * inlined as straight-line instructions over the carried values.
 *
 * Takes a while whose operands (and so results) are all 0-d static
 * tensors of a type kernel_dtype_supported takes, at most
 * KERNEL_MAX_LOOP_CARRIED of them (and KERNEL_MAX_LOOP_BUFFERS inputs and
 * outputs in all), and whose two regions hold only ops
 * that lower_fusion lowers into an elementwise kernel of 0-d values with
 * no index, temporary or reduction — each an `hlo.fusion` (its region's
 * ops) or a single op (a constant, an elementwise op) — and the return.
 * Values the regions read from outside the while become kernel inputs
 * after the while's operands (inputs 0..num_operands-1 are the init
 * values; kernel_buffer.value says which value each stands for); output i
 * is result i of the while.
 *
 * Errors: HLO_UNIMPLEMENTED (located at the first op that does not fit,
 * or at the while) when the while is not of that form; the caller then
 * runs the while another way. HLO_RESOURCE_EXHAUSTED. */
HLO_MUST_USE hlo_status lower_scalar_while(const hlo_op *w, const char *name, kernel **out);

#endif /* HLO_CODEGEN_LOWER_WHILE_H */
