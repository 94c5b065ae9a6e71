/* test_roundtrip.c — print∘parse is idempotent over the whole corpus: for
 * every .mlir under $HLO_SHARED (default ../shared) conformance/ and
 * models/, each `// -----` piece is parsed, printed, parsed again and
 * printed again; the two printed texts must be identical. Pieces the parser
 * rejects in the original are counted and reported, not failed here (they
 * are the parser's tests' business). */
#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include "ir/ir.h"
#include "ir/print.h"
#include "parse/parse.h"
#include "test.h"

typedef struct paths {
  char **v;
  size_t n, cap;
} paths;

static void add_path(paths *ps, const char *p) {
  if (ps->n == ps->cap) {
    ps->cap = ps->cap ? ps->cap * 2 : 256;
    ps->v = realloc(ps->v, ps->cap * sizeof *ps->v);
    if (!ps->v) { fprintf(stderr, "out of memory\n"); exit(2); }
  }
  ps->v[ps->n++] = strdup(p);
}

static void walk(paths *ps, const char *dir) {
  DIR *d = opendir(dir);
  if (!d) return;
  struct dirent *e;
  while ((e = readdir(d))) {
    if (e->d_name[0] == '.') continue;
    char buf[4096];
    snprintf(buf, sizeof buf, "%s/%s", dir, e->d_name);
    struct stat st;
    if (stat(buf, &st)) continue;
    if (S_ISDIR(st.st_mode)) walk(ps, buf);
    else {
      size_t l = strlen(buf);
      if (l > 5 && !strcmp(buf + l - 5, ".mlir")) add_path(ps, buf);
    }
  }
  closedir(d);
}

static int cmp_str(const void *a, const void *b) {
  return strcmp(*(char *const *)a, *(char *const *)b);
}

static char *read_file(const char *path, size_t *len) {
  FILE *f = fopen(path, "rb");
  if (!f) return NULL;
  fseek(f, 0, SEEK_END);
  long n = ftell(f);
  fseek(f, 0, SEEK_SET);
  char *s = malloc((size_t)n + 1);
  if (s && fread(s, 1, (size_t)n, f) != (size_t)n) { free(s); s = NULL; }
  fclose(f);
  if (s) { s[n] = 0; *len = (size_t)n; }
  return s;
}

/* Parses text[begin,end) and prints it; NULL (with *err set) on failure. */
static char *parse_print(const char *name, const char *text, size_t len, size_t begin,
                         size_t end, hlo_status *err) {
  hlo_source src = {name, text, len, 1};
  hlo_module_ir *m = NULL;
  *err = parse_module(&src, begin, end, &m);
  if (*err) return NULL;
  char *out = module_print(m);
  module_free(m);
  return out;
}

/* Line number and text of the first line where a and b differ. */
static void diff_hint(const char *a, const char *b) {
  int line = 1;
  const char *la = a, *lb = b;
  while (*a && *a == *b) {
    if (*a == '\n') { line++; la = a + 1; lb = b + 1; }
    a++;
    b++;
  }
  const char *ea = strchr(la, '\n'), *eb = strchr(lb, '\n');
  int na = ea ? (int)(ea - la) : (int)strlen(la), nb = eb ? (int)(eb - lb) : (int)strlen(lb);
  if (na > 300) na = 300;
  if (nb > 300) nb = 300;
  fprintf(stderr, "    first difference at printed line %d:\n      1st: %.*s\n      2nd: %.*s\n",
          line, na, la, nb, lb);
}

TEST(corpus_roundtrip) {
  const char *root = getenv("HLO_SHARED");
  if (!root) root = "../shared";
  paths ps = {0};
  char dir[4096];
  snprintf(dir, sizeof dir, "%s/conformance", root);
  walk(&ps, dir);
  snprintf(dir, sizeof dir, "%s/models", root);
  walk(&ps, dir);
  if (!ps.n) {
    printf("SKIPPED corpus_roundtrip: no .mlir files under %s (set HLO_SHARED)\n", root);
    return;
  }
  qsort(ps.v, ps.n, sizeof *ps.v, cmp_str);
  size_t files_ok = 0, files_tested = 0, orig_fail = 0, reparse_fail = 0, mismatch = 0;
  size_t pieces = 0, shown = 0;
  for (size_t i = 0; i < ps.n; i++) {
    size_t len = 0;
    char *text = read_file(ps.v[i], &len);
    if (!text) { free(ps.v[i]); continue; }
    split_piece *pc = NULL;
    size_t np = 0;
    hlo_status st = parse_split(text, len, &pc, &np);
    CHECK(st == NULL);
    if (st) { hlo_status_free(st); free(text); free(ps.v[i]); continue; }
    bool file_ok = true, file_tested = false;
    for (size_t k = 0; k < np; k++) {
      hlo_status err = NULL;
      char *t1 = parse_print(ps.v[i], text, len, pc[k].begin, pc[k].end, &err);
      if (err) { orig_fail++; hlo_status_free(err); file_ok = false; continue; }
      file_tested = true;
      pieces++;
      CHECK(t1 != NULL);
      if (!t1) { file_ok = false; continue; }
      char *t2 = parse_print("<printed>", t1, strlen(t1), 0, strlen(t1), &err);
      if (err) {
        reparse_fail++;
        file_ok = false;
        if (shown++ < 8) {
          fprintf(stderr, "  %s piece %zu: the printed text does not parse:\n    ", ps.v[i], k);
          hlo_status_print(err, stderr);
        }
        hlo_status_free(err);
      } else if (!t2 || strcmp(t1, t2)) {
        mismatch++;
        file_ok = false;
        if (shown++ < 8) {
          fprintf(stderr, "  %s piece %zu: printing is not idempotent\n", ps.v[i], k);
          if (t2) diff_hint(t1, t2);
        }
      }
      free(t1);
      free(t2);
    }
    if (file_tested) files_tested++;
    if (file_ok) files_ok++;
    free(pc);
    free(text);
    free(ps.v[i]);
  }
  free(ps.v);
  printf("round-tripped %zu of %zu files (%zu pieces); original text not parsed: %zu pieces; "
         "printed text not parsed: %zu; not idempotent: %zu\n",
         files_ok, ps.n, pieces, orig_fail, reparse_fail, mismatch);
  CHECK(files_tested > 0);
  CHECK_EQ_INT(reparse_fail, 0);
  CHECK_EQ_INT(mismatch, 0);
}

TEST_MAIN()
