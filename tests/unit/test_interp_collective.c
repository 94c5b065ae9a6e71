/* Unit tests of src/interp/interp_collective.c and interp_probe.c: the
 * conformance files that use interpreter.run_parallel / probe / print, run
 * piece by piece with the interpreter (their check ops must pass), plus the
 * failure paths: a deadlock is reported instead of hanging, an error in one
 * process wakes and fails the others, send/recv outside run_parallel. */
#include "test.h"
#include "testlib.h"

#include <stdint.h>
#include <unistd.h>
#include "interp/interp.h"
#include "parse/parse.h"

/* Parses src->text[b, e) and runs its entry function with no arguments; a
 * piece with no entry function (an empty piece) passes. */
static hlo_status run_piece(const hlo_source *src, size_t b, size_t e,
                            const interp_options *opts) {
  tl_run r;
  hlo_status st = tl_run_entry(src, b, e, 0, opts, &r);
  if (st && r.m && !r.f) {
    hlo_status_free(st);
    st = NULL;
  }
  tl_run_free(&r);
  return st;
}

static hlo_status run_string(const char *text, const interp_options *opts) {
  hlo_source src = tl_source("test.mlir", text);
  return run_piece(&src, 0, src.len, opts);
}

/* Runs every piece of conformance file interpret/<name>; returns the number
 * of failed pieces (printing each failure). */
static int run_conformance(const char *name, const interp_options *opts, int *pieces) {
  char path[1024];
  snprintf(path, sizeof path, "%s/conformance/interpret/%s", tl_shared_dir(), name);
  tl_file tf;
  hlo_status st = tl_file_read(path, &tf);
  if (st) {
    fprintf(stderr, "cannot read %s\n", path);
    hlo_status_free(st);
    tl_file_free(&tf);
    return 1;
  }
  int failed = 0;
  st = tl_file_split(&tf);
  if (st) {
    hlo_status_free(st);
    tl_file_free(&tf);
    return 1;
  }
  for (size_t i = 0; i < tf.num_pieces; i++) {
    st = run_piece(&tf.src, tf.pieces[i].begin, tf.pieces[i].end, opts);
    if (st) {
      hlo_status_print(st, stderr);
      hlo_status_free(st);
      failed++;
    }
  }
  *pieces = (int)tf.num_pieces;
  tl_file_free(&tf);
  return failed;
}

TEST(conformance_collectives) {
  static const char *files[] = {
      "all_gather.mlir", "all_reduce.mlir",        "all_to_all.mlir",
      "collective_broadcast.mlir", "collective_permute.mlir", "collective_reduce.mlir",
      "infeed.mlir",     "outfeed.mlir",           "partition_id.mlir",
      "replica_id.mlir", "reduce_scatter.mlir",    "send_recv.mlir",
  };
  interp_options opts = {NULL, NULL};
  for (size_t i = 0; i < sizeof files / sizeof files[0]; i++) {
    int pieces = 0;
    int failed = run_conformance(files[i], &opts, &pieces);
    if (failed) fprintf(stderr, "%s: %d of %d pieces failed\n", files[i], failed, pieces);
    CHECK_EQ_INT(failed, 0);
    CHECK(pieces >= 1);
  }
}

TEST(conformance_probe) {
  char dir[] = "/tmp/hlo_probe_XXXXXX";
  CHECK(mkdtemp(dir) != NULL);
  interp_options opts = {dir, NULL};
  int pieces = 0;
  CHECK_EQ_INT(run_conformance("probe.mlir", &opts, &pieces), 0);
  CHECK_EQ_INT(pieces, 9);
  /* The index of the last piece holds its two iterations. */
  char path[1100];
  snprintf(path, sizeof path, "%s/index.csv", dir);
  size_t len = 0;
  char *idx = tl_read_file(path, &len);
  CHECK(idx && strstr(idx, "probe_iterations,tensor<i64>,"));
  CHECK(idx && strstr(idx, "probe2.npy"));
  free(idx);
  /* Without a probe directory, probe fails cleanly. */
  interp_options none = {NULL, NULL};
  hlo_status st = run_string(
      "func.func @main() {\n"
      "  %0 = stablehlo.constant dense<1> : tensor<i64>\n"
      "  %1 = interpreter.probe %0, probe_id = \"x\" : tensor<i64>\n"
      "  func.return\n}\n", &none);
  CHECK_EQ_INT(hlo_status_code_of(st), HLO_INVALID_ARGUMENT);
  hlo_status_free(st);
  /* A wrong serialized value is a failed check. */
  st = run_string(
      "func.func @main() {\n"
      "  %0 = stablehlo.constant dense<[1, 2]> : tensor<2xi32>\n"
      "  %1 = stablehlo.constant dense<[1, 3]> : tensor<2xi32>\n"
      "  %2 = interpreter.probe %0, probe_id = \"y\" : tensor<2xi32>\n"
      "  check.expect_serialized_eq %1, probe_id = \"y\" : tensor<2xi32>\n"
      "  func.return\n}\n", &opts);
  CHECK_EQ_INT(hlo_status_code_of(st), HLO_FAILED_CHECK);
  CHECK(st && strstr(hlo_status_message(st), "element 1"));
  hlo_status_free(st);
  /* iter beyond what was probed: not found. */
  st = run_string(
      "func.func @main() {\n"
      "  %0 = stablehlo.constant dense<[1, 2]> : tensor<2xi32>\n"
      "  %2 = interpreter.probe %0, probe_id = \"y\" : tensor<2xi32>\n"
      "  check.expect_serialized_eq %0, probe_id = \"y\", iter = 1 : tensor<2xi32>\n"
      "  func.return\n}\n", &opts);
  CHECK_EQ_INT(hlo_status_code_of(st), HLO_NOT_FOUND);
  hlo_status_free(st);
  char cmd[1200];
  snprintf(cmd, sizeof cmd, "rm -rf '%s'", dir);
  CHECK(system(cmd) == 0);
}

/* printing.mlir's last piece: interpreter.print inside run_parallel, two
 * processes; each print is whole (no interleaving) and matches the CHECK
 * lines `%0 = tensor<2xi32> {` / `  [0, 1]` / `}`. */
TEST(print_inside_run_parallel) {
  char *buf = NULL;
  size_t blen = 0;
  FILE *f = open_memstream(&buf, &blen);
  CHECK(f != NULL);
  if (!f) return;
  interp_options opts = {NULL, f};
  hlo_status st = run_string(
      "func.func @iota_printing_called_inside_run_parallel() -> tensor<2xi32> {\n"
      "  %0 = stablehlo.iota dim = 0 : tensor<2xi32>\n"
      "  interpreter.print %0 : tensor<2xi32>\n"
      "  return %0 : tensor<2xi32>\n}\n"
      "func.func @main() {\n"
      "  %results:2 = \"interpreter.run_parallel\"() {\n"
      "    programs = [[@iota_printing_called_inside_run_parallel, "
      "@iota_printing_called_inside_run_parallel]]\n"
      "  } : () -> (tensor<2xi32>, tensor<2xi32>)\n"
      "  func.return\n}\n", &opts);
  if (st) hlo_status_print(st, stderr);
  CHECK(st == NULL);
  hlo_status_free(st);
  fclose(f);
  const char *one = "%0 = tensor<2xi32> {\n  [0, 1]\n}\n";
  char want[256];
  snprintf(want, sizeof want, "%s%s", one, one);
  CHECK_STR(buf, want);
  free(buf);
}

TEST(conformance_printing_file_runs) {
  char *buf = NULL;
  size_t blen = 0;
  FILE *f = open_memstream(&buf, &blen);
  interp_options opts = {NULL, f};
  int pieces = 0;
  CHECK_EQ_INT(run_conformance("printing.mlir", &opts, &pieces), 0);
  fclose(f);
  CHECK(buf && strstr(buf, "%0 = tensor<2xi32> {\n  [0, 1]\n}\n%0 = tensor<2xi32> {"));
  free(buf);
}

static const char *grid_prefix =
    "func.func @main() {\n"
    "  %0 = stablehlo.constant dense<[1, 2]> : tensor<2xi64>\n";

TEST(deadlock_is_reported) {
  /* Process 1 returns without joining process 0's all_reduce. */
  char text[2048];
  snprintf(text, sizeof text,
           "func.func @reduce(%%x : tensor<2xi64>) -> tensor<2xi64> {\n"
           "  %%r = \"stablehlo.all_reduce\"(%%x) ({\n"
           "    ^bb0(%%a: tensor<i64>, %%b: tensor<i64>):\n"
           "      %%s = stablehlo.add %%a, %%b : tensor<i64>\n"
           "      stablehlo.return %%s : tensor<i64>\n"
           "  }) {replica_groups = dense<[[0, 1]]> : tensor<1x2xi64>} : (tensor<2xi64>) -> "
           "tensor<2xi64>\n"
           "  return %%r : tensor<2xi64>\n}\n"
           "func.func @idle(%%x : tensor<2xi64>) -> tensor<2xi64> {\n"
           "  return %%x : tensor<2xi64>\n}\n"
           "%s"
           "  %%r:2 = \"interpreter.run_parallel\"(%%0, %%0) {programs = [[@reduce], [@idle]]}"
           " : (tensor<2xi64>, tensor<2xi64>) -> (tensor<2xi64>, tensor<2xi64>)\n"
           "  func.return\n}\n", grid_prefix);
  interp_options opts = {NULL, NULL};
  hlo_status st = run_string(text, &opts);
  CHECK_EQ_INT(hlo_status_code_of(st), HLO_INVALID_ARGUMENT);
  CHECK(st && strstr(hlo_status_message(st), "deadlock"));
  hlo_status_free(st);
  /* Two receivers and no sender. */
  st = run_string(
      "func.func @recv(%t : !stablehlo.token) -> (tensor<2xi64>, !stablehlo.token) {\n"
      "  %a, %b = \"stablehlo.recv\"(%t) {channel_handle = #stablehlo.channel_handle<handle = "
      "1, type = 3>, is_host_transfer = true} : (!stablehlo.token) -> (tensor<2xi64>, "
      "!stablehlo.token)\n"
      "  return %a, %b : tensor<2xi64>, !stablehlo.token\n}\n"
      "func.func @main() {\n"
      "  %t = stablehlo.after_all : !stablehlo.token\n"
      "  %r:4 = \"interpreter.run_parallel\"(%t, %t) {programs = [[@recv], [@recv]]} : "
      "(!stablehlo.token, !stablehlo.token) -> (tensor<2xi64>, !stablehlo.token, "
      "tensor<2xi64>, !stablehlo.token)\n"
      "  func.return\n}\n", &opts);
  CHECK_EQ_INT(hlo_status_code_of(st), HLO_INVALID_ARGUMENT);
  CHECK(st && strstr(hlo_status_message(st), "deadlock"));
  hlo_status_free(st);
}

TEST(error_in_one_process_fails_the_others) {
  char text[2048];
  snprintf(text, sizeof text,
           "func.func @reduce(%%x : tensor<2xi64>) -> tensor<2xi64> {\n"
           "  %%r = \"stablehlo.all_gather\"(%%x) {all_gather_dim = 0 : i64, replica_groups = "
           "dense<[[0, 1, 2]]> : tensor<1x3xi64>} : (tensor<2xi64>) -> tensor<6xi64>\n"
           "  %%s = stablehlo.slice %%r [0:2] : (tensor<6xi64>) -> tensor<2xi64>\n"
           "  return %%s : tensor<2xi64>\n}\n"
           "func.func @bad(%%x : tensor<2xi64>) -> tensor<2xi64> {\n"
           "  %%r = stablehlo.custom_call @no_such_target(%%x) : (tensor<2xi64>) -> "
           "tensor<2xi64>\n"
           "  return %%r : tensor<2xi64>\n}\n"
           "%s"
           "  %%r:3 = \"interpreter.run_parallel\"(%%0, %%0, %%0) {programs = [[@reduce], "
           "[@reduce], [@bad]]} : (tensor<2xi64>, tensor<2xi64>, tensor<2xi64>) -> "
           "(tensor<2xi64>, tensor<2xi64>, tensor<2xi64>)\n"
           "  func.return\n}\n", grid_prefix);
  interp_options opts = {NULL, NULL};
  hlo_status st = run_string(text, &opts);
  /* The primary error (the unknown target) wins over the others' aborts. */
  CHECK_EQ_INT(hlo_status_code_of(st), HLO_NOT_FOUND);
  CHECK(st && strstr(hlo_status_message(st), "no_such_target"));
  hlo_status_free(st);
}

TEST(collectives_outside_run_parallel) {
  interp_options opts = {NULL, NULL};
  /* A 1x1 grid: all_reduce of one process is the identity; ids are 0. */
  hlo_status st = run_string(
      "func.func @main() {\n"
      "  %0 = stablehlo.constant dense<[1, 2]> : tensor<2xi64>\n"
      "  %r = \"stablehlo.all_reduce\"(%0) ({\n"
      "    ^bb0(%a: tensor<i64>, %b: tensor<i64>):\n"
      "      %s = stablehlo.add %a, %b : tensor<i64>\n"
      "      stablehlo.return %s : tensor<i64>\n"
      "  }) {replica_groups = dense<[[0]]> : tensor<1x1xi64>} : (tensor<2xi64>) -> "
      "tensor<2xi64>\n"
      "  check.expect_eq_const %r, dense<[1, 2]> : tensor<2xi64>\n"
      "  %id = stablehlo.replica_id : tensor<ui32>\n"
      "  check.expect_eq_const %id, dense<0> : tensor<ui32>\n"
      "  func.return\n}\n", &opts);
  if (st) hlo_status_print(st, stderr);
  CHECK(st == NULL);
  hlo_status_free(st);
  st = run_string(
      "func.func @main() {\n"
      "  %t = stablehlo.after_all : !stablehlo.token\n"
      "  %a, %b = \"stablehlo.recv\"(%t) {channel_handle = #stablehlo.channel_handle<handle = "
      "1, type = 3>} : (!stablehlo.token) -> (tensor<2xi64>, !stablehlo.token)\n"
      "  func.return\n}\n", &opts);
  CHECK_EQ_INT(hlo_status_code_of(st), HLO_UNIMPLEMENTED);
  hlo_status_free(st);
}

TEST(run_parallel_bad_programs) {
  interp_options opts = {NULL, NULL};
  hlo_status st = run_string(
      "func.func @main() {\n"
      "  %r = \"interpreter.run_parallel\"() {programs = [[@missing]]} : () -> tensor<i64>\n"
      "  func.return\n}\n", &opts);
  CHECK_EQ_INT(hlo_status_code_of(st), HLO_NOT_FOUND);
  hlo_status_free(st);
}

TEST_MAIN()
