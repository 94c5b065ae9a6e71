/* fake_device.h — a fake graph device for the unit tests of the runtime's
 * CUDA graphs (test_cuda_graph_*.c), and executables made and run on it.
 * Linked into the test_cuda_graph_* binaries only (their own rule in the
 * Makefile).
 *
 * The fake: cpu-devmem (backend/cpu/cpu_devmem.c: kernels and gemms run
 * on the CPU, device buffers of their own) with the graph_* slots.
 * Between graph_begin and graph_end its work slots record their calls
 * instead of running them (as a captured CUDA stream does), and any call
 * that would break a real capture (alloc, free, copy, synchronize) is
 * counted as a fault; graph_launch runs the recorded calls through
 * cpu-devmem. So the executable's results after a replay are real
 * numbers, compared with an eager run's bit for bit. The capture keeps
 * the recording's dependency set (graph_deps_get / _set), and a graph
 * without conditional nodes is replayed in the topological order that
 * runs the LAST ready node first, so a missing edge changes results;
 * conditional nodes (graph_cond_*, when fk_cond_ok) run as the GPU runs
 * them.
 *
 * Checks: the helpers' failed checks count in the test file's (test.h's)
 * counters, bound by FAKE_DEVICE_CHECKS() in each test file. */
#ifndef HLO_TESTS_FAKE_DEVICE_H
#define HLO_TESTS_FAKE_DEVICE_H
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include "backend/backend.h"
#include "interp/interp.h"
#include "runtime/executable_cpu_internal.h"

/* executable_cpu_graph.c's counters (tests only): deferred runs,
 * captures, graph launches, failed captures, launches that skipped the
 * run's steps (a run of the same key as the graph's: cpu_dev_replay). */
void cpu_dev_graph_counters(const cpu_exec *x, uint64_t out[5]);
/* Its conditional nodes: recorded by deferred runs, in captured graphs. */
void cpu_dev_graph_cond_counters(const cpu_exec *x, uint64_t out[2]);

/* Its DAG (tests only): the last DAG capture's calls, edges, longest path,
 * barriers; out[4] 1 when captures are DAGs. */
void cpu_dev_graph_dag_counters(const cpu_exec *x, uint64_t out[5]);

/* ---- checks ---- */

/* Makes the helpers' failed checks count in the calling test file's
 * test.h counters (failed checks, the current test failed). */
void fd_count_checks_in(int *failed_checks, int *cur_failed);
/* Once in each test file that uses the helpers, after test.h: binds its
 * counters before any test or other constructor runs. */
#define FAKE_DEVICE_CHECKS()                                             \
  __attribute__((constructor(101))) static void fd_checks_bound(void) { \
    fd_count_checks_in(&test_failed_checks, &test_cur_failed);          \
  }

/* ---- the fake graph backend ---- */

enum { FK_MAX_CALLS = 6000, FK_MAX_PTRS = 16, FK_MAX_KERNELS = 4096, FK_MAX_DEPS = 24 };
typedef struct fk_call {
  int kind; /* 0 launch, 1 gemm, 2 copy_box, 3 fill_box, 4 gather, 5 scatter; a conditional
               node: 6 its begin, 7 the setting of a WHILE's condition in its body, 8 the
               last body's end, 9 the next body's start (IF, SWITCH) (p[0]: the
               predicate; value[0]: its size, [1]: bit 0 only, [2]: the kind, [3]:
               signed, index: the branches) */
  backend_module *m;
  uint32_t index, np;
  void *p[FK_MAX_PTRS];
  backend_gemm g;
  backend_box box;
  backend_rows rows;
  uint8_t value[16];
  /* a top-level record's node (a conditional node: its begin record): the
   * records it follows (graph_deps_*; dep_all: more than FK_MAX_DEPS,
   * every earlier one), node false inside a conditional body */
  bool node, dep_all;
  int ndep, dep[FK_MAX_DEPS];
} fk_call;

extern backend fk;                     /* the fake table */
extern bool fk_fail_end;               /* graph_end fails (a failed capture) */
extern fk_call fk_rec[FK_MAX_CALLS];   /* the capture's calls */
extern int fk_nrec;
extern bool fk_logging;                /* eager calls logged too (fk_elog) */
extern fk_call fk_elog[FK_MAX_CALLS];
extern int fk_nelog;
extern int fk_faults, fk_live_graphs, fk_graph_launches, fk_last_graph_calls;
extern int fk_eager_launches, fk_eager_gemms, fk_eager_calls; /* work run outside graphs */
extern bool fk_cond_ok;                /* graph_cond_takes' answer (off: as a driver < 12.4) */
extern int fk_cond_depth, fk_cond_iters; /* bodies open in the capture; iterations run */

/* The last capture's DAG on the fake (x's counters, or d, and the fake's
 * own edges: top-level records and the records they follow) as text (a
 * static buffer). */
const char *fk_dag_text_d(const uint64_t d[5]);
const char *fk_dag_text(const cpu_exec *x);

/* ---- executables on it ---- */

/* An executable of @main of `text` on the fake backend (graphs off when
 * graphs_off: HLO_CUDA_GRAPHS=0 at its making), or NULL after printing
 * "skipped" (no C compiler) or failing a check. */
typedef struct gx_exec {
  hlo_module_ir *ir;
  interp *it;
  cpu_exec *x;
} gx_exec;

/* gx_make_on with the module first run through pass pipeline `passes`
 * (NULL: none; PASS_PIPELINE_CPU: fusion and while loops' known trip
 * counts, as `hlo run` compiles). */
bool gx_make_piped(const char *text, bool graphs_off, const backend *be, const char *passes,
                   gx_exec *e);
/* On backend be (NULL: the fake), no passes; on the fake. */
bool gx_make_on(const char *text, bool graphs_off, const backend *be, gx_exec *e);
bool gx_make(const char *text, bool graphs_off, gx_exec *e);
void gx_free(gx_exec *e);
/* A host tensor of @main's argument type `t` filled from seed, placed on
 * the device of `be` (NULL: the fake's) when on_device (as
 * hlo_executable_device_put does); gx_arg: on the fake's. */
tensor *gx_arg_on(const hlo_type *t, uint64_t seed, bool on_device, const backend *be);
tensor *gx_arg(const hlo_type *t, uint64_t seed, bool on_device);
/* tensor_device.release of such a copy: its buffer freed on its backend
 * (d->backend), then d. */
void gx_release_device(tensor_device *d);
/* The bytes of result r (downloaded when only on the device) into a new
 * malloc'd buffer. */
uint8_t *gx_bytes(const tensor *r);
/* Runs e on args; 0 when every result's bytes equal want's (want[i]
 * NULL: stored there instead, malloc'd). */
int gx_run(gx_exec *e, tensor **args, uint32_t nargs, uint8_t **want);
/* Writes the values of from[i] into to[i]'s host data and device buffer
 * (the same pointers, new contents). */
void gx_set(tensor **to, tensor *const *from, uint32_t n);
/* e's graph counters (cpu_dev_graph_counters). */
void gx_counters(const gx_exec *e, uint64_t c[5]);
/* Runs `text` (through PASS_PIPELINE_CPU) on the fake graph backend and
 * eagerly (HLO_CUDA_GRAPHS=0), nruns times on the same device arguments,
 * their values changed in place before the last run; every result
 * bit-identical to the eager executable's. c gets the graph executable's
 * counters; calls1, the calls its first run issued one by one (-1: not
 * logged); the eager log of that run stays in fk_elog. false when the
 * executables could not be made. */
bool gx_compare_runs(const char *text, int nargs, int nruns, uint64_t c[5], int *calls1);

/* ---- programs more than one test file runs ---- */

/* A scan (a while loop of TRIPS iterations over the rows of xs: a
 * dynamic_slice at the loop counter, a gemm, a dynamic_update_slice; then
 * a pad by a constant) with its trip count `trips` (and, when trips_arg,
 * the bound read from a fourth argument instead: no known trip count),
 * into buf. */
void scan_text(char *buf, size_t n, int trips, bool trips_arg);
/* A Collatz loop (shared/models/while_collatz, its helpers inlined): the
 * trip count depends on the argument's value. */
extern const char *const collatz_program;
/* A case of three branches on its argument minus one. */
extern const char *const case_program;
/* Two independent branches (exp then multiply, of each argument). */
extern const char *const dag_branches;
#endif
