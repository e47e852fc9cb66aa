/* onnx_upsample._kernels._native: the compiled Upsample kernels, behind a thin binding.
 *
 * nearest_kernel(...) and linear_kernel(...) (describe.h) take a call's canonical form,
 * built by onnx_upsample._kernels._compiled, check it once and return a Kernel
 * (kernel_object.h); kernel(x, out, threads[, row_base]) then fills `out` with the GIL
 * released, on the pool of pool.c, looking for signals (Ctrl-C) between work items. The
 * module also exports the constants Python reads by name, and the fast paths' counts.
 */
#include "describe.h"
#include "kernel_object.h"

#include "cpu.h"
#include "linear_scratch.h"
#include "linear_types.h"
#include "path_counts.h"
#include "pool.h"
#include "simd.h"

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

/* cpu_has_avx2(): whether this build's AVX2 loops run on this CPU. */
static PyObject *py_cpu_has_avx2(PyObject *module, PyObject *unused)
{
    (void)module, (void)unused;
    return PyBool_FromLong(cpu_isa(ISA_AVX2) == ISA_AVX2);
}

/* path_counts(): each fast path's count since the last call (path_counts.h), which resets
 * them: a dict by name. */
static PyObject *py_path_counts(PyObject *module, PyObject *unused)
{
    (void)module, (void)unused;
    PathCounts taken;
    path_counts_take(&taken);
    PyObject *counts = PyDict_New();
    for (int p = 0; counts != NULL && p < PATH_COUNT; p++) {
        PyObject *n = PyLong_FromUnsignedLongLong((unsigned long long)taken.n[p]);
        if (n == NULL || PyDict_SetItemString(counts, path_name((KernelPath)p), n) < 0)
            Py_CLEAR(counts);
        Py_XDECREF(n);
    }
    return counts;
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
    {"cpu_has_avx2", py_cpu_has_avx2, METH_NOARGS,
     "True when this build's AVX2 loops run on this CPU."},
    {"path_counts", py_path_counts, METH_NOARGS,
     "Each fast path's count since the last call (which resets them), by name."},
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
        {"LINEAR_DIRECT_CACHE_BYTES", (long long)DIRECT_CACHE_BYTES},
        {"SIMD_LANES", SIMD_LANES},
        {"ISA_BASELINE", ISA_BASELINE},
        {"ISA_AVX2", ISA_AVX2},
        {"HAVE_AVX2_VARIANT", HAVE_AVX2_VARIANT},
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
    if (status == 0)
        status = PyModule_AddStringConstant(module, "SIMD_BASELINE", SIMD_NAME);
    return status;
}

PyMODINIT_FUNC PyInit__native(void)
{
    PyObject *module = PyModule_Create(&module_def);
    if (module == NULL)
        return NULL;
    PyTypeObject *type = kernel_type();
    if (type == NULL || PyModule_AddObjectRef(module, "Kernel", (PyObject *)type) < 0
        || add_constants(module) < 0) {
        Py_DECREF(module);
        return NULL;
    }
    return module;
}
