"""Data-parallel PPO under torchrun: 2 CPU ranks (gloo) train FrankaReach-v1 in lockstep, rank 0
alone writes, and its checkpoint evaluates in one process; env seeds split as a single process's."""

from __future__ import annotations

import os
import subprocess
import sys
import textwrap

import pytest
import torch

pytest.importorskip("rsl_rl")

from simulo_envs.training.distributed import RankInfo, rank_device, rank_info, rank_seeds  # noqa: E402

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))

# What each launcher runs instead of scripts/train.py: the script itself (its command line after the
# output folder), with each rank recording its parameters (actor, critic, normaliser buffers) and
# learning rate after every PPO update, and the result of its training.
RANK_SCRIPT = textwrap.dedent("""
    import os, runpy, sys, torch
    import simulo_envs
    from simulo_envs.training import rsl_rl_train
    from simulo_envs.training.rsl_rl_runner import SimuloRunner

    out = sys.argv[1]
    snapshots, runners, results = [], [], []
    build = SimuloRunner.__init__

    def keep(self, *args, **kwargs):   # the runner train() builds
        build(self, *args, **kwargs)
        runners.append(self)

    SimuloRunner.__init__ = keep

    def record(row):
        runner = runners[-1]
        state = [t.detach().clone() for m in (runner.alg.actor, runner.alg.critic) for t in m.state_dict().values()]
        snapshots.append({"env_steps": row["env_steps"], "lr": runner.alg.learning_rate, "state": state})

    train = rsl_rl_train.train

    def recorded_train(*args, **kwargs):   # the script's training, recorded
        results.append(train(*args, on_iteration=record, **kwargs))
        return results[-1]

    rsl_rl_train.train = recorded_train
    sys.argv = ["scripts/train.py", *sys.argv[2:]]
    runpy.run_path("scripts/train.py", run_name="__main__")
    torch.save({"snapshots": snapshots, "checkpoint": results[0].checkpoint, "env_steps": results[0].env_steps},
               os.path.join(out, f"rank{os.environ['RANK']}.pt"))
""")


@pytest.mark.e2e
def test_two_machine_command_line_trains_in_lockstep_one_writer_and_rank0_checkpoint_evaluates(tmp_path):
    """The several-machines command of docs/distributed.md (c10d rendezvous, one shared log dir),
    as two launchers of one process each on this host: one PPO run over 2 ranks that stay in
    lockstep, one writer, and a checkpoint that evaluates in one process."""
    import json
    import socket

    script = tmp_path / "rank_script.py"
    script.write_text(RANK_SCRIPT)
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    log_dir = tmp_path / "run"
    command = [sys.executable, "-m", "torch.distributed.run", "--nnodes=2", "--nproc_per_node=1",
               "--rdzv-backend=c10d", f"--rdzv-endpoint=127.0.0.1:{port}", "--rdzv-id=two-nodes",
               str(script), str(tmp_path), "--env-id", "FrankaReach-v1", "--num-envs", "8", "--total-timesteps", "600",
               "--seed", "3", "--log-dir", str(log_dir), "--no-progress", "--torch-threads", "1", "--checkpoint-every", "1"]
    nodes = [subprocess.Popen(command, cwd=ROOT, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
             for _ in range(2)]
    outputs = [node.communicate(timeout=240) for node in nodes]
    for node, (out, err) in zip(nodes, outputs):
        assert node.returncode == 0, out[-2000:] + err[-4000:]
    library = "Synchronizing parameters for rank "   # rsl_rl's own line, on every rank
    printed = ["".join(line for line in out.splitlines(True) if not line.startswith(library)) for out, _ in outputs]
    printed = [out for out in printed if out]
    assert len(printed) == 1   # the launcher that received rank 0 alone prints
    assert printed[0].startswith("training FrankaReach-v1: 600 env steps = 3 PPO iterations x 8 envs x 25 steps "
                                 "on 2 ranks x 4 envs")
    assert json.loads((log_dir / "run.json").read_text())["world_size"] == 2

    ranks = [torch.load(tmp_path / f"rank{r}.pt", weights_only=False) for r in (0, 1)]
    first, second = (r["snapshots"] for r in ranks)
    assert [s["env_steps"] for s in first] == [s["env_steps"] for s in second] == [200, 400, 600]
    for a, b in zip(first, second):   # identical after every update, to the bit
        assert a["lr"] == b["lr"]
        assert all(torch.equal(x, y) for x, y in zip(a["state"], b["state"]))
    changed = [not torch.equal(x, y) for x, y in zip(first[0]["state"], first[-1]["state"])]
    assert sum(changed) >= 4   # the updates did move the weights (and the normalisers)

    # rank 0 alone wrote; its checkpoint holds its final parameters and the global env-step count
    assert ranks[0]["checkpoint"] == str(log_dir / "model_final.pt") and ranks[1]["checkpoint"] is None
    assert ranks[0]["env_steps"] == ranks[1]["env_steps"] == 600
    files = sorted(os.listdir(log_dir))
    assert [f for f in files if not f.startswith("events.out")] == [
        "model_0.pt", "model_1.pt", "model_2.pt", "model_final.pt", "progress.csv", "run.json"]
    assert sum(f.startswith("events.out") for f in files) == 1
    rows = (log_dir / "progress.csv").read_text().splitlines()
    assert [row.split(",")[1] for row in rows[1:]] == ["200", "400", "600"]
    assert rows[2].split(",")[3] == "8"   # both ranks' 4 + 4 episodes ended at step 50

    checkpoint = torch.load(ranks[0]["checkpoint"], weights_only=False)
    assert checkpoint["infos"]["world_size"] == 2 and checkpoint["infos"]["env_steps"] == 600
    actor_state = list(checkpoint["actor_state_dict"].values())
    assert all(torch.equal(x, y) for x, y in zip(actor_state, first[-1]["state"]))

    from simulo_envs.training.evaluation import evaluate

    summary = evaluate(ranks[0]["checkpoint"], episodes=2, seed=50)   # one process, no torchrun
    assert summary["env_id"] == "FrankaReach-v1" and summary["episodes"] == 2 and summary["env_steps"] == 600
    assert 0.0 <= summary["success_rate"] <= 1.0 and 1 <= summary["mean_length"] <= 50


def test_rank_seeds_are_the_single_process_seeds():
    assert rank_seeds(7, RankInfo(rank=0, world_size=3), 4) == [7, 8, 9, 10]
    assert rank_seeds(7, RankInfo(rank=2, world_size=3), 4) == [15, 16, 17, 18]
    every = [s for r in range(3) for s in rank_seeds(7, RankInfo(rank=r, world_size=3), 4)]
    assert every == list(range(7, 19))


def test_rank_envs_start_where_the_single_process_envs_start():
    """Rank r's n envs, seeded by rank_seeds, begin the episodes of envs r*n .. r*n+n-1 of one process."""
    from simulo_envs.training.rsl_rl_train import make_rsl_env, train_config_for

    config = train_config_for("FrankaReach-v1")
    whole = make_rsl_env("FrankaReach-v1", 4, config, 5)
    expected = whole.get_observations()["policy"].clone()
    whole.close()
    for r in (0, 1):
        part = make_rsl_env("FrankaReach-v1", 2, config, rank_seeds(5, RankInfo(rank=r, world_size=2), 2))
        assert torch.allclose(part.get_observations()["policy"], expected[2 * r:2 * r + 2], atol=1e-5)
        part.close()


def test_rank_info_reads_torchrun_variables(monkeypatch):
    for name in ("RANK", "LOCAL_RANK", "WORLD_SIZE"):
        monkeypatch.delenv(name, raising=False)
    assert rank_info() == RankInfo(0, 0, 1) and not rank_info().distributed
    monkeypatch.setenv("WORLD_SIZE", "4")
    monkeypatch.setenv("RANK", "3")
    monkeypatch.setenv("LOCAL_RANK", "1")
    info = rank_info()
    assert (info.rank, info.local_rank, info.world_size, info.is_main) == (3, 1, 4, False)
    assert rank_device("cuda", info) == "cuda:1" and rank_device("cpu", info) == "cpu"
    assert rank_device("cuda:1", info) == "cuda:1" and rank_device("cuda:0", RankInfo()) == "cuda:0"
    with pytest.raises(ValueError, match="each rank uses its own GPU"):
        rank_device("cuda:0", info)
    monkeypatch.setenv("RANK", "4")
    with pytest.raises(ValueError, match="RANK=4"):
        rank_info()
