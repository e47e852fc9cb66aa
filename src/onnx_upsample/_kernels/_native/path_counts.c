/* The fast paths' totals (path_counts.h): atomic where the threads layer has atomics; where
 * it has none, the pool runs every item on the calling thread and plain sums serve. */
#include "path_counts.h"

#include "threads.h"

#define KERNEL_PATH_NAME(name) #name,
static const char *const names[PATH_COUNT] = {KERNEL_PATHS(KERNEL_PATH_NAME)};
#undef KERNEL_PATH_NAME

#if THREADS_AVAILABLE
static _Atomic uint64_t totals[PATH_COUNT];
#else
static uint64_t totals[PATH_COUNT];
#endif

void path_counts_add(const PathCounts *counts)
{
    for (int p = 0; p < PATH_COUNT; p++)
        if (counts->n[p] != 0) {
#if THREADS_AVAILABLE
            atomic_fetch_add_explicit(&totals[p], counts->n[p], memory_order_relaxed);
#else
            totals[p] += counts->n[p];
#endif
        }
}

const char *path_name(KernelPath p) { return names[p]; }

void path_counts_take(PathCounts *taken)
{
    for (int p = 0; p < PATH_COUNT; p++) {
#if THREADS_AVAILABLE
        taken->n[p] = atomic_exchange(&totals[p], 0);
#else
        taken->n[p] = totals[p];
        totals[p] = 0;
#endif
    }
}
