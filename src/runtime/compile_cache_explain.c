/* compile_cache_explain.c — the compilation cache's metadata (`name=value`
 * lines) and the explanation of a miss: which cached entry for the same
 * function is closest, and what differs (compile_cache.h). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "runtime/compile_cache.h"
#include "support/arena.h"
#include "support/strbuf.h"

/* Fields that differ between any two compiles and say nothing about why a
 * key differs: never compared, never shown. */
static const char *const IGNORED[] = {"key", "created", "units", "compile_ms", "last_used", "pid"};

/* One `name=value` line of a meta text (lent from it). */
typedef struct field {
  const char *name, *val;
  size_t nlen, vlen;
} field;

typedef struct fields {
  field *f;
  size_t n;
} fields;

/* Splits meta[0..len) into its fields (lines without '=' or with an empty
 * name are skipped; a trailing '\r' is not part of the value; the first of
 * two equal names wins). False on out of memory. */
static bool parse(const char *meta, size_t len, fields *out) {
  out->f = NULL;
  out->n = 0;
  size_t lines = 1;
  for (size_t i = 0; i < len; i++) lines += meta[i] == '\n';
  out->f = xcalloc(lines, sizeof *out->f);
  if (!out->f) return false;
  for (size_t i = 0; i < len;) {
    size_t e = i;
    while (e < len && meta[e] != '\n') e++;
    size_t ve = e > i && meta[e - 1] == '\r' ? e - 1 : e;
    const char *eq = memchr(meta + i, '=', ve - i);
    if (eq && eq > meta + i) {
      field f = {meta + i, eq + 1, (size_t)(eq - (meta + i)), (size_t)(meta + ve - (eq + 1))};
      bool dup = false;
      for (size_t k = 0; k < out->n && !dup; k++)
        dup = out->f[k].nlen == f.nlen && !memcmp(out->f[k].name, f.name, f.nlen);
      if (!dup) out->f[out->n++] = f;
    }
    i = e + 1;
  }
  return true;
}

static const field *lookup(const fields *fs, const char *name, size_t nlen) {
  for (size_t i = 0; i < fs->n; i++)
    if (fs->f[i].nlen == nlen && !memcmp(fs->f[i].name, name, nlen)) return &fs->f[i];
  return NULL;
}

bool cache_meta_get(const char *meta, size_t len, const char *name, char *out, size_t cap) {
  size_t nl = strlen(name);
  if (cap) out[0] = 0;
  for (size_t i = 0; meta && i < len;) {
    size_t e = i;
    while (e < len && meta[e] != '\n') e++;
    if (e - i > nl && meta[i + nl] == '=' && !memcmp(meta + i, name, nl)) {
      size_t ve = e > i + nl + 1 && meta[e - 1] == '\r' ? e - 1 : e;
      size_t vl = ve - (i + nl + 1);
      if (cap) {
        if (vl > cap - 1) vl = cap - 1;
        memcpy(out, meta + i + nl + 1, vl);
        out[vl] = 0;
      }
      return true;
    }
    i = e + 1;
  }
  return false;
}

static bool ignored(const field *f) {
  for (size_t i = 0; i < sizeof IGNORED / sizeof *IGNORED; i++)
    if (strlen(IGNORED[i]) == f->nlen && !memcmp(IGNORED[i], f->name, f->nlen)) return true;
  return false;
}

static bool same_val(const field *a, const field *b) {
  if (!a || !b) return a == b;
  return a->vlen == b->vlen && !memcmp(a->val, b->val, a->vlen);
}

static bool field_is(const field *f, const char *name) {
  return f->nlen == strlen(name) && !memcmp(f->name, name, f->nlen);
}

/* The number of compared fields whose values differ (present in one only
 * counts). */
static size_t score(const fields *have, const fields *want) {
  size_t d = 0;
  for (size_t i = 0; i < want->n; i++)
    d += !ignored(&want->f[i]) &&
         !same_val(lookup(have, want->f[i].name, want->f[i].nlen), &want->f[i]);
  for (size_t i = 0; i < have->n; i++)
    d += !ignored(&have->f[i]) && !lookup(want, have->f[i].name, have->f[i].nlen);
  return d;
}

/* A difference to render: its kind and index order the lines (arguments by
 * N, then results by N, then other fields as met, module_hash last). */
typedef struct diff {
  int kind;             /* 0 arg.N, 1 result.N, 2 other, 3 module_hash */
  unsigned long index;  /* N, or the order met */
  const field *name;    /* whichever side has the field */
  const field *old, *now;
} diff;

static int cmp_diff(const void *a, const void *b) {
  const diff *x = a, *y = b;
  if (x->kind != y->kind) return x->kind - y->kind;
  return x->index < y->index ? -1 : x->index > y->index;
}

/* arg.N / result.N: *kind 0 / 1 and *n = N; else kind 2 (3: module_hash). */
static int classify(const field *f, unsigned long *n) {
  const char *pre[2] = {"arg.", "result."};
  for (int k = 0; k < 2; k++) {
    size_t pl = strlen(pre[k]);
    if (f->nlen > pl && !memcmp(f->name, pre[k], pl)) {
      unsigned long v = 0;
      size_t i = pl;
      for (; i < f->nlen && f->name[i] >= '0' && f->name[i] <= '9' && v < 100000000ul; i++)
        v = v * 10 + (unsigned long)(f->name[i] - '0');
      if (i == f->nlen) {
        *n = v;
        return k;
      }
    }
  }
  return field_is(f, "module_hash") ? 3 : 2;
}

/* A tensor type `tensor<DxDx..xELT[, encoding]>` split into its shape
 * ("64x128", "" for a scalar) and element type. False for other types. */
typedef struct ttype {
  const char *shape, *elt;
  size_t slen, elen;
} ttype;

static bool parse_tensor(const char *v, size_t n, ttype *t) {
  if (n < 9 || memcmp(v, "tensor<", 7) || v[n - 1] != '>') return false;
  const char *p = v + 7, *end = v + n - 1;
  /* the encoding, if any, follows the first comma */
  const char *comma = memchr(p, ',', (size_t)(end - p));
  if (comma) end = comma;
  t->shape = p;
  const char *q = p, *last_x = NULL;
  for (;;) {
    const char *d = q;
    while (d < end && ((*d >= '0' && *d <= '9') || *d == '?')) d++;
    if (d == q || d >= end || *d != 'x') break;
    last_x = d;
    q = d + 1;
  }
  t->slen = last_x ? (size_t)(last_x - p) : 0;
  t->elt = q;
  t->elen = (size_t)(end - q);
  return t->elen > 0;
}

static void put_val(strbuf *b, const field *f) {
  if (f) sb_putn(b, f->val, f->vlen);
  else sb_puts(b, "(absent)");
}

static void put_shape(strbuf *b, const ttype *t) {
  if (t->slen) sb_putn(b, t->shape, t->slen);
  else sb_puts(b, "scalar");
}

static void render(strbuf *b, const diff *d, size_t ndiff) {
  if (d->kind <= 1) {
    const char *what = d->kind == 0 ? "argument" : "result";
    ttype a, c;
    if (d->old && d->now && parse_tensor(d->old->val, d->old->vlen, &a) &&
        parse_tensor(d->now->val, d->now->vlen, &c)) {
      bool shape = a.slen != c.slen || memcmp(a.shape, c.shape, a.slen);
      bool elt = a.elen != c.elen || memcmp(a.elt, c.elt, a.elen);
      if (shape) {
        sb_printf(b, "%s %lu: shape ", what, d->index);
        put_shape(b, &a);
        sb_puts(b, " -> ");
        put_shape(b, &c);
        sb_putc(b, '\n');
      }
      if (elt) {
        sb_printf(b, "%s %lu: element type ", what, d->index);
        sb_putn(b, a.elt, a.elen);
        sb_puts(b, " -> ");
        sb_putn(b, c.elt, c.elen);
        sb_putc(b, '\n');
      }
      if (shape || elt) return;
    }
    sb_printf(b, "%s %lu: ", what, d->index);
  } else if (d->kind == 3) {
    sb_puts(b, ndiff == 1 ? "module_hash: the program's text differs (same signature and options)\n"
                          : "module_hash: the program's text differs too\n");
    return;
  } else if (d->name->nlen > 7 && !memcmp(d->name->name, "option.", 7)) {
    sb_puts(b, "option ");
    sb_putn(b, d->name->name + 7, d->name->nlen - 7);
    sb_puts(b, ": ");
  } else {
    sb_putn(b, d->name->name, d->name->nlen);
    sb_puts(b, ": ");
  }
  put_val(b, d->old);
  sb_puts(b, " -> ");
  put_val(b, d->now);
  sb_putc(b, '\n');
}

/* The lines of what differs between the cached `have` and `want`. */
static void explain_diff(strbuf *b, const fields *have, const fields *want) {
  diff *d = xcalloc(have->n + want->n + 1, sizeof *d);
  size_t n = 0;
  if (!d) {
    b->oom = 1;
    return;
  }
  for (int side = 0; side < 2; side++) {
    const fields *fs = side == 0 ? want : have, *other = side == 0 ? have : want;
    for (size_t i = 0; i < fs->n; i++) {
      const field *f = &fs->f[i], *g = lookup(other, f->name, f->nlen);
      if (ignored(f) || (side == 1 && g) || same_val(f, g)) continue;
      diff x = {.name = f, .old = side == 0 ? g : f, .now = side == 0 ? f : g};
      x.kind = classify(f, &x.index);
      if (x.kind >= 2) x.index = n;
      d[n++] = x;
    }
  }
  qsort(d, n, sizeof *d, cmp_diff);
  if (n == 0)
    sb_puts(b, "no recorded field differs (the key covers something the metadata does not "
               "record)\n");
  for (size_t i = 0; i < n; i++) render(b, &d[i], n);
  free(d);
}

char *compile_cache_explain(const cache_listing *l, const char *want,
                            char out_key[COMPILE_CACHE_KEY_HEX]) {
  if (out_key) out_key[0] = 0;
  fields w, best = {NULL, 0}, cur;
  if (!parse(want ? want : "", want ? strlen(want) : 0, &w)) return NULL;
  const field *fn = lookup(&w, "function", 8), *mod = lookup(&w, "module", 6);
  size_t best_score = 0;
  int64_t best_used = 0;
  bool found = false, oom = false;
  for (uint32_t i = 0; l && i < l->n && fn && !oom; i++) {
    const char *m = l->entries[i].meta;
    if (!m) continue;
    if (!parse(m, strlen(m), &cur)) {
      oom = true;
      break;
    }
    if (same_val(lookup(&cur, "function", 8), fn) && same_val(lookup(&cur, "module", 6), mod)) {
      size_t s = score(&cur, &w);
      /* the fewest differing fields; among those the most recently used (the
         greater last_used, then the first listed: a listing is most recent
         first, but a caller's may be in any order) */
      int64_t used = l->entries[i].last_used;
      if (!found || s < best_score || (s == best_score && used > best_used)) {
        free(best.f);
        best = cur;
        cur.f = NULL;
        best_score = s;
        best_used = used;
        found = true;
        if (out_key) memcpy(out_key, l->entries[i].key, COMPILE_CACHE_KEY_HEX);
      }
    }
    free(cur.f);
  }
  strbuf b;
  sb_init(&b);
  if (oom) {
    b.oom = 1;
  } else if (!found) {
    sb_puts(&b, "no cached entry for @");
    if (fn) sb_putn(&b, fn->val, fn->vlen);
    else sb_puts(&b, "(unknown function)");
    if (mod) {
      sb_puts(&b, " of module ");
      sb_putn(&b, mod->val, mod->vlen);
    }
    sb_putc(&b, '\n');
  } else {
    explain_diff(&b, &best, &w);
  }
  free(w.f);
  free(best.f);
  if (b.oom) {
    sb_free(&b);
    if (out_key) out_key[0] = 0;
    return NULL;
  }
  return sb_take(&b);
}
