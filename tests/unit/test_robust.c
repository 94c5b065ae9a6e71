/* test_robust.c — bad input never crashes the front end.
 *
 * Over every .mlir under $HLO_SHARED (default ../shared) conformance/ and
 * models/, split at `// -----` with parse_split, each piece is damaged in
 * deterministic pseudo-random ways and parsed:
 *   (a) truncated: 5 random cut points plus one cut in the middle of a token;
 *   (b) corrupted: 12 copies, each with 1-3 bytes flipped, replaced, inserted
 *       or deleted.
 * Each copy (in its own exact-size malloc block, so ASan sees over-reads)
 * must either parse — then module_verify may pass or fail, and module_print
 * must produce text — or fail with HLO_PARSE_ERROR / HLO_VERIFY_ERROR /
 * HLO_RESOURCE_EXHAUSTED carrying a location whose line lies inside the copy.
 * With HLO_ROBUST_STRIDE=N only every Nth file is used.
 *
 * Also: out-of-memory injection (hlo_fail_alloc_after = 1..N) over the
 * parse -> verify -> print pipeline of small files: every stage either
 * succeeds untouched or returns HLO_RESOURCE_EXHAUSTED; nothing crashes. */
#include <dirent.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>

#include "ir/ir.h"
#include "parse/parse.h"
#include "runtime/runtime.h"
#include "support/arena.h"
#include "support/status.h"
#include "test.h"

static const char *shared_dir(void) {
  const char *s = getenv("HLO_SHARED");
  return s && *s ? s : "../shared";
}

static char *read_file(const char *path, size_t *len) {
  FILE *f = fopen(path, "rb");
  if (!f) return NULL;
  fseek(f, 0, SEEK_END);
  long n = ftell(f);
  fseek(f, 0, SEEK_SET);
  if (n < 0) { fclose(f); return NULL; }
  char *buf = malloc((size_t)n + 1);
  if (!buf) { fclose(f); return NULL; }
  size_t got = fread(buf, 1, (size_t)n, f);
  fclose(f);
  buf[got] = 0;
  *len = got;
  return buf;
}

/* ------------------------------------------------------- file discovery */

typedef struct paths {
  char **v;
  size_t n, cap;
} paths;

static void paths_add(paths *p, const char *s) {
  if (p->n == p->cap) {
    p->cap = p->cap ? p->cap * 2 : 256;
    p->v = realloc(p->v, p->cap * sizeof *p->v);
    if (!p->v) { fprintf(stderr, "out of memory\n"); exit(1); }
  }
  p->v[p->n++] = strdup(s);
}

static void collect(paths *p, const char *dir) {
  DIR *d = opendir(dir);
  if (!d) return;
  struct dirent *e;
  while ((e = readdir(d))) {
    if (e->d_name[0] == '.') continue;
    char path[4096];
    snprintf(path, sizeof path, "%s/%s", dir, e->d_name);
    struct stat st;
    if (stat(path, &st) != 0) continue;
    if (S_ISDIR(st.st_mode)) collect(p, path);
    else {
      size_t l = strlen(e->d_name);
      if (l > 5 && strcmp(e->d_name + l - 5, ".mlir") == 0) paths_add(p, path);
    }
  }
  closedir(d);
}

static int cmp_str(const void *a, const void *b) {
  return strcmp(*(char *const *)a, *(char *const *)b);
}

static void paths_free(paths *p) {
  for (size_t i = 0; i < p->n; i++) free(p->v[i]);
  free(p->v);
}

/* Every .mlir of the corpus, sorted. */
static paths corpus_files(void) {
  paths p = {0};
  char dir[4096];
  snprintf(dir, sizeof dir, "%s/conformance", shared_dir());
  collect(&p, dir);
  snprintf(dir, sizeof dir, "%s/models", shared_dir());
  collect(&p, dir);
  if (p.n) qsort(p.v, p.n, sizeof *p.v, cmp_str);
  return p;
}

/* ---------------------------------------------------- deterministic RNG */

static uint64_t rng_next(uint64_t *s) {  /* xorshift64* */
  uint64_t x = *s;
  x ^= x >> 12;
  x ^= x << 25;
  x ^= x >> 27;
  *s = x;
  return x * 0x2545F4914F6CDD1DULL;
}

static uint64_t hash_str(const char *s, uint64_t h) {
  for (; *s; s++) h = (h ^ (uint8_t)*s) * 0x100000001B3ULL;
  return h ? h : 1;
}

/* ---------------------------------------------------------- one attempt */

typedef struct counts {
  long copies, parsed, verified, parse_err, verify_err, oom_err, bad;
} counts;

/* Every Nth corpus file is damaged (HLO_ROBUST_STRIDE; default 1: all of
 * them — the whole run takes a few seconds even under ASan). */
static int robust_stride(void) {
  const char *s = getenv("HLO_ROBUST_STRIDE");
  return s && atoi(s) > 0 ? atoi(s) : 1;
}

static void report_bad(const char *what, const char *file, const char *kind,
                       const char *text, size_t len, hlo_status st) {
  fprintf(stderr, "robust: %s: %s copy of %s (%zu bytes)\n", what, kind, file, len);
  if (st) hlo_status_print(st, stderr);
  if (getenv("HLO_ROBUST_DUMP")) fprintf(stderr, "--- copy ---\n%.*s\n---\n", (int)len, text);
}

/* A status from a damaged copy must be one of the three codes and located
 * at a line of the copy [first_line, first_line + newlines]. */
static bool status_ok(hlo_status st, uint32_t first_line, const char *text, size_t len) {
  hlo_status_code c = hlo_status_code_of(st);
  if (c != HLO_PARSE_ERROR && c != HLO_VERIFY_ERROR && c != HLO_RESOURCE_EXHAUSTED) return false;
  if (c == HLO_RESOURCE_EXHAUSTED) return true;  /* "absurd size" errors may lack a place */
  const hlo_loc *loc = status_loc(st);
  if (!loc || loc->line < 1) return false;
  uint32_t lines = 1;
  for (size_t i = 0; i < len; i++) lines += text[i] == '\n';
  return loc->line >= first_line && loc->line < first_line + lines;
}

/* Parses `text[0..len)` (exactly sized malloc block), verifies, prints. */
static void try_copy(const char *file, const char *kind, const char *text, size_t len,
                     uint32_t first_line, counts *c) {
  c->copies++;
  hlo_source src = {file, text, len, first_line};
  hlo_module_ir *m = NULL;
  hlo_status st = parse_module(&src, 0, len, &m);
  if (st) {
    hlo_status_code code = hlo_status_code_of(st);
    if (code == HLO_RESOURCE_EXHAUSTED) c->oom_err++;
    else c->parse_err++;
    if (!status_ok(st, first_line, text, len) || code == HLO_VERIFY_ERROR) {
      c->bad++;
      report_bad("parse error without a proper code/location", file, kind, text, len, st);
    }
    hlo_status_free(st);
    return;
  }
  c->parsed++;
  st = module_verify(m);
  bool verified = st == NULL;
  if (st) {
    c->verify_err++;
    if (!status_ok(st, first_line, text, len)) {
      c->bad++;
      report_bad("verify error without a proper code/location", file, kind, text, len, st);
    }
    hlo_status_free(st);
  } else {
    c->verified++;
  }
  char *p = module_print(m);
  if (!p) {
    c->bad++;
    report_bad("module_print returned NULL", file, kind, text, len, NULL);
  } else if (verified) {
    /* a verified module's printed text must parse back */
    hlo_source src2 = {"printed.mlir", p, strlen(p), 1};
    hlo_module_ir *m2 = NULL;
    hlo_status st2 = parse_module(&src2, 0, src2.len, &m2);
    if (st2) {
      c->bad++;
      report_bad("printed text of the verified module does not parse", file, kind, text, len,
                 st2);
      hlo_status_free(st2);
    }
    module_free(m2);
  }
  free(p);
  module_free(m);
}

static char *dup_range(const char *s, size_t n) {
  char *d = malloc(n ? n : 1);
  if (d && n) memcpy(d, s, n);
  return d;
}

static bool is_word(char ch) {
  return (ch >= 'a' && ch <= 'z') || (ch >= 'A' && ch <= 'Z') || (ch >= '0' && ch <= '9') ||
         ch == '_' || ch == '.';
}

static void damage_piece(const char *file, const char *text, const split_piece *pc,
                         uint64_t seed, counts *c) {
  const char *s = text + pc->begin;
  size_t n = pc->end - pc->begin;
  if (n == 0) return;
  /* (a) truncations */
  for (int k = 0; k < 5; k++) {
    size_t cut = (size_t)(rng_next(&seed) % n);
    char *d = dup_range(s, cut);
    if (!d) continue;
    try_copy(file, "truncated", d, cut, pc->first_line, c);
    free(d);
  }
  {  /* cut inside a token: first word-word boundary after a random point */
    size_t i = (size_t)(rng_next(&seed) % n);
    while (i + 1 < n && !(is_word(s[i]) && is_word(s[i + 1]))) i++;
    if (i + 1 < n) {
      char *d = dup_range(s, i + 1);
      if (d) {
        try_copy(file, "mid-token truncated", d, i + 1, pc->first_line, c);
        free(d);
      }
    }
  }
  /* (b) corruptions */
  static const char repl[] = {'{', '}', '(', ')', '<', '>', '[', ']', '%', '"', '@', '#',
                               ':', ',', '=', 'x', '0', ' ', '9', '-', '\n', '\\', '?',
                               '!', '^', '\t', '\0', '\x7f', (char)0xff, (char)0x80};
  for (int k = 0; k < 12; k++) {
    char *d = malloc(n + 4);
    if (!d) continue;
    memcpy(d, s, n);
    size_t len = n;
    int edits = 1 + (int)(rng_next(&seed) % 3);
    for (int e = 0; e < edits && len > 0; e++) {
      size_t pos = (size_t)(rng_next(&seed) % len);
      switch (rng_next(&seed) % 4) {
      case 0: d[pos] = (char)(d[pos] ^ (1u << (rng_next(&seed) % 8))); break;
      case 1: d[pos] = repl[rng_next(&seed) % sizeof repl]; break;
      case 2:
        memmove(d + pos + 1, d + pos, len - pos);
        d[pos] = repl[rng_next(&seed) % sizeof repl];
        len++;
        break;
      default:
        memmove(d + pos, d + pos + 1, len - pos - 1);
        len--;
        break;
      }
    }
    char *exact = dup_range(d, len);
    free(d);
    if (!exact) continue;
    try_copy(file, "corrupted", exact, len, pc->first_line, c);
    free(exact);
  }
}

TEST(damaged_corpus_never_crashes) {
  paths files = corpus_files();
  if (files.n == 0) {
    printf("damaged_corpus: skipped: no .mlir under %s (set HLO_SHARED)\n", shared_dir());
    paths_free(&files);
    return;
  }
  int stride = robust_stride();
  counts c = {0};
  long nfiles = 0, npieces = 0;
  clock_t t0 = clock();
  for (size_t fi = 0; fi < files.n; fi += (size_t)stride) {
    size_t len;
    char *text = read_file(files.v[fi], &len);
    if (!text) continue;
    split_piece *pieces = NULL;
    size_t np = 0;
    hlo_status st = parse_split(text, len, &pieces, &np);
    CHECK(st == NULL);
    hlo_status_free(st);
    nfiles++;
    uint64_t seed = hash_str(files.v[fi], 0xcbf29ce484222325ULL);
    for (size_t i = 0; i < np; i++) {
      npieces++;
      damage_piece(files.v[fi], text, &pieces[i], seed + i * 0x9E3779B97F4A7C15ULL, &c);
    }
    free(pieces);
    free(text);
  }
  printf("damaged_corpus: %ld files (every %d), %ld pieces, %ld copies: %ld parsed (%ld verified, "
         "%ld verify errors), %ld parse errors, %ld resource errors, %ld bad; %.1f s\n",
         nfiles, stride, npieces, c.copies, c.parsed, c.verified, c.verify_err, c.parse_err,
         c.oom_err, c.bad, (double)(clock() - t0) / CLOCKS_PER_SEC);
  CHECK(c.copies > 0);
  CHECK_EQ_INT(c.bad, 0);
  paths_free(&files);
}

/* Hand-made nasty inputs. */
TEST(nasty_inputs) {
  static const char *const cases[] = {
      "", " ", "\n\n\n", "module", "module {", "}", "func.func", "func.func @main(",
      "func.func @main() {", "func.func @main() -> () {\n  return\n", "%0 = ", "\"",
      "\"unterminated", "// only a comment", "/* c-comment */", "module { module { } }",
      "func.func @f() -> tensor<2xf32> {\n %0 = stablehlo.constant dense<[1.0, 2.0]> : "
      "tensor<2xf32>\n return %0 : tensor<2xf32>\n}",
      "func.func @f() -> tensor<99999999999x99999999999x99999999999xf32> {\n"
      " %0 = stablehlo.constant dense<0.0> : tensor<99999999999x99999999999x99999999999xf32>\n"
      " return %0 : tensor<99999999999x99999999999x99999999999xf32>\n}",
      "func.func @f() -> tensor<-1xf32>", "func.func @f() -> tensor<2x?xf32>",
      "func.func @f() -> tensor<18446744073709551616xf32>",
      "func.func @f() -> tensor<2xi99999999999>", "func.func @f() -> tensor<2xf32",
      "func.func @f() { %0 = stablehlo.constant dense<\"0x\"> : tensor<2xf32> return }",
      "func.func @f() { %0 = stablehlo.constant dense<\"0xZZ\"> : tensor<2xf32> return }",
      "func.func @f() { %0 = stablehlo.constant dense<[[1]]> : tensor<1xf32>\n return }",
      "func.func @f() { %0:99999999999 = stablehlo.constant dense<1> : tensor<i32>\n return }",
      "func.func @f() { return %0#99999999999 : tensor<i32> }",
      "func.func @f(%a: tensor<i32>, %a: tensor<i32>) { return }",
      "func.func @f() { ^bb0(: return }",
      "func.func @f() { \"stablehlo.add\"() : () -> () }",
      "func.func @f() { \"stablehlo.add\"() ({ ({ ({ ({ }) }) }) }) : () -> () }",
      "func.func @f(%a: tensor<1x4x4x1xf32>, %k: tensor<2x2x1x1xf32>) -> tensor<1x3x3x1xf32> {\n"
      " %0 = stablehlo.convolution(%a, %k) dim_numbers = [b, 0, 9223372036854775808, f]x[0, 1, "
      "i, o]->[b, 0, 1, f], window = {} {batch_group_count = 1 : i64, feature_group_count = 1 : "
      "i64} : (tensor<1x4x4x1xf32>, tensor<2x2x1x1xf32>) -> tensor<1x3x3x1xf32>\n}",
      "#alias = ", "#a = loc(", "func.func @f() { return } loc(",
      "func.func @f() -> !quant.uniform<i8:f32, 0.5:", "\x00\x01\x02\xff\xfe",
  };
  for (size_t i = 0; i < sizeof cases / sizeof *cases; i++) {
    counts c = {0};
    const char *s = cases[i];
    size_t n = i + 1 == sizeof cases / sizeof *cases ? 5 : strlen(s);
    char *d = dup_range(s, n);
    try_copy("nasty.mlir", "hand-made", d, n, 1, &c);
    free(d);
    if (c.bad) fprintf(stderr, "  (case %zu: %s)\n", i, s);
    CHECK_EQ_INT(c.bad, 0);
  }
  /* Deep nesting must be a located error, not a stack overflow. */
  size_t depth = 100000, n = 0;
  char *deep = malloc(depth * 4 + 64);
  CHECK(deep != NULL);
  if (!deep) return;
  n += (size_t)sprintf(deep, "func.func @f() { %%0 = stablehlo.constant dense<");
  for (size_t i = 0; i < depth; i++) deep[n++] = '[';
  counts c = {0};
  try_copy("deep.mlir", "deep [", deep, n, 1, &c);
  n = (size_t)sprintf(deep, "func.func @f() -> ");
  for (size_t i = 0; i < depth; i++) {
    memcpy(deep + n, "tuple<", 6);
    n += 6;
    if (n > depth * 4) break;
  }
  try_copy("deep.mlir", "deep tuple<", deep, n, 1, &c);
  n = (size_t)sprintf(deep, "func.func @f() { ");
  for (size_t i = 0; i < depth && n < depth * 4 - 32; i++) {
    memcpy(deep + n, "\"a.b\"() ({ ", 11);
    n += 11;
  }
  try_copy("deep.mlir", "deep regions", deep, n, 1, &c);
  free(deep);
  CHECK_EQ_INT(c.bad, 0);
  CHECK_EQ_INT(c.parsed, 0);
}

/* ---------------------------------------------------------- out of memory */

/* Runs parse -> verify -> print of `text` with allocation number `n`
 * failing. Returns 1 when the failure was injected and handled, 0 when the
 * pipeline finished before allocation n (n is past the end), -1 on a wrong
 * outcome (printed). */
static int oom_once(const char *name, const char *text, size_t len, long n) {
  hlo_source src = {name, text, len, 1};
  hlo_module_ir *m = NULL;
  hlo_fail_alloc_after = n;
  hlo_status st = parse_module(&src, 0, len, &m);
  int result = 0;
  if (st) {
    bool injected = hlo_fail_alloc_after == 0;
    hlo_status_code code = hlo_status_code_of(st);
    hlo_fail_alloc_after = 0;
    if (!injected || code != HLO_RESOURCE_EXHAUSTED) {
      fprintf(stderr, "oom: %s: parse with allocation %ld failing returned '%s' (%s): ",
              name, n, hlo_status_code_name(code), injected ? "injected" : "NOT injected");
      hlo_status_print(st, stderr);
      result = -1;
    } else {
      result = 1;
    }
    hlo_status_free(st);
    return result;
  }
  if (hlo_fail_alloc_after == 0) {
    fprintf(stderr, "oom: %s: parse succeeded although allocation %ld failed\n", name, n);
    module_free(m);
    return -1;
  }
  st = module_verify(m);
  if (st) {
    bool injected = hlo_fail_alloc_after == 0;
    hlo_status_code code = hlo_status_code_of(st);
    hlo_fail_alloc_after = 0;
    if (!injected || code != HLO_RESOURCE_EXHAUSTED) {
      fprintf(stderr, "oom: %s: verify with allocation %ld failing returned '%s': ", name, n,
              hlo_status_code_name(code));
      hlo_status_print(st, stderr);
      result = -1;
    } else {
      result = 1;
    }
    hlo_status_free(st);
    module_free(m);
    return result;
  }
  bool verify_hit = hlo_fail_alloc_after == 0;
  char *p = module_print(m);
  bool print_hit = !verify_hit && hlo_fail_alloc_after == 0;
  hlo_fail_alloc_after = 0;
  if (verify_hit) {
    /* verify may use scratch memory and succeed anyway only if it reports
     * nothing; a swallowed allocation failure is accepted only when verify
     * still returned ok (conservative). */
    result = 1;
  } else if (print_hit) {
    if (p) {
      fprintf(stderr, "oom: %s: module_print returned text although allocation %ld failed\n",
              name, n);
      result = -1;
    } else {
      result = 1;
    }
  } else {
    result = p ? 0 : -1;
    if (!p) fprintf(stderr, "oom: %s: module_print returned NULL without OOM\n", name);
  }
  free(p);
  module_free(m);
  return result;
}

TEST(out_of_memory_never_crashes) {
  static const char *const rel[] = {
      "conformance/interpret/add.mlir", "conformance/interpret/reduce.mlir",
      "conformance/interpret/while.mlir", "conformance/interpret/dot_general.mlir",
      "models/mlp_block_bf16/mlp_block_bf16.mlir",
      "models/tiny_llama_train_step/tiny_llama_train_step.mlir",
  };
  int tested = 0;
  for (size_t f = 0; f < sizeof rel / sizeof *rel; f++) {
    char path[4096];
    snprintf(path, sizeof path, "%s/%s", shared_dir(), rel[f]);
    size_t len;
    char *text = read_file(path, &len);
    if (!text) continue;
    split_piece *pieces = NULL;
    size_t np = 0;
    hlo_status st = parse_split(text, len, &pieces, &np);
    CHECK(st == NULL);
    hlo_status_free(st);
    if (st || np == 0) { free(text); continue; }
    /* the first piece, in an exact-size block */
    size_t n = pieces[0].end - pieces[0].begin;
    char *piece = dup_range(text + pieces[0].begin, n);
    free(pieces);
    free(text);
    long injected = 0, bad = 0, N;
    for (N = 1; N < 200000; N++) {
      int r = oom_once(rel[f], piece, n, N);
      if (r == 0) break;
      if (r > 0) injected++;
      else bad++;
      if (bad > 5) break;  /* enough noise */
    }
    hlo_fail_alloc_after = 0;
    printf("out_of_memory: %s: %ld allocations failed one at a time, %ld wrong outcomes\n",
           rel[f], injected, bad);
    CHECK(injected > 0);
    CHECK_EQ_INT(bad, 0);
    free(piece);
    tested++;
  }
  hlo_fail_alloc_after = 0;
  if (!tested) printf("out_of_memory: skipped: corpus not found under %s\n", shared_dir());
}

/* Interpreting (check ops included) with allocation N failing: the run
 * returns HLO_RESOURCE_EXHAUSTED, or succeeds — the interpreter may absorb a
 * failed allocation of an optimization (interp.c's block plans), and the
 * program's check ops still pass. Any other outcome is wrong. */
TEST(out_of_memory_while_interpreting) {
  static const char *const rel[] = {
      "conformance/interpret/add.mlir", "conformance/interpret/reduce.mlir",
      "conformance/interpret/while.mlir", "conformance/interpret/sort.mlir",
      "conformance/interpret/dot_general.mlir", "conformance/interpret/convolution.mlir",
  };
  int tested = 0;
  for (size_t f = 0; f < sizeof rel / sizeof *rel; f++) {
    char path[4096];
    snprintf(path, sizeof path, "%s/%s", shared_dir(), rel[f]);
    size_t len;
    char *text = read_file(path, &len);
    if (!text) continue;
    split_piece *pieces = NULL;
    size_t np = 0;
    hlo_status st = parse_split(text, len, &pieces, &np);
    CHECK(st == NULL);
    hlo_status_free(st);
    long injected = 0, bad = 0, absorbed = 0;
    for (size_t i = 0; !st && i < np && i < 3; i++) {
      for (long N = 1; N < 100000; N++) {
        hlo_module *m = NULL;
        st = hlo_module_parse_at(rel[f], text + pieces[i].begin, pieces[i].end - pieces[i].begin,
                                 pieces[i].first_line, &m);
        if (st) break;  /* not expected: the corpus parses */
        hlo_executable *e = NULL;
        hlo_fail_alloc_after = N;
        st = hlo_executable_create(m, NULL, HLO_BACKEND_INTERP, &e);
        hlo_buffer **res = NULL;
        if (!st) st = hlo_executable_run(e, NULL, 0, &res);
        bool hit = hlo_fail_alloc_after == 0;
        hlo_fail_alloc_after = 0;
        if (!st) {
          for (int k = 0; k < hlo_executable_num_results(e); k++) hlo_buffer_destroy(res[k]);
          free(res);
        }
        hlo_status_code code = hlo_status_code_of(st);
        if (hit && code != HLO_RESOURCE_EXHAUSTED && code != HLO_OK) {
          bad++;
          fprintf(stderr, "oom: %s piece %zu: run with allocation %ld failing gave '%s'\n", rel[f],
                  i, N, hlo_status_code_name(code));
          if (st) hlo_status_print(st, stderr);
        } else if (hit) {
          injected++;
          if (code == HLO_OK) absorbed++;
        }
        hlo_status_free(st);
        st = NULL;
        hlo_executable_destroy(e);
        hlo_module_destroy(m);
        if (!hit || bad > 5) break;
      }
    }
    hlo_status_free(st);
    printf("out_of_memory_while_interpreting: %s: %ld allocations failed (%ld absorbed), %ld "
           "wrong outcomes\n", rel[f], injected, absorbed, bad);
    CHECK(injected > 0);
    CHECK_EQ_INT(bad, 0);
    free(pieces);
    free(text);
    tested++;
  }
  hlo_fail_alloc_after = 0;
  if (!tested) printf("out_of_memory_while_interpreting: skipped: corpus not found\n");
}

TEST_MAIN()
