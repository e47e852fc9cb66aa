/* Thread pool: see pool.h. Threads, locks and atomics come from the threads layer
 * (threads.h); where it has none, every job runs on the calling thread. */
#include "pool.h"

#include <stddef.h>

#include "threads.h"

#define POOL_MAX_THREADS 256
/* How often (seconds) the calling thread looks for Python signals between items. */
#define POLL_INTERVAL 0.02
/* How long (seconds) an idle helper, or a caller waiting for its helpers, spins before it
 * sleeps: waking a sleeping thread costs tens of microseconds, as much as a small call's
 * work. */
#define SPIN_SECONDS 5e-5

int pool_max_threads(void) { return POOL_MAX_THREADS; }

/* One call's job: its items, and what the caller looks for between them. */
typedef struct {
    int64_t n_items;
    pool_item_fn fn;
    void *context;
    pool_poll_fn poll;
    void *poll_context;
} PoolJob;

/* Runs items on the calling thread alone; returns the job status. */
static int run_serial(const PoolJob *job)
{
    double last = monotonic_seconds();
    for (int64_t item = 0; item < job->n_items; item++) {
        if (job->fn(job->context, item, 0) != 0)
            return POOL_NO_MEMORY;
        if (job->poll != NULL && item + 1 < job->n_items) {
            double t = monotonic_seconds();
            if (t - last >= POLL_INTERVAL) {
                last = t;
                if (job->poll(job->poll_context))
                    return POOL_STOPPED;
            }
        }
    }
    return POOL_OK;
}

#if !THREADS_AVAILABLE

int pool_run(int64_t n_items, int threads, pool_item_fn fn, void *context,
             pool_poll_fn poll, void *poll_context)
{
    (void)threads;
    const PoolJob job = {n_items, fn, context, poll, poll_context};
    return run_serial(&job);
}

void pool_set_join_delay(double seconds) { (void)seconds; }

#else

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
static ThreadLock lock = THREAD_LOCK_INIT;
static ThreadCondition wake = THREAD_CONDITION_INIT;
static ThreadCondition finished = THREAD_CONDITION_INIT;
static int n_helpers;          /* helper threads started in this process */
static int busy;               /* a job is running (another caller then runs serially) */
static _Atomic int callers;    /* callers inside pool_run with work to share, this one too */
static _Atomic uint64_t forks; /* forked children this process is (counted in the child) */
static _Atomic uint64_t generation; /* incremented for every job (under the lock) */
static int job_helpers;        /* helpers wanted by the current job */
static _Atomic uint64_t admission = ADMISSION_CLOSED;
static _Atomic int done_helpers; /* helpers of the current job that joined and finished */
static PoolJob job;            /* the current job (its fn, context and n_items) */
static _Atomic int64_t next_item;
static _Atomic int job_status;
static int atfork_installed;
/* Tests only (pool_set_join_delay): a helper sleeps this long before joining, standing for a
 * core that takes long to wake; 0 in normal use. */
static _Atomic double join_delay;

void pool_set_join_delay(double seconds) { atomic_store(&join_delay, seconds); }

/* Record the first failure of the job (later ones keep it). */
static void fail_job(int status)
{
    int expected = POOL_OK;
    atomic_compare_exchange_strong(&job_status, &expected, status);
}

/* A helper's share of the job: items until none is left or the job failed. */
static void take_items(int worker)
{
    for (;;) {
        if (atomic_load_explicit(&job_status, memory_order_relaxed) != POOL_OK)
            return;
        int64_t item = atomic_fetch_add_explicit(&next_item, 1, memory_order_relaxed);
        if (item >= job.n_items)
            return;
        if (job.fn(job.context, item, worker) != 0)
            fail_job(POOL_NO_MEMORY);
    }
}

/* Spin until `*value` differs from `old` (returns 1) or SPIN_SECONDS pass (returns 0). */
static int spin_while_equal_u64(_Atomic uint64_t *value, uint64_t old)
{
    double end = monotonic_seconds() + SPIN_SECONDS;
    for (;;) {
        for (int i = 0; i < 64; i++) {
            if (atomic_load_explicit(value, memory_order_acquire) != old)
                return 1;
            cpu_relax();
        }
        if (monotonic_seconds() > end)
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

/* Wait for a job that wants helper `index` and that it has not seen; returns its
 * generation. */
static uint64_t wait_for_job(int index, uint64_t seen)
{
    thread_lock(&lock);
    while (atomic_load(&generation) == seen || index > job_helpers) {
        if (atomic_load(&generation) != seen)
            seen = atomic_load(&generation); /* a job that does not want this helper */
        thread_wait(&wake, &lock);
    }
    seen = atomic_load(&generation);
    thread_unlock(&lock);
    return seen;
}

static void helper_main(void *argument)
{
    const int index = (int)(intptr_t)argument; /* 1-based */
    /* A helper is started for the job being posted, whose generation it must not skip: it
     * has seen none yet. */
    uint64_t seen = UINT64_MAX;
    for (;;) {
        seen = wait_for_job(index, seen);
        sleep_seconds(atomic_load_explicit(&join_delay, memory_order_relaxed));
        if (join_job(seen)) {
            take_items(index);
            thread_lock(&lock);
            atomic_fetch_add(&done_helpers, 1);
            thread_signal(&finished);
            thread_unlock(&lock);
        }
        /* the next job often follows at once: look for it before sleeping */
        spin_while_equal_u64(&generation, seen);
    }
}

static void before_fork(void) { thread_lock(&lock); }
static void after_fork_parent(void) { thread_unlock(&lock); }

static void after_fork_child(void)
{
    /* The helpers do not exist in the child: forget them, and any job of another thread.
     * before_fork took the lock in this very thread, so it is released here (initialising a
     * locked mutex is undefined); the conditions are made anew, as no thread of the child
     * can be waiting on them. */
    thread_condition_reset(&wake);
    thread_condition_reset(&finished);
    thread_unlock(&lock);
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
        if (thread_at_fork(before_fork, after_fork_parent, after_fork_child) != 0)
            return 0;
        atfork_installed = 1;
    }
    while (n_helpers < wanted && thread_start(helper_main, (void *)(intptr_t)(n_helpers + 1)) == 0)
        n_helpers++;
    return n_helpers;
}

/* Post the job to `helpers` helpers (the lock held, and released here). */
static void post_job(const PoolJob *posted, int helpers)
{
    busy = 1;
    job = *posted;
    atomic_store(&next_item, 0);
    atomic_store(&job_status, POOL_OK);
    job_helpers = helpers;
    atomic_store(&done_helpers, 0);
    uint64_t job_generation = atomic_fetch_add(&generation, 1) + 1;
    atomic_store(&admission, (job_generation & 0xFFFFFFFFu) << 32);
    thread_broadcast(&wake);
    thread_unlock(&lock);
}

/* The caller's share of the job: items, and alone it looks for signals between them. */
static void run_callers_items(const PoolJob *own)
{
    double last = monotonic_seconds();
    for (;;) {
        if (atomic_load_explicit(&job_status, memory_order_relaxed) != POOL_OK)
            break;
        int64_t item = atomic_fetch_add_explicit(&next_item, 1, memory_order_relaxed);
        if (item >= own->n_items)
            break;
        if (own->fn(own->context, item, 0) != 0)
            fail_job(POOL_NO_MEMORY);
        if (own->poll != NULL) {
            double t = monotonic_seconds();
            if (t - last >= POLL_INTERVAL) {
                last = t;
                if (own->poll(own->poll_context))
                    fail_job(POOL_STOPPED);
            }
        }
    }
}

/* Close the job (from now on no helper joins it) and wait for those that joined. */
static int finish_job(void)
{
    int joined = (int)(atomic_fetch_or(&admission, ADMISSION_CLOSED) & ADMISSION_COUNT);
    double end = monotonic_seconds() + SPIN_SECONDS;
    while (atomic_load_explicit(&done_helpers, memory_order_acquire) < joined
           && monotonic_seconds() < end)
        cpu_relax();
    thread_lock(&lock);
    while (atomic_load(&done_helpers) < joined)
        thread_wait(&finished, &lock);
    busy = 0;
    job_helpers = 0;
    thread_unlock(&lock);
    return atomic_load(&job_status);
}

/* The job on up to `threads` threads, the caller's included; `useful` is at most the item
 * count. */
static int run_shared(const PoolJob *own, int64_t useful, int threads)
{
    if (threads < useful)
        useful = threads;
    if (useful <= 1)
        return run_serial(own);
    thread_lock(&lock);
    if (busy) {
        /* another Python thread's job holds the pool: this one runs on its own thread */
        thread_unlock(&lock);
        return run_serial(own);
    }
    int helpers = ensure_helpers((int)useful - 1);
    if (helpers > (int)useful - 1)
        helpers = (int)useful - 1;
    if (helpers == 0) {
        thread_unlock(&lock);
        return run_serial(own);
    }
    post_job(own, helpers);
    run_callers_items(own);
    return finish_job();
}

int pool_run(int64_t n_items, int threads, pool_item_fn fn, void *context,
             pool_poll_fn poll, void *poll_context)
{
    const PoolJob own = {n_items, fn, context, poll, poll_context};
    if (threads > POOL_MAX_THREADS)
        threads = POOL_MAX_THREADS;
    int64_t useful = n_items < threads ? n_items : threads;
    if (useful <= 1)
        return run_serial(&own);
    /* Several Python threads calling at once share the cores: each caller counts, so that
     * together they start no more threads than one caller may (two callers on two cores run
     * one thread each, instead of three threads taking turns on two cores). */
    uint64_t forks_before = atomic_load(&forks);
    int others = atomic_fetch_add(&callers, 1);
    int status = run_shared(&own, useful, threads - others);
    if (atomic_load(&forks) != forks_before)
        return POOL_FORKED; /* this is the child: its count of callers started anew */
    atomic_fetch_sub(&callers, 1);
    return status;
}

#endif
