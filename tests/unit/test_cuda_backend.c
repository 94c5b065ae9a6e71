/* test_cuda_backend.c — the CUDA backend (backend/cuda): its start, memory,
 * gemm through cuBLASLt and kernels compiled by NVRTC and launched.
 *
 * Everywhere (no GPU needed):
 *   - without the driver (HLO_CUDA_LIB=/nonexistent/libcuda.so.1, in a
 *     child process, as the start is once per process) backend_cuda fails
 *     with HLO_UNAVAILABLE naming the library, twice in a row; with the
 *     toolkit's stub libcuda (when installed) every symbol resolves and the
 *     start fails at cuInit, HLO_UNAVAILABLE;
 *   - backend_cuda in this process gives the same answer twice;
 *   - cuBLASLt loads (when installed) and reports a version;
 *   - the gemm's argument checks (an element type it lacks, sizes past
 *     int) and empty products need no device;
 *   - kernels lowered from small modules are scheduled, printed as CUDA C
 *     and compiled by NVRTC for sm_90 (when NVRTC is installed);
 *   - on the mock driver (tests/unit/mock/libcuda_mock.h, in a child
 *     process: device memory is host memory, launches are recorded, not
 *     run) the backend's own logic: the start and the target text, memory
 *     round trips (from another thread too: the context is made current
 *     there), gemm with k = 0 (C zeroed, its padding kept)
 *     and a short row stride, compile (stats, dump, objects, reload from
 *     them, a corrupt object compiled again), each launch's grid, block,
 *     shared bytes, buffers and tile range as emit_cuda.h says; the graph
 *     slots (a capture records launches without running them, in relaxed
 *     mode; each cuGraphLaunch replays them; a synchronisation inside a
 *     capture invalidates it: graph_end fails); and with
 *     HLO_NVRTC_LIB=/nonexistent the start fails naming NVRTC;
 *   - the mock defines every function of CUDA_DRIVER_FUNCTIONS and
 *     CUDA_DRIVER_OPTIONAL_FUNCTIONS;
 * With a device (backend_cuda succeeds), else "skipped: REASON":
 *   - alloc/copy round trips of several sizes (host -> device -> device ->
 *     host);
 *   - gemm against a host reference in f64 for every type (f32, f64,
 *     bf16 and f16 to themselves and to f32), plain, transposed (each and
 *     both), batched, strided (heads inside rows, padded rows), k = 0, and
 *     a larger one; C's padding left untouched;
 *   - kernels (elementwise with two outputs, a row reduction, softmax, bf16
 *     and i32 elementwise) compiled, launched and compared with host
 *     references; compiling again from the module's objects loads the
 *     cubin (stats), the dump folder gets kernels.cu, a bad index is an
 *     error.
 * The runtime's CUDA graphs (replay, conditional nodes), on a fake graph
 * backend, the mock driver and a device: test_cuda_graph_replay.c. */
#include <dlfcn.h>
#include <math.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>
#include "backend/backend.h"
#include "backend/cuda/cuda_api.h"
#include "backend/cuda/emit_cuda.h"
#include "backend/cuda/nvrtc.h"
#include "codegen/lower_fusion.h"
#include "support/float.h"
#include "mock/libcuda_mock.h"
#include "test.h"
#include "testlib.h"

static uint64_t rng = 12345;
static double rnd(void) { /* in [-1, 1) */
  rng = rng * 6364136223846793005ULL + 1442695040888963407ULL;
  return (double)(rng >> 11) / 9007199254740992.0 * 2 - 1;
}

/* ---- the start ---- */

/* The children: the start is once per process, so each case runs in a
 * fresh process, this binary run again (/proc/self/exe) with
 * HLO_CUDA_TEST_CHILD=CASE and HLO_CUDA_LIB set; a constructor runs the
 * case before main and exits with its status. */
static int run_child(const char *child_case, const char *lib, const char *nvrtc_lib) {
  fflush(stdout);
  fflush(stderr);
  pid_t pid = fork();
  if (pid < 0) return -1;
  if (pid == 0) {
    setenv("HLO_CUDA_TEST_CHILD", child_case, 1);
    setenv("HLO_CUDA_LIB", lib, 1);
    if (nvrtc_lib) setenv("HLO_NVRTC_LIB", nvrtc_lib, 1);
    char *argv[] = {(char *)"test_cuda_backend", NULL};
    execv("/proc/self/exe", argv);
    _exit(99);
  }
  int ws = 0;
  if (waitpid(pid, &ws, 0) != pid) return -1;
  return WIFEXITED(ws) ? WEXITSTATUS(ws) : 100 + (WIFSIGNALED(ws) ? WTERMSIG(ws) : 0);
}

/* backend_cuda twice: 0 when both calls failed with HLO_UNAVAILABLE, a
 * message holding every one of want[] (NULL-terminated) and not `bad` (if
 * given), the same message twice. */
static int start_fails(const char *const *want, const char *bad) {
  char first[1024] = "";
  int rc = 0;
  for (int i = 0; i < 2; i++) {
    const backend *be = (const backend *)1;
    hlo_status st = backend_cuda(&be);
    const char *msg = st ? hlo_status_message(st) : "";
    if (!st || hlo_status_code_of(st) != HLO_UNAVAILABLE || be) rc |= 1;
    for (const char *const *w = want; *w; w++)
      if (!strstr(msg, *w)) rc |= 2;
    if (bad && strstr(msg, bad)) rc |= 4;
    if (i == 0) snprintf(first, sizeof first, "%s", msg);
    else if (strcmp(first, msg)) rc |= 8;
    if (rc || i == 0)
      fprintf(rc ? stderr : stdout, "  child: call %d: %s\n", i, st ? msg : "(success)");
    hlo_status_free(st);
  }
  return rc;
}

static int mock_checks(const char *lib);

__attribute__((constructor)) static void child_main(void) {
  const char *c = getenv("HLO_CUDA_TEST_CHILD"), *lib = getenv("HLO_CUDA_LIB");
  if (!c || !lib) return;
  int rc = 99;
  if (!strcmp(c, "nodriver")) {
    const char *want[] = {lib, "NVIDIA driver", NULL};
    rc = start_fails(want, NULL);
  } else if (!strcmp(c, "stub")) {
    /* every symbol resolves ("lacks" would name a missing one); cuInit fails */
    const char *want[] = {"cuInit", NULL};
    rc = start_fails(want, "lacks");
  } else if (!strcmp(c, "nonvrtc")) {
    const char *want[] = {"NVRTC not found", NULL};
    rc = start_fails(want, NULL);
  } else if (!strcmp(c, "mock")) {
    rc = mock_checks(lib);
  }
  fflush(stdout);
  fflush(stderr);
  exit(rc); /* not _exit: LeakSanitizer checks the child too */
}

TEST(no_driver) {
  CHECK_EQ_INT(run_child("nodriver", "/nonexistent/libcuda.so.1", NULL), 0);
}

TEST(stub_driver) {
  const char *stub = "/usr/local/cuda/lib64/stubs/libcuda.so";
  if (access(stub, R_OK)) {
    printf("stub_driver: skipped: no %s\n", stub);
    return;
  }
  CHECK_EQ_INT(run_child("stub", stub, NULL), 0);
}

/* The backend in this process, or NULL after printing "skipped: reason". */
static const backend *device(const char *test) {
  const backend *be = NULL;
  hlo_status st = backend_cuda(&be);
  if (st) {
    printf("%s: skipped: %s\n", test, hlo_status_message(st));
    hlo_status_free(st);
    return NULL;
  }
  return be;
}

TEST(start_same_answer_twice) {
  const backend *a = NULL, *b = NULL;
  hlo_status s1 = backend_cuda(&a), s2 = backend_cuda(&b);
  CHECK(!s1 == !s2);
  CHECK(a == b);
  if (s1 && s2) {
    CHECK_EQ_INT(hlo_status_code_of(s1), HLO_UNAVAILABLE);
    CHECK_STR(hlo_status_message(s1), hlo_status_message(s2));
    printf("start_same_answer_twice: no device here: %s\n", hlo_status_message(s1));
  } else if (a) {
    CHECK_STR(a->name, "cuda");
    CHECK(a->device_memory);
    CHECK(a->alloc && a->free && a->copy && a->synchronize && a->compile && a->launch &&
          a->module_destroy && a->module_objects && a->module_source && a->gemm && a->target);
    CHECK(!a->launch_tiles && !a->gemm_epilogue);
    const char *t = a->target(NULL);
    CHECK(t && !strncmp(t, "cuda sm_", 8) && strstr(t, "nvrtc"));
    CHECK(t == a->target(NULL));
    printf("start_same_answer_twice: %s\n", t);
  }
  hlo_status_free(s1);
  hlo_status_free(s2);
}

TEST(cublaslt_loads) {
  const cublaslt_api *lt = NULL;
  hlo_status st = cublaslt_load(&lt);
  if (st) {
    CHECK_EQ_INT(hlo_status_code_of(st), HLO_UNAVAILABLE);
    CHECK(strstr(hlo_status_message(st), "libcublasLt") != NULL);
    printf("cublaslt_loads: skipped: %s\n", hlo_status_message(st));
    hlo_status_free(st);
    return;
  }
  size_t v = lt->cublasLtGetVersion();
  CHECK(v >= 110000);
  printf("cublaslt_loads: %s, version %zu\n", lt->path, v);
  const cublaslt_api *again = NULL;
  CHECK(!cublaslt_load(&again) && again == lt);
}

TEST(result_text_without_driver) {
  char buf[64];
  CHECK_STR(cuda_result_text(NULL, 2, buf, sizeof buf), "CUresult 2");
}

/* ---- gemm: the checks before any device work ---- */

TEST(gemm_argument_checks) {
  backend_gemm g = {.dtype = HLO_I32, .c_dtype = HLO_I32, .batch = 1, .m = 2, .n = 2, .k = 2};
  hlo_status st = cuda_gemm(&g, NULL, NULL, NULL);
  CHECK(st && hlo_status_code_of(st) == HLO_UNIMPLEMENTED);
  hlo_status_free(st);
  g = (backend_gemm){.dtype = HLO_F32, .c_dtype = HLO_BF16, .batch = 1, .m = 2, .n = 2, .k = 2};
  st = cuda_gemm(&g, NULL, NULL, NULL);
  CHECK(st && hlo_status_code_of(st) == HLO_UNIMPLEMENTED);
  hlo_status_free(st);
  g = (backend_gemm){.dtype = HLO_F32, .c_dtype = HLO_F32, .batch = 1, .m = 1LL << 31, .n = 2,
                     .k = 2};
  st = cuda_gemm(&g, NULL, NULL, NULL);
  CHECK(st && hlo_status_code_of(st) == HLO_INVALID_ARGUMENT);
  hlo_status_free(st);
  g.m = 2, g.lda = 3LL << 30;
  st = cuda_gemm(&g, NULL, NULL, NULL);
  CHECK(st && hlo_status_code_of(st) == HLO_INVALID_ARGUMENT);
  hlo_status_free(st);
  /* an empty product does nothing, device or not */
  g = (backend_gemm){.dtype = HLO_BF16, .c_dtype = HLO_F32, .batch = 0, .m = 2, .n = 2, .k = 2};
  CHECK(!cuda_gemm(&g, NULL, NULL, NULL));
  g.batch = 3, g.n = 0;
  CHECK(!cuda_gemm(&g, NULL, NULL, NULL));
}

/* ---- memory ---- */

/* Round trips of several sizes, host -> device -> device -> host. */
static void check_memory(const backend *be) {
  const size_t sizes[] = {1, 3, 4096, 65537, (1u << 20) + 7, 48u << 20};
  for (size_t s = 0; s < sizeof sizes / sizeof *sizes; s++) {
    size_t n = sizes[s];
    unsigned char *h = malloc(n), *back = malloc(n);
    void *d1 = be->alloc(n), *d2 = be->alloc(n);
    CHECK(h && back && d1 && d2);
    if (!h || !back || !d1 || !d2) {
      free(h), free(back), be->free(d1), be->free(d2);
      continue;
    }
    for (size_t i = 0; i < n; i++) h[i] = (unsigned char)(i * 131 + s * 7 + 1);
    memset(back, 0, n);
    CHECK(!be->copy(d1, h, n));
    CHECK(!be->copy(d2, d1, n)); /* device to device */
    CHECK(!be->copy(back, d2, n));
    CHECK(!be->synchronize());
    CHECK(!memcmp(h, back, n));
    be->free(d1);
    be->free(d2);
    free(h);
    free(back);
  }
  void *z = be->alloc(0);
  CHECK(z != NULL);
  be->free(z);
  be->free(NULL);
  CHECK(!be->copy(NULL, NULL, 0));
}

/* From a thread of its own: the context is made current there too. */
static void *memory_on_a_thread(void *arg) {
  const backend *be = arg;
  int x = 42, y = 0;
  void *d = be->alloc(sizeof x);
  bool ok = d && !be->copy(d, &x, sizeof x) && !be->copy(&y, d, sizeof y) && y == 42;
  be->free(d);
  return ok ? arg : NULL;
}

static void check_memory_threads(const backend *be) {
  pthread_t t;
  void *r = NULL;
  CHECK(!pthread_create(&t, NULL, memory_on_a_thread, (void *)be));
  CHECK(!pthread_join(t, &r));
  CHECK(r == be);
}

TEST(alloc_copy_round_trips) {
  const backend *be = device("alloc_copy_round_trips");
  if (!be) return;
  check_memory(be);
  check_memory_threads(be);
}

/* ---- gemm on the device ---- */

typedef struct gemm_form {
  const char *what;
  int64_t batch, m, n, k;
  bool ta, tb;
  int64_t lda, ldb, ldc, sa, sb, sc; /* 0: dense */
} gemm_form;

static double load_elt(const void *p, size_t i, hlo_dtype t) {
  switch (t) {
  case HLO_F32: return ((const float *)p)[i];
  case HLO_F64: return ((const double *)p)[i];
  case HLO_BF16: return bf16_to_f32(((const uint16_t *)p)[i]);
  case HLO_F16: return f16_to_f32(((const uint16_t *)p)[i]);
  default: return NAN;
  }
}

static void store_elt(void *p, size_t i, hlo_dtype t, double v) {
  switch (t) {
  case HLO_F32: ((float *)p)[i] = (float)v; break;
  case HLO_F64: ((double *)p)[i] = v; break;
  case HLO_BF16: ((uint16_t *)p)[i] = f32_to_bf16((float)v); break;
  case HLO_F16: ((uint16_t *)p)[i] = f32_to_f16((float)v); break;
  default: break;
  }
}

/* Runs one gemm of types (at, ct) and form f on the device and checks it;
 * returns the number of bad elements. */
static double gemm_worst; /* the largest error run_gemm saw (reset by its callers) */

static int run_gemm(const backend *be, hlo_dtype at, hlo_dtype ct, const gemm_form *f,
                    double tol) {
  int64_t lda = f->lda ? f->lda : (f->ta ? f->m : f->k);
  int64_t ldb = f->ldb ? f->ldb : (f->tb ? f->k : f->n);
  int64_t ldc = f->ldc ? f->ldc : f->n;
  int64_t sa = f->sa ? f->sa : f->m * f->k, sb = f->sb ? f->sb : f->k * f->n,
          sc = f->sc ? f->sc : f->m * f->n;
  int64_t rows_a = f->ta ? f->k : f->m, rows_b = f->tb ? f->n : f->k;
  /* elements each buffer spans (the last matrix's last row's end) */
  int64_t na = (f->batch - 1) * sa + (rows_a - 1) * lda + (f->ta ? f->m : f->k);
  int64_t nb = (f->batch - 1) * sb + (rows_b - 1) * ldb + (f->tb ? f->k : f->n);
  int64_t nc = (f->batch - 1) * sc + (f->m - 1) * ldc + f->n;
  if (na < 1) na = 1;
  if (nb < 1) nb = 1;
  size_t ae = hlo_dtype_size(at), ce = hlo_dtype_size(ct);
  void *a = malloc((size_t)na * ae), *b = malloc((size_t)nb * ae), *c = malloc((size_t)nc * ce),
       *c0 = malloc((size_t)nc * ce);
  void *da = be->alloc((size_t)na * ae), *db = be->alloc((size_t)nb * ae),
       *dc = be->alloc((size_t)nc * ce);
  int bad = 0;
  if (!a || !b || !c || !c0 || !da || !db || !dc) {
    bad = 1;
    goto done;
  }
  for (int64_t i = 0; i < na; i++) store_elt(a, (size_t)i, at, rnd());
  for (int64_t i = 0; i < nb; i++) store_elt(b, (size_t)i, at, rnd());
  memset(c0, 0x7b, (size_t)nc * ce); /* a sentinel: the padding must keep it */
  if (be->copy(da, a, (size_t)na * ae) || be->copy(db, b, (size_t)nb * ae) ||
      be->copy(dc, c0, (size_t)nc * ce)) {
    bad = 1;
    goto done;
  }
  backend_gemm g = {.dtype = at, .c_dtype = ct, .batch = f->batch, .m = f->m, .n = f->n,
                    .k = f->k, .trans_a = f->ta, .trans_b = f->tb, .lda = f->lda,
                    .ldb = f->ldb, .ldc = f->ldc, .batch_stride_a = f->sa,
                    .batch_stride_b = f->sb, .batch_stride_c = f->sc};
  hlo_status st = be->gemm(&g, da, db, dc);
  if (!st) st = be->synchronize();
  if (!st) st = be->copy(c, dc, (size_t)nc * ce);
  if (st) {
    fprintf(stderr, "gemm %s %s->%s: ", f->what, hlo_dtype_name(at), hlo_dtype_name(ct));
    hlo_status_print(st, stderr);
    hlo_status_free(st);
    bad = 1;
    goto done;
  }
  unsigned char *written = calloc((size_t)nc, 1);
  if (!written) {
    bad = 1;
    goto done;
  }
  double worst = 0;
  for (int64_t bt = 0; bt < f->batch; bt++)
    for (int64_t i = 0; i < f->m; i++)
      for (int64_t j = 0; j < f->n; j++) {
        double ref = 0, mag = 0;
        for (int64_t p = 0; p < f->k; p++) {
          double x = load_elt(a, (size_t)(bt * sa + (f->ta ? p * lda + i : i * lda + p)), at);
          double y = load_elt(b, (size_t)(bt * sb + (f->tb ? j * ldb + p : p * ldb + j)), at);
          ref += x * y;
          mag += fabs(x * y);
        }
        size_t ci = (size_t)(bt * sc + i * ldc + j);
        written[ci] = 1;
        double got = load_elt(c, ci, ct), err = fabs(got - ref) / (mag > 1e-30 ? mag : 1);
        if (err > worst) worst = err;
        if (!(err <= tol)) {
          if (bad < 5)
            fprintf(stderr, "gemm %s %s->%s: C[%lld][%lld][%lld] = %.9g, want %.9g\n", f->what,
                    hlo_dtype_name(at), hlo_dtype_name(ct), (long long)bt, (long long)i,
                    (long long)j, got, ref);
          bad++;
        }
      }
  for (int64_t i = 0; i < nc; i++)
    if (!written[i] && memcmp((char *)c + i * (int64_t)ce, (char *)c0 + i * (int64_t)ce, ce)) {
      if (bad < 5)
        fprintf(stderr, "gemm %s: padding element %lld overwritten\n", f->what, (long long)i);
      bad++;
    }
  free(written);
  if (worst > gemm_worst) gemm_worst = worst;
done:
  free(a), free(b), free(c), free(c0);
  be->free(da), be->free(db), be->free(dc);
  return bad;
}

static const gemm_form gemm_forms[] = {
    {"plain", 1, 37, 29, 53, false, false, 0, 0, 0, 0, 0, 0},
    {"trans_a", 1, 37, 29, 53, true, false, 0, 0, 0, 0, 0, 0},
    {"trans_b", 1, 37, 29, 53, false, true, 0, 0, 0, 0, 0, 0},
    {"trans_ab", 1, 17, 40, 33, true, true, 0, 0, 0, 0, 0, 0},
    {"batched", 3, 16, 24, 40, false, false, 0, 0, 0, 0, 0, 0},
    {"batched_t", 3, 16, 24, 40, true, true, 0, 0, 0, 0, 0, 0},
    /* [seq, heads, d] operands: heads is the batch, inside the rows */
    {"heads", 4, 20, 16, 8, false, false, 4 * 8, 4 * 16, 4 * 16, 8, 16, 16},
    {"padded", 2, 9, 11, 13, false, true, 13 + 3, 13 + 5, 11 + 2, 200, 300, 150},
    {"k0", 2, 5, 7, 0, false, false, 0, 0, 0, 0, 0, 0},
    {"k0_padded", 2, 5, 7, 0, false, false, 0, 0, 9, 0, 0, 50},
    {"vector", 1, 1, 1, 300, false, false, 0, 0, 0, 0, 0, 0},
    {"large", 1, 256, 384, 512, false, false, 0, 0, 0, 0, 0, 0},
};

TEST(gemm_every_type_and_form) {
  const backend *be = device("gemm_every_type_and_form");
  if (!be) return;
  static const struct {
    hlo_dtype a, c;
    double tol;
  } types[] = {
      {HLO_F32, HLO_F32, 1e-5},  {HLO_F64, HLO_F64, 1e-12}, {HLO_BF16, HLO_BF16, 2e-2},
      {HLO_BF16, HLO_F32, 1e-5}, {HLO_F16, HLO_F16, 2e-3},  {HLO_F16, HLO_F32, 1e-5},
  };
  for (size_t t = 0; t < sizeof types / sizeof *types; t++) {
    gemm_worst = 0;
    for (size_t f = 0; f < sizeof gemm_forms / sizeof *gemm_forms; f++) {
      int bad = run_gemm(be, types[t].a, types[t].c, &gemm_forms[f], types[t].tol);
      CHECK_EQ_INT(bad, 0);
    }
    printf("gemm %s->%s: %zu forms, worst error %.3g of sum |a b| (tolerance %g)\n",
           hlo_dtype_name(types[t].a), hlo_dtype_name(types[t].c),
           sizeof gemm_forms / sizeof *gemm_forms, gemm_worst, types[t].tol);
  }
  /* the same shape again: the cached plan */
  CHECK_EQ_INT(run_gemm(be, HLO_F32, HLO_F32, &gemm_forms[0], 1e-5), 0);
}

/* ---- kernels ---- */

/* A module's entry lowered to one kernel: every op but the return, the
 * return's operands the outputs. */
static kernel *lower_all(hlo_module_ir *m, const char *name) {
  hlo_func *f = module_entry(m, NULL);
  const hlo_op *ops[64];
  uint32_t n = 0;
  const hlo_op *ret = f->body.block.last;
  for (const hlo_op *op = f->body.block.first; op && op != ret && n < 64; op = op->next)
    ops[n++] = op;
  kernel *k = NULL;
  hlo_status st = lower_fusion(ops, n, (const hlo_value *const *)ret->operands, ret->num_operands,
                               name, &k);
  if (st) {
    hlo_status_print(st, stderr);
    hlo_status_free(st);
    return NULL;
  }
  return k;
}

enum { EW_R = 64, EW_C = 300, RED_R = 33, RED_C = 1000, SM_R = 16, SM_C = 2000, N1 = 1000,
       NI = 4096 };

static const char *const programs[] = {
    /* 0: elementwise, two outputs */
    "func.func @main(%x: tensor<64x300xf32>, %y: tensor<64x300xf32>) -> (tensor<64x300xf32>, "
    "tensor<64x300xf32>) {\n"
    "  %0 = stablehlo.multiply %x, %y : tensor<64x300xf32>\n"
    "  %1 = stablehlo.add %0, %x : tensor<64x300xf32>\n"
    "  %2 = stablehlo.tanh %1 : tensor<64x300xf32>\n"
    "  %3 = stablehlo.subtract %x, %y : tensor<64x300xf32>\n"
    "  return %2, %3 : tensor<64x300xf32>, tensor<64x300xf32>\n}\n",
    /* 1: row reduction */
    "func.func @main(%x: tensor<33x1000xf32>) -> tensor<33xf32> {\n"
    "  %0 = stablehlo.multiply %x, %x : tensor<33x1000xf32>\n"
    "  %z = stablehlo.constant dense<0.0> : tensor<f32>\n"
    "  %1 = stablehlo.reduce(%0 init: %z) applies stablehlo.add across dimensions = [1] : "
    "(tensor<33x1000xf32>, tensor<f32>) -> tensor<33xf32>\n"
    "  return %1 : tensor<33xf32>\n}\n",
    /* 2: softmax (three stages) */
    "func.func @main(%x: tensor<16x2000xf32>) -> tensor<16x2000xf32> {\n"
    "  %ninf = stablehlo.constant dense<0xFF800000> : tensor<f32>\n"
    "  %zero = stablehlo.constant dense<0.0> : tensor<f32>\n"
    "  %m = stablehlo.reduce(%x init: %ninf) applies stablehlo.maximum across dimensions = [1] : "
    "(tensor<16x2000xf32>, tensor<f32>) -> tensor<16xf32>\n"
    "  %mb = stablehlo.broadcast_in_dim %m, dims = [0] : (tensor<16xf32>) -> tensor<16x2000xf32>\n"
    "  %d = stablehlo.subtract %x, %mb : tensor<16x2000xf32>\n"
    "  %e = stablehlo.exponential %d : tensor<16x2000xf32>\n"
    "  %s = stablehlo.reduce(%e init: %zero) applies stablehlo.add across dimensions = [1] : "
    "(tensor<16x2000xf32>, tensor<f32>) -> tensor<16xf32>\n"
    "  %sb = stablehlo.broadcast_in_dim %s, dims = [0] : (tensor<16xf32>) -> tensor<16x2000xf32>\n"
    "  %y = stablehlo.divide %e, %sb : tensor<16x2000xf32>\n"
    "  return %y : tensor<16x2000xf32>\n}\n",
    /* 3: bf16 elementwise (each op rounded to bf16) */
    "func.func @main(%a: tensor<1000xbf16>, %b: tensor<1000xbf16>) -> tensor<1000xbf16> {\n"
    "  %0 = stablehlo.multiply %a, %b : tensor<1000xbf16>\n"
    "  %1 = stablehlo.add %0, %a : tensor<1000xbf16>\n"
    "  return %1 : tensor<1000xbf16>\n}\n",
    /* 4: i32 compare and select */
    "func.func @main(%x: tensor<4096xi32>) -> tensor<4096xi32> {\n"
    "  %z = stablehlo.constant dense<0> : tensor<4096xi32>\n"
    "  %t = stablehlo.constant dense<3> : tensor<4096xi32>\n"
    "  %p = stablehlo.compare GT, %x, %z : (tensor<4096xi32>, tensor<4096xi32>) -> "
    "tensor<4096xi1>\n"
    "  %m = stablehlo.multiply %x, %t : tensor<4096xi32>\n"
    "  %n = stablehlo.negate %x : tensor<4096xi32>\n"
    "  %s = stablehlo.select %p, %m, %n : tensor<4096xi1>, tensor<4096xi32>\n"
    "  return %s : tensor<4096xi32>\n}\n",
};
enum { NPROG = sizeof programs / sizeof *programs };

/* Parses and lowers every program (ms[i], ks[i]); false if one fails. */
static bool lower_programs(hlo_source *srcs, hlo_module_ir **ms, kernel **ks) {
  bool ok = true;
  for (int i = 0; i < NPROG; i++) {
    srcs[i] = tl_source("cuda_kernels", programs[i]);
    hlo_status st = NULL;
    ms[i] = tl_parse_piece(&srcs[i], 0, strlen(programs[i]), &st);
    if (!ms[i]) {
      hlo_status_print(st, stderr);
      hlo_status_free(st);
      ok = false;
      continue;
    }
    char name[32];
    snprintf(name, sizeof name, "prog%d", i);
    ks[i] = lower_all(ms[i], name);
    if (!ks[i]) ok = false;
  }
  return ok;
}

static void free_programs(hlo_module_ir **ms, kernel **ks) {
  for (int i = 0; i < NPROG; i++) {
    kernel_destroy(ks[i]);
    module_free(ms[i]);
  }
}

/* Without a device: schedule, print, NVRTC for sm_90. */
TEST(emit_and_nvrtc_without_device) {
  hlo_source srcs[NPROG];
  hlo_module_ir *ms[NPROG] = {0};
  kernel *ks[NPROG] = {0};
  bool lowered = lower_programs(srcs, ms, ks);
  CHECK(lowered);
  hlo_status st = nvrtc_load();
  if (st) {
    printf("emit_and_nvrtc_without_device: skipped: %s\n", hlo_status_message(st));
    hlo_status_free(st);
    free_programs(ms, ks);
    return;
  }
  if (!lowered) {
    free_programs(ms, ks);
    return;
  }
  kernel copies[NPROG];
  const kernel *cptr[NPROG];
  const char *names[NPROG] = {"k0", "k1", "k2", "k3", "k4"};
  for (int i = 0; i < NPROG; i++) {
    copies[i] = *ks[i];
    cuda_schedule(&copies[i]);
    cptr[i] = &copies[i];
    cuda_geometry g = cuda_launch_geometry(&copies[i], 132);
    CHECK(g.grid_x >= 1 && g.block_x >= 1 && g.block_x <= 1024);
    CHECK(!kernel_check_schedule(&copies[i]));
  }
  strbuf src;
  sb_init(&src);
  st = cuda_emit_module(cptr, names, NPROG, &src);
  CHECK(!st);
  if (st) {
    hlo_status_print(st, stderr);
    hlo_status_free(st);
  } else {
    const char *text = sb_cstr(&src);
    for (int i = 0; i < NPROG; i++) {
      char want[64];
      snprintf(want, sizeof want, "void %s(", names[i]);
      CHECK(strstr(text, want) != NULL);
    }
    void *cubin = NULL;
    size_t len = 0;
    st = nvrtc_compile(text, "test_kernels.cu", 90, &cubin, &len);
    CHECK(!st);
    if (st) {
      hlo_status_print(st, stderr);
      hlo_status_free(st);
    } else {
      CHECK(len > 64 && !memcmp(cubin, "\177ELF", 4));
      printf("emit_and_nvrtc_without_device: %zu bytes of CUDA C, %zu bytes of cubin (%s)\n",
             src.len, len, nvrtc_version_text());
    }
    free(cubin);
  }
  sb_free(&src);
  free_programs(ms, ks);
}

/* Launches kernel i of mod on host inputs (sizes in bytes), reading the
 * outputs back; false on an error (printed). */
static bool run_kernel(const backend *be, backend_module *mod, uint32_t index,
                       const void *const *in, const size_t *in_bytes, int nin, void *const *out,
                       const size_t *out_bytes, int nout) {
  void *d[8] = {0};
  bool ok = true;
  for (int i = 0; i < nin + nout && ok; i++) {
    d[i] = be->alloc(i < nin ? in_bytes[i] : out_bytes[i - nin]);
    ok = d[i] != NULL;
  }
  hlo_status st = NULL;
  for (int i = 0; i < nin && ok && !st; i++) st = be->copy(d[i], in[i], in_bytes[i]);
  if (ok && !st) st = be->launch(mod, index, d);
  if (ok && !st) st = be->synchronize();
  for (int i = 0; i < nout && ok && !st; i++) st = be->copy(out[i], d[nin + i], out_bytes[i]);
  if (st) {
    hlo_status_print(st, stderr);
    hlo_status_free(st);
    ok = false;
  }
  for (int i = 0; i < nin + nout; i++) be->free(d[i]);
  return ok;
}

/* Checks every kernel of mod against host references; the number of bad
 * elements. */
static int check_kernels(const backend *be, backend_module *mod) {
  int bad = 0;
  /* 0: tanh(x*y + x), x - y */
  {
    enum { N = EW_R * EW_C };
    float *x = malloc(N * 4), *y = malloc(N * 4), *o0 = malloc(N * 4), *o1 = malloc(N * 4);
    for (int i = 0; i < N; i++) x[i] = (float)(rnd() * 3), y[i] = (float)(rnd() * 3);
    const void *in[] = {x, y};
    void *out[] = {o0, o1};
    size_t ib[] = {N * 4, N * 4}, ob[] = {N * 4, N * 4};
    if (!run_kernel(be, mod, 0, in, ib, 2, out, ob, 2)) bad++;
    else
      for (int i = 0; i < N; i++) {
        double ref = tanh((double)(x[i] * y[i] + x[i]));
        if (!(fabs(o0[i] - ref) <= 1e-5 * fabs(ref) + 1e-6) || o1[i] != x[i] - y[i]) {
          if (bad < 5)
            fprintf(stderr, "kernel 0 [%d]: %g %g, want %g %g\n", i, o0[i], o1[i], ref,
                    x[i] - y[i]);
          bad++;
        }
      }
    free(x), free(y), free(o0), free(o1);
  }
  /* 1: sum of squares of each row */
  {
    float *x = malloc(RED_R * RED_C * 4), rows[RED_R];
    for (int i = 0; i < RED_R * RED_C; i++) x[i] = (float)rnd();
    const void *in[] = {x};
    void *out[] = {rows};
    size_t ib[] = {RED_R * RED_C * 4}, ob[] = {sizeof rows};
    if (!run_kernel(be, mod, 1, in, ib, 1, out, ob, 1)) bad++;
    else
      for (int r = 0; r < RED_R; r++) {
        double ref = 0;
        for (int c = 0; c < RED_C; c++) ref += (double)(x[r * RED_C + c] * x[r * RED_C + c]);
        if (!(fabs(rows[r] - ref) <= 1e-5 * ref)) {
          if (bad < 5) fprintf(stderr, "kernel 1 row %d: %g, want %g\n", r, rows[r], ref);
          bad++;
        }
      }
    free(x);
  }
  /* 2: softmax of each row */
  {
    enum { N = SM_R * SM_C };
    float *x = malloc(N * 4), *y = malloc(N * 4);
    for (int i = 0; i < N; i++) x[i] = (float)(rnd() * 10);
    const void *in[] = {x};
    void *out[] = {y};
    size_t ib[] = {N * 4}, ob[] = {N * 4};
    if (!run_kernel(be, mod, 2, in, ib, 1, out, ob, 1)) bad++;
    else
      for (int r = 0; r < SM_R; r++) {
        double mx = -INFINITY, sum = 0;
        for (int c = 0; c < SM_C; c++) mx = fmax(mx, x[r * SM_C + c]);
        for (int c = 0; c < SM_C; c++) sum += exp(x[r * SM_C + c] - mx);
        for (int c = 0; c < SM_C; c++) {
          double ref = exp(x[r * SM_C + c] - mx) / sum;
          if (!(fabs(y[r * SM_C + c] - ref) <= 1e-5 * ref + 1e-12)) {
            if (bad < 5)
              fprintf(stderr, "kernel 2 [%d][%d]: %g, want %g\n", r, c, y[r * SM_C + c], ref);
            bad++;
          }
        }
      }
    free(x), free(y);
  }
  /* 3: bf16 a*b + a, rounded after each op */
  {
    uint16_t a[N1], b[N1], o[N1];
    for (int i = 0; i < N1; i++)
      a[i] = f32_to_bf16((float)(rnd() * 4)), b[i] = f32_to_bf16((float)(rnd() * 4));
    const void *in[] = {a, b};
    void *out[] = {o};
    size_t ib[] = {sizeof a, sizeof b}, ob[] = {sizeof o};
    if (!run_kernel(be, mod, 3, in, ib, 2, out, ob, 1)) bad++;
    else
      for (int i = 0; i < N1; i++) {
        uint16_t t = f32_to_bf16(bf16_to_f32(a[i]) * bf16_to_f32(b[i]));
        uint16_t ref = f32_to_bf16(bf16_to_f32(t) + bf16_to_f32(a[i]));
        if (o[i] != ref) {
          if (bad < 5) fprintf(stderr, "kernel 3 [%d]: %#x, want %#x\n", i, o[i], ref);
          bad++;
        }
      }
  }
  /* 4: x > 0 ? 3x : -x on i32 */
  {
    int32_t *x = malloc(NI * 4), *o = malloc(NI * 4);
    for (int i = 0; i < NI; i++) x[i] = (int32_t)(rnd() * 1e6);
    x[0] = 0, x[1] = INT32_MIN, x[2] = INT32_MAX;
    const void *in[] = {x};
    void *out[] = {o};
    size_t ib[] = {NI * 4}, ob[] = {NI * 4};
    if (!run_kernel(be, mod, 4, in, ib, 1, out, ob, 1)) bad++;
    else
      for (int i = 0; i < NI; i++) {
        int32_t ref = x[i] > 0 ? (int32_t)((uint32_t)x[i] * 3u) : (int32_t)(0u - (uint32_t)x[i]);
        if (o[i] != ref) {
          if (bad < 5) fprintf(stderr, "kernel 4 [%d]: %d, want %d\n", i, o[i], ref);
          bad++;
        }
      }
    free(x), free(o);
  }
  return bad;
}

/* The device tests' own references and plumbing (run_gemm, check_kernels),
 * checked on the CPU backend, which has the same table: a device failure
 * then points at the CUDA backend, not at the test. */
TEST(references_on_the_cpu_backend) {
  const backend *cpu = backend_cpu();
  static const struct {
    hlo_dtype a, c;
    double tol;
  } types[] = {{HLO_F32, HLO_F32, 1e-5}, {HLO_F64, HLO_F64, 1e-12}, {HLO_BF16, HLO_BF16, 2e-2},
               {HLO_BF16, HLO_F32, 1e-5}};
  for (size_t t = 0; t < sizeof types / sizeof *types; t++) {
    gemm_worst = 0;
    for (size_t f = 0; f < sizeof gemm_forms / sizeof *gemm_forms; f++)
      CHECK_EQ_INT(run_gemm(cpu, types[t].a, types[t].c, &gemm_forms[f], types[t].tol), 0);
    printf("references_on_the_cpu_backend: gemm %s->%s worst error %.3g of sum |a b|\n",
           hlo_dtype_name(types[t].a), hlo_dtype_name(types[t].c), gemm_worst);
  }
  hlo_source srcs[NPROG];
  hlo_module_ir *ms[NPROG] = {0};
  kernel *ks[NPROG] = {0};
  bool lowered = lower_programs(srcs, ms, ks);
  CHECK(lowered);
  char dir[] = "/tmp/hlo-cuda-cpuref-XXXXXX";
  CHECK(mkdtemp(dir) != NULL);
  backend_compile_options o = {.cache_root = dir};
  backend_module *mod = NULL;
  hlo_status st = lowered ? cpu->compile((const kernel *const *)ks, NPROG, &o, &mod) : NULL;
  if (st && hlo_status_code_of(st) == HLO_UNAVAILABLE) {
    printf("references_on_the_cpu_backend: kernels skipped: %s\n", hlo_status_message(st));
  } else if (lowered) {
    CHECK(!st && mod);
    if (mod) CHECK_EQ_INT(check_kernels(cpu, mod), 0);
  }
  hlo_status_free(st);
  cpu->module_destroy(mod);
  char cmd[300];
  snprintf(cmd, sizeof cmd, "rm -rf '%s'", dir);
  CHECK(system(cmd) == 0);
  free_programs(ms, ks);
}

/* The NVRTC units NPROG kernels compile in (cuda_backend.c, unit_count: a
 * unit a core, or HLO_NUM_THREADS, of 4 kernels at least). */
static int expected_units(int nk) {
  long cores = sysconf(_SC_NPROCESSORS_ONLN);
  const char *nt = getenv("HLO_NUM_THREADS");
  if (nt && atoi(nt) > 0) cores = atoi(nt);
  int units = (nk + 3) / 4 < cores ? (nk + 3) / 4 : (int)cores;
  return units < 1 ? 1 : units;
}

TEST(kernels_compile_launch_and_reload) {
  const backend *be = device("kernels_compile_launch_and_reload");
  if (!be) return;
  hlo_source srcs[NPROG];
  hlo_module_ir *ms[NPROG] = {0};
  kernel *ks[NPROG] = {0};
  if (!lower_programs(srcs, ms, ks)) {
    CHECK(false);
    free_programs(ms, ks);
    return;
  }
  char dir[] = "/tmp/hlo-cuda-test-XXXXXX";
  CHECK(mkdtemp(dir) != NULL);
  backend_compile_stats stats = {0};
  backend_compile_options o = {.dump_dir = dir, .cache_root = "off", .stats = &stats};
  backend_module *mod = NULL, *mod2 = NULL;
  hlo_status st = be->compile((const kernel *const *)ks, NPROG, &o, &mod);
  CHECK(!st);
  if (st) {
    hlo_status_print(st, stderr);
    hlo_status_free(st);
    goto done;
  }
  int units = expected_units(NPROG);
  CHECK_EQ_INT(stats.units, units);
  CHECK_EQ_INT(stats.compiled, units);
  CHECK_EQ_INT(stats.from_objects, 0);
  printf("kernels: emit %.1f ms, nvrtc + load %.1f ms\n", stats.emit_ms, stats.cc_ms);
  const char *text = be->module_source(mod);
  CHECK(text && strstr(text, "k0(") && strstr(text, "k4("));
  char path[300];
  snprintf(path, sizeof path, "%s/kernels.cu", dir);
  size_t len = 0;
  char *dumped = tl_read_file(path, &len);
  CHECK(dumped && text && !strcmp(dumped, text));
  free(dumped);
  unlink(path);
  CHECK_EQ_INT(check_kernels(be, mod), 0);
  /* a bad index */
  void *none[1] = {0};
  hlo_status e = be->launch(mod, NPROG, none);
  CHECK(e && hlo_status_code_of(e) == HLO_INVALID_ARGUMENT);
  hlo_status_free(e);
  /* again from the module's object: loaded, not compiled */
  const backend_object *objs = NULL;
  uint32_t nobj = be->module_objects(mod, &objs);
  CHECK_EQ_INT(nobj, units);
  if (nobj == (uint32_t)units) {
    for (uint32_t u = 0; u < nobj; u++) {
      CHECK_EQ_INT(strlen(objs[u].key), 32);
      CHECK(objs[u].len > 0 && !memcmp(objs[u].bytes, "\177ELF", 4));
    }
    backend_compile_stats s2 = {0};
    backend_compile_options o2 = {.cache_root = "off", .objects = objs, .num_objects = nobj,
                                  .stats = &s2};
    st = be->compile((const kernel *const *)ks, NPROG, &o2, &mod2);
    CHECK(!st);
    hlo_status_free(st);
    CHECK_EQ_INT(s2.from_objects, units);
    CHECK_EQ_INT(s2.compiled, 0);
    if (mod2) CHECK_EQ_INT(check_kernels(be, mod2), 0);
    /* a corrupt object is ignored: compiled again */
    backend_module *mod3 = NULL;
    backend_object bad = objs[0];
    unsigned char junk[64];
    memset(junk, 0x5a, sizeof junk);
    bad.bytes = junk, bad.len = sizeof junk;
    backend_compile_stats s3 = {0};
    backend_compile_options o3 = {.cache_root = "off", .objects = &bad, .num_objects = 1,
                                  .stats = &s3};
    st = be->compile((const kernel *const *)ks, NPROG, &o3, &mod3);
    CHECK(!st);
    hlo_status_free(st);
    CHECK_EQ_INT(s3.compiled, units);
    be->module_destroy(mod3);
  }
done:
  be->module_destroy(mod);
  be->module_destroy(mod2);
  rmdir(dir);
  free_programs(ms, ks);
}

/* ---- the mock driver: the backend's own logic, no GPU needed ---- */

#define MOCK(type, name) (*(type *)dlsym(mock, #name))

/* The graph slots on the mock driver: a capture records launches without
 * running them (relaxed mode), the graph replays them once per launch, a
 * synchronisation inside a capture invalidates it (graph_end fails, no
 * graph). */
static void mock_graph_slots(const backend *be, void *mock, backend_module *mod) {
  void *bufs[CUDA_MAX_BUFS] = {0};
  for (int b = 0; b < 8; b++) bufs[b] = (void *)(uintptr_t)(0x20000 + b);
  int before = MOCK(int, mock_launches), faults = MOCK(int, mock_capture_faults);
  hlo_status st = be->graph_begin();
  CHECK(!st);
  hlo_status_free(st);
  CHECK_EQ_INT(MOCK(int, mock_capture_mode), CU_STREAM_CAPTURE_MODE_RELAXED);
  CHECK(!be->launch(mod, 0, bufs));
  CHECK(!be->launch(mod, 1, bufs));
  CHECK_EQ_INT(MOCK(int, mock_launches), before); /* recorded, not run */
  void *g = NULL;
  st = be->graph_end(&g);
  CHECK(!st && g);
  hlo_status_free(st);
  CHECK_EQ_INT(MOCK(int, mock_graphs), 1);
  for (int i = 0; i < 2 && g; i++) CHECK(!be->graph_launch(g));
  CHECK_EQ_INT(MOCK(int, mock_launches), before + 4);
  CHECK_EQ_INT(MOCK(int, mock_kernel), 1);
  CHECK(((void **)dlsym(mock, "mock_bufs"))[0] == bufs[0]);
  CHECK_EQ_INT(MOCK(int, mock_graph_launches), 2);
  be->graph_destroy(g);
  be->graph_destroy(NULL);
  CHECK_EQ_INT(MOCK(int, mock_graphs), 0);
  CHECK_EQ_INT(MOCK(int, mock_capture_faults), faults);
  /* a synchronisation inside a capture */
  st = be->graph_begin();
  CHECK(!st);
  hlo_status_free(st);
  st = be->synchronize();
  CHECK(st != NULL);
  hlo_status_free(st);
  g = (void *)1;
  st = be->graph_end(&g);
  CHECK(st && !g);
  CHECK(st && strstr(hlo_status_message(st), "cuStreamEndCapture"));
  hlo_status_free(st);
  CHECK_EQ_INT(MOCK(int, mock_graphs), 0);
  CHECK_EQ_INT(MOCK(int, mock_capture_faults), faults + 1);
  st = be->graph_launch(NULL);
  CHECK(st && hlo_status_code_of(st) == HLO_INVALID_ARGUMENT);
  hlo_status_free(st);
}


/* Checks, in the child whose HLO_CUDA_LIB is the mock: the start, memory
 * (from another thread too), gemm's device-free paths (k = 0: C zeroed
 * around its padding; a short row stride), compile (stats, dump,
 * objects, reload, a corrupt object), and each launch's recorded
 * geometry, buffers and tile range against emit_cuda.h's. Exit status:
 * 0 passed, 1 failed, 3 skipped. */
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
  const char *t = be->target(NULL);
  CHECK(!strncmp(t, "cuda sm_90 Mock GPU nvrtc ", 26));
  check_memory(be);
  check_memory_threads(be);
  /* gemm: k = 0 zeroes C and leaves its padding; other paths need cuBLASLt */
  CHECK_EQ_INT(run_gemm(be, HLO_F32, HLO_F32, &gemm_forms[8], 0), 0);
  CHECK_EQ_INT(run_gemm(be, HLO_BF16, HLO_F32, &gemm_forms[9], 0), 0);
  CHECK_EQ_INT(run_gemm(be, HLO_F16, HLO_F16, &gemm_forms[9], 0), 0);
  backend_gemm g = {.dtype = HLO_F32, .c_dtype = HLO_F32, .batch = 1, .m = 4, .n = 4, .k = 4,
                    .lda = 3};
  st = be->gemm(&g, NULL, NULL, NULL);
  CHECK(st && hlo_status_code_of(st) == HLO_INVALID_ARGUMENT);
  hlo_status_free(st);
  /* kernels */
  hlo_source srcs[NPROG];
  hlo_module_ir *ms[NPROG] = {0};
  kernel *ks[NPROG] = {0};
  bool lowered = lower_programs(srcs, ms, ks);
  CHECK(lowered);
  char dir[] = "/tmp/hlo-cuda-mock-XXXXXX";
  CHECK(mkdtemp(dir) != NULL);
  backend_compile_stats stats = {0};
  backend_compile_options o = {.dump_dir = dir, .cache_root = "off", .stats = &stats};
  backend_module *mod = NULL, *mod2 = NULL, *mod3 = NULL;
  st = lowered ? be->compile((const kernel *const *)ks, NPROG, &o, &mod) : NULL;
  CHECK(!st && mod);
  if (st) hlo_status_print(st, stderr);
  hlo_status_free(st);
  /* NPROG kernels in one NVRTC unit a core, 4 kernels a unit at least
   * (cuda_backend.c, unit_count), compiled in parallel, a module each */
  long cores = sysconf(_SC_NPROCESSORS_ONLN);
  const char *nt = getenv("HLO_NUM_THREADS");
  if (nt && atoi(nt) > 0) cores = atoi(nt);
  int units = (NPROG + 3) / 4 < cores ? (NPROG + 3) / 4 : (int)cores;
  if (units < 1) units = 1;
  if (mod) {
    CHECK_EQ_INT(stats.units, units);
    CHECK_EQ_INT(stats.compiled, units);
    CHECK_EQ_INT(MOCK(int, mock_modules), units);
    char path[300];
    snprintf(path, sizeof path, "%s/kernels.cu", dir);
    size_t len = 0;
    char *dumped = tl_read_file(path, &len);
    CHECK(dumped && !strcmp(dumped, be->module_source(mod)));
    free(dumped);
    unlink(path);
    for (uint32_t i = 0; i < NPROG; i++) {
      kernel c = *ks[i];
      cuda_schedule(&c);
      cuda_geometry geo = cuda_launch_geometry(&c, 132);
      void *bufs[8];
      uint32_t nb = c.num_inputs + c.num_outputs;
      for (uint32_t b = 0; b < nb; b++) bufs[b] = (void *)(uintptr_t)(0x10000 * (i + 1) + b);
      int before = MOCK(int, mock_launches);
      CHECK(!be->launch(mod, i, bufs));
      CHECK_EQ_INT(MOCK(int, mock_launches), before + 1);
      CHECK_EQ_INT(MOCK(int, mock_kernel), i);
      CHECK_EQ_INT(MOCK(unsigned, mock_grid), geo.grid_x);
      CHECK_EQ_INT(MOCK(unsigned, mock_block), geo.block_x);
      CHECK_EQ_INT(MOCK(unsigned, mock_shared), geo.shared_bytes);
      CHECK_EQ_INT(MOCK(long long, mock_tile_begin), 0);
      CHECK_EQ_INT(MOCK(long long, mock_tile_end), kernel_num_tiles(&c));
      void **rec = (void **)dlsym(mock, "mock_bufs");
      for (uint32_t b = 0; b < CUDA_MAX_BUFS; b++) CHECK(rec[b] == (b < nb ? bufs[b] : NULL));
      if (geo.shared_bytes > 48 * 1024)
        CHECK_EQ_INT(((int *)dlsym(mock, "mock_func_shared"))[i], geo.shared_bytes);
      printf("mock_driver: kernel %u: grid %u, block %u, %u shared bytes, %lld tiles\n", i,
             geo.grid_x, geo.block_x, geo.shared_bytes, (long long)kernel_num_tiles(&c));
    }
    hlo_status e = be->launch(mod, NPROG, NULL);
    CHECK(e && hlo_status_code_of(e) == HLO_INVALID_ARGUMENT);
    hlo_status_free(e);
    mock_graph_slots(be, mock, mod);
    const backend_object *objs = NULL;
    CHECK_EQ_INT(be->module_objects(mod, &objs), units);
    backend_compile_stats s2 = {0};
    backend_compile_options o2 = {.cache_root = "off", .objects = objs,
                                  .num_objects = (uint32_t)units, .stats = &s2};
    st = be->compile((const kernel *const *)ks, NPROG, &o2, &mod2);
    CHECK(!st);
    hlo_status_free(st);
    CHECK_EQ_INT(s2.from_objects, units);
    CHECK_EQ_INT(s2.compiled, 0);
    backend_object bad = objs[0];
    unsigned char junk[64];
    memset(junk, 0x5a, sizeof junk);
    bad.bytes = junk, bad.len = sizeof junk;
    backend_compile_stats s3 = {0};
    backend_compile_options o3 = {.cache_root = "off", .objects = &bad, .num_objects = 1,
                                  .stats = &s3};
    st = be->compile((const kernel *const *)ks, NPROG, &o3, &mod3);
    CHECK(!st);
    hlo_status_free(st);
    CHECK_EQ_INT(s3.from_objects, 0);
    CHECK_EQ_INT(s3.compiled, units);
    CHECK_EQ_INT(MOCK(int, mock_modules), 3 * units);
  }
  be->module_destroy(mod);
  be->module_destroy(mod2);
  be->module_destroy(mod3);
  CHECK_EQ_INT(MOCK(int, mock_modules), 0);
  /* an empty module */
  st = be->compile(NULL, 0, NULL, &mod);
  CHECK(!st && mod);
  hlo_status_free(st);
  const backend_object *none = NULL;
  if (mod) CHECK_EQ_INT(be->module_objects(mod, &none), 0);
  be->module_destroy(mod);
  rmdir(dir);
  free_programs(ms, ks);
  dlclose(mock);
  return test_failed_checks ? 1 : 0;
}

/* The names of every driver function the backend resolves (cuda_api.h). */
static const char *const driver_names[] = {
#define DRIVER_NAME(name, ret, params) #name,
    CUDA_DRIVER_FUNCTIONS(DRIVER_NAME) CUDA_DRIVER_OPTIONAL_FUNCTIONS(DRIVER_NAME)
#undef DRIVER_NAME
};

/* The mock defines every driver function, required and optional (a
 * missing one would fail the start, or turn conditional nodes off). */
TEST(mock_defines_every_driver_function) {
  char lib[4096];
  bool have = cuda_mock_path("mock_exports", lib, sizeof lib);
  CHECK(have);
  void *mock = have ? dlopen(lib, RTLD_NOW | RTLD_LOCAL) : NULL;
  CHECK(!have || mock);
  if (!mock) return;
  int lacks = 0;
  for (size_t i = 0; i < sizeof driver_names / sizeof *driver_names; i++)
    if (!dlsym(mock, driver_names[i])) {
      fprintf(stderr, "the mock driver lacks %s\n", driver_names[i]);
      lacks++;
    }
  CHECK_EQ_INT(lacks, 0);
  dlclose(mock);
}

TEST(mock_driver) {
  char lib[4096];
  bool have = cuda_mock_path("mock_driver", lib, sizeof lib);
  CHECK(have);
  if (!have) return;
  int rc = run_child("mock", lib, NULL);
  CHECK(rc == 0 || rc == 3);
  /* the driver and a device, no NVRTC */
  CHECK_EQ_INT(run_child("nonvrtc", lib, "/nonexistent/libnvrtc.so"), 0);
}

TEST_MAIN()
