"""``ILConfig``: every tunable of a behaviour-cloning or Diffusion Policy training, with units.

``default_config(policy, obs)`` gives the values measured in ``docs/imitation.md``; a user's
overrides are merged by ``ILConfig.replace`` (unknown names refused). Horizons are counted in env
steps. ``ILConfig``'s own horizons (obs 2, prediction 16, execution 8) are the paper's
(Chi et al., RSS 2023, Table 11) and ManiSkill 3's baseline's; ``default_config`` gives Diffusion
Policy a prediction of 2 actions of which 1 is executed, which reached 0.90-0.99 median success on
FrankaPush-v1, FrankaLift-v1 and FrankaPickPlace-v1 state where the paper's chunks stopped at 0.73
on FrankaPush-v1 (``docs/imitation.md``).
"""

from __future__ import annotations

from dataclasses import asdict, dataclass, fields, replace
from typing import Optional

from simulo_envs.imitation.denoisers import DENOISERS
from simulo_envs.imitation.encoders import IMAGE_ENCODERS

__all__ = ["ILConfig", "default_config", "POLICIES"]

POLICIES = ("bc", "diffusion")
DIFFUSION_ONLY = ("denoiser", "down_dims", "train_timesteps", "inference_steps", "aux_bc_weight",
                  "state_aux_weight", "encoder_pretrain", "state_noise")
"""Settings only Diffusion Policy reads: a BC config that changes one from its default is refused."""


@dataclass(frozen=True)
class ILConfig:
    """Hyperparameters of one training (saved in its checkpoints); units beside each field.

    Raises:
        ValueError: a value of the wrong type or out of range (named with the value), an action
            horizon that does not fit in the prediction, or, for ``policy="bc"``, any setting of
            ``DIFFUSION_ONLY`` changed from its default (BC would ignore it).
    """

    policy: str = "diffusion"                 # "bc" or "diffusion"
    obs_horizon: int = 2                      # observations the policy reads, ending at the current one [steps]
    pred_horizon: int = 16                    # actions the policy predicts per call [steps]
    action_horizon: int = 8                   # of those, executed before planning again [steps]
    iterations: int = 12_000                  # gradient steps (the --max-minutes cap may stop sooner)
    batch_size: int = 128                     # windows per gradient step
    lr: float = 1e-3                          # AdamW learning rate, cosine-decayed to 0 after warmup
    lr_warmup: int = 500                      # linear warmup [gradient steps]
    weight_decay: float = 1e-6                # AdamW weight decay
    denoiser: str = "mlp"                     # "unet" (ConditionalUnet1D) or "mlp" (MLPDenoiser)
    down_dims: tuple[int, ...] = (64, 128, 256)  # U-Net channels per level
    hidden: int = 256                         # MLP width (MLP denoiser, BC head)
    blocks: int = 3                           # MLP residual blocks (MLP denoiser) / hidden layers (BC)
    train_timesteps: int = 100                # DDPM diffusion steps in training
    inference_steps: int = 10                 # DDIM denoising steps per action chunk at run time
    ema_power: float = 0.75                   # EMA warmup power (decay = 1 - (1 + step) ** -power, at most ema_max_decay)
    ema_max_decay: float = 0.9999
    image_encoder: str = "plain"              # "plain" (ConvEncoder) or "keypoints" (KeypointEncoder)
    image_channels: tuple[int, ...] = (32, 64, 64, 64)  # ConvEncoder channels (stride-2 3x3 convolutions)
    image_features: int = 64                  # ConvEncoder output width per image
    shift_pad: int = 4                        # random-shift augmentation [px]
    image_crop: tuple[int, ...] = ()          # (top, left, height, width) [px] of the camera image the policy
                                              # reads (a fixed region of interest); () the whole image
    aux_bc_weight: float = 0.0                # Diffusion Policy: weight of an auxiliary chunk regression (cond -> chunk)
    state_aux_weight: float = 0.0             # Diffusion Policy, rgb: weight of an auxiliary regression, while the
                                              # encoder trains, of the state the policy does not read (object poses)
    encoder_pretrain: float = 0.0             # Diffusion Policy, rgb: fraction of the budget spent first training the
                                              # image encoder by chunk regression; then it is frozen (0: off)
    state_noise: float = 0.0                  # Diffusion Policy: std of Gaussian noise added to the state the denoiser
                                              # is conditioned on in training, in units of each column's spread (0: off)
    feature_copies: int = 8                   # frozen encoder: image features computed once per frame, for this
                                              # many random shifts (the first unshifted); 0: encoded every step

    def __post_init__(self):
        for field in fields(self):   # each value of its field's type (from JSON or --set): else a clear error
            value = getattr(self, field.name)
            if field.name in ("down_dims", "image_channels", "image_crop"):   # lists become tuples of ints
                ok = isinstance(value, (list, tuple)) and all(isinstance(v, int) and not isinstance(v, bool)
                                                             for v in value)
                expected = "a list of whole numbers"
                value = tuple(value) if ok else value
            elif isinstance(field.default, bool) or isinstance(field.default, str):
                ok, expected = isinstance(value, type(field.default)), type(field.default).__name__
            elif isinstance(field.default, int):
                ok, expected = isinstance(value, int) and not isinstance(value, bool), "a whole number"
            else:   # float: an int is taken as a float
                ok, expected = isinstance(value, (int, float)) and not isinstance(value, bool), "a number"
                value = float(value) if ok else value
            if not ok:
                raise ValueError(f"{field.name} must be {expected}, got {value!r}")
            object.__setattr__(self, field.name, value)
        if self.policy not in POLICIES:
            raise ValueError(f"policy must be one of {POLICIES}, got {self.policy!r}")
        if self.image_encoder not in IMAGE_ENCODERS:
            raise ValueError(f"image_encoder must be one of {tuple(IMAGE_ENCODERS)}, got {self.image_encoder!r}")
        if self.denoiser not in DENOISERS:
            raise ValueError(f"denoiser must be one of {DENOISERS}, got {self.denoiser!r}")
        for name in ("obs_horizon", "pred_horizon", "action_horizon", "iterations", "batch_size",
                     "train_timesteps", "inference_steps", "hidden", "blocks", "image_features"):
            if getattr(self, name) < 1:
                raise ValueError(f"{name} must be >= 1, got {getattr(self, name)}")
        if self.action_horizon > self.pred_horizon - self.obs_horizon + 1:
            raise ValueError(f"action_horizon {self.action_horizon} does not fit in the prediction: at most "
                             f"pred_horizon - obs_horizon + 1 = {self.pred_horizon - self.obs_horizon + 1}")
        if self.inference_steps > self.train_timesteps:
            raise ValueError(f"inference_steps {self.inference_steps} > train_timesteps {self.train_timesteps}")
        if not (self.lr > 0 and self.shift_pad >= 0 and self.lr_warmup >= 0 and 0 < self.ema_max_decay < 1
                and self.aux_bc_weight >= 0):
            raise ValueError("lr must be > 0, shift_pad, lr_warmup and aux_bc_weight >= 0, ema_max_decay in (0, 1)")
        if self.image_crop and (len(self.image_crop) != 4 or min(self.image_crop[:2]) < 0
                                or min(self.image_crop[2:]) < 8):
            raise ValueError(f"image_crop must be (top, left, height, width) with height and width >= 8 px, "
                             f"got {self.image_crop}")
        if self.feature_copies < 0:
            raise ValueError(f"feature_copies must be >= 0, got {self.feature_copies}")
        if not 0 <= self.encoder_pretrain < 1:
            raise ValueError(f"encoder_pretrain must be in [0, 1), got {self.encoder_pretrain}")
        if self.state_aux_weight < 0 or self.state_noise < 0:
            raise ValueError(f"state_aux_weight and state_noise must be >= 0, got {self.state_aux_weight} "
                             f"and {self.state_noise}")
        if self.policy == "bc":
            changed = {name: getattr(self, name) for name in DIFFUSION_ONLY
                       if getattr(self, name) != _DEFAULTS[name]}
            if changed:
                raise ValueError(f"{', '.join(f'{k}={v!r}' for k, v in changed.items())}: Diffusion Policy settings "
                                 f"(BC uses none of {', '.join(DIFFUSION_ONLY)})")

    def to_dict(self) -> dict:
        """The hyperparameters as plain data (a checkpoint's ``config``)."""
        return asdict(self)

    @classmethod
    def from_dict(cls, data: dict) -> "ILConfig":
        """The config ``to_dict`` wrote. Raises TypeError on an unknown name."""
        return cls(**data)

    def replace(self, **overrides) -> "ILConfig":
        """A copy with ``overrides`` (None values ignored).

        Raises:
            KeyError: a name that is not a field. ValueError: as the constructor.
        """
        known = {f.name for f in fields(self)}
        unknown = sorted(set(overrides) - known)
        if unknown:
            raise KeyError(f"unknown setting(s) {unknown}; known: {sorted(known)}")
        return replace(self, **{k: v for k, v in overrides.items() if v is not None})


_DEFAULTS = {f.name: f.default for f in fields(ILConfig) if f.name in DIFFUSION_ONLY}
"""The defaults BC keeps (read by ``ILConfig.__post_init__`` at construction, after this module loaded)."""


def default_config(policy: str, obs: str, overrides: Optional[dict] = None) -> ILConfig:
    """The measured defaults for ``policy`` (``"bc"``/``"diffusion"``) on ``obs`` (``"state"``/``"rgb"``).

    BC reads one observation and predicts one action (obs, prediction and execution horizons 1);
    Diffusion Policy reads 2 observations, predicts 2 actions (the previous step's and the
    current one's) and executes 1 before planning again; on images it spends the first half of
    its budget pretraining the image encoder (``encoder_pretrain=0.5``), which took it from
    0.02-0.10 to 0.60-0.66 success on FrankaLift-v1 and FrankaPush-v1.
    """
    if policy == "bc":
        base = ILConfig(policy="bc", obs_horizon=1, pred_horizon=1, action_horizon=1, lr=1e-3)
    else:
        base = ILConfig(policy=policy, obs_horizon=2, pred_horizon=2, action_horizon=1)
    if obs == "rgb":
        base = base.replace(batch_size=64)
        if policy == "diffusion":   # the encoder pretrained by regression, then frozen (docs/imitation.md)
            base = base.replace(encoder_pretrain=0.5)
    return base.replace(**(overrides or {}))
