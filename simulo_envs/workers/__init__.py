"""Worker processes: a batch of envs split into shards, one shard per process, stepped together.

``ShardedEnv`` (``sharded.py``) is a batched env like the in-process one (same spaces, same
``reset``/``step`` contract, env ``k``'s episode depending only on its seed) whose envs live in
``num_workers`` spawned processes; ``SimuloVectorEnv(num_workers=...)`` builds it. Each worker
runs ``worker_main`` (``worker.py``) on its shard; observations, rewards and infos come back
through shared memory laid out once per field (``worker.py``'s ``Field``), the control messages
through a pipe (``shard_link.py``), and the shards' results are put back together by row
(``shard_results.py``). Nothing here knows Gymnasium's vector API or any RL library.
"""
