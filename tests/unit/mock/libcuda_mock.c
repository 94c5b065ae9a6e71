/* libcuda_mock.c — a fake libcuda for the CUDA unit tests: host memory,
 * launches recorded (or handed to a test's hook), graphs replaying the
 * records. What it does and the symbols a test reads: libcuda_mock.h.
 * The Makefile builds it into $(BUILD)/tests/libcuda_mock.so.
 *
 * The result codes are the driver's (cuda.h's CUresult): 1 INVALID_VALUE,
 * 2 OUT_OF_MEMORY, 101 INVALID_DEVICE, 200 INVALID_IMAGE, 201
 * INVALID_CONTEXT, 500 NOT_FOUND, 801 NOT_SUPPORTED, 900
 * STREAM_CAPTURE_UNSUPPORTED, 901 STREAM_CAPTURE_INVALIDATED. Handles are
 * fixed small integers (the context 0x1c7, the stream 0x57e, the memory
 * pool 0x9001, the capture's graph 0x96a, the PTX module 0xc0d). */
#include <ctype.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include "libcuda_mock.h"

typedef unsigned long long dptr;

static __thread void *current;
static void *const the_ctx = (void *)0x1c7;
static void *const the_stream = (void *)0x57e;
#define NEED_CTX                                                                  \
  do {                                                                            \
    if (current != the_ctx) return 201; /* CUDA_ERROR_INVALID_CONTEXT */          \
  } while (0)

/* stream capture: 0 none, 1 capturing, 2 invalidated by a call that
 * cannot be captured */
static int capturing;
int mock_capture_faults, mock_capture_mode;
#define NO_CAPTURE                                                                \
  do {                                                                            \
    if (capturing) {                                                              \
      capturing = 2;                                                              \
      mock_capture_faults++;                                                      \
      return 900;                                                                 \
    }                                                                             \
  } while (0)

mock_hook_fn mock_hook;

/* ---- errors, the device, the context ---- */

int cuGetErrorName(int e, const char **s) {
  *s = e == 201   ? "CUDA_ERROR_INVALID_CONTEXT"
       : e == 200 ? "CUDA_ERROR_INVALID_IMAGE"
       : e == 2   ? "CUDA_ERROR_OUT_OF_MEMORY"
       : e == 1   ? "CUDA_ERROR_INVALID_VALUE"
       : e == 101 ? "CUDA_ERROR_INVALID_DEVICE"
       : e == 500 ? "CUDA_ERROR_NOT_FOUND"
       : e == 801 ? "CUDA_ERROR_NOT_SUPPORTED"
       : e == 900 ? "CUDA_ERROR_STREAM_CAPTURE_UNSUPPORTED"
       : e == 901 ? "CUDA_ERROR_STREAM_CAPTURE_INVALIDATED"
                  : NULL;
  return *s ? 0 : 1;
}

int cuGetErrorString(int e, const char **s) {
  (void)e;
  *s = "mock";
  return 0;
}

int cuInit(unsigned f) { return f ? 1 : 0; }

int cuDriverGetVersion(int *v) {
  *v = 13000;
  return 0;
}

int cuDeviceGet(int *d, int o) {
  *d = o;
  return o ? 101 : 0;
}

int cuDeviceGetCount(int *c) {
  *c = 1;
  return 0;
}

int cuDeviceGetName(char *n, int len, int d) {
  (void)d;
  strncpy(n, "Mock GPU", (size_t)len);
  return 0;
}

/* 16 the SMs: 132; 41 unified addressing: 1; 75 / 76 the compute
 * capability: 9.0; 97 the shared memory a block may opt into: an H200's
 * 227 KiB */
int cuDeviceGetAttribute(int *v, int a, int d) {
  (void)d;
  *v = a == 16 ? 132 : a == 41 ? 1 : a == 75 ? 9 : a == 76 ? 0 : a == 97 ? 232448 : 0;
  return 0;
}

int cuDeviceTotalMem_v2(size_t *b, int d) {
  (void)d;
  *b = (size_t)1 << 30;
  return 0;
}

int cuDevicePrimaryCtxRetain(void **c, int d) {
  (void)d;
  *c = the_ctx;
  return 0;
}

int cuCtxSetCurrent(void *c) {
  current = c;
  return 0;
}

/* ---- memory ---- */

int cuMemAlloc_v2(dptr *p, size_t n) {
  NEED_CTX;
  if (!n) return 1;
  if (n > ((size_t)1 << 40)) return 2;
  void *m = calloc(1, n); /* zeroed: a loop's predicate read before any kernel ran is false */
  if (!m) return 2;
  *p = (dptr)(uintptr_t)m;
  return 0;
}

int cuMemFree_v2(dptr p) {
  NEED_CTX;
  free((void *)(uintptr_t)p);
  return 0;
}

int cuMemAllocAsync(dptr *p, size_t n, void *st) {
  if (st != the_stream) return 1;
  NO_CAPTURE;
  return cuMemAlloc_v2(p, n);
}

int cuMemFreeAsync(dptr p, void *st) {
  NO_CAPTURE;
  return st != the_stream ? 1 : cuMemFree_v2(p);
}

int cuDeviceGetDefaultMemPool(void **p, int d) {
  (void)d;
  *p = (void *)0x9001;
  return 0;
}

/* only the release threshold (4), set to "never release" */
int cuMemPoolSetAttribute(void *p, int a, void *v) {
  return p == (void *)0x9001 && a == 4 && *(unsigned long long *)v == ~0ull ? 0 : 1;
}

int cuMemcpyAsync(dptr d, dptr s, size_t n, void *st) {
  NEED_CTX;
  NO_CAPTURE;
  if (st != the_stream) return 1;
  memmove((void *)(uintptr_t)d, (void *)(uintptr_t)s, n);
  return 0;
}

int cuMemcpyHtoDAsync_v2(dptr d, const void *s, size_t n, void *st) {
  return cuMemcpyAsync(d, (dptr)(uintptr_t)s, n, st);
}

int cuMemcpyDtoHAsync_v2(void *d, dptr s, size_t n, void *st) {
  return cuMemcpyAsync((dptr)(uintptr_t)d, s, n, st);
}

int cuMemsetD8Async(dptr d, unsigned char v, size_t n, void *st) {
  NEED_CTX;
  NO_CAPTURE;
  if (st != the_stream) return 1;
  memset((void *)(uintptr_t)d, v, n);
  return 0;
}

/* ---- streams, modules, functions ---- */

int cuStreamCreate(void **s, unsigned f) {
  NEED_CTX;
  if (f != 1) return 1; /* CU_STREAM_NON_BLOCKING */
  *s = the_stream;
  return 0;
}

int cuStreamSynchronize(void *s) {
  NEED_CTX;
  NO_CAPTURE;
  return s == the_stream ? 0 : 1;
}

int mock_modules, mock_ptx_modules;

int cuModuleLoadData(void **m, const void *img) {
  NEED_CTX;
  if (memcmp(img, "\177ELF", 4)) return 200;
  *m = malloc(1);
  if (!*m) return 2;
  mock_modules++;
  return 0;
}

/* the conditional nodes' setters (cuda_graph_cond.c's PTX) */
int cuModuleLoadDataEx(void **m, const void *img, unsigned n, int *o, void **v) {
  NEED_CTX;
  (void)n, (void)o, (void)v;
  if (!strstr((const char *)img, ".entry hlo_cond_set") ||
      !strstr((const char *)img, ".entry hlo_cond_index") ||
      !strstr((const char *)img, "cudaGraphSetConditional"))
    return 200;
  *m = (void *)0xc0d, mock_ptx_modules++;
  return 0;
}

int cuModuleUnload(void *m) {
  NEED_CTX;
  free(m);
  mock_modules--;
  return 0;
}

#define COND_SET ((void *)0x5e7)   /* hlo_cond_set: a WHILE's */
#define COND_INDEX ((void *)0x5e8) /* hlo_cond_index: an IF's or SWITCH's */
enum { OURS = 0x1000, LIBRARY = 0x100000, MAX_NAMES = 4096 };

/* every name asked for, with its handle (emulating launches look it up) */
static struct {
  char *name;
  void *f;
} names[MAX_NAMES];
static int num_names;

int cuModuleGetFunction(void **f, void *m, const char *name) {
  NEED_CTX;
  if (!m) return 500;
  for (int i = 0; i < num_names; i++)
    if (!strcmp(names[i].name, name)) {
      *f = names[i].f;
      return 0;
    }
  if (num_names == MAX_NAMES) return 500;
  void *h;
  if (!strcmp(name, "hlo_cond_set")) h = COND_SET;
  else if (!strcmp(name, "hlo_cond_index")) h = COND_INDEX;
  else if (name[0] == 'k' && isdigit((unsigned char)name[1])) h = (void *)(uintptr_t)(OURS + atoi(name + 1));
  else h = (void *)(uintptr_t)(LIBRARY + num_names);
  char *copy = strdup(name);
  if (!copy) return 2;
  names[num_names].name = copy, names[num_names++].f = h;
  *f = h;
  return 0;
}

int mock_func_shared[64], mock_shared_optin;

int cuFuncSetAttribute(void *f, int a, int v) {
  NEED_CTX;
  if (a == 8) { /* CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES */
    mock_shared_optin = v;
    uintptr_t h = (uintptr_t)f;
    if (h >= OURS && h < LIBRARY) mock_func_shared[(h - OURS) & 63] = v;
  }
  return 0;
}

/* ---- launches ---- */

/* the last launch; every launch run (eager or by a graph) in mock_log */
int mock_launches, mock_kernel;
unsigned mock_grid, mock_block, mock_shared;
void *mock_bufs[64];
long long mock_tile_begin, mock_tile_end;
mock_rec mock_log[1024];
int mock_nlog, mock_graph_launches, mock_graphs;
static mock_rec cap[1024]; /* the capture's launches */
static int ncap;

/* The capture's dependencies (a DAG on one stream): its top-level launch i
 * is the node LNODE(i); cur[0..ncur) the nodes the next call follows
 * (cuStreamGetCaptureInfo_v3 gives them, cuStreamUpdateCaptureDependencies_v2
 * replaces them); each node's edges in mock_edge_from / _to (node ids:
 * a launch's index in the capture, a conditional node -1 - its number
 * among the capture's conditional nodes). */
#define LNODE(i) ((void *)(uintptr_t)(0x7000000 + (i)))
static void *cur[256];
static int ncur, cap_conds, cap_cond0;
int mock_edge_from[8192], mock_edge_to[8192], mock_nedges, mock_dag_nodes, mock_dag_faults;

/* The id of node handle h of this capture, or INT32_MIN. */
static int node_id(const void *h) {
  uintptr_t v = (uintptr_t)h;
  if (v >= 0x7000000 && v < 0x7000000 + (uintptr_t)ncap) return (int)(v - 0x7000000);
  if (v >= 0x40de + (uintptr_t)cap_cond0 && v < 0x40de + (uintptr_t)cap_cond0 + (uintptr_t)cap_conds)
    return -1 - (int)(v - 0x40de - (uintptr_t)cap_cond0);
  return INT32_MIN;
}

/* Node `to` follows nodes deps[0..n) (each one of this capture, or a fault). */
static void add_edges(int to, void *const *deps, size_t n) {
  mock_dag_nodes++;
  for (size_t i = 0; i < n; i++) {
    int from = node_id(deps[i]);
    if (from == INT32_MIN) mock_dag_faults++;
    if (mock_nedges < 8192) mock_edge_from[mock_nedges] = from, mock_edge_to[mock_nedges++] = to;
  }
}

static void run_rec(const mock_rec *r) {
  mock_launches++;
  mock_kernel = (int)((uintptr_t)r->f - OURS);
  mock_grid = r->g, mock_block = r->b, mock_shared = r->sh;
  memcpy(mock_bufs, r->bufs, sizeof mock_bufs);
  mock_tile_begin = r->t0, mock_tile_end = r->t1;
  if (mock_nlog < 1024) mock_log[mock_nlog++] = *r;
}

/* conditional nodes (CUDA 12.4): the capture's structure (libcuda_mock.h) */
char mock_trace[4096];
int mock_ntrace, mock_nodes;
static int body_depth;
unsigned long long mock_set_handle, mock_handles;
void *mock_set_pred;
unsigned mock_set_size, mock_set_bit, mock_index_mode, mock_index_n;
int mock_node_type, mock_node_cond_type, mock_node_size;
static void *bodies[256];
static int nbodies;

static void trace(char c) {
  if (mock_ntrace < 4095) mock_trace[mock_ntrace++] = c, mock_trace[mock_ntrace] = 0;
}

/* hands the launch to mock_hook: 1 for a handle no name was given */
static int emulate(void *f, const unsigned *geo, void **params) {
  for (int i = 0; i < num_names; i++)
    if (names[i].f == f) {
      mock_launches++;
      mock_hook(names[i].name, geo, params);
      return 0;
    }
  return 1;
}

int cuLaunchKernel(void *f, unsigned gx, unsigned gy, unsigned gz, unsigned bx, unsigned by,
                   unsigned bz, unsigned sh, void *st, void **params, void **extra) {
  NEED_CTX;
  if (st != the_stream || extra || !params) return 1;
  if (mock_hook) {
    unsigned geo[7] = {gx, gy, gz, bx, by, bz, sh};
    return emulate(f, geo, params);
  }
  if (gy != 1 || gz != 1 || by != 1 || bz != 1) return 1;
  if (f == COND_SET) { /* a WHILE's setter: traced, not logged */
    if (capturing != 1) return 1;
    mock_set_handle = *(unsigned long long *)params[0], mock_set_pred = *(void **)params[1];
    mock_set_size = *(unsigned *)params[2], mock_set_bit = *(unsigned *)params[3];
    trace('S');
    return 0;
  }
  if (f == COND_INDEX) { /* an IF's or SWITCH's setter */
    if (capturing != 1) return 1;
    mock_set_handle = *(unsigned long long *)params[0], mock_set_pred = *(void **)params[1];
    mock_set_size = *(unsigned *)params[2], mock_index_mode = *(unsigned *)params[3];
    mock_index_n = *(unsigned *)params[4];
    trace('I');
    return 0;
  }
  mock_rec r;
  memset(&r, 0, sizeof r);
  r.f = f, r.g = gx, r.b = bx, r.sh = sh;
  if ((uintptr_t)f < LIBRARY) { /* ours: (bufs, tile_begin, tile_end) */
    memcpy(r.bufs, params[0], sizeof r.bufs);
    r.t0 = *(long long *)params[1], r.t1 = *(long long *)params[2];
  } else { /* a library kernel: its first pointer parameters */
    for (int i = 1; i < 3 && params[i]; i++) r.bufs[i - 1] = *(void **)params[i];
  }
  if (capturing == 1) trace(body_depth ? 'b' : 'k');
  if (capturing == 1 && ncap < 1024) {
    if (!body_depth) { /* a node of the capture's graph: after cur, then the only one in cur */
      add_edges(ncap, cur, (size_t)ncur);
      cur[0] = LNODE(ncap), ncur = 1;
    }
    cap[ncap++] = r;
    return 0;
  }
  if (capturing) return 901;
  run_rec(&r);
  return 0;
}

/* ---- graphs ---- */

typedef struct graph {
  int n;
  mock_rec *r;
} graph;

int cuStreamBeginCapture_v2(void *s, int m) {
  NEED_CTX;
  if (mock_hook) return 801; /* emulated launches cannot be replayed */
  if (s != the_stream || capturing) return 1;
  capturing = 1, ncap = 0, mock_capture_mode = m, mock_ntrace = 0, body_depth = 0;
  ncur = 0, mock_nedges = 0, mock_dag_nodes = 0, cap_conds = 0, cap_cond0 = mock_nodes;
  return 0;
}

int cuStreamEndCapture(void *s, void **g) {
  NEED_CTX;
  *g = 0;
  if (s != the_stream || !capturing) return 1;
  if (body_depth) { /* a conditional node's body */
    body_depth--;
    *g = (void *)0xb0d0;
    trace('}');
    return capturing == 2 ? 901 : 0;
  }
  int bad = capturing == 2;
  capturing = 0;
  if (bad) return 901;
  graph *gr = malloc(sizeof *gr);
  if (!gr) return 2;
  gr->n = ncap;
  gr->r = malloc((size_t)(ncap ? ncap : 1) * sizeof *gr->r);
  if (!gr->r) {
    free(gr);
    return 2;
  }
  memcpy(gr->r, cap, (size_t)ncap * sizeof *gr->r);
  *g = gr;
  return 0;
}

int cuGraphInstantiateWithFlags(void **e, void *g, unsigned long long f) {
  NEED_CTX;
  graph *src = g;
  if (!src || f) return 1;
  graph *gr = malloc(sizeof *gr);
  if (!gr) return 2;
  gr->n = src->n;
  gr->r = malloc((size_t)(src->n ? src->n : 1) * sizeof *gr->r);
  if (!gr->r) {
    free(gr);
    return 2;
  }
  memcpy(gr->r, src->r, (size_t)src->n * sizeof *gr->r);
  mock_graphs++;
  *e = gr;
  return 0;
}

int cuGraphLaunch(void *e, void *s) {
  NEED_CTX;
  graph *gr = e;
  if (!gr || s != the_stream || capturing) return 1;
  mock_graph_launches++;
  for (int i = 0; i < gr->n; i++) run_rec(&gr->r[i]);
  return 0;
}

int cuGraphExecDestroy(void *e) {
  NEED_CTX;
  graph *g = e;
  free(g->r);
  free(g);
  mock_graphs--;
  return 0;
}

int cuGraphDestroy(void *g) {
  NEED_CTX;
  graph *gr = g;
  free(gr->r);
  free(gr);
  return 0;
}

/* ---- conditional nodes (CUDA 12.4) ---- */

int cuStreamGetCaptureInfo_v3(void *s, int *st, unsigned long long *id, void **g,
                              const void **deps, const void **edges, size_t *nd) {
  NEED_CTX;
  (void)id;
  if (s != the_stream) return 1;
  *st = capturing == 1, *g = capturing ? (void *)0x96a : 0, *deps = 0, *edges = 0, *nd = 0;
  if (capturing == 1 && !body_depth) *deps = (const void *)cur, *nd = (size_t)ncur;
  return 0;
}

int cuGraphConditionalHandleCreate(unsigned long long *h, void *g, void *ctx, unsigned v,
                                   unsigned f) {
  NEED_CTX;
  if (g != (void *)0x96a || ctx != the_ctx || v || f) return 1;
  *h = ++mock_handles;
  trace('H');
  return 0;
}

/* CUgraphNodeParams: the type (13: CONDITIONAL), then at byte 16 the
 * conditional's parameters */
typedef struct cond_params {
  unsigned long long handle;
  int type; /* 0 IF, 1 WHILE, 2 SWITCH */
  unsigned size;
  void **out;
  void *ctx;
} cond_params;

int cuGraphAddNode_v2(void **node, void *g, const void *deps, const void *edges, size_t nd,
                      void *params) {
  NEED_CTX;
  (void)deps, (void)edges, (void)nd;
  int *p = params;
  cond_params *c = (cond_params *)((char *)params + 16);
  if (g != (void *)0x96a || capturing != 1) return 1;
  mock_node_type = p[0], mock_node_cond_type = c->type, mock_node_size = (int)c->size;
  if (c->type == 2) trace('X'); /* a SWITCH (then W) */
  if (p[0] != 13 || c->ctx != the_ctx || c->handle != mock_handles || !c->size ||
      nbodies + (int)c->size > 256)
    return 1;
  if (c->type == 1 ? c->size != 1 : c->type != 2) return 1; /* a WHILE of one body, or a SWITCH */
  for (unsigned k = 0; k < c->size; k++)
    bodies[nbodies + (int)k] = (void *)(uintptr_t)(0xb0d0 + nbodies + (int)k);
  c->out = &bodies[nbodies];
  nbodies += (int)c->size;
  if (!body_depth) add_edges(-1 - cap_conds, (void *const *)deps, nd);
  cap_conds++;
  *node = (void *)(uintptr_t)(0x40de + mock_nodes++);
  trace('W');
  return 0;
}

int cuStreamUpdateCaptureDependencies_v2(void *s, void **deps, const void *e, size_t n,
                                         unsigned f) {
  NEED_CTX;
  (void)e;
  if (s != the_stream || capturing != 1 || f != 1 || n > 256 || (n && !deps)) return 1;
  for (size_t i = 0; i < n; i++)
    if (node_id(deps[i]) == INT32_MIN) return 1; /* not a node of this capture */
  if (!body_depth) {
    memmove(cur, deps, n * sizeof *cur);
    ncur = (int)n;
  }
  return 0;
}

int cuStreamBeginCaptureToGraph(void *s, void *g, const void *d, const void *e, size_t n,
                                int m) {
  NEED_CTX;
  (void)d, (void)e, (void)n;
  if (s != the_stream || capturing != 1 || !g || m != 2) return 1;
  body_depth++;
  trace('{');
  return 0;
}

/* ---- events: no time passes ---- */

int cuEventCreate(void **e, unsigned f) {
  (void)f;
  *e = 0;
  return 0;
}

int cuEventRecord(void *e, void *s) {
  (void)e, (void)s;
  return 0;
}

int cuEventSynchronize(void *e) {
  (void)e;
  return 0;
}

int cuEventElapsedTime(float *ms, void *a, void *b) {
  (void)a, (void)b;
  *ms = 0;
  return 0;
}

int cuEventDestroy_v2(void *e) {
  (void)e;
  return 0;
}
