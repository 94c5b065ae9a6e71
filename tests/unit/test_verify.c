/* Unit tests of the verifier (src/ir/verify*.c):
 *  - corpus: every piece of every .mlir file of ../shared/conformance and
 *    ../shared/models that parses must verify clean (no false positives);
 *    prints "verified N of M" and the first failures; parse failures are
 *    counted and reported separately (they belong to the parser);
 *  - negative cases: tests/mlir/verify_errors*.mlir, pieces split at
 *    `// -----`, each with one `// expected-error@+N {{TEXT}}` comment: the
 *    piece must parse, verify must fail with HLO_VERIFY_ERROR located on the
 *    line the comment points to, and the message must contain TEXT;
 *  - hostile attributes built by hand (out-of-range indices) must give a
 *    verify error, not an out-of-bounds read. */
#include "test.h"
#include "testlib.h"

#include <dirent.h>
#include <stdint.h>
#include "ir/ir.h"
#include "parse/parse.h"
#include "support/arena.h"
#include "support/status.h"

/* ------------------------------------------------------------- corpus */

typedef struct corpus_stats {
  int pieces, parsed, verified, parse_fail, verify_fail, files;
} corpus_stats;

static void corpus_file(const char *path, void *ctx) {
  corpus_stats *cs = ctx;
  tl_file tf;
  hlo_status st = tl_file_read(path, &tf);
  if (st) { hlo_status_free(st); tl_file_free(&tf); return; }
  cs->files++;
  st = tl_file_split(&tf);
  if (st) { hlo_status_free(st); tl_file_free(&tf); return; }
  const split_piece *pieces = tf.pieces;
  for (size_t i = 0; i < tf.num_pieces; i++) {
    /* skip pieces with no function (trailing comments) */
    if (!tl_piece_has(tf.text, pieces[i].begin, pieces[i].end, "func.func")) continue;
    cs->pieces++;
    hlo_module_ir *m = tl_parse_piece(&tf.src, pieces[i].begin, pieces[i].end, &st);
    if (st) {
      if (cs->parse_fail < 5) {
        fprintf(stderr, "  (parse failure, parser's) ");
        hlo_status_print(st, stderr);
      }
      cs->parse_fail++;
      hlo_status_free(st);
      continue;
    }
    cs->parsed++;
    st = module_verify(m);
    if (st) {
      if (cs->verify_fail < 25) {
        fprintf(stderr, "  FALSE POSITIVE: ");
        hlo_status_print(st, stderr);
      }
      cs->verify_fail++;
      hlo_status_free(st);
    } else {
      cs->verified++;
    }
    module_free(m);
  }
  tl_file_free(&tf);
}

TEST(corpus_verifies_clean) {
  char dir[1024];
  corpus_stats cs = {0};
  snprintf(dir, sizeof dir, "%s/conformance", tl_shared_dir());
  tl_for_each_mlir(dir, true, corpus_file, &cs);
  snprintf(dir, sizeof dir, "%s/models", tl_shared_dir());
  tl_for_each_mlir(dir, true, corpus_file, &cs);
  if (cs.files == 0) {
    printf("corpus: skipped (no files under %s; set HLO_SHARED)\n", tl_shared_dir());
    return;
  }
  printf("corpus: %d files, %d pieces; parsed %d (parse failures: %d, the parser's); "
         "verified %d of %d\n", cs.files, cs.pieces, cs.parsed, cs.parse_fail, cs.verified,
         cs.parsed);
  CHECK_EQ_INT(cs.verify_fail, 0);
  CHECK(cs.verified > 0 || cs.parsed == 0);
}

/* ----------------------------------------------------- negative cases */

/* Finds `// expected-error@+N {{TEXT}}` (or @-N, or no @: same line) in
 * text[b, e): writes the expected line and TEXT (malloc'd). */
static int find_expectation(const char *text, size_t b, size_t e, uint32_t first_line,
                            uint32_t *out_line, char **out_text) {
  uint32_t line = first_line;
  for (size_t p = b; p < e; p++) {
    if (text[p] == '\n') { line++; continue; }
    if (strncmp(text + p, "expected-error", 14) != 0) continue;
    const char *q = text + p + 14;
    long off = 0;
    if (*q == '@') {
      q++;
      int sign = *q == '-' ? -1 : 1;
      if (*q == '+' || *q == '-') q++;
      off = sign * strtol(q, (char **)&q, 10);
    }
    const char *o = strstr(q, "{{");
    const char *cl = o ? strstr(o, "}}") : NULL;
    const char *nl = strchr(q, '\n');
    if (!o || !cl || (nl && cl > nl)) return 0;
    size_t n = (size_t)(cl - o - 2);
    *out_text = malloc(n + 1);
    if (!*out_text) return 0;
    memcpy(*out_text, o + 2, n);
    (*out_text)[n] = 0;
    *out_line = (uint32_t)((long)line + off);
    return 1;
  }
  return 0;
}

static int check_error_file(const char *path) {
  tl_file tf;
  hlo_status st = tl_file_read(path, &tf);
  CHECK(st == NULL);
  if (st) { hlo_status_free(st); tl_file_free(&tf); return 0; }
  st = tl_file_split(&tf);
  CHECK(st == NULL);
  if (st) { hlo_status_free(st); tl_file_free(&tf); return 0; }
  const char *text = tf.text;
  const split_piece *pieces = tf.pieces;
  int cases = 0;
  for (size_t i = 0; i < tf.num_pieces; i++) {
    uint32_t want_line;
    char *want;
    if (!find_expectation(text, pieces[i].begin, pieces[i].end, pieces[i].first_line, &want_line,
                          &want))
      continue;
    cases++;
    hlo_module_ir *m = tl_parse_piece(&tf.src, pieces[i].begin, pieces[i].end, &st);
    if (st) {
      fprintf(stderr, "%s: piece at line %u does not parse (expected '%s'): ", path,
              pieces[i].first_line, want);
      hlo_status_print(st, stderr);
      hlo_status_free(st);
      CHECK(0);
      free(want);
      continue;
    }
    st = module_verify(m);
    const hlo_loc *loc = status_loc(st);
    const char *msg = st ? hlo_status_message(st) : NULL;
    int ok = st && hlo_status_code_of(st) == HLO_VERIFY_ERROR && loc && loc->line == want_line &&
             msg && strstr(msg, want);
    if (!ok) {
      fprintf(stderr, "%s:%u: expected error '%s' here; got: ", path, want_line, want);
      if (st) hlo_status_print(st, stderr);
      else fprintf(stderr, "no error\n");
      CHECK(0);
    }
    hlo_status_free(st);
    module_free(m);
    free(want);
  }
  tl_file_free(&tf);
  return cases;
}

TEST(negative_cases) {
  int n = 0;
  DIR *d = opendir("tests/mlir");
  CHECK(d != NULL);
  if (!d) return;
  struct dirent *e;
  while ((e = readdir(d))) {
    if (strncmp(e->d_name, "verify_errors", 13) != 0) continue;
    size_t k = strlen(e->d_name);
    if (k < 5 || strcmp(e->d_name + k - 5, ".mlir")) continue;
    char path[1024];
    snprintf(path, sizeof path, "tests/mlir/%s", e->d_name);
    n += check_error_file(path);
  }
  closedir(d);
  printf("negative cases: %d\n", n);
  CHECK(n >= 40);
}

/* ------------------------------------------- hand-built hostile IR */

/* A module whose @main holds one op `opc` on operand types `in` producing
 * `out`, returning its first result. */
static hlo_module_ir *one_op_module(hlo_opcode opc, hlo_type **in, uint32_t nin, hlo_type **out,
                                    uint32_t nout, hlo_op **out_op) {
  hlo_module_ir *m = module_new();
  if (!m) return NULL;
  hlo_func *f = arena_calloc(&m->arena, 1, sizeof *f);
  if (!f) { module_free(m); return NULL; }
  f->name = "main";
  f->num_args = nin;
  f->num_results = 1;
  f->result_types = arena_calloc(&m->arena, 1, sizeof *f->result_types);
  if (f->result_types) f->result_types[0] = out[0];
  f->body.block.parent = &f->body;
  hlo_loc loc = {NULL, 7, 3};
  hlo_status st = f && f->result_types ? block_set_args(m, &f->body.block, in, nin)
                                         : status_new(HLO_RESOURCE_EXHAUSTED, "oom");
  if (st) {
    hlo_status_free(st);
    module_free(m);
    return NULL;
  }
  hlo_value *ops[4];
  for (uint32_t i = 0; i < nin && i < 4; i++) ops[i] = &f->body.block.args[i];
  hlo_op *op = op_create(m, opc, ops, nin, out, nout, 0, loc);
  hlo_value *rv = op ? &op->results[0] : NULL;
  hlo_op *ret = op ? op_create(m, OP_FUNC_RETURN, &rv, 1, NULL, 0, 0, loc) : NULL;
  if (!ret) {
    module_free(m);
    return NULL;
  }
  block_append(&f->body.block, op);
  block_append(&f->body.block, ret);
  m->funcs = m->funcs_tail = f;
  m->num_funcs = 1;
  *out_op = op;
  return m;
}

static int msg_has(hlo_status st, const char *s) {
  const char *m = st ? hlo_status_message(st) : NULL;
  return m && strstr(m, s) != NULL;
}

TEST(hostile_attributes) {
  arena a;
  arena_init(&a);
  int64_t d2[2] = {4, 8}, d3[3] = {4, 8, 2};
  hlo_type *t2 = type_tensor(&a, HLO_F32, 2, d2), *t3 = type_tensor(&a, HLO_F32, 3, d3);
  hlo_op *op;
  /* broadcast_in_dim with a dimension far outside the result rank */
  hlo_module_ir *m = one_op_module(OP_BROADCAST_IN_DIM, &t2, 1, &t3, 1, &op);
  CHECK(m != NULL);
  if (m) {
    int64_t bad[2] = {0, 1000000};
    CHECK(op_set_attr(m, op, "broadcast_dimensions", attr_dense_array_i64(&m->arena, bad, 2)) == NULL);
    hlo_status st = module_verify(m);
    CHECK(hlo_status_code_of(st) == HLO_VERIFY_ERROR);
    CHECK(msg_has(st, "broadcast_in_dim (C3)"));
    CHECK(status_loc(st) && status_loc(st)->line == 7 && status_loc(st)->col == 3);
    hlo_status_free(st);
    /* negative index */
    int64_t neg[2] = {-5, 1};
    CHECK(op_set_attr(m, op, "broadcast_dimensions", attr_dense_array_i64(&m->arena, neg, 2)) == NULL);
    st = module_verify(m);
    CHECK(msg_has(st, "broadcast_in_dim (C3)"));
    hlo_status_free(st);
    /* wrong attribute kind */
    CHECK(op_set_attr(m, op, "broadcast_dimensions", attr_string(&m->arena, "x", 1)) == NULL);
    st = module_verify(m);
    CHECK(msg_has(st, "broadcast_dimensions"));
    hlo_status_free(st);
    module_free(m);
  }
  /* transpose with a permutation entry of INT64_MIN */
  m = one_op_module(OP_TRANSPOSE, &t2, 1, &t2, 1, &op);
  if (m) {
    int64_t bad[2] = {INT64_MIN, 0};
    CHECK(op_set_attr(m, op, "permutation", attr_dense_array_i64(&m->arena, bad, 2)) == NULL);
    hlo_status st = module_verify(m);
    CHECK(msg_has(st, "transpose (C2)"));
    hlo_status_free(st);
    module_free(m);
  }
  /* reverse with long attribute lists: 1000 distinct entries (out of
   * range), then the same with one repeated entry at the end */
  m = one_op_module(OP_REVERSE, &t2, 1, &t2, 1, &op);
  if (m) {
    int64_t many[1000];
    for (int i = 0; i < 1000; i++) many[i] = 1000 - i;
    CHECK(op_set_attr(m, op, "dimensions", attr_dense_array_i64(&m->arena, many, 1000)) == NULL);
    hlo_status st = module_verify(m);
    CHECK(msg_has(st, "reverse (C3)"));
    hlo_status_free(st);
    many[999] = 7;
    CHECK(op_set_attr(m, op, "dimensions", attr_dense_array_i64(&m->arena, many, 1000)) == NULL);
    st = module_verify(m);
    CHECK(msg_has(st, "reverse (C2): dimensions has duplicate 7"));
    hlo_status_free(st);
    module_free(m);
  }
  /* iota without its attribute */
  m = one_op_module(OP_IOTA, NULL, 0, &t2, 1, &op);
  if (m) {
    hlo_status st = module_verify(m);
    CHECK(msg_has(st, "iota_dimension"));
    hlo_status_free(st);
    module_free(m);
  }
  /* dot_general with a contracting dimension out of range */
  hlo_type *in2[2] = {t2, t2};
  m = one_op_module(OP_DOT_GENERAL, in2, 2, &t2, 1, &op);
  if (m) {
    hlo_attr *st_attr = arena_calloc(&m->arena, 1, sizeof *st_attr);
    named_attr *fields = arena_calloc(&m->arena, 2, sizeof *fields);
    int64_t lc = 99, rc = 0;
    fields[0].name = "lhs_contracting_dimensions";
    fields[0].value = attr_dense_array_i64(&m->arena, &lc, 1);
    fields[1].name = "rhs_contracting_dimensions";
    fields[1].value = attr_dense_array_i64(&m->arena, &rc, 1);
    st_attr->kind = ATTR_STRUCT;
    st_attr->u.st.name = "stablehlo.dot";
    st_attr->u.st.n = 2;
    st_attr->u.st.fields = fields;
    CHECK(op_set_attr(m, op, "dot_dimension_numbers", st_attr) == NULL);
    hlo_status st = module_verify(m);
    CHECK(msg_has(st, "dot_general (C6)"));
    hlo_status_free(st);
    module_free(m);
  }
  arena_deinit(&a);
}

TEST(use_before_definition) {
  arena a;
  arena_init(&a);
  int64_t d[1] = {4};
  hlo_type *t = type_tensor(&a, HLO_F32, 1, d);
  hlo_op *neg;
  hlo_module_ir *m = one_op_module(OP_NEGATE, &t, 1, &t, 1, &neg);
  CHECK(m != NULL);
  if (m) {
    /* a second negate, placed before the first but using its result */
    hlo_value *v = &neg->results[0];
    hlo_loc loc = {NULL, 5, 9};
    hlo_op *early = op_create(m, OP_NEGATE, &v, 1, &t, 1, 0, loc);
    CHECK(early != NULL);
    op_insert_before(neg, early);
    hlo_status st = module_verify(m);
    CHECK(hlo_status_code_of(st) == HLO_VERIFY_ERROR);
    CHECK(msg_has(st, "used before its definition"));
    CHECK(status_loc(st) && status_loc(st)->line == 5);
    hlo_status_free(st);
    /* unlinked again: clean */
    op_unlink(early);
    st = module_verify(m);
    CHECK(st == NULL);
    hlo_status_free(st);
    module_free(m);
  }
  arena_deinit(&a);
}

/* ------------------------------------------- valid programs, rare ops */

/* Ops the corpus does not use: each must verify clean. */
static const char *const valid_programs[] = {
  "func.func @main(%x: tensor<2x3x4xf32>, %s: tensor<4xf32>) -> tensor<2x3x4xf32> {\n"
  "  %0 = \"stablehlo.batch_norm_inference\"(%x, %s, %s, %s, %s) {epsilon = 1.0e-5 : f32, feature_index = 2 : i64}"
  " : (tensor<2x3x4xf32>, tensor<4xf32>, tensor<4xf32>, tensor<4xf32>, tensor<4xf32>) -> tensor<2x3x4xf32>\n"
  "  return %0 : tensor<2x3x4xf32>\n}\n",
  "func.func @main(%x: tensor<2x3x4xf32>, %s: tensor<4xf32>) -> tensor<2x3x4xf32> {\n"
  "  %0:3 = \"stablehlo.batch_norm_training\"(%x, %s, %s) {epsilon = 1.0e-5 : f32, feature_index = 2 : i64}"
  " : (tensor<2x3x4xf32>, tensor<4xf32>, tensor<4xf32>) -> (tensor<2x3x4xf32>, tensor<4xf32>, tensor<4xf32>)\n"
  "  return %0#0 : tensor<2x3x4xf32>\n}\n",
  "func.func @main(%x: tensor<2x3x4xf32>, %s: tensor<4xf32>) -> tensor<2x3x4xf32> {\n"
  "  %0:3 = \"stablehlo.batch_norm_grad\"(%x, %s, %s, %s, %x) {epsilon = 1.0e-5 : f32, feature_index = 2 : i64}"
  " : (tensor<2x3x4xf32>, tensor<4xf32>, tensor<4xf32>, tensor<4xf32>, tensor<2x3x4xf32>) -> (tensor<2x3x4xf32>, tensor<4xf32>, tensor<4xf32>)\n"
  "  return %0#0 : tensor<2x3x4xf32>\n}\n",
  "func.func @main(%a: tensor<3x3xf64>) -> tensor<3x3xf64> {\n"
  "  %0 = \"stablehlo.cholesky\"(%a) {lower = true} : (tensor<3x3xf64>) -> tensor<3x3xf64>\n"
  "  return %0 : tensor<3x3xf64>\n}\n",
  "func.func @main(%a: tensor<f32>, %b: tensor<f32>, %s: tensor<2xi64>) -> tensor<3x4xf32> {\n"
  "  %0 = \"stablehlo.rng\"(%a, %b, %s) {rng_distribution = #stablehlo<rng_distribution NORMAL>}"
  " : (tensor<f32>, tensor<f32>, tensor<2xi64>) -> tensor<3x4xf32>\n"
  "  return %0 : tensor<3x4xf32>\n}\n",
  "func.func @main(%a: tensor<2x3xf32>, %b: tensor<3xf32>) -> tensor<2xf32> {\n"
  "  %0 = \"stablehlo.dot\"(%a, %b) : (tensor<2x3xf32>, tensor<3xf32>) -> tensor<2xf32>\n"
  "  return %0 : tensor<2xf32>\n}\n",
  "func.func @main(%a: tensor<3xi32>) -> tensor<2x3xi32> {\n"
  "  %0 = \"stablehlo.broadcast\"(%a) {broadcast_sizes = array<i64: 2>} : (tensor<3xi32>) -> tensor<2x3xi32>\n"
  "  return %0 : tensor<2x3xi32>\n}\n",
  "func.func @main(%a: tensor<?x3xf32>, %b: tensor<3x?xf32>) -> tensor<?x?xf32> {\n"
  "  %0 = stablehlo.dot_general %a, %b, contracting_dims = [1] x [0] : (tensor<?x3xf32>, tensor<3x?xf32>) -> tensor<?x?xf32>\n"
  "  %1 = stablehlo.add %0, %0 : tensor<?x?xf32>\n"
  "  return %1 : tensor<?x?xf32>\n}\n",
  "func.func @main(%a: tensor<?xf32>, %b: tensor<4xf32>) -> tensor<?xf32> {\n"
  "  %0 = \"stablehlo.concatenate\"(%a, %b) {dimension = 0 : i64} : (tensor<?xf32>, tensor<4xf32>) -> tensor<?xf32>\n"
  "  return %0 : tensor<?xf32>\n}\n",
  "func.func @main(%a: tensor<4xf32>) -> tensor<4xf32> {\n"
  "  %t = \"stablehlo.create_token\"() : () -> !stablehlo.token\n"
  "  %0 = \"stablehlo.cross_replica_sum\"(%a) {replica_groups = dense<[[0]]> : tensor<1x1xi64>} : (tensor<4xf32>) -> tensor<4xf32>\n"
  "  return %0 : tensor<4xf32>\n}\n",
  /* chlo: square on integers, is_inf to i1, numpy-style and
   * broadcast_dimensions broadcasting, top_k with k = 0 and k = last dim */
  "func.func @main(%a: tensor<4xi32>, %f: tensor<4xf16>) -> tensor<4xi32> {\n"
  "  %0 = chlo.square %a : tensor<4xi32> -> tensor<4xi32>\n"
  "  %1 = chlo.is_inf %f : tensor<4xf16> -> tensor<4xi1>\n"
  "  return %0 : tensor<4xi32>\n}\n",
  "func.func @main(%a: tensor<2x1x3xf32>, %b: tensor<4x1xf32>, %c: tensor<2xf32>) -> tensor<2x4x3xi1> {\n"
  "  %0 = chlo.broadcast_add %a, %b : (tensor<2x1x3xf32>, tensor<4x1xf32>) -> tensor<2x4x3xf32>\n"
  "  %1 = chlo.broadcast_multiply %0, %c {broadcast_dimensions = array<i64: 0>} : (tensor<2x4x3xf32>, tensor<2xf32>) -> tensor<2x4x3xf32>\n"
  "  %2 = chlo.broadcast_compare %1, %b {comparison_direction = #chlo<comparison_direction LT>} : (tensor<2x4x3xf32>, tensor<4x1xf32>) -> tensor<2x4x3xi1>\n"
  "  %3 = chlo.broadcast_complex %a, %b : (tensor<2x1x3xf32>, tensor<4x1xf32>) -> tensor<2x4x3xcomplex<f32>>\n"
  "  return %2 : tensor<2x4x3xi1>\n}\n",
  "func.func @main(%a: tensor<6x20xf32>) -> tensor<6x20xf32> {\n"
  "  %v, %i = chlo.top_k(%a, k = 20) : tensor<6x20xf32> -> (tensor<6x20xf32>, tensor<6x20xi32>)\n"
  "  %w, %j = chlo.top_k(%a, k = 0) : tensor<6x20xf32> -> (tensor<6x0xf32>, tensor<6x0xi32>)\n"
  "  return %v : tensor<6x20xf32>\n}\n",
  /* FFT over the trailing dims; a huge but empty tensor (0 elements) */
  "func.func @main(%a: tensor<2x4x8xcomplex<f32>>, %z: tensor<0x4294967296x4294967296xf32>) -> tensor<2x4x8xcomplex<f32>> {\n"
  "  %0 = stablehlo.fft %a, type = FFT, length = [4, 8] : (tensor<2x4x8xcomplex<f32>>) -> tensor<2x4x8xcomplex<f32>>\n"
  "  return %0 : tensor<2x4x8xcomplex<f32>>\n}\n",
};

TEST(valid_rare_ops) {
  for (size_t i = 0; i < sizeof valid_programs / sizeof valid_programs[0]; i++) {
    hlo_status st;
    hlo_module_ir *m = tl_parse_text("valid.mlir", valid_programs[i], 0, &st);
    if (st) {
      printf("valid program %zu: skipped, does not parse (the parser's): ", i);
      hlo_status_print(st, stdout);
      hlo_status_free(st);
      continue;
    }
    st = module_verify(m);
    if (st) {
      fprintf(stderr, "valid program %zu rejected: ", i);
      hlo_status_print(st, stderr);
    }
    CHECK(st == NULL);
    hlo_status_free(st);
    module_free(m);
  }
}

TEST_MAIN()
