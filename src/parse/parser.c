/* parser.c — the MLIR text parser's core: the cursor and its errors, value
 * scopes, the module / func.func / region / block structure, the generic op
 * form, and parse_split. Types are in parse_type.c, attributes in
 * parse_attr.c, pretty op forms in parse_ops.c. */
#include "parse/parse.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "parse/parse_internal.h"
#include "support/strbuf.h"

/* ================================================================ cursor */

hlo_loc ps_loc(pstate *ps, size_t pos) {
  if (pos > ps->end) pos = ps->end;
  const char *s = ps->s;
  if (pos < ps->lc_pos) {
    /* step back line by line (usually a few bytes: result names before an
     * op's name) */
    while (pos < ps->lc_line_start) {
      size_t ls = ps->lc_line_start - 1;
      while (ls > 0 && s[ls - 1] != '\n') ls--;
      ps->lc_line--;
      ps->lc_line_start = ls;
    }
    ps->lc_pos = pos;
  }
  size_t p = ps->lc_pos;
  while (p < pos) {
    const char *nl = memchr(s + p, '\n', pos - p);
    if (!nl) break;
    ps->lc_line++;
    p = (size_t)(nl - s) + 1;
    ps->lc_line_start = p;
  }
  ps->lc_pos = pos;
  hlo_loc l = {ps->src, ps->lc_line, (uint32_t)(pos - ps->lc_line_start + 1)};
  return l;
}

bool ps_err(pstate *ps, size_t pos, const char *fmt, ...) {
  if (ps->err) return false;
  hlo_loc l = ps_loc(ps, pos);
  va_list ap;
  va_start(ap, fmt);
  ps->err = status_vat(HLO_PARSE_ERROR, &l, fmt, ap);
  va_end(ap);
  return false;
}

bool ps_oom(pstate *ps) {
  if (!ps->err) ps->err = status_new(HLO_RESOURCE_EXHAUSTED, "out of memory while parsing");
  return false;
}

void ps_ws(pstate *ps) {
  const char *s = ps->s;
  size_t p = ps->pos, e = ps->end;
  while (p < e) {
    char c = s[p];
    if (c == ' ' || c == '\n' || c == '\t' || c == '\r') { p++; continue; }
    if (c == '/' && p + 1 < e && s[p + 1] == '/') {
      const char *nl = memchr(s + p, '\n', e - p);
      p = nl ? (size_t)(nl - s) + 1 : e;
      continue;
    }
    break;
  }
  ps->pos = p;
}

char ps_peek(pstate *ps) {
  ps_ws(ps);
  return ps->pos < ps->end ? ps->s[ps->pos] : 0;
}

bool ps_accept(pstate *ps, char c) {
  if (ps_peek(ps) == c && c) { ps->pos++; return true; }
  return false;
}

bool ps_accept_str(pstate *ps, const char *lit) {
  ps_ws(ps);
  size_t n = strlen(lit);
  if (ps->end - ps->pos >= n && memcmp(ps->s + ps->pos, lit, n) == 0) {
    ps->pos += n;
    return true;
  }
  return false;
}

bool ps_is_ident_char(char c) {
  return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_' ||
         c == '$' || c == '.' || c == '-';
}

const char *ps_tok(pstate *ps, size_t pos) {
  if (pos >= ps->end || !ps->s[pos]) return "end of input";
  const char *s = ps->s + pos;
  size_t n = 1, max = sizeof ps->tokbuf - 4;
  char c = s[0];
  if (ps_is_ident_char(c) || c == '%' || c == '@' || c == '^' || c == '#' || c == '!') {
    while (pos + n < ps->end && n < max && ps_is_ident_char(s[n])) {
      if (s[n] == '-' && n + 1 < ps->end - pos && s[n + 1] == '>') break;
      n++;
    }
  } else if (c == '-' && pos + 1 < ps->end && s[1] == '>') {
    n = 2;
  }
  memcpy(ps->tokbuf, s, n);
  ps->tokbuf[n] = 0;
  for (size_t i = 0; i < n; i++)
    if ((unsigned char)ps->tokbuf[i] < 32) ps->tokbuf[i] = '?';
  return ps->tokbuf;
}

bool ps_expect(pstate *ps, char c, const char *what) {
  if (ps_accept(ps, c)) return true;
  return ps_err(ps, ps->pos, "expected '%c' in %s, got '%s'", c, what, ps_tok(ps, ps->pos));
}

bool ps_expect_arrow(pstate *ps, const char *what) {
  if (ps_accept_str(ps, "->")) return true;
  return ps_err(ps, ps->pos, "expected '->' in %s, got '%s'", what, ps_tok(ps, ps->pos));
}

static bool ident_start(char c) {
  return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '_';
}

bool ps_ident(pstate *ps, size_t *start, size_t *len) {
  ps_ws(ps);
  size_t p = ps->pos;
  if (p >= ps->end || !ident_start(ps->s[p])) return false;
  size_t q = p + 1;
  while (q < ps->end) {
    char c = ps->s[q];
    if (c == '-' ) break; /* '-' is not part of bare identifiers */
    if (!ps_is_ident_char(c)) break;
    q++;
  }
  *start = p;
  *len = q - p;
  ps->pos = q;
  return true;
}

bool ps_peek_kw(pstate *ps, const char *w) {
  ps_ws(ps);
  size_t n = strlen(w);
  if (ps->end - ps->pos < n || memcmp(ps->s + ps->pos, w, n) != 0) return false;
  size_t q = ps->pos + n;
  if (q < ps->end && ps_is_ident_char(ps->s[q]) && ps->s[q] != '-') return false;
  return true;
}

bool ps_accept_kw(pstate *ps, const char *w) {
  if (!ps_peek_kw(ps, w)) return false;
  ps->pos += strlen(w);
  return true;
}

bool ps_expect_kw(pstate *ps, const char *w, const char *what) {
  if (ps_accept_kw(ps, w)) return true;
  return ps_err(ps, ps->pos, "expected '%s' in %s, got '%s'", w, what, ps_tok(ps, ps->pos));
}

static int hexval(char c) {
  if (c >= '0' && c <= '9') return c - '0';
  if (c >= 'a' && c <= 'f') return c - 'a' + 10;
  if (c >= 'A' && c <= 'F') return c - 'A' + 10;
  return -1;
}

bool ps_int(pstate *ps, int64_t *out, const char *what) {
  ps_ws(ps);
  size_t p = ps->pos, start = p;
  bool neg = false;
  if (p < ps->end && ps->s[p] == '-') { neg = true; p++; }
  if (p >= ps->end || ps->s[p] < '0' || ps->s[p] > '9')
    return ps_err(ps, start, "expected integer in %s, got '%s'", what, ps_tok(ps, start));
  uint64_t v = 0;
  bool ovf = false;
  if (ps->s[p] == '0' && p + 1 < ps->end && (ps->s[p + 1] == 'x' || ps->s[p + 1] == 'X')) {
    p += 2;
    int digits = 0;
    for (int h; p < ps->end && (h = hexval(ps->s[p])) >= 0; p++, digits++) {
      if (v >> 60) ovf = true;
      v = v << 4 | (uint64_t)h;
    }
    if (!digits) return ps_err(ps, start, "expected hex digits in %s", what);
  } else {
    for (; p < ps->end && ps->s[p] >= '0' && ps->s[p] <= '9'; p++) {
      uint64_t d = (uint64_t)(ps->s[p] - '0');
      if (v > (UINT64_MAX - d) / 10) ovf = true;
      v = v * 10 + d;
    }
  }
  if (ovf) return ps_err(ps, start, "integer literal too large in %s", what);
  if (neg && v > (uint64_t)INT64_MAX + 1)
    return ps_err(ps, start, "integer literal too small in %s", what);
  ps->pos = p;
  *out = neg ? (int64_t)(0 - v) : (int64_t)v;
  return true;
}

bool ps_string(pstate *ps, char **out, size_t *out_len) {
  ps_ws(ps);
  size_t start = ps->pos;
  if (ps->pos >= ps->end || ps->s[ps->pos] != '"')
    return ps_err(ps, start, "expected string, got '%s'", ps_tok(ps, start));
  size_t p = start + 1, n = 0;
  /* first pass: find the end and the unescaped length */
  while (1) {
    if (p >= ps->end || ps->s[p] == '\n') return ps_err(ps, start, "unterminated string");
    char c = ps->s[p];
    if (c == '"') break;
    if (c == '\\') {
      if (p + 1 >= ps->end) return ps_err(ps, start, "unterminated string");
      char d = ps->s[p + 1];
      if (hexval(d) >= 0 && p + 2 < ps->end && hexval(ps->s[p + 2]) >= 0) p += 3;
      else p += 2;
    } else {
      p++;
    }
    n++;
  }
  char *buf = ps_alloc(ps, n + 1);
  if (!buf) return false;
  size_t q = start + 1, k = 0;
  while (q < p) {
    char c = ps->s[q];
    if (c == '\\') {
      char d = ps->s[q + 1];
      if (hexval(d) >= 0 && q + 2 < p && hexval(ps->s[q + 2]) >= 0) {
        buf[k++] = (char)(hexval(d) * 16 + hexval(ps->s[q + 2]));
        q += 3;
        continue;
      }
      buf[k++] = d == 'n' ? '\n' : d == 't' ? '\t' : d;
      q += 2;
    } else {
      buf[k++] = c;
      q++;
    }
  }
  buf[k] = 0;
  ps->pos = p + 1;
  *out = buf;
  *out_len = k;
  return true;
}

bool ps_skip_balanced(pstate *ps) {
  size_t start = ps->pos;
  char stack[PARSE_MAX_DEPTH];
  int sp = 0;
  size_t p = ps->pos;
  while (p < ps->end) {
    char c = ps->s[p];
    if (c == '"') {
      p++;
      while (p < ps->end && ps->s[p] != '"') p += ps->s[p] == '\\' ? 2 : 1;
      if (p >= ps->end) break;
      p++;
      continue;
    }
    if (c == '-' && p + 1 < ps->end && ps->s[p + 1] == '>') { p += 2; continue; }
    char close = c == '<' ? '>' : c == '(' ? ')' : c == '[' ? ']' : c == '{' ? '}' : 0;
    if (close) {
      if (sp >= PARSE_MAX_DEPTH) return ps_err(ps, p, "nesting too deep");
      stack[sp++] = close;
    } else if (c == '>' || c == ')' || c == ']' || c == '}') {
      if (!sp || stack[sp - 1] != c)
        return ps_err(ps, p, "unbalanced '%c'", c);
      sp--;
      if (!sp) { ps->pos = p + 1; return true; }
    } else if (!sp) {
      return ps_err(ps, p, "expected bracket");
    }
    p++;
  }
  return ps_err(ps, start, "unterminated bracket group");
}

void *ps_alloc(pstate *ps, size_t n) {
  void *p = arena_alloc(ps->a, n);
  if (!p) ps_oom(ps);
  return p;
}

char *ps_strndup(pstate *ps, const char *s, size_t n) {
  char *p = arena_strndup(ps->a, s, n);
  if (!p) ps_oom(ps);
  return p;
}

void *ps_vec_push(pstate *ps, void **arr, uint32_t *n, uint32_t *cap, size_t el) {
  if (*n == *cap) {
    uint32_t nc = *cap ? *cap * 2 : 4;
    if (nc > (1u << 28)) { ps_oom(ps); return NULL; }
    void *na = arena_calloc(ps->a, nc, el);
    if (!na) { ps_oom(ps); return NULL; }
    if (*n) memcpy(na, *arr, *n * el);
    *arr = na;
    *cap = nc;
  }
  return (char *)*arr + (size_t)(*n)++ * el;
}

/* ================================================================ values */

static uint32_t hash_name(const char *s, size_t n) {
  uint32_t h = 2166136261u;
  for (size_t i = 0; i < n; i++) h = (h ^ (uint8_t)s[i]) * 16777619u;
  return h;
}

bool ps_value_name(pstate *ps, size_t *start, size_t *len) {
  ps_ws(ps);
  size_t p = ps->pos;
  if (p >= ps->end || ps->s[p] != '%')
    return ps_err(ps, p, "expected value name, got '%s'", ps_tok(ps, p));
  size_t q = p + 1;
  while (q < ps->end) {
    char c = ps->s[q];
    if (!ps_is_ident_char(c)) break;
    q++;
  }
  if (q == p + 1) return ps_err(ps, p, "expected value name after '%%'");
  *start = p + 1;
  *len = q - p - 1;
  ps->pos = q;
  return true;
}

static sym_entry *sym_find(pstate *ps, const char *name, size_t len, uint32_t h) {
  for (int32_t i = ps->buckets[h & (SYM_BUCKETS - 1)]; i >= 0; i = ps->syms[i].next) {
    sym_entry *e = &ps->syms[i];
    if (e->hash == h && e->len == len && memcmp(e->name, name, len) == 0) return e;
  }
  return NULL;
}

bool ps_define(pstate *ps, size_t pos, const char *name, uint32_t len, hlo_value *first,
               uint32_t count) {
  uint32_t h = hash_name(name, len);
  if (sym_find(ps, name, len, h))
    return ps_err(ps, pos, "redefinition of value '%%%.*s'", (int)len, name);
  if (ps->nsyms == ps->capsyms) {
    uint32_t nc = ps->capsyms ? ps->capsyms * 2 : 256;
    sym_entry *ns = xrealloc(ps->syms, nc * sizeof *ns);
    if (!ns) return ps_oom(ps);
    ps->syms = ns;
    ps->capsyms = nc;
  }
  sym_entry *e = &ps->syms[ps->nsyms];
  e->name = name;
  e->len = len;
  e->hash = h;
  e->count = count;
  e->first = first;
  e->next = ps->buckets[h & (SYM_BUCKETS - 1)];
  ps->buckets[h & (SYM_BUCKETS - 1)] = (int32_t)ps->nsyms++;
  char *nm = ps_strndup(ps, name, len);
  if (!nm) return false;
  for (uint32_t i = 0; i < count; i++) {
    first[i].name = nm;
    first[i].loc = ps_loc(ps, pos);
  }
  return true;
}

uint32_t ps_scope_mark(pstate *ps) { return ps->nsyms; }

void ps_scope_pop(pstate *ps, uint32_t mark) {
  while (ps->nsyms > mark) {
    sym_entry *e = &ps->syms[--ps->nsyms];
    ps->buckets[e->hash & (SYM_BUCKETS - 1)] = e->next;
  }
}

bool ps_use(pstate *ps, hlo_value **out) {
  size_t st, len;
  ps_ws(ps);
  size_t pos = ps->pos;
  TRY(ps_value_name(ps, &st, &len));
  uint32_t idx = 0;
  bool has_idx = false;
  if (ps->pos < ps->end && ps->s[ps->pos] == '#') {
    ps->pos++;
    size_t ip = ps->pos;
    if (ip >= ps->end || ps->s[ip] < '0' || ps->s[ip] > '9')
      return ps_err(ps, ip, "expected result number after '#'");
    int64_t v;
    TRY(ps_int(ps, &v, "value use"));
    if (v < 0 || v > UINT32_MAX) return ps_err(ps, ip, "result number too large");
    idx = (uint32_t)v;
    has_idx = true;
  }
  sym_entry *e = sym_find(ps, ps->s + st, len, hash_name(ps->s + st, len));
  if (!e) return ps_err(ps, pos, "use of undefined value '%%%.*s'", (int)len, ps->s + st);
  if (idx >= e->count)
    return ps_err(ps, pos, "result number %u out of range for '%%%.*s' (%u results)", idx,
                  (int)len, ps->s + st, e->count);
  (void)has_idx;
  *out = &e->first[idx];
  return true;
}

/* A short spelling of `t` for messages (tensor<2x?xf32>, tuple<...>). */
static void type_str(const hlo_type *t, char *buf, size_t cap) {
  strbuf b;
  sb_init(&b);
  if (t->kind == TYPE_TOKEN) {
    sb_puts(&b, "!stablehlo.token");
  } else if (t->kind == TYPE_TUPLE) {
    sb_printf(&b, "tuple<%u elements>", t->num_elems);
  } else {
    sb_puts(&b, "tensor<");
    for (uint32_t i = 0; i < t->rank; i++) {
      if (t->dims[i] == HLO_DYN) sb_puts(&b, "?x");
      else sb_printf(&b, "%lldx", (long long)t->dims[i]);
    }
    if (t->quant) sb_printf(&b, "!quant.uniform<%s:...>>", hlo_dtype_name(t->dtype));
    else sb_printf(&b, "%s>", hlo_dtype_name(t->dtype));
  }
  snprintf(buf, cap, "%s", b.oom ? "?" : sb_cstr(&b));
  sb_free(&b);
}

bool check_use_type(pstate *ps, size_t pos, hlo_value *v, const hlo_type *declared) {
  if (type_equal(v->type, declared)) return true;
  char want[96], have[96];
  type_str(declared, want, sizeof want);
  type_str(v->type, have, sizeof have);
  if (v->loc.line)
    return ps_err(ps, pos, "type of value '%%%s' does not match its declared type: declared %s, "
                  "defined as %s; '%%%s' is defined at %u:%u", v->name ? v->name : "?", want,
                  have, v->name ? v->name : "?", (unsigned)v->loc.line, (unsigned)v->loc.col);
  return ps_err(ps, pos, "type of value '%%%s' does not match its declared type: declared %s, "
                "defined as %s", v->name ? v->name : "?", want, have);
}

/* ============================================================== op build */

bool opb_operand(pstate *ps, opb *b, hlo_value *v) {
  hlo_value **slot = ps_vec_push(ps, (void **)&b->ops, &b->nops, &b->capops, sizeof *slot);
  if (!slot) return false;
  *slot = v;
  return true;
}

bool opb_attr_at(pstate *ps, opb *b, size_t pos, const char *name, hlo_attr *v) {
  return ps_attr_add(ps, pos, &b->attrs, &b->nattrs, &b->capattrs, name, v);
}

bool opb_attr(pstate *ps, opb *b, const char *name, hlo_attr *v) {
  return opb_attr_at(ps, b, ps->pos, name, v);
}

bool opb_region(pstate *ps, opb *b, hlo_region *r) {
  hlo_region **slot = ps_vec_push(ps, (void **)&b->regs, &b->nregs, &b->capregs, sizeof *slot);
  if (!slot) return false;
  *slot = r;
  return true;
}

/* Moves a region parsed on its own into `dst`, the region of op `parent`. */
static void region_move(hlo_region *dst, const hlo_region *src, hlo_op *parent) {
  *dst = *src;
  dst->parent = parent;
  dst->block.parent = dst;
  for (uint32_t i = 0; i < dst->block.num_args; i++) dst->block.args[i].block = &dst->block;
  for (hlo_op *op = dst->block.first; op; op = op->next) op->parent = &dst->block;
}

bool parse_opt_loc(pstate *ps, const char **out) {
  *out = NULL;
  if (!ps_peek_kw(ps, "loc")) return true;
  size_t start = ps->pos;
  ps->pos += 3;
  if (ps_peek(ps) != '(') return ps_err(ps, ps->pos, "expected '(' after 'loc'");
  TRY(ps_skip_balanced(ps));
  *out = ps_strndup(ps, ps->s + start, ps->pos - start);
  return *out != NULL;
}

/* ============================================================ regions */

static bool parse_op(pstate *ps, hlo_block *blk);

static bool parse_block_ops(pstate *ps, hlo_block *blk) {
  while (1) {
    char c = ps_peek(ps);
    if (c == '}') return true;
    if (c == '^') return ps_err(ps, ps->pos, "multiple blocks in a region are not supported");
    if (!c) return ps_err(ps, ps->pos, "expected '}' at end of region, got end of input");
    /* MLIR verifies this as it parses: nothing may follow a terminator (printed, an op
     * after an operand-less `return` would read as its operand list). */
    if (blk->last && (op_flags(blk->last->opcode) & OPF_TERMINATOR))
      return ps_err(ps, ps->pos, "an operation follows '%s', which must be the last of its block",
                    op_name(blk->last->opcode));
    TRY(parse_op(ps, blk));
  }
}

bool parse_region(pstate *ps, hlo_region **out, hlo_type *const *pre_types,
                  const name_ref *pre_names, uint32_t n_pre) {
  size_t open = ps->pos;
  TRY(ps_expect(ps, '{', "region"));
  if (++ps->depth > PARSE_MAX_DEPTH) return ps_err(ps, open, "regions nested too deeply");
  uint32_t mark = ps_scope_mark(ps);
  hlo_region *r = ps_alloc(ps, sizeof *r);
  if (!r) return false;
  r->block.parent = r;
  if (n_pre) {
    hlo_status st = block_set_args(ps->m, &r->block, pre_types, n_pre);
    if (st) { hlo_status_free(st); return ps_oom(ps); }
    for (uint32_t i = 0; i < n_pre; i++)
      TRY(ps_define(ps, pre_names[i].pos, ps->s + pre_names[i].pos, (uint32_t)pre_names[i].len,
                    &r->block.args[i], 1));
  }
  if (ps_peek(ps) == '^') {
    size_t lp = ps->pos;
    ps->pos++;
    size_t st, len;
    if (!ps_ident(ps, &st, &len)) return ps_err(ps, ps->pos, "expected block label");
    if (n_pre) return ps_err(ps, lp, "unexpected block label: the arguments are given above");
    hlo_type **types = NULL;
    name_ref *names = NULL;
    uint32_t n = 0, cap = 0, ncap = 0, nn = 0;
    if (ps_accept(ps, '(') && !ps_accept(ps, ')')) {
      do {
        name_ref nr;
        ps_ws(ps);
        nr.pos = ps->pos + 1;
        TRY(ps_value_name(ps, &nr.pos, &nr.len));
        TRY(ps_expect(ps, ':', "block argument"));
        hlo_type *t;
        TRY(parse_type(ps, &t));
        const char *lt;
        TRY(parse_opt_loc(ps, &lt));
        hlo_type **ts = ps_vec_push(ps, (void **)&types, &n, &cap, sizeof *ts);
        name_ref *ns = ps_vec_push(ps, (void **)&names, &nn, &ncap, sizeof *ns);
        if (!ts || !ns) return false;
        *ts = t;
        *ns = nr;
      } while (ps_accept(ps, ','));
      TRY(ps_expect(ps, ')', "block argument list"));
    }
    TRY(ps_expect(ps, ':', "block label"));
    hlo_status st2 = block_set_args(ps->m, &r->block, types, n);
    if (st2) { hlo_status_free(st2); return ps_oom(ps); }
    for (uint32_t i = 0; i < n; i++)
      TRY(ps_define(ps, names[i].pos, ps->s + names[i].pos, (uint32_t)names[i].len,
                    &r->block.args[i], 1));
  }
  TRY(parse_block_ops(ps, &r->block));
  TRY(ps_expect(ps, '}', "region"));
  ps_scope_pop(ps, mark);
  ps->depth--;
  *out = r;
  return true;
}

/* ========================================================== generic form */

bool parse_generic(pstate *ps, opb *b) {
  TRY(ps_expect(ps, '(', "operand list"));
  if (!ps_accept(ps, ')')) {
    do {
      hlo_value *v;
      TRY(ps_use(ps, &v));
      TRY(opb_operand(ps, b, v));
    } while (ps_accept(ps, ','));
    TRY(ps_expect(ps, ')', "operand list"));
  }
  if (ps_peek(ps) == '[') return ps_err(ps, ps->pos, "successor blocks are not supported");
  if (ps_accept_str(ps, "<{")) {
    ps->pos--;
    TRY(parse_attr_dict(ps, &b->attrs, &b->nattrs, &b->capattrs));
    TRY(ps_expect(ps, '>', "properties"));
  }
  if (ps_peek(ps) == '(') {
    size_t save = ps->pos;
    ps->pos++;
    if (ps_peek(ps) == '{') {
      do {
        hlo_region *r;
        TRY(parse_region(ps, &r, NULL, NULL, 0));
        TRY(opb_region(ps, b, r));
      } while (ps_accept(ps, ','));
      TRY(ps_expect(ps, ')', "region list"));
    } else {
      ps->pos = save;
    }
  }
  if (ps_peek(ps) == '{') TRY(parse_attr_dict(ps, &b->attrs, &b->nattrs, &b->capattrs));
  TRY(ps_expect(ps, ':', "generic operation"));
  hlo_type **ins, **outs;
  uint32_t nin, nout;
  size_t tpos = ps->pos;
  ps_ws(ps);
  tpos = ps->pos;
  TRY(parse_func_type(ps, &ins, &nin, &outs, &nout));
  if (nin != b->nops)
    return ps_err(ps, tpos, "operation has %u operands but its type lists %u", b->nops, nin);
  for (uint32_t i = 0; i < nin; i++) TRY(check_use_type(ps, tpos, b->ops[i], ins[i]));
  b->rtypes = outs;
  b->nrt = nout;
  return true;
}

/* ================================================================== ops */

typedef struct res_group {
  size_t pos, len;  /* name without '%' */
  uint32_t count;
} res_group;

static bool parse_op(pstate *ps, hlo_block *blk) {
  if (++ps->depth > PARSE_MAX_DEPTH) return ps_err(ps, ps->pos, "operations nested too deeply");
  opb b;
  memset(&b, 0, sizeof b);
  res_group *groups = NULL;
  uint32_t ngroups = 0, capgroups = 0;
  if (ps_peek(ps) == '%') {
    do {
      res_group g;
      size_t gp;
      ps_ws(ps);
      gp = ps->pos;
      TRY(ps_value_name(ps, &g.pos, &g.len));
      g.count = 1;
      if (ps->pos < ps->end && ps->s[ps->pos] == ':') {
        ps->pos++;
        int64_t n;
        TRY(ps_int(ps, &n, "result count"));
        if (n < 1 || n > 65536) return ps_err(ps, gp, "bad result count %lld", (long long)n);
        g.count = (uint32_t)n;
      }
      res_group *slot = ps_vec_push(ps, (void **)&groups, &ngroups, &capgroups, sizeof *slot);
      if (!slot) return false;
      *slot = g;
      b.nres += g.count;
    } while (ps_accept(ps, ','));
    TRY(ps_expect(ps, '=', "operation result list"));
  }
  ps_ws(ps);
  b.name_pos = ps->pos;
  if (ps->pos < ps->end && ps->s[ps->pos] == '"') {
    char *name;
    size_t nlen;
    TRY(ps_string(ps, &name, &nlen));
    b.opc = op_lookup(name, nlen);
    if (b.opc == OP_COUNT) return ps_err(ps, b.name_pos, "unknown operation '%s'", name);
    TRY(parse_generic(ps, &b));
  } else {
    size_t st, len;
    if (!ps_ident(ps, &st, &len))
      return ps_err(ps, ps->pos, "expected operation, got '%s'", ps_tok(ps, ps->pos));
    b.opc = op_lookup(ps->s + st, len);
    if (b.opc == OP_COUNT)
      return ps_err(ps, st, "unknown operation '%.*s'", (int)len, ps->s + st);
    TRY(parse_pretty(ps, &b));
  }
  if (b.nres && b.nrt != b.nres)
    return ps_err(ps, b.name_pos, "operation has %u result(s) but %u result name(s) are given",
                  b.nrt, b.nres);
  const char *loc_text;
  TRY(parse_opt_loc(ps, &loc_text));
  hlo_op *op = op_create(ps->m, b.opc, b.ops, b.nops, b.rtypes, b.nrt, b.nregs,
                         ps_loc(ps, b.name_pos));
  if (!op) return ps_oom(ps);
  op->attrs = b.attrs;
  op->num_attrs = b.nattrs;
  op->loc_text = loc_text;
  for (uint32_t i = 0; i < b.nregs; i++) region_move(&op->regions[i], b.regs[i], op);
  block_append(blk, op);
  uint32_t k = 0;
  for (uint32_t g = 0; g < ngroups; g++) {
    TRY(ps_define(ps, groups[g].pos - 1, ps->s + groups[g].pos, (uint32_t)groups[g].len,
                  &op->results[k], groups[g].count));
    k += groups[g].count;
  }
  ps->depth--;
  return true;
}

/* ============================================================ functions */

static bool parse_arg_attrs(pstate *ps, attr_list *l) {
  l->n = 0;
  l->items = NULL;
  if (ps_peek(ps) != '{') return true;
  uint32_t cap = 0;
  return parse_attr_dict(ps, &l->items, &l->n, &cap);
}

static bool parse_func(pstate *ps, size_t kw_pos) {
  hlo_module_ir *m = ps->m;
  hlo_func *f = ps_alloc(ps, sizeof *f);
  if (!f) return false;
  f->loc = ps_loc(ps, kw_pos);
  f->body.block.parent = &f->body;
  if (ps_accept_kw(ps, "public")) f->visibility = "public";
  else if (ps_accept_kw(ps, "private")) f->visibility = "private";
  else if (ps_accept_kw(ps, "nested")) f->visibility = "nested";
  ps_ws(ps);
  size_t npos = ps->pos;
  if (!ps_accept(ps, '@'))
    return ps_err(ps, npos, "expected function name '@...', got '%s'", ps_tok(ps, npos));
  if (ps_peek(ps) == '"' && ps->s[npos + 1] == '"') {
    char *nm;
    size_t nl;
    TRY(ps_string(ps, &nm, &nl));
    f->name = nm;
  } else {
    size_t st = ps->pos;
    while (ps->pos < ps->end && ps_is_ident_char(ps->s[ps->pos]) && ps->s[ps->pos] != '-') ps->pos++;
    if (ps->pos == st) return ps_err(ps, st, "expected function name after '@'");
    f->name = ps_strndup(ps, ps->s + st, ps->pos - st);
    if (!f->name) return false;
  }
  if (module_find_func(m, f->name)) return ps_err(ps, npos, "redefinition of function '@%s'", f->name);
  /* arguments */
  TRY(ps_expect(ps, '(', "function signature"));
  hlo_type **types = NULL;
  name_ref *names = NULL;
  attr_list *aattrs = NULL;
  uint32_t n = 0, cap = 0, nn = 0, ncap = 0, na = 0, nacap = 0;
  bool decl = false;
  if (!ps_accept(ps, ')')) {
    decl = ps_peek(ps) != '%';
    do {
      name_ref nr = {0, 0};
      if (!decl) {
        TRY(ps_value_name(ps, &nr.pos, &nr.len));
        TRY(ps_expect(ps, ':', "function argument"));
      }
      hlo_type *t;
      TRY(parse_type(ps, &t));
      attr_list al;
      TRY(parse_arg_attrs(ps, &al));
      const char *lt;
      TRY(parse_opt_loc(ps, &lt));
      hlo_type **ts = ps_vec_push(ps, (void **)&types, &n, &cap, sizeof *ts);
      name_ref *ns = ps_vec_push(ps, (void **)&names, &nn, &ncap, sizeof *ns);
      attr_list *as = ps_vec_push(ps, (void **)&aattrs, &na, &nacap, sizeof *as);
      if (!ts || !ns || !as) return false;
      *ts = t;
      *ns = nr;
      *as = al;
    } while (ps_accept(ps, ','));
    TRY(ps_expect(ps, ')', "function arguments"));
  }
  f->num_args = n;
  f->arg_attrs = n ? aattrs : NULL;
  /* results */
  if (ps_accept_str(ps, "->")) {
    hlo_type **rt = NULL;
    attr_list *ra = NULL;
    uint32_t nr = 0, rcap = 0, nra = 0, racap = 0;
    if (ps_accept(ps, '(')) {
      if (!ps_accept(ps, ')')) {
        do {
          hlo_type *t;
          TRY(parse_type(ps, &t));
          attr_list al;
          TRY(parse_arg_attrs(ps, &al));
          hlo_type **ts = ps_vec_push(ps, (void **)&rt, &nr, &rcap, sizeof *ts);
          attr_list *as = ps_vec_push(ps, (void **)&ra, &nra, &racap, sizeof *as);
          if (!ts || !as) return false;
          *ts = t;
          *as = al;
        } while (ps_accept(ps, ','));
        TRY(ps_expect(ps, ')', "function results"));
      }
    } else {
      hlo_type *t;
      TRY(parse_type(ps, &t));
      hlo_type **ts = ps_vec_push(ps, (void **)&rt, &nr, &rcap, sizeof *ts);
      attr_list *as = ps_vec_push(ps, (void **)&ra, &nra, &racap, sizeof *as);
      if (!ts || !as) return false;
      *ts = t;
      as->n = 0;
      as->items = NULL;
    }
    f->num_results = nr;
    f->result_types = rt;
    f->result_attrs = ra;
  }
  if (ps_accept_kw(ps, "attributes")) {
    if (ps_peek(ps) != '{') return ps_err(ps, ps->pos, "expected '{' after 'attributes'");
    uint32_t acap = 0;
    TRY(parse_attr_dict(ps, &f->attrs.items, &f->attrs.n, &acap));
  }
  hlo_status st = block_set_args(m, &f->body.block, types, n);
  if (st) { hlo_status_free(st); return ps_oom(ps); }
  if (ps_peek(ps) == '{') {
    if (decl && n) return ps_err(ps, ps->pos, "a function with a body needs named arguments");
    ps->pos++;
    uint32_t mark = ps_scope_mark(ps);
    for (uint32_t i = 0; i < n; i++)
      TRY(ps_define(ps, names[i].pos, ps->s + names[i].pos, (uint32_t)names[i].len,
                    &f->body.block.args[i], 1));
    TRY(parse_block_ops(ps, &f->body.block));
    TRY(ps_expect(ps, '}', "function body"));
    ps_scope_pop(ps, mark);
  }
  const char *lt;
  TRY(parse_opt_loc(ps, &lt));
  if (m->funcs_tail) m->funcs_tail->next = f;
  else m->funcs = f;
  m->funcs_tail = f;
  m->num_funcs++;
  return true;
}

/* ================================================================ module */

static bool add_alias(pstate *ps) {
  size_t st = ps->pos;
  const char *nl = memchr(ps->s + st, '\n', ps->end - st);
  size_t e = nl ? (size_t)(nl - ps->s) : ps->end;
  size_t t = e;
  while (t > st && (ps->s[t - 1] == ' ' || ps->s[t - 1] == '\r' || ps->s[t - 1] == '\t')) t--;
  /* a valid alias line is `#name = ...` */
  size_t q = st + 1;
  while (q < t && ps_is_ident_char(ps->s[q])) q++;
  while (q < t && ps->s[q] == ' ') q++;
  if (q >= t || ps->s[q] != '=') return ps_err(ps, st, "expected '#alias = ...' at top level");
  hlo_module_ir *m = ps->m;
  const char **slot = ps_vec_push(ps, (void **)&m->aliases, &m->num_aliases, &ps->cap_aliases,
                                  sizeof *slot);
  if (!slot) return false;
  *slot = ps_strndup(ps, ps->s + st, t - st);
  if (!*slot) return false;
  ps->pos = e;
  return true;
}

/* True when the next token is the string `"lit"` (not consumed). */
static bool peek_quoted(pstate *ps, const char *lit) {
  ps_ws(ps);
  size_t n = strlen(lit);
  return ps->end - ps->pos >= n + 2 && ps->s[ps->pos] == '"' &&
         memcmp(ps->s + ps->pos + 1, lit, n) == 0 && ps->s[ps->pos + 1 + n] == '"';
}

/* `: () -> ()` closing a generic module or function. */
static bool expect_unit_fn_type(pstate *ps, const char *what) {
  TRY(ps_expect(ps, ':', what));
  TRY(ps_expect(ps, '(', what));
  TRY(ps_expect(ps, ')', what));
  TRY(ps_expect_arrow(ps, what));
  TRY(ps_expect(ps, '(', what));
  return ps_expect(ps, ')', what);
}

/* An ATTR_ARRAY of dictionaries (arg_attrs / res_attrs) as attr_lists. */
static bool attr_lists_from(pstate *ps, size_t pos, const hlo_attr *a, uint32_t n, attr_list **out) {
  *out = NULL;
  if (!n) return true;
  attr_list *l = ps_alloc(ps, n * sizeof *l);
  if (!l) return false;
  if (a) {
    if (a->kind != ATTR_ARRAY || a->u.arr.n != n)
      return ps_err(ps, pos, "arg_attrs/res_attrs must list one dictionary per argument/result");
    for (uint32_t i = 0; i < n; i++) {
      const hlo_attr *d = a->u.arr.items[i];
      if (d->kind != ATTR_DICT) return ps_err(ps, pos, "arg_attrs/res_attrs entries must be dictionaries");
      l[i].n = d->u.dict.n;
      l[i].items = d->u.dict.entries;
    }
  }
  *out = l;
  return true;
}

/* `"func.func"() <{function_type = ..., sym_name = ...}> ({ ^bb0(...): ... }) : () -> ()` */
static bool parse_generic_func(pstate *ps) {
  hlo_module_ir *m = ps->m;
  size_t kp = ps->pos;
  char *nm;
  size_t nl;
  TRY(ps_string(ps, &nm, &nl));
  hlo_func *f = ps_alloc(ps, sizeof *f);
  if (!f) return false;
  f->loc = ps_loc(ps, kp);
  TRY(ps_expect(ps, '(', "func.func"));
  TRY(ps_expect(ps, ')', "func.func"));
  named_attr *props = NULL;
  uint32_t np = 0, cap = 0;
  ps->fn_ins = ps->fn_outs = NULL;
  ps->fn_nin = ps->fn_nout = UINT32_MAX;
  size_t pp = ps->pos;
  if (ps_accept_str(ps, "<{")) {
    ps->pos--;
    TRY(parse_attr_dict(ps, &props, &np, &cap));
    TRY(ps_expect(ps, '>', "properties"));
  }
  hlo_region *body = NULL;
  if (ps_accept(ps, '(')) {
    TRY(parse_region(ps, &body, NULL, NULL, 0));
    TRY(ps_expect(ps, ')', "func.func"));
  }
  if (ps_peek(ps) == '{') TRY(parse_attr_dict(ps, &props, &np, &cap));
  TRY(expect_unit_fn_type(ps, "func.func"));
  const char *lt;
  TRY(parse_opt_loc(ps, &lt));
  const hlo_attr *ft = NULL, *aa = NULL, *ra = NULL;
  named_attr *rest = NULL;
  uint32_t nrest = 0, caprest = 0;
  for (uint32_t i = 0; i < np; i++) {
    const char *k = props[i].name;
    const hlo_attr *v = props[i].value;
    if (!strcmp(k, "sym_name") && v->kind == ATTR_STRING) f->name = v->u.str.s;
    else if (!strcmp(k, "sym_visibility") && v->kind == ATTR_STRING) f->visibility = v->u.str.s;
    else if (!strcmp(k, "function_type")) ft = v;
    else if (!strcmp(k, "arg_attrs")) aa = v;
    else if (!strcmp(k, "res_attrs")) ra = v;
    else {
      named_attr *s2 = ps_vec_push(ps, (void **)&rest, &nrest, &caprest, sizeof *s2);
      if (!s2) return false;
      *s2 = props[i];
    }
  }
  if (!f->name) return ps_err(ps, kp, "func.func needs a sym_name string");
  if (!ft || ps->fn_nin == UINT32_MAX) return ps_err(ps, pp, "func.func needs a function_type");
  if (module_find_func(m, f->name)) return ps_err(ps, kp, "redefinition of function '@%s'", f->name);
  f->attrs.n = nrest;
  f->attrs.items = rest;
  f->num_args = ps->fn_nin;
  f->num_results = ps->fn_nout;
  f->result_types = ps->fn_outs;
  TRY(attr_lists_from(ps, pp, aa, f->num_args, &f->arg_attrs));
  TRY(attr_lists_from(ps, pp, ra, f->num_results, &f->result_attrs));
  if (body) {
    if (body->block.num_args != f->num_args)
      return ps_err(ps, kp, "function body has %u arguments, its type %u", body->block.num_args, f->num_args);
    for (uint32_t i = 0; i < f->num_args; i++)
      if (!type_equal(body->block.args[i].type, ps->fn_ins[i]))
        return ps_err(ps, kp, "type of function argument %u differs from function_type", i);
    region_move(&f->body, body, NULL);
  } else {
    f->body.block.parent = &f->body;
    hlo_status st = block_set_args(m, &f->body.block, ps->fn_ins, f->num_args);
    if (st) { hlo_status_free(st); return ps_oom(ps); }
  }
  if (m->funcs_tail) m->funcs_tail->next = f;
  else m->funcs = f;
  m->funcs_tail = f;
  m->num_funcs++;
  return true;
}

static bool parse_funcs_until(pstate *ps, char close) {
  while (1) {
    char c = ps_peek(ps);
    if (c == close) return true;
    if (c == '#') { TRY(add_alias(ps)); continue; }
    size_t kp = ps->pos;
    if (ps_accept_kw(ps, "func.func")) { TRY(parse_func(ps, kp)); continue; }
    if (peek_quoted(ps, "func.func")) { TRY(parse_generic_func(ps)); continue; }
    if (ps_accept_kw(ps, "sdy.mesh")) { TRY(parse_sdy_mesh_decl(ps, kp)); continue; }
    if (!c) return ps_err(ps, kp, "expected '}' at end of module, got end of input");
    return ps_err(ps, kp, "expected 'func.func', got '%s'", ps_tok(ps, kp));
  }
}

/* `"builtin.module"() <{sym_name = "m"}> ({ ^bb0: funcs }) {attrs} : () -> ()` */
static bool parse_generic_module(pstate *ps) {
  char *nm;
  size_t nl;
  TRY(ps_string(ps, &nm, &nl));
  TRY(ps_expect(ps, '(', "builtin.module"));
  TRY(ps_expect(ps, ')', "builtin.module"));
  named_attr *props = NULL;
  uint32_t np = 0, cap = 0;
  if (ps_accept_str(ps, "<{")) {
    ps->pos--;
    TRY(parse_attr_dict(ps, &props, &np, &cap));
    TRY(ps_expect(ps, '>', "properties"));
  }
  TRY(ps_expect(ps, '(', "builtin.module"));
  TRY(ps_expect(ps, '{', "builtin.module"));
  if (ps_peek(ps) == '^') {
    size_t st, len;
    ps->pos++;
    if (!ps_ident(ps, &st, &len)) return ps_err(ps, ps->pos, "expected block label");
    TRY(ps_expect(ps, ':', "block label"));
  }
  TRY(parse_funcs_until(ps, '}'));
  TRY(ps_expect(ps, '}', "builtin.module"));
  TRY(ps_expect(ps, ')', "builtin.module"));
  if (ps_peek(ps) == '{') TRY(parse_attr_dict(ps, &props, &np, &cap));
  TRY(expect_unit_fn_type(ps, "builtin.module"));
  const char *lt;
  TRY(parse_opt_loc(ps, &lt));
  hlo_module_ir *m = ps->m;
  uint32_t acap = 0;
  for (uint32_t i = 0; i < np; i++) {
    if (!strcmp(props[i].name, "sym_name") && props[i].value->kind == ATTR_STRING) {
      m->name = props[i].value->u.str.s;
      continue;
    }
    named_attr *s2 = ps_vec_push(ps, (void **)&m->attrs.items, &m->attrs.n, &acap, sizeof *s2);
    if (!s2) return false;
    *s2 = props[i];
  }
  return true;
}

static bool parse_top(pstate *ps) {
  bool seen_module = false, seen_func = false;
  while (1) {
    char c = ps_peek(ps);
    if (!c) {
      if (ps->pos < ps->end) return ps_err(ps, ps->pos, "unexpected NUL byte");
      return true;
    }
    if (c == '#') { TRY(add_alias(ps)); continue; }
    if (c == '{' && ps->pos + 1 < ps->end && ps->s[ps->pos + 1] == '-') {
      TRY(parse_resource_section(ps));
      continue;
    }
    size_t kp = ps->pos;
    if (ps_accept_kw(ps, "module")) {
      if (seen_module || seen_func)
        return ps_err(ps, kp, "only one module per input (use '// -----' to split)");
      seen_module = true;
      ps_ws(ps);
      if (ps_accept(ps, '@')) {
        if (ps_peek(ps) == '"') {  /* a quoted name, as for functions */
          char *nm;
          size_t nl;
          TRY(ps_string(ps, &nm, &nl));
          ps->m->name = nm;
        } else {
          size_t st = ps->pos;
          while (ps->pos < ps->end && ps_is_ident_char(ps->s[ps->pos]) && ps->s[ps->pos] != '-') ps->pos++;
          if (ps->pos == st) return ps_err(ps, st, "expected module name after '@'");
          ps->m->name = ps_strndup(ps, ps->s + st, ps->pos - st);
          if (!ps->m->name) return false;
        }
      }
      if (ps_accept_kw(ps, "attributes")) {
        if (ps_peek(ps) != '{') return ps_err(ps, ps->pos, "expected '{' after 'attributes'");
        uint32_t cap = 0;
        TRY(parse_attr_dict(ps, &ps->m->attrs.items, &ps->m->attrs.n, &cap));
      }
      TRY(ps_expect(ps, '{', "module"));
      TRY(parse_funcs_until(ps, '}'));
      TRY(ps_expect(ps, '}', "module"));
      const char *lt;
      TRY(parse_opt_loc(ps, &lt));
      continue;
    }
    if (peek_quoted(ps, "builtin.module")) {
      if (seen_module || seen_func)
        return ps_err(ps, kp, "only one module per input (use '// -----' to split)");
      seen_module = true;
      TRY(parse_generic_module(ps));
      continue;
    }
    if (peek_quoted(ps, "func.func")) {
      if (seen_module) return ps_err(ps, kp, "function outside the module");
      seen_func = true;
      TRY(parse_generic_func(ps));
      continue;
    }
    if (ps_accept_kw(ps, "func.func")) {
      if (seen_module) return ps_err(ps, kp, "function outside the module");
      seen_func = true;
      TRY(parse_func(ps, kp));
      continue;
    }
    if (ps_accept_kw(ps, "sdy.mesh")) {
      if (seen_module) return ps_err(ps, kp, "sdy.mesh outside the module");
      seen_func = true;
      TRY(parse_sdy_mesh_decl(ps, kp));
      continue;
    }
    return ps_err(ps, kp, "expected 'module' or 'func.func', got '%s'", ps_tok(ps, kp));
  }
}

hlo_status parse_module(const hlo_source *src, size_t begin, size_t end, hlo_module_ir **out) {
  *out = NULL;
  if (!src || !src->text || begin > end || end > src->len)
    return status_new(HLO_INVALID_ARGUMENT, "parse_module: bad text range");
  size_t ls = begin;
  while (ls > 0 && src->text[ls - 1] != '\n') ls--;
  uint32_t line = src->first_line ? src->first_line : 1;
  for (const char *p = src->text, *e = src->text + ls; p < e;) {
    const char *nl = memchr(p, '\n', (size_t)(e - p));
    if (!nl) break;
    line++;
    p = nl + 1;
  }
  hlo_module_ir *m = module_new();
  if (!m) return status_new(HLO_RESOURCE_EXHAUSTED, "out of memory");
  size_t n = end - ls;
  char *text = arena_alloc(&m->arena, n + 1);
  const char *name = src->name ? src->name : "-";
  char *nm = arena_strdup(&m->arena, name);
  if (!text || !nm) {
    module_free(m);
    return status_new(HLO_RESOURCE_EXHAUSTED, "out of memory");
  }
  memcpy(text, src->text + ls, n);
  memset(text, ' ', begin - ls);
  text[n] = 0;
  m->source.name = nm;
  m->source.text = text;
  m->source.len = n;
  m->source.first_line = line;
  pstate ps;
  memset(&ps, 0, sizeof ps);
  ps.m = m;
  ps.a = &m->arena;
  ps.s = text;
  ps.end = n;
  ps.src = &m->source;
  ps.lc_line = line;
  ps.buckets = xmalloc(SYM_BUCKETS * sizeof *ps.buckets);
  if (!ps.buckets) {
    module_free(m);
    return status_new(HLO_RESOURCE_EXHAUSTED, "out of memory");
  }
  memset(ps.buckets, 0xFF, SYM_BUCKETS * sizeof *ps.buckets);
  /* MLIR text never holds NUL bytes; reject them up front, since text kept
   * verbatim (opaque attributes, #alias lines) is printed as C strings. */
  const char *nul = memchr(text + (begin - ls), 0, n - (begin - ls));
  bool ok = nul ? ps_err(&ps, (size_t)(nul - text), "NUL byte in the program text")
                : parse_top(&ps);
  if (ok) ok = parse_resolve_resources(&ps);
  free(ps.buckets);
  free(ps.syms);
  if (!ok) {
    hlo_status st = ps.err ? ps.err : status_new(HLO_INTERNAL, "parse failed without a message");
    module_free(m);
    return st;
  }
  *out = m;
  return NULL;
}

/* ================================================================= split */

hlo_status parse_split(const char *text, size_t len, split_piece **out_pieces, size_t *out_n) {
  size_t cap = 4, n = 0;
  split_piece *p = xmalloc(cap * sizeof *p);
  if (!p) return status_new(HLO_RESOURCE_EXHAUSTED, "out of memory");
  size_t begin = 0, pos = 0;
  uint32_t line = 1, begin_line = 1;
  while (pos < len) {
    const char *nl = memchr(text + pos, '\n', len - pos);
    size_t e = nl ? (size_t)(nl - text) : len;
    bool sep = false;
    for (size_t i = pos; i + 8 <= e; i++)
      if (text[i] == '/' && memcmp(text + i, "// -----", 8) == 0) { sep = true; break; }
    if (sep) {
      if (n + 1 >= cap) {
        split_piece *np = xrealloc(p, cap * 2 * sizeof *p);
        if (!np) { free(p); return status_new(HLO_RESOURCE_EXHAUSTED, "out of memory"); }
        p = np;
        cap *= 2;
      }
      p[n].begin = begin;
      p[n].end = pos;
      p[n].first_line = begin_line;
      n++;
      begin = nl ? e + 1 : len;
      begin_line = line + 1;
    }
    pos = nl ? e + 1 : len;
    line++;
  }
  p[n].begin = begin;
  p[n].end = len;
  p[n].first_line = begin_line;
  n++;
  *out_pieces = p;
  *out_n = n;
  return NULL;
}
