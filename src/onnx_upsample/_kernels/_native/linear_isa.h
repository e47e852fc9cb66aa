/* The hot loops of the linear kernel: expand (gather an input row at the taps, converted to
 * the accumulation type), sum (the blend, in the order of docs/semantics.md) and store (convert,
 * truncating and saturating integers). Included once per instruction set by linear.c with
 * ISA naming the variant; every variant computes the same IEEE operations in the same
 * order (no contraction, no reassociation), so they give the same bits.
 */

#define CAT_(a, b) a##_##b
#define CAT(a, b) CAT_(a, b)
#define NAME(base) CAT(base, ISA)

#if defined(LANES_SSE2) || defined(LANES_AVX2)
#include "lanes.h"
#include "linear_vec_io.h"
#include "linear_vec.h"
/* the vector loops' part of a repeat or a store of these types (linear_vec_io.h) */
#define VREPEAT(T) NAME(vrepeat_##T)
#define VSTORE(T) NAME(vstore_##T)
#define VPLAIN NAME(vplain_FLOAT32)
#else
#define VREPEAT(T) NAME(no_vrepeat)
#define VSTORE(T) NAME(no_vstore)
static inline int64_t NAME(no_vrepeat)(const void *x, int64_t n, int64_t k, int64_t block,
                                       float *e)
{
    (void)x, (void)n, (void)k, (void)block, (void)e;
    return 0;
}
#define VPLAIN NAME(no_vplain)
static inline int NAME(no_vplain)(const char *row, int64_t n, int64_t *done)
{
    (void)row, (void)n;
    *done = 0;
    return 1;
}
static inline int64_t NAME(no_vstore)(const float *acc, void *o, int64_t width, float top)
{
    (void)acc, (void)o, (void)width, (void)top;
    return 0;
}
#endif

#if defined(__GNUC__) && !defined(__clang__)
#define IVDEP _Pragma("GCC ivdep")
#elif defined(__clang__)
#define IVDEP _Pragma("clang loop vectorize(assume_safety)")
#else
#define IVDEP
#endif

/* a + b, where both are NaN, returns a's payload: the x86 rule for an add whose first
 * operand is the running sum. Spelled out because a compiler may swap the operands of a
 * commutative add (and vector variants would then differ from scalar ones); written as a
 * bitwise blend so that the add, and the loads feeding it, are never made conditional
 * (masked loads cost more than the blend). */
static inline __attribute__((always_inline)) float NAME(first_nan_add_f)(float a, float b)
{
    float s = a + b, r;
    uint32_t ua, us, ur, keep = a != a ? 0xFFFFFFFFu : 0u;
    memcpy(&ua, &a, sizeof ua);
    memcpy(&us, &s, sizeof us);
    ur = (ua & keep) | (us & ~keep);
    memcpy(&r, &ur, sizeof r);
    return r;
}

static inline __attribute__((always_inline)) double NAME(first_nan_add_d)(double a, double b)
{
    double s = a + b, r;
    uint64_t ua, us, ur, keep = a != a ? ~(uint64_t)0 : 0;
    memcpy(&ua, &a, sizeof ua);
    memcpy(&us, &s, sizeof us);
    ur = (ua & keep) | (us & ~keep);
    memcpy(&r, &ur, sizeof r);
    return r;
}

/* Eight loads, then eight stores: a load issued after a store whose address matches it in
 * the low 12 bits (the input and the scratch can sit that way) waits for the store on many
 * cores; loads first leave nothing to wait for. */
#define DEFINE_EXPAND(T)                                                                     \
    static void NAME(expand_##T)(const char *row, const int64_t *restrict off, int64_t width, \
                                 void *restrict into, const float *lut)                      \
    {                                                                                        \
        (void)lut;                                                                           \
        const stored_##T *restrict x = (const stored_##T *)row;                              \
        acc_##T *restrict e = (acc_##T *)into;                                               \
        int64_t f = 0;                                                                       \
        for (; f + 8 <= width; f += 8) {                                                     \
            acc_##T v[8];                                                                    \
            for (int u = 0; u < 8; u++)                                                      \
                v[u] = (acc_##T)x[off[f + u]];                                               \
            for (int u = 0; u < 8; u++)                                                      \
                e[f + u] = v[u];                                                             \
        }                                                                                    \
        for (; f < width; f++)                                                               \
            e[f] = (acc_##T)x[off[f]];                                                       \
    }

/* An integer scale k on the row axis (no blended block, or an identity one): the low taps
 * are each input position's `block` elements k times over, converted once (no gather);
 * FIRST(T) gives the positions the vector loops cover, the rest are done here. */
#define DEFINE_EXPAND_REPEAT(T, FIRST)                                                       \
    static void NAME(repeat_##T)(const char *row, int64_t n, int64_t k, int64_t block,       \
                                 void *restrict into, const float *lut)                      \
    {                                                                                        \
        (void)lut;                                                                           \
        const stored_##T *restrict x = (const stored_##T *)row;                              \
        acc_##T *restrict e = (acc_##T *)into;                                               \
        int64_t first = FIRST(x, n, k, block, e);                                            \
        if (k == 2 && block == 1) {                                                          \
            for (int64_t i = first; i < n; i++) {                                           \
                acc_##T v = (acc_##T)x[i];                                                   \
                e[2 * i] = v;                                                                \
                e[2 * i + 1] = v;                                                            \
            }                                                                                \
            return;                                                                          \
        }                                                                                    \
        for (int64_t i = first; i < n; i++)                                                  \
            for (int64_t c = 0; c < block; c++) {                                            \
                acc_##T v = (acc_##T)x[i * block + c];                                       \
                for (int64_t t = 0; t < k; t++)                                              \
                    e[(i * k + t) * block + c] = v;                                          \
            }                                                                                \
    }

/* double accumulators: no vector part */
#define NO_FIRST(x, n, k, block, e) ((void)(x), (void)(n), (void)(k), (void)(block), (void)(e), 0)
DEFINE_EXPAND_REPEAT(INT8, VREPEAT(INT8))
DEFINE_EXPAND_REPEAT(UINT8, VREPEAT(UINT8))
DEFINE_EXPAND_REPEAT(INT16, VREPEAT(INT16))
DEFINE_EXPAND_REPEAT(UINT16, VREPEAT(UINT16))
DEFINE_EXPAND_REPEAT(INT32, VREPEAT(INT32))
/* float32 single elements at scale 2 have nothing to convert: the loop above, which the
 * compiler vectorises, copies them as fast without a call */
#define FLOAT32_FIRST(x, n, k, block, e) \
    ((k) == 2 && (block) == 1 ? 0 : VREPEAT(FLOAT32)(x, n, k, block, e))
DEFINE_EXPAND_REPEAT(FLOAT32, FLOAT32_FIRST)
#undef FLOAT32_FIRST
DEFINE_EXPAND_REPEAT(INT64, NO_FIRST)
DEFINE_EXPAND_REPEAT(UINT64, NO_FIRST)
DEFINE_EXPAND_REPEAT(UINT32, NO_FIRST)
DEFINE_EXPAND_REPEAT(FLOAT64, NO_FIRST)
#undef NO_FIRST

/* 16-bit floats: each pattern's value from the job's float32 table */
static void NAME(repeat_HALF)(const char *row, int64_t n, int64_t k, int64_t block,
                              void *restrict into, const float *lut)
{
    const stored_HALF *restrict x = (const stored_HALF *)row;
    acc_HALF *restrict e = (acc_HALF *)into;
    for (int64_t i = 0; i < n; i++)
        for (int64_t c = 0; c < block; c++) {
            acc_HALF v = lut[x[i * block + c]];
            for (int64_t t = 0; t < k; t++)
                e[(i * k + t) * block + c] = v;
        }
}

DEFINE_EXPAND(INT8)
DEFINE_EXPAND(UINT8)
DEFINE_EXPAND(INT16)
DEFINE_EXPAND(UINT16)
DEFINE_EXPAND(INT32)
DEFINE_EXPAND(FLOAT32)
DEFINE_EXPAND(INT64)
DEFINE_EXPAND(UINT64)
DEFINE_EXPAND(UINT32)
DEFINE_EXPAND(FLOAT64)

static void NAME(expand_HALF)(const char *row, const int64_t *restrict off, int64_t width,
                              void *restrict into, const float *lut)
{
    const stored_HALF *restrict x = (const stored_HALF *)row;
    acc_HALF *restrict e = (acc_HALF *)into;
    for (int64_t f = 0; f < width; f++)
        e[f] = lut[x[off[f]]];
}

/* Integers: truncate toward zero, then saturate; the bounds are compared before the
 * conversion, so no out-of-range float is ever converted (undefined behaviour in C). NaN
 * cannot reach an integer result (finite inputs, finite weights) and goes to the minimum. */
#define DEFINE_STORE_INT(T)                                                                  \
    static void NAME(store_##T)(const void *restrict from, char *restrict to, int64_t width, \
                                double low_bound, double high_bound)                         \
    {                                                                                        \
        const acc_##T *restrict acc = (const acc_##T *)from;                                 \
        stored_##T *restrict o = (stored_##T *)to;                                           \
        const acc_##T low = (acc_##T)low_bound, high = (acc_##T)high_bound;                  \
        const stored_##T low_value = (stored_##T)low_bound;                                  \
        const stored_##T high_value = (stored_##T)(high_bound - 1.0);                        \
        for (int64_t f = 0; f < width; f++) {                                                \
            acc_##T v = acc[f];                                                              \
            o[f] = v >= high ? high_value : (v >= low ? (stored_##T)v : low_value);          \
        }                                                                                    \
    }

/* 8- and 16-bit integers: their bounds are floats exactly, and truncation commutes with
 * clamping to integer bounds, so clamp to [min, max] first, then convert (the same values
 * in fewer vector operations; NaN, which integer inputs cannot produce, goes to min). The
 * vector loops (VSTORE) saturate to the type's own range: they take the bounds that are
 * that range, as they always are (_compiled.py). */
#define DEFINE_STORE_SMALL(T, LOW, HIGH)                                                     \
    static void NAME(store_##T)(const void *restrict from, char *restrict to, int64_t width, \
                                double low_bound, double high_bound)                         \
    {                                                                                        \
        const acc_##T *restrict acc = (const acc_##T *)from;                                 \
        stored_##T *restrict o = (stored_##T *)to;                                           \
        const acc_##T low = (acc_##T)low_bound, top = (acc_##T)(high_bound - 1.0);           \
        int64_t f = low_bound == (LOW) && high_bound == (HIGH) + 1.0                         \
            ? VSTORE(T)(acc, o, width, top) : 0;                                             \
        for (; f < width; f++) {                                                             \
            acc_##T v = acc[f];                                                              \
            v = v >= low ? v : low;                                                          \
            v = v <= top ? v : top;                                                          \
            o[f] = (stored_##T)(int32_t)v;                                                   \
        }                                                                                    \
    }

DEFINE_STORE_SMALL(INT8, INT8_MIN, INT8_MAX)
DEFINE_STORE_SMALL(UINT8, 0, UINT8_MAX)
DEFINE_STORE_SMALL(INT16, INT16_MIN, INT16_MAX)
DEFINE_STORE_SMALL(UINT16, 0, UINT16_MAX)
DEFINE_STORE_INT(INT32)
DEFINE_STORE_INT(UINT32)

/* int64 and uint64: their largest value is not a double, so the top is set directly. */
static void NAME(store_INT64)(const void *restrict from, char *restrict to, int64_t width,
                              double low_bound, double high_bound)
{
    const acc_INT64 *restrict acc = (const acc_INT64 *)from;
    stored_INT64 *restrict o = (stored_INT64 *)to;
    for (int64_t f = 0; f < width; f++) {
        acc_INT64 v = acc[f];
        o[f] = v >= high_bound ? INT64_MAX : (v >= low_bound ? (int64_t)v : INT64_MIN);
    }
}

static void NAME(store_UINT64)(const void *restrict from, char *restrict to, int64_t width,
                               double low_bound, double high_bound)
{
    const acc_UINT64 *restrict acc = (const acc_UINT64 *)from;
    stored_UINT64 *restrict o = (stored_UINT64 *)to;
    for (int64_t f = 0; f < width; f++) {
        acc_UINT64 v = acc[f];
        o[f] = v >= high_bound ? UINT64_MAX : (v >= low_bound ? (uint64_t)v : 0);
    }
}

/* Floats: the accumulator is the stored type (linear.c sums these straight into the output
 * where it can; this copy serves the others). */
#define DEFINE_STORE_COPY(T)                                                                 \
    static void NAME(store_##T)(const void *restrict from, char *restrict to, int64_t width, \
                                double low_bound, double high_bound)                         \
    {                                                                                        \
        (void)low_bound, (void)high_bound;                                                   \
        memcpy(to, from, (size_t)width * sizeof(stored_##T));                                \
    }

DEFINE_STORE_COPY(FLOAT32)
DEFINE_STORE_COPY(FLOAT64)

#define ACC float
#define SUFFIX f
#include "linear_sum.h"
#undef ACC
#undef SUFFIX
#define ACC double
#define SUFFIX d
#include "linear_sum.h"
#undef ACC
#undef SUFFIX

/* Whether n float32 values from `row` are plain (see linear_cache.h): every one finite, none
 * -0 and none of magnitude below 2**-100 but +0. The vector loop's (linear_vec_io.h), then
 * one branch-free pass over the rest: the largest magnitude must be finite; the smallest
 * bits read as signed (the negative values from -0 up, in order of magnitude) must not be
 * a negative one below PLAIN_LOW; the smallest bits less 1 read as unsigned (the positive
 * values from +0 up, +0 wrapping to the largest, the negative ones above every positive
 * one) must not be a positive one below it. */
static int NAME(plain_float32)(const char *row, int64_t n)
{
    int64_t i;
    if (!VPLAIN(row, n, &i))
        return 0;
    int32_t most = 0, least_signed = INT32_MAX;
    uint32_t least_less_one = UINT32_MAX;
    for (; i < n; i++) {
        int32_t bits;
        memcpy(&bits, row + (size_t)i * sizeof bits, sizeof bits);
        const int32_t magnitude = bits & INT32_MAX;
        const uint32_t less_one = (uint32_t)bits - 1u;
        most = magnitude > most ? magnitude : most;
        least_signed = bits < least_signed ? bits : least_signed;
        least_less_one = less_one < least_less_one ? less_one : least_less_one;
    }
    return most < 0x7F800000 && least_signed >= INT32_MIN + (int32_t)PLAIN_LOW
        && least_less_one >= PLAIN_LOW - 1u;
}

/* Every code has its loops, by name: a code without them does not compile. A code's store
 * writes the code its results are written as (T_HALF: float32). */
#define OPS_EXPAND(T, stored, acc, out) [T_##T] = NAME(expand_##T),
#define OPS_REPEAT(T, stored, acc, out) [T_##T] = NAME(repeat_##T),
#define OPS_STORE(T, stored, acc, out) [T_##T] = NAME(store_##out),
static const LinearOps NAME(linear_ops) = {
    .expand = {LINEAR_TYPES(OPS_EXPAND)},
    .repeat = {LINEAR_TYPES(OPS_REPEAT)},
    .store = {LINEAR_TYPES(OPS_STORE)},
    .sum_float = NAME(sum_f),
    .sum_double = NAME(sum_d),
    .plain_float32 = NAME(plain_float32),
#if defined(LANES_SSE2) || defined(LANES_AVX2)
    .vec_sum_row = NAME(vec_sum_row),
    .lanes = VL,
#endif
};
#undef OPS_EXPAND
#undef OPS_REPEAT
#undef OPS_STORE

#undef DEFINE_EXPAND
#undef DEFINE_EXPAND_REPEAT
#undef DEFINE_STORE_INT
#undef DEFINE_STORE_SMALL
#undef DEFINE_STORE_COPY
#undef IVDEP
#undef VREPEAT
#undef VSTORE
#undef VPLAIN
#undef NAME
#undef CAT
#undef CAT_
