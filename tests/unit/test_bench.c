/* test_bench.c — include/hlo/bench.h: the random-input rule of
 * ../shared/tools/xla_run.py (ranges, distribution, f32 rounding, seeds,
 * never all zeros), random inputs for an executable (tokens, dynamic shapes),
 * compile-stage timing and the warm-run timer (counts, adaptive rule,
 * errors). */
#include <math.h>
#include <stdint.h>
#include <string.h>
#include <unistd.h>

#include "hlo/bench.h"
#include "hlo/hlo.h"
#include "ir/element.h"
#include "test.h"

#define N 20000

TEST(integers_small_and_non_negative) {
  static int32_t v[N];
  hlo_rng r;
  hlo_rng_seed(&r, 0);
  hlo_random_fill(&r, HLO_I32, N, v);
  int seen[8] = {0};
  for (int i = 0; i < N; i++) {
    CHECK(v[i] >= 0 && v[i] < 8);
    if (v[i] >= 0 && v[i] < 8) seen[v[i]]++;
  }
  for (int k = 0; k < 8; k++) CHECK(seen[k] > N / 8 - N / 40 && seen[k] < N / 8 + N / 40);
  static uint8_t b[N], i2[N], u2[N];
  hlo_random_fill(&r, HLO_I1, N, b);
  hlo_random_fill(&r, HLO_I2, N, i2);
  hlo_random_fill(&r, HLO_UI2, N, u2);
  int ones = 0, max_u2 = 0;
  for (int i = 0; i < N; i++) {
    CHECK(b[i] <= 1);
    ones += b[i];
    CHECK(elem_get_i64(HLO_I2, i2, i) >= 0 && elem_get_i64(HLO_I2, i2, i) <= 1);
    int64_t u = elem_get_i64(HLO_UI2, u2, i);
    CHECK(u >= 0 && u <= 3);
    if (u > max_u2) max_u2 = (int)u;
  }
  CHECK(ones > N / 2 - N / 20 && ones < N / 2 + N / 20);
  CHECK_EQ_INT(max_u2, 3);
}

TEST(floats_standard_normal_through_f32) {
  static double v[N];
  hlo_rng r;
  hlo_rng_seed(&r, 0);
  hlo_random_fill(&r, HLO_F64, N, v);
  double sum = 0, sq = 0;
  int within1 = 0;
  for (int i = 0; i < N; i++) {
    CHECK(v[i] == (double)(float)v[i]); /* rounded to f32 first, as xla_run.py */
    sum += v[i];
    sq += v[i] * v[i];
    within1 += fabs(v[i]) < 1.0;
  }
  double mean = sum / N, var = sq / N - mean * mean;
  CHECK(fabs(mean) < 0.03);
  CHECK(fabs(var - 1.0) < 0.05);
  CHECK(fabs((double)within1 / N - 0.6827) < 0.02); /* a normal, not a uniform */
  static uint16_t h[N];
  hlo_random_fill(&r, HLO_BF16, N, h);
  int neg = 0;
  for (int i = 0; i < N; i++) {
    double x = elem_get_f64(HLO_BF16, h, i);
    CHECK(isfinite(x));
    neg += x < 0;
  }
  CHECK(neg > N / 2 - N / 20 && neg < N / 2 + N / 20);
  static uint8_t e8[64];
  hlo_random_fill(&r, HLO_F8E8M0FNU, 64, e8);
  for (int i = 0; i < 64; i++) CHECK(!isnan(elem_get_f64(HLO_F8E8M0FNU, e8, i)));
}

TEST(complex_both_parts_random) {
  float c[2 * 1000];
  hlo_rng r;
  hlo_rng_seed(&r, 1);
  hlo_random_fill(&r, HLO_C64, 1000, c);
  double re2 = 0, im2 = 0;
  for (int i = 0; i < 1000; i++) re2 += c[2 * i] * c[2 * i], im2 += c[2 * i + 1] * c[2 * i + 1];
  CHECK(re2 > 800 && re2 < 1200);
  CHECK(im2 > 800 && im2 < 1200);
}

TEST(never_all_zeros) {
  /* f4E2M1FN rounds |x| < 0.25 to 0: a one-element array is zero 20% of
   * the time, but never comes back all zeros */
  for (uint64_t seed = 0; seed < 200; seed++) {
    uint8_t x = 0;
    hlo_rng r;
    hlo_rng_seed(&r, seed);
    hlo_random_fill(&r, HLO_F4E2M1FN, 1, &x);
    CHECK(elem_get_f64(HLO_F4E2M1FN, &x, 0) != 0.0);
  }
}

TEST(seeds) {
  float a[64], b[64], c[64];
  hlo_rng r;
  hlo_rng_seed(&r, 0);
  hlo_random_fill(&r, HLO_F32, 64, a);
  hlo_rng_seed(&r, 0);
  hlo_random_fill(&r, HLO_F32, 64, b);
  hlo_rng_seed(&r, 1);
  hlo_random_fill(&r, HLO_F32, 64, c);
  CHECK(memcmp(a, b, sizeof a) == 0);
  CHECK(memcmp(a, c, sizeof a) != 0);
}

static const char *prog =
    "func.func @main(%t: !stablehlo.token, %x: tensor<3x4xf32>, %n: tensor<i32>) -> "
    "(!stablehlo.token, tensor<3x4xf32>, tensor<i32>) {\n"
    "  %0 = stablehlo.add %x, %x : tensor<3x4xf32>\n"
    "  return %t, %0, %n : !stablehlo.token, tensor<3x4xf32>, tensor<i32>\n"
    "}\n";

TEST(random_inputs_for_an_executable) {
  hlo_module *m = NULL;
  hlo_executable *e = NULL;
  hlo_random_inputs *in = NULL;
  CHECK(hlo_module_parse("t.mlir", prog, strlen(prog), &m) == NULL);
  CHECK(hlo_executable_create(m, NULL, HLO_BACKEND_INTERP, &e) == NULL);
  CHECK(hlo_random_inputs_create(e, 0, &in) == NULL);
  CHECK_EQ_INT(hlo_random_inputs_count(in), 3);
  const hlo_buffer_view *v = hlo_random_inputs_views(in);
  CHECK_EQ_INT(v[0].rank, HLO_RANK_TOKEN);
  CHECK_EQ_INT(v[1].dtype, HLO_F32);
  CHECK_EQ_INT(v[1].rank, 2);
  CHECK(v[1].dims[0] == 3 && v[1].dims[1] == 4);
  CHECK_EQ_INT(v[2].dtype, HLO_I32);
  CHECK_EQ_INT(v[2].rank, 0);
  int32_t n = *(const int32_t *)v[2].data;
  CHECK(n >= 0 && n < 8);
  hlo_buffer **res = NULL;
  CHECK(hlo_executable_run(e, v, 3, &res) == NULL);
  if (res) {
    const float *x = v[1].data, *y = hlo_buffer_data(res[1]);
    CHECK(y[5] == 2 * x[5]);
    for (int k = 0; k < 3; k++) hlo_buffer_destroy(res[k]);
    free(res);
  }
  /* the same seed gives the same inputs; another seed others */
  hlo_random_inputs *again = NULL, *other = NULL;
  CHECK(hlo_random_inputs_create(e, 0, &again) == NULL);
  CHECK(hlo_random_inputs_create(e, 5, &other) == NULL);
  CHECK(memcmp(hlo_random_inputs_views(again)[1].data, v[1].data, 48) == 0);
  CHECK(memcmp(hlo_random_inputs_views(other)[1].data, v[1].data, 48) != 0);
  hlo_random_inputs_destroy(again);
  hlo_random_inputs_destroy(other);
  hlo_random_inputs_destroy(in);
  hlo_executable_destroy(e);
  hlo_module_destroy(m);
}

TEST(random_inputs_need_static_shapes) {
  const char *dyn = "func.func @main(%x: tensor<?x3xf32>) -> tensor<?x3xf32> {\n"
                    "  return %x : tensor<?x3xf32>\n}\n";
  hlo_module *m = NULL;
  hlo_executable *e = NULL;
  hlo_random_inputs *in = NULL;
  CHECK(hlo_module_parse("d.mlir", dyn, strlen(dyn), &m) == NULL);
  CHECK(hlo_executable_create(m, NULL, HLO_BACKEND_INTERP, &e) == NULL);
  hlo_status st = hlo_random_inputs_create(e, 0, &in);
  CHECK_EQ_INT(hlo_status_code_of(st), HLO_UNIMPLEMENTED);
  CHECK(st && strstr(hlo_status_message(st), "tensor<?x3xf32>"));
  CHECK(in == NULL);
  hlo_status_free(st);
  hlo_executable_destroy(e);
  hlo_module_destroy(m);
}

TEST(compile_stages_and_warm_runs) {
  char path[] = "/tmp/hlo_test_bench_XXXXXX.mlir";
  int fd = mkstemps(path, 5);
  CHECK(fd >= 0);
  FILE *f = fd >= 0 ? fdopen(fd, "w") : NULL;
  CHECK(f != NULL);
  if (!f) return;
  fputs(prog, f);
  fclose(f);
  hlo_compile_times ct;
  hlo_module *m = NULL;
  hlo_executable *e = NULL;
  CHECK(hlo_bench_compile(path, NULL, NULL, &ct, &m, &e) == NULL);
  remove(path);
  CHECK_EQ_INT(ct.num_stages, 4);
  CHECK_STR(ct.stages[0].name, "read");
  CHECK_STR(ct.stages[1].name, "parse");
  CHECK_STR(ct.stages[2].name, "verify");
  CHECK_STR(ct.stages[3].name, "prepare");
  double sum = 0;
  for (int i = 0; i < ct.num_stages; i++) {
    sum += ct.stages[i].ms;
    CHECK(ct.stages[i].ms >= 0);
  }
  CHECK(fabs(sum - ct.total_ms) < 1e-9);
  hlo_random_inputs *in = NULL;
  CHECK(hlo_random_inputs_create(e, 0, &in) == NULL);
  const hlo_buffer_view *v = hlo_random_inputs_views(in);
  hlo_bench_result r;
  hlo_bench_options o = {7, 2, 0, 0};
  CHECK(hlo_bench_run(e, v, 3, &o, &r) == NULL);
  CHECK_EQ_INT(r.iters, 7);
  CHECK_EQ_INT(r.warmup, 2);
  CHECK(r.min_us > 0 && r.min_us <= r.median_us && r.median_us <= r.max_us);
  CHECK(r.min_us <= r.mean_us && r.mean_us <= r.max_us);
  /* adaptive: a tiny program against a 20 ms target runs many times, capped */
  o = (hlo_bench_options){0, 0, 0.02, 50};
  CHECK(hlo_bench_run(e, v, 3, &o, &r) == NULL);
  CHECK(r.iters > 1 && r.iters <= 50);
  CHECK_EQ_INT(r.warmup, 1);
  /* no warm-up: the first timed run is the first run */
  o = (hlo_bench_options){1, -1, 0, 0};
  CHECK(hlo_bench_run(e, v, 3, &o, &r) == NULL);
  CHECK(r.iters == 1 && r.warmup == 0 && r.first_us == r.min_us);
  /* errors: adaptive without a warm-up, negative counts, a run's own error */
  o = (hlo_bench_options){0, -1, 0, 0};
  hlo_status st = hlo_bench_run(e, v, 3, &o, &r);
  CHECK_EQ_INT(hlo_status_code_of(st), HLO_INVALID_ARGUMENT);
  hlo_status_free(st);
  o = (hlo_bench_options){-2, 0, 0, 0};
  st = hlo_bench_run(e, v, 3, &o, &r);
  CHECK_EQ_INT(hlo_status_code_of(st), HLO_INVALID_ARGUMENT);
  hlo_status_free(st);
  st = hlo_bench_run(e, v, 2, NULL, &r);
  CHECK_EQ_INT(hlo_status_code_of(st), HLO_INVALID_ARGUMENT);
  hlo_status_free(st);
  hlo_random_inputs_destroy(in);
  hlo_executable_destroy(e);
  hlo_module_destroy(m);
}

TEST(compile_errors) {
  hlo_compile_times ct;
  hlo_module *m = (hlo_module *)1;
  hlo_executable *e = (hlo_executable *)1;
  hlo_status st = hlo_bench_compile("no/such/file.mlir", NULL, NULL, &ct, &m, &e);
  CHECK_EQ_INT(hlo_status_code_of(st), HLO_NOT_FOUND);
  CHECK(m == NULL && e == NULL);
  hlo_status_free(st);
}

TEST_MAIN()
