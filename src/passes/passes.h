/* passes.h — IR-to-IR rewrites. A pass is
 *   hlo_status pass_NAME(hlo_module_ir *m);
 * It edits `m` in place (new IR in m->arena) and returns NULL, or a located
 * error naming the op it could not rewrite. */
#ifndef HLO_PASSES_PASSES_H
#define HLO_PASSES_PASSES_H
#include "ir/ir.h"

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
#endif
