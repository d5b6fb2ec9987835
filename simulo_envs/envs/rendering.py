"""Cameras, visual observations and ``render()`` for ``BaseEnv`` (a mixin, one concern per file).

Two kinds of camera, both one per env and fixed in the env frame:

- sensors (``_default_sensor_configs``, overridable with ``sensor_configs=``): feed visual
  observations (``obs_mode`` "rgb", "depth", "segmentation", "normal", "albedo", "rgbd",
  joined with "+"; "pointcloud").
- human render cameras (``_default_human_render_camera_configs``, overridable with
  ``human_render_camera_configs=``): what ``render()`` returns for ``render_mode="rgb_array"``.

Images have the env dimension first: rgb uint8 (N, H, W, 3); depth float32 (N, H, W, 1) in
metres along the optical axis (0 where nothing is hit); segmentation int32 (N, H, W, 1) with
the ids of ``segmentation_id_map`` (0 = background); normal float32 (N, H, W, 3) unit normals in
the camera's OpenGL frame; albedo uint8 (N, H, W, 3) (``simulo_envs/sim/render.py``).

Render modes: ``"rgb_array"`` (the render cameras), ``"sensors"`` (the sensor textures as
pictures), ``"all"`` (both, side by side), ``"human"`` (SAPIEN's viewer, ``envs/viewer.py``).
"""

from __future__ import annotations

import contextlib
from dataclasses import replace
from typing import Optional

import torch

from simulo_envs.authoring import Pose
from simulo_envs.envs.sensor_images import side_by_side, texture_image
from simulo_envs.envs.sensors import CameraConfig, apply_overrides, look_at
from simulo_envs.sim.render_config import check_shader_pack, resolve_shader_pack, shader_directory
from simulo_envs.tensors import to_device


class RenderingMixin:
    """Rendering half of ``BaseEnv``; expects ``self._backend``, ``self.scene``, ``self.device``."""

    # ------------------------------------------------------------------ the state RenderingMixin owns
    _hidden_objects: list = []
    """Props hidden from the sensor cameras (observations, ``render_sensors``) but shown by
    ``render_rgb_array`` and the viewer, e.g. a goal marker (ManiSkill's name); emptied at each
    scene build (``_clear_hidden_objects``), filled by ``hide_from_sensors``."""
    _sensor_pictures_taken: bool = False
    """True between ``_begin_sensor_capture`` and the capture that reads its pictures."""
    _sensor_rigs: dict
    """Sensor camera name -> its camera rig of this build (``_setup_sensors``)."""
    _human_rigs: dict
    """Human render camera name -> its camera rig of this build."""
    _sensor_configs: dict
    """Sensor camera name -> ``CameraConfig`` (overrides applied)."""
    _human_render_camera_configs: dict
    """Human render camera name -> ``CameraConfig`` (overrides applied)."""
    _segmentation_map: dict
    """Segmentation id -> object of this build (``segmentation_id_map``)."""

    @property
    def _default_sensor_configs(self) -> list[CameraConfig]:
        """Sensor cameras of the task (default: one 128x128 "base_camera" looking at the robot)."""
        return [CameraConfig("base_camera", look_at([0.95, 0.35, 0.45], [0.45, 0.0, 0.05]), 128, 128, 1.2)]

    @property
    def _default_human_render_camera_configs(self) -> list[CameraConfig]:
        """Human render cameras of the task (default: one 512x512 "render_camera")."""
        return [CameraConfig("render_camera", look_at([1.1, 0.7, 0.7], [0.4, 0.0, 0.2]), 512, 512, 0.9)]

    @property
    def _default_viewer_camera_configs(self) -> list[CameraConfig]:
        """The viewer window's camera for ``render_mode="human"`` (default: the render camera's view,
        1024x768)."""
        return [CameraConfig("viewer", look_at([1.1, 0.7, 0.7], [0.4, 0.0, 0.2]), 1024, 768, 0.9)]

    @property
    def _all_default_sensor_configs(self) -> list[CameraConfig]:
        """The task's sensor cameras, then the ones its robot carries (the agent's
        ``sensor_configs``, ManiSkill's agent cameras)."""
        return list(self._default_sensor_configs) + list(getattr(self.agent, "sensor_configs", ()))

    def _setup_sensors(self, options: Optional[dict] = None) -> None:
        """Lights, then the sensor cameras (visual obs modes) and the human render cameras (any
        ``render_mode``) in every env, from the task's configs with the user's overrides.

        Raises:
            ValueError: a bad camera override or shader pack (at construction).
        """
        backend = self._backend
        self._sensor_rigs, self._human_rigs = {}, {}
        self._sensor_configs, self._human_render_camera_configs = {}, {}
        if not backend.render:
            return
        backend.add_lights(*self.scene.lighting)
        if self._textures:
            self._sensor_configs = self._camera_configs(self._all_default_sensor_configs, self._sensor_overrides)
            for name, cfg in self._sensor_configs.items():
                self._sensor_rigs[name] = self._add_camera(cfg, self._textures)
        if self.render_mode is not None:
            overview = self._parallel_in_single_scene
            self._human_render_camera_configs = self._camera_configs(self._default_human_render_camera_configs,
                                                                     self._human_overrides)
            for name, cfg in self._human_render_camera_configs.items():
                self._human_rigs[name] = self._add_camera(cfg, {"rgb"}, overview=overview)
        self._segmentation_map = self._build_segmentation_map()

    def _camera_configs(self, defaults, overrides) -> dict:
        """Camera configs with user overrides; ``shader_dir`` (the env keyword) sets every camera's pack."""
        configs = apply_overrides(defaults, overrides)
        if self._shader_pack is not None:
            configs = {name: replace(cfg, shader_pack=self._shader_pack) for name, cfg in configs.items()}
        return configs

    def _add_camera(self, cfg: CameraConfig, textures, overview: bool = False):
        """The camera of ``cfg`` in every env, rendering ``textures`` with its shader pack
        (``"auto"``: the fastest that renders them, ``resolve_shader_pack``)."""
        check_shader_pack(cfg.shader_pack, textures)
        pack = resolve_shader_pack(cfg.shader_pack, textures)
        pose = cfg.pose if isinstance(cfg.pose, Pose) else Pose(cfg.pose[:3], cfg.pose[3:7])
        mount = None if cfg.mount is None else self._mount_link(cfg)
        return self._backend.add_camera(cfg.name, cfg.width, cfg.height, cfg.fov, cfg.near, cfg.far, pose.to_list(),
                                        shader_dir=shader_directory(pack), overview=overview, mount=mount)

    def _mount_link(self, cfg: CameraConfig) -> tuple[int, int]:
        """``(articulation group id, link index)`` of the link camera ``cfg`` rides on.

        Raises:
            ValueError: no such link, or a bare link name that several articulations have.
        """
        from simulo_envs.prop import Prop

        path, _, link = cfg.mount.rpartition(":")
        found = [(obj, obj.link_names.index(link)) for p, obj in self.scene.objects.items()
                 if not isinstance(obj, Prop) and (not path or p == path) and link in obj.link_names]
        if len(found) != 1:
            links = sorted(f"{p}:{name}" for p, obj in self.scene.objects.items() if not isinstance(obj, Prop)
                           for name in obj.link_names)
            why = "no such link" if not found else "several articulations have it; name one as '<path>:<link>'"
            raise ValueError(f"camera {cfg.name!r}: mount {cfg.mount!r}: {why}; links: {links}")
        obj, index = found[0]
        return obj._gid, index

    @property
    def segmentation_id_map(self) -> dict:
        """Segmentation id -> the name of what it belongs to, one style for everything: a prop's prim
        path (``"/World/Block"``), ``"<articulation path>:<link name>"`` for a link of a robot or
        an articulated prop (``"/World/Robot:panda_hand"``, ``"/World/Cabinet:drawer"``), or
        ``"ground"`` (ids are the same in every env; 0 is background). Empty when rendering is off."""
        return dict(getattr(self, "_segmentation_map", {}))

    def _build_segmentation_map(self) -> dict:
        from simulo_envs.prop import Prop

        mapping = {}
        backend = self._backend
        grounds = backend.ground_segmentation_ids()
        if self._parallel_in_single_scene:  # one scene: every env's entity has its own id
            return self._single_scene_segmentation_map(grounds)
        if grounds:
            if len(set(grounds)) != 1:
                raise RuntimeError(f"ground segmentation ids differ between envs: {grounds}")
            mapping[grounds[0]] = "ground"
        for path, obj in self.scene.objects.items():
            if isinstance(obj, Prop):
                ids = backend.segmentation_ids(obj._gid)
                if len(set(ids)) != 1:
                    raise RuntimeError(f"segmentation ids of {path} differ between envs: {ids}")
                mapping[ids[0]] = path
            else:
                per_env = backend.link_segmentation_ids(obj._gid)
                for link, seg_id in zip(obj.link_names, per_env[0]):
                    mapping[seg_id] = f"{path}:{link}"
        return mapping

    def _single_scene_segmentation_map(self, grounds: list) -> dict:
        from simulo_envs.prop import Prop

        backend = self._backend
        mapping = {seg_id: "ground" for seg_id in grounds}
        for path, obj in self.scene.objects.items():
            if isinstance(obj, Prop):
                mapping.update({seg_id: path for seg_id in backend.segmentation_ids(obj._gid)})
            else:
                for per_env in backend.link_segmentation_ids(obj._gid):
                    mapping.update({seg_id: f"{path}:{link}" for link, seg_id in zip(obj.link_names, per_env)})
        return mapping

    def _clear_hidden_objects(self) -> None:
        """A new scene build hides nothing until ``hide_from_sensors`` is called again."""
        self._hidden_objects = []

    def hide_from_sensors(self, *props) -> None:
        """Keep ``props`` (goal markers, say) out of the sensor cameras' images (observations,
        ``render_sensors``); ``render_rgb_array`` and the viewer still draw them. Call it in
        ``_load_scene``: a scene build starts with nothing hidden."""
        self._hidden_objects = [*self._hidden_objects, *props]

    @property
    def hidden_objects(self) -> tuple:
        """The props ``hide_from_sensors`` keeps out of the sensor images, in the order hidden."""
        return tuple(self._hidden_objects)

    def _get_obs_sensor_data(self, apply_texture_transforms: bool = True) -> dict:
        """``{camera: {texture: tensor}}`` for the obs mode's textures, all envs (the layouts in
        the module docstring; ``apply_texture_transforms`` is accepted for the seed's signature:
        our textures always come in those layouts). ``_hidden_objects`` are not in the pictures;
        the cameras' image noise is (``simulo_envs/envs/image_noise.py``: observations only)."""
        return self._capture_sensors(self._textures, noisy=True)

    def _begin_sensor_capture(self) -> None:
        """Start drawing every sensor camera's picture of the current state, to be read by the
        next observation's capture; the render device draws while the step computes ``info`` and
        the state part of the observation (on a CPU: lavapipe's threads, while Python runs on
        the main thread). The pictures are those a capture made later would take, as long as
        nothing moves in between; ``_end_sensor_capture`` drops pictures left unread."""
        if not self._sensor_rigs:
            return
        with self._sensors_hiding():
            self._backend.update_render()
            for rig in self._sensor_rigs.values():
                rig.take_pictures()
        self._sensor_pictures_taken = True

    def _end_sensor_capture(self) -> None:
        """Drop pictures ``_begin_sensor_capture`` started and no capture read."""
        self._sensor_pictures_taken = False

    def _capture_sensors(self, textures, noisy: bool = False) -> dict:
        if self._sensor_pictures_taken:  # drawn since _begin_sensor_capture: read them
            self._sensor_pictures_taken = False
            pictures = {name: rig.capture(textures, taken=True) for name, rig in self._sensor_rigs.items()}
        else:
            with self._sensors_hiding():
                self._backend.update_render()
                pictures = {name: rig.capture(textures) for name, rig in self._sensor_rigs.items()}
        if noisy:
            pictures = self.randomization.noisy_images(pictures)
        return {name: {k: to_device(v, self.device) for k, v in images.items()} for name, images in pictures.items()}

    @contextlib.contextmanager
    def _sensors_hiding(self):
        """``_hidden_objects`` hidden inside the block (pictures taken there leave them out)."""
        backend = self._backend
        for prop in self._hidden_objects:
            backend.set_rigid_visibility(prop._gid, False)
        try:
            yield
        finally:
            for prop in self._hidden_objects:
                backend.set_rigid_visibility(prop._gid, True)

    def capture_sensor_data(self) -> None:
        """Take every sensor camera's picture now (the seed's name; ``get_obs`` takes its own)."""
        self._backend.update_render()
        for rig in self._sensor_rigs.values():
            for camera in rig.cameras:
                camera.take_picture()

    def get_sensor_params(self) -> dict:
        """``{camera: {"intrinsic_cv": (N,3,3), "extrinsic_cv": (N,3,4), "cam2world_gl": (N,4,4)}}``."""
        return {name: {k: to_device(v, self.device) for k, v in rig.params().items()}
                for name, rig in self._sensor_rigs.items()}

    def get_sensor_images(self, image_noise: bool = False) -> dict:
        """``{camera: {texture: uint8 (N, H, W, 3)}}``: what the sensors see, as pictures (the
        obs mode's textures; conversions in ``simulo_envs/envs/sensor_images.py``). Empty without
        sensor cameras. The cameras' image noise is left out (``render()`` shows these pictures)
        unless ``image_noise`` is True: then the RGB pictures are noisy as an observation's of the
        same step are (the noise depends on each env's seed, episode and step alone, so asking
        changes no later observation)."""
        data = self._capture_sensors(self._textures, noisy=image_noise)
        return {name: {texture: texture_image(texture, image) for texture, image in images.items()}
                for name, images in data.items()}

    def render(self):
        """By ``render_mode``: ``"rgb_array"``: ``render_rgb_array()``; ``"sensors"``:
        ``render_sensors()``; ``"all"``: ``render_all()``; ``"human"``: ``render_human()`` (the
        viewer); None: returns None."""
        mode = self.render_mode
        if mode == "rgb_array":
            return self.render_rgb_array()
        if mode == "sensors":
            return self.render_sensors()
        if mode == "all":
            return self.render_all()
        if mode == "human":
            return self.render_human()
        return None

    def render_rgb_array(self, camera_name: Optional[str] = None) -> torch.Tensor:
        """uint8 (N, H, W, 3) image of every env from the human render camera(s): the named one,
        or all of them side by side. With ``parallel_in_single_scene``: one overview image (1, H, W, 3).

        Raises:
            RuntimeError: the env was made with ``render_mode=None``. KeyError: unknown camera.
        """
        if not self._human_rigs:
            raise RuntimeError("render_rgb_array needs the env made with a render_mode (e.g. 'rgb_array')")
        rigs = self._human_rigs
        if camera_name is not None:
            if camera_name not in rigs:
                raise KeyError(f"no human render camera {camera_name!r}; cameras: {sorted(rigs)}")
            rigs = {camera_name: rigs[camera_name]}
        self._backend.update_render()
        images = [to_device(rig.capture({"rgb"})["rgb"], self.device) for rig in rigs.values()]
        return images[0] if len(images) == 1 else side_by_side(images)

    def render_sensors(self) -> torch.Tensor:
        """uint8 (N, max H, W_total, 3): every picture of ``get_sensor_images`` side by side
        (camera by camera, textures in obs order).

        Raises:
            RuntimeError: no sensor camera (use a visual obs_mode).
        """
        if not self._sensor_rigs:
            raise RuntimeError("render_sensors needs sensor cameras: make the env with a visual obs_mode")
        return side_by_side([image for images in self.get_sensor_images().values() for image in images.values()])

    def render_all(self) -> torch.Tensor:
        """uint8 (N, max H, W_total, 3): ``render_rgb_array()`` then, with sensor cameras,
        ``render_sensors()``, side by side."""
        images = [self.render_rgb_array()]
        if self._sensor_rigs:
            images.append(self.render_sensors())
        return side_by_side(images)
