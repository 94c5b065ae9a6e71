/* print.c — the module printer: MLIR text the way JAX and stablehlo-opt
 * print it, which the parser (src/parse) reads back to an equal module.
 *
 * Layout follows MLIR's AsmPrinter: two spaces per nesting level. Value
 * names follow its SSANameState (mlir/lib/IR/AsmPrinter.cpp), assigned up
 * front per function by name_region: a region's block arguments (`%argN`,
 * stablehlo.while's `%iterArg`, chlo.scan's `%input`/`%carry`) and op
 * results (`%0, %1, ...`, `%0:2` used as `%0#1`; constants `%cst` / `%c`;
 * chlo.top_k `%values, %indices`) first, then each nested region starting
 * from the counters as they stand after the whole enclosing region, so
 * sibling regions reuse numbers; `_N` de-duplication suffixes come from one
 * counter shared by all names. Ops print in their pretty form where
 * print_ops.c has one, else in MLIR's generic form
 * `"dialect.op"(operands) <{inherent}> ({regions}) {discardable} : type`. */
#include "ir/print_internal.h"

#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

/* --------------------------------------------------------------- names */

static uint32_t hash_ptr(const void *v, uint32_t cap) {
  uintptr_t x = (uintptr_t)v;
  x ^= x >> 17;
  x *= (uintptr_t)0x9E3779B97F4A7C15ull;
  x ^= x >> 29;
  return (uint32_t)x & (cap - 1);
}

/* Doubles the value-name hash table (rehashing); false on out of memory. */
static bool map_grow(printer *p) {
  uint32_t ncap = p->cap ? p->cap * 2 : 256;
  const hlo_value **nk = xcalloc(ncap, sizeof *nk);
  const char **nn = xcalloc(ncap, sizeof *nn);
  if (!nk || !nn) { free(nk); free(nn); p->fail = true; return false; }
  for (uint32_t i = 0; i < p->cap; i++) {
    if (!p->keys[i]) continue;
    uint32_t h = hash_ptr(p->keys[i], ncap);
    while (nk[h]) h = (h + 1) & (ncap - 1);
    nk[h] = p->keys[i];
    nn[h] = p->names[i];
  }
  free(p->keys);
  free(p->names);
  p->keys = nk;
  p->names = nn;
  p->cap = ncap;
  return true;
}

void pr_bind(printer *p, const hlo_value *v, const char *name) {
  if ((p->count + 1) * 2 > p->cap && !map_grow(p)) return;
  char *s = arena_strdup(&p->a, name);
  if (!s) { p->fail = true; return; }
  uint32_t h = hash_ptr(v, p->cap);
  while (p->keys[h] && p->keys[h] != v) h = (h + 1) & (p->cap - 1);
  if (!p->keys[h]) p->count++;
  p->keys[h] = v;
  p->names[h] = s;
}

static const char *lookup(const printer *p, const hlo_value *v) {
  if (!p->cap) return NULL;
  uint32_t h = hash_ptr(v, p->cap);
  while (p->keys[h]) {
    if (p->keys[h] == v) return p->names[h];
    h = (h + 1) & (p->cap - 1);
  }
  return NULL;
}

void pr_value(printer *p, const hlo_value *v) {
  const char *n = lookup(p, v);
  if (n) { sb_puts(p->b, n); return; }
  /* unnamed (op_print, or a use the walk has not reached): source name */
  if (v->name) sb_printf(p->b, "%%%s", v->name);
  else sb_printf(p->b, "%%v%u", v->id);
  if (v->def && v->def->num_results > 1) sb_printf(p->b, "#%u", v->index);
}

void pr_values(printer *p, hlo_value *const *v, uint32_t n) {
  for (uint32_t i = 0; i < n; i++) {
    if (i) sb_puts(p->b, ", ");
    pr_value(p, v[i]);
  }
}

const char *pr_name_of(const printer *p, const hlo_value *v) { return lookup(p, v); }

void pr_bind_arg(printer *p, const hlo_value *v) {
  if (lookup(p, v)) return; /* named up front by name_func */
  char buf[32];
  snprintf(buf, sizeof buf, "%%arg%u", p->next_arg++);
  pr_bind(p, v, buf);
}

const char *pr_fresh_iter(printer *p) {
  char buf[32];
  if (!p->used_iter) { p->used_iter = true; snprintf(buf, sizeof buf, "%%iterArg"); }
  else snprintf(buf, sizeof buf, "%%iterArg_%u", p->next_conflict++);
  char *s = arena_strdup(&p->a, buf);
  if (!s) { p->fail = true; return "%iterArg_oom"; }
  return s;
}

/* A constant's result is named `%cst` (float, complex) or `%c` (integer). */
static bool const_name(const hlo_op *op, const char **stem) {
  if (op->opcode != OP_CONSTANT || op->num_results != 1 || !op->results[0].type ||
      op->results[0].type->kind != TYPE_TENSOR || op->results[0].type->quant)
    return false;
  hlo_dtype dt = op->results[0].type->dtype;
  bool fl = dt == HLO_C64 || dt == HLO_C128 || dt == HLO_BF16 || dt == HLO_F16 ||
            dt == HLO_F32 || dt == HLO_F64 || (dt >= HLO_F4E2M1FN && dt <= HLO_F8E8M0FNU);
  *stem = fl ? "cst" : "c";
  return true;
}

/* chlo.top_k names its results `%values, %indices` (getAsmResultNames). */
static bool named_results(const hlo_op *op) {
  return op->opcode == OP_CHLO_TOP_K && op->num_results == 2;
}

/* Names the results of `op` lazily (op_print, which has no up-front pass);
 * writes the definition name ("%3", "%cst_2") into buf. */
static void name_results(printer *p, const hlo_op *op, char *buf, size_t n) {
  const char *stem;
  if (const_name(op, &stem)) {
    bool *used = stem[1] ? &p->used_cst : &p->used_c;
    if (!*used) { *used = true; snprintf(buf, n, "%%%s", stem); }
    else snprintf(buf, n, "%%%s_%u", stem, p->next_conflict++);
  } else {
    snprintf(buf, n, "%%%u", p->next_res++);
  }
  if (op->num_results == 1) {
    pr_bind(p, &op->results[0], buf);
    return;
  }
  char use[64];
  for (uint32_t i = 0; i < op->num_results; i++) {
    snprintf(use, sizeof use, "%s#%u", buf, i);
    pr_bind(p, &op->results[i], use);
  }
}

/* The naming state of MLIR's SSANameState (mlir/lib/IR/AsmPrinter.cpp) as
 * it enters a region: the next result number, the next `%argN`, the next
 * `_N` conflict suffix, and which special names are taken in this region or
 * the regions around it (usedNames). A region's own values are numbered
 * first; then each nested region starts from the state after the whole
 * enclosing region, so sibling regions reuse the same numbers. */
typedef struct name_ctx {
  uint32_t next_value, next_arg, next_conflict;
  bool used_cst, used_c, used_iter, used_values, used_indices, used_input, used_carry;
} name_ctx;

/* SSANameState::uniqueValueName for the special names: the stem when it is
 * free, else `stem_N` with the next conflict number. */
static void unique_name(name_ctx *c, bool *used, const char *stem, char *buf, size_t n) {
  if (!*used) { *used = true; snprintf(buf, n, "%%%s", stem); }
  else snprintf(buf, n, "%%%s_%u", stem, c->next_conflict++);
}

static void name_op(printer *p, name_ctx *c, const hlo_op *op) {
  char buf[48], use[64];
  const char *stem;
  if (!op->num_results) return;
  if (named_results(op)) {
    unique_name(c, &c->used_values, "values", buf, sizeof buf);
    pr_bind(p, &op->results[0], buf);
    unique_name(c, &c->used_indices, "indices", buf, sizeof buf);
    pr_bind(p, &op->results[1], buf);
    return;
  }
  if (const_name(op, &stem))
    unique_name(c, stem[1] ? &c->used_cst : &c->used_c, stem, buf, sizeof buf);
  else
    snprintf(buf, sizeof buf, "%%%u", c->next_value++);
  if (op->num_results == 1) {
    pr_bind(p, &op->results[0], buf);
    return;
  }
  for (uint32_t i = 0; i < op->num_results; i++) {
    snprintf(use, sizeof use, "%s#%u", buf, i);
    pr_bind(p, &op->results[i], use);
  }
}

/* Names region `r` of op `parent` (NULL: a function body) and, after it,
 * its nested regions; `c` is the state on entry (a copy). Block arguments
 * are `%argN`, except stablehlo.while's `%iterArg` and chlo.scan's `%input`,
 * `%carry` (getAsmBlockArgumentNames). */
static void name_region(printer *p, const hlo_region *r, const hlo_op *parent, name_ctx c) {
  const hlo_block *blk = &r->block;
  char buf[48];
  uint32_t scan_inputs = UINT32_MAX; /* chlo.scan: `%input`s, then `%carry`s */
  if (parent && parent->opcode == OP_CHLO_SCAN) {
    const hlo_attr *seg = op_attr(parent, "operandSegmentSizes");
    if (seg && seg->kind == ATTR_DENSE_ARRAY && seg->u.darr.n == 2 && seg->u.darr.ints &&
        seg->u.darr.ints[0] >= 0)
      scan_inputs = (uint32_t)seg->u.darr.ints[0];
  }
  for (uint32_t i = 0; i < blk->num_args; i++) {
    if (parent && parent->opcode == OP_WHILE)
      unique_name(&c, &c.used_iter, "iterArg", buf, sizeof buf);
    else if (scan_inputs != UINT32_MAX && i < scan_inputs)
      unique_name(&c, &c.used_input, "input", buf, sizeof buf);
    else if (scan_inputs != UINT32_MAX)
      unique_name(&c, &c.used_carry, "carry", buf, sizeof buf);
    else
      snprintf(buf, sizeof buf, "%%arg%u", c.next_arg++);
    pr_bind(p, &blk->args[i], buf);
  }
  for (const hlo_op *op = blk->first; op; op = op->next) name_op(p, &c, op);
  for (const hlo_op *op = blk->first; op; op = op->next)
    for (uint32_t k = 0; k < op->num_regions; k++) name_region(p, &op->regions[k], op, c);
}

/* Appends the definition of op's results: `%3`, `%0:2`, `%values, %indices`. */
static void pr_def(printer *p, const hlo_op *op) {
  const char *n0 = lookup(p, &op->results[0]);
  if (!n0) {
    char def[40];
    name_results(p, op, def, sizeof def);
    sb_puts(p->b, def);
    if (op->num_results > 1) sb_printf(p->b, ":%u", op->num_results);
    return;
  }
  if (op->num_results == 1) { sb_puts(p->b, n0); return; }
  if (named_results(op)) {
    for (uint32_t i = 0; i < op->num_results; i++) {
      if (i) sb_puts(p->b, ", ");
      pr_value(p, &op->results[i]);
    }
    return;
  }
  const char *h = strchr(n0, '#');
  sb_putn(p->b, n0, h ? (size_t)(h - n0) : strlen(n0));
  sb_printf(p->b, ":%u", op->num_results);
}

/* --------------------------------------------------------------- types */

void pr_newline(printer *p) {
  sb_putc(p->b, '\n');
  for (int i = 0; i < p->indent; i++) sb_putc(p->b, ' ');
}

void pr_result_types(printer *p, const hlo_op *op) {
  if (op->num_results == 1 && op->results[0].type->kind != TYPE_TUPLE) {
    print_type(p->b, op->results[0].type);
    return;
  }
  sb_putc(p->b, '(');
  for (uint32_t i = 0; i < op->num_results; i++) {
    if (i) sb_puts(p->b, ", ");
    print_type(p->b, op->results[i].type);
  }
  sb_putc(p->b, ')');
}

void pr_operand_types(printer *p, const hlo_op *op) {
  for (uint32_t i = 0; i < op->num_operands; i++) {
    if (i) sb_puts(p->b, ", ");
    print_type(p->b, op->operands[i]->type);
  }
}

void pr_func_type(printer *p, const hlo_op *op) {
  sb_putc(p->b, '(');
  pr_operand_types(p, op);
  sb_puts(p->b, ") -> ");
  pr_result_types(p, op);
}

/* ----------------------------------------------------------------- ops */

static void pr_op(printer *p, const hlo_op *op);

void pr_block_ops(printer *p, const hlo_block *blk, int indent) {
  int saved = p->indent;
  p->indent = indent;
  for (const hlo_op *op = blk->first; op; op = op->next) {
    pr_newline(p);
    pr_op(p, op);
  }
  p->indent = saved;
}

void pr_region_generic(printer *p, const hlo_region *r) {
  const hlo_block *blk = &r->block;
  sb_putc(p->b, '{');
  if (blk->num_args) {
    pr_newline(p);
    sb_puts(p->b, "^bb0(");
    for (uint32_t i = 0; i < blk->num_args; i++) {
      if (i) sb_puts(p->b, ", ");
      pr_bind_arg(p, &blk->args[i]);
      pr_value(p, &blk->args[i]);
      sb_puts(p->b, ": ");
      print_type(p->b, blk->args[i].type);
    }
    sb_puts(p->b, "):");
  }
  pr_block_ops(p, blk, p->indent + 2);
  pr_newline(p);
  sb_putc(p->b, '}');
}

/* An attribute is discardable (printed in the trailing `{...}`) when its
 * name carries a dialect prefix (`mhlo.sharding`); inherent ones go in
 * `<{...}>`. */
static bool is_discardable(const char *name) { return strchr(name, '.') != NULL; }

/* The generic form `"name"(operands) <{...}> ({regions}) {attrs} : type`. */
static void pr_generic(printer *p, const hlo_op *op) {
  strbuf *b = p->b;
  sb_putc(b, '"');
  sb_puts(b, op_name(op->opcode));
  sb_puts(b, "\"(");
  pr_values(p, op->operands, op->num_operands);
  sb_putc(b, ')');
  uint32_t ninh = 0, ndis = 0;
  for (uint32_t i = 0; i < op->num_attrs; i++) {
    if (is_discardable(op->attrs[i].name)) ndis++;
    else ninh++;
  }
  if (ninh) {
    sb_puts(b, " <{");
    uint32_t k = 0;
    for (uint32_t i = 0; i < op->num_attrs; i++) {
      if (is_discardable(op->attrs[i].name)) continue;
      if (k++) sb_puts(b, ", ");
      print_name(b, op->attrs[i].name);
      if (op->attrs[i].value && op->attrs[i].value->kind != ATTR_UNIT) {
        sb_puts(b, " = ");
        print_attr(b, op->attrs[i].value);
      }
    }
    sb_puts(b, "}>");
  }
  if (op->num_regions) {
    sb_puts(b, " (");
    for (uint32_t r = 0; r < op->num_regions; r++) {
      if (r) sb_puts(b, ", ");
      pr_region_generic(p, &op->regions[r]);
    }
    sb_putc(b, ')');
  }
  if (ndis) {
    sb_puts(b, " {");
    uint32_t k = 0;
    for (uint32_t i = 0; i < op->num_attrs; i++) {
      if (!is_discardable(op->attrs[i].name)) continue;
      if (k++) sb_puts(b, ", ");
      print_name(b, op->attrs[i].name);
      if (op->attrs[i].value && op->attrs[i].value->kind != ATTR_UNIT) {
        sb_puts(b, " = ");
        print_attr(b, op->attrs[i].value);
      }
    }
    sb_putc(b, '}');
  }
  sb_puts(b, " : ");
  pr_func_type(p, op);
}

static void pr_op(printer *p, const hlo_op *op) {
  if (op->num_results) {
    pr_def(p, op);
    sb_puts(p->b, " = ");
  }
  size_t mark = p->b->len;
  if (!pr_pretty(p, op)) {
    if (!p->b->oom && p->b->data) {
      p->b->len = mark;
      p->b->data[mark] = 0;
    }
    pr_generic(p, op);
  }
  if (pr_loc(p, op)) {
    sb_putc(p->b, ' ');
    sb_puts(p->b, op->loc_text);
  }
}

/* ----------------------------------------------------------- functions */

static void printer_init(printer *p, strbuf *b) {
  memset(p, 0, sizeof *p);
  p->b = b;
  arena_init(&p->a);
}

static void printer_reset(printer *p) {
  if (p->keys) memset(p->keys, 0, p->cap * sizeof *p->keys);
  p->count = 0;
  p->next_res = p->next_arg = p->next_conflict = 0;
  p->used_c = p->used_cst = p->used_iter = false;
}

static void printer_deinit(printer *p) {
  free(p->keys);
  free(p->names);
  arena_deinit(&p->a);
}

static void pr_func(printer *p, const hlo_func *f) {
  strbuf *b = p->b;
  printer_reset(p);
  const hlo_block *body = &f->body.block;
  bool has_body = body->first != NULL;
  if (has_body) {
    name_ctx c;
    memset(&c, 0, sizeof c);
    name_region(p, &f->body, NULL, c);
  }
  sb_puts(b, "  func.func ");
  if (f->visibility) { sb_puts(b, f->visibility); sb_putc(b, ' '); }
  print_symbol(b, f->name, strlen(f->name));
  sb_putc(b, '(');
  for (uint32_t i = 0; i < f->num_args; i++) {
    if (i) sb_puts(b, ", ");
    if (has_body) {
      pr_bind_arg(p, &body->args[i]);
      pr_value(p, &body->args[i]);
      sb_puts(b, ": ");
    }
    print_type(b, body->args[i].type);
    if (f->arg_attrs && f->arg_attrs[i].n) {
      sb_putc(b, ' ');
      print_attr_dict(b, f->arg_attrs[i].items, f->arg_attrs[i].n);
    }
  }
  sb_putc(b, ')');
  bool any_res_attr = false;
  for (uint32_t i = 0; i < f->num_results; i++)
    if (f->result_attrs && f->result_attrs[i].n) any_res_attr = true;
  if (f->num_results == 1 && !any_res_attr && f->result_types[0]->kind != TYPE_TUPLE) {
    sb_puts(b, " -> ");
    print_type(b, f->result_types[0]);
  } else if (f->num_results) {
    sb_puts(b, " -> (");
    for (uint32_t i = 0; i < f->num_results; i++) {
      if (i) sb_puts(b, ", ");
      print_type(b, f->result_types[i]);
      if (f->result_attrs && f->result_attrs[i].n) {
        sb_putc(b, ' ');
        print_attr_dict(b, f->result_attrs[i].items, f->result_attrs[i].n);
      }
    }
    sb_putc(b, ')');
  }
  if (f->attrs.n) {
    sb_puts(b, " attributes ");
    print_attr_dict(b, f->attrs.items, f->attrs.n);
  }
  if (has_body) {
    sb_puts(b, " {");
    pr_block_ops(p, body, 4);
    sb_puts(b, "\n  }");
  }
  sb_putc(b, '\n');
}

/* `#loc...` alias definitions (`#loc3 = loc("f.py":3:1)`): dropped by the
 * canonical form. */
static bool loc_alias(const char *a) { return !strncmp(a, "#loc", 4); }

static char *print_module_as(const hlo_module_ir *m, bool no_locs) {
  if (!m) return NULL;
  strbuf b;
  sb_init(&b);
  printer p;
  printer_init(&p, &b);
  p.no_locs = no_locs;
  for (uint32_t i = 0; i < m->num_aliases; i++) {
    if (no_locs && loc_alias(m->aliases[i])) continue;
    sb_puts(&b, m->aliases[i]);
    sb_putc(&b, '\n');
  }
  sb_puts(&b, "module");
  if (m->name) {
    sb_putc(&b, ' ');
    print_symbol(&b, m->name, strlen(m->name));
  }
  if (m->attrs.n) {
    sb_puts(&b, " attributes ");
    print_attr_dict(&b, m->attrs.items, m->attrs.n);
  }
  sb_puts(&b, " {\n");
  print_sdy_meshes(&b, m);
  for (const hlo_func *f = m->funcs; f; f = f->next) pr_func(&p, f);
  sb_puts(&b, "}\n");
  print_resources(&b, m);
  bool fail = p.fail;
  printer_deinit(&p);
  if (fail) { sb_free(&b); return NULL; }
  return sb_take(&b);
}

char *module_print(const hlo_module_ir *m) { return print_module_as(m, false); }

char *module_print_canonical(const hlo_module_ir *m) { return print_module_as(m, true); }

char *op_print(const hlo_op *op) {
  if (!op) return NULL;
  strbuf b;
  sb_init(&b);
  printer p;
  printer_init(&p, &b);
  /* Names come from the source text: bind nothing up front; pr_value falls
   * back to each value's own name. Results: the first result's name. */
  const hlo_value *r0 = op->num_results ? &op->results[0] : NULL;
  if (r0) {
    if (r0->name) sb_printf(&b, "%%%s", r0->name);
    else sb_printf(&b, "%%v%u", r0->id);
    if (op->num_results > 1) sb_printf(&b, ":%u", op->num_results);
    sb_puts(&b, " = ");
  }
  /* keep region numbering clear of the source's own %argN names */
  p.next_arg = 1000;
  size_t mark = b.len;
  if (!pr_pretty(&p, op)) {
    if (!b.oom && b.data) { b.len = mark; b.data[mark] = 0; }
    pr_generic(&p, op);
  }
  if (op->loc_text) { sb_putc(&b, ' '); sb_puts(&b, op->loc_text); }
  bool fail = p.fail;
  printer_deinit(&p);
  if (fail) { sb_free(&b); return NULL; }
  return sb_take(&b);
}
