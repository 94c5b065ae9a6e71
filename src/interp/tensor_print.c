/* tensor_print.c — a value as the StableHLO reference interpreter prints it
 * (`tensor<2x2xi8> {` / nested bracketed rows / `}`), used by `hlo run
 * --print-results` and interpreter.print. Floats print as "%e"
 * (1.000000e+00), complex numbers as [re, im], booleans as true/false. */
#include "interp/tensor_print.h"

#include <inttypes.h>
#include <stdio.h>

/* The type as the reference interpreter prints it before a value. */
static void print_type_sig(strbuf *b, const hlo_type *t) {
  if (t->kind == TYPE_TOKEN) { sb_puts(b, "!stablehlo.token"); return; }
  if (t->kind == TYPE_TUPLE) {
    sb_puts(b, "tuple<");
    for (uint32_t i = 0; i < t->num_elems; i++) {
      if (i) sb_puts(b, ", ");
      print_type_sig(b, t->elems[i]);
    }
    sb_putc(b, '>');
    return;
  }
  sb_puts(b, "tensor<");
  for (uint32_t i = 0; i < t->rank; i++) sb_printf(b, "%" PRId64 "x", t->dims[i]);
  sb_printf(b, "%s>", hlo_dtype_name(t->dtype));
}

static void print_elem(strbuf *b, hlo_dtype dt, const void *data, int64_t i) {
  switch (dtype_class(dt)) {
    case HLO_CLASS_BOOL: sb_puts(b, elem_get_i64(dt, data, i) ? "true" : "false"); break;
    case HLO_CLASS_SINT: sb_printf(b, "%" PRId64, elem_get_i64(dt, data, i)); break;
    case HLO_CLASS_UINT: sb_printf(b, "%" PRIu64, elem_get_u64(dt, data, i)); break;
    case HLO_CLASS_FLOAT: sb_printf(b, "%e", elem_get_f64(dt, data, i)); break;
    case HLO_CLASS_COMPLEX: {
      double re, im;
      elem_get_c128(dt, data, i, &re, &im);
      sb_printf(b, "[%e, %e]", re, im);
      break;
    }
  }
}

/* Prints dims[d..] of the block starting at element `*pos`. */
static void print_rows(strbuf *b, const tensor *x, uint32_t d, int64_t *pos, int indent) {
  const hlo_type *t = x->type;
  if (d + 1 == t->rank) {
    sb_putc(b, '[');
    for (int64_t i = 0; i < t->dims[d]; i++) {
      if (i) sb_puts(b, ", ");
      print_elem(b, t->dtype, x->data, (*pos)++);
    }
    sb_putc(b, ']');
    return;
  }
  if (t->dims[d] == 0) { sb_puts(b, "[]"); return; }
  sb_puts(b, "[\n");
  for (int64_t i = 0; i < t->dims[d]; i++) {
    for (int k = 0; k < indent + 2; k++) sb_putc(b, ' ');
    print_rows(b, x, d + 1, pos, indent + 2);
    sb_puts(b, i + 1 < t->dims[d] ? ",\n" : "\n");
  }
  for (int k = 0; k < indent; k++) sb_putc(b, ' ');
  sb_putc(b, ']');
}

void tensor_print(strbuf *b, const tensor *x) {
  const hlo_type *t = x->type;
  print_type_sig(b, t);
  if (t->kind == TYPE_TOKEN) { sb_putc(b, '\n'); return; }
  if (t->kind == TYPE_TUPLE) {
    sb_puts(b, " {\n");
    for (uint32_t i = 0; i < x->num_tuple; i++) tensor_print(b, x->tuple[i]);
    sb_puts(b, "}\n");
    return;
  }
  if (t->rank == 0) {
    sb_puts(b, " {");
    print_elem(b, t->dtype, x->data, 0);
    sb_puts(b, "}\n");
    return;
  }
  sb_puts(b, " {\n  ");
  int64_t pos = 0;
  print_rows(b, x, 0, &pos, 2);
  sb_puts(b, "\n}\n");
}
