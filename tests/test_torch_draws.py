"""Per-env torch draws (``simulo_envs/envs/torch_rng.py``): rows from each env's generator."""

import pytest
import torch

from simulo_envs.envs.rng import EpisodeRNG
from simulo_envs.envs.torch_rng import per_env_torch_draws


def gens(*seeds):
    return [torch.Generator().manual_seed(s) for s in seeds]


def test_factory_rows_come_from_each_generator():
    with per_env_torch_draws(gens(1, 2, 3)):
        x = torch.rand(3, 4)
        y = torch.randn((3, 2), dtype=torch.float64)
        z = torch.randint(0, 100, (3, 5))
        w = torch.randint(7, size=(3,))
    for row, seed in enumerate((1, 2, 3)):
        g = torch.Generator().manual_seed(seed)
        assert torch.equal(x[row], torch.rand(4, generator=g))
        assert torch.equal(y[row], torch.randn(2, generator=g, dtype=torch.float64))
        assert torch.equal(z[row], torch.randint(0, 100, (5,), generator=g))
        assert torch.equal(w[row], torch.randint(7, (), generator=g))
    assert y.dtype == torch.float64 and z.dtype == torch.int64 and w.shape == (3,)


def test_row_k_of_a_batch_equals_a_single_env_draw():
    with per_env_torch_draws(gens(10, 11, 12)):
        batch = torch.rand(3, 2)
        batch_normal = torch.normal(torch.zeros(3, 2), 1.0)
    with per_env_torch_draws(gens(12)):
        single = torch.rand(1, 2)
        single_normal = torch.normal(torch.zeros(1, 2), 1.0)
    assert torch.equal(batch[2], single[0])
    assert torch.equal(batch_normal[2], single_normal[0])


def test_like_inplace_and_tensor_input_draws_are_per_row():
    x = torch.zeros(2, 3)
    with per_env_torch_draws(gens(5, 6)):
        a = torch.rand_like(x)
        b = torch.zeros(2, 3).uniform_(-1, 1)
        c = torch.bernoulli(torch.full((2, 4), 0.5))
        d = torch.distributions.Uniform(torch.zeros(2, 3), torch.ones(2, 3)).sample()
    g = torch.Generator().manual_seed(6)
    assert torch.equal(a[1], torch.rand(3, generator=g))
    g = torch.Generator().manual_seed(6)
    torch.rand(3, generator=g)  # a's row came first from this generator
    assert torch.equal(b[1], torch.empty(3).uniform_(-1, 1, generator=g))
    assert c.shape == (2, 4) and set(c.unique().tolist()) <= {0.0, 1.0}
    assert d.shape == (2, 3) and bool(((d >= 0) & (d < 1)).all())


def test_other_shapes_draw_whole_from_the_first_generator():
    with per_env_torch_draws(gens(4, 9)):
        v = torch.rand(5)
        s = torch.randn(())
        p = torch.randperm(6)
    g = torch.Generator().manual_seed(4)
    assert torch.equal(v, torch.rand(5, generator=g))
    assert torch.equal(s, torch.randn((), generator=g))
    assert torch.equal(p, torch.randperm(6, generator=g))


def test_explicit_generator_is_left_alone_and_global_rng_is_restored():
    torch.manual_seed(0)
    expected = torch.rand(3)
    torch.manual_seed(0)
    mine = torch.Generator().manual_seed(77)
    with per_env_torch_draws(gens(1, 2)):
        own = torch.rand(2, 2, generator=mine)
        torch.nn.init.uniform_(torch.empty(2, 2))  # drawn from the forked global generator
    assert torch.equal(own, torch.rand(2, 2, generator=torch.Generator().manual_seed(77)))
    assert torch.equal(torch.rand(3), expected)  # the global stream did not move


def test_requested_dtype_and_shape_kept_and_no_envs_is_a_no_op():
    with per_env_torch_draws([]):
        x = torch.rand(2, 2)
    assert x.shape == (2, 2)
    with per_env_torch_draws(gens(3, 4)):
        y = torch.rand(2, 3, 4, dtype=torch.float16)
    assert y.shape == (2, 3, 4) and y.dtype == torch.float16


def test_episode_rng_seed_and_draw_episode_seeds():
    rng = EpisodeRNG(3)
    assert rng.main_seeds.tolist() == [2022, 2023, 2024]
    rng.seed([1], [50])
    assert rng.episode_seeds.tolist() == [2022, 50, 2024]
    rng.draw_episode_seeds([0, 1])
    other = EpisodeRNG(1, [50])
    other.draw_episode_seeds([0])
    assert rng.episode_seeds[1] == other.episode_seeds[0]  # env 1's main stream = a single env's
    batch = rng.batched[[0, 2]].uniform(0, 1, size=(2,))
    assert batch.shape == (2, 2)
    with pytest.raises(AttributeError):
        rng.batched.no_such_method
