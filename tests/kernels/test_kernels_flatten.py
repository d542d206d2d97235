"""ptxlab.kernels.flatten: local quoted includes inlined recursively (once per #pragma once file, guards kept),
system / unresolved includes left alone, cycles and conditional includes refused; the flattened production kernels
compile without include dirs to the include-based build's PTX."""
from __future__ import annotations

import re
from pathlib import Path

import pytest

from ptxlab.kernels import BLOCKS_DIR, KERNELS_DIR, read
from ptxlab.kernels.flatten import FlattenError, flatten, flatten_text, remaining_includes


def tree(root: Path, files: dict) -> Path:
    for name, text in files.items():
        p = root / name
        p.parent.mkdir(parents=True, exist_ok=True)
        p.write_text(text)
    return root


def code_lines(text: str) -> list:
    return [ln for ln in text.splitlines() if ln.strip() and not ln.lstrip().startswith("//")]


def test_pragma_once_inlined_once_and_relative_resolution(tmp_path: Path) -> None:
    root = tree(tmp_path, {
        "k.cu": '#include "inc/a.cuh"\n#include "inc/b.cuh"\n#include <cstdint>\nint main_body;\n',
        "inc/a.cuh": '#pragma once\n#include "common.cuh"\nint a;\n',              # sibling of the includer
        "inc/b.cuh": '  #  pragma   once\n#include "inc/common.cuh"\nint b;\n',    # via include_dirs (root)
        "inc/common.cuh": "#pragma once\nint common;\n",
    })
    out = flatten(root / "k.cu", include_dirs=[root])
    assert code_lines(out) == ["int common;", "int a;", "int b;", "#include <cstdint>", "int main_body;"]
    assert remaining_includes(out) == ["<cstdint>"]
    assert "already inlined above" in out


def test_guarded_header_kept_and_reincluded(tmp_path: Path) -> None:
    """A header with classic guards (no #pragma once) is inlined at each include with its guards intact, so the
    preprocessor keeps the first copy only, as it would with the include."""
    root = tree(tmp_path, {
        "k.cu": '#include "g.h"\n#include "g.h"\nint k;\n',
        "g.h": "#ifndef G_H\n#define G_H\nint g;\n#endif\n",
    })
    out = flatten(root / "k.cu", include_dirs=[root])
    assert out.count("#ifndef G_H") == 2 and out.count("int g;") == 2


def test_unresolved_quoted_include_left_alone(tmp_path: Path) -> None:
    root = tree(tmp_path, {"k.cu": '#include "cuda_fp16.h"  // from -I\nint k;\n'})
    out = flatten(root / "k.cu", include_dirs=[root])
    assert remaining_includes(out) == ["cuda_fp16.h"]
    assert out.startswith('#include "cuda_fp16.h"')


def test_commented_includes_ignored(tmp_path: Path) -> None:
    root = tree(tmp_path, {
        "k.cu": '// #include "x.h"\n/* #include "x.h"\n#include "x.h" */\nint k;\n',
        "x.h": "int x;\n",
    })
    out = flatten(root / "k.cu", include_dirs=[root])
    assert "int x;" not in out
    assert remaining_includes(out) == []


def test_cycle_and_conditional_refused(tmp_path: Path) -> None:
    root = tree(tmp_path, {
        "c1.cu": '#include "a.h"\n', "a.h": '#include "b.h"\n', "b.h": '#include "a.h"\n',
        "c2.cu": '#ifdef X\n#include "p.h"\n#endif\n', "p.h": "#pragma once\nint p;\n",
        "c3.cu": '#ifdef X\nint y;\n#endif\n#include "p.h"\n',
    })
    with pytest.raises(FlattenError, match="cycle"):
        flatten(root / "c1.cu", include_dirs=[root])
    with pytest.raises(FlattenError, match="conditional"):
        flatten(root / "c2.cu", include_dirs=[root])
    assert "int p;" in flatten(root / "c3.cu", include_dirs=[root])  # closed conditional: fine


def test_flatten_text_uses_base_dir(tmp_path: Path) -> None:
    root = tree(tmp_path, {"h.cuh": "#pragma once\nint h;\n"})
    assert code_lines(flatten_text('#include "h.cuh"\n', base_dir=root, include_dirs=[])) == ["int h;"]


def own_lines(out: str, block: str) -> list:
    """The lines of ``block``'s inlined region of a flatten output, minus the markers and minus the regions of the
    blocks inlined inside it (nested includes)."""
    lines = out.splitlines()
    start = lines.index(next(ln for ln in lines if ln.startswith(f"// ---- begin {block} ")))
    own, depth = [], 0
    for ln in lines[start + 1:]:
        if ln.startswith("// ---- begin "):
            depth += 1
        elif ln.startswith("// ---- end "):
            if depth == 0:
                return own
            depth -= 1
        elif depth == 0 and not re.match(r"// ---- .* ----$", ln):
            own.append(ln)
    raise AssertionError(f"no end marker for {block}")


def test_production_gemm_flattened() -> None:
    """Every block the GEMM includes is inlined exactly once, in include order, with its text unchanged
    (pragma lines and nested includes aside); the result has no include left."""
    src = read("nvfp4_gemm_tcgen05.cu")
    out = flatten("nvfp4_gemm_tcgen05.cu")
    assert remaining_includes(out) == []
    begins = re.findall(r"^// ---- begin (\S+) ", out, re.M)
    # pair.cuh includes cluster.cuh: a nested block is inlined where its includer includes it
    assert begins == ["blocks/common.cuh", "blocks/mbarrier.cuh", "blocks/tma.cuh", "blocks/tmem.cuh",
                      "blocks/scales.cuh", "blocks/mma.cuh", "blocks/epilogue.cuh", "blocks/splitk.cuh",
                      "blocks/pair.cuh", "blocks/cluster.cuh"]
    for b in begins:
        body = (KERNELS_DIR / b).read_text()
        kept = [ln for ln in body.splitlines() if not re.match(r"\s*#\s*(pragma\s+once|include\s)", ln)]
        assert own_lines(out, b) == kept, b
    tail = src[src.index("#ifndef GEMM_BN"):]
    assert out.endswith(tail)
    assert flatten(KERNELS_DIR / "nvfp4_gemm_tcgen05.cu") == out
    assert all(p.suffix == ".cuh" for p in BLOCKS_DIR.iterdir() if p.is_file())


@pytest.mark.parametrize("kernel,opts", [("nvfp4_gemm_tcgen05.cu", ("-DGEMM_BN=128", "-DGEMM_STAGES=2")),
                                         ("nvfp4_gemv_tcgen05.cu", ())])
def test_flattened_same_ptx_without_include_dirs(kernel: str, opts: tuple) -> None:
    import ptxlab

    ref = ptxlab.compile(read(kernel), arch="sm_100a", name=kernel, options=opts, include_dirs=[KERNELS_DIR])
    flat = ptxlab.compile(flatten(kernel), arch="sm_100a", name=kernel, options=opts)
    assert flat.ptx == ref.ptx
