"""LeRobot's plugin discovery as a fresh process sees it, for the LeRobot plugins' tests.

LeRobot finds third-party plugins by their distribution names (``lerobot_env_*``,
``lerobot_robot_*``, ``lerobot_teleoperator_*``) when ``register_third_party_plugins()`` runs; only
a process that has imported none of them shows the choices appear then. One such process answers
every plugin's test of a pytest run (each Python start that imports LeRobot costs seconds of CPU).
"""

from __future__ import annotations

import functools
import json
import subprocess
import sys

PROBE = """
import json
from lerobot.envs.configs import EnvConfig
from lerobot.robots.config import RobotConfig
from lerobot.teleoperators.config import TeleoperatorConfig
from lerobot.utils.import_utils import register_third_party_plugins

kinds = {"env": EnvConfig, "robot": RobotConfig, "teleoperator": TeleoperatorConfig}
before = {kind: sorted(base.get_known_choices()) for kind, base in kinds.items()}
register_third_party_plugins()
after = {kind: {name: [cls.__module__, cls.__name__] for name, cls in base.get_known_choices().items()}
         for kind, base in kinds.items()}
print(json.dumps({"before": before, "after": after}))
"""


@functools.cache
def fresh_process_choices() -> dict:
    """LeRobot's config choices in a new Python process, before and after
    ``register_third_party_plugins()``: ``{"before": {kind: [choice name, ...]}, "after": {kind:
    {choice name: [module, class name]}}}`` for the kinds ``env``, ``robot`` and ``teleoperator``.
    Run once per test process (cached).

    Raises:
        subprocess.CalledProcessError: the process failed (its stderr is on the exception).
    """
    run = subprocess.run([sys.executable, "-c", PROBE], capture_output=True, text=True, timeout=300, check=True)
    return json.loads(run.stdout.strip().splitlines()[-1])
