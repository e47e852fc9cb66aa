/* The Kernel object (kernel_object.h): its type, and the call that runs it. */
#include "kernel_object.h"

#include <stdlib.h>

#include "pool.h"

static PyTypeObject *KernelType = NULL;

static void kernel_dealloc(Kernel *self)
{
    for (int i = 0; i <= MAX_OUTER; i++) {
        const AxisRule *a = &self->axes[i];
        if (a->lo_offsets || a->hi_offsets || a->w_lo || a->w_hi)
            axis_free_tables(&self->axes[i]);
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

/* What a call asks of the kernel, by its arguments. */
typedef struct {
    Py_buffer x, out;
    int threads;
    long long row_base, col_first, col_count;
    int stream;
    int64_t out_rows;
} Call;

/* The call's row positions: col_count from col_first, on segment boundaries (-1: to the end
 * of the row); a nearest kernel fills whole rows. 0, or -1 with an error. */
static int check_columns(const Kernel *self, Call *call)
{
    const int64_t row_len = self->is_linear ? self->linear.row_len : self->nearest.row_len;
    const int64_t segment = self->is_linear ? self->linear.segment : self->nearest.segment;
    if (call->col_count == -1)
        call->col_count = row_len - call->col_first;
    if (call->col_first < 0 || call->col_count < 1 || call->col_first > row_len - call->col_count
        || call->col_first % segment
        || (call->col_count % segment && call->col_first + call->col_count != row_len)
        || (!self->is_linear && call->col_count != row_len)) {
        PyErr_Format(PyExc_ValueError, "kernel called for %lld row positions from %lld; rows "
                     "have %lld in segments of %lld", call->col_count, call->col_first,
                     (long long)row_len, (long long)segment);
        return -1;
    }
    return 0;
}

/* The call's buffers against the description: the input exactly, the output whole rows of
 * the call's positions (a linear kernel may fill only some rows, from row_base on), both
 * aligned to their elements. 0, or -1 with an error. */
static int check_buffers(const Kernel *self, Call *call)
{
    const int64_t row_len = self->is_linear ? self->linear.row_len : self->nearest.row_len;
    const int64_t row_bytes = self->row_bytes / row_len * call->col_count; /* exact */
    const int64_t rows = self->is_linear ? self->linear.rows : self->nearest.rows;
    call->out_rows = row_bytes ? (int64_t)call->out.len / row_bytes : 0;
    if ((int64_t)call->x.len != self->x_bytes || call->out_rows < 1
        || call->out_rows * row_bytes != (int64_t)call->out.len || call->row_base < 0
        || call->row_base > rows - call->out_rows
        || (!self->is_linear && (call->row_base || call->out_rows != rows))) {
        PyErr_Format(PyExc_ValueError, "kernel called with %zd input and %zd output bytes; "
                     "it was prepared for %lld and a multiple of %lld up to %lld",
                     call->x.len, call->out.len, (long long)self->x_bytes,
                     (long long)row_bytes, (long long)self->out_bytes);
        return -1;
    }
    /* typed loads and stores need their natural alignment: checked, not assumed */
    if ((uintptr_t)call->x.buf % (uintptr_t)self->x_align
        || (uintptr_t)call->out.buf % (uintptr_t)self->out_align) {
        PyErr_Format(PyExc_ValueError, "kernel called with buffers at addresses not aligned "
                     "to their %d- and %d-byte elements", self->x_align, self->out_align);
        return -1;
    }
    return 0;
}

/* The call's work on the pool; returns the pool's status. */
static int run_call(const Kernel *self, const Call *call)
{
    const int threads = call->threads < 1 ? 1 : call->threads;
    if (self->is_linear) {
        LinearJob job = self->linear;
        job.x = (const char *)call->x.buf;
        job.out = (char *)call->out.buf;
        job.row_base = call->row_base;
        job.out_rows = call->out_rows;
        job.col_first = call->col_first;
        job.out_row_len = call->col_count;
        job.segment_base = call->col_first / job.segment;
        job.stream = call->stream;
        job.n_segments = (call->col_count + job.segment - 1) / job.segment;
        if (job.n_blocks > call->out_rows)
            job.n_blocks = call->out_rows;
        return run_items(job.n_blocks * job.n_segments, threads, linear_item, &job,
                         &job.scratch);
    }
    NearestJob job = self->nearest;
    job.x = (const char *)call->x.buf;
    job.out = (char *)call->out.buf;
    job.stream = call->stream;
    return run_items(self->n_items, threads, nearest_item, &job, &job.scratch);
}

/* kernel(x, out, threads, row_base=0, col_first=0, col_count=-1, stream=0): fill `out`. A
 * linear kernel may fill only some rows (from row_base on) and some row positions (col_count
 * from col_first, both on segment boundaries; -1: to the end of the row): `out` then holds
 * just those, row after row. `stream`: write with streaming stores (stream.h). */
static PyObject *kernel_call(Kernel *self, PyObject *args, PyObject *kwargs)
{
    PyObject *x_obj, *out_obj;
    Call call = {.row_base = 0, .col_first = 0, .col_count = -1, .stream = 0};
    static char *keywords[] = {"x", "out", "threads", "row_base", "col_first", "col_count",
                               "stream", NULL};
    if (!PyArg_ParseTupleAndKeywords(args, kwargs, "OOi|LLLp", keywords, &x_obj, &out_obj,
                                     &call.threads, &call.row_base, &call.col_first,
                                     &call.col_count, &call.stream)
        || check_columns(self, &call) != 0)
        return NULL;
    if (PyObject_GetBuffer(x_obj, &call.x, PyBUF_C_CONTIGUOUS) != 0)
        return NULL;
    if (PyObject_GetBuffer(out_obj, &call.out, PyBUF_C_CONTIGUOUS | PyBUF_WRITABLE) != 0) {
        PyBuffer_Release(&call.x);
        return NULL;
    }
    PyObject *result = NULL;
    if (check_buffers(self, &call) == 0) {
        const int status = run_call(self, &call);
        if (status == POOL_NO_MEMORY)
            PyErr_NoMemory();
        else if (status == POOL_FORKED)
            PyErr_SetString(PyExc_RuntimeError, "the process forked during this upsample call "
                            "(from a signal handler); the call's result is incomplete in the "
                            "child: call it again there");
        else if (status == POOL_OK)
            result = Py_NewRef(Py_None);
        /* POOL_STOPPED: the signal handler's exception is set */
    }
    PyBuffer_Release(&call.x);
    PyBuffer_Release(&call.out);
    return result;
}

/* Created from a spec (the limited API has no static types); instances are made only by the
 * constructors of describe.c and describe_linear.c, never by calling the type. */
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

PyTypeObject *kernel_type(void)
{
    if (KernelType == NULL)
        KernelType = (PyTypeObject *)PyType_FromSpec(&kernel_spec);
    return KernelType;
}

Kernel *kernel_new(void)
{
    return (Kernel *)PyType_GenericAlloc(KernelType, 0); /* zero-filled */
}
