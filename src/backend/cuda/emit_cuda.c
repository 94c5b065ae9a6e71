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
 * Schedule (cuda_schedule) and forms (cuda_kernel_form): every parallel
 * dim is a thread dim with tiles of 1, so a tile is one point (elementwise)
 * or one row (reductions), and consecutive tiles are consecutive innermost
 * indices (coalesced loads and stores across a warp); the innermost dim of
 * an elementwise kernel is cut in chunks of V points instead where it
 * divides (CUDA_FORM_CHUNKS, printed here: 16-byte loads and stores). Rows
 * of at most ROW_REG_MAX elements whose reductions have identities live in
 * registers (CUDA_FORM_REG_ROWS, printed here: "Register rows and vector
 * chunks" below); other rows of more than ROW_SPREAD_MIN elements run one
 * row per block of row_threads threads (kernel.h: the innermost row dim
 * spread over the threads, warp-shuffle trees, temporaries in dynamic
 * shared memory; printed by cstyle.c), shorter ones one row per thread.
 * Every form loops over 64-bit tile indices (grid-stride), so the grid is
 * sized from the multiprocessor count. */
#include "backend/cuda/emit_cuda.h"
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "backend/cuda/nvrtc.h"
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
    NVRTC_INT_TYPEDEFS
    "/* The kernels' buffers, passed by value: inputs, then outputs. */\n"
    "typedef struct { void *p[" HLO_STR(CUDA_MAX_BUFS) "]; } hlo_bufs;\n"
    "#define HLO_D static __device__ __forceinline__\n"
    "HLO_D float hlo_bf16_to_f32(uint16_t h) { return __uint_as_float((uint32_t)h << 16); }\n"
    "/* round to nearest even. sm_80 and up convert in one instruction (a NaN\n"
    "   becomes the canonical NaN, as cvt.rn.f16.f32 makes f16's: results are\n"
    "   compared NaN for NaN); below, the interpreter's rule (a NaN keeps its\n"
    "   sign and payload, made quiet). */\n"
    "HLO_D uint16_t hlo_f32_to_bf16(float f) {\n"
    "#if __CUDA_ARCH__ >= 800\n"
    "  uint16_t h; asm(\"cvt.rn.bf16.f32 %0, %1;\" : \"=h\"(h) : \"f\"(f));\n"
    "  return h;\n"
    "#else\n"
    "  uint32_t u = __float_as_uint(f);\n"
    "  if ((u & 0x7fffffffu) > 0x7f800000u) return (uint16_t)((u >> 16) | 0x40u);\n"
    "  u += 0x7fffu + ((u >> 16) & 1u); return (uint16_t)(u >> 16);\n"
    "#endif\n"
    "}\n"
    "HLO_D float hlo_f16_to_f32(uint16_t h) {\n"
    "  float f; asm(\"cvt.f32.f16 %0, %1;\" : \"=f\"(f) : \"h\"(h)); return f;\n"
    "}\n"
    "HLO_D uint16_t hlo_f32_to_f16(float f) {\n"
    "  uint16_t h; asm(\"cvt.rn.f16.f32 %0, %1;\" : \"=h\"(h) : \"f\"(f)); return h;\n"
    "}\n"
    "/* f rounded to bf16, as an f32: one instruction on sm_80 and up (the pair\n"
    "   (f, 0) converted and packed: f's bf16 in the high half, zero below) */\n"
    "HLO_D float hlo_round_bf16(float f) {\n"
    "#if __CUDA_ARCH__ >= 800\n"
    "  uint32_t u; asm(\"cvt.rn.bf16x2.f32 %0, %1, %2;\" : \"=r\"(u) : \"f\"(f), \"f\"(0.0f));\n"
    "  return __uint_as_float(u);\n"
    "#else\n"
    "  return hlo_bf16_to_f32(hlo_f32_to_bf16(f));\n"
    "#endif\n"
    "}\n"
    "HLO_D float hlo_round_f16(float f) { return hlo_f16_to_f32(hlo_f32_to_f16(f)); }\n"
    "/* bf16 add, subtract and multiply of floats holding bf16 values (their\n"
    "   low 16 bits zero), giving a float holding the bf16 result: on sm_90 one\n"
    "   packed bf16x2 instruction on the raw words, whose high lanes are the\n"
    "   operands and whose low lanes (+0 op +0 = +0) stay zero; the correctly\n"
    "   rounded result, which is round_bf16 of the f32 op (cstyle.h, bf16_ops).\n"
    "   Saves the f32 op's separate rounding, an ALU instruction, per op. */\n"
    "HLO_D float hlo_badd(float a, float b) {\n"
    "#if __CUDA_ARCH__ >= 900\n"
    "  uint32_t u; asm(\"add.rn.bf16x2 %0, %1, %2;\" : \"=r\"(u) : \"r\"(__float_as_uint(a)), \"r\"(__float_as_uint(b)));\n"
    "  return __uint_as_float(u);\n"
    "#else\n"
    "  return hlo_round_bf16(a + b);\n"
    "#endif\n"
    "}\n"
    "HLO_D float hlo_bsub(float a, float b) {\n"
    "#if __CUDA_ARCH__ >= 900\n"
    "  uint32_t u; asm(\"sub.rn.bf16x2 %0, %1, %2;\" : \"=r\"(u) : \"r\"(__float_as_uint(a)), \"r\"(__float_as_uint(b)));\n"
    "  return __uint_as_float(u);\n"
    "#else\n"
    "  return hlo_round_bf16(a - b);\n"
    "#endif\n"
    "}\n"
    "HLO_D float hlo_bmul(float a, float b) {\n"
    "#if __CUDA_ARCH__ >= 900\n"
    "  uint32_t u; asm(\"mul.rn.bf16x2 %0, %1, %2;\" : \"=r\"(u) : \"r\"(__float_as_uint(a)), \"r\"(__float_as_uint(b)));\n"
    "  return __uint_as_float(u);\n"
    "#else\n"
    "  return hlo_round_bf16(a * b);\n"
    "#endif\n"
    "}\n"

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
    "/* sm_80 and up: max.NaN / min.NaN (a NaN operand gives the canonical\n"
    "   NaN), equal operands (+0 and -0) by their bits: +0 wins max, -0 min */\n"
    "HLO_D float hlo_maxf(float a, float b) {\n"
    "#if __CUDA_ARCH__ >= 800\n"
    "  float r; asm(\"max.NaN.f32 %0, %1, %2;\" : \"=f\"(r) : \"f\"(a), \"f\"(b));\n"
    "  return a == b ? __uint_as_float(__float_as_uint(a) & __float_as_uint(b)) : r;\n"
    "#else\n"
    "  return a != a ? a : b != b ? b : a == b ? (hlo_signbitf(a) ? b : a) : a > b ? a : b;\n"
    "#endif\n"
    "}\n"
    "HLO_D float hlo_minf(float a, float b) {\n"
    "#if __CUDA_ARCH__ >= 800\n"
    "  float r; asm(\"min.NaN.f32 %0, %1, %2;\" : \"=f\"(r) : \"f\"(a), \"f\"(b));\n"
    "  return a == b ? __uint_as_float(__float_as_uint(a) | __float_as_uint(b)) : r;\n"
    "#else\n"
    "  return a != a ? a : b != b ? b : a == b ? (hlo_signbitf(a) ? a : b) : a < b ? a : b;\n"
    "#endif\n"
    "}\n"
    "HLO_D double hlo_max(double a, double b) {\n"
    "  return a != a ? a : b != b ? b : a == b ? (hlo_signbit(a) ? b : a) : a > b ? a : b;\n"
    "}\n"
    "HLO_D double hlo_min(double a, double b) {\n"
    "  return a != a ? a : b != b ? b : a == b ? (hlo_signbit(a) ? a : b) : a < b ? a : b;\n"
    "}\n"
    "HLO_D float hlo_signf(float x) { return x != x || x == 0 ? x : x < 0 ? -1.0f : 1.0f; }\n"
    "HLO_D double hlo_sign(double x) { return x != x || x == 0 ? x : x < 0 ? -1.0 : 1.0; }\n"
    "/* exp: the device's. f32 tanh (GELU): XLA's fast rational approximation,\n"
    "   as XLA's GPU emitter (EmitFastTanh) and the C dialect with FMA print it,\n"
    "   branch-free (libdevice's tanhf branches); at most 5 ULP from the\n"
    "   correctly rounded tanh (bench/MATH.md). */\n"
    "HLO_D float hlo_expf(float x) { return expf(x); }\n"
    "HLO_D double hlo_exp(double x) { return exp(x); }\n"
    "HLO_D float hlo_tanhf(float x) {\n"
    "  float xc = x > 7.99881172180175781f ? 7.99881172180175781f : x;\n"
    "  xc = xc < -7.99881172180175781f ? -7.99881172180175781f : xc;\n"
    "  float x2 = xc * xc;\n"
    "  float p = fmaf(x2, -2.76076847742355e-16f, 2.00018790482477e-13f);\n"
    "  p = fmaf(x2, p, -8.60467152213735e-11f);\n"
    "  p = fmaf(x2, p, 5.12229709037114e-08f);\n"
    "  p = fmaf(x2, p, 1.48572235717979e-05f);\n"
    "  p = fmaf(x2, p, 6.37261928875436e-04f);\n"
    "  p = fmaf(x2, p, 4.89352455891786e-03f);\n"
    "  p = xc * p;\n"
    "  float q = fmaf(x2, 1.19825839466702e-06f, 1.18534705686654e-04f);\n"
    "  q = fmaf(x2, q, 2.26843463243900e-03f);\n"
    "  q = fmaf(x2, q, 4.89352518554385e-03f);\n"
    "  return fabsf(x) < 0.0004f ? x : p / q;\n"
    "}\n"
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
    "}\n"
    "/* chunks of V elements of storage type S: 16-byte (8-, 4-byte) loads and\n"
    " * stores when `al` (the address is aligned to the chunk's size, at most\n"
    " * 16), else element by element; words little-endian */\n"
    "#define HLO_T __device__ __forceinline__\n"
    "struct __align__(16) hlo_w4 { uint32_t w[4]; };\n"
    "struct __align__(8) hlo_w2 { uint32_t w[2]; };\n"
    "template <typename S> HLO_T S hlo_from_bits(uint64_t b) { return (S)b; }\n"
    "template <> HLO_T float hlo_from_bits<float>(uint64_t b) { return __uint_as_float((uint32_t)b); }\n"
    "template <> HLO_T double hlo_from_bits<double>(uint64_t b) {\n"
    "  return __longlong_as_double((long long)b);\n"
    "}\n"
    "template <typename S> HLO_T uint64_t hlo_to_bits(S v) { return (uint64_t)v; }\n"
    "template <> HLO_T uint64_t hlo_to_bits<float>(float v) { return __float_as_uint(v); }\n"
    "template <> HLO_T uint64_t hlo_to_bits<double>(double v) {\n"
    "  return (uint64_t)__double_as_longlong(v);\n"
    "}\n"
    "template <typename S, int V> HLO_T void hlo_vld(S *d, const S *p, bool al) {\n"
    "  constexpr int B = V * (int)sizeof(S), Z = (int)sizeof(S);\n"
    "  if constexpr (B >= 4) {\n"
    "    if (al) {\n"
    "      uint32_t w[B / 4];\n"
    "      if constexpr (B >= 16) {\n"
    "#pragma unroll\n"
    "        for (int i = 0; i < B / 16; i++) {\n"
    "          const hlo_w4 q = ((const hlo_w4 *)p)[i];\n"
    "          w[4 * i] = q.w[0]; w[4 * i + 1] = q.w[1]; w[4 * i + 2] = q.w[2]; w[4 * i + 3] = q.w[3];\n"
    "        }\n"
    "      } else if constexpr (B == 8) {\n"
    "        const hlo_w2 q = *(const hlo_w2 *)p;\n"
    "        w[0] = q.w[0]; w[1] = q.w[1];\n"
    "      } else {\n"
    "        w[0] = *(const uint32_t *)p;\n"
    "      }\n"
    "#pragma unroll\n"
    "      for (int e = 0; e < V; e++) {\n"
    "        if constexpr (Z == 8)\n"
    "          d[e] = hlo_from_bits<S>((uint64_t)w[2 * e] | ((uint64_t)w[2 * e + 1] << 32));\n"
    "        else if constexpr (Z == 4)\n"
    "          d[e] = hlo_from_bits<S>(w[e]);\n"
    "        else\n"
    "          d[e] = hlo_from_bits<S>((w[e * Z / 4] >> (8 * ((e * Z) & 3))) & ((1u << (8 * Z)) - 1u));\n"
    "      }\n"
    "      return;\n"
    "    }\n"
    "  }\n"
    "#pragma unroll\n"
    "  for (int e = 0; e < V; e++) d[e] = p[e];\n"
    "}\n"
    "template <typename S, int V> HLO_T void hlo_vst(S *p, const S *d, bool al) {\n"
    "  constexpr int B = V * (int)sizeof(S), Z = (int)sizeof(S);\n"
    "  if constexpr (B >= 4) {\n"
    "    if (al) {\n"
    "      uint32_t w[B / 4];\n"
    "#pragma unroll\n"
    "      for (int i = 0; i < B / 4; i++) w[i] = 0;\n"
    "#pragma unroll\n"
    "      for (int e = 0; e < V; e++) {\n"
    "        const uint64_t b = hlo_to_bits<S>(d[e]);\n"
    "        if constexpr (Z == 8) {\n"
    "          w[2 * e] = (uint32_t)b; w[2 * e + 1] = (uint32_t)(b >> 32);\n"
    "        } else if constexpr (Z == 4) {\n"
    "          w[e] = (uint32_t)b;\n"
    "        } else {\n"
    "          w[e * Z / 4] |= ((uint32_t)b & ((1u << (8 * Z)) - 1u)) << (8 * ((e * Z) & 3));\n"
    "        }\n"
    "      }\n"
    "      if constexpr (B >= 16) {\n"
    "#pragma unroll\n"
    "        for (int i = 0; i < B / 16; i++) {\n"
    "          hlo_w4 q;\n"
    "          q.w[0] = w[4 * i]; q.w[1] = w[4 * i + 1]; q.w[2] = w[4 * i + 2]; q.w[3] = w[4 * i + 3];\n"
    "          ((hlo_w4 *)p)[i] = q;\n"
    "        }\n"
    "      } else if constexpr (B == 8) {\n"
    "        hlo_w2 q;\n"
    "        q.w[0] = w[0]; q.w[1] = w[1];\n"
    "        *(hlo_w2 *)p = q;\n"
    "      } else {\n"
    "        *(uint32_t *)p = w[0];\n"
    "      }\n"
    "      return;\n"
    "    }\n"
    "  }\n"
    "#pragma unroll\n"
    "  for (int e = 0; e < V; e++) p[e] = d[e];\n"
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
  d->bf16_ops[OP_ADD] = "hlo_badd($0, $1)";
  d->bf16_ops[OP_SUBTRACT] = "hlo_bsub($0, $1)";
  d->bf16_ops[OP_MULTIPLY] = "hlo_bmul($0, $1)";
}

const cstyle_dialect *cuda_dialect(void) {
  static pthread_once_t once = PTHREAD_ONCE_INIT;
  pthread_once(&once, fill);
  return &dialect;
}

/* ------------------------------------------------------------------------
 * Register rows and vector chunks (cuda_plan).
 *
 * A row kernel whose row has at most ROW_REG_MAX elements and whose REDUCE
 * stages all have a combiner identity keeps its row in REGISTERS: the row
 * is cut into chunks of V contiguous elements (V = 16 bytes over the
 * narrowest element the row's contiguous loads and stores move, at most 8,
 * dividing the innermost row dim), T threads share a row (thread x takes
 * chunks x, x + T, ...: a warp's 16-byte loads are one contiguous span), C
 * chunks each, R rows per block (T*R threads). Every load that varies
 * along the row and is contiguous along the innermost dim is read once,
 * before the first stage, into a register array (16-byte loads when its
 * address is V-aligned and every buffer of the kernel is 16-byte aligned:
 * a uniform run-time test, element loads otherwise); temporaries are
 * register arrays too; each stage runs over the thread's chunks from
 * registers; a REDUCE stage folds the thread's elements from the identity
 * (the row's thread 0 from the init value), then a butterfly of warp
 * shuffles over the T threads (lanes l and l ^ w combine, w = T/2..1, so
 * every thread holds the row value; past 32 threads the warps' values
 * meet in shared memory and every thread folds them in warp order).
 * An f32 sum accumulates in f32 (a thread's <= 16 elements in order, then
 * the tree: XLA's GPU row reduction does the same) instead of f64. A
 * divide by a value that does not vary along the row is a multiply by its
 * f32 reciprocal (computed once per row; at most 1.5 ULP from the
 * quotient) when the divisor is normal and at most 2^126 in magnitude,
 * else the divide. Outputs are stored by chunks (16 bytes when aligned).
 * The global memory traffic of a row is one read of each input and one
 * write of each output, whatever the number of stages.
 *
 * An elementwise kernel whose innermost dim divides into chunks of V > 1
 * (V: 32 bytes of its narrowest contiguous load or store, at most 16,
 * dividing the innermost dim) computes a chunk of V contiguous points per
 * tile (the schedule's innermost tile is V), loading and storing the
 * contiguous, V-aligned accesses 16 bytes at a time.
 *
 * Grids: every form loops over its tiles (grid-stride), so the grid is
 * capped at the number of blocks the device holds at once (num_sms times
 * THREADS_PER_SM / block), when the multiprocessor count is known. */

#define ROW_REG_MAX 8192
#define ROW_REG_WORDS 128
#define ROW_REG_ELEMS 32
/* ROW_REG_ELEMS unless HLO_CUDA_ROW_ELEMS holds a power of two in [4, 64]
 * (read once; a tuning knob for measuring the register-row form: the
 * kernels' source, and so their cache key, change with it). */
static int64_t row_reg_elems(void) {
  static int64_t v = -1;
  int64_t r = __atomic_load_n(&v, __ATOMIC_RELAXED);
  if (r < 0) {
    const char *e = getenv("HLO_CUDA_ROW_ELEMS");
    long x = e ? strtol(e, NULL, 10) : 0;
    r = (x >= 4 && x <= 64 && !(x & (x - 1))) ? x : ROW_REG_ELEMS;
    __atomic_store_n(&v, r, __ATOMIC_RELAXED);
  }
  return r;
}
#define THREADS_PER_SM 2048
/* bytes of the narrowest type in a chunk: a row's (one 16-byte access
 * each), an elementwise tile's (two: more bytes in flight per thread) */
#define ROW_VEC_BYTES 16
#define ELEM_VEC_BYTES 32

enum { FORM_CSTYLE, FORM_REG_ROW, FORM_VEC };

typedef struct cuda_plan {
  int form;
  uint32_t V, C, T, R; /* chunk elements, chunks per thread, threads per row, rows per block */
  int64_t n;           /* row length (FORM_REG_ROW) */
} cuda_plan;

/* Bytes of one stored element of dt (i1: a byte). */
static uint32_t storage_bytes(hlo_dtype dt) {
  int b = dtype_bits(dt);
  return dt == HLO_I1 || b < 8 ? 1 : (uint32_t)b / 8;
}

/* Whether the access of linear affine `lin` is contiguous along dim
 * `last` and every chunk of V starting at a multiple of V along it starts
 * at a multiple of V elements. */
static bool chunk_access(const kernel *k, const kernel_affine *lin, uint32_t V) {
  uint32_t last = k->rank - 1;
  if (lin->coeff[last] != 1 || lin->offset % (int64_t)V) return false;
  for (uint32_t d = 0; d < k->rank; d++)
    if (d != last && lin->coeff[d] % (int64_t)V) return false;
  return true;
}

/* Whether output `out` is stored at every point of the row (its map or
 * value varies along it), not once per row. */
static bool output_varies(const kernel *k, const kernel_output *out, const bool *vary) {
  if (!k->num_reduce_dims) return true;
  if (vary[out->value] || out->map.flat) return true;
  for (uint32_t j = 0; j < out->map.rank; j++)
    for (uint32_t d = k->rank - k->num_reduce_dims; d < k->rank; d++)
      if (out->map.dim[j].coeff[d]) return true;
  return false;
}

/* The linear element offset a load (an output store) reads (writes). */
static kernel_affine load_linear(const kernel *k, const kinst *in) {
  return kernel_map_linear(&in->map, k->inputs[in->input].dims);
}

static kernel_affine output_linear(const kernel *k, uint32_t oi) {
  return kernel_map_linear(&k->outputs[oi].map, k->outputs[oi].buf.dims);
}

/* Whether body instruction i is a load read into a chunk array. */
static bool chunk_load(const kernel *k, const bool *vary, uint32_t i, uint32_t V) {
  const kinst *in = &k->body[i];
  if (in->kind != KI_LOAD || in->guard >= 0) return false;
  if (k->num_reduce_dims && !vary[i]) return false;
  kernel_affine lin = load_linear(k, in);
  return chunk_access(k, &lin, V);
}

/* The chunk width: `bytes` of the narrowest contiguous access (1 if
 * none), at most `most`, dividing the innermost dim. */
static uint32_t chunk_width(const kernel *k, const bool *vary, uint32_t bytes, uint32_t most) {
  uint32_t minb = 0, last = k->rank - 1;
  for (uint32_t i = 0; i < k->num_body; i++)
    if (chunk_load(k, vary, i, 1)) {
      uint32_t b = storage_bytes(k->inputs[k->body[i].input].dtype);
      if (!minb || b < minb) minb = b;
    }
  for (uint32_t oi = 0; oi < k->num_outputs; oi++) {
    if (!output_varies(k, &k->outputs[oi], vary)) continue;
    kernel_affine lin = output_linear(k, oi);
    if (!chunk_access(k, &lin, 1)) continue;
    uint32_t b = storage_bytes(k->outputs[oi].buf.dtype);
    if (!minb || b < minb) minb = b;
  }
  if (!minb) return 1;
  uint32_t V = bytes / minb;
  if (V > most) V = most;
  while (V > 1 && k->dims[last] % (int64_t)V) V /= 2;
  return V;
}

/* The register-row plan of row kernel k (FORM_REG_ROW, or FORM_CSTYLE when
 * it does not apply). */
static cuda_plan reg_row_plan(const kernel *k) {
  cuda_plan p = {FORM_CSTYLE, 1, 1, 1, 1, 0};
  if (!k->num_reduce_dims || k->rank < 1) return p;
  int64_t n = 1;
  for (uint32_t d = k->rank - k->num_reduce_dims; d < k->rank; d++) n *= k->dims[d];
  if (n < 1 || n > ROW_REG_MAX) return p;
  for (uint32_t s = 0; s < k->num_stages; s++) {
    int64_t i;
    double f;
    if (k->stages[s].kind == KSTAGE_REDUCE && !kernel_stage_identity(k, s, &i, &f)) return p;
  }
  for (uint32_t i = 0; i < k->num_body; i++)
    if (!cstyle_compute_type(k->body[i].dtype)) return p;
  bool *vary = malloc((k->num_body ? k->num_body : 1) * sizeof *vary);
  if (!vary) return p;
  kernel_row_varying(k, vary);
  uint32_t V = chunk_width(k, vary, ROW_VEC_BYTES, 8);
  /* register words per element position: the distinct chunk loads and the
   * temporaries (8-byte types count twice) */
  uint32_t words = 0;
  for (uint32_t i = 0; i < k->num_body; i++) {
    if (!chunk_load(k, vary, i, V)) continue;
    bool dup = false;
    kernel_affine li = load_linear(k, &k->body[i]);
    for (uint32_t j = 0; j < i && !dup; j++) {
      if (!chunk_load(k, vary, j, V) || k->body[j].input != k->body[i].input) continue;
      kernel_affine lj = load_linear(k, &k->body[j]);
      dup = !memcmp(&li, &lj, sizeof li);
    }
    if (!dup) words += storage_bytes(k->inputs[k->body[i].input].dtype) > 4 ? 2 : 1;
  }
  for (uint32_t t = 0; t < k->num_temps; t++)
    words += dtype_bits(kernel_compute_dtype(k->temps[t].dtype)) > 32 ? 2 : 1;
  free(vary);
  /* chunks per row; about ROW_REG_ELEMS elements per thread (enough
   * independent loads in flight: four 16-byte loads of bf16; H200,
   * 2026-12-02, 16 -> 32: llama_block_4x2048's softmax kernel 394 -> 354
   * us, naive_attention_8192x128 207 -> 186 us, dpa_xla 1.174 -> 1.134 ms;
   * 64 slower on both, bench/results/gpu.md), T a power of two */
  int64_t nc = n / V, ct = row_reg_elems() / (int64_t)V > 1 ? row_reg_elems() / (int64_t)V : 1;
  uint32_t T = 1;
  while (T < 1024 && (int64_t)T * ct < nc) T *= 2;
  for (;;) {
    int64_t C = (nc + T - 1) / T;
    if ((uint64_t)(words ? words : 1) * (uint64_t)C * V <= ROW_REG_WORDS) {
      p.C = (uint32_t)C;
      break;
    }
    if (T >= 1024) return p;
    T *= 2;
  }
  p.form = FORM_REG_ROW;
  p.V = V;
  p.T = T;
  p.R = T >= 128 ? 1 : 128 / T;
  p.n = n;
  return p;
}

/* The plan of a kernel scheduled by cuda_schedule. */
static cuda_plan plan_of(const kernel *k) {
  cuda_plan p = {FORM_CSTYLE, 1, 1, 1, 1, 0};
  if (k->rank < 1) return p;
  /* a dynamic-update output (kernel.h) in chunks only when its rows are
   * whole (no start along the last dim: every chunk stays aligned) */
  for (uint32_t oi = 0; oi < k->num_outputs; oi++) {
    const kernel_output *out = &k->outputs[oi];
    if (kernel_output_dus(out) &&
        (k->num_reduce_dims || out->buf.rank != k->rank ||
         out->buf.dims[k->rank - 1] != k->dims[k->rank - 1]))
      return p;
  }
  if (!k->num_reduce_dims) {
    int64_t V = k->sched.tile[k->rank - 1];
    if (k->sched.num_thread_dims == k->rank && V > 1 && V <= 16 && k->dims[k->rank - 1] % V == 0) {
      p.form = FORM_VEC;
      p.V = (uint32_t)V;
    }
    return p;
  }
  if (k->sched.row_threads > 1) return p;
  for (uint32_t s = 0; s < k->num_stages; s++)
    if (k->sched.reduce_lanes[s] > 1) return p;
  return reg_row_plan(k);
}

/* offset + sum coeff x_d, with x_sub printed as `subname` (NULL: none). */
static void print_affine_sub(strbuf *o, const kernel_affine *a, uint32_t rank, uint32_t sub,
                             const char *subname) {
  bool any = false;
  for (uint32_t i = 0; i < rank; i++) {
    int64_t c = a->coeff[i];
    if (!c) continue;
    if (any) sb_puts(o, " + ");
    char name[24];
    if (subname && i == sub) snprintf(name, sizeof name, "%s", subname);
    else snprintf(name, sizeof name, "x%u", i);
    if (c == 1) sb_puts(o, name);
    else sb_printf(o, "%s * %lld", name, (long long)c);
    any = true;
  }
  if (!any) sb_printf(o, "%lld", (long long)a->offset);
  else if (a->offset > 0) sb_printf(o, " + %lld", (long long)a->offset);
  else if (a->offset < 0) sb_printf(o, " - %lld", -(long long)a->offset);
}

/* The opening of the conversion from storage to computation type (closed
 * by ")"), and the conversion back. */
static const char *load_conv(hlo_dtype dt) {
  return dt == HLO_BF16 ? "hlo_bf16_to_f32(" : dt == HLO_F16 ? "hlo_f16_to_f32(" : "(";
}

static const char *store_conv(hlo_dtype dt) {
  return dt == HLO_BF16 ? "hlo_f32_to_bf16" : dt == HLO_F16 ? "hlo_f32_to_f16"
         : dt == HLO_I1 ? "(uint8_t)" : "";
}

/* The state of one kernel's printing in a register/vector form. */
typedef struct vprint {
  const cstyle_dialect *d;
  const kernel *k;
  cuda_plan p;
  strbuf *o;
  bool *vary;
  int32_t *slot;      /* per body instruction: its chunk array, or -1 */
  uint32_t num_slots;
  uint32_t *slot_inst; /* the first instruction of each slot */
  bool *vec_out;      /* per output: stored by chunks */
  kinst *comb;        /* the combiners, f32 sums narrowed from f64 */
  hlo_dtype *acc;     /* per stage: the accumulator type */
} vprint;

/* Frees what vp_init allocated. */
static void vp_free(vprint *v) {
  free(v->vary);
  free(v->slot);
  free(v->slot_inst);
  free(v->vec_out);
  free(v->comb);
  free(v->acc);
}

/* Prepares the printing of k in plan p into o: which loads go to chunk
 * arrays (one per distinct input and address), which outputs are stored by
 * chunks, the combiners with f32 sums narrowed to f32 accumulators.
 * Errors: HLO_RESOURCE_EXHAUSTED. */
static hlo_status vp_init(vprint *v, const cstyle_dialect *d, const kernel *k, cuda_plan p,
                          strbuf *o) {
  memset(v, 0, sizeof *v);
  v->d = d;
  v->k = k;
  v->p = p;
  v->o = o;
  size_t nb = k->num_body ? k->num_body : 1;
  v->vary = malloc(nb * sizeof *v->vary);
  v->slot = malloc(nb * sizeof *v->slot);
  v->slot_inst = malloc(nb * sizeof *v->slot_inst);
  v->vec_out = calloc(k->num_outputs ? k->num_outputs : 1, sizeof *v->vec_out);
  v->comb = malloc((k->num_comb ? k->num_comb : 1) * sizeof *v->comb);
  v->acc = malloc(KERNEL_MAX_STAGES * sizeof *v->acc);
  if (!v->vary || !v->slot || !v->slot_inst || !v->vec_out || !v->comb || !v->acc) {
    vp_free(v);
    return status_new(HLO_RESOURCE_EXHAUSTED, "out of memory");
  }
  kernel_row_varying(k, v->vary);
  for (uint32_t i = 0; i < k->num_body; i++) {
    v->slot[i] = -1;
    if (!chunk_load(k, v->vary, i, p.V)) continue;
    kernel_affine li = load_linear(k, &k->body[i]);
    for (uint32_t s = 0; s < v->num_slots && v->slot[i] < 0; s++) {
      const kinst *q = &k->body[v->slot_inst[s]];
      kernel_affine lq = load_linear(k, q);
      if (q->input == k->body[i].input && !memcmp(&li, &lq, sizeof li)) v->slot[i] = (int32_t)s;
    }
    if (v->slot[i] < 0) {
      v->slot_inst[v->num_slots] = i;
      v->slot[i] = (int32_t)v->num_slots++;
    }
  }
  for (uint32_t oi = 0; oi < k->num_outputs; oi++) {
    kernel_affine lin = output_linear(k, oi);
    v->vec_out[oi] = p.V > 1 && output_varies(k, &k->outputs[oi], v->vary) &&
                     chunk_access(k, &lin, p.V);
  }
  if (k->num_comb) memcpy(v->comb, k->comb, k->num_comb * sizeof *v->comb);
  for (uint32_t s = 0; s < k->num_stages; s++) {
    const kernel_stage *st = &k->stages[s];
    v->acc[s] = st->acc_dtype;
    if (st->kind != KSTAGE_REDUCE || st->dtype != HLO_F32 || st->acc_dtype != HLO_F64) continue;
    v->acc[s] = HLO_F32;
    for (uint32_t i = st->comb_begin; i < st->comb_end; i++)
      if (v->comb[i].dtype == HLO_F64) v->comb[i].dtype = HLO_F32;
  }
  return NULL;
}

/* Whether body instruction i is an f32 divide by a value that does not
 * vary along the row (the reciprocal form). */
static bool vp_row_div(const vprint *v, uint32_t i) {
  const kernel *k = v->k;
  const kinst *in = &k->body[i];
  if (!k->num_reduce_dims || in->kind != KI_OP || in->op != OP_DIVIDE || in->num_args != 2 ||
      !v->vary[i] || v->vary[in->args[1]])
    return false;
  return kernel_compute_dtype(in->dtype) == HLO_F32 &&
         kernel_compute_dtype(k->body[in->args[0]].dtype) == HLO_F32 &&
         kernel_compute_dtype(k->body[in->args[1]].dtype) == HLO_F32;
}

/* Declares the row coordinates of the chunk starting at row position
 * `pos` (an expression): x_d of the row dims but the innermost, and hlo_xb,
 * the innermost's. Elementwise (no row dims): the tile's coordinates. */
static void vp_chunk_coords(const vprint *v, const char *pos, const char *ind) {
  const kernel *k = v->k;
  uint32_t last = k->rank - 1;
  strbuf *o = v->o;
  if (!k->num_reduce_dims) {
    long long nl = (long long)(k->dims[last] / (int64_t)v->p.V);
    sb_printf(o, "%sint64_t hlo_r = %s;\n", ind, pos);
    if (last == 0) {
      sb_printf(o, "%sconst int64_t hlo_xb = hlo_r * %u;\n", ind, v->p.V);
      return;
    }
    sb_printf(o, "%sconst int64_t hlo_xb = hlo_r %% %lld * %u; hlo_r /= %lld;\n", ind, nl, v->p.V, nl);
    for (uint32_t d = last; d-- > 0;) {
      if (d == 0) sb_printf(o, "%sconst int64_t x0 = hlo_r;\n", ind);
      else sb_printf(o, "%sconst int64_t x%u = hlo_r %% %lld; hlo_r /= %lld;\n", ind, d,
                     (long long)k->dims[d], (long long)k->dims[d]);
    }
    return;
  }
  uint32_t np = k->rank - k->num_reduce_dims;
  long long stride = 1;
  for (uint32_t d = k->rank; d-- > np;) {
    if (d == last) {
      if (d == np) sb_printf(o, "%sconst int64_t hlo_xb = %s;\n", ind, pos);
      else sb_printf(o, "%sconst int64_t hlo_xb = %s %% %lld;\n", ind, pos, (long long)k->dims[d]);
    } else {
      sb_printf(o, "%sconst int64_t x%u = %s / %lld", ind, d, pos, stride);
      if (d > np) sb_printf(o, " %% %lld", (long long)k->dims[d]);
      sb_puts(o, ";\n");
    }
    stride *= (long long)k->dims[d];
  }
}

/* The chunk arrays' loads of the chunk whose coordinates are declared. */
static void vp_chunk_loads(const vprint *v, const char *dst_index, const char *ind) {
  const kernel *k = v->k;
  for (uint32_t s = 0; s < v->num_slots; s++) {
    const kinst *in = &k->body[v->slot_inst[s]];
    kernel_affine lin = load_linear(k, in);
    sb_printf(v->o, "%shlo_vld<%s, %u>(&hlo_ld%u[%s], in%u + (", ind,
              cstyle_storage_type(k->inputs[in->input].dtype), v->p.V, s, dst_index, in->input);
    print_affine_sub(v->o, &lin, k->rank, k->rank - 1, "hlo_xb");
    sb_puts(v->o, "), hlo_al);\n");
  }
}

/* Stage s's instructions at one point (the element index hlo_j of the
 * thread's chunk arrays; x variables declared), the temporaries it writes,
 * the fold into accS (REDUCE), the stores (MAP). all: every instruction
 * (elementwise), else those that vary along the row. */
static hlo_status vp_point(const vprint *v, uint32_t s, const char *ind) {
  const kernel *k = v->k;
  const kernel_stage *st = &k->stages[s];
  strbuf *o = v->o;
  bool all = !k->num_reduce_dims;
  for (uint32_t i = st->body_begin; i < st->body_end; i++) {
    if (!all && !v->vary[i]) continue;
    const kinst *in = &k->body[i];
    const char *ct = cstyle_compute_type(in->dtype);
    if (v->slot[i] >= 0) {
      hlo_dtype sd = k->inputs[in->input].dtype;
      sb_printf(o, "%sconst %s v%u = %shlo_ld%d[hlo_j]%s);\n", ind, ct, i, load_conv(sd), v->slot[i],
                sd == HLO_I1 ? " != 0" : "");
    } else if (in->kind == KI_TEMP) {
      sb_printf(o, "%sconst %s v%u = hlo_tmp%u[hlo_j];\n", ind, ct, i, in->input);
    } else if (vp_row_div(v, i)) {
      const char *rnd = in->dtype == HLO_BF16 ? "hlo_round_bf16" : in->dtype == HLO_F16 ? "hlo_round_f16" : "";
      sb_printf(o, "%sconst float v%u = %s(hlo_rok%u ? v%u * hlo_rcp%u : v%u / v%u);\n", ind, i, rnd,
                i, in->args[0], i, in->args[0], in->args[1]);
    } else {
      HLO_TRY(cstyle_print_inst(v->d, k, o, k->body, i, "v", "", "", ind));
    }
  }
  for (uint32_t t = 0; t < k->num_temps; t++)
    if (k->temps[t].stage == s) sb_printf(o, "%shlo_tmp%u[hlo_j] = v%u;\n", ind, t, k->temps[t].value);
  if (st->kind == KSTAGE_REDUCE) {
    char acc[24], val[24];
    snprintf(acc, sizeof acc, "acc%u", s);
    snprintf(val, sizeof val, "v%u", st->value);
    for (uint32_t i = st->comb_begin; i < st->comb_end; i++)
      HLO_TRY(cstyle_print_inst(v->d, k, o, v->comb, i, "c", acc, val, ind));
    sb_printf(o, "%sacc%u = c%u;\n", ind, s, st->comb_result);
    return NULL;
  }
  for (uint32_t oi = 0; oi < k->num_outputs; oi++) {
    const kernel_output *out = &k->outputs[oi];
    if (out->stage != s || !output_varies(k, out, v->vary)) continue;
    if (v->vec_out[oi]) {
      sb_printf(o, "%shlo_st%u[hlo_e] = %s(v%u);\n", ind, oi, store_conv(out->buf.dtype), out->value);
      continue;
    }
    kernel_affine lin = output_linear(k, oi);
    sb_printf(o, "%sout%u[", ind, oi);
    print_affine_sub(o, &lin, k->rank, 0, NULL);
    sb_printf(o, "] = %s(v%u);\n", store_conv(out->buf.dtype), out->value);
  }
  return NULL;
}

/* The chunk stores of stage s's vectorised outputs (coordinates declared). */
static void vp_chunk_stores(const vprint *v, uint32_t s, const char *ind) {
  const kernel *k = v->k;
  for (uint32_t oi = 0; oi < k->num_outputs; oi++) {
    const kernel_output *out = &k->outputs[oi];
    if (out->stage != s || !v->vec_out[oi]) continue;
    kernel_affine lin = output_linear(k, oi);
    sb_printf(v->o, "%shlo_vst<%s, %u>(out%u + (", ind, cstyle_storage_type(out->buf.dtype), v->p.V,
              oi);
    print_affine_sub(v->o, &lin, k->rank, k->rank - 1, "hlo_xb");
    sb_printf(v->o, "), hlo_st%u, hlo_al);\n", oi);
  }
}

/* Declares the chunk of each output stage s stores by chunks. */
static void vp_declare_chunk_stores(const vprint *v, uint32_t s, const char *ind) {
  const kernel *k = v->k;
  for (uint32_t oi = 0; oi < k->num_outputs; oi++)
    if (k->outputs[oi].stage == s && v->vec_out[oi])
      sb_printf(v->o, "%s%s hlo_st%u[%u];\n", ind, cstyle_storage_type(k->outputs[oi].buf.dtype), oi,
                v->p.V);
}

/* Dynamic-update outputs (kernel.h; plan_of: whole rows): the clamped
 * starts, the operand's elements outside the update box copied in first
 * when the output is not the operand's buffer (a grid-stride loop over
 * the operand, apart from the update's stores: no ordering needed), then
 * the output pointer moved to the box's first element, so that the
 * stores (the identity map over the operand's strides) land in the box. */
static void vp_dus_outputs(const vprint *v) {
  const kernel *k = v->k;
  strbuf *o = v->o;
  for (uint32_t oi = 0; oi < k->num_outputs; oi++) {
    const kernel_output *out = &k->outputs[oi];
    if (!kernel_output_dus(out)) continue;
    cstyle_print_dus_starts(o, k, oi);
    uint32_t r = out->buf.rank, base = out->dus_operand - 1;
    long long total = 1;
    for (uint32_t j = 0; j < r; j++) total *= (long long)out->buf.dims[j];
    sb_printf(o, "  if ((const void *)out%u != (const void *)in%u) {\n", oi, base);
    sb_printf(o, "    for (int64_t e = (int64_t)blockIdx.x * blockDim.x + threadIdx.x; e < %lldLL; "
                 "e += (int64_t)gridDim.x * blockDim.x) {\n", total);
    sb_puts(o, "      int64_t q = e;\n      bool box = true;\n");
    for (uint32_t j = r; j-- > 0;) {
      long long D = (long long)out->buf.dims[j], U = (long long)k->dims[j];
      sb_printf(o, "      { const int64_t c = q %% %lldLL; q /= %lldLL; ", D, D);
      if (out->dus_start[j])
        sb_printf(o, "box = box && c >= o%us%u && c < o%us%u + %lldLL; }\n", oi, j, oi, j, U);
      else sb_printf(o, "box = box && c < %lldLL; }\n", U);
    }
    sb_printf(o, "      if (!box) out%u[e] = in%u[e];\n    }\n  }\n", oi, base);
    sb_printf(o, "  out%u += 0", oi);
    long long stride = 1;
    for (uint32_t j = r; j-- > 0;) {
      if (out->dus_start[j]) sb_printf(o, " + o%us%u * %lldLL", oi, j, stride);
      stride *= (long long)out->buf.dims[j];
    }
    sb_puts(o, ";\n");
  }
}

/* The signature, the buffer pointers and hlo_al. */
static hlo_status vp_open(const vprint *v, const char *what) {
  const kernel *k = v->k;
  strbuf *o = v->o;
  uint32_t np = k->rank - k->num_reduce_dims;
  sb_printf(o, "/* %s: index space [", k->name);
  for (uint32_t dd = 0; dd < k->rank; dd++)
    sb_printf(o, "%s%lld%s", dd ? ", " : "", (long long)k->dims[dd], dd >= np ? " red" : "");
  sb_printf(o, "], %lld tiles, %u inputs, %u outputs", (long long)kernel_num_tiles(k), k->num_inputs,
            k->num_outputs);
  if (k->num_stages > 1) sb_printf(o, ", %u stages", k->num_stages);
  if (k->num_temps) sb_printf(o, ", %u temporaries", k->num_temps);
  sb_printf(o, ", %s */\n", what);
  /* rows in registers: the block size bounds the registers ptxas may use
   * (a block of 1024 threads has 64 each) */
  if (v->p.form == FORM_REG_ROW)
    sb_printf(o, "extern \"C\" __global__ __launch_bounds__(%u) void %s(%s) {\n",
              v->p.T * v->p.R, k->name, v->d->params);
  else
    sb_printf(o, "%s %s(%s) {\n", v->d->kernel_prefix, k->name, v->d->params);
  for (uint32_t i = 0; i < k->num_inputs; i++) {
    const char *st = cstyle_storage_type(k->inputs[i].dtype);
    if (!st)
      return status_at(HLO_UNIMPLEMENTED, &k->loc, "kernel %s: element type %s", k->name,
                       hlo_dtype_name(k->inputs[i].dtype));
    sb_printf(o, "  const %s *%s in%u = (const %s *)B.p[%u];\n", st,
              k->inputs[i].may_alias ? "" : "__restrict__", i, st, i);
  }
  for (uint32_t i = 0; i < k->num_outputs; i++) {
    const char *st = cstyle_storage_type(k->outputs[i].buf.dtype);
    if (!st)
      return status_at(HLO_UNIMPLEMENTED, &k->loc, "kernel %s: element type %s", k->name,
                       hlo_dtype_name(k->outputs[i].buf.dtype));
    sb_printf(o, "  %s *%s out%u = (%s *)B.p[%u];\n", st,
              k->outputs[i].buf.may_alias ? "" : "__restrict__", i, st, k->num_inputs + i);
  }
  for (uint32_t t = 0; t < k->num_temps; t++)
    if (!cstyle_compute_type(k->temps[t].dtype))
      return status_at(HLO_UNIMPLEMENTED, &k->loc, "kernel %s: element type %s", k->name,
                       hlo_dtype_name(k->temps[t].dtype));
  vp_dus_outputs(v);
  /* 16-byte loads and stores only when every buffer is 16-byte aligned
   * (device allocations are; a uniform test, else element accesses) */
  sb_puts(o, "  const bool hlo_al = ((0ull");
  for (uint32_t i = 0; i < k->num_inputs; i++) sb_printf(o, " | (uint64_t)in%u", i);
  for (uint32_t i = 0; i < k->num_outputs; i++) sb_printf(o, " | (uint64_t)out%u", i);
  sb_puts(o, ") & 15) == 0;\n  (void)hlo_al;\n");
  return NULL;
}

/* An elementwise kernel in chunks of V points (FORM_VEC). */
static hlo_status emit_vec(const vprint *v) {
  const kernel *k = v->k;
  strbuf *o = v->o;
  char what[64];
  snprintf(what, sizeof what, "chunks of %u points per thread", v->p.V);
  HLO_TRY(vp_open(v, what));
  sb_printf(o, "  for (int64_t t = tile_begin + (int64_t)blockIdx.x * blockDim.x + threadIdx.x; "
               "t < tile_end; t += (int64_t)gridDim.x * blockDim.x) {\n");
  vp_chunk_coords(v, "t", "    ");
  for (uint32_t s = 0; s < v->num_slots; s++)
    sb_printf(o, "    %s hlo_ld%u[%u];\n",
              cstyle_storage_type(k->inputs[k->body[v->slot_inst[s]].input].dtype), s, v->p.V);
  vp_chunk_loads(v, "0", "    ");
  vp_declare_chunk_stores(v, 0, "    ");
  sb_printf(o, "#pragma unroll\n    for (int hlo_e = 0; hlo_e < %u; hlo_e++) {\n", v->p.V);
  sb_printf(o, "      const int hlo_j = hlo_e;\n      const int64_t x%u = hlo_xb + hlo_e;\n",
            k->rank - 1);
  for (uint32_t s = 0; s < k->num_stages; s++) HLO_TRY(vp_point(v, s, "      "));
  sb_printf(o, "      (void)hlo_j; (void)x%u;\n    }\n", k->rank - 1);
  for (uint32_t s = 0; s < k->num_stages; s++) vp_chunk_stores(v, s, "    ");
  sb_puts(o, "  }\n}\n");
  return NULL;
}

/* Opens the loop over the thread's chunks of the row (`live`: only a
 * live row's; with hlo_p, the chunk's first row position, and its
 * coordinates declared). Closed by "}\n    }\n" at indent 4. */
static void vp_open_chunks(const vprint *v, bool live) {
  strbuf *o = v->o;
  const cuda_plan *p = &v->p;
  sb_printf(o, "#pragma unroll\n    for (int hlo_c = 0; hlo_c < %u; hlo_c++) {\n", p->C);
  sb_printf(o, "      const int64_t hlo_p = ((int64_t)hlo_c * %u + hlo_tx) * %u;\n", p->T, p->V);
  bool full = (int64_t)p->C * p->T * p->V == p->n;
  if (live && !full) sb_printf(o, "      if (hlo_live && hlo_p < %lld) {\n", (long long)p->n);
  else if (live) sb_puts(o, "      if (hlo_live) {\n");
  else if (!full) sb_printf(o, "      if (hlo_p < %lld) {\n", (long long)p->n);
  else sb_puts(o, "      {\n");
  vp_chunk_coords(v, "hlo_p", "        ");
}

/* A row kernel with its rows in registers (FORM_REG_ROW). */
static hlo_status emit_reg_row(const vprint *v) {
  const kernel *k = v->k;
  const cuda_plan *p = &v->p;
  strbuf *o = v->o;
  uint32_t np = k->rank - k->num_reduce_dims;
  char what[128];
  snprintf(what, sizeof what, "rows in registers: %u threads x %u chunks of %u per row, %u rows "
           "per block", p->T, p->C, p->V, p->R);
  HLO_TRY(vp_open(v, what));
  bool barrier = false;
  for (uint32_t s = 0; s < k->num_stages; s++) {
    if (k->stages[s].kind != KSTAGE_REDUCE || p->T <= 32) continue;
    sb_printf(o, "  __shared__ %s hlo_red%u[%u][%u];\n", cstyle_compute_type(v->acc[s]), s, p->R,
              p->T / 32);
    barrier = true;
  }
  sb_printf(o, "  const int hlo_tx = (int)threadIdx.x %% %u, hlo_ry = (int)threadIdx.x / %u;\n",
            p->T, p->T);
  sb_printf(o, "  (void)hlo_ry;\n");
  /* the loop is uniform over the block (shuffles and barriers see every
   * thread); a thread past the last row computes the last row again and
   * stores nothing */
  sb_printf(o, "  for (int64_t hlo_tb = tile_begin + (int64_t)blockIdx.x * %u; hlo_tb < tile_end; "
               "hlo_tb += (int64_t)gridDim.x * %u) {\n", p->R, p->R);
  sb_puts(o, "    const bool hlo_live = hlo_tb + hlo_ry < tile_end;\n");
  sb_puts(o, "    const int64_t t = hlo_live ? hlo_tb + hlo_ry : tile_end - 1;\n");
  if (np == 0) {
    sb_puts(o, "    (void)t;\n");
  } else {
    sb_puts(o, "    int64_t hlo_r = t;\n");
    for (uint32_t d = np; d-- > 0;) {
      if (d == 0) sb_puts(o, "    const int64_t x0 = hlo_r;\n");
      else sb_printf(o, "    const int64_t x%u = hlo_r %% %lld; hlo_r /= %lld;\n", d,
                     (long long)k->dims[d], (long long)k->dims[d]);
    }
  }
  uint32_t E = p->C * p->V;
  for (uint32_t s = 0; s < v->num_slots; s++)
    sb_printf(o, "    %s hlo_ld%u[%u];\n",
              cstyle_storage_type(k->inputs[k->body[v->slot_inst[s]].input].dtype), s, E);
  for (uint32_t t = 0; t < k->num_temps; t++)
    sb_printf(o, "    %s hlo_tmp%u[%u];\n", cstyle_compute_type(k->temps[t].dtype), t, E);
  if (v->num_slots) {
    vp_open_chunks(v, false);
    char di[32];
    snprintf(di, sizeof di, "hlo_c * %u", p->V);
    vp_chunk_loads(v, di, "        ");
    sb_puts(o, "      }\n    }\n");
  }
  for (uint32_t s = 0; s < k->num_stages; s++) {
    const kernel_stage *st = &k->stages[s];
    for (uint32_t i = st->body_begin; i < st->body_end; i++) {
      if (v->vary[i]) continue;
      HLO_TRY(cstyle_print_inst(v->d, k, o, k->body, i, "v", "", "", "    "));
    }
    for (uint32_t i = st->body_begin; i < st->body_end; i++)
      if (vp_row_div(v, i))
        sb_printf(o, "    const float hlo_rcp%u = 1.0f / v%u;\n    const bool hlo_rok%u = "
                     "fabsf(v%u) >= 0x1p-126f && fabsf(v%u) <= 0x1p126f;\n",
                  i, k->body[i].args[1], i, k->body[i].args[1], k->body[i].args[1]);
    bool loop = st->kind == KSTAGE_REDUCE, stores = false;
    for (uint32_t i = st->body_begin; i < st->body_end; i++) loop |= v->vary[i];
    for (uint32_t t = 0; t < k->num_temps; t++) loop |= k->temps[t].stage == s;
    for (uint32_t oi = 0; oi < k->num_outputs; oi++) {
      const kernel_output *out = &k->outputs[oi];
      if (out->stage != s) continue;
      if (output_varies(k, out, v->vary)) {
        loop = stores = true;
        continue;
      }
      kernel_affine lin = output_linear(k, oi);
      sb_printf(o, "    if (hlo_live && hlo_tx == 0) out%u[", oi);
      print_affine_sub(o, &lin, k->rank, 0, NULL);
      sb_printf(o, "] = %s(v%u);\n", store_conv(out->buf.dtype), out->value);
    }
    if (!loop) continue;
    const char *at = cstyle_compute_type(v->acc[s]);
    int64_t id_i = 0;
    double id_f = 0;
    if (st->kind == KSTAGE_REDUCE) {
      if (!at)
        return status_at(HLO_UNIMPLEMENTED, &k->loc, "kernel %s: accumulator type %s", k->name,
                         hlo_dtype_name(v->acc[s]));
      (void)kernel_stage_identity(k, s, &id_i, &id_f);
      bool same = dtype_is_float(v->acc[s]) ? !memcmp(&st->init.f, &id_f, sizeof id_f)
                                            : st->init.i == id_i;
      sb_printf(o, "    %s acc%u = ", at, s);
      if (!same) {
        sb_puts(o, "hlo_tx == 0 ? ");
        cstyle_print_const(v->d, o, v->acc[s], st->init.i, st->init.f);
        sb_puts(o, " : ");
      }
      cstyle_print_const(v->d, o, v->acc[s], id_i, id_f);
      sb_puts(o, ";\n");
    }
    vp_open_chunks(v, stores);
    vp_declare_chunk_stores(v, s, "        ");
    sb_printf(o, "#pragma unroll\n        for (int hlo_e = 0; hlo_e < %u; hlo_e++) {\n", p->V);
    sb_printf(o, "          const int hlo_j = hlo_c * %u + hlo_e;\n", p->V);
    sb_printf(o, "          const int64_t x%u = hlo_xb + hlo_e;\n", k->rank - 1);
    HLO_TRY(vp_point(v, s, "          "));
    sb_puts(o, "          (void)hlo_j; (void)x");
    sb_printf(o, "%u;\n        }\n", k->rank - 1);
    vp_chunk_stores(v, s, "        ");
    sb_puts(o, "      }\n    }\n");
    if (st->kind != KSTAGE_REDUCE) continue;
    char acc[24];
    snprintf(acc, sizeof acc, "acc%u", s);
    uint32_t w0 = p->T < 32 ? p->T / 2 : 16;
    for (uint32_t w = w0; w >= 1; w /= 2) {
      sb_printf(o, "    {\n      const %s hlo_o = hlo_shfl_xor(acc%u, %u);\n", at, s, w);
      for (uint32_t i = st->comb_begin; i < st->comb_end; i++)
        HLO_TRY(cstyle_print_inst(v->d, k, o, v->comb, i, "c", acc, "hlo_o", "      "));
      sb_printf(o, "      acc%u = c%u;\n    }\n", s, st->comb_result);
    }
    if (p->T > 32) {
      sb_printf(o, "    if ((hlo_tx & 31) == 0) hlo_red%u[hlo_ry][hlo_tx >> 5] = acc%u;\n", s, s);
      sb_puts(o, "    __syncthreads();\n");
      sb_printf(o, "    acc%u = hlo_red%u[hlo_ry][0];\n", s, s);
      sb_printf(o, "#pragma unroll\n    for (int hlo_w = 1; hlo_w < %u; hlo_w++) {\n", p->T / 32);
      sb_printf(o, "      const %s hlo_o = hlo_red%u[hlo_ry][hlo_w];\n", at, s);
      for (uint32_t i = st->comb_begin; i < st->comb_end; i++)
        HLO_TRY(cstyle_print_inst(v->d, k, o, v->comb, i, "c", acc, "hlo_o", "      "));
      sb_printf(o, "      acc%u = c%u;\n    }\n", s, st->comb_result);
    }
    const char *rt = cstyle_compute_type(st->dtype);
    const char *rnd = st->dtype == HLO_BF16 ? "hlo_round_bf16" : st->dtype == HLO_F16 ? "hlo_round_f16" : "";
    sb_printf(o, "    const %s r%u = %s((%s)acc%u);\n", rt, s, rnd, rt, s);
  }
  /* the block leaves the row together: hlo_red is the next row's */
  if (barrier) sb_puts(o, "    __syncthreads();\n");
  sb_puts(o, "  }\n}\n");
  return NULL;
}

cuda_form_info cuda_kernel_form(const kernel *k) {
  cuda_form_info f = {CUDA_FORM_POINTS, 1, 1, 1, 1};
  cuda_plan p = plan_of(k);
  if (p.form == FORM_VEC) {
    f.form = CUDA_FORM_CHUNKS;
    f.vec = p.V;
  } else if (p.form == FORM_REG_ROW) {
    f.form = CUDA_FORM_REG_ROWS;
    f.vec = p.V;
    f.chunks = p.C;
    f.row_threads = p.T;
    f.rows_per_block = p.R;
  } else if (k->sched.row_threads > 1) {
    f.form = CUDA_FORM_BLOCK_ROWS;
    f.row_threads = k->sched.row_threads;
  }
  return f;
}

/* Prints kernel k in the form of its plan. */
static hlo_status emit_planned(const cstyle_dialect *d, const kernel *k, cuda_plan p, strbuf *o) {
  HLO_TRY(kernel_check_schedule(k));
  vprint v;
  HLO_TRY(vp_init(&v, d, k, p, o));
  hlo_status st = p.form == FORM_VEC ? emit_vec(&v) : emit_reg_row(&v);
  vp_free(&v);
  return st;
}

void cuda_schedule(kernel *k) {
  uint32_t np = k->rank - k->num_reduce_dims;
  kernel_schedule *s = &k->sched;
  for (uint32_t d = 0; d < k->rank; d++) s->tile[d] = k->dims[d] > 0 ? k->dims[d] : 1;
  for (uint32_t d = 0; d < np; d++) s->tile[d] = 1;
  s->num_thread_dims = np;
  for (uint32_t st = 0; st < KERNEL_MAX_STAGES; st++) s->reduce_lanes[st] = 0;
  s->row_threads = 0;
  if (!k->num_reduce_dims) {
    /* chunks of V contiguous points per tile (FORM_VEC) */
    bool any0 = k->rank == 0;
    for (uint32_t d = 0; d < k->rank; d++) any0 |= k->dims[d] <= 0;
    if (any0) return;
    bool *vary = malloc((k->num_body ? k->num_body : 1) * sizeof *vary);
    if (!vary) return;
    kernel_row_varying(k, vary);
    uint32_t V = chunk_width(k, vary, ELEM_VEC_BYTES, 16);
    free(vary);
    if (V > 1) s->tile[k->rank - 1] = V;
    return;
  }
  /* rows in registers (FORM_REG_ROW) where they fit */
  if (reg_row_plan(k).form == FORM_REG_ROW) return;
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

/* grid: `blocks`, capped at what num_sms multiprocessors hold at once
 * (num_sms > 0) and at GRID_MAX */
static uint32_t cap_grid(int64_t blocks, uint32_t block, int num_sms) {
  if (blocks <= 0) return 0;
  if (num_sms > 0) {
    int64_t per_sm = THREADS_PER_SM / (block ? block : 1);
    int64_t cap = (int64_t)num_sms * (per_sm > 0 ? per_sm : 1);
    if (blocks > cap) blocks = cap;
  }
  return blocks > (int64_t)GRID_MAX ? GRID_MAX : (uint32_t)blocks;
}

cuda_geometry cuda_launch_geometry(const kernel *k, int num_sms) {
  cuda_geometry g = {0, 0, 0};
  int64_t tiles = kernel_num_tiles(k);
  cuda_plan p = plan_of(k);
  if (p.form == FORM_REG_ROW) {
    g.block_x = p.T * p.R;
    g.grid_x = cap_grid(tiles <= 0 ? 0 : (tiles + p.R - 1) / p.R, g.block_x, num_sms);
    return g;
  }
  if (k->sched.row_threads > 1) {
    g.block_x = k->sched.row_threads;
    g.shared_bytes = (uint32_t)cstyle_shared_bytes(k);
    g.grid_x = cap_grid(tiles, g.block_x, num_sms);
    return g;
  }
  /* one tile per thread: blocks of 256, fewer (a multiple of 32) for
   * small kernels */
  int64_t block = BLOCK_THREADS;
  if (tiles < block) block = tiles <= 32 ? 32 : (tiles + 31) / 32 * 32;
  g.block_x = (uint32_t)block;
  g.grid_x = cap_grid(tiles <= 0 ? 0 : (tiles + block - 1) / block, g.block_x, num_sms);
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
    cuda_plan p = plan_of(k);
    if (p.form == FORM_CSTYLE) HLO_TRY(cstyle_emit_kernel(d, &named, out));
    else HLO_TRY(emit_planned(d, &named, p, out));
  }
  return NULL;
}
