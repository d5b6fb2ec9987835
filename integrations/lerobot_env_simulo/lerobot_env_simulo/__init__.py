from lerobot_env_simulo.config import SimuloEnv  # noqa: F401  (registers --env.type=simulo)
