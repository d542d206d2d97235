"""`lab.py export`: the single-file gpu-mode submission is valid Python, embeds the kernel, and runs in a gpu-mode
style harness (generate_input -> custom_kernel -> check against reference) on the emulator path when torch exists."""
from __future__ import annotations

import ast
import importlib.util
import sys
from pathlib import Path

import numpy as np
import pytest

from ptxlab import gpumode as gm
from ptxlab.kernels import read
from ptxlab.lab.cli import main as lab_main
from ptxlab.production import export


def write_submission(tmp_path: Path) -> Path:
    out = tmp_path / "submission.py"
    assert lab_main(["export", "--problem", "nvfp4_gemv", "--out", str(out)]) == 0
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


def test_export_gemm_not_available(tmp_path: Path, capsys) -> None:
    out = tmp_path / "gemm.py"
    assert lab_main(["export", "--problem", "nvfp4_gemm", "--out", str(out)]) == 2
    assert "not available yet" in capsys.readouterr().out
    assert not out.exists()
    with pytest.raises(NotImplementedError):
        export.render("nvfp4_gemm")


def test_exported_kernel_compiles_with_bare_nvrtc(tmp_path: Path) -> None:
    mod = load(write_submission(tmp_path))
    for arch in ("sm_90a", "sm_100a"):
        assert len(mod.nvrtc_cubin(arch)) > 1000


def test_gpumode_harness_emulator(tmp_path: Path, rng) -> None:
    """gpu-mode eval flow: data = generate_input(...); out = custom_kernel(data); check_implementation(data, out)."""
    torch = pytest.importorskip("torch")
    mod = load(write_submission(tmp_path))
    mod._EMU_MODULES.clear()

    def generate_input(m: int, k: int, l: int, seed: int):
        return gm.to_torch(gm.generate_gemv(m, k, l, seed))

    def ref_kernel(data):
        return torch.from_numpy(gm.reference_gemv(gm.from_torch(data)))

    for m, k, l in [(128, 256, 1), (40, 512, 2)]:
        data = generate_input(m, k, l, seed=int(rng.integers(1 << 31)))
        data[6].fill_(float("nan"))  # poison c
        ref = ref_kernel(data)
        out = mod.custom_kernel(data)
        assert gm.check_close(out.numpy(), ref.numpy()) == []
        assert np.array_equal(out.numpy().view(np.uint16), ref.numpy().view(np.uint16))
    assert "sm_90a" in mod._EMU_MODULES  # the embedded text was compiled, not the package file
