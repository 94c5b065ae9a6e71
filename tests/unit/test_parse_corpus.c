/* test_parse_corpus.c — parses every .mlir of the shared corpus
 * ($HLO_SHARED or ../shared: conformance/interpret, conformance/testdata incl.
 * dynamic/ and quantized/, models/), split at `// -----`; prints how many
 * pieces parsed and the failures; times tiny_llama_train_step; and checks
 * that truncated prefixes of sample files fail with a located error. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include "parse/parse.h"
#include "test.h"
#include "testlib.h"

/* Parses every piece of one file; returns the number of failed pieces. */
static int parse_file(const char *path, size_t *pieces, int *printed) {
  tl_file tf;
  hlo_status st = tl_file_load(path, &tf);
  if (st) { hlo_status_free(st); tl_file_free(&tf); return 1; }
  int fails = 0;
  for (size_t i = 0; i < tf.num_pieces; i++) {
    hlo_module_ir *m = tl_parse_piece(&tf.src, tf.pieces[i].begin, tf.pieces[i].end, &st);
    (*pieces)++;
    if (st) {
      fails++;
      if (*printed < 25) {
        hlo_status_print(st, stderr);
        (*printed)++;
      }
      hlo_status_free(st);
    } else {
      module_free(m);
    }
  }
  tl_file_free(&tf);
  return fails;
}

TEST(corpus_parses) {
  tl_paths ps = {0};
  char dir[1024];
  const char *subs[] = {"conformance/interpret", "conformance/testdata", "models"};
  for (int i = 0; i < 3; i++) {
    snprintf(dir, sizeof dir, "%s/%s", tl_shared_dir(), subs[i]);
    CHECK(tl_list_mlir(dir, true, NULL, NULL, &ps));
  }
  if (ps.n == 0) {
    printf("corpus_parses: no corpus found under %s (set HLO_SHARED)\n", tl_shared_dir());
    CHECK(ps.n > 0);
    return;
  }
  tl_paths_sort(&ps);
  size_t pieces = 0, failed_files = 0, failed_pieces = 0;
  int printed = 0;
  for (size_t i = 0; i < ps.n; i++) {
    int f = parse_file(ps.v[i], &pieces, &printed);
    if (f) { failed_files++; failed_pieces += (size_t)f; }
  }
  printf("corpus: %zu files, %zu pieces parsed, %zu pieces failed (%zu files)\n", ps.n,
         pieces - failed_pieces, failed_pieces, failed_files);
  CHECK_EQ_INT(failed_pieces, 0);
  tl_paths_free(&ps);
}

static double now_ms(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return ts.tv_sec * 1e3 + ts.tv_nsec / 1e6;
}

TEST(tiny_llama_speed) {
  char path[1024];
  snprintf(path, sizeof path, "%s/models/tiny_llama_train_step/tiny_llama_train_step.mlir", tl_shared_dir());
  size_t len;
  char *text = tl_read_file(path, &len);
  CHECK(text != NULL);
  if (!text) return;
  hlo_source src = {path, text, len, 1};
  double best = 1e9;
  int nops = 0;
  for (int rep = 0; rep < 5; rep++) {
    hlo_module_ir *m = NULL;
    double t0 = now_ms();
    hlo_status st = parse_module(&src, 0, len, &m);
    double t1 = now_ms();
    CHECK(st == NULL);
    if (st) { hlo_status_print(st, stderr); hlo_status_free(st); break; }
    if (t1 - t0 < best) best = t1 - t0;
    if (rep == 0) {
      for (hlo_func *f = m->funcs; f; f = f->next)
        for (hlo_op *op = f->body.block.first; op; op = op->next) nops++;
    }
    module_free(m);
  }
  printf("tiny_llama_train_step: %zu bytes, %d top-level ops, parse %.2f ms (best of 5)\n", len,
         nops, best);
#ifdef __OPTIMIZE__
#if !defined(__SANITIZE_ADDRESS__)
  CHECK(best < 20.0);
#endif
#endif
  free(text);
}

/* Every prefix of a valid file, cut at many points, must either parse or
 * fail with a located parse error; never crash. */
TEST(truncation) {
  const char *files[] = {"models/tiny_llama_train_step/tiny_llama_train_step.mlir",
                         "models/cnn_sgd_step/cnn_sgd_step.mlir",
                         "models/sort_topk/sort_topk.mlir",
                         "models/lstm_scan/lstm_scan.mlir",
                         "conformance/interpret/while.mlir",
                         "conformance/interpret/reduce.mlir",
                         "conformance/interpret/convolution.mlir",
                         "conformance/interpret/quantized_ops.mlir",
                         "conformance/interpret/constant.mlir"};
  int tried = 0, located = 0, bad = 0;
  for (size_t fi = 0; fi < sizeof files / sizeof *files; fi++) {
    char path[1024];
    snprintf(path, sizeof path, "%s/%s", tl_shared_dir(), files[fi]);
    size_t len;
    char *text = tl_read_file(path, &len);
    if (!text) continue;
    split_piece *p;
    size_t n;
    hlo_status st = parse_split(text, len, &p, &n);
    if (st) { hlo_status_free(st); free(text); continue; }
    size_t end = p[0].end;
    for (int k = 1; k < 40; k++) {
      size_t cut = p[0].begin + (end - p[0].begin) * (size_t)k / 40 + (size_t)k * 7 % 13;
      if (cut >= end) continue;
      hlo_source src = {path, text, len, 1};
      hlo_module_ir *m = NULL;
      st = parse_module(&src, p[0].begin, cut, &m);
      tried++;
      if (!st) { module_free(m); continue; }
      if (hlo_status_code_of(st) == HLO_PARSE_ERROR && status_loc(st)) located++;
      else {
        bad++;
        hlo_status_print(st, stderr);
      }
      hlo_status_free(st);
    }
    /* byte corruption: replace one byte at a few positions */
    for (int k = 1; k < 20; k++) {
      size_t at = p[0].begin + (end - p[0].begin) * (size_t)k / 20;
      if (at >= end) continue;
      char saved = text[at];
      text[at] = "}{)(<>%#\"x:,=@ "[k % 15];
      hlo_source src = {path, text, len, 1};
      hlo_module_ir *m = NULL;
      st = parse_module(&src, p[0].begin, end, &m);
      if (st) hlo_status_free(st);
      else module_free(m);
      text[at] = saved;
    }
    free(p);
    free(text);
  }
  printf("truncation: %d prefixes, %d located errors, %d other\n", tried, located, bad);
  CHECK(tried > 0);
  CHECK_EQ_INT(bad, 0);
}

TEST_MAIN()
