"""A task's instruction: the one sentence a language-conditioned policy gets (LeRobot's task
string, the ``task`` our datasets store).

Two levels, each with one source:

- the task's sentence, ``task_instruction(env_cls)``: the class's ``task_instruction`` string
  when it has one, else the first sentence of its module docstring after ``"<env id>: "`` (a
  task described from another one, as in ``"FrankaLiftMixed-v1: FrankaLift-v1 with ..."``,
  takes its parent class's sentence), capitalised;
- each episode's sentence, ``env.instructions()`` (``BaseEnv``): one str per env for the episode it
  runs now. By default every env's is the task's sentence; a task whose sentence depends on what
  an episode drew (the colours of the SO table-top suite: "Put the red cube on the blue square.")
  overrides it. Read it after ``reset`` or after a step that reset some envs.
"""

from __future__ import annotations

import inspect
import re
import sys

from simulo_envs.envs.registration import REGISTERED


def task_instruction(env_cls: type, env_id: str = "") -> str:
    """The task's one-sentence instruction (module docstring); ``""`` when none is found.
    ``env_id`` is accepted for callers that have it and not needed."""
    del env_id
    for cls in inspect.getmro(env_cls):
        text = getattr(cls, "task_instruction", None)
        if isinstance(text, str) and text:
            return text
        module = sys.modules.get(cls.__module__)
        doc = (getattr(module, "__doc__", None) or "").strip()
        match = re.match(r"^([\w.-]+):\s*(.+?\.)(\s|$)", doc, re.S)
        if not match:
            continue
        sentence = " ".join(match.group(2).split())
        if any(sentence.startswith(other) for other in REGISTERED):
            continue  # a variant described from another task: its parent class has the sentence
        return sentence[0].upper() + sentence[1:]
    return ""


__all__ = ["task_instruction"]
