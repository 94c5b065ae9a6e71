/* cpu_backend.c — the CPU backend's table (backend_cpu in backend.h):
 * kernels printed in the C dialect (emit_c.c), compiled and loaded by the
 * JIT (jit.c), launched over the process's thread pool
 * (support/thread_pool.h). Memory is host memory.
 *
 * Compile: kernels whose C text is the same but for the name are compiled
 * once (the module's later copies call the first one's function); the
 * distinct kernels are split into up to HLO_NUM_THREADS translation units
 * (contiguous runs of kernels of about equal size, each with the dialect's
 * preamble; a module too small to pay for a second compiler process stays
 * one unit), which the JIT compiles concurrently and caches.
 *
 * Launch: a kernel's tile index space [0, kernel_num_tiles) is spread over
 * the pool in contiguous chunks (the caller takes part); a kernel of less
 * than CPU_PARALLEL_MIN_WORK points of work, or of one tile, runs inline on
 * the calling thread, as the hand-off costs more than it saves there
 * (bench/THREADS.md has the measurements). Kernels never run while a BLAS
 * call does (the thunks run in sequence) and the pool's workers sleep
 * between kernels, so the pool and a threaded BLAS do not oversubscribe the
 * cores. */
#include <stdlib.h>
#include <string.h>
#include "backend/cpu/conv.h"
#include "backend/cpu/cpu.h"
#include "backend/cpu/sort.h"
#include "backend/cpu/window.h"
#include "support/thread_pool.h"

/* The work below which a kernel runs inline: index-space points (output
 * elements, times the row length for a reduction), weighted by the body's
 * size (see work_of). */
#ifndef CPU_PARALLEL_MIN_WORK
#define CPU_PARALLEL_MIN_WORK (128 * 1024)
#endif
/* The least total body size (instructions, see unit_weight) worth a
 * translation unit of its own. */
#ifndef CPU_MIN_UNIT_WEIGHT
#define CPU_MIN_UNIT_WEIGHT 150
#endif

struct backend_module {
  cpu_jit *jit;
  char *source;
  uint32_t n;
  cpu_kernel_fn *fns;
  int64_t *num_tiles;
  int64_t *work;
};

static void cpu_module_destroy(backend_module *m) {
  if (!m) return;
  cpu_jit_destroy(m->jit);
  free(m->source);
  free(m->fns);
  free(m->num_tiles);
  free(m->work);
  free(m);
}

/* A kernel's work for the inline-or-threads choice: its index-space points
 * times (1 + body instructions / 8), so a long body (transcendentals, many
 * ops) is threaded at fewer points than a plain copy. */
static int64_t work_of(const kernel *k) {
  int64_t pts = 1;
  for (uint32_t d = 0; d < k->rank; d++) {
    if (k->dims[d] > 0 && pts > INT64_MAX / 4 / k->dims[d]) return INT64_MAX / 4;
    pts *= k->dims[d];
  }
  return pts * (1 + (int64_t)(k->num_body + k->num_comb) / 8);
}

/* A kernel's share of the compiler's time, roughly: a fixed part plus its
 * instructions. */
static int64_t unit_weight(const kernel *k) {
  return 8 + k->num_body + k->num_comb + k->num_inputs + k->num_outputs;
}

/* Splits the kernels ks[idx[0..n)] into `*out_units` contiguous groups of
 * about equal weight: first[u] is the first position of group u,
 * first[units] = n. */
static void split_units(const kernel *const *ks, const uint32_t *idx, uint32_t n,
                        uint32_t *first, uint32_t *out_units) {
  int64_t total = 0;
  for (uint32_t i = 0; i < n; i++) total += unit_weight(ks[idx[i]]);
  int64_t units = thread_pool_default_threads();
  if (units > total / CPU_MIN_UNIT_WEIGHT) units = total / CPU_MIN_UNIT_WEIGHT;
  if (units > n) units = n;
  if (units < 1) units = 1;
  uint32_t u = 0;
  int64_t acc = 0;
  first[0] = 0;
  for (uint32_t i = 0; i < n; i++) {
    /* start group u+1 when the weight so far reaches its share, keeping at
       least one kernel for each group still to come */
    if (u + 1 < units && i > first[u] && acc * units >= total * (u + 1) &&
        n - i >= (uint32_t)(units - u - 1)) {
      first[++u] = i;
    }
    acc += unit_weight(ks[idx[i]]);
  }
  first[u + 1] = n;
  *out_units = n ? u + 1 : 0;
}

/* The text of a kernel after its name (from its parameter list on): two
 * kernels whose texts agree there are the same function. */
static const char *after_name(strbuf *t) {
  const char *s = sb_cstr(t), *p = strchr(s, '(');
  return p ? p : s;
}

static uint64_t fnv1a(const char *s) {
  uint64_t h = 1469598103934665603ull;
  for (; *s; s++) h = (h ^ (unsigned char)*s) * 1099511628211ull;
  return h;
}

/* Emits every kernel once (texts[i]) and finds the distinct ones: uniq[0..
 * *out_nu) are the indices of the first kernel of each distinct text, in
 * order, and of_uniq[i] the position in uniq of kernel i's text. Training
 * steps repeat their layers' kernels (tiny_llama_train_step: 286 kernels,
 * 138 distinct), so each distinct text is compiled once. */
static hlo_status dedup_kernels(const kernel *const *ks, uint32_t n, strbuf *texts,
                                uint32_t *uniq, uint32_t *of_uniq, uint32_t *out_nu) {
  const cstyle_dialect *d = cpu_c_dialect();
  for (uint32_t i = 0; i < n; i++) {
    HLO_TRY(cstyle_emit_kernel(d, ks[i], &texts[i]));
    if (texts[i].oom) return status_new(HLO_RESOURCE_EXHAUSTED, "out of memory");
  }
  uint32_t cap = 16;
  while (cap < 2 * n) cap *= 2;
  uint32_t *slot = calloc(cap, sizeof *slot); /* position in uniq + 1, or 0 */
  if (!slot) return status_new(HLO_RESOURCE_EXHAUSTED, "out of memory");
  uint32_t nu = 0;
  for (uint32_t i = 0; i < n; i++) {
    const char *body = after_name(&texts[i]);
    uint32_t h = (uint32_t)fnv1a(body) & (cap - 1);
    while (slot[h] && strcmp(after_name(&texts[uniq[slot[h] - 1]]), body))
      h = (h + 1) & (cap - 1);
    if (!slot[h]) {
      uniq[nu++] = i;
      slot[h] = nu;
    }
    of_uniq[i] = slot[h] - 1;
  }
  free(slot);
  *out_nu = nu;
  return NULL;
}

static hlo_status cpu_compile(const kernel *const *ks, uint32_t n,
                              const backend_compile_options *opts, backend_module **out) {
  *out = NULL;
  uint32_t cap = n ? n : 1, nunits = 0, nu = 0;
  backend_module *m = calloc(1, sizeof *m);
  strbuf *texts = calloc(cap, sizeof *texts), *srcs = calloc(cap, sizeof *srcs);
  uint32_t *uniq = calloc(cap, sizeof *uniq), *of_uniq = calloc(cap, sizeof *of_uniq);
  uint32_t *first = calloc(cap + 1, sizeof *first);
  const char **names = calloc(cap, sizeof *names);
  cpu_kernel_fn *ufns = calloc(cap, sizeof *ufns);
  cpu_jit_unit *units = calloc(cap, sizeof *units);
  hlo_status st = NULL;
  if (m) {
    m->n = n;
    m->fns = calloc(cap, sizeof *m->fns);
    m->num_tiles = calloc(cap, sizeof *m->num_tiles);
    m->work = calloc(cap, sizeof *m->work);
  }
  if (!m || !texts || !srcs || !uniq || !of_uniq || !first || !names || !ufns || !units ||
      !m->fns || !m->num_tiles || !m->work)
    st = status_new(HLO_RESOURCE_EXHAUSTED, "out of memory");
  for (uint32_t i = 0; i < n && !st; i++) {
    m->num_tiles[i] = kernel_num_tiles(ks[i]);
    m->work[i] = work_of(ks[i]);
  }
  if (!st) st = dedup_kernels(ks, n, texts, uniq, of_uniq, &nu);
  for (uint32_t j = 0; j < nu && !st; j++) names[j] = ks[uniq[j]]->name;
  if (!st) split_units(ks, uniq, nu, first, &nunits);
  /* each unit: the preamble (cpu_emit_source of no kernel), then its
     kernels, as cpu_emit_source prints them */
  strbuf all;
  sb_init(&all);
  for (uint32_t u = 0; u < nunits && !st; u++) {
    st = cpu_emit_source(NULL, 0, &srcs[u]);
    for (uint32_t j = first[u]; j < first[u + 1] && !st; j++) {
      sb_putc(&srcs[u], '\n');
      sb_puts(&srcs[u], sb_cstr(&texts[uniq[j]]));
    }
    if (!st && srcs[u].oom) st = status_new(HLO_RESOURCE_EXHAUSTED, "out of memory");
    units[u] = (cpu_jit_unit){.source = sb_cstr(&srcs[u]), .names = names + first[u],
                              .n = first[u + 1] - first[u], .fns = ufns + first[u]};
    sb_puts(&all, units[u].source);
  }
  if (!st) {
    m->source = sb_take(&all);
    if (!m->source) st = status_new(HLO_RESOURCE_EXHAUSTED, "out of memory");
  }
  if (!st)
    st = cpu_jit_compile_units(units, nunits, opts ? opts->cc : NULL,
                               opts ? opts->dump_dir : NULL, &m->jit);
  for (uint32_t i = 0; i < n && !st; i++) m->fns[i] = ufns[of_uniq[i]];
  sb_free(&all);
  for (uint32_t i = 0; texts && i < n; i++) sb_free(&texts[i]);
  for (uint32_t u = 0; srcs && u < nunits; u++) sb_free(&srcs[u]);
  free(texts);
  free(srcs);
  free(uniq);
  free(of_uniq);
  free(first);
  free(names);
  free(ufns);
  free(units);
  if (st) {
    cpu_module_destroy(m);
    return st;
  }
  *out = m;
  return NULL;
}

static const char *cpu_module_source(const backend_module *m) { return m ? m->source : NULL; }

typedef struct launch_ctx {
  cpu_kernel_fn fn;
  void *const *bufs;
} launch_ctx;

static void run_tiles(void *ctx, int64_t begin, int64_t end) {
  const launch_ctx *c = ctx;
  c->fn(c->bufs, begin, end);
}

static hlo_status cpu_launch(backend_module *m, uint32_t index, void *const *bufs) {
  if (!m || index >= m->n)
    return status_new(HLO_INVALID_ARGUMENT, "launch: no kernel %u in the module", index);
  int64_t tiles = m->num_tiles[index];
  if (tiles < 2 || m->work[index] < CPU_PARALLEL_MIN_WORK) {
    m->fns[index](bufs, 0, tiles);
    return NULL;
  }
  launch_ctx c = {m->fns[index], bufs};
  thread_pool_parallel_for(thread_pool_global(), tiles, 0, run_tiles, &c);
  return NULL;
}

static void cpu_launch_tiles(backend_module *m, uint32_t index, void *const *bufs,
                             int64_t tile_begin, int64_t tile_end) {
  if (m && index < m->n && tile_begin < tile_end) m->fns[index](bufs, tile_begin, tile_end);
}

static void *cpu_alloc(size_t n) { return malloc(n ? n : 1); }
static void cpu_free(void *p) { free(p); }
static hlo_status cpu_copy(void *dst, const void *src, size_t n) {
  if (n) memmove(dst, src, n);
  return NULL;
}
static hlo_status cpu_synchronize(void) { return NULL; }

static const backend cpu_backend = {
    .name = "cpu",
    .compile = cpu_compile,
    .module_source = cpu_module_source,
    .launch = cpu_launch,
    .launch_tiles = cpu_launch_tiles,
    .module_destroy = cpu_module_destroy,
    .alloc = cpu_alloc,
    .free = cpu_free,
    .copy = cpu_copy,
    .synchronize = cpu_synchronize,
    .gemm = cpu_gemm,
    .conv = cpu_conv,
    .conv_takes = cpu_conv_takes,
    .conv_scratch_bytes = cpu_conv_scratch_bytes,
    .window_takes = cpu_window_takes,
    .reduce_window = cpu_reduce_window,
    .select_and_scatter = cpu_select_and_scatter,
    .sort_takes = cpu_sort_takes,
    .sort = cpu_sort,
};

const backend *backend_cpu(void) { return &cpu_backend; }
