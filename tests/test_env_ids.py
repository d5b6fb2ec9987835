"""normalize_env_ids: the one helper every env_ids argument goes through (DESIGN, Conventions)."""

import numpy as np
import pytest
import torch

from simulo_envs.env_ids import normalize_env_ids

N = 4


def forms_of_1_3():
    """Every accepted form of env ids {1, 3} out of 4 envs."""
    return {
        "list": [1, 3],
        "tuple": (1, 3),
        "numpy_int64": np.array([1, 3], dtype=np.int64),
        "numpy_int32": np.array([1, 3], dtype=np.int32),
        "numpy_uint8": np.array([1, 3], dtype=np.uint8),
        "torch_int64": torch.tensor([1, 3]),
        "torch_int32": torch.tensor([1, 3], dtype=torch.int32),
        "numpy_bool_mask": np.array([False, True, False, True]),
        "torch_bool_mask": torch.tensor([False, True, False, True]),
        "list_bool_mask": [False, True, False, True],
        "range": range(1, 4, 2),
    }


@pytest.mark.parametrize("form", list(forms_of_1_3()))
def test_every_form_gives_the_same_ids(form):
    ids = normalize_env_ids(forms_of_1_3()[form], N)
    assert isinstance(ids, np.ndarray)
    assert ids.dtype == np.int64
    assert ids.tolist() == [1, 3]


def test_none_means_all_envs():
    ids = normalize_env_ids(None, N)
    assert ids.dtype == np.int64
    assert ids.tolist() == [0, 1, 2, 3]


@pytest.mark.parametrize("value", [2, np.int64(2), np.int32(2), torch.tensor(2)])
def test_int_scalar(value):
    assert normalize_env_ids(value, N).tolist() == [2]


def test_order_is_kept():
    assert normalize_env_ids([3, 0, 2], N).tolist() == [3, 0, 2]
    assert normalize_env_ids(torch.tensor([3, 1]), N).tolist() == [3, 1]


@pytest.mark.parametrize("empty", [[], (), np.array([], dtype=np.int64), torch.tensor([], dtype=torch.long),
                                   np.array([]), torch.tensor([])])
def test_empty(empty):
    ids = normalize_env_ids(empty, N)
    assert ids.shape == (0,)
    assert ids.dtype == np.int64


def test_all_false_mask_is_empty():
    assert normalize_env_ids(np.zeros(N, dtype=bool), N).shape == (0,)
    assert normalize_env_ids(torch.ones(N, dtype=torch.bool), N).tolist() == [0, 1, 2, 3]


@pytest.mark.parametrize("bad", [4, -1, [0, 4], [-1], np.array([5]), torch.tensor([1, 100])])
def test_out_of_range_is_index_error(bad):
    with pytest.raises(IndexError, match="env_ids"):
        normalize_env_ids(bad, N)


@pytest.mark.parametrize("dup", [[1, 1], (0, 2, 0), np.array([3, 3]), torch.tensor([2, 2])])
def test_duplicates_are_value_error(dup):
    with pytest.raises(ValueError, match="duplicate"):
        normalize_env_ids(dup, N)


@pytest.mark.parametrize("bad", [1.0, [0.0, 1.0], np.array([0.5]), torch.tensor([1.0, 3.0]),
                                 "1", "abc", [None], True, False, np.bool_(True)])
def test_wrong_dtype_is_type_error(bad):
    with pytest.raises(TypeError, match="env_ids"):
        normalize_env_ids(bad, N)


@pytest.mark.parametrize("mask", [np.array([True, False]), torch.tensor([True] * 5), [True, False, True]])
def test_bool_mask_of_wrong_length_is_value_error(mask):
    with pytest.raises(ValueError, match=rf"\({N},\)"):
        normalize_env_ids(mask, N)


def test_two_dimensional_ids_are_value_error():
    with pytest.raises(ValueError, match="1-D"):
        normalize_env_ids(np.array([[0, 1]]), N)


def test_error_message_names_the_argument():
    with pytest.raises(IndexError, match="options\\['env_idx'\\]"):
        normalize_env_ids([9], N, name="options['env_idx']")


def test_result_is_not_a_view_of_the_input():
    src = np.array([1, 3], dtype=np.int64)
    ids = normalize_env_ids(src, N)
    ids[0] = 0
    assert src.tolist() == [1, 3]
