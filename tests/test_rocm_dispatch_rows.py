"""The ROCm dispatch rows (kernels/configs/gfx942.csv, gfx950.csv): every row names a kernel of its
arch's kernel list with the same op and dtypes, and its split_k is the documented heuristic
(kernels/rocm/_splitk.py heuristic_split_k; docs/ROCM.md "Split-K, blockscale and decode")
evaluated at the row's M bucket and (N, K) -- so a hand-edited split_k, or a heuristic change
without regenerated rows, fails here. Plus the heuristic's rules on their own, and the linked
table answering flygemm.explain for the decode and blockscale rows (preshuffled weights at
decode M keep a preshuffled kernel)."""

import csv

import pytest

import rocm_testlib as rt
from source_modules import load_source

ARCHS = ("gfx942", "gfx950")
EBYTES = {"bf16": 2, "fp16": 2, "fp8_e4m3fn": 1, "fp8_e4m3fnuz": 1, "int8": 1}
INT64_MAX = 9223372036854775807


def _splitk():
    return load_source("kernels/rocm/_splitk.py", "flygemm_rocm_splitk")


SK = _splitk()


def _read(path):
    with open(path, newline="") as f:
        return list(csv.DictReader(ln for ln in f if ln.strip() and not ln.startswith("#")))


def _tables(arch):
    kernels = {k["name"]: k for k in _read(rt.ROOT / "kernels" / "configs" / f"{arch}.kernels.csv")}
    return kernels, _read(rt.ROOT / "kernels" / "configs" / f"{arch}.csv")


SPLIT_K_FAMILIES = ("gemm_a16w16", "gemm_a8w8", "gemm_a8w8_blockscale", "gemm_splitk_decode")


def _splittable(k):
    """Families with a split-K mode (int8 gemm_a8w8 excepted); the others' rows say 1."""
    return k["family"] in SPLIT_K_FAMILIES and not (k["family"] == "gemm_a8w8" and k["in_dtype"] == "int8")


@pytest.mark.parametrize("arch", ARCHS)
def test_rows_follow_the_split_k_heuristic(arch):
    kernels, rows = _tables(arch)
    assert rows
    for r in rows:
        k = kernels[r["kernel"]]
        assert (k["op"], k["in_dtype"], k["out_dtype"]) == (r["op"], r["in_dtype"], r["out_dtype"]), r
        N, K = (int(r["N"]), int(r["K"])) if int(r["N"]) else SK.DEFAULT_NK
        tile = (int(k["tile_m"]), int(k["tile_n"]), int(k["tile_k"]))
        want = SK.heuristic_split_k(arch, int(r["m_max"]), N, K, tile, EBYTES[k["in_dtype"]]) if _splittable(k) else 1
        assert int(r["split_k"]) == want, (r, want)


@pytest.mark.parametrize("arch", ARCHS)
def test_new_families_are_dispatched(arch):
    """M <= 8 bf16/fp16 goes to the plain-weight decode family; blockscale has a row per M regime;
    small-M rows of the split-K families do split."""
    kernels, rows = _tables(arch)
    fp8 = {"gfx942": "fp8_e4m3fnuz", "gfx950": "fp8_e4m3fn"}[arch]
    for t in ("bf16", "fp16"):
        (dec,) = [r for r in rows if r["op"] == "gemm_a16w16" and r["in_dtype"] == r["out_dtype"] == t
                  and r["m_max"] == "8" and r["N"] == "0"]
        k = kernels[dec["kernel"]]
        assert k["family"] == "gemm_splitk_decode" and k["w_layout"] == "plain" and int(dec["split_k"]) > 1
    bs = [r for r in rows if r["op"] == "gemm_a8w8_blockscale" and r["N"] == "0"]
    assert {(r["in_dtype"], r["out_dtype"]) for r in bs} == {(fp8, "bf16"), (fp8, "fp16")}
    assert {int(r["m_max"]) for r in bs if r["out_dtype"] == "bf16"} == {16, 256, INT64_MAX}
    assert all(kernels[r["kernel"]]["family"] == "gemm_a8w8_blockscale" for r in bs)
    small = [r for r in rows if int(r["m_max"]) <= 16 and r["N"] == "0" and _splittable(kernels[r["kernel"]])]
    assert small and all(int(r["split_k"]) > 1 for r in small)
    assert all(int(r["split_k"]) == 1 for r in rows if int(r["m_max"]) == INT64_MAX)


@pytest.mark.parametrize("arch", ARCHS)
def test_heuristic_rules(arch):
    """Powers of two within [1, 16]; doubling stops once every CU has a workgroup, at two K tiles
    per slice, or at the workspace-traffic cap; and splitting only ever happens below one
    workgroup per CU."""
    cus = SK.CU_COUNT[arch]
    for M in (1, 4, 8, 16, 64, 256, 1024):
        for N in (128, 512, 2048, 4096, 16384, 36864):
            for K in (256, 1024, 4096, 7168, 18432):
                for tile in ((16, 32, 512), (16, 64, 256), (64, 128, 64), (32, 64, 128)):
                    for eb in (1, 2):
                        s = SK.heuristic_split_k(arch, M, N, K, tile, eb)
                        assert s in (1, 2, 4, 8, 16)
                        tiles = -(-M // tile[0]) * -(-N // tile[1])
                        kt = -(-K // tile[2])
                        if s > 1:
                            assert tiles * (s // 2) < cus and kt // s >= SK.MIN_K_TILES_PER_SLICE
                            assert 8 * s * M * N <= SK.WS_TRAFFIC_SHARE * N * K * eb
                        if tiles >= cus:
                            assert s == 1
    # the decode shapes of the CUDA tuning (docs/PERF.md): M = 1, 2048 x 7168 splits, 16384 x 7168 does not
    assert SK.heuristic_split_k(arch, 1, 2048, 7168, (16, 32, 512), 2) == 4
    assert SK.heuristic_split_k(arch, 1, 16384, 7168, (16, 32, 512), 2) == 1


@pytest.mark.parametrize("arch", ARCHS)
def test_linked_table_answers_explain(arch):
    torch = pytest.importorskip("torch")
    try:
        import flygemm
    except ImportError as exc:
        pytest.skip(f"flygemm extension not built: {exc}")
    if arch not in flygemm.info()["archs"]:
        pytest.skip(f"no {arch} kernels in this build")
    got = flygemm.explain("gemm_a16w16", 1, 2048, 7168, torch.bfloat16, device=arch)
    assert got["kernel"] == f"gemm_splitk_decode.bf16.bf16.t16x32x512.{arch}" and got["split_k"] == 4
    # an exact row only where the heuristic differs from the default row (gfx950: 2 for 4096 x 4096)
    assert got["w_layout"] == "plain" and got["source"] == {"gfx942": "default", "gfx950": "table"}[arch]
    assert flygemm.explain("gemm_a16w16", 1, 2048, 7168, torch.bfloat16, device=arch, w_layout="plain") == got
    # a preshuffled (ROCm-native) weight is not unshuffled for the decode kernel: the default
    # rows' 16-row preshuffled bucket (the exact rows hold no preshuffled kernel for M = 1)
    pre = flygemm.explain("gemm_a16w16", 1, 2048, 7168, torch.bfloat16, device=arch, w_layout="preshuffled")
    assert pre["kernel"] == f"gemm_a16w16.bf16.bf16.t16x64x256.{arch}" and pre["w_layout"] == "preshuffled"
    assert pre["source"] == "default" and pre["split_k"] > 1
    got = flygemm.explain("gemm_a16w16", 16, 4096, 4096, torch.float16, device=arch)
    assert got["kernel"].startswith("gemm_a16w16.fp16.fp16.t16x64x256") and got["split_k"] > 1
    fp8 = torch.float8_e4m3fnuz if arch == "gfx942" else torch.float8_e4m3fn
    got = flygemm.explain("gemm_a8w8_blockscale", 4, 7168, 2048, fp8, device=arch)
    assert got["kernel"].startswith("gemm_a8w8_blockscale.") and ".t32x64x128." in got["kernel"]
    assert got["source"] == "default" and got["split_k"] > 1
