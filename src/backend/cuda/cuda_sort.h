/* cuda_sort.h — the CUDA backend's stablehlo.sort slots (backend.h:
 * sort_takes, sort): a backend_sort (backend/sort_describe.h) computed on
 * the GPU by one kernel of one CUDA C source, compiled by NVRTC on first
 * use, once per process.
 *
 * Results: bit for bit the reference interpreter's order
 * (interp/interp_sort.c) and the CPU backend's (backend/cpu/sort.h), ties,
 * NaNs and signed zeros included:
 *   - every element's keys become order-preserving unsigned integers
 *     (canonicalisation steps applied, descending keys complemented,
 *     FLOAT keys by value with -0 == +0), packed key 0 first into 64-bit
 *     words, and the element's position in its row is the last tiebreak:
 *     a strict weak order made total, so a stable sort has one result,
 *     the interpreter's; a bitonic network sorts it (any sorting network
 *     gives that one result);
 *   - a row where a FLOAT key holds a NaN (IEEE compare is not a strict
 *     weak order there) is instead sorted by one thread running the
 *     interpreter's own bottom-up merge sort, the comparator evaluated on
 *     the device: the same comparisons in the same order, the same result.
 *
 * What is taken: what cpu_sort_takes takes (keys of integer, i1, f16,
 * bf16, f32, f64 or complex-part type, payloads up to 16 bytes, any rank,
 * any sorted dimension). Rows that fit one thread block's shared memory
 * (the row length padded to a power of two P, times 8 bytes a key word
 * plus 4 for the position, and 4 bytes a row: at most 48 KiB without a
 * started backend, rows of up to 2048 elements with one key word; else
 * the device's opt-in limit, cuda_device_state.max_shared_optin: 227 KiB
 * on an H200, rows of up to 16384 elements with one key word) are sorted
 * there, several rows a block. Longer rows are sorted one row a block
 * (at most CUDA_SORT_LONG_BLOCKS blocks) by the same kernel in global
 * scratch memory, the same layout; taken when that scratch is at most
 * CUDA_SORT_SCRATCH_MAX bytes. The scratch is allocated by cuda_sort.c
 * when a sort needing it is first taken (or run), grown by allocating a
 * bigger one, and never freed (a call recorded into a CUDA graph keeps
 * the address it was given; every call runs on the one stream, so calls
 * sharing a scratch never overlap).
 *
 * Memory: every pointer is device memory of the backend (cuda_backend.c);
 * a call enqueues one kernel on the backend's one stream
 * (cuda_state()->stream) and returns without waiting.
 *
 * The kernel's source (cuda_sort_source_body) is written in the common
 * subset of C11 and C++17 over a few prelude macros, so the tests compile
 * it with the host C compiler and run it over an emulated grid
 * (tests/unit/test_cuda_sort.c). */
#ifndef HLO_BACKEND_CUDA_CUDA_SORT_H
#define HLO_BACKEND_CUDA_CUDA_SORT_H
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include "backend/sort_describe.h"
#include "hlo/hlo.h"

/* A key as the kernel reads it (the source's sk_key, field for field). */
typedef struct cuda_sort_key {
  int64_t operand;         /* which input */
  int64_t offset;          /* bytes into the element (an imag part: half its size) */
  int64_t size;            /* bytes loaded */
  int64_t nbits;           /* the key type's bits */
  int64_t kind;            /* CUDA_SORT_SINT .. CUDA_SORT_F64 */
  int64_t total;           /* floats: 1 TOTALORDER, 0 FLOAT */
  int64_t descending;
  int64_t quiet;           /* a complex<f32> part: a NaN's bits come out quiet */
  int64_t word;            /* the packed word it goes into */
  int64_t width;           /* its bits there */
  int64_t ncanon;
  int64_t canon_nan[BACKEND_SORT_MAX_CANON];
  double eq[BACKEND_SORT_MAX_CANON];
  double canon_value[BACKEND_SORT_MAX_CANON];
  uint64_t to_bits[BACKEND_SORT_MAX_CANON];
} cuda_sort_key;

enum { CUDA_SORT_SINT, CUDA_SORT_UINT, CUDA_SORT_BOOL, CUDA_SORT_F16, CUDA_SORT_BF16,
       CUDA_SORT_F32, CUDA_SORT_F64 };

/* The kernel's one parameter (the source's sk_desc, field for field). */
typedef struct cuda_sort_desc {
  int64_t nops, nkeys, nwords;
  int64_t len;             /* row length */
  int64_t inner;           /* elements between a row's neighbours (product of later dims) */
  int64_t nrows;
  int64_t p, lp;           /* the padded row length, a power of two, and its log2 */
  int64_t rpb;             /* rows a block sorts together */
  int64_t sstride;         /* bytes of scratch a block (scratch mode) */
  uint64_t scratch;        /* device address of the scratch; 0: shared memory */
  int64_t unused;
  int64_t esize[BACKEND_SORT_MAX_OPERANDS];
  uint64_t in[BACKEND_SORT_MAX_OPERANDS], out[BACKEND_SORT_MAX_OPERANDS];
  cuda_sort_key key[BACKEND_SORT_MAX_KEYS];
} cuda_sort_desc;

/* A launch: grid x 1 x 1 blocks of block x 1 x 1 threads, shared bytes of
 * dynamic shared memory each, and scratch bytes of global memory (rows
 * too long for shared memory: desc.scratch must then point to them). */
typedef struct cuda_sort_geometry {
  unsigned grid, block;
  size_t shared;
  size_t scratch;
} cuda_sort_geometry;

/* Blocks a sort of long rows (in global scratch) runs on, and the most
 * scratch such a sort may use. */
#define CUDA_SORT_LONG_BLOCKS 128
#define CUDA_SORT_SCRATCH_MAX ((size_t)1 << 30)

/* Whether cuda_sort computes `s`: cpu_sort_takes(s) and the scratch limit
 * (above). Needs no GPU; once the CUDA backend is started (backend_cuda),
 * a true answer first compiles and loads the kernel and allocates the
 * scratch the sort needs (once per process, grown when needed: the
 * runtime asks at compile time, so a run neither compiles nor allocates)
 * and is false when either fails (the op then stays the interpreter's).
 * Thread-safe. */
bool cuda_sort_takes(const backend_sort *s);

/* Sorts (contract as cpu_sort's, backend/cpu/sort.h): outputs[k]
 * (s->dims, s->dtypes[k], row-major) = inputs[k] with every slice along
 * s->dimension permuted into the comparator's order; device pointers,
 * borrowed; outputs must not overlap inputs. One kernel launch (none for
 * an empty tensor), asynchronous on the backend's stream. Thread-safe.
 * Errors: HLO_UNIMPLEMENTED for a form not taken; HLO_UNAVAILABLE when
 * the CUDA backend is not started or NVRTC is missing; HLO_INTERNAL for a
 * failed driver call or a kernel NVRTC rejects (its log). */
HLO_MUST_USE hlo_status cuda_sort(const backend_sort *s, void *const *inputs,
                                  void *const *outputs);

/* ---- for the tests ---- */

/* The whole source for the device: the device prelude, then the body. Static. */
const char *cuda_sort_source(void);
/* The body alone: the kernel hlo_sort_rows(sk_desc) over the prelude's
 * macros SK_KERNEL (the kernel prefix, return type included), SK_DEV (a
 * device helper's prefix), SK_GRID_CONST (the parameter's qualifier),
 * SK_TX / SK_NTX (the thread in the block and the block's threads),
 * SK_BX / SK_NBX (the block and the blocks), SK_SYNC() (a block barrier),
 * sk_smem (the dynamic shared memory, uint64_t *), and the functions
 * wk_f2u, wk_u2f, wk_d2u, wk_u2d (float / double bits), with int8_t ..
 * uint64_t defined. The kernel is correct for any block and grid size.
 * Static. */
const char *cuda_sort_source_body(void);
/* Whether `s` is taken with `shared_limit` bytes of shared memory a block
 * (cuda_sort_takes without the device), and the parameter block and
 * launch geometry of `s` on inputs / outputs (device addresses) when so;
 * out_desc->scratch is left 0 (the caller points it to out_geo->scratch
 * bytes when those are not 0). */
bool cuda_sort_plan(const backend_sort *s, size_t shared_limit, void *const *inputs,
                    void *const *outputs, cuda_sort_desc *out_desc,
                    cuda_sort_geometry *out_geo);

#endif /* HLO_BACKEND_CUDA_CUDA_SORT_H */
