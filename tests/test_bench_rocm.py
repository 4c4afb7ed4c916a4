"""`python -m flygemm bench` on ROCm, checked without a GPU: the fp8 flavour it quantizes to follows
the device's arch (gfx942's MFMA reads e4m3fnuz, gfx950's OCP e4m3fn) and the arch name the
dispatch sees is the gcnArchName without its feature suffix."""
import types

import pytest
import torch

import flygemm
from flygemm import bench


def fake_rocm(monkeypatch, gcn_arch):
    monkeypatch.setattr(torch.version, "hip", "6.4.0", raising=False)
    props = types.SimpleNamespace(gcnArchName=gcn_arch, major=9, minor=4)
    monkeypatch.setattr(torch.cuda, "get_device_properties", lambda device=None: props)


@pytest.mark.parametrize("gcn_arch,fp8,arch", [
    ("gfx942:sramecc+:xnack-", torch.float8_e4m3fnuz, "gfx942"),
    ("gfx950:sramecc+:xnack-", torch.float8_e4m3fn, "gfx950"),
])
def test_fp8_flavour_and_arch_follow_the_rocm_device(monkeypatch, gcn_arch, fp8, arch):
    fake_rocm(monkeypatch, gcn_arch)
    dev = torch.device("cuda", 0)
    assert bench.fp8_dtype(dev) == fp8
    assert flygemm._arch_of(dev) == arch


def test_cpu_and_cuda_keep_ocp_fp8(monkeypatch):
    assert bench.fp8_dtype(torch.device("cpu")) == torch.float8_e4m3fn
    monkeypatch.setattr(torch.version, "hip", None, raising=False)
    assert bench.fp8_dtype(torch.device("cuda", 0)) == torch.float8_e4m3fn
