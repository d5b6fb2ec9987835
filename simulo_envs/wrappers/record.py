"""``RecordEpisode``: evaluation videos (mp4) and trajectories (HDF5) of a batched env.

Video: every frame is ``env.render()`` (make the env with ``render_mode="rgb_array"``), the N
envs tiled in a grid (``ceil(sqrt(N))`` columns, row-major, env 0 top left), written as H.264
mp4 by imageio-ffmpeg's bundled ffmpeg at the env's control frequency. A video holds one
episode: the frame after ``reset`` then one frame per step (``steps + 1`` frames); with
``save_on_reset`` each full reset closes the current file and starts a new one; without it a
file goes on across full resets, and a full reset with no step since the previous one replaces
that reset's frame (an episode never stepped, such as a vector env's own reset before a seeded
one, leaves no frame). Partial resets
(``options["env_idx"]``) do not split videos. ``max_steps_per_video`` closes a file after that
many steps and goes on in a new one (``<episode>_part<k>.mp4``, starting mid-episode, so only
the first part has the reset frame); ``video_trigger(episode_index) -> bool`` picks which
episodes are filmed. Files are named by episode index: ``<video_prefix><episode>.mp4``.
``info_on_video`` writes reward and success on each frame (single env only).

Trajectory (``save_trajectory``): ``<output_dir>/<trajectory_name>.h5``, one group per
episode ``traj_<k>`` holding ``actions`` (T, N, A), ``env_states`` (T + 1, N, D) from
``get_state()`` (world frame, layout of ``BaseEnv.get_state``), ``terminated``, ``truncated``,
``success`` (T, N), ``elapsed_steps`` (T + 1, N) and ``partial_reset`` (T, N: env ``i`` was
reset with ``options["env_idx"]`` just before action ``t``; then ``env_states[t]`` of that env
is its post-reset state, the one action ``t`` starts from). A ``step(None)`` is recorded as a
NaN action row. File attributes name the env and its kwargs. ``replay`` restores a recorded
episode step by step.
"""

from __future__ import annotations

import json
import math
import os
from typing import Callable, Iterator, Optional

import gymnasium as gym
import numpy as np
import torch

from simulo_envs.output_paths import check_output_dir


class RecordEpisode(gym.Wrapper):
    """Record videos and/or trajectories of a (batched) simulo_envs env; see the module docstring.

    Args:
        env: the env (wrapped or not); for video, made with ``render_mode="rgb_array"``.
        output_dir: folder for ``.mp4`` and ``.h5`` files (created).
        save_video / save_trajectory: what to record.
        save_on_reset: a full reset closes the current video and trajectory episode.
        max_steps_per_video: close the video after this many steps (None: no limit).
        video_trigger: ``f(episode_index) -> bool``; None films every episode.
        info_on_video: draw reward and success on frames (needs ``num_envs == 1``).
        video_fps: frames per second (default: the env's control frequency).
        trajectory_name / video_prefix: file names.

    Raises:
        ValueError: video asked for without ``render_mode="rgb_array"``, or ``info_on_video``
            with more than one env. ``simulo_envs.output_paths.OutputError`` (a ValueError):
            files cannot be written in ``output_dir`` (the message names it and why); checked
            before anything is recorded.
    """

    def __init__(self, env: gym.Env, output_dir: str, save_video: bool = True, save_trajectory: bool = False,
                 save_on_reset: bool = True, max_steps_per_video: Optional[int] = None,
                 video_trigger: Optional[Callable[[int], bool]] = None, info_on_video: bool = False,
                 video_fps: Optional[int] = None, trajectory_name: str = "trajectory", video_prefix: str = ""):
        super().__init__(env)
        base = env.unwrapped
        if save_video and base.render_mode != "rgb_array":
            raise ValueError("RecordEpisode video needs the env made with render_mode='rgb_array'")
        if info_on_video and base.num_envs != 1:
            raise ValueError("info_on_video draws per-frame text for a single env; num_envs is %d" % base.num_envs)
        self.output_dir = check_output_dir(output_dir, "RecordEpisode output_dir")
        os.makedirs(output_dir, exist_ok=True)
        self.save_video, self.save_trajectory = save_video, save_trajectory
        self.save_on_reset = save_on_reset
        self.max_steps_per_video = max_steps_per_video
        self.video_trigger = video_trigger
        self.info_on_video = info_on_video
        self.video_fps = video_fps or base.control_freq
        self.video_prefix = video_prefix
        self.trajectory_path = os.path.join(output_dir, f"{trajectory_name}.h5")
        self.episode_index = -1
        self.video_paths: list[str] = []
        self._frames: list[np.ndarray] = []
        self._video_steps = 0
        self._video_part = 0
        self._traj: Optional[dict] = None
        self._traj_count = 0
        self._h5 = None

    # ------------------------------------------------------------------ gym API
    def reset(self, *, seed=None, options=None):
        """Reset as the env does. A full reset closes the current video and trajectory episode
        (with ``save_on_reset``; without it, it replaces the frame of a reset with no step since)
        and records the first frame; a partial reset is recorded in the
        trajectory (``partial_reset``) and does not split the video."""
        partial = options is not None and options.get("env_idx") is not None
        obs, info = self.env.reset(seed=seed, options=options)
        if partial:
            if self._traj is not None:
                self._record_partial_reset(options["env_idx"])
            return obs, info
        if self.save_on_reset:
            self.flush_video()
            self.flush_trajectory()
        if self._frames and not self._video_steps:  # the previous reset's episode was never stepped
            self._frames.pop()
        self.episode_index += 1
        self._video_part = 0
        if self._filming():
            self._frames.append(self._capture(None))
            self._video_steps = 0
        if self.save_trajectory:
            n = self.env.unwrapped.num_envs
            self._traj = {"actions": [], "env_states": [self._state()], "terminated": [], "truncated": [],
                          "success": [], "elapsed_steps": [self._elapsed()], "partial_reset": [], "seed": seed}
            self._pending_reset = np.zeros(n, dtype=bool)
        return obs, info

    def step(self, action):
        """Step the env, then record a frame and/or the trajectory row of this step."""
        obs, reward, terminated, truncated, info = self.env.step(action)
        if self._filming():
            self._frames.append(self._capture((reward, info)))
            self._video_steps += 1
            if self.max_steps_per_video is not None and self._video_steps >= self.max_steps_per_video:
                self.flush_video()
        if self._traj is not None:
            n = self.env.unwrapped.num_envs
            if action is None:  # "no new targets": recorded as a NaN row, replayed as step(None)
                act = np.full((n, self.env.unwrapped.single_action_space.shape[0]), np.nan, dtype=np.float32)
            else:
                act = action if isinstance(action, torch.Tensor) else torch.as_tensor(np.asarray(action))
                act = act.detach().cpu().to(torch.float32).numpy().reshape(n, -1)
            self._traj["actions"].append(act)
            self._traj["partial_reset"].append(self._pending_reset.copy())
            self._pending_reset[:] = False
            self._traj["env_states"].append(self._state())
            self._traj["elapsed_steps"].append(self._elapsed())
            self._traj["terminated"].append(_np_bool(terminated, n))
            self._traj["truncated"].append(_np_bool(truncated, n))
            self._traj["success"].append(_np_bool(info.get("success", False), n))
        return obs, reward, terminated, truncated, info

    def close(self):
        """Write what is pending (video, trajectory episode), close the HDF5 file and the env."""
        self.flush_video()
        self.flush_trajectory()
        if self._h5 is not None:
            self._h5.close()
            self._h5 = None
        return self.env.close()

    # ------------------------------------------------------------------ files
    def discard(self) -> None:
        """Drop the frames and the trajectory episode not written yet, so that ``close`` writes
        nothing of a rollout stopped midway (an error, Ctrl-C); files already written stay."""
        self._frames = []
        self._video_steps = 0
        self._traj = None

    def flush_video(self, name: Optional[str] = None) -> Optional[str]:
        """Write the frames gathered so far as an mp4 and start a new video; returns its path
        (None when there were no frames). The file appears whole or not at all (written under a
        hidden name, then renamed)."""
        if not self._frames:
            return None
        import imageio.v2 as imageio

        if name is None:
            name = f"{self.video_prefix}{self.episode_index}"
            if self._video_part:
                name += f"_part{self._video_part}"
        self._video_part = self._video_part + 1 if self._video_steps else 0
        path = os.path.join(self.output_dir, f"{name}.mp4")
        writing = os.path.join(self.output_dir, f".{name}.writing.mp4")   # renamed once whole
        try:
            with imageio.get_writer(writing, fps=self.video_fps, codec="libx264", quality=8,
                                    macro_block_size=1) as writer:
                for frame in self._frames:
                    writer.append_data(frame)
            os.replace(writing, path)
        except BaseException:   # an error, Ctrl-C: no partial file, under either name
            if os.path.exists(writing):
                os.remove(writing)
            raise
        self.video_paths.append(path)
        self._frames = []
        self._video_steps = 0
        return path

    def flush_trajectory(self) -> None:
        """Append the current episode to the HDF5 file (nothing if no step was taken)."""
        traj, self._traj = self._traj, None
        if not traj or not traj["actions"]:
            return
        import h5py

        if self._h5 is None:
            self._h5 = h5py.File(self.trajectory_path, "w")
            base = self.env.unwrapped
            self._h5.attrs["env_id"] = base.spec.id if base.spec is not None else type(base).__name__
            self._h5.attrs["env_kwargs"] = json.dumps(
                {"num_envs": base.num_envs, "control_mode": base.control_mode, "obs_mode": base.obs_mode})
        group = self._h5.create_group(f"traj_{self._traj_count}")
        for key in ("actions", "env_states", "terminated", "truncated", "success", "elapsed_steps", "partial_reset"):
            group.create_dataset(key, data=np.stack(traj[key]))
        if traj["seed"] is not None:
            group.attrs["seed"] = json.dumps(traj["seed"])
        self._h5.flush()
        self._traj_count += 1

    # ------------------------------------------------------------------ helpers
    def _record_partial_reset(self, env_idx) -> None:
        """The reset rows start a new episode mid-file: their latest recorded state becomes the
        post-reset state (the one the next action starts from) and the next step is marked."""
        from simulo_envs.env_ids import normalize_env_ids

        ids = normalize_env_ids(env_idx, self.env.unwrapped.num_envs, "options['env_idx']")
        self._traj["env_states"][-1][ids] = self._state()[ids]
        self._traj["elapsed_steps"][-1][ids] = self._elapsed()[ids]
        self._pending_reset[ids] = True

    def _filming(self) -> bool:
        return self.save_video and (self.video_trigger is None or self.video_trigger(self.episode_index))

    def _state(self) -> np.ndarray:
        return self.env.unwrapped.get_state().cpu().numpy()

    def _elapsed(self) -> np.ndarray:
        return self.env.unwrapped.elapsed_steps.cpu().numpy()

    def _capture(self, step) -> np.ndarray:
        images = self.env.unwrapped.render_rgb_array().cpu().numpy()
        frame = tile_images(images)
        if self.info_on_video and step is not None:
            reward, info = step
            success = bool(np.asarray(_np_bool(info.get("success", False), 1))[0])
            frame = draw_text(frame, [f"reward {float(np.asarray(reward).reshape(-1)[0]):.3f}", f"success {success}"])
        return frame


def tile_images(images: np.ndarray) -> np.ndarray:
    """(N, H, W, 3) -> one (rows * H, cols * W, 3) image, ``cols = ceil(sqrt(N))``, row-major,
    unused cells black."""
    n, h, w, c = images.shape
    cols = math.ceil(math.sqrt(n))
    rows = math.ceil(n / cols)
    grid = np.zeros((rows * h, cols * w, c), dtype=images.dtype)
    for i in range(n):
        r, k = divmod(i, cols)
        grid[r * h:(r + 1) * h, k * w:(k + 1) * w] = images[i]
    return grid


def draw_text(frame: np.ndarray, lines: list[str]) -> np.ndarray:
    """``frame`` with ``lines`` written in its top-left corner (Pillow's default font)."""
    from PIL import Image, ImageDraw

    image = Image.fromarray(frame)
    draw = ImageDraw.Draw(image)
    for k, line in enumerate(lines):
        draw.text((8, 8 + 14 * k), line, fill=(255, 255, 255))
    return np.asarray(image)


def _np_bool(value, n: int) -> np.ndarray:
    if isinstance(value, torch.Tensor):
        return value.detach().cpu().numpy().astype(bool).reshape(n)
    return np.broadcast_to(np.asarray(value, dtype=bool), (n,)).copy()


def replay(path: str, env: gym.Env, episode: int = 0, mode: str = "state") -> Iterator[dict]:
    """Replay episode ``episode`` of a trajectory file on ``env`` (same task and num_envs).

    ``mode="state"`` restores the recorded state at every step (``env.set_state``), exact up to
    float32; ``mode="action"`` restores the first state, then steps the recorded actions.
    Yields ``{"t": step, "state": recorded (N, D) numpy, "replayed": env.get_state() numpy}``
    after restoring / stepping each step, ``t = 0`` being the initial state.

    Raises:
        KeyError: no such episode. ValueError: unknown ``mode``, a file recorded on another task,
            or a state width that differs.
    """
    import h5py

    if mode not in ("state", "action"):
        raise ValueError(f"replay mode must be 'state' or 'action', got {mode!r}")
    base = env.unwrapped
    with h5py.File(path, "r") as f:
        if f"traj_{episode}" not in f:
            raise KeyError(f"{path} has no episode {episode}; it has {sorted(f.keys())}")
        recorded_id = f.attrs.get("env_id")
        env_id = base.spec.id if base.spec is not None else type(base).__name__
        if recorded_id is not None and recorded_id != env_id:
            raise ValueError(f"{path} was recorded on {recorded_id}, not {env_id}")
        group = f[f"traj_{episode}"]
        states, actions = group["env_states"][:], group["actions"][:]
        resets = group["partial_reset"][:] if "partial_reset" in group else np.zeros(actions.shape[:2], dtype=bool)
    base.reset()
    base.set_state(torch.from_numpy(states[0]))
    yield {"t": 0, "state": states[0], "replayed": base.get_state().cpu().numpy()}
    for t in range(len(actions)):
        if mode == "state":
            base.set_state(torch.from_numpy(states[t + 1]))
        else:
            base.step(None if np.isnan(actions[t]).all() else torch.from_numpy(actions[t]))
            if t + 1 < len(actions) and resets[t + 1].any():
                # envs partially reset after this step start a new episode: restore their
                # recorded post-reset state (what the next action starts from)
                ids = np.flatnonzero(resets[t + 1])
                base.set_state(torch.from_numpy(states[t + 1][ids]), env_idx=ids)
        yield {"t": t + 1, "state": states[t + 1], "replayed": base.get_state().cpu().numpy()}
