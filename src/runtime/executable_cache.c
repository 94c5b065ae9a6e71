/* executable_cache.c — the compilation cache in a compile
 * (executable_cache.h): key, load, store, log line, miss explanation. */
#include "runtime/executable_cache.h"
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <time.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>
#define XXH_INLINE_ALL
#include <xxhash.h>
#include "hlo_build_id.h" /* HLO_BUILD_ID: made by the Makefile from the sources */
#include "backend/conv_describe.h"
#include "ir/print.h"
#include "parse/parse.h"
#include "runtime/compile_cache.h"
#include "runtime/runtime.h"
#include "support/strbuf.h"

#define MAX_STAGES 8

struct exec_cache {
  bool use;                     /* the cache is read and written */
  exec_cache_request req;       /* lent: valid while the compile runs */
  const hlo_func *f;            /* the entry function of req.user */
  const backend *be;            /* the backend compiled for (runtime_backend) */
  char raw_key[COMPILE_CACHE_KEY_HEX]; /* the alias's: the text as given ("" none) */
  bool from_alias;              /* key came from the alias, not computed */
  bool log, explain;
  bool hit;
  char root[CACHE_DIR_PATH_MAX];
  uint64_t max_bytes;
  char key[COMPILE_CACHE_KEY_HEX];
  const hlo_module_ir *user;
  char *entry_name, *module_name;
  char *passes;
  char *meta;                   /* the meta text of this compile (no `key`, `created`, `units`) */
  const char *target;           /* the backend's target text (static) */
  cache_entry *loaded;          /* the hit's entry */
  const hlo_module_ir *hit_ir;  /* the hit's module (the caller's: alive until exec_cache_end) */
  bool tuning_kept;             /* the hit's entry had conv choices this process took */
  backend_object *objs;
  uint32_t nobjs;
  double t0;
  const char *stage_name[MAX_STAGES];
  double stage_ms[MAX_STAGES];
  uint32_t nstages;
};

static double now_ms(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (double)ts.tv_sec * 1e3 + 1e-6 * (double)ts.tv_nsec;
}

/* Whether environment variable `name` is set to a true word. */
static bool env_on(const char *name) {
  const char *v = getenv(name);
  return v && (!strcmp(v, "1") || !strcasecmp(v, "true") || !strcasecmp(v, "yes") ||
               !strcasecmp(v, "on"));
}

void exec_cache_stage(exec_cache *c, const char *name, double ms) {
  if (!c) return;
  for (uint32_t i = 0; i < c->nstages; i++)
    if (!strcmp(c->stage_name[i], name)) {
      c->stage_ms[i] += ms;
      return;
    }
  if (c->nstages == MAX_STAGES) return;
  c->stage_name[c->nstages] = name;
  c->stage_ms[c->nstages++] = ms;
}

/* ------------------------------------------------------------- the key */

/* Appends `v` on one line: a newline or backslash in a name (a quoted
 * MLIR symbol may hold any byte) is written as \n or \\, so a name cannot
 * forge another meta field. */
static void put_field(strbuf *b, const char *v) {
  for (; v && *v; v++) {
    if (*v == '\n') sb_puts(b, "\\n");
    else if (*v == '\\') sb_puts(b, "\\\\");
    else sb_putc(b, *v);
  }
}

/* The meta text of this compile: the fields compile_cache.h reads and the
 * ones the explanation compares (arg.N, result.N, backend, passes, target,
 * hlo_version, module_hash). */
/* Appends the meta text (see above) to b; true when out of memory. */
static bool make_meta_text(const exec_cache *c, const exec_cache_request *r, const hlo_func *f,
                           const char *target, const char *module_hash, strbuf *b) {
  sb_puts(b, "function=");
  put_field(b, f->name);
  sb_puts(b, "\nmodule=");
  put_field(b, c->module_name);
  sb_putc(b, '\n');
  for (uint32_t i = 0; i < f->num_args; i++) {
    sb_printf(b, "arg.%u=", i);
    print_type(b, r->arg_types && i < r->num_args ? r->arg_types[i] : f->body.block.args[i].type);
    sb_putc(b, '\n');
  }
  for (uint32_t i = 0; i < f->num_results; i++) {
    sb_printf(b, "result.%u=", i);
    print_type(b, f->result_types[i]);
    sb_putc(b, '\n');
  }
  sb_printf(b, "backend=%s\npasses=%s\n", c->be->name, r->passes ? r->passes : "none");
  /* the target on one line */
  sb_puts(b, "target=");
  for (const char *t = target; *t; t++) sb_putc(b, *t == '\n' ? ';' : *t);
  sb_printf(b, "\nhlo_version=%s\nmodule_hash=%s\n", HLO_BUILD_ID, module_hash);
  return b->oom;
}

static hlo_status make_meta(exec_cache *c, const exec_cache_request *r, const hlo_func *f,
                            const char *target, const char *module_hash) {
  strbuf b;
  sb_init(&b);
  if (make_meta_text(c, r, f, target, module_hash, &b)) {
    sb_free(&b);
    return status_new(HLO_RESOURCE_EXHAUSTED, "out of memory");
  }
  free(c->meta);
  c->meta = sb_take(&b);
  return c->meta ? NULL : status_new(HLO_RESOURCE_EXHAUSTED, "out of memory");
}

/* The key (see executable_cache.h) and the meta text. */
static hlo_status make_key(exec_cache *c, const exec_cache_request *r, const hlo_func *f) {
  char *canon = module_print_canonical(r->user);
  if (!canon) return status_new(HLO_RESOURCE_EXHAUSTED, "out of memory");
  const backend *be = c->be;
  backend_compile_options bo = {.cache_root = c->root};
  const char *target = be->target ? be->target(&bo) : "";
  char module_hash[COMPILE_CACHE_KEY_HEX];
  const char *mparts[1] = {canon};
  compile_cache_key(mparts, 1, module_hash);
  strbuf args;
  sb_init(&args);
  for (uint32_t i = 0; r->arg_types && i < r->num_args; i++) {
    print_type(&args, r->arg_types[i]);
    sb_putc(&args, ';');
  }
  char fmt[16];
  snprintf(fmt, sizeof fmt, "%u", COMPILE_CACHE_FORMAT);
  const char *parts[] = {"hlo-executable", fmt, HLO_BUILD_ID, be->name, target,
                         r->passes ? r->passes : "none", f->name, canon,
                         args.oom ? "" : sb_cstr(&args)};
  compile_cache_key(parts, sizeof parts / sizeof *parts, c->key);
  hlo_status st = args.oom ? status_new(HLO_RESOURCE_EXHAUSTED, "out of memory") : NULL;
  sb_free(&args);
  free(canon);
  if (!st) st = make_meta(c, r, f, target, module_hash);
  return st;
}

/* ------------------------------------------------------------ aliases */

/* The alias key: the program's text exactly as given (with its locations
 * and names), with what make_key adds. Hashing the text is ~100x cheaper
 * than printing it canonically, so a program run again as is finds its
 * entry without the canonical print; a re-export (other text) takes the
 * canonical path once, which then writes its alias. "" when the module has
 * no text. */
static void make_raw_key(exec_cache *c, const exec_cache_request *r, const char *target) {
  c->raw_key[0] = 0;
  const hlo_source *src = &r->user->source;
  if (!src->text || !src->len) return;
  XXH128_hash_t h = XXH3_128bits(src->text, src->len);
  char text_hash[COMPILE_CACHE_KEY_HEX];
  snprintf(text_hash, sizeof text_hash, "%016llx%016llx", (unsigned long long)h.high64,
           (unsigned long long)h.low64);
  strbuf args;
  sb_init(&args);
  for (uint32_t i = 0; r->arg_types && i < r->num_args; i++) {
    print_type(&args, r->arg_types[i]);
    sb_putc(&args, ';');
  }
  if (args.oom) {
    sb_free(&args);
    return;
  }
  char fmt[16];
  snprintf(fmt, sizeof fmt, "%u", COMPILE_CACHE_FORMAT);
  const char *parts[] = {"hlo-alias", fmt, HLO_BUILD_ID, c->be->name, target,
                         r->passes ? r->passes : "none", c->f->name, text_hash,
                         sb_cstr(&args)};
  compile_cache_key(parts, sizeof parts / sizeof *parts, c->raw_key);
  sb_free(&args);
}

static bool alias_path(const exec_cache *c, char out[CACHE_DIR_PATH_MAX]) {
  int w = snprintf(out, CACHE_DIR_PATH_MAX, "%s/aliases/%s.alias", c->root, c->raw_key);
  return c->raw_key[0] && w > 0 && w < CACHE_DIR_PATH_MAX;
}

/* The key the alias names, into c->key: false when there is none (or it
 * is not a key). */
static bool read_alias(exec_cache *c) {
  char path[CACHE_DIR_PATH_MAX], buf[COMPILE_CACHE_KEY_HEX + 2];
  if (!alias_path(c, path)) return false;
  /* never blocks (a FIFO put there) and never follows a link */
  int fd = open(path, O_RDONLY | O_NONBLOCK | O_NOFOLLOW | O_CLOEXEC);
  if (fd < 0) return false;
  struct stat st;
  ssize_t n = fstat(fd, &st) == 0 && S_ISREG(st.st_mode) ? read(fd, buf, sizeof buf - 1) : -1;
  close(fd);
  if (n != COMPILE_CACHE_KEY_HEX) return false;  /* 32 hex digits and a newline */
  for (size_t i = 0; i < 32; i++)
    if (!((buf[i] >= '0' && buf[i] <= '9') || (buf[i] >= 'a' && buf[i] <= 'f'))) return false;
  if (buf[32] != '\n') return false;
  memcpy(c->key, buf, 32);
  c->key[32] = 0;
  return true;
}

/* Points the alias at c->key (written under a temporary name and renamed
 * into place; a failure only costs the next run the canonical print). */
static void write_alias(const exec_cache *c) {
  char path[CACHE_DIR_PATH_MAX], tmp[CACHE_DIR_PATH_MAX + 64], dir[CACHE_DIR_PATH_MAX];
  if (!alias_path(c, path) || !cache_dir_sub(c->root, "aliases", dir)) return;
  static unsigned counter;
  snprintf(tmp, sizeof tmp, "%s/.tmp-%s-%ld-%u", dir, c->raw_key, (long)getpid(),
           __atomic_fetch_add(&counter, 1, __ATOMIC_RELAXED));
  FILE *f = fopen(tmp, "wb");
  if (!f) return;
  bool ok = fprintf(f, "%s\n", c->key) == COMPILE_CACHE_KEY_HEX;
  ok = fclose(f) == 0 && ok;
  if (!ok || rename(tmp, path) != 0) unlink(tmp);
}

hlo_status exec_cache_begin(const exec_cache_request *r, exec_cache **out) {
  *out = NULL;
  const hlo_compile_options *co = r->co;
  bool log = co->log_compiles || env_on("HLO_LOG_COMPILES");
  bool explain = co->explain_cache_misses || env_on("HLO_EXPLAIN_CACHE_MISSES");
  /* the compiled backends (cpu, cuda, cpu-devmem): keyed on the backend's
   * name and target */
  const backend *cbe = runtime_backend(co->backend);
  if (!cbe) return NULL;
  const hlo_func *f = module_entry(r->user, r->entry);
  if (!f) return NULL;
  exec_cache *c = calloc(1, sizeof *c);
  if (!c) return status_new(HLO_RESOURCE_EXHAUSTED, "out of memory");
  c->t0 = now_ms();
  c->be = cbe;
  c->log = log;
  c->explain = explain;
  c->user = r->user;
  c->use = !co->no_cache && !co->check && !co->dump_dir &&
           cache_dir_root(co->cache_dir, c->root);
  c->entry_name = strdup(f->name);
  c->module_name = strdup(r->user->name ? r->user->name : "");
  c->passes = strdup(r->passes ? r->passes : "none");
  hlo_status st = c->entry_name && c->module_name && c->passes
                      ? NULL : status_new(HLO_RESOURCE_EXHAUSTED, "out of memory");
  if (!st && c->use) {
    const char *err = NULL;
    c->max_bytes = compile_cache_max_bytes(co->cache_max_bytes, &err);
    if (err) fprintf(stderr, "hlo: warning: HLO_CACHE_MAX_BYTES: %s\n", err);
    double t = now_ms();
    c->req = *r;
    c->f = f;
    const backend *be = c->be;
    backend_compile_options bo = {.cache_root = c->root};
    c->target = be->target ? be->target(&bo) : "";
    make_raw_key(c, r, c->target);
    c->from_alias = read_alias(c);
    if (!c->from_alias) st = make_key(c, r, f);
    exec_cache_stage(c, "key", now_ms() - t);
  }
  if (st || (!c->use && !c->log)) {
    exec_cache_end(c, true);
    c = NULL;
  }
  *out = c;
  return st;
}

/* ------------------------------------------------------- op locations */

/* Calls fn(ctx, op) for every op of m, functions in order, each op before
 * the ops of its regions (pre-order). */
typedef void (*op_visit)(void *ctx, hlo_op *op);
static void visit_block(const hlo_block *b, op_visit fn, void *ctx) {
  for (hlo_op *op = b->first; op; op = op->next) {
    fn(ctx, op);
    for (uint32_t i = 0; i < op->num_regions; i++) visit_block(&op->regions[i].block, fn, ctx);
  }
}
static void visit_module(const hlo_module_ir *m, op_visit fn, void *ctx) {
  for (const hlo_func *f = m->funcs; f; f = f->next) visit_block(&f->body.block, fn, ctx);
}

typedef struct op_list {
  hlo_op **ops;
  uint32_t n, cap;
  bool oom;
} op_list;

static void collect(void *ctx, hlo_op *op) {
  op_list *l = ctx;
  if (l->oom) return;
  if (l->n == l->cap) {
    uint32_t cap = l->cap ? 2 * l->cap : 256;
    hlo_op **p = realloc(l->ops, cap * sizeof *p);
    if (!p) {
      l->oom = true;
      return;
    }
    l->ops = p, l->cap = cap;
  }
  l->ops[l->n++] = op;
}

/* A map from a source position (line, col) to the pre-order index of the
 * user's op that starts there. */
typedef struct pos_map {
  uint64_t *keys;   /* line << 32 | col, 0 = empty */
  uint32_t *vals;
  uint32_t cap;
} pos_map;

static uint32_t pos_hash(uint64_t k, uint32_t cap) {
  k ^= k >> 29;
  k *= 0x9E3779B97F4A7C15ull;
  return (uint32_t)(k >> 32) & (cap - 1);
}

static bool pos_map_build(pos_map *pm, const op_list *user) {
  uint32_t cap = 64;
  while (cap < 2 * user->n + 2) cap *= 2;
  pm->cap = cap;
  pm->keys = calloc(cap, sizeof *pm->keys);
  pm->vals = calloc(cap, sizeof *pm->vals);
  if (!pm->keys || !pm->vals) return false;
  for (uint32_t i = 0; i < user->n; i++) {
    const hlo_loc *l = &user->ops[i]->loc;
    if (!l->line) continue;
    uint64_t k = (uint64_t)l->line << 32 | l->col;
    uint32_t h = pos_hash(k, cap);
    while (pm->keys[h] && pm->keys[h] != k) h = (h + 1) & (cap - 1);
    if (!pm->keys[h]) pm->keys[h] = k, pm->vals[h] = i;
  }
  return true;
}

/* 1 + the index of the user's op at `l`, or 0. */
static uint32_t pos_map_find(const pos_map *pm, const hlo_loc *l) {
  if (!l->line) return 0;
  uint64_t k = (uint64_t)l->line << 32 | l->col;
  uint32_t h = pos_hash(k, pm->cap);
  while (pm->keys[h]) {
    if (pm->keys[h] == k) return pm->vals[h] + 1;
    h = (h + 1) & (pm->cap - 1);
  }
  return 0;
}

/* The "locs" section of `opt` (see executable_cache.h): malloc'd, *n
 * entries; NULL on out of memory. */
static uint32_t *make_locs(const hlo_module_ir *user, const hlo_module_ir *opt, uint32_t *n) {
  op_list u = {0}, o = {0};
  visit_module(user, collect, &u);
  visit_module(opt, collect, &o);
  pos_map pm = {0};
  uint32_t *locs = NULL;
  if (!u.oom && !o.oom && pos_map_build(&pm, &u)) {
    locs = malloc((o.n ? o.n : 1) * sizeof *locs);
    for (uint32_t i = 0; locs && i < o.n; i++) locs[i] = pos_map_find(&pm, &o.ops[i]->loc);
    *n = o.n;
  }
  free(pm.keys);
  free(pm.vals);
  free(u.ops);
  free(o.ops);
  return locs;
}

/* Gives the ops of `opt` the locations of the user's ops that `locs` names
 * (a value's location is its op's); functions and their arguments take
 * those of the user's function of the same name. False when `locs` does
 * not fit `opt` (another module). */
static bool apply_locs(const hlo_module_ir *user, hlo_module_ir *opt, const uint32_t *locs,
                       uint32_t n) {
  op_list u = {0}, o = {0};
  visit_module(user, collect, &u);
  visit_module(opt, collect, &o);
  bool ok = !u.oom && !o.oom && o.n == n;
  for (uint32_t i = 0; ok && i < n; i++) ok = locs[i] <= u.n;
  for (uint32_t i = 0; ok && i < n; i++) {
    hlo_op *op = o.ops[i];
    if (!locs[i]) {
      op->loc = (hlo_loc){0};
    } else {
      const hlo_op *from = u.ops[locs[i] - 1];
      op->loc = from->loc;
      op->loc_text = from->loc_text;
    }
    for (uint32_t r = 0; r < op->num_results; r++) op->results[r].loc = op->loc;
  }
  for (hlo_func *f = opt->funcs; ok && f; f = f->next) {
    const hlo_func *g = module_entry(user, f->name);
    f->loc = g ? g->loc : (hlo_loc){0};
    for (uint32_t i = 0; i < f->body.block.num_args; i++)
      f->body.block.args[i].loc =
          g && i < g->body.block.num_args ? g->body.block.args[i].loc : (hlo_loc){0};
  }
  free(u.ops);
  free(o.ops);
  return ok;
}

/* ------------------------------------ convolution algorithm choices */

/* Whether c's backend times its convolutions' algorithms at compile time
 * (CUDA: cuDNN): its entries keep the choices (section "conv_tuning",
 * backend.conv_tuning_export), so that a hit does not time them again. */
static bool tunes_convs(const exec_cache *c) {
  return c->be && c->be->conv_tuning_export && c->be->conv_tuning_import;
}

typedef struct conv_list {
  backend_conv *v;
  uint32_t n, cap;
  bool oom;
} conv_list;

static void collect_conv(void *ctx, hlo_op *op) {
  conv_list *l = ctx;
  backend_conv bc;
  if (l->oom || op->opcode != OP_CONVOLUTION || !conv_describe(op, &bc)) return;
  if (l->n == l->cap) {
    uint32_t cap = l->cap ? 2 * l->cap : 16;
    backend_conv *v = realloc(l->v, cap * sizeof *v);
    if (!v) {
      l->oom = true;
      return;
    }
    l->v = v, l->cap = cap;
  }
  l->v[l->n++] = bc;
}

/* The "conv_tuning" section of module m (the choices of its convolutions'
 * plans, made in this process): malloc'd, *len bytes; NULL when there is
 * none. */
static void *conv_tuning_section(const exec_cache *c, const hlo_module_ir *m, size_t *len) {
  *len = 0;
  conv_list l = {0};
  visit_module(m, collect_conv, &l);
  void *blob = NULL;
  if (!l.oom && l.n) {
    hlo_status st = c->be->conv_tuning_export(l.v, l.n, &blob, len);
    if (st) hlo_status_free(st), blob = NULL, *len = 0;
  }
  free(l.v);
  return blob;
}

/* A hit whose entry lacked this process's convolution choices (tuned for
 * another device, library version or setting, or none kept): the entry
 * written again with the choices this compile made, so that the next hit
 * does not tune them. A failure is a warning. */
static void restore_conv_tuning(exec_cache *c) {
  size_t blen = 0;
  void *blob = conv_tuning_section(c, c->hit_ir, &blen);
  if (!blob) return;
  uint32_t ns = cache_entry_num_sections(c->loaded), n = 0;
  cache_section *secs = calloc((size_t)ns + 1, sizeof *secs);
  hlo_status st = NULL;
  if (!secs) {
    st = status_new(HLO_RESOURCE_EXHAUSTED, "out of memory");
  } else {
    for (uint32_t i = 0; i < ns; i++) {
      cache_section s = cache_entry_section_at(c->loaded, i);
      if (strcmp(s.name, "conv_tuning")) secs[n++] = s;
    }
    secs[n++] = (cache_section){"conv_tuning", blob, blen};
    st = compile_cache_store(c->root, c->key, secs, n, c->max_bytes);
  }
  if (st) {
    fprintf(stderr, "hlo: warning: the compilation cache: %s (the convolutions' algorithm choices are not stored)\n",
            hlo_status_message(st));
    hlo_status_free(st);
  }
  free(secs);
  free(blob);
}

/* ---------------------------------------------------------------- load */

static void explain_miss(exec_cache *c) {
  cache_listing l;
  hlo_status st = compile_cache_list(c->root, false, &l);
  if (st) {
    hlo_status_free(st);
    return;
  }
  char key[COMPILE_CACHE_KEY_HEX] = "";
  char *text = compile_cache_explain(&l, c->meta, key);
  if (text && key[0]) {
    fprintf(stderr, "hlo: cache miss for @%s (module %s): closest entry %.12s differs in:\n",
            c->entry_name, c->module_name, key);
    for (const char *line = text; *line;) {  /* each line indented */
      const char *nl = strchr(line, '\n');
      int n = nl ? (int)(nl - line) : (int)strlen(line);
      if (n) fprintf(stderr, "  %.*s\n", n, line);
      line += n + (nl != NULL);
    }
  }
  else if (text)
    fprintf(stderr, "hlo: cache miss for @%s (module %s): no cached entry for this function\n",
            c->entry_name, c->module_name);
  free(text);
  cache_listing_free(&l);
}

/* Removes this compile's entry (one that loaded but cannot be used) and
 * says so, or why it could not. The compile goes on as a miss, whose store
 * needs the meta text: a key read from an alias has none yet (made here;
 * out of memory: nothing is stored). */
static void reject_entry(exec_cache *c, const char *why) {
  char outcome[160];
  compile_cache_remove(c->root, c->key, outcome, sizeof outcome);
  fprintf(stderr, "hlo: warning: cache entry %s/executables/%s.hlox: %s; %s, recompiling\n",
          c->root, c->key, why, outcome);
  if (!c->meta) {
    hlo_status st = make_key(c, &c->req, c->f);
    if (st) hlo_status_free(st), c->use = false;
  }
}

/* Whether the line `line` (n bytes, no newline) is one of the lines of
 * text[0..len). */
static bool has_line(const char *text, size_t len, const char *line, size_t n) {
  for (size_t i = 0; i + n <= len;) {
    const char *nl = memchr(text + i, '\n', len - i);
    size_t end = nl ? (size_t)(nl - text) : len;
    if (end - i == n && !memcmp(text + i, line, n)) return true;
    i = end + 1;
  }
  return false;
}

/* Why entry e is not this compile's, or NULL: the file is named by the key,
 * and its meta must say the same key and every field of this request (the
 * function, its argument and result types, the backend, pipeline, target
 * and hlo's build) — a file copied or renamed over another key, or reached
 * through a stale alias, is refused rather than run. The module's hash is
 * not compared: a hit through an alias has not printed the module (the
 * alias is keyed by the exact text, which the key covers). */
static const char *entry_mismatch(exec_cache *c, const cache_entry *e) {
  size_t len = 0;
  const char *meta = cache_entry_section(e, "meta", &len);
  if (!meta) return "it has no meta section";
  char keyline[8 + COMPILE_CACHE_KEY_HEX];
  int kn = snprintf(keyline, sizeof keyline, "key=%s", c->key);
  if (!has_line(meta, len, keyline, (size_t)kn)) return "it was made for another key";
  strbuf want;
  sb_init(&want);
  if (make_meta_text(c, &c->req, c->f, c->target, "", &want)) {
    sb_free(&want);
    return NULL; /* out of memory: the parse below still checks the entry */
  }
  const char *bad = NULL;
  for (const char *l = sb_cstr(&want); *l && !bad;) {
    const char *nl = strchr(l, '\n');
    size_t n = nl ? (size_t)(nl - l) : strlen(l);
    if (strncmp(l, "module_hash=", 12) && !has_line(meta, len, l, n))
      bad = "its meta does not match this program (another function, signature or target)";
    l += n + (nl != NULL);
  }
  sb_free(&want);
  return bad;
}

bool exec_cache_load(exec_cache *c, hlo_module_ir **out_ir) {
  *out_ir = NULL;
  if (!c || !c->use) return false;
  double t = now_ms();
  char *why = NULL;
  cache_entry *e = NULL;
  cache_lookup r = compile_cache_load(c->root, c->key, &e, &why);
  if (r == CACHE_BAD) {  /* `why` names the entry and the failed check */
    fprintf(stderr, "hlo: warning: %s; removed, recompiling\n", why ? why : "a bad cache entry");
    free(why);
    why = NULL;
  }
  if (r != CACHE_HIT && c->from_alias) {
    /* the alias named an entry that is gone: the canonical key */
    char old_key[COMPILE_CACHE_KEY_HEX];
    memcpy(old_key, c->key, sizeof old_key);
    c->from_alias = false;
    double tk = now_ms();
    hlo_status st = make_key(c, &c->req, c->f);
    exec_cache_stage(c, "key", now_ms() - tk);
    if (st) {
      hlo_status_free(st);
      return false;
    }
    if (strcmp(old_key, c->key)) {
      r = compile_cache_load(c->root, c->key, &e, &why);
      if (r == CACHE_BAD) {
        fprintf(stderr, "hlo: warning: %s; removed, recompiling\n",
                why ? why : "a bad cache entry");
        free(why);
      }
    }
  }
  if (r == CACHE_HIT && !c->from_alias) write_alias(c);
  if (r != CACHE_HIT) {
    exec_cache_stage(c, "lookup", now_ms() - t);
    if (c->explain) explain_miss(c);
    return false;
  }
  size_t mlen = 0, llen = 0;
  const char *bad = entry_mismatch(c, e);
  const char *text = cache_entry_section(e, "module", &mlen);
  const void *locs = cache_entry_section(e, "locs", &llen);
  hlo_module_ir *ir = NULL;
  if (!bad && (!text || !locs || llen % 4)) bad = "the module or its locations are missing";
  if (!bad) {
    char name[64];
    snprintf(name, sizeof name, "<cache entry %.12s>", c->key);
    hlo_source src = {name, text, mlen, 1};
    hlo_status st = parse_module(&src, 0, mlen, &ir);
    if (st) {
      hlo_status_free(st);
      bad = "its module does not parse";
    }
  }
  uint32_t *lv = NULL;
  if (!bad) {
    lv = malloc(llen ? llen : 1);
    if (lv) memcpy(lv, locs, llen);
    if (!lv || !apply_locs(c->user, ir, lv, (uint32_t)(llen / 4)))
      bad = "its locations do not fit its module";
  }
  free(lv);
  if (!bad && !module_entry(ir, c->entry_name)) bad = "its module lacks the entry function";
  /* the objects */
  uint32_t ns = bad ? 0 : cache_entry_num_sections(e), no = 0;
  for (uint32_t i = 0; i < ns; i++)
    no += !strncmp(cache_entry_section_at(e, i).name, "object.", 7);
  c->objs = no ? calloc(no, sizeof *c->objs) : NULL;
  if (no && !c->objs) bad = "out of memory";
  for (uint32_t i = 0; !bad && i < ns; i++) {
    cache_section s = cache_entry_section_at(e, i);
    if (strncmp(s.name, "object.", 7)) continue;
    backend_object *o = &c->objs[c->nobjs++];
    snprintf(o->key, sizeof o->key, "%s", s.name + 7);
    o->bytes = s.data;
    o->len = s.len;
  }
  /* the convolutions' algorithm choices (CUDA: cuDNN's): given back
   * before the lowering makes the plans; a malformed section rejects the
   * entry, one tuned for another device, library or setting is tuned
   * again (and the entry rewritten at exec_cache_end) */
  size_t dlen = 0;
  const void *dnn =
      !bad && tunes_convs(c) ? cache_entry_section(e, "conv_tuning", &dlen) : NULL;
  char dnn_why[512], why_now[512] = ""; /* dnn_why: `bad`'s text (used below, in this function) */
  if (dnn) {
    backend_tuning_kept k = c->be->conv_tuning_import(dnn, dlen, why_now, sizeof why_now);
    if (k == BACKEND_TUNING_BAD) {
      snprintf(dnn_why, sizeof dnn_why, "%s", why_now);
      bad = dnn_why;
    } else if (k == BACKEND_TUNING_STALE && (c->explain || c->log)) {
      fprintf(stderr, "hlo: cache entry %.12s for @%s (module %s): %s; tuning them again\n",
              c->key, c->entry_name, *c->module_name ? c->module_name : "-", why_now);
    }
    c->tuning_kept = k == BACKEND_TUNING_USED || k == BACKEND_TUNING_UNUSED;
  }
  if (bad) {
    reject_entry(c, bad);
    module_free(ir);
    cache_entry_free(e);
    free(c->objs);
    c->objs = NULL;
    c->nobjs = 0;
    exec_cache_stage(c, "lookup", now_ms() - t);
    return false;
  }
  for (hlo_func *g = ir->funcs; g; g = g->next) func_number_values(g);
  c->loaded = e;
  c->hit = true;
  c->hit_ir = ir;
  exec_cache_stage(c, "load", now_ms() - t);
  *out_ir = ir;
  return true;
}

uint32_t exec_cache_objects(const exec_cache *c, const backend_object **out) {
  *out = c ? c->objs : NULL;
  return c ? c->nobjs : 0;
}

void exec_cache_reject(exec_cache *c, const char *why) {
  if (!c || !c->hit) return;
  reject_entry(c, why);
  cache_entry_free(c->loaded);
  c->loaded = NULL;
  free(c->objs);
  c->objs = NULL;
  c->nobjs = 0;
  c->hit = false;
  c->hit_ir = NULL;
}

/* --------------------------------------------------------------- store */

static char sweep_root[CACHE_DIR_PATH_MAX];
static void sweep_once(void) { compile_cache_sweep(sweep_root); }

void exec_cache_store(exec_cache *c, const hlo_module_ir *optimised, const cpu_exec *cpu) {
  if (!c || !c->use || c->hit) return;
  double t = now_ms();
  /* stale temporaries of interrupted writers: once per process */
  static pthread_once_t swept = PTHREAD_ONCE_INIT;
  static pthread_mutex_t sweep_lock = PTHREAD_MUTEX_INITIALIZER;
  pthread_mutex_lock(&sweep_lock);
  if (!sweep_root[0]) snprintf(sweep_root, sizeof sweep_root, "%s", c->root);
  pthread_mutex_unlock(&sweep_lock);
  pthread_once(&swept, sweep_once);
  char *text = module_print(optimised);
  uint32_t nlocs = 0;
  uint32_t *locs = text ? make_locs(c->user, optimised, &nlocs) : NULL;
  const backend_object *objs = NULL;
  uint32_t nobjs = cpu_exec_objects(cpu, &objs);
  strbuf meta;
  sb_init(&meta);
  sb_puts(&meta, c->meta);
  sb_printf(&meta, "key=%s\nunits=%u\ncreated=%lld\n", c->key, nobjs, (long long)time(NULL));
  size_t dlen = 0;
  void *dnn = text && tunes_convs(c) ? conv_tuning_section(c, optimised, &dlen) : NULL;
  cache_section *secs = calloc(4 + (size_t)nobjs, sizeof *secs);
  char (*names)[8 + COMPILE_CACHE_KEY_HEX] = calloc(nobjs ? nobjs : 1, sizeof *names);
  hlo_status st = NULL;
  if (!text || !locs || !secs || !names || meta.oom) {
    st = status_new(HLO_RESOURCE_EXHAUSTED, "out of memory");
  } else {
    uint32_t n = 0;
    secs[n++] = (cache_section){"meta", sb_cstr(&meta), meta.len};
    secs[n++] = (cache_section){"module", text, strlen(text)};
    secs[n++] = (cache_section){"locs", locs, (size_t)nlocs * sizeof *locs};
    for (uint32_t i = 0; i < nobjs; i++) {
      snprintf(names[i], sizeof names[i], "object.%s", objs[i].key);
      secs[n++] = (cache_section){names[i], objs[i].bytes, objs[i].len};
    }
    if (dnn) secs[n++] = (cache_section){"conv_tuning", dnn, dlen};
    st = compile_cache_store(c->root, c->key, secs, n, c->max_bytes);
    if (!st) write_alias(c);
  }
  if (st) {
    fprintf(stderr, "hlo: warning: the compilation cache: %s (the entry is not stored)\n",
            hlo_status_message(st));
    hlo_status_free(st);
  }
  free(secs);
  free(dnn);
  free(names);
  sb_free(&meta);
  free(locs);
  free(text);
  exec_cache_stage(c, "store", now_ms() - t);
}

/* ---------------------------------------------------------------- end */

const char *exec_cache_result(const exec_cache *c, double *out_ms) {
  double ms = 0;
  for (uint32_t i = 0; c && i < c->nstages; i++) {
    const char *n = c->stage_name[i];
    if (!strcmp(n, "key") || !strcmp(n, "lookup") || !strcmp(n, "load") || !strcmp(n, "store"))
      ms += c->stage_ms[i];
  }
  if (out_ms) *out_ms = ms;
  return !c || !c->use ? "off" : c->hit ? "hit" : "miss";
}

void exec_cache_end(exec_cache *c, bool ok) {
  if (!c) return;
  if (ok && c->use && c->hit && c->hit_ir && tunes_convs(c) && !c->tuning_kept) {
    double t = now_ms();
    restore_conv_tuning(c);
    exec_cache_stage(c, "store", now_ms() - t);
  }
  if (c->log) {
    double total = now_ms() - c->t0;
    const char *what = !ok ? "failed" : !c->use ? "cache off" : c->hit ? "hit" : "miss";
    fprintf(stderr, "hlo: compile @%s (module %s): %s", c->entry_name ? c->entry_name : "?",
            c->module_name && *c->module_name ? c->module_name : "-", what);
    if (c->use) fprintf(stderr, " %.12s", c->key);
    fprintf(stderr, " in %.1f ms [", total);
    for (uint32_t i = 0; i < c->nstages; i++)
      fprintf(stderr, "%s%s %.1f", i ? ", " : "", c->stage_name[i], c->stage_ms[i]);
    fprintf(stderr, "]\n");
  }
  cache_entry_free(c->loaded);
  free(c->objs);
  free(c->meta);
  free(c->entry_name);
  free(c->module_name);
  free(c->passes);
  free(c);
}
