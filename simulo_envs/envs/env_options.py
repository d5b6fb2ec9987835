"""The maniskill-baseenv seed's remaining constructor keywords, validated in one place before
anything is built: what each means here, and the clear ``ValueError`` for a value that cannot apply.

=============================  ==========================================================
keyword                        here
=============================  ==========================================================
``robot_uids``                 an agent uid of ``simulo_envs.agents.REGISTERED_AGENTS``
                               (or a tuple of them: one robot each), among the task's
                               ``SUPPORTED_ROBOTS``; None takes ``default_robot_uids``
``reconfiguration_freq``       rebuild the scene every k-th reset that resets all envs
                               (0 / None: only at creation); a rebuild re-draws the
                               variants of heterogeneous props (``"random"`` clone strategy)
``render_backend``             ``"gpu"``/``"sapien_cuda"``, ``"sapien_cuda:N"``, ``"cpu"``/
                               ``"sapien_cpu"``, ``"none"``/None (``sim/render_config.py``)
``shader_dir``                 a shader pack for every camera (``"default"``, ``"minimal"``,
                               ``"rt"``, ``"rt-fast"`` or a directory)
``enable_shadow``              directional lights cast shadows
``viewer_camera_configs``      overrides of the viewer camera (``render_mode="human"``)
``parallel_in_single_scene``   one render scene holds every env (state obs modes only)
``enhanced_determinism``       every reset draws fresh episode seeds (``envs/rng.py``)
``visual_detail``              ``"fast"`` / ``"full"`` visual meshes for every camera
                               (``sim/visual_meshes.py``)
=============================  ==========================================================
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Optional

import numpy as np

from simulo_envs.sim.render_config import RenderConfig, check_render_backend_name, parse_render_backend


@dataclass(frozen=True)
class EnvOptions:
    """The validated keywords (see the module docstring)."""

    robot_uids: object
    reconfiguration_freq: int
    render: RenderConfig
    shader_pack: Optional[str]
    viewer_camera_configs: Optional[dict]
    enhanced_determinism: bool


def _bool(name: str, value) -> bool:
    if not isinstance(value, (bool, np.bool_)):
        raise ValueError(f"{name} must be a bool, got {value!r}")
    return bool(value)


def check_robot_uids(cls: type, robot_uids):
    """``robot_uids`` (or the task's ``default_robot_uids`` when None), checked against the agent
    registry and the task's ``SUPPORTED_ROBOTS``. A 1-tuple means its one uid (the seed's rule).

    Raises:
        ValueError: an unknown uid (the message lists the registered ones and names the closest
            one) or one the task does not support.
    """
    from simulo_envs.agents import REGISTERED_AGENTS
    from simulo_envs.envs.env_keywords import did_you_mean_hint

    uids = cls.default_robot_uids if robot_uids is None else robot_uids
    if isinstance(uids, list):
        uids = tuple(uids)
    if isinstance(uids, tuple) and len(uids) == 1:
        uids = uids[0]
    if uids is None:
        return None
    for uid in uids if isinstance(uids, tuple) else (uids,):
        if isinstance(uid, type):
            continue  # an agent class given directly
        if uid not in REGISTERED_AGENTS:
            raise ValueError(f"robot_uids: unknown agent {uid!r}{did_you_mean_hint(uid, REGISTERED_AGENTS)}; "
                             f"registered agents: {sorted(REGISTERED_AGENTS)}")
    supported = cls.SUPPORTED_ROBOTS
    if supported is not None and uids not in supported:
        raise ValueError(f"robot_uids={uids!r}: {cls.__name__} supports {list(supported)}")
    return uids


def check_env_options(cls: type, *, textures, render_mode, robot_uids, reconfiguration_freq, render_backend,
                      shader_dir, enable_shadow, viewer_camera_configs, parallel_in_single_scene,
                      enhanced_determinism, visual_detail="fast") -> EnvOptions:
    """Validate the seed's extra keywords for an env of class ``cls`` with obs ``textures``.

    Raises:
        ValueError: a value that cannot apply here; the message says why and what to use.
    """
    from simulo_envs.sim.render_config import check_shader_pack

    uids = check_robot_uids(cls, robot_uids)
    freq = 0 if reconfiguration_freq is None else reconfiguration_freq
    if isinstance(freq, (bool, np.bool_)) or not isinstance(freq, (int, np.integer)) or freq < 0:
        raise ValueError(f"reconfiguration_freq must be an int >= 0 or None, got {reconfiguration_freq!r}")
    rendering = bool(textures) or render_mode is not None
    # The device is only looked at when something renders (a state-only env needs no Vulkan).
    device = parse_render_backend(render_backend) if rendering else check_render_backend_name(render_backend)
    if device == "off" and rendering:
        raise ValueError(f"render_backend={render_backend!r} disables rendering, but obs_mode/render_mode need it "
                         "(use a state obs_mode and render_mode=None, or render_backend='gpu'/'cpu')")
    single = _bool("parallel_in_single_scene", parallel_in_single_scene)
    if single and textures:
        raise ValueError("parallel_in_single_scene puts every env in one render scene, so each sensor camera would "
                         "see the other envs: use it with a state obs_mode (and render_mode for overview videos)")
    if shader_dir is not None and rendering:
        needed = set(textures) | ({"rgb"} if render_mode is not None else set())
        check_shader_pack(shader_dir, needed)
    elif shader_dir is not None and not isinstance(shader_dir, str):
        raise ValueError(f"shader_dir must be a string, got {shader_dir!r}")
    return EnvOptions(
        robot_uids=uids,
        reconfiguration_freq=int(freq),
        render=RenderConfig(shadows=_bool("enable_shadow", enable_shadow), single_scene=single,
                            visual_detail=visual_detail),
        shader_pack=shader_dir,
        viewer_camera_configs=viewer_camera_configs,
        enhanced_determinism=_bool("enhanced_determinism", enhanced_determinism),
    )
