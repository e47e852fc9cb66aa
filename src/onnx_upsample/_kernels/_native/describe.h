/* What the constructors of describe.c and describe_linear.c share: checked reads of a
 * description's tables and axes, and the checks of sizes and work split. Each returns -1 (or
 * NULL) with a Python exception set when the description is inconsistent. */
#ifndef ONNX_UPSAMPLE_DESCRIBE_H
#define ONNX_UPSAMPLE_DESCRIBE_H

#include "kernel_object.h"

/* Overflow-checked int64 arithmetic: a caller's numbers must not wrap past a check. */
static inline int mul_ok(int64_t a, int64_t b, int64_t *result)
{
#if defined(__GNUC__) || defined(__clang__)
    return !__builtin_mul_overflow(a, b, result);
#else
    if (a != 0 && (b > INT64_MAX / a || b < INT64_MIN / a))
        return 0;
    *result = a * b;
    return 1;
#endif
}

/* The work split of a description: n_blocks ranges of rows times n_segments segments of
 * `segment` row positions. */
typedef struct {
    long long n_blocks, n_segments, segment;
} WorkSplit;

/* Set "inconsistent kernel description: <why>"; returns -1. */
int bad(const char *why);

/* Hold a C-contiguous array of `kind` items ('i': int64, 'f': float32, 'B': uint8) for the
 * kernel's lifetime; returns its data (NULL with an error) and its item count. */
const void *table(Kernel *self, PyObject *obj, char kind, Py_ssize_t *length, const char *name);

/* Read the axes (outer ones, then the row axis) into self->axes, derive their strides from
 * the input window (block_in elements per row position), and check that the window is
 * exactly the input. Returns the number of outer axes, or -1 with an error. */
int read_axes(Kernel *self, PyObject *axes_obj, PyObject *scales_obj, int64_t block_in,
              int64_t x_elements);

/* Make the rule's results of short outer axes once (see OUTER_CACHE_ENTRIES). */
int cache_outer_axes(Kernel *self, int n_outer);

/* Rows, row bytes, output bytes and item count of a layout; -1 with an error. */
int check_sizes(Kernel *self, int n_outer, int64_t block, int64_t element_bytes,
                const WorkSplit *split, int64_t *rows);

#endif
