"""``EmulatedPhysxGpuSystem``: the subset of SAPIEN 3.0.3's ``PhysxGpuSystem`` that our GPU
backend calls, emulated on a ``PhysxCpuSystem`` with torch CPU tensors.

This is how the GPU code path (``simulo_envs/sim/physx_cuda.py``) is tested on machines without
a GPU, CI included: ``sim_backend="physx_cuda_emulated"`` runs that backend, unchanged, on this
class. SAPIEN's GPU library (``libPhysXGpu_64.so``) is not shipped with SAPIEN, so the real
``PhysxGpuSystem`` cannot run where it cannot be downloaded.

What is emulated, with SAPIEN 3.0.3's layouts (``allocateCudaBuffers`` in SAPIEN's
``physx_system.cpp``):

- ``cuda_rigid_body_data``: float32 ``(R + A * L, 13)`` rows ``[x, y, z, qw, qx, qy, qz, vx, vy,
  vz, wx, wy, wz]``: first the ``R`` rigid dynamic bodies (kinematic ones included) in the order
  of ``rigid_dynamic_components``, then ``L = max links`` rows per articulation, link ``k`` of
  articulation ``a`` at ``R + a * L + k``. ``cuda_rigid_dynamic_data`` views the first ``R`` rows.
- ``cuda_articulation_qpos / qvel / qf / qacc / target_qpos / target_qvel``: float32 ``(A, D)``,
  ``D = max dof``, row = the articulation's GPU index, columns past its dof are padding.
- GPU indices (SAPIEN keeps them on the components as ``gpu_index`` / ``gpu_pose_index``; this
  class cannot write SAPIEN's components and answers through ``emulated_gpu_indices``). The
  articulation order is deliberately the REVERSE of creation order, so code that assumes
  "env i is row i" fails here as it would on PhysX.

The documented rules this class enforces, so that a backend that breaks them fails in CI:

- Nothing works before ``gpu_init()`` (RuntimeError "GPU PhysX is not initialized."), which,
  like SAPIEN's, steps the simulation once; buffers start as NaN, not zeros.
- Buffers are stale until fetched: ``step()`` and ``gpu_apply_*`` never touch them; only the
  matching ``gpu_fetch_*`` copies the simulation into them.
- Link poses are stale after a qpos or root-pose apply until ``gpu_update_articulation_kinematics()``
  (or a step): a link-pose fetch in between returns the poses from before the write.
- ``gpu_apply_*()`` writes every row; ``gpu_apply_*(index_buffer)`` writes only the listed rows,
  and the index buffer must be a 1-D contiguous int32 tensor on the system's device (TypeError
  otherwise).
- A whole-buffer apply gives every body and articulation the row it holds; rows equal to the
  simulation's current state are left alone. PhysX disables sleeping in GPU (direct GPU API)
  scenes, so on the GPU rewriting a body's own values changes nothing (up to float rounding);
  on the CPU system a rewrite would wake a sleeping body, an effect the GPU does not have.
  (The CPU system's sleeping itself is kept, so that the emulator matches ``physx_cpu``: a
  resting body on the GPU may keep a small jitter that neither CPU backend shows.)
- ``index_quirks="sapien-3.0.3"`` reproduces what SAPIEN 3.0.3's published source does with
  index buffers instead of what its API promises: the indexed rigid-body apply compacts the
  listed rows but keeps their full-buffer positions, so body ``i`` receives compacted row ``i``
  (other data unless the indices are ``0..k-1``); the indexed joint applies (qpos, qvel, qf,
  targets) write articulations ``0..k-1`` whatever the indices say. Root pose and root velocity
  applies honour their indices in both modes.
"""

from __future__ import annotations

from typing import Optional

import numpy as np
import sapien
import sapien.physx as physx
import torch

from simulo_envs.sim.contacts import ContactPairQuery

_NOT_INIT = "GPU PhysX is not initialized."
_JOINT_BUFFERS = ("qpos", "qvel", "qf", "qacc", "target_qpos", "target_qvel")


class _Buffer:
    """Stands for SAPIEN's ``CudaArray``: ``.torch()`` is a tensor sharing the buffer's memory."""

    __slots__ = ("_tensor",)

    def __init__(self, tensor: torch.Tensor):
        self._tensor = tensor

    def torch(self) -> torch.Tensor:
        return self._tensor

    @property
    def shape(self) -> list[int]:
        return list(self._tensor.shape)


class _PairImpulseQuery:
    """Stands for ``PhysxGpuContactPairImpulseQuery``: ``cuda_impulses`` is float32 (k, 3)."""

    def __init__(self, pairs):
        self.pairs = [(a, b) for a, b in pairs]
        self.cuda_impulses = _Buffer(torch.zeros(len(self.pairs), 3))
        # each pair as one "env" with one link: the CPU backend's batched contact walk
        self.batched = ContactPairQuery([[a] for a, _ in self.pairs], [b for _, b in self.pairs])


class EmulatedGpuIndices:
    """GPU indices of components and articulations, with SAPIEN 3.0.3's values (see module doc)."""

    def __init__(self, body_index: dict, art_index: dict, rigid_count: int, max_links: int):
        self._body = body_index
        self._art = art_index
        self._rigid_count = rigid_count
        self._max_links = max_links

    def index(self, obj) -> int:
        """``gpu_index`` of a rigid dynamic component, or of an articulation."""
        if isinstance(obj, physx.PhysxArticulation):
            return self._art[id(obj)]
        if id(obj) not in self._body:
            raise RuntimeError("the body is not added to a GPU scene.")
        return self._body[id(obj)]

    def pose_index(self, comp) -> int:
        """``gpu_pose_index``: the body's row in ``cuda_rigid_body_data``."""
        if isinstance(comp, physx.PhysxArticulationLinkComponent):
            return self._rigid_count + self._art[id(comp.articulation)] * self._max_links + comp.index
        return self.index(comp)


class EmulatedPhysxGpuSystem(physx.PhysxCpuSystem):
    """A ``PhysxCpuSystem`` that answers the ``PhysxGpuSystem`` calls of our GPU backend.

    Args:
        index_quirks: ``"documented"`` (an indexed apply touches exactly the listed rows) or
            ``"sapien-3.0.3"`` (SAPIEN 3.0.3's indexed applies, see the module docstring).

    Scenes take it like any physics system: ``sapien.Scene([system, ...])``.
    """

    device = torch.device("cpu")

    def __init__(self, index_quirks: str = "documented"):
        physx.PhysxCpuSystem.__init__(self)
        if index_quirks not in ("documented", "sapien-3.0.3"):
            raise ValueError(f"index_quirks must be 'documented' or 'sapien-3.0.3', got {index_quirks!r}")
        self.index_quirks = index_quirks
        self.emulated_gpu_indices: Optional[EmulatedGpuIndices] = None
        self._initialized = False
        self._stale_links: dict = {}  # articulation row -> link poses (L, 7) from before a qpos write

    # ------------------------------------------------------------------ setup
    def gpu_init(self) -> None:
        """Step once (SAPIEN's warm start), assign GPU indices, allocate NaN-filled buffers."""
        super().step()
        bodies = list(self.rigid_dynamic_components)
        roots = [c for c in self.articulation_link_components if c.is_root]
        arts = [r.articulation for r in roots]
        self._bodies = bodies
        self._arts = list(reversed(arts))  # row a -> articulation (see the module docstring)
        self._links = [list(a.links) for a in self._arts]
        self._joints = [list(a.active_joints) for a in self._arts]
        r, a = len(bodies), len(arts)
        self._max_links = max((len(l) for l in self._links), default=0)
        self._max_dof = max((x.dof for x in arts), default=0)
        self.emulated_gpu_indices = EmulatedGpuIndices(
            {id(c): i for i, c in enumerate(bodies)}, {id(x): i for i, x in enumerate(self._arts)}, r, self._max_links)
        body = torch.full((r + a * self._max_links, 13), float("nan"))
        joints = torch.full((len(_JOINT_BUFFERS), a, self._max_dof), float("nan"))
        self._body_data = body
        self._joint_data = dict(zip(_JOINT_BUFFERS, joints))
        self._scratch = torch.full((max(r, 1), 13), float("nan"))  # SAPIEN's rigid-body apply scratch
        self._pack_layout(roots)
        self._initialized = True

    def _pack_layout(self, roots) -> None:
        # PhysxCpuSystem.pack(): per rigid dynamic body [q(4), p(3), v(3), w(3)], then per
        # articulation (in articulation_link_components order) [root pose(7), root vel(6),
        # qpos, qvel, (target pos, target vel) per joint].
        offset = 13 * len(self._bodies)
        starts = {}
        for root in roots:
            art = root.articulation
            starts[id(art)] = offset
            offset += 13 + 4 * art.dof
        self._pack_start = [starts[id(a)] for a in self._arts]
        self._pack_size = offset

    def _require_init(self) -> None:
        if not self._initialized:
            raise RuntimeError(_NOT_INIT)

    def step(self) -> None:
        """One PhysX step; buffers stay as they are (stale) until fetched."""
        if not self._initialized:
            raise RuntimeError("failed to step: gpu simulation is not initialized.")
        if len(self._bodies) != len(self.rigid_dynamic_components):
            raise RuntimeError("failed to step: gpu simulation is not initialized.")  # bodies added after gpu_init
        super().step()
        self._stale_links.clear()

    # ------------------------------------------------------------------ buffers
    @property
    def cuda_rigid_body_data(self) -> _Buffer:
        self._require_init()
        return _Buffer(self._body_data)

    @property
    def cuda_rigid_dynamic_data(self) -> _Buffer:
        self._require_init()
        return _Buffer(self._body_data[: len(self._bodies)])

    @property
    def cuda_articulation_link_data(self) -> _Buffer:
        self._require_init()
        return _Buffer(self._body_data[len(self._bodies):].view(len(self._arts), self._max_links, 13))

    def _joint_buffer(self, name: str) -> _Buffer:
        self._require_init()
        return _Buffer(self._joint_data[name])

    cuda_articulation_qpos = property(lambda self: self._joint_buffer("qpos"))
    cuda_articulation_qvel = property(lambda self: self._joint_buffer("qvel"))
    cuda_articulation_qf = property(lambda self: self._joint_buffer("qf"))
    cuda_articulation_qacc = property(lambda self: self._joint_buffer("qacc"))
    cuda_articulation_target_qpos = property(lambda self: self._joint_buffer("target_qpos"))
    cuda_articulation_target_qvel = property(lambda self: self._joint_buffer("target_qvel"))

    # ------------------------------------------------------------------ fetch
    def _packed(self) -> np.ndarray:
        packed = np.frombuffer(self.pack(), dtype=np.float32)
        if packed.size != self._pack_size:
            raise RuntimeError("emulator: SAPIEN's packed state layout differs from sapien==3.0.3's")
        return packed

    def gpu_fetch_rigid_dynamic_data(self) -> None:
        self._require_init()
        r = len(self._bodies)
        if r:
            rows = torch.from_numpy(self._packed()[: 13 * r].reshape(r, 13).copy())
            self._body_data[:r, :3] = rows[:, 4:7]
            self._body_data[:r, 3:7] = rows[:, 0:4]
            self._body_data[:r, 7:] = rows[:, 7:]

    def gpu_fetch_articulation_link_pose(self) -> None:
        self._require_init()
        base = len(self._bodies)
        for a, links in enumerate(self._links):
            stale = self._stale_links.get(a)
            for k, link in enumerate(links):
                if stale is not None:
                    self._body_data[base + a * self._max_links + k, :7] = torch.from_numpy(stale[k])
                else:
                    pose = link.entity_pose
                    self._body_data[base + a * self._max_links + k, :7] = torch.from_numpy(
                        np.concatenate([pose.p, pose.q]).astype(np.float32))

    def gpu_fetch_articulation_link_velocity(self) -> None:
        self._require_init()
        base = len(self._bodies)
        for a, links in enumerate(self._links):
            for k, link in enumerate(links):
                row = base + a * self._max_links + k
                self._body_data[row, 7:10] = torch.from_numpy(np.asarray(link.linear_velocity, np.float32))
                self._body_data[row, 10:13] = torch.from_numpy(np.asarray(link.angular_velocity, np.float32))

    def _fetch_joint(self, name: str, column) -> None:
        self._require_init()
        packed = self._packed()
        out = self._joint_data[name]
        for a, art in enumerate(self._arts):
            dof = art.dof
            out[a, :dof] = torch.from_numpy(packed[self._pack_start[a] + column(dof)].copy())

    def gpu_fetch_articulation_qpos(self) -> None:
        self._fetch_joint("qpos", lambda d: 13 + np.arange(d))

    def gpu_fetch_articulation_qvel(self) -> None:
        self._fetch_joint("qvel", lambda d: 13 + d + np.arange(d))

    def gpu_fetch_articulation_target_qpos(self) -> None:
        self._fetch_joint("target_qpos", lambda d: 13 + 2 * d + 2 * np.arange(d))

    def gpu_fetch_articulation_target_qvel(self) -> None:
        self._fetch_joint("target_qvel", lambda d: 14 + 2 * d + 2 * np.arange(d))

    # ------------------------------------------------------------------ apply
    def _rows(self, index_buffer, count: int) -> list[int]:
        self._require_init()
        if index_buffer is None:
            return list(range(count))
        if not isinstance(index_buffer, torch.Tensor) or index_buffer.device != self.device:
            raise TypeError(f"index buffer must be a tensor on {self.device}, got {type(index_buffer).__name__}"
                            + (f" on {index_buffer.device}" if isinstance(index_buffer, torch.Tensor) else ""))
        if index_buffer.dtype != torch.int32 or index_buffer.ndim != 1 or not index_buffer.is_contiguous():
            raise TypeError(f"index buffer must be a contiguous 1-D int32 tensor, got {index_buffer.dtype} "
                            f"of shape {tuple(index_buffer.shape)}")
        rows = index_buffer.tolist()
        if any(i < 0 or i >= count for i in rows):
            raise IndexError(f"index buffer holds an index outside [0, {count})")
        return rows

    def gpu_apply_rigid_dynamic_data(self, index_buffer: Optional[torch.Tensor] = None) -> None:
        rows = self._rows(index_buffer, len(self._bodies))
        data = self._body_data
        if index_buffer is None:
            self._scratch[: len(rows)] = data[rows]
            targets = [(i, data[i]) for i in rows]
        elif self.index_quirks == "sapien-3.0.3":
            self._scratch[: len(rows)] = data[rows]  # compacted, but PhysX reads row i for body i
            targets = [(i, self._scratch[i].clone()) for i in rows]
        else:
            targets = [(i, data[i]) for i in rows]
        for i, row in targets:
            self._write_body(self._bodies[i], row.numpy())

    @staticmethod
    def _write_body(comp, row: np.ndarray) -> None:
        pose = comp.entity_pose
        if not (np.array_equal(row[:3], pose.p) and np.array_equal(row[3:7], pose.q)):
            comp.entity.set_pose(sapien.Pose(p=row[:3], q=row[3:7]))
        if isinstance(comp, physx.PhysxRigidDynamicComponent) and not comp.kinematic:
            if not (np.array_equal(row[7:10], comp.linear_velocity) and np.array_equal(row[10:13], comp.angular_velocity)):
                comp.linear_velocity = row[7:10]
                comp.angular_velocity = row[10:13]

    def _joint_rows(self, index_buffer) -> list[int]:
        rows = self._rows(index_buffer, len(self._arts))
        if index_buffer is not None and self.index_quirks == "sapien-3.0.3":
            return list(range(len(rows)))  # SAPIEN 3.0.3 passes its own 0..A-1 list, cut to k
        return rows

    def _snapshot_links(self, rows) -> None:
        for a in rows:
            if a not in self._stale_links:
                self._stale_links[a] = [np.concatenate([l.entity_pose.p, l.entity_pose.q]).astype(np.float32)
                                        for l in self._links[a]]

    def gpu_apply_articulation_qpos(self, index_buffer: Optional[torch.Tensor] = None) -> None:
        rows = self._joint_rows(index_buffer)
        self._snapshot_links(rows)
        for a in rows:
            self._set_if_changed(self._arts[a], "qpos", self._joint_data["qpos"][a, : self._arts[a].dof].numpy())

    def gpu_apply_articulation_qvel(self, index_buffer: Optional[torch.Tensor] = None) -> None:
        for a in self._joint_rows(index_buffer):
            self._set_if_changed(self._arts[a], "qvel", self._joint_data["qvel"][a, : self._arts[a].dof].numpy())

    @staticmethod
    def _set_if_changed(art, what: str, value: np.ndarray) -> None:
        if not np.array_equal(getattr(art, what), value):
            setattr(art, what, value)

    def gpu_apply_articulation_qf(self, index_buffer: Optional[torch.Tensor] = None) -> None:
        for a in self._joint_rows(index_buffer):
            self._arts[a].set_qf(self._joint_data["qf"][a, : self._arts[a].dof].numpy())

    def gpu_apply_articulation_target_position(self, index_buffer: Optional[torch.Tensor] = None) -> None:
        for a in self._joint_rows(index_buffer):
            for joint, value in zip(self._joints[a], self._joint_data["target_qpos"][a].tolist()):
                joint.set_drive_target(value)

    def gpu_apply_articulation_target_velocity(self, index_buffer: Optional[torch.Tensor] = None) -> None:
        for a in self._joint_rows(index_buffer):
            for joint, value in zip(self._joints[a], self._joint_data["target_qvel"][a].tolist()):
                joint.set_drive_velocity_target(value)

    def gpu_apply_articulation_root_pose(self, index_buffer: Optional[torch.Tensor] = None) -> None:
        rows = self._rows(index_buffer, len(self._arts))
        self._snapshot_links(rows)
        base = len(self._bodies)
        for a in rows:
            row = self._body_data[base + a * self._max_links].numpy()
            self._arts[a].set_root_pose(sapien.Pose(p=row[:3], q=row[3:7]))

    def gpu_apply_articulation_root_velocity(self, index_buffer: Optional[torch.Tensor] = None) -> None:
        base = len(self._bodies)
        for a in self._rows(index_buffer, len(self._arts)):
            row = self._body_data[base + a * self._max_links].numpy()
            self._arts[a].set_root_linear_velocity(row[7:10])
            self._arts[a].set_root_angular_velocity(row[10:13])

    def gpu_update_articulation_kinematics(self) -> None:
        """Link poses follow the applied qpos / root poses from now on."""
        self._require_init()
        self._stale_links.clear()

    # ------------------------------------------------------------------ contacts and rendering
    def gpu_create_contact_pair_impulse_query(self, body_pairs) -> _PairImpulseQuery:
        """A query of the net impulse [N s] that body ``b`` exerts on body ``a``, per pair ``(a, b)``."""
        if not body_pairs:
            raise RuntimeError("failed to create contact query: empty body pairs")
        return _PairImpulseQuery(body_pairs)

    def gpu_query_contact_pair_impulses(self, query: _PairImpulseQuery) -> None:
        """Fill ``query.cuda_impulses`` from the contacts of the last step."""
        self._require_init()
        impulses = query.batched.impulses(self.get_contacts()).reshape(len(query.pairs), 3)
        query.cuda_impulses.torch().copy_(torch.from_numpy(impulses.astype(np.float32)))

    def sync_poses_gpu_to_cpu(self) -> None:
        """Fetch body and link poses (as SAPIEN's does); entities already hold the CPU poses."""
        self.gpu_fetch_rigid_dynamic_data()
        self.gpu_fetch_articulation_link_pose()
