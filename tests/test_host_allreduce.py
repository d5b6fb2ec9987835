"""Gradient averaging through shared memory (ranks on one host): the library's result, bit-identical
on every rank, with the library's own all-reduce as the fallback."""

from __future__ import annotations

import os
import platform

import pytest
import torch
import torch.distributed as dist
import torch.multiprocessing as mp

from simulo_envs.wrappers.host_allreduce import HostAllReduce, HostGradientAverager, host_allreduce_supported

pytestmark = pytest.mark.skipif(platform.system() != "Linux" or platform.machine().lower() not in ("x86_64", "amd64"),
                                reason="the shared-memory path runs on x86-64 Linux only")


def _rank(rank: int, world: int, store: str, out: str) -> None:
    os.environ["LOCAL_WORLD_SIZE"] = str(world)
    torch.set_num_threads(1)
    dist.init_process_group("gloo", init_method=f"file://{store}", rank=rank, world_size=world)
    assert host_allreduce_supported("cpu") and not host_allreduce_supported("meta")
    torch.manual_seed(0)
    model = torch.nn.Sequential(torch.nn.Linear(5, 7), torch.nn.ELU(), torch.nn.Linear(7, 3))
    calls = []
    exchange = HostAllReduce(sum(p.numel() for p in model.parameters()))
    averager = HostGradientAverager(exchange, model.parameters, fallback=lambda: calls.append("fallback"))
    results = []
    for step in range(3):   # 3 exchanges: both buffers are reused
        torch.manual_seed(100 * step + rank)
        model.zero_grad()
        model(torch.randn(11, 5)).square().sum().backward()
        local = [p.grad.clone() for p in model.parameters()]
        expected = [g.clone() for g in local]
        for g in expected:       # what rsl-rl-lib computes: all-reduce SUM over gloo, then / world size
            dist.all_reduce(g)
            g /= world
        averager()
        results.append({"local": local, "expected": expected, "got": [p.grad.clone() for p in model.parameters()]})
    small = HostGradientAverager(HostAllReduce(10), model.parameters, fallback=lambda: calls.append("fallback"))
    small()                  # more gradient floats than its buffer holds: the library's averaging runs
    assert small.exchanges == 0
    with pytest.raises(ValueError, match="float32 CPU tensors of at most 10 floats"):
        small.exchange.average_([torch.zeros(11)])
    small.exchange.close()
    torch.save({"results": results, "calls": calls, "exchanges": averager.exchanges}, os.path.join(out, f"{rank}.pt"))
    exchange.close()
    dist.destroy_process_group()


def test_host_average_is_the_gloo_average_on_every_rank(tmp_path):
    world = 3
    mp.spawn(_rank, args=(world, str(tmp_path / "store"), str(tmp_path)), nprocs=world, join=True)
    ranks = [torch.load(tmp_path / f"{r}.pt") for r in range(world)]
    for r in ranks:
        assert r["calls"] == ["fallback"] and r["exchanges"] == 3
        for step in r["results"]:
            for got, expected in zip(step["got"], step["expected"]):
                assert torch.allclose(got, expected, rtol=1e-6, atol=1e-7)
    for step in range(3):
        mean = [sum(r["results"][step]["local"][i] for r in ranks) / world for i in range(4)]
        assert all(torch.allclose(a, b, atol=1e-6) for a, b in zip(ranks[0]["results"][step]["got"], mean))
        assert not torch.equal(ranks[0]["results"][step]["local"][0], ranks[1]["results"][step]["local"][0])
        for other in ranks[1:]:   # every rank holds the same bits
            first, got = ranks[0]["results"][step]["got"], other["results"][step]["got"]
            assert all(torch.equal(a, b) for a, b in zip(first, got))


def test_not_supported_without_a_group_or_across_hosts(monkeypatch):
    assert not dist.is_initialized() and not host_allreduce_supported("cpu")
