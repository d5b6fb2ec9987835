"""PhysX GPU backend (``sim_backend="physx_cuda"`` / ``"physx_cuda:N"``) on SAPIEN 3.0.3's
``PhysxGpuSystem``; on ``EmulatedPhysxGpuSystem`` it is ``"physx_cuda_emulated"``, which is how
this code path is tested on machines without a GPU (``simulo_envs/sim/gpu_emulator.py``).

Layout: one GPU system; one ``sapien.Scene`` per env (each with its own render system when
rendering), built exactly as on ``physx_cpu`` (the building methods are inherited): bodies at
world positions, env ``i``'s shapes in collision bit ``i % 32``, one ground plane. The scene
offsets stay 0: SAPIEN adds a scene's offset before handing poses to PhysX, so offsets change
only the frame of SAPIEN's buffers and of each render scene, not what PhysX simulates. With
offset 0, the buffers are in the world frame that every pose of the framework uses (no add per
read, camera parameters world-frame as on CPU), and the emulator reproduces PhysX's inputs
bit for bit.

State lives in SAPIEN's GPU buffers (``docs/gpu.md`` draws them), viewed as torch tensors on
the system's device. Rules, from SAPIEN 3.0.3's ``physx_system.cpp`` and ManiSkill 3.0.1's
``mani_skill/envs/scene.py``:

1. ``gpu_init()`` after building (it steps once), then the initial state recorded at build
   time is written back and applied, kinematics updated, everything fetched.
2. A buffer is stale after a step until its ``gpu_fetch_*``: reads fetch lazily, only what they
   need, at most once per state version.
3. A write scatters the listed env rows into the buffer and applies it. SAPIEN 3.0.3's indexed
   applies do not do what their signature says (its published source: the indexed rigid-body
   apply reads compacted rows at full-buffer positions; the indexed joint applies write
   articulations ``0..k-1``), so by default a write first fetches the buffer if it is stale,
   then applies the whole buffer: the other envs get back the values they have (ManiSkill
   applies whole buffers too). ``indexed_applies=True`` uses int32 index buffers instead, for
   a SAPIEN whose indexed applies work; both paths run in the tests on the emulator, the
   second against the emulator's ``index_quirks="sapien-3.0.3"`` too.
4. After a qpos write, link poses are stale until ``gpu_update_articulation_kinematics()``,
   which the next link-pose read calls.
5. Drive targets are written by the controllers for all envs every step: a whole-buffer apply
   with no fetch (the simulation never changes targets).

Contacts: one pair-impulse query per (robot links, prop) pair set, built on first use, run
once per step; envs whose state was written since the last step read zero until the next one
(the rule of ``physx_cpu``: PhysX has not computed contacts for the written state).
Jacobians: ``pytorch_kinematics`` on the device (see ``link_jacobian``). Rendering: poses are
synced to the entities (``sync_poses_gpu_to_cpu``) and each env's scene is updated.
"""

from __future__ import annotations

from typing import Optional

import numpy as np
import sapien
import torch

from simulo_envs.sim.config import SimConfig
from simulo_envs.sim.physx_cpu import PhysxCpuBackend


def _gpu_index(system, obj, pose: bool = False) -> int:
    """SAPIEN keeps GPU indices on components (``gpu_index`` / ``gpu_pose_index``); the emulator,
    which cannot write SAPIEN's components, keeps the same values in ``emulated_gpu_indices``."""
    table = getattr(system, "emulated_gpu_indices", None)
    if table is not None:
        return table.pose_index(obj) if pose else table.index(obj)
    return obj.gpu_pose_index if pose else obj.gpu_index


class PhysxCudaBackend(PhysxCpuBackend):
    """All envs in one PhysX GPU system (see the module docstring).

    Args:
        num_envs, env_origins, config, render: as ``PhysxCpuBackend``.
        system_factory: makes the ``PhysxGpuSystem`` (or the emulator); called once.
        device: the torch device of the system's buffers (``cuda:N``, or ``cpu`` for the emulator).
        name: ``"physx_cuda"`` or ``"physx_cuda_emulated"``.
        indexed_applies: apply writes through int32 index buffers instead of whole buffers
            (rule 3 of the module docstring); False for SAPIEN 3.0.3.

    Reads return fresh float32 torch tensors on ``device``; writes take numpy arrays or tensors.
    """

    def __init__(self, num_envs: int, env_origins: np.ndarray, config: SimConfig, render: bool = False, *,
                 system_factory, device: torch.device, name: str = "physx_cuda", indexed_applies: bool = False,
                 render_config=None):
        self._system_factory = system_factory
        self.device = torch.device(device)
        self.name = name
        self.indexed_applies = bool(indexed_applies)
        super().__init__(num_envs, env_origins, config, render=render, render_config=render_config)

    _packed_state = None
    """Not offered: the state lives in the GPU system's buffers, not in one packed CPU array."""

    def _create_system(self):
        return self._system_factory()

    rebuilds_env_bodies = False
    """PhysX's GPU system takes no new body once ``gpu_init`` ran (at scene build: ``finalize``)."""

    def _check_rebuild(self) -> None:
        raise RuntimeError(f"{self.name}: PhysX's GPU system cannot rebuild one env's bodies once it is initialised "
                           "(at scene build); rebuild the whole scene (reset every env, with a seed or "
                           "options={'reconfigure': True}) or use sim_backend='physx_cpu'")

    def add_articulation(self, urdf_path: str, *args, **kwargs) -> int:
        """As ``PhysxCpuBackend.add_articulation``; also keeps the URDF for the Jacobian chains."""
        gid = super().add_articulation(urdf_path, *args, **kwargs)
        self._arts[gid].urdf_path = urdf_path
        return gid

    # ------------------------------------------------------------------ gpu_init
    def finalize(self) -> None:
        """Record the built state, ``gpu_init()``, index the buffers, restore the built state."""
        initial_bodies = [[self._entity_row(c) for c in g.components] for g in self._rigid]
        initial_arts = [[(np.asarray(a.qpos, np.float32), np.asarray([j.drive_target for j in js], np.float32).reshape(-1),
                          a.get_root_pose()) for a, js in zip(g.articulations, g.joints)] for g in self._arts]
        system = self.system
        system.gpu_init()
        self._finalized = True
        dev = self.device
        self._body = system.cuda_rigid_body_data.torch()
        self._q = {k: getattr(system, f"cuda_articulation_{k}").torch()
                   for k in ("qpos", "qvel", "qf", "target_qpos", "target_qvel")}
        self._rigid_rows, self._rigid_dyn, self._rigid_static = [], [], []
        for group, rows0 in zip(self._rigid, initial_bodies):
            dynamic = [k != "static" for k in group.kinds]
            rows = [_gpu_index(system, c, pose=True) if d else -1 for c, d in zip(group.components, dynamic)]
            self._rigid_rows.append(torch.tensor(rows, dtype=torch.long, device=dev))
            self._rigid_dyn.append(torch.tensor([k == "rigid" for k in group.kinds], device=dev))
            self._rigid_static.append(None if all(dynamic) else torch.tensor(np.stack(rows0), device=dev))
        self._art_rows, self._link_rows, self._root_link, self._free_root = [], [], [], []
        for group in self._arts:
            self._free_root.append(torch.tensor([a.root.joint.type != "fixed" for a in group.articulations], device=dev))
            self._art_rows.append(torch.tensor([_gpu_index(system, a) for a in group.articulations],
                                               dtype=torch.long, device=dev))
            links = [[_gpu_index(system, l, pose=True) for l in links] for links in group.links]
            self._link_rows.append(torch.tensor(links, dtype=torch.long, device=dev))
            self._root_link.append([l.name for l in group.links[0]].index(group.articulations[0].root.name))
        self._fresh: set = set()
        self._kinematics_dirty = False
        self._pair_queries: dict = {}
        self._chains: dict = {}
        # Rule 1: the warm-start step moved things; write the built state back.
        self._body[:] = 0.0
        for q in self._q.values():
            q[:] = 0.0
        for gid, rows0 in enumerate(initial_bodies):
            rows, dyn = self._rigid_rows[gid], self._rigid_rows[gid] >= 0
            self._body[rows[dyn]] = torch.tensor(np.stack(rows0), device=dev)[dyn]
        for gid, states in enumerate(initial_arts):
            rows, dof = self._art_rows[gid], self._arts[gid].dof
            self._q["qpos"][rows, :dof] = torch.tensor(np.stack([s[0] for s in states]), device=dev)
            self._q["target_qpos"][rows, :dof] = torch.tensor(np.stack([s[1] for s in states]), device=dev)
            root = self._link_rows[gid][:, self._root_link[gid]]
            self._body[root, :7] = torch.tensor(np.stack([np.concatenate([s[2].p, s[2].q]) for s in states]),
                                                dtype=torch.float32, device=dev)
        if self._rigid:
            system.gpu_apply_rigid_dynamic_data()
        if self._arts:
            system.gpu_apply_articulation_root_pose()
            system.gpu_apply_articulation_root_velocity()
            for kind in ("qpos", "qvel", "qf", "target_position", "target_velocity"):
                getattr(system, f"gpu_apply_articulation_{kind}")()
            system.gpu_update_articulation_kinematics()
            system.gpu_fetch_articulation_target_qpos()
        # The buffers now hold what was applied; links are fetched on the first read.
        self._fresh.update(("bodies", "qpos", "qvel", "target_qpos"))

    @staticmethod
    def _entity_row(comp) -> np.ndarray:
        pose = comp.entity_pose
        return np.concatenate([pose.p, pose.q, np.zeros(6)]).astype(np.float32)

    # ------------------------------------------------------------------ fetch (rule 2)
    def _fetch(self, what: str) -> None:
        if what in self._fresh:
            return
        system = self.system
        if what == "links":
            if self._kinematics_dirty:
                system.gpu_update_articulation_kinematics()
                self._kinematics_dirty = False
            system.gpu_fetch_articulation_link_pose()
        elif what == "bodies":
            system.gpu_fetch_rigid_dynamic_data()
        else:
            getattr(system, f"gpu_fetch_articulation_{what}")()
        self._fresh.add(what)

    # ------------------------------------------------------------------ reads
    def rigid_state(self, gid: int) -> torch.Tensor:
        """float32 (N, 13) ``[x, y, z, qw, qx, qy, qz, vx, vy, vz, wx, wy, wz]``, world frame, fresh."""
        self._fetch("bodies")
        rows = self._rigid_rows[gid]
        static = self._rigid_static[gid]
        if static is None:
            return self._body[rows]
        out = static.clone()
        dyn = rows >= 0
        out[dyn] = self._body[rows[dyn]]
        return out

    def qpos(self, gid: int) -> torch.Tensor:
        """float32 (N, dof) joint positions, fresh."""
        return self._joint("qpos", gid)

    def qvel(self, gid: int) -> torch.Tensor:
        """float32 (N, dof) joint velocities, fresh."""
        return self._joint("qvel", gid)

    def drive_targets(self, gid: int) -> torch.Tensor:
        """float32 (N, dof) PD position targets, fresh."""
        return self._joint("target_qpos", gid)

    def _joint(self, what: str, gid: int) -> torch.Tensor:
        self._fetch(what)
        return self._q[what][self._art_rows[gid], : self._arts[gid].dof]

    def root_pose(self, gid: int) -> torch.Tensor:
        """float32 (N, 7) articulation root pose, world frame, fresh."""
        return self.link_pose(gid, self._root_link[gid])

    def root_velocity(self, gid: int) -> torch.Tensor:
        """float32 (N, 6) articulation root ``[v, w]``, world frame, fresh (zero for a fixed base)."""
        self._fetch("link_velocity")
        return self._body[self._link_rows[gid][:, self._root_link[gid]], 7:13]

    def link_pose(self, gid: int, link_index: int) -> torch.Tensor:
        """float32 (N, 7) world pose of link ``link_index`` in every env, fresh (rule 4)."""
        self._fetch("links")
        return self._body[self._link_rows[gid][:, link_index], :7]

    def contact_forces(self, gid: int, link_indices: tuple[int, ...], rigid_gid: int) -> torch.Tensor:
        """float32 (N, L, 3) net contact force [N], world frame, that the body of group
        ``rigid_gid`` exerts on each link in ``link_indices``, over the last PhysX step: a
        pair-impulse query (impulse on the pair's first body) divided by the timestep."""
        key = (gid, tuple(link_indices), rigid_gid)
        entry = self._pair_queries.get(key)
        if entry is None:
            bodies = self._rigid[rigid_gid].components
            pairs = [(self._arts[gid].links[i][l], bodies[i]) for i in range(self.num_envs) for l in link_indices]
            entry = self._pair_queries[key] = [self.system.gpu_create_contact_pair_impulse_query(pairs), -1, None]
        if entry[1] != self._steps:
            self.system.gpu_query_contact_pair_impulses(entry[0])
            impulses = entry[0].cuda_impulses.torch().reshape(self.num_envs, len(link_indices), 3)
            entry[1], entry[2] = self._steps, impulses / self.system.timestep
        out = entry[2].clone()
        if self._written.any():
            out[torch.from_numpy(self._written).to(self.device)] = 0.0
        return out

    def link_jacobian(self, gid: int, link_index: int) -> torch.Tensor:
        """float32 (N, 6, dof) Jacobian of link ``link_index`` at the current qpos, world frame
        (rows 0-2 linear velocity of the link origin, 3-5 angular velocity), batched on the
        device by ``pytorch_kinematics`` in float64 (the choice is measured in docs/gpu.md): the chain
        Jacobian in the root frame, rotated by each env's root orientation."""
        chain, columns = self._chain(gid, link_index)
        qpos = self.qpos(gid)
        local = chain.jacobian(qpos[:, columns].double()).float()
        rot = _quat_to_matrix(self.root_pose(gid)[:, 3:7])
        out = torch.zeros(self.num_envs, 6, self._arts[gid].dof, device=self.device)
        out[:, :3, columns] = rot @ local[:, :3]
        out[:, 3:, columns] = rot @ local[:, 3:]
        return out

    def _chain(self, gid: int, link_index: int):
        key = (gid, link_index)
        if key not in self._chains:
            import pytorch_kinematics as pk

            group = self._arts[gid]
            with open(group.urdf_path, "rb") as f:
                chain = pk.build_serial_chain_from_urdf(f.read(), group.link_names[link_index])
            # float64, as Pinocchio on physx_cpu: float32 chains differ by ~1e-6, which the IK
            # turns into 1e-5 differences of qvel within a few steps.
            chain = chain.to(dtype=torch.float64, device=str(self.device))
            names = chain.get_joint_parameter_names()
            columns = torch.tensor([group.joint_names.index(n) for n in names], dtype=torch.long, device=self.device)
            self._chains[key] = (chain, columns)
        return self._chains[key]

    # ------------------------------------------------------------------ writes (rule 3)
    def _rows_of(self, rows: torch.Tensor, env_ids) -> torch.Tensor:
        return rows[torch.as_tensor(np.asarray(env_ids), dtype=torch.long, device=self.device)]

    def _values(self, values) -> torch.Tensor:
        return torch.as_tensor(values, dtype=torch.float32, device=self.device)

    def _apply(self, kind: str, buffer: str, rows: Optional[torch.Tensor]) -> None:
        """``gpu_apply_<kind>``: the whole buffer, or the int32 ``rows`` when ``indexed_applies``."""
        method = getattr(self.system, f"gpu_apply_{kind}")
        if rows is None or not self.indexed_applies:
            method()
        else:
            method(rows.to(torch.int32).contiguous())

    def _prepare(self, buffer: str, partial: bool) -> None:
        if partial and not self.indexed_applies:
            self._fetch(buffer)  # the whole buffer is applied: the other rows must be current

    def set_rigid_pose(self, gid: int, env_ids: np.ndarray, pose) -> None:
        """Teleport the bodies of ``env_ids`` to ``pose`` (k, 7), world frame. Static bodies
        cannot move on the GPU: RuntimeError unless the pose is the one they have."""
        pose = self._values(pose)
        rows = self._rows_of(self._rigid_rows[gid], env_ids)
        static = rows < 0
        if bool(static.any()):
            ids = torch.as_tensor(np.asarray(env_ids), device=self.device)[static]
            if not torch.allclose(self._rigid_static[gid][ids, :7], pose[static], atol=1e-6):
                raise RuntimeError("static props cannot move on physx_cuda (PhysX GPU); make the prop kinematic")
            rows, pose = rows[~static], pose[~static]
        if len(rows):
            self._prepare("bodies", True)
            self._body[rows, :7] = pose
            self._apply("rigid_dynamic_data", "bodies", rows)
        self._wrote(env_ids)

    def set_rigid_velocity(self, gid: int, env_ids: np.ndarray, velocity) -> None:
        """Set ``[v, w]`` (k, 6) of the dynamic bodies of ``env_ids``; static/kinematic bodies ignore it."""
        keep = self._rigid_dyn[gid][torch.as_tensor(np.asarray(env_ids), dtype=torch.long, device=self.device)]
        rows = self._rows_of(self._rigid_rows[gid], env_ids)[keep]
        if len(rows):
            self._prepare("bodies", True)
            self._body[rows, 7:13] = self._values(velocity)[keep]
            self._apply("rigid_dynamic_data", "bodies", rows)
        self._wrote(env_ids)

    def _set_joint(self, buffer: str, kind: str, gid: int, env_ids, values) -> None:
        # "whole": every row of the buffer is written (all envs, and no other articulation group).
        whole = (env_ids is None or len(env_ids) == self.num_envs) and len(self._arts) == 1
        rows = self._art_rows[gid] if env_ids is None else self._rows_of(self._art_rows[gid], env_ids)
        self._prepare(buffer, not whole)
        self._q[buffer][rows, : self._arts[gid].dof] = self._values(values)
        self._apply(f"articulation_{kind}", buffer, None if whole else rows)
        if whole:
            self._fresh.add(buffer)
        if buffer != "target_qpos":  # a state write (drive targets change no state)
            self._wrote(np.arange(self.num_envs) if env_ids is None else env_ids)

    def set_qpos(self, gid: int, env_ids: np.ndarray, qpos) -> None:
        """Teleport joint positions (k, dof) of ``env_ids``; link poses follow on the next read."""
        self._set_joint("qpos", "qpos", gid, env_ids, qpos)
        self._kinematics_dirty = True
        self._fresh.discard("links")

    def set_qvel(self, gid: int, env_ids: np.ndarray, qvel) -> None:
        """Set joint velocities (k, dof) of ``env_ids``."""
        self._set_joint("qvel", "qvel", gid, env_ids, qvel)

    def set_drive_targets(self, gid: int, env_ids: Optional[np.ndarray], targets) -> None:
        """PD position targets (k, dof) for ``env_ids`` (None: all envs, k = N)."""
        self._set_joint("target_qpos", "target_position", gid, env_ids, targets)

    def set_root_pose(self, gid: int, env_ids: np.ndarray, pose) -> None:
        """Teleport the root link of ``env_ids`` to ``pose`` (k, 7), world frame; the other
        links follow on the next read (rule 4)."""
        ids = torch.as_tensor(np.asarray(env_ids), dtype=torch.long, device=self.device)
        self._prepare("links", True)
        self._body[self._link_rows[gid][ids, self._root_link[gid]], :7] = self._values(pose)
        self._apply("articulation_root_pose", "links", self._art_rows[gid][ids])
        self._kinematics_dirty = True
        self._fresh.discard("links")
        self._wrote(env_ids)

    def set_root_velocity(self, gid: int, env_ids: np.ndarray, velocity) -> None:
        """Set the root link's ``[v, w]`` (k, 6), world frame, for ``env_ids`` (a fixed base ignores it)."""
        ids = torch.as_tensor(np.asarray(env_ids), dtype=torch.long, device=self.device)
        free = self._free_root[gid][ids]
        ids, values = ids[free], self._values(velocity)[free]
        if len(ids):
            self._prepare("link_velocity", True)
            self._body[self._link_rows[gid][ids, self._root_link[gid]], 7:13] = values
            self._apply("articulation_root_velocity", "link_velocity", self._art_rows[gid][ids])
            self._fresh.discard("link_velocity")
        self._wrote(env_ids)

    # ------------------------------------------------------------------ stepping
    def step(self, substeps: int = 1, before=None, after=None) -> None:
        """Advance every env by ``substeps`` PhysX steps, calling ``before()``/``after()`` around
        each; every buffer but the drive targets is stale afterwards (rule 2)."""
        system = self.system
        if self._kinematics_dirty:
            system.gpu_update_articulation_kinematics()
            self._kinematics_dirty = False
        for _ in range(substeps):
            if before is not None:
                before()
            system.step()
            self._steps += 1
            self._written[:] = False
            self._fresh.intersection_update(("target_qpos",))
            if after is not None:
                after()
        self._version += 1

    # ------------------------------------------------------------------ rendering
    def update_render(self) -> None:
        """Copy the GPU poses to the entities (``sync_poses_gpu_to_cpu``) and update every env's
        render system (once per captured frame)."""
        self._require_render()
        if self._kinematics_dirty:
            self.system.gpu_update_articulation_kinematics()
            self._kinematics_dirty = False
        self.system.sync_poses_gpu_to_cpu()
        self._fresh.update(("bodies", "links"))  # it fetched both
        for scene in self.render_scenes:
            scene.update_render()

    def close(self) -> None:
        """Drop the queries and buffers, then remove every entity (see ``PhysxCpuBackend.close``)."""
        self._pair_queries, self._chains = {}, {}
        super().close()


def _quat_to_matrix(q: torch.Tensor) -> torch.Tensor:
    """(N, 3, 3) rotation matrices from (N, 4) unit quaternions ``[qw, qx, qy, qz]``."""
    w, x, y, z = q.unbind(-1)
    return torch.stack([
        1 - 2 * (y * y + z * z), 2 * (x * y - w * z), 2 * (x * z + w * y),
        2 * (x * y + w * z), 1 - 2 * (x * x + z * z), 2 * (y * z - w * x),
        2 * (x * z - w * y), 2 * (y * z + w * x), 1 - 2 * (x * x + y * y),
    ], -1).reshape(-1, 3, 3)
