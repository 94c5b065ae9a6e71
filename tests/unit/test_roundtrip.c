/* test_roundtrip.c — print∘parse is idempotent over the whole corpus: for
 * every .mlir under $HLO_SHARED (default ../shared) conformance/ and
 * models/, each `// -----` piece is parsed, printed, parsed again and
 * printed again; the two printed texts must be identical, and the module
 * parsed from the printed text must equal the one parsed from the file
 * (structurally, up to value names). Pieces the parser
 * rejects in the original are counted and reported, not failed here (they
 * are the parser's tests' business). Also: the model files JAX printed
 * come back byte for byte (model_files_byte_identical), and a hand-written
 * module exercising MLIR's value numbering in nested regions does too. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "ir/ir.h"
#include "ir/print.h"
#include "parse/parse.h"
#include "test.h"
#include "testlib.h"

/* ------------------------------------------------ structural equality */

/* Why two modules differ (first difference), for the failure message. */
static char why[512];

static bool fail(const char *what, const char *a) {
  snprintf(why, sizeof why, "%s%s%s", what, a ? ": " : "", a ? a : "");
  return false;
}

static bool attr_same(const hlo_attr *a, const hlo_attr *b);

static bool named_same(const named_attr *a, const named_attr *b, uint32_t n) {
  for (uint32_t i = 0; i < n; i++)
    if (strcmp(a[i].name, b[i].name) || !attr_same(a[i].value, b[i].value))
      return fail("attribute differs", a[i].name);
  return true;
}

/* attr_equal, except that a dense literal equals its splat form. */
static bool attr_same(const hlo_attr *a, const hlo_attr *b) {
  if (!a || !b) return a == b;
  if (a->kind != b->kind) return false;
  switch (a->kind) {
  case ATTR_ARRAY:
    if (a->u.arr.n != b->u.arr.n) return false;
    for (uint32_t i = 0; i < a->u.arr.n; i++)
      if (!attr_same(a->u.arr.items[i], b->u.arr.items[i])) return false;
    return true;
  case ATTR_DICT:
    return a->u.dict.n == b->u.dict.n && named_same(a->u.dict.entries, b->u.dict.entries, a->u.dict.n);
  case ATTR_STRUCT:
    return !strcmp(a->u.st.name, b->u.st.name) && a->u.st.n == b->u.st.n &&
           named_same(a->u.st.fields, b->u.st.fields, a->u.st.n);
  case ATTR_DENSE: {
    if (!type_equal(a->u.dense.type, b->u.dense.type) ||
        a->u.dense.num_elems != b->u.dense.num_elems ||
        (a->u.dense.resource == NULL) != (b->u.dense.resource == NULL) ||
        (a->u.dense.resource && strcmp(a->u.dense.resource, b->u.dense.resource)))
      return false;
    size_t es = hlo_dtype_size(a->u.dense.type->dtype);
    for (int64_t i = 0; i < a->u.dense.num_elems; i++) {
      const uint8_t *x = a->u.dense.data + (a->u.dense.splat ? 0 : (size_t)i * es);
      const uint8_t *y = b->u.dense.data + (b->u.dense.splat ? 0 : (size_t)i * es);
      if (memcmp(x, y, es)) return false;
    }
    return true;
  }
  default: return attr_equal(a, b);
  }
}

static bool lists_same(const attr_list *a, const attr_list *b) {
  return a->n == b->n && named_same(a->items, b->items, a->n);
}

static bool block_same(const hlo_block *a, const hlo_block *b);

static bool op_same(const hlo_op *a, const hlo_op *b) {
  const char *n = op_name(a->opcode);
  if (a->opcode != b->opcode) return fail("opcode differs, expected", n);
  if (a->num_operands != b->num_operands || a->num_results != b->num_results ||
      a->num_regions != b->num_regions || a->num_attrs != b->num_attrs)
    return fail("operand/result/region/attribute count differs in", n);
  for (uint32_t i = 0; i < a->num_operands; i++)
    if (a->operands[i]->id != b->operands[i]->id) return fail("an operand differs in", n);
  for (uint32_t i = 0; i < a->num_results; i++)
    if (!type_equal(a->results[i].type, b->results[i].type))
      return fail("a result type differs in", n);
  for (uint32_t i = 0; i < a->num_attrs; i++) {
    const hlo_attr *o = op_attr(b, a->attrs[i].name);
    if (!o || !attr_same(a->attrs[i].value, o)) return fail("attribute differs", a->attrs[i].name);
  }
  if ((a->loc_text == NULL) != (b->loc_text == NULL) ||
      (a->loc_text && strcmp(a->loc_text, b->loc_text)))
    return fail("loc differs in", n);
  for (uint32_t r = 0; r < a->num_regions; r++)
    if (!block_same(&a->regions[r].block, &b->regions[r].block)) return false;
  return true;
}

static bool block_same(const hlo_block *a, const hlo_block *b) {
  if (a->num_args != b->num_args) return fail("block argument count differs", NULL);
  for (uint32_t i = 0; i < a->num_args; i++)
    if (!type_equal(a->args[i].type, b->args[i].type) || a->args[i].id != b->args[i].id)
      return fail("block argument differs", NULL);
  const hlo_op *x = a->first, *y = b->first;
  for (; x && y; x = x->next, y = y->next)
    if (!op_same(x, y)) return false;
  if (x || y) return fail("op count differs", NULL);
  return true;
}

/* True when the two modules are equal up to value names (and dense splat
 * spelling); numbers the values of both. */
static bool modules_same(hlo_module_ir *a, hlo_module_ir *b) {
  if ((a->name == NULL) != (b->name == NULL) || (a->name && strcmp(a->name, b->name)))
    return fail("module name differs", NULL);
  if (!lists_same(&a->attrs, &b->attrs) || a->num_aliases != b->num_aliases)
    return fail("module attributes differ", NULL);
  if (a->num_meshes != b->num_meshes) return fail("sdy.mesh count differs", NULL);
  for (uint32_t i = 0; i < a->num_meshes; i++) {
    const sdy_mesh_decl *x = &a->meshes[i], *y = &b->meshes[i];
    sdy_attr sx = {.kind = SDY_MESH, .mesh = x->mesh}, sy = {.kind = SDY_MESH, .mesh = y->mesh};
    hlo_attr ax = {.kind = ATTR_SDY, .u.sdy = &sx}, ay = {.kind = ATTR_SDY, .u.sdy = &sy};
    if (strcmp(x->name, y->name) || !attr_equal(&ax, &ay) || !lists_same(&x->attrs, &y->attrs))
      return fail("sdy.mesh differs", x->name);
  }
  if (a->num_resources != b->num_resources) return fail("resource count differs", NULL);
  for (uint32_t i = 0; i < a->num_resources; i++)
    if (strcmp(a->resources[i].key, b->resources[i].key) ||
        strcmp(a->resources[i].text, b->resources[i].text))
      return fail("resource differs", a->resources[i].key);
  hlo_func *f = a->funcs, *g = b->funcs;
  for (; f && g; f = f->next, g = g->next) {
    func_number_values(f);
    func_number_values(g);
    if (strcmp(f->name, g->name) || f->num_args != g->num_args ||
        f->num_results != g->num_results || (f->visibility == NULL) != (g->visibility == NULL) ||
        (f->visibility && strcmp(f->visibility, g->visibility)) || !lists_same(&f->attrs, &g->attrs))
      return fail("signature differs in", f->name);
    for (uint32_t i = 0; i < f->num_results; i++)
      if (!type_equal(f->result_types[i], g->result_types[i]) ||
          !lists_same(&f->result_attrs[i], &g->result_attrs[i]))
        return fail("a result differs in", f->name);
    for (uint32_t i = 0; i < f->num_args; i++)
      if (!lists_same(&f->arg_attrs[i], &g->arg_attrs[i]))
        return fail("an argument attribute differs in", f->name);
    if (!block_same(&f->body.block, &g->body.block)) return false;
  }
  if (f || g) return fail("function count differs", NULL);
  return true;
}

static hlo_module_ir *parse_text(const char *name, const char *text, size_t len, size_t begin,
                                 size_t end, hlo_status *err) {
  hlo_source src = {name, text, len, 1};
  return tl_parse_piece(&src, begin, end, err);
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

/* Forms the corpus has few or none of: loc aliases, per-axis quantization
 * with a storage range, tokens and tuples, special floats, f8, empty
 * literals, bounded dynamic types, discardable attributes on an op that
 * then prints generically, a function with no results. */
static const char edge_text[] =
    "#loc1 = loc(\"x.py\":1:2)\n"
    "module @m attributes {mhlo.num_partitions = 1 : i32, foo = [1, \"a\", 2.5 : f32], "
    "s = \"q\\\"b\\\\c\\0Ad\\09\"} {\n"
    "  func.func private @f(%a: tensor<2x!quant.uniform<i8<-127:127>:f32:0, "
    "{0.1:-30,0.5:-20}>>, %t: !stablehlo.token) -> (tuple<tensor<f32>, !stablehlo.token>) {\n"
    "    %c = stablehlo.constant dense<1.5> : tensor<f32> loc(#loc1)\n"
    "    %t2 = stablehlo.tuple %c, %t : tuple<tensor<f32>, !stablehlo.token>\n"
    "    %g = stablehlo.get_tuple_element %t2[0] : (tuple<tensor<f32>, !stablehlo.token>) -> "
    "tensor<f32>\n"
    "    %x = stablehlo.add %g, %g {mhlo.sharding = \"{replicated}\"} : tensor<f32>\n"
    "    %s = stablehlo.constant dense<[0x7FC00000, -0.0, 1.0e-45, 3.4028235e38]> : "
    "tensor<4xf32>\n"
    "    %h = stablehlo.constant dense<[1.0, 2.0, 3.0]> : tensor<3xf8E4M3FN>\n"
    "    %e = stablehlo.constant dense<> : tensor<0x3xi4>\n"
    "    return %t2 : tuple<tensor<f32>, !stablehlo.token>\n"
    "  }\n"
    "  func.func @g(%a: tensor<?xi32, #stablehlo.bounds<4>>) {\n"
    "    return\n"
    "  }\n"
    "}\n";

TEST(edge_cases) {
  size_t len = sizeof edge_text - 1;
  hlo_status err = NULL;
  hlo_module_ir *m1 = parse_text("edge.mlir", edge_text, len, 0, len, &err);
  if (err) hlo_status_print(err, stderr);
  CHECK(err == NULL);
  hlo_status_free(err);
  if (!m1) return;
  char *t1 = module_print(m1);
  CHECK(t1 != NULL);
  if (!t1) { module_free(m1); return; }
  CHECK(strstr(t1, "#loc1 = loc(\"x.py\":1:2)\nmodule @m attributes {mhlo.num_partitions = 1 : "
                   "i32, foo = [1 : i64, \"a\", 2.500000e+00 : f32], s = \"q\\\"b\\\\c\\0Ad\\09\"} "
                   "{\n"));
  CHECK(strstr(t1, "%arg0: tensor<2x!quant.uniform<i8<-127:127>:f32:0, {0.1:-30,0.5:-20}>>"));
  CHECK(strstr(t1, "%cst = stablehlo.constant dense<1.500000e+00> : tensor<f32> loc(#loc1)\n"));
  CHECK(strstr(t1, "\"stablehlo.add\"(%1, %1) {mhlo.sharding = \"{replicated}\"} : "
                   "(tensor<f32>, tensor<f32>) -> tensor<f32>\n"));
  CHECK(strstr(t1, "dense<[0x7FC00000, -0.000000e+00, 1.401300e-45, 3.40282347E+38]>"));
  CHECK(strstr(t1, "dense<[1.000000e+00, 2.000000e+00, 3.000000e+00]> : tensor<3xf8E4M3FN>"));
  CHECK(strstr(t1, "dense<> : tensor<0x3xi4>"));
  CHECK(strstr(t1, "  func.func @g(%arg0: tensor<?xi32, #stablehlo.bounds<4>>) {\n    return\n"));
  hlo_module_ir *m2 = parse_text("<printed>", t1, strlen(t1), 0, strlen(t1), &err);
  if (err) hlo_status_print(err, stderr);
  CHECK(err == NULL);
  hlo_status_free(err);
  if (m2) {
    char *t2 = module_print(m2);
    CHECK_STR(t2, t1);
    CHECK(modules_same(m1, m2));
    free(t2);
  }
  free(t1);
  module_free(m1);
  module_free(m2);
}

/* MLIR's SSANameState numbering, spelled out by hand: a region's own values
 * first, then nested regions from the state after the enclosing region
 * (siblings reuse %2, %c_2 ...); `_N` suffixes from one counter shared by
 * all names; %iterArg for while arguments; float literals as
 * printFloatValue spells them. Printing must give the text back exactly. */
static const char names_text[] =
    "module @m {\n"
    "  func.func public @main(%arg0: tensor<i32>, %arg1: tensor<4xf32>) -> (tensor<f32>, tensor<i32>, tensor<i32>) {\n"
    "    %c = stablehlo.constant dense<0> : tensor<i32>\n"
    "    %cst = stablehlo.constant dense<0.000000e+00> : tensor<f32>\n"
    "    %0 = stablehlo.reduce(%arg1 init: %cst) across dimensions = [0] : (tensor<4xf32>, tensor<f32>) -> tensor<f32>\n"
    "     reducer(%arg2: tensor<f32>, %arg3: tensor<f32>)  {\n"
    "      %cst_1 = stablehlo.constant dense<0.797884583> : tensor<f32>\n"
    "      %2 = stablehlo.add %arg2, %arg3 : tensor<f32>\n"
    "      %3 = stablehlo.multiply %2, %cst_1 : tensor<f32>\n"
    "      stablehlo.return %3 : tensor<f32>\n"
    "    }\n"
    "    %1:2 = stablehlo.while(%iterArg = %arg0, %iterArg_1 = %c) : tensor<i32>, tensor<i32>\n"
    "    cond {\n"
    "      %c_2 = stablehlo.constant dense<10> : tensor<i32>\n"
    "      %2 = stablehlo.compare LT, %iterArg, %c_2 : (tensor<i32>, tensor<i32>) -> tensor<i1>\n"
    "      stablehlo.return %2 : tensor<i1>\n"
    "    } do {\n"
    "      %c_2 = stablehlo.constant dense<1> : tensor<i32>\n"
    "      %2 = stablehlo.add %iterArg, %c_2 : tensor<i32>\n"
    "      %3 = \"stablehlo.case\"(%iterArg_1) ({\n"
    "        %c_3 = stablehlo.constant dense<3> : tensor<i32>\n"
    "        %4 = stablehlo.add %2, %c_3 : tensor<i32>\n"
    "        stablehlo.return %4 : tensor<i32>\n"
    "      }, {\n"
    "        %c_3 = stablehlo.constant dense<4> : tensor<i32>\n"
    "        %4 = stablehlo.negate %c_3 : tensor<i32>\n"
    "        %5 = stablehlo.add %4, %c : tensor<i32>\n"
    "        stablehlo.return %5 : tensor<i32>\n"
    "      }) : (tensor<i32>) -> tensor<i32>\n"
    "      stablehlo.return %2, %3 : tensor<i32>, tensor<i32>\n"
    "    }\n"
    "    %cst_0 = stablehlo.constant dense<9.99999974E-6> : tensor<f32>\n"
    "    return %0, %1#0, %1#1 : tensor<f32>, tensor<i32>, tensor<i32>\n"
    "  }\n"
    "}\n";

TEST(jax_value_names) {
  size_t len = sizeof names_text - 1;
  hlo_status err = NULL;
  hlo_module_ir *m = parse_text("names.mlir", names_text, len, 0, len, &err);
  if (err) hlo_status_print(err, stderr);
  CHECK(err == NULL);
  hlo_status_free(err);
  if (!m) return;
  char *t = module_print(m);
  CHECK_STR(t, names_text);
  free(t);
  module_free(m);
}

/* The model files (JAX output) that `hlo print` reproduces byte for byte,
 * relative to $HLO_SHARED/models. */
static const char *const identical_models[] = {
    "cnn_sgd_step/cnn_sgd_step.mlir",
    "cond_switch/cond_switch.mlir",
    "embed_grad/embed_grad.mlir",
    "group_norm_convT/group_norm_convT.mlir",
    "linalg_ops/linalg_ops.cpu.mlir",
    "linalg_ops/linalg_ops.mlir",
    "llama_block_bf16/llama_block_bf16.mlir",
    "llama_block_f32/llama_block_f32.mlir",
    "lstm_scan/lstm_scan.mlir",
    "mlp_block_bf16/mlp_block_bf16.mlir",
    "mlp_block_f32/mlp_block_f32.mlir",
    "moe_layer/moe_layer.mlir",
    "naive_attention_f32/naive_attention_f32.mlir",
    "random_normal/random_normal.cpu.mlir",
    "random_normal/random_normal.mlir",
    "softmax_xent/softmax_xent.mlir",
    "sort_topk/sort_topk.cpu.mlir",
    "sort_topk/sort_topk.mlir",
    "tiny_llama_train_step/tiny_llama_train_step.mlir",
    "while_collatz/while_collatz.mlir",
};

static bool is_identical_model(const char *rel) {
  for (size_t i = 0; i < sizeof identical_models / sizeof identical_models[0]; i++)
    if (!strcmp(rel, identical_models[i])) return true;
  return false;
}

TEST(model_files_byte_identical) {
  char dir[4096];
  snprintf(dir, sizeof dir, "%s/models", tl_shared_dir());
  tl_paths ps = {0};
  CHECK(tl_list_mlir(dir, true, NULL, NULL, &ps));
  if (!ps.n) {
    printf("SKIPPED model_files_byte_identical: no .mlir files under %s (set HLO_SHARED)\n", dir);
    return;
  }
  tl_paths_sort(&ps);
  size_t same = 0, listed_seen = 0, dlen = strlen(dir);
  for (size_t i = 0; i < ps.n; i++) {
    const char *rel = ps.v[i] + dlen + 1;
    bool listed = is_identical_model(rel);
    if (listed) listed_seen++;
    size_t len = 0;
    char *text = tl_read_file(ps.v[i], &len);
    CHECK(text != NULL);
    if (!text) continue;
    hlo_status err = NULL;
    hlo_module_ir *m = parse_text(ps.v[i], text, len, 0, len, &err);
    if (err) hlo_status_print(err, stderr);
    hlo_status_free(err);
    char *t = m ? module_print(m) : NULL;
    bool eq = t && !strcmp(t, text);
    if (eq) same++;
    if (listed && !eq) {
      fprintf(stderr, "  %s: printed text differs from the file\n", rel);
      if (t) diff_hint(t, text);
    }
    if (listed) CHECK(eq);
    free(t);
    module_free(m);
    free(text);
  }
  printf("%zu of %zu model files byte-identical\n", same, ps.n);
  CHECK_EQ_INT(listed_seen, sizeof identical_models / sizeof identical_models[0]);
  tl_paths_free(&ps);
}

TEST(corpus_roundtrip) {
  const char *root = tl_shared_dir();
  tl_paths ps = {0};
  char dir[4096];
  snprintf(dir, sizeof dir, "%s/conformance", root);
  CHECK(tl_list_mlir(dir, true, NULL, NULL, &ps));
  snprintf(dir, sizeof dir, "%s/models", root);
  CHECK(tl_list_mlir(dir, true, NULL, NULL, &ps));
  if (!ps.n) {
    printf("SKIPPED corpus_roundtrip: no .mlir files under %s (set HLO_SHARED)\n", root);
    return;
  }
  tl_paths_sort(&ps);
  size_t files_ok = 0, files_tested = 0, orig_fail = 0, reparse_fail = 0, mismatch = 0;
  size_t differ = 0;
  size_t pieces = 0, shown = 0;
  for (size_t i = 0; i < ps.n; i++) {
    tl_file tf;
    hlo_status st = tl_file_read(ps.v[i], &tf);
    if (st) { hlo_status_free(st); continue; }
    st = tl_file_split(&tf);
    CHECK(st == NULL);
    if (st) { hlo_status_free(st); tl_file_free(&tf); continue; }
    split_piece *pc = tf.pieces;
    size_t np = tf.num_pieces;
    bool file_ok = true, file_tested = false;
    for (size_t k = 0; k < np; k++) {
      hlo_status err = NULL;
      hlo_module_ir *m1 = tl_parse_piece(&tf.src, pc[k].begin, pc[k].end, &err);
      if (err) { orig_fail++; hlo_status_free(err); file_ok = false; continue; }
      file_tested = true;
      pieces++;
      char *t1 = module_print(m1), *t2 = NULL;
      CHECK(t1 != NULL);
      if (!t1) { module_free(m1); file_ok = false; continue; }
      hlo_module_ir *m2 = parse_text("<printed>", t1, strlen(t1), 0, strlen(t1), &err);
      if (err) {
        reparse_fail++;
        file_ok = false;
        if (shown++ < 8) {
          fprintf(stderr, "  %s piece %zu: the printed text does not parse:\n    ", ps.v[i], k);
          hlo_status_print(err, stderr);
        }
        hlo_status_free(err);
      } else {
        t2 = module_print(m2);
        if (!t2 || strcmp(t1, t2)) {
          mismatch++;
          file_ok = false;
          if (shown++ < 8) {
            fprintf(stderr, "  %s piece %zu: printing is not idempotent\n", ps.v[i], k);
            if (t2) diff_hint(t1, t2);
          }
        } else if (!modules_same(m1, m2)) {
          differ++;
          file_ok = false;
          if (shown++ < 8)
            fprintf(stderr, "  %s piece %zu: the printed module differs from the parsed one: %s\n",
                    ps.v[i], k, why);
        }
      }
      module_free(m1);
      module_free(m2);
      free(t1);
      free(t2);
    }
    if (file_tested) files_tested++;
    if (file_ok) files_ok++;
    tl_file_free(&tf);
  }
  printf("round-tripped %zu of %zu files (%zu pieces); original text not parsed: %zu pieces; "
         "printed text not parsed: %zu; not idempotent: %zu; printed module differs: %zu\n",
         files_ok, ps.n, pieces, orig_fail, reparse_fail, mismatch, differ);
  CHECK(files_tested > 0);
  CHECK_EQ_INT(reparse_fail, 0);
  CHECK_EQ_INT(mismatch, 0);
  CHECK_EQ_INT(differ, 0);
  tl_paths_free(&ps);
}

/* tests/jax/sharding and tests/jax/resources: what JAX / MLIR printed comes
 * back byte for byte (sdy_syntax is hand-written, so only its round trip is
 * checked), and the reparsed module equals the first. */
static void fixture_roundtrip(const char *path, void *ctx) {
  int *n = ctx;
  if (!strstr(path, "program.mlir")) return;
  size_t len;
  char *text = tl_read_file(path, &len);
  CHECK(text != NULL);
  if (!text) return;
  hlo_status err = NULL;
  hlo_module_ir *m1 = parse_text(path, text, len, 0, len, &err);
  if (err) hlo_status_print(err, stderr);
  CHECK(m1 != NULL);
  hlo_status_free(err);
  char *t1 = m1 ? module_print(m1) : NULL;
  hlo_module_ir *m2 = t1 ? parse_text("<printed>", t1, strlen(t1), 0, strlen(t1), &err) : NULL;
  hlo_status_free(err);
  CHECK(m2 != NULL);
  char *t2 = m2 ? module_print(m2) : NULL;
  CHECK(t1 && t2 && strcmp(t1, t2) == 0);
  if (m1 && m2 && !modules_same(m1, m2)) {
    fprintf(stderr, "%s: %s\n", path, why);
    CHECK(0);
  }
  if (t1 && !strstr(path, "sdy_syntax") && strcmp(t1, text) != 0) {
    fprintf(stderr, "%s: not printed back byte for byte\n", path);
    diff_hint(text, t1);
    CHECK(0);
  }
  (*n)++;
  free(t1);
  free(t2);
  module_free(m1);
  module_free(m2);
  free(text);
}

TEST(sharding_and_resource_fixtures) {
  int n = 0;
  tl_for_each_mlir("tests/jax/sharding", true, fixture_roundtrip, &n);
  tl_for_each_mlir("tests/jax/resources", true, fixture_roundtrip, &n);
  printf("sharding/resource fixtures: %d\n", n);
  CHECK(n >= 10);
}

TEST_MAIN()
