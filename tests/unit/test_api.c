/* Unit tests of the public C API (include/hlo/hlo.h): loading, errors,
 * running from several threads, argument checks, ownership (run under ASan
 * for leaks). */
#include <math.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include "hlo/hlo.h"
#include "runtime/runtime.h"
#include "support/arena.h"
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

/* Device-resident buffers (hlo_executable_device_put, run_buffers, fetch)
 * on the testing backend cpu-devmem with the N-th allocation failing, for
 * every N until one pass allocates nothing that fails: each call succeeds
 * or says HLO_RESOURCE_EXHAUSTED, and whatever it made is freed (ASan's
 * leak check); the run that goes through gives the right values. */
TEST(device_buffers_out_of_memory) {
  static const char *text =
      "func.func @main(%a: tensor<4x8xf32>, %b: tensor<4x8xf32>) -> (tensor<4x8xf32>, "
      "tensor<4x8xf32>) {\n"
      "  %s = stablehlo.add %a, %b : tensor<4x8xf32>\n"
      "  %e = stablehlo.exponential %s : tensor<4x8xf32>\n"
      "  return %e, %a : tensor<4x8xf32>, tensor<4x8xf32>\n"
      "}\n";
  hlo_module *m = NULL;
  hlo_executable *e = NULL;
  hlo_compile_options o = {.backend = RUNTIME_BACKEND_CPU_DEVMEM, .no_cache = true};
  hlo_status st = hlo_module_parse("oom.mlir", text, strlen(text), &m);
  if (!st) st = hlo_executable_compile(m, NULL, &o, &e);
  if (st && hlo_status_code_of(st) == HLO_UNAVAILABLE) {
    printf("device_buffers_out_of_memory: skipped (%s)\n", hlo_status_message(st));
    hlo_status_free(st);
    hlo_module_destroy(m);
    return;
  }
  CHECK(!st);
  float a[32], b[32];
  for (int i = 0; i < 32; i++) a[i] = 0.01f * (float)i, b[i] = -0.02f * (float)i;
  int64_t dims[2] = {4, 8};
  hlo_buffer_view va = {HLO_F32, 2, dims, a}, vb = {HLO_F32, 2, dims, b};
  bool completed = false;
  int failed_passes = 0;
  for (long n = 1; n < 400 && !st && !completed; n++) {
    hlo_buffer *da = NULL, *db = NULL, **r = NULL;
    hlo_fail_alloc_after = n;
    hlo_status s2 = hlo_executable_device_put(e, &va, &da);
    if (!s2) s2 = hlo_executable_device_put(e, &vb, &db);
    const hlo_buffer *args[2] = {da, db};
    if (!s2) s2 = hlo_executable_run_buffers(e, args, 2, &r);
    if (!s2) s2 = hlo_buffer_fetch(r[0]);
    if (!s2) s2 = hlo_buffer_fetch(r[1]);
    bool injected = hlo_fail_alloc_after == 0;
    hlo_fail_alloc_after = 0;
    if (s2) {
      failed_passes++;
      CHECK(injected && hlo_status_code_of(s2) == HLO_RESOURCE_EXHAUSTED);
      if (!injected || hlo_status_code_of(s2) != HLO_RESOURCE_EXHAUSTED)
        fprintf(stderr, "allocation %ld: %s\n", n, hlo_status_message(s2));
      hlo_status_free(s2);
    } else if (!injected) {
      completed = true;
      const float *r0 = hlo_buffer_data(r[0]), *r1 = hlo_buffer_data(r[1]);
      CHECK(r0 && r1);
      for (int i = 0; r0 && r1 && i < 32; i++) {
        CHECK(fabsf(r0[i] - expf(a[i] + b[i])) <= 1e-5f * expf(a[i] + b[i]));
        CHECK(r1[i] == a[i]);
      }
    }
    if (r) {
      hlo_buffer_destroy(r[0]);
      hlo_buffer_destroy(r[1]);
      free(r);
    }
    hlo_buffer_destroy(da);
    hlo_buffer_destroy(db);
  }
  CHECK(completed);
  CHECK(failed_passes > 0);
  printf("device_buffers_out_of_memory: %d passes failed cleanly before one ran\n", failed_passes);
  if (st) hlo_status_free(st);
  hlo_executable_destroy(e);
  hlo_module_destroy(m);
}

/* NULL where a pointer is expected: an error or a neutral answer, never a
 * crash. */
TEST(device_buffer_calls_with_null) {
  hlo_buffer **r = NULL;
  hlo_buffer *b = NULL;
  int64_t d[1] = {2};
  float x[2] = {1, 2};
  hlo_buffer_view v = {HLO_F32, 1, d, x};
  hlo_status st = hlo_executable_run_buffers(NULL, NULL, 0, &r);
  CHECK(st && hlo_status_code_of(st) == HLO_INVALID_ARGUMENT);
  hlo_status_free(st);
  st = hlo_executable_device_put(NULL, &v, &b);
  CHECK(st && hlo_status_code_of(st) == HLO_INVALID_ARGUMENT);
  hlo_status_free(st);
  st = hlo_executable_run(NULL, &v, 1, &r);
  CHECK(st && hlo_status_code_of(st) == HLO_INVALID_ARGUMENT);
  hlo_status_free(st);
  CHECK(hlo_buffer_data(NULL) == NULL);
  CHECK(hlo_buffer_dims(NULL) == NULL);
  CHECK(hlo_buffer_nbytes(NULL) == 0);
  CHECK(hlo_buffer_tuple_size(NULL) == -1);
  CHECK(hlo_buffer_tuple_element(NULL, 0) == NULL);
  CHECK(!hlo_buffer_on_device(NULL));
  CHECK(!hlo_buffer_fetch(NULL));
  /* with an executable: NULL result pointers */
  const char *t = "func.func @main(%a: tensor<2xf32>) -> tensor<2xf32> {\n"
                  "  return %a : tensor<2xf32>\n}\n";
  hlo_module *m = NULL;
  hlo_executable *e = NULL;
  st = hlo_module_parse("null.mlir", t, strlen(t), &m);
  if (!st) st = hlo_executable_create(m, NULL, HLO_BACKEND_INTERP, &e);
  CHECK(!st);
  if (!st) {
    hlo_status s2 = hlo_executable_device_put(e, &v, NULL);
    CHECK(s2 && hlo_status_code_of(s2) == HLO_INVALID_ARGUMENT);
    hlo_status_free(s2);
    s2 = hlo_executable_device_put(e, NULL, &b);
    CHECK(s2 && hlo_status_code_of(s2) == HLO_INVALID_ARGUMENT);
    hlo_status_free(s2);
    s2 = hlo_executable_run_buffers(e, NULL, 1, NULL);
    CHECK(s2 && hlo_status_code_of(s2) == HLO_INVALID_ARGUMENT);
    hlo_status_free(s2);
  }
  hlo_status_free(st);
  hlo_executable_destroy(e);
  hlo_module_destroy(m);
}

/* The module and executable entry points with NULL pointers: an
 * HLO_INVALID_ARGUMENT status (or an empty answer from a getter), never a
 * crash; arg_type's out-pointers may each be NULL. */
TEST(module_and_executable_calls_with_null) {
  const char *t = "func.func @main(%a: tensor<2xf32>) -> tensor<2xf32> {\n"
                  "  return %a : tensor<2xf32>\n}\n";
  hlo_module *m = NULL;
  hlo_executable *e = NULL;
  hlo_status st = hlo_module_parse("null.mlir", t, strlen(t), NULL);
  CHECK(st && hlo_status_code_of(st) == HLO_INVALID_ARGUMENT);
  hlo_status_free(st);
  st = hlo_module_parse("null.mlir", NULL, 5, &m);
  CHECK(st && hlo_status_code_of(st) == HLO_INVALID_ARGUMENT);
  CHECK(m == NULL);
  hlo_status_free(st);
  st = hlo_module_load(NULL, &m);
  CHECK(st && hlo_status_code_of(st) == HLO_INVALID_ARGUMENT);
  hlo_status_free(st);
  st = hlo_module_load("null.mlir", NULL);
  CHECK(st && hlo_status_code_of(st) == HLO_INVALID_ARGUMENT);
  hlo_status_free(st);
  st = hlo_executable_create(NULL, NULL, HLO_BACKEND_INTERP, &e);
  CHECK(st && hlo_status_code_of(st) == HLO_INVALID_ARGUMENT);
  CHECK(e == NULL);
  hlo_status_free(st);
  CHECK_EQ_INT(hlo_executable_num_args(NULL), 0);
  CHECK_EQ_INT(hlo_executable_num_results(NULL), 0);
  st = hlo_executable_arg_type(NULL, 0, NULL, NULL, NULL);
  CHECK(st && hlo_status_code_of(st) == HLO_INVALID_ARGUMENT);
  hlo_status_free(st);
  st = hlo_module_parse("null.mlir", t, strlen(t), &m);
  CHECK(!st);
  if (st) { hlo_status_free(st); return; }
  st = hlo_executable_create(m, NULL, HLO_BACKEND_INTERP, NULL);
  CHECK(st && hlo_status_code_of(st) == HLO_INVALID_ARGUMENT);
  hlo_status_free(st);
  st = hlo_executable_create(m, NULL, HLO_BACKEND_INTERP, &e);
  CHECK(!st);
  if (!st) {
    int rank = -7;
    hlo_status s2 = hlo_executable_arg_type(e, 0, NULL, &rank, NULL);
    CHECK(s2 == NULL);
    CHECK_EQ_INT(rank, 1);
    hlo_status_free(s2);
  }
  hlo_status_free(st);
  hlo_executable_destroy(e);
  hlo_module_destroy(m);
}

TEST_MAIN()
