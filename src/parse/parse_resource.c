/* parse_resource.c — `dense_resource<NAME> : T` literals and the file's
 * trailing resource section
 *   {-# dialect_resources: { builtin: { NAME: "0x04000000..." } } #-}
 * MLIR's blob layout: a hex string whose first 4 bytes are the blob's
 * alignment (little-endian u32), then the elements in the storage layout of
 * dense literals (ir.h, DENSE ELEMENTS). The section comes after the module,
 * so references are recorded while parsing and resolved at the end
 * (parse_resolve_resources). */
#include <string.h>
#include "parse/parse_internal.h"

bool parse_dense_resource(pstate *ps, size_t start, hlo_attr **out) {
  TRY(ps_expect(ps, '<', "dense_resource"));
  ps_ws(ps);
  size_t np = ps->pos, st, len;
  char *name;
  if (ps_peek(ps) == '"') {
    size_t l;
    TRY(ps_string(ps, &name, &l));
  } else {
    if (!ps_ident(ps, &st, &len)) return ps_err(ps, np, "expected resource name in dense_resource, got '%s'", ps_tok(ps, np));
    name = ps_strndup(ps, ps->s + st, len);
    if (!name) return false;
  }
  TRY(ps_expect(ps, '>', "dense_resource"));
  TRY(ps_expect(ps, ':', "dense_resource"));
  ps_ws(ps);
  size_t tp = ps->pos;
  hlo_type *t;
  TRY(parse_type(ps, &t));
  if (t->kind != TYPE_TENSOR || !type_is_static(t))
    return ps_err(ps, tp, "dense_resource needs a static tensor type");
  hlo_attr *a = attr_dense(ps->a, t, NULL, 0, false);
  if (!a) return ps_oom(ps);
  a->u.dense.resource = name;
  pending_resource *pr = ps_vec_push(ps, (void **)&ps->pend_res, &ps->npend_res, &ps->cap_pend_res,
                                     sizeof *pr);
  if (!pr) return false;
  pr->attr = a;
  pr->pos = start;
  *out = a;
  return true;
}

static int hexv(char c) {
  if (c >= '0' && c <= '9') return c - '0';
  if (c >= 'a' && c <= 'f') return c - 'a' + 10;
  if (c >= 'A' && c <= 'F') return c - 'A' + 10;
  return -1;
}

/* Decodes a builtin blob `0x<align:4 bytes LE><data>` at text offset `pos`. */
static bool decode_blob(pstate *ps, size_t pos, hlo_resource *r) {
  const char *t = r->text;
  size_t n = strlen(t);
  if (n < 2 || t[0] != '0' || t[1] != 'x')
    return ps_err(ps, pos, "resource '%s': a blob must be a hex string starting with '0x'", r->key);
  if ((n - 2) % 2) return ps_err(ps, pos, "resource '%s': odd number of hex digits", r->key);
  size_t nb = (n - 2) / 2;
  if (nb < 4) return ps_err(ps, pos, "resource '%s': blob shorter than its 4-byte alignment header", r->key);
  uint8_t *d = ps_alloc(ps, nb);
  uint8_t *el = ps_alloc(ps, nb > 4 ? nb - 4 : 1); /* the elements, 16-aligned */
  if (!d || !el) return false;
  for (size_t i = 0; i < nb; i++) {
    int h = hexv(t[2 + 2 * i]), l = hexv(t[3 + 2 * i]);
    if (h < 0 || l < 0)
      return ps_err(ps, pos, "resource '%s': invalid hex digit '%c'", r->key, h < 0 ? t[2 + 2 * i] : t[3 + 2 * i]);
    d[i] = (uint8_t)(h << 4 | l);
  }
  uint32_t al = (uint32_t)d[0] | (uint32_t)d[1] << 8 | (uint32_t)d[2] << 16 | (uint32_t)d[3] << 24;
  if (al == 0 || (al & (al - 1)))
    return ps_err(ps, pos, "resource '%s': alignment %u in the blob header is not a power of two", r->key, al);
  r->alignment = al;
  memcpy(el, d + 4, nb - 4);
  r->data = el;
  r->nbytes = nb - 4;
  return true;
}

/* An identifier or a string key. */
static bool res_key(pstate *ps, char **out) {
  ps_ws(ps);
  size_t p = ps->pos, st, len;
  if (ps_peek(ps) == '"') {
    size_t l;
    return ps_string(ps, out, &l);
  }
  if (!ps_ident(ps, &st, &len)) return ps_err(ps, p, "expected a name in the resource section, got '%s'", ps_tok(ps, p));
  *out = ps_strndup(ps, ps->s + st, len);
  return *out != NULL;
}

bool parse_resource_section(pstate *ps) {
  hlo_module_ir *m = ps->m;
  size_t open = ps->pos;
  if (!ps_accept_str(ps, "{-#")) return ps_err(ps, open, "expected '{-#'");
  uint32_t cap = m->num_resources;
  while (1) {
    ps_ws(ps);
    if (ps_accept_str(ps, "#-}")) return true;
    if (ps->pos >= ps->end) return ps_err(ps, open, "unterminated '{-#' block");
    char *section;
    TRY(res_key(ps, &section));
    TRY(ps_expect(ps, ':', "resource section"));
    TRY(ps_expect(ps, '{', "resource section"));
    if (!ps_accept(ps, '}')) {
      do {
        char *dialect;
        TRY(res_key(ps, &dialect));
        TRY(ps_expect(ps, ':', "resource dialect"));
        TRY(ps_expect(ps, '{', "resource dialect"));
        if (!ps_accept(ps, '}')) {
          do {
            char *key;
            ps_ws(ps);
            size_t kp = ps->pos;
            TRY(res_key(ps, &key));
            TRY(ps_expect(ps, ':', "resource entry"));
            ps_ws(ps);
            size_t vp = ps->pos;
            if (ps_peek(ps) != '"')
              return ps_err(ps, vp, "resource '%s': expected a string value, got '%s'", key, ps_tok(ps, vp));
            char *val;
            size_t vl;
            TRY(ps_string(ps, &val, &vl));
            if (strlen(val) != vl) return ps_err(ps, vp, "resource '%s': NUL byte in value", key);
            for (uint32_t i = 0; i < m->num_resources; i++)
              if (!strcmp(m->resources[i].dialect, dialect) && !strcmp(m->resources[i].key, key))
                return ps_err(ps, kp, "resource '%s' defined twice", key);
            hlo_resource *r = ps_vec_push(ps, (void **)&m->resources, &m->num_resources, &cap, sizeof *r);
            if (!r) return false;
            r->section = section;
            r->dialect = dialect;
            r->key = key;
            r->text = val;
            r->loc = ps_loc(ps, kp);
            if (!strcmp(section, "dialect_resources") && !strcmp(dialect, "builtin"))
              TRY(decode_blob(ps, vp, r));
          } while (ps_accept(ps, ','));
          TRY(ps_expect(ps, '}', "resource dialect"));
        }
      } while (ps_accept(ps, ','));
      TRY(ps_expect(ps, '}', "resource section"));
    }
    ps_accept(ps, ',');
  }
}

bool parse_resolve_resources(pstate *ps) {
  hlo_module_ir *m = ps->m;
  for (uint32_t i = 0; i < ps->npend_res; i++) {
    hlo_attr *a = ps->pend_res[i].attr;
    size_t pos = ps->pend_res[i].pos;
    const char *nm = a->u.dense.resource;
    if (!strcmp(nm, "__elided__"))
      return ps_err(ps, pos, "dense_resource<__elided__>: the constant's data was elided when the "
                             "program was printed; print it again without eliding large constants "
                             "(e.g. without --mlir-elide-resource-strings-if-larger)");
    const hlo_resource *r = NULL;
    for (uint32_t k = 0; k < m->num_resources; k++)
      if (m->resources[k].data && !strcmp(m->resources[k].key, nm)) r = &m->resources[k];
    if (!r)
      return ps_err(ps, pos, "dense_resource<%s>: no blob named '%s' in the file's "
                             "{-# dialect_resources: { builtin: ... } #-} section", nm, nm);
    const hlo_type *t = a->u.dense.type;
    int64_t n = type_num_elements(t);
    size_t esz = hlo_dtype_size(t->dtype);
    if (n < 0 || (uint64_t)n > SIZE_MAX / (esz ? esz : 1))
      return ps_err(ps, pos, "dense_resource<%s>: the type has more elements than fit in memory "
                             "(or a dynamic size); the blob holds %zu bytes", nm, r->nbytes);
    if ((size_t)n * esz != r->nbytes)
      return ps_err(ps, pos, "dense_resource<%s>: the blob holds %zu bytes, the type needs %lld "
                             "elements of %zu bytes", nm, r->nbytes, (long long)n, esz);
    a->u.dense.data = (uint8_t *)r->data;
    a->u.dense.nbytes = r->nbytes;
    a->u.dense.num_elems = n;
    a->u.dense.splat = false;
  }
  return true;
}
