/* onnx_upsample._kernels._native: the compiled Upsample kernels, behind a thin binding.
 *
 * nearest_kernel(...) and linear_kernel(...) take a call's canonical form (built by
 * onnx_upsample._kernels._compiled) once, check that every table stays inside the input,
 * and return a Kernel; kernel(x, out, threads[, row_base]) then fills `out` with the GIL
 * released, on the pool of pool.c, looking for signals (Ctrl-C) between work items.
 */
#define PY_SSIZE_T_CLEAN
#include <Python.h>

#include <stdlib.h>
#include <string.h>

#include "kernels.h"
#include "pool.h"

#define MAX_VIEWS 24

typedef struct {
    PyObject_HEAD
    int is_linear;
    NearestJob nearest;
    LinearJob linear;
    int64_t x_bytes;      /* exact size of the input the tables were built for */
    int64_t out_bytes;    /* size of a whole output (linear: `rows` rows) */
    int64_t row_bytes;    /* bytes per output row */
    int64_t n_items;
    int n_views;
    Py_buffer views[MAX_VIEWS];
} Kernel;

static void kernel_dealloc(Kernel *self)
{
    for (int i = 0; i < self->n_views; i++)
        PyBuffer_Release(&self->views[i]);
    Py_TYPE(self)->tp_free((PyObject *)self);
}

/* Hold a 1-D C-contiguous table of `itemsize`-byte items; returns its data or NULL. */
static const void *table(Kernel *self, PyObject *obj, Py_ssize_t itemsize, Py_ssize_t *length,
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
    if (view->itemsize != itemsize || view->len == 0) {
        PyErr_Format(PyExc_ValueError, "kernel table %s has item size %zd and %zd bytes; "
                     "expected a non-empty table of %zd-byte items",
                     name, view->itemsize, view->len, itemsize);
        return NULL;
    }
    *length = view->len / itemsize;
    return view->buf;
}

static int64_t max_of(const int64_t *values, Py_ssize_t n, int64_t *minimum)
{
    int64_t hi = values[0], lo = values[0];
    for (Py_ssize_t i = 1; i < n; i++) {
        if (values[i] > hi)
            hi = values[i];
        if (values[i] < lo)
            lo = values[i];
    }
    if (lo < *minimum)
        *minimum = lo;
    return hi;
}

/* Overflow-checked int64 arithmetic: tables from a caller must not wrap past a check. */
static int mul_ok(int64_t a, int64_t b, int64_t *result)
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

static int add_ok(int64_t a, int64_t b, int64_t *result)
{
#if defined(__GNUC__) || defined(__clang__)
    return !__builtin_add_overflow(a, b, result);
#else
    if ((b > 0 && a > INT64_MAX - b) || (b < 0 && a < INT64_MIN - b))
        return 0;
    *result = a + b;
    return 1;
#endif
}

static int bad_tables(const char *why)
{
    PyErr_Format(PyExc_ValueError, "inconsistent kernel tables: %s", why);
    return -1;
}

/* Check the outer axes: sizes, starts inside the tables; returns the largest offset read
 * (sum over axes of the largest entry) through *reach, or -1 with an error. */
static int check_outer(int n, const int64_t *sizes, const int64_t *starts, Py_ssize_t n_starts,
                       const int64_t *lo, const int64_t *hi, Py_ssize_t n_entries,
                       int64_t *reach, int64_t *count)
{
    if (n < 1 || n > 64 || n_starts < n)
        return bad_tables("outer axis count");
    int64_t total = 0, rows = 1, minimum = 0;
    for (int a = 0; a < n; a++) {
        if (sizes[a] < 1 || starts[a] < 0 || sizes[a] > n_entries
            || starts[a] > n_entries - sizes[a])
            return bad_tables("outer axis sizes");
        int64_t m = max_of(lo + starts[a], (Py_ssize_t)sizes[a], &minimum);
        if (hi != NULL) {
            int64_t m2 = max_of(hi + starts[a], (Py_ssize_t)sizes[a], &minimum);
            if (m2 > m)
                m = m2;
        }
        if (!add_ok(total, m, &total))
            return bad_tables("outer offsets overflow");
        if (!mul_ok(rows, sizes[a], &rows))
            return bad_tables("row count");
    }
    if (minimum < 0)
        return bad_tables("negative offset");
    *reach = total;
    *count = rows;
    return 0;
}

static Kernel *new_kernel(PyTypeObject *type)
{
    Kernel *self = (Kernel *)type->tp_alloc(type, 0);
    return self;
}

static PyTypeObject KernelType;

/* nearest_kernel(x_elements, unit, row_len, block, sizes, contrib, starts, row_table,
 *                row_kind, repeat, n_blocks, n_segments, segment) */
static PyObject *nearest_kernel(PyObject *module, PyObject *args)
{
    (void)module;
    long long x_elements, row_len, block, repeat, n_blocks, n_segments, segment;
    int unit, row_kind;
    PyObject *sizes_obj, *contrib_obj, *starts_obj, *table_obj;
    if (!PyArg_ParseTuple(args, "LiLLOOOOiLLLL", &x_elements, &unit, &row_len, &block,
                          &sizes_obj, &contrib_obj, &starts_obj, &table_obj, &row_kind,
                          &repeat, &n_blocks, &n_segments, &segment))
        return NULL;
    Kernel *self = new_kernel(&KernelType);
    if (self == NULL)
        return NULL;
    NearestJob *job = &self->nearest;
    Py_ssize_t n_sizes, n_contrib, n_starts, n_table;
    job->sizes = table(self, sizes_obj, 8, &n_sizes, "sizes");
    job->contrib = job->sizes ? table(self, contrib_obj, 8, &n_contrib, "contrib") : NULL;
    job->starts = job->contrib ? table(self, starts_obj, 8, &n_starts, "starts") : NULL;
    job->row_table = job->starts ? table(self, table_obj, 8, &n_table, "row_table") : NULL;
    if (job->row_table == NULL)
        goto fail;
    if (unit != 1 && unit != 2 && unit != 4 && unit != 8) {
        bad_tables("unit");
        goto fail;
    }
    if (row_len < 1 || block < 1 || n_blocks < 1 || n_segments < 1 || segment < 1
        || repeat < 1 || row_kind < ROW_COPY || row_kind > ROW_GATHER || x_elements < 0) {
        bad_tables("layout");
        goto fail;
    }
    int64_t reach, rows;
    if (check_outer((int)n_sizes, job->sizes, job->starts, n_starts, job->contrib, NULL,
                    n_contrib, &reach, &rows) != 0)
        goto fail;
    int64_t row_reach; /* largest input element of a row read, plus one */
    if (row_kind == ROW_GATHER) {
        int64_t minimum = 0;
        if (n_table < row_len) {
            bad_tables("row table length");
            goto fail;
        }
        int64_t top = max_of(job->row_table, (Py_ssize_t)row_len, &minimum);
        if (minimum < 0) {
            bad_tables("negative row index");
            goto fail;
        }
        if (!add_ok(top, 1, &top) || !mul_ok(top, block, &row_reach)) {
            bad_tables("row offsets overflow");
            goto fail;
        }
    } else if (row_kind == ROW_REPEAT) {
        if (row_len % repeat || segment % repeat) {
            bad_tables("repeat");
            goto fail;
        }
        if (!mul_ok(row_len / repeat, block, &row_reach)) {
            bad_tables("row offsets overflow");
            goto fail;
        }
    } else if (!mul_ok(row_len, block, &row_reach)) {
        bad_tables("row offsets overflow");
        goto fail;
    }
    int64_t total_reach, row_elements, row_bytes, out_bytes, x_bytes;
    if (!add_ok(reach, row_reach, &total_reach) || total_reach > x_elements) {
        bad_tables("the tables read beyond the input");
        goto fail;
    }
    if (!mul_ok(row_len, block, &row_elements) || !mul_ok(row_elements, unit, &row_bytes)
        || !mul_ok(rows, row_bytes, &out_bytes) || !mul_ok(x_elements, unit, &x_bytes)) {
        bad_tables("sizes overflow");
        goto fail;
    }
    job->unit = unit;
    job->rows = rows;
    job->row_len = row_len;
    job->block = block;
    job->n_outer = (int)n_sizes;
    job->row_kind = row_kind;
    job->repeat = repeat;
    job->n_blocks = n_blocks < rows ? n_blocks : rows;
    job->n_segments = n_segments;
    job->segment = segment;
    int64_t n_items;
    if (segment > row_len || n_segments > row_len || row_len / segment + 1 < n_segments
        || (row_len - 1) / segment + 1 > n_segments
        || !mul_ok(job->n_blocks, n_segments, &n_items)) {
        bad_tables("segments");
        goto fail;
    }
    self->is_linear = 0;
    self->x_bytes = x_bytes;
    self->row_bytes = row_bytes;
    self->out_bytes = out_bytes;
    self->n_items = n_items;
    return (PyObject *)self;
fail:
    Py_DECREF(self);
    return NULL;
}

static const int src_acc_double[T_COUNT] = {0, 0, 0, 0, 0, 0, 0, 1, 1, 1, 1};
static const int64_t element_bytes[T_COUNT] = {1, 1, 2, 2, 4, 4, 2, 8, 8, 4, 8};

/* linear_kernel(x_elements, src, dst, lut, row_len, block, block_in, sizes, interp, lo, hi, w_lo,
 *               w_hi, starts, row_blend, row_lo, row_hi, row_w_lo, row_w_hi, block_blend,
 *               blk_lo, blk_hi, blk_w_lo, blk_w_hi, n_blocks, n_segments, segment,
 *               low_bound, high_bound, isa, row_repeat) */
static PyObject *linear_kernel(PyObject *module, PyObject *args)
{
    (void)module;
    long long x_elements, row_len, block, block_in, n_blocks, n_segments, segment, row_repeat;
    int src, dst, row_blend, block_blend, isa;
    double low_bound, high_bound;
    PyObject *lut_obj, *sizes_obj, *interp_obj, *lo_obj, *hi_obj, *w_lo_obj, *w_hi_obj;
    PyObject *starts_obj, *row_lo_obj, *row_hi_obj, *row_w_lo_obj, *row_w_hi_obj;
    PyObject *blk_lo_obj, *blk_hi_obj, *blk_w_lo_obj, *blk_w_hi_obj;
    if (!PyArg_ParseTuple(args, "LiiOLLLOOOOOOOiOOOOiOOOOLLLddiL", &x_elements, &src, &dst,
                          &lut_obj, &row_len, &block, &block_in, &sizes_obj, &interp_obj, &lo_obj,
                          &hi_obj, &w_lo_obj, &w_hi_obj, &starts_obj, &row_blend, &row_lo_obj,
                          &row_hi_obj, &row_w_lo_obj, &row_w_hi_obj, &block_blend, &blk_lo_obj,
                          &blk_hi_obj, &blk_w_lo_obj, &blk_w_hi_obj, &n_blocks, &n_segments,
                          &segment, &low_bound, &high_bound, &isa, &row_repeat))
        return NULL;
    Kernel *self = new_kernel(&KernelType);
    if (self == NULL)
        return NULL;
    LinearJob *job = &self->linear;
    Py_ssize_t n_lut, n_sizes, n_interp_flags, n_lo, n_hi, n_wlo, n_whi, n_starts;
    Py_ssize_t n_rlo, n_rhi, n_rwlo, n_rwhi, n_blo, n_bhi, n_bwlo, n_bwhi;
    if (src < 0 || src >= T_COUNT || dst < 0 || dst >= T_COUNT) {
        bad_tables("element type");
        goto fail;
    }
    job->lut = table(self, lut_obj, 4, &n_lut, "lut");
    job->sizes = job->lut ? table(self, sizes_obj, 8, &n_sizes, "sizes") : NULL;
    job->interp = job->sizes ? table(self, interp_obj, 1, &n_interp_flags, "interp") : NULL;
    job->lo = job->interp ? table(self, lo_obj, 8, &n_lo, "lo") : NULL;
    job->hi = job->lo ? table(self, hi_obj, 8, &n_hi, "hi") : NULL;
    job->w_lo = job->hi ? table(self, w_lo_obj, 4, &n_wlo, "w_lo") : NULL;
    job->w_hi = job->w_lo ? table(self, w_hi_obj, 4, &n_whi, "w_hi") : NULL;
    job->starts = job->w_hi ? table(self, starts_obj, 8, &n_starts, "starts") : NULL;
    job->row_lo = job->starts ? table(self, row_lo_obj, 8, &n_rlo, "row_lo") : NULL;
    job->row_hi = job->row_lo ? table(self, row_hi_obj, 8, &n_rhi, "row_hi") : NULL;
    job->row_w_lo = job->row_hi ? table(self, row_w_lo_obj, 4, &n_rwlo, "row_w_lo") : NULL;
    job->row_w_hi = job->row_w_lo ? table(self, row_w_hi_obj, 4, &n_rwhi, "row_w_hi") : NULL;
    job->blk_lo = job->row_w_hi ? table(self, blk_lo_obj, 8, &n_blo, "blk_lo") : NULL;
    job->blk_hi = job->blk_lo ? table(self, blk_hi_obj, 8, &n_bhi, "blk_hi") : NULL;
    job->blk_w_lo = job->blk_hi ? table(self, blk_w_lo_obj, 4, &n_bwlo, "blk_w_lo") : NULL;
    job->blk_w_hi = job->blk_w_lo ? table(self, blk_w_hi_obj, 4, &n_bwhi, "blk_w_hi") : NULL;
    if (job->blk_w_hi == NULL)
        goto fail;
    int64_t linear_items;
    if (row_len < 1 || block < 1 || n_blocks < 1 || n_segments < 1 || segment < 1
        || x_elements < 0 || segment > row_len || n_segments > row_len
        || (row_len - 1) / segment + 1 > n_segments
        || !mul_ok(n_blocks, n_segments, &linear_items)
        || (!block_blend && block_in != block) || block_in < 1) {
        bad_tables("layout");
        goto fail;
    }
    if (src == T_HALF && n_lut != 65536) {
        bad_tables("lut");
        goto fail;
    }
    if (n_interp_flags < n_sizes || n_hi != n_lo || n_wlo != n_lo || n_whi != n_lo) {
        bad_tables("outer tables");
        goto fail;
    }
    int64_t reach, rows;
    if (check_outer((int)n_sizes, job->sizes, job->starts, n_starts, job->lo, job->hi, n_lo,
                    &reach, &rows) != 0)
        goto fail;
    int n_interp = 0;
    for (Py_ssize_t a = 0; a < n_sizes; a++)
        n_interp += job->interp[a] != 0;
    if (n_interp > 20) {
        bad_tables("more than 20 interpolated outer axes");
        goto fail;
    }
    int64_t minimum = 0, row_reach = row_len - 1;
    if (row_blend) {
        if (n_rlo < row_len || n_rhi < row_len || n_rwlo < row_len || n_rwhi < row_len) {
            bad_tables("row tables");
            goto fail;
        }
        row_reach = max_of(job->row_lo, (Py_ssize_t)row_len, &minimum);
        int64_t m = max_of(job->row_hi, (Py_ssize_t)row_len, &minimum);
        if (m > row_reach)
            row_reach = m;
    }
    int64_t block_reach = block - 1;
    if (block_blend) {
        if (n_blo < block || n_bhi < block || n_bwlo < block || n_bwhi < block) {
            bad_tables("block tables");
            goto fail;
        }
        block_reach = max_of(job->blk_lo, (Py_ssize_t)block, &minimum);
        int64_t m = max_of(job->blk_hi, (Py_ssize_t)block, &minimum);
        if (m > block_reach)
            block_reach = m;
        if (block_reach >= block_in) {
            bad_tables("block offsets");
            goto fail;
        }
    }
    int64_t row_part, total_reach, row_elements, row_bytes, out_bytes, x_bytes;
    if (minimum < 0 || !mul_ok(row_reach, block_in, &row_part)
        || !add_ok(row_part, block_reach, &row_part) || !add_ok(reach, row_part, &total_reach)
        || total_reach >= x_elements) {
        bad_tables("the tables read beyond the input");
        goto fail;
    }
    if (!mul_ok(row_len, block, &row_elements)
        || !mul_ok(row_elements, element_bytes[dst], &row_bytes)
        || !mul_ok(rows, row_bytes, &out_bytes)
        || !mul_ok(x_elements, element_bytes[src], &x_bytes)
        || !mul_ok(segment, block, &row_part) || row_part > ((int64_t)1 << 40)) {
        bad_tables("sizes overflow");
        goto fail;
    }
    job->src = src;
    job->dst = dst;
    job->acc_double = src_acc_double[src];
    job->rows = rows;
    job->row_len = row_len;
    job->block = block;
    job->block_in = block_in;
    job->n_outer = (int)n_sizes;
    job->n_interp = n_interp;
    job->row_blend = row_blend != 0;
    /* a repeat factor must describe the row taps exactly: row_lo[j] == j / k */
    job->row_repeat = 0;
    if (row_repeat > 1 && row_blend && row_len % row_repeat == 0) {
        int64_t j = 0;
        while (j < row_len && job->row_lo[j] == j / row_repeat)
            j++;
        if (j == row_len)
            job->row_repeat = row_repeat;
    }
    job->block_blend = block_blend != 0;
    job->n_blocks = n_blocks;
    job->n_segments = n_segments;
    job->segment = segment;
    job->low_bound = low_bound;
    job->high_bound = high_bound;
    {
        /* the per-worker scratch (linear.c's scratch_layout) must be a sane size */
        int64_t taps = (row_blend ? 2 : 1) * (block_blend ? 2 : 1);
        int64_t slots = (int64_t)2 << n_interp;
        int64_t per_element = taps * 12 + slots * taps * 8 + 8, scratch;
        if (!mul_ok(row_part, per_element, &scratch) || scratch > ((int64_t)1 << 40)) {
            bad_tables("scratch size");
            goto fail;
        }
    }
    job->isa = isa == 1 && pool_cpu_has_avx2() ? 1 : 0;
    self->is_linear = 1;
    self->x_bytes = x_bytes;
    self->row_bytes = row_bytes;
    self->out_bytes = out_bytes;
    return (PyObject *)self;
fail:
    Py_DECREF(self);
    return NULL;
}

/* Between work items: let Python run its signal handlers (Ctrl-C raises there). */
static int poll_signals(void *context)
{
    PyThreadState **state = (PyThreadState **)context;
    PyEval_RestoreThread(*state);
    int stop = PyErr_CheckSignals() != 0;
    *state = PyEval_SaveThread();
    return stop;
}

/* kernel(x, out, threads, row_base=0): fill `out` (rows from row_base on, linear only). */
static PyObject *kernel_call(Kernel *self, PyObject *args, PyObject *kwargs)
{
    PyObject *x_obj, *out_obj;
    int threads;
    long long row_base = 0;
    static char *keywords[] = {"x", "out", "threads", "row_base", NULL};
    if (!PyArg_ParseTupleAndKeywords(args, kwargs, "OOi|L", keywords, &x_obj, &out_obj,
                                     &threads, &row_base))
        return NULL;
    Py_buffer x, out;
    if (PyObject_GetBuffer(x_obj, &x, PyBUF_C_CONTIGUOUS) != 0)
        return NULL;
    if (PyObject_GetBuffer(out_obj, &out, PyBUF_C_CONTIGUOUS | PyBUF_WRITABLE) != 0) {
        PyBuffer_Release(&x);
        return NULL;
    }
    PyObject *result = NULL;
    int64_t out_rows = self->row_bytes ? (int64_t)out.len / self->row_bytes : 0;
    int64_t rows = self->is_linear ? self->linear.rows : self->nearest.rows;
    if ((int64_t)x.len != self->x_bytes || out_rows < 1
        || out_rows * self->row_bytes != (int64_t)out.len || row_base < 0
        || row_base > rows - out_rows || (!self->is_linear && (row_base || out_rows != rows))) {
        PyErr_Format(PyExc_ValueError, "kernel called with %zd input and %zd output bytes; "
                     "it was prepared for %lld and a multiple of %lld up to %lld",
                     x.len, out.len, (long long)self->x_bytes, (long long)self->row_bytes,
                     (long long)self->out_bytes);
        goto done;
    }
    if (threads < 1)
        threads = 1;
    int status;
    if (self->is_linear) {
        LinearJob job = self->linear;
        job.x = (const char *)x.buf;
        job.out = (char *)out.buf;
        job.row_base = row_base;
        job.out_rows = out_rows;
        if (job.n_blocks > out_rows)
            job.n_blocks = out_rows;
        int64_t n_items = job.n_blocks * job.n_segments;
        int workers = (int64_t)threads < n_items ? threads : (int)n_items;
        job.scratch = (void **)calloc((size_t)(workers > 0 ? workers : 1), sizeof(void *));
        if (job.scratch == NULL) {
            PyErr_NoMemory();
            goto done;
        }
        PyThreadState *state = PyEval_SaveThread();
        status = pool_run(job.n_blocks * job.n_segments, workers, linear_item, &job,
                          poll_signals, &state);
        PyEval_RestoreThread(state);
        for (int i = 0; i < workers; i++)
            free(job.scratch[i]);
        free(job.scratch);
    } else {
        NearestJob job = self->nearest;
        job.x = (const char *)x.buf;
        job.out = (char *)out.buf;
        PyThreadState *state = PyEval_SaveThread();
        status = pool_run(self->n_items, threads, nearest_item, &job, poll_signals, &state);
        PyEval_RestoreThread(state);
    }
    if (status == POOL_NO_MEMORY)
        PyErr_NoMemory();
    else if (status == POOL_OK)
        result = Py_NewRef(Py_None);
    /* POOL_STOPPED: the signal handler's exception is set */
done:
    PyBuffer_Release(&x);
    PyBuffer_Release(&out);
    return result;
}

static PyTypeObject KernelType = {
    PyVarObject_HEAD_INIT(NULL, 0)
    .tp_name = "onnx_upsample._kernels._native.Kernel",
    .tp_basicsize = sizeof(Kernel),
    .tp_dealloc = (destructor)kernel_dealloc,
    .tp_call = (ternaryfunc)kernel_call,
    .tp_flags = Py_TPFLAGS_DEFAULT,
    .tp_doc = "A prepared Upsample kernel call: kernel(x, out, threads[, row_base]).",
};

static PyObject *cpu_has_avx2(PyObject *module, PyObject *unused)
{
    (void)module, (void)unused;
    return PyBool_FromLong(pool_cpu_has_avx2());
}

static PyObject *set_join_delay(PyObject *module, PyObject *arg)
{
    (void)module;
    double seconds = PyFloat_AsDouble(arg);
    if (seconds == -1.0 && PyErr_Occurred())
        return NULL;
    pool_set_join_delay(seconds);
    Py_RETURN_NONE;
}

static PyMethodDef methods[] = {
    {"nearest_kernel", nearest_kernel, METH_VARARGS, "Prepare a nearest gather."},
    {"linear_kernel", linear_kernel, METH_VARARGS, "Prepare a linear blend."},
    {"cpu_has_avx2", cpu_has_avx2, METH_NOARGS, "True when this CPU runs AVX2."},
    {"_set_join_delay", set_join_delay, METH_O,
     "Tests only: helpers wait this many seconds before joining a job."},
    {NULL, NULL, 0, NULL},
};

static struct PyModuleDef module_def = {
    PyModuleDef_HEAD_INIT, "_native", "Compiled kernels of ONNX Upsample.", -1, methods,
    NULL, NULL, NULL, NULL,
};

PyMODINIT_FUNC PyInit__native(void)
{
    if (PyType_Ready(&KernelType) < 0)
        return NULL;
    PyObject *module = PyModule_Create(&module_def);
    if (module == NULL)
        return NULL;
    if (PyModule_AddIntConstant(module, "MAX_THREADS", pool_max_threads()) < 0) {
        Py_DECREF(module);
        return NULL;
    }
    return module;
}
