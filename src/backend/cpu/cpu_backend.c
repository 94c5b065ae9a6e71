/* cpu_backend.c — the CPU backend's table (backend_cpu in backend.h):
 * kernels printed in the C dialect (emit_c.c), compiled and loaded by the
 * JIT (jit.c), launched on the calling thread over all their tiles (v0: the
 * thread pool over tile ranges comes next; the kernels already take a tile
 * range). Memory is host memory. */
#include <stdlib.h>
#include <string.h>
#include "backend/cpu/cpu.h"

struct backend_module {
  cpu_jit *jit;
  char *source;
  uint32_t n;
  cpu_kernel_fn *fns;
  int64_t *num_tiles;
};

static void cpu_module_destroy(backend_module *m) {
  if (!m) return;
  cpu_jit_destroy(m->jit);
  free(m->source);
  free(m->fns);
  free(m->num_tiles);
  free(m);
}

static hlo_status cpu_compile(const kernel *const *ks, uint32_t n,
                              const backend_compile_options *opts, backend_module **out) {
  *out = NULL;
  strbuf sb;
  sb_init(&sb);
  hlo_status st = cpu_emit_source(ks, n, &sb);
  backend_module *m = st ? NULL : calloc(1, sizeof *m);
  const char **names = st ? NULL : calloc(n ? n : 1, sizeof *names);
  if (!st && m) {
    m->n = n;
    m->fns = calloc(n ? n : 1, sizeof *m->fns);
    m->num_tiles = calloc(n ? n : 1, sizeof *m->num_tiles);
    m->source = sb_take(&sb);
  }
  if (!st && (!m || !names || !m->fns || !m->num_tiles || !m->source))
    st = status_new(HLO_RESOURCE_EXHAUSTED, "out of memory");
  for (uint32_t i = 0; i < n && !st; i++) {
    names[i] = ks[i]->name;
    m->num_tiles[i] = kernel_num_tiles(ks[i]);
  }
  if (!st)
    st = cpu_jit_compile(m->source, opts ? opts->cc : NULL, opts ? opts->dump_dir : NULL, names, n,
                         m->fns, &m->jit);
  free(names);
  sb_free(&sb);
  if (st) {
    cpu_module_destroy(m);
    return st;
  }
  *out = m;
  return NULL;
}

static const char *cpu_module_source(const backend_module *m) { return m ? m->source : NULL; }

static hlo_status cpu_launch(backend_module *m, uint32_t index, void *const *bufs) {
  if (!m || index >= m->n)
    return status_new(HLO_INVALID_ARGUMENT, "launch: no kernel %u in the module", index);
  m->fns[index](bufs, 0, m->num_tiles[index]);
  return NULL;
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
    .module_destroy = cpu_module_destroy,
    .alloc = cpu_alloc,
    .free = cpu_free,
    .copy = cpu_copy,
    .synchronize = cpu_synchronize,
    .gemm = cpu_gemm,
};

const backend *backend_cpu(void) { return &cpu_backend; }
