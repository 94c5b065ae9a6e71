/* cache.c — `hlo cache list|stats|clear|verify`: look into, check and empty
 * the persistent compilation cache (src/runtime/compile_cache.h): one line
 * per entry with its function and signature, the totals against the bound,
 * every entry's checksum re-checked. A thin layer over compile_cache_list,
 * compile_cache_clear and compile_cache_max_bytes. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>

#include "builtin.h"
#include "runtime/compile_cache.h"
#include "support/cache_dir.h"

static const char *const usage_cache =
    "usage: hlo cache list|stats|clear|verify [--cache-dir DIR]\n"
    "\n"
    "Looks into the persistent compilation cache: every compiled executable is\n"
    "one self-contained entry (ROOT/executables/KEY.hlox: the optimised module and\n"
    "its kernels' machine code, checksummed), and compiled kernels are kept apart\n"
    "(ROOT/kernels/). `hlo run`, `bench` and `compile` read and write it.\n"
    "\n"
    "  list     one line per entry, most recently used first: its key (first 12 hex\n"
    "           digits), size, last use, the function and module it is for, the\n"
    "           signature (argument and result types) and the backend\n"
    "  stats    entries and their bytes, kernel objects and theirs, the total\n"
    "           against the bound, the root folder\n"
    "  clear    remove every entry, kernel object and temporary; print what went\n"
    "  verify   re-check every entry whole (format, version, length, checksum,\n"
    "           sections) and print each bad one and why; exits 1 when any is bad.\n"
    "           It removes nothing: the next compile that meets a bad entry warns,\n"
    "           removes and rebuilds it (or run `hlo cache clear`)\n"
    "\n"
    "  --cache-dir DIR  the cache's root (default $HLO_CACHE_DIR, else\n"
    "                   $XDG_CACHE_HOME/hlo, else ~/.cache/hlo)\n"
    "\n"
    "The bound (`stats`) is $HLO_CACHE_MAX_BYTES, else 4 GiB; `--cache-max-bytes N`\n"
    "of run/bench/compile sets it for their compiles. A root that does not exist\n"
    "is an empty cache.\n";

/* A byte count in a unit that suits it ("512 B", "112.0 KiB"). */
static void fmt_bytes(char *buf, size_t n, uint64_t b) {
  if (b < 1024) snprintf(buf, n, "%llu B", (unsigned long long)b);
  else if (b < 1024ull * 1024) snprintf(buf, n, "%.1f KiB", (double)b / 1024);
  else if (b < 1024ull * 1024 * 1024) snprintf(buf, n, "%.1f MiB", (double)b / (1024.0 * 1024));
  else snprintf(buf, n, "%.2f GiB", (double)b / (1024.0 * 1024 * 1024));
}

/* How long ago unix time `t` was ("12 s ago", "3 min ago", "5 h ago",
 * "2 days ago"). */
static void fmt_age(char *buf, size_t n, int64_t t) {
  int64_t d = (int64_t)time(NULL) - t;
  if (d < 1) snprintf(buf, n, "just now");
  else if (d < 60) snprintf(buf, n, "%lld s ago", (long long)d);
  else if (d < 3600) snprintf(buf, n, "%lld min ago", (long long)(d / 60));
  else if (d < 86400) snprintf(buf, n, "%lld h ago", (long long)(d / 3600));
  else snprintf(buf, n, "%lld day%s ago", (long long)(d / 86400), d < 2 * 86400 ? "" : "s");
}

/* Appends `s` to buf[0..cap) at *len (truncating). */
static void append(char *buf, size_t cap, size_t *len, const char *s) {
  int w = snprintf(buf + *len, cap - *len, "%s", s);
  if (w > 0) *len += (size_t)w < cap - *len ? (size_t)w : cap - *len - 1;
}

/* The entry's signature from its meta fields arg.N and result.N:
 * "(tensor<8x16xf32>, tensor<16xf32>) -> (tensor<8x16xf32>)". */
static void signature(const char *meta, char *buf, size_t cap) {
  size_t len = 0, mlen = strlen(meta);
  char name[32], val[1024];
  buf[0] = 0;
  for (int pass = 0; pass < 2; pass++) {
    append(buf, cap, &len, pass ? " -> (" : "(");
    for (int i = 0;; i++) {
      snprintf(name, sizeof name, "%s.%d", pass ? "result" : "arg", i);
      if (!cache_meta_get(meta, mlen, name, val, sizeof val)) break;
      if (i) append(buf, cap, &len, ", ");
      append(buf, cap, &len, val);
    }
    append(buf, cap, &len, ")");
  }
}

/* "@main (module jit_f)" from the meta fields function and module. */
static void function_of(const char *meta, char *buf, size_t cap) {
  char fn[256] = "?", mod[256] = "";
  if (meta) {
    cache_meta_get(meta, strlen(meta), "function", fn, sizeof fn);
    cache_meta_get(meta, strlen(meta), "module", mod, sizeof mod);
  }
  if (mod[0]) snprintf(buf, cap, "@%s (module %s)", fn, mod);
  else snprintf(buf, cap, "@%s", fn);
}

static int do_list(const char *root, const cache_listing *l) {
  for (uint32_t i = 0; i < l->n; i++) {
    const cache_listing_entry *e = &l->entries[i];
    char size[32], age[32], fn[600], sig[4096], backend[64] = "?";
    fmt_bytes(size, sizeof size, e->bytes);
    fmt_age(age, sizeof age, e->last_used);
    if (!e->meta) {
      printf("%.12s  %10s  %-12s  (unreadable entry%s%s)\n", e->key, size, age,
             e->problem ? ": " : "", e->problem ? e->problem : "");
      continue;
    }
    function_of(e->meta, fn, sizeof fn);
    signature(e->meta, sig, sizeof sig);
    cache_meta_get(e->meta, strlen(e->meta), "backend", backend, sizeof backend);
    printf("%.12s  %10s  %-12s  %s  %s  %s\n", e->key, size, age, fn, sig, backend);
  }
  if (!l->n) fprintf(stderr, "hlo cache: no entries under %s\n", root);
  return 0;
}

static int do_stats(const char *root, const cache_listing *l) {
  const char *err = NULL;
  uint64_t bound = compile_cache_max_bytes(0, &err);
  if (err) fprintf(stderr, "hlo cache: warning: HLO_CACHE_MAX_BYTES: %s\n", err);
  uint64_t total = l->entry_bytes + l->kernel_bytes + l->alias_bytes;
  char eb[32], kb[32], tb[32], bb[32];
  fmt_bytes(eb, sizeof eb, l->entry_bytes);
  fmt_bytes(kb, sizeof kb, l->kernel_bytes);
  fmt_bytes(tb, sizeof tb, total);
  fmt_bytes(bb, sizeof bb, bound);
  printf("root:     %s\n", root);
  printf("entries:  %u (%s, %llu bytes)\n", l->n, eb, (unsigned long long)l->entry_bytes);
  printf("kernels:  %u files, compiled objects and their notes (%s, %llu bytes)\n", l->kernel_files, kb,
         (unsigned long long)l->kernel_bytes);
  printf("aliases:  %u files, a program's exact text -> its entry (%llu bytes)\n", l->alias_files,
         (unsigned long long)l->alias_bytes);
  printf("total:    %s (%llu bytes) of a bound of %s (%llu bytes, %s): %.1f%%\n", tb,
         (unsigned long long)total, bb, (unsigned long long)bound,
         getenv("HLO_CACHE_MAX_BYTES") && !err ? "$HLO_CACHE_MAX_BYTES" : "the default",
         bound ? 100.0 * (double)total / (double)bound : 0.0);
  return 0;
}

static int do_clear(const char *root, const cache_listing *l) {
  struct stat sb;
  if (stat(root, &sb) != 0) {
    printf("nothing to remove: %s does not exist\n", root);
    return 0;
  }
  for (uint32_t i = 0; i < l->n; i++) {
    char fn[600] = "(unreadable entry)";
    if (l->entries[i].meta) function_of(l->entries[i].meta, fn, sizeof fn);
    printf("removing %.12s  %s\n", l->entries[i].key, fn);
  }
  uint64_t files = 0, bytes = 0;
  hlo_status st = compile_cache_clear(root, &files, &bytes);
  char b[32];
  fmt_bytes(b, sizeof b, bytes);
  printf("removed %llu file%s (%s): %u entr%s, the rest kernel objects and temporaries, from %s\n",
         (unsigned long long)files, files == 1 ? "" : "s", b, l->n, l->n == 1 ? "y" : "ies", root);
  return st ? cli_report(st) : 0;
}

static int do_verify(const char *root, const cache_listing *l) {
  uint32_t bad = 0;
  for (uint32_t i = 0; i < l->n; i++) {
    const cache_listing_entry *e = &l->entries[i];
    if (!e->problem) continue;
    char fn[600] = "";
    if (e->meta) function_of(e->meta, fn, sizeof fn);
    printf("bad %.12s%s%s: %s\n", e->key, fn[0] ? "  " : "", fn, e->problem);
    bad++;
  }
  printf("%u entr%s checked under %s: %u good, %u bad%s\n", l->n, l->n == 1 ? "y" : "ies", root,
         l->n - bad, bad, bad ? " (not removed: the next compile of each rebuilds it, or run "
         "`hlo cache clear`)" : "");
  return bad ? 1 : 0;
}

int cmd_cache(int argc, char **argv) {
  const char *sub = NULL, *dir = NULL;
  for (int i = 0; i < argc; i++) {
    const char *a = argv[i];
    if (cli_is_flag(a, "--help") || cli_is_flag(a, "-h")) { fputs(usage_cache, stdout); return 0; }
    else if (cli_is_flag(a, "--cache-dir") && i + 1 < argc) dir = argv[++i];
    else if (a[0] == '-' && a[1]) {
      fprintf(stderr, "hlo cache: unknown flag or missing value '%s'\n%s", a, usage_cache);
      return 2;
    } else if (!sub) sub = a;
    else { fprintf(stderr, "hlo cache: more than one command ('%s')\n%s", a, usage_cache); return 2; }
  }
  if (!sub) { fprintf(stderr, "hlo cache: missing command (list, stats, clear or verify)\n%s", usage_cache); return 2; }
  int (*fn)(const char *, const cache_listing *) = NULL;
  if (!strcmp(sub, "list")) fn = do_list;
  else if (!strcmp(sub, "stats")) fn = do_stats;
  else if (!strcmp(sub, "clear")) fn = do_clear;
  else if (!strcmp(sub, "verify")) fn = do_verify;
  else {
    fprintf(stderr, "hlo cache: unknown command '%s' (list, stats, clear or verify)\n", sub);
    return 2;
  }
  if (dir && !*dir) {
    fprintf(stderr, "hlo cache: --cache-dir: expected a folder, not an empty string\n");
    return 2;
  }
  char root[CACHE_DIR_PATH_MAX], why[256];
  cache_dir_result r = cache_dir_resolve(dir, root, why, sizeof why);
  if (r == CACHE_DIR_OFF) {
    printf("the compilation cache is off (%s=%s): nothing to %s\n",
           dir ? "--cache-dir" : "HLO_CACHE_DIR", dir ? dir : getenv("HLO_CACHE_DIR"), sub);
    return 0;
  }
  if (r != CACHE_DIR_OK) {
    fprintf(stderr, "hlo cache: warning: the compilation cache is off: %s: nothing to %s\n", why,
            sub);
    return 0;
  }
  cache_listing l;
  memset(&l, 0, sizeof l);
  hlo_status st = compile_cache_list(root, !strcmp(sub, "verify"), &l);
  if (st) return cli_report(st);
  int rc = fn(root, &l);
  cache_listing_free(&l);
  if (fflush(stdout) != 0) {
    fprintf(stderr, "hlo cache: cannot write to standard output\n");
    rc = 1;
  }
  return rc;
}
