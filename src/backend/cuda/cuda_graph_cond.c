/* cuda_graph_cond.c — conditional nodes in a graph recording (the
 * backend's graph_cond_* slots; contract in backend.h).
 *
 * CUDA 12.4's conditional graph nodes (cuda.h: CUDA_CONDITIONAL_NODE_PARAMS)
 * run a body graph while a condition, a value of the graph set on the device
 * by cudaGraphSetConditional, is non-zero (WHILE: a loop whose trip count
 * the device decides replays with no host round trip per iteration), or
 * run body n of several, n the condition (SWITCH, CUDA 12.8: our IF and
 * SWITCH kinds, a stablehlo.if / case whose selector the device holds).
 *
 * The setter: cudaGraphSetConditional is a device-runtime builtin (an
 * `.extern .func` in PTX; a cubin would need libcudadevrt), which the
 * driver's JIT resolves when it loads PTX text: so the one kernel that
 * calls it, hlo_cond_set(handle, pred, size, bit) — the condition is the
 * integer of `size` bytes at pred, non-zero (bit: its bit 0 only: an i1) —
 * is written here in PTX (as nvcc 13.0 prints it for the CUDA C in the
 * comment below; ISA 8.4, sm_70: any driver of 12.4 on and any GPU since
 * Volta), with hlo_cond_index(handle, pred, size, mode, n), the branch of
 * an IF (mode 1: 0 when bit 0 of the byte is set, else 1) or of a SWITCH
 * (mode 2 a signed, 0 an unsigned integer index; outside [0, n) the last,
 * n - 1: stablehlo.case's rule) and loaded with cuModuleLoadDataEx once per process, in the
 * primary context, on the first graph_cond_takes.
 *
 * Recording (inside graph_begin / graph_end's stream capture):
 * graph_cond_begin takes the capture's graph and dependencies
 * (cuStreamGetCaptureInfo_v3), makes a handle in that graph
 * (cuGraphConditionalHandleCreate, default 0, no reset flag: the node's
 * condition is set before it on each launch), records the setter on the
 * capture stream, adds the WHILE node after it (cuGraphAddNode_v2 on the
 * dependencies the setter left), makes the node the capture's only
 * dependency (cuStreamUpdateCaptureDependencies_v2) and starts capturing
 * the node's body graph on a stream of its own (cuStreamBeginCaptureToGraph;
 * one per nesting depth, made on the thread's first use, kept); every slot
 * then records there (cuda_capture_set_stream: the thread's state's stream).
 * graph_cond_set records the setter on the body's stream; graph_cond_next
 * ends a SWITCH's body's capture and begins its next body's; graph_cond_end
 * ends the body's capture (the body graph is the node's: never destroyed
 * here) and goes back to the outer stream. Bodies nest up to COND_MAX_DEPTH.
 *
 * Needs the driver's cuDriverGetVersion >= 12040 and its six optional entry
 * points (cuda_api.h: CUDA_DRIVER_OPTIONAL_FUNCTIONS); graph_cond_takes is
 * false otherwise, and the runtime keeps its path without them. */
#include <pthread.h>
#include <stdio.h>
#include <string.h>
#include "backend/cuda/cuda_api.h"
#include "support/status.h"

enum { COND_MAX_DEPTH = 8, COND_MIN_DRIVER = 12040, COND_MIN_DRIVER_SWITCH = 12080,
       COND_MAX_BRANCHES = 1024 };

/* extern "C" __global__ void hlo_cond_set(cudaGraphConditionalHandle h,
 *     const unsigned char *p, unsigned size, unsigned bit) {
 *   unsigned long long v = size == 1 ? p[0] : size == 2 ? *(const unsigned short *)p
 *       : size == 4 ? *(const unsigned *)p : *(const unsigned long long *)p;
 *   if (bit) v &= 1;
 *   cudaGraphSetConditional(h, v != 0);
 * } */
/* extern "C" __global__ void hlo_cond_index(cudaGraphConditionalHandle h,
 *     const unsigned char *p, unsigned size, unsigned mode, unsigned n) {
 *   unsigned long long u; long long sv;  // p's integer, zero- and sign-extended
 *   ... (loads of 1, 2, 4 or 8 bytes as above)
 *   unsigned b = mode == 1 ? ((u & 1) ? 0 : 1)
 *              : mode == 2 ? (sv < 0 || sv >= n ? n - 1 : sv) : (u >= n ? n - 1 : u);
 *   cudaGraphSetConditional(h, b);
 * } */
static const char cond_ptx[] =
    "//\n// hlo: the condition setter of conditional graph nodes (cuda_graph_cond.c)\n//\n"
    ".version 8.4\n"
    ".target sm_70\n"
    ".address_size 64\n"
    ".extern .func cudaGraphSetConditional\n"
    "(\n"
    "\t.param .b64 cudaGraphSetConditional_param_0,\n"
    "\t.param .b32 cudaGraphSetConditional_param_1\n"
    ")\n"
    ";\n"
    ".visible .entry hlo_cond_set(\n"
    "\t.param .u64 hlo_cond_set_param_0,\n"
    "\t.param .u64 hlo_cond_set_param_1,\n"
    "\t.param .u32 hlo_cond_set_param_2,\n"
    "\t.param .u32 hlo_cond_set_param_3\n"
    ")\n"
    "{\n"
    "\t.reg .pred %p<6>;\n"
    "\t.reg .b32 %r<4>;\n"
    "\t.reg .b64 %rd<12>;\n"
    "\tld.param.u64 %rd7, [hlo_cond_set_param_0];\n"
    "\tld.param.u64 %rd8, [hlo_cond_set_param_1];\n"
    "\tld.param.u32 %r1, [hlo_cond_set_param_2];\n"
    "\tld.param.u32 %r2, [hlo_cond_set_param_3];\n"
    "\tcvta.to.global.u64 %rd1, %rd8;\n"
    "\tsetp.eq.s32 %p1, %r1, 1;\n"
    "\t@%p1 bra $L__BB0_5;\n"
    "\tsetp.eq.s32 %p2, %r1, 2;\n"
    "\t@%p2 bra $L__BB0_4;\n"
    "\tsetp.ne.s32 %p3, %r1, 4;\n"
    "\t@%p3 bra $L__BB0_6;\n"
    "\tld.global.u32 %rd11, [%rd1];\n"
    "\tbra.uni $L__BB0_7;\n"
    "$L__BB0_5:\n"
    "\tld.global.u8 %rd11, [%rd1];\n"
    "\tbra.uni $L__BB0_7;\n"
    "$L__BB0_4:\n"
    "\tld.global.u16 %rd11, [%rd1];\n"
    "\tbra.uni $L__BB0_7;\n"
    "$L__BB0_6:\n"
    "\tld.global.u64 %rd11, [%rd1];\n"
    "$L__BB0_7:\n"
    "\tand.b64 %rd9, %rd11, 1;\n"
    "\tsetp.eq.s32 %p4, %r2, 0;\n"
    "\tselp.b64 %rd10, %rd11, %rd9, %p4;\n"
    "\tsetp.ne.s64 %p5, %rd10, 0;\n"
    "\tselp.u32 %r3, 1, 0, %p5;\n"
    "\t{\n"
    "\t.param .b64 param0;\n"
    "\tst.param.b64 [param0+0], %rd7;\n"
    "\t.param .b32 param1;\n"
    "\tst.param.b32 [param1+0], %r3;\n"
    "\tcall.uni cudaGraphSetConditional, (param0, param1);\n"
    "\t}\n"
    "\tret;\n"
    "}\n"
    ".visible .entry hlo_cond_index(\n"
    ".param .u64 hlo_cond_index_param_0,\n"
    ".param .u64 hlo_cond_index_param_1,\n"
    ".param .u32 hlo_cond_index_param_2,\n"
    ".param .u32 hlo_cond_index_param_3,\n"
    ".param .u32 hlo_cond_index_param_4\n"
    ")\n"
    "{\n"
    ".reg .pred  %p<10>;\n"
    ".reg .b16  %rs<2>;\n"
    ".reg .b32  %r<14>;\n"
    ".reg .b64  %rd<18>;\n"
    "ld.param.u64  %rd11, [hlo_cond_index_param_0];\n"
    "ld.param.u64  %rd12, [hlo_cond_index_param_1];\n"
    "ld.param.u32  %r5, [hlo_cond_index_param_2];\n"
    "ld.param.u32  %r6, [hlo_cond_index_param_3];\n"
    "ld.param.u32  %r7, [hlo_cond_index_param_4];\n"
    "cvta.to.global.u64  %rd1, %rd12;\n"
    "setp.eq.s32  %p1, %r5, 1;\n"
    "@%p1 bra  $L__BB1_5;\n"
    "setp.eq.s32  %p2, %r5, 2;\n"
    "@%p2 bra  $L__BB1_4;\n"
    "setp.ne.s32  %p3, %r5, 4;\n"
    "@%p3 bra  $L__BB1_6;\n"
    "ld.global.u32  %r8, [%rd1];\n"
    "cvt.u64.u32  %rd16, %r8;\n"
    "cvt.s64.s32  %rd17, %r8;\n"
    "bra.uni  $L__BB1_7;\n"
    "$L__BB1_5:\n"
    "ld.global.s8  %rd17, [%rd1];\n"
    "and.b64   %rd16, %rd17, 255;\n"
    "bra.uni  $L__BB1_7;\n"
    "$L__BB1_4:\n"
    "ld.global.u16  %rs1, [%rd1];\n"
    "cvt.u64.u16  %rd16, %rs1;\n"
    "cvt.s64.s16  %rd17, %rs1;\n"
    "bra.uni  $L__BB1_7;\n"
    "$L__BB1_6:\n"
    "ld.global.u64  %rd16, [%rd1];\n"
    "mov.u64  %rd17, %rd16;\n"
    "$L__BB1_7:\n"
    "setp.eq.s32  %p4, %r6, 1;\n"
    "@%p4 bra  $L__BB1_10;\n"
    "setp.ne.s32  %p5, %r6, 2;\n"
    "@%p5 bra  $L__BB1_11;\n"
    "cvt.u64.u32  %rd13, %r7;\n"
    "setp.lt.u64  %p6, %rd17, %rd13;\n"
    "cvt.u32.u64  %r9, %rd17;\n"
    "add.s32  %r10, %r7, -1;\n"
    "selp.b32  %r13, %r9, %r10, %p6;\n"
    "bra.uni  $L__BB1_12;\n"
    "$L__BB1_10:\n"
    "and.b64   %rd14, %rd16, 1;\n"
    "setp.eq.b64  %p7, %rd14, 1;\n"
    "not.pred  %p8, %p7;\n"
    "selp.u32  %r13, 1, 0, %p8;\n"
    "bra.uni  $L__BB1_12;\n"
    "$L__BB1_11:\n"
    "cvt.u64.u32  %rd15, %r7;\n"
    "setp.lt.u64  %p9, %rd16, %rd15;\n"
    "cvt.u32.u64  %r11, %rd16;\n"
    "add.s32  %r12, %r7, -1;\n"
    "selp.b32  %r13, %r11, %r12, %p9;\n"
    "$L__BB1_12:\n"
    "{\n"
    ".param .b64 param0;\n"
    "st.param.b64  [param0+0], %rd11;\n"
    ".param .b32 param1;\n"
    "st.param.b32  [param1+0], %r13;\n"
    "call.uni cudaGraphSetConditional, (param0, param1);\n"
    "}\n"
    "ret;\n"
    "}\n";

static pthread_once_t load_once = PTHREAD_ONCE_INIT;
static CUmodule cond_module;
static CUfunction cond_fn;   /* NULL: not loaded (the driver cannot) */
static CUfunction index_fn;  /* hlo_cond_index: IF and SWITCH */
static char load_error[256];

/* A body open on this thread: the stream recording around it, its own,
 * the node's handle. */
typedef struct cond_frame {
  CUstream outer, body;
  CUgraphConditionalHandle h;
  CUgraph *bodies;          /* the node's (the driver's array) */
  uint32_t next, n;         /* the body being recorded, of n */
} cond_frame;
static _Thread_local cond_frame tl_frames[COND_MAX_DEPTH];
static _Thread_local uint32_t tl_depth;
static _Thread_local CUstream tl_body_streams[COND_MAX_DEPTH];

static bool has_entry_points(const cuda_driver_api *cu) {
  return cu->version >= COND_MIN_DRIVER && cu->cuModuleLoadDataEx &&
         cu->cuStreamGetCaptureInfo_v3 && cu->cuGraphConditionalHandleCreate &&
         cu->cuGraphAddNode_v2 && cu->cuStreamUpdateCaptureDependencies_v2 &&
         cu->cuStreamBeginCaptureToGraph;
}

static void load_module(void) {
  const cuda_device_state *s = cuda_state();
  hlo_status st = cuda_make_current(s, "loading the conditional nodes' setter");
  if (st) {
    snprintf(load_error, sizeof load_error, "%s", hlo_status_message(st));
    hlo_status_free(st);
    return;
  }
  if (!has_entry_points(s->cu)) {
    snprintf(load_error, sizeof load_error, "the driver (%d) lacks conditional graph nodes",
             s->cu->version);
    return;
  }
  char buf[160];
  CUresult r = s->cu->cuModuleLoadDataEx(&cond_module, cond_ptx, 0, NULL, NULL);
  if (!r) r = s->cu->cuModuleGetFunction(&cond_fn, cond_module, "hlo_cond_set");
  if (!r) r = s->cu->cuModuleGetFunction(&index_fn, cond_module, "hlo_cond_index");
  if (r) {
    cond_fn = index_fn = NULL;
    snprintf(load_error, sizeof load_error, "loading the setter's PTX: %s",
             cuda_result_text(s->cu, r, buf, sizeof buf));
  }
}

bool cuda_graph_cond_takes(const backend_cond *c) {
  const cuda_device_state *s = cuda_state();
  if (!s || !c || !has_entry_points(s->cu)) return false;
  if (c->pred_size != 1 && c->pred_size != 2 && c->pred_size != 4 && c->pred_size != 8)
    return false;
  if (c->kind != BACKEND_COND_WHILE &&
      !((c->kind == BACKEND_COND_IF && c->nbranches == 2) ||
        (c->kind == BACKEND_COND_SWITCH && c->nbranches >= 1)))
    return false;
  /* IF and SWITCH are SWITCH nodes: CUDA 12.8 */
  if (c->kind != BACKEND_COND_WHILE && s->cu->version < COND_MIN_DRIVER_SWITCH) return false;
  pthread_once(&load_once, load_module);
  return cond_fn != NULL;
}

/* Records the setter of handle h from c's predicate on stream st: a
 * WHILE's truth (hlo_cond_set), an IF's or a SWITCH's branch
 * (hlo_cond_index: mode 1 an IF, 2 a signed index, 0 an unsigned one). */
static hlo_status launch_setter(const cuda_device_state *s, CUstream st, CUgraphConditionalHandle h,
                                const backend_cond *c) {
  CUdeviceptr pred = (CUdeviceptr)(uintptr_t)c->pred;
  unsigned int size = c->pred_size, bit = c->pred_bit, n = c->nbranches;
  unsigned int mode = c->kind == BACKEND_COND_IF ? 1 : c->pred_signed ? 2 : 0;
  void *wparams[] = {&h, &pred, &size, &bit};
  void *iparams[] = {&h, &pred, &size, &mode, &n};
  CUresult r = c->kind == BACKEND_COND_WHILE
                   ? s->cu->cuLaunchKernel(cond_fn, 1, 1, 1, 1, 1, 1, 0, st, wparams, NULL)
                   : s->cu->cuLaunchKernel(index_fn, 1, 1, 1, 1, 1, 1, 0, st, iparams, NULL);
  return r ? cuda_error(s, r, "graph_cond (the setter's launch)") : NULL;
}

/* Begins capturing body k of frame f (depth d) on the depth's stream. */
static hlo_status begin_body(const cuda_device_state *s, cond_frame *f, uint32_t d, uint32_t k) {
  CUstream *bs = &tl_body_streams[d];
  CUresult r;
  if (!*bs) {
    r = s->cu->cuStreamCreate(bs, CU_STREAM_NON_BLOCKING);
    if (r) {
      *bs = NULL;
      return cuda_error(s, r, "graph_cond (cuStreamCreate)");
    }
  }
  if (!f->bodies || !f->bodies[k])
    return status_new(HLO_INTERNAL, "cuda: graph_cond: the node has no body graph %u", k);
  r = s->cu->cuStreamBeginCaptureToGraph(*bs, f->bodies[k], NULL, NULL, 0,
                                         CU_STREAM_CAPTURE_MODE_RELAXED);
  if (r) return cuda_error(s, r, "graph_cond (cuStreamBeginCaptureToGraph)");
  f->body = *bs;
  f->next = k;
  cuda_capture_set_stream(*bs);
  return NULL;
}

hlo_status cuda_graph_cond_begin(const backend_cond *c) {
  CUstream cs = cuda_capture_stream();
  if (!cs) return status_new(HLO_INVALID_ARGUMENT, "cuda: graph_cond_begin: no recording");
  if (!cuda_graph_cond_takes(c))
    return status_new(HLO_UNAVAILABLE, "cuda: no conditional graph nodes: %s",
                      load_error[0] ? load_error : "another kind or predicate size");
  if (tl_depth == COND_MAX_DEPTH)
    return status_new(HLO_INVALID_ARGUMENT, "cuda: conditional nodes nested over %d deep",
                      COND_MAX_DEPTH);
  const cuda_device_state *s = cuda_state();
  HLO_TRY(cuda_make_current(s, "graph_cond_begin"));
  const cuda_driver_api *cu = s->cu;
  int status = 0;
  CUgraph graph = NULL;
  const CUgraphNode *deps = NULL;
  const CUgraphEdgeData *edges = NULL;
  size_t nd = 0;
  CUgraphConditionalHandle h = 0;
  CUresult r = cu->cuStreamGetCaptureInfo_v3(cs, &status, NULL, &graph, &deps, &edges, &nd);
  if (r) return cuda_error(s, r, "graph_cond_begin (cuStreamGetCaptureInfo)");
  if (status != CU_STREAM_CAPTURE_STATUS_ACTIVE || !graph)
    return status_new(HLO_INTERNAL, "cuda: graph_cond_begin: the capture is not active");
  r = cu->cuGraphConditionalHandleCreate(&h, graph, s->ctx, 0, 0);
  if (r) return cuda_error(s, r, "graph_cond_begin (cuGraphConditionalHandleCreate)");
  HLO_TRY(launch_setter(s, cs, h, c));
  r = cu->cuStreamGetCaptureInfo_v3(cs, &status, NULL, &graph, &deps, &edges, &nd);
  if (r) return cuda_error(s, r, "graph_cond_begin (cuStreamGetCaptureInfo)");
  bool loop = c->kind == BACKEND_COND_WHILE;
  uint32_t n = loop ? 1 : c->nbranches;
  if (n > COND_MAX_BRANCHES)
    return status_new(HLO_INVALID_ARGUMENT, "cuda: a conditional node of %u branches", n);
  CUgraphNodeParams p;
  memset(&p, 0, sizeof p);
  p.type = CU_GRAPH_NODE_TYPE_CONDITIONAL;
  p.u.conditional.handle = h;
  p.u.conditional.type = loop ? CU_GRAPH_COND_TYPE_WHILE : CU_GRAPH_COND_TYPE_SWITCH;
  p.u.conditional.size = n;
  p.u.conditional.ctx = s->ctx;
  CUgraphNode node = NULL;
  r = cu->cuGraphAddNode_v2(&node, graph, deps, edges, nd, &p);
  if (r) return cuda_error(s, r, "graph_cond_begin (cuGraphAddNode: a conditional node)");
  r = cu->cuStreamUpdateCaptureDependencies_v2(cs, &node, NULL, 1,
                                                CU_STREAM_SET_CAPTURE_DEPENDENCIES);
  if (r) return cuda_error(s, r, "graph_cond_begin (cuStreamUpdateCaptureDependencies)");
  cond_frame f = {cs, NULL, h, p.u.conditional.phGraph_out, 0, n};
  HLO_TRY(begin_body(s, &f, tl_depth, 0));
  tl_frames[tl_depth++] = f;
  return NULL;
}

hlo_status cuda_graph_cond_set(const backend_cond *c) {
  if (!tl_depth || !cuda_capture_stream())
    return status_new(HLO_INVALID_ARGUMENT, "cuda: graph_cond_set: no conditional body is open");
  if (!c || c->kind != BACKEND_COND_WHILE || !cond_fn || tl_frames[tl_depth - 1].n != 1)
    return status_new(HLO_INVALID_ARGUMENT, "cuda: graph_cond_set: another kind of node");
  const cuda_device_state *s = cuda_state();
  HLO_TRY(cuda_make_current(s, "graph_cond_set"));
  const cond_frame *f = &tl_frames[tl_depth - 1];
  return launch_setter(s, f->body, f->h, c);
}

/* Ends the innermost body's capture and goes back to the stream around it. */
static hlo_status end_body(const cuda_device_state *s) {
  cond_frame f = tl_frames[--tl_depth];
  cuda_capture_set_stream(f.outer);
  if (f.next + 1 != f.n && f.body) { /* bodies never begun: the node is incomplete */
    CUgraph g = NULL;
    (void)s->cu->cuStreamEndCapture(f.body, &g);
    return status_new(HLO_INVALID_ARGUMENT, "cuda: graph_cond_end: %u of the node's %u bodies "
                      "recorded", f.next + 1, f.n);
  }
  CUgraph g = NULL; /* the node's body: the driver's, not destroyed here */
  CUresult r = s->cu->cuStreamEndCapture(f.body, &g);
  return r ? cuda_error(s, r, "graph_cond_end (cuStreamEndCapture of the body)") : NULL;
}

hlo_status cuda_graph_cond_next(void) {
  if (!tl_depth || !cuda_capture_stream())
    return status_new(HLO_INVALID_ARGUMENT, "cuda: graph_cond_next: no conditional body is open");
  cond_frame *f = &tl_frames[tl_depth - 1];
  if (f->next + 1 >= f->n)
    return status_new(HLO_INVALID_ARGUMENT, "cuda: graph_cond_next: past the node's %u bodies",
                      f->n);
  const cuda_device_state *s = cuda_state();
  HLO_TRY(cuda_make_current(s, "graph_cond_next"));
  CUgraph g = NULL;
  cuda_capture_set_stream(f->outer);
  CUresult r = s->cu->cuStreamEndCapture(f->body, &g);
  if (r) return cuda_error(s, r, "graph_cond_next (cuStreamEndCapture of a body)");
  return begin_body(s, f, tl_depth - 1, f->next + 1);
}

hlo_status cuda_graph_cond_end(void) {
  if (!tl_depth || !cuda_capture_stream())
    return status_new(HLO_INVALID_ARGUMENT, "cuda: graph_cond_end: no conditional body is open");
  const cuda_device_state *s = cuda_state();
  HLO_TRY(cuda_make_current(s, "graph_cond_end"));
  return end_body(s);
}

void cuda_graph_cond_abort(void) {
  const cuda_device_state *s = cuda_state();
  while (tl_depth) {
    if (!s) {
      tl_depth = 0;
      break;
    }
    hlo_status_free(end_body(s));
  }
}
