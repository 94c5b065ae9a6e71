/* run.c — `hlo run`: run the entry function of a program (each
 * `// -----` piece with --split-input-file) on inputs from .npy files or
 * literals; write, summarise or print its results; --verify-diagnostics
 * for pieces that must fail with an `expected-error`. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "builtin.h"
#include "interp/interp.h"
#include "ir/ir.h"
#include "runtime/runtime.h"
#include "runtime/tiered.h"
#include "passes/pass_manager.h"
#include "passes/passes.h"
#include "passes/row_locality.h"
#include "parse/parse.h"
#include "support/status.h"

static const char *const usage_run =
    "usage: hlo run FILE [--input A.npy | --arg LITERAL]... [--output-dir DIR]\n"
    "               [--entry NAME] [--backend interp|cpu] [--split-input-file] [--quiet]\n"
    "               [--print-results] [--verify-diagnostics] [--probe-dir DIR]\n"
    "               [--passes LIST] [--dump-to DIR] [--check] [--pad-to-bucket[=B1,B2,...]]\n"
    "               [--cache-dir DIR] [--no-cache] [--cache-max-bytes N]\n"
    "               [--log-compiles] [--explain-cache-misses] [--no-tiering]\n"
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
    "  --backend cpu       compiled for this CPU (the default): the `cpu` pass pipeline\n"
    "                      (fusion), fused ops as C kernels (compiled by $HLO_CC, else\n"
    "                      cc; without a C compiler the default falls back to the\n"
    "                      interpreter, with a note), matmuls on BLAS, while/case/if as\n"
    "                      nested programs, the other ops on the interpreter's kernels;\n"
    "                      named explicitly, it prints what it made to stderr\n"
    "  --backend interp    the reference interpreter (the oracle)\n"
    "  --backend cuda      NVIDIA GPU 0 (kernels through NVRTC, matmuls through cuBLASLt)\n"
    "  --backend cpu-devmem  the CPU backend with its buffers kept apart from the host's,\n"
    "                      as a GPU's are: tests the device-memory path without a GPU\n"
    "  --split-input-file  run each `// -----`-separated module of FILE\n"
    "  --arg LITERAL       the next argument as an MLIR literal, e.g.\n"
    "                      'dense<[1, 2]> : tensor<2xi32>' (instead of an --input file)\n"
    "  --print-results     print every result in full, as the StableHLO reference\n"
    "                      interpreter prints values\n"
    "  --verify-diagnostics  a module with an `expected-error {{MSG}}` comment must\n"
    "                      fail with an error containing MSG (MLIR's convention)\n"
    "  --probe-dir DIR     where interpreter.probe writes its tensors\n"
    "  --quiet             print no result summaries\n"
    "  --passes LIST       optimise the program first with these passes, comma-separated,\n"
    "                      or `default` (" PASS_PIPELINE_DEFAULT "),\n"
    "                      or `cpu` (default, then fusion: the CPU backend's own),\n"
    "                      or `cuda` (cpu with small dots as reductions: the CUDA backend's),\n"
    "                      or `none`, verifying after each; prints each pass's time and\n"
    "                      op counts to stderr (the backend then runs the result)\n"
    "  --dump-to DIR       write the module before and after each pass to\n"
    "                      DIR/NNNN.PASS.{before,after}.mlir, and the CPU backend's\n"
    "                      generated C (the interpreter: implies --passes default;\n"
    "                      with --split-input-file, DIR/module-K/ for the K-th module)\n"
    "  --check             run on the cpu backend and, beside every compiled step\n"
    "                      (fusion kernel, BLAS call), the interpreter on the same\n"
    "                      inputs; stop at the first step whose results differ beyond\n"
    "                      the element type's tolerance, naming the fusion, its kernel\n"
    "                      and the ops inside it (implies --backend cpu)\n"
    "  --pad-to-bucket[=B1,B2,...]  for a program whose arguments have a dynamic\n"
    "                      leading dimension (tensor<?x...>): pad each such input with\n"
    "                      zero rows up to the next bucket (default: the powers of\n"
    "                      two), so that one compile (one cache entry) serves every\n"
    "                      size up to the bucket; prints each argument's padding and\n"
    "                      waste to stderr. An input larger than the last bucket is an\n"
    "                      error. It pads only where padding provably cannot change\n"
    "                      the real rows' results (row-wise ops, x*W matmuls, reductions\n"
    "                      along other dimensions: src/passes/row_locality.c), and\n"
    "                      otherwise refuses (exit 1), naming the first op that mixes\n"
    "                      rows (a sum over them, a shape computed from their count).\n"
    "                      JAX's shape assertions are checked at the unpadded sizes.\n"
    "                      Results row-aligned on their leading dimension are cut back\n"
    "                      to the real rows. A malformed list is a usage error (exit 2)\n"
    "  --no-tiering        (cpu) compile the native code before the run. By default a\n"
    "                      compile that misses the cache runs a cheap program on the\n"
    "                      interpreter while the C compiler works in the background\n"
    "                      (docs/tiered.md; also HLO_TIERING=0); either way the\n"
    "                      run waits for the native code before exiting, fails\n"
    "                      (exit 1) when that compile fails, and leaves the cache\n"
    "                      entry\n"
    CLI_CACHE_USAGE
    "\n"
    "A program whose check ops (check.*, custom_call @check.*) fail exits 1 and names\n"
    "the failed check's location and the first differing element.\n"
    "Dynamic shapes (jax.export with symbolic dimensions, `tensor<?x3xf32>`): each `?`\n"
    "takes the input's size and the program is specialized to the inputs' shapes\n"
    "(refine-shapes), JAX's shape assertions included. A !stablehlo.token parameter\n"
    "takes no input (a token is made for it); token results are not written.\n";


/* Most buckets --pad-to-bucket takes. */
#define MAX_BUCKETS 64

typedef struct run_opts {
  cli_input_list in;
  const char *output_dir, *entry, *probe_dir;
  const char *passes, *dump_dir; /* the pass pipeline (NULL: none) and its dumps */
  bool quiet, print_results, verify_diagnostics, check;
  bool backend_given;            /* --backend named (else the default, cpu) */
  bool no_tiering;               /* --no-tiering */
  hlo_backend_kind backend;
  cli_cache_opts cache;          /* the compilation cache's flags */
  bool pad;                      /* --pad-to-bucket */
  int num_buckets;               /* 0: the powers of two */
  int64_t buckets[MAX_BUCKETS];  /* increasing */
} run_opts;

/* Writes, prints in full, or summarises the results of a run, as asked. */
static hlo_status report_results(const hlo_func *f, const run_opts *ro, const char *label,
                                 hlo_buffer **res, int nres, double secs) {
  if (ro->output_dir) {
    bool noted = false;
    HLO_TRY(cli_make_dirs(ro->output_dir));
    for (int k = 0; k < nres; k++) {
      char name[32];
      snprintf(name, sizeof name, "%d", k);
      HLO_TRY(cli_write_result(ro->output_dir, name, res[k], &noted));
    }
  }
  if (ro->print_results) {
    for (int k = 0; k < nres; k++) cli_print_result(f->result_types[k], res[k]);
  } else if (!ro->quiet) {
    printf("%s@%s: %d result%s (%.3f s)\n", label, f->name, nres, nres == 1 ? "" : "s", secs);
    for (int k = 0; k < nres; k++) {
      char name[32];
      snprintf(name, sizeof name, "%d", k);
      cli_summarize(stdout, name, res[k]);
    }
  }
  return NULL;
}

static double now_seconds(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

/* ------------------------------------------------------- --pad-to-bucket */

/* Parses "B1,B2,..." (positive, increasing) into ro->buckets. False, after
 * a message on stderr, when malformed. */
static bool parse_buckets(const char *s, run_opts *ro) {
  ro->num_buckets = 0;
  const char *p = s;
  do {
    uint64_t v;
    char num[32];
    size_t k = strcspn(p, ",");
    if (k == 0 || k >= sizeof num) goto bad;
    memcpy(num, p, k);
    num[k] = 0;
    for (size_t j = 0; j < k; j++)
      if (num[j] < '0' || num[j] > '9') goto bad;
    if (!cli_parse_bytes(num, &v) || v == 0 || v > (uint64_t)INT64_MAX / 2) goto bad;
    if (ro->num_buckets == MAX_BUCKETS) {
      fprintf(stderr, "hlo run: --pad-to-bucket '%s': more than %d buckets\n", s, MAX_BUCKETS);
      return false;
    }
    if (ro->num_buckets && (int64_t)v <= ro->buckets[ro->num_buckets - 1]) {
      fprintf(stderr, "hlo run: --pad-to-bucket '%s': the buckets must be increasing\n", s);
      return false;
    }
    ro->buckets[ro->num_buckets++] = (int64_t)v;
    p += k;
  } while (*p++ == ',');
  return true;
bad:
  fprintf(stderr, "hlo run: --pad-to-bucket '%s': expected increasing positive whole numbers "
          "separated by commas, e.g. --pad-to-bucket=8,32,128\n", s);
  return false;
}

/* Whether the argument after --pad-to-bucket is its list. `hlo` splits
 * `--pad-to-bucket=LIST` into two arguments before run sees them
 * (tools/hlo.c), so the two spellings look alike here: the next argument
 * is the list unless it is another flag or names an existing file (the
 * program); anything else (`abc`, `-1`, `1K`, ``) is taken as a list, and a
 * malformed list is then a usage error naming it. */
static bool is_bucket_list(const char *a) {
  if (!*a || strchr(a, ',')) return true;
  if (a[0] == '-') return a[1] >= '0' && a[1] <= '9';
  if (a[0] >= '0' && a[0] <= '9') return true;
  FILE *fp = fopen(a, "r");
  if (fp) { fclose(fp); return false; }
  return true;
}

/* The padded inputs of one run and what is needed to cut results back. */
typedef struct pad_plan {
  int n;             /* entries of data/dims (the entry's num_args) */
  void **data;       /* padded copies (NULL where not padded) */
  int64_t **dims;    /* their dims */
  int *cls;          /* each argument's row class (row_locality.h), -1: not padded */
  int ncls;          /* classes: the padded arguments of one real row count */
  int64_t *cls_rows, *cls_bucket; /* each class's real rows and its bucket */
  int *cls_arg;      /* each class's first argument */
  rl_result_kind *kinds; /* per result, the analysis's verdict */
  int *result_cls;   /* per RL_RESULT_ROWS result, its class */
  int nres;
} pad_plan;

static void pad_plan_free(pad_plan *pp) {
  for (int i = 0; i < pp->n; i++) {
    if (pp->data) free(pp->data[i]);
    if (pp->dims) free(pp->dims[i]);
  }
  free(pp->data);
  free(pp->dims);
  free(pp->cls);
  free(pp->cls_rows);
  free(pp->cls_bucket);
  free(pp->cls_arg);
  free(pp->kinds);
  free(pp->result_cls);
  memset(pp, 0, sizeof *pp);
}

/* The bucket for `rows`: the smallest bucket >= rows, or -1 when larger than
 * the last. */
static int64_t bucket_of(const run_opts *ro, int64_t rows) {
  if (!ro->num_buckets) {
    int64_t b = 1;
    while (b < rows && b <= INT64_MAX / 2) b *= 2;
    return b >= rows ? b : -1;
  }
  for (int k = 0; k < ro->num_buckets; k++)
    if (ro->buckets[k] >= rows) return ro->buckets[k];
  return -1;
}

/* Whether `t` is a tensor whose leading dimension is dynamic. */
static bool dyn_leading(const hlo_type *t) {
  return t->kind == TYPE_TENSOR && t->rank >= 1 && t->dims[0] == HLO_DYN;
}

/* Refines a copy of the program to the unpadded inputs' shapes: the errors
 * the unpadded run would give for its shapes (JAX's shape assertions
 * among them) are given here, before padding hides them. */
static hlo_status check_unpadded_shapes(hlo_module_ir *src, const hlo_func *f,
                                        const run_inputs *in) {
  hlo_module_ir *c = NULL;
  hlo_status st = parse_module(&src->source, 0, src->source.len, &c);
  hlo_type **types = calloc(f->num_args + 1, sizeof *types);
  if (!st && !types) st = status_new(HLO_RESOURCE_EXHAUSTED, "out of memory");
  for (uint32_t i = 0; !st && i < f->num_args; i++) {
    const hlo_buffer_view *v = &in->views[i];
    types[i] = v->rank == HLO_RANK_TOKEN ? type_token(&c->arena)
               : type_tensor(&c->arena, v->dtype, (uint32_t)v->rank, v->dims);
    if (!types[i]) st = status_new(HLO_RESOURCE_EXHAUSTED, "out of memory");
  }
  if (!st) st = pass_refine_shapes(c, f->name, types, f->num_args);
  if (st) status_note(st, "--pad-to-bucket: while checking the program at the unpadded sizes");
  free(types);
  module_free(c);
  return st;
}

/* Decides whether the inputs may be padded: gives each padded argument its
 * row class (one per real row count), checks the program at the unpadded
 * sizes, then runs the row-locality analysis. An error names the first op
 * that mixes rows. */
static hlo_status pad_check(hlo_module_ir *mir, const hlo_func *f, const run_inputs *in,
                            pad_plan *pp) {
  pp->n = (int)f->num_args;
  pp->nres = (int)f->num_results;
  pp->cls = calloc(f->num_args + 1, sizeof *pp->cls);
  pp->cls_rows = calloc(f->num_args + 1, sizeof *pp->cls_rows);
  pp->cls_bucket = calloc(f->num_args + 1, sizeof *pp->cls_bucket);
  pp->cls_arg = calloc(f->num_args + 1, sizeof *pp->cls_arg);
  pp->kinds = calloc(f->num_results + 1, sizeof *pp->kinds);
  pp->result_cls = calloc(f->num_results + 1, sizeof *pp->result_cls);
  if (!pp->cls || !pp->cls_rows || !pp->cls_bucket || !pp->cls_arg || !pp->kinds ||
      !pp->result_cls)
    return status_new(HLO_RESOURCE_EXHAUSTED, "out of memory");
  for (uint32_t i = 0; i < f->num_args; i++) {
    pp->cls[i] = -1;
    const hlo_buffer_view *v = &in->views[i];
    if (!dyn_leading(f->body.block.args[i].type) || v->rank < 1) continue;
    int k = 0;
    while (k < pp->ncls && pp->cls_rows[k] != v->dims[0]) k++;
    if (k == pp->ncls) {
      pp->cls_rows[k] = v->dims[0];
      pp->cls_arg[k] = (int)i;
      pp->ncls++;
    }
    pp->cls[i] = k;
  }
  if (!pp->ncls)
    return status_at(HLO_INVALID_ARGUMENT, &f->loc,
                     "--pad-to-bucket: no argument of @%s has a dynamic leading dimension "
                     "(tensor<?x...>): there is nothing to pad", f->name);
  HLO_TRY(check_unpadded_shapes(mir, f, in));
  row_locality rl = {.kinds = pp->kinds, .result_class = pp->result_cls};
  if (!row_locality_analyse(mir, f, pp->cls, true, &rl))
    return status_new(HLO_RESOURCE_EXHAUSTED, "out of memory");
  if (rl.ok) return NULL;
  int arg = rl.cls >= 0 && rl.cls < pp->ncls ? pp->cls_arg[rl.cls] : pp->cls_arg[0];
  if (rl.op) {
    const char *name = op_name(rl.op->opcode), *dot = strchr(name, '.');
    const hlo_loc *l = &rl.op->loc;
    return status_at(HLO_INVALID_ARGUMENT, l, "--pad-to-bucket: padding argument %d's rows "
                     "would change the results: the %s at %s:%u:%u %s", arg, dot ? dot + 1 : name,
                     l->src && l->src->name ? l->src->name : "<input>", l->line, l->col, rl.why);
  }
  return status_at(HLO_INVALID_ARGUMENT, &f->loc, "--pad-to-bucket: padding argument %d's rows "
                   "would change the results: result %d of @%s %s", arg, rl.result, f->name,
                   rl.why);
}

/* Pads the leading dimension of every input of `f` declared `tensor<?x...>`
 * with zero rows to its bucket, pointing in->views at the padded copies
 * (owned by pp), and prints each argument's padding to stderr. */
static hlo_status pad_inputs(const hlo_func *f, const run_opts *ro, run_inputs *in, pad_plan *pp,
                             const char *label) {
  pp->data = calloc(f->num_args + 1, sizeof *pp->data);
  pp->dims = calloc(f->num_args + 1, sizeof *pp->dims);
  if (!pp->data || !pp->dims) return status_new(HLO_RESOURCE_EXHAUSTED, "out of memory");
  for (uint32_t i = 0; i < f->num_args; i++) {
    if (pp->cls[i] < 0) continue;
    hlo_buffer_view *v = &in->views[i];
    int64_t rows = v->dims[0], b = bucket_of(ro, rows);
    if (b < 0)
      return status_at(HLO_INVALID_ARGUMENT, &f->body.block.args[i].loc,
                       "--pad-to-bucket: argument %u of @%s has %lld rows, more than the largest "
                       "bucket (%lld)", i, f->name, (long long)rows,
                       (long long)(ro->num_buckets ? ro->buckets[ro->num_buckets - 1] : rows));
    size_t row_bytes = hlo_dtype_size(v->dtype);
    for (int d = 1; d < v->rank; d++) {
      if (v->dims[d] && row_bytes > SIZE_MAX / (size_t)v->dims[d])
        return status_new(HLO_RESOURCE_EXHAUSTED, "--pad-to-bucket: argument %u is too large", i);
      row_bytes *= (size_t)v->dims[d];
    }
    if (row_bytes && (size_t)b > SIZE_MAX / row_bytes)
      return status_new(HLO_RESOURCE_EXHAUSTED, "--pad-to-bucket: argument %u padded to %lld rows "
                        "is too large", i, (long long)b);
    pp->data[i] = calloc((size_t)b * row_bytes + 1, 1);
    pp->dims[i] = malloc((size_t)v->rank * sizeof(int64_t));
    if (!pp->data[i] || !pp->dims[i])
      return status_new(HLO_RESOURCE_EXHAUSTED, "out of memory padding argument %u to %lld rows",
                        i, (long long)b);
    if (rows) memcpy(pp->data[i], v->data, (size_t)rows * row_bytes);
    memcpy(pp->dims[i], v->dims, (size_t)v->rank * sizeof(int64_t));
    pp->dims[i][0] = b;
    v->data = pp->data[i];
    v->dims = pp->dims[i];
    pp->cls_bucket[pp->cls[i]] = b;
    if (b == rows)
      fprintf(stderr, "%sargument %u: %lld rows, a bucket already (no padding)\n", label, i,
              (long long)rows);
    else
      fprintf(stderr, "%sargument %u: %lld rows padded to %lld (%.0f%% of the run's rows are "
              "padding)\n", label, i, (long long)rows, (long long)b,
              100.0 * (double)(b - rows) / (double)b);
  }
  return NULL;
}

/* The MLIR type text of a view ("tensor<37x4xf32>"). */
static void view_type_text(char *buf, size_t n, hlo_dtype dt, int rank, const int64_t *dims) {
  size_t k = (size_t)snprintf(buf, n, "tensor<");
  for (int d = 0; d < rank && k < n; d++)
    k += (size_t)snprintf(buf + k, n - k, "%lldx", (long long)dims[d]);
  if (k < n) snprintf(buf + k, n - k, "%s>", hlo_dtype_name(dt));
}

/* A copy of the first `rows` rows of `b` as a result buffer of its own
 * (made by running an identity program on the interpreter: the public API
 * has no buffer constructor). */
static hlo_status cut_rows(const hlo_buffer *b, int64_t rows, hlo_buffer **out) {
  int64_t dims[HLO_MAX_RANK];
  int rank = hlo_buffer_rank(b);
  memcpy(dims, hlo_buffer_dims(b), (size_t)rank * sizeof(int64_t));
  dims[0] = rows;
  char ty[1024], text[3300];
  view_type_text(ty, sizeof ty, hlo_buffer_dtype(b), rank, dims);
  snprintf(text, sizeof text, "func.func @main(%%a: %s) -> %s {\n  return %%a : %s\n}\n", ty, ty,
           ty);
  hlo_buffer_view v = {hlo_buffer_dtype(b), rank, dims, (void *)hlo_buffer_data(b)};
  hlo_module *m = NULL;
  hlo_executable *e = NULL;
  hlo_buffer **res = NULL;
  hlo_status st = hlo_module_parse("--pad-to-bucket", text, strlen(text), &m);
  if (!st) st = hlo_executable_create(m, NULL, HLO_BACKEND_INTERP, &e);
  if (!st) st = hlo_executable_run(e, &v, 1, &res);
  if (!st) { *out = res[0]; free(res); }
  hlo_executable_destroy(e);
  hlo_module_destroy(m);
  return st;
}

/* Cuts each result the analysis found row-aligned on its leading dimension
 * back from its class's bucket to the class's real rows. */
static hlo_status cut_results(const pad_plan *pp, hlo_buffer **res, int nres, const char *label) {
  for (int k = 0; k < nres && k < pp->nres; k++) {
    if (pp->kinds[k] != RL_RESULT_ROWS) continue;
    int c = pp->result_cls[k];
    if (c < 0 || c >= pp->ncls || hlo_buffer_rank(res[k]) < 1) continue;
    int64_t rows = pp->cls_rows[c], b = hlo_buffer_dims(res[k])[0];
    if (b == rows) continue;
    if (b != pp->cls_bucket[c])
      return status_new(HLO_INTERNAL, "--pad-to-bucket: result %d has %lld rows, not the bucket "
                        "%lld", k, (long long)b, (long long)pp->cls_bucket[c]);
    hlo_buffer *cut = NULL;
    HLO_RETURN_IF_ERROR(cut_rows(res[k], rows, &cut), "while cutting result %d back to %lld rows",
                        k, (long long)rows);
    hlo_buffer_destroy(res[k]);
    res[k] = cut;
    fprintf(stderr, "%sresult %d: cut back from %lld to %lld rows\n", label, k, (long long)b,
            (long long)rows);
  }
  return NULL;
}

/* Prints what the CPU backend made of e's program (stderr). */
static bool print_cpu_stats(const hlo_executable *e, const char *label) {
  const runtime_cpu_stats *cs = runtime_executable_cpu_stats(e);
  if (!cs) return false;
  fprintf(stderr, "%scpu: %u ops -> %u kernels, %u BLAS calls, %u control steps, %u interpreter "
          "thunks, %u constants; compile %.1f ms%s%s\n", label, cs->ops, cs->kernels, cs->blas,
          cs->control, cs->interp, cs->constants, cs->compile_ms,
          cs->interp_ops[0] ? "; interpreter: " : "", cs->interp_ops);
  return true;
}

/* Whether `s` says the C compiler could not be started (HLO_UNAVAILABLE
 * "no C compiler ..."): the default backend then falls back to the
 * interpreter. */
static bool no_compiler(hlo_status s) {
  return s && hlo_status_code_of(s) == HLO_UNAVAILABLE &&
         !strncmp(hlo_status_message(s), "no C compiler", 13);
}

/* Runs the entry function of one module on the inputs `ro` names. */
static hlo_status run_module(hlo_module *m, const run_opts *ro, const char *label) {
  hlo_executable *e;
  interp_options io = {ro->probe_dir, stdout};
  hlo_compile_options co = {.backend = ro->backend, .passes = ro->passes,
                            .dump_dir = ro->dump_dir, .check = ro->check,
                            .no_tiering = ro->no_tiering};
  cli_cache_apply(&ro->cache, &co);
  hlo_status cst = runtime_executable_create_on(m, ro->entry, &co, &io, &e);
  if (!ro->backend_given && no_compiler(cst)) {
    /* the default backend needs a C compiler: without one, interpret */
    fprintf(stderr, "%shlo run: %s; running on the interpreter (--backend interp)\n", label,
            hlo_status_message(cst));
    hlo_status_free(cst);
    co.backend = HLO_BACKEND_INTERP;
    cst = runtime_executable_create_on(m, ro->entry, &co, &io, &e);
  }
  HLO_TRY(cst);
  const pass_report *rep = runtime_executable_pass_report(e);
  if ((ro->passes || ro->dump_dir) && rep && rep->n && !ro->quiet) pass_report_print(rep, stderr);
  if (ro->passes && !ro->quiet && !strcmp(runtime_executable_cache_result(e, NULL), "hit"))
    fprintf(stderr, "%spasses: none ran; the optimised program came from the compilation cache "
            "(--no-cache to run them)\n", label);
  const hlo_func *f = runtime_executable_entry(e);
  /* the statistics of what the compile made: after the run when the native
   * code is made in the background (they would wait for it) */
  bool stats = ro->backend_given && !ro->quiet;
  bool pending = !strcmp(runtime_executable_tier(e), "pending");
  bool had_stats = stats && !pending && print_cpu_stats(e, label);
  hlo_status st = cli_check_input_count(f, &ro->in);
  run_inputs in = {0};
  if (!st) st = cli_load_inputs(f, &ro->in, &in);
  pad_plan pp = {0};
  if (!st && ro->pad) st = pad_check(runtime_module_ir(m), f, &in, &pp);
  if (!st && ro->pad) st = pad_inputs(f, ro, &in, &pp, label);
  hlo_buffer **res = NULL;
  int nres = hlo_executable_num_results(e);
  double t0 = now_seconds();
  if (!st) st = hlo_executable_run(e, in.views, (int)f->num_args, &res);
  double secs = now_seconds() - t0;
  const char *tier = runtime_executable_last_run_tier(e);
  bool interpreted = pending && tier && !strcmp(tier, "interp");
  if (!st && (had_stats || (stats && pending)))
    fprintf(stderr, "%scpu: run %.3f ms%s\n", label, secs * 1e3,
            interpreted ? " (on the interpreter: the native code was not ready)" : "");
  if (!st && ro->pad) st = cut_results(&pp, res, nres, label);
  if (!st) st = report_results(f, ro, label, res, nres, secs);
  /* a tiered compile's native code: its error fails the command, and the
   * cache gets its entry before the process ends */
  hlo_status wst = hlo_executable_wait(e);
  /* the default backend's C compiler could not be started after all (the
   * compile's check passes a script whose interpreter is missing): as when
   * the compile says so, the interpreter stands in — for the results
   * already reported (they came from it), or for a run that waited for the
   * native code (run again on the interpreter) */
  bool rerun = false;
  if (!ro->backend_given && no_compiler(wst)) {
    fprintf(stderr, "%shlo run: %s; %s\n", label, hlo_status_message(wst),
            st ? "running on the interpreter (--backend interp)"
               : "the results came from the interpreter (--backend interp)");
    rerun = no_compiler(st);
    hlo_status_free(wst);
    wst = NULL;
  }
  if (!st) st = wst;
  else hlo_status_free(wst);
  if (!st && stats && pending) print_cpu_stats(e, label);
  for (int k = 0; res && k < nres; k++) hlo_buffer_destroy(res[k]);
  free(res);
  cli_free_inputs(&in);
  pad_plan_free(&pp);
  hlo_executable_destroy(e);
  if (rerun) {
    hlo_status_free(st);
    run_opts ri = *ro;
    ri.backend = HLO_BACKEND_INTERP;
    ri.backend_given = true;
    return run_module(m, &ri, label);
  }
  return st;
}

int cmd_run(int argc, char **argv) {
  static run_opts ro;
  memset(&ro, 0, sizeof ro);
  ro.backend = HLO_BACKEND_CPU;
  bool split = false;
  const char *file = NULL;
  for (int i = 0; i < argc; i++) {
    const char *a = argv[i];
    bool has_val = i + 1 < argc;
    int cf = cli_cache_flag("run", argc, argv, &i, &ro.cache);
    if (cf < 0) return 2;
    if (cf > 0) continue;
    if (cli_is_flag(a, "--help") || cli_is_flag(a, "-h")) { fputs(usage_run, stdout); return 0; }
    else if (cli_is_flag(a, "--split-input-file")) split = true;
    else if (cli_is_flag(a, "--pad-to-bucket")) {
      ro.pad = true;
      ro.num_buckets = 0;
      if (has_val && is_bucket_list(argv[i + 1]) && !parse_buckets(argv[++i], &ro)) return 2;
    }
    else if (cli_is_flag(a, "--quiet") || cli_is_flag(a, "-q")) ro.quiet = true;
    else if ((cli_is_flag(a, "--input") || cli_is_flag(a, "-i")) && has_val) {
      if (ro.in.n == CLI_MAX_INPUTS) { fprintf(stderr, "hlo run: too many inputs\n"); return 2; }
      ro.in.inputs[ro.in.n++] = argv[++i];
    } else if (cli_is_flag(a, "--arg") && has_val) {
      if (ro.in.n == CLI_MAX_INPUTS) { fprintf(stderr, "hlo run: too many inputs\n"); return 2; }
      ro.in.is_literal[ro.in.n] = true;
      ro.in.inputs[ro.in.n++] = argv[++i];
    } else if (cli_is_flag(a, "--print-results")) ro.print_results = true;
    else if (cli_is_flag(a, "--verify-diagnostics")) ro.verify_diagnostics = true;
    else if (cli_is_flag(a, "--output-dir") && has_val) ro.output_dir = argv[++i];
    else if (cli_is_flag(a, "--entry") && has_val) ro.entry = argv[++i];
    else if (cli_is_flag(a, "--probe-dir") && has_val) ro.probe_dir = argv[++i];
    else if (cli_is_flag(a, "--passes") && has_val) ro.passes = argv[++i];
    else if (cli_is_flag(a, "--check")) ro.check = true;
    else if (cli_is_flag(a, "--no-tiering")) ro.no_tiering = true;
    else if (cli_is_flag(a, "--dump-to") && has_val) ro.dump_dir = argv[++i];
    else if (cli_is_flag(a, "--backend") && has_val) {
      ++i;
      ro.backend_given = true;
      if (!cli_parse_backend("run", argv[i], &ro.backend)) return 2;
    } else if (a[0] == '-' && a[1]) {
      fprintf(stderr, "hlo run: unknown flag or missing value '%s'\n%s", a, usage_run);
      return 2;
    } else if (!file) file = a;
    else { fprintf(stderr, "hlo run: more than one FILE ('%s')\n%s", a, usage_run); return 2; }
  }
  if (!file) { fprintf(stderr, "hlo run: missing FILE\n%s", usage_run); return 2; }
  if (ro.check && ro.backend == HLO_BACKEND_INTERP) ro.backend = HLO_BACKEND_CPU;
  if (ro.dump_dir && !ro.passes && ro.backend == HLO_BACKEND_INTERP) ro.passes = "default";
  if (ro.passes && strcmp(ro.passes, "default") && strcmp(ro.passes, "cpu") &&
      strcmp(ro.passes, "cuda") && strcmp(ro.passes, "none")) {
    hlo_status pst = pass_pipeline_check(ro.passes);
    if (pst) {
      hlo_status_print(pst, stderr);
      hlo_status_free(pst);
      return 2;
    }
  }
  module_piece *mp;
  size_t n;
  hlo_status st = cli_load_pieces(file, split, true, &mp, &n);
  if (st) return cli_report(st);
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
    /* with several modules, each module's dumps go to DIR/module-K (K from 1) */
    const char *dump_base = ro.dump_dir;
    char dump_sub[4096];
    if (split && dump_base) {
      snprintf(dump_sub, sizeof dump_sub, "%s/module-%zu", dump_base, i + 1);
      ro.dump_dir = dump_sub;
    }
    if (!st) st = run_module(mp[i].m, &ro, label);
    ro.dump_dir = dump_base;
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
  cli_free_pieces(mp, n);
  return failed ? 1 : 0;
}
