"""``clip_action``, the first thing every CPU step runs, on each kind of torch tensor it takes:
the same clipped float32 array whatever the tensor's dtype, autograd flag or layout, and the
same refusals (no env needed: it is a pure function of the action and the bounds)."""

from __future__ import annotations

import numpy as np
import pytest
import torch

from simulo_envs.envs.actions import clip_action

LOW, HIGH = np.full(3, -1.0, np.float32), np.full(3, 1.0, np.float32)


@pytest.mark.parametrize("action", [
    torch.tensor([[0.5, 2.0, -3.0]]),
    torch.tensor([[0.5, 2.0, -3.0]], dtype=torch.float64),
    torch.tensor([[0.5, 2.0, -3.0]], dtype=torch.float16),
    torch.tensor([[0.5, 2.0, -3.0]], requires_grad=True),
    torch.tensor([[0.5, 2.0, -3.0]], dtype=torch.float64, requires_grad=True),
    torch.tensor([0.5, 2.0, -3.0]),  # (dim,) at one env
    torch.tensor([[0.5, 9.0], [2.0, 9.0], [-3.0, 9.0]])[:, 0][None],  # a strided view
], ids=["float32", "float64", "float16", "grad", "float64-grad", "unbatched", "view"])
def test_every_real_tensor_gives_the_clipped_float32_array(action):
    clipped = clip_action(action, 1, LOW, HIGH)
    assert clipped.dtype == np.float32 and clipped.shape == (1, 3)
    assert clipped.tolist() == [[0.5, 1.0, -1.0]]
    assert not action.isnan().any()  # the caller's tensor is not written


def test_integer_tensors_are_cast_and_clipped():
    assert clip_action(torch.tensor([[1, -2, 0]]), 1, LOW, HIGH).tolist() == [[1.0, -1.0, 0.0]]


@pytest.mark.parametrize("action, message", [
    (torch.tensor([[True, False, True]]), "real-valued, got dtype torch.bool"),
    (torch.tensor([[1j, 0, 0]]), "real-valued, got dtype torch.complex64"),
    (torch.tensor([[float("nan"), 0.0, 0.0]]), "NaN or inf"),
    (torch.tensor([[float("inf"), 0.0, 0.0]], dtype=torch.float64), "NaN or inf"),
    (torch.zeros(1, 4), r"shape \(1, 3\)"),
])
def test_bad_tensors_are_refused(action, message):
    with pytest.raises(ValueError, match=message):
        clip_action(action, 1, LOW, HIGH)
