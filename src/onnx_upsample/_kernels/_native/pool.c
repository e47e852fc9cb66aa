/* Thread pool: see pool.h. POSIX threads; elsewhere every job runs on the calling thread. */
#include "pool.h"

#include <stdlib.h>
#include <time.h>

#define POOL_MAX_THREADS 256
/* How often (seconds) the calling thread looks for Python signals between items. */
#define POLL_INTERVAL 0.02
/* How long (seconds) an idle helper, or a caller waiting for its helpers, spins before it
 * sleeps: a futex wake-up costs tens of microseconds, as much as a small call's work. */
#define SPIN_SECONDS 5e-5

int pool_max_threads(void) { return POOL_MAX_THREADS; }

static double now_seconds(void)
{
#if defined(CLOCK_MONOTONIC)
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec + 1e-9 * (double)t.tv_nsec;
#else
    return (double)clock() / CLOCKS_PER_SEC;
#endif
}

/* Runs items on the calling thread alone; returns the job status. */
static int run_serial(int64_t n_items, pool_item_fn fn, void *context, pool_poll_fn poll,
                      void *poll_context)
{
    double last = now_seconds();
    for (int64_t item = 0; item < n_items; item++) {
        if (fn(context, item, 0) != 0)
            return POOL_NO_MEMORY;
        if (poll != NULL && item + 1 < n_items) {
            double t = now_seconds();
            if (t - last >= POLL_INTERVAL) {
                last = t;
                if (poll(poll_context))
                    return POOL_STOPPED;
            }
        }
    }
    return POOL_OK;
}

#if defined(_WIN32) || !defined(__STDC_VERSION__) || __STDC_VERSION__ < 201112L \
    || defined(__STDC_NO_ATOMICS__)

int pool_run(int64_t n_items, int threads, pool_item_fn fn, void *context,
             pool_poll_fn poll, void *poll_context)
{
    (void)threads;
    return run_serial(n_items, fn, context, poll, poll_context);
}

#else

#include <pthread.h>
#include <stdatomic.h>

/* The job being run; guarded by `lock` except for the atomics.
 *
 * Helpers join a job; the caller never waits for one that has not. `admission` holds the
 * job's generation (high 32 bits), ADMISSION_CLOSED once the caller has taken the last item,
 * and how many helpers joined (low bits). A helper joins with one compare-and-swap that
 * succeeds only while its job is open; the caller closes with one fetch-or, which also tells
 * it exactly how many helpers to wait for. A helper that wakes late (a sleeping core takes
 * tens to hundreds of microseconds) finds the job closed and touches nothing of it. */
#define ADMISSION_CLOSED ((uint64_t)1 << 31)
#define ADMISSION_COUNT (ADMISSION_CLOSED - 1)
static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t wake = PTHREAD_COND_INITIALIZER;
static pthread_cond_t finished = PTHREAD_COND_INITIALIZER;
static int n_helpers;          /* helper threads started in this process */
static int busy;               /* a job is running (another caller then runs serially) */
static _Atomic int callers;    /* callers inside pool_run with work to share, this one too */
static _Atomic uint64_t forks; /* forked children this process is (counted in the child) */
static _Atomic uint64_t generation; /* incremented for every job (under the lock) */
static int job_helpers;        /* helpers wanted by the current job */
static _Atomic uint64_t admission = ADMISSION_CLOSED;
static _Atomic int done_helpers; /* helpers of the current job that joined and finished */
static pool_item_fn job_fn;
static void *job_context;
static int64_t job_items;
static _Atomic int64_t next_item;
static _Atomic int job_status;
static int atfork_installed;
/* Tests only (pool_set_join_delay): a helper sleeps this long before joining, standing for a
 * core that takes long to wake; 0 in normal use. */
static _Atomic double join_delay;

void pool_set_join_delay(double seconds) { atomic_store(&join_delay, seconds); }

static void take_items(int worker)
{
    for (;;) {
        if (atomic_load_explicit(&job_status, memory_order_relaxed) != POOL_OK)
            return;
        int64_t item = atomic_fetch_add_explicit(&next_item, 1, memory_order_relaxed);
        if (item >= job_items)
            return;
        if (job_fn(job_context, item, worker) != 0) {
            int expected = POOL_OK;
            atomic_compare_exchange_strong(&job_status, &expected, POOL_NO_MEMORY);
        }
    }
}

static inline void cpu_relax(void)
{
#if defined(__x86_64__) || defined(__i386__)
    __builtin_ia32_pause();
#elif defined(__aarch64__)
    __asm__ __volatile__("yield");
#endif
}

/* Spin until `*value` differs from `old` (returns 1) or SPIN_SECONDS pass (returns 0). */
static int spin_while_equal_u64(_Atomic uint64_t *value, uint64_t old)
{
    double end = now_seconds() + SPIN_SECONDS;
    for (;;) {
        for (int i = 0; i < 64; i++) {
            if (atomic_load_explicit(value, memory_order_acquire) != old)
                return 1;
            cpu_relax();
        }
        if (now_seconds() > end)
            return 0;
    }
}

/* Join the job of generation `seen` if it is still open; returns 1 when joined. */
static int join_job(uint64_t seen)
{
    uint64_t word = atomic_load(&admission);
    for (;;) {
        if ((word >> 32) != (seen & 0xFFFFFFFFu) || (word & ADMISSION_CLOSED))
            return 0;
        if (atomic_compare_exchange_weak(&admission, &word, word + 1))
            return 1;
    }
}

static void *helper_main(void *arg)
{
    int index = (int)(intptr_t)arg; /* 1-based */
    /* A helper is started for the job being posted, whose generation it must not skip: it
     * has seen none yet. */
    uint64_t seen = UINT64_MAX;
    for (;;) {
        pthread_mutex_lock(&lock);
        while (atomic_load(&generation) == seen || index > job_helpers) {
            if (atomic_load(&generation) != seen)
                seen = atomic_load(&generation); /* a job that does not want this helper */
            pthread_cond_wait(&wake, &lock);
        }
        seen = atomic_load(&generation);
        pthread_mutex_unlock(&lock);
        double delay = atomic_load_explicit(&join_delay, memory_order_relaxed);
        if (delay > 0) {
            struct timespec pause = {(time_t)delay, (long)((delay - (double)(time_t)delay) * 1e9)};
            nanosleep(&pause, NULL);
        }
        if (join_job(seen)) {
            take_items(index);
            pthread_mutex_lock(&lock);
            atomic_fetch_add(&done_helpers, 1);
            pthread_cond_signal(&finished);
            pthread_mutex_unlock(&lock);
        }
        /* the next job often follows at once: look for it before sleeping */
        spin_while_equal_u64(&generation, seen);
    }
    return NULL;
}

static void before_fork(void) { pthread_mutex_lock(&lock); }
static void after_fork_parent(void) { pthread_mutex_unlock(&lock); }

static void after_fork_child(void)
{
    /* The helpers do not exist in the child: forget them, and any job of another thread.
     * before_fork took the lock in this very thread, so it is released here (initialising a
     * locked mutex is undefined); the conditions are made anew with pthread_cond_init, as
     * no thread of the child can be waiting on them. */
    pthread_cond_init(&wake, NULL);
    pthread_cond_init(&finished, NULL);
    pthread_mutex_unlock(&lock);
    n_helpers = 0;
    busy = 0;
    job_helpers = 0;
    atomic_store(&callers, 0);
    atomic_fetch_add(&forks, 1);
    atomic_store(&admission, ADMISSION_CLOSED);
    atomic_store(&done_helpers, 0);
}

/* Start helpers up to `wanted`; returns how many exist (fewer if the system refuses). */
static int ensure_helpers(int wanted)
{
    if (!atfork_installed) {
        if (pthread_atfork(before_fork, after_fork_parent, after_fork_child) != 0)
            return 0;
        atfork_installed = 1;
    }
    while (n_helpers < wanted) {
        pthread_t thread;
        pthread_attr_t attributes;
        pthread_attr_init(&attributes);
        pthread_attr_setdetachstate(&attributes, PTHREAD_CREATE_DETACHED);
        int failed = pthread_create(&thread, &attributes, helper_main,
                                    (void *)(intptr_t)(n_helpers + 1));
        pthread_attr_destroy(&attributes);
        if (failed)
            break;
        n_helpers++;
    }
    return n_helpers;
}

static int run_shared(int64_t n_items, int64_t useful, int threads, pool_item_fn fn,
                      void *context, pool_poll_fn poll, void *poll_context);

int pool_run(int64_t n_items, int threads, pool_item_fn fn, void *context,
             pool_poll_fn poll, void *poll_context)
{
    if (threads > POOL_MAX_THREADS)
        threads = POOL_MAX_THREADS;
    int64_t useful = n_items < threads ? n_items : threads;
    if (useful <= 1)
        return run_serial(n_items, fn, context, poll, poll_context);
    /* Several Python threads calling at once share the cores: each caller counts, so that
     * together they start no more threads than one caller may (two callers on two cores run
     * one thread each, instead of three threads taking turns on two cores). */
    uint64_t forks_before = atomic_load(&forks);
    int others = atomic_fetch_add(&callers, 1);
    int status = run_shared(n_items, useful, threads - others, fn, context, poll, poll_context);
    if (atomic_load(&forks) != forks_before)
        return POOL_FORKED; /* this is the child: its count of callers started anew */
    atomic_fetch_sub(&callers, 1);
    return status;
}

static int run_shared(int64_t n_items, int64_t useful, int threads, pool_item_fn fn,
                      void *context, pool_poll_fn poll, void *poll_context)
{
    if (threads < useful)
        useful = threads;
    if (useful <= 1)
        return run_serial(n_items, fn, context, poll, poll_context);
    pthread_mutex_lock(&lock);
    if (busy) {
        /* another Python thread's job holds the pool: this one runs on its own thread */
        pthread_mutex_unlock(&lock);
        return run_serial(n_items, fn, context, poll, poll_context);
    }
    int helpers = ensure_helpers((int)useful - 1);
    if (helpers > (int)useful - 1)
        helpers = (int)useful - 1;
    if (helpers == 0) {
        pthread_mutex_unlock(&lock);
        return run_serial(n_items, fn, context, poll, poll_context);
    }
    busy = 1;
    job_fn = fn;
    job_context = context;
    job_items = n_items;
    atomic_store(&next_item, 0);
    atomic_store(&job_status, POOL_OK);
    job_helpers = helpers;
    atomic_store(&done_helpers, 0);
    uint64_t job_generation = atomic_fetch_add(&generation, 1) + 1;
    atomic_store(&admission, (job_generation & 0xFFFFFFFFu) << 32);
    pthread_cond_broadcast(&wake);
    pthread_mutex_unlock(&lock);

    /* the caller works too, and alone looks for signals between its items */
    double last = now_seconds();
    for (;;) {
        if (atomic_load_explicit(&job_status, memory_order_relaxed) != POOL_OK)
            break;
        int64_t item = atomic_fetch_add_explicit(&next_item, 1, memory_order_relaxed);
        if (item >= n_items)
            break;
        if (fn(context, item, 0) != 0) {
            int expected = POOL_OK;
            atomic_compare_exchange_strong(&job_status, &expected, POOL_NO_MEMORY);
        }
        if (poll != NULL) {
            double t = now_seconds();
            if (t - last >= POLL_INTERVAL) {
                last = t;
                if (poll(poll_context)) {
                    int expected = POOL_OK;
                    atomic_compare_exchange_strong(&job_status, &expected, POOL_STOPPED);
                }
            }
        }
    }
    /* close the job: from now on no helper joins it, and those that did are counted */
    int joined = (int)(atomic_fetch_or(&admission, ADMISSION_CLOSED) & ADMISSION_COUNT);
    double end = now_seconds() + SPIN_SECONDS;
    while (atomic_load_explicit(&done_helpers, memory_order_acquire) < joined
           && now_seconds() < end)
        cpu_relax();
    pthread_mutex_lock(&lock);
    while (atomic_load(&done_helpers) < joined)
        pthread_cond_wait(&finished, &lock);
    busy = 0;
    job_helpers = 0;
    pthread_mutex_unlock(&lock);
    return atomic_load(&job_status);
}

#endif

