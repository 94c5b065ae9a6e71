/* thread_pool.c — the worker pool of thread_pool.h.
 *
 * One job at a time per pool. State under `mu`: the job's description, its
 * generation number `gen` (workers wait for it to change), `active` (workers
 * that joined the current job and have not left it) and `stop`. Chunks are
 * claimed with an atomic counter `next` and counted done with `done`; the
 * thread that finishes the last chunk wakes the caller.
 *
 * Why a late worker is harmless: a worker snapshots the job under `mu` and
 * raises `active` in the same critical section; a new job is published only
 * once `active` is 0, so a worker never claims a chunk of a job other than
 * the one it snapshotted. A worker that wakes after its job has finished
 * finds no chunk left (next >= nchunks) and never calls fn, so the caller's
 * ctx may already be gone.
 *
 * Re-entrancy is a try-lock: `submit` is held by the thread whose job is in
 * flight; anyone else (a nested call from a chunk, another thread) fails the
 * try-lock and runs inline.
 *
 * Wake latency (off by default: THREAD_POOL_SPIN_NS): a thread about to
 * sleep on a condition variable may first spin for up to
 * THREAD_POOL_SPIN_NS on an atomic copy of what it waits for (`pub_gen`
 * for a worker; `active`, then `done` for the caller), so a job that
 * follows the last one within that time finds the workers awake. Past that
 * they sleep, so an idle pool burns no core. The spin only decides when to
 * take the mutex: the job is still joined under `mu`, and `pub_gen` is
 * published after `mu` is unlocked, so a worker that saw it change does
 * not then block on the mutex. */
#include "support/thread_pool.h"
#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/types.h>
#include <time.h>
#include <unistd.h>

/* How long a thread spins before it sleeps (nanoseconds). 0, the default:
 * no spinning. Measured on the 2-core development machine shared with
 * other jobs (bench/RUNTIME.md), spinning never helped and yielding while
 * spinning cost 3x on a llama block (a yielding caller lost its core for a
 * time slice). -DTHREAD_POOL_SPIN_NS=20000 turns it on to measure it on a
 * quiet machine, where a sleeping worker's wake-up latency may matter. */
#ifndef THREAD_POOL_SPIN_NS
#define THREAD_POOL_SPIN_NS 0
#endif

struct thread_pool {
  int num_threads;       /* the caller included */
  int num_workers;       /* started */
  pid_t owner;           /* the process that started them (a forked child has none) */
  pthread_t *workers;
  pthread_mutex_t submit;
  pthread_mutex_t mu;
  pthread_cond_t work_cv, done_cv;
  uint64_t gen;          /* under mu */
  _Atomic int active;    /* changed under mu; read outside it by a spinning caller */
  bool stop;             /* under mu */
  thread_pool_fn fn;     /* the job, under mu (written only while active == 0) */
  void *ctx;
  int64_t n, nchunks;
  _Atomic int64_t next, done;
  _Atomic uint64_t pub_gen; /* gen, published for the spinning workers */
};

typedef struct job {
  thread_pool_fn fn;
  void *ctx;
  int64_t n, nchunks;
} job;

/* Chunk i of n split into k near-equal contiguous chunks. */
static void chunk_bounds(int64_t n, int64_t k, int64_t i, int64_t *b, int64_t *e) {
  int64_t q = n / k, r = n % k;
  *b = i * q + (i < r ? i : r);
  *e = *b + q + (i < r ? 1 : 0);
}

static int64_t now_ns(void) {
  struct timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return (int64_t)t.tv_sec * 1000000000 + t.tv_nsec;
}

static inline void cpu_relax(void) {
#if defined(__x86_64__) || defined(__i386__)
  __builtin_ia32_pause();
#elif defined(__aarch64__)
  __asm__ __volatile__("yield");
#endif
}

/* One turn of a bounded spin that started at t0 (now_ns()): a pause, and
 * every 64 turns a look at the clock; false once THREAD_POOL_SPIN_NS have
 * passed. Never yields: a yielding thread on a busy machine may wait a
 * whole time slice for its core. */
static bool spin_turn(uint32_t i, int64_t t0) {
  cpu_relax();
  return i % 64 || now_ns() - t0 <= THREAD_POOL_SPIN_NS;
}

/* Spins while *v == seen (up to THREAD_POOL_SPIN_NS). */
static void spin_while_u64(const _Atomic uint64_t *v, uint64_t seen) {
  if (THREAD_POOL_SPIN_NS <= 0) return;
  int64_t t0 = now_ns();
  for (uint32_t i = 1; atomic_load_explicit(v, memory_order_acquire) == seen; i++)
    if (!spin_turn(i, t0)) return;
}

/* Spins while *v < want (up to THREAD_POOL_SPIN_NS); whether it got there. */
static bool spin_until_i64(const _Atomic int64_t *v, int64_t want) {
  if (atomic_load_explicit(v, memory_order_acquire) >= want) return true;
  if (THREAD_POOL_SPIN_NS <= 0) return false;
  int64_t t0 = now_ns();
  for (uint32_t i = 1; atomic_load_explicit(v, memory_order_acquire) < want; i++)
    if (!spin_turn(i, t0)) return false;
  return true;
}

/* Spins while *v > 0 (up to THREAD_POOL_SPIN_NS). */
static void spin_until_i32_zero(const _Atomic int *v) {
  if (THREAD_POOL_SPIN_NS <= 0) return;
  int64_t t0 = now_ns();
  for (uint32_t i = 1; atomic_load_explicit(v, memory_order_acquire) > 0; i++)
    if (!spin_turn(i, t0)) return;
}

/* Claims and runs chunks of `j` until none is left. */
static void run_chunks(thread_pool *p, const job *j) {
  for (;;) {
    int64_t i = atomic_fetch_add_explicit(&p->next, 1, memory_order_relaxed);
    if (i >= j->nchunks) return;
    int64_t b, e;
    chunk_bounds(j->n, j->nchunks, i, &b, &e);
    j->fn(j->ctx, b, e);
    if (atomic_fetch_add_explicit(&p->done, 1, memory_order_acq_rel) + 1 == j->nchunks) {
      pthread_mutex_lock(&p->mu);
      pthread_cond_broadcast(&p->done_cv);
      pthread_mutex_unlock(&p->mu);
    }
  }
}

static void *worker_main(void *arg) {
  thread_pool *p = arg;
  pthread_mutex_lock(&p->mu);
  uint64_t seen = p->gen;
  for (;;) {
    if (THREAD_POOL_SPIN_NS > 0 && !p->stop && p->gen == seen) {
      /* awake a while first: the next job usually follows soon */
      pthread_mutex_unlock(&p->mu);
      spin_while_u64(&p->pub_gen, seen);
      pthread_mutex_lock(&p->mu);
    }
    while (!p->stop && p->gen == seen) pthread_cond_wait(&p->work_cv, &p->mu);
    if (p->stop) break;
    seen = p->gen;
    job j = {p->fn, p->ctx, p->n, p->nchunks};
    atomic_fetch_add_explicit(&p->active, 1, memory_order_relaxed);
    pthread_mutex_unlock(&p->mu);
    run_chunks(p, &j);
    pthread_mutex_lock(&p->mu);
    if (atomic_fetch_sub_explicit(&p->active, 1, memory_order_release) == 1)
      pthread_cond_broadcast(&p->done_cv);
  }
  pthread_mutex_unlock(&p->mu);
  return NULL;
}

/* Stops and joins the workers (the pool stays usable: inline from then on,
 * as the caller claims every chunk itself). */
static void stop_workers(thread_pool *p) {
  if (getpid() != p->owner) { /* a forked child: the workers are the parent's */
    p->num_workers = 0;
    return;
  }
  pthread_mutex_lock(&p->mu);
  p->stop = true;
  atomic_fetch_add_explicit(&p->pub_gen, 1, memory_order_release); /* end the spins */
  pthread_cond_broadcast(&p->work_cv);
  pthread_mutex_unlock(&p->mu);
  for (int i = 0; i < p->num_workers; i++) pthread_join(p->workers[i], NULL);
  p->num_workers = 0;
}

thread_pool *thread_pool_create(int num_threads) {
  if (num_threads < 1) num_threads = 1;
  if (num_threads > THREAD_POOL_MAX_THREADS) num_threads = THREAD_POOL_MAX_THREADS;
  thread_pool *p = calloc(1, sizeof *p);
  if (!p) return NULL;
  p->workers = calloc((size_t)num_threads, sizeof *p->workers);
  if (!p->workers) {
    free(p);
    return NULL;
  }
  pthread_mutex_init(&p->submit, NULL);
  pthread_mutex_init(&p->mu, NULL);
  pthread_cond_init(&p->work_cv, NULL);
  pthread_cond_init(&p->done_cv, NULL);
  atomic_init(&p->next, 0);
  atomic_init(&p->done, 0);
  atomic_init(&p->pub_gen, 0);
  atomic_init(&p->active, 0);
  p->owner = getpid();
  for (int i = 0; i < num_threads - 1; i++) {
    if (pthread_create(&p->workers[i], NULL, worker_main, p)) break;
    p->num_workers++;
  }
  p->num_threads = p->num_workers + 1;
  if (num_threads > 1 && p->num_workers == 0) {
    thread_pool_destroy(p);
    return NULL;
  }
  return p;
}

void thread_pool_destroy(thread_pool *p) {
  if (!p) return;
  if (getpid() != p->owner) { /* a forked child: its copies of the locks may
                                 show the parent's waiters; just free */
    free(p->workers);
    free(p);
    return;
  }
  stop_workers(p);
  pthread_mutex_destroy(&p->submit);
  pthread_mutex_destroy(&p->mu);
  pthread_cond_destroy(&p->work_cv);
  pthread_cond_destroy(&p->done_cv);
  free(p->workers);
  free(p);
}

int thread_pool_num_threads(const thread_pool *p) { return p ? p->num_threads : 1; }

int thread_pool_parse_threads(const char *s, int fallback, char *why, size_t nwhy) {
  if (why && nwhy) why[0] = 0;
  if (!s || !*s) return fallback;
  bool digits = true;
  for (const char *c = s; *c; c++) digits &= *c >= '0' && *c <= '9';
  /* at most 4 digits: no overflow, and anything longer is over the cap */
  long v = digits && strlen(s) <= 4 ? strtol(s, NULL, 10) : -1;
  if (v >= 1 && v <= THREAD_POOL_MAX_THREADS) return (int)v;
  if (why && nwhy)
    snprintf(why, nwhy,
             "HLO_NUM_THREADS='%.40s%s' is not a thread count (an integer from 1 to %d); "
             "using %d (the online cores)",
             s, strlen(s) > 40 ? "..." : "", THREAD_POOL_MAX_THREADS, fallback);
  return fallback;
}

static int default_threads;
static void read_default_threads(void) {
  long cores = sysconf(_SC_NPROCESSORS_ONLN);
  if (cores < 1) cores = 1;
  if (cores > THREAD_POOL_MAX_THREADS) cores = THREAD_POOL_MAX_THREADS;
  char why[200];
  default_threads = thread_pool_parse_threads(getenv("HLO_NUM_THREADS"), (int)cores, why,
                                              sizeof why);
  if (why[0]) fprintf(stderr, "hlo: warning: %s\n", why);
}

int thread_pool_default_threads(void) {
  static pthread_once_t once = PTHREAD_ONCE_INIT;
  pthread_once(&once, read_default_threads);
  return default_threads;
}

static thread_pool *global_pool, one_thread_pool = {.num_threads = 1};

/* At exit the workers are stopped and joined, the pool not freed (a thread
 * still calling it then runs inline). */
static void stop_global(void) { stop_workers(global_pool); }

static void make_global(void) {
  int t = thread_pool_default_threads();
  global_pool = t > 1 ? thread_pool_create(t) : NULL;
  if (global_pool) atexit(stop_global);
  else global_pool = &one_thread_pool;
}

thread_pool *thread_pool_global(void) {
  static pthread_once_t once = PTHREAD_ONCE_INIT;
  pthread_once(&once, make_global);
  return global_pool;
}

void thread_pool_parallel_for(thread_pool *p, int64_t n, int64_t max_chunks, thread_pool_fn fn,
                              void *ctx) {
  if (n <= 0) return;
  /* a forked child runs inline without touching the locks (a worker may
     have held one at the fork) */
  if (!p || p->num_threads <= 1 || n == 1 || getpid() != p->owner ||
      pthread_mutex_trylock(&p->submit)) {
    fn(ctx, 0, n);
    return;
  }
  int64_t k = max_chunks > 0 ? max_chunks : 4 * (int64_t)p->num_threads;
  if (k > n) k = n;
  job j = {fn, ctx, n, k};
  /* the last job's workers leave it within microseconds: with
   * THREAD_POOL_SPIN_NS, wait for that awake first */
  spin_until_i32_zero(&p->active);
  pthread_mutex_lock(&p->mu);
  while (atomic_load_explicit(&p->active, memory_order_relaxed) > 0)
    pthread_cond_wait(&p->done_cv, &p->mu);
  p->fn = fn;
  p->ctx = ctx;
  p->n = n;
  p->nchunks = k;
  atomic_store_explicit(&p->next, 0, memory_order_relaxed);
  atomic_store_explicit(&p->done, 0, memory_order_relaxed);
  p->gen++;
  uint64_t gen = p->gen;
  pthread_cond_broadcast(&p->work_cv);
  pthread_mutex_unlock(&p->mu);
  /* after the unlock: a spinning worker then finds `mu` free */
  atomic_store_explicit(&p->pub_gen, gen, memory_order_release);
  run_chunks(p, &j);
  if (!spin_until_i64(&p->done, k)) {
    pthread_mutex_lock(&p->mu);
    while (atomic_load_explicit(&p->done, memory_order_acquire) < k)
      pthread_cond_wait(&p->done_cv, &p->mu);
    pthread_mutex_unlock(&p->mu);
  }
  pthread_mutex_unlock(&p->submit);
}
