/* The float-accumulated blend in vector lanes (lanes.h): VL outputs at a time, each the sum
 * of linear_sum.h in its order (corners of the outer axes innermost first, then the row
 * taps; each term's weight the float32 product of its row weight and its outer weights,
 * innermost first; the sum from the first term, left to right, the running sum the first
 * operand of every add). No output's sum is split or reordered: the lanes are different
 * outputs. Included by linear_isa.h for each instruction set that has lanes.
 *
 * Four ways to save work, none of which changes a result's bits:
 * - Where the row weights repeat every VL elements (integer scales 1, 2, 4, 8 on the row
 *   axis, blocks that divide VL; periodic_end), each term's weight vector is made once per
 *   row piece and kept in registers: the same products of the same values.
 * - With streaming stores the whole cache lines of a row are streamed from the registers.
 * - An identity block (the channels of an (H, W, C) image, which ORT's rank-3 kernel
 *   interpolates at scale 1: channel c blends c and c + 1 at weights 1 and 0, the last one
 *   itself twice at 0.5 and 0.5) is expanded like a copied block; see VecRow.identity.
 * - A row that falls on an input row along an outer axis leaves out the corners of weight +0
 *   there (VecRow.corner_of; ID 4 + k for a pair whose first row leaves out one more axis),
 *   where that changes no bit (Blend.collapse in linear_blend.h).
 */

/* One vector of outputs at f in each of R output rows that read the same corner rows E (R
 * is 1, or 2 for a pair: the terms' values are loaded once for both, each row weights them
 * with its own outer weights). `wc`: the terms' weight vectors of each row (periodic rows,
 * row q's at q * 16), or NULL: made here from the row weights W and each row's outer
 * weights `fv` (row q's at q * 24). ID 1: the identity block's fast sum (each term is added
 * a second time in the last channel's lanes, where its other tap is the same element at the
 * same weight; elsewhere -0 is added, which changes nothing). ID 3: the identity block where
 * every product and sum is exact (see Blend.exact_sums in linear.c): the last channel's sum
 * of its own terms, doubled, is the same value. ID 4 + k (a pair): the first row falls on an
 * input row along axis k (bit k of a corner), where the second does not: its sum leaves out
 * the corners of that axis's high tap (weight +0; see Blend.collapse in linear_blend.h), in
 * the order of the others. */
static inline __attribute__((always_inline)) void NAME(vec_at)(
    int64_t f, const int R, const int NI, const int T, const int ID, const VF *wc,
    const VF *fv, const float *const *W, float *const *E, int64_t step, const float *last,
    VF negzero, VF *sums)
{
    VF s[2] = {negzero, negzero}, mask = negzero;
    if (ID == 1 || ID == 3)
        mask = V_LOAD(last + f);
    for (int c = 0; c < (1 << NI); c++)
        for (int t = 0; t < T; t++) {
            VF e = V_LOAD(E[c] + t * step + f);
            /* a pair's weights made once (wc) for more than 4 terms do not fit in the
             * registers: then one load of the values for both rows, not one folded into
             * each multiply (beside a load of the weight) */
            if (R == 2 && wc && (1 << NI) * T > 4)
                __asm__("" : "+x"(e));
            VF wrow = wc ? negzero : V_LOAD(W[t] + f);
            for (int q = 0; q < R; q++) {
                if (ID >= 4 && q == 0 && ((c >> (ID - 4)) & 1))
                    continue;
                VF w;
                if (wc) {
                    w = wc[q * 16 + c * T + t];
                } else {
                    w = wrow;
                    for (int i = 0; i < NI; i++)
                        w = V_MUL(w, fv[q * 24 + c * NI + i]);
                }
                VF p = V_MUL(w, e);
                s[q] = c == 0 && t == 0 ? p : NAME(v_add_first)(s[q], p);
                if (ID == 1)
                    s[q] = NAME(v_add_first)(s[q], V_SEL(mask, p, negzero));
            }
        }
    for (int q = 0; q < R; q++)
        sums[q] = ID == 3 ? NAME(v_add_first)(s[q], V_AND(s[q], mask)) : s[q];
}

/* The identity block's exact sum, for rows whose values the fast one does not cover (see
 * VecRow.identity): every term of ORT's sum, the other channel tap's value read from the
 * next channel (d elements on) or, in the last channel, from the same element, at weight
 * 0 (its weight, +0, times the outer weights) or the same weight. */
static inline __attribute__((always_inline)) VF NAME(vec_exact_at)(
    int64_t f, int NI, int T, const VF *fv, const float *const *W, float *const *E,
    int64_t step, const float *last, int64_t d, VF negzero)
{
    VF s = negzero, mask = V_LOAD(last + f);
    for (int c = 0; c < (1 << NI); c++)
        for (int t = 0; t < T; t++) {
            VF w = V_LOAD(W[t] + f);
            for (int q = 0; q < NI; q++)
                w = V_MUL(w, fv[c * NI + q]);
            const float *e = E[c] + t * step + f;
            VF lo = V_LOAD(e);
            VF p = V_MUL(w, lo);
            s = c == 0 && t == 0 ? p : NAME(v_add_first)(s, p);
            VF hi = V_SEL(mask, lo, V_LOAD(e + d));
            s = NAME(v_add_first)(s, V_MUL(V_AND(w, mask), hi));
        }
    return s;
}

static inline __attribute__((always_inline)) void NAME(vec_put)(float *to, VF v, const int st)
{
    if (st)
        V_STREAM(to, v);
    else
        V_STORE(to, v);
}

/* Outputs of R rows from f, a vector at a time while the vector starts at or before `end`;
 * `wc` as in vec_at. Several vectors of each row at a time first: the loop's own
 * instructions are shared by more outputs, and a streamed row is written a whole cache
 * line (16 floats) at a time, the first row's line, then the second's (alternating vectors
 * of two rows leave the write-combining buffers partial lines to flush, which costs
 * memory-bound rows more than the pair saves). Returns the first output not written. */
static inline __attribute__((always_inline)) int64_t NAME(vec_run)(
    int64_t f, int64_t end, const int R, const int NI, const int T, const int ID, const int st,
    const VF *wc, const VF *fv, const float *const *W, float *const *E, int64_t step,
    const float *last, VF negzero, float *const *out, int64_t origin)
{
    enum { U = 16 / VL > 2 ? 16 / VL : 2 };
    /* a pair's sums and weights fill the registers at one vector per row */
    const int u_n = st ? 16 / VL : R == 2 ? 1 : 2;
    VF s[2];
    for (; f + (u_n - 1) * VL <= end; f += u_n * VL) {
        VF line[2][U];
        for (int u = 0; u < u_n; u++) {
            NAME(vec_at)(f + u * VL, R, NI, T, ID, wc, fv, W, E, step, last, negzero, s);
            for (int q = 0; q < R; q++)
                line[q][u] = s[q];
        }
        for (int q = 0; q < R; q++)
            for (int u = 0; u < u_n; u++)
                NAME(vec_put)(out[q] + (f - origin) + u * VL, line[q][u], st);
    }
    for (; f <= end; f += VL) {
        NAME(vec_at)(f, R, NI, T, ID, wc, fv, W, E, step, last, negzero, s);
        for (int q = 0; q < R; q++)
            NAME(vec_put)(out[q] + (f - origin), s[q], st);
    }
    return f;
}

/* What every range of a row's sum reads, made once per row: the corner rows' tables and
 * each row's outer weights as vectors (vec_piece). */
typedef struct {
    float *E[8];
    const float *W[2];
    int64_t step;
    VF fv[48];
} NAME(VecSetup);

/* Outputs [a, b) of R rows (b - a >= VL, or a vector ending at b when fewer remain: outputs
 * computed twice are the same values), output f of row q at to[q] + (f - origin). With
 * `st`, each row's to + (a - origin) is aligned to a cache line and b - a a multiple of 16.
 * The pointers are copied to locals: the compiler then keeps them in registers (a store to
 * the output could, for it, change what a pointer points to). ID 2 (the identity block's
 * exact sum) is for one row. */
static inline __attribute__((always_inline)) void NAME(vec_range)(
    const VecRow *r, const NAME(VecSetup) *setup, int64_t a, int64_t b, const int R,
    const int NI, const int T, const int ID, const int st, float *const *to, int64_t origin)
{
    VF wc[32], s[2];
    const VF *fv = setup->fv;
    float *E[8];
    const float *W[2] = {setup->W[0], setup->W[1]};
    float *out[2] = {to[0], R == 2 ? to[1] : NULL};
    for (int c = 0; c < (1 << NI); c++)
        E[c] = setup->E[c];
    const int64_t step = setup->step;
    const VF negzero = V_SET1(-0.0f);
    const float *last = r->last;
    int64_t f = a;
    const int64_t b_last = b - VL; /* the last vector that fits starts here */
    if (ID == 2) {
        for (; f <= b_last; f += VL)
            NAME(vec_put)(out[0] + (f - origin),
                          NAME(vec_exact_at)(f, NI, T, fv, W, E, step, last, r->d, negzero), st);
        if (f < b)
            V_STORE(out[0] + (b - VL - origin),
                    NAME(vec_exact_at)(b - VL, NI, T, fv, W, E, step, last, r->d, negzero));
        return;
    }
    if (r->periodic_end - a >= VL) {
        for (int q = 0; q < R; q++)
            for (int c = 0; c < (1 << NI); c++)
                for (int t = 0; t < T; t++) {
                    VF w = V_LOAD(W[t] + a);
                    for (int i = 0; i < NI; i++)
                        w = V_MUL(w, fv[q * 24 + c * NI + i]);
                    wc[q * 16 + c * T + t] = w;
                }
        const int64_t end = (r->periodic_end < b ? r->periodic_end : b) - VL;
        f = NAME(vec_run)(f, end, R, NI, T, ID, st, wc, fv, W, E, step, last, negzero, out,
                          origin);
    }
    f = NAME(vec_run)(f, b_last, R, NI, T, ID, st, NULL, fv, W, E, step, last, negzero, out,
                      origin);
    if (f < b) {
        NAME(vec_at)(b - VL, R, NI, T, ID, NULL, fv, W, E, step, last, negzero, s);
        for (int q = 0; q < R; q++)
            V_STORE(out[q] + (b - VL - origin), s[q]);
    }
}

/* The row's outputs (R rows'): with streaming stores (`streamed`, body > 0), the body's
 * whole cache lines streamed from the registers, and the `head` outputs before them and
 * those after the `body` (a multiple of 16 from there), the parts of lines the row shares
 * with its neighbours, made in a buffer and streamed from there (stream_words: why not
 * ordinary stores; a vector stored over the row's first or last streamed line would also
 * wait for it to reach memory); else every output an ordinary store. The tables every
 * range reads are made once. */
static inline __attribute__((always_inline)) void NAME(vec_piece)(
    const VecRow *r, int64_t head, int64_t body, const int R, const int NI, const int T,
    const int ID, const int streamed)
{
    NAME(VecSetup) setup;
    setup.W[0] = r->W[0];
    setup.W[1] = r->W[T - 1];
    float *out[2] = {r->out, r->out2};
    /* corner c's taps lie `step` elements apart in its expanded row (linear_cache.h): one
     * pointer per corner leaves the registers to the weights */
    /* the kept corners (Blend.collapse; every corner for a pair of rows that both sum
     * every corner) */
    const int every = R == 2 && ID < 4;
    for (int c = 0; c < (1 << NI); c++)
        setup.E[c] = (float *)r->E[(every ? c : r->corner_of[c]) * T];
    setup.step = T == 2 ? (float *)r->E[1] - (float *)r->E[0] : 0;
    for (int q = 0; q < R; q++)
        for (int c = 0; c < (1 << NI); c++)
            for (int i = 0; i < NI; i++)
                setup.fv[q * 24 + c * NI + i] = V_SET1(
                    every ? (q ? r->F2 : r->F)[c * NI + i]
                          : (q ? r->F2 : r->F)[r->corner_of[c] * r->n_full + r->axis_of[i]]);
    const int64_t width = r->width;
    if (!streamed) {
        NAME(vec_range)(r, &setup, 0, width, R, NI, T, ID, 0, out, 0);
        return;
    }
    /* a part's outputs from part[q] + VL on; the vector that ends a row may start up to
     * VL - 1 outputs before the part */
    float part[2][VL + 16 + VL];
    float *to_part[2] = {part[0] + VL, part[1] + VL};
    if (head) {
        NAME(vec_range)(r, &setup, 0, head < VL ? VL : head, R, NI, T, ID, 0, to_part, 0);
        for (int q = 0; q < R; q++)
            stream_words((char *)out[q], (const char *)to_part[q],
                         (size_t)head * sizeof(float));
    }
    NAME(vec_range)(r, &setup, head, head + body, R, NI, T, ID, 1, out, 0);
    const int64_t rest = head + body;
    if (rest < width) {
        NAME(vec_range)(r, &setup, rest, width, R, NI, T, ID, 0, to_part, rest);
        for (int q = 0; q < R; q++)
            stream_words((char *)(out[q] + rest), (const char *)to_part[q],
                         (size_t)(width - rest) * sizeof(float));
    }
}

typedef void (*NAME(vec_piece_fn))(const VecRow *r, int64_t head, int64_t body);

/* One function per count of rows, outer axes and row taps, and kind of sum: the term loops
 * unroll and the weights stay in registers. Streamed rows (body > 0) have functions of
 * their own (vec_streamed_*): their buffer and stores in the same function cost the
 * ordinary rows' loops registers (2.5% more instructions for (H, W, 3) images and
 * trilinear, which are never streamed). */
#define DEFINE_VEC_PIECE(R, NI, T, ID)                                                       \
    static void NAME(vec_piece_##R##_##NI##_##T##_##ID)(const VecRow *r, int64_t head,       \
                                                        int64_t body)                        \
    {                                                                                        \
        (void)head;                                                                          \
        (void)body;                                                                          \
        NAME(vec_piece)(r, 0, 0, R, NI, T, ID, 0);                                           \
    }                                                                                        \
    static void NAME(vec_streamed_##R##_##NI##_##T##_##ID)(const VecRow *r, int64_t head,    \
                                                           int64_t body)                     \
    {                                                                                        \
        NAME(vec_piece)(r, head, body, R, NI, T, ID, 1);                                     \
    }
#define DEFINE_VEC_PIECES(NI, T)                                                             \
    DEFINE_VEC_PIECE(1, NI, T, 0) DEFINE_VEC_PIECE(1, NI, T, 1) DEFINE_VEC_PIECE(1, NI, T, 3) \
    DEFINE_VEC_PIECE(2, NI, T, 0) DEFINE_VEC_PIECE(2, NI, T, 1) DEFINE_VEC_PIECE(2, NI, T, 3)
DEFINE_VEC_PIECES(0, 1)
DEFINE_VEC_PIECES(0, 2)
DEFINE_VEC_PIECES(1, 1)
DEFINE_VEC_PIECES(1, 2)
DEFINE_VEC_PIECES(2, 1)
DEFINE_VEC_PIECES(2, 2)
DEFINE_VEC_PIECES(3, 1)
DEFINE_VEC_PIECES(3, 2)

/* Pairs whose first row leaves out the corners of one more axis (ID 4 + that axis, in the
 * kept corners' axes): every other row of an interpolated outer axis at x2 beside the next */
DEFINE_VEC_PIECE(2, 1, 1, 4) DEFINE_VEC_PIECE(2, 1, 2, 4)
DEFINE_VEC_PIECE(2, 2, 1, 4) DEFINE_VEC_PIECE(2, 2, 1, 5)
DEFINE_VEC_PIECE(2, 2, 2, 4) DEFINE_VEC_PIECE(2, 2, 2, 5)
DEFINE_VEC_PIECE(2, 3, 1, 4) DEFINE_VEC_PIECE(2, 3, 1, 5) DEFINE_VEC_PIECE(2, 3, 1, 6)
DEFINE_VEC_PIECE(2, 3, 2, 4) DEFINE_VEC_PIECE(2, 3, 2, 5) DEFINE_VEC_PIECE(2, 3, 2, 6)

/* The identity block's exact sum, rare (rows with values the fast sum does not cover): one
 * function for every count of axes and taps, one row at a time, streamed or not. */
static void NAME(vec_piece_exact)(const VecRow *r, int64_t head, int64_t body)
{
    NAME(vec_piece)(r, head, body, 1, r->n_interp, r->taps, 2, body > 0);
}

/* K: vec_piece (ordinary stores) or vec_streamed */
#define VEC_PIECES(K, R, NI, T)                                                           \
    {NAME(K##_##R##_##NI##_##T##_0), NAME(K##_##R##_##NI##_##T##_1),                      \
     NAME(K##_##R##_##NI##_##T##_3)}
#define VEC_PIECES_NI(K, R, NI) {VEC_PIECES(K, R, NI, 1), VEC_PIECES(K, R, NI, 2)}
#define VEC_PIECES_R(K, R)                                                                \
    {VEC_PIECES_NI(K, R, 0), VEC_PIECES_NI(K, R, 1), VEC_PIECES_NI(K, R, 2),              \
     VEC_PIECES_NI(K, R, 3)}
/* [streamed][rows - 1][outer axes][taps - 1][identity: 0, 1, or 3 at 2 (2 is
 * vec_piece_exact)] */
static const NAME(vec_piece_fn) NAME(vec_pieces)[2][2][4][2][3] = {
    {VEC_PIECES_R(vec_piece, 1), VEC_PIECES_R(vec_piece, 2)},
    {VEC_PIECES_R(vec_streamed, 1), VEC_PIECES_R(vec_streamed, 2)},
};
#define VEC_PIECES_NESTED(K)                                                              \
    {{{NAME(K##_2_1_1_4), NAME(K##_2_1_2_4)}, {NULL, NULL}, {NULL, NULL}},                \
     {{NAME(K##_2_2_1_4), NAME(K##_2_2_2_4)}, {NAME(K##_2_2_1_5), NAME(K##_2_2_2_5)},     \
      {NULL, NULL}},                                                                      \
     {{NAME(K##_2_3_1_4), NAME(K##_2_3_2_4)}, {NAME(K##_2_3_1_5), NAME(K##_2_3_2_5)},     \
      {NAME(K##_2_3_1_6), NAME(K##_2_3_2_6)}}}
/* [streamed][outer axes - 1][the first row's axis][taps - 1] */
static const NAME(vec_piece_fn) NAME(vec_pieces_nested)[2][3][3][2] = {
    VEC_PIECES_NESTED(vec_piece),
    VEC_PIECES_NESTED(vec_streamed),
};
#undef VEC_PIECES_NESTED
#undef VEC_PIECES_R
#undef VEC_PIECES_NI
#undef VEC_PIECES
#undef DEFINE_VEC_PIECES
#undef DEFINE_VEC_PIECE

/* The row's sum into r->out (and with r->pair, the second row's into r->out2); 0 where the
 * vector loops do not take it (fewer than VL outputs, more than 3 outer axes or 2 row taps:
 * linear_sum.h then does). With streaming stores and at least one whole cache line in the
 * row, every output is streamed: the whole lines a vector at a time (a pair's rows lie
 * alike in their lines), the parts at either end from a buffer, all in one call of the
 * piece (vec_piece). A row without a whole line of its own (body 0) is stored the ordinary
 * way: it shares every line it touches with its neighbours. */
static int NAME(vec_sum_row)(const VecRow *r)
{
    const int NI = r->n_interp, T = r->taps;
    if (r->width < VL || NI > 3 || T < 1 || T > 2)
        return 0;
    if (r->nested >= 0 && (NI < 1 || r->nested >= NI || r->identity))
        return 0;
    const int64_t width = r->width;
    int64_t head = 0, body = 0;
    if (r->stream) {
        head = (int64_t)(((64 - ((uintptr_t)r->out & 63)) & 63) / sizeof(float));
        head = head < width ? head : width;
        body = (width - head) / 16 * 16;
    }
    const int streamed = body > 0;
    NAME(vec_piece_fn) piece = r->identity == 2 ? NAME(vec_piece_exact)
        : r->nested >= 0 ? NAME(vec_pieces_nested)[streamed][NI - 1][r->nested][T - 1]
        : NAME(vec_pieces)[streamed][r->pair][NI][T - 1][r->identity == 3 ? 2 : r->identity];
    piece(r, head, body);
    return 1;
}
