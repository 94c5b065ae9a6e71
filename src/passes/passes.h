/* passes.h — IR-to-IR rewrites. A pass is
 *   hlo_status pass_NAME(hlo_module_ir *m, const hlo_pass_options *o);
 * (the two older ones below take their own arguments; the pass manager,
 * pass_manager.h, adapts them). It edits `m` in place (new IR in m->arena)
 * and returns NULL, or a located error naming the op it could not rewrite.
 * `o` may be NULL (defaults). Passes leave hlo_value.id stale for the values
 * they create: the pass manager renumbers (func_number_values) afterwards,
 * as anything that runs passes by hand must before interpreting. */
#ifndef HLO_PASSES_PASSES_H
#define HLO_PASSES_PASSES_H
#include <stdbool.h>
#include <stdint.h>
#include "ir/ir.h"

/* Options every pass receives (zero = defaults). */
typedef struct hlo_pass_options {
  const char *entry;          /* the entry function; NULL: module_entry's rule */
  int64_t fold_max_elements;  /* constant-fold: largest result folded, in elements
                                 (0: 4096) */
  bool keep_composites;       /* inline: leave stablehlo.composite ops in place */
  hlo_type *const *arg_types; /* refine-shapes: the entry's concrete argument types */
  uint32_t num_arg_types;     /*   (NULL/0: the declared ones, which must be static) */
} hlo_pass_options;

/* inline: replaces every func.call (and stablehlo.composite, unless
 * o->keep_composites) in every function by a copy of its callee's body
 * (its decomposition), recursively, then removes the private functions no
 * longer referred to (module_remove_dead_funcs). Errors: HLO_NOT_FOUND at a
 * call to an unknown function; HLO_INVALID_ARGUMENT when the callee's
 * signature does not match the call; HLO_RESOURCE_EXHAUSTED when inlining
 * makes over 2^22 ops (a recursive call graph) or memory runs out. */
HLO_MUST_USE hlo_status pass_inline(hlo_module_ir *m, const hlo_pass_options *o);

/* dce: removes every op whose results are unused and that is pure
 * (op_is_pure: no side effect, nothing impure in its regions), in every
 * function and region, then the private functions nothing refers to.
 * Errors: HLO_RESOURCE_EXHAUSTED. */
HLO_MUST_USE hlo_status pass_dce(hlo_module_ir *m, const hlo_pass_options *o);

/* cse: within each block, replaces a pure op without regions by an earlier
 * identical one (same opcode, operands, attributes and result types; the
 * operands of integer add/multiply/and/or/xor/maximum/minimum in either
 * order) and removes it. Regions are not searched across (each block is its
 * own scope). Errors: HLO_RESOURCE_EXHAUSTED. */
HLO_MUST_USE hlo_status pass_cse(hlo_module_ir *m, const hlo_pass_options *o);

/* simplify: algebraic simplification and canonicalisation, a table of local
 * {op, match, rewrite} rules (simplify.c, each with the condition under
 * which it holds: NaN, -0, integer overflow) run to a fixed point by one
 * worklist driver; unused pure ops are removed on the way. Errors:
 * HLO_INTERNAL when a rule produced a value of the wrong type or the rules
 * do not reach a fixed point; HLO_RESOURCE_EXHAUSTED. */
HLO_MUST_USE hlo_status pass_simplify(hlo_module_ir *m, const hlo_pass_options *o);

/* constant-fold: evaluates with the interpreter's kernels every pure op
 * without regions whose operands are all stablehlo.constant and whose
 * results have at most o->fold_max_elements elements (4096 by default), and
 * replaces it by constants (a splat when every element is equal). Never
 * folds side effects, rng, custom calls, or broadcasts of non-splat
 * constants (they only grow the program). An op whose kernel fails is left
 * for run time to report. Errors: HLO_RESOURCE_EXHAUSTED. */
HLO_MUST_USE hlo_status pass_constant_fold(hlo_module_ir *m, const hlo_pass_options *o);

/* The rules of pass_simplify, for documentation and tests: rule `i`'s
 * name, the op it applies to and its validity condition; false when `i` is
 * past the end. */
bool simplify_rule_info(uint32_t i, const char **out_name, hlo_opcode *out_op,
                        const char **out_valid_when);

/* chlo-legalize-to-stablehlo: rewrites every chlo op of every function into
 * StableHLO ops with the semantics the chlo dialect defines (the
 * decompositions of stablehlo's ChloDecompositionPatterns), so that backends
 * see StableHLO only. Errors: HLO_UNIMPLEMENTED naming a chlo op it cannot
 * rewrite (with its location), HLO_RESOURCE_EXHAUSTED. */
HLO_MUST_USE hlo_status pass_chlo_legalize(hlo_module_ir *m);

/* refine-shapes (StableHLO's stablehlo-refine-shapes): specializes the
 * entry function `entry` (NULL: @main, see module_entry) of `m` to the
 * concrete argument types arg_types[0..nargs) (nargs = the entry's argument
 * count; a NULL entry keeps the declared type, which must then be static;
 * tokens pass as token types), in place: checks each fits the declared type,
 * inlines every func.call, folds the integer shape computations and
 * get_dimension_size into constants, rewrites dynamic_broadcast_in_dim,
 * dynamic_iota, dynamic_reshape, real_dynamic_slice, dynamic_pad,
 * dynamic_gather and dynamic_conv into their static ops, evaluates JAX's
 * `shape_assertion` custom calls, and infers every result type, so that the
 * entry function is fully static. Types are replaced, never edited.
 * Errors: HLO_INVALID_ARGUMENT located at the argument, naming it and the
 * dimension, when an input does not fit; HLO_INVALID_ARGUMENT at the
 * assertion with JAX's message (its {K} placeholders filled in) when a
 * shape assertion fails; HLO_UNIMPLEMENTED at an op whose shape cannot be
 * made static; HLO_RESOURCE_EXHAUSTED. Run the verifier afterwards. */
HLO_MUST_USE hlo_status pass_refine_shapes(hlo_module_ir *m, const char *entry,
                                           hlo_type *const *arg_types, uint32_t nargs);
/* Whether the entry function of `m` has a dynamic argument or result type,
 * i.e. needs pass_refine_shapes before it can run. */
bool module_needs_refinement(const hlo_module_ir *m, const char *entry);

/* transpose-folding (XLA's TransposeFolding): a dot_general operand that is
 * a transpose reads the transpose's operand, the dimension numbers mapped
 * through the permutation, when the free dims keep their order; bit-exact.
 * Errors: HLO_RESOURCE_EXHAUSTED. */
HLO_MUST_USE hlo_status pass_transpose_folding(hlo_module_ir *m, const hlo_pass_options *o);

/* dot-decomposer (XLA's DotDecomposer): every dot_general whose operands a
 * GEMM cannot read in place becomes transpose/reshape -> a rank-2 or
 * rank-3 dot_general [B,]MxK . [B,]KxN -> reshape; bit-exact (the
 * contracting dims keep their order). Rules in dot_decomposer.c's header.
 * Errors: HLO_RESOURCE_EXHAUSTED. */
HLO_MUST_USE hlo_status pass_dot_decomposer(hlo_module_ir *m, const hlo_pass_options *o);

/* dot_strength_reduction.c: a small dot_general (at most 2^18 multiply-adds,
 * 4096 contracting elements; float or integer) becomes broadcasts of its
 * operands into one index space, a multiply and a reduce(add) over the
 * trailing contracting dims, which fusion makes one kernel (the CUDA
 * pipeline: no GEMM library call for tiny products). */
HLO_MUST_USE hlo_status pass_dot_strength_reduction(hlo_module_ir *m, const hlo_pass_options *o);

/* The attribute while-loop-trip-count puts on a stablehlo.while whose
 * iteration count is known at compile time (an i64 >= 0). */
#define WHILE_KNOWN_TRIP_COUNT "hlo.known_trip_count"

/* while-loop-trip-count (XLA's WhileLoopTripCountAnnotator): a while loop
 * over a constant-initialised integer counter tested against a constant
 * (`i < N`) and stepped by a constant (`i + s`), with a condition of
 * nothing else, gets WHILE_KNOWN_TRIP_COUNT; rules in
 * while_loop_trip_count.c. Changes no value. Errors:
 * HLO_RESOURCE_EXHAUSTED. */
HLO_MUST_USE hlo_status pass_while_loop_trip_count(hlo_module_ir *m, const hlo_pass_options *o);

/* reduction-layout-normalizer (XLA's ReductionLayoutNormalizer): a reduce
 * over dimensions that are not the trailing ones reads a transpose that
 * moves them last, and reduces the trailing ones (what the CPU kernels
 * take); bit-exact. Errors: HLO_RESOURCE_EXHAUSTED. */
HLO_MUST_USE hlo_status pass_reduction_layout_normalizer(hlo_module_ir *m,
                                                         const hlo_pass_options *o);

/* reshape-hoisting: a reshape merging dims of a chain of single-use
 * elementwise ops (GroupNorm's normalisation, reshaped from [.., G, C/G]
 * to [.., C]) reads the chain computed in its own shape, each broadcast
 * feeding it made from a tiny merged value, so that fusion keeps the
 * broadcasts inside the kernel (they are not read through the merging
 * reshape). Rules in reshape_hoisting.c's header; bit-exact. Errors:
 * HLO_RESOURCE_EXHAUSTED. */
HLO_MUST_USE hlo_status pass_reshape_hoisting(hlo_module_ir *m, const hlo_pass_options *o);

/* duplicate-generators: a cheap value computed only from iotas and
 * constants (iota, broadcasts of constants, elementwise chains over them)
 * that several fusible ops of its block read gets a copy per reader, so
 * that fusion computes it inside each reader's kernel instead of
 * materialising it (XLA's fusion duplicates such producers). Rules in
 * duplicate_generators.c's header; bit-exact. Errors:
 * HLO_RESOURCE_EXHAUSTED. */
HLO_MUST_USE hlo_status pass_duplicate_generators(hlo_module_ir *m, const hlo_pass_options *o);

/* fusion: groups producer->consumer chains of ops that one kernel can
 * compute into hlo.fusion ops (ops.def): "loop" fusions of elementwise and
 * layout ops, "input" fusions of a reduce with its producers; in every
 * block, the bodies of while/if/case included. Nothing is duplicated but
 * splat constants. The rules are in src/passes/fusion.c's header. Errors:
 * HLO_RESOURCE_EXHAUSTED. */
HLO_MUST_USE hlo_status pass_fusion(hlo_module_ir *m, const hlo_pass_options *o);

/* The role an op may play in a fusion (fusion.c's table, which lists what
 * src/codegen/lower_fusion.c can lower, by op and element-type class). */
typedef enum fusion_role {
  FUSION_NO = 0,     /* not fusible: stays outside every fusion */
  FUSION_CHEAP,      /* cheap elementwise op or iota */
  FUSION_EXPENSIVE,  /* transcendental, divide, remainder, power, atan2 */
  FUSION_LAYOUT,     /* broadcast_in_dim, reshape, transpose, slice, concatenate */
  FUSION_CONSTANT,   /* a dense constant: copied in when a splat, else an operand */
  FUSION_REDUCE,     /* a reduce of one operand over its trailing dims with a
                        constant init and a one-op combiner: a root only */
} fusion_role;

/* The role of `op` (FUSION_NO when an operand or result is not a static,
 * non-quantized tensor of a kernel element type and rank, or the op/type
 * pair is outside the table). */
fusion_role fusion_op_fusible(const hlo_op *op);
#endif
