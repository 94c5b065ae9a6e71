/* libcuda_mock.h — the mock CUDA driver the CUDA unit tests run the backend
 * on without a GPU (tests/unit/mock/libcuda_mock.c, built by the Makefile
 * into $(BUILD)/tests/libcuda_mock.so beside the test binaries). A test
 * starts the backend on it in a child process (the start is once per
 * process) with HLO_CUDA_LIB=that path, opens it again with
 * dlopen(RTLD_NOLOAD) and reads or sets the mock_* symbols below with dlsym.
 *
 * What it is: device memory is host memory (zeroed: cuMemAlloc_v2 is
 * calloc), one device "Mock GPU" (sm_90, 132 SMs, 227 KiB of shared memory
 * to opt into, 1 GiB), driver 13.0; every call past the start needs the
 * primary context current on the calling thread (CUDA_ERROR_INVALID_CONTEXT
 * otherwise) and the stream the backend made; modules load any ELF image
 * (cuModuleLoadData) and the conditional nodes' PTX (cuModuleLoadDataEx:
 * it must hold hlo_cond_set, hlo_cond_index and cudaGraphSetConditional).
 * Functions: "kN" (the backend's kernels) is the handle 0x1000 + N,
 * hlo_cond_set 0x5e7 and hlo_cond_index 0x5e8 (the setters), any other
 * name (the library units' hlo_* kernels) 0x100000 + the order in which the
 * process first asked for it; so a handle below 0x100000 is ours.
 *
 * Two modes of cuLaunchKernel:
 *   - recording (mock_hook NULL, the default): a launch is recorded, not
 *     run: the last one in mock_kernel / mock_grid / ... and every one that
 *     runs (eager, or replayed by cuGraphLaunch) appended to mock_log; only
 *     1-d grids and blocks are taken. Stream capture records launches into
 *     the graph (any capture mode; mock_capture_mode keeps it), and a call
 *     that cannot be captured (an alloc, a free, a copy, a synchronisation)
 *     invalidates it (CUDA_ERROR_STREAM_CAPTURE_INVALIDATED at the end,
 *     counted in mock_capture_faults). Conditional nodes (CUDA 12.4): the
 *     capture's structure is traced in mock_trace (k a kernel, b a kernel
 *     in a body, S a WHILE's setter, I an IF's or SWITCH's, H a handle, X
 *     a SWITCH node, W a node, { a body begun, } its end). The capture
 *     stream's dependency set is kept (cuStreamGetCaptureInfo_v3 gives it,
 *     cuStreamUpdateCaptureDependencies_v2 replaces it: any number of the
 *     capture's nodes, 0 too), so a capture is a DAG: every top-level
 *     launch and conditional node records its edges (mock_edge_*); a graph
 *     replays its launches in capture order, which every edge respects
 *     (an edge points back only).
 *   - emulating (the test sets mock_hook): every launch is handed to the
 *     hook at once (kernel name, geometry, parameters), which may run it
 *     on the CPU; stream capture is refused (CUDA_ERROR_NOT_SUPPORTED: the
 *     parameters die with the launch, nothing could replay them).
 *
 * It defines every function of CUDA_DRIVER_FUNCTIONS and
 * CUDA_DRIVER_OPTIONAL_FUNCTIONS (src/backend/cuda/cuda_api.h), with the
 * driver's own signatures; test_cuda_backend.c checks that it does. */
#ifndef HLO_TESTS_LIBCUDA_MOCK_H
#define HLO_TESTS_LIBCUDA_MOCK_H
#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

/* Its file name, beside the test binaries. */
#define CUDA_MOCK_NAME "libcuda_mock.so"

/* One recorded launch (mock_log). bufs: for our kernels (handle < 0x100000)
 * the whole buffer array (parameter 0), for a library kernel its
 * parameters 1 and 2 as pointers; t0 / t1: our kernels' tile range
 * (parameters 1 and 2). Zeroed before it is filled, padding too, so two
 * logs compare with memcmp. */
typedef struct mock_rec {
  void *f;
  unsigned g, b, sh; /* grid, block, shared bytes */
  void *bufs[64];
  long long t0, t1;
} mock_rec;

/* The emulating mode's hook: the kernel's name, geo = {grid x, y, z, block
 * x, y, z, shared bytes} and cuLaunchKernel's parameter array. */
typedef void (*mock_hook_fn)(const char *name, const unsigned *geo, void **params);

/* The symbols a test reads (dlsym):
 *   int mock_modules            modules loaded by cuModuleLoadData and not unloaded
 *   int mock_ptx_modules        conditional-node PTX modules loaded
 *   int mock_launches           launches run (recorded or handed to the hook)
 *   int mock_kernel             the last recorded launch's handle - 0x1000
 *   unsigned mock_grid, mock_block, mock_shared
 *   void *mock_bufs[64]         the last recorded launch's bufs
 *   long long mock_tile_begin, mock_tile_end
 *   mock_rec mock_log[1024]     every recorded launch run, mock_nlog of them
 *   int mock_graphs             graph execs alive; mock_graph_launches: cuGraphLaunch calls
 *   int mock_capture_mode, mock_capture_faults
 *   int mock_func_shared[64]    kernel N's dynamic shared memory opt-in
 *   int mock_shared_optin       the last opt-in of any function
 *   char mock_trace[4096]       the last capture's structure (above)
 *   int mock_nodes              conditional nodes added
 *   int mock_node_type, mock_node_cond_type, mock_node_size   the last node's
 *   unsigned long long mock_handles, mock_set_handle   handles made; the last setter's
 *   void *mock_set_pred; unsigned mock_set_size, mock_set_bit, mock_index_mode, mock_index_n
 *   int mock_edge_from[8192], mock_edge_to[8192], mock_nedges   the last capture's edges
 *                               (outside conditional bodies): node ids, a top-level launch
 *                               its index among the capture's launches, a conditional node
 *                               -1 - its number in the capture; mock_dag_nodes: its nodes
 *                               (top-level launches and conditional nodes)
 *   int mock_dag_faults         dependencies on a node that is not the capture's
 * and the one a test sets:
 *   mock_hook_fn mock_hook      NULL: recording; else emulating */

/* The mock's path: CUDA_MOCK_NAME in the folder of the running binary
 * (/proc/self/exe), into buf[0..cap). False (buf "") when that cannot be
 * read, the path does not fit or the file is not there (the binary was not
 * built by the Makefile's `unit`): then "TEST: no ... beside this binary"
 * goes to stderr, `test` naming the caller. */
static inline bool cuda_mock_path(const char *test, char *buf, size_t cap) {
  char exe[4096];
  ssize_t n = readlink("/proc/self/exe", exe, sizeof exe - 1);
  if (cap) buf[0] = 0;
  exe[n > 0 ? n : 0] = 0;
  char *slash = strrchr(exe, '/');
  int w = -1;
  if (slash) {
    slash[1] = 0;
    w = snprintf(buf, cap, "%s%s", exe, CUDA_MOCK_NAME);
  }
  if (w < 0 || (size_t)w >= cap || access(buf, R_OK)) {
    if (cap) buf[0] = 0;
    fprintf(stderr, "%s: no %s beside this binary (make unit builds it)\n", test, CUDA_MOCK_NAME);
    return false;
  }
  return true;
}

#endif
