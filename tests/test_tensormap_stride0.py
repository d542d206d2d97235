"""0-byte global strides (issue 12, item 2): cuTensorMapEncodeTiled on an H100 accepted a 0 stride on dims of size 1
and of size > 1 (tools/probes/tmap_stride0_probe.py, data in tests/fidelity/tensormap/data); ptxlab's validate()
accepts what the driver accepted, and the emulator's TMA reads through such maps what the H100 read."""
from __future__ import annotations

import gzip
import json
import sys
from pathlib import Path

import numpy as np
import pytest

import ptxlab
from ptxlab.errors import TensorMapError
from ptxlab.tensormap import TensorMapSpec

HERE = Path(__file__).resolve().parent
DATA = HERE / "fidelity" / "tensormap" / "data" / "h100_20261124_tmap_stride0.json.gz"
sys.path.insert(0, str(HERE.parent / "tools" / "probes"))
import tmap_stride0_probe as probe  # noqa: E402


@pytest.fixture(scope="module")
def h100() -> dict:
    with gzip.open(DATA, "rt") as f:
        return json.load(f)


def test_data_is_the_probe_cases(h100) -> None:
    """The recorded encodes are exactly the probe's case list (so the replay covers what the probe claims)."""
    got = [(r["dtype"], r["dims"], r["strides"], r["box"]) for r in h100["encode"]]
    want = [(c["dtype"], c["dims"], c["strides"], c["box"]) for c in probe.encode_cases()]
    assert got == want
    assert "H100" in h100["device"]
    zero1 = [r for r in h100["encode"] if r["zero"] and r["size"] == 1]
    zero_big = [r for r in h100["encode"] if r["zero"] and r["size"] > 1]
    assert len(zero1) >= 100 and len(zero_big) >= 200


def test_validate_matches_the_driver(h100) -> None:
    for r in h100["encode"]:
        s = TensorMapSpec.make(r["dtype"], 0x10000, r["dims"], r["strides"], r["box"])
        if r["ok"]:
            s.validate()
        else:
            with pytest.raises(TensorMapError):
                s.validate()


def test_zero_stride_still_needs_16_byte_multiples() -> None:
    TensorMapSpec.make("UINT8", 0x10000, [64, 1], [0], [64, 1]).validate()
    for bad in (-16, 8):
        with pytest.raises(TensorMapError, match="multiple of 16"):
            TensorMapSpec.make("UINT8", 0x10000, [64, 2], [bad], [64, 1]).validate()


def _emu_map(dev, spec):
    return probe.raw_map(dev, spec)


def test_emulator_loads_match_the_h100(h100) -> None:
    """Same kernel, same maps on the emulator: per z the same class as the H100 (block0 / zeros / ...)."""
    dev = ptxlab.open_device("emu")
    got = probe.load_stage(dev, _emu_map)
    want = h100["load"]
    assert any(r["S"] == 0 and r["L"] > 1 for r in want)
    key = lambda r: (r["L"], r["S"], r.get("z"), r["encoded"], r.get("result"))  # noqa: E731
    assert [key(r) for r in got] == [key(r) for r in want]


def test_cutlass_batch_mode_stride0_map(rng) -> None:
    """CUTLASS's L == 1 batch mode: a rank-3 map with dim 2 of size 1 and stride 0 builds on the emu device and
    loads the (only) batch; through the public dev.tensor_map."""
    dev = ptxlab.open_device("emu")
    g = rng.integers(1, 256, size=(8, 64), dtype=np.uint8)
    x = dev.to_device(g)
    tm = dev.tensor_map(x, dtype=np.uint8, global_shape=[64, 8, 1], global_strides=[64, 0], box=[64, 8, 1])
    mod = ptxlab.compile(probe.LOAD_SRC, arch="sm_90a", name="stride0_load.cu")
    y = dev.empty(512)
    dev.memset(y, 0)
    dev.launch(mod, "load3d", grid=1, block=64, args=[tm, y, np.int32(0)])
    np.testing.assert_array_equal(dev.to_host(y, np.uint8, (512,)), g.reshape(-1))
