/* The blend of one output row segment, for one accumulation type (ACC, named SUFFIX):
 *   acc[f] = sum over corners c (outer axes, innermost fastest), then taps t (row axis,
 *            then the block's axis fastest) of ((W[t][f] * F[c][0]) * F[c][1] ...) * E[c][t][f]
 * W is the float32 product of the row and block weights (innermost first), F[c][q] the
 * weight of outer interpolated axis q (innermost first) in corner c. The sum starts from
 * the first term and adds left to right (a NaN sum keeps its payload). Included by
 * linear_isa.h once per accumulation type and instruction set; every variant performs the
 * same operations in the same order.
 */

/* With NI and T constants the term loops unroll and the element loop vectorises. */
static inline __attribute__((always_inline)) void NAME(CAT(sum_fixed, SUFFIX))(
    int64_t width, const int NI, const int T, const float *const *W, const float *F,
    ACC *const *E, ACC *restrict acc)
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
                ACC p = (ACC)w * e_[c * T + t][f];
                v = (c == 0 && t == 0) ? p : NAME(CAT(first_nan_add, SUFFIX))(v, p);
            }
        }
        acc[f] = v;
    }
}

static void NAME(CAT(sum, SUFFIX))(int64_t width, int NI, int T, const float *const *W,
                                   const float *F, void *const *E_, void *acc_)
{
    ACC *const *E = (ACC *const *)E_;
    ACC *restrict acc = (ACC *)acc_;
    switch (NI * 8 + T) {
    case 0 * 8 + 1: NAME(CAT(sum_fixed, SUFFIX))(width, 0, 1, W, F, E, acc); return;
    case 0 * 8 + 2: NAME(CAT(sum_fixed, SUFFIX))(width, 0, 2, W, F, E, acc); return;
    case 0 * 8 + 4: NAME(CAT(sum_fixed, SUFFIX))(width, 0, 4, W, F, E, acc); return;
    case 1 * 8 + 1: NAME(CAT(sum_fixed, SUFFIX))(width, 1, 1, W, F, E, acc); return;
    case 1 * 8 + 2: NAME(CAT(sum_fixed, SUFFIX))(width, 1, 2, W, F, E, acc); return;
    case 1 * 8 + 4: NAME(CAT(sum_fixed, SUFFIX))(width, 1, 4, W, F, E, acc); return;
    case 2 * 8 + 1: NAME(CAT(sum_fixed, SUFFIX))(width, 2, 1, W, F, E, acc); return;
    case 2 * 8 + 2: NAME(CAT(sum_fixed, SUFFIX))(width, 2, 2, W, F, E, acc); return;
    case 2 * 8 + 4: NAME(CAT(sum_fixed, SUFFIX))(width, 2, 4, W, F, E, acc); return;
    case 3 * 8 + 1: NAME(CAT(sum_fixed, SUFFIX))(width, 3, 1, W, F, E, acc); return;
    case 3 * 8 + 2: NAME(CAT(sum_fixed, SUFFIX))(width, 3, 2, W, F, E, acc); return;
    default: break;
    }
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
