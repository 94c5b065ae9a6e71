/* gemm_rate — GFLOP/s of a BLAS library's matrix product on given shapes.
 *
 *   gemm_rate [--lib NAME|PATH] [--threads T] [--dtype f32|f64|bf16|bf16bf16]
 *             [--min-ms MS] [--max-gflop G] [--verbose] [--shapes M,N,K[,batch][:tt]...]
 *
 * Prints one line per shape: the shape, the element type, the library, its
 * thread count, the median time of one call (all `batch` matrices), the
 * GFLOP/s (2*M*N*K*batch / time) and the same by CPU time ("cpu": threads x
 * flops / process CPU seconds, which other processes' load does not lower:
 * on a busy machine compare libraries by it on one thread). `tt` is two letters, n or t, for op(A)
 * and op(B) as in backend_gemm (src/backend/backend.h): row-major C (M x N)
 * = op(A) (M x K) * op(B) (K x N), A stored K x M when `t`, B stored N x K
 * when `t`. Shapes may be given as several arguments or in one, separated by
 * spaces. Without --shapes: the f32 shapes of ../shared/perf and the square
 * 1024 case (bench/BLAS.md lists them).
 *
 * --lib chooses what is timed; every library is loaded with dlopen from its
 * Debian path (RTLD_LOCAL), one library a process, so that no other
 * library's threads spin beside it (bench/blas/measure.sh runs one process
 * a library and thread count), with RTLD_DEEPBIND so that its symbols bind
 * to itself and not to the BLAS that gemm_rate links for `hlo`:
 *   hlo               (default) cpu_gemm_ex, the CPU backend's own gemm
 *                     (backend/cpu/gemm.h: the libraries hlo links, as hlo
 *                     calls them, HLO_NUM_THREADS=T); bf16 too
 *   ref               the reference BLAS (libblas3)
 *   openblas-pthread, openblas-openmp, openblas-serial
 *   blis-pthread, blis-openmp, blis-serial
 *   onednn            dnnl_sgemm / dnnl_gemm_bf16bf16f32 (libdnnl2)
 *   onednn-matmul     oneDNN's matmul primitive (one primitive a shape,
 *                     created before timing; batch and transposes as strides)
 *   PATH              any .so exporting cblas_sgemm / cblas_dgemm
 *   NAME=PATH         NAME's kind (e.g. onednn) loaded from PATH
 * dtype bf16: bf16 A and B, f32 C (cblas_sbgemm where the library has it,
 * dnnl_gemm_bf16bf16f32, matmul); bf16bf16: bf16 C (matmul only).
 *
 * --min-ms: how long to keep sampling a shape (default 200; at least 3
 * samples of >= 2 ms each, the median is printed); --max-gflop: skip shapes
 * of more work than that (for the reference BLAS); --verbose adds the
 * implementation oneDNN's matmul chose (e.g. brg:avx512_core_amx).
 *
 * Each result is checked against a double-precision sum on sampled entries
 * (exit 1 and "WRONG" on a mismatch). Exit 2 on bad usage, 3 when the
 * library cannot be loaded or lacks the element type. */
#include <dlfcn.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <oneapi/dnnl/dnnl.h>
#include "backend/backend.h"
#include "backend/cpu/cpu.h"
#include "backend/cpu/gemm.h"

enum { ROW_MAJOR = 101, NO_TRANS = 111, TRANS = 112 };
enum dt { DT_F32, DT_F64, DT_BF16, DT_BF16BF16 };
static const char *const dt_names[] = {"f32", "f64", "bf16", "bf16bf16"};

typedef void (*sgemm_fn)(int, int, int, int, int, int, float, const float *, int, const float *,
                         int, float, float *, int);
typedef void (*dgemm_fn)(int, int, int, int, int, int, double, const double *, int,
                         const double *, int, double, double *, int);
typedef void (*sbgemm_fn)(int, int, int, int, int, int, float, const uint16_t *, int,
                          const uint16_t *, int, float, float *, int);
typedef dnnl_status_t (*dnnl_sgemm_fn)(char, char, dnnl_dim_t, dnnl_dim_t, dnnl_dim_t, float,
                                       const float *, dnnl_dim_t, const float *, dnnl_dim_t, float,
                                       float *, dnnl_dim_t);
typedef dnnl_status_t (*dnnl_bf16_fn)(char, char, dnnl_dim_t, dnnl_dim_t, dnnl_dim_t, float,
                                      const uint16_t *, dnnl_dim_t, const uint16_t *, dnnl_dim_t,
                                      float, float *, dnnl_dim_t);

typedef struct shape {
  long m, n, k, batch;
  int ta, tb;
} shape;

/* ------------------------------------------------------------ libraries */

#define LIBDIR "/usr/lib/x86_64-linux-gnu/"
static const struct {
  const char *name, *path;
} known[] = {
    {"ref", LIBDIR "blas/libblas.so.3"},
    {"openblas-pthread", LIBDIR "openblas-pthread/libopenblas.so.0"},
    {"openblas-openmp", LIBDIR "openblas-openmp/libopenblas.so.0"},
    {"openblas-serial", LIBDIR "openblas-serial/libopenblas.so.0"},
    {"blis-pthread", LIBDIR "blis-pthread/libblis.so.4"},
    {"blis-openmp", LIBDIR "blis-openmp/libblis.so.4"},
    {"blis-serial", LIBDIR "blis-serial/libblis.so.4"},
    {"onednn", LIBDIR "libdnnl.so.2"},
    {"onednn-matmul", LIBDIR "libdnnl.so.2"},
};

typedef struct lib {
  const char *name;
  void *h;
  int is_hlo, is_matmul;
  sgemm_fn sgemm;
  dgemm_fn dgemm;
  sbgemm_fn sbgemm;
  dnnl_sgemm_fn dnnl_sgemm;
  dnnl_bf16_fn dnnl_bf16;
  /* matmul primitive */
  dnnl_engine_t eng;
  dnnl_stream_t strm;
  dnnl_primitive_t prim;
  dnnl_memory_t mem[3];
  char impl[128];
} lib;


static void *sym(lib *l, const char *name) { return dlsym(l->h, name); }

static int lib_open(lib *l, const char *name, int threads) {
  memset(l, 0, sizeof *l);
  l->name = name;
  if (!strcmp(name, "hlo")) {
    char v[32];
    snprintf(v, sizeof v, "%d", threads);
    setenv("HLO_NUM_THREADS", v, 1);
    l->is_hlo = 1;
    return 0;
  }
  const char *path = name, *eq = strchr(name, '=');
  for (size_t i = 0; i < sizeof known / sizeof known[0]; i++)
    if (!strcmp(name, known[i].name)) path = known[i].path;
  static char kind[64];
  if (eq && (size_t)(eq - name) < sizeof kind) { /* NAME=PATH: NAME's kind, loaded from PATH */
    memcpy(kind, name, (size_t)(eq - name));
    kind[eq - name] = 0;
    name = l->name = kind;
    path = eq + 1;
  }
  /* DEEPBIND: the library's own symbols first (the reference CBLAS calls
   * sgemm_, which would otherwise bind to the BLAS hlo itself links) */
  l->h = dlopen(path, RTLD_NOW | RTLD_LOCAL | RTLD_DEEPBIND);
  if (!l->h) {
    fprintf(stderr, "gemm_rate: cannot load %s: %s\n", path, dlerror());
    return -1;
  }
  l->is_matmul = !strcmp(name, "onednn-matmul");
  if (!strncmp(name, "onednn", 6)) {
    *(void **)&l->dnnl_sgemm = sym(l, "dnnl_sgemm");
    *(void **)&l->dnnl_bf16 = sym(l, "dnnl_gemm_bf16bf16f32");
  } else {
    *(void **)&l->sgemm = sym(l, "cblas_sgemm");
    *(void **)&l->dgemm = sym(l, "cblas_dgemm");
    *(void **)&l->sbgemm = sym(l, "cblas_sbgemm");
  }
  /* thread count: the library's own setter, else OpenMP's (the
   * environment variables measure.sh sets say the same) */
  void (*set_int)(int) = NULL;
  void (*set_long)(long) = NULL;
  *(void **)&set_int = sym(l, "openblas_set_num_threads");
  if (set_int) set_int(threads);
  *(void **)&set_long = sym(l, "bli_thread_set_num_threads");
  if (set_long) set_long(threads);
  *(void **)&set_int = sym(l, "omp_set_num_threads");
  if (set_int) set_int(threads);
  return 0;
}

/* --------------------------------------------------------------- bf16 */

static uint16_t to_bf16(float f) {
  uint32_t u;
  memcpy(&u, &f, 4);
  u += 0x7fff + ((u >> 16) & 1); /* round to nearest even (no NaNs here) */
  return (uint16_t)(u >> 16);
}
static float from_bf16(uint16_t h) {
  uint32_t u = (uint32_t)h << 16;
  float f;
  memcpy(&f, &u, 4);
  return f;
}

/* ------------------------------------------------------------ matmul */

static int matmul_setup(lib *l, const shape *s, enum dt dt, void *a, void *b, void *c) {
  dnnl_status_t st = dnnl_success;
  if (!l->eng) {
    dnnl_status_t (*eng_create)(dnnl_engine_t *, dnnl_engine_kind_t, size_t);
    dnnl_status_t (*strm_create)(dnnl_stream_t *, dnnl_engine_t, unsigned);
    *(void **)&eng_create = sym(l, "dnnl_engine_create");
    *(void **)&strm_create = sym(l, "dnnl_stream_create");
    if (!eng_create || !strm_create) return -1;
    st = eng_create(&l->eng, dnnl_cpu, 0);
    if (st == dnnl_success) st = strm_create(&l->strm, l->eng, dnnl_stream_default_flags);
    if (st != dnnl_success) return -1;
  }
  dnnl_status_t (*md_init)(dnnl_memory_desc_t *, int, const dnnl_dims_t, dnnl_data_type_t,
                           const dnnl_dims_t);
  dnnl_status_t (*mm_init)(dnnl_matmul_desc_t *, const dnnl_memory_desc_t *,
                           const dnnl_memory_desc_t *, const dnnl_memory_desc_t *,
                           const dnnl_memory_desc_t *);
  dnnl_status_t (*pd_create)(dnnl_primitive_desc_t *, const_dnnl_op_desc_t,
                             const_dnnl_primitive_attr_t, dnnl_engine_t,
                             const_dnnl_primitive_desc_t);
  dnnl_status_t (*prim_create)(dnnl_primitive_t *, const_dnnl_primitive_desc_t);
  dnnl_status_t (*mem_create)(dnnl_memory_t *, const dnnl_memory_desc_t *, dnnl_engine_t, void *);
  dnnl_status_t (*pd_query)(const_dnnl_primitive_desc_t, dnnl_query_t, int, void *);
  *(void **)&md_init = sym(l, "dnnl_memory_desc_init_by_strides");
  *(void **)&mm_init = sym(l, "dnnl_matmul_desc_init");
  *(void **)&pd_create = sym(l, "dnnl_primitive_desc_create");
  *(void **)&prim_create = sym(l, "dnnl_primitive_create");
  *(void **)&mem_create = sym(l, "dnnl_memory_create");
  *(void **)&pd_query = sym(l, "dnnl_primitive_desc_query");
  if (!md_init || !mm_init || !pd_create || !prim_create || !mem_create || !pd_query) return -1;
  dnnl_data_type_t in = dt == DT_F32 ? dnnl_f32 : dt == DT_F64 ? dnnl_f32 : dnnl_bf16;
  dnnl_data_type_t out = dt == DT_BF16BF16 ? dnnl_bf16 : dnnl_f32;
  if (dt == DT_F64) return -1;
  long m = s->m, n = s->n, k = s->k, bt = s->batch;
  dnnl_dims_t ad = {bt, m, k}, bd = {bt, k, n}, cd = {bt, m, n};
  dnnl_dims_t as = {m * k, s->ta ? 1 : k, s->ta ? m : 1};
  dnnl_dims_t bs = {k * n, s->tb ? 1 : n, s->tb ? k : 1};
  dnnl_dims_t cs = {m * n, n, 1};
  dnnl_memory_desc_t amd, bmd, cmd;
  dnnl_matmul_desc_t md;
  dnnl_primitive_desc_t pd = NULL;
  if (md_init(&amd, 3, ad, in, as) || md_init(&bmd, 3, bd, in, bs) ||
      md_init(&cmd, 3, cd, out, cs) || mm_init(&md, &amd, &bmd, NULL, &cmd) ||
      pd_create(&pd, &md, NULL, l->eng, NULL) || prim_create(&l->prim, pd) ||
      mem_create(&l->mem[0], &amd, l->eng, a) || mem_create(&l->mem[1], &bmd, l->eng, b) ||
      mem_create(&l->mem[2], &cmd, l->eng, c))
    return -1;
  const char *impl = NULL;
  if (pd_query(pd, dnnl_query_impl_info_str, 0, &impl) == dnnl_success && impl)
    snprintf(l->impl, sizeof l->impl, "%s", impl);
  return 0;
}

static void matmul_teardown(lib *l) {
  dnnl_status_t (*prim_destroy)(dnnl_primitive_t);
  dnnl_status_t (*mem_destroy)(dnnl_memory_t);
  *(void **)&prim_destroy = sym(l, "dnnl_primitive_destroy");
  *(void **)&mem_destroy = sym(l, "dnnl_memory_destroy");
  if (l->prim && prim_destroy) prim_destroy(l->prim);
  for (int i = 0; i < 3; i++)
    if (l->mem[i] && mem_destroy) mem_destroy(l->mem[i]);
  l->prim = NULL;
  memset(l->mem, 0, sizeof l->mem);
  l->impl[0] = 0;
}

/* ------------------------------------------------------------- one call */

/* Runs the whole batched product once; 0, or -1 when the library lacks it. */
static int call(lib *l, const shape *s, enum dt dt, const void *a, const void *b, void *c) {
  int m = (int)s->m, n = (int)s->n, k = (int)s->k;
  int lda = s->ta ? m : k, ldb = s->tb ? k : n;
  int ta = s->ta ? TRANS : NO_TRANS, tb = s->tb ? TRANS : NO_TRANS;
  size_t es = dt == DT_F64 ? 8 : dt == DT_F32 ? 4 : 2, ecs = dt == DT_F64 ? 8 : dt == DT_BF16BF16 ? 2 : 4;
  if (l->is_hlo) {
    backend_gemm g = {.batch = s->batch, .m = m, .n = n, .k = k, .trans_a = s->ta,
                      .trans_b = s->tb};
    hlo_dtype ct = dt == DT_F32 ? HLO_F32 : dt == DT_F64 ? HLO_F64 : dt == DT_BF16 ? HLO_F32 : HLO_BF16;
    g.dtype = dt == DT_F32 ? HLO_F32 : dt == DT_F64 ? HLO_F64 : HLO_BF16;
    hlo_status st = cpu_gemm_ex(&g, ct, a, b, c);
    if (st) {
      hlo_status_free(st);
      return -1;
    }
    return 0;
  }
  if (l->is_matmul) {
    dnnl_status_t (*exec)(const_dnnl_primitive_t, dnnl_stream_t, int, const dnnl_exec_arg_t *);
    dnnl_status_t (*wait)(dnnl_stream_t);
    *(void **)&exec = sym(l, "dnnl_primitive_execute");
    *(void **)&wait = sym(l, "dnnl_stream_wait");
    if (!l->prim || !exec || !wait) return -1;
    dnnl_exec_arg_t args[3] = {{DNNL_ARG_SRC, l->mem[0]},
                               {DNNL_ARG_WEIGHTS, l->mem[1]},
                               {DNNL_ARG_DST, l->mem[2]}};
    return exec(l->prim, l->strm, 3, args) || wait(l->strm) ? -1 : 0;
  }
  for (long i = 0; i < s->batch; i++) {
    const char *pa = (const char *)a + (size_t)i * (size_t)(m * k) * es;
    const char *pb = (const char *)b + (size_t)i * (size_t)(k * n) * es;
    char *pc = (char *)c + (size_t)i * (size_t)(m * n) * ecs;
    if (l->dnnl_sgemm && dt == DT_F32) {
      if (l->dnnl_sgemm(s->ta ? 'T' : 'N', s->tb ? 'T' : 'N', m, n, k, 1.0f, (const float *)pa,
                        lda, (const float *)pb, ldb, 0.0f, (float *)pc, n))
        return -1;
    } else if (l->dnnl_bf16 && dt == DT_BF16) {
      if (l->dnnl_bf16(s->ta ? 'T' : 'N', s->tb ? 'T' : 'N', m, n, k, 1.0f, (const uint16_t *)pa,
                       lda, (const uint16_t *)pb, ldb, 0.0f, (float *)pc, n))
        return -1;
    } else if (l->sgemm && dt == DT_F32) {
      l->sgemm(ROW_MAJOR, ta, tb, m, n, k, 1.0f, (const float *)pa, lda, (const float *)pb, ldb,
               0.0f, (float *)pc, n);
    } else if (l->dgemm && dt == DT_F64) {
      l->dgemm(ROW_MAJOR, ta, tb, m, n, k, 1.0, (const double *)pa, lda, (const double *)pb, ldb,
               0.0, (double *)pc, n);
    } else if (l->sbgemm && dt == DT_BF16) {
      l->sbgemm(ROW_MAJOR, ta, tb, m, n, k, 1.0f, (const uint16_t *)pa, lda,
                (const uint16_t *)pb, ldb, 0.0f, (float *)pc, n);
    } else {
      return -1;
    }
  }
  return 0;
}

/* --------------------------------------------------------- measuring */

static double clock_s(clockid_t id) {
  struct timespec t;
  clock_gettime(id, &t);
  return (double)t.tv_sec + 1e-9 * (double)t.tv_nsec;
}
static double now_s(void) { return clock_s(CLOCK_MONOTONIC); }

static double elem(const void *p, size_t i, enum dt dt, int is_c) {
  if (dt == DT_F64) return ((const double *)p)[i];
  if (dt == DT_F32 || (is_c && dt == DT_BF16)) return ((const float *)p)[i];
  return from_bf16(((const uint16_t *)p)[i]);
}

/* Compares 32 sampled entries of C with a double sum; the bound is relative
 * to sum |a||b| (the float sum's error grows with K; bf16 C adds 2^-8). */
static int check(const shape *s, enum dt dt, const void *a, const void *b, const void *c) {
  double tol = dt == DT_F64 ? 1e-12 : dt == DT_BF16BF16 ? 1e-2 : 1e-4;
  uint64_t x = 88172645463325252ull;
  for (int t = 0; t < 32; t++) {
    x ^= x << 13, x ^= x >> 7, x ^= x << 17;
    long bi = (long)(x % (uint64_t)s->batch), i = (long)((x >> 20) % (uint64_t)s->m),
         j = (long)((x >> 40) % (uint64_t)s->n);
    double sum = 0, mag = 0;
    for (long p = 0; p < s->k; p++) {
      size_t ia = (size_t)(bi * s->m * s->k) + (size_t)(s->ta ? p * s->m + i : i * s->k + p);
      size_t ib = (size_t)(bi * s->k * s->n) + (size_t)(s->tb ? j * s->k + p : p * s->n + j);
      double u = elem(a, ia, dt, 0), v = elem(b, ib, dt, 0);
      sum += u * v;
      mag += fabs(u * v);
    }
    double got = elem(c, (size_t)(bi * s->m * s->n + i * s->n + j), dt, 1);
    if (!(fabs(got - sum) <= tol * (mag + 1e-30))) {
      fprintf(stderr, "gemm_rate: C[%ld][%ld][%ld] = %g, expected %g\n", bi, i, j, got, sum);
      return -1;
    }
  }
  return 0;
}

static int cmp_double(const void *p, const void *q) {
  double a = *(const double *)p, b = *(const double *)q;
  return a < b ? -1 : a > b;
}

/* Times one shape; prints its line. Returns 0, 1 on a wrong result, 3 when
 * the library lacks the element type. */
static int measure(lib *l, const shape *s, enum dt dt, int threads, double min_ms,
                   double max_gflop, int verbose) {
  double flops = 2.0 * (double)s->m * (double)s->n * (double)s->k * (double)s->batch;
  if (flops * 1e-9 > max_gflop) {
    printf("%ld,%ld,%ld,%ld:%c%c  %-8s %-17s %d  (skipped: over --max-gflop)\n", s->m, s->n, s->k,
           s->batch, s->ta ? 't' : 'n', s->tb ? 't' : 'n', dt_names[dt], l->name, threads);
    return 0;
  }
  size_t es = dt == DT_F64 ? 8 : dt == DT_F32 ? 4 : 2, ecs = dt == DT_F64 ? 8 : dt == DT_BF16BF16 ? 2 : 4;
  size_t na = (size_t)(s->batch * s->m * s->k), nb = (size_t)(s->batch * s->k * s->n),
         nc = (size_t)(s->batch * s->m * s->n);
  void *a = aligned_alloc(64, (na * es + 63) / 64 * 64), *b = aligned_alloc(64, (nb * es + 63) / 64 * 64),
       *c = aligned_alloc(64, (nc * ecs + 63) / 64 * 64);
  if (!a || !b || !c) {
    fprintf(stderr, "gemm_rate: out of memory\n");
    exit(3);
  }
  uint64_t x = 0x9E3779B97F4A7C15ull;
  for (size_t i = 0; i < na + nb; i++) {
    x ^= x << 13, x ^= x >> 7, x ^= x << 17;
    double v = (double)(x >> 11) / 9007199254740992.0 * 2 - 1;
    void *p = i < na ? a : b;
    size_t j = i < na ? i : i - na;
    if (dt == DT_F64) ((double *)p)[j] = v;
    else if (dt == DT_F32) ((float *)p)[j] = (float)v;
    else ((uint16_t *)p)[j] = to_bf16((float)v);
  }
  memset(c, 0, nc * ecs);
  int rc = 0;
  if (l->is_matmul && matmul_setup(l, s, dt, a, b, c)) rc = 3;
  if (!rc && call(l, s, dt, a, b, c)) rc = 3;
  if (rc) {
    printf("%ld,%ld,%ld,%ld:%c%c  %-8s %-17s %d  (not available)\n", s->m, s->n, s->k, s->batch,
           s->ta ? 't' : 'n', s->tb ? 't' : 'n', dt_names[dt], l->name, threads);
    goto out;
  }
  if (check(s, dt, a, b, c)) rc = 1;
  /* calibrate: calls per sample so that one sample takes >= 2 ms */
  double t0 = now_s();
  (void)call(l, s, dt, a, b, c);
  double one = now_s() - t0;
  long inner = one >= 2e-3 ? 1 : (long)(2e-3 / (one > 1e-7 ? one : 1e-7)) + 1;
  double samples[64], cpu[64];
  int ns = 0;
  double start = now_s();
  while (ns < 64 && (ns < 3 || (now_s() - start) * 1e3 < min_ms)) {
    t0 = now_s();
    double c0 = clock_s(CLOCK_PROCESS_CPUTIME_ID);
    for (long r = 0; r < inner; r++) (void)call(l, s, dt, a, b, c);
    cpu[ns] = (clock_s(CLOCK_PROCESS_CPUTIME_ID) - c0) / (double)inner;
    samples[ns++] = (now_s() - t0) / (double)inner;
  }
  qsort(samples, (size_t)ns, sizeof samples[0], cmp_double);
  qsort(cpu, (size_t)ns, sizeof cpu[0], cmp_double);
  double med = samples[ns / 2];
  /* the rate by CPU time (threads x flops / CPU seconds): what the wall
   * rate would be with every thread on a core of its own all the time;
   * unlike the wall rate it does not fall when other processes take the
   * cores (it does when the library's threads spin) */
  double cpu_rate = flops * threads / cpu[ns / 2] * 1e-9;
  printf("%ld,%ld,%ld,%ld:%c%c  %-8s %-17s %d  %10.1f us  %8.2f GFLOP/s  %8.2f cpu%s%s%s\n", s->m,
         s->n, s->k, s->batch, s->ta ? 't' : 'n', s->tb ? 't' : 'n', dt_names[dt], l->name,
         threads, med * 1e6, flops / med * 1e-9, cpu_rate, rc ? "  WRONG" : "", verbose && l->impl[0] ? "  impl=" : "",
         verbose ? l->impl : "");
  fflush(stdout);
out:
  if (l->is_matmul) matmul_teardown(l);
  free(a);
  free(b);
  free(c);
  return rc;
}

/* ------------------------------------------------------------ shapes */

/* The f32 GEMMs of ../shared/perf (bench/blas/shapes.py on those programs,
 * with the im2col forms of cnn_sgd_step's convolutions) and 1024^3. */
static const char *default_shapes =
    "1024,1024,1024 512,1024,1024 1024,1024,64 1024,64,1024 "
    "256,256,256 256,128,256 256,704,256 256,256,704 256,256,32,8:nt 32,256,256,8:tt "
    "64,10,1568 10,1568,64:tn 64,1568,10:nt 50176,16,9 12544,32,144 12544,16,288 "
    "144,32,12544:tn 4096,512,512 4096,1536,512 4096,512,1536 4096,8192,512 4096,512,8192:nt "
    "1536,512,4096:tn 512,512,64,64:nt 64,512,512,64:nn 32,32,32 64,32,32:tn 16,16,8,8:nt";

static int parse_shape(const char *t, shape *s) {
  char tt[3] = "nn";
  long v[4] = {0, 0, 0, 1};
  int n = 0, pos = 0;
  while (n < 4) {
    char *end;
    long x = strtol(t + pos, &end, 10);
    if (end == t + pos || x <= 0 || x > (1L << 30)) return -1;
    v[n++] = x;
    pos = (int)(end - t);
    if (t[pos] != ',') break;
    pos++;
  }
  if (n < 3) return -1;
  if (t[pos] == ':') {
    if ((t[pos + 1] != 'n' && t[pos + 1] != 't') || (t[pos + 2] != 'n' && t[pos + 2] != 't') ||
        t[pos + 3])
      return -1;
    tt[0] = t[pos + 1], tt[1] = t[pos + 2];
  } else if (t[pos]) {
    return -1;
  }
  if ((double)v[0] * (double)v[1] * (double)v[3] > 4e9 || (double)v[0] * (double)v[2] * (double)v[3] > 4e9 ||
      (double)v[2] * (double)v[1] * (double)v[3] > 4e9)
    return -1;
  *s = (shape){v[0], v[1], v[2], v[3], tt[0] == 't', tt[1] == 't'};
  return 0;
}

static int usage(void) {
  fprintf(stderr, "usage: gemm_rate [--lib NAME|PATH] [--threads T] [--dtype f32|f64|bf16|bf16bf16]\n"
                  "                 [--min-ms MS] [--max-gflop G] [--verbose]\n"
                  "                 [--shapes M,N,K[,batch][:tt]...]\n");
  return 2;
}

int main(int argc, char **argv) {
  const char *libname = "hlo";
  int threads = 1, verbose = 0;
  double min_ms = 200, max_gflop = 1e30;
  enum dt dt = DT_F32;
  char *shapes = NULL;
  size_t shapes_len = 0;
  for (int i = 1; i < argc; i++) {
    const char *o = argv[i];
    if (!strcmp(o, "--lib") && i + 1 < argc) libname = argv[++i];
    else if (!strcmp(o, "--threads") && i + 1 < argc) threads = atoi(argv[++i]);
    else if (!strcmp(o, "--min-ms") && i + 1 < argc) min_ms = atof(argv[++i]);
    else if (!strcmp(o, "--max-gflop") && i + 1 < argc) max_gflop = atof(argv[++i]);
    else if (!strcmp(o, "--verbose")) verbose = 1;
    else if (!strcmp(o, "--dtype") && i + 1 < argc) {
      const char *d = argv[++i];
      int found = 0;
      for (int j = 0; j < 4; j++)
        if (!strcmp(d, dt_names[j])) dt = (enum dt)j, found = 1;
      if (!found) return usage();
    } else if (!strcmp(o, "--shapes")) {
      while (i + 1 < argc && strncmp(argv[i + 1], "--", 2)) {
        const char *t = argv[++i];
        size_t tl = strlen(t);
        char *ns = realloc(shapes, shapes_len + tl + 2);
        if (!ns) return 3;
        shapes = ns;
        memcpy(shapes + shapes_len, t, tl);
        shapes_len += tl;
        shapes[shapes_len++] = ' ';
        shapes[shapes_len] = 0;
      }
    } else {
      return usage();
    }
  }
  if (threads < 1 || threads > 1024) return usage();
  if (!shapes) shapes = strdup(default_shapes);
  if (!shapes) return 3;
  lib l;
  if (lib_open(&l, libname, threads)) return 3;
  int worst = 0;
  for (char *save = NULL, *t = strtok_r(shapes, " \t\n", &save); t;
       t = strtok_r(NULL, " \t\n", &save)) {
    shape s;
    if (parse_shape(t, &s)) {
      fprintf(stderr, "gemm_rate: bad shape '%s' (M,N,K[,batch][:tt], tt in nn nt tn tt)\n", t);
      return 2;
    }
    int rc = measure(&l, &s, dt, threads, min_ms, max_gflop, verbose);
    if (rc == 1 || (rc && !worst)) worst = rc;
  }
  free(shapes);
  return worst == 3 ? 0 : worst;
}
