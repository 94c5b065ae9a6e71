/* parse_type.c — MLIR types: tensor<2x?xf32[, encoding]>, tuple<...>,
 * !stablehlo.token, element types (dtypes.def, complex<..>) and
 * !quant.uniform<storage[<min:max>]:expressed[:axis], scale[:zp] | {..}>. */
#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include "ir/element.h"
#include "parse/parse_internal.h"

#define MAX_RANK 256

/* A decimal float (quant scales). */
static bool parse_double(pstate *ps, double *out, const char *what) {
  ps_ws(ps);
  const char *p = ps->s + ps->pos;
  char c = *p;
  if (!((c >= '0' && c <= '9') || c == '-' || c == '+' || c == '.'))
    return ps_err(ps, ps->pos, "expected number in %s, got '%s'", what, ps_tok(ps, ps->pos));
  char *e;
  errno = 0;
  double d = strtod(p, &e);
  if (e == p || (size_t)(e - ps->s) > ps->end)
    return ps_err(ps, ps->pos, "expected number in %s, got '%s'", what, ps_tok(ps, ps->pos));
  if (!isfinite(d))  /* 1e400, -inf, nan: MLIR's parser takes only finite scales */
    return ps_err(ps, ps->pos, "%s must be a finite number, got '%.*s'", what, (int)(e - p), p);
  ps->pos = (size_t)(e - ps->s);
  *out = d;
  return true;
}

/* Storage type names of the quant dialect: i8, u8 (= ui8), i4, i16, i32... */
static bool quant_storage(const char *s, size_t n, hlo_dtype *dt) {
  if (n >= 2 && s[0] == 'u' && s[1] != 'i') {
    char buf[8];
    if (n + 1 >= sizeof buf) return false;
    buf[0] = 'u';
    buf[1] = 'i';
    memcpy(buf + 2, s + 1, n - 1);
    return dtype_parse(buf, n + 1, dt);
  }
  return dtype_parse(s, n, dt);
}

static bool parse_quant(pstate *ps, size_t start, const quant_params **out) {
  quant_params *q = ps_alloc(ps, sizeof *q);
  if (!q) return false;
  size_t st, len;
  ps_ws(ps);
  size_t sp = ps->pos;
  if (!ps_ident(ps, &st, &len) || !quant_storage(ps->s + st, len, &q->storage) ||
      !dtype_is_int(q->storage))
    return ps_err(ps, sp, "expected quantized storage type (i8, u8, ...), got '%s'", ps_tok(ps, sp));
  q->storage_min = int_min(q->storage);
  q->storage_max = (int64_t)int_max(q->storage);
  if (ps_accept(ps, '<')) {
    TRY(ps_int(ps, &q->storage_min, "storage range"));
    TRY(ps_expect(ps, ':', "storage range"));
    TRY(ps_int(ps, &q->storage_max, "storage range"));
    TRY(ps_expect(ps, '>', "storage range"));
    q->has_range = true;
  }
  TRY(ps_expect(ps, ':', "quantized type"));
  ps_ws(ps);
  size_t ep = ps->pos;
  if (!ps_ident(ps, &st, &len) || !dtype_parse(ps->s + st, len, &q->expressed) ||
      !dtype_is_float(q->expressed))
    return ps_err(ps, ep, "expected expressed float type, got '%s'", ps_tok(ps, ep));
  q->axis = -1;
  if (ps_accept(ps, ':')) {
    int64_t ax;
    TRY(ps_int(ps, &ax, "quantization axis"));
    if (ax < 0 || ax > INT32_MAX) return ps_err(ps, ep, "bad quantization axis");
    q->axis = (int32_t)ax;
  }
  TRY(ps_expect(ps, ',', "quantized type"));
  bool many = ps_accept(ps, '{');
  uint32_t cap = 0, capz = 0, nz = 0;
  q->num_scales = 0;
  do {
    double s = 0;
    int64_t zp = 0;
    TRY(parse_double(ps, &s, "quantization scale"));
    if (ps_accept(ps, ':')) TRY(ps_int(ps, &zp, "zero point"));
    double *sl = ps_vec_push(ps, (void **)&q->scales, &q->num_scales, &cap, sizeof *sl);
    int64_t *zl = ps_vec_push(ps, (void **)&q->zero_points, &nz, &capz, sizeof *zl);
    if (!sl || !zl) return false;
    *sl = s;
    *zl = zp;
  } while (many && ps_accept(ps, ','));
  if (many) TRY(ps_expect(ps, '}', "quantization scales"));
  TRY(ps_expect(ps, '>', "quantized type"));
  if ((q->axis < 0) != (q->num_scales == 1 && !many))
    return ps_err(ps, start, "per-axis quantization needs an axis and a scale list");
  *out = q;
  return true;
}

bool parse_elem_type(pstate *ps, hlo_dtype *dt, const quant_params **q, bool soft) {
  ps_ws(ps);
  size_t start = ps->pos;
  *q = NULL;
  if (ps_accept_str(ps, "!quant.uniform<")) {
    TRY(parse_quant(ps, start, q));
    *dt = (*q)->storage;
    return true;
  }
  size_t st, len;
  if (ps_ident(ps, &st, &len)) {
    if (len == 7 && memcmp(ps->s + st, "complex", 7) == 0 && ps_accept(ps, '<')) {
      size_t s2, l2;
      if (ps_ident(ps, &s2, &l2) && ps_accept(ps, '>')) {
        if (l2 == 3 && memcmp(ps->s + s2, "f32", 3) == 0) { *dt = HLO_C64; return true; }
        if (l2 == 3 && memcmp(ps->s + s2, "f64", 3) == 0) { *dt = HLO_C128; return true; }
      }
    } else if (dtype_parse(ps->s + st, len, dt) && (unsigned)*dt < HLO_C64) {
      return true;
    }
  }
  if (soft) {
    ps->pos = start;
    return false;
  }
  ps->pos = start;
  if (ps_ident(ps, &st, &len)) {
    ps->pos = start;
    return ps_err(ps, start, "unknown element type '%.*s'", (int)len, ps->s + st);
  }
  return ps_err(ps, start, "expected element type, got '%s'", ps_tok(ps, start));
}

/* Skips the raw text of an attribute (identifier chars, then a balanced
 * <...> group if any). */
static bool skip_attr_text(pstate *ps) {
  size_t st = ps->pos;
  while (ps->pos < ps->end && (ps_is_ident_char(ps->s[ps->pos]) || ps->s[ps->pos] == '#' ||
                               ps->s[ps->pos] == '!')) ps->pos++;
  if (ps->pos < ps->end && ps->s[ps->pos] == '<') TRY(ps_skip_balanced(ps));
  if (ps->pos == st) return ps_err(ps, st, "expected attribute, got '%s'", ps_tok(ps, st));
  return true;
}

static bool parse_tensor(pstate *ps, hlo_type **out) {
  int64_t dims[MAX_RANK];
  uint32_t rank = 0;
  hlo_dtype dt;
  const quant_params *q;
  while (1) {
    ps_ws(ps);
    size_t p = ps->pos;
    char c = p < ps->end ? ps->s[p] : 0;
    int64_t d;
    if (c == '?') {
      d = HLO_DYN;
      ps->pos++;
    } else if (c >= '0' && c <= '9') {
      uint64_t v = 0;
      while (ps->pos < ps->end && ps->s[ps->pos] >= '0' && ps->s[ps->pos] <= '9') {
        v = v * 10 + (uint64_t)(ps->s[ps->pos] - '0');
        if (v > ((uint64_t)1 << 62)) return ps_err(ps, p, "dimension size too large");
        ps->pos++;
      }
      d = (int64_t)v;
    } else if (c == '*') {
      return ps_err(ps, p, "unranked tensors are not supported");
    } else {
      break;
    }
    if (ps->pos >= ps->end || ps->s[ps->pos] != 'x')
      return ps_err(ps, ps->pos, "expected 'x' in dimension list, got '%s'", ps_tok(ps, ps->pos));
    ps->pos++;
    if (rank >= MAX_RANK) return ps_err(ps, p, "tensor rank too large");
    dims[rank++] = d;
  }
  TRY(parse_elem_type(ps, &dt, &q, false));
  const char *enc = NULL;
  if (ps_accept(ps, ',')) {
    ps_ws(ps);
    size_t st = ps->pos;
    TRY(skip_attr_text(ps));
    enc = ps_strndup(ps, ps->s + st, ps->pos - st);
    if (!enc) return false;
  }
  TRY(ps_expect(ps, '>', "tensor type"));
  hlo_type *t = type_tensor(ps->a, dt, rank, dims);
  if (!t) return ps_oom(ps);
  t->quant = q;
  t->encoding = enc;
  *out = t;
  return true;
}

bool parse_type(pstate *ps, hlo_type **out) {
  ps_ws(ps);
  size_t start = ps->pos;
  if (ps_accept_str(ps, "tensor<")) return parse_tensor(ps, out);
  if (ps_accept_str(ps, "!stablehlo.token")) {
    *out = type_token(ps->a);
    return *out ? true : ps_oom(ps);
  }
  if (ps_accept_str(ps, "tuple<")) {
    if (++ps->depth > PARSE_MAX_DEPTH) return ps_err(ps, start, "types nested too deeply");
    hlo_type **el = NULL;
    uint32_t n = 0, cap = 0;
    if (!ps_accept(ps, '>')) {
      do {
        hlo_type **slot = ps_vec_push(ps, (void **)&el, &n, &cap, sizeof *slot);
        if (!slot) return false;
        TRY(parse_type(ps, slot));
      } while (ps_accept(ps, ','));
      TRY(ps_expect(ps, '>', "tuple type"));
    }
    ps->depth--;
    *out = type_tuple(ps->a, n, el);
    return *out ? true : ps_oom(ps);
  }
  hlo_dtype dt;
  const quant_params *q;
  if (parse_elem_type(ps, &dt, &q, true)) {
    ps->pos = start;
    return ps_err(ps, start, "expected tensor type, got scalar type '%s'", ps_tok(ps, start));
  }
  return ps_err(ps, start, "expected type, got '%s'", ps_tok(ps, start));
}

bool parse_type_list(pstate *ps, hlo_type ***out, uint32_t *n) {
  hlo_type **l = NULL;
  uint32_t cnt = 0, cap = 0;
  do {
    hlo_type **slot = ps_vec_push(ps, (void **)&l, &cnt, &cap, sizeof *slot);
    if (!slot) return false;
    TRY(parse_type(ps, slot));
  } while (ps_accept(ps, ','));
  *out = l;
  *n = cnt;
  return true;
}

bool parse_type_list_parens(pstate *ps, hlo_type ***out, uint32_t *n) {
  if (ps_accept(ps, '(')) {
    *out = NULL;
    *n = 0;
    if (ps_accept(ps, ')')) return true;
    TRY(parse_type_list(ps, out, n));
    return ps_expect(ps, ')', "type list");
  }
  hlo_type **l = ps_alloc(ps, sizeof *l);
  if (!l) return false;
  TRY(parse_type(ps, l));
  *out = l;
  *n = 1;
  return true;
}

bool parse_result_types(pstate *ps, hlo_type ***outs, uint32_t *nout) {
  return parse_type_list_parens(ps, outs, nout);
}

bool parse_func_type(pstate *ps, hlo_type ***ins, uint32_t *nin, hlo_type ***outs,
                     uint32_t *nout) {
  if (ps_peek(ps) != '(')
    return ps_err(ps, ps->pos, "expected '(' in function type, got '%s'", ps_tok(ps, ps->pos));
  TRY(parse_type_list_parens(ps, ins, nin));
  TRY(ps_expect_arrow(ps, "function type"));
  return parse_result_types(ps, outs, nout);
}
