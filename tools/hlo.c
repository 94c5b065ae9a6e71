/* hlo.c — the `hlo` command-line program: print, check and run StableHLO
 * programs. Every verb is a thin layer over the library (include/hlo/hlo.h
 * and the stage headers); errors print as FILE:LINE:COL with the source line
 * and exit with status 1. */
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>

#include "hlo/hlo.h"
#include "interp/interp.h"
#include "ir/element.h"
#include "ir/ir.h"
#include "parse/parse.h"
#include "runtime/runtime.h"
#include "support/float.h"
#include "interp/tensor_print.h"
#include "support/npy.h"
#include "support/strbuf.h"
#include "support/status.h"

#define HLO_VERSION "0.1.0"

static const char *usage_main =
    "usage: hlo [--help] [--version] COMMAND [ARGS]\n"
    "\n"
    "hlo reads StableHLO programs as JAX prints them (jax.jit(f).lower(...).as_text())\n"
    "and runs them.\n"
    "\n"
    "commands:\n"
    "  print   parse a program and print it back in canonical form\n"
    "  check   parse and verify a program against the StableHLO spec\n"
    "  run     run a program on inputs from .npy files and write its results\n"
    "\n"
    "`hlo COMMAND --help` explains a command's flags. The program FILE may be `-` for\n"
    "standard input. Flags take their value as the next argument or after `=`.\n";

static const char *usage_print =
    "usage: hlo print [--split-input-file] FILE\n"
    "\n"
    "Parses FILE and prints it in the canonical pretty syntax (the syntax JAX prints);\n"
    "the output parses back to the same program.\n"
    "\n"
    "  --split-input-file  FILE holds several modules separated by `// -----` lines;\n"
    "                      print each, separated the same way\n"
    "  --no-verify         print without running the verifier first\n";

static const char *usage_check =
    "usage: hlo check [--split-input-file] FILE\n"
    "\n"
    "Parses FILE and verifies every op against the type and shape constraints of the\n"
    "StableHLO spec. Prints `FILE: ok` or the first error as FILE:LINE:COL with the\n"
    "spec constraint it breaks; exits 1 on error.\n"
    "\n"
    "  --split-input-file  check each `// -----`-separated module\n";

static const char *usage_run =
    "usage: hlo run FILE [--input A.npy | --arg LITERAL]... [--output-dir DIR]\n"
    "               [--entry NAME] [--backend interp] [--split-input-file] [--quiet]\n"
    "               [--print-results] [--verify-diagnostics] [--probe-dir DIR]\n"
    "\n"
    "Runs the entry function (@main, or the only function) of FILE.\n"
    "\n"
    "  --input A.npy       the next argument of the entry function, in order. float32\n"
    "                      .npy files are accepted for bf16/f16/f8 parameters when every\n"
    "                      value is exactly representable.\n"
    "  --output-dir DIR    write result K to DIR/outK.npy, creating DIR (types numpy\n"
    "                      lacks, such as bf16, are written as float32; a note says so;\n"
    "                      a tuple result's element J is written to outK_J.npy)\n"
    "  --entry NAME        run function @NAME instead of @main\n"
    "  --backend interp    the reference interpreter (the only backend so far)\n"
    "  --split-input-file  run each `// -----`-separated module of FILE\n"
    "  --arg LITERAL       the next argument as an MLIR literal, e.g.\n"
    "                      'dense<[1, 2]> : tensor<2xi32>' (instead of an --input file)\n"
    "  --print-results     print every result in full, as the StableHLO reference\n"
    "                      interpreter prints values\n"
    "  --verify-diagnostics  a module with an `expected-error {{MSG}}` comment must\n"
    "                      fail with an error containing MSG (MLIR's convention)\n"
    "  --probe-dir DIR     where interpreter.probe writes its tensors\n"
    "  --quiet             print no result summaries\n"
    "\n"
    "A program whose check ops (check.*, custom_call @check.*) fail exits 1 and names\n"
    "the failed check's location and the first differing element.\n"
    "Dynamic shapes (jax.export with symbolic dimensions, `tensor<?x3xf32>`): each `?`\n"
    "takes the input's size and the program is specialized to the inputs' shapes\n"
    "(refine-shapes), JAX's shape assertions included. A !stablehlo.token parameter\n"
    "takes no input (a token is made for it); token results are not written.\n";

/* ------------------------------------------------------------- helpers */

static int report(hlo_status st) {
  hlo_status_print(st, stderr);
  hlo_status_free(st);
  return 1;
}

typedef struct module_piece {
  hlo_module *m;
  hlo_status st;
  unsigned first_line;
  char *expect;   /* text of the piece's first `expected-error {{...}}`, or NULL */
} module_piece;

/* The message of the first `expected-error... {{MSG}}` comment in text[0..n)
 * (MLIR's --verify-diagnostics convention), malloc'd, or NULL. */
static char *find_expected_error(const char *text, size_t n) {
  const char *key = "expected-error";
  size_t kl = strlen(key);
  for (size_t i = 0; i + kl < n; i++) {
    if (memcmp(text + i, key, kl) != 0) continue;
    size_t j = i + kl;
    while (j + 1 < n && text[j] != '\n' && !(text[j] == '{' && text[j + 1] == '{')) j++;
    if (j + 1 >= n || text[j] != '{') continue;
    size_t k = j + 2;
    while (k + 1 < n && text[k] != '\n' && !(text[k] == '}' && text[k + 1] == '}')) k++;
    if (k + 1 >= n || text[k] != '}') continue;
    return strndup(text + j + 2, k - j - 2);
  }
  return NULL;
}

/* Reads FILE and parses it whole or split into pieces; each piece gets its
 * module or its error. Returns a status only for errors reading the file. */
static hlo_status load_pieces(const char *path, bool split, bool verify, module_piece **out,
                              size_t *out_n) {
  char *text;
  size_t len;
  HLO_TRY(runtime_read_file(path, &text, &len));
  split_piece *pieces = NULL;
  size_t n = 1;
  if (split) {
    hlo_status st = parse_split(text, len, &pieces, &n);
    if (st) { free(text); return st; }
  } else {
    pieces = malloc(sizeof *pieces);
    if (!pieces) { free(text); return status_new(HLO_RESOURCE_EXHAUSTED, "out of memory"); }
    pieces[0] = (split_piece){0, len, 1};
  }
  module_piece *mp = calloc(n, sizeof *mp);
  if (!mp) {
    free(text);
    free(pieces);
    return status_new(HLO_RESOURCE_EXHAUSTED, "out of memory");
  }
  for (size_t i = 0; i < n; i++) {
    mp[i].first_line = pieces[i].first_line;
    mp[i].expect = find_expected_error(text + pieces[i].begin, pieces[i].end - pieces[i].begin);
    const char *name = strcmp(path, "-") == 0 ? "<stdin>" : path;
    if (verify) {
      mp[i].st = hlo_module_parse_at(name, text + pieces[i].begin, pieces[i].end - pieces[i].begin,
                                     pieces[i].first_line, &mp[i].m);
    } else {
      hlo_source src = {name, text + pieces[i].begin, pieces[i].end - pieces[i].begin,
                        pieces[i].first_line};
      hlo_module_ir *ir = NULL;
      mp[i].st = parse_module(&src, 0, src.len, &ir);
      if (!mp[i].st) {
        mp[i].m = runtime_module_wrap(ir);
        if (!mp[i].m) {
          module_free(ir);
          mp[i].st = status_new(HLO_RESOURCE_EXHAUSTED, "out of memory");
        }
      }
    }
  }
  free(text);
  free(pieces);
  *out = mp;
  *out_n = n;
  return NULL;
}

static void free_pieces(module_piece *mp, size_t n) {
  for (size_t i = 0; i < n; i++) {
    hlo_module_destroy(mp[i].m);
    hlo_status_free(mp[i].st);
    free(mp[i].expect);
  }
  free(mp);
}

static bool is_flag(const char *a, const char *f) { return strcmp(a, f) == 0; }

/* --------------------------------------------------------------- print */

static int cmd_print(int argc, char **argv) {
  bool split = false, verify = true;
  const char *file = NULL;
  for (int i = 0; i < argc; i++) {
    if (is_flag(argv[i], "--help") || is_flag(argv[i], "-h")) { fputs(usage_print, stdout); return 0; }
    else if (is_flag(argv[i], "--split-input-file")) split = true;
    else if (is_flag(argv[i], "--no-verify")) verify = false;
    else if (argv[i][0] == '-' && argv[i][1]) {
      fprintf(stderr, "hlo print: unknown flag '%s'\n%s", argv[i], usage_print);
      return 2;
    } else if (!file) file = argv[i];
    else { fprintf(stderr, "hlo print: more than one FILE\n%s", usage_print); return 2; }
  }
  if (!file) { fprintf(stderr, "hlo print: missing FILE\n%s", usage_print); return 2; }
  module_piece *mp;
  size_t n;
  hlo_status st = load_pieces(file, split, verify, &mp, &n);
  if (st) return report(st);
  int rc = 0;
  for (size_t i = 0; i < n; i++) {
    if (i) fputs("// -----\n", stdout);
    if (mp[i].st) {
      hlo_status_print(mp[i].st, stderr);
      rc = 1;
      continue;
    }
    char *text = module_print(runtime_module_ir(mp[i].m));
    if (!text) {
      fprintf(stderr, "hlo print: out of memory printing the module\n");
      rc = 1;
      continue;
    }
    fputs(text, stdout);
    free(text);
  }
  free_pieces(mp, n);
  return rc;
}

/* --------------------------------------------------------------- check */

/* Warns about custom calls whose target has no handler: running them fails,
 * but only when reached, so a call on an error path is no error here. */
static void warn_ops(const hlo_module_ir *ir, const hlo_block *b) {
  for (const hlo_op *op = b->first; op; op = op->next) {
    for (uint32_t r = 0; r < op->num_regions; r++) warn_ops(ir, &op->regions[r].block);
    if (op->opcode != OP_CUSTOM_CALL) continue;
    const hlo_attr *t = op_attr(op, "call_target_name");
    if (t && (t->kind == ATTR_STRING || t->kind == ATTR_SYMBOL) &&
        !interp_custom_call_known(t->u.str.s))
      fprintf(stderr, "%s:%u:%u: warning: custom_call target '%s' is not registered; running "
              "this call will fail\n", ir->source.name ? ir->source.name : "<input>",
              op->loc.line, op->loc.col, t->u.str.s);
  }
}

static void warn_unknown_targets(const hlo_module_ir *ir) {
  for (const hlo_func *f = ir->funcs; f; f = f->next) warn_ops(ir, &f->body.block);
}

static int cmd_check(int argc, char **argv) {
  bool split = false;
  const char *file = NULL;
  for (int i = 0; i < argc; i++) {
    if (is_flag(argv[i], "--help") || is_flag(argv[i], "-h")) { fputs(usage_check, stdout); return 0; }
    else if (is_flag(argv[i], "--split-input-file")) split = true;
    else if (argv[i][0] == '-' && argv[i][1]) {
      fprintf(stderr, "hlo check: unknown flag '%s'\n%s", argv[i], usage_check);
      return 2;
    } else if (!file) file = argv[i];
    else { fprintf(stderr, "hlo check: more than one FILE\n%s", usage_check); return 2; }
  }
  if (!file) { fprintf(stderr, "hlo check: missing FILE\n%s", usage_check); return 2; }
  module_piece *mp;
  size_t n;
  hlo_status st = load_pieces(file, split, true, &mp, &n);
  if (st) return report(st);
  int rc = 0;
  for (size_t i = 0; i < n; i++) {
    if (mp[i].st) {
      hlo_status_print(mp[i].st, stderr);
      rc = 1;
      continue;
    }
    warn_unknown_targets(runtime_module_ir(mp[i].m));
  }
  if (!rc) printf("%s: ok (%zu module%s)\n", file, n, n == 1 ? "" : "s");
  free_pieces(mp, n);
  return rc;
}

/* ----------------------------------------------------------------- run */

#define MAX_INPUTS 4096

static void type_text(char *buf, size_t n, hlo_dtype dt, uint32_t rank, const int64_t *dims) {
  size_t k = (size_t)snprintf(buf, n, "tensor<");
  for (uint32_t d = 0; d < rank && k < n; d++) {
    if (dims[d] == HLO_DYN) k += (size_t)snprintf(buf + k, n - k, "?x");
    else k += (size_t)snprintf(buf + k, n - k, "%lldx", (long long)dims[d]);
  }
  if (k < n) snprintf(buf + k, n - k, "%s>", hlo_dtype_name(dt));
}

/* Checks that input file `path` (array `a`, element type `dt` after any
 * conversion) fits parameter `i` of `f`; the error names the file, what it
 * holds and what the parameter is, located at the parameter. */
static hlo_status check_input(const hlo_func *f, uint32_t i, const char *path, const npy_array *a,
                              hlo_dtype dt, bool narrow_float) {
  const hlo_type *t = f->body.block.args[i].type;
  bool ok = t->kind == TYPE_TENSOR && dt == t->dtype && (uint32_t)a->rank == t->rank;
  uint32_t bad = UINT32_MAX;
  for (uint32_t d = 0; ok && d < t->rank; d++)
    if (!(t->dims[d] == HLO_DYN || t->dims[d] == a->dims[d])) { ok = false; bad = d; }
  if (ok) return NULL;
  char dimmsg[96] = "";
  if (bad != UINT32_MAX)
    snprintf(dimmsg, sizeof dimmsg, " (dimension %u must be %lld, not %lld)", bad,
             (long long)t->dims[bad], (long long)a->dims[bad]);
  char want[160] = "a tuple or token", got[160];
  if (t->kind == TYPE_TENSOR) type_text(want, sizeof want, t->dtype, t->rank, t->dims);
  type_text(got, sizeof got, a->dtype, (uint32_t)a->rank, a->dims);
  if (a->opaque_byte)
    snprintf(got, sizeof got, "1-byte elements of an ml_dtypes type");
  return status_at(HLO_INVALID_ARGUMENT, &f->body.block.args[i].loc,
                   "input %u ('%s') holds %s (numpy '%s'), but argument %u of @%s is %s%s%s", i,
                   path, got, a->descr, i, f->name, want, dimmsg,
                   narrow_float && a->dtype == HLO_F32 && dt != t->dtype
                       ? "; float32 data is accepted for it only when exactly representable"
                       : "");
}

/* Converts a .npy array into a view of parameter `i` of `f`, converting
 * float32 data for narrower float parameters when every value is exact.
 * *out_owned is set to memory the caller frees (or NULL). */
static hlo_status view_from_npy(const hlo_func *f, uint32_t i, const char *path,
                                npy_array *a, hlo_buffer_view *v, void **out_owned) {
  *out_owned = NULL;
  const hlo_type *t = f->body.block.args[i].type;
  v->dtype = a->dtype;
  v->rank = a->rank;
  v->dims = a->dims;
  v->data = a->data;
  if (a->opaque_byte && t->kind == TYPE_TENSOR && hlo_dtype_size(t->dtype) == 1 &&
      t->dtype != HLO_I1) {
    /* an ml_dtypes 1-byte type: its bytes are the parameter's bit patterns */
    v->dtype = t->dtype;
    return check_input(f, i, path, a, v->dtype, false);
  }
  if (t->kind != TYPE_TENSOR || a->dtype == t->dtype) return check_input(f, i, path, a, a->dtype, false);
  bool narrow_float = dtype_is_float(t->dtype) && hlo_dtype_size(t->dtype) < 4;
  if (a->dtype == HLO_F32 && narrow_float) {
    int64_t n = (int64_t)(a->nbytes / 4);
    size_t es = hlo_dtype_size(t->dtype);
    void *buf = malloc(n ? (size_t)n * es : 1);
    if (!buf) return status_new(HLO_RESOURCE_EXHAUSTED, "out of memory converting '%s'", path);
    for (int64_t k = 0; k < n; k++) {
      double x = elem_get_f64(HLO_F32, a->data, k);
      elem_set_f64(t->dtype, buf, k, x);
      double y = elem_get_f64(t->dtype, buf, k);
      if (!(x == y || (isnan(x) && isnan(y)))) {
        free(buf);
        return status_new(HLO_INVALID_ARGUMENT,
                          "input %u ('%s'): element %lld = %.9g is not exactly representable "
                          "in %s, the type of argument %u of @%s",
                          i, path, (long long)k, x, hlo_dtype_name(t->dtype), i, f->name);
      }
    }
    v->dtype = t->dtype;
    v->data = buf;
    *out_owned = buf;
  }
  return check_input(f, i, path, a, v->dtype, narrow_float);
}

/* Writes result `name` ("0"; a tuple's elements "0_1", "0_1_0", ...) to
 * DIR/out<name>.npy; types numpy lacks become float32 (floats) or int8/uint8
 * (i2/i4/ui2/ui4). Tokens are not written; a tuple writes its elements. */
static hlo_status write_result(const char *dir, const char *name, const hlo_buffer *b,
                               bool *noted) {
  char path[4096];
  if (hlo_buffer_rank(b) == HLO_RANK_TOKEN) return NULL;
  if (hlo_buffer_rank(b) == HLO_RANK_TUPLE) {
    for (int j = 0; j < hlo_buffer_tuple_size(b); j++) {
      char sub[256];
      snprintf(sub, sizeof sub, "%s_%d", name, j);
      HLO_TRY(write_result(dir, sub, hlo_buffer_tuple_element(b, j), noted));
    }
    return NULL;
  }
  snprintf(path, sizeof path, "%s/out%s.npy", dir, name);
  hlo_dtype dt = hlo_buffer_dtype(b);
  int rank = hlo_buffer_rank(b);
  const int64_t *dims = hlo_buffer_dims(b);
  const void *data = hlo_buffer_data(b);
  hlo_dtype as = dt;
  switch (dt) {
    case HLO_I2: case HLO_I4: as = HLO_I8; break;
    case HLO_UI2: case HLO_UI4: as = HLO_UI8; break;
    default:
      if (dtype_is_float(dt) && dt != HLO_F16 && dt != HLO_F32 && dt != HLO_F64) as = HLO_F32;
  }
  if (as == dt) return npy_write(path, dt, rank, dims, data);
  size_t n = hlo_buffer_nbytes(b) / hlo_dtype_size(dt);
  void *buf = malloc(n ? n * hlo_dtype_size(as) : 1);
  if (!buf) return status_new(HLO_RESOURCE_EXHAUSTED, "out of memory writing '%s'", path);
  for (size_t i = 0; i < n; i++) {
    if (as == HLO_F32) elem_set_f64(as, buf, (int64_t)i, elem_get_f64(dt, data, (int64_t)i));
    else elem_set_i64(as, buf, (int64_t)i, elem_get_i64(dt, data, (int64_t)i));
  }
  hlo_status st = npy_write(path, as, rank, dims, buf);
  free(buf);
  if (!st && !*noted) {
    fprintf(stderr, "note: %s has no numpy type; %s holds it as %s\n", hlo_dtype_name(dt), path,
            hlo_dtype_name(as) );
    *noted = true;
  }
  return st;
}

static void print_value(FILE *o, hlo_dtype dt, const void *data, int64_t i) {
  switch (dtype_class(dt)) {
    case HLO_CLASS_BOOL: fputs(elem_get_i64(dt, data, i) ? "true" : "false", o); break;
    case HLO_CLASS_SINT: fprintf(o, "%lld", (long long)elem_get_i64(dt, data, i)); break;
    case HLO_CLASS_UINT: fprintf(o, "%llu", (unsigned long long)elem_get_u64(dt, data, i)); break;
    case HLO_CLASS_FLOAT: fprintf(o, "%.6g", elem_get_f64(dt, data, i)); break;
    case HLO_CLASS_COMPLEX: {
      double re, im;
      elem_get_c128(dt, data, i, &re, &im);
      fprintf(o, "(%.6g, %.6g)", re, im);
      break;
    }
  }
}

/* mkdir -p: creates `dir` and any missing parents. */
static hlo_status make_dirs(const char *dir) {
  char path[4096];
  if (snprintf(path, sizeof path, "%s", dir) >= (int)sizeof path)
    return status_new(HLO_INVALID_ARGUMENT, "output directory path too long");
  for (char *p = path + 1; ; p++) {
    char c = *p;
    if (c != '/' && c != 0) continue;
    *p = 0;
    struct stat sbuf;
    if (stat(path, &sbuf) != 0) {
      if (mkdir(path, 0777) != 0 && errno != EEXIST)
        return status_new(HLO_NOT_FOUND, "cannot create output directory '%s': %s", path,
                          strerror(errno));
    } else if (!S_ISDIR(sbuf.st_mode)) {
      return status_new(HLO_INVALID_ARGUMENT, "output directory '%s': '%s' is not a directory",
                        dir, path);
    }
    *p = c;
    if (!c) break;
  }
  return NULL;
}

/* One line per result ("result 0", a tuple's elements "result 0_1"): shape
 * and type, the first values, min/max and NaNs. */
static void summarize(FILE *o, const char *k, const hlo_buffer *b) {
  hlo_dtype dt = hlo_buffer_dtype(b);
  int rank = hlo_buffer_rank(b);
  if (rank == HLO_RANK_TOKEN) {
    fprintf(o, "result %s: !stablehlo.token (not written)\n", k);
    return;
  }
  if (rank == HLO_RANK_TUPLE) {
    fprintf(o, "result %s: tuple of %d\n", k, hlo_buffer_tuple_size(b));
    for (int j = 0; j < hlo_buffer_tuple_size(b); j++) {
      char sub[256];
      snprintf(sub, sizeof sub, "%s_%d", k, j);
      summarize(o, sub, hlo_buffer_tuple_element(b, j));
    }
    return;
  }
  const int64_t *dims = hlo_buffer_dims(b);
  const void *data = hlo_buffer_data(b);
  int64_t n = (int64_t)(hlo_buffer_nbytes(b) / hlo_dtype_size(dt));
  fprintf(o, "result %s: tensor<", k);
  for (int d = 0; d < rank; d++) fprintf(o, "%lldx", (long long)dims[d]);
  fprintf(o, "%s> [", hlo_dtype_name(dt));
  for (int64_t i = 0; i < n && i < 6; i++) {
    if (i) fputs(", ", o);
    print_value(o, dt, data, i);
  }
  fputs(n > 6 ? ", ...]" : "]", o);
  if (n > 0 && dtype_class(dt) != HLO_CLASS_COMPLEX) {
    double mn = INFINITY, mx = -INFINITY;
    int64_t nans = 0;
    for (int64_t i = 0; i < n; i++) {
      double x = elem_get_f64(dt, data, i);
      if (isnan(x)) { nans++; continue; }
      if (x < mn) mn = x;
      if (x > mx) mx = x;
    }
    if (nans < n) fprintf(o, " min %.6g max %.6g", mn, mx);
    if (dtype_class(dt) == HLO_CLASS_FLOAT) fprintf(o, " nan %lld", (long long)nans);
  }
  fputc('\n', o);
}

typedef struct run_opts {
  const char *inputs[MAX_INPUTS];
  bool input_is_literal[MAX_INPUTS]; /* --arg: an MLIR dense literal, not a file */
  int num_inputs;
  const char *output_dir, *entry, *probe_dir;
  bool quiet, print_results, verify_diagnostics;
} run_opts;

/* Evaluates `dense<...> : tensor<...>` (an --arg) into a host buffer by
 * running a one-constant program through the library. */
static hlo_status literal_to_buffer(const char *lit, hlo_buffer **out) {
  *out = NULL;
  const char *colon = strrchr(lit, ':');
  if (!colon)
    return status_new(HLO_INVALID_ARGUMENT,
                      "--arg '%s': expected a dense literal with its type, e.g. "
                      "'dense<1> : tensor<2xi32>'", lit);
  const char *type = colon + 1;
  while (*type == ' ') type++;
  size_t n = strlen(lit) * 2 + strlen(type) * 2 + 128;
  char *text = malloc(n);
  if (!text) return status_new(HLO_RESOURCE_EXHAUSTED, "out of memory");
  snprintf(text, n, "func.func @main() -> %s {\n  %%0 = stablehlo.constant %s\n  return %%0 : %s\n}\n",
           type, lit, type);
  hlo_module *m = NULL;
  hlo_executable *e = NULL;
  hlo_buffer **res = NULL;
  hlo_status st = hlo_module_parse("--arg", text, strlen(text), &m);
  if (!st) st = hlo_executable_create(m, NULL, HLO_BACKEND_INTERP, &e);
  if (!st) st = hlo_executable_run(e, NULL, 0, &res);
  if (!st) { *out = res[0]; free(res); }
  hlo_executable_destroy(e);
  hlo_module_destroy(m);
  free(text);
  if (st) status_note(st, "while reading --arg '%s'", lit);
  return st;
}

/* The inputs of one run: .npy arrays or --arg literals, as buffer views. */
typedef struct run_inputs {
  int n;
  npy_array *arrs;        /* n entries; zeroed where the input is a literal */
  hlo_buffer **lits;      /* n entries; NULL where the input is a file */
  void **owned;           /* n entries; converted data (f32 -> bf16...) or NULL */
  hlo_buffer_view *views; /* n entries: what the executable runs on */
} run_inputs;

static void free_inputs(run_inputs *in) {
  for (int i = 0; i < in->n; i++) {
    if (in->arrs) npy_free(&in->arrs[i]);
    if (in->lits) hlo_buffer_destroy(in->lits[i]);
    if (in->owned) free(in->owned[i]);
  }
  free(in->arrs);
  free(in->lits);
  free(in->owned);
  free(in->views);
  memset(in, 0, sizeof *in);
}

/* Number of parameters of `f` that take an input (all but tokens). */
static uint32_t num_value_args(const hlo_func *f) {
  uint32_t n = 0;
  for (uint32_t i = 0; i < f->num_args; i++) n += f->body.block.args[i].type->kind != TYPE_TOKEN;
  return n;
}

/* Reads every --input file and evaluates every --arg literal into views for
 * the parameters of `f`, checking element types and shapes. Token
 * parameters take no input: they get a token view (HLO_RANK_TOKEN). */
static hlo_status load_inputs(const hlo_func *f, const run_opts *ro, run_inputs *in) {
  size_t n = (size_t)f->num_args + 1;
  in->n = (int)f->num_args;
  in->arrs = calloc(n, sizeof *in->arrs);
  in->lits = calloc(n, sizeof *in->lits);
  in->owned = calloc(n, sizeof *in->owned);
  in->views = calloc(n, sizeof *in->views);
  if (!in->arrs || !in->lits || !in->owned || !in->views)
    return status_new(HLO_RESOURCE_EXHAUSTED, "out of memory");
  for (int i = 0, j = 0; i < (int)f->num_args; i++) {
    if (f->body.block.args[i].type->kind == TYPE_TOKEN) {
      in->views[i] = (hlo_buffer_view){HLO_F32, HLO_RANK_TOKEN, NULL, NULL};
      continue;
    }
    int inp = j++; /* the input given for argument i */
    if (ro->input_is_literal[inp]) {
      HLO_TRY(literal_to_buffer(ro->inputs[inp], &in->lits[i]));
      const hlo_buffer *b = in->lits[i];
      in->views[i] = (hlo_buffer_view){hlo_buffer_dtype(b), hlo_buffer_rank(b),
                                       hlo_buffer_dims(b), (void *)hlo_buffer_data(b)};
      continue;
    }
    HLO_RETURN_IF_ERROR(npy_read(ro->inputs[inp], &in->arrs[i]),
                        "while reading input %d (argument %d) of @%s", inp, i, f->name);
    HLO_TRY(view_from_npy(f, (uint32_t)i, ro->inputs[inp], &in->arrs[i], &in->views[i],
                          &in->owned[i]));
  }
  return NULL;
}

/* Prints result `b` (of declared type `rt`) in full; a tuple prints its
 * elements in order, a token nothing (it holds no value). */
static void print_result(const hlo_type *rt, const hlo_buffer *b) {
  if (hlo_buffer_rank(b) == HLO_RANK_TOKEN) return;
  if (hlo_buffer_rank(b) == HLO_RANK_TUPLE) {
    for (int j = 0; j < hlo_buffer_tuple_size(b); j++)
      print_result(rt->kind == TYPE_TUPLE && (uint32_t)j < rt->num_elems ? rt->elems[j] : rt,
                   hlo_buffer_tuple_element(b, j));
    return;
  }
  /* the result's own shape (a dynamic result type takes the run's) */
  int64_t dims[64];
  hlo_type shaped = *rt;
  shaped.kind = TYPE_TENSOR;
  shaped.dtype = hlo_buffer_dtype(b);
  if (hlo_buffer_rank(b) <= 64) {
    memcpy(dims, hlo_buffer_dims(b), (size_t)hlo_buffer_rank(b) * sizeof *dims);
    shaped.rank = (uint32_t)hlo_buffer_rank(b);
    shaped.dims = dims;
  }
  tensor x = {0};
  x.type = &shaped;
  x.data = (uint8_t *)hlo_buffer_data(b);
  x.nbytes = hlo_buffer_nbytes(b);
  strbuf sb;
  sb_init(&sb);
  tensor_print(&sb, &x);
  fputs(sb_cstr(&sb), stdout);
  sb_free(&sb);
}

/* Writes, prints in full, or summarises the results of a run, as asked. */
static hlo_status report_results(const hlo_func *f, const run_opts *ro, const char *label,
                                 hlo_buffer **res, int nres, double secs) {
  if (ro->output_dir) {
    bool noted = false;
    HLO_TRY(make_dirs(ro->output_dir));
    for (int k = 0; k < nres; k++) {
      char name[32];
      snprintf(name, sizeof name, "%d", k);
      HLO_TRY(write_result(ro->output_dir, name, res[k], &noted));
    }
  }
  if (ro->print_results) {
    for (int k = 0; k < nres; k++) print_result(f->result_types[k], res[k]);
  } else if (!ro->quiet) {
    printf("%s@%s: %d result%s (%.3f s)\n", label, f->name, nres, nres == 1 ? "" : "s", secs);
    for (int k = 0; k < nres; k++) {
      char name[32];
      snprintf(name, sizeof name, "%d", k);
      summarize(stdout, name, res[k]);
    }
  }
  return NULL;
}

static double now_seconds(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

/* Runs the entry function of one module on the inputs `ro` names. */
static hlo_status run_module(hlo_module *m, const run_opts *ro, const char *label) {
  hlo_executable *e;
  interp_options io = {ro->probe_dir, stdout};
  HLO_TRY(runtime_executable_create(m, ro->entry, &io, &e));
  const hlo_func *f = runtime_executable_entry(e);
  hlo_status st = NULL;
  uint32_t nval = num_value_args(f);
  if ((uint32_t)ro->num_inputs != nval)
    st = status_at(HLO_INVALID_ARGUMENT, &f->loc,
                   "@%s takes %u argument%s%s but %d input%s given (--input/--arg)", f->name,
                   nval, nval == 1 ? "" : "s",
                   nval != f->num_args ? " (besides its tokens, which take no input)" : "",
                   ro->num_inputs, ro->num_inputs == 1 ? " was" : "s were");
  run_inputs in = {0};
  if (!st) st = load_inputs(f, ro, &in);
  hlo_buffer **res = NULL;
  int nres = hlo_executable_num_results(e);
  double t0 = now_seconds();
  if (!st) st = hlo_executable_run(e, in.views, (int)f->num_args, &res);
  double secs = now_seconds() - t0;
  if (!st) st = report_results(f, ro, label, res, nres, secs);
  for (int k = 0; res && k < nres; k++) hlo_buffer_destroy(res[k]);
  free(res);
  free_inputs(&in);
  hlo_executable_destroy(e);
  return st;
}

/* Splits `--flag=value` arguments into two, so every verb accepts both
 * spellings. Returns a malloc'd argv (yours; strings point into argv or are
 * malloc'd copies listed in *owned) or NULL on out of memory. */
static char **split_eq_flags(int argc, char **argv, int *out_argc, char ***owned) {
  char **v = calloc((size_t)argc * 2 + 1, sizeof *v);
  char **own = calloc((size_t)argc + 1, sizeof *own);
  if (!v || !own) { free(v); free(own); return NULL; }
  int n = 0, no = 0;
  for (int i = 0; i < argc; i++) {
    char *eq = strchr(argv[i], '=');
    if (argv[i][0] == '-' && argv[i][1] == '-' && eq) {
      char *flag = strndup(argv[i], (size_t)(eq - argv[i]));
      if (!flag) { for (int k = 0; k < no; k++) free(own[k]); free(own); free(v); return NULL; }
      own[no++] = flag;
      v[n++] = flag;
      v[n++] = eq + 1;
    } else {
      v[n++] = argv[i];
    }
  }
  *out_argc = n;
  *owned = own;
  return v;
}

static int cmd_run(int argc, char **argv) {
  static run_opts ro;
  memset(&ro, 0, sizeof ro);
  bool split = false;
  const char *file = NULL;
  for (int i = 0; i < argc; i++) {
    const char *a = argv[i];
    bool has_val = i + 1 < argc;
    if (is_flag(a, "--help") || is_flag(a, "-h")) { fputs(usage_run, stdout); return 0; }
    else if (is_flag(a, "--split-input-file")) split = true;
    else if (is_flag(a, "--quiet") || is_flag(a, "-q")) ro.quiet = true;
    else if ((is_flag(a, "--input") || is_flag(a, "-i")) && has_val) {
      if (ro.num_inputs == MAX_INPUTS) { fprintf(stderr, "hlo run: too many inputs\n"); return 2; }
      ro.inputs[ro.num_inputs++] = argv[++i];
    } else if (is_flag(a, "--arg") && has_val) {
      if (ro.num_inputs == MAX_INPUTS) { fprintf(stderr, "hlo run: too many inputs\n"); return 2; }
      ro.input_is_literal[ro.num_inputs] = true;
      ro.inputs[ro.num_inputs++] = argv[++i];
    } else if (is_flag(a, "--print-results")) ro.print_results = true;
    else if (is_flag(a, "--verify-diagnostics")) ro.verify_diagnostics = true; else if (is_flag(a, "--output-dir") && has_val) ro.output_dir = argv[++i];
    else if (is_flag(a, "--entry") && has_val) ro.entry = argv[++i];
    else if (is_flag(a, "--probe-dir") && has_val) ro.probe_dir = argv[++i];
    else if (is_flag(a, "--backend") && has_val) {
      if (strcmp(argv[++i], "interp") != 0) {
        fprintf(stderr, "hlo run: unknown backend '%s' (available: interp)\n", argv[i]);
        return 2;
      }
    } else if (a[0] == '-' && a[1]) {
      fprintf(stderr, "hlo run: unknown flag or missing value '%s'\n%s", a, usage_run);
      return 2;
    } else if (!file) file = a;
    else { fprintf(stderr, "hlo run: more than one FILE ('%s')\n%s", a, usage_run); return 2; }
  }
  if (!file) { fprintf(stderr, "hlo run: missing FILE\n%s", usage_run); return 2; }
  module_piece *mp;
  size_t n;
  hlo_status st = load_pieces(file, split, true, &mp, &n);
  if (st) return report(st);
  int failed = 0;
  size_t empty = 0;
  for (size_t i = 0; i < n; i++) {
    char label[64] = "";
    if (split && mp[i].m && runtime_module_ir(mp[i].m)->num_funcs == 0) {
      empty++; /* a piece of only comments, e.g. a file header: nothing to run */
      continue;
    }
    if (split) snprintf(label, sizeof label, "[module %zu, line %u] ", i + 1, mp[i].first_line);
    st = mp[i].st;
    mp[i].st = NULL;
    if (!st) st = run_module(mp[i].m, &ro, label);
    if (ro.verify_diagnostics && mp[i].expect) {
      /* this piece must fail, with the expected message */
      if (st && strstr(hlo_status_message(st), mp[i].expect)) {
        hlo_status_free(st);
        st = NULL;
      } else if (st) {
        hlo_status_print(st, stderr);
        hlo_status_free(st);
        st = status_new(HLO_FAILED_CHECK, "[module %zu, line %u] expected the error '%s'; got the "
                        "one above", i + 1, mp[i].first_line, mp[i].expect);
      } else {
        st = status_new(HLO_FAILED_CHECK, "[module %zu, line %u] expected the error '%s'; the "
                        "module ran without error", i + 1, mp[i].first_line, mp[i].expect);
      }
    }
    if (st) {
      failed++;
      hlo_status_print(st, stderr);
      hlo_status_free(st);
    }
  }
  if (split && !ro.quiet)
    printf("%zu modules: %zu ran, %zu without functions, %d failed\n", n,
           n - (size_t)failed - empty, empty, failed);
  free_pieces(mp, n);
  return failed ? 1 : 0;
}

static int dispatch(int argc, char **argv) {
  if (argc < 2) { fputs(usage_main, stderr); return 2; }
  const char *cmd = argv[1];
  if (is_flag(cmd, "--help") || is_flag(cmd, "-h") || is_flag(cmd, "help")) {
    fputs(usage_main, stdout);
    return 0;
  }
  if (is_flag(cmd, "--version")) { printf("hlo %s\n", HLO_VERSION); return 0; }
  if (is_flag(cmd, "print")) return cmd_print(argc - 2, argv + 2);
  if (is_flag(cmd, "check")) return cmd_check(argc - 2, argv + 2);
  if (is_flag(cmd, "run")) return cmd_run(argc - 2, argv + 2);
  fprintf(stderr, "hlo: unknown command '%s'\n\n%s", cmd, usage_main);
  return 2;
}

int main(int argc0, char **argv0) {
  int argc;
  char **owned = NULL;
  char **argv = split_eq_flags(argc0, argv0, &argc, &owned);
  if (!argv) { fprintf(stderr, "hlo: out of memory\n"); return 1; }
  int rc = dispatch(argc, argv);
  for (int i = 0; owned[i]; i++) free(owned[i]);
  free(owned);
  free(argv);
  return rc;
}
