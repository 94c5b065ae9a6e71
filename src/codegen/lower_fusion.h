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
 * is affine, see lower_fusion.c), slice, concatenate; and reduces of one
 * operand over its trailing dims with a constant init value and a combiner
 * of elementwise ops, anywhere in the list, all reducing the same row. Every
 * value an op reads that is not made by an op of the list (an argument,
 * another op's result, a non-splat constant) becomes a kernel input
 * (kernel_buffer.value says which; a constant's data is in `literal`).
 *
 * The index space is the first output's shape (a reduce's operand's when
 * the first output is a reduce or not of the row's shape); with reduces,
 * its trailing dims matching their reduced dims are the row, each reduce
 * (at each map it is read at) a REDUCE stage made before the stages that
 * read it, and the outputs are stored by a final MAP stage (kernel.h,
 * Stages). Outputs are of the index space's shape, or of its kept dims
 * (stored once per row), unit dims aside. A value that a later stage needs
 * again is computed again when cheap, and kept in a row temporary when it
 * costs an expensive op (or 8 instructions) per point.
 *
 * Errors (located at the op): HLO_UNIMPLEMENTED for an op, element type,
 * dynamic shape or layout change outside the above, naming it;
 * HLO_INVALID_ARGUMENT when an output is not made by an op of the list;
 * HLO_RESOURCE_EXHAUSTED. */
HLO_MUST_USE hlo_status lower_fusion(const hlo_op *const *ops, uint32_t num_ops,
                                     const hlo_value *const *outputs, uint32_t num_outputs,
                                     const char *name, kernel **out);

#endif /* HLO_CODEGEN_LOWER_FUSION_H */
