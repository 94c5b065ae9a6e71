/* thread_pool.h — a small pool of persistent worker threads (pthreads) and
 * one primitive, a parallel for over [0, n) split into contiguous chunks.
 * The CPU backend spreads a kernel's tiles over it (issue 7: "threads over
 * the outer parallel dimension").
 *
 * Model: a pool of T threads is the caller plus T - 1 workers. A call
 * publishes one job; the caller and the workers claim its chunks (an atomic
 * counter, so a worker the OS schedules late costs nothing: the others take
 * its chunks) and the call returns when every chunk has run. Workers sleep
 * on a condition variable between jobs (they do not spin while idle, so a
 * BLAS library's own threads running between two kernels are not competed
 * with; a bounded spin before sleeping can be compiled in for measurement,
 * -DTHREAD_POOL_SPIN_NS=N: see thread_pool.c and bench/RUNTIME.md).
 *
 * Re-entrancy (decided: INLINE, never queue, never deadlock): a call made
 * while the pool is running another job — from inside a chunk (nesting), or
 * from a second thread while a first one's job is in flight — runs its whole
 * range [0, n) on the calling thread, as one fn(ctx, 0, n) call. A pool of
 * one thread always runs inline.
 *
 * The process-wide pool (thread_pool_global) is created on first use with
 * $HLO_NUM_THREADS threads (an integer from 1 to THREAD_POOL_MAX_THREADS;
 * 1 = no workers; anything else: a warning), else the number of online
 * cores, capped at THREAD_POOL_MAX_THREADS; its workers
 * start then (lazily, once) and are stopped and joined at exit.
 *
 * After fork() the child has no workers: its calls run inline, touching
 * none of the pool's locks (a worker may have held one at the fork), and
 * its exit does not wait for the parent's workers.
 *
 * Ownership: thread_pool_create returns a pool you destroy with
 * thread_pool_destroy (not while a call on it is in flight);
 * thread_pool_global's pool is lent and lives until exit. Thread safety:
 * every function may be called from any thread at any time, but destroy. */
#ifndef HLO_SUPPORT_THREAD_POOL_H
#define HLO_SUPPORT_THREAD_POOL_H
#include <stddef.h>
#include <stdint.h>

#define THREAD_POOL_MAX_THREADS 256

typedef struct thread_pool thread_pool;

/* The body of a parallel for: processes [begin, end) (begin < end). It may
 * be called several times per call of thread_pool_parallel_for, on
 * different threads at once, on disjoint ranges that together cover [0, n)
 * exactly once. It must not longjmp out or exit the thread. */
typedef void (*thread_pool_fn)(void *ctx, int64_t begin, int64_t end);

/* A pool of `num_threads` threads (the caller counts as one: num_threads - 1
 * workers, started now; values < 1 are taken as 1, values over
 * THREAD_POOL_MAX_THREADS as that). NULL when out of memory or when no
 * worker thread could be started (callers then run inline). */
thread_pool *thread_pool_create(int num_threads);
/* Stops and joins the workers, frees the pool. NULL is fine. */
void thread_pool_destroy(thread_pool *p);

/* The process-wide pool (see above); never NULL (if no worker can be
 * started it is a pool of one thread). Lent. */
thread_pool *thread_pool_global(void);
/* The number of threads HLO_NUM_THREADS asks for (or the online cores when
 * it is unset or empty), read once. Used for the size of the global pool
 * and for the number of compiler processes run at once. A value that is
 * not a thread count (thread_pool_parse_threads) is not silently ignored:
 * a warning naming the variable and the value goes to stderr, once, and
 * the online cores are used (as an unusable HLO_CACHE_DIR never fails a
 * run either). */
int thread_pool_default_threads(void);

/* The thread count that HLO_NUM_THREADS value `s` asks for: a decimal
 * integer from 1 to THREAD_POOL_MAX_THREADS, digits only ("4"; not " 4",
 * "+4", "4x", "0", "-3", "abc", "99999999999"). NULL or "" gives
 * `fallback` silently; any other value gives `fallback` and, in
 * why[0..nwhy) (may be NULL), the warning's text, naming the variable and
 * the value (why[0] is 0 when the value is good). */
int thread_pool_parse_threads(const char *s, int fallback, char *why, size_t nwhy);

/* Threads of `p`, the caller included (1 for NULL). */
int thread_pool_num_threads(const thread_pool *p);

/* Runs fn(ctx, begin, end) over [0, n) split into at most `max_chunks`
 * contiguous chunks of near-equal size (max_chunks <= 0: 4 per thread, so a
 * late thread's share is picked up by the others), the calling thread taking
 * part; returns when all have run. n <= 0 calls nothing. Runs inline as one
 * call when p is NULL or has one thread, when n == 1, or when p is already
 * running a job (nesting, or a second thread: see above), or in a forked
 * child. Memory: what the
 * chunks wrote is visible to the caller on return (the completion counter is
 * a release/acquire pair). */
void thread_pool_parallel_for(thread_pool *p, int64_t n, int64_t max_chunks, thread_pool_fn fn,
                              void *ctx);

#endif /* HLO_SUPPORT_THREAD_POOL_H */
