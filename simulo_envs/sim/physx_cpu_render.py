"""Rendering with the PhysX CPU backend: lights, cameras, visibility and segmentation ids.

The rendering half of ``PhysxCpuBackend`` (``physx_cpu.py``). Each env's ``sapien.Scene`` has a
render system of its own (a camera sees only its env), or one scene renders every env
(``RenderConfig.single_scene``, ManiSkill's ``parallel_in_single_scene``). Cameras and lights are
made by ``simulo_envs/sim/render.py``; these methods place them per env and keep the render
scenes in step with physics.
"""

from __future__ import annotations

from typing import Optional

import numpy as np
import sapien

from simulo_envs.sim.render import CameraRig, add_lights


class PhysxCpuRenderMixin:
    """The rendering methods of ``PhysxCpuBackend``; expect its ``num_envs``, ``origins``,
    ``render``, ``render_config``, ``scenes``, ``cameras``, ``_rigid``, ``_arts`` and
    ``_record_lights`` (``BackendParamsMixin``)."""

    @property
    def render_scenes(self) -> list:
        """The distinct SAPIEN scenes that render: one per env, or one for all (``single_scene``)."""
        return self.scenes[:1] if self.render_config.single_scene else list(self.scenes)

    def add_lights(self, ambient=(0.3, 0.3, 0.3), directional=(((0.0, 1.0, -1.0), (1.0, 1.0, 1.0)),)) -> None:
        """Ambient light and directional lights ``((direction, colour), ...)`` in every render scene,
        casting shadows where ``render_config.shadows`` (over each env, or over the whole grid)."""
        self._require_render()
        colors = [color for _, color in directional]
        if self.render_config.single_scene:  # one scene: its lights are every env's lights
            centre = self.origins.mean(axis=0, keepdims=True)
            half = float(np.abs(self.origins - centre).max()) + 2.0
            lights = add_lights(self.render_scenes, ambient, directional, self.render_config.shadows, centre, half)
            self._record_lights(lights * self.num_envs, colors)
        else:
            lights = add_lights(self.render_scenes, ambient, directional, self.render_config.shadows, self.origins)
            self._record_lights(lights, colors)

    def add_camera(self, name: str, width: int, height: int, fovy: float, near: float, far: float,
                   local_pose: np.ndarray, shader_dir: str = "", overview: bool = False,
                   mount: Optional[tuple[int, int]] = None) -> CameraRig:
        """A camera per env at env origin + ``local_pose`` ``[x, y, z, qw, qx, qy, qz]`` (SAPIEN camera
        convention: looks along its +x axis, +z up), rendered with the shaders in ``shader_dir``
        ("" = SAPIEN's default). ``overview`` (single render scene only): one camera for the
        whole grid, at ``local_pose`` around the grid's centre, moved back along its view axis
        until the grid fits. ``mount``: ``(articulation group id, link index)``: the camera rides
        on that link of every env's articulation, ``local_pose`` in the link's frame. Returns the
        rig that captures pictures.

        Raises:
            ValueError: ``mount`` with ``overview`` or with one render scene for every env.
        """
        self._require_render()
        if mount is not None:
            if overview or self.render_config.single_scene:
                raise ValueError(f"camera {name!r}: a camera on a link needs one render scene per env")
            links = [env_links[mount[1]].entity for env_links in self._arts[mount[0]].links]
            rig = CameraRig(self.scenes, self.origins, name, width, height, fovy, near, far, local_pose, shader_dir,
                            mounts=links)
            self.cameras[name] = rig
            return rig
        if overview:
            centre = self.origins.mean(axis=0)
            pose = np.asarray(local_pose, dtype=np.float64).copy()
            back = float(np.abs(self.origins - centre).max()) / max(np.tan(fovy / 2), 1e-3)
            forward = sapien.Pose(q=pose[3:7]).to_transformation_matrix()[:3, 0]
            pose[:3] = pose[:3] - back * forward
            rig = CameraRig(self.scenes[:1], centre[None], name, width, height, fovy, near, far, pose, shader_dir)
        else:
            rig = CameraRig(self.scenes, self.origins, name, width, height, fovy, near, far, local_pose, shader_dir)
        self.cameras[name] = rig
        return rig

    def update_render(self) -> None:
        """Push the current physics poses to every render scene (once per captured frame)."""
        self._require_render()
        for scene in self.render_scenes:
            scene.update_render()

    def set_rigid_visibility(self, gid: int, visible: bool) -> None:
        """Show or hide the render geometry of rigid group ``gid`` in every env (physics is
        untouched). Cameras capture what is visible at capture time: hiding a goal marker
        around a sensor capture keeps it out of observations but in ``render()``."""
        self._require_render()
        for entity in self._rigid[gid].entities:
            body = entity.find_component_by_type(sapien.render.RenderBodyComponent)
            if body is not None:
                body.visibility = 1.0 if visible else 0.0

    def segmentation_ids(self, gid: int) -> list[int]:
        """Segmentation ids (SAPIEN per-scene entity ids) of rigid group ``gid``, one per env."""
        return [e.per_scene_id for e in self._rigid[gid].entities]

    def ground_segmentation_ids(self) -> list[int]:
        """Segmentation id of the ground in each env (empty without a ground)."""
        return [g.per_scene_id for g in getattr(self, "_grounds", [])]

    def link_segmentation_ids(self, gid: int) -> list[list[int]]:
        """Per env, the segmentation ids of articulation group ``gid``'s links (link order)."""
        return [[link.entity.per_scene_id for link in links] for links in self._arts[gid].links]

    def _require_render(self) -> None:
        if not self.render:
            raise RuntimeError("this backend was created without rendering (render=False)")
