"""Faults of the sharded env: a worker that raises, dies, crashes or hangs gives a clear error
naming its shard within bounded time; close() (also after Ctrl-C) leaves no process and no
shared-memory segment behind."""

import faulthandler
import os
import signal
import subprocess
import sys
import textwrap
import time

import pytest
import torch

import simulo_envs  # noqa: F401
from simulo_envs.cloner.grid import grid_transforms
from simulo_envs.tasks.franka_lift import FrankaLiftEnv
from simulo_envs.workers.sharded import SEGMENT_PREFIX, ShardedEnv, WorkerError
from terminal_signals import default_sigint


class FaultyLift(FrankaLiftEnv):
    """FrankaLift-v1 that misbehaves on demand (``raise``: only the shard holding env 1 of 2)."""

    fault = None

    def step(self, action):
        second = torch.equal(self.scene.env_origins[0], grid_transforms(2, self.sim_config.env_spacing)[0][1])
        if self.fault == "raise" and second:
            raise RuntimeError("boom in the task")
        if self.fault == "hang":
            time.sleep(60)
        return super().step(action)

    def crash(self):
        faulthandler._sigsegv()


def _segments() -> list[str]:
    return [name for name in os.listdir("/dev/shm") if name.startswith(f"{SEGMENT_PREFIX}{os.getpid()}_")]


def _alive(pid: int) -> bool:
    try:
        with open(f"/proc/{pid}/stat") as f:
            return f.read().split()[2] != "Z"
    except FileNotFoundError:
        return False


def _assert_all_gone(env: ShardedEnv, pids: list[int]) -> None:
    assert env.closed
    assert not any(_alive(pid) for pid in pids), "a worker outlived close()"
    assert _segments() == [], "a shared-memory segment outlived close()"
    with pytest.raises(RuntimeError, match="worker fault|closed"):
        env.step(torch.zeros(2, 8))


def _faulty(**kwargs) -> tuple[ShardedEnv, list[int]]:
    env = ShardedEnv(FaultyLift, 2, 2, **kwargs)
    env.reset(seed=0)
    return env, [p.pid for p in env._res.processes]


def test_a_worker_that_raises_names_its_shard_and_traceback():
    env, pids = _faulty()
    env.step(torch.zeros(2, 8))
    env.set_attr("fault", "raise")
    with pytest.raises(WorkerError) as caught:
        env.step(torch.zeros(2, 8))
    error = caught.value
    assert error.shard == 1 and error.env_ids == range(1, 2) and error.pid == pids[1]
    assert "shard 1 (envs 1..1" in str(error) and "boom in the task" in str(error)
    assert "Traceback" in error.worker_traceback and "in step" in error.worker_traceback
    _assert_all_gone(env, pids)


def test_a_killed_worker_is_reported_at_once_and_the_others_end():
    env, pids = _faulty()
    os.kill(pids[0], signal.SIGKILL)
    start = time.monotonic()
    with pytest.raises(WorkerError, match=r"shard 0 \(envs 0..0, pid \d+\) died from signal SIGKILL during step"):
        env.step(torch.zeros(2, 8))
    assert time.monotonic() - start < 10
    _assert_all_gone(env, pids)


def test_a_crashing_worker_reports_its_python_traceback():
    env, pids = _faulty()
    with pytest.raises(WorkerError, match="died from signal SIGSEGV") as caught:
        env.call("crash")
    assert "Fatal Python error" in caught.value.worker_traceback
    assert "crash" in caught.value.worker_traceback  # the frame that crashed
    _assert_all_gone(env, pids)


def test_a_hanging_worker_times_out_and_close_ends_it():
    env, pids = _faulty(timeout=2.0)
    env.set_attr("fault", "hang")
    start = time.monotonic()
    with pytest.raises(WorkerError, match="did not answer within 2 s during step"):
        env.step(torch.zeros(2, 8))
    assert time.monotonic() - start < 15  # 2 s to notice, then close: polite 5 s, SIGTERM
    _assert_all_gone(env, pids)


def _start_script(tmp_path):
    """A child python process stepping a 2-worker ShardedEnv forever (no close); returns it with
    its worker pids and segment names."""
    script = tmp_path / "run.py"
    script.write_text(textwrap.dedent("""
        import torch
        import simulo_envs
        from simulo_envs.tasks.franka_lift import FrankaLiftEnv
        from simulo_envs.workers.sharded import ShardedEnv

        if __name__ == "__main__":
            env = ShardedEnv(FrankaLiftEnv, 2, 2)
            print(*[p.pid for p in env._res.processes], flush=True)
            print(*[s.name for s in env._res.segments], flush=True)
            while True:  # no close(): the interrupt ends the program
                env.step(torch.zeros(2, 8))
    """))
    proc = subprocess.Popen([sys.executable, str(script)], stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                            text=True, start_new_session=True, preexec_fn=default_sigint)
    pids = [int(p) for p in proc.stdout.readline().split()]
    segments = proc.stdout.readline().split()
    if len(pids) != 2 or not segments:
        proc.kill()
        raise AssertionError(proc.stderr.read())
    time.sleep(0.5)
    return proc, pids, segments


def _gone(parent: int, pids: list[int], segments: list[str], within: float) -> bool:
    """No worker alive and no segment of ``parent`` left (those printed and any added later)."""
    deadline = time.monotonic() + within
    while time.monotonic() < deadline:
        left = [n for n in os.listdir("/dev/shm") if n.startswith(f"{SEGMENT_PREFIX}{parent}_")]
        if not any(_alive(pid) for pid in pids) and not left and not any(os.path.exists(f"/dev/shm/{n}") for n in segments):
            return True
        time.sleep(0.2)
    return False


def test_ctrl_c_in_the_parent_leaves_no_worker_and_no_segment(tmp_path):
    proc, pids, segments = _start_script(tmp_path)
    try:
        os.killpg(proc.pid, signal.SIGINT)  # what a terminal's Ctrl-C does: the whole group
        proc.wait(timeout=60)
    finally:
        if proc.poll() is None:
            proc.kill()
    assert proc.returncode != 0 and "KeyboardInterrupt" in proc.stderr.read()
    assert _gone(proc.pid, pids, segments, within=1.0)


def test_a_killed_parent_leaves_no_worker_and_no_segment(tmp_path):
    """SIGKILL runs no Python cleanup: the workers see their pipe close and exit, and
    multiprocessing's resource tracker unlinks the segments."""
    proc, pids, segments = _start_script(tmp_path)
    proc.kill()
    proc.wait(timeout=10)
    assert _gone(proc.pid, pids, segments, within=30.0)


def test_a_script_without_a_main_guard_gets_told_to_add_one(tmp_path):
    # The spawn start method re-imports the main module in each worker: making the env at import
    # time starts workers from inside a worker, which Python refuses before our code runs there.
    script = tmp_path / "no_guard.py"
    script.write_text(textwrap.dedent("""
        import gymnasium as gym
        import simulo_envs
        from simulo_envs.workers.sharded import WorkerError
        try:
            gym.make_vec("FrankaLift-v1", num_envs=2, vectorization_mode="vector_entry_point", num_workers=2)
        except WorkerError as error:
            print("CAUGHT", error.shard, error)
    """))
    run = subprocess.run([sys.executable, str(script)], capture_output=True, text=True, timeout=300)
    assert run.returncode == 0, run.stderr[-3000:]
    assert "CAUGHT 0 worker of shard 0 (envs 0..0" in run.stdout and "during start-up" in run.stdout
    assert 'if __name__ == "__main__":' in run.stdout
