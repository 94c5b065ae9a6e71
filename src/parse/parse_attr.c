/* parse_attr.c — MLIR attributes as ir.h's ATTRIBUTE CONTRACT stores them:
 * scalars, strings, symbols, arrays, dictionaries, array<T: ...>,
 * dense<...> literals (lists, splats, hex blobs, complex pairs), StableHLO
 * enums and structs (#stablehlo.dot/gather/scatter/conv/...), and anything
 * else verbatim as ATTR_OPAQUE. */
#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include "ir/element.h"
#include "parse/parse_internal.h"
#include "support/float.h"

#define MAX_DENSE_ELEMS ((int64_t)1 << 40)

/* ========================================================= constructors */

hlo_attr *mk_enum(pstate *ps, const char *dialect, const char *name, const char *value, size_t vlen) {
  char *v = ps_strndup(ps, value, vlen);
  if (!v) return NULL;
  hlo_attr *a = attr_enum(ps->a, dialect, name, v);
  if (!a) ps_oom(ps);
  return a;
}

hlo_attr *mk_dense_array(pstate *ps, const int64_t *v, uint32_t n, hlo_dtype dt) {
  hlo_attr *a = attr_dense_array_i64(ps->a, v, n);
  if (!a) { ps_oom(ps); return NULL; }
  a->u.darr.dtype = dt;
  return a;
}

hlo_attr *mk_struct(pstate *ps, const char *name, named_attr *fields, uint32_t n) {
  hlo_attr *a = ps_alloc(ps, sizeof *a);
  if (!a) return NULL;
  a->kind = ATTR_STRUCT;
  a->u.st.name = name;
  a->u.st.n = n;
  a->u.st.fields = fields;
  return a;
}

static hlo_attr *mk_opaque(pstate *ps, size_t start, size_t end) {
  hlo_attr *a = ps_alloc(ps, sizeof *a);
  if (!a) return NULL;
  a->kind = ATTR_OPAQUE;
  a->u.str.s = ps_strndup(ps, ps->s + start, end - start);
  a->u.str.len = end - start;
  return a->u.str.s ? a : NULL;
}

/* ============================================================= numbers */

/* A numeric token: sign, magnitude if integer, and whether it is a float. */
typedef struct numtok {
  size_t start, end;
  bool neg, is_float, is_hex;
  uint64_t mag;     /* integer magnitude (or hex bits) */
  bool ovf;
} numtok;

static int hexv(char c) {
  if (c >= '0' && c <= '9') return c - '0';
  if (c >= 'a' && c <= 'f') return c - 'a' + 10;
  if (c >= 'A' && c <= 'F') return c - 'A' + 10;
  return -1;
}

/* Scans a number token (optional sign; decimal integer or float, or 0x hex
 * bits) into `t`. */
static bool lex_num(pstate *ps, numtok *t, const char *what) {
  ps_ws(ps);
  const char *s = ps->s;
  size_t p = ps->pos;
  memset(t, 0, sizeof *t);
  t->start = p;
  if (p < ps->end && (s[p] == '-' || s[p] == '+')) { t->neg = s[p] == '-'; p++; }
  if (p >= ps->end || s[p] < '0' || s[p] > '9')
    return ps_err(ps, t->start, "expected number in %s, got '%s'", what, ps_tok(ps, t->start));
  if (s[p] == '0' && p + 1 < ps->end && (s[p + 1] == 'x' || s[p + 1] == 'X')) {
    p += 2;
    t->is_hex = true;
    size_t d0 = p;
    for (int h; p < ps->end && (h = hexv(s[p])) >= 0; p++) {
      if (t->mag >> 60) t->ovf = true;
      t->mag = t->mag << 4 | (uint64_t)h;
    }
    if (p == d0) return ps_err(ps, t->start, "expected hex digits in %s", what);
  } else {
    for (; p < ps->end && s[p] >= '0' && s[p] <= '9'; p++) {
      uint64_t d = (uint64_t)(s[p] - '0');
      if (t->mag > (UINT64_MAX - d) / 10) t->ovf = true;
      t->mag = t->mag * 10 + d;
    }
    if (p < ps->end && (s[p] == '.' || s[p] == 'e' || s[p] == 'E')) {
      char *e;
      strtod(s + t->start, &e);
      if ((size_t)(e - s) > p) p = (size_t)(e - s);
      t->is_float = true;
    }
  }
  t->end = p;
  ps->pos = p;
  return true;
}

static double num_double(pstate *ps, const numtok *t) {
  if (!t->is_float) {
    double d = (double)t->mag;
    return t->neg ? -d : d;
  }
  return strtod(ps->s + t->start, NULL);
}

/* ========================================================= elements */

static bool int_in_range(hlo_dtype dt, const numtok *t) {
  int bits = dtype_bits(dt);
  if (t->ovf) return false;
  hlo_dtype_class c = dtype_class(dt);
  if (c == HLO_CLASS_BOOL) return !t->neg && t->mag <= 1;
  uint64_t umax = bits >= 64 ? UINT64_MAX : ((uint64_t)1 << bits) - 1;
  if (t->neg) {
    if (c == HLO_CLASS_UINT) return t->mag == 0;
    return t->mag <= ((uint64_t)1 << (bits - 1));
  }
  return t->mag <= umax;
}

/* Parses one float component of float type `dt` into raw bits. */
static bool parse_float_bits(pstate *ps, hlo_dtype dt, uint64_t *bits) {
  numtok t;
  ps_ws(ps);
  size_t p = ps->pos;
  /* inf / nan spelled as words */
  bool neg = false;
  if (p < ps->end && ps->s[p] == '-') { neg = true; p++; }
  if (p + 3 <= ps->end && (memcmp(ps->s + p, "inf", 3) == 0 || memcmp(ps->s + p, "nan", 3) == 0) &&
      !(p + 3 < ps->end && ps_is_ident_char(ps->s[p + 3]))) {
    double v = ps->s[p] == 'i' ? (neg ? -INFINITY : INFINITY) : NAN;
    *bits = float_encode(dt, v);
    ps->pos = p + 3;
    return true;
  }
  TRY(lex_num(ps, &t, "float literal"));
  if (t.is_hex) {
    int nb = dtype_bits(dt);
    if (t.neg || t.ovf || (nb < 64 && t.mag >> nb))
      return ps_err(ps, t.start, "hexadecimal float literal does not fit in %s", hlo_dtype_name(dt));
    *bits = t.mag;
    return true;
  }
  if (dt == HLO_F32) {
    float f = strtof(ps->s + t.start, NULL);
    if (isinf(f))  /* a finite literal beyond the type's range, as MLIR rejects it */
      return ps_err(ps, t.start, "floating point value too large for %s", hlo_dtype_name(dt));
    uint32_t u;
    memcpy(&u, &f, 4);
    *bits = u;
    return true;
  }
  double d = num_double(ps, &t);
  if (!isfinite(d))  /* a finite literal beyond even f64's range (2e656), as MLIR rejects it */
    return ps_err(ps, t.start, "floating point value too large for %s", hlo_dtype_name(dt));
  if (dt == HLO_F64) {
    memcpy(bits, &d, 8);
    return true;
  }
  *bits = float_encode(dt, d);
  if (isfinite(d) && dt != HLO_F8E8M0FNU && !isfinite(float_decode(dt, *bits)))
    return ps_err(ps, t.start, "floating point value too large for %s", hlo_dtype_name(dt));
  return true;
}

/* One element of type `dt` into dst (hlo_dtype_size(dt) bytes). */
static bool parse_element(pstate *ps, hlo_dtype dt, uint8_t *dst) {
  hlo_dtype_class c = dtype_class(dt);
  ps_ws(ps);
  if (c == HLO_CLASS_COMPLEX) {
    hlo_dtype part = dt == HLO_C64 ? HLO_F32 : HLO_F64;
    uint64_t re, im = 0;
    if (ps_accept(ps, '(')) {
      TRY(parse_float_bits(ps, part, &re));
      TRY(ps_expect(ps, ',', "complex literal"));
      TRY(parse_float_bits(ps, part, &im));
      TRY(ps_expect(ps, ')', "complex literal"));
    } else {
      TRY(parse_float_bits(ps, part, &re));
    }
    elem_set_bits(part, dst, 0, re);
    elem_set_bits(part, dst, 1, im);
    return true;
  }
  if (c == HLO_CLASS_FLOAT) {
    uint64_t b;
    TRY(parse_float_bits(ps, dt, &b));
    elem_set_bits(dt, dst, 0, b);
    return true;
  }
  if (ps_accept_kw(ps, "true")) {
    if (c != HLO_CLASS_BOOL) return ps_err(ps, ps->pos - 4, "'true' is not a %s literal", hlo_dtype_name(dt));
    dst[0] = 1;
    return true;
  }
  if (ps_accept_kw(ps, "false")) {
    if (c != HLO_CLASS_BOOL) return ps_err(ps, ps->pos - 5, "'false' is not a %s literal", hlo_dtype_name(dt));
    dst[0] = 0;
    return true;
  }
  numtok t;
  TRY(lex_num(ps, &t, "integer literal"));
  if (t.is_float) return ps_err(ps, t.start, "expected integer literal for %s, got a float", hlo_dtype_name(dt));
  if (!int_in_range(dt, &t))
    return ps_err(ps, t.start, "integer literal out of range for %s", hlo_dtype_name(dt));
  if (c == HLO_CLASS_UINT) {
    elem_set_u64(dt, dst, 0, t.mag);
  } else {
    int64_t v = t.neg ? (int64_t)(0 - t.mag) : (int64_t)t.mag;
    elem_set_i64(dt, dst, 0, int_wrap(dt, v));
  }
  return true;
}

typedef struct dense_ctx {
  const hlo_type *t;
  size_t esz;
  int64_t n, idx;
  uint8_t *data;
} dense_ctx;

/* One nesting level `d` of a dense literal `[...]`: checks its length
 * against the type and stores the elements. */
static bool dense_list(pstate *ps, dense_ctx *dc, uint32_t d) {
  size_t open = ps->pos;
  TRY(ps_expect(ps, '[', "dense literal"));
  if (d >= PARSE_MAX_DEPTH) return ps_err(ps, open, "dense literal nested too deeply");
  int64_t want = dc->t->dims[d], count = 0;
  bool inner = d + 1 == dc->t->rank;
  if (ps_peek(ps) != ']') {
    do {
      if (inner) {
        if (dc->idx >= dc->n || count >= want) {
          ps_ws(ps);
          return ps_err(ps, ps->pos, "dense literal has more than %lld elements in dimension %u",
                        (long long)want, d);
        }
        TRY(parse_element(ps, dc->t->dtype, dc->data + (size_t)dc->idx * dc->esz));
        dc->idx++;
      } else {
        if (count >= want) {
          ps_ws(ps);
          return ps_err(ps, ps->pos, "dense literal has more than %lld elements in dimension %u",
                        (long long)want, d);
        }
        if (ps_peek(ps) != '[')
          return ps_err(ps, ps->pos, "expected '[' in dense literal (rank %u), got '%s'",
                        dc->t->rank, ps_tok(ps, ps->pos));
        TRY(dense_list(ps, dc, d + 1));
      }
      count++;
    } while (ps_accept(ps, ','));
  }
  if (count != want)
    return ps_err(ps, open, "dense literal has %lld elements in dimension %u, its type has %lld",
                  (long long)count, d, (long long)want);
  return ps_expect(ps, ']', "dense literal");
}

/* Elements of `dense<...>` between content [cs, ce) for type t. */
static bool dense_body(pstate *ps, size_t cs, size_t ce, const hlo_type *t, size_t type_pos,
                       hlo_attr **out) {
  int64_t n = type_num_elements(t);
  if (n < 0 && type_is_static(t))
    return ps_err(ps, type_pos, "dense literal type has more elements than fit in 64 bits");
  if (n < 0) return ps_err(ps, type_pos, "dense literal needs a static shape");
  if (n > MAX_DENSE_ELEMS) return ps_err(ps, type_pos, "dense literal type too large (%lld elements)", (long long)n);
  size_t esz = hlo_dtype_size(t->dtype);
  ps->pos = cs;
  char c = ps_peek(ps);
  uint8_t one[16];
  if (ps->pos >= ce) {
    if (n != 0) return ps_err(ps, cs, "empty dense literal for a type of %lld elements", (long long)n);
    *out = attr_dense(ps->a, t, NULL, 0, false);
    return *out ? true : ps_oom(ps);
  }
  if (c == '"') {
    size_t sp = ps->pos;
    const char *s = ps->s + sp + 1;
    if (ce - sp < 4 || s[0] != '0' || (s[1] != 'x' && s[1] != 'X'))
      return ps_err(ps, sp, "expected hex string \"0x...\" in dense literal");
    size_t q = sp + 3;
    while (q < ce && hexv(ps->s[q]) >= 0) q++;
    if (q >= ce || ps->s[q] != '"') return ps_err(ps, q, "bad hex digit in dense literal");
    size_t ndig = q - (sp + 3);
    if (ndig % 2) return ps_err(ps, sp, "odd number of hex digits in dense literal");
    size_t nb = ndig / 2;
    bool splat;
    if ((uint64_t)nb == (uint64_t)n * esz) splat = false;
    else if (nb == esz) splat = true;
    else
      return ps_err(ps, sp, "hex dense literal has %zu bytes; type needs %lld (or %zu for a splat)", nb,
                    (long long)n * (long long)esz, esz);
    if (splat && n == 1) splat = false;
    uint8_t *buf = ps_alloc(ps, nb ? nb : 1);
    if (!buf) return false;
    for (size_t i = 0; i < nb; i++)
      buf[i] = (uint8_t)(hexv(ps->s[sp + 3 + 2 * i]) << 4 | hexv(ps->s[sp + 4 + 2 * i]));
    hlo_dtype dt = t->dtype;
    if (dtype_class(dt) == HLO_CLASS_BOOL) {
      for (size_t i = 0; i < nb; i++) buf[i] = buf[i] != 0;
    } else if (dtype_is_int(dt) && dtype_bits(dt) < 8) {
      for (size_t i = 0; i < nb; i++)
        elem_set_i64(dt, buf, (int64_t)i, int_wrap(dt, elem_get_i64(dt, buf, (int64_t)i)));
    }
    ps->pos = q + 1;
    if (ps_peek(ps) != '>' || ps->pos != ce)
      return ps_err(ps, ps->pos, "expected '>' after hex dense literal, got '%s'", ps_tok(ps, ps->pos));
    hlo_attr *a = attr_dense(ps->a, t, NULL, 0, splat);
    if (!a) return ps_oom(ps);
    a->u.dense.data = buf;
    a->u.dense.nbytes = nb;
    *out = a;
    return true;
  }
  if (c == '[') {
    if (t->rank == 0) return ps_err(ps, ps->pos, "list literal for a rank-0 tensor type");
    if ((uint64_t)n > (uint64_t)(ce - cs))
      return ps_err(ps, cs, "dense literal has fewer elements than its type (%lld)", (long long)n);
    dense_ctx dc = {t, esz, n, 0, NULL};
    dc.data = ps_alloc(ps, n ? (size_t)n * esz : 1);
    if (!dc.data) return false;
    TRY(dense_list(ps, &dc, 0));
    if (dc.idx != n) return ps_err(ps, cs, "dense literal has %lld elements, its type %lld", (long long)dc.idx, (long long)n);
    if (ps_peek(ps) != '>' || ps->pos != ce)
      return ps_err(ps, ps->pos, "expected '>' after dense literal, got '%s'", ps_tok(ps, ps->pos));
    hlo_attr *a = attr_dense(ps->a, t, NULL, 0, false);
    if (!a) return ps_oom(ps);
    a->u.dense.data = dc.data;
    a->u.dense.nbytes = (size_t)n * esz;
    *out = a;
    return true;
  }
  memset(one, 0, sizeof one);
  TRY(parse_element(ps, t->dtype, one));
  if (ps_peek(ps) != '>' || ps->pos != ce)
    return ps_err(ps, ps->pos, "expected '>' after dense literal, got '%s'", ps_tok(ps, ps->pos));
  *out = attr_dense(ps->a, t, one, esz, n != 1);
  return *out ? true : ps_oom(ps);
}

/* `dense<...> : type` with the cursor after "dense". */
static bool parse_dense(pstate *ps, size_t start, hlo_attr **out) {
  ps_ws(ps);
  if (ps->pos >= ps->end || ps->s[ps->pos] != '<')
    return ps_err(ps, ps->pos, "expected '<' after 'dense', got '%s'", ps_tok(ps, ps->pos));
  size_t cs = ps->pos + 1;
  TRY(ps_skip_balanced(ps));
  size_t ce = ps->pos - 1;
  TRY(ps_expect(ps, ':', "dense literal"));
  ps_ws(ps);
  size_t tp = ps->pos;
  /* element types hlo does not model (index, strings): keep verbatim */
  if (ps_accept_str(ps, "tensor<")) {
    ps->pos = tp + 6;
    TRY(ps_skip_balanced(ps));
    size_t te = ps->pos;
    const char *ts = ps->s + tp;
    size_t tl = te - tp;
    bool odd = false;
    for (size_t i = 0; i + 6 <= tl; i++)
      if ((ts[i] == 'x' || ts[i] == '<') && memcmp(ts + i + 1, "index", 5) == 0) odd = true;
    if (!odd && tl > 8 && memchr(ts, '!', tl) && !memmem(ts, tl, "!quant", 6)) odd = true;
    if (odd) {
      *out = mk_opaque(ps, start, te);
      return *out != NULL;
    }
    ps->pos = tp;
  }
  hlo_type *t;
  TRY(parse_type(ps, &t));
  if (t->kind != TYPE_TENSOR) return ps_err(ps, tp, "dense literal needs a tensor type");
  size_t after = ps->pos;
  TRY(dense_body(ps, cs, ce, t, tp, out));
  ps->pos = after;
  return true;
}

/* `array<T: v, ...>` with the cursor after "array". */
static bool parse_darray(pstate *ps, hlo_attr **out) {
  TRY(ps_expect(ps, '<', "array attribute"));
  hlo_dtype dt;
  const quant_params *q;
  size_t tp = ps->pos;
  TRY(parse_elem_type(ps, &dt, &q, false));
  if (q || dtype_class(dt) == HLO_CLASS_COMPLEX)
    return ps_err(ps, tp, "unsupported array element type");
  bool isf = dtype_is_float(dt);
  int64_t *iv = NULL;
  double *fv = NULL;
  uint32_t n = 0, cap = 0, nf = 0, capf = 0;
  if (ps_accept(ps, ':')) {
    do {
      uint8_t el[16] = {0};
      TRY(parse_element(ps, dt, el));
      if (isf) {
        double *s = ps_vec_push(ps, (void **)&fv, &nf, &capf, sizeof *s);
        if (!s) return false;
        *s = elem_get_f64(dt, el, 0);
        n = nf;
      } else {
        int64_t *s = ps_vec_push(ps, (void **)&iv, &n, &cap, sizeof *s);
        if (!s) return false;
        *s = dtype_class(dt) == HLO_CLASS_UINT ? (int64_t)elem_get_u64(dt, el, 0) : elem_get_i64(dt, el, 0);
      }
    } while (ps_accept(ps, ','));
  }
  TRY(ps_expect(ps, '>', "array attribute"));
  hlo_attr *a = ps_alloc(ps, sizeof *a);
  if (!a) return false;
  a->kind = ATTR_DENSE_ARRAY;
  a->u.darr.dtype = dt;
  a->u.darr.n = n;
  if (isf) {
    a->u.darr.floats = fv ? fv : ps_alloc(ps, 8);
    if (!a->u.darr.floats) return false;
  } else {
    a->u.darr.ints = iv ? iv : ps_alloc(ps, 8);
    if (!a->u.darr.ints) return false;
  }
  *out = a;
  return true;
}

bool parse_int_list(pstate *ps, int64_t **out, uint32_t *n) {
  TRY(ps_expect(ps, '[', "integer list"));
  int64_t *v = NULL;
  uint32_t cnt = 0, cap = 0;
  if (!ps_accept(ps, ']')) {
    do {
      int64_t *s = ps_vec_push(ps, (void **)&v, &cnt, &cap, sizeof *s);
      if (!s) return false;
      if (ps_accept(ps, '?')) *s = HLO_DYN;
      else TRY(ps_int(ps, s, "integer list"));
    } while (ps_accept(ps, ','));
    TRY(ps_expect(ps, ']', "integer list"));
  }
  if (!v) {
    v = ps_alloc(ps, 8);
    if (!v) return false;
  }
  *out = v;
  *n = cnt;
  return true;
}

/* ==================================================== bare words */

static bool word_is(const char *s, size_t n, const char *w) {
  return strlen(w) == n && memcmp(s, w, n) == 0;
}

/* True when the bare word s[0..n) (followed by the character `next`) may
 * begin an attribute value in MLIR's attribute grammar: a builtin type
 * (an element type hlo knows, `iN`/`siN`/`uiN`, `index`, `none`, the other
 * float types) or, followed by '<', a parameterized builtin type or
 * attribute (`complex<`, `vector<`, `memref<`, `affine_map<`, ...), or
 * `distinct[`. Anything else (an identifier such as `x` or `arrunc.return`)
 * is not an attribute: the callers reject it with a located error. */
static bool bare_type_word(const char *s, size_t n, char next) {
  static const char *const angled[] = {"complex", "vector", "memref", "tensor", "tuple",
                                       "affine_map", "affine_set", "strided", "sparse",
                                       "opaque", NULL};
  static const char *const plain[] = {"index", "none", "f80", "f128", "tf32", NULL};
  if (next == '<') {
    for (int i = 0; angled[i]; i++)
      if (word_is(s, n, angled[i])) return true;
    return false;
  }
  if (next == '[') return word_is(s, n, "distinct");
  hlo_dtype dt;
  if (dtype_parse(s, n, &dt)) return true;
  for (int i = 0; plain[i]; i++)
    if (word_is(s, n, plain[i])) return true;
  size_t i = 0;
  if (n > 0 && (s[0] == 's' || s[0] == 'u')) i = 1;
  if (i >= n || s[i] != 'i' || i + 1 >= n) return false;
  for (i++; i < n; i++)
    if (s[i] < '0' || s[i] > '9') return false;
  return true;
}

/* ========================================================= structs */

static bool is_int_list_next(pstate *ps) {
  if (ps_peek(ps) != '[') return false;
  size_t p = ps->pos + 1;
  while (p < ps->end && (ps->s[p] == ' ' || ps->s[p] == '\n' || ps->s[p] == '\t' || ps->s[p] == '\r'))
    p++;
  char c = p < ps->end ? ps->s[p] : 0;
  return (c >= '0' && c <= '9') || c == '-' || c == '?' || c == ']';
}

/* Normalizes `#stablehlo.conv<raw ...>` fields to the nine ODS fields. */
static bool conv_from_fields(pstate *ps, const hlo_attr *raw, hlo_attr **out) {
  static const char *const names[9] = {
      "input_batch_dimension", "input_feature_dimension", "input_spatial_dimensions",
      "kernel_input_feature_dimension", "kernel_output_feature_dimension",
      "kernel_spatial_dimensions", "output_batch_dimension", "output_feature_dimension",
      "output_spatial_dimensions"};
  named_attr *f = ps_alloc(ps, 9 * sizeof *f);
  if (!f) return false;
  for (int i = 0; i < 9; i++) {
    const hlo_attr *v = attr_field(raw, names[i]);
    bool list = i == 2 || i == 5 || i == 8;
    f[i].name = names[i];
    if (list) {
      if (v && v->kind != ATTR_DENSE_ARRAY) return ps_err(ps, ps->pos, "conv field %s must be a list", names[i]);
      f[i].value = v ? (hlo_attr *)v : mk_dense_array(ps, NULL, 0, HLO_I64);
    } else {
      if (v && v->kind != ATTR_INT) return ps_err(ps, ps->pos, "conv field %s must be an integer", names[i]);
      f[i].value = v ? (hlo_attr *)v : attr_int(ps->a, 0, HLO_I64);
    }
    if (!f[i].value) return ps_oom(ps);
  }
  *out = mk_struct(ps, "stablehlo.conv", f, 9);
  return *out != NULL;
}

bool parse_struct_body(pstate *ps, const char *name, hlo_attr **out) {
  named_attr *f = NULL;
  uint32_t n = 0, cap = 0;
  if (!ps_accept(ps, '>')) {
    do {
      size_t st, len;
      ps_ws(ps);
      size_t np = ps->pos;
      if (!ps_ident(ps, &st, &len))
        return ps_err(ps, np, "expected field name in #%s, got '%s'", name, ps_tok(ps, np));
      TRY(ps_expect(ps, '=', "struct attribute"));
      hlo_attr *v = NULL;
      ps_ws(ps);
      if (is_int_list_next(ps)) {
        int64_t *iv;
        uint32_t k;
        TRY(parse_int_list(ps, &iv, &k));
        if (!k) continue; /* empty fields are omitted */
        v = mk_dense_array(ps, iv, k, HLO_I64);
      } else if (ps_accept_kw(ps, "true")) {
        v = attr_bool(ps->a, true);
      } else if (ps_accept_kw(ps, "false")) {
        v = attr_bool(ps->a, false);
      } else {
        size_t vs = ps->pos, is, il;
        char c = ps->pos < ps->end ? ps->s[ps->pos] : 0;
        if (((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z')) && ps_ident(ps, &is, &il) &&
            !(ps->pos < ps->end && (ps->s[ps->pos] == '<'))) {
          /* a type (dot_algorithm's precision types); no other bare word */
          if (!bare_type_word(ps->s + is, il, ps->pos < ps->end ? ps->s[ps->pos] : 0))
            return ps_err(ps, vs, "expected a value for field '%.*s' of #%s, got the bare word '%.*s'",
                          (int)len, ps->s + st, name, (int)il, ps->s + is);
          v = mk_opaque(ps, vs, ps->pos);
        } else {
          ps->pos = vs;
          if ((c >= '0' && c <= '9') || c == '-') {
            numtok t;
            TRY(lex_num(ps, &t, "struct field"));
            if (t.is_float) {
              double d = num_double(ps, &t);
              if (!isfinite(d))
                return ps_err(ps, t.start, "floating point value too large for f64");
              v = attr_float(ps->a, d, HLO_F64);
            } else if (t.ovf || (!t.neg && t.mag > INT64_MAX) || (t.neg && t.mag > (uint64_t)INT64_MAX + 1))
              return ps_err(ps, t.start, "integer too large");
            else v = attr_int(ps->a, t.neg ? (int64_t)(0 - t.mag) : (int64_t)t.mag, HLO_I64);
          } else {
            TRY(parse_attr(ps, &v));
          }
        }
      }
      if (!v) return ps_oom(ps);
      TRY(ps_attr_add(ps, np, &f, &n, &cap, ps_strndup(ps, ps->s + st, len), v));
    } while (ps_accept(ps, ','));
    TRY(ps_expect(ps, '>', "struct attribute"));
  }
  *out = mk_struct(ps, name, f, n);
  return *out != NULL;
}

/* One side of conv dims: `[b, 0, 1, f]`; letters a/b are the two non-spatial
 * roles (b,f / i,o). */
static bool conv_side(pstate *ps, char r1, char r2, int64_t *d1, int64_t *d2, int64_t **sp,
                      uint32_t *nsp) {
  size_t open = ps->pos;
  TRY(ps_expect(ps, '[', "convolution dimension numbers"));
  int64_t pos = 0, spatial[64];
  int seen[64] = {0};
  uint32_t ns = 0;
  *d1 = *d2 = -1;
  if (!ps_accept(ps, ']')) {
    do {
      ps_ws(ps);
      size_t p = ps->pos;
      char c = p < ps->end ? ps->s[p] : 0;
      if (c >= '0' && c <= '9') {
        int64_t k;
        TRY(ps_int(ps, &k, "convolution dimension numbers"));
        if (k < 0 || k >= 64 || seen[k]) /* k < 0: ps_int wraps literals >= 2^63 */
          return ps_err(ps, p, "bad or repeated spatial dimension %s", ps_tok(ps, p));
        seen[k] = 1;
        spatial[k] = pos;
        if ((uint32_t)k + 1 > ns) ns = (uint32_t)k + 1;
      } else if (c == r1 || c == r2) {
        int64_t *d = c == r1 ? d1 : d2;
        if (*d >= 0) return ps_err(ps, p, "repeated '%c' in convolution dimension numbers", c);
        *d = pos;
        ps->pos++;
      } else {
        return ps_err(ps, p, "expected '%c', '%c' or a spatial dimension, got '%s'", r1, r2, ps_tok(ps, p));
      }
      if (++pos > 64) return ps_err(ps, p, "too many dimensions");
    } while (ps_accept(ps, ','));
    TRY(ps_expect(ps, ']', "convolution dimension numbers"));
  }
  if (*d1 < 0 || *d2 < 0) return ps_err(ps, open, "missing '%c' or '%c' in convolution dimension numbers", r1, r2);
  for (uint32_t i = 0; i < ns; i++)
    if (!seen[i]) return ps_err(ps, open, "missing spatial dimension %u", i);
  *sp = ps_alloc(ps, (ns ? ns : 1) * sizeof **sp);
  if (!*sp) return false;
  memcpy(*sp, spatial, ns * sizeof *spatial);
  *nsp = ns;
  return true;
}

bool parse_conv_dims(pstate *ps, hlo_attr **out) {
  int64_t ib, ifeat, ki, ko, ob, of;
  int64_t *is, *ks, *os;
  uint32_t nis, nks, nos;
  TRY(conv_side(ps, 'b', 'f', &ib, &ifeat, &is, &nis));
  ps_ws(ps);
  if (!ps_accept(ps, 'x')) return ps_err(ps, ps->pos, "expected 'x' in convolution dimension numbers, got '%s'", ps_tok(ps, ps->pos));
  TRY(conv_side(ps, 'i', 'o', &ki, &ko, &ks, &nks));
  TRY(ps_expect_arrow(ps, "convolution dimension numbers"));
  TRY(conv_side(ps, 'b', 'f', &ob, &of, &os, &nos));
  named_attr *f = ps_alloc(ps, 9 * sizeof *f);
  if (!f) return false;
  f[0] = (named_attr){"input_batch_dimension", attr_int(ps->a, ib, HLO_I64)};
  f[1] = (named_attr){"input_feature_dimension", attr_int(ps->a, ifeat, HLO_I64)};
  f[2] = (named_attr){"input_spatial_dimensions", mk_dense_array(ps, is, nis, HLO_I64)};
  f[3] = (named_attr){"kernel_input_feature_dimension", attr_int(ps->a, ki, HLO_I64)};
  f[4] = (named_attr){"kernel_output_feature_dimension", attr_int(ps->a, ko, HLO_I64)};
  f[5] = (named_attr){"kernel_spatial_dimensions", mk_dense_array(ps, ks, nks, HLO_I64)};
  f[6] = (named_attr){"output_batch_dimension", attr_int(ps->a, ob, HLO_I64)};
  f[7] = (named_attr){"output_feature_dimension", attr_int(ps->a, of, HLO_I64)};
  f[8] = (named_attr){"output_spatial_dimensions", mk_dense_array(ps, os, nos, HLO_I64)};
  for (int i = 0; i < 9; i++)
    if (!f[i].value) return ps_oom(ps);
  *out = mk_struct(ps, "stablehlo.conv", f, 9);
  return *out != NULL;
}

/* `#...` attributes (cursor at '#'). */
static bool parse_hash_attr(pstate *ps, hlo_attr **out) {
  size_t start = ps->pos;
  size_t p = start + 1;
  while (p < ps->end && ps_is_ident_char(ps->s[p]) && ps->s[p] != '-') p++;
  const char *nm = ps->s + start + 1;
  size_t nl = p - start - 1;
  bool lt = p < ps->end && ps->s[p] == '<';
  if (lt && ((nl == 9 && memcmp(nm, "stablehlo", 9) == 0) || (nl == 4 && memcmp(nm, "chlo", 4) == 0))) {
    ps->pos = p + 1;
    size_t es, el, vs, vl;
    if (!ps_ident(ps, &es, &el)) return ps_err(ps, ps->pos, "expected enum name, got '%s'", ps_tok(ps, ps->pos));
    if (!ps_ident(ps, &vs, &vl)) return ps_err(ps, ps->pos, "expected enum value, got '%s'", ps_tok(ps, ps->pos));
    TRY(ps_expect(ps, '>', "enum attribute"));
    char *dn = ps_strndup(ps, nm, nl), *en = ps_strndup(ps, ps->s + es, el);
    if (!dn || !en) return false;
    *out = mk_enum(ps, dn, en, ps->s + vs, vl);
    return *out != NULL;
  }
  if (lt && nl > 10 && memcmp(nm, "stablehlo.", 10) == 0) {
    char *sname = ps_strndup(ps, nm, nl);
    if (!sname) return false;
    ps->pos = p + 1;
    if (nl == 14 && memcmp(nm, "stablehlo.conv", 14) == 0) {
      if (ps_accept_kw(ps, "raw")) {
        hlo_attr *raw;
        TRY(parse_struct_body(ps, sname, &raw));
        return conv_from_fields(ps, raw, out);
      }
      TRY(parse_conv_dims(ps, out));
      return ps_expect(ps, '>', "#stablehlo.conv");
    }
    /* struct if it reads `<>` or `<name = ...` */
    size_t save = ps->pos, is, il;
    bool is_struct = ps_peek(ps) == '>';
    if (!is_struct && ps_ident(ps, &is, &il) && ps_peek(ps) == '=') is_struct = true;
    ps->pos = save;
    if (is_struct) return parse_struct_body(ps, sname, out);
  }
  if (lt && ((nl > 4 && memcmp(nm, "sdy.", 4) == 0) || (nl == 3 && memcmp(nm, "sdy", 3) == 0))) {
    bool handled;
    TRY(parse_sdy_hash_attr(ps, nm, nl, p, &handled, out));
    if (handled) return true;
  }
  /* anything else: verbatim */
  ps->pos = p;
  if (lt) TRY(ps_skip_balanced(ps));
  *out = mk_opaque(ps, start, ps->pos);
  return *out != NULL;
}

/* ========================================================= dictionaries */

bool ps_attr_add(pstate *ps, size_t pos, named_attr **items, uint32_t *n, uint32_t *cap,
                 const char *name, hlo_attr *v) {
  if (!name || !v) return ps_oom(ps);
  for (uint32_t i = 0; i < *n; i++)
    if (strcmp((*items)[i].name, name) == 0)
      return ps_err(ps, pos, "duplicate attribute '%s'", name);
  named_attr *s = ps_vec_push(ps, (void **)items, n, cap, sizeof *s);
  if (!s) return false;
  s->name = name;
  s->value = v;
  return true;
}

bool parse_attr_dict(pstate *ps, named_attr **items, uint32_t *n, uint32_t *cap) {
  size_t open = ps->pos;
  TRY(ps_expect(ps, '{', "attribute dictionary"));
  if (++ps->depth > PARSE_MAX_DEPTH) return ps_err(ps, open, "attributes nested too deeply");
  if (!ps_accept(ps, '}')) {
    do {
      ps_ws(ps);
      size_t np = ps->pos;
      const char *name;
      if (ps_peek(ps) == '"') {
        char *s;
        size_t l;
        TRY(ps_string(ps, &s, &l));
        if (l == 0) return ps_err(ps, np, "expected a non-empty attribute name");
        if (strlen(s) != l) return ps_err(ps, np, "attribute name holds a NUL byte");
        name = s;
      } else {
        size_t st, len;
        if (!ps_ident(ps, &st, &len))
          return ps_err(ps, np, "expected attribute name, got '%s'", ps_tok(ps, np));
        name = ps_strndup(ps, ps->s + st, len);
        if (!name) return false;
      }
      hlo_attr *v;
      if (ps_accept(ps, '=')) {
        TRY(parse_attr(ps, &v));
      } else {
        v = attr_unit(ps->a);
        if (!v) return ps_oom(ps);
      }
      TRY(ps_attr_add(ps, np, items, n, cap, name, v));
    } while (ps_accept(ps, ','));
    TRY(ps_expect(ps, '}', "attribute dictionary"));
  }
  ps->depth--;
  return true;
}

/* ============================================================ attributes */

/* After a number: an optional `: scalar-type`. Sets *dt (or *is_index). */
static bool opt_scalar_type(pstate *ps, bool *has, hlo_dtype *dt, bool *is_index) {
  *has = false;
  *is_index = false;
  size_t save = ps->pos;
  if (!ps_accept(ps, ':')) return true;
  if (ps_accept_kw(ps, "index")) { *has = true; *is_index = true; return true; }
  const quant_params *q;
  if (parse_elem_type(ps, dt, &q, true) && !q) { *has = true; return true; }
  ps->pos = save;
  return true;
}

/* A number attribute with optional `: type` (ATTR_INT or ATTR_FLOAT). */
static bool parse_number_attr(pstate *ps, hlo_attr **out) {
  numtok t;
  size_t start;
  ps_ws(ps);
  start = ps->pos;
  TRY(lex_num(ps, &t, "attribute"));
  bool has, is_index;
  hlo_dtype dt = HLO_I64;
  TRY(opt_scalar_type(ps, &has, &dt, &is_index));
  if (is_index) {
    *out = mk_opaque(ps, start, ps->pos);
    return *out != NULL;
  }
  if (!has) dt = t.is_float ? HLO_F64 : HLO_I64;
  hlo_dtype_class c = dtype_class(dt);
  if (c == HLO_CLASS_COMPLEX) return ps_err(ps, start, "complex scalar attributes are not supported");
  if (c == HLO_CLASS_FLOAT) {
    double v;
    if (t.is_hex) {
      if (t.ovf || (dtype_bits(dt) < 64 && t.mag >> dtype_bits(dt)))
        return ps_err(ps, start, "hexadecimal float literal does not fit in %s", hlo_dtype_name(dt));
      v = float_decode(dt, t.mag);
    } else {
      v = num_double(ps, &t);
      if (dt != HLO_F64) v = float_round(dt, v);
      /* a finite literal that does not fit (1.0e+381), as MLIR rejects it */
      if (!isfinite(v) && dt != HLO_F8E8M0FNU)
        return ps_err(ps, start, "floating point value too large for %s", hlo_dtype_name(dt));
    }
    *out = attr_float(ps->a, v, dt);
    return *out ? true : ps_oom(ps);
  }
  if (t.is_float) return ps_err(ps, start, "float literal for integer type %s", hlo_dtype_name(dt));
  bool fits = has ? int_in_range(dt, &t)
                  : !t.ovf && (t.neg ? t.mag <= (uint64_t)INT64_MAX + 1 : t.mag <= INT64_MAX);
  if (!fits)
    return ps_err(ps, start, "integer literal out of range for %s", hlo_dtype_name(dt));
  int64_t v = t.neg ? (int64_t)(0 - t.mag) : (int64_t)t.mag;
  if (c != HLO_CLASS_UINT) v = int_wrap(dt, v);
  *out = attr_int(ps->a, v, dt);
  return *out ? true : ps_oom(ps);
}

bool parse_attr(pstate *ps, hlo_attr **out) {
  char c = ps_peek(ps);
  size_t start = ps->pos;
  if (++ps->depth > PARSE_MAX_DEPTH) return ps_err(ps, start, "attributes nested too deeply");
  bool ok = true;
  if (c == '"') {
    char *s;
    size_t l;
    ok = ps_string(ps, &s, &l);
    if (ok) {
      hlo_attr *a = ps_alloc(ps, sizeof *a);
      if (!a) return false;
      a->kind = ATTR_STRING;
      a->u.str.s = s;
      a->u.str.len = l;
      *out = a;
    }
  } else if (c == '@') {
    ps->pos++;
    size_t st = ps->pos;
    if (ps_peek(ps) == '"' && ps->pos == st) {
      char *s;
      size_t l;
      ok = ps_string(ps, &s, &l);
      if (ok) *out = attr_symbol(ps->a, s);
    } else {
      while (ps->pos < ps->end) {
        char d = ps->s[ps->pos];
        if (ps_is_ident_char(d) && d != '-') { ps->pos++; continue; }
        if (d == ':' && ps->pos + 2 < ps->end && ps->s[ps->pos + 1] == ':' && ps->s[ps->pos + 2] == '@') {
          ps->pos += 3;
          continue;
        }
        break;
      }
      char c0 = ps->pos > st ? ps->s[st] : 0;
      if (!((c0 >= 'a' && c0 <= 'z') || (c0 >= 'A' && c0 <= 'Z') || c0 == '_'))
        return ps_err(ps, st, "expected symbol name after '@' (a bare identifier or a string)");
      char *nm = ps_strndup(ps, ps->s + st, ps->pos - st);
      if (!nm) return false;
      *out = attr_symbol(ps->a, nm);
    }
    if (ok && !*out) return ps_oom(ps);
  } else if (c == '[') {
    ps->pos++;
    hlo_attr **items = NULL;
    uint32_t n = 0, cap = 0;
    if (!ps_accept(ps, ']')) {
      do {
        hlo_attr **s = ps_vec_push(ps, (void **)&items, &n, &cap, sizeof *s);
        if (!s) return false;
        TRY(parse_attr(ps, s));
      } while (ps_accept(ps, ','));
      TRY(ps_expect(ps, ']', "array attribute"));
    }
    hlo_attr *a = ps_alloc(ps, sizeof *a);
    if (!a) return false;
    a->kind = ATTR_ARRAY;
    a->u.arr.n = n;
    a->u.arr.items = items;
    *out = a;
  } else if (c == '{') {
    hlo_attr *a = ps_alloc(ps, sizeof *a);
    if (!a) return false;
    a->kind = ATTR_DICT;
    uint32_t cap = 0;
    ok = parse_attr_dict(ps, &a->u.dict.entries, &a->u.dict.n, &cap);
    *out = a;
  } else if (c == '#') {
    ok = parse_hash_attr(ps, out);
  } else if (c == '(') {
    /* a function type (generic func.func's function_type): kept verbatim,
     * its types stashed for the function parser */
    ok = parse_func_type(ps, &ps->fn_ins, &ps->fn_nin, &ps->fn_outs, &ps->fn_nout);
    if (ok) ok = (*out = mk_opaque(ps, start, ps->pos)) != NULL;
  } else if ((c >= '0' && c <= '9') || c == '-') {
    ok = parse_number_attr(ps, out);
  } else if (c == '!' && strncmp(ps->s + start, "!stablehlo.token", 16) != 0 &&
             strncmp(ps->s + start, "!quant.", 7) != 0) {
    ps->pos++;
    while (ps->pos < ps->end && ps_is_ident_char(ps->s[ps->pos])) ps->pos++;
    if (ps->pos < ps->end && ps->s[ps->pos] == '<') ok = ps_skip_balanced(ps);
    if (ok) ok = (*out = mk_opaque(ps, start, ps->pos)) != NULL;
  } else if (ps_accept_kw(ps, "true") || ps_accept_kw(ps, "false")) {
    *out = attr_bool(ps->a, ps->s[start] == 't');
    if (!*out) return ps_oom(ps);
  } else if (ps_accept_kw(ps, "unit")) {
    *out = attr_unit(ps->a);
    if (!*out) return ps_oom(ps);
  } else if (ps_accept_kw(ps, "dense_resource")) {
    ok = parse_dense_resource(ps, start, out);
  } else if (ps_accept_kw(ps, "dense")) {
    ok = parse_dense(ps, start, out);
  } else if (ps_accept_kw(ps, "array")) {
    ok = parse_darray(ps, out);
  } else if (ps_peek_kw(ps, "tensor") || ps_peek_kw(ps, "tuple") || c == '!') {
    ps->pos = start;
    hlo_type *t;
    ok = parse_type(ps, &t);
    if (ok) {
      *out = attr_type(ps->a, t);
      if (!*out) return ps_oom(ps);
    }
  } else {
    size_t st, len;
    if (!ps_ident(ps, &st, &len))
      return ps_err(ps, start, "expected attribute value, got '%s'", ps_tok(ps, start));
    char next = ps->pos < ps->end ? ps->s[ps->pos] : 0;
    if (!bare_type_word(ps->s + st, len, next))
      return ps_err(ps, start, "expected attribute value, got the bare word '%.*s' (not an "
                    "attribute: quote a string, '@' a symbol)", (int)(len > 40 ? 40 : len),
                    ps->s + st);
    if (next == '<') ok = ps_skip_balanced(ps);
    if (ok && next == '[') {
      ok = ps_skip_balanced(ps);
      if (ok && (ps->pos >= ps->end || ps->s[ps->pos] != '<'))
        return ps_err(ps, ps->pos, "expected '<' after 'distinct[...]'");
      if (ok) ok = ps_skip_balanced(ps);
    }
    if (ok) ok = (*out = mk_opaque(ps, start, ps->pos)) != NULL;
  }
  if (!ok) return false;
  ps->depth--;
  return true;
}
