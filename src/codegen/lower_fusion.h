/* lower_fusion.h — a fusion (a list of StableHLO ops) lowered to one kernel
 * (codegen/kernel.h). */
#ifndef HLO_CODEGEN_LOWER_FUSION_H
#define HLO_CODEGEN_LOWER_FUSION_H
#include "codegen/kernel.h"

/* Lowers the ops ops[0..num_ops) (any order; all of one block) computing
 * outputs[0..num_outputs) into a new kernel named `name` (*out, yours:
 * kernel_destroy), scheduled with kernel_schedule_default.
 *
 * The ops may be: the elementwise ops of the spec (on bool, integer, bf16,
 * f16, f32, f64 values; compare except TOTALORDER), select, clamp, convert,
 * constant, iota, broadcast_in_dim, transpose, reshape (when the new index
 * is affine, see lower_fusion.c), slice, concatenate; and, as the only
 * output, a reduce of one operand over its trailing dims with a constant
 * init value and a combiner of elementwise ops. Every value an op reads that
 * is not made by an op of the list (an argument, another op's result, a
 * non-splat constant) becomes a kernel input (kernel_buffer.value says
 * which; a constant's data is in `literal`). Outputs that are not
 * reductions must all have the shape of the first; the index space is that
 * shape (a reduction: the reduced operand's shape).
 *
 * Errors (located at the op): HLO_UNIMPLEMENTED for an op, element type,
 * dynamic shape or layout change outside the above, naming it;
 * HLO_INVALID_ARGUMENT when an output is not made by an op of the list;
 * HLO_RESOURCE_EXHAUSTED. */
HLO_MUST_USE hlo_status lower_fusion(const hlo_op *const *ops, uint32_t num_ops,
                                     const hlo_value *const *outputs, uint32_t num_outputs,
                                     const char *name, kernel **out);

#endif /* HLO_CODEGEN_LOWER_FUSION_H */
