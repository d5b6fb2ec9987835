"""SAC from pixels (``scripts/train_sb3.py --algo sac --obs-mode rgb``): Stable-Baselines3's SAC
with a small convolutional actor that reads low-resolution camera images and the robot's
proprioception, and, with ``--asymmetric-critic``, critics that read the task's privileged flat
state instead. Extended through SB3's own hooks (a ``BaseFeaturesExtractor`` and a ``SACPolicy``
subclass whose ``make_critic`` picks the critic's input); the algorithm is SB3's, unchanged.

Observations (``SB3PixelVecEnv``, a ``gymnasium.spaces.Dict`` per env):

- one key per sensor camera (``"base_camera"``, ...): uint8 ``(3, H, W)`` RGB, channels first;
- ``"proprio"``: float32 ``(P,)``, the robot's qpos and qvel and the task's ``image_obs_extra``
  (the TCP pose), in flat-state order: what ``obs_mode="rgb"`` keeps of the state;
- ``"state"`` (asymmetric critic only): float32 ``(S,)``, the whole flat state of
  ``obs_mode="state"`` (object poses included). The training env then runs in
  ``obs_mode="rgb+state_dict"``; the evaluation env in ``"rgb"``, where no state exists: the actor
  reads cameras and ``"proprio"`` only, so a checkpoint evaluates from pixels alone.

Networks (``PixelEncoder``, ``PixelSACPolicy``):

- actor: each camera through its own ``ConvEncoder`` (``simulo_envs.imitation.encoders``: 3x3
  stride-2 convolutions of ``PIXEL_DEFAULTS["channels"]``, then Linear, LayerNorm, tanh to
  ``feature_dim``: DrQ's and SAC-AE's encoder head, Kostrikov et al. 2021, Yarats et al. 2021),
  concatenated with ``"proprio"``, then SB3's 256 x 256 x 256 ReLU MLP to the squashed Gaussian.
- augmentation: DrQ's random shift (pad by ``shift`` pixels, crop back at a random offset, per
  image) while the policy is in training mode, i.e. inside SB3's gradient steps only; never
  while acting or evaluating (SB3 puts the policy in eval mode there).
- critics: with the asymmetric critic, two 256 x 256 x 256 MLPs on ``"state"`` and the action
  (Pinto et al. 2018, "Asymmetric Actor Critic for Image-Based Robot Learning"), each hidden
  layer followed by a LayerNorm without learned gain (RLPD, Ball et al. 2023: it keeps the
  critic stable at higher update-to-data ratios). Without it, SB3's default: each critic has its
  own ``PixelEncoder`` over the same images and proprioception.

Settings (``PIXEL_DEFAULTS``; the reasons, measured on this project's 2-core CPU, are in
``docs/visual_policies.md``, "Pixel SAC from scratch"): 32 x 32 images (the task's cube spans 2-3
pixels in FrankaLift-v1's front camera; 16 x 16 leaves it one), two convolutions of 16 and 32
channels (a third, or 32 channels first, costs 20-60 % more per gradient step, most of which is
the encoder's), a shift of 2 pixels (DrQ's 4 at 84 pixels, scaled), minibatches of 128 (a
gradient step on 256 costs about twice as much) and the state SAC's 1/4 gradient step per env
step (8 after each step of 32
envs), a replay buffer of 300,000 transitions (uint8 images: about 2 GB at 32 x 32), the rest as
the state SAC (``OFF_POLICY_DEFAULTS``). Low resolution as the main lever for speed follows Squint
(Almuzairee et al. 2025, "Squint: Fast Visual Reinforcement Learning for Sim-to-Real Robotics").
"""

from __future__ import annotations

from typing import Optional, Sequence

import numpy as np
import torch
import torch.nn.functional as F
from gymnasium import spaces
from stable_baselines3.common.torch_layers import BaseFeaturesExtractor
from stable_baselines3.sac.policies import SACPolicy
from torch import nn

from simulo_envs.envs.observations import flatten_obs, proprio_columns
from simulo_envs.imitation.encoders import ConvEncoder, random_shift
from simulo_envs.wrappers.sb3 import SB3VecEnv

__all__ = ["PIXEL_DEFAULTS", "pixel_settings", "pixel_env_kwargs", "pixel_sac_kwargs", "PixelEncoder",
           "StateExtractor", "PixelSACPolicy", "SB3PixelVecEnv", "pixel_policy", "PROPRIO", "STATE"]

PROPRIO, STATE = "proprio", "state"
PIXEL_DEFAULTS = {
    "camera_size": (32, 32),          # [px] width, height of every sensor camera
    "shift": 2,                       # random-shift pad [px] during gradient steps
    "channels": (16, 32),             # ConvEncoder: 3x3 stride-2 convolutions
    "feature_dim": 50,                # per camera, after LayerNorm + tanh (DrQ's 50)
    "buffer_size": 300_000,           # transitions
    "batch_size": 128,                # transitions per gradient step
    "updates_per_env_step": 0.25,     # gradient steps per env step (update-to-data ratio)
}
"""The pixel SAC settings (the module docstring gives their sources)."""


def pixel_settings(camera_size: Optional[Sequence[int]] = None, asymmetric_critic: bool = False) -> dict:
    """The ``"pixels"`` entry of a training config: ``PIXEL_DEFAULTS`` with ``camera_size``
    (``(W, H)`` [px], default 32 x 32) and ``asymmetric_critic``, as plain JSON data.

    Raises:
        ValueError: ``camera_size`` not two ints in [8, 256].
    """
    size = PIXEL_DEFAULTS["camera_size"] if camera_size is None else tuple(camera_size)
    if len(size) != 2 or any(isinstance(v, bool) or not isinstance(v, (int, np.integer)) or not 8 <= v <= 256
                             for v in size):
        raise ValueError(f"camera size must be two ints W H in [8, 256] pixels, got {camera_size!r}")
    return {**PIXEL_DEFAULTS, "camera_size": [int(v) for v in size], "channels": list(PIXEL_DEFAULTS["channels"]),
            "asymmetric_critic": bool(asymmetric_critic)}


def pixel_env_kwargs(pixels: dict, evaluation: bool = False) -> dict:
    """Env keywords of a pixel run: ``obs_mode`` (``"rgb+state_dict"`` for training with the
    asymmetric critic, ``"rgb"`` otherwise and for evaluation) and every sensor camera's size."""
    width, height = pixels["camera_size"]
    mode = "rgb+state_dict" if pixels["asymmetric_critic"] and not evaluation else "rgb"
    return {"obs_mode": mode, "sensor_configs": {"width": int(width), "height": int(height)}}


def pixel_sac_kwargs(common: dict, pixels: dict, num_envs: int) -> dict:
    """SB3 ``SAC`` keyword arguments for a pixel run: the state SAC's ``common`` ones with the
    pixel buffer, minibatch, gradient steps per step of ``num_envs`` envs and ``PixelSACPolicy``
    (every camera of the env)."""
    grads = max(1, round(pixels["updates_per_env_step"] * num_envs))
    encoder = {"shift": int(pixels["shift"]), "channels": list(pixels["channels"]),
               "feature_dim": int(pixels["feature_dim"])}
    policy_kwargs = {**common["policy_kwargs"], "features_extractor_class": PixelEncoder,
                     "features_extractor_kwargs": encoder, "critic_reads_state": bool(pixels["asymmetric_critic"])}
    return {**common, "policy": PixelSACPolicy, "buffer_size": int(pixels["buffer_size"]),
            "batch_size": int(pixels["batch_size"]), "gradient_steps": grads, "policy_kwargs": policy_kwargs}


class PixelEncoder(BaseFeaturesExtractor):
    """The actor's input: camera images and proprioception -> float32 features
    ``(B, len(cameras) * feature_dim + P)``.

    Args:
        observation_space: the ``SB3PixelVecEnv`` Dict space (the cameras and ``"proprio"``; a
            ``"state"`` key is ignored).
        cameras: the image keys read, in this order (None: every uint8 key, in the space's
            order). shift: the random-shift pad [px] while in
            training mode (0: none). channels, feature_dim: each camera's ``ConvEncoder``.

    Raises:
        ValueError: a camera not in the space, or not a uint8 (3, H, W) image; a negative shift.
    """

    def __init__(self, observation_space: spaces.Dict, cameras: Optional[Sequence[str]] = None, shift: int = 2,
                 channels: Sequence[int] = (16, 32), feature_dim: int = 50):
        if cameras is None:
            cameras = [key for key, space in observation_space.spaces.items() if space.dtype == np.uint8]
        for name in cameras:
            space = observation_space.spaces.get(name)
            if space is None or space.dtype != np.uint8 or len(space.shape) != 3 or space.shape[0] != 3:
                raise ValueError(f"camera {name!r} is not a uint8 (3, H, W) image of the observation space")
        if isinstance(shift, bool) or not isinstance(shift, int) or shift < 0:
            raise ValueError(f"shift must be an int >= 0 [px], got {shift!r}")
        proprio = int(np.prod(observation_space[PROPRIO].shape))
        super().__init__(observation_space, len(cameras) * int(feature_dim) + proprio)
        self.cameras, self.shift = list(cameras), shift
        self.encoders = nn.ModuleDict({name: ConvEncoder(tuple(observation_space[name].shape[1:]), tuple(channels),
                                                         int(feature_dim)) for name in cameras})

    def forward(self, obs: dict) -> torch.Tensor:
        """``obs``: SB3-preprocessed tensors (images float in [0, 1], ``(B, 3, H, W)``)."""
        features = []
        for name in self.cameras:
            image = obs[name] - 0.5   # ConvEncoder's range [-0.5, 0.5]
            if self.training and self.shift:
                image = random_shift(image, self.shift)
            features.append(self.encoders[name](image))
        return torch.cat([*features, obs[PROPRIO].flatten(1)], dim=1)


class StateExtractor(BaseFeaturesExtractor):
    """The asymmetric critic's input: the privileged flat state ``obs["state"]`` ``(B, S)``, as is."""

    def __init__(self, observation_space: spaces.Dict):
        super().__init__(observation_space, int(np.prod(observation_space[STATE].shape)))

    def forward(self, obs: dict) -> torch.Tensor:
        """``obs["state"]`` flattened to ``(B, S)``."""
        return obs[STATE].flatten(1)


class NormedReLU(nn.Module):
    """LayerNorm without learned gain or bias over the last dim, then ReLU: the critic's hidden
    activation with the asymmetric critic (module docstring)."""

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return F.relu(F.layer_norm(x, x.shape[-1:]))


class PixelSACPolicy(SACPolicy):
    """SB3's ``SACPolicy`` whose critics (and targets), with ``critic_reads_state``, read the
    privileged state (``StateExtractor``, ``NormedReLU`` hidden layers) while the actor reads its
    features extractor's input (``PixelEncoder``). Other arguments as ``SACPolicy``'s.

    Raises:
        ValueError: ``critic_reads_state`` with an observation space without ``"state"``.
    """

    def __init__(self, observation_space, action_space, lr_schedule, *args, critic_reads_state: bool = False,
                 **kwargs):
        if critic_reads_state and STATE not in getattr(observation_space, "spaces", {}):
            raise ValueError("an asymmetric critic needs the observation key 'state' (the privileged flat state)")
        self.critic_reads_state = bool(critic_reads_state)
        super().__init__(observation_space, action_space, lr_schedule, *args, **kwargs)

    def make_critic(self, features_extractor: Optional[BaseFeaturesExtractor] = None):
        """A critic over the privileged state (``critic_reads_state``), else SACPolicy's."""
        if not self.critic_reads_state:
            return super().make_critic(features_extractor)
        from stable_baselines3.common.policies import ContinuousCritic

        state = StateExtractor(self.observation_space)
        kwargs = {**self._update_features_extractor(self.critic_kwargs, state), "activation_fn": NormedReLU}
        return ContinuousCritic(**kwargs).to(self.device)

    def _get_constructor_parameters(self) -> dict:
        return {**super()._get_constructor_parameters(), "critic_reads_state": self.critic_reads_state}


class SB3PixelVecEnv(SB3VecEnv):
    """``SB3VecEnv`` whose observations are the Dict of the module docstring (cameras,
    ``"proprio"`` and, from an env in ``"rgb+state_dict"``, ``"state"``) as numpy arrays.

    Args:
        env: a ``SimuloVectorEnv`` (or what ``SB3VecEnv`` takes) in ``obs_mode`` ``"rgb"`` or
            ``"rgb+state_dict"``.

    Raises:
        ValueError: another obs mode.
    """

    OBS_MODES = ("rgb", "rgb+state_dict")

    def __init__(self, env, ignore_terminations: bool = False):
        super().__init__(env, ignore_terminations)
        base = self.venv.base_env
        if base.obs_mode not in self.OBS_MODES:
            raise ValueError(f"pixel SAC needs obs_mode in {self.OBS_MODES}, got {base.obs_mode!r}")
        self.with_state = base.obs_mode == "rgb+state_dict"
        # (envs in worker processes: the task's class attribute, read from the class they run)
        task = base if hasattr(base, "image_obs_extra") else base.env_cls
        self.proprio_keys = tuple(task.image_obs_extra)
        space = self.venv.single_observation_space
        self.cameras = [name for name, textures in space["sensor_data"].spaces.items() if "rgb" in textures.spaces]
        self.proprio_columns = None   # from the first observation (a Dict space may order its keys otherwise)
        boxes = {name: spaces.Box(0, 255, (3, *space["sensor_data"][name]["rgb"].shape[:2]), np.uint8)
                 for name in self.cameras}
        extra = space["extra"].spaces
        boxes[PROPRIO] = _vector(spaces.flatdim(space["agent"])
                                 + sum(spaces.flatdim(extra[key]) for key in self.proprio_keys if key in extra))
        if self.with_state:
            boxes[STATE] = _vector(spaces.flatdim(space["agent"]) + spaces.flatdim(space["extra"]))
        self.observation_space = spaces.Dict(boxes)

    def observations_to_numpy(self, obs: dict) -> dict:
        """The env's observation dict -> ``{camera: uint8 (N, 3, H, W), "proprio": float32 (N, P)
        [, "state": float32 (N, S)]}``."""
        out = {name: obs["sensor_data"][name]["rgb"][..., :3].permute(0, 3, 1, 2).contiguous().cpu().numpy()
               for name in self.cameras}
        state_obs = {"agent": obs["agent"], "extra": obs["extra"]}
        if self.proprio_columns is None:
            self.proprio_columns = proprio_columns(state_obs, self.proprio_keys)
        state = _numpy(flatten_obs(state_obs))   # flattened once; proprioception is some of its columns
        out[PROPRIO] = state[:, self.proprio_columns]
        if self.with_state:
            out[STATE] = state
        return out


def _vector(size: int) -> spaces.Box:
    return spaces.Box(-np.inf, np.inf, (int(size),), np.float32)


def _numpy(values) -> np.ndarray:
    return (values.detach().cpu().numpy() if isinstance(values, torch.Tensor) else np.asarray(values)).astype(
        np.float32, copy=True)


def pixel_policy(model):
    """The deterministic actor of a pixel SAC ``model`` (``PixelSACPolicy``): the evaluation env's
    observations (a TensorDict with the camera groups, uint8 ``(N, 3, H, W)``, and ``"proprio"``)
    -> float32 actions ``(N, A)`` on the observations' device, from the actor alone (no state)."""
    policy = model.policy
    policy.set_training_mode(False)
    extractor = policy.actor.features_extractor
    keys = [*extractor.cameras, PROPRIO]

    def act(obs) -> torch.Tensor:
        device = obs[PROPRIO].device
        with torch.no_grad():
            # raw uint8 images: the actor's preprocessing scales them to [0, 1], as in training
            inputs = {key: obs[key].to(policy.device) for key in keys}
            actions = policy.actor(inputs, deterministic=True).cpu().numpy()
        actions = policy.unscale_action(actions) if policy.squash_output else actions
        return torch.as_tensor(np.asarray(actions, dtype=np.float32), device=device)

    return act
