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
 *     Constants are uploaded once, at compile time (pinned entries).
 * A device step (kernel, gemm, and conv / window / sort when the backend
 * has the slot) takes device pointers: its inputs are uploaded where the
 * device copy is stale (cpu_dev_in), its outputs marked valid on the
 * device only (cpu_dev_out). Every other step (interpreter thunks, the
 * data-movement thunks, fills, while/case predicates, copies of a
 * program's results) runs on the host mirror: its inputs are downloaded
 * where the host copy is stale (cpu_dev_host_in), its outputs marked valid
 * on the host only (cpu_dev_host_out). Copies between buffers
 * (cpu_dev_copy) run device to device when the source is valid there. So
 * a program of device steps only copies its arguments in and its results
 * out; a while loop's predicate is one small download per iteration. */
#include <stdlib.h>
#include <string.h>
#include "runtime/executable_cpu_internal.h"

enum { ON_HOST = 1, ON_DEV = 2 };

typedef struct dev_entry {
  uint8_t *host;        /* the host mirror (key): a tensor's data */
  size_t bytes;
  uint8_t *dev;         /* its device buffer (backend alloc) */
  uint8_t state;        /* ON_HOST | ON_DEV */
  bool pinned;          /* a constant's: kept for the executable's life */
  bool lent;            /* dev is an argument's device copy (the caller's): not freed */
  tensor *owner;        /* a reference: keeps `host` allocated */
} dev_entry;

struct cpu_dev {
  uint8_t *arena;       /* the device arena (progs[0].temp_bytes, rounded up) */
  uint8_t *host_arena;  /* progs[0].arena when the device arena was made */
  size_t arena_bytes;
  /* the state (ON_HOST | ON_DEV) of each 64-byte granule of the arena, as
   * runs: run i covers granules [run_at[i], run_at[i + 1]) (the last to
   * the arena's end) with state run_state[i]; run_at[0] = 0, neighbours
   * differ. A few runs per live buffer, so a step's bookkeeping costs
   * O(runs), not O(bytes / 64) (a 128 MiB buffer is 2M granules) */
  size_t *run_at;
  uint8_t *run_state;
  uint32_t nruns, cap_runs;
  size_t granules;
  dev_entry *e;
  uint32_t n, cap;
  void *empty;          /* a device pointer for zero-byte buffers */
};

#define GRANULE 64

static hlo_status be_copy(const cpu_exec *x, void *dst, const void *src, size_t n) {
  return n ? x->be->copy(dst, src, n) : NULL;
}

/* A download: the device's queued work first (launches may be
 * asynchronous; the host reads what they wrote). */
static hlo_status be_download(const cpu_exec *x, void *dst, const void *src, size_t n) {
  if (!n) return NULL;
  HLO_TRY(x->be->synchronize());
  return x->be->copy(dst, src, n);
}

hlo_status cpu_dev_create(cpu_exec *x) {
  cpu_dev *d = calloc(1, sizeof *d);
  if (!d) return cpu_oom();
  x->dev = d;
  d->empty = x->be->alloc(GRANULE);
  if (!d->empty) return status_new(HLO_RESOURCE_EXHAUSTED, "out of device memory");
  /* constants: uploaded once, now */
  for (uint32_t i = 0; i < x->nvals; i++) {
    tensor *t = x->consts[i];
    if (!t || t->type->kind != TYPE_TENSOR || !t->nbytes) continue;
    void *p;
    HLO_TRY(cpu_dev_in(x, t, t->data, t->nbytes, &p));
    d->e[d->n - 1].pinned = true;
  }
  return NULL;
}

static void drop_entry(cpu_exec *x, uint32_t i) {
  cpu_dev *d = x->dev;
  if (!d->e[i].lent) x->be->free(d->e[i].dev);
  tensor_release(d->e[i].owner);
  d->e[i] = d->e[--d->n];
}

void cpu_dev_destroy(cpu_exec *x) {
  cpu_dev *d = x->dev;
  if (!d) return;
  while (d->n) drop_entry(x, d->n - 1);
  free(d->e);
  x->be->free(d->arena);
  x->be->free(d->empty);
  free(d->run_at);
  free(d->run_state);
  free(d);
  x->dev = NULL;
}

hlo_status cpu_dev_arena(cpu_exec *x) {
  cpu_dev *d = x->dev;
  const program *p0 = &x->progs[0];
  if (d->arena) return NULL;
  size_t bytes = p0->temp_bytes > 0 ? ((size_t)p0->temp_bytes + 63) & ~(size_t)63 : 64;
  d->arena = x->be->alloc(bytes);
  d->run_at = malloc(16 * sizeof *d->run_at);
  d->run_state = malloc(16);
  if (d->run_at && d->run_state) {
    d->run_at[0] = 0;
    d->run_state[0] = 0; /* never written: garbage on both sides */
    d->nruns = 1;
    d->cap_runs = 16;
  }
  d->granules = bytes / GRANULE;
  if (!d->arena || !d->run_at || !d->run_state)
    return status_new(HLO_RESOURCE_EXHAUSTED, "out of device memory for %zu bytes of "
                      "temporaries", bytes);
  d->host_arena = p0->arena;
  d->arena_bytes = bytes;
  return NULL;
}

/* The entry whose host range holds p, or -1. */
static int64_t find(const cpu_dev *d, const uint8_t *p) {
  for (uint32_t i = 0; i < d->n; i++)
    if (p >= d->e[i].host && p < d->e[i].host + d->e[i].bytes) return i;
  return -1;
}

static bool in_dev_arena(const cpu_dev *d, const uint8_t *p) {
  return d->host_arena && p >= d->host_arena && p < d->host_arena + d->arena_bytes;
}

/* The run holding granule g (binary search). */
static uint32_t run_of(const cpu_dev *d, size_t g) {
  uint32_t lo = 0, hi = d->nruns; /* run_at[lo] <= g < run_at[hi] */
  while (hi - lo > 1) {
    uint32_t mid = lo + (hi - lo) / 2;
    if (d->run_at[mid] <= g) lo = mid;
    else hi = mid;
  }
  return lo;
}

static size_t run_end(const cpu_dev *d, uint32_t i) {
  return i + 1 < d->nruns ? d->run_at[i + 1] : d->granules;
}

/* Sets granules [g0, g1) to `state`: the runs there become one (merged
 * with equal neighbours). */
static hlo_status runs_set(cpu_dev *d, size_t g0, size_t g1, uint8_t state) {
  if (g0 >= g1) return NULL;
  if (d->nruns + 2 > d->cap_runs) {
    uint32_t cap = 2 * d->cap_runs;
    size_t *at = realloc(d->run_at, cap * sizeof *at);
    if (at) d->run_at = at;
    uint8_t *st = realloc(d->run_state, cap);
    if (st) d->run_state = st;
    if (!at || !st) return cpu_oom();
    d->cap_runs = cap;
  }
  uint32_t a = run_of(d, g0), b = run_of(d, g1 - 1);
  uint8_t after = d->run_state[b];
  size_t after_end = run_end(d, b);
  /* the new runs replacing a..b: [run_at[a], g0) keeps a's state, then
   * [g0, g1) `state`, then [g1, after_end) b's */
  size_t at[3];
  uint8_t st[3];
  uint32_t n = 0;
  if (d->run_at[a] < g0) at[n] = d->run_at[a], st[n++] = d->run_state[a];
  at[n] = g0, st[n++] = state;
  if (g1 < after_end) at[n] = g1, st[n++] = after;
  /* merge with the run before a and among themselves */
  uint32_t m = 0;
  size_t mat[3];
  uint8_t mst[3];
  for (uint32_t i = 0; i < n; i++) {
    bool same_as_prev = m ? mst[m - 1] == st[i] : (a > 0 && d->run_state[a - 1] == st[i]);
    if (same_as_prev) continue;
    mat[m] = at[i], mst[m++] = st[i];
  }
  /* and the run after b */
  uint32_t tail = b + 1;
  if (tail < d->nruns) {
    uint8_t last = m ? mst[m - 1] : d->run_state[a - 1];
    if (d->run_state[tail] == last) tail++;
  }
  uint32_t removed = tail - a;
  memmove(d->run_at + a + m, d->run_at + tail, (d->nruns - tail) * sizeof *d->run_at);
  memmove(d->run_state + a + m, d->run_state + tail, d->nruns - tail);
  for (uint32_t i = 0; i < m; i++) d->run_at[a + i] = mat[i], d->run_state[a + i] = mst[i];
  d->nruns = d->nruns - removed + m;
  return NULL;
}

/* Moves the granules [g0, g1) of the arena that lack `want` (and hold the
 * other side's valid bytes) to that side. */
static hlo_status arena_sync(const cpu_exec *x, size_t g0, size_t g1, uint8_t want) {
  cpu_dev *d = x->dev;
  uint8_t other = want == ON_DEV ? ON_HOST : ON_DEV;
  size_t g = g0;
  while (g < g1) {
    uint32_t i = run_of(d, g);
    size_t e = run_end(d, i);
    if (e > g1) e = g1;
    uint8_t s = d->run_state[i];
    if (!(s & want) && (s & other)) {
      size_t off = g * GRANULE, n = (e - g) * GRANULE;
      if (want == ON_DEV) HLO_TRY(be_copy(x, d->arena + off, d->host_arena + off, n));
      else HLO_TRY(be_download(x, d->host_arena + off, d->arena + off, n));
      HLO_TRY(runs_set(d, g, e, s | want));
    }
    g = e;
  }
  return NULL;
}

static void arena_range(const cpu_dev *d, const uint8_t *p, size_t bytes, size_t *g0,
                        size_t *g1) {
  size_t off = (size_t)(p - d->host_arena);
  size_t end = off + bytes;
  if (end > d->arena_bytes) end = d->arena_bytes;
  *g0 = off / GRANULE;
  *g1 = (end + GRANULE - 1) / GRANULE;
}

/* The entry for tensor memory host[0..bytes) (owner: its tensor, or NULL
 * when unknown: then none is made), made when missing; -1 when none. */
static hlo_status entry_of(cpu_exec *x, tensor *owner, uint8_t *host, size_t bytes, bool make,
                           int64_t *out) {
  cpu_dev *d = x->dev;
  *out = find(d, host);
  if (*out >= 0 || !make || !owner) return NULL;
  if (d->n == d->cap) {
    uint32_t cap = d->cap ? 2 * d->cap : 16;
    dev_entry *e = realloc(d->e, cap * sizeof *e);
    if (!e) return cpu_oom();
    d->e = e;
    d->cap = cap;
  }
  void *dev = x->be->alloc(bytes);
  if (!dev)
    return status_new(HLO_RESOURCE_EXHAUSTED, "out of device memory for a buffer of %zu bytes",
                      bytes);
  d->e[d->n] = (dev_entry){host, bytes, dev, ON_HOST, false, false, tensor_retain(owner)};
  *out = d->n++;
  return NULL;
}

hlo_status cpu_dev_in(cpu_exec *x, tensor *owner, void *host, size_t bytes, void **dev) {
  cpu_dev *d = x->dev;
  uint8_t *p = host;
  if (!bytes) {
    *dev = in_dev_arena(d, p) ? d->arena + (p - d->host_arena) : d->empty;
    return NULL;
  }
  if (in_dev_arena(d, p)) {
    size_t g0, g1;
    arena_range(d, p, bytes, &g0, &g1);
    HLO_TRY(arena_sync(x, g0, g1, ON_DEV));
    *dev = d->arena + (p - d->host_arena);
    return NULL;
  }
  int64_t i;
  HLO_TRY(entry_of(x, owner, p, bytes, true, &i));
  if (i < 0)
    return status_new(HLO_INTERNAL, "device executable: a buffer of %zu bytes has no device "
                      "copy", bytes);
  dev_entry *e = &d->e[i];
  if (!(e->state & ON_DEV)) {
    HLO_TRY(be_copy(x, e->dev, e->host, e->bytes));
    e->state |= ON_DEV;
  }
  *dev = e->dev + (p - e->host);
  return NULL;
}

hlo_status cpu_dev_out(cpu_exec *x, tensor *owner, void *host, size_t bytes, void **dev) {
  cpu_dev *d = x->dev;
  uint8_t *p = host;
  if (!bytes) {
    *dev = in_dev_arena(d, p) ? d->arena + (p - d->host_arena) : d->empty;
    return NULL;
  }
  if (in_dev_arena(d, p)) {
    size_t g0, g1;
    arena_range(d, p, bytes, &g0, &g1);
    HLO_TRY(runs_set(d, g0, g1, ON_DEV));
    *dev = d->arena + (p - d->host_arena);
    return NULL;
  }
  int64_t i;
  HLO_TRY(entry_of(x, owner, p, bytes, true, &i));
  if (i < 0)
    return status_new(HLO_INTERNAL, "device executable: a buffer of %zu bytes has no device "
                      "copy", bytes);
  dev_entry *e = &d->e[i];
  /* a write of part of the entry keeps the rest where it is valid */
  if (p != e->host || bytes < e->bytes) {
    if (!(e->state & ON_DEV)) HLO_TRY(be_copy(x, e->dev, e->host, e->bytes));
  }
  e->state = ON_DEV;
  *dev = e->dev + (p - e->host);
  return NULL;
}

hlo_status cpu_dev_host_in(cpu_exec *x, const void *host, size_t bytes) {
  cpu_dev *d = x->dev;
  const uint8_t *p = host;
  if (!d || !bytes || !p) return NULL;
  if (in_dev_arena(d, p)) {
    size_t g0, g1;
    arena_range(d, p, bytes, &g0, &g1);
    return arena_sync(x, g0, g1, ON_HOST);
  }
  int64_t i = find(d, p);
  if (i < 0) return NULL; /* host memory only */
  dev_entry *e = &d->e[i];
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
  if (in_dev_arena(d, p)) {
    size_t g0, g1;
    arena_range(d, p, bytes, &g0, &g1);
    return runs_set(d, g0, g1, ON_HOST);
  }
  int64_t i = find(d, p);
  if (i < 0) return NULL;
  dev_entry *e = &d->e[i];
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
static bool valid_on_dev(const cpu_dev *d, const uint8_t *p, size_t bytes) {
  if (in_dev_arena(d, p)) {
    size_t g0, g1;
    arena_range(d, p, bytes, &g0, &g1);
    for (size_t g = g0; g < g1; g = run_end(d, run_of(d, g)))
      if (!(d->run_state[run_of(d, g)] & ON_DEV)) return false;
    return true;
  }
  int64_t i = find(d, p);
  return i >= 0 && (d->e[i].state & ON_DEV);
}

/* Whether the memory at p is valid on the host (untracked memory is;
 * arena granules never written are garbage on both sides). */
static bool valid_on_host(const cpu_dev *d, const uint8_t *p, size_t bytes) {
  if (in_dev_arena(d, p)) {
    size_t g0, g1;
    arena_range(d, p, bytes, &g0, &g1);
    for (size_t g = g0; g < g1; g = run_end(d, run_of(d, g)))
      if (d->run_state[run_of(d, g)] == ON_DEV) return false;
    return true;
  }
  int64_t i = find(d, p);
  return i < 0 || (d->e[i].state & ON_HOST);
}

hlo_status cpu_dev_copy(cpu_exec *x, tensor *dst_owner, void *dst, const void *src,
                        size_t bytes) {
  cpu_dev *d = x->dev;
  if (!bytes) return NULL;
  /* on the host when src is valid there (the copy is then valid on the
   * host, as a host step's output); on the device when it is only there */
  if (d && !valid_on_host(d, src, bytes) && valid_on_dev(d, src, bytes)) {
    void *ds, *dd;
    HLO_TRY(cpu_dev_in(x, NULL, (void *)src, bytes, &ds));
    HLO_TRY(cpu_dev_out(x, dst_owner, dst, bytes, &dd));
    return be_copy(x, dd, ds, bytes);
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
  for (uint32_t i = 0; i < d->n;) {
    if (!d->e[i].pinned && __atomic_load_n(&d->e[i].owner->refcount, __ATOMIC_ACQUIRE) == 1)
      drop_entry(x, i);
    else
      i++;
  }
}

void cpu_dev_end_run(cpu_exec *x) {
  cpu_dev *d = x->dev;
  if (!d) return;
  for (uint32_t i = 0; i < d->n;) {
    if (!d->e[i].pinned) drop_entry(x, i);
    else i++;
  }
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

/* Registers the device copy of one argument tensor (see cpu_dev_begin_run). */
static hlo_status lend_argument(cpu_exec *x, tensor *t) {
  cpu_dev *d = x->dev;
  if (t->type && t->type->kind == TYPE_TUPLE) {
    for (uint32_t i = 0; i < t->num_tuple; i++) HLO_TRY(lend_argument(x, t->tuple[i]));
    return NULL;
  }
  if (!t->device || t->device->backend != (const void *)x->be || !t->nbytes || !t->data)
    return NULL;
  if (find(d, t->data) >= 0) return NULL; /* the same tensor passed twice */
  uint32_t i = 0;
  HLO_TRY(entry_slot(d, &i));
  uint8_t state = ON_DEV | (t->device->host_valid ? ON_HOST : 0);
  d->e[i] = (dev_entry){t->data, t->nbytes, t->device->ptr, state, false, true, tensor_retain(t)};
  return NULL;
}

hlo_status cpu_dev_begin_run(cpu_exec *x, tensor *const *args, uint32_t n) {
  if (!x->dev) return NULL;
  for (uint32_t i = 0; i < n; i++)
    if (args[i]) HLO_TRY(lend_argument(x, args[i]));
  return NULL;
}

/* tensor_device.release of a result's own device copy. */
static void release_own_copy(tensor_device *dv) {
  const backend *be = dv->backend;
  be->free(dv->ptr);
  free(dv);
}

hlo_status cpu_dev_result(cpu_exec *x, tensor *r) {
  cpu_dev *d = x->dev;
  if (!d || !r) return NULL;
  if (r->type && r->type->kind == TYPE_TUPLE) {
    for (uint32_t i = 0; i < r->num_tuple; i++) HLO_TRY(cpu_dev_result(x, r->tuple[i]));
    return NULL;
  }
  if (!r->nbytes || !r->data) return NULL;
  if (r->device && r->device->own) return NULL; /* a result given twice: moved already */
  int64_t k = find(d, r->data);
  if (k >= 0) {
    dev_entry *e = &d->e[k];
    bool own = e->owner == r && !e->pinned && !e->lent && e->host == r->data &&
               e->bytes == r->nbytes && !r->borrowed && !r->device && (e->state & ON_DEV);
    if (own) {
      tensor_device *dv = malloc(sizeof *dv);
      if (!dv) return cpu_oom();
      *dv = (tensor_device){e->dev, x->be, (e->state & ON_HOST) != 0, true, release_own_copy};
      r->device = dv;
      e->dev = NULL; /* the result's now: drop_entry frees nothing */
      e->lent = true;
      return NULL;
    }
  }
  return cpu_dev_host_in(x, r->data, r->nbytes);
}
