/* Integer, logic, shift, comparison and selection: the compute step of the native engine (ops/integer.py,
 * ops/comparison.py, ops/data_movement.py mov; PTX ISA 9.7.1, 9.7.2, 9.7.6, 9.7.8, 9.7.9.1).
 *
 * Sources arrive as 64-bit containers: the value of the instruction type, sign-extended for .sN types and
 * zero-extended otherwise (.pred: 0/1).  Results are containers too; the write step truncates them to the
 * destination type.  So wrap-around arithmetic needs no width, and signed comparisons are int64 comparisons.  Every
 * loop runs over all n threads of a tile (the write step keeps only the executing ones): nothing here traps.
 */

static inline uint32_t brev32(uint32_t x) {
    x = ((x >> 1) & 0x55555555u) | ((x & 0x55555555u) << 1);
    x = ((x >> 2) & 0x33333333u) | ((x & 0x33333333u) << 2);
    x = ((x >> 4) & 0x0F0F0F0Fu) | ((x & 0x0F0F0F0Fu) << 4);
    return __builtin_bswap32(x);
}

/* bfe / bfi (PTX ISA 9.7.1.19-20): pos and len mod 256 for 32-bit forms, the full 32-bit values for 64-bit forms
 * (ops/integer.py _BF_FIELD_MASK, H100-measured) */
static inline uint64_t bf_mask(int64_t k, int w) { return k >= w ? MASKB(w) : ((1ULL << k) - 1); }

/* the field of bfe/bfi: pos, len, the bits that come from the source (k) and the clamped shift (pc) */
typedef struct { int64_t pos, ln, k, pc; } BitField;

static inline BitField bitfield(uint64_t b, uint64_t c, int w) {
    const uint64_t fm = w == 32 ? 0xFF : 0xFFFFFFFF;
    BitField f;
    f.pos = (int64_t)(b & fm);
    f.ln = (int64_t)(c & fm);
    const int64_t room = w - f.pos > 0 ? w - f.pos : 0;
    f.k = f.ln < room ? f.ln : room;
    f.pc = f.pos < w - 1 ? f.pos : w - 1;
    return f;
}

static inline uint64_t bfe(uint64_t x, uint64_t b, uint64_t c, int w, int sgn) {
    const BitField f = bitfield(b, c, w);
    const uint64_t msk = bf_mask(f.k, w);
    x &= MASKB(w);
    uint64_t r = (x >> f.pc) & msk;
    if (sgn) {
        int64_t sp = f.pos + f.ln - 1;
        sp = sp < w - 1 ? sp : w - 1;
        sp = sp < 0 ? 0 : sp;
        if (((x >> sp) & 1) && f.ln > 0) r |= ~msk;
    }
    return r;
}

static inline uint64_t bfi(uint64_t x, uint64_t y, uint64_t b, uint64_t c, int w) {
    const BitField f = bitfield(b, c, w);
    const uint64_t msk = (bf_mask(f.k, w) << f.pc) & MASKB(w);
    return (y & ~msk) | ((x << f.pc) & msk);
}

static inline uint32_t prmt(uint32_t a, uint32_t b, uint32_t c) {
    uint64_t src = ((uint64_t)b << 32) | a;
    uint32_t r = 0;
    for (int k = 0; k < 4; k++) {
        uint32_t ctl = (c >> (4 * k)) & 0xF;
        uint32_t byte = (uint32_t)(src >> (8 * (ctl & 7))) & 0xFF;
        if (ctl >= 8) byte = (byte & 0x80) ? 0xFF : 0;
        r |= byte << (8 * k);
    }
    return r;
}

static inline uint64_t lop3(uint64_t a, uint64_t b, uint64_t c, int64_t lut) {
    uint64_t r = 0;     /* minterm k = (a, b, c) bits of k: PTX ISA 9.7.8.6 (ta = 0xF0, tb = 0xCC, tc = 0xAA) */
    if (lut & 0x01) r |= ~a & ~b & ~c;
    if (lut & 0x02) r |= ~a & ~b & c;
    if (lut & 0x04) r |= ~a & b & ~c;
    if (lut & 0x08) r |= ~a & b & c;
    if (lut & 0x10) r |= a & ~b & ~c;
    if (lut & 0x20) r |= a & ~b & c;
    if (lut & 0x40) r |= a & b & ~c;
    if (lut & 0x80) r |= a & b & c;
    return r;
}

static inline int64_t msb64(uint64_t x) { return x ? 63 - (int64_t)__builtin_clzll(x) : -1; }

/* the integer-family opcodes: see engine.c's OP_ list; w = operand width (o->x0), sg = signed (o->x1) */
static int alu(const Op *o, int64_t n, uint64_t *const *S, uint64_t *const *V) {
    const uint64_t *A = S[0], *B = S[1], *C = S[2], *D = S[3];
    uint64_t *R0 = V[0];
    const int w = (int)o->x0, sg = (int)o->x1;
    switch (o->op) {
    case OP_MOV: FOR R0[t] = A[t]; return 0;
    case OP_ADD: FOR R0[t] = A[t] + B[t]; return 0;
    case OP_SUB: FOR R0[t] = A[t] - B[t]; return 0;
    case OP_ADD_SAT: case OP_SUB_SAT: {     /* .sat (32-bit): the exact result clamped to the type */
        int64_t lo = sg ? INT32_MIN : 0, hi = sg ? INT32_MAX : (int64_t)UINT32_MAX;
        int neg = o->op == OP_SUB_SAT;
        FOR { int64_t r = neg ? (int64_t)A[t] - (int64_t)B[t] : (int64_t)A[t] + (int64_t)B[t];
              R0[t] = (uint64_t)(r < lo ? lo : (r > hi ? hi : r)); }
        return 0; }
    case OP_MUL_LO: FOR R0[t] = A[t] * B[t]; return 0;
    case OP_MAD_LO: FOR R0[t] = A[t] * B[t] + C[t]; return 0;
    case OP_MUL_HI: case OP_MAD_HI: case OP_MAD_HI_SAT: {
        int mad = o->op != OP_MUL_HI;
        if (w < 64) {
            if (sg) FOR R0[t] = (uint64_t)(((int64_t)A[t] * (int64_t)B[t]) >> w);
            else FOR R0[t] = (A[t] * B[t]) >> w;
        } else if (sg) {
            FOR R0[t] = (uint64_t)(((__int128)(int64_t)A[t] * (__int128)(int64_t)B[t]) >> 64);
        } else {
            FOR R0[t] = (uint64_t)(((unsigned __int128)A[t] * B[t]) >> 64);
        }
        if (o->op == OP_MAD_HI_SAT) {       /* mad.hi.sat.s32: the exact high half + c, clamped */
            FOR { int64_t r = (int64_t)SX(R0[t], 32) + (int64_t)C[t];
                  R0[t] = (uint64_t)(r < INT32_MIN ? INT32_MIN : (r > INT32_MAX ? INT32_MAX : r)); }
        } else if (mad) {
            FOR R0[t] += C[t];
        }
        return 0; }
    case OP_DIV: case OP_REM: {     /* truncating; a zero divisor gives all ones (ops/integer.py build_divrem) */
        int rem = o->op == OP_REM;
        FOR {
            uint64_t a = A[t] & MASKB(w), b = B[t] & MASKB(w);
            int na = 0, nb = 0;
            if (sg) {
                na = (int64_t)A[t] < 0; nb = (int64_t)B[t] < 0;
                a = (na ? 0 - A[t] : A[t]) & MASKB(w);
                b = (nb ? 0 - B[t] : B[t]) & MASKB(w);
            }
            uint64_t q = b ? (rem ? a % b : a / b) : 0;
            if (sg && (rem ? na : (na != nb))) q = 0 - q;
            R0[t] = b ? q : ~0ULL;
        }
        return 0; }
    case OP_ABS: FOR R0[t] = (int64_t)A[t] < 0 ? 0 - A[t] : A[t]; return 0;
    case OP_NEG: FOR R0[t] = 0 - A[t]; return 0;
    case OP_MIN: case OP_MAX: case OP_MAX_RELU: case OP_MIN_RELU: {
        int mx = o->op == OP_MAX || o->op == OP_MAX_RELU;
        if (sg) FOR { int64_t a = (int64_t)A[t], b = (int64_t)B[t]; R0[t] = (uint64_t)(mx ? (a > b ? a : b) : (a < b ? a : b)); }
        else FOR R0[t] = mx ? (A[t] > B[t] ? A[t] : B[t]) : (A[t] < B[t] ? A[t] : B[t]);
        if (o->op == OP_MAX_RELU || o->op == OP_MIN_RELU) FOR R0[t] = (int64_t)R0[t] > 0 ? R0[t] : 0;
        return 0; }
    case OP_POPC: FOR R0[t] = (uint64_t)__builtin_popcountll(A[t] & MASKB(w)); return 0;
    case OP_CLZ: FOR R0[t] = (uint64_t)(w - 1 - msb64(A[t] & MASKB(w))); return 0;
    case OP_BFIND: {            /* o->sub: .shiftamt */
        FOR { uint64_t x = sg && (int64_t)A[t] < 0 ? ~A[t] : A[t];
              int64_t p = msb64(x & MASKB(w));
              if (o->sub && p >= 0) p = w - 1 - p;
              R0[t] = (uint64_t)(uint32_t)p; }
        return 0; }
    case OP_BREV:
        if (w == 32) FOR R0[t] = brev32((uint32_t)A[t]);
        else FOR R0[t] = ((uint64_t)brev32((uint32_t)A[t]) << 32) | brev32((uint32_t)(A[t] >> 32));
        return 0;
    case OP_BFE: FOR R0[t] = bfe(A[t], B[t], C[t], w, sg); return 0;
    case OP_BFI: FOR R0[t] = bfi(A[t], B[t], C[t], D[t], w); return 0;
    case OP_DP4A: {             /* o->sub: bit 0 a signed, bit 1 b signed, bit 2 dp2a, bit 3 .hi */
        int as = o->sub & 1, bs = (o->sub >> 1) & 1, two = (o->sub >> 2) & 1, hi = (o->sub >> 3) & 1;
        FOR {
            int64_t s = (int64_t)C[t];
            uint32_t a = (uint32_t)A[t], b = (uint32_t)B[t];
            for (int k = 0; k < (two ? 2 : 4); k++) {
                int64_t x = two ? (as ? (int64_t)(int16_t)(a >> (16 * k)) : (int64_t)(uint16_t)(a >> (16 * k)))
                                : (as ? (int64_t)(int8_t)(a >> (8 * k)) : (int64_t)(uint8_t)(a >> (8 * k)));
                int sh = 8 * (two ? (hi ? 2 : 0) + k : k);
                int64_t y = bs ? (int64_t)(int8_t)(b >> sh) : (int64_t)(uint8_t)(b >> sh);
                s += x * y;
            }
            R0[t] = (uint64_t)(uint32_t)s;
        }
        return 0; }
    case OP_AND: FOR R0[t] = A[t] & B[t]; return 0;
    case OP_OR: FOR R0[t] = A[t] | B[t]; return 0;
    case OP_XOR: FOR R0[t] = A[t] ^ B[t]; return 0;
    case OP_NOT: if (w == 1) FOR R0[t] = !A[t]; else FOR R0[t] = ~A[t]; return 0;
    case OP_CNOT: FOR R0[t] = (A[t] & MASKB(w)) == 0; return 0;
    case OP_LOP3: FOR R0[t] = lop3(A[t], B[t], C[t], o->sub); return 0;
    case OP_SHF: {              /* o->sub: bit 0 left, bit 1 clamp */
        int left = o->sub & 1, clamp = (o->sub >> 1) & 1;
        FOR { uint64_t s = C[t] & 0xFFFFFFFF, n = clamp ? (s < 32 ? s : 32) : (s & 31);
              uint64_t v = ((B[t] & 0xFFFFFFFF) << 32) | (A[t] & 0xFFFFFFFF);
              R0[t] = left ? (v << n) >> 32 : v >> n; }
        return 0; }
    case OP_SHL: FOR { uint64_t s = B[t] & 0xFFFFFFFF; R0[t] = s >= (uint64_t)w ? 0 : A[t] << s; } return 0;
    case OP_SHR:
        if (sg) FOR { uint64_t s = B[t] & 0xFFFFFFFF; R0[t] = (uint64_t)((int64_t)A[t] >> (s < (uint64_t)w - 1 ? s : (uint64_t)w - 1)); }
        else FOR { uint64_t s = B[t] & 0xFFFFFFFF; R0[t] = s >= (uint64_t)w ? 0 : (A[t] & MASKB(w)) >> s; }
        return 0;
    case OP_PRMT: FOR R0[t] = prmt((uint32_t)A[t], (uint32_t)B[t], (uint32_t)C[t]); return 0;
    case OP_SELP: FOR R0[t] = C[t] ? A[t] : B[t]; return 0;
    case OP_PACK: {             /* mov.bN {a, b, ...}: element k at bit k*w (sources zero-extended) */
        FOR R0[t] = 0;
        for (int64_t k = 0; k < o->ns; k++) { const uint64_t *X = S[k]; FOR R0[t] |= (X[t] & MASKB(w)) << (k * w); }
        return 0; }
    case OP_UNPACK:
        for (int64_t k = 0; k < o->nd; k++) { uint64_t *Y = V[k]; FOR Y[t] = A[t] >> (k * w); }
        return 0;
    case OP_CLAMP:              /* cvt.sat between integer types: clamp a to [lo, hi] (o->sub: signed source) */
        if (o->sub) FOR { int64_t a = (int64_t)A[t], lo = (int64_t)B[t], hi = (int64_t)C[t];
                          R0[t] = (uint64_t)(a < lo ? lo : (a > hi ? hi : a)); }
        else FOR R0[t] = A[t] < C[t] ? A[t] : C[t];
        return 0;
    default:
        return 1;
    }
}
