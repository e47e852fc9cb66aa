/* Streaming (non-temporal) stores, for outputs much larger than the caches.
 *
 * An ordinary store first reads the cache line it writes (read for ownership): writing an
 * output that does not fit in the caches then moves every byte twice. A non-temporal store
 * writes whole lines straight to memory, so writing the output costs what `memset` costs
 * (the "write floor" of the benchmarks). The bytes written are the same; only the cache
 * traffic differs. Where the instructions are missing, a streaming copy is a plain memcpy.
 */
#ifndef ONNX_UPSAMPLE_STREAM_H
#define ONNX_UPSAMPLE_STREAM_H

#include <stddef.h>
#include <stdint.h>
#include <string.h>

#if defined(__SSE2__) || defined(_M_X64)
#include <emmintrin.h>
#define HAVE_STREAM_STORES 1
#endif

/* Bytes a kernel assembles in a small buffer before streaming them out. */
#define STREAM_BUFFER_BYTES 16384

/* Copy n bytes (less than a cache line, a whole number of 4-byte words, to a word-aligned
 * dst) that share their line with other writes, with streaming stores: 16 bytes at a time
 * where dst allows, whole words beside them. Rows written one after the other then fill the
 * line between them in the write-combining buffer. An ordinary store there would first read
 * the line from memory and hold back the streamed lines behind it: a volume's rows (512
 * bytes) took twice as long or more. No call to memcpy: a call here would make the vector
 * loops around it keep their registers on the stack. */
static inline void stream_words(char *dst, const char *src, size_t n)
{
#ifdef HAVE_STREAM_STORES
    size_t i = 0;
    int word;
    for (; i + 4 <= n && ((uintptr_t)(dst + i) & 15); i += 4) {
        memcpy(&word, src + i, sizeof word);
        _mm_stream_si32((int *)(void *)(dst + i), word);
    }
    for (; i + 16 <= n; i += 16)
        _mm_stream_si128((__m128i *)(void *)(dst + i),
                         _mm_loadu_si128((const __m128i *)(const void *)(src + i)));
    for (; i + 4 <= n; i += 4) {
        memcpy(&word, src + i, sizeof word);
        _mm_stream_si32((int *)(void *)(dst + i), word);
    }
#else
    memcpy(dst, src, n);
#endif
}

/* Up to 3 bytes with ordinary stores, at most 2 and 1 at a time (no call to memcpy). */
static inline void copy_few(char *dst, const char *src, size_t n)
{
    if (n & 2) {
        memcpy(dst, src, 2);
        dst += 2;
        src += 2;
    }
    if (n & 1)
        *dst = *src;
}

/* As stream_words, for any n bytes less than a cache line: the bytes beside the whole words
 * (elements of 1 or 2 bytes) with ordinary stores. */
static inline void stream_part(char *dst, const char *src, size_t n)
{
    size_t lead = (4 - ((uintptr_t)dst & 3)) & 3;
    if (lead >= n) {
        copy_few(dst, src, n);
        return;
    }
    copy_few(dst, src, lead);
    const size_t words = (n - lead) & ~(size_t)3;
    stream_words(dst + lead, src + lead, words);
    copy_few(dst + lead + words, src + lead + words, n - lead - words);
}

/* Copy n bytes to dst with streaming stores: whole 64-byte cache lines a line at a time, the
 * partial lines at either end as stream_part does. */
static inline void stream_copy(char *dst, const char *src, size_t n)
{
#ifdef HAVE_STREAM_STORES
    size_t head = (64 - ((uintptr_t)dst & 63)) & 63;
    if (head > n)
        head = n;
    stream_part(dst, src, head);
    dst += head;
    src += head;
    n -= head;
    size_t body = n & ~(size_t)63;
    for (size_t i = 0; i < body; i += 64) {
        __m128i a = _mm_loadu_si128((const __m128i *)(const void *)(src + i));
        __m128i b = _mm_loadu_si128((const __m128i *)(const void *)(src + i + 16));
        __m128i c = _mm_loadu_si128((const __m128i *)(const void *)(src + i + 32));
        __m128i d = _mm_loadu_si128((const __m128i *)(const void *)(src + i + 48));
        _mm_stream_si128((__m128i *)(void *)(dst + i), a);
        _mm_stream_si128((__m128i *)(void *)(dst + i + 16), b);
        _mm_stream_si128((__m128i *)(void *)(dst + i + 32), c);
        _mm_stream_si128((__m128i *)(void *)(dst + i + 48), d);
    }
    stream_part(dst + body, src + body, n - body);
#else
    memcpy(dst, src, n);
#endif
}

/* Streaming stores are weakly ordered: make them visible before a work item is reported
 * done (the pool's atomics order ordinary stores only). */
static inline void stream_fence(void)
{
#ifdef HAVE_STREAM_STORES
    _mm_sfence();
#endif
}

#endif
