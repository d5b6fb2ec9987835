"""Imitation policies in simulation: receding-horizon execution, evaluation, videos.

``ChunkRunner`` keeps, per env, the last ``obs_horizon`` policy inputs and the queue of planned
actions; an env whose queue is spent (or whose episode just began) plans again, alone or with the
others that need it (one batched ``policy.plan`` call), so envs of one batch may be at different
points of their chunks after autoresets.

``evaluate`` and ``record_policy_video`` have the signatures of the PPO ones in
``simulo_envs.training.evaluation``; ``scripts/evaluate.py`` calls them for an imitation checkpoint.
Evaluation envs are the env the demonstrations were recorded in, rebuilt from the keywords the
checkpoint carries (``spec.env_kwargs``: cameras and their poses, randomization, physics and
control frequencies), with the policy's observation kind and control mode; terminations on (an
episode ends at its first success), ``max_envs`` per batch, episode ``k`` seeded ``seed + k``.
A recorded env without a time limit (a control conversion's dataset) is refused unless
``max_episode_steps`` is given: its episodes could run forever. Seeds the demonstrations were
recorded with are refused, so a success rate is never measured on a training start state. The
denoising noise of Diffusion Policy comes from a generator seeded with ``seed``: an evaluation
repeats exactly. With ``isolate`` (``evaluate``'s default) each env also has a PhysX system of its
own, rebuilt before each batch, and plans alone with a generator seeded by its episode's seed, so
each episode is the same bit for bit whatever ``max_envs`` and ``num_workers``.
"""

from __future__ import annotations

import os
from typing import Any, Optional, Union

import torch

from simulo_envs.datasets.scene_cli import check_policy_reads_cameras, check_policy_sees_randomization
from simulo_envs.envs.provenance import file_sha256, provenance
from simulo_envs.imitation.checkpoint import load_policy_from, read_checkpoint
from simulo_envs.imitation.spec import PolicySpec, env_kwargs, policy_inputs
from simulo_envs.imitation.spec import env_kwargs as _spec_env_kwargs
from simulo_envs.progress import ProgressBar
from simulo_envs.training.interrupt import note_finished

__all__ = ["ChunkRunner", "make_eval_env", "eval_env_kwargs", "evaluate", "record_policy_video", "check_action_space"]


class ChunkRunner:
    """Receding-horizon execution of ``policy`` over ``num_envs`` envs (see the module docstring).

    ``act(state, image, fresh)``: ``state`` float32 (N, D), ``image`` uint8 (N, 3 * K, H, W) (the
    policy's K cameras, ``policy_inputs``) or None,
    ``fresh`` bool (N,) the envs whose episode begins with this observation -> float32 (N, A).

    ``seeds`` (one int per env): each env plans alone (a batch of 1) with a generator of its own
    seeded by its seed, so its actions do not depend on the other envs (a batched product rounds
    differently with the batch size); else every env that needs a plan plans in one batched call
    with ``generator``.
    """

    def __init__(self, policy, num_envs: int, generator: Optional[torch.Generator] = None,
                 seeds: Optional[list[int]] = None):
        self.policy = policy
        self.num_envs = num_envs
        self.obs_horizon = policy.config.obs_horizon
        self.action_horizon = policy.config.action_horizon
        self.generator = generator
        self.generators = None if seeds is None else [torch.Generator().manual_seed(int(s)) for s in seeds]
        self.state = self.image = self.queue = None
        self.cursor = torch.full((num_envs,), self.action_horizon, dtype=torch.long)

    def _remember(self, history: Optional[torch.Tensor], value: torch.Tensor, fresh: torch.Tensor) -> torch.Tensor:
        repeated = value.unsqueeze(1).expand(-1, self.obs_horizon, *value.shape[1:])
        if history is None:
            return repeated.clone()
        history = torch.cat([history[:, 1:], value.unsqueeze(1)], dim=1)
        history[fresh] = repeated[fresh]
        return history

    @torch.no_grad()
    def act(self, state: torch.Tensor, image: Optional[torch.Tensor], fresh: torch.Tensor) -> torch.Tensor:
        """One action (N, A) per env: the next of its planned chunk, planned anew when the chunk is spent or the
        env's episode is ``fresh`` (N,) bool (its observation history starts again)."""
        if self.state is None:
            fresh = torch.ones(self.num_envs, dtype=torch.bool)
        self.state = self._remember(self.state, state, fresh)
        if image is not None:
            self.image = self._remember(self.image, image, fresh)
        self.cursor[fresh] = self.action_horizon
        need = self.cursor >= self.action_horizon
        if need.any():
            chunk = self._plan(need, image is not None)
            if self.queue is None:
                self.queue = torch.zeros(self.num_envs, *chunk.shape[1:])
            self.queue[need] = chunk
            self.cursor[need] = 0
        action = self.queue[torch.arange(self.num_envs), self.cursor]
        self.cursor += 1
        return action

    def _plan(self, need: torch.Tensor, images: bool) -> torch.Tensor:
        if self.generators is None:
            return self.policy.plan(self.state[need], self.image[need] if images else None, self.generator)
        rows = need.nonzero().flatten().tolist()
        return torch.cat([self.policy.plan(self.state[i:i + 1], self.image[i:i + 1] if images else None,
                                           self.generators[i]) for i in rows])


def check_action_space(env, spec: PolicySpec) -> None:
    """Raise ``ValueError`` when the vector env's actions are not ``spec.action_dim`` wide."""
    shape = env.single_action_space.shape
    if tuple(shape) != (spec.action_dim,):
        raise ValueError(f"{spec.env_id} in {spec.control_mode} takes actions of shape {tuple(shape)}, the policy "
                         f"gives ({spec.action_dim},)")


def eval_env_kwargs(spec: PolicySpec, max_episode_steps: Optional[int] = None) -> dict:
    """The keywords of ``spec``'s evaluation env (``spec.env_kwargs``, module docstring).

    Raises:
        ValueError: the recorded env has no time limit and ``max_episode_steps`` is None, or
            recorded keywords that cannot be decoded.
    """
    kwargs = env_kwargs(spec)
    if max_episode_steps is not None:
        kwargs["max_episode_steps"] = int(max_episode_steps)
    limit = kwargs.get("max_episode_steps")
    if limit is not None and limit < 0:
        raise ValueError(f"the policy's demonstrations were recorded in {spec.env_id} without a time limit "
                         f"(max_episode_steps={limit}: a control conversion's episodes are longer than the task's "
                         "limit); evaluating needs one: give max_episode_steps (scripts/evaluate.py "
                         "--max-episode-steps N) that fits the demonstrations' lengths")
    return kwargs


def make_eval_env(spec: PolicySpec, num_envs: int, full_episodes: bool = False,
                  num_workers: Union[int, str] = 1, max_episode_steps: Optional[int] = None,
                  isolate: bool = False, **extra):
    """A vector env of ``spec``'s recorded env, observation kind and control mode
    (``eval_env_kwargs``; ``record_metrics`` on; terminations ignored with ``full_episodes``; one
    PhysX system per env with ``isolate``), its actions checked against the spec.

    Raises:
        KeyError: the task is not registered here. ValueError: the env's actions do not fit; see
            ``eval_env_kwargs``; the recorded keywords are refused by the env (the message says
            which).
    """
    from simulo_envs.envs.registration import REGISTERED
    from simulo_envs.vector.vector_env import make_vector_env

    if spec.env_id not in REGISTERED:
        raise KeyError(f"the checkpoint's task {spec.env_id!r} is not registered here; registered: "
                       f"{', '.join(sorted(REGISTERED))}")
    kwargs = {**eval_env_kwargs(spec, max_episode_steps), **extra}
    if isolate:
        from simulo_envs.training.evaluation import isolated_kwargs

        kwargs = isolated_kwargs(kwargs)
    try:
        env = make_vector_env(spec.env_id, num_envs=num_envs, record_metrics=True, ignore_terminations=full_episodes,
                              num_workers=num_workers, **kwargs)
    except (TypeError, ValueError) as error:
        raise ValueError(f"{spec.env_id} cannot be rebuilt with the keywords the policy's demonstrations were "
                         f"recorded with ({sorted(kwargs)}): {error}") from error
    try:
        check_action_space(env, spec)
    except ValueError:
        env.close()
        raise
    return env


def _check_seeds(raw: dict, seed: int, episodes: int) -> None:
    used = set(raw["demos"].get("seeds") or [])
    clash = sorted(s for s in used if seed <= s < seed + episodes)
    if clash:
        raise ValueError(f"evaluation seeds {seed}..{seed + episodes - 1} include {len(clash)} seed(s) the "
                         f"demonstrations were recorded with (first {clash[0]}); evaluate on unseen seeds, "
                         f"e.g. --seed {max(used) + 1}")


def _load(checkpoint: str, expected_env_id: Optional[str], env_kwargs: Optional[dict] = None):
    """``(raw checkpoint, policy, spec)``; a visual ``randomization`` or camera sizes
    (``sensor_configs``) in ``env_kwargs`` are refused for a policy that reads no image
    (``check_policy_sees_randomization``, ``check_policy_reads_cameras``)."""
    raw = read_checkpoint(checkpoint)
    reads_images = raw["spec"]["obs"] == "rgb"
    check_policy_reads_cameras({"--camera-size": (env_kwargs or {}).get("sensor_configs")}, reads_images, evaluating=True)
    check_policy_sees_randomization((env_kwargs or {}).get("randomization"), reads_images=reads_images, evaluating=True)
    policy, spec, config = load_policy_from(raw, expected_env_id)
    return raw, policy, spec


def evaluate(checkpoint: str, episodes: int, seed: int = 10_000, max_envs: int = 100, device: str = "cpu",
             progress: bool = False, full_episodes: bool = False, num_workers: Union[int, str] = 1,
             expected_env_id: Optional[str] = None, max_episode_steps: Optional[int] = None,
             isolate: bool = True, env_kwargs: Optional[dict] = None) -> dict[str, Any]:
    """Success of an imitation checkpoint over ``episodes`` episodes (one per env, batches of at
    most ``max_envs``).

    Returns ``{"env_id", "episodes", "success_rate", "success_at_end", "mean_return",
    "mean_length", "env_steps", "full_episodes", "policy", "obs", "iterations", "train_wall_s",
    "train_cpu_s", "isolate_envs", "per_episode", "provenance"}``
    (``env_steps`` is None: the policy never stepped an env in training). Success, success at end,
    ``full_episodes``, ``isolate`` and ``per_episode``: as ``simulo_envs.training.evaluation.evaluate``.
    ``env_kwargs`` override the env keywords of the policy's spec (``randomization="visual"``);
    sensor sizes other than the spec's are refused (the policy reads its own image size).

    Raises:
        FileNotFoundError / CheckpointError: as ``read_checkpoint``; CheckpointError also when
            ``expected_env_id`` is given and differs from the checkpoint's task. ValueError:
            a visual ``randomization`` for a state policy; ``episodes``/``max_envs`` < 1, a device
            other than the CPU, evaluation seeds that the demonstrations used, an env whose actions
            do not fit. KeyError: unknown task.
    """
    for name, value in (("episodes", episodes), ("max_envs", max_envs)):
        if isinstance(value, bool) or not isinstance(value, int) or value < 1:
            raise ValueError(f"{name} must be an int >= 1, got {value!r}")
    if torch.device(device).type != "cpu":
        raise ValueError(f"imitation policies are evaluated on the CPU here, got device {device!r}")
    raw, policy, spec = _load(checkpoint, expected_env_id, env_kwargs)
    _check_seeds(raw, seed, episodes)
    results: list[tuple] = []
    extra = dict(env_kwargs or {})
    sizes = extra.pop("sensor_configs", None)
    for camera in (spec.cameras if sizes and spec.obs == "rgb" else ()):
        size = sizes.get(camera, sizes)
        if (size.get("height"), size.get("width")) != tuple(spec.image_size):
            raise ValueError(f"the policy reads {spec.describe()}; it cannot be evaluated with camera size "
                             f"{size.get('width')} x {size.get('height')} (width x height)")
    env = make_eval_env(spec, min(max_envs, episodes), full_episodes, num_workers, max_episode_steps,
                        isolate=isolate, **extra)
    record = provenance(env, env_id=spec.env_id, env_kwargs={**_spec_env_kwargs(spec), **extra},
                        seeds=range(seed, seed + episodes),
                        checkpoint=os.path.abspath(checkpoint), checkpoint_sha256=file_sha256(checkpoint),
                        max_envs=max_envs, num_workers=num_workers, full_episodes=bool(full_episodes))
    tally: list[bool] = []   # success of each finished episode, in the order they end
    bar = None
    try:
        bar = ProgressBar(total=episodes, unit="episode", desc=f"evaluating {spec.env_id}",
                          disable=not progress)
        while len(results) < episodes:
            batch = min(env.num_envs, episodes - len(results))
            results.extend(_run_episodes(env, policy, spec, seed + len(results), batch, bar, isolate,
                                         rebuild=isolate and bool(results), tally=tally))
    except KeyboardInterrupt as stop:   # Ctrl-C, or a script's StopSignal: what was done so far
        note_finished(stop, tally)
        raise
    finally:
        if bar is not None:
            bar.close()
        env.close()
    n = len(results)
    columns = list(zip(*results))
    return {"env_id": spec.env_id, "episodes": n, "success_rate": sum(columns[0]) / n,
            "success_at_end": sum(columns[1]) / n, "mean_return": sum(columns[2]) / n,
            "mean_length": sum(columns[3]) / n, "env_steps": None, "full_episodes": bool(full_episodes),
            "policy": raw["config"]["policy"], "obs": spec.obs, "iterations": int(raw["iteration"]),
            "train_wall_s": float(raw["wall_s"]), "train_cpu_s": float(raw.get("cpu_s", 0.0)),
            "isolate_envs": bool(isolate), "per_episode": [[seed + k, *row] for k, row in enumerate(results)],
            "provenance": record}


def _run_episodes(env, policy, spec: PolicySpec, seed: int, count: int, bar, per_env: bool = False,
                  rebuild: bool = False, tally: Optional[list] = None) -> list[tuple]:
    """Reset every env (env ``i`` seeded ``seed + i``; the scene rebuilt with ``rebuild``) and step
    until envs ``0 .. count-1`` have each finished one episode; their ``(success_once,
    success_at_end, return, length)`` in env order. ``per_env``: each env plans alone, its noise
    seeded by its episode's seed (``ChunkRunner``). ``tally`` gets the success of each episode as it ends."""
    obs, _ = env.reset(seed=seed, options={"reconfigure": True} if rebuild else None)
    seeds = [seed + i for i in range(env.num_envs)] if per_env else None
    runner = ChunkRunner(policy, env.num_envs, torch.Generator().manual_seed(seed), seeds=seeds)
    finished = torch.zeros(env.num_envs, dtype=torch.bool)
    fresh = torch.ones(env.num_envs, dtype=torch.bool)
    wanted = torch.arange(env.num_envs) < count
    rows: dict[int, tuple] = {}
    while not bool(finished[wanted].all()):
        state, image = policy_inputs(obs, spec)
        obs, _, terminated, truncated, info = env.step(runner.act(state, image, fresh))
        fresh = (terminated | truncated).cpu()
        if "_final_info" in info:
            done = info["_final_info"].cpu()
            episode = info["final_info"]["episode"]
            for i in (done & ~finished & wanted).nonzero().flatten().tolist():
                rows[i] = (bool(episode["success_once"][i]), bool(episode["success_at_end"][i]),
                           float(episode["return"][i]), int(episode["length"][i]))
                if tally is not None:
                    tally.append(rows[i][0])
                bar.update(1)
            finished |= done
    return [rows[i] for i in range(count)]


def record_policy_video(checkpoint: str, video_dir: str, num_envs: int = 4, seed: int = 10_000,
                        device: str = "cpu", size: int = 256, full_episodes: bool = False,
                        expected_env_id: Optional[str] = None, max_episode_steps: Optional[int] = None,
                        env_kwargs: Optional[dict] = None) -> str:
    """Film the policy of ``checkpoint`` for one episode per env (``num_envs`` envs tiled, ``size``
    px each) and write ``<video_dir>/<env_id>.mp4``; returns the path. ``env_kwargs``: only
    ``randomization`` is taken (the policy reads its own camera size). Raises as ``evaluate``."""
    from simulo_envs.envs.registration import REGISTERED
    from simulo_envs.wrappers.record import RecordEpisode
    from simulo_envs.vector.vector_env import SimuloVectorEnv

    raw, policy, spec = _load(checkpoint, expected_env_id, env_kwargs)
    _check_seeds(raw, seed, num_envs)
    if spec.env_id not in REGISTERED:
        raise KeyError(f"the checkpoint's task {spec.env_id!r} is not registered here")
    base = REGISTERED[spec.env_id](num_envs=num_envs, render_mode="rgb_array",
                                   human_render_camera_configs=dict(width=size, height=size),
                                   **{**eval_env_kwargs(spec, max_episode_steps), **_randomization_only(env_kwargs)})
    recorder = RecordEpisode(base, video_dir, save_on_reset=False)
    env = SimuloVectorEnv(recorder, ignore_terminations=full_episodes, record_metrics=True)
    try:
        check_action_space(env, spec)
        _run_episodes(env, policy, spec, seed, num_envs, _NoBar())
        return recorder.flush_video(name=spec.env_id)
    except BaseException:   # an error or Ctrl-C midway: close() writes no partial video
        recorder.discard()
        raise
    finally:
        env.close()


def _randomization_only(env_kwargs: Optional[dict]) -> dict:
    return {"randomization": env_kwargs["randomization"]} if env_kwargs and "randomization" in env_kwargs else {}


class _NoBar:
    def update(self, n: int) -> None:
        pass
