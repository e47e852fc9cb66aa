/* The nearest kernel's scalar row loops (nearest.c includes this once): a repeat by an
 * integer factor and a gather through a table, for every element size (unit words) and for
 * short blocks of them (the channels of a channels-last image, complex parts). The vector
 * loops of nearest_isa.h take over where their instructions exist and the row is long
 * enough; these finish everything else.
 */
#ifndef ONNX_UPSAMPLE_NEAREST_SCALAR_H
#define ONNX_UPSAMPLE_NEAREST_SCALAR_H

#include <stdint.h>
#include <string.h>

/* Elements are moved as unsigned words of their size through memcpy, never read through a
 * pointer to another type (the data are floats, complex numbers, strings...): no aliasing
 * rule is involved, and compilers turn each memcpy into the one load or store it stands for. */
#define DEFINE_WORD(T)                                                                     \
    static inline T load_##T(const char *p, int64_t i)                                     \
    {                                                                                      \
        T v;                                                                               \
        memcpy(&v, p + (size_t)i * sizeof(T), sizeof(T));                                  \
        return v;                                                                          \
    }                                                                                      \
    static inline void store_##T(char *p, int64_t i, T v)                                  \
    {                                                                                      \
        memcpy(p + (size_t)i * sizeof(T), &v, sizeof(T));                                  \
    }

/* out[i*k + t] = x[i] for i < n, t < k: an integer scale on the row axis, one element per
 * position. Fixed k gives loops the compiler vectorises. */
#define DEFINE_REPEAT(T)                                                                   \
    DEFINE_WORD(T)                                                                         \
    static void repeat_##T(const char *restrict x, char *restrict out, int64_t n, int64_t k) \
    {                                                                                      \
        if (k == 2) {                                                                      \
            for (int64_t i = 0; i < n; i++) {                                              \
                T v = load_##T(x, i);                                                      \
                store_##T(out, 2 * i, v);                                                  \
                store_##T(out, 2 * i + 1, v);                                              \
            }                                                                              \
        } else if (k == 3) {                                                               \
            for (int64_t i = 0; i < n; i++) {                                              \
                T v = load_##T(x, i);                                                      \
                store_##T(out, 3 * i, v);                                                  \
                store_##T(out, 3 * i + 1, v);                                              \
                store_##T(out, 3 * i + 2, v);                                              \
            }                                                                              \
        } else if (k == 4) {                                                               \
            for (int64_t i = 0; i < n; i++) {                                              \
                T v = load_##T(x, i);                                                      \
                store_##T(out, 4 * i, v);                                                  \
                store_##T(out, 4 * i + 1, v);                                              \
                store_##T(out, 4 * i + 2, v);                                              \
                store_##T(out, 4 * i + 3, v);                                              \
            }                                                                              \
        } else {                                                                           \
            for (int64_t i = 0; i < n; i++) {                                              \
                T v = load_##T(x, i);                                                      \
                for (int64_t t = 0; t < k; t++)                                            \
                    store_##T(out, k * i + t, v);                                          \
            }                                                                              \
        }                                                                                  \
    }                                                                                      \
    static void gather_##T(const char *restrict x, char *restrict out,                     \
                           const int64_t *restrict table, int64_t n)                       \
    {                                                                                      \
        for (int64_t j = 0; j < n; j++)                                                    \
            store_##T(out, j, load_##T(x, table[j]));                                      \
    }

DEFINE_REPEAT(uint8_t)
DEFINE_REPEAT(uint16_t)
DEFINE_REPEAT(uint32_t)
DEFINE_REPEAT(uint64_t)

/* Two output rows `stride` bytes apart, each x[i] twice: out[2i] = out[2i+1] = x[i]. */
#define DEFINE_REPEAT_TWO_ROWS(T)                                                          \
    static void repeat_two_rows_##T(const char *restrict x, char *restrict a,              \
                                    char *restrict b, int64_t n)                           \
    {                                                                                      \
        for (int64_t i = 0; i < n; i++) {                                                  \
            T v = load_##T(x, i);                                                          \
            store_##T(a, 2 * i, v);                                                        \
            store_##T(a, 2 * i + 1, v);                                                    \
            store_##T(b, 2 * i, v);                                                        \
            store_##T(b, 2 * i + 1, v);                                                    \
        }                                                                                  \
    }

DEFINE_REPEAT_TWO_ROWS(uint8_t)
DEFINE_REPEAT_TWO_ROWS(uint16_t)
DEFINE_REPEAT_TWO_ROWS(uint32_t)
DEFINE_REPEAT_TWO_ROWS(uint64_t)

/* Short blocks (the channels of a channels-last image, complex parts): one loop per block
 * size, so that every copy is a fixed-size move and no size is dispatched per element. */
#define DEFINE_BLOCK_LOOPS(B)                                                              \
    static void repeat_block_##B(const char *x, char *out, int64_t n, int64_t k)           \
    {                                                                                      \
        if (k == 2) {                                                                      \
            for (int64_t i = 0; i < n; i++) {                                              \
                memcpy(out + (size_t)(2 * i) * B, x + (size_t)i * B, B);                   \
                memcpy(out + (size_t)(2 * i + 1) * B, x + (size_t)i * B, B);               \
            }                                                                              \
            return;                                                                        \
        }                                                                                  \
        for (int64_t i = 0; i < n; i++)                                                    \
            for (int64_t t = 0; t < k; t++)                                                \
                memcpy(out + (size_t)(i * k + t) * B, x + (size_t)i * B, B);               \
    }                                                                                      \
    static void gather_block_##B(const char *x, char *out, const int64_t *table, int64_t n) \
    {                                                                                      \
        for (int64_t j = 0; j < n; j++)                                                    \
            memcpy(out + (size_t)j * B, x + (size_t)table[j] * B, B);                      \
    }

DEFINE_BLOCK_LOOPS(2)
DEFINE_BLOCK_LOOPS(3)
DEFINE_BLOCK_LOOPS(4)
DEFINE_BLOCK_LOOPS(6)
DEFINE_BLOCK_LOOPS(8)
DEFINE_BLOCK_LOOPS(12)
DEFINE_BLOCK_LOOPS(16)

/* 3-byte items (RGB bytes) twice each: one 4-byte load and two 4-byte stores per item, each
 * store's extra byte overwritten by the next one; the last items are copied exactly, so
 * nothing is read or written outside the row. */
static void repeat_rgb_twice(const char *x, char *out, int64_t n)
{
    int64_t i = 0;
    for (; i + 2 < n; i++) {
        uint32_t v;
        memcpy(&v, x + (size_t)i * 3, 4);
        memcpy(out + (size_t)i * 6, &v, 4);
        memcpy(out + (size_t)i * 6 + 3, &v, 4);
    }
    repeat_block_3(x + (size_t)i * 3, out + (size_t)i * 6, n - i, 2);
}

#endif
