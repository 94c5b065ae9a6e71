/* backend.h — the interface every backend implements (../shared/DESIGN.md,
 * "Backends"): a table of function pointers, as ggml's backends are. The
 * runtime picks a backend through this table only; a backend includes this
 * header, codegen/ and below, never runtime/ or another backend.
 *
 * Version 0: compiling kernels (codegen/kernel.h) into a loaded module,
 * launching them on buffers, and memory. Slots a backend does not have yet
 * are NULL (library calls: gemm, conv; streams and events come with CUDA).
 *
 * Ownership: a backend_module from `compile` is yours (`module_destroy`);
 * kernels passed to `compile` are borrowed for the call only (the module
 * keeps what it needs: the kernels' names, buffer counts and tile counts). */
#ifndef HLO_BACKEND_BACKEND_H
#define HLO_BACKEND_BACKEND_H
#include <stddef.h>
#include <stdint.h>
#include "backend/conv_describe.h"
#include "backend/sort_describe.h"
#include "backend/window_describe.h"
#include "codegen/kernel.h"

typedef struct backend_module backend_module;

/* A compiled object of a module: one translation unit's machine code (the
 * CPU backend: a shared object's bytes; CUDA: a cubin). The compilation
 * cache (runtime/compile_cache.h) stores a module's objects in its entry
 * and gives them back to the next compile of the same program. */
typedef struct backend_object {
  char key[33];           /* the unit's key: 32 hex digits of a hash of what
                             the bytes are for: the target (backend.target:
                             CPU, flags) and the source. Not the compiler's
                             version (the kernel cache's own key has it) */
  const void *bytes;      /* lent */
  size_t len;
} backend_object;

/* How a compile obtained its units (backend_compile_options.stats). */
typedef struct backend_compile_stats {
  uint32_t units;         /* translation units of the module */
  uint32_t from_objects;  /* loaded from backend_compile_options.objects */
  uint32_t from_kernel_cache; /* loaded from the kernel cache */
  uint32_t compiled;      /* compiled now */
  double emit_ms;         /* generating the source */
  double cc_ms;           /* compiling and loading (wall) */
} backend_compile_stats;

/* Options of a compile. */
typedef struct backend_compile_options {
  const char *dump_dir;   /* when set, the generated source is written there (--dump-to) */
  const char *cc;         /* the C compiler (cpu); NULL: $HLO_CC, else "cc" */
  /* The cache root (support/cache_dir.h) whose kernels/ folder caches
   * compiled units: NULL resolves it from the environment
   * (cache_dir_root(NULL)); "off" disables the kernel cache. */
  const char *cache_root;
  /* Objects to load instead of compiling: a unit whose key equals
   * objects[i].key is loaded from objects[i].bytes (no compiler, no kernel
   * cache lookup). A unit with no match is looked up and compiled as usual;
   * an object that does not load (corrupt bytes, a missing symbol) is
   * ignored and its unit compiled. Lent for the call only. */
  const backend_object *objects;
  uint32_t num_objects;
  backend_compile_stats *stats;  /* when set, filled (out) */
} backend_compile_options;

/* A batched row-major matrix product (the library gemm slot): for each of
 * `batch` matrices, C[b] (m x n) = op(A[b]) * op(B[b]), where op(A) (m x k)
 * is A stored m x k, or A stored k x m transposed when trans_a; op(B)
 * (k x n) likewise (n x k stored when trans_b). Element type F32, F64 or
 * BF16 for A, B and C alike, or BF16 A and B with an F32 C (c_dtype); C is
 * overwritten (beta = 0).
 *
 * Layout: by default (every stride field 0) the matrices are dense and
 * consecutive: A[b] starts b * m * k elements after A, its rows (as
 * stored) are k elements apart (m when trans_a); B and C likewise. A
 * non-zero field overrides one of these, in elements: lda, ldb, ldc the
 * distance between consecutive stored rows (at least the stored row's
 * length: k or m for A, n or k for B, n for C), batch_stride_a/b/c the
 * distance between consecutive matrices of the batch. So a batch dim that
 * is not outermost (heads inside rows: [seq, heads, d]) is lda = heads * d,
 * batch_stride_a = d, with no transpose copy. The C matrices must not
 * overlap one another (nor A or B). */
typedef struct backend_gemm {
  hlo_dtype dtype;        /* of A and B */
  hlo_dtype c_dtype;      /* of C: dtype, or F32 for BF16 operands */
  int64_t batch, m, n, k;
  bool trans_a, trans_b;
  int64_t lda, ldb, ldc;  /* row strides, in elements (0: dense) */
  int64_t batch_stride_a, batch_stride_b, batch_stride_c; /* in elements (0: dense) */
  /* F32 only: the product may round its operands to TF32 (8-bit exponent,
   * 10-bit mantissa) on tensor cores, summing in f32 — set where the dot
   * allows it as XLA reads it on GPUs (precision_config DEFAULT on both
   * operands, no `algorithm`); HIGH / HIGHEST or an algorithm keep full
   * f32. A backend without such a mode ignores it (the CPU). */
  bool allow_tf32;
} backend_gemm;

/* An epilogue for output fusion (backend.gemm_epilogue): fn(ctx, batch,
 * row_begin, row_end) is called once for each block of rows
 * [row_begin, row_end) of each matrix C[batch] of the product, right after
 * those rows are computed, so that it can read and rewrite them (or read
 * them to write something else) while they are still in the cache.
 * The contract:
 *   - every row of every matrix of C is in exactly one call's block; blocks
 *     are disjoint, non-empty, and within one matrix (row_end <= m);
 *   - when fn is called, rows [row_begin, row_end) of C[batch] hold their
 *     final product values (all n columns, the whole k summed), and no
 *     other thread reads or writes those rows while fn runs (fn may
 *     overwrite them: the gemm does not touch them again); fn may touch
 *     only its own rows of C (other blocks are being written meanwhile);
 *   - fn runs on the thread that computed the block (a worker of hlo's
 *     thread pool, or the calling thread), with that thread's own
 *     floating-point mode (the GEMM's flush-to-zero is undone before);
 *     calls for different blocks run concurrently on different threads, in
 *     no promised order, so fn must be safe to run at once on disjoint
 *     blocks; a parallel call fn makes into the thread pool runs inline;
 *   - when gemm_epilogue returns, every call has returned (the whole C is
 *     computed and every block's fn has finished); when it returns an
 *     error, fn may have run on some blocks and not others; when C is
 *     empty (batch, m or n is 0), fn is not called.
 * Blocks are chosen by the backend. The CPU backend's (backend/cpu/gemm.h):
 * whole matrices when the product is small (under 128^3 multiply-adds in
 * all: on the calling thread) or the batch has at least 2 matrices a
 * thread; else about m / (2 x threads) rows (m / threads when B is over 1
 * MiB), a multiple of 16. */
typedef struct backend_gemm_epilogue {
  void (*fn)(void *ctx, int64_t batch, int64_t row_begin, int64_t row_end);
  void *ctx;              /* passed to fn as is */
} backend_gemm_epilogue;

/* A box of elements to copy or fill (backend.copy_box / fill_box): for
 * every index i of dims[0..rank), the element at dst_off + sum(i[d] *
 * dst_strides[d]) of dst is written (from src_off + sum(i[d] *
 * src_strides[d]) of src for copy_box; fill_box ignores the src fields).
 * Offsets and strides are in elements of esize bytes (1, 2, 4, 8 or 16);
 * rank 0 is one element; dims of 0 make the call a no-op. Destination
 * elements of one call must not overlap each other, nor the source. */
#define BACKEND_BOX_MAX_RANK 8
typedef struct backend_box {
  uint32_t rank;
  uint32_t esize;
  int64_t dims[BACKEND_BOX_MAX_RANK];
  int64_t dst_off, src_off;
  int64_t dst_strides[BACKEND_BOX_MAX_RANK];
  int64_t src_strides[BACKEND_BOX_MAX_RANK];
  /* Start indices read in the backend's memory when the box is walked
   * (copy_box only, on a backend with `dyn_box`: dynamic_slice and
   * dynamic_update_slice without a download of their indices): for each
   * d < ndyn, the integer at dyn_index[d] (dyn_size bytes: 1, 2, 4 or 8;
   * signed when dyn_signed), clamped to [0, dyn_max[d]], times
   * dyn_stride[d] elements, is added to dst_off (dyn_dst) or to src_off.
   * ndyn 0: none (the offsets as given). */
  uint32_t ndyn, dyn_size;
  bool dyn_signed, dyn_dst;
  const void *dyn_index[BACKEND_BOX_MAX_RANK];
  int64_t dyn_max[BACKEND_BOX_MAX_RANK], dyn_stride[BACKEND_BOX_MAX_RANK];
} backend_box;

/* Rows to gather (backend.gather_rows): nidx rows of row_bytes bytes
 * each; row i of the output is row (i / per_batch) * nrows + clamp(idx[i],
 * 0, nrows - 1) of the source; idx holds nidx integers of idx_size bytes
 * (1, 2, 4 or 8), signed when idx_signed. To scatter
 * (backend.scatter_rows): for i = 0, 1, ... in order, row i of the updates
 * is written over (add: added to, elements of type dtype: F32, F64, I32,
 * I64, integers wrapping) row (i / per_batch) * nrows + idx[i] of the
 * output, skipped when idx[i] is outside [0, nrows). */
typedef struct backend_rows {
  int64_t nidx, per_batch, nrows, row_bytes;
  uint32_t idx_size;
  bool idx_signed;
  bool add;               /* scatter: add (else set) */
  hlo_dtype dtype;        /* scatter add: the element type */
} backend_rows;

/* A conditional node of a graph recording (backend.graph_cond_*): CUDA's
 * conditional nodes. Its condition is read in the backend's memory when
 * the graph runs: `pred`, one integer of pred_size bytes (1, 2, 4 or 8).
 *   BACKEND_COND_WHILE: its body runs while pred is true: non-zero, or,
 *     when pred_bit, its bit 0 set (an i1 stored in a byte);
 *   BACKEND_COND_IF: body 0 runs when pred is true (as WHILE reads it),
 *     else body 1 (nbranches 2): stablehlo.if;
 *   BACKEND_COND_SWITCH: body pred runs, pred an index (signed when
 *     pred_signed), one out of [0, nbranches) taking the last body:
 *     stablehlo.case. */
enum { BACKEND_COND_WHILE = 1, BACKEND_COND_IF = 2, BACKEND_COND_SWITCH = 3 };
typedef struct backend_cond {
  uint32_t kind;          /* BACKEND_COND_* */
  const void *pred;
  uint32_t pred_size;
  bool pred_bit;
  bool pred_signed;       /* SWITCH */
  uint32_t nbranches;     /* IF (2), SWITCH (at least 1) */
} backend_cond;

/* What conv_tuning_import made of a kept blob (backend.conv_tuning_import). */
typedef enum backend_tuning_kept {
  BACKEND_TUNING_USED,   /* checked for this device, library and settings: plans take them */
  BACKEND_TUNING_UNUSED, /* well-formed, but the library is off or does not load */
  BACKEND_TUNING_STALE,  /* well-formed, tuned for another device, library version or setting:
                            not used (tuned again) */
  BACKEND_TUNING_BAD,    /* malformed (truncated, another format, a bad record): nothing used */
} backend_tuning_kept;

typedef struct backend {
  const char *name;       /* "cpu", "cuda" */
  /* Whether the backend's buffers live in memory of their own (a GPU's):
   * then `alloc` returns device memory the host must not touch, `launch`
   * and the library calls take device pointers and may return before they
   * finish (in order on the backend's one stream), `copy` moves bytes
   * between host and device, and `synchronize` waits. False for the CPU:
   * buffers are host memory and every call is synchronous. */
  bool device_memory;
  /* Compiles kernels ks[0..n) into one module: kernel i is launched as
   * index i. Errors: HLO_UNIMPLEMENTED (an op or type the emitter lacks, at
   * the kernel's location), HLO_UNAVAILABLE (no compiler / driver),
   * HLO_INTERNAL (the compiler rejected the generated code: its messages). */
  HLO_MUST_USE hlo_status (*compile)(const kernel *const *ks, uint32_t n,
                                     const backend_compile_options *opts, backend_module **out);
  /* The generated source of the module (lent; NULL if none). */
  const char *(*module_source)(const backend_module *m);
  /* Runs kernel `index` of `m` over its whole index space on buffers
   * bufs[0..inputs+outputs) (the kernel's inputs, then its outputs, in the
   * backend's memory, in storage layout). Synchronous on the CPU. Errors:
   * HLO_INVALID_ARGUMENT for a bad index. */
  HLO_MUST_USE hlo_status (*launch)(backend_module *m, uint32_t index, void *const *bufs);
  /* Runs tiles [tile_begin, tile_end) of kernel `index` (kernel_num_tiles
   * numbering) on bufs, on the calling thread: a GEMM's epilogue runs the
   * tiles of the rows its thread computed (NULL where a backend cannot). */
  void (*launch_tiles)(backend_module *m, uint32_t index, void *const *bufs, int64_t tile_begin,
                       int64_t tile_end);
  void (*module_destroy)(backend_module *m);
  /* The module's compiled objects, one per unit, keys and bytes lent
   * (valid while `m` lives): *out is set to an array of the returned count.
   * NULL slot where a backend has none. */
  uint32_t (*module_objects)(const backend_module *m, const backend_object **out);
  /* What the backend's compiled code depends on besides the kernels: for
   * the CPU, the host CPU's identity and the compile flags (cpu_jit_target);
   * for CUDA, the GPU architecture and the NVRTC version. Text, lent (static; computed once per process, cheap after).
   * The compilation cache keys executables on it. NULL slot: nothing. */
  const char *(*target)(const backend_compile_options *o);
  /* Device memory: NULL on out of memory; free(NULL) is fine. */
  void *(*alloc)(size_t bytes);
  void (*free)(void *p);
  /* Copies n bytes (host<->device or device<->device: the backend knows). */
  HLO_MUST_USE hlo_status (*copy)(void *dst, const void *src, size_t n);
  /* Waits for everything launched so far. */
  HLO_MUST_USE hlo_status (*synchronize)(void);
  /* Library calls (NULL until a backend has them). gemm: see backend_gemm;
   * errors HLO_UNIMPLEMENTED for another element type, HLO_INVALID_ARGUMENT
   * for sizes past the library's int. */
  HLO_MUST_USE hlo_status (*gemm)(const backend_gemm *g, const void *a, const void *b, void *c);
  /* gemm with an epilogue `ep` (see backend_gemm_epilogue; NULL ep: as
   * gemm). Same errors as gemm. */
  HLO_MUST_USE hlo_status (*gemm_epilogue)(const backend_gemm *g, const void *a, const void *b,
                                           void *c, const backend_gemm_epilogue *ep);
  /* conv: a described convolution (backend/conv_describe.h); contract and
   * scratch as cpu_conv's (backend/cpu/conv.h). */
  HLO_MUST_USE hlo_status (*conv)(const backend_conv *c, const void *lhs, const void *rhs,
                                  void *output, void *scratch);
  /* Whether `conv` computes `c` (element types and forms it takes). */
  bool (*conv_takes)(const backend_conv *c);
  /* Bytes of scratch `conv` needs for `c` (the runtime's buffer assignment
   * provides them for the call only); may prepare library kernels for `c`
   * (call at compile time). */
  size_t (*conv_scratch_bytes)(const backend_conv *c);
  /* The algorithm choices the backend's convolution library timed at
   * compile time (CUDA: cudnnFind), kept by the compilation cache with the
   * executable (section "conv_tuning", runtime/executable_cache.h) so that
   * a warm compile times nothing. conv_tuning_export: the choices made in
   * this process for the convolutions cs[0..n) as one blob (*out
   * malloc'd, yours; NULL and 0 when none has one); errors
   * HLO_RESOURCE_EXHAUSTED. conv_tuning_import: gives a blob back before
   * the executable is lowered again (never fails; why[0..cap) says why for
   * STALE and BAD). NULL slots: the backend tunes nothing. */
  HLO_MUST_USE hlo_status (*conv_tuning_export)(const backend_conv *cs, uint32_t n, void **out,
                                                size_t *len);
  backend_tuning_kept (*conv_tuning_import)(const void *data, size_t len, char *why, size_t cap);
  /* reduce_window and select_and_scatter described by window_describe
   * (backend/window_describe.h): whether the backend takes `w`, and the
   * calls (contract as cpu_reduce_window's / cpu_select_and_scatter's in
   * backend/cpu/window.h: inputs {operand, init}, outputs {result}; the
   * result must not share memory with an input). */
  bool (*window_takes)(const backend_window *w);
  HLO_MUST_USE hlo_status (*reduce_window)(const backend_window *w, void *const *inputs,
                                           void *const *outputs);
  HLO_MUST_USE hlo_status (*select_and_scatter)(const backend_window *w, const void *operand,
                                                const void *source, const void *init,
                                                void *output);
  /* sort described by sort_describe (backend/sort_describe.h): whether the
   * backend takes `s`, and the call (contract as cpu_sort's in
   * backend/cpu/sort.h: inputs[k] -> outputs[k], no shared memory). */
  bool (*sort_takes)(const backend_sort *s);
  HLO_MUST_USE hlo_status (*sort)(const backend_sort *s, void *const *inputs, void *const *outputs);
  /* Copies the box `box` (backend_box) from src to dst, both the backend's
   * memory; fill_box writes the element value[0..box->esize) (host memory,
   * read during the call) to every element of the box in dst. Enqueued on
   * the backend's stream (asynchronous on a GPU). The runtime runs
   * dynamic_slice, dynamic_update_slice and pad on them on a device
   * backend (NULL slots: those steps run on the host mirror). Errors:
   * HLO_INVALID_ARGUMENT (rank past BACKEND_BOX_MAX_RANK, another esize),
   * the backend's launch errors. */
  HLO_MUST_USE hlo_status (*copy_box)(void *dst, const void *src, const backend_box *box);
  /* Whether copy_box honours a box's device-read start indices (ndyn;
   * errors HLO_INVALID_ARGUMENT for a bad dyn_size); false: the runtime
   * reads them on the host and passes plain offsets. */
  bool dyn_box;
  HLO_MUST_USE hlo_status (*fill_box)(void *dst, const void *value, const backend_box *box);
  /* Gathers rows (backend_rows) from src into out, idx read from the
   * backend's memory: the runtime's row gather (x[idx], take_along_axis)
   * on a device backend (NULL: on the host mirror). Enqueued on the
   * backend's stream. out must not overlap src or idx. Errors:
   * HLO_INVALID_ARGUMENT (another idx_size), the backend's launch errors. */
  HLO_MUST_USE hlo_status (*gather_rows)(void *out, const void *src, const void *idx,
                                         const backend_rows *r);
  /* Scatters rows (backend_rows) of upd into out in place, idx read from
   * the backend's memory, in the order of i (a row hit twice gets both, in
   * that order: the interpreter's result, bit for bit). NULL: on the host
   * mirror. out must not overlap upd or idx. Errors as gather_rows', and
   * HLO_INVALID_ARGUMENT for another add type. */
  HLO_MUST_USE hlo_status (*scatter_rows)(void *out, const void *upd, const void *idx,
                                          const backend_rows *r);
  /* Graphs: recording a sequence of enqueued work once and replaying it
   * with one call (CUDA graphs by stream capture; NULL slots on a backend
   * without them: the CPU, cpu-devmem). Between graph_begin and graph_end
   * the work slots (launch, gemm, conv, reduce_window, select_and_scatter,
   * sort, copy_box, fill_box, gather_rows, scatter_rows) are RECORDED on
   * the backend's stream, not run, with the pointers and parameters they
   * are given (the buffers' contents are read when the graph runs); no
   * other slot may be called meanwhile (alloc, free, copy and synchronize
   * would break the recording: the runtime calls none). graph_end stops
   * the recording and makes *graph, an executable graph (yours:
   * graph_destroy); after an error in a recorded call or in graph_end the
   * recording is over and *graph is NULL. graph_launch enqueues one run
   * of everything recorded, in order, on the stream (asynchronous like
   * launch); graph_destroy frees a graph (NULL is fine; one queued is
   * still run). Errors: the backend's (HLO_INTERNAL naming the driver's
   * error). Not thread-safe against other calls of the backend on another
   * thread during a recording. */
  HLO_MUST_USE hlo_status (*graph_begin)(void);
  HLO_MUST_USE hlo_status (*graph_end)(void **graph);
  HLO_MUST_USE hlo_status (*graph_launch)(void *graph);
  void (*graph_destroy)(void *graph);
  /* Conditional nodes in a recording (CUDA 12.4's conditional graph nodes:
   * a loop whose trip count is decided on the device replays as one graph
   * with no host round trip per iteration). NULL slots where a backend has
   * none; graph_cond_takes(c) false where it cannot make node c now (a
   * CUDA driver older than 12.4, or without the entry points; called
   * outside a recording: it may load what the nodes need).
   * Between graph_begin and graph_end:
   *   graph_cond_begin(c) records, at this point, the setting of the
   *   node's condition from c->pred (read when the graph runs: whether a
   *   WHILE's first iteration runs, which branch runs), then the node;
   *   the work slots called after it are recorded into the node's (first)
   *   BODY (a WHILE's: run once per iteration, as long as the condition
   *   holds at the body's end) until graph_cond_next or graph_cond_end;
   *   graph_cond_set(c), inside a WHILE's body, records the setting of the
   *   condition from c->pred (read when the body gets there: the pointer
   *   must be written by then in every iteration);
   *   graph_cond_next() ends an IF's or SWITCH's body and begins its next
   *   one (every one of nbranches bodies begun, in order);
   *   graph_cond_end() ends the innermost node's last body: later calls are
   *   recorded after the node again.
   * Errors: HLO_UNAVAILABLE (the backend cannot), HLO_INVALID_ARGUMENT (no
   * recording or no body open, another kind or pred_size), the driver's.
   * After an error the recording is broken: graph_end ends it (and every
   * body still open) and fails. */
  bool (*graph_cond_takes)(const backend_cond *c);
  HLO_MUST_USE hlo_status (*graph_cond_begin)(const backend_cond *c);
  HLO_MUST_USE hlo_status (*graph_cond_set)(const backend_cond *c);
  HLO_MUST_USE hlo_status (*graph_cond_next)(void);
  HLO_MUST_USE hlo_status (*graph_cond_end)(void);
  /* A recording as a DAG rather than a chain (CUDA: the capture stream's
   * dependency set, cuStreamGetCaptureInfo / cuStreamUpdateCaptureDependencies;
   * NULL slots where a backend has none: every recorded call then follows
   * the one before). Between graph_begin and graph_end, outside conditional
   * bodies: graph_deps_get copies the nodes the next recorded call would
   * follow (those the last call left, or the last graph_deps_set's) into
   * nodes[0..cap) and sets *n to their count (which may pass cap: then
   * only cap are copied); graph_deps_set makes nodes[0..n) (handles
   * graph_deps_get gave in this recording; n 0: none, the next call is a
   * root) what the next recorded call follows. graph_end ends the recording
   * with every node recorded, whatever the set is then. Errors:
   * HLO_INVALID_ARGUMENT (no recording), HLO_UNAVAILABLE (a driver
   * without them), the driver's. */
  HLO_MUST_USE hlo_status (*graph_deps_get)(void **nodes, size_t cap, size_t *n);
  HLO_MUST_USE hlo_status (*graph_deps_set)(void *const *nodes, size_t n);
} backend;

/* The CPU backend (backend/cpu): generated C compiled with the system C
 * compiler into a shared object and loaded with dlopen. Static; lent. */
const backend *backend_cpu(void);
/* The CPU backend with device_memory = true (backend/cpu/cpu_devmem.c): its
 * buffers kept apart from the host's, as a GPU's are (poisoned allocations,
 * copy = memcpy; no gemm_epilogue, launch_tiles, conv, window, sort): tests
 * the runtime's device-memory path without a GPU. Static; lent. */
const backend *backend_cpu_devmem(void);

/* The CUDA backend (backend/cuda): kernels printed as CUDA C, compiled by
 * NVRTC for the device's architecture, matmuls through cuBLASLt; libcuda,
 * libnvrtc and libcublasLt are loaded with dlopen on the first call, and
 * device 0's primary context made current. *out is static (lent).
 * Errors: HLO_UNAVAILABLE naming what is missing (no libcuda.so.1: "no
 * NVIDIA driver", no device, no libnvrtc) — never a crash. Thread-safe. */
HLO_MUST_USE hlo_status backend_cuda(const backend **out);

#endif /* HLO_BACKEND_BACKEND_H */
