"""Where each env's state lives in the packed state of one or several ``PhysxCpuSystem``.

``PhysxCpuSystem.pack()`` (SAPIEN 3.0.3) serialises, as float32: every rigid dynamic body as
``[qw, qx, qy, qz, x, y, z, vx, vy, vz, wx, wy, wz]`` in the order of
``system.rigid_dynamic_components``; then every articulation, in creation order, as ``[root
q(4), root p(3), root vel(6), qpos(dof), qvel(dof), (drive target, drive velocity target) x
dof]``. The backend reads the concatenation of its systems' packs (one system, or one per env
with ``SimConfig.isolate_envs``) and gathers rows with the indices computed here once, at
finalize; ``check_layout`` compares them with SAPIEN's per-entity getters.
"""

from __future__ import annotations

import numpy as np

BODY = 13
# Framework layout [x, y, z, qw, qx, qy, qz, v(3), w(3)] from the packed [q, p, v, w].
BODY_PERM = np.array([4, 5, 6, 0, 1, 2, 3, 7, 8, 9, 10, 11, 12])
ROOT_PERM = np.array([4, 5, 6, 0, 1, 2, 3])


def pack_indices(systems: list, system_of_env: np.ndarray, rigid_groups: list, art_groups: list,
                 num_envs: int) -> tuple[list[np.ndarray], list[dict], int]:
    """Gather indices into the concatenated packs of ``systems``.

    Args:
        systems: the CPU systems, in pack-concatenation order.
        system_of_env: int (N,): the system each env lives in.
        rigid_groups: objects with ``components`` (one per env).
        art_groups: objects with ``dof``; their articulations were created group by group, env by env.

    Returns:
        ``(rigid_idx, art_idx, total)``: per rigid group an int64 (N, 13) index array (-1 for a
        body not in the packed state: static); per articulation group a dict of ``root`` (N, 7),
        ``root_vel`` (N, 6), ``qpos``/``qvel``/``target`` (N, dof) index arrays; the expected float count.
    """
    rigid_idx = [np.full((num_envs, BODY), -1, dtype=np.int64) for _ in rigid_groups]
    art_base = [np.zeros(num_envs, dtype=np.int64) for _ in art_groups]
    offset = 0
    for s, system in enumerate(systems):
        comps = list(system.rigid_dynamic_components)
        where = {id(c): k for k, c in enumerate(comps)}
        envs = np.flatnonzero(system_of_env == s)
        for rows, group in zip(rigid_idx, rigid_groups):
            for i in envs.tolist():
                k = where.get(id(group.components[i]))
                if k is not None:
                    rows[i] = offset + k * BODY + BODY_PERM
        offset += len(comps) * BODY
        for base, group in zip(art_base, art_groups):
            size = 13 + 4 * group.dof
            base[envs] = offset + size * np.arange(len(envs))
            offset += size * len(envs)
    art_idx = []
    for base, group in zip(art_base, art_groups):
        dof, b = group.dof, base[:, None]
        art_idx.append({"root": b + ROOT_PERM, "root_vel": b + 7 + np.arange(6), "qpos": b + 13 + np.arange(dof),
                        "qvel": b + 13 + dof + np.arange(dof), "target": b + 13 + 2 * dof + 2 * np.arange(dof)})
    return rigid_idx, art_idx, offset


def check_layout(packed: np.ndarray, expected_floats: int, rigid_idx: list, art_idx: list,
                 rigid_groups: list, art_groups: list) -> None:
    """Raise RuntimeError unless ``packed`` matches SAPIEN's per-entity getters at ``rigid_idx`` / ``art_idx``."""
    if packed.size != expected_floats:
        raise RuntimeError(f"physx_cpu: SAPIEN's packed state has {packed.size} floats, expected {expected_floats}; "
                           "this backend supports sapien==3.0.3 only")
    for rows, group in zip(rigid_idx, rigid_groups):
        for i, (comp, kind) in enumerate(zip(group.components, group.kinds)):
            if kind != "static" and not np.allclose(packed[rows[i, :3]], comp.entity_pose.p, atol=1e-5):
                raise RuntimeError("physx_cpu: packed rigid body layout differs from sapien==3.0.3's")
    for index, group in zip(art_idx, art_groups):
        for i in (0, len(group.articulations) - 1):
            if not np.allclose(packed[index["qpos"][i]], group.articulations[i].qpos, atol=1e-5):
                raise RuntimeError("physx_cpu: packed articulation layout differs from sapien==3.0.3's")
