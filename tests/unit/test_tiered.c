/* test_tiered.c — tiered execution of the CPU backend (docs/tiered.md;
 * src/runtime/tiered.c and api.c): a compile that misses the cache returns
 * before its native code, the first runs are the interpreter's (exactly its
 * results), later runs the native code's (exactly a synchronous compile's),
 * a long interpreted run is cancelled and re-run natively, the compiler's
 * errors come from hlo_executable_wait and the runs, destroying an
 * executable whose compile is running waits for it (and leaves the cache
 * entry), and no_tiering / HLO_TIERING=0 / side effects compile as before.
 *
 * The background compile is made slow on purpose where a test needs the
 * native code pending: HLO_CC is a script that sleeps, then runs the C
 * compiler ($HLO_CC, else cc). Each test has a fresh cache folder. When no
 * C compiler can be started the tests print "skipped" and pass. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include "hlo/hlo.h"
#include "runtime/runtime.h"
#include "runtime/tiered.h"
#include "test.h"

/* Two fusions of elementwise work with transcendentals: kernels to compile. */
static const char *const prog =
    "func.func @main(%x: tensor<64x32xf32>, %y: tensor<64x32xf32>) -> (tensor<64x32xf32>, "
    "tensor<32xf32>) {\n"
    "  %a = stablehlo.exponential %x : tensor<64x32xf32>\n"
    "  %b = stablehlo.tanh %y : tensor<64x32xf32>\n"
    "  %c = stablehlo.multiply %a, %b : tensor<64x32xf32>\n"
    "  %d = stablehlo.add %c, %x : tensor<64x32xf32>\n"
    "  %z = stablehlo.constant dense<0.0> : tensor<f32>\n"
    "  %r = stablehlo.reduce(%d init: %z) applies stablehlo.add across dimensions = [0] :\n"
    "       (tensor<64x32xf32>, tensor<f32>) -> tensor<32xf32>\n"
    "  return %d, %r : tensor<64x32xf32>, tensor<32xf32>\n"
    "}\n";

/* A loop the interpreter takes seconds over (60000 iterations of a fused
 * update of 4096 floats), the native code milliseconds. */
static const char *const loop_prog =
    "func.func @main(%x: tensor<4096xf32>) -> (tensor<4096xf32>, tensor<i32>) {\n"
    "  %i0 = stablehlo.constant dense<0> : tensor<i32>\n"
    "  %r:2 = stablehlo.while(%i = %i0, %v = %x) : tensor<i32>, tensor<4096xf32>\n"
    "  cond {\n"
    "    %n = stablehlo.constant dense<60000> : tensor<i32>\n"
    "    %p = stablehlo.compare LT, %i, %n : (tensor<i32>, tensor<i32>) -> tensor<i1>\n"
    "    stablehlo.return %p : tensor<i1>\n"
    "  } do {\n"
    "    %one = stablehlo.constant dense<1> : tensor<i32>\n"
    "    %i1 = stablehlo.add %i, %one : tensor<i32>\n"
    "    %k = stablehlo.constant dense<0.999> : tensor<4096xf32>\n"
    "    %b = stablehlo.constant dense<0.001> : tensor<4096xf32>\n"
    "    %m = stablehlo.multiply %v, %k : tensor<4096xf32>\n"
    "    %w = stablehlo.add %m, %b : tensor<4096xf32>\n"
    "    stablehlo.return %i1, %w : tensor<i32>, tensor<4096xf32>\n"
    "  }\n"
    "  return %r#1, %r#0 : tensor<4096xf32>, tensor<i32>\n"
    "}\n";

static char work[256];     /* this process's temporary folder */
static int dirs_made;

/* A fresh cache folder under `work` (static storage, until the next call). */
static const char *fresh_cache(void) {
  static char d[300];
  snprintf(d, sizeof d, "%s/cache%d", work, dirs_made++);
  mkdir(d, 0700);
  return d;
}

/* Writes an executable script `name` in `work` with `body` after the #!. */
static const char *script(const char *name, const char *body) {
  static char path[2][300];
  static int k;
  char *p = path[k++ & 1];
  snprintf(p, 300, "%s/%s", work, name);
  FILE *f = fopen(p, "w");
  if (!f) return NULL;
  fprintf(f, "#!/bin/sh\n%s\n", body);
  fclose(f);
  chmod(p, 0755);
  return p;
}

static char *saved_cc;
static bool have_cc = true;

/* Sets HLO_CC (NULL: the caller's own); only while no background compile
 * runs (it reads the environment). */
static void set_cc(const char *cc) {
  if (cc) setenv("HLO_CC", cc, 1);
  else if (saved_cc) setenv("HLO_CC", saved_cc, 1);
  else unsetenv("HLO_CC");
}

/* A compiler that sleeps `secs` first, then is the caller's compiler. */
static const char *slow_cc(const char *secs) {
  char body[600];
  snprintf(body, sizeof body, "sleep %s\nexec %s \"$@\"", secs, saved_cc ? saved_cc : "cc");
  return script(secs[0] == '0' ? "slowcc_short" : "slowcc_long", body);
}

static hlo_module *parse(const char *text) {
  hlo_module *m = NULL;
  hlo_status st = hlo_module_parse("tiered.mlir", text, strlen(text), &m);
  CHECK(st == NULL);
  hlo_status_free(st);
  return m;
}

static hlo_status compile(hlo_module *m, const char *cache, bool no_tiering, hlo_backend_kind b,
                          const char *passes, hlo_executable **e) {
  hlo_compile_options o = {.backend = b, .cache_dir = cache, .no_tiering = no_tiering,
                           .passes = passes};
  return hlo_executable_compile(m, NULL, &o, e);
}

static float xs[64 * 32], ys[64 * 32], lx[4096];
static const int64_t dims2[2] = {64, 32}, dim1[1] = {4096};

static hlo_buffer **run(hlo_executable *e, hlo_status *st_out) {
  hlo_buffer_view v[2] = {{HLO_F32, 2, dims2, xs}, {HLO_F32, 2, dims2, ys}};
  hlo_buffer **r = NULL;
  hlo_status st = hlo_executable_run(e, v, 2, &r);
  if (st_out) *st_out = st;
  else {
    CHECK(st == NULL);
    if (st) hlo_status_print(st, stderr);
    hlo_status_free(st);
  }
  return r;
}

static hlo_buffer **run_loop(hlo_executable *e) {
  hlo_buffer_view v = {HLO_F32, 1, dim1, lx};
  hlo_buffer **r = NULL;
  hlo_status st = hlo_executable_run(e, &v, 1, &r);
  CHECK(st == NULL);
  if (st) hlo_status_print(st, stderr);
  hlo_status_free(st);
  return r;
}

static void free_results(hlo_buffer **r, int n) {
  for (int i = 0; r && i < n; i++) hlo_buffer_destroy(r[i]);
  free(r);
}

/* Results a and b (n of them) hold the same bytes. */
static bool same(hlo_buffer **a, hlo_buffer **b, int n) {
  if (!a || !b) return false;
  for (int i = 0; i < n; i++)
    if (hlo_buffer_nbytes(a[i]) != hlo_buffer_nbytes(b[i]) ||
        memcmp(hlo_buffer_data(a[i]), hlo_buffer_data(b[i]), hlo_buffer_nbytes(a[i])))
      return false;
  return true;
}

/* Removes the temporary folder at exit. */
static void remove_work(void) {
  char cmd[400];
  if (work[0] && snprintf(cmd, sizeof cmd, "rm -rf '%s'", work) < (int)sizeof cmd &&
      system(cmd) != 0)
    fprintf(stderr, "test_tiered: could not remove %s\n", work);
  free(saved_cc);
}

static void setup(void) {
  static bool done;
  if (done) return;
  done = true;
  snprintf(work, sizeof work, "/tmp/hlo-test-tiered-XXXXXX");
  if (!mkdtemp(work)) {
    have_cc = false;
    return;
  }
  atexit(remove_work);
  const char *cc = getenv("HLO_CC");
  saved_cc = cc ? strdup(cc) : NULL;
  unsetenv("HLO_TIERING");
  for (int i = 0; i < 64 * 32; i++) {
    xs[i] = (float)((i * 37) % 101) / 50.0f - 1.0f;
    ys[i] = (float)((i * 53) % 97) / 40.0f - 1.2f;
  }
  for (int i = 0; i < 4096; i++) lx[i] = (float)(i % 17);
  hlo_status st = tier_check_compiler();
  if (st) {
    printf("test_tiered: skipped (%s)\n", hlo_status_message(st));
    hlo_status_free(st);
    have_cc = false;
  }
}

TEST(ready_before_native_then_interp_then_native) {
  setup();
  if (!have_cc) return;
  set_cc(slow_cc("0.4"));
  hlo_module *m = parse(prog);
  hlo_executable *e = NULL, *ref_interp = NULL;
  hlo_status st = compile(m, fresh_cache(), false, HLO_BACKEND_CPU, NULL, &e);
  CHECK(st == NULL);
  hlo_status_free(st);
  if (!e) { hlo_module_destroy(m); return; }
  /* the compiler sleeps: its code cannot be there yet */
  CHECK_STR(runtime_executable_tier(e), "pending");
  CHECK_STR(runtime_executable_cache_result(e, NULL), "miss");
  double ready = 0, native = 0;
  runtime_executable_tier_ms(e, &ready, &native);
  CHECK(native < 0);
  /* the first run: the interpreter, on the optimised module: exactly what an
   * interpreter executable over the same pipeline computes */
  hlo_buffer **r1 = run(e, NULL);
  CHECK_STR(runtime_executable_last_run_tier(e), "interp");
  st = compile(m, NULL, false, HLO_BACKEND_INTERP, "cpu", &ref_interp);
  CHECK(st == NULL);
  hlo_status_free(st);
  hlo_buffer **ri = ref_interp ? run(ref_interp, NULL) : NULL;
  CHECK(same(r1, ri, 2));
  /* then the native code */
  st = hlo_executable_wait(e);
  CHECK(st == NULL);
  hlo_status_free(st);
  CHECK_STR(runtime_executable_tier(e), "native");
  runtime_executable_tier_ms(e, &ready, &native);
  CHECK(ready > 0 && native > ready + 300); /* the compiler slept 0.4 s */
  uint32_t interpreted = 0, cancelled = 0;
  runtime_executable_tier_runs(e, &interpreted, &cancelled);
  CHECK_EQ_INT(interpreted, 1);
  CHECK_EQ_INT(cancelled, 0);
  hlo_buffer **r2 = run(e, NULL);
  CHECK_STR(runtime_executable_last_run_tier(e), "native");
  /* a waited executable waits no more */
  st = hlo_executable_wait(e);
  CHECK(st == NULL);
  hlo_status_free(st);
  hlo_executable_destroy(e);
  /* the same program compiled before returning, in a cache folder of its
   * own (the same compiler, the same code): the same bytes */
  hlo_executable *sync = NULL;
  st = compile(m, fresh_cache(), true, HLO_BACKEND_CPU, NULL, &sync);
  CHECK(st == NULL);
  hlo_status_free(st);
  CHECK_STR(runtime_executable_tier(sync), "native");
  hlo_buffer **rs = sync ? run(sync, NULL) : NULL;
  CHECK_STR(runtime_executable_last_run_tier(sync), "native");
  CHECK(same(r2, rs, 2));
  free_results(r1, 2);
  free_results(r2, 2);
  free_results(ri, 2);
  free_results(rs, 2);
  hlo_executable_destroy(sync);
  hlo_executable_destroy(ref_interp);
  hlo_module_destroy(m);
  set_cc(NULL);
}

TEST(cancelled_loop_reruns_natively) {
  setup();
  if (!have_cc) return;
  set_cc(slow_cc("0.3"));
  hlo_module *m = parse(loop_prog);
  hlo_executable *e = NULL, *sync = NULL;
  hlo_status st = compile(m, fresh_cache(), false, HLO_BACKEND_CPU, NULL, &e);
  CHECK(st == NULL);
  hlo_status_free(st);
  if (!e) { hlo_module_destroy(m); return; }
  CHECK_STR(runtime_executable_tier(e), "pending");
  /* the while loop's trip count is not in the estimate: interpreted, then
   * cancelled when the native code is loaded (60000 iterations take the
   * interpreter seconds), and run again natively */
  float before[4096];
  memcpy(before, lx, sizeof before);
  hlo_buffer **r = run_loop(e);
  CHECK(memcmp(before, lx, sizeof before) == 0); /* the arguments untouched */
  uint32_t interpreted = 0, cancelled = 0;
  runtime_executable_tier_runs(e, &interpreted, &cancelled);
  CHECK_EQ_INT(interpreted, 1);
  CHECK_EQ_INT(cancelled, 1);
  CHECK_STR(runtime_executable_last_run_tier(e), "native");
  CHECK(r && *(const int32_t *)hlo_buffer_data(r[1]) == 60000);
  st = compile(m, fresh_cache(), true, HLO_BACKEND_CPU, NULL, &sync);
  CHECK(st == NULL);
  hlo_status_free(st);
  hlo_buffer **rs = sync ? run_loop(sync) : NULL;
  CHECK(same(r, rs, 2));
  free_results(r, 2);
  free_results(rs, 2);
  hlo_executable_destroy(sync);
  hlo_executable_destroy(e);
  hlo_module_destroy(m);
  set_cc(NULL);
}

TEST(no_compiler_fails_the_compile) {
  setup();
  if (!have_cc) return;
  set_cc("/nonexistent/hlo-no-cc");
  hlo_module *m = parse(prog);
  hlo_executable *e = NULL;
  hlo_status st = compile(m, fresh_cache(), false, HLO_BACKEND_CPU, NULL, &e);
  CHECK(st && hlo_status_code_of(st) == HLO_UNAVAILABLE);
  CHECK(st && strstr(hlo_status_message(st), "no C compiler") != NULL);
  CHECK(e == NULL);
  hlo_status_free(st);
  hlo_executable_destroy(e);
  hlo_module_destroy(m);
  set_cc(NULL);
}

TEST(failing_compiler_errors_at_wait_and_runs) {
  setup();
  if (!have_cc) return;
  set_cc(script("badcc", "echo 'badcc: refusing on purpose' >&2\nexit 1"));
  hlo_module *m = parse(prog);
  hlo_executable *e = NULL;
  hlo_status st = compile(m, fresh_cache(), false, HLO_BACKEND_CPU, NULL, &e);
  CHECK(st == NULL); /* the compiler starts: the compile returns */
  hlo_status_free(st);
  if (!e) { hlo_module_destroy(m); set_cc(NULL); return; }
  for (int k = 0; k < 2; k++) { /* every wait gives the error */
    st = hlo_executable_wait(e);
    CHECK(st && hlo_status_code_of(st) == HLO_INTERNAL);
    CHECK(st && strstr(hlo_status_message(st), "refusing on purpose") != NULL);
    hlo_status_free(st);
  }
  CHECK_STR(runtime_executable_tier(e), "failed");
  hlo_buffer **r = run(e, &st); /* and every run */
  CHECK(r == NULL);
  CHECK(st && hlo_status_code_of(st) == HLO_INTERNAL);
  CHECK(st && strstr(hlo_status_message(st), "refusing on purpose") != NULL);
  hlo_status_free(st);
  hlo_memory_analysis ma;
  st = hlo_executable_memory_analysis(e, &ma);
  CHECK(st && hlo_status_code_of(st) == HLO_INTERNAL);
  hlo_status_free(st);
  hlo_executable_destroy(e);
  /* a run before the wait: the interpreter's result, or the error */
  e = NULL;
  st = compile(m, fresh_cache(), false, HLO_BACKEND_CPU, NULL, &e);
  CHECK(st == NULL);
  hlo_status_free(st);
  r = e ? run(e, &st) : NULL;
  CHECK((st == NULL) == (r != NULL));
  CHECK(!st || strstr(hlo_status_message(st), "refusing on purpose") != NULL);
  hlo_status_free(st);
  free_results(r, 2);
  hlo_executable_destroy(e); /* the error goes nowhere */
  hlo_module_destroy(m);
  set_cc(NULL);
}

TEST(destroy_while_compiling_leaves_the_entry) {
  setup();
  if (!have_cc) return;
  set_cc(slow_cc("0.3"));
  const char *cache = fresh_cache();
  char dir[300];
  snprintf(dir, sizeof dir, "%s", cache);
  hlo_module *m = parse(prog);
  hlo_executable *e = NULL;
  hlo_status st = compile(m, dir, false, HLO_BACKEND_CPU, NULL, &e);
  CHECK(st == NULL);
  hlo_status_free(st);
  CHECK_STR(runtime_executable_tier(e), "pending");
  hlo_executable_destroy(e); /* waits for the compile */
  e = NULL;
  st = compile(m, dir, false, HLO_BACKEND_CPU, NULL, &e);
  CHECK(st == NULL);
  hlo_status_free(st);
  CHECK_STR(runtime_executable_cache_result(e, NULL), "hit");
  CHECK_STR(runtime_executable_tier(e), "native"); /* a hit does not tier */
  hlo_executable_destroy(e);
  hlo_module_destroy(m);
  set_cc(NULL);
}

TEST(not_tiered) {
  setup();
  if (!have_cc) return;
  set_cc(slow_cc("0.1"));
  hlo_module *m = parse(prog);
  hlo_executable *e = NULL;
  /* the option */
  hlo_status st = compile(m, fresh_cache(), true, HLO_BACKEND_CPU, NULL, &e);
  CHECK(st == NULL);
  hlo_status_free(st);
  CHECK_STR(runtime_executable_tier(e), "native");
  double ready = 0, native = 0;
  runtime_executable_tier_ms(e, &ready, &native);
  CHECK(ready == native);
  hlo_buffer **r = e ? run(e, NULL) : NULL;
  CHECK_STR(runtime_executable_last_run_tier(e), "native");
  free_results(r, 2);
  hlo_executable_destroy(e);
  /* the environment */
  setenv("HLO_TIERING", "0", 1);
  e = NULL;
  st = compile(m, fresh_cache(), false, HLO_BACKEND_CPU, NULL, &e);
  CHECK(st == NULL);
  hlo_status_free(st);
  CHECK_STR(runtime_executable_tier(e), "native");
  hlo_executable_destroy(e);
  unsetenv("HLO_TIERING");
  /* the interpreter backend, a pipeline of none (no cache path) */
  e = NULL;
  st = compile(m, fresh_cache(), false, HLO_BACKEND_CPU, "none", &e);
  CHECK(st == NULL);
  hlo_status_free(st);
  CHECK_STR(runtime_executable_tier(e), "native");
  hlo_executable_destroy(e);
  hlo_module_destroy(m);
  /* a custom call: a handler may have side effects */
  static const char *const cc_prog =
      "func.func @main(%x: tensor<4xf32>) -> tensor<4xf32> {\n"
      "  %e = stablehlo.exponential %x : tensor<4xf32>\n"
      "  %0 = stablehlo.custom_call @tiered_test_target(%e) : (tensor<4xf32>) -> tensor<4xf32>\n"
      "  %1 = stablehlo.add %0, %x : tensor<4xf32>\n"
      "  return %1 : tensor<4xf32>\n"
      "}\n";
  m = parse(cc_prog);
  e = NULL;
  st = compile(m, fresh_cache(), false, HLO_BACKEND_CPU, NULL, &e);
  CHECK(st == NULL);
  hlo_status_free(st);
  CHECK_STR(runtime_executable_tier(e), "native");
  hlo_executable_destroy(e);
  hlo_module_destroy(m);
  st = hlo_executable_wait(NULL);
  CHECK(st && hlo_status_code_of(st) == HLO_INVALID_ARGUMENT);
  hlo_status_free(st);
  set_cc(NULL);
}

TEST_MAIN()
