"""Imitation learning pieces without an env: windows, normalisation, validation, augmentation,
denoisers, receding-horizon execution, configuration."""

import math

import pytest
import torch
import torch.nn.functional as F

from simulo_envs.imitation import DemonstrationError, Demonstrations, Episode, ILConfig, PolicySpec, Windows
from simulo_envs.imitation.config import default_config
from simulo_envs.imitation.denoisers import ConditionalUnet1D, MLPDenoiser, build_denoiser, timestep_embedding
from simulo_envs.imitation.encoders import (ConvEncoder, KeypointEncoder, Normalizer, ObsEncoder, random_shift,
                                           spatial_softmax)
from simulo_envs.imitation.policies import BCPolicy, DiffusionPolicy
from simulo_envs.imitation.rollout import ChunkRunner



pytestmark = pytest.mark.usefixtures("one_torch_thread")  # tests/conftest.py


SPEC = PolicySpec("FrankaPush-v1", "state", "pd_ee_delta_pos", state_dim=3, action_dim=2)


def _episode(length: int, start: float = 0.0) -> Episode:
    t = torch.arange(length, dtype=torch.float32).unsqueeze(1) + start
    return Episode(t.repeat(1, 3), t.repeat(1, 2) * 10, seed=int(start))


def _demos(*lengths: int) -> Demonstrations:
    return Demonstrations(SPEC, [_episode(n, 100.0 * i) for i, n in enumerate(lengths)], source="test")


def test_windows_pad_with_the_first_and_last_step_of_each_episode():
    windows = Windows(_demos(3, 2), obs_horizon=2, pred_horizon=4)
    assert len(windows) == 5
    batch = windows.batch(torch.tensor([0, 2, 3]))
    # episode 0, step 0: history [0, 0]; actions from step -1: [0, 0, 1, 2] (x10)
    assert batch["state"][0, :, 0].tolist() == [0.0, 0.0]
    assert batch["actions"][0, :, 0].tolist() == [0.0, 0.0, 10.0, 20.0]
    # episode 0, step 2: history [1, 2]; actions [1, 2, 2, 2]
    assert batch["state"][1, :, 0].tolist() == [1.0, 2.0]
    assert batch["actions"][1, :, 0].tolist() == [10.0, 20.0, 20.0, 20.0]
    # episode 1 (states 100, 101), step 0: never mixes in episode 0's frames
    assert batch["state"][2, :, 0].tolist() == [100.0, 100.0]
    assert batch["actions"][2, :, 0].tolist() == [1000.0, 1000.0, 1010.0, 1010.0]


def test_windows_of_one_step_are_the_plain_pairs():
    windows = Windows(_demos(3, 2), obs_horizon=1, pred_horizon=1)
    batch = windows.batch(torch.arange(5))
    assert batch["state"][:, 0, 0].tolist() == [0.0, 1.0, 2.0, 100.0, 101.0]
    assert batch["actions"][:, 0, 1].tolist() == [0.0, 10.0, 20.0, 1000.0, 1010.0]


def test_normalizer_maps_actions_to_the_unit_box_and_back():
    actions = torch.tensor([[0.0, -1.0], [2.0, -1.0], [1.0, -1.0]])
    state = torch.tensor([[1.0, 5.0], [3.0, 5.0], [2.0, 5.0]])
    norm = Normalizer(state, actions)
    assert norm.action(actions).tolist() == [[-1.0, 0.0], [1.0, 0.0], [0.0, 0.0]]   # constant gripper -> 0
    assert torch.allclose(norm.unaction(norm.action(actions)), actions)
    scaled = norm.state(state)
    assert torch.allclose(scaled[:, 0], torch.tensor([-1.0, 1.0, 0.0]) * math.sqrt(1.5), atol=1e-6)
    assert scaled[:, 1].tolist() == [0.0, 0.0, 0.0]   # constant column centred, not divided by 0


@pytest.mark.parametrize("count", [0, 1])
def test_fewer_than_two_episodes_are_refused(count):
    with pytest.raises(DemonstrationError, match=f"holds {count} episode"):
        _demos(*[3] * count).validate()


def test_a_nan_is_found_and_named():
    demos = _demos(3, 4)
    demos.episodes[1].state[2, 1] = float("nan")
    demos.state_names = ["qpos_0", "qpos_1", "cube_x"]
    with pytest.raises(DemonstrationError, match=r"episode 1: state holds nan at step 2, column qpos_1"):
        demos.validate()
    demos = _demos(3, 4)
    demos.episodes[0].actions[1, 0] = float("inf")
    with pytest.raises(DemonstrationError, match=r"episode 0: actions holds inf at step 1, column 0"):
        demos.validate()


def test_wrong_widths_and_empty_episodes_are_refused():
    demos = _demos(3, 4)
    demos.episodes[1].actions = torch.zeros(4, 3)
    with pytest.raises(DemonstrationError, match=r"episode 1: actions has shape \(4, 3\), expected \(4, 2\)"):
        demos.validate()
    demos = _demos(3, 4)
    demos.episodes[0] = Episode(torch.zeros(0, 3), torch.zeros(0, 2))
    with pytest.raises(DemonstrationError, match="episode 0 has no steps"):
        demos.validate()


def test_subset_keeps_the_first_episodes():
    demos = _demos(3, 4, 5)
    assert [len(e) for e in demos.subset(2).episodes] == [3, 4]
    with pytest.raises(DemonstrationError, match="has 3 episodes, 4 were asked"):
        demos.subset(4)


def test_random_shift_translates_by_whole_pixels_within_the_pad():
    image = torch.zeros(1, 1, 8, 8)
    image[0, 0, 4, 4] = 1.0
    torch.manual_seed(0)
    shifted = random_shift(image.repeat(64, 1, 1, 1), pad=2)
    assert shifted.shape == (64, 1, 8, 8)
    peaks = [tuple((s[0] == 1).nonzero()[0].tolist()) for s in shifted]
    offsets = {(r - 4, c - 4) for r, c in peaks}
    assert all(-2 <= dr <= 2 and -2 <= dc <= 2 for dr, dc in offsets)
    assert len(offsets) > 10   # many different offsets were drawn
    assert all(float(s.sum()) == 1.0 for s in shifted)


def test_conv_encoder_and_obs_encoder_shapes():
    encoder = ConvEncoder((64, 64), channels=(8, 16), feature_dim=32)
    assert encoder(torch.zeros(5, 3, 64, 64, dtype=torch.uint8)).shape == (5, 32)
    norm = Normalizer(torch.randn(10, 4), torch.randn(10, 2))
    obs = ObsEncoder(norm, obs_horizon=2, state_dim=4, image_size=(64, 64), channels=(8,), feature_dim=16)
    assert obs.cond_dim == 2 * (4 + 16)
    out = obs(torch.zeros(3, 2, 4), torch.zeros(3, 2, 3, 64, 64, dtype=torch.uint8))
    assert out.shape == (3, 40)
    with pytest.raises(ValueError, match="reads images"):
        obs(torch.zeros(3, 2, 4))


def test_spatial_softmax_finds_the_peak_and_the_keypoint_encoder_reads_images():
    maps = torch.zeros(2, 3, 16, 16)
    maps[0, 0, 3, 12] = 50.0          # row 3, column 12: a sharp peak
    maps[1, 2, 15, 0] = 50.0          # bottom-left corner
    points = spatial_softmax(maps)
    assert points.shape == (2, 3, 2)
    assert torch.allclose(points[0, 0], torch.tensor([-1 + 2 * 12 / 15, -1 + 2 * 3 / 15]), atol=1e-4)
    assert torch.allclose(points[1, 2], torch.tensor([-1.0, 1.0]), atol=1e-4)
    assert torch.allclose(points[0, 1], torch.zeros(2), atol=1e-6)   # a flat map: the centre
    encoder = KeypointEncoder((64, 64), channels=(8, 16), feature_dim=32, keypoints=6)
    assert encoder(torch.zeros(5, 3, 64, 64, dtype=torch.uint8)).shape == (5, 32)
    assert spatial_softmax(encoder.convs(torch.zeros(1, 3, 64, 64))).shape == (1, 6, 2)   # a 16x16 map
    norm = Normalizer(torch.randn(10, 4), torch.randn(10, 2))
    obs = ObsEncoder(norm, obs_horizon=2, state_dim=4, image_size=(64, 64), channels=(8, 16), feature_dim=16,
                     image_encoder="keypoints")
    assert isinstance(obs.image, KeypointEncoder)
    assert obs(torch.zeros(3, 2, 4), torch.zeros(3, 2, 3, 64, 64, dtype=torch.uint8)).shape == (3, 40)
    with pytest.raises(ValueError, match="image_encoder must be"):
        ILConfig(image_encoder="resnet")


def test_denoisers_keep_the_chunk_shape():
    chunk, steps, cond = torch.randn(4, 16, 3), torch.tensor([0, 5, 50, 99]), torch.randn(4, 10)
    assert ConditionalUnet1D(3, 10, down_dims=(16, 32, 64)).forward(chunk, steps, cond).shape == (4, 16, 3)
    assert MLPDenoiser(3, 10, 16, hidden=32, blocks=2).forward(chunk, steps, cond).shape == (4, 16, 3)
    with pytest.raises(ValueError, match="divisible by 4"):
        build_denoiser("unet", 3, 10, 10, down_dims=(16, 32, 64))
    with pytest.raises(ValueError, match="denoiser must be one of"):
        build_denoiser("transformer", 3, 10, 16)
    emb = timestep_embedding(torch.tensor([0, 1]), 8)
    assert emb[0].tolist() == [0.0] * 4 + [1.0] * 4


def test_config_checks_and_overrides():
    assert default_config("bc", "state").pred_horizon == 1
    assert default_config("diffusion", "rgb").batch_size == 64
    assert default_config("diffusion", "rgb").encoder_pretrain == 0.5
    assert default_config("diffusion", "state").encoder_pretrain == 0.0 == default_config("bc", "rgb").encoder_pretrain
    state = default_config("diffusion", "state")
    assert (state.obs_horizon, state.pred_horizon, state.action_horizon) == (2, 2, 1)   # measured, docs/imitation.md
    assert (ILConfig().pred_horizon, ILConfig().action_horizon) == (16, 8)   # the paper's
    with pytest.raises(ValueError, match="action_horizon 16 does not fit"):
        ILConfig(action_horizon=16)
    with pytest.raises(KeyError, match="unknown setting"):
        ILConfig().replace(learning_rate=1.0)
    # values of another type (as --set passes text it cannot read as a number): named, not a TypeError later
    for bad, message in ((dict(aux_bc_weight="abc"), "aux_bc_weight must be a number"),
                         (dict(batch_size=1.5), "batch_size must be a whole number"),
                         (dict(lr="abc"), "lr must be a number"), (dict(iterations=True), "iterations must be a whole"),
                         (dict(down_dims="abc"), "down_dims must be a list of whole numbers"),
                         (dict(image_encoder=3), "image_encoder must be str")):
        with pytest.raises(ValueError, match=message):
            ILConfig().replace(**bad)
    assert ILConfig(lr=1).lr == 1.0 and isinstance(ILConfig(lr=1).lr, float)
    config = ILConfig().replace(down_dims=[8, 16])
    assert ILConfig.from_dict(config.to_dict()) == config


@pytest.mark.parametrize("policy_cls,policy", [(BCPolicy, "bc"), (DiffusionPolicy, "diffusion")])
def test_policies_learn_a_constant_map(policy_cls, policy):
    torch.manual_seed(0)
    demos = _demos(6, 6)
    config = default_config(policy, "state", {"hidden": 64, "blocks": 2, "iterations": 200, "lr_warmup": 0})
    windows = Windows(demos, config.obs_horizon, config.pred_horizon)
    model = policy_cls(SPEC, config, Normalizer(windows.state, windows.actions))
    optimizer = torch.optim.Adam(model.parameters(), lr=3e-3)
    first = None
    for _ in range(200):
        loss = model.loss(windows.batch(torch.randint(len(windows), (32,))))
        first = first if first is not None else loss.item()
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
    assert loss.item() < 0.3 * first
    model.eval()
    chunk = model.plan(windows.state[windows.obs_index[:2]], generator=torch.Generator().manual_seed(0))
    assert chunk.shape == (2, config.action_horizon, 2)


class _CountingPolicy:
    """plan() returns chunks whose action value is (call number, step in chunk); records its inputs."""

    def __init__(self, obs_horizon, action_horizon):
        self.config = ILConfig(obs_horizon=obs_horizon, action_horizon=action_horizon, pred_horizon=16)
        self.calls = []

    def plan(self, state, image, generator):
        self.calls.append(state.clone())
        call = len(self.calls)
        steps = torch.arange(self.config.action_horizon, dtype=torch.float32)
        return torch.stack([torch.full_like(steps, call), steps], dim=1).expand(len(state), -1, -1).clone()


def test_chunk_runner_executes_chunks_and_replans_fresh_envs():
    policy = _CountingPolicy(obs_horizon=2, action_horizon=3)
    runner = ChunkRunner(policy, num_envs=2)
    fresh = torch.zeros(2, dtype=torch.bool)
    actions = [runner.act(torch.full((2, 1), float(t)), None, fresh) for t in range(3)]
    assert [a[0].tolist() for a in actions] == [[1, 0], [1, 1], [1, 2]]
    assert policy.calls[0][:, :, 0].tolist() == [[0, 0], [0, 0]]   # the first observation repeated
    # env 1's episode restarts at t=3: both plan (env 0's chunk is spent), env 1 with a repeated history
    action = runner.act(torch.full((2, 1), 3.0), None, torch.tensor([False, True]))
    assert action.tolist() == [[2, 0], [2, 0]]
    assert policy.calls[1][:, :, 0].tolist() == [[2, 3], [3, 3]]
    # env 1 restarts again mid-chunk: it alone plans
    action = runner.act(torch.full((2, 1), 4.0), None, torch.tensor([False, True]))
    assert action.tolist() == [[2, 1], [3, 0]]
    assert len(policy.calls[2]) == 1 and policy.calls[2][0, :, 0].tolist() == [4, 4]


def test_auxiliary_regression_adds_a_head_that_the_loss_trains():
    demos = _demos(6, 6)
    plain = default_config("diffusion", "state", {"hidden": 32, "blocks": 1})
    with_aux = plain.replace(aux_bc_weight=0.5)
    windows = Windows(demos, plain.obs_horizon, plain.pred_horizon)
    normalizer = Normalizer(windows.state, windows.actions)
    assert DiffusionPolicy(SPEC, plain, normalizer).aux_head is None
    torch.manual_seed(0)
    model = DiffusionPolicy(SPEC, with_aux, normalizer)
    assert "aux_head.weight" in model.state_dict()
    batch = windows.batch(torch.arange(8))
    torch.manual_seed(1)
    total = model.loss(batch)
    torch.manual_seed(1)   # the same noise and steps: the denoising term alone
    model.aux_head, head = None, model.aux_head
    denoising = model.loss(batch)
    model.aux_head = head
    cond = model.encoder(batch["state"])
    expected = F.mse_loss(head(cond), model.normalizer.action(batch["actions"]).flatten(1))
    assert torch.allclose(total, denoising + 0.5 * expected, atol=1e-6)
    total.backward()
    assert head.weight.grad is not None and head.weight.grad.abs().sum() > 0
    with pytest.raises(ValueError, match="aux_bc_weight"):
        ILConfig(aux_bc_weight=-1.0)
