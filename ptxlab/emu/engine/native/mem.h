/* ld / st (ops/data_movement.py; PTX ISA 9.7.9.8, 9.7.9.10): the memory step of the native engine.
 *
 * Like machine.Wave.load / store, every executing thread's access is checked before any byte moves: natural
 * alignment of the whole (vector) access, the state space, bounds, initcheck.  If a single thread fails (or needs
 * what only the interpreter does: a peer CTA's shared memory, the shared-memory initcheck / race / proxy shadows),
 * the instruction goes to the interpreter, which reports the fault exactly as it always does (or performs the
 * access).  o->x0: state space (SP_*), o->x1: element bytes, o->sub: vector length.
 */

/* the check pass, for the tile of threads base..base+n (addresses in A) */
static int mem_check(const Ctx *c, const Op *o, int64_t base, int64_t n, const uint64_t *A, const uint8_t *act) {
    const int64_t nb = o->x1 * o->sub;
    const int sp = (int)o->x0, store = o->op == OP_ST;
    FORACT {
        uint64_t a = A[t];
        if ((a & (uint64_t)(nb - 1)) || !res_space(c, sp, base + t, a, nb, store)) return 1;
    }
    return 0;
}

/* the access, for the tile (after every tile passed mem_check) */
static void mem(const Ctx *c, const Op *o, int64_t base, int64_t n, uint64_t *const *S, uint64_t *const *V,
                const uint8_t *act) {
    const int64_t eb = o->x1, nv = o->sub, nb = eb * nv;
    const int sp = (int)o->x0;
    const uint64_t *A = S[0];
    if (o->op == OP_LD) {
        FORACT {
            const uint8_t *p = res_space(c, sp, base + t, A[t], nb, 0);
            for (int64_t k = 0; k < nv; k++) {
                uint64_t w = 0;
                memcpy(&w, p + k * eb, (size_t)eb);     /* little-endian: the low bytes of w */
                V[k][t] = w;
            }
        }
        return;
    }
    FORACT {
        uint64_t a = A[t];
        uint8_t *p = res_space(c, sp, base + t, a, nb, 1);
        for (int64_t k = 0; k < nv; k++) { uint64_t w = S[1 + k][t]; memcpy(p + k * eb, &w, (size_t)eb); }
        if (c->gwritten && (sp == SP_GLOBAL || (sp == SP_GENERIC && (a >> WIN_SHIFT) == WIN_GLOBAL)))
            memset(c->gwritten + (p - c->heap), 1, (size_t)nb);
    }
}

/* one element of eb bytes (1, 2, 4 or 8) as a little-endian container, and back */
static inline uint64_t ld_elem(const uint8_t *p, int64_t eb) {
    switch (eb) {
    case 1: return *p;
    case 2: { uint16_t v; memcpy(&v, p, 2); return v; }
    case 4: { uint32_t v; memcpy(&v, p, 4); return v; }
    default: { uint64_t v; memcpy(&v, p, 8); return v; }
    }
}

static inline void st_elem(uint8_t *p, uint64_t w, int64_t eb) {
    switch (eb) {
    case 1: *p = (uint8_t)w; return;
    case 2: { uint16_t v = (uint16_t)w; memcpy(p, &v, 2); return; }
    case 4: { uint32_t v = (uint32_t)w; memcpy(p, &v, 4); return; }
    default: memcpy(p, &w, 8); return;
    }
}
