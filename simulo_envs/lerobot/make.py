"""``make_env``: a task of ours as a LeRobot environment (``LeRobotVectorEnv``)."""

from __future__ import annotations

from typing import Optional

from simulo_envs.datasets.schema import task_instruction
from simulo_envs.lerobot.request import (CamerasArg, LeRobotRequest, check_camera_names, check_request,
                                         task_camera_configs)
from simulo_envs.lerobot.vector_env import LeRobotVectorEnv, agent_pos_width
from simulo_envs.vector.vector_env import make_vector_env

_OWN_KEYWORDS = ("num_envs", "obs_mode", "render_mode", "autoreset_mode", "robot_uids")


def make_env(task: str, n_envs: int = 1, use_async_envs: bool = False, *, robot: Optional[str] = None,
             cameras: CamerasArg = None, fps: Optional[int] = None, obs_type: str = "pixels_agent_pos",
             control_mode: Optional[str] = None, **kwargs) -> LeRobotVectorEnv:
    """Task ``task`` as a Gymnasium vector env in LeRobot's env convention
    (``simulo_envs/lerobot/vector_env.py`` lists it), ``n_envs`` envs stepped together in ONE
    batched env of this process.

    The signature is the one LeRobot calls a hub environment's ``make_env`` with
    (``lerobot/envs/utils.py: _call_make_env``: ``n_envs``, ``use_async_envs``) plus the task.

    Args:
        task: a registered task id (``"SO100Lift-v1"``).
        n_envs: number of envs (LeRobot's ``eval.batch_size``).
        use_async_envs: accepted for LeRobot's signature and ignored: a batched env needs no
            worker process per env (``num_workers=P`` shards the batch over P processes).
        robot: the robot uid (default: the task's).
        cameras: which sensor cameras fill ``obs["pixels"]`` and under which names: None (all,
            our names), a list or LeRobot's comma-separated string of our names, or a dict
            ``{lerobot_name: our_camera}`` (``{"front": "base_camera"}``) to match the camera
            keys of a dataset recorded elsewhere.
        fps: the control (and recording) rate [Hz]; None: the task's (20 Hz for our tasks).
            The physics rate must be a multiple of it.
        obs_type: ``"pixels_agent_pos"`` (images and robot state) or ``"agent_pos"`` (robot
            state only, no rendering but the render camera).
        control_mode: None: for a robot with a LeRobot follower (``agent.lerobot``: the SO
            arms), joint targets in the follower's units, degrees and gripper 0-100
            (``pd_joint_pos_lerobot``); for another robot, the task's default mode.
        **kwargs: to the task (``max_episode_steps``, ``sim_config``, ``sensor_configs``,
            ``human_render_camera_configs``, ``num_workers``, ...).

    Raises:
        ValueError: an unknown task, a robot the task does not support, an unknown camera, a
            bad ``fps``/``obs_type``/``control_mode``/``n_envs`` (``simulo_envs/lerobot/request.py``),
            all before anything is built; a keyword this function sets itself.
        TypeError: an argument of the wrong type.
    """
    del use_async_envs  # documented above: one batched env either way
    taken = sorted(set(kwargs) & set(_OWN_KEYWORDS))
    if taken:
        raise ValueError(f"make_env sets {taken} itself: use n_envs, robot and obs_type")
    request = check_request(task, n_envs=n_envs, robot=robot, cameras=cameras, fps=fps, obs_type=obs_type,
                            control_mode=control_mode, sim_config=kwargs.get("sim_config"))
    return build(request, **kwargs)


def describe(task: str, *, robot: Optional[str] = None, cameras: CamerasArg = None, fps: Optional[int] = None,
             obs_type: str = "pixels_agent_pos", control_mode: Optional[str] = None,
             **kwargs) -> dict[str, tuple[str, tuple[int, ...]]]:
    """The ``features`` of ``make_env(task, ...)`` with the same arguments, without rendering or
    stepping: key -> (kind, shape) as ``LeRobotVectorEnv.features``. The action and state widths
    come from a one-env build of the task without a renderer (a fraction of a second once the
    process has built one env), the image sizes from the task's camera configs.

    Raises:
        ValueError / TypeError: as ``make_env``.
    """
    request = check_request(task, n_envs=1, robot=robot, cameras=cameras, fps=fps, obs_type=obs_type,
                            control_mode=control_mode, sim_config=kwargs.get("sim_config"))
    configs = task_camera_configs(request.task_cls, request.robot, kwargs.get("sensor_configs"))
    if request.obs_type == "pixels_agent_pos" and configs is None:
        env = build(request, **kwargs)  # cameras known only once built
        try:
            return env.features
        finally:
            env.close()
    follower, control_mode = _control(request)
    state_kwargs = {k: v for k, v in _env_kwargs(request, control_mode, kwargs).items()
                    if k not in ("num_workers", "worker_timeout", "sensor_configs", "human_render_camera_configs")}
    venv = make_vector_env(request.task, num_envs=1, obs_mode="state_dict", render_backend="none",
                           robot_uids=request.robot, **state_kwargs)
    try:
        width = agent_pos_width(venv.single_observation_space, venv.base_env.agent, follower is not None)
        out = {"action": ("ACTION", tuple(venv.single_action_space.shape)), "agent_pos": ("STATE", (width,))}
    finally:
        venv.close()
    if request.obs_type == "pixels_agent_pos":
        pairs = request.cameras if request.cameras is not None else tuple((name, name) for name in configs)
        for name, ours in pairs:
            out[f"pixels/{name}"] = ("VISUAL", (configs[ours].height, configs[ours].width, 3))
    return out


def _control(request: LeRobotRequest):
    """(the robot's ``LeRobotJoints`` or None, the control mode to build with or None)."""
    from simulo_envs.agents import REGISTERED_AGENTS

    follower = getattr(REGISTERED_AGENTS[request.robot], "lerobot", None)
    return follower, request.control_mode or (follower.control_mode if follower is not None else None)


def _env_kwargs(request: LeRobotRequest, control_mode: Optional[str], kwargs: dict) -> dict:
    env_kwargs = dict(kwargs)
    if request.fps is not None:
        env_kwargs["sim_config"] = dict(env_kwargs.get("sim_config") or {}, control_freq=request.fps)
    if control_mode is not None:
        env_kwargs["control_mode"] = control_mode
    return env_kwargs


def build(request: LeRobotRequest, **kwargs) -> LeRobotVectorEnv:
    """The ``LeRobotVectorEnv`` of a checked request (``make_env`` without the checks).

    Raises:
        ValueError: a camera the built env does not have (only for tasks whose cameras are
            not known before building; the env is closed first).
    """
    follower, control_mode = _control(request)
    env_kwargs = _env_kwargs(request, control_mode, kwargs)
    visual = request.obs_type == "pixels_agent_pos"
    venv = make_vector_env(request.task, num_envs=request.n_envs, obs_mode="rgb" if visual else "state_dict",
                           render_mode="rgb_array", robot_uids=request.robot, **env_kwargs)
    try:
        cameras = _cameras(request, venv) if visual else {}
        return LeRobotVectorEnv(venv, request.task, task_instruction(request.task_cls, request.task), cameras,
                                follower_units=follower is not None)
    except BaseException:
        venv.close()
        raise


def _cameras(request: LeRobotRequest, venv) -> dict[str, str]:
    """LeRobot name -> our sensor camera, checked against the built env's cameras."""
    known = list(venv.single_observation_space["sensor_data"].spaces)
    if request.cameras is None:
        return {name: name for name in known}
    check_camera_names(request.task, request.cameras, known)
    return dict(request.cameras)

