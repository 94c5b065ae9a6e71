/* print_ops.c — the pretty forms of ops, as the StableHLO dialect's custom
 * assembly formats print them (stablehlo/dialect/StablehloOps.td and
 * AssemblyFormat.cpp) and JAX output shows them.
 *
 * Each printer checks first that the op fits its form exactly (the
 * attributes the form spells and no others, the types the form can
 * reconstruct); when it does not, pr_pretty returns false having printed
 * nothing, and print.c prints the generic form, which always round-trips. */
#include "ir/print_internal.h"

#include <inttypes.h>
#include <string.h>

/* ------------------------------------------------------------- helpers */

/* True when every attribute of `op` is named in the NULL-terminated list. */
static bool only_attrs(const hlo_op *op, const char *const *names) {
  for (uint32_t i = 0; i < op->num_attrs; i++) {
    bool ok = false;
    for (const char *const *n = names; *n && !ok; n++)
      if (!strcmp(op->attrs[i].name, *n)) ok = true;
    if (!ok) return false;
  }
  return true;
}

/* An integer ATTR_DENSE_ARRAY attribute of `op`, or NULL. */
static const hlo_attr *int_array(const hlo_op *op, const char *name) {
  const hlo_attr *a = op_attr(op, name);
  if (!a || a->kind != ATTR_DENSE_ARRAY) return NULL;
  hlo_dtype d = a->u.darr.dtype;
  if (d != HLO_I64 && d != HLO_I32) return NULL;
  return a;
}

static const hlo_attr *int_attr(const hlo_op *op, const char *name) {
  const hlo_attr *a = op_attr(op, name);
  return a && a->kind == ATTR_INT ? a : NULL;
}

static void put_list(printer *p, const hlo_attr *a) {
  print_int_list(p->b, a->u.darr.ints, a->u.darr.n);
}

/* The op's name, a space, its operands. */
static void head(printer *p, const hlo_op *op) {
  sb_puts(p->b, op_name(op->opcode));
  if (op->num_operands) {
    sb_putc(p->b, ' ');
    pr_values(p, op->operands, op->num_operands);
  }
}

static bool all_types_equal(const hlo_op *op) {
  const hlo_type *t = op->results[0].type;
  for (uint32_t i = 0; i < op->num_operands; i++)
    if (!type_equal(op->operands[i]->type, t)) return false;
  return true;
}

static bool simple(const hlo_op *op) {
  return op->num_regions == 0 && op->num_results == 1;
}

/* `: T` when every operand and the result have type T, else `: (A) -> R`
 * (hlo::printSameOperandsAndResultType). */
static void same_type_suffix(printer *p, const hlo_op *op) {
  sb_puts(p->b, " : ");
  if (all_types_equal(op)) print_type(p->b, op->results[0].type);
  else pr_func_type(p, op);
}

static void func_type_suffix(printer *p, const hlo_op *op) {
  sb_puts(p->b, " : ");
  pr_func_type(p, op);
}

/* ---------------------------------------------------------------- forms */

static bool pr_reduce_compact(printer *p, const hlo_op *op);

static bool is_same_type_op(hlo_opcode c) {
  if (c == OP_COMPARE || c == OP_SELECT || c == OP_REDUCE_PRECISION) return false;
  return (op_flags(c) & OPF_ELEMENTWISE) && !(op_flags(c) & OPF_CHLO);
}

static bool pr_constant(printer *p, const hlo_op *op) {
  static const char *const ok[] = {"value", NULL};
  const hlo_attr *v = op_attr(op, "value");
  if (!simple(op) || op->num_operands || !only_attrs(op, ok) || !v || v->kind != ATTR_DENSE ||
      !type_equal(v->u.dense.type, op->results[0].type))
    return false;
  sb_puts(p->b, "stablehlo.constant ");
  print_attr(p->b, v);
  return true;
}

static bool pr_compare(printer *p, const hlo_op *op) {
  static const char *const ok[] = {"comparison_direction", "compare_type", NULL};
  const hlo_attr *dir = op_attr(op, "comparison_direction");
  const hlo_attr *ct = op_attr(op, "compare_type");
  if (!simple(op) || op->num_operands != 2 || !only_attrs(op, ok) || !dir ||
      dir->kind != ATTR_ENUM || (ct && ct->kind != ATTR_ENUM))
    return false;
  sb_printf(p->b, "stablehlo.compare %s, ", dir->u.en.value);
  pr_values(p, op->operands, 2);
  if (ct) sb_printf(p->b, ", %s", ct->u.en.value);
  func_type_suffix(p, op);
  return true;
}

static bool pr_select(printer *p, const hlo_op *op) {
  if (!simple(op) || op->num_operands != 3 || op->num_attrs) return false;
  head(p, op);
  const hlo_type *r = op->results[0].type;
  sb_puts(p->b, " : ");
  if (type_equal(op->operands[1]->type, r) && type_equal(op->operands[2]->type, r)) {
    print_type(p->b, op->operands[0]->type);
    sb_puts(p->b, ", ");
    print_type(p->b, r);
  } else {
    pr_func_type(p, op);
  }
  return true;
}

/* `NAME %x, KEY = [..] : (A) -> R` for an op with one int-list attribute. */
static bool pr_with_list(printer *p, const hlo_op *op, const char *attr, const char *key,
                         bool same_type) {
  const char *ok[] = {attr, NULL};
  const hlo_attr *a = int_array(op, attr);
  if (!simple(op) || !op->num_operands || !a || !only_attrs(op, ok)) return false;
  head(p, op);
  sb_printf(p->b, ", %s = ", key);
  put_list(p, a);
  if (same_type) same_type_suffix(p, op);
  else func_type_suffix(p, op);
  return true;
}

/* `NAME %x, KEY = N : (A) -> R` (or `NAME KEY = N : R` with no operands). */
static bool pr_with_int(printer *p, const hlo_op *op, const char *attr, const char *key) {
  const char *ok[] = {attr, NULL};
  const hlo_attr *a = int_attr(op, attr);
  if (!simple(op) || !a || !only_attrs(op, ok)) return false;
  head(p, op);
  sb_printf(p->b, "%s%s = %" PRId64, op->num_operands ? ", " : " ", key, a->u.i.v);
  if (op->num_operands) func_type_suffix(p, op);
  else { sb_puts(p->b, " : "); print_type(p->b, op->results[0].type); }
  return true;
}

static bool pr_slice(printer *p, const hlo_op *op) {
  static const char *const ok[] = {"start_indices", "limit_indices", "strides", NULL};
  const hlo_attr *s = int_array(op, "start_indices"), *l = int_array(op, "limit_indices");
  const hlo_attr *st = int_array(op, "strides");
  if (!simple(op) || op->num_operands != 1 || !only_attrs(op, ok) || !s || !l || !st ||
      s->u.darr.n != l->u.darr.n || s->u.darr.n != st->u.darr.n)
    return false;
  head(p, op);
  sb_puts(p->b, " [");
  for (uint32_t i = 0; i < s->u.darr.n; i++) {
    if (i) sb_puts(p->b, ", ");
    sb_printf(p->b, "%" PRId64 ":%" PRId64, s->u.darr.ints[i], l->u.darr.ints[i]);
    if (st->u.darr.ints[i] != 1) sb_printf(p->b, ":%" PRId64, st->u.darr.ints[i]);
  }
  sb_putc(p->b, ']');
  func_type_suffix(p, op);
  return true;
}

static bool pr_pad(printer *p, const hlo_op *op) {
  static const char *const ok[] = {"edge_padding_low", "edge_padding_high",
                                   "interior_padding", NULL};
  const hlo_attr *lo = int_array(op, "edge_padding_low");
  const hlo_attr *hi = int_array(op, "edge_padding_high");
  const hlo_attr *in = int_array(op, "interior_padding");
  if (!simple(op) || op->num_operands != 2 || !only_attrs(op, ok) || !lo || !hi || !in)
    return false;
  head(p, op);
  sb_puts(p->b, ", low = ");
  put_list(p, lo);
  sb_puts(p->b, ", high = ");
  put_list(p, hi);
  sb_puts(p->b, ", interior = ");
  put_list(p, in);
  func_type_suffix(p, op);
  return true;
}

static bool pr_reduce_precision(printer *p, const hlo_op *op) {
  static const char *const ok[] = {"exponent_bits", "mantissa_bits", NULL};
  const hlo_attr *e = int_attr(op, "exponent_bits"), *m = int_attr(op, "mantissa_bits");
  if (!simple(op) || op->num_operands != 1 || !only_attrs(op, ok) || !e || !m ||
      e->u.i.dtype != HLO_I32 || m->u.i.dtype != HLO_I32 || !all_types_equal(op))
    return false;
  head(p, op);
  sb_printf(p->b, ", format = e%" PRId64 "m%" PRId64, e->u.i.v, m->u.i.v);
  same_type_suffix(p, op);
  return true;
}

static bool pr_get_tuple_element(printer *p, const hlo_op *op) {
  static const char *const ok[] = {"index", NULL};
  const hlo_attr *i = int_attr(op, "index");
  if (!simple(op) || op->num_operands != 1 || !only_attrs(op, ok) || !i) return false;
  head(p, op);
  sb_printf(p->b, "[%" PRId64 "]", i->u.i.v);
  func_type_suffix(p, op);
  return true;
}

static bool pr_tuple(printer *p, const hlo_op *op) {
  if (!simple(op) || op->num_attrs) return false;
  head(p, op);
  sb_puts(p->b, " : ");
  print_type(p->b, op->results[0].type);
  return true;
}

/* A symbol name that can be printed bare after '@'. */
static bool bare_symbol(const char *s, size_t n) {
  if (!n) return false;
  for (size_t i = 0; i < n; i++) {
    char c = s[i];
    if (!((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '_' || c == '.' ||
          c == '$' || c == '-' || (i && c >= '0' && c <= '9')))
      return false;
  }
  return true;
}

static bool pr_custom_call(printer *p, const hlo_op *op) {
  const hlo_attr *t = op_attr(op, "call_target_name");
  if (op->num_regions || !t || t->kind != ATTR_STRING || !bare_symbol(t->u.str.s, t->u.str.len))
    return false;
  sb_puts(p->b, "stablehlo.custom_call @");
  sb_putn(p->b, t->u.str.s, t->u.str.len);
  sb_putc(p->b, '(');
  pr_values(p, op->operands, op->num_operands);
  sb_putc(p->b, ')');
  if (op->num_attrs > 1) {
    sb_puts(p->b, " {");
    uint32_t k = 0;
    for (uint32_t i = 0; i < op->num_attrs; i++) {
      if (!strcmp(op->attrs[i].name, "call_target_name")) continue;
      if (k++) sb_puts(p->b, ", ");
      print_name(p->b, op->attrs[i].name);
      if (op->attrs[i].value && op->attrs[i].value->kind != ATTR_UNIT) {
        sb_puts(p->b, " = ");
        print_attr(p->b, op->attrs[i].value);
      }
    }
    sb_putc(p->b, '}');
  }
  func_type_suffix(p, op);
  return true;
}

static bool pr_return(printer *p, const hlo_op *op) {
  if (op->num_attrs || op->num_regions || op->num_results) return false;
  sb_puts(p->b, op->opcode == OP_FUNC_RETURN ? "return" : op_name(op->opcode));
  if (!op->num_operands) return true;
  sb_putc(p->b, ' ');
  pr_values(p, op->operands, op->num_operands);
  sb_puts(p->b, " : ");
  pr_operand_types(p, op);
  return true;
}

static bool pr_call(printer *p, const hlo_op *op) {
  static const char *const ok[] = {"callee", NULL};
  const hlo_attr *c = op_attr(op, "callee");
  if (op->num_regions || !c || c->kind != ATTR_SYMBOL || !only_attrs(op, ok)) return false;
  /* `call` resolves only where func is the default dialect: directly in a
   * function body; inside another op's region MLIR needs `func.call` */
  bool nested = op->parent && op->parent->parent && op->parent->parent->parent;
  sb_puts(p->b, nested ? "func.call " : "call ");
  print_symbol(p->b, c->u.str.s, c->u.str.len);
  sb_putc(p->b, '(');
  pr_values(p, op->operands, op->num_operands);
  sb_putc(p->b, ')');
  func_type_suffix(p, op);
  return true;
}

static bool pr_dot_general(printer *p, const hlo_op *op) {
  static const char *const ok[] = {"dot_dimension_numbers", "precision_config", NULL};
  const hlo_attr *d = op_attr(op, "dot_dimension_numbers");
  const hlo_attr *pc = op_attr(op, "precision_config");
  if (!simple(op) || op->num_operands != 2 || !only_attrs(op, ok) || !d ||
      d->kind != ATTR_STRUCT || strcmp(d->u.st.name, "stablehlo.dot"))
    return false;
  static const char *const fields[] = {"lhs_batching_dimensions", "rhs_batching_dimensions",
                                       "lhs_contracting_dimensions",
                                       "rhs_contracting_dimensions"};
  const hlo_attr *f[4];
  uint32_t found = 0;
  for (int i = 0; i < 4; i++) {
    f[i] = attr_field(d, fields[i]);
    if (f[i]) {
      found++;
      if (f[i]->kind != ATTR_DENSE_ARRAY) return false;
    }
  }
  if (found != d->u.st.n) return false;
  if (pc) {
    if (pc->kind != ATTR_ARRAY) return false;
    for (uint32_t i = 0; i < pc->u.arr.n; i++)
      if (pc->u.arr.items[i]->kind != ATTR_ENUM) return false;
  }
  head(p, op);
  static const int64_t none = 0;
  const int64_t *v[4];
  uint32_t n[4];
  for (int i = 0; i < 4; i++) {
    v[i] = f[i] ? f[i]->u.darr.ints : &none;
    n[i] = f[i] ? f[i]->u.darr.n : 0;
  }
  if (n[0] || n[1]) {
    sb_puts(p->b, ", batching_dims = ");
    print_int_list(p->b, v[0], n[0]);
    sb_puts(p->b, " x ");
    print_int_list(p->b, v[1], n[1]);
  }
  sb_puts(p->b, ", contracting_dims = ");
  print_int_list(p->b, v[2], n[2]);
  sb_puts(p->b, " x ");
  print_int_list(p->b, v[3], n[3]);
  if (pc) {
    sb_puts(p->b, ", precision = [");
    for (uint32_t i = 0; i < pc->u.arr.n; i++) {
      if (i) sb_puts(p->b, ", ");
      sb_puts(p->b, pc->u.arr.items[i]->u.en.value);
    }
    sb_putc(p->b, ']');
  }
  func_type_suffix(p, op);
  return true;
}

/* The region form: `stablehlo.reduce(%a init: %i), (%b init: %j) across
 * dimensions = [..] : (A, B, I, J) -> (R, S)`, then on the next line
 * ` reducer(%acc0: T, %x0: T) (%acc1: U, %x1: U)  {` and the body. */
static bool pr_reduce_region(printer *p, const hlo_op *op) {
  static const char *const ok[] = {"dimensions", NULL};
  const hlo_attr *dims = int_array(op, "dimensions");
  uint32_t n = op->num_results;
  if (!n || op->num_operands != 2 * n || op->num_regions != 1 || !dims || !only_attrs(op, ok))
    return false;
  const hlo_block *blk = &op->regions[0].block;
  if (blk->num_args != 2 * n) return false;
  sb_puts(p->b, "stablehlo.reduce");
  for (uint32_t i = 0; i < n; i++) {
    sb_puts(p->b, i ? ", (" : "(");
    pr_value(p, op->operands[i]);
    sb_puts(p->b, " init: ");
    pr_value(p, op->operands[n + i]);
    sb_putc(p->b, ')');
  }
  sb_puts(p->b, " across dimensions = ");
  put_list(p, dims);
  func_type_suffix(p, op);
  for (uint32_t i = 0; i < 2 * n; i++) pr_bind_arg(p, &blk->args[i]);
  pr_newline(p);
  sb_puts(p->b, " reducer");
  for (uint32_t i = 0; i < n; i++) {
    sb_puts(p->b, i ? " (" : "(");
    for (uint32_t j = 0; j < 2; j++) {
      const hlo_value *v = &blk->args[j * n + i];
      if (j) sb_puts(p->b, ", ");
      pr_value(p, v);
      sb_puts(p->b, ": ");
      print_type(p->b, v->type);
    }
    sb_putc(p->b, ')');
  }
  sb_puts(p->b, "  {");
  pr_block_ops(p, blk, p->indent + 2);
  pr_newline(p);
  sb_putc(p->b, '}');
  return true;
}

/* `stablehlo.reduce(%x init: %i) applies stablehlo.add across dimensions =
 * [..] : (A, I) -> R`, when the body is one binary op on its two arguments;
 * else the region form. */
static bool pr_reduce(printer *p, const hlo_op *op) {
  if (pr_reduce_compact(p, op)) return true;
  return pr_reduce_region(p, op);
}

/* The one-line form `stablehlo.reduce(%x init: %i) applies OP across
 * dimensions = [...]`, when the body is a single binary op; false otherwise. */
static bool pr_reduce_compact(printer *p, const hlo_op *op) {
  static const char *const ok[] = {"dimensions", NULL};
  const hlo_attr *dims = int_array(op, "dimensions");
  if (op->num_operands != 2 || op->num_results != 1 || op->num_regions != 1 || !dims ||
      !only_attrs(op, ok))
    return false;
  const hlo_block *blk = &op->regions[0].block;
  const hlo_type *it = op->operands[1]->type;
  if (blk->num_args != 2 || !type_equal(blk->args[0].type, it) ||
      !type_equal(blk->args[1].type, it))
    return false;
  const hlo_op *b0 = blk->first;
  if (!b0 || !b0->next || b0->next->next) return false;
  const hlo_op *ret = b0->next;
  if (b0->num_operands != 2 || b0->num_results != 1 || b0->num_attrs || b0->num_regions ||
      pr_loc(p, b0) || (op_flags(b0->opcode) & OPF_CHLO) ||
      !(op_flags(b0->opcode) & OPF_ELEMENTWISE) || b0->opcode == OP_COMPARE ||
      b0->operands[0] != &blk->args[0] || b0->operands[1] != &blk->args[1] ||
      !type_equal(b0->results[0].type, it))
    return false;
  if (ret->opcode != OP_RETURN || ret->num_operands != 1 || ret->num_attrs ||
      pr_loc(p, ret) || ret->operands[0] != &b0->results[0])
    return false;
  sb_puts(p->b, "stablehlo.reduce(");
  pr_value(p, op->operands[0]);
  sb_puts(p->b, " init: ");
  pr_value(p, op->operands[1]);
  sb_printf(p->b, ") applies %s across dimensions = ", op_name(b0->opcode));
  put_list(p, dims);
  func_type_suffix(p, op);
  return true;
}

static bool pr_while(printer *p, const hlo_op *op) {
  if (op->num_regions != 2 || op->num_attrs || !op->num_operands ||
      op->num_results != op->num_operands)
    return false;
  const hlo_block *c = &op->regions[0].block, *d = &op->regions[1].block;
  if (c->num_args != op->num_operands || d->num_args != op->num_operands) return false;
  for (uint32_t i = 0; i < op->num_operands; i++) {
    const hlo_type *t = op->operands[i]->type;
    if (!type_equal(c->args[i].type, t) || !type_equal(d->args[i].type, t) ||
        !type_equal(op->results[i].type, t))
      return false;
  }
  sb_puts(p->b, "stablehlo.while(");
  for (uint32_t i = 0; i < op->num_operands; i++) {
    const char *n = pr_name_of(p, &c->args[i]);
    if (!n) {
      n = pr_fresh_iter(p);
      pr_bind(p, &c->args[i], n);
      pr_bind(p, &d->args[i], n);
    }
    if (i) sb_puts(p->b, ", ");
    sb_printf(p->b, "%s = ", n);
    pr_value(p, op->operands[i]);
  }
  sb_puts(p->b, ") : ");
  pr_operand_types(p, op);
  pr_newline(p);
  sb_puts(p->b, "cond {");
  pr_block_ops(p, c, p->indent + 2);
  pr_newline(p);
  sb_puts(p->b, "} do {");
  pr_block_ops(p, d, p->indent + 2);
  pr_newline(p);
  sb_putc(p->b, '}');
  return true;
}

/* chlo's elementwise unary ops: `chlo.lgamma %x : A -> R`. */
static bool pr_chlo_unary(printer *p, const hlo_op *op) {
  if (!simple(op) || op->num_operands != 1 || op->num_attrs) return false;
  head(p, op);
  sb_puts(p->b, " : ");
  print_type(p->b, op->operands[0]->type);
  sb_puts(p->b, " -> ");
  print_type(p->b, op->results[0].type);
  return true;
}

static bool pr_check_const(printer *p, const hlo_op *op) {
  static const char *const ok[] = {"value", NULL};
  const hlo_attr *v = op_attr(op, "value");
  if (op->num_regions || op->num_results || op->num_operands != 1 || !only_attrs(op, ok) ||
      !v || v->kind != ATTR_DENSE)
    return false;
  head(p, op);
  sb_puts(p->b, ", ");
  print_attr(p->b, v);
  return true;
}

/* `NAME %x, KEY =  VALUE, ...` for an enum attribute (fft type, rng
 * algorithm): JAX prints two spaces before the enum value. */
static bool pr_fft(printer *p, const hlo_op *op) {
  static const char *const ok[] = {"fft_type", "fft_length", NULL};
  const hlo_attr *t = op_attr(op, "fft_type"), *l = int_array(op, "fft_length");
  if (!simple(op) || op->num_operands != 1 || !only_attrs(op, ok) || !t ||
      t->kind != ATTR_ENUM || !l)
    return false;
  head(p, op);
  sb_printf(p->b, ", type =  %s, length = ", t->u.en.value);
  put_list(p, l);
  func_type_suffix(p, op);
  return true;
}

static bool pr_rng_bit_generator(printer *p, const hlo_op *op) {
  static const char *const ok[] = {"rng_algorithm", NULL};
  const hlo_attr *t = op_attr(op, "rng_algorithm");
  if (op->num_regions || op->num_operands != 1 || !only_attrs(op, ok) || !t ||
      t->kind != ATTR_ENUM)
    return false;
  head(p, op);
  sb_printf(p->b, ", algorithm =  %s", t->u.en.value);
  func_type_suffix(p, op);
  return true;
}

static bool pr_optimization_barrier(printer *p, const hlo_op *op) {
  if (op->num_regions || op->num_attrs || !op->num_operands ||
      op->num_operands != op->num_results)
    return false;
  for (uint32_t i = 0; i < op->num_operands; i++)
    if (!type_equal(op->operands[i]->type, op->results[i].type)) return false;
  head(p, op);
  sb_puts(p->b, " : ");
  pr_operand_types(p, op);
  return true;
}

static bool pr_top_k(printer *p, const hlo_op *op) {
  static const char *const ok[] = {"k", NULL};
  const hlo_attr *k = int_attr(op, "k");
  if (op->num_regions || op->num_operands != 1 || op->num_results != 2 || !k ||
      !only_attrs(op, ok))
    return false;
  sb_puts(p->b, "chlo.top_k(");
  pr_value(p, op->operands[0]);
  sb_printf(p->b, ", k = %" PRId64 ") : ", k->u.i.v);
  print_type(p->b, op->operands[0]->type);
  sb_puts(p->b, " -> ");
  pr_result_types(p, op);
  return true;
}

/* `chlo.scan(%x) inits (%i) dimension=1  attributes {...} {region} : (A, I)
 * -> (R, C)` (ScanOp::print in stablehlo/dialect/ChloOps.cpp): the segment
 * sizes are implied by the operand lists and the types. */
static bool pr_scan(printer *p, const hlo_op *op) {
  const hlo_attr *seg = int_array(op, "operandSegmentSizes");
  const hlo_attr *dim = int_attr(op, "dimension");
  if (op->num_regions != 1 || !seg || !dim || seg->u.darr.n != 2) return false;
  int64_t nin = seg->u.darr.ints[0], ninit = seg->u.darr.ints[1];
  if (nin < 0 || ninit < 0 || (uint64_t)(nin + ninit) != op->num_operands ||
      (uint64_t)ninit > op->num_results)
    return false;
  const hlo_attr *rseg = op_attr(op, "resultSegmentSizes");
  if (rseg && (rseg->kind != ATTR_DENSE_ARRAY || rseg->u.darr.n != 2 ||
               (rseg->u.darr.dtype != HLO_I32 && rseg->u.darr.dtype != HLO_I64) ||
               rseg->u.darr.ints[0] != (int64_t)op->num_results - ninit ||
               rseg->u.darr.ints[1] != ninit))
    return false;
  if (seg->u.darr.dtype != HLO_I32) return false;
  uint32_t nother = 0;
  for (uint32_t i = 0; i < op->num_attrs; i++) {
    const char *n = op->attrs[i].name;
    if (strcmp(n, "dimension") && strcmp(n, "operandSegmentSizes") &&
        strcmp(n, "resultSegmentSizes"))
      nother++;
  }
  sb_puts(p->b, "chlo.scan(");
  pr_values(p, op->operands, (uint32_t)nin);
  sb_puts(p->b, ") inits (");
  pr_values(p, op->operands + nin, (uint32_t)ninit);
  sb_printf(p->b, ") dimension=%" PRId64 " ", dim->u.i.v);
  if (nother) {
    sb_puts(p->b, " attributes {");
    uint32_t k = 0;
    for (uint32_t i = 0; i < op->num_attrs; i++) {
      const char *n = op->attrs[i].name;
      if (!strcmp(n, "dimension") || !strcmp(n, "operandSegmentSizes") ||
          !strcmp(n, "resultSegmentSizes"))
        continue;
      if (k++) sb_puts(p->b, ", ");
      print_name(p->b, n);
      if (op->attrs[i].value && op->attrs[i].value->kind != ATTR_UNIT) {
        sb_puts(p->b, " = ");
        print_attr(p->b, op->attrs[i].value);
      }
    }
    sb_putc(p->b, '}');
  }
  sb_putc(p->b, ' ');
  pr_region_generic(p, &op->regions[0]);
  func_type_suffix(p, op);
  return true;
}

/* chlo's binary ops without attributes: `chlo.next_after %a, %b : A, B -> R`. */
static bool pr_chlo_binary(printer *p, const hlo_op *op) {
  if (!simple(op) || op->num_operands != 2 || op->num_attrs) return false;
  head(p, op);
  sb_puts(p->b, " : ");
  pr_operand_types(p, op);
  sb_puts(p->b, " -> ");
  print_type(p->b, op->results[0].type);
  return true;
}

/* `stablehlo.convolution(%l, %r) dim_numbers = ..., window = {...} {rest} :
 * (L, R) -> T`. */
static bool pr_convolution(printer *p, const hlo_op *op) {
  const hlo_attr *dn = op_attr(op, "dimension_numbers");
  const hlo_attr *pad = op_attr(op, "padding");
  const hlo_attr *rev = op_attr(op, "window_reversal");
  static const char *const win[] = {"window_strides", "lhs_dilation", "rhs_dilation"};
  static const char *const key[] = {"stride", "lhs_dilate", "rhs_dilate"};
  if (!simple(op) || op->num_operands != 2 || !dn || dn->kind != ATTR_STRUCT ||
      strcmp(dn->u.st.name, "stablehlo.conv"))
    return false;
  for (int i = 0; i < 3; i++)
    if (op_attr(op, win[i]) && !int_array(op, win[i])) return false;
  if (rev && (rev->kind != ATTR_DENSE_ARRAY || rev->u.darr.dtype != HLO_I1)) return false;
  if (pad) {
    const hlo_type *pt = pad->kind == ATTR_DENSE ? pad->u.dense.type : NULL;
    if (!pt || pt->kind != TYPE_TENSOR || pt->dtype != HLO_I64 || pt->quant || pt->encoding ||
        pt->rank != 2 || pt->dims[1] != 2 || pad->u.dense.num_elems != pt->dims[0] * 2)
      return false;
  }
  sb_puts(p->b, "stablehlo.convolution(");
  pr_values(p, op->operands, 2);
  sb_puts(p->b, ") dim_numbers = ");
  print_conv_dim_numbers(p->b, dn);
  sb_puts(p->b, ", window = {");
  bool first = true;
  const hlo_attr *st = int_array(op, "window_strides");
  if (st) {
    sb_puts(p->b, "stride = ");
    put_list(p, st);
    first = false;
  }
  if (pad) {
    sb_puts(p->b, first ? "pad = [" : ", pad = [");
    first = false;
    for (int64_t i = 0; i < pad->u.dense.num_elems; i++) {
      int64_t v;
      memcpy(&v, pad->u.dense.data + (pad->u.dense.splat ? 0 : (size_t)i * 8), 8);
      sb_printf(p->b, "%s%" PRId64 "%s", i % 2 ? ", " : (i ? ", [" : "["), v, i % 2 ? "]" : "");
    }
    sb_putc(p->b, ']');
  }
  for (int i = 1; i < 3; i++) {
    const hlo_attr *a = int_array(op, win[i]);
    if (!a) continue;
    sb_printf(p->b, "%s%s = ", first ? "" : ", ", key[i]);
    put_list(p, a);
    first = false;
  }
  if (rev) {
    sb_puts(p->b, first ? "reverse = [" : ", reverse = [");
    for (uint32_t i = 0; i < rev->u.darr.n; i++)
      sb_printf(p->b, "%s%s", i ? ", " : "", rev->u.darr.ints[i] ? "true" : "false");
    sb_putc(p->b, ']');
  }
  sb_putc(p->b, '}');
  static const char *const taken[] = {"dimension_numbers", "padding", "window_reversal",
                                      "window_strides", "lhs_dilation", "rhs_dilation"};
  uint32_t k = 0;
  for (uint32_t i = 0; i < op->num_attrs; i++) {
    bool skip = false;
    for (int t = 0; t < 6 && !skip; t++)
      if (!strcmp(op->attrs[i].name, taken[t])) skip = true;
    if (skip) continue;
    sb_puts(p->b, k++ ? ", " : " {");
    print_name(p->b, op->attrs[i].name);
    if (op->attrs[i].value && op->attrs[i].value->kind != ATTR_UNIT) {
      sb_puts(p->b, " = ");
      print_attr(p->b, op->attrs[i].value);
    }
  }
  if (k) sb_putc(p->b, '}');
  func_type_suffix(p, op);
  return true;
}

/* `check.expect_eq %a, %b : T` (both operands of type T, no attributes). */
static bool pr_check_pair(printer *p, const hlo_op *op) {
  if (op->num_regions || op->num_results || op->num_operands != 2 || op->num_attrs ||
      !type_equal(op->operands[0]->type, op->operands[1]->type))
    return false;
  head(p, op);
  sb_puts(p->b, " : ");
  print_type(p->b, op->operands[0]->type);
  return true;
}

/* `interpreter.probe %x, probe_id = "id" : T` and
 * `check.expect_serialized_eq %x, probe_id = "id" : T`. */
static bool pr_probe(printer *p, const hlo_op *op) {
  static const char *const ok[] = {"probe_id", NULL};
  const hlo_attr *id = op_attr(op, "probe_id");
  uint32_t nres = op->opcode == OP_INTERP_PROBE ? 1 : 0;
  if (op->num_regions || op->num_results != nres || op->num_operands != 1 || !id ||
      id->kind != ATTR_STRING || !only_attrs(op, ok) ||
      (nres && !type_equal(op->results[0].type, op->operands[0]->type)))
    return false;
  head(p, op);
  sb_puts(p->b, ", probe_id = ");
  print_string(p->b, id->u.str.s, id->u.str.len);
  sb_puts(p->b, " : ");
  print_type(p->b, op->operands[0]->type);
  return true;
}

bool pr_pretty(printer *p, const hlo_op *op) {
  hlo_opcode c = op->opcode;
  switch (c) {
  case OP_CONSTANT: return pr_constant(p, op);
  case OP_COMPARE: return pr_compare(p, op);
  case OP_SELECT: return pr_select(p, op);
  case OP_BROADCAST_IN_DIM: return pr_with_list(p, op, "broadcast_dimensions", "dims", false);
  case OP_TRANSPOSE: return pr_with_list(p, op, "permutation", "dims", false);
  case OP_REVERSE: return pr_with_list(p, op, "dimensions", "dims", true);
  case OP_DYNAMIC_SLICE: return pr_with_list(p, op, "slice_sizes", "sizes", false);
  case OP_IOTA: return op->num_operands == 0 && pr_with_int(p, op, "iota_dimension", "dim");
  case OP_DYNAMIC_IOTA:
    return op->num_operands == 1 && pr_with_int(p, op, "iota_dimension", "dim");
  case OP_CONCATENATE: return op->num_operands && pr_with_int(p, op, "dimension", "dim");
  case OP_GET_DIMENSION_SIZE:
    return op->num_operands == 1 && pr_with_int(p, op, "dimension", "dim");
  case OP_SLICE: return pr_slice(p, op);
  case OP_PAD: return pr_pad(p, op);
  case OP_REDUCE_PRECISION: return pr_reduce_precision(p, op);
  case OP_GET_TUPLE_ELEMENT: return pr_get_tuple_element(p, op);
  case OP_TUPLE: return pr_tuple(p, op);
  case OP_CUSTOM_CALL: return pr_custom_call(p, op);
  case OP_RETURN:
  case OP_SDY_RETURN:
  case OP_FUNC_RETURN: return pr_return(p, op);
  case OP_SDY_SHARDING_CONSTRAINT: case OP_SDY_RESHARD: case OP_SDY_SHARDING_GROUP:
  case OP_SDY_PROPAGATION_BARRIER: case OP_SDY_MANUAL_COMPUTATION: case OP_SDY_NAMED_COMPUTATION:
    return pr_sdy_pretty(p, op);
  case OP_FUNC_CALL: return pr_call(p, op);
  case OP_DOT_GENERAL: return pr_dot_general(p, op);
  case OP_REDUCE: return pr_reduce(p, op);
  case OP_WHILE: return pr_while(p, op);
  case OP_DYNAMIC_BROADCAST_IN_DIM:
    return op->num_operands == 2 &&
           pr_with_list(p, op, "broadcast_dimensions", "dims", false);
  case OP_FFT: return pr_fft(p, op);
  case OP_RNG_BIT_GENERATOR: return pr_rng_bit_generator(p, op);
  case OP_OPTIMIZATION_BARRIER: return pr_optimization_barrier(p, op);
  case OP_CHLO_TOP_K: return pr_top_k(p, op);
  case OP_CHLO_SCAN: return pr_scan(p, op);
  case OP_CONVOLUTION: return pr_convolution(p, op);
  case OP_AFTER_ALL:
  case OP_REPLICA_ID:
  case OP_PARTITION_ID:
    if (!simple(op) || op->num_attrs || !all_types_equal(op)) return false;
    head(p, op);
    sb_puts(p->b, " : ");
    print_type(p->b, op->results[0].type);
    return true;
  case OP_RESHAPE:
  case OP_UNIFORM_QUANTIZE:
  case OP_UNIFORM_DEQUANTIZE:
  case OP_DYNAMIC_RESHAPE:
  case OP_DYNAMIC_UPDATE_SLICE:
  case OP_REAL_DYNAMIC_SLICE:
  case OP_DYNAMIC_PAD:
    if (!simple(op) || !op->num_operands || op->num_attrs) return false;
    head(p, op);
    func_type_suffix(p, op);
    return true;
  case OP_CHECK_EXPECT_EQ_CONST:
  case OP_CHECK_EXPECT_ALMOST_EQ_CONST: return pr_check_const(p, op);
  case OP_CHECK_EXPECT_EQ:
  case OP_CHECK_EXPECT_ALMOST_EQ: return pr_check_pair(p, op);
  case OP_INTERP_PROBE:
  case OP_CHECK_EXPECT_SERIALIZED_EQ: return pr_probe(p, op);
  default: break;
  }
  if ((op_flags(c) & OPF_CHLO) && (op_flags(c) & OPF_ELEMENTWISE)) return pr_chlo_unary(p, op);
  if (c == OP_CHLO_NEXT_AFTER || c == OP_CHLO_POLYGAMMA || c == OP_CHLO_ZETA)
    return pr_chlo_binary(p, op);
  if (is_same_type_op(c)) {
    if (!simple(op) || !op->num_operands || op->num_attrs) return false;
    head(p, op);
    /* bitcast_convert's format is functional-type(operands, results) */
    if (c == OP_BITCAST_CONVERT) func_type_suffix(p, op);
    else same_type_suffix(p, op);
    return true;
  }
  return false;
}
