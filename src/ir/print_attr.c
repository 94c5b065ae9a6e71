/* print_attr.c — types, attributes and dense literals as MLIR text.
 *
 * The forms are MLIR's (mlir/lib/IR/AsmPrinter.cpp) and the StableHLO
 * dialect's attribute printers, read backwards through ir.h's ATTRIBUTE
 * CONTRACT: whatever the parser stores, this prints so the parser stores the
 * same thing again. */
#include "ir/print.h"

#include <ctype.h>
#include <inttypes.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include "support/float.h"

/* Dense literals with more elements than this print as a hex blob. */
#define HEX_ELEMS_LIMIT 100

/* ----------------------------------------------------------------- types */

static hlo_dtype_class dtype_class(hlo_dtype t) {
  switch (t) {
#define HLO_DTYPE(e, s, bits, bytes, cls) case HLO_##e: return cls;
#include "hlo/dtypes.def"
#undef HLO_DTYPE
  default: return HLO_CLASS_SINT;
  }
}

static unsigned dtype_bits(hlo_dtype t) {
  switch (t) {
#define HLO_DTYPE(e, s, bits, bytes, cls) case HLO_##e: return bits;
#include "hlo/dtypes.def"
#undef HLO_DTYPE
  default: return 0;
  }
}

/* Shortest `%.{p}g` of a double that parses back exactly (quant scales). */
static void print_double_short(strbuf *b, double x) {
  char buf[40];
  for (int p = 1; p <= 17; p++) {
    snprintf(buf, sizeof buf, "%.*g", p, x);
    if (strtod(buf, NULL) == x) break;
  }
  /* quant scales must look like floats to the parser: keep a '.' or 'e' */
  if (!strpbrk(buf, ".eEn")) strcat(buf, ".0");
  sb_puts(b, buf);
}

/* `!quant.uniform<storage:expressed[:axis], scales:zero_points>`. */
static void print_quant(strbuf *b, const quant_params *q) {
  const char *st = hlo_dtype_name(q->storage);
  sb_puts(b, "!quant.uniform<");
  /* the quant dialect spells unsigned storage `u8`, not `ui8` */
  if (st[0] == 'u' && st[1] == 'i') { sb_putc(b, 'u'); sb_puts(b, st + 2); }
  else sb_puts(b, st);
  if (q->has_range) sb_printf(b, "<%" PRId64 ":%" PRId64 ">", q->storage_min, q->storage_max);
  sb_putc(b, ':');
  sb_puts(b, hlo_dtype_name(q->expressed));
  if (q->axis >= 0) {
    sb_printf(b, ":%d, {", (int)q->axis);
    for (uint32_t i = 0; i < q->num_scales; i++) {
      if (i) sb_putc(b, ',');
      print_double_short(b, q->scales[i]);
      if (q->zero_points[i]) sb_printf(b, ":%" PRId64, q->zero_points[i]);
    }
    sb_putc(b, '}');
  } else {
    sb_puts(b, ", ");
    print_double_short(b, q->num_scales ? q->scales[0] : 1.0);
    if (q->num_scales && q->zero_points[0]) sb_printf(b, ":%" PRId64, q->zero_points[0]);
  }
  sb_putc(b, '>');
}

void print_elem_type(strbuf *b, const hlo_type *t) {
  if (t->quant) print_quant(b, t->quant);
  else sb_puts(b, hlo_dtype_name(t->dtype));
}

void print_type(strbuf *b, const hlo_type *t) {
  if (!t) { sb_puts(b, "<<null type>>"); return; }
  switch (t->kind) {
  case TYPE_TOKEN: sb_puts(b, "!stablehlo.token"); return;
  case TYPE_TUPLE:
    sb_puts(b, "tuple<");
    for (uint32_t i = 0; i < t->num_elems; i++) {
      if (i) sb_puts(b, ", ");
      print_type(b, t->elems[i]);
    }
    sb_putc(b, '>');
    return;
  case TYPE_TENSOR:
    sb_puts(b, "tensor<");
    for (uint32_t i = 0; i < t->rank; i++) {
      if (t->dims[i] == HLO_DYN) sb_putc(b, '?');
      else sb_printf(b, "%" PRId64, t->dims[i]);
      sb_putc(b, 'x');
    }
    print_elem_type(b, t);
    if (t->encoding) {
      /* the raw text may or may not hold the ", " separator */
      const char *e = t->encoding;
      while (*e == ' ') e++;
      if (*e == ',') { e++; while (*e == ' ') e++; }
      sb_puts(b, ", ");
      sb_puts(b, e);
    }
    sb_putc(b, '>');
    return;
  }
}

/* -------------------------------------------------------------- scalars */

void print_string(strbuf *b, const char *s, size_t n) {
  static const char hex[] = "0123456789ABCDEF";
  sb_putc(b, '"');
  for (size_t i = 0; i < n; i++) {
    unsigned char c = (unsigned char)s[i];
    if (c == '"' || c == '\\') { sb_putc(b, '\\'); sb_putc(b, (char)c); }
    else if (c >= 0x20 && c < 0x7f) sb_putc(b, (char)c);
    else { sb_putc(b, '\\'); sb_putc(b, hex[c >> 4]); sb_putc(b, hex[c & 15]); }
  }
  sb_putc(b, '"');
}

void print_name(strbuf *b, const char *s) {
  bool ident = s[0] && (isalpha((unsigned char)s[0]) || s[0] == '_');
  for (const char *p = s; *p && ident; p++)
    if (!(isalnum((unsigned char)*p) || *p == '_' || *p == '$' || *p == '.')) ident = false;
  if (ident) sb_puts(b, s);
  else print_string(b, s, strlen(s));
}

void print_symbol(strbuf *b, const char *s, size_t n) {
  /* bare when every `::@`-separated segment is an MLIR bare-id
   * ([A-Za-z_][A-Za-z0-9_$.]*), so that the parser reads back the same
   * name; otherwise the whole name is quoted (issue 12) */
  bool bare = n > 0;
  size_t seg = 0;
  for (size_t i = 0; i < n && bare; i++) {
    char c = s[i];
    if (c == ':' && i + 2 < n && s[i + 1] == ':' && s[i + 2] == '@' && i > seg) {
      i += 2;
      seg = i + 1;
      bare = seg < n;
      continue;
    }
    if (!(isalpha((unsigned char)c) || c == '_' || (i > seg && (isdigit((unsigned char)c) ||
                                                                 c == '.' || c == '$'))))
      bare = false;
  }
  sb_putc(b, '@');
  if (bare) sb_putn(b, s, n);
  else print_string(b, s, n);
}

void print_flat_symbol(strbuf *b, const char *s, size_t n) {
  /* a flat symbol has no `::@` nesting: any `::` in it is part of the name */
  if (memchr(s, ':', n)) {
    sb_putc(b, '@');
    print_string(b, s, n);
    return;
  }
  print_symbol(b, s, n);
}

void print_int_list(strbuf *b, const int64_t *v, uint32_t n) {
  sb_putc(b, '[');
  for (uint32_t i = 0; i < n; i++) {
    if (i) sb_puts(b, ", ");
    sb_printf(b, "%" PRId64, v[i]);
  }
  sb_putc(b, ']');
}

/* --------------------------------------------- APFloat's toString, exactly */

/* A little unsigned big integer for the exact decimal expansion of a binary
 * float (f64's smallest subnormal needs ~2,550 bits). */
typedef struct bignum {
  uint32_t w[96];
  unsigned n; /* limbs in use; no leading zero limb */
} bignum;

static void bn_trim(bignum *a) {
  while (a->n && !a->w[a->n - 1]) a->n--;
}

static void bn_mul_small(bignum *a, uint32_t m) {
  uint64_t c = 0;
  for (unsigned i = 0; i < a->n; i++) {
    c += (uint64_t)a->w[i] * m;
    a->w[i] = (uint32_t)c;
    c >>= 32;
  }
  if (c && a->n < sizeof a->w / sizeof a->w[0]) a->w[a->n++] = (uint32_t)c;
}

/* a /= d (floor); returns the remainder. */
static uint32_t bn_divmod_small(bignum *a, uint32_t d) {
  uint64_t r = 0;
  for (unsigned i = a->n; i-- > 0;) {
    r = (r << 32) | a->w[i];
    a->w[i] = (uint32_t)(r / d);
    r %= d;
  }
  bn_trim(a);
  return (uint32_t)r;
}

static unsigned bn_bits(const bignum *a) {
  if (!a->n) return 0;
  unsigned bits = (a->n - 1) * 32;
  for (uint32_t top = a->w[a->n - 1]; top; top >>= 1) bits++;
  return bits;
}

/* APFloat's AdjustToPrecision on the digit buffer (least significant digit
 * first): keep `prec` digits, rounding half up on the first dropped digit. */
static void adjust_digits(char *buf, unsigned *nd, int *exp, unsigned prec) {
  unsigned n = *nd;
  if (n <= prec) return;
  unsigned first = n - prec;
  if (buf[first - 1] < '5') {
    while (first < n && buf[first] == '0') first++;
  } else {
    for (unsigned i = first; i != n; i++) {
      if (buf[i] == '9') first++;
      else { buf[i]++; break; }
    }
    if (first == n) {
      *exp += (int)first;
      buf[0] = '1';
      *nd = 1;
      return;
    }
  }
  *exp += (int)first;
  memmove(buf, buf + first, n - first);
  *nd = n - first;
}

/* LLVM APFloat::toString (llvm/lib/Support/APFloat.cpp, toStringImpl) of a
 * finite double `x` that is a value of a type with `precision` significand
 * bits (24 for f32), into out (>= 64 chars). FormatPrecision 0 means
 * "enough to round-trip": 2 + precision * 59 / 196 digits. */
static void apfloat_to_string(char *out, double x, unsigned precision, unsigned fprec,
                              unsigned max_pad, bool trunc_zero) {
  size_t o = 0;
  if (signbit(x)) out[o++] = '-';
  x = fabs(x);
  if (x == 0) {
    if (!max_pad) {
      if (trunc_zero) o += (size_t)sprintf(out + o, "0.0E+0");
      else {
        o += (size_t)sprintf(out + o, "0.0");
        for (unsigned i = 1; i < fprec; i++) out[o++] = '0';
        o += (size_t)sprintf(out + o, "e+00");
      }
    } else out[o++] = '0';
    out[o] = 0;
    return;
  }
  if (!fprec) fprec = 2 + precision * 59 / 196;
  int e2;
  double m = frexp(x, &e2);
  uint64_t sig = (uint64_t)ldexp(m, 53);
  int exp = e2 - 53;
  while (!(sig & 1)) { sig >>= 1; exp++; }
  bignum s = {{(uint32_t)sig, (uint32_t)(sig >> 32)}, 2};
  bn_trim(&s);
  if (exp > 0) {
    for (int k = exp; k > 0; k -= 16) bn_mul_small(&s, 1u << (k < 16 ? k : 16));
    exp = 0;
  } else if (exp < 0) {
    for (int k = -exp; k > 0; k -= 13) {
      uint32_t f = 1;
      for (int j = 0; j < (k < 13 ? k : 13); j++) f *= 5;
      bn_mul_small(&s, f);
    }
  }
  /* AdjustToPrecision on the integer: drop whole decimal digits (floor) */
  unsigned bits = bn_bits(&s), req = (fprec * 196 + 58) / 59;
  if (bits > req) {
    unsigned tens = (bits - req) * 59 / 196;
    exp += (int)tens;
    for (; tens >= 9; tens -= 9) bn_divmod_small(&s, 1000000000u);
    uint32_t d = 1;
    for (; tens; tens--) d *= 10;
    if (d > 1) bn_divmod_small(&s, d);
  }
  char buf[96];
  unsigned nd = 0;
  bool trail = true;
  while (s.n) {
    uint32_t d = bn_divmod_small(&s, 10);
    if (trail && !d) exp++;
    else if (nd < sizeof buf) { buf[nd++] = (char)('0' + d); trail = false; }
  }
  adjust_digits(buf, &nd, &exp, fprec);
  bool sci;
  if (!max_pad) sci = true;
  else if (exp >= 0) sci = (unsigned)exp > max_pad || nd + (unsigned)exp > fprec;
  else {
    int msd = exp + (int)nd - 1;
    sci = msd >= 0 ? false : (unsigned)-msd > max_pad;
  }
  if (sci) {
    exp += (int)nd - 1;
    out[o++] = buf[nd - 1];
    out[o++] = '.';
    if (nd == 1 && trunc_zero) out[o++] = '0';
    else
      for (unsigned i = 1; i != nd; i++) out[o++] = buf[nd - 1 - i];
    if (!trunc_zero && fprec > nd - 1)
      for (unsigned i = 0; i < fprec - nd + 1; i++) out[o++] = '0';
    out[o++] = trunc_zero ? 'E' : 'e';
    out[o++] = exp >= 0 ? '+' : '-';
    if (exp < 0) exp = -exp;
    if (!trunc_zero && exp < 10) out[o++] = '0';
    o += (size_t)sprintf(out + o, "%d", exp);
    out[o] = 0;
    return;
  }
  if (exp >= 0) {
    for (unsigned i = 0; i != nd; i++) out[o++] = buf[nd - 1 - i];
    for (int i = 0; i != exp; i++) out[o++] = '0';
    out[o] = 0;
    return;
  }
  int whole = exp + (int)nd;
  unsigned i = 0;
  if (whole > 0) {
    for (; i != (unsigned)whole; i++) out[o++] = buf[nd - i - 1];
    out[o++] = '.';
  } else {
    out[o++] = '0';
    out[o++] = '.';
    for (int z = 1; z != 1 - whole; z++) out[o++] = '0';
  }
  for (; i != nd; i++) out[o++] = buf[nd - i - 1];
  out[o] = 0;
}

/* Text `s` parses back to exactly `bits` in float type `t`. */
static bool float_roundtrips(const char *s, hlo_dtype t, uint64_t bits) {
  double d = strtod(s, NULL);
  return float_encode(t, d) == bits;
}

/* MLIR's printFloatValue (mlir/lib/IR/AsmPrinter.cpp): APFloat::toString
 * with six digits (`1.429690e+00`) when that parses back bitwise-equal,
 * else APFloat's default toString (`9.99999974E-6`, `0.797884583`) when it
 * has a '.', else (inf, NaN, integral values) the bits in hex. */
void print_float_bits(strbuf *b, hlo_dtype t, uint64_t bits) {
  double x = float_decode(t, bits);
  char buf[96];
  float_format ff;
  unsigned precision = float_format_of(t, &ff) ? (unsigned)ff.mant_bits + 1 : 53;
  if (isfinite(x)) {
    apfloat_to_string(buf, x, precision, 6, 0, false);
    if (float_roundtrips(buf, t, bits)) { sb_puts(b, buf); return; }
    apfloat_to_string(buf, x, precision, 0, 3, true);
    if (strchr(buf, '.')) { sb_puts(b, buf); return; }
  }
  unsigned nbits = dtype_bits(t);
  int digits = (int)((nbits + 3) / 4);
  if (digits < 1) digits = 1;
  if (nbits < 64) bits &= ((uint64_t)1 << nbits) - 1;
  sb_printf(b, "0x%0*" PRIX64, digits, bits);
}

/* A float attribute value: as a value of `t` when it is one exactly, else
 * as the double it holds (so it parses back to the same double). */
static void print_float_value(strbuf *b, hlo_dtype t, double v) {
  if (float_decode(t, float_encode(t, v)) == v || v != v) print_float_bits(b, t, float_encode(t, v));
  else {
    uint64_t bits;
    memcpy(&bits, &v, 8);
    print_float_bits(b, HLO_F64, bits);
  }
}

/* ---------------------------------------------------------------- dense */

static uint64_t load_le(const uint8_t *p, size_t n) {
  uint64_t v = 0;
  for (size_t i = 0; i < n && i < 8; i++) v |= (uint64_t)p[i] << (8 * i);
  return v;
}

/* One element at `p` of dtype `t`. */
static void print_elem(strbuf *b, hlo_dtype t, const uint8_t *p) {
  size_t sz = hlo_dtype_size(t);
  switch (dtype_class(t)) {
  case HLO_CLASS_BOOL: sb_puts(b, p[0] ? "true" : "false"); return;
  case HLO_CLASS_SINT: {
    uint64_t u = load_le(p, sz);
    unsigned bits = (unsigned)(sz * 8);
    int64_t v;
    if (bits < 64 && (u >> (bits - 1)) & 1) v = (int64_t)(u | (~(uint64_t)0 << bits));
    else v = (int64_t)u;
    sb_printf(b, "%" PRId64, v);
    return;
  }
  case HLO_CLASS_UINT: sb_printf(b, "%" PRIu64, load_le(p, sz)); return;
  case HLO_CLASS_FLOAT: print_float_bits(b, t, load_le(p, sz)); return;
  case HLO_CLASS_COMPLEX: {
    hlo_dtype part = t == HLO_C64 ? HLO_F32 : HLO_F64;
    size_t h = sz / 2;
    sb_putc(b, '(');
    print_float_bits(b, part, load_le(p, h));
    sb_putc(b, ',');
    print_float_bits(b, part, load_le(p + h, h));
    sb_putc(b, ')');
    return;
  }
  }
}

/* Nested list of dimension `d` starting at element *idx. */
static void print_nested(strbuf *b, const hlo_type *t, hlo_dtype dt, size_t esz,
                         const uint8_t *data, uint32_t d, int64_t *idx) {
  if (d == t->rank) {
    print_elem(b, dt, data + (size_t)*idx * esz);
    (*idx)++;
    return;
  }
  sb_putc(b, '[');
  for (int64_t i = 0; i < t->dims[d]; i++) {
    if (i) sb_puts(b, ", ");
    print_nested(b, t, dt, esz, data, d + 1, idx);
  }
  sb_putc(b, ']');
}

void print_dense_body(strbuf *b, const hlo_attr *a) {
  const hlo_type *t = a->u.dense.type;
  hlo_dtype dt = t->dtype;
  size_t esz = hlo_dtype_size(dt);
  int64_t n = a->u.dense.num_elems;
  const uint8_t *data = a->u.dense.data;
  sb_puts(b, "dense<");
  if (n == 0) { sb_putc(b, '>'); return; }
  bool splat = a->u.dense.splat || n == 1;
  if (!splat && a->u.dense.nbytes >= (size_t)n * esz) {
    splat = true; /* all elements equal: print as a splat like MLIR */
    for (int64_t i = 1; i < n && splat; i++)
      if (memcmp(data, data + (size_t)i * esz, esz)) splat = false;
  }
  if (splat) {
    if (a->u.dense.nbytes >= esz) print_elem(b, dt, data);
    sb_putc(b, '>');
    return;
  }
  if (a->u.dense.nbytes < (size_t)n * esz || t->kind != TYPE_TENSOR) {
    sb_puts(b, "<<bad dense>>>");
    return;
  }
  if (n > HEX_ELEMS_LIMIT) {
    static const char hex[] = "0123456789ABCDEF";
    size_t nb = (size_t)n * esz;
    sb_puts(b, "\"0x");
    for (size_t i = 0; i < nb; i++) {
      sb_putc(b, hex[data[i] >> 4]);
      sb_putc(b, hex[data[i] & 15]);
    }
    sb_puts(b, "\">");
    return;
  }
  int64_t idx = 0;
  print_nested(b, t, dt, esz, data, 0, &idx);
  sb_putc(b, '>');
}

/* ----------------------------------------------------------- attributes */

static void print_dtype_suffix(strbuf *b, hlo_dtype t) {
  sb_puts(b, " : ");
  sb_puts(b, hlo_dtype_name(t));
}

static void print_dense_array(strbuf *b, const hlo_attr *a) {
  hlo_dtype dt = a->u.darr.dtype;
  sb_puts(b, "array<");
  sb_puts(b, hlo_dtype_name(dt));
  for (uint32_t i = 0; i < a->u.darr.n; i++) {
    sb_puts(b, i ? ", " : ": ");
    hlo_dtype_class c = dtype_class(dt);
    if (c == HLO_CLASS_BOOL) sb_puts(b, a->u.darr.ints[i] ? "true" : "false");
    else if (c == HLO_CLASS_FLOAT)
      print_float_value(b, dt, a->u.darr.floats[i]);
    else if (c == HLO_CLASS_UINT) sb_printf(b, "%" PRIu64, (uint64_t)a->u.darr.ints[i]);
    else sb_printf(b, "%" PRId64, a->u.darr.ints[i]);
  }
  sb_putc(b, '>');
}

/* `[b, 0, 1, f]`-style list of one side of conv dimension numbers, or false
 * when the fields do not form a permutation. */
static bool conv_side(strbuf *b, int64_t d0, char c0, int64_t d1, char c1,
                      const hlo_attr *sp) {
  int64_t *sv = NULL;
  uint32_t ns = 0;
  if (sp) {
    if (sp->kind != ATTR_DENSE_ARRAY) return false;
    sv = sp->u.darr.ints;
    ns = sp->u.darr.n;
  }
  uint32_t rank = ns + 2;
  if (rank > 64) return false;
  char slot[64][24];
  bool used[64] = {false};
  if (d0 < 0 || d0 >= rank || d1 < 0 || d1 >= rank || d0 == d1) return false;
  used[d0] = used[d1] = true;
  snprintf(slot[d0], sizeof slot[d0], "%c", c0);
  snprintf(slot[d1], sizeof slot[d1], "%c", c1);
  for (uint32_t i = 0; i < ns; i++) {
    if (sv[i] < 0 || sv[i] >= rank || used[sv[i]]) return false;
    used[sv[i]] = true;
    snprintf(slot[sv[i]], sizeof slot[sv[i]], "%u", i);
  }
  sb_putc(b, '[');
  for (uint32_t i = 0; i < rank; i++) {
    if (i) sb_puts(b, ", ");
    sb_puts(b, slot[i]);
  }
  sb_putc(b, ']');
  return true;
}

static int64_t field_int(const hlo_attr *st, const char *name, bool *ok) {
  const hlo_attr *f = attr_field(st, name);
  if (!f || f->kind != ATTR_INT) { *ok = false; return -1; }
  return f->u.i.v;
}

/* Pretty conv dimension numbers `[b, 0, 1, f]x[0, 1, i, o]->[b, 0, 1, f]`
 * into `b`; false when the struct does not have that shape. */
static bool print_conv_dims(strbuf *b, const hlo_attr *a) {
  bool ok = true;
  int64_t ib = field_int(a, "input_batch_dimension", &ok);
  int64_t ifd = field_int(a, "input_feature_dimension", &ok);
  int64_t ki = field_int(a, "kernel_input_feature_dimension", &ok);
  int64_t ko = field_int(a, "kernel_output_feature_dimension", &ok);
  int64_t ob = field_int(a, "output_batch_dimension", &ok);
  int64_t of = field_int(a, "output_feature_dimension", &ok);
  if (!ok || a->u.st.n != 9) return false;
  strbuf tmp;
  sb_init(&tmp);
  ok = conv_side(&tmp, ib, 'b', ifd, 'f', attr_field(a, "input_spatial_dimensions"));
  if (ok) sb_putc(&tmp, 'x');
  ok = ok && conv_side(&tmp, ki, 'i', ko, 'o', attr_field(a, "kernel_spatial_dimensions"));
  if (ok) sb_puts(&tmp, "->");
  ok = ok && conv_side(&tmp, ob, 'b', of, 'f', attr_field(a, "output_spatial_dimensions"));
  if (ok && !tmp.oom) sb_putn(b, sb_cstr(&tmp), tmp.len);
  else if (tmp.oom) b->oom = 1;
  sb_free(&tmp);
  return ok;
}

void print_conv_dim_numbers(strbuf *b, const hlo_attr *a) {
  if (print_conv_dims(b, a)) return;
  sb_puts(b, "raw ");
  for (uint32_t i = 0; i < a->u.st.n; i++) {
    if (i) sb_puts(b, ", ");
    sb_puts(b, a->u.st.fields[i].name);
    sb_puts(b, " = ");
    const hlo_attr *f = a->u.st.fields[i].value;
    if (f->kind == ATTR_DENSE_ARRAY) print_int_list(b, f->u.darr.ints, f->u.darr.n);
    else if (f->kind == ATTR_INT) sb_printf(b, "%" PRId64, f->u.i.v);
    else print_attr(b, f);
  }
}

/* A field value inside `#stablehlo.NAME<...>`: lists and numbers bare. */
static void print_struct_field(strbuf *b, const hlo_attr *f) {
  switch (f->kind) {
  case ATTR_DENSE_ARRAY:
    if (dtype_class(f->u.darr.dtype) != HLO_CLASS_FLOAT &&
        dtype_class(f->u.darr.dtype) != HLO_CLASS_BOOL) {
      print_int_list(b, f->u.darr.ints, f->u.darr.n);
      return;
    }
    break;
  case ATTR_INT: sb_printf(b, "%" PRId64, f->u.i.v); return;
  case ATTR_FLOAT: print_float_value(b, f->u.f.dtype, f->u.f.v); return;
  default: break;
  }
  print_attr(b, f);
}

void print_attr_dict(strbuf *b, const named_attr *items, uint32_t n) {
  sb_putc(b, '{');
  for (uint32_t i = 0; i < n; i++) {
    if (i) sb_puts(b, ", ");
    print_name(b, items[i].name);
    if (items[i].value && items[i].value->kind != ATTR_UNIT) {
      sb_puts(b, " = ");
      print_attr(b, items[i].value);
    }
  }
  sb_putc(b, '}');
}

void print_attr(strbuf *b, const hlo_attr *a) {
  if (!a) { sb_puts(b, "<<null attr>>"); return; }
  switch (a->kind) {
  case ATTR_UNIT: sb_puts(b, "unit"); return;
  case ATTR_BOOL: sb_puts(b, a->u.b ? "true" : "false"); return;
  case ATTR_INT:
    if (dtype_class(a->u.i.dtype) == HLO_CLASS_UINT) sb_printf(b, "%" PRIu64, (uint64_t)a->u.i.v);
    else sb_printf(b, "%" PRId64, a->u.i.v);
    print_dtype_suffix(b, a->u.i.dtype);
    return;
  case ATTR_FLOAT:
    print_float_value(b, a->u.f.dtype, a->u.f.v);
    print_dtype_suffix(b, a->u.f.dtype);
    return;
  case ATTR_STRING: print_string(b, a->u.str.s, a->u.str.len); return;
  case ATTR_SYMBOL: print_symbol(b, a->u.str.s, a->u.str.len); return;
  case ATTR_OPAQUE: sb_putn(b, a->u.str.s, a->u.str.len); return;
  case ATTR_TYPE: print_type(b, a->u.type); return;
  case ATTR_ARRAY:
    sb_putc(b, '[');
    for (uint32_t i = 0; i < a->u.arr.n; i++) {
      if (i) sb_puts(b, ", ");
      print_attr(b, a->u.arr.items[i]);
    }
    sb_putc(b, ']');
    return;
  case ATTR_DENSE_ARRAY: print_dense_array(b, a); return;
  case ATTR_SDY: print_sdy_attr(b, a->u.sdy); return;
  case ATTR_DENSE:
    if (a->u.dense.resource) {
      sb_puts(b, "dense_resource<");
      print_name(b, a->u.dense.resource);
      sb_puts(b, "> : ");
      print_type(b, a->u.dense.type);
      return;
    }
    print_dense_body(b, a);
    sb_puts(b, " : ");
    print_type(b, a->u.dense.type);
    return;
  case ATTR_DICT: print_attr_dict(b, a->u.dict.entries, a->u.dict.n); return;
  case ATTR_ENUM:
    sb_printf(b, "#%s<%s %s>", a->u.en.dialect, a->u.en.name, a->u.en.value);
    return;
  case ATTR_STRUCT:
    sb_printf(b, "#%s<", a->u.st.name);
    if (!strcmp(a->u.st.name, "stablehlo.conv")) {
      print_conv_dim_numbers(b, a);
    } else if (!strcmp(a->u.st.name, "stablehlo.output_operand_alias")) {
      /* MLIR's syntax for this one spells every field, empty lists too */
      static const char *const names[3] = {"output_tuple_indices", "operand_index",
                                           "operand_tuple_indices"};
      for (int i = 0; i < 3; i++) {
        const hlo_attr *f = attr_field(a, names[i]);
        sb_printf(b, "%s%s = ", i ? ", " : "", names[i]);
        if (f) print_struct_field(b, f);
        else sb_puts(b, i == 1 ? "0" : "[]");
      }
    } else {
      for (uint32_t i = 0; i < a->u.st.n; i++) {
        if (i) sb_puts(b, ", ");
        sb_puts(b, a->u.st.fields[i].name);
        sb_puts(b, " = ");
        print_struct_field(b, a->u.st.fields[i].value);
      }
    }
    sb_putc(b, '>');
    return;
  }
}
