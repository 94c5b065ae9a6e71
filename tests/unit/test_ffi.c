/* test_ffi.c — custom-call handlers registered through the public API
 * (include/hlo/hlo.h, "custom calls (FFI)"; src/runtime/ffi.c over
 * src/interp/custom_call_registry.c): a registered target runs on the
 * interpreter and the CPU backend with typed buffers and its decoded
 * configuration; a handler's error fails the run, located at the op;
 * unregistering; unknown targets and platforms; bad registrations; a
 * handler that unregisters itself; an executable compiled (and cached)
 * before its handler existed; registrations from several threads while
 * runs call them. Every compile uses a private cache folder. */
#include <pthread.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "hlo/hlo.h"
#include "support/status.h"
#include "test.h"

static char cache_dir[64];

/* The private cache root (made once; removed at exit). */
static void rm_cache(void) {
  char cmd[128];
  snprintf(cmd, sizeof cmd, "rm -rf '%s'", cache_dir);
  if (system(cmd) != 0) fprintf(stderr, "could not remove %s\n", cache_dir);
}
static const char *cache_root(void) {
  if (!cache_dir[0]) {
    snprintf(cache_dir, sizeof cache_dir, "/tmp/hlo-ffi-test-XXXXXX");
    if (!mkdtemp(cache_dir)) return "off";
    atexit(rm_cache);
  }
  return cache_dir;
}

/* Parses `text` and compiles its @main for `backend` (cache in the private
 * root); NULL (and the error printed) on failure. */
static hlo_executable *compile(const char *text, hlo_module **out_m, hlo_backend_kind backend) {
  hlo_module *m = NULL;
  hlo_status st = hlo_module_parse("ffi.mlir", text, strlen(text), &m);
  if (st) {
    hlo_status_print(st, stderr);
    hlo_status_free(st);
    return NULL;
  }
  hlo_compile_options o = {0};
  o.backend = backend;
  o.cache_dir = cache_root();
  hlo_executable *e = NULL;
  st = hlo_executable_compile(m, NULL, &o, &e);
  if (st) {
    hlo_status_print(st, stderr);
    hlo_status_free(st);
    hlo_module_destroy(m);
    return NULL;
  }
  *out_m = m;
  return e;
}

static void free_results(hlo_buffer **r, int n) {
  if (!r) return;
  for (int i = 0; i < n; i++) hlo_buffer_destroy(r[i]);
  free(r);
}

/* ---------------------------------------------------------------- handlers */

/* What the last call of `scale` saw. */
typedef struct seen {
  int calls;
  char target[64], config[64], file[64];
  int api_version, num_operands, num_results;
  bool side_effect;
  unsigned line, column;
} seen;

/* results[0] = operands[0] * *(float *)ud->factor: f32 only. */
typedef struct scale_ctx {
  float factor;
  seen s;
} scale_ctx;

static hlo_status scale(void *user_data, const hlo_custom_call_info *info,
                        const hlo_buffer_view *operands, int num_operands,
                        const hlo_buffer_view *results, int num_results) {
  scale_ctx *c = user_data;
  c->s.calls++;
  snprintf(c->s.target, sizeof c->s.target, "%s", info->target);
  snprintf(c->s.config, sizeof c->s.config, "%.*s", (int)info->backend_config_len,
           info->backend_config);
  snprintf(c->s.file, sizeof c->s.file, "%s", info->file ? info->file : "");
  c->s.api_version = info->api_version;
  c->s.side_effect = info->has_side_effect;
  c->s.line = info->line;
  c->s.column = info->column;
  c->s.num_operands = num_operands;
  c->s.num_results = num_results;
  if (num_operands != 1 || num_results != 1 || operands[0].dtype != HLO_F32 ||
      results[0].dtype != HLO_F32 || operands[0].rank != results[0].rank)
    return hlo_status_create(HLO_INVALID_ARGUMENT, "scale: expected one f32 operand and result");
  int64_t n = 1;
  for (int d = 0; d < operands[0].rank; d++) n *= operands[0].dims[d];
  const float *x = operands[0].data;
  float *y = results[0].data;
  for (int64_t i = 0; i < n; i++) y[i] = x[i] * c->factor;
  return NULL;
}

/* Always fails, with a message carrying the first operand element. */
static hlo_status failing(void *user_data, const hlo_custom_call_info *info,
                          const hlo_buffer_view *operands, int num_operands,
                          const hlo_buffer_view *results, int num_results) {
  char msg[64];
  snprintf(msg, sizeof msg, "bad value %g", (double)((const float *)operands[0].data)[0]);
  return hlo_status_create(HLO_FAILED_CHECK, msg);
}

/* (token, i32[2]) -> (token, i32[2]): results[1] = operands[1] + 1; counts
 * the token views it was given. */
static hlo_status with_token(void *user_data, const hlo_custom_call_info *info,
                             const hlo_buffer_view *operands, int num_operands,
                             const hlo_buffer_view *results, int num_results) {
  int *tokens = user_data;
  for (int i = 0; i < num_operands; i++)
    if (operands[i].rank == HLO_RANK_TOKEN && !operands[i].data && !operands[i].dims) ++*tokens;
  for (int i = 0; i < num_results; i++)
    if (results[i].rank == HLO_RANK_TOKEN && !results[i].data) ++*tokens;
  if (num_operands != 2 || num_results != 2 || results[1].dtype != HLO_I32)
    return hlo_status_create(HLO_INVALID_ARGUMENT, "with_token: wrong signature");
  const int32_t *x = operands[1].data;
  int32_t *y = results[1].data;
  for (int i = 0; i < 2; i++) y[i] = x[i] + 1;
  return NULL;
}

/* ------------------------------------------------------------------ tests */

static const char *scale_program =
    "func.func @main(%x: tensor<4xf32>) -> tensor<4xf32> {\n"
    "  %a = stablehlo.add %x, %x : tensor<4xf32>\n"
    "  %c = stablehlo.custom_call @test_ffi_scale(%a) {backend_config = \"factor\", "
    "api_version = 2 : i32} : (tensor<4xf32>) -> tensor<4xf32>\n"
    "  %d = stablehlo.multiply %c, %x : tensor<4xf32>\n"
    "  return %d : tensor<4xf32>\n}\n";

/* Runs `e` on x = [1, 2, 3, 4]; the single f32[4] result into y. */
static hlo_status run4(hlo_executable *e, float *y) {
  float x[4] = {1, 2, 3, 4};
  int64_t dims[1] = {4};
  hlo_buffer_view v = {HLO_F32, 1, dims, x};
  hlo_buffer **r = NULL;
  hlo_status st = hlo_executable_run(e, &v, 1, &r);
  if (!st) {
    if (hlo_buffer_nbytes(r[0]) == sizeof(float) * 4) memcpy(y, hlo_buffer_data(r[0]), 16);
    free_results(r, 1);
  }
  return st;
}

TEST(registered_target_runs_on_interp_and_cpu) {
  scale_ctx c = {3.0f, {0}};
  hlo_status st = hlo_custom_call_register("test_ffi_scale", "cpu", scale, &c);
  CHECK(st == NULL);
  hlo_status_free(st);
  hlo_backend_kind kinds[2] = {HLO_BACKEND_INTERP, HLO_BACKEND_CPU};
  for (int k = 0; k < 2; k++) {
    hlo_module *m = NULL;
    hlo_executable *e = compile(scale_program, &m, kinds[k]);
    CHECK(e != NULL);
    if (!e) continue;
    float y[4] = {0};
    memset(&c.s, 0, sizeof c.s);
    st = run4(e, y);
    CHECK(st == NULL);
    if (st) hlo_status_print(st, stderr);
    hlo_status_free(st);
    for (int i = 0; i < 4; i++) CHECK(y[i] == (float)(i + 1) * 2 * 3 * (float)(i + 1));
    CHECK_EQ_INT(c.s.calls, 1);
    CHECK_STR(c.s.target, "test_ffi_scale");
    CHECK_STR(c.s.config, "factor");
    CHECK_STR(c.s.file, "ffi.mlir");
    CHECK_EQ_INT(c.s.api_version, 2);
    CHECK(!c.s.side_effect);
    CHECK_EQ_INT(c.s.line, 3);
    CHECK_EQ_INT(c.s.column, 8);
    CHECK_EQ_INT(c.s.num_operands, 1);
    CHECK_EQ_INT(c.s.num_results, 1);
    hlo_executable_destroy(e);
    hlo_module_destroy(m);
  }
  st = hlo_custom_call_unregister("test_ffi_scale", "cpu");
  CHECK(st == NULL);
  hlo_status_free(st);
}

TEST(dictionary_config_tokens_and_several_results) {
  const char *text =
      "func.func @main(%t: !stablehlo.token, %x: tensor<2xi32>) -> (!stablehlo.token, "
      "tensor<2xi32>) {\n"
      "  %0:2 = stablehlo.custom_call @test_ffi_token(%t, %x) {backend_config = \"\", "
      "has_side_effect = true, mhlo.backend_config = {index = 7 : ui64}} : "
      "(!stablehlo.token, tensor<2xi32>) -> (!stablehlo.token, tensor<2xi32>)\n"
      "  return %0#0, %0#1 : !stablehlo.token, tensor<2xi32>\n}\n";
  int tokens = 0;
  hlo_status st = hlo_custom_call_register("test_ffi_token", "*", with_token, &tokens);
  CHECK(st == NULL);
  hlo_status_free(st);
  /* A second handler on "cpu" sees the config (and wins over "*"). */
  scale_ctx c = {1.0f, {0}};
  hlo_backend_kind kinds[2] = {HLO_BACKEND_INTERP, HLO_BACKEND_CPU};
  for (int k = 0; k < 2; k++) {
    hlo_module *m = NULL;
    hlo_executable *e = compile(text, &m, kinds[k]);
    CHECK(e != NULL);
    if (!e) continue;
    int32_t x[2] = {41, -1};
    int64_t dims[1] = {2};
    hlo_buffer_view v[2] = {{HLO_DTYPE_COUNT, HLO_RANK_TOKEN, NULL, NULL}, {HLO_I32, 1, dims, x}};
    hlo_buffer **r = NULL;
    tokens = 0;
    st = hlo_executable_run(e, v, 2, &r);
    CHECK(st == NULL);
    if (st) hlo_status_print(st, stderr);
    hlo_status_free(st);
    if (r) {
      CHECK_EQ_INT(hlo_buffer_rank(r[0]), HLO_RANK_TOKEN);
      const int32_t *y = hlo_buffer_data(r[1]);
      CHECK(y && y[0] == 42 && y[1] == 0);
    }
    CHECK_EQ_INT(tokens, 2);
    free_results(r, 2);
    /* The same program with a cpu registration that records the config. */
    st = hlo_custom_call_register("test_ffi_token", "cpu", scale, &c);
    CHECK(st == NULL);
    hlo_status_free(st);
    st = hlo_executable_run(e, v, 2, &r);
    CHECK_EQ_INT(hlo_status_code_of(st), HLO_INVALID_ARGUMENT);   /* scale's own check */
    CHECK(st && strstr(hlo_status_message(st), "scale: expected one f32"));
    hlo_status_free(st);
    CHECK_EQ_INT(c.s.calls, k + 1);
    CHECK_STR(c.s.config, "{index = 7 : ui64}");
    CHECK(c.s.side_effect);
    CHECK_EQ_INT(c.s.api_version, 1);
    st = hlo_custom_call_unregister("test_ffi_token", "cpu");
    CHECK(st == NULL);
    hlo_status_free(st);
    hlo_executable_destroy(e);
    hlo_module_destroy(m);
  }
  st = hlo_custom_call_unregister("test_ffi_token", "*");
  CHECK(st == NULL);
  hlo_status_free(st);
}

TEST(handler_error_is_located_at_the_op) {
  const char *text =
      "func.func @main(%x: tensor<4xf32>) -> tensor<4xf32> {\n"
      "  %a = stablehlo.negate %x : tensor<4xf32>\n"
      "  %c = stablehlo.custom_call @test_ffi_fail(%a) : (tensor<4xf32>) -> tensor<4xf32>\n"
      "  return %c : tensor<4xf32>\n}\n";
  hlo_status st = hlo_custom_call_register("test_ffi_fail", "cpu", failing, NULL);
  CHECK(st == NULL);
  hlo_status_free(st);
  hlo_backend_kind kinds[2] = {HLO_BACKEND_INTERP, HLO_BACKEND_CPU};
  for (int k = 0; k < 2; k++) {
    hlo_module *m = NULL;
    hlo_executable *e = compile(text, &m, kinds[k]);
    CHECK(e != NULL);
    if (!e) continue;
    float y[4];
    st = run4(e, y);
    CHECK_EQ_INT(hlo_status_code_of(st), HLO_FAILED_CHECK);
    CHECK(st && strstr(hlo_status_message(st), "test_ffi_fail"));
    CHECK(st && strstr(hlo_status_message(st), "bad value -1"));
    const hlo_loc *loc = status_loc(st);
    CHECK(loc && loc->line == 3 && loc->col == 8);
    CHECK(status_file(st) && !strcmp(status_file(st), "ffi.mlir"));
    hlo_status_free(st);
    hlo_executable_destroy(e);
    hlo_module_destroy(m);
  }
  st = hlo_custom_call_unregister("test_ffi_fail", "cpu");
  CHECK(st == NULL);
  hlo_status_free(st);
}

TEST(unregistered_and_unknown_targets) {
  scale_ctx c = {2.0f, {0}};
  hlo_module *m = NULL;
  hlo_executable *e = compile(scale_program, &m, HLO_BACKEND_CPU);
  CHECK(e != NULL);
  if (!e) return;
  float y[4];
  /* Never registered: the unknown-target error, located. */
  hlo_status st = run4(e, y);
  CHECK_EQ_INT(hlo_status_code_of(st), HLO_NOT_FOUND);
  CHECK(st && strstr(hlo_status_message(st), "custom_call target 'test_ffi_scale' is not "
                                             "registered"));
  CHECK(st && strstr(hlo_status_message(st), "hlo_custom_call_register"));
  CHECK(status_loc(st) && status_loc(st)->line == 3);
  hlo_status_free(st);
  /* Registered for another platform only: said so. */
  st = hlo_custom_call_register("test_ffi_scale", "cuda", scale, &c);
  CHECK(st == NULL);
  hlo_status_free(st);
  st = run4(e, y);
  CHECK_EQ_INT(hlo_status_code_of(st), HLO_NOT_FOUND);
  CHECK(st && strstr(hlo_status_message(st), "platform cuda only"));
  hlo_status_free(st);
  /* "*" serves the host platform. */
  st = hlo_custom_call_register("test_ffi_scale", "*", scale, &c);
  CHECK(st == NULL);
  hlo_status_free(st);
  st = run4(e, y);
  CHECK(st == NULL);
  hlo_status_free(st);
  CHECK(y[1] == 2 * 2 * 2 * 2);
  /* Unregistered again: the same executable fails again. */
  st = hlo_custom_call_unregister("test_ffi_scale", "*");
  CHECK(st == NULL);
  hlo_status_free(st);
  st = run4(e, y);
  CHECK_EQ_INT(hlo_status_code_of(st), HLO_NOT_FOUND);
  hlo_status_free(st);
  st = hlo_custom_call_unregister("test_ffi_scale", "*");   /* twice */
  CHECK_EQ_INT(hlo_status_code_of(st), HLO_NOT_FOUND);
  CHECK(st && strstr(hlo_status_message(st), "test_ffi_scale"));
  hlo_status_free(st);
  st = hlo_custom_call_unregister("test_ffi_scale", "cuda");
  CHECK(st == NULL);
  hlo_status_free(st);
  hlo_executable_destroy(e);
  hlo_module_destroy(m);
}

TEST(bad_registrations) {
  struct { const char *target, *platform; hlo_custom_call_fn fn; const char *why; } bad[] = {
      {NULL, "cpu", scale, "no target name"},
      {"", "cpu", scale, "no target name"},
      {"x", "tpu", scale, "platform 'tpu'"},
      {"x", NULL, scale, "platform '(null)'"},
      {"x", "cpu", NULL, "no handler function"},
      {"check.expect_eq", "cpu", scale, "check dialect"},
  };
  for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
    hlo_status st = hlo_custom_call_register(bad[i].target, bad[i].platform, bad[i].fn, NULL);
    CHECK_EQ_INT(hlo_status_code_of(st), HLO_INVALID_ARGUMENT);
    CHECK(st && strstr(hlo_status_message(st), bad[i].why));
    hlo_status_free(st);
  }
  char longname[1100];
  memset(longname, 'a', sizeof longname - 1);
  longname[sizeof longname - 1] = '\0';
  hlo_status st = hlo_custom_call_register(longname, "cpu", scale, NULL);
  CHECK_EQ_INT(hlo_status_code_of(st), HLO_INVALID_ARGUMENT);
  hlo_status_free(st);
  /* Twice on one platform: refused; on another platform: fine. */
  st = hlo_custom_call_register("test_ffi_dup", "cpu", scale, NULL);
  CHECK(st == NULL);
  hlo_status_free(st);
  st = hlo_custom_call_register("test_ffi_dup", "cpu", failing, NULL);
  CHECK_EQ_INT(hlo_status_code_of(st), HLO_INVALID_ARGUMENT);
  CHECK(st && strstr(hlo_status_message(st), "already has a handler"));
  hlo_status_free(st);
  st = hlo_custom_call_register("test_ffi_dup", "*", failing, NULL);
  CHECK(st == NULL);
  hlo_status_free(st);
  st = hlo_custom_call_unregister("test_ffi_dup", "tpu");
  CHECK_EQ_INT(hlo_status_code_of(st), HLO_INVALID_ARGUMENT);
  hlo_status_free(st);
  st = hlo_custom_call_unregister(NULL, "cpu");
  CHECK_EQ_INT(hlo_status_code_of(st), HLO_INVALID_ARGUMENT);
  hlo_status_free(st);
  st = hlo_custom_call_unregister("test_ffi_dup", "cpu");
  CHECK(st == NULL);
  hlo_status_free(st);
  st = hlo_custom_call_unregister("test_ffi_dup", "*");
  CHECK(st == NULL);
  hlo_status_free(st);
  /* hlo_status_create: OK is success, unknown codes are internal. */
  CHECK(hlo_status_create(HLO_OK, "fine") == NULL);
  st = hlo_status_create((hlo_status_code)999, NULL);
  CHECK_EQ_INT(hlo_status_code_of(st), HLO_INTERNAL);
  CHECK_STR(hlo_status_message(st), "");
  hlo_status_free(st);
}

/* A handler that tries to unregister itself: refused (it would wait for
 * itself), and the call still succeeds. */
static hlo_status self_unregister(void *user_data, const hlo_custom_call_info *info,
                                  const hlo_buffer_view *operands, int num_operands,
                                  const hlo_buffer_view *results, int num_results) {
  hlo_status *out = user_data;
  *out = hlo_custom_call_unregister(info->target, "cpu");
  memcpy(results[0].data, operands[0].data, 4 * sizeof(float));
  return NULL;
}

TEST(handler_cannot_unregister_itself) {
  hlo_status inner = NULL;
  hlo_status st = hlo_custom_call_register("test_ffi_scale", "cpu", self_unregister, &inner);
  CHECK(st == NULL);
  hlo_status_free(st);
  hlo_module *m = NULL;
  hlo_executable *e = compile(scale_program, &m, HLO_BACKEND_INTERP);
  CHECK(e != NULL);
  if (e) {
    float y[4];
    st = run4(e, y);
    CHECK(st == NULL);
    hlo_status_free(st);
    CHECK_EQ_INT(hlo_status_code_of(inner), HLO_INVALID_ARGUMENT);
    CHECK(inner && strstr(hlo_status_message(inner), "inside a call of its own handler"));
    hlo_status_free(inner);
    CHECK(y[3] == 4 * 2 * 4);
  }
  st = hlo_custom_call_unregister("test_ffi_scale", "cpu");
  CHECK(st == NULL);
  hlo_status_free(st);
  hlo_executable_destroy(e);
  hlo_module_destroy(m);
}

/* An executable compiled (and stored in the cache) while the target had no
 * handler runs it once registered; a later compile of the same program,
 * served by the cache, too. Nothing about targets is cached. */
TEST(executable_compiled_before_registration) {
  scale_ctx c = {5.0f, {0}};
  hlo_module *m = NULL;
  hlo_executable *e = compile(scale_program, &m, HLO_BACKEND_CPU);
  CHECK(e != NULL);
  if (!e) return;
  float y[4];
  hlo_status st = run4(e, y);
  CHECK_EQ_INT(hlo_status_code_of(st), HLO_NOT_FOUND);
  hlo_status_free(st);
  st = hlo_custom_call_register("test_ffi_scale", "cpu", scale, &c);
  CHECK(st == NULL);
  hlo_status_free(st);
  st = run4(e, y);
  CHECK(st == NULL);
  hlo_status_free(st);
  CHECK(y[0] == 1 * 2 * 5 * 1);
  hlo_module *m2 = NULL;
  hlo_executable *e2 = compile(scale_program, &m2, HLO_BACKEND_CPU);   /* a cache hit */
  CHECK(e2 != NULL);
  if (e2) {
    st = run4(e2, y);
    CHECK(st == NULL);
    hlo_status_free(st);
    CHECK(y[2] == 3 * 2 * 5 * 3);
  }
  st = hlo_custom_call_unregister("test_ffi_scale", "cpu");
  CHECK(st == NULL);
  hlo_status_free(st);
  hlo_executable_destroy(e2);
  hlo_module_destroy(m2);
  hlo_executable_destroy(e);
  hlo_module_destroy(m);
}

/* ------------------------------------------------------------- threads */

static atomic_int stop_flag;
static atomic_int churn_errors;

/* Registers and unregisters its own targets (and the shared one, which runs
 * may then miss) until told to stop. */
static void *churn(void *arg) {
  char name[32];
  snprintf(name, sizeof name, "test_ffi_churn_%d", (int)(intptr_t)arg);
  scale_ctx c = {1.0f, {0}};
  for (int i = 0; i < 300 && !atomic_load(&stop_flag); i++) {
    hlo_status st = hlo_custom_call_register(name, i % 2 ? "cpu" : "*", scale, &c);
    if (st) atomic_fetch_add(&churn_errors, 1);
    hlo_status_free(st);
    st = hlo_custom_call_unregister(name, i % 2 ? "cpu" : "*");
    if (st) atomic_fetch_add(&churn_errors, 1);
    hlo_status_free(st);
  }
  return NULL;
}

typedef struct slow_ctx {
  atomic_int entered, done;
} slow_ctx;

/* Copies its operand after ~50 ms, then says it is done. */
static hlo_status slow(void *user_data, const hlo_custom_call_info *info,
                       const hlo_buffer_view *operands, int num_operands,
                       const hlo_buffer_view *results, int num_results) {
  slow_ctx *c = user_data;
  atomic_store(&c->entered, 1);
  usleep(50000);
  memcpy(results[0].data, operands[0].data, 4 * sizeof(float));
  atomic_store(&c->done, 1);
  return NULL;
}

typedef struct run_arg {
  hlo_executable *e;
  hlo_status st;
} run_arg;

static void *run_thread(void *p) {
  run_arg *a = p;
  float y[4];
  a->st = run4(a->e, y);
  return NULL;
}

TEST(concurrent_registration_and_runs) {
  scale_ctx c = {1.0f, {0}};
  hlo_status st = hlo_custom_call_register("test_ffi_scale", "cpu", scale, &c);
  CHECK(st == NULL);
  hlo_status_free(st);
  hlo_module *m = NULL;
  hlo_executable *e = compile(scale_program, &m, HLO_BACKEND_CPU);
  CHECK(e != NULL);
  if (!e) return;
  pthread_t th[2];
  atomic_store(&stop_flag, 0);
  for (int i = 0; i < 2; i++) CHECK(pthread_create(&th[i], NULL, churn, (void *)(intptr_t)i) == 0);
  int failures = 0;
  for (int i = 0; i < 100; i++) {
    float y[4];
    st = run4(e, y);
    if (st || y[1] != 2 * 2 * 2) failures++;
    hlo_status_free(st);
  }
  atomic_store(&stop_flag, 1);
  for (int i = 0; i < 2; i++) pthread_join(th[i], NULL);
  CHECK_EQ_INT(failures, 0);
  CHECK_EQ_INT(atomic_load(&churn_errors), 0);
  CHECK_EQ_INT(c.s.calls, 100);
  st = hlo_custom_call_unregister("test_ffi_scale", "cpu");
  CHECK(st == NULL);
  hlo_status_free(st);
  /* Unregistering waits for a call in flight on another thread. */
  slow_ctx sc;
  atomic_store(&sc.entered, 0);
  atomic_store(&sc.done, 0);
  st = hlo_custom_call_register("test_ffi_scale", "cpu", slow, &sc);
  CHECK(st == NULL);
  hlo_status_free(st);
  run_arg ra = {e, NULL};
  pthread_t rt;
  CHECK(pthread_create(&rt, NULL, run_thread, &ra) == 0);
  for (int i = 0; i < 2000 && !atomic_load(&sc.entered); i++) usleep(1000);
  CHECK(atomic_load(&sc.entered));
  st = hlo_custom_call_unregister("test_ffi_scale", "cpu");
  CHECK(st == NULL);
  hlo_status_free(st);
  CHECK(atomic_load(&sc.done));   /* the call finished before unregister returned */
  pthread_join(rt, NULL);
  CHECK(ra.st == NULL);
  hlo_status_free(ra.st);
  hlo_executable_destroy(e);
  hlo_module_destroy(m);
}

/* A handler that writes nothing: with output_operand_aliases the result
 * is its operand's value (XLA hands the operand's own buffer), without it
 * zeros; on both backends. */
static hlo_status writes_nothing(void *user_data, const hlo_custom_call_info *info,
                                 const hlo_buffer_view *operands, int num_operands,
                                 const hlo_buffer_view *results, int num_results) {
  (void)user_data, (void)info, (void)operands, (void)num_operands, (void)results,
      (void)num_results;
  return NULL;
}

TEST(output_operand_aliases_start_from_the_operand) {
  const char *text =
      "func.func @main(%x: tensor<4xf32>) -> (tensor<4xf32>, tensor<4xf32>) {\n"
      "  %a = stablehlo.add %x, %x : tensor<4xf32>\n"
      "  %c:2 = stablehlo.custom_call @test_ffi_nothing(%x, %a) {output_operand_aliases = "
      "[#stablehlo.output_operand_alias<output_tuple_indices = [1], operand_index = 1, "
      "operand_tuple_indices = []>]} : (tensor<4xf32>, tensor<4xf32>) -> (tensor<4xf32>, "
      "tensor<4xf32>)\n"
      "  return %c#0, %c#1 : tensor<4xf32>, tensor<4xf32>\n}\n";
  hlo_status st = hlo_custom_call_register("test_ffi_nothing", "*", writes_nothing, NULL);
  CHECK(st == NULL);
  hlo_status_free(st);
  hlo_backend_kind kinds[2] = {HLO_BACKEND_INTERP, HLO_BACKEND_CPU};
  for (int k = 0; k < 2; k++) {
    hlo_module *m = NULL;
    hlo_executable *e = compile(text, &m, kinds[k]);
    CHECK(e != NULL);
    if (!e) continue;
    float x[4] = {1, 2, 3, 4};
    int64_t dims[1] = {4};
    hlo_buffer_view v = {HLO_F32, 1, dims, x};
    hlo_buffer **r = NULL;
    st = hlo_executable_run(e, &v, 1, &r);
    CHECK(st == NULL);
    hlo_status_free(st);
    if (r) {
      const float *y0 = hlo_buffer_data(r[0]), *y1 = hlo_buffer_data(r[1]);
      for (int i = 0; i < 4; i++) CHECK(y0[i] == 0 && y1[i] == 2 * x[i]);
      free_results(r, 2);
    }
    hlo_executable_destroy(e);
    hlo_module_destroy(m);
  }
  st = hlo_custom_call_unregister("test_ffi_nothing", "*");
  hlo_status_free(st);
}

/* A handler that runs the executable it was called from gets an error
 * (the run would wait on its own lock), and that error is the run's. */
static hlo_status reenter(void *user_data, const hlo_custom_call_info *info,
                          const hlo_buffer_view *operands, int num_operands,
                          const hlo_buffer_view *results, int num_results) {
  (void)info, (void)num_operands, (void)num_results, (void)results;
  hlo_executable *e = *(hlo_executable **)user_data;
  hlo_buffer **r = NULL;
  return hlo_executable_run(e, operands, 1, &r); /* fails: r stays NULL */
}

TEST(handler_running_its_own_executable_fails) {
  const char *text =
      "func.func @main(%x: tensor<4xf32>) -> tensor<4xf32> {\n"
      "  %c = stablehlo.custom_call @test_ffi_reenter(%x) : (tensor<4xf32>) -> tensor<4xf32>\n"
      "  return %c : tensor<4xf32>\n}\n";
  static hlo_executable *self;
  hlo_status st = hlo_custom_call_register("test_ffi_reenter", "cpu", reenter, &self);
  CHECK(st == NULL);
  hlo_status_free(st);
  hlo_backend_kind kinds[2] = {HLO_BACKEND_INTERP, HLO_BACKEND_CPU};
  for (int k = 0; k < 2; k++) {
    hlo_module *m = NULL;
    self = compile(text, &m, kinds[k]);
    CHECK(self != NULL);
    if (!self) continue;
    float y[4];
    st = run4(self, y);
    CHECK(st && hlo_status_code_of(st) == HLO_INVALID_ARGUMENT);
    CHECK(st && strstr(hlo_status_message(st), "would wait for itself"));
    hlo_status_free(st);
    /* the executable is usable afterwards: the same error again, no hang */
    st = run4(self, y);
    CHECK(st && hlo_status_code_of(st) == HLO_INVALID_ARGUMENT);
    hlo_status_free(st);
    hlo_executable_destroy(self);
    hlo_module_destroy(m);
  }
  st = hlo_custom_call_unregister("test_ffi_reenter", "cpu");
  hlo_status_free(st);
}

TEST_MAIN()
