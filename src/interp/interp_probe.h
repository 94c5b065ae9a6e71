/* interp_probe.h — the interpreter's instrumentation ops (interpreter.probe,
 * interpreter.print, check.expect_serialized_eq), shared between
 * interp_probe.c and interp_collective.c (which registers them and prepares
 * the shared probe state before interpreter.run_parallel forks). */
#ifndef HLO_INTERP_INTERP_PROBE_H
#define HLO_INTERP_INTERP_PROBE_H
#include "interp/interp.h"

/* Fills the table slots of interpreter.probe, interpreter.print and
 * check.expect_serialized_eq (only slots still empty). Called by
 * interp_register_collective. */
void interp_register_probe(interp_kernel *table);

/* Makes sure `it` has the probe state (a counter for probe file names and a
 * lock) so that forked interpreters share it; creating it truncates
 * probe_dir/index.csv, so each run starts a fresh index. Does nothing when
 * the options name no probe directory.
 * Errors (located at `op`): HLO_RESOURCE_EXHAUSTED (out of memory),
 * HLO_NOT_FOUND (the index file cannot be created), HLO_INTERNAL (the probe
 * state slot already holds another owner's state). */
HLO_MUST_USE hlo_status interp_probe_prepare(interp *it, const hlo_op *op);
#endif
