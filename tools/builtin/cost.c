/* cost.c — `hlo cost`: FLOPs, transcendentals and bytes accessed of a
 * program, per op and in total, counted as XLA's cost_analysis() counts them
 * (src/passes/cost_analysis.c). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "builtin.h"
#include "ir/ir.h"
#include "parse/parse.h"
#include "passes/cost_analysis.h"
#include "passes/passes.h"
#include "runtime/runtime.h"

static const char *const usage_cost =
    "usage: hlo cost FILE [--entry NAME] [--json] [--all]\n"
    "\n"
    "Counts the FLOPs, transcendentals and bytes accessed of FILE's entry function the\n"
    "way XLA's cost_analysis() counts them (with XLA:CPU's own rewrites: logistic as\n"
    "1/(1+exp(-x)), long reductions as trees, while bodies once; custom calls -1).\n"
    "XLA counts its optimised, fused program; hlo counts the program as written, so\n"
    "bytes accessed agree only on a fused program (e.g. a --dump-to file after the\n"
    "fusion pass). Prints one line per op kind (count,\n"
    "flops, transcendentals, bytes) and a TOTAL line. A program with dynamic shapes\n"
    "is counted as declared (its shapes must then be static).\n"
    "\n"
    "  --entry NAME  the function to count (default: main)\n"
    "  --json        one JSON object: totals and a row per op, with its location\n"
    "  --all         with --json: also the rows that cost nothing\n";

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

int cmd_cost(int argc, char **argv) {
  const char *path = NULL, *entry = NULL;
  bool json = false, all = false;
  for (int i = 0; i < argc; i++) {
    if (cli_is_flag(argv[i], "--help") || cli_is_flag(argv[i], "-h")) { fputs(usage_cost, stdout); return 0; }
    else if (cli_is_flag(argv[i], "--entry")) {
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
  if (!st && module_needs_refinement(m, entry)) {
    const hlo_func *f = module_entry(m, entry);
    uint32_t n = f ? f->num_args : 0;
    hlo_type **types = calloc(n ? n : 1, sizeof *types);
    st = types ? pass_refine_shapes(m, entry, types, n)
               : status_new(HLO_RESOURCE_EXHAUSTED, "out of memory");
    free(types);
    if (!st) st = module_verify(m);
  }
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
