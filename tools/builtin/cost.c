/* cost.c — `hlo cost`: FLOPs, transcendentals and bytes accessed of a
 * program, per op and in total, counted as XLA's cost_analysis() counts them
 * (src/passes/cost_analysis.c). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "builtin.h"
#include "ir/ir.h"
#include "ir/print.h"
#include "parse/parse.h"
#include "passes/cost_analysis.h"
#include "passes/passes.h"
#include "runtime/runtime.h"
#include "support/strbuf.h"

static const char *const usage_cost =
    "usage: hlo cost FILE [--input A.npy | --arg LITERAL]... [--entry NAME] [--json] [--all]\n"
    "\n"
    "Counts the FLOPs, transcendentals and bytes accessed of FILE's entry function the\n"
    "way XLA's cost_analysis() counts them (with XLA:CPU's own rewrites: logistic as\n"
    "1/(1+exp(-x)), long reductions as trees, while bodies once; custom calls -1).\n"
    "XLA counts its optimised, fused program; hlo counts the program as written, so\n"
    "bytes accessed agree only on a fused program (e.g. a --dump-to file after the\n"
    "fusion pass). Prints one line per op kind (count,\n"
    "flops, transcendentals, bytes) and a TOTAL line. A program with dynamic shapes\n"
    "('?' dims) is counted for the shapes of its inputs: give one per argument, as\n"
    "`hlo run` takes them, and it is refined to their shapes first (shape assertions\n"
    "checked). Without inputs a program is counted as declared: its arguments must\n"
    "then be static.\n"
    "\n"
    "  --input A.npy  the next argument of the entry function (only its shape and\n"
    "                 type count; -i for short)\n"
    "  --arg LITERAL  the next argument as an MLIR literal, e.g.\n"
    "                 'dense<0.0> : tensor<5x3xf32>'\n"
    "  --entry NAME   the function to count (default: main)\n"
    "  --json         one JSON object: totals and a row per op, with its location\n"
    "  --all          with --json: also the rows that cost nothing\n";

typedef struct agg {
  char label[128];
  long count;
  cost_counts c;
} agg;

/* Whether row `w` only sums the rows nested under it. */
static int is_container(const cost_row *w) {
  switch (w->op->opcode) {
  case OP_FUNC_CALL: case OP_COMPOSITE: case OP_WHILE: case OP_IF: case OP_CASE:
  case OP_SDY_MANUAL_COMPUTATION: case OP_SDY_NAMED_COMPUTATION:
    return 1;
  default:
    return 0;
  }
}

/* One line per op label (header, rows, then "TOTAL - F T B"): the rows of
 * depth 0 and those inside while/if/case/call bodies that are not
 * themselves calls or control flow, so every op is counted once. */
static int by_op(const cost_report *r) {
  agg *a = calloc(r->num_rows + 1, sizeof *a);
  size_t n = 0;
  if (!a) return 1;
  for (uint32_t i = 0; i < r->num_rows; i++) {
    const cost_row *w = &r->rows[i];
    if (is_container(w)) continue;
    char label[128];
    cost_op_label(w->op, label, sizeof label);
    size_t k = 0;
    while (k < n && strcmp(a[k].label, label) != 0) k++;
    if (k == n) snprintf(a[n++].label, sizeof a[0].label, "%s", label);
    a[k].count++;
    a[k].c.flops += w->cost.flops;
    a[k].c.transcendentals += w->cost.transcendentals;
    a[k].c.bytes_accessed += w->cost.bytes_accessed;
  }
  printf("%s\n", "# op count flops transcendentals bytes_accessed");
  for (size_t k = 0; k < n; k++)
    printf("%s %ld %.17g %.17g %.17g\n", a[k].label, a[k].count, a[k].c.flops,
           a[k].c.transcendentals, a[k].c.bytes_accessed);
  printf("TOTAL - %.17g %.17g %.17g\n", r->total.flops, r->total.transcendentals,
         r->total.bytes_accessed);
  free(a);
  return 0;
}

/* The type of argument i of the entry for input view v (token views make
 * token types), in m's arena; NULL when out of memory. */
static hlo_type *view_type(hlo_module_ir *m, const hlo_buffer_view *v) {
  if (v->rank == HLO_RANK_TOKEN) return type_token(&m->arena);
  return type_tensor(&m->arena, v->dtype, (uint32_t)v->rank, v->dims);
}

/* For a static entry (which refinement does not look at): checks that input
 * view `v` has exactly the type of argument i of `f` (`hlo run` checks
 * --input files so, but not --arg literals); the error is located at the
 * argument. */
static hlo_status check_static_input(hlo_module_ir *m, const hlo_func *f, uint32_t i,
                                     const hlo_buffer_view *v) {
  const hlo_type *want = f->body.block.args[i].type;
  hlo_type *got = view_type(m, v);
  if (!got) return status_new(HLO_RESOURCE_EXHAUSTED, "out of memory");
  if (type_equal(got, want)) return NULL;
  strbuf a, b;
  sb_init(&a);
  sb_init(&b);
  print_type(&a, want);
  print_type(&b, got);
  hlo_status st = status_at(HLO_INVALID_ARGUMENT, &f->body.block.args[i].loc,
                            "argument %u of @%s is %s; the input is %s", i, f->name, sb_cstr(&a),
                            sb_cstr(&b));
  sb_free(&a);
  sb_free(&b);
  return st;
}

/* Specializes the entry function `entry` of `m` (verified) to the shapes of
 * the inputs `list`, in place, the way the runtime does before running a
 * dynamic program (src/runtime/api.c, spec_create): the inputs are read and
 * checked as `hlo run` checks them (count, element type, rank, static dims),
 * the shapes refined (pass_refine_shapes: calls inlined, shape arithmetic
 * folded, JAX's shape assertions evaluated) and the result verified again.
 * The module is parsed once and refined in place: unlike the runtime's,
 * nothing needs the declared program afterwards. Without inputs the
 * declared types are kept (a dynamic result type is refined from static
 * arguments); a dynamic argument is then an error asking for the inputs. */
static hlo_status refine_to_inputs(hlo_module_ir *m, const char *entry,
                                   const cli_input_list *list) {
  const hlo_func *f = module_entry(m, entry);
  if (!f) return status_new(HLO_NOT_FOUND, "no function @%s to count", entry ? entry : "main");
  bool dynamic = module_needs_refinement(m, entry);
  for (uint32_t i = 0; dynamic && list->n == 0 && i < f->num_args; i++) {
    const hlo_type *t = f->body.block.args[i].type;
    if (t->kind != TYPE_TENSOR || type_is_static(t)) continue;
    strbuf ty;
    sb_init(&ty);
    print_type(&ty, t);
    uint32_t nval = cli_num_value_args(f);
    hlo_status st = status_at(
        HLO_INVALID_ARGUMENT, &f->body.block.args[i].loc,
        "argument %u of @%s is %s: a program with dynamic shapes is counted for the shapes of "
        "its inputs; give its %u input%s with --input FILE.npy or --arg LITERAL, as to `hlo run`",
        i, f->name, sb_cstr(&ty), nval, nval == 1 ? "" : "s");
    sb_free(&ty);
    return st;
  }
  run_inputs in = {0};
  hlo_status st = NULL;
  if (list->n > 0) {
    st = cli_check_input_count(f, list);
    if (!st) st = cli_load_inputs(f, list, &in);
  }
  for (uint32_t i = 0; !st && !dynamic && list->n > 0 && i < f->num_args; i++)
    st = check_static_input(m, f, i, &in.views[i]);
  hlo_type **types = NULL;
  if (!st && dynamic) {
    types = calloc(f->num_args ? f->num_args : 1, sizeof *types);
    if (!types) st = status_new(HLO_RESOURCE_EXHAUSTED, "out of memory");
    for (uint32_t i = 0; i < f->num_args && !st && list->n > 0; i++)
      if (!(types[i] = view_type(m, &in.views[i])))
        st = status_new(HLO_RESOURCE_EXHAUSTED, "out of memory");
    char name[256];
    snprintf(name, sizeof name, "%s", f->name); /* the pass replaces f */
    if (!st) st = pass_refine_shapes(m, entry, types, f->num_args);
    if (!st) {
      st = module_verify(m);
      if (st && list->n > 0)
        status_note(st, "after refining the shapes of @%s for the shapes of these inputs", name);
    }
  }
  free(types);
  cli_free_inputs(&in);
  return st;
}

int cmd_cost(int argc, char **argv) {
  const char *path = NULL, *entry = NULL;
  bool json = false, all = false;
  static cli_input_list inputs; /* large: not on the stack */
  memset(&inputs, 0, sizeof inputs);
  for (int i = 0; i < argc; i++) {
    if (cli_is_flag(argv[i], "--help") || cli_is_flag(argv[i], "-h")) { fputs(usage_cost, stdout); return 0; }
    else if (cli_is_flag(argv[i], "--input") || cli_is_flag(argv[i], "-i") ||
             cli_is_flag(argv[i], "--arg")) {
      if (i + 1 >= argc) { fprintf(stderr, "hlo cost: %s needs a value\n%s", argv[i], usage_cost); return 2; }
      if (inputs.n == CLI_MAX_INPUTS) { fprintf(stderr, "hlo cost: too many inputs\n"); return 2; }
      inputs.is_literal[inputs.n] = cli_is_flag(argv[i], "--arg");
      inputs.inputs[inputs.n++] = argv[++i];
    } else if (cli_is_flag(argv[i], "--entry")) {
      if (i + 1 >= argc) { fprintf(stderr, "hlo cost: --entry needs a value\n%s", usage_cost); return 2; }
      entry = argv[++i];
    } else if (cli_is_flag(argv[i], "--json")) json = true;
    else if (cli_is_flag(argv[i], "--all")) all = true;
    else if (argv[i][0] == '-' && argv[i][1]) {
      fprintf(stderr, "hlo cost: unknown flag '%s'\n%s", argv[i], usage_cost);
      return 2;
    } else if (!path) path = argv[i];
    else { fprintf(stderr, "hlo cost: more than one FILE\n%s", usage_cost); return 2; }
  }
  if (!path) { fprintf(stderr, "hlo cost: missing FILE\n%s", usage_cost); return 2; }
  char *text = NULL;
  size_t len = 0;
  hlo_module_ir *m = NULL;
  cost_report r = {0};
  hlo_status st = runtime_read_file(path, &text, &len);
  hlo_source src = {path, text, len, 1};
  if (!st) st = parse_module(&src, 0, len, &m);
  if (!st) st = module_verify(m);
  if (!st) st = refine_to_inputs(m, entry, &inputs);
  if (!st) st = pass_chlo_legalize(m);
  if (!st) st = cost_analysis(m, entry, &r);
  int rc = 0;
  if (st) {
    rc = cli_report(st);
  } else if (!json) {
    rc = by_op(&r);
  } else {
    st = cost_report_write_json(&r, !all, stdout);
    if (st) rc = cli_report(st);
  }
  cost_report_free(&r);
  module_free(m);
  free(text);
  return rc;
}
