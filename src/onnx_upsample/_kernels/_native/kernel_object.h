/* The Kernel object of the binding: one prepared Upsample call. Its constructors (describe.c,
 * describe_linear.c) check a call's description completely, once; calling it (kernel(x, out,
 * threads, ...), kernel_object.c) then only checks the buffers it is given against it and
 * runs the work items on the pool, with the GIL released.
 */
#ifndef ONNX_UPSAMPLE_KERNEL_OBJECT_H
#define ONNX_UPSAMPLE_KERNEL_OBJECT_H

/* CPython's limited API of 3.11 (the first with the buffer protocol in it): the extension
 * then loads in every later CPython, so one abi3 wheel serves them all (setup.py tags it
 * cp311-abi3). Free-threaded CPython has no limited API: setup.py builds the full API there
 * and says so with ONNX_UPSAMPLE_FULL_API. */
#ifndef ONNX_UPSAMPLE_FULL_API
#define Py_LIMITED_API 0x030B0000
#endif
#define PY_SSIZE_T_CLEAN
#include <Python.h>

#include "axis_rule.h"
#include "linear.h"
#include "nearest.h"

/* Buffers a kernel holds for its lifetime (its tables). */
#define MAX_VIEWS 8

typedef struct {
    PyObject_HEAD
    int is_linear;
    NearestJob nearest;
    LinearJob linear;
    AxisRule axes[MAX_OUTER + 1]; /* the outer axes, then the row axis */
    int64_t x_bytes;      /* exact size of the input the description was made for */
    int x_align, out_align; /* bytes of one element read and written */
    int64_t out_bytes;    /* size of a whole output (linear: `rows` rows) */
    int64_t row_bytes;    /* bytes per output row */
    int64_t n_items;
    int n_views;
    Py_buffer views[MAX_VIEWS];
} Kernel;

/* Make the Kernel type (once per process); NULL with an exception set. */
PyTypeObject *kernel_type(void);

/* A new, zero-filled Kernel for the constructors to fill; NULL with an exception set. */
Kernel *kernel_new(void);

#endif
