/* onnx_upsample._kernels._native: the compiled Upsample kernels, behind a thin binding.
 *
 * nearest_kernel(...) and linear_kernel(...) (describe.c, describe_linear.c) take a call's
 * canonical form, built
 * by onnx_upsample._kernels._compiled, check it once and return a Kernel; kernel(x, out,
 * threads[, row_base]) then fills `out` with the GIL released, on the pool of pool.c, looking
 * for signals (Ctrl-C) between work items.
 */
#include "kernel_object.h"

#include <stdlib.h>

#include "cpu.h"
#include "pool.h"

static void kernel_dealloc(Kernel *self)
{
    for (int i = 0; i <= MAX_OUTER; i++) {
        free(self->axes[i].lo_offsets);
        free(self->axes[i].hi_offsets);
        free(self->axes[i].w_lo);
        free(self->axes[i].w_hi);
    }
    for (int i = 0; i < self->n_views; i++)
        PyBuffer_Release(&self->views[i]);
    /* a heap type: each instance holds a reference to it */
    PyTypeObject *type = Py_TYPE((PyObject *)self);
    freefunc tp_free = (freefunc)PyType_GetSlot(type, Py_tp_free);
    tp_free(self);
    Py_DECREF(type);
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

/* Run `n_items` items of `job` on up to `threads` threads with one scratch slot per worker
 * (freed afterwards); returns the pool's status. */
static int run_items(int64_t n_items, int threads, pool_item_fn fn, void *job,
                     void ***scratch_slot)
{
    int workers = (int64_t)threads < n_items ? threads : (int)n_items;
    if (workers < 1)
        workers = 1;
    void **scratch = (void **)calloc((size_t)workers, sizeof(void *));
    if (scratch == NULL)
        return POOL_NO_MEMORY;
    *scratch_slot = scratch;
    PyThreadState *state = PyEval_SaveThread();
    int status = pool_run(n_items, workers, fn, job, poll_signals, &state);
    PyEval_RestoreThread(state);
    for (int i = 0; i < workers; i++)
        free(scratch[i]);
    free(scratch);
    *scratch_slot = NULL;
    return status;
}

/* kernel(x, out, threads, row_base=0, col_first=0, col_count=-1, stream=0): fill `out`. A
 * linear kernel may fill only some rows (from row_base on) and some row positions (col_count
 * from col_first, both on segment boundaries; -1: to the end of the row): `out` then holds
 * just those, row after row. `stream`: write with streaming stores (stream.h). */
static PyObject *kernel_call(Kernel *self, PyObject *args, PyObject *kwargs)
{
    PyObject *x_obj, *out_obj;
    int threads;
    long long row_base = 0, col_first = 0, col_count = -1;
    int stream = 0;
    static char *keywords[] = {"x", "out", "threads", "row_base", "col_first", "col_count",
                               "stream", NULL};
    if (!PyArg_ParseTupleAndKeywords(args, kwargs, "OOi|LLLp", keywords, &x_obj, &out_obj,
                                     &threads, &row_base, &col_first, &col_count, &stream))
        return NULL;
    const int64_t row_len = self->is_linear ? self->linear.row_len : self->nearest.row_len;
    const int64_t segment = self->is_linear ? self->linear.segment : self->nearest.segment;
    if (col_count == -1)
        col_count = row_len - col_first;
    if (col_first < 0 || col_count < 1 || col_first > row_len - col_count
        || col_first % segment || (col_count % segment && col_first + col_count != row_len)
        || (!self->is_linear && col_count != row_len)) {
        PyErr_Format(PyExc_ValueError, "kernel called for %lld row positions from %lld; rows "
                     "have %lld in segments of %lld", col_count, col_first, (long long)row_len,
                     (long long)segment);
        return NULL;
    }
    Py_buffer x, out;
    if (PyObject_GetBuffer(x_obj, &x, PyBUF_C_CONTIGUOUS) != 0)
        return NULL;
    if (PyObject_GetBuffer(out_obj, &out, PyBUF_C_CONTIGUOUS | PyBUF_WRITABLE) != 0) {
        PyBuffer_Release(&x);
        return NULL;
    }
    PyObject *result = NULL;
    int64_t row_bytes = self->row_bytes / row_len * col_count; /* exact: a row's bytes */
    int64_t out_rows = row_bytes ? (int64_t)out.len / row_bytes : 0;
    int64_t rows = self->is_linear ? self->linear.rows : self->nearest.rows;
    if ((int64_t)x.len != self->x_bytes || out_rows < 1
        || out_rows * row_bytes != (int64_t)out.len || row_base < 0
        || row_base > rows - out_rows || (!self->is_linear && (row_base || out_rows != rows))) {
        PyErr_Format(PyExc_ValueError, "kernel called with %zd input and %zd output bytes; "
                     "it was prepared for %lld and a multiple of %lld up to %lld",
                     x.len, out.len, (long long)self->x_bytes, (long long)row_bytes,
                     (long long)self->out_bytes);
        goto done;
    }
    /* typed loads and stores need their natural alignment: checked, not assumed */
    if ((uintptr_t)x.buf % (uintptr_t)self->x_align
        || (uintptr_t)out.buf % (uintptr_t)self->out_align) {
        PyErr_Format(PyExc_ValueError, "kernel called with buffers at addresses not aligned "
                     "to their %d- and %d-byte elements", self->x_align, self->out_align);
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
        job.col_first = col_first;
        job.out_row_len = col_count;
        job.segment_base = col_first / segment;
        job.stream = stream;
        job.n_segments = (col_count + segment - 1) / segment;
        if (job.n_blocks > out_rows)
            job.n_blocks = out_rows;
        status = run_items(job.n_blocks * job.n_segments, threads, linear_item, &job,
                           &job.scratch);
    } else {
        NearestJob job = self->nearest;
        job.x = (const char *)x.buf;
        job.out = (char *)out.buf;
        job.stream = stream;
        status = run_items(self->n_items, threads, nearest_item, &job, &job.scratch);
    }
    if (status == POOL_NO_MEMORY)
        PyErr_NoMemory();
    else if (status == POOL_FORKED)
        PyErr_SetString(PyExc_RuntimeError, "the process forked during this upsample call "
                        "(from a signal handler); the call's result is incomplete in the child: "
                        "call it again there");
    else if (status == POOL_OK)
        result = Py_NewRef(Py_None);
    /* POOL_STOPPED: the signal handler's exception is set */
done:
    PyBuffer_Release(&x);
    PyBuffer_Release(&out);
    return result;
}

/* Created from a spec (the limited API has no static types); instances are made only by the
 * constructors of describe.c and describe_linear.c, never by calling the type. */
PyTypeObject *KernelType = NULL;

static PyType_Slot kernel_slots[] = {
    {Py_tp_dealloc, (void *)kernel_dealloc},
    {Py_tp_call, (void *)kernel_call},
    {Py_tp_doc, (void *)"A prepared Upsample kernel call: kernel(x, out, threads[, row_base])."},
    {0, NULL},
};

static PyType_Spec kernel_spec = {
    .name = "onnx_upsample._kernels._native.Kernel",
    .basicsize = sizeof(Kernel),
    .flags = Py_TPFLAGS_DEFAULT | Py_TPFLAGS_DISALLOW_INSTANTIATION,
    .slots = kernel_slots,
};

Kernel *kernel_new(void)
{
    return (Kernel *)PyType_GenericAlloc(KernelType, 0); /* zero-filled */
}

static PyObject *py_linear_scratch_per_element(PyObject *module, PyObject *args)
{
    (void)module;
    int taps, n_interp, acc_double, stream;
    if (!PyArg_ParseTuple(args, "iipp", &taps, &n_interp, &acc_double, &stream))
        return NULL;
    if (taps < 1 || taps > 4 || n_interp < 0 || n_interp > MAX_INTERP) {
        PyErr_SetString(PyExc_ValueError, "taps must be 1-4 and n_interp 0-MAX_INTERP");
        return NULL;
    }
    return PyLong_FromSize_t(linear_scratch_per_element(taps, n_interp, acc_double, stream));
}

static PyObject *py_cpu_has_avx2(PyObject *module, PyObject *unused)
{
    (void)module, (void)unused;
    return PyBool_FromLong(cpu_has_avx2());
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
    {"nearest_kernel", (PyCFunction)(void (*)(void))nearest_kernel,
     METH_VARARGS | METH_KEYWORDS, "Prepare a nearest gather (see describe.c)."},
    {"linear_kernel", (PyCFunction)(void (*)(void))linear_kernel,
     METH_VARARGS | METH_KEYWORDS, "Prepare a linear blend (see describe_linear.c)."},
    {"linear_scratch_per_element", py_linear_scratch_per_element, METH_VARARGS,
     "Scratch bytes per segment element of a linear kernel (taps, n_interp, acc_double, "
     "stream)."},
    {"repeat_factor", repeat_factor, METH_VARARGS,
     "k when an axis reads input o // k at output o (an integer scale), else 0."},
    {"cpu_has_avx2", py_cpu_has_avx2, METH_NOARGS, "True when this CPU runs AVX2."},
    {"_set_join_delay", set_join_delay, METH_O,
     "Tests only: helpers wait this many seconds before joining a job."},
    {NULL, NULL, 0, NULL},
};

static struct PyModuleDef module_def = {
    PyModuleDef_HEAD_INIT, "_native", "Compiled kernels of ONNX Upsample.", -1, methods,
    NULL, NULL, NULL, NULL,
};

/* LINEAR_TYPES: each element code's name (without T_) -> (code, bytes of one stored element,
 * bytes of its accumulator, the code its results are written as), from linear_types.h. */
static PyObject *linear_types_dict(void)
{
    PyObject *types = PyDict_New();
    for (int code = 0; types != NULL && code < T_COUNT; code++) {
        const LinearType *t = &linear_types[code];
        PyObject *row = Py_BuildValue("(inni)", code, (Py_ssize_t)t->bytes,
                                      (Py_ssize_t)t->acc_bytes, t->out);
        if (row == NULL || PyDict_SetItemString(types, t->name, row) < 0)
            Py_CLEAR(types);
        Py_XDECREF(row);
    }
    return types;
}

/* The constants Python reads by name: limits, axis and row kinds, element codes. */
static int add_constants(PyObject *module)
{
    const struct {
        const char *name;
        long long value;
    } constants[] = {
        {"MAX_THREADS", pool_max_threads()},
        {"MAX_OUTER", MAX_OUTER},
        {"MAX_INTERP", MAX_INTERP},
        {"MAX_AXIS_INPUT", MAX_AXIS_INPUT},
        {"F32_EXACT_LIMIT", F32_EXACT_LIMIT},
        {"AXIS_COPY", AXIS_COPY},
        {"AXIS_GATHER", AXIS_GATHER},
        {"AXIS_BLEND", AXIS_BLEND},
        {"ROW_COPY", ROW_COPY},
        {"ROW_REPEAT", ROW_REPEAT},
        {"ROW_GATHER", ROW_GATHER},
        {"LINEAR_DIRECT_CACHE_BYTES", (long long)linear_direct_cache_bytes()},
    };
    for (size_t i = 0; i < sizeof constants / sizeof constants[0]; i++) {
        PyObject *value = PyLong_FromLongLong(constants[i].value);
        int status = value ? PyModule_AddObjectRef(module, constants[i].name, value) : -1;
        Py_XDECREF(value);
        if (status < 0)
            return -1;
    }
    char name[32];
    for (int code = 0; code < T_COUNT; code++) {
        PyOS_snprintf(name, sizeof name, "T_%s", linear_types[code].name);
        if (PyModule_AddIntConstant(module, name, code) < 0)
            return -1;
    }
    PyObject *types = linear_types_dict();
    int status = types ? PyModule_AddObjectRef(module, "LINEAR_TYPES", types) : -1;
    Py_XDECREF(types);
    PyObject *fields = status == 0 ? axis_fields() : NULL;
    status = fields ? PyModule_AddObjectRef(module, "AXIS_FIELDS", fields) : -1;
    Py_XDECREF(fields);
    return status;
}

PyMODINIT_FUNC PyInit__native(void)
{
    PyObject *module = PyModule_Create(&module_def);
    if (module == NULL)
        return NULL;
    if (KernelType == NULL)
        KernelType = (PyTypeObject *)PyType_FromSpec(&kernel_spec);
    if (KernelType == NULL || PyModule_AddObjectRef(module, "Kernel", (PyObject *)KernelType) < 0
        || add_constants(module) < 0) {
        Py_DECREF(module);
        return NULL;
    }
    return module;
}
