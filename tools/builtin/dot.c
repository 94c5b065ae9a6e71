/* dot.c — `hlo dot`: the entry function after the backend's pass pipeline,
 * as a Graphviz DOT graph. Every `hlo.fusion` is a cluster (subgraph
 * cluster_N, labelled with its kind and name) holding the ops of its body;
 * the other top-level ops are one node each (an op with regions, such as a
 * while or a reduce, is one node: its bodies are not drawn, but the outer
 * values they read are, as dashed edges). Edges go from the op that defines
 * a value to the ops that use it, through fusion boundaries: a fusion body's
 * argument stands for the fusion's operand, a fusion's result for what its
 * body returns. Parameters and results are nodes of their own.
 *
 * The pipeline runs on the interpreter backend (the graph is the same, and
 * no C compiler is needed): `--backend cpu` only chooses the cpu pipeline
 * (PASS_PIPELINE_CPU), `--backend cuda` the cuda one (PASS_PIPELINE_CUDA). */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "builtin.h"
#include "hlo/bench.h"
#include "hlo/hlo.h"
#include "ir/ir.h"
#include "ir/print.h"
#include "runtime/runtime.h"
#include "support/status.h"
#include "support/strbuf.h"

static const char *const usage_dot =
    "usage: hlo dot FILE [--backend cpu|cuda|interp] [--passes LIST] [--entry NAME] [-o OUT.dot]\n"
    "\n"
    "Prints the entry function (@main, or the only function) of FILE, after the\n"
    "backend's pass pipeline, as a Graphviz DOT graph: each hlo.fusion a cluster\n"
    "labelled with its kind (loop, input, output) and name, holding its ops; every\n"
    "other op one node (op name, result type, source line; the bodies of while,\n"
    "reduce, ... are not drawn); edges from the op that defines a value to its uses;\n"
    "parameters and results as nodes of their own. Render it with\n"
    "`dot -Tsvg OUT.dot -o OUT.svg` (package graphviz).\n"
    "\n"
    "  --backend cpu      the cpu pipeline, with fusions (the default)\n"
    "  --backend cuda     the cuda pipeline (cpu, with small dots made reductions)\n"
    "  --backend interp   the interpreter's pipeline (none: the program as written)\n"
    "  --passes LIST      this pipeline instead (see hlo run --help)\n"
    "  --entry NAME       draw function @NAME instead of @main\n"
    "  -o OUT.dot         write the graph to OUT.dot instead of standard output\n";

/* Fill colours of the clusters, by fusion kind. */
static const char *kind_color(const char *kind) {
  if (!strcmp(kind, "loop")) return "#e8f0fe";
  if (!strcmp(kind, "input")) return "#e6f4ea";
  if (!strcmp(kind, "row")) return "#fef7e0";
  if (!strcmp(kind, "output")) return "#fce8e6";
  return "#f1f3f4";
}

typedef struct dot_ctx {
  FILE *o;
  uint32_t num_values;
  int64_t *val_node;  /* per value id: the node drawing it; -1: none (yet) */
  uint32_t next_node;
  uint32_t *stamp;    /* per node: the last node an edge from it went to, + 1 */
  uint32_t stamp_cap;
  uint32_t clusters;
  strbuf edges;       /* printed after every node, outside the clusters */
  strbuf label;       /* scratch */
} dot_ctx;

/* `s` inside a DOT double-quoted string: quotes and backslashes escaped,
 * newlines as DOT's centred line break `\n`, other control characters
 * dropped. */
static void put_escaped(FILE *o, const char *s) {
  for (; *s; s++) {
    if (*s == '\n') fputs("\\n", o);
    else if (*s == '"' || *s == '\\') fprintf(o, "\\%c", *s);
    else if ((unsigned char)*s >= 0x20) fputc(*s, o);
  }
}

/* The node drawing value `v`, or -1 (a value of a body not drawn). */
static int64_t source_of(const dot_ctx *c, const hlo_value *v) {
  return v->id < c->num_values ? c->val_node[v->id] : -1;
}

/* Sets the node drawing `v`. */
static hlo_status set_source(dot_ctx *c, const hlo_value *v, int64_t node) {
  if (v->id >= c->num_values)
    return status_at(HLO_INTERNAL, &v->loc, "hlo dot: value id %u out of range (%u values)",
                     v->id, c->num_values);
  c->val_node[v->id] = node;
  return NULL;
}

/* A new node number. */
static hlo_status new_node(dot_ctx *c, uint32_t *out) {
  if (c->next_node == c->stamp_cap) {
    uint32_t cap = c->stamp_cap ? c->stamp_cap * 2 : 256;
    uint32_t *s = realloc(c->stamp, cap * sizeof *s);
    if (!s) return status_new(HLO_RESOURCE_EXHAUSTED, "out of memory");
    memset(s + c->stamp_cap, 0, (cap - c->stamp_cap) * sizeof *s);
    c->stamp = s;
    c->stamp_cap = cap;
  }
  *out = c->next_node++;
  return NULL;
}

/* An edge from node `from` to node `to` (once per pair in a row; `dashed`
 * for a value a nested body reads). */
static void add_edge(dot_ctx *c, int64_t from, uint32_t to, bool dashed) {
  if (from < 0 || c->stamp[from] == to + 1) return;
  c->stamp[from] = to + 1;
  sb_printf(&c->edges, "  n%lld -> n%u%s;\n", (long long)from, to,
            dashed ? " [style=dashed]" : "");
}

/* Dashed edges to `to` from every value defined outside op `top` that an op
 * of `b` (nested regions included) reads. */
static void captured_edges(dot_ctx *c, const hlo_block *b, uint32_t to, int depth) {
  if (depth > 64) return;
  for (const hlo_op *op = b->first; op; op = op->next) {
    for (uint32_t i = 0; i < op->num_operands; i++)
      add_edge(c, source_of(c, op->operands[i]), to, true);
    for (uint32_t r = 0; r < op->num_regions; r++)
      captured_edges(c, &op->regions[r].block, to, depth + 1);
  }
}

/* The label of an op's node: its name without `stablehlo.`, a detail
 * (custom_call target, callee, comparison, a scalar constant's value), the
 * result type(s) and the source line. */
static const char *op_label(dot_ctx *c, const hlo_op *op) {
  strbuf *b = &c->label;
  sb_free(b);
  const char *name = op_name(op->opcode);
  if (!name) name = "?";
  if (!strncmp(name, "stablehlo.", 10)) name += 10;
  sb_puts(b, name);
  const hlo_attr *a;
  if (op->opcode == OP_CUSTOM_CALL && (a = op_attr(op, "call_target_name")) &&
      a->kind == ATTR_STRING)
    sb_printf(b, " %.*s", (int)(a->u.str.len > 40 ? 40 : a->u.str.len), a->u.str.s);
  else if (op->opcode == OP_FUNC_CALL && (a = op_attr(op, "callee")) && a->kind == ATTR_SYMBOL)
    sb_printf(b, " @%.*s", (int)(a->u.str.len > 40 ? 40 : a->u.str.len), a->u.str.s);
  else if (op->opcode == OP_COMPARE && (a = op_attr(op, "comparison_direction")) &&
           a->kind == ATTR_ENUM && a->u.en.value)
    sb_printf(b, " %s", a->u.en.value);
  else if (op->opcode == OP_CONSTANT && (a = op_attr(op, "value")) && a->kind == ATTR_DENSE &&
           !a->u.dense.resource && (a->u.dense.splat || a->u.dense.num_elems == 1)) {
    size_t at = b->len;
    sb_putc(b, ' ');
    print_dense_body(b, a);
    if (b->len - at > 32 && !b->oom) { b->len = at + 29; sb_puts(b, "..."); }
  }
  for (uint32_t r = 0; r < op->num_results && r < 2; r++) {
    sb_puts(b, r ? ", " : "\n");
    print_type(b, op->results[r].type);
  }
  if (op->num_results > 2) sb_printf(b, " +%u more", op->num_results - 2);
  if (op->loc.line) sb_printf(b, "\nline %u", op->loc.line);
  return b->oom ? name : sb_cstr(b);
}

/* Node attributes that set an op apart: constants small, library calls
 * (dot_general, convolution) bold, ops with bodies doubled. */
static const char *op_style(const hlo_op *op) {
  switch (op->opcode) {
  case OP_CONSTANT: case OP_IOTA:
    return ", fontsize=7, style=\"rounded,dashed,filled\"";
  case OP_DOT_GENERAL: case OP_DOT: case OP_CONVOLUTION:
    return ", style=\"bold,filled\", fillcolor=\"#fde293\"";
  default:
    return op->num_regions ? ", peripheries=2" : "";
  }
}

static hlo_status draw_block(dot_ctx *c, const hlo_block *b, int indent, bool top);

/* Draws fusion `op` as a cluster: its body's arguments stand for its
 * operands, its results for what the body returns. */
static hlo_status draw_fusion(dot_ctx *c, const hlo_op *op, int indent) {
  const hlo_block *body = &op->regions[0].block;
  if (body->num_args != op->num_operands)
    return status_at(HLO_INTERNAL, &op->loc, "hlo dot: fusion body takes %u arguments for %u "
                     "operands", body->num_args, op->num_operands);
  for (uint32_t i = 0; i < body->num_args; i++)
    HLO_TRY(set_source(c, &body->args[i], source_of(c, op->operands[i])));
  const hlo_attr *k = op_attr(op, "kind"), *nm = op_attr(op, "name");
  const char *kind = k && k->kind == ATTR_STRING ? k->u.str.s : "fusion";
  uint32_t n = c->clusters++;
  fprintf(c->o, "%*ssubgraph cluster_%u {\n", indent, "", n);
  fprintf(c->o, "%*s  label=\"", indent, "");
  put_escaped(c->o, kind);
  if (nm && nm->kind == ATTR_STRING) {
    fputc(' ', c->o);
    put_escaped(c->o, nm->u.str.s);
  }
  if (op->loc.line) fprintf(c->o, ", line %u", op->loc.line);
  fprintf(c->o, "\"; style=filled; color=\"#9aa0a6\"; fillcolor=\"%s\";\n", kind_color(kind));
  HLO_TRY(draw_block(c, body, indent + 2, false));
  fprintf(c->o, "%*s}\n", indent, "");
  const hlo_op *ret = body->last;
  if (!ret || ret->opcode != OP_RETURN || ret->num_operands != op->num_results)
    return status_at(HLO_INTERNAL, &op->loc, "hlo dot: fusion body does not return one value "
                     "per result");
  for (uint32_t r = 0; r < op->num_results; r++)
    HLO_TRY(set_source(c, &op->results[r], source_of(c, ret->operands[r])));
  return NULL;
}

/* Draws the ops of `b` (`top`: the function's body, whose terminator
 * becomes the result nodes; a fusion body's terminator is not drawn). */
static hlo_status draw_block(dot_ctx *c, const hlo_block *b, int indent, bool top) {
  for (const hlo_op *op = b->first; op; op = op->next) {
    if (op->opcode == OP_FUSION && op->num_regions == 1) {
      HLO_TRY(draw_fusion(c, op, indent));
      continue;
    }
    if (op_flags(op->opcode) & OPF_TERMINATOR && !op->next) {
      if (!top) continue;
      for (uint32_t i = 0; i < op->num_operands; i++) {
        uint32_t rn;
        HLO_TRY(new_node(c, &rn));
        fprintf(c->o, "%*sn%u [label=\"result %u\\n", indent, "", rn, i);
        sb_free(&c->label);
        print_type(&c->label, op->operands[i]->type);
        put_escaped(c->o, c->label.oom ? "?" : sb_cstr(&c->label));
        fprintf(c->o, "\", shape=house, style=filled, fillcolor=\"#d2e3fc\"];\n");
        add_edge(c, source_of(c, op->operands[i]), rn, false);
      }
      continue;
    }
    uint32_t node;
    HLO_TRY(new_node(c, &node));
    fprintf(c->o, "%*sn%u [label=\"", indent, "", node);
    put_escaped(c->o, op_label(c, op));
    fprintf(c->o, "\"%s];\n", op_style(op));
    for (uint32_t i = 0; i < op->num_operands; i++)
      add_edge(c, source_of(c, op->operands[i]), node, false);
    for (uint32_t r = 0; r < op->num_regions; r++)
      captured_edges(c, &op->regions[r].block, node, 0);
    for (uint32_t r = 0; r < op->num_results; r++) HLO_TRY(set_source(c, &op->results[r], node));
  }
  return NULL;
}

/* Writes function `f` of an optimised module as DOT to `o`. */
static hlo_status draw_func(FILE *o, const hlo_func *f, const char *file) {
  dot_ctx c = {0};
  c.o = o;
  c.num_values = f->num_values;
  c.val_node = malloc((c.num_values ? c.num_values : 1) * sizeof *c.val_node);
  if (!c.val_node) return status_new(HLO_RESOURCE_EXHAUSTED, "out of memory");
  for (uint32_t i = 0; i < c.num_values; i++) c.val_node[i] = -1;
  sb_init(&c.edges);
  sb_init(&c.label);
  fprintf(o, "digraph \"");
  put_escaped(o, f->name);
  fprintf(o, "\" {\n  label=\"");
  put_escaped(o, file);
  fprintf(o, " @");
  put_escaped(o, f->name);
  fprintf(o, "\"; labelloc=t; fontname=\"Helvetica\"; fontsize=12;\n"
             "  rankdir=TB; nodesep=0.15; ranksep=0.3; newrank=true;\n"
             "  node [shape=box, style=\"rounded,filled\", fillcolor=white, "
             "fontname=\"Helvetica\", fontsize=9, height=0.3, margin=\"0.06,0.03\"];\n"
             "  edge [arrowsize=0.5, color=\"#5f6368\"];\n");
  hlo_status st = NULL;
  const hlo_block *body = &f->body.block;
  for (uint32_t i = 0; i < body->num_args && !st; i++) {
    uint32_t pn;
    st = new_node(&c, &pn);
    if (!st) st = set_source(&c, &body->args[i], pn);
    if (st) break;
    fprintf(o, "  n%u [label=\"parameter %u\\n", pn, i);
    sb_free(&c.label);
    print_type(&c.label, body->args[i].type);
    put_escaped(o, c.label.oom ? "?" : sb_cstr(&c.label));
    fprintf(o, "\", shape=invhouse, style=filled, fillcolor=\"#d2e3fc\"];\n");
  }
  if (!st) st = draw_block(&c, body, 2, true);
  if (!st && c.edges.oom) st = status_new(HLO_RESOURCE_EXHAUSTED, "out of memory");
  if (!st) fprintf(o, "%s}\n", sb_cstr(&c.edges));
  sb_free(&c.edges);
  sb_free(&c.label);
  free(c.val_node);
  free(c.stamp);
  return st;
}

int cmd_dot(int argc, char **argv) {
  const char *path = NULL, *entry = NULL, *out = NULL, *passes = NULL;
  hlo_backend_kind backend = HLO_BACKEND_CPU;
  for (int i = 0; i < argc; i++) {
    const char *a = argv[i];
    bool has_val = i + 1 < argc;
    if (cli_is_flag(a, "--help") || cli_is_flag(a, "-h")) { fputs(usage_dot, stdout); return 0; }
    else if (cli_is_flag(a, "--entry") && has_val) entry = argv[++i];
    else if (cli_is_flag(a, "--passes") && has_val) passes = argv[++i];
    else if ((cli_is_flag(a, "-o") || cli_is_flag(a, "--output")) && has_val) out = argv[++i];
    else if (cli_is_flag(a, "--backend") && has_val) {
      ++i;
      if (!cli_parse_backend("dot", argv[i], &backend)) return 2;
    } else if (a[0] == '-' && a[1]) {
      fprintf(stderr, "hlo dot: unknown flag or missing value '%s'\n%s", a, usage_dot);
      return 2;
    } else if (!path) path = a;
    else { fprintf(stderr, "hlo dot: more than one FILE ('%s')\n%s", a, usage_dot); return 2; }
  }
  if (!path) { fprintf(stderr, "hlo dot: missing FILE\n%s", usage_dot); return 2; }
  /* the backend's own pipeline, run for the interpreter: no C compiler needed */
  hlo_compile_options co = {.backend = HLO_BACKEND_INTERP,
                            .passes = passes                      ? passes
                                      : backend == HLO_BACKEND_CUDA ? "cuda"
                                      : backend != HLO_BACKEND_INTERP ? "cpu"
                                                                      : NULL};
  hlo_compile_times ct;
  hlo_module *m = NULL;
  hlo_executable *e = NULL;
  hlo_status st = hlo_bench_compile(path, entry, &co, &ct, &m, &e);
  const hlo_module_ir *ir = st ? NULL : runtime_executable_module_ir(e);
  const hlo_func *f = NULL;
  if (!st && !ir)
    st = status_at(HLO_UNIMPLEMENTED, &runtime_executable_entry(e)->loc,
                   "@%s has dynamic shapes, which are optimised for each input shape at run "
                   "time; hlo dot draws static programs", runtime_executable_entry(e)->name);
  if (!st) {
    f = module_entry(ir, runtime_executable_entry(e)->name);
    if (!f) st = status_new(HLO_INTERNAL, "the entry function is missing after the passes");
  }
  FILE *o = stdout;
  if (!st && out && !(o = fopen(out, "w")))
    st = status_new(HLO_UNAVAILABLE, "cannot write '%s': %s", out, strerror(errno));
  if (!st) st = draw_func(o, f, !strcmp(path, "-") ? "<stdin>" : path);
  if (o && o != stdout && fclose(o) != 0 && !st)
    st = status_new(HLO_UNAVAILABLE, "cannot write '%s': %s", out, strerror(errno));
  if (!st && o == stdout && fflush(stdout) != 0)
    st = status_new(HLO_UNAVAILABLE, "cannot write the graph: %s", strerror(errno));
  hlo_executable_destroy(e);
  hlo_module_destroy(m);
  return st ? cli_report(st) : 0;
}
