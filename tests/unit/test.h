/* test.h — a tiny unit-test harness. Each test file defines tests with
 * TEST(name) { ... CHECK(cond); ... } and ends with TEST_MAIN(), which runs
 * every test, prints one line per failure with file:line, and ends with
 * "N passed, N failed". Exit status is non-zero when any check failed. */
#ifndef HLO_TEST_H
#define HLO_TEST_H
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef void (*test_fn)(void);
/* unused in a helper file that includes this header for its checks */
__attribute__((unused)) static struct { const char *tname; test_fn fn; } test_list[1024];
__attribute__((unused)) static int test_count, test_failed_checks, test_cur_failed;

/* What a failed check does: count it in this file's counters. A helper
 * file linked into several test files (fake_device.c) defines TEST_FAIL()
 * before including this header, to count in the calling test file's. */
#ifndef TEST_FAIL
#define TEST_FAIL() (test_failed_checks++, test_cur_failed = 1)
#endif

#define TEST(name)                                                     \
  static void test_##name(void);                                       \
  __attribute__((constructor)) static void test_reg_##name(void) {     \
    test_list[test_count].tname = #name;                                \
    test_list[test_count++].fn = test_##name;                          \
  }                                                                    \
  static void test_##name(void)

#define CHECK(cond)                                                              \
  do {                                                                           \
    if (!(cond)) {                                                               \
      fprintf(stderr, "%s:%d: check failed: %s\n", __FILE__, __LINE__, #cond);   \
      TEST_FAIL();                                                               \
    }                                                                            \
  } while (0)
#define CHECK_EQ_INT(a, b)                                                            \
  do {                                                                                \
    long long _a = (long long)(a), _b = (long long)(b);                               \
    if (_a != _b) {                                                                   \
      fprintf(stderr, "%s:%d: check failed: %s == %s (%lld vs %lld)\n", __FILE__,     \
              __LINE__, #a, #b, _a, _b);                                              \
      TEST_FAIL();                                                                    \
    }                                                                                 \
  } while (0)
#define CHECK_STR(a, b)                                                                \
  do {                                                                                 \
    const char *_a = (a), *_b = (b);                                                   \
    if (!_a || !_b || strcmp(_a, _b)) {                                                \
      fprintf(stderr, "%s:%d: check failed: %s == %s\n  got:  %s\n  want: %s\n",       \
              __FILE__, __LINE__, #a, #b, _a ? _a : "(null)", _b ? _b : "(null)");      \
      TEST_FAIL();                                                                     \
    }                                                                                  \
  } while (0)

#define TEST_MAIN()                                                        \
  int main(void) {                                                         \
    int passed = 0, failed = 0;                                            \
    for (int i = 0; i < test_count; i++) {                                 \
      test_cur_failed = 0;                                                 \
      test_list[i].fn();                                                   \
      if (test_cur_failed) {                                               \
        failed++;                                                          \
        fprintf(stderr, "FAIL %s\n", test_list[i].tname);                   \
      } else {                                                             \
        passed++;                                                          \
      }                                                                    \
    }                                                                      \
    printf("%s: %d passed, %d failed\n", __FILE__, passed, failed);        \
    return failed ? 1 : 0;                                                 \
  }
#endif
