"""Demonstrations from a dataset on disk (``simulo_envs.datasets``: LeRobot v3.0 or HDF5), checked
against the env the policy is for before anything trains.

``load_demonstrations(path, obs, env_id=None, camera=None)``:

1. opens the dataset (``load_dataset``; its layout is checked there);
2. builds the spec of a policy for ``env_id`` (default: the dataset's task) in the dataset's
   control mode from one env made with the dataset's recorded env keywords (``spec_for_env``:
   the checkpoint keeps them, so evaluation rebuilds that env) and compares: the dataset's task,
   its action width and its state columns (by name) must be the env's (for an ``rgb`` policy:
   the whole state, as recorded with ``"rgb+state"``, or the state of the ``"rgb"`` observation
   alone), and an ``rgb`` policy needs a dataset recorded with its cameras (default: every
   camera the dataset holds, e.g. an SO arm's front and wrist cameras, read together); each difference is
   refused with a ``DemonstrationError`` naming it and what to do. A dataset in a real robot's
   schema (an SO arm's LeRobot dataset: ``state_source="robot"``) gives a policy of the robot's
   recorded joints (degrees, 0..100) and actions (``pd_joint_pos_lerobot``), read in the sim
   through the same map (``spec.robot_state``); a camera recorded under another name (``front``
   <- ``base_camera``) is read from the env's camera it was rendered by;
3. keeps the successful episodes (a dataset written with ``--keep-failures`` holds others too);
4. returns ``Demonstrations`` (not yet validated: ``train`` validates them, so NaNs and too few
   episodes are refused there, with every other input).
"""

from __future__ import annotations

from dataclasses import replace
from typing import Optional, Sequence, Union

import torch

from simulo_envs.imitation.demos import DemonstrationError, Demonstrations, Episode
from simulo_envs.imitation.spec import spec_for_env

__all__ = ["load_demonstrations"]


def load_demonstrations(path: str, obs: str, env_id: Optional[str] = None,
                        camera: Union[str, Sequence[str], None] = None, successful_only: bool = True) -> Demonstrations:
    """The dataset at ``path`` as ``Demonstrations`` for a policy of kind ``obs`` on ``env_id``.

    ``camera``: for ``rgb``, the dataset's camera the policy reads, or a sequence of them (their
    images stacked on the channel axis in that order: ``Episode.image`` uint8 (T, 3 * K, H, W));
    default every camera of the dataset, in its order.

    Raises:
        FileNotFoundError: nothing at ``path``. DatasetLayoutError (a ValueError): not a dataset.
        DemonstrationError: the dataset is of another task, action width or state layout than
            ``env_id`` in its control mode, or has no images of a ``camera`` for an ``rgb`` policy,
            or its cameras are of different sizes (a policy reads its cameras at one size).
        KeyError: ``env_id`` is not registered.
    """
    from simulo_envs.datasets import load_dataset

    dataset = load_dataset(path)
    env_id = env_id or dataset.env_id
    if not dataset.env_id:
        raise DemonstrationError(f"{path} does not say which env recorded it (no meta/simulo_env.json: a dataset "
                                 "written by another tool); train it with that tool, or record with collect_demos.py")
    if dataset.env_id != env_id:
        raise DemonstrationError(f"{path} holds demonstrations of {dataset.env_id}, the policy is for {env_id}")
    schema = dataset.schema
    image_size = env_cameras = None
    cameras: tuple[str, ...] = ()
    if obs == "rgb":
        cameras, image_size = _cameras(path, dataset, camera)
        env_cameras = tuple(schema.env_camera(name) for name in cameras)
    robot = schema.robot_units if schema.state_source == "robot" else None
    try:
        spec = spec_for_env(env_id, obs, dataset.control_mode, env_cameras, image_size, schema.env_kwargs, robot)
    except ValueError as error:
        raise DemonstrationError(f"{path}: {error}") from None
    if schema.action_dim != spec.action_dim:
        raise DemonstrationError(f"{path} has {schema.action_dim}-wide actions, {env_id} in "
                                 f"{dataset.control_mode} takes {spec.action_dim}")
    if spec.obs == "rgb" and spec.state_source == "env" and tuple(dataset.state_names) == spec.read_names:
        # recorded in "rgb": the dataset holds the state the policy reads, and nothing else
        spec = replace(spec, state_names=spec.read_names, state_columns=tuple(range(spec.state_dim)))
    if tuple(dataset.state_names) != spec.state_names:
        raise DemonstrationError(f"{path}'s state ({len(dataset.state_names)} columns) is not {env_id}'s "
                                 f"({len(spec.state_names)}): " + _first_difference(dataset.state_names, spec.state_names)
                                 + "; replay it into this env's schema (scripts/replay.py --schema env) or record it "
                                   "again")
    columns = list(spec.state_columns) if spec.state_columns is not None else None
    episodes = []
    for index in range(len(dataset)):
        if successful_only and not bool(dataset.successes[index]):
            continue
        data = dataset[index]
        state = data.observation_state if columns is None else data.observation_state[:, columns]
        image = (torch.cat([data.images[name].permute(0, 3, 1, 2) for name in cameras], dim=1).contiguous()
                 if obs == "rgb" else None)  # the dataset's names
        other = data.observation_state[:, list(spec.other_columns)].contiguous() if spec.other_columns else None
        episodes.append(Episode(state.contiguous(), data.action, image, int(data.seed), other))
    names = list(spec.state_names) if columns is None else [spec.state_names[c] for c in columns]
    return Demonstrations(spec, episodes, source=path, state_names=names)


def _cameras(path: str, dataset, camera) -> tuple[tuple[str, ...], tuple[int, int]]:
    """The dataset cameras an rgb policy reads (``load_demonstrations``' ``camera``) and their
    one ``(height, width)`` [px]; raises DemonstrationError as ``load_demonstrations``."""
    if not dataset.cameras:
        raise DemonstrationError(f"{path} has no images (recorded in obs mode {dataset.obs_mode!r}); an rgb "
                                 f"policy needs a dataset recorded with a camera (collect_demos.py --obs-mode rgb)")
    names = tuple(dataset.cameras) if camera is None else ((camera,) if isinstance(camera, str) else tuple(camera))
    if not names or len(set(names)) != len(names):
        raise DemonstrationError(f"the cameras to read must be distinct names, at least one; got {list(names)}")
    for name in names:
        if name not in dataset.cameras:
            raise DemonstrationError(f"{path} has no images of camera {name!r} (it has {sorted(dataset.cameras)})")
    sizes = {name: tuple(int(v) for v in dataset.cameras[name][:2]) for name in names}
    if len(set(sizes.values())) > 1:
        listed = ", ".join(f"{name} {h}x{w}" for name, (h, w) in sizes.items())
        raise DemonstrationError(f"{path}'s cameras have different sizes ({listed}); a policy reads its cameras at one "
                                 "size: choose cameras of one size (train_il.py --camera NAME, repeatable), or write "
                                 "them at one size (replay.py or collect_demos.py --camera NAME=SENSOR:WxH)")
    return names, sizes[names[0]]


def _first_difference(got, want) -> str:
    for index, (a, b) in enumerate(zip(got, want)):
        if a != b:
            return f"column {index} is {a!r} in the dataset, {b!r} in the env"
    return f"the first {min(len(got), len(want))} columns agree"
