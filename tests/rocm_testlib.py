"""Helpers for the ROCm tests that run without AMD hardware: AMDGPU code objects (ELF header,
metadata note decoded with a small MessagePack reader), FlyDSL export objects embedded in a
library, the stub HIP runtime (tests/stub_hip) and its call log."""

import json
import os
import pathlib
import re
import shutil
import struct
import subprocess

ROOT = pathlib.Path(__file__).resolve().parent.parent
STUB_SRC = ROOT / "tests" / "stub_hip" / "stub_amdhip64.c"

EM_AMDGPU = 224
NT_AMDGPU_METADATA = 32
# EF_AMDGPU_MACH values (e_flags & 0xff)
MACH = {0x02C: "gfx906", 0x030: "gfx908", 0x03F: "gfx90a", 0x040: "gfx940", 0x04B: "gfx941", 0x04C: "gfx942",
        0x04F: "gfx950"}
LDS_LIMIT = {"gfx942": 64 * 1024, "gfx950": 160 * 1024}
# Per-wave register budgets on CDNA3/CDNA4 (wave64): 512 unified VGPRs (up to 256 of them
# AGPRs), 102 addressable SGPRs (+ VCC etc.; the metadata count includes the extras).
MAX_VGPR, MAX_AGPR, MAX_SGPR = 512, 256, 112


# ------------------------------------------------------------------------------------------
# MessagePack (only what the AMDGPU metadata uses)
# ------------------------------------------------------------------------------------------
def msgpack_loads(data: bytes):
    value, pos = _mp(data, 0)
    return value


def _mp(b: bytes, i: int):
    c = b[i]
    i += 1
    if c <= 0x7F:
        return c, i
    if c >= 0xE0:
        return c - 0x100, i
    if c & 0xF0 == 0x80:
        return _mp_map(b, i, c & 0x0F)
    if c & 0xF0 == 0x90:
        return _mp_arr(b, i, c & 0x0F)
    if c & 0xE0 == 0xA0:
        n = c & 0x1F
        return b[i:i + n].decode(), i + n
    if c == 0xC0:
        return None, i
    if c in (0xC2, 0xC3):
        return c == 0xC3, i
    fixed = {0xCC: ">B", 0xCD: ">H", 0xCE: ">I", 0xCF: ">Q", 0xD0: ">b", 0xD1: ">h", 0xD2: ">i", 0xD3: ">q",
             0xCA: ">f", 0xCB: ">d"}
    if c in fixed:
        fmt = fixed[c]
        n = struct.calcsize(fmt)
        return struct.unpack(fmt, b[i:i + n])[0], i + n
    lens = {0xD9: (">B", "s"), 0xDA: (">H", "s"), 0xDB: (">I", "s"), 0xC4: (">B", "b"), 0xC5: (">H", "b"),
            0xC6: (">I", "b"), 0xDC: (">H", "a"), 0xDD: (">I", "a"), 0xDE: (">H", "m"), 0xDF: (">I", "m")}
    if c in lens:
        fmt, kind = lens[c]
        n = struct.calcsize(fmt)
        count = struct.unpack(fmt, b[i:i + n])[0]
        i += n
        if kind == "s":
            return b[i:i + count].decode(), i + count
        if kind == "b":
            return bytes(b[i:i + count]), i + count
        if kind == "a":
            return _mp_arr(b, i, count)
        return _mp_map(b, i, count)
    raise ValueError(f"msgpack: unsupported type byte 0x{c:02x} at {i - 1}")


def _mp_arr(b, i, n):
    out = []
    for _ in range(n):
        v, i = _mp(b, i)
        out.append(v)
    return out, i


def _mp_map(b, i, n):
    out = {}
    for _ in range(n):
        k, i = _mp(b, i)
        v, i = _mp(b, i)
        out[k] = v
    return out, i


# ------------------------------------------------------------------------------------------
# AMDGPU code objects
# ------------------------------------------------------------------------------------------
def code_object_info(data: bytes) -> dict:
    """ELF header fields, gfx target and the decoded NT_AMDGPU_METADATA note of a code object."""
    import io

    from elftools.elf.elffile import ELFFile

    assert data[:4] == b"\x7fELF", "not an ELF image"
    elf = ELFFile(io.BytesIO(data))
    info = {
        "e_machine": struct.unpack_from("<H", data, 0x12)[0],
        "e_flags": elf.header["e_flags"],
        "abi_version": data[8],  # EI_ABIVERSION: 3 = code object v5, 4 = v6
        "mach": MACH.get(elf.header["e_flags"] & 0xFF, f"unknown-0x{elf.header['e_flags'] & 0xFF:x}"),
        "metadata": None,
        "symbols": [],
    }
    for sec in elf.iter_sections():
        if sec["sh_type"] == "SHT_NOTE":
            # Walk the raw notes (pyelftools' decoding of vendor notes varies by version).
            raw = sec.data()
            p = 0
            while p + 12 <= len(raw):
                namesz, descsz, ntype = struct.unpack_from("<III", raw, p)
                name = raw[p + 12:p + 12 + namesz].rstrip(b"\0")
                d0 = p + 12 + ((namesz + 3) & ~3)
                desc = raw[d0:d0 + descsz]
                if ntype == NT_AMDGPU_METADATA and name == b"AMDGPU":
                    info["metadata"] = msgpack_loads(desc)
                p = d0 + ((descsz + 3) & ~3)
        if sec.name == ".symtab":
            info["symbols"] = [s.name for s in sec.iter_symbols() if s.name]
    return info


def elf_image_size(data: bytes, start: int = 0) -> int:
    """Size of an ELF64 image beginning at `start` (end of the furthest section/header)."""
    (phoff, shoff) = struct.unpack_from("<QQ", data, start + 0x20)
    phentsize, phnum, shentsize, shnum = struct.unpack_from("<HHHH", data, start + 0x36)
    end = shoff + shentsize * shnum
    for k in range(shnum):
        sh = start + shoff + k * shentsize
        stype = struct.unpack_from("<I", data, sh + 4)[0]
        off, size = struct.unpack_from("<QQ", data, sh + 0x18)
        if stype != 8:
            end = max(end, off + size)
    for k in range(phnum):
        ph = start + phoff + k * phentsize
        off = struct.unpack_from("<Q", data, ph + 8)[0]
        filesz = struct.unpack_from("<Q", data, ph + 0x20)[0]
        end = max(end, off + filesz)
    return end


def embedded_exports(path) -> list:
    """FlyDSL export objects linked into a host ELF (object or shared library).

    Returns one dict per export: {"symbol", "hsaco" (bytes), "metadata" (the export's JSON:
    arch, abi slots, ...)}. Uses the local symbols `<sym>__kernels_binary` / `<sym>__metadata`
    from .symtab; if the file is stripped, falls back to scanning for embedded AMDGPU ELF images
    (symbol and metadata then None)."""
    from elftools.elf.elffile import ELFFile

    path = pathlib.Path(path)
    data = path.read_bytes()
    out = {}
    with open(path, "rb") as f:
        elf = ELFFile(f)
        symtab = elf.get_section_by_name(".symtab")
        if symtab is not None:
            for s in symtab.iter_symbols():
                m = re.fullmatch(r"(.+)__(kernels_binary|metadata)", s.name)
                if not m or s["st_size"] == 0 or not isinstance(s["st_shndx"], int):
                    continue
                sec = elf.get_section(s["st_shndx"])
                if sec["sh_type"] == "SHT_NOBITS":
                    continue
                if elf.header["e_type"] == "ET_REL":
                    off = sec["sh_offset"] + s["st_value"]
                else:  # virtual address -> file offset
                    off = sec["sh_offset"] + (s["st_value"] - sec["sh_addr"])
                blob = data[off:off + s["st_size"]]
                entry = out.setdefault(m.group(1), {"symbol": m.group(1), "hsaco": None, "metadata": None})
                if m.group(2) == "kernels_binary":
                    entry["hsaco"] = blob
                else:
                    entry["metadata"] = json.loads(blob.rstrip(b"\0").decode())
    if out:
        return [e for e in out.values() if e["hsaco"] is not None]
    found = []
    for m in re.finditer(re.escape(b"\x7fELF\x02\x01\x01"), data):
        s = m.start()
        if s == 0 or struct.unpack_from("<H", data, s + 0x12)[0] != EM_AMDGPU:
            continue
        found.append({"symbol": None, "hsaco": data[s:s + elf_image_size(data, s)], "metadata": None})
    return found


def isa_kernel_code(isa: str) -> dict:
    """{kernel symbol: its instructions} of an ISA listing holding one or more kernels (from the
    kernel's label to its .end_amdhsa_kernel; directive and comment lines dropped)."""
    out = {}
    for m in re.finditer(r"^([A-Za-z_][\w.]*):\n(.*?)^\s*\.end_amdhsa_kernel", isa, re.M | re.S):
        out[m.group(1)] = "\n".join(ln for ln in m.group(2).splitlines()
                                    if ln.strip() and not ln.lstrip().startswith((";", ".")))
    return out


def isa_gemm_section(isa: str, family: str) -> str:
    """The raw listing of a module's GEMM kernel (label to .end_amdhsa_kernel, labels and
    directives kept), without the split-K reduce kernel that may follow it."""
    m = re.search(rf"^({re.escape(family)}_kernel_\d+):\n.*?^\s*\.end_amdhsa_kernel", isa, re.M | re.S)
    assert m, f"no {family} kernel in the listing"
    return m.group(0)


def isa_kernel_metadata(isa: str) -> dict:
    """{kernel symbol: its item of the amdhsa.kernels metadata list} of an ISA listing."""
    md = isa.split("amdhsa.kernels:", 1)[1] if "amdhsa.kernels:" in isa else ""
    out = {}
    for item in re.split(r"^  - ", md, flags=re.M)[1:]:
        m = re.search(r"^\s+\.name:\s+(\S+)", item, re.M)
        if m:
            out[m.group(1)] = item
    return out


def abi_kernarg_layout(abi: list) -> list:
    """(offset, size) of each kernel argument the FlyDSL launcher packs (stream excluded), laid
    out with natural alignment as the AMDGPU kernarg segment is."""
    out, off = [], 0
    for slot in abi:
        if slot["kind"] == "stream":
            continue
        size, align = slot["size"], slot["alignment"]
        off = (off + align - 1) // align * align
        out.append((off, size))
        off += size
    return out


# ------------------------------------------------------------------------------------------
# Stub HIP runtime
# ------------------------------------------------------------------------------------------
def build_stub(tmpdir) -> pathlib.Path:
    """Compile tests/stub_hip/stub_amdhip64.c into <tmpdir>/libamdhip64.so."""
    cc = shutil.which("gcc") or shutil.which("cc")
    if cc is None:
        import pytest

        pytest.skip("no C compiler for the stub HIP runtime")
    out = pathlib.Path(tmpdir) / "libamdhip64.so"
    subprocess.run([cc, "-std=c11", "-O1", "-shared", "-fPIC", str(STUB_SRC), "-o", str(out), "-lpthread"],
                   check=True)
    return out


def read_log(path) -> list:
    p = pathlib.Path(path)
    if not p.exists():
        return []
    return [json.loads(line) for line in p.read_text().splitlines() if line.strip()]


def stub_env(stub_lib, log, arch, **extra) -> dict:
    env = dict(os.environ)
    env.update(FLYGEMM_HIP_LIBRARY=str(stub_lib), FLYGEMM_STUB_LOG=str(log), FLYGEMM_STUB_ARCH=arch)
    env.update({k: str(v) for k, v in extra.items()})
    return env


# Kernel arguments of the ROCm families, in kernarg order: (name, bytes). Pointers are 8 bytes,
# scalars int32. Written here from the families' documented signatures, not read from them.
FAMILY_KERNEL_ARGS = {
    "gemm_a16w16": [("out", 8), ("a", 8), ("w", 8), ("bias", 8), ("ws", 8), ("M", 4), ("N", 4), ("K", 4),
                    ("lda", 4), ("ldo", 4), ("M_pad", 4), ("split_k", 4)],
    "gemm_a8w8": [("out", 8), ("a", 8), ("w", 8), ("bias", 8), ("a_scale", 8), ("w_scale", 8), ("ws", 8), ("M", 4),
                  ("N", 4), ("K", 4), ("lda", 4), ("ldo", 4), ("a_scale_per_row", 4), ("w_scale_per_row", 4),
                  ("M_pad", 4), ("split_k", 4)],
    "gemm_a8w8_blockscale": [("out", 8), ("a", 8), ("w", 8), ("bias", 8), ("a_scale", 8), ("w_scale", 8), ("ws", 8),
                             ("M", 4), ("N", 4), ("K", 4), ("lda", 4), ("ldo", 4), ("M_pad", 4), ("split_k", 4)],
    "gemm_splitk_decode": [("out", 8), ("a", 8), ("w", 8), ("bias", 8), ("ws", 8), ("M", 4), ("N", 4), ("K", 4),
                           ("lda", 4), ("ldo", 4), ("M_pad", 4), ("split_k", 4)],
    # gemm_mxfp8 / gemm_mxfp4 (kernels/rocm/gemm_mxfp.py): K logical, lda in bytes; no split-K mode
    "gemm_mxfp": [("out", 8), ("a", 8), ("w", 8), ("bias", 8), ("a_scale", 8), ("w_scale", 8), ("M", 4), ("N", 4),
                  ("K", 4), ("lda", 4), ("ldo", 4)],
    # the split-K reduce kernel in the same module (kernels/rocm/_splitk.py): unscaled / gemm_a8w8's
    "splitk_reduce": [("out", 8), ("ws", 8), ("bias", 8), ("M", 4), ("N", 4), ("ldo", 4), ("M_pad", 4),
                      ("split_k", 4)],
    "splitk_reduce_scaled": [("out", 8), ("ws", 8), ("bias", 8), ("a_scale", 8), ("w_scale", 8), ("M", 4), ("N", 4),
                             ("ldo", 4), ("M_pad", 4), ("split_k", 4), ("a_scale_per_row", 4),
                             ("w_scale_per_row", 4)],
}
# Which reduce each family's split-K records launch (gemm_a8w8 defers its scales to it).
FAMILY_REDUCE = {"gemm_a16w16": "splitk_reduce", "gemm_a8w8": "splitk_reduce_scaled",
                 "gemm_a8w8_blockscale": "splitk_reduce", "gemm_splitk_decode": "splitk_reduce"}
REDUCE_THREADS, REDUCE_VEC = 256, 4  # columns per reduce workgroup: 1024


def main_grid(family, tile, M, N, split_k):
    """Grid of a family's GEMM kernel, from its documented launch geometry."""
    tm, tn, _ = tile
    if family == "gemm_splitk_decode":  # weight rows on x, token tiles on y, slices on z
        return [ceil_div(N, tn), ceil_div(M, tm), split_k]
    return [ceil_div(M, tm), ceil_div(N, tn), split_k]
# bytes per storage element of A (the probe's lda is a row of A rounded up to 16 bytes)
IN_BYTES = {"bf16": 2, "fp16": 2, "fp8_e4m3fn": 1, "fp8_e4m3fnuz": 1, "int8": 1, "fp4_e2m1_x2": 1}
# logical K values per storage element (fp4 e2m1 is packed in pairs)
K_PER_ELEM = {"fp4_e2m1_x2": 2}
# flygemm::ScaleKind codes (csrc/launch.h)
SCALE_NONE, SCALE_PER_TENSOR, SCALE_PER_ROW, SCALE_BLOCK, SCALE_MX = 0, 1, 2, 3, 4


def kernarg_layout(family: str) -> list:
    """[(offset, size, value_kind)] of a family's explicit kernel arguments (natural alignment)."""
    out, off = [], 0
    for _name, size in FAMILY_KERNEL_ARGS[family]:
        off = (off + size - 1) // size * size
        out.append((off, size, "global_buffer" if size == 8 else "by_value"))
        off += size
    return out


def kernarg_size(family: str) -> int:
    o, s, _ = kernarg_layout(family)[-1]
    return o + s


def decode_kernarg(family: str, hexstr: str) -> dict:
    """The kernarg segment of a family's kernel as {arg name: value} (pointers unsigned,
    scalars signed int32)."""
    raw = bytes.fromhex(hexstr)
    vals = {}
    for (name, size), (off, _, _) in zip(FAMILY_KERNEL_ARGS[family], kernarg_layout(family)):
        vals[name] = struct.unpack_from("<Q" if size == 8 else "<i", raw, off)[0]
    return vals


def decode_gemm_a16w16_kernarg(hexstr: str) -> dict:
    """The 68-byte kernarg segment of gemm_a16w16: out, a, w, bias, ws pointers; M, N, K, lda,
    ldo, M_pad, split_k."""
    return decode_kernarg("gemm_a16w16", hexstr)


# Fake pointers used by flygemm_rocm_probe_record_ex (csrc/rocm_runtime.cpp).
PROBE_A, PROBE_W, PROBE_OUT, PROBE_STREAM = 0x7F1000000000, 0x7F2000000000, 0x7F3000000000, 0x5EED0000
PROBE_A_SCALE, PROBE_W_SCALE, PROBE_BIAS = 0x7F5000000000, 0x7F6000000000, 0x7F7000000000
PROBE_WS = 0x7F4000000000  # the fp32 workspace, passed when split_k > 1


# ------------------------------------------------------------------------------------------
# Probing kernel records through the stub (subprocess: HIP loading is process-global)
# ------------------------------------------------------------------------------------------
_PROBE_SCRIPT = r"""
import ctypes, json, sys
cases = json.loads(sys.argv[2])
if sys.argv[1] == "torch":
    import torch, flygemm  # noqa: F401
    t = torch.ops.flygemm_testing
    arch = t.rocm_device_arch(0)
    results = [t.rocm_launch_probe(*c) for c in cases]
else:
    lib = ctypes.CDLL(sys.argv[1])
    buf = ctypes.create_string_buffer(4096)
    rc = lib.harness_device_arch(0, buf, 4096)
    arch = buf.value.decode() if rc == 0 else "error: " + buf.value.decode()
    results = []
    for c in cases:
        n, M, N, K, s, ak, wk, b = list(c) + [0, 0, False][len(c) - 5:]
        lib.harness_probe_ex(n.encode(), ctypes.c_int64(M), ctypes.c_int64(N), ctypes.c_int64(K), s, ak, wk, int(b),
                             buf, 4096)
        results.append(buf.value.decode())
print("PROBE_RESULT " + json.dumps({"arch": arch, "results": results}))
"""


def run_probes(backend: str, env: dict, cases: list) -> dict:
    """Runs flygemm_rocm_probe_record_ex for each (name, M, N, K, split_k[, a_scale_kind,
    w_scale_kind, bias]) in a fresh process. backend: "torch" (the flygemm extension) or the path
    of a standalone harness library."""
    import sys

    if backend == "torch":  # the child imports the same flygemm package as this process
        import flygemm

        pkg_parent = str(pathlib.Path(flygemm.__file__).resolve().parent.parent)
        env = dict(env, PYTHONPATH=os.pathsep.join(p for p in (pkg_parent, env.get("PYTHONPATH")) if p))
    proc = subprocess.run([sys.executable, "-c", _PROBE_SCRIPT, backend, json.dumps(cases)], env=env,
                          stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, timeout=300)
    line = [ln for ln in proc.stdout.splitlines() if ln.startswith("PROBE_RESULT ")]
    assert proc.returncode == 0 and line, f"probe process failed ({proc.returncode}):\n{proc.stdout}\n{proc.stderr}"
    return json.loads(line[-1][len("PROBE_RESULT "):])


def ceil_div(a, b):
    return (a + b - 1) // b


def launch_case(case):
    """(M, N, K[, split_k, a_scale_kind, w_scale_kind, bias]) with the defaults filled in."""
    M, N, K, split_k, akind, wkind, bias = list(case) + [1, SCALE_NONE, SCALE_NONE, False][len(case) - 3:]
    return M, N, K, split_k, akind, wkind, bias


def expected_launches(kernel, case):
    """[(kernel kind, grid, block, kernarg values)] that probing ``kernel`` (a rocm_kernels()
    entry) with ``case`` must produce: the GEMM kernel (grid z / y = the slices actually run:
    split_k clamped to the K tiles) and, when more than one slice runs, the reduce."""
    tm, tn, tk = kernel["tile"]
    meta = kernel.get("meta") or {}
    family = kernel.get("family") or meta.get("family")
    in_dtype = kernel.get("in_dtype") or (meta.get("config") or {}).get("in_dtype")
    M, N, K, split_k, akind, wkind, bias = launch_case(case)
    if M == 0 or N == 0:
        return []
    per16 = 16 // IN_BYTES[in_dtype]
    m_pad = ceil_div(M, tm) * tm  # what the probe passes with split_k > 1
    slices = 1 if N % REDUCE_VEC else max(1, min(split_k, ceil_div(K, tk)))  # the adapter's clamps:
    slices = 1 if slices * m_pad * N * 4 >= 0x7FFFFFFF else slices  # N % 4, 32-bit workspace offsets
    if family not in FAMILY_REDUCE:  # no split-K mode: the adapter refuses split_k > 1
        assert split_k == 1, (family, case)
        slices = 1
    m_pad = m_pad if slices > 1 else M
    ws = PROBE_WS if split_k > 1 else 0
    lda = ceil_div(K // K_PER_ELEM.get(in_dtype, 1), per16) * per16  # storage elements (packed fp4: bytes)
    args = dict(out=PROBE_OUT, a=PROBE_A, w=PROBE_W, bias=PROBE_BIAS if bias else 0, M=M, N=N, K=K,
                lda=lda, ldo=N, ws=ws, M_pad=m_pad, split_k=slices)
    scales = dict(a_scale=PROBE_A_SCALE if akind else 0, w_scale=PROBE_W_SCALE if wkind else 0,
                  a_scale_per_row=int(akind == SCALE_PER_ROW), w_scale_per_row=int(wkind == SCALE_PER_ROW))
    args.update({k: v for k, v in scales.items() if k in dict(FAMILY_KERNEL_ARGS[family])})
    names = [n for n, _ in FAMILY_KERNEL_ARGS[family]]
    out = [(family, main_grid(family, kernel["tile"], M, N, slices), [meta.get("threads", 256), 1, 1],
            {n: args[n] for n in names})]
    if slices > 1:
        red = FAMILY_REDUCE[family]
        rargs = dict(args, **scales)
        out.append((red, [M, ceil_div(N, REDUCE_THREADS * REDUCE_VEC), 1], [REDUCE_THREADS, 1, 1],
                    {n: rargs[n] for n, _ in FAMILY_KERNEL_ARGS[red]}))
    return out


def kernel_kind(name: str) -> str:
    """The FAMILY_KERNEL_ARGS key of a code-object kernel symbol: "<family>_kernel_<index>" (the
    GEMM kernel) or "<reduce kind>_<index>"."""
    return name.rsplit("_", 1)[0].removesuffix("_kernel")


def check_launches(log: list, kernel: dict, arch: str, cases: list) -> None:
    """Checks the stub log of probing one ROCm kernel record with `cases` [(M, N, K[, split_k,
    a_scale_kind, w_scale_kind, bias]), ...]: one code-object load for the device, of the right
    target; every function looked up has its kind's kernarg layout and no scratch, the GEMM
    kernel the expected LDS; and the launches, in order, are exactly ``expected_launches``:
    grid, block, no dynamic LDS, the stream, the kernarg bytes (pointers, sizes, strides, scale
    pointers and flags, workspace, M_pad, slices) -- a reduce right after the GEMM kernel when
    more than one slice runs, none otherwise."""
    meta = kernel.get("meta") or {}
    family = kernel.get("family") or meta.get("family") or "gemm_a16w16"
    kernel = dict(kernel, family=family)
    loads = [e for e in log if e["call"] == "hipModuleLoadData"]
    assert len(loads) == 1, f"expected one module load per device, got {loads}"
    assert loads[0]["rc"] == 0 and loads[0]["e_machine"] == EM_AMDGPU
    assert loads[0]["mach"] == arch, f"loaded a {loads[0]['mach']} code object on a {arch} device"
    assert loads[0]["target"].split("-")[-1].split(":")[0] == arch, loads[0]["target"]
    funcs = {e["name"]: e for e in log if e["call"] == "hipModuleGetFunction"}
    assert funcs and all(f["rc"] == 0 for f in funcs.values()), funcs
    for f in funcs.values():
        kind = kernel_kind(f["name"])
        assert kind in (family, FAMILY_REDUCE.get(family)), f["name"]
        assert f["kernarg_segment_size"] == kernarg_size(kind)
        assert f["args"] == [list(a) for a in kernarg_layout(kind)], f["args"]
        assert f["private_segment_fixed_size"] == 0
        assert f["wavefront_size"] == 64
        assert f["group_segment_fixed_size"] <= LDS_LIMIT[arch]
        if kind == family and "lds_bytes" in meta:
            assert f["group_segment_fixed_size"] == meta["lds_bytes"] > 0
    launches = [e for e in log if e["call"] == "hipModuleLaunchKernel"]
    expected = [x for c in cases for x in expected_launches(kernel, c)]
    assert len(launches) == len(expected), ([e["name"] for e in launches], [x[0] for x in expected])
    for e, (kind, grid, block, args) in zip(launches, expected):
        assert e["rc"] == 0 and kernel_kind(e["name"]) == kind, (e["name"], kind)
        assert e["grid"] == grid, (e["grid"], grid, kind, kernel["tile"])
        assert e["block"] == block
        assert e["shared"] == meta.get("dynamic_lds_bytes", 0) == 0
        assert e["stream"] == PROBE_STREAM
        assert e["via"] == "kernelParams" and e["kernarg_size"] == kernarg_size(kind)
        assert decode_kernarg(kind, e["kernarg"]) == args, (decode_kernarg(kind, e["kernarg"]), args)


def check_gemm_a16w16_launches(log: list, kernel: dict, arch: str, cases: list) -> None:
    check_launches(log, dict(kernel, family="gemm_a16w16"), arch, cases)


# ------------------------------------------------------------------------------------------
# Standalone harness: FlyDSL objects + csrc/rocm_runtime.cpp (shim only) + a minimal registry
# ------------------------------------------------------------------------------------------
def write_harness_registry(path, built: list) -> None:
    """built: [(spec, build_result), ...] as tools/build_kernels.py would pass them."""
    lines = ['#include "launch.h"', "#include <cstring>", "#include <cstdint>", ""]
    for spec, res in built:
        lines += [f"namespace {spec['ident']}_ns {{", res["adapter_cpp"], "}"]
    lines.append("static const flygemm::KernelRecord kKernels[] = {")
    for spec, res in built:
        lines.append("  {" + ", ".join([
            json.dumps(spec["name"]), json.dumps(spec["arch"]), json.dumps(spec["family"]), json.dumps(spec["op"]),
            f"flygemm::DType::{spec['in_dtype']}", f"flygemm::DType::{spec['out_dtype']}",
            f"flygemm::WeightLayout::{spec['w_layout']}", str(spec["tile_m"]), str(spec["tile_n"]),
            str(spec["tile_k"]), str(res.get("max_split_k", 1)), str(res.get("requires_k_multiple", 1)),
            str(res.get("requires_n_multiple", 1)), json.dumps(json.dumps(res["meta"])),
            f"&{spec['ident']}_ns::{spec['ident']}_load", f"&{spec['ident']}_ns::{spec['ident']}_launch"]) + "},")
    lines += [
        "};",
        "namespace flygemm {",
        "const KernelRecord* find_kernel(const char* n) {",
        "  for (const auto& k : kKernels) if (!std::strcmp(k.name, n)) return &k;",
        "  return nullptr;",
        "}",
        "}  // namespace flygemm",
        'extern "C" int flygemm_rocm_probe_record(const flygemm::KernelRecord*, int64_t, int64_t, int64_t, int, '
        "char*, int);",
        'extern "C" int flygemm_rocm_probe_record_ex(const flygemm::KernelRecord*, int64_t, int64_t, int64_t, int, '
        "int, int, int, char*, int);",
        'extern "C" int flygemm_rocm_device_arch(int, char*, int);',
        'extern "C" int harness_probe(const char* n, int64_t M, int64_t N, int64_t K, int s, char* o, int l) {',
        "  return flygemm_rocm_probe_record(flygemm::find_kernel(n), M, N, K, s, o, l);",
        "}",
        'extern "C" int harness_probe_ex(const char* n, int64_t M, int64_t N, int64_t K, int s, int ak, int wk, '
        "int b, char* o, int l) {",
        "  return flygemm_rocm_probe_record_ex(flygemm::find_kernel(n), M, N, K, s, ak, wk, b, o, l);",
        "}",
        'extern "C" int harness_device_arch(int d, char* o, int l) { return flygemm_rocm_device_arch(d, o, l); }',
    ]
    pathlib.Path(path).write_text("\n".join(lines) + "\n")


def link_harness(tmpdir, built: list, objects: list) -> pathlib.Path:
    cxx = shutil.which("g++") or shutil.which("c++")
    if cxx is None:
        import pytest

        pytest.skip("no C++ compiler")
    tmpdir = pathlib.Path(tmpdir)
    reg = tmpdir / "harness_registry.cpp"
    write_harness_registry(reg, built)
    out = tmpdir / "libflygemm_rocm_harness.so"
    subprocess.run([cxx, "-std=c++17", "-O1", "-shared", "-fPIC", "-DFLYGEMM_ROCM_SHIM_ONLY",
                    f"-I{ROOT / 'csrc'}", str(reg), str(ROOT / "csrc" / "rocm_runtime.cpp"), *map(str, objects),
                    "-o", str(out), "-ldl", "-pthread"], check=True)
    return out


# ------------------------------------------------------------------------------------------
# Build outputs of the ROCm families and their ISA listings
# ------------------------------------------------------------------------------------------
def kernel_build_dir() -> pathlib.Path:
    return pathlib.Path(os.environ.get("FLYGEMM_KERNEL_BUILD_DIR", ROOT / "build" / "kernels"))


def built_kernels(families) -> list:
    """[(kernel dir, meta)] of every ROCm kernel of ``families`` under the build directory."""
    out = []
    root = kernel_build_dir()
    if root.is_dir():
        for mf in sorted(root.glob("gfx*/*/*.meta.json")):
            meta = json.loads(mf.read_text())
            if meta.get("family") in families:
                out.append((mf.parent, meta))
    return out


def isa_instructions(isa: str) -> list:
    """The instruction and label lines of a FlyDSL final-ISA listing (no comments, no directives)."""
    lines = []
    for ln in isa.splitlines():
        text = ln.split(";")[0].strip()
        if text and not text.startswith("."):
            lines.append(text)
        elif re.match(r"^\.LBB\d+_\d+:", text):
            lines.append(text)
    return lines


def isa_loops(isa: str) -> list:
    """Bodies (instruction lists) of the loops of a listing: a label followed later by a branch
    back to it."""
    ins = isa_instructions(isa)
    labels = {ln[:-1]: i for i, ln in enumerate(ins) if re.match(r"^\.LBB\d+_\d+:$", ln)}
    loops = []
    for i, ln in enumerate(ins):
        m = re.match(r"^s_cbranch_\w+\s+(\.LBB\d+_\d+)$|^s_branch\s+(\.LBB\d+_\d+)$", ln)
        target = m and (m.group(1) or m.group(2))
        if target in labels and labels[target] < i:
            loops.append(ins[labels[target] + 1:i + 1])
    return loops
