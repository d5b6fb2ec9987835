"""``PlaceExpert``: ``StackExpert``'s script for a task that puts a held object down at a resting
place other than a cube's top (in a bowl, on a target square): the SO table-top suite's
SO101PlaceInBowl-v1 and SO101PlaceOnTarget-v1.

Phases (``pick_experts.py``): APPROACH, DESCEND, CLOSE on the object, LIFT it to ``hover``
above its resting place, OVER the resting place, PLACE (lower it to ``place_gap`` above its
resting place, then let go: a gap lets the opening jaw clear a bowl's wall), RELEASE (open for
``open_time``), RETREAT straight up.

The task's info names the object ``cube_pose`` (world, (N, 7)) and the vector from it to its
resting place ``cube_to_place`` ((N, 3), world frame); ``tcp_pose`` as every task.
"""

from __future__ import annotations

import torch

from simulo_envs.policies.pick_experts import PickExpertConfig, StackExpert


class PlaceExpert(StackExpert):
    """Batched scripted expert for the place tasks (module docstring).

    Args:
        env: the task's env made with ``control_mode="pd_ee_delta_pos"``.
        config: tunables (``PickExpertConfig``).
    """

    def __init__(self, env, config: PickExpertConfig = PickExpertConfig(grasp_offset=0.0)):
        super().__init__(env, config)

    def _act(self, info: dict) -> torch.Tensor:
        cube = info["cube_pose"]
        place = cube[:, :3] + info["cube_to_place"]
        return super()._act({**info, "a_pose": cube, "b_pose": place, "a_to_place": info["cube_to_place"]})


__all__ = ["PlaceExpert"]
