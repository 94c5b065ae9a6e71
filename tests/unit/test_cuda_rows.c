/* test_cuda_rows.c — the CUDA backend's row kernels (softmax, LayerNorm,
 * RMSNorm with a second, per-row output) and chunked elementwise kernels
 * on a GPU, against the reference interpreter (backend/cuda/emit_cuda.c:
 * rows in registers, 16-byte chunks, warp-shuffle trees, f32 sums in f32,
 * divides by a row value through its reciprocal).
 *
 * Rows of 1, 3, 31, 32, 33, 127, 1024, 1025, 4096, 8192 (the longest kept
 * in registers) and 10000 (a block per row) elements, f32 and bf16, a few
 * rows each (and 1000 rows of 1024: a grid that loops); every case is
 * compiled for HLO_BACKEND_CUDA and HLO_BACKEND_INTERP and run on the same
 * random inputs. Tolerances: f32 1e-4 relative norm of the difference,
 * bf16 2e-2 of the largest magnitude (the model suites' tolerances).
 * The form each case takes (rows in registers, chunks, a block per row) is
 * checked without a GPU through cuda_kernel_form on the lowered kernel;
 * without a GPU (no driver) the runs print "skipped: <reason>" and pass
 * (HLO_TEST_ROWS_ON_CPU=1 runs them on the CPU backend instead: a check of
 * the test itself). */
#include <dlfcn.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "backend/cuda/emit_cuda.h"
#include "codegen/lower_fusion.h"
#include "hlo/hlo.h"
#include "ir/ir.h"
#include "support/float.h"
#include "support/strbuf.h"
#include "test.h"
#include "testlib.h"

static uint64_t rng = 0x9e3779b97f4a7c15ull;
static double rnd(void) { /* about N(0.5, 2) from 4 uniforms */
  double s = 0;
  for (int i = 0; i < 4; i++) {
    rng ^= rng << 13;
    rng ^= rng >> 7;
    rng ^= rng << 17;
    s += (double)(rng >> 11) / 9007199254740992.0;
  }
  return (s - 2.0) * 2.0 * 1.7320508 + 0.5;
}

typedef enum { K_SOFTMAX, K_LAYERNORM, K_RMSNORM, K_MASKED, K_ELEMENTWISE } kind;
static const char *const kind_names[] = {"softmax", "layernorm", "rmsnorm", "masked_softmax",
                                         "elementwise"};

/* The program of a case: R rows of N elements of type ty. */
static void program(kind k, int R, int N, const char *ty, char *out, size_t cap) {
  char m[64], r[48], c[48], mt[64];
  snprintf(m, sizeof m, "tensor<%dx%dx%s>", R, N, ty);
  snprintf(r, sizeof r, "tensor<%dx%s>", R, ty);
  snprintf(c, sizeof c, "tensor<%dx%s>", N, ty);
  snprintf(mt, sizeof mt, "tensor<%dx%dx%s>", N, R, ty);
  const char *ninf = !strcmp(ty, "f32") ? "0xFF800000" : "0xFF80";
  switch (k) {
  case K_SOFTMAX:
    tl_softmax_program(ty, R, N, out, cap);
    break;
  case K_LAYERNORM:
    snprintf(out, cap,
             "func.func @main(%%x: %s, %%g: %s) -> %s {\n"
             "  %%zero = stablehlo.constant dense<0.0> : tensor<%s>\n"
             "  %%n = stablehlo.constant dense<%d.0> : %s\n"
             "  %%eps = stablehlo.constant dense<1.0e-5> : %s\n"
             "  %%s = stablehlo.reduce(%%x init: %%zero) applies stablehlo.add across dimensions = [1] : (%s, tensor<%s>) -> %s\n"
             "  %%mean = stablehlo.divide %%s, %%n : %s\n"
             "  %%mb = stablehlo.broadcast_in_dim %%mean, dims = [0] : (%s) -> %s\n"
             "  %%c = stablehlo.subtract %%x, %%mb : %s\n"
             "  %%sq = stablehlo.multiply %%c, %%c : %s\n"
             "  %%ss = stablehlo.reduce(%%sq init: %%zero) applies stablehlo.add across dimensions = [1] : (%s, tensor<%s>) -> %s\n"
             "  %%var = stablehlo.divide %%ss, %%n : %s\n"
             "  %%ve = stablehlo.add %%var, %%eps : %s\n"
             "  %%rs = stablehlo.rsqrt %%ve : %s\n"
             "  %%rb = stablehlo.broadcast_in_dim %%rs, dims = [0] : (%s) -> %s\n"
             "  %%y = stablehlo.multiply %%c, %%rb : %s\n"
             "  %%gb = stablehlo.broadcast_in_dim %%g, dims = [1] : (%s) -> %s\n"
             "  %%y2 = stablehlo.multiply %%y, %%gb : %s\n"
             "  return %%y2 : %s\n}\n",
             m, c, m, ty, N, r, r, m, ty, r, r, r, m, m, m, m, ty, r, r, r, r, r, m, m, c, m, m, m);
    break;
  case K_RMSNORM:
    snprintf(out, cap,
             "func.func @main(%%x: %s) -> (%s, %s) {\n"
             "  %%zero = stablehlo.constant dense<0.0> : tensor<%s>\n"
             "  %%n = stablehlo.constant dense<%d.0> : %s\n"
             "  %%eps = stablehlo.constant dense<1.0e-6> : %s\n"
             "  %%sq = stablehlo.multiply %%x, %%x : %s\n"
             "  %%ss = stablehlo.reduce(%%sq init: %%zero) applies stablehlo.add across dimensions = [1] : (%s, tensor<%s>) -> %s\n"
             "  %%ms = stablehlo.divide %%ss, %%n : %s\n"
             "  %%ve = stablehlo.add %%ms, %%eps : %s\n"
             "  %%rs = stablehlo.rsqrt %%ve : %s\n"
             "  %%rb = stablehlo.broadcast_in_dim %%rs, dims = [0] : (%s) -> %s\n"
             "  %%y = stablehlo.multiply %%x, %%rb : %s\n"
             "  return %%y, %%ss : %s, %s\n}\n",
             m, m, r, ty, N, r, r, m, m, ty, r, r, r, r, r, m, m, m, r);
    break;
  case K_MASKED: /* attention's: scaled by a divide, causal mask by iotas */
    snprintf(out, cap,
             "func.func @main(%%x: %s) -> %s {\n"
             "  %%ninf = stablehlo.constant dense<%s> : tensor<%s>\n"
             "  %%zero = stablehlo.constant dense<0.0> : tensor<%s>\n"
             "  %%sc = stablehlo.constant dense<8.0> : %s\n"
             "  %%nb = stablehlo.constant dense<%s> : %s\n"
             "  %%i = stablehlo.iota dim = 0 : tensor<%dx%dxi32>\n"
             "  %%j = stablehlo.iota dim = 1 : tensor<%dx%dxi32>\n"
             "  %%c = stablehlo.compare GE, %%i, %%j : (tensor<%dx%dxi32>, tensor<%dx%dxi32>) -> tensor<%dx%dxi1>\n"
             "  %%xs = stablehlo.divide %%x, %%sc : %s\n"
             "  %%xm = stablehlo.select %%c, %%xs, %%nb : tensor<%dx%dxi1>, %s\n"
             "  %%m = stablehlo.reduce(%%xm init: %%ninf) applies stablehlo.maximum across dimensions = [1] : (%s, tensor<%s>) -> %s\n"
             "  %%mb = stablehlo.broadcast_in_dim %%m, dims = [0] : (%s) -> %s\n"
             "  %%d = stablehlo.subtract %%xm, %%mb : %s\n"
             "  %%e = stablehlo.exponential %%d : %s\n"
             "  %%s = stablehlo.reduce(%%e init: %%zero) applies stablehlo.add across dimensions = [1] : (%s, tensor<%s>) -> %s\n"
             "  %%sb = stablehlo.broadcast_in_dim %%s, dims = [0] : (%s) -> %s\n"
             "  %%y = stablehlo.divide %%e, %%sb : %s\n"
             "  return %%y : %s\n}\n",
             m, m, ninf, ty, ty, m, ninf, m, R, N, R, N, R, N, R, N, R, N, m, R, N, m, m, ty, r, r, m,
             m, m, m, ty, r, r, m, m, m);
    break;
  case K_ELEMENTWISE:
    snprintf(out, cap,
             "func.func @main(%%x: %s, %%y: %s, %%b: %s, %%z: %s) -> %s {\n"
             "  %%bb = stablehlo.broadcast_in_dim %%b, dims = [1] : (%s) -> %s\n"
             "  %%zt = stablehlo.transpose %%z, dims = [1, 0] : (%s) -> %s\n"
             "  %%a = stablehlo.add %%x, %%y : %s\n"
             "  %%p = stablehlo.multiply %%a, %%bb : %s\n"
             "  %%q = stablehlo.add %%p, %%zt : %s\n"
             "  %%w = stablehlo.tanh %%q : %s\n"
             "  return %%w : %s\n}\n",
             m, m, c, mt, m, c, m, mt, m, m, m, m, m, m);
    break;
  }
}

/* The form the CUDA backend gives the case's ops lowered as one kernel
 * (as the fusion pass fuses them), without a GPU. */
static cuda_form_info form_of(const char *text) {
  cuda_form_info f = {CUDA_FORM_POINTS, 0, 0, 0, 0};
  hlo_status st = NULL;
  hlo_module_ir *m = tl_parse_text("rows.mlir", text, 0, &st);
  CHECK(m != NULL);
  if (!m) {
    hlo_status_print(st, stderr);
    hlo_status_free(st);
    return f;
  }
  const hlo_op *ret = NULL, *all[64];
  uint32_t nall = 0;
  for (const hlo_op *op = m->funcs ? m->funcs->body.block.first : NULL; op; op = op->next) {
    if (op->opcode == OP_FUNC_RETURN) ret = op;
    else if (nall < 64) all[nall++] = op;
  }
  kernel *k = NULL;
  CHECK(ret != NULL);
  if (ret) st = lower_fusion(all, nall, (const hlo_value *const *)ret->operands, ret->num_operands,
                             "k", &k);
  if (st) hlo_status_print(st, stderr);
  CHECK(!st && k);
  if (k) {
    cuda_schedule(k);
    f = cuda_kernel_form(k);
  }
  kernel_destroy(k);
  hlo_status_free(st);
  module_free(m);
  return f;
}

static int gpu_state = -1; /* -1 untried, 0 unavailable, 1 runs */
static int cases_run, cases_failed;
static double worst_f32, worst_bf16;

static double value_at(const void *p, size_t i, bool bf16) {
  return bf16 ? bf16_to_f32(((const uint16_t *)p)[i]) : ((const float *)p)[i];
}

/* Compiles `text` for `backend` and runs it on args; results into *res. */
static hlo_status run_on(hlo_backend_kind backend, const char *text, const hlo_buffer_view *args,
                         int nargs, hlo_buffer ***res, int *nres) {
  hlo_module *m = NULL;
  hlo_executable *e = NULL;
  HLO_TRY(hlo_module_parse("rows.mlir", text, strlen(text), &m));
  hlo_compile_options o;
  memset(&o, 0, sizeof o);
  o.backend = backend;
  o.cache_dir = "off";
  hlo_status st = hlo_executable_compile(m, NULL, &o, &e);
  if (!st) {
    *nres = hlo_executable_num_results(e);
    st = hlo_executable_run(e, args, nargs, res);
  }
  hlo_executable_destroy(e);
  hlo_module_destroy(m);
  return st;
}

/* One case on the GPU and on the interpreter. */
static void run_case(kind k, int R, int N, bool bf16) {
  const char *ty = bf16 ? "bf16" : "f32";
  char text[8192], what[96];
  program(k, R, N, ty, text, sizeof text);
  snprintf(what, sizeof what, "%s_%s_%dx%d", kind_names[k], ty, R, N);
  /* the form, checked without a GPU */
  cuda_form_info f = form_of(text);
  if (k == K_ELEMENTWISE) CHECK(f.form == (N % 2 == 0 ? CUDA_FORM_CHUNKS : CUDA_FORM_POINTS));
  else CHECK(f.form == (N <= 8192 ? CUDA_FORM_REG_ROWS : CUDA_FORM_BLOCK_ROWS));
  if (gpu_state == 0) return;
  /* the arguments */
  int nargs = k == K_ELEMENTWISE ? 4 : k == K_LAYERNORM ? 2 : 1;
  int64_t dims[4][2] = {{R, N}, {R, N}, {N, 0}, {N, R}};
  if (k == K_LAYERNORM) dims[1][0] = N;
  int ranks[4] = {2, 2, 1, 2};
  if (k == K_LAYERNORM) ranks[1] = 1;
  hlo_buffer_view args[4];
  void *data[4] = {0};
  for (int a = 0; a < nargs; a++) {
    size_t n = (size_t)dims[a][0] * (ranks[a] == 2 ? (size_t)dims[a][1] : 1);
    data[a] = malloc(n * (bf16 ? 2 : 4) + 1);
    for (size_t i = 0; i < n; i++) {
      double v = rnd();
      if (bf16) ((uint16_t *)data[a])[i] = f32_to_bf16((float)v);
      else ((float *)data[a])[i] = (float)v;
    }
    args[a].dtype = bf16 ? HLO_BF16 : HLO_F32;
    args[a].rank = ranks[a];
    args[a].dims = dims[a];
    args[a].data = data[a];
  }
  hlo_buffer **got = NULL, **want = NULL;
  int ngot = 0, nwant = 0;
  /* HLO_TEST_ROWS_ON_CPU=1: the CPU backend instead (checks this test
   * itself on a machine without a GPU) */
  hlo_backend_kind be = getenv("HLO_TEST_ROWS_ON_CPU") ? HLO_BACKEND_CPU : HLO_BACKEND_CUDA;
  hlo_status st = run_on(be, text, args, nargs, &got, &ngot);
  if (st && gpu_state < 0 && hlo_status_code_of(st) == HLO_UNAVAILABLE) {
    printf("gpu runs: skipped: %s\n", hlo_status_message(st));
    gpu_state = 0;
    hlo_status_free(st);
    for (int a = 0; a < nargs; a++) free(data[a]);
    return;
  }
  if (st) {
    fprintf(stderr, "%s on cuda: ", what);
    hlo_status_print(st, stderr);
  }
  CHECK(!st);
  hlo_status_free(st);
  if (!st) gpu_state = 1;
  st = run_on(HLO_BACKEND_INTERP, text, args, nargs, &want, &nwant);
  CHECK(!st);
  hlo_status_free(st);
  bool ok = got && want && ngot == nwant;
  for (int r = 0; ok && r < ngot; r++) {
    size_t n = hlo_buffer_nbytes(want[r]) / (bf16 ? 2 : 4);
    const void *pg = hlo_buffer_data(got[r]), *pw = hlo_buffer_data(want[r]);
    if (!pg || !pw || hlo_buffer_nbytes(got[r]) != hlo_buffer_nbytes(want[r])) {
      ok = false;
      break;
    }
    double dd = 0, ww = 0, dmax = 0, wmax = 0;
    bool finite = true;
    for (size_t i = 0; i < n; i++) {
      double g = value_at(pg, i, bf16), w = value_at(pw, i, bf16);
      finite = finite && isfinite(g) == isfinite(w);
      if (!isfinite(w)) continue;
      dd += (g - w) * (g - w);
      ww += w * w;
      if (fabs(g - w) > dmax || g != g) dmax = g != g ? INFINITY : fabs(g - w);
      if (fabs(w) > wmax) wmax = fabs(w);
    }
    double err = bf16 ? (wmax > 0 ? dmax / wmax : dmax) : (ww > 0 ? sqrt(dd / ww) : sqrt(dd));
    if (bf16 && err > worst_bf16) worst_bf16 = err;
    if (!bf16 && err > worst_f32) worst_f32 = err;
    bool pass = finite && err <= (bf16 ? 2e-2 : 1e-4);
    if (!pass) fprintf(stderr, "%s result %d: error %.3g (form %d, %u threads x %u chunks of %u)\n",
                       what, r, err, (int)f.form, f.row_threads, f.chunks, f.vec);
    CHECK(pass);
    ok = ok && pass;
  }
  CHECK(ok);
  cases_run++;
  cases_failed += !ok;
  for (int r = 0; got && r < ngot; r++) hlo_buffer_destroy(got[r]);
  for (int r = 0; want && r < nwant; r++) hlo_buffer_destroy(want[r]);
  free(got);
  free(want);
  for (int a = 0; a < nargs; a++) free(data[a]);
}

TEST(row_kernels_against_the_interpreter) {
  static const int lens[] = {1, 3, 31, 32, 33, 127, 1024, 1025, 4096, 8192, 10000};
  for (size_t l = 0; l < sizeof lens / sizeof *lens; l++)
    for (int b = 0; b < 2; b++)
      for (int k = K_SOFTMAX; k <= K_MASKED; k++) run_case((kind)k, lens[l] <= 1025 ? 5 : 3, lens[l], b);
  /* many rows: the grid loops over them */
  for (int b = 0; b < 2; b++)
    for (int k = K_SOFTMAX; k <= K_MASKED; k++) run_case((kind)k, 1000, 1024, b);
}

TEST(elementwise_chunks_against_the_interpreter) {
  static const int shapes[][2] = {{3, 8}, {5, 7}, {7, 64}, {2, 1000}, {1, 4}, {6, 2}, {513, 1026}};
  for (size_t s = 0; s < sizeof shapes / sizeof *shapes; s++)
    for (int b = 0; b < 2; b++) run_case(K_ELEMENTWISE, shapes[s][0], shapes[s][1], b);
}

/* ------------------------------------------------- the kernels on the host
 * Every case's kernel, printed by cuda_emit_module into one unit, compiled
 * as C++ for the host with an emulation of the CUDA builtins it uses (each
 * GPU thread of a block a ucontext fiber; __syncthreads and warp shuffles
 * points where the block or warp waits for all its threads; __shared__
 * variables static), and run block after block on a grid of at most 3
 * blocks (so the grid-stride loops and the rows past the end run), half
 * the cases on buffers 16-byte aligned and half on buffers one element
 * off (the element-wise path of the chunk loads and stores), against the
 * interpreter. Needs a C++ compiler (`c++`, or $CXX): else skipped. */

static const char emu_prelude[] =
    "// Host emulation of the CUDA builtins the generated kernels use: each GPU\n"
    "// thread of a block is a ucontext fiber; __syncthreads and warp shuffles\n"
    "// are sync points where the scheduler waits for the block (warp).\n"
    "#include <cmath>\n"
    "#include <cstring>\n"
    "#include <cstdio>\n"
    "#include <cstdlib>\n"
    "#include <ucontext.h>\n"
    "#include <vector>\n"
    "struct hlo_dim3 { unsigned x, y, z; };\n"
    "static hlo_dim3 threadIdx, blockIdx, blockDim, gridDim;\n"
    "#define __global__\n"
    "#define __device__\n"
    "#define __forceinline__ inline\n"
    "#define __restrict__ __restrict\n"
    "#define __align__(n) __attribute__((aligned(n)))\n"
    "#define __shared__ static\n"
    "#define __launch_bounds__(n)\n"
    "static inline float __uint_as_float(unsigned u) { float f; memcpy(&f, &u, 4); return f; }\n"
    "static inline unsigned __float_as_uint(float f) { unsigned u; memcpy(&u, &f, 4); return u; }\n"
    "static inline double __longlong_as_double(long long u) { double f; memcpy(&f, &u, 8); return f; }\n"
    "static inline long long __double_as_longlong(double f) { long long u; memcpy(&u, &f, 8); return u; }\n"
    "struct emu_fiber { ucontext_t ctx; int waiting; bool done; char *stack; };\n"
    "static std::vector<emu_fiber> emu_f;\n"
    "static ucontext_t emu_sched;\n"
    "static int emu_cur;\n"
    "static unsigned long long emu_slot[1024];\n"
    "static void emu_wait(int kind) { emu_f[emu_cur].waiting = kind; swapcontext(&emu_f[emu_cur].ctx, &emu_sched); }\n"
    "static void emu_sync_block() { emu_wait(1); }\n"
    "#define __syncthreads() emu_sync_block()\n"
    "template <class T> static T __shfl_xor_sync(unsigned, T v, int m) {\n"
    "  unsigned long long b = 0; memcpy(&b, &v, sizeof v); emu_slot[threadIdx.x] = b;\n"
    "  emu_wait(2);\n"
    "  unsigned long long r = emu_slot[threadIdx.x ^ (unsigned)m];\n"
    "  T out; memcpy(&out, &r, sizeof out);\n"
    "  emu_wait(2);\n"
    "  return out;\n"
    "}\n";

static const char emu_launcher[] =
    "static void (*emu_kernel)(gen::hlo_bufs, long long, long long);\n"
    "static gen::hlo_bufs emu_bufs;\n"
    "static long long emu_tiles;\n"
    "static void emu_entry() {\n"
    "  emu_kernel(emu_bufs, 0, emu_tiles);\n"
    "  emu_f[emu_cur].done = true;\n"
    "  swapcontext(&emu_f[emu_cur].ctx, &emu_sched);\n"
    "}\n"
    "static void emu_launch(unsigned grid, unsigned block) {\n"
    "  gridDim.x = grid; blockDim.x = block; gridDim.y = gridDim.z = blockDim.y = blockDim.z = 1;\n"
    "  emu_f.resize(block);\n"
    "  for (unsigned i = 0; i < block; i++) emu_f[i].stack = (char *)malloc(1 << 16);\n"
    "  for (unsigned b = 0; b < grid; b++) {\n"
    "    blockIdx.x = b;\n"
    "    for (unsigned i = 0; i < block; i++) {\n"
    "      emu_fiber &f = emu_f[i];\n"
    "      f.waiting = 0; f.done = false;\n"
    "      getcontext(&f.ctx);\n"
    "      f.ctx.uc_stack.ss_sp = f.stack; f.ctx.uc_stack.ss_size = 1 << 16; f.ctx.uc_link = NULL;\n"
    "      makecontext(&f.ctx, emu_entry, 0);\n"
    "    }\n"
    "    for (;;) {\n"
    "      for (unsigned i = 0; i < block; i++)\n"
    "        if (!emu_f[i].done && !emu_f[i].waiting) {\n"
    "          emu_cur = (int)i; threadIdx.x = i; threadIdx.y = threadIdx.z = 0;\n"
    "          swapcontext(&emu_sched, &emu_f[i].ctx);\n"
    "        }\n"
    "      bool all_done = true, released = false, all1 = true;\n"
    "      for (unsigned i = 0; i < block; i++) {\n"
    "        if (!emu_f[i].done) all_done = false;\n"
    "        if (!emu_f[i].done && emu_f[i].waiting != 1) all1 = false;\n"
    "      }\n"
    "      if (all_done) break;\n"
    "      if (all1) { for (unsigned i = 0; i < block; i++) emu_f[i].waiting = 0; released = true; }\n"
    "      for (unsigned w = 0; w * 32 < block; w++) {\n"
    "        bool all2 = true, any = false;\n"
    "        for (unsigned i = w * 32; i < w * 32 + 32 && i < block; i++)\n"
    "          if (!emu_f[i].done) { any = true; if (emu_f[i].waiting != 2) all2 = false; }\n"
    "        if (any && all2) {\n"
    "          for (unsigned i = w * 32; i < w * 32 + 32 && i < block; i++) emu_f[i].waiting = 0;\n"
    "          released = true;\n"
    "        }\n"
    "      }\n"
    "      if (!released) { fprintf(stderr, \"emu: deadlock in block %u\\n\", b); abort(); }\n"
    "    }\n"
    "  }\n"
    "}\n"
    "extern \"C\" int emu_run(int index, unsigned grid, unsigned block, long long tiles, void **bufs) {\n"
    "  emu_kernel = emu_table[index];\n"
    "  emu_tiles = tiles;\n"
    "  for (int i = 0; i < 64; i++) emu_bufs.p[i] = bufs[i];\n"
    "  emu_launch(grid, block);\n"
    "  for (unsigned i = 0; i < block; i++) free(emu_f[i].stack);\n"
    "  return 0;\n"
    "}\n";

typedef struct emu_case {
  kind k;
  int R, N;
  bool bf16;
  char text[8192];
  hlo_module_ir *m;
  kernel *kern;
  const hlo_op *ret;
} emu_case;

/* Appends `src` to `o` with the dynamic shared memory declaration made a
 * static array (one block runs at a time). */
static void put_host_source(strbuf *o, const char *src) {
  static const char dyn[] = "extern __shared__ __align__(16) unsigned char hlo_smem[];";
  for (const char *p = src;;) {
    const char *q = strstr(p, dyn);
    if (!q) {
      sb_puts(o, p);
      return;
    }
    sb_printf(o, "%.*s", (int)(q - p), p);
    sb_puts(o, "static __align__(16) unsigned char hlo_smem[1 << 18];");
    p = q + sizeof dyn - 1;
  }
}

typedef int (*emu_run_fn)(int, unsigned, unsigned, long long, void **);

/* Runs case c (kernel index i of the unit) and compares with the
 * interpreter; returns whether it passed. */
static bool emu_check(emu_run_fn run, int i, emu_case *c, bool misalign) {
  const kernel *k = c->kern;
  size_t esz = c->bf16 ? 2 : 4;
  int nargs = c->k == K_ELEMENTWISE ? 4 : c->k == K_LAYERNORM ? 2 : 1;
  int64_t dims[4][2] = {{c->R, c->N}, {c->R, c->N}, {c->N, 0}, {c->N, c->R}};
  int ranks[4] = {2, 2, 1, 2};
  if (c->k == K_LAYERNORM) {
    dims[1][0] = c->N;
    ranks[1] = 1;
  }
  hlo_buffer_view args[4];
  void *data[4] = {0};
  for (int a = 0; a < nargs; a++) {
    size_t n = (size_t)dims[a][0] * (ranks[a] == 2 ? (size_t)dims[a][1] : 1);
    data[a] = malloc(n * esz + 1);
    for (size_t j = 0; j < n; j++) {
      double v = rnd();
      if (c->bf16) ((uint16_t *)data[a])[j] = f32_to_bf16((float)v);
      else ((float *)data[a])[j] = (float)v;
    }
    args[a] = (hlo_buffer_view){c->bf16 ? HLO_BF16 : HLO_F32, ranks[a], dims[a], data[a]};
  }
  hlo_buffer **want = NULL;
  int nwant = 0;
  hlo_status st = run_on(HLO_BACKEND_INTERP, c->text, args, nargs, &want, &nwant);
  CHECK(!st);
  hlo_status_free(st);
  /* the kernel's buffers: inputs are function arguments, outputs results */
  void *bufs[64] = {0}, *mem[64] = {0};
  bool ok = !st && k->num_inputs + k->num_outputs <= 64;
  for (uint32_t b = 0; ok && b < k->num_inputs + k->num_outputs; b++) {
    bool in = b < k->num_inputs;
    const kernel_buffer *kb = in ? &k->inputs[b] : &k->outputs[b - k->num_inputs].buf;
    size_t n = 1;
    for (uint32_t d = 0; d < kb->rank; d++) n *= (size_t)kb->dims[d];
    mem[b] = aligned_alloc(256, (n * esz + 255) / 256 * 256 + 256);
    bufs[b] = (char *)mem[b] + (misalign ? esz : 0);
    if (in) {
      ok = kb->value && !kb->value->def && (int)kb->value->index < nargs;
      if (ok) memcpy(bufs[b], data[kb->value->index], n * esz);
    } else {
      memset(bufs[b], 0xAB, n * esz);
    }
  }
  cuda_geometry g = cuda_launch_geometry(k, 0);
  if (ok) run(i, g.grid_x < 3 ? g.grid_x : 3, g.block_x, (long long)kernel_num_tiles(k), bufs);
  for (uint32_t o = 0; ok && o < k->num_outputs; o++) {
    int r = -1;
    for (uint32_t j = 0; j < c->ret->num_operands; j++)
      if (c->ret->operands[j] == k->outputs[o].buf.value) r = (int)j;
    ok = r >= 0 && r < nwant;
    if (!ok) break;
    const void *pw = hlo_buffer_data(want[r]);
    size_t n = hlo_buffer_nbytes(want[r]) / esz;
    double dd = 0, ww = 0, dmax = 0, wmax = 0;
    for (size_t j = 0; j < n; j++) {
      double gv = value_at(bufs[k->num_inputs + o], j, c->bf16), wv = value_at(pw, j, c->bf16);
      dd += (gv - wv) * (gv - wv);
      ww += wv * wv;
      if (!(fabs(gv - wv) <= dmax)) dmax = fabs(gv - wv);
      if (fabs(wv) > wmax) wmax = fabs(wv);
    }
    double err = c->bf16 ? (wmax > 0 ? dmax / wmax : dmax) : (ww > 0 ? sqrt(dd / ww) : sqrt(dd));
    bool pass = err == err && err <= (c->bf16 ? 2e-2 : 1e-4);
    if (!pass)
      fprintf(stderr, "emulated %s_%s_%dx%d%s result %d: error %.3g\n", kind_names[c->k],
              c->bf16 ? "bf16" : "f32", c->R, c->N, misalign ? " (misaligned)" : "", r, err);
    ok = ok && pass;
  }
  for (int r = 0; want && r < nwant; r++) hlo_buffer_destroy(want[r]);
  free(want);
  for (uint32_t b = 0; b < 64; b++) free(mem[b]);
  for (int a = 0; a < nargs; a++) free(data[a]);
  return ok;
}

/* Whether this binary is built with AddressSanitizer or ThreadSanitizer
 * (whose shadow stacks the fibers' swapcontext would confuse). */
static bool under_sanitizer(void) {
#if defined(__SANITIZE_ADDRESS__) || defined(__SANITIZE_THREAD__)
  return true;
#else
  return false;
#endif
}

TEST(emulated_on_the_host) {
  if (under_sanitizer()) {
    printf("emulated: skipped: fibers (swapcontext) under a sanitizer\n");
    return;
  }
  const char *cxx = getenv("CXX") ? getenv("CXX") : "c++";
  char cmd[2048];
  snprintf(cmd, sizeof cmd, "%s --version > /dev/null 2>&1", cxx);
  if (system(cmd) != 0) {
    printf("emulated: skipped: no C++ compiler (%s)\n", cxx);
    return;
  }
  static const int lens[] = {1, 3, 31, 32, 33, 127, 1024, 1025, 4096, 8192, 10000};
  static const int ew[][2] = {{3, 8}, {5, 7}, {7, 64}, {2, 1000}, {1, 4}, {3, 48}, {6, 2}};
  enum { MAXC = 128 };
  emu_case *cs = calloc(MAXC, sizeof *cs);
  uint32_t n = 0;
  for (size_t l = 0; l < sizeof lens / sizeof *lens; l++)
    for (int b = 0; b < 2; b++)
      for (int k = K_SOFTMAX; k <= K_MASKED && n < MAXC; k++)
        cs[n++] = (emu_case){.k = (kind)k, .R = lens[l] <= 1025 ? 5 : 3, .N = lens[l], .bf16 = b};
  for (size_t e = 0; e < sizeof ew / sizeof *ew; e++)
    for (int b = 0; b < 2 && n < MAXC; b++)
      cs[n++] = (emu_case){.k = K_ELEMENTWISE, .R = ew[e][0], .N = ew[e][1], .bf16 = b};
  kernel **ks = calloc(n, sizeof *ks);
  char (*names)[16] = calloc(n, sizeof *names);
  const char **np = calloc(n, sizeof *np);
  bool ok = true;
  for (uint32_t i = 0; i < n && ok; i++) {
    emu_case *c = &cs[i];
    program(c->k, c->R, c->N, c->bf16 ? "bf16" : "f32", c->text, sizeof c->text);
    hlo_status st = NULL;
    c->m = tl_parse_text("rows.mlir", c->text, 0, &st);
    const hlo_op *all[64];
    uint32_t nall = 0;
    for (const hlo_op *op = c->m ? c->m->funcs->body.block.first : NULL; op; op = op->next) {
      if (op->opcode == OP_FUNC_RETURN) c->ret = op;
      else if (nall < 64) all[nall++] = op;
    }
    if (c->ret)
      st = lower_fusion(all, nall, (const hlo_value *const *)c->ret->operands,
                        c->ret->num_operands, "k", &c->kern);
    if (st) hlo_status_print(st, stderr);
    hlo_status_free(st);
    ok = c->kern != NULL;
    if (ok) cuda_schedule(c->kern);
    ks[i] = c->kern;
    snprintf(names[i], sizeof names[i], "e%u", i);
    np[i] = names[i];
  }
  CHECK(ok);
  strbuf unit, src;
  sb_init(&unit);
  sb_init(&src);
  hlo_status st = ok ? cuda_emit_module((const kernel *const *)ks, np, n, &unit) : NULL;
  CHECK(!st);
  hlo_status_free(st);
  ok = ok && !st;
  sb_puts(&src, emu_prelude);
  sb_puts(&src, "\nnamespace gen {\n");
  put_host_source(&src, sb_cstr(&unit));
  sb_puts(&src, "}\nstatic void (*emu_table[])(gen::hlo_bufs, long long, long long) = {");
  for (uint32_t i = 0; i < n; i++) sb_printf(&src, "%sgen::e%u", i ? ", " : "", i);
  sb_puts(&src, "};\n");
  sb_puts(&src, emu_launcher);
  char dir[] = "/tmp/hlo_test_cuda_rows_XXXXXX";
  ok = ok && mkdtemp(dir) != NULL;
  char path[128], so[128];
  snprintf(path, sizeof path, "%s/emu.cpp", dir);
  snprintf(so, sizeof so, "%s/emu.so", dir);
  FILE *f = ok ? fopen(path, "w") : NULL;
  ok = f && fwrite(sb_cstr(&src), 1, src.len, f) == src.len;
  if (f) fclose(f);
  snprintf(cmd, sizeof cmd, "%s -O1 -std=c++17 -w -shared -fPIC -o %s %s", cxx, so, path);
  ok = ok && system(cmd) == 0;
  CHECK(ok);
  void *h = ok ? dlopen(so, RTLD_NOW | RTLD_LOCAL) : NULL;
  emu_run_fn run = h ? (emu_run_fn)(uintptr_t)dlsym(h, "emu_run") : NULL;
  CHECK(run != NULL);
  int passed = 0, failed = 0;
  for (uint32_t i = 0; run && i < n; i++) {
    bool pass = emu_check(run, (int)i, &cs[i], i % 2 == 1);
    CHECK(pass);
    passed += pass;
    failed += !pass;
  }
  printf("emulated: %d kernels (rows in registers, a block per row, chunks) on the host: %d "
         "passed, %d failed\n", (int)n, passed, failed);
  if (h) dlclose(h);
  unlink(so);
  unlink(path);
  rmdir(dir);
  for (uint32_t i = 0; i < n; i++) {
    kernel_destroy(cs[i].kern);
    module_free(cs[i].m);
  }
  sb_free(&unit);
  sb_free(&src);
  free(ks);
  free(names);
  free(np);
  free(cs);
}

TEST(summary) {
  if (gpu_state == 1)
    printf("gpu: %d cases, %d failed; worst error f32 %.3g (relative norm), bf16 %.3g (of the "
           "largest magnitude)\n", cases_run, cases_failed, worst_f32, worst_bf16);
  else
    printf("gpu: skipped: no GPU (the forms were checked)\n");
}

TEST_MAIN()
