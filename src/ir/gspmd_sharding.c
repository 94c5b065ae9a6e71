/* gspmd_sharding.c — decoding the GSPMD sharding strings of the older JAX
 * path (`mhlo.sharding = "{devices=[2,1]<=[2]}"`) into gspmd_sharding (ir.h),
 * for the verifier and a later SPMD partitioner. Syntax: XLA's
 * HloSharding::ToString (xla/hlo/ir/hlo_sharding.cc) — `{replicated}`,
 * `{maximal device=N}`, `{manual}`, `{unknown}`, `{devices=[dims]ids}` or the
 * iota form `{devices=[dims]<=[reshape]T(perm)}`, optional
 * `last_tile_dim_replicate` / `last_tile_dims={manual, ...}`, tuples
 * `{{...}, {...}}`; `metadata={...}` and `shard_as/shard_like N` skipped. */
#include <string.h>
#include "ir/ir.h"

#define GSPMD_MAX_DEVICES (1u << 20)

typedef struct gcur {
  const char *s;
  size_t pos, len;
  arena *a;
  int depth;
} gcur;

static void gws(gcur *c) {
  while (c->pos < c->len && (c->s[c->pos] == ' ' || c->s[c->pos] == '\t' || c->s[c->pos] == '\n')) c->pos++;
}

static bool gaccept(gcur *c, char ch) {
  gws(c);
  if (c->pos < c->len && c->s[c->pos] == ch) { c->pos++; return true; }
  return false;
}

static bool gword(gcur *c, const char *w) {
  gws(c);
  size_t n = strlen(w);
  if (c->len - c->pos < n || memcmp(c->s + c->pos, w, n)) return false;
  char nx = c->pos + n < c->len ? c->s[c->pos + n] : 0;
  if ((nx >= 'a' && nx <= 'z') || nx == '_') return false;
  c->pos += n;
  return true;
}

static hlo_status gerr(const gcur *c, const char *what) {
  return status_new(HLO_INVALID_ARGUMENT, "malformed GSPMD sharding at offset %zu: %s", c->pos, what);
}

static hlo_status gint(gcur *c, int64_t *out) {
  gws(c);
  size_t st = c->pos;
  int64_t v = 0;
  while (c->pos < c->len && c->s[c->pos] >= '0' && c->s[c->pos] <= '9') {
    if (v > (INT64_MAX - 9) / 10) return gerr(c, "number too large");
    v = v * 10 + (c->s[c->pos++] - '0');
  }
  if (c->pos == st) return gerr(c, "expected a number");
  *out = v;
  return NULL;
}

/* `[a,b,c]` → ints (at most 64). */
static hlo_status gdims(gcur *c, int64_t *out, uint32_t *n) {
  if (!gaccept(c, '[')) return gerr(c, "expected '['");
  *n = 0;
  if (gaccept(c, ']')) return NULL;
  do {
    if (*n >= 64) return gerr(c, "too many dimensions");
    HLO_TRY(gint(c, &out[(*n)++]));
  } while (gaccept(c, ','));
  if (!gaccept(c, ']')) return gerr(c, "expected ']'");
  return NULL;
}

/* Skips a balanced `{...}` (metadata). */
static hlo_status gskip_braces(gcur *c) {
  int d = 0;
  gws(c);
  do {
    if (c->pos >= c->len) return gerr(c, "unterminated '{'");
    char ch = c->s[c->pos++];
    if (ch == '{') d++;
    else if (ch == '}') d--;
    else if (ch == '"') {
      while (c->pos < c->len && c->s[c->pos] != '"') c->pos += c->s[c->pos] == '\\' ? 2 : 1;
      c->pos++;
    }
  } while (d > 0);
  return NULL;
}

static hlo_status gtiled(gcur *c, gspmd_sharding *o) {
  int64_t dims[64];
  uint32_t r;
  HLO_TRY(gdims(c, dims, &r));
  if (!r) return gerr(c, "devices=[] needs at least one dimension");
  uint64_t n = 1;
  for (uint32_t i = 0; i < r; i++) {
    if (dims[i] < 1) return gerr(c, "tile dimensions must be positive");
    n *= (uint64_t)dims[i];
    if (n > GSPMD_MAX_DEVICES) return gerr(c, "too many devices");
  }
  o->kind = GSPMD_TILED;
  o->rank = r;
  o->num_devices = (uint32_t)n;
  o->tile_dims = arena_alloc(c->a, r * sizeof *o->tile_dims);
  o->devices = arena_alloc(c->a, n * sizeof *o->devices);
  if (!o->tile_dims || !o->devices) return status_new(HLO_RESOURCE_EXHAUSTED, "out of memory");
  memcpy(o->tile_dims, dims, r * sizeof *dims);
  gws(c);
  if (c->pos + 1 < c->len && c->s[c->pos] == '<' && c->s[c->pos + 1] == '=') {
    /* iota: iota(prod) reshaped to `rs`, transposed by `perm`, flattened */
    c->pos += 2;
    int64_t rs[64], perm[64];
    uint32_t nr, np = 0;
    HLO_TRY(gdims(c, rs, &nr));
    uint64_t m = 1;
    for (uint32_t i = 0; i < nr; i++) {
      if (rs[i] < 1) return gerr(c, "iota reshape dimensions must be positive");
      m *= (uint64_t)rs[i];
      if (m > GSPMD_MAX_DEVICES) return gerr(c, "too many devices");
    }
    if (m != n) return gerr(c, "the iota device list's size differs from the tile count");
    gws(c);
    if (c->pos < c->len && c->s[c->pos] == 'T') {
      c->pos++;
      if (!gaccept(c, '(')) return gerr(c, "expected '(' after T");
      do {
        if (np >= 64) return gerr(c, "too many dimensions");
        HLO_TRY(gint(c, &perm[np++]));
      } while (gaccept(c, ','));
      if (!gaccept(c, ')')) return gerr(c, "expected ')'");
      if (np != nr) return gerr(c, "the transpose permutation's length differs from the reshape's rank");
      bool seen[64] = {false};
      for (uint32_t i = 0; i < np; i++) {
        if (perm[i] < 0 || perm[i] >= (int64_t)nr || seen[perm[i]]) return gerr(c, "not a permutation");
        seen[perm[i]] = true;
      }
    } else {
      for (uint32_t i = 0; i < nr; i++) perm[i] = i;
    }
    /* element k of the transposed array: its index over dims rs[perm[.]] */
    int64_t tdims[64], idx[64], stride[64];
    for (uint32_t i = 0; i < nr; i++) tdims[i] = rs[perm[i]];
    int64_t st = 1;
    for (uint32_t i = nr; i-- > 0;) { stride[i] = st; st *= rs[i]; }
    for (uint32_t i = 0; i < nr; i++) idx[i] = 0;
    for (uint64_t k = 0; k < n; k++) {
      int64_t src = 0;
      for (uint32_t i = 0; i < nr; i++) src += idx[i] * stride[perm[i]];
      o->devices[k] = src;
      for (uint32_t i = nr; i-- > 0;) {
        if (++idx[i] < tdims[i]) break;
        idx[i] = 0;
      }
    }
  } else {
    for (uint64_t k = 0; k < n; k++) {
      if (k && !gaccept(c, ',')) return gerr(c, "fewer device ids than tiles");
      HLO_TRY(gint(c, &o->devices[k]));
    }
    gws(c);
    if (c->pos < c->len && c->s[c->pos] == ',') return gerr(c, "more device ids than tiles");
  }
  return NULL;
}

static hlo_status gone(gcur *c, gspmd_sharding *o);

static hlo_status gtrailers(gcur *c, gspmd_sharding *o) {
  while (1) {
    if (gword(c, "last_tile_dim_replicate")) {
      o->last_tile_dim_replicate = true;
    } else if (gword(c, "last_tile_dims")) {
      if (!gaccept(c, '=') || !gaccept(c, '{')) return gerr(c, "expected '={' after last_tile_dims");
      const char *types[8];
      uint32_t n = 0;
      do {
        static const char *const known[] = {"manual", "replicated", "maximal", "other"};
        bool ok = false;
        for (int i = 0; i < 4 && !ok; i++)
          if (gword(c, known[i])) {
            if (n >= 8) return gerr(c, "too many last_tile_dims");
            types[n++] = known[i];
            ok = true;
          }
        if (!ok) return gerr(c, "expected manual, replicated, maximal or other");
      } while (gaccept(c, ','));
      if (!gaccept(c, '}')) return gerr(c, "expected '}'");
      o->subgroup_types = arena_alloc(c->a, n * sizeof *types);
      if (!o->subgroup_types) return status_new(HLO_RESOURCE_EXHAUSTED, "out of memory");
      memcpy(o->subgroup_types, types, n * sizeof *types);
      o->num_subgroups = n;
    } else if (gword(c, "metadata")) {
      if (!gaccept(c, '=')) return gerr(c, "expected '=' after metadata");
      HLO_TRY(gskip_braces(c));
    } else if (gword(c, "shard_as") || gword(c, "shard_like")) {
      int64_t v;
      HLO_TRY(gint(c, &v));
    } else {
      return NULL;
    }
  }
}

static hlo_status gone(gcur *c, gspmd_sharding *o) {
  if (!gaccept(c, '{')) return gerr(c, "expected '{'");
  if (++c->depth > 32) return gerr(c, "nested too deeply");
  memset(o, 0, sizeof *o);
  gws(c);
  if (c->pos < c->len && c->s[c->pos] == '{') {
    o->kind = GSPMD_TUPLE;
    uint32_t cap = 0;
    do {
      if (o->num_elems == cap) {
        uint32_t nc = cap ? cap * 2 : 4;
        gspmd_sharding *e = arena_alloc(c->a, nc * sizeof *e);
        if (!e) return status_new(HLO_RESOURCE_EXHAUSTED, "out of memory");
        if (cap) memcpy(e, o->elems, cap * sizeof *e);
        o->elems = e;
        cap = nc;
      }
      HLO_TRY(gone(c, &o->elems[o->num_elems++]));
    } while (gaccept(c, ','));
  } else if (gword(c, "replicated")) {
    o->kind = GSPMD_REPLICATED;
  } else if (gword(c, "manual")) {
    o->kind = GSPMD_MANUAL;
  } else if (gword(c, "unknown")) {
    o->kind = GSPMD_UNKNOWN;
  } else if (gword(c, "maximal")) {
    o->kind = GSPMD_MAXIMAL;
    if (!gword(c, "device") || !gaccept(c, '=')) return gerr(c, "expected 'device=' after maximal");
    HLO_TRY(gint(c, &o->device));
  } else if (gword(c, "devices")) {
    if (!gaccept(c, '=')) return gerr(c, "expected '=' after devices");
    HLO_TRY(gtiled(c, o));
  } else {
    return gerr(c, "expected replicated, maximal, manual, unknown, devices= or a tuple");
  }
  HLO_TRY(gtrailers(c, o));
  if (!gaccept(c, '}')) return gerr(c, "expected '}'");
  c->depth--;
  return NULL;
}

hlo_status gspmd_sharding_parse(arena *a, const char *s, size_t len, gspmd_sharding *out) {
  memset(out, 0, sizeof *out);
  gcur c = {s, 0, len, a, 0};
  gws(&c);
  if (c.pos == len) { /* "" : no sharding given (replicated) */
    out->kind = GSPMD_REPLICATED;
    return NULL;
  }
  HLO_TRY(gone(&c, out));
  gws(&c);
  if (c.pos != len) return gerr(&c, "unexpected text after the sharding");
  if (out->kind == GSPMD_TILED) {
    uint32_t extra = (out->last_tile_dim_replicate ? 1u : 0u) + out->num_subgroups;
    if (extra > out->rank) return gerr(&c, "more trailing tile dimensions than tile dimensions");
  }
  return NULL;
}
