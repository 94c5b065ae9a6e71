/* testlib.h — corpus plumbing shared by the unit tests (tests/unit/test_*.c):
 * where the shared data lies, reading files, listing the corpus's .mlir
 * files, splitting a file into `// -----` pieces, parsing + running a
 * piece's entry function on the interpreter, and the one helper every test
 * uses to parse (tl_parse_text) or run (tl_run_text) a program given as a
 * string. Linked into every unit test
 * binary (the Makefile builds tests/unit/testlib.c once).
 *
 * Ownership: every tl_* object that holds memory has a matching *_free;
 * free functions accept zeroed objects and leave them zeroed. */
#ifndef HLO_TESTLIB_H
#define HLO_TESTLIB_H
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include "hlo/hlo.h"
#include "interp/interp.h"
#include "parse/parse.h"
#include "runtime/runtime.h"
#include "support/arena.h"

/* The shared data folder: $HLO_SHARED when set and non-empty, else
 * "../shared" (relative to the repo root, where CI places it). */
const char *tl_shared_dir(void);

/* The whole file at `path` as a malloc'd NUL-terminated string (caller
 * frees) and its length in *len; NULL (and *len untouched) when it cannot be
 * opened, sized, allocated or read in full. */
char *tl_read_file(const char *path, size_t *len);

/* Whether any generated C file (a name ending in ".c") in folder `dir` (a
 * --dump-to folder) contains `needle`; false when the folder cannot be
 * read. */
bool tl_dump_has(const char *dir, const char *needle);

/* A growable list of malloc'd paths. */
typedef struct tl_paths {
  char **v;
  size_t n, cap;
} tl_paths;

/* Decides from a file's name (no folder) whether tl_list_mlir keeps it. */
typedef bool (*tl_name_filter)(const char *name, const void *ctx);

/* Appends to `out` the path "dir/NAME" of every file of `dir` whose name
 * ends in ".mlir" and passes `keep` (NULL: every one), in readdir order;
 * names starting with '.' are skipped. With `recurse`, subfolders are
 * walked too (depth first). A folder that cannot be opened adds nothing.
 * Returns false when memory ran out (what was added stays). */
bool tl_list_mlir(const char *dir, bool recurse, tl_name_filter keep, const void *ctx,
                  tl_paths *out);

/* Sorts the paths by strcmp. */
void tl_paths_sort(tl_paths *ps);

/* Frees every path and the list; leaves `ps` empty. */
void tl_paths_free(tl_paths *ps);

/* tl_name_filter keeping names that start with one of the NULL-terminated
 * prefixes `ctx` (a const char *const *). */
bool tl_name_has_prefix(const char *name, const void *ctx);

/* Calls fn(path, ctx) for every .mlir file under `dir` (see tl_list_mlir,
 * `recurse`), in strcmp order of the paths. Returns the number of files. */
size_t tl_for_each_mlir(const char *dir, bool recurse, void (*fn)(const char *path, void *ctx),
                        void *ctx);

/* One source file and its pieces. `src` names the file by its path and
 * holds the whole text (pieces are parsed against it, first_line 1). */
typedef struct tl_file {
  char *text;
  size_t len;
  split_piece *pieces;
  size_t num_pieces;
  hlo_source src;
} tl_file;

/* Reads `path` into `f` as ONE piece covering the whole text. Errors:
 * HLO_NOT_FOUND "cannot read PATH" (f left zeroed), HLO_RESOURCE_EXHAUSTED. */
hlo_status tl_file_read(const char *path, tl_file *f);

/* Replaces f's pieces by the `// -----` split of its text (parse_split's
 * errors; the text stays on error). */
hlo_status tl_file_split(tl_file *f);

/* tl_file_read then tl_file_split. On error `f` still needs tl_file_free. */
hlo_status tl_file_load(const char *path, tl_file *f);

/* Frees the text and the pieces; leaves `f` zeroed. */
void tl_file_free(tl_file *f);

/* An hlo_source named `name` over the NUL-terminated `text` (first line 1). */
hlo_source tl_source(const char *name, const char *text);

/* Parses src->text[begin, end) as one module: the module (caller frees with
 * module_free), or NULL with the parser's status in *err. */
hlo_module_ir *tl_parse_piece(const hlo_source *src, size_t begin, size_t end, hlo_status *err);

/* One program run: the module, its entry function, the interpreter and,
 * after a successful call, the results (n of them). */
typedef struct tl_run {
  hlo_module_ir *m;
  hlo_func *f; /* NULL when the module has no entry function */
  interp *it;
  tensor **res;
  uint32_t n;
} tl_run;

/* Flags of tl_parse_text, tl_prepare and tl_run_text: what is done to a
 * module after parsing, in this order. */
enum {
  TL_VERIFY = 2,       /* module_verify */
  TL_LEGALIZE_CHLO = 1 /* pass_chlo_legalize */
};

/* THE way a unit test turns program text into a module: parses the
 * NUL-terminated `text` as one module whose locations and errors name the
 * file `name` (e.g. "t.mlir"; the module keeps its own copy of the text, so
 * neither needs to outlive it), then applies `flags` (TL_VERIFY,
 * TL_LEGALIZE_CHLO). Returns the module (free it with module_free) or NULL
 * on error, the status (parser's, verifier's or pass's, located) then going
 * to *err; with err NULL an error is printed to stderr and freed instead.
 * On success *err is set to NULL. */
hlo_module_ir *tl_parse_text(const char *name, const char *text, unsigned flags,
                             hlo_status *err);

/* THE way a unit test runs program text: tl_parse_text's steps (`flags`),
 * then the entry function (@main, or the only function: module_entry) is
 * called on args[0..nargs) (borrowed: the caller keeps its references) on a
 * new interpreter with `opts` (NULL: the defaults). On success the results
 * are r->res[0..r->n): release everything with tl_run_free. On error the
 * status is returned (the parser's, verifier's, pass's, HLO_NOT_FOUND "no
 * entry function", the interpreter's) and `r` is already released (zeroed:
 * tl_run_free on it does nothing). */
hlo_status tl_run_text(const char *name, const char *text, unsigned flags,
                       const interp_options *opts, tensor *const *args, uint32_t nargs,
                       tl_run *r);

/* A new tensor of element type `dt` and shape dims[0..rank) holding a copy
 * of `data` (the tensor's nbytes bytes; NULL: zeros). Its type is made in
 * arena `a`, which must outlive the tensor. NULL when out of memory.
 * Release with tensor_release. */
tensor *tl_tensor(arena *a, hlo_dtype dt, uint32_t rank, const int64_t *dims, const void *data);

/* Parses src->text[begin, end) into r->m, applies `flags` (TL_VERIFY,
 * TL_LEGALIZE_CHLO), finds the entry function (module_entry(m, NULL)) and
 * creates an interpreter with `opts` (may be NULL). Errors: the parser's,
 * the verifier's, the pass's, HLO_NOT_FOUND "no entry function" (r->m set,
 * r->f NULL), interp_create's. Whatever was made is in `r` either way:
 * release it with tl_run_free. */
hlo_status tl_prepare(const hlo_source *src, size_t begin, size_t end, unsigned flags,
                      const interp_options *opts, tl_run *r);

/* Calls r's entry function on args[0..nargs) (borrowed); on success the
 * results are r->res[0..r->n). */
hlo_status tl_call(tl_run *r, tensor *const *args, uint32_t nargs);

/* tl_prepare, then tl_call with no arguments. */
hlo_status tl_run_entry(const hlo_source *src, size_t begin, size_t end, unsigned flags,
                        const interp_options *opts, tl_run *r);

/* Releases the results, the interpreter and the module; zeroes `r`. */
void tl_run_free(tl_run *r);

/* True when the piece text[begin, end) contains `word` (e.g. "func"):
 * pieces holding only comments are skipped by the corpus drivers. */
bool tl_piece_has(const char *text, size_t begin, size_t end, const char *word);

/* THE way a unit test compares the CPU backend with the interpreter: parses
 * `text` (errors located in `name`), makes an interpreter executable and a
 * CPU one with options `cpu` (NULL: the defaults; never tiered, so both
 * runs are the native code's), runs both twice (the
 * second run reuses the executables) on the same random inputs from `seed`
 * (floats uniform in [-2, 2), integers 0..8) and compares each result: bit
 * for bit, unless bit k of `ulp_mask` is set, then within `ulps` units in
 * the last place of result k's largest magnitude (a sum in another order
 * may cancel most of an element's digits; NaN equals NaN). Differences,
 * errors and the first differing element are printed to stderr. *stats
 * (may be NULL) gets what the CPU backend made, after the runs (their
 * counters too). When no C compiler starts it prints "NAME: skipped
 * (why)", sets *skipped (may be NULL) and returns true. Returns whether
 * everything ran and agreed. */
bool tl_backends_agree(const char *name, const char *text, const hlo_compile_options *cpu,
                       unsigned ulp_mask, double ulps, uint64_t seed, runtime_cpu_stats *stats,
                       bool *skipped);

/* The element types and elementwise ops the kernels lower (the claim
 * test_kernel_ops checks on the CPU and test_cuda_emit compiles for CUDA):
 * each type's class (TL_C_*), and each op's StableHLO name, arity (3:
 * select and clamp) and the classes of operand types it takes. */
enum { TL_C_F = 1, TL_C_I = 2, TL_C_U = 4, TL_C_B = 8, TL_C_INT = TL_C_I | TL_C_U,
       TL_C_NUM = TL_C_F | TL_C_I | TL_C_U, TL_C_ALL = 15 };
typedef struct tl_kernel_type {
  hlo_dtype dt;
  const char *name;
  int cls;
} tl_kernel_type;
typedef struct tl_kernel_op {
  const char *name;
  int arity;
  int cls;
} tl_kernel_op;
extern const tl_kernel_type tl_kernel_types[];
extern const int tl_num_kernel_types;
extern const tl_kernel_op tl_kernel_ops[];
extern const int tl_num_kernel_ops;

/* The next value of a xorshift64 generator (Marsaglia, "Xorshift RNGs",
 * J. Stat. Softw. 2003: shifts 13, 7, 17) whose state is *s (non-zero): the
 * tests' random cases, reproducible from their seed. */
uint64_t tl_xorshift64(uint64_t *s);
/* A value in [lo, hi] (lo <= hi) from generator *s (tl_xorshift64). */
int64_t tl_rand_in(uint64_t *s, int64_t lo, int64_t hi);

/* A jax.nn.softmax over the last dim of a rows x cols matrix of type ty
 * ("f32", "bf16"): max-reduce, exp of the difference, sum-reduce, divide;
 * the program text into out[0..cap). */
void tl_softmax_program(const char *ty, int rows, int cols, char *out, size_t cap);

struct kernel;
/* Kernel k scheduled for CUDA (cuda_schedule: k is changed), printed by
 * the CUDA emitter as kernel `kname`, and compiled by NVRTC for sm_90
 * where NVRTC loads (else "TEST: NVRTC skipped: why" is printed). True
 * when the source holds each of want[0..n) and compiled (or NVRTC is
 * absent); what failed (a missing string, NVRTC's log with the source) is
 * printed to stderr. */
bool tl_cuda_prints_and_compiles(const char *test, struct kernel *k, const char *kname,
                                 const char *const *want, int n);

#endif
