/* ptxlab native engine: operand fetch and write, one instruction, and the block driver ptx_run (the native form of
 * machine.Scheduler._run_from).  Compiled once per machine (build.py) and shared by every kernel: a kernel is its
 * table of Op records (translate.py).  ptx_docs/emulator_engines.md describes the design. */
#include "runtime.h"

/* opcodes; translate.py reads this list (names after OP_, in order), so add new ones anywhere before OP_LAST */
enum {
    OP_PY, OP_BRA, OP_EXIT, OP_TRAP,
    OP_MOV, OP_ADD, OP_SUB, OP_ADD_SAT, OP_SUB_SAT, OP_MUL_LO, OP_MAD_LO, OP_MUL_HI, OP_MAD_HI, OP_MAD_HI_SAT,
    OP_DIV, OP_REM, OP_ABS, OP_NEG, OP_MIN, OP_MAX, OP_MIN_RELU, OP_MAX_RELU, OP_POPC, OP_CLZ, OP_BFIND, OP_BREV,
    OP_BFE, OP_BFI, OP_DP4A, OP_AND, OP_OR, OP_XOR, OP_NOT, OP_CNOT, OP_LOP3, OP_SHF, OP_SHL, OP_SHR, OP_PRMT,
    OP_SELP, OP_PACK, OP_UNPACK, OP_CLAMP,
    OP_FADD, OP_FSUB, OP_FMUL, OP_FFMA, OP_FDIV, OP_FRCP, OP_FSQRT, OP_FRSQRT, OP_FNEG, OP_FABS, OP_FMIN, OP_FMAX,
    OP_COPYSIGN, OP_TESTP, OP_SETP,
    OP_LD, OP_ST, OP_LUT,
    OP_LAST
};

#include "alu.h"
#include "fpu.h"
#include "mem.h"
#include "fast.h"

/* the value of operand o for the tile of threads base..base+n, as 64-bit containers (runtime.h) */
static void fetch(const Ctx *c, const Opnd *o, int64_t base, int64_t n, uint64_t *X) {
    const int64_t k = o->k;
    const int tb = TBITS(k), sg = SIGNED(k), sb = SBITS(k);
    switch (KIND(k)) {
    case K_REG: {
        const void *r = c->R[o->a];
        if (sb == 1) {
            const uint8_t *p = (const uint8_t *)r + base;
            if (tb == 1 && NEGATED(k)) FOR X[t] = !p[t];
            else FOR X[t] = p[t];
            return;
        }
        /* the type's value: truncated to the type, or extended from the register by the type's signedness;
           then the container extends it by the same signedness: both are one extension from w = min(sb, tb) */
        const int w = sb < tb ? sb : tb;
        if (tb == 1) {
            switch (sb) {
            case 8: { const uint8_t *p = (const uint8_t *)r + base; FOR X[t] = p[t] != 0; break; }
            case 16: { const uint16_t *p = (const uint16_t *)r + base; FOR X[t] = p[t] != 0; break; }
            case 32: { const uint32_t *p = (const uint32_t *)r + base; FOR X[t] = p[t] != 0; break; }
            default: { const uint64_t *p = (const uint64_t *)r + base; FOR X[t] = p[t] != 0; break; }
            }
            return;
        }
#define LOADS(UT, ST)                                                                             \
        {   const UT *p = (const UT *)r + base;                                                   \
            if (!sg && w == sb) FOR X[t] = p[t];                                                  \
            else if (!sg) { const uint64_t mk = MASKB(w); FOR X[t] = p[t] & mk; }                  \
            else if (w == sb) FOR X[t] = (uint64_t)(int64_t)(ST)p[t];                             \
            else FOR X[t] = SX(p[t], w); }
        switch (sb) {
        case 8: LOADS(uint8_t, int8_t) break;
        case 16: LOADS(uint16_t, int16_t) break;
        case 32: LOADS(uint32_t, int32_t) break;
        default: LOADS(uint64_t, int64_t) break;
        }
#undef LOADS
        return; }
    case K_IMM: case K_ACONST: { const uint64_t v = (uint64_t)o->a; FOR X[t] = v; return; }
    case K_SPEC: { const uint64_t *s = c->spec[o->a] + base; FOR X[t] = ext(s[t], tb, sg); return; }
    case K_CLOCK: { const uint64_t v = ext((uint64_t)c->steps & 0xFFFFFFFFULL, tb, sg); FOR X[t] = v; return; }
    case K_CLOCK64: { const uint64_t v = ext((uint64_t)c->steps, tb, sg); FOR X[t] = v; return; }
    case K_CLOCKHI: { const uint64_t v = ext((uint64_t)c->steps >> 32, tb, sg); FOR X[t] = v; return; }  /* %clock_hi: upper half of %clock64 */
    case K_SYMSH: FOR X[t] = ext(RANKB(t) + (uint64_t)o->a, tb, sg); return;
    case K_AREG: {              /* [reg + offset] (core/isa.py Ctx.address) */
        const void *r = c->R[o->a];
        const uint64_t off = (uint64_t)o->b;
        switch (sb) {
        case 64: { const uint64_t *p = (const uint64_t *)r + base; FOR X[t] = p[t] + off; break; }
        case 32: { const uint32_t *p = (const uint32_t *)r + base; FOR X[t] = (uint32_t)(p[t] + (uint32_t)off); break; }
        default: { const uint16_t *p = (const uint16_t *)r + base; FOR X[t] = (uint32_t)((uint32_t)p[t] + (uint32_t)off); break; }
        }
        return; }
    case K_ASYMSH: FOR X[t] = RANKB(t) + (uint64_t)o->a; return;
    }
}

/* 1 when an operand can only be read by the interpreter (a special register it could not compute) */
static int fetch_refused(const Ctx *c, const Op *o) {
    for (int64_t k = 0; k < o->ns; k++) {
        const int kind = KIND(o->s[k].k);
        if (kind == K_SPEC && !c->spec[o->s[k].a]) return 1;
        if (kind == K_AREG && SBITS(o->s[k].k) != 64 && SBITS(o->s[k].k) != 32 && SBITS(o->s[k].k) != 16) return 1;
    }
    return 0;
}

/* write result vector X to destination o for the executing threads of the tile (all: every thread of it),
   converted to the register's storage (core/types.py to_storage: truncate, or extend by the value type's
   signedness; .pred: nonzero) */
static void store_dst(const Ctx *c, const Opnd *o, int64_t base, int64_t n, const uint64_t *X, const uint8_t *act,
                      int all) {
    const int64_t k = o->k;
    if (KIND(k) != K_REG) return;
    const int tb = TBITS(k), sg = SIGNED(k), sb = SBITS(k);
    void *r = c->R[o->a];
#define STORES(UT, EXPR) { UT *p = (UT *)r + base; if (all) FOR p[t] = (UT)(EXPR); else FORACT p[t] = (UT)(EXPR); }
    if (sb == 1 || tb == 1) {
        const uint64_t mk = MASKB(tb);
        switch (sb) {
        case 1: case 8: STORES(uint8_t, (X[t] & mk) != 0) break;
        case 16: STORES(uint16_t, (X[t] & mk) != 0) break;
        case 32: STORES(uint32_t, (X[t] & mk) != 0) break;
        default: STORES(uint64_t, (X[t] & mk) != 0) break;
        }
        return;
    }
    if (tb >= sb || !sg) {      /* truncation, or zero extension of a narrower unsigned value */
        const uint64_t mk = tb < sb ? MASKB(tb) : ~0ULL;
        switch (sb) {
        case 8: STORES(uint8_t, X[t] & mk) break;
        case 16: STORES(uint16_t, X[t] & mk) break;
        case 32: STORES(uint32_t, X[t] & mk) break;
        default: STORES(uint64_t, X[t] & mk) break;
        }
        return;
    }
    switch (sb) {               /* sign extension of a narrower signed value */
    case 8: STORES(uint8_t, SX(X[t], tb)) break;
    case 16: STORES(uint16_t, SX(X[t], tb)) break;
    case 32: STORES(uint32_t, SX(X[t], tb)) break;
    default: STORES(uint64_t, SX(X[t], tb)) break;
    }
#undef STORES
}

/* the executing threads of the tile (mask and guard); returns how many */
static int64_t active(const Ctx *c, const Op *o, int64_t base, int64_t n, uint8_t *act) {
    const uint8_t *m = c->mask ? c->mask + base : 0;
    int64_t na = 0;
    if (o->guard >= 0) {
        const uint8_t *g = (const uint8_t *)c->R[o->guard] + base;
        const uint8_t gn = (uint8_t)o->gneg;
        if (m) FOR { act[t] = m[t] && g[t] != gn; na += act[t]; }
        else FOR { act[t] = g[t] != gn; na += act[t]; }
    } else if (m) {
        FOR { act[t] = m[t] != 0; na += act[t]; }
    } else {
        memset(act, 1, (size_t)n);
        na = n;
    }
    return na;
}

#include "mem_range.h"

/* one instruction for the executing threads, tile by tile; 1 = the interpreter must run it */
static int exec_op(Ctx *c, const Op *o) {
    const int64_t T = c->T;
    uint8_t *act = c->act;
    if (o->op >= OP_LAST || fetch_refused(c, o)) return 1;
    const int is_mem = o->op == OP_LD || o->op == OP_ST;
    if (is_mem && mem_range(c, o)) return 0;
    if (is_mem) {               /* every executing thread's access is checked before any byte moves */
        for (int64_t base = 0; base < T; base += TILE) {
            const int64_t n = T - base < TILE ? T - base : TILE;
            if (!active(c, o, base, n, act)) continue;
            fetch(c, &o->s[0], base, n, c->S[0]);
            if (mem_check(c, o, base, n, c->S[0], act)) return 1;
        }
    }
    for (int64_t base = 0; base < T; base += TILE) {
        const int64_t n = T - base < TILE ? T - base : TILE;
        const int64_t na = active(c, o, base, n, act);
        if (!na) continue;
        if (!is_mem && (fast_tile(c, o, base, n, act, na == n) || fast_tile_mixed(c, o, base, n, act, na == n)))
            continue;
        for (int64_t k = 0; k < o->ns; k++) fetch(c, &o->s[k], base, n, c->S[k]);
        if (is_mem) mem(c, o, base, n, c->S, c->V, act);
        else if (o->op == OP_LUT) {     /* emit_lut.py: the destination's bits for each value of an 8/16-bit source */
            const uint64_t *tb = c->luts[o->x0];
            const uint64_t *a = c->S[0];
            uint64_t *v = c->V[0];
            FOR v[t] = tb[a[t]];
        }
        else if (o->op >= OP_FADD) fpu(o, n, c->S, c->V);
        else alu(o, n, c->S, c->V);
        for (int64_t k = 0; k < o->nd; k++) store_dst(c, &o->d[k], base, n, c->V[k], act, na == n);
    }
    return 0;
}

static void fill_pc(Ctx *c) {
    if (!c->mask) for (int64_t t = 0; t < c->T; t++) c->pc[t] = c->blk;
}

/* the group continues at q: a whole-wave run follows it (returns q), a masked group stops there */
static int64_t go(Ctx *c, int64_t q) {
    if (!c->mask) return q;
    for (int64_t t = 0; t < c->T; t++) if (c->mask[t]) c->pc[t] = q;
    return R_DONE;
}

/* branch / exit / trap (machine.Scheduler._run_from); >= 0: the next block of a whole-wave run */
static int64_t terminator(Ctx *c, const Op *o, int64_t i) {
    const int64_t n = c->T;             /* the loops below run over the whole wave */
    const uint8_t *m = c->mask;
    const uint8_t *g = o->guard >= 0 ? (const uint8_t *)c->R[o->guard] : 0;
    const uint8_t gn = (uint8_t)o->gneg;
    if (o->op == OP_BRA) {
        const int64_t tgt = o->x0;
        if (!g) return go(c, tgt);
        if (!m) {
            int64_t nt = 0;
            FOR nt += g[t] != gn;
            if (nt == n) return tgt;
            if (nt == 0) return i + 1;
            FOR c->pc[t] = g[t] != gn ? tgt : i + 1;
            return R_DONE;
        }
        FOR if (m[t]) c->pc[t] = g[t] != gn ? tgt : i + 1;
        return R_DONE;
    }
    if (o->op == OP_EXIT) {
        fill_pc(c);
        FOR if (!m || m[t]) {
            if (!g || g[t] != gn) c->status[t] = EXITED;
            else c->pc[t] = i + 1;
        }
        return R_DONE;
    }
    c->at = i;
    return R_TRAP;
}

/* the execution log (Ctx.log): the warps holding a thread of the group (all warps for a NULL mask, which the
   scheduler passes only when every thread runs: Recorder.warps_of) */
static void log_group(Ctx *c) {
    const int64_t W = c->T / 32;
    c->ngw = 0;
    for (int64_t w = 0; w < W; w++) {
        int any = !c->mask;
        for (int64_t t = w * 32; !any && t < w * 32 + 32; t++) any = c->mask[t] != 0;
        if (any) c->gw[c->ngw++] = w;
    }
}

/* the warps with an executing thread (mask and guard, read before the instruction writes anything) into c->sel */
static int64_t log_select(Ctx *c, const Op *o) {
    if (o->guard < 0) {
        memcpy(c->sel, c->gw, (size_t)c->ngw * sizeof(int64_t));
        return c->ngw;
    }
    const uint8_t *g = (const uint8_t *)c->R[o->guard];
    const uint8_t gn = (uint8_t)o->gneg;
    int64_t k = 0;
    for (int64_t j = 0; j < c->ngw; j++) {
        const int64_t w = c->gw[j];
        int any = 0;
        for (int64_t t = w * 32; !any && t < w * 32 + 32; t++) any = (!c->mask || c->mask[t]) && g[t] != gn;
        if (any) c->sel[k++] = w;
    }
    return k;
}

/* run from pc p for the group c->mask, as machine.Scheduler._run_from does; prologue = 0 resumes after an
   instruction the interpreter ran (or at a block whose prologue already ran: R_TICK) */
int64_t ptx_run(Ctx *c, int64_t p, int64_t prologue) {
    const Op *ops = c->ops;
    const int64_t *ends = c->ends;
    int64_t r, i = p;
    c->na = c->mask ? 0 : c->T;
    if (c->mask) for (int64_t t = 0; t < c->T; t++) c->na += c->mask[t] != 0;
    if (c->log) log_group(c);
    if (!prologue) goto body;
    for (;;) {
        c->blk = p;
        c->steps++;
        if (c->ti > c->budget) { c->at = p; r = R_WATCHDOG; goto out; }
        if (c->watch && !(c->steps & 63)) { c->at = p; r = R_TICK; goto out; }
        i = p;
    body:
        for (;;) {
            const Op *o = &ops[i];
            if (o->op <= OP_TRAP) {
                if (o->op == OP_PY) { c->at = i; r = R_PY; goto out; }
                r = terminator(c, o, i);
                if (r < 0) goto out;
                p = r;
                break;
            }
            if (c->pyonly[i]) { c->at = i; r = R_PY; goto out; }
            if (c->npend) {
                for (int64_t k = c->roff[i]; k < c->roff[i + 1]; k++)
                    if (c->pend[c->reads[k]]) { c->at = i; r = R_PY; goto out; }
            }
            int64_t nsel = 0;
            if (c->log) {
                if (c->lognmax >= c->logcap) { c->at = i; r = R_FLUSH; goto out; }
                nsel = log_select(c, o);
            }
            if (exec_op(c, o)) { c->at = i; r = R_PY; goto out; }
            if (nsel) {
                for (int64_t k = 0; k < nsel; k++) {
                    const int64_t w = c->sel[k];
                    c->log[w * c->logcap + c->loglen[w]++] = (int32_t)i;
                }
                c->lognmax++;
            }
            c->ti += c->na;
            i++;
            if (i == ends[i - 1]) {         /* fell off the end of the block */
                r = go(c, i);
                if (r < 0) goto out;
                p = r;
                break;
            }
        }
    }
out:
    if (r != R_DONE) fill_pc(c);
    return r;
}
