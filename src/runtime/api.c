/* api.c — the public C API of include/hlo/hlo.h on top of the parser, the
 * verifier, the chlo pass and the reference interpreter. */
#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "hlo/hlo.h"
#include "interp/interp.h"
#include "ir/element.h"
#include "ir/ir.h"
#include "parse/parse.h"
#include "passes/cost_analysis.h"
#include "passes/pass_manager.h"
#include "passes/passes.h"
#include "runtime/executable_cpu.h"
#include "runtime/runtime.h"
#include "support/arena.h"
#include "runtime/executable_cache.h"
#include "runtime/tiered.h"
#include "support/status.h"

struct hlo_module {
  hlo_module_ir *ir;
  bool legalized;        /* chlo ops rewritten already */
  pthread_mutex_t lock;  /* executables created from several threads take turns */
};

/* A public module around `ir` (taking it), or NULL on out of memory. */
static hlo_module *module_wrap(hlo_module_ir *ir) {
  hlo_module *m = xcalloc(1, sizeof *m);
  if (!m) return NULL;
  if (pthread_mutex_init(&m->lock, NULL) != 0) {
    free(m);
    return NULL;
  }
  m->ir = ir;
  return m;
}

struct hlo_buffer {
  hlo_dtype dtype;
  int rank;              /* HLO_RANK_TOKEN / HLO_RANK_TUPLE for those */
  int64_t dims[HLO_MAX_RANK];
  void *data;
  size_t nbytes;
  int num_elems;         /* tuples: element count */
  hlo_buffer **elems;    /* tuples: owned elements */
  /* A copy in a device backend's memory (owned; NULL: a host buffer). Then
   * `data` holds the bytes only when device->host_valid (else it is NULL or
   * room for them); hlo_buffer_fetch downloads, under fetch_lock. */
  tensor_device *device;
};

/* A specialization of a dynamic-shaped entry function to one signature of
 * input shapes: the module re-parsed, refined (pass_refine_shapes),
 * verified and legalized, with its own interpreter. */
typedef struct shape_spec {
  struct shape_spec *next;
  int64_t *sig;           /* per argument: rank (-1 for a token), then dims */
  size_t nsig;
  hlo_module_ir *ir;
  const hlo_func *entry;
  interp *it;
  cpu_exec *cpu;          /* HLO_BACKEND_CPU: the specialization compiled */
} shape_spec;

/* Specializations kept per executable (least recently used dropped). */
#define MAX_SPECS 8

struct hlo_executable {
  hlo_module *module;
  const hlo_func *entry;
  hlo_backend_kind backend;
  interp_options opts;  /* kept here: the interpreter may refer to it */
  interp *it;           /* NULL when `dynamic` */
  bool dynamic;         /* the entry has dynamic shapes: refined per input shapes */
  shape_spec *specs;    /* when dynamic: the cache, most recently used first */
  pthread_mutex_t lock; /* the interpreter's state is per run: runs take turns */
  cpu_exec *cpu;        /* HLO_BACKEND_CPU with static shapes: the compiled thunks */
  char *passes;         /* the pass pipeline (expanded; NULL: none), owned */
  char *dump_dir;       /* owned copy of the compile option; NULL: none */
  hlo_module_ir *own_ir; /* the optimised private copy of the module (a pipeline ran), owned */
  pass_report report;   /* the pipeline's passes (of the last specialization when dynamic) */
  bool check;           /* hlo_compile_options.check */
  hlo_compile_options cache_opts; /* the cache fields of the compile options
                                     (cache_dir: cache_dir_copy) */
  char *cache_dir_copy;
  const char *cache_result; /* of the last compile: "hit", "miss", "off" (static) */
  double cache_ms;      /* the cache's own time in it */
  /* Tiered execution (tiered.h, docs/tiered.md). The fields of the
   * background compile's result are written under `lock` when it is
   * joined; `tier_done` is the one the thread writes (atomically). */
  bool tiered;          /* this compile tiered: the native code was (is) made in the background */
  struct tier_work *job; /* the background compile, until joined (NULL after) */
  bool tier_done;       /* set by the background thread when it is over: cancels interpreted runs */
  hlo_status tier_error; /* its error, once joined (runs and waits get copies) */
  interp *cpu_it;       /* the interpreter the background compile made `cpu` over */
  double tier_interp_ms; /* the estimated interpreter run (-1: unknown) */
  double tier_cc_ms;    /* the estimated background compile */
  double t0;            /* api_now_ms() at the compile call */
  double bg_t0;         /* api_now_ms() when the background compile started */
  double ready_ms, native_ms; /* from t0: the compile call returned; the native code was loaded */
  const char *last_tier; /* the tier of the last run: "interp", "native" (NULL: none yet) */
  uint32_t runs_interp, runs_cancelled; /* runs interpreted; of them, cancelled and re-run */
};

/* ---------------------------------------------------------------- modules */

hlo_status hlo_module_parse(const char *name, const char *text, size_t len, hlo_module **out) {
  return hlo_module_parse_at(name, text, len, 1, out);
}

hlo_status hlo_module_parse_at(const char *name, const char *text, size_t len,
                               unsigned first_line, hlo_module **out) {
  if (!out) return status_new(HLO_INVALID_ARGUMENT, "hlo_module_parse: out_module is NULL");
  *out = NULL;
  if (!text && len)
    return status_new(HLO_INVALID_ARGUMENT, "hlo_module_parse: text is NULL (len %zu)", len);
  if (!text) text = "";
  hlo_source src = {name ? name : "<input>", text, len, first_line ? first_line : 1};
  hlo_module_ir *ir = NULL;
  HLO_TRY(parse_module(&src, 0, len, &ir));
  hlo_status st = module_verify(ir);
  if (st) { module_free(ir); return st; }
  hlo_module *m = module_wrap(ir);
  if (!m) { module_free(ir); return status_new(HLO_RESOURCE_EXHAUSTED, "out of memory"); }
  *out = m;
  return NULL;
}

hlo_status runtime_read_file(const char *path, char **out_text, size_t *out_len) {
  *out_text = NULL;
  *out_len = 0;
  FILE *f = strcmp(path, "-") == 0 ? stdin : fopen(path, "rb");
  if (!f) return status_new(HLO_NOT_FOUND, "cannot open '%s': %s", path, strerror(errno));
  size_t cap = 1 << 16, len = 0;
  char *buf = xmalloc(cap);
  while (buf) {
    if (len == cap) {
      if (cap > ((size_t)1 << 34)) { free(buf); buf = NULL; break; }
      char *nb = xrealloc(buf, cap * 2);
      if (!nb) { free(buf); buf = NULL; break; }
      buf = nb;
      cap *= 2;
    }
    size_t n = fread(buf + len, 1, cap - len, f);
    len += n;
    if (n == 0) break;
  }
  int err = ferror(f) ? (errno ? errno : EIO) : 0;
  if (f != stdin) fclose(f);
  if (!buf) return status_new(HLO_RESOURCE_EXHAUSTED, "out of memory reading '%s'", path);
  if (err) {
    free(buf);
    return status_new(HLO_NOT_FOUND, "cannot read '%s': %s", path, strerror(err));
  }
  *out_text = buf;
  *out_len = len;
  return NULL;
}

hlo_status hlo_module_load(const char *path, hlo_module **out) {
  if (!out) return status_new(HLO_INVALID_ARGUMENT, "hlo_module_load: out_module is NULL");
  *out = NULL;
  if (!path) return status_new(HLO_INVALID_ARGUMENT, "hlo_module_load: path is NULL");
  char *text;
  size_t len;
  HLO_TRY(runtime_read_file(path, &text, &len));
  hlo_status st = hlo_module_parse(path, text, len, out);
  free(text);
  return st;
}

hlo_module *runtime_module_wrap(hlo_module_ir *ir) { return module_wrap(ir); }

hlo_module_ir *runtime_module_ir(hlo_module *m) { return m ? m->ir : NULL; }

void hlo_module_destroy(hlo_module *m) {
  if (!m) return;
  module_free(m->ir);
  pthread_mutex_destroy(&m->lock);
  free(m);
}

/* ---------------------------------------------------------------- buffers */

hlo_dtype hlo_buffer_dtype(const hlo_buffer *b) { return b ? b->dtype : HLO_DTYPE_COUNT; }
int hlo_buffer_rank(const hlo_buffer *b) { return b ? b->rank : HLO_RANK_TOKEN; }
const int64_t *hlo_buffer_dims(const hlo_buffer *b) { return b ? b->dims : NULL; }
const void *hlo_buffer_data(const hlo_buffer *b) {
  if (!b) return NULL;
  if (b->device && !__atomic_load_n(&b->device->host_valid, __ATOMIC_ACQUIRE)) {
    hlo_status st = hlo_buffer_fetch(b);
    if (st) {
      hlo_status_free(st);
      return NULL;
    }
  }
  return b->data;
}
size_t hlo_buffer_nbytes(const hlo_buffer *b) { return b ? b->nbytes : 0; }

int hlo_buffer_tuple_size(const hlo_buffer *b) {
  return b && b->rank == HLO_RANK_TUPLE ? b->num_elems : -1;
}
const hlo_buffer *hlo_buffer_tuple_element(const hlo_buffer *b, int i) {
  return b && b->rank == HLO_RANK_TUPLE && i >= 0 && i < b->num_elems ? b->elems[i] : NULL;
}

void hlo_buffer_destroy(hlo_buffer *b) {
  if (!b) return;
  for (int i = 0; i < b->num_elems; i++) hlo_buffer_destroy(b->elems[i]);
  free(b->elems);
  free(b->data);
  if (b->device) b->device->release(b->device);
  free(b);
}

bool hlo_buffer_on_device(const hlo_buffer *b) { return b && b->device; }

/* Downloads serialise: a buffer may be fetched from several threads at once. */
static pthread_mutex_t fetch_lock = PTHREAD_MUTEX_INITIALIZER;

/* Downloads d's nbytes into *host (malloc'd when NULL) unless valid there;
 * *host is read and written under fetch_lock only. */
static hlo_status device_fetch(tensor_device *d, void **host, size_t nbytes) {
  if (__atomic_load_n(&d->host_valid, __ATOMIC_ACQUIRE)) return NULL;
  pthread_mutex_lock(&fetch_lock);
  hlo_status st = NULL;
  if (!d->host_valid) {
    if (!*host) *host = xmalloc(nbytes ? nbytes : 1);
    if (!*host) st = status_new(HLO_RESOURCE_EXHAUSTED, "out of memory for %zu bytes", nbytes);
    const backend *be = d->backend;
    if (!st && nbytes) st = be->copy(*host, d->ptr, nbytes);
    if (!st) __atomic_store_n(&d->host_valid, true, __ATOMIC_RELEASE);
  }
  pthread_mutex_unlock(&fetch_lock);
  return st;
}

hlo_status hlo_buffer_fetch(const hlo_buffer *cb) {
  hlo_buffer *b = (hlo_buffer *)cb;
  if (!b) return NULL;
  for (int i = 0; i < b->num_elems; i++) HLO_TRY(hlo_buffer_fetch(b->elems[i]));
  if (!b->device) return NULL;
  return device_fetch(b->device, &b->data, b->nbytes);
}

/* ------------------------------------------------------------- executing */

/* backend_cuda's table into *out (may be NULL), or its error (no driver:
 * HLO_UNAVAILABLE saying what is missing). */
static hlo_status cuda_backend(const backend **out) {
  const backend *b = NULL;
  HLO_TRY(backend_cuda(&b));
  if (out) *out = b;
  return NULL;
}

const struct backend *runtime_backend(hlo_backend_kind k) {
  if (k == HLO_BACKEND_CPU) return backend_cpu();
  if (k == RUNTIME_BACKEND_CPU_DEVMEM) return backend_cpu_devmem();
  if (k == HLO_BACKEND_CUDA) {
    const backend *b = NULL;
    hlo_status st = cuda_backend(&b);
    if (st) hlo_status_free(st);
    return b;
  }
  return NULL;
}

static hlo_status optimise_ir(hlo_executable *e, hlo_module_ir *ir);
static double api_now_ms(void);
static hlo_status tier_join(hlo_executable *e);
static void tier_wait_quietly(const hlo_executable *ce);
static const char *pipeline_of(const hlo_compile_options *o);
static void spec_free(struct shape_spec *s);
static hlo_status make_runners(hlo_executable *e, hlo_module_ir *ir, const hlo_func *f,
                               const exec_cache *c, interp **out_it, cpu_exec **out_cpu);
static hlo_status compile_cached(hlo_executable *e, hlo_module_ir *parsed,
                                 hlo_type *const *arg_types, uint32_t num_args,
                                 hlo_module_ir **out_ir, const hlo_func **out_entry,
                                 interp **out_it, cpu_exec **out_cpu);

hlo_status hlo_executable_create(hlo_module *m, const char *entry, hlo_backend_kind kind,
                                 hlo_executable **out) {
  hlo_compile_options co = {0};
  co.backend = kind;
  return hlo_executable_compile(m, entry, &co, out);
}

hlo_status hlo_executable_compile(hlo_module *m, const char *entry, const hlo_compile_options *o,
                                  hlo_executable **out) {
  if (!out) return status_new(HLO_INVALID_ARGUMENT, "hlo_executable_create: out_exe is NULL");
  *out = NULL;
  if (!m) return status_new(HLO_INVALID_ARGUMENT, "hlo_executable_create: the module is NULL");
  interp_options opts = {0};
  hlo_compile_options none = {0};
  return runtime_executable_create_on(m, entry, o ? o : &none, &opts, out);
}

hlo_status runtime_executable_create(hlo_module *m, const char *entry, const interp_options *opts,
                                     hlo_executable **out) {
  hlo_compile_options co = {0};
  return runtime_executable_create_on(m, entry, &co, opts, out);
}

/* The entry function of `m` (see hlo_executable_create), or the error. */
static hlo_status find_entry(hlo_module *m, const char *entry, const hlo_func **out) {
  *out = module_entry(m->ir, entry);
  if (*out) return NULL;
  if (entry) return status_new(HLO_NOT_FOUND, "no function @%s in the module", entry);
  if (m->ir->num_funcs == 0) {
    hlo_loc start = {&m->ir->source, m->ir->source.first_line ? m->ir->source.first_line : 1, 1};
    return status_at(HLO_NOT_FOUND, &start, "the module has no functions: nothing to run");
  }
  return status_new(HLO_NOT_FOUND,
                    "no @main function, and the module has %u functions: name one "
                    "with --entry", m->ir->num_funcs);
}

/* A private entry function is what the caller runs: made public in the
 * executable's own copy of the module, so that the passes that drop
 * functions nothing calls keep it. */
static void keep_entry(hlo_func *f) {
  if (f && f->visibility && strcmp(f->visibility, "public")) f->visibility = NULL;
}

/* Makes e->it/e->cpu for a static entry: with a pipeline, on a private copy
 * of the module re-parsed from its text (the caller's module is never
 * rewritten by a pipeline, so executables with other options can share
 * it); without one, on the module itself, legalized in place once. Call
 * with m->lock held. */
static hlo_status prepare_static(hlo_executable *e, hlo_module *m) {
  if (e->passes) {
    if (!m->ir->source.text)
      return status_new(HLO_UNIMPLEMENTED, "a pass pipeline needs the module's text, and this "
                        "module has none");
    return compile_cached(e, NULL, NULL, 0, &e->own_ir, &e->entry, &e->it, &e->cpu);
  }
  if (!m->legalized) {
    hlo_status st = pass_chlo_legalize(m->ir);
    if (st) return status_note(st, "while legalizing chlo ops");
    m->legalized = true;
    /* The module may have been numbered already (a pass pipeline renumbers at its end),
     * and interp_create keeps an existing numbering: number the new ops too. */
    for (hlo_func *g = m->ir->funcs; g; g = g->next) func_number_values(g);
  }
  return make_runners(e, m->ir, e->entry, NULL, &e->it, &e->cpu);
}

static void executable_free(hlo_executable *e) {
  hlo_status_free(tier_join(e)); /* the background compile, so the cache gets its entry */
  hlo_status_free(e->tier_error);
  cpu_exec_destroy(e->cpu);
  interp_destroy(e->cpu_it);
  interp_destroy(e->it);
  for (shape_spec *s = e->specs, *n; s; s = n) {
    n = s->next;
    spec_free(s);
  }
  module_free(e->own_ir);
  pass_report_free(&e->report);
  free(e->passes);
  free(e->dump_dir);
  free(e->cache_dir_copy);
  free(e);
}

hlo_status runtime_executable_create_on(hlo_module *m, const char *entry,
                                        const hlo_compile_options *co,
                                        const interp_options *opts, hlo_executable **out) {
  *out = NULL;
  if (co->backend == HLO_BACKEND_CUDA) HLO_TRY(cuda_backend(NULL)); /* no driver: its error */
  else if (co->backend != HLO_BACKEND_INTERP && !runtime_backend(co->backend))
    return status_new(HLO_UNIMPLEMENTED, "backend %d is not available", (int)co->backend);
  const char *pipeline = pipeline_of(co);
  if (pipeline) HLO_TRY(pass_pipeline_check(pipeline));
  const hlo_func *f;
  HLO_TRY(find_entry(m, entry, &f));
  hlo_executable *e = xcalloc(1, sizeof *e);
  if (!e) return status_new(HLO_RESOURCE_EXHAUSTED, "out of memory");
  e->t0 = api_now_ms();
  e->tier_interp_ms = -1;
  e->native_ms = -1;
  e->module = m;
  e->entry = f;
  e->backend = co->backend;
  e->opts = *opts;
  e->check = co->check;
  e->passes = pipeline ? strdup(pipeline) : NULL;
  e->dump_dir = co->dump_dir ? strdup(co->dump_dir) : NULL;
  e->cache_opts = *co;
  e->cache_opts.passes = NULL;
  e->cache_dir_copy = co->cache_dir ? strdup(co->cache_dir) : NULL;
  e->cache_opts.cache_dir = e->cache_dir_copy;
  e->cache_opts.dump_dir = e->dump_dir;
  hlo_status st = NULL;
  if ((pipeline && !e->passes) || (co->dump_dir && !e->dump_dir) ||
      (co->cache_dir && !e->cache_dir_copy))
    st = status_new(HLO_RESOURCE_EXHAUSTED, "out of memory");
  if (!st && pthread_mutex_init(&e->lock, NULL) != 0)
    st = status_new(HLO_RESOURCE_EXHAUSTED, "cannot create a mutex");
  if (st) {
    executable_free(e);
    return st;
  }
  /* legalizing rewrites the module and interp_create numbers its values:
   * executables made from several threads take turns here */
  pthread_mutex_lock(&m->lock);
  e->dynamic = module_needs_refinement(m->ir, entry);
  /* dynamic: refined, optimised and compiled per input shapes at run time (shape_spec) */
  if (!e->dynamic) st = prepare_static(e, m);
  pthread_mutex_unlock(&m->lock);
  if (st) {
    pthread_mutex_destroy(&e->lock);
    executable_free(e);
    return st;
  }
  e->ready_ms = api_now_ms() - e->t0;
  if (!e->tiered) e->native_ms = e->ready_ms;
  *out = e;
  return NULL;
}

/* NULL `e` has no arguments and no results (as NULL buffers answer their
 * getters), rather than a crash. */
int hlo_executable_num_args(const hlo_executable *e) { return e ? (int)e->entry->num_args : 0; }
int hlo_executable_num_results(const hlo_executable *e) {
  return e ? (int)e->entry->num_results : 0;
}

hlo_status hlo_executable_arg_type(const hlo_executable *e, int i, hlo_dtype *out_dtype,
                                   int *out_rank, const int64_t **out_dims) {
  if (!e) return status_new(HLO_INVALID_ARGUMENT, "hlo_executable_arg_type: the executable is NULL");
  const hlo_func *f = e->entry;
  if (i < 0 || (uint32_t)i >= f->num_args)
    return status_new(HLO_OUT_OF_RANGE, "@%s has %u arguments; there is no argument %d", f->name,
                      f->num_args, i);
  const hlo_type *t = f->body.block.args[i].type;
  if (t->kind != TYPE_TENSOR || !type_is_static(t))
    return status_new(HLO_UNIMPLEMENTED, "argument %d of @%s is not a static tensor (a token, "
                      "a tuple, or a dynamic shape fixed only by the inputs of a run)", i, f->name);
  if (out_dtype) *out_dtype = t->dtype; /* each out-pointer may be NULL: not wanted */
  if (out_rank) *out_rank = (int)t->rank;
  if (out_dims) *out_dims = t->dims;
  return NULL;
}

const hlo_func *runtime_executable_entry(const hlo_executable *e) { return e->entry; }

const runtime_cpu_stats *runtime_executable_cpu_stats(const hlo_executable *e) {
  tier_wait_quietly(e);
  if (e && !e->cpu && e->specs && e->specs->cpu) return cpu_exec_stats(e->specs->cpu);
  return e && e->cpu ? cpu_exec_stats(e->cpu) : NULL;
}

static cpu_exec *current_cpu(const hlo_executable *e) {
  if (e && !e->cpu && e->specs && e->specs->cpu) return e->specs->cpu;
  return e ? e->cpu : NULL;
}

bool runtime_executable_profile(hlo_executable *e, bool on) {
  tier_wait_quietly(e);
  cpu_exec *x = current_cpu(e);
  if (x) cpu_exec_profile(x, on);
  return x != NULL;
}

void runtime_executable_profile_print(const hlo_executable *e, FILE *out, uint32_t max_rows) {
  tier_wait_quietly(e);
  cpu_exec *x = current_cpu(e);
  if (x) cpu_exec_profile_print(x, out, max_rows);
}

const hlo_module_ir *runtime_executable_module_ir(const hlo_executable *e) {
  if (!e) return NULL;
  if (e->dynamic) return e->specs ? e->specs->ir : NULL;
  return e->own_ir ? e->own_ir : e->module->ir;
}

hlo_status hlo_executable_cost_analysis(const hlo_executable *e, hlo_cost_analysis *out) {
  memset(out, 0, sizeof *out);
  const hlo_module_ir *ir = runtime_executable_module_ir(e);
  const hlo_func *f = e->dynamic ? (e->specs ? e->specs->entry : NULL) : e->entry;
  if (!ir || !f)
    return status_new(HLO_INVALID_ARGUMENT, "@%s has dynamic shapes: cost analysis counts the "
                      "shapes of a run, and it has not run yet", e->entry->name);
  cost_report r;
  HLO_TRY(cost_analysis(ir, f->name, &r));
  out->flops = r.total.flops;
  out->transcendentals = r.total.transcendentals;
  out->bytes_accessed = r.total.bytes_accessed;
  cost_report_free(&r);
  return NULL;
}

hlo_status hlo_executable_memory_analysis(const hlo_executable *e, hlo_memory_analysis *out) {
  memset(out, 0, sizeof *out);
  if (e && e->tiered) HLO_TRY(hlo_executable_wait((hlo_executable *)e)); /* the native code's */
  const runtime_cpu_stats *s = runtime_executable_cpu_stats(e);
  if (!s)
    return status_new(HLO_INVALID_ARGUMENT, "memory analysis: @%s %s", e->entry->name,
                      e->backend == HLO_BACKEND_INTERP
                          ? "runs on the interpreter, which allocates per op (compile for "
                            "HLO_BACKEND_CPU)"
                          : "has dynamic shapes and has not run yet");
  out->argument_bytes = s->arg_bytes;
  out->output_bytes = s->out_bytes;
  out->alias_bytes = 0;
  out->temp_bytes = s->temp_bytes;
  out->constant_bytes = s->const_bytes;
  out->peak_bytes = s->peak_bytes;
  return NULL;
}

const pass_report *runtime_executable_pass_report(const hlo_executable *e) {
  return e ? &e->report : NULL;
}

const char *runtime_executable_cache_result(const hlo_executable *e, double *out_ms) {
  if (out_ms) *out_ms = e ? e->cache_ms : 0;
  return e && e->cache_result ? e->cache_result : "off";
}

static void shape_str(char *buf, size_t n, hlo_dtype dt, int rank, const int64_t *dims) {
  size_t k = 0;
  k += (size_t)snprintf(buf + k, n - k, "tensor<");
  for (int i = 0; i < rank && k < n; i++) {
    if (dims[i] == HLO_DYN) k += (size_t)snprintf(buf + k, n - k, "?x");
    else k += (size_t)snprintf(buf + k, n - k, "%lldx", (long long)dims[i]);
  }
  if (k < n) snprintf(buf + k, n - k, "%s>", hlo_dtype_name(dt));
}

/* View v has tensor type t's element type, rank and every static dim (no
 * negative dim). */
static bool view_matches(const hlo_type *t, const hlo_buffer_view *v) {
  if ((unsigned)v->dtype >= HLO_DTYPE_COUNT || v->dtype != t->dtype || v->rank != (int)t->rank ||
      (!v->dims && v->rank != 0))
    return false;
  for (uint32_t d = 0; d < t->rank; d++)
    if (v->dims[d] < 0 || (t->dims[d] != HLO_DYN && t->dims[d] != v->dims[d])) return false;
  return true;
}

/* Checks host view `v` against parameter `i` of `f` (element type, rank,
 * and every static dim; a dynamic dim takes any size); a token parameter
 * takes a view of rank HLO_RANK_TOKEN. The error names the argument and the
 * dimension. */
static hlo_status arg_check_view(const hlo_func *f, uint32_t i, const hlo_buffer_view *v) {
  const hlo_value *a = &f->body.block.args[i];
  const hlo_type *t = a->type;
  if (t->kind == TYPE_TOKEN) {
    if (v->rank != HLO_RANK_TOKEN)
      return status_at(HLO_INVALID_ARGUMENT, &a->loc,
                       "argument %u of @%s is a !stablehlo.token: pass a view of rank "
                       "HLO_RANK_TOKEN (-1) for it", i, f->name);
    return NULL;
  }
  if (t->kind != TYPE_TENSOR)
    return status_at(HLO_UNIMPLEMENTED, &f->loc,
                     "argument %u of @%s is a tuple; pass tensors or tokens only", i, f->name);
  if (view_matches(t, v)) return NULL; /* every run's path: no text made */
  char want[256], got[256];
  if (t->rank <= 32) shape_str(want, sizeof want, t->dtype, (int)t->rank, t->dims);
  else snprintf(want, sizeof want, "a rank-%u tensor", t->rank);
  if (v->rank >= 0 && v->rank <= 32 && (v->dims || v->rank == 0) &&
      (unsigned)v->dtype < HLO_DTYPE_COUNT)
    shape_str(got, sizeof got, v->dtype, v->rank, v->dims);
  else
    snprintf(got, sizeof got, "an invalid buffer view");
  bool ok = (unsigned)v->dtype < HLO_DTYPE_COUNT && v->dtype == t->dtype &&
            v->rank == (int)t->rank && (v->dims || v->rank == 0);
  if (!ok)
    return status_at(HLO_INVALID_ARGUMENT, &a->loc, "argument %u of @%s expects %s, got %s", i,
                     f->name, want, got);
  for (uint32_t d = 0; d < t->rank; d++) {
    if (v->dims[d] < 0)
      return status_at(HLO_INVALID_ARGUMENT, &a->loc,
                       "argument %u of @%s: dimension %u of the input is %lld (%s)", i, f->name,
                       d, (long long)v->dims[d], got);
    if (t->dims[d] != HLO_DYN && t->dims[d] != v->dims[d])
      return status_at(HLO_INVALID_ARGUMENT, &a->loc,
                       "argument %u of @%s expects %s, got %s: dimension %u must be %lld, not "
                       "%lld", i, f->name, want, got, d, (long long)t->dims[d],
                       (long long)v->dims[d]);
  }
  return NULL;
}

/* Makes an interpreter value of parameter `i` of `f` (static by now) from a
 * host view, checking element type and shape. `borrow`: a tensor over the
 * view's data (16-byte aligned) instead of a copy (the CPU executable
 * never writes a borrowed tensor). */
static hlo_status arg_from_view(const hlo_func *f, uint32_t i, const hlo_buffer_view *v,
                                bool borrow, tensor **out) {
  const hlo_type *t = f->body.block.args[i].type;
  HLO_TRY(arg_check_view(f, i, v));
  if (!type_is_static(t))
    return status_at(HLO_INTERNAL, &f->body.block.args[i].loc,
                     "argument %u of @%s has a dynamic shape after refinement", i, f->name);
  tensor *x;
  if (borrow && v->data && ((uintptr_t)v->data & 15) == 0 && t->kind == TYPE_TENSOR) {
    x = tensor_wrap(t, v->data);
    *out = x;
    return x ? NULL : status_new(HLO_RESOURCE_EXHAUSTED, "out of memory");
  }
  HLO_TRY(tensor_create(t, &f->body.block.args[i].loc, &x));
  if (x->nbytes) {
    if (!v->data) {
      tensor_release(x);
      return status_new(HLO_INVALID_ARGUMENT, "argument %u has no data", i);
    }
    memcpy(x->data, v->data, x->nbytes);
  }
  *out = x;
  return NULL;
}

static hlo_status buffer_from_tensor(const tensor *x, hlo_buffer **out) {
  *out = NULL;
  const hlo_type *t = x->type;
  if (t->kind == TYPE_TOKEN) {
    hlo_buffer *b = xcalloc(1, sizeof *b);
    if (!b) return status_new(HLO_RESOURCE_EXHAUSTED, "out of memory");
    b->rank = HLO_RANK_TOKEN;
    *out = b;
    return NULL;
  }
  if (t->kind == TYPE_TUPLE) {
    /* a buffer of rank HLO_RANK_TUPLE owning one buffer per element */
    hlo_buffer *b = xcalloc(1, sizeof *b);
    hlo_buffer **el = xcalloc(x->num_tuple ? x->num_tuple : 1, sizeof *el);
    if (!b || !el) {
      free(b);
      free(el);
      return status_new(HLO_RESOURCE_EXHAUSTED, "out of memory");
    }
    b->rank = HLO_RANK_TUPLE;
    b->elems = el;
    b->num_elems = (int)x->num_tuple;
    for (uint32_t i = 0; i < x->num_tuple; i++) {
      hlo_status st = buffer_from_tensor(x->tuple[i], &el[i]);
      if (st) {
        hlo_buffer_destroy(b);
        return status_note(st, "in element %u of a tuple result", i);
      }
    }
    *out = b;
    return NULL;
  }
  if (t->kind != TYPE_TENSOR)
    return status_new(HLO_UNIMPLEMENTED, "results of this kind are not supported by the C API");
  if (t->rank > HLO_MAX_RANK)
    return status_new(HLO_UNIMPLEMENTED, "result of rank %u is over the C API's %d", t->rank,
                      HLO_MAX_RANK);
  hlo_buffer *b = xcalloc(1, sizeof *b);
  if (!b) return status_new(HLO_RESOURCE_EXHAUSTED, "out of memory");
  b->dtype = t->dtype;
  b->rank = (int)t->rank;
  for (uint32_t d = 0; d < t->rank; d++) b->dims[d] = t->dims[d];
  b->nbytes = x->nbytes;
  if (x->device) {
    tensor *mx = (tensor *)x;
    if (__atomic_load_n(&x->refcount, __ATOMIC_ACQUIRE) == 1 && x->device->own) {
      /* a result left on the device: its device copy is handed over, with
       * its host mirror as room for a download */
      b->device = mx->device;
      mx->device = NULL;
      if (!mx->borrowed && mx->data) {
        b->data = mx->data;
        mx->data = NULL;
      } else {
        b->device->host_valid = false;
      }
      *out = b;
      return NULL;
    }
    /* shared, or a copy lent by someone else: the host bytes, below */
    void *host = mx->data;
    hlo_status st = device_fetch(mx->device, &host, x->nbytes);
    mx->data = host;
    if (st) {
      free(b);
      return st;
    }
  }
  /* a result tensor no one else holds: its data is handed over, not copied */
  if (__atomic_load_n(&x->refcount, __ATOMIC_ACQUIRE) == 1 && !x->borrowed && x->data) {
    b->data = x->data;
    ((tensor *)x)->data = NULL;
    *out = b;
    return NULL;
  }
  b->data = xmalloc(x->nbytes ? x->nbytes : 1);
  if (!b->data) {
    free(b);
    return status_new(HLO_RESOURCE_EXHAUSTED, "out of memory for a result of %zu bytes",
                      x->nbytes);
  }
  if (x->nbytes) memcpy(b->data, x->data, x->nbytes);
  *out = b;
  return NULL;
}

/* ------------------------------------------------- compiling */

/* The pipeline a compile runs: o->passes spelled out ("default", "cpu",
 * "cuda" or a list), the backend's own when NULL (cuda: PASS_PIPELINE_CUDA;
 * cpu, cpu-devmem: PASS_PIPELINE_CPU; the interpreter: none), none for ""
 * or "none". NULL: no pipeline. */
static const char *pipeline_of(const hlo_compile_options *o) {
  const char *p = o->passes;
  if (!p)
    return o->backend == HLO_BACKEND_INTERP  ? NULL
           : o->backend == HLO_BACKEND_CUDA ? PASS_PIPELINE_CUDA
                                            : PASS_PIPELINE_CPU;
  if (!*p || !strcmp(p, "none")) return NULL;
  if (!strcmp(p, "default")) return PASS_PIPELINE_DEFAULT;
  if (!strcmp(p, "cpu")) return PASS_PIPELINE_CPU;
  if (!strcmp(p, "cuda")) return PASS_PIPELINE_CUDA;
  return p;
}

/* Runs the executable's pipeline over `ir` (a private copy), then legalizes
 * what chlo is left (a user's list may lack chlo-legalize) and numbers the
 * values, so that the interpreter and the backends can take it. The report
 * replaces e->report. */
static hlo_status optimise_ir(hlo_executable *e, hlo_module_ir *ir) {
  hlo_status st = NULL;
  pass_report_free(&e->report);
  if (e->passes) {
    pass_pipeline_options po = {0};
    po.pipeline = e->passes;
    po.verify_each = true;
    po.dump_dir = e->dump_dir;
    st = pass_pipeline_run(ir, &po, &e->report);
  }
  if (!st) {
    st = pass_chlo_legalize(ir);
    if (st) status_note(st, "while legalizing chlo ops");
  }
  if (!st)
    for (hlo_func *g = ir->funcs; g; g = g->next) func_number_values(g);
  return st;
}

/* The compiled thunks of function `f` over interpreter `it` (e's backend,
 * dump folder, check and cache options: read only, so a background
 * compile may call it); `c` (may be NULL): a compilation cache hit whose
 * kernels are loaded. */
static hlo_status make_cpu(const hlo_executable *e, interp *it, const hlo_func *f,
                           const exec_cache *c, cpu_exec **out_cpu) {
  *out_cpu = NULL;
  cpu_exec_options o = {.dump_dir = e->dump_dir, .check = e->check,
                        .backend = runtime_backend(e->backend)};
  if (!o.backend) return status_new(HLO_UNAVAILABLE, "backend %d is not available", (int)e->backend);
  if (e->cache_opts.no_cache) o.cache_root = "off";
  else o.cache_root = e->cache_opts.cache_dir;
  o.num_objects = exec_cache_objects(c, &o.objects);
  return cpu_exec_create(it, f, &o, out_cpu);
}

/* The interpreter and (cpu) the compiled thunks of function `f` of `ir`;
 * `c` (may be NULL): a compilation cache hit whose kernels are loaded. */
static hlo_status make_runners(hlo_executable *e, hlo_module_ir *ir, const hlo_func *f,
                               const exec_cache *c, interp **out_it, cpu_exec **out_cpu) {
  *out_it = NULL;
  *out_cpu = NULL;
  HLO_TRY(interp_create(ir, &e->opts, out_it));
  if (e->backend == HLO_BACKEND_INTERP) return NULL;
  hlo_status st = make_cpu(e, *out_it, f, c, out_cpu);
  if (st) {
    interp_destroy(*out_it);
    *out_it = NULL;
  }
  return st;
}

/* --------------------------------------------------- tiered execution */

/* A tiered executable's background compile (tier_compile): what it reads
 * (lent by the executable, which joins it before freeing them) and what it
 * makes (taken over by tier_join). */
typedef struct tier_work {
  hlo_executable *e;    /* read only: options, module, t0 */
  hlo_module_ir *ir;    /* the optimised module (e->own_ir) */
  const hlo_func *f;    /* its entry function */
  exec_cache *c;        /* the compile's cache bookkeeping: ended by the thread */
  tier_job *job;
  double ready_ms;      /* from e->t0: the thread's start */
  /* made by the thread */
  interp *it;           /* the cpu_exec's own interpreter */
  cpu_exec *cpu;
  double cache_ms, native_ms;
} tier_work;

/* The thread's body: the native code over an interpreter of its own (the
 * caller's runs may interpret the same module meanwhile: both only read
 * it), then the cache entry (under the module's lock: the entry's op
 * locations read the caller's module, which a compile without a pipeline
 * legalizes in place under that lock). */
static hlo_status tier_compile(void *ctx) {
  tier_work *w = ctx;
  const hlo_executable *e = w->e;
  double t = api_now_ms();
  hlo_status st = interp_create(w->ir, &e->opts, &w->it);
  if (!st) st = make_cpu(e, w->it, w->f, NULL, &w->cpu);
  if (!st) {
    const runtime_cpu_stats *cs = cpu_exec_stats(w->cpu);
    exec_cache_stage(w->c, "lower", cs->lower_ms);
    exec_cache_stage(w->c, "cc", cs->cc_ms);
    exec_cache_stage(w->c, "prepare", api_now_ms() - t - cs->compile_ms);
    pthread_mutex_lock(&e->module->lock);
    exec_cache_store(w->c, w->ir, w->cpu);
    pthread_mutex_unlock(&e->module->lock);
  }
  exec_cache_result(w->c, &w->cache_ms);
  exec_cache_end(w->c, !st);
  w->c = NULL;
  w->native_ms = api_now_ms() - e->t0;
  if (tier_log_compiles(&e->cache_opts)) {
    const char *mod = e->module->ir->name;
    fprintf(stderr, "hlo: compile @%s (module %s): tiered: ready in %.1f ms, native %s in %.1f ms\n",
            w->f->name, mod && *mod ? mod : "-", w->ready_ms, st ? "failed" : "loaded",
            w->native_ms);
  }
  return st;
}

/* Whether this compile (a miss of the static entry's, about to make the
 * native code of optimised module `ir`) tiers: HLO_BACKEND_CPU, no check
 * or dumps, tiering on, a program without side effects, and a C compiler
 * that can be started (else the compile runs here and gives its error, as
 * without tiering). */
static bool tier_eligible(const hlo_executable *e, const hlo_module_ir *ir, bool is_static) {
  if (!is_static || e->backend != HLO_BACKEND_CPU || e->check || e->dump_dir) return false;
  if (!tier_enabled(&e->cache_opts) || !tier_program_ok(ir)) return false;
  hlo_status st = tier_check_compiler();
  if (!st) return true;
  hlo_status_free(st);
  return false;
}

/* Starts e's background compile of `f` of `ir`, handing it `c`. */
static hlo_status tier_start(hlo_executable *e, hlo_module_ir *ir, const hlo_func *f,
                             exec_cache *c) {
  tier_work *w = xcalloc(1, sizeof *w);
  if (!w) return status_new(HLO_RESOURCE_EXHAUSTED, "out of memory");
  w->e = e;
  w->ir = ir;
  w->f = f;
  w->c = c;
  e->tier_cc_ms = tier_estimate_compile_ms(f);
  e->bg_t0 = api_now_ms();
  w->ready_ms = e->bg_t0 - e->t0;
  hlo_status st = tier_job_start(tier_compile, w, &e->tier_done, &w->job);
  if (st) {
    free(w);
    return st;
  }
  e->tiered = true;
  e->job = w;
  return NULL;
}

/* Waits for e's background compile (if still not joined) and takes its
 * results over; returns its error (yours). Call under e->lock, or when no
 * run can start (executable_free). */
static hlo_status tier_join(hlo_executable *e) {
  tier_work *w = e->job;
  if (!w) return NULL;
  e->job = NULL;
  hlo_status st = tier_job_join(w->job);
  if (st) {
    cpu_exec_destroy(w->cpu);
    interp_destroy(w->it);
  } else {
    e->cpu = w->cpu;
    e->cpu_it = w->it;
  }
  e->cache_ms = w->cache_ms;
  e->native_ms = w->native_ms;
  free(w);
  return st;
}

/* Under e->lock: joins the background compile (waiting for it) and returns
 * a copy of its error, if any (kept for every later run and wait). */
static hlo_status tier_settle(hlo_executable *e) {
  if (e->job) {
    hlo_status st = tier_join(e);
    if (st) e->tier_error = st;
  }
  return e->tier_error ? tier_status_copy(e->tier_error, &e->module->ir->source) : NULL;
}

/* Under e->lock, for a run of tiered executable e: *out_cpu the native
 * code when it is loaded or the background compile is over (joined), or
 * NULL when this run is to be interpreted (tier_should_interpret against
 * the compile still to go); else waits for the native code. Errors: the
 * background compile's. */
static hlo_status tier_pick(hlo_executable *e, cpu_exec **out_cpu) {
  *out_cpu = NULL;
  if (e->job && !__atomic_load_n(&e->tier_done, __ATOMIC_ACQUIRE)) {
    if (e->tier_interp_ms == -1) /* once, at the first run that finds the code pending */
      e->tier_interp_ms = tier_estimate_interp_ms(e->own_ir, e->entry->name);
    if (e->tier_interp_ms == -1) e->tier_interp_ms = -2; /* unknown: not asked again */
    if (tier_should_interpret(e->tier_interp_ms < 0 ? -1 : e->tier_interp_ms, e->tier_cc_ms,
                              api_now_ms() - e->bg_t0))
      return NULL;
  }
  HLO_TRY(tier_settle(e));
  *out_cpu = e->cpu;
  return NULL;
}

/* Waits for a tiered executable's native code, for the accessors of what
 * the compile made (its error stays for hlo_executable_wait and the runs). */
static void tier_wait_quietly(const hlo_executable *ce) {
  hlo_executable *e = (hlo_executable *)ce;  /* the lock and the join are not e's value */
  if (!e || !e->tiered) return;
  pthread_mutex_lock(&e->lock);
  if (e->job) {
    hlo_status st = tier_join(e);
    if (st) e->tier_error = st;
  }
  pthread_mutex_unlock(&e->lock);
}

hlo_status hlo_executable_wait(hlo_executable *e) {
  if (!e) return status_new(HLO_INVALID_ARGUMENT, "hlo_executable_wait: the executable is NULL");
  if (!e->tiered) return NULL;
  pthread_mutex_lock(&e->lock);
  hlo_status st = tier_settle(e);
  pthread_mutex_unlock(&e->lock);
  return st;
}

const char *runtime_executable_tier(const hlo_executable *e) {
  if (!e) return "interp";
  if (e->tiered) {
    if (e->job) return __atomic_load_n(&e->tier_done, __ATOMIC_ACQUIRE) ? "ready" : "pending";
    return e->tier_error ? "failed" : "native";
  }
  return current_cpu(e) ? "native" : "interp";
}

const char *runtime_executable_last_run_tier(const hlo_executable *e) {
  return e ? e->last_tier : NULL;
}

void runtime_executable_tier_runs(const hlo_executable *e, uint32_t *interpreted,
                                  uint32_t *cancelled) {
  if (interpreted) *interpreted = e ? e->runs_interp : 0;
  if (cancelled) *cancelled = e ? e->runs_cancelled : 0;
}

void runtime_executable_tier_ms(const hlo_executable *e, double *ready_ms, double *native_ms) {
  if (ready_ms) *ready_ms = e ? e->ready_ms : 0;
  if (native_ms) *native_ms = e ? e->native_ms : 0;
}

static double api_now_ms(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (double)ts.tv_sec * 1e3 + 1e-6 * (double)ts.tv_nsec;
}

/* Compiles the executable's entry through the pass pipeline, or loads it
 * from the compilation cache (executable_cache.h). `parsed`: the module to
 * optimise, already re-parsed (and, for a dynamic entry, refined to
 * arg_types[0..num_args)), taken; NULL: re-parse the caller's module here.
 * On success *out_ir (the optimised module, owned by the caller),
 * *out_entry, *out_it and *out_cpu are set. */
static hlo_status compile_cached(hlo_executable *e, hlo_module_ir *parsed,
                                 hlo_type *const *arg_types, uint32_t num_args,
                                 hlo_module_ir **out_ir, const hlo_func **out_entry,
                                 interp **out_it, cpu_exec **out_cpu) {
  const hlo_module_ir *user = e->module->ir;
  const char *name = e->entry->name;
  exec_cache *c = NULL;
  exec_cache_request rq = {.co = &e->cache_opts, .user = user, .entry = name,
                           .passes = e->passes, .arg_types = arg_types, .num_args = num_args};
  rq.co = &e->cache_opts;
  e->cache_opts.backend = e->backend;
  hlo_status st = exec_cache_begin(&rq, &c);
  if (st) {
    module_free(parsed);
    return st;
  }
  hlo_module_ir *ir = NULL;
  if (exec_cache_load(c, &ir)) {
    const hlo_func *f = module_entry(ir, name);
    double t = api_now_ms();
    st = make_runners(e, ir, f, c, out_it, out_cpu);
    if (!st) {
      const runtime_cpu_stats *cs = cpu_exec_stats(*out_cpu);
      exec_cache_stage(c, "lower", cs ? cs->lower_ms : 0);
      exec_cache_stage(c, "cc", cs ? cs->cc_ms : 0);
      exec_cache_stage(c, "prepare", api_now_ms() - t - (cs ? cs->compile_ms : 0));
      module_free(parsed);
      *out_ir = ir;
      *out_entry = f;
      e->cache_result = exec_cache_result(c, &e->cache_ms);
      exec_cache_end(c, true);
      return NULL;
    }
    exec_cache_reject(c, hlo_status_message(st));
    hlo_status_free(st);
    st = NULL;
    module_free(ir);
  }
  /* a miss: the pipeline */
  ir = parsed;
  if (!ir) st = parse_module(&user->source, 0, user->source.len, &ir);
  hlo_func *own = st ? NULL : (hlo_func *)module_entry(ir, name);
  if (!st && !own)
    st = status_new(HLO_INTERNAL, "@%s is missing from the re-parsed module", name);
  /* the entry is what the caller runs: a private one must survive the
   * passes that drop functions nothing calls */
  if (!st) keep_entry(own);
  double t = api_now_ms();
  if (!st) st = optimise_ir(e, ir);
  exec_cache_stage(c, "passes", api_now_ms() - t);
  const hlo_func *f = st ? NULL : module_entry(ir, name);
  if (!st && !f) st = status_at(HLO_INTERNAL, &own->loc, "@%s is gone after the pass pipeline", name);
  t = api_now_ms();
  if (!st && tier_eligible(e, ir, arg_types == NULL)) {
    /* tiered: the interpreter now, the native code in the background */
    st = interp_create(ir, &e->opts, out_it);
    if (!st) {
      interp_set_cancel(*out_it, &e->tier_done);
      e->cache_result = exec_cache_result(c, &e->cache_ms);
      hlo_status ts = tier_start(e, ir, f, c);  /* takes c */
      if (!ts) {
        *out_ir = ir;
        *out_entry = f;
        return NULL;
      }
      hlo_status_free(ts); /* no thread: compiled here */
      interp_destroy(*out_it);
      *out_it = NULL;
    }
  }
  if (!st) st = make_runners(e, ir, f, NULL, out_it, out_cpu);
  if (!st && *out_cpu) {
    const runtime_cpu_stats *cs = cpu_exec_stats(*out_cpu);
    exec_cache_stage(c, "lower", cs->lower_ms);
    exec_cache_stage(c, "cc", cs->cc_ms);
    exec_cache_stage(c, "prepare", api_now_ms() - t - cs->compile_ms);
    exec_cache_store(c, ir, *out_cpu);
  }
  e->cache_result = exec_cache_result(c, &e->cache_ms);
  exec_cache_end(c, !st);
  if (st) {
    module_free(ir);
    return st;
  }
  *out_ir = ir;
  *out_entry = f;
  return NULL;
}

/* ------------------------------------------------- dynamic shapes */

static void spec_free(shape_spec *s) {
  if (!s) return;
  cpu_exec_destroy(s->cpu);
  interp_destroy(s->it);
  module_free(s->ir);
  free(s->sig);
  free(s);
}

/* The shape signature of a run: per argument its rank (-1: token) and dims,
 * from views (`v`) or from interpreter values (`x`). NULL on OOM. */
static int64_t *make_sig(const hlo_buffer_view *v, tensor *const *x, uint32_t n, size_t *out_n) {
  size_t k = 0;
  for (uint32_t i = 0; i < n; i++) {
    int rank = v ? v[i].rank : (x[i]->type->kind == TYPE_TENSOR ? (int)x[i]->type->rank : -1);
    k += 1 + (size_t)(rank > 0 ? rank : 0);
  }
  int64_t *sig = xmalloc((k ? k : 1) * sizeof *sig);
  if (!sig) return NULL;
  k = 0;
  for (uint32_t i = 0; i < n; i++) {
    int rank = v ? v[i].rank : (x[i]->type->kind == TYPE_TENSOR ? (int)x[i]->type->rank : -1);
    sig[k++] = rank;
    for (int d = 0; d < rank; d++) sig[k++] = v ? v[i].dims[d] : x[i]->type->dims[d];
  }
  *out_n = k;
  return sig;
}

/* Re-parses the module and refines it for the argument shapes of `sig`
 * (element types from the views or values, to let the pass name a misfit). */
static hlo_status spec_create(hlo_executable *e, const hlo_buffer_view *v, tensor *const *x,
                              int64_t *sig, size_t nsig, shape_spec **out) {
  *out = NULL;
  const hlo_module_ir *src = e->module->ir;
  const hlo_func *f = e->entry;
  shape_spec *s = xcalloc(1, sizeof *s);
  hlo_type **types = xcalloc(f->num_args ? f->num_args : 1, sizeof *types);
  hlo_status st = NULL;
  if (!s || !types) st = status_new(HLO_RESOURCE_EXHAUSTED, "out of memory");
  if (!st) st = parse_module(&src->source, 0, src->source.len, &s->ir);
  for (uint32_t i = 0; i < f->num_args && !st; i++) {
    if (v) {
      if (v[i].rank == HLO_RANK_TOKEN) { types[i] = type_token(&s->ir->arena); }
      else if (v[i].rank < 0 || v[i].rank > HLO_MAX_RANK || (v[i].rank && !v[i].dims) ||
               (unsigned)v[i].dtype >= HLO_DTYPE_COUNT)
        st = status_at(HLO_INVALID_ARGUMENT, &f->body.block.args[i].loc,
                       "argument %u of @%s: an invalid buffer view", i, f->name);
      else types[i] = type_tensor(&s->ir->arena, v[i].dtype, (uint32_t)v[i].rank, v[i].dims);
    } else {
      types[i] = (hlo_type *)x[i]->type;
    }
    if (!st && !types[i]) st = status_new(HLO_RESOURCE_EXHAUSTED, "out of memory");
  }
  if (!st) st = pass_refine_shapes(s->ir, f->name, types, f->num_args);
  if (!st) {
    st = module_verify(s->ir);
    /* the inputs' sizes make the program inconsistent where refinement
     * did not check it (refinement itself names the inputs for the ops it
     * checks) */
    if (st) status_note(st, "after refining the shapes of @%s for the shapes of these inputs",
                        f->name);
  }
  if (!st && e->passes) {
    hlo_module_ir *refined = s->ir;
    s->ir = NULL;
    st = compile_cached(e, refined, types, f->num_args, &s->ir, &s->entry, &s->it, &s->cpu);
  } else if (!st) {
    st = optimise_ir(e, s->ir);
    if (!st) {
      s->entry = module_entry(s->ir, f->name);
      st = s->entry ? make_runners(e, s->ir, s->entry, NULL, &s->it, &s->cpu)
                    : status_new(HLO_INTERNAL, "@%s is gone after the pass pipeline", f->name);
    }
  }
  free(types);
  if (st) {
    free(sig);
    spec_free(s);
    return st;
  }
  s->sig = sig;
  s->nsig = nsig;
  *out = s;
  return NULL;
}

/* The interpreter and entry function to run for these inputs: the
 * executable's own, or (dynamic shapes) the specialization for the inputs'
 * shapes, made on first use and cached. Call with e->lock held. */
static hlo_status pick_target(hlo_executable *e, const hlo_buffer_view *v, tensor *const *x,
                              interp **out_it, const hlo_func **out_f, cpu_exec **out_cpu) {
  if (!e->dynamic) {
    *out_it = e->it;
    *out_f = e->entry;
    *out_cpu = e->cpu;
    return NULL;
  }
  size_t nsig;
  int64_t *sig = make_sig(v, x, e->entry->num_args, &nsig);
  if (!sig) return status_new(HLO_RESOURCE_EXHAUSTED, "out of memory");
  shape_spec **pp = &e->specs, *s = NULL;
  unsigned count = 0;
  for (; *pp; pp = &(*pp)->next, count++) {
    if ((*pp)->nsig == nsig && !memcmp((*pp)->sig, sig, nsig * sizeof *sig)) {
      s = *pp;
      *pp = s->next; /* moved to the front below */
      break;
    }
  }
  if (s) {
    free(sig);
  } else {
    HLO_TRY(spec_create(e, v, x, sig, nsig, &s));
    if (count >= MAX_SPECS) { /* full: drop the least recently used */
      shape_spec **q = &e->specs;
      while (*q && (*q)->next) q = &(*q)->next;
      spec_free(*q);
      *q = NULL;
    }
  }
  s->next = e->specs;
  e->specs = s;
  *out_it = s->it;
  *out_f = s->entry;
  *out_cpu = s->cpu;
  return NULL;
}

/* The executables this thread is running, outermost first (the first
 * RUN_DEPTH of them): a custom-call handler (hlo_custom_call_register)
 * that runs one of them again would wait on that executable's own lock for
 * ever. */
enum { RUN_DEPTH = 16 };
static _Thread_local const hlo_executable *tl_running[RUN_DEPTH];
static _Thread_local uint32_t tl_depth;

/* One run on the native code `cpu` or, when NULL, interpreter `it`; under
 * e->lock. An interpreted run of a tiered executable that the native code
 * cancelled (its arguments untouched: the interpreter never writes them)
 * runs again natively, or returns the background compile's error. */
static hlo_status run_on(hlo_executable *e, cpu_exec *cpu, interp *it, const hlo_func *f,
                         tensor *const *args, uint32_t n, tensor ***out) {
  hlo_status st;
  if (cpu) {
    st = cpu_exec_run(cpu, args, n, out);
  } else {
    st = interp_call(it, f, args, n, out);
    if (e->tiered) e->runs_interp++;
    if (st && e->tiered && interp_was_cancelled(it)) {
      e->runs_cancelled++;
      hlo_status_free(st);
      st = tier_settle(e);
      cpu = e->cpu;
      if (!st) st = cpu_exec_run(cpu, args, n, out);
    }
  }
  e->last_tier = cpu ? "native" : "interp";
  return st;
}

/* Takes e's lock for a run of this thread (exec_leave gives it back).
 * Errors: HLO_INVALID_ARGUMENT when this thread is already running e (a
 * handler calling back into the executable it runs in). */
static hlo_status exec_enter(hlo_executable *e) {
  for (uint32_t i = 0; i < tl_depth && i < RUN_DEPTH; i++)
    if (tl_running[i] == e)
      return status_new(HLO_INVALID_ARGUMENT,
                        "a custom-call handler ran the executable it was called from: the run "
                        "would wait for itself (run another executable, e.g. one compiled "
                        "from the same module)");
  pthread_mutex_lock(&e->lock);
  if (tl_depth < RUN_DEPTH) tl_running[tl_depth] = e;
  tl_depth++;
  return NULL;
}

static void exec_leave(hlo_executable *e) {
  if (tl_depth) tl_depth--;
  pthread_mutex_unlock(&e->lock);
}

hlo_status runtime_run_tensors(hlo_executable *e, tensor *const *args, uint32_t n,
                               tensor ***out) {
  const hlo_func *f = e->entry;
  if (n != f->num_args)
    return status_at(HLO_INVALID_ARGUMENT, &f->loc, "@%s takes %u arguments, got %u", f->name,
                     f->num_args, n);
  for (uint32_t i = 0; i < n; i++)
    if (!args[i])
      return status_at(HLO_INVALID_ARGUMENT, &f->loc, "argument %u of @%s is missing", i, f->name);
  HLO_TRY(exec_enter(e));
  interp *it;
  cpu_exec *cpu;
  hlo_status st = pick_target(e, NULL, args, &it, &f, &cpu);
  if (!st && e->tiered) st = tier_pick(e, &cpu);
  if (!st) st = run_on(e, cpu, it, f, args, n, out);
  exec_leave(e);
  return st;
}

/* tensor_device.release of a buffer's own device copy. */
static void release_device_copy(tensor_device *d) {
  const backend *be = d->backend;
  be->free(d->ptr);
  free(d);
}

/* tensor_device.release of a copy lent by a caller's buffer: the struct only. */
static void release_lent_copy(tensor_device *d) { free(d); }

/* Argument i of f from buffer b whose device copy is in the memory of the
 * backend the run uses: a tensor carrying that copy, lent (so the run reads
 * it in place), over b's host bytes when they are valid and aligned, else
 * over a host mirror left unwritten (room for a download if a host step
 * reads it: the tensor is marked not valid on the host, so nothing reads the
 * mirror before a download fills it; zeroing it cost a pass over every
 * device argument's bytes per run, 201 MB for llama_train_step). */
static hlo_status arg_from_device(const hlo_func *f, uint32_t i, const hlo_buffer_view *v,
                                  const hlo_buffer *b, tensor **out) {
  HLO_TRY(arg_check_view(f, i, v));
  const hlo_type *t = f->body.block.args[i].type;
  bool host = __atomic_load_n(&b->device->host_valid, __ATOMIC_ACQUIRE) && b->data &&
              ((uintptr_t)b->data & 15) == 0;
  tensor *x = NULL;
  if (host) {
    x = tensor_wrap(t, b->data);
    if (!x) return status_new(HLO_RESOURCE_EXHAUSTED, "out of memory");
  } else {
    HLO_TRY(tensor_create_uninit(t, &f->body.block.args[i].loc, &x));
  }
  x->device = xmalloc(sizeof *x->device);
  if (!x->device) {
    tensor_release(x);
    return status_new(HLO_RESOURCE_EXHAUSTED, "out of memory");
  }
  *x->device = (tensor_device){b->device->ptr, b->device->backend, host, false, release_lent_copy};
  *out = x;
  return NULL;
}

/* hlo_executable_run's body: args views, and when bufs is not NULL the
 * buffers they were made from (hlo_executable_run_buffers): a buffer on the
 * device of the run's backend is lent to the run, any other on a device is
 * fetched to the host first. */
static hlo_status run_views(hlo_executable *e, const hlo_buffer_view *args,
                            const hlo_buffer *const *given, int num_args,
                            hlo_buffer ***out_results) {
  *out_results = NULL;
  const hlo_func *f = e->entry;
  if (num_args < 0 || (uint32_t)num_args != f->num_args)
    return status_at(HLO_INVALID_ARGUMENT, &f->loc, "@%s takes %u arguments, got %d", f->name,
                     f->num_args, num_args);
  if (!args && num_args > 0)
    return status_new(HLO_INVALID_ARGUMENT, "@%s takes %u arguments, but the argument array is "
                      "NULL", f->name, f->num_args);
  tensor **in = xcalloc(f->num_args ? f->num_args : 1, sizeof *in);
  if (!in) return status_new(HLO_RESOURCE_EXHAUSTED, "out of memory");
  tensor **res = NULL;
  hlo_status st = exec_enter(e);
  if (st) {
    free(in);
    return st;
  }
  interp *it = NULL;
  cpu_exec *cpu = NULL;
  const hlo_func *run_f = f;
  if (e->dynamic) {
    /* the declared types first: a misfit names the argument and dimension */
    for (uint32_t i = 0; i < f->num_args && !st; i++) st = arg_check_view(f, i, &args[i]);
  }
  if (!st) st = pick_target(e, args, NULL, &it, &run_f, &cpu);
  if (!st && e->tiered) st = tier_pick(e, &cpu);
  const backend *dev_be = NULL;
  if (cpu && given) {
    dev_be = runtime_backend(e->backend);
    if (dev_be && !dev_be->device_memory) dev_be = NULL;
  }
  for (uint32_t i = 0; i < f->num_args && !st; i++) {
    const hlo_buffer *b = given ? given[i] : NULL;
    if (b && b->device && dev_be && b->device->backend == (const void *)dev_be) {
      st = arg_from_device(run_f, i, &args[i], b, &in[i]);
      continue;
    }
    hlo_buffer_view v = args[i];
    if (b && b->device) {
      st = hlo_buffer_fetch(b);
      v.data = b->data;
    }
    if (!st) st = arg_from_view(run_f, i, &v, cpu != NULL, &in[i]);
  }
  if (!st) st = run_on(e, cpu, it, run_f, in, f->num_args, &res);
  for (uint32_t i = 0; i < f->num_args; i++) tensor_release(in[i]);
  free(in);
  if (st) {
    exec_leave(e);
    return st;
  }
  /* Still under the lock: the results' types may live in a shape specialization's
   * arena, which another thread's run may evict (and free) once we unlock. */
  hlo_buffer **bufs = xcalloc(f->num_results ? f->num_results : 1, sizeof *bufs);
  if (!bufs) st = status_new(HLO_RESOURCE_EXHAUSTED, "out of memory");
  for (uint32_t i = 0; i < f->num_results && !st; i++) st = buffer_from_tensor(res[i], &bufs[i]);
  for (uint32_t i = 0; i < f->num_results; i++) tensor_release(res[i]);
  free(res);
  exec_leave(e);
  if (st) {
    for (uint32_t i = 0; bufs && i < f->num_results; i++) hlo_buffer_destroy(bufs[i]);
    free(bufs);
    return st;
  }
  *out_results = bufs;
  return NULL;
}

hlo_status hlo_executable_run(hlo_executable *e, const hlo_buffer_view *args, int num_args,
                              hlo_buffer ***out_results) {
  if (!e || !out_results)
    return status_new(HLO_INVALID_ARGUMENT, "run: a NULL %s", !e ? "executable" : "result pointer");
  return run_views(e, args, NULL, num_args, out_results);
}

hlo_status hlo_executable_run_buffers(hlo_executable *e, const hlo_buffer *const *args,
                                      int num_args, hlo_buffer ***out_results) {
  if (!e || !out_results)
    return status_new(HLO_INVALID_ARGUMENT, "run_buffers: a NULL %s",
                      !e ? "executable" : "result pointer");
  *out_results = NULL;
  const hlo_func *f = e->entry;
  if (num_args < 0 || (uint32_t)num_args != f->num_args)
    return status_at(HLO_INVALID_ARGUMENT, &f->loc, "@%s takes %u arguments, got %d", f->name,
                     f->num_args, num_args);
  if (!args && num_args > 0)
    return status_new(HLO_INVALID_ARGUMENT, "@%s takes %u arguments, but the argument array is "
                      "NULL", f->name, f->num_args);
  hlo_buffer_view *v = xcalloc(num_args ? (size_t)num_args : 1, sizeof *v);
  if (!v) return status_new(HLO_RESOURCE_EXHAUSTED, "out of memory");
  hlo_status st = NULL;
  for (int i = 0; i < num_args && !st; i++) {
    const hlo_buffer *b = args[i];
    if (!b)
      st = status_at(HLO_INVALID_ARGUMENT, &f->body.block.args[i].loc,
                     "argument %d of @%s is a NULL buffer", i, f->name);
    else if (b->rank == HLO_RANK_TUPLE)
      st = status_at(HLO_UNIMPLEMENTED, &f->body.block.args[i].loc,
                     "argument %d of @%s is a tuple buffer; pass tensors or tokens only", i,
                     f->name);
    else
      v[i] = (hlo_buffer_view){b->dtype, b->rank, b->dims, b->device ? NULL : b->data};
  }
  if (!st) st = run_views(e, v, args, num_args, out_results);
  free(v);
  return st;
}

hlo_status hlo_executable_device_put(hlo_executable *e, const hlo_buffer_view *v,
                                     hlo_buffer **out) {
  if (!e || !out)
    return status_new(HLO_INVALID_ARGUMENT, "device_put: a NULL %s",
                      !e ? "executable" : "result pointer");
  *out = NULL;
  if (v && v->rank == HLO_RANK_TOKEN) {  /* a token: no data anywhere */
    hlo_buffer *b = xcalloc(1, sizeof *b);
    if (!b) return status_new(HLO_RESOURCE_EXHAUSTED, "out of memory");
    b->rank = HLO_RANK_TOKEN;
    *out = b;
    return NULL;
  }
  if (!v || v->rank < 0 || v->rank > HLO_MAX_RANK || (unsigned)v->dtype >= HLO_DTYPE_COUNT ||
      (v->rank > 0 && !v->dims))
    return status_new(HLO_INVALID_ARGUMENT, "device_put: a view of rank 0..%d with a known "
                      "element type and dims is needed", HLO_MAX_RANK);
  size_t n = hlo_dtype_size(v->dtype);
  for (int d = 0; d < v->rank; d++) {
    if (v->dims[d] < 0)
      return status_new(HLO_INVALID_ARGUMENT, "device_put: dimension %d is %lld", d,
                        (long long)v->dims[d]);
    if (v->dims[d] && n > SIZE_MAX / (size_t)v->dims[d])
      return status_new(HLO_INVALID_ARGUMENT, "device_put: the array's byte size overflows");
    n *= (size_t)v->dims[d];
  }
  if (n && !v->data) return status_new(HLO_INVALID_ARGUMENT, "device_put: the view has no data");
  hlo_buffer *b = xcalloc(1, sizeof *b);
  if (!b) return status_new(HLO_RESOURCE_EXHAUSTED, "out of memory");
  b->dtype = v->dtype;
  b->rank = v->rank;
  for (int d = 0; d < v->rank; d++) b->dims[d] = v->dims[d];
  b->nbytes = n;
  const backend *be = runtime_backend(e->backend);
  if (!be || !be->device_memory) {
    b->data = xmalloc(n ? n : 1);
    if (!b->data) {
      free(b);
      return status_new(HLO_RESOURCE_EXHAUSTED, "out of memory for %zu bytes", n);
    }
    if (n) memcpy(b->data, v->data, n);
    *out = b;
    return NULL;
  }
  b->device = xcalloc(1, sizeof *b->device);
  void *p = b->device ? be->alloc(n) : NULL;
  if (!p) {
    free(b->device);
    free(b);
    return status_new(HLO_RESOURCE_EXHAUSTED, "out of %s memory for %zu bytes", be->name, n);
  }
  *b->device = (tensor_device){p, be, false, true, release_device_copy};
  hlo_status st = n ? be->copy(p, v->data, n) : NULL;
  if (st) {
    hlo_buffer_destroy(b);
    return st;
  }
  *out = b;
  return NULL;
}

void hlo_executable_destroy(hlo_executable *e) {
  if (!e) return;
  pthread_mutex_destroy(&e->lock);
  executable_free(e);
}
