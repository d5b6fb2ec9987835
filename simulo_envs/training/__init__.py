"""Training and evaluation drivers for the RL libraries: what ``scripts/train.py``,
``scripts/train_sb3.py`` and ``scripts/evaluate.py`` run.

rsl-rl-lib's PPO (``rsl_rl_train.py``: the plan, the training loop, one process or one rank of
``torchrun``; ``rsl_rl_runner.py``, ``rsl_rl_ppo.py``, ``rsl_rl_env.py``), Stable-Baselines3's
PPO, SAC and TD3 (``sb3_train.py``, ``sb3_off_policy.py``), and the pieces they share: the task
named on a command line (``task_lookup.py``), training starts from expert states
(``start_states.py``), the log folder and its files (``run_files.py``), stop signals
(``interrupt.py``), the progress bar (``progress.py``), ``torch.distributed`` ranks
(``distributed.py``), checkpoint evaluation (``evaluation.py``) and the SO-101 suite's benchmark
protocol (``suite_benchmark.py``, run by ``scripts/benchmark_suite.py``). The envs come from
``simulo_envs.vector`` and the library adapters from ``simulo_envs.wrappers``; importing this
package imports no RL library.
"""
