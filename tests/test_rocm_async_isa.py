"""ISA evidence for the async global->LDS copy and the ``preload`` scheduling hints of the ROCm
preshuffle GEMM families, read from the final-ISA listings FlyDSL wrote at build time
(build/kernels/<arch>/<kernel>/<ident>.s, or $FLYGEMM_KERNEL_BUILD_DIR). The generic
code-object checks (LDS/scratch/registers/kernarg vs the launcher) are in test_code_objects.py.

* every async kernel loads A with ``buffer_load_dwordx4 ... lds`` (a_passes per K tile), has no
  ds_write at all, waits vmcnt(0) before every barrier (the DMA is not tracked by the compiler),
  and issues FEWER ds_write per K tile than its synchronous twin (same tile, same dtypes), which
  issues a_passes; synchronous kernels issue no LDS DMA;
* ``preload``: in every K tile of every kernel's loop, exactly preload[1] global loads and
  preload[0] A-fragment LDS reads come between the barrier that opens the tile's load/MFMA
  region and its first MFMA (without the hints LLVM's own order differs for most kernels); the
  value is the one the config asked for (or the default table's);
* the kernels CSV: async variants exist on gfx950 for bf16, fp16 and fp8, each with a synchronous
  twin, each used by a dispatch row; none on gfx942."""

import collections
import re

import pytest

import rocm_testlib as rt
from source_modules import load_source

FAMILIES = ("gemm_a16w16", "gemm_a8w8")
BUILT = rt.built_kernels(FAMILIES)
ASYNC = [(d, m) for d, m in BUILT if m["config"].get("async_copy")]

LDS_DMA = re.compile(r"^buffer_load_dwordx4\b.*\blds$")
DS_WRITE = re.compile(r"^ds_write")
DS_READ = re.compile(r"^ds_read_b128\b")
VMEM_LOAD = re.compile(r"^buffer_load_dwordx4\b")
MFMA = re.compile(r"^v_mfma_")


def _ident(item):
    return f"{item[1]['arch']}-{item[1]['name']}"


def _isa(item):
    """The GEMM kernel's listing (split-K records also hold the reduce kernel, which has its own
    loop and loads: test_code_objects.py checks it)."""
    kdir, meta = item
    return rt.isa_gemm_section((kdir / meta["isa"]).read_text(), meta["family"])


def _loop_tiles(isa, meta):
    """(loop bodies, K tiles they multiply): whole tiles, as LLVM may unroll the K loop."""
    loops = rt.isa_loops(isa)
    assert loops, f"{meta['name']}: no K loop in the listing"
    n_mfma = sum(1 for body in loops for ln in body if MFMA.match(ln))
    per_tile = meta["mfma_per_k_tile"]
    assert n_mfma % per_tile == 0 and n_mfma, (n_mfma, per_tile)
    return loops, n_mfma // per_tile


def _count(loops, pattern):
    return sum(1 for body in loops for ln in body if pattern.match(ln))


def _twin(meta):
    """The synchronous kernel with the same family, arch, dtypes and tile."""
    cfg = meta["config"]
    key = (meta["family"], meta["arch"], cfg["in_dtype"], cfg["out_dtype"], cfg["tile_m"], cfg["tile_n"],
           cfg["tile_k"])
    for kdir, m in BUILT:
        c = m["config"]
        if not c.get("async_copy") and key == (m["family"], m["arch"], c["in_dtype"], c["out_dtype"],
                                               c["tile_m"], c["tile_n"], c["tile_k"]):
            return kdir, m
    return None


@pytest.mark.skipif(not ASYNC, reason="no async-copy ROCm build outputs (run tools/build_kernels.py --arch gfx950)")
@pytest.mark.parametrize("item", ASYNC, ids=_ident)
def test_async_kernel_uses_lds_dma_and_fewer_ds_write_than_its_twin(item):
    _, meta = item
    cfg = meta["config"]
    assert meta["arch"] == "gfx950" and meta["async_copy"] is True and meta["lds_stages"] == 2
    a_passes = cfg["tile_m"] * cfg["tile_k"] * rt.IN_BYTES[cfg["in_dtype"]] // 16 // 256
    isa = _isa(item)
    body = rt.isa_instructions(isa)
    assert any(LDS_DMA.match(ln) for ln in body), "no buffer_load ... lds"
    assert not [ln for ln in body if DS_WRITE.match(ln)], "the async path must not write LDS with ds_write"
    loops, tiles = _loop_tiles(isa, meta)
    dma_per_tile = _count(loops, LDS_DMA) / tiles
    assert dma_per_tile == a_passes == meta["k_tile_instructions"]["vmem_load_dwordx4"] - _w_loads(cfg, meta)
    async_ds_write_per_tile = _count(loops, DS_WRITE) / tiles

    twin = _twin(meta)
    assert twin is not None, f"{meta['name']}: no synchronous twin built (same tile and dtypes)"
    t_isa = _isa(twin)
    t_loops, t_tiles = _loop_tiles(t_isa, twin[1])
    sync_ds_write_per_tile = _count(t_loops, DS_WRITE) / t_tiles
    assert sync_ds_write_per_tile == a_passes == twin[1]["k_tile_instructions"]["ds_write_b128"]
    assert async_ds_write_per_tile < sync_ds_write_per_tile, (async_ds_write_per_tile, sync_ds_write_per_tile)
    assert not [ln for ln in rt.isa_instructions(t_isa) if LDS_DMA.match(ln)], "twin uses LDS DMA"
    # the twins differ only in how A reaches LDS: same MFMAs and W loads per K tile
    assert _count(loops, MFMA) / tiles == _count(t_loops, MFMA) / t_tiles == meta["mfma_per_k_tile"]
    assert (_count(loops, VMEM_LOAD) - _count(loops, LDS_DMA)) / tiles == _w_loads(cfg, meta)


def _w_loads(cfg, meta):
    wm, wn = meta["waves"]
    kstep = 64 // rt.IN_BYTES[cfg["in_dtype"]]
    return cfg["tile_n"] // (16 * wn) * (cfg["tile_k"] // kstep)


@pytest.mark.skipif(not ASYNC, reason="no async-copy ROCm build outputs (run tools/build_kernels.py --arch gfx950)")
@pytest.mark.parametrize("item", ASYNC, ids=_ident)
def test_async_kernel_waits_for_its_dma_before_every_barrier(item):
    """The DMA is not tracked by the compiler: each barrier (after which other waves read what
    this wave's DMA wrote) must follow an explicit vmcnt(0)."""
    body = rt.isa_instructions(_isa(item))
    barriers = [i for i, ln in enumerate(body) if ln == "s_barrier"]
    assert barriers
    for i in barriers:
        assert re.match(r"^s_waitcnt\b.*\bvmcnt\(0\)", body[i - 1]), body[i - 3:i + 1]


@pytest.mark.skipif(not ASYNC, reason="no async-copy ROCm build outputs (run tools/build_kernels.py --arch gfx950)")
@pytest.mark.parametrize("item", ASYNC, ids=_ident)
def test_async_dma_overlaps_the_mfmas(item):
    """Between a K tile's barrier and the wait before the next one, nothing waits on vmcnt: the
    DMA of tile kt+1 is in flight during the MFMAs of tile kt. (With the compiler-tracked LDS DMA
    intrinsic, LLVM puts vmcnt(0) before the first ds_read_b128 of the tile.)"""
    _, meta = item
    loops, _ = _loop_tiles(_isa(item), meta)
    regions = 0
    for loop in loops:
        marks = [i for i, ln in enumerate(loop) if ln == "s_barrier"] + [len(loop) + 1]
        for b, nxt in zip(marks, marks[1:]):
            region = loop[b + 1:nxt - 1]  # up to the wait that precedes the next barrier
            assert any(LDS_DMA.match(ln) for ln in region) and any(MFMA.match(ln) for ln in region)
            waits = [ln for ln in region if re.match(r"^s_waitcnt\b.*\bvmcnt\(", ln)]
            assert not waits, (meta["name"], waits)
            regions += 1
    assert regions


@pytest.mark.skipif(not BUILT, reason="no ROCm build outputs (run tools/build_kernels.py)")
@pytest.mark.parametrize("item", BUILT, ids=_ident)
def test_preload_is_recorded_and_honoured(item):
    _, meta = item
    cfg = meta["config"]
    d, v = meta["preload"]
    assert [d, v] == list(cfg["preload"])
    counts = meta["k_tile_instructions"]
    assert 0 <= d <= counts["ds_read_b128"] and 0 <= v <= counts["vmem_load_dwordx4"]
    params = _csv_params(meta)
    if "preload" not in params:
        assert [d, v] == meta["preload_default"]
    body = rt.isa_instructions(_isa(item))
    if not cfg.get("async_copy"):
        assert not [ln for ln in body if LDS_DMA.match(ln)], "synchronous kernel with LDS DMA"
    loops, _ = _loop_tiles(_isa(item), meta)
    windows = 0
    for loop in loops:
        for start in [i for i, ln in enumerate(loop) if ln == "s_barrier"]:
            ahead = collections.Counter()
            for ln in loop[start + 1:]:
                if ln == "s_barrier":
                    break  # the synchronous path's ds_write window: no MFMA in it
                if MFMA.match(ln):
                    windows += 1
                    assert (ahead["dsrd"], ahead["vmem"]) == (d, v), (meta["name"], dict(ahead), (d, v))
                    break
                ahead["vmem"] += bool(VMEM_LOAD.match(ln))
                ahead["dsrd"] += bool(DS_READ.match(ln))
    assert windows, "no load/MFMA region found in the K loop"


# --------------------------------------------------------------------------------------------
# The kernels CSV
# --------------------------------------------------------------------------------------------
def _build_tool():
    return load_source("tools/build_kernels.py", "flygemm_build_kernels")


BK = _build_tool()
SPECS = {arch: BK.read_kernel_specs(arch) for arch in ("gfx942", "gfx950")}


def _csv_params(meta):
    for s in SPECS.get(meta["arch"], []):
        if s["name"] == meta["name"]:
            return s["params"]
    return {}


def test_csv_async_variants():
    specs = SPECS["gfx950"]
    asyn = [s for s in specs if int(s["params"].get("async_copy", 0))]
    assert {s["in_dtype"] for s in asyn} >= {"bf16", "fp16", "fp8_e4m3fn"}
    used = {r["kernel"] for r in BK.read_dispatch_rows("gfx950", {s["name"] for s in specs})}
    for s in asyn:
        twins = [t for t in specs if not int(t["params"].get("async_copy", 0))
                 and all(t[k] == s[k] for k in ("family", "in_dtype", "out_dtype", "tile_m", "tile_n", "tile_k"))]
        assert twins, f"{s['name']}: no synchronous twin in gfx950.kernels.csv"
        assert s["name"] in used, f"{s['name']}: built but no gfx950.csv dispatch row uses it"
    assert not [s["name"] for s in SPECS["gfx942"] if int(s["params"].get("async_copy", 0))]


def test_every_async_variant_is_built():
    if not ASYNC and not [m for _, m in BUILT if m["arch"] == "gfx950"]:
        pytest.skip("no gfx950 build outputs")
    built = {m["name"] for _, m in BUILT}
    want = {s["name"] for s in SPECS["gfx950"] if int(s["params"].get("async_copy", 0))}
    assert want <= built, sorted(want - built)
