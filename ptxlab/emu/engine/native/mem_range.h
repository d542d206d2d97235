/* ld / st over a range (PTX ISA 9.7.9.8, 9.7.9.10): the common case of mem.h's checks done once per instruction.
 * Included by engine.c after fetch / store_dst / active. */

/* The range path of ld / st: one pass gathers every executing thread's address (c->addr) and their lowest, highest
 * and OR; when the accesses are all aligned and [lowest, highest + size) lies inside ONE global allocation (or, for
 * shared memory outside a cluster, inside the CTA's shared window), every thread's own check (mem_check) passes, so
 * the access is done without checking thread by thread.  Otherwise it returns 0 having changed nothing and the
 * per-thread path (mem_check, then mem or the interpreter) decides.  Returns 1 when done.  With the global
 * initcheck on, a load still checks each thread's bytes were written (res_global), a store flags them. */
/* the global initcheck of a load: every byte of every executing thread's access was written (res_global) */
static int all_written(Ctx *c, const Op *o, const uint64_t *A, int64_t nb) {
    uint8_t *act = c->act;
    const uint8_t *w = c->gwritten - GLOBAL_BASE;
    for (int64_t base = 0; base < c->T; base += TILE) {
        const int64_t n = c->T - base < TILE ? c->T - base : TILE;
        if (!active(c, o, base, n, act)) continue;
        const uint64_t *a = A + base;
        int bad = 0;
        if (nb == 4) { FORACT { uint32_t v; memcpy(&v, w + a[t], 4); bad |= v != 0x01010101u; } }
        else { FORACT for (int64_t k = 0; k < nb; k++) bad |= w[a[t] + k] != 1; }
        if (bad) return 0;
    }
    return 1;
}

static int mem_range(Ctx *c, const Op *o) {
    const int64_t T = c->T, eb = o->x1, nv = o->sub, nb = eb * nv;
    const int sp = (int)o->x0, store = o->op == OP_ST;
    if ((nb & (nb - 1)) || (sp != SP_GLOBAL && sp != SP_SHARED && sp != SP_GENERIC)) return 0;
    uint8_t *act = c->act;
    uint64_t *A = c->addr;
    uint64_t lo = ~0ULL, hi = 0, orr = 0;
    int64_t nall = 0;
    for (int64_t base = 0; base < T; base += TILE) {
        const int64_t n = T - base < TILE ? T - base : TILE;
        const int64_t na = active(c, o, base, n, act);
        if (!na) continue;
        nall += na;
        fetch(c, &o->s[0], base, n, A + base);
        const uint64_t *a = A + base;
        if (na == n) FOR { lo = a[t] < lo ? a[t] : lo; hi = a[t] > hi ? a[t] : hi; orr |= a[t]; }
        else FORACT { lo = a[t] < lo ? a[t] : lo; hi = a[t] > hi ? a[t] : hi; orr |= a[t]; }
    }
    if (!nall) return 1;
    if (orr & (uint64_t)(nb - 1)) return 0;
    int shared = sp == SP_SHARED;
    uint64_t win = 0;                          /* subtracted from a generic address */
    if (sp == SP_GENERIC) {
        if ((lo >> WIN_SHIFT) != (hi >> WIN_SHIFT)) return 0;
        if ((lo >> WIN_SHIFT) == WIN_SHARED) { shared = 1; win = WIN_SHARED << WIN_SHIFT; }
        else if ((lo >> WIN_SHIFT) != WIN_GLOBAL) return 0;
    }
    uint8_t *gbase = 0;
    if (shared) {              /* res_shared for every thread: own CTA (rank 0 outside a cluster), in bounds */
        if ((c->smem_py & (store ? 2 : 1)) || c->csize != 1) return 0;
        if (hi - win > (uint64_t)c->smem_size || hi - win + (uint64_t)nb > (uint64_t)c->smem_size) return 0;
    } else {                   /* res_global for every thread: one allocation holds them all */
        if (hi - lo > (1ULL << WIN_SHIFT)) return 0;
        const int64_t k = gheap_find(c, (int64_t)(lo - GLOBAL_BASE), (int64_t)(hi - lo) + nb);
        if (k < 0) return 0;
        gbase = c->heap - GLOBAL_BASE;
        /* initcheck.check_global: an allocation the host wrote whole needs no per-byte look-up */
        if (c->gwritten && !store && !c->afull[k] && !all_written(c, o, A, nb)) return 0;
    }
    for (int64_t base = 0; base < T; base += TILE) {
        const int64_t n = T - base < TILE ? T - base : TILE;
        const int64_t na = active(c, o, base, n, act);
        if (!na) continue;
        const uint64_t *a = A + base;
#define PTR(t) (shared ? c->smem + c->cta_of[base + (t)] * c->smem_stride + (a[t] - win) : gbase + a[t])
        if (store) {
            for (int64_t k = 0; k < nv; k++) fetch(c, &o->s[1 + k], base, n, c->S[1 + k]);
            FORACT { for (int64_t k = 0; k < nv; k++) st_elem(PTR(t) + k * eb, c->S[1 + k][t], eb); }
            if (c->gwritten && !shared) { FORACT memset(c->gwritten + (a[t] - GLOBAL_BASE), 1, (size_t)nb); }
        } else {
            if (nv == 1 && !shared && eb == 4) { FORACT c->V[0][t] = ld_elem(gbase + a[t], 4); }
            else if (nv == 1 && !shared && eb == 8) { FORACT c->V[0][t] = ld_elem(gbase + a[t], 8); }
            else { FORACT for (int64_t k = 0; k < nv; k++) c->V[k][t] = ld_elem(PTR(t) + k * eb, eb); }
            for (int64_t k = 0; k < o->nd; k++) store_dst(c, &o->d[k], base, n, c->V[k], act, na == n);
        }
#undef PTR
    }
    return 1;
}
