/* test_chlo.c — the chlo legalization pass (src/passes/chlo_*.c).
 *
 * Hand-built modules check every decomposition structurally (no chlo op is
 * left, result types are kept, unsupported element types give a located
 * HLO_UNIMPLEMENTED). The corpus tests parse every conformance/model file
 * that holds chlo ops, run the pass, and check that no chlo op remains. */
#include "test.h"

#include <dirent.h>
#include <stdint.h>

#include "ir/element.h"
#include "interp/interp.h"
#include "ir/ir.h"
#include "parse/parse.h"
#include "passes/passes.h"

/* ----------------------------------------------------------- helpers */

static const char *shared_dir(void) {
  const char *s = getenv("HLO_SHARED");
  return s && *s ? s : "../shared";
}

/* A module with one function @main() -> result of `opc` applied to splat
 * constants of type `dt`[2x3] (num_operands of them). */
static hlo_module_ir *make_module(hlo_opcode opc, hlo_dtype dt, uint32_t num_operands,
                                  hlo_dtype result_dt, hlo_op **out_op) {
  hlo_module_ir *m = module_new();
  if (!m) return NULL;
  arena *a = &m->arena;
  hlo_func *f = arena_alloc(a, sizeof *f);
  if (!f) { module_free(m); return NULL; }
  f->name = "main";
  m->funcs = m->funcs_tail = f;
  m->num_funcs = 1;
  hlo_loc loc = {NULL, 7, 3};
  int64_t dims[2] = {2, 3};
  hlo_type *t = type_tensor(a, dt, 2, dims);
  hlo_type *rt = type_tensor(a, result_dt, 2, dims);
  hlo_value *ops[3];
  uint8_t buf[16] = {0};
  double vals[3] = {0.25, 0.5, 0.75};
  for (uint32_t i = 0; i < num_operands; i++) {
    memset(buf, 0, sizeof buf);
    if (dtype_class(dt) == HLO_CLASS_COMPLEX) elem_set_c128(dt, buf, 0, vals[i], -vals[i]);
    else if (dtype_is_float(dt)) elem_set_f64(dt, buf, 0, vals[i]);
    else elem_set_i64(dt, buf, 0, (int64_t)i + 3);
    hlo_op *c = op_create(m, OP_CONSTANT, NULL, 0, &t, 1, 0, loc);
    if (!c || op_set_attr(m, c, "value", attr_dense(a, t, buf, hlo_dtype_size(dt), true))) {
      module_free(m);
      return NULL;
    }
    block_append(&f->body.block, c);
    ops[i] = &c->results[0];
  }
  hlo_op *op = op_create(m, opc, ops, num_operands, &rt, 1, 0, loc);
  if (!op) { module_free(m); return NULL; }
  block_append(&f->body.block, op);
  hlo_value *r = &op->results[0];
  hlo_op *ret = op_create(m, OP_FUNC_RETURN, &r, 1, NULL, 0, 0, loc);
  if (!ret) { module_free(m); return NULL; }
  block_append(&f->body.block, ret);
  f->num_results = 1;
  f->result_types = arena_alloc(a, sizeof(hlo_type *));
  if (!f->result_types) { module_free(m); return NULL; }
  f->result_types[0] = rt;
  *out_op = op;
  return m;
}

static int count_chlo_block(const hlo_block *b, int *total) {
  int n = 0;
  for (const hlo_op *op = b->first; op; op = op->next) {
    (*total)++;
    if (op_flags(op->opcode) & OPF_CHLO) n++;
    for (uint32_t r = 0; r < op->num_regions; r++) n += count_chlo_block(&op->regions[r].block, total);
  }
  return n;
}

/* Number of chlo ops left in `m`; *total gets the op count. */
static int count_chlo(const hlo_module_ir *m, int *total) {
  int n = 0;
  *total = 0;
  for (const hlo_func *f = m->funcs; f; f = f->next) n += count_chlo_block(&f->body.block, total);
  return n;
}

/* Every operand of every op is defined earlier in its block, an enclosing
 * block, or is an argument of one of them (a weak SSA dominance check). */
static bool defined_before(const hlo_value *v, const hlo_op *user) {
  for (const hlo_block *b = user->parent; b;) {
    if (!v->def && v->block == b) return true;
    for (const hlo_op *o = b->first; o && o != user; o = o->next)
      if (v->def == o) return true;
    const hlo_region *r = b->parent;
    if (!r || !r->parent) break;
    user = r->parent;
    b = user->parent;
  }
  return false;
}

static bool ssa_ok_block(const hlo_block *b) {
  for (const hlo_op *op = b->first; op; op = op->next) {
    for (uint32_t i = 0; i < op->num_operands; i++)
      if (!op->operands[i] || !defined_before(op->operands[i], op)) return false;
    for (uint32_t r = 0; r < op->num_regions; r++)
      if (!ssa_ok_block(&op->regions[r].block)) return false;
  }
  return true;
}

static bool ssa_ok(const hlo_module_ir *m) {
  for (const hlo_func *f = m->funcs; f; f = f->next)
    if (!ssa_ok_block(&f->body.block)) return false;
  return true;
}

/* Runs the pass on a hand-built module and checks the result. */
static void check_lowers(hlo_opcode opc, hlo_dtype dt, uint32_t nops, hlo_dtype rdt) {
  hlo_op *op = NULL;
  hlo_module_ir *m = make_module(opc, dt, nops, rdt, &op);
  CHECK(m != NULL);
  if (!m) return;
  hlo_status st = pass_chlo_legalize(m);
  if (st) {
    fprintf(stderr, "%s on %s: ", op_name(opc), hlo_dtype_name(dt));
    hlo_status_print(st, stderr);
  }
  CHECK(st == NULL);
  hlo_status_free(st);
  int total = 0;
  CHECK_EQ_INT(count_chlo(m, &total), 0);
  CHECK(total > 2);
  CHECK(ssa_ok(m));
  /* the function still returns a value of the original type */
  hlo_op *ret = m->funcs->body.block.last;
  CHECK(ret && ret->opcode == OP_FUNC_RETURN && ret->num_operands == 1);
  if (ret && ret->num_operands == 1) {
    CHECK(ret->operands[0] != &op->results[0]);
    CHECK(ret->operands[0]->type->dtype == rdt);
    CHECK(ret->operands[0]->type->rank == 2);
  }
  module_free(m);
}

/* --------------------------------------------------- hand-built modules */

TEST(unary_float_ops_lower) {
  static const hlo_opcode ops[] = {
      OP_CHLO_ACOS,  OP_CHLO_ACOSH,   OP_CHLO_ASIN,  OP_CHLO_ASINH,      OP_CHLO_ATAN,
      OP_CHLO_ATANH, OP_CHLO_BESSEL_I1E, OP_CHLO_COSH, OP_CHLO_DIGAMMA, OP_CHLO_ERF,
      OP_CHLO_ERF_INV, OP_CHLO_ERFC,  OP_CHLO_LGAMMA, OP_CHLO_SINH,      OP_CHLO_SQUARE,
      OP_CHLO_TAN};
  static const hlo_dtype dts[] = {HLO_F16, HLO_BF16, HLO_F32, HLO_F64};
  for (size_t i = 0; i < sizeof ops / sizeof ops[0]; i++)
    for (size_t j = 0; j < sizeof dts / sizeof dts[0]; j++) check_lowers(ops[i], dts[j], 1, dts[j]);
}

TEST(unary_complex_ops_lower) {
  static const hlo_opcode ops[] = {OP_CHLO_ACOS, OP_CHLO_ACOSH, OP_CHLO_ASIN, OP_CHLO_ASINH,
                                   OP_CHLO_ATAN, OP_CHLO_ATANH, OP_CHLO_CONJ, OP_CHLO_COSH,
                                   OP_CHLO_SINH, OP_CHLO_SQUARE, OP_CHLO_TAN};
  for (size_t i = 0; i < sizeof ops / sizeof ops[0]; i++) {
    check_lowers(ops[i], HLO_C64, 1, HLO_C64);
    check_lowers(ops[i], HLO_C128, 1, HLO_C128);
  }
}

TEST(predicates_and_binary_ops_lower) {
  check_lowers(OP_CHLO_IS_INF, HLO_F32, 1, HLO_I1);
  check_lowers(OP_CHLO_IS_POS_INF, HLO_BF16, 1, HLO_I1);
  check_lowers(OP_CHLO_IS_NEG_INF, HLO_F64, 1, HLO_I1);
  check_lowers(OP_CHLO_NEXT_AFTER, HLO_F32, 2, HLO_F32);
  check_lowers(OP_CHLO_NEXT_AFTER, HLO_BF16, 2, HLO_BF16);
  check_lowers(OP_CHLO_NEXT_AFTER, HLO_F64, 2, HLO_F64);
  check_lowers(OP_CHLO_ZETA, HLO_F32, 2, HLO_F32);
  check_lowers(OP_CHLO_POLYGAMMA, HLO_F16, 2, HLO_F16);
  static const hlo_dtype ints[] = {HLO_I8, HLO_I16, HLO_I32, HLO_I64,
                                   HLO_UI8, HLO_UI16, HLO_UI32, HLO_UI64};
  for (size_t i = 0; i < sizeof ints / sizeof ints[0]; i++)
    check_lowers(OP_CHLO_MULHI, ints[i], 2, ints[i]);
  check_lowers(OP_CHLO_BROADCAST_ADD, HLO_F32, 2, HLO_F32);
}

TEST(unsupported_type_is_located_unimplemented) {
  hlo_op *op = NULL;
  hlo_module_ir *m = make_module(OP_CHLO_ERF, HLO_I32, 1, HLO_I32, &op);
  CHECK(m != NULL);
  if (!m) return;
  hlo_status st = pass_chlo_legalize(m);
  CHECK(st != NULL);
  CHECK(hlo_status_code_of(st) == HLO_UNIMPLEMENTED);
  const hlo_loc *loc = status_loc(st);
  CHECK(loc && loc->line == 7 && loc->col == 3);
  CHECK(strstr(hlo_status_message(st), "chlo.erf") != NULL);
  hlo_status_free(st);
  module_free(m);
}


/* ------------------------------------------------------- corpus files */

typedef struct corpus_file {
  char path[512];
} corpus_file;

static char *read_file(const char *path, size_t *out_len) {
  FILE *fp = fopen(path, "rb");
  if (!fp) return NULL;
  fseek(fp, 0, SEEK_END);
  long n = ftell(fp);
  fseek(fp, 0, SEEK_SET);
  char *buf = n >= 0 ? malloc((size_t)n + 1) : NULL;
  if (buf && fread(buf, 1, (size_t)n, fp) != (size_t)n) { free(buf); buf = NULL; }
  fclose(fp);
  if (buf) { buf[n] = 0; *out_len = (size_t)n; }
  return buf;
}

/* Appends the .mlir files of `dir` whose name contains `name_part` (NULL:
 * any) and whose text contains "chlo." to files[*n..cap). */
static void collect(const char *dir, const char *name_part, corpus_file *files, int *n, int cap) {
  DIR *d = opendir(dir);
  if (!d) return;
  struct dirent *e;
  while ((e = readdir(d)) && *n < cap) {
    size_t len = strlen(e->d_name);
    if (len < 5 || strcmp(e->d_name + len - 5, ".mlir") != 0) continue;
    if (name_part && !strstr(e->d_name, name_part)) continue;
    corpus_file *cf = &files[*n];
    snprintf(cf->path, sizeof cf->path, "%s/%s", dir, e->d_name);
    size_t tl = 0;
    char *text = read_file(cf->path, &tl);
    if (text && strstr(text, "chlo.")) (*n)++;
    free(text);
  }
  closedir(d);
}

static int cmp_files(const void *a, const void *b) {
  return strcmp(((const corpus_file *)a)->path, ((const corpus_file *)b)->path);
}

/* Every corpus file holding chlo ops, sorted. Returns the count. */
static int corpus(corpus_file *files, int cap) {
  char dir[512];
  int n = 0;
  snprintf(dir, sizeof dir, "%s/conformance/testdata", shared_dir());
  collect(dir, "_chlo", files, &n, cap);
  snprintf(dir, sizeof dir, "%s/conformance/interpret/chlo", shared_dir());
  collect(dir, NULL, files, &n, cap);
  snprintf(dir, sizeof dir, "%s/models", shared_dir());
  DIR *d = opendir(dir);
  if (d) {
    struct dirent *e;
    while ((e = readdir(d))) {
      if (e->d_name[0] == '.') continue;
      char sub[768];
      snprintf(sub, sizeof sub, "%s/%s", dir, e->d_name);
      collect(sub, NULL, files, &n, cap);
    }
    closedir(d);
  }
  qsort(files, (size_t)n, sizeof *files, cmp_files);
  return n;
}

/* Parses every piece of `path`, legalizes it, and counts: pieces parsed,
 * pieces legalized with no chlo op left. Prints what failed. */
static void legalize_file(const char *path, int *pieces, int *parsed, int *clean) {
  size_t len = 0;
  char *text = read_file(path, &len);
  if (!text) { (*pieces)++; fprintf(stderr, "  cannot read %s\n", path); return; }
  split_piece *ps = NULL;
  size_t np = 0;
  hlo_status st = parse_split(text, len, &ps, &np);
  if (st) { hlo_status_free(st); free(text); (*pieces)++; return; }
  hlo_source src = {path, text, len, 1};
  for (size_t i = 0; i < np; i++) {
    (*pieces)++;
    hlo_module_ir *m = NULL;
    st = parse_module(&src, ps[i].begin, ps[i].end, &m);
    if (st) { hlo_status_free(st); continue; }
    (*parsed)++;
    st = pass_chlo_legalize(m);
    int total = 0;
    if (st) {
      fprintf(stderr, "  legalize failed: ");
      hlo_status_print(st, stderr);
      hlo_status_free(st);
    } else if (count_chlo(m, &total) != 0 || !ssa_ok(m)) {
      fprintf(stderr, "  %s piece %zu: chlo ops left or broken SSA\n", path, i);
    } else {
      (*clean)++;
    }
    module_free(m);
  }
  free(ps);
  free(text);
}

TEST(corpus_files_have_no_chlo_left) {
  static corpus_file files[256];
  int n = corpus(files, 256);
  if (n == 0) {
    printf("corpus_files_have_no_chlo_left: skipped: no corpus under %s (set HLO_SHARED)\n",
           shared_dir());
    return;
  }
  int pieces = 0, parsed = 0, clean = 0;
  for (int i = 0; i < n; i++) legalize_file(files[i].path, &pieces, &parsed, &clean);
  printf("chlo corpus: %d files, %d pieces, %d parsed, %d legalized clean\n", n, pieces, parsed,
         clean);
  CHECK(n >= 80);
  CHECK_EQ_INT(clean, parsed);
}

/* Parses, legalizes and interprets every piece of `path` (entry @main or the
 * only function, no arguments; the file's check ops decide). Adds to
 * *pieces and *ok; returns true when every piece ran clean. `why` gets the
 * first failure's message (truncated). */
static bool run_file(const char *path, int *pieces, int *ok, char *why, size_t why_len) {
  size_t len = 0;
  bool all = true;
  why[0] = 0;
  char *text = read_file(path, &len);
  if (!text) { (*pieces)++; snprintf(why, why_len, "cannot read"); return false; }
  split_piece *ps = NULL;
  size_t np = 0;
  hlo_status st = parse_split(text, len, &ps, &np);
  if (st) { hlo_status_free(st); free(text); (*pieces)++; snprintf(why, why_len, "split failed"); return false; }
  hlo_source src = {path, text, len, 1};
  for (size_t i = 0; i < np; i++) {
    (*pieces)++;
    hlo_module_ir *m = NULL;
    interp *it = NULL;
    tensor **res = NULL;
    const hlo_func *f = NULL;
    st = parse_module(&src, ps[i].begin, ps[i].end, &m);
    if (!st) st = pass_chlo_legalize(m);
    if (!st && !(f = module_entry(m, NULL)))
      st = status_new(HLO_NOT_FOUND, "no entry function");
    if (!st) st = interp_create(m, NULL, &it);
    if (!st) st = interp_call(it, f, NULL, 0, &res);
    if (st) {
      if (all) snprintf(why, why_len, "piece %zu: %s", i, hlo_status_message(st));
      all = false;
      hlo_status_free(st);
    } else {
      (*ok)++;
      for (uint32_t r = 0; r < f->num_results; r++) tensor_release(res[r]);
      free(res);
    }
    if (it) interp_destroy(it);
    if (m) module_free(m);
  }
  free(ps);
  free(text);
  return all;
}

/* Conformance files expected to pass; a regression guard. */
static const char *const must_pass[] = {
    NULL,
};

TEST(conformance_chlo_files_run) {
  static corpus_file files[256];
  int n = corpus(files, 256);
  if (n == 0) {
    printf("conformance_chlo_files_run: skipped: no corpus under %s (set HLO_SHARED)\n",
           shared_dir());
    return;
  }
  int pieces = 0, ok = 0, files_ok = 0, files_run = 0;
  char why[200];
  for (int i = 0; i < n; i++) {
    if (!strstr(files[i].path, "/conformance/")) continue; /* models need inputs */
    files_run++;
    bool good = run_file(files[i].path, &pieces, &ok, why, sizeof why);
    const char *base = strrchr(files[i].path, '/');
    base = base ? base + 1 : files[i].path;
    if (good) files_ok++;
    else printf("  FAIL %s: %.150s\n", base, why);
    for (size_t k = 0; must_pass[k]; k++)
      if (strcmp(base, must_pass[k]) == 0) CHECK(good);
  }
  printf("chlo conformance: passed %d of %d files (%d of %d pieces)\n", files_ok, files_run, ok,
         pieces);
  CHECK(files_run > 0);
}

TEST_MAIN()
