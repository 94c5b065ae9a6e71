/* test_jit_objects.c — the CPU backend's self-contained objects (issue 8;
 * backend.h's backend_object, cpu.h's cpu_jit_compile_with and
 * cpu_jit_objects): a module of three units compiled into a fresh cache
 * root lands its kernel objects in ROOT/kernels; its objects (keys and
 * shared-object bytes) reload with no kernel cache ("off"), every unit from
 * an object, no compiler run, and compute the same results; another
 * compiler command (HLO_CC=/nonexistent/cc) makes other object keys (the
 * compiler's identity is in the key: its objects are never given to
 * another compiler's compile), so nothing loads and the compile fails; corrupted objects (flipped ELF header bytes, zero length) and
 * one with the right key but another unit's bytes (its symbols missing) are
 * ignored and their units compiled, correctly; an object whose key matches
 * nothing is ignored; two objects loaded one after the other that define the
 * same symbol each give their own code (the loader must not hand back the
 * first for the second's memory file); and the backend table's compile
 * fills the stats and module_objects and reloads from them.
 *
 * When no C compiler can be started the tests print "skipped" with the
 * reason and pass. */
#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>
#include "backend/backend.h"
#include "backend/cpu/cpu.h"
#include "test.h"

enum { UNITS = 3, KERNELS = 2, N = 16 };

static char root[256];
static char saved_cc[1024];
static bool had_cc;

static void setup(void) {
  if (root[0]) return;
  const char *t = getenv("TMPDIR");
  snprintf(root, sizeof root, "%s/hlo-objects-test-XXXXXX", t && *t ? t : "/tmp");
  if (!mkdtemp(root)) {
    perror("mkdtemp");
    exit(1);
  }
  const char *cc = getenv("HLO_CC");
  had_cc = cc != NULL;
  snprintf(saved_cc, sizeof saved_cc, "%s", cc ? cc : "");
}

static void restore_cc(void) {
  if (had_cc) setenv("HLO_CC", saved_cc, 1);
  else unsetenv("HLO_CC");
}

static bool have_cc(void) {
  static int known = -1;
  if (known < 0) {
    char cmd[1200];
    snprintf(cmd, sizeof cmd, "%s --version >/dev/null 2>&1", had_cc && *saved_cc ? saved_cc : "cc");
    known = system(cmd) == 0;
    if (!known) printf("skipped: no C compiler (cc --version failed; set HLO_CC)\n");
  }
  return known;
}

/* Unit u's source: kernels "ob_U_a" (y = x * (U + 2) + 7 * U) and "ob_U_b"
 * (y = x - U - 100), over tiles [b, e) of N elements. */
typedef struct module_src {
  char src[UNITS][600];
  char name_buf[UNITS][KERNELS][32];
  const char *names[UNITS][KERNELS];
  cpu_kernel_fn fns[UNITS][KERNELS];
  cpu_jit_unit units[UNITS];
} module_src;

static void make_module(module_src *m) {
  memset(m, 0, sizeof *m);
  for (int u = 0; u < UNITS; u++) {
    for (int k = 0; k < KERNELS; k++) {
      snprintf(m->name_buf[u][k], sizeof m->name_buf[u][k], "ob_%d_%c", u, 'a' + k);
      m->names[u][k] = m->name_buf[u][k];
    }
    snprintf(m->src[u], sizeof m->src[u],
             "#include <stdint.h>\n"
             "void ob_%d_a(void *const *bufs, int64_t b, int64_t e) {\n"
             "  const int *x = bufs[0]; int *y = bufs[1];\n"
             "  for (int64_t i = b; i < e; i++) y[i] = x[i] * %d + %d;\n}\n"
             "void ob_%d_b(void *const *bufs, int64_t b, int64_t e) {\n"
             "  const int *x = bufs[0]; int *y = bufs[1];\n"
             "  for (int64_t i = b; i < e; i++) y[i] = x[i] - %d;\n}\n",
             u, u + 2, 7 * u, u, u + 100);
    m->units[u] = (cpu_jit_unit){.source = m->src[u], .names = m->names[u], .n = KERNELS,
                                 .fns = m->fns[u]};
  }
}

/* Whether every kernel of m computes what its source says. */
static bool module_right(const module_src *m) {
  int x[N], y[N];
  for (int i = 0; i < N; i++) x[i] = 3 * i - 20;
  for (int u = 0; u < UNITS; u++)
    for (int k = 0; k < KERNELS; k++) {
      memset(y, 0, sizeof y);
      void *bufs[] = {x, y};
      if (!m->fns[u][k]) return false;
      m->fns[u][k](bufs, 0, N);
      for (int i = 0; i < N; i++) {
        int want = k == 0 ? x[i] * (u + 2) + 7 * u : x[i] - (u + 100);
        if (y[i] != want) {
          fprintf(stderr, "unit %d kernel %d element %d: %d, want %d\n", u, k, i, y[i], want);
          return false;
        }
      }
    }
  return true;
}

/* Deep copies of objs[0..n) (the originals are lent by their module). */
static backend_object *copy_objects(const backend_object *objs, uint32_t n) {
  backend_object *c = calloc(n, sizeof *c);
  for (uint32_t i = 0; c && i < n; i++) {
    c[i] = objs[i];
    void *b = malloc(objs[i].len ? objs[i].len : 1);
    if (b && objs[i].len) memcpy(b, objs[i].bytes, objs[i].len);
    c[i].bytes = b;
  }
  return c;
}

static void free_objects(backend_object *c, uint32_t n) {
  for (uint32_t i = 0; c && i < n; i++) free((void *)c[i].bytes);
  free(c);
}

static int count_suffix(const char *dir, const char *suffix) {
  DIR *d = opendir(dir);
  int n = 0;
  struct dirent *e;
  while (d && (e = readdir(d))) {
    size_t l = strlen(e->d_name), s = strlen(suffix);
    n += l > s && !strcmp(e->d_name + l - s, suffix);
  }
  if (d) closedir(d);
  return n;
}

/* Compiles m with opts; true when it did (st printed otherwise). */
static bool compile(module_src *m, const backend_compile_options *o, cpu_jit **j) {
  for (int u = 0; u < UNITS; u++) memset(m->fns[u], 0, sizeof m->fns[u]);
  hlo_status st = cpu_jit_compile_with(m->units, UNITS, o, j);
  if (st) hlo_status_print(st, stderr);
  hlo_status_free(st);
  return st == NULL;
}

static double now_ms(void) {
  struct timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return (double)t.tv_sec * 1e3 + (double)t.tv_nsec / 1e6;
}

TEST(objects_reload_without_compiler_or_cache) {
  setup();
  if (!have_cc()) return;
  module_src m;
  make_module(&m);
  char croot[400], kdir[420];
  snprintf(croot, sizeof croot, "%s/reload", root);
  snprintf(kdir, sizeof kdir, "%s/kernels", croot);
  backend_compile_stats s;
  memset(&s, 0xff, sizeof s);
  backend_compile_options o = {.cache_root = croot, .stats = &s};
  cpu_jit *j = NULL;
  CHECK(compile(&m, &o, &j));
  CHECK(module_right(&m));
  CHECK_EQ_INT(s.units, UNITS);
  CHECK_EQ_INT(s.compiled, UNITS);
  CHECK_EQ_INT(s.from_objects + s.from_kernel_cache, 0);
  CHECK(s.cc_ms > 0 && s.emit_ms == 0);
  /* the kernel objects are in ROOT/kernels, not in ROOT */
  CHECK_EQ_INT(count_suffix(kdir, ".so"), UNITS);
  CHECK_EQ_INT(count_suffix(croot, ".so"), 0);
  const backend_object *objs = NULL;
  CHECK_EQ_INT(cpu_jit_objects(j, &objs), UNITS);
  for (int u = 0; objs && u < UNITS; u++) {
    CHECK_EQ_INT(strlen(objs[u].key), 32);
    CHECK(strspn(objs[u].key, "0123456789abcdef") == 32);
    CHECK(objs[u].len > 64 && !memcmp(objs[u].bytes, "\177ELF", 4));
    for (int v = 0; v < u; v++) CHECK(strcmp(objs[u].key, objs[v].key) != 0);
  }
  backend_object *saved = copy_objects(objs, UNITS);
  cpu_jit_destroy(j);
  j = NULL;

  /* a second compile of the same units hits the kernel cache; its objects
     are the same */
  CHECK(compile(&m, &o, &j));
  CHECK_EQ_INT(s.from_kernel_cache, UNITS);
  CHECK(cpu_jit_objects(j, &objs) == UNITS);
  for (int u = 0; objs && u < UNITS; u++)
    CHECK(objs[u].len == saved[u].len && !memcmp(objs[u].bytes, saved[u].bytes, saved[u].len) &&
          !strcmp(objs[u].key, saved[u].key));
  cpu_jit_destroy(j);
  j = NULL;

  /* another compiler: other keys, the objects are not used (and that
     compiler cannot run) */
  setenv("HLO_CC", "/nonexistent/cc", 1);
  backend_compile_options o2 = {.cache_root = "off", .objects = saved, .num_objects = UNITS,
                                .stats = &s};
  {
    hlo_status st = cpu_jit_compile_with(m.units, UNITS, &o2, &j);
    CHECK(st && hlo_status_code_of(st) == HLO_UNAVAILABLE);
    CHECK(j == NULL);
    hlo_status_free(st);
  }
  restore_cc();
  /* no kernel cache: every unit from its object, no compiler run */
  double t0 = now_ms();
  CHECK(compile(&m, &o2, &j));
  double ms = now_ms() - t0;
  CHECK_EQ_INT(s.from_objects, UNITS);
  CHECK_EQ_INT(s.compiled + s.from_kernel_cache, 0);
  CHECK(module_right(&m));
  printf("objects: %d units loaded from their bytes in %.3f ms (%.3f ms a unit)\n", UNITS, ms,
         ms / UNITS);
  CHECK(cpu_jit_objects(j, &objs) == UNITS);
  for (int u = 0; objs && u < UNITS; u++)
    CHECK(objs[u].len == saved[u].len && !memcmp(objs[u].bytes, saved[u].bytes, saved[u].len));
  /* the module owns copies: the caller's bytes may go */
  backend_object *again = copy_objects(saved, UNITS);
  memset((void *)saved[0].bytes, 0, saved[0].len);
  CHECK(module_right(&m));
  free_objects(saved, UNITS);
  cpu_jit_destroy(j);
  j = NULL;
  o2.objects = again;

  /* corrupt objects: ignored, no crash */
  unsigned char *b0 = (unsigned char *)again[0].bytes;
  b0[1] ^= 0xff;  /* "\177ELF" broken */
  b0[18] ^= 0x5a; /* e_machine */
  again[1].len = 0;
  /* with a compiler: the two corrupt units compiled, the good one loaded */
  CHECK(compile(&m, &o2, &j));
  CHECK_EQ_INT(s.from_objects, 1);
  CHECK_EQ_INT(s.compiled, 2);
  CHECK(module_right(&m));
  CHECK(cpu_jit_objects(j, &objs) == UNITS);
  if (objs) CHECK(!memcmp(objs[0].bytes, "\177ELF", 4));  /* the compiled one's */
  cpu_jit_destroy(j);
  j = NULL;

  /* the right key with another unit's bytes (unit 0's kernels missing):
     compiled; keys that match nothing: ignored */
  backend_object wrong[2] = {again[2], again[2]};
  memcpy(wrong[0].key, again[0].key, sizeof wrong[0].key);
  memset(wrong[1].key, '0', 32);
  o2.objects = wrong;
  o2.num_objects = 2;
  CHECK(compile(&m, &o2, &j));
  CHECK_EQ_INT(s.from_objects, 0);
  CHECK_EQ_INT(s.compiled, UNITS);
  CHECK(module_right(&m));
  cpu_jit_destroy(j);
  free_objects(again, UNITS);
}

/* Two sources defining the same symbol "ob_same", storing 1 and 2. */
static void same_name_source(char *buf, size_t cap, int v) {
  snprintf(buf, cap,
           "#include <stdint.h>\nvoid ob_same(void *const *bufs, int64_t b, int64_t e) {\n"
           "  (void)b; (void)e; ((int *)bufs[0])[0] = %d;\n}\n", v);
}

TEST(same_symbol_objects_stay_apart) {
  setup();
  if (!have_cc()) return;
  char src[2][300];
  const char *names[] = {"ob_same"};
  cpu_kernel_fn fn[2] = {0};
  cpu_jit *j[2] = {0};
  backend_object *objs[2] = {0};
  backend_compile_options off = {.cache_root = "off"};
  for (int v = 0; v < 2; v++) {
    same_name_source(src[v], sizeof src[v], v + 1);
    cpu_jit_unit u = {.source = src[v], .names = names, .n = 1, .fns = &fn[v]};
    hlo_status st = cpu_jit_compile_with(&u, 1, &off, &j[v]);
    CHECK(!st);
    hlo_status_free(st);
    const backend_object *o = NULL;
    if (j[v] && cpu_jit_objects(j[v], &o) == 1) objs[v] = copy_objects(o, 1);
    cpu_jit_destroy(j[v]);
    j[v] = NULL;
  }
  CHECK(objs[0] && objs[1]);
  if (!objs[0] || !objs[1]) return;
  /* load 1 (kept), then 2, 1, 2 ...: each load's memory file may reuse the
     descriptor number of the one before */
  cpu_jit *keep[6] = {0};
  for (int r = 0; r < 6; r++) {
    int v = r % 2;
    backend_compile_stats s;
    backend_compile_options o = {.cache_root = "off", .objects = objs[v], .num_objects = 1,
                                 .stats = &s};
    cpu_kernel_fn f = NULL;
    cpu_jit_unit u = {.source = src[v], .names = names, .n = 1, .fns = &f};
    hlo_status st = cpu_jit_compile_with(&u, 1, &o, &keep[r]);
    CHECK(!st);
    hlo_status_free(st);
    if (st) continue;
    CHECK_EQ_INT(s.from_objects, 1);
    int got = 0;
    void *bufs[] = {&got};
    f(bufs, 0, 1);
    CHECK_EQ_INT(got, v + 1);
  }
  for (int r = 0; r < 6; r++) cpu_jit_destroy(keep[r]);
  free_objects(objs[0], 1);
  free_objects(objs[1], 1);
}

/* A kernel of 4 f32 elements all `value`. */
static kernel *const_kernel(const char *name, float value) {
  kernel *k = NULL;
  int64_t d = 4;
  hlo_status st = kernel_create(name, 1, &d, NULL, &k);
  kinst c = kinst_make(KI_CONST, HLO_F32);
  c.cval.f = value;
  uint32_t v = 0;
  kernel_map map = kernel_map_identity(1);
  if (!st) st = kernel_add_inst(k, false, &c, &v);
  if (!st) st = kernel_add_output(k, HLO_F32, 1, &d, NULL, &map, v);
  if (st) {
    hlo_status_print(st, stderr);
    hlo_status_free(st);
    kernel_destroy(k);
    return NULL;
  }
  return k;
}

TEST(backend_table_objects_and_stats) {
  setup();
  if (!have_cc()) return;
  kernel *ks[2] = {const_kernel("ob_k0", 1.5f), const_kernel("ob_k1", -2.0f)};
  CHECK(ks[0] && ks[1]);
  if (!ks[0] || !ks[1]) return;
  const backend *be = backend_cpu();
  CHECK(be->module_objects != NULL);
  char croot[400];
  snprintf(croot, sizeof croot, "%s/table", root);
  backend_compile_stats s;
  backend_compile_options o = {.cache_root = croot, .stats = &s};
  backend_module *m = NULL;
  hlo_status st = be->compile((const kernel *const *)ks, 2, &o, &m);
  CHECK(!st);
  hlo_status_free(st);
  const backend_object *objs = NULL;
  uint32_t n = m ? be->module_objects(m, &objs) : 0;
  CHECK(n >= 1 && n == s.units && s.compiled == s.units);
  CHECK(s.emit_ms >= 0 && s.cc_ms > 0);
  backend_object *saved = copy_objects(objs, n);
  be->module_destroy(m);
  m = NULL;
  backend_compile_options o2 = {.cache_root = "off", .objects = saved, .num_objects = n,
                                .stats = &s};
  st = be->compile((const kernel *const *)ks, 2, &o2, &m);
  CHECK(!st);
  hlo_status_free(st);
  CHECK_EQ_INT(s.from_objects, n);
  CHECK_EQ_INT(s.units, n);
  printf("backend: warm compile of 2 kernels from %u object(s): emit %.3f ms, load %.3f ms\n", n,
         s.emit_ms, s.cc_ms);
  for (uint32_t i = 0; m && i < 2; i++) {
    float out[4] = {0};
    void *bufs[] = {out};
    st = be->launch(m, i, bufs);
    CHECK(!st);
    hlo_status_free(st);
    for (int e = 0; e < 4; e++) CHECK(out[e] == (i ? -2.0f : 1.5f));
  }
  be->module_destroy(m);
  free_objects(saved, n);
  kernel_destroy(ks[0]);
  kernel_destroy(ks[1]);
}

/* The compiler is in the target and in every object key: another command
 * (an added word such as -ffast-math) or other HLO_CC_FLAGS make other
 * keys, so a compilation cache entry or an object made by one compiler is
 * never used by another's compile. */
TEST(compiler_in_target_and_object_keys) {
  setup();
  if (!have_cc()) return;
  const char *base = had_cc && *saved_cc ? saved_cc : "cc";
  char fast[1100];
  snprintf(fast, sizeof fast, "%s -ffast-math", base);
  char croot[400];
  snprintf(croot, sizeof croot, "%s/compilers", root);
  backend_compile_options a = {.cc = base, .cache_root = croot};
  backend_compile_options b = {.cc = fast, .cache_root = croot};
  const char *ta = cpu_jit_target_with(&a), *tb = cpu_jit_target_with(&b);
  CHECK(ta && tb && strcmp(ta, tb) != 0);
  CHECK(strstr(tb, "-ffast-math") != NULL);
  CHECK(!strchr(ta, '\n'));
  CHECK(cpu_jit_target_with(&a) == ta);  /* made once */
  unsetenv("HLO_CC_FLAGS");
  const char *t0 = cpu_jit_target_with(&a);
  setenv("HLO_CC_FLAGS", "-O3", 1);
  const char *t1 = cpu_jit_target_with(&a);
  unsetenv("HLO_CC_FLAGS");
  CHECK(strcmp(t0, t1) != 0 && strstr(t1, " -O3"));
  /* object keys */
  const char *names[] = {"ob_cc"};
  const char *src = "#include <stdint.h>\nvoid ob_cc(void *const *b, int64_t x, int64_t y) {\n"
                    "  (void)x; (void)y; ((int *)b[0])[0] = 7;\n}\n";
  char keys[2][33] = {"", ""};
  backend_compile_options *os[2] = {&a, &b};
  for (int v = 0; v < 2; v++) {
    cpu_kernel_fn fn = NULL;
    cpu_jit_unit u = {.source = src, .names = names, .n = 1, .fns = &fn};
    cpu_jit *j = NULL;
    hlo_status st = cpu_jit_compile_with(&u, 1, os[v], &j);
    CHECK(!st);
    hlo_status_free(st);
    const backend_object *o = NULL;
    if (j && cpu_jit_objects(j, &o) == 1) memcpy(keys[v], o[0].key, 33);
    cpu_jit_destroy(j);
  }
  CHECK(keys[0][0] && keys[1][0] && strcmp(keys[0], keys[1]) != 0);
}

/* Last: removes the temporary root. */
TEST(zz_cleanup) {
  if (!root[0]) return;
  char cmd[400];
  snprintf(cmd, sizeof cmd, "rm -rf '%s'", root);
  CHECK(system(cmd) == 0);
}

TEST_MAIN()
