"""Hardware parameter tables of the timing model: one per GPU, every value with its source.

Sources are one of
* ``H100 measured here``: a microbenchmark of ``benchmarks/validate_timing.py --micro`` run on the lent H100
  (command, date and raw numbers in NOTES.md, section "Timing model");
* ``NVIDIA docs``: a datasheet, architecture whitepaper or the CUDA C++ Programming Guide (named);
* a public microbenchmark publication (named, with its arXiv number);
* ``NO SOURCE``: an assumption, stated as such; ``python lab.py time ... --sensitivity`` reports how much the
  prediction moves when each such value is halved / doubled.

Units: bandwidths in bytes/s, latencies in ns or SM cycles (named), rates per SM per cycle.
The H200 table takes the H100's SM-side values (same GH100 SM, NVIDIA docs) and its memory system from its own
datasheet only: it is the out-of-sample test of how a table carries to a GPU the model was not calibrated on.
"""
from __future__ import annotations

from dataclasses import dataclass, field, fields, replace

H100_MEASURED = "H100 measured here (benchmarks/validate_timing.py --micro, NOTES.md 'Timing model', 2026-11-24)"
HOPPER_WP = "NVIDIA H100 Tensor Core GPU Architecture whitepaper (GH100, SXM5)"
CUDA_GUIDE = "CUDA C++ Programming Guide, compute capabilities table (cc 9.0 / 10.0)"
H100_DS = "NVIDIA H100 datasheet (SXM5: 3.35 TB/s HBM3)"
H200_DS = "NVIDIA H200 datasheet (SXM: 4.8 TB/s HBM3e, 141 GB)"
B200_DS = "NVIDIA HGX B200 / DGX B200 datasheet (8 TB/s HBM3e per GPU; dense FP4 9 PFLOPS per GPU)"
HOPPER_UB = "Luo et al., Dissecting the NVIDIA Hopper Architecture through Microbenchmarking, arXiv:2501.12084"
HOPPER_UB2 = "Luo et al., Benchmarking and Dissecting the Nvidia Hopper GPU Architecture, arXiv:2402.13499 (SM-to-SM)"
H100_CLUSTER = ("H100 measured here (benchmarks/validate_timing.py --micro, cluster probes; NOTES.md 'Timing model: "
                "clusters', 2026-11-24)")
H100_CLUSTER_LOAD = ("H100 measured here (benchmarks/validate_timing.py --gpu-side --micro-cluster load probes, then "
                     "--calibrate-cluster; NOTES.md 'Timing model: cluster load', 2026-11-24)")
H100_CLUSTER_LAW = ("H100 measured here (benchmarks/validate_timing.py --gpu-side --micro-cluster, then --calibrate-cluster; "
                    "NOTES.md 'Timing model: cluster law', 2026-11-24)")
H100_CLUSTER_WARPS = ("H100 measured here (benchmarks/validate_timing.py --gpu-side --micro-cluster wide-CTA probes, "
                      "then --calibrate-cluster; NOTES.md 'Timing model: cluster warps', 2026-11-24)")
BW_UB = "Jarmusch & Chandrasekaran, Microbenchmarking NVIDIA's Blackwell Architecture (B200), arXiv:2512.02189"
BW_SA = "SemiAnalysis, Dissecting Nvidia Blackwell - Tensor Cores, PTX Instructions (B200 microbenchmarks)"
CNC_B200 = "Chips and Cheese, Nvidia's B200: Keeping the CUDA Juggernaut Rolling (148 SMs, 126 MB L2, ~150 ns L2)"
PTX_ISA = "PTX ISA 9.7.16 (tcgen05.mma shapes: M 128, K 64 for kind::mxf4nvf4, K 16 for kind::f16)"
NO_SOURCE = "NO SOURCE (assumption; see the sensitivity report)"


@dataclass(frozen=True)
class GpuParams:
    name: str
    sms: int
    clock_ghz: float                 # SM clock under load
    dram_bw: float                   # achievable DRAM bandwidth, bytes/s
    dram_latency_ns: float           # load-to-use latency of a DRAM miss (idle)
    burst_window_ns: float           # how far one SM's DRAM/L2 use may run ahead of its average share (sim.py)
    l2_bw: float                     # L2 hit bandwidth, bytes/s (whole GPU)
    l2_latency_ns: float
    l2_bytes: int
    sm_l1_bytes_clk: float           # per-SM L1/LSU throughput for global accesses (bytes per cycle)
    sm_dram_bytes_clk: float         # per-SM cap on L2->SM fill bandwidth (bytes per cycle)
    smem_bytes_clk: float            # shared memory bandwidth per SM (bytes/cycle = 32 banks x 4 B)
    smem_latency_clk: float
    issue_per_smsp: float            # warp-instructions issued per cycle per SM sub-partition
    smsps: int
    fp32_lanes: int                  # FP32 FMA lanes per SM
    int_lanes: int                   # integer ALU lanes per SM
    sfu_lanes: int                   # MUFU lanes per SM
    alu_latency_clk: float           # dependent-issue latency of a simple ALU / FMA instruction
    sfu_latency_clk: float
    shfl_latency_clk: float
    cvt_latency_clk: float
    launch_us: float                 # fixed cost of one launch as back-to-back CUDA-event timing sees it
    cta_launch_ns: float             # cost of starting one CTA on an SM (block scheduler)
    bar_latency_clk: float           # bar.sync release to next issue
    mbar_latency_clk: float          # mbarrier phase completion to the waiting warp's next issue
    mbar_arrive_clk: float           # mbarrier.arrive issue to its effect on the barrier (a shared-memory atomic)
    tma_issue_clk: float             # TMA unit occupancy per tensor / bulk copy issued
    tma_latency_ns: float            # extra latency of a TMA copy beyond the memory latency
    tma_bytes_clk: float             # bytes per cycle one SM's TMA / bulk-copy unit lands in shared memory
    tc_flops_clk: dict               # tensor-core FLOP per cycle per SM, per tcgen05 kind
    tmem_ld_bytes_clk: float         # tcgen05.ld bandwidth per SM
    tmem_ld_latency_clk: float
    # thread-block clusters (ptx_docs/timing.md "Clusters")
    dsmem_latency_clk: float         # DSMEM load round trip to a peer SM (SM-to-SM network), beyond issue
    dsmem_bytes_clk: float           # one SM's DSMEM / peer bulk-copy bandwidth (bytes per cycle, SM-to-SM port)
    dsmem_narrow_bytes_clk: float    # ... for DSMEM accesses of <= 4 B per thread (one 128-B request per warp)
    cluster_bar_latency_clk: float   # barrier.cluster, last arrive to the waiters' next issue: the law's constant a
    cluster_bar_per_cta_clk: float   # ... + b x CTAs per cluster
    cluster_bar_per_warp_clk: float  # ... + c x warps per CTA (cluster_bar_clk below)
    cluster_release_clk: float       # an mbarrier arrive with .release at .cluster scope holds the issuing warp
    cluster_release_shared_clk: float  # ... this long instead when its SM also runs CTAs of other clusters (load)
    cluster_release_cta_clk: float   # ... and occupies its CTA's release path this long (per-CTA throughput)
    cluster_bar_wide_clk: dict       # barrier.cluster: extra clk for wide CTAs {warps per CTA: clk} (0 at <= 8 warps)
    cluster_bar_shared_clk: dict     # ... extra clk on an SM shared by n CTAs of different clusters {(warps, n): clk}
    # SASS issue (sim_sass.py): latencies of variable-latency results without a recorded memory event, by kind
    # (sass_ops.py: mufu, cvt, s2r, shfl, ldc, mem, other), and when a read barrier clears after issue
    var_latency_clk: dict = field(default_factory=dict)
    operand_read_clk: float = 4.0
    l1_latency_clk: float = 33.0     # global load hitting in L1, issue to data
    l1_sm_bytes: int = 262144        # L1 + shared memory SRAM per SM (the L1 gets what the shared carveout leaves)
    shfl_per_clk_sm: float = 1.0     # warp shuffles per clock per SM (one shared unit)
    l1_lines_clk: float = 1.0        # 128-byte lines the L1 looks up per clock per SM (uncoalesced accesses)
    # tcgen05.mma: initiation interval (cycles) per {(cta group, M): {N: II}} at the kind's native K (measured with
    # kind::f16, K = 16; kind-independent in cycles) and the fixed completion latency after it {"SS1"/"TS1"/...}
    tc_ii_clk: dict = field(default_factory=dict)
    tc_latency_clk: dict = field(default_factory=dict)
    max_threads_sm: int = 2048
    max_ctas_sm: int = 32
    regs_sm: int = 65536
    smem_sm: int = 233472            # shared memory per SM usable by CTAs (228 KiB)
    smem_per_cta_reserved: int = 1024
    tmem_cols: int = 512
    # latency of a DRAM read under load / the idle pointer-chase latency (Little's law with the loaded latency:
    # sim.py charges dram_latency_ns x this; round 2 of issue 21, ptx_docs/timing.md "Round 2")
    dram_loaded_factor: float = 1.0
    # the loaded latency grows with the DRAM's use, 1 + (dram_loaded_factor - 1) x utilisation so far (queueing: a
    # DRAM read waits behind the other SMs' only while they stream); False: the flat round-2 factor (every table)
    dram_loaded_by_util: bool = False
    # the first wave's CTAs of an SM start this many cta_launch_ns apart (the block scheduler hands them over one at
    # a time); 0: all at once, as in round 2 (the CTAs then run in lockstep); off in every table (sources say why)
    cta_stagger: float = 0.0
    # GPU-wide L2 request rates (requests per SM clock; 0 = not modelled): a request is one warp access's touch of
    # one 128-byte line, whatever its sectors, so scattered single-sector accesses are bound by the request rate
    # long before the L2's byte bandwidth; a write request takes l2_read_req_clk / l2_write_req_clk read slots
    # (round 3 of issue 21, ptx_docs/timing.md "Round 3")
    l2_read_req_clk: float = 0.0
    l2_write_req_clk: float = 0.0
    sources: dict = field(default_factory=dict, compare=False)

    def cycles(self, ns: float) -> float:
        return ns * self.clock_ghz

    def cluster_bar_clk(self, ctas: int, warps: int, per_sm: int = 1) -> float:
        """barrier.cluster latency law (ptx_docs/timing.md "Clusters"): a + b x cluster size + c x warps per CTA
        + wide(warps) (one cluster, CTAs of more than 8 warps); on an SM running ``per_sm`` >= 2 CTAs of different
        clusters + shared(warps, per_sm) (barrier.cluster.arrive is a .release at .cluster scope by default, PTX ISA
        9.7.13.3; the H100 probes show the increment depends on the warps and the CTAs per SM, not a constant)."""
        lat = self.cluster_bar_latency_clk + self.cluster_bar_per_cta_clk * ctas + self.cluster_bar_per_warp_clk * warps
        lat += _interp({8: 0.0, **self.cluster_bar_wide_clk}, warps, below=0.0)
        if per_sm >= 2 and self.cluster_bar_shared_clk:
            lat += cluster_bar_shared(self.cluster_bar_shared_clk, warps, per_sm)
        return lat

    def tc_ii(self, cta_group: int, m: int, n: int) -> float:
        """tcgen05.mma initiation interval of an M x N tile (cycles; 0 when the table has no such shape), linear
        between the measured N, clamped at the ends."""
        row = self.tc_ii_clk.get((int(cta_group), int(m)))
        return _interp(row, n) if row else 0.0

    def with_(self, **kw) -> "GpuParams":
        return replace(self, **kw)


def _interp(knots: dict, x: float, below=None) -> float:
    """Piecewise-linear in x through {x_k: y_k}, constant beyond the last knot; before the first: ``below`` if given,
    else the first knot's value."""
    xs = sorted(knots)
    if x <= xs[0]:
        return knots[xs[0]] if below is None or x == xs[0] else below
    for x0, x1 in zip(xs, xs[1:]):
        if x <= x1:
            return knots[x0] + (knots[x1] - knots[x0]) * (x - x0) / (x1 - x0)
    return knots[xs[-1]]


def cluster_bar_shared(table: dict, warps: int, per_sm: int) -> float:
    """The shared-SM barrier.cluster increment for ``warps`` per CTA and ``per_sm`` CTAs per SM from the probe table
    {(warps, CTAs per SM): clk}: the probed CTAs-per-SM row nearest ``per_sm`` (ties: the smaller) that has a knot at
    or above ``warps`` if one has (else the nearest row), piecewise-linear in the warps, clamped at its end knots."""
    rows: dict = {}
    for (w, n), v in table.items():
        rows.setdefault(n, {})[w] = v
    order = sorted(rows, key=lambda n: (abs(n - per_sm), n))
    cover = [n for n in order if max(rows[n]) >= warps]
    return _interp(rows[(cover or order)[0]], warps)


def _check(p: GpuParams) -> GpuParams:
    missing = [f.name for f in fields(p) if f.name not in ("name", "sources") and f.name not in p.sources]
    if missing:
        raise AssertionError(f"timing params {p.name}: no source for {missing}")
    return p


# ------------------------------------------------------------------------------------------------ H100 (SXM5)
# cluster law (benchmarks/validate_timing.py --calibrate-cluster benchmarks/data/timing_measured_h100_cluster_warps_20261124.json,
# re-derived 2026-11-27 under SASS issue (issue 21): the same H100 probes minus the SASS model's own loop cycles)
CBAR_A, CBAR_B, CBAR_C = 659.7, 13.7, 13.4      # clk: a + b x CTAs per cluster + c x warps per CTA
REL_L = 671.5                                  # clk: .release.cluster arrive hold (SM alone with its cluster)
# load law
REL_S, REL_X = 960.0, 116.1                    # clk: hold on an SM shared by >= 2 clusters' CTAs, per-CTA occupancy
# wide-CTA / shared-SM barrier law
DSMEM_NARROW = 11.9                            # B/clk: SM-to-SM port for <= 4-B-per-thread accesses
CBAR_WIDE = {16: 300.7, 32: 140.5}             # clk over a + b C + c W for one cluster, {warps per CTA: clk}
CBAR_SHARED = {(4, 2): 202.1, (4, 4): 228.1, (8, 2): 505.8, (8, 4): 342.5,    # clk on a shared SM,
               (16, 2): 84.8, (16, 4): 120.3, (32, 2): 105.4}                  # {(warps/CTA, CTAs/SM): clk}
H100_VAR_LAT = {"mufu": 17.0, "cvt": 18.3, "s2r": 24.0, "shfl": 26.3, "ldc": 29.5, "mem": 29.0, "other": 8.0}
H100_SERIES = ("H100 measured here (tools/probes/timing_model_h100.py run, micro-benchmarks, NOTES.md 'Timing model "
               "issue 21', 2026-11-27)")
# Values marked H100_MEASURED come from benchmarks/validate_timing.py --gpu-side --micro on the lent H100 80GB HBM3
# (2026-11-24; raw numbers in benchmarks/data/timing_measured_h100_20261124.json "micro" and NOTES.md).
# loaded / idle DRAM latency: a DRAM read issued while the GPU streams waits behind the other SMs' requests, so
# the latency that Little's law needs is above the idle pointer chase's.  Fitted (one number, all kernels) on the
# 73 spent kernels of the issue-21 corpus (round 2 calibration): counters.py --replay dram_latency_ns*F
LOADED = 1.5
# L2 requests per clock (GPU-wide), from ncu counters of the spent corpus (issue 21 round 3 calibration): the
# strided single-sector transposes, lts__t_requests_srcunit_tex_op_{read,write}.sum / gpu__time_duration.sum x clock:
# reads row2col f32 55.6, row2col f32x4 57.8 (one sector per request); writes col2row f32 28.0, col2row f32x4 27.0,
# cuda-samples transposeNaive 29.7 (one 4-B write per request) -> the means of each group
L2_RD_REQ, L2_WR_REQ = 56.7, 28.2
L2_REQ_SOURCE = ("fitted on 5 spent corpus transposes' H100 ncu counters (issue 21 round 3 calibration; "
                 "data/ncu_counters_h100_*; ptx_docs/timing.md 'Round 3'): L2 requests / kernel time, ")
LOADED_UTIL_SOURCE = ("OFF in the frozen round-3 model: the latency loaded by the DRAM's use so far (queueing) helps "
                      "the tree reductions (+38 -> +31 %) but makes the latency-bound SGEMM steps 10-20 points too "
                      "fast (the flat factor was fitted on them) on the 121 spent corpus kernels (issue 21 round 3, "
                      "ptx_docs/timing.md 'Round 3')")
STAGGER_SOURCE = ("OFF (0) in the frozen round-3 model: one CTA launch cost (cta_launch_ns, measured with 1024-thread "
                  "CTAs) per CTA fixes the tree reductions (lockstep CTAs) but makes streams of 2-warp CTAs "
                  "launch-bound (+22..+52 %) on the spent corpus: the launch cost must depend on the CTA's size "
                  "(issue 21 round 3, ptx_docs/timing.md 'Round 3')")
LOADED_SOURCE = ("fitted on the 73 spent corpus kernels (issue 21 round 2 calibration, H100 measured 2026-11-27; "
                 "counters.py --replay dram_latency_ns*F, ptx_docs/timing.md 'Round 2')")
H100 = _check(GpuParams(
    name="h100", sms=132, clock_ghz=1.979,
    dram_bw=3.01e12, dram_latency_ns=347.0, burst_window_ns=2000.0, dram_loaded_factor=LOADED,
    l2_bw=7.53e12, l2_latency_ns=143.0, l2_bytes=50 * 2**20,
    sm_l1_bytes_clk=111.6, sm_dram_bytes_clk=73.3, smem_bytes_clk=123.4, smem_latency_clk=28.0,
    issue_per_smsp=1.0, smsps=4, fp32_lanes=128, int_lanes=64, sfu_lanes=16,
    alu_latency_clk=4.13, sfu_latency_clk=18.0, shfl_latency_clk=24.0, cvt_latency_clk=8.0,
    launch_us=3.78, cta_launch_ns=213.0, bar_latency_clk=24.7, mbar_latency_clk=24.0, mbar_arrive_clk=33.0,
    tma_issue_clk=8.0, tma_latency_ns=30.0, tma_bytes_clk=103.0,
    tc_flops_clk={"f16": 4096.0, "mxf4nvf4": 16384.0, "mxf4": 16384.0, "mxf8f6f4": 8192.0, "f8f6f4": 8192.0,
                  "tf32": 2048.0, "i8": 8192.0, "cp": 0.0},
    tmem_ld_bytes_clk=0.0, tmem_ld_latency_clk=0.0, tc_ii_clk={}, tc_latency_clk={},
    dsmem_latency_clk=177.6, dsmem_bytes_clk=8.2, dsmem_narrow_bytes_clk=DSMEM_NARROW,
    cluster_bar_latency_clk=CBAR_A, cluster_bar_per_cta_clk=CBAR_B, cluster_bar_per_warp_clk=CBAR_C,
    cluster_release_clk=REL_L, cluster_release_shared_clk=REL_S, cluster_release_cta_clk=REL_X,
    cluster_bar_wide_clk=CBAR_WIDE, cluster_bar_shared_clk=CBAR_SHARED,
    var_latency_clk=dict(H100_VAR_LAT), operand_read_clk=4.0, l1_latency_clk=40.0, l1_sm_bytes=240 * 1024,
    shfl_per_clk_sm=0.985, l1_lines_clk=1.0, l2_read_req_clk=L2_RD_REQ, l2_write_req_clk=L2_WR_REQ,
    sources={
        "l2_read_req_clk": L2_REQ_SOURCE + "single-sector reads (row2col f32 55.6, f32x4 57.8 per clock)",
        "l2_write_req_clk": L2_REQ_SOURCE + "single-sector partial writes (col2row f32 28.0, f32x4 27.0, "
                                            "transposeNaive 29.7 per clock)",
        "var_latency_clk": H100_SERIES + " (dependent chains: MUFU.EX2 17.0, F2I 18.3, SHFL 26.3, LDC 29.5, LDS 29.0 "
                                         "clk; S2R and 'other' not measured: " + NO_SOURCE + ")",
        "operand_read_clk": "read-barrier release after issue: " + NO_SOURCE,
        "l1_latency_clk": H100_SERIES + " (dependent LDG chain over a 4 KB table in L1: 44.6 clk per step minus the "
                                        "IMAD.WIDE of the address)",
        "l1_sm_bytes": HOPPER_WP + " (256 KB combined L1 / shared memory per SM); " + H100_SERIES + " (re-read "
                                   "window per SM: full hit bandwidth up to 224 KB, -20 % at 256 KB: 240 KB usable)",
        "l1_lines_clk": H100_SERIES + " (the naive SGEMM: ncu 1.107 G L1 sectors, 32 lines per warp load, 4.42 ms on "
                                      "132 SMs: 0.96 lines per clock per SM; the model predicts its time within 2 %)",
        "shfl_per_clk_sm": H100_SERIES + " (SHFL.BFLY throughput, 2 x 1024-thread CTAs per SM: 0.985 warp-shuffles "
                                         "per clock per SM)",
        "sms": HOPPER_WP, "clock_ghz": H100_MEASURED + " (clock64 / globaltimer under an all-SM FMA load: 1.9794)",
        "dram_bw": H100_MEASURED + " (1 GiB device-to-device copy, read + written bytes: 3010 GB/s)",
        "dram_latency_ns": H100_MEASURED + " (pointer chase, 1 GiB random 128-B lines: 686 cycles = 347 ns)",
        "dram_loaded_factor": LOADED_SOURCE,
        "dram_loaded_by_util": LOADED_UTIL_SOURCE,
        "cta_stagger": STAGGER_SOURCE,
        "burst_window_ns": "model parameter (SMs' demand is not synchronised); " + NO_SOURCE,
        "l2_bw": H100_MEASURED + " (8 MiB re-read by all SMs, 10 vs 2 passes: 7530 GB/s)",
        "l2_latency_ns": H100_MEASURED + " (pointer chase, 4 MiB resident: 283 cycles = 143 ns)",
        "l2_bytes": HOPPER_WP,
        "sm_l1_bytes_clk": H100_SERIES + " (each SM re-reading a 224 KB window of its own through L1 with 1024 "
                                         "threads: 111.6 B/clk; before issue 21 the shared-memory probe's 123.4)",
        "sm_dram_bytes_clk": H100_MEASURED + " (one CTA of 1024 threads streaming 16 MiB: 73.3 B/clk)",
        "smem_bytes_clk": H100_MEASURED + " (conflict-free 16-B shared loads, 8 CTAs/SM: 123.4 B/clk of 128)",
        "smem_latency_clk": H100_SERIES + " (dependent LDS chain, one warp: 29.0 clk per LDS, minus the model's one "
                                          "wavefront of service)",
        "issue_per_smsp": HOPPER_WP, "smsps": HOPPER_WP,
        "fp32_lanes": HOPPER_WP + "; measured 124.7 FMA/clk/SM (" + H100_MEASURED + ")",
        "int_lanes": HOPPER_WP + " / " + CUDA_GUIDE + " (64 integer ops/clk/SM)", "sfu_lanes": CUDA_GUIDE,
        "alu_latency_clk": H100_MEASURED + " (dependent FMA chain: 4.13 cycles)",
        "sfu_latency_clk": "not measured here: " + NO_SOURCE, "shfl_latency_clk": "not measured here: " + NO_SOURCE,
        "cvt_latency_clk": "not measured here: " + NO_SOURCE,
        "launch_us": H100_MEASURED + " (empty kernel, 1 CTA, back-to-back CUDA events: 3.78 us)",
        "cta_launch_ns": H100_MEASURED + " (empty kernel, 64 x 1024-thread CTAs per SM vs 1 CTA: 213 ns per round)",
        "bar_latency_clk": H100_MEASURED + " (__syncthreads loop, 256 threads: 28.8 cycles per iteration, minus one "
                                           "dependent ALU step of the loop)",
        "mbar_latency_clk": H100_MEASURED + " (bulk-copy round trip from L2, 1 KiB: 325 cycles = L2 latency 283 + "
                                            "1 KiB / 103 B/clk + this wake-up)",
        "mbar_arrive_clk": H100_MEASURED + " (mbarrier ping-pong between two warps: 61 cycles per hand-off = arrive + "
                                           "wake-up + the loop's issue)",
        "tma_issue_clk": "TMA unit occupancy per copy: not measured here, " + NO_SOURCE,
        "tma_latency_ns": H100_MEASURED + " (bulk-copy round trips: 24 cycles over the L2 latency from L2, 94 over the "
                                          "DRAM latency from DRAM; mean 59 cycles = 30 ns)",
        "tma_bytes_clk": H100_MEASURED + " (bulk-copy round trip from L2, 8 KiB - 1 KiB: 7 KiB in 70 cycles)",
        "tc_flops_clk": "not used on the H100 (no tcgen05); listed for the table's shape",
        "tc_ii_clk": "no tcgen05 on the H100", "tc_latency_clk": "no tcgen05 on the H100",
        "tmem_ld_bytes_clk": "no TMEM on the H100", "tmem_ld_latency_clk": "no TMEM on the H100",
        "dsmem_latency_clk": H100_CLUSTER + " (dependent ld.shared::cluster chain to the peer of a 2-CTA cluster, 1 "
                                            "warp: 200.2 clk/hop minus the model's loop: 177.6 under SASS issue "
                                            "(issue 21; 181.2 under PTX issue), NOTES.md 'Timing model: cluster warps')",
        "dsmem_bytes_clk": H100_CLUSTER + " (each CTA of 2-CTA clusters on all SMs reads its peer's SMEM, 16 B per "
                                          "thread, 1024 threads)",
        "dsmem_narrow_bytes_clk": H100_CLUSTER_WARPS + " (the DSMEM dependent chase with 4-B loads, 1024-thread CTAs "
                                                       "of 2-CTA clusters, 2 per SM on all SMs: 8 KiB per SM per hop "
                                                       "over the cycles per hop; 8-B accesses not probed: 16-B rate)",
        "cluster_bar_latency_clk": H100_CLUSTER_LAW + " (least-squares law over barrier.cluster.arrive + wait loops of "
                                                      "one cluster of 2 / 4 / 8 CTAs x 1 / 4 / 8 warps per CTA, each "
                                                      "minus the model's own loop cycles: constant term)",
        "cluster_bar_per_cta_clk": H100_CLUSTER_LAW + " (same fit: cycles per CTA of the cluster)",
        "cluster_bar_per_warp_clk": H100_CLUSTER_LAW + " (same fit: cycles per warp of each CTA)",
        "cluster_release_clk": H100_CLUSTER_LAW + " (lane 0 doing k = 1 / 3 / 7 mbarrier.arrive.release.cluster in a "
                                                  "row to peers of an 8-CTA cluster, minus the model's loop: mean "
                                                  "cycles per arrive; same within 1 % to the own CTA, in 2- and "
                                                  "4-CTA clusters, from 4 warps of a CTA)",
        "cluster_release_shared_clk": H100_CLUSTER_LOAD + " (2-CTA clusters, 2 or 4 CTAs per SM on all SMs, 1 / 4 / "
                                                          "8 warps each doing one .release.cluster arrive per "
                                                          "iteration: 987.0-988.2 clk whatever the warps, minus the "
                                                          "model's loop; 1 CTA per SM: 691-702 from 1 to 132 SMs)",
        "cluster_release_cta_clk": H100_CLUSTER_LOAD + " (8 warps of one CTA per SM on all SMs, one .release.cluster "
                                                       "arrive each per iteration: the period minus the model's "
                                                       "loop, / 8)",
        "cluster_bar_wide_clk": H100_CLUSTER_WARPS + " (one cluster of 2 and of 4 CTAs x 16 / 32 warps per CTA on an "
                                                     "idle GPU: the probe minus the model's a + b C + c W law and "
                                                     "loop, mean of the two cluster sizes; 0 at 8 warps, linear "
                                                     "between)",
        "cluster_bar_shared_clk": H100_CLUSTER_WARPS + " (2-CTA clusters x 4 / 8 / 16 / 32 warps, 264 and 528 CTAs = "
                                                       "2 and 4 CTAs per SM on all SMs: the probe minus the model "
                                                       "without this term; linear in the warps, clamped at the "
                                                       "probed ends; the 4-CTA-cluster probes are a check, not "
                                                       "fitted)",
        "max_threads_sm": CUDA_GUIDE, "max_ctas_sm": CUDA_GUIDE, "regs_sm": CUDA_GUIDE, "smem_sm": CUDA_GUIDE,
        "smem_per_cta_reserved": CUDA_GUIDE, "tmem_cols": "no TMEM on the H100",
    }))

# ------------------------------------------------------------------------------------------------ H200 (SXM)
# Same GH100 die and SM as the H100 SXM5 (NVIDIA docs): SM-side values are the H100's. Memory: the datasheet's
# 4.8 TB/s scaled by the H100's measured achievable/datasheet ratio (3.01/3.35) -- no H200 measurement is used.
# The out-of-sample check (NOTES.md) found barrier.cluster and .release.cluster arrives at 0.45x the H100's cycles
# on the H200: NOT taken into this table, which stays free of H200 measurements (the check's two misses).
_H200_SCALE = "H200 datasheet bandwidth x the H100's measured achievable/datasheet ratio (no H200 measurement)"
H200 = _check(replace(
    H100, name="h200", dram_bw=4.8e12 * (3.01 / 3.35), l2_bytes=50 * 2**20,
    sources={**H100.sources, "dram_bw": H200_DS + "; " + _H200_SCALE,
             "l2_bytes": HOPPER_WP + " (GH100: the H200 is the same die as the H100 SXM5, 50 MB of L2 enabled; the "
                                     "H200 datasheet gives no L2 size)",
             "l2_read_req_clk": "the H100's (same GH100 die and L2, NVIDIA docs): " + H100.sources["l2_read_req_clk"],
             "l2_write_req_clk": "the H100's (same GH100 die and L2, NVIDIA docs): " + H100.sources["l2_write_req_clk"],
             "sms": H200_DS + " (GH100, 132 SMs as the H100 SXM5)",
             "clock_ghz": H200_DS + " (same boost clock as H100 SXM5) -> the H100's measured clock",
             "dram_latency_ns": "HBM3e: assumed equal to the H100's measured HBM3 latency (" + NO_SOURCE + ")"}))

# ------------------------------------------------------------------------------------------------ B200
# The cluster-scope release costs do not carry between GPUs of one SM: the H200 (same SM as the H100) measures
# barrier.cluster and .release.cluster arrives at 0.45x the H100's cycles, while relaxed arrives and DSMEM are
# equal (benchmarks/data/timing_measured_h200_all_20261124b.json, NOTES.md "H200 out of sample: all 21 kernels").
H200_CLUSTER_CAVEAT = ("; the H200, same SM, measures 0.45x the H100's cycles for this release-bound cost "
                       "(NOTES.md), so the x0.5 row of the sensitivity report is a realistic case")
# SemiAnalysis microbench-blackwell (GitHub SemiAnalysisAI/microbench-blackwell, commit 9a068d853d5c, measured on a
# B200): umma_latency/fit_results.csv, kind::f16 SS rows ("a (II)" column; the E4M3 / F4 / S8 / MXF8 / MXF4 rows have
# the same II in cycles at their own K), and the median of the "b" column per operand form and CTA group
SA_REPO = "SemiAnalysisAI/microbench-blackwell @ 9a068d853d5c"
SA_UMMA_II = {(1, 128): {64: 48.0, 80: 52.0, 96: 56.0, 112: 60.0, 128: 64.0, 256: 128.0},
              (1, 64): {64: 32.0, 80: 40.0, 96: 48.0, 112: 56.0, 128: 64.0, 256: 128.0},
              (2, 128): {64: 25.0, 80: 27.0, 96: 29.0, 112: 30.0, 128: 32.0, 256: 64.0},
              (2, 256): {64: 43.0, 80: 45.3, 96: 49.4, 112: 56.0, 128: 64.0, 256: 128.0}}
SA_UMMA_LAT = {"SS1": 133.9, "SS2": 176.5, "TS1": 116.0, "TS2": 153.6}
_B200_CLK = 1.979   # GHz: "clock speeds similar to the H100 SXM5" (CNC_B200) -> the H100's measured clock
B200 = _check(GpuParams(
    name="b200", sms=148, clock_ghz=_B200_CLK,
    dram_bw=7.26e12, dram_latency_ns=(927.0 - 94.0) / _B200_CLK, burst_window_ns=2000.0, dram_loaded_factor=LOADED,
    l2_bw=H100.l2_bw * 148 / 132 * _B200_CLK / H100.clock_ghz,
    l2_latency_ns=150.0, l2_bytes=126 * 2**20,
    sm_l1_bytes_clk=H100.sm_l1_bytes_clk, sm_dram_bytes_clk=H100.sm_dram_bytes_clk, smem_bytes_clk=128.0,
    smem_latency_clk=H100.smem_latency_clk,
    issue_per_smsp=1.0, smsps=4, fp32_lanes=128, int_lanes=64, sfu_lanes=16,
    alu_latency_clk=H100.alu_latency_clk, sfu_latency_clk=18.0, shfl_latency_clk=24.0, cvt_latency_clk=8.0,
    launch_us=H100.launch_us, cta_launch_ns=H100.cta_launch_ns, bar_latency_clk=H100.bar_latency_clk,
    mbar_latency_clk=H100.mbar_latency_clk, mbar_arrive_clk=H100.mbar_arrive_clk,
    tma_issue_clk=H100.tma_issue_clk, tma_latency_ns=H100.tma_latency_ns, tma_bytes_clk=H100.tma_bytes_clk,
    # dense FP4 9 PFLOPS (datasheet) = 148 SMs x 32768 FLOP/clk x 1.86 GHz: 32768 FLOP/clk/SM assumes the datasheet
    # peak is quoted at a 1.86 GHz tensor clock (if it were at 1.979 GHz: 30.7 k); one 128x256x64 mxf4nvf4 MMA =
    # 4.19 MFLOP = 128 cycles. FP8/FP6 half, FP16/BF16 a quarter (datasheet ratios)
    tc_flops_clk={"mxf4nvf4": 32768.0, "mxf4": 32768.0, "mxf8f6f4": 16384.0, "f8f6f4": 16384.0, "f16": 8192.0,
                  "tf32": 4096.0, "i8": 16384.0, "cp": 0.0},
    tmem_ld_bytes_clk=512.0, tmem_ld_latency_clk=30.0,
    dsmem_latency_clk=H100.dsmem_latency_clk, dsmem_bytes_clk=H100.dsmem_bytes_clk,
    dsmem_narrow_bytes_clk=H100.dsmem_narrow_bytes_clk,
    cluster_bar_latency_clk=H100.cluster_bar_latency_clk, cluster_bar_per_cta_clk=H100.cluster_bar_per_cta_clk,
    cluster_bar_per_warp_clk=H100.cluster_bar_per_warp_clk, cluster_release_clk=H100.cluster_release_clk,
    cluster_release_shared_clk=H100.cluster_release_shared_clk, cluster_release_cta_clk=H100.cluster_release_cta_clk,
    cluster_bar_wide_clk=dict(H100.cluster_bar_wide_clk), cluster_bar_shared_clk=dict(H100.cluster_bar_shared_clk),
    max_threads_sm=2048, max_ctas_sm=32, regs_sm=65536, smem_sm=233472, tmem_cols=512,
    tc_ii_clk=SA_UMMA_II, tc_latency_clk=SA_UMMA_LAT,
    var_latency_clk=dict(H100.var_latency_clk), operand_read_clk=H100.operand_read_clk,
    l1_latency_clk=H100.l1_latency_clk, l1_sm_bytes=H100.l1_sm_bytes, shfl_per_clk_sm=H100.shfl_per_clk_sm,
    l1_lines_clk=H100.l1_lines_clk,
    sources={
        "l2_read_req_clk": "not modelled on the B200 (0): no B200 measurement of L2 request rates",
        "l2_write_req_clk": "not modelled on the B200 (0): no B200 measurement of L2 request rates",
        "shfl_per_clk_sm": "assumed equal to the H100's: " + NO_SOURCE,
        "l1_lines_clk": "assumed equal to the H100's: " + NO_SOURCE,
        "tc_ii_clk": SA_REPO + " umma_latency/fit_results.csv (II of kind::f16 SS, per CTA group, M, N; the f8f6f4 "
                     "'F4' rows run K = 32 per PTX ISA 9.7.16.10 and have the same II: no kind::mxf4nvf4 "
                     "measurement exists, its rate stays tc_flops_clk's assumption)",
        "tc_latency_clk": SA_REPO + " umma_latency/fit_results.csv (median 'b' of latency = II + b: SS 1-SM 133.9, "
                          "SS 2-SM 176.5, TS 1-SM 116.0, TS 2-SM 153.6 cycles)",
        "var_latency_clk": "assumed equal to the H100's: " + NO_SOURCE,
        "operand_read_clk": "assumed equal to the H100's: " + NO_SOURCE,
        "l1_latency_clk": "assumed equal to the H100's: " + NO_SOURCE,
        "l1_sm_bytes": "assumed equal to the H100's (L1/shared pool unchanged per " + CNC_B200 + "): " + NO_SOURCE,
        "sms": CNC_B200 + "; " + BW_UB,
        "clock_ghz": CNC_B200 + " (clocks similar to the H100 SXM5) -> the H100's measured 1.979 GHz",
        "dram_bw": SA_REPO + " tma2d_throughput/tma2d_tput_results.csv (highest HBM throughput of 2-D TMA loads "
                   "on all SMs: 7.26 TB/s at 64-128 KB in flight per SM; the datasheet's 8 TB/s x the H100's "
                   "achievable ratio gave 7.19)",
        "dram_loaded_factor": "the H100's fitted loaded/idle ratio, " + NO_SOURCE,
        "dram_loaded_by_util": "as the H100's: " + LOADED_UTIL_SOURCE,
        "cta_stagger": "as the H100's: " + STAGGER_SOURCE,
        "dram_latency_ns": SA_REPO + " tma2d_latency/tma2d_lat_results.csv (shortest cold 2-D TMA load, 2 KB: 927 "
                           "cycles) minus the H100's TMA time over the DRAM latency (94 cycles, bulk-copy round "
                           "trips): 833 cycles = 421 ns",
        "burst_window_ns": "model parameter, as for the H100: " + NO_SOURCE,
        "l2_bw": "H100 measured L2 bandwidth scaled by SM count and clock: " + NO_SOURCE,
        "l2_latency_ns": CNC_B200 + " (~150 ns within a die's L2 partition; more across dies)",
        "l2_bytes": CNC_B200,
        "sm_l1_bytes_clk": "assumed equal to the H100's (L1/shared pool unchanged per " + CNC_B200 + "): " + NO_SOURCE,
        "sm_dram_bytes_clk": "assumed equal to the H100's: " + NO_SOURCE,
        "smem_bytes_clk": BW_SA + " (SMEM-bound SS MMA at ~128 B/cycle)", "smem_latency_clk": "assumed equal to the H100's: " + NO_SOURCE,
        "issue_per_smsp": CUDA_GUIDE + " (4 schedulers, 1 warp-instr/clk)", "smsps": CUDA_GUIDE,
        "fp32_lanes": CUDA_GUIDE + " (cc 10.0: 128 FP32 lanes/SM)", "int_lanes": CUDA_GUIDE,
        "sfu_lanes": CUDA_GUIDE, "alu_latency_clk": "assumed equal to the H100's measured value: " + NO_SOURCE,
        "sfu_latency_clk": "assumed equal to the H100's: " + NO_SOURCE,
        "shfl_latency_clk": "assumed equal to the H100's: " + NO_SOURCE,
        "cvt_latency_clk": "assumed equal to the H100's: " + NO_SOURCE,
        "launch_us": "assumed equal to the H100's measured value: " + NO_SOURCE,
        "cta_launch_ns": "assumed equal to the H100's measured value: " + NO_SOURCE,
        "bar_latency_clk": "assumed equal to the H100's: " + NO_SOURCE,
        "mbar_latency_clk": "assumed equal to the H100's: " + NO_SOURCE,
        "mbar_arrive_clk": "assumed equal to the H100's: " + NO_SOURCE,
        "tma_bytes_clk": "assumed equal to the H100's: " + NO_SOURCE,
        "tma_issue_clk": "assumed equal to the H100's: " + NO_SOURCE,
        "tma_latency_ns": "assumed equal to the H100's: " + NO_SOURCE,
        "tc_flops_clk": B200_DS + " / 148 SMs / 1.86 GHz (the tensor clock is an assumption: " + NO_SOURCE +
                        "); kind ratios from the datasheet; " + PTX_ISA,
        "tmem_ld_bytes_clk": "512 B/clk per SM (128 lanes x 32 bit per cycle) assumed: " + NO_SOURCE,
        "tmem_ld_latency_clk": "assumed (" + NO_SOURCE + ")",
        "dsmem_latency_clk": "assumed equal to the H100's measured value (no B200 SM-to-SM publication found): " +
                             NO_SOURCE,
        "dsmem_bytes_clk": "assumed equal to the H100's measured value: " + NO_SOURCE,
        "dsmem_narrow_bytes_clk": "assumed equal to the H100's measured value: " + NO_SOURCE,
        "cluster_bar_latency_clk": "assumed equal to the H100's measured value: " + NO_SOURCE + H200_CLUSTER_CAVEAT,
        "cluster_bar_per_cta_clk": "assumed equal to the H100's measured value: " + NO_SOURCE + H200_CLUSTER_CAVEAT,
        "cluster_bar_per_warp_clk": "assumed equal to the H100's measured value: " + NO_SOURCE + H200_CLUSTER_CAVEAT,
        "cluster_release_clk": "assumed equal to the H100's measured value: " + NO_SOURCE + H200_CLUSTER_CAVEAT,
        "cluster_release_shared_clk": "assumed equal to the H100's measured value: " + NO_SOURCE + H200_CLUSTER_CAVEAT,
        "cluster_release_cta_clk": "assumed equal to the H100's measured value: " + NO_SOURCE + H200_CLUSTER_CAVEAT,
        "cluster_bar_wide_clk": "assumed equal to the H100's measured value: " + NO_SOURCE + H200_CLUSTER_CAVEAT,
        "cluster_bar_shared_clk": "assumed equal to the H100's measured value: " + NO_SOURCE + H200_CLUSTER_CAVEAT,
        "max_threads_sm": CUDA_GUIDE, "max_ctas_sm": CUDA_GUIDE, "regs_sm": CUDA_GUIDE, "smem_sm": CUDA_GUIDE,
        "smem_per_cta_reserved": CUDA_GUIDE, "tmem_cols": "PTX ISA 9.7.16.2 (512 columns x 128 lanes)",
    }))

TABLES = {"h100": H100, "h200": H200, "b200": B200}

# parameters whose B200 value has no source: the sensitivity report varies these
UNSOURCED_B200 = [k for k, v in B200.sources.items() if "NO SOURCE" in v]


def get(name) -> GpuParams:
    if isinstance(name, GpuParams):
        return name
    key = str(name).strip().lower()
    if key not in TABLES:
        raise ValueError(f"timing: unknown GPU {name!r}; use one of {', '.join(TABLES)}")
    return TABLES[key]


SAMPLE_MODES = ("auto", "all")   # timing_sample / PTXLAB_TIMING_SAMPLE / lab.py time --sample


def check_timing_args(gpu, sample=None, from_env: bool = False, sample_from_env: bool = False) -> None:
    """``open_device("emu", timing=gpu, timing_sample=sample)``: ValueError naming the known values for an unknown
    GPU or sample mode (checked when the device opens, before any launch)."""
    if not isinstance(gpu, GpuParams) and str(gpu).strip().lower() not in TABLES:
        where = "PTXLAB_TIMING" if from_env else "open_device('emu', timing=...)"
        raise ValueError(f"{where}: unknown GPU {gpu!r}; use one of {', '.join(TABLES)}")
    if sample is not None and str(sample).strip().lower() not in SAMPLE_MODES:
        where = "PTXLAB_TIMING_SAMPLE" if sample_from_env else "open_device('emu', timing_sample=...)"
        raise ValueError(f"{where}: unknown sample mode {sample!r}; use 'auto' (the busiest SM's CTAs only) or 'all'")
