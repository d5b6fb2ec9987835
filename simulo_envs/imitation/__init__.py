"""Imitation learning on our envs: behaviour cloning and Diffusion Policy, state or RGB, on a CPU.

    python scripts/train_il.py --dataset demos/FrankaPush-v1 --policy diffusion --obs state
    python scripts/evaluate.py --checkpoint runs/il/model_final.pt --episodes 100

Modules, in the order data flows:

- ``spec``: ``PolicySpec`` (task, observation kind, control mode, widths) and the one mapping from
  an env observation to a policy's inputs, used for demonstrations and rollouts alike.
- ``demos``: ``Demonstrations`` in memory, validated before training; ``Windows`` (observation
  histories and action chunks). ``datasets_io`` fills them from a dataset on disk.
- ``config``: ``ILConfig``, every hyperparameter with its unit.
- ``encoders``, ``denoisers``, ``policies``: the networks, ``BCPolicy`` and ``DiffusionPolicy``.
- ``trainer``: the training loop (checkpoints, TensorBoard, time cap, resume).
- ``checkpoint``: the checkpoint layout, reading and export.
- ``rollout``: receding-horizon execution, evaluation and videos (``scripts/evaluate.py``).

Results and the measured choices: ``docs/imitation.md``.
"""

from simulo_envs.imitation.checkpoint import CheckpointError, export_policy, is_imitation_checkpoint, read_checkpoint
from simulo_envs.imitation.config import ILConfig, default_config
from simulo_envs.imitation.demos import DemonstrationError, Demonstrations, Episode, Windows
from simulo_envs.imitation.spec import PolicySpec, policy_inputs

__all__ = ["PolicySpec", "policy_inputs", "Demonstrations", "Episode", "Windows", "DemonstrationError", "ILConfig",
           "default_config", "CheckpointError", "export_policy", "is_imitation_checkpoint", "read_checkpoint"]
