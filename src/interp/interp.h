/* interp.h — the reference interpreter: the contract between its core
 * (interp.c) and the files that implement op kernels.
 *
 * The interpreter walks a function's ops in order; for each op it gathers
 * the operand values, allocates nothing for results, and calls the op's
 * kernel, which creates the results. Kernels follow the spec literally: walk
 * the result's index space, compute each element as the spec's semantics
 * say. Slow and simple on purpose: this is the oracle other backends are
 * checked against.
 *
 * Values: a `tensor` is a reference-counted runtime value: a dense tensor
 * (storage layout of dtypes.def, row-major), a tuple of values, or a token.
 */
#ifndef HLO_INTERP_INTERP_H
#define HLO_INTERP_INTERP_H
#include <stdbool.h>
#include <stdint.h>
#include "ir/element.h"
#include "ir/ir.h"

typedef struct tensor tensor;
/* A copy of a tensor's bytes in a device backend's memory (runtime: a GPU
 * run's result left on the device, or an argument given as a device
 * buffer). `ptr` holds the tensor's nbytes; `host_valid` says whether the
 * tensor's `data` holds the same bytes (when false, `data` is only room for
 * a download). `backend` is the backend table whose memory holds ptr
 * (opaque here). The tensor owns the struct: tensor_release calls
 * release(d), which frees ptr when the copy is the tensor's own and then
 * d itself (ptr only when `own`). */
typedef struct tensor_device {
  void *ptr;
  const void *backend;
  bool host_valid;
  bool own;     /* release frees ptr (the tensor's own copy), else ptr is lent */
  void (*release)(struct tensor_device *d);
} tensor_device;
struct tensor {
  const hlo_type *type;   /* TENSOR (static shape), TUPLE or TOKEN */
  int64_t num_elems;      /* tensors: element count */
  size_t nbytes;          /* tensors: bytes of data */
  uint8_t *data;          /* tensors: malloc'd, zeroed at creation */
  uint32_t num_tuple;     /* tuples: element count */
  tensor **tuple;         /* tuples: owned references */
  int refcount;           /* atomic: values cross threads in run_parallel */
  bool borrowed;          /* data belongs to someone else (tensor_wrap): not freed */
  tensor_device *device;  /* a device copy of data, or NULL (interpreter: always) */
};

/* A new zeroed tensor of static tensor type `t` (or a token for a token
 * type), refcount 1; release with tensor_release. Returns NULL when `t` is
 * NULL, a tuple or dynamic, its byte size overflows or exceeds
 * interp_max_tensor_bytes(), or memory runs out; use tensor_create to get a
 * status instead. */
tensor *tensor_new(const hlo_type *t);
/* A tensor of static tensor type `t` over `data` (borrowed: at least the
 * type's byte size, not freed by tensor_release, and it must outlive the
 * tensor), refcount 1. The CPU backend wraps its arena buffers so the
 * interpreter's kernels can read them. NULL on out of memory or a type
 * that is not a static tensor. */
tensor *tensor_wrap(const hlo_type *t, void *data);
/* tensor_new with a located status: HLO_RESOURCE_EXHAUSTED naming the type
 * (too large, or out of memory), HLO_UNIMPLEMENTED for a dynamic shape,
 * HLO_INTERNAL for a NULL or tuple type. *out is a new reference. */
HLO_MUST_USE hlo_status tensor_create(const hlo_type *t, const hlo_loc *loc, tensor **out);
/* tensor_create for a static tensor type whose data is NOT zeroed: for a
 * buffer its writer fills whole before anyone reads it (a kernel's output, a
 * host mirror a download fills), where zeroing would cost a pass over its
 * bytes. Same errors as tensor_create (other types go to it); tensor_release
 * frees it. */
HLO_MUST_USE hlo_status tensor_create_uninit(const hlo_type *t, const hlo_loc *loc,
                                             tensor **out);
/* A tuple value of type `t` holding new references to elems[0..n); *out is a
 * new reference. Errors: HLO_RESOURCE_EXHAUSTED (located at `loc`). */
HLO_MUST_USE hlo_status tensor_create_tuple(const hlo_type *t, tensor *const *elems, uint32_t n,
                                            const hlo_loc *loc, tensor **out);
/* Adds a reference (atomically) and returns `v`. */
tensor *tensor_retain(tensor *v);
/* Drops a reference; the last one frees the data and releases tuple
 * elements. NULL is fine. */
void tensor_release(tensor *v);
/* Upper bound on one tensor's size in bytes (64 GiB). */
#define HLO_MAX_TENSOR_BYTES ((size_t)1 << 36)
/* Largest tensor the interpreter will allocate (bytes): the smaller of
 * HLO_MAX_TENSOR_BYTES and half the machine's physical memory
 * (sysconf(_SC_PHYS_PAGES)), so an absurd size fails at once instead of
 * swapping. Computed on first call. */
size_t interp_max_tensor_bytes(void);

/* Row-major index helpers: the linear index of `idx` in `dims` (`rank`
 * entries), and the inverse (writes `rank` entries to idx). No bounds
 * checks: indices must be in range. */
int64_t index_linear(const int64_t *dims, uint32_t rank, const int64_t *idx);
void index_unlinear(const int64_t *dims, uint32_t rank, int64_t lin, int64_t *idx);
/* Advances `idx` to the next index in row-major order; false when it wraps
 * around to all zeros (the walk is over). */
bool index_next(const int64_t *dims, uint32_t rank, int64_t *idx);

typedef struct interp interp;

/* Per-process options of an interpreter run. */
typedef struct interp_options {
  const char *probe_dir;   /* directory for interpreter.probe (NULL: none) */
  FILE *print_out;         /* where interpreter.print writes (NULL: stdout) */
} interp_options;

/* A kernel: computes the results of `op` from its operand values `in`
 * (op->num_operands of them; borrowed) into `out` (op->num_results slots, each
 * to be set to a new reference of type result_types[i]). Kernels read result
 * types from `result_types`, never from op->results[i].type: for ops on
 * quantized tensors the core follows the spec's dequantize_op_quantize —
 * it dequantizes the operands to the expressed type, calls the kernel with
 * expressed-type result types, and quantizes the results — so the kernel
 * sees floats only. (uniform_quantize, uniform_dequantize and
 * bitcast_convert get the quantized values and types as they are.)
 * On error, leaves `out` unset (releasing anything it made) and returns a
 * status located at op->loc (use interp_error). */
typedef hlo_status (*interp_kernel)(interp *it, const hlo_op *op, tensor *const *in,
                                    const hlo_type *const *result_types, tensor **out);

/* Each kernel file fills in the table slots of the ops it implements. Called
 * once, in this order, by the core; a later file may not overwrite a slot. */
void interp_register_elementwise(interp_kernel *table);  /* interp_elementwise.c */
void interp_register_control(interp_kernel *table);      /* interp_control.c */
void interp_register_check(interp_kernel *table);        /* interp_check.c */
void interp_register_shape(interp_kernel *table);        /* interp_shape.c */
void interp_register_reduce(interp_kernel *table);       /* interp_reduce.c */
void interp_register_linalg(interp_kernel *table);       /* interp_linalg.c */
void interp_register_collective(interp_kernel *table);   /* interp_collective.c */
void interp_register_custom_call(interp_kernel *table);  /* interp_custom_call.c */
void interp_register_sdy(interp_kernel *table);          /* interp_sdy.c */
void interp_register_fusion(interp_kernel *table);       /* interp_fusion.c */
/* uniform_quantize / uniform_dequantize (interp_quant.c); called by
 * interp_register_elementwise. */
void interp_register_quant(interp_kernel *table);

/* Custom calls: interp_custom_call.c owns OP_CUSTOM_CALL and dispatches on
 * call_target_name. Targets starting with "check." go to interp_check.c: */
HLO_MUST_USE hlo_status interp_check_custom_call(interp *it, const hlo_op *op, tensor *const *in,
                                                 const hlo_type *const *result_types,
                                                 tensor **out);

/* Whether custom_call target `name` has a handler (interp_custom_call.c);
 * `hlo check` warns about those that do not. */
bool interp_custom_call_known(const char *name);

/* A new interpreter over module `m` (borrowed; must outlive it); numbers the
 * values of m's functions. *out is yours (interp_destroy). Errors:
 * HLO_RESOURCE_EXHAUSTED (out of memory, or no mutex). */
HLO_MUST_USE hlo_status interp_create(const hlo_module_ir *m, const interp_options *opts,
                                      interp **out);
/* Frees `it` (NULL is fine). State shared with forks (arenas holding types of
 * values that may outlive a fork, the probe state) is freed with the last
 * interpreter of the family. */
void interp_destroy(interp *it);
/* Makes the runs of `it` (and of interpreters forked from it later) stop
 * once `*flag` is true (read atomically, with acquire order, before each op
 * of every block, loop bodies included; an op already running finishes
 * first): the run then fails with HLO_UNAVAILABLE ("the run was
 * cancelled"), located at the next op, and interp_was_cancelled(it) is
 * true until the next outermost interp_call. `flag` is borrowed and must
 * outlive the runs (NULL: runs are never cancelled). Not thread-safe with a
 * run of `it` in progress; set it before. The runtime's tiered execution
 * (docs/tiered.md) sets it when the native code is ready. A cancelled run
 * leaves its arguments as they were (the interpreter never writes them). */
void interp_set_cancel(interp *it, const bool *flag);
/* Whether the last outermost interp_call of `it` stopped at the cancel flag. */
bool interp_was_cancelled(const interp *it);
/* The module and options `it` was created with (lent). */
const hlo_module_ir *interp_module(const interp *it);
const interp_options *interp_opts(const interp *it);

/* Runs function `f` on `args` (f->num_args borrowed values). On success
 * *out_results is a malloc'd array (yours to free) of f->num_results new
 * references; on error it is NULL. Errors: HLO_INVALID_ARGUMENT at f when
 * nargs is wrong or an argument is missing or not of the parameter's
 * kind/element type/shape; any op's error (located at the op);
 * HLO_RESOURCE_EXHAUSTED (out of memory, nesting over the depth limit);
 * HLO_INTERNAL for malformed IR the verifier should have rejected. */
HLO_MUST_USE hlo_status interp_call(interp *it, const hlo_func *f, tensor *const *args,
                                    uint32_t nargs, tensor ***out_results);
/* Runs the single block of region `r` with block arguments `args`; the
 * values its terminator (stablehlo.return / func.return) returns are written
 * to out[0..*out_n) as new references (out must have room for the
 * terminator's operand count, at most `cap`). Used by reduce bodies, sort
 * comparators, while/if/case branches, map. Errors as interp_call (a wrong
 * argument count is HLO_INTERNAL at the region's op). */
HLO_MUST_USE hlo_status interp_run_region(interp *it, const hlo_region *r, tensor *const *args,
                                          uint32_t nargs, tensor **out, uint32_t cap,
                                          uint32_t *out_n);
/* Arena for types a kernel must make at run time (e.g. 0-d element types
 * for region arguments); lives as long as the interpreter. */
arena *interp_arena(interp *it);
/* The 0-d tensor type of element type `t` (cached per interpreter; lent);
 * NULL for an invalid `t` or on out of memory. */
const hlo_type *interp_scalar_type(interp *it, hlo_dtype t);

/* A located error of `code` at `op` ("stablehlo.dot_general: MESSAGE"); `op`
 * may be NULL (no location). Never NULL. */
hlo_status interp_error(const hlo_op *op, hlo_status_code code, const char *fmt, ...)
    HLO_PRINTF(3, 4);

/* Collective context of the running thread's process (replica and partition
 * ids, the grid) — set by run_parallel; (0, 0) of a 1x1 grid otherwise. */
typedef struct interp_process {
  int64_t replica_id, partition_id;
  int64_t num_replicas, num_partitions;
  void *grid;              /* interp_collective.c's shared state, or NULL */
} interp_process;
/* The process identity of `it` (lent; kernels may read it, run_parallel
 * sets it on forks). */
interp_process *interp_current_process(interp *it);
/* A new interpreter sharing `parent`'s module, options, kernel table and
 * probe state, with its own process identity `p` (NULL: (0, 0) of 1x1): one
 * per thread of interpreter.run_parallel. Destroy it with interp_destroy.
 * Errors: HLO_RESOURCE_EXHAUSTED. */
HLO_MUST_USE hlo_status interp_fork(interp *parent, const interp_process *p, interp **out);

/* True the first time `key` (compared by content, copied) is passed for
 * `it`'s family (it and its forks: one executable), false after; thread-safe.
 * For warnings given once per executable. Out of memory: true again. */
bool interp_first_time(interp *it, const char *key);
/* Opaque per-run state slot for interp_check.c (probe counters); shared by
 * forks, initially NULL, freed by nobody but its owner through the cleanup
 * function it registers with interp_set_probe_state. */
void *interp_probe_state(interp *it);
/* Sets the shared slot (under the family's mutex); `cleanup(state)` runs when
 * the last interpreter of the family is destroyed. */
void interp_set_probe_state(interp *it, void *state, void (*cleanup)(void *));
/* Quantization (interp_quant.c; the spec's "Quantization computations").
 * interp_expressed_type: the tensor type of quantized type `qt` with its
 * expressed element type (cached per interpreter; `qt` itself when it is not
 * quantized; NULL on out of memory).
 * interp_dequantize: the spec's dequantize: (storage - zero_point) * scale,
 * computed in the expressed type, per axis when the type has an axis. `q`
 * must have a quantized tensor type.
 * interp_quantize: the spec's quantize of float tensor `x` to quantized type
 * `qt`: x / scale + zero_point, clamped to [storage_min, storage_max], then
 * rounded to nearest even (NaN gives 0); each step rounded to the expressed
 * type as the spec's convert does. *out is a new reference.
 * Errors (located at `op`): HLO_RESOURCE_EXHAUSTED; HLO_INTERNAL when `q` /
 * `qt` is not quantized or the shapes differ. */
const hlo_type *interp_expressed_type(interp *it, const hlo_type *qt);
HLO_MUST_USE hlo_status interp_dequantize(interp *it, const hlo_op *op, const tensor *q,
                                          tensor **out);
HLO_MUST_USE hlo_status interp_quantize(interp *it, const hlo_op *op, const tensor *x,
                                        const hlo_type *qt, tensor **out);
/* Runs one op `op` of a function body (any depth) outside interp_call,
 * as another executor's fallback (the CPU backend's interpreter thunks):
 * vals[i] is bound to ins[i] (borrowed) for i < n — the op's operands and
 * every value defined outside it that its nested regions read — then the
 * op's kernel runs as interp_call would run it; out[0..op->num_results)
 * receive new references. Errors: HLO_INTERNAL when an operand or captured
 * value is not bound ("has no value"), else the kernel's (located at op). */
HLO_MUST_USE hlo_status interp_run_op(interp *it, const hlo_op *op, const hlo_value *const *vals,
                                      tensor *const *ins, uint32_t n, tensor **out);
#endif
