/* cuda_cudnn.h — convolutions through cuDNN 9's legacy convolution API,
 * loaded at run time with dlopen (as cuda_api.h loads the driver and
 * cuBLASLt): no cuDNN header at build time, no link; a machine without
 * cuDNN keeps cuda_conv's own paths, silently.
 *
 * Where libcudnn is looked for: $HLO_CUDNN_LIB when set and non-empty
 * (only that path), else libcudnn.so.9 and libcudnn.so by the loader's
 * search, then those names in each folder of $HLO_CUDNN_DIR (a
 * ':'-separated list; tests/gpu/deps.sh points it at the nvidia-cudnn
 * wheel's lib folder). With HLO_CUDA_LIB set (a driver by path: the unit
 * tests' mock) only HLO_CUDNN_LIB is tried: a system cuDNN would run on
 * the real driver beside it. cuDNN 9's libcudnn.so.9 is a shim that loads
 * libcudnn_graph / _ops / _cnn from its own folder and exports every
 * symbol, so one handle resolves the whole CUDNN_FUNCTIONS table. Loaded
 * once per process; a failure is remembered.
 *
 * What maps (cuda_cudnn_map; 2 or 3 spatial dims, f32, f64, bf16, f16,
 * sizes within int): a StableHLO convolution is one of three cuDNN calls,
 *   - forward (cudnnConvolutionForward): lhs dilation 1, no batch groups,
 *     feature groups (cudnnSetConvolutionGroupCount), rhs dilation,
 *     strides, padding_low >= 0 with the result size cuDNN derives from
 *     symmetric padding_low (padding_high may differ where it changes no
 *     output), window reversal on all spatial dims (CUDNN_CONVOLUTION) or
 *     none (CUDNN_CROSS_CORRELATION);
 *   - backward data (cudnnConvolutionBackwardData; the transposed conv):
 *     lhs dilation s > 1 on some dim, stride 1, no groups: cuDNN stride s,
 *     padding (R - 1) * rhs_dilation - padding_low >= 0, the mode flipped
 *     (a non-reversed StableHLO window is cuDNN's CONVOLUTION), the filter
 *     [kernel input feature, kernel output feature, spatial];
 *   - backward filter (cudnnConvolutionBackwardFilter; the weight
 *     gradient): lhs dilation 1, no reversal, and batch groups > 1 or a
 *     kernel window larger than the result's (JAX's weight-gradient form):
 *     x = lhs with its feature dim as cuDNN's N and its batch dim as C,
 *     dy = rhs (kernel input feature as N, output feature as K), dw = the
 *     result [output feature, output batch, spatial]; cuDNN stride =
 *     rhs_dilation, dilation = window_strides, batch groups = group count.
 * Tensors (x, y) take any dimension order (cudnnSetTensorNdDescriptor with
 * the operand's strides). cuDNN's filter must be packed [K, C, spatial]
 * (NCHW) or [K, spatial, C] (NHWC): any other order of the kernel (HWIO)
 * is transposed into the scratch by cudnnTransformTensor first (forward,
 * backward data), or the weight gradient is computed there packed and
 * transposed into the result after (backward filter); bf16 only where
 * the filter is packed already (no transform of bf16).
 *
 * Math: f32 with CUDNN_DEFAULT_MATH (TF32 tensor cores allowed) where both
 * precisions are DEFAULT and HLO_CUDA_TF32 is not "0" (cuda_gemm's rule),
 * else CUDNN_FMA_MATH (full f32); f16 / bf16 in f32 compute, default math;
 * f64 in f64.
 *
 * Algorithm and workspace: per description, once per process (a plan
 * table, never freed, as cuda_gemm's: the plan made at compile time is the
 * one every run uses, so scratch and algorithm agree), from the list of
 * cudnnFindConvolution*Algorithm (each algorithm timed once on the
 * backend's stream, outside any capture; inside a capture, or with
 * HLO_CUDNN_FIND=0, cudnnGetConvolution*Algorithm_v7's heuristic list): of
 * the results that succeed, fit CUDA_CUDNN_WORKSPACE_MAX and (full f32)
 * use no tensor-op math, the fastest deterministic one, unless it takes
 * over twice the fastest one (then that one); its
 * cudnnGetConvolution*WorkspaceSize is the plan's workspace. A choice the
 * compilation cache kept for the description (cuda_cudnn_import, below)
 * is taken instead, untimed, and without cuDNN at compile time: the plan's
 * scratch comes from the kept workspace size, and the handle, the
 * descriptors and the workspace query wait for the first run (the first
 * deferred run of the CUDA runtime is eager, outside any capture, as
 * cuBLASLt's plans are made then too). The scratch is
 * the workspace then the packed filter (256-byte aligned), asked for at
 * compile time (cuda_conv_scratch_bytes). One cudnnHandle per process
 * (made on the first plan, with the context current); every call sets the
 * caller's stream on it under a mutex, so calls land in the capture open
 * on the thread as cuBLASLt's do. */
#ifndef HLO_BACKEND_CUDA_CUDA_CUDNN_H
#define HLO_BACKEND_CUDA_CUDA_CUDNN_H
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include "backend/backend.h"
#include "backend/conv_describe.h"
#include "backend/cuda/cuda_api.h"
#include "hlo/hlo.h"

/* ---- cuDNN 9's types (cudnn_graph.h, cudnn_ops.h, cudnn_cnn.h) ---- */
typedef int cudnnStatus_t;
typedef struct cudnnContext *cudnnHandle_t;
typedef struct cudnnTensorStruct *cudnnTensorDescriptor_t;
typedef struct cudnnFilterStruct *cudnnFilterDescriptor_t;
typedef struct cudnnConvolutionStruct *cudnnConvolutionDescriptor_t;
/* cudnnStatus_t (cudnn_graph.h, cuDNN 9: categories of 1000) */
enum { CUDNN_STATUS_SUCCESS = 0, CUDNN_STATUS_BAD_PARAM = 2000, CUDNN_STATUS_NOT_SUPPORTED = 3000 };
/* cudnnDataType_t (cudnn_graph.h) */
enum { CUDNN_DATA_FLOAT = 0, CUDNN_DATA_DOUBLE = 1, CUDNN_DATA_HALF = 2, CUDNN_DATA_BFLOAT16 = 9 };
/* cudnnTensorFormat_t (cudnn_graph.h) */
enum { CUDNN_TENSOR_NCHW = 0, CUDNN_TENSOR_NHWC = 1 };
/* cudnnConvolutionMode_t (cudnn_cnn.h) */
enum { CUDNN_CONVOLUTION = 0, CUDNN_CROSS_CORRELATION = 1 };
/* cudnnMathType_t (cudnn_graph.h) */
enum { CUDNN_DEFAULT_MATH = 0, CUDNN_TENSOR_OP_MATH = 1,
       CUDNN_TENSOR_OP_MATH_ALLOW_CONVERSION = 2, CUDNN_FMA_MATH = 3 };
/* cudnnDeterminism_t (cudnn_graph.h) */
enum { CUDNN_NON_DETERMINISTIC = 0, CUDNN_DETERMINISTIC = 1 };
/* cudnnConvolution{Fwd,BwdData,BwdFilter}AlgoPerf_t (cudnn_cnn.h): the
 * three have this one layout */
typedef struct cudnnConvolutionAlgoPerf_t {
  int algo;
  cudnnStatus_t status;
  float time;
  size_t memory;
  int determinism;
  int mathType;
  int reserved[3];
} cudnnConvolutionAlgoPerf_t;

#define CUDNN_FUNCTIONS(X)                                                                     \
  X(cudnnGetVersion, size_t, (void))                                                           \
  X(cudnnGetErrorString, const char *, (cudnnStatus_t status))                                 \
  X(cudnnCreate, cudnnStatus_t, (cudnnHandle_t * handle))                                      \
  X(cudnnSetStream, cudnnStatus_t, (cudnnHandle_t handle, CUstream stream))                    \
  X(cudnnCreateTensorDescriptor, cudnnStatus_t, (cudnnTensorDescriptor_t * d))                 \
  X(cudnnSetTensorNdDescriptor, cudnnStatus_t,                                                 \
    (cudnnTensorDescriptor_t d, int type, int nb, const int *dims, const int *strides))       \
  X(cudnnDestroyTensorDescriptor, cudnnStatus_t, (cudnnTensorDescriptor_t d))                  \
  X(cudnnCreateFilterDescriptor, cudnnStatus_t, (cudnnFilterDescriptor_t * d))                 \
  X(cudnnSetFilterNdDescriptor, cudnnStatus_t,                                                 \
    (cudnnFilterDescriptor_t d, int type, int format, int nb, const int *dims))               \
  X(cudnnDestroyFilterDescriptor, cudnnStatus_t, (cudnnFilterDescriptor_t d))                  \
  X(cudnnCreateConvolutionDescriptor, cudnnStatus_t, (cudnnConvolutionDescriptor_t * d))       \
  X(cudnnSetConvolutionNdDescriptor, cudnnStatus_t,                                            \
    (cudnnConvolutionDescriptor_t d, int n, const int *pad, const int *stride,                 \
     const int *dilation, int mode, int compute_type))                                         \
  X(cudnnSetConvolutionGroupCount, cudnnStatus_t, (cudnnConvolutionDescriptor_t d, int groups)) \
  X(cudnnSetConvolutionMathType, cudnnStatus_t, (cudnnConvolutionDescriptor_t d, int math))   \
  X(cudnnDestroyConvolutionDescriptor, cudnnStatus_t, (cudnnConvolutionDescriptor_t d))        \
  X(cudnnTransformTensor, cudnnStatus_t,                                                       \
    (cudnnHandle_t h, const void *alpha, cudnnTensorDescriptor_t xd, const void *x,            \
     const void *beta, cudnnTensorDescriptor_t yd, void *y))                                   \
  X(cudnnGetConvolutionForwardAlgorithm_v7, cudnnStatus_t,                                     \
    (cudnnHandle_t h, cudnnTensorDescriptor_t xd, cudnnFilterDescriptor_t wd,                  \
     cudnnConvolutionDescriptor_t cd, cudnnTensorDescriptor_t yd, int requested,               \
     int *returned, cudnnConvolutionAlgoPerf_t *perf))                                         \
  X(cudnnFindConvolutionForwardAlgorithm, cudnnStatus_t,                                       \
    (cudnnHandle_t h, cudnnTensorDescriptor_t xd, cudnnFilterDescriptor_t wd,                  \
     cudnnConvolutionDescriptor_t cd, cudnnTensorDescriptor_t yd, int requested,               \
     int *returned, cudnnConvolutionAlgoPerf_t *perf))                                         \
  X(cudnnFindConvolutionBackwardDataAlgorithm, cudnnStatus_t,                                  \
    (cudnnHandle_t h, cudnnFilterDescriptor_t wd, cudnnTensorDescriptor_t dyd,                 \
     cudnnConvolutionDescriptor_t cd, cudnnTensorDescriptor_t dxd, int requested,              \
     int *returned, cudnnConvolutionAlgoPerf_t *perf))                                         \
  X(cudnnFindConvolutionBackwardFilterAlgorithm, cudnnStatus_t,                                \
    (cudnnHandle_t h, cudnnTensorDescriptor_t xd, cudnnTensorDescriptor_t dyd,                 \
     cudnnConvolutionDescriptor_t cd, cudnnFilterDescriptor_t dwd, int requested,              \
     int *returned, cudnnConvolutionAlgoPerf_t *perf))                                         \
  X(cudnnGetConvolutionForwardWorkspaceSize, cudnnStatus_t,                                    \
    (cudnnHandle_t h, cudnnTensorDescriptor_t xd, cudnnFilterDescriptor_t wd,                  \
     cudnnConvolutionDescriptor_t cd, cudnnTensorDescriptor_t yd, int algo, size_t *bytes))    \
  X(cudnnConvolutionForward, cudnnStatus_t,                                                    \
    (cudnnHandle_t h, const void *alpha, cudnnTensorDescriptor_t xd, const void *x,            \
     cudnnFilterDescriptor_t wd, const void *w, cudnnConvolutionDescriptor_t cd, int algo,     \
     void *ws, size_t ws_bytes, const void *beta, cudnnTensorDescriptor_t yd, void *y))        \
  X(cudnnGetConvolutionBackwardDataAlgorithm_v7, cudnnStatus_t,                                \
    (cudnnHandle_t h, cudnnFilterDescriptor_t wd, cudnnTensorDescriptor_t dyd,                 \
     cudnnConvolutionDescriptor_t cd, cudnnTensorDescriptor_t dxd, int requested,              \
     int *returned, cudnnConvolutionAlgoPerf_t *perf))                                         \
  X(cudnnGetConvolutionBackwardDataWorkspaceSize, cudnnStatus_t,                               \
    (cudnnHandle_t h, cudnnFilterDescriptor_t wd, cudnnTensorDescriptor_t dyd,                 \
     cudnnConvolutionDescriptor_t cd, cudnnTensorDescriptor_t dxd, int algo, size_t *bytes))   \
  X(cudnnConvolutionBackwardData, cudnnStatus_t,                                               \
    (cudnnHandle_t h, const void *alpha, cudnnFilterDescriptor_t wd, const void *w,            \
     cudnnTensorDescriptor_t dyd, const void *dy, cudnnConvolutionDescriptor_t cd, int algo,   \
     void *ws, size_t ws_bytes, const void *beta, cudnnTensorDescriptor_t dxd, void *dx))      \
  X(cudnnGetConvolutionBackwardFilterAlgorithm_v7, cudnnStatus_t,                              \
    (cudnnHandle_t h, cudnnTensorDescriptor_t xd, cudnnTensorDescriptor_t dyd,                 \
     cudnnConvolutionDescriptor_t cd, cudnnFilterDescriptor_t dwd, int requested,              \
     int *returned, cudnnConvolutionAlgoPerf_t *perf))                                         \
  X(cudnnGetConvolutionBackwardFilterWorkspaceSize, cudnnStatus_t,                             \
    (cudnnHandle_t h, cudnnTensorDescriptor_t xd, cudnnTensorDescriptor_t dyd,                 \
     cudnnConvolutionDescriptor_t cd, cudnnFilterDescriptor_t dwd, int algo, size_t *bytes))   \
  X(cudnnConvolutionBackwardFilter, cudnnStatus_t,                                             \
    (cudnnHandle_t h, const void *alpha, cudnnTensorDescriptor_t xd, const void *x,            \
     cudnnTensorDescriptor_t dyd, const void *dy, cudnnConvolutionDescriptor_t cd, int algo,   \
     void *ws, size_t ws_bytes, const void *beta, cudnnFilterDescriptor_t dwd, void *dw))

typedef struct cudnn_api {
  CUDNN_FUNCTIONS(CUDA_API_MEMBER)
  size_t version; /* cudnnGetVersion's (90100: 9.1.0) */
  char path[1024]; /* the file that was loaded */
} cudnn_api;

/* Loads libcudnn (see the top; *out is static). Needs no GPU. Errors:
 * HLO_UNAVAILABLE naming every path tried and the last dlerror, a missing
 * symbol, or a cuDNN older than 9. */
HLO_MUST_USE hlo_status cudnn_load(const cudnn_api **out);

/* The workspace a plan's algorithm may use at most (bytes). */
#define CUDA_CUDNN_WORKSPACE_MAX ((size_t)256 << 20)

typedef enum cuda_cudnn_kind {
  CUDA_CUDNN_NONE, CUDA_CUDNN_FORWARD, CUDA_CUDNN_BACKWARD_DATA, CUDA_CUDNN_BACKWARD_FILTER
} cuda_cudnn_kind;

/* A convolution as cuDNN sees it (cuda_cudnn_map): tensors x and y (dims
 * N, C, spatial..., strides in elements, as the operands lie), the filter
 * w (dims K, C / groups, spatial...; the operand's strides in w_strides;
 * w_packed: it already lies packed in w_format's order, else it is moved
 * to / from a packed NCHW copy in the scratch), and the convolution. Which
 * operand is which: forward x = lhs, w = rhs, y = result; backward data
 * y = lhs (dy), w = rhs, x = result (dx); backward filter x = lhs, y = rhs
 * (dy), w = result (dw). */
typedef struct cuda_cudnn_desc {
  cuda_cudnn_kind kind;
  int nb;                   /* dims of each: num_spatial + 2 */
  int dtype, compute, math; /* CUDNN_DATA_*, the convolution's compute type, CUDNN_*_MATH */
  int x_dims[5], x_strides[5], y_dims[5], y_strides[5];
  int w_dims[5], w_strides[5], w_format;
  bool w_packed;
  int pad[3], stride[3], dilation[3], mode, groups;
} cuda_cudnn_desc;

/* Whether cuDNN can compute `c` (the forms at the top), and how (*out).
 * Pure: needs no library. */
bool cuda_cudnn_map(const backend_conv *c, cuda_cudnn_desc *out);

/* Whether HLO_CUDNN allows cuDNN (not "0"), and whether it forces it
 * ("1": a failure to load is then an error). Read once. */
bool cuda_cudnn_allowed(void);
bool cuda_cudnn_forced(void);

/* The plan for `c` (made once per description, needs the library and a
 * current context: the handle, the descriptors, the algorithm): whether
 * cuDNN takes `c` (*takes) and the scratch it needs (*scratch_bytes).
 * A description cuda_cudnn_map refuses, or one cuDNN has no algorithm for
 * within CUDA_CUDNN_WORKSPACE_MAX, is no error (*takes false). Errors:
 * the load's (HLO_UNAVAILABLE), a cuDNN call that failed otherwise
 * (HLO_INTERNAL at c->loc, naming the call and cudnnGetErrorString). */
HLO_MUST_USE hlo_status cuda_cudnn_plan(const backend_conv *c, bool *takes, size_t *scratch_bytes);

/* Enqueues `c` on `stream` (device pointers as cuda_conv's; scratch of the
 * plan's bytes). Errors: HLO_UNIMPLEMENTED when the plan does not take
 * `c`; HLO_INTERNAL at c->loc naming the failed cuDNN call and its
 * status string; the plan's. */
HLO_MUST_USE hlo_status cuda_cudnn_conv(const backend_conv *c, const void *lhs, const void *rhs,
                                        void *output, void *scratch, CUstream stream);

/* ---- the choices in the compilation cache (docs/cache.md) ----
 * A plan's algorithm is timed (cudnnFind*: hundreds of milliseconds for a
 * CNN's few convolutions) once per process; an executable loaded from the
 * compilation cache would time them again at every warm compile. So the
 * cache keeps them with the executable (the entry's "conv_tuning" section) and
 * gives them back before the executable is lowered again; a plan of a kept
 * description then takes the kept algorithm and math type without timing,
 * and without cuDNN's handle (cudnnCreate and cuDNN's first calls cost
 * tens of milliseconds on the H200): the first run makes the descriptors
 * and asks for the workspace again (at least the kept one). One that cuDNN
 * refuses then (a declined status) is tuned again within the scratch
 * planned at compile time, else that run fails naming `hlo cache clear`.
 *
 * The section (native byte order; the entry's key already holds the GPU):
 *   "HLOCUDNN" | u32 format 1 | u32 count | u64 cudnnGetVersion() | u32
 *   TF32 (cuda_tf32_enabled) | u32 T | T bytes: the backend's target text
 *   (GPU, architecture, NVRTC) | count records of KEY_LEN int64 (the
 *   description: cuda_cudnn.c's plan key) | i32 algorithm | i32 math type
 *   | u64 workspace bytes | u32 timed (1: cudnnFind's, 0: the heuristic's)
 *   | u32 0.
 * What the choice depends on beyond the description (the GPU, cuDNN's
 * version, TF32) is checked on import rather than put into the entry's
 * key: the rest of the entry (module, cubins) stays valid when only those
 * change, and the key must not need cuDNN loaded (every compile makes a
 * key; most programs have no convolution). */

/* The choices of the plans (made in this process) that take a conv of
 * cs[0..n), as the section above: *out malloc'd (yours), *len bytes; NULL
 * and 0 when none of them has such a plan. Errors: HLO_RESOURCE_EXHAUSTED. */
HLO_MUST_USE hlo_status cuda_cudnn_export(const backend_conv *cs, uint32_t n, void **out,
                                          size_t *len);


/* Gives the choices of a section back (data[0..len), as the section
 * above): checks the whole section first, then, when cuDNN is allowed,
 * loads it and compares what the choices were tuned for with this
 * process. why[0..cap): the reason for STALE or BAD ("" otherwise). Kept
 * choices stay for the process (a later one for the same description
 * replaces it); a plan already made is not changed. Needs no GPU; never
 * fails otherwise. */
backend_tuning_kept cuda_cudnn_import(const void *data, size_t len, char *why, size_t cap);

#endif /* HLO_BACKEND_CUDA_CUDA_CUDNN_H */
