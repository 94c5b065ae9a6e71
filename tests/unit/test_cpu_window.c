/* test_cpu_window.c — the window-op description (backend/window_describe.c)
 * and the CPU backend's reduce_window / select_and_scatter
 * (backend/cpu/window.c), against the reference interpreter's kernels.
 *
 * Every case is a backend_window printed as a one-op StableHLO module (so
 * the description is also checked to survive print -> parse ->
 * window_describe unchanged), run on random inputs by the interpreter
 * (interp_run_op) and by cpu_reduce_window / cpu_select_and_scatter. The
 * results must be the interpreter's bits (both sides fold the same
 * elements in the same order with the same rounding), NaNs excepted: any
 * NaN matches any NaN (the interpreter passes values through double, which
 * may quiet a NaN). Inputs are drawn from a small set of values so that
 * select ties are frequent, with -0, and with NaN and infinities in a
 * quarter of the float cases.
 *
 * Cases: every reduce_window and select_and_scatter of the conformance
 * corpus (../shared/conformance) that window_describe takes (the rest are
 * counted: variadic reduce_window, promoted region types, ...), each in its
 * own element type; the window ops of ../shared/perf/cnn_sgd_step_64x28x28
 * (batch cut to 2); 400 seeded random reduce_windows and 300 random
 * select_and_scatters over element types, reducers, select directions,
 * ranks 1-4, window sizes, strides, dilations and padding (negative too);
 * the forms cpu_window_takes declines. HLO_TEST_SEED=N in the environment
 * draws other random cases. */
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "backend/cpu/window.h"
#include "backend/window_describe.h"
#include "interp/interp.h"
#include "ir/element.h"
#include "support/strbuf.h"
#include "test.h"
#include "testlib.h"

static uint64_t rng = 0x2545f4914f6cdd1dULL;
static int64_t rand_in(int64_t lo, int64_t hi) { return tl_rand_in(&rng, lo, hi); }

/* ------------------------------------------------------------ printing */

static void print_type(strbuf *b, const int64_t *dims, uint32_t rank, hlo_dtype dt) {
  sb_puts(b, "tensor<");
  for (uint32_t i = 0; i < rank; i++) sb_printf(b, "%lldx", (long long)dims[i]);
  sb_printf(b, "%s>", hlo_dtype_name(dt));
}

static void print_array(strbuf *b, const char *name, const int64_t *v, uint32_t n) {
  sb_printf(b, "%s = array<i64", name);
  for (uint32_t i = 0; i < n; i++) sb_printf(b, "%s %lld", i ? "," : ":", (long long)v[i]);
  sb_putc(b, '>');
}

static const char *const reducer_op[] = {"add", "maximum", "minimum", "multiply", "and", "or"};
static const char *const select_dir[] = {"GE", "GT", "LE", "LT"};

static void print_body(strbuf *b, const char *op, hlo_dtype dt, bool cmp) {
  sb_puts(b, "    ^bb0(%a: ");
  print_type(b, NULL, 0, dt);
  sb_puts(b, ", %b: ");
  print_type(b, NULL, 0, dt);
  sb_puts(b, "):\n");
  if (cmp) {
    sb_printf(b, "      %%r = stablehlo.compare %s, %%a, %%b : (", op);
    print_type(b, NULL, 0, dt);
    sb_puts(b, ", ");
    print_type(b, NULL, 0, dt);
    sb_puts(b, ") -> tensor<i1>\n      stablehlo.return %r : tensor<i1>\n");
  } else {
    sb_printf(b, "      %%r = stablehlo.%s %%a, %%b : ", op);
    print_type(b, NULL, 0, dt);
    sb_puts(b, "\n      stablehlo.return %r : ");
    print_type(b, NULL, 0, dt);
    sb_putc(b, '\n');
  }
}

/* The module `@main(x, [source,] init) -> the op` of `w`. */
static char *window_module(const backend_window *w) {
  strbuf b;
  sb_init(&b);
  uint32_t R = w->rank;
  hlo_dtype dt = w->dtype;
  bool ss = w->kind == BACKEND_SELECT_AND_SCATTER;
  const int64_t *rdims = ss ? w->operand_dims : w->window_out_dims;
  sb_puts(&b, "func.func @main(%x: ");
  print_type(&b, w->operand_dims, R, dt);
  if (ss) {
    sb_puts(&b, ", %s: ");
    print_type(&b, w->window_out_dims, R, dt);
  }
  sb_puts(&b, ", %i: ");
  print_type(&b, NULL, 0, dt);
  sb_puts(&b, ") -> ");
  print_type(&b, rdims, R, dt);
  if (ss) {
    sb_puts(&b, " {\n  %0 = \"stablehlo.select_and_scatter\"(%x, %s, %i) ({\n");
    print_body(&b, select_dir[w->select], dt, true);
    sb_puts(&b, "  }, {\n");
  } else {
    sb_puts(&b, " {\n  %0 = \"stablehlo.reduce_window\"(%x, %i) ({\n");
  }
  print_body(&b, reducer_op[w->reducer], dt, false);
  sb_puts(&b, "  }) {");
  print_array(&b, "window_dimensions", w->window_dimensions, R);
  sb_puts(&b, ", ");
  print_array(&b, "window_strides", w->window_strides, R);
  if (!ss) {
    sb_puts(&b, ", ");
    print_array(&b, "base_dilations", w->base_dilations, R);
    sb_puts(&b, ", ");
    print_array(&b, "window_dilations", w->window_dilations, R);
  }
  if (R) {
    sb_puts(&b, ", padding = dense<[");
    for (uint32_t d = 0; d < R; d++)
      sb_printf(&b, "%s[%lld, %lld]", d ? ", " : "", (long long)w->padding_low[d],
                (long long)w->padding_high[d]);
    sb_printf(&b, "]> : tensor<%ux2xi64>", R);
  }
  sb_puts(&b, "} : (");
  print_type(&b, w->operand_dims, R, dt);
  if (ss) {
    sb_puts(&b, ", ");
    print_type(&b, w->window_out_dims, R, dt);
  }
  sb_puts(&b, ", ");
  print_type(&b, NULL, 0, dt);
  sb_puts(&b, ") -> ");
  print_type(&b, rdims, R, dt);
  sb_puts(&b, "\n  func.return %0 : ");
  print_type(&b, rdims, R, dt);
  sb_puts(&b, "\n}\n");
  return sb_take(&b);
}

/* ------------------------------------------------------------ inputs */

/* A random element of `dt`: few distinct values (ties), -0, and with
 * `specials` NaN and infinities now and then. */
static void set_random(hlo_dtype dt, void *data, int64_t i, bool specials) {
  switch (dtype_class(dt)) {
  case HLO_CLASS_FLOAT: {
    int64_t r = rand_in(0, 99);
    double v = (double)rand_in(-12, 12) / 4;
    if (r < 5) v = -0.0;
    else if (r < 40) v += (double)rand_in(0, 1 << 20) / (1 << 22); /* mostly distinct */
    if (specials && r >= 95) v = r == 99 ? NAN : r == 98 ? -INFINITY : INFINITY;
    elem_set_f64(dt, data, i, v);
    break;
  }
  case HLO_CLASS_BOOL: elem_set_i64(dt, data, i, rand_in(0, 1)); break;
  case HLO_CLASS_UINT: elem_set_i64(dt, data, i, rand_in(0, 40)); break;
  default: elem_set_i64(dt, data, i, rand_in(-20, 20)); break;
  }
}

/* An init value: the reducer's identity or (one case in three) another. */
static void set_init(hlo_dtype dt, backend_reducer r, void *data) {
  bool fl = dtype_class(dt) == HLO_CLASS_FLOAT;
  if (rand_in(0, 2) == 0) {
    set_random(dt, data, 0, false);
    return;
  }
  switch (r) {
  case BACKEND_REDUCER_ADD:
  case BACKEND_REDUCER_OR: elem_set_i64(dt, data, 0, 0); break;
  case BACKEND_REDUCER_MUL: elem_set_i64(dt, data, 0, 1); break;
  case BACKEND_REDUCER_AND: elem_set_i64(dt, data, 0, -1); break;
  case BACKEND_REDUCER_MAX:
    if (fl) elem_set_f64(dt, data, 0, -INFINITY);
    else if (dtype_class(dt) == HLO_CLASS_SINT) elem_set_i64(dt, data, 0, int_min(dt));
    else elem_set_i64(dt, data, 0, 0);
    break;
  case BACKEND_REDUCER_MIN:
    if (fl) elem_set_f64(dt, data, 0, INFINITY);
    else elem_set_u64(dt, data, 0, int_max(dt));
    break;
  }
  if (dt == HLO_I1) elem_set_i64(dt, data, 0, elem_get_i64(dt, data, 0) & 1);
}

/* ------------------------------------------------------------ one case */

static int cases_run, cases_failed;

static bool same_desc(const backend_window *a, const backend_window *b) {
  backend_window x = *a, y = *b;
  memset(&x.loc, 0, sizeof x.loc);
  memset(&y.loc, 0, sizeof y.loc);
  if (x.kind == BACKEND_REDUCE_WINDOW) x.select = y.select = BACKEND_SELECT_GE;
  return !memcmp(&x, &y, sizeof x);
}

static void report(hlo_status st) {
  hlo_status_print(st, stderr);
  hlo_status_free(st);
}

/* Runs `want` on the interpreter and on the CPU backend; the results must
 * have the same bits. */
static void check_case(const char *what, const backend_window *want) {
  char *text = window_module(want);
  hlo_source src = tl_source(what, text);
  tl_run r;
  hlo_status st = tl_prepare(&src, 0, strlen(text), TL_VERIFY, NULL, &r);
  bool ok = !st;
  if (st) {
    fprintf(stderr, "%s: module does not parse or verify:\n%s", what, text);
    report(st);
  }
  const hlo_op *op = ok ? r.f->body.block.first : NULL;
  backend_window w;
  if (ok && !(ok = window_describe(op, &w)))
    fprintf(stderr, "%s: window_describe refused:\n%s", what, text);
  if (ok && !(ok = same_desc(&w, want)))
    fprintf(stderr, "%s: description changed through the text:\n%s", what, text);
  if (ok && !(ok = cpu_window_takes(&w))) fprintf(stderr, "%s: cpu_window_takes is false\n", what);
  bool ss = want->kind == BACKEND_SELECT_AND_SCATTER;
  uint32_t nin = ss ? 3 : 2;
  tensor *in[3] = {NULL, NULL, NULL}, *ref = NULL;
  void *got = NULL;
  bool specials = rand_in(0, 3) == 0;
  if (ok) {
    func_number_values(r.f);
    for (uint32_t i = 0; i < nin && ok; i++) {
      ok = (in[i] = tensor_new(op->operands[i]->type)) != NULL;
      for (int64_t e = 0; ok && e < in[i]->num_elems; e++)
        set_random(w.dtype, in[i]->data, e, specials && i == 0);
    }
    if (ok) set_init(w.dtype, w.reducer, in[nin - 1]->data);
    const hlo_value *vals[3] = {op->operands[0], op->operands[1], ss ? op->operands[2] : NULL};
    st = ok ? interp_run_op(r.it, op, vals, in, nin, &ref) : NULL;
    if (st) {
      fprintf(stderr, "%s: the interpreter failed:\n%s", what, text);
      report(st);
      ok = false;
    }
  }
  if (ok) {
    got = malloc(ref->nbytes + 1);
    ok = got != NULL;
  }
  if (ok) {
    memset(got, 0x7f, ref->nbytes + 1); /* garbage: every element must be written */
    void *ins[2] = {in[0]->data, in[1]->data}, *outs[1] = {got};
    st = ss ? cpu_select_and_scatter(&w, in[0]->data, in[1]->data, in[2]->data, got)
            : cpu_reduce_window(&w, ins, outs);
    if (st) {
      report(st);
      ok = false;
    }
  }
  hlo_dtype dt = want->dtype;
  bool fl = dtype_class(dt) == HLO_CLASS_FLOAT;
  for (int64_t e = 0; ok && e < ref->num_elems; e++) {
    uint64_t a = elem_get_bits(dt, got, e), b = elem_get_bits(dt, ref->data, e);
    if (a == b || (fl && isnan(elem_get_f64(dt, got, e)) && isnan(elem_get_f64(dt, ref->data, e))))
      continue;
    fprintf(stderr, "%s (%s): element %lld: cpu %.17g (bits %llx), interpreter %.17g (bits "
            "%llx)\n%s", what, hlo_dtype_name(dt), (long long)e, elem_get_f64(dt, got, e),
            (unsigned long long)a, elem_get_f64(dt, ref->data, e), (unsigned long long)b, text);
    ok = false;
  }
  if (ok) CHECK(((unsigned char *)got)[ref->nbytes] == 0x7f); /* nothing past the end */
  cases_run++;
  if (!ok) cases_failed++;
  CHECK(ok);
  free(got);
  for (uint32_t i = 0; i < 3; i++) tensor_release(in[i]);
  tensor_release(ref);
  tl_run_free(&r);
  free(text);
}

/* ------------------------------------------------------------ corpus */

typedef struct corpus_ctx {
  int ops, described, declined, taken;
} corpus_ctx;

static void walk_ops(const hlo_block *blk, const char *path, corpus_ctx *cx, int *n) {
  for (const hlo_op *op = blk->first; op; op = op->next) {
    for (uint32_t r = 0; r < op->num_regions; r++) walk_ops(&op->regions[r].block, path, cx, n);
    if (op->opcode != OP_REDUCE_WINDOW && op->opcode != OP_SELECT_AND_SCATTER) continue;
    cx->ops++;
    backend_window w;
    if (!window_describe(op, &w)) {
      cx->declined++;
      if (getenv("HLO_TEST_VERBOSE")) printf("not described: %s\n", path);
      continue;
    }
    cx->described++;
    if (!cpu_window_takes(&w)) {
      if (getenv("HLO_TEST_VERBOSE")) printf("not taken: %s\n", path);
      continue;
    }
    cx->taken++;
    char what[600];
    snprintf(what, sizeof what, "%s#%d", path, (*n)++);
    check_case(what, &w);
  }
}

static void corpus_file(const char *path, void *ctx) {
  corpus_ctx *cx = ctx;
  tl_file f;
  hlo_status st = tl_file_load(path, &f);
  if (st) {
    hlo_status_free(st);
    tl_file_free(&f);
    return;
  }
  if (!strstr(f.text, "reduce_window") && !strstr(f.text, "select_and_scatter")) {
    tl_file_free(&f);
    return;
  }
  int n = 0;
  for (size_t i = 0; i < f.num_pieces; i++) {
    hlo_module_ir *m = tl_parse_piece(&f.src, f.pieces[i].begin, f.pieces[i].end, &st);
    if (!m) {
      hlo_status_free(st);
      continue;
    }
    for (hlo_func *fn = m->funcs; fn; fn = fn->next) walk_ops(&fn->body.block, path, cx, &n);
    module_free(m);
  }
  tl_file_free(&f);
}

TEST(conformance_window_ops) {
  char dir[512];
  snprintf(dir, sizeof dir, "%s/conformance", tl_shared_dir());
  corpus_ctx cx = {0, 0, 0, 0};
  int before = cases_failed;
  size_t files = tl_for_each_mlir(dir, true, corpus_file, &cx);
  if (files == 0) {
    printf("conformance_window_ops: skipped (no .mlir files under %s)\n", dir);
    return;
  }
  printf("conformance: %zu files, %d reduce_window / select_and_scatter ops, %d described, %d "
         "taken and run, %d failed; %d not described (variadic, promoted or unknown regions: "
         "left to the interpreter)\n", files, cx.ops, cx.described, cx.taken,
         cases_failed - before, cx.declined);
  CHECK(cx.taken >= 80);
}

/* The window ops of one program file (all must be described and taken),
 * each with dim 0 cut to at most `max0` where the window leaves dim 0
 * alone. */
static void program_ops(const char *rel, int64_t max0, int expect) {
  char path[512];
  snprintf(path, sizeof path, "%s/%s", tl_shared_dir(), rel);
  tl_file f;
  hlo_status st = tl_file_read(path, &f);
  if (st) {
    printf("%s: skipped (%s)\n", rel, hlo_status_message(st));
    hlo_status_free(st);
    tl_file_free(&f);
    return;
  }
  hlo_module_ir *m = tl_parse_piece(&f.src, 0, f.len, &st);
  CHECK(m != NULL);
  if (!m) hlo_status_free(st);
  int n = 0;
  for (hlo_func *fn = m ? m->funcs : NULL; fn; fn = fn->next)
    for (const hlo_op *op = fn->body.block.first; op; op = op->next) {
      if (op->opcode != OP_REDUCE_WINDOW && op->opcode != OP_SELECT_AND_SCATTER) continue;
      backend_window w;
      bool d = window_describe(op, &w);
      CHECK(d && cpu_window_takes(&w));
      if (!d) continue;
      if (w.operand_dims[0] > max0 && w.window_dimensions[0] == 1 && w.window_strides[0] == 1 &&
          w.padding_low[0] == 0 && w.padding_high[0] == 0)
        w.operand_dims[0] = w.window_out_dims[0] = max0;
      char what[600];
      snprintf(what, sizeof what, "%s %s %d", rel,
               w.kind == BACKEND_REDUCE_WINDOW ? "reduce_window" : "select_and_scatter", n++);
      check_case(what, &w);
    }
  CHECK_EQ_INT(n, expect);
  module_free(m);
  tl_file_free(&f);
}

TEST(cnn_sgd_step_window_ops) {
  program_ops("perf/cnn_sgd_step_64x28x28/cnn_sgd_step_64x28x28.mlir", 2, 4);
}

/* ------------------------------------------------------------ random */

/* Windows along dim d (the spec's formula). */
static int64_t out_dim(const backend_window *w, uint32_t d) {
  int64_t x = w->operand_dims[d], k = w->window_dimensions[d];
  int64_t dil = x == 0 ? 0 : (x - 1) * w->base_dilations[d] + 1;
  int64_t padded = w->padding_low[d] + dil + w->padding_high[d];
  int64_t dw = k == 0 ? 0 : (k - 1) * w->window_dilations[d] + 1;
  return (padded <= 0 || dw > padded) ? 0 : (padded - dw) / w->window_strides[d] + 1;
}

static const hlo_dtype rw_types[] = {HLO_F32, HLO_F32, HLO_F32, HLO_F64, HLO_BF16, HLO_F16,
                                     HLO_I32, HLO_I64, HLO_I8,  HLO_UI8, HLO_UI32, HLO_I1};

/* A random window op of rank R: sizes 1-7 (0 now and then), windows 1-4,
 * strides 1-3, dilations 1-3, padding -2..3 (select_and_scatter: 0..2, no
 * dilations, windows >= 1, no empty result). */
static void random_window(backend_window *w, backend_window_kind kind, uint32_t R) {
  memset(w, 0, sizeof *w);
  bool ss = kind == BACKEND_SELECT_AND_SCATTER;
  w->kind = kind;
  w->rank = R;
  w->dtype = rw_types[rand_in(0, sizeof rw_types / sizeof rw_types[0] - 1)];
  bool integral = dtype_class(w->dtype) != HLO_CLASS_FLOAT;
  w->reducer = (backend_reducer)rand_in(0, integral ? 5 : 3);
  if (ss && rand_in(0, 1)) w->reducer = BACKEND_REDUCER_ADD;
  w->select = ss ? (backend_select)rand_in(0, 3) : BACKEND_SELECT_GE;
  for (int tries = 0; tries < 100; tries++) {
    for (uint32_t d = 0; d < R; d++) {
      bool plain = rand_in(0, 3) == 0; /* a dim the window leaves alone */
      w->operand_dims[d] = rand_in(0, 24) || ss ? rand_in(1, 7) : 0;
      w->window_dimensions[d] = plain ? 1 : rand_in(1, 4);
      w->window_strides[d] = plain ? 1 : rand_in(1, 3);
      w->base_dilations[d] = plain || ss || rand_in(0, 3) ? 1 : rand_in(2, 3);
      w->window_dilations[d] = plain || ss || rand_in(0, 2) ? 1 : rand_in(2, 3);
      w->padding_low[d] = plain ? 0 : ss ? rand_in(0, 2) : rand_in(-2, 3);
      w->padding_high[d] = plain ? 0 : ss ? rand_in(0, 2) : rand_in(-2, 3);
    }
    bool empty = false;
    for (uint32_t d = 0; d < R; d++) {
      w->window_out_dims[d] = out_dim(w, d);
      if (w->window_out_dims[d] == 0) empty = true;
    }
    if (!empty || (!ss && rand_in(0, 9) == 0)) return;
  }
}

TEST(random_reduce_windows) {
  const char *seed = getenv("HLO_TEST_SEED"); /* another seed, to look further */
  if (seed && strtoull(seed, NULL, 0)) rng = strtoull(seed, NULL, 0);
  int before = cases_failed;
  for (int i = 0; i < 400; i++) {
    backend_window w;
    random_window(&w, BACKEND_REDUCE_WINDOW, (uint32_t)rand_in(1, 4));
    char what[64];
    snprintf(what, sizeof what, "random reduce_window %d", i);
    check_case(what, &w);
  }
  printf("random reduce_window: 400 cases, %d failed\n", cases_failed - before);
}

TEST(random_select_and_scatters) {
  int before = cases_failed;
  for (int i = 0; i < 300; i++) {
    backend_window w;
    random_window(&w, BACKEND_SELECT_AND_SCATTER, (uint32_t)rand_in(1, 4));
    char what[64];
    snprintf(what, sizeof what, "random select_and_scatter %d", i);
    check_case(what, &w);
  }
  printf("random select_and_scatter: 300 cases, %d failed\n", cases_failed - before);
}

/* Pooling shapes large enough for the thread pool and the lane blocks:
 * NHWC and NCHW, 2x2 stride 2 and 3x3 stride 2 with padding, a window
 * over a run of more than 256 lanes, overlapping windows of more than
 * 1024 positions, and two shapes with enough work for the thread pool. */
TEST(pooling_shapes) {
  static const struct {
    int64_t x[4], k[4], s[4], p[4];
  } shapes[] = {
      {{3, 12, 12, 16}, {1, 2, 2, 1}, {1, 2, 2, 1}, {0, 0, 0, 0}},
      {{3, 13, 13, 8}, {1, 3, 3, 1}, {1, 2, 2, 1}, {0, 1, 1, 0}},
      {{3, 16, 12, 12}, {1, 1, 2, 2}, {1, 1, 2, 2}, {0, 0, 0, 0}},
      {{2, 8, 13, 13}, {1, 1, 3, 3}, {1, 1, 2, 2}, {0, 0, 1, 1}},
      {{2, 5, 3, 300}, {1, 3, 1, 1}, {1, 1, 1, 1}, {0, 1, 0, 0}},
      {{1, 40, 40, 1}, {1, 33, 33, 1}, {1, 1, 1, 1}, {0, 0, 0, 0}}, /* > KMAX positions */
      /* past window.c's WORK_MIN: rows spread over the thread pool */
      {{4, 24, 24, 16}, {1, 2, 2, 1}, {1, 2, 2, 1}, {0, 0, 0, 0}},
      {{4, 16, 24, 24}, {1, 1, 3, 3}, {1, 1, 2, 2}, {0, 0, 1, 1}},
  };
  for (size_t i = 0; i < sizeof shapes / sizeof shapes[0]; i++)
    for (int kind = 0; kind < 2; kind++) {
      backend_window w;
      memset(&w, 0, sizeof w);
      w.kind = kind ? BACKEND_SELECT_AND_SCATTER : BACKEND_REDUCE_WINDOW;
      w.rank = 4;
      w.dtype = HLO_F32;
      w.reducer = kind ? BACKEND_REDUCER_ADD : BACKEND_REDUCER_MAX;
      for (uint32_t d = 0; d < 4; d++) {
        w.operand_dims[d] = shapes[i].x[d];
        w.window_dimensions[d] = shapes[i].k[d];
        w.window_strides[d] = shapes[i].s[d];
        w.base_dilations[d] = w.window_dilations[d] = 1;
        w.padding_low[d] = w.padding_high[d] = shapes[i].p[d];
        w.window_out_dims[d] = out_dim(&w, d);
      }
      char what[64];
      snprintf(what, sizeof what, "pooling shape %zu (%s)", i, kind ? "s&s" : "max");
      check_case(what, &w);
      if (!kind) { /* and as an average pool's sum, init 0 */
        w.reducer = BACKEND_REDUCER_ADD;
        check_case(what, &w);
      }
    }
}

/* ------------------------------------------------------------ declines */

static const hlo_op *first_op(hlo_module_ir *m) { return module_entry(m, NULL)->body.block.first; }

TEST(declines) {
  /* variadic reduce_window, a body with two ops, a promoted scatter type,
   * TOTALORDER select, an unknown reducer (subtract), f8 and complex */
  static const char *const texts[] = {
      "func.func @main(%x: tensor<4xf32>, %y: tensor<4xi32>, %a: tensor<f32>, %b: tensor<i32>) "
      "-> (tensor<2xf32>, tensor<2xi32>) {\n"
      "  %0:2 = \"stablehlo.reduce_window\"(%x, %y, %a, %b) ({\n"
      "    ^bb0(%p: tensor<f32>, %q: tensor<i32>, %r: tensor<f32>, %s: tensor<i32>):\n"
      "      %m = stablehlo.maximum %p, %r : tensor<f32>\n"
      "      %n = stablehlo.maximum %q, %s : tensor<i32>\n"
      "      stablehlo.return %m, %n : tensor<f32>, tensor<i32>\n"
      "  }) {window_dimensions = array<i64: 2>, window_strides = array<i64: 2>} : "
      "(tensor<4xf32>, tensor<4xi32>, tensor<f32>, tensor<i32>) -> (tensor<2xf32>, tensor<2xi32>)\n"
      "  func.return %0#0, %0#1 : tensor<2xf32>, tensor<2xi32>\n}\n",
      "func.func @main(%x: tensor<4xf32>, %i: tensor<f32>) -> tensor<3xf32> {\n"
      "  %0 = \"stablehlo.reduce_window\"(%x, %i) ({\n"
      "    ^bb0(%a: tensor<f32>, %b: tensor<f32>):\n"
      "      %c = stablehlo.add %a, %b : tensor<f32>\n"
      "      %d = stablehlo.add %c, %b : tensor<f32>\n"
      "      stablehlo.return %d : tensor<f32>\n"
      "  }) {window_dimensions = array<i64: 2>} : (tensor<4xf32>, tensor<f32>) -> tensor<3xf32>\n"
      "  func.return %0 : tensor<3xf32>\n}\n",
      "func.func @main(%x: tensor<4xf32>, %i: tensor<f32>) -> tensor<3xf32> {\n"
      "  %0 = \"stablehlo.reduce_window\"(%x, %i) ({\n"
      "    ^bb0(%a: tensor<f32>, %b: tensor<f32>):\n"
      "      %c = stablehlo.subtract %a, %b : tensor<f32>\n"
      "      stablehlo.return %c : tensor<f32>\n"
      "  }) {window_dimensions = array<i64: 2>} : (tensor<4xf32>, tensor<f32>) -> tensor<3xf32>\n"
      "  func.return %0 : tensor<3xf32>\n}\n",
      "func.func @main(%x: tensor<4xf32>, %s: tensor<2xf32>, %i: tensor<f32>) -> tensor<4xf32> {\n"
      "  %0 = \"stablehlo.select_and_scatter\"(%x, %s, %i) ({\n"
      "    ^bb0(%a: tensor<f32>, %b: tensor<f32>):\n"
      "      %c = stablehlo.compare GE, %a, %b, TOTALORDER : (tensor<f32>, tensor<f32>) -> tensor<i1>\n"
      "      stablehlo.return %c : tensor<i1>\n"
      "  }, {\n"
      "    ^bb0(%a: tensor<f32>, %b: tensor<f32>):\n"
      "      %c = stablehlo.add %a, %b : tensor<f32>\n"
      "      stablehlo.return %c : tensor<f32>\n"
      "  }) {window_dimensions = array<i64: 2>, window_strides = array<i64: 2>} : "
      "(tensor<4xf32>, tensor<2xf32>, tensor<f32>) -> tensor<4xf32>\n"
      "  func.return %0 : tensor<4xf32>\n}\n",
  };
  for (size_t i = 0; i < sizeof texts / sizeof texts[0]; i++) {
    hlo_status st;
    hlo_source src = tl_source("declines", texts[i]);
    hlo_module_ir *m = tl_parse_piece(&src, 0, strlen(texts[i]), &st);
    CHECK(m != NULL);
    if (!m) {
      report(st);
      continue;
    }
    backend_window w;
    const hlo_op *op = first_op(m);
    CHECK(op->opcode == OP_REDUCE_WINDOW || op->opcode == OP_SELECT_AND_SCATTER);
    if (window_describe(op, &w)) {
      fprintf(stderr, "declines case %zu was described\n", i);
      CHECK(false);
    }
    CHECK(!window_describe(op->next, &w)); /* func.return */
    module_free(m);
  }
  /* a description of a type the backend does not compute: declined with
   * an error naming the op */
  backend_window w;
  memset(&w, 0, sizeof w);
  w.kind = BACKEND_REDUCE_WINDOW;
  w.rank = 1;
  w.operand_dims[0] = w.window_out_dims[0] = 4;
  w.window_dimensions[0] = w.window_strides[0] = w.base_dilations[0] = w.window_dilations[0] = 1;
  w.dtype = HLO_F8E4M3FN;
  CHECK(!cpu_window_takes(&w));
  w.dtype = HLO_C64;
  CHECK(!cpu_window_takes(&w));
  void *ptrs[2] = {NULL, NULL};
  hlo_status st = cpu_reduce_window(&w, ptrs, ptrs);
  CHECK(st && hlo_status_code_of(st) == HLO_UNIMPLEMENTED);
  hlo_status_free(st);
  w.dtype = HLO_F32;
  w.reducer = BACKEND_REDUCER_AND;
  CHECK(!cpu_window_takes(&w));
  w.reducer = BACKEND_REDUCER_ADD;
  CHECK(cpu_window_takes(&w));
  st = cpu_select_and_scatter(&w, NULL, NULL, NULL, NULL); /* wrong kind */
  CHECK(st && hlo_status_code_of(st) == HLO_UNIMPLEMENTED);
  hlo_status_free(st);
}

TEST_MAIN()
