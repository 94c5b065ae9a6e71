/* parse_ops.c — the pretty (custom assembly) forms of StableHLO, chlo,
 * func, check and interpreter ops, as JAX and the StableHLO test corpus print
 * them. Every form stores its attributes under the generic form's ODS names
 * and kinds (ir.h's ATTRIBUTE CONTRACT); result types the text omits are
 * inferred as MLIR's SameOperandsAndResultType and friends do. */
#include <string.h>
#include "ir/element.h"
#include "parse/parse_internal.h"

/* How a plain (non-function) type list after ':' maps onto the op. */
typedef enum tstyle {
  TS_SAME,      /* one type: every operand and the result */
  TS_OPERANDS,  /* the operands' types; no results */
  TS_RESULTS,   /* the results' types; operands unchecked */
  TS_SELECT,    /* pred type, then the type of the rest and the result */
  TS_BARRIER,   /* operand i and result i share type i */
} tstyle;

/* How the pretty form of `c` writes its trailing types. */
static tstyle style_of(hlo_opcode c) {
  switch (c) {
    case OP_RETURN: case OP_FUNC_RETURN: case OP_CHLO_YIELD: case OP_CHECK_EXPECT_EQ:
    case OP_CHECK_EXPECT_ALMOST_EQ: case OP_CHECK_EXPECT_CLOSE: case OP_CHECK_EXPECT_SERIALIZED_EQ:
    case OP_INTERP_PRINT: case OP_OUTFEED:
      return TS_OPERANDS;
    case OP_AFTER_ALL: case OP_TUPLE: case OP_IOTA: case OP_REPLICA_ID: case OP_PARTITION_ID:
    case OP_CREATE_TOKEN: case OP_COMPLEX: case OP_GET_TUPLE_ELEMENT:
      return TS_RESULTS;
    case OP_SELECT: return TS_SELECT;
    case OP_OPTIMIZATION_BARRIER: return TS_BARRIER;
    default: return TS_SAME;
  }
}

static bool set_results(pstate *ps, opb *b, hlo_type *t, uint32_t n) {
  b->rtypes = ps_alloc(ps, (n ? n : 1) * sizeof *b->rtypes);
  if (!b->rtypes) return false;
  for (uint32_t i = 0; i < n; i++) b->rtypes[i] = t;
  b->nrt = n;
  return true;
}

/* `: types` after the operands/attributes, for every style. */
static bool parse_type_spec(pstate *ps, opb *b, tstyle style) {
  ps_ws(ps);
  size_t tpos = ps->pos;
  if (ps_peek(ps) == '(') {
    hlo_type **ins, **outs;
    uint32_t nin, nout;
    TRY(parse_func_type(ps, &ins, &nin, &outs, &nout));
    if (nin != b->nops)
      return ps_err(ps, tpos, "operation has %u operands but its type lists %u", b->nops, nin);
    for (uint32_t i = 0; i < nin; i++) TRY(check_use_type(ps, tpos, b->ops[i], ins[i]));
    b->rtypes = outs;
    b->nrt = nout;
    return true;
  }
  hlo_type **l;
  uint32_t k;
  TRY(parse_type_list(ps, &l, &k));
  if (ps_accept_str(ps, "->")) {
    if (k != b->nops)
      return ps_err(ps, tpos, "operation has %u operands but its type lists %u", b->nops, k);
    for (uint32_t i = 0; i < k; i++) TRY(check_use_type(ps, tpos, b->ops[i], l[i]));
    return parse_result_types(ps, &b->rtypes, &b->nrt);
  }
  switch (style) {
    case TS_OPERANDS:
      if (k != b->nops && k != 1)
        return ps_err(ps, tpos, "operation has %u operands but %u types", b->nops, k);
      for (uint32_t i = 0; i < b->nops; i++) TRY(check_use_type(ps, tpos, b->ops[i], l[k == 1 ? 0 : i]));
      b->nrt = 0;
      return true;
    case TS_RESULTS:
      b->rtypes = l;
      b->nrt = k;
      return true;
    case TS_SELECT:
      if (k == 1) break;
      if (k != 2 || b->nops != 3) return ps_err(ps, tpos, "select expects 'predicate type, result type'");
      TRY(check_use_type(ps, tpos, b->ops[0], l[0]));
      TRY(check_use_type(ps, tpos, b->ops[1], l[1]));
      TRY(check_use_type(ps, tpos, b->ops[2], l[1]));
      return set_results(ps, b, l[1], 1);
    case TS_BARRIER:
      if (k != b->nops) return ps_err(ps, tpos, "operation has %u operands but %u types", b->nops, k);
      for (uint32_t i = 0; i < k; i++) TRY(check_use_type(ps, tpos, b->ops[i], l[i]));
      b->rtypes = l;
      b->nrt = k;
      return true;
    case TS_SAME: break;
  }
  if (k != 1) return ps_err(ps, tpos, "expected one type or a function type, got %u types", k);
  for (uint32_t i = 0; i < b->nops; i++) TRY(check_use_type(ps, tpos, b->ops[i], l[0]));
  return set_results(ps, b, l[0], 1);
}

static bool opt_attr_dict(pstate *ps, opb *b) {
  if (ps_peek(ps) == '{') return parse_attr_dict(ps, &b->attrs, &b->nattrs, &b->capattrs);
  return true;
}

static bool opt_attr_dict_kw(pstate *ps, opb *b) {
  if (ps_accept_kw(ps, "attributes")) {
    if (ps_peek(ps) != '{') return ps_err(ps, ps->pos, "expected '{' after 'attributes'");
    return parse_attr_dict(ps, &b->attrs, &b->nattrs, &b->capattrs);
  }
  return true;
}

static bool dims_attr(pstate *ps, opb *b, const char *name) {
  int64_t *v;
  uint32_t n;
  TRY(parse_int_list(ps, &v, &n));
  return opb_attr(ps, b, name, mk_dense_array(ps, v, n, HLO_I64));
}

static bool int_attr(pstate *ps, opb *b, const char *name, hlo_dtype dt) {
  int64_t v;
  TRY(ps_int(ps, &v, name));
  return opb_attr(ps, b, name, attr_int(ps->a, v, dt));
}

static bool enum_attr(pstate *ps, opb *b, const char *attr, const char *ename) {
  size_t st, len;
  ps_ws(ps);
  if (!ps_ident(ps, &st, &len))
    return ps_err(ps, ps->pos, "expected %s value, got '%s'", ename, ps_tok(ps, ps->pos));
  return opb_attr(ps, b, attr, mk_enum(ps, "stablehlo", ename, ps->s + st, len));
}

/* Per-op state of keyword parsing (dot_general's dimension pairs). */
typedef struct kwctx {
  int64_t *lb, *rb, *lc, *rc;
  uint32_t nlb, nrb, nlc, nrc;
  bool dot;
} kwctx;

static bool dim_pair(pstate *ps, int64_t **l, uint32_t *nl, int64_t **r, uint32_t *nr) {
  TRY(parse_int_list(ps, l, nl));
  ps_ws(ps);
  if (!ps_accept(ps, 'x'))
    return ps_err(ps, ps->pos, "expected 'x' between dimension lists, got '%s'", ps_tok(ps, ps->pos));
  return parse_int_list(ps, r, nr);
}

#define KW(s) (len == sizeof(s) - 1 && memcmp(kw, s, len) == 0)

/* `kw = value` of a pretty form (cursor after '='). */
static bool handle_kw(pstate *ps, opb *b, kwctx *kc, const char *kw, size_t len) {
  hlo_opcode c = b->opc;
  if (KW("dims"))
    return dims_attr(ps, b, c == OP_TRANSPOSE ? "permutation" : c == OP_REVERSE ? "dimensions"
                                                                                : "broadcast_dimensions");
  if (KW("sizes")) return dims_attr(ps, b, c == OP_BROADCAST ? "broadcast_sizes" : "slice_sizes");
  if (KW("dim"))
    return int_attr(ps, b, c == OP_IOTA || c == OP_DYNAMIC_IOTA ? "iota_dimension"
                           : c == OP_TORCH_INDEX_SELECT          ? "dim"
                                                                 : "dimension",
                    HLO_I64);
  if (KW("low")) return dims_attr(ps, b, "edge_padding_low");
  if (KW("high")) return dims_attr(ps, b, "edge_padding_high");
  if (KW("interior")) return dims_attr(ps, b, "interior_padding");
  if (KW("length")) return dims_attr(ps, b, "fft_length");
  if (KW("type") && c == OP_FFT) return enum_attr(ps, b, "fft_type", "fft_type");
  if (KW("distribution")) return enum_attr(ps, b, "rng_distribution", "rng_distribution");
  if (KW("algorithm") && c == OP_RNG_BIT_GENERATOR) return enum_attr(ps, b, "rng_algorithm", "rng_algorithm");
  if (KW("algorithm")) {
    TRY(ps_expect(ps, '<', "dot algorithm"));
    hlo_attr *a;
    TRY(parse_struct_body(ps, "stablehlo.dot_algorithm", &a));
    return opb_attr(ps, b, "algorithm", a);
  }
  if (KW("format")) {
    ps_ws(ps);
    size_t p = ps->pos, st, l;
    if (!ps_ident(ps, &st, &l) || ps->s[st] != 'e')
      return ps_err(ps, p, "expected format eXmY, got '%s'", ps_tok(ps, p));
    long e = 0, m = 0;
    size_t i = st + 1;
    int de = 0, dm = 0;
    for (; i < st + l && ps->s[i] >= '0' && ps->s[i] <= '9' && de < 6; i++, de++) e = e * 10 + (ps->s[i] - '0');
    if (i >= st + l || ps->s[i] != 'm') return ps_err(ps, p, "expected format eXmY");
    for (i++; i < st + l && ps->s[i] >= '0' && ps->s[i] <= '9' && dm < 6; i++, dm++) m = m * 10 + (ps->s[i] - '0');
    if (i != st + l || !de || !dm) return ps_err(ps, p, "expected format eXmY");
    TRY(opb_attr(ps, b, "exponent_bits", attr_int(ps->a, e, HLO_I32)));
    return opb_attr(ps, b, "mantissa_bits", attr_int(ps->a, m, HLO_I32));
  }
  if (KW("batching_dims")) { kc->dot = true; return dim_pair(ps, &kc->lb, &kc->nlb, &kc->rb, &kc->nrb); }
  if (KW("contracting_dims")) { kc->dot = true; return dim_pair(ps, &kc->lc, &kc->nlc, &kc->rc, &kc->nrc); }
  if (KW("precision")) {
    TRY(ps_expect(ps, '[', "precision list"));
    hlo_attr **items = NULL;
    uint32_t n = 0, cap = 0;
    if (!ps_accept(ps, ']')) {
      do {
        size_t st, l;
        ps_ws(ps);
        if (!ps_ident(ps, &st, &l)) return ps_err(ps, ps->pos, "expected precision, got '%s'", ps_tok(ps, ps->pos));
        hlo_attr **s = ps_vec_push(ps, (void **)&items, &n, &cap, sizeof *s);
        if (!s) return false;
        *s = mk_enum(ps, "stablehlo", "precision", ps->s + st, l);
        if (!*s) return false;
      } while (ps_accept(ps, ','));
      TRY(ps_expect(ps, ']', "precision list"));
    }
    hlo_attr *a = ps_alloc(ps, sizeof *a);
    if (!a) return false;
    a->kind = ATTR_ARRAY;
    a->u.arr.n = n;
    a->u.arr.items = items;
    return opb_attr(ps, b, "precision_config", a);
  }
  const char *name = KW("config") ? "einsum_config" : NULL;
  if (!name) {
    char *nm = ps_strndup(ps, kw, len);
    if (!nm) return false;
    name = nm;
  }
  /* other keywords: integer lists become array<i64: ...> (as the generic
   * form spells e.g. known_expanding_dimensions), the rest as parsed */
  ps_ws(ps);
  if (ps_peek(ps) == '[') {
    size_t p = ps->pos + 1;
    while (p < ps->end && ps->s[p] == ' ') p++;
    char d = p < ps->end ? ps->s[p] : 0;
    if ((d >= '0' && d <= '9') || d == '-') return dims_attr(ps, b, name);
  }
  hlo_attr *v;
  TRY(parse_attr(ps, &v));
  return opb_attr(ps, b, name, v);
}

/* Builds `dot_dimension_numbers` from the batching_dims/contracting_dims
 * keywords collected in `kc`. */
static bool finish_dot(pstate *ps, opb *b, kwctx *kc) {
  if (!kc->dot) return true;
  named_attr *f = ps_alloc(ps, 4 * sizeof *f);
  if (!f) return false;
  uint32_t n = 0;
  if (kc->nlb) f[n++] = (named_attr){"lhs_batching_dimensions", mk_dense_array(ps, kc->lb, kc->nlb, HLO_I64)};
  if (kc->nrb) f[n++] = (named_attr){"rhs_batching_dimensions", mk_dense_array(ps, kc->rb, kc->nrb, HLO_I64)};
  if (kc->nlc) f[n++] = (named_attr){"lhs_contracting_dimensions", mk_dense_array(ps, kc->lc, kc->nlc, HLO_I64)};
  if (kc->nrc) f[n++] = (named_attr){"rhs_contracting_dimensions", mk_dense_array(ps, kc->rc, kc->nrc, HLO_I64)};
  for (uint32_t i = 0; i < n; i++)
    if (!f[i].value) return ps_oom(ps);
  return opb_attr(ps, b, "dot_dimension_numbers", mk_struct(ps, "stablehlo.dot", f, n));
}

/* The `name = value` keywords the assembly format of an op allows after its
 * operands, in the order the format gives them (StableHLO's / CHLO's /
 * the check and interpreter dialects' ODS assemblyFormat). An op without an
 * entry takes none: its pretty form is operands, attr-dict, types. */
typedef struct kwspec {
  hlo_opcode opc;
  const char *kw[4];
} kwspec;

static const kwspec KWSPECS[] = {
  {OP_BROADCAST_IN_DIM, {"dims"}},
  {OP_DYNAMIC_BROADCAST_IN_DIM, {"dims", "known_expanding_dimensions", "known_nonexpanding_dimensions"}},
  {OP_TRANSPOSE, {"dims"}},
  {OP_REVERSE, {"dims"}},
  {OP_BROADCAST, {"sizes"}},
  {OP_DYNAMIC_SLICE, {"sizes"}},
  {OP_IOTA, {"dim"}},
  {OP_DYNAMIC_IOTA, {"dim"}},
  {OP_CONCATENATE, {"dim"}},
  {OP_GET_DIMENSION_SIZE, {"dim"}},
  {OP_SET_DIMENSION_SIZE, {"dim"}},
  {OP_TORCH_INDEX_SELECT, {"dim", "batch_dims"}},
  {OP_PAD, {"low", "high", "interior"}},
  {OP_FFT, {"type", "length"}},
  {OP_RNG, {"distribution"}},
  {OP_RNG_BIT_GENERATOR, {"algorithm"}},
  {OP_DOT_GENERAL, {"batching_dims", "contracting_dims", "precision", "algorithm"}},
  {OP_REDUCE_PRECISION, {"format"}},
  {OP_CHOLESKY, {"lower"}},
  {OP_EINSUM, {"config"}},
  {OP_UNARY_EINSUM, {"config"}},
  {OP_CHECK_EXPECT_ALMOST_EQ, {"tolerance"}},
  {OP_CHECK_EXPECT_CLOSE, {"max_ulp_difference", "min_ulp_difference"}},
  {OP_CHECK_EXPECT_SERIALIZED_EQ, {"probe_id", "iter"}},
  {OP_INTERP_PROBE, {"probe_id"}},
};

static const kwspec *kwspec_of(hlo_opcode c) {
  for (size_t i = 0; i < sizeof KWSPECS / sizeof *KWSPECS; i++)
    if (KWSPECS[i].opc == c) return &KWSPECS[i];
  return NULL;
}

/* Keywords `, kw = value` of `spec` until none follows, each at most once and
 * in the order of the spec. `need_comma`: the first keyword is preceded by a
 * comma (the op has operands). Without a comma (no operands), a word not
 * followed by '=' ends the list; after a comma, anything but a keyword of the
 * op is an error. */
static bool parse_keywords(pstate *ps, opb *b, kwctx *kc, const kwspec *spec, bool need_comma) {
  int last = -1;
  while (1) {
    size_t save = ps->pos;
    if (need_comma && !ps_accept(ps, ',')) return true;
    size_t st, len;
    ps_ws(ps);
    size_t kp = ps->pos;
    if (!ps_ident(ps, &st, &len) || ps_peek(ps) != '=') {
      if (!need_comma) { ps->pos = save; return true; }
      return ps_err(ps, kp, "expected 'name = value' after ',', got '%s'", ps_tok(ps, kp));
    }
    int k = -1;
    for (int i = 0; i < 4 && spec->kw[i]; i++)
      if (strlen(spec->kw[i]) == len && memcmp(spec->kw[i], ps->s + st, len) == 0) k = i;
    if (k < 0)
      return ps_err(ps, kp, "'%.*s' is not a keyword of %s (its pretty form takes: %s%s%s%s%s%s%s)",
                    (int)(len > 40 ? 40 : len), ps->s + st, op_name(b->opc), spec->kw[0],
                    spec->kw[1] ? ", " : "", spec->kw[1] ? spec->kw[1] : "",
                    spec->kw[2] ? ", " : "", spec->kw[2] ? spec->kw[2] : "",
                    spec->kw[3] ? ", " : "", spec->kw[3] ? spec->kw[3] : "");
    if (k == last) return ps_err(ps, kp, "duplicate keyword '%s'", spec->kw[k]);
    if (k < last)
      return ps_err(ps, kp, "keyword '%s' must come before '%s' in %s", spec->kw[k], spec->kw[last],
                    op_name(b->opc));
    last = k;
    ps->pos++;
    TRY(handle_kw(ps, b, kc, ps->s + st, len));
    need_comma = true;
  }
}

static bool parse_operands(pstate *ps, opb *b) {
  if (ps_peek(ps) != '%') return true;
  while (1) {
    hlo_value *v;
    TRY(ps_use(ps, &v));
    TRY(opb_operand(ps, b, v));
    size_t save = ps->pos;
    if (!ps_accept(ps, ',')) return true;
    if (ps_peek(ps) != '%') { ps->pos = save; return true; }
  }
}

/* The pretty form shared by most ops: operands, keyword attributes, attr
 * dict, trailing types. */
static bool p_default(pstate *ps, opb *b) {
  kwctx kc;
  memset(&kc, 0, sizeof kc);
  TRY(parse_operands(ps, b));
  const kwspec *spec = kwspec_of(b->opc);
  if (spec) TRY(parse_keywords(ps, b, &kc, spec, b->nops > 0));
  TRY(finish_dot(ps, b, &kc));
  TRY(opt_attr_dict(ps, b));
  tstyle st = style_of(b->opc);
  if (!ps_accept(ps, ':')) {
    if (st == TS_OPERANDS && b->nops == 0) return true;
    return ps_err(ps, ps->pos, "expected ':' and types, got '%s'", ps_tok(ps, ps->pos));
  }
  return parse_type_spec(ps, b, st);
}

static bool p_compare(pstate *ps, opb *b) {
  size_t st, len;
  ps_ws(ps);
  if (!ps_ident(ps, &st, &len))
    return ps_err(ps, ps->pos, "expected comparison direction, got '%s'", ps_tok(ps, ps->pos));
  TRY(opb_attr(ps, b, "comparison_direction", mk_enum(ps, "stablehlo", "comparison_direction", ps->s + st, len)));
  TRY(ps_expect(ps, ',', "compare"));
  TRY(parse_operands(ps, b));
  if (b->nops != 2) return ps_err(ps, ps->pos, "compare expects two operands");
  if (ps_accept(ps, ',')) {
    ps_ws(ps);
    if (!ps_ident(ps, &st, &len))
      return ps_err(ps, ps->pos, "expected comparison type, got '%s'", ps_tok(ps, ps->pos));
    TRY(opb_attr(ps, b, "compare_type", mk_enum(ps, "stablehlo", "comparison_type", ps->s + st, len)));
  }
  TRY(opt_attr_dict(ps, b));
  TRY(ps_expect(ps, ':', "compare"));
  return parse_type_spec(ps, b, TS_SAME);
}

static bool p_constant(pstate *ps, opb *b) {
  if (ps_peek(ps) == '(') return parse_generic(ps, b);
  TRY(opt_attr_dict(ps, b));
  ps_ws(ps);
  size_t vp = ps->pos;
  hlo_attr *v;
  TRY(parse_attr(ps, &v));
  if (v->kind != ATTR_DENSE) return ps_err(ps, vp, "constant value must be a dense literal with a tensor type");
  TRY(opb_attr(ps, b, "value", v));
  /* `attr-dict $value`: no attr-dict after the value (MLIR's format) */
  return set_results(ps, b, (hlo_type *)v->u.dense.type, 1);
}

static bool p_check_const(pstate *ps, opb *b) {
  TRY(parse_operands(ps, b));
  if (b->nops != 1) return ps_err(ps, ps->pos, "expected one operand");
  TRY(ps_expect(ps, ',', "check operation"));
  hlo_attr *v;
  TRY(parse_attr(ps, &v));
  TRY(opb_attr(ps, b, "value", v));
  TRY(opt_attr_dict(ps, b));
  b->nrt = 0;
  return true;
}

static bool p_slice(pstate *ps, opb *b) {
  TRY(parse_operands(ps, b));
  if (b->nops != 1) return ps_err(ps, ps->pos, "slice expects one operand");
  TRY(ps_expect(ps, '[', "slice"));
  int64_t *v[3] = {NULL, NULL, NULL};
  uint32_t n[3] = {0, 0, 0}, cap[3] = {0, 0, 0};
  if (!ps_accept(ps, ']')) {
    do {
      int64_t x[3] = {0, 0, 1};
      TRY(ps_int(ps, &x[0], "slice start"));
      TRY(ps_expect(ps, ':', "slice"));
      TRY(ps_int(ps, &x[1], "slice limit"));
      if (ps_accept(ps, ':')) TRY(ps_int(ps, &x[2], "slice stride"));
      for (int i = 0; i < 3; i++) {
        int64_t *s = ps_vec_push(ps, (void **)&v[i], &n[i], &cap[i], sizeof *s);
        if (!s) return false;
        *s = x[i];
      }
    } while (ps_accept(ps, ','));
    TRY(ps_expect(ps, ']', "slice"));
  }
  TRY(opb_attr(ps, b, "start_indices", mk_dense_array(ps, v[0], n[0], HLO_I64)));
  TRY(opb_attr(ps, b, "limit_indices", mk_dense_array(ps, v[1], n[1], HLO_I64)));
  TRY(opb_attr(ps, b, "strides", mk_dense_array(ps, v[2], n[2], HLO_I64)));
  TRY(opt_attr_dict(ps, b));
  TRY(ps_expect(ps, ':', "slice"));
  return parse_type_spec(ps, b, TS_SAME);
}

/* `@name` → its text (cursor at '@'). */
static bool symbol_name(pstate *ps, char **out) {
  ps_ws(ps);
  size_t p = ps->pos;
  if (!ps_accept(ps, '@')) return ps_err(ps, p, "expected '@symbol', got '%s'", ps_tok(ps, p));
  if (ps->pos < ps->end && ps->s[ps->pos] == '"') {
    size_t l;
    return ps_string(ps, out, &l);
  }
  size_t st = ps->pos;
  while (ps->pos < ps->end && ps_is_ident_char(ps->s[ps->pos]) && ps->s[ps->pos] != '-') ps->pos++;
  if (ps->pos == st) return ps_err(ps, st, "expected symbol name after '@'");
  *out = ps_strndup(ps, ps->s + st, ps->pos - st);
  return *out != NULL;
}

static bool paren_operands(pstate *ps, opb *b, const char *what) {
  TRY(ps_expect(ps, '(', what));
  if (ps_accept(ps, ')')) return true;
  do {
    hlo_value *v;
    TRY(ps_use(ps, &v));
    TRY(opb_operand(ps, b, v));
  } while (ps_accept(ps, ','));
  return ps_expect(ps, ')', what);
}

static bool p_custom_call(pstate *ps, opb *b) {
  char *target;
  TRY(symbol_name(ps, &target));
  TRY(opb_attr(ps, b, "call_target_name", attr_string(ps->a, target, strlen(target))));
  TRY(paren_operands(ps, b, "custom_call operands"));
  TRY(opt_attr_dict(ps, b));
  TRY(ps_expect(ps, ':', "custom_call"));
  return parse_type_spec(ps, b, TS_SAME);
}

static bool p_call(pstate *ps, opb *b) {
  char *callee;
  TRY(symbol_name(ps, &callee));
  TRY(opb_attr(ps, b, "callee", attr_symbol(ps->a, callee)));
  TRY(paren_operands(ps, b, "call operands"));
  TRY(opt_attr_dict(ps, b));
  TRY(ps_expect(ps, ':', "call"));
  return parse_type_spec(ps, b, TS_SAME);
}

static bool p_composite(pstate *ps, opb *b) {
  char *name;
  size_t len;
  TRY(ps_string(ps, &name, &len));
  TRY(opb_attr(ps, b, "name", attr_string(ps->a, name, len)));
  TRY(parse_operands(ps, b));
  TRY(opt_attr_dict(ps, b));
  TRY(ps_expect(ps, ':', "composite"));
  return parse_type_spec(ps, b, TS_SAME);
}

static bool p_gte(pstate *ps, opb *b) {
  TRY(parse_operands(ps, b));
  if (b->nops != 1) return ps_err(ps, ps->pos, "get_tuple_element expects one operand");
  TRY(ps_expect(ps, '[', "get_tuple_element"));
  TRY(int_attr(ps, b, "index", HLO_I32));
  TRY(ps_expect(ps, ']', "get_tuple_element"));
  TRY(opt_attr_dict(ps, b));
  TRY(ps_expect(ps, ':', "get_tuple_element"));
  return parse_type_spec(ps, b, TS_RESULTS);
}

static bool p_top_k(pstate *ps, opb *b) {
  TRY(ps_expect(ps, '(', "top_k"));
  hlo_value *v;
  TRY(ps_use(ps, &v));
  TRY(opb_operand(ps, b, v));
  TRY(ps_expect(ps, ',', "top_k"));
  TRY(ps_expect_kw(ps, "k", "top_k"));
  TRY(ps_expect(ps, '=', "top_k"));
  TRY(int_attr(ps, b, "k", HLO_I64));
  TRY(ps_expect(ps, ')', "top_k"));
  TRY(opt_attr_dict(ps, b));
  TRY(ps_expect(ps, ':', "top_k"));
  return parse_type_spec(ps, b, TS_SAME);
}

/* Builds the body of `reduce ... applies OP`: one op over the 2N block
 * arguments, returning its N results. */
static bool reduce_applies_region(pstate *ps, opb *b, hlo_opcode body_op, uint32_t n, size_t pos) {
  hlo_region *r = ps_alloc(ps, sizeof *r);
  if (!r) return false;
  r->block.parent = r;
  hlo_type **types = ps_alloc(ps, 2 * n * sizeof *types);
  if (!types) return false;
  for (uint32_t i = 0; i < n; i++) {
    const hlo_type *it = b->ops[n + i]->type;
    if (it->kind != TYPE_TENSOR) return ps_err(ps, pos, "reduce init value must be a tensor");
    hlo_type *t = type_tensor(ps->a, it->dtype, 0, NULL);
    if (!t) return ps_oom(ps);
    t->quant = it->quant;
    types[i] = types[n + i] = t;
  }
  hlo_status st = block_set_args(ps->m, &r->block, types, 2 * n);
  if (st) { hlo_status_free(st); return ps_oom(ps); }
  hlo_value **args = ps_alloc(ps, 2 * n * sizeof *args);
  if (!args) return false;
  for (uint32_t i = 0; i < 2 * n; i++) args[i] = &r->block.args[i];
  hlo_loc loc = ps_loc(ps, pos);
  hlo_op *op = op_create(ps->m, body_op, args, 2 * n, types, n, 0, loc);
  if (!op) return ps_oom(ps);
  block_append(&r->block, op);
  hlo_value **res = ps_alloc(ps, n * sizeof *res);
  if (!res) return false;
  for (uint32_t i = 0; i < n; i++) res[i] = &op->results[i];
  hlo_op *ret = op_create(ps->m, OP_RETURN, res, n, NULL, 0, 0, loc);
  if (!ret) return ps_oom(ps);
  block_append(&r->block, ret);
  return opb_region(ps, b, r);
}

static bool p_reduce(pstate *ps, opb *b) {
  hlo_value **inputs = NULL, **inits = NULL;
  uint32_t n = 0, cap = 0, ni = 0, capi = 0;
  do {
    TRY(ps_expect(ps, '(', "reduce operands"));
    hlo_value **s = ps_vec_push(ps, (void **)&inputs, &n, &cap, sizeof *s);
    hlo_value **t = s ? ps_vec_push(ps, (void **)&inits, &ni, &capi, sizeof *t) : NULL;
    if (!t) return false;
    TRY(ps_use(ps, s));
    TRY(ps_expect_kw(ps, "init", "reduce operands"));
    TRY(ps_expect(ps, ':', "reduce operands"));
    TRY(ps_use(ps, t));
    TRY(ps_expect(ps, ')', "reduce operands"));
  } while (ps_accept(ps, ','));
  for (uint32_t i = 0; i < n; i++) TRY(opb_operand(ps, b, inputs[i]));
  for (uint32_t i = 0; i < n; i++) TRY(opb_operand(ps, b, inits[i]));
  hlo_opcode body = OP_COUNT;
  size_t bpos = 0;
  if (ps_accept_kw(ps, "applies")) {
    size_t st, len;
    ps_ws(ps);
    bpos = ps->pos;
    if (!ps_ident(ps, &st, &len)) return ps_err(ps, bpos, "expected operation after 'applies'");
    body = op_lookup(ps->s + st, len);
    if (body == OP_COUNT) return ps_err(ps, bpos, "unknown operation '%.*s'", (int)len, ps->s + st);
  }
  TRY(ps_expect_kw(ps, "across", "reduce"));
  TRY(ps_expect_kw(ps, "dimensions", "reduce"));
  TRY(ps_expect(ps, '=', "reduce"));
  TRY(dims_attr(ps, b, "dimensions"));
  TRY(opt_attr_dict(ps, b));
  TRY(ps_expect(ps, ':', "reduce"));
  TRY(parse_type_spec(ps, b, TS_SAME));
  if (body != OP_COUNT) return reduce_applies_region(ps, b, body, n, bpos);
  TRY(ps_expect_kw(ps, "reducer", "reduce"));
  hlo_type **types = ps_alloc(ps, 2 * n * sizeof *types);
  name_ref *names = ps_alloc(ps, 2 * n * sizeof *names);
  if (!types || !names) return false;
  for (uint32_t i = 0; i < n; i++) {
    TRY(ps_expect(ps, '(', "reducer arguments"));
    for (uint32_t j = 0; j < 2; j++) {
      if (j) TRY(ps_expect(ps, ',', "reducer arguments"));
      name_ref *nr = &names[j * n + i];
      TRY(ps_value_name(ps, &nr->pos, &nr->len));
      TRY(ps_expect(ps, ':', "reducer arguments"));
      TRY(parse_type(ps, &types[j * n + i]));
      const char *lt;
      TRY(parse_opt_loc(ps, &lt));
    }
    TRY(ps_expect(ps, ')', "reducer arguments"));
  }
  hlo_region *r;
  TRY(parse_region(ps, &r, types, names, 2 * n));
  return opb_region(ps, b, r);
}

static bool p_while(pstate *ps, opb *b) {
  TRY(ps_expect(ps, '(', "while"));
  name_ref *names = NULL;
  uint32_t nn = 0, cap = 0;
  if (!ps_accept(ps, ')')) {
    do {
      name_ref *nr = ps_vec_push(ps, (void **)&names, &nn, &cap, sizeof *nr);
      if (!nr) return false;
      TRY(ps_value_name(ps, &nr->pos, &nr->len));
      TRY(ps_expect(ps, '=', "while"));
      hlo_value *v;
      TRY(ps_use(ps, &v));
      TRY(opb_operand(ps, b, v));
    } while (ps_accept(ps, ','));
    TRY(ps_expect(ps, ')', "while"));
  }
  TRY(ps_expect(ps, ':', "while"));
  if (b->nops) {
    TRY(parse_type_spec(ps, b, TS_BARRIER));
  }
  TRY(opt_attr_dict_kw(ps, b));
  TRY(ps_expect_kw(ps, "cond", "while"));
  hlo_region *r;
  TRY(parse_region(ps, &r, b->rtypes, names, nn));
  TRY(opb_region(ps, b, r));
  TRY(ps_expect_kw(ps, "do", "while"));
  TRY(parse_region(ps, &r, b->rtypes, names, nn));
  return opb_region(ps, b, r);
}

static bool p_convolution(pstate *ps, opb *b) {
  TRY(paren_operands(ps, b, "convolution operands"));
  TRY(ps_expect_kw(ps, "dim_numbers", "convolution"));
  TRY(ps_expect(ps, '=', "convolution"));
  hlo_attr *dn;
  TRY(parse_conv_dims(ps, &dn));
  TRY(opb_attr(ps, b, "dimension_numbers", dn));
  if (ps_accept(ps, ',')) {
    TRY(ps_expect_kw(ps, "window", "convolution"));
    TRY(ps_expect(ps, '=', "convolution"));
    TRY(ps_expect(ps, '{', "convolution window"));
    if (!ps_accept(ps, '}')) {
      do {
        size_t st, len;
        ps_ws(ps);
        size_t kp = ps->pos;
        if (!ps_ident(ps, &st, &len)) return ps_err(ps, kp, "expected window attribute, got '%s'", ps_tok(ps, kp));
        TRY(ps_expect(ps, '=', "convolution window"));
        const char *kw = ps->s + st;
        if (KW("stride")) TRY(dims_attr(ps, b, "window_strides"));
        else if (KW("lhs_dilate")) TRY(dims_attr(ps, b, "lhs_dilation"));
        else if (KW("rhs_dilate")) TRY(dims_attr(ps, b, "rhs_dilation"));
        else if (KW("pad")) {
          int64_t *v = NULL;
          uint32_t n = 0, cp = 0;
          TRY(ps_expect(ps, '[', "padding"));
          if (!ps_accept(ps, ']')) {
            do {
              int64_t *pr;
              uint32_t k;
              size_t pp = ps->pos;
              TRY(parse_int_list(ps, &pr, &k));
              if (k != 2) return ps_err(ps, pp, "padding entries are [low, high] pairs");
              for (int i = 0; i < 2; i++) {
                int64_t *s = ps_vec_push(ps, (void **)&v, &n, &cp, sizeof *s);
                if (!s) return false;
                *s = pr[i];
              }
            } while (ps_accept(ps, ','));
            TRY(ps_expect(ps, ']', "padding"));
          }
          int64_t dims[2] = {n / 2, 2};
          hlo_type *t = type_tensor(ps->a, HLO_I64, 2, dims);
          if (!t) return ps_oom(ps);
          hlo_attr *a = attr_dense(ps->a, t, v, n * sizeof(int64_t), false);
          TRY(opb_attr(ps, b, "padding", a));
        } else if (KW("reverse")) {
          TRY(ps_expect(ps, '[', "window reversal"));
          int64_t *v = NULL;
          uint32_t n = 0, cp = 0;
          if (!ps_accept(ps, ']')) {
            do {
              int64_t *s = ps_vec_push(ps, (void **)&v, &n, &cp, sizeof *s);
              if (!s) return false;
              if (ps_accept_kw(ps, "true")) *s = 1;
              else if (ps_accept_kw(ps, "false")) *s = 0;
              else {
                TRY(ps_int(ps, s, "window reversal"));
                *s = *s != 0;
              }
            } while (ps_accept(ps, ','));
            TRY(ps_expect(ps, ']', "window reversal"));
          }
          TRY(opb_attr(ps, b, "window_reversal", mk_dense_array(ps, v, n, HLO_I1)));
        } else {
          return ps_err(ps, kp, "unknown window attribute '%.*s'", (int)len, kw);
        }
      } while (ps_accept(ps, ','));
      TRY(ps_expect(ps, '}', "convolution window"));
    }
  }
  TRY(opt_attr_dict(ps, b));
  TRY(ps_expect(ps, ':', "convolution"));
  return parse_type_spec(ps, b, TS_SAME);
}

static bool p_scan(pstate *ps, opb *b) {
  TRY(paren_operands(ps, b, "scan inputs"));
  uint32_t nin = b->nops;
  TRY(ps_expect_kw(ps, "inits", "scan"));
  TRY(paren_operands(ps, b, "scan inits"));
  int64_t seg[2] = {nin, b->nops - nin};
  TRY(ps_expect_kw(ps, "dimension", "scan"));
  TRY(ps_expect(ps, '=', "scan"));
  TRY(int_attr(ps, b, "dimension", HLO_I64));
  TRY(opt_attr_dict_kw(ps, b));
  TRY(opb_attr(ps, b, "operandSegmentSizes", mk_dense_array(ps, seg, 2, HLO_I32)));
  hlo_region *r;
  TRY(parse_region(ps, &r, NULL, NULL, 0));
  TRY(opb_region(ps, b, r));
  TRY(ps_expect(ps, ':', "scan"));
  TRY(parse_type_spec(ps, b, TS_SAME));
  /* the generic form MLIR prints also carries the split of the results:
   * outputs, then one carry per init */
  if (b->nres >= (uint32_t)seg[1]) {
    int64_t rseg[2] = {(int64_t)b->nres - seg[1], seg[1]};
    TRY(opb_attr(ps, b, "resultSegmentSizes", mk_dense_array(ps, rseg, 2, HLO_I32)));
  }
  return true;
}

bool parse_pretty(pstate *ps, opb *b) {
  switch (b->opc) {
    case OP_CONSTANT: case OP_CHLO_CONSTANT: return p_constant(ps, b);
    case OP_COMPARE: return p_compare(ps, b);
    case OP_SLICE: return p_slice(ps, b);
    case OP_CUSTOM_CALL: return p_custom_call(ps, b);
    case OP_FUNC_CALL: return p_call(ps, b);
    case OP_COMPOSITE: return p_composite(ps, b);
    case OP_GET_TUPLE_ELEMENT: return p_gte(ps, b);
    case OP_REDUCE: return p_reduce(ps, b);
    case OP_WHILE: return p_while(ps, b);
    case OP_CONVOLUTION: return p_convolution(ps, b);
    case OP_CHLO_TOP_K: return p_top_k(ps, b);
    case OP_CHLO_SCAN: return p_scan(ps, b);
    case OP_CHECK_EXPECT_EQ_CONST: case OP_CHECK_EXPECT_ALMOST_EQ_CONST: return p_check_const(ps, b);
    case OP_SDY_SHARDING_CONSTRAINT: case OP_SDY_RESHARD: case OP_SDY_SHARDING_GROUP:
    case OP_SDY_PROPAGATION_BARRIER: case OP_SDY_MANUAL_COMPUTATION: case OP_SDY_NAMED_COMPUTATION:
    case OP_SDY_RETURN:
      return parse_sdy_pretty(ps, b);
    default:
      /* `stablehlo.all_reduce(%x) ({...}) {...} : ...`: a bare name followed
       * by the generic form's syntax, as documentation writes it */
      if (ps_peek(ps) == '(') return parse_generic(ps, b);
      return p_default(ps, b);
  }
}
