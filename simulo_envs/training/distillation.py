"""Teacher-student distillation: an image policy learns from a state PPO teacher (DAgger-style).

What runs is rsl-rl-lib 5.5.1's own distillation, driven by ``SimuloRunner`` (its
``OnPolicyRunner`` loop, our log and checkpoints) with two small subclasses:

- ``DAggerDistillation`` (rsl_rl's ``Distillation``): the student acts in its own rollouts (its
  Gaussian sampled around its mean), the teacher labels every visited state with its action, and
  the student regresses the labels (MSE). The library's algorithm is kept as it is (storage,
  student/teacher construction, save/load, gradient averaging over ranks); added are (1) the
  teacher's weights read from a ``scripts/train.py`` checkpoint (``teacher_checkpoint``), (2)
  DAgger's mixing (Ross et al., 2011, "A Reduction of Imitation Learning and Structured Prediction
  to No-Regret Online Learning", the beta_i policy): in iteration ``i`` each env step executes the
  teacher's action with probability ``beta_i = teacher_start * (1 - i / teacher_iterations)``
  (clipped at 0), else the student's, and (3) DAgger's data aggregation: ``aggregate_iterations``
  > 0 keeps the student observations and labels of that many last iterations and fits random
  minibatches of all of them (the library clears its storage after each update, which on a CPU,
  where every image costs a render, throws away most of what was paid for). ``aggregate_iterations=0``
  runs the library's own update.
- ``ImageCNNModel`` (rsl_rl's ``CNNModel``): reads the uint8 images of ``RslRlVecEnv``'s camera
  groups (stored as uint8 in the rollout storage: a quarter of float32's memory), scales them to
  [0, 1], and during gradient steps shifts each image by up to ``shift`` pixels (replicate padding
  then a random crop: DrQ's augmentation, Kostrikov et al., 2020).

The student reads what a real arm's policy could: each sensor camera's RGB image and
``"proprio"`` (the agent's qpos and qvel and the task's ``image_obs_extra``, the TCP pose), never
the object state. It trains in ``obs_mode="rgb+state"`` (the teacher reads the flat state,
``"policy"``, the group it was trained on) and is evaluated in ``obs_mode="rgb"``, where the state
does not exist (``student_env_kwargs``).

``distillation_config`` builds the training config (``simulo_envs.training.rsl_rl_train``'s layout)
from a teacher checkpoint; ``plan_distillation`` sizes it as ``plan_training`` does a PPO run.
"""

from __future__ import annotations

import copy
import math
from typing import Optional, Sequence

import torch
import torch.nn.functional as F
from rsl_rl.algorithms import Distillation
from rsl_rl.models import CNNModel
from tensordict import TensorDict

__all__ = ["DAggerDistillation", "ImageCNNModel", "distillation_config", "plan_distillation", "is_distillation",
           "student_env_kwargs", "STUDENT_OBS_MODE", "TRAIN_OBS_MODE", "MIN_IMAGE_SIDE"]

TRAIN_OBS_MODE = "rgb+state"
"""Training: images and proprioception for the student, the flat state for the teacher."""
STUDENT_OBS_MODE = "rgb"
"""Evaluation: what the student reads, and nothing else."""
MIN_IMAGE_SIDE = 16
"""The smallest camera width and height [px] the student's CNN takes (three stride-2 layers)."""


class ImageCNNModel(CNNModel):
    """rsl_rl ``CNNModel`` over uint8 camera groups (module docstring).

    Args:
        shift: the random shift [px] of each image during gradient steps (0: none); never while
            acting (under ``torch.inference_mode``) or in ``eval()``.
        *args, **kwargs: ``rsl_rl.models.CNNModel``'s.
    """

    def __init__(self, *args, shift: int = 0, **kwargs):
        if isinstance(shift, bool) or not isinstance(shift, int) or shift < 0:
            raise ValueError(f"shift must be an int >= 0 [px], got {shift!r}")
        super().__init__(*args, **kwargs)
        self.shift = shift

    def get_latent(self, obs: TensorDict, masks=None, hidden_state=None) -> torch.Tensor:
        """The MLP's input (B, F): each camera's CNN features (random-shift augmented in training) and the
        normalised proprioception."""
        augment = self.shift > 0 and self.training and not torch.is_inference_mode_enabled()
        images = {}
        for group in self.obs_groups_2d:
            image = obs[group]
            image = image.float() / 255.0 if image.dtype == torch.uint8 else image
            images[group] = _random_shift(image, self.shift) if augment else image
        # The library's get_latent only looks groups up by name: a plain dict with the float images does.
        return super().get_latent({**{group: obs[group] for group in self.obs_groups}, **images})


def _random_shift(image: torch.Tensor, pad: int) -> torch.Tensor:
    """Each (3, H, W) image of ``image`` (N, 3, H, W) moved by a random whole-pixel offset in
    [-pad, pad] along each axis, edges replicated."""
    n, _, height, width = image.shape
    padded = F.pad(image, (pad, pad, pad, pad), mode="replicate")
    dx = torch.randint(0, 2 * pad + 1, (n,), device=image.device)
    dy = torch.randint(0, 2 * pad + 1, (n,), device=image.device)
    rows = (torch.arange(height, device=image.device)[None, :] + dy[:, None])     # (N, H)
    cols = (torch.arange(width, device=image.device)[None, :] + dx[:, None])      # (N, W)
    index = torch.arange(n, device=image.device)[:, None, None]
    return padded.permute(0, 2, 3, 1)[index, rows[:, :, None], cols[:, None, :]].permute(0, 3, 1, 2)


class DAggerDistillation(Distillation):
    """rsl_rl ``Distillation`` with DAgger's mixing and aggregation (module docstring).

    Args:
        teacher_checkpoint: a ``scripts/train.py`` checkpoint whose actor becomes the teacher (None:
            the caller loads the teacher, as the library expects).
        teacher_start: beta_0, the probability that an env step executes the teacher's action in
            the first iteration, in [0, 1].
        teacher_iterations: iterations over which beta falls linearly to 0 (0: beta is 0 throughout).
        aggregate_iterations: iterations of student observations and labels kept for training
            (0: the library's update, on the last rollout only).
        mini_batch_size: samples per gradient step with aggregation.
        label_clip: the teacher's actions are clipped to [-label_clip, label_clip] before they are
            labels or executed (the env clips its actions there: a PPO mean past the bound acts
            as the bound, and regressing the unclipped value would spend the student's capacity
            on a difference without effect); None: unclipped.
        *args, **kwargs: ``rsl_rl.algorithms.Distillation``'s (``num_learning_epochs``: with
            aggregation, the gradient steps per iteration are ``num_learning_epochs * new samples /
            mini_batch_size``, drawn uniformly from everything kept).

    Raises:
        ValueError: an argument out of its range; the teacher checkpoint holds no actor.
    """

    def __init__(self, *args, teacher_checkpoint: Optional[str] = None, teacher_start: float = 0.0,
                 teacher_iterations: int = 0, aggregate_iterations: int = 0, mini_batch_size: int = 256,
                 label_clip: Optional[float] = None, **kwargs):
        if not 0.0 <= teacher_start <= 1.0:
            raise ValueError(f"teacher_start must be in [0, 1], got {teacher_start!r}")
        for name, value, low in (("teacher_iterations", teacher_iterations, 0),
                                 ("aggregate_iterations", aggregate_iterations, 0),
                                 ("mini_batch_size", mini_batch_size, 1)):
            if isinstance(value, bool) or not isinstance(value, int) or value < low:
                raise ValueError(f"{name} must be an int >= {low}, got {value!r}")
        super().__init__(*args, **kwargs)
        self.teacher_start, self.teacher_iterations = float(teacher_start), teacher_iterations
        self.aggregate_iterations, self.mini_batch_size = aggregate_iterations, mini_batch_size
        if label_clip is not None and not label_clip > 0:
            raise ValueError(f"label_clip must be > 0 or None, got {label_clip!r}")
        self.label_clip = label_clip
        self._kept: list[tuple[TensorDict, torch.Tensor]] = []
        if teacher_checkpoint is not None:
            state = torch.load(teacher_checkpoint, weights_only=False, map_location=self.device)
            weights = state.get("actor_state_dict") if isinstance(state, dict) else None
            if weights is None:
                raise ValueError(f"{teacher_checkpoint!r} holds no actor (actor_state_dict): not a PPO checkpoint")
            self._raw_teacher.load_state_dict(weights)
            self.teacher_loaded = True

    @property
    def beta(self) -> float:
        """The probability that an env step of the current iteration executes the teacher's action."""
        if self.teacher_iterations == 0:
            return 0.0
        return max(0.0, self.teacher_start * (1.0 - self.num_updates / self.teacher_iterations))

    def act(self, obs: TensorDict) -> torch.Tensor:
        """The executed actions (N, A): the student's sample, or with probability ``beta`` per env
        the teacher's action; the teacher's action is recorded as the label either way."""
        actions = super().act(obs)
        if self.label_clip is not None:
            self.transition.privileged_actions = self.transition.privileged_actions.clamp(-self.label_clip,
                                                                                           self.label_clip)
        beta = self.beta
        if beta > 0.0:
            teacher = torch.rand(actions.shape[0], 1, device=actions.device) < beta
            actions = torch.where(teacher, self.transition.privileged_actions, actions)
            self.transition.actions = actions
        return actions

    def load(self, loaded_dict: dict, load_cfg: Optional[dict], strict: bool) -> bool:
        """The library's ``load``; a resumed training (the iteration loaded too) continues beta's
        schedule from the checkpoint's iteration. The aggregated data is not in a checkpoint: a
        resumed training starts aggregating again."""
        load_iteration = super().load(loaded_dict, load_cfg, strict)
        if load_iteration and "iter" in loaded_dict:
            self.num_updates = int(loaded_dict["iter"]) + 1
        return load_iteration

    def update(self) -> dict[str, float]:
        """One iteration's fit: the library's (``aggregate_iterations=0``), or minibatches drawn
        from the kept iterations; returns ``{"behavior": mean loss}``."""
        if self.aggregate_iterations == 0:
            return super().update()
        self.num_updates += 1
        groups = self.student.obs_groups + self.student.obs_groups_2d
        new = self.storage.observations.flatten(0, 1)
        self._kept.append((new.select(*groups).clone(), self.storage.privileged_actions.flatten(0, 1).clone()))
        del self._kept[:-self.aggregate_iterations]
        observations = torch.cat([obs for obs, _ in self._kept])
        labels = torch.cat([label for _, label in self._kept])
        steps = max(1, math.ceil(self.num_learning_epochs * new.batch_size[0] / self.mini_batch_size))
        total = 0.0
        for _ in range(steps):
            index = torch.randint(0, labels.shape[0], (min(self.mini_batch_size, labels.shape[0]),),
                                  device=labels.device)
            loss = self.loss_fn(self.student(observations[index]), labels[index])
            self.optimizer.zero_grad()
            loss.backward()
            if self.is_multi_gpu:
                self.reduce_parameters()
            if self.max_grad_norm:
                torch.nn.utils.clip_grad_norm_(self.student.parameters(), self.max_grad_norm)
            self.optimizer.step()
            total += loss.item()
        self.student.update_normalization(new)
        self.storage.clear()
        return {"behavior": total / steps, "beta": self.beta}


def is_distillation(train_config: dict) -> bool:
    """True for a training config (a checkpoint's ``infos["train_config"]``) of a student."""
    return "student" in train_config.get("runner", {})


def student_env_kwargs(train_config: dict) -> dict:
    """The env keywords a student of ``train_config`` runs with outside training: the training's,
    in ``obs_mode="rgb"`` (images and proprioception only)."""
    return {**train_config.get("env_kwargs", {}), "obs_mode": STUDENT_OBS_MODE}


def distillation_config(teacher_checkpoint: str, teacher_infos: dict, image_size: Sequence[int],
                        cameras: Optional[Sequence[str]] = None, num_envs: int = 32,
                        total_timesteps: int = 60_000) -> dict:
    """The training config of an image student of a ``scripts/train.py`` teacher.

    Args:
        teacher_checkpoint: the teacher's file (read again when the training starts).
        teacher_infos: its ``infos`` (``simulo_envs.training.evaluation.read_checkpoint``).
        image_size: ``(height, width)`` [px] of every sensor camera.
        cameras: the cameras the student reads (None: every sensor camera of the task).
        num_envs, total_timesteps: the defaults ``plan_distillation`` may override.

    The env keeps the teacher's control mode and reward; episodes end at success or failure (the
    student learns reaching success; holding is the teacher's business) with the teacher's
    training time limit. Student: a CNN per camera (3 layers, 5x5/3x3/3x3, stride 2, zero
    padding, ReLU; 16-32-32 channels) into an MLP 256-256 (ELU) with the proprioception,
    normalised; the Gaussian's std (fixed, 0.1: the labels train the mean only) makes the
    rollouts explore around it. DAgger: beta from 0.5 to 0 over 30 iterations, the last 60
    iterations kept, 16 passes' worth of minibatches of 256 per iteration, Adam at 1e-3.

    Raises:
        ValueError: a teacher checkpoint that is itself a student, or a bad ``image_size``.
    """
    config = teacher_infos["train_config"]
    if is_distillation(config):
        raise ValueError(f"{teacher_checkpoint!r} is a distilled student, not a state teacher")
    height, width = (int(v) for v in image_size)
    if height < MIN_IMAGE_SIDE or width < MIN_IMAGE_SIDE:
        raise ValueError(f"image_size (height, width) must be at least {MIN_IMAGE_SIDE} px each, got ({height}, {width})")
    teacher = copy.deepcopy(config["runner"]["actor"])
    env_kwargs = {**config.get("env_kwargs", {}), "obs_mode": TRAIN_OBS_MODE,
                  "sensor_configs": {"width": width, "height": height}}
    out = {
        "num_envs": num_envs,
        "total_timesteps": total_timesteps,
        "env_kwargs": env_kwargs,
        "vector_kwargs": {**config.get("vector_kwargs", {}), "ignore_terminations": False},
        "teacher": {"checkpoint": teacher_checkpoint, "env_id": teacher_infos["env_id"]},
        "cameras": None if cameras is None else list(cameras),
        "runner": {
            "num_steps_per_env": 25,
            "save_interval": 20,
            "obs_groups": {"student": [*(cameras or ()), "proprio"], "teacher": config["runner"]["obs_groups"]["actor"]},
            "student": {
                "class_name": "simulo_envs.training.distillation:ImageCNNModel",
                "hidden_dims": [256, 256],
                "activation": "elu",
                "obs_normalization": True,
                "shift": max(1, round(height / 16)),
                "cnn_cfg": {"output_channels": [16, 32, 32], "kernel_size": [5, 3, 3], "stride": [2, 2, 2], "padding": "zeros",
                            "activation": "relu", "flatten": True},
                "distribution_cfg": {"class_name": "GaussianDistribution", "init_std": 0.1, "std_type": "scalar",
                                 "learn_std": False},
            },
            "teacher": teacher,
            "algorithm": {
                "class_name": "simulo_envs.training.distillation:DAggerDistillation",
                "teacher_checkpoint": teacher_checkpoint,
                "teacher_start": 0.5,
                "teacher_iterations": 30,
                "aggregate_iterations": 60,
                "mini_batch_size": 256,
                "num_learning_epochs": 16,
                "label_clip": 1.0,
                "learning_rate": 1e-3,
                "max_grad_norm": 1.0,
                "loss_type": "mse",
                "gradient_length": 1,
            },
        },
    }
    if config.get("train_max_episode_steps") is not None:
        out["train_max_episode_steps"] = config["train_max_episode_steps"]
    return out


def read_teacher(teacher_checkpoint: str) -> dict:
    """The ``infos`` of a ``scripts/train.py`` PPO checkpoint, checked to hold an actor.

    Raises:
        FileNotFoundError: no such file. ValueError: not a PPO checkpoint of ``scripts/train.py``
            (no env id, training config or actor), or a distilled student.
    """
    import os

    if not os.path.isfile(teacher_checkpoint):
        raise FileNotFoundError(f"no teacher checkpoint {teacher_checkpoint!r}")
    try:
        raw = torch.load(teacher_checkpoint, weights_only=False, map_location="cpu")
    except Exception as error:  # torch raises many kinds for a file that is not a checkpoint
        raise ValueError(f"{teacher_checkpoint!r} is not a torch checkpoint: {error}") from None
    infos = raw.get("infos") if isinstance(raw, dict) else None
    if not isinstance(infos, dict) or "env_id" not in infos or "train_config" not in infos:
        raise ValueError(f"{teacher_checkpoint!r} was not written by scripts/train.py (no env id and training config)")
    if is_distillation(infos["train_config"]) or "actor_state_dict" not in raw:
        raise ValueError(f"{teacher_checkpoint!r} is not a state PPO teacher (no actor_state_dict)")
    return infos


def task_cameras(env_cls, env_kwargs: dict) -> list[str]:
    """The sensor cameras with RGB of ``env_cls`` built with ``env_kwargs`` (one env, one frame)."""
    env = env_cls(num_envs=1, **{**env_kwargs, "obs_mode": STUDENT_OBS_MODE})
    try:
        obs, _ = env.reset(seed=0)
        return [name for name, textures in obs["sensor_data"].items() if "rgb" in textures]
    finally:
        env.close()


def plan_distillation(teacher_checkpoint: str, image_size: Sequence[int] = (64, 64),
                      cameras: Optional[Sequence[str]] = None, num_envs: Optional[int] = None,
                      total_timesteps: Optional[int] = None, world_size: int = 1,
                      env_kwargs: Optional[dict] = None, vector_kwargs: Optional[dict] = None):
    """A ``TrainPlan`` (``simulo_envs.training.rsl_rl_train``) distilling ``teacher_checkpoint``
    into an image student of its task; builds one env to list the task's cameras.

    Raises:
        FileNotFoundError / ValueError: as ``read_teacher`` and ``distillation_config``; an unknown
            camera; sizes as ``plan_training``. KeyError: the teacher's task is unknown here.
    """
    from simulo_envs.training.rsl_rl_train import TrainPlan
    from simulo_envs.training.task_lookup import import_task_modules, resolve_task

    infos = read_teacher(teacher_checkpoint)
    if infos.get("task_module"):
        try:
            resolve_task(infos["env_id"])
        except (KeyError, LookupError):
            import_task_modules([infos["task_module"]])
    env_id, env_cls = resolve_task(infos["env_id"])
    config = distillation_config(teacher_checkpoint, infos, image_size)
    config["env_kwargs"].update(env_kwargs or {})
    config["vector_kwargs"].update(vector_kwargs or {})
    available = task_cameras(env_cls, config["env_kwargs"])
    chosen = available if cameras is None else list(cameras)
    unknown = [name for name in chosen if name not in available]
    if unknown or not chosen:
        raise ValueError(f"{env_id} has no camera {', '.join(map(repr, unknown)) or '(none chosen)'}; "
                         f"its cameras: {', '.join(available)}")
    config["cameras"] = chosen
    config["runner"]["obs_groups"]["student"] = [*chosen, "proprio"]
    num_envs = config["num_envs"] if num_envs is None else num_envs
    total = config["total_timesteps"] if total_timesteps is None else total_timesteps
    for name, value in (("num_envs", num_envs), ("total_timesteps", total)):
        if isinstance(value, bool) or not isinstance(value, int) or value < 1:
            raise ValueError(f"{name} must be an int >= 1, got {value!r}")
    if num_envs % world_size:
        raise ValueError(f"num_envs {num_envs} does not split evenly over {world_size} ranks")
    steps = config["runner"]["num_steps_per_env"]
    iterations = total // (num_envs * steps)
    if iterations < 1:
        raise ValueError(f"total_timesteps {total:,} is less than one iteration ({num_envs} envs x {steps} steps)")
    config["num_envs"], config["total_timesteps"] = num_envs, iterations * num_envs * steps
    return TrainPlan(env_id, env_cls, config, num_envs, world_size, steps, iterations, total)
