/* Fused loops for the commonest instruction shapes: every operand a register whose storage is exactly the
 * instruction type's width (or an immediate), 32- or 64-bit, so no conversion is needed and one loop reads the source
 * registers and writes the destination, vectorizable (ptxlab/emu's register arrays are contiguous).  Same results as
 * the general path (fetch / compute / store_dst), which runs everything else; the differential test covers both.
 */

/* a source as a typed pointer for the tile: the register itself, or the immediate spread over buf */
#define FAST_SRC(UT, i_, buf) (KIND(o->s[i_].k) == K_REG ? (const UT *)c->R[o->s[i_].a] + base \
                                : fill_##UT((UT *)(buf), (UT)o->s[i_].a, n))

static inline const uint32_t *fill_uint32_t(uint32_t *b, uint32_t v, int64_t n) { FOR b[t] = v; return b; }
static inline const uint64_t *fill_uint64_t(uint64_t *b, uint64_t v, int64_t n) { FOR b[t] = v; return b; }
static inline const uint8_t *fill_uint8_t(uint8_t *b, uint8_t v, int64_t n) { FOR b[t] = v; return b; }

static inline int plain(const Opnd *x, int w) {          /* a register of exactly w bits read as w bits, or an imm */
    const int kind = KIND(x->k);
    if (kind == K_IMM) return 1;
    return kind == K_REG && SBITS(x->k) == w && TBITS(x->k) == w && !NEGATED(x->k);
}

static inline int plain_pred(const Opnd *x) {
    return KIND(x->k) == K_REG && SBITS(x->k) == 1 && TBITS(x->k) == 1;
}

/* d[t] = EXPR for the executing threads of the tile (all of them: a straight store the compiler vectorizes) */
#define FAST_STORE(UT, d, EXPR) do { UT *d_ = (UT *)c->R[(d).a] + base;                             \
        if (all) FOR d_[t] = (UT)(EXPR); else FOR d_[t] = act[t] ? (UT)(EXPR) : d_[t]; } while (0)

#define FAST_BINOPS(UT)                                                                             \
    switch (o->op) {                                                                                \
    case OP_MOV: FAST_STORE(UT, o->d[0], a[t]); return 1;                                           \
    case OP_ADD: FAST_STORE(UT, o->d[0], a[t] + b[t]); return 1;                                    \
    case OP_SUB: FAST_STORE(UT, o->d[0], a[t] - b[t]); return 1;                                    \
    case OP_MUL_LO: FAST_STORE(UT, o->d[0], a[t] * b[t]); return 1;                                 \
    case OP_AND: FAST_STORE(UT, o->d[0], a[t] & b[t]); return 1;                                    \
    case OP_OR: FAST_STORE(UT, o->d[0], a[t] | b[t]); return 1;                                     \
    case OP_XOR: FAST_STORE(UT, o->d[0], a[t] ^ b[t]); return 1;                                    \
    default: return 0;                                                                              \
    }

/* 1 when the tile was done here, 0 when the general path must do it (nothing written then) */
static int fast_tile(Ctx *c, const Op *o, int64_t base, int64_t n, const uint8_t *act, int all) {
    const int op = (int)o->op;
    const int ns = (int)o->ns, nd = (int)o->nd;
    if (nd != 1 || KIND(o->d[0].k) != K_REG) return 0;
    const int w = TBITS(o->d[0].k);
    if (SBITS(o->d[0].k) != w || (w != 32 && w != 64)) return 0;
    for (int k = 0; k < ns; k++) if (!plain(&o->s[k], w)) return 0;
    if (op == OP_MOV || op == OP_ADD || op == OP_SUB || op == OP_MUL_LO || op == OP_AND || op == OP_OR ||
        op == OP_XOR) {
        if (w == 32) {
            const uint32_t *a = FAST_SRC(uint32_t, 0, c->S[0]);
            const uint32_t *b = ns > 1 ? FAST_SRC(uint32_t, 1, c->S[1]) : a;
            FAST_BINOPS(uint32_t)
        } else {
            const uint64_t *a = FAST_SRC(uint64_t, 0, c->S[0]);
            const uint64_t *b = ns > 1 ? FAST_SRC(uint64_t, 1, c->S[1]) : a;
            FAST_BINOPS(uint64_t)
        }
    }
    if (op == OP_MAD_LO) {
        if (w == 32) {
            const uint32_t *a = FAST_SRC(uint32_t, 0, c->S[0]), *b = FAST_SRC(uint32_t, 1, c->S[1]);
            const uint32_t *cc = FAST_SRC(uint32_t, 2, c->S[2]);
            FAST_STORE(uint32_t, o->d[0], a[t] * b[t] + cc[t]);
        } else {
            const uint64_t *a = FAST_SRC(uint64_t, 0, c->S[0]), *b = FAST_SRC(uint64_t, 1, c->S[1]);
            const uint64_t *cc = FAST_SRC(uint64_t, 2, c->S[2]);
            FAST_STORE(uint64_t, o->d[0], a[t] * b[t] + cc[t]);
        }
        return 1;
    }
    if (w == 32 && (o->x1 & 0xF) == 0 && (op == OP_FADD || op == OP_FSUB || op == OP_FMUL || op == OP_FFMA)) {
        const uint32_t *a = FAST_SRC(uint32_t, 0, c->S[0]), *b = FAST_SRC(uint32_t, 1, c->S[1]);
        if (op == OP_FFMA) {
            const uint32_t *cc = FAST_SRC(uint32_t, 2, c->S[2]);
            FAST_STORE(uint32_t, o->d[0], out32(fmaf(f32_of(a[t]), f32_of(b[t]), f32_of(cc[t])), 0));
        } else if (op == OP_FADD) {
            FAST_STORE(uint32_t, o->d[0], out32(f32_of(a[t]) + f32_of(b[t]), 0));
        } else if (op == OP_FSUB) {
            FAST_STORE(uint32_t, o->d[0], out32(f32_of(a[t]) - f32_of(b[t]), 0));
        } else {
            FAST_STORE(uint32_t, o->d[0], out32(f32_of(a[t]) * f32_of(b[t]), 0));
        }
        return 1;
    }
    return 0;
}

/* shifts (shift amount .u32), setp on integers (no bool op), selp: their own operand shapes */
static int fast_tile_mixed(Ctx *c, const Op *o, int64_t base, int64_t n, const uint8_t *act, int all) {
    const int op = (int)o->op;
    if (op == OP_SHL || op == OP_SHR) {
        const int w = (int)o->x0;
        if ((w != 32 && w != 64) || o->nd != 1 || KIND(o->d[0].k) != K_REG || SBITS(o->d[0].k) != w ||
            TBITS(o->d[0].k) != w || !plain(&o->s[0], w) || !plain(&o->s[1], 32))
            return 0;
        const uint32_t *s = FAST_SRC(uint32_t, 1, c->S[1]);
        const int sg = (int)o->x1;
        if (w == 32) {
            const uint32_t *a = FAST_SRC(uint32_t, 0, c->S[0]);
            if (op == OP_SHL) FAST_STORE(uint32_t, o->d[0], s[t] >= 32 ? 0 : a[t] << s[t]);
            else if (sg) FAST_STORE(uint32_t, o->d[0], (int32_t)a[t] >> (s[t] < 31 ? s[t] : 31));
            else FAST_STORE(uint32_t, o->d[0], s[t] >= 32 ? 0 : a[t] >> s[t]);
        } else {
            const uint64_t *a = FAST_SRC(uint64_t, 0, c->S[0]);
            if (op == OP_SHL) FAST_STORE(uint64_t, o->d[0], s[t] >= 64 ? 0 : a[t] << s[t]);
            else if (sg) FAST_STORE(uint64_t, o->d[0], (int64_t)a[t] >> (s[t] < 63 ? s[t] : 63));
            else FAST_STORE(uint64_t, o->d[0], s[t] >= 64 ? 0 : a[t] >> s[t]);
        }
        return 1;
    }
    if (op == OP_SELP) {
        const int w = TBITS(o->d[0].k);
        if ((w != 32 && w != 64) || KIND(o->d[0].k) != K_REG || SBITS(o->d[0].k) != w || !plain(&o->s[0], w) ||
            !plain(&o->s[1], w) || !plain_pred(&o->s[2]))
            return 0;
        const uint8_t *p = (const uint8_t *)c->R[o->s[2].a] + base;
        const uint8_t pn = (uint8_t)NEGATED(o->s[2].k);
        if (w == 32) {
            const uint32_t *a = FAST_SRC(uint32_t, 0, c->S[0]), *b = FAST_SRC(uint32_t, 1, c->S[1]);
            FAST_STORE(uint32_t, o->d[0], p[t] != pn ? a[t] : b[t]);
        } else {
            const uint64_t *a = FAST_SRC(uint64_t, 0, c->S[0]), *b = FAST_SRC(uint64_t, 1, c->S[1]);
            FAST_STORE(uint64_t, o->d[0], p[t] != pn ? a[t] : b[t]);
        }
        return 1;
    }
    if (op == OP_SETP && o->x0 == 0 && o->nd == 1 && (o->x1 & 0x30) == 0 && KIND(o->d[0].k) == K_REG &&
        SBITS(o->d[0].k) == 1) {
        const int w = TBITS(o->s[0].k);
        if ((w != 32 && w != 64) || !plain(&o->s[0], w) || !plain(&o->s[1], w)) return 0;
        const int cmp = (int)o->sub, sg = (int)((o->x1 >> 6) & 1);
#define SETP_CASES(X, Y)                                                                           \
        switch (cmp) {                                                                              \
        case CMP_EQ: FAST_STORE(uint8_t, o->d[0], X == Y); break;                                   \
        case CMP_NE: FAST_STORE(uint8_t, o->d[0], X != Y); break;                                   \
        case CMP_LT: FAST_STORE(uint8_t, o->d[0], X < Y); break;                                    \
        case CMP_LE: FAST_STORE(uint8_t, o->d[0], X <= Y); break;                                   \
        case CMP_GT: FAST_STORE(uint8_t, o->d[0], X > Y); break;                                    \
        default: FAST_STORE(uint8_t, o->d[0], X >= Y); break;                                       \
        }
        if (w == 32) {
            const uint32_t *a = FAST_SRC(uint32_t, 0, c->S[0]), *b = FAST_SRC(uint32_t, 1, c->S[1]);
            if (sg) SETP_CASES((int32_t)a[t], (int32_t)b[t]) else SETP_CASES(a[t], b[t])
        } else {
            const uint64_t *a = FAST_SRC(uint64_t, 0, c->S[0]), *b = FAST_SRC(uint64_t, 1, c->S[1]);
            if (sg) SETP_CASES((int64_t)a[t], (int64_t)b[t]) else SETP_CASES(a[t], b[t])
        }
#undef SETP_CASES
        return 1;
    }
    return 0;
}
