/* test_cpu_jit.c — kernels end to end on the CPU backend: StableHLO programs
 * split into fusions, each lowered to a kernel (codegen/lower_fusion.c),
 * printed as C (backend/cpu/emit_c.c), compiled with the system compiler
 * and loaded (backend/cpu/jit.c), run on the program's inputs and compared
 * with the interpreter: integers, bools and every elementwise float result
 * (f32, f64, bf16, f16) bit for bit (the same libm functions, one rounding
 * per op) but exp, logistic and tanh: f32 exp (logistic through it) is
 * XLA's polynomial and f32 tanh XLA's rational approximation (emit_c.c),
 * within EXP_F32_ULPS, LOGISTIC_F32_ULPS and TANH_F32_ULPS of glibc's
 * expf, 1 / (1 + expf(-x)) and tanhf, which the interpreter calls, and
 * bf16/f16 (computed in f32, rounded once) within one ULP of their type;
 * reductions within a few ULP (the kernel sums a row in
 * partial sums, lanes, in a wider accumulator, f32 for bf16/f16 and f64 for
 * f32, the interpreter as a pairwise tree).
 *
 * The fusions are picked here as a fusion pass will: every reduce is the
 * root of a kernel, and so is every returned value; a kernel holds its
 * root's producers back to the function's arguments and earlier reduces'
 * results (cheap producers are duplicated into each kernel that needs them).
 *
 * The softmax case prints its generated C and kernels; HLO_TEST_SHOW_C=1
 * prints every case's.
 *
 * When no C compiler can be started every test prints "skipped" with the
 * reason and passes. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "backend/backend.h"
#include "backend/cpu/cpu.h"
#include "codegen/lower_fusion.h"
#include "ir/element.h"
#include "test.h"
#include "testlib.h"

#define MAX_VALS 64

/* The largest distance between the kernels' f32 tanh and glibc's tanhf
 * over all 2^32 floats, measured by bench/math_ulp.sh (bench/MATH.md). */
#define TANH_F32_ULPS 5
/* The same for the kernels' f32 exp against glibc's expf, and for logistic
 * (1 / (1 + exp(-x)) in f32) against the same expression on glibc's expf. */
#define EXP_F32_ULPS 1
#define LOGISTIC_F32_ULPS 4

typedef struct binding {
  const hlo_value *v;
  void *data;
} binding;

static uint64_t rng_state;
static double rnd(void) {
  rng_state = rng_state * 6364136223846793005ULL + 1442695040888963407ULL;
  return (double)(rng_state >> 11) / 9007199254740992.0;
}

static void fill_input(tensor *t) {
  hlo_dtype dt = t->type->dtype;
  for (int64_t i = 0; i < t->num_elems; i++) {
    switch (dtype_class(dt)) {
    case HLO_CLASS_FLOAT: elem_set_f64(dt, t->data, i, rnd() * 4 - 2); break;
    case HLO_CLASS_BOOL: elem_set_i64(dt, t->data, i, rnd() < 0.5); break;
    case HLO_CLASS_UINT: elem_set_i64(dt, t->data, i, (int64_t)(rnd() * 40)); break;
    default: elem_set_i64(dt, t->data, i, (int64_t)(rnd() * 41) - 20); break;
    }
  }
}

static int mant_bits(hlo_dtype dt) {
  switch (dt) {
  case HLO_BF16: return 7;
  case HLO_F16: return 10;
  case HLO_F64: return 52;
  default: return 23;
  }
}

/* Compares n elements; prints the first mismatch. */
static bool same(hlo_dtype dt, const void *got, const void *want, int64_t n, double ulps,
                 double atol, const char *what) {
  for (int64_t i = 0; i < n; i++) {
    if (dtype_class(dt) != HLO_CLASS_FLOAT) {
      if (elem_get_bits(dt, got, i) != elem_get_bits(dt, want, i)) {
        fprintf(stderr, "  %s[%lld]: got %lld, want %lld\n", what, (long long)i,
                (long long)elem_get_i64(dt, got, i), (long long)elem_get_i64(dt, want, i));
        return false;
      }
      continue;
    }
    double g = elem_get_f64(dt, got, i), w = elem_get_f64(dt, want, i);
    if (g == w || (isnan(g) && isnan(w))) continue;
    double ulp = w == 0 ? 0 : ldexp(1.0, ilogb(w) - mant_bits(dt));
    if (fabs(g - w) <= ulps * ulp + atol) continue;
    fprintf(stderr, "  %s[%lld]: got %.9g, want %.9g\n", what, (long long)i, g, w);
    return false;
  }
  return true;
}

static void *lookup(binding *b, uint32_t nb, const hlo_value *v) {
  for (uint32_t i = 0; i < nb; i++)
    if (b[i].v == v) return b[i].data;
  return NULL;
}

static bool has_op(const hlo_op *const *ops, uint32_t n, const hlo_op *op) {
  for (uint32_t i = 0; i < n; i++)
    if (ops[i] == op) return true;
  return false;
}

/* Adds `op` and its producers to ops[], stopping at arguments and at results
 * of reduces other than `root`. */
static void closure(const hlo_op *op, const hlo_op *root, const hlo_op **ops, uint32_t *n) {
  if (!op || has_op(ops, *n, op) || (op->opcode == OP_REDUCE && op != root) || *n >= MAX_VALS)
    return;
  ops[(*n)++] = op;
  for (uint32_t i = 0; i < op->num_operands; i++) closure(op->operands[i]->def, root, ops, n);
}

static int compiler_missing = -1;

/* Runs `text` on the interpreter and as kernels; compares every result
 * and, when `want0` is not NULL, checks that element 0 of the kernels'
 * result 0 is exactly *want0. */
static void run_case_want(const char *name, const char *text, double ulps, double atol,
                          bool show_c, const double *want0) {
  if (compiler_missing == 1) {
    printf("%s: skipped (no C compiler)\n", name);
    return;
  }
  rng_state = 12345;
  hlo_source src = tl_source(name, text);
  tl_run r;
  memset(&r, 0, sizeof r);
  hlo_status st = tl_prepare(&src, 0, strlen(text), 0, NULL, &r);
  if (st) hlo_status_print(st, stderr);
  CHECK(!st);
  if (st) {
    hlo_status_free(st);
    tl_run_free(&r);
    return;
  }
  const hlo_func *f = r.f;
  tensor *args[16];
  uint32_t na = f->num_args;
  for (uint32_t i = 0; i < na; i++) {
    args[i] = tensor_new(f->body.block.args[i].type);
    fill_input(args[i]);
  }
  st = tl_call(&r, args, na);
  CHECK(!st);
  /* fusions */
  const hlo_op *roots[MAX_VALS];
  uint32_t nr = 0;
  const hlo_op *ret = NULL;
  for (const hlo_op *op = f->body.block.first; op; op = op->next) {
    if (op->opcode == OP_REDUCE && nr < MAX_VALS) roots[nr++] = op;
    if (op->opcode == OP_FUNC_RETURN) ret = op;
  }
  for (uint32_t i = 0; ret && i < ret->num_operands; i++) {
    const hlo_op *d = ret->operands[i]->def;
    if (d && d->opcode != OP_REDUCE && !has_op(roots, nr, d) && nr < MAX_VALS) roots[nr++] = d;
  }
  kernel *ks[MAX_VALS];
  uint32_t nk = 0;
  for (uint32_t i = 0; i < nr && !st; i++) {
    const hlo_op *ops[MAX_VALS];
    uint32_t n = 0;
    closure(roots[i], roots[i], ops, &n);
    char kname[32];
    snprintf(kname, sizeof kname, "fusion_%u", i);
    const hlo_value *outv = &roots[i]->results[0];
    st = lower_fusion(ops, n, &outv, 1, kname, &ks[nk]);
    if (st) hlo_status_print(st, stderr);
    CHECK(!st);
    if (!st) nk++;
  }
  const backend *be = backend_cpu();
  backend_module *mod = NULL;
  if (!st) {
    st = be->compile((const kernel *const *)ks, nk, NULL, &mod);
    if (st && hlo_status_code_of(st) == HLO_UNAVAILABLE) {
      printf("%s: skipped (%s)\n", name, hlo_status_message(st));
      compiler_missing = 1;
    } else {
      if (st) hlo_status_print(st, stderr);
      CHECK(!st);
    }
  }
  if (!st && (show_c || getenv("HLO_TEST_SHOW_C"))) {
    printf("---- generated C of %s ----\n%s----\n", name, be->module_source(mod));
    for (uint32_t i = 0; i < nk; i++) {
      strbuf sb;
      sb_init(&sb);
      kernel_print(ks[i], &sb);
      printf("%s", sb_cstr(&sb));
      sb_free(&sb);
    }
  }
  binding b[MAX_VALS];
  tensor *outs[MAX_VALS];
  uint32_t nb = 0, no = 0;
  for (uint32_t i = 0; i < na; i++) b[nb++] = (binding){&f->body.block.args[i], args[i]->data};
  for (uint32_t i = 0; i < nk && !st; i++) {
    void *bufs[MAX_VALS];
    const kernel *k = ks[i];
    for (uint32_t j = 0; j < k->num_inputs; j++) {
      const kernel_buffer *kb = &k->inputs[j];
      bufs[j] = kb->literal ? kb->literal->u.dense.data : lookup(b, nb, kb->value);
      CHECK(bufs[j] != NULL);
      CHECK(!kb->literal || !kb->literal->u.dense.splat);
    }
    outs[no] = tensor_new(k->outputs[0].buf.value->type);
    bufs[k->num_inputs] = outs[no]->data;
    b[nb++] = (binding){k->outputs[0].buf.value, outs[no]->data};
    no++;
    st = be->launch(mod, i, bufs);
    CHECK(!st);
  }
  for (uint32_t i = 0; !st && ret && i < ret->num_operands; i++) {
    const hlo_value *v = ret->operands[i];
    void *got = lookup(b, nb, v);
    CHECK(got != NULL);
    char what[64];
    snprintf(what, sizeof what, "%s result %u", name, i);
    if (got)
      CHECK(same(v->type->dtype, got, r.res[i]->data, r.res[i]->num_elems, ulps, atol, what));
    if (got && i == 0 && want0) {
      double g = elem_get_f64(v->type->dtype, got, 0);
      if (g != *want0) fprintf(stderr, "  %s: got %.9g, want exactly %.9g\n", what, g, *want0);
      CHECK(g == *want0);
    }
  }
  for (uint32_t i = 0; i < no; i++) tensor_release(outs[i]);
  if (mod) be->module_destroy(mod);
  for (uint32_t i = 0; i < nk; i++) kernel_destroy(ks[i]);
  for (uint32_t i = 0; i < na; i++) tensor_release(args[i]);
  hlo_status_free(st);
  tl_run_free(&r);
}

/* Runs `text` on the interpreter and as kernels; compares every result. */
static void run_case(const char *name, const char *text, double ulps, double atol, bool show_c) {
  run_case_want(name, text, ulps, atol, show_c, NULL);
}

#define FN(sig, body) "func.func @main(" sig "{\n" body "}\n"

TEST(elementwise_transcendentals) {
  run_case("transcendentals",
           FN("%x: tensor<8x16xf32>, %y: tensor<8x16xf32>) -> tensor<8x16xf32> ",
              "  %0 = stablehlo.multiply %x, %y : tensor<8x16xf32>\n"
              "  %1 = stablehlo.add %0, %x : tensor<8x16xf32>\n"
              "  %2 = stablehlo.abs %y : tensor<8x16xf32>\n"
              "  %3 = stablehlo.exponential_minus_one %2 : tensor<8x16xf32>\n"
              "  %4 = stablehlo.divide %1, %3 : tensor<8x16xf32>\n"
              "  %5 = stablehlo.abs %x : tensor<8x16xf32>\n"
              "  %6 = stablehlo.log_plus_one %5 : tensor<8x16xf32>\n"
              "  %7 = stablehlo.sqrt %5 : tensor<8x16xf32>\n"
              "  %8 = stablehlo.cosine %6 : tensor<8x16xf32>\n"
              "  %9 = stablehlo.sine %7 : tensor<8x16xf32>\n"
              "  %10 = stablehlo.rsqrt %3 : tensor<8x16xf32>\n"
              "  %11 = stablehlo.maximum %8, %9 : tensor<8x16xf32>\n"
              "  %12 = stablehlo.subtract %11, %10 : tensor<8x16xf32>\n"
              "  %13 = stablehlo.add %12, %4 : tensor<8x16xf32>\n"
              "  return %13 : tensor<8x16xf32>\n"),
           0, 0, false);
}

/* exp and logistic are not bit for bit libm's: f32 within the measured
 * bounds on [-100, 100] (so overflow to +inf and subnormal and zero
 * results occur), on +-inf and NaN; logistic through the same exp; bf16
 * and f16 within one ULP of their type (the f32 result, rounded once). */
TEST(exp_logistic_within_measured_ulps) {
  run_case("exp_f32",
           FN("%x: tensor<8x16xf32>) -> (tensor<8x16xf32>, tensor<8x16xf32>, tensor<4xf32>) ",
              "  %c = stablehlo.constant dense<5.000000e+01> : tensor<8x16xf32>\n"
              "  %0 = stablehlo.multiply %x, %c : tensor<8x16xf32>\n"
              "  %1 = stablehlo.exponential %0 : tensor<8x16xf32>\n"
              "  %2 = stablehlo.exponential %x : tensor<8x16xf32>\n"
              "  %s = stablehlo.constant dense<[0x7F800000, 0xFF800000, 0x7FC00000, 0xC2C80000]> : tensor<4xf32>\n"
              "  %3 = stablehlo.exponential %s : tensor<4xf32>\n"
              "  return %1, %2, %3 : tensor<8x16xf32>, tensor<8x16xf32>, tensor<4xf32>\n"),
           EXP_F32_ULPS, 0, false);
  run_case("logistic_f32",
           FN("%x: tensor<8x16xf32>) -> (tensor<8x16xf32>, tensor<8x16xf32>, tensor<3xf32>) ",
              "  %c = stablehlo.constant dense<5.000000e+01> : tensor<8x16xf32>\n"
              "  %0 = stablehlo.multiply %x, %c : tensor<8x16xf32>\n"
              "  %1 = stablehlo.logistic %0 : tensor<8x16xf32>\n"
              "  %2 = stablehlo.logistic %x : tensor<8x16xf32>\n"
              "  %s = stablehlo.constant dense<[0x7F800000, 0xFF800000, 0x7FC00000]> : tensor<3xf32>\n"
              "  %3 = stablehlo.logistic %s : tensor<3xf32>\n"
              "  return %1, %2, %3 : tensor<8x16xf32>, tensor<8x16xf32>, tensor<3xf32>\n"),
           LOGISTIC_F32_ULPS, 0, false);
  run_case("exp_logistic_narrow",
           FN("%x: tensor<4x8xf32>) -> (tensor<4x8xf16>, tensor<4x8xbf16>, tensor<4x8xf16>, tensor<4x8xbf16>) ",
              "  %c4 = stablehlo.constant dense<4.000000e+00> : tensor<4x8xf32>\n"
              "  %0 = stablehlo.multiply %x, %c4 : tensor<4x8xf32>\n"
              "  %1 = stablehlo.convert %0 : (tensor<4x8xf32>) -> tensor<4x8xf16>\n"
              "  %2 = stablehlo.exponential %1 : tensor<4x8xf16>\n"
              "  %3 = stablehlo.convert %0 : (tensor<4x8xf32>) -> tensor<4x8xbf16>\n"
              "  %4 = stablehlo.exponential %3 : tensor<4x8xbf16>\n"
              "  %5 = stablehlo.logistic %1 : tensor<4x8xf16>\n"
              "  %6 = stablehlo.logistic %3 : tensor<4x8xbf16>\n"
              "  return %2, %4, %5, %6 : tensor<4x8xf16>, tensor<4x8xbf16>, tensor<4x8xf16>, tensor<4x8xbf16>\n"),
           1, 0, false);
}

/* tanh is not bit for bit libm's: f32 within the measured bound, on
 * [-8, 8] (the bound's worst inputs are near 3.7 and 5.7), on tiny inputs
 * (x itself below 0.0004) and on +-inf and NaN (the last element); bf16 and
 * f16 within one ULP of their type (the f32 result, rounded once more). */
TEST(tanh_within_measured_ulps) {
  run_case("tanh_f32",
           FN("%x: tensor<8x16xf32>) -> (tensor<8x16xf32>, tensor<8x16xf32>, tensor<3xf32>) ",
              "  %c4 = stablehlo.constant dense<4.000000e+00> : tensor<8x16xf32>\n"
              "  %ct = stablehlo.constant dense<1.000000e-03> : tensor<8x16xf32>\n"
              "  %0 = stablehlo.multiply %x, %c4 : tensor<8x16xf32>\n"
              "  %1 = stablehlo.tanh %0 : tensor<8x16xf32>\n"
              "  %2 = stablehlo.multiply %x, %ct : tensor<8x16xf32>\n"
              "  %3 = stablehlo.tanh %2 : tensor<8x16xf32>\n"
              "  %s = stablehlo.constant dense<[0x7F800000, 0xFF800000, 0x7FC00000]> : tensor<3xf32>\n"
              "  %4 = stablehlo.tanh %s : tensor<3xf32>\n"
              "  return %1, %3, %4 : tensor<8x16xf32>, tensor<8x16xf32>, tensor<3xf32>\n"),
           TANH_F32_ULPS, 0, false);
  run_case("tanh_narrow",
           FN("%x: tensor<4x8xf32>) -> (tensor<4x8xf16>, tensor<4x8xbf16>) ",
              "  %c4 = stablehlo.constant dense<4.000000e+00> : tensor<4x8xf32>\n"
              "  %0 = stablehlo.multiply %x, %c4 : tensor<4x8xf32>\n"
              "  %1 = stablehlo.convert %0 : (tensor<4x8xf32>) -> tensor<4x8xf16>\n"
              "  %2 = stablehlo.tanh %1 : tensor<4x8xf16>\n"
              "  %3 = stablehlo.convert %0 : (tensor<4x8xf32>) -> tensor<4x8xbf16>\n"
              "  %4 = stablehlo.tanh %3 : tensor<4x8xbf16>\n"
              "  return %2, %4 : tensor<4x8xf16>, tensor<4x8xbf16>\n"),
           1, 0, false);
}

TEST(bias_add) {
  run_case("bias_add",
           FN("%x: tensor<8x16xf32>, %b: tensor<16xf32>) -> tensor<8x16xf32> ",
              "  %0 = stablehlo.broadcast_in_dim %b, dims = [1] : (tensor<16xf32>) -> tensor<8x16xf32>\n"
              "  %1 = stablehlo.add %x, %0 : tensor<8x16xf32>\n"
              "  %c = stablehlo.constant dense<0.000000e+00> : tensor<8x16xf32>\n"
              "  %2 = stablehlo.maximum %1, %c : tensor<8x16xf32>\n"
              "  return %2 : tensor<8x16xf32>\n"),
           0, 0, false);
}

TEST(transpose_add) {
  run_case("transpose_add",
           FN("%x: tensor<4x6xf32>, %y: tensor<6x4xf32>) -> tensor<6x4xf32> ",
              "  %0 = stablehlo.transpose %x, dims = [1, 0] : (tensor<4x6xf32>) -> tensor<6x4xf32>\n"
              "  %1 = stablehlo.add %0, %y : tensor<6x4xf32>\n"
              "  return %1 : tensor<6x4xf32>\n"),
           0, 0, false);
}

TEST(reshape) {
  run_case("reshape",
           FN("%x: tensor<4x6xf32>, %y: tensor<24xf32>, %b: tensor<12xf32>) -> (tensor<2x12xf32>, tensor<6x4xf32>, tensor<2x3x4xf32>) ",
              "  %0 = stablehlo.reshape %x : (tensor<4x6xf32>) -> tensor<2x12xf32>\n"
              "  %1 = stablehlo.multiply %0, %0 : tensor<2x12xf32>\n"
              "  %2 = stablehlo.reshape %y : (tensor<24xf32>) -> tensor<4x6xf32>\n"
              "  %3 = stablehlo.transpose %2, dims = [1, 0] : (tensor<4x6xf32>) -> tensor<6x4xf32>\n"
              "  %4 = stablehlo.broadcast_in_dim %b, dims = [1] : (tensor<12xf32>) -> tensor<2x12xf32>\n"
              "  %5 = stablehlo.reshape %4 : (tensor<2x12xf32>) -> tensor<2x3x4xf32>\n"
              "  %6 = stablehlo.exponential_minus_one %3 : tensor<6x4xf32>\n"
              "  %7 = stablehlo.reshape %x : (tensor<4x6xf32>) -> tensor<24xf32>\n"
              "  %8 = stablehlo.reshape %7 : (tensor<24xf32>) -> tensor<2x3x4xf32>\n"
              "  %9 = stablehlo.add %8, %5 : tensor<2x3x4xf32>\n"
              "  return %1, %6, %9 : tensor<2x12xf32>, tensor<6x4xf32>, tensor<2x3x4xf32>\n"),
           0, 0, false);
}

TEST(slice) {
  run_case("slice",
           FN("%x: tensor<10x12xf32>) -> tensor<4x3xf32> ",
              "  %0 = stablehlo.slice %x [1:9:2, 3:12:3] : (tensor<10x12xf32>) -> tensor<4x3xf32>\n"
              "  %1 = stablehlo.slice %x [0:4, 0:3] : (tensor<10x12xf32>) -> tensor<4x3xf32>\n"
              "  %2 = stablehlo.subtract %0, %1 : tensor<4x3xf32>\n"
              "  return %2 : tensor<4x3xf32>\n"),
           0, 0, false);
}

TEST(concatenate) {
  run_case("concatenate",
           FN("%x: tensor<3x4xf32>, %y: tensor<5x4xf32>, %z: tensor<8x2xf32>) -> (tensor<8x4xf32>, tensor<8x6xf32>) ",
              "  %0 = stablehlo.exponential_minus_one %y : tensor<5x4xf32>\n"
              "  %1 = stablehlo.concatenate %x, %0, dim = 0 : (tensor<3x4xf32>, tensor<5x4xf32>) -> tensor<8x4xf32>\n"
              "  %2 = stablehlo.negate %z : tensor<8x2xf32>\n"
              "  %3 = stablehlo.concatenate %z, %1, dim = 1 : (tensor<8x2xf32>, tensor<8x4xf32>) -> tensor<8x6xf32>\n"
              "  %4 = stablehlo.slice %3 [0:8, 1:5] : (tensor<8x6xf32>) -> tensor<8x4xf32>\n"
              "  %5 = stablehlo.add %4, %1 : tensor<8x4xf32>\n"
              "  %6 = stablehlo.concatenate %2, %2, %z, dim = 1 : (tensor<8x2xf32>, tensor<8x2xf32>, tensor<8x2xf32>) -> tensor<8x6xf32>\n"
              "  return %5, %6 : tensor<8x4xf32>, tensor<8x6xf32>\n"),
           0, 0, false);
}

TEST(iota) {
  run_case("iota",
           FN("%x: tensor<4x8xf32>) -> (tensor<4x8xf32>, tensor<4x8xi32>) ",
              "  %0 = stablehlo.iota dim = 1 : tensor<4x8xi32>\n"
              "  %1 = stablehlo.convert %0 : (tensor<4x8xi32>) -> tensor<4x8xf32>\n"
              "  %2 = stablehlo.add %x, %1 : tensor<4x8xf32>\n"
              "  %3 = stablehlo.iota dim = 0 : tensor<4x8xi32>\n"
              "  %4 = stablehlo.multiply %3, %0 : tensor<4x8xi32>\n"
              "  return %2, %4 : tensor<4x8xf32>, tensor<4x8xi32>\n"),
           0, 0, false);
}

TEST(convert_bf16) {
  run_case("convert_bf16",
           FN("%x: tensor<4x8xf32>, %y: tensor<4x8xbf16>) -> (tensor<4x8xbf16>, tensor<4x8xf32>, tensor<4x8xbf16>, tensor<4x8xf16>, tensor<4x8xf32>) ",
              "  %0 = stablehlo.convert %x : (tensor<4x8xf32>) -> tensor<4x8xbf16>\n"
              "  %1 = stablehlo.convert %y : (tensor<4x8xbf16>) -> tensor<4x8xf32>\n"
              "  %2 = stablehlo.multiply %1, %x : tensor<4x8xf32>\n"
              "  %3 = stablehlo.exponential_minus_one %y : tensor<4x8xbf16>\n"
              "  %4 = stablehlo.multiply %3, %y : tensor<4x8xbf16>\n"
              "  %5 = stablehlo.convert %x : (tensor<4x8xf32>) -> tensor<4x8xf16>\n"
              "  %6 = stablehlo.exponential_minus_one %5 : tensor<4x8xf16>\n"
              "  %7 = stablehlo.add %6, %5 : tensor<4x8xf16>\n"
              "  %8 = stablehlo.convert %7 : (tensor<4x8xf16>) -> tensor<4x8xf32>\n"
              "  return %0, %2, %4, %7, %8 : tensor<4x8xbf16>, tensor<4x8xf32>, tensor<4x8xbf16>, tensor<4x8xf16>, tensor<4x8xf32>\n"),
           0, 0, false);
}

TEST(select_compare) {
  run_case("select_compare",
           FN("%x: tensor<6x5xf32>, %y: tensor<6x5xf32>, %i: tensor<6x5xi32>) -> (tensor<6x5xf32>, tensor<6x5xi1>) ",
              "  %0 = stablehlo.compare GT, %x, %y, FLOAT : (tensor<6x5xf32>, tensor<6x5xf32>) -> tensor<6x5xi1>\n"
              "  %1 = stablehlo.add %y, %y : tensor<6x5xf32>\n"
              "  %2 = stablehlo.select %0, %x, %1 : (tensor<6x5xi1>, tensor<6x5xf32>, tensor<6x5xf32>) -> tensor<6x5xf32>\n"
              "  %c = stablehlo.constant dense<3> : tensor<6x5xi32>\n"
              "  %3 = stablehlo.compare LE, %i, %c, SIGNED : (tensor<6x5xi32>, tensor<6x5xi32>) -> tensor<6x5xi1>\n"
              "  %4 = stablehlo.and %0, %3 : tensor<6x5xi1>\n"
              "  %5 = stablehlo.not %4 : tensor<6x5xi1>\n"
              "  return %2, %5 : tensor<6x5xf32>, tensor<6x5xi1>\n"),
           0, 0, false);
}

TEST(integers) {
  run_case("integers",
           FN("%a: tensor<7x9xi32>, %b: tensor<7x9xi32>, %u: tensor<7x9xui8>) -> (tensor<7x9xi32>, tensor<7x9xi32>, tensor<7x9xui8>, tensor<7x9xf32>, tensor<7x9xi32>, tensor<7x9xi32>) ",
              "  %0 = stablehlo.divide %a, %b : tensor<7x9xi32>\n"
              "  %1 = stablehlo.remainder %a, %b : tensor<7x9xi32>\n"
              "  %2 = stablehlo.multiply %0, %1 : tensor<7x9xi32>\n"
              "  %3 = stablehlo.maximum %2, %a : tensor<7x9xi32>\n"
              "  %c = stablehlo.constant dense<2147483647> : tensor<7x9xi32>\n"
              "  %4 = stablehlo.add %c, %a : tensor<7x9xi32>\n"
              "  %5 = stablehlo.shift_left %4, %b : tensor<7x9xi32>\n"
              "  %6 = stablehlo.multiply %u, %u : tensor<7x9xui8>\n"
              "  %7 = stablehlo.convert %3 : (tensor<7x9xi32>) -> tensor<7x9xf32>\n"
              "  return %3, %5, %6, %7, %0, %1 : tensor<7x9xi32>, tensor<7x9xi32>, tensor<7x9xui8>, tensor<7x9xf32>, tensor<7x9xi32>, tensor<7x9xi32>\n"),
           0, 0, false);
}

TEST(float_to_int_saturates) {
  run_case("float_to_int",
           FN("%x: tensor<16xf32>) -> (tensor<16xi8>, tensor<16xui8>, tensor<16xi32>) ",
              "  %c = stablehlo.constant dense<1.000000e+02> : tensor<16xf32>\n"
              "  %0 = stablehlo.multiply %x, %c : tensor<16xf32>\n"
              "  %1 = stablehlo.convert %0 : (tensor<16xf32>) -> tensor<16xi8>\n"
              "  %2 = stablehlo.convert %0 : (tensor<16xf32>) -> tensor<16xui8>\n"
              "  %3 = stablehlo.convert %0 : (tensor<16xf32>) -> tensor<16xi32>\n"
              "  return %1, %2, %3 : tensor<16xi8>, tensor<16xui8>, tensor<16xi32>\n"),
           0, 0, false);
}

TEST(constants_and_scalars) {
  run_case("constants",
           FN("%x: tensor<3x4xf32>, %s: tensor<f32>) -> tensor<3x4xf32> ",
              "  %c = stablehlo.constant dense<[1.0, 2.0, 3.0, 4.0]> : tensor<4xf32>\n"
              "  %0 = stablehlo.broadcast_in_dim %c, dims = [1] : (tensor<4xf32>) -> tensor<3x4xf32>\n"
              "  %1 = stablehlo.broadcast_in_dim %s, dims = [] : (tensor<f32>) -> tensor<3x4xf32>\n"
              "  %2 = stablehlo.multiply %x, %0 : tensor<3x4xf32>\n"
              "  %3 = stablehlo.add %2, %1 : tensor<3x4xf32>\n"
              "  %lo = stablehlo.constant dense<-1.0> : tensor<f32>\n"
              "  %hi = stablehlo.constant dense<0x7F800000> : tensor<f32>\n"
              "  %4 = stablehlo.clamp %lo, %3, %hi : (tensor<f32>, tensor<3x4xf32>, tensor<f32>) -> tensor<3x4xf32>\n"
              "  return %4 : tensor<3x4xf32>\n"),
           0, 0, false);
}

TEST(softmax) {
  run_case("softmax",
           FN("%x: tensor<8x32xf32>) -> tensor<8x32xf32> ",
              "  %ninf = stablehlo.constant dense<0xFF800000> : tensor<f32>\n"
              "  %zero = stablehlo.constant dense<0.000000e+00> : tensor<f32>\n"
              "  %0 = stablehlo.reduce(%x init: %ninf) applies stablehlo.maximum across dimensions = [1] : (tensor<8x32xf32>, tensor<f32>) -> tensor<8xf32>\n"
              "  %1 = stablehlo.broadcast_in_dim %0, dims = [0] : (tensor<8xf32>) -> tensor<8x32xf32>\n"
              "  %2 = stablehlo.subtract %x, %1 : tensor<8x32xf32>\n"
              "  %3 = stablehlo.exponential %2 : tensor<8x32xf32>\n"
              "  %4 = stablehlo.reduce(%3 init: %zero) applies stablehlo.add across dimensions = [1] : (tensor<8x32xf32>, tensor<f32>) -> tensor<8xf32>\n"
              "  %5 = stablehlo.broadcast_in_dim %4, dims = [0] : (tensor<8xf32>) -> tensor<8x32xf32>\n"
              "  %6 = stablehlo.divide %3, %5 : tensor<8x32xf32>\n"
              "  return %6 : tensor<8x32xf32>\n"),
           8, 0, true);
}

TEST(layernorm) {
  run_case("layernorm",
           FN("%x: tensor<4x2x16xf32>, %g: tensor<16xf32>, %b: tensor<16xf32>) -> tensor<4x2x16xf32> ",
              "  %zero = stablehlo.constant dense<0.000000e+00> : tensor<f32>\n"
              "  %n = stablehlo.constant dense<1.600000e+01> : tensor<4x2xf32>\n"
              "  %eps = stablehlo.constant dense<9.99999974E-6> : tensor<4x2x16xf32>\n"
              "  %0 = stablehlo.reduce(%x init: %zero) applies stablehlo.add across dimensions = [2] : (tensor<4x2x16xf32>, tensor<f32>) -> tensor<4x2xf32>\n"
              "  %1 = stablehlo.divide %0, %n : tensor<4x2xf32>\n"
              "  %2 = stablehlo.broadcast_in_dim %1, dims = [0, 1] : (tensor<4x2xf32>) -> tensor<4x2x16xf32>\n"
              "  %3 = stablehlo.subtract %x, %2 : tensor<4x2x16xf32>\n"
              "  %4 = stablehlo.multiply %3, %3 : tensor<4x2x16xf32>\n"
              "  %5 = stablehlo.reduce(%4 init: %zero) applies stablehlo.add across dimensions = [2] : (tensor<4x2x16xf32>, tensor<f32>) -> tensor<4x2xf32>\n"
              "  %6 = stablehlo.divide %5, %n : tensor<4x2xf32>\n"
              "  %7 = stablehlo.broadcast_in_dim %6, dims = [0, 1] : (tensor<4x2xf32>) -> tensor<4x2x16xf32>\n"
              "  %8 = stablehlo.add %7, %eps : tensor<4x2x16xf32>\n"
              "  %9 = stablehlo.rsqrt %8 : tensor<4x2x16xf32>\n"
              "  %10 = stablehlo.multiply %3, %9 : tensor<4x2x16xf32>\n"
              "  %11 = stablehlo.broadcast_in_dim %g, dims = [2] : (tensor<16xf32>) -> tensor<4x2x16xf32>\n"
              "  %12 = stablehlo.multiply %10, %11 : tensor<4x2x16xf32>\n"
              "  %13 = stablehlo.broadcast_in_dim %b, dims = [2] : (tensor<16xf32>) -> tensor<4x2x16xf32>\n"
              "  %14 = stablehlo.add %12, %13 : tensor<4x2x16xf32>\n"
              "  return %14 : tensor<4x2x16xf32>\n"),
           4, 1e-5, false);
}

TEST(integer_row_sum_and_full_reduce) {
  run_case("int_reduce",
           FN("%x: tensor<5x7xi32>, %y: tensor<5x7xf64>) -> (tensor<5xi32>, tensor<f64>) ",
              "  %z = stablehlo.constant dense<0> : tensor<i32>\n"
              "  %zd = stablehlo.constant dense<0.0> : tensor<f64>\n"
              "  %0 = stablehlo.reduce(%x init: %z) applies stablehlo.add across dimensions = [1] : (tensor<5x7xi32>, tensor<i32>) -> tensor<5xi32>\n"
              "  %1 = stablehlo.cosine %y : tensor<5x7xf64>\n"
              "  %2 = stablehlo.reduce(%1 init: %zd) applies stablehlo.add across dimensions = [0, 1] : (tensor<5x7xf64>, tensor<f64>) -> tensor<f64>\n"
              "  return %0, %2 : tensor<5xi32>, tensor<f64>\n"),
           4, 1e-12, false);
}

/* Reductions accumulate wider than their element type and round once at
 * the store (kernel.h, acc_dtype): bf16/f16 sums in f32 (a bf16
 * accumulator stalls at 256, an f16 one at 2048), f32 sums in f64 (an f32
 * one stalls at 2^24). */
TEST(narrow_sums_accumulate_in_f32) {
  double w = 1024;
  run_case_want("bf16_ones",
                FN(") -> tensor<bf16> ",
                   "  %one = stablehlo.constant dense<1.0> : tensor<1024xbf16>\n"
                   "  %z = stablehlo.constant dense<0.0> : tensor<bf16>\n"
                   "  %0 = stablehlo.reduce(%one init: %z) applies stablehlo.add across dimensions = [0] : (tensor<1024xbf16>, tensor<bf16>) -> tensor<bf16>\n"
                   "  return %0 : tensor<bf16>\n"),
                0, 0, false, &w);
  w = 4096;
  run_case_want("f16_ones",
                FN(") -> tensor<f16> ",
                   "  %one = stablehlo.constant dense<1.0> : tensor<4096xf16>\n"
                   "  %z = stablehlo.constant dense<0.0> : tensor<f16>\n"
                   "  %0 = stablehlo.reduce(%one init: %z) applies stablehlo.add across dimensions = [0] : (tensor<4096xf16>, tensor<f16>) -> tensor<f16>\n"
                   "  return %0 : tensor<f16>\n"),
                0, 0, false, &w);
  /* bf16 max rows (random inputs): bit-equal to the interpreter */
  run_case("bf16_max",
           FN("%x: tensor<4x64xbf16>) -> tensor<4xbf16> ",
              "  %ninf = stablehlo.constant dense<0xFF80> : tensor<bf16>\n"
              "  %0 = stablehlo.reduce(%x init: %ninf) applies stablehlo.maximum across dimensions = [1] : (tensor<4x64xbf16>, tensor<bf16>) -> tensor<4xbf16>\n"
              "  return %0 : tensor<4xbf16>\n"),
           0, 0, false);
  /* bf16 products of 8: the interpreter rounds each of its 7 steps to bf16,
   * the kernel once, so they may differ by a few bf16 ULP */
  run_case("bf16_mul",
           FN("%x: tensor<4x8xbf16>) -> tensor<4xbf16> ",
              "  %one = stablehlo.constant dense<1.0> : tensor<bf16>\n"
              "  %0 = stablehlo.reduce(%x init: %one) applies stablehlo.multiply across dimensions = [1] : (tensor<4x8xbf16>, tensor<bf16>) -> tensor<4xbf16>\n"
              "  return %0 : tensor<4xbf16>\n"),
           4, 0, false);
}

TEST(f32_sums_accumulate_in_f64) {
  double w = 33554432; /* 2^25 */
  run_case_want("f32_ones_2p25",
                FN(") -> tensor<f32> ",
                   "  %one = stablehlo.constant dense<1.0> : tensor<33554432xf32>\n"
                   "  %z = stablehlo.constant dense<0.0> : tensor<f32>\n"
                   "  %0 = stablehlo.reduce(%one init: %z) applies stablehlo.add across dimensions = [0] : (tensor<33554432xf32>, tensor<f32>) -> tensor<f32>\n"
                   "  return %0 : tensor<f32>\n"),
                0, 0, false, &w);
  /* long random rows (positive: no cancellation, so an ULP of the result is
   * an ULP of every partial sum): within 2 ULP of the pairwise sum; a
   * sequential f32 sum was 17-35 ULP off */
  run_case("f32_random_rows",
           FN("%x: tensor<8x5000xf32>) -> tensor<8xf32> ",
              "  %z = stablehlo.constant dense<0.0> : tensor<f32>\n"
              "  %a = stablehlo.abs %x : tensor<8x5000xf32>\n"
              "  %0 = stablehlo.reduce(%a init: %z) applies stablehlo.add across dimensions = [1] : (tensor<8x5000xf32>, tensor<f32>) -> tensor<8xf32>\n"
              "  return %0 : tensor<8xf32>\n"),
           2, 0, false);
}

/* Reductions over several trailing dims with lanes (kernel.h): the lanes
 * run over the innermost dim (100 = 3 blocks of 32 lanes + a tail of 4,
 * or 6 blocks of 16 + 4) inside the loop of the outer reduction dim, and
 * are combined once after both. */
TEST(reduction_lanes_over_two_dims) {
  run_case("lanes_two_dims",
           FN("%x: tensor<3x5x100xf32>, %i: tensor<3x5x100xi32>) -> (tensor<3xf32>, tensor<3xf32>, tensor<3xi32>) ",
              "  %z = stablehlo.constant dense<0.0> : tensor<f32>\n"
              "  %ninf = stablehlo.constant dense<0xFF800000> : tensor<f32>\n"
              "  %zi = stablehlo.constant dense<7> : tensor<i32>\n"
              "  %0 = stablehlo.reduce(%x init: %z) applies stablehlo.add across dimensions = [1, 2] : (tensor<3x5x100xf32>, tensor<f32>) -> tensor<3xf32>\n"
              "  %1 = stablehlo.reduce(%x init: %ninf) applies stablehlo.maximum across dimensions = [1, 2] : (tensor<3x5x100xf32>, tensor<f32>) -> tensor<3xf32>\n"
              "  %2 = stablehlo.reduce(%i init: %zi) applies stablehlo.add across dimensions = [1, 2] : (tensor<3x5x100xi32>, tensor<i32>) -> tensor<3xi32>\n"
              "  return %0, %1, %2 : tensor<3xf32>, tensor<3xf32>, tensor<3xi32>\n"),
           8, 1e-5, false);
}

TEST(large_1d_tiled) {
  run_case("large_1d",
           FN("%x: tensor<10000xf32>) -> tensor<10000xf32> ",
              "  %0 = stablehlo.exponential_minus_one %x : tensor<10000xf32>\n"
              "  %1 = stablehlo.floor %0 : tensor<10000xf32>\n"
              "  %2 = stablehlo.power %x, %1 : tensor<10000xf32>\n"
              "  return %2 : tensor<10000xf32>\n"),
           0, 0, false);
}

/* One kernel under several schedules (ragged tiles, a split dim that is not
 * a thread dim, tiles run in several calls as a thread pool will) gives the
 * same bits as under the default schedule. */
TEST(schedules_and_tile_ranges) {
  if (compiler_missing == 1) {
    printf("schedules: skipped (no C compiler)\n");
    return;
  }
  const char *text = FN("%x: tensor<5x37xf32>, %y: tensor<37x5xf32>) -> tensor<5x37xf32> ",
                        "  %0 = stablehlo.transpose %y, dims = [1, 0] : (tensor<37x5xf32>) -> tensor<5x37xf32>\n"
                        "  %1 = stablehlo.multiply %x, %0 : tensor<5x37xf32>\n"
                        "  %2 = stablehlo.iota dim = 1 : tensor<5x37xf32>\n"
                        "  %3 = stablehlo.add %1, %2 : tensor<5x37xf32>\n"
                        "  return %3 : tensor<5x37xf32>\n");
  hlo_source src = tl_source("schedules", text);
  hlo_status st = NULL;
  hlo_module_ir *m = tl_parse_piece(&src, 0, strlen(text), &st);
  CHECK(m != NULL);
  if (!m) {
    hlo_status_free(st);
    return;
  }
  hlo_func *f = module_entry(m, NULL);
  const hlo_op *ops[8];
  uint32_t n = 0;
  const hlo_value *outv = NULL;
  for (const hlo_op *op = f->body.block.first; op; op = op->next) {
    if (op->opcode == OP_FUNC_RETURN) outv = op->operands[0];
    else ops[n++] = op;
  }
  enum { NV = 4 };
  kernel *ks[NV] = {0};
  const char *names[NV] = {"s_default", "s_ragged", "s_blocked", "s_one"};
  for (int i = 0; i < NV && !st; i++) st = lower_fusion(ops, n, &outv, 1, names[i], &ks[i]);
  CHECK(!st);
  if (!st) {
    ks[1]->sched.num_thread_dims = 2; /* tiles 2x8 over 5x37: ragged in both dims */
    ks[1]->sched.tile[0] = 2;
    ks[1]->sched.tile[1] = 8;
    ks[2]->sched.num_thread_dims = 1; /* rows over threads, dim 1 blocked by 10 inside */
    ks[2]->sched.tile[0] = 1;
    ks[2]->sched.tile[1] = 10;
    ks[3]->sched.num_thread_dims = 0; /* one tile */
    ks[3]->sched.tile[0] = 5;
    ks[3]->sched.tile[1] = 37;
    CHECK_EQ_INT(kernel_num_tiles(ks[1]), 15);
    CHECK_EQ_INT(kernel_num_tiles(ks[2]), 5);
    CHECK_EQ_INT(kernel_num_tiles(ks[3]), 1);
  }
  strbuf sb;
  sb_init(&sb);
  if (!st) st = cpu_emit_source((const kernel *const *)ks, NV, &sb);
  cpu_kernel_fn fns[NV];
  cpu_jit *j = NULL;
  if (!st) st = cpu_jit_compile(sb_cstr(&sb), NULL, NULL, names, NV, fns, &j);
  if (getenv("HLO_TEST_SHOW_C")) printf("%s", sb_cstr(&sb));
  if (st && hlo_status_code_of(st) == HLO_UNAVAILABLE) {
    printf("schedules: skipped (%s)\n", hlo_status_message(st));
  } else if (st) {
    hlo_status_print(st, stderr);
    CHECK(!st);
  } else {
    float x[5 * 37], y[37 * 5], out[NV][5 * 37];
    rng_state = 7;
    for (int i = 0; i < 5 * 37; i++) x[i] = (float)(rnd() * 4 - 2), y[i] = (float)(rnd() * 4 - 2);
    for (int v = 0; v < NV; v++) {
      memset(out[v], 0xff, sizeof out[v]);
      void *bufs[3] = {x, y, out[v]};
      int64_t nt = kernel_num_tiles(ks[v]);
      /* in uneven chunks, as threads would take them */
      for (int64_t b = 0; b < nt; b += 4) fns[v](bufs, b, b + 4 < nt ? b + 4 : nt);
    }
    for (int v = 1; v < NV; v++) CHECK(!memcmp(out[0], out[v], sizeof out[0]));
    CHECK(out[0][1 * 37 + 3] == x[1 * 37 + 3] * y[3 * 5 + 1] + 3.0f);
  }
  hlo_status_free(st);
  cpu_jit_destroy(j);
  sb_free(&sb);
  for (int i = 0; i < NV; i++) kernel_destroy(ks[i]);
  module_free(m);
}

TEST(no_compiler_is_a_clean_error) {
  kernel *k = NULL;
  int64_t d = 4;
  hlo_status st = kernel_create("k_nocc", 1, &d, NULL, &k);
  CHECK(!st);
  kinst c = kinst_make(KI_CONST, HLO_F32);
  c.cval.f = 1;
  uint32_t v = 0;
  kernel_map m = kernel_map_identity(1);
  if (!st) st = kernel_add_inst(k, false, &c, &v);
  if (!st) st = kernel_add_output(k, HLO_F32, 1, &d, NULL, &m, v);
  CHECK(!st);
  backend_compile_options o = {.cc = "/nonexistent/hlo-no-cc"};
  backend_module *mod = NULL;
  st = backend_cpu()->compile((const kernel *const *)&k, 1, &o, &mod);
  CHECK(st && hlo_status_code_of(st) == HLO_UNAVAILABLE);
  CHECK(mod == NULL);
  if (st) CHECK(strstr(hlo_status_message(st), "no C compiler") != NULL);
  hlo_status_free(st);
  kernel_destroy(k);
}

TEST_MAIN()
