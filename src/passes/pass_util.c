/* pass_util.c — shared helpers of the passes (see pass_util.h). */
#include "passes/pass_util.h"

#include <stdlib.h>
#include <string.h>

#include "support/arena.h"

/* ---------------------------------------------------------- pointer map */

#define TOMBSTONE ((const void *)&ptrmap_put) /* a key no caller can hold */

static size_t phash(const void *p, size_t cap) {
  uint64_t x = (uint64_t)(uintptr_t)p;
  x ^= x >> 31;
  x *= 0x9E3779B97F4A7C15ull;
  x ^= x >> 29;
  return (size_t)x & (cap - 1);
}

static bool ptrmap_grow(ptrmap *pm) {
  size_t nc = pm->cap ? pm->cap : 64;
  while ((pm->n + 1) * 2 > nc) nc *= 2;
  const void **nk = xcalloc(nc, sizeof *nk);
  void **nv = xcalloc(nc, sizeof *nv);
  if (!nk || !nv) {
    free(nk);
    free(nv);
    return false;
  }
  for (size_t i = 0; i < pm->cap; i++) {
    const void *k = pm->keys[i];
    if (!k || k == TOMBSTONE) continue;
    size_t h = phash(k, nc);
    while (nk[h]) h = (h + 1) & (nc - 1);
    nk[h] = k;
    nv[h] = pm->vals[i];
  }
  free(pm->keys);
  free(pm->vals);
  pm->keys = nk;
  pm->vals = nv;
  pm->cap = nc;
  pm->used = pm->n;
  return true;
}

/* The slot holding k, or SIZE_MAX. */
static size_t ptrmap_find(const ptrmap *pm, const void *k) {
  if (!pm->cap) return SIZE_MAX;
  size_t h = phash(k, pm->cap);
  while (pm->keys[h]) {
    if (pm->keys[h] == k) return h;
    h = (h + 1) & (pm->cap - 1);
  }
  return SIZE_MAX;
}

bool ptrmap_put(ptrmap *pm, const void *k, void *v) {
  size_t s = ptrmap_find(pm, k);
  if (s != SIZE_MAX) {
    pm->vals[s] = v;
    return true;
  }
  if ((pm->used + 1) * 2 > pm->cap && !ptrmap_grow(pm)) return false;
  size_t h = phash(k, pm->cap);
  while (pm->keys[h] && pm->keys[h] != TOMBSTONE) h = (h + 1) & (pm->cap - 1);
  if (!pm->keys[h]) pm->used++;
  pm->keys[h] = k;
  pm->vals[h] = v;
  pm->n++;
  return true;
}

void *ptrmap_get(const ptrmap *pm, const void *k) {
  size_t s = ptrmap_find(pm, k);
  return s == SIZE_MAX ? NULL : pm->vals[s];
}

bool ptrmap_has(const ptrmap *pm, const void *k) { return ptrmap_find(pm, k) != SIZE_MAX; }

void ptrmap_del(ptrmap *pm, const void *k) {
  size_t s = ptrmap_find(pm, k);
  if (s == SIZE_MAX) return;
  pm->keys[s] = TOMBSTONE;
  pm->vals[s] = NULL;
  pm->n--;
}

void ptrmap_free(ptrmap *pm) {
  free(pm->keys);
  free(pm->vals);
  memset(pm, 0, sizeof *pm);
}

/* ------------------------------------------------------------- op facts */

static bool block_is_pure(const hlo_block *b) {
  for (const hlo_op *o = b->first; o; o = o->next) {
    if (op_flags(o->opcode) & OPF_TERMINATOR) continue;
    if (!op_is_pure(o)) return false;
  }
  return true;
}

bool op_is_pure(const hlo_op *op) {
  unsigned fl = op_flags(op->opcode);
  if (fl & (OPF_SIDE_EFFECT | OPF_TERMINATOR)) return false;
  if (op->opcode == OP_COMPOSITE) return false;
  for (uint32_t r = 0; r < op->num_regions; r++)
    if (!block_is_pure(&op->regions[r].block)) return false;
  return true;
}

static uint64_t block_count_ops(const hlo_block *b) {
  uint64_t n = 0;
  for (const hlo_op *o = b->first; o; o = o->next) {
    if (!(op_flags(o->opcode) & OPF_TERMINATOR)) n++;
    for (uint32_t r = 0; r < o->num_regions; r++) n += block_count_ops(&o->regions[r].block);
  }
  return n;
}

uint64_t func_count_ops(const hlo_func *f) { return block_count_ops(&f->body.block); }

uint64_t module_count_ops(const hlo_module_ir *m) {
  uint64_t n = 0;
  for (const hlo_func *f = m->funcs; f; f = f->next) n += func_count_ops(f);
  return n;
}

void op_erase_tree(hlo_op *op) {
  for (uint32_t r = 0; r < op->num_regions; r++) {
    hlo_block *b = &op->regions[r].block;
    while (b->first) op_erase_tree(b->first);
  }
  op_unlink(op);
}

/* ------------------------------------------------------------- cloning */

static hlo_status clone_oom(const hlo_op *src) {
  return status_at(HLO_RESOURCE_EXHAUSTED, &src->loc, "out of memory while copying ops");
}

hlo_status op_clone(hlo_module_ir *m, const hlo_op *src, hlo_block *dst, hlo_op *before,
                    ptrmap *vm, uint64_t *count, uint64_t max_count, hlo_op **out) {
  if (out) *out = NULL;
  if (++*count > max_count)
    return status_at(HLO_RESOURCE_EXHAUSTED, &src->loc,
                     "copying ops makes over %llu ops (a recursive call?)",
                     (unsigned long long)max_count);
  arena *a = &m->arena;
  hlo_value **ops = arena_calloc(a, src->num_operands ? src->num_operands : 1, sizeof *ops);
  hlo_type **rts = arena_calloc(a, src->num_results ? src->num_results : 1, sizeof *rts);
  if (!ops || !rts) return clone_oom(src);
  for (uint32_t i = 0; i < src->num_operands; i++) {
    hlo_value *v = ptrmap_get(vm, src->operands[i]);
    ops[i] = v ? v : src->operands[i];
  }
  for (uint32_t i = 0; i < src->num_results; i++) rts[i] = src->results[i].type;
  hlo_op *op = op_create(m, src->opcode, ops, src->num_operands, rts, src->num_results,
                         src->num_regions, src->loc);
  if (!op) return clone_oom(src);
  op->loc_text = src->loc_text;
  if (src->num_attrs) {
    op->attrs = arena_memdup(a, src->attrs, src->num_attrs * sizeof *src->attrs);
    if (!op->attrs) return clone_oom(src);
    op->num_attrs = src->num_attrs;
  }
  for (uint32_t i = 0; i < src->num_results; i++) {
    op->results[i].name = src->results[i].name;
    op->results[i].loc = src->results[i].loc;
    if (!ptrmap_put(vm, &src->results[i], &op->results[i])) return clone_oom(src);
  }
  if (before) op_insert_before(before, op);
  else block_append(dst, op);
  for (uint32_t r = 0; r < src->num_regions; r++) {
    const hlo_block *sb = &src->regions[r].block;
    hlo_block *db = &op->regions[r].block;
    if (sb->num_args) {
      hlo_type **ts = arena_calloc(a, sb->num_args, sizeof *ts);
      if (!ts) return clone_oom(src);
      for (uint32_t i = 0; i < sb->num_args; i++) ts[i] = sb->args[i].type;
      HLO_TRY(block_set_args(m, db, ts, sb->num_args));
      for (uint32_t i = 0; i < sb->num_args; i++) {
        db->args[i].name = sb->args[i].name;
        db->args[i].loc = sb->args[i].loc;
        if (!ptrmap_put(vm, &sb->args[i], &db->args[i])) return clone_oom(src);
      }
    }
    for (const hlo_op *o = sb->first; o; o = o->next)
      HLO_TRY(op_clone(m, o, db, NULL, vm, count, max_count, NULL));
  }
  if (out) *out = op;
  return NULL;
}

/* ------------------------------------------------------------ functions */

/* Calls mark(name) for every function name `at` refers to. */
typedef struct refs {
  hlo_module_ir *m;
  hlo_func **funcs;  /* index -> function */
  bool *live;
  hlo_func **stack;
  uint32_t nstack;
} refs;

static void mark_name(refs *r, const char *s, size_t len) {
  uint32_t i = 0;
  for (hlo_func *f = r->m->funcs; f; f = f->next, i++) {
    if (r->live[i] || strlen(f->name) != len || memcmp(f->name, s, len) != 0) continue;
    r->live[i] = true;
    r->stack[r->nstack++] = f;
  }
}

static void mark_attr(refs *r, const hlo_attr *at) {
  if (!at) return;
  switch (at->kind) {
    case ATTR_SYMBOL:
    case ATTR_STRING: {
      const char *s = at->u.str.s;
      size_t len = at->u.str.len;
      const char *sep = memchr(s, ':', len); /* `@a::@b`: the root name */
      if (at->kind == ATTR_SYMBOL && sep) len = (size_t)(sep - s);
      mark_name(r, s, len);
      break;
    }
    case ATTR_OPAQUE: {
      uint32_t i = 0;
      for (hlo_func *f = r->m->funcs; f; f = f->next, i++) {
        if (r->live[i]) continue;
        size_t fl = strlen(f->name);
        const char *t = at->u.str.s, *end = t + at->u.str.len;
        for (; t + fl < end; t++) {
          if (*t != '@' || memcmp(t + 1, f->name, fl) != 0) continue;
          char c = t + 1 + fl < end ? t[1 + fl] : 0;
          bool ident = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') ||
                       (c >= '0' && c <= '9') || c == '_' || c == '.' || c == '$';
          if (!ident) {
            r->live[i] = true;
            r->stack[r->nstack++] = f;
            break;
          }
        }
      }
      break;
    }
    case ATTR_ARRAY:
      for (uint32_t i = 0; i < at->u.arr.n; i++) mark_attr(r, at->u.arr.items[i]);
      break;
    case ATTR_DICT:
      for (uint32_t i = 0; i < at->u.dict.n; i++) mark_attr(r, at->u.dict.entries[i].value);
      break;
    case ATTR_STRUCT:
      for (uint32_t i = 0; i < at->u.st.n; i++) mark_attr(r, at->u.st.fields[i].value);
      break;
    default:
      break;
  }
}

static void mark_list(refs *r, const attr_list *l) {
  for (uint32_t i = 0; i < l->n; i++) mark_attr(r, l->items[i].value);
}

static void mark_block(refs *r, const hlo_block *b) {
  for (const hlo_op *o = b->first; o; o = o->next) {
    for (uint32_t i = 0; i < o->num_attrs; i++) mark_attr(r, o->attrs[i].value);
    for (uint32_t k = 0; k < o->num_regions; k++) mark_block(r, &o->regions[k].block);
  }
}

hlo_status module_remove_dead_funcs(hlo_module_ir *m, const char *entry, uint32_t *out_removed) {
  if (out_removed) *out_removed = 0;
  uint32_t n = 0;
  for (hlo_func *f = m->funcs; f; f = f->next) n++;
  if (!n) return NULL;
  refs r = {m, NULL, xcalloc(n, sizeof(bool)), xcalloc(n, sizeof(hlo_func *)), 0};
  if (!r.live || !r.stack) {
    free(r.live);
    free(r.stack);
    return status_new(HLO_RESOURCE_EXHAUSTED, "out of memory");
  }
  const hlo_func *ent = module_entry(m, entry);
  uint32_t i = 0;
  for (hlo_func *f = m->funcs; f; f = f->next, i++) {
    bool priv = f->visibility && strcmp(f->visibility, "private") == 0;
    if (!priv || f == ent) {
      r.live[i] = true;
      r.stack[r.nstack++] = f;
    }
  }
  mark_list(&r, &m->attrs);
  while (r.nstack) {
    hlo_func *f = r.stack[--r.nstack];
    mark_list(&r, &f->attrs);
    mark_block(&r, &f->body.block);
  }
  uint32_t removed = 0;
  hlo_func **link = &m->funcs, *last = NULL;
  i = 0;
  for (hlo_func *f = m->funcs, *next; f; f = next, i++) {
    next = f->next;
    if (r.live[i]) {
      last = f;
      link = &f->next;
      continue;
    }
    *link = next;
    removed++;
  }
  m->funcs_tail = last;
  m->num_funcs -= removed;
  free(r.live);
  free(r.stack);
  if (out_removed) *out_removed = removed;
  return NULL;
}

/* ------------------------------------------------------------ constants */

const hlo_attr *value_constant_attr(const hlo_value *v) {
  if (!v || !v->def || v->def->opcode != OP_CONSTANT) return NULL;
  const hlo_attr *a = op_attr(v->def, "value");
  return a && a->kind == ATTR_DENSE ? a : NULL;
}

const uint8_t *value_splat_bytes(const hlo_value *v) {
  const hlo_attr *a = value_constant_attr(v);
  if (!a || a->u.dense.resource || !a->u.dense.data) return NULL;
  const hlo_type *at = a->u.dense.type, *vt = v->type;
  if (!at || at->kind != TYPE_TENSOR || vt->kind != TYPE_TENSOR || at->quant || vt->quant ||
      at->dtype != vt->dtype)
    return NULL;
  if (!a->u.dense.splat && a->u.dense.num_elems != 1) return NULL;
  if (a->u.dense.nbytes < hlo_dtype_size(at->dtype)) return NULL;
  return a->u.dense.data;
}
