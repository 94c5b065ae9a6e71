/* executable_cpu_internal.h — what the three files of the CPU backend's
 * executable share: executable_cpu.c (compiling: thunks from ops, programs
 * from blocks), executable_cpu_buffers.c (liveness, buffer assignment,
 * the --dump-to report) and executable_cpu_run.c (running thunks, control
 * flow, --check, the profile).
 *
 * An executable is a tree of PROGRAMS: program 0 is the entry function's
 * body; each while/case/if compiled natively owns one program per region
 * (cond and body; each branch). A program is a flat list of STEPS (thunks)
 * over the values of its block. Value ids are the function's numbering
 * (func_number_values), unique across all blocks, so per-value tables are
 * shared by every program. */
#ifndef HLO_RUNTIME_EXECUTABLE_CPU_INTERNAL_H
#define HLO_RUNTIME_EXECUTABLE_CPU_INTERNAL_H
#include <stdbool.h>
#include <stdint.h>
#include "backend/backend.h"
#include "ir/ir.h"
#include "runtime/executable_cpu.h"

typedef enum step_kind {
  STEP_KERNEL,  /* a generated kernel (a fusion or a single fusible op) */
  STEP_GEMM,    /* a matrix product through the backend's gemm */
  STEP_CONV,    /* a convolution through the backend's conv (scratch in the arena) */
  STEP_WINDOW,  /* reduce_window / select_and_scatter through the backend (win) */
  STEP_SORT,    /* stablehlo.sort through the backend's sort (sort) */
  STEP_INTERP,  /* the interpreter's kernel for the op (interp_run_op) */
  STEP_WHILE,   /* stablehlo.while: programs sub[0] (cond) and sub[1] (body) */
  STEP_CASE,    /* stablehlo.case / if: program sub[i] for branch i (if: i = !pred) */
  STEP_ALIAS,   /* stablehlo.reshape, or a bitcast_convert between types of one width:
                   the result is the operand's bytes (no copy; XLA's bitcast) */
  /* data movement run natively (executable_cpu_copy.c) */
  STEP_DSLICE,  /* stablehlo.dynamic_slice: a block copy at clamped start indices */
  STEP_DUS,     /* stablehlo.dynamic_update_slice: operand copied (unless the output
                   shares its buffer: in place), then the update copied in */
  STEP_PAD,     /* stablehlo.pad */
  STEP_GATHER,  /* stablehlo.gather of whole rows of dim 0 (x[idx]) */
  STEP_SCATTER, /* stablehlo.scatter of whole rows of dim 0, add or set (in place
                   like STEP_DUS) */
  STEP_FILL,    /* a large splat stablehlo.constant that a step reads as a buffer (a
                   loop's carried value, a library call's operand): filled into its
                   arena slot at run time, as XLA fills a broadcast, instead of being
                   made at compile time (a while loop would then copy it each run) */
} step_kind;

/* Whether a step kind runs on buffers by pointer (its results may live in
 * an arena). */
static inline bool step_is_native(step_kind k) {
  return k == STEP_KERNEL || k == STEP_GEMM || k == STEP_CONV || k == STEP_WINDOW ||
         k == STEP_SORT ||
         k == STEP_DSLICE || k == STEP_DUS ||
         k == STEP_PAD || k == STEP_GATHER || k == STEP_SCATTER || k == STEP_FILL;
}

/* A second GEMM chained to a first one's epilogue (executable_cpu_epilogue.c):
 * C2 = P . B2 where P, the first step's epilogue output, has the first
 * product's rows. Each block of rows the first GEMM finishes is run
 * through the epilogue and then through this product (and its own
 * epilogue kernel, if it has one), while the rows are in the cache:
 * attention's softmax(Q K^T) V, an MLP's act(x W1) W2. The step's
 * in/out lists carry its values: B2 and its kernel's inputs from
 * in[in_at], C2 and its kernel's outputs from out[out_at]. */
typedef struct gemm_chain {
  backend_gemm g;              /* the second product (A = P: not transposed, dense rows) */
  uint32_t a_out;              /* P: out[a_out] of the step */
  uint32_t in_at, out_at;
  const hlo_op *op;            /* the second dot_general (profile, errors) */
  bool epilogue;               /* its own epilogue kernel, as a step's fields below */
  uint32_t epi_kernel, epi_nin, epi_nout;
  int64_t epi_tiles_per_row;
  const hlo_op *epi_op;
} gemm_chain;

typedef struct step {
  step_kind kind;
  const hlo_op *op;
  uint32_t kernel;             /* STEP_KERNEL: its index in the backend module */
  uint32_t nin, nout;
  const hlo_value **in;        /* values read: kernel inputs in order; gemm: lhs, rhs;
                                  interp/while/case: operands, then captured values */
  const hlo_value **out;       /* values written (kernel outputs in order; op results) */
  backend_gemm g;              /* STEP_GEMM */
  backend_conv *conv;          /* STEP_CONV: the described convolution (owned) */
  backend_window *win;         /* STEP_WINDOW: the described window op (owned) */
  backend_sort *sort;          /* STEP_SORT: the described sort (owned) */
  int64_t scratch_bytes;       /* STEP_CONV: scratch the call needs, ... */
  int64_t scratch_offset;      /* ... at this offset of the program's arena (or of a
                                  result's allocation: scratch_in) */
  uint32_t scratch_in;         /* program 0's steps: 1 + the value id of the result whose
                                  allocation holds the scratch (result_homes); 0: the arena */
  int32_t inplace;             /* STEP_KERNEL: an input its one output may overwrite (every
                                  load of it reads the element being written), or -1 */
  bool aliased;                /* buffer assignment put the output over that input
                                  (STEP_KERNEL, STEP_DUS, STEP_SCATTER) */
  bool elided;                 /* STEP_FILL whose only readers, while loops, fill their own
                                  buffers from its op (executable_cpu_buffers.c): not run */
  bool epilogue;               /* STEP_GEMM: kernel epi_kernel runs on each block of C's rows
                                  as soon as they are computed (executable_cpu_epilogue.c);
                                  in = {A, B, the kernel's inputs}, out = {C, its outputs} */
  uint32_t epi_kernel, epi_nin, epi_nout;
  int64_t epi_tiles_per_row;   /* the kernel's tiles per row of C */
  int32_t epi_inplace;         /* the kernel's input its one output may overwrite, or -1
                                  (its `inplace`; buffer assignment decides: `aliased`) */
  const hlo_op *epi_op;        /* the kernel's op (profile, errors) */
  struct gemm_chain *chain;    /* STEP_GEMM with an epilogue: a second product reading the
                                  epilogue's rows, run on each block of them (owned; NULL:
                                  none; executable_cpu_epilogue.c) */
  uint32_t nsub;               /* STEP_WHILE / STEP_CASE: the programs of its regions */
  uint32_t *sub;
  uint32_t nfree;
  uint32_t *free_ids;          /* values whose last reader this step is */
  double prof_ms;              /* profiling: time spent in this step, summed over runs */
  uint64_t prof_runs;
} step;

typedef struct program {
  const hlo_block *block;      /* the function body, or a region's block */
  step *steps;
  uint32_t nsteps, cap_steps;
  int64_t temp_bytes;          /* its arena (buffer assignment), regions' arenas included */
  int64_t heap_peak_bytes;     /* interpreter temporaries live at once, at most */
  uint32_t arena_buffers;
  uint8_t *arena;              /* program 0: made at the first run; a region's program:
                                  a slice of its parent's (the control step's scratch) */
  uint32_t arena_parent;       /* a region's program: the program whose arena holds its */
  int64_t arena_offset;        /* own, and where */
  uint32_t arena_in;           /* 1 + the value id of program 0's result whose allocation
                                  holds its arena (then arena_offset is in that allocation;
                                  set at each run start); 0: the parent's arena */
  bool while_body;             /* the body region of a while (its results are carried) */
  uint32_t *owned;             /* the values it defines (block args, step results), */
  uint32_t nowned;             /* released at the end of each of its runs */
} program;

/* Where a value's data lives during a run. */
typedef enum value_home {
  HOME_NONE,   /* not materialised (inside a fusion), or not reached yet */
  HOME_ARG,    /* a block argument: the run's argument, or a loop-carried value */
  HOME_CONST,  /* a constant made at compile time */
  HOME_ARENA,  /* a slot of its program's arena: kernel and library-call temporaries
                  (program 0's: or a slot of a result's allocation, in_result_of) */
  HOME_HEAP,   /* its own allocation: interpreter and control-flow results, and
                  the results of a program (handed on past its run) */
  HOME_CARRIED, /* a while body's result written over the buffer of the carried value
                   it replaces (offset[id] holds that block argument's id), when that
                   tensor is the loop's alone at run time (else its own allocation) */
} value_home;

/* The largest tensor kept as a value's spare (cpu_exec.spare). */
#define SPARE_MAX_BYTES 4096

struct cpu_exec {
  const backend *be;
  interp *it;
  const hlo_func *f;
  uint32_t nvals;
  tensor **consts;             /* by value id: constants made at compile time */
  tensor **vals;               /* by value id: the run's tensors */
  program *progs;              /* progs[0]: the function body */
  uint32_t nprogs, cap_progs;
  backend_module *mod;
  runtime_cpu_stats stats;
  bool profile;                /* time each step (cpu_exec_profile) */
  bool check;                  /* run the interpreter beside each compiled step */
  char *dump_dir;              /* --dump-to (owned copy; NULL: none), named by --check */
  /* buffer assignment (executable_cpu_buffers.c), by value id */
  uint8_t *home;               /* value_home */
  uint32_t *prog_of;           /* the program whose step writes it */
  int64_t *offset;             /* its offset in that program's arena (HOME_ARENA) */
  uint32_t *def_step, *last_step; /* the step writing it, the last one reading it */
  /* temporaries in result memory (executable_cpu_buffers.c's place_in_results; XLA's
   * reuse of live-out allocations): program 0's results that hold temporaries before
   * they are written are allocated when a run starts (x->vals set, each a tensor of
   * its type), and an arena value of program 0 with in_result_of[id] = 1 + H lies at
   * offset[id] of value H's allocation instead of the arena. NULL / 0: none. */
  uint32_t *in_result_of;
  const hlo_value **result_homes; /* the values H allocated at a run's start */
  uint32_t nresult_homes;
  /* spare[id]: a small heap tensor value id held last, kept when it was
   * dropped (drop_val) for the value's next definition by a native step
   * (run_native_step), so that a loop's per-iteration values are not freed
   * and allocated again each iteration; NULL on a device backend. At most
   * SPARE_MAX_BYTES each; released with the executable. */
  tensor **spare;
  struct cpu_dev *dev;         /* a device_memory backend's mirror state
                                  (executable_cpu_device.c); NULL on the CPU */
};

/* The tensor of value v during a run (the reference rules: executable_cpu_run.c), or NULL: not made, or
 * an arena value. */
static inline tensor *value_tensor(const cpu_exec *x, uint32_t id) {
  if (x->vals[id]) return x->vals[id];
  if (x->consts[id]) return x->consts[id];
  if (x->home[id] == HOME_CARRIED) return x->vals[x->offset[id]];
  return NULL;
}

/* The data of value v during a run: its tensor (argument, constant, heap
 * value) or its arena slot; NULL when it has none (an internal error,
 * reported by the caller). */
__attribute__((always_inline)) static inline void *value_data(const cpu_exec *x,
                                                              const hlo_value *v) {
  if (v->id >= x->nvals) return NULL;
  tensor *t = value_tensor(x, v->id);
  if (t) return t->data;
  if (x->home[v->id] == HOME_ARENA) {
    uint32_t h = x->in_result_of ? x->in_result_of[v->id] : 0;
    if (h) { /* in a result's allocation (made at the run's start) */
      const tensor *ht = x->vals[h - 1];
      return ht ? ht->data + x->offset[v->id] : NULL;
    }
    const program *p = &x->progs[x->prog_of[v->id]];
    return p->arena ? p->arena + x->offset[v->id] : NULL;
  }
  return NULL;
}

/* A step's error st located at its op, noting "in the thunk of OP", when
 * it carries no location yet (a backend's or library's error); st as is
 * otherwise (NULL: NULL). */
static inline hlo_status cpu_step_error(hlo_status st, const step *s) {
  if (st && !status_loc(st))
    st = status_note(status_locate(st, &s->op->loc), "in the thunk of %s", op_name(s->op->opcode));
  return st;
}

/* HLO_RESOURCE_EXHAUSTED "out of memory". */
hlo_status cpu_oom(void);
/* Milliseconds of a monotonic clock. */
double cpu_now_ms(void);
/* Bytes of a static tensor value (0 for tokens, tuples, dynamic shapes). */
int64_t cpu_value_bytes(const hlo_value *v);
/* Appends to vs[0..*n) (growing it) every value that the nested regions
 * of `op` read and that is defined outside `op` (its captured values),
 * once each, also one already in vs[0..*n) (an operand the regions read
 * directly too: then listed twice, as an operand and as captured). */
HLO_MUST_USE hlo_status cpu_captured(const hlo_op *op, const hlo_value ***vs, uint32_t *n,
                                     uint32_t *cap);

/* Makes constant `v` (its op run by the interpreter) once, into
 * x->consts (a no-op when made already). Errors: the interpreter's. */
HLO_MUST_USE hlo_status cpu_make_constant(cpu_exec *x, const hlo_value *v);

/* executable_cpu_copy.c: the data-movement step kind that runs `op`
 * natively (STEP_DSLICE ... STEP_SCATTER), or STEP_INTERP when its form is
 * not one of those. */
step_kind cpu_copy_form(const hlo_op *op);
/* Runs data-movement step s on bufs (its operands, then its result).
 * Errors: HLO_INTERNAL for an unreadable attribute. */
HLO_MUST_USE hlo_status cpu_run_copy(const step *s, void *const *bufs);
/* Whether data-movement step s runs on backend be's copy_box / fill_box
 * (a device backend with those slots): dynamic_slice, dynamic_update_slice
 * and pad whose box has at most BACKEND_BOX_MAX_RANK dims once extents of
 * 1 are dropped and contiguous dims merged, fills (STEP_FILL: its splat
 * written by fill_box; host and dev then have no operands), and the row
 * gather / scatter on gather_rows / scatter_rows (their indices device
 * operands too). */
/* pad step s's geometry, per dim of its operand (rank <= 16): the first
 * operand element inside the result, how many land inside, the stride
 * between them in the result (interior + 1) and the low edge padding;
 * *empty when none lands inside. Errors: HLO_INTERNAL for unreadable
 * padding attributes (the verifier's to catch). */
HLO_MUST_USE hlo_status cpu_pad_geometry(const step *s, int64_t *first, int64_t *count,
                                         int64_t *stride, int64_t *low, bool *empty);
bool cpu_copy_on_backend(const backend *be, const step *s);
/* Whether copy step s (cpu_copy_on_backend) reads its start indices in the
 * backend's memory (dynamic_slice, dynamic_update_slice on a backend with
 * dyn_box, at most BACKEND_BOX_MAX_RANK indices): then they are device
 * operands like the others, and the host reads nothing. */
bool cpu_copy_indices_on_device(const backend *be, const step *s);
/* Runs step s (cpu_copy_on_backend) on be: host[i] the host pointers of
 * its scalar operands (start indices, pad's value: valid on the host,
 * unless cpu_copy_indices_on_device: then unused), dev[0..nin] the device
 * pointers of its operands (the start indices among them), then its result
 * (the result may be operand 0's memory: dynamic_update_slice in place).
 * Enqueued on the backend's stream. Errors: the backend's. */
HLO_MUST_USE hlo_status cpu_run_copy_on_backend(const backend *be, const step *s,
                                                void *const *host, void *const *dev);

/* executable_cpu_epilogue.c: merges each GEMM step with the kernel step
 * that next reads its result, where that kernel's tiles are rows of it and
 * its other inputs are ready before the GEMM (ks[0..nks): the kernels by
 * step.kernel). Run before buffer assignment. Errors: out of memory. */
HLO_MUST_USE hlo_status cpu_fuse_epilogues(cpu_exec *x, kernel *const *ks, uint32_t nks);
/* Runs GEMM step s on bufs (its inputs, then its outputs), with its
 * epilogue kernel if it has one. Errors: the backend's. */
HLO_MUST_USE hlo_status cpu_run_gemm(cpu_exec *x, const step *s, void *const *bufs);

/* executable_cpu_buffers.c: per program, the values freed after each step
 * and the buffer assignment (homes, arena offsets, the memory figures of
 * x->stats); then, with a dump folder, DIR/buffer_assignment.txt. */
HLO_MUST_USE hlo_status cpu_plan_buffers(cpu_exec *x, const char *dump_dir);

/* executable_cpu_device.c: the device-memory path (its header comment has
 * the design). All take x with x->dev set unless said otherwise. */
typedef struct cpu_dev cpu_dev;
/* Makes x->dev and uploads the constants. Errors: out of (device) memory,
 * the backend's copy. */
HLO_MUST_USE hlo_status cpu_dev_create(cpu_exec *x);
/* Frees x->dev and its device buffers (NULL x->dev is fine). */
void cpu_dev_destroy(cpu_exec *x);
/* Makes the device arena (after the host one, make_arenas). */
HLO_MUST_USE hlo_status cpu_dev_arena(cpu_exec *x);
/* The device pointer of host memory host[0..bytes) (an arena slot, or the
 * data of tensor `owner`, whose entry is made when missing), for a device
 * step that reads it (uploaded where stale) / writes it whole (marked
 * valid on the device only). */
HLO_MUST_USE hlo_status cpu_dev_in(cpu_exec *x, tensor *owner, void *host, size_t bytes,
                                   void **dev);
HLO_MUST_USE hlo_status cpu_dev_out(cpu_exec *x, tensor *owner, void *host, size_t bytes,
                                    void **dev);
/* A host step reads host[0..bytes) (downloaded where stale) / wrote it
 * (valid on the host only). No-ops when x->dev is NULL. */
HLO_MUST_USE hlo_status cpu_dev_host_in(cpu_exec *x, const void *host, size_t bytes);
HLO_MUST_USE hlo_status cpu_dev_host_out(cpu_exec *x, const void *host, size_t bytes);
/* The same for a whole tensor (a tuple: its elements). No-ops without x->dev. */
HLO_MUST_USE hlo_status cpu_dev_tensor_host(cpu_exec *x, const tensor *t);
HLO_MUST_USE hlo_status cpu_dev_tensor_wrote(cpu_exec *x, const tensor *t);
/* Copies bytes from src to dst (dst: an arena slot or tensor dst_owner's
 * data): on the device when src is valid there, else on the host. Plain
 * memcpy when x->dev is NULL. */
HLO_MUST_USE hlo_status cpu_dev_copy(cpu_exec *x, tensor *dst_owner, void *dst, const void *src,
                                     size_t bytes);
/* cpu_value_bytes(v), kept per value id after its first call (every
 * native step asks per run). */
size_t cpu_dev_value_bytes(cpu_exec *x, const hlo_value *v);
/* cpu_copy_on_backend(backend, s), kept per step after its first call. */
bool cpu_dev_copy_on_backend(cpu_exec *x, const step *s);
/* Whether an entry holds a reference to t (false without x->dev). */
bool cpu_dev_holds(const cpu_exec *x, const tensor *t);
/* Drops the entries that hold their tensor's last reference. */
void cpu_dev_sweep(cpu_exec *x);
/* Drops every entry but the constants' (the run is over; its results
 * downloaded). No-op without x->dev. */
void cpu_dev_end_run(cpu_exec *x);
/* Before a run: the arguments that carry a device copy in this backend's
 * memory (tensor.device, lent by the caller for the run) are registered
 * as valid on the device (and on the host when host_valid), so that
 * device steps read them without an upload. No-op off a device backend.
 * Errors: HLO_RESOURCE_EXHAUSTED. */
HLO_MUST_USE hlo_status cpu_dev_begin_run(cpu_exec *x, tensor *const *args, uint32_t n);
/* After a run, for each result r (tuples: their elements): when r's bytes
 * are in a device buffer of r's own (not a constant's, not an argument's),
 * that buffer is handed to r as r->device (host_valid when the host mirror
 * holds the same bytes) and the run no longer frees it; otherwise r's host
 * bytes are made valid (downloaded). Errors: the backend's copy errors,
 * HLO_RESOURCE_EXHAUSTED. */
HLO_MUST_USE hlo_status cpu_dev_result(cpu_exec *x, tensor *r);

/* executable_cpu_graph.c: graph replay on the device-memory path (its
 * header comment has the design). */
/* After every result went through cpu_dev_result (nres of them): when the
 * run launched a graph and each result was handed a graph buffer of its
 * own, the graph keeps the run's key and how its results were made, so
 * that a later run of the same key skips its steps (cpu_dev_replay). */
void cpu_dev_results_done(cpu_exec *x, uint32_t nres);
/* After cpu_dev_begin_run: when the run is deferred and its key (the
 * arguments' device pointers and what the runtime reads of them, every
 * graph buffer's pointer) is that of a run whose graph made all its
 * results, that graph is launched now and *replayed is set: the run's
 * steps must not run; its results are made by the caller (host mirrors
 * of the result types, not zeroed) and handed their device buffers, in
 * order, by cpu_dev_replay_result. Errors: the backend's graph_launch. */
HLO_MUST_USE hlo_status cpu_dev_replay(cpu_exec *x, bool *replayed);
/* Result r (the next one, in order) of a run cpu_dev_replay replayed:
 * r->device set to the graph buffer the graph wrote it in. Errors:
 * HLO_INTERNAL when the replay holds no such result, out of memory. */
HLO_MUST_USE hlo_status cpu_dev_replay_result(cpu_exec *x, tensor *r);

/* executable_cpu_run.c: runs program `p` with its block arguments bound to
 * args[0..nargs) (borrowed); *out gets a malloc'd array of the block
 * terminator's operand count of new references (the program's results,
 * never pointing into an arena). */
HLO_MUST_USE hlo_status cpu_run_program(cpu_exec *x, uint32_t p, tensor *const *args,
                                        uint32_t nargs, tensor ***out, uint32_t *nout);
/* Releases every tensor of the run (vals). */
void cpu_clear_vals(cpu_exec *x);
/* Initialises a loop's carried buffer dst (bytes; tensor `owner`'s data,
 * or an arena slot: NULL) from init value v (tensor t): nothing when it
 * lies there already, a fill when v is a splat filled at run time
 * (write-only; its own STEP_FILL may then be elided), else a copy. XLA's
 * copy insertion before a while. Errors: HLO_INTERNAL when t's size is
 * not bytes, the backend's copy and fill errors. */
HLO_MUST_USE hlo_status cpu_init_loop_state(cpu_exec *x, const hlo_value *v, const tensor *t,
                                            tensor *owner, void *dst, size_t bytes);

/* executable_cpu_loop.c: runs while step s (in: its operands, then its
 * captured values, as run_while has them) on fixed buffers when its cond
 * and body hold only native steps (the file's comment says when); *ran
 * false: not taken, nothing done (the caller runs the loop); true: out[i]
 * set as run_while sets it (NULL for a result in its arena slot). Errors:
 * the steps', out of memory. */
HLO_MUST_USE hlo_status cpu_run_while_fixed(cpu_exec *x, const step *s, tensor *const *in,
                                            tensor **out, bool *ran);

#endif
