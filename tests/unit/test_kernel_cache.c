/* test_kernel_cache.c — the kernel cache (backend/cpu/kernel_cache.h) alone
 * and through the JIT (cpu_jit_compile / cpu_jit_compile_units): keys; the
 * folder from HLO_CACHE_DIR / XDG_CACHE_HOME / HOME, "off", an unwritable
 * one; a hit runs no compiler (counted by a wrapper script given as
 * HLO_CC); a changed source misses; a corrupt, a truncated and an
 * unloadable entry are recompiled and replaced; an unwritable folder
 * compiles uncached without an error; two processes compiling the same
 * source at once both succeed and leave one entry and no temporary file;
 * several units compile concurrently; notes (and the compiler's version
 * note: a second process runs no `cc --version`); stale
 * temporaries (of dead processes, or over an hour old) are swept, those of
 * live ones kept, and an interrupted run leaves nothing that the next
 * process's first compile does not remove; HLO_CC with flags ("CC -DX=1");
 * a compiler error or a load failure names the kernel (and its location).
 *
 * When no C compiler can be started the JIT tests print "skipped" with the
 * reason and pass. */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/time.h>
#include <sys/wait.h>
#include <time.h>
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

/* Compiles with `cc` and runs the kernel; its stored value, or -1 on an
 * error. */
static int compile_run_cc(const char *source, const char *name, const char *cc) {
  const char *names[] = {name};
  cpu_kernel_fn fn = NULL;
  cpu_jit *j = NULL;
  hlo_status st = cpu_jit_compile(source, cc, NULL, names, 1, &fn, &j);
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

static int compile_run(const char *source, const char *name) {
  return compile_run_cc(source, name, wrapper);
}

/* HLO_CACHE_DIR = the root ROOT/sub; out = its kernel folder ROOT/sub/kernels. */
static void use_dir(const char *sub, char out[KERNEL_CACHE_PATH_MAX]) {
  snprintf(out, KERNEL_CACHE_PATH_MAX, "%s/%s", root, sub);
  setenv("HLO_CACHE_DIR", out, 1);
  snprintf(out, KERNEL_CACHE_PATH_MAX, "%s/%s/kernels", root, sub);
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
  CHECK(!kernel_cache_dir(NULL, d));
  /* empty: as if unset, the default root ($XDG_CACHE_HOME/hlo here) */
  setenv("HLO_CACHE_DIR", "", 1);
  snprintf(want, sizeof want, "%s/xdg", root);
  const char *old_xdg = getenv("XDG_CACHE_HOME");
  char saved_xdg[1024];
  snprintf(saved_xdg, sizeof saved_xdg, "%s", old_xdg ? old_xdg : "");
  setenv("XDG_CACHE_HOME", want, 1);
  CHECK(kernel_cache_dir(NULL, d));
  strcat(want, "/hlo/kernels");
  CHECK_STR(d, want);
  if (old_xdg) setenv("XDG_CACHE_HOME", saved_xdg, 1);
  else unsetenv("XDG_CACHE_HOME");
  snprintf(want, sizeof want, "%s/a/b/c", root);
  setenv("HLO_CACHE_DIR", want, 1);
  CHECK(kernel_cache_dir(NULL, d));
  strcat(want, "/kernels");  /* the kernels live in ROOT/kernels */
  CHECK_STR(d, want);
  struct stat st;
  CHECK(stat(want, &st) == 0 && S_ISDIR(st.st_mode));
  /* the root given by the caller wins over the environment; "off" is none */
  snprintf(want, sizeof want, "%s/given", root);
  CHECK(kernel_cache_dir(want, d));
  strcat(want, "/kernels");
  CHECK_STR(d, want);
  CHECK(!kernel_cache_dir("off", d));
  unsetenv("HLO_CACHE_DIR");
  char *home = getenv("HOME") ? strdup(getenv("HOME")) : NULL;
  snprintf(want, sizeof want, "%s/xdg", root);
  setenv("XDG_CACHE_HOME", want, 1);
  CHECK(kernel_cache_dir(NULL, d));
  snprintf(want, sizeof want, "%s/xdg/hlo/kernels", root);
  CHECK_STR(d, want);
  unsetenv("XDG_CACHE_HOME");
  snprintf(want, sizeof want, "%s/home", root);
  setenv("HOME", want, 1);
  CHECK(kernel_cache_dir(NULL, d));
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
  CHECK(!kernel_cache_dir(NULL, d));
}

TEST(commit_and_check) {
  setup();
  char dir[KERNEL_CACHE_PATH_MAX], tmp[KERNEL_CACHE_PATH_MAX], entry[KERNEL_CACHE_PATH_MAX];
  use_dir("commit", dir);
  CHECK(kernel_cache_dir(NULL, dir));
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

/* The one entry (KEY.so) of `dir` (path into out), or false. */
static bool the_entry(const char *dir, char out[KERNEL_CACHE_PATH_MAX]) {
  DIR *d = opendir(dir);
  struct dirent *e;
  int n = 0;
  while (d && (e = readdir(d)))
    if (e->d_name[0] != '.' && strstr(e->d_name, ".so")) {
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

/* Sets the modification time of `path` to `age` seconds ago. */
static void make_aged_keep(const char *path, double age) {
  struct timeval tv[2];
  gettimeofday(&tv[0], NULL);
  tv[0].tv_sec -= (time_t)age;
  tv[1] = tv[0];
  utimes(path, tv);
}

TEST(notes) {
  setup();
  char dir[KERNEL_CACHE_PATH_MAX], buf[64];
  use_dir("notes", dir);
  CHECK(kernel_cache_dir(NULL, dir));
  const char *parts[] = {"note"};
  char key[KERNEL_CACHE_KEY_HEX];
  kernel_cache_key(parts, 1, key);
  CHECK(!kernel_cache_read_note(dir, key, 0, buf, sizeof buf));
  kernel_cache_write_note(dir, key, "gcc (Debian 12.2.0-14) 12.2.0");
  CHECK(kernel_cache_read_note(dir, key, 0, buf, sizeof buf));
  CHECK_STR(buf, "gcc (Debian 12.2.0-14) 12.2.0");
  kernel_cache_write_note(dir, key, "second");
  CHECK(kernel_cache_read_note(dir, key, 0, buf, sizeof buf));
  CHECK_STR(buf, "second");
  CHECK(!kernel_cache_read_note(dir, key, 0, buf, 4)); /* cut short: absent */
  kernel_cache_write_note(dir, key, "two\nlines");  /* refused: the old one stays */
  CHECK(kernel_cache_read_note(dir, key, 0, buf, sizeof buf));
  CHECK_STR(buf, "second");
  char p[KERNEL_CACHE_PATH_MAX + 64];
  snprintf(p, sizeof p, "%s/%s.note", dir, key);
  /* an old note is absent to a reader that wants it fresher */
  make_aged_keep(p, 7200);
  CHECK(!kernel_cache_read_note(dir, key, 3600, buf, sizeof buf));
  CHECK(kernel_cache_read_note(dir, key, 0, buf, sizeof buf));
  CHECK(kernel_cache_read_note(dir, key, 10000, buf, sizeof buf));
  FILE *f = fopen(p, "w");  /* damaged: no final newline */
  if (f) {
    fputs("half", f);
    fclose(f);
  }
  CHECK(!kernel_cache_read_note(dir, key, 0, buf, sizeof buf));
  CHECK_EQ_INT(count_files(dir, ".tmp", ""), 0);
}

/* A pid that no process has now (a child that exited and was reaped). */
static long dead_pid(void) {
  pid_t p = fork();
  if (p == 0) _exit(0);
  int ws;
  waitpid(p, &ws, 0);
  return (long)p;
}

/* Makes file (or folder) `path`, modified `age` seconds ago. */
static void make_aged(const char *path, bool folder, double age) {
  if (folder) {
    mkdir(path, 0700);
    char f[600];
    snprintf(f, sizeof f, "%s/u0.c", path);
    FILE *x = fopen(f, "w");
    if (x) fclose(x);
  } else {
    FILE *x = fopen(path, "w");
    if (x) fclose(x);
  }
  make_aged_keep(path, age);
}

static bool exists(const char *path) { return access(path, F_OK) == 0; }

TEST(sweep_stale_temporaries) {
  setup();
  char dir[KERNEL_CACHE_PATH_MAX];
  use_dir("sweep", dir);
  CHECK(kernel_cache_dir(NULL, dir));
  long dead = dead_pid(), self = (long)getpid();
  const char *key = "0123456789abcdef0123456789abcdef";
  char dead_old[5000], dead_new[5000], live_old[5000], live_new[5000], entry[5000], other[5000];
  snprintf(dead_old, sizeof dead_old, "%s/.tmp-%s-%ld-0-1.so", dir, key, dead);
  snprintf(dead_new, sizeof dead_new, "%s/.tmp-%s-%ld-1-1.so", dir, key, dead);
  snprintf(live_old, sizeof live_old, "%s/.tmp-%s-%ld-2-1.so", dir, key, self);
  snprintf(live_new, sizeof live_new, "%s/.tmp-%s-%ld-3-1.so", dir, key, self);
  snprintf(entry, sizeof entry, "%s/%s.so", dir, key);
  snprintf(other, sizeof other, "%s/.tmp-not-ours", dir);
  make_aged(dead_old, false, KERNEL_CACHE_DEAD_GRACE_S + 60);
  make_aged(dead_new, false, 5);
  make_aged(live_old, false, KERNEL_CACHE_STALE_S + 60);
  make_aged(live_new, false, 5);
  make_aged(entry, false, 10 * KERNEL_CACHE_STALE_S);
  make_aged(other, false, 10 * KERNEL_CACHE_STALE_S);
  kernel_cache_sweep(dir);
  CHECK(!exists(dead_old));  /* its process is gone */
  CHECK(exists(dead_new));   /* in its grace time */
  CHECK(!exists(live_old));  /* over an hour old */
  CHECK(exists(live_new));
  CHECK(exists(entry));      /* entries are never swept */
  CHECK(exists(other));      /* not a name the cache makes */
  /* the JIT's temporaries in TMPDIR */
  char tmp[600], p[8][700];
  snprintf(tmp, sizeof tmp, "%s/sweep-tmp", root);
  mkdir(tmp, 0700);
  snprintf(p[0], sizeof p[0], "%s/hlo-jit-%ld-aaaaaa", tmp, dead);   /* dead, past grace */
  snprintf(p[1], sizeof p[1], "%s/hlo-jit-%ld-bbbbbb", tmp, dead);   /* dead, fresh */
  snprintf(p[2], sizeof p[2], "%s/hlo-jit-%ld-cccccc", tmp, self);   /* live, fresh */
  snprintf(p[3], sizeof p[3], "%s/hlo-jit-dddddd", tmp);             /* old layout, a folder */
  snprintf(p[4], sizeof p[4], "%s/hlo-jit-eeeeee", tmp);             /* old layout, fresh */
  snprintf(p[5], sizeof p[5], "%s/hlo-ccver-%ld-ffffff", tmp, dead); /* dead, past grace */
  snprintf(p[6], sizeof p[6], "%s/other-file", tmp);
  make_aged(p[0], false, CPU_JIT_DEAD_GRACE_S + 30);
  make_aged(p[1], false, 1);
  make_aged(p[2], false, CPU_JIT_DEAD_GRACE_S + 30);
  make_aged(p[3], true, CPU_JIT_STALE_S + 60);
  make_aged(p[4], true, 1);
  make_aged(p[5], false, CPU_JIT_DEAD_GRACE_S + 30);
  make_aged(p[6], false, 10 * CPU_JIT_STALE_S);
  cpu_jit_sweep_temporaries(tmp);
  CHECK(!exists(p[0]));
  CHECK(exists(p[1]));
  CHECK(exists(p[2]));
  CHECK(!exists(p[3]));
  CHECK(exists(p[4]));
  CHECK(!exists(p[5]));
  CHECK(exists(p[6]));
}

TEST(compiler_command_with_flags) {
  setup();
  if (!have_cc()) return;
  char dir[KERNEL_CACHE_PATH_MAX], cmd[600];
  use_dir("ccflags", dir);
  const char *src =
      "#include <stdint.h>\nvoid kc_f(void *const *bufs, int64_t b, int64_t e) {\n"
      "  (void)b; (void)e; ((int *)bufs[0])[0] = HLO_TEST_VALUE;\n}\n";
  const char *names[] = {"kc_f"};
  for (int v = 77; v <= 78; v++) {
    /* the words after the first are flags; the command is in the key, so
       the second is a miss that gives 78, not the first's entry */
    snprintf(cmd, sizeof cmd, "%s  -DHLO_TEST_VALUE=%d", wrapper, v);
    cpu_kernel_fn fn = NULL;
    cpu_jit *j = NULL;
    hlo_status st = cpu_jit_compile(src, cmd, NULL, names, 1, &fn, &j);
    CHECK(st == NULL && fn != NULL);
    if (st) {
      hlo_status_print(st, stderr);
      hlo_status_free(st);
      continue;
    }
    int x = 0;
    void *bufs[] = {&x};
    fn(bufs, 0, 1);
    CHECK_EQ_INT(x, v);
    cpu_jit_destroy(j);
  }
  CHECK_EQ_INT(count_files(dir, "", ".so") - count_files(dir, ".", ".so"), 2);
  cpu_kernel_fn fn = NULL;
  cpu_jit *j = NULL;
  hlo_status st = cpu_jit_compile(src, "   ", NULL, names, 1, &fn, &j);
  CHECK(st && hlo_status_code_of(st) == HLO_INVALID_ARGUMENT && j == NULL);
  hlo_status_free(st);
}

TEST(errors_name_the_kernel) {
  setup();
  if (!have_cc()) return;
  char dir[KERNEL_CACHE_PATH_MAX];
  use_dir("errors", dir);
  /* two kernels in one unit, the second broken on line 6 */
  const char *src =
      "#include <stdint.h>\n"                                                     /* 1 */
      "void kc_ok(void *const *bufs, int64_t b, int64_t e) {\n"                   /* 2 */
      "  (void)b; (void)e; ((int *)bufs[0])[0] = 1;\n"                            /* 3 */
      "}\n"                                                                        /* 4 */
      "void kc_bad(void *const *bufs, int64_t b, int64_t e) {\n"                  /* 5 */
      "  (void)b; (void)e; ((int *)bufs[0])[0] = not_declared;\n"                 /* 6 */
      "}\n";
  const char *names[] = {"kc_ok", "kc_bad"};
  hlo_loc l0 = {.line = 11, .col = 3}, l1 = {.line = 12, .col = 5};
  const hlo_loc *locs[] = {&l0, &l1};
  const uint32_t lines[] = {2, 5};
  cpu_kernel_fn fns[2] = {0};
  cpu_jit_unit u = {.source = src, .names = names, .n = 2, .fns = fns, .locs = locs,
                    .lines = lines};
  cpu_jit *j = NULL;
  hlo_status st = cpu_jit_compile_units(&u, 1, wrapper, NULL, &j);
  CHECK(st && j == NULL);
  if (st) {
    CHECK(strstr(hlo_status_message(st), "failed") != NULL);
    CHECK(strstr(hlo_status_message(st), "kernel kc_bad") != NULL);
    CHECK(strstr(hlo_status_message(st), "not_declared") != NULL);
    CHECK(status_loc(st) && status_loc(st)->line == 12 && status_loc(st)->col == 5);
    hlo_status_free(st);
  }
  /* without lines: the unit as a whole */
  u.lines = NULL;
  st = cpu_jit_compile_units(&u, 1, wrapper, NULL, &j);
  CHECK(st && strstr(hlo_status_message(st), "one of the 2 kernels kc_ok ... kc_bad"));
  hlo_status_free(st);
  /* compiles, but does not load: an undefined function (the link allows it,
     dlopen's RTLD_NOW does not) */
  const char *src2 =
      "#include <stdint.h>\nvoid hlo_test_missing_fn(void);\n"
      "void kc_load(void *const *bufs, int64_t b, int64_t e) {\n"
      "  (void)bufs; (void)b; (void)e; hlo_test_missing_fn();\n}\n";
  const char *names2[] = {"kc_load"};
  const hlo_loc *locs2[] = {&l0};
  cpu_jit_unit u2 = {.source = src2, .names = names2, .n = 1, .fns = fns, .locs = locs2};
  st = cpu_jit_compile_units(&u2, 1, wrapper, NULL, &j);
  CHECK(st && j == NULL);
  if (st) {
    CHECK(strstr(hlo_status_message(st), "cannot load") != NULL);
    CHECK(strstr(hlo_status_message(st), "kernel kc_load") != NULL);
    CHECK(strstr(hlo_status_message(st), "hlo_test_missing_fn") != NULL);
    CHECK(status_loc(st) && status_loc(st)->line == 11);
    hlo_status_free(st);
  }
  /* a symbol the unit should define but does not */
  const char *names3[] = {"kc_ok", "kc_absent"};
  cpu_jit_unit u3 = {.source = "#include <stdint.h>\nvoid kc_ok(void *const *b, int64_t x, "
                               "int64_t y) { (void)b; (void)x; (void)y; }\n",
                     .names = names3, .n = 2, .fns = fns, .locs = locs};
  st = cpu_jit_compile_units(&u3, 1, wrapper, NULL, &j);
  CHECK(st && strstr(hlo_status_message(st), "lacks kernel kc_absent"));
  CHECK(st && status_loc(st) && status_loc(st)->line == 12);
  hlo_status_free(st);
  CHECK_EQ_INT(count_files(dir, ".tmp", ""), 0);
}

/* Run in a fresh process (the test binary re-executed with
 * HLO_KC_TEST_COMPILE set): one compile, its first, which sweeps. Exits 0
 * when the kernel stores 7. */
__attribute__((constructor(200))) static void compile_child(void) {
  if (!getenv("HLO_KC_TEST_COMPILE")) return;
  char src[512];
  source_of(src, sizeof src, "kc_child", 7);
  const char *names[] = {"kc_child"};
  cpu_kernel_fn fn = NULL;
  cpu_jit *j = NULL;
  hlo_status st = cpu_jit_compile(src, NULL, NULL, names, 1, &fn, &j);
  int v = 0;
  void *bufs[] = {&v};
  if (!st) fn(bufs, 0, 1);
  if (st) hlo_status_print(st, stderr);
  _exit(!st && v == 7 ? 0 : 1);
}

/* Runs the test binary again with HLO_KC_TEST_COMPILE (compile_child) and
 * the given TMPDIR and HLO_CC; whether it exited 0. */
static bool run_child(const char *tmpdir, const char *cc) {
  char self[4096];
  ssize_t n = readlink("/proc/self/exe", self, sizeof self - 1);
  if (n <= 0) return false;
  self[n] = 0;
  fflush(NULL);
  pid_t b = fork();
  if (b == 0) {
    if (tmpdir) setenv("TMPDIR", tmpdir, 1);
    setenv("HLO_CC", cc, 1);
    setenv("HLO_KC_TEST_COMPILE", "1", 1);
    execl(self, self, (char *)NULL);
    _exit(127);
  }
  int ws = 0;
  return b > 0 && waitpid(b, &ws, 0) == b && WIFEXITED(ws) && WEXITSTATUS(ws) == 0;
}

TEST(version_note_spares_a_process) {
  setup();
  if (!have_cc()) return;
  if (access("/proc/self/exe", F_OK) != 0) {
    printf("version_note_spares_a_process: skipped (no /proc/self/exe)\n");
    return;
  }
  char dir[KERNEL_CACHE_PATH_MAX], vw[600], vlog[600];
  use_dir("version", dir);
  snprintf(vlog, sizeof vlog, "%s/versions", root);
  snprintf(vw, sizeof vw, "%s/cc-version-count.sh", root);
  FILE *f = fopen(vw, "w");
  if (!f) return;
  fprintf(f, "#!/bin/sh\nfor a; do [ \"$a\" = --version ] && echo x >> '%s'; done\nexec %s \"$@\"\n",
          vlog, getenv("HLO_CC") && *getenv("HLO_CC") ? getenv("HLO_CC") : "cc");
  fclose(f);
  chmod(vw, 0755);
  /* two fresh processes, one compiler: `--version` runs once, the second
     process (a cache hit) starts no process at all */
  CHECK(run_child(NULL, vw));
  CHECK(run_child(NULL, vw));
  int n = 0, c;
  FILE *l = fopen(vlog, "r");
  while (l && (c = fgetc(l)) != EOF) n += c == '\n';
  if (l) fclose(l);
  CHECK_EQ_INT(n, 1);
  CHECK_EQ_INT(count_files(dir, "", ".note"), 1);
}

/* kernel_cache_store: bytes in, the same bytes out, 0644, nothing left
 * behind when it cannot store. */
TEST(store_bytes) {
  setup();
  char dir[KERNEL_CACHE_PATH_MAX], path[KERNEL_CACHE_PATH_MAX], key[KERNEL_CACHE_KEY_HEX];
  use_dir("store", dir);
  CHECK(kernel_cache_dir(NULL, dir));
  const char *parts[] = {"store"};
  kernel_cache_key(parts, 1, key);
  unsigned char obj[300];
  for (int i = 0; i < 300; i++) obj[i] = (unsigned char)(i * 7);
  int err = -1;
  mode_t old = umask(022);
  CHECK(kernel_cache_store(dir, key, obj, sizeof obj, &err));
  umask(old);
  CHECK_EQ_INT(err, 0);
  void *bytes = NULL;
  size_t len = 0;
  CHECK(kernel_cache_load(dir, key, path, &bytes, &len));
  CHECK(len == sizeof obj && bytes && !memcmp(bytes, obj, len));
  free(bytes);
  struct stat st;
  CHECK(stat(path, &st) == 0 && (st.st_mode & 0777) == 0644);
  CHECK_EQ_INT(count_files(dir, ".tmp-", ""), 0);
  char gone[KERNEL_CACHE_PATH_MAX + 20];
  snprintf(gone, sizeof gone, "%s/no/such", dir);
  CHECK(!kernel_cache_store(gone, key, obj, sizeof obj, &err));
  CHECK_EQ_INT(err, ENOENT);
}

TEST(interrupted_run_is_swept) {
  setup();
  if (!have_cc()) return;
  char dir[KERNEL_CACHE_PATH_MAX], tmp[600], slow[600], pidf[600];
  use_dir("interrupted", dir);
  CHECK(kernel_cache_dir(NULL, dir));
  snprintf(tmp, sizeof tmp, "%s/intr-tmp", root);
  mkdir(tmp, 0700);
  snprintf(pidf, sizeof pidf, "%s/slow.pid", root);
  snprintf(slow, sizeof slow, "%s/cc-slow.sh", root);
  FILE *f = fopen(slow, "w");
  if (!f) return;
  /* a compiler that, asked to compile, says where it is, then hangs */
  fprintf(f,
          "#!/bin/sh\ncase \" $* \" in *\" -shared \"*) echo $$ > '%s.tmp' && mv '%s.tmp' '%s'; "
          "exec sleep 60;; esac\nexec %s \"$@\"\n",
          pidf, pidf, pidf, getenv("HLO_CC") && *getenv("HLO_CC") ? getenv("HLO_CC") : "cc");
  fclose(f);
  chmod(slow, 0755);
  fflush(NULL);
  pid_t a = fork();
  if (a == 0) {
    /* a test started in the background by a shell without job control
     * inherits SIGINT ignored: the interrupt must reach this child */
    signal(SIGINT, SIG_DFL);
    setenv("TMPDIR", tmp, 1);
    char src[512];
    source_of(src, sizeof src, "kc_intr", 5);
    compile_run_cc(src, "kc_intr", slow);
    _exit(0);
  }
  long cc_pid = 0;
  for (int i = 0; i < 200 && !cc_pid; i++) {  /* up to 20 s */
    FILE *p = fopen(pidf, "r");
    if (p) {
      if (fscanf(p, "%ld", &cc_pid) != 1) cc_pid = 0;
      fclose(p);
    }
    if (!cc_pid) usleep(100 * 1000);
  }
  CHECK(cc_pid > 0);
  kill(a, SIGINT);  /* the run is interrupted mid-compile */
  int ws;
  waitpid(a, &ws, 0);
  CHECK(WIFSIGNALED(ws) && WTERMSIG(ws) == SIGINT);
  if (cc_pid > 0) kill((pid_t)cc_pid, SIGKILL);
  /* what it left: its private folder "hlo-jit-PID-XXXXXX" in TMPDIR (the
     compiler never writes into the cache folder; the source and the log
     were never named anywhere), nothing in the cache */
  CHECK_EQ_INT(count_files(dir, ".tmp-", ""), 0);
  CHECK_EQ_INT(count_files(tmp, "hlo-jit-", ""), 1);
  {
    DIR *td = opendir(tmp);
    struct dirent *te;
    while (td && (te = readdir(td))) {
      if (strncmp(te->d_name, "hlo-jit-", 8)) continue;
      char p[1000];
      snprintf(p, sizeof p, "%s/%s", tmp, te->d_name);
      make_aged_keep(p, CPU_JIT_DEAD_GRACE_S + 30);
    }
    if (td) closedir(td);
  }
  /* a store of a dead process interrupted in the cache folder */
  char stale[KERNEL_CACHE_PATH_MAX + 100];
  snprintf(stale, sizeof stale, "%s/.tmp-0123456789abcdef0123456789abcdef-%ld-0-1.so", dir,
           (long)a);
  FILE *sf = fopen(stale, "w");
  if (sf) fclose(sf);
  /* the same left by a run without the cache, and by an older build */
  char left[700];
  snprintf(left, sizeof left, "%s/hlo-jit-%ld-abcdef", tmp, (long)a);
  make_aged(left, false, CPU_JIT_DEAD_GRACE_S + 30);
  snprintf(left, sizeof left, "%s/hlo-jit-Xy12zW", tmp);
  make_aged(left, true, CPU_JIT_STALE_S + 60);
  DIR *d = opendir(dir);
  struct dirent *e;
  while (d && (e = readdir(d))) {
    if (strncmp(e->d_name, ".tmp-", 5)) continue;
    char p[KERNEL_CACHE_PATH_MAX + 300];
    snprintf(p, sizeof p, "%s/%s", dir, e->d_name);
    make_aged(p, false, KERNEL_CACHE_DEAD_GRACE_S + 30);
  }
  if (d) closedir(d);
  /* the next run's first compile sweeps it all */
  if (access("/proc/self/exe", F_OK) != 0) {
    printf("interrupted_run_is_swept: skipped the second run (no /proc/self/exe)\n");
    return;
  }
  CHECK(run_child(tmp, wrapper));
  CHECK_EQ_INT(count_files(dir, ".tmp-", ""), 0);
  CHECK_EQ_INT(count_files(tmp, "hlo-", ""), 0);
  CHECK_EQ_INT(count_files(dir, "", ".so") - count_files(dir, ".", ".so"), 1);
}

TEST(cleanup) {
  if (!root[0]) return;
  char cmd[400];
  snprintf(cmd, sizeof cmd, "rm -rf '%s'", root);
  CHECK(system(cmd) == 0);
}

TEST_MAIN()
