/* test_parse_strict.c — the parser accepts MLIR's grammar and no more
 * (issue 12): an attribute list without braces after a pretty-form op, a
 * duplicate attribute name on any path (generic properties, attr-dicts,
 * pretty-form keywords, function argument/result attributes, struct fields,
 * module and sdy dictionaries), a bare word as an attribute value, a keyword
 * an op's assembly format does not give it, and stray commas or trailing
 * tokens are located parse errors (FILE:LINE:COL), never a crash.
 *
 * The walk: one instance of every op kind written in pretty form in the
 * corpus (../shared/conformance and tests/jax/GROUP/CASE/program.mlir) gets
 * malformed trailers inserted where its attr-dict would go and appended to its
 * line; each mutant must fail with a parse error located on the mutated line
 * (or, for a multi-line op, at or after it). Well-formed trailers (an
 * attr-dict of every attribute kind) may be accepted or rejected, and every
 * text the parser accepts must print, parse again and print identically. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "ir/ir.h"
#include "parse/parse.h"
#include "support/status.h"
#include "test.h"
#include "testlib.h"

static int roundtrip_failures;

/* The property: accepted text prints, parses again, prints identically. */
static void check_roundtrip(hlo_module_ir *m, const char *origin) {
  char *p1 = module_print(m);
  CHECK(p1 != NULL);
  if (!p1) return;
  hlo_status st;
  hlo_module_ir *m2 = tl_parse_text("printed.mlir", p1, 0, &st);
  if (!m2) {
    if (roundtrip_failures++ < 5) {
      fprintf(stderr, "printed text does not parse again (%s):\n", origin);
      hlo_status_print(st, stderr);
      fprintf(stderr, "--- printed ---\n%s\n", p1);
    }
    hlo_status_free(st);
    CHECK(0);
    free(p1);
    return;
  }
  char *p2 = module_print(m2);
  if (!p2 || strcmp(p1, p2) != 0) {
    if (roundtrip_failures++ < 5)
      fprintf(stderr, "printing is not a fixed point (%s):\n--- 1 ---\n%s\n--- 2 ---\n%s\n", origin,
              p1, p2 ? p2 : "(null)");
    CHECK(0);
  }
  free(p2);
  module_free(m2);
  free(p1);
}

/* `text` must fail to parse with a located parse error at line:col (col 0:
 * any column) whose message contains `want` (NULL: any message). */
static void expect_error(const char *text, uint32_t line, uint32_t col, const char *want) {
  hlo_status st;
  hlo_module_ir *m = tl_parse_text("strict.mlir", text, 0, &st);
  if (m) {
    fprintf(stderr, "accepted, but MLIR rejects it:\n%s\n", text);
    CHECK(m == NULL);
    check_roundtrip(m, "expect_error");
    module_free(m);
    return;
  }
  const hlo_loc *loc = status_loc(st);
  const char *msg = hlo_status_message(st);
  bool ok = hlo_status_code_of(st) == HLO_PARSE_ERROR && loc && loc->line == line &&
            (col == 0 || loc->col == col) && (!want || strstr(msg, want));
  if (!ok) {
    fprintf(stderr, "want error at %u:%u containing '%s' for:\n%s\ngot: ", line, col,
            want ? want : "", text);
    hlo_status_print(st, stderr);
  }
  CHECK(ok);
  hlo_status_free(st);
}

/* `text` must parse and round-trip. */
static void expect_ok(const char *text) {
  hlo_status st;
  hlo_module_ir *m = tl_parse_text("strict.mlir", text, 0, &st);
  if (!m) {
    fprintf(stderr, "rejected:\n%s\n", text);
    hlo_status_print(st, stderr);
    hlo_status_free(st);
    CHECK(0);
    return;
  }
  check_roundtrip(m, text);
  module_free(m);
}

TEST(issue_12_inputs) {
  /* the fuzzer's input: an attribute list without braces after func.return */
  expect_error("func.func @f() {\n  func.return\na = 1, a = 2\n}\n", 3, 1,
               "an operation follows 'func.return'");
  /* found by the hour-long fuzz run: an op after an operand-less return printed as
   * its operand list; and a finite f64 literal past f64's range */
  expect_error("func.func @f() {\nreturn stablehlo.constant dense<1.0> : tensor<f64>\n}\n", 2, 8,
               "an operation follows 'func.return'");
  expect_error("func.func @f() -> tensor<2xf64> {\n  %0 = stablehlo.constant dense<[2.0, 2e656]> : "
               "tensor<2xf64>\n  return %0 : tensor<2xf64>\n}\n", 2, 39, "too large for f64");
  expect_error("func.func @f() {\n  func.return {a = 1.0e+381}\n}\n", 2, 20, "too large for f64");
  expect_error("func.func @f() {\n  func.return {a = 1.0e+39 : f32}\n}\n", 2, 20, "too large for f32");
  expect_error("func.func @f(%a: tensor<2x!quant.uniform<i8:f32, 1e400>>) {\n  return\n}\n", 1, 50,
               "quantization scale must be a finite number");
  expect_error("func.func @f() {\n  func.return {a = #stablehlo.scatter<index_vector_dim = 1.0e+381>}"
               "\n}\n", 2, 58, "too large for f64");
  expect_error("func.func @f() -> tensor<f16> {\n  %0 = stablehlo.constant dense<1e400> : "
               "tensor<f16>\n  return %0 : tensor<f16>\n}\n", 2, 33, "too large for f16");
  /* what hlo used to print for it: duplicates in properties */
  expect_error("func.func @f() {\n  \"func.return\"() <{a = 1 : i64, a = 2 : i64}> : () -> ()\n}\n",
               2, 34, "duplicate attribute 'a'");
  /* a bare identifier as an attribute value */
  expect_error("func.func @f() {\n  func.return {x = arrunc.return}\n}\n", 2, 20, "bare word");
  expect_error("func.func @f() {\n  \"func.return\"() {x = foo} : () -> ()\n}\n", 2, 24, "bare word");
  /* the fuzzer's first finding after the fix: a mesh name the printer quotes
   * (@"1m") must parse back; an unquoted @1m is not an MLIR symbol */
  expect_ok("sdy.mesh @\"1m\" = <[\"x\"=1]>\nfunc.func @f(%a: tensor<2xf32> {sdy.sharding = "
            "#sdy.sharding<@\"1m\", [{}]>}) -> tensor<2xf32> {\n  return %a : tensor<2xf32>\n}\n");
  expect_error("sdy.mesh @m = <[\"x\"=1]>\nfunc.func @f(%a: tensor<2xf32> {sdy.sharding = "
               "#sdy.sharding<@1m, [{}]>}) -> tensor<2xf32> {\n  return %a : tensor<2xf32>\n}\n",
               2, 0, "expected mesh name");
}

TEST(duplicates_on_every_path) {
  const char *H = "func.func @f(%a: tensor<2xf32>) -> tensor<2xf32> {\n";
  char buf[1024];
  /* attr-dict of a pretty op */
  snprintf(buf, sizeof buf, "%s  %%0 = stablehlo.abs %%a {b = 1, b = 2} : tensor<2xf32>\n"
           "  return %%0 : tensor<2xf32>\n}\n", H);
  expect_error(buf, 2, 33, "duplicate attribute 'b'");
  /* properties + attr-dict of the generic form */
  snprintf(buf, sizeof buf, "%s  %%0 = \"stablehlo.abs\"(%%a) <{b = 1}> {b = 2} : (tensor<2xf32>) -> "
           "tensor<2xf32>\n  return %%0 : tensor<2xf32>\n}\n", H);
  expect_error(buf, 2, 39, "duplicate attribute 'b'");
  /* a pretty-form keyword and the same attribute in the attr-dict */
  snprintf(buf, sizeof buf, "%s  %%0 = stablehlo.transpose %%a, dims = [0] {permutation = array<i64: 0>}"
           " : (tensor<2xf32>) -> tensor<2xf32>\n  return %%0 : tensor<2xf32>\n}\n", H);
  expect_error(buf, 2, 44, "duplicate attribute 'permutation'");
  /* a keyword twice */
  snprintf(buf, sizeof buf, "%s  %%0 = stablehlo.transpose %%a, dims = [0], dims = [0]"
           " : (tensor<2xf32>) -> tensor<2xf32>\n  return %%0 : tensor<2xf32>\n}\n", H);
  expect_error(buf, 2, 44, "duplicate keyword 'dims'");
  /* constant: attr-dict before the value, then the value */
  expect_error("func.func @f() -> tensor<i32> {\n  %0 = stablehlo.constant {value = 1} dense<1> : "
               "tensor<i32>\n  return %0 : tensor<i32>\n}\n", 2, 0, "duplicate attribute 'value'");
  /* function argument, result and function attributes */
  expect_error("func.func @f(%a: tensor<2xf32> {x.y = 1, x.y = 2}) -> tensor<2xf32> {\n"
               "  return %a : tensor<2xf32>\n}\n", 1, 42, "duplicate attribute 'x.y'");
  expect_error("func.func @f(%a: tensor<2xf32>) -> (tensor<2xf32> {r, r}) {\n"
               "  return %a : tensor<2xf32>\n}\n", 1, 55, "duplicate attribute 'r'");
  expect_error("func.func @f(%a: tensor<2xf32>) -> tensor<2xf32> attributes {k, \"k\"} {\n"
               "  return %a : tensor<2xf32>\n}\n", 1, 65, "duplicate attribute 'k'");
  /* module attributes, nested dictionaries */
  expect_error("module attributes {m = 1, m = 2} {\n}\n", 1, 27, "duplicate attribute 'm'");
  expect_error("module attributes {m = {n, n}} {\n}\n", 1, 28, "duplicate attribute 'n'");
  /* struct fields */
  snprintf(buf, sizeof buf, "%s  %%0 = stablehlo.dot_general %%a, %%a, contracting_dims = [0] x [0], "
           "algorithm = <lhs_precision_type = f32, lhs_precision_type = f32> : (tensor<2xf32>, "
           "tensor<2xf32>) -> tensor<f32>\n  return %%a : tensor<2xf32>\n}\n", H);
  expect_error(buf, 2, 0, "duplicate attribute 'lhs_precision_type'");
  /* sdy: a mesh declaration's dictionary */
  expect_error("module {\n  sdy.mesh @m = <[\"x\"=2]> {a, a}\n}\n", 2, 0, "duplicate attribute 'a'");
  /* an empty quoted name */
  expect_error("module attributes {\"\" = 1} {\n}\n", 1, 20, "non-empty attribute name");
}

TEST(bare_words_and_keywords) {
  const char *H = "func.func @f(%a: tensor<2xf32>) -> tensor<2xf32> {\n";
  const char *T = "  return %a : tensor<2xf32>\n}\n";
  char buf[1024];
  /* a keyword the op's assembly format does not have */
  snprintf(buf, sizeof buf, "%s  %%0 = stablehlo.abs %%a, a = 1 : tensor<2xf32>\n%s", H, T);
  expect_error(buf, 2, 24, "expected ':'");
  snprintf(buf, sizeof buf, "%s  %%0 = stablehlo.transpose %%a, dims = [0], a = 1"
           " : (tensor<2xf32>) -> tensor<2xf32>\n%s", H, T);
  expect_error(buf, 2, 44, "not a keyword of stablehlo.transpose");
  /* keywords out of the format's order */
  snprintf(buf, sizeof buf, "%s  %%0 = stablehlo.pad %%a, %%a, high = [0], low = [0], interior = [0]"
           " : (tensor<2xf32>, tensor<2xf32>) -> tensor<2xf32>\n%s", H, T);
  expect_error(buf, 2, 0, "must come before");
  /* bare words in a dictionary, an array, a struct field */
  snprintf(buf, sizeof buf, "%s  %%0 = stablehlo.abs %%a {b = [1, foo]} : tensor<2xf32>\n%s", H, T);
  expect_error(buf, 2, 34, "bare word 'foo'");
  snprintf(buf, sizeof buf, "%s  %%0 = stablehlo.dot_general %%a, %%a, contracting_dims = [0] x [0], "
           "algorithm = <lhs_precision_type = f33> : (tensor<2xf32>, tensor<2xf32>) -> tensor<f32>\n%s",
           H, T);
  expect_error(buf, 2, 0, "bare word 'f33'");
  /* stray commas, a missing brace, trailing tokens */
  snprintf(buf, sizeof buf, "%s  %%0 = stablehlo.abs %%a {b = 1,} : tensor<2xf32>\n%s", H, T);
  expect_error(buf, 2, 32, "attribute name");
  snprintf(buf, sizeof buf, "%s  %%0 = stablehlo.abs %%a {b = 1 : tensor<2xf32>\n%s", H, T);
  expect_error(buf, 2, 0, NULL);
  snprintf(buf, sizeof buf, "%s  %%0 = stablehlo.abs %%a : tensor<2xf32> x\n%s", H, T);
  expect_error(buf, 2, 41, "unknown operation 'x'");
  snprintf(buf, sizeof buf, "%s  %%0 = stablehlo.abs %%a : tensor<2xf32>,\n%s", H, T);
  expect_error(buf, 3, 3, "expected type");
  /* what stays valid: type words, parameterized builtins, enums, symbols */
  snprintf(buf, sizeof buf, "%s  %%0 = stablehlo.abs %%a {b = i32, c = index, d = none, e = ui7, "
           "f = complex<f32>, g = tf32, h = @s, i = #stablehlo<comparison_direction EQ>, "
           "j = tensor<2xf32>, k = unit, l = [true, \"s\", 1.5 : f32]} : tensor<2xf32>\n%s", H, T);
  expect_ok(buf);
}

/* ------------------------------------------------------------- the walk */

typedef struct site {
  char *text;      /* the piece, NUL-terminated (owned) */
  size_t line_at;  /* offset of the op's line in text */
  size_t type_at;  /* offset of the " : " that starts its types */
  size_t line_end; /* offset of the '\n' ending the line */
  uint32_t line;   /* 1-based line number in text */
  bool one_line;   /* the op ends on its line (no region) */
  bool owns;       /* frees `text` (the first site of its piece) */
} site;

static site sites[OP_COUNT];
static int nsites;

/* The offset of the first " : " at bracket depth 0 in [p, e), or e. */
static size_t type_colon(const char *s, size_t p, size_t e) {
  int depth = 0;
  bool str = false;
  for (size_t i = p; i < e; i++) {
    char c = s[i];
    if (str) {
      if (c == '\\') i++;
      else if (c == '"') str = false;
      continue;
    }
    if (c == '"') str = true;
    else if (c == '(' || c == '[' || c == '{' || c == '<') depth++;
    else if (c == ')' || c == ']' || c == '}' || (c == '>' && i > 0 && s[i - 1] != '-')) depth--;
    else if (depth == 0 && c == ':' && i > 0 && s[i - 1] == ' ' && i + 1 < e && s[i + 1] == ' ')
      return i - 1;
  }
  return e;
}

/* Records the pretty-form ops of the piece text[b, e) whose kind has no
 * site yet (the piece must parse as it is). */
static void scan_piece(const char *text, size_t b, size_t e) {
  bool fresh[OP_COUNT];
  bool any = false;
  memset(fresh, 0, sizeof fresh);
  for (size_t p = b; p < e;) {
    size_t le = p;
    while (le < e && text[le] != '\n') le++;
    size_t q = p;
    while (q < le && text[q] == ' ') q++;
    if (q < le && text[q] == '%') { /* `%r = ` or `%r:2 = ` */
      const char *eq = memchr(text + q, '=', le - q);
      q = eq ? (size_t)(eq - text) + 1 : le;
      while (q < le && text[q] == ' ') q++;
    }
    size_t ns = q;
    while (q < le && (text[q] == '_' || text[q] == '.' || (text[q] >= 'a' && text[q] <= 'z') ||
                      (text[q] >= '0' && text[q] <= '9')))
      q++;
    if (q > ns && memchr(text + ns, '.', q - ns) && (q == le || text[q] == ' ')) {
      hlo_opcode c = op_lookup(text + ns, q - ns);
      if (c != OP_COUNT && !sites[c].text && !fresh[c] && type_colon(text, q, le) < le) {
        fresh[c] = true;
        any = true;
      }
    }
    p = le + 1;
  }
  if (!any) return;
  char *piece = malloc(e - b + 1);
  if (!piece) return;
  memcpy(piece, text + b, e - b);
  piece[e - b] = 0;
  hlo_status st;
  hlo_module_ir *m = tl_parse_text("piece.mlir", piece, 0, &st);
  if (!m) { hlo_status_free(st); free(piece); return; }
  module_free(m);
  bool owned = false;
  uint32_t line = 1;
  size_t n = e - b;
  for (size_t p = 0; p < n; line++) {
    size_t le = p;
    while (le < n && piece[le] != '\n') le++;
    size_t q = p;
    while (q < le && piece[q] == ' ') q++;
    if (q < le && piece[q] == '%') {
      const char *eq = memchr(piece + q, '=', le - q);
      q = eq ? (size_t)(eq - piece) + 1 : le;
      while (q < le && piece[q] == ' ') q++;
    }
    size_t ns = q;
    while (q < le && (piece[q] == '_' || piece[q] == '.' || (piece[q] >= 'a' && piece[q] <= 'z') ||
                      (piece[q] >= '0' && piece[q] <= '9')))
      q++;
    if (q > ns && q - ns < 64) {
      hlo_opcode c = op_lookup(piece + ns, q - ns);
      if (c != OP_COUNT && fresh[c] && !sites[c].text) {
        size_t tc = type_colon(piece, q, le);
        if (tc < le) {
          char last = le > p ? piece[le - 1] : 0;
          sites[c] = (site){piece, p, tc, le, line, last != '{' && last != '(', !owned};
          owned = true;
          nsites++;
        }
      }
    }
    p = le + 1;
  }
  if (!owned) free(piece);
}

static void scan_file(const char *path, void *ctx) {
  (void)ctx;
  tl_file tf;
  hlo_status st = tl_file_load(path, &tf);
  if (st) { hlo_status_free(st); tl_file_free(&tf); return; }
  for (size_t i = 0; i < tf.num_pieces; i++) scan_piece(tf.text, tf.pieces[i].begin, tf.pieces[i].end);
  tl_file_free(&tf);
}

/* Malformed trailers inserted before the op's types (where the attr-dict
 * goes) — MLIR rejects each. */
static const char *const BAD_BEFORE_TYPES[] = {
  " a = 1",             /* an attribute list without braces */
  " a = 1, a = 2",
  ", a = 1",            /* a keyword the op does not have */
  ", a = 1, a = 2",
  " {a = 1, a = 2}",    /* duplicate names */
  " {a, a}",
  " {a = foo}",         /* a bare word as a value */
  " {a = [1, foo.bar]}",
  " {a = 1,}",          /* stray commas */
  " {, a = 1}",
  ",",
  " {a = 1",            /* a missing brace */
  " a = 1}",
  " {a = 1} {b = 2}",   /* two attr-dicts */
  " foo",               /* a trailing bare word */
};
/* Malformed trailers appended to the op's line. */
static const char *const BAD_AT_END[] = {
  " a = 1", "\na = 1, a = 2", " {a = 1, a = 2}", " {a = foo}", " foo", ",", " , a = 1", " 1",
};
/* Well-formed attr-dicts (accepted where the format has an attr-dict). */
static const char *const GOOD_BEFORE_TYPES[] = {
  " {a = 1 : i32, b, \"c d\" = \"s\", e = [1, 2.5, @f], g = #stablehlo<precision HIGH>, "
  "h = tensor<2xf32>, i = dense<[1, 2]> : tensor<2xi64>, j = array<i64: 1, 2>, k = {l = f32}}",
};

/* Well-formed attr-dicts appended to the line (accepted where the format
 * ends with attr-dict, as check.expect_eq_const's does). */
static const char *const GOOD_AT_END[] = {" {a = 1 : i32}"};

static int walked, rejected, accepted;

/* Parses the site's piece with `ins` inserted at offset `at`; a bad mutant
 * must fail with a located parse error (on `want_line` when exact, else at
 * or after it); a good one may fail, and round-trips when accepted. */
static void mutate(const site *s, hlo_opcode c, size_t at, const char *ins, bool bad,
                   uint32_t want_line, bool exact) {
  size_t n = strlen(s->text), k = strlen(ins);
  char *t = malloc(n + k + 1);
  if (!t) { CHECK(0); return; }
  memcpy(t, s->text, at);
  memcpy(t + at, ins, k);
  memcpy(t + at + k, s->text + at, n - at + 1);
  hlo_status st;
  hlo_module_ir *m = tl_parse_text("mutant.mlir", t, 0, &st);
  walked++;
  if (m) {
    accepted++;
    if (bad) {
      fprintf(stderr, "%s: accepted the malformed trailer '%s' (line %u):\n%.*s\n", op_name(c), ins,
              want_line, (int)(s->line_end - s->line_at + k), t + s->line_at);
      CHECK(0);
    }
    check_roundtrip(m, op_name(c));
    module_free(m);
  } else {
    rejected++;
    const hlo_loc *loc = status_loc(st);
    bool ok = hlo_status_code_of(st) == HLO_PARSE_ERROR && loc && loc->line >= 1;
    if (ok && bad) ok = exact ? loc->line == want_line : loc->line >= want_line;
    if (!ok) {
      fprintf(stderr, "%s: trailer '%s': want a parse error on line %u, got: ", op_name(c), ins,
              want_line);
      hlo_status_print(st, stderr);
    }
    CHECK(ok);
    hlo_status_free(st);
  }
  free(t);
}

TEST(walk_every_pretty_form) {
  char dir[1024];
  snprintf(dir, sizeof dir, "%s/conformance", tl_shared_dir());
  size_t nf = tl_for_each_mlir(dir, true, scan_file, NULL);
  nf += tl_for_each_mlir("tests/jax", true, scan_file, NULL);
  nf += tl_for_each_mlir("tests/mlir", true, scan_file, NULL);
  if (nsites == 0) {
    printf("walk_every_pretty_form: no corpus found (%zu files under %s; set HLO_SHARED)\n", nf, dir);
    CHECK(nsites > 0);
    return;
  }
  for (int c = 0; c < OP_COUNT; c++) {
    const site *s = &sites[c];
    if (!s->text) continue;
    for (size_t i = 0; i < sizeof BAD_BEFORE_TYPES / sizeof *BAD_BEFORE_TYPES; i++)
      mutate(s, (hlo_opcode)c, s->type_at, BAD_BEFORE_TYPES[i], true, s->line, s->one_line);
    /* a trailing ',' continues the type list: the error is at the next token */
    if (s->one_line) {
      for (size_t i = 0; i < sizeof BAD_AT_END / sizeof *BAD_AT_END; i++)
        mutate(s, (hlo_opcode)c, s->line_end, BAD_AT_END[i], true,
               s->line + (BAD_AT_END[i][0] == '\n'), BAD_AT_END[i][0] != ',');
      for (size_t i = 0; i < sizeof GOOD_AT_END / sizeof *GOOD_AT_END; i++)
        mutate(s, (hlo_opcode)c, s->line_end, GOOD_AT_END[i], false, s->line, false);
    }
    for (size_t i = 0; i < sizeof GOOD_BEFORE_TYPES / sizeof *GOOD_BEFORE_TYPES; i++)
      mutate(s, (hlo_opcode)c, s->type_at, GOOD_BEFORE_TYPES[i], false, s->line, false);
  }
  printf("walk: %d op kinds in pretty form (%zu files scanned); %d mutants: %d rejected, %d "
         "accepted and round-tripped\n", nsites, nf, walked, rejected, accepted);
  for (int c = 0; c < OP_COUNT; c++)
    if (sites[c].owns) free(sites[c].text);
}

TEST_MAIN()
