/* ptxlab native engine: the wave context, operand records and memory access (ptx_docs/emulator_engines.md).
 *
 * The native engine runs the interpreter's SIMT semantics (engine/machine.py) over the threads of one wave.  A
 * kernel is translated once (translate.py) into one Op record per instruction; engine.c runs them.  Registers are
 * the wave's register arrays (one array per PTX register, T threads).  Each instruction fetches its source operands
 * for every thread into 64-bit scratch vectors (the value of the instruction type, zero- or sign-extended by the
 * type), computes result vectors, and writes them to the destination registers of the executing threads, converted
 * to the register's storage exactly as core/types.py does.  Memory accesses are checked for every executing thread
 * first and only then performed.  Whatever this code does not do itself -- an instruction without a translation, a
 * fault, a check that needs the interpreter's report, a pending asynchronous register -- it hands back to Python
 * (R_PY at c->at), which runs that one instruction with the interpreter's handler and resumes the native code.
 */
#include <stdint.h>
#include <string.h>
#include <math.h>

#define R_DONE (-1)     /* the group's block run ended: pc / status written as the interpreter writes them */
#define R_PY (-2)       /* run instruction c->at in Python, then resume at c->at + 1 (no block prologue) */
#define R_TRAP (-3)     /* instruction c->at is 'trap' */
#define R_TICK (-4)     /* call the watchdog's tick, then resume at block c->at without its prologue */
#define R_WATCHDOG (-5) /* instruction budget exceeded at the start of block c->at */
#define R_FLUSH (-6)    /* the execution log is full: empty it, then resume at c->at without a block prologue */

#define GLOBAL_BASE 0x7F0000000000ULL
#define WIN_SHIFT 40
#define WIN_GLOBAL (0x7F0000000000ULL >> WIN_SHIFT)
#define WIN_SHARED (0x7E0000000000ULL >> WIN_SHIFT)
#define WIN_LOCAL (0x7D0000000000ULL >> WIN_SHIFT)
#define WIN_PARAM (0x7C0000000000ULL >> WIN_SHIFT)
#define WIN_CONST (0x7B0000000000ULL >> WIN_SHIFT)
#define RANK_SHIFT 24
#define OFF_MASK ((1LL << RANK_SHIFT) - 1)
#define EXITED 1

/* one operand: k = kind | type bits << 8 | signed << 16 | storage bits << 24 | negated << 32 */
typedef struct { int64_t k, a, b; } Opnd;
/* one instruction: opcode (OP_*), sub-operation, guard register (-1: none) and its negation, destination and
 * source counts, two op-specific words, then the operands */
typedef struct { int64_t op, sub, guard, gneg, nd, ns, x0, x1; Opnd d[4]; Opnd s[6]; } Op;

enum { K_NONE, K_REG, K_IMM, K_SPEC, K_CLOCK, K_CLOCK64, K_SYMSH, K_SINK, K_AREG, K_ACONST, K_ASYMSH, K_CLOCKHI };
#define KIND(k) ((int)((k) & 0xFF))
#define TBITS(k) ((int)(((k) >> 8) & 0xFF))
#define SIGNED(k) ((int)(((k) >> 16) & 1))
#define SBITS(k) ((int)(((k) >> 24) & 0xFF))
#define NEGATED(k) ((int)(((k) >> 32) & 1))

enum { SP_GLOBAL, SP_SHARED, SP_LOCAL, SP_PARAM, SP_CONST, SP_GENERIC };

typedef struct {
    int64_t T;                  /* threads of the wave */
    void **R;                   /* register arrays (storage dtype, T elements) */
    const uint8_t *pend;        /* per register slot: 1 = holds a pending asynchronous result */
    int64_t npend;              /* pending slots (0: no checks needed) */
    int64_t *pc;                /* per thread */
    int8_t *status;             /* per thread */
    const uint8_t *mask;        /* executing threads, NULL = all T */
    int64_t na;                 /* threads in mask */
    int64_t steps, ti, budget;  /* st.steps, st.thread_instrs, the wave's budget */
    int64_t watch;              /* 1: return R_TICK every 64 steps */
    int64_t at;                 /* out: instruction / block for R_PY, R_TRAP, R_TICK, R_WATCHDOG */
    int64_t blk;                /* start of the block being run (the pc of every thread of a NULL mask) */
    const uint64_t **spec;      /* special registers used by the kernel (NULL: Python computes it) */
    /* the kernel */
    const Op *ops;              /* one record per pc */
    const int64_t *ends;        /* block end per pc */
    const int64_t *roff;        /* per pc: first index into reads (pending checks); roff[pc + 1] ends it */
    const int32_t *reads;
    const uint8_t *pyonly;      /* per pc: 1 = the interpreter runs it (its handler was replaced after decode) */
    /* scratch (TILE elements each): 6 source vectors, 4 result vectors, the executing-thread flags */
    uint64_t *S[6];
    uint64_t *V[4];
    uint8_t *act;
    /* global memory */
    uint8_t *heap;
    const int64_t *alo, *ahi;   /* live allocations [lo, hi) as heap offsets, sorted */
    int64_t nalloc;
    uint8_t *gwritten;          /* global initcheck: written bytes (NULL: off) */
    /* shared memory */
    uint8_t *smem;
    int64_t smem_size, smem_stride;
    const int64_t *cta_of;
    int64_t csize;              /* cluster size (1: no cluster) */
    int64_t smem_py;            /* bit 0: shared loads go to Python, bit 1: shared stores go to Python */
    /* local, param, const */
    uint8_t *lmem;
    int64_t lstride, local_limit;
    const uint8_t *params;
    int64_t params_size;
    const uint8_t *cbank;
    int64_t cbank_size;
    const uint64_t *rank_bits;  /* per thread cluster rank << 24 for .shared symbol addresses (NULL: none) */
    uint64_t *addr;             /* scratch, T elements: the addresses of one ld / st (mem_range.h) */
    const uint8_t *afull;       /* per allocation (as alo): every byte written by the host (memory.py Allocation.full) */
    const uint64_t **luts;      /* OP_LUT tables (emit_lut.py), by the record's x0 */
    /* execution log (timing recording, timing/native_record.py): per warp of the wave, the pcs of the instructions
       run natively that had an executing thread in the warp, in program order */
    int32_t *log;               /* NULL: off; else one row of logcap entries per warp */
    int64_t *loglen;            /* entries per row */
    int64_t logcap, lognmax;    /* row capacity; instructions logged since the last flush (>= any row's length) */
    int64_t *gw;                /* scratch, one per warp: the group's warps (ptx_run), then an instruction's */
    int64_t ngw;
    int64_t *sel;               /* scratch, one per warp: the warps of the instruction being run */
} Ctx;

/* loops over the n threads of a tile (engine.c runs a wave in tiles of TILE threads, so the scratch vectors stay
   in the L1 cache); t is the index in the tile, base + t the thread */
#define TILE 256
#define FOR for (int64_t t = 0; t < n; t++)
#define FORACT for (int64_t t = 0; t < n; t++) if (act[t])
#define MASKB(b) ((b) >= 64 ? ~0ULL : ((1ULL << (b)) - 1))
#define SX(v, b) ((b) >= 64 ? (uint64_t)(v) : (uint64_t)((int64_t)((uint64_t)(v) << (64 - (b))) >> (64 - (b))))
#define RANKB(t) (c->rank_bits ? c->rank_bits[base + (t)] : 0ULL)

static inline uint64_t ext(uint64_t v, int bits, int sgn) { return sgn ? SX(v, bits) : (v & MASKB(bits)); }

/* ---- memory: resolve a space address to host bytes, NULL = let the interpreter do it (fault or check) ---- */
/* the allocation holding [off, off + n), or -1 */
static inline int64_t gheap_find(const Ctx *c, int64_t off, int64_t n) {
    int64_t lo = 0, hi = c->nalloc - 1;
    while (lo <= hi) {                               /* last allocation starting at or before off */
        int64_t mid = (lo + hi) >> 1;
        if (c->alo[mid] <= off) lo = mid + 1; else hi = mid - 1;
    }
    return hi >= 0 && off >= c->alo[hi] && off + n <= c->ahi[hi] ? hi : -1;
}

static inline int gheap_ok(const Ctx *c, int64_t off, int64_t n) { return gheap_find(c, off, n) >= 0; }

static inline uint8_t *res_global(const Ctx *c, uint64_t a, int64_t n, int store) {
    int64_t off = (int64_t)(a - GLOBAL_BASE);
    if (!gheap_ok(c, off, n)) return 0;
    if (!store && c->gwritten) {
        for (int64_t k = 0; k < n; k++) if (!c->gwritten[off + k]) return 0;
    }
    return c->heap + off;
}

static inline uint8_t *res_shared(const Ctx *c, int64_t t, uint64_t a, int64_t n, int store) {
    if (c->smem_py & (store ? 2 : 1)) return 0;
    int64_t a64 = (int64_t)a;
    int64_t own = c->cta_of[t];
    if ((a64 >> RANK_SHIFT) != own % c->csize) return 0;   /* a peer's SMEM (DSMEM checks) or a fault */
    int64_t off = a64 & OFF_MASK;
    if (off + n > c->smem_size) return 0;
    return c->smem + own * c->smem_stride + off;
}

static inline uint8_t *res_local(const Ctx *c, int64_t t, uint64_t a, int64_t n) {
    int64_t a64 = (int64_t)a;
    if (a64 < 0 || a64 + n > c->local_limit) return 0;
    return c->lmem + t * c->lstride + a64;
}

static inline uint8_t *res_ro(const uint8_t *buf, int64_t size, uint64_t a, int64_t n, int store) {
    int64_t a64 = (int64_t)a;
    if (store || a64 < 0 || a64 + n > size) return 0;
    return (uint8_t *)buf + a64;
}

static inline uint8_t *res_space(const Ctx *c, int sp, int64_t t, uint64_t a, int64_t n, int store) {
    switch (sp) {
    case SP_GLOBAL: return res_global(c, a, n, store);
    case SP_SHARED: return res_shared(c, t, a, n, store);
    case SP_LOCAL: return res_local(c, t, a, n);
    case SP_PARAM: return res_ro(c->params, c->params_size, a, n, store);
    case SP_CONST: return res_ro(c->cbank, c->cbank_size, a, n, store);
    default:
        switch (a >> WIN_SHIFT) {
        case WIN_GLOBAL: return res_global(c, a, n, store);
        case WIN_SHARED: return res_shared(c, t, a - (WIN_SHARED << WIN_SHIFT), n, store);
        case WIN_LOCAL: return res_local(c, t, a - (WIN_LOCAL << WIN_SHIFT), n);
        case WIN_PARAM: return res_ro(c->params, c->params_size, a - (WIN_PARAM << WIN_SHIFT), n, store);
        case WIN_CONST: return res_ro(c->cbank, c->cbank_size, a - (WIN_CONST << WIN_SHIFT), n, store);
        default: return 0;
        }
    }
}

/* ---- bit views ---- */
static inline float f32_of(uint64_t b) { uint32_t u = (uint32_t)b; float f; memcpy(&f, &u, 4); return f; }
static inline uint32_t bits_f32(float f) { uint32_t b; memcpy(&b, &f, 4); return b; }
static inline double f64_of(uint64_t b) { double f; memcpy(&f, &b, 8); return f; }
static inline uint64_t bits_f64(double f) { uint64_t b; memcpy(&b, &f, 8); return b; }
