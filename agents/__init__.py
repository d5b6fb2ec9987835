"""Robot agents, installed as simulo_envs.agents."""
