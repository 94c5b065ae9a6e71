/* emit_cuda.c — the CUDA dialect of the C-style kernel printer
 * (codegen/cstyle.h) and the GPU schedule (see emit_cuda.h).
 *
 * The printed unit includes no header (NVRTC needs none): the preamble
 * defines the integer types, hlo_bufs and the helpers the C dialect's
 * preamble has (backend/cpu/emit_c.c), with the same bit-level bf16
 * conversions (round to nearest even, NaN kept quiet), f16 conversions
 * through the PTX cvt instructions (round to nearest even, subnormals kept;
 * f64 -> f16 rounds once, as the C dialect does), IEEE maximum/minimum and
 * sign. Integer ops are the C dialect's templates (wrapping arithmetic in
 * uint64_t, XLA's division, remainder and shift edge values). Float ops are
 * the device's libm (expf, tanhf, log1pf, ...: within an ULP or two of
 * glibc's, not its bits; the C dialect's f32 exp and tanh approximations
 * are not used). The unit is compiled without fast math and without FMA
 * contraction (backend/cuda/nvrtc.c).
 *
 * Schedule (cuda_schedule): every parallel dim is a thread dim with tiles
 * of 1, so a tile is one point (elementwise) or one row (reductions), and
 * consecutive tiles are consecutive innermost indices (coalesced loads and
 * stores across a warp). Elementwise kernels and reductions with short rows
 * (ROW_SPREAD_MIN elements or fewer) run one tile per thread, a grid-stride
 * loop over 64-bit tile indices; longer rows run one row per block of
 * row_threads threads (kernel.h: the innermost row dim spread over the
 * threads, warp-shuffle trees, temporaries in dynamic shared memory). */
#include "backend/cuda/emit_cuda.h"
#include <pthread.h>
#include <string.h>
#include "ir/element.h"
#include "support/status.h"

/* Rows of at most this many elements are computed by one thread. */
#define ROW_SPREAD_MIN 32
/* Threads of a block: elementwise (one tile each) and at most per row. */
#define BLOCK_THREADS 256
#define ROW_THREADS_MAX 256
#define GRID_MAX 2147483647u
#define HLO_STR2(x) #x
#define HLO_STR(x) HLO_STR2(x)

static const char preamble[] =
    "/* No #include: NVRTC compiles this alone. */\n"
    "typedef signed char int8_t;\n"
    "typedef short int16_t;\n"
    "typedef int int32_t;\n"
    "typedef long long int64_t;\n"
    "typedef unsigned char uint8_t;\n"
    "typedef unsigned short uint16_t;\n"
    "typedef unsigned int uint32_t;\n"
    "typedef unsigned long long uint64_t;\n"
    "/* The kernels' buffers, passed by value: inputs, then outputs. */\n"
    "typedef struct { void *p[" HLO_STR(CUDA_MAX_BUFS) "]; } hlo_bufs;\n"
    "#define HLO_D static __device__ __forceinline__\n"
    "HLO_D float hlo_bf16_to_f32(uint16_t h) { return __uint_as_float((uint32_t)h << 16); }\n"
    "HLO_D uint16_t hlo_f32_to_bf16(float f) {\n"
    "  uint32_t u = __float_as_uint(f);\n"
    "  if ((u & 0x7fffffffu) > 0x7f800000u) return (uint16_t)((u >> 16) | 0x40u);\n"
    "  u += 0x7fffu + ((u >> 16) & 1u); return (uint16_t)(u >> 16);\n"
    "}\n"
    "HLO_D float hlo_f16_to_f32(uint16_t h) {\n"
    "  float f; asm(\"cvt.f32.f16 %0, %1;\" : \"=f\"(f) : \"h\"(h)); return f;\n"
    "}\n"
    "HLO_D uint16_t hlo_f32_to_f16(float f) {\n"
    "  uint16_t h; asm(\"cvt.rn.f16.f32 %0, %1;\" : \"=h\"(h) : \"f\"(f)); return h;\n"
    "}\n"
    "HLO_D float hlo_round_bf16(float f) { return hlo_bf16_to_f32(hlo_f32_to_bf16(f)); }\n"
    "HLO_D float hlo_round_f16(float f) { return hlo_f16_to_f32(hlo_f32_to_f16(f)); }\n"
    "HLO_D float hlo_round_f16_from_f64(double d) {\n"
    "  uint16_t h; asm(\"cvt.rn.f16.f64 %0, %1;\" : \"=h\"(h) : \"d\"(d)); return hlo_f16_to_f32(h);\n"
    "}\n"
    "HLO_D bool hlo_signbitf(float x) { return (__float_as_uint(x) >> 31) != 0; }\n"
    "HLO_D bool hlo_signbit(double x) { return __double_as_longlong(x) < 0; }\n"
    "HLO_D bool hlo_isfinite(float x) {\n"
    "  return (__float_as_uint(x) & 0x7f800000u) != 0x7f800000u;\n"
    "}\n"
    "HLO_D bool hlo_isfinite(double x) {\n"
    "  return ((unsigned long long)__double_as_longlong(x) & 0x7ff0000000000000ull) !=\n"
    "         0x7ff0000000000000ull;\n"
    "}\n"
    "HLO_D float hlo_inff(void) { return __uint_as_float(0x7f800000u); }\n"
    "HLO_D double hlo_inf(void) { return __longlong_as_double(0x7ff0000000000000ll); }\n"
    "HLO_D float hlo_nanf(void) { return __uint_as_float(0x7fc00000u); }\n"
    "HLO_D double hlo_nan(void) { return __longlong_as_double(0x7ff8000000000000ll); }\n"
    "/* IEEE maximum/minimum: NaN propagates, +0 > -0 */\n"
    "HLO_D float hlo_maxf(float a, float b) {\n"
    "  return a != a ? a : b != b ? b : a == b ? (hlo_signbitf(a) ? b : a) : a > b ? a : b;\n"
    "}\n"
    "HLO_D float hlo_minf(float a, float b) {\n"
    "  return a != a ? a : b != b ? b : a == b ? (hlo_signbitf(a) ? a : b) : a < b ? a : b;\n"
    "}\n"
    "HLO_D double hlo_max(double a, double b) {\n"
    "  return a != a ? a : b != b ? b : a == b ? (hlo_signbit(a) ? b : a) : a > b ? a : b;\n"
    "}\n"
    "HLO_D double hlo_min(double a, double b) {\n"
    "  return a != a ? a : b != b ? b : a == b ? (hlo_signbit(a) ? a : b) : a < b ? a : b;\n"
    "}\n"
    "HLO_D float hlo_signf(float x) { return x != x || x == 0 ? x : x < 0 ? -1.0f : 1.0f; }\n"
    "HLO_D double hlo_sign(double x) { return x != x || x == 0 ? x : x < 0 ? -1.0 : 1.0; }\n"
    "/* the device's exp and tanh (the C dialect has XLA:CPU's approximations) */\n"
    "HLO_D float hlo_expf(float x) { return expf(x); }\n"
    "HLO_D double hlo_exp(double x) { return exp(x); }\n"
    "HLO_D float hlo_tanhf(float x) { return tanhf(x); }\n"
    "HLO_D double hlo_tanh(double x) { return tanh(x); }\n"
    "/* v of lane (this lane ^ m) of the warp, for every computation type */\n"
    "#define HLO_SHFL(T) \\\n"
    "  HLO_D T hlo_shfl_xor(T v, int m) { return __shfl_xor_sync(0xffffffffu, v, m); }\n"
    "HLO_SHFL(float) HLO_SHFL(double) HLO_SHFL(int) HLO_SHFL(unsigned int)\n"
    "HLO_SHFL(long long) HLO_SHFL(unsigned long long)\n"
    "#define HLO_SHFL_INT(T) \\\n"
    "  HLO_D T hlo_shfl_xor(T v, int m) { return (T)__shfl_xor_sync(0xffffffffu, (int)v, m); }\n"
    "HLO_SHFL_INT(signed char) HLO_SHFL_INT(short) HLO_SHFL_INT(unsigned char)\n"
    "HLO_SHFL_INT(unsigned short)\n"
    "HLO_D bool hlo_shfl_xor(bool v, int m) {\n"
    "  return __shfl_xor_sync(0xffffffffu, (int)v, m) != 0;\n"
    "}\n";

static cstyle_dialect dialect;

static void fill(void) {
  cstyle_dialect *d = &dialect;
  d->name = "cuda";
  d->preamble = preamble;
  d->kernel_prefix = "extern \"C\" __global__ void";
  d->restrict_kw = "__restrict__";
  d->params = "hlo_bufs B, long long tile_begin, long long tile_end";
  d->bufs = "B.p";
  /* one tile per thread; a grid-stride loop, so any grid covers the range */
  d->tile_open = "for (int64_t t = tile_begin + (int64_t)blockIdx.x * blockDim.x + threadIdx.x; "
                 "t < tile_end; t += (int64_t)gridDim.x * blockDim.x) {";
  d->tile_close = "}";
  /* one tile (row) per block */
  d->block_tile_open = "for (int64_t t = tile_begin + blockIdx.x; t < tile_end; t += gridDim.x) {";
  d->thread_index = "(int64_t)threadIdx.x";
  d->barrier = "__syncthreads();";
  d->shared_kw = "__shared__";
  d->dyn_shared_decl = "extern __shared__ __align__(16) unsigned char hlo_smem[];";
  d->shfl_xor = "hlo_shfl_xor";
  d->inf = "hlo_inf$f()";
  d->nan = "hlo_nan$f()";
  d->rcp_decl = NULL;
  d->rcp_div = NULL;

  /* the op templates every C-like dialect shares (codegen/cstyle.c) */
  cstyle_fill_c_ops(d);
  d->float_ops[OP_IS_FINITE] = "hlo_isfinite($0)";
}

const cstyle_dialect *cuda_dialect(void) {
  static pthread_once_t once = PTHREAD_ONCE_INIT;
  pthread_once(&once, fill);
  return &dialect;
}

void cuda_schedule(kernel *k) {
  uint32_t np = k->rank - k->num_reduce_dims;
  kernel_schedule *s = &k->sched;
  for (uint32_t d = 0; d < k->rank; d++) s->tile[d] = k->dims[d] > 0 ? k->dims[d] : 1;
  for (uint32_t d = 0; d < np; d++) s->tile[d] = 1;
  s->num_thread_dims = np;
  for (uint32_t st = 0; st < KERNEL_MAX_STAGES; st++) s->reduce_lanes[st] = 0;
  s->row_threads = 0;
  if (!k->num_reduce_dims) return;
  int64_t row = 1;
  for (uint32_t d = np; d < k->rank; d++) row *= k->dims[d];
  if (row <= ROW_SPREAD_MIN) return; /* one thread per row: short, in registers */
  /* a block per row: as many threads as the row's innermost dim (or with
   * several row dims, the row) has elements, rounded up to a power of
   * two, 32..ROW_THREADS_MAX */
  int64_t inner = k->num_reduce_dims > 1 ? row : k->dims[k->rank - 1];
  uint32_t t = 32;
  while (t < ROW_THREADS_MAX && t < inner) t *= 2;
  s->row_threads = t;
}

cuda_geometry cuda_launch_geometry(const kernel *k, int num_sms) {
  (void)num_sms;
  cuda_geometry g = {0, 0, 0};
  int64_t tiles = kernel_num_tiles(k);
  if (k->sched.row_threads > 1) {
    g.block_x = k->sched.row_threads;
    g.shared_bytes = (uint32_t)cstyle_shared_bytes(k);
    g.grid_x = tiles <= 0 ? 0 : tiles > (int64_t)GRID_MAX ? GRID_MAX : (uint32_t)tiles;
    return g;
  }
  /* one tile per thread: blocks of 256, fewer (a multiple of 32) for
   * small kernels */
  int64_t block = BLOCK_THREADS;
  if (tiles < block) block = tiles <= 32 ? 32 : (tiles + 31) / 32 * 32;
  g.block_x = (uint32_t)block;
  int64_t grid = tiles <= 0 ? 0 : (tiles + block - 1) / block;
  g.grid_x = grid > (int64_t)GRID_MAX ? GRID_MAX : (uint32_t)grid;
  return g;
}

hlo_status cuda_emit_module(const kernel *const *ks, const char *const *names, uint32_t n,
                            strbuf *out) {
  const cstyle_dialect *d = cuda_dialect();
  sb_puts(out, "/* generated by hlo (backend cuda) */\n");
  sb_puts(out, d->preamble);
  for (uint32_t i = 0; i < n; i++) {
    const kernel *k = ks[i];
    if (k->num_inputs + k->num_outputs > CUDA_MAX_BUFS)
      return status_at(HLO_UNIMPLEMENTED, &k->loc, "kernel %s: %u buffers (the CUDA kernels take "
                       "at most %d)", names[i], k->num_inputs + k->num_outputs, CUDA_MAX_BUFS);
    if (k->sched.row_threads > ROW_THREADS_MAX * 4)
      return status_new(HLO_INTERNAL, "kernel %s: %u threads per row", names[i],
                        k->sched.row_threads);
    /* the printer names the function after the kernel: a shallow copy
     * under the caller's name */
    kernel named = *k;
    named.name = (char *)names[i];
    cuda_geometry g = cuda_launch_geometry(k, 0);
    sb_printf(out, "\n/* launch: grid %u x block %u, %u bytes of dynamic shared memory, for "
                   "all %lld tiles */\n", g.grid_x, g.block_x, g.shared_bytes,
              (long long)kernel_num_tiles(k));
    HLO_TRY(cstyle_emit_kernel(d, &named, out));
  }
  return NULL;
}
