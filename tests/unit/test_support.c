/* Unit tests of src/support and src/ir/element: arena, strbuf, status
 * formatting, float conversions for every float element type. */
#include "support/runmap.h"
#include "test.h"

#include "ir/element.h"
#include "support/arena.h"
#include "support/fill.h"
#include "support/float.h"
#include "support/status.h"
#include "support/strbuf.h"

TEST(arena_basics) {
  arena a;
  arena_init(&a);
  char *s = arena_strdup(&a, "hello");
  CHECK_STR(s, "hello");
  void *big = arena_alloc(&a, 200000);
  CHECK(big != NULL);
  CHECK(arena_alloc(&a, (size_t)1 << 41) == NULL);
  CHECK(arena_calloc(&a, SIZE_MAX / 2, 4) == NULL);
  arena_deinit(&a);
}

TEST(alloc_failure_hook) {
  arena a;
  arena_init(&a);
  hlo_fail_alloc_after = 1;
  CHECK(arena_alloc(&a, 16) == NULL);
  CHECK(arena_alloc(&a, 16) != NULL);
  arena_deinit(&a);
}

TEST(strbuf_printf) {
  strbuf b;
  sb_init(&b);
  for (int i = 0; i < 1000; i++) sb_printf(&b, "%d,", i);
  CHECK(b.len > 3000);
  CHECK(strncmp(sb_cstr(&b), "0,1,2,", 6) == 0);
  char *s = sb_take(&b);
  free(s);
}

TEST(status_located) {
  hlo_source src = {"m.mlir", "line one\n  bad token here\n", 26, 1};
  hlo_loc loc = {&src, 2, 3};
  hlo_status s = status_at(HLO_PARSE_ERROR, &loc, "unexpected '%s'", "bad");
  CHECK_EQ_INT(hlo_status_code_of(s), HLO_PARSE_ERROR);
  CHECK_STR(hlo_status_message(s), "unexpected 'bad'");
  char buf[512] = {0};
  FILE *f = fmemopen(buf, sizeof buf, "w");
  hlo_status_print(status_note(s, "while parsing"), f);
  fclose(f);
  CHECK_STR(buf, "m.mlir:2:3: error: unexpected 'bad'\n  bad token here\n  ^\nnote: while parsing\n");
  hlo_status_free(s);
  CHECK(hlo_status_code_of(NULL) == HLO_OK);
}

/* status_locate gives an unlocated error the op's place, never moves a located one */
TEST(status_locate_once) {
  hlo_source src = {"m.mlir", "line one\n  %0 = stablehlo.dot_general\n", 38, 1};
  hlo_loc loc = {&src, 2, 3}, other = {&src, 1, 1};
  hlo_status s = status_new(HLO_INTERNAL, "gemm failed");
  CHECK(status_loc(s) == NULL);
  CHECK(status_locate(s, &loc) == s);
  CHECK(status_loc(s) != NULL && status_loc(s)->line == 2 && status_loc(s)->col == 3);
  CHECK_STR(status_file(s), "m.mlir");
  status_locate(s, &other);
  CHECK(status_loc(s)->line == 2);
  char buf[512] = {0};
  FILE *f = fmemopen(buf, sizeof buf, "w");
  hlo_status_print(s, f);
  fclose(f);
  CHECK_STR(buf, "m.mlir:2:3: error: gemm failed\n  %0 = stablehlo.dot_general\n  ^\n");
  hlo_status_free(s);
  CHECK(status_locate(NULL, &loc) == NULL);
}

TEST(float_roundtrip_all_patterns) {
  /* every bit pattern of every small float type decodes and re-encodes to
   * itself (NaNs to a NaN) */
  for (int t = 0; t < HLO_DTYPE_COUNT; t++) {
    float_format f;
    if (!float_format_of((hlo_dtype)t, &f) || f.bits > 16) continue;
    for (uint64_t b = 0; b < ((uint64_t)1 << f.bits); b++) {
      double v = float_decode((hlo_dtype)t, b);
      uint64_t back = float_encode((hlo_dtype)t, v);
      if (isnan(v)) CHECK(isnan(float_decode((hlo_dtype)t, back)));
      else if (f.specials == FLOAT_FNUZ && v == 0) CHECK(back == 0);
      else if (back != b) {
        fprintf(stderr, "%s: 0x%llx -> %g -> 0x%llx\n", hlo_dtype_name((hlo_dtype)t),
                (unsigned long long)b, v, (unsigned long long)back);
        CHECK(back == b);
        return;
      }
    }
  }
}

TEST(float_known_values) {
  CHECK(float_decode(HLO_F8E4M3FN, 0x7e) == 448.0);
  CHECK(isnan(float_decode(HLO_F8E4M3FN, 0x7f)));
  CHECK(float_decode(HLO_F8E5M2, 0x7b) == 57344.0);
  CHECK(isinf(float_decode(HLO_F8E5M2, 0x7c)));
  CHECK(float_decode(HLO_F4E2M1FN, 0x7) == 6.0);
  CHECK(float_decode(HLO_F6E2M3FN, 0x1f) == 7.5);
  CHECK(float_decode(HLO_F6E3M2FN, 0x1f) == 28.0);
  CHECK(float_decode(HLO_F8E8M0FNU, 127) == 1.0);
  CHECK(float_decode(HLO_F8E4M3FNUZ, 0x7f) == 240.0);
  CHECK(float_decode(HLO_F8E4M3B11FNUZ, 0x7f) == 30.0);
  CHECK(float_decode(HLO_F8E5M2FNUZ, 0x7f) == 57344.0);
  CHECK(float_decode(HLO_F8E3M4, 0x6f) == 15.5);
  CHECK(float_decode(HLO_F8E4M3, 0x77) == 240.0);
  CHECK(float_encode(HLO_BF16, 1.0) == 0x3f80);
  CHECK(float_encode(HLO_F16, 65504.0) == 0x7bff);
  CHECK(float_encode(HLO_F16, 1e6) == 0x7c00);
  /* ties to even: 1 + 2^-11 is halfway between 1 and 1+2^-10 in f16 */
  CHECK(float_encode(HLO_F16, 1.0 + ldexp(1, -11)) == 0x3c00);
  CHECK(float_encode(HLO_F16, 1.0 + 3 * ldexp(1, -11)) == 0x3c02);
  CHECK(float_encode(HLO_F8E4M3FN, 1000.0) == 0x7f); /* overflow: NaN */
  CHECK(float_encode(HLO_F4E2M1FN, 100.0) == 0x7);   /* saturates */
  CHECK(float_encode(HLO_F8E4M3FNUZ, -0.0) == 0);
  CHECK(f32_to_bf16(1.00390625f) == 0x3f80); /* tie to even */
}

TEST(element_wrap) {
  uint8_t buf[16] = {0};
  elem_set_i64(HLO_I4, buf, 0, 9);
  CHECK_EQ_INT(elem_get_i64(HLO_I4, buf, 0), -7);
  elem_set_i64(HLO_UI4, buf, 1, -1);
  CHECK_EQ_INT(elem_get_i64(HLO_UI4, buf, 1), 15);
  elem_set_i64(HLO_I1, buf, 2, 3);
  CHECK_EQ_INT(elem_get_i64(HLO_I1, buf, 2), 1);
  elem_set_f64(HLO_BF16, buf, 2, 3.0);
  CHECK(elem_get_f64(HLO_BF16, buf, 2) == 3.0);
  elem_set_f64(HLO_I32, buf, 0, NAN); /* no UB */
  hlo_dtype d;
  CHECK(dtype_parse("complex<f32>", 12, &d) && d == HLO_C64);
  CHECK(!dtype_parse("f33", 3, &d));
  CHECK_EQ_INT(int_min(HLO_I8), -128);
  CHECK(int_max(HLO_UI64) == UINT64_MAX);
}

TEST(fill_elements_every_size) {
  /* element sizes 1..16 (3 and 12: not powers of two), counts around the
   * 4 KiB block the fill doubles up to, and 0; the bytes past n stay */
  static const size_t sizes[] = {1, 2, 3, 4, 8, 12, 16};
  static const size_t counts[] = {0, 1, 2, 3, 255, 1000, 1365, 1366, 4097, 10007};
  for (size_t si = 0; si < sizeof sizes / sizeof *sizes; si++)
    for (size_t ci = 0; ci < sizeof counts / sizeof *counts; ci++) {
      size_t es = sizes[si], n = counts[ci];
      unsigned char elem[16], *buf = malloc(n * es + 7);
      CHECK(buf != NULL);
      if (!buf) return;
      for (size_t b = 0; b < es; b++) elem[b] = (unsigned char)(0x11 * (b + 1) + es);
      memset(buf, 0xee, n * es + 7);
      fill_elements(buf, elem, n, es);
      size_t bad = 0;
      for (size_t i = 0; i < n; i++) bad += memcmp(buf + i * es, elem, es) != 0;
      for (size_t b = n * es; b < n * es + 7; b++) bad += buf[b] != 0xee;
      if (bad) fprintf(stderr, "  fill: element size %zu, count %zu: %zu wrong\n", es, n, bad);
      CHECK(bad == 0);
      free(buf);
    }
}

/* runmap against a byte per index, under random sets: every state, the
 * run invariants (start 0, non-empty, ordered, neighbours differ) and
 * runmap_find's end after each. */
TEST(runmap_matches_a_byte_array) {
  enum { N = 300 };
  uint8_t model[N];
  runmap m;
  CHECK(!runmap_init(&m, N));
  memset(model, 0, sizeof model);
  uint64_t r = 12345;
  int bad = 0;
  for (int it = 0; it < 3000 && !bad; it++) {
    r = r * 6364136223846793005ull + 1442695040888963407ull;
    size_t b = (r >> 33) % (N + 10), len = (r >> 13) % (it % 3 ? 20 : 200);
    uint8_t st = (uint8_t)((r >> 50) % 4);
    size_t e = b + len;
    CHECK(!runmap_set(&m, b, e, st));
    for (size_t i = b; i < e && i < N; i++) model[i] = st;
    bad += m.at[0] != 0 || m.count < 1;
    for (uint32_t k = 0; k < m.count; k++) {
      size_t end = k + 1 < m.count ? m.at[k + 1] : m.n;
      bad += m.at[k] >= end;
      bad += k > 0 && m.state[k] == m.state[k - 1];
    }
    for (size_t i = 0; i < N; i++) {
      size_t end;
      uint32_t k = runmap_find(&m, i, &end);
      bad += m.state[k] != model[i] || runmap_get(&m, i) != model[i];
      bad += end <= i || end > N;
    }
  }
  CHECK_EQ_INT(bad, 0);
  runmap_free(&m);
}

TEST_MAIN()
