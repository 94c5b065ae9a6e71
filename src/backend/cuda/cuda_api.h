/* cuda_api.h — the CUDA driver (libcuda) and cuBLASLt (libcublasLt),
 * loaded at run time with dlopen, so that hlo includes no CUDA header,
 * links no CUDA library, and one build runs with and without a GPU.
 *
 * The few types and enum values hlo needs are declared here, copied from
 * the CUDA 13.0 toolkit's headers (cuda.h, cublasLt.h, cublas_api.h,
 * library_types.h: each group names its header). The functions are one
 * X-macro table per library (CUDA_DRIVER_FUNCTIONS, CUBLASLT_FUNCTIONS):
 * a struct member per function, named as the symbol the library exports
 * (the _v2 names of the driver: cuMemAlloc_v2, not the cuda.h macro
 * cuMemAlloc), resolved all at once; a missing symbol fails the load.
 *
 * Where the libraries are looked for:
 *   libcuda:     $HLO_CUDA_LIB when set and non-empty (only that path: a
 *                test sets it to a missing file to simulate a machine
 *                without the driver), else libcuda.so.1, then libcuda.so;
 *   libcublasLt: libcublasLt.so.13, .so.12, .so, then the same names in
 *                /usr/local/cuda/lib64/.
 * Each library is loaded once per process (thread-safe); a failure is
 * remembered and returned again (a new status with the same message) on
 * every later call. Never unloaded.
 *
 * The second half declares what the CUDA backend's files share
 * (cuda_backend.c, cuda_gemm.c): the device state made once by
 * backend_cuda, and the gemm slot. */
#ifndef HLO_BACKEND_CUDA_CUDA_API_H
#define HLO_BACKEND_CUDA_CUDA_API_H
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include "backend/backend.h"
#include "hlo/hlo.h"

/* ---- the driver's types (cuda.h) ---- */
typedef int CUresult;                     /* enum cudaError_enum */
typedef int CUdevice;                     /* CUdevice_v1 */
typedef unsigned long long CUdeviceptr;   /* CUdeviceptr_v2 (64-bit hosts) */
typedef struct CUctx_st *CUcontext;
typedef struct CUmod_st *CUmodule;
typedef struct CUfunc_st *CUfunction;
typedef struct CUstream_st *CUstream;     /* also cuBLASLt's cudaStream_t */
typedef struct CUevent_st *CUevent;
typedef struct CUgraph_st *CUgraph;
typedef struct CUgraphExec_st *CUgraphExec;
typedef struct CUmemPoolHandle_st *CUmemoryPool;
typedef struct CUgraphNode_st *CUgraphNode;
typedef unsigned long long CUgraphConditionalHandle;
/* cuda.h: an edge's data (CUgraphEdgeData_st; 8 bytes, passed through) */
typedef struct CUgraphEdgeData {
  unsigned char from_port, to_port, type, reserved[5];
} CUgraphEdgeData;
/* cuda.h: CUDA_CONDITIONAL_NODE_PARAMS (CUDA 12.3+) */
typedef struct CUDA_CONDITIONAL_NODE_PARAMS {
  CUgraphConditionalHandle handle;
  int type;                               /* CUgraphConditionalNodeType */
  unsigned int size;                      /* bodies: 1 for a WHILE */
  CUgraph *phGraph_out;                   /* the driver's array of the bodies */
  CUcontext ctx;
} CUDA_CONDITIONAL_NODE_PARAMS;
/* cuda.h: CUgraphNodeParams (256 bytes: the union is 29 long longs) */
typedef struct CUgraphNodeParams {
  int type;                               /* CUgraphNodeType */
  int reserved0[3];
  union {
    long long reserved1[29];
    CUDA_CONDITIONAL_NODE_PARAMS conditional;
  } u;
  long long reserved2;
} CUgraphNodeParams;
_Static_assert(sizeof(CUgraphNodeParams) == 256, "CUgraphNodeParams as cuda.h lays it out");
_Static_assert(sizeof(CUDA_CONDITIONAL_NODE_PARAMS) == 32, "as cuda.h lays it out");
/* CUgraphNodeType, CUgraphConditionalNodeType, CUstreamUpdateCaptureDependencies_flags,
 * CUstreamCaptureStatus (cuda.h) */
enum {
  CU_GRAPH_NODE_TYPE_CONDITIONAL = 13,
  CU_GRAPH_COND_TYPE_WHILE = 1,
  CU_GRAPH_COND_TYPE_SWITCH = 2,
  CU_STREAM_SET_CAPTURE_DEPENDENCIES = 1,
  CU_STREAM_CAPTURE_STATUS_ACTIVE = 1,
};

/* CUresult values (cuda.h, enum cudaError_enum) */
enum {
  CUDA_SUCCESS = 0,
  CUDA_ERROR_OUT_OF_MEMORY = 2,
  CUDA_ERROR_NOT_INITIALIZED = 3,
  CUDA_ERROR_STUB_LIBRARY = 34,
  CUDA_ERROR_NO_DEVICE = 100,
};
/* CUmemPool_attribute (cuda.h) */
enum { CU_MEMPOOL_ATTR_RELEASE_THRESHOLD = 4 };
/* CUdevice_attribute (cuda.h) */
enum {
  CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT = 16,
  CU_DEVICE_ATTRIBUTE_UNIFIED_ADDRESSING = 41,
  CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR = 75,
  CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR = 76,
  CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_BLOCK_OPTIN = 97,
};
/* CUfunction_attribute (cuda.h) */
enum { CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES = 8 };
/* CUstream_flags (cuda.h) */
enum { CU_STREAM_DEFAULT = 0x0, CU_STREAM_NON_BLOCKING = 0x1 };
/* CUevent_flags (cuda.h) */
enum { CU_EVENT_DEFAULT = 0x0, CU_EVENT_DISABLE_TIMING = 0x2 };
/* CUstreamCaptureMode (cuda.h) */
enum {
  CU_STREAM_CAPTURE_MODE_GLOBAL = 0,
  CU_STREAM_CAPTURE_MODE_THREAD_LOCAL = 1,
  CU_STREAM_CAPTURE_MODE_RELAXED = 2,
};

/* The driver functions: X(symbol, return type, parameter list). */
#define CUDA_DRIVER_FUNCTIONS(X)                                                              \
  X(cuGetErrorName, CUresult, (CUresult error, const char **str))                             \
  X(cuGetErrorString, CUresult, (CUresult error, const char **str))                           \
  X(cuInit, CUresult, (unsigned int flags))                                                   \
  X(cuDriverGetVersion, CUresult, (int *version))                                             \
  X(cuDeviceGet, CUresult, (CUdevice *device, int ordinal))                                   \
  X(cuDeviceGetCount, CUresult, (int *count))                                                 \
  X(cuDeviceGetName, CUresult, (char *name, int len, CUdevice dev))                           \
  X(cuDeviceGetAttribute, CUresult, (int *value, int attrib, CUdevice dev))                   \
  X(cuDeviceTotalMem_v2, CUresult, (size_t *bytes, CUdevice dev))                             \
  X(cuDevicePrimaryCtxRetain, CUresult, (CUcontext *ctx, CUdevice dev))                       \
  X(cuCtxSetCurrent, CUresult, (CUcontext ctx))                                               \
  X(cuMemAlloc_v2, CUresult, (CUdeviceptr *dptr, size_t bytes))                               \
  X(cuMemFree_v2, CUresult, (CUdeviceptr dptr))                                               \
  X(cuMemAllocAsync, CUresult, (CUdeviceptr *dptr, size_t bytes, CUstream s))                \
  X(cuMemFreeAsync, CUresult, (CUdeviceptr dptr, CUstream s))                                 \
  X(cuDeviceGetDefaultMemPool, CUresult, (CUmemoryPool *pool, CUdevice dev))                  \
  X(cuMemPoolSetAttribute, CUresult, (CUmemoryPool pool, int attr, void *value))              \
  X(cuMemcpyAsync, CUresult, (CUdeviceptr dst, CUdeviceptr src, size_t n, CUstream s))        \
  X(cuMemcpyHtoDAsync_v2, CUresult, (CUdeviceptr dst, const void *src, size_t n, CUstream s)) \
  X(cuMemcpyDtoHAsync_v2, CUresult, (void *dst, CUdeviceptr src, size_t n, CUstream s))       \
  X(cuMemsetD8Async, CUresult, (CUdeviceptr dst, unsigned char v, size_t n, CUstream s))      \
  X(cuStreamCreate, CUresult, (CUstream *s, unsigned int flags))                              \
  X(cuStreamSynchronize, CUresult, (CUstream s))                                              \
  X(cuModuleLoadData, CUresult, (CUmodule *m, const void *image))                             \
  X(cuModuleGetFunction, CUresult, (CUfunction *f, CUmodule m, const char *name))             \
  X(cuModuleUnload, CUresult, (CUmodule m))                                                   \
  X(cuFuncSetAttribute, CUresult, (CUfunction f, int attrib, int value))                      \
  X(cuLaunchKernel, CUresult,                                                                 \
    (CUfunction f, unsigned int gx, unsigned int gy, unsigned int gz, unsigned int bx,        \
     unsigned int by, unsigned int bz, unsigned int shared_bytes, CUstream s, void **params,  \
     void **extra))                                                                           \
  X(cuStreamBeginCapture_v2, CUresult, (CUstream s, int mode))                                \
  X(cuStreamEndCapture, CUresult, (CUstream s, CUgraph *g))                                   \
  X(cuGraphInstantiateWithFlags, CUresult, (CUgraphExec *e, CUgraph g, unsigned long long f)) \
  X(cuGraphLaunch, CUresult, (CUgraphExec e, CUstream s))                                     \
  X(cuGraphExecDestroy, CUresult, (CUgraphExec e))                                            \
  X(cuGraphDestroy, CUresult, (CUgraph g))                                                    \
  X(cuEventCreate, CUresult, (CUevent *e, unsigned int flags))                                \
  X(cuEventRecord, CUresult, (CUevent e, CUstream s))                                         \
  X(cuEventSynchronize, CUresult, (CUevent e))                                                \
  X(cuEventElapsedTime, CUresult, (float *ms, CUevent start, CUevent end))                    \
  X(cuEventDestroy_v2, CUresult, (CUevent e))

/* Driver functions a driver may lack (NULL then; the load does not fail):
 * conditional graph nodes (CUDA 12.3 / 12.4: cuda_graph_cond.c). */
#define CUDA_DRIVER_OPTIONAL_FUNCTIONS(X)                                                     \
  X(cuModuleLoadDataEx, CUresult,                                                             \
    (CUmodule *m, const void *image, unsigned int n, int *options, void **values))            \
  X(cuStreamGetCaptureInfo_v3, CUresult,                                                      \
    (CUstream s, int *status, unsigned long long *id, CUgraph *graph,                         \
     const CUgraphNode **deps, const CUgraphEdgeData **edges, size_t *ndeps))                \
  X(cuGraphConditionalHandleCreate, CUresult,                                                 \
    (CUgraphConditionalHandle *h, CUgraph g, CUcontext ctx, unsigned int value,              \
     unsigned int flags))                                                                     \
  X(cuGraphAddNode_v2, CUresult,                                                              \
    (CUgraphNode *node, CUgraph g, const CUgraphNode *deps, const CUgraphEdgeData *edges,     \
     size_t ndeps, CUgraphNodeParams *params))                                                \
  X(cuStreamUpdateCaptureDependencies_v2, CUresult,                                           \
    (CUstream s, CUgraphNode *deps, const CUgraphEdgeData *edges, size_t n, unsigned int f))  \
  X(cuStreamBeginCaptureToGraph, CUresult,                                                    \
    (CUstream s, CUgraph g, const CUgraphNode *deps, const CUgraphEdgeData *edges, size_t n,  \
     int mode))

typedef struct cuda_driver_api {
#define CUDA_API_MEMBER(name, ret, params) ret(*name) params;
  CUDA_DRIVER_FUNCTIONS(CUDA_API_MEMBER)
  CUDA_DRIVER_OPTIONAL_FUNCTIONS(CUDA_API_MEMBER)
  int version;            /* cuDriverGetVersion's (13000: 13.0); 0 if it failed */
} cuda_driver_api;

/* ---- cuBLASLt's types (cublasLt.h, cublas_api.h, library_types.h) ---- */
typedef int cublasStatus_t;               /* cublas_api.h */
typedef struct cublasLtContext *cublasLtHandle_t;
typedef struct cublasLtMatmulDescOpaque *cublasLtMatmulDesc_t;       /* opaque to us */
typedef struct cublasLtMatrixLayoutOpaque *cublasLtMatrixLayout_t;
typedef struct cublasLtMatmulPreferenceOpaque *cublasLtMatmulPreference_t;
/* cublasLt.h: the algorithm descriptor and a heuristic's result, as laid out there */
typedef struct cublasLtMatmulAlgo_t {
  uint64_t data[8];
} cublasLtMatmulAlgo_t;
typedef struct cublasLtMatmulHeuristicResult_t {
  cublasLtMatmulAlgo_t algo;
  size_t workspaceSize;
  cublasStatus_t state;
  float wavesCount;
  int reserved[4];
} cublasLtMatmulHeuristicResult_t;

/* cublasStatus_t (cublas_api.h) */
enum { CUBLAS_STATUS_SUCCESS = 0, CUBLAS_STATUS_NOT_SUPPORTED = 15 };
/* cublasOperation_t (cublas_api.h) */
enum { CUBLAS_OP_N = 0, CUBLAS_OP_T = 1 };
/* cublasComputeType_t (cublas_api.h) */
enum { CUBLAS_COMPUTE_32F = 68, CUBLAS_COMPUTE_32F_PEDANTIC = 69, CUBLAS_COMPUTE_64F = 70,
       CUBLAS_COMPUTE_32F_FAST_TF32 = 77 };
/* cudaDataType_t (library_types.h) */
enum { CUDA_R_32F = 0, CUDA_R_64F = 1, CUDA_R_16F = 2, CUDA_R_16BF = 14 };
/* cublasLtMatrixLayoutAttribute_t (cublasLt.h); BATCH_COUNT is int32_t,
 * STRIDED_BATCH_OFFSET int64_t */
enum { CUBLASLT_MATRIX_LAYOUT_BATCH_COUNT = 5, CUBLASLT_MATRIX_LAYOUT_STRIDED_BATCH_OFFSET = 6 };
/* cublasLtMatmulDescAttributes_t (cublasLt.h); TRANSA/TRANSB are int32_t */
enum { CUBLASLT_MATMUL_DESC_TRANSA = 3, CUBLASLT_MATMUL_DESC_TRANSB = 4 };
/* cublasLtMatmulPreferenceAttributes_t (cublasLt.h); MAX_WORKSPACE_BYTES is
 * uint64_t, the MIN_ALIGNMENT ones uint32_t (default 256) */
enum {
  CUBLASLT_MATMUL_PREF_MAX_WORKSPACE_BYTES = 1,
  CUBLASLT_MATMUL_PREF_MIN_ALIGNMENT_A_BYTES = 5,
  CUBLASLT_MATMUL_PREF_MIN_ALIGNMENT_B_BYTES = 6,
  CUBLASLT_MATMUL_PREF_MIN_ALIGNMENT_C_BYTES = 7,
  CUBLASLT_MATMUL_PREF_MIN_ALIGNMENT_D_BYTES = 8,
};

/* The cuBLASLt functions: X(symbol, return type, parameter list). */
#define CUBLASLT_FUNCTIONS(X)                                                                  \
  X(cublasLtGetVersion, size_t, (void))                                                        \
  X(cublasLtGetStatusName, const char *, (cublasStatus_t status))                              \
  X(cublasLtCreate, cublasStatus_t, (cublasLtHandle_t * handle))                               \
  X(cublasLtDestroy, cublasStatus_t, (cublasLtHandle_t handle))                                \
  X(cublasLtMatmulDescCreate, cublasStatus_t,                                                  \
    (cublasLtMatmulDesc_t * desc, int compute_type, int scale_type))                           \
  X(cublasLtMatmulDescSetAttribute, cublasStatus_t,                                            \
    (cublasLtMatmulDesc_t desc, int attr, const void *buf, size_t size))                       \
  X(cublasLtMatmulDescDestroy, cublasStatus_t, (cublasLtMatmulDesc_t desc))                    \
  X(cublasLtMatrixLayoutCreate, cublasStatus_t,                                                \
    (cublasLtMatrixLayout_t * layout, int type, uint64_t rows, uint64_t cols, int64_t ld))     \
  X(cublasLtMatrixLayoutSetAttribute, cublasStatus_t,                                          \
    (cublasLtMatrixLayout_t layout, int attr, const void *buf, size_t size))                   \
  X(cublasLtMatrixLayoutDestroy, cublasStatus_t, (cublasLtMatrixLayout_t layout))              \
  X(cublasLtMatmulPreferenceCreate, cublasStatus_t, (cublasLtMatmulPreference_t * pref))       \
  X(cublasLtMatmulPreferenceSetAttribute, cublasStatus_t,                                      \
    (cublasLtMatmulPreference_t pref, int attr, const void *buf, size_t size))                 \
  X(cublasLtMatmulPreferenceDestroy, cublasStatus_t, (cublasLtMatmulPreference_t pref))        \
  X(cublasLtMatmulAlgoGetHeuristic, cublasStatus_t,                                            \
    (cublasLtHandle_t handle, cublasLtMatmulDesc_t desc, cublasLtMatrixLayout_t a,             \
     cublasLtMatrixLayout_t b, cublasLtMatrixLayout_t c, cublasLtMatrixLayout_t d,             \
     cublasLtMatmulPreference_t pref, int requested, cublasLtMatmulHeuristicResult_t *results, \
     int *returned))                                                                           \
  X(cublasLtMatmul, cublasStatus_t,                                                            \
    (cublasLtHandle_t handle, cublasLtMatmulDesc_t desc, const void *alpha, const void *a,     \
     cublasLtMatrixLayout_t adesc, const void *b, cublasLtMatrixLayout_t bdesc,                \
     const void *beta, const void *c, cublasLtMatrixLayout_t cdesc, void *d,                   \
     cublasLtMatrixLayout_t ddesc, const cublasLtMatmulAlgo_t *algo, void *workspace,          \
     size_t workspace_bytes, CUstream stream))

typedef struct cublaslt_api {
  CUBLASLT_FUNCTIONS(CUDA_API_MEMBER)
  const char *path;       /* the file that was loaded (static) */
} cublaslt_api;

/* Loads libcuda (see the top) and resolves every CUDA_DRIVER_FUNCTIONS
 * symbol; *out is static. Calls no CUDA function but cuDriverGetVersion
 * (not cuInit). Errors: HLO_UNAVAILABLE "the cuda backend needs the NVIDIA
 * driver (PATH): DLERROR" for a library that does not load, naming the
 * missing symbol for one that lacks a function. */
HLO_MUST_USE hlo_status cuda_driver_load(const cuda_driver_api **out);

/* Loads libcublasLt (see the top) and resolves every CUBLASLT_FUNCTIONS
 * symbol; *out is static. Needs no GPU. Errors: HLO_UNAVAILABLE naming
 * the paths tried and the last dlerror. */
HLO_MUST_USE hlo_status cublaslt_load(const cublaslt_api **out);

/* "NAME (description)" of a CUresult, e.g. "CUDA_ERROR_OUT_OF_MEMORY (out
 * of memory)", in buf (returned); "CUresult N" when the driver does not
 * know it. */
const char *cuda_result_text(const cuda_driver_api *cu, CUresult r, char *buf, size_t len);

/* ---- shared by the CUDA backend's files ---- */

/* What backend_cuda sets up once per process (cuda_backend.c): valid, and
 * constant, after backend_cuda returned success. */
typedef struct cuda_device_state {
  const cuda_driver_api *cu;
  const cublaslt_api *lt;
  CUdevice dev;
  CUcontext ctx;          /* device 0's primary context */
  CUstream stream;        /* the backend's one stream (non-blocking) */
  int cc_major, cc_minor; /* compute capability */
  int num_sms;            /* multiprocessors */
  int max_shared_optin;   /* dynamic shared memory a block may opt into */
  size_t total_mem;
  char name[256];         /* the device's name */
  char target[512];       /* backend.target's text */
} cuda_device_state;

/* The state, or NULL before backend_cuda succeeded. */
const cuda_device_state *cuda_state(void);

/* Makes the backend's context current on the calling thread; the error
 * (HLO_INTERNAL) names `what`. */
HLO_MUST_USE hlo_status cuda_make_current(const cuda_device_state *s, const char *what);

/* HLO_INTERNAL "WHAT: NAME (description)" for a failed driver call. */
hlo_status cuda_error(const cuda_device_state *s, CUresult r, const char *what);

/* The stream the capture open on this thread records on (cuda_backend.c's
 * graph_begin: the thread's capture stream, or a conditional body's), or
 * NULL when none is open; cuda_capture_set_stream changes it (a body
 * begun or ended: cuda_graph_cond.c). */
CUstream cuda_capture_stream(void);
void cuda_capture_set_stream(CUstream s);

/* The backend's conditional-node slots (cuda_graph_cond.c; contract:
 * backend.graph_cond_* in backend.h): CUDA 12.4's conditional WHILE nodes
 * (IF and SWITCH: SWITCH nodes, CUDA 12.8),
 * the condition set by a kernel of a PTX module loaded once per process
 * (the driver's JIT resolves cudaGraphSetConditional). graph_cond_abort
 * ends every body still open on this thread (graph_end, after an error). */
bool cuda_graph_cond_takes(const backend_cond *c);
HLO_MUST_USE hlo_status cuda_graph_cond_begin(const backend_cond *c);
HLO_MUST_USE hlo_status cuda_graph_cond_set(const backend_cond *c);
HLO_MUST_USE hlo_status cuda_graph_cond_next(void);
HLO_MUST_USE hlo_status cuda_graph_cond_end(void);
void cuda_graph_cond_abort(void);

/* The backend's gemm slot (cuda_gemm.c; contract: backend_gemm in
 * backend.h): cuBLASLt, asynchronous on s->stream. Element types: F32
 * (full-precision f32 compute, no TF32), F64, BF16 and F16 in with C of the
 * same type or F32. */
HLO_MUST_USE hlo_status cuda_gemm(const backend_gemm *g, const void *a, const void *b, void *c);

/* Whether f32 products whose precision allows it (DEFAULT, as XLA reads
 * it on GPUs) may use TF32: yes unless the environment variable
 * HLO_CUDA_TF32 is "0" (read once; cuda_gemm.c). The rule of cuBLASLt's
 * products (backend_gemm.allow_tf32) and of cuDNN's convolutions. */
bool cuda_tf32_enabled(void);

#endif /* HLO_BACKEND_CUDA_CUDA_API_H */
