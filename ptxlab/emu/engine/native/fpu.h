/* Floating point and comparisons: the compute step of the native engine for ops/floating_point.py and
 * ops/comparison.py (PTX ISA 9.7.3, 9.7.6.1-2).  Round-to-nearest forms only (the translator leaves .rz/.rm/.rp,
 * half precision and the transcendental .approx functions to the interpreter).
 *
 * The interpreter computes each result exactly and rounds it once; IEEE binary32/binary64 arithmetic in C (SSE,
 * round to nearest, no contraction: build.py's -ffp-contract=off) is that same correctly rounded result.  Its
 * extra rules are repeated here: NaN results are canonical (f32 0x7FFFFFFF, f64 0x7FFFFFFFFFFFFFFF), .ftz flushes
 * subnormal inputs and results to signed zero (mul.ftz on the exact product), .sat clamps to [+0, 1].
 */

#define F32_NAN 0x7FFFFFFFULL
#define F64_NAN 0x7FFFFFFFFFFFFFFFULL
#define TINY32 1.1754943508222875e-38       /* 2^-126 */

static inline uint64_t ftz32(uint64_t b) { return (b & 0x7F800000ULL) == 0 ? (b & 0x80000000ULL) : (b & 0xFFFFFFFFULL); }
static inline float in32(uint64_t b, int ftz) { return f32_of(ftz ? ftz32(b) : b); }
static inline uint64_t out32(float r, int ftz) {
    uint64_t b = bits_f32(r);
    if (ftz) b = ftz32(b);
    return r != r ? F32_NAN : b;
}
static inline uint64_t out64(double r) { return r != r ? F64_NAN : bits_f64(r); }
static inline uint64_t sat01(uint64_t b) {
    float v = f32_of(b);
    if (v != v || v <= 0.0f) return 0;          /* NaN, negatives and -0 -> +0 */
    return v >= 1.0f ? 0x3F800000ULL : b;
}

/* min/max with -0 < +0; one NaN operand gives the other, both (or any, with .NaN) the canonical NaN */
static inline double fminmax(double x, double y, int mx, int nanp) {
    int xn = x != x, yn = y != y;
    int pick_x = mx ? (x > y || (x == y && !signbit(x))) : (x < y || (x == y && signbit(x)));
    double r = pick_x ? x : y;
    if (nanp) return (xn || yn) ? NAN : r;
    return xn ? y : (yn ? x : r);
}

enum { CMP_EQ, CMP_NE, CMP_LT, CMP_LE, CMP_GT, CMP_GE, CMP_EQU, CMP_NEU, CMP_LTU, CMP_LEU, CMP_GTU, CMP_GEU,
       CMP_NUM, CMP_NAN };

static inline int fcmp(double x, double y, int cmp) {
    int un = x != x || y != y;
    switch (cmp) {
    case CMP_EQ: return x == y;
    case CMP_NE: return x != y && !un;
    case CMP_LT: return x < y;
    case CMP_LE: return x <= y;
    case CMP_GT: return x > y;
    case CMP_GE: return x >= y;
    case CMP_EQU: return x == y || un;
    case CMP_NEU: return x != y;
    case CMP_LTU: return !(x >= y);
    case CMP_LEU: return !(x > y);
    case CMP_GTU: return !(x <= y);
    case CMP_GEU: return !(x < y);
    case CMP_NUM: return !un;
    default: return un;
    }
}

static inline int icmp(uint64_t a, uint64_t b, int sg, int cmp) {
    if (sg) {
        int64_t x = (int64_t)a, y = (int64_t)b;
        switch (cmp) { case CMP_EQ: return x == y; case CMP_NE: return x != y; case CMP_LT: return x < y;
                       case CMP_LE: return x <= y; case CMP_GT: return x > y; default: return x >= y; }
    }
    switch (cmp) { case CMP_EQ: return a == b; case CMP_NE: return a != b; case CMP_LT: return a < b;
                   case CMP_LE: return a <= b; case CMP_GT: return a > b; default: return a >= b; }
}

/* o->x0: 32 or 64 (float width); o->x1: flags (bit 0 .ftz, bit 1 .sat, bit 2 .NaN, bit 3 .approx) */
static int fpu(const Op *o, int64_t n, uint64_t *const *S, uint64_t *const *V) {
    const uint64_t *A = S[0], *B = S[1], *C = S[2];
    uint64_t *R0 = V[0], *R1 = V[1];
    const int f64 = o->x0 == 64, ftz = (int)(o->x1 & 1), sat = (int)((o->x1 >> 1) & 1);
    const int nanp = (int)((o->x1 >> 2) & 1), approx = (int)((o->x1 >> 3) & 1);
    switch (o->op) {
    case OP_FADD: case OP_FSUB: {
        const int sub = o->op == OP_FSUB;
        if (f64) FOR R0[t] = out64(sub ? f64_of(A[t]) - f64_of(B[t]) : f64_of(A[t]) + f64_of(B[t]));
        else FOR { float x = in32(A[t], ftz), y = in32(B[t], ftz); R0[t] = out32(sub ? x - y : x + y, ftz); }
        break; }
    case OP_FMUL:
        if (f64) FOR R0[t] = out64(f64_of(A[t]) * f64_of(B[t]));
        else FOR {
            double p = (double)in32(A[t], ftz) * (double)in32(B[t], ftz);     /* exact */
            if (ftz && fabs(p) < TINY32) R0[t] = signbit(p) ? 0x80000000ULL : 0;   /* flush on the exact product */
            else R0[t] = out32((float)p, ftz);
        }
        break;
    case OP_FFMA:
        if (f64) FOR R0[t] = out64(fma(f64_of(A[t]), f64_of(B[t]), f64_of(C[t])));
        else FOR R0[t] = out32(fmaf(in32(A[t], ftz), in32(B[t], ftz), in32(C[t], ftz)), ftz);
        break;
    case OP_FDIV:
        if (f64) FOR R0[t] = out64(f64_of(A[t]) / f64_of(B[t]));
        else FOR {
            uint64_t r = out32((float)((double)in32(A[t], ftz) / (double)in32(B[t], ftz)), ftz);
            if (approx) {       /* div.approx: 0 for 2^126 < |b| < 2^128 and finite a (ops/floating_point.py) */
                uint64_t yb = B[t] & 0x7FFFFFFFULL;
                float xa = in32(A[t], ftz);
                if (yb > 0x7E800000ULL && yb < 0x7F800000ULL && isfinite(xa)) r = (A[t] ^ B[t]) & 0x80000000ULL;
            }
            R0[t] = r;
        }
        break;
    case OP_FRCP:
        if (f64) FOR R0[t] = out64(1.0 / f64_of(A[t]));
        else FOR R0[t] = out32((float)(1.0 / (double)in32(A[t], ftz)), ftz);
        break;
    case OP_FSQRT:
        if (f64) FOR R0[t] = out64(sqrt(f64_of(A[t])));
        else FOR R0[t] = out32((float)sqrt((double)in32(A[t], ftz)), ftz);
        break;
    case OP_FRSQRT:
        FOR { double x = (double)in32(A[t], ftz);
              R0[t] = out32((float)(x == 0 ? copysign(INFINITY, x) : 1.0 / sqrt(x)), ftz); }
        break;
    case OP_FNEG: case OP_FABS: {
        const int neg = o->op == OP_FNEG;
        if (f64) FOR { uint64_t a = A[t], r = neg ? a ^ 0x8000000000000000ULL : a & 0x7FFFFFFFFFFFFFFFULL;
                       R0[t] = (a & 0x7FFFFFFFFFFFFFFFULL) > 0x7FF0000000000000ULL ? a | (1ULL << 51) : r; }
        else FOR { uint64_t a = ftz ? ftz32(A[t]) : (A[t] & 0xFFFFFFFFULL);
                   uint64_t r = neg ? a ^ 0x80000000ULL : a & 0x7FFFFFFFULL;
                   R0[t] = (a & 0x7FFFFFFFULL) > 0x7F800000ULL ? F32_NAN : r; }
        break; }
    case OP_FMIN: case OP_FMAX: {
        const int mx = o->op == OP_FMAX;
        if (f64) FOR R0[t] = out64(fminmax(f64_of(A[t]), f64_of(B[t]), mx, nanp));
        else FOR R0[t] = out32((float)fminmax(in32(A[t], ftz), in32(B[t], ftz), mx, nanp), 0);
        break; }
    case OP_COPYSIGN: {
        const uint64_t sign = f64 ? 0x8000000000000000ULL : 0x80000000ULL;
        FOR R0[t] = (B[t] & ~sign) | (A[t] & sign);
        break; }
    case OP_TESTP: {            /* o->sub: 0 finite 1 infinite 2 number 3 notanumber 4 normal 5 subnormal */
        const double tiny = f64 ? 2.2250738585072014e-308 : TINY32;
        FOR { double x = f64 ? f64_of(A[t]) : (double)f32_of(A[t]); int p;
              switch (o->sub) { case 0: p = isfinite(x); break; case 1: p = isinf(x); break; case 2: p = x == x; break;
                                case 3: p = x != x; break;
                                case 4: p = isfinite(x) && (fabs(x) >= tiny || (!f64 && x == 0)); break;
                                default: p = x != 0 && fabs(x) < tiny; }
              R0[t] = (uint64_t)p; }
        return 0; }
    case OP_SETP: {             /* o->sub: CMP_*; o->x0: 0 integer, 32/64 float; o->x1 bit 0 .ftz, bits 4-5 boolop,
                                   bit 6 signed integer; S[2]: the boolop's predicate */
        const int cmp = (int)o->sub, bop = (int)((o->x1 >> 4) & 3), sg = (int)((o->x1 >> 6) & 1);
        if (o->x0 == 0) FOR R0[t] = (uint64_t)icmp(A[t], B[t], sg, cmp);
        else if (f64) FOR R0[t] = (uint64_t)fcmp(f64_of(A[t]), f64_of(B[t]), cmp);
        else FOR R0[t] = (uint64_t)fcmp(in32(A[t], ftz), in32(B[t], ftz), cmp);
        switch (bop) {
        case 0: FOR R1[t] = !R0[t]; break;
        case 1: FOR { R1[t] = (!R0[t]) & C[t]; R0[t] &= C[t]; } break;
        case 2: FOR { R1[t] = (!R0[t]) | C[t]; R0[t] |= C[t]; } break;
        default: FOR { R1[t] = (!R0[t]) ^ C[t]; R0[t] ^= C[t]; } break;
        }
        return 0; }
    default:
        return 1;
    }
    if (sat) FOR R0[t] = sat01(R0[t]);
    return 0;
}
