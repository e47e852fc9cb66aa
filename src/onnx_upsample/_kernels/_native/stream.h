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

/* Copy n bytes to dst: whole 64-byte cache lines with streaming stores, the partial lines
 * at either end with ordinary ones. (A line that two rows share, written in two parts at two
 * moments with streaming stores, costs a partial write to memory each time: slower than an
 * ordinary store.) */
static inline void stream_copy(char *dst, const char *src, size_t n)
{
#ifdef HAVE_STREAM_STORES
    size_t head = (64 - ((uintptr_t)dst & 63)) & 63;
    if (head > n)
        head = n;
    memcpy(dst, src, head);
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
    memcpy(dst + body, src + body, n - body);
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
