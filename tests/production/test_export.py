"""`lab.py export`: the single-file gpu-mode submission is valid Python, embeds the kernel, and runs in a gpu-mode
style harness (generate_input -> custom_kernel -> check against reference) on the emulator path when torch exists.

GEMV: tests below up to test_gpumode_harness_emulator. GEMM (`--problem nvfp4_gemm`): the flattened kernel is embedded
and compiles with bare NVRTC to the same PTX as the include-based build; the adapter's tensor-map parameters and
launch plan equal what ptxlab.production.gemm builds; the exported file runs gpu-mode GEMM data on the emulator."""
from __future__ import annotations

import ast
import importlib.util
import re
import sys
from pathlib import Path

import numpy as np
import pytest

from ptxlab import gpumode as gm
from ptxlab.kernels import read
from ptxlab.lab.cli import main as lab_main
from ptxlab.production import export


def write_submission(tmp_path: Path, problem: str = "nvfp4_gemv", splits: str | None = None,
                     variant: str | None = None) -> Path:
    out = tmp_path / f"submission_{problem}{'' if splits is None else '_k' + splits}{'' if variant is None else '_' + variant}.py"
    extra = ([] if splits is None else ["--splits", splits]) + ([] if variant is None else ["--variant", variant])
    assert lab_main(["export", "--problem", problem, "--out", str(out), *extra]) == 0
    return out


def load(path: Path):
    spec = importlib.util.spec_from_file_location(f"submission_{abs(hash(path))}", path)
    mod = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = mod
    spec.loader.exec_module(mod)
    return mod


def test_export_is_python_and_embeds_kernel(tmp_path: Path) -> None:
    out = write_submission(tmp_path)
    text = out.read_text()
    tree = ast.parse(text)
    names = {n.name for n in tree.body if isinstance(n, ast.FunctionDef)}
    assert "custom_kernel" in names
    assert "KERNEL_SRC = None" not in text
    mod = load(out)
    assert mod.KERNEL_SRC == read("nvfp4_gemv_cudacore.cu")  # byte-identical kernel text
    assert mod.kernel_source() is mod.KERNEL_SRC
    # nothing but stdlib at import: torch / cuda-python / ptxlab are imported inside functions only
    top = {a.name.split(".")[0] for n in tree.body if isinstance(n, ast.Import) for a in n.names}
    top |= {n.module.split(".")[0] for n in tree.body if isinstance(n, ast.ImportFrom) and n.module}
    assert top <= {"__future__", "ctypes", "typing"}, top


def test_exported_kernel_compiles_with_bare_nvrtc(tmp_path: Path) -> None:
    mod = load(write_submission(tmp_path))
    for arch in ("sm_90a", "sm_100a"):
        assert len(mod.nvrtc_cubin(arch)) > 1000


def test_gpumode_harness_emulator(tmp_path: Path, rng) -> None:
    """gpu-mode eval flow: data = generate_input(...); out = custom_kernel(data); check_implementation(data, out)."""
    torch = pytest.importorskip("torch", reason="no torch: the optional extra .[torch] is not installed")
    mod = load(write_submission(tmp_path))
    mod._EMU_MODULES.clear()

    def generate_input(m: int, k: int, l: int, seed: int):
        return gm.to_torch(gm.generate_gemv(m, k, l, seed))

    def ref_kernel(data):
        return torch.from_numpy(gm.reference_gemv(gm.from_torch(data)))

    for m, k, l in [(128, 256, 1), (40, 512, 2), (24, 2048, 2)]:  # register variant x2, flat variant (K % 1024 == 0)
        data = generate_input(m, k, l, seed=int(rng.integers(1 << 31)))
        data[6].fill_(float("nan"))  # poison c
        ref = ref_kernel(data)
        out = mod.custom_kernel(data)
        assert gm.check_close(out.numpy(), ref.numpy()) == []
        assert np.array_equal(out.numpy().view(np.uint16), ref.numpy().view(np.uint16))
    # the embedded text was compiled (not the package file), once per config: (arch, config) keys
    assert {key[0] for key in mod._EMU_MODULES} == {"sm_90a"} and len(mod._EMU_MODULES) == 2


# ------------------------------------------------------------------------------------------------ nvfp4_gemm
GEMM_ALLOWED_IMPORTS = {"__future__", "ctypes", "os", "typing"}


def test_export_gemm_is_python_and_embeds_flattened_kernel(tmp_path: Path) -> None:
    from ptxlab.kernels.flatten import flatten, remaining_includes
    from ptxlab.production import submission_gemv

    out = write_submission(tmp_path, "nvfp4_gemm")
    text = out.read_text()
    tree = ast.parse(text)
    funcs = {n.name for n in tree.body if isinstance(n, ast.FunctionDef)}
    assert {"custom_kernel", "nvrtc_compile", "tensor_map_params", "launch_plan"} <= funcs
    assert "KERNEL_SRC = None" not in text and "CLUSTER_KERNEL_SRC = None" not in text
    # nothing but stdlib at import (the lab's `from ptxlab... import nvrtc_compile` line was replaced by the function)
    top = {a.name.split(".")[0] for n in tree.body if isinstance(n, ast.Import) for a in n.names}
    top |= {n.module.split(".")[0] for n in tree.body if isinstance(n, ast.ImportFrom) and n.module}
    assert top <= GEMM_ALLOWED_IMPORTS, top
    assert export.inline_function(text, "nvrtc_compile") == export.inline_function(
        Path(submission_gemv.__file__).read_text(), "nvrtc_compile")
    mod = load(out)
    assert mod.KERNEL_SRC == flatten("nvfp4_gemm_tcgen05.cu")
    assert mod.CLUSTER_KERNEL_SRC == flatten("nvfp4_gemm_cluster.cu")
    assert mod.kernel_source() is mod.KERNEL_SRC and mod.kernel_source(mod.CLUSTER_KERNEL_FILE) is mod.CLUSTER_KERNEL_SRC
    for src in (mod.KERNEL_SRC, mod.CLUSTER_KERNEL_SRC):
        assert remaining_includes(src) == [] and "#include" not in src
        assert not re.search(r"^\s*#\s*pragma\s+once", src, re.M)
    assert mod.GEMM_VARIANT == "cluster"
    assert mod.nvrtc_compile.__module__ == mod.__name__  # defined in the file, not imported
    assert export.render("nvfp4_gemm") == text
    with pytest.raises(ValueError):
        export.render("nvfp4_gemm_v2")


@pytest.mark.parametrize("bn", [128, 256])
def test_gemm_flattened_kernel_bare_nvrtc_same_ptx(tmp_path: Path, bn: int) -> None:
    """The submission's own NVRTC call (no include path, no CUDA headers) on the embedded flattened text gives the
    PTX of the include-based build (ptxlab.compile with include_dirs=[KERNELS_DIR] and the pip CUDA headers)."""
    import ptxlab
    from ptxlab.kernels import KERNELS_DIR
    from ptxlab.production import gemm as G

    mod = load(write_submission(tmp_path, "nvfp4_gemm"))
    opts = (f"-DGEMM_BN={bn}", f"-DGEMM_STAGES={G.DEFAULT_STAGES[bn]}")
    name = f"{mod.KERNEL_NAME}.cu"  # the program name enters the mangled names of internal symbols
    ptx, cubin = mod.nvrtc_compile(mod.KERNEL_SRC, "sm_100a", name, opts)
    ref = ptxlab.compile(read(G.KERNEL_FILE), arch="sm_100a", name=name, options=opts, include_dirs=[KERNELS_DIR])
    assert ptx == ref.ptx
    assert len(cubin) > 1000 and mod.KERNEL_NAME in ptx


class _SpyDevice:
    """An emulator device whose tensor_map is recorded and whose launch only records (nothing runs)."""

    def __init__(self, dev) -> None:
        self._dev, self.maps, self.launches = dev, {}, []

    def tensor_map(self, buf, **kw):
        tm = self._dev.tensor_map(buf, **kw)
        self.maps[len(self.maps)] = tm.spec
        return tm

    def launch(self, module, kernel, grid, block, args=(), shared_bytes=0, **kw):
        self.launches.append({"kernel": kernel, "grid": tuple(grid), "block": tuple(block),
                              "shared_bytes": shared_bytes, "nargs": len(args), **kw})

    def __getattr__(self, name):
        return getattr(self._dev, name)


@pytest.mark.parametrize("m,n,k,l,splits", [(128, 256, 256, 1, 1), (256, 384, 768, 2, 1), (128, 512, 512, 3, 1),
                                             (384, 128, 1792, 1, 1), (128, 256, 512, 1, 2), (256, 384, 768, 2, 3),
                                             (128, 512, 1792, 3, 7)])
def test_gemm_adapter_map_params_equal_wrapper(tmp_path: Path, m: int, n: int, k: int, l: int, splits: int) -> None:
    """The exported adapter's cuTensorMapEncodeTiled inputs and launch geometry equal what ptxlab.production.gemm
    actually builds and launches (its maps recorded on an emulator device) for the same shape and split-K factor
    (grid z = L*splits, 10 kernel arguments and the workspace bytes with split-K)."""
    import ptxlab
    from ptxlab.production import gemm as G

    mod = load(write_submission(tmp_path, "nvfp4_gemm"))
    dev = ptxlab.open_device("emu")
    report: dict = {}
    try:
        spy = _SpyDevice(dev)
        p = gm.generate_gemm(m, n, k, l, 7)
        G.nvfp4_gemm(spy, p, module="not compiled: launch is recorded only", splits=splits, report=report,
                     variant="1sm")
    finally:
        dev.close()
    plan = mod.launch_plan(m, n, k, l, splits, "1sm")
    prm = mod.tensor_map_params(m, n, k, l, plan["bn"])
    got = list(spy.maps.values())
    assert len(got) == 4
    for spec, name in zip(got, ("a", "b", "sfa", "sfb")):
        want = prm[name]
        for field in ("dtype", "global_shape", "global_strides", "box", "element_strides", "swizzle", "interleave",
                      "l2_promotion", "oob_fill"):
            w = tuple(want[field]) if isinstance(want[field], (tuple, list)) else want[field]
            assert getattr(spec, field) == w, (name, field, getattr(spec, field), w)
        assert spec.rank == len(want["global_shape"])
    (launch,) = spy.launches
    assert launch["kernel"] == mod.KERNEL_NAME == G.KERNEL_NAME
    assert launch["grid"] == plan["grid"] and launch["block"] == plan["block"]
    assert launch["shared_bytes"] == plan["shared_bytes"] and launch["nargs"] == (8 if splits == 1 else 10)
    assert plan["bn"] == G.choose_bn(n) and plan["stages"] == G.DEFAULT_STAGES[plan["bn"]]
    assert plan["splits"] == report["splits"] == splits and plan["grid"][2] == l * splits
    assert plan["workspace_bytes"] == report["workspace_bytes"] == (
        0 if splits == 1 else 4 * splits * l * m * n + 4 * l * (m // 128) * (n // plan["bn"]))  # ordered: S slots


def test_gemm_adapter_constants_equal_wrapper(tmp_path: Path) -> None:
    from ptxlab import tensormap
    from ptxlab.production import gemm as G

    mod = load(write_submission(tmp_path, "nvfp4_gemm"))
    assert (mod.THREADS, mod.BM, mod.BK_BYTES, tuple(mod.SF_BOX), mod.KERNEL_FILE) == \
        (G.THREADS, G.BM, G.BK_BYTES, tuple(G.SF_BOX), G.KERNEL_FILE)
    assert mod.DEFAULT_STAGES == G.DEFAULT_STAGES
    for bn in (128, 256):
        assert mod.stage_bytes(bn) == G.stage_bytes(bn)
        for s in (2, 3, 4):
            assert mod.shared_bytes(bn, s) == G.shared_bytes(bn, s)
    for n in (128, 256, 384, 512, 1536, 7168):
        assert mod.choose_bn(n) == G.choose_bn(n)
    for shape in [(100, 256, 256, 1, 256), (128, 200, 256, 1, 128), (128, 256, 320, 1, 256),
                  (128, 256, 256, 70000, 256)]:
        with pytest.raises(ValueError):
            mod.check_shape(*shape)
        with pytest.raises(ValueError):
            G.check_shape(*shape)
    for table, name in ((mod._DTYPE_CODES, "DTYPE_CODES"), (mod._SWIZZLE_CODES, "SWIZZLE_CODES"),
                        (mod._INTERLEAVE_CODES, "INTERLEAVE_CODES"), (mod._L2_PROMOTION_CODES, "L2_PROMOTION_CODES"),
                        (mod._OOB_FILL_CODES, "OOB_FILL_CODES")):
        full = getattr(tensormap, name)
        assert all(full[k] == v for k, v in table.items()), name
    for t in gm.GEMM_TESTS:  # every gpu-mode shape is launchable and its SF maps cover the permuted tensors exactly
        plan = mod.launch_plan(t["m"], t["n"], t["k"], t["l"], variant="1sm")
        prm = mod.tensor_map_params(t["m"], t["n"], t["k"], t["l"], plan["bn"])
        assert prm["sfa"]["global_shape"][1] * 128 == 32 * 4 * (t["m"] // 128) * 4 * (t["k"] // 64) * t["l"]
        assert plan["shared_bytes"] <= 232448


def test_gemm_adapter_refuses_gpu_without_tcgen05(tmp_path: Path) -> None:
    mod = load(write_submission(tmp_path, "nvfp4_gemm"))
    assert mod.gemm_arch(10, 0) == "sm_100a"
    for cc in ((9, 0), (8, 0), (12, 0)):
        with pytest.raises(RuntimeError, match="compute capability 10.x"):
            mod.gemm_arch(*cc)


def test_gemm_gpumode_harness_emulator(tmp_path: Path, rng) -> None:
    """gpu-mode eval flow on the exported GEMM: data = generate_input(...); c poisoned; out = custom_kernel(data);
    check against the reference at rtol = atol = 1e-3 (gpu-mode's tolerance)."""
    torch = pytest.importorskip("torch", reason="no torch: the optional extra .[torch] is not installed")
    mod = load(write_submission(tmp_path, "nvfp4_gemm", variant="1sm"))
    mod._EMU.clear()

    def generate_input(m: int, n: int, k: int, l: int, seed: int):
        return gm.to_torch(gm.generate_gemm(m, n, k, l, seed))

    def ref_kernel(data):
        return torch.from_numpy(gm.reference_gemm(gm.from_torch(data)))

    for m, n, k, l in [(128, 256, 256, 1), (128, 128, 256, 2)]:
        seed = int(rng.integers(1 << 31))
        data = generate_input(m, n, k, l, seed)
        data[6].fill_(float("nan"))  # poison c
        ref = ref_kernel(data)
        out = mod.custom_kernel(data)
        assert out is data[6] and out.shape == (m, n, l) and out.dtype == torch.float16
        assert not torch.isnan(out).any(), f"seed={seed}: outputs left poisoned"
        assert gm.check_close(out.numpy(), ref.numpy(), rtol=1e-3, atol=1e-3) == [], f"seed={seed}"
    assert mod._EMU[(256, 4, 1)].source == mod.KERNEL_SRC  # the embedded text was compiled, not the package file
    assert mod._EMU[(128, 4, 1)].source == mod.KERNEL_SRC
    with pytest.raises(ValueError, match="multiple of 256"):
        mod.custom_kernel(generate_input(128, 256, 320, 1, 1))


class _FakeDriver:
    """Stands in for cuda.bindings.driver: records the tensor-map encodes and the launch, and decodes the packed
    kernel parameters from the kernelParams pointer array as the driver would (no GPU involved)."""

    class CUresult:
        CUDA_SUCCESS = 0

    class CUdevice_attribute:
        CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR = "major"
        CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR = "minor"

    class CUfunction_attribute:
        CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES = "max_dyn_smem"

    def __init__(self, cc=(10, 0)) -> None:
        import ctypes

        self.ctypes, self.cc = ctypes, cc
        self.encodes, self.launches, self.attrs, self.modules, self.ex_launches = [], [], [], [], []
        self._keep = []
        for name in ("CUtensorMapDataType", "CUtensorMapInterleave", "CUtensorMapSwizzle", "CUtensorMapL2promotion",
                     "CUtensorMapFloatOOBfill", "cuuint64_t", "cuuint32_t", "CUstream"):
            setattr(self, name, lambda v, _n=name: (_n, int(v)))

    def cuInit(self, flags):
        return (0,)

    def cuDeviceGet(self, i):
        return (0, i)

    def cuDeviceGetAttribute(self, what, dev):
        return (0, self.cc[0] if what == "major" else self.cc[1])

    def cuDevicePrimaryCtxRetain(self, dev):
        return (0, "ctx")

    def cuCtxSetCurrent(self, ctx):
        return (0,)

    def cuModuleLoadData(self, image):
        self.modules.append(image)
        return (0, f"module{len(self.modules)}")

    def cuModuleGetFunction(self, module, name):
        return (0, (module, name.decode()))

    def cuFuncSetAttribute(self, func, attr, value):
        self.attrs.append((func, attr, value))
        return (0,)

    def cuTensorMapEncodeTiled(self, dtype, rank, addr, dims, strides, box, es, inter, swz, l2, oob):
        rec = {"dtype": dtype[1], "rank": rank, "address": addr, "dims": [d[1] for d in dims],
               "strides": [s[1] for s in strides], "box": [b[1] for b in box], "es": [e[1] for e in es],
               "interleave": inter[1], "swizzle": swz[1], "l2": l2[1], "oob": oob[1]}
        self.encodes.append(rec)
        raw = bytes([len(self.encodes)]) * 128  # map i is 128 bytes of value i
        buf = self.ctypes.create_string_buffer(raw, 128)
        self._keep.append(buf)

        class Map:
            def getPtr(_self):
                return self.ctypes.addressof(buf)

        return (0, Map())

    nparams = 8  # the default build's 8 kernel parameters; 10 with split-K (+ u64 ws, u64 counters)
    max_clusters = 0

    class CUlaunchAttributeID:
        CU_LAUNCH_ATTRIBUTE_CLUSTER_DIMENSION = "cluster_dim"

    class CUlaunchConfig:
        pass

    class CUlaunchAttribute:
        def __init__(self) -> None:
            import types

            self.value = types.SimpleNamespace(clusterDim=types.SimpleNamespace(x=0, y=0, z=0))

    def cuOccupancyMaxActiveClusters(self, func, cfg):
        return (0, self.max_clusters)

    def cuLaunchKernelEx(self, cfg, func, params, extra):
        """The cluster kernel's launch: 5 maps, then u32 M, N, K, warm, u64 ws."""
        c = self.ctypes
        ptrs = (c.c_void_p * 10).from_address(params)
        (attr,) = cfg.attrs
        assert attr.id == "cluster_dim" and cfg.numAttrs == 1
        self.ex_launches.append({"func": func, "grid": (cfg.gridDimX, cfg.gridDimY, cfg.gridDimZ),
                                 "block": (cfg.blockDimX, cfg.blockDimY, cfg.blockDimZ), "smem": cfg.sharedMemBytes,
                                 "stream": cfg.hStream, "cluster": (attr.value.clusterDim.x, attr.value.clusterDim.y,
                                                                    attr.value.clusterDim.z),
                                 "maps": [c.string_at(ptrs[i], 128) for i in range(5)],
                                 "map_align": [ptrs[i] % 64 for i in range(5)],
                                 "scalars": [c.c_uint32.from_address(ptrs[i]).value for i in range(5, 9)],
                                 "ws": c.c_uint64.from_address(ptrs[9]).value})
        return (0,)

    def cuLaunchKernel(self, func, gx, gy, gz, bx, by, bz, smem, stream, params, extra):
        c = self.ctypes
        ptrs = (c.c_void_p * self.nparams).from_address(params)
        maps = [c.string_at(ptrs[i], 128) for i in range(4)]
        self.launches.append({"func": func, "grid": (gx, gy, gz), "block": (bx, by, bz), "smem": smem,
                              "stream": stream, "maps": maps, "map_align": [ptrs[i] % 64 for i in range(4)],
                              "c": c.c_uint64.from_address(ptrs[4]).value,
                              "mnk": tuple(c.c_uint32.from_address(ptrs[i]).value for i in (5, 6, 7)),
                              "extra": [c.c_uint64.from_address(ptrs[i]).value for i in range(8, self.nparams)]})
        return (0,)


def _fake_cuda(monkeypatch, cc=(10, 0)) -> _FakeDriver:
    import cuda.bindings
    import cuda.bindings.nvrtc  # noqa: F401  (imports the real driver module: load it before the fake goes in)

    fake = _FakeDriver(cc)
    monkeypatch.setattr(cuda.bindings, "driver", fake, raising=False)
    monkeypatch.setitem(sys.modules, "cuda.bindings.driver", fake)
    return fake


def test_gemm_cuda_path_with_fake_driver(tmp_path: Path, monkeypatch) -> None:
    """The submission's driver-API plumbing without a GPU: NVRTC (real) -> module load, dynamic-SMEM opt-in, four
    cuTensorMapEncodeTiled calls with tensor_map_params at the given addresses, kernel parameters packed as
    (4 x 128-B maps, 64-B aligned; u64 c; u32 M, N, K), grid/block/smem of launch_plan, the caller's stream; the
    encoded parameters are reused on a repeated call with the same pointers."""
    from ptxlab import tensormap

    mod = load(write_submission(tmp_path, "nvfp4_gemm", variant="1sm"))
    fake = _fake_cuda(monkeypatch)
    m, n, k, l = 256, 512, 768, 2
    ptrs = (0x10000, 0x20000, 0x30000, 0x40000, 0x50000)
    runner = mod.CudaGemm(0)
    assert runner.arch == "sm_100a"
    runner.launch(*ptrs, m, n, k, l, stream=1234)
    plan = mod.launch_plan(m, n, k, l, variant="1sm")
    prm = mod.tensor_map_params(m, n, k, l, plan["bn"])
    assert len(fake.modules) == 1 and fake.attrs == [(("module1", mod.KERNEL_NAME),
                                                      "max_dyn_smem", plan["shared_bytes"])]
    assert [e["address"] for e in fake.encodes] == list(ptrs[:4])
    for e, name in zip(fake.encodes, ("a", "b", "sfa", "sfb")):
        p = prm[name]
        assert e["rank"] == len(p["global_shape"]) and e["dims"] == list(p["global_shape"])
        assert e["strides"] == list(p["global_strides"]) and e["box"] == list(p["box"])
        assert e["es"] == list(p["element_strides"])
        assert e["dtype"] == tensormap.DTYPE_CODES[p["dtype"]]
        assert e["swizzle"] == tensormap.SWIZZLE_CODES[p["swizzle"]]
        assert (e["interleave"], e["l2"], e["oob"]) == (0, 0, 0)
    (launch,) = fake.launches
    assert launch["func"] == ("module1", mod.KERNEL_NAME)
    assert launch["grid"] == plan["grid"] == (2, 2, 2) and launch["block"] == (192, 1, 1)
    assert launch["smem"] == plan["shared_bytes"] and launch["stream"] == ("CUstream", 1234)
    assert launch["maps"] == [bytes([i + 1]) * 128 for i in range(4)] and launch["map_align"] == [0] * 4
    assert launch["c"] == ptrs[4] and launch["mnk"] == (m, n, k)
    runner.launch(*ptrs, m, n, k, l, stream=1234)  # same tensors: no re-encode, no recompile
    assert len(fake.encodes) == 4 and len(fake.modules) == 1 and len(fake.launches) == 2
    runner.launch(*ptrs[:4], 0x60000, m, n, k, l)  # another c: new parameter set
    assert len(fake.encodes) == 8 and fake.launches[-1]["c"] == 0x60000
    monkeypatch.setattr(fake, "cc", (9, 0))
    with pytest.raises(RuntimeError, match="compute capability 10.x"):
        mod.CudaGemm(0)


def test_gemm_in_place_layout_check(tmp_path: Path) -> None:
    """gpu-mode's tensors are used in place (no copy); a tensor in another memory order is copied to the kernel's."""
    torch = pytest.importorskip("torch", reason="no torch: the optional extra .[torch] is not installed")
    mod = load(write_submission(tmp_path, "nvfp4_gemm"))
    data = gm.to_torch(gm.generate_gemm(128, 256, 256, 2, 3))
    names = ("a", "b", None, None, "sfa_permuted", "sfb_permuted", "c")
    for t, name in zip(data, names):
        if name is None:
            continue
        u = t.view(torch.uint8) if t.dtype != torch.float16 else t
        assert mod._in_place(u, mod._PHYS[name]) is u, name
    a = data[0].view(torch.uint8)
    other = a.contiguous()  # (M, K/2, L) row-major: not gpu-mode's (L, M, K/2) memory
    fixed = mod._in_place(other, mod._PHYS["a"])
    assert fixed is not other and fixed.permute(2, 0, 1).is_contiguous() and torch.equal(fixed, a)


# ------------------------------------------------------------------------------------------------ split-K (opt-in)
def test_gemm_export_splits_default_unchanged(tmp_path: Path) -> None:
    """Without --splits the exported file keeps the adapter's `GEMM_SPLITS = 1` line (no split-K unless the env var
    asks); --splits S / auto rewrites only that line; invalid --splits values are refused."""
    from ptxlab.production import gemm as G
    from ptxlab.production import submission_gemm as compat

    text = export.render("nvfp4_gemm", variant="1sm")
    assert re.search(r"^GEMM_SPLITS = 1  #", text, re.M)
    for value, want in (("2", 2), ("auto", "auto"), ("AUTO", "auto"), (3, 3)):
        baked = export.render("nvfp4_gemm", splits=value, variant="1sm")
        assert re.search(rf"^GEMM_SPLITS = {want!r}  # split-K default baked", baked, re.M)
        diff = [(x, y) for x, y in zip(text.splitlines(), baked.splitlines()) if x != y]
        assert len(diff) == 1 and len(text.splitlines()) == len(baked.splitlines()), diff
    for bad in ("0", "-1", "two", "1.5", "", True):
        with pytest.raises(ValueError, match="split-K setting"):
            export.render("nvfp4_gemm", splits=bad, variant="1sm")
    with pytest.raises(ValueError, match="split-K is an option of --variant 1sm"):
        export.render("nvfp4_gemm", splits="2")  # the default variant (cluster) has no split-K
    with pytest.raises(ValueError, match="nvfp4_gemm only"):
        export.render("nvfp4_gemv", splits="2")
    assert lab_main(["export", "--problem", "nvfp4_gemm", "--out", str(tmp_path / "x.py"), "--splits", "nope"]) == 2
    assert not (tmp_path / "x.py").exists()
    # one heuristic / one validator: gemm.py uses the adapter's
    assert G.choose_splits is compat.choose_splits and G.check_splits is compat.check_splits
    mod = load(write_submission(tmp_path, "nvfp4_gemm"))
    assert mod.GEMM_SPLITS == 1 and mod.launch_plan(128, 256, 512, 1) == {**mod.launch_plan(128, 256, 512, 1, 1)}
    assert mod.launch_plan(128, 256, 512, 1, variant="1sm")["grid"] == (1, 1, 1)


def test_gemm_resolve_splits_env(tmp_path: Path, monkeypatch) -> None:
    """PTXLAB_GEMM_SPLITS overrides the module default; S is capped per shape; auto = choose_splits; invalid values
    raise a ValueError that names the variable."""
    from ptxlab.production import gemm as G

    mod = load(write_submission(tmp_path, "nvfp4_gemm", splits="auto", variant="1sm"))
    monkeypatch.delenv("PTXLAB_GEMM_SPLITS", raising=False)
    assert mod.GEMM_SPLITS == "auto"
    for shape in [(128, 7168, 16384, 1), (128, 4096, 7168, 1), (128, 256, 256, 1), (2304, 4608, 7168, 1)]:
        assert mod.resolve_splits(*shape) == G.choose_splits(*shape)
    assert mod.resolve_splits(128, 7168, 16384, 1) == 5
    monkeypatch.setenv("PTXLAB_GEMM_SPLITS", "1")
    assert mod.resolve_splits(128, 7168, 16384, 1) == 1
    monkeypatch.setenv("PTXLAB_GEMM_SPLITS", " 4 ")
    assert mod.resolve_splits(128, 256, 2048, 1) == 4
    assert mod.resolve_splits(128, 256, 512, 1) == 2  # capped to K/256
    assert mod.resolve_splits(128, 256, 65535 * 256, 40000) == 1  # capped to 65535 // L
    monkeypatch.setenv("PTXLAB_GEMM_SPLITS", "")  # empty = unset: the baked default
    assert mod.resolve_splits(128, 7168, 16384, 1) == 5
    for bad in ("0", "-2", "two", "1.5", "auto2", "0x2"):
        monkeypatch.setenv("PTXLAB_GEMM_SPLITS", bad)
        with pytest.raises(ValueError, match="PTXLAB_GEMM_SPLITS"):
            mod.resolve_splits(128, 256, 512, 1)
    torch = pytest.importorskip("torch", reason="no torch: the optional extra .[torch] is not installed")
    data = gm.to_torch(gm.generate_gemm(128, 256, 512, 1, 1))
    with pytest.raises(ValueError, match="PTXLAB_GEMM_SPLITS"):
        mod.custom_kernel(data)
    for bad in (0, -1, 2.0, True, "x"):
        with pytest.raises(ValueError):
            mod.launch_plan(128, 256, 512, 1, bad, "1sm")
    with pytest.raises(ValueError, match="exceeds the K/256"):
        mod.launch_plan(128, 256, 512, 1, 3, "1sm")
    del torch


@pytest.mark.parametrize("how", ["export", "env"])
def test_gemm_gpumode_harness_emulator_split_k(tmp_path: Path, rng, monkeypatch, how: str) -> None:
    """gpu-mode eval flow with split-K on: the file exported with --splits 2 (or the default export with
    PTXLAB_GEMM_SPLITS=2) runs the -DGEMM_SPLITS=2 build of its embedded kernel on the emulator; c poisoned,
    reference at rtol = atol = 1e-3."""
    torch = pytest.importorskip("torch", reason="no torch: the optional extra .[torch] is not installed")
    monkeypatch.delenv("PTXLAB_GEMM_SPLITS", raising=False)
    mod = load(write_submission(tmp_path, "nvfp4_gemm", splits="2" if how == "export" else None, variant="1sm"))
    if how == "env":
        monkeypatch.setenv("PTXLAB_GEMM_SPLITS", "2")
    mod._EMU.clear()
    for m, n, k, l in [(128, 256, 512, 1), (256, 256, 768, 2)]:
        seed = int(rng.integers(1 << 31))
        data = gm.to_torch(gm.generate_gemm(m, n, k, l, seed))
        data[6].fill_(float("nan"))  # poison c
        ref = torch.from_numpy(gm.reference_gemm(gm.from_torch(data)))
        out = mod.custom_kernel(data)
        assert out is data[6] and out.shape == (m, n, l) and out.dtype == torch.float16
        assert not torch.isnan(out).any(), f"seed={seed}: outputs left poisoned"
        assert gm.check_close(out.numpy(), ref.numpy(), rtol=1e-3, atol=1e-3) == [], f"seed={seed}"
    assert set(k for k in mod._EMU if k != "dev") == {(256, 4, 2)}
    assert mod._EMU[(256, 4, 2)].source == mod.KERNEL_SRC
    assert "-DGEMM_SPLITS=2" in mod._EMU[(256, 4, 2)].options


def test_gemm_cuda_path_split_k_with_fake_driver(tmp_path: Path, monkeypatch) -> None:
    """Split-K through the driver-API plumbing without a GPU: the -DGEMM_SPLITS=S build compiled per (BN, S) (S=1
    keeps the default options), workspace + counters allocated zeroed once per shape and packed as two u64 after
    (c, M, N, K), grid z = L*S, reuse on repeated calls."""
    mod = load(write_submission(tmp_path, "nvfp4_gemm", variant="1sm"))
    fake = _fake_cuda(monkeypatch)
    opts_seen = []
    real = mod.nvrtc_compile

    def spy_nvrtc(src, arch, name, opts):
        opts_seen.append(tuple(opts))
        return real(src, arch, name, opts)

    monkeypatch.setattr(mod, "nvrtc_compile", spy_nvrtc)

    class Buf:
        def __init__(self, addr: int, nbytes: int) -> None:
            self.addr, self.nbytes = addr, nbytes

        def data_ptr(self) -> int:
            return self.addr

    allocs = []

    def alloc(nbytes: int) -> Buf:
        allocs.append(Buf(0x900000 + 0x100000 * len(allocs), nbytes))
        return allocs[-1]

    m, n, k, l = 256, 512, 768, 2
    ptrs = (0x10000, 0x20000, 0x30000, 0x40000, 0x50000)
    runner = mod.CudaGemm(0, alloc_zeroed=alloc)
    runner.launch(*ptrs, m, n, k, l, stream=7)  # default: no split-K, the default build and 8 parameters
    assert opts_seen == [("-DGEMM_BN=256", "-DGEMM_STAGES=4")] and allocs == []
    assert fake.launches[-1]["grid"] == (2, 2, 2)
    fake.nparams = 10
    runner.launch(*ptrs, m, n, k, l, stream=7, splits=3)
    plan = mod.launch_plan(m, n, k, l, 3, "1sm")
    assert opts_seen[-1] == ("-DGEMM_BN=256", "-DGEMM_STAGES=4", "-DGEMM_SPLITS=3") and len(fake.modules) == 2
    assert [a.nbytes for a in allocs] == [3 * 4 * l * m * n, 4 * l * (m // 128) * (n // 256)]  # ordered: 3 slots
    assert plan["workspace_bytes"] == sum(a.nbytes for a in allocs)
    launch = fake.launches[-1]
    assert launch["grid"] == plan["grid"] == (2, 2, 6) and launch["smem"] == plan["shared_bytes"]
    assert launch["func"] == ("module2", mod.KERNEL_NAME)
    assert fake.encodes[4:8] == fake.encodes[:4]  # a new parameter set (per splits): the same maps, encoded again
    assert launch["maps"] == [bytes([i + 5]) * 128 for i in range(4)]
    assert launch["map_align"] == [0] * 4 and launch["c"] == ptrs[4] and launch["mnk"] == (m, n, k)
    assert launch["extra"] == [allocs[0].addr, allocs[1].addr]
    n_enc = len(fake.encodes)
    runner.launch(*ptrs, m, n, k, l, stream=7, splits=3)  # cached: no recompile, re-encode or re-allocation
    runner.launch(*ptrs[:4], 0x60000, m, n, k, l, splits=3)  # another c: new params, same workspace
    assert len(fake.modules) == 2 and len(allocs) == 2 and len(fake.encodes) == n_enc + 4
    assert fake.launches[-1]["extra"] == [allocs[0].addr, allocs[1].addr] and fake.launches[-1]["c"] == 0x60000
    runner.launch(*ptrs, 128, 256, 512, 1, splits=2)  # another shape and S: its own build and workspace
    assert opts_seen[-1][-1] == "-DGEMM_SPLITS=2" and len(allocs) == 4 and allocs[2].nbytes == 2 * 4 * 128 * 256
    runner.launch(*ptrs, 128, 256, 512, 1, splits=2, reduce="atomic")  # opt-in atomic: its build, one image
    assert opts_seen[-1][-2:] == ("-DGEMM_SPLITS=2", "-DGEMM_SPLITK_ATOMIC=1") and allocs[4].nbytes == 4 * 128 * 256
    with pytest.raises(ValueError, match="exceeds the K/256"):
        runner.launch(*ptrs, 128, 256, 512, 1, splits=3)


# ------------------------------------------------------------------------------------------------ cluster (default)
@pytest.mark.parametrize("m,n,k,l", [(128, 256, 256, 1), (256, 384, 768, 2), (128, 1024, 512, 1), (384, 7168, 256, 1),
                                     (128, 7168, 16384, 1)])
def test_gemm_cluster_adapter_map_params_equal_wrapper(tmp_path: Path, m: int, n: int, k: int, l: int) -> None:
    """The default (cluster) variant: the exported adapter's five cuTensorMapEncodeTiled inputs (a, b, sfa, sfb and
    the fp16 output) and its launch (grid, cluster dims, non-portable flag, SMEM, 10 arguments: 5 maps + M, N, K,
    warm, ws) equal what ptxlab.production.gemm_cluster builds and launches on an emulator device."""
    import ptxlab
    from ptxlab.production import gemm as G

    mod = load(write_submission(tmp_path, "nvfp4_gemm"))
    dev = ptxlab.open_device("emu")
    report: dict = {}
    try:
        spy = _SpyDevice(dev)
        G.nvfp4_gemm(spy, gm.generate_gemm(m, n, k, l, 7), module="not compiled: launch is recorded only",
                     report=report)
    finally:
        dev.close()
    plan = mod.launch_plan(m, n, k, l)
    assert plan["variant"] == report["variant"] == "cluster" and plan == {k_: report[k_] for k_ in plan}
    prm = mod.cluster_tensor_map_params(m, n, k, l, plan["bn"], plan["cluster_size"])
    got = list(spy.maps.values())
    assert len(got) == 5
    for spec, name in zip(got, ("a", "b", "sfa", "sfb", "c")):
        for field in ("dtype", "global_shape", "global_strides", "box", "element_strides", "swizzle", "interleave",
                      "l2_promotion", "oob_fill"):
            w = prm[name][field]
            w = tuple(w) if isinstance(w, (tuple, list)) else w
            assert getattr(spec, field) == w, (name, field, getattr(spec, field), w)
    (launch,) = spy.launches
    assert launch["kernel"] == mod.CLUSTER_KERNEL_NAME and launch["nargs"] == 10
    assert launch["grid"] == plan["grid"] and launch["block"] == plan["block"]
    assert launch["shared_bytes"] == plan["shared_bytes"] <= 232448 - 1024
    assert launch.get("cluster") == plan["cluster"] and launch.get("non_portable_cluster", False) == plan["non_portable"]


def test_gemm_cluster_config_of_benchmark_shapes(tmp_path: Path) -> None:
    """The configs the predictions were made with (ptx_docs/production_gemm.md), and the plan's rules: every
    GEMM_TESTS shape gets a config that fits SMEM and TMEM, divides N and its N tiles."""
    mod = load(write_submission(tmp_path, "nvfp4_gemm"))
    got = [(mod.choose_cluster_config(b["m"], b["n"], b["k"], b["l"])) for b in gm.GEMM_BENCHMARKS]
    assert [(c["bn"], c["cluster"], c["splits"], c["stages"], c["warm"]) for c in got] == [
        (64, 16, 1, 8, 3), (128, 4, 4, 6, 3), (64, 8, 1, 8, 3)]
    nosplit = [mod.choose_cluster_config(b["m"], b["n"], b["k"], b["l"], splits=1) for b in gm.GEMM_BENCHMARKS]
    assert [(c["bn"], c["cluster"], c["stages"], c["warm"]) for c in nosplit] == [(64, 16, 8, 3), (32, 8, 8, 3),
                                                                                (64, 8, 8, 3)]
    for t in list(gm.GEMM_TESTS) + list(gm.GEMM_BENCHMARKS):
        plan = mod.launch_plan(t["m"], t["n"], t["k"], t["l"])
        bn, c = plan["bn"], plan["cluster_size"]
        assert t["n"] % bn == 0 and (t["n"] // bn) % c == 0 and plan["grid"][1] % c == 0
        ks = plan["splits"]
        assert (bn // ks) % 32 == 0 and t["k"] // 256 >= ks and c * ks <= 16 and plan["grid"][2] == t["l"] * ks
        assert plan["shared_bytes"] + mod.STATIC_SMEM <= mod.SMEM_OPTIN
        assert mod.cluster_tmem_cols(bn, plan["stages"]) <= 512
    with pytest.raises(ValueError, match="split-K"):
        mod.launch_plan(128, 256, 512, 1, 2)            # split-K is a 1sm option
    with pytest.raises(ValueError, match="multiple of 32"):
        mod.launch_plan(128, 200, 512, 1)
    with pytest.raises(ValueError, match="cluster size"):
        mod.cluster_launch_plan(128, 256, 512, 1, {"bn": 64, "cluster": 8})  # 4 N tiles
    with pytest.raises(ValueError, match="do not fit"):
        mod.cluster_launch_plan(128, 256, 512, 1, {"bn": 256, "cluster": 1, "stages": 5})
    with pytest.raises(ValueError, match="multiple of 32"):
        mod.cluster_launch_plan(128, 256, 512, 1, {"bn": 64, "cluster": 1, "splits": 4})  # 16 columns per split
    with pytest.raises(ValueError, match="fewer than splits"):
        mod.cluster_launch_plan(128, 256, 256, 1, {"bn": 128, "cluster": 1, "splits": 2})
    with pytest.raises(ValueError, match="CTAs per cluster"):
        mod.cluster_launch_plan(128, 4096, 2048, 1, {"bn": 128, "cluster": 16, "splits": 2})


def test_gemm_cluster_cuda_path_with_fake_driver(tmp_path: Path, monkeypatch) -> None:
    """The default variant through the driver-API plumbing without a GPU: NVRTC (real) of the embedded cluster
    kernel with its config's options, dynamic-SMEM opt-in (+ non-portable cluster sizes for 16-CTA clusters), five
    encodes (a, b, sfa, sfb, c) with cluster_tensor_map_params, parameters packed as 5 x 128-B maps (64-B aligned)
    then u32 M, N, K, warm and the split-K workspace (allocated once per shape), cuLaunchKernelEx with the cluster
    dimension (1, C, splits); a GPU that cannot keep enough 16-CTA clusters resident (cuOccupancyMaxActiveClusters)
    gets 8-CTA ones (C halved)."""
    from ptxlab import tensormap

    mod = load(write_submission(tmp_path, "nvfp4_gemm"))
    fake = _fake_cuda(monkeypatch)
    fake.CUfunction_attribute.CU_FUNC_ATTRIBUTE_NON_PORTABLE_CLUSTER_SIZE_ALLOWED = "non_portable"
    fake.max_clusters = 8
    opts_seen = []
    real = mod.nvrtc_compile

    def spy_nvrtc(src, arch, name, opts):
        opts_seen.append((src is mod.CLUSTER_KERNEL_SRC, name, tuple(opts)))
        return real(src, arch, name, opts)

    monkeypatch.setattr(mod, "nvrtc_compile", spy_nvrtc)
    ptrs = (0x10000, 0x20000, 0x30000, 0x40000, 0x50000)
    allocs = []

    class Buf:
        def __init__(self, addr: int, nbytes: int) -> None:
            self.addr, self.nbytes = addr, nbytes

        def data_ptr(self) -> int:
            return self.addr

    def alloc(nbytes: int) -> Buf:
        allocs.append(Buf(0x900000 + 0x100000 * len(allocs), nbytes))
        return allocs[-1]

    runner = mod.CudaGemm(0, alloc_zeroed=alloc)
    m, n, k, l = 128, 4096, 7168, 1   # the plan's split-K shape: BN 128, 4 splits, (1, 4, 4) clusters
    runner.launch(*ptrs, m, n, k, l, stream=99)
    plan = mod.launch_plan(m, n, k, l)
    assert plan["cluster"] == (1, 4, 4) and plan["non_portable"]
    assert opts_seen == [(True, "nvfp4_gemm_cluster.cu", ("-DGEMM_BN=128", "-DGEMM_CLUSTER=4", "-DGEMM_STAGES=6",
                                                          "-DGEMM_SPLITS=4"))]
    func = ("module1", mod.CLUSTER_KERNEL_NAME)
    assert (func, "max_dyn_smem", plan["shared_bytes"]) in fake.attrs and (func, "non_portable", 1) in fake.attrs
    prm = mod.cluster_tensor_map_params(m, n, k, l, 128, 4)
    assert [e["address"] for e in fake.encodes] == list(ptrs)
    for e, name in zip(fake.encodes, ("a", "b", "sfa", "sfb", "c")):
        p = prm[name]
        assert (e["dims"], e["strides"], e["box"]) == (list(p["global_shape"]), list(p["global_strides"]),
                                                       list(p["box"]))
        assert e["dtype"] == tensormap.DTYPE_CODES[p["dtype"]] and e["swizzle"] == tensormap.SWIZZLE_CODES[p["swizzle"]]
        assert e["l2"] == tensormap.L2_PROMOTION_CODES[p["l2_promotion"]]
    (launch,) = fake.ex_launches
    assert launch["func"] == func and launch["grid"] == (1, 32, 4) and launch["cluster"] == (1, 4, 4)
    assert launch["smem"] == plan["shared_bytes"] and launch["stream"] == ("CUstream", 99)
    assert launch["maps"] == [bytes([i + 1]) * 128 for i in range(5)] and launch["map_align"] == [0] * 5
    assert launch["scalars"] == [m, n, k, plan["warm"]]
    assert [a.nbytes for a in allocs] == [plan["workspace_bytes"]] == [32 * 16 * 128 * 32 * 4]
    assert launch["ws"] == allocs[0].addr
    runner.launch(*ptrs, m, n, k, l, stream=99)  # cached: no recompile, no re-encode
    assert len(fake.modules) == 1 and len(fake.encodes) == 5 and len(fake.ex_launches) == 2
    fake.max_clusters = 7  # 8 clusters of 16 are needed: fall back to 8-CTA clusters
    runner2 = mod.CudaGemm(0, alloc_zeroed=alloc)
    runner2.launch(*ptrs, m, n, k, l)
    assert fake.ex_launches[-1]["cluster"] == (1, 2, 4) and opts_seen[-1][2][1] == "-DGEMM_CLUSTER=2"
    assert fake.encodes[-5]["box"] == [128, 64, 1]  # the A slice of a 2-CTA split group
    runner2.launch(*ptrs, 128, 7168, 16384, 1)   # no split-K: (1, 16, 1), no workspace, ws argument 0
    assert fake.ex_launches[-1]["cluster"] == (1, 16, 1) and fake.ex_launches[-1]["ws"] == 0
    assert opts_seen[-1][2] == ("-DGEMM_BN=64", "-DGEMM_CLUSTER=16", "-DGEMM_STAGES=8")


def test_gemm_cluster_gpumode_harness_emulator_off_list(tmp_path: Path, rng) -> None:
    """gpu-mode eval flow on the DEFAULT export (cluster variant) for shapes that are not in GEMM_TESTS (N multiples
    of 32 but not of 128 or 256, L = 2, M = 384) with every fp4 code in a and b: c poisoned, custom_kernel, c ==
    reference_gemm bit for bit (gpu-mode's sums are exact in fp32) and within gpu-mode's tolerance; the embedded
    cluster text was compiled, with the plan's config."""
    torch = pytest.importorskip("torch", reason="no torch: the optional extra .[torch] is not installed")
    from ptxlab.numerics import unpack_fp4

    mod = load(write_submission(tmp_path, "nvfp4_gemm"))
    mod._EMU.clear()
    for m, n, k, l in [(128, 96, 512, 2), (384, 160, 256, 1), (256, 224, 768, 1)]:
        seed = int(rng.integers(1 << 31))
        p = gm.generate_gemm(m, n, k, l, seed)
        codes = np.concatenate([unpack_fp4(p.a[:, :, i]).ravel() for i in range(l)] +
                               [unpack_fp4(p.b[:, :, i]).ravel() for i in range(l)])
        assert set(np.unique(codes).tolist()) == set(range(16)), f"seed={seed}: not every fp4 code present"
        data = gm.to_torch(p)
        data[6].fill_(float("nan"))
        out = mod.custom_kernel(data)
        ref = gm.reference_gemm(p)
        assert out is data[6] and not torch.isnan(out).any(), f"seed={seed} {(m, n, k, l)}: outputs left poisoned"
        assert (out.numpy().view(np.uint16) == ref.view(np.uint16)).all(), f"seed={seed} {(m, n, k, l)}: not exact"
        assert gm.check_close(out.numpy(), ref, rtol=1e-3, atol=1e-3) == [], f"seed={seed}"
        plan = mod.launch_plan(m, n, k, l)
        key = ("cluster", plan["bn"], plan["cluster_size"], plan["stages"])
        assert mod._EMU[key].source == mod.CLUSTER_KERNEL_SRC
