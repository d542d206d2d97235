"""Cluster corpus entries (tests/kernels/corpus_cluster.cu): thread-block clusters on sm_90a, with Python references.

Each entry launches with ``dev.launch(..., cluster=...)`` over several cluster shapes; all random choices (peer
offsets, coordinates, masks, sizes) are inputs, so the H100 and the emulator run the same launches.
"""
from __future__ import annotations

import numpy as np

from corpus import Entry, out_buf, serial_chain, u32

CL = "corpus_cluster.cu"
M32 = 0xFFFFFFFF
POISON = M32


# ------------------------------------------------------------------------------------------------ geometry helpers
def _ncta(grid):
    return grid[0] * grid[1] * grid[2]


def _coords(cta, grid):
    return cta % grid[0], (cta // grid[0]) % grid[1], cta // (grid[0] * grid[1])


def _rank(cta, grid, cl):
    x, y, z = _coords(cta, grid)
    return x % cl[0] + (y % cl[1]) * cl[0] + (z % cl[2]) * cl[0] * cl[1]


def _peer(cta, q, grid, cl):
    """Linear id of the CTA with cluster rank q in cta's cluster."""
    x, y, z = _coords(cta, grid)
    bx, by, bz = x - x % cl[0], y - y % cl[1], z - z % cl[2]
    px, py, pz = bx + q % cl[0], by + (q // cl[0]) % cl[1], bz + q // (cl[0] * cl[1])
    return px + grid[0] * (py + grid[1] * pz)


def _csize(cl):
    return cl[0] * cl[1] * cl[2]


# ------------------------------------------------------------------------------------------------ 1. special regs
SREG_SHAPES = [((4, 2, 2), (2, 1, 1)), ((4, 4, 2), (2, 2, 2)), ((6, 3, 1), (3, 1, 1)), ((2, 4, 4), (1, 2, 4)),
               ((8, 1, 1), (8, 1, 1))]


def _sreg_rows(grid, cl, block):
    rows = []
    for cta in range(_ncta(grid)):
        x, y, z = _coords(cta, grid)
        row = [x % cl[0], y % cl[1], z % cl[2], *cl, x // cl[0], y // cl[1], z // cl[2],
               grid[0] // cl[0], grid[1] // cl[1], grid[2] // cl[2], _rank(cta, grid, cl), _csize(cl), 1, cta]
        rows += [row] * block
    return np.array(rows, np.uint32)


def _sreg_run(dev, mod, ins, shapes=SREG_SHAPES, non_portable=False):
    outs = {}
    for i, (grid, cl) in enumerate(shapes):
        block = int(ins["block"][i])
        o = out_buf(dev, _ncta(grid) * block * 16 * 4)
        dev.launch(mod, "cl_sregs", grid=grid, block=block, args=[o], cluster=cl, non_portable_cluster=non_portable)
        outs[f"s{i}"] = dev.to_host(o, np.uint32).reshape(-1, 16)
    return outs


def _sreg_ref(ins, shapes=SREG_SHAPES):
    return {f"s{i}": _sreg_rows(g, c, int(ins["block"][i])) for i, (g, c) in enumerate(shapes)}


NP_SHAPES = [((16, 2, 1), (16, 1, 1))]


# ------------------------------------------------------------------------------------------------ 2. DSMEM ring
RING_SHAPES = [((4, 1, 1), (2, 1, 1)), ((8, 1, 1), (4, 1, 1)), ((16, 1, 1), (8, 1, 1)), ((4, 2, 1), (2, 2, 1)),
               ((2, 2, 4), (2, 2, 2)), ((6, 2, 1), (3, 2, 1))]


def _ring_in(rng):
    d = {}
    for i, (grid, cl) in enumerate(RING_SHAPES):
        d[f"in{i}"] = u32(rng, _ncta(grid) * 128, 0)
        d[f"k{i}"] = np.array([rng.integers(1, max(_csize(cl), 2))], np.uint32)
    return d


def _ring_run(dev, mod, ins):
    outs = {}
    for i, (grid, cl) in enumerate(RING_SHAPES):
        o = out_buf(dev, _ncta(grid) * 128 * 6 * 4)
        dev.launch(mod, "cl_ring", grid=grid, block=128, args=[dev.to_device(ins[f"in{i}"]), o,
                                                                 np.uint32(ins[f"k{i}"][0])], cluster=cl)
        outs[f"ring{i}"] = dev.to_host(o, np.uint32).reshape(-1, 128, 6)
    return outs


def _ring_ref(ins):
    res = {}
    for i, (grid, cl) in enumerate(RING_SHAPES):
        inp = ins[f"in{i}"].reshape(-1, 128).astype(np.uint64)
        k = int(ins[f"k{i}"][0])
        n = _csize(cl)
        out = np.zeros((_ncta(grid), 128, 6), np.uint64)
        t = np.arange(128)
        for cta in range(_ncta(grid)):
            r = _rank(cta, grid, cl)
            out[cta, :, 0] = inp[_peer(cta, (r + k) % n, grid, cl)][t ^ 5]
            out[cta, :, 1] = inp[_peer(cta, (r + n - 1) % n, grid, cl)][(t * 7) & 127]
            rp = (r + n - 1) % n
            out[cta, :, 2] = (inp[_peer(cta, rp, grid, cl)] + rp * 0x01000193) & M32
            out[cta, :, 3] = (r + k) % n
            out[cta, :, 4] = int(n == 1)
            out[cta, :, 5] = 1
        res[f"ring{i}"] = out.astype(np.uint32)
    return res


# ------------------------------------------------------------------------------------------------ 3. remote mbarrier
PC_SHAPES = [(8, 4), (6, 2), (8, 8)]     # (grid x, cluster x)
PC_ROUNDS = 5


def _pc_in(rng):
    return {f"in{i}": u32(rng, g * PC_ROUNDS * 32, 0) for i, (g, n) in enumerate(PC_SHAPES)}


def _pc_run(dev, mod, ins):
    outs = {}
    for i, (g, n) in enumerate(PC_SHAPES):
        o = out_buf(dev, g * PC_ROUNDS * 32 * 4)
        dev.launch(mod, "cl_prodcons", grid=g, block=64, args=[dev.to_device(ins[f"in{i}"]), o,
                                                                 np.uint32(PC_ROUNDS)], cluster=(n, 1, 1))
        outs[f"pc{i}"] = dev.to_host(o, np.uint32).reshape(g, PC_ROUNDS, 32)
    return outs


def _pc_ref(ins):
    res = {}
    for i, (g, n) in enumerate(PC_SHAPES):
        inp = ins[f"in{i}"].astype(np.uint64)
        out = np.full((g, PC_ROUNDS, 32), POISON, np.uint64)
        for cta in range(g):
            cl, r = cta // n, cta % n
            if r == 0:
                continue
            for rd in range(PC_ROUNDS):
                base = ((cl * PC_ROUNDS + rd) * n + r) * 32
                out[cta, rd] = ((inp[base:base + 32] ^ ((rd * 0x9E3779B9) & M32)) + r) & M32
        res[f"pc{i}"] = out.astype(np.uint32)
    return res


# ------------------------------------------------------------------------------------------------ 4. barrier loop
BL_SHAPES = [((8, 1, 1), (4, 1, 1)), ((2, 2, 2), (2, 1, 2)), ((4, 1, 1), (2, 1, 1))]
BL_ITERS = 9


def _bl_in(rng):
    return {f"in{i}": u32(rng, _ncta(g) * 64, 0) for i, (g, c) in enumerate(BL_SHAPES)}


def _bl_run(dev, mod, ins):
    outs = {}
    for i, (grid, cl) in enumerate(BL_SHAPES):
        o = out_buf(dev, _ncta(grid) * (BL_ITERS + 1) * 64 * 4)
        dev.launch(mod, "cl_barrier_loop", grid=grid, block=64, args=[dev.to_device(ins[f"in{i}"]), o,
                                                                        np.uint32(BL_ITERS)], cluster=cl)
        outs[f"bl{i}"] = dev.to_host(o, np.uint32).reshape(_ncta(grid), BL_ITERS + 1, 64)
    return outs


def _bl_ref(ins):
    res = {}
    for i, (grid, cl) in enumerate(BL_SHAPES):
        nct, n = _ncta(grid), _csize(cl)
        acc = ins[f"in{i}"].reshape(nct, 64).astype(np.uint64)
        out = np.zeros((nct, BL_ITERS + 1, 64), np.uint64)
        src = [_peer(c, (_rank(c, grid, cl) + n - 1) % n, grid, cl) for c in range(nct)]
        for it in range(BL_ITERS):
            v = acc[src]
            out[:, it] = v
            acc = (acc * 1664525 + v + it) & M32
        out[:, BL_ITERS] = acc
        res[f"bl{i}"] = out.astype(np.uint32)
    return res


# ------------------------------------------------------------------------------------------------ 5. bulk to a peer
BP_SHAPES = [(4, 2), (8, 4), (8, 8)]


def _bp_in(rng):
    d = {}
    for i, (g, n) in enumerate(BP_SHAPES):
        d[f"in{i}"] = u32(rng, g * 256, 0)
        d[f"size{i}"] = (rng.integers(1, 65, g) * 16).astype(np.uint32)
    return d


def _bp_run(dev, mod, ins):
    outs = {}
    for i, (g, n) in enumerate(BP_SHAPES):
        o = out_buf(dev, g * 256 * 4)
        dev.launch(mod, "cl_bulk_peer", grid=g, block=64, args=[dev.to_device(ins[f"in{i}"]),
                                                                  dev.to_device(ins[f"size{i}"]), o], cluster=(n, 1, 1))
        outs[f"bp{i}"] = dev.to_host(o, np.uint32).reshape(g, 256)
    return outs


def _bp_ref(ins):
    res = {}
    for i, (g, n) in enumerate(BP_SHAPES):
        inp = ins[f"in{i}"].reshape(g, 256)
        out = np.tile(np.uint32(0xA5A5A5A5) ^ np.arange(256, dtype=np.uint32), (g, 1))
        for cta in range(g):
            snd = cta - cta % n + (cta % n + n - 1) % n
            w = int(ins[f"size{i}"][snd]) // 4
            out[cta, :w] = inp[snd, :w]
        res[f"bp{i}"] = out
    return res


# ------------------------------------------------------------------------------------------------ 6. peer atomics
AT_SHAPES = [(8, 4), (4, 2)]


def _at_in(rng):
    d = {}
    for i, (g, n) in enumerate(AT_SHAPES):
        d[f"v{i}"] = u32(rng, g * 128, 0)
        d[f"init{i}"] = u32(rng, g * 88, 0)
    return d


def _at_run(dev, mod, ins):
    outs = {}
    for i, (g, n) in enumerate(AT_SHAPES):
        olds, fin = out_buf(dev, g * 128 * 4), out_buf(dev, g * 88 * 4)
        dev.launch(mod, "cl_atomics", grid=g, block=128, args=[dev.to_device(ins[f"v{i}"]),
                                                                 dev.to_device(ins[f"init{i}"]), olds, fin],
                   cluster=(n, 1, 1))
        outs[f"olds{i}"] = dev.to_host(olds, np.uint32)
        outs[f"fin{i}"] = dev.to_host(fin, np.uint32).reshape(g, 88)
    return outs


def _at_ref(ins):
    res = {}
    for i, (g, n) in enumerate(AT_SHAPES):
        fin = ins[f"init{i}"].reshape(g, 88).astype(np.int64).copy()
        fl = (fin[:, 80:88] & 0xFFFF).astype(np.float64)
        v = ins[f"v{i}"].reshape(g, 128).astype(np.int64)
        for b in range(g):
            base, rb = b - b % n, b % n
            for t in range(128):
                x = int(v[b, t])
                fin[base + t % n, t % 32] = (fin[base + t % n, t % 32] + x) & M32
                p = base + (rb + 1) % n
                fin[p, 32 + t % 16] = (fin[p, 32 + t % 16] + (x >> 3)) & M32
                p = base + (rb + t) % n
                fin[p, 48 + t % 16] ^= (x * 2654435761) & M32
                p = base + (t // 8) % n
                fin[p, 64 + t % 8] = max(fin[p, 64 + t % 8], x)
                p = base + (rb + 2) % n
                fin[p, 72 + t % 8] = min(fin[p, 72 + t % 8], x ^ 0x5BD1E995)
                p = base + (rb + n - 1) % n
                fl[p, t % 8] += x & 0x3FF
        fin[:, 80:88] = np.asarray(fl, np.float32).view(np.uint32)
        res[f"fin{i}"] = fin.astype(np.uint32)
    return res


def _at_validate(ins, outs):
    probs = []
    for i, (g, n) in enumerate(AT_SHAPES):
        init = ins[f"init{i}"].reshape(g, 88)
        v = ins[f"v{i}"].reshape(g, 128)
        olds = outs[f"olds{i}"].reshape(g, 128)
        fin = outs[f"fin{i}"]
        ops: dict = {}
        for b in range(g):
            for t in range(128):
                ops.setdefault((b - b % n + t % n, t % 32), []).append((int(olds[b, t]), int(v[b, t])))
        for (c, k), lst in ops.items():
            if not serial_chain(int(init[c, k]), [o for o, _ in lst], [x for _, x in lst], int(fin[c, k]),
                                lambda cur, x: (cur + x) & M32):
                probs.append(f"shape {i}: atom.shared::cluster.add olds on CTA {c} ctr[{k}] fit no serialization")
                break
    return probs


# ------------------------------------------------------------------------------------------------ 7. TMA multicast
SWIZZLES = ("none", "32B", "64B", "128B")
SPAN = {"none": 64, "32B": 32, "64B": 64, "128B": 128}
TM_ROWS, TM_COLS, BOX_ROWS = 20, 40, 8
TM_CONFIGS = [(n, s) for n in (2, 4) for s in SWIZZLES]


def _swz(mode, a):
    if mode == "none":
        return a
    m = {"32B": 1, "64B": 3, "128B": 7}[mode]
    line, off = a >> 7, a & 127
    return (line << 7) | (((off >> 4) ^ (line & m)) << 4) | (off & 15)


def _tm_in(rng):
    d = {"g": u32(rng, TM_ROWS * TM_COLS, 0)}
    for i, (n, s) in enumerate(TM_CONFIGS):
        inner = SPAN[s] // 4
        nct = 2 * n
        oob = rng.random(nct) < 0.4
        # dim-0 starts on 16-byte boundaries (4 elements): other starts fault on the H100 (ptx_docs/tma.md)
        xs = 4 * np.where(oob, rng.integers(-inner // 4 + 1, TM_COLS // 4, nct),
                          rng.integers(0, (TM_COLS - inner) // 4 + 1, nct))
        ys = np.where(rng.random(nct) < 0.4, rng.integers(-BOX_ROWS + 1, TM_ROWS, nct),
                      rng.integers(0, TM_ROWS - BOX_ROWS + 1, nct))
        d[f"xs{i}"], d[f"ys{i}"] = xs.astype(np.int32), ys.astype(np.int32)
        d[f"mask{i}"] = rng.integers(1, 1 << n, nct).astype(np.uint32)
    return d


def _expect(masks, n, per):
    """Bytes each CTA receives: per[q] for every cluster peer q whose mask has this CTA's rank."""
    nct = masks.size
    out = np.zeros(nct, np.uint32)
    for c in range(nct):
        base, r = c - c % n, c % n
        out[c] = sum(int(per[base + q]) for q in range(n) if (int(masks[base + q]) >> r) & 1)
    return out


def _tm_run(dev, mod, ins):
    outs = {}
    g = dev.to_device(ins["g"])
    for i, (n, s) in enumerate(TM_CONFIGS):
        inner = SPAN[s] // 4
        box_bytes = inner * 4 * BOX_ROWS
        tm = dev.tensor_map(g, dtype=np.uint32, global_shape=[TM_COLS, TM_ROWS], global_strides=[TM_COLS * 4],
                            box=[inner, BOX_ROWS], swizzle=s)
        nct = 2 * n
        expect = _expect(ins[f"mask{i}"], n, np.full(nct, box_bytes))
        o = out_buf(dev, nct * 4096)
        dev.launch(mod, "cl_tma_multicast", grid=nct, block=128,
                   args=[tm, dev.to_device(ins[f"xs{i}"]), dev.to_device(ins[f"ys{i}"]),
                         dev.to_device(ins[f"mask{i}"]), dev.to_device(expect), np.uint32(box_bytes), o],
                   cluster=(n, 1, 1))
        outs[f"tma{i}"] = dev.to_host(o, np.uint8).reshape(nct, 4096)
    return outs


def _tm_ref(ins):
    res = {}
    gm = ins["g"].reshape(TM_ROWS, TM_COLS)
    for i, (n, s) in enumerate(TM_CONFIGS):
        inner = SPAN[s] // 4
        box_bytes = inner * 4 * BOX_ROWS
        nct = 2 * n
        boxes = []
        for q in range(nct):
            x0, y0 = int(ins[f"xs{i}"][q]), int(ins[f"ys{i}"][q])
            dense = np.zeros((BOX_ROWS, inner), np.uint32)
            for r in range(BOX_ROWS):
                for c in range(inner):
                    y, x = y0 + r, x0 + c
                    if 0 <= y < TM_ROWS and 0 <= x < TM_COLS:
                        dense[r, c] = gm[y, x]
            db = dense.view(np.uint8).reshape(-1)
            sw = np.zeros_like(db)
            sw[[_swz(s, o) for o in range(db.size)]] = db
            boxes.append(sw)
        out = np.full((nct, 4096), 0xFF, np.uint8)
        init = (0xA5 ^ np.arange(4096)).astype(np.uint8)
        for c in range(nct):
            base, r = c - c % n, c % n
            buf = init.copy()
            for q in range(n):
                if (int(ins[f"mask{i}"][base + q]) >> r) & 1:
                    buf[q * box_bytes:(q + 1) * box_bytes] = boxes[base + q]
            out[c, :n * box_bytes] = buf[:n * box_bytes]
        res[f"tma{i}"] = out
    return res


# ------------------------------------------------------------------------------------------------ 8. bulk multicast
BM_CONFIGS = (2, 4)
BM_GBYTES = 8192


def _bm_in(rng):
    d = {"g": rng.integers(0, 256, BM_GBYTES, dtype=np.uint8)}
    for i, n in enumerate(BM_CONFIGS):
        nct = 2 * n
        d[f"goff{i}"] = (rng.integers(0, (BM_GBYTES - 1024) // 16 + 1, nct) * 16).astype(np.uint32)
        d[f"bytes{i}"] = (rng.integers(1, 65, nct) * 16).astype(np.uint32)
        d[f"mask{i}"] = rng.integers(1, 1 << n, nct).astype(np.uint32)
    return d


def _bm_run(dev, mod, ins):
    outs = {}
    g = dev.to_device(ins["g"])
    for i, n in enumerate(BM_CONFIGS):
        nct = 2 * n
        expect = _expect(ins[f"mask{i}"], n, ins[f"bytes{i}"])
        o = out_buf(dev, nct * 4096)
        dev.launch(mod, "cl_bulk_multicast", grid=nct, block=128,
                   args=[g, dev.to_device(ins[f"goff{i}"]), dev.to_device(ins[f"bytes{i}"]),
                         dev.to_device(ins[f"mask{i}"]), dev.to_device(expect), o], cluster=(n, 1, 1))
        outs[f"bm{i}"] = dev.to_host(o, np.uint8).reshape(nct, 4096)
    return outs


def _bm_ref(ins):
    res = {}
    init = ((0x5A ^ (np.arange(4096) * 7)) & 0xFF).astype(np.uint8)
    for i, n in enumerate(BM_CONFIGS):
        nct = 2 * n
        out = np.zeros((nct, 4096), np.uint8)
        for c in range(nct):
            base, r = c - c % n, c % n
            buf = init.copy()
            for q in range(n):
                if (int(ins[f"mask{i}"][base + q]) >> r) & 1:
                    off, nb = int(ins[f"goff{i}"][base + q]), int(ins[f"bytes{i}"][base + q])
                    buf[q * 1024:q * 1024 + nb] = ins["g"][off:off + nb]
            out[c] = buf
        res[f"bm{i}"] = out
    return res


# ------------------------------------------------------------------------------------------------ 9. address encoding
AD_SHAPES = [((8, 1, 1), (4, 1, 1)), ((4, 2, 2), (2, 2, 2))]


def _ad_run(dev, mod, ins):
    outs = {}
    for i, (grid, cl) in enumerate(AD_SHAPES):
        o = out_buf(dev, _ncta(grid) * 64 * 8 * 4)
        dev.launch(mod, "cl_addr", grid=grid, block=64, args=[o], cluster=cl)
        outs[f"addr{i}"] = dev.to_host(o, np.uint32).reshape(_ncta(grid), 64, 8)
    return outs


def _ad_ref(ins):
    res = {}
    for i, (grid, cl) in enumerate(AD_SHAPES):
        n = _csize(cl)
        out = np.zeros((_ncta(grid), 64, 8), np.uint32)
        for cta in range(_ncta(grid)):
            r = _rank(cta, grid, cl)
            q = np.arange(64) % n
            out[cta] = np.stack([np.full(64, r), q, np.ones(64), np.full(64, r), np.full(64, r), np.ones(64), q,
                                 np.ones(64)], axis=1)
        res[f"addr{i}"] = out
    return res


# ------------------------------------------------------------------------------------------------ 10. remote tx
RT_SHAPES = [(4, 2), (8, 4)]


def _rt_in(rng):
    d = {}
    for i, (g, n) in enumerate(RT_SHAPES):
        d[f"in{i}"] = u32(rng, g * 32, 0)
        d[f"tx{i}"] = rng.integers(1, 4096, g).astype(np.uint32)
    return d


def _rt_run(dev, mod, ins):
    outs = {}
    for i, (g, n) in enumerate(RT_SHAPES):
        o = out_buf(dev, g * 32 * 4)
        dev.launch(mod, "cl_remote_tx", grid=g, block=64, args=[dev.to_device(ins[f"in{i}"]),
                                                                  dev.to_device(ins[f"tx{i}"]), o], cluster=n)
        outs[f"rt{i}"] = dev.to_host(o, np.uint32).reshape(g, 32)
    return outs


def _rt_ref(ins):
    res = {}
    for i, (g, n) in enumerate(RT_SHAPES):
        inp = ins[f"in{i}"].reshape(g, 32)
        res[f"rt{i}"] = np.stack([inp[c - c % n + (c % n + n - 1) % n] for c in range(g)])
    return res


FIXED_GRID = (4, 4, 2)


def _fixed_run(dev, mod, ins):
    block = int(ins["block"][0])
    o = out_buf(dev, _ncta(FIXED_GRID) * block * 16 * 4)
    dev.launch(mod, "cl_sregs_fixed", grid=FIXED_GRID, block=block, args=[o])     # no cluster=: __cluster_dims__
    return {"s0": dev.to_host(o, np.uint32).reshape(-1, 16)}


ENTRIES = [
    Entry("cluster_sregs", CL, lambda rng: {"block": rng.integers(33, 97, len(SREG_SHAPES)).astype(np.uint32)},
          _sreg_run, _sreg_ref,
          note="every cluster special register over 1-D/2-D/3-D cluster shapes (2..8 CTAs), ragged blocks"),
    Entry("cluster_compile_time", CL, lambda rng: {"block": rng.integers(32, 97, 1).astype(np.uint32)}, _fixed_run,
          lambda ins: {"s0": _sreg_rows(FIXED_GRID, (2, 2, 1), int(ins["block"][0]))},
          note="__cluster_dims__(2, 2, 1) (.reqnctapercluster/.explicitcluster) launched without cluster=: the shape "
               "and %is_explicit_cluster come from the kernel"),
    Entry("remote_mbarrier_tx", CL, _rt_in, _rt_run, _rt_ref,
          note="mbarrier.expect_tx / complete_tx .shared::cluster and a remote arrive on a peer's barrier"),
    Entry("cluster_nonportable16", CL, lambda rng: {"block": rng.integers(32, 65, 1).astype(np.uint32)},
          lambda dev, mod, ins: _sreg_run(dev, mod, ins, NP_SHAPES, True),
          lambda ins: _sreg_ref(ins, NP_SHAPES),
          note="16-CTA cluster with non_portable_cluster=True (CU_FUNC_ATTRIBUTE_NON_PORTABLE_CLUSTER_SIZE_ALLOWED)"),
    Entry("dsmem_ring", CL, _ring_in, _ring_run, _ring_ref,
          note="mapa + ld/st.shared::cluster + generic ld of a peer, getctarank, isspacep; clusters 2, 4, 8, 2x2, "
               "2x2x2, 3x2"),
    Entry("remote_mbarrier", CL, _pc_in, _pc_run, _pc_ref,
          note="producer rank 0 -> consumers: st.shared::cluster + mbarrier.arrive.release.cluster.shared::cluster, "
               "consumers arrive back on the producer's barrier; 5 rounds, clusters 4, 2, 8"),
    Entry("cluster_barrier_loop", CL, _bl_in, _bl_run, _bl_ref,
          note="barrier.cluster phases reused 9 times (aligned / unaligned / relaxed), DSMEM double buffer"),
    Entry("bulk_smem_to_peer", CL, _bp_in, _bp_run, _bp_ref,
          note="cp.async.bulk.shared::cluster.shared::cta with complete_tx on the peer's mbarrier, sizes 16..1024"),
    Entry("peer_atomics", CL, _at_in, _at_run, _at_ref, modes={"olds0": "serialization", "olds1": "serialization"},
          validate=_at_validate,
          note="atom/red .shared::cluster add/xor/max/add.f32 and generic atom.min on peers' SMEM"),
    Entry("tma_multicast", CL, _tm_in, _tm_run, _tm_ref,
          note="2-D TMA .multicast::cluster to 2 and 4 CTAs, swizzle none/32B/64B/128B, OOB boxes, random ctaMasks"),
    Entry("shared_address_encoding", CL, lambda rng: {"unused": u32(rng, 1)}, _ad_run, _ad_ref,
          note="bits 31..24 of shared::cta / mapa / cvta.to.shared::cluster addresses = cluster rank"),
    Entry("bulk_multicast", CL, _bm_in, _bm_run, _bm_ref,
          note="non-tensor cp.async.bulk .multicast::cluster to 2 and 4 CTAs, random sizes/offsets/ctaMasks"),
]

# the instructions each kernel is meant to exercise (checked against its PTX by tests/test_corpus.py)
PTX_FEATURES = {
    "cluster_sregs": ("cl_sregs", ["%cluster_ctaid.z", "%cluster_nctaid.y", "%clusterid.x", "%nclusterid.z",
                                   "%cluster_ctarank", "%cluster_nctarank", "%is_explicit_cluster"]),
    "dsmem_ring": ("cl_ring", ["mapa.shared::cluster.u32", "mapa.u64", "ld.shared::cluster.u32",
                               "st.shared::cluster.u32", "getctarank.shared::cluster", "isspacep.shared::cluster",
                               "barrier.cluster.arrive.release.aligned", "barrier.cluster.wait.acquire.aligned"]),
    "remote_mbarrier": ("cl_prodcons", ["mbarrier.arrive.release.cluster.shared::cluster.b64",
                                        "fence.mbarrier_init.release.cluster", "barrier.cluster.arrive.relaxed"]),
    "cluster_barrier_loop": ("cl_barrier_loop", ["barrier.cluster.arrive;", "barrier.cluster.wait;",
                                                 "barrier.cluster.arrive.aligned", "fence.acq_rel.cluster"]),
    "bulk_smem_to_peer": ("cl_bulk_peer", ["cp.async.bulk.shared::cluster.shared::cta.mbarrier::complete_tx::bytes"]),
    "peer_atomics": ("cl_atomics", ["atom.shared::cluster.add.u32", "red.shared::cluster.add.u32",
                                    "red.relaxed.cluster.shared::cluster.xor.b32", "red.shared::cluster.max.u32",
                                    "red.shared::cluster.add.f32", "atom.min.u32"]),
    "tma_multicast": ("cl_tma_multicast", ["cp.async.bulk.tensor.2d.shared::cluster.global.tile.mbarrier::"
                                           "complete_tx::bytes.multicast::cluster"]),
    "bulk_multicast": ("cl_bulk_multicast", ["cp.async.bulk.shared::cluster.global.mbarrier::complete_tx::bytes"
                                             ".multicast::cluster"]),
    "shared_address_encoding": ("cl_addr", ["cvta.to.shared::cluster.u64", "getctarank.shared::cluster"]),
    "remote_mbarrier_tx": ("cl_remote_tx", ["mbarrier.expect_tx.relaxed.cluster.shared::cluster.b64",
                                            "mbarrier.complete_tx.relaxed.cluster.shared::cluster.b64"]),
}
