"""The figure scripts of the lift training docs: seeds side by side, frame strips of a video."""

from __future__ import annotations

import importlib.util
import os

import numpy as np
import pytest

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def load_script(name: str):
    spec = importlib.util.spec_from_file_location(f"script_{name}", os.path.join(ROOT, "scripts", f"{name}.py"))
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_frame_strip_picks_first_last_and_even_frames():
    strip = load_script("video_strip").frame_strip
    frames = np.zeros((11, 4, 6, 3), dtype=np.uint8)
    frames[:, 0, 0, 0] = np.arange(11) * 10         # frame i is marked 10 * i
    out = strip(frames, 3)
    assert out.shape == (4, 18, 3) and out.dtype == np.uint8
    assert [out[0, 6 * k, 0] for k in range(3)] == [0, 50, 100]
    half = strip(frames, 2, scale=0.5)
    assert half.shape == (2, 6, 3) and [half[0, 0, 0], half[0, 3, 0]] == [0, 100]
    with pytest.raises(ValueError, match=r"count must be in \[1, 11\]"):
        strip(frames, 12)
    with pytest.raises(ValueError, match="scale must be > 0"):
        strip(frames, 2, scale=0)


def _run(folder, seed: int, rate: float):
    folder.mkdir()
    (folder / "progress.csv").write_text(
        "iteration,env_steps,wall_s,episodes,success_once,success_at_end,return,length\n"
        f"0,6400,30.0,0,,,,\n1,12800,60.0,10,{rate / 2},{rate / 2},1.0,50.0\n2,19200,90.0,20,{rate},{rate},2.0,40.0\n")
    (folder / "run.json").write_text(f'{{"env_id": "FrankaLift-v1", "num_envs": 128, "world_size": 2, "seed": {seed}}}')
    (folder / "evaluations.csv").write_text("checkpoint,env_steps,success_rate\n"
                                            f"model_0.pt,0,0.0\nmodel_2.pt,19200,{rate}\nmodel_final.pt,19200,{rate}\n")
    return str(folder / "progress.csv")


def test_plot_seeds_draws_every_seed_and_the_reference(tmp_path):
    plot_seeds = load_script("plot_seeds")
    runs = [_run(tmp_path / f"s{seed}", seed, 0.5 + 0.2 * seed) for seed in range(2)]
    (tmp_path / "sb3.csv").write_text("env_steps,wall_s,success_once\n6400,40.0,nan\n12800,80.0,0.25\n")
    output = tmp_path / "seeds.png"
    figure = plot_seeds.main([*runs, "-o", str(output), "--reference", str(tmp_path / "sb3.csv"), "SB3", "--target", "0.9"])
    assert output.stat().st_size > 10_000
    by_steps, by_time = figure.axes
    assert [text.get_text() for text in by_steps.get_legend().get_texts()] == [
        "seed 0: evaluation (deterministic, 100 episodes)", "seed 0: training episodes (stochastic)",
        "seed 1: evaluation (deterministic, 100 episodes)", "seed 1: training episodes (stochastic)",
        "SB3: training episodes"]
    evaluation = [line for line in by_time.get_lines() if line.get_marker() == "o"][1]
    # seed 1's checkpoints against minutes: model_0 at 0, model_2 at its iteration's 90 s; final counted once
    assert list(evaluation.get_xdata()) == [0.0, 1.5] and list(evaluation.get_ydata()) == [0.0, 0.7]
    assert plot_seeds.read_reference(str(tmp_path / "sb3.csv")) == ([12800], [80.0 / 60], [0.25])
    with pytest.raises(SystemExit):
        plot_seeds.main([str(tmp_path / "sb3.csv"), "-o", str(output)])   # not a train.py progress.csv


def test_plot_seeds_at_end_draws_the_success_held_at_the_last_step(tmp_path):
    plot_seeds = load_script("plot_seeds")
    run = _run(tmp_path / "s0", 0, 0.8)
    (tmp_path / "s0" / "evaluations.csv").write_text(
        "checkpoint,env_steps,success_rate,success_at_end\nmodel_0.pt,0,0.0,0.0\nmodel_2.pt,19200,0.8,0.6\n")
    figure = plot_seeds.main([run, "-o", str(tmp_path / "seeds.png"), "--at-end"])
    by_steps, by_time = figure.axes
    held = [line for line in by_time.get_lines() if line.get_marker() == "s"]
    assert len(held) == 1 and list(held[0].get_xdata()) == [0.0, 1.5] and list(held[0].get_ydata()) == [0.0, 0.6]
    assert "seed 0: evaluation, success at the last step" in [t.get_text() for t in by_steps.get_legend().get_texts()]
    assert plot_seeds.read_at_end(str(tmp_path / "none" / "progress.csv")) == []
