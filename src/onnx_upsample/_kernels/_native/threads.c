/* The threads layer (threads.h): POSIX threads or Win32, one section each. */
#if !defined(_WIN32)
/* clock_gettime, CLOCK_MONOTONIC and nanosleep under -std=c11 (glibc and musl declare them
 * only for POSIX programs); macOS also hides them from a plain POSIX program */
#define _POSIX_C_SOURCE 200809L
#if defined(__APPLE__)
#define _DARWIN_C_SOURCE 1
#endif
#endif

#include "threads.h"

#include <stdint.h>
#include <time.h>

#if defined(THREADS_WIN32)
#include <process.h>
#endif
#include <stdlib.h>

#if THREADS_AVAILABLE
/* What a new thread runs, handed over on the heap: the thread frees it. */
typedef struct {
    void (*main)(void *);
    void *argument;
} ThreadStart;

static ThreadStart *new_start(void (*main)(void *), void *argument)
{
    ThreadStart *start = (ThreadStart *)malloc(sizeof *start);
    if (start != NULL)
        *start = (ThreadStart){main, argument};
    return start;
}

static ThreadStart take_start(void *start)
{
    const ThreadStart s = *(ThreadStart *)start;
    free(start);
    return s;
}
#endif

#if THREADS_AVAILABLE && defined(THREADS_POSIX)

void thread_lock(ThreadLock *lock) { pthread_mutex_lock(lock); }
void thread_unlock(ThreadLock *lock) { pthread_mutex_unlock(lock); }
void thread_wait(ThreadCondition *condition, ThreadLock *lock)
{
    pthread_cond_wait(condition, lock);
}
void thread_signal(ThreadCondition *condition) { pthread_cond_signal(condition); }
void thread_broadcast(ThreadCondition *condition) { pthread_cond_broadcast(condition); }
void thread_condition_reset(ThreadCondition *condition) { pthread_cond_init(condition, NULL); }

static void *posix_main(void *start)
{
    const ThreadStart s = take_start(start);
    s.main(s.argument);
    return NULL;
}

int thread_start(void (*main)(void *), void *argument)
{
    ThreadStart *start = new_start(main, argument);
    if (start == NULL)
        return -1;
    pthread_t thread;
    pthread_attr_t attributes;
    pthread_attr_init(&attributes);
    pthread_attr_setdetachstate(&attributes, PTHREAD_CREATE_DETACHED);
    const int failed = pthread_create(&thread, &attributes, posix_main, start);
    pthread_attr_destroy(&attributes);
    if (failed)
        free(start);
    return failed ? -1 : 0;
}

int thread_at_fork(void (*prepare)(void), void (*parent)(void), void (*child)(void))
{
    return pthread_atfork(prepare, parent, child) == 0 ? 0 : -1;
}

#elif THREADS_AVAILABLE && defined(THREADS_WIN32)

void thread_lock(ThreadLock *lock) { AcquireSRWLockExclusive(lock); }
void thread_unlock(ThreadLock *lock) { ReleaseSRWLockExclusive(lock); }
void thread_wait(ThreadCondition *condition, ThreadLock *lock)
{
    SleepConditionVariableSRW(condition, lock, INFINITE, 0);
}
void thread_signal(ThreadCondition *condition) { WakeConditionVariable(condition); }
void thread_broadcast(ThreadCondition *condition) { WakeAllConditionVariable(condition); }
void thread_condition_reset(ThreadCondition *condition) { InitializeConditionVariable(condition); }

static unsigned __stdcall win32_main(void *start)
{
    const ThreadStart s = take_start(start);
    s.main(s.argument);
    return 0;
}

int thread_start(void (*main)(void *), void *argument)
{
    ThreadStart *start = new_start(main, argument);
    if (start == NULL)
        return -1;
    /* _beginthreadex, not CreateThread: the C runtime's per-thread state is set up */
    uintptr_t handle = _beginthreadex(NULL, 0, win32_main, start, 0, NULL);
    if (handle == 0) {
        free(start);
        return -1;
    }
    CloseHandle((HANDLE)handle); /* detached: nothing waits for it */
    return 0;
}

int thread_at_fork(void (*prepare)(void), void (*parent)(void), void (*child)(void))
{
    (void)prepare, (void)parent, (void)child; /* Windows processes do not fork */
    return 0;
}

#endif

double monotonic_seconds(void)
{
#if defined(_WIN32)
    LARGE_INTEGER count, frequency;
    QueryPerformanceCounter(&count);
    QueryPerformanceFrequency(&frequency);
    return (double)count.QuadPart / (double)frequency.QuadPart;
#else
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec + 1e-9 * (double)t.tv_nsec;
#endif
}

void sleep_seconds(double seconds)
{
    if (seconds <= 0)
        return;
#if defined(_WIN32)
    Sleep((DWORD)(seconds * 1000.0 + 0.5));
#else
    struct timespec pause = {(time_t)seconds,
                             (long)((seconds - (double)(time_t)seconds) * 1e9)};
    nanosleep(&pause, NULL);
#endif
}

void cpu_relax(void)
{
#if defined(_WIN32) && !defined(__GNUC__)
    YieldProcessor();
#elif (defined(__x86_64__) || defined(__i386__)) && defined(__GNUC__)
    __builtin_ia32_pause();
#elif defined(__aarch64__) && defined(__GNUC__)
    __asm__ __volatile__("yield");
#elif defined(_WIN32)
    YieldProcessor();
#endif
}
