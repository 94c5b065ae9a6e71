/* hlo — a compiler and runtime for StableHLO. The public C API.
 *
 * Ownership, once for the whole header:
 *   - What a `_create`, `_load` or `_parse` function hands back through an
 *     `out_*` pointer is yours; release it with the matching `_destroy` /
 *     `_free`.
 *   - Accessors (`_get`, `_name`, `_message`, ...) lend: the pointer stays
 *     valid while the object it came from lives and is not modified.
 *   - Buffers you pass in are read during the call only, never kept.
 *
 * Errors: every function that can fail returns an `hlo_status`. NULL means
 * success; anything else is an error you own and must free with
 * hlo_status_free(). A status carries a code, a message and, where the error
 * is in the user's program, its location (file, line, column) and the text of
 * that source line.
 */
#ifndef HLO_HLO_H
#define HLO_HLO_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#ifdef __cplusplus
extern "C" {
#endif

#if defined(__GNUC__) || defined(__clang__)
#define HLO_MUST_USE __attribute__((warn_unused_result))
#define HLO_PRINTF(f, a) __attribute__((format(printf, f, a)))
#else
#define HLO_MUST_USE
#define HLO_PRINTF(f, a)
#endif

/* ---------------------------------------------------------------- status */

typedef enum hlo_status_code {
  HLO_OK = 0,
  HLO_INVALID_ARGUMENT,   /* a caller-supplied value is wrong (shape, type) */
  HLO_PARSE_ERROR,        /* the program text is malformed */
  HLO_VERIFY_ERROR,       /* the program breaks a constraint of the spec */
  HLO_UNIMPLEMENTED,      /* valid, but hlo cannot do it (yet) */
  HLO_OUT_OF_RANGE,       /* an index or size beyond what is allowed */
  HLO_RESOURCE_EXHAUSTED, /* out of memory, or a size too large to hold */
  HLO_NOT_FOUND,          /* a file, function or custom-call target */
  HLO_UNAVAILABLE,        /* a device or library is not present */
  HLO_FAILED_CHECK,       /* a check.* op of the program failed */
  HLO_INTERNAL,           /* a bug in hlo */
} hlo_status_code;

typedef struct hlo_status_s *hlo_status;

/* The code of `s`; HLO_OK for NULL. */
hlo_status_code hlo_status_code_of(hlo_status s);
/* The bare message, without location ("dot_general (C12): ..."). Lent. */
const char *hlo_status_message(hlo_status s);
/* "ok", "parse error", ... for a code. Static storage. */
const char *hlo_status_code_name(hlo_status_code c);
/* Writes the full diagnostic to `f`: `FILE:LINE:COL: error: MESSAGE`, then,
 * where the location is known, the source line and a caret under the column,
 * then any notes added on the way up. Does nothing for NULL. */
void hlo_status_print(hlo_status s, FILE *f);
/* Frees `s` (NULL is fine). */
void hlo_status_free(hlo_status s);

/* ---------------------------------------------------------------- version */

/* hlo's version, "MAJOR.MINOR.PATCH" (the Makefile's HLO_VERSION; the same
 * figure `hlo --version` prints and pkg-config's hlo.pc carries). Static
 * storage; never NULL. */
const char *hlo_version(void);

/* hlo's build id: the version, "+", and a checksum of the library's sources
 * (what the compilation cache keys on: two builds of different sources never
 * share an entry). Static storage; never NULL. */
const char *hlo_build_id(void);

/* --------------------------------------------------------- element types */

typedef enum hlo_dtype_class {
  HLO_CLASS_BOOL,
  HLO_CLASS_SINT,
  HLO_CLASS_UINT,
  HLO_CLASS_FLOAT,
  HLO_CLASS_COMPLEX,
} hlo_dtype_class;

/* The element types of the spec; see dtypes.def for spelling and storage. */
typedef enum hlo_dtype {
#define HLO_DTYPE(e, s, bits, bytes, cls) HLO_##e,
#include "hlo/dtypes.def"
#undef HLO_DTYPE
  HLO_DTYPE_COUNT
} hlo_dtype;

/* MLIR spelling of `t` ("bf16"); "?" when out of range. Static storage. */
const char *hlo_dtype_name(hlo_dtype t);
/* Bytes one element of `t` takes in a host buffer (sub-byte types: 1). */
size_t hlo_dtype_size(hlo_dtype t);

/* --------------------------------------------------------------- modules */

typedef struct hlo_module hlo_module;

/* Parses and verifies MLIR text holding one StableHLO module. `name` is the
 * file name errors are reported against (e.g. "model.mlir"); `text` need not
 * be NUL-terminated and is copied. On success *out_module is yours.
 * Errors: HLO_PARSE_ERROR, HLO_VERIFY_ERROR (located), HLO_RESOURCE_EXHAUSTED. */
HLO_MUST_USE hlo_status hlo_module_parse(const char *name, const char *text,
                                         size_t len, hlo_module **out_module);
/* hlo_module_parse for one piece of a larger file: `text` is the piece and
 * its first line is line `first_line` of file `name`, so errors point into
 * the file (used for --split-input-file). */
HLO_MUST_USE hlo_status hlo_module_parse_at(const char *name, const char *text, size_t len,
                                            unsigned first_line, hlo_module **out_module);
/* Reads `path` ("-" for standard input) and parses it as hlo_module_parse.
 * Errors: HLO_NOT_FOUND when the file cannot be read, else as above. */
HLO_MUST_USE hlo_status hlo_module_load(const char *path,
                                        hlo_module **out_module);
/* Frees the module and everything it owns. NULL is fine. */
void hlo_module_destroy(hlo_module *m);

/* ---------------------------------------------------------- host buffers */

/* The rank of a view or buffer that stands for a `!stablehlo.token`: pass a
 * view of this rank (dtype, dims and data ignored) for each token parameter
 * of the entry function (e.g. JAX's ordered effects); token results come back
 * as buffers of this rank with no data (NULL, 0 bytes). */
#define HLO_RANK_TOKEN (-1)
/* The rank of a result buffer that holds a tuple (a `tuple<...>` result of
 * the entry function): no dtype, dims or data of its own; its elements are
 * buffers (hlo_buffer_tuple_size / hlo_buffer_tuple_element), nested tuples
 * included. */
#define HLO_RANK_TUPLE (-2)

/* A dense row-major array in host memory. */
typedef struct hlo_buffer_view {
  hlo_dtype dtype;
  int rank;
  const int64_t *dims;   /* rank entries */
  void *data;            /* product(dims) * hlo_dtype_size(dtype) bytes */
} hlo_buffer_view;

/* An owned array: a run's result, or an argument placed on an
 * executable's device ahead of its runs (hlo_executable_device_put). On a
 * device backend (HLO_BACKEND_CUDA) a result stays in device memory, where
 * the next run can take it as an argument with no copy
 * (hlo_executable_run_buffers); its host bytes are downloaded the first
 * time they are asked for (hlo_buffer_data / hlo_buffer_fetch). */
typedef struct hlo_buffer hlo_buffer;

/* Element type, rank, dims (rank entries) and data (row-major, storage
 * layout of dtypes.def, nbytes = product(dims) * hlo_dtype_size bytes) of a
 * result. Pointers are lent, valid until hlo_buffer_destroy.
 * hlo_buffer_data of a buffer on a device downloads its bytes first (once:
 * hlo_buffer_fetch) and returns NULL when that download fails (call
 * hlo_buffer_fetch to get the error). For NULL: HLO_DTYPE_COUNT, rank
 * HLO_RANK_TOKEN, NULL dims and data, 0 bytes. */
hlo_dtype hlo_buffer_dtype(const hlo_buffer *b);
int hlo_buffer_rank(const hlo_buffer *b);
const int64_t *hlo_buffer_dims(const hlo_buffer *b);
const void *hlo_buffer_data(const hlo_buffer *b);
size_t hlo_buffer_nbytes(const hlo_buffer *b);
/* A tuple buffer's (rank HLO_RANK_TUPLE) element count; -1 for any other
 * buffer. */
int hlo_buffer_tuple_size(const hlo_buffer *b);
/* Element `i` of a tuple buffer, lent (owned by `b`, valid until `b` is
 * destroyed); NULL when `b` is no tuple or `i` is out of range. */
const hlo_buffer *hlo_buffer_tuple_element(const hlo_buffer *b, int i);
/* Frees a result buffer (NULL is fine), a tuple's elements included, and
 * its device memory. */
void hlo_buffer_destroy(hlo_buffer *b);
/* Whether `b` (not a tuple) holds a copy of its bytes in a device's memory
 * (false for NULL, tuples, tokens and every buffer of a host backend). A
 * device run leaves on the device each result it computed there; a result
 * that is an argument returned unchanged, a constant, a tuple's element or
 * a value made on the host (an interpreter step) comes back in host memory
 * (and is uploaded again when passed to another run). */
bool hlo_buffer_on_device(const hlo_buffer *b);
/* Makes the host bytes of `b` valid: for a buffer on a device, downloads
 * them once (later calls return at once); for a tuple, each element's; a
 * host buffer needs nothing. Thread-safe. Errors: HLO_RESOURCE_EXHAUSTED
 * (host memory), HLO_INTERNAL (the device's copy failed, with the
 * driver's message). */
HLO_MUST_USE hlo_status hlo_buffer_fetch(const hlo_buffer *b);

/* ------------------------------------------------------------ executing */

typedef enum hlo_backend_kind {
  HLO_BACKEND_INTERP, /* the reference interpreter */
  HLO_BACKEND_CPU,    /* compiled for the host CPU (v0): fusible ops become C
                         kernels compiled by the system C compiler ($HLO_CC,
                         else cc) in one run and loaded; f32/f64 matmuls call
                         BLAS; every other op runs on the interpreter's
                         kernel. Results match the interpreter bit for bit
                         except reductions and matmuls (summation order: a
                         few ULP). No C compiler: HLO_UNAVAILABLE at create.
                         Dynamic-shaped entry functions run on the
                         interpreter. Compiles are tiered by default
                         (hlo_compile_options.no_tiering): the C compiler
                         runs in the background, and its errors come
                         from hlo_executable_wait and the runs. */
  HLO_BACKEND_CUDA,   /* NVIDIA GPUs (device 0): the same fused module, its
                         kernels printed as CUDA C and compiled by NVRTC,
                         matmuls through cuBLASLt; libcuda, libnvrtc and
                         libcublasLt are loaded at run time, so without a
                         driver or a GPU, create fails with HLO_UNAVAILABLE
                         saying what is missing. */
} hlo_backend_kind;

typedef struct hlo_executable hlo_executable;

/* How to compile an executable (zero-initialise, then set what you need). */
typedef struct hlo_compile_options {
  hlo_backend_kind backend; /* HLO_BACKEND_INTERP (0), HLO_BACKEND_CPU or HLO_BACKEND_CUDA */
  /* The pass pipeline run before the backend: NULL for the backend's own
   * (HLO_BACKEND_CPU: "cpu"; HLO_BACKEND_CUDA: "cuda"; the interpreter:
   * none), "none" (or ""), "default" (inline, chlo-legalize, simplify,
   * constant-fold, simplify, cse, dce), "cpu" (default, then fusion),
   * "cuda" (cpu with dot-strength-reduction: dots of at most 2^18
   * multiply-adds become multiply + reduce, fused with their neighbours
   * instead of a library call), or a comma-separated list of
   * pass names (`hlo run --help` lists them). A pipeline runs on a private
   * copy of the module, re-parsed from its text: the module you pass is
   * not changed, and its locations stay those of your file. */
  const char *passes;
  /* When set, a folder (made if missing) that receives the module before
   * and after each pass (NNNN.PASS.{before,after}.mlir, text `hlo print`
   * reads back), the generated C of the kernels and the buffer assignment. */
  const char *dump_dir;
  /* HLO_BACKEND_CPU: run every compiled step (kernel, library call) also on
   * the reference interpreter, on the same inputs, and fail the run at the
   * first whose results differ beyond the element type's tolerance
   * (HLO_FAILED_CHECK, located at the fusion, naming its kernel and the ops
   * inside it). Slow: for finding a miscompiled fusion. */
  bool check;
  /* The persistent compilation cache (HLO_BACKEND_CPU; docs/cache.md): a
   * compiled executable is stored as one self-contained entry (the
   * optimised module and every kernel's machine code), keyed by the
   * program with its locations and value names stripped, the entry
   * function's signature, these options, the compiler and CPU, and hlo's
   * build; the next compile of the same program, in any process, loads it
   * instead of compiling. A corrupt, truncated or foreign-version entry is
   * reported as a warning on stderr, removed and rebuilt.
   * cache_dir: the cache root; NULL: $HLO_CACHE_DIR, else
   * $XDG_CACHE_HOME/hlo, else $HOME/.cache/hlo; "off" (or HLO_CACHE_DIR=off):
   * no cache at all. Not used with `check` or `dump_dir` set (those
   * compile). */
  const char *cache_dir;
  bool no_cache;              /* neither read nor write the cache (entries and kernels) */
  uint64_t cache_max_bytes;   /* the bound, LRU-evicted; 0: $HLO_CACHE_MAX_BYTES, else 4 GiB */
  /* Print one line per compile to stderr: the entry function, hit or miss,
   * the time of each stage (also HLO_LOG_COMPILES=1). */
  bool log_compiles;
  /* On a miss, say which cached entry for the same function is closest and
   * what differs (an argument's shape or type, an option, hlo's build) on
   * stderr (also HLO_EXPLAIN_CACHE_MISSES=1). */
  bool explain_cache_misses;
  /* Tiered execution (docs/tiered.md) off: compile the native code before
   * returning, as without tiering (also HLO_TIERING=0). With it on (the
   * default), an HLO_BACKEND_CPU compile of a static-shaped entry function
   * that misses the compilation cache returns once hlo's own stages are
   * done (parse, passes, the interpreter over the optimised module); the
   * native code (lowering, the C compiler, loading, the cache entry) is
   * made by a background thread. A run that starts before it is ready is
   * run by the reference interpreter on the optimised module when that is
   * estimated to finish before the native code (else the run waits for
   * it), and is stopped and re-run natively once the native code is
   * loaded; every run after that is native. Results are those of the
   * interpreter (bit-exact, the oracle) or of the native code (within
   * HLO_BACKEND_CPU's tolerances); which one a run used depends on timing.
   * Never tiered: cache hits, dynamic shapes, `check`, `dump_dir`, other
   * backends, and programs with custom calls or other side effects
   * (infeed, outfeed, send, recv, trace, interpreter.print / probe). */
  bool no_tiering;
} hlo_compile_options;

/* Prepares function `entry` of `m` (NULL: "main", or the only function) to
 * run on `backend` with its default options (hlo_executable_compile): checks
 * the function exists and legalizes chlo ops (this
 * rewrites `m` in place, once; executables may be created from several
 * threads over one module: they take turns here).
 * The module must outlive the executable. *out_exe is yours.
 * Errors: HLO_NOT_FOUND (no such function, no functions, or no @main among
 * several), HLO_UNIMPLEMENTED (backend not available, a chlo op that cannot
 * be legalized), HLO_UNAVAILABLE (HLO_BACKEND_CPU: no C compiler could be
 * started), HLO_INTERNAL (HLO_BACKEND_CPU: the compiler rejected the
 * generated code — for a tiered compile, see hlo_compile_options.no_tiering,
 * that error comes from hlo_executable_wait and the runs instead),
 * HLO_RESOURCE_EXHAUSTED. */
HLO_MUST_USE hlo_status hlo_executable_create(hlo_module *m, const char *entry,
                                              hlo_backend_kind backend,
                                              hlo_executable **out_exe);
/* hlo_executable_create with options (`opts` NULL: all defaults, the
 * interpreter): the pass pipeline, the backend and the dump folder. A
 * dynamic-shaped entry function is optimised and compiled per input shapes
 * at its first run with them. Errors: those of hlo_executable_create;
 * HLO_INVALID_ARGUMENT for an unknown pass name (listing the known ones);
 * a pass's error or a verifier error after a pass, naming the pass;
 * HLO_UNAVAILABLE when a dump file cannot be written. */
HLO_MUST_USE hlo_status hlo_executable_compile(hlo_module *m, const char *entry,
                                               const hlo_compile_options *opts,
                                               hlo_executable **out_exe);
/* Number of arguments / results of the entry function (0 for a NULL e). */
int hlo_executable_num_args(const hlo_executable *e);
int hlo_executable_num_results(const hlo_executable *e);
/* Element type and shape of argument `i` of the entry function (dims lent,
 * valid while the executable lives); each out-pointer may be NULL (not
 * wanted). Errors: HLO_INVALID_ARGUMENT for a NULL e; HLO_OUT_OF_RANGE for a bad
 * index, HLO_UNIMPLEMENTED for tuple/token or dynamic-shaped arguments (the
 * latter take their shape from each run's inputs). */
HLO_MUST_USE hlo_status hlo_executable_arg_type(const hlo_executable *e, int i,
                                                hlo_dtype *out_dtype, int *out_rank,
                                                const int64_t **out_dims);
/* Runs the entry function on `args` (num_args views, each matching the
 * parameter's element type and shape; a token parameter takes a view of rank
 * HLO_RANK_TOKEN). On success *out_results is a malloc'd array of
 * num_results buffers, all yours (free each with hlo_buffer_destroy, then
 * the array with free()); a token result is a buffer of rank HLO_RANK_TOKEN,
 * a tuple result one of rank HLO_RANK_TUPLE holding its elements.
 * Dynamic shapes (`tensor<?x3xf32>` parameters, as jax.export prints with
 * symbolic dimensions): each `?` takes the size of the input; the program is
 * specialized to the inputs' shapes (StableHLO's refine-shapes: shape
 * computations folded, dynamic_* ops made static, JAX's shape assertions
 * evaluated) on the first run with those shapes, and the specialization is
 * cached (the last 8 shape signatures).
 * Threads: runs of one executable may be started from several threads;
 * they take turns (the interpreter keeps per-run state). For runs in
 * parallel, create one executable per thread over the same module.
 * Warnings: a host callback into Python that returns no data (a
 * jax.debug.print) is skipped, with one warning per target and executable
 * written to stderr (FILE:LINE:COL: warning: ...).
 * Errors: HLO_INVALID_ARGUMENT (count, type or shape of an argument, naming
 * the argument and dimension; NULL `e` or `out_results`; NULL `args` with
 * arguments expected; NULL data; a failed JAX shape assertion, with JAX's message); HLO_UNIMPLEMENTED
 * (tuple arguments, results of rank over 32, a dynamic shape that
 * cannot be made static, an op the interpreter lacks);
 * HLO_RESOURCE_EXHAUSTED; and the interpreter's errors, located at the op
 * that failed (HLO_FAILED_CHECK, HLO_NOT_FOUND for a custom-call target,
 * HLO_INVALID_ARGUMENT, ...); HLO_INVALID_ARGUMENT when called from a
 * custom-call handler that `e` itself is running (it would wait for
 * itself); the error of a tiered compile's background compile, once it is
 * over (hlo_executable_wait).
 * Tiered compiles (hlo_compile_options.no_tiering): a run that starts
 * while the native code is being made runs on the interpreter or waits for
 * the native code (docs/tiered.md); either way its results are correct. */
HLO_MUST_USE hlo_status hlo_executable_run(hlo_executable *e,
                                           const hlo_buffer_view *args,
                                           int num_args,
                                           hlo_buffer ***out_results);
/* A buffer holding a copy of `v` (a dense array, as an argument view) in
 * the memory of the device `e` runs on, so that runs of `e` through
 * hlo_executable_run_buffers read it with no upload (as jax.device_put
 * does); on a host backend (interp, cpu) the copy is in host memory. The
 * buffer is yours (hlo_buffer_destroy); it may outlive `e` and be passed to
 * any executable (one on another device downloads it first). A view of
 * rank HLO_RANK_TOKEN gives a token buffer. Errors: HLO_INVALID_ARGUMENT
 * (NULL `e`, `v` or `out`; a view with a negative rank or dim, an unknown
 * dtype, NULL data with bytes to copy), HLO_RESOURCE_EXHAUSTED (host or
 * device memory), HLO_INTERNAL (the device's copy failed). */
HLO_MUST_USE hlo_status hlo_executable_device_put(hlo_executable *e, const hlo_buffer_view *v,
                                                  hlo_buffer **out);
/* hlo_executable_run on buffers: args[i] is the result of an earlier run
 * or of hlo_executable_device_put (borrowed: still yours after the call,
 * not changed), matching the parameter as a view would (a token parameter
 * takes a token buffer). A buffer in the memory of the device `e` runs on
 * is read there, with no copy; any other is read from its host bytes
 * (fetched first when needed). Results as hlo_executable_run's (on the
 * device for a device backend). Errors: hlo_executable_run's, and
 * hlo_buffer_fetch's for an argument that must be downloaded; a NULL
 * buffer in `args` is HLO_INVALID_ARGUMENT naming it; a tuple buffer as an
 * argument is HLO_UNIMPLEMENTED. */
HLO_MUST_USE hlo_status hlo_executable_run_buffers(hlo_executable *e,
                                                   const hlo_buffer *const *args, int num_args,
                                                   hlo_buffer ***out_results);
/* What a run of an executable costs, counted as XLA's cost_analysis()
 * counts it (src/passes/cost_analysis.c): over the program the executable
 * runs (after its pass pipeline, so fused ops count their operands and
 * results as bytes, as XLA counts its fused program). flops and
 * transcendentals are operation counts; bytes_accessed is in bytes. */
typedef struct hlo_cost_analysis {
  double flops;
  double transcendentals;
  double bytes_accessed;
} hlo_cost_analysis;

/* Fills *out for `e`'s entry function. A dynamic-shaped entry is counted
 * for its most recent run's shapes (HLO_INVALID_ARGUMENT before the
 * first run). Errors: HLO_UNIMPLEMENTED for an op the analysis does not
 * know (named, located), HLO_RESOURCE_EXHAUSTED. */
HLO_MUST_USE hlo_status hlo_executable_cost_analysis(const hlo_executable *e,
                                                     hlo_cost_analysis *out);

/* The memory an executable needs, in bytes, in the terms of XLA's
 * memory_analysis(): arguments, results, results that reuse a donated
 * argument (alias: none yet), temporaries (the CPU backend's arenas, where
 * buffer assignment placed the kernel and library-call results by
 * liveness), constants made at compile time, and the peak: arguments +
 * results + temporaries + the interpreter thunks' temporaries live at
 * once, at most. */
typedef struct hlo_memory_analysis {
  int64_t argument_bytes;
  int64_t output_bytes;
  int64_t alias_bytes;
  int64_t temp_bytes;
  int64_t constant_bytes;
  int64_t peak_bytes;
} hlo_memory_analysis;

/* Fills *out for `e` (a tiered compile's native code is waited for
 * first). Errors: HLO_INVALID_ARGUMENT when `e` does not
 * run on the CPU backend (the interpreter allocates per op: no assignment
 * to report) or is dynamic-shaped and has not run yet; the background
 * compile's error (hlo_executable_wait). */
HLO_MUST_USE hlo_status hlo_executable_memory_analysis(const hlo_executable *e,
                                                       hlo_memory_analysis *out);

/* Waits until `e`'s native code is ready: for a tiered compile
 * (hlo_compile_options.no_tiering) whose background compile is still
 * running, blocks until it is done (and until a run of another thread in
 * progress has finished: runs take turns); later runs are native. Returns
 * at once for an executable that did not tier (any other backend, a cache
 * hit, no_tiering, ...), or whose native code is loaded.
 * Errors: those of the background compile, every time it is asked (a copy
 * each time): HLO_UNAVAILABLE (no C compiler could be started),
 * HLO_INTERNAL (the C compiler failed on the generated code, with its
 * message, located at the fusion; a kernel that does not load),
 * HLO_RESOURCE_EXHAUSTED, an interpreter error of a constant made at
 * compile time; HLO_INVALID_ARGUMENT for a NULL `e`. After such an error
 * every run of `e` fails with the same error. */
HLO_MUST_USE hlo_status hlo_executable_wait(hlo_executable *e);

/* Frees the executable (NULL is fine); the module is not touched. A
 * tiered executable's background compile is waited for first (so that
 * the compilation cache gets its entry); its error, if any, is dropped:
 * call hlo_executable_wait before to see it. */
void hlo_executable_destroy(hlo_executable *e);

/* ------------------------------------------------------ custom calls (FFI)
 *
 * A program's `stablehlo.custom_call @TARGET(...)` runs a handler you
 * register for TARGET: hlo calls it with the call's operands and result
 * buffers, typed, and the decoded configuration. Registered handlers are
 * looked up when the call runs (never at compile time), so an executable
 * compiled — or loaded from the compilation cache — before its handler was
 * registered calls it once it is; the cache keeps nothing per target.
 *
 * Dispatch, per call: a registered handler for the platform the call runs
 * on, else one registered for "*"; else hlo's built-in targets (jaxlib's
 * linear algebra, sharding annotations, ...; a registered handler takes
 * precedence over a built-in one of the same name); else the run fails
 * with HLO_NOT_FOUND naming the target (and the platforms that do have a
 * handler for it). Every backend runs custom calls on the host today — the
 * CPU backend and the interpreter on their own buffers, the CUDA backend on
 * host copies of device data — so the platform a call runs on is "cpu";
 * a "cuda" registration is kept (and named in the not-found error) but not
 * called yet.
 *
 * Threads: registration, removal and calls may happen on any thread at
 * once (one lock guards the registry; handlers are called outside it). A
 * handler is called on the thread that runs the executable and may be
 * called from several threads at once (several executables running). */

/* What a handler is told about the call it runs. All pointers are lent for
 * the duration of the call. */
typedef struct hlo_custom_call_info {
  const char *target;          /* call_target_name, NUL-terminated */
  const char *platform;        /* the platform the call runs on: "cpu" */
  /* The configuration, NUL-terminated, backend_config_len bytes (it may
   * hold NULs of its own): the `backend_config` string when it is a
   * non-empty string; else a dictionary (`backend_config`, or
   * `mhlo.backend_config` as JAX's FFI calls carry it) printed as MLIR
   * text, e.g. "{index = 0 : ui64}"; else "". */
  const char *backend_config;
  size_t backend_config_len;
  int api_version;             /* the op's api_version (1 when absent) */
  bool has_side_effect;        /* the op's has_side_effect */
  /* Where the call is in the program: file name (NULL when unknown),
   * line and column (0 when unknown). */
  const char *file;
  unsigned line, column;
} hlo_custom_call_info;

/* A custom-call handler. operands[0..num_operands) are the call's operands
 * in order, read-only (their data must not be written); results[0..
 * num_results) are its results, each a zero-filled buffer of the result's
 * type that the handler fills in place (`data` points to product(dims) *
 * hlo_dtype_size(dtype) bytes, row-major, dtypes.def's storage layout). A
 * token operand or result is a view of rank HLO_RANK_TOKEN (dtype
 * HLO_DTYPE_COUNT, dims and data NULL). Buffers live for the call only: copy
 * what must outlive it. Return NULL on success, or an error (made with
 * hlo_status_create, or any status hlo gave you), which hlo takes over: the
 * run fails with its code and message, located at the custom_call op and
 * naming the target. */
typedef hlo_status (*hlo_custom_call_fn)(void *user_data, const hlo_custom_call_info *info,
                                         const hlo_buffer_view *operands, int num_operands,
                                         const hlo_buffer_view *results, int num_results);

/* A new error status with `code` and a copy of `message` (NULL: ""), for a
 * handler to return. HLO_OK gives NULL (success); a code outside
 * hlo_status_code is taken as HLO_INTERNAL. Yours (hlo_status_free), unless
 * returned to hlo. Never NULL for an error code: out of memory gives a
 * static "out of memory" status. */
hlo_status hlo_status_create(hlo_status_code code, const char *message);

/* Registers `fn` (called with `user_data`) as the handler of custom_call
 * target `target` on `platform`: "cpu", "cuda" or "*" (any platform; a
 * platform's own registration wins over "*"). Both strings are copied;
 * `user_data` is yours and must stay valid until the handler is
 * unregistered. Registrations are process-wide and last until
 * hlo_custom_call_unregister. Thread-safe.
 * Errors: HLO_INVALID_ARGUMENT for a NULL `fn`, a NULL or empty target, a
 * target over 1024 bytes or starting with "check." (hlo's own check
 * dialect, which cannot be overridden), another platform name, or a target
 * that already has a handler on that platform (unregister it first);
 * HLO_RESOURCE_EXHAUSTED. */
HLO_MUST_USE hlo_status hlo_custom_call_register(const char *target, const char *platform,
                                                 hlo_custom_call_fn fn, void *user_data);

/* Removes the handler of `target` registered for `platform` ("cpu", "cuda"
 * or "*": exactly the registration made with that platform). Waits until
 * no call of the handler is running on another thread, so its user data
 * may be freed once this returns; calls that start afterwards no longer
 * see it. Thread-safe.
 * Errors: HLO_INVALID_ARGUMENT (NULL target, another platform name, or a
 * call from inside a call of that same handler, which would wait for
 * itself), HLO_NOT_FOUND (no such registration). */
HLO_MUST_USE hlo_status hlo_custom_call_unregister(const char *target, const char *platform);

#ifdef __cplusplus
}
#endif
#endif /* HLO_HLO_H */
