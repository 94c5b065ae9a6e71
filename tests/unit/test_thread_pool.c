/* test_thread_pool.c — the worker pool (support/thread_pool.h): every index
 * of [0, n) covered exactly once in contiguous non-empty ranges, for pools
 * of 1..8 threads and chunk limits; nested calls and calls from several
 * threads at once run (inline when the pool is busy) without deadlock and
 * with the right results; many back-to-back tiny jobs (the late-worker
 * path); the global pool sized by HLO_NUM_THREADS, and a value of it that is
 * not a thread count warned about; a forked child. Also run under TSan:
 *   make BUILD=build/tsan OPT="-O1 -g" SAN="-fsanitize=thread" build/tsan/tests/test_thread_pool */
#include <pthread.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>
#include "support/thread_pool.h"
#include "test.h"

typedef struct cover {
  int64_t n;
  _Atomic int *hits;
  _Atomic int calls;
  _Atomic int bad;      /* empty or out-of-range ranges */
} cover;

static void cover_fn(void *ctx, int64_t b, int64_t e) {
  cover *c = ctx;
  atomic_fetch_add(&c->calls, 1);
  if (!(0 <= b && b < e && e <= c->n)) {
    atomic_fetch_add(&c->bad, 1);
    return;
  }
  for (int64_t i = b; i < e; i++) atomic_fetch_add_explicit(&c->hits[i], 1, memory_order_relaxed);
}

/* Runs one parallel for and checks the cover; returns the number of calls. */
static int check_cover(thread_pool *p, int64_t n, int64_t max_chunks) {
  cover c = {.n = n, .hits = calloc(n > 0 ? (size_t)n : 1, sizeof(_Atomic int))};
  atomic_init(&c.calls, 0);
  atomic_init(&c.bad, 0);
  thread_pool_parallel_for(p, n, max_chunks, cover_fn, &c);
  int wrong = 0;
  for (int64_t i = 0; i < n; i++) wrong += atomic_load(&c.hits[i]) != 1;
  CHECK_EQ_INT(wrong, 0);
  CHECK_EQ_INT(atomic_load(&c.bad), 0);
  int calls = atomic_load(&c.calls);
  if (n <= 0) CHECK_EQ_INT(calls, 0);
  else if (max_chunks > 0) CHECK(calls >= 1 && calls <= max_chunks && calls <= n);
  free(c.hits);
  return calls;
}

TEST(cover_every_index_once) {
  static const int threads[] = {1, 2, 3, 4, 8};
  static const int64_t ns[] = {0, 1, 2, 3, 7, 64, 1000, 100003};
  static const int64_t chunks[] = {0, 1, 2, 5, 1000000};
  for (size_t t = 0; t < sizeof threads / sizeof *threads; t++) {
    thread_pool *p = thread_pool_create(threads[t]);
    CHECK(p != NULL);
    if (!p) continue;
    CHECK_EQ_INT(thread_pool_num_threads(p), threads[t]);
    for (size_t i = 0; i < sizeof ns / sizeof *ns; i++)
      for (size_t k = 0; k < sizeof chunks / sizeof *chunks; k++) check_cover(p, ns[i], chunks[k]);
    /* a pool of one thread, or n == 1: one inline call */
    if (threads[t] == 1) CHECK_EQ_INT(check_cover(p, 1000, 0), 1);
    CHECK_EQ_INT(check_cover(p, 1, 0), 1);
    /* the chunk count: max_chunks <= 0 is 4 per thread (capped by n) */
    CHECK_EQ_INT(check_cover(p, 1000, 0), threads[t] == 1 ? 1 : 4 * threads[t]);
    CHECK_EQ_INT(check_cover(p, 1000, 3), threads[t] == 1 ? 1 : 3);
    thread_pool_destroy(p);
  }
  /* a NULL pool runs inline */
  CHECK_EQ_INT(check_cover(NULL, 50, 0), 1);
  thread_pool_destroy(NULL);
}

/* chunks split contiguously and evenly: sizes differ by at most one */
typedef struct sizes {
  _Atomic int64_t min, max;
} sizes;
static void size_fn(void *ctx, int64_t b, int64_t e) {
  sizes *s = ctx;
  int64_t len = e - b, v;
  while ((v = atomic_load(&s->min)) > len && !atomic_compare_exchange_weak(&s->min, &v, len)) {}
  while ((v = atomic_load(&s->max)) < len && !atomic_compare_exchange_weak(&s->max, &v, len)) {}
}
TEST(chunks_even) {
  thread_pool *p = thread_pool_create(3);
  CHECK(p != NULL);
  sizes s;
  atomic_init(&s.min, INT64_MAX);
  atomic_init(&s.max, 0);
  thread_pool_parallel_for(p, 1003, 7, size_fn, &s);
  CHECK(atomic_load(&s.max) - atomic_load(&s.min) <= 1);
  CHECK_EQ_INT(atomic_load(&s.min), 1003 / 7);
  thread_pool_destroy(p);
}

/* nesting: each chunk runs a parallel for on the same pool (inline) */
typedef struct nest {
  thread_pool *p;
  int64_t inner;
  _Atomic int64_t sum;
} nest;
static void inner_fn(void *ctx, int64_t b, int64_t e) {
  nest *x = ctx;
  int64_t s = 0;
  for (int64_t i = b; i < e; i++) s += i;
  atomic_fetch_add(&x->sum, s);
}
static void outer_fn(void *ctx, int64_t b, int64_t e) {
  nest *x = ctx;
  for (int64_t i = b; i < e; i++) thread_pool_parallel_for(x->p, x->inner, 0, inner_fn, x);
}
TEST(nested_calls_run_inline) {
  thread_pool *p = thread_pool_create(4);
  CHECK(p != NULL);
  nest x = {.p = p, .inner = 1000};
  atomic_init(&x.sum, 0);
  thread_pool_parallel_for(p, 16, 0, outer_fn, &x);
  CHECK_EQ_INT(atomic_load(&x.sum), 16 * (999 * 1000 / 2));
  thread_pool_destroy(p);
}

/* several threads calling one pool at once: each call's result is right */
typedef struct caller {
  thread_pool *p;
  int rounds;
  int errors;
} caller;
typedef struct sum_job {
  const int64_t *v;
  _Atomic int64_t sum;
} sum_job;
static void sum_fn(void *ctx, int64_t b, int64_t e) {
  sum_job *j = ctx;
  int64_t s = 0;
  for (int64_t i = b; i < e; i++) s += j->v[i];
  atomic_fetch_add(&j->sum, s);
}
static void *caller_main(void *arg) {
  caller *c = arg;
  enum { N = 4096 };
  int64_t *v = malloc(N * sizeof *v);
  if (!v) {
    c->errors++;
    return NULL;
  }
  for (int r = 0; r < c->rounds; r++) {
    int64_t n = 1 + (r * 977) % N, want = 0;
    for (int64_t i = 0; i < n; i++) want += v[i] = (i * 31 + r) % 101;
    sum_job j = {.v = v};
    atomic_init(&j.sum, 0);
    thread_pool_parallel_for(c->p, n, r % 5, sum_fn, &j);
    c->errors += atomic_load(&j.sum) != want;
  }
  free(v);
  return NULL;
}
TEST(several_threads_at_once) {
  thread_pool *p = thread_pool_create(3);
  CHECK(p != NULL);
  enum { T = 4 };
  pthread_t th[T];
  caller c[T];
  for (int i = 0; i < T; i++) {
    c[i] = (caller){.p = p, .rounds = 300};
    CHECK(pthread_create(&th[i], NULL, caller_main, &c[i]) == 0);
  }
  for (int i = 0; i < T; i++) {
    pthread_join(th[i], NULL);
    CHECK_EQ_INT(c[i].errors, 0);
  }
  thread_pool_destroy(p);
}

/* many tiny jobs back to back: workers that wake late must never touch a
 * newer job (the test would see a wrong sum or, under TSan, a race) */
TEST(back_to_back_tiny_jobs) {
  thread_pool *p = thread_pool_create(4);
  CHECK(p != NULL);
  int64_t v[8] = {1, 2, 3, 4, 5, 6, 7, 8};
  int errors = 0;
  for (int r = 0; r < 20000; r++) {
    sum_job j = {.v = v};
    atomic_init(&j.sum, 0);
    int64_t n = 2 + r % 7, want = n * (n + 1) / 2;
    thread_pool_parallel_for(p, n, 0, sum_fn, &j);
    errors += atomic_load(&j.sum) != want;
  }
  CHECK_EQ_INT(errors, 0);
  thread_pool_destroy(p);
}

/* the global pool takes its size from HLO_NUM_THREADS (read once) */
TEST(global_pool_size_from_env) {
  setenv("HLO_NUM_THREADS", "3", 1);
  CHECK_EQ_INT(thread_pool_default_threads(), 3);
  thread_pool *g = thread_pool_global();
  CHECK(g != NULL);
  CHECK(g == thread_pool_global());
  CHECK_EQ_INT(thread_pool_num_threads(g), 3);
  check_cover(g, 12345, 0);
  setenv("HLO_NUM_THREADS", "7", 1); /* read once: no change */
  CHECK_EQ_INT(thread_pool_default_threads(), 3);
}

/* HLO_NUM_THREADS values that are not thread counts are named in a
 * warning and give the fallback; good ones are taken */
TEST(parse_threads_env_values) {
  char why[200];
  static const char *const bad[] = {"abc", "0", "-3", "99999999999", "4x", " 4", "+4", "257",
                                    "1.5", "0x10"};
  for (size_t i = 0; i < sizeof bad / sizeof *bad; i++) {
    CHECK_EQ_INT(thread_pool_parse_threads(bad[i], 5, why, sizeof why), 5);
    CHECK(strstr(why, "HLO_NUM_THREADS") != NULL);
    CHECK(strstr(why, bad[i]) != NULL); /* the value, quoted */
    CHECK(strstr(why, "using 5") != NULL);
  }
  CHECK_EQ_INT(thread_pool_parse_threads("1", 5, why, sizeof why), 1);
  CHECK_EQ_INT(why[0], 0);
  CHECK_EQ_INT(thread_pool_parse_threads("256", 5, why, sizeof why), 256);
  CHECK_EQ_INT(why[0], 0);
  CHECK_EQ_INT(thread_pool_parse_threads("0003", 5, why, sizeof why), 3);
  CHECK_EQ_INT(thread_pool_parse_threads("", 5, why, sizeof why), 5);
  CHECK_EQ_INT(why[0], 0);
  CHECK_EQ_INT(thread_pool_parse_threads(NULL, 5, NULL, 0), 5);
  CHECK_EQ_INT(thread_pool_parse_threads("abc", 2, NULL, 0), 2);
}

/* in a fresh process, HLO_NUM_THREADS=abc warns on stderr (the variable
 * and the value named) and sizes the pool by the cores; the run goes on */
TEST(bad_env_warns_once) {
  int fd[2];
  CHECK(pipe(fd) == 0);
  fflush(NULL);
  pid_t pid = fork();
  if (pid == 0) {
    dup2(fd[1], 2);
    close(fd[0]);
    char *argv[] = {(char *)"/proc/self/exe", NULL};
    setenv("HLO_NUM_THREADS", "abc", 1);
    setenv("HLO_TEST_CHILD", "bad_env", 1);
    execv("/proc/self/exe", argv);
    _exit(99);
  }
  close(fd[1]);
  char buf[1024];
  ssize_t len = 0, r;
  while (len < (ssize_t)sizeof buf - 1 && (r = read(fd[0], buf + len, sizeof buf - 1 - len)) > 0)
    len += r;
  buf[len > 0 ? len : 0] = 0;
  close(fd[0]);
  int ws = 0;
  CHECK(pid > 0 && waitpid(pid, &ws, 0) == pid);
  CHECK(WIFEXITED(ws) && WEXITSTATUS(ws) == 0);
  CHECK(strstr(buf, "warning: HLO_NUM_THREADS='abc'") != NULL);
  const char *second = strstr(buf, "HLO_NUM_THREADS");
  CHECK(second && !strstr(second + 1, "HLO_NUM_THREADS")); /* once */
}

/* a forked child has no workers: its calls still complete (the caller takes
 * every chunk), and exit() in it (the global pool's atexit) does not wait
 * for the parent's threads */
static int child_cover(thread_pool *p) {
  int64_t v[100];
  for (int i = 0; i < 100; i++) v[i] = i;
  sum_job j = {.v = v};
  atomic_init(&j.sum, 0);
  thread_pool_parallel_for(p, 100, 0, sum_fn, &j);
  return atomic_load(&j.sum) == 4950 ? 0 : 1;
}
TEST(fork_child_runs_inline) {
  thread_pool *p = thread_pool_create(3);
  CHECK(p != NULL);
  check_cover(p, 1000, 0);
  check_cover(thread_pool_global(), 1000, 0);
  fflush(NULL);
  pid_t pid = fork();
  if (pid == 0) {
    int bad = child_cover(p) + child_cover(thread_pool_global());
    thread_pool_destroy(p);
    exit(bad); /* runs the global pool's atexit handler */
  }
  int ws = 0;
  CHECK(pid > 0 && waitpid(pid, &ws, 0) == pid);
  CHECK(WIFEXITED(ws) && WEXITSTATUS(ws) == 0);
  check_cover(p, 1000, 0); /* the parent's pool still works */
  thread_pool_destroy(p);
}

/* sizes past the limits are clamped */
TEST(create_clamps) {
  thread_pool *p = thread_pool_create(0);
  CHECK(p != NULL);
  CHECK_EQ_INT(thread_pool_num_threads(p), 1);
  check_cover(p, 100, 0);
  thread_pool_destroy(p);
  CHECK_EQ_INT(thread_pool_num_threads(NULL), 1);
}

/* The child of bad_env_warns_once (this program run again with
 * HLO_TEST_CHILD=bad_env, before any test): reads the thread count twice
 * (one warning), checks it is the cores, runs a job on the global pool. */
__attribute__((constructor)) static void child_bad_env(void) {
  const char *c = getenv("HLO_TEST_CHILD");
  if (!c || strcmp(c, "bad_env")) return;
  long cores = sysconf(_SC_NPROCESSORS_ONLN);
  if (cores > THREAD_POOL_MAX_THREADS) cores = THREAD_POOL_MAX_THREADS;
  int t = thread_pool_default_threads();
  if (t != thread_pool_default_threads() || t != (cores < 1 ? 1 : cores)) exit(1);
  exit(child_cover(thread_pool_global()));
}

TEST_MAIN()
