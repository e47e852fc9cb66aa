/* The nearest kernel's row loops (nearest_rows.h): the scalar loops, and the choice between
 * them and the vector ones. */
#include "nearest_rows.h"

#include <string.h>

#include "compiler.h"

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

size_t chunk_plan_bytes(int64_t segment)
{
    return align_up((size_t)(segment / 4 + 1) * (sizeof(int64_t) + 8 * sizeof(int32_t)),
                    CACHE_LINE_BYTES);
}

/* A scale >= 1 reads at most `per` inputs for `per` outputs: only a rounding of the rule
 * that skips an input could put a chunk's positions beyond one load. */
int plan_chunks(ChunkPlan *plan, const int64_t *table, int64_t n, int64_t limit)
{
    const int64_t per = plan->per, words = (int64_t)plan->w / 4;
    if (n < per || limit < per)
        return 0;
    for (int64_t c = 0; c * per < n; c++) {
        int64_t j = c * per < n - per ? c * per : n - per;
        int64_t first = table[j] < limit - per ? table[j] : limit - per;
        for (int64_t k = 0; k < per; k++) {
            int64_t t = table[j + k] - first;
            if (t < 0 || t >= per)
                return 0;
            for (int64_t d = 0; d < words; d++)
                plan->dwords[8 * c + k * words + d] = (int32_t)(t * words + d);
        }
        plan->start[c] = first;
    }
    return 1;
}

void repeat_two_rows(twice_fn twice, const char *x, char *out, size_t stride, int64_t n,
                     int unit)
{
    char *second = out + stride;
    if (twice && (size_t)n * (size_t)unit >= 8) {
        twice(x, out, second, (size_t)n * (size_t)unit, unit);
        return;
    }
    switch (unit) {
    case 1: repeat_two_rows_uint8_t(x, out, second, n); return;
    case 2: repeat_two_rows_uint16_t(x, out, second, n); return;
    case 4: repeat_two_rows_uint32_t(x, out, second, n); return;
    default: repeat_two_rows_uint64_t(x, out, second, n); return;
    }
}

/* A repeat of positions of `bytes` bytes, more than one element each. */
static void repeat_blocks(const RepeatPlan *plan, const char *x, char *out, int64_t n,
                          size_t bytes)
{
    const int64_t k = plan->k;
    switch (bytes) {
    case 2: repeat_block_2(x, out, n, k); return;
    case 3:
        if (k == 2 && plan->loops->rgb_twice && n >= 16)
            plan->loops->rgb_twice(x, out, n);
        else if (k == 2)
            repeat_rgb_twice(x, out, n);
        else
            repeat_block_3(x, out, n, k);
        return;
    case 4: repeat_block_4(x, out, n, k); return;
    case 6: repeat_block_6(x, out, n, k); return;
    case 8: repeat_block_8(x, out, n, k); return;
    case 12: repeat_block_12(x, out, n, k); return;
    case 16: repeat_block_16(x, out, n, k); return;
    default: break;
    }
    for (int64_t i = 0; i < n; i++) {
        const char *src = x + (size_t)i * bytes;
        char *dst = out + (size_t)(i * k) * bytes;
        for (int64_t t = 0; t < k; t++)
            memcpy(dst + (size_t)t * bytes, src, bytes);
    }
}

void repeat_row(const RepeatPlan *plan, const char *x, char *out, int64_t n)
{
    const int64_t k = plan->k, size = plan->block * plan->unit; /* one position's bytes */
    if (k == 2 && plan->loops->twice && (size == 1 || size == 2 || size == 4 || size == 8)
        && n * size >= 8) {
        plan->loops->twice(x, out, NULL, (size_t)(n * size), (int)size);
        return;
    }
    if (plan->block > 1) {
        repeat_blocks(plan, x, out, n, (size_t)size);
        return;
    }
    switch (plan->unit) {
    case 1: repeat_uint8_t(x, out, n, k); return;
    case 2: repeat_uint16_t(x, out, n, k); return;
    case 4: repeat_uint32_t(x, out, n, k); return;
    default: repeat_uint64_t(x, out, n, k); return;
    }
}

static void gather_row(const char *x, char *out, const int64_t *table, int64_t n,
                       int64_t block, int unit)
{
    if (block == 1) {
        switch (unit) {
        case 1: gather_uint8_t(x, out, table, n); return;
        case 2: gather_uint16_t(x, out, table, n); return;
        case 4: gather_uint32_t(x, out, table, n); return;
        default: gather_uint64_t(x, out, table, n); return;
        }
    }
    size_t bytes = (size_t)(block * unit);
    switch (bytes) {
    case 2: gather_block_2(x, out, table, n); return;
    case 3: gather_block_3(x, out, table, n); return;
    case 4: gather_block_4(x, out, table, n); return;
    case 6: gather_block_6(x, out, table, n); return;
    case 8: gather_block_8(x, out, table, n); return;
    case 12: gather_block_12(x, out, table, n); return;
    case 16: gather_block_16(x, out, table, n); return;
    default: break;
    }
    for (int64_t j = 0; j < n; j++)
        memcpy(out + (size_t)j * bytes, x + (size_t)table[j] * bytes, bytes);
}

/* Whole chunks by vector moves where the plan exists, the last one overlapping the one
 * before where the piece ends the segment, the rest through the table. */
void gather_piece(const GatherPlan *plan, const char *x, char *out, int64_t p, int64_t q)
{
    const ChunkPlan *chunks = &plan->chunks;
    int64_t done = p;
    if (chunks->run && q - p >= chunks->per) {
        const int64_t per = chunks->per, c0 = p / per, c1 = q / per;
        chunks->run(x, out, chunks->start + c0, chunks->dwords + 8 * c0, c1 - c0, chunks->w);
        done = c1 * per;
        if (done < q && q == plan->n) {
            chunks->run(x, out + (size_t)(plan->n - per - p) * chunks->w, chunks->start + c1,
                        chunks->dwords + 8 * c1, 1, chunks->w);
            done = q;
        }
    }
    if (done < q)
        gather_row(x, out + (size_t)(done - p) * (size_t)(plan->block * plan->unit),
                   plan->table + done, q - done, plan->block, plan->unit);
}
