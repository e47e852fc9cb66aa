/* Counts of the kernels' fast paths, so that tests can prove each one runs where it should
 * and nowhere else (the bits alone cannot: every path gives the same ones). A work item
 * counts into its own PathCounts and adds them to the process's totals once, at its end,
 * which costs an increment per row and a few atomic adds per item. Python reads the totals
 * by name (_native.path_counts, which also resets them).
 */
#ifndef ONNX_UPSAMPLE_PATH_COUNTS_H
#define ONNX_UPSAMPLE_PATH_COUNTS_H

#include <stdint.h>

/* Each path: its name (Python's key) and what one count is. */
#define KERNEL_PATHS(X)                                                                     \
    X(LINEAR_ROWS)          /* linear output rows made (every row counts here) */          \
    X(SCALAR_SUMS)          /* rows the scalar loops summed (no vector sum took them) */   \
    X(VECTOR_SUMS)          /* rows the vector loops summed: with SCALAR_SUMS, every row */\
    X(IDENTITY_FAST)        /* of either: an identity block's rows summed fast (plain) */  \
    X(IDENTITY_EXACT)       /* ...with every term (every scalar identity row) */           \
    X(IDENTITY_DOUBLED)     /* ...with the last channel's sum doubled */                   \
    X(ROW_PAIRS)            /* pairs of rows the vector sums made in one pass */           \
    X(SWEEP_PAIRS)          /* rows of one sweep of the innermost outer axis that read the \
                             * input rows of their row in the next, expanded once for both */\
    X(NESTED_PAIRS)         /* pairs whose first row leaves out one more axis's corners */ \
    X(COLLAPSED_ROWS)       /* rows summed without their corners of weight +0 */           \
    X(DIRECT_CACHE)         /* items whose corner cache finds rows by number */            \
    X(SEARCHED_CACHE)       /* items whose corner cache searches its slots */              \
    X(STREAMED_ROWS)        /* rows written with streaming stores */                       \
    X(STREAMED_SHARED_LINES) /* float32 sums (a row or a pair) that streamed the parts of  \
                              * cache lines their rows share from a buffer */             \
    X(NEAREST_PLANES)       /* nearest rows made by the x2-by-x2 plane loop */             \
    X(NEAREST_ROW_PAIRS)    /* nearest pairs of rows made from one pass over an input row */\
    X(NEAREST_CHUNKS)       /* nearest items that gather by 32-byte chunks */

#define KERNEL_PATH_CODE(name) PATH_##name,
typedef enum { KERNEL_PATHS(KERNEL_PATH_CODE) PATH_COUNT } KernelPath;
#undef KERNEL_PATH_CODE

/* The identity rows' path by SumKind (linear_sum.h), for every kind but SUM_PLAIN. */
#define PATH_OF_IDENTITY_KIND(kind) (PATH_VECTOR_SUMS + (int)(kind))

/* One work item's counts. */
typedef struct {
    uint64_t n[PATH_COUNT];
} PathCounts;

/* Add an item's counts to the totals (from any thread). */
void path_counts_add(const PathCounts *counts);

/* Path p's name, without PATH_. */
const char *path_name(KernelPath p);

/* The totals since the last take, which resets them, into `totals`. */
void path_counts_take(PathCounts *totals);

#endif
