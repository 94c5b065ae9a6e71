/* test_cpu_backend.c — the CPU backend's table (backend/cpu/cpu_backend.c)
 * with a pool of 4 threads (HLO_NUM_THREADS=4, set before the pool starts):
 * big kernels launched over the pool (an elementwise one and a row
 * reduction, 512x1024 f32) give exactly what a plain C loop computes (each
 * row is reduced by one thread, in order, in f64, as the kernel does
 * alone); a small kernel runs inline; two kernels that differ only in their
 * name are compiled once (the module's source defines one) and both launch;
 * many kernels split into several translation units (dumped one file
 * each); a compiler error names its kernel and
 * is located at the kernel's op; a bad kernel index is an error. Kernels come from StableHLO text
 * through lower_fusion. The cache folder is a fresh temporary one.
 *
 * When no C compiler can be started the tests print "skipped" with the
 * reason and pass. */
#include <dirent.h>
#include <math.h>
#include <sys/stat.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "backend/backend.h"
#include "codegen/lower_fusion.h"
#include "support/thread_pool.h"
#include "test.h"
#include "testlib.h"

enum { R = 512, C = 1024 };

static const char program[] =
    "func.func @main(%a: tensor<512x1024xf32>, %s: tensor<4x8xf32>) -> (tensor<512x1024xf32>, "
    "tensor<512xf32>, tensor<4x8xf32>) {\n"
    "  %0 = stablehlo.multiply %a, %a : tensor<512x1024xf32>\n"
    "  %1 = stablehlo.add %0, %a : tensor<512x1024xf32>\n"
    "  %2 = stablehlo.multiply %a, %a : tensor<512x1024xf32>\n"
    "  %z = stablehlo.constant dense<0.0> : tensor<f32>\n"
    "  %3 = stablehlo.reduce(%2 init: %z) applies stablehlo.add across dimensions = [1] : "
    "(tensor<512x1024xf32>, tensor<f32>) -> tensor<512xf32>\n"
    "  %4 = stablehlo.add %s, %s : tensor<4x8xf32>\n"
    "  return %1, %3, %4 : tensor<512x1024xf32>, tensor<512xf32>, tensor<4x8xf32>\n"
    "}\n";

static char cache_dir[256];

/* The op defining value v in f (NULL if an argument). */
static const hlo_op *def_of(const hlo_func *f, const hlo_value *v) {
  for (const hlo_op *op = f->body.block.first; op; op = op->next)
    for (uint32_t r = 0; r < op->num_results; r++)
      if (&op->results[r] == v) return op;
  return NULL;
}

static uint64_t rng = 99;
static float rnd(void) {
  rng = rng * 6364136223846793005ULL + 1442695040888963407ULL;
  return (float)((double)(rng >> 11) / 9007199254740992.0 * 4 - 2);
}

static bool skipped(hlo_status st, const char *test) {
  if (st && hlo_status_code_of(st) == HLO_UNAVAILABLE) {
    printf("%s: skipped (%s)\n", test, hlo_status_message(st));
    hlo_status_free(st);
    return true;
  }
  return false;
}

TEST(launch_over_the_pool_and_dedup) {
  setenv("HLO_NUM_THREADS", "4", 1);
  snprintf(cache_dir, sizeof cache_dir, "/tmp/hlo-cpu-backend-test-XXXXXX");
  CHECK(mkdtemp(cache_dir) != NULL);
  setenv("HLO_CACHE_DIR", cache_dir, 1);
  hlo_source src = tl_source("backend", program);
  hlo_status st = NULL;
  hlo_module_ir *m = tl_parse_piece(&src, 0, strlen(program), &st);
  CHECK(m != NULL);
  if (!m) {
    hlo_status_free(st);
    return;
  }
  hlo_func *f = module_entry(m, NULL);
  const hlo_op *ret = f->body.block.last;
  const hlo_value *o_ew = ret->operands[0], *o_red = ret->operands[1], *o_small = ret->operands[2];
  const hlo_op *add = def_of(f, o_ew), *mul = def_of(f, add->operands[0]);
  const hlo_op *red = def_of(f, o_red), *mul2 = def_of(f, red->operands[0]);
  const hlo_op *zero = def_of(f, red->operands[1]), *small = def_of(f, o_small);
  const hlo_op *ew_ops[] = {mul, add}, *red_ops[] = {mul2, zero, red}, *small_ops[] = {small};
  kernel *ks[4] = {0};
  st = lower_fusion(ew_ops, 2, &o_ew, 1, "kb_ew", &ks[0]);
  if (!st) st = lower_fusion(red_ops, 3, &o_red, 1, "kb_red", &ks[1]);
  if (!st) st = lower_fusion(ew_ops, 2, &o_ew, 1, "kb_ew_again", &ks[2]);
  if (!st) st = lower_fusion(small_ops, 1, &o_small, 1, "kb_small", &ks[3]);
  CHECK(!st);
  const backend *be = backend_cpu();
  backend_module *mod = NULL;
  if (!st) st = be->compile((const kernel *const *)ks, 4, NULL, &mod);
  if (skipped(st, "launch_over_the_pool_and_dedup")) goto done;
  CHECK(!st);
  if (st) {
    hlo_status_print(st, stderr);
    hlo_status_free(st);
    goto done;
  }
  const char *text = be->module_source(mod);
  CHECK(text && strstr(text, "void kb_ew(") && strstr(text, "void kb_red("));
  CHECK(text && !strstr(text, "kb_ew_again")); /* the same text: compiled once */
  float *a = malloc(sizeof(float) * R * C), *out = malloc(sizeof(float) * R * C),
        *out2 = malloc(sizeof(float) * R * C), rows[R], s[32], s2[32];
  if (!a || !out || !out2) goto done_free;
  for (int i = 0; i < R * C; i++) a[i] = rnd();
  for (int i = 0; i < 32; i++) s[i] = rnd();
  void *b0[] = {a, out}, *b1[] = {a, rows}, *b2[] = {a, out2}, *b3[] = {s, s2};
  CHECK(!be->launch(mod, 0, b0));
  CHECK(!be->launch(mod, 1, b1));
  CHECK(!be->launch(mod, 2, b2));
  CHECK(!be->launch(mod, 3, b3));
  CHECK_EQ_INT(thread_pool_num_threads(thread_pool_global()), 4);
  int bad = 0;
  for (int i = 0; i < R * C; i++) {
    float sq = a[i] * a[i];
    bad += out[i] != sq + a[i] || out2[i] != out[i];
  }
  CHECK_EQ_INT(bad, 0);
  bad = 0;
  for (int r = 0; r < R; r++) {
    double acc = 0;
    for (int c = 0; c < C; c++) {
      float sq = a[r * C + c] * a[r * C + c];
      acc += (double)sq;
    }
    bad += rows[r] != (float)acc;
  }
  CHECK_EQ_INT(bad, 0);
  bad = 0;
  for (int i = 0; i < 32; i++) bad += s2[i] != s[i] + s[i];
  CHECK_EQ_INT(bad, 0);
  /* a bad index */
  hlo_status e = be->launch(mod, 4, b0);
  CHECK(e && hlo_status_code_of(e) == HLO_INVALID_ARGUMENT);
  hlo_status_free(e);
done_free:
  free(a);
  free(out);
  free(out2);
  be->module_destroy(mod);
done:
  for (int i = 0; i < 4; i++) kernel_destroy(ks[i]);
  module_free(m);
}

/* Many distinct kernels: several translation units, one dump file each. */
TEST(units_and_dumps) {
  enum { K = 24 };
  char text[8192];
  int len = snprintf(text, sizeof text, "func.func @main(%%x: tensor<16xf32>) -> tensor<16xf32> {\n");
  for (int i = 0; i < K; i++) {
    char prev[16];
    snprintf(prev, sizeof prev, i ? "%%v%d" : "%%x", i - 1);
    len += snprintf(text + len, sizeof text - (size_t)len,
                    "  %%c%d = stablehlo.constant dense<%d.0> : tensor<16xf32>\n"
                    "  %%m%d = stablehlo.multiply %s, %%c%d : tensor<16xf32>\n"
                    "  %%v%d = stablehlo.tanh %%m%d : tensor<16xf32>\n",
                    i, i + 1, i, prev, i, i, i);
  }
  snprintf(text + len, sizeof text - (size_t)len, "  return %%v%d : tensor<16xf32>\n}\n", K - 1);
  hlo_source src = tl_source("units", text);
  hlo_status st = NULL;
  hlo_module_ir *m = tl_parse_piece(&src, 0, strlen(text), &st);
  CHECK(m != NULL);
  if (!m) {
    hlo_status_print(st, stderr);
    hlo_status_free(st);
    return;
  }
  hlo_func *f = module_entry(m, NULL);
  kernel *ks[K] = {0};
  int nk = 0;
  for (const hlo_op *op = f->body.block.first; op && !st; op = op->next) {
    if (op->opcode != OP_TANH) continue;
    const hlo_op *mul = def_of(f, op->operands[0]), *c = def_of(f, mul->operands[1]);
    const hlo_op *ops[] = {c, mul, op};
    const hlo_value *o = &op->results[0];
    char name[16];
    snprintf(name, sizeof name, "ku%d", nk);
    st = lower_fusion(ops, 3, &o, 1, name, &ks[nk++]);
  }
  CHECK(!st && nk == K);
  char dump[300];
  snprintf(dump, sizeof dump, "%s/dump", cache_dir[0] ? cache_dir : "/tmp");
  CHECK(mkdir(dump, 0700) == 0);
  backend_compile_options o = {.dump_dir = dump};
  const backend *be = backend_cpu();
  backend_module *mod = NULL;
  if (!st) st = be->compile((const kernel *const *)ks, (uint32_t)nk, &o, &mod);
  if (!skipped(st, "units_and_dumps")) {
    CHECK(!st);
    hlo_status_free(st);
    /* 4 threads: up to 4 units, each dumped as its first kernel's name */
    DIR *d = opendir(dump);
    int files = 0;
    struct dirent *e;
    while (d && (e = readdir(d))) files += strstr(e->d_name, ".c") != NULL;
    if (d) closedir(d);
    CHECK(files >= 2 && files <= 4);
    float x[16], y[16], want[16];
    for (int i = 0; i < 16; i++) x[i] = want[i] = rnd() * 0.1f;
    const float *in = x;
    for (int k = 0; k < nk && mod; k++) {
      void *bufs[] = {(void *)in, y};
      CHECK(!be->launch(mod, (uint32_t)k, bufs));
      for (int i = 0; i < 16; i++) want[i] = tanhf(want[i] * (float)(k + 1));
      memcpy(x, y, sizeof x);
    }
    int bad = 0;
    for (int i = 0; i < 16; i++) bad += x[i] != want[i];
    CHECK_EQ_INT(bad, 0);
    /* a compiler error inside kernel ku5 (its name defined away) names it
       and points at its fusion's op in the program */
    backend_module *mod2 = NULL;
    setenv("HLO_CC_FLAGS", "-Dku5=5", 1);
    st = be->compile((const kernel *const *)ks, (uint32_t)nk, NULL, &mod2);
    unsetenv("HLO_CC_FLAGS");
    CHECK(st && mod2 == NULL);
    if (st) {
      CHECK(strstr(hlo_status_message(st), "kernel ku5 (the fusion here)") != NULL);
      CHECK(status_loc(st) && status_loc(st)->line == ks[5]->loc.line &&
            ks[5]->loc.line > 1);
      CHECK(status_file(st) && !strcmp(status_file(st), "units"));
    }
    hlo_status_free(st);
  }
  be->module_destroy(mod);
  for (int i = 0; i < nk; i++) kernel_destroy(ks[i]);
  module_free(m);
}

TEST(cleanup) {
  if (!cache_dir[0]) return;
  char cmd[400];
  snprintf(cmd, sizeof cmd, "rm -rf '%s'", cache_dir);
  CHECK(system(cmd) == 0);
}

TEST_MAIN()
