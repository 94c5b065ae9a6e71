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
#endif
