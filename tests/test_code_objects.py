"""Static checks of the ROCm code objects (HSACO), without AMD hardware.

1. Every HSACO embedded in the flygemm library (found through the FlyDSL export symbols
   `<sym>__kernels_binary` / `<sym>__metadata`, or by scanning a stripped library): AMDGPU ELF,
   e_flags target = the export's arch, AMDGPU metadata note (decoded here, MessagePack): no
   scratch, LDS within the arch's limit, register counts within limits and no spills, wave64,
   and the explicit kernel arguments laid out exactly as the exported launcher packs them.
2. The build outputs of kernels/rocm/gemm_a16w16.py (build/kernels/<arch>/<kernel>/, or
   $FLYGEMM_KERNEL_BUILD_DIR): the saved HSACO equals the one in the export object (and in the
   library); the ISA listing saved at build time (FlyDSL's final ISA, the disassembly evidence)
   has the expected MFMA form for the arch and dtype, LDS and 16-byte buffer traffic, no
   scratch, and the same register/LDS/kernarg counts as the HSACO's metadata.
"""

import importlib.util
import json
import os
import pathlib
import re

import pytest

import rocm_testlib as rt

pytest.importorskip("elftools")


def _library_path():
    spec = importlib.util.find_spec("flygemm")
    cands = []
    if spec and spec.origin:
        cands += sorted(pathlib.Path(spec.origin).parent.glob("_C*.so"))
    cands += sorted((rt.ROOT / "python" / "flygemm").glob("_C*.so"))
    return cands[0] if cands else None


def _build_dir():
    return pathlib.Path(os.environ.get("FLYGEMM_KERNEL_BUILD_DIR", rt.ROOT / "build" / "kernels"))


def _embedded():
    lib = _library_path()
    if lib is None:
        return []
    return [dict(e, library=str(lib)) for e in rt.embedded_exports(lib)]


def _built_a16w16():
    out = []
    root = _build_dir()
    if root.is_dir():
        for mf in sorted(root.glob("gfx*/*/*.meta.json")):
            meta = json.loads(mf.read_text())
            if meta.get("family") == "gemm_a16w16":
                out.append((mf.parent, meta))
    return out


EMBEDDED = _embedded()
BUILT = _built_a16w16()


def _id_embedded(e):
    return e["symbol"] or "anonymous"


def _check_code_object(data: bytes, arch: str):
    info = rt.code_object_info(data)
    assert info["e_machine"] == rt.EM_AMDGPU
    assert info["mach"] == arch, f"e_flags 0x{info['e_flags']:x} target {info['mach']}, expected {arch}"
    assert info["abi_version"] >= 3, "code object v5 or later expected"
    md = info["metadata"]
    assert md is not None, "no NT_AMDGPU_METADATA note"
    assert md["amdhsa.target"].split("-")[-1].split(":")[0] == arch
    assert md["amdhsa.kernels"], "no kernels in the code object"
    for k in md["amdhsa.kernels"]:
        where = f"{arch} kernel {k['.name']}"
        assert k[".private_segment_fixed_size"] == 0, f"{where}: uses scratch"
        assert k.get(".uses_dynamic_stack", False) is False, where
        assert k[".group_segment_fixed_size"] <= rt.LDS_LIMIT[arch], f"{where}: LDS {k['.group_segment_fixed_size']}"
        assert k[".vgpr_count"] <= rt.MAX_VGPR and k.get(".agpr_count", 0) <= rt.MAX_AGPR, where
        assert k[".sgpr_count"] <= rt.MAX_SGPR, where
        assert k.get(".vgpr_spill_count", 0) == 0 and k.get(".sgpr_spill_count", 0) == 0, f"{where}: spills"
        assert k[".wavefront_size"] == 64, where
    return info


def _explicit_args(kernel_md):
    return [(a[".offset"], a[".size"]) for a in kernel_md.get(".args", [])
            if not a[".value_kind"].startswith("hidden_")]


@pytest.mark.skipif(not EMBEDDED, reason="no flygemm library with embedded ROCm code objects")
@pytest.mark.parametrize("exp", EMBEDDED, ids=_id_embedded)
def test_embedded_code_object(exp):
    arch = exp["metadata"]["arch"] if exp["metadata"] else rt.code_object_info(exp["hsaco"])["mach"]
    assert arch in rt.LDS_LIMIT, f"unsupported ROCm arch {arch}"
    info = _check_code_object(exp["hsaco"], arch)
    if exp["metadata"]:
        md = exp["metadata"]
        assert md["backend"] == "rocm"
        (kernel,) = info["metadata"]["amdhsa.kernels"]  # one kernel per exported launcher
        packed = rt.abi_kernarg_layout(md["abi"])
        assert _explicit_args(kernel) == packed, "kernel arguments differ from what the launcher packs"
        end = max((o + s for o, s in packed), default=0)
        assert kernel[".kernarg_segment_size"] >= end
        if not [a for a in kernel[".args"] if a[".value_kind"].startswith("hidden_")]:
            assert kernel[".kernarg_segment_size"] == end


@pytest.mark.skipif(not BUILT, reason="no gemm_a16w16 ROCm build outputs (run tools/build_kernels.py)")
@pytest.mark.parametrize("item", BUILT, ids=lambda it: f"{it[1]['arch']}-{it[1]['name']}")
def test_gemm_a16w16_build_outputs(item):
    kdir, meta = item
    arch = meta["arch"]
    cfg = meta["config"]
    hsaco = (kdir / meta["hsaco"]).read_bytes()
    info = _check_code_object(hsaco, arch)
    (kernel,) = info["metadata"]["amdhsa.kernels"]
    # kernarg: out, a, w, bias (8-byte pointers), M, N, K, lda, ldo (int32)
    assert _explicit_args(kernel) == [(0, 8), (8, 8), (16, 8), (24, 8), (32, 4), (36, 4), (40, 4), (44, 4), (48, 4)]
    assert kernel[".kernarg_segment_size"] == 52
    assert kernel[".group_segment_fixed_size"] == meta["lds_bytes"] == cfg["tile_m"] * (cfg["tile_k"] + cfg["lds_pad"]) * 2
    assert kernel[".max_flat_workgroup_size"] >= 256

    # the export object embeds exactly this HSACO; so does the library, when it is built
    objs = sorted(kdir.glob("*.o"))
    assert objs, "no export object"
    by_symbol = {e["symbol"]: e for e in rt.embedded_exports(objs[0])}
    assert by_symbol[meta["export_symbol"]]["hsaco"] == hsaco
    lib_exports = {e["symbol"]: e for e in EMBEDDED}
    if meta["export_symbol"] in lib_exports:
        assert lib_exports[meta["export_symbol"]]["hsaco"] == hsaco

    # ISA listing written by the same compilation
    isa = (kdir / meta["isa"]).read_text()
    body = "\n".join(ln for ln in isa.splitlines() if not ln.lstrip().startswith((";", ".")))
    mfma = set(re.findall(r"\bv_mfma_\w+", body))
    ty = "bf16" if cfg["in_dtype"] == "bf16" else "f16"
    expected = f"v_mfma_f32_16x16x32_{ty}" if arch == "gfx950" else f"v_mfma_f32_16x16x16_{ty}"
    assert mfma == {expected}, mfma
    n_mfma = len(re.findall(r"\bv_mfma_", body))
    per_tile = (cfg["tile_m"] // 16) * (cfg["tile_n"] // 16) // 4 * (cfg["tile_k"] // 32) * (1 if arch == "gfx950" else 2)
    assert n_mfma >= per_tile, (n_mfma, per_tile)
    assert "ds_read_b128" in body and "ds_write_b128" in body, "A is staged through LDS with 16-byte accesses"
    assert "buffer_load_dwordx4" in body, "16-byte buffer loads of A and W"
    assert "scratch_" not in body
    assert re.search(r"\.amdhsa_private_segment_fixed_size\s+0\b", isa)

    def grab(key):
        m = re.search(rf"^[\s-]*\.{key}:\s*(\d+)", isa, re.M)
        return int(m.group(1)) if m else None

    for key in ("vgpr_count", "sgpr_count", "agpr_count", "group_segment_fixed_size", "kernarg_segment_size"):
        assert grab(key) == kernel.get("." + key, 0), f"{key}: ISA listing {grab(key)} vs HSACO {kernel.get('.' + key)}"
    assert meta["vgpr_count"] == kernel[".vgpr_count"] and meta["mfma_instructions"] == [expected]
