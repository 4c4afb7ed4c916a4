"""Static checks of the ROCm code objects (HSACO), without AMD hardware.

1. Every HSACO embedded in the flygemm library (found through the FlyDSL export symbols
   `<sym>__kernels_binary` / `<sym>__metadata`, or by scanning a stripped library): AMDGPU ELF,
   e_flags target = the export's arch, AMDGPU metadata note (decoded here, MessagePack): no
   scratch, LDS within the arch's limit, register counts within limits and no spills, wave64,
   and the explicit kernel arguments laid out exactly as the exported launcher packs them.
2. The build outputs of every ROCm family (kernels/rocm/gemm_a16w16.py, gemm_a8w8.py,
   gemm_a8w8_blockscale.py, gemm_splitk_decode.py, gemm_mxfp.py; build/kernels/<arch>/<kernel>/, or
   $FLYGEMM_KERNEL_BUILD_DIR): the saved HSACO equals the one in the export object (and in the
   library); the GEMM kernel's arguments are the family's (kernarg size = what the launcher
   packs); records with a split-K mode (max_split_k > 1) carry the split-K reduce kernel in the
   same code object, the others do not; the ISA listing saved at build time (FlyDSL's final ISA,
   the disassembly evidence) has, per kernel: the expected MFMA form for the arch and dtype and
   the expected number of them, LDS and 16-byte buffer traffic, the epilogue's scalar loads
   (bias; gemm_a8w8: the scales; blockscale: the per-block scales inside the k loop), one store
   per accumulator element and path (the epilogue's, in the output type, and for split-K records
   the fp32 partial), no fused multiply-add in the epilogue, the blockscale kernel's fp32 promotion per K block (a scale
   product and a multiply-accumulate per accumulator per block), the reduce's 16-byte workspace
   loads and in-order adds (gemm_a8w8's: the two scale multiplies, no fma), no scratch, and the
   same register/LDS/kernarg counts as the HSACO's metadata. fp8: the bytes reach the MFMA unconverted;
   gfx942 uses v_mfma_f32_16x16x32_fp8_fp8, which LLVM spells the same on every gfx94x/gfx950
   target: on a gfx942 code object it reads e4m3fnuz (the target fixes the format), so the check
   is mnemonic + code-object target + in_dtype fp8_e4m3fnuz; gfx950 uses the k128
   v_mfma_scale_f32_16x16x128_f8f6f4 with fp8 e4m3 operands (no cbsz/blgp format modifiers) and
   unit E8M0 scales (the scale register holds 0x7f).
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


FAMILIES = ("gemm_a16w16", "gemm_a8w8", "gemm_a8w8_blockscale", "gemm_splitk_decode", "gemm_mxfp")
PRESHUFFLE_FAMILIES = ("gemm_a16w16", "gemm_a8w8", "gemm_a8w8_blockscale")
REDUCE_KINDS = ("splitk_reduce", "splitk_reduce_scaled")


def _built():
    out = []
    root = _build_dir()
    if root.is_dir():
        for mf in sorted(root.glob("gfx*/*/*.meta.json")):
            meta = json.loads(mf.read_text())
            if meta.get("family") in FAMILIES:
                out.append((mf.parent, meta))
    return out


EMBEDDED = _embedded()
BUILT = _built()

# (family, arch, in_dtype) -> (MFMA mnemonic, instructions per 16x16 block per 64-byte k step)
EXPECTED_MFMA = {
    ("gemm_a16w16", "gfx942", "bf16"): ("v_mfma_f32_16x16x16_bf16", 2),
    ("gemm_a16w16", "gfx942", "fp16"): ("v_mfma_f32_16x16x16_f16", 2),
    ("gemm_a16w16", "gfx950", "bf16"): ("v_mfma_f32_16x16x32_bf16", 1),
    ("gemm_a16w16", "gfx950", "fp16"): ("v_mfma_f32_16x16x32_f16", 1),
    ("gemm_a8w8", "gfx942", "fp8_e4m3fnuz"): ("v_mfma_f32_16x16x32_fp8_fp8", 2),
    ("gemm_a8w8", "gfx942", "int8"): ("v_mfma_i32_16x16x32_i8", 2),
    ("gemm_a8w8", "gfx950", "fp8_e4m3fn"): ("v_mfma_scale_f32_16x16x128_f8f6f4", 0.5),
    ("gemm_a8w8", "gfx950", "int8"): ("v_mfma_i32_16x16x64_i8", 1),
    ("gemm_a8w8_blockscale", "gfx942", "fp8_e4m3fnuz"): ("v_mfma_f32_16x16x32_fp8_fp8", 2),
    ("gemm_a8w8_blockscale", "gfx950", "fp8_e4m3fn"): ("v_mfma_scale_f32_16x16x128_f8f6f4", 0.5),
    # decode: the same 16-bit MFMAs, per 64-byte k step (two 32-k steps) of a 16-row weight block
    ("gemm_splitk_decode", "gfx942", "bf16"): ("v_mfma_f32_16x16x16_bf16", 2),
    ("gemm_splitk_decode", "gfx942", "fp16"): ("v_mfma_f32_16x16x16_f16", 2),
    ("gemm_splitk_decode", "gfx950", "bf16"): ("v_mfma_f32_16x16x32_bf16", 1),
    ("gemm_splitk_decode", "gfx950", "fp16"): ("v_mfma_f32_16x16x32_f16", 1),
    # OCP MX (per 64-byte k step: fp8 128 K = one MFMA per 2 steps; fp4 128 K = one per step);
    # format modifiers and the real scales are checked in test_rocm_mx.py
    ("gemm_mxfp", "gfx950", "fp8_e4m3fn"): ("v_mfma_scale_f32_16x16x128_f8f6f4", 0.5),
    ("gemm_mxfp", "gfx950", "fp4_e2m1_x2"): ("v_mfma_scale_f32_16x16x128_f8f6f4", 1),
}
KERNARG_BYTES = {"gemm_a16w16": 68, "gemm_a8w8": 92, "gemm_a8w8_blockscale": 84, "gemm_splitk_decode": 68, "gemm_mxfp": 68,
                 "splitk_reduce": 44, "splitk_reduce_scaled": 68}


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
        kernels = info["metadata"]["amdhsa.kernels"]
        # the GEMM kernel (what the launcher's ABI packs) and at most the split-K reduce
        (kernel,) = [k for k in kernels if rt.kernel_kind(k[".name"]) not in REDUCE_KINDS]
        for red in [k for k in kernels if rt.kernel_kind(k[".name"]) in REDUCE_KINDS]:
            kind = rt.kernel_kind(red[".name"])
            assert _explicit_args(red) == [(o, s) for o, s, _ in rt.kernarg_layout(kind)], red[".name"]
        assert len(kernels) <= 2, [k[".name"] for k in kernels]
        packed = rt.abi_kernarg_layout(md["abi"])
        assert _explicit_args(kernel) == packed, "kernel arguments differ from what the launcher packs"
        end = max((o + s for o, s in packed), default=0)
        assert kernel[".kernarg_segment_size"] >= end
        if not [a for a in kernel[".args"] if a[".value_kind"].startswith("hidden_")]:
            assert kernel[".kernarg_segment_size"] == end


def test_every_family_and_arch_is_built():
    if not BUILT:
        pytest.skip("no ROCm build outputs (run tools/build_kernels.py)")
    have = {(m["family"], m["arch"], m["config"]["in_dtype"]) for _, m in BUILT}
    archs = {a for _, a, _ in have}
    missing = [k for k in EXPECTED_MFMA if k[1] in archs and k not in have]
    assert not missing, f"built for {sorted(archs)} but missing {missing}"


@pytest.mark.skipif(not BUILT, reason="no ROCm build outputs (run tools/build_kernels.py)")
@pytest.mark.parametrize("item", BUILT, ids=lambda it: f"{it[1]['arch']}-{it[1]['name']}")
def test_build_outputs(item):
    kdir, meta = item
    arch, family = meta["arch"], meta["family"]
    cfg = meta["config"]
    in_dtype = cfg["in_dtype"]
    esz = rt.IN_BYTES[in_dtype]
    hsaco = (kdir / meta["hsaco"]).read_bytes()
    info = _check_code_object(hsaco, arch)
    kernels = {k[".name"]: k for k in info["metadata"]["amdhsa.kernels"]}
    (main,) = [n for n in kernels if rt.kernel_kind(n) == family]
    reduces = [n for n in kernels if rt.kernel_kind(n) in REDUCE_KINDS]
    assert set(kernels) == {main, *reduces}, sorted(kernels)
    # split-K records carry their reduce (gemm_a8w8's applies the scales), the others none
    split = meta["requires"]["split_k"]
    assert split == (1 if in_dtype == "int8" or family == "gemm_mxfp" else 16), split
    assert [rt.kernel_kind(n) for n in reduces] == ([rt.FAMILY_REDUCE[family]] if split > 1 else [])
    kernel = kernels[main]
    # kernarg: the family's arguments (pointers 8 bytes, int32 scalars), nothing hidden
    assert _explicit_args(kernel) == [(o, s) for o, s, _ in rt.kernarg_layout(family)]
    assert [a[".value_kind"] for a in kernel[".args"]] == [k for _, _, k in rt.kernarg_layout(family)]
    assert kernel[".kernarg_segment_size"] == rt.kernarg_size(family) == KERNARG_BYTES[family]
    assert meta["kernel_args"] == [n for n, _ in rt.FAMILY_KERNEL_ARGS[family]]
    if meta.get("launcher_abi"):  # what the exported host launcher packs, in that order
        packed = rt.abi_kernarg_layout(meta["launcher_abi"])
        assert packed == _explicit_args(kernel)
        assert [s["arg_name"] for s in meta["launcher_abi"] if s["kind"] != "stream"] == meta["kernel_args"]
    if family == "gemm_splitk_decode":  # cross-wave reduction buffer: [wk][wn][groups][4][64] floats
        wk = cfg["wk"]
        lds = 0 if wk == 1 else wk * cfg["tile_n"] // 16 * 4 * 64 * 4
    else:
        stages = 2 if cfg.get("async_copy") else 1  # the async copy fills one A stage while the other is read
        lds = stages * cfg["tile_m"] * (cfg["tile_k"] + cfg["lds_pad"]) * esz
    assert kernel[".group_segment_fixed_size"] == meta["lds_bytes"] == lds <= rt.LDS_LIMIT[arch]
    assert kernel[".max_flat_workgroup_size"] >= 256

    # the export object embeds exactly this HSACO; so does the library, when it is built
    objs = sorted(kdir.glob("*.o"))
    assert objs, "no export object"
    by_symbol = {e["symbol"]: e for e in rt.embedded_exports(objs[0])}
    assert by_symbol[meta["export_symbol"]]["hsaco"] == hsaco
    lib_exports = {e["symbol"]: e for e in EMBEDDED}
    if meta["export_symbol"] in lib_exports:
        assert lib_exports[meta["export_symbol"]]["hsaco"] == hsaco

    # ISA listing written by the same compilation, one section per kernel
    isa = (kdir / meta["isa"]).read_text()
    code = rt.isa_kernel_code(isa)
    assert set(code) == set(kernels)
    body = code[main]
    expected = _check_gemm_isa(family, arch, cfg, meta, body, info, split)
    for red in reduces:
        _check_reduce_isa(rt.kernel_kind(red), cfg["out_dtype"], code[red], kernels[red], _raw_section(isa, red), split)

    mds = rt.isa_kernel_metadata(isa)
    for name, k in kernels.items():
        for key in ("vgpr_count", "sgpr_count", "agpr_count", "group_segment_fixed_size", "kernarg_segment_size"):
            m = re.search(rf"^[\s-]*\.{key}:\s*(\d+)", mds[name], re.M)
            got = int(m.group(1)) if m else None
            assert got == k.get("." + key, 0), f"{name} {key}: ISA listing {got} vs HSACO {k.get('.' + key)}"
    assert meta["vgpr_count"] == kernel[".vgpr_count"] and meta["mfma_instructions"] == [expected]
    assert re.search(r"\.amdhsa_private_segment_fixed_size\s+0\b", isa)


def _check_gemm_isa(family, arch, cfg, meta, body, info, split):
    """ISA expectations of a family's GEMM kernel; returns its MFMA mnemonic."""
    in_dtype = cfg["in_dtype"]
    esz = rt.IN_BYTES[in_dtype]
    mfma_lines = [ln for ln in body.splitlines() if re.match(r"\s*v_mfma_", ln)]
    mfma = set(re.findall(r"\bv_mfma_\w+", body))
    expected, per_step = EXPECTED_MFMA[(family, arch, in_dtype)]
    assert mfma == {expected}, mfma
    # whole K tiles: at least one in the loop body and one for the last tile (LLVM may peel or
    # unroll the loop, which adds whole tiles)
    if family == "gemm_splitk_decode":  # groups 16-row blocks x (tile_k / wk) k per wave
        nr, mr = cfg["tile_n"] // 16 // (4 // cfg["wk"]), 1
        ksteps = cfg["tile_k"] // cfg["wk"] // (64 // esz)
    else:
        wm, wn = meta["waves"]
        mr, nr = cfg["tile_m"] // (16 * wm), cfg["tile_n"] // (16 * wn)
        ksteps = cfg["tile_k"] // (64 // esz)
    per_tile = int(mr * nr * ksteps * per_step)
    assert per_tile == meta["mfma_per_k_tile"]
    assert len(mfma_lines) >= 2 * per_tile and len(mfma_lines) % per_tile == 0, (len(mfma_lines), per_tile)
    assert "buffer_load_dwordx4" in body, "16-byte buffer loads of A and W"
    assert "scratch_" not in body
    dword_loads = len(re.findall(r"^\s*buffer_load_dword\s", body, re.M))
    fma = re.findall(r"^\s*v_(?:pk_)?fma\w*", body, re.M)
    # one scalar store per accumulator element and path: the direct epilogue in the output type,
    # and (split-K records) the fp32 partial to the workspace
    n_acc = 4 * mr * nr
    out16 = cfg["out_dtype"] in ("bf16", "fp16")
    dword_stores = len(re.findall(r"^\s*buffer_store_dword\s", body, re.M))
    short_stores = len(re.findall(r"^\s*buffer_store_short\s", body, re.M))
    assert dword_stores == (n_acc if split > 1 else 0) + (0 if out16 else n_acc), dword_stores
    assert short_stores == (n_acc if out16 else 0), short_stores
    if family == "gemm_splitk_decode":
        # W and A straight to registers (no LDS staging); the wk partial sums meet in LDS
        assert "ds_read_b128" not in body and "ds_write_b128" not in body
        assert ("ds_write" in body) == (cfg["wk"] > 1) and ("s_barrier" in body) == (cfg["wk"] > 1)
        # epilogue: the fp32 bias of each of the lane's 4 rows of each block; no contraction
        assert dword_loads == 4 * nr, dword_loads
        assert not fma
        return expected
    assert "ds_read_b128" in body, "A fragments are read from LDS with 16-byte accesses"
    if cfg.get("async_copy"):  # A reaches LDS by LDS DMA (test_rocm_async_isa.py has the details)
        assert re.search(r"^\s*buffer_load_dwordx4\b.*\blds\s*$", body, re.M) and "ds_write" not in body
    else:
        assert "ds_write_b128" in body, "A is staged through LDS with 16-byte accesses"
    if family == "gemm_a8w8_blockscale":
        # per K tile (= scale block): the lane's 4*mr row scales and nr column-block scales,
        # loaded in the loop body and for the last tile; the epilogue's bias once per block
        per_block = 4 * mr + nr
        assert dword_loads >= 2 * per_block + nr and (dword_loads - nr) % per_block == 0, (dword_loads, per_block)
        # promotion of every fp32 accumulator per block: scale product (a_scale * w_scale) and
        # acc + part * scale, in the loop and for the last tile
        muls = len(re.findall(r"^\s*v_mul_f32", body, re.M)) + 2 * len(re.findall(r"^\s*v_pk_mul_f32", body, re.M))
        n_acc = 4 * mr * nr
        n_fma = len(re.findall(r"^\s*v_fma(?:c|k)?_f32", body, re.M)) + 2 * len(re.findall(r"^\s*v_pk_fma_f32", body, re.M))
        adds = len(re.findall(r"^\s*v_add_f32", body, re.M)) + 2 * len(re.findall(r"^\s*v_pk_add_f32", body, re.M))
        assert muls + n_fma >= 2 * 2 * n_acc, (muls, n_fma, n_acc)  # scale product + multiply, 2 tiles
        assert n_fma + adds >= 2 * n_acc, (n_fma, adds, n_acc)
    else:
        # epilogue: one fp32 bias load per 16-column block; gemm_a8w8 adds a w_scale per block and
        # an a_scale per accumulator row (4 per 16-row block); gemm_mxfp applies its scales in the
        # MFMA; no contraction into fma (the oracle rounds the products and the bias add separately)
        assert dword_loads == (4 * mr + 2 * nr if family == "gemm_a8w8" else nr), dword_loads
        assert not fma, fma[:3]
    # int32 accumulators are converted to fp32 once, in the epilogue
    n_cvt = len(re.findall(r"^\s*v_cvt_f32_i32", body, re.M))
    assert n_cvt == (4 * mr * nr if in_dtype == "int8" else 0), n_cvt
    if family in ("gemm_a8w8", "gemm_a8w8_blockscale") and in_dtype != "int8":
        # fp8 bytes go to the MFMA as loaded: no conversion of fp8/bf8 anywhere
        assert not re.search(r"v_cvt\w*(fp8|bf8)", body)
        assert in_dtype == {"gfx942": "fp8_e4m3fnuz", "gfx950": "fp8_e4m3fn"}[arch]
        assert info["mach"] == arch  # the fnuz (gfx942) / OCP (gfx950) reading of the same bytes
        # no operand-format / broadcast modifiers: cbsz = blgp = 0 is fp8 e4m3 for both operands
        mfma_lines = [ln for ln in body.splitlines() if re.match(r"\s*v_mfma_", ln)]
        assert not [ln for ln in mfma_lines if re.search(r"cbsz|blgp|abid", ln)], mfma_lines[:2]
        if arch == "gfx950":  # ... with unit scales: both scale operands hold E8M0 127 = 2^0
            for ln in mfma_lines:
                ops = [o.strip() for o in ln.split("op_sel")[0].split(None, 1)[1].split(",")]
                assert len(ops) == 6 and ops[4] == ops[5], ln
                assert re.search(rf"^\s*v_mov_b32(_e32)?\s+{re.escape(ops[4])},\s*(0x7f|127)\s*$", body, re.M), ln
    return expected


def _raw_section(isa, symbol):
    """A kernel's listing from its label to .end_amdhsa_kernel with the branch labels kept (the loop finder
    needs them; rt.isa_kernel_code drops them)."""
    m = re.search(rf"^{re.escape(symbol)}:\n.*?^\s*\.end_amdhsa_kernel", isa, re.M | re.S)
    assert m, symbol
    return m.group(0)


def _check_reduce_isa(kind, out_dtype, body, kernel, raw, max_split):
    """The split-K reduce: no MFMA, no LDS, 16-byte workspace loads summed in order (an add per
    element per slice), one store per output element of the output type; the scaled reduce
    (gemm_a8w8) multiplies by a_scale and w_scale and adds the bias without contraction."""
    assert not re.search(r"\bv_mfma_", body)
    assert kernel[".group_segment_fixed_size"] == 0 and kernel[".private_segment_fixed_size"] == 0
    assert kernel[".kernarg_segment_size"] == rt.kernarg_size(kind) == KERNARG_BYTES[kind]
    assert [a[".value_kind"] for a in kernel[".args"]] == [k for _, _, k in rt.kernarg_layout(kind)]
    assert "buffer_load_dwordx4" in body, "16-byte workspace loads"
    assert re.search(r"^\s*v_(pk_)?add_f32", body, re.M), "the slices are added"
    # the slices' loads overlap (kernels/rocm/_splitk.py Reduce.ordered_sum): no loop, one 16-byte load per
    # slice up to the record's largest split, and when the sum starts at least half of them are still in flight (LLVM
    # interleaves the rest with the adds as registers free up). The loop over split_k it replaces was unrolled
    # by 8 with a remainder loop that waited vmcnt(0) per slice, which is where splits 2..8 ran.
    ins = rt.isa_instructions(body)
    assert not rt.isa_loops(raw), "the reduce loops over the slices"
    assert sum(1 for ln in ins if ln.startswith("buffer_load_dwordx4")) == max_split
    first_add = next(i for i, ln in enumerate(ins) if re.match(r"v_(pk_)?add_f32", ln))
    waits = [int(m.group(1)) for ln in ins[:first_add] for m in [re.search(r"vmcnt\((\d+)\)", ln)] if m]
    assert waits and waits[-1] >= max_split // 2, waits
    store = {"bf16": "buffer_store_short", "fp16": "buffer_store_short", "fp32": "buffer_store_dword"}[out_dtype]
    assert len(re.findall(rf"^\s*{store}\s", body, re.M)) == rt.REDUCE_VEC
    assert not re.search(r"^\s*v_(pk_)?fma", body, re.M)
    muls = len(re.findall(r"^\s*v_mul_f32", body, re.M)) + 2 * len(re.findall(r"^\s*v_pk_mul_f32", body, re.M))
    assert muls == (2 * rt.REDUCE_VEC if kind == "splitk_reduce_scaled" else 0), muls
