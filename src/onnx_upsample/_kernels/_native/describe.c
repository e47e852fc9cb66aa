/* The constructors of the Kernel object: a call's description, checked once and completely.
 *
 * A description is the canonical form of onnx_upsample._kernels._layout: per axis (outer
 * axes, then the row axis) one row of an int64 array
 *     [kind, n_out, in_len, n_in, out_first, in_first, num, den]
 * (see AxisRule in axis_rule.h; the extension exports these names in their order as
 * AXIS_FIELDS, and Python builds its rows by them) and the axis' float32 scale, plus the
 * block, the work split and, for linear (describe_linear.c), the element types and the small
 * tap tables of a blended block. Strides
 * are derived here from the input window's lengths, which must multiply to the input's size,
 * and every index a kernel computes is clamped into its window: no description can make a
 * kernel read outside its input or write outside its output.
 */
#include "describe.h"

#include <math.h>
#include <string.h>

#include "cpu.h"

int bad(const char *why)
{
    PyErr_Format(PyExc_ValueError, "inconsistent kernel description: %s", why);
    return -1;
}

/* The fields of one axis in a description, by name: their order is the rows', and Python
 * builds its rows by the names the module exports (axis_fields). */
enum { F_KIND, F_N_OUT, F_IN_LEN, F_N_IN, F_OUT_FIRST, F_IN_FIRST, F_NUM, F_DEN, AXIS_FIELDS };
static const char *const axis_field_names[AXIS_FIELDS] = {
    [F_KIND] = "kind", [F_N_OUT] = "n_out", [F_IN_LEN] = "in_len", [F_N_IN] = "n_in",
    [F_OUT_FIRST] = "out_first", [F_IN_FIRST] = "in_first", [F_NUM] = "num", [F_DEN] = "den",
};

PyObject *axis_fields(void)
{
    PyObject *names = PyTuple_New(AXIS_FIELDS);
    for (Py_ssize_t i = 0; names != NULL && i < AXIS_FIELDS; i++) {
        PyObject *name = PyUnicode_FromString(axis_field_names[i]);
        if (name == NULL || PyTuple_SetItem(names, i, name) < 0)
            Py_CLEAR(names);
    }
    return names;
}

/* One axis' fields and scale as a rule; -1 with an error where its kind is unknown. */
static int rule_from_fields(const int64_t *v, float scale, AxisRule *a)
{
    if (v[F_KIND] < AXIS_COPY || v[F_KIND] > AXIS_BLEND)
        return bad("axis kind");
    a->kind = (AxisKind)v[F_KIND];
    a->n_out = v[F_N_OUT];
    a->in_len = v[F_IN_LEN];
    a->n_in = v[F_N_IN];
    a->out_first = v[F_OUT_FIRST];
    a->in_first = v[F_IN_FIRST];
    a->num = v[F_NUM];
    a->den = v[F_DEN];
    a->scale = scale;
    return 0;
}

const void *table(Kernel *self, PyObject *obj, char kind, Py_ssize_t *length,
                  const char *name)
{
    if (self->n_views >= MAX_VIEWS) {
        PyErr_SetString(PyExc_RuntimeError, "too many kernel tables");
        return NULL;
    }
    Py_buffer *view = &self->views[self->n_views];
    if (PyObject_GetBuffer(obj, view, PyBUF_C_CONTIGUOUS | PyBUF_FORMAT) != 0)
        return NULL;
    self->n_views++;
    const char *format = view->format ? view->format : "B";
    if (*format == '<' || *format == '=' || *format == '@')
        format++;
    int ok;
    if (kind == 'i')
        ok = view->itemsize == 8 && (strcmp(format, "l") == 0 || strcmp(format, "q") == 0);
    else if (kind == 'f')
        ok = view->itemsize == 4 && strcmp(format, "f") == 0;
    else
        ok = view->itemsize == 1 && strcmp(format, "B") == 0;
    if (!ok || view->len == 0) {
        PyErr_Format(PyExc_ValueError, "kernel table %s has format '%s', item size %zd and "
                     "%zd bytes; expected a non-empty table of %s", name, format,
                     view->itemsize, view->len,
                     kind == 'i' ? "int64" : kind == 'f' ? "float32" : "uint8");
        return NULL;
    }
    *length = view->len / view->itemsize;
    return view->buf;
}

static int check_rule(const AxisRule *a)
{
    if (a->kind < AXIS_COPY || a->kind > AXIS_BLEND || a->n_out < 1 || a->in_len < 1)
        return bad("axis kind or lengths");
    if (a->kind == AXIS_COPY)
        return a->in_len == a->n_out ? 0 : bad("a copied axis has the input's length");
    if (a->n_in > MAX_AXIS_INPUT || a->n_in < a->in_len || a->in_first < 0
        || a->in_first > a->n_in - a->in_len
        || a->out_first < 0 || a->out_first > INT64_MAX - a->n_out)
        return bad("axis window");
    if (!isfinite(a->scale) || a->scale < 1.0f || a->den < 1 || (a->den & (a->den - 1)))
        return bad("axis scale");
    if (a->den > 1) {
        if (a->num < 1 || a->num >= F32_EXACT_LIMIT
            || (double)a->num / (double)a->den != (double)a->scale)
            return bad("axis scale ratio");
    } else if (a->num == 0 ? (double)a->scale < 0x1p63 : (double)a->num != (double)a->scale) {
        return bad("axis scale ratio");
    }
    return 0;
}

int read_axes(Kernel *self, PyObject *axes_obj, PyObject *scales_obj, int64_t block_in,
              int64_t x_elements)
{
    Py_ssize_t n_values, n_scales;
    const int64_t *values = table(self, axes_obj, 'i', &n_values, "axes");
    const float *scales = values ? table(self, scales_obj, 'f', &n_scales, "scales") : NULL;
    if (scales == NULL)
        return -1;
    Py_ssize_t n_axes = n_values / AXIS_FIELDS;
    if (n_values % AXIS_FIELDS || n_axes != n_scales || n_axes < 2 || n_axes > MAX_OUTER + 1)
        return bad("axis count");
    int64_t stride = block_in;
    for (Py_ssize_t i = n_axes - 1; i >= 0; i--) {
        AxisRule *a = &self->axes[i];
        if (rule_from_fields(values + i * AXIS_FIELDS, scales[i], a) != 0 || check_rule(a) != 0)
            return -1;
        a->stride = stride;
        if (!checked_mul_i64(stride, a->in_len, &stride))
            return bad("input size overflows");
    }
    if (block_in < 1 || stride != x_elements)
        return bad("the axes' input lengths do not multiply to the input's size");
    return (int)n_axes - 1;
}

int make_axis_tables(Kernel *self, int n_outer)
{
    if (axis_make_tables(self->axes, n_outer) != 0) {
        PyErr_NoMemory();
        return -1;
    }
    return 0;
}

int check_sizes(Kernel *self, int n_outer, int64_t block, int64_t element_bytes,
                const WorkSplit *split, int64_t *rows)
{
    const int64_t row_len = self->axes[n_outer].n_out;
    const int64_t n_blocks = split->n_blocks, n_segments = split->n_segments;
    const int64_t segment = split->segment;
    int64_t row_elements, items;
    *rows = 1;
    for (int a = 0; a < n_outer; a++)
        if (!checked_mul_i64(*rows, self->axes[a].n_out, rows))
            return bad("row count");
    if (block < 1 || n_blocks < 1 || n_segments < 1 || segment < 1 || segment > row_len
        || n_segments > row_len || (row_len - 1) / segment + 1 > n_segments
        || row_len / segment + 1 < n_segments || !checked_mul_i64(n_blocks, n_segments, &items))
        return bad("work split");
    if (!checked_mul_i64(row_len, block, &row_elements)
        || !checked_mul_i64(row_elements, element_bytes, &self->row_bytes)
        || !checked_mul_i64(*rows, self->row_bytes, &self->out_bytes))
        return bad("sizes overflow");
    self->n_items = (n_blocks < *rows ? n_blocks : *rows) * n_segments;
    return 0;
}

/* nearest_kernel(x_elements=, unit=, block=, axes=, scales=, row_kind=, repeat=, n_blocks=,
 *                n_segments=, segment=[, isa=]): the description by name (positions also work);
 * isa 1 runs the AVX2 row loops where the CPU has them, 0 (the default) the baseline's */
PyObject *nearest_kernel(PyObject *module, PyObject *args, PyObject *kwargs)
{
    (void)module;
    static char *names[] = {"x_elements", "unit", "block", "axes", "scales", "row_kind",
                            "repeat", "n_blocks", "n_segments", "segment", "isa", NULL};
    long long x_elements, block, repeat;
    WorkSplit split;
    int unit, row_kind, isa = 0;
    PyObject *axes_obj, *scales_obj;
    if (!PyArg_ParseTupleAndKeywords(args, kwargs, "LiLOOiLLLL|i", names, &x_elements, &unit,
                                     &block, &axes_obj, &scales_obj, &row_kind, &repeat,
                                     &split.n_blocks, &split.n_segments, &split.segment, &isa))
        return NULL;
    const int64_t segment = split.segment;
    Kernel *self = kernel_new();
    if (self == NULL)
        return NULL;
    int n = read_axes(self, axes_obj, scales_obj, block, x_elements);
    if (n < 0)
        goto fail;
    const AxisRule *row = &self->axes[n];
    for (int a = 0; a < n; a++)
        if (self->axes[a].kind == AXIS_BLEND) {
            bad("a blended axis in a nearest call");
            goto fail;
        }
    int row_ok = row_kind == ROW_COPY ? row->kind == AXIS_COPY && repeat == 1
        : row_kind == ROW_REPEAT ? rule_repeat(row) == repeat && repeat >= 2
                                       && segment % repeat == 0
        : row_kind == ROW_GATHER ? row->kind == AXIS_GATHER && repeat == 1 : 0;
    if ((unit != 1 && unit != 2 && unit != 4 && unit != 8) || !row_ok
        || (isa != ISA_BASELINE && isa != ISA_AVX2)) {
        bad("unit, row kind or instruction set");
        goto fail;
    }
    int64_t rows;
    if (check_sizes(self, n, block, unit, &split, &rows) != 0
        || !checked_mul_i64(x_elements, unit, &self->x_bytes) || make_axis_tables(self, n) != 0)
        goto fail;
    NearestJob *job = &self->nearest;
    job->unit = unit;
    job->rows = rows;
    job->row_len = row->n_out;
    job->block = block;
    job->n_outer = n;
    job->axes = self->axes;
    job->row_kind = (RowKind)row_kind;
    job->repeat = repeat;
    job->n_blocks = split.n_blocks < rows ? split.n_blocks : rows;
    job->n_segments = split.n_segments;
    job->segment = segment;
    job->isa = cpu_isa(isa);
    self->x_align = self->out_align = unit;
    self->is_linear = 0;
    return (PyObject *)self;
fail:
    Py_DECREF(self);
    return NULL;
}


/* repeat_factor(axis, scale): rule_repeat of one axis description (see axis_rule.h), so that
 * the layout can align its row segments to the factor the kernels will use. */
PyObject *repeat_factor(PyObject *module, PyObject *args)
{
    (void)module;
    PyObject *axis_obj;
    float scale;
    if (!PyArg_ParseTuple(args, "Of", &axis_obj, &scale))
        return NULL;
    Kernel *holder = kernel_new();
    if (holder == NULL)
        return NULL;
    Py_ssize_t n_values;
    const int64_t *v = table(holder, axis_obj, 'i', &n_values, "axis");
    PyObject *result = NULL;
    if (v != NULL && n_values != AXIS_FIELDS) {
        bad("axis fields");
    } else if (v != NULL) {
        AxisRule a = {0};
        if (rule_from_fields(v, scale, &a) == 0 && check_rule(&a) == 0)
            result = PyLong_FromLongLong(rule_repeat(&a));
    }
    Py_DECREF(holder);
    return result;
}
