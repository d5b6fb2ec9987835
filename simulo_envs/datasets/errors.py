"""The exceptions of ``simulo_envs.datasets``: each names the file or folder and the problem."""

from __future__ import annotations


class DatasetError(Exception):
    """Base of every dataset error."""


class DatasetLayoutError(DatasetError, ValueError):
    """A file or folder does not follow its format's layout (missing, truncated, corrupt, an
    unknown version, arrays of the wrong shape); nothing of it is trusted."""


class DatasetExistsError(DatasetError, FileExistsError):
    """The output folder exists and may not be written: it is not a dataset, or it is a dataset
    and appending was not asked for. Nothing was written."""


class SchemaMismatchError(DatasetError, ValueError):
    """Episodes or trajectories of another env, observation mode, control mode or layout than
    the dataset (or the env) holds; the message lists the differences. Nothing was written."""


class DatasetWriteError(DatasetError, OSError):
    """Writing an episode failed (a full disk, a permission lost); the dataset holds the episodes
    written before it, complete, and nothing of the failed one."""
