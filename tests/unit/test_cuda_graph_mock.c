/* test_cuda_graph_mock.c — the runtime's CUDA graphs (executable_cpu_graph.c,
 * executable_cpu_cond_graph.c, executable_cpu_graph_dag.c) on the CUDA
 * backend over the mock driver (tests/unit/mock/libcuda_mock.h, in a child
 * process: launches recorded, not run; no GPU needed): an executable
 * (kernels only) launching its kernels itself on run 1 and by one
 * cuGraphLaunch on runs 2 and 3, the same kernels on the same buffers; a
 * scan (a while loop of a known trip count with dynamic_slice /
 * dynamic_update_slice at the loop counter, read on the device by the
 * library's copy kernels) the same way (run 3 without walking the steps),
 * the launches (ours and the library's) identical; a loop without a known
 * trip count and a case as the driver's conditional nodes (the capture's
 * structure, the node's and the setter's parameters); every capture's
 * dependencies set through the backend's graph_deps slots
 * (cuStreamGetCaptureInfo_v3, cuStreamUpdateCaptureDependencies_v2) on
 * nodes of the capture only, the mock's edges (nodes - 1: a tree).
 * The same on the fake graph device: test_cuda_graph_replay.c,
 * test_cuda_graph_cond.c, test_cuda_graph_dag.c. */
#include <dlfcn.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>
#include "backend/backend.h"
#include "backend/cuda/cuda_api.h"
#include "passes/pass_manager.h"
#include "mock/libcuda_mock.h"
#include "fake_device.h"
#include "test.h"
#include "testlib.h"

/* while loops over 0-d values run as one kernel (codegen/lower_while.h;
 * test_loop_kernel.c): off here, to test the conditional graph nodes that
 * run the other loops */
__attribute__((constructor)) static void no_loop_kernels(void) {
  setenv("HLO_LOOP_KERNELS", "0", 1);
}

FAKE_DEVICE_CHECKS()

/* ---- the runtime's graphs on the mock driver ---- */

#define MOCK(type, name) (*(type *)dlsym(mock, #name))

/* The kernels ('k' functions: ours) of mock_log[from, to) in *out (malloc'd),
 * their count returned. */
static int mock_kernel_log(void *mock, int from, int to, void **out) {
  const mock_rec *log = dlsym(mock, "mock_log");
  mock_rec *k = malloc((size_t)(to > from ? to - from : 1) * sizeof *k);
  int n = 0;
  for (int i = from; k && i < to; i++)
    if ((uintptr_t)log[i].f < 0x100000) k[n++] = log[i];
  *out = k;
  return n * (int)sizeof *k;
}

/* The runtime's graph replay on the CUDA backend over the mock driver
 * (kernels are not run: the launches are compared): run 1 launches each
 * kernel itself, run 2 captures them and launches the graph, run 3
 * launches the graph only; the kernels that run, with their buffers, are
 * the same each time, and nothing inside a capture breaks it. */
static void mock_runtime_graphs(const backend *be, void *mock) {
  static const char *text =
      "func.func @main(%a: tensor<64xf32>, %b: tensor<64xf32>)\n"
      "    -> (tensor<64xf32>, tensor<8x8xf32>) {\n"
      "  %e = stablehlo.exponential %a : tensor<64xf32>\n"
      "  %m = stablehlo.multiply %e, %b : tensor<64xf32>\n"
      "  %t = stablehlo.tanh %m : tensor<64xf32>\n"
      "  %n = stablehlo.negate %t : tensor<64xf32>\n"
      "  %r = stablehlo.reshape %m : (tensor<64xf32>) -> tensor<8x8xf32>\n"
      "  return %n, %r : tensor<64xf32>, tensor<8x8xf32>\n"
      "}\n";
  setenv("HLO_CACHE_DIR", "off", 1); /* the library units: no kernel cache */
  gx_exec e;
  if (!gx_make_on(text, false, be, &e)) return;
  tensor *args[2];
  for (int i = 0; i < 2; i++) {
    args[i] = tensor_new(e.x->f->body.block.args[i].type);
    CHECK(args[i] != NULL);
    if (!args[i]) return;
    tensor_device *d = malloc(sizeof *d);
    void *p = be->alloc(args[i]->nbytes);
    CHECK(d && p);
    *d = (tensor_device){p, be, false, true, gx_release_device};
    args[i]->device = d;
  }
  int faults = MOCK(int, mock_capture_faults), graphs0 = MOCK(int, mock_graph_launches);
  void *logs[3] = {0};
  int sizes[3] = {0};
  for (int run = 0; run < 3; run++) {
    int from = MOCK(int, mock_nlog);
    tensor **res = NULL;
    hlo_status st = cpu_exec_run(e.x, args, 2, &res);
    CHECK(!st);
    if (st) hlo_status_print(st, stderr);
    hlo_status_free(st);
    for (uint32_t i = 0; res && i < 2; i++) {
      CHECK(res[i]->device != NULL); /* left on the device */
      tensor_release(res[i]);
    }
    free(res);
    sizes[run] = mock_kernel_log(mock, from, MOCK(int, mock_nlog), &logs[run]);
    CHECK_EQ_INT(MOCK(int, mock_graph_launches) - graphs0, run);
  }
  CHECK(sizes[0] > 0);
  for (int run = 1; run < 3; run++)
    CHECK(sizes[run] == sizes[0] && logs[run] && !memcmp(logs[run], logs[0], (size_t)sizes[0]));
  CHECK_EQ_INT(MOCK(int, mock_capture_faults), faults);
  CHECK_EQ_INT(MOCK(int, mock_dag_faults), 0);
  uint64_t c[5];
  cpu_dev_graph_counters(e.x, c);
  CHECK_EQ_INT(c[0], 3);
  CHECK_EQ_INT(c[1], 1);
  CHECK_EQ_INT(c[2], 2);
  CHECK_EQ_INT(c[3], 0);
  /* the capture a DAG on the driver's dependency set: a tree (e, m, t, n
   * a chain, the library's copy of m beside t and n) */
  int launches = sizes[0] / (int)sizeof(mock_rec);
  CHECK_EQ_INT(MOCK(int, mock_dag_faults), 0);
  CHECK(MOCK(int, mock_dag_nodes) >= launches);
  CHECK_EQ_INT(MOCK(int, mock_nedges), MOCK(int, mock_dag_nodes) - 1);
  printf("mock_driver: graph replay: %d kernel launches a run, runs 2 and 3 by cuGraphLaunch; "
         "the capture: %d nodes, %d edges\n", launches, MOCK(int, mock_dag_nodes),
         MOCK(int, mock_nedges));
  for (int i = 0; i < 3; i++) free(logs[i]);
  for (int i = 0; i < 2; i++) tensor_release(args[i]);
  gx_free(&e);
  CHECK_EQ_INT(MOCK(int, mock_graphs), 0);
}

/* The runtime's graph replay of a while loop of a known trip count on the
 * CUDA backend over the mock driver: a scan (dynamic_slice of row i, a
 * kernel, dynamic_update_slice of row i: start indices read on the device
 * by the library's copy kernels) run 3 times: run 1 launches every kernel
 * itself, run 2 captures them all (the 5 iterations unrolled) and launches
 * the graph, run 3 launches the graph only; the kernels run (ours and the
 * library's, with their buffers and parameters) are the same each time. */
static void mock_runtime_loop_graph(const backend *be, void *mock) {
  static const char *text =
      "func.func @main(%xs: tensor<5x64xf32>, %h0: tensor<1x64xf32>)\n"
      "    -> (tensor<1x64xf32>, tensor<5x64xf32>) {\n"
      "  %z = stablehlo.constant dense<0> : tensor<i32>\n"
      "  %one = stablehlo.constant dense<1> : tensor<i32>\n"
      "  %n = stablehlo.constant dense<5> : tensor<i32>\n"
      "  %half = stablehlo.constant dense<0.5> : tensor<1x64xf32>\n"
      "  %o0 = stablehlo.constant dense<0.0> : tensor<5x64xf32>\n"
      "  %r:3 = stablehlo.while(%i = %z, %h = %h0, %o = %o0)\n"
      "      : tensor<i32>, tensor<1x64xf32>, tensor<5x64xf32>\n"
      "    cond {\n"
      "      %p = stablehlo.compare LT, %i, %n : (tensor<i32>, tensor<i32>) -> tensor<i1>\n"
      "      stablehlo.return %p : tensor<i1>\n"
      "    } do {\n"
      "      %x = stablehlo.dynamic_slice %xs, %i, %z, sizes = [1, 64]\n"
      "          : (tensor<5x64xf32>, tensor<i32>, tensor<i32>) -> tensor<1x64xf32>\n"
      "      %m = stablehlo.multiply %h, %half : tensor<1x64xf32>\n"
      "      %s = stablehlo.add %m, %x : tensor<1x64xf32>\n"
      "      %h2 = stablehlo.tanh %s : tensor<1x64xf32>\n"
      "      %o2 = stablehlo.dynamic_update_slice %o, %h2, %i, %z\n"
      "          : (tensor<5x64xf32>, tensor<1x64xf32>, tensor<i32>, tensor<i32>) -> tensor<5x64xf32>\n"
      "      %j = stablehlo.add %i, %one : tensor<i32>\n"
      "      stablehlo.return %j, %h2, %o2 : tensor<i32>, tensor<1x64xf32>, tensor<5x64xf32>\n"
      "    }\n"
      "  return %r#1, %r#2 : tensor<1x64xf32>, tensor<5x64xf32>\n"
      "}\n";
  setenv("HLO_CACHE_DIR", "off", 1);
  gx_exec e;
  if (!gx_make_piped(text, false, be, PASS_PIPELINE_CPU, &e)) return;
  tensor *args[2];
  for (int i = 0; i < 2; i++) {
    args[i] = tensor_new(e.x->f->body.block.args[i].type);
    CHECK(args[i] != NULL);
    if (!args[i]) return;
    tensor_device *d = malloc(sizeof *d);
    void *p = be->alloc(args[i]->nbytes);
    CHECK(d && p);
    *d = (tensor_device){p, be, false, true, gx_release_device};
    args[i]->device = d;
  }
  int faults = MOCK(int, mock_capture_faults), graphs0 = MOCK(int, mock_graph_launches);
  mock_rec *logs[3] = {0};
  int n[3] = {0};
  for (int run = 0; run < 3; run++) {
    int from = MOCK(int, mock_nlog), launches = MOCK(int, mock_launches);
    tensor **res = NULL;
    hlo_status st = cpu_exec_run(e.x, args, 2, &res);
    CHECK(!st);
    if (st) hlo_status_print(st, stderr);
    hlo_status_free(st);
    for (uint32_t i = 0; res && i < 2; i++) {
      CHECK(res[i]->device != NULL);
      tensor_release(res[i]);
    }
    free(res);
    n[run] = MOCK(int, mock_nlog) - from;
    CHECK_EQ_INT(MOCK(int, mock_launches) - launches, n[run]); /* the log kept them all */
    logs[run] = malloc((size_t)(n[run] ? n[run] : 1) * sizeof *logs[run]);
    if (logs[run])
      memcpy(logs[run], (const mock_rec *)dlsym(mock, "mock_log") + from, (size_t)n[run] * sizeof(mock_rec));
    CHECK_EQ_INT(MOCK(int, mock_graph_launches) - graphs0, run);
  }
  /* 5 iterations of a slice, a kernel and an update (the library's copy
   * kernels), and the loop's own fills / copies */
  CHECK(n[0] >= 5 * 3);
  int library = 0;
  for (int i = 0; logs[0] && i < n[0]; i++) library += (uintptr_t)logs[0][i].f >= 0x100000;
  CHECK(library >= 2 * 5);
  for (int run = 1; run < 3; run++)
    CHECK(n[run] == n[0] && logs[run] && logs[0] &&
          !memcmp(logs[run], logs[0], (size_t)n[0] * sizeof(mock_rec)));
  CHECK_EQ_INT(MOCK(int, mock_capture_faults), faults);
  CHECK_EQ_INT(MOCK(int, mock_dag_faults), 0);
  uint64_t c[5];
  cpu_dev_graph_counters(e.x, c);
  CHECK_EQ_INT(c[0], 3);
  CHECK_EQ_INT(c[1], 1);
  CHECK_EQ_INT(c[2], 2);
  CHECK_EQ_INT(c[3], 0);
  CHECK_EQ_INT(c[4], 1);
  CHECK_EQ_INT(MOCK(int, mock_dag_nodes), n[0]);
  printf("mock_driver: a loop of 5 iterations: %d launches a run (%d the library's), runs 2 and "
         "3 by one cuGraphLaunch; the capture: %d nodes, %d edges\n", n[0], library,
         MOCK(int, mock_dag_nodes), MOCK(int, mock_nedges));
  for (int i = 0; i < 3; i++) free(logs[i]);
  for (int i = 0; i < 2; i++) tensor_release(args[i]);
  gx_free(&e);
  CHECK_EQ_INT(MOCK(int, mock_graphs), 0);
}

/* A loop without a known trip count (the Collatz loop) on the CUDA backend
 * over the mock driver (kernels are not run: its memory is zeroed, so the
 * predicate reads false): run 1 is issued call by call (the predicate read
 * on the host: no iteration), run 2 captured: the cond's kernel, a handle,
 * the setter, the WHILE node and its body (the body's kernels, the cond's,
 * the setter, the copies back), then the copies out; run 3 launches the
 * graph. The node's parameters (a conditional WHILE of one body in the
 * context), the setter's (the handle, the i1 predicate) as the driver gets
 * them; nothing in the capture breaks it. HLO_CUDA_COND_GRAPHS=0: not
 * deferred. */
static void mock_runtime_cond_graph(const backend *be, void *mock) {
  setenv("HLO_CACHE_DIR", "off", 1);
  gx_exec e;
  if (!gx_make_piped(collatz_program, false, be, PASS_PIPELINE_CPU, &e)) return;
  tensor *arg = tensor_new(e.x->f->body.block.args[0].type);
  CHECK(arg != NULL);
  if (!arg) return;
  tensor_device *d = malloc(sizeof *d);
  void *p = be->alloc(arg->nbytes);
  CHECK(d && p);
  *d = (tensor_device){p, be, false, true, gx_release_device};
  arg->device = d;
  int faults = MOCK(int, mock_capture_faults), graphs0 = MOCK(int, mock_graph_launches);
  for (int run = 0; run < 3; run++) {
    tensor **res = NULL;
    hlo_status st = cpu_exec_run(e.x, &arg, 1, &res);
    CHECK(!st);
    if (st) hlo_status_print(st, stderr);
    hlo_status_free(st);
    for (uint32_t i = 0; res && i < 2; i++) tensor_release(res[i]);
    free(res);
    CHECK_EQ_INT(MOCK(int, mock_graph_launches) - graphs0, run);
    if (run == 1) {
      const char *tr = (const char *)dlsym(mock, "mock_trace");
      const char *w = strstr(tr, "HSW{");
      CHECK(w != NULL && w > tr && w[-1] == 'k'); /* the cond's kernel first */
      const char *set = w ? strchr(w + 4, 'S') : NULL, *end = w ? strchr(w + 4, '}') : NULL;
      CHECK(set && end && set < end);
      int body = 0;
      for (const char *c = w ? w + 4 : tr; set && c < set; c++) body += *c == 'b';
      CHECK(body >= 2); /* the body's kernels and the cond's */
      CHECK(set && set[1] == 'b'); /* a copy back into a carried slot */
      CHECK(end && end[1] == 'k' && !strchr(end, 'W')); /* the copies out; one node */
      printf("mock_driver: a loop without a known trip count: the capture %s (k kernel, H "
             "handle, S setter, W{ a WHILE node's body, })\n", tr);
    }
  }
  CHECK_EQ_INT(MOCK(int, mock_node_type), CU_GRAPH_NODE_TYPE_CONDITIONAL);
  CHECK_EQ_INT(MOCK(int, mock_node_cond_type), CU_GRAPH_COND_TYPE_WHILE);
  CHECK_EQ_INT(MOCK(int, mock_node_size), 1);
  CHECK_EQ_INT(MOCK(int, mock_nodes), 1);
  CHECK_EQ_INT(MOCK(int, mock_ptx_modules), 1);
  CHECK(MOCK(unsigned long long, mock_set_handle) == MOCK(unsigned long long, mock_handles));
  CHECK_EQ_INT(MOCK(unsigned, mock_set_size), 1);
  CHECK_EQ_INT(MOCK(unsigned, mock_set_bit), 1);
  CHECK(MOCK(void *, mock_set_pred) != NULL);
  CHECK_EQ_INT(MOCK(int, mock_capture_faults), faults);
  CHECK_EQ_INT(MOCK(int, mock_dag_faults), 0);
  uint64_t c[5], cc[2];
  cpu_dev_graph_counters(e.x, c);
  cpu_dev_graph_cond_counters(e.x, cc);
  CHECK_EQ_INT(c[0], 3);
  CHECK_EQ_INT(c[1], 1);
  CHECK_EQ_INT(c[2], 2);
  CHECK_EQ_INT(c[3], 0);
  CHECK_EQ_INT(cc[1], 1);
  tensor_release(arg); /* its type is e's */
  gx_free(&e);
  /* a case of three branches: a SWITCH node of three bodies */
  if (gx_make_piped(case_program, false, be, PASS_PIPELINE_CPU, &e)) {
    tensor *cargs[2];
    for (int i = 0; i < 2; i++) {
      cargs[i] = tensor_new(e.x->f->body.block.args[i].type);
      tensor_device *cd = malloc(sizeof *cd);
      void *cp = cargs[i] ? be->alloc(cargs[i]->nbytes) : NULL;
      CHECK(cargs[i] && cd && cp);
      *cd = (tensor_device){cp, be, false, true, gx_release_device};
      cargs[i]->device = cd;
    }
    for (int run = 0; run < 3; run++) {
      tensor **res = NULL;
      hlo_status st = cpu_exec_run(e.x, cargs, 2, &res);
      CHECK(!st);
      if (st) hlo_status_print(st, stderr);
      hlo_status_free(st);
      if (res) tensor_release(res[0]);
      free(res);
      if (run == 1) {
        const char *tr = (const char *)dlsym(mock, "mock_trace");
        const char *w = strstr(tr, "HIXW{");
        CHECK(w != NULL);
        int bodies = 0, ends = 0;
        for (const char *q = w ? w : tr; *q; q++) bodies += *q == '{', ends += *q == '}';
        CHECK_EQ_INT(bodies, 3);
        CHECK_EQ_INT(ends, 3);
        printf("mock_driver: a case of three branches: the capture %s (I the index setter, XW "
               "a SWITCH node)\n", tr);
      }
    }
    CHECK_EQ_INT(MOCK(int, mock_node_cond_type), CU_GRAPH_COND_TYPE_SWITCH);
    CHECK_EQ_INT(MOCK(int, mock_node_size), 3);
    CHECK_EQ_INT(MOCK(unsigned, mock_index_mode), 2); /* a signed index */
    CHECK_EQ_INT(MOCK(unsigned, mock_index_n), 3);
    CHECK_EQ_INT(MOCK(unsigned, mock_set_size), 4);
    CHECK_EQ_INT(MOCK(int, mock_capture_faults), faults);
    CHECK_EQ_INT(MOCK(int, mock_dag_faults), 0);
  CHECK_EQ_INT(MOCK(int, mock_dag_faults), 0);
    cpu_dev_graph_counters(e.x, c);
    CHECK_EQ_INT(c[1], 1);
    CHECK_EQ_INT(c[3], 0);
    for (int i = 0; i < 2; i++) tensor_release(cargs[i]);
    gx_free(&e);
  }
  setenv("HLO_CUDA_COND_GRAPHS", "0", 1);
  bool made = gx_make_piped(collatz_program, false, be, PASS_PIPELINE_CPU, &e);
  unsetenv("HLO_CUDA_COND_GRAPHS");
  if (made) {
    tensor **res = NULL;
    arg = tensor_new(e.x->f->body.block.args[0].type);
    tensor_device *d2 = malloc(sizeof *d2);
    void *p2 = arg ? be->alloc(arg->nbytes) : NULL;
    CHECK(arg && d2 && p2);
    *d2 = (tensor_device){p2, be, false, true, gx_release_device};
    arg->device = d2;
    hlo_status st = cpu_exec_run(e.x, &arg, 1, &res);
    CHECK(!st);
    hlo_status_free(st);
    for (uint32_t i = 0; res && i < 2; i++) tensor_release(res[i]);
    free(res);
    cpu_dev_graph_counters(e.x, c);
    CHECK_EQ_INT(c[0], 0);
    tensor_release(arg);
    gx_free(&e);
  }
  CHECK_EQ_INT(MOCK(int, mock_graphs), 0);
}

/* The DAG on the CUDA backend over the mock driver: two independent
 * branches (dag_branches) captured on run 2 through graph_deps_get / _set
 * (cuStreamGetCaptureInfo_v3, cuStreamUpdateCaptureDependencies_v2, an
 * empty set for the second branch's root): the capture's nodes are two
 * chains, no edge between them. */
static void mock_runtime_dag(const backend *be, void *mock) {
  gx_exec e;
  if (!gx_make_on(dag_branches, false, be, &e)) return;
  tensor *args[2];
  for (int i = 0; i < 2; i++) {
    args[i] = tensor_new(e.x->f->body.block.args[i].type);
    CHECK(args[i] != NULL);
    if (!args[i]) return;
    tensor_device *d = malloc(sizeof *d);
    void *p = be->alloc(args[i]->nbytes);
    CHECK(d && p);
    *d = (tensor_device){p, be, false, true, gx_release_device};
    args[i]->device = d;
  }
  int graphs0 = MOCK(int, mock_graph_launches);
  for (int run = 0; run < 3; run++) {
    tensor **res = NULL;
    hlo_status st = cpu_exec_run(e.x, args, 2, &res);
    CHECK(!st);
    if (st) hlo_status_print(st, stderr);
    hlo_status_free(st);
    for (uint32_t i = 0; res && i < 2; i++) tensor_release(res[i]);
    free(res);
  }
  CHECK_EQ_INT(MOCK(int, mock_graph_launches) - graphs0, 2);
  int nodes = MOCK(int, mock_dag_nodes), nedges = MOCK(int, mock_nedges);
  const int *from = dlsym(mock, "mock_edge_from"), *to = dlsym(mock, "mock_edge_to");
  CHECK(from && to);
  CHECK_EQ_INT(MOCK(int, mock_dag_faults), 0);
  CHECK_EQ_INT(nodes, 4);
  CHECK_EQ_INT(nedges, 2);
  int indeg[64] = {0};
  for (int i = 0; from && to && i < nedges; i++)
    if (to[i] >= 0 && to[i] < 64) indeg[to[i]]++;
  int roots = 0;
  for (int i = 0; i < nodes && i < 64; i++) roots += !indeg[i];
  CHECK_EQ_INT(roots, 2);
  printf("mock_driver: two branches: the capture: %d nodes, %d edges, %d roots\n", nodes, nedges,
         roots);
  for (int i = 0; i < 2; i++) tensor_release(args[i]);
  gx_free(&e);
  CHECK_EQ_INT(MOCK(int, mock_graphs), 0);
}

/* Checks, in the child whose HLO_CUDA_LIB is the mock: the runtime's graphs
 * of kernels, of a loop of a known trip count and of conditional nodes.
 * Exit status: 0 passed, 1 failed, 3 skipped. */
static int mock_checks(const char *lib) {
  const backend *be = NULL;
  hlo_status st = backend_cuda(&be);
  if (st) {
    bool skip = !strstr(hlo_status_message(st), "mock");
    printf("mock_driver: %s: %s\n", skip ? "skipped" : "failed", hlo_status_message(st));
    hlo_status_free(st);
    return skip ? 3 : 1;
  }
  void *mock = dlopen(lib, RTLD_NOW | RTLD_NOLOAD);
  CHECK(mock != NULL);
  if (!mock) return 1;
  mock_runtime_graphs(be, mock);
  mock_runtime_loop_graph(be, mock);
  mock_runtime_cond_graph(be, mock);
  mock_runtime_dag(be, mock);
  dlclose(mock);
  return test_failed_checks ? 1 : 0;
}

/* The child: the start is once per process, so the mock's checks run in a
 * fresh process, this binary run again (/proc/self/exe) with
 * HLO_CUDA_GRAPH_CHILD=1 and HLO_CUDA_LIB the mock; a constructor runs
 * them before main and exits with their status. */
__attribute__((constructor)) static void child_main(void) {
  const char *c = getenv("HLO_CUDA_GRAPH_CHILD"), *lib = getenv("HLO_CUDA_LIB");
  if (!c || !lib) return;
  int rc = mock_checks(lib);
  fflush(stdout);
  fflush(stderr);
  exit(rc); /* not _exit: LeakSanitizer checks the child too */
}

TEST(mock_driver) {
  char lib[4096];
  bool have = cuda_mock_path("mock_driver", lib, sizeof lib);
  CHECK(have);
  if (!have) return;
  fflush(stdout);
  fflush(stderr);
  pid_t pid = fork();
  CHECK(pid >= 0);
  if (pid == 0) {
    setenv("HLO_CUDA_GRAPH_CHILD", "1", 1);
    setenv("HLO_CUDA_LIB", lib, 1);
    char *argv[] = {(char *)"test_cuda_graph_mock", NULL};
    execv("/proc/self/exe", argv);
    _exit(99);
  }
  int ws = 0;
  CHECK(pid > 0 && waitpid(pid, &ws, 0) == pid);
  int rc = WIFEXITED(ws) ? WEXITSTATUS(ws) : 100 + (WIFSIGNALED(ws) ? WTERMSIG(ws) : 0);
  if (rc != 0 && rc != 3) fprintf(stderr, "mock_driver: the child exited with %d\n", rc);
  CHECK(rc == 0 || rc == 3);
}

TEST_MAIN()
