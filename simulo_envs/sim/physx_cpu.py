"""PhysX CPU backend: every env in ONE ``PhysxCpuSystem``, isolated by collision bits.

Layout choice, measured (``python tests/benchmarks/bench_cpu_layout.py``: Panda + cube per
env, arms moving, 5 substeps per env step, raw physics only, 2-core machine, median of 3):

    num_envs   shared system   system per env   (env steps/s)
           1            2132             2131
          16            2902             1608
          64            2800             1105

One ``system.step()`` call replaces N of them and PhysX solves the envs' islands in one
pass, so the shared system is 1.8x faster at N = 16 and 2.5x at N = 64. All envs live in it, each in its own ``sapien.Scene`` (the scenes share the physics system;
each with its own render system when rendering is on, so a camera only sees its own env).

Isolation: each env's shapes carry collision bits of their own, so envs sharing the system
never touch (the rule and its limit beyond 32 envs: ``physx_cpu_build.py``).

``SimConfig.isolate_envs`` gives each env a PhysX system of its own instead (exact
reproducibility of an env whatever shares its process, at the cost measured above on one
thread). Independent systems can step in parallel threads (``system_stepper.py``,
``SimConfig.step_threads``; by default one thread or one per CPU core, whichever its timed steps
find faster), which wins back the cost where a core is free.

Batched state: reads come from one ``system.pack()`` per system and state version, viewed as
float32 and gathered with indices precomputed at finalize (no per-entity Python loop); the
layout and its check are in ``simulo_envs/sim/cpu_pack.py``.
Writes go entity by entity for only the listed env rows, then bump the state version so the
next read repacks (read-your-writes without a step).

Nothing stale after a write: quantities PhysX computes only while stepping (contact impulses,
hence contact forces and grasp checks) describe the state the last step produced. An env whose
state is written after that step (a pose, velocity, qpos or qvel write: resets, ``set_state``)
reports zero contact force until the next step, rather than the contacts of the state it
left (Isaac Lab's contact sensor clears its buffers of reset envs the same way). Other envs
keep theirs. Drive-target writes do not change the state and clear nothing.
"""

from __future__ import annotations

import itertools
from typing import Optional

import numpy as np
import sapien
import sapien.physx as physx

from simulo_envs.sim.config import SimConfig
from simulo_envs.sim.contacts import ContactPairQuery
from simulo_envs.sim.cpu_pack import BODY as _BODY, check_layout, pack_indices
from simulo_envs.sim.params import BackendParamsMixin
from simulo_envs.sim.physx_cpu_build import PhysxCpuBuildMixin, _ArticulationGroup, _RigidGroup, env_bits
from simulo_envs.sim.physx_cpu_render import PhysxCpuRenderMixin
from simulo_envs.sim.render_config import RenderConfig
from simulo_envs.sim.system_stepper import SystemStepper

__all__ = ["PhysxCpuBackend", "env_bits"]


class PhysxCpuBackend(PhysxCpuBuildMixin, PhysxCpuRenderMixin, BackendParamsMixin):
    """All envs of one gym env in one PhysX CPU system. See the module docstring.

    Args:
        num_envs: number of envs, >= 1.
        env_origins: float (num_envs, 3) world positions of the env origins [m].
        config: the simulation settings.

    Groups (a prop's bodies, a robot's articulations) are registered with ``add_rigid`` /
    ``add_articulation`` (``physx_cpu_build.py``) and addressed by the returned integer id; rows
    are env indices. Cameras, lights and segmentation: ``physx_cpu_render.py``.
    All arrays in and out are numpy float32 with the env dimension first.
    """

    name = "physx_cpu"

    @property
    def sim_backend(self) -> str:
        """``name`` under ManiSkill's attribute name (its ``replay_trajectory`` reads ``env.backend.sim_backend``)."""
        return self.name

    def __init__(self, num_envs: int, env_origins: np.ndarray, config: SimConfig, render: bool = False,
                 render_config: Optional[RenderConfig] = None):
        self.num_envs = int(num_envs)
        self.render = bool(render)
        self.render_config = render_config or RenderConfig()
        self.origins = np.asarray(env_origins, dtype=np.float64).reshape(self.num_envs, 3)
        self.config = config
        self._texture_patterns: dict = {}  # what BackendParamsMixin's texture writers show where
        physx.set_scene_config(
            gravity=np.asarray(config.gravity, dtype=np.float32),
            bounce_threshold=config.bounce_threshold,
            enable_pcm=config.enable_pcm,
            enable_tgs=config.enable_tgs,
            enable_ccd=config.enable_ccd,
            enable_enhanced_determinism=config.enable_enhanced_determinism,
            enable_friction_every_iteration=config.enable_friction_every_iteration,
            cpu_workers=config.num_threads,
        )
        physx.set_body_config(
            solver_position_iterations=config.solver_position_iterations,
            solver_velocity_iterations=config.solver_velocity_iterations,
            sleep_threshold=config.sleep_threshold,
        )
        physx.set_shape_config(contact_offset=config.contact_offset, rest_offset=config.rest_offset)
        physx.set_default_material(config.static_friction, config.dynamic_friction, config.restitution)
        if config.isolate_envs and self.name != "physx_cpu":
            raise ValueError(f"sim_config.isolate_envs (one PhysX system per env) is a physx_cpu option, not {self.name}'s")
        if config.isolate_envs and self.render_config.single_scene:
            raise ValueError("sim_config.isolate_envs puts every env in a world of its own; it cannot be combined "
                             "with parallel_in_single_scene (one scene for all envs)")
        self.systems = [self._create_system() for _ in range(self.num_envs if config.isolate_envs else 1)]
        for system in self.systems:
            system.timestep = 1.0 / config.sim_freq
        self.system = self.systems[0]
        self._system_of_env = np.arange(self.num_envs) if config.isolate_envs else np.zeros(self.num_envs, dtype=np.int64)
        self._stepper = SystemStepper(self.systems, config.step_threads)
        if self.render and self.render_config.single_scene:
            # parallel_in_single_scene: one render scene holds every env (for overview cameras).
            self.scenes = [sapien.Scene([self.system, self.render_config.make_render_system()])] * self.num_envs
        else:
            # One render system per env: a camera sees only the entities of its own env's scene.
            self.scenes = [sapien.Scene([self.systems[s]] + ([self.render_config.make_render_system()] if self.render
                                                              else []))
                           for s in self._system_of_env.tolist()]
        self.cameras: dict = {}
        self._rigid: list[_RigidGroup] = []
        self._arts: list[_ArticulationGroup] = []
        self._spec_articulations = 0
        self._finalized = False
        self._version = 0
        self._packed_version = -1
        self._packed: Optional[np.ndarray] = None
        self._steps = 0  # PhysX steps taken; contact data is per step
        self._written = np.zeros(self.num_envs, dtype=bool)  # state written since the last step
        self._any_written = False
        self._contact_queries: dict = {}
        self._contacts_step = -1
        self._contact_list: list = []
        self._retired: list = []  # components rebuild_rigid replaced, kept until the next step

    def _create_system(self):
        """A physics system: the one every env's scene shares, or one per env with
        ``isolate_envs`` (the GPU backend makes a GPU one)."""
        return physx.PhysxCpuSystem()

    # ------------------------------------------------------------------ layout
    def finalize(self) -> None:
        """Freeze the layout and precompute the packed-state gather indices (``cpu_pack``)."""
        self._finalized = True
        self._relayout()

    def _relayout(self) -> None:
        """Gather indices into the packed state, computed again (at finalize, and after bodies
        were rebuilt: PhysX lists a rebuilt body last), checked against SAPIEN's getters; the
        contact queries, which hold the bodies, are made again on their next use."""
        self._rigid_idx, self._art_idx, total = pack_indices(self.systems, self._system_of_env, self._rigid,
                                                             self._arts, self.num_envs)
        self._rigid_packed = [bool((idx[:, 0] >= 0).all()) for idx in self._rigid_idx]  # no static body
        self._contact_queries = {}
        self._version += 1
        check_layout(self._state(), total, self._rigid_idx, self._art_idx, self._rigid, self._arts)
    # ------------------------------------------------------------------ reads
    def _state(self) -> np.ndarray:
        """float32 (F,): the whole packed state of every system (``cpu_pack``), fresh; a view the
        next write or step replaces (read it, never keep or write it). ``_packed_index`` says where
        each group's rows lie in it. Hot readers test ``_packed_version`` inline and call this
        only to repack (a Python call less per read)."""
        if self._packed_version != self._version:
            if len(self.systems) == 1:
                self._packed = np.frombuffer(self.system.pack(), dtype=np.float32)
            else:
                # one join of the systems' bytes: a fraction of concatenating 16-64 arrays (measured
                # 2 us against 24 at 16 systems, 3 against 98 at 64); read-only like the shared case
                self._packed = np.frombuffer(b"".join([s.pack() for s in self.systems]), dtype=np.float32)
            self._packed_version = self._version
        return self._packed

    _packed_state = _state  # the name the fault check reads it by (one call: it repacks after each step)

    def _packed_index(self, kind: str, gid: int) -> Optional[np.ndarray]:
        """int64 index array into ``_packed_state()``: ``kind`` ``"rigid"`` (N, 13) (None when a body
        of the group is static, hence not packed), or an articulation's ``"root"`` (N, 7),
        ``"root_vel"`` (N, 6), ``"qpos"`` / ``"qvel"`` / ``"target"`` (N, dof)."""
        if kind == "rigid":
            return self._rigid_idx[gid] if self._rigid_packed[gid] else None
        return self._art_idx[gid][kind]

    def rigid_state(self, gid: int) -> np.ndarray:
        """float32 (N, 13) ``[x, y, z, qw, qx, qy, qz, vx, vy, vz, wx, wy, wz]``, world frame, fresh."""
        if self._rigid_packed[gid]:
            packed = self._packed if self._packed_version == self._version else self._state()
            return packed[self._rigid_idx[gid]]
        return self._rigid_state_slow(gid, self._rigid_idx[gid])

    def _rigid_state_slow(self, gid: int, idx: np.ndarray) -> np.ndarray:
        # Static bodies are not in the packed state: read their pose directly (velocity 0).
        out = np.zeros((self.num_envs, _BODY), dtype=np.float32)
        packed = self._state()
        for i, comp in enumerate(self._rigid[gid].components):
            if idx[i, 0] >= 0:
                out[i] = packed[idx[i]]
            else:
                pose = comp.entity_pose
                out[i, :3] = pose.p
                out[i, 3:7] = pose.q
        return out

    def qpos(self, gid: int) -> np.ndarray:
        """float32 (N, dof) joint positions [rad or m], fresh."""
        packed = self._packed if self._packed_version == self._version else self._state()
        return packed[self._art_idx[gid]["qpos"]]

    def qvel(self, gid: int) -> np.ndarray:
        """float32 (N, dof) joint velocities [rad/s or m/s], fresh."""
        packed = self._packed if self._packed_version == self._version else self._state()
        return packed[self._art_idx[gid]["qvel"]]

    def drive_targets(self, gid: int) -> np.ndarray:
        """float32 (N, dof) PD drive position targets, fresh."""
        return self._state()[self._art_idx[gid]["target"]]

    def root_pose(self, gid: int) -> np.ndarray:
        """float32 (N, 7) articulation root pose, world frame, fresh."""
        return self._state()[self._art_idx[gid]["root"]]

    def root_velocity(self, gid: int) -> np.ndarray:
        """float32 (N, 6) articulation root velocity ``[vx, vy, vz, wx, wy, wz]``, world frame,
        fresh (zero for a fixed base)."""
        return self._state()[self._art_idx[gid]["root_vel"]]

    def link_pose(self, gid: int, link_index: int) -> np.ndarray:
        """float32 (N, 7) world pose of link ``link_index`` in every env, fresh."""
        out = np.empty((self.num_envs, 7), dtype=np.float32)
        for row, links in zip(out, self._arts[gid].links):
            pose = links[link_index].entity_pose
            row[:3] = pose.p
            row[3:] = pose.q
        return out

    def contact_forces(self, gid: int, link_indices: tuple[int, ...], rigid_gid: int) -> np.ndarray:
        """float32 (N, L, 3) net contact force [N], world frame, that the body of group
        ``rigid_gid`` exerts on each link in ``link_indices`` of articulation group ``gid``, per
        env, over the last PhysX step (summed point impulses / timestep; SAPIEN reports each
        point's impulse as acting on ``bodies[0]`` of its contact). Fresh.

        Envs whose state was written since the last step (``set_rigid_pose``/``_velocity``,
        ``set_qpos``, ``set_qvel``) read zero: PhysX has not computed contacts for the written
        state yet (module docstring). Every backend keeps this rule. The contact list is walked
        once per step per query with no Python loop over contacts (``sim/contacts.py``).
        """
        key = (gid, tuple(link_indices), rigid_gid)
        query = self._contact_queries.get(key)
        if query is None:
            links = [[env_links[l] for l in link_indices] for env_links in self._arts[gid].links]
            query = self._contact_queries[key] = [ContactPairQuery(links, self._rigid[rigid_gid].components), -1, None]
        if query[1] != self._steps:
            contacts = self._contact_list if self._contacts_step == self._steps else self._contacts()
            query[2] = (query[0].impulses(contacts) / self.system.timestep).astype(np.float32)
            query[1] = self._steps
        out = query[2].copy()
        if self._any_written:
            out[self._written] = 0.0
        return out

    def _contacts(self) -> list:
        if self._contacts_step != self._steps:
            systems = self.systems
            if len(systems) == 1:  # SAPIEN returns a new list: nothing to join
                self._contact_list = systems[0].get_contacts()
            else:
                self._contact_list = list(itertools.chain.from_iterable(s.get_contacts() for s in systems))
            self._contacts_step = self._steps
        return self._contact_list

    def link_jacobian(self, gid: int, link_index: int) -> np.ndarray:
        """float32 (N, 6, dof) Jacobian of link ``link_index`` at the current qpos, world frame:
        rows 0-2 map qvel to the link origin's linear velocity [m/s], rows 3-5 to its angular
        velocity [rad/s]. From SAPIEN's bundled Pinocchio model (C++, ~3 us per env): the
        link-frame Jacobian rotated into the world by the link's orientation (the robot base
        is not rotated: fixed at its env origin)."""
        group = self._arts[gid]
        if group.pinocchio is None:
            group.pinocchio = group.articulations[0].create_pinocchio_model()
        model = group.pinocchio
        qpos = self.qpos(gid).astype(np.float64)
        out = np.empty((self.num_envs, 6, group.dof), dtype=np.float32)
        for i in range(self.num_envs):
            local = model.compute_single_link_local_jacobian(qpos[i], link_index)
            rot = group.links[i][link_index].entity_pose.to_transformation_matrix()[:3, :3]
            out[i, :3] = rot @ local[:3]
            out[i, 3:] = rot @ local[3:]
        return out

    def articulation_info(self, gid: int) -> _ArticulationGroup:
        """Names and sizes of articulation group ``gid`` (dof, joint and link names)."""
        return self._arts[gid]

    def qlimits(self, gid: int) -> np.ndarray:
        """float32 (dof, 2) joint limits of env 0's articulation (the same in every env)."""
        return np.asarray(self._arts[gid].articulations[0].get_qlimits(), dtype=np.float32).reshape(-1, 2)

    # ------------------------------------------------------------------ writes
    def set_rigid_pose(self, gid: int, env_ids: np.ndarray, pose: np.ndarray) -> None:
        """Teleport the bodies of ``env_ids`` to ``pose`` (k, 7), world frame."""
        entities = self._rigid[gid].entities
        for row, i in enumerate(env_ids.tolist()):
            p = pose[row]
            entities[i].set_pose(sapien.Pose(p=p[:3], q=p[3:7]))
        self._wrote(env_ids)

    def set_rigid_velocity(self, gid: int, env_ids: np.ndarray, velocity: np.ndarray) -> None:
        """Set ``[v, w]`` (k, 6) of the dynamic bodies of ``env_ids``; static/kinematic bodies ignore it."""
        group = self._rigid[gid]
        for row, i in enumerate(env_ids.tolist()):
            if group.kinds[i] != "rigid":
                continue
            comp = group.components[i]
            comp.linear_velocity = velocity[row, :3]
            comp.angular_velocity = velocity[row, 3:6]
        self._wrote(env_ids)

    def set_qpos(self, gid: int, env_ids: np.ndarray, qpos: np.ndarray) -> None:
        """Teleport joint positions (k, dof) of ``env_ids``; link poses update without a step."""
        arts = self._arts[gid].articulations
        for row, i in enumerate(env_ids.tolist()):
            arts[i].set_qpos(qpos[row])
        self._wrote(env_ids)

    def set_qvel(self, gid: int, env_ids: np.ndarray, qvel: np.ndarray) -> None:
        """Set joint velocities (k, dof) of ``env_ids``."""
        arts = self._arts[gid].articulations
        for row, i in enumerate(env_ids.tolist()):
            arts[i].set_qvel(qvel[row])
        self._wrote(env_ids)

    def _wrote(self, env_ids: np.ndarray) -> None:
        """Bookkeeping of a state write to ``env_ids``: repack on the next read, and their
        last-step contact data no longer describes them."""
        self._written[env_ids] = True
        self._any_written = True
        self._version += 1

    def set_root_pose(self, gid: int, env_ids: np.ndarray, pose: np.ndarray) -> None:
        """Teleport the root link of ``env_ids`` to ``pose`` (k, 7), world frame; the other links
        follow (joint positions unchanged), without a step."""
        arts = self._arts[gid].articulations
        for row, i in enumerate(env_ids.tolist()):
            p = pose[row]
            arts[i].set_root_pose(sapien.Pose(p=p[:3], q=p[3:7]))
        self._wrote(env_ids)

    def set_root_velocity(self, gid: int, env_ids: np.ndarray, velocity: np.ndarray) -> None:
        """Set the root link's ``[v, w]`` (k, 6), world frame, for ``env_ids`` (a fixed base ignores it)."""
        arts = self._arts[gid].articulations
        for row, i in enumerate(env_ids.tolist()):
            if arts[i].root.joint.type == "fixed":
                continue
            arts[i].set_root_linear_velocity(velocity[row, :3])
            arts[i].set_root_angular_velocity(velocity[row, 3:6])
        self._wrote(env_ids)

    def set_drive_targets(self, gid: int, env_ids: Optional[np.ndarray], targets: np.ndarray) -> None:
        """PD position targets (k, dof) for ``env_ids`` (None: all envs, k = N)."""
        joints = self._arts[gid].joints
        values = targets.tolist()
        if env_ids is not None:
            joints = [joints[i] for i in env_ids.tolist()]
        for env_joints, row in zip(joints, values):
            for joint, value in zip(env_joints, row):
                joint.set_drive_target(value)
        self._version += 1

    # ------------------------------------------------------------------ stepping
    def step(self, substeps: int = 1, before=None, after=None) -> None:
        """Advance every env by ``substeps`` PhysX steps, calling ``before()``/``after()`` around each.

        After each PhysX step every env's contact data is current again (writes made by
        ``after()`` mark their envs as written once more)."""
        if before is None and after is None:  # nothing between substeps: system by system
            self._stepper.step(substeps)
            self._steps += substeps  # _stepped, inline
            self._retired.clear()
            if self._any_written:
                self._written[:] = False
                self._any_written = False
            self._version += 1
            return
        for _ in range(substeps):
            if before is not None:
                before()
            self._stepper.step(1)
            self._stepped(1)
            if after is not None:
                after()

    def _stepped(self, substeps: int) -> None:
        """Bookkeeping after ``substeps`` PhysX steps: contact data is current for every env."""
        self._steps += substeps
        self._retired.clear()
        if self._any_written:
            self._written[:] = False
            self._any_written = False
        self._version += 1

    def close(self) -> None:
        """Remove every entity from every env's scene; the backend is unusable afterwards."""
        self._stepper.close()
        for scene in {id(scene): scene for scene in self.scenes}.values():
            for entity in list(scene.entities):
                scene.remove_entity(entity)
        self.scenes = []
        self._rigid = []
        self._arts = []
