/* print_sdy.c — printing the Shardy (`sdy`) dialect the way Shardy's own
 * printer does (JAX's text): meshes, shardings, the sdy ops' pretty forms,
 * module-level `sdy.mesh` declarations; and the trailing resource section
 * `{-# dialect_resources: {...} #-}` of dense_resource literals. */
#include <inttypes.h>
#include <string.h>
#include "ir/print_internal.h"

static void axis_ref(strbuf *b, const sdy_axis_ref *r) {
  print_string(b, r->name, strlen(r->name));
  if (r->size) sb_printf(b, ":(%" PRId64 ")%" PRId64, r->pre_size, r->size);
}

static void axis_refs(strbuf *b, const sdy_axis_ref *r, uint32_t n, bool open) {
  sb_putc(b, '{');
  for (uint32_t i = 0; i < n; i++) {
    if (i) sb_puts(b, ", ");
    axis_ref(b, &r[i]);
  }
  if (open) sb_puts(b, n ? ", ?" : "?");
  sb_putc(b, '}');
}

void print_sdy_mesh(strbuf *b, const sdy_mesh *m) {
  sb_puts(b, "<[");
  for (uint32_t i = 0; i < m->num_axes; i++) {
    if (i) sb_puts(b, ", ");
    print_string(b, m->axis_names[i], strlen(m->axis_names[i]));
    sb_printf(b, "=%" PRId64, m->axis_sizes[i]);
  }
  sb_putc(b, ']');
  if (m->num_device_ids) {
    sb_puts(b, ", device_ids=");
    print_int_list(b, m->device_ids, m->num_device_ids);
  }
  sb_putc(b, '>');
}

void print_sdy_sharding(strbuf *b, const sdy_sharding *s) {
  sb_putc(b, '<');
  if (s->mesh_name) {
    print_flat_symbol(b, s->mesh_name, strlen(s->mesh_name));
  } else if (s->mesh) {
    sb_puts(b, "mesh");
    print_sdy_mesh(b, s->mesh);
  }
  sb_puts(b, ", [");
  for (uint32_t i = 0; i < s->rank; i++) {
    if (i) sb_puts(b, ", ");
    axis_refs(b, s->dims[i].axes, s->dims[i].num_axes, s->dims[i].is_open);
    if (s->dims[i].priority >= 0) sb_printf(b, "p%" PRId64, s->dims[i].priority);
  }
  sb_putc(b, ']');
  if (s->num_replicated) {
    sb_puts(b, ", replicated=");
    axis_refs(b, s->replicated, s->num_replicated, false);
  }
  if (s->num_unreduced) {
    sb_puts(b, ", unreduced=");
    axis_refs(b, s->unreduced, s->num_unreduced, false);
  }
  sb_putc(b, '>');
}

static void sharding_list(strbuf *b, const sdy_attr *a) {
  sb_putc(b, '[');
  for (uint32_t i = 0; i < a->n; i++) {
    if (i) sb_puts(b, ", ");
    print_sdy_sharding(b, a->shardings[i]);
  }
  sb_putc(b, ']');
}

static void axes_list(strbuf *b, const sdy_attr *a) {
  sb_putc(b, '{');
  for (uint32_t i = 0; i < a->n; i++) {
    if (i) sb_puts(b, ", ");
    print_string(b, a->axes[i], strlen(a->axes[i]));
  }
  sb_putc(b, '}');
}

void print_sdy_attr(strbuf *b, const sdy_attr *a) {
  switch (a->kind) {
  case SDY_MESH: sb_puts(b, "#sdy.mesh"); print_sdy_mesh(b, a->mesh); return;
  case SDY_SHARDING: sb_puts(b, "#sdy.sharding"); print_sdy_sharding(b, a->shardings[0]); return;
  case SDY_SHARDING_PER_VALUE:
    sb_puts(b, "#sdy.sharding_per_value<");
    sharding_list(b, a);
    sb_putc(b, '>');
    return;
  case SDY_AXES: sb_puts(b, "#sdy<manual_axes"); axes_list(b, a); sb_putc(b, '>'); return;
  }
}

/* ------------------------------------------------------------------ ops */

static const sdy_attr *sdy_of(const hlo_op *op, const char *name, sdy_attr_kind k) {
  const hlo_attr *a = op_attr(op, name);
  return a && a->kind == ATTR_SDY && a->u.sdy->kind == k ? a->u.sdy : NULL;
}

/* The trailing `{...}` of the attributes not in `skip`. */
static void rest_attrs(printer *p, const hlo_op *op, const char *const *skip) {
  uint32_t k = 0;
  for (uint32_t i = 0; i < op->num_attrs; i++) {
    bool s = false;
    for (const char *const *q = skip; *q; q++)
      if (!strcmp(op->attrs[i].name, *q)) s = true;
    if (s) continue;
    sb_puts(p->b, k++ ? ", " : " {");
    print_name(p->b, op->attrs[i].name);
    if (op->attrs[i].value && op->attrs[i].value->kind != ATTR_UNIT) {
      sb_puts(p->b, " = ");
      print_attr(p->b, op->attrs[i].value);
    }
  }
  if (k) sb_putc(p->b, '}');
}

static bool one_in_one_out(const hlo_op *op) {
  return op->num_operands == 1 && op->num_results == 1 && !op->num_regions &&
         type_equal(op->operands[0]->type, op->results[0].type);
}

/* `(%a, %b) ... (%arg1: T) { body }` region with its arguments named first. */
static void body(printer *p, const hlo_op *op) {
  const hlo_block *blk = &op->regions[0].block;
  sb_puts(p->b, " (");
  for (uint32_t i = 0; i < blk->num_args; i++) {
    if (i) sb_puts(p->b, ", ");
    pr_bind_arg(p, &blk->args[i]);
    pr_value(p, &blk->args[i]);
    sb_puts(p->b, ": ");
    print_type(p->b, blk->args[i].type);
  }
  sb_puts(p->b, ") {");
  pr_block_ops(p, blk, p->indent + 2);
  pr_newline(p);
  sb_putc(p->b, '}');
}

bool pr_sdy_pretty(printer *p, const hlo_op *op) {
  strbuf *b = p->b;
  switch (op->opcode) {
  case OP_SDY_SHARDING_CONSTRAINT:
  case OP_SDY_RESHARD: {
    const sdy_attr *s = sdy_of(op, "sharding", SDY_SHARDING);
    if (!s || !one_in_one_out(op)) return false;
    sb_puts(b, op_name(op->opcode));
    sb_putc(b, ' ');
    pr_value(p, op->operands[0]);
    sb_putc(b, ' ');
    print_sdy_sharding(b, s->shardings[0]);
    static const char *const skip[] = {"sharding", NULL};
    rest_attrs(p, op, skip);
    sb_puts(b, " : ");
    print_type(b, op->results[0].type);
    return true;
  }
  case OP_SDY_SHARDING_GROUP: {
    const hlo_attr *g = op_attr(op, "group_id");
    if (!g || g->kind != ATTR_INT || op->num_operands != 1 || op->num_results || op->num_regions)
      return false;
    sb_puts(b, "sdy.sharding_group ");
    pr_value(p, op->operands[0]);
    sb_printf(b, " group_id=%" PRId64, g->u.i.v);
    static const char *const skip[] = {"group_id", NULL};
    rest_attrs(p, op, skip);
    sb_puts(b, " : ");
    print_type(b, op->operands[0]->type);
    return true;
  }
  case OP_SDY_PROPAGATION_BARRIER: {
    const hlo_attr *d = op_attr(op, "allowed_direction");
    if (!d || d->kind != ATTR_ENUM || !one_in_one_out(op)) return false;
    sb_puts(b, "sdy.propagation_barrier ");
    pr_value(p, op->operands[0]);
    sb_printf(b, " allowed_direction=%s", d->u.en.value);
    static const char *const skip[] = {"allowed_direction", NULL};
    rest_attrs(p, op, skip);
    sb_puts(b, " : ");
    print_type(b, op->results[0].type);
    return true;
  }
  case OP_SDY_MANUAL_COMPUTATION:
  case OP_SDY_NAMED_COMPUTATION: {
    bool manual = op->opcode == OP_SDY_MANUAL_COMPUTATION;
    const sdy_attr *in = sdy_of(op, "in_shardings", SDY_SHARDING_PER_VALUE);
    const sdy_attr *out = sdy_of(op, "out_shardings", SDY_SHARDING_PER_VALUE);
    const sdy_attr *ax = sdy_of(op, "manual_axes", SDY_AXES);
    const hlo_attr *nm = op_attr(op, "name");
    if (op->num_regions != 1) return false;
    if (manual && (!in || !out || !ax)) return false;
    if (!manual && (!nm || nm->kind != ATTR_STRING)) return false;
    if ((op_attr(op, "in_shardings") && !in) || (op_attr(op, "out_shardings") && !out)) return false;
    sb_puts(b, op_name(op->opcode));
    if (!manual) {
      sb_putc(b, '<');
      print_string(b, nm->u.str.s, nm->u.str.len);
      sb_putc(b, '>');
    }
    sb_putc(b, '(');
    pr_values(p, op->operands, op->num_operands);
    sb_putc(b, ')');
    if (in) { sb_puts(b, " in_shardings="); sharding_list(b, in); }
    if (out) { sb_puts(b, " out_shardings="); sharding_list(b, out); }
    if (ax) { sb_puts(b, " manual_axes="); axes_list(b, ax); }
    body(p, op);
    static const char *const skip[] = {"name", "in_shardings", "out_shardings", "manual_axes", NULL};
    rest_attrs(p, op, skip);
    sb_puts(b, " : ");
    pr_func_type(p, op);
    return true;
  }
  default: return false;
  }
}

/* ------------------------------------------------------- module level */

void print_sdy_meshes(strbuf *b, const hlo_module_ir *m) {
  for (uint32_t i = 0; i < m->num_meshes; i++) {
    const sdy_mesh_decl *d = &m->meshes[i];
    sb_puts(b, "  sdy.mesh ");
    print_flat_symbol(b, d->name, strlen(d->name));
    sb_puts(b, " = ");
    print_sdy_mesh(b, d->mesh);
    if (d->attrs.n) {
      sb_putc(b, ' ');
      print_attr_dict(b, d->attrs.items, d->attrs.n);
    }
    sb_putc(b, '\n');
  }
}

void print_resources(strbuf *b, const hlo_module_ir *m) {
  if (!m->num_resources) return;
  const hlo_resource *r = m->resources;
  uint32_t n = m->num_resources;
  sb_puts(b, "\n{-#\n");
  /* entries grouped by section, then dialect, in order of first appearance */
  for (uint32_t i = 0; i < n; i++) {
    bool first_sec = true;
    for (uint32_t k = 0; k < i; k++)
      if (!strcmp(r[k].section, r[i].section)) first_sec = false;
    if (!first_sec) continue;
    if (i) sb_puts(b, ",\n");
    sb_printf(b, "  ");
    print_name(b, r[i].section);
    sb_puts(b, ": {\n");
    bool any_d = false;
    for (uint32_t j = i; j < n; j++) {
      if (strcmp(r[j].section, r[i].section)) continue;
      bool first_d = true;
      for (uint32_t k = i; k < j; k++)
        if (!strcmp(r[k].section, r[j].section) && !strcmp(r[k].dialect, r[j].dialect)) first_d = false;
      if (!first_d) continue;
      if (any_d) sb_puts(b, ",\n");
      any_d = true;
      sb_puts(b, "    ");
      print_name(b, r[j].dialect);
      sb_puts(b, ": {\n");
      bool any_e = false;
      for (uint32_t e = j; e < n; e++) {
        if (strcmp(r[e].section, r[j].section) || strcmp(r[e].dialect, r[j].dialect)) continue;
        if (any_e) sb_puts(b, ",\n");
        any_e = true;
        sb_puts(b, "      ");
        print_name(b, r[e].key);
        sb_puts(b, ": ");
        print_string(b, r[e].text, strlen(r[e].text));
      }
      sb_puts(b, "\n    }");
    }
    sb_puts(b, "\n  }");
  }
  sb_puts(b, "\n#-}\n");
}
