"""Turn a script plus a seeded variant into the exact conversation to serve.

The plan is a pure function of (seed, script id, variant), so any request of a conversation
can be answered again, by any thread, after a restart, with the same reply.
"""

from __future__ import annotations

import hashlib
import random
from dataclasses import dataclass

from copeca_action.scripted._script import Action, Fault, Script, Step, Usage

DEFAULT_EXTRA_STEP = Step(text="Let me look around first.", tools=[Action(bash="ls")])


def derive(*parts: object) -> int:
    """A stable 31-bit integer from the parts (not Python's salted hash)."""
    text = "\x1f".join(str(p) for p in parts)
    return int.from_bytes(hashlib.sha256(text.encode()).digest()[:4], "big") & 0x7FFFFFFF


@dataclass(frozen=True)
class Plan:
    script: Script
    variant: int
    steps: list[Step]
    jitter: list[tuple[float, float, float, float]]
    """Per step: factors for input, output, cache_read, cache_write."""
    wrong_answer: bool
    extra_step: bool
    faults: list[Fault]
    """The script's faults that apply to this conversation (after their probability)."""

    def fault_for(self, step: int, attempt: int) -> Fault | None:
        """The fault to serve on `attempt` (1-based) of `step`, if any."""
        for fault in self.faults:
            if fault.step == step and (fault.times is None or attempt <= fault.times):
                return fault
        return None

    def usage(self, index: int, fallback: Usage) -> Usage:
        """The step's usage (or `fallback`), scaled by the variant's jitter."""
        base = self.steps[index].usage or fallback
        f_in, f_out, f_cr, f_cw = self.jitter[index]
        return Usage(input=round(base.input * f_in), output=max(1, round(base.output * f_out)),
                     cache_read=round(base.cache_read * f_cr),
                     cache_write=round(base.cache_write * f_cw))


def make_plan(script: Script, seed: int, variant: int) -> Plan:
    rng = random.Random(derive("plan", seed, script.id, variant))
    var = script.variation
    steps = list(script.steps)
    wrong = rng.random() < var.wrong_answer_probability
    extra = rng.random() < var.extra_step_probability
    if extra:
        steps.insert(len(steps) - 1, var.extra_step or DEFAULT_EXTRA_STEP)
    if wrong and var.wrong_answer is not None:
        last = steps[-1]
        steps[-1] = last.model_copy(update={"answer": var.wrong_answer})
    j = var.token_jitter
    jitter = [(rng.uniform(1 - j, 1 + j), rng.uniform(1 - j, 1 + j), rng.uniform(1 - j, 1 + j),
               rng.uniform(1 - j, 1 + j)) for _ in steps]
    faults = [f for f in script.faults if rng.random() < f.probability]
    return Plan(script=script, variant=variant, steps=steps, jitter=jitter,
                wrong_answer=wrong, extra_step=extra, faults=faults)
