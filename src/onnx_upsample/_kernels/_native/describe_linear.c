/* The linear constructor: a linear call's description (see describe.c), checked once and
 * completely, step by step: the element types, the blended block's taps, the axes, the sizes
 * and scratch, the row repeat.
 */
#include "describe.h"

#include "cpu.h"
#include "linear_scratch.h"
#include "linear_types.h"

/* linear_kernel(x_elements=, src=, dst=, block=, block_in=, axes=, scales=, n_blocks=,
 *               n_segments=, segment=, isa=, row_repeat=[, lut=][, block_taps=][, bounds=]):
 * a linear description by name (positions also work). */
typedef struct {
    long long x_elements;
    int src, dst;             /* element codes (linear_types.h): read, and written */
    long long block, block_in;    /* output and input elements per row position */
    PyObject *axes, *scales;
    WorkSplit split;
    int isa;                  /* 1: the AVX2 loops where the CPU has them */
    long long row_repeat;     /* the row rule's repeat factor (rule_repeat), or 0 */
    PyObject *lut;            /* T_HALF only: the float32 value of each 16-bit pattern */
    PyObject *block_taps;     /* None, or (lo, hi, w_lo, w_hi): a blended block's taps */
    double low_bound, high_bound; /* bounds=(low, high): integers saturate to [low, high) */
} LinearArgs;

static int parse(PyObject *args, PyObject *kwargs, LinearArgs *a)
{
    static char *names[] = {"x_elements", "src", "dst", "block", "block_in", "axes", "scales",
                            "n_blocks", "n_segments", "segment", "isa", "row_repeat", "lut",
                            "block_taps", "bounds", NULL};
    *a = (LinearArgs){.lut = Py_None, .block_taps = Py_None};
    return PyArg_ParseTupleAndKeywords(
        args, kwargs, "LiiLLOOLLLiL|OO(dd)", names, &a->x_elements, &a->src, &a->dst,
        &a->block, &a->block_in, &a->axes, &a->scales, &a->split.n_blocks,
        &a->split.n_segments, &a->split.segment, &a->isa, &a->row_repeat, &a->lut,
        &a->block_taps, &a->low_bound, &a->high_bound) ? 0 : -1;
}

/* Each source code's results are written as one code (linear_types.h); 16-bit floats read
 * their values from a table of all 65536 patterns, no other type has one. */
static int check_types(Kernel *self, const LinearArgs *a, LinearJob *job)
{
    if (a->src < 0 || a->src >= T_COUNT || a->dst != linear_types[a->src].out)
        return bad("element types");
    if ((a->src == T_HALF) != (a->lut != Py_None))
        return bad("lut: a table for 16-bit floats, and only for them");
    if (a->src == T_HALF) {
        Py_ssize_t n_lut;
        job->lut = table(self, a->lut, 'f', &n_lut, "lut");
        if (job->lut == NULL)
            return -1;
        if (n_lut != 65536)
            return bad("lut");
    }
    job->src = a->src;
    job->dst = a->dst;
    job->acc_double = linear_types[a->src].acc_bytes == sizeof(double);
    return 0;
}

/* d when a blended block's taps (block elements, block_in of them in the input) are an
 * identity: the whole of an axis at scale 1, times d parts per element (2 for complex
 * numbers, else 1). Element c < block - d blends itself (weight 1) and the next channel's
 * element c + d (weight 0); each of the last d blends itself twice (0.5 and 0.5). Else 0. */
static int64_t block_identity(const int64_t *lo, const int64_t *hi, const float *w_lo,
                              const float *w_hi, int64_t block, int64_t block_in)
{
    int64_t d = 0;
    while (d < block && w_lo[block - 1 - d] == 0.5f)
        d++;
    if (d == 0 || block != block_in || block % d)
        return 0;
    for (int64_t c = 0; c < block; c++) {
        int last = c >= block - d;
        if (lo[c] != c || hi[c] != (last ? c : c + d) || w_lo[c] != (last ? 0.5f : 1.0f)
            || w_hi[c] != (last ? 0.5f : 0.0f))
            return 0;
    }
    return d;
}

/* A blended block's taps: `block` offsets inside an input row position, and weights. */
static int read_block_taps(Kernel *self, const LinearArgs *a, LinearJob *job)
{
    job->block_blend = a->block_taps != Py_None;
    if (!job->block_blend)
        return a->block_in == a->block ? 0 : bad("block");
    PyObject *taps = a->block_taps;
    if (!PyTuple_Check(taps) || PyTuple_Size(taps) != 4)
        return bad("block_taps: a tuple (lo, hi, w_lo, w_hi)");
    Py_ssize_t n_lo, n_hi, n_wlo, n_whi;
    if ((job->blk_lo = table(self, PyTuple_GetItem(taps, 0), 'i', &n_lo, "block lo")) == NULL
        || (job->blk_hi = table(self, PyTuple_GetItem(taps, 1), 'i', &n_hi, "block hi")) == NULL
        || (job->blk_w_lo = table(self, PyTuple_GetItem(taps, 2), 'f', &n_wlo, "block w_lo"))
               == NULL
        || (job->blk_w_hi = table(self, PyTuple_GetItem(taps, 3), 'f', &n_whi, "block w_hi"))
               == NULL)
        return -1;
    if (n_lo < a->block || n_hi < a->block || n_wlo < a->block || n_whi < a->block)
        return bad("block tables");
    for (int64_t c = 0; c < a->block; c++)
        if (job->blk_lo[c] < 0 || job->blk_hi[c] < 0 || job->blk_lo[c] >= a->block_in
            || job->blk_hi[c] >= a->block_in)
            return bad("block offsets");
    job->identity_step = block_identity(job->blk_lo, job->blk_hi, job->blk_w_lo,
                                        job->blk_w_hi, a->block, a->block_in);
    return 0;
}

/* The axes: outer ones copied or blended (at most MAX_INTERP blended), a row that is not
 * gathered. Returns the number of outer axes, or -1 with an error. */
static int read_linear_axes(Kernel *self, const LinearArgs *a, LinearJob *job)
{
    int n = read_axes(self, a->axes, a->scales, a->block_in, a->x_elements);
    if (n < 0)
        return -1;
    int n_interp = 0;
    for (int i = 0; i < n; i++) {
        if (self->axes[i].kind == AXIS_GATHER)
            return bad("a nearest axis in a linear call");
        n_interp += self->axes[i].kind == AXIS_BLEND;
    }
    if (n_interp > MAX_INTERP || self->axes[n].kind == AXIS_GATHER) {
        PyErr_Format(PyExc_ValueError, "inconsistent kernel description: %d interpolated outer "
                     "axes (at most %d), or a nearest row", n_interp, MAX_INTERP);
        return -1;
    }
    job->n_outer = n;
    job->n_interp = n_interp;
    job->axes = self->axes;
    job->row_len = self->axes[n].n_out;
    job->row_blend = self->axes[n].kind == AXIS_BLEND;
    return n;
}

/* A segment's elements, and a worker's scratch bytes, beyond any a layout plans: a
 * description with more is inconsistent. */
#define SANE_SCRATCH ((int64_t)1 << 40)

/* Sizes that do not overflow, and a per-worker scratch (linear_scratch.h) of a sane size. */
static int check_linear_sizes(Kernel *self, const LinearArgs *a, LinearJob *job)
{
    int64_t rows, segment_elements, scratch;
    const int64_t src_bytes = (int64_t)linear_types[a->src].bytes;
    const int64_t dst_bytes = (int64_t)linear_types[a->dst].bytes;
    if (check_sizes(self, job->n_outer, a->block, dst_bytes, &a->split, &rows) != 0
        || !checked_mul_i64(a->x_elements, src_bytes, &self->x_bytes)
        || make_axis_tables(self, job->n_outer) != 0)
        return -1;
    self->x_align = (int)src_bytes;
    self->out_align = (int)dst_bytes;
    int64_t per_element = (int64_t)linear_scratch_per_element(taps_per_element(job),
                                                              job->n_interp, 1, 1);
    if (!checked_mul_i64(a->split.segment, a->block, &segment_elements)
        || segment_elements > SANE_SCRATCH
        || !checked_mul_i64(segment_elements, per_element, &scratch) || scratch > SANE_SCRATCH)
        return bad("scratch size");
    job->rows = rows;
    return 0;
}

/* A repeat factor must be the row rule's own (rule_repeat); 0 gathers instead. It is used
 * where the block is copied or an identity, and ignored under another blended block. */
static int check_row_repeat(const Kernel *self, const LinearArgs *a, LinearJob *job)
{
    job->row_repeat = 0;
    if (a->row_repeat == 0)
        return 0;
    if (!job->row_blend || rule_repeat(&self->axes[job->n_outer]) != a->row_repeat
        || a->split.segment % a->row_repeat)
        return bad("row repeat");
    if (!job->block_blend || job->identity_step)
        job->row_repeat = a->row_repeat;
    return 0;
}

PyObject *linear_kernel(PyObject *module, PyObject *args, PyObject *kwargs)
{
    (void)module;
    LinearArgs a;
    if (parse(args, kwargs, &a) != 0)
        return NULL;
    Kernel *self = kernel_new();
    if (self == NULL)
        return NULL;
    LinearJob *job = &self->linear;
    if (check_types(self, &a, job) != 0 || read_block_taps(self, &a, job) != 0
        || read_linear_axes(self, &a, job) < 0 || check_linear_sizes(self, &a, job) != 0
        || check_row_repeat(self, &a, job) != 0) {
        Py_DECREF(self);
        return NULL;
    }
    job->block = a.block;
    job->block_in = a.block_in;
    job->n_blocks = a.split.n_blocks;
    job->n_segments = a.split.n_segments;
    job->segment = a.split.segment;
    job->low_bound = a.low_bound;
    job->high_bound = a.high_bound;
    job->isa = cpu_isa(a.isa);
    self->is_linear = 1;
    return (PyObject *)self;
}
