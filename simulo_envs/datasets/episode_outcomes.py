"""Per-episode outcomes (the reset seed and the task's success) added to a LeRobot v3.0 dataset
that another program wrote, such as ``lerobot-record`` driving the simulated follower.

They go where our own writer puts them (``lerobot.py``, EPISODE COLUMNS): two columns of the
episode table ``meta/episodes/chunk-CCC/file-FFF.parquet``, ``seed`` (int64) and ``success``
(bool), null for an episode without an outcome. LeRobot's loader carries extra episode columns
along (``LeRobotDatasetMetadata`` keeps the table as it reads it), and ``read_lerobot`` reads
them as ``Dataset.seeds`` (-1 where null) and ``Dataset.successes`` (False where null). Each
file is rewritten whole and renamed over the old one (``atomic.py``).
"""

from __future__ import annotations

from typing import Mapping

from simulo_envs.datasets import atomic
from simulo_envs.datasets.errors import DatasetLayoutError
from simulo_envs.datasets.lerobot import INFO_PATH, chunk_files, load_json, read_parquet

OUTCOME_COLUMNS = ("seed", "success")


def write_episode_outcomes(root: str, outcomes: Mapping[int, Mapping[str, object]],
                           skip_unknown: bool = False) -> list[int]:
    """Set the ``seed`` and ``success`` episode columns of the LeRobot dataset at ``root``.

    Args:
        outcomes: episode index -> ``{"seed": int, "success": bool}`` (either may be absent);
            episodes not named keep their values (null for a new column).
        skip_unknown: leave out the episodes the dataset does not hold (an episode its writer
            discarded) instead of raising.

    Returns:
        The episode indices written, sorted.

    Raises:
        DatasetLayoutError: ``root`` is not a LeRobot v3.0 dataset, or has no episode table.
        ValueError: an episode index the dataset does not hold (unless ``skip_unknown``), or an
            unknown column name; nothing is written.
    """
    import pyarrow as pa
    import pyarrow.parquet as pq

    load_json(root, INFO_PATH)  # a dataset folder, or DatasetLayoutError naming the file
    files = [path for _, _, path in chunk_files(root, "meta/episodes", ".parquet")]
    if not files:
        raise DatasetLayoutError(f"{root}: no meta/episodes/chunk-*/file-*.parquet (no episode saved)")
    tables = {path: read_parquet(path) for path in files}
    held = {i for table in tables.values() for i in table["episode_index"].to_pylist()}
    unknown = sorted(set(outcomes) - held)
    if skip_unknown:
        outcomes, unknown = {i: row for i, row in outcomes.items() if i in held}, []
    if unknown:
        raise ValueError(f"episodes {unknown} are not in {root} (it holds {len(held)} episodes)")
    bad = sorted({k for row in outcomes.values() for k in row} - set(OUTCOME_COLUMNS))
    if bad:
        raise ValueError(f"unknown outcome columns {bad}; the columns are {list(OUTCOME_COLUMNS)}")
    types = {"seed": pa.int64(), "success": pa.bool_()}
    for path, table in tables.items():
        index = table["episode_index"].to_pylist()
        for name in OUTCOME_COLUMNS:
            old = table[name].to_pylist() if name in table.column_names else [None] * len(index)
            new = [outcomes[i].get(name, v) if i in outcomes else v for i, v in zip(index, old)]
            column = pa.array([None if v is None else (int(v) if name == "seed" else bool(v)) for v in new],
                              types[name])
            if name in table.column_names:
                table = table.set_column(table.column_names.index(name), name, column)
            else:
                table = table.append_column(name, column)
        with atomic.atomic_path(path) as tmp:
            pq.write_table(table, tmp)
    return sorted(outcomes)
