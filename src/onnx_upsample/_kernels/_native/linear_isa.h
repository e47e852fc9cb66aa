/* The hot loops of the linear kernel: expand (gather an input row at the taps, converted to
 * the accumulation type), sum (the blend, in the order of docs/semantics.md) and store (convert,
 * truncating and saturating integers). Included once per instruction set by linear.c with
 * ISA naming the variant; every variant computes the same IEEE operations in the same
 * order (no contraction, no reassociation), so they give the same bits.
 */

#define CAT_(a, b) a##_##b
#define CAT(a, b) CAT_(a, b)
#define NAME(base) CAT(base, ISA)

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
#define DEFINE_EXPAND(S, ACC, SUFFIX)                                                        \
    static void NAME(expand_##SUFFIX)(const char *row, const int64_t *restrict off,          \
                                      int64_t width, void *restrict into, const float *lut)  \
    {                                                                                        \
        (void)lut;                                                                           \
        const S *restrict x = (const S *)row;                                                \
        ACC *restrict e = (ACC *)into;                                                       \
        int64_t f = 0;                                                                       \
        for (; f + 8 <= width; f += 8) {                                                     \
            ACC v[8];                                                                        \
            for (int u = 0; u < 8; u++)                                                      \
                v[u] = (ACC)x[off[f + u]];                                                   \
            for (int u = 0; u < 8; u++)                                                      \
                e[f + u] = v[u];                                                             \
        }                                                                                    \
        for (; f < width; f++)                                                               \
            e[f] = (ACC)x[off[f]];                                                           \
    }

/* An integer scale k on the row axis (no blended block): the low taps are each input
 * position's `block` elements k times over, converted once (no gather). */
#define DEFINE_EXPAND_REPEAT(S, ACC, SUFFIX)                                                 \
    static void NAME(repeat_##SUFFIX)(const char *row, int64_t n, int64_t k, int64_t block, \
                                      void *restrict into, const float *lut)                 \
    {                                                                                        \
        (void)lut;                                                                           \
        const S *restrict x = (const S *)row;                                                \
        ACC *restrict e = (ACC *)into;                                                       \
        if (k == 2 && block == 1) {                                                          \
            for (int64_t i = 0; i < n; i++) {                                                \
                ACC v = (ACC)x[i];                                                           \
                e[2 * i] = v;                                                                \
                e[2 * i + 1] = v;                                                            \
            }                                                                                \
            return;                                                                          \
        }                                                                                    \
        for (int64_t i = 0; i < n; i++)                                                      \
            for (int64_t c = 0; c < block; c++) {                                            \
                ACC v = (ACC)x[i * block + c];                                               \
                for (int64_t t = 0; t < k; t++)                                              \
                    e[(i * k + t) * block + c] = v;                                          \
            }                                                                                \
    }

DEFINE_EXPAND_REPEAT(int8_t, float, i8)
DEFINE_EXPAND_REPEAT(uint8_t, float, u8)
DEFINE_EXPAND_REPEAT(int16_t, float, i16)
DEFINE_EXPAND_REPEAT(uint16_t, float, u16)
DEFINE_EXPAND_REPEAT(int32_t, float, i32)
DEFINE_EXPAND_REPEAT(float, float, f32)
DEFINE_EXPAND_REPEAT(int64_t, double, i64)
DEFINE_EXPAND_REPEAT(uint64_t, double, u64)
DEFINE_EXPAND_REPEAT(uint32_t, double, u32)
DEFINE_EXPAND_REPEAT(double, double, f64)

static void NAME(repeat_half)(const char *row, int64_t n, int64_t k, int64_t block,
                              void *restrict into, const float *lut)
{
    const uint16_t *restrict x = (const uint16_t *)row;
    float *restrict e = (float *)into;
    for (int64_t i = 0; i < n; i++)
        for (int64_t c = 0; c < block; c++) {
            float v = lut[x[i * block + c]];
            for (int64_t t = 0; t < k; t++)
                e[(i * k + t) * block + c] = v;
        }
}

DEFINE_EXPAND(int8_t, float, i8)
DEFINE_EXPAND(uint8_t, float, u8)
DEFINE_EXPAND(int16_t, float, i16)
DEFINE_EXPAND(uint16_t, float, u16)
DEFINE_EXPAND(int32_t, float, i32)
DEFINE_EXPAND(float, float, f32)
DEFINE_EXPAND(int64_t, double, i64)
DEFINE_EXPAND(uint64_t, double, u64)
DEFINE_EXPAND(uint32_t, double, u32)
DEFINE_EXPAND(double, double, f64)

static void NAME(expand_half)(const char *row, const int64_t *restrict off, int64_t width,
                              void *restrict into, const float *lut)
{
    const uint16_t *restrict x = (const uint16_t *)row;
    float *restrict e = (float *)into;
    for (int64_t f = 0; f < width; f++)
        e[f] = lut[x[off[f]]];
}

/* Integers: truncate toward zero, then saturate; the bounds are compared before the
 * conversion, so no out-of-range float is ever converted (undefined behaviour in C). NaN
 * cannot reach an integer result (finite inputs, finite weights) and goes to the minimum. */
#define DEFINE_STORE_INT(D, ACC, SUFFIX)                                                     \
    static void NAME(store_##SUFFIX)(const void *restrict from, char *restrict to,           \
                                     int64_t width, double low_bound, double high_bound)     \
    {                                                                                        \
        const ACC *restrict acc = (const ACC *)from;                                         \
        D *restrict o = (D *)to;                                                             \
        const ACC low = (ACC)low_bound, high = (ACC)high_bound;                              \
        const D low_value = (D)low_bound;                                                    \
        const D high_value = (D)(high_bound - 1.0);                                          \
        for (int64_t f = 0; f < width; f++) {                                                \
            ACC v = acc[f];                                                                  \
            o[f] = v >= high ? high_value : (v >= low ? (D)v : low_value);                   \
        }                                                                                    \
    }

/* 8- and 16-bit integers: their bounds are floats exactly, and truncation commutes with
 * clamping to integer bounds, so clamp to [min, max] first, then convert (the same values
 * in fewer vector operations; NaN, which integer inputs cannot produce, goes to min). */
#define DEFINE_STORE_SMALL(D, SUFFIX)                                                        \
    static void NAME(store_##SUFFIX)(const void *restrict from, char *restrict to,           \
                                     int64_t width, double low_bound, double high_bound)     \
    {                                                                                        \
        const float *restrict acc = (const float *)from;                                     \
        D *restrict o = (D *)to;                                                             \
        const float low = (float)low_bound, top = (float)(high_bound - 1.0);                 \
        for (int64_t f = 0; f < width; f++) {                                                \
            float v = acc[f];                                                                \
            v = v >= low ? v : low;                                                          \
            v = v <= top ? v : top;                                                          \
            o[f] = (D)(int32_t)v;                                                            \
        }                                                                                    \
    }

DEFINE_STORE_SMALL(int8_t, i8)
DEFINE_STORE_SMALL(uint8_t, u8)
DEFINE_STORE_SMALL(int16_t, i16)
DEFINE_STORE_SMALL(uint16_t, u16)
DEFINE_STORE_INT(int32_t, float, i32)
DEFINE_STORE_INT(uint32_t, double, u32)

/* int64 and uint64: their largest value is not a double, so the top is set directly. */
static void NAME(store_i64)(const void *restrict from, char *restrict to, int64_t width,
                            double low_bound, double high_bound)
{
    const double *restrict acc = (const double *)from;
    int64_t *restrict o = (int64_t *)to;
    for (int64_t f = 0; f < width; f++) {
        double v = acc[f];
        o[f] = v >= high_bound ? INT64_MAX : (v >= low_bound ? (int64_t)v : INT64_MIN);
    }
}

static void NAME(store_u64)(const void *restrict from, char *restrict to, int64_t width,
                            double low_bound, double high_bound)
{
    const double *restrict acc = (const double *)from;
    uint64_t *restrict o = (uint64_t *)to;
    for (int64_t f = 0; f < width; f++) {
        double v = acc[f];
        o[f] = v >= high_bound ? UINT64_MAX : (v >= low_bound ? (uint64_t)v : 0);
    }
}

static void NAME(store_f32)(const void *restrict from, char *restrict to, int64_t width,
                            double low_bound, double high_bound)
{
    (void)low_bound, (void)high_bound;
    memcpy(to, from, (size_t)width * sizeof(float));
}

static void NAME(store_f64)(const void *restrict from, char *restrict to, int64_t width,
                            double low_bound, double high_bound)
{
    (void)low_bound, (void)high_bound;
    memcpy(to, from, (size_t)width * sizeof(double));
}

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

static const LinearOps NAME(linear_ops) = {
    {NAME(expand_i8), NAME(expand_u8), NAME(expand_i16), NAME(expand_u16), NAME(expand_i32),
     NAME(expand_f32), NAME(expand_half), NAME(expand_i64), NAME(expand_u64),
     NAME(expand_u32), NAME(expand_f64)},
    {NAME(repeat_i8), NAME(repeat_u8), NAME(repeat_i16), NAME(repeat_u16), NAME(repeat_i32),
     NAME(repeat_f32), NAME(repeat_half), NAME(repeat_i64), NAME(repeat_u64),
     NAME(repeat_u32), NAME(repeat_f64)},
    {NAME(store_i8), NAME(store_u8), NAME(store_i16), NAME(store_u16), NAME(store_i32),
     NAME(store_f32), NAME(store_f32), NAME(store_i64), NAME(store_u64), NAME(store_u32),
     NAME(store_f64)},
    NAME(sum_f),
    NAME(sum_d),
};

#undef DEFINE_EXPAND
#undef DEFINE_EXPAND_REPEAT
#undef DEFINE_STORE_INT
#undef DEFINE_STORE_SMALL
#undef IVDEP
#undef NAME
#undef CAT
#undef CAT_
