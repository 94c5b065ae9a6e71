/* builtin.h — the verbs of the `hlo` program (one file each under
 * tools/builtin/, registered in the table of tools/hlo.c, as git's builtin/)
 * and the command-line helpers they share (tools/cli_input.c: flags,
 * program and input loading; tools/cli_output.c: writing and printing
 * results). */
#ifndef HLO_TOOLS_BUILTIN_H
#define HLO_TOOLS_BUILTIN_H
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

#include "hlo/hlo.h"
#include "ir/ir.h"
#include "support/npy.h"

/* ---------------------------------------------------------------- verbs */

/* Every verb takes the arguments after its name (argv[0] is the first flag
 * or FILE; `--flag=value` already split in two) and returns the exit status:
 * 0 ok, 1 an error in the program or its inputs, 2 a usage error. */
int cmd_print(int argc, char **argv);
int cmd_check(int argc, char **argv);
int cmd_run(int argc, char **argv);
int cmd_bench(int argc, char **argv);
int cmd_cost(int argc, char **argv);
int cmd_memory(int argc, char **argv);
int cmd_compile(int argc, char **argv);
int cmd_dot(int argc, char **argv);
int cmd_cache(int argc, char **argv);

/* ------------------------------------------------------- flags, reporting */

/* Writes `s` to `o` as a JSON string literal (quotes, backslashes and
 * control characters escaped), or `null` when `s` is NULL. */
void cli_json_string(FILE *o, const char *s);
/* Whether argument `a` is flag `f` (exact match). */
bool cli_is_flag(const char *a, const char *f);
/* Prints `st` (FILE:LINE:COL: error: ...) to stderr, frees it, returns 1. */
int cli_report(hlo_status st);
/* The backend `--backend NAME` names (cpu, interp, cuda, cpu-devmem) into
 * *out; false after printing "hlo VERB: unknown backend ..." to stderr. */
bool cli_parse_backend(const char *verb, const char *name, hlo_backend_kind *out);
/* The --backend name of k ("cpu", "interp", "cuda", "cpu-devmem"). */
const char *cli_backend_name(hlo_backend_kind k);

/* ------------------------------------------- compilation cache flags */

/* The cache flags of run, bench and compile (tools/cli_cache_options.c). */
typedef struct cli_cache_opts {
  const char *dir;           /* --cache-dir DIR (NULL: the runtime's default) */
  bool no_cache;             /* --no-cache */
  uint64_t max_bytes;        /* --cache-max-bytes N (0: not given) */
  bool log_compiles;         /* --log-compiles */
  bool explain_cache_misses; /* --explain-cache-misses */
} cli_cache_opts;

/* The --help lines of those flags, for every verb that takes them. */
#define CLI_CACHE_USAGE                                                                  \
  "  --cache-dir DIR     the compilation cache's folder (default $HLO_CACHE_DIR, else\n"  \
  "                      $XDG_CACHE_HOME/hlo, else ~/.cache/hlo; `off`: no cache)\n"     \
  "  --no-cache          neither read nor write the cache: compile everything\n"         \
  "  --cache-max-bytes N bound the cache to N bytes (K, M, G suffixes: powers of\n"      \
  "                      1024), least recently used entries evicted (default\n"          \
  "                      $HLO_CACHE_MAX_BYTES, else 4G)\n"                               \
  "  --log-compiles      print one line per compile to stderr: hit or miss, time per\n"  \
  "                      stage (also HLO_LOG_COMPILES=1)\n"                              \
  "  --explain-cache-misses  on a miss, print the closest cached entry for the same\n"   \
  "                      function and what differs (also HLO_EXPLAIN_CACHE_MISSES=1)\n"

/* Parses a byte count: a whole decimal number, optionally followed by K, M
 * or G (either case; powers of 1024), into *out. False when malformed or
 * past 2^64 - 1 (*out untouched). */
bool cli_parse_bytes(const char *s, uint64_t *out);
/* If argv[*i] is a cache flag, consumes it (and its value: *i advances) into
 * `o` and returns 1; returns 0 when it is none; -1 on a malformed value,
 * after printing "hlo VERB: ..." to stderr (a usage error: exit 2). */
int cli_cache_flag(const char *verb, int argc, char **argv, int *i, cli_cache_opts *o);
/* Copies the flags of `o` into the cache fields of `co`. */
void cli_cache_apply(const cli_cache_opts *o, hlo_compile_options *co);

/* ----------------------------------------------------------- the program */

/* One module of a program file: the whole file, or one `// -----` piece. */
typedef struct module_piece {
  hlo_module *m;         /* the module, or NULL when `st` is set */
  hlo_status st;         /* its parse or verify error, or NULL */
  unsigned first_line;   /* line of the file the piece starts on */
  char *expect;          /* text of the piece's first `expected-error {{...}}`, or NULL */
} module_piece;

/* Reads FILE ("-": stdin) and parses it whole or, with `split`, in
 * `// -----` pieces, verifying each unless !verify; each piece gets its
 * module or its error. *out (n entries) is yours: cli_free_pieces. Returns a
 * status only for errors reading the file. */
HLO_MUST_USE hlo_status cli_load_pieces(const char *path, bool split, bool verify,
                                        module_piece **out, size_t *out_n);
/* Frees what cli_load_pieces made. */
void cli_free_pieces(module_piece *mp, size_t n);

/* ---------------------------------------------------------------- inputs */

/* Most --input/--arg flags one command takes. */
#define CLI_MAX_INPUTS 4096

/* The --input files and --arg literals of a command, in argument order. */
typedef struct cli_input_list {
  const char *inputs[CLI_MAX_INPUTS];
  bool is_literal[CLI_MAX_INPUTS]; /* --arg: an MLIR dense literal, not a file */
  int n;
} cli_input_list;

/* The inputs of one run, as buffer views of the entry's parameters. */
typedef struct run_inputs {
  int n;
  npy_array *arrs;        /* n entries; zeroed where the input is a literal */
  hlo_buffer **lits;      /* n entries; NULL where the input is a file */
  void **owned;           /* n entries; converted data (f32 -> bf16...) or NULL */
  hlo_buffer_view *views; /* n entries: what the executable runs on */
} run_inputs;

/* Number of parameters of `f` that take an input (all but tokens). */
uint32_t cli_num_value_args(const hlo_func *f);
/* Checks that `list` gives one input per value parameter of `f`: the error,
 * located at `f`, counts both. */
HLO_MUST_USE hlo_status cli_check_input_count(const hlo_func *f, const cli_input_list *list);
/* Reads every --input file and evaluates every --arg literal of `list` into
 * views of the parameters of `f` (float32 files converted for narrower float
 * parameters when exact), checking element types and shapes; token
 * parameters get a token view. `in` is yours: cli_free_inputs, also after an
 * error. */
HLO_MUST_USE hlo_status cli_load_inputs(const hlo_func *f, const cli_input_list *list,
                                        run_inputs *in);
/* Frees what cli_load_inputs made and zeroes `in`. */
void cli_free_inputs(run_inputs *in);

/* --------------------------------------------------------------- results */

/* mkdir -p: creates `dir` and any missing parents. */
HLO_MUST_USE hlo_status cli_make_dirs(const char *dir);
/* Writes result `name` ("0"; a tuple's elements "0_1", ...) to
 * DIR/out<name>.npy; types numpy lacks become float32 (floats) or int8/uint8
 * (i2/i4/ui2/ui4), with one note on stderr (*noted). Tokens are not written. */
HLO_MUST_USE hlo_status cli_write_result(const char *dir, const char *name, const hlo_buffer *b,
                                         bool *noted);
/* One line per result ("result 0", a tuple's elements "result 0_1"): shape
 * and type, the first values, min/max and NaNs. */
void cli_summarize(FILE *o, const char *k, const hlo_buffer *b);
/* Prints result `b` (of declared type `rt`) in full to stdout, as the
 * StableHLO reference interpreter prints values. */
void cli_print_result(const hlo_type *rt, const hlo_buffer *b);

#endif
