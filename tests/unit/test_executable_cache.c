/* Unit tests of the compilation cache through the C API
 * (runtime/executable_cache.c over runtime/compile_cache.c): a second
 * compile of the same program (re-exported: other value names, locations
 * and line numbers) loads every kernel from the entry and gives the same
 * results; runtime errors on a hit point into the caller's file; dynamic
 * shapes are cached per signature; options that must compile (check,
 * no_cache) bypass it. Every case uses its own temporary cache root. */
#include <dirent.h>
#include <ftw.h>
#include <stdio.h>
#include <unistd.h>

#include "hlo/hlo.h"
#include "runtime/runtime.h"
#include "test.h"

static const char *prog_a =
    "func.func @main(%x: tensor<8x16xf32>, %y: tensor<8x16xf32>) -> tensor<8x16xf32> {\n"
    "  %0 = stablehlo.multiply %x, %y : tensor<8x16xf32>\n"
    "  %1 = stablehlo.exponential %0 : tensor<8x16xf32>\n"
    "  %2 = stablehlo.add %1, %x : tensor<8x16xf32>\n"
    "  return %2 : tensor<8x16xf32>\n"
    "}\n";

/* prog_a re-exported: other SSA names, locations, blank lines */
static const char *prog_a2 =
    "// the same program, printed again\n"
    "\n"
    "#loc1 = loc(\"model.py\":12:3)\n"
    "func.func @main(%a: tensor<8x16xf32>, %b: tensor<8x16xf32>) -> tensor<8x16xf32> {\n"
    "  %p = stablehlo.multiply %a, %b : tensor<8x16xf32> loc(#loc1)\n"
    "  %e = stablehlo.exponential %p : tensor<8x16xf32> loc(\"model.py\":13:5)\n"
    "  %s = stablehlo.add %e, %a : tensor<8x16xf32>\n"
    "  return %s : tensor<8x16xf32>\n"
    "}\n";

/* another program with the same signature */
static const char *prog_b =
    "func.func @main(%x: tensor<8x16xf32>, %y: tensor<8x16xf32>) -> tensor<8x16xf32> {\n"
    "  %0 = stablehlo.multiply %x, %y : tensor<8x16xf32>\n"
    "  %1 = stablehlo.tanh %0 : tensor<8x16xf32>\n"
    "  %2 = stablehlo.add %1, %x : tensor<8x16xf32>\n"
    "  return %2 : tensor<8x16xf32>\n"
    "}\n";

static int rm_one(const char *p, const struct stat *s, int flag, struct FTW *f) {
  (void)s, (void)flag, (void)f;
  return remove(p);
}

static char *make_root(void) {
  char *t = strdup("/tmp/hlo-test-exec-cache-XXXXXX");
  if (!t || !mkdtemp(t)) {
    free(t);
    return NULL;
  }
  return t;
}

static void remove_root(char *root) {
  if (root) nftw(root, rm_one, 16, FTW_DEPTH | FTW_PHYS);
  free(root);
}

/* Entries (.hlox) under ROOT/executables. */
static int count_entries(const char *root) {
  char path[4200];
  snprintf(path, sizeof path, "%s/executables", root);
  DIR *d = opendir(path);
  if (!d) return 0;
  int n = 0;
  for (struct dirent *e; (e = readdir(d));) {
    size_t l = strlen(e->d_name);
    n += l > 5 && !strcmp(e->d_name + l - 5, ".hlox");
  }
  closedir(d);
  return n;
}

typedef struct compiled {
  hlo_module *m;
  hlo_executable *e;
  runtime_cpu_stats st;
  float out[8 * 16];
  hlo_status run_status;
} compiled;

/* Compiles `text` (named `name`) for the CPU with the cache at `root` and
 * runs it on fixed inputs. False when it could not compile. */
static bool compile_run(const char *name, const char *text, const char *root, bool no_cache,
                        bool check, compiled *c) {
  memset(c, 0, sizeof *c);
  hlo_status st = hlo_module_parse(name, text, strlen(text), &c->m);
  if (st) {
    hlo_status_print(st, stderr);
    hlo_status_free(st);
    return false;
  }
  hlo_compile_options o = {0};
  o.backend = HLO_BACKEND_CPU;
  o.cache_dir = root;
  o.no_cache = no_cache;
  o.check = check;
  st = hlo_executable_compile(c->m, NULL, &o, &c->e);
  if (st) {
    hlo_status_print(st, stderr);
    hlo_status_free(st);
    hlo_module_destroy(c->m);
    c->m = NULL;
    return false;
  }
  const runtime_cpu_stats *s = runtime_executable_cpu_stats(c->e);
  if (s) c->st = *s;
  static float x[8 * 16], y[8 * 16];
  for (int i = 0; i < 8 * 16; i++) x[i] = 0.01f * (float)i, y[i] = 0.5f - 0.003f * (float)i;
  int64_t dims[2] = {8, 16};
  hlo_buffer_view v[2] = {{HLO_F32, 2, dims, x}, {HLO_F32, 2, dims, y}};
  hlo_buffer **res = NULL;
  c->run_status = hlo_executable_run(c->e, v, 2, &res);
  if (!c->run_status) {
    memcpy(c->out, hlo_buffer_data(res[0]), sizeof c->out);
    hlo_buffer_destroy(res[0]);
    free(res);
  }
  return true;
}

static void release(compiled *c) {
  hlo_executable_destroy(c->e);
  hlo_module_destroy(c->m);
  hlo_status_free(c->run_status);
  memset(c, 0, sizeof *c);
}

TEST(second_compile_loads_every_kernel_from_the_entry) {
  char *root = make_root();
  CHECK(root != NULL);
  if (!root) return;
  compiled a, b;
  CHECK(compile_run("a.mlir", prog_a, root, false, false, &a));
  CHECK(a.run_status == NULL);
  CHECK(a.st.units > 0);
  CHECK_EQ_INT(a.st.units_from_entry, 0);
  CHECK_EQ_INT(count_entries(root), 1);
  CHECK(compile_run("a2.mlir", prog_a2, root, false, false, &b));
  CHECK(b.run_status == NULL);
  CHECK_EQ_INT(b.st.units, a.st.units);
  CHECK_EQ_INT(b.st.units_from_entry, a.st.units);
  CHECK_EQ_INT(b.st.units_compiled, 0);
  CHECK(memcmp(a.out, b.out, sizeof a.out) == 0);
  CHECK_EQ_INT(count_entries(root), 1);
  release(&a);
  release(&b);
  /* a different program: its own entry */
  compiled d;
  CHECK(compile_run("b.mlir", prog_b, root, false, false, &d));
  CHECK_EQ_INT(d.st.units_from_entry, 0);
  CHECK_EQ_INT(count_entries(root), 2);
  release(&d);
  remove_root(root);
}

TEST(no_cache_and_check_bypass_the_cache) {
  char *root = make_root();
  if (!root) return;
  compiled a;
  CHECK(compile_run("a.mlir", prog_a, root, true, false, &a));
  CHECK_EQ_INT(count_entries(root), 0);
  release(&a);
  CHECK(compile_run("a.mlir", prog_a, root, false, true, &a));
  CHECK(a.run_status == NULL);
  CHECK_EQ_INT(count_entries(root), 0);
  release(&a);
  char off[] = "off";
  CHECK(compile_run("a.mlir", prog_a, off, false, false, &a));
  CHECK(a.run_status == NULL);
  CHECK_EQ_INT(a.st.units_from_entry, 0);
  release(&a);
  remove_root(root);
}

/* A failing check op on an interpreter thunk: its error names the line of
 * the file being run, also when the executable came from the cache (the
 * entry was made from a file where it sat on another line). */
static const char *check_prog_1 =
    "func.func @main(%x: tensor<8x16xf32>, %y: tensor<8x16xf32>) -> tensor<8x16xf32> {\n"
    "  %0 = stablehlo.multiply %x, %y : tensor<8x16xf32>\n"
    "  %1 = stablehlo.exponential %0 : tensor<8x16xf32>\n"
    "  %s = stablehlo.slice %1 [0:1, 0:2] : (tensor<8x16xf32>) -> tensor<1x2xf32>\n"
    "  check.expect_eq_const %s, dense<[[9.0, 9.0]]> : tensor<1x2xf32>\n"
    "  return %1 : tensor<8x16xf32>\n"
    "}\n";
static const char *check_prog_2 =
    "\n\n\n"
    "func.func @main(%x: tensor<8x16xf32>, %y: tensor<8x16xf32>) -> tensor<8x16xf32> {\n"
    "  %0 = stablehlo.multiply %x, %y : tensor<8x16xf32>\n"
    "  %1 = stablehlo.exponential %0 : tensor<8x16xf32>\n"
    "  %s = stablehlo.slice %1 [0:1, 0:2] : (tensor<8x16xf32>) -> tensor<1x2xf32>\n"
    "  check.expect_eq_const %s, dense<[[9.0, 9.0]]> : tensor<1x2xf32>\n"
    "  return %1 : tensor<8x16xf32>\n"
    "}\n";

static char *diagnostic(hlo_status st) {
  char *buf = NULL;
  size_t len = 0;
  FILE *f = open_memstream(&buf, &len);
  if (!f) return NULL;
  hlo_status_print(st, f);
  fclose(f);
  return buf;
}

TEST(runtime_errors_on_a_hit_point_into_the_callers_file) {
  char *root = make_root();
  if (!root) return;
  compiled a, b;
  CHECK(compile_run("first.mlir", check_prog_1, root, false, false, &a));
  CHECK(a.run_status != NULL);
  char *d1 = a.run_status ? diagnostic(a.run_status) : NULL;
  CHECK(d1 && strstr(d1, "first.mlir:5:"));
  CHECK(compile_run("second.mlir", check_prog_2, root, false, false, &b));
  CHECK(b.st.units > 0 && b.st.units_from_entry == b.st.units);
  CHECK(b.run_status != NULL);
  char *d2 = b.run_status ? diagnostic(b.run_status) : NULL;
  CHECK(d2 && strstr(d2, "second.mlir:8:"));
  if (d2 && !strstr(d2, "second.mlir:8:")) fprintf(stderr, "got: %s\n", d2);
  free(d1);
  free(d2);
  release(&a);
  release(&b);
  remove_root(root);
}

static const char *dyn_prog =
    "func.func @main(%x: tensor<?x4xf32>) -> tensor<?x4xf32> {\n"
    "  %0 = stablehlo.exponential %x : tensor<?x4xf32>\n"
    "  %1 = stablehlo.add %0, %x : tensor<?x4xf32>\n"
    "  return %1 : tensor<?x4xf32>\n"
    "}\n";

/* Runs dyn_prog on `rows` rows; the number of units it loaded from an
 * entry (negative: it failed). */
static int dyn_run(const char *root, int64_t rows, float *first) {
  hlo_module *m = NULL;
  hlo_executable *e = NULL;
  hlo_compile_options o = {0};
  o.backend = HLO_BACKEND_CPU;
  o.cache_dir = root;
  int loaded = -1;
  if (hlo_module_parse("dyn.mlir", dyn_prog, strlen(dyn_prog), &m) == NULL &&
      hlo_executable_compile(m, NULL, &o, &e) == NULL) {
    float x[64 * 4];
    for (int i = 0; i < 64 * 4; i++) x[i] = 0.01f * (float)i;
    int64_t dims[2] = {rows, 4};
    hlo_buffer_view v = {HLO_F32, 2, dims, x};
    hlo_buffer **res = NULL;
    hlo_status st = hlo_executable_run(e, &v, 1, &res);
    if (!st) {
      *first = ((const float *)hlo_buffer_data(res[0]))[4 * rows - 1];
      hlo_buffer_destroy(res[0]);
      free(res);
      const runtime_cpu_stats *s = runtime_executable_cpu_stats(e);
      loaded = s && s->units ? (int)s->units_from_entry : -2;
    }
    hlo_status_free(st);
  }
  hlo_executable_destroy(e);
  hlo_module_destroy(m);
  return loaded;
}

TEST(dynamic_shapes_are_cached_per_signature) {
  char *root = make_root();
  if (!root) return;
  float a = 0, b = 0, c = 0;
  CHECK_EQ_INT(dyn_run(root, 16, &a), 0);
  CHECK_EQ_INT(count_entries(root), 1);
  CHECK(dyn_run(root, 16, &b) > 0); /* a hit: every unit from the entry */
  CHECK_EQ_INT(count_entries(root), 1);
  CHECK(a == b);
  CHECK_EQ_INT(dyn_run(root, 32, &c), 0); /* another signature: a miss */
  CHECK_EQ_INT(count_entries(root), 2);
  remove_root(root);
}

TEST_MAIN()
