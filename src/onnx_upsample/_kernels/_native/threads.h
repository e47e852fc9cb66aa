/* The threads layer: what the pool (pool.c) needs of the operating system, for POSIX systems
 * (pthreads: Linux with glibc or musl, macOS, the BSDs) and Windows (Win32 threads, slim
 * reader/writer locks, condition variables).
 *
 * Locks and conditions are static objects with static initialisers (THREAD_LOCK_INIT,
 * THREAD_CONDITION_INIT). Threads are started detached; a forked child has none of its
 * parent's, and thread_at_fork registers the handlers that let the pool forget them (a
 * no-op where there is no fork). Shared counters are C11 atomics: GCC and Clang have them,
 * MSVC from 17.5 with /experimental:c11atomics (setup.py passes it). THREADS_AVAILABLE is 1
 * where threads and atomics are both there; elsewhere the pool runs every job on the calling
 * thread, which gives the same results.
 */
#ifndef ONNX_UPSAMPLE_THREADS_H
#define ONNX_UPSAMPLE_THREADS_H

#if defined(_WIN32)
#define THREADS_WIN32 1
#ifndef WIN32_LEAN_AND_MEAN
#define WIN32_LEAN_AND_MEAN
#endif
#ifndef NOMINMAX
#define NOMINMAX
#endif
#include <windows.h>
typedef SRWLOCK ThreadLock;
typedef CONDITION_VARIABLE ThreadCondition;
#define THREAD_LOCK_INIT SRWLOCK_INIT
#define THREAD_CONDITION_INIT CONDITION_VARIABLE_INIT
#elif defined(__unix__) || defined(__APPLE__)
#define THREADS_POSIX 1
#include <pthread.h>
typedef pthread_mutex_t ThreadLock;
typedef pthread_cond_t ThreadCondition;
#define THREAD_LOCK_INIT PTHREAD_MUTEX_INITIALIZER
#define THREAD_CONDITION_INIT PTHREAD_COND_INITIALIZER
#endif

#if (defined(THREADS_WIN32) || defined(THREADS_POSIX)) && defined(__STDC_VERSION__) \
    && __STDC_VERSION__ >= 201112L && !defined(__STDC_NO_ATOMICS__)
#define THREADS_AVAILABLE 1
#include <stdatomic.h>
#else
#define THREADS_AVAILABLE 0
#endif

#if THREADS_AVAILABLE
void thread_lock(ThreadLock *lock);
void thread_unlock(ThreadLock *lock);
/* Release `lock`, wait for a signal on `condition`, take `lock` again (spurious wake-ups
 * happen: the caller waits in a loop over its own condition). */
void thread_wait(ThreadCondition *condition, ThreadLock *lock);
void thread_signal(ThreadCondition *condition);
void thread_broadcast(ThreadCondition *condition);
/* Make a condition anew, in a forked child where no thread can be waiting on it. */
void thread_condition_reset(ThreadCondition *condition);

/* Start a detached thread running main(argument); 0, or -1 where the system refuses. */
int thread_start(void (*main)(void *), void *argument);

/* Handlers run around fork() (prepare in the parent before, then parent or child after);
 * 0 when registered or where processes do not fork, -1 where registering failed. */
int thread_at_fork(void (*prepare)(void), void (*parent)(void), void (*child)(void));
#endif

/* Seconds on a clock that never goes back (its origin is arbitrary). */
double monotonic_seconds(void);

/* Sleep this long (the thread only: not the process). */
void sleep_seconds(double seconds);

/* A hint, inside a spin-wait loop, that this thread is waiting (x86 pause, ARM yield). */
void cpu_relax(void);

#endif
