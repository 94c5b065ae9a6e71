/* aot_backend.c — the capturing backend of --emit=lib (aot_internal.h):
 * the CPU executable is compiled on it so that its kernels come back as C
 * source instead of a loaded shared object. */
#include "aot/aot_internal.h"
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include "backend/cpu/cpu.h"
#include "support/strbuf.h"

static cstyle_dialect dialect; /* the CPU's C dialect, kernels `static` */

static void fill_dialect(void) {
  dialect = *cpu_c_dialect();
  dialect.kernel_prefix = "static void";
}

static void aot_module_destroy(backend_module *m) {
  if (!m) return;
  free(m->source);
  for (uint32_t i = 0; m->names && i < m->n; i++) free(m->names[i]);
  free(m->names);
  free(m->tiles);
  free(m->points);
  free(m);
}

/* Prints ks[0..n) into a new module (nothing is compiled). Errors:
 * cstyle_emit_kernel's, HLO_RESOURCE_EXHAUSTED. */
static hlo_status aot_compile(const kernel *const *ks, uint32_t n,
                              const backend_compile_options *opts, backend_module **out) {
  (void)opts;
  static pthread_once_t once = PTHREAD_ONCE_INIT;
  pthread_once(&once, fill_dialect);
  *out = NULL;
  backend_module *m = calloc(1, sizeof *m);
  if (!m) return status_new(HLO_RESOURCE_EXHAUSTED, "out of memory");
  m->names = calloc(n ? n : 1, sizeof *m->names);
  m->tiles = calloc(n ? n : 1, sizeof *m->tiles);
  m->points = calloc(n ? n : 1, sizeof *m->points);
  if (!m->names || !m->tiles || !m->points) {
    aot_module_destroy(m);
    return status_new(HLO_RESOURCE_EXHAUSTED, "out of memory");
  }
  m->n = n;
  strbuf sb;
  sb_init(&sb);
  hlo_status st = NULL;
  for (uint32_t i = 0; i < n && !st; i++) {
    m->names[i] = strdup(ks[i]->name);
    m->tiles[i] = kernel_num_tiles(ks[i]);
    m->points[i] = 1;
    for (uint32_t d = 0; d < ks[i]->rank; d++) m->points[i] *= ks[i]->dims[d];
    if (!m->names[i]) st = status_new(HLO_RESOURCE_EXHAUSTED, "out of memory");
    if (!st) {
      sb_putc(&sb, '\n');
      st = cstyle_emit_kernel(&dialect, ks[i], &sb);
    }
  }
  m->source = sb_take(&sb);
  if (!st && !m->source) st = status_new(HLO_RESOURCE_EXHAUSTED, "out of memory");
  if (st) {
    aot_module_destroy(m);
    return st;
  }
  *out = m;
  return NULL;
}

static const char *aot_module_source(const backend_module *m) { return m ? m->source : NULL; }

static hlo_status aot_launch(backend_module *m, uint32_t index, void *const *bufs) {
  (void)m, (void)index, (void)bufs;
  return status_new(HLO_INTERNAL, "the --emit=lib backend runs nothing");
}

static hlo_status aot_gemm(const backend_gemm *g, const void *a, const void *b, void *c) {
  (void)g, (void)a, (void)b, (void)c;
  return status_new(HLO_INTERNAL, "the --emit=lib backend runs nothing");
}

static hlo_status aot_gemm_epilogue(const backend_gemm *g, const void *a, const void *b, void *c,
                                    const backend_gemm_epilogue *ep) {
  (void)g, (void)a, (void)b, (void)c, (void)ep;
  return status_new(HLO_INTERNAL, "the --emit=lib backend runs nothing");
}

static void aot_launch_tiles(backend_module *m, uint32_t index, void *const *bufs, int64_t tile_begin,
                             int64_t tile_end) {
  (void)m, (void)index, (void)bufs, (void)tile_begin, (void)tile_end;
}

/* The sorts --emit=lib prints (emit_lib.c, emit_sort): operands of 1 to
 * 16 bytes, keys that are whole elements (no complex parts) of an integer,
 * i1, f16, bf16, f32 or f64 type. */
static bool aot_sort_takes(const backend_sort *s) {
  if (!s || s->num_operands < 1 || s->num_operands > BACKEND_SORT_MAX_OPERANDS || s->nkeys < 1 ||
      s->nkeys > BACKEND_SORT_MAX_KEYS || s->rank < 1 || s->rank > BACKEND_SORT_MAX_RANK ||
      s->dimension >= s->rank)
    return false;
  for (uint32_t k = 0; k < s->num_operands; k++) {
    size_t n = hlo_dtype_size(s->dtypes[k]);
    if (n < 1 || n > 16) return false;
  }
  for (uint32_t k = 0; k < s->nkeys; k++) {
    const backend_sort_key *key = &s->keys[k];
    hlo_dtype t = key->dtype;
    bool fl = t == HLO_F32 || t == HLO_F64 || t == HLO_BF16 || t == HLO_F16;
    bool in = t == HLO_I1 || t == HLO_I8 || t == HLO_I16 || t == HLO_I32 || t == HLO_I64 ||
              t == HLO_UI8 || t == HLO_UI16 || t == HLO_UI32 || t == HLO_UI64;
    if (key->part != -1 || key->operand >= s->num_operands || key->ncanon > BACKEND_SORT_MAX_CANON ||
        (!fl && !in) || (key->ncanon && !fl) ||
        (fl && key->cmp != BACKEND_SORT_FLOAT && key->cmp != BACKEND_SORT_TOTALORDER) ||
        (in && key->cmp != BACKEND_SORT_SIGNED && key->cmp != BACKEND_SORT_UNSIGNED))
      return false;
  }
  return true;
}

static hlo_status aot_sort(const backend_sort *s, void *const *in, void *const *out) {
  (void)s, (void)in, (void)out;
  return status_new(HLO_INTERNAL, "the --emit=lib backend runs nothing");
}

/* The convolutions emit_lib.c prints: the direct loop (the interpreter's
 * sums in its order) on f32, f64, bf16 or f16 throughout. */
static bool aot_conv_takes(const backend_conv *c) {
  hlo_dtype t = c->result_dtype;
  return c->lhs_dtype == t && c->rhs_dtype == t &&
         (t == HLO_F32 || t == HLO_F64 || t == HLO_BF16 || t == HLO_F16) &&
         c->rank <= BACKEND_CONV_MAX_RANK;
}

static size_t aot_conv_scratch(const backend_conv *c) {
  (void)c;
  return 0;
}

static hlo_status aot_conv(const backend_conv *c, const void *l, const void *r, void *o, void *s) {
  (void)c, (void)l, (void)r, (void)o, (void)s;
  return status_new(HLO_INTERNAL, "the --emit=lib backend runs nothing");
}

/* The window ops emit_lib.c prints: f32, f64, i32 or i64, any reducer but
 * and / or on floats. */
static bool aot_window_takes(const backend_window *w) {
  bool fl = w->dtype == HLO_F32 || w->dtype == HLO_F64;
  bool in = w->dtype == HLO_I32 || w->dtype == HLO_I64;
  return (fl || in) && w->rank <= BACKEND_WINDOW_MAX_RANK &&
         !(fl && (w->reducer == BACKEND_REDUCER_AND || w->reducer == BACKEND_REDUCER_OR));
}

static hlo_status aot_reduce_window(const backend_window *w, void *const *in, void *const *out) {
  (void)w, (void)in, (void)out;
  return status_new(HLO_INTERNAL, "the --emit=lib backend runs nothing");
}

static hlo_status aot_select_and_scatter(const backend_window *w, const void *operand,
                                         const void *source, const void *init, void *output) {
  (void)w, (void)operand, (void)source, (void)init, (void)output;
  return status_new(HLO_INTERNAL, "the --emit=lib backend runs nothing");
}

static void *aot_alloc(size_t bytes) { return malloc(bytes ? bytes : 1); }

static hlo_status aot_copy(void *dst, const void *src, size_t n) {
  memcpy(dst, src, n);
  return NULL;
}

static hlo_status aot_sync(void) { return NULL; }

const backend *aot_backend(void) {
  static const backend be = {
      .name = "cpu-aot",
      .device_memory = false,
      .compile = aot_compile,
      .module_source = aot_module_source,
      .launch = aot_launch,
      .module_destroy = aot_module_destroy,
      .alloc = aot_alloc,
      .free = free,
      .copy = aot_copy,
      .synchronize = aot_sync,
      .gemm = aot_gemm,
      .gemm_epilogue = aot_gemm_epilogue,
      .launch_tiles = aot_launch_tiles,
      .sort_takes = aot_sort_takes,
      .sort = aot_sort,
      .conv = aot_conv,
      .conv_takes = aot_conv_takes,
      .conv_scratch_bytes = aot_conv_scratch,
      .window_takes = aot_window_takes,
      .reduce_window = aot_reduce_window,
      .select_and_scatter = aot_select_and_scatter,
  };
  return &be;
}
