/* test_chlo.c — the chlo legalization pass (src/passes/chlo_*.c).
 *
 * Hand-built modules check every decomposition structurally (no chlo op is
 * left, result types are kept, unsupported element types give a located
 * HLO_UNIMPLEMENTED). The corpus tests parse every conformance/model file
 * that holds chlo ops, run the pass, and check that no chlo op remains. */
#include "test.h"
#include "testlib.h"

#include <dirent.h>
#include <stdint.h>

#include "ir/element.h"
#include "interp/interp.h"
#include "ir/ir.h"
#include "parse/parse.h"
#include "passes/passes.h"
#include "support/arena.h"
#include "support/npy.h"

/* ----------------------------------------------------------- helpers */

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
  hlo_status vst = module_verify(m);
  if (vst) {
    fprintf(stderr, "%s on %s: verifier: ", op_name(opc), hlo_dtype_name(dt));
    hlo_status_print(vst, stderr);
  }
  CHECK(vst == NULL);
  hlo_status_free(vst);
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


TEST(out_of_memory_is_reported) {
  /* Arena chunks are 64 KiB; fill the current one so that `room` bytes are
   * left and make the next chunk allocation fail: as `room` varies, the
   * failure hits the pass at many different points. Each run must end in
   * NULL (everything fitted) or HLO_RESOURCE_EXHAUSTED, and never crash. */
  static const hlo_opcode ops[] = {OP_CHLO_ERF_INV, OP_CHLO_ACOS, OP_CHLO_LGAMMA, OP_CHLO_ZETA};
  static const hlo_dtype dts[] = {HLO_F64, HLO_C64, HLO_F16, HLO_F32};
  static const uint32_t nops[] = {1, 1, 1, 2};
  for (size_t k = 0; k < sizeof ops / sizeof ops[0]; k++) {
    int failures = 0;
    for (size_t room = 0; room < 65536; room += 1024) {
      hlo_op *op = NULL;
      hlo_module_ir *m = make_module(ops[k], dts[k], nops[k], dts[k], &op);
      CHECK(m != NULL);
      if (!m) return;
      arena *a = &m->arena;
      if (a->used + room < 65536 && !arena_alloc(a, 65536 - a->used - room)) {
        module_free(m);
        continue;
      }
      hlo_fail_alloc_after = 1;
      hlo_status st = pass_chlo_legalize(m);
      long left = hlo_fail_alloc_after;
      hlo_fail_alloc_after = 0;
      if (!st) CHECK(left > 0); /* a failed allocation must not be swallowed */
      if (st) {
        failures++;
        CHECK(hlo_status_code_of(st) == HLO_RESOURCE_EXHAUSTED);
      }
      hlo_status_free(st);
      module_free(m);
    }
    CHECK(failures > 10);
  }
}

/* ------------------------------------------------------- corpus files */

static bool name_has_chlo(const char *name, const void *ctx) {
  return strstr(name, "_chlo") != NULL;
}

/* Every corpus file holding chlo ops (testdata/ names with "_chlo", interpret/chlo/,
 * models/), sorted, into *files. */
static void corpus(tl_paths *files) {
  char dir[512];
  tl_paths all = {0};
  snprintf(dir, sizeof dir, "%s/conformance/testdata", tl_shared_dir());
  CHECK(tl_list_mlir(dir, false, name_has_chlo, NULL, &all));
  snprintf(dir, sizeof dir, "%s/conformance/interpret/chlo", tl_shared_dir());
  CHECK(tl_list_mlir(dir, false, NULL, NULL, &all));
  snprintf(dir, sizeof dir, "%s/models", tl_shared_dir());
  CHECK(tl_list_mlir(dir, true, NULL, NULL, &all));
  memset(files, 0, sizeof *files);
  files->v = all.v;
  files->cap = all.cap;
  for (size_t i = 0; i < all.n; i++) {
    size_t tl = 0;
    char *text = tl_read_file(all.v[i], &tl);
    if (text && strstr(text, "chlo.")) files->v[files->n++] = all.v[i];
    else free(all.v[i]);
    free(text);
  }
  tl_paths_sort(files);
}

/* Parses every piece of `path`, legalizes it, and counts: pieces parsed,
 * pieces legalized with no chlo op left. Prints what failed. */
static void legalize_file(const char *path, int *pieces, int *parsed, int *clean) {
  tl_file tf;
  hlo_status st = tl_file_read(path, &tf);
  if (st) {
    (*pieces)++;
    fprintf(stderr, "  cannot read %s\n", path);
    hlo_status_free(st);
    tl_file_free(&tf);
    return;
  }
  st = tl_file_split(&tf);
  if (st) { hlo_status_free(st); tl_file_free(&tf); (*pieces)++; return; }
  for (size_t i = 0; i < tf.num_pieces; i++) {
    (*pieces)++;
    hlo_module_ir *m = tl_parse_piece(&tf.src, tf.pieces[i].begin, tf.pieces[i].end, &st);
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
    } else if ((st = module_verify(m)) != NULL) {
      fprintf(stderr, "  verifier rejects the legalized module: ");
      hlo_status_print(st, stderr);
      hlo_status_free(st);
    } else {
      (*clean)++;
    }
    module_free(m);
  }
  tl_file_free(&tf);
}

TEST(corpus_files_have_no_chlo_left) {
  tl_paths files;
  corpus(&files);
  int n = (int)files.n;
  if (n == 0) {
    tl_paths_free(&files);
    printf("corpus_files_have_no_chlo_left: skipped: no corpus under %s (set HLO_SHARED)\n",
           tl_shared_dir());
    return;
  }
  int pieces = 0, parsed = 0, clean = 0;
  for (int i = 0; i < n; i++) legalize_file(files.v[i], &pieces, &parsed, &clean);
  tl_paths_free(&files);
  printf("chlo corpus: %d files, %d pieces, %d parsed, %d legalized clean\n", n, pieces, parsed,
         clean);
  CHECK(n >= 80);
  CHECK_EQ_INT(clean, parsed);
}

/* Parses, legalizes and interprets every piece of `text` (entry @main or
 * the only function, no arguments; the program's check ops decide). Adds to
 * *pieces and *ok; returns true when every piece ran clean. `why` gets the
 * first failure's message (truncated). */
static bool run_text(const hlo_source *src, int *pieces, int *ok, char *why, size_t why_len) {
  bool all = true;
  why[0] = 0;
  split_piece *ps = NULL;
  size_t np = 0;
  hlo_status st = parse_split(src->text, src->len, &ps, &np);
  if (st) { hlo_status_free(st); (*pieces)++; snprintf(why, why_len, "split failed"); return false; }
  for (size_t i = 0; i < np; i++) {
    (*pieces)++;
    tl_run r;
    st = tl_run_entry(src, ps[i].begin, ps[i].end, TL_LEGALIZE_CHLO, NULL, &r);
    if (st) {
      if (all) snprintf(why, why_len, "piece %zu: %s", i, hlo_status_message(st));
      all = false;
      hlo_status_free(st);
    } else {
      (*ok)++;
    }
    tl_run_free(&r);
  }
  free(ps);
  return all;
}

static bool run_file(const char *path, int *pieces, int *ok, char *why, size_t why_len) {
  tl_file tf;
  hlo_status st = tl_file_read(path, &tf);
  if (st) {
    hlo_status_free(st);
    tl_file_free(&tf);
    (*pieces)++;
    snprintf(why, why_len, "cannot read");
    return false;
  }
  bool r = run_text(&tf.src, pieces, ok, why, why_len);
  tl_file_free(&tf);
  return r;
}

/* Runs MLIR `text` (pieces split by `// -----`) and checks every piece
 * passes its own check ops. */
static void check_program(const char *text) {
  int pieces = 0, ok = 0;
  char why[300];
  hlo_source src = tl_source("test.mlir", text);
  bool good = run_text(&src, &pieces, &ok, why, sizeof why);
  if (!good) fprintf(stderr, "  program failed: %s\n", why);
  CHECK(good);
  CHECK(pieces > 0 && ok == pieces);
}

TEST(top_k_ties_and_nans) {
  check_program(
      "func.func @main() {\n"
      "  %x = stablehlo.constant dense<[0x7F800000, 0x7FC00000, 0xFFC00000, 0xFF800000, 3.0]> : tensor<5xf32>\n"
      "  %v, %i = chlo.top_k(%x, k = 5) : tensor<5xf32> -> (tensor<5xf32>, tensor<5xi32>)\n"
      "  check.expect_eq_const %i, dense<[1, 0, 4, 3, 2]> : tensor<5xi32>\n"
      "  func.return\n"
      "}\n"
      "// -----\n"
      "func.func @main() {\n"
      "  %x = stablehlo.constant dense<[[1, 3, 3, 1, 3], [5, 5, 5, 5, 5]]> : tensor<2x5xi32>\n"
      "  %v, %i = chlo.top_k(%x, k = 3) : tensor<2x5xi32> -> (tensor<2x3xi32>, tensor<2x3xi32>)\n"
      "  check.expect_eq_const %v, dense<[[3, 3, 3], [5, 5, 5]]> : tensor<2x3xi32>\n"
      "  check.expect_eq_const %i, dense<[[1, 2, 4], [0, 1, 2]]> : tensor<2x3xi32>\n"
      "  func.return\n"
      "}\n");
}

TEST(ragged_dot_modes_2_and_3) {
  check_program(
      "func.func @main() {\n"
      "  %l = stablehlo.constant dense<[[1.0, 2.0, 3.0, 4.0], [5.0, 6.0, 7.0, 8.0]]> : tensor<2x4xf32>\n"
      "  %r = stablehlo.constant dense<[[1.0], [10.0], [100.0], [1000.0]]> : tensor<4x1xf32>\n"
      "  %g = stablehlo.constant dense<[2, 2]> : tensor<2xi32>\n"
      "  %0 = \"chlo.ragged_dot\"(%l, %r, %g) {ragged_dot_dimension_numbers = #chlo.ragged_dot<\n"
      "      lhs_batching_dimensions = [], rhs_batching_dimensions = [],\n"
      "      lhs_contracting_dimensions = [1], rhs_contracting_dimensions = [0],\n"
      "      lhs_ragged_dimensions = [1], rhs_group_dimensions = []>}\n"
      "    : (tensor<2x4xf32>, tensor<4x1xf32>, tensor<2xi32>) -> tensor<2x2x1xf32>\n"
      "  check.expect_eq_const %0, dense<[[[21.0], [65.0]], [[4300.0], [8700.0]]]> : tensor<2x2x1xf32>\n"
      "  func.return\n"
      "}\n"
      "// -----\n"
      "func.func @main() {\n"
      "  %l = stablehlo.constant dense<[[[1.0, 2.0]], [[3.0, 4.0]]]> : tensor<2x1x2xf32>\n"
      "  %r = stablehlo.constant dense<[[[1.0], [1.0]], [[2.0], [2.0]]]> : tensor<2x2x1xf32>\n"
      "  %g = stablehlo.constant dense<[1, 1]> : tensor<2xi64>\n"
      "  %0 = \"chlo.ragged_dot\"(%l, %r, %g) {ragged_dot_dimension_numbers = #chlo.ragged_dot<\n"
      "      lhs_batching_dimensions = [0], rhs_batching_dimensions = [0],\n"
      "      lhs_contracting_dimensions = [2], rhs_contracting_dimensions = [1],\n"
      "      lhs_ragged_dimensions = [0], rhs_group_dimensions = []>}\n"
      "    : (tensor<2x1x2xf32>, tensor<2x2x1xf32>, tensor<2xi64>) -> tensor<2x1x1xf32>\n"
      "  check.expect_eq_const %0, dense<[[[3.0]], [[14.0]]]> : tensor<2x1x1xf32>\n"
      "  func.return\n"
      "}\n");
}

TEST(special_function_values) {
  check_program(
      "func.func @main() {\n"
      "  %x = stablehlo.constant dense<[2.0, 1.0, 0.5, 3.0]> : tensor<4xf32>\n"
      "  %q = stablehlo.constant dense<[1.0, 2.0, 1.0, 2.0]> : tensor<4xf32>\n"
      "  %0 = \"chlo.zeta\"(%x, %q) : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>\n"
      "  check.expect_almost_eq_const %0, dense<[1.6449341, 0x7F800000, 0x7FC00000, 0.2020569]> : tensor<4xf32>\n"
      "  %n = stablehlo.constant dense<[0.0, 1.0, 2.0, -1.0, 1.5]> : tensor<5xf64>\n"
      "  %y = stablehlo.constant dense<1.0> : tensor<5xf64>\n"
      "  %1 = \"chlo.polygamma\"(%n, %y) : (tensor<5xf64>, tensor<5xf64>) -> tensor<5xf64>\n"
      "  check.expect_almost_eq_const %1, dense<[-0.5772156649, 1.6449340668, -2.4041138063, 0x7FF8000000000000, 0x7FF8000000000000]> : tensor<5xf64>\n"
      "  %d = stablehlo.constant dense<[0.0, -1.0, 1.0, -0.5]> : tensor<4xbf16>\n"
      "  %2 = \"chlo.digamma\"(%d) : (tensor<4xbf16>) -> tensor<4xbf16>\n"
      "  check.expect_almost_eq_const %2, dense<[0x7FC0, 0x7FC0, -0.578125, 0.03662109375]> : tensor<4xbf16> {tolerance = 0.01 : f64}\n"
      "  %g = stablehlo.constant dense<[0xFFF0000000000000, 1.0, 0.5, -2.5]> : tensor<4xf64>\n"
      "  %3 = \"chlo.lgamma\"(%g) : (tensor<4xf64>) -> tensor<4xf64>\n"
      "  check.expect_almost_eq_const %3, dense<[0x7FF0000000000000, 0.0, 0.5723649429247001, -0.05624371649767405]> : tensor<4xf64>\n"
      "  %a = stablehlo.constant dense<[-0.0, 0x7FC00000, 1.0, 0x7F800000]> : tensor<4xf32>\n"
      "  %b = stablehlo.constant dense<[0.0, 1.0, 1.0, 0.0]> : tensor<4xf32>\n"
      "  %4 = \"chlo.next_after\"(%a, %b) : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>\n"
      "  check.expect_almost_eq_const %4, dense<[0.0, 0x7FC00000, 1.0, 0x7F7FFFFF]> : tensor<4xf32> {tolerance = 0.0 : f64}\n"
      "  %e = stablehlo.constant dense<[-1.0, 1.0, 0.0, 0.5]> : tensor<4xf32>\n"
      "  %5 = \"chlo.erf_inv\"(%e) : (tensor<4xf32>) -> tensor<4xf32>\n"
      "  check.expect_almost_eq_const %5, dense<[0xFF800000, 0x7F800000, 0.0, 0.4769362762]> : tensor<4xf32>\n"
      "  %c = stablehlo.constant dense<[-1.0, 1.0, 0.0]> : tensor<3xf64>\n"
      "  %6 = \"chlo.acos\"(%c) : (tensor<3xf64>) -> tensor<3xf64>\n"
      "  check.expect_almost_eq_const %6, dense<[3.141592653589793, 0.0, 1.5707963267948966]> : tensor<3xf64>\n"
      "  func.return\n"
      "}\n");
}

TEST(rank_specialization_cluster_is_inlined) {
  check_program(
      "func.func @main() {\n"
      "  %a = stablehlo.constant dense<[1.0, 2.0]> : tensor<2xf32>\n"
      "  %b = stablehlo.constant dense<[10.0, 20.0]> : tensor<2xf32>\n"
      "  %0 = \"chlo.rank_specialization_cluster\"(%a, %b) ({\n"
      "  ^bb0(%x: tensor<2xf32>, %y: tensor<2xf32>):\n"
      "    %s = \"chlo.broadcast_multiply\"(%x, %y) : (tensor<2xf32>, tensor<2xf32>) -> tensor<2xf32>\n"
      "    \"chlo.rank_specialization_cluster_yield\"(%s) : (tensor<2xf32>) -> ()\n"
      "  }) : (tensor<2xf32>, tensor<2xf32>) -> tensor<2xf32>\n"
      "  check.expect_eq_const %0, dense<[10.0, 40.0]> : tensor<2xf32>\n"
      "  func.return\n"
      "}\n");
}

TEST(broadcasting_ops) {
  check_program(
      "func.func @main() {\n"
      "  %a = stablehlo.constant dense<[[1.0, 2.0, 3.0], [4.0, 5.0, 6.0]]> : tensor<2x3xf32>\n"
      "  %b = stablehlo.constant dense<[10.0, 20.0, 30.0]> : tensor<3xf32>\n"
      "  %c = stablehlo.constant dense<[2.5, 4.5]> : tensor<2xf32>\n"
      "  %0 = \"chlo.broadcast_add\"(%a, %b) : (tensor<2x3xf32>, tensor<3xf32>) -> tensor<2x3xf32>\n"
      "  check.expect_eq_const %0, dense<[[11.0, 22.0, 33.0], [14.0, 25.0, 36.0]]> : tensor<2x3xf32>\n"
      "  %1 = \"chlo.broadcast_compare\"(%a, %c) {broadcast_dimensions = array<i64: 0>, comparison_direction = #chlo<comparison_direction GT>} : (tensor<2x3xf32>, tensor<2xf32>) -> tensor<2x3xi1>\n"
      "  check.expect_eq_const %1, dense<[[false, false, true], [false, true, true]]> : tensor<2x3xi1>\n"
      "  %s = stablehlo.constant dense<[true, false, true]> : tensor<3xi1>\n"
      "  %2 = \"chlo.broadcast_select\"(%s, %a, %b) : (tensor<3xi1>, tensor<2x3xf32>, tensor<3xf32>) -> tensor<2x3xf32>\n"
      "  check.expect_eq_const %2, dense<[[1.0, 20.0, 3.0], [4.0, 20.0, 6.0]]> : tensor<2x3xf32>\n"
      "  %3 = \"chlo.constant_like\"(%a) {value = 7.0 : f32} : (tensor<2x3xf32>) -> tensor<2x3xf32>\n"
      "  check.expect_eq_const %3, dense<7.0> : tensor<2x3xf32>\n"
      "  %4 = \"chlo.constant\"() {value = dense<[1, 2]> : tensor<2xi64>} : () -> tensor<2xi64>\n"
      "  check.expect_eq_const %4, dense<[1, 2]> : tensor<2xi64>\n"
      "  %i = stablehlo.constant dense<[0x7F800000, 0xFF800000, 1.0, 0x7FC00000]> : tensor<4xf32>\n"
      "  %5 = \"chlo.is_inf\"(%i) : (tensor<4xf32>) -> tensor<4xi1>\n"
      "  check.expect_eq_const %5, dense<[true, true, false, false]> : tensor<4xi1>\n"
      "  %6 = \"chlo.is_neg_inf\"(%i) : (tensor<4xf32>) -> tensor<4xi1>\n"
      "  check.expect_eq_const %6, dense<[false, true, false, false]> : tensor<4xi1>\n"
      "  %7 = \"chlo.is_pos_inf\"(%i) : (tensor<4xf32>) -> tensor<4xi1>\n"
      "  check.expect_eq_const %7, dense<[true, false, false, false]> : tensor<4xi1>\n"
      "  %m = stablehlo.constant dense<[-1, 3]> : tensor<2xi64>\n"
      "  %n = stablehlo.constant dense<[-1, 6148914691236517206]> : tensor<2xi64>\n"
      "  %8 = \"chlo.mulhi\"(%m, %n) : (tensor<2xi64>, tensor<2xi64>) -> tensor<2xi64>\n"
      "  check.expect_eq_const %8, dense<[0, 1]> : tensor<2xi64>\n"
      "  func.return\n"
      "}\n");
}

TEST(scan_reverse_and_multi_carry) {
  check_program(
      "func.func @main() {\n"
      "  %x = stablehlo.constant dense<[[1, 2, 3], [4, 5, 6]]> : tensor<2x3xi32>\n"
      "  %z = stablehlo.constant dense<0> : tensor<2xi32>\n"
      "  %o = stablehlo.constant dense<1> : tensor<2xi32>\n"
      "  %0:4 = chlo.scan(%x) inits(%z, %o) dimension=1 attributes {is_reverse = true} {\n"
      "  ^bb0(%e: tensor<2xi32>, %s: tensor<2xi32>, %p: tensor<2xi32>):\n"
      "    %1 = stablehlo.add %e, %s : tensor<2xi32>\n"
      "    %2 = stablehlo.multiply %e, %p : tensor<2xi32>\n"
      "    stablehlo.return %1, %2, %1, %2 : tensor<2xi32>, tensor<2xi32>, tensor<2xi32>, tensor<2xi32>\n"
      "  } : (tensor<2x3xi32>, tensor<2xi32>, tensor<2xi32>) -> (tensor<2x3xi32>, tensor<2x3xi32>, tensor<2xi32>, tensor<2xi32>)\n"
      "  check.expect_eq_const %0#0, dense<[[6, 5, 3], [15, 11, 6]]> : tensor<2x3xi32>\n"
      "  check.expect_eq_const %0#1, dense<[[6, 6, 3], [120, 30, 6]]> : tensor<2x3xi32>\n"
      "  check.expect_eq_const %0#2, dense<[6, 15]> : tensor<2xi32>\n"
      "  check.expect_eq_const %0#3, dense<[6, 120]> : tensor<2xi32>\n"
      "  func.return\n"
      "}\n");
}

/* A scan along a dimension of length 0 takes no step: empty outputs, the
 * inits as the final carries (the loop's dynamic_slice of size 1 would not
 * verify). */
TEST(scan_of_zero_length) {
  check_program(
      "func.func @main() {\n"
      "  %x = stablehlo.constant dense<> : tensor<0x3xf32>\n"
      "  %z = stablehlo.constant dense<[1.0, 2.0, 3.0]> : tensor<3xf32>\n"
      "  %0:2 = chlo.scan(%x) inits(%z) dimension=0 {\n"
      "  ^bb0(%e: tensor<3xf32>, %c: tensor<3xf32>):\n"
      "    %r = stablehlo.add %e, %c : tensor<3xf32>\n"
      "    stablehlo.return %r, %r : tensor<3xf32>, tensor<3xf32>\n"
      "  } : (tensor<0x3xf32>, tensor<3xf32>) -> (tensor<0x3xf32>, tensor<3xf32>)\n"
      "  check.expect_eq_const %0#1, dense<[1.0, 2.0, 3.0]> : tensor<3xf32>\n"
      "  func.return\n"
      "}\n");
}

/* How many ops of kind `opc` module m holds, in regions too. */
static int count_ops_block(const hlo_block *b, hlo_opcode opc) {
  int n = 0;
  for (const hlo_op *op = b->first; op; op = op->next) {
    n += op->opcode == opc;
    for (uint32_t r = 0; r < op->num_regions; r++) n += count_ops_block(&op->regions[r].block, opc);
  }
  return n;
}
static int count_ops(const hlo_module_ir *m, hlo_opcode opc) {
  int n = 0;
  for (const hlo_func *f = m->funcs; f; f = f->next) n += count_ops_block(&f->body.block, opc);
  return n;
}

/* A 2x6 f32 scan along dimension 1 with init INIT (MLIR text of a 2-vector
 * value defined in PRE) and body BODY (%e the input, %c the carry). */
static void scan_text(char *out, size_t cap, const char *pre, const char *init,
                      const char *attrs, const char *body) {
  snprintf(out, cap,
           "func.func @main() -> (tensor<2x6xf32>, tensor<2xf32>) {\n"
           "  %%x = stablehlo.constant dense<[[1.0e8, 1.0, -1.0e8, 1.0, 0.1, 0.2],"
           " [3.3, -7.25, 0.3, 1.0e-3, 5.5e7, -2.0]]> : tensor<2x6xf32>\n"
           "%s"
           "  %%0:2 = chlo.scan(%%x) inits(%s) dimension=1 %s {\n"
           "  ^bb0(%%e: tensor<2xf32>, %%c: tensor<2xf32>):\n"
           "    %s\n"
           "  } : (tensor<2x6xf32>, tensor<2xf32>) -> (tensor<2x6xf32>, tensor<2xf32>)\n"
           "  func.return %%0#0, %%0#1 : tensor<2x6xf32>, tensor<2xf32>\n"
           "}\n",
           pre, init, attrs, body);
}

/* Which lowering a scan took: 1 one reduce_window, 0 a while loop. */
static int scan_lowering(const char *text) {
  hlo_status err = NULL;
  hlo_module_ir *m = tl_parse_text("scan.mlir", text, TL_VERIFY | TL_LEGALIZE_CHLO, &err);
  if (!m) {
    fprintf(stderr, "  %s\n", hlo_status_message(err));
    hlo_status_free(err);
    return -1;
  }
  int w = count_ops(m, OP_WHILE), rw = count_ops(m, OP_REDUCE_WINDOW);
  module_free(m);
  return rw == 1 && w == 0 ? 1 : rw == 0 && w == 1 ? 0 : -1;
}

/* The results of `text`'s @main, bit for bit equal to those of `ref`. */
static bool same_results(const char *text, const char *ref) {
  tl_run a, b;
  hlo_status st = tl_run_text("a.mlir", text, TL_VERIFY | TL_LEGALIZE_CHLO, NULL, NULL, 0, &a);
  hlo_status st2 = tl_run_text("b.mlir", ref, TL_VERIFY | TL_LEGALIZE_CHLO, NULL, NULL, 0, &b);
  bool same = !st && !st2 && a.n == b.n;
  for (uint32_t i = 0; same && i < a.n; i++)
    same = a.res[i]->nbytes == b.res[i]->nbytes &&
           memcmp(a.res[i]->data, b.res[i]->data, a.res[i]->nbytes) == 0;
  if (st) fprintf(stderr, "  %s\n", hlo_status_message(st));
  if (st2) fprintf(stderr, "  %s\n", hlo_status_message(st2));
  hlo_status_free(st);
  hlo_status_free(st2);
  tl_run_free(&a);
  tl_run_free(&b);
  return same;
}

/* A small cumulative scan (cumsum / cumprod / cummax: one associative op of
 * input and carry, an init the op leaves unchanged) becomes one
 * reduce_window whose results are bit for bit the loop's (the loop is
 * taken for an init that is not a constant); anything else stays a loop. */
TEST(cumulative_scan_is_one_reduce_window) {
  static char win[2048], loop[2048];
  const char *zero = "  %z = stablehlo.constant dense<0.0> : tensor<2xf32>\n";
  /* not a constant: the loop lowering, the reference (negate(-0) = +0) */
  const char *zero_var = "  %m = stablehlo.constant dense<-0.0> : tensor<2xf32>\n"
                         "  %z = stablehlo.negate %m : tensor<2xf32>\n";
  const char *sum = "%r = stablehlo.add %e, %c : tensor<2xf32>\n"
                    "    stablehlo.return %r, %r : tensor<2xf32>, tensor<2xf32>";
  const char *sum_cf = "%r = stablehlo.add %c, %e : tensor<2xf32>\n"
                       "    stablehlo.return %r, %r : tensor<2xf32>, tensor<2xf32>";
  scan_text(win, sizeof win, zero, "%z", "", sum);
  scan_text(loop, sizeof loop, zero_var, "%z", "", sum);
  CHECK_EQ_INT(scan_lowering(win), 1);
  CHECK_EQ_INT(scan_lowering(loop), 0);
  CHECK(same_results(win, loop)); /* 1e8 + 1 - 1e8 + 1: the order shows */
  scan_text(win, sizeof win, zero, "%z", "", sum_cf);
  scan_text(loop, sizeof loop, zero_var, "%z", "", sum_cf);
  CHECK_EQ_INT(scan_lowering(win), 1);
  CHECK(same_results(win, loop));
  /* cummax from -inf through a broadcast 0-d constant, cumprod from 1 */
  const char *ninf = "  %s = stablehlo.constant dense<0xFF800000> : tensor<f32>\n"
                     "  %z = stablehlo.broadcast_in_dim %s, dims = [] : (tensor<f32>) -> tensor<2xf32>\n";
  const char *ninf_var = "  %s = stablehlo.constant dense<0x7F800000> : tensor<f32>\n"
                         "  %n = stablehlo.negate %s : tensor<f32>\n"
                         "  %z = stablehlo.broadcast_in_dim %n, dims = [] : (tensor<f32>) -> tensor<2xf32>\n";
  const char *mx = "%r = stablehlo.maximum %c, %e : tensor<2xf32>\n"
                   "    stablehlo.return %r, %r : tensor<2xf32>, tensor<2xf32>";
  scan_text(win, sizeof win, ninf, "%z", "", mx);
  scan_text(loop, sizeof loop, ninf_var, "%z", "", mx);
  CHECK_EQ_INT(scan_lowering(win), 1);
  CHECK(same_results(win, loop));
  const char *one = "  %z = stablehlo.constant dense<1.0> : tensor<2xf32>\n";
  const char *one_var = "  %m = stablehlo.constant dense<-1.0> : tensor<2xf32>\n"
                        "  %z = stablehlo.negate %m : tensor<2xf32>\n";
  const char *prod = "%r = stablehlo.multiply %e, %c : tensor<2xf32>\n"
                     "    stablehlo.return %r, %r : tensor<2xf32>, tensor<2xf32>";
  scan_text(win, sizeof win, one, "%z", "", prod);
  scan_text(loop, sizeof loop, one_var, "%z", "", prod);
  CHECK_EQ_INT(scan_lowering(win), 1);
  CHECK(same_results(win, loop));
  /* loops: an init the op changes (5 + 5 != 5), a reversed scan, a body of
   * two ops, an output that is not the carry */
  scan_text(win, sizeof win, "  %z = stablehlo.constant dense<5.0> : tensor<2xf32>\n", "%z", "",
            sum);
  CHECK_EQ_INT(scan_lowering(win), 0);
  scan_text(win, sizeof win, zero, "%z", "attributes {is_reverse = true}", sum);
  CHECK_EQ_INT(scan_lowering(win), 0);
  scan_text(win, sizeof win, zero, "%z", "",
            "%r = stablehlo.add %e, %c : tensor<2xf32>\n"
            "    %q = stablehlo.multiply %r, %r : tensor<2xf32>\n"
            "    stablehlo.return %q, %q : tensor<2xf32>, tensor<2xf32>");
  CHECK_EQ_INT(scan_lowering(win), 0);
  scan_text(win, sizeof win, zero, "%z", "",
            "%r = stablehlo.add %e, %c : tensor<2xf32>\n"
            "    stablehlo.return %e, %r : tensor<2xf32>, tensor<2xf32>");
  CHECK_EQ_INT(scan_lowering(win), 0);
  /* too much work for windows (64 x 8192 elements, each a prefix of up to
   * 8192): the loop */
  CHECK_EQ_INT(scan_lowering(
                   "func.func @main(%x: tensor<64x8192xf32>) -> tensor<64x8192xf32> {\n"
                   "  %z = stablehlo.constant dense<0.0> : tensor<64xf32>\n"
                   "  %0:2 = chlo.scan(%x) inits(%z) dimension=1 {\n"
                   "  ^bb0(%e: tensor<64xf32>, %c: tensor<64xf32>):\n"
                   "    %r = stablehlo.add %e, %c : tensor<64xf32>\n"
                   "    stablehlo.return %r, %r : tensor<64xf32>, tensor<64xf32>\n"
                   "  } : (tensor<64x8192xf32>, tensor<64xf32>) -> (tensor<64x8192xf32>, tensor<64xf32>)\n"
                   "  func.return %0#0 : tensor<64x8192xf32>\n"
                   "}\n"),
               0);
}

TEST(conformance_chlo_files_run) {
  tl_paths files;
  corpus(&files);
  int n = (int)files.n;
  if (n == 0) {
    tl_paths_free(&files);
    printf("conformance_chlo_files_run: skipped: no corpus under %s (set HLO_SHARED)\n",
           tl_shared_dir());
    return;
  }
  int pieces = 0, ok = 0, files_ok = 0, files_run = 0, failed = 0;
  char why[200];
  for (int i = 0; i < n; i++) {
    const char *path = files.v[i];
    if (!strstr(path, "/conformance/")) continue; /* models need inputs */
    files_run++;
    size_t tl = 0;
    char *text = tl_read_file(path, &tl);
    bool disabled = text && strstr(text, "RUN-DISABLED") != NULL;
    free(text);
    bool good = run_file(path, &pieces, &ok, why, sizeof why);
    const char *base = strrchr(path, '/');
    base = base ? base + 1 : path;
    if (good) files_ok++;
    else if (disabled) printf("  fail (RUN-DISABLED upstream, not counted) %s: %.150s\n", base, why);
    else printf("  FAIL %s: %.150s\n", base, why);
    if (!good && !disabled) failed++;
  }
  tl_paths_free(&files);
  printf("chlo conformance: passed %d of %d files (%d of %d pieces)\n", files_ok, files_run, ok,
         pieces);
  CHECK(files_run >= 80);
  CHECK_EQ_INT(failed, 0);
}

/* ------------------------------------------------------------ models */

/* A tensor of type `t` from a .npy array (converting float32 files to narrower
 * float types); NULL on mismatch. */
static tensor *tensor_from_npy(const hlo_type *t, const npy_array *a) {
  if (type_num_elements(t) != (int64_t)(a->nbytes / hlo_dtype_size(a->dtype))) return NULL;
  tensor *v = NULL;
  hlo_status st = tensor_create(t, NULL, &v);
  if (st) { hlo_status_free(st); return NULL; }
  if (a->dtype == t->dtype) {
    if (a->nbytes) memcpy(v->data, a->data, a->nbytes);
  } else if (dtype_is_float(a->dtype) && dtype_is_float(t->dtype)) {
    for (int64_t i = 0; i < v->num_elems; i++)
      elem_set_f64(t->dtype, v->data, i, elem_get_f64(a->dtype, a->data, i));
  } else {
    tensor_release(v);
    return NULL;
  }
  return v;
}

/* Result `v` against expected `e`: exact for integers and bools, relative
 * error norm <= tol for floats. */
static bool result_close(const tensor *v, const npy_array *e, double tol) {
  hlo_dtype dt = v->type->dtype;
  if ((int64_t)(e->nbytes / hlo_dtype_size(e->dtype)) != v->num_elems) return false;
  if (!dtype_is_float(dt)) {
    for (int64_t i = 0; i < v->num_elems; i++)
      if (elem_get_i64(dt, v->data, i) != elem_get_i64(e->dtype, e->data, i)) return false;
    return true;
  }
  double num = 0, den = 0, max_ulp = 0;
  for (int64_t i = 0; i < v->num_elems; i++) {
    double a = elem_get_f64(dt, v->data, i), b = elem_get_f64(e->dtype, e->data, i);
    if (dt == HLO_F32 && isfinite(a) && isfinite(b)) {
      float fa = (float)a, fb = (float)b;
      int32_t ia, ib;
      memcpy(&ia, &fa, 4);
      memcpy(&ib, &fb, 4);
      if (ia < 0) ia = INT32_MIN - ia;
      if (ib < 0) ib = INT32_MIN - ib;
      double u = fabs((double)ia - (double)ib);
      if (u > max_ulp) max_ulp = u;
    }
    if (isnan(a) != isnan(b)) return false;
    if (isnan(a)) continue;
    num += (a - b) * (a - b);
    den += b * b;
  }
  if (getenv("HLO_TEST_VERBOSE"))
    fprintf(stderr, "  relative error norm %g, max f32 ulp %g\n", sqrt(num / (den > 0 ? den : 1)), max_ulp);
  return tol == 0 ? num == 0 : num <= tol * tol * (den > 0 ? den : 1);
}

/* Runs models/NAME/NAME.mlir on its inputs and compares with expected/. */
static bool run_model(const char *name, double tol, char *why, size_t why_len) {
  char path[768];
  snprintf(path, sizeof path, "%s/models/%s/%s.mlir", tl_shared_dir(), name, name);
  tl_file tf;
  hlo_status st = tl_file_read(path, &tf);
  if (st) {
    hlo_status_free(st);
    tl_file_free(&tf);
    snprintf(why, why_len, "cannot read the model file");
    return false;
  }
  tl_run r;
  tensor **args = NULL;
  bool good = true;
  st = tl_prepare(&tf.src, 0, tf.len, TL_LEGALIZE_CHLO, NULL, &r);
  const hlo_func *f = r.f;
  if (!st) {
    args = calloc(f->num_args ? f->num_args : 1, sizeof *args);
    for (uint32_t i = 0; i < f->num_args && !st; i++) {
      char ap[800];
      snprintf(ap, sizeof ap, "%s/models/%s/inputs/arg%u.npy", tl_shared_dir(), name, i);
      npy_array a;
      st = npy_read(ap, &a);
      if (st) break;
      args[i] = tensor_from_npy(f->body.block.args[i].type, &a);
      npy_free(&a);
      if (!args[i]) st = status_new(HLO_INVALID_ARGUMENT, "input %u does not fit", i);
    }
  }
  if (!st) st = tl_call(&r, args, f->num_args);
  if (st) {
    snprintf(why, why_len, "%s", hlo_status_message(st));
    hlo_status_free(st);
    good = false;
  } else {
    for (uint32_t k = 0; k < r.n; k++) {
      char ep[800];
      snprintf(ep, sizeof ep, "%s/models/%s/expected/out%u.npy", tl_shared_dir(), name, k);
      npy_array e;
      hlo_status est = npy_read(ep, &e);
      if (est) { hlo_status_free(est); good = false; snprintf(why, why_len, "missing expected/out%u.npy", k); continue; }
      if (!result_close(r.res[k], &e, tol)) {
        good = false;
        snprintf(why, why_len, "result %u differs from expected", k);
      }
      npy_free(&e);
    }
  }
  if (args)
    for (uint32_t i = 0; f && i < f->num_args; i++) tensor_release(args[i]);
  free(args);
  tl_run_free(&r);
  tl_file_free(&tf);
  return good;
}

TEST(models_with_chlo_match_expected) {
  static const struct { const char *name; double tol; } models[] = {
      {"sort_topk", 1e-5},       /* chlo.top_k, chlo.scan (cumsum order differs) */
      {"random_normal", 1e-6},   /* chlo.erf_inv (XLA:CPU rounds its log1p/FMAs differently) */
      {"moe_layer", 1e-4},       /* chlo.top_k */
      {"group_norm_convT", 1e-4} /* chlo.square */
  };
  char dir[600];
  snprintf(dir, sizeof dir, "%s/models", tl_shared_dir());
  DIR *d = opendir(dir);
  if (!d) {
    printf("models_with_chlo_match_expected: skipped: no %s (set HLO_SHARED)\n", dir);
    return;
  }
  closedir(d);
  for (size_t i = 0; i < sizeof models / sizeof models[0]; i++) {
    char why[200] = "";
    bool ok = run_model(models[i].name, models[i].tol, why, sizeof why);
    printf("  model %s: %s %.150s\n", models[i].name, ok ? "ok" : "FAIL", why);
    CHECK(ok);
  }
}

TEST_MAIN()
