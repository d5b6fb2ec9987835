"""The sharded env (``num_workers``): same results as the in-process env, same wrappers, bad input
refused in the parent. Faults are in ``test_sharded_faults.py``."""

import os

import gymnasium as gym
import numpy as np
import pytest
import torch
from gymnasium.vector import AutoresetMode

import simulo_envs  # noqa: F401
from simulo_envs.agents import Panda
from simulo_envs.policies import LiftExpert, LiftExpertConfig
from simulo_envs.tasks.franka_lift import FrankaLiftEnv
from simulo_envs.vector import SimuloVectorEnv
from simulo_envs.workers.sharded import ShardedEnv, resolve_num_workers, shard_bounds

N, P, LIMIT = 5, 2, 4  # shards of 3 + 2 envs; episodes of 4 steps, so autoresets happen


def assert_tree_close(a, b, atol, where="info"):
    """Same keys, tensors equal to ``atol`` (bool/int exactly), other leaves equal."""
    if isinstance(a, dict):
        assert isinstance(b, dict) and sorted(a) == sorted(b), f"{where}: keys {sorted(a)} != {sorted(b)}"
        for key in a:
            assert_tree_close(a[key], b[key], atol, f"{where}[{key!r}]")
    elif isinstance(a, torch.Tensor):
        assert isinstance(b, torch.Tensor) and a.shape == b.shape and a.dtype == b.dtype, where
        if a.dtype.is_floating_point:
            torch.testing.assert_close(a, b, rtol=0, atol=atol, msg=where)
        else:
            assert torch.equal(a, b), where
    else:
        assert a == b, where


@pytest.fixture(scope="module")
def parent_policy():
    """This process's scheduling policy just before ``envs`` starts its workers. Not necessarily
    SCHED_OTHER, nor the policy at import: under root, SVT-AV1 (which encodes the datasets'
    videos) moves the thread that calls it to SCHED_FIFO, and an earlier test in this process
    may have encoded one."""
    return os.sched_getscheduler(0) if hasattr(os, "sched_getscheduler") else None


@pytest.fixture(scope="module")
def envs(parent_policy):
    """(sharded, in-process) FrankaLift-v1 envs of N envs, the sharded one made by gym.make_vec."""
    venv = gym.make_vec("FrankaLift-v1", num_envs=N, vectorization_mode="vector_entry_point", num_workers=P,
                        max_episode_steps=LIMIT)
    local = FrankaLiftEnv(num_envs=N, max_episode_steps=LIMIT)
    yield venv.env, local
    venv.close()
    local.close()


def _actions(steps: int, dim: int = 8) -> torch.Tensor:
    return torch.rand(steps, N, dim, generator=torch.Generator().manual_seed(0)) * 2 - 1


def test_num_workers_and_shards():
    assert shard_bounds(5, 2) == [(0, 3), (3, 5)]
    assert shard_bounds(64, 3) == [(0, 22), (22, 43), (43, 64)]
    assert resolve_num_workers(1, 4) == 1 and resolve_num_workers("auto", 1) == 1
    for bad in (0, -1, 2.0, True, "all", None):
        with pytest.raises(ValueError, match="num_workers"):
            resolve_num_workers(bad, 4)
    with pytest.raises(ValueError, match="cannot exceed num_envs"):
        resolve_num_workers(5, 4)


def test_each_worker_gets_its_share_of_the_cores_for_drawing(monkeypatch):
    from simulo_envs.workers.worker import RENDER_THREADS, share_render_threads

    for cores, workers, threads in ((2, 2, "0"), (2, 1, "2"), (3, 2, "0"), (8, 2, "4"), (16, 3, "5"), (1, 1, "0")):
        monkeypatch.setattr(os, "sched_getaffinity", lambda pid, n=cores: set(range(n)))
        environ = {}
        share_render_threads(workers, environ)
        assert environ == {RENDER_THREADS: threads}, (cores, workers)
    environ = {RENDER_THREADS: "3"}  # the user's own setting wins
    share_render_threads(2, environ)
    assert environ == {RENDER_THREADS: "3"}


def _threads(pid: int) -> list[tuple[str, int, bool]]:
    """(name, scheduling policy, is the main thread) of every thread of process ``pid``."""
    out = []
    for tid in os.listdir(f"/proc/{pid}/task"):
        with open(f"/proc/{pid}/task/{tid}/stat") as f:
            stat = f.read()
        name = stat[stat.index("(") + 1:stat.rindex(")")]
        out.append((name, int(stat.rpartition(")")[2].split()[38]), tid == str(pid)))
    return out


def test_several_robots_are_refused_before_any_worker_starts(monkeypatch):
    import multiprocessing.process

    started = []
    monkeypatch.setattr(multiprocessing.process.BaseProcess, "start", lambda self: started.append(self))
    with pytest.raises(NotImplementedError, match=r"robot_uids=\('panda', 'panda'\).*num_workers=1"):
        ShardedEnv(FrankaLiftEnv, 2, 2, {"robot_uids": ("panda", "panda")})
    assert started == []


class EnvironmentLift(FrankaLiftEnv):
    """FrankaLift-v1 that reports its process's environment variable ``name`` and working directory."""

    def process_environment(self, name: str) -> tuple:
        return os.environ.get(name), os.getcwd()


def test_a_worker_starts_with_the_parents_environment_and_directory_of_the_moment(tmp_path, monkeypatch):
    """Workers are forked from a fork server started once per process (``workers/start_method.py``);
    each still starts with what the parent has when it starts the worker, as a spawned one."""
    import multiprocessing.forkserver

    from simulo_envs.workers.start_method import worker_context

    monkeypatch.setenv("SIMULO_PROBE_GONE", "set when the fork server started")
    if worker_context().get_start_method() == "forkserver":
        multiprocessing.forkserver.ensure_running()
    monkeypatch.delenv("SIMULO_PROBE_GONE")
    monkeypatch.setenv("SIMULO_PROBE_NEW", "set after")
    monkeypatch.chdir(tmp_path)
    env = ShardedEnv(EnvironmentLift, 1, 1, {})
    try:
        assert env.call("process_environment", "SIMULO_PROBE_NEW") == ("set after", str(tmp_path))
        assert env.call("process_environment", "SIMULO_PROBE_GONE") == (None, str(tmp_path))
    finally:
        env.close()


@pytest.mark.parametrize("mode", [AutoresetMode.SAME_STEP, AutoresetMode.NEXT_STEP])
def test_vector_env_over_workers_matches_in_process(envs, mode):
    sharded, local = envs
    assert isinstance(sharded, ShardedEnv) and sharded.bounds == [(0, 3), (3, 5)]
    a = SimuloVectorEnv(sharded, autoreset_mode=mode, record_metrics=True)
    b = SimuloVectorEnv(local, autoreset_mode=mode, record_metrics=True)
    assert a.single_observation_space == b.single_observation_space and a.action_space == b.action_space
    obs_a, info_a = a.reset(seed=7)
    obs_b, info_b = b.reset(seed=7)
    assert torch.equal(obs_a, obs_b)  # same seeds, same places: identical reset observations
    assert_tree_close(info_a, info_b, 0.0)
    actions, finals = _actions(10), 0
    for t in range(10):
        if t == 3:  # a partial reset across both shards, with per-env seeds
            obs_a, info_a = a.reset(seed=[100, 101], options={"env_idx": [1, 3]})
            obs_b, info_b = b.reset(seed=[100, 101], options={"env_idx": [1, 3]})
            assert torch.equal(obs_a[[1, 3]], obs_b[[1, 3]])
            assert_tree_close(info_a, info_b, 1e-5)
        out_a, out_b = a.step(actions[t]), b.step(actions[t])
        for x, y, name in zip(out_a[:4], out_b[:4], ("obs", "reward", "terminated", "truncated")):
            assert_tree_close(x, y, 1e-5, f"step {t} {name}")
        assert_tree_close(out_a[4], out_b[4], 1e-5, f"step {t} info")
        finals += "final_obs" in out_a[4]
    assert finals == (3 if mode is AutoresetMode.SAME_STEP else 0)  # time-outs at steps 4, 8 and 7 (envs 1, 3)


def test_state_attributes_and_counters(envs):
    sharded, local = envs
    sharded.reset(seed=1)
    local.reset(seed=1)
    assert sharded.get_attr("control_mode") == "pd_joint_delta_pos"
    assert sharded.get_attr("num_envs") == (3, 2)  # per shard: not the same everywhere
    torch.testing.assert_close(sharded.get_state(), local.get_state(), rtol=0, atol=0)
    state = local.get_state()
    state[:, 0] += 0.05  # move the cubes of envs 0 and 4 (one per shard)
    sharded.set_state(state[[4, 0]], env_idx=[4, 0])  # rows in env_idx order, each to its shard
    got = sharded.get_state()
    torch.testing.assert_close(got[[0, 4]], state[[0, 4]], rtol=0, atol=1e-6)
    torch.testing.assert_close(got[1:4], local.get_state()[1:4], rtol=0, atol=0)
    # ManiSkill-style reset_to_env_states: the rows go to their envs' shards
    obs, _ = sharded.reset(options={"env_idx": [4, 1], "reset_to_env_states": {"env_states": state[[4, 1]]}})
    torch.testing.assert_close(sharded.get_state()[[1, 4]], state[[1, 4]], rtol=0, atol=1e-6)
    venv = SimuloVectorEnv(sharded)
    venv.set_attr("note", 3)
    assert venv.get_attr("note") == 3 and sharded.get_attr("note") == 3
    assert venv.call("get_state").shape == (N, 44) and SimuloVectorEnv(local).call("get_state").shape == (N, 44)
    with pytest.raises(AttributeError, match="no_such_thing"):
        sharded.get_attr("no_such_thing")
    # The step counters are shared memory: set_elapsed_steps here reaches the workers' envs.
    sharded.set_elapsed_steps(torch.tensor([0, 1, 2, 3, 0]))
    sharded.set_elapsed_steps(np.array([LIMIT - 1, 7.0]), env_idx=[4, 1])  # counts above the limit too
    assert sharded.get_attr("elapsed_steps").tolist() == [0, 7, 2, 3, LIMIT - 1]  # as the workers' envs read them
    bad_counts = [(torch.tensor([1, 2]), ValueError), (torch.tensor([0, 0, -1, 0, 0]), ValueError),
                  (np.full(N, 0.5), ValueError), (np.full(N, np.nan), ValueError), ([True] * N, TypeError)]
    for bad, error in bad_counts:
        with pytest.raises(error, match="steps"):
            sharded.set_elapsed_steps(bad)
    assert sharded.get_attr("elapsed_steps").tolist() == [0, 7, 2, 3, LIMIT - 1]  # no worker's count changed
    _, _, _, truncated, info = sharded.step(torch.zeros(N, 8))
    assert info["elapsed_steps"].tolist() == [1, 8, 3, 4, LIMIT] and truncated.tolist() == [False, True, False, True, True]
    assert sharded.elapsed_steps.tolist() == [1, 8, 3, 4, LIMIT]


def test_the_step_counter_counts_in_an_attached_buffer():
    """BaseEnv.use_elapsed_steps_buffer, how a worker moves its step counter into shared memory:
    the counter's tensor, its numpy view and the buffer are one memory, written both ways."""
    env = FrankaLiftEnv(num_envs=2, max_episode_steps=LIMIT)
    try:
        env.reset(seed=0)
        env.step(torch.zeros(2, 8))
        buffer = np.full(2, -7, dtype=np.int32)
        read_only = buffer.copy()
        read_only.flags.writeable = False
        bad_buffers = [(buffer.tolist(), TypeError), (buffer.astype(np.int64), ValueError),
                       (np.zeros(3, np.int32), ValueError), (np.zeros(4, np.int32)[::2], ValueError),
                       (read_only, ValueError)]
        for bad, error in bad_buffers:
            with pytest.raises(error, match="elapsed_steps buffer"):
                env.use_elapsed_steps_buffer(bad)
        assert buffer.tolist() == [-7, -7] and env.elapsed_steps.tolist() == [1, 1]  # nothing changed
        env.use_elapsed_steps_buffer(buffer)
        assert buffer.tolist() == [1, 1] and env.elapsed_steps.tolist() == [1, 1]  # today's counts kept
        assert env._elapsed_np is buffer and np.shares_memory(env._elapsed_steps.numpy(), buffer)
        env.set_elapsed_steps([5, 3], env_idx=[1, 0])  # written into the buffer itself
        assert buffer.tolist() == [3, 5]
        buffer[:] = [0, LIMIT - 1]  # a write from outside (the sharded env's parent)
        _, _, _, truncated, info = env.step(torch.zeros(2, 8))
        assert info["elapsed_steps"].tolist() == [1, LIMIT] and truncated.tolist() == [False, True]
        assert buffer.tolist() == [1, LIMIT] and env.elapsed_steps.tolist() == [1, LIMIT]
        env.reset(options={"env_idx": [1]})
        assert buffer.tolist() == [1, 0] and env.get_info()["elapsed_steps"].tolist() == [1, 0]
    finally:
        env.close()


@pytest.mark.skipif(not hasattr(os, "SCHED_BATCH"), reason="Linux scheduling policy")
def test_workers_run_under_batch_scheduling(envs, parent_policy):
    # Their wake-ups must not preempt the parent while it is still handing out a step's requests.
    pids = [stats["pid"] for stats in envs[0].worker_stats()]
    assert len(pids) == P and os.getpid() not in pids
    assert [os.sched_getscheduler(pid) for pid in pids] == [os.SCHED_BATCH] * P
    assert os.sched_getscheduler(0) == parent_policy  # the parent keeps the policy it had before the workers


def test_bad_input_never_reaches_a_worker(envs, monkeypatch):
    sharded, _ = envs
    sharded.reset(seed=0)
    sent = []
    for conn in sharded._res.conns:
        monkeypatch.setattr(conn, "send_bytes", lambda message, conn=conn: sent.append(message))
    bad_calls = [
        (ValueError, lambda: sharded.step(torch.full((N, 8), float("nan")))),
        (ValueError, lambda: sharded.step(torch.zeros(N, 7))),
        (ValueError, lambda: sharded.step(np.array([["a"] * 8] * N))),
        (IndexError, lambda: sharded.reset(options={"env_idx": [5]})),
        (ValueError, lambda: sharded.reset(options={"env_idx": [1, 1]})),
        (ValueError, lambda: sharded.reset(seed=[1, 2], options={"env_idx": [0]})),
        (ValueError, lambda: sharded.reset(seed=-1)),
        (TypeError, lambda: sharded.reset(options=[0])),
        (TypeError, lambda: sharded.reset(options={"reconfigure": 1})),
        (ValueError, lambda: sharded.reset(options={"env_ids": [0]})),  # a mistyped key
        (ValueError, lambda: sharded.set_state(torch.zeros(2, 44), env_idx=[0])),
        (ValueError, lambda: sharded.set_state(torch.full((1, 44), float("inf")), env_idx=[0])),
        (ValueError, lambda: sharded.set_elapsed_steps(torch.full((N,), float("nan")))),
        (IndexError, lambda: sharded.set_elapsed_steps([1], env_idx=[5])),
    ]
    for error, call in bad_calls:
        with pytest.raises(error):
            call()
    assert sent == []
    monkeypatch.undo()
    assert sharded.step(torch.zeros(N, 8))[4]["elapsed_steps"].tolist() == [1] * N


def test_writers_refuse_non_finite_values(envs, monkeypatch):
    """ShardedEnv's probes of test_nonfinite_writes.py: NaN and inf in set_state / set_state_dict /
    set_elapsed_steps raise ValueError in the parent (nothing is sent), magnitudes beyond 1e30 in
    the workers (step counts beyond int32 in the parent); no env changes."""
    sharded, _ = envs
    sharded.reset(seed=0)
    state, state_dict = sharded.get_state(), sharded.get_state_dict()

    def bad_calls(bad):
        rows = state[[4, 2]].clone().double()
        rows[0, 3] = bad  # one row of two, for the second shard's env
        yield lambda: sharded.set_state(rows, env_idx=[4, 2])
        rows_all = state.clone().double()
        rows_all[1, 3] = bad  # one coefficient of the whole batch
        yield lambda: sharded.set_state(rows_all)
        sd = {**state_dict, "actors": {**state_dict["actors"], "Block": state_dict["actors"]["Block"].clone().double()}}
        sd["actors"]["Block"][0, 0] = bad
        yield lambda: sharded.set_state_dict(sd)
        yield lambda: sharded.set_elapsed_steps(np.array([3.0, bad]), env_idx=[4, 2])

    sent = []
    for conn in sharded._res.conns:
        monkeypatch.setattr(conn, "send_bytes", lambda message, conn=conn: sent.append(message))
    steps = sharded.elapsed_steps.clone()
    for bad in (float("nan"), float("inf"), -float("inf")):
        for call in bad_calls(bad):
            with pytest.raises(ValueError, match="NaN or inf|must be step counts"):
                call()
    assert sent == []
    monkeypatch.undo()
    for call in bad_calls(1e31):
        with pytest.raises(ValueError):
            call()
    assert torch.equal(sharded.get_state(), state)
    assert torch.equal(sharded.elapsed_steps, steps) and torch.equal(sharded.get_attr("elapsed_steps"), steps)


def test_sb3_and_rsl_rl_adapters_over_workers(envs):
    from simulo_envs.wrappers.rsl_rl import RslRlVecEnv
    from simulo_envs.wrappers.sb3 import SB3VecEnv

    sharded, local = envs
    sb3 = SB3VecEnv(SimuloVectorEnv(sharded))
    reference = SB3VecEnv(SimuloVectorEnv(local))
    sb3.seed(3)
    reference.seed(3)
    np.testing.assert_array_equal(sb3.reset(), reference.reset())
    for action in _actions(LIMIT).numpy():
        obs, reward, dones, infos = sb3.step(action)
        obs_r, reward_r, dones_r, infos_r = reference.step(action)
        np.testing.assert_allclose(obs, obs_r, atol=1e-5)
        np.testing.assert_allclose(reward, reward_r, atol=1e-5)
        np.testing.assert_array_equal(dones, dones_r)
    assert dones.all() and "terminal_observation" in infos[0] and infos[4]["TimeLimit.truncated"]
    rl = RslRlVecEnv(SimuloVectorEnv(sharded))
    # int64 counts, as rsl_rl's init_at_random_ep_len writes them; above the limit lowered to LIMIT - 1.
    rl.episode_length_buf = torch.tensor([0, 2, 0, LIMIT - 1, LIMIT + 5])
    assert sharded.get_attr("elapsed_steps").tolist() == [0, 2, 0, LIMIT - 1, LIMIT - 1]  # in the workers
    for bad in (torch.tensor([0, 0, -1, 0, 0]), torch.full((N,), float("nan")), torch.zeros(N - 1, dtype=torch.long)):
        with pytest.raises(ValueError, match="episode_length_buf"):
            rl.episode_length_buf = bad
    assert rl.episode_length_buf.tolist() == [0, 2, 0, LIMIT - 1, LIMIT - 1]  # nothing changed
    obs, reward, dones, extras = rl.step(torch.zeros(N, 8))
    assert dones.tolist() == [0, 0, 0, 1, 1] and extras["time_outs"].tolist() == [False, False, False, True, True]
    assert obs["policy"].shape == (N, 36) and extras["episode"]["length"].shape == (2,)
    assert rl.episode_length_buf.tolist() == [1, 3, 1, 0, 0]


def test_rsl_rl_runner_spreads_the_counters_of_the_workers(envs, tmp_path, monkeypatch):
    """OnPolicyRunner.learn(init_at_random_ep_len=True) over workers: rsl_rl's random counts
    reach every worker's counter. Episodes of LIMIT steps, one iteration of LIMIT steps: each env
    times out once and ends where it started."""
    pytest.importorskip("rsl_rl")
    import copy

    from rsl_rl.runners import OnPolicyRunner

    from simulo_envs.tasks.franka_reach import TRAIN_CONFIG
    from simulo_envs.wrappers.rsl_rl import RslRlVecEnv

    sharded, _ = envs
    rl = RslRlVecEnv(SimuloVectorEnv(sharded))
    written, write = [], sharded.set_elapsed_steps

    def spy(steps, env_idx=None):
        written.append(steps)
        write(steps, env_idx)

    monkeypatch.setattr(sharded, "set_elapsed_steps", spy)
    cfg = copy.deepcopy(TRAIN_CONFIG["runner"])
    cfg.update(num_steps_per_env=LIMIT, save_interval=1000)
    for model in ("actor", "critic"):
        cfg[model]["hidden_dims"] = [8]
    with torch.random.fork_rng():
        torch.manual_seed(0)
        runner = OnPolicyRunner(rl, cfg, log_dir=str(tmp_path), device="cpu")
        runner.learn(num_learning_iterations=1, init_at_random_ep_len=True)
    assert len(written) == 1
    counts = written[0].tolist()
    assert len(counts) == N and set(counts) <= set(range(LIMIT)) and len(set(counts)) > 1  # spread
    assert sharded.get_attr("elapsed_steps").tolist() == counts == sharded.elapsed_steps.tolist()


def test_isolated_envs_are_bit_identical_over_whole_expert_episodes():
    """One PhysX system per env: env k's episodes do not depend on its batch or shard."""
    kwargs = {"control_mode": "pd_ee_delta_pos", "sim_config": {"isolate_envs": True}, "max_episode_steps": 40}
    sharded = SimuloVectorEnv(ShardedEnv(FrankaLiftEnv, 4, 2, kwargs), record_metrics=True)
    local = SimuloVectorEnv(FrankaLiftEnv(num_envs=4, **kwargs), record_metrics=True)
    single = FrankaLiftEnv(num_envs=1, **kwargs)
    config = LiftExpertConfig(pos_bound=Panda.controller_configs["pd_ee_delta_pos"]["arm"].pos_bound)
    experts = [LiftExpert(e, config) for e in (sharded, local, single)]  # the sharded env's agents are elsewhere
    info_s, info_l, info_1 = sharded.reset(seed=20)[1], local.reset(seed=20)[1], single.reset(seed=23)[1]
    returns, successes = torch.zeros(2, 4), 0
    for _ in range(60):
        obs_s, r_s, term_s, _, info_s = sharded.step(experts[0].act(info_s))
        successes += int(term_s.sum())
        obs_l, r_l, _, _, info_l = local.step(experts[1].act(info_l))
        assert torch.equal(obs_s, obs_l) and torch.equal(r_s, r_l)
        obs_1, r_1, term_1, trunc_1, info_1 = single.step(experts[2].act(info_1))
        if term_1.any() or trunc_1.any():
            obs_1, reset_info = single.reset()
            info_1 = {**info_1, **{k: v for k, v in reset_info.items() if k != "reconfigure"}}
        assert torch.equal(obs_s[3], obs_1[0])  # env 3 of a sharded batch == a lone env seeded 20 + 3
        returns += torch.stack([r_s, r_l])
    assert torch.equal(returns[0], returns[1])
    assert successes >= 4  # the expert does lift the cube (episodes end on success)
    for env in (sharded, local, single):
        env.close()


@pytest.mark.e2e  # worker processes that render and record: about 50 s of CPU
def test_heterogeneous_scene_render_and_recording_over_workers(tmp_path):
    from simulo_envs.cloner import CloneCfg
    from simulo_envs.tasks.franka_lift_mixed import FrankaLiftMixedEnv
    from simulo_envs.wrappers.record import RecordEpisode

    kwargs = {"render_mode": "rgb_array", "human_render_camera_configs": {"width": 48, "height": 40},
              "clone_cfg": CloneCfg(clone_strategy="random", seed=5)}
    sharded = ShardedEnv(FrankaLiftMixedEnv, 3, 2, kwargs)
    local = FrankaLiftMixedEnv(num_envs=3, **kwargs)
    # Env k gets env k's object variant of the whole batch (the random draw is not redone per shard).
    assert torch.equal(sharded.reset(seed=2)[0], local.reset(seed=2)[0])
    assert torch.equal(sharded.get_state(), local.get_state())
    image = sharded.render()
    assert image.shape == (3, 40, 48, 3) and image.dtype == torch.uint8
    assert (image.float() - local.render().float()).abs().mean() < 1.0
    assert torch.equal(sharded.render(), image)  # second call: through shared memory, same picture
    if hasattr(os, "SCHED_BATCH"):
        # Each worker draws on its share of the cores (lavapipe's drawing threads, named
        # llvmpipe-N; none in this process means another Vulkan driver). Its main thread is
        # batch, the threads its env started (lavapipe's) are not.
        from simulo_envs.workers.worker import RENDER_THREADS, share_render_threads

        expected = {k: v for k, v in os.environ.items() if k == RENDER_THREADS}
        share_render_threads(2, expected)
        lavapipe = any(name.startswith("llvmpipe-") for name, _, _ in _threads(os.getpid()))
        for stats in sharded.worker_stats():
            threads = _threads(stats["pid"])
            assert [policy for _, policy, main in threads if main] == [os.SCHED_BATCH]
            assert any(policy == os.SCHED_OTHER for _, policy, main in threads if not main)
            assert all(policy == os.SCHED_OTHER for name, policy, _ in threads if name.startswith("llvmpipe-"))
            if lavapipe:
                assert sum(name.startswith("llvmpipe-") for name, _, _ in threads) == int(expected[RENDER_THREADS])
    recorder = RecordEpisode(sharded, str(tmp_path), save_trajectory=True)
    recorder.reset(seed=2)
    for _ in range(2):
        recorder.step(torch.zeros(3, 8))
    recorder.close()
    assert (tmp_path / "0.mp4").stat().st_size > 0
    import h5py

    with h5py.File(tmp_path / "trajectory.h5") as f:
        assert f["traj_0"]["env_states"].shape[:2] == (3, 3)
    local.close()
    assert sharded.closed
