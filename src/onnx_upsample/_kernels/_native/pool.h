/* A small fork-safe thread pool for the Upsample kernels, on the threads layer (threads.h).
 *
 * The calling thread takes part in every job and is the only one that checks for Python
 * signals (between work items), so Ctrl-C interrupts a long call. Helper threads are
 * started lazily and are forgotten in a forked child (thread_at_fork), which starts its
 * own on its first parallel call: unlike GNU OpenMP, a fork after a parallel call is safe.
 * Where the threads layer has no threads, every job runs on the calling thread.
 */
#ifndef ONNX_UPSAMPLE_POOL_H
#define ONNX_UPSAMPLE_POOL_H

#include <stdint.h>

/* One work item; `worker` is 0 for the calling thread, 1.. for helpers. Returns 0, or -1
 * when it could not allocate its scratch (the job then stops and reports MemoryError). */
typedef int (*pool_item_fn)(void *context, int64_t item, int worker);

/* Called by the calling thread between items; returns nonzero to stop the job. */
typedef int (*pool_poll_fn)(void *poll_context);

/* POOL_FORKED: the process forked during the job (a signal handler of the caller did); in the
 * child, items that the parent's helpers had taken were never done. */
enum { POOL_OK = 0, POOL_NO_MEMORY = -1, POOL_STOPPED = -2, POOL_FORKED = -3 };

/* Run items [0, n_items) on up to `threads` threads (the caller included). */
int pool_run(int64_t n_items, int threads, pool_item_fn fn, void *context,
             pool_poll_fn poll, void *poll_context);

/* Tests only: make every helper wait `seconds` before it joins a job (a slow wake-up). */
void pool_set_join_delay(double seconds);

/* Most helper threads a job may use plus one: the pool's upper bound. */
int pool_max_threads(void);

#endif
