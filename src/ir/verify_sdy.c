/* verify_sdy.c — checks of Shardy (`sdy`) meshes, shardings and ops; see
 * verify_sdy.h. Constraint id "SDY" (Shardy's verifiers, openxla/shardy
 * sdy/ir/verifiers.cc, are the reference for what is checked). */
#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include "ir/verify_sdy.h"

static hlo_status fail(const hlo_loc *loc, const char *who, const char *fmt, ...) HLO_PRINTF(3, 4);
static hlo_status fail(const hlo_loc *loc, const char *who, const char *fmt, ...) {
  char msg[400];
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(msg, sizeof msg, fmt, ap);
  va_end(ap);
  return status_at(HLO_VERIFY_ERROR, loc, "%s (SDY): %s", who, msg);
}

bool op_is_sdy(hlo_opcode c) {
  switch (c) {
    case OP_SDY_SHARDING_CONSTRAINT: case OP_SDY_RESHARD: case OP_SDY_SHARDING_GROUP:
    case OP_SDY_PROPAGATION_BARRIER: case OP_SDY_MANUAL_COMPUTATION:
    case OP_SDY_NAMED_COMPUTATION: case OP_SDY_RETURN:
      return true;
    default: return false;
  }
}

static int64_t axis_size(const sdy_mesh *m, const char *name) {
  for (uint32_t i = 0; i < m->num_axes; i++)
    if (!strcmp(m->axis_names[i], name)) return m->axis_sizes[i];
  return -1;
}

static hlo_status check_mesh(const hlo_loc *loc, const char *who, const sdy_mesh *m) {
  for (uint32_t i = 0; i < m->num_axes; i++) {
    if (m->axis_sizes[i] < 1)
      return fail(loc, who, "mesh axis \"%s\" has size %lld; sizes must be positive", m->axis_names[i],
                  (long long)m->axis_sizes[i]);
    for (uint32_t k = 0; k < i; k++)
      if (!strcmp(m->axis_names[k], m->axis_names[i]))
        return fail(loc, who, "mesh axis \"%s\" appears twice", m->axis_names[i]);
  }
  int64_t n = sdy_mesh_num_devices(m);
  if (n < 0) return fail(loc, who, "the mesh's device count overflows");
  if (m->num_device_ids) {
    if (m->num_axes && (int64_t)m->num_device_ids != n)
      return fail(loc, who, "device_ids lists %u ids but the mesh has %lld devices", m->num_device_ids,
                  (long long)n);
    if (!m->num_axes && m->num_device_ids != 1)
      return fail(loc, who, "a maximal mesh (no axes) takes exactly one device id, got %u",
                  m->num_device_ids);
    for (uint32_t i = 0; i < m->num_device_ids; i++) {
      if (m->device_ids[i] < 0)
        return fail(loc, who, "device id %lld is negative", (long long)m->device_ids[i]);
      for (uint32_t k = 0; k < i; k++)
        if (m->device_ids[k] == m->device_ids[i])
          return fail(loc, who, "device id %lld appears twice", (long long)m->device_ids[i]);
    }
  }
  return NULL;
}

/* One axis reference of a sharding: exists, sub-axis divides, not repeated
 * (seen/nseen: the references so far). */
static hlo_status check_axis(const hlo_loc *loc, const char *who, const char *what, const sdy_mesh *m,
                             const sdy_axis_ref *r, const sdy_axis_ref **seen, uint32_t *nseen) {
  int64_t sz = axis_size(m, r->name);
  if (sz < 0) return fail(loc, who, "%s: axis \"%s\" is not an axis of the mesh", what, r->name);
  if (r->size) {
    /* Shardy's rules for a sub-axis "x":(pre)size: pre >= 1, size > 1, pre*size divides the
     * axis, and the sub-axis is not the whole axis. */
    if (r->pre_size < 1)
      return fail(loc, who, "%s: sub-axis pre-size must be at least 1: \"%s\":(%lld)%lld", what, r->name,
                  (long long)r->pre_size, (long long)r->size);
    if (r->size <= 1)
      return fail(loc, who, "%s: sub-axis sizes must be greater than 1: \"%s\":(%lld)%lld", what, r->name,
                  (long long)r->pre_size, (long long)r->size);
    if (r->pre_size == 1 && r->size == sz)
      return fail(loc, who, "%s: sub-axis size is equal to the full axis size: \"%s\":(%lld)%lld", what,
                  r->name, (long long)r->pre_size, (long long)r->size);
    if (sz % r->pre_size || (sz / r->pre_size) % r->size)
      return fail(loc, who, "%s: sub-axis \"%s\":(%lld)%lld does not divide the axis of size %lld", what, r->name,
                  (long long)r->pre_size, (long long)r->size, (long long)sz);
  }
  for (uint32_t k = 0; k < *nseen; k++) {
    const sdy_axis_ref *o = seen[k];
    if (strcmp(o->name, r->name)) continue;
    /* two sub-axes of one axis may be used if they do not overlap */
    bool overlap = !o->size || !r->size ||
                   (o->pre_size < r->pre_size * r->size && r->pre_size < o->pre_size * o->size);
    if (overlap) return fail(loc, who, "%s: axis \"%s\" is used more than once in a sharding", what, r->name);
  }
  if (*nseen < 64) seen[(*nseen)++] = r;
  return NULL;
}

/* Sharding `s` of a value of type `t` (`what` names the value). */
static hlo_status check_sharding(const hlo_module_ir *mod, const hlo_loc *loc, const char *who,
                                 const char *what, const sdy_sharding *s, const hlo_type *t) {
  const sdy_mesh *m = sdy_sharding_mesh(mod, s);
  if (!m) return fail(loc, who, "%s: the sharding's mesh @%s is not defined (no `sdy.mesh @%s`)", what,
                      s->mesh_name ? s->mesh_name : "?", s->mesh_name ? s->mesh_name : "?");
  if (s->mesh) HLO_TRY(check_mesh(loc, who, s->mesh));
  /* a sharding over a maximal mesh (no axes) lists no dimensions, whatever
   * the rank (Shardy: a maximal sharding puts the whole value on one device) */
  bool maximal = m->num_axes == 0 && s->rank == 0;
  if (t && t->kind == TYPE_TENSOR && s->rank != t->rank && !maximal)
    return fail(loc, who, "%s: the sharding has %u dimension(s) but the tensor has rank %u", what, s->rank,
                t->rank);
  if (t && t->kind != TYPE_TENSOR && s->rank)
    return fail(loc, who, "%s: a sharding of a non-tensor value must have no dimensions", what);
  const sdy_axis_ref *seen[64];
  uint32_t ns = 0;
  for (uint32_t d = 0; d < s->rank; d++)
    for (uint32_t i = 0; i < s->dims[d].num_axes; i++)
      HLO_TRY(check_axis(loc, who, what, m, &s->dims[d].axes[i], seen, &ns));
  for (uint32_t i = 0; i < s->num_replicated; i++)
    HLO_TRY(check_axis(loc, who, what, m, &s->replicated[i], seen, &ns));
  for (uint32_t i = 0; i < s->num_unreduced; i++)
    HLO_TRY(check_axis(loc, who, what, m, &s->unreduced[i], seen, &ns));
  return NULL;
}

static hlo_status check_sharding_attr(const hlo_module_ir *mod, const hlo_loc *loc, const char *who,
                                      const char *what, const hlo_attr *a, const hlo_type *t) {
  if (a->kind != ATTR_SDY || a->u.sdy->kind != SDY_SHARDING)
    return fail(loc, who, "%s: `sdy.sharding` must be a #sdy.sharding<...>", what);
  return check_sharding(mod, loc, who, what, a->u.sdy->shardings[0], t);
}

/* A GSPMD `mhlo.sharding` string of a value of type `t` (NULL: any). */
static hlo_status check_gspmd(const hlo_loc *loc, const char *who, const char *what, const hlo_attr *a,
                              const hlo_type *t, uint32_t num_values) {
  if (a->kind != ATTR_STRING)
    return status_at(HLO_VERIFY_ERROR, loc, "%s (GSPMD): %s: `mhlo.sharding` must be a string", who, what);
  arena ar;
  arena_init(&ar);
  gspmd_sharding g;
  hlo_status st = gspmd_sharding_parse(&ar, a->u.str.s, a->u.str.len, &g);
  if (st) {
    hlo_status e = status_at(hlo_status_code_of(st) == HLO_RESOURCE_EXHAUSTED ? HLO_RESOURCE_EXHAUSTED
                                                                               : HLO_VERIFY_ERROR,
                             loc, "%s (GSPMD): %s: %s in \"%.80s\"", who, what, hlo_status_message(st),
                             a->u.str.s);
    hlo_status_free(st);
    arena_deinit(&ar);
    return e;
  }
  if (g.kind == GSPMD_TILED && t && t->kind == TYPE_TENSOR) {
    uint32_t data_rank = g.rank - (g.last_tile_dim_replicate ? 1u : 0u) - g.num_subgroups;
    if (data_rank != t->rank)
      st = status_at(HLO_VERIFY_ERROR, loc, "%s (GSPMD): %s: the sharding tiles %u dimension(s) but the "
                     "tensor has rank %u", who, what, data_rank, t->rank);
  }
  if (!st && g.kind == GSPMD_TUPLE && num_values > 1 && g.num_elems != num_values)
    st = status_at(HLO_VERIFY_ERROR, loc, "%s (GSPMD): %s: a tuple sharding of %u element(s) for %u "
                   "values", who, what, g.num_elems, num_values);
  arena_deinit(&ar);
  return st;
}

hlo_status verify_sdy_module(const hlo_module_ir *m) {
  for (uint32_t i = 0; i < m->num_meshes; i++) {
    char who[96];
    snprintf(who, sizeof who, "sdy.mesh @%.60s", m->meshes[i].name);
    HLO_TRY(check_mesh(&m->meshes[i].loc, who, m->meshes[i].mesh));
  }
  return NULL;
}

hlo_status verify_sdy_func(const hlo_module_ir *m, const hlo_func *f) {
  char what[64];
  for (uint32_t i = 0; i < f->num_args; i++) {
    if (!f->arg_attrs) break;
    for (uint32_t k = 0; k < f->arg_attrs[i].n; k++) {
      const char *an = f->arg_attrs[i].items[k].name;
      bool sdy = !strcmp(an, "sdy.sharding"), gspmd = !strcmp(an, "mhlo.sharding");
      if (!sdy && !gspmd) continue;
      snprintf(what, sizeof what, "argument #%u", i);
      const hlo_type *t = f->body.block.num_args > i ? f->body.block.args[i].type : NULL;
      const hlo_loc *loc = t && f->body.block.args[i].loc.line ? &f->body.block.args[i].loc : &f->loc;
      if (sdy) HLO_TRY(check_sharding_attr(m, loc, "func", what, f->arg_attrs[i].items[k].value, t));
      else HLO_TRY(check_gspmd(loc, "func", what, f->arg_attrs[i].items[k].value, t, 1));
    }
  }
  for (uint32_t i = 0; i < f->num_results; i++) {
    if (!f->result_attrs) break;
    for (uint32_t k = 0; k < f->result_attrs[i].n; k++) {
      const char *an = f->result_attrs[i].items[k].name;
      snprintf(what, sizeof what, "result #%u", i);
      if (!strcmp(an, "sdy.sharding"))
        HLO_TRY(check_sharding_attr(m, &f->loc, "func", what, f->result_attrs[i].items[k].value,
                                    f->result_types[i]));
      else if (!strcmp(an, "mhlo.sharding"))
        HLO_TRY(check_gspmd(&f->loc, "func", what, f->result_attrs[i].items[k].value, f->result_types[i], 1));
    }
  }
  return NULL;
}

/* A #sdy.sharding_per_value with one sharding per value of `types`. */
static hlo_status check_per_value(const hlo_module_ir *m, const hlo_op *op, const char *name,
                                  const hlo_attr *a, uint32_t n, hlo_value *const *vals,
                                  const hlo_value *res) {
  const char *who = op_name(op->opcode);
  if (a->kind != ATTR_SDY || a->u.sdy->kind != SDY_SHARDING_PER_VALUE)
    return fail(&op->loc, who, "`%s` must be a list of shardings (#sdy.sharding_per_value)", name);
  if (a->u.sdy->n != n)
    return fail(&op->loc, who, "`%s` has %u sharding(s) for %u value(s)", name, a->u.sdy->n, n);
  for (uint32_t i = 0; i < n; i++) {
    char what[64];
    snprintf(what, sizeof what, "%.24s #%u", name, i);
    const hlo_type *t = vals ? vals[i]->type : res[i].type;
    HLO_TRY(check_sharding(m, &op->loc, who, what, a->u.sdy->shardings[i], t));
  }
  return NULL;
}

hlo_status verify_sdy_op_attrs(const hlo_module_ir *m, const hlo_op *op) {
  const hlo_attr *gs = op_attr(op, "mhlo.sharding");
  if (gs)
    HLO_TRY(check_gspmd(&op->loc, op_name(op->opcode), "mhlo.sharding", gs,
                        op->num_results == 1 ? op->results[0].type : NULL, op->num_results));
  const hlo_attr *a = op_attr(op, "sdy.sharding");
  if (!a) return NULL;
  /* an op without results may carry one sharding for the op itself (a
   * maximal sharding, as JAX puts on host callbacks) */
  if (!op->num_results && a->kind == ATTR_SDY && a->u.sdy->kind == SDY_SHARDING_PER_VALUE &&
      a->u.sdy->n == 1)
    return check_sharding(m, &op->loc, op_name(op->opcode), "sdy.sharding", a->u.sdy->shardings[0], NULL);
  return check_per_value(m, op, "sdy.sharding", a, op->num_results, NULL, op->results);
}

/* The local (per-device) type of `t` under sharding `s` for the manual axes
 * `ax`: each dimension divided by the product of its manual axes' sizes.
 * Writes the dims to `out`; error when a size does not divide. */
static hlo_status local_dims(const hlo_module_ir *m, const hlo_op *op, const char *what,
                             const sdy_sharding *s, const sdy_attr *ax, const hlo_type *t,
                             int64_t *out) {
  const sdy_mesh *mesh = sdy_sharding_mesh(m, s);
  for (uint32_t d = 0; d < t->rank; d++) {
    int64_t f = 1;
    for (uint32_t i = 0; d < s->rank && i < s->dims[d].num_axes; i++) {
      const sdy_axis_ref *r = &s->dims[d].axes[i];
      bool manual = false;
      for (uint32_t k = 0; k < ax->n; k++)
        if (!strcmp(ax->axes[k], r->name)) manual = true;
      if (!manual) continue;
      int64_t sz = r->size ? r->size : axis_size(mesh, r->name);
      if (sz > 0 && f <= INT64_MAX / sz) f *= sz;
    }
    if (t->dims[d] < 0) { out[d] = t->dims[d]; continue; }
    if (t->dims[d] % f)
      return fail(&op->loc, op_name(op->opcode), "%s: dimension %u of size %lld is not divisible by "
                  "its manual axes' size %lld", what, d, (long long)t->dims[d], (long long)f);
    out[d] = t->dims[d] / f;
  }
  return NULL;
}

static hlo_status check_local(const hlo_module_ir *m, const hlo_op *op, const char *what,
                              const sdy_sharding *s, const sdy_attr *ax, const hlo_type *global,
                              const hlo_type *local) {
  if (global->kind != TYPE_TENSOR || local->kind != TYPE_TENSOR) return NULL;
  if (global->rank != local->rank || global->dtype != local->dtype)
    return fail(&op->loc, op_name(op->opcode), "%s: the local type must have the global type's rank "
                "and element type", what);
  int64_t dims[64];
  if (global->rank > 64) return NULL;
  HLO_TRY(local_dims(m, op, what, s, ax, global, dims));
  for (uint32_t d = 0; d < global->rank; d++)
    if (dims[d] != local->dims[d])
      return fail(&op->loc, op_name(op->opcode), "%s: dimension %u has local size %lld but the "
                  "sharding over the manual axes gives %lld", what, d, (long long)local->dims[d],
                  (long long)dims[d]);
  return NULL;
}

static hlo_status verify_computation(const hlo_module_ir *m, const hlo_op *op, bool manual) {
  const char *who = op_name(op->opcode);
  if (op->num_regions != 1) return fail(&op->loc, who, "expects one region");
  const hlo_block *b = &op->regions[0].block;
  if (b->num_args != op->num_operands)
    return fail(&op->loc, who, "the region has %u argument(s) for %u operand(s)", b->num_args,
                op->num_operands);
  const hlo_op *ret = b->last;
  if (!ret || ret->opcode != OP_SDY_RETURN) return fail(&op->loc, who, "the region must end with sdy.return");
  if (ret->num_operands != op->num_results)
    return fail(&ret->loc, who, "sdy.return returns %u value(s) for %u result(s)", ret->num_operands,
                op->num_results);
  const hlo_attr *in = op_attr(op, "in_shardings"), *out = op_attr(op, "out_shardings");
  if (in) HLO_TRY(check_per_value(m, op, "in_shardings", in, op->num_operands, op->operands, NULL));
  if (out) HLO_TRY(check_per_value(m, op, "out_shardings", out, op->num_results, NULL, op->results));
  if (!manual) {
    const hlo_attr *nm = op_attr(op, "name");
    if (!nm || nm->kind != ATTR_STRING) return fail(&op->loc, who, "expects a string `name`");
    for (uint32_t i = 0; i < b->num_args; i++)
      if (!type_equal(b->args[i].type, op->operands[i]->type))
        return fail(&op->loc, who, "region argument #%u's type differs from operand #%u's", i, i);
    for (uint32_t i = 0; i < op->num_results; i++)
      if (!type_equal(ret->operands[i]->type, op->results[i].type))
        return fail(&ret->loc, who, "sdy.return operand #%u's type differs from result #%u's", i, i);
    return NULL;
  }
  if (!in || !out) return fail(&op->loc, who, "expects in_shardings and out_shardings");
  const hlo_attr *axa = op_attr(op, "manual_axes");
  if (!axa || axa->kind != ATTR_SDY || axa->u.sdy->kind != SDY_AXES)
    return fail(&op->loc, who, "expects manual_axes={...}");
  const sdy_attr *ax = axa->u.sdy;
  const sdy_sharding *any = op->num_operands ? in->u.sdy->shardings[0]
                            : op->num_results ? out->u.sdy->shardings[0] : NULL;
  const sdy_mesh *mesh = any ? sdy_sharding_mesh(m, any) : NULL;
  for (uint32_t k = 0; k < ax->n && mesh; k++) {
    if (axis_size(mesh, ax->axes[k]) < 0)
      return fail(&op->loc, who, "manual axis \"%s\" is not an axis of the mesh", ax->axes[k]);
    for (uint32_t j = 0; j < k; j++)
      if (!strcmp(ax->axes[j], ax->axes[k]))
        return fail(&op->loc, who, "manual axis \"%s\" appears twice", ax->axes[k]);
  }
  for (uint32_t i = 0; i < op->num_operands; i++) {
    const sdy_sharding *s = in->u.sdy->shardings[i];
    if (any && sdy_sharding_mesh(m, s) != mesh)
      return fail(&op->loc, who, "all in/out shardings must use one mesh");
    char what[48];
    snprintf(what, sizeof what, "region argument #%u", i);
    HLO_TRY(check_local(m, op, what, s, ax, op->operands[i]->type, b->args[i].type));
  }
  for (uint32_t i = 0; i < op->num_results; i++) {
    const sdy_sharding *s = out->u.sdy->shardings[i];
    if (any && sdy_sharding_mesh(m, s) != mesh)
      return fail(&op->loc, who, "all in/out shardings must use one mesh");
    char what[48];
    snprintf(what, sizeof what, "sdy.return operand #%u", i);
    HLO_TRY(check_local(m, op, what, s, ax, op->results[i].type, ret->operands[i]->type));
  }
  return NULL;
}

hlo_status verify_sdy_op(const hlo_module_ir *m, const hlo_op *op) {
  const char *who = op_name(op->opcode);
  switch (op->opcode) {
    case OP_SDY_SHARDING_CONSTRAINT:
    case OP_SDY_RESHARD:
    case OP_SDY_PROPAGATION_BARRIER: {
      if (op->num_operands != 1 || op->num_results != 1 || op->num_regions)
        return fail(&op->loc, who, "expects one operand and one result");
      if (!type_equal(op->operands[0]->type, op->results[0].type))
        return fail(&op->loc, who, "the result's type must equal the operand's");
      if (op->opcode == OP_SDY_PROPAGATION_BARRIER) {
        const hlo_attr *d = op_attr(op, "allowed_direction");
        static const char *const ok[] = {"NONE", "FORWARD", "BACKWARD", "BOTH"};
        bool good = false;
        for (int i = 0; d && d->kind == ATTR_ENUM && i < 4; i++)
          if (!strcmp(d->u.en.value, ok[i])) good = true;
        if (!good) return fail(&op->loc, who, "allowed_direction must be NONE, FORWARD, BACKWARD or BOTH");
        return NULL;
      }
      const hlo_attr *s = op_attr(op, "sharding");
      if (!s || s->kind != ATTR_SDY || s->u.sdy->kind != SDY_SHARDING)
        return fail(&op->loc, who, "expects a sharding <@mesh, [...]>");
      return check_sharding(m, &op->loc, who, "result", s->u.sdy->shardings[0], op->results[0].type);
    }
    case OP_SDY_SHARDING_GROUP: {
      if (op->num_operands != 1 || op->num_results || op->num_regions)
        return fail(&op->loc, who, "expects one operand and no results");
      const hlo_attr *g = op_attr(op, "group_id");
      if (!g || g->kind != ATTR_INT || g->u.i.v < 0)
        return fail(&op->loc, who, "expects a non-negative integer group_id");
      return NULL;
    }
    case OP_SDY_MANUAL_COMPUTATION: return verify_computation(m, op, true);
    case OP_SDY_NAMED_COMPUTATION: return verify_computation(m, op, false);
    case OP_SDY_RETURN: {
      const hlo_op *p = op->parent && op->parent->parent ? op->parent->parent->parent : NULL;
      if (!p || (p->opcode != OP_SDY_MANUAL_COMPUTATION && p->opcode != OP_SDY_NAMED_COMPUTATION))
        return fail(&op->loc, who, "sdy.return must end the region of sdy.manual_computation or "
                    "sdy.named_computation");
      return NULL;
    }
    default: return NULL;
  }
}
