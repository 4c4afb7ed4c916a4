"""Post-link control-bit edits of the fp32 promotion FFMA runs in an exported sm_90a object.

Why: in the blockscale mainloop every 128-wide K block ends with a run of FFMAs (final accumulator
+= scratch accumulator x scale) issued while the next block's wgmmas execute. ptxas marks every
other FFMA of such a run to keep its scale operand in the operand reuse cache; a marked instruction
also forbids the scheduler to switch warps after it. Nsight Compute puts ~28% of the consumer warps'
stall samples on these FFMAs ("dispatch", docs/PERF.md, fourth 2026-11-30 session). The two edits
here change only those control bits, never an opcode or an operand:

  * "yield": in the first 9/16 of a run, FFMAs with reuse flags lose them and may yield (the
    scheduler can interleave the other warps' wgmma issue with the promotion);
  * "reuse": every FFMA whose successor in the run reads the same register as operand B keeps it in
    the reuse cache (one register-file read fewer each), the way ptxas marks every other one.

Sass layout (sm_90, 128-bit instructions, little-endian words lo, hi): hi bits 58..61 are the
operand reuse flags (a, b, c, and one more), bit 45 is set on the instructions after which the
warp must not yield (ptxas sets it together with a reuse flag). Both facts are read off the
disassembly of our own kernels: every FFMA with `.reuse` on operand a has 0x0400200000000000
set in hi, on operand b 0x0800200000000000.

Needs cuobjdump (pip: nvidia-cuda-cuobjdump) to find the FFMAs; `verify` re-disassembles the edited
cubin and checks that every instruction's text is unchanged apart from `.reuse` markers.
"""
from __future__ import annotations

import pathlib
import re
import struct
import subprocess
import tempfile

REUSE_MASK = 0xF << 58
REUSE_A = 1 << 58
REUSE_B = 1 << 59
NO_YIELD = 1 << 45
MIN_RUN = 8

_LINE = re.compile(r"/\*([0-9a-f]{4,})\*/\s+(.*?)\s*;\s*/\*\s*(0x[0-9a-f]{16})\s*\*/")
_HI = re.compile(r"^\s*/\*\s*(0x[0-9a-f]{16})\s*\*/\s*$")


def cubin_spans(data: bytes) -> list[tuple[int, int]]:
    """(offset, length) of every sm_90 ELF image (e_machine EM_CUDA = 190) embedded in `data`."""
    spans, pos = [], 0
    while True:
        off = data.find(b"\x7fELF", pos)
        if off < 0:
            return spans
        pos = off + 4
        if off + 64 > len(data) or struct.unpack_from("<H", data, off + 0x12)[0] != 190:
            continue
        phoff, shoff = struct.unpack_from("<QQ", data, off + 0x20)
        phentsize, phnum, shentsize, shnum = struct.unpack_from("<HHHH", data, off + 0x36)
        end = max(shoff + shentsize * shnum, phoff + phentsize * phnum)
        for i in range(shnum):
            o = off + shoff + i * shentsize
            sh_type = struct.unpack_from("<I", data, o + 4)[0]
            sh_off, sh_size = struct.unpack_from("<QQ", data, o + 0x18)
            if sh_type != 8:  # SHT_NOBITS occupies no file bytes
                end = max(end, sh_off + sh_size)
        spans.append((off, end))
        pos = off + end


def text_sections(cubin: bytes) -> dict[str, tuple[int, int]]:
    """{function name: (file offset, size)} of the cubin's `.text.<function>` sections."""
    shoff = struct.unpack_from("<Q", cubin, 0x28)[0]
    shentsize, shnum, shstrndx = struct.unpack_from("<HHH", cubin, 0x3A)
    headers = [struct.unpack_from("<IIQQQQ", cubin, shoff + i * shentsize) for i in range(shnum)]
    strtab_off = headers[shstrndx][4]
    out = {}
    for name_off, _type, _flags, _addr, off, size in headers:
        end = cubin.index(b"\0", strtab_off + name_off)
        name = cubin[strtab_off + name_off:end].decode()
        if name.startswith(".text."):
            out[name[len(".text."):]] = (off, size)
    return out


def disassemble(cubin: bytes, cuobjdump: str) -> dict[str, list[tuple[int, str, int, int]]]:
    """{function: [(offset in its .text, instruction text, lo, hi)]} from `cuobjdump -sass`."""
    with tempfile.NamedTemporaryFile(suffix=".cubin") as f:
        f.write(cubin)
        f.flush()
        sass = subprocess.run([cuobjdump, "-sass", f.name], capture_output=True, text=True,
                              check=True).stdout
    funcs, cur, pending = {}, None, None
    for line in sass.splitlines():
        if "Function :" in line:
            cur = funcs.setdefault(line.split("Function :", 1)[1].strip(), [])
            continue
        m = _LINE.search(line)
        if m and cur is not None:
            pending = (int(m.group(1), 16), m.group(2).strip(), int(m.group(3), 16))
            continue
        h = _HI.match(line)
        if h and pending is not None:
            cur.append(pending[:2] + (pending[2], int(h.group(1), 16)))
            pending = None
    return funcs


def _operands(text: str) -> list[str]:
    body = text.split(None, 1)[1] if " " in text else ""
    return [t.strip() for t in body.split(",")]


def ffma_runs(instrs) -> list[list[tuple[int, str, int, int]]]:
    """Maximal runs (>= MIN_RUN) of consecutive unpredicated register-form FFMAs."""
    runs, cur = [], []
    for ins in instrs:
        ops = _operands(ins[1])
        if ins[1].startswith("FFMA ") and len(ops) == 4 and all(o.split(".")[0].startswith("R") for o in ops):
            cur.append(ins)
            continue
        if len(cur) >= MIN_RUN:
            runs.append(cur)
        cur = []
    if len(cur) >= MIN_RUN:
        runs.append(cur)
    return runs


def edits_yield(run) -> list[tuple[int, int]]:
    """(offset, new hi) for the "yield" edit of one run."""
    out = []
    for off, _text, _lo, hi in run[:(len(run) * 9 + 15) // 16]:
        if hi & REUSE_MASK:
            out.append((off, hi & ~REUSE_MASK & ~NO_YIELD))
    return out


def edits_reuse(run) -> list[tuple[int, int]]:
    """(offset, new hi) for the "reuse" edit of one run: the scale operand (A or B, whichever the
    next FFMA reads from the same register in the same slot) kept in the reuse cache, unless this
    FFMA overwrites it."""
    out = []
    for (off, text, _lo, hi), nxt in zip(run, run[1:]):
        ops = [o.split(".")[0] for o in _operands(text)]
        nops = [o.split(".")[0] for o in _operands(nxt[1])]
        for slot, bit in ((1, REUSE_A), (2, REUSE_B)):
            if ops[slot] == nops[slot] and ops[0] != ops[slot] and not hi & bit:
                out.append((off, hi | bit | NO_YIELD))
                break
    return out


EDITS = {"yield": edits_yield, "reuse": edits_reuse}


def _strip_reuse(text: str) -> str:
    return text.replace(".reuse", "")


def patch_object(obj_path, mode: str, cuobjdump: str) -> dict:
    """Applies edit `mode` to every FFMA run of every kernel in the export object, in place, and
    verifies the result. Returns {"runs": n, "instructions": n}; raises if nothing matched (the
    compiled code no longer has the shape these edits were written for)."""
    if mode not in EDITS:
        raise ValueError(f"unknown FFMA edit {mode!r}; known: {sorted(EDITS)}")
    path = pathlib.Path(obj_path)
    data = bytearray(path.read_bytes())
    n_runs = n_ins = 0
    for start, length in cubin_spans(bytes(data)):
        cubin = bytes(data[start:start + length])
        sections = text_sections(cubin)
        before = disassemble(cubin, cuobjdump)
        for func, instrs in before.items():
            sec_off, sec_size = sections[func]
            for run in ffma_runs(instrs):
                n_runs += 1
                for off, hi in EDITS[mode](run):
                    assert off + 16 <= sec_size
                    struct.pack_into("<Q", data, start + sec_off + off + 8, hi)
                    n_ins += 1
        after = disassemble(bytes(data[start:start + length]), cuobjdump)
        for func in before:
            old = [(o, _strip_reuse(t), lo) for o, t, lo, _ in before[func]]
            new = [(o, _strip_reuse(t), lo) for o, t, lo, _ in after[func]]
            if old != new:
                raise RuntimeError(f"{path.name}: FFMA edit changed instructions of {func}")
    if n_ins == 0:
        raise RuntimeError(f"{path.name}: no FFMA run to edit ({n_runs} runs found)")
    path.write_bytes(bytes(data))
    return {"mode": mode, "runs": n_runs, "instructions": n_ins}
