/* test_kernel_cache.c — the kernel cache (backend/cpu/kernel_cache.h) alone
 * and through the JIT (cpu_jit_compile / cpu_jit_compile_units): keys; the
 * folder from HLO_CACHE_DIR / XDG_CACHE_HOME / HOME, "off", an unwritable
 * one; a hit runs no compiler (counted by a wrapper script given as
 * HLO_CC); a changed source misses; a corrupt, a truncated and an
 * unloadable entry are recompiled and replaced; an unwritable folder
 * compiles uncached without an error; two processes compiling the same
 * source at once both succeed and leave one entry and no temporary file;
 * several units compile concurrently.
 *
 * When no C compiler can be started the JIT tests print "skipped" with the
 * reason and pass. */
#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>
#include "backend/cpu/cpu.h"
#include "backend/cpu/kernel_cache.h"
#include "test.h"

static char root[256];       /* a fresh temporary folder for the whole run */
static char counter[300];    /* the wrapper compiler's count file */
static char wrapper[300];

static void setup(void) {
  if (root[0]) return;
  snprintf(root, sizeof root, "%s/hlo-kc-test-XXXXXX", getenv("TMPDIR") ? getenv("TMPDIR") : "/tmp");
  if (!mkdtemp(root)) {
    perror("mkdtemp");
    exit(1);
  }
  snprintf(counter, sizeof counter, "%s/count", root);
  snprintf(wrapper, sizeof wrapper, "%s/cc-count.sh", root);
  FILE *f = fopen(wrapper, "w");
  if (!f) exit(1);
  /* counts the compiles (the calls with -shared), then runs the real one */
  fprintf(f, "#!/bin/sh\nfor a; do [ \"$a\" = -shared ] && echo x >> '%s'; done\nexec %s \"$@\"\n",
          counter, getenv("HLO_CC") && *getenv("HLO_CC") ? getenv("HLO_CC") : "cc");
  fclose(f);
  chmod(wrapper, 0755);
}

static int compiles(void) {
  FILE *f = fopen(counter, "r");
  int n = 0, c;
  if (!f) return 0;
  while ((c = fgetc(f)) != EOF) n += c == '\n';
  fclose(f);
  return n;
}

/* Files in `dir` whose name starts with `prefix` and ends with `suffix`. */
static int count_files(const char *dir, const char *prefix, const char *suffix) {
  DIR *d = opendir(dir);
  int n = 0;
  struct dirent *e;
  while (d && (e = readdir(d))) {
    size_t l = strlen(e->d_name), s = strlen(suffix);
    n += !strncmp(e->d_name, prefix, strlen(prefix)) && l >= s &&
         !strcmp(e->d_name + l - s, suffix);
  }
  if (d) closedir(d);
  return n;
}

static bool have_cc(void) {
  static int known = -1;
  if (known < 0) {
    char cmd[600];
    snprintf(cmd, sizeof cmd, "%s --version >/dev/null 2>&1",
             getenv("HLO_CC") && *getenv("HLO_CC") ? getenv("HLO_CC") : "cc");
    known = system(cmd) == 0;
    if (!known) printf("skipped: no C compiler (cc --version failed; set HLO_CC)\n");
  }
  return known;
}

/* A one-kernel source whose kernel `name` stores `value` into bufs[0][0]. */
static void source_of(char *buf, size_t cap, const char *name, int value) {
  snprintf(buf, cap,
           "#include <stdint.h>\nvoid %s(void *const *bufs, int64_t b, int64_t e) {\n"
           "  (void)b; (void)e; ((int *)bufs[0])[0] = %d;\n}\n",
           name, value);
}

/* Compiles and runs the kernel; its stored value, or -1 on an error. */
static int compile_run(const char *source, const char *name) {
  const char *names[] = {name};
  cpu_kernel_fn fn = NULL;
  cpu_jit *j = NULL;
  hlo_status st = cpu_jit_compile(source, wrapper, NULL, names, 1, &fn, &j);
  if (st) {
    hlo_status_print(st, stderr);
    hlo_status_free(st);
    return -1;
  }
  int v = 0;
  void *bufs[] = {&v};
  fn(bufs, 0, 1);
  cpu_jit_destroy(j);
  return v;
}

static void use_dir(const char *sub, char out[KERNEL_CACHE_PATH_MAX]) {
  snprintf(out, KERNEL_CACHE_PATH_MAX, "%s/%s", root, sub);
  setenv("HLO_CACHE_DIR", out, 1);
}

TEST(keys) {
  char a[KERNEL_CACHE_KEY_HEX], b[KERNEL_CACHE_KEY_HEX], c[KERNEL_CACHE_KEY_HEX];
  const char *p1[] = {"ab", "c"}, *p2[] = {"a", "bc"}, *p3[] = {"ab", "c"};
  kernel_cache_key(p1, 2, a);
  kernel_cache_key(p2, 2, b);
  kernel_cache_key(p3, 2, c);
  CHECK_EQ_INT(strlen(a), 32);
  CHECK(strspn(a, "0123456789abcdef") == 32);
  CHECK(strcmp(a, b) != 0);
  CHECK_STR(a, c);
  const char *p4[] = {"ab", "d"};
  kernel_cache_key(p4, 2, b);
  CHECK(strcmp(a, b) != 0);
}

TEST(folder_from_environment) {
  setup();
  char d[KERNEL_CACHE_PATH_MAX], want[KERNEL_CACHE_PATH_MAX];
  setenv("HLO_CACHE_DIR", "off", 1);
  CHECK(!kernel_cache_dir(d));
  setenv("HLO_CACHE_DIR", "", 1);
  CHECK(!kernel_cache_dir(d));
  snprintf(want, sizeof want, "%s/a/b/c", root);
  setenv("HLO_CACHE_DIR", want, 1);
  CHECK(kernel_cache_dir(d));
  CHECK_STR(d, want);
  struct stat st;
  CHECK(stat(want, &st) == 0 && S_ISDIR(st.st_mode));
  unsetenv("HLO_CACHE_DIR");
  char *home = getenv("HOME") ? strdup(getenv("HOME")) : NULL;
  snprintf(want, sizeof want, "%s/xdg", root);
  setenv("XDG_CACHE_HOME", want, 1);
  CHECK(kernel_cache_dir(d));
  snprintf(want, sizeof want, "%s/xdg/hlo/kernels", root);
  CHECK_STR(d, want);
  unsetenv("XDG_CACHE_HOME");
  snprintf(want, sizeof want, "%s/home", root);
  setenv("HOME", want, 1);
  CHECK(kernel_cache_dir(d));
  snprintf(want, sizeof want, "%s/home/.cache/hlo/kernels", root);
  CHECK_STR(d, want);
  if (home) setenv("HOME", home, 1);
  free(home);
  /* unusable: a path under a regular file */
  snprintf(want, sizeof want, "%s/count-file-as-dir", root);
  FILE *f = fopen(want, "w");
  if (f) fclose(f);
  snprintf(want, sizeof want, "%s/count-file-as-dir/sub", root);
  setenv("HLO_CACHE_DIR", want, 1);
  CHECK(!kernel_cache_dir(d));
}

TEST(commit_and_check) {
  setup();
  char dir[KERNEL_CACHE_PATH_MAX], tmp[KERNEL_CACHE_PATH_MAX], entry[KERNEL_CACHE_PATH_MAX];
  use_dir("commit", dir);
  CHECK(kernel_cache_dir(dir));
  const char *parts[] = {"x"};
  char key[KERNEL_CACHE_KEY_HEX];
  kernel_cache_key(parts, 1, key);
  CHECK(!kernel_cache_lookup(dir, key, entry));
  CHECK(kernel_cache_temp_path(dir, key, tmp));
  FILE *f = fopen(tmp, "w");
  if (f) {
    fputs("payload bytes", f);
    fclose(f);
  }
  CHECK(kernel_cache_commit(dir, key, tmp, entry));
  CHECK(access(tmp, F_OK) != 0);
  CHECK(kernel_cache_lookup(dir, key, entry));
  /* one flipped byte: a miss, and the entry is removed */
  f = fopen(entry, "r+");
  if (f) {
    fputc('P' ^ 1, f);
    fclose(f);
  }
  CHECK(!kernel_cache_lookup(dir, key, entry));
  CHECK(access(entry, F_OK) != 0);
  CHECK_EQ_INT(count_files(dir, ".tmp", ""), 0);
}

TEST(hit_miss_and_source_change) {
  setup();
  if (!have_cc()) return;
  char dir[KERNEL_CACHE_PATH_MAX], src[512];
  use_dir("hits", dir);
  int c0 = compiles();
  source_of(src, sizeof src, "kc_a", 11);
  CHECK_EQ_INT(compile_run(src, "kc_a"), 11);
  CHECK_EQ_INT(compiles(), c0 + 1);
  CHECK_EQ_INT(count_files(dir, "", ".so"), 1);
  CHECK_EQ_INT(compile_run(src, "kc_a"), 11); /* a hit: no compiler */
  CHECK_EQ_INT(compiles(), c0 + 1);
  source_of(src, sizeof src, "kc_a", 12);     /* changed source: a miss */
  CHECK_EQ_INT(compile_run(src, "kc_a"), 12);
  CHECK_EQ_INT(compiles(), c0 + 2);
  CHECK_EQ_INT(count_files(dir, "", ".so"), 2);
  CHECK_EQ_INT(count_files(dir, ".tmp", ""), 0);
}

/* The one entry of `dir` (path into out), or false. */
static bool the_entry(const char *dir, char out[KERNEL_CACHE_PATH_MAX]) {
  DIR *d = opendir(dir);
  struct dirent *e;
  int n = 0;
  while (d && (e = readdir(d)))
    if (e->d_name[0] != '.') {
      snprintf(out, KERNEL_CACHE_PATH_MAX, "%s/%s", dir, e->d_name);
      n++;
    }
  if (d) closedir(d);
  return n == 1;
}

TEST(corrupt_truncated_and_unloadable_entries) {
  setup();
  if (!have_cc()) return;
  char dir[KERNEL_CACHE_PATH_MAX], src[512], entry[KERNEL_CACHE_PATH_MAX];
  use_dir("corrupt", dir);
  source_of(src, sizeof src, "kc_b", 21);
  int c0 = compiles();
  CHECK_EQ_INT(compile_run(src, "kc_b"), 21);
  CHECK(the_entry(dir, entry));
  struct stat st;
  CHECK(stat(entry, &st) == 0);
  /* corrupt: bytes in the middle overwritten */
  FILE *f = fopen(entry, "r+");
  if (f) {
    fseek(f, (long)st.st_size / 2, SEEK_SET);
    fputs("garbage!", f);
    fclose(f);
  }
  CHECK_EQ_INT(compile_run(src, "kc_b"), 21);
  CHECK_EQ_INT(compiles(), c0 + 2);
  CHECK_EQ_INT(compile_run(src, "kc_b"), 21); /* replaced: a hit again */
  CHECK_EQ_INT(compiles(), c0 + 2);
  /* truncated */
  CHECK(the_entry(dir, entry));
  CHECK(truncate(entry, st.st_size / 3) == 0);
  CHECK_EQ_INT(compile_run(src, "kc_b"), 21);
  CHECK_EQ_INT(compiles(), c0 + 3);
  /* a sealed entry that is no shared object: passes the checksum, fails
     dlopen, so it is recompiled and replaced */
  CHECK(the_entry(dir, entry));
  char key[KERNEL_CACHE_KEY_HEX], tmp[KERNEL_CACHE_PATH_MAX], e2[KERNEL_CACHE_PATH_MAX];
  const char *base = strrchr(entry, '/') + 1;
  snprintf(key, sizeof key, "%.32s", base);
  CHECK(kernel_cache_temp_path(dir, key, tmp));
  f = fopen(tmp, "w");
  if (f) {
    fputs("not an ELF object", f);
    fclose(f);
  }
  CHECK(kernel_cache_commit(dir, key, tmp, e2));
  CHECK_STR(e2, entry);
  CHECK(kernel_cache_lookup(dir, key, e2));
  CHECK_EQ_INT(compile_run(src, "kc_b"), 21);
  CHECK_EQ_INT(compiles(), c0 + 4);
  CHECK_EQ_INT(compile_run(src, "kc_b"), 21);
  CHECK_EQ_INT(compiles(), c0 + 4);
  CHECK_EQ_INT(count_files(dir, ".tmp", ""), 0);
}

TEST(unwritable_folder_and_off) {
  setup();
  if (!have_cc()) return;
  char d[KERNEL_CACHE_PATH_MAX], src[512];
  snprintf(d, sizeof d, "%s/regular-file", root);
  FILE *f = fopen(d, "w");
  if (f) fclose(f);
  snprintf(d, sizeof d, "%s/regular-file/cache", root);
  setenv("HLO_CACHE_DIR", d, 1);
  source_of(src, sizeof src, "kc_c", 31);
  int c0 = compiles();
  CHECK_EQ_INT(compile_run(src, "kc_c"), 31); /* no error: compiled uncached */
  CHECK_EQ_INT(compile_run(src, "kc_c"), 31);
  CHECK_EQ_INT(compiles(), c0 + 2);
  setenv("HLO_CACHE_DIR", "off", 1);
  CHECK_EQ_INT(compile_run(src, "kc_c"), 31);
  CHECK_EQ_INT(compile_run(src, "kc_c"), 31);
  CHECK_EQ_INT(compiles(), c0 + 4);
}

TEST(two_processes_at_once) {
  setup();
  if (!have_cc()) return;
  char dir[KERNEL_CACHE_PATH_MAX], src[512];
  use_dir("race", dir);
  int c0 = compiles();
  for (int round = 0; round < 3; round++) {
    source_of(src, sizeof src, "kc_d", 40 + round);
    fflush(NULL);
    pid_t p[2];
    for (int i = 0; i < 2; i++) {
      p[i] = fork();
      if (p[i] == 0) _exit(compile_run(src, "kc_d") == 40 + round ? 0 : 1);
    }
    for (int i = 0; i < 2; i++) {
      int ws = 0;
      CHECK(p[i] > 0 && waitpid(p[i], &ws, 0) == p[i]);
      CHECK(WIFEXITED(ws) && WEXITSTATUS(ws) == 0);
    }
    CHECK_EQ_INT(count_files(dir, "", ".so") - count_files(dir, ".", ".so"), round + 1);
    CHECK_EQ_INT(count_files(dir, ".tmp", ""), 0);
  }
  int c = compiles() - c0;
  CHECK(c >= 3 && c <= 6); /* each source compiled once or twice, never failed */
  CHECK_EQ_INT(compile_run(src, "kc_d"), 42);
  CHECK_EQ_INT(compiles() - c0, c);
}

TEST(units_compile_concurrently) {
  setup();
  if (!have_cc()) return;
  char dir[KERNEL_CACHE_PATH_MAX];
  use_dir("units", dir);
  enum { U = 3 };
  char src[U][512], name[U][16];
  const char *names[U][1];
  cpu_kernel_fn fns[U] = {0};
  cpu_jit_unit units[U];
  for (int i = 0; i < U; i++) {
    snprintf(name[i], sizeof name[i], "kc_u%d", i);
    source_of(src[i], sizeof src[i], name[i], 100 + i);
    names[i][0] = name[i];
    units[i] = (cpu_jit_unit){.source = src[i], .names = names[i], .n = 1, .fns = &fns[i]};
  }
  char dump[KERNEL_CACHE_PATH_MAX];
  snprintf(dump, sizeof dump, "%s/dump", root);
  mkdir(dump, 0700);
  int c0 = compiles();
  for (int round = 0; round < 2; round++) {
    cpu_jit *j = NULL;
    hlo_status st = cpu_jit_compile_units(units, U, wrapper, dump, &j);
    CHECK(st == NULL);
    if (st) {
      hlo_status_print(st, stderr);
      hlo_status_free(st);
      continue;
    }
    for (int i = 0; i < U; i++) {
      int v = 0;
      void *bufs[] = {&v};
      CHECK(fns[i] != NULL);
      if (fns[i]) fns[i](bufs, 0, 1);
      CHECK_EQ_INT(v, 100 + i);
    }
    cpu_jit_destroy(j);
    CHECK_EQ_INT(compiles(), c0 + U); /* the second round hits */
  }
  CHECK_EQ_INT(count_files(dump, "kc_u", ".c"), U);
  /* a failing unit: the error quotes the compiler, nothing is left behind */
  units[1].source = "this is not C";
  cpu_jit *j = NULL;
  hlo_status st = cpu_jit_compile_units(units, U, wrapper, NULL, &j);
  CHECK(st != NULL && j == NULL);
  if (st) {
    CHECK(strstr(hlo_status_message(st), "failed") != NULL);
    hlo_status_free(st);
  }
  CHECK_EQ_INT(count_files(dir, ".tmp", ""), 0);
}

TEST(cleanup) {
  if (!root[0]) return;
  char cmd[400];
  snprintf(cmd, sizeof cmd, "rm -rf '%s'", root);
  CHECK(system(cmd) == 0);
}

TEST_MAIN()
