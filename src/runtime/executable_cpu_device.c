/* executable_cpu_device.c — the executable on a backend whose buffers live
 * in memory of their own (backend.device_memory: a GPU, or the testing
 * backend cpu-devmem). The CPU path (device_memory false) never calls in
 * here: x->dev is NULL and every step runs on host buffers as before.
 *
 * Design. The executable keeps its host data structures as they are (the
 * host arena of program 0 with its regions' slices, heap tensors,
 * constants, the caller's arguments): on a device backend they are the
 * HOST MIRROR. Each piece of memory a device step touches also has a
 * device copy, and a validity state per piece (valid on the host, on the
 * device, or both), tracked by MEMORY, not by value name, so that the
 * runtime's aliasing (reshapes over their operand's bytes, in-place
 * kernels, a while body writing over its carried value, loop state slots)
 * needs no extra rule:
 *   - the arena: one device arena of the host arena's size and layout (a
 *     value at host offset o is at device offset o), with a state byte per
 *     64-byte granule (buffer assignment places slots at multiples of 64,
 *     so two live values never share a granule);
 *   - a tensor (argument, heap value, constant): an ENTRY {host data,
 *     bytes, device buffer, state}, made the first time a device step
 *     reads or writes it, holding a reference to the tensor so that its
 *     host memory (the entry's key) cannot be freed and reused while the
 *     entry lives. Entries are dropped once they hold the last reference
 *     (after each step), and all but the constants' at the end of a run.
 *     Constants are uploaded once, at compile time (pinned entries);
 *   - the allocation of a result of program 0 that holds temporaries
 *     before the result is written (x->result_homes: buffer assignment's
 *     place_in_results, XLA's reuse of live-out allocations; allocated
 *     when the run starts): one entry for the whole allocation, made at
 *     the first device step or host write touching any of it, whatever
 *     tensor (a loop's state slot) the runtime names there, and tracked as
 *     the arena is, per 64-byte granule (dev_entry.gran: buffer assignment
 *     gives no two buffers there one granule), so a temporary written on
 *     one side leaves the others where they are valid. Its device memory
 *     is the result's: in a deferred run a graph buffer like any result's
 *     (handed over, no copy), so the temporaries in it cost no allocation
 *     of their own and the pool's one-allocation-per-buffer rule holds.
 * A device step (kernel, gemm; conv, window, sort when the backend has
 * the slot; data movement — dynamic_slice, dynamic_update_slice, pad,
 * splat fills, row gather / scatter — when it has copy_box, fill_box,
 * gather_rows, scatter_rows, after downloading only the few bytes of start
 * indices or pad value — none for the start indices when the backend's
 * copy_box reads them on the device, dyn_box) takes device pointers: its inputs are uploaded
 * where the device copy is stale (cpu_dev_in), its outputs marked valid on
 * the device only (cpu_dev_out). Every other step (interpreter thunks,
 * while/case predicates, the host forms of the above) runs on the host
 * mirror: its inputs are downloaded where the host copy is stale
 * (cpu_dev_host_in), its outputs marked valid on the host only
 * (cpu_dev_host_out). Copies between buffers (cpu_dev_copy) run device to
 * device when the source is valid there. So a program of device steps
 * only copies its arguments in and its results out; a while loop's
 * predicate is one small download per iteration (none with a known trip
 * count: passes/while_loop_trip_count.c).
 *
 * Arguments and results that stay on the device: an argument tensor
 * carrying a device copy of this backend (tensor.device: a caller's
 * hlo_buffer from hlo_executable_device_put or an earlier run) is
 * registered before the run as a LENT entry (valid on the device, its
 * device memory the caller's, never freed here: cpu_dev_begin_run); after
 * the run a result whose bytes are in a device buffer of its own is handed
 * that buffer (cpu_dev_result: tensor.device, owned), so neither is
 * copied.
 *
 * Graph replay (a backend with the graph_* slots: CUDA graphs): a run of
 * program 0 that is device work only recorded through a shadow backend
 * table, its calls captured into a graph and launched, conditional graph
 * nodes, replay without the steps: executable_cpu_graph.c, whose header
 * comment has the design. The device memory side here takes part through
 * graph buffers (a deferred run's allocations: cpu_dev_graph_buffer),
 * frees deferred to the issue (cpu_dev_buffer_free), the issue before any
 * upload or download (be_copy, be_download) and the results handed their
 * graph buffers (hand_result). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "runtime/executable_cpu_internal.h"
#include "support/runmap.h"

#include "runtime/executable_cpu_device_internal.h"

/* Verbose (HLO_CUDA_GRAPHS=verbose): a deferred run ends early, by `what`
 * of n bytes (its calls so far and the rest go one by one). */
static void deferral_ends(const cpu_exec *x, const char *what, size_t n) {
  const graph_state *g = &x->dev->g;
  if (g->verbose)
    fprintf(stderr, "hlo: @%s: run %llu: %s of %zu bytes: its calls go one by one from here\n",
            x->f->name, (unsigned long long)g->runs, what, n);
}

/* An upload (or a copy between device buffers) on the backend; a deferred
 * run's calls are issued first (graph replay: order). */
static hlo_status be_copy(cpu_exec *x, void *dst, const void *src, size_t n) {
  if (!n) return NULL;
  if (x->dev->g.deferring) {
    deferral_ends(x, "an upload", n);
    HLO_TRY(cpu_dev_graph_flush(x, false));
  }
  return x->dev->real->copy(dst, src, n);
}

/* A download: the device's queued work first (launches may be
 * asynchronous; the host reads what they wrote). */
static hlo_status be_download(cpu_exec *x, void *dst, const void *src, size_t n) {
  if (!n) return NULL;
  if (x->dev->g.deferring) {
    deferral_ends(x, "a download", n);
    HLO_TRY(cpu_dev_graph_flush(x, false));
  }
  HLO_TRY(x->dev->real->synchronize());
  return x->dev->real->copy(dst, src, n);
}

/* Copies n bytes between device buffers on the stream: copy_box over the
 * widest element (16, 8, 4, 2, 1 bytes) that divides n and both
 * addresses; the backend's copy when it lacks copy_box. */
hlo_status cpu_dev_copy_d2d(const backend *be, void *dst, const void *src, size_t n) {
  if (!n) return NULL;
  if (!be->copy_box) return be->copy(dst, src, n);
  uint32_t e = 16;
  while (e > 1 && ((n | (uintptr_t)dst | (uintptr_t)src) & (e - 1))) e /= 2;
  backend_box b;
  memset(&b, 0, sizeof b);
  b.rank = 1;
  b.esize = e;
  b.dims[0] = (int64_t)(n / e);
  b.dst_strides[0] = b.src_strides[0] = 1;
  return be->copy_box(dst, src, &b);
}

static int by_host(const void *a, const void *b) {
  const uint8_t *p = ((const dev_entry *)a)->host, *q = ((const dev_entry *)b)->host;
  return p < q ? -1 : p > q;
}

hlo_status cpu_dev_create(cpu_exec *x) {
  cpu_dev *d = calloc(1, sizeof *d);
  if (!d) return cpu_oom();
  x->dev = d;
  d->real = x->be;
  cpu_dev_graph_init(d);
  d->empty = d->real->alloc(GRANULE);
  if (!d->empty) return status_new(HLO_RESOURCE_EXHAUSTED, "out of device memory");
  d->vbytes = malloc((x->nvals ? x->nvals : 1) * sizeof *d->vbytes);
  d->onb = calloc(x->nprogs ? x->nprogs : 1, sizeof *d->onb);
  if (!d->vbytes || !d->onb) return cpu_oom();
  for (uint32_t i = 0; i < x->nvals; i++) d->vbytes[i] = SIZE_MAX;
  /* constants: uploaded once, now */
  for (uint32_t i = 0; i < x->nvals; i++) {
    tensor *t = x->consts[i];
    if (!t || t->type->kind != TYPE_TENSOR || !t->nbytes) continue;
    void *p;
    HLO_TRY(cpu_dev_in(x, t, t->data, t->nbytes, &p));
    d->e[d->n - 1].pinned = true;
  }
  /* sorted by host address: find's binary search (they stay first: only
   * later entries are dropped during runs) */
  if (d->n) qsort(d->e, d->n, sizeof *d->e, by_host);
  d->npinned = d->nfixed = d->n;
  return NULL;
}

size_t cpu_dev_value_bytes(cpu_exec *x, const hlo_value *v) {
  cpu_dev *d = x->dev;
  if (!d || v->id >= x->nvals) return (size_t)cpu_value_bytes(v);
  if (d->vbytes[v->id] == SIZE_MAX) d->vbytes[v->id] = (size_t)cpu_value_bytes(v);
  return d->vbytes[v->id];
}

bool cpu_dev_copy_on_backend(cpu_exec *x, const step *s) {
  cpu_dev *d = x->dev;
  uint32_t pi = 0;
  while (pi < x->nprogs && !(s >= x->progs[pi].steps && s < x->progs[pi].steps +
                                                             x->progs[pi].nsteps))
    pi++;
  if (!d || pi == x->nprogs) return cpu_copy_on_backend(x->be, s);
  if (!d->onb[pi]) {
    d->onb[pi] = calloc(x->progs[pi].nsteps ? x->progs[pi].nsteps : 1, 1);
    if (!d->onb[pi]) return cpu_copy_on_backend(x->be, s);
  }
  uint8_t *c = &d->onb[pi][s - x->progs[pi].steps];
  if (!*c) *c = (uint8_t)(1 + cpu_copy_on_backend(d->real, s));
  return *c == 2;
}

static void drop_entry(cpu_exec *x, uint32_t i) {
  cpu_dev *d = x->dev;
  if (!d->e[i].lent) cpu_dev_buffer_free(x, d->e[i].dev);
  /* its graph buffer serves the run's next allocation of that size */
  if (d->e[i].gbuf && d->e[i].gbi < d->g.ngb) d->g.gb[d->e[i].gbi].busy = false;
  tensor_release(d->e[i].owner);
  if (d->e[i].gran) {
    runmap_free(d->e[i].gran);
    free(d->e[i].gran);
  }
  d->e[i] = d->e[--d->n];
}

void cpu_dev_destroy(cpu_exec *x) {
  cpu_dev *d = x->dev;
  if (!d) return;
  if (d->g.deferring) { /* not expected: every run ends with cpu_dev_end_run */
    hlo_status_free(cpu_dev_graph_flush(x, false));
  }
  while (d->n) drop_entry(x, d->n - 1);
  free(d->e);
  free(d->vbytes);
  for (uint32_t pi = 0; d->onb && pi < x->nprogs; pi++) free(d->onb[pi]);
  free(d->onb);
  cpu_dev_graph_free(d);
  d->real->free(d->arena);
  d->real->free(d->empty);
  runmap_free(&d->granules);
  free(d);
  x->dev = NULL;
}

hlo_status cpu_dev_arena(cpu_exec *x) {
  cpu_dev *d = x->dev;
  const program *p0 = &x->progs[0];
  if (d->arena) return NULL;
  size_t bytes = p0->temp_bytes > 0 ? ((size_t)p0->temp_bytes + 63) & ~(size_t)63 : 64;
  HLO_TRY(runmap_init(&d->granules, bytes / GRANULE)); /* never written: state 0 */
  d->arena = d->real->alloc(bytes);
  if (!d->arena) {
    runmap_free(&d->granules);
    return status_new(HLO_RESOURCE_EXHAUSTED, "out of device memory for %zu bytes of "
                      "temporaries", bytes);
  }
  d->host_arena = p0->arena;
  d->arena_bytes = bytes;
  return NULL;
}

/* The entry of e[lo..hi) (sorted by host address) whose host range holds
 * p, or -1. */
static int64_t find_sorted(const dev_entry *e, uint32_t lo, uint32_t hi, const uint8_t *p) {
  uint32_t a = lo, b = hi; /* the last entry starting at or before p: a - 1 */
  while (a < b) {
    uint32_t mid = a + (b - a) / 2;
    if (e[mid].host <= p) a = mid + 1;
    else b = mid;
  }
  return a > lo && p < e[a - 1].host + e[a - 1].bytes ? (int64_t)a - 1 : -1;
}

/* The entry whose host range holds p, or -1: the run's own entries, then
 * binary searches of the arguments' and the constants'. */
int64_t cpu_dev_find(const cpu_dev *d, const uint8_t *p) {
  for (uint32_t i = d->nfixed; i < d->n; i++)
    if (p >= d->e[i].host && p < d->e[i].host + d->e[i].bytes) return i;
  int64_t i = find_sorted(d->e, d->npinned, d->nfixed, p);
  return i >= 0 ? i : find_sorted(d->e, 0, d->npinned, p);
}

bool cpu_dev_in_arena(const cpu_dev *d, const uint8_t *p) {
  return d->host_arena && p >= d->host_arena && p < d->host_arena + d->arena_bytes;
}

/* Where value v lies in the executable's arena (an offset of program 0's
 * arena, which holds every region's; *in 0) or in the allocation of a
 * result of program 0 that holds temporaries (an offset of it; *in 1 +
 * that result's value id: x->in_result_of, a region's arena_in), or -1
 * when it is not an arena value. */
int64_t cpu_dev_arena_at(const cpu_exec *x, const hlo_value *v, uint32_t *in) {
  *in = 0;
  if (v->id >= x->nvals || x->home[v->id] != HOME_ARENA) return -1;
  int64_t at = x->offset[v->id];
  uint32_t p = x->prog_of[v->id];
  if (!p && x->in_result_of) *in = x->in_result_of[v->id];
  for (uint32_t k = 0; p && k < 64; p = x->progs[p].arena_parent, k++) {
    at += x->progs[p].arena_offset;
    if (x->progs[p].arena_in) { /* a region's arena in a result's allocation */
      *in = x->progs[p].arena_in;
      break;
    }
  }
  return at;
}

/* The host address of arena value v in this run (cpu_dev_arena_at: in the
 * host arena or in a result's allocation, bound at the run's start), or
 * NULL. */
uint8_t *cpu_dev_temp_host(const cpu_exec *x, const hlo_value *v) {
  uint32_t in = 0;
  int64_t at = cpu_dev_arena_at(x, v, &in);
  if (at < 0) return NULL;
  if (!in) return x->progs[0].arena ? x->progs[0].arena + at : NULL;
  const tensor *t = x->vals[in - 1];
  return t && t->data ? t->data + at : NULL;
}

/* Memory whose validity is kept per 64-byte granule: the arena, or the
 * allocation of a result holding temporaries (an entry with `gran`). */
typedef struct granular {
  runmap *map;
  uint8_t *host, *dev;
  size_t bytes;
} granular;

/* Moves the granules [g0, g1) of m that lack `want` (and hold the other
 * side's valid bytes) to that side (the last granule clipped to m's
 * bytes). */
static hlo_status gran_sync(cpu_exec *x, const granular *m, size_t g0, size_t g1, uint8_t want) {
  uint8_t other = want == ON_DEV ? ON_HOST : ON_DEV;
  size_t g = g0;
  while (g < g1) {
    size_t e;
    uint8_t s = m->map->state[runmap_find(m->map, g, &e)];
    if (e > g1) e = g1;
    if (!(s & want) && (s & other)) {
      size_t off = g * GRANULE, end = e * GRANULE;
      if (end > m->bytes) end = m->bytes;
      if (want == ON_DEV) HLO_TRY(be_copy(x, m->dev + off, m->host + off, end - off));
      else HLO_TRY(be_download(x, m->host + off, m->dev + off, end - off));
      HLO_TRY(runmap_set(m->map, g, e, s | want));
    }
    g = e;
  }
  return NULL;
}

/* The granules [*g0, *g1) of m that host[p, p + bytes) touches. */
static void gran_range(const granular *m, const uint8_t *p, size_t bytes, size_t *g0,
                       size_t *g1) {
  size_t off = (size_t)(p - m->host);
  size_t end = off + bytes;
  if (end > m->bytes) end = m->bytes;
  *g0 = off / GRANULE;
  *g1 = (end + GRANULE - 1) / GRANULE;
}

/* Whether every granule of m that host[p, p + bytes) touches is valid on
 * side `want`; for the host (`want` ON_HOST), a granule never written
 * (state 0: garbage on both sides) counts as valid. */
static bool gran_valid(const granular *m, const uint8_t *p, size_t bytes, uint8_t want) {
  size_t g0, g1;
  gran_range(m, p, bytes, &g0, &g1);
  for (size_t g = g0, e; g < g1; g = e) {
    uint8_t s = m->map->state[runmap_find(m->map, g, &e)];
    if (want == ON_DEV ? !(s & ON_DEV) : s == ON_DEV) return false;
  }
  return true;
}

/* The arena as granular memory. */
static granular arena_gran(cpu_dev *d) {
  return (granular){&d->granules, d->host_arena, d->arena, d->arena_bytes};
}

/* Entry e as granular memory (e->gran set). */
static granular entry_gran(const dev_entry *e) {
  return (granular){e->gran, e->host, e->dev, e->bytes};
}

/* The state of a whole entry: for a granular one, the sides on which every
 * granule is valid. */
static uint8_t entry_state(const dev_entry *e) {
  if (!e->gran) return e->state;
  uint8_t all = ON_HOST | ON_DEV;
  for (uint32_t i = 0; i < e->gran->count; i++) all &= e->gran->state[i];
  return all;
}

/* Grows the entry table by one; its index in *out. */
static hlo_status entry_slot(cpu_dev *d, uint32_t *out) {
  if (d->n == d->cap) {
    uint32_t cap = d->cap ? 2 * d->cap : 16;
    dev_entry *e = realloc(d->e, cap * sizeof *e);
    if (!e) return cpu_oom();
    d->e = e;
    d->cap = cap;
  }
  *out = d->n++;
  return NULL;
}

/* The allocation of a result of program 0 holding temporaries in this run
 * (x->result_homes, bound at the run's start) whose host memory holds p,
 * or NULL. */
static tensor *result_home_at(const cpu_exec *x, const uint8_t *p) {
  for (uint32_t h = 0; h < x->nresult_homes; h++) {
    tensor *t = x->vals[x->result_homes[h]->id];
    if (t && t->data && t->nbytes && p >= t->data && p < t->data + t->nbytes) return t;
  }
  return NULL;
}

/* The entry for tensor memory host[0..bytes) (owner: its tensor, or NULL
 * when unknown: then none is made), made when missing; -1 when none.
 * Memory in a result's allocation holding temporaries (result_home_at) is
 * that allocation's entry, made whole (owner: the result's tensor) and
 * granular, its granules never written (state 0), whatever owner is (a
 * loop's state slot there is a tensor borrowing those bytes). */
static hlo_status entry_of(cpu_exec *x, tensor *owner, uint8_t *host, size_t bytes, bool make,
                           int64_t *out) {
  cpu_dev *d = x->dev;
  *out = cpu_dev_find(d, host);
  if (*out >= 0 || !make) return NULL;
  tensor *home = x->nresult_homes ? result_home_at(x, host) : NULL;
  if (home) {
    owner = home;
    host = home->data;
    bytes = home->nbytes;
  }
  if (!owner) return NULL;
  runmap *gran = NULL;
  if (home) {
    gran = calloc(1, sizeof *gran);
    hlo_status st = gran ? runmap_init(gran, (bytes + GRANULE - 1) / GRANULE) : cpu_oom();
    if (st) {
      free(gran);
      return st;
    }
  }
  bool gbuf = d->g.deferring; /* a deferred run's buffers: the graph's, kept across runs */
  void *dev = NULL;
  uint32_t gbi = 0;
  hlo_status st = NULL;
  if (gbuf) {
    st = cpu_dev_graph_buffer(x, bytes, &dev, &gbi);
  } else {
    dev = d->real->alloc(bytes);
    if (!dev)
      st = status_new(HLO_RESOURCE_EXHAUSTED, "out of device memory for a buffer of %zu bytes",
                      bytes);
  }
  uint32_t i = 0;
  if (!st) st = entry_slot(d, &i);
  if (st) {
    if (dev && !gbuf) d->real->free(dev);
    else if (dev) d->g.gb[gbi].busy = false;
    if (gran) runmap_free(gran);
    free(gran);
    return st;
  }
  d->e[i] = (dev_entry){host, bytes, dev, ON_HOST, false, gbuf, gbuf, gbi, tensor_retain(owner),
                        gran};
  *out = i;
  return NULL;
}

static hlo_status dev_in(cpu_exec *x, tensor *owner, void *host, size_t bytes, void **dev) {
  cpu_dev *d = x->dev;
  uint8_t *p = host;
  if (!bytes) {
    *dev = cpu_dev_in_arena(d, p) ? d->arena + (p - d->host_arena) : d->empty;
    return NULL;
  }
  if (cpu_dev_in_arena(d, p)) {
    granular m = arena_gran(d);
    size_t g0, g1;
    gran_range(&m, p, bytes, &g0, &g1);
    HLO_TRY(gran_sync(x, &m, g0, g1, ON_DEV));
    *dev = d->arena + (p - d->host_arena);
    return NULL;
  }
  int64_t i;
  HLO_TRY(entry_of(x, owner, p, bytes, true, &i));
  if (i < 0)
    return status_new(HLO_INTERNAL, "device executable: a buffer of %zu bytes has no device "
                      "copy", bytes);
  dev_entry *e = &d->e[i];
  if (e->gran) {
    granular m = entry_gran(e);
    size_t g0, g1;
    gran_range(&m, p, bytes, &g0, &g1);
    HLO_TRY(gran_sync(x, &m, g0, g1, ON_DEV));
  } else if (!(e->state & ON_DEV)) {
    HLO_TRY(be_copy(x, e->dev, e->host, e->bytes));
    e->state |= ON_DEV;
  }
  *dev = e->dev + (p - e->host);
  return NULL;
}

static hlo_status dev_out(cpu_exec *x, tensor *owner, void *host, size_t bytes, void **dev) {
  cpu_dev *d = x->dev;
  uint8_t *p = host;
  if (!bytes) {
    *dev = cpu_dev_in_arena(d, p) ? d->arena + (p - d->host_arena) : d->empty;
    return NULL;
  }
  if (cpu_dev_in_arena(d, p)) {
    granular m = arena_gran(d);
    size_t g0, g1;
    gran_range(&m, p, bytes, &g0, &g1);
    HLO_TRY(runmap_set(&d->granules, g0, g1, ON_DEV));
    *dev = d->arena + (p - d->host_arena);
    return NULL;
  }
  int64_t i;
  HLO_TRY(entry_of(x, owner, p, bytes, true, &i));
  if (i < 0)
    return status_new(HLO_INTERNAL, "device executable: a buffer of %zu bytes has no device "
                      "copy", bytes);
  dev_entry *e = &d->e[i];
  if (e->gran) { /* the granules written: no two buffers there share one */
    granular m = entry_gran(e);
    size_t g0, g1;
    gran_range(&m, p, bytes, &g0, &g1);
    HLO_TRY(runmap_set(e->gran, g0, g1, ON_DEV));
    *dev = e->dev + (p - e->host);
    return NULL;
  }
  /* a write of part of the entry keeps the rest where it is valid */
  if (p != e->host || bytes < e->bytes) {
    if (!(e->state & ON_DEV)) HLO_TRY(be_copy(x, e->dev, e->host, e->bytes));
  }
  e->state = ON_DEV;
  *dev = e->dev + (p - e->host);
  return NULL;
}

hlo_status cpu_dev_in(cpu_exec *x, tensor *owner, void *host, size_t bytes, void **dev) {
  HLO_TRY(dev_in(x, owner, host, bytes, dev));
  if (x->dev->g.deferring) cpu_dev_dag_note(&x->dev->g, *dev, bytes, false);
  return NULL;
}

hlo_status cpu_dev_out(cpu_exec *x, tensor *owner, void *host, size_t bytes, void **dev) {
  HLO_TRY(dev_out(x, owner, host, bytes, dev));
  if (x->dev->g.deferring) cpu_dev_dag_note(&x->dev->g, *dev, bytes, true);
  return NULL;
}

hlo_status cpu_dev_host_in(cpu_exec *x, const void *host, size_t bytes) {
  cpu_dev *d = x->dev;
  const uint8_t *p = host;
  if (!d || !bytes || !p) return NULL;
  if (d->g.deferring && d->g.copen >= 0 && !d->g.prerun) HLO_TRY(cpu_dev_case_poll(x, NULL));
  if (d->g.deferring && (d->g.ncw || d->g.ncc) &&
      (cpu_dev_in_arena(d, p) || result_home_at(x, p))) { /* a predicate? */
    bool took = false;
    HLO_TRY(cpu_dev_cond_pred(x, (uint8_t *)p, bytes, &took));
    if (took) return NULL;
  }
  if (cpu_dev_in_arena(d, p)) {
    granular m = arena_gran(d);
    size_t g0, g1;
    gran_range(&m, p, bytes, &g0, &g1);
    return gran_sync(x, &m, g0, g1, ON_HOST);
  }
  int64_t i = cpu_dev_find(d, p);
  if (i < 0) return NULL; /* host memory only */
  dev_entry *e = &d->e[i];
  if (e->gran) {
    granular m = entry_gran(e);
    size_t g0, g1;
    gran_range(&m, p, bytes, &g0, &g1);
    return gran_sync(x, &m, g0, g1, ON_HOST);
  }
  if (!(e->state & ON_HOST)) {
    HLO_TRY(be_download(x, e->host, e->dev, e->bytes));
    e->state |= ON_HOST;
  }
  return NULL;
}

hlo_status cpu_dev_host_out(cpu_exec *x, const void *host, size_t bytes) {
  cpu_dev *d = x->dev;
  const uint8_t *p = host;
  if (!d || !bytes || !p) return NULL;
  if (cpu_dev_in_arena(d, p)) {
    granular m = arena_gran(d);
    size_t g0, g1;
    gran_range(&m, p, bytes, &g0, &g1);
    return runmap_set(&d->granules, g0, g1, ON_HOST);
  }
  int64_t i = cpu_dev_find(d, p);
  /* a result's allocation holding temporaries gets its entry at its first
   * write, wherever it happens (its granules' states start there) */
  if (i < 0 && x->nresult_homes && result_home_at(x, p))
    HLO_TRY(entry_of(x, NULL, (uint8_t *)p, bytes, true, &i));
  if (i < 0) return NULL;
  dev_entry *e = &d->e[i];
  if (e->gran) {
    granular m = entry_gran(e);
    size_t g0, g1;
    gran_range(&m, p, bytes, &g0, &g1);
    return runmap_set(e->gran, g0, g1, ON_HOST);
  }
  /* a write of part of the entry: the rest must be valid on the host first */
  if ((p != e->host || bytes < e->bytes) && !(e->state & ON_HOST))
    HLO_TRY(be_download(x, e->host, e->dev, e->bytes));
  e->state = ON_HOST;
  return NULL;
}

hlo_status cpu_dev_tensor_host(cpu_exec *x, const tensor *t) {
  if (!x->dev || !t) return NULL;
  if (t->type && t->type->kind == TYPE_TUPLE) {
    for (uint32_t i = 0; i < t->num_tuple; i++) HLO_TRY(cpu_dev_tensor_host(x, t->tuple[i]));
    return NULL;
  }
  return cpu_dev_host_in(x, t->data, t->nbytes);
}

hlo_status cpu_dev_tensor_wrote(cpu_exec *x, const tensor *t) {
  if (!x->dev || !t) return NULL;
  if (t->type && t->type->kind == TYPE_TUPLE) {
    for (uint32_t i = 0; i < t->num_tuple; i++) HLO_TRY(cpu_dev_tensor_wrote(x, t->tuple[i]));
    return NULL;
  }
  return cpu_dev_host_out(x, t->data, t->nbytes);
}

/* Whether the memory at p is valid on the device (and not only there: the
 * state bits of its arena granules or entry). */
bool cpu_dev_valid_on_dev(const cpu_dev *d, const uint8_t *p, size_t bytes) {
  if (cpu_dev_in_arena(d, p)) {
    granular m = arena_gran((cpu_dev *)d);
    return gran_valid(&m, p, bytes, ON_DEV);
  }
  int64_t i = cpu_dev_find(d, p);
  if (i >= 0 && d->e[i].gran) {
    granular m = entry_gran(&d->e[i]);
    return gran_valid(&m, p, bytes, ON_DEV);
  }
  return i >= 0 && (d->e[i].state & ON_DEV);
}

/* Whether the memory at p is valid on the host (untracked memory is;
 * granules never written are garbage on both sides). */
static bool valid_on_host(const cpu_dev *d, const uint8_t *p, size_t bytes) {
  if (cpu_dev_in_arena(d, p)) {
    granular m = arena_gran((cpu_dev *)d);
    return gran_valid(&m, p, bytes, ON_HOST);
  }
  int64_t i = cpu_dev_find(d, p);
  if (i >= 0 && d->e[i].gran) {
    granular m = entry_gran(&d->e[i]);
    return gran_valid(&m, p, bytes, ON_HOST);
  }
  return i < 0 || (d->e[i].state & ON_HOST);
}

hlo_status cpu_dev_copy(cpu_exec *x, tensor *dst_owner, void *dst, const void *src,
                        size_t bytes) {
  cpu_dev *d = x->dev;
  if (!bytes) return NULL;
  /* on the host when src is valid there (the copy is then valid on the
   * host, as a host step's output); on the device when it is only there,
   * or when it is valid there in a deferred run (a host copy would be
   * uploaded again by the device step reading it, ending the deferral) */
  if (d && (!valid_on_host(d, src, bytes) || d->g.deferring) && cpu_dev_valid_on_dev(d, src, bytes)) {
    void *ds, *dd;
    HLO_TRY(cpu_dev_in(x, NULL, (void *)src, bytes, &ds));
    HLO_TRY(cpu_dev_out(x, dst_owner, dst, bytes, &dd));
    return cpu_dev_graph_copy(x, dd, ds, bytes);
  }
  if (d) HLO_TRY(cpu_dev_host_in(x, src, bytes));
  memcpy(dst, src, bytes);
  return d ? cpu_dev_host_out(x, dst, bytes) : NULL;
}

bool cpu_dev_holds(const cpu_exec *x, const tensor *t) {
  const cpu_dev *d = x->dev;
  if (!d || !t) return false;
  for (uint32_t i = 0; i < d->n; i++)
    if (d->e[i].owner == t) return true;
  return false;
}

void cpu_dev_sweep(cpu_exec *x) {
  cpu_dev *d = x->dev;
  for (uint32_t i = d->nfixed; i < d->n;) { /* the arguments' live as long as the run */
    if (!d->e[i].pinned && __atomic_load_n(&d->e[i].owner->refcount, __ATOMIC_ACQUIRE) == 1)
      drop_entry(x, i);
    else
      i++;
  }
}

void cpu_dev_end_run(cpu_exec *x) {
  cpu_dev *d = x->dev;
  if (!d) return;
  /* a deferred run is flushed by its results or the run's synchronize;
   * after an error before those, its calls are issued here (as an eager
   * run would have: its error, if any, is the backend's again later) */
  if (d->g.deferring) hlo_status_free(cpu_dev_graph_flush(x, false));
  for (uint32_t i = d->npinned; i < d->n;) {
    if (!d->e[i].pinned) drop_entry(x, i);
    else i++;
  }
  d->nfixed = d->npinned;
}

/* Registers the device copy of one argument tensor (see cpu_dev_begin_run);
 * *all_lent is cleared for one with bytes and no such copy. */
static hlo_status lend_argument(cpu_exec *x, tensor *t, bool *all_lent) {
  cpu_dev *d = x->dev;
  if (t->type && t->type->kind == TYPE_TUPLE) {
    for (uint32_t i = 0; i < t->num_tuple; i++) HLO_TRY(lend_argument(x, t->tuple[i], all_lent));
    return NULL;
  }
  if (!t->nbytes || !t->data) return NULL;
  if (!t->device || t->device->backend != (const void *)d->real) {
    *all_lent = false;
    return NULL;
  }
  if (cpu_dev_find(d, t->data) >= 0) return NULL; /* the same tensor passed twice */
  uint32_t i = 0;
  HLO_TRY(entry_slot(d, &i));
  uint8_t state = ON_DEV | (t->device->host_valid ? ON_HOST : 0);
  d->e[i] = (dev_entry){t->data, t->nbytes, t->device->ptr, state, false, true, false, 0,
                        tensor_retain(t), NULL};
  return NULL;
}

/* A deferred run's host argument (one with bytes and no device copy of
 * this backend; tuples: their elements): uploaded now, before the run is
 * deferred, into the run's next graph buffer, so that its device pointer
 * is the same run after run (a graph reads it there). */
static hlo_status upload_argument(cpu_exec *x, tensor *t) {
  cpu_dev *d = x->dev;
  if (t->type && t->type->kind == TYPE_TUPLE) {
    for (uint32_t i = 0; i < t->num_tuple; i++) HLO_TRY(upload_argument(x, t->tuple[i]));
    return NULL;
  }
  if (!t->nbytes || !t->data || (t->device && t->device->backend == (const void *)d->real))
    return NULL;
  if (cpu_dev_find(d, t->data) >= 0) return NULL; /* the same tensor passed twice */
  void *dev = NULL;
  uint32_t i = 0, gbi = 0;
  HLO_TRY(cpu_dev_graph_buffer(x, t->nbytes, &dev, &gbi));
  hlo_status st = entry_slot(d, &i);
  if (st) {
    d->g.gb[gbi].busy = false;
    return st;
  }
  d->e[i] = (dev_entry){t->data, t->nbytes, dev, ON_HOST, false, true, true, gbi,
                        tensor_retain(t), NULL};
  HLO_TRY(d->real->copy(dev, t->data, t->nbytes));
  d->e[i].state = ON_HOST | ON_DEV;
  return NULL;
}

hlo_status cpu_dev_begin_run(cpu_exec *x, tensor *const *args, uint32_t n) {
  cpu_dev *d = x->dev;
  if (!d) return NULL;
  bool all_lent = true;
  d->nfixed = d->npinned;
  for (uint32_t i = 0; i < n; i++)
    if (args[i]) HLO_TRY(lend_argument(x, args[i], &all_lent));
  bool defer = cpu_dev_graph_may_defer(x);
  for (uint32_t i = 0; i < n && !all_lent && defer; i++)
    if (args[i]) HLO_TRY(upload_argument(x, args[i]));
  /* the arguments' entries: kept for the run, sorted for find */
  if (d->n > d->npinned) qsort(d->e + d->npinned, d->n - d->npinned, sizeof *d->e, by_host);
  d->nfixed = d->n;
  if (defer) {
    cpu_dev_graph_key(x, args, n);
    cpu_dev_graph_defer(x);
  }
  return NULL;
}

/* tensor_device.release of a result's own device copy. */
static void release_own_copy(tensor_device *dv) {
  const backend *be = dv->backend;
  be->free(dv->ptr);
  free(dv);
}

/* cpu_dev_result's work on r; *gk: the graph buffer r was handed
 * (RECIPE_NONE: a result without bytes; RECIPE_BAD: any other outcome). */
static hlo_status hand_result(cpu_exec *x, tensor *r, uint32_t *gk, bool *hv) {
  cpu_dev *d = x->dev;
  *gk = RECIPE_BAD;
  *hv = false;
  if (r->type && r->type->kind == TYPE_TUPLE) {
    for (uint32_t i = 0; i < r->num_tuple; i++) {
      uint32_t k;
      bool h;
      HLO_TRY(hand_result(x, r->tuple[i], &k, &h));
    }
    return NULL;
  }
  if (!r->nbytes || !r->data) {
    *gk = RECIPE_NONE;
    return NULL;
  }
  if (r->device && r->device->own) return NULL; /* a result given twice: moved already */
  int64_t k = cpu_dev_find(d, r->data);
  if (k >= 0) {
    dev_entry *e = &d->e[k];
    bool own = e->owner == r && !e->pinned && (!e->lent || e->gbuf) && e->host == r->data &&
               e->bytes == r->nbytes && !r->borrowed && !r->device && (entry_state(e) & ON_DEV);
    if (own && e->gbuf && d->g.pool && e->gbi < d->g.ngb && d->g.gb[e->gbi].p == e->dev) {
      /* a graph buffer: handed to the result, not copied (a replay is one
       * launch); given back to the pool when the result is released, so a
       * later run (its graph) finds it at the same address */
      *hv = (entry_state(e) & ON_HOST) != 0;
      HLO_TRY(cpu_dev_hand_graph_buffer(x, r, e->gbi, *hv));
      *gk = e->gbi;
      e->dev = NULL;
      e->gbuf = false; /* the entry no longer stands for the graph buffer */
      return NULL;
    }
    if (own && e->gbuf) {
      /* no pool (out of memory at the start): a copy on the stream */
      void *fresh = d->real->alloc(e->bytes);
      if (!fresh)
        return status_new(HLO_RESOURCE_EXHAUSTED, "out of device memory for a result of %zu "
                          "bytes", e->bytes);
      tensor_device *dv = malloc(sizeof *dv);
      hlo_status st = dv ? cpu_dev_copy_d2d(d->real, fresh, e->dev, e->bytes) : cpu_oom();
      if (st) {
        free(dv);
        d->real->free(fresh);
        return st;
      }
      *dv = (tensor_device){fresh, d->real, (entry_state(e) & ON_HOST) != 0, true, release_own_copy};
      r->device = dv;
      return NULL;
    }
    if (own) {
      tensor_device *dv = malloc(sizeof *dv);
      if (!dv) return cpu_oom();
      *dv = (tensor_device){e->dev, d->real, (entry_state(e) & ON_HOST) != 0, true, release_own_copy};
      r->device = dv;
      e->dev = NULL; /* the result's now: drop_entry frees nothing */
      e->lent = true;
      return NULL;
    }
  }
  return cpu_dev_host_in(x, r->data, r->nbytes);
}

hlo_status cpu_dev_result(cpu_exec *x, tensor *r) {
  cpu_dev *d = x->dev;
  if (!d || !r) return NULL;
  if (d->g.deferring && d->g.copen >= 0) HLO_TRY(cpu_dev_case_poll(x, r));
  d->g.nresults++;
  HLO_TRY(cpu_dev_graph_flush(x, true)); /* the steps are done: their calls go */
  uint32_t k;
  bool hv;
  HLO_TRY(hand_result(x, r, &k, &hv));
  cpu_dev_recipe_push(&d->g.recipe, k, hv);
  return NULL;
}
