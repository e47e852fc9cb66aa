/* The blend of one output row segment, for one accumulation type (ACC, named SUFFIX):
 *   acc[f] = sum over corners c (outer axes, innermost fastest), then taps t (row axis,
 *            then the block's axis fastest) of ((W[t][f] * F[c][0]) * F[c][1] ...) * E[c][t][f]
 * W is the float32 product of the row and block weights (innermost first), F[c][q] the
 * weight of outer interpolated axis q (innermost first) in corner c. The sum starts from
 * the first term and adds left to right (a NaN sum keeps its payload). Included by
 * linear_isa.h once per accumulation type and instruction set; every variant performs the
 * same operations in the same order.
 */

/* With NI and T constants the term loops unroll and the element loop vectorises. ID: the
 * taps are those of an identity block (see linear.c, Segment): each term is followed by
 * its other channel tap's, the next channel's element (d on) at weight +0 (0 times the
 * term's row and outer weights), or in the last channel (`last`) the same element at the
 * same weight: ORT's every term, in its order. */
static inline __attribute__((always_inline)) void NAME(CAT(sum_fixed, SUFFIX))(
    int64_t width, const int NI, const int T, const float *const *W, const float *F,
    ACC *const *E, ACC *restrict acc, const int ID, const uint32_t *last, int64_t d)
{
    const float *w_[4];
    const ACC *e_[32];
    float f_[8][3];
    for (int t = 0; t < T; t++)
        w_[t] = W[t];
    for (int c = 0; c < (1 << NI); c++) {
        for (int q = 0; q < NI; q++)
            f_[c][q] = F[c * NI + q];
        for (int t = 0; t < T; t++)
            e_[c * T + t] = E[c * T + t];
    }
    IVDEP
    for (int64_t f = 0; f < width; f++) {
        ACC v = 0;
#pragma GCC unroll 8
        for (int c = 0; c < (1 << NI); c++) {
#pragma GCC unroll 4
            for (int t = 0; t < T; t++) {
                float w = w_[t][f];
#pragma GCC unroll 3
                for (int q = 0; q < NI; q++)
                    w = w * f_[c][q];
                ACC e = e_[c * T + t][f];
                ACC p = (ACC)w * e;
                v = (c == 0 && t == 0) ? p : NAME(CAT(first_nan_add, SUFFIX))(v, p);
                if (ID) {
                    ACC other = last[f] ? e : e_[c * T + t][f + d];
                    float w_other = last[f] ? w : 0.0f;
                    v = NAME(CAT(first_nan_add, SUFFIX))(v, (ACC)w_other * other);
                }
            }
        }
        acc[f] = v;
    }
}

/* An identity block's taps (see sum_fixed) for any count of axes and taps. */
static void NAME(CAT(sum_identity, SUFFIX))(int64_t width, int NI, int T, const float *const *W,
                                            const float *F, ACC *const *E, ACC *restrict acc,
                                            const uint32_t *last, int64_t d)
{
    for (int64_t f = 0; f < width; f++) {
        ACC v = 0;
        for (int c = 0; c < (1 << NI); c++)
            for (int t = 0; t < T; t++) {
                float w = W[t][f];
                for (int q = 0; q < NI; q++)
                    w = w * F[c * NI + q];
                ACC e = E[c * T + t][f];
                ACC p = (ACC)w * e;
                v = (c == 0 && t == 0) ? p : NAME(CAT(first_nan_add, SUFFIX))(v, p);
                ACC other = last[f] ? e : E[c * T + t][f + d];
                float w_other = last[f] ? w : 0.0f;
                v = NAME(CAT(first_nan_add, SUFFIX))(v, (ACC)w_other * other);
            }
        acc[f] = v;
    }
}

/* `last` and `d`: the identity block's (sum_fixed), or NULL. */
static void NAME(CAT(sum, SUFFIX))(int64_t width, int NI, int T, const float *const *W,
                                   const float *F, void *const *E_, void *acc_,
                                   const uint32_t *last, int64_t d)
{
    ACC *const *E = (ACC *const *)E_;
    ACC *restrict acc = (ACC *)acc_;
    if (last != NULL) {
        if (NI == 1 && T == 2)
            NAME(CAT(sum_fixed, SUFFIX))(width, 1, 2, W, F, E, acc, 1, last, d);
        else
            NAME(CAT(sum_identity, SUFFIX))(width, NI, T, W, F, E, acc, last, d);
        return;
    }
#define SUM_CASE(NI_, T_)                                                                 \
    case NI_ * 8 + T_:                                                                    \
        NAME(CAT(sum_fixed, SUFFIX))(width, NI_, T_, W, F, E, acc, 0, NULL, 0);           \
        return;
    switch (NI * 8 + T) {
    SUM_CASE(0, 1)
    SUM_CASE(0, 2)
    SUM_CASE(0, 4)
    SUM_CASE(1, 1)
    SUM_CASE(1, 2)
    SUM_CASE(1, 4)
    SUM_CASE(2, 1)
    SUM_CASE(2, 2)
    SUM_CASE(2, 4)
    SUM_CASE(3, 1)
    SUM_CASE(3, 2)
    default: break;
    }
#undef SUM_CASE
    /* any other count of axes: one pass per term over the segment */
    int combos = 1 << NI;
    for (int c = 0; c < combos; c++) {
        for (int t = 0; t < T; t++) {
            const float *restrict wt = W[t];
            const ACC *restrict e = E[c * T + t];
            const float *fc = F + (size_t)c * (size_t)NI;
            if (c == 0 && t == 0) {
                for (int64_t f = 0; f < width; f++) {
                    float w = wt[f];
                    for (int q = 0; q < NI; q++)
                        w = w * fc[q];
                    acc[f] = (ACC)w * e[f];
                }
                continue;
            }
            for (int64_t f = 0; f < width; f++) {
                float w = wt[f];
                for (int q = 0; q < NI; q++)
                    w = w * fc[q];
                ACC p = (ACC)w * e[f];
                acc[f] = NAME(CAT(first_nan_add, SUFFIX))(acc[f], p);
            }
        }
    }
}
