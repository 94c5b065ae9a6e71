/* Unit tests of src/support/npy: round trips of every numpy type, the real
 * model inputs/expected files, big-endian and Fortran-order input, bfloat16
 * ('<V2'), and corrupted files (truncated, garbled headers) that must fail
 * cleanly. */
#include "test.h"
#include "testlib.h"

#include <dirent.h>
#include <stdint.h>
#include <unistd.h>
#include "support/npy.h"
#include "support/status.h"

/* Builds a v1 .npy image from a header dict and data; returns its length. */
static size_t make_npy(uint8_t *buf, const char *dict, const void *data, size_t nbytes) {
  size_t hl = strlen(dict);
  memcpy(buf, "\x93NUMPY\x01\x00", 8);
  buf[8] = (uint8_t)(hl + 1);
  buf[9] = 0;
  memcpy(buf + 10, dict, hl);
  buf[10 + hl] = '\n';
  memcpy(buf + 11 + hl, data, nbytes);
  return 11 + hl + nbytes;
}

static hlo_status_code code_of(hlo_status st) {
  hlo_status_code c = hlo_status_code_of(st);
  hlo_status_free(st);
  return c;
}

TEST(roundtrip_all_types) {
  static const hlo_dtype dts[] = {HLO_I1,  HLO_I8,  HLO_I16,  HLO_I32,  HLO_I64,
                                  HLO_UI8, HLO_UI16, HLO_UI32, HLO_UI64, HLO_F16,
                                  HLO_F32, HLO_F64, HLO_C64,  HLO_C128};
  for (size_t t = 0; t < sizeof dts / sizeof dts[0]; t++) {
    int64_t dims[3] = {2, 3, 4};
    size_t es = hlo_dtype_size(dts[t]);
    uint8_t data[24 * 16];
    for (size_t i = 0; i < 24 * es; i++) data[i] = (uint8_t)(dts[t] == HLO_I1 ? i % 2 : i * 7);
    void *bytes;
    size_t len;
    hlo_status st = npy_write_mem(dts[t], 3, dims, data, &bytes, &len);
    CHECK(st == NULL);
    if (st) { hlo_status_free(st); continue; }
    CHECK(len % 64 == 24 * es % 64);  /* header is 64-aligned */
    npy_array a;
    st = npy_read_mem("x.npy", bytes, len, &a);
    CHECK(st == NULL);
    hlo_status_free(st);
    CHECK_EQ_INT(a.dtype, dts[t]);
    CHECK_EQ_INT(a.rank, 3);
    CHECK_EQ_INT(a.dims[2], 4);
    CHECK_EQ_INT(a.nbytes, 24 * es);
    CHECK(a.data && memcmp(a.data, data, 24 * es) == 0);
    npy_free(&a);
    free(bytes);
  }
}

TEST(write_file_and_read_back_scalar_and_vector) {
  char path[] = "/tmp/hlo_test_npyXXXXXX";
  int fd = mkstemp(path);
  CHECK(fd >= 0);
  if (fd < 0) return;
  close(fd);
  float x = 2.5f;
  CHECK(npy_write(path, HLO_F32, 0, NULL, &x) == NULL);
  npy_array a;
  CHECK(npy_read(path, &a) == NULL);
  CHECK_EQ_INT(a.rank, 0);
  CHECK_STR(a.descr, "<f4");
  CHECK(a.nbytes == 4 && *(float *)a.data == 2.5f);
  npy_free(&a);
  int32_t v[5] = {1, -2, 3, -4, 5};
  int64_t d = 5;
  CHECK(npy_write(path, HLO_I32, 1, &d, v) == NULL);
  CHECK(npy_read(path, &a) == NULL);
  CHECK_EQ_INT(a.rank, 1);
  CHECK_EQ_INT(a.dims[0], 5);
  CHECK(a.nbytes == 20 && ((int32_t *)a.data)[3] == -4);
  npy_free(&a);
  /* Empty array. */
  int64_t z[2] = {0, 3};
  CHECK(npy_write(path, HLO_F64, 2, z, NULL) == NULL);
  CHECK(npy_read(path, &a) == NULL);
  CHECK(a.nbytes == 0 && a.data == NULL && a.dims[1] == 3);
  npy_free(&a);
  unlink(path);
}

TEST(write_rejects_non_numpy_types) {
  int64_t d = 1;
  uint32_t x = 0;
  CHECK_EQ_INT(code_of(npy_write("/tmp/never.npy", HLO_BF16, 1, &d, &x)), HLO_INVALID_ARGUMENT);
  CHECK_EQ_INT(code_of(npy_write("/tmp/never.npy", HLO_F8E4M3FN, 1, &d, &x)),
               HLO_INVALID_ARGUMENT);
  CHECK_EQ_INT(code_of(npy_write("/tmp/never.npy", HLO_I4, 1, &d, &x)), HLO_INVALID_ARGUMENT);
  CHECK(npy_descr_of(HLO_UI2) == NULL);
  CHECK_EQ_INT(code_of(npy_write("/nonexistent_dir/x.npy", HLO_F32, 1, &d, &x)), HLO_NOT_FOUND);
}

TEST(missing_file_is_not_found) {
  npy_array a;
  hlo_status st = npy_read("/nonexistent/nothing.npy", &a);
  CHECK_EQ_INT(hlo_status_code_of(st), HLO_NOT_FOUND);
  CHECK(st && strstr(hlo_status_message(st), "/nonexistent/nothing.npy"));
  CHECK(st && strstr(hlo_status_message(st), "No such file"));
  hlo_status_free(st);
}

TEST(big_endian_and_fortran) {
  uint8_t buf[256];
  const uint8_t be[8] = {0x00, 0x00, 0x00, 0x01, 0x00, 0x00, 0x01, 0x02};
  size_t n = make_npy(buf, "{'descr': '>i4', 'fortran_order': False, 'shape': (2,), }", be, 8);
  npy_array a;
  CHECK(npy_read_mem("be", buf, n, &a) == NULL);
  CHECK(a.dtype == HLO_I32 && ((int32_t *)a.data)[0] == 1 && ((int32_t *)a.data)[1] == 258);
  npy_free(&a);
  /* A 2x3 Fortran-order array: memory holds column by column. */
  const int16_t f[6] = {0, 3, 1, 4, 2, 5};  /* C order would be 0 1 2 / 3 4 5 */
  n = make_npy(buf, "{'descr': '<i2', 'fortran_order': True, 'shape': (2, 3), }", f, 12);
  CHECK(npy_read_mem("fo", buf, n, &a) == NULL);
  for (int i = 0; i < 6; i++) CHECK(((int16_t *)a.data)[i] == i);
  npy_free(&a);
  /* Big-endian complex swaps each part. */
  uint8_t c[8] = {0x3f, 0x80, 0, 0, 0x40, 0, 0, 0};
  n = make_npy(buf, "{'descr': '>c8', 'fortran_order': False, 'shape': (), }", c, 8);
  CHECK(npy_read_mem("bc", buf, n, &a) == NULL);
  CHECK(a.dtype == HLO_C64 && ((float *)a.data)[0] == 1.0f && ((float *)a.data)[1] == 2.0f);
  npy_free(&a);
}

TEST(bfloat16_v2_and_ambiguous_v1) {
  uint8_t buf[256];
  const uint16_t bf[2] = {0x3f80, 0xc000};
  size_t n = make_npy(buf, "{'descr': '<V2', 'fortran_order': False, 'shape': (2,), }", bf, 4);
  npy_array a;
  CHECK(npy_read_mem("bf", buf, n, &a) == NULL);
  CHECK_EQ_INT(a.dtype, HLO_BF16);
  CHECK_STR(a.descr, "<V2");
  CHECK(a.nbytes == 4 && ((uint16_t *)a.data)[1] == 0xc000);
  npy_free(&a);
  /* 1-byte ml_dtypes types come back as opaque bytes for the caller */
  n = make_npy(buf, "{'descr': '|V1', 'fortran_order': False, 'shape': (2,), }", bf, 2);
  CHECK(npy_read_mem("f8", buf, n, &a) == NULL);
  CHECK(a.opaque_byte && a.dtype == HLO_UI8 && a.nbytes == 2);
  CHECK(((uint8_t *)a.data)[0] == 0x80);
  npy_free(&a);
  n = make_npy(buf, "{'descr': '<f1', 'fortran_order': False, 'shape': (2,), }", bf, 2);
  CHECK(npy_read_mem("e5m2", buf, n, &a) == NULL);
  CHECK(a.opaque_byte);
  npy_free(&a);
  n = make_npy(buf, "{'descr': '<u1', 'fortran_order': False, 'shape': (2,), }", bf, 2);
  CHECK(npy_read_mem("u8", buf, n, &a) == NULL);
  CHECK(!a.opaque_byte && a.dtype == HLO_UI8);
  npy_free(&a);
}

TEST(corrupted_headers_fail_cleanly) {
  static const char *bad[] = {
      "",
      "{",
      "{'descr': '<f4'",
      "{'descr': '<f4', 'fortran_order': False}",
      "{'descr': '<f4', 'fortran_order': Maybe, 'shape': (1,), }",
      "{'descr': '<f4', 'fortran_order': False, 'shape': (1,, }",
      "{'descr': '<f4', 'fortran_order': False, 'shape': (-1,), }",
      "{'descr': 'xyz', 'fortran_order': False, 'shape': (1,), }",
      "{'descr': '<q4', 'fortran_order': False, 'shape': (1,), }",
      "{'descr': '<f', 'fortran_order': False, 'shape': (1,), }",
      "{'descr': '<f4x', 'fortran_order': False, 'shape': (1,), }",
      "{'descr': [('a', '<f4')], 'fortran_order': False, 'shape': (1,), }",
      "{'descr': '<f4', 'fortran_order': False, 'shape': (1,), 'extra': 1}",
      "{'descr': '<f4', 'fortran_order': False, 'shape': (1,), } junk",
      "{'descr': '<f4\\n', 'fortran_order': False, 'shape': (1,), }",
      "{'descr': '<f4', 'fortran_order': False, 'shape': (1,2,3,4,5,6,7,8,9,1,1,1,1,1,1,1,1), }",
      "{'descr': 'aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa', 'fortran_order': False, 'shape': (1,), }",
      "{'descr': '|O', 'fortran_order': False, 'shape': (1,), }",
  };
  uint8_t buf[512];
  float one = 1.0f;
  for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
    size_t n = make_npy(buf, bad[i], &one, 4);
    npy_array a;
    hlo_status st = npy_read_mem("bad", buf, n, &a);
    if (hlo_status_code_of(st) != HLO_INVALID_ARGUMENT) fprintf(stderr, "case %zu\n", i);
    CHECK_EQ_INT(hlo_status_code_of(st), HLO_INVALID_ARGUMENT);
    CHECK(a.data == NULL);
    hlo_status_free(st);
  }
  /* Absurd sizes. */
  size_t n = make_npy(buf, "{'descr': '<f8', 'fortran_order': False, 'shape': (100000, 100000, "
                           "100000), }", &one, 4);
  npy_array a;
  CHECK_EQ_INT(code_of(npy_read_mem("huge", buf, n, &a)), HLO_RESOURCE_EXHAUSTED);
  n = make_npy(buf, "{'descr': '<f8', 'fortran_order': False, 'shape': "
                    "(99999999999999999999999,), }", &one, 4);
  CHECK_EQ_INT(code_of(npy_read_mem("huge2", buf, n, &a)), HLO_RESOURCE_EXHAUSTED);
}

TEST(truncations_never_crash) {
  float data[6] = {1, 2, 3, 4, 5, 6};
  int64_t dims[2] = {2, 3};
  void *bytes;
  size_t len;
  CHECK(npy_write_mem(HLO_F32, 2, dims, data, &bytes, &len) == NULL);
  for (size_t cut = 0; cut < len; cut++) {
    /* Copy into an exact-size heap block so ASan catches any overread. */
    uint8_t *p = malloc(cut ? cut : 1);
    memcpy(p, bytes, cut);
    npy_array a;
    hlo_status st = npy_read_mem("cut", p, cut, &a);
    CHECK_EQ_INT(hlo_status_code_of(st), HLO_INVALID_ARGUMENT);
    hlo_status_free(st);
    free(p);
  }
  /* Truncated data says what it expected. */
  npy_array a;
  hlo_status st = npy_read_mem("cut", bytes, len - 4, &a);
  CHECK(st && strstr(hlo_status_message(st), "expected 24 bytes"));
  CHECK(st && strstr(hlo_status_message(st), "found 20"));
  hlo_status_free(st);
  /* Flipping each header byte must never crash either. */
  uint8_t *p = malloc(len);
  for (size_t i = 0; i < 128 && i < len; i++) {
    memcpy(p, bytes, len);
    p[i] ^= 0x5a;
    st = npy_read_mem("flip", p, len, &a);
    if (!st) npy_free(&a);
    hlo_status_free(st);
  }
  free(p);
  /* Bad version. */
  memcpy(p = malloc(len), bytes, len);
  p[6] = 9;
  CHECK_EQ_INT(code_of(npy_read_mem("v9", p, len, &a)), HLO_INVALID_ARGUMENT);
  free(p);
  free(bytes);
}

TEST(version_2_header) {
  uint8_t buf[256];
  const char *dict = "{'descr': '<u2', 'fortran_order': False, 'shape': (3,), }\n";
  size_t hl = strlen(dict);
  memcpy(buf, "\x93NUMPY\x02\x00", 8);
  buf[8] = (uint8_t)hl;
  buf[9] = buf[10] = buf[11] = 0;
  memcpy(buf + 12, dict, hl);
  uint16_t v[3] = {7, 8, 9};
  memcpy(buf + 12 + hl, v, 6);
  npy_array a;
  CHECK(npy_read_mem("v2", buf, 12 + hl + 6, &a) == NULL);
  CHECK(a.dtype == HLO_UI16 && a.dims[0] == 3 && ((uint16_t *)a.data)[2] == 9);
  npy_free(&a);
}

/* Every .npy of the shared models reads, and writes back byte-identically
 * (numpy's own writer produced them; ours must match it exactly). */
TEST(real_model_files) {
  char dirpath[1024];
  snprintf(dirpath, sizeof dirpath, "%s/models", tl_shared_dir());
  DIR *models = opendir(dirpath);
  if (!models) {
    printf("real_model_files: skipped, %s not found (set HLO_SHARED)\n", dirpath);
    return;
  }
  int files = 0;
  struct dirent *m;
  while ((m = readdir(models))) {
    if (m->d_name[0] == '.') continue;
    static const char *subs[] = {"inputs", "expected"};
    for (int s = 0; s < 2; s++) {
      char sub[2048];
      snprintf(sub, sizeof sub, "%s/%s/%s", dirpath, m->d_name, subs[s]);
      DIR *d = opendir(sub);
      if (!d) continue;
      struct dirent *e;
      while ((e = readdir(d))) {
        size_t nl = strlen(e->d_name);
        if (nl < 4 || strcmp(e->d_name + nl - 4, ".npy")) continue;
        char path[2400];
        snprintf(path, sizeof path, "%s/%s", sub, e->d_name);
        npy_array a;
        hlo_status st = npy_read(path, &a);
        if (st) hlo_status_print(st, stderr);
        CHECK(st == NULL);
        hlo_status_free(st);
        if (st) continue;
        files++;
        void *bytes;
        size_t len;
        CHECK(npy_write_mem(a.dtype, a.rank, a.dims, a.data, &bytes, &len) == NULL);
        FILE *f = fopen(path, "rb");
        uint8_t *orig = malloc(len + 1);
        size_t got = f ? fread(orig, 1, len + 1, f) : 0;
        if (f) fclose(f);
        if (got != len || memcmp(orig, bytes, len)) fprintf(stderr, "differs: %s\n", path);
        CHECK(got == len && memcmp(orig, bytes, len) == 0);
        free(orig);
        free(bytes);
        npy_free(&a);
      }
      closedir(d);
    }
  }
  closedir(models);
  CHECK(files > 50);
}

TEST_MAIN()
