/* pass_manager.h — running a named pipeline of passes over a module, with
 * verification after each pass, before/after dumps and per-pass timing.
 *
 * A pipeline is a comma-separated list of pass names, e.g.
 *   "inline,chlo-legalize,simplify,constant-fold,cse,dce"
 * (spaces around names are ignored; a pass may appear more than once).
 * pass_list_names() lists the registered passes.
 *
 * The entry point the `hlo` tool calls for `--passes P --dump-to DIR`:
 *   pass_pipeline_options po = {.pipeline = P, .verify_each = true,
 *                               .dump_dir = DIR};
 *   pass_report rep;
 *   hlo_status st = pass_pipeline_run(m, &po, &rep);
 *   pass_report_print(&rep, stderr);   (the per-pass times; optional)
 *   pass_report_free(&rep);
 *
 * Ownership: the report's arrays are malloc'd (pass_report_free). */
#ifndef HLO_PASSES_PASS_MANAGER_H
#define HLO_PASSES_PASS_MANAGER_H
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include "passes/passes.h"

/* The pipeline run when none is named: legalize everything to plain
 * StableHLO, then clean up. */
#define PASS_PIPELINE_DEFAULT "inline,chlo-legalize,simplify,constant-fold,simplify,cse,dce"
/* The CPU backend's pipeline: the default one, then transposes folded
 * into the dot_generals that read them (transpose_folding.c), dot_generals
 * made matrix products (dot_decomposer.c), reductions over trailing
 * dimensions (reduction_layout_normalizer.c), merging reshapes moved
 * above the elementwise chains they read (reshape_hoisting.c), iota- and
 * constant-only values copied into each reader (duplicate_generators.c),
 * while loops' known trip counts (while_loop_trip_count.c) and fusion
 * (fusion.c). */
#define PASS_PIPELINE_CPU                                                                  \
  PASS_PIPELINE_DEFAULT ",transpose-folding,dce,dot-decomposer,reduction-layout-normalizer," \
                        "reshape-hoisting,duplicate-generators,while-loop-trip-count,fusion"
/* The CUDA backend's pipeline: the CPU one with small dot_generals (at
 * most 2^18 multiply-adds) rewritten as broadcasts, a multiply and a
 * reduce (dot_strength_reduction.c) before dot-decomposer, so that fusion
 * makes each one a reduce kernel with its neighbours instead of a cuBLASLt
 * call; after transpose-folding, so the transposes a dot read are absorbed
 * by the broadcasts too. */
#define PASS_PIPELINE_CUDA                                                                 \
  PASS_PIPELINE_DEFAULT ",transpose-folding,dce,dot-strength-reduction,dot-decomposer,"     \
                        "reduction-layout-normalizer,reshape-hoisting,duplicate-generators,"  \
                        "while-loop-trip-count,fusion"

/* A registered pass. */
typedef hlo_status (*hlo_pass_fn)(hlo_module_ir *m, const hlo_pass_options *o);
typedef struct pass_info {
  const char *name;    /* as written in a pipeline ("constant-fold") */
  hlo_pass_fn run;
  const char *summary; /* one line */
} pass_info;

/* The pass named `name[0..len)`, or NULL. */
const pass_info *pass_lookup(const char *name, size_t len);
/* The i-th registered pass (0-based), or NULL past the end. */
const pass_info *pass_at(uint32_t i);

typedef struct pass_pipeline_options {
  const char *pipeline;   /* NULL: PASS_PIPELINE_DEFAULT */
  bool verify_each;       /* verify the input, then the module after each pass */
  const char *dump_dir;   /* NULL: no dumps; else NNNN.PASS.before.mlir and
                             NNNN.PASS.after.mlir per pass (the folder is made) */
  uint32_t first_dump_index; /* NNNN of the first pass (to continue a numbering) */
  hlo_pass_options pass;  /* handed to every pass */
} pass_pipeline_options;

/* What one pass did. */
typedef struct pass_stat {
  const char *name;       /* the registry's name (static) */
  double ms;              /* wall time of the pass itself (not verify/dump) */
  uint64_t ops_before, ops_after; /* module_count_ops around the pass */
} pass_stat;

typedef struct pass_report {
  uint32_t n;             /* passes run (the failing one included) */
  pass_stat *stats;
  double total_ms;        /* passes + verification + dumps */
  uint32_t next_dump_index;
} pass_report;

/* Checks that every name of `pipeline` is a registered pass. Errors:
 * HLO_INVALID_ARGUMENT naming the unknown pass and listing the known ones;
 * an empty name ("a,,b") is an error too. */
HLO_MUST_USE hlo_status pass_pipeline_check(const char *pipeline);

/* Runs the passes of o->pipeline (o NULL: the default, verifying after
 * each) over `m` in order. With verify_each, a module that does not verify
 * before the first pass is an error ("the input does not verify"), and one
 * that stops verifying after a pass is an error whose message starts with
 * "after pass 'NAME' (K of N):" followed by the verifier's located message.
 * A pass's own error gets the note "in pass 'NAME'". After the pipeline,
 * every function's values are renumbered (func_number_values), so the
 * interpreter can run the module. `out` (may be NULL) gets the report,
 * also on error (the passes run so far); free it with pass_report_free.
 * Errors: the above; HLO_INVALID_ARGUMENT for a bad pipeline (nothing run);
 * HLO_UNAVAILABLE when a dump file cannot be written (names the path and
 * the system's reason); HLO_RESOURCE_EXHAUSTED. */
HLO_MUST_USE hlo_status pass_pipeline_run(hlo_module_ir *m, const pass_pipeline_options *o,
                                          pass_report *out);

/* pass_pipeline_run over an explicit list of passes[0..n) (registered or
 * not: tests and tools may bring their own); o->pipeline is only used to
 * name the pipeline in messages. Same behaviour and errors otherwise. */
HLO_MUST_USE hlo_status pass_run_list(hlo_module_ir *m, const pass_pipeline_options *o,
                                      const pass_info *const *passes, uint32_t n,
                                      pass_report *out);

/* Prints one line per pass ("  simplify   0.41 ms   812 -> 790 ops") and
 * the total to `f`. */
void pass_report_print(const pass_report *r, FILE *f);
/* Frees the report's arrays; leaves it zeroed. */
void pass_report_free(pass_report *r);
#endif
