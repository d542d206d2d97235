"""Corpus entries for the kernels in tests/kernels/corpus_*.cu (written for this corpus), with Python references."""
from __future__ import annotations

import math
import struct
import zlib

import numpy as np

from corpus import Entry, load_test_module, out_buf, u32

M32 = 0xFFFFFFFF
M64 = 0xFFFFFFFFFFFFFFFF
POISON = M32
CTRL, SYNC, NUM = "corpus_control.cu", "corpus_sync.cu", "corpus_numeric.cu"
SPLITK = "corpus_splitk.cu"


def _s32(v):
    return v - (1 << 32) if v >> 31 else v


def _s64(v):
    return v - (1 << 64) if v >> 63 else v


def _f32(b):
    return struct.unpack("<f", struct.pack("<I", b & M32))[0]


def _bits(f):
    return struct.unpack("<I", struct.pack("<f", f))[0]


def _tdiv(a, b):
    q = abs(a) // abs(b)
    return -q if (a < 0) != (b < 0) else q


def _trem(a, b):
    return a - b * _tdiv(a, b)


def _launch1d(dev, mod, kname, ins, nwords_out, n, block=128, extra=(), dtype=np.uint32):
    out = out_buf(dev, nwords_out * np.dtype(dtype).itemsize)
    dev.launch(mod, kname, grid=((n + block - 1) // block, 1, 1), block=(block, 1, 1),
               args=[dev.to_device(v) for v in ins] + [out] + list(extra))
    return dev.to_host(out, dtype)


# ------------------------------------------------------------------------------------------------ divergence
def _brev(x):
    return int(f"{x:032b}"[::-1], 2)


def _div_ref(ins):
    x_all = [int(v) for v in ins["a"]]
    out = np.full((len(x_all), 6), POISON, np.uint32)
    for i, x in enumerate(x_all):
        if x & 1:
            r = (x * 3 + 1) & M32 if x & 2 else x ^ 0xA5A5A5A5
        elif x & 4:
            r = x >> 3
            if r & 8:
                r += 7
        else:
            r = ~x & M32
        v, steps = (x & 0xFFF) | 1, 0
        while v != 1 and steps < 300:
            v = (3 * v + 1) & M32 if v & 1 else v >> 1
            steps += 1
        acc = 0
        for j in range((x >> 27) + 1):
            if ((x >> j) & 3) == 3:
                continue
            acc = (acc * 31 + j + (x >> (j & 15))) & M32
            if (acc & 0xFF) == 0x5A:
                break
        sel, t = (x >> 4) & 15, x
        if sel == 0:
            s = x + 1
        elif sel == 1:
            s = x - 7
        elif sel in (2, 3):
            s = x << 3
        elif sel == 5:
            s = x * x
        elif sel == 6:
            s = _brev(x)
        elif sel in (7, 8):
            if sel == 7:
                t = x + 3
            s = (t & M32) ^ 0xFFFF
        elif sel == 11:
            s = x >> 11
        elif sel == 12:
            s = x | 0x80000000
        elif sel == 13:
            s = -x
        else:
            s = 0xDEADBEEF ^ x
        out[i, :4] = [r, steps, acc, s & M32]
        if (x & 0x300) == 0x300:
            continue
        out[i, 4] = (x + i) & M32
        if bin(x).count("1") > 16:
            continue
        out[i, 5] = x ^ i
    return {"out": out}


def _div_in(rng):
    n = 300
    a = u32(rng, n)
    a[: n // 3] = (a[: n // 3] & np.uint32(0xFFF)) | np.uint32(1)    # small values: long Collatz runs
    return {"a": a}


def _div_run(dev, mod, ins):
    n = ins["a"].size
    return {"out": _launch1d(dev, mod, "corpus_divergence", [ins["a"]], n * 6, n, extra=[np.uint32(n)]).reshape(n, 6)}


# ------------------------------------------------------------------------------------------------ local array
def _loc_ref(ins):
    res = []
    for x in (int(v) for v in ins["a"]):
        loc = [(x * (j + 1) + (x >> j)) & M32 for j in range(32)]
        for j in range(8):
            loc[(x >> (4 * j)) & 31] ^= (j * 0x9E3779B9) & M32
        acc = 0
        for j in range(16):
            k = (acc + x + j) & 31
            acc = (acc + loc[k]) & M32
            loc[(k * 7 + 3) & 31] = acc
        res.append([acc, loc[x & 31], loc[(x >> 5) & 31]])
    return {"out": np.array(res, np.uint32)}


def _loc_run(dev, mod, ins):
    n = ins["a"].size
    return {"out": _launch1d(dev, mod, "corpus_local_array", [ins["a"]], n * 3, n, extra=[np.uint32(n)]).reshape(n, 3)}


# ------------------------------------------------------------------------------------------------ noinline calls
def _mix(a, b):
    h = a ^ ((b * 0x85EBCA6B) & M32)
    h ^= h >> 13
    h = (h * 0xC2B2AE35) & M32
    h ^= h >> 16
    return h, (h + a) & M32


def _call_ref(ins):
    res = []
    for x, y in zip((int(v) for v in ins["a"]), (int(v) for v in ins["b"])):
        r, side = _mix(x, y) if x & 1 else _mix(y, x)
        fx = ((x & 15) - 8) * 0.25
        p = 0.0
        for k in range(y & 7):
            p = p * fx + (k + 1)          # exact: small dyadic values
        res.append([r, side, _bits(p), math.gcd(x & 0xFFFFF, y & 0xFFFFF)])
    return {"out": np.array(res, np.uint32)}


def _call_run(dev, mod, ins):
    n = ins["a"].size
    return {"out": _launch1d(dev, mod, "corpus_noinline_call", [ins["a"], ins["b"]], n * 4, n,
                             extra=[np.uint32(n)]).reshape(n, 4)}


# ------------------------------------------------------------------------------------------------ 3-D grid
GRID3, BLOCK3 = (3, 2, 2), (8, 4, 3)


def _grid_ref(ins):
    salt = int(ins["salt"][0])
    gx, gy, gz = GRID3
    bx, by, bz = BLOCK3
    nt = bx * by * bz
    out = np.zeros((gx * gy * gz * nt, 5), np.uint32)
    for cz in range(gz):
        for cy in range(gy):
            for cx in range(gx):
                bid = cx + gx * (cy + gy * cz)
                for tz in range(bz):
                    for ty in range(by):
                        for tx in range(bx):
                            tid = tx + bx * (ty + by * tz)
                            g = bid * nt + tid
                            out[g] = [tx | ty << 8 | tz << 16 | (tid % 32) << 24, cx | cy << 8 | cz << 16,
                                      bx | by << 8 | bz << 16, gx | gy << 8 | gz << 16,
                                      ((g * 2654435761) & M32) ^ salt]
    return {"out": out}


def _grid_run(dev, mod, ins):
    n = int(np.prod(GRID3) * np.prod(BLOCK3))
    out = out_buf(dev, n * 5 * 4)
    dev.launch(mod, "corpus_grid3d", grid=GRID3, block=BLOCK3, args=[out, np.uint32(ins["salt"][0])])
    return {"out": dev.to_host(out, np.uint32).reshape(n, 5)}


# ------------------------------------------------------------------------------------------------ constant memory
KW = [0.5, -1.25, 3.0, 0.0078125, -96.0, 1024.5, -0.375, 7.0]


def _const_ref(ins):
    data, a = ins["data"], ins["a"]
    res = []
    for i, x in enumerate(int(v) for v in a):
        s = np.float32(0)
        for j in range(4):
            s = np.float32(s + np.float32(KW[(x >> (3 * j)) & 7]))
        res.append([zlib.crc32(data[i * 16:(i + 1) * 16].tobytes()), int(np.array(s).view(np.uint32))])
    return {"out": np.array(res, np.uint32)}


def _const_run(dev, mod, ins):
    n = ins["a"].size
    return {"out": _launch1d(dev, mod, "corpus_const_table", [ins["data"], ins["a"]], n * 2, n,
                             extra=[np.uint32(n)]).reshape(n, 2)}


# ------------------------------------------------------------------------------------------------ generic pointers
def _gen_ref(ins):
    g = [int(v) for v in ins["g"]]
    n = len(g)
    out = np.full(4 * n, POISON, np.uint32)
    for blk in range(n // 128):
        base = blk * 128
        sm = [(g[base + t] * 3 + 1) & M32 for t in range(128)]
        v = []
        for t in range(128):
            i, x = base + t, g[base + t]
            if x & 1:
                v.append(sm[(t + 5) & 127])
                out[n + i] = 1
            else:
                v.append(g[(i + 9) % n])
                out[n + i] = 2
        sm2 = list(sm)
        for t in range(128):
            i, x = base + t, g[base + t]
            if x & 2:
                sm2[t ^ 1] = (v[t] + t) & M32
            else:
                out[2 * n + i] = (v[t] + t) & M32
        for t in range(128):
            out[base + t] = v[t]
            out[3 * n + base + t] = sm2[t]
    return {"out": out}


def _gen_run(dev, mod, ins):
    n = ins["g"].size
    out = out_buf(dev, 4 * n * 4)
    dev.launch(mod, "corpus_generic_ptr", grid=(n // 128, 1, 1), block=(128, 1, 1),
               args=[dev.to_device(ins["g"]), out, np.uint32(n)])
    return {"out": dev.to_host(out, np.uint32)}


# ------------------------------------------------------------------------------------------------ reductions
def _f32add(a, b):
    with np.errstate(all="ignore"):
        r = np.float32(a) + np.float32(b)
    return np.float32(np.nan) if np.isnan(r) else r


def _canon(f):
    return 0x7FFFFFFF if np.isnan(f) else int(np.array(f, np.float32).view(np.uint32))


def _red_in(rng):
    nb = 3
    a = u32(rng, 256 * nb)
    e = rng.integers(110, 140, 256 * nb).astype(np.uint32)
    f = (rng.integers(0, 2, 256 * nb).astype(np.uint32) << 31) | (e << 23) | u32(rng, 256 * nb, 0, 1 << 23)
    f[rng.choice(256 * nb, 12, replace=False)] &= np.uint32(0x807FFFFF)    # subnormals
    f[256 + 17] = 0x7F800000                                               # block 1: +inf
    f[512 + 3], f[512 + 200] = 0x7F800000, 0xFF800000                      # block 2: inf - inf = NaN
    return {"a": a, "f": f}


def _red_ref(ins):
    a = [int(v) for v in ins["a"]]
    f = ins["f"].view(np.float32)
    nb = len(a) // 256
    blk = np.full((nb, 4), POISON, np.uint32)
    thr = np.zeros((nb * 256, 3), np.uint32)
    for b in range(nb):
        su = a[b * 256:(b + 1) * 256]
        sf = [np.float32(v) for v in f[b * 256:(b + 1) * 256]]
        s = 128
        while s:
            for t in range(s):
                su[t] = (su[t] + su[t + s]) & M32
                sf[t] = _f32add(sf[t], sf[t + s])
            s >>= 1
        tot = 0
        for wp in range(8):
            base = b * 256 + wp * 32
            w = a[base:base + 32]
            o = 16
            while o:
                w = [(w[ln] + w[ln + o if ln + o < 32 else ln]) & M32 for ln in range(32)]
                o >>= 1
            m = a[base:base + 32]
            o = 1
            while o < 32:
                m = [max(m[ln], m[ln ^ o]) for ln in range(32)]
                o <<= 1
            fw = [np.float32(v) for v in f[base:base + 32]]
            o = 16
            while o:
                fw = [_f32add(fw[ln], fw[ln ^ o]) for ln in range(32)]
                o >>= 1
            tot = (tot + w[0]) & M32
            for ln in range(32):
                thr[base + ln] = [w[ln], m[ln], _canon(fw[ln])]
        blk[b, :3] = [su[0], _canon(sf[0]), tot]
    return {"blocks": blk, "threads": thr}


def _red_run(dev, mod, ins):
    nb = ins["a"].size // 256
    out = out_buf(dev, (nb * 4 + nb * 256 * 3) * 4)
    dev.launch(mod, "corpus_reduce", grid=(nb, 1, 1), block=(256, 1, 1),
               args=[dev.to_device(ins["a"]), dev.to_device(ins["f"]), out])
    r = dev.to_host(out, np.uint32)
    return {"blocks": r[:nb * 4].reshape(nb, 4), "threads": r[nb * 4:].reshape(nb * 256, 3)}


# ------------------------------------------------------------------------------------------------ named barriers
def _bar_ref(ins):
    a = [int(v) for v in ins["a"]]
    out = np.zeros(len(a), np.uint32)
    for b in range(len(a) // 128):
        ab = a[b * 128:(b + 1) * 128]
        buf = [(v * 2654435761) & M32 for v in ab[:64]]
        buf2 = [(buf[63 - u] + u) & M32 for u in range(64)]
        for t in range(128):
            out[b * 128 + t] = ab[t] ^ 0x5555 if t < 64 else (buf2[(t - 64) ^ 1] + ab[t]) & M32
    return {"out": out}


def _bar_run(dev, mod, ins):
    n = ins["a"].size
    out = out_buf(dev, n * 4)
    dev.launch(mod, "corpus_named_barrier", grid=(n // 128, 1, 1), block=(128, 1, 1),
               args=[dev.to_device(ins["a"]), out])
    return {"out": dev.to_host(out, np.uint32)}


# ------------------------------------------------------------------------------------------------ cp.async pipeline
NTILES = 5


def _cpa_ref(ins):
    src = ins["src"].astype(np.uint64)
    nb = src.size // (NTILES * 256)
    out = np.zeros((nb * 64, 2), np.uint32)
    for b in range(nb):
        for t in range(64):
            acc0 = acc1 = 0
            for k in range(NTILES):
                tile = src[(b * NTILES + k) * 256:(b * NTILES + k + 1) * 256]
                acc0 = (acc0 + int(tile[t * 4]) * (k + 1) + int(tile[(t * 4 + 7 * k + 1) & 255])) & M32
                acc1 ^= (int(tile[255 - t]) + k) & M32
            out[b * 64 + t] = [acc0, acc1]
    return {"out": out}


def _cpa_run(dev, mod, ins):
    nb = ins["src"].size // (NTILES * 256)
    out = out_buf(dev, nb * 64 * 2 * 4)
    dev.launch(mod, "corpus_cpasync_pipeline", grid=(nb, 1, 1), block=(64, 1, 1),
               args=[dev.to_device(ins["src"]), out, np.uint32(NTILES)])
    return {"out": dev.to_host(out, np.uint32).reshape(nb * 64, 2)}


# ------------------------------------------------------------------------------------------------ votes
def _vote_ref(ins):
    a = [int(v) for v in ins["a"]]
    out = np.full((len(a), 4), POISON, np.uint32)
    for w0 in range(0, len(a), 32):
        x = a[w0:w0 + 32]
        cnt = [v & 15 for v in x]
        acc, iters = [0] * 32, 0
        while any(c > 0 for c in cnt):
            b = sum(1 << ln for ln in range(32) if cnt[ln] > 0)
            for ln in range(32):
                if cnt[ln] > 0:
                    acc[ln] = (acc[ln] + bin(b).count("1") * (iters + 1)) & M32
                    cnt[ln] -= 1
            iters += 1
        al = int(all(v & 16 for v in x)) | (int(any(v & 0x80000000 for v in x)) << 1)
        m = sum(1 << ln for ln in range(32) if x[ln] & 32)
        for ln in range(32):
            out[w0 + ln, :3] = [acc[ln], iters, al]
            if x[ln] & 32:
                b = sum(1 << k for k in range(32) if (m >> k) & 1 and x[k] & 64)
                first = (m & -m).bit_length() - 1
                out[w0 + ln, 3] = b ^ x[first]
    return {"out": out}


def _vote_run(dev, mod, ins):
    n = ins["a"].size
    out = out_buf(dev, n * 16)
    dev.launch(mod, "corpus_vote_loop", grid=(n // 64, 1, 1), block=(64, 1, 1), args=[dev.to_device(ins["a"]), out])
    return {"out": dev.to_host(out, np.uint32).reshape(n, 4)}


# ------------------------------------------------------------------------------------------------ atomics
def _hist_in(rng):
    n = 512
    return {"a": u32(rng, n), "hist0": u32(rng, 96), "gmax0": u32(rng, 4, 1, 1 << 31),
            "c0": u32(rng, 1, 1, 1 << 30)}


def _hist_run(dev, mod, ins):
    n = ins["a"].size
    H, G, C = dev.to_device(ins["hist0"]), dev.to_device(ins["gmax0"]), dev.to_device(ins["c0"])
    T, S = out_buf(dev, n * 4), out_buf(dev, n * 4)
    dev.launch(mod, "corpus_atomics_hist", grid=(n // 128, 1, 1), block=(128, 1, 1),
               args=[dev.to_device(ins["a"]), H, C, T, S, G, np.uint32(ins["c0"][0]), np.uint32(n)])
    return {"hist": dev.to_host(H, np.uint32), "gmax": dev.to_host(G, np.uint32), "ctr": dev.to_host(C, np.uint32),
            "ticket": dev.to_host(T, np.uint32), "slot": dev.to_host(S, np.uint32)}


def _hist_ref(ins):
    a = [int(v) for v in ins["a"]]
    hist = [int(v) for v in ins["hist0"]]
    gmax = [int(v) for v in ins["gmax0"]]
    for b in range(len(a) // 128):
        sh = [0] * 32
        for x in a[b * 128:(b + 1) * 128]:
            sh[x & 31] += 1
            hist[(x >> 5) & 63] = (hist[(x >> 5) & 63] + (x >> 16)) & M32
            gmax[x & 3] = max(gmax[x & 3], x)
        for t in range(32):
            hist[64 + t] = (hist[64 + t] + sh[t]) & M32
    return {"hist": np.array(hist, np.uint32), "gmax": np.array(gmax, np.uint32),
            "ctr": np.array([(int(ins["c0"][0]) + len(a)) & M32], np.uint32)}


def _hist_validate(ins, outs):
    n, c0 = ins["a"].size, int(ins["c0"][0])
    tk, sl = outs["ticket"].astype(np.int64), outs["slot"].astype(np.int64)
    probs = []
    if sorted(tk.tolist()) != list(range(c0, c0 + n)):
        probs.append("tickets are not a permutation of c0..c0+n-1")
    elif not np.array_equal(sl[tk - c0], np.arange(n)):
        probs.append("slot[ticket[i] - c0] != i")
    return probs


# ------------------------------------------------------------------------------------------------ dynamic smem, scan
DW, DH = 48, 32


def _dsm_run(dev, mod, ins):
    out = out_buf(dev, DW * DH * 4)
    dev.launch(mod, "corpus_dyn_smem", grid=(DW // 16, DH // 16, 1), block=(16, 8, 1), shared_bytes=16 * 17 * 4,
               args=[dev.to_device(ins["a"]), out, np.uint32(DW), np.uint32(DH)])
    return {"out": dev.to_host(out, np.uint32).reshape(DW, DH)}


def _dsm_ref(ins):
    a = ins["a"].reshape(DH, DW)
    return {"out": a.T ^ ((np.arange(DW, dtype=np.uint32) % 16) << 16)[:, None]}


SCAN_BLOCK = 80


def _scan_run(dev, mod, ins):
    n = ins["a"].size
    out = out_buf(dev, n * 12)
    dev.launch(mod, "corpus_scan_partial", grid=(n // SCAN_BLOCK, 1, 1), block=(SCAN_BLOCK, 1, 1),
               args=[dev.to_device(ins["a"]), out])
    return {"out": dev.to_host(out, np.uint32).reshape(n, 3)}


def _scan_ref(ins):
    a = [int(v) for v in ins["a"]]
    out = np.zeros((len(a), 3), np.uint32)
    for b0 in range(0, len(a), SCAN_BLOCK):
        for w0 in range(0, SCAN_BLOCK, 32):
            nl = min(32, SCAN_BLOCK - w0)
            xs = a[b0 + w0:b0 + w0 + nl]
            mask = M32 if nl == 32 else (1 << nl) - 1
            for ln in range(nl):
                out[b0 + w0 + ln] = [sum(xs[:ln + 1]) & M32, mask, sum(xs) & M32]
    return {"out": out}


# ------------------------------------------------------------------------------------------------ integer edge cases
def _int_in(rng):
    n = 256
    ti = load_test_module("test_emu_int")
    a, b = ti.mixed32(rng, n), ti.mixed32(rng, n)
    b[b == 0] = 1
    return {"a": a, "b": b}


def _prmt(x, y, s):
    src = ((y << 32) | x).to_bytes(8, "little")
    return sum(src[(s >> (4 * j)) & 7] << (8 * j) for j in range(4))


def _int_ref(ins):
    res = []
    for x, y in zip((int(v) for v in ins["a"]), (int(v) for v in ins["b"])):
        sx, sy = _s32(x), _s32(y)
        d = (y >> 1) | 1
        if y & 0x80000000:
            d = -d
        X = (x << 32) | y
        Y = (((y >> (x & 31)) << (y & 15)) & M64) | 1
        SX = _s64(X)
        SY = (Y >> 1) * (-1 if x & 4 else 1)
        if SY in (0, -1):
            SY = 3
        q, r = X // Y, X % Y
        sq, sr = _tdiv(SX, SY) & M64, _trem(SX, SY) & M64
        h = (X * Y) >> 64
        sh_l = (((y << 32 | x) << ((y >> 27) & 31)) >> 32) & M32
        sh_r = (((y << 32) | x) >> min(y >> 26, 32)) & M32
        row = [x // y, x % y, _tdiv(sx, d), _trem(sx, d), x // 7, _tdiv(sx, -3), x % 10,
               q, q >> 32, r, r >> 32, sq, sq >> 32, sr, sr >> 32,
               32 - x.bit_length(), bin(x).count("1"), _brev(x), (x & -x).bit_length(),
               _prmt(x, y, y & 0x7777), sh_l, sh_r, (sx * sy) >> 32, (x * y) >> 32,
               (h & M32) ^ (h >> 32), abs(sx - sy) + (x >> 8), ((sx + sy) >> 1) ^ ((x + y + 1) >> 1), sx >> (y & 31)]
        res.append([v & M32 for v in row])
    return {"out": np.array(res, np.uint32)}


def _int_run(dev, mod, ins):
    n = ins["a"].size
    return {"out": _launch1d(dev, mod, "corpus_int_edge", [ins["a"], ins["b"]], n * 28, n,
                             extra=[np.uint32(n)]).reshape(n, 28)}


# ------------------------------------------------------------------------------------------------ float edge cases
def _flt_in(rng):
    n = 256
    tf = load_test_module("test_emu_float")
    a, b, c = (tf.gen_inputs(rng, "f32", n) for _ in range(3))
    d = tf.gen_inputs(rng, "f64", n)
    # f64 values near the f32 range limits (overflow, subnormal, rounding) for the narrowing cast
    k = n // 4
    e = rng.integers(1023 - 152, 1023 + 130, k).astype(np.uint64)
    d[:k] = (rng.integers(0, 2, k).astype(np.uint64) << np.uint64(63)) | (e << np.uint64(52)) | (
        rng.integers(0, 2**52, k, dtype=np.uint64))
    # exact integers, halves and small values for rint/floor/ceil/trunc and the integer casts
    m = n // 8
    a[k:k + m] = (rng.integers(-600, 600, m) / 4.0).astype(np.float32).view(np.uint32)
    return {"a": a, "b": b, "c": c, "d": d}


def _flt_ref(ins):
    tf = load_test_module("test_emu_float")
    tc = load_test_module("test_emu_cvt")
    res = []
    for x, y, z, w in zip(*(map(int, ins[k]) for k in ("a", "b", "c", "d"))):
        fx, fy, fz = _f32(x), _f32(y), _f32(z)
        fw = struct.unpack("<d", struct.pack("<Q", w))[0]
        nanx = math.isnan(fx)
        wx = tc.canon64(fx)
        row = [tf.ref_div(x, y, "f32", "rn"), tf.ref_sqrt(x, "f32", "rn"), tf.ref_fma(x, y, z, "f32", "rn"),
               tf.ref_minmax(x, y, "f32", False), tf.ref_minmax(x, y, "f32", True),
               tc.canon32(tc.integral(fx, "rni", 32)), tc.canon32(tc.integral(fx, "rmi", 32)),
               tc.canon32(tc.integral(fx, "rpi", 32)), tc.canon32(tc.integral(fx, "rzi", 32)),
               tc.to_int(fx, "rzi", 32, True, False), tc.to_int(fx, "rzi", 32, False, False),
               tc.to_f32(_s32(x), "rn"), tc.to_f32(y, "rn"),
               # f64 -> f32 of a NaN keeps sign and the top payload bits, quieted (H100, 2026-11-22)
               (((w >> 32) & 0x80000000) | 0x7FC00000 | ((w >> 29) & 0x003FFFFF)) if math.isnan(fw)
               else tc.to_f32(fw, "rn"),
               wx & M32, wx >> 32,
               tc.T_F16.round(fx, "rn") if not nanx else 0x7FFF, tc.canon32(tc.f16v(x & 0xFFFF)),
               tf.ref_add(x, y, "f32", "rz"), tf.ref_mul(x, y, "f32", "rp"), tf.ref_sat(x, "f32"),
               (y & 0x80000000) | (x & 0x7FFFFFFF),
               # abs/neg of a NaN give the canonical NaN on the H100 (2026-11-22, corpus seed 20261122)
               0x7FFFFFFF if nanx else x & 0x7FFFFFFF, 0x7FFFFFFF if nanx else x ^ 0x80000000,
               tf.ref_add(x, y, "f32", "rn", sub=True), tf.ref_mul(x, y, "f32", "rn"), tf.ref_div(x, y, "f32", "rz"),
               int(nanx) | (int(fy == fy) << 1) | (int(fx < fy) << 2) | (int(fx >= fz) << 3) | (int(fx == fz) << 4)]
        res.append(row)
    prod = [tf.ref_mul(x, z, "f32", "rn") for x, z in zip(map(int, ins["a"]), map(int, ins["c"]))]
    full = np.array(res, np.uint64).astype(np.uint32)
    keep = [k for k in range(28) if k not in (14, 15)]
    return {"out": np.ascontiguousarray(full[:, keep]), "f64_of_x": _f64_words(full),
            "prod": np.array(prod, np.uint32)}


def _flt_run(dev, mod, ins):
    n = ins["a"].size
    r = _launch1d(dev, mod, "corpus_float_edge", [ins[k] for k in "abcd"], n * 30, n,
                  extra=[np.uint32(n)]).reshape(n, 30)
    keep = [k for k in range(28) if k not in (14, 15)]
    return {"out": np.ascontiguousarray(r[:, keep]), "f64_of_x": _f64_words(r),
            "contract": np.ascontiguousarray(r[:, 28]),
            "prod": np.ascontiguousarray(r[:, 29])}


def _f64_words(r):
    """Columns 14/15 (low/high word of (double)x) as one f64 word: its NaN payload is compared by class."""
    return r[:, 14].astype(np.uint64) | (r[:, 15].astype(np.uint64) << np.uint64(32))


def _flt_validate(ins, outs):
    """contract[i] = p + y with p = x*z: either two roundings (emulator) or one fused rounding (ptxas FFMA)."""
    tf = load_test_module("test_emu_float")
    bad = []
    for i, (x, y, z) in enumerate(zip(*(map(int, ins[k]) for k in "abc"))):
        g = int(outs["contract"][i])
        two = tf.ref_add(tf.ref_mul(x, z, "f32", "rn"), y, "f32", "rn")
        if g != two and g != tf.ref_fma(x, z, y, "f32", "rn"):
            bad.append(f"contract[{i}] = {g:#x}: neither RN(RN(x*z)+y) {two:#x} nor fma")
    return bad[:8]



# ------------------------------------------------------------------------------------------------ split-K fixup
SK_T, SK_S = 96, 6          # 96 tiles x 6 splits = 576 CTAs of 64 threads, launched twice on one workspace


def _sk_in(rng):
    # small nonzero integers as f32: every order of the fp32 adds is exact (|sum| < 2**24), no subnormals
    v = rng.integers(-4096, 4097, SK_S * SK_T * 256)
    v[v == 0] = 1
    return {"parts": v.astype(np.float32)}


def _sk_run(dev, mod, ins):
    P = dev.to_device(ins["parts"])
    WS, CNT = dev.empty(SK_T * 256 * 4), dev.empty(SK_T * 4)
    dev.memset(WS, 0)
    dev.memset(CNT, 0)
    res = {}
    for i in (1, 2):        # the second launch proves the kernel left workspace and counters zero
        O, A = out_buf(dev, SK_T * 256 * 4), out_buf(dev, SK_T * SK_S * 4)
        dev.launch(mod, "splitk_fixup", grid=(SK_T, SK_S, 1), block=(64, 1, 1),
                   args=[P, WS, CNT, O, A, np.uint32(SK_S)])
        res[f"out{i}"] = dev.to_host(O, np.uint32)
        res[f"arrive{i}"] = dev.to_host(A, np.uint32)
    res["ws_after"] = dev.to_host(WS, np.uint32)
    res["cnt_after"] = dev.to_host(CNT, np.uint32)
    return res


def _sk_ref(ins):
    tot = ins["parts"].astype(np.float64).reshape(SK_S, SK_T * 256).sum(0).astype(np.float32).view(np.uint32)
    return {"out1": tot, "out2": tot, "ws_after": np.zeros(SK_T * 256, np.uint32),
            "cnt_after": np.zeros(SK_T, np.uint32)}


def _sk_validate(ins, outs):
    probs = []
    for i in (1, 2):
        a = outs[f"arrive{i}"].reshape(SK_T, SK_S)
        bad = [t for t in range(SK_T) if sorted(a[t].tolist()) != list(range(SK_S))]
        if bad:
            probs.append(f"launch {i}: tiles {bad[:5]} did not see the counter values 0..{SK_S - 1} once each")
    return probs


ENTRIES = [
    Entry("divergence", CTRL, _div_in, _div_run, _div_ref,
          note="nested if/else, per-thread loop trip counts, continue/break, switch with fallthrough, early return"),
    Entry("local_array", CTRL, lambda rng: {"a": u32(rng, 200)}, _loc_run, _loc_ref,
          note="32-word local array, data-dependent indices (ld/st.local)"),
    Entry("noinline_call", CTRL, lambda rng: {"a": u32(rng, 160), "b": u32(rng, 160)}, _call_run, _call_ref,
          note="__noinline__ call/ret, pointer to caller local, float loop, recursion"),
    Entry("grid3d", CTRL, lambda rng: {"salt": u32(rng, 1)}, _grid_run, _grid_ref,
          note="3-D grid (3,2,2) x 3-D block (8,4,3): tid/ctaid/ntid/nctaid/laneid"),
    Entry("const_table", CTRL, lambda rng: {"data": rng.integers(0, 256, 16 * 192).astype(np.uint8),
                                            "a": u32(rng, 192)}, _const_run, _const_ref,
          note="__constant__ CRC32 table (divergent indices) and float weights"),
    Entry("generic_ptr", CTRL, lambda rng: {"g": u32(rng, 256)}, _gen_run, _gen_ref,
          note="generic loads/stores that hit shared or global per thread, isspacep"),
    Entry("reduce", SYNC, _red_in, _red_run, _red_ref,
          note="shared-memory tree reduction with __syncthreads (u32 and f32 incl. inf/NaN/subnormal), "
               "shfl.down/shfl.xor warp reductions"),
    Entry("named_barrier", SYNC, lambda rng: {"a": u32(rng, 256)}, _bar_run, _bar_ref,
          note="bar.arrive 1,128 producers / bar.sync 1,128 consumers, bar.sync 2,64 on a subset"),
    Entry("cpasync_pipeline", SYNC, lambda rng: {"src": u32(rng, 2 * NTILES * 256)}, _cpa_run, _cpa_ref,
          note="double-buffered cp.async.cg pipeline, commit_group/wait_group 1"),
    Entry("vote_loop", SYNC, lambda rng: {"a": u32(rng, 128)}, _vote_run, _vote_ref,
          note="vote.any-controlled loop, ballot/popc, vote.all, sub-warp ballot/shfl in a divergent branch"),
    Entry("atomics_hist", SYNC, _hist_in, _hist_run, _hist_ref,
          modes={"ticket": "serialization", "slot": "serialization"}, validate=_hist_validate,
          note="global and shared atomicAdd histograms, atomicMax, ticket counter (order-dependent)"),
    Entry("dyn_smem", SYNC, lambda rng: {"a": u32(rng, DW * DH)}, _dsm_run, _dsm_ref,
          note="dynamic shared memory (extern __shared__, launch shared_bytes), 2-D block, padded-tile transpose"),
    Entry("scan_partial", SYNC, lambda rng: {"a": u32(rng, 2 * SCAN_BLOCK)}, _scan_run, _scan_ref,
          note="partial last warp (block 80): shfl.up scan, redux.sync and __syncwarp with a partial membermask"),
    Entry("splitk_fixup", SPLITK, _sk_in, _sk_run, _sk_ref,
          modes={"arrive1": "serialization", "arrive2": "serialization"}, validate=_sk_validate,
          note="split-K serial fixup of blocks/splitk.cuh: red.v4.f32, fence.acq_rel + bar + atom.acq_rel.inc "
               "last arriver, ld/st.relaxed.gpu; launched twice on one workspace"),
    Entry("int_edge", NUM, _int_in, _int_run, _int_ref,
          note="C-level integer edge cases: magic-number and 64-bit software division, clz/popc/brev/ffs, "
               "byte_perm, funnel shifts, mulhi, sad, hadd"),
    Entry("float_edge", NUM, _flt_in, _flt_run, _flt_ref, modes={"contract": "contraction", "f64_of_x": "nanclass"},
          validate=_flt_validate,
          note="C-level f32 edge cases (NaN/Inf/denormals): prec-div/sqrt, contraction, fmin/fmax, rint/floor/"
               "ceil/trunc, casts, f64<->f32, f16 cvt, directed-rounding intrinsics, saturate, comparisons"),
]

# PTX that each new kernel must contain (tests/emu/test_corpus.py checks it, so a compiler change that optimises a
# feature away is noticed): entry -> (kernel symbol, substrings of its .entry body)
PTX_FEATURES = {
    "divergence": ("corpus_divergence", ["bra", "popc"]),
    "local_array": ("corpus_local_array", ["ld.local", "st.local"]),
    "noinline_call": ("corpus_noinline_call", ["call"]),
    "grid3d": ("corpus_grid3d", ["%ctaid.z", "%tid.z", "%nctaid.y", "%ntid.z", "%laneid"]),
    "const_table": ("corpus_const_table", ["ld.const"]),
    "generic_ptr": ("corpus_generic_ptr", ["cvta.shared", "isspacep.shared", "ld.volatile.u32", "st.volatile.u32"]),
    "reduce": ("corpus_reduce", ["shfl.sync.down", "shfl.sync.bfly", "bar.sync"]),
    "named_barrier": ("corpus_named_barrier", ["bar.arrive 1, 128", "bar.sync 1, 128", "bar.sync 2, 64"]),
    "cpasync_pipeline": ("corpus_cpasync_pipeline", ["cp.async.cg.shared.global", "cp.async.wait_group 1"]),
    "vote_loop": ("corpus_vote_loop", ["vote.sync.any", "vote.sync.ballot", "vote.sync.all", "shfl.sync.idx"]),
    "atomics_hist": ("corpus_atomics_hist", ["atom.shared.add", "atom.global.add", "atom.global.max"]),
    "dyn_smem": ("corpus_dyn_smem", ["bar.sync", "ld.shared", "st.shared"]),
    "scan_partial": ("corpus_scan_partial", ["shfl.sync.up", "redux.sync.add", "bar.warp.sync"]),
    "int_edge": ("corpus_int_edge", ["div.u64", "div.s64", "prmt", "shf.l", "mul.hi", "brev", "clz"]),
    "float_edge": ("corpus_float_edge", ["div.rn.f32", "sqrt.rn.f32", "fma.rn.f32", "cvt.rni.f32.f32",
                                         "cvt.rn.f32.f64", "add.rz.f32", "mul.rp.f32", "mul.f32"]),
}
