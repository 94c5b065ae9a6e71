/* test_cuda_sort.c — the CUDA backend's sort (backend/cuda/cuda_sort.h),
 * with or without a GPU.
 *
 * Always:
 *   - the kernel's source compiles with NVRTC for sm_90 (printed
 *     "skipped: REASON" where libnvrtc does not load);
 *   - cuda_sort_takes answers cpu_sort_takes' answer; cuda_sort_plan's
 *     geometry: rows in shared memory up to 48 KiB or an H200's 227 KiB
 *     (one block for 6x20 and 24x8), longer ones in global scratch (one
 *     row a block), none past 1 GiB of scratch; cuda_sort's errors (a
 *     form not taken, no started backend);
 *   - the kernel on the CPU: the body (cuda_sort_source_body) after a host
 *     prelude (a kernel is a plain function; a block's threads are
 *     pthreads, SK_SYNC a pthread barrier; shared memory a malloc'd block
 *     with a guard after it) is compiled with the host C compiler ($HLO_CC
 *     or cc) into a temporary shared object, loaded with dlopen and run
 *     over an emulated grid (blocks of 1, 2, 3, 7 or 32 threads and fewer
 *     blocks than row groups, so every loop wraps), and its results must
 *     be bit for bit
 *       - cpu_sort's (itself checked against the interpreter by
 *         test_cpu_sort.c) on every key type (integers of every width and
 *         sub-byte ones, i1, f16, bf16, f32, f64, complex parts),
 *         ascending and descending, TOTALORDER and FLOAT, JAX's
 *         canonicalisation, NaNs of both signs and several payloads, -0 /
 *         +0, infinities, many ties, several keys (up to 8 words), ranks
 *         1-3 with every sorted dim, rows of 1, 2, 20, 33, 1000, 4096 and
 *         16384 (with the H200's shared memory limit), long rows in
 *         global scratch (5000, 20000, 100000), many rows, empty tensors,
 *         and 400 seeded random sorts; one element past every
 *         output stays untouched, every output element is written (the
 *         outputs start as garbage);
 *       - the interpreter's (hlo_executable_create, HLO_BACKEND_INTERP) on
 *         programs of JAX's comparator forms (sort_describe of the parsed
 *         op), NaNs in the rows.
 *   - through the mock driver (tests/unit/mock/libcuda_mock.h: memory is
 *     host memory; its cuLaunchKernel hands each launch to a hook that runs
 *     the emulated grid; the backend started on it in a child process): cuda_sort_takes loads
 *     the module once and opts into the device's shared memory, and every
 *     case runs through cuda_sort (one launch a case, none for an empty
 *     tensor; the geometry checked), bit for bit cpu_sort's again; and
 *     the interpreter-checked programs compiled for HLO_BACKEND_CUDA run
 *     through the runtime: the interpreter's results, and once the
 *     backend's slots are wired, one sort launch a run.
 * With a GPU (backend_cuda succeeds), else "skipped: no GPU (REASON)":
 *   the same cases through cuda_sort on device buffers, against the same
 *   results. HLO_TEST_SEED=N draws other random cases. */
#include <dlfcn.h>
#include <math.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>
#include "backend/backend.h"
#include "backend/cpu/sort.h"
#include "backend/cuda/cuda_api.h"
#include "backend/cuda/cuda_sort.h"
#include "backend/cuda/nvrtc.h"
#include "hlo/hlo.h"
#include "ir/element.h"
#include "runtime/runtime.h"
#include "mock/libcuda_mock.h"
#include "test.h"

static uint64_t rng = 0x5eed50f7ULL;
static uint64_t rnd64(void) {
  rng = rng * 6364136223846793005ULL + 1442695040888963407ULL;
  return rng >> 17;
}
static int64_t rand_in(int64_t lo, int64_t hi) {
  return lo + (int64_t)(rnd64() % (uint64_t)(hi - lo + 1));
}

#define H200_SHARED 232448 /* cuda_device_state.max_shared_optin on an H200 */

/* ------------------------------------------------------------ cases */

typedef struct scase {
  char what[96];
  backend_sort s;
  size_t shared_limit;
  int64_t n;                                    /* elements of each operand */
  void *in[BACKEND_SORT_MAX_OPERANDS];
  void *ref[BACKEND_SORT_MAX_OPERANDS];         /* cpu_sort's or the interpreter's */
  size_t es[BACKEND_SORT_MAX_OPERANDS];
} scase;

#define MAX_CASES 900
static scase cases[MAX_CASES];
static int num_cases, not_taken;

static hlo_dtype key_dtype_of(hlo_dtype op) {
  return op == HLO_C64 ? HLO_F32 : op == HLO_C128 ? HLO_F64 : op;
}

/* A key value of float type `part` into e: a pool with ties, +-0, +-inf,
 * and with `nans` NaNs of both signs, quiet and signaling, several
 * payloads (test_cpu_sort.c's). */
static void set_float(hlo_dtype part, void *e, bool nans) {
  static const double pool[] = {0.0, -0.0, 1.0, -1.0, 2.5, -2.5, INFINITY, -INFINITY, 1e-3, 7.0,
                                3.25, -1e-3};
  uint64_t rr = rnd64();
  if (nans && rr % 10 == 0) {
    int nb = dtype_bits(part), mb = part == HLO_F64 ? 52 : part == HLO_F32 ? 23
                                                      : part == HLO_F16 ? 10 : 7;
    uint64_t exp = ((((uint64_t)1 << (nb - 1 - mb)) - 1) << mb);
    uint64_t bits = exp | ((uint64_t)1 << (mb - 1)) | (rr / 10 % 3);
    if (rr / 30 % 2) bits |= (uint64_t)1 << (nb - 1);
    if (rr / 60 % 3 == 0) bits = (bits & ~((uint64_t)1 << (mb - 1))) | 1; /* signaling */
    elem_set_bits(part, e, 0, bits);
  } else {
    elem_set_f64(part, e, 0, pool[rr / 10 % (sizeof pool / sizeof *pool)]);
  }
}

/* Fills operand data (n elements of dt): random bytes, then key values
 * when it is a key operand (`key`): small ranges (ties), the type's
 * extremes now and then. */
static void fill(hlo_dtype dt, void *data, int64_t n, bool key, bool nans) {
  size_t es = hlo_dtype_size(dt);
  uint8_t *p = data;
  for (size_t i = 0; i < (size_t)n * es; i++) p[i] = (uint8_t)rnd64();
  if (!key) return;
  hlo_dtype_class c = dtype_class(dt);
  for (int64_t i = 0; i < n; i++) {
    uint64_t r = rnd64();
    if (c == HLO_CLASS_FLOAT || c == HLO_CLASS_COMPLEX) {
      hlo_dtype part = key_dtype_of(dt);
      int nparts = c == HLO_CLASS_COMPLEX ? 2 : 1;
      for (int q = 0; q < nparts; q++) set_float(part, p + (size_t)(i * nparts + q) * hlo_dtype_size(part), nans);
    } else if (c == HLO_CLASS_BOOL) {
      elem_set_i64(dt, data, i, (int64_t)(r % 2));
    } else if (r % 8 == 0) {
      if (c == HLO_CLASS_SINT && r % 16 == 0) elem_set_i64(dt, data, i, int_min(dt));
      else elem_set_u64(dt, data, i, int_max(dt));
    } else {
      elem_set_i64(dt, data, i, c == HLO_CLASS_SINT ? (int64_t)(r / 8 % 7) - 3 : (int64_t)(r / 8 % 7));
    }
  }
}

/* A key on operand op of `s` (its dtype set): its comparison type, a
 * part for complex operands, JAX's canonicalisation now and then. */
static backend_sort_key make_key(const backend_sort *s, uint32_t op, int cmp_pick, bool desc,
                                 bool canon) {
  backend_sort_key k;
  memset(&k, 0, sizeof k);
  k.operand = op;
  hlo_dtype t = s->dtypes[op];
  hlo_dtype_class c = dtype_class(t);
  k.part = c == HLO_CLASS_COMPLEX ? (int32_t)(rnd64() % 2) : -1;
  k.dtype = key_dtype_of(t);
  k.descending = desc;
  if (c == HLO_CLASS_SINT) k.cmp = BACKEND_SORT_SIGNED;
  else if (c == HLO_CLASS_UINT || c == HLO_CLASS_BOOL) k.cmp = BACKEND_SORT_UNSIGNED;
  else k.cmp = cmp_pick ? BACKEND_SORT_TOTALORDER : BACKEND_SORT_FLOAT;
  if (canon && (c == HLO_CLASS_FLOAT || c == HLO_CLASS_COMPLEX)) {
    /* select(x != x, qNaN, select(x == 0, +0, x)) */
    uint64_t qnan = k.dtype == HLO_F64 ? 0x7FF8000000000000ULL : k.dtype == HLO_F32 ? 0x7FC00000u
                    : k.dtype == HLO_F16 ? 0x7E00u : 0x7FC0u;
    k.ncanon = 2;
    k.canon[0].is_nan = true;
    k.canon[0].to_bits = qnan;
    k.canon[1].eq_value = 0.0;
    k.canon[1].to_bits = 0;
    if (rnd64() % 3 == 0) { /* another constant: 1.0 -> -inf */
      k.ncanon = 3;
      k.canon[2].eq_value = 1.0;
      elem_set_f64(k.dtype, &k.canon[2].to_bits, 0, -INFINITY);
    }
  }
  return k;
}

static void report(hlo_status st) {
  hlo_status_print(st, stderr);
  hlo_status_free(st);
}

/* Adds case `s` over operands filled here, the reference cpu_sort's. */
static void add_case(const char *what, const backend_sort *s, size_t limit, bool nans) {
  if (num_cases >= MAX_CASES) return;
  CHECK(cpu_sort_takes(s));
  cuda_sort_desc d;
  cuda_sort_geometry g;
  if (!cuda_sort_plan(s, limit, NULL, NULL, &d, &g)) {
    not_taken++;
    return;
  }
  scase *c = &cases[num_cases];
  memset(c, 0, sizeof *c);
  snprintf(c->what, sizeof c->what, "%s", what);
  c->s = *s;
  c->shared_limit = limit;
  c->n = 1;
  for (uint32_t i = 0; i < s->rank; i++) c->n *= s->dims[i];
  bool ok = true;
  for (uint32_t k = 0; k < s->num_operands; k++) {
    c->es[k] = hlo_dtype_size(s->dtypes[k]);
    c->in[k] = malloc((size_t)(c->n + 1) * c->es[k]);
    c->ref[k] = malloc((size_t)(c->n + 1) * c->es[k]);
    ok = ok && c->in[k] && c->ref[k];
    if (!c->in[k] || !c->ref[k]) continue;
    bool key = false;
    for (uint32_t j = 0; j < s->nkeys; j++) key = key || s->keys[j].operand == k;
    fill(s->dtypes[k], c->in[k], c->n, key, nans);
    memset(c->ref[k], 0x7f, (size_t)(c->n + 1) * c->es[k]);
  }
  CHECK(ok);
  hlo_status st = ok ? cpu_sort(s, c->in, c->ref) : NULL;
  CHECK(!st);
  if (st) report(st);
  num_cases++;
}

/* A sort of the given shape with operands `dts`, keys as listed. */
static backend_sort make_sort(uint32_t rank, const int64_t *dims, uint32_t dim, uint32_t nops,
                              const hlo_dtype *dts) {
  backend_sort s;
  memset(&s, 0, sizeof s);
  s.num_operands = nops;
  for (uint32_t k = 0; k < nops; k++) s.dtypes[k] = dts[k];
  s.rank = rank;
  for (uint32_t i = 0; i < rank; i++) s.dims[i] = dims[i];
  s.dimension = dim;
  s.is_stable = true;
  return s;
}

static const hlo_dtype all_types[] = {HLO_I1,  HLO_I2,  HLO_I4,  HLO_I8,   HLO_I16,  HLO_I32,
                                      HLO_I64, HLO_UI2, HLO_UI4, HLO_UI8,  HLO_UI16, HLO_UI32,
                                      HLO_UI64, HLO_F16, HLO_BF16, HLO_F32, HLO_F64, HLO_C64,
                                      HLO_C128};
enum { NTYPES = sizeof all_types / sizeof all_types[0] };

/* A random sort: rank 1-3, sorted dim anywhere, 1-4 operands of any type,
 * 1-3 keys (operands distinct or repeated). */
static void random_sort(backend_sort *s, int64_t maxlen) {
  uint32_t rank = (uint32_t)rand_in(1, 3), nops = (uint32_t)rand_in(1, 4);
  int64_t dims[3];
  hlo_dtype dts[4];
  for (uint32_t i = 0; i < rank; i++) dims[i] = rand_in(1, 5);
  uint32_t dim = (uint32_t)rand_in(0, rank - 1);
  dims[dim] = rand_in(0, 9) == 0 ? rand_in(0, 1) : rand_in(2, maxlen);
  for (uint32_t k = 0; k < nops; k++) dts[k] = all_types[rand_in(0, NTYPES - 1)];
  *s = make_sort(rank, dims, dim, nops, dts);
  s->is_stable = rnd64() % 2;
  s->nkeys = (uint32_t)rand_in(1, 3);
  for (uint32_t k = 0; k < s->nkeys; k++)
    s->keys[k] = make_key(s, (uint32_t)rand_in(0, nops - 1), (int)(rnd64() % 2), rnd64() % 2,
                          rnd64() % 2);
}

static void make_cases(void) {
  if (num_cases) return;
  const char *seed = getenv("HLO_TEST_SEED");
  if (seed && strtoull(seed, NULL, 0)) rng = strtoull(seed, NULL, 0);
  char what[96];
  /* every key type, both directions, both float comparisons, with and
   * without canonicalisation, NaNs or not; an i32 iota payload (argsort) */
  static const int64_t lens[] = {1, 2, 20, 33, 1000, 4096};
  for (int t = 0; t < NTYPES; t++)
    for (int v = 0; v < 8; v++) {
      int64_t len = lens[(t + v) % 6];
      int64_t dims[2] = {len >= 1000 ? 2 : 5, len};
      hlo_dtype dts[2] = {all_types[t], HLO_I32};
      uint32_t dim = v % 2;
      if (dim == 0) dims[0] = len, dims[1] = len >= 1000 ? 2 : 3;
      backend_sort s = make_sort(2, dims, dim, 2, dts);
      s.nkeys = 1;
      s.keys[0] = make_key(&s, 0, v & 2, v & 4, v >= 4 && v != 5);
      snprintf(what, sizeof what, "%s %s %s %s len %lld dim %u",
               hlo_dtype_name(all_types[t]), v & 4 ? "desc" : "asc", v & 2 ? "total" : "float",
               s.keys[0].ncanon ? "canonical" : "", (long long)len, dim);
      add_case(what, &s, len > 2048 ? H200_SHARED : 48 * 1024, v % 3 != 2);
    }
  /* top_k (desc f32 TOTALORDER, then the i32 iota index asc) of 24x8 and
   * sorts of 6x20: one block */
  {
    int64_t dims[2] = {24, 8};
    hlo_dtype dts[2] = {HLO_F32, HLO_I32};
    backend_sort s = make_sort(2, dims, 1, 2, dts);
    s.nkeys = 2;
    s.keys[0] = make_key(&s, 0, 1, true, false);
    s.keys[1] = make_key(&s, 1, 0, false, false);
    add_case("top_k 24x8", &s, 48 * 1024, true);
    s.dims[0] = 6, s.dims[1] = 20;
    s.nkeys = 1;
    s.keys[0] = make_key(&s, 0, 0, false, false);
    add_case("sort 6x20 float", &s, 48 * 1024, true);
    add_case("sort 6x20 float no NaN", &s, 48 * 1024, false);
    /* many rows: 3000 x 20, the groups wrap over the grid */
    s.dims[0] = 3000;
    add_case("3000x20 float", &s, 48 * 1024, true);
    s.keys[0] = make_key(&s, 0, 1, true, true);
    add_case("3000x20 total", &s, 48 * 1024, true);
  }
  /* rank 3, every sorted dim, lengths 33 and 1000 */
  for (uint32_t dim = 0; dim < 3; dim++)
    for (int l = 0; l < 2; l++) {
      int64_t dims[3] = {3, 2, 4};
      dims[dim] = l ? 1000 : 33;
      hlo_dtype dts[3] = {HLO_BF16, HLO_I64, HLO_C128};
      backend_sort s = make_sort(3, dims, dim, 3, dts);
      s.nkeys = 2;
      s.keys[0] = make_key(&s, 0, 0, true, true);
      s.keys[1] = make_key(&s, 1, 0, false, false);
      snprintf(what, sizeof what, "rank 3 dim %u len %lld", dim, (long long)dims[dim]);
      add_case(what, &s, 48 * 1024, true);
    }
  /* eight keys of 64 bits: eight words */
  {
    int64_t dims[2] = {4, 33};
    hlo_dtype dts[4] = {HLO_I64, HLO_UI64, HLO_F64, HLO_C128};
    backend_sort s = make_sort(2, dims, 1, 4, dts);
    s.nkeys = 8;
    for (uint32_t k = 0; k < 8; k++) s.keys[k] = make_key(&s, k % 4, (int)(k / 4), k % 3 == 0,
                                                           k == 6);
    add_case("eight keys", &s, 48 * 1024, true);
    add_case("eight keys no NaN", &s, 48 * 1024, false);
  }
  /* long rows with the H200's limit: 16384 (one word), 8192 (two) */
  {
    int64_t dims[2] = {2, 16384};
    hlo_dtype dts[2] = {HLO_F32, HLO_I32};
    backend_sort s = make_sort(2, dims, 1, 2, dts);
    s.nkeys = 1;
    s.keys[0] = make_key(&s, 0, 1, true, true);
    add_case("16384 total", &s, H200_SHARED, false);
    s.keys[0] = make_key(&s, 0, 0, false, false);
    add_case("16384 float NaN", &s, H200_SHARED, true);
    s.dims[1] = 8192;
    s.nkeys = 2;
    s.keys[0] = make_key(&s, 1, 0, false, false);
    s.keys[1] = make_key(&s, 0, 0, true, false);
    s.dtypes[1] = HLO_I64;
    s.keys[0].dtype = HLO_I64;
    add_case("8192 two words", &s, H200_SHARED, true);
  }
  /* long rows in global scratch (at 48 KiB): 2 x 5000, along dim 0 with
   * two words, one row of 100000 with NaNs under a FLOAT key (the merge
   * sort over global scratch), 20000 past an H200's shared memory */
  {
    int64_t dims[2] = {2, 5000};
    hlo_dtype dts[2] = {HLO_F32, HLO_I32};
    backend_sort s = make_sort(2, dims, 1, 2, dts);
    s.nkeys = 2;
    s.keys[0] = make_key(&s, 0, 1, true, true);
    s.keys[1] = make_key(&s, 1, 0, false, false);
    add_case("2x5000 global", &s, 48 * 1024, true);
    s.dims[0] = 3000, s.dims[1] = 3;
    s.dimension = 0;
    s.dtypes[1] = HLO_I64;
    s.keys[1].dtype = HLO_I64;
    add_case("3000x3 dim 0 two words global", &s, 48 * 1024, true);
    s.dims[0] = 1, s.dims[1] = 100000;
    s.dimension = 1;
    s.nkeys = 1;
    s.keys[0] = make_key(&s, 0, 0, false, false);
    add_case("1x100000 float NaN global", &s, 48 * 1024, true);
    s.dims[0] = 3, s.dims[1] = 20000;
    s.keys[0] = make_key(&s, 0, 1, true, false);
    add_case("3x20000 total global", &s, H200_SHARED, true);
  }
  /* empty tensors */
  {
    int64_t dims[3] = {3, 0, 5};
    hlo_dtype dts[1] = {HLO_F32};
    backend_sort s = make_sort(3, dims, 2, 1, dts);
    s.nkeys = 1;
    s.keys[0] = make_key(&s, 0, 0, false, false);
    add_case("empty, another dim 0", &s, 48 * 1024, true);
    s.dimension = 1;
    add_case("empty, the sorted dim 0", &s, 48 * 1024, true);
  }
  for (int i = 0; i < 400; i++) {
    backend_sort s;
    random_sort(&s, i % 10 == 0 ? 300 : 40);
    snprintf(what, sizeof what, "random %d", i);
    add_case(what, &s, 48 * 1024, rnd64() % 4 != 0);
  }
}

/* Whether got[k] (n elements + one of 0x7f bytes) is c->ref[k], for every k. */
static bool same_result(const char *where, const scase *c, void *const *got) {
  for (uint32_t k = 0; k < c->s.num_operands; k++) {
    size_t nb = (size_t)(c->n + 1) * c->es[k];
    if (!memcmp(got[k], c->ref[k], nb)) continue;
    const uint8_t *a = got[k], *b = c->ref[k];
    size_t i = 0;
    while (a[i] == b[i]) i++;
    char buf[256];
    sort_describe_print(&c->s, buf, sizeof buf);
    fprintf(stderr, "%s: %s: operand %u differs at element %zu of %lld (%s)\n", where, c->what, k,
            i / c->es[k], (long long)c->n, buf);
    return false;
  }
  return true;
}

/* ------------------------------------------------------------ nvrtc */

TEST(nvrtc_compiles) {
  if (getenv("HLO_CUDA_SORT_CHILD")) return;
  hlo_status st = nvrtc_load();
  if (st) {
    printf("nvrtc_compiles: skipped: %s\n", hlo_status_message(st));
    hlo_status_free(st);
    return;
  }
  void *cubin = NULL;
  size_t len = 0;
  st = nvrtc_compile(cuda_sort_source(), "hlo_sort.cu", 90, &cubin, &len);
  if (st) fprintf(stderr, "%s\n", hlo_status_message(st));
  CHECK(!st);
  hlo_status_free(st);
  CHECK(cubin && len > 16 && memmem(cubin, len, "hlo_sort_rows", 14));
  printf("nvrtc: %s, cubin of %zu bytes\n", nvrtc_version_text(), len);
  free(cubin);
}

/* ------------------------------------------------------------ takes, plan, errors */

TEST(takes_and_plan) {
  if (getenv("HLO_CUDA_SORT_CHILD")) return;
  int taken = 0, total = 0;
  for (int t = 0; t < HLO_DTYPE_COUNT; t++)
    for (int cmp = 0; cmp < 4; cmp++)
      for (int part = -1; part < 2; part++) {
        int64_t dims[2] = {3, 7};
        hlo_dtype dt = (hlo_dtype)t;
        backend_sort s = make_sort(2, dims, 1, 1, &dt);
        s.nkeys = 1;
        s.keys[0].operand = 0;
        s.keys[0].part = part;
        s.keys[0].dtype = part >= 0 ? key_dtype_of(dt) : dt;
        s.keys[0].cmp = (backend_sort_cmp)cmp;
        bool want = cpu_sort_takes(&s);
        CHECK(cuda_sort_takes(&s) == want);
        taken += want;
        total++;
      }
  printf("takes: %d of %d key forms, as the cpu backend\n", taken, total);
  CHECK(taken > 20 && taken < total);
  CHECK(!cuda_sort_takes(NULL));
  /* rows of one word: 2048 fit 48 KiB, 2049 (padded to 4096: 48 KiB and
   * the row's flag) go to global scratch; 4096 fit an H200's 227 KiB,
   * 16384 too; rows whose scratch passes 1 GiB are not taken */
  int64_t dims[2] = {2, 2048};
  hlo_dtype dts[2] = {HLO_F32, HLO_I64};
  backend_sort s = make_sort(2, dims, 1, 2, dts);
  s.nkeys = 1;
  s.keys[0].operand = 0;
  s.keys[0].part = -1;
  s.keys[0].dtype = HLO_F32;
  s.keys[0].cmp = BACKEND_SORT_TOTALORDER;
  cuda_sort_desc d;
  cuda_sort_geometry g;
  CHECK(cuda_sort_takes(&s));
  CHECK(cuda_sort_plan(&s, 48 * 1024, NULL, NULL, &d, &g) && g.shared > 0 && !g.scratch);
  s.dims[1] = 2049;
  CHECK(cuda_sort_takes(&s));
  CHECK(cuda_sort_plan(&s, 48 * 1024, NULL, NULL, &d, &g) && !g.shared && d.rpb == 1);
  CHECK(g.grid == 2 && d.sstride == 4096 * 12 + 256 && g.scratch == 2 * (size_t)d.sstride);
  CHECK(cuda_sort_plan(&s, H200_SHARED, NULL, NULL, &d, &g) && d.p == 4096 && d.rpb == 1);
  CHECK(g.shared > 0 && !g.scratch);
  s.dims[1] = 4097;
  CHECK(cuda_sort_plan(&s, H200_SHARED, NULL, NULL, &d, &g) && d.p == 8192 && d.rpb == 1);
  s.dims[1] = 16384;
  CHECK(cuda_sort_plan(&s, H200_SHARED, NULL, NULL, &d, &g) && g.shared <= H200_SHARED);
  s.dims[1] = 16385;
  CHECK(cuda_sort_plan(&s, H200_SHARED, NULL, NULL, &d, &g) && !g.shared && g.scratch);
  s.dims[0] = 1000; /* 1000 rows of 16385: CUDA_SORT_LONG_BLOCKS blocks of scratch */
  CHECK(cuda_sort_plan(&s, H200_SHARED, NULL, NULL, &d, &g) && g.grid == CUDA_SORT_LONG_BLOCKS);
  s.dims[0] = 2;
  s.dims[1] = INT32_MAX; /* 24 GiB of scratch */
  CHECK(cpu_sort_takes(&s) && !cuda_sort_takes(&s));
  CHECK(!cuda_sort_plan(&s, H200_SHARED, NULL, NULL, &d, &g));
  /* two words (f32 then i64: 96 bits): 2048 fit, 4096 do not (48 KiB) */
  s.nkeys = 2;
  s.keys[1].operand = 1;
  s.keys[1].part = -1;
  s.keys[1].dtype = HLO_I64;
  s.keys[1].cmp = BACKEND_SORT_SIGNED;
  s.dims[1] = 2048;
  CHECK(cuda_sort_plan(&s, 48 * 1024, NULL, NULL, &d, &g) && d.nwords == 2);
  CHECK(d.key[0].word == 0 && d.key[1].word == 1 && d.key[0].width == 32);
  s.dims[1] = 4096;
  CHECK(cuda_sort_plan(&s, 48 * 1024, NULL, NULL, &d, &g) && g.scratch && d.nwords == 2);
  /* top_k 24x8 (f32 desc, i32 asc: one word) and 6x20: one launch, one block */
  s.dims[0] = 24, s.dims[1] = 8;
  s.dtypes[1] = HLO_I32;
  s.keys[1].dtype = HLO_I32;
  CHECK(cuda_sort_plan(&s, 48 * 1024, NULL, NULL, &d, &g));
  CHECK(d.nwords == 1 && d.p == 8 && d.rpb == 24 && g.grid == 1 && g.block == 96);
  s.dims[0] = 6, s.dims[1] = 20;
  CHECK(cuda_sort_plan(&s, 48 * 1024, NULL, NULL, &d, &g));
  CHECK(d.p == 32 && d.rpb == 6 && g.grid == 1 && g.block == 96);
  /* sorted along dim 0 of 5x4x3: rows of 5, 12 of them, 12 apart */
  int64_t d3[3] = {5, 4, 3};
  s.rank = 3;
  memcpy(s.dims, d3, sizeof d3);
  s.dimension = 0;
  CHECK(cuda_sort_plan(&s, 48 * 1024, NULL, NULL, &d, &g));
  CHECK(d.len == 5 && d.inner == 12 && d.nrows == 12 && d.p == 8);
  /* cpu_sort_takes' refusals: a payload over 16 bytes is not a type; a
   * key of an unknown comparison */
  s.keys[1].cmp = (backend_sort_cmp)7;
  CHECK(!cuda_sort_takes(&s));
}

TEST(errors) {
  if (getenv("HLO_CUDA_SORT_CHILD")) return;
  int64_t dims[1] = {4};
  hlo_dtype dt = HLO_F32;
  backend_sort s = make_sort(1, dims, 0, 1, &dt);
  s.nkeys = 1;
  s.keys[0].operand = 0;
  s.keys[0].part = -1;
  s.keys[0].dtype = HLO_F32;
  s.keys[0].cmp = BACKEND_SORT_FLOAT;
  void *ptrs[1] = {NULL};
  hlo_status st = cuda_sort(NULL, ptrs, ptrs);
  CHECK(st && hlo_status_code_of(st) == HLO_INVALID_ARGUMENT);
  hlo_status_free(st);
  s.keys[0].dtype = HLO_I32; /* not the operand's type: not taken */
  st = cuda_sort(&s, ptrs, ptrs);
  CHECK(st && hlo_status_code_of(st) == HLO_UNIMPLEMENTED);
  CHECK(st && strstr(hlo_status_message(st), "not supported"));
  hlo_status_free(st);
  s.keys[0].dtype = HLO_F32;
  const backend *be = NULL;
  hlo_status bst = backend_cuda(&be);
  if (bst) { /* no started backend: HLO_UNAVAILABLE, nothing launched */
    st = cuda_sort(&s, ptrs, ptrs);
    CHECK(st && hlo_status_code_of(st) == HLO_UNAVAILABLE);
    hlo_status_free(st);
    hlo_status_free(bst);
  }
}

/* ------------------------------------------------------------ host emulation */

static const char host_prelude[] =
    "#define _POSIX_C_SOURCE 200809L\n"
    "#include <pthread.h>\n"
    "#include <stdbool.h>\n"
    "#include <stdint.h>\n"
    "#include <stdlib.h>\n"
    "#include <string.h>\n"
    "#define SK_KERNEL __attribute__((visibility(\"default\"))) void\n"
    "#define SK_DEV static inline\n"
    "#define SK_GRID_CONST const\n"
    "static __thread int64_t sk_tx;\n"
    "static int64_t sk_bx, sk_nbx, sk_ntx;\n"
    "static uint64_t *sk_smem;\n"
    "static pthread_barrier_t sk_bar;\n"
    "#define SK_TX sk_tx\n"
    "#define SK_NTX sk_ntx\n"
    "#define SK_BX sk_bx\n"
    "#define SK_NBX sk_nbx\n"
    "#define SK_SYNC() pthread_barrier_wait(&sk_bar)\n"
    "static inline uint32_t wk_f2u(float f) { uint32_t u; memcpy(&u, &f, 4); return u; }\n"
    "static inline float wk_u2f(uint32_t u) { float f; memcpy(&f, &u, 4); return f; }\n"
    "static inline uint64_t wk_d2u(double f) { uint64_t u; memcpy(&u, &f, 8); return u; }\n"
    "static inline double wk_u2d(uint64_t u) { double f; memcpy(&f, &u, 8); return f; }\n";

/* After the body: the launch over the emulated grid (blocks in turn, a
 * block's threads as pthreads); shared memory is garbage at each block's
 * start and has a guard of 64 bytes after it. 0 ok, 1 out of memory or
 * too many threads, 2 the guard was written. */
static const char host_epilogue[] =
    "typedef struct sk_arg { int64_t t; const sk_desc *d; } sk_arg;\n"
    "static void *sk_thread(void *p) {\n"
    "  const sk_arg *a = (const sk_arg *)p;\n"
    "  sk_tx = a->t;\n"
    "  hlo_sort_rows(*a->d);\n"
    "  return NULL;\n"
    "}\n"
    "size_t sk_host_desc_size(void);\n"
    "size_t sk_host_desc_size(void) { return sizeof(sk_desc); }\n"
    "int sk_host_launch(unsigned grid, unsigned block, size_t shared, const void *desc);\n"
    "int sk_host_launch(unsigned grid, unsigned block, size_t shared, const void *desc) {\n"
    "  sk_desc d;\n"
    "  memcpy(&d, desc, sizeof d);\n"
    "  if (block < 1 || block > 64) return 1;\n"
    "  uint8_t *mem = (uint8_t *)malloc(shared + 64);\n"
    "  if (!mem) return 1;\n"
    "  sk_smem = (uint64_t *)mem;\n"
    "  sk_nbx = grid;\n"
    "  sk_ntx = block;\n"
    "  int rc = 0;\n"
    "  for (unsigned b = 0; b < grid && !rc; b++) {\n"
    "    memset(mem, 0xa5, shared + 64);\n"
    "    sk_bx = b;\n"
    "    pthread_barrier_init(&sk_bar, NULL, block);\n"
    "    pthread_t th[64];\n"
    "    sk_arg args[64];\n"
    "    for (unsigned t = 1; t < block; t++) {\n"
    "      args[t].t = t, args[t].d = &d;\n"
    "      if (pthread_create(&th[t], NULL, sk_thread, &args[t])) abort();\n"
    "    }\n"
    "    sk_tx = 0;\n"
    "    hlo_sort_rows(d);\n"
    "    for (unsigned t = 1; t < block; t++) pthread_join(th[t], NULL);\n"
    "    pthread_barrier_destroy(&sk_bar);\n"
    "    for (size_t i = shared; i < shared + 64; i++) if (mem[i] != 0xa5) rc = 2;\n"
    "  }\n"
    "  free(mem);\n"
    "  return rc;\n"
    "}\n";

typedef int (*launch_fn)(unsigned grid, unsigned block, size_t shared, const void *desc);
static void *g_host;
static launch_fn g_launch;

/* Builds and loads the host kernel once; false after a failed check. */
static bool host_kernel(void) {
  if (g_launch) return true;
  char dir[] = "/tmp/hlo-cuda-sort-XXXXXX", src[600], lib[600], cmd[1600];
  CHECK(mkdtemp(dir) != NULL);
  snprintf(src, sizeof src, "%s/sort.c", dir);
  snprintf(lib, sizeof lib, "%s/sort.so", dir);
  FILE *f = fopen(src, "w");
  CHECK(f != NULL);
  if (!f) return false;
  fputs(host_prelude, f);
  fputs(cuda_sort_source_body(), f);
  fputs(host_epilogue, f);
  CHECK(fclose(f) == 0);
  const char *cc = getenv("HLO_CC");
  snprintf(cmd, sizeof cmd, "%s -std=c11 -O1 -Wall -Werror -shared -fPIC -pthread -o %s %s 2>&1",
           cc && *cc ? cc : "cc", lib, src);
  int rc = system(cmd);
  if (rc != 0) fprintf(stderr, "host build of the kernel failed: %s\n", cmd);
  CHECK(rc == 0);
  g_host = rc == 0 ? dlopen(lib, RTLD_NOW | RTLD_LOCAL) : NULL;
  if (rc == 0 && !g_host) fprintf(stderr, "dlopen %s: %s\n", lib, dlerror());
  unlink(src);
  unlink(lib);
  rmdir(dir);
  if (!g_host) return false;
  size_t (*desc_size)(void);
  *(void **)&desc_size = dlsym(g_host, "sk_host_desc_size");
  *(void **)&g_launch = dlsym(g_host, "sk_host_launch");
  CHECK(desc_size && g_launch);
  CHECK(desc_size && desc_size() == sizeof(cuda_sort_desc));
  return g_launch != NULL;
}

/* Runs case c's sort on host memory over the emulated grid into got[]
 * (0x7f-filled here); false after a failed check. */
static bool emulate(const scase *c, void **got) {
  cuda_sort_desc d;
  cuda_sort_geometry g;
  for (uint32_t k = 0; k < c->s.num_operands; k++)
    memset(got[k], 0x7f, (size_t)(c->n + 1) * c->es[k]);
  bool planned = cuda_sort_plan(&c->s, c->shared_limit, c->in, got, &d, &g);
  CHECK(planned);
  if (!planned) return false;
  if (d.nrows == 0) return true; /* cuda_sort launches nothing */
  static const unsigned blocks[] = {1, 2, 3, 7, 32};
  unsigned block = blocks[rnd64() % 5];
  if (block == 32 && d.p * d.rpb > 4096) block = 3;
  unsigned grid = g.grid < 3 ? g.grid : (unsigned)rand_in(1, 3);
  uint8_t *scratch = NULL;
  if (g.scratch) { /* long rows: the blocks' parts of a global scratch, garbage at first */
    scratch = malloc(g.scratch);
    CHECK(scratch != NULL);
    if (!scratch) return false;
    memset(scratch, 0x5a, g.scratch);
    d.scratch = (uint64_t)(uintptr_t)scratch;
  }
  int rc = g_launch(grid, block, g.shared, &d);
  free(scratch);
  if (rc) fprintf(stderr, "%s: host launch failed (%d)\n", c->what, rc);
  CHECK_EQ_INT(rc, 0);
  return rc == 0;
}

static void **alloc_got(const scase *c) {
  void **got = calloc(BACKEND_SORT_MAX_OPERANDS, sizeof *got);
  for (uint32_t k = 0; got && k < c->s.num_operands; k++)
    got[k] = malloc((size_t)(c->n + 1) * c->es[k]);
  return got;
}

static void free_got(void **got) {
  for (int k = 0; got && k < BACKEND_SORT_MAX_OPERANDS; k++) free(got[k]);
  free(got);
}

TEST(host_emulation_vs_cpu_sort) {
  if (getenv("HLO_CUDA_SORT_CHILD")) return;
  make_cases();
  if (!host_kernel()) return;
  int passed = 0, failed = 0;
  for (int i = 0; i < num_cases; i++) {
    const scase *c = &cases[i];
    void **got = alloc_got(c);
    bool ok = got && emulate(c, got) && same_result("host emulation", c, got);
    passed += ok;
    failed += !ok;
    free_got(got);
  }
  CHECK_EQ_INT(failed, 0);
  CHECK(num_cases >= 500);
  printf("host emulation: %d cases (%d forms not taken), %d bit-identical to cpu_sort, "
         "%d failed\n", num_cases, not_taken, passed, failed);
}

/* ------------------------------------------------------------ against the interpreter */

/* JAX's canonicalisation of float key x into %cX (-0 -> +0, NaN -> qNaN). */
#define CANON(x, c, nan, T)                                                                     \
  "    %z" x " = stablehlo.constant dense<0.000000e+00> : tensor<" T ">\n"                      \
  "    %e" x " = stablehlo.compare EQ, %" x ", %z" x ", FLOAT : (tensor<" T ">, tensor<" T ">) -> tensor<i1>\n" \
  "    %s" x " = stablehlo.select %e" x ", %z" x ", %" x " : tensor<i1>, tensor<" T ">\n"     \
  "    %n" x " = stablehlo.compare NE, %" x ", %" x ", FLOAT : (tensor<" T ">, tensor<" T ">) -> tensor<i1>\n" \
  "    %q" x " = stablehlo.constant dense<" nan "> : tensor<" T ">\n"                          \
  "    %" c " = stablehlo.select %n" x ", %q" x ", %s" x " : tensor<i1>, tensor<" T ">\n"

typedef struct iform {
  const char *name;
  const char *dims;     /* "AxB" */
  int dim;
  uint32_t nops;
  hlo_dtype dts[3];
  const char *types[3];
  const char *body;     /* arguments %a0 %b0 %a1 %b1 ... */
} iform;

static const iform iforms[] = {
    {"top_k_chain", "24x8", 1, 2, {HLO_F32, HLO_I32}, {"f32", "i32"},
     "    %g = stablehlo.compare GT, %a0, %b0, TOTALORDER : (tensor<f32>, tensor<f32>) -> tensor<i1>\n"
     "    %e = stablehlo.compare EQ, %a0, %b0, TOTALORDER : (tensor<f32>, tensor<f32>) -> tensor<i1>\n"
     "    %i = stablehlo.compare LT, %a1, %b1, SIGNED : (tensor<i32>, tensor<i32>) -> tensor<i1>\n"
     "    %and = stablehlo.and %e, %i : tensor<i1>\n"
     "    %or = stablehlo.or %g, %and : tensor<i1>\n"
     "    stablehlo.return %or : tensor<i1>\n"},
    {"f32_lt_float", "6x20", 1, 1, {HLO_F32}, {"f32"},
     "    %l = stablehlo.compare LT, %a0, %b0, FLOAT : (tensor<f32>, tensor<f32>) -> tensor<i1>\n"
     "    stablehlo.return %l : tensor<i1>\n"},
    {"f32_gt_float_dim0", "40x3", 0, 1, {HLO_F32}, {"f32"},
     "    %l = stablehlo.compare GT, %a0, %b0, FLOAT : (tensor<f32>, tensor<f32>) -> tensor<i1>\n"
     "    stablehlo.return %l : tensor<i1>\n"},
    {"jax_canonical_argsort", "5x33", 1, 2, {HLO_F32, HLO_I32}, {"f32", "i32"},
     CANON("a0", "ca", "0x7FC00000", "f32") CANON("b0", "cb", "0x7FC00000", "f32")
     "    %l = stablehlo.compare LT, %ca, %cb, TOTALORDER : (tensor<f32>, tensor<f32>) -> tensor<i1>\n"
     "    stablehlo.return %l : tensor<i1>\n"},
    {"float_chain_ieee_with_nans", "3x100", 1, 2, {HLO_F32, HLO_F64}, {"f32", "f64"},
     "    %g = stablehlo.compare LT, %a1, %b1, FLOAT : (tensor<f64>, tensor<f64>) -> tensor<i1>\n"
     "    %e = stablehlo.compare EQ, %a1, %b1, FLOAT : (tensor<f64>, tensor<f64>) -> tensor<i1>\n"
     "    %i = stablehlo.compare GT, %a0, %b0, FLOAT : (tensor<f32>, tensor<f32>) -> tensor<i1>\n"
     "    %and = stablehlo.and %i, %e : tensor<i1>\n"
     "    %or = stablehlo.or %and, %g : tensor<i1>\n"
     "    stablehlo.return %or : tensor<i1>\n"},
    {"bf16_gt_totalorder", "4x50", 1, 2, {HLO_BF16, HLO_I32}, {"bf16", "i32"},
     "    %l = stablehlo.compare GT, %a0, %b0, TOTALORDER : (tensor<bf16>, tensor<bf16>) -> tensor<i1>\n"
     "    stablehlo.return %l : tensor<i1>\n"},
    {"f16_lt_float", "4x37", 1, 1, {HLO_F16}, {"f16"},
     "    %l = stablehlo.compare LT, %a0, %b0, FLOAT : (tensor<f16>, tensor<f16>) -> tensor<i1>\n"
     "    stablehlo.return %l : tensor<i1>\n"},
    {"complex_jax_real_imag", "3x30", 1, 1, {HLO_C64}, {"complex<f32>"},
     "    %ra = stablehlo.real %a0 : (tensor<complex<f32>>) -> tensor<f32>\n"
     "    %ia = stablehlo.imag %a0 : (tensor<complex<f32>>) -> tensor<f32>\n"
     "    %rb = stablehlo.real %b0 : (tensor<complex<f32>>) -> tensor<f32>\n"
     "    %ib = stablehlo.imag %b0 : (tensor<complex<f32>>) -> tensor<f32>\n"
     "    %li = stablehlo.compare LT, %ia, %ib, TOTALORDER : (tensor<f32>, tensor<f32>) -> tensor<i1>\n"
     "    %lr = stablehlo.compare LT, %ra, %rb, TOTALORDER : (tensor<f32>, tensor<f32>) -> tensor<i1>\n"
     "    %er = stablehlo.compare EQ, %ra, %rb, TOTALORDER : (tensor<f32>, tensor<f32>) -> tensor<i1>\n"
     "    %y = stablehlo.and %er, %li : tensor<i1>\n"
     "    %o = stablehlo.or %lr, %y : tensor<i1>\n"
     "    stablehlo.return %o : tensor<i1>\n"},
    {"select_chain_ui16_i64", "6x40", 1, 2, {HLO_UI16, HLO_I64}, {"ui16", "i64"},
     "    %e = stablehlo.compare EQ, %a0, %b0, UNSIGNED : (tensor<ui16>, tensor<ui16>) -> tensor<i1>\n"
     "    %l0 = stablehlo.compare GT, %a0, %b0, UNSIGNED : (tensor<ui16>, tensor<ui16>) -> tensor<i1>\n"
     "    %l1 = stablehlo.compare LT, %a1, %b1, SIGNED : (tensor<i64>, tensor<i64>) -> tensor<i1>\n"
     "    %s = stablehlo.select %e, %l1, %l0 : tensor<i1>, tensor<i1>\n"
     "    stablehlo.return %s : tensor<i1>\n"},
};

/* The program of form f. */
static void iform_text(const iform *f, char *out, size_t size) {
  char ts[3][64], args[512] = "", tlist[512] = "", ops[64] = "", rets[64] = "", bb[512] = "";
  for (uint32_t k = 0; k < f->nops; k++) {
    char a[256];
    snprintf(ts[k], sizeof ts[k], "tensor<%sx%s>", f->dims, f->types[k]);
    snprintf(a, sizeof a, "%s%%x%u: %s", k ? ", " : "", k, ts[k]);
    strcat(args, a);
    snprintf(a, sizeof a, "%s%s", k ? ", " : "", ts[k]);
    strcat(tlist, a);
    snprintf(a, sizeof a, "%s%%x%u", k ? ", " : "", k);
    strcat(ops, a);
    snprintf(a, sizeof a, "%s%%r#%u", k ? ", " : "", k);
    strcat(rets, a);
    snprintf(a, sizeof a, "%s%%a%u: tensor<%s>, %%b%u: tensor<%s>", k ? ", " : "", k, f->types[k],
             k, f->types[k]);
    strcat(bb, a);
  }
  snprintf(out, size,
           "func.func @main(%s) -> (%s) {\n"
           "  %%r:%u = \"stablehlo.sort\"(%s) <{dimension = %d : i64, is_stable = true}> ({\n"
           "  ^bb0(%s):\n%s"
           "  }) : (%s) -> (%s)\n"
           "  return %s : %s\n"
           "}\n",
           args, tlist, f->nops, ops, f->dim, bb, f->body, tlist, tlist, rets, tlist);
}

/* Each form: parsed, described (sort_describe), run on the interpreter
 * with NaNs in the rows and without, and on the emulated kernel; the
 * results bit for bit the same. */
TEST(host_emulation_vs_interpreter) {
  if (getenv("HLO_CUDA_SORT_CHILD")) return;
  if (!host_kernel()) return;
  int passed = 0, failed = 0;
  char text[8192];
  for (size_t fi = 0; fi < sizeof iforms / sizeof *iforms; fi++)
    for (int pass = 0; pass < 2; pass++) {
      const iform *f = &iforms[fi];
      iform_text(f, text, sizeof text);
      hlo_module *m = NULL;
      hlo_executable *ei = NULL;
      hlo_status st = hlo_module_parse(f->name, text, strlen(text), &m);
      if (!st) st = hlo_executable_create(m, NULL, HLO_BACKEND_INTERP, &ei);
      if (st) {
        fprintf(stderr, "%s:\n%s", f->name, text);
        report(st);
        failed++;
        hlo_module_destroy(m);
        continue;
      }
      const hlo_module_ir *ir = runtime_module_ir(m);
      const hlo_op *op = ir ? ir->funcs->body.block.first : NULL;
      scase c;
      memset(&c, 0, sizeof c);
      snprintf(c.what, sizeof c.what, "%s%s", f->name, pass ? " (no NaN)" : "");
      bool described = op && sort_describe(op, &c.s);
      CHECK(described);
      c.shared_limit = 48 * 1024;
      int64_t d[2];
      d[0] = strtoll(f->dims, NULL, 10);
      d[1] = strtoll(strchr(f->dims, 'x') + 1, NULL, 10);
      c.n = d[0] * d[1];
      hlo_buffer_view views[3];
      for (uint32_t k = 0; k < f->nops; k++) {
        c.es[k] = hlo_dtype_size(f->dts[k]);
        c.in[k] = malloc((size_t)c.n * c.es[k]);
        c.ref[k] = malloc((size_t)(c.n + 1) * c.es[k]);
        fill(f->dts[k], c.in[k], c.n, true, pass == 0);
        if (k == 1 && f->dts[k] == HLO_I32) /* an iota payload, as argsort's */
          for (int64_t e = 0; e < c.n; e++) elem_set_i64(HLO_I32, c.in[k], e, e % d[1]);
        views[k] = (hlo_buffer_view){f->dts[k], 2, d, c.in[k]};
      }
      hlo_buffer **ri = NULL;
      st = hlo_executable_run(ei, views, (int)f->nops, &ri);
      if (st) report(st);
      CHECK(!st);
      for (uint32_t k = 0; ri && k < f->nops; k++) {
        CHECK(hlo_buffer_nbytes(ri[k]) == (size_t)c.n * c.es[k]);
        memcpy(c.ref[k], hlo_buffer_data(ri[k]), (size_t)c.n * c.es[k]);
        memset((uint8_t *)c.ref[k] + (size_t)c.n * c.es[k], 0x7f, c.es[k]);
        hlo_buffer_destroy(ri[k]);
      }
      free(ri);
      void **got = described && !st ? alloc_got(&c) : NULL;
      bool ok = got && emulate(&c, got) && same_result("vs the interpreter", &c, got);
      passed += ok;
      failed += !ok;
      free_got(got);
      for (uint32_t k = 0; k < f->nops; k++) {
        free(c.in[k]);
        free(c.ref[k]);
      }
      hlo_executable_destroy(ei);
      hlo_module_destroy(m);
    }
  CHECK_EQ_INT(failed, 0);
  printf("host emulation: %d programs bit-identical to the interpreter, %d failed\n", passed,
         failed);
}

/* ------------------------------------------------------------ the GPU */

/* Runs every case through cuda_sort on `be`'s device buffers; the count of
 * cases that failed. */
static int run_on_backend(const backend *be, const char *where) {
  /* once wired, the backend's slots are these */
  CHECK(!be->sort_takes || be->sort_takes == cuda_sort_takes);
  CHECK(!be->sort || be->sort == cuda_sort);
  int passed = 0, failed = 0;
  for (int i = 0; i < num_cases; i++) {
    const scase *c = &cases[i];
    bool takes = cuda_sort_takes(&c->s);
    CHECK(takes || c->shared_limit > 48 * 1024); /* the device's limit is at least 48 KiB */
    if (!takes) continue;
    void *din[BACKEND_SORT_MAX_OPERANDS] = {0}, *dout[BACKEND_SORT_MAX_OPERANDS] = {0};
    void **got = alloc_got(c);
    bool ok = got != NULL;
    hlo_status st = NULL;
    for (uint32_t k = 0; ok && k < c->s.num_operands; k++) {
      size_t nb = (size_t)(c->n + 1) * c->es[k];
      din[k] = be->alloc(nb);
      dout[k] = be->alloc(nb);
      ok = din[k] && dout[k];
      memset(got[k], 0x7f, nb);
      if (ok) st = be->copy(din[k], c->in[k], (size_t)c->n * c->es[k]);
      if (ok && !st) st = be->copy(dout[k], got[k], nb);
      if (st) ok = false;
    }
    CHECK(ok || st);
    if (ok) st = cuda_sort(&c->s, din, dout);
    if (ok && !st) st = be->synchronize();
    for (uint32_t k = 0; ok && !st && k < c->s.num_operands; k++)
      st = be->copy(got[k], dout[k], (size_t)(c->n + 1) * c->es[k]);
    if (st) {
      fprintf(stderr, "%s: %s: ", where, c->what);
      report(st);
      ok = false;
    }
    ok = ok && same_result(where, c, got);
    passed += ok;
    failed += !ok;
    for (uint32_t k = 0; k < c->s.num_operands; k++) {
      be->free(din[k]);
      be->free(dout[k]);
    }
    free_got(got);
  }
  printf("%s: %d cases, %d bit-identical to cpu_sort, %d failed\n", where, passed + failed,
         passed, failed);
  return failed;
}

TEST(gpu) {
  if (getenv("HLO_CUDA_SORT_CHILD")) return;
  const backend *be = NULL;
  hlo_status st = backend_cuda(&be);
  if (st) {
    printf("gpu: skipped: no GPU (%s)\n", hlo_status_message(st));
    hlo_status_free(st);
    return;
  }
  make_cases();
  CHECK_EQ_INT(run_on_backend(be, "gpu"), 0);
}

/* ------------------------------------------------------------ a mock driver */

/* The mock driver (tests/unit/mock/libcuda_mock.h), emulating: its
 * cuLaunchKernel hands each launch (kernel name, grid, block, shared
 * bytes, parameters) to mock_hook, which runs it over the emulated grid:
 * the slots' whole path (checks, the once-per-process NVRTC compile and
 * module load, the shared memory opt-in, the kernel lookup, the parameter
 * block, the geometry, the stream) is checked without a GPU. */

static int g_bad_launches;
static int *g_shared_optin;

/* mock_hook: checks the geometry (1-d, whole warps up to 256 threads,
 * the shared memory within what was opted into) and runs the launch over
 * the emulated grid, with blocks of up to 4 threads (the kernel is
 * correct for any block size: fewer pthreads keep the test quick). */
static void emulate_launch(const char *name, const unsigned *geo, void **params) {
  bool ok = !strcmp(name, "hlo_sort_rows") && geo[0] >= 1 && geo[1] == 1 && geo[2] == 1 &&
            geo[3] >= 32 && geo[3] <= 256 && geo[3] % 32 == 0 && geo[4] == 1 && geo[5] == 1 &&
            (geo[6] <= 48 * 1024 || (int)geo[6] <= *g_shared_optin);
  if (!ok) {
    fprintf(stderr, "mock launch of %s: grid %u x %u x %u, block %u x %u x %u, %u shared\n", name,
            geo[0], geo[1], geo[2], geo[3], geo[4], geo[5], geo[6]);
    g_bad_launches++;
    return;
  }
  cuda_sort_desc d;
  memcpy(&d, params[0], sizeof d);
  if ((d.nrows + d.rpb - 1) / d.rpb > (int64_t)geo[0]) g_bad_launches++; /* a grid too small */
  if (g_launch(geo[0], geo[3] < 4 ? geo[3] : 4, geo[6], &d)) g_bad_launches++;
}

/* Each iform program compiled for HLO_BACKEND_CUDA on the (mock) backend
 * and run twice, against the interpreter bit for bit; with the backend's
 * sort slots wired, each run is one launch of the sort kernel (the
 * runtime's STEP_SORT), else none (the interpreter thunk). */
static void programs_on_cuda(const backend *be, const int *launches) {
  char text[8192];
  int passed = 0;
  for (size_t fi = 0; fi < sizeof iforms / sizeof *iforms; fi++) {
    const iform *f = &iforms[fi];
    iform_text(f, text, sizeof text);
    hlo_module *m = NULL;
    hlo_executable *ei = NULL, *ec = NULL;
    static const hlo_compile_options cu = {.backend = HLO_BACKEND_CUDA};
    hlo_status st = hlo_module_parse(f->name, text, strlen(text), &m);
    if (!st) st = hlo_executable_create(m, NULL, HLO_BACKEND_INTERP, &ei);
    if (!st) st = hlo_executable_compile(m, NULL, &cu, &ec);
    int64_t d[2] = {strtoll(f->dims, NULL, 10), strtoll(strchr(f->dims, 'x') + 1, NULL, 10)};
    hlo_buffer_view views[3];
    void *data[3] = {0};
    for (uint32_t k = 0; k < f->nops; k++) {
      data[k] = malloc((size_t)(d[0] * d[1]) * hlo_dtype_size(f->dts[k]));
      CHECK(data[k] != NULL);
      if (data[k]) fill(f->dts[k], data[k], d[0] * d[1], true, true);
      views[k] = (hlo_buffer_view){f->dts[k], 2, d, data[k]};
    }
    hlo_buffer **ri = NULL, **rc = NULL;
    if (!st) st = hlo_executable_run(ei, views, (int)f->nops, &ri);
    int l0 = *launches;
    for (int rep = 0; rep < 2 && !st; rep++) {
      for (uint32_t k = 0; rc && k < f->nops; k++) hlo_buffer_destroy(rc[k]);
      free(rc);
      rc = NULL;
      st = hlo_executable_run(ec, views, (int)f->nops, &rc);
    }
    if (st) {
      fprintf(stderr, "%s on the mock backend: ", f->name);
      report(st);
      st = NULL;
    }
    bool same = ri && rc;
    for (uint32_t k = 0; same && k < f->nops; k++)
      same = hlo_buffer_nbytes(ri[k]) == hlo_buffer_nbytes(rc[k]) &&
             !memcmp(hlo_buffer_data(ri[k]), hlo_buffer_data(rc[k]), hlo_buffer_nbytes(ri[k]));
    if (!same) fprintf(stderr, "%s on the mock backend: not the interpreter's result\n", f->name);
    CHECK(same);
    CHECK_EQ_INT(*launches - l0, be->sort == cuda_sort ? 2 : 0);
    passed += same;
    for (uint32_t k = 0; k < f->nops; k++) {
      if (ri) hlo_buffer_destroy(ri[k]);
      if (rc) hlo_buffer_destroy(rc[k]);
      free(data[k]);
    }
    free(ri);
    free(rc);
    hlo_executable_destroy(ec);
    hlo_executable_destroy(ei);
    hlo_module_destroy(m);
  }
  printf("mock driver: %d programs compiled for cuda, %s, the interpreter's results\n", passed,
         be->sort == cuda_sort ? "one sort launch a run" : "the sort on the interpreter thunk");
}

/* The child's checks (HLO_CUDA_LIB is the mock): exit status 0 passed, 1
 * failed, 3 skipped (the backend does not start for a reason that is not
 * the mock's: no cuBLASLt, no NVRTC). */
static int mock_child(void) {
  const backend *be = NULL;
  hlo_status st = backend_cuda(&be);
  if (st) {
    printf("mock_driver: skipped: the backend does not start on the mock: %s\n",
           hlo_status_message(st));
    hlo_status_free(st);
    return 3;
  }
  void *mock = dlopen(getenv("HLO_CUDA_LIB"), RTLD_NOW | RTLD_NOLOAD);
  CHECK(mock != NULL);
  if (!mock || !host_kernel()) return 1;
  void **hook = dlsym(mock, "mock_hook");
  int *launches = dlsym(mock, "mock_launches"), *modules = dlsym(mock, "mock_modules");
  g_shared_optin = dlsym(mock, "mock_shared_optin");
  CHECK(hook && launches && modules && g_shared_optin);
  if (!hook || !launches || !modules || !g_shared_optin) return 1;
  *(mock_hook_fn *)hook = emulate_launch;
  int modules0 = *modules; /* the backend's own (copy kernels, ...) */
  /* with the backend started, sort_takes loads the kernel, once, and
   * answers for the device's shared memory: rows of 4096 f32 now fit */
  int64_t dims[2] = {2, 4096};
  hlo_dtype dt = HLO_F32;
  backend_sort s = make_sort(2, dims, 1, 1, &dt);
  s.nkeys = 1;
  s.keys[0].operand = 0;
  s.keys[0].part = -1;
  s.keys[0].dtype = HLO_F32;
  s.keys[0].cmp = BACKEND_SORT_FLOAT;
  CHECK(cuda_sort_takes(&s));
  CHECK_EQ_INT(*modules, modules0 + 1);
  CHECK_EQ_INT(*g_shared_optin, 232448);
  CHECK(cuda_sort_takes(&s));
  CHECK_EQ_INT(*modules, modules0 + 1);
  s.dims[1] = INT32_MAX; /* past 1 GiB of scratch */
  CHECK(!cuda_sort_takes(&s));
  make_cases();
  int expect = 0;
  for (int i = 0; i < num_cases; i++) {
    cuda_sort_desc d;
    cuda_sort_geometry g;
    bool planned = cuda_sort_plan(&cases[i].s, 232448, NULL, NULL, &d, &g);
    expect += planned && d.nrows > 0;
  }
  int before = *launches;
  printf("mock driver: the backend's sort slots are %s\n",
         be->sort ? "cuda_sort.h's" : "not wired yet (cuda_sort runs them)");
  CHECK_EQ_INT(run_on_backend(be, "mock driver"), 0);
  CHECK_EQ_INT(*launches - before, expect); /* one launch a case, none for an empty tensor */
  CHECK_EQ_INT(*modules, modules0 + 1);
  CHECK_EQ_INT(g_bad_launches, 0);
  /* a form not taken: an error before anything is launched */
  s.dims[1] = INT32_MAX;
  void *ptrs[1] = {NULL};
  hlo_status e = cuda_sort(&s, ptrs, ptrs);
  CHECK(e && hlo_status_code_of(e) == HLO_UNIMPLEMENTED);
  CHECK(e && strstr(hlo_status_message(e), "scratch"));
  hlo_status_free(e);
  CHECK_EQ_INT(*launches - before, expect);
  programs_on_cuda(be, launches);
  CHECK_EQ_INT(g_bad_launches, 0);
  return test_failed_checks ? 1 : 0;
}

TEST(mock_driver) {
  if (getenv("HLO_CUDA_SORT_CHILD")) {
    int rc = mock_child();
    fflush(stdout);
    fflush(stderr);
    _exit(rc);
  }
  char lib[4096];
  bool have = cuda_mock_path("mock_driver", lib, sizeof lib);
  CHECK(have);
  if (have) {
    fflush(stdout);
    fflush(stderr);
    pid_t pid = fork();
    CHECK(pid >= 0);
    if (pid == 0) {
      setenv("HLO_CUDA_SORT_CHILD", "1", 1);
      setenv("HLO_CUDA_LIB", lib, 1);
      char *argv[] = {(char *)"test_cuda_sort", NULL};
      execv("/proc/self/exe", argv);
      _exit(99);
    }
    int ws = 0;
    CHECK(pid > 0 && waitpid(pid, &ws, 0) == pid);
    int code = WIFEXITED(ws) ? WEXITSTATUS(ws) : 100 + (WIFSIGNALED(ws) ? WTERMSIG(ws) : 0);
    if (code != 0 && code != 3) fprintf(stderr, "mock_driver: the child exited with %d\n", code);
    CHECK(code == 0 || code == 3);
  }
}

/* Frees the cases (last test). */
TEST(zz_free_cases) {
  for (int i = 0; i < num_cases; i++)
    for (int k = 0; k < BACKEND_SORT_MAX_OPERANDS; k++) {
      free(cases[i].in[k]);
      free(cases[i].ref[k]);
    }
  num_cases = 0;
  if (g_host) dlclose(g_host);
}

TEST_MAIN()
