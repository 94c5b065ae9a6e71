/* parse_sdy.c — the Shardy (`sdy`) dialect's syntax: module-level
 * `sdy.mesh @name = <...>`, the attributes `#sdy.mesh<...>`,
 * `#sdy.sharding<...>`, `#sdy.sharding_per_value<[...]>`, and the pretty
 * forms of the sdy ops (sharding_constraint, reshard, sharding_group,
 * propagation_barrier, manual_computation, named_computation, return).
 * Everything is stored structured (ir.h's sdy_* types, ATTR_SDY), so a later
 * SPMD partitioner reads meshes and per-dimension axes, not text. Grammar:
 * Shardy's attribute and op assembly formats (openxla/shardy, sdy/ir). */
#include <string.h>
#include "parse/parse_internal.h"

static hlo_attr *mk_sdy(pstate *ps, sdy_attr *s) {
  hlo_attr *a = ps_alloc(ps, sizeof *a);
  if (!a) return NULL;
  a->kind = ATTR_SDY;
  a->u.sdy = s;
  return a;
}

/* `"x"` or `"x":(1)2`. */
static bool axis_ref(pstate *ps, sdy_axis_ref *out) {
  ps_ws(ps);
  if (ps_peek(ps) != '"') return ps_err(ps, ps->pos, "expected axis name string, got '%s'", ps_tok(ps, ps->pos));
  char *s;
  size_t l;
  TRY(ps_string(ps, &s, &l));
  out->name = s;
  out->pre_size = out->size = 0;
  if (ps->pos < ps->end && ps->s[ps->pos] == ':') {
    ps->pos++;
    size_t p = ps->pos;
    TRY(ps_expect(ps, '(', "sub-axis"));
    TRY(ps_int(ps, &out->pre_size, "sub-axis pre-size"));
    TRY(ps_expect(ps, ')', "sub-axis"));
    TRY(ps_int(ps, &out->size, "sub-axis size"));
    if (out->pre_size < 1 || out->size < 1)
      return ps_err(ps, p, "sub-axis sizes must be positive");
  }
  return true;
}

/* `{"a", "b"}` (cursor at '{'); `allow_open` accepts a trailing `?`. */
static bool axis_list(pstate *ps, sdy_axis_ref **out, uint32_t *n, bool allow_open, bool *is_open) {
  uint32_t cap = 0;
  *out = NULL;
  *n = 0;
  if (is_open) *is_open = false;
  TRY(ps_expect(ps, '{', "axis list"));
  if (ps_accept(ps, '}')) return true;
  do {
    if (allow_open && ps_peek(ps) == '?') {
      ps->pos++;
      *is_open = true;
      break;
    }
    sdy_axis_ref *r = ps_vec_push(ps, (void **)out, n, &cap, sizeof *r);
    if (!r) return false;
    TRY(axis_ref(ps, r));
  } while (ps_accept(ps, ','));
  return ps_expect(ps, '}', "axis list");
}

bool parse_sdy_mesh_body(pstate *ps, sdy_mesh **out) {
  sdy_mesh *m = ps_alloc(ps, sizeof *m);
  if (!m) return false;
  uint32_t cap_n = 0, cap_s = 0, n2 = 0;
  TRY(ps_expect(ps, '<', "sdy mesh"));
  if (ps_peek(ps) == '[') {
    ps->pos++;
    if (!ps_accept(ps, ']')) {
      do {
        ps_ws(ps);
        size_t p = ps->pos;
        if (ps_peek(ps) != '"') return ps_err(ps, p, "expected mesh axis name string, got '%s'", ps_tok(ps, p));
        char *s;
        size_t l;
        TRY(ps_string(ps, &s, &l));
        TRY(ps_expect(ps, '=', "mesh axis"));
        int64_t sz;
        TRY(ps_int(ps, &sz, "mesh axis size"));
        const char **np = ps_vec_push(ps, (void **)&m->axis_names, &m->num_axes, &cap_n, sizeof *np);
        int64_t *sp = ps_vec_push(ps, (void **)&m->axis_sizes, &n2, &cap_s, sizeof *sp);
        if (!np || !sp) return false;
        *np = s;
        *sp = sz;
      } while (ps_accept(ps, ','));
      TRY(ps_expect(ps, ']', "mesh axes"));
    }
    if (ps_accept(ps, ',')) {
      TRY(ps_expect_kw(ps, "device_ids", "sdy mesh"));
      TRY(ps_expect(ps, '=', "device_ids"));
      ps_ws(ps);
      TRY(parse_int_list(ps, &m->device_ids, &m->num_device_ids));
    }
  } else if (ps_accept_kw(ps, "device_ids")) {
    TRY(ps_expect(ps, '=', "device_ids"));
    ps_ws(ps);
    TRY(parse_int_list(ps, &m->device_ids, &m->num_device_ids));
  }
  TRY(ps_expect(ps, '>', "sdy mesh"));
  *out = m;
  return true;
}

bool parse_sdy_sharding_body(pstate *ps, sdy_sharding **out) {
  sdy_sharding *s = ps_alloc(ps, sizeof *s);
  if (!s) return false;
  TRY(ps_expect(ps, '<', "sdy sharding"));
  ps_ws(ps);
  size_t mp = ps->pos;
  if (ps_accept(ps, '@')) {
    size_t st = ps->pos;
    if (st < ps->end && ps->s[st] == '"') { /* @"name", as the printer quotes odd names */
      size_t l;
      char *nm;
      TRY(ps_string(ps, &nm, &l));
      s->mesh_name = nm;
    } else {
      while (ps->pos < ps->end && ps_is_ident_char(ps->s[ps->pos]) && ps->s[ps->pos] != '-') ps->pos++;
      if (ps->pos == st || (ps->s[st] >= '0' && ps->s[st] <= '9'))
        return ps_err(ps, st, "expected mesh name after '@'");
      s->mesh_name = ps_strndup(ps, ps->s + st, ps->pos - st);
      if (!s->mesh_name) return false;
    }
  } else if (ps_accept_kw(ps, "mesh") || ps_accept_str(ps, "#sdy.mesh")) {
    sdy_mesh *m;
    TRY(parse_sdy_mesh_body(ps, &m));
    s->mesh = m;
  } else {
    return ps_err(ps, mp, "expected '@mesh' or an inline mesh in sdy sharding, got '%s'", ps_tok(ps, mp));
  }
  TRY(ps_expect(ps, ',', "sdy sharding"));
  TRY(ps_expect(ps, '[', "sdy sharding dimensions"));
  uint32_t cap = 0;
  if (!ps_accept(ps, ']')) {
    do {
      sdy_dim_sharding *d = ps_vec_push(ps, (void **)&s->dims, &s->rank, &cap, sizeof *d);
      if (!d) return false;
      d->priority = -1;
      ps_ws(ps);
      TRY(axis_list(ps, &d->axes, &d->num_axes, true, &d->is_open));
      if (ps->pos < ps->end && ps->s[ps->pos] == 'p') {
        ps->pos++;
        size_t pp = ps->pos;
        if (pp >= ps->end || ps->s[pp] < '0' || ps->s[pp] > '9')
          return ps_err(ps, pp, "expected priority number after 'p'");
        TRY(ps_int(ps, &d->priority, "priority"));
        if (d->priority < 0) return ps_err(ps, pp, "priority must be non-negative");
      }
    } while (ps_accept(ps, ','));
    TRY(ps_expect(ps, ']', "sdy sharding dimensions"));
  }
  while (ps_accept(ps, ',')) {
    ps_ws(ps);
    size_t kp = ps->pos;
    if (ps_accept_kw(ps, "replicated")) {
      TRY(ps_expect(ps, '=', "replicated"));
      ps_ws(ps);
      TRY(axis_list(ps, &s->replicated, &s->num_replicated, false, NULL));
    } else if (ps_accept_kw(ps, "unreduced")) {
      TRY(ps_expect(ps, '=', "unreduced"));
      ps_ws(ps);
      TRY(axis_list(ps, &s->unreduced, &s->num_unreduced, false, NULL));
    } else {
      return ps_err(ps, kp, "expected 'replicated' or 'unreduced' in sdy sharding, got '%s'", ps_tok(ps, kp));
    }
  }
  TRY(ps_expect(ps, '>', "sdy sharding"));
  *out = s;
  return true;
}

/* `[<...>, <...>]` (cursor at '['): a SDY_SHARDING_PER_VALUE attribute. */
static bool sharding_list(pstate *ps, hlo_attr **out) {
  sdy_attr *a = ps_alloc(ps, sizeof *a);
  if (!a) return false;
  a->kind = SDY_SHARDING_PER_VALUE;
  uint32_t cap = 0;
  TRY(ps_expect(ps, '[', "sharding list"));
  if (!ps_accept(ps, ']')) {
    do {
      const sdy_sharding **slot = ps_vec_push(ps, (void **)&a->shardings, &a->n, &cap, sizeof *slot);
      if (!slot) return false;
      sdy_sharding *s;
      ps_ws(ps);
      TRY(parse_sdy_sharding_body(ps, &s));
      *slot = s;
    } while (ps_accept(ps, ','));
    TRY(ps_expect(ps, ']', "sharding list"));
  }
  *out = mk_sdy(ps, a);
  return *out != NULL;
}

bool parse_sdy_hash_attr(pstate *ps, const char *nm, size_t nl, size_t after, bool *handled,
                         hlo_attr **out) {
  *handled = false;
  sdy_attr *a;
  if (nl == 12 && memcmp(nm, "sdy.sharding", 12) == 0) {
    ps->pos = after;
    a = ps_alloc(ps, sizeof *a);
    if (!a) return false;
    a->kind = SDY_SHARDING;
    a->n = 1;
    const sdy_sharding **one = ps_alloc(ps, sizeof *one);
    sdy_sharding *s;
    if (!one) return false;
    TRY(parse_sdy_sharding_body(ps, &s));
    one[0] = s;
    a->shardings = one;
  } else if (nl == 22 && memcmp(nm, "sdy.sharding_per_value", 22) == 0) {
    ps->pos = after;
    TRY(ps_expect(ps, '<', "#sdy.sharding_per_value"));
    TRY(sharding_list(ps, out));
    TRY(ps_expect(ps, '>', "#sdy.sharding_per_value"));
    *handled = true;
    return true;
  } else if (nl == 8 && memcmp(nm, "sdy.mesh", 8) == 0) {
    ps->pos = after;
    a = ps_alloc(ps, sizeof *a);
    if (!a) return false;
    a->kind = SDY_MESH;
    sdy_mesh *m;
    TRY(parse_sdy_mesh_body(ps, &m));
    a->mesh = m;
  } else if (nl == 3 && memcmp(nm, "sdy", 3) == 0) {
    /* `#sdy<manual_axes{"x"}>`: manual_axes in the generic form */
    ps->pos = after + 1;
    if (!ps_accept_str(ps, "manual_axes")) return true;
    a = ps_alloc(ps, sizeof *a);
    if (!a) return false;
    a->kind = SDY_AXES;
    sdy_axis_ref *refs;
    uint32_t n;
    TRY(axis_list(ps, &refs, &n, false, NULL));
    a->n = n;
    a->axes = ps_alloc(ps, (n ? n : 1) * sizeof *a->axes);
    if (!a->axes) return false;
    for (uint32_t i = 0; i < n; i++) {
      if (refs[i].size) return ps_err(ps, after, "manual_axes takes whole axes, not sub-axes");
      a->axes[i] = refs[i].name;
    }
    TRY(ps_expect(ps, '>', "#sdy<manual_axes>"));
  } else {
    return true;
  }
  *handled = true;
  *out = mk_sdy(ps, a);
  return *out != NULL;
}

bool parse_sdy_mesh_decl(pstate *ps, size_t kw_pos) {
  hlo_module_ir *m = ps->m;
  ps_ws(ps);
  TRY(ps_expect(ps, '@', "sdy.mesh"));
  size_t st = ps->pos;
  char *name;
  if (ps_peek(ps) == '"' && ps->pos == st) {
    size_t l;
    TRY(ps_string(ps, &name, &l));
  } else {
    while (ps->pos < ps->end && ps_is_ident_char(ps->s[ps->pos]) && ps->s[ps->pos] != '-') ps->pos++;
    if (ps->pos == st || (ps->s[st] >= '0' && ps->s[st] <= '9'))
      return ps_err(ps, st, "expected mesh name after '@'");
    name = ps_strndup(ps, ps->s + st, ps->pos - st);
    if (!name) return false;
  }
  if (module_find_mesh(m, name)) return ps_err(ps, kw_pos, "redefinition of mesh '@%s'", name);
  TRY(ps_expect(ps, '=', "sdy.mesh"));
  ps_ws(ps);
  ps_accept_str(ps, "#sdy.mesh");
  sdy_mesh *mesh;
  TRY(parse_sdy_mesh_body(ps, &mesh));
  uint32_t cap = m->num_meshes; /* ps_vec_push doubles from the count */
  sdy_mesh_decl *d = ps_vec_push(ps, (void **)&m->meshes, &m->num_meshes, &cap, sizeof *d);
  if (!d) return false;
  d->name = name;
  d->mesh = mesh;
  d->loc = ps_loc(ps, kw_pos);
  if (ps_peek(ps) == '{') {
    uint32_t acap = 0;
    TRY(parse_attr_dict(ps, &d->attrs.items, &d->attrs.n, &acap));
  }
  const char *lt;
  return parse_opt_loc(ps, &lt);
}

/* ------------------------------------------------------------------ ops */

static bool type_for_results(pstate *ps, opb *b, bool results) {
  TRY(ps_expect(ps, ':', op_name(b->opc)));
  hlo_type *t;
  ps_ws(ps);
  size_t tp = ps->pos;
  TRY(parse_type(ps, &t));
  if (b->nops == 1) TRY(check_use_type(ps, tp, b->ops[0], t));
  if (!results) {
    b->nrt = 0;
    return true;
  }
  b->rtypes = ps_alloc(ps, sizeof *b->rtypes);
  if (!b->rtypes) return false;
  b->rtypes[0] = t;
  b->nrt = 1;
  return true;
}

static bool opt_dict(pstate *ps, opb *b) {
  if (ps_peek(ps) == '{') return parse_attr_dict(ps, &b->attrs, &b->nattrs, &b->capattrs);
  return true;
}

static bool one_operand(pstate *ps, opb *b) {
  hlo_value *v;
  TRY(ps_use(ps, &v));
  return opb_operand(ps, b, v);
}

/* `%x <sharding> {attrs} : T` (sharding_constraint, reshard). */
static bool p_sharding_op(pstate *ps, opb *b) {
  TRY(one_operand(ps, b));
  sdy_attr *a = ps_alloc(ps, sizeof *a);
  const sdy_sharding **one = ps_alloc(ps, sizeof *one);
  if (!a || !one) return false;
  sdy_sharding *s;
  ps_ws(ps);
  (void)ps_accept_str(ps, "#sdy.sharding"); /* the generic spelling of the same */
  TRY(parse_sdy_sharding_body(ps, &s));
  one[0] = s;
  a->kind = SDY_SHARDING;
  a->n = 1;
  a->shardings = one;
  TRY(opb_attr(ps, b, "sharding", mk_sdy(ps, a)));
  TRY(opt_dict(ps, b));
  return type_for_results(ps, b, true);
}

/* `%x group_id=N {attrs} : T` */
static bool p_sharding_group(pstate *ps, opb *b) {
  TRY(one_operand(ps, b));
  TRY(ps_expect_kw(ps, "group_id", "sdy.sharding_group"));
  TRY(ps_expect(ps, '=', "sdy.sharding_group"));
  int64_t g;
  TRY(ps_int(ps, &g, "group_id"));
  TRY(opb_attr(ps, b, "group_id", attr_int(ps->a, g, HLO_I64)));
  TRY(opt_dict(ps, b));
  return type_for_results(ps, b, false);
}

/* `%x allowed_direction=NONE {attrs} : T` */
static bool p_barrier(pstate *ps, opb *b) {
  TRY(one_operand(ps, b));
  TRY(ps_expect_kw(ps, "allowed_direction", "sdy.propagation_barrier"));
  TRY(ps_expect(ps, '=', "sdy.propagation_barrier"));
  size_t st, len;
  ps_ws(ps);
  if (!ps_ident(ps, &st, &len)) return ps_err(ps, ps->pos, "expected propagation direction, got '%s'", ps_tok(ps, ps->pos));
  TRY(opb_attr(ps, b, "allowed_direction", mk_enum(ps, "sdy", "propagation_direction", ps->s + st, len)));
  TRY(opt_dict(ps, b));
  return type_for_results(ps, b, true);
}

/* `(%a: T, ...) { body }` of manual/named computation: a region whose block
 * arguments are named before the braces. */
static bool p_body(pstate *ps, opb *b) {
  TRY(ps_expect(ps, '(', "region arguments"));
  hlo_type **types = NULL;
  name_ref *names = NULL;
  uint32_t n = 0, cap = 0, nn = 0, ncap = 0;
  if (!ps_accept(ps, ')')) {
    do {
      name_ref *nr = ps_vec_push(ps, (void **)&names, &nn, &ncap, sizeof *nr);
      hlo_type **tp = ps_vec_push(ps, (void **)&types, &n, &cap, sizeof *tp);
      if (!nr || !tp) return false;
      TRY(ps_value_name(ps, &nr->pos, &nr->len));
      TRY(ps_expect(ps, ':', "region argument"));
      TRY(parse_type(ps, tp));
      const char *lt;
      TRY(parse_opt_loc(ps, &lt));
    } while (ps_accept(ps, ','));
    TRY(ps_expect(ps, ')', "region arguments"));
  }
  hlo_region *r;
  TRY(parse_region(ps, &r, types, names, n));
  return opb_region(ps, b, r);
}

/* `(%a, ...)` operands; `: (T, ...) -> R` functional type at the end. */
static bool paren_uses(pstate *ps, opb *b) {
  TRY(ps_expect(ps, '(', "operand list"));
  if (ps_accept(ps, ')')) return true;
  do TRY(one_operand(ps, b));
  while (ps_accept(ps, ','));
  return ps_expect(ps, ')', "operand list");
}

static bool functional_type(pstate *ps, opb *b) {
  TRY(ps_expect(ps, ':', op_name(b->opc)));
  ps_ws(ps);
  size_t tp = ps->pos;
  hlo_type **ins, **outs;
  uint32_t nin, nout;
  TRY(parse_func_type(ps, &ins, &nin, &outs, &nout));
  if (nin != b->nops)
    return ps_err(ps, tp, "operation has %u operands but its type lists %u", b->nops, nin);
  for (uint32_t i = 0; i < nin; i++) TRY(check_use_type(ps, tp, b->ops[i], ins[i]));
  b->rtypes = outs;
  b->nrt = nout;
  return true;
}

static bool op_attr_present(const opb *b, const char *name) {
  for (uint32_t i = 0; i < b->nattrs; i++)
    if (!strcmp(b->attrs[i].name, name)) return true;
  return false;
}

/* `in_shardings=[...]`, `out_shardings=[...]`, `manual_axes={...}` keywords. */
static bool kw_attrs(pstate *ps, opb *b, bool manual) {
  while (1) {
    ps_ws(ps);
    size_t kp = ps->pos;
    const char *name = NULL;
    if (ps_accept_kw(ps, "in_shardings")) name = "in_shardings";
    else if (ps_accept_kw(ps, "out_shardings")) name = "out_shardings";
    else if (manual && ps_accept_kw(ps, "manual_axes")) name = "manual_axes";
    else return true;
    if (op_attr_present(b, name)) return ps_err(ps, kp, "'%s' given twice", name);
    TRY(ps_expect(ps, '=', name));
    ps_ws(ps);
    hlo_attr *v;
    if (name[0] == 'm') {
      sdy_attr *a = ps_alloc(ps, sizeof *a);
      if (!a) return false;
      a->kind = SDY_AXES;
      sdy_axis_ref *refs;
      uint32_t n;
      TRY(axis_list(ps, &refs, &n, false, NULL));
      a->n = n;
      a->axes = ps_alloc(ps, (n ? n : 1) * sizeof *a->axes);
      if (!a->axes) return false;
      for (uint32_t i = 0; i < n; i++) {
        if (refs[i].size) return ps_err(ps, kp, "manual_axes takes whole axes, not sub-axes");
        a->axes[i] = refs[i].name;
      }
      v = mk_sdy(ps, a);
    } else {
      TRY(sharding_list(ps, &v));
    }
    TRY(opb_attr(ps, b, name, v));
  }
}

static bool p_manual(pstate *ps, opb *b) {
  TRY(paren_uses(ps, b));
  TRY(kw_attrs(ps, b, true));
  TRY(p_body(ps, b));
  TRY(opt_dict(ps, b));
  return functional_type(ps, b);
}

static bool p_named(pstate *ps, opb *b) {
  TRY(ps_expect(ps, '<', "sdy.named_computation"));
  ps_ws(ps);
  char *s;
  size_t l;
  if (ps_peek(ps) != '"') return ps_err(ps, ps->pos, "expected a name string in sdy.named_computation");
  TRY(ps_string(ps, &s, &l));
  TRY(ps_expect(ps, '>', "sdy.named_computation"));
  TRY(opb_attr(ps, b, "name", attr_string(ps->a, s, l)));
  TRY(paren_uses(ps, b));
  TRY(kw_attrs(ps, b, false));
  TRY(p_body(ps, b));
  TRY(opt_dict(ps, b));
  return functional_type(ps, b);
}

/* `sdy.return {attrs} %a, %b : T, U` */
static bool p_return(pstate *ps, opb *b) {
  TRY(opt_dict(ps, b));
  b->nrt = 0;
  if (ps_peek(ps) != '%') return true;
  do TRY(one_operand(ps, b));
  while (ps_accept(ps, ','));
  TRY(ps_expect(ps, ':', "sdy.return"));
  ps_ws(ps);
  size_t tp = ps->pos;
  hlo_type **ts;
  uint32_t n;
  TRY(parse_type_list(ps, &ts, &n));
  if (n != b->nops) return ps_err(ps, tp, "sdy.return has %u operands but %u types", b->nops, n);
  for (uint32_t i = 0; i < n; i++) TRY(check_use_type(ps, tp, b->ops[i], ts[i]));
  return true;
}

bool parse_sdy_pretty(pstate *ps, opb *b) {
  switch (b->opc) {
    case OP_SDY_SHARDING_CONSTRAINT: case OP_SDY_RESHARD: return p_sharding_op(ps, b);
    case OP_SDY_SHARDING_GROUP: return p_sharding_group(ps, b);
    case OP_SDY_PROPAGATION_BARRIER: return p_barrier(ps, b);
    case OP_SDY_MANUAL_COMPUTATION: return p_manual(ps, b);
    case OP_SDY_NAMED_COMPUTATION: return p_named(ps, b);
    case OP_SDY_RETURN: return p_return(ps, b);
    default: return ps_err(ps, b->name_pos, "internal: not an sdy op");
  }
}
