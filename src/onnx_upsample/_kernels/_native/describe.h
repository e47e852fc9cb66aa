/* The constructors of the Kernel object (describe.c: nearest, describe_linear.c: linear) and
 * what they share: checked reads of a description's tables and axes, and the checks of sizes
 * and work split. Each returns -1 (or NULL) with a Python exception set when the
 * description is inconsistent: no description can make a kernel read outside its input or
 * write outside its output.
 */
#ifndef ONNX_UPSAMPLE_DESCRIBE_H
#define ONNX_UPSAMPLE_DESCRIBE_H

#include "kernel_object.h"

/* nearest_kernel(...) and linear_kernel(...): a description by name, checked, as a Kernel. */
PyObject *nearest_kernel(PyObject *module, PyObject *args, PyObject *kwargs);
PyObject *linear_kernel(PyObject *module, PyObject *args, PyObject *kwargs);
/* repeat_factor(axis, scale): rule_repeat of one axis description (axis_rule.h). */
PyObject *repeat_factor(PyObject *module, PyObject *args);
/* The names of an axis' fields in a description, in their order (a tuple). */
PyObject *axis_fields(void);

/* The work split of a description: n_blocks ranges of rows times n_segments segments of
 * `segment` row positions (work_split.h). */
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

/* Make the rule's tables of short outer axes once (axis_make_tables). */
int make_axis_tables(Kernel *self, int n_outer);

/* Rows, row bytes, output bytes and item count of a layout; -1 with an error. */
int check_sizes(Kernel *self, int n_outer, int64_t block, int64_t element_bytes,
                const WorkSplit *split, int64_t *rows);

#endif
