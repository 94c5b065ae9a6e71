/* test_print.c — the printer on IR built by hand: types, attributes, dense
 * literals, float spelling, value naming, pretty and generic op forms. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "ir/ir.h"
#include "ir/print.h"
#include "support/float.h"
#include "test.h"

static hlo_loc noloc(void) {
  hlo_loc l = {NULL, 0, 0};
  return l;
}

static char *attr_text(const hlo_attr *a) {
  strbuf b;
  sb_init(&b);
  print_attr(&b, a);
  return sb_take(&b);
}

static char *type_text(const hlo_type *t) {
  strbuf b;
  sb_init(&b);
  print_type(&b, t);
  return sb_take(&b);
}

/* A module with `func.func public @main(args) -> results` and an empty body. */
static hlo_func *new_func(hlo_module_ir *m, const char *name, hlo_type *const *args,
                          uint32_t nargs, hlo_type *const *res, uint32_t nres) {
  hlo_func *f = arena_calloc(&m->arena, 1, sizeof *f);
  f->name = name;
  f->visibility = "public";
  f->num_args = nargs;
  f->num_results = nres;
  f->result_types = arena_calloc(&m->arena, nres ? nres : 1, sizeof *f->result_types);
  for (uint32_t i = 0; i < nres; i++) f->result_types[i] = res[i];
  f->arg_attrs = arena_calloc(&m->arena, nargs ? nargs : 1, sizeof *f->arg_attrs);
  f->result_attrs = arena_calloc(&m->arena, nres ? nres : 1, sizeof *f->result_attrs);
  hlo_status st = block_set_args(m, &f->body.block, args, nargs);
  CHECK(st == NULL);
  if (!m->funcs) m->funcs = f;
  else m->funcs_tail->next = f;
  m->funcs_tail = f;
  m->num_funcs++;
  return f;
}

static hlo_op *add_op(hlo_module_ir *m, hlo_block *b, hlo_opcode c, hlo_value *const *ops,
                      uint32_t nops, hlo_type *const *res, uint32_t nres, uint32_t nreg) {
  hlo_op *op = op_create(m, c, ops, nops, res, nres, nreg, noloc());
  CHECK(op != NULL);
  block_append(b, op);
  return op;
}

TEST(types) {
  hlo_module_ir *m = module_new();
  int64_t d[3] = {2, HLO_DYN, 3};
  char *s = type_text(type_tensor(&m->arena, HLO_F32, 3, d));
  CHECK_STR(s, "tensor<2x?x3xf32>");
  free(s);
  s = type_text(type_tensor(&m->arena, HLO_C64, 0, NULL));
  CHECK_STR(s, "tensor<complex<f32>>");
  free(s);
  hlo_type *el[2] = {type_tensor(&m->arena, HLO_I1, 1, d), type_token(&m->arena)};
  s = type_text(type_tuple(&m->arena, 2, el));
  CHECK_STR(s, "tuple<tensor<2xi1>, !stablehlo.token>");
  free(s);
  /* quantized element type, per tensor and per axis */
  quant_params q = {HLO_I8, HLO_F32, -128, 127, false, -1, 1, NULL, NULL};
  double sc = 0.5;
  int64_t zp = -3;
  q.scales = &sc;
  q.zero_points = &zp;
  hlo_type *qt = type_tensor(&m->arena, HLO_I8, 1, d);
  qt->quant = &q;
  s = type_text(qt);
  CHECK_STR(s, "tensor<2x!quant.uniform<i8:f32, 0.5:-3>>");
  free(s);
  double sc2[2] = {0.1, 0.5};
  int64_t zp2[2] = {-30, 0};
  quant_params q2 = {HLO_UI8, HLO_F32, 0, 255, false, 0, 2, sc2, zp2};
  qt->quant = &q2;
  s = type_text(qt);
  CHECK_STR(s, "tensor<2x!quant.uniform<u8:f32:0, {0.1:-30,0.5}>>");
  free(s);
  module_free(m);
}

TEST(scalar_attrs) {
  hlo_module_ir *m = module_new();
  arena *a = &m->arena;
  char *s = attr_text(attr_int(a, 1, HLO_I32));
  CHECK_STR(s, "1 : i32");
  free(s);
  s = attr_text(attr_float(a, 1.5, HLO_F32));
  CHECK_STR(s, "1.500000e+00 : f32");
  free(s);
  s = attr_text(attr_string(a, "a\"b\n", 4));
  CHECK_STR(s, "\"a\\\"b\\0A\"");
  free(s);
  int64_t v[3] = {1, 0, 2};
  s = attr_text(attr_dense_array_i64(a, v, 3));
  CHECK_STR(s, "array<i64: 1, 0, 2>");
  free(s);
  s = attr_text(attr_dense_array_i64(a, v, 0));
  CHECK_STR(s, "array<i64>");
  free(s);
  s = attr_text(attr_enum(a, "stablehlo", "comparison_direction", "LT"));
  CHECK_STR(s, "#stablehlo<comparison_direction LT>");
  free(s);
  s = attr_text(attr_symbol(a, "foo"));
  CHECK_STR(s, "@foo");
  free(s);
  module_free(m);
}

TEST(struct_attrs) {
  hlo_module_ir *m = module_new();
  arena *a = &m->arena;
  int64_t one = 1, zero = 0;
  named_attr f[2] = {{"lhs_contracting_dimensions", attr_dense_array_i64(a, &one, 1)},
                     {"rhs_contracting_dimensions", attr_dense_array_i64(a, &zero, 1)}};
  hlo_attr st = {.kind = ATTR_STRUCT};
  st.u.st.name = "stablehlo.dot";
  st.u.st.n = 2;
  st.u.st.fields = f;
  char *s = attr_text(&st);
  CHECK_STR(s, "#stablehlo.dot<lhs_contracting_dimensions = [1], rhs_contracting_dimensions = [0]>");
  free(s);
  /* conv dimension numbers: NHWC x HWIO -> NHWC */
  int64_t sp[2] = {1, 2}, ksp[2] = {0, 1};
  named_attr cf[9] = {
      {"input_batch_dimension", attr_int(a, 0, HLO_I64)},
      {"input_feature_dimension", attr_int(a, 3, HLO_I64)},
      {"input_spatial_dimensions", attr_dense_array_i64(a, sp, 2)},
      {"kernel_input_feature_dimension", attr_int(a, 2, HLO_I64)},
      {"kernel_output_feature_dimension", attr_int(a, 3, HLO_I64)},
      {"kernel_spatial_dimensions", attr_dense_array_i64(a, ksp, 2)},
      {"output_batch_dimension", attr_int(a, 0, HLO_I64)},
      {"output_feature_dimension", attr_int(a, 3, HLO_I64)},
      {"output_spatial_dimensions", attr_dense_array_i64(a, sp, 2)},
  };
  st.u.st.name = "stablehlo.conv";
  st.u.st.n = 9;
  st.u.st.fields = cf;
  s = attr_text(&st);
  CHECK_STR(s, "#stablehlo.conv<[b, 0, 1, f]x[0, 1, i, o]->[b, 0, 1, f]>");
  free(s);
  module_free(m);
}

TEST(dense_literals) {
  hlo_module_ir *m = module_new();
  arena *a = &m->arena;
  int64_t d2[2] = {2, 2};
  hlo_type *t = type_tensor(a, HLO_I32, 2, d2);
  int32_t iv[4] = {1, -2, 3, 4};
  char *s = attr_text(attr_dense(a, t, iv, sizeof iv, false));
  CHECK_STR(s, "dense<[[1, -2], [3, 4]]> : tensor<2x2xi32>");
  free(s);
  /* all equal elements print as a splat */
  int32_t same[4] = {7, 7, 7, 7};
  s = attr_text(attr_dense(a, t, same, sizeof same, false));
  CHECK_STR(s, "dense<7> : tensor<2x2xi32>");
  free(s);
  float f1 = 1.0f;
  hlo_type *tf = type_tensor(a, HLO_F32, 2, d2);
  s = attr_text(attr_dense(a, tf, &f1, 4, true));
  CHECK_STR(s, "dense<1.000000e+00> : tensor<2x2xf32>");
  free(s);
  /* NaN and inf as hex bit patterns; a float needing 9 digits */
  float fv[4] = {0.1f, -0.0f, 3.40282347e+38f, 0};
  uint32_t nan = 0x7FC00000u;
  memcpy(&fv[3], &nan, 4);
  s = attr_text(attr_dense(a, tf, fv, sizeof fv, false));
  CHECK_STR(s, "dense<[[1.000000e-01, -0.000000e+00], [3.40282347E+38, 0x7FC00000]]> : "
               "tensor<2x2xf32>");
  free(s);
  /* bf16 0.1 needs no more than %.6e */
  uint16_t bf[2] = {f32_to_bf16(0.1f), 0xFF80};
  int64_t d1 = 2;
  s = attr_text(attr_dense(a, type_tensor(a, HLO_BF16, 1, &d1), bf, sizeof bf, false));
  CHECK_STR(s, "dense<[1.000980e-01, 0xFF80]> : tensor<2xbf16>");
  free(s);
  /* bools and complex */
  uint8_t bv[2] = {1, 0};
  s = attr_text(attr_dense(a, type_tensor(a, HLO_I1, 1, &d1), bv, 2, false));
  CHECK_STR(s, "dense<[true, false]> : tensor<2xi1>");
  free(s);
  float cv[4] = {1, 2, 3, 4};
  s = attr_text(attr_dense(a, type_tensor(a, HLO_C64, 1, &d1), cv, sizeof cv, false));
  CHECK_STR(s, "dense<[(1.000000e+00,2.000000e+00), (3.000000e+00,4.000000e+00)]> : "
               "tensor<2xcomplex<f32>>");
  free(s);
  /* unsigned 64-bit */
  uint64_t uv[2] = {UINT64_MAX, 1};
  s = attr_text(attr_dense(a, type_tensor(a, HLO_UI64, 1, &d1), uv, sizeof uv, false));
  CHECK_STR(s, "dense<[18446744073709551615, 1]> : tensor<2xui64>");
  free(s);
  /* large: hex blob */
  int64_t d200 = 101;
  uint8_t big[101];
  for (int i = 0; i < 101; i++) big[i] = (uint8_t)i;
  s = attr_text(attr_dense(a, type_tensor(a, HLO_I8, 1, &d200), big, sizeof big, false));
  CHECK(s && !strncmp(s, "dense<\"0x000102030405", 21));
  CHECK(s && strstr(s, "6364\"> : tensor<101xi8>"));
  free(s);
  /* empty */
  int64_t d0 = 0;
  s = attr_text(attr_dense(a, type_tensor(a, HLO_F32, 1, &d0), NULL, 0, false));
  CHECK_STR(s, "dense<> : tensor<0xf32>");
  free(s);
  module_free(m);
}

/* A module using pretty forms, a compact reduce and a generic sort; *out_cmp
 * is its compare op. */
static hlo_module_ir *sample_module(hlo_op **out_cmp) {
  hlo_module_ir *m = module_new();
  arena *a = &m->arena;
  m->name = "jit_f";
  hlo_type *s32 = type_tensor(a, HLO_F32, 0, NULL);
  int64_t d4 = 4;
  hlo_type *v4 = type_tensor(a, HLO_F32, 1, &d4);
  hlo_type *args[2] = {v4, v4};
  hlo_func *f = new_func(m, "main", args, 2, &v4, 1);
  hlo_block *b = &f->body.block;
  hlo_value *x = &b->args[0], *y = &b->args[1];
  hlo_value *xy[2] = {x, y};
  hlo_op *add = add_op(m, b, OP_ADD, xy, 2, &v4, 1, 0);
  float one = 1.0f;
  hlo_op *cst = add_op(m, b, OP_CONSTANT, NULL, 0, &s32, 1, 0);
  CHECK(op_set_attr(m, cst, "value", attr_dense(a, s32, &one, 4, true)) == NULL);
  hlo_value *cv = &cst->results[0];
  hlo_op *bc = add_op(m, b, OP_BROADCAST_IN_DIM, &cv, 1, &v4, 1, 0);
  CHECK(op_set_attr(m, bc, "broadcast_dimensions", attr_dense_array_i64(a, NULL, 0)) == NULL);
  hlo_value *ab[2] = {&add->results[0], &bc->results[0]};
  hlo_type *i1 = type_tensor(a, HLO_I1, 1, &d4);
  hlo_op *cmp = add_op(m, b, OP_COMPARE, ab, 2, &i1, 1, 0);
  CHECK(op_set_attr(m, cmp, "comparison_direction",
                    attr_enum(a, "stablehlo", "comparison_direction", "LT")) == NULL);
  CHECK(op_set_attr(m, cmp, "compare_type",
                    attr_enum(a, "stablehlo", "comparison_type", "FLOAT")) == NULL);
  /* reduce with an add body: the compact form */
  hlo_value *ri[2] = {&add->results[0], cv};
  hlo_op *red = add_op(m, b, OP_REDUCE, ri, 2, &s32, 1, 1);
  int64_t zero = 0;
  CHECK(op_set_attr(m, red, "dimensions", attr_dense_array_i64(a, &zero, 1)) == NULL);
  hlo_block *rb = &red->regions[0].block;
  hlo_type *ss[2] = {s32, s32};
  CHECK(block_set_args(m, rb, ss, 2) == NULL);
  hlo_value *rargs[2] = {&rb->args[0], &rb->args[1]};
  hlo_op *radd = add_op(m, rb, OP_ADD, rargs, 2, &s32, 1, 0);
  hlo_value *rr = &radd->results[0];
  add_op(m, rb, OP_RETURN, &rr, 1, NULL, 0, 0);
  /* sort: generic form with a region and an inherent attribute */
  hlo_op *sort = add_op(m, b, OP_SORT, &x, 1, &v4, 1, 1);
  CHECK(op_set_attr(m, sort, "dimension", attr_int(a, 0, HLO_I64)) == NULL);
  CHECK(op_set_attr(m, sort, "mhlo.note", attr_string(a, "n", 1)) == NULL);
  hlo_block *sb = &sort->regions[0].block;
  CHECK(block_set_args(m, sb, ss, 2) == NULL);
  hlo_value *sargs[2] = {&sb->args[0], &sb->args[1]};
  hlo_type *b1 = type_tensor(a, HLO_I1, 0, NULL);
  hlo_op *scmp = add_op(m, sb, OP_COMPARE, sargs, 2, &b1, 1, 0);
  CHECK(op_set_attr(m, scmp, "comparison_direction",
                    attr_enum(a, "stablehlo", "comparison_direction", "GT")) == NULL);
  hlo_value *sr = &scmp->results[0];
  add_op(m, sb, OP_RETURN, &sr, 1, NULL, 0, 0);
  hlo_value *out = &sort->results[0];
  add_op(m, b, OP_FUNC_RETURN, &out, 1, NULL, 0, 0);
  f->result_attrs[0].n = 1;
  f->result_attrs[0].items = arena_calloc(a, 1, sizeof(named_attr));
  f->result_attrs[0].items[0].name = "jax.result_info";
  f->result_attrs[0].items[0].value = attr_string(a, "", 0);

  *out_cmp = cmp;
  return m;
}

TEST(module_pretty_and_generic) {
  hlo_op *cmp = NULL;
  hlo_module_ir *m = sample_module(&cmp);
  char *s = module_print(m);
  CHECK(s != NULL);
  /* the compact reduce prints (and numbers) nothing of its body */
  CHECK(s && strstr(s, "module @jit_f {\n"));
  CHECK(s && strstr(s, "    %0 = stablehlo.add %arg0, %arg1 : tensor<4xf32>\n"));
  CHECK(s && strstr(s, "    %cst = stablehlo.constant dense<1.000000e+00> : tensor<f32>\n"));
  CHECK(s && strstr(s, "    %1 = stablehlo.broadcast_in_dim %cst, dims = [] : (tensor<f32>) -> "
                       "tensor<4xf32>\n"));
  CHECK(s && strstr(s, "    %2 = stablehlo.compare LT, %0, %1, FLOAT : (tensor<4xf32>, "
                       "tensor<4xf32>) -> tensor<4xi1>\n"));
  CHECK(s && strstr(s, "    %3 = stablehlo.reduce(%0 init: %cst) applies stablehlo.add across "
                       "dimensions = [0] : (tensor<4xf32>, tensor<f32>) -> tensor<f32>\n"));
  CHECK(s && strstr(s, "\"stablehlo.sort\"(%arg0) <{dimension = 0 : i64}> ({\n"
                       "    ^bb0(%arg2: tensor<f32>, %arg3: tensor<f32>):\n"
                       "      %5 = stablehlo.compare GT, %arg2, %arg3 : (tensor<f32>, "
                       "tensor<f32>) -> tensor<i1>\n"
                       "      stablehlo.return %5 : tensor<i1>\n"
                       "    }) {mhlo.note = \"n\"} : (tensor<4xf32>) -> tensor<4xf32>\n"));
  CHECK(s && strstr(s, "    %4 = \"stablehlo.sort\""));
  CHECK(s && strstr(s, "    return %4 : tensor<4xf32>\n  }\n}\n"));
  CHECK(s && strstr(s, "-> (tensor<4xf32> {jax.result_info = \"\"}) {\n"));
  free(s);

  /* op_print: one op on its own */
  s = op_print(cmp);
  CHECK(s && strstr(s, "stablehlo.compare LT, "));
  free(s);
  module_free(m);
}

TEST(out_of_memory) {
  hlo_op *cmp = NULL;
  hlo_module_ir *m = sample_module(&cmp);
  char *full = module_print(m);
  CHECK(full != NULL);
  int nulls = 0;
  for (long n = 1; n < 64 && full; n++) {
    hlo_fail_alloc_after = n;
    char *s = module_print(m);
    hlo_fail_alloc_after = 0;
    /* either a clean failure or the complete text, never a truncated one */
    if (!s) nulls++;
    else CHECK_STR(s, full);
    free(s);
  }
  CHECK(nulls > 0);
  free(full);
  module_free(m);
}

TEST(while_and_multi_results) {
  hlo_module_ir *m = module_new();
  arena *a = &m->arena;
  hlo_type *i32 = type_tensor(a, HLO_I32, 0, NULL);
  hlo_type *two[2] = {i32, i32};
  hlo_func *f = new_func(m, "main", two, 2, two, 2);
  hlo_block *b = &f->body.block;
  hlo_value *args[2] = {&b->args[0], &b->args[1]};
  hlo_op *w = add_op(m, b, OP_WHILE, args, 2, two, 2, 2);
  for (int r = 0; r < 2; r++) CHECK(block_set_args(m, &w->regions[r].block, two, 2) == NULL);
  hlo_block *cb = &w->regions[0].block, *db = &w->regions[1].block;
  hlo_value *cargs[2] = {&cb->args[0], &cb->args[1]};
  hlo_type *i1 = type_tensor(a, HLO_I1, 0, NULL);
  hlo_op *lt = add_op(m, cb, OP_COMPARE, cargs, 2, &i1, 1, 0);
  CHECK(op_set_attr(m, lt, "comparison_direction",
                    attr_enum(a, "stablehlo", "comparison_direction", "LT")) == NULL);
  hlo_value *ltv = &lt->results[0];
  add_op(m, cb, OP_RETURN, &ltv, 1, NULL, 0, 0);
  hlo_value *dargs[2] = {&db->args[0], &db->args[1]};
  add_op(m, db, OP_RETURN, dargs, 2, NULL, 0, 0);
  hlo_value *res[2] = {&w->results[1], &w->results[0]};
  add_op(m, b, OP_FUNC_RETURN, res, 2, NULL, 0, 0);
  char *s = module_print(m);
  CHECK(s && strstr(s, "    %0:2 = stablehlo.while(%iterArg = %arg0, %iterArg_0 = %arg1) : "
                       "tensor<i32>, tensor<i32>\n"
                       "    cond {\n"
                       "      %1 = stablehlo.compare LT, %iterArg, %iterArg_0 : (tensor<i32>, "
                       "tensor<i32>) -> tensor<i1>\n"
                       "      stablehlo.return %1 : tensor<i1>\n"
                       "    } do {\n"
                       "      stablehlo.return %iterArg, %iterArg_0 : tensor<i32>, tensor<i32>\n"
                       "    }\n"
                       "    return %0#1, %0#0 : tensor<i32>, tensor<i32>\n"));
  CHECK(s && strstr(s, "-> (tensor<i32>, tensor<i32>) {\n"));
  free(s);
  module_free(m);
}

/* The spelling of `bits` of type t, as print_float_bits writes it. */
static bool float_is(hlo_dtype t, uint64_t bits, const char *want) {
  strbuf b;
  sb_init(&b);
  print_float_bits(&b, t, bits);
  char *s = sb_take(&b);
  bool ok = s && !strcmp(s, want);
  if (!ok) fprintf(stderr, "  float 0x%llx: got %s, want %s\n", (unsigned long long)bits,
                   s ? s : "(null)", want);
  free(s);
  return ok;
}

/* MLIR's printFloatValue: APFloat::toString with 6 digits when it parses
 * back, else APFloat's default toString (values from JAX output and LLVM's
 * APFloat), else hex. */
TEST(float_spelling) {
  CHECK(float_is(HLO_F32, 0x3F800000u, "1.000000e+00"));
  CHECK(float_is(HLO_F32, 0x00000000u, "0.000000e+00"));
  CHECK(float_is(HLO_F32, 0x80000000u, "-0.000000e+00"));
  CHECK(float_is(HLO_F32, 0x3EA0A0A1u, "0.313725501"));        /* 80/255 */
  CHECK(float_is(HLO_F32, 0x3F4C422Au, "0.797884583"));        /* sqrt(2/pi) */
  CHECK(float_is(HLO_F32, 0x3727C5ACu, "9.99999974E-6"));      /* 1e-5 */
  CHECK(float_is(HLO_F32, 0x358637BDu, "9.99999997E-7"));      /* 1e-6 */
  CHECK(float_is(HLO_F32, 0xBF7FFFFFu, "-0.99999994"));
  CHECK(float_is(HLO_F32, 0x3FB504F3u, "1.41421354"));
  CHECK(float_is(HLO_F32, 0x7F7FFFFFu, "3.40282347E+38"));
  CHECK(float_is(HLO_F32, 0x00000001u, "1.401300e-45"));
  CHECK(float_is(HLO_F32, 0x4996B438u, "0x4996B438"));         /* 1234567: no '.' */
  CHECK(float_is(HLO_F32, 0x7F800000u, "0x7F800000"));
  CHECK(float_is(HLO_F64, 0x3FB999999999999Aull, "1.000000e-01"));
  CHECK(float_is(HLO_F64, 0x3FD5555555555555ull, "0.33333333333333331"));
  CHECK(float_is(HLO_F16, 0x3555u, "3.332520e-01"));
  CHECK(float_is(HLO_BF16, 0x3EABu, "3.339840e-01"));
}

/* Shardy attributes print in Shardy's own syntax from the structured form. */
TEST(sdy_attrs) {
  const char *names[2] = {"x", "y"};
  int64_t sizes[2] = {4, 1}, ids[4] = {0, 2, 1, 3};
  sdy_mesh mesh = {2, names, sizes, 4, ids};
  sdy_attr am = {.kind = SDY_MESH, .mesh = &mesh};
  hlo_attr a = {.kind = ATTR_SDY, .u.sdy = &am};
  char *t = attr_text(&a);
  CHECK(t && !strcmp(t, "#sdy.mesh<[\"x\"=4, \"y\"=1], device_ids=[0, 2, 1, 3]>"));
  free(t);
  sdy_axis_ref ax[2] = {{"x", 1, 2}, {"y", 0, 0}};
  sdy_axis_ref rep[1] = {{"x", 2, 2}};
  sdy_dim_sharding dims[3] = {{2, ax, true, 0}, {0, NULL, true, -1}, {0, NULL, false, 2}};
  sdy_sharding sh = {"mesh", NULL, 3, dims, 1, 0, rep, NULL};
  const sdy_sharding *one[1] = {&sh};
  sdy_attr as = {.kind = SDY_SHARDING, .n = 1, .shardings = one};
  a.u.sdy = &as;
  t = attr_text(&a);
  CHECK(t && !strcmp(t, "#sdy.sharding<@mesh, [{\"x\":(1)2, \"y\", ?}p0, {?}, {}p2], replicated={\"x\":(2)2}>"));
  free(t);
  sdy_sharding inl = {NULL, &mesh, 0, NULL, 0, 1, NULL, ax + 1};
  const sdy_sharding *two[2] = {&sh, &inl};
  sdy_attr ap = {.kind = SDY_SHARDING_PER_VALUE, .n = 2, .shardings = two};
  a.u.sdy = &ap;
  t = attr_text(&a);
  CHECK(t && !strcmp(t, "#sdy.sharding_per_value<[<@mesh, [{\"x\":(1)2, \"y\", ?}p0, {?}, {}p2], "
                        "replicated={\"x\":(2)2}>, <mesh<[\"x\"=4, \"y\"=1], device_ids=[0, 2, 1, 3]>, [], "
                        "unreduced={\"y\"}>]>"));
  free(t);
}

TEST_MAIN()
