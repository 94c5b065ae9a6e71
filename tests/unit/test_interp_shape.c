/* test_interp_shape.c — the interpreter's data-movement and reduction
 * kernels (interp_shape.c, interp_gather.c, interp_reduce.c, interp_sort.c).
 *
 * 1. Hand-written programs whose results are compared element by element
 *    here (clamping, out-of-bounds scatter updates, stable sort, negative
 *    padding, sub-byte types, bad attributes giving errors, not crashes).
 * 2. The conformance corpus ($HLO_SHARED or ../shared): the interpret/ files
 *    of these ops must all pass; the testdata/ files of these ops are run and
 *    reported as "passed N of M"; a file that fails only because some other
 *    op is not implemented yet is listed as skipped with its reason. */
#include <dirent.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include "interp/interp.h"
#include "parse/parse.h"
#include "test.h"
#include "testlib.h"

/* Checks result `k` of `r` holds the integers want[0..n). */
static int result_is(const tl_run *r, uint32_t k, const int64_t *want, int64_t n) {
  if (k >= r->n || !r->res[k] || r->res[k]->num_elems != n) return 0;
  const tensor *t = r->res[k];
  for (int64_t i = 0; i < n; i++) {
    int64_t got = dtype_class(t->type->dtype) == HLO_CLASS_FLOAT
                      ? (int64_t)elem_get_f64(t->type->dtype, t->data, i)
                      : elem_get_i64(t->type->dtype, t->data, i);
    if (got != want[i]) {
      fprintf(stderr, "  result %u element %lld: got %lld, want %lld\n", k, (long long)i,
              (long long)got, (long long)want[i]);
      return 0;
    }
  }
  return 1;
}

/* Runs `text`, expecting success and result 0 equal to want[0..n). */
static int expect_ints(const char *text, const int64_t *want, int64_t n) {
  tl_run r;
  hlo_status st = tl_run_text("inline.mlir", text, 0, NULL, NULL, 0, &r);
  int ok = 0;
  if (st) {
    hlo_status_print(st, stderr);
    hlo_status_free(st);
  } else {
    ok = result_is(&r, 0, want, n);
  }
  tl_run_free(&r);
  return ok;
}

/* Runs `text`, expecting a located error (not a crash) of code `code`. */
static int expect_error(const char *text, hlo_status_code code) {
  tl_run r;
  hlo_status st = tl_run_text("inline.mlir", text, 0, NULL, NULL, 0, &r);
  int ok = st && hlo_status_code_of(st) == code && status_loc(st) && status_loc(st)->line > 0;
  if (!ok && st) hlo_status_print(st, stderr);
  if (!st) fprintf(stderr, "  expected an error, got none\n");
  hlo_status_free(st);
  tl_run_free(&r);
  return ok;
}

#define N(a) ((int64_t)(sizeof(a) / sizeof((a)[0])))

TEST(dynamic_slice_clamps_unsigned_and_negative_starts) {
  /* 0xFFFFFFFF as ui32 is huge, not -1: clamps to dim - size = 2. */
  static const int64_t want[] = {3, 4};
  CHECK(expect_ints("func.func @main() -> tensor<2xi32> {\n"
                    "  %x = stablehlo.constant dense<[1, 2, 3, 4]> : tensor<4xi32>\n"
                    "  %s = stablehlo.constant dense<4294967295> : tensor<ui32>\n"
                    "  %r = stablehlo.dynamic_slice %x, %s, sizes = [2] : (tensor<4xi32>, "
                    "tensor<ui32>) -> tensor<2xi32>\n"
                    "  func.return %r : tensor<2xi32>\n}\n",
                    want, N(want)));
  static const int64_t want2[] = {1, 2};
  CHECK(expect_ints("func.func @main() -> tensor<2xi32> {\n"
                    "  %x = stablehlo.constant dense<[1, 2, 3, 4]> : tensor<4xi32>\n"
                    "  %s = stablehlo.constant dense<-7> : tensor<i8>\n"
                    "  %r = stablehlo.dynamic_slice %x, %s, sizes = [2] : (tensor<4xi32>, "
                    "tensor<i8>) -> tensor<2xi32>\n"
                    "  func.return %r : tensor<2xi32>\n}\n",
                    want2, N(want2)));
}

TEST(dynamic_update_slice_clamps) {
  static const int64_t want[] = {1, 2, 8, 9};
  CHECK(expect_ints("func.func @main() -> tensor<4xi64> {\n"
                    "  %x = stablehlo.constant dense<[1, 2, 3, 4]> : tensor<4xi64>\n"
                    "  %u = stablehlo.constant dense<[8, 9]> : tensor<2xi64>\n"
                    "  %s = stablehlo.constant dense<3> : tensor<i64>\n"
                    "  %r = stablehlo.dynamic_update_slice %x, %u, %s : (tensor<4xi64>, "
                    "tensor<2xi64>, tensor<i64>) -> tensor<4xi64>\n"
                    "  func.return %r : tensor<4xi64>\n}\n",
                    want, N(want)));
}

TEST(pad_negative_and_interior) {
  /* [1,2,3] low=-1 high=1 interior=1: [1,P,2,P,3] drop 1 → [P,2,P,3,P]. */
  static const int64_t want[] = {0, 2, 0, 3, 0};
  CHECK(expect_ints("func.func @main() -> tensor<5xi4> {\n"
                    "  %x = stablehlo.constant dense<[1, 2, 3]> : tensor<3xi4>\n"
                    "  %p = stablehlo.constant dense<0> : tensor<i4>\n"
                    "  %r = stablehlo.pad %x, %p, low = [-1], high = [1], interior = [1] : "
                    "(tensor<3xi4>, tensor<i4>) -> tensor<5xi4>\n"
                    "  func.return %r : tensor<5xi4>\n}\n",
                    want, N(want)));
}

TEST(sort_is_stable_with_two_operands) {
  /* Keys compare only on the first operand; equal keys keep their order. */
  static const int64_t want_keys[] = {1, 1, 2, 2, 3};
  static const int64_t want_vals[] = {1, 3, 0, 4, 2};
  tl_run r;
  hlo_status st = tl_run_text("inline.mlir",
      "func.func @main() -> (tensor<5xi32>, tensor<5xi32>) {\n"
      "  %k = stablehlo.constant dense<[2, 1, 3, 1, 2]> : tensor<5xi32>\n"
      "  %v = stablehlo.constant dense<[0, 1, 2, 3, 4]> : tensor<5xi32>\n"
      "  %r:2 = \"stablehlo.sort\"(%k, %v) ({\n"
      "  ^bb0(%a: tensor<i32>, %b: tensor<i32>, %c: tensor<i32>, %d: tensor<i32>):\n"
      "    %lt = stablehlo.compare LT, %a, %b, SIGNED : (tensor<i32>, tensor<i32>) -> "
      "tensor<i1>\n"
      "    stablehlo.return %lt : tensor<i1>\n"
      "  }) {dimension = 0 : i64, is_stable = true} : (tensor<5xi32>, tensor<5xi32>) -> "
      "(tensor<5xi32>, tensor<5xi32>)\n"
      "  func.return %r#0, %r#1 : tensor<5xi32>, tensor<5xi32>\n}\n", 0, NULL, NULL, 0,
      &r);
  if (st) {
    hlo_status_print(st, stderr);
    hlo_status_free(st);
    CHECK(0);
  } else {
    CHECK(result_is(&r, 0, want_keys, N(want_keys)));
    CHECK(result_is(&r, 1, want_vals, N(want_vals)));
  }
  tl_run_free(&r);
}

TEST(scatter_skips_out_of_bounds_updates) {
  static const int64_t want[] = {10, 1, 2, 0};
  CHECK(expect_ints(
      "func.func @main() -> tensor<4xi64> {\n"
      "  %x = stablehlo.constant dense<0> : tensor<4xi64>\n"
      "  %i = stablehlo.constant dense<[[0], [2], [1], [-1], [4], [0]]> : tensor<6x1xi64>\n"
      "  %u = stablehlo.constant dense<[4, 2, 1, 100, 100, 6]> : tensor<6xi64>\n"
      "  %r = \"stablehlo.scatter\"(%x, %i, %u) ({\n"
      "  ^bb0(%a: tensor<i64>, %b: tensor<i64>):\n"
      "    %s = stablehlo.add %a, %b : tensor<i64>\n"
      "    stablehlo.return %s : tensor<i64>\n"
      "  }) {scatter_dimension_numbers = #stablehlo.scatter<inserted_window_dims = [0], "
      "scatter_dims_to_operand_dims = [0], index_vector_dim = 1>} : (tensor<4xi64>, "
      "tensor<6x1xi64>, tensor<6xi64>) -> tensor<4xi64>\n"
      "  func.return %r : tensor<4xi64>\n}\n",
      want, N(want)));
}

TEST(gather_clamps_start_indices) {
  /* Slices of 2 from [0..5): start 9 clamps to 3, start -4 to 0. */
  static const int64_t want[] = {3, 4, 0, 1};
  CHECK(expect_ints(
      "func.func @main() -> tensor<2x2xi32> {\n"
      "  %x = stablehlo.iota dim = 0 : tensor<5xi32>\n"
      "  %i = stablehlo.constant dense<[9, -4]> : tensor<2xi32>\n"
      "  %r = \"stablehlo.gather\"(%x, %i) {dimension_numbers = #stablehlo.gather<offset_dims = "
      "[1], start_index_map = [0], index_vector_dim = 1>, slice_sizes = array<i64: 2>} : "
      "(tensor<5xi32>, tensor<2xi32>) -> tensor<2x2xi32>\n"
      "  func.return %r : tensor<2x2xi32>\n}\n",
      want, N(want)));
}

TEST(reduce_window_with_padding_and_base_dilation) {
  /* x = [1,2,3], base_dilation 2 → [1,0,2,0,3] (holes = init 0),
   * padding [1,0] → [0,1,0,2,0,3]; windows of 2, stride 2: [1, 2, 3]. */
  static const int64_t want[] = {1, 2, 3};
  CHECK(expect_ints(
      "func.func @main() -> tensor<3xi32> {\n"
      "  %x = stablehlo.constant dense<[1, 2, 3]> : tensor<3xi32>\n"
      "  %z = stablehlo.constant dense<0> : tensor<i32>\n"
      "  %r = \"stablehlo.reduce_window\"(%x, %z) ({\n"
      "  ^bb0(%a: tensor<i32>, %b: tensor<i32>):\n"
      "    %s = stablehlo.add %a, %b : tensor<i32>\n"
      "    stablehlo.return %s : tensor<i32>\n"
      "  }) {window_dimensions = array<i64: 2>, window_strides = array<i64: 2>, "
      "base_dilations = array<i64: 2>, padding = dense<[[1, 0]]> : tensor<1x2xi64>} : "
      "(tensor<3xi32>, tensor<i32>) -> tensor<3xi32>\n"
      "  func.return %r : tensor<3xi32>\n}\n",
      want, N(want)));
}

TEST(transpose_reverse_broadcast_f8) {
  /* Data movement copies bytes: values survive on f8E4M3FN. */
  static const int64_t want[] = {3, 1, 4, 2};
  CHECK(expect_ints("func.func @main() -> tensor<2x2xf8E4M3FN> {\n"
                    "  %x = stablehlo.constant dense<[[1.0, 2.0], [3.0, 4.0]]> : "
                    "tensor<2x2xf8E4M3FN>\n"
                    "  %t = stablehlo.transpose %x, dims = [1, 0] : (tensor<2x2xf8E4M3FN>) -> "
                    "tensor<2x2xf8E4M3FN>\n"
                    "  %r = stablehlo.reverse %t, dims = [1] : tensor<2x2xf8E4M3FN>\n"
                    "  func.return %r : tensor<2x2xf8E4M3FN>\n}\n",
                    want, N(want)));
  static const int64_t want3[] = {1, 2, 1, 2, 1, 2};
  CHECK(expect_ints("func.func @main() -> tensor<3x2xui2> {\n"
                    "  %x = stablehlo.constant dense<[1, 2]> : tensor<2xui2>\n"
                    "  %r = stablehlo.broadcast_in_dim %x, dims = [1] : (tensor<2xui2>) -> "
                    "tensor<3x2xui2>\n"
                    "  func.return %r : tensor<3x2xui2>\n}\n",
                    want3, N(want3)));
}

TEST(deprecated_broadcast_and_tuples) {
  static const int64_t want[] = {1, 2, 1, 2, 1, 2};
  CHECK(expect_ints("func.func @main() -> tensor<3x2xi16> {\n"
                    "  %x = stablehlo.constant dense<[1, 2]> : tensor<2xi16>\n"
                    "  %r = \"stablehlo.broadcast\"(%x) {broadcast_sizes = array<i64: 3>} : "
                    "(tensor<2xi16>) -> tensor<3x2xi16>\n"
                    "  %t = stablehlo.tuple %x, %r : tuple<tensor<2xi16>, tensor<3x2xi16>>\n"
                    "  %e = stablehlo.get_tuple_element %t[1] : (tuple<tensor<2xi16>, "
                    "tensor<3x2xi16>>) -> tensor<3x2xi16>\n"
                    "  func.return %e : tensor<3x2xi16>\n}\n",
                    want, N(want)));
}

TEST(bad_attributes_are_errors_not_crashes) {
  CHECK(expect_error("func.func @main() -> tensor<2x2xi32> {\n"
                     "  %x = stablehlo.constant dense<[[1, 2], [3, 4]]> : tensor<2x2xi32>\n"
                     "  %r = \"stablehlo.transpose\"(%x) {permutation = array<i64: 0, 7>} : "
                     "(tensor<2x2xi32>) -> tensor<2x2xi32>\n"
                     "  func.return %r : tensor<2x2xi32>\n}\n",
                     HLO_INVALID_ARGUMENT));
  CHECK(expect_error("func.func @main() -> tensor<2xi32> {\n"
                     "  %x = stablehlo.constant dense<[1, 2, 3, 4]> : tensor<4xi32>\n"
                     "  %r = \"stablehlo.slice\"(%x) {start_indices = array<i64: 3>, "
                     "limit_indices = array<i64: 5>, strides = array<i64: 1>} : "
                     "(tensor<4xi32>) -> tensor<2xi32>\n"
                     "  func.return %r : tensor<2xi32>\n}\n",
                     HLO_OUT_OF_RANGE));
  CHECK(expect_error("func.func @main() -> tensor<2xi32> {\n"
                     "  %x = stablehlo.constant dense<[1, 2, 3, 4]> : tensor<4xi32>\n"
                     "  %r = \"stablehlo.broadcast_in_dim\"(%x) {broadcast_dimensions = "
                     "array<i64: 3>} : (tensor<4xi32>) -> tensor<2xi32>\n"
                     "  func.return %r : tensor<2xi32>\n}\n",
                     HLO_INVALID_ARGUMENT));
  CHECK(expect_error("func.func @main() -> tensor<2x2xi32> {\n"
                     "  %x = stablehlo.iota dim = 0 : tensor<5xi32>\n"
                     "  %i = stablehlo.constant dense<[1, 2]> : tensor<2xi32>\n"
                     "  %r = \"stablehlo.gather\"(%x, %i) {dimension_numbers = "
                     "#stablehlo.gather<offset_dims = [1], start_index_map = [4], "
                     "index_vector_dim = 1>, slice_sizes = array<i64: 2>} : "
                     "(tensor<5xi32>, tensor<2xi32>) -> tensor<2x2xi32>\n"
                     "  func.return %r : tensor<2x2xi32>\n}\n",
                     HLO_INVALID_ARGUMENT));
  CHECK(expect_error("func.func @main() -> tensor<3xi32> {\n"
                     "  %x = stablehlo.constant dense<[1, 2]> : tensor<2xi32>\n"
                     "  %p = stablehlo.constant dense<0> : tensor<i32>\n"
                     "  %r = \"stablehlo.pad\"(%x, %p) {edge_padding_low = array<i64: 0>, "
                     "edge_padding_high = array<i64: 0>, interior_padding = array<i64: "
                     "9223372036854775807>} : (tensor<2xi32>, tensor<i32>) -> tensor<3xi32>\n"
                     "  func.return %r : tensor<3xi32>\n}\n",
                     HLO_INVALID_ARGUMENT));
  CHECK(expect_error("func.func @main() -> tensor<2xi32> {\n"
                     "  %x = stablehlo.constant dense<[1, 2, 3, 4]> : tensor<4xi32>\n"
                     "  %r = \"stablehlo.slice\"(%x) {start_indices = array<i64: "
                     "9223372036854775807>, limit_indices = array<i64: 4>, strides = "
                     "array<i64: 9223372036854775807>} : (tensor<4xi32>) -> tensor<2xi32>\n"
                     "  func.return %r : tensor<2xi32>\n}\n",
                     HLO_OUT_OF_RANGE));
  CHECK(expect_error("func.func @main() -> tensor<1xi32> {\n"
                     "  %x = stablehlo.constant dense<[1, 2]> : tensor<2xi32>\n"
                     "  %z = stablehlo.constant dense<0> : tensor<i32>\n"
                     "  %r = \"stablehlo.reduce_window\"(%x, %z) ({\n"
                     "  ^bb0(%a: tensor<i32>, %b: tensor<i32>):\n"
                     "    %s = stablehlo.add %a, %b : tensor<i32>\n"
                     "    stablehlo.return %s : tensor<i32>\n"
                     "  }) {window_dimensions = array<i64: 5>} : (tensor<2xi32>, tensor<i32>) -> "
                     "tensor<1xi32>\n"
                     "  func.return %r : tensor<1xi32>\n}\n",
                     HLO_OUT_OF_RANGE));
  /* A huge scatter index is out of bounds: the update is skipped. */
  static const int64_t want[] = {0, 5};
  CHECK(expect_ints(
      "func.func @main() -> tensor<2xi64> {\n"
      "  %x = stablehlo.constant dense<0> : tensor<2xi64>\n"
      "  %i = stablehlo.constant dense<[[9223372036854775807], [1]]> : tensor<2x1xi64>\n"
      "  %u = stablehlo.constant dense<[[7, 7], [5, 5]]> : tensor<2x2xi64>\n"
      "  %r = \"stablehlo.scatter\"(%x, %i, %u) ({\n"
      "  ^bb0(%a: tensor<i64>, %b: tensor<i64>):\n"
      "    stablehlo.return %b : tensor<i64>\n"
      "  }) {scatter_dimension_numbers = #stablehlo.scatter<update_window_dims = [1], "
      "scatter_dims_to_operand_dims = [0], index_vector_dim = 1>} : (tensor<2xi64>, "
      "tensor<2x1xi64>, tensor<2x2xi64>) -> tensor<2xi64>\n"
      "  func.return %r : tensor<2xi64>\n}\n",
      want, N(want)));
}

/* ------------------------------------------------------------ corpus */

/* Outcome of one file. */
typedef enum { FILE_PASS, FILE_FAIL, FILE_SKIP } outcome;

/* Runs every piece of `path`; on failure writes the first error to `why`. */
static outcome run_file(const char *path, char *why, size_t whylen) {
  tl_file tf;
  hlo_status st = tl_file_read(path, &tf);
  if (st) {
    hlo_status_free(st);
    tl_file_free(&tf);
    snprintf(why, whylen, "cannot read");
    return FILE_FAIL;
  }
  if (strstr(tf.text, "RUN-DISABLED")) {
    tl_file_free(&tf);
    snprintf(why, whylen, "RUN-DISABLED");
    return FILE_SKIP;
  }
  outcome res = FILE_PASS;
  st = tl_file_split(&tf);
  if (st) {
    snprintf(why, whylen, "%s", hlo_status_message(st));
    hlo_status_free(st);
    tl_file_free(&tf);
    return FILE_FAIL;
  }
  /* pieces are parsed against the whole text (tf.src.first_line is 1) */
  for (size_t i = 0; i < tf.num_pieces && res == FILE_PASS; i++) {
    tl_run r;
    st = tl_run_entry(&tf.src, tf.pieces[i].begin, tf.pieces[i].end, 0, NULL, &r);
    if (st) {
      const hlo_loc *loc = status_loc(st);
      snprintf(why, whylen, "piece %zu: line %u: %s: %s", i + 1, loc ? loc->line : 0,
               hlo_status_code_name(hlo_status_code_of(st)), hlo_status_message(st));
      res = hlo_status_code_of(st) == HLO_UNIMPLEMENTED ? FILE_SKIP : FILE_FAIL;
      hlo_status_free(st);
    }
    tl_run_free(&r);
  }
  tl_file_free(&tf);
  return res;
}

/* The interpret/ files of the ops these kernels implement: all must pass. */
static const char *const interpret_files[] = {
    "broadcast_in_dim", "concatenate", "constant", "dynamic_broadcast_in_dim", "dynamic_gather",
    "dynamic_iota", "dynamic_pad", "dynamic_reshape", "dynamic_slice", "dynamic_update_slice",
    "gather", "get_dimension_size", "iota", "pad", "reduce", "reduce_window", "reshape",
    "reverse", "scatter", "select_and_scatter", "slice", "sort", "transpose",
    "tuple_and_get_tuple_element",
};

TEST(conformance_interpret_files) {
  char path[1024], why[512];
  int passed = 0, total = 0;
  for (size_t i = 0; i < sizeof interpret_files / sizeof *interpret_files; i++) {
    snprintf(path, sizeof path, "%s/conformance/interpret/%s.mlir", tl_shared_dir(),
             interpret_files[i]);
    total++;
    outcome o = run_file(path, why, sizeof why);
    if (o == FILE_PASS) passed++;
    else fprintf(stderr, "  %s %s: %s\n", o == FILE_SKIP ? "SKIP" : "FAIL", interpret_files[i], why);
    CHECK(o == FILE_PASS);
  }
  printf("interpret/ files of shape/reduce ops: passed %d of %d\n", passed, total);
}

/* testdata/ files named after these ops (JAX's names). */
static const char *const testdata_prefixes[] = {
    "scatter", "select_and_scatter", "dynamic_slice_", "slice_", "dynamic_update_slice_",
    "argmin_", "argmax_", "squeeze_", "sort_", "reduce_window_", "broadcast_in_dim_",
    "transpose_", "rev_", "reshape_", "reduce_", "gather_", "concatenate_", "pad_", "cumsum_",
    "cumprod_", "cummax_", "cummin_", "select_and_gather_add_", NULL,
};

TEST(conformance_testdata_files) {
  char dir[1024], why[512];
  snprintf(dir, sizeof dir, "%s/conformance/testdata", tl_shared_dir());
  DIR *d = opendir(dir);
  if (!d) {
    printf("testdata/: skipped (cannot open %s)\n", dir);
    return;
  }
  closedir(d);
  tl_paths ps = {0};
  CHECK(tl_list_mlir(dir, false, tl_name_has_prefix, testdata_prefixes, &ps));
  tl_paths_sort(&ps);
  size_t n = ps.n;
  int passed = 0, failed = 0, skipped = 0;
  clock_t t0 = clock();
  for (size_t i = 0; i < n; i++) {
    const char *name = ps.v[i] + strlen(dir) + 1;
    outcome o = run_file(ps.v[i], why, sizeof why);
    if (o == FILE_PASS) {
      passed++;
    } else if (o == FILE_SKIP) {
      if (skipped++ < 15) fprintf(stderr, "  SKIP %s: %s\n", name, why);
    } else {
      if (failed++ < 40) fprintf(stderr, "  FAIL %s: %s\n", name, why);
    }
  }
  tl_paths_free(&ps);
  printf("testdata/ files of shape/reduce ops: passed %d of %zu (%d failed, %d skipped: "
         "unimplemented op or RUN-DISABLED) in %.1f s\n",
         passed, n, failed, skipped, (double)(clock() - t0) / CLOCKS_PER_SEC);
  CHECK(n > 0);
  CHECK(failed == 0);
}

TEST_MAIN()
