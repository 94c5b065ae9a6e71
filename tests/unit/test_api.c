/* Unit tests of the public C API (include/hlo/hlo.h): loading, errors,
 * running from several threads, argument checks, ownership (run under ASan
 * for leaks). */
#include <pthread.h>

#include "hlo/hlo.h"
#include "test.h"

static const char *loop_prog =
    "func.func @main(%n: tensor<i32>) -> tensor<i32> {\n"
    "  %c0 = stablehlo.constant dense<0> : tensor<i32>\n"
    "  %c1 = stablehlo.constant dense<1> : tensor<i32>\n"
    "  %r:2 = stablehlo.while(%i = %c0, %acc = %c0) : tensor<i32>, tensor<i32>\n"
    "    cond {\n"
    "      %p = stablehlo.compare LT, %i, %n : (tensor<i32>, tensor<i32>) -> tensor<i1>\n"
    "      stablehlo.return %p : tensor<i1>\n"
    "    } do {\n"
    "      %i1 = stablehlo.add %i, %c1 : tensor<i32>\n"
    "      %a1 = stablehlo.add %acc, %i : tensor<i32>\n"
    "      stablehlo.return %i1, %a1 : tensor<i32>, tensor<i32>\n"
    "    }\n"
    "  return %r#1 : tensor<i32>\n"
    "}\n";

typedef struct job {
  hlo_module *m;
  hlo_executable *e; /* shared, or NULL: make one per thread */
  int32_t n;
  int ok;
} job;

static void *worker(void *p) {
  job *j = p;
  hlo_executable *e = j->e;
  if (!e && hlo_executable_create(j->m, NULL, HLO_BACKEND_INTERP, &e)) return NULL;
  j->ok = 1;
  for (int rep = 0; rep < 20; rep++) {
    hlo_buffer_view v = {HLO_I32, 0, NULL, &j->n};
    hlo_buffer **res = NULL;
    hlo_status st = hlo_executable_run(e, &v, 1, &res);
    if (st) { hlo_status_free(st); j->ok = 0; break; }
    int32_t got = *(const int32_t *)hlo_buffer_data(res[0]);
    if (got != j->n * (j->n - 1) / 2) j->ok = 0;
    hlo_buffer_destroy(res[0]);
    free(res);
  }
  if (!j->e) hlo_executable_destroy(e);
  return NULL;
}

static void run_threads(hlo_module *m, hlo_executable *shared) {
  pthread_t th[4];
  job jobs[4];
  for (int i = 0; i < 4; i++) {
    jobs[i] = (job){m, shared, 100 * (i + 1), 0};
    pthread_create(&th[i], NULL, worker, &jobs[i]);
  }
  for (int i = 0; i < 4; i++) {
    pthread_join(th[i], NULL);
    CHECK(jobs[i].ok);
  }
}

TEST(one_executable_many_threads) {
  hlo_module *m;
  hlo_status st = hlo_module_parse("loop.mlir", loop_prog, strlen(loop_prog), &m);
  CHECK(st == NULL);
  if (st) { hlo_status_print(st, stderr); hlo_status_free(st); return; }
  hlo_executable *e;
  CHECK(hlo_executable_create(m, NULL, HLO_BACKEND_INTERP, &e) == NULL);
  run_threads(m, e);
  hlo_executable_destroy(e);
  hlo_module_destroy(m);
}

TEST(executables_created_in_many_threads) {
  hlo_module *m;
  CHECK(hlo_module_parse("loop.mlir", loop_prog, strlen(loop_prog), &m) == NULL);
  run_threads(m, NULL);
  hlo_module_destroy(m);
}

/* A dynamic-shape program: result = sum over the rows of x (b x 2), b from the input. */
static const char *dyn_prog =
    "func.func @main(%x: tensor<?x2xf32>) -> tensor<2xf32> {\n"
    "  %z = stablehlo.constant dense<0.0> : tensor<f32>\n"
    "  %r = stablehlo.reduce(%x init: %z) applies stablehlo.add across dimensions = [0] : "
    "(tensor<?x2xf32>, tensor<f32>) -> tensor<2xf32>\n"
    "  return %r : tensor<2xf32>\n"
    "}\n";

typedef struct dyn_job {
  hlo_executable *e;
  int first;
  int ok;
} dyn_job;

/* Runs sizes first, first+1, ... (12 distinct sizes per thread, more than the
 * 8 shape signatures an executable keeps): every result must be right, and
 * reading the results must not touch a specialization that another thread's
 * run evicted (a use-after-free ASan found). */
static void *dyn_worker(void *p) {
  dyn_job *j = p;
  j->ok = 1;
  float x[2 * 40];
  for (int i = 0; i < 80; i++) x[i] = (float)(i % 2 ? 2 : 1);
  for (int rep = 0; rep < 36 && j->ok; rep++) {
    int64_t dims[2] = {j->first + rep % 12, 2};
    hlo_buffer_view v = {HLO_F32, 2, dims, x};
    hlo_buffer **res = NULL;
    hlo_status st = hlo_executable_run(j->e, &v, 1, &res);
    if (st) { hlo_status_print(st, stderr); hlo_status_free(st); j->ok = 0; break; }
    const float *r = hlo_buffer_data(res[0]);
    if (hlo_buffer_rank(res[0]) != 1 || hlo_buffer_dims(res[0])[0] != 2 ||
        r[0] != (float)dims[0] || r[1] != (float)(2 * dims[0]))
      j->ok = 0;
    hlo_buffer_destroy(res[0]);
    free(res);
  }
  return NULL;
}

TEST(dynamic_shapes_many_threads_past_the_cache) {
  hlo_module *m;
  hlo_status st = hlo_module_parse("dyn.mlir", dyn_prog, strlen(dyn_prog), &m);
  CHECK(st == NULL);
  if (st) { hlo_status_print(st, stderr); hlo_status_free(st); return; }
  hlo_executable *e;
  CHECK(hlo_executable_create(m, NULL, HLO_BACKEND_INTERP, &e) == NULL);
  pthread_t th[4];
  dyn_job jobs[4];
  for (int i = 0; i < 4; i++) {
    jobs[i] = (dyn_job){e, 1 + 7 * i, 0};
    pthread_create(&th[i], NULL, dyn_worker, &jobs[i]);
  }
  for (int i = 0; i < 4; i++) {
    pthread_join(th[i], NULL);
    CHECK(jobs[i].ok);
  }
  hlo_executable_destroy(e);
  hlo_module_destroy(m);
}

TEST(argument_errors) {
  hlo_module *m;
  CHECK(hlo_module_parse("loop.mlir", loop_prog, strlen(loop_prog), &m) == NULL);
  hlo_executable *e;
  CHECK(hlo_executable_create(m, NULL, HLO_BACKEND_INTERP, &e) == NULL);
  CHECK_EQ_INT(hlo_executable_num_args(e), 1);
  CHECK_EQ_INT(hlo_executable_num_results(e), 1);
  hlo_buffer **res = NULL;
  hlo_status st = hlo_executable_run(e, NULL, 1, &res); /* NULL array */
  CHECK_EQ_INT(hlo_status_code_of(st), HLO_INVALID_ARGUMENT);
  hlo_status_free(st);
  float x = 1;
  hlo_buffer_view v = {HLO_F32, 0, NULL, &x}; /* wrong element type */
  st = hlo_executable_run(e, &v, 1, &res);
  CHECK_EQ_INT(hlo_status_code_of(st), HLO_INVALID_ARGUMENT);
  CHECK(strstr(hlo_status_message(st), "tensor<i32>") != NULL);
  hlo_status_free(st);
  st = hlo_executable_run(e, &v, 2, &res); /* wrong count */
  CHECK_EQ_INT(hlo_status_code_of(st), HLO_INVALID_ARGUMENT);
  hlo_status_free(st);
  hlo_dtype dt;
  int rank;
  const int64_t *dims;
  CHECK(hlo_executable_arg_type(e, 0, &dt, &rank, &dims) == NULL);
  CHECK(dt == HLO_I32 && rank == 0);
  st = hlo_executable_arg_type(e, 5, &dt, &rank, &dims);
  CHECK_EQ_INT(hlo_status_code_of(st), HLO_OUT_OF_RANGE);
  hlo_status_free(st);
  hlo_executable_destroy(e);
  st = hlo_executable_create(m, "nope", HLO_BACKEND_INTERP, &e);
  CHECK_EQ_INT(hlo_status_code_of(st), HLO_NOT_FOUND);
  hlo_status_free(st);
  hlo_module_destroy(m);
}

TEST(load_errors) {
  hlo_module *m = NULL;
  hlo_status st = hlo_module_load("/nonexistent/x.mlir", &m);
  CHECK_EQ_INT(hlo_status_code_of(st), HLO_NOT_FOUND);
  CHECK(m == NULL);
  hlo_status_free(st);
  st = hlo_module_load("/tmp", &m); /* a directory */
  CHECK_EQ_INT(hlo_status_code_of(st), HLO_NOT_FOUND);
  CHECK(strstr(hlo_status_message(st), "directory") != NULL);
  hlo_status_free(st);
  const char *bad = "func.func @main() {\n  %0 = stablehlo.bogus : tensor<f32>\n}\n";
  st = hlo_module_parse("bad.mlir", bad, strlen(bad), &m);
  CHECK_EQ_INT(hlo_status_code_of(st), HLO_PARSE_ERROR);
  hlo_status_free(st);
  const char *invalid =
      "func.func @main(%a: tensor<2xf32>) -> tensor<3xf32> {\n"
      "  %0 = stablehlo.reshape %a : (tensor<2xf32>) -> tensor<3xf32>\n"
      "  return %0 : tensor<3xf32>\n}\n";
  st = hlo_module_parse("invalid.mlir", invalid, strlen(invalid), &m);
  CHECK_EQ_INT(hlo_status_code_of(st), HLO_VERIFY_ERROR);
  CHECK(strstr(hlo_status_message(st), "reshape") != NULL);
  hlo_status_free(st);
}

TEST_MAIN()
