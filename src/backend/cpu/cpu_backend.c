/* cpu_backend.c — the CPU backend's table (backend_cpu in backend.h):
 * kernels printed in the C dialect (emit_c.c), compiled and loaded by the
 * JIT (jit.c), launched over the process's thread pool
 * (support/thread_pool.h). Memory is host memory.
 *
 * Compile: kernels whose C text is the same but for the name are compiled
 * once (the module's later copies call the first one's function); the
 * distinct kernels are split into up to HLO_NUM_THREADS translation units,
 * each with the dialect's preamble, which the JIT compiles concurrently and
 * caches. The split minimises the estimated wall time of the compile: each
 * unit costs a fixed CPU_UNIT_COST (the compiler's start, the preamble, the
 * assembler and the link) plus its kernels' estimated compile times
 * (compile_cost: measured, bench/COMPILE.md), kernels go to units longest
 * first, each to the least loaded one, and one more unit is taken only
 * while it saves over 5% (a small module stays one unit: a second compiler
 * process would cost more than it saves).
 * Units whose object the caller gives (backend_compile_options.objects,
 * from the compilation cache) are loaded from those bytes instead
 * (cpu_jit_compile_with); module_objects hands back every unit's object,
 * and options.stats says where each came from.
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
#include <time.h>
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

/* The compile-time model, in tenths of a millisecond of gcc 12 -O2
 * -march=native CPU time (bench/COMPILE.md, "The cost model"): a unit's
 * fixed cost, and a kernel's from its C text. */
#ifndef CPU_UNIT_COST
#define CPU_UNIT_COST 300
#endif

static size_t count_of(const char *s, const char *what) {
  size_t n = 0, l = strlen(what);
  for (const char *p = strstr(s, what); p; p = strstr(p + l, what)) n++;
  return n;
}

/* A kernel's estimated compile time (see CPU_UNIT_COST) from its text: a
 * fixed part, a part per statement, and each inlined copy of the
 * preamble's vectorisable transcendentals (hlo_expf about 10 ms of gcc's
 * time, hlo_tanhf about 7). */
static int64_t compile_cost(const char *text) {
  return 40 + (int64_t)count_of(text, ";") * 9 / 2 + 100 * (int64_t)count_of(text, "hlo_expf(") +
         70 * (int64_t)count_of(text, "hlo_tanhf(");
}

/* The largest load of `units` bins after placing the weights w[order[0..n)]
 * (in that order, longest first) each into the least loaded bin; bin_of[i]
 * receives the bin of order[i] when not NULL. */
static int64_t place(const int64_t *w, const uint32_t *order, uint32_t n, uint32_t units,
                     uint32_t *bin_of) {
  int64_t load[64] = {0}, worst = 0;
  for (uint32_t i = 0; i < n; i++) {
    uint32_t b = 0;
    for (uint32_t u = 1; u < units; u++)
      if (load[u] < load[b]) b = u;
    load[b] += w[order[i]];
    if (bin_of) bin_of[i] = b;
  }
  for (uint32_t u = 0; u < units; u++)
    if (load[u] > worst) worst = load[u];
  return worst;
}

/* Splits the n distinct kernels (costs w[0..n)) into *out_units units:
 * unit_of[i] is kernel i's unit (see the top). */
static hlo_status split_units(const int64_t *w, uint32_t n, uint32_t *unit_of,
                              uint32_t *out_units) {
  *out_units = n ? 1 : 0;
  if (n < 2) {
    if (n) unit_of[0] = 0;
    return NULL;
  }
  uint32_t *order = malloc(n * sizeof *order), *bin = malloc(n * sizeof *bin);
  if (!order || !bin) {
    free(order), free(bin);
    return status_new(HLO_RESOURCE_EXHAUSTED, "out of memory");
  }
  for (uint32_t i = 0; i < n; i++) order[i] = i;
  for (uint32_t i = 1; i < n; i++) {  /* insertion sort, longest first, stable */
    uint32_t x = order[i], k = i;
    for (; k > 0 && w[order[k - 1]] < w[x]; k--) order[k] = order[k - 1];
    order[k] = x;
  }
  int64_t max_units = thread_pool_default_threads();
  if (max_units > 64) max_units = 64;
  if (max_units > n) max_units = n;
  uint32_t best = 1;
  int64_t best_time = CPU_UNIT_COST + place(w, order, n, 1, NULL);
  for (uint32_t u = 2; u <= (uint32_t)max_units; u++) {
    int64_t t = CPU_UNIT_COST + place(w, order, n, u, NULL);
    if (t * 20 < best_time * 19) best = u, best_time = t;
  }
  place(w, order, n, best, bin);
  /* units numbered by their first kernel, so the split reads in order */
  uint32_t renum[64], next = 0;
  for (uint32_t u = 0; u < 64; u++) renum[u] = UINT32_MAX;
  for (uint32_t i = 0; i < n; i++) unit_of[order[i]] = bin[i];
  for (uint32_t i = 0; i < n; i++) {
    if (renum[unit_of[i]] == UINT32_MAX) renum[unit_of[i]] = next++;
    unit_of[i] = renum[unit_of[i]];
  }
  free(order);
  free(bin);
  *out_units = best;
  return NULL;
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

static size_t count_lines(const char *s) {
  size_t n = 0;
  for (; *s; s++) n += *s == '\n';
  return n;
}

static double now_ms(void) {
  struct timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return (double)t.tv_sec * 1e3 + (double)t.tv_nsec / 1e6;
}

static hlo_status cpu_compile(const kernel *const *ks, uint32_t n,
                              const backend_compile_options *opts, backend_module **out) {
  *out = NULL;
  double t0 = now_ms();
  uint32_t cap = n ? n : 1, nunits = 0, nu = 0;
  backend_module *m = calloc(1, sizeof *m);
  strbuf *texts = calloc(cap, sizeof *texts), *srcs = calloc(cap, sizeof *srcs);
  uint32_t *uniq = calloc(cap, sizeof *uniq), *of_uniq = calloc(cap, sizeof *of_uniq);
  uint32_t *unit_of = calloc(cap, sizeof *unit_of), *pos = calloc(cap, sizeof *pos);
  uint32_t *first = calloc(cap + 1, sizeof *first), *lines = calloc(cap, sizeof *lines);
  int64_t *cost = calloc(cap, sizeof *cost);
  const char **names = calloc(cap, sizeof *names);
  const hlo_loc **locs = calloc(cap, sizeof *locs);
  cpu_kernel_fn *ufns = calloc(cap, sizeof *ufns);
  cpu_jit_unit *units = calloc(cap, sizeof *units);
  hlo_status st = NULL;
  if (m) {
    m->n = n;
    m->fns = calloc(cap, sizeof *m->fns);
    m->num_tiles = calloc(cap, sizeof *m->num_tiles);
    m->work = calloc(cap, sizeof *m->work);
  }
  if (!m || !texts || !srcs || !uniq || !of_uniq || !unit_of || !pos || !first || !lines ||
      !cost || !names || !locs || !ufns || !units || !m->fns || !m->num_tiles || !m->work)
    st = status_new(HLO_RESOURCE_EXHAUSTED, "out of memory");
  for (uint32_t i = 0; i < n && !st; i++) {
    m->num_tiles[i] = kernel_num_tiles(ks[i]);
    m->work[i] = work_of(ks[i]);
  }
  if (!st) st = dedup_kernels(ks, n, texts, uniq, of_uniq, &nu);
  for (uint32_t j = 0; j < nu && !st; j++) cost[j] = compile_cost(sb_cstr(&texts[uniq[j]]));
  if (!st) st = split_units(cost, nu, unit_of, &nunits);
  /* the distinct kernels ordered by unit (in order within one): position
     pos[p] is distinct kernel number pos[p]; unit u holds [first[u],
     first[u+1]) */
  uint32_t p = 0;
  for (uint32_t u = 0; u < nunits && !st; u++) {
    first[u] = p;
    for (uint32_t j = 0; j < nu; j++)
      if (unit_of[j] == u) pos[p++] = j;
  }
  if (!st) first[nunits] = p;
  for (uint32_t q = 0; q < p && !st; q++) {
    names[q] = ks[uniq[pos[q]]]->name;
    locs[q] = &ks[uniq[pos[q]]]->loc;
  }
  /* each unit: the preamble (cpu_emit_source of no kernel), then its
     kernels, as cpu_emit_source prints them */
  strbuf all;
  sb_init(&all);
  for (uint32_t u = 0; u < nunits && !st; u++) {
    st = cpu_emit_source(NULL, 0, &srcs[u]);
    size_t line = srcs[u].oom ? 0 : count_lines(sb_cstr(&srcs[u]));
    for (uint32_t q = first[u]; q < first[u + 1] && !st; q++) {
      const char *text = sb_cstr(&texts[uniq[pos[q]]]);
      sb_putc(&srcs[u], '\n');
      lines[q] = (uint32_t)line + 2;  /* after the blank line */
      line += 1 + count_lines(text);
      sb_puts(&srcs[u], text);
    }
    if (!st && srcs[u].oom) st = status_new(HLO_RESOURCE_EXHAUSTED, "out of memory");
    units[u] = (cpu_jit_unit){.source = sb_cstr(&srcs[u]), .names = names + first[u],
                              .n = first[u + 1] - first[u], .fns = ufns + first[u],
                              .locs = locs + first[u], .lines = lines + first[u]};
    sb_puts(&all, units[u].source);
  }
  if (!st) {
    m->source = sb_take(&all);
    if (!m->source) st = status_new(HLO_RESOURCE_EXHAUSTED, "out of memory");
  }
  double emit_ms = now_ms() - t0;
  if (!st) st = cpu_jit_compile_with(units, nunits, opts, &m->jit);
  if (!st && opts && opts->stats) opts->stats->emit_ms = emit_ms;
  /* distinct kernel j sits at the position q with pos[q] == j */
  for (uint32_t q = 0; q < p && !st; q++) unit_of[pos[q]] = q;
  for (uint32_t i = 0; i < n && !st; i++) m->fns[i] = ufns[unit_of[of_uniq[i]]];
  sb_free(&all);
  for (uint32_t i = 0; texts && i < n; i++) sb_free(&texts[i]);
  for (uint32_t u = 0; srcs && u < nunits; u++) sb_free(&srcs[u]);
  free(texts);
  free(srcs);
  free(uniq);
  free(of_uniq);
  free(unit_of);
  free(pos);
  free(first);
  free(lines);
  free(cost);
  free(names);
  free(locs);
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

static uint32_t cpu_module_objects(const backend_module *m, const backend_object **out) {
  return cpu_jit_objects(m ? m->jit : NULL, out);
}

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

static const char *cpu_target(const backend_compile_options *o) {
  return cpu_jit_target_with(o);
}

static const backend cpu_backend = {
    .name = "cpu",
    .compile = cpu_compile,
    .module_source = cpu_module_source,
    .launch = cpu_launch,
    .launch_tiles = cpu_launch_tiles,
    .module_destroy = cpu_module_destroy,
    .module_objects = cpu_module_objects,
    .target = cpu_target,
    .alloc = cpu_alloc,
    .free = cpu_free,
    .copy = cpu_copy,
    .synchronize = cpu_synchronize,
    .gemm = cpu_gemm,
    .gemm_epilogue = cpu_gemm_epilogue,
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
