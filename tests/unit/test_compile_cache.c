/* test_compile_cache.c — the persistent compilation cache's files
 * (runtime/compile_cache.h), each test in its own mkdtemp root: keys and the
 * bound; a store/load round trip of several sections (empty, binary, large);
 * misses; every check of the reader on a flipped byte in each header field,
 * the section table and the data, on truncations (zero length included),
 * trailing bytes, a foreign magic and a foreign format version, a folder or
 * a symbolic link in place of an entry, the bad file removed each time; a hit refreshes the mtime; two processes storing one key
 * 20 times each while a third reads (never a bad entry, one entry, no
 * temporaries left); LRU eviction over entries and kernel objects with their
 * notes, `keep`, and eviction from store; the sweep of temporaries; list,
 * verify and clear; cache_meta_get; and the miss explanation on crafted
 * metadata (shape, element type, option, version, module_hash alone, the
 * closest of several, no entry for the function). */
#include <dirent.h>
#include <fcntl.h>
#include <ftw.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>
#include "runtime/compile_cache.h"
#include "test.h"
#define XXH_INLINE_ALL
#include <xxhash.h>

/* ------------------------------------------------------------------ helpers */

static void new_root(char out[256]) {
  snprintf(out, 256, "%s/hlo-cc-test-XXXXXX", getenv("TMPDIR") ? getenv("TMPDIR") : "/tmp");
  if (!mkdtemp(out)) {
    perror("mkdtemp");
    exit(1);
  }
}

static int rm_one(const char *p, const struct stat *st, int flag, struct FTW *f) {
  (void)st, (void)flag, (void)f;
  return remove(p);
}
static void rm_root(const char *root) { nftw(root, rm_one, 16, FTW_DEPTH | FTW_PHYS); }

static void path_of(char out[512], const char *root, const char *rel) {
  snprintf(out, 512, "%s/%s", root, rel);
}

static bool exists(const char *root, const char *rel) {
  char p[512];
  struct stat st;
  path_of(p, root, rel);
  return lstat(p, &st) == 0;
}

/* Files in ROOT/sub whose name starts with prefix. */
static int count_files(const char *root, const char *sub, const char *prefix) {
  char p[512];
  path_of(p, root, sub);
  DIR *d = opendir(p);
  int n = 0;
  struct dirent *e;
  while (d && (e = readdir(d)))
    n += strcmp(e->d_name, ".") && strcmp(e->d_name, "..") &&
         !strncmp(e->d_name, prefix, strlen(prefix));
  if (d) closedir(d);
  return n;
}

static unsigned char *slurp(const char *path, size_t *len) {
  FILE *f = fopen(path, "rb");
  if (!f) return NULL;
  fseek(f, 0, SEEK_END);
  long n = ftell(f);
  fseek(f, 0, SEEK_SET);
  unsigned char *b = malloc(n ? (size_t)n : 1);
  *len = fread(b, 1, (size_t)n, f);
  fclose(f);
  return b;
}

static void spill(const char *path, const void *b, size_t len) {
  FILE *f = fopen(path, "wb");
  if (!f) return;
  fwrite(b, 1, len, f);
  fclose(f);
}

static void set_mtime(const char *path, time_t t) {
  struct timespec ts[2] = {{t, 0}, {t, 0}};
  utimensat(AT_FDCWD, path, ts, 0);
}

static time_t mtime_of(const char *path) {
  struct stat st;
  return stat(path, &st) == 0 ? st.st_mtime : 0;
}

static off_t size_of(const char *path) {
  struct stat st;
  return stat(path, &st) == 0 ? st.st_size : -1;
}

/* Stores an entry with a meta section `meta` (NULL: none) and `pad` bytes of
 * a "blob" section. */
static bool store_meta(const char *root, const char *key, const char *meta, size_t pad,
                       uint64_t max) {
  static unsigned char blob[1 << 16];
  cache_section s[2] = {{"blob", blob, pad}, {"meta", meta, meta ? strlen(meta) : 0}};
  hlo_status st = compile_cache_store(root, key, s, meta ? 2 : 1, max);
  if (st) {
    fprintf(stderr, "store: %s\n", hlo_status_message(st));
    hlo_status_free(st);
    return false;
  }
  return true;
}

#define KEY_A "0123456789abcdef0123456789abcdef"

/* Stores the three-section entry KEY_A, returns its path in p. */
static void store_sample(const char *root, char p[512]) {
  static const char text[] = "module @m {}";
  unsigned char bin[300];
  for (int i = 0; i < 300; i++) bin[i] = (unsigned char)(i * 7);
  cache_section s[3] = {{"module", text, sizeof text - 1}, {"empty", NULL, 0}, {"bin", bin, 300}};
  hlo_status st = compile_cache_store(root, KEY_A, s, 3, 1ull << 30);
  CHECK(st == NULL);
  hlo_status_free(st);
  path_of(p, root, "executables/" KEY_A ".hlox");
}

/* Loads KEY_A expecting CACHE_BAD with `check` in the message (and the path),
 * and the file removed. */
static void expect_bad(const char *root, const char *p, const char *check) {
  cache_entry *e = (cache_entry *)1;
  char *why = NULL;
  cache_lookup r = compile_cache_load(root, KEY_A, &e, &why);
  CHECK_EQ_INT(r, CACHE_BAD);
  CHECK(e == NULL);
  CHECK(why && strstr(why, check));
  CHECK(why && strstr(why, p));
  if (!why || !strstr(why, check)) fprintf(stderr, "  want \"%s\" in: %s\n", check, why);
  CHECK(!exists(root, "executables/" KEY_A ".hlox"));
  free(why);
}

/* --------------------------------------------------------------- key, bound */

TEST(key_is_32_hex_and_separates_parts) {
  char a[COMPILE_CACHE_KEY_HEX], b[COMPILE_CACHE_KEY_HEX], c[COMPILE_CACHE_KEY_HEX];
  const char *p1[] = {"ab", "c"}, *p2[] = {"a", "bc"};
  compile_cache_key(p1, 2, a);
  compile_cache_key(p2, 2, b);
  compile_cache_key(p1, 2, c);
  CHECK_EQ_INT(strlen(a), 32);
  CHECK_EQ_INT(strspn(a, "0123456789abcdef"), 32);
  CHECK(strcmp(a, b) != 0);
  CHECK_STR(a, c);
}

TEST(max_bytes_from_argument_environment_default) {
  const char *err = "x";
  unsetenv("HLO_CACHE_MAX_BYTES");
  CHECK_EQ_INT(compile_cache_max_bytes(0, &err), COMPILE_CACHE_DEFAULT_MAX_BYTES);
  CHECK(err == NULL);
  setenv("HLO_CACHE_MAX_BYTES", "3G", 1);
  CHECK_EQ_INT(compile_cache_max_bytes(0, &err), 3ull << 30);
  CHECK_EQ_INT(compile_cache_max_bytes(1234, &err), 1234);
  setenv("HLO_CACHE_MAX_BYTES", "512k", 1);
  CHECK_EQ_INT(compile_cache_max_bytes(0, &err), 512 << 10);
  setenv("HLO_CACHE_MAX_BYTES", "12Q", 1);
  CHECK_EQ_INT(compile_cache_max_bytes(0, &err), COMPILE_CACHE_DEFAULT_MAX_BYTES);
  /* the message does not name the variable: callers print "HLO_CACHE_MAX_BYTES: MESSAGE" */
  CHECK(err && strstr(err, "expected a number of bytes") && !strstr(err, "HLO_CACHE_MAX_BYTES"));
  setenv("HLO_CACHE_MAX_BYTES", "99999999999999999999", 1);
  err = NULL;
  CHECK_EQ_INT(compile_cache_max_bytes(0, &err), COMPILE_CACHE_DEFAULT_MAX_BYTES);
  CHECK(err != NULL);
  unsetenv("HLO_CACHE_MAX_BYTES");
}

/* ---------------------------------------------------------- store and load */

TEST(round_trip_of_several_sections) {
  char root[256], p[512];
  new_root(root);
  enum { BIG = 200000 };
  unsigned char *big = malloc(BIG);
  for (int i = 0; i < BIG; i++) big[i] = (unsigned char)(i * 131 + (i >> 8));
  unsigned char bin[] = {0, 1, 0, 255, 10, 13, 0};
  const char *meta = "function=main\nmodule=m\n";
  /* sizes around the writer's 64 KiB buffer: 40000 goes around it after
     buffered bytes, 70000 after a full buffer */
  cache_section s[6] = {{"meta", meta, strlen(meta)}, {"empty", "", 0}, {"bin", bin, sizeof bin},
                        {"mid", big + 7, 40000}, {"big", big, BIG}, {"mid2", big + 3, 70000}};
  hlo_status st = compile_cache_store(root, KEY_A, s, 6, 1ull << 30);
  CHECK(st == NULL);
  hlo_status_free(st);
  path_of(p, root, "executables/" KEY_A ".hlox");
  CHECK_EQ_INT(size_of(p), 48 + 6 * 12 + 4 + 5 + 3 + 3 + 3 + 4 + strlen(meta) + sizeof bin + 40000 +
                               BIG + 70000);
  CHECK_EQ_INT(count_files(root, "executables", ".tmp-"), 0);

  cache_entry *e = NULL;
  char *why = NULL;
  CHECK_EQ_INT(compile_cache_load(root, KEY_A, &e, &why), CACHE_HIT);
  CHECK(why == NULL);
  CHECK_EQ_INT(cache_entry_num_sections(e), 6);
  for (uint32_t i = 0; i < 6 && e; i++) {
    cache_section x = cache_entry_section_at(e, i);
    CHECK_STR(x.name, s[i].name);
    CHECK_EQ_INT(x.len, s[i].len);
    CHECK(x.len == 0 || !memcmp(x.data, s[i].data, x.len));
  }
  size_t len = 1;
  const void *d = cache_entry_section(e, "empty", &len);
  CHECK(d != NULL);
  CHECK_EQ_INT(len, 0);
  d = cache_entry_section(e, "big", &len);
  CHECK(d && len == BIG && !memcmp(d, big, BIG));
  CHECK(cache_entry_section(e, "nope", &len) == NULL);
  CHECK(cache_entry_section_at(e, 6).name == NULL);
  cache_entry_free(e);
  /* a second hit: still there and valid */
  CHECK_EQ_INT(compile_cache_load(root, KEY_A, &e, NULL), CACHE_HIT);
  cache_entry_free(e);
  free(big);
  rm_root(root);
}

TEST(zero_sections_round_trip) {
  char root[256];
  new_root(root);
  hlo_status st = compile_cache_store(root, KEY_A, NULL, 0, 1ull << 30);
  CHECK(st == NULL);
  hlo_status_free(st);
  cache_entry *e = NULL;
  CHECK_EQ_INT(compile_cache_load(root, KEY_A, &e, NULL), CACHE_HIT);
  CHECK_EQ_INT(cache_entry_num_sections(e), 0);
  cache_entry_free(e);
  rm_root(root);
}

TEST(misses_and_bad_arguments) {
  char root[256], p[512];
  new_root(root);
  cache_entry *e = (cache_entry *)1;
  char *why = (char *)1;
  CHECK_EQ_INT(compile_cache_load(root, KEY_A, &e, &why), CACHE_MISS);
  CHECK(e == NULL && why == NULL);
  path_of(p, root, "nowhere");
  CHECK_EQ_INT(compile_cache_load(p, KEY_A, &e, NULL), CACHE_MISS);
  CHECK_EQ_INT(compile_cache_load(root, "../x", &e, NULL), CACHE_MISS);
  CHECK_EQ_INT(compile_cache_load(NULL, KEY_A, &e, NULL), CACHE_MISS);
  /* keys that are not file-name safe, and sections without a name */
  hlo_status st = compile_cache_store(root, "../evil", NULL, 0, 0);
  CHECK(st && hlo_status_code_of(st) == HLO_INVALID_ARGUMENT);
  hlo_status_free(st);
  st = compile_cache_store(root, KEY_A "0", NULL, 0, 0);
  CHECK(st && hlo_status_code_of(st) == HLO_INVALID_ARGUMENT);
  hlo_status_free(st);
  cache_section s = {"", "x", 1};
  st = compile_cache_store(root, KEY_A, &s, 1, 0);
  CHECK(st && hlo_status_code_of(st) == HLO_INVALID_ARGUMENT);
  hlo_status_free(st);
  CHECK(!exists(root, "executables/" KEY_A ".hlox"));
  rm_root(root);
}

TEST(unwritable_root_is_unavailable) {
  char root[256], p[512];
  new_root(root);
  path_of(p, root, "file");
  spill(p, "x", 1); /* ROOT is a file: executables/ cannot be made under it */
  hlo_status st = compile_cache_store(p, KEY_A, NULL, 0, 0);
  CHECK(st && hlo_status_code_of(st) == HLO_UNAVAILABLE);
  CHECK(st && strstr(hlo_status_message(st), p));
  hlo_status_free(st);
  rm_root(root);
}

TEST(hit_sets_mtime_to_now) {
  char root[256], p[512];
  new_root(root);
  store_sample(root, p);
  set_mtime(p, 1000000000);
  cache_entry *e = NULL;
  CHECK_EQ_INT(compile_cache_load(root, KEY_A, &e, NULL), CACHE_HIT);
  cache_entry_free(e);
  CHECK(mtime_of(p) >= time(NULL) - 60);
  rm_root(root);
}

/* ------------------------------------------------------------------ checks */

/* Flips one byte at `off` (negative: from the end) of a fresh sample entry. */
static void flip_and_expect(long off, const char *check) {
  char root[256], p[512];
  new_root(root);
  store_sample(root, p);
  size_t len;
  unsigned char *b = slurp(p, &len);
  size_t at = off < 0 ? len - (size_t)(-off) : (size_t)off;
  b[at] ^= 0x40;
  spill(p, b, len);
  free(b);
  expect_bad(root, p, check);
  rm_root(root);
}

TEST(flipped_bytes_are_found_by_the_right_check) {
  flip_and_expect(0, "not a cache entry");           /* magic */
  flip_and_expect(12, "corrupt section table");      /* number of sections */
  flip_and_expect(16, "truncated");                  /* length: larger than the file */
  flip_and_expect(24, "checksum mismatch");          /* the checksum itself */
  flip_and_expect(39, "checksum mismatch");
  flip_and_expect(44, "corrupt header");             /* reserved bytes */
  flip_and_expect(48, "checksum mismatch");          /* section table: a name length */
  flip_and_expect(53, "checksum mismatch");          /* a section name */
  flip_and_expect(-1, "checksum mismatch");          /* data */
  flip_and_expect(-150, "checksum mismatch");
}

TEST(wrong_format_version) {
  char root[256], p[512];
  new_root(root);
  store_sample(root, p);
  size_t len;
  unsigned char *b = slurp(p, &len);
  b[8] = 7, b[9] = b[10] = b[11] = 0; /* the u32 only: nothing recomputed */
  spill(p, b, len);
  free(b);
  expect_bad(root, p, "format version 7, this hlo reads 1");
  rm_root(root);
}

TEST(foreign_file_is_not_a_cache_entry) {
  char root[256], p[512];
  new_root(root);
  store_sample(root, p);
  static const char junk[] = "ELF this is some other file, long enough for a header........";
  spill(p, junk, sizeof junk);
  expect_bad(root, p, "not a cache entry");
  rm_root(root);
}

TEST(truncations_and_trailing_bytes) {
  static const long cuts[] = {0, 1, 8, 47, 48, 60, -1};
  for (size_t i = 0; i < sizeof cuts / sizeof *cuts; i++) {
    char root[256], p[512];
    new_root(root);
    store_sample(root, p);
    size_t len;
    unsigned char *b = slurp(p, &len);
    size_t keep = cuts[i] < 0 ? len - 1 : (size_t)cuts[i];
    spill(p, b, keep);
    expect_bad(root, p, keep == 0 ? "truncated (empty file)" : "truncated");
    /* trailing: one byte more than the header says */
    store_sample(root, p);
    b = realloc(b, len + 1);
    b[len] = 0;
    spill(p, b, len + 1);
    if (i == 0) expect_bad(root, p, "trailing bytes");
    free(b);
    rm_root(root);
  }
}

/* A file with a valid header and checksum but a section that runs past the
 * end: only the section table check can find it. */
TEST(corrupt_section_table_with_a_valid_checksum) {
  char root[256], p[512];
  new_root(root);
  store_sample(root, p);
  size_t len;
  unsigned char *b = slurp(p, &len);
  /* the first section is "module" (12 bytes of data): claim 1000 */
  size_t dl_off = 48 + 4 + 6;
  CHECK_EQ_INT(b[dl_off], 12);
  b[dl_off] = 0xe8, b[dl_off + 1] = 0x03;
  XXH128_hash_t h = XXH3_128bits(b + 48, len - 48);
  for (int i = 0; i < 8; i++) {
    b[24 + i] = (unsigned char)(h.low64 >> (8 * i));
    b[32 + i] = (unsigned char)(h.high64 >> (8 * i));
  }
  spill(p, b, len);
  free(b);
  expect_bad(root, p, "corrupt section table");
  rm_root(root);
}

/* The number of sections is outside the checksum: one fewer leaves bytes
 * after the last section. */
TEST(fewer_sections_than_written) {
  char root[256], p[512];
  new_root(root);
  store_sample(root, p);
  size_t len;
  unsigned char *b = slurp(p, &len);
  CHECK_EQ_INT(b[12], 3);
  b[12] = 2;
  spill(p, b, len);
  free(b);
  expect_bad(root, p, "bytes after the last section");
  rm_root(root);
}

TEST(a_folder_in_place_of_an_entry_is_bad_not_a_crash) {
  char root[256], p[512];
  new_root(root);
  store_sample(root, p);
  unlink(p);
  mkdir(p, 0700);
  char *why = NULL;
  cache_entry *e = NULL;
  /* it cannot be unlinked: a miss (after a warning that says "could not
     remove it"), not CACHE_BAD, which means removed */
  CHECK_EQ_INT(compile_cache_load(root, KEY_A, &e, &why), CACHE_MISS);
  CHECK(why == NULL && e == NULL);
  struct stat sb;
  CHECK(stat(p, &sb) == 0 && S_ISDIR(sb.st_mode));
  free(why);
  rmdir(p);
  rm_root(root);
}

/* compile_cache_remove says whether the entry went. */
TEST(remove_reports_the_outcome) {
  char root[256], p[512], outcome[128];
  new_root(root);
  store_sample(root, p);
  CHECK(compile_cache_remove(root, KEY_A, outcome, sizeof outcome));
  CHECK_STR(outcome, "removed");
  CHECK(access(p, F_OK) != 0);
  CHECK(compile_cache_remove(root, KEY_A, outcome, sizeof outcome)); /* gone already */
  mkdir(p, 0700);
  CHECK(!compile_cache_remove(root, KEY_A, outcome, sizeof outcome));
  CHECK(strstr(outcome, "could not remove it: ") == outcome);
  rmdir(p);
  rm_root(root);
}

/* Entries are created 0644 (less the umask), for a cache shared by users. */
TEST(entries_are_readable_by_others) {
  char root[256], p[512];
  new_root(root);
  mode_t old = umask(022);
  store_sample(root, p);
  umask(old);
  struct stat sb;
  CHECK(stat(p, &sb) == 0);
  CHECK_EQ_INT(sb.st_mode & 0777, 0644);
  rm_root(root);
}

/* An entry is never a path outside the cache: a symbolic link in place of
 * one is bad and removed, its target left alone. */
TEST(a_symbolic_link_in_place_of_an_entry_is_bad) {
  char root[256], p[512], target[512];
  new_root(root);
  store_sample(root, p);
  path_of(target, root, "elsewhere.hlox");
  CHECK(rename(p, target) == 0);
  CHECK(symlink(target, p) == 0);
  char *why = NULL;
  cache_entry *e = NULL;
  CHECK_EQ_INT(compile_cache_load(root, KEY_A, &e, &why), CACHE_BAD);
  CHECK(why && strstr(why, "unreadable"));
  CHECK(!exists(root, "executables/" KEY_A ".hlox"));
  CHECK(exists(root, "elsewhere.hlox"));
  free(why);
  rm_root(root);
}

/* ------------------------------------------------------------- concurrency */

TEST(two_processes_store_one_key_concurrently) {
  char root[256], p[512];
  new_root(root);
  pid_t kids[2];
  for (int k = 0; k < 2; k++) {
    kids[k] = fork();
    if (kids[k] == 0) {
      unsigned char *data = malloc(100000);
      for (int i = 0; i < 100000; i++) data[i] = (unsigned char)(i ^ k);
      int fails = 0;
      for (int r = 0; r < 20; r++) {
        data[0] = (unsigned char)r;
        cache_section s[2] = {{"meta", "function=main\n", 14}, {"data", data, 100000}};
        hlo_status st = compile_cache_store(root, KEY_A, s, 2, 1ull << 30);
        if (st) {
          fprintf(stderr, "child %d: %s\n", k, hlo_status_message(st));
          fails++;
        }
        hlo_status_free(st);
      }
      _exit(fails ? 1 : 0);
    }
  }
  /* meanwhile, a reader never sees a bad entry */
  int bad = 0, hits = 0;
  for (int i = 0; i < 200; i++) {
    cache_entry *e = NULL;
    char *why = NULL;
    cache_lookup r = compile_cache_load(root, KEY_A, &e, &why);
    if (r == CACHE_BAD) fprintf(stderr, "reader: %s\n", why);
    bad += r == CACHE_BAD;
    hits += r == CACHE_HIT;
    free(why);
    cache_entry_free(e);
  }
  for (int k = 0; k < 2; k++) {
    int status = -1;
    waitpid(kids[k], &status, 0);
    CHECK(WIFEXITED(status) && WEXITSTATUS(status) == 0);
  }
  CHECK_EQ_INT(bad, 0);
  (void)hits;
  CHECK_EQ_INT(count_files(root, "executables", ""), 1);
  CHECK_EQ_INT(count_files(root, "executables", ".tmp-"), 0);
  cache_entry *e = NULL;
  CHECK_EQ_INT(compile_cache_load(root, KEY_A, &e, NULL), CACHE_HIT);
  size_t len = 0;
  CHECK(cache_entry_section(e, "data", &len) && len == 100000);
  cache_entry_free(e);
  path_of(p, root, "executables/" KEY_A ".hlox");
  rm_root(root);
}

/* ---------------------------------------------------------------- eviction */

TEST(eviction_removes_least_recently_used_first) {
  char root[256], p[512];
  new_root(root);
  const char *keys[3] = {"aaaa", "bbbb", "cccc"};
  for (int i = 0; i < 3; i++) CHECK(store_meta(root, keys[i], NULL, 1000, 1ull << 30));
  path_of(p, root, "kernels");
  mkdir(p, 0700);
  static char obj[2000];
  const char *kfiles[4] = {"kernels/k1.so", "kernels/k1.note", "kernels/k2.so", "kernels/.tmp-x"};
  for (int i = 0; i < 4; i++) {
    path_of(p, root, kfiles[i]);
    spill(p, obj, i == 1 ? 100 : sizeof obj);
  }
  time_t now = time(NULL);
  /* oldest first: aaaa, then the k1 pair (its note the newer of the two), bbbb, k2, cccc */
  struct { const char *rel; time_t t; } order[] = {
      {"executables/aaaa.hlox", now - 500}, {"kernels/k1.so", now - 450},
      {"kernels/k1.note", now - 400},       {"executables/bbbb.hlox", now - 300},
      {"kernels/k2.so", now - 200},         {"executables/cccc.hlox", now - 100}};
  uint64_t total = 0;
  for (size_t i = 0; i < sizeof order / sizeof *order; i++) {
    path_of(p, root, order[i].rel);
    set_mtime(p, order[i].t);
    total += (uint64_t)size_of(p);
  }
  path_of(p, root, "executables/aaaa.hlox");
  uint64_t a = (uint64_t)size_of(p);
  /* a bound that only aaaa must go for */
  compile_cache_evict(root, total - a, NULL);
  CHECK(!exists(root, "executables/aaaa.hlox"));
  CHECK(exists(root, "kernels/k1.so") && exists(root, "kernels/k1.note"));
  CHECK(exists(root, "executables/bbbb.hlox"));
  /* one byte less: the k1 pair goes, object and note together */
  compile_cache_evict(root, total - a - 1, NULL);
  CHECK(!exists(root, "kernels/k1.so") && !exists(root, "kernels/k1.note"));
  CHECK(exists(root, "executables/bbbb.hlox") && exists(root, "kernels/k2.so"));
  CHECK(exists(root, "kernels/.tmp-x")); /* temporaries are not the eviction's */
  /* the bound holds after eviction */
  cache_listing l;
  hlo_status st = compile_cache_list(root, false, &l);
  CHECK(st == NULL);
  CHECK(l.entry_bytes + l.kernel_bytes <= total - a - 1);
  cache_listing_free(&l);
  /* bound 0: everything goes but `keep` */
  path_of(p, root, "executables/bbbb.hlox");
  compile_cache_evict(root, 0, p);
  CHECK(exists(root, "executables/bbbb.hlox"));
  CHECK(!exists(root, "executables/cccc.hlox") && !exists(root, "kernels/k2.so"));
  rm_root(root);
}

TEST(store_evicts_and_keeps_the_new_entry) {
  char root[256], p[512];
  new_root(root);
  CHECK(store_meta(root, "old1", NULL, 3000, 1ull << 30));
  CHECK(store_meta(root, "old2", NULL, 3000, 1ull << 30));
  path_of(p, root, "executables/old1.hlox");
  set_mtime(p, time(NULL) - 100);
  path_of(p, root, "executables/old2.hlox");
  set_mtime(p, time(NULL) - 50);
  /* bound 7000: room for old2 and the new one, not old1 */
  CHECK(store_meta(root, "new1", NULL, 3000, 7000));
  CHECK(!exists(root, "executables/old1.hlox"));
  CHECK(exists(root, "executables/old2.hlox") && exists(root, "executables/new1.hlox"));
  /* a new entry alone larger than the bound is not stored, and the rest is
     still evicted down to the bound */
  CHECK(!store_meta(root, "huge", NULL, 20000, 1000));
  CHECK(!exists(root, "executables/huge.hlox"));
  CHECK_EQ_INT(count_files(root, "executables", ""), 0);
  rm_root(root);
}

/* ------------------------------------------------------------------- sweep */

TEST(sweep_removes_stale_temporaries_only) {
  char root[256], p[512], rel[128];
  new_root(root);
  store_sample(root, p);
  pid_t dead = fork();
  if (dead == 0) _exit(0);
  waitpid(dead, NULL, 0);
  time_t now = time(NULL);
  struct { long pid; time_t age; bool gone; } t[] = {
      {(long)dead, 600, true},       /* writer gone, over five minutes */
      {(long)dead, 60, false},       /* writer gone, recent: grace */
      {(long)getpid(), 600, false},  /* live writer, under an hour */
      {(long)getpid(), 4000, true},  /* over an hour */
  };
  for (int i = 0; i < 4; i++) {
    snprintf(rel, sizeof rel, "executables/.tmp-" KEY_A "-%ld-%d", t[i].pid, i);
    path_of(p, root, rel);
    spill(p, "x", 1);
    set_mtime(p, now - t[i].age);
  }
  compile_cache_sweep(root);
  for (int i = 0; i < 4; i++) {
    snprintf(rel, sizeof rel, "executables/.tmp-" KEY_A "-%ld-%d", t[i].pid, i);
    CHECK(exists(root, rel) != t[i].gone);
  }
  CHECK(exists(root, "executables/" KEY_A ".hlox"));
  rm_root(root);
}

/* ------------------------------------------------------- list, verify, clear */

TEST(list_verify_clear) {
  char root[256], p[512];
  new_root(root);
  CHECK(store_meta(root, "e1", "function=main\nmodule=a\narg.0=tensor<4xf32>\n", 100, 1ull << 30));
  CHECK(store_meta(root, "e2", "function=f\nmodule=b\n", 100, 1ull << 30));
  CHECK(store_meta(root, "e3", NULL, 100, 1ull << 30));
  CHECK(store_meta(root, "e4", "function=g\n", 100, 1ull << 30));
  time_t now = time(NULL);
  const char *rels[4] = {"executables/e1.hlox", "executables/e2.hlox", "executables/e3.hlox",
                         "executables/e4.hlox"};
  time_t ages[4] = {300, 100, 200, 400};
  uint64_t ebytes = 0;
  for (int i = 0; i < 4; i++) {
    path_of(p, root, rels[i]);
    set_mtime(p, now - ages[i]);
    ebytes += (uint64_t)size_of(p);
  }
  /* e4's data corrupted: only verify finds it */
  path_of(p, root, rels[3]);
  size_t len;
  unsigned char *b = slurp(p, &len);
  b[70] ^= 1; /* in the blob section's data */
  spill(p, b, len);
  free(b);
  set_mtime(p, now - 400);
  path_of(p, root, "kernels");
  mkdir(p, 0700);
  path_of(p, root, "kernels/k.so");
  spill(p, "0123456789", 10);
  path_of(p, root, "kernels/k.note");
  spill(p, "abc\n", 4);
  /* a temporary of a process that is gone, and one of a live process (this
     one: a store in progress, which clear leaves alone) */
  pid_t dead = fork();
  if (dead == 0) _exit(0);
  waitpid(dead, NULL, 0);
  char rel[64];
  snprintf(rel, sizeof rel, "executables/.tmp-e9-%ld-1", (long)dead);
  path_of(p, root, rel);
  spill(p, "partial", 7);
  char live[64];
  snprintf(live, sizeof live, "executables/.tmp-e8-%ld-1", (long)getpid());
  path_of(p, root, live);
  spill(p, "live", 4);
  path_of(p, root, "executables/README");
  spill(p, "not ours", 8);

  cache_listing l;
  hlo_status st = compile_cache_list(root, false, &l);
  CHECK(st == NULL);
  CHECK_EQ_INT(l.n, 4);
  CHECK_EQ_INT(l.entry_bytes, ebytes);
  CHECK_EQ_INT(l.kernel_files, 2);
  CHECK_EQ_INT(l.kernel_bytes, 14);
  if (l.n == 4) {
    CHECK_STR(l.entries[0].key, "e2"); /* most recently used first */
    CHECK_STR(l.entries[1].key, "e3");
    CHECK_STR(l.entries[2].key, "e1");
    CHECK_STR(l.entries[3].key, "e4");
    CHECK_STR(l.entries[0].meta, "function=f\nmodule=b\n");
    CHECK(l.entries[1].meta == NULL && l.entries[1].problem == NULL);
    CHECK_EQ_INT(l.entries[1].last_used, now - 200);
    CHECK(l.entries[3].problem == NULL); /* no checksum without verify */
    CHECK_STR(l.entries[3].meta, "function=g\n");
  }
  cache_listing_free(&l);

  st = compile_cache_list(root, true, &l);
  CHECK(st == NULL);
  CHECK_EQ_INT(l.n, 4);
  int problems = 0;
  for (uint32_t i = 0; i < l.n; i++) problems += l.entries[i].problem != NULL;
  CHECK_EQ_INT(problems, 1);
  if (l.n == 4) {
    CHECK(l.entries[3].problem && strstr(l.entries[3].problem, "checksum mismatch"));
    CHECK(l.entries[3].meta == NULL);
  }
  cache_listing_free(&l);
  CHECK(exists(root, rels[3])); /* verify removes nothing */

  /* a truncated entry shows in a plain listing too */
  path_of(p, root, rels[0]);
  uint64_t e1_bytes = (uint64_t)size_of(p);
  CHECK(truncate(p, 30) == 0);
  st = compile_cache_list(root, false, &l);
  CHECK(st == NULL);
  problems = 0;
  for (uint32_t i = 0; i < l.n; i++)
    problems += l.entries[i].problem && strstr(l.entries[i].problem, "truncated");
  CHECK_EQ_INT(problems, 1);
  cache_listing_free(&l);

  uint64_t files = 0, bytes = 0;
  st = compile_cache_clear(root, &files, &bytes);
  CHECK(st == NULL);
  CHECK_EQ_INT(files, 4 + 2 + 1);
  CHECK_EQ_INT(bytes, ebytes - e1_bytes + 30 + 14 + 7);
  CHECK(exists(root, "executables") && exists(root, "kernels"));
  CHECK(exists(root, "executables/README"));
  CHECK(exists(root, live));
  path_of(p, root, live);
  unlink(p);
  st = compile_cache_list(root, true, &l);
  CHECK(st == NULL);
  CHECK_EQ_INT(l.n, 0);
  CHECK_EQ_INT(l.kernel_files, 0);
  cache_listing_free(&l);
  /* a missing root is an empty listing, and nothing to clear */
  path_of(p, root, "nowhere");
  st = compile_cache_list(p, false, &l);
  CHECK(st == NULL && l.n == 0);
  cache_listing_free(&l);
  st = compile_cache_clear(p, &files, NULL);
  CHECK(st == NULL && files == 0);
  rm_root(root);
}

/* -------------------------------------------------------------------- meta */

TEST(meta_get) {
  const char *m = "function=main\nmodule=m\r\narg.0=tensor<4xf32>\nempty=\nx=1=2";
  char out[16];
  CHECK(cache_meta_get(m, strlen(m), "function", out, sizeof out));
  CHECK_STR(out, "main");
  CHECK(cache_meta_get(m, strlen(m), "module", out, sizeof out));
  CHECK_STR(out, "m");
  CHECK(cache_meta_get(m, strlen(m), "empty", out, sizeof out));
  CHECK_STR(out, "");
  CHECK(cache_meta_get(m, strlen(m), "x", out, sizeof out));
  CHECK_STR(out, "1=2");
  CHECK(!cache_meta_get(m, strlen(m), "func", out, sizeof out));
  CHECK(!cache_meta_get(m, strlen(m), "arg", out, sizeof out));
  char small[5];
  CHECK(cache_meta_get(m, strlen(m), "arg.0", small, sizeof small));
  CHECK_STR(small, "tens");
  /* len bounds the search: the last field cut off */
  CHECK(!cache_meta_get(m, 10, "module", out, sizeof out));
}

/* ----------------------------------------------------------------- explain */

static cache_listing listing(cache_listing_entry *e, uint32_t n) {
  cache_listing l = {.entries = e, .n = n};
  return l;
}

#define BASE                                                                       \
  "function=main\nmodule=jit_f\narg.0=tensor<8xf32>\narg.1=tensor<64x128xf32>\n" \
  "result.0=tensor<8xf32>\nbackend=cpu\noption.passes=default\nhlo_version=0.1.0+3f2a\n" \
  "module_hash=1111\n"

static char *explain(const char *const *metas, uint32_t n, const char *want, char key[33]) {
  cache_listing_entry e[8];
  memset(e, 0, sizeof e);
  for (uint32_t i = 0; i < n; i++) {
    snprintf(e[i].key, sizeof e[i].key, "k%u", i);
    e[i].meta = (char *)metas[i];
  }
  cache_listing l = listing(e, n);
  return compile_cache_explain(&l, want, key);
}

TEST(explain_shape_change) {
  const char *m[] = {BASE "created=1\nunits=4\n"};
  char key[33];
  char *t = explain(m, 1,
                    "function=main\nmodule=jit_f\narg.0=tensor<8xf32>\narg.1=tensor<64x256xf32>\n"
                    "result.0=tensor<8xf32>\nbackend=cpu\noption.passes=default\n"
                    "hlo_version=0.1.0+3f2a\nmodule_hash=2222\ncreated=2\n",
                    key);
  CHECK_STR(t, "argument 1: shape 64x128 -> 64x256\nmodule_hash: the program's text differs too\n");
  CHECK_STR(key, "k0");
  free(t);
}

TEST(explain_dtype_and_result_change) {
  const char *m[] = {BASE};
  char *t = explain(m, 1,
                    "function=main\nmodule=jit_f\narg.0=tensor<8xbf16>\narg.1=tensor<64x128xf32>\n"
                    "result.0=tensor<4x2xbf16>\nbackend=cpu\noption.passes=default\n"
                    "hlo_version=0.1.0+3f2a\nmodule_hash=1111\n",
                    NULL);
  CHECK_STR(t, "argument 0: element type f32 -> bf16\nresult 0: shape 8 -> 4x2\n"
               "result 0: element type f32 -> bf16\n");
  free(t);
}

TEST(explain_option_version_and_hash_alone) {
  const char *m[] = {BASE};
  char *t = explain(m, 1,
                    "function=main\nmodule=jit_f\narg.0=tensor<8xf32>\narg.1=tensor<64x128xf32>\n"
                    "result.0=tensor<8xf32>\nbackend=cpu\noption.passes=none\n"
                    "hlo_version=0.1.0+9bc1\nmodule_hash=1111\n",
                    NULL);
  CHECK_STR(t, "option passes: default -> none\nhlo_version: 0.1.0+3f2a -> 0.1.0+9bc1\n");
  free(t);
  t = explain(m, 1,
              "function=main\nmodule=jit_f\narg.0=tensor<8xf32>\narg.1=tensor<64x128xf32>\n"
              "result.0=tensor<8xf32>\nbackend=cpu\noption.passes=default\n"
              "hlo_version=0.1.0+3f2a\nmodule_hash=3333\ncreated=99\ncompile_ms=5\n",
              NULL);
  CHECK_STR(t, "module_hash: the program's text differs (same signature and options)\n");
  free(t);
  /* a field present on one side only, and an argument added */
  t = explain(m, 1, BASE "arg.2=tensor<f32>\nfast_math=1\n", NULL);
  CHECK_STR(t, "argument 2: (absent) -> tensor<f32>\nfast_math: (absent) -> 1\n");
  free(t);
}

TEST(explain_picks_the_closest_entry) {
  /* k0 differs in two fields, k1 in one, k2 is another function, k3 has no meta */
  const char *m[] = {
      "function=main\nmodule=jit_f\narg.0=tensor<2xf32>\nbackend=gpu\n",
      "function=main\nmodule=jit_f\narg.0=tensor<2xf32>\nbackend=cpu\n",
      "function=other\nmodule=jit_f\narg.0=tensor<4xf32>\nbackend=cpu\n",
      NULL,
  };
  char key[33];
  char *t = explain(m, 4, "function=main\nmodule=jit_f\narg.0=tensor<4xf32>\nbackend=cpu\n", key);
  CHECK_STR(key, "k1");
  CHECK_STR(t, "argument 0: shape 2 -> 4\n");
  free(t);
  /* a tie goes to the first (most recently used) */
  const char *tie[] = {m[1], "function=main\nmodule=jit_f\narg.0=tensor<8xf32>\nbackend=cpu\n"};
  t = explain(tie, 2, "function=main\nmodule=jit_f\narg.0=tensor<4xf32>\nbackend=cpu\n", key);
  CHECK_STR(key, "k0");
  free(t);
  /* the fewest differing fields first, and only among those the most
     recently used, whatever the listing's order: k0 (1 field, older), k1 (1
     field, newer), k2 (2 fields, newest) -> k1 */
  const char *three[] = {m[1], "function=main\nmodule=jit_f\narg.0=tensor<8xf32>\nbackend=cpu\n",
                         m[0]};
  cache_listing_entry e[3];
  memset(e, 0, sizeof e);
  int64_t used[3] = {100, 200, 300};
  for (int i = 0; i < 3; i++) {
    snprintf(e[i].key, sizeof e[i].key, "k%d", i);
    e[i].meta = (char *)three[i];
    e[i].last_used = used[i];
  }
  cache_listing l = listing(e, 3);
  t = compile_cache_explain(&l, "function=main\nmodule=jit_f\narg.0=tensor<4xf32>\nbackend=cpu\n",
                            key);
  CHECK_STR(key, "k1");
  CHECK_STR(t, "argument 0: shape 8 -> 4\n");
  free(t);
}

TEST(explain_no_entry_for_the_function) {
  const char *m[] = {BASE, "function=main\nmodule=other\n"};
  char key[33] = "junk";
  char *t = explain(m, 2, "function=predict\nmodule=jit_f\narg.0=tensor<8xf32>\n", key);
  CHECK_STR(t, "no cached entry for @predict of module jit_f\n");
  CHECK_STR(key, "");
  free(t);
  t = explain(m, 0, "function=main\nmodule=jit_f\n", key);
  CHECK_STR(t, "no cached entry for @main of module jit_f\n");
  free(t);
  /* same function, other module: no candidate either */
  t = explain(m + 1, 1, "function=main\nmodule=jit_f\n", key);
  CHECK_STR(t, "no cached entry for @main of module jit_f\n");
  free(t);
}

TEST(explain_through_a_real_listing) {
  char root[256];
  new_root(root);
  CHECK(store_meta(root, "e1", BASE, 10, 1ull << 30));
  cache_listing l;
  hlo_status st = compile_cache_list(root, false, &l);
  CHECK(st == NULL);
  char key[33];
  char *t = compile_cache_explain(&l, "function=main\nmodule=jit_f\narg.0=tensor<8xf32>\n"
                                      "arg.1=tensor<64x128xf16>\nresult.0=tensor<8xf32>\n"
                                      "backend=cpu\noption.passes=default\n"
                                      "hlo_version=0.1.0+3f2a\nmodule_hash=1111\n",
                                  key);
  CHECK_STR(t, "argument 1: element type f32 -> f16\n");
  CHECK_STR(key, "e1");
  free(t);
  cache_listing_free(&l);
  rm_root(root);
}

TEST_MAIN()
