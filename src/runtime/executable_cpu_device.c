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
 * A device step (kernel, gemm; conv, window, sort when the backend has
 * the slot; data movement — dynamic_slice, dynamic_update_slice, pad,
 * splat fills, row gather / scatter — when it has copy_box, fill_box,
 * gather_rows, scatter_rows, after downloading only the few bytes of start
 * indices or pad value) takes device pointers: its inputs are uploaded
 * where the device copy is stale (cpu_dev_in), its outputs marked valid on
 * the device only (cpu_dev_out). Every other step (interpreter thunks,
 * while/case predicates, the host forms of the above) runs on the host
 * mirror: its inputs are downloaded where the host copy is stale
 * (cpu_dev_host_in), its outputs marked valid on the host only
 * (cpu_dev_host_out). Copies between buffers (cpu_dev_copy) run device to
 * device when the source is valid there. So a program of device steps
 * only copies its arguments in and its results out; a while loop's
 * predicate is one small download per iteration.
 *
 * Arguments and results that stay on the device: an argument tensor
 * carrying a device copy of this backend (tensor.device: a caller's
 * hlo_buffer from hlo_executable_device_put or an earlier run) is
 * registered before the run as a LENT entry (valid on the device, its
 * device memory the caller's, never freed here: cpu_dev_begin_run); after
 * the run a result whose bytes are in a device buffer of its own is handed
 * that buffer (cpu_dev_result: tensor.device, owned), so neither is
 * copied. */
#include <stdlib.h>
#include <string.h>
#include "runtime/executable_cpu_internal.h"
#include "support/runmap.h"

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
   * runs (support/runmap.h): a step's bookkeeping costs O(runs), not
   * O(bytes / 64) (a 128 MiB buffer is 2M granules, one run) */
  runmap granules;
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
  d->arena = x->be->alloc(bytes);
  if (!d->arena) {
    runmap_free(&d->granules);
    return status_new(HLO_RESOURCE_EXHAUSTED, "out of device memory for %zu bytes of "
                      "temporaries", bytes);
  }
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

/* Moves the granules [g0, g1) of the arena that lack `want` (and hold the
 * other side's valid bytes) to that side. */
static hlo_status arena_sync(const cpu_exec *x, size_t g0, size_t g1, uint8_t want) {
  cpu_dev *d = x->dev;
  uint8_t other = want == ON_DEV ? ON_HOST : ON_DEV;
  size_t g = g0;
  while (g < g1) {
    size_t e;
    uint8_t s = d->granules.state[runmap_find(&d->granules, g, &e)];
    if (e > g1) e = g1;
    if (!(s & want) && (s & other)) {
      size_t off = g * GRANULE, n = (e - g) * GRANULE;
      if (want == ON_DEV) HLO_TRY(be_copy(x, d->arena + off, d->host_arena + off, n));
      else HLO_TRY(be_download(x, d->host_arena + off, d->arena + off, n));
      HLO_TRY(runmap_set(&d->granules, g, e, s | want));
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

/* The entry for tensor memory host[0..bytes) (owner: its tensor, or NULL
 * when unknown: then none is made), made when missing; -1 when none. */
static hlo_status entry_of(cpu_exec *x, tensor *owner, uint8_t *host, size_t bytes, bool make,
                           int64_t *out) {
  cpu_dev *d = x->dev;
  *out = find(d, host);
  if (*out >= 0 || !make || !owner) return NULL;
  void *dev = x->be->alloc(bytes);
  if (!dev)
    return status_new(HLO_RESOURCE_EXHAUSTED, "out of device memory for a buffer of %zu bytes",
                      bytes);
  uint32_t i = 0;
  hlo_status st = entry_slot(d, &i);
  if (st) {
    x->be->free(dev);
    return st;
  }
  d->e[i] = (dev_entry){host, bytes, dev, ON_HOST, false, false, tensor_retain(owner)};
  *out = i;
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
    return runmap_set(&d->granules, g0, g1, ON_HOST);
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
    for (size_t g = g0, e; g < g1; g = e)
      if (!(d->granules.state[runmap_find(&d->granules, g, &e)] & ON_DEV)) return false;
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
    for (size_t g = g0, e; g < g1; g = e)
      if (d->granules.state[runmap_find(&d->granules, g, &e)] == ON_DEV) return false;
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
