"""What the server remembers: conversations, their turns and attempts, and the request log.

Only bookkeeping lives here (for `served()`, retries and the log); which reply to send is
rebuilt from the request and the seeded plan.
"""

from __future__ import annotations

import json
import threading
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, TextIO

from copeca_action.records import Tokens
from copeca_action.scripted._plan import Plan, derive, make_plan
from copeca_action.scripted._reply import Reply
from copeca_action.scripted._request import RequestView
from copeca_action.scripted._script import Script
from copeca_action.scripted._served import ServedConversation, ServedStep, ServedToolCall


def _add(a: Tokens, b: Tokens) -> Tokens:
    return Tokens(input=a.input + b.input, output=a.output + b.output,
                  cache_read=a.cache_read + b.cache_read,
                  cache_write=a.cache_write + b.cache_write)


@dataclass
class StepState:
    attempts: int = 0
    faults: list[str] = field(default_factory=list)
    reply: Reply | None = None


@dataclass
class Conversation:
    conv: int
    script: Script
    api: str
    model: str
    plan: Plan
    steps: dict[tuple[int, bool], StepState] = field(default_factory=dict)
    """By (script step, auxiliary): an auxiliary turn (ToolSearch) precedes its step."""

    def step(self, index: int, aux: bool = False) -> StepState:
        return self.steps.setdefault((index, aux), StepState())

    def snapshot(self) -> ServedConversation:
        steps: list[ServedStep] = []
        total = Tokens()
        calls: list[ServedToolCall] = []
        answer: str | None = None
        for index, aux in sorted(self.steps, key=lambda k: (k[0], not k[1])):
            st = self.steps[(index, aux)]
            reply = st.reply
            tokens = Tokens()
            step_calls: list[ServedToolCall] = []
            if reply is not None:
                u = reply.usage
                tokens = Tokens(input=u.input, output=u.output, cache_read=u.cache_read,
                                cache_write=u.cache_write)
                step_calls = [ServedToolCall(id=c.id, input=c.input, name=(
                    f"{c.namespace}__{c.name}" if c.namespace else c.name))
                              for c in reply.calls]
                total = _add(total, tokens)
                calls.extend(step_calls)
                if reply.final:
                    answer = reply.text
            steps.append(ServedStep(index=index, aux=aux, attempts=st.attempts,
                                    faults=list(st.faults),
                                    completed=reply is not None, tokens=tokens,
                                    text=reply.text if reply else None, tool_calls=step_calls,
                                    final=bool(reply and reply.final)))
        return ServedConversation(conv=self.conv, script=self.script.id, api=self.api,
                                  model=self.model,
                                  served_model=self.script.serves_model or self.model,
                                  variant=self.plan.variant,
                                  wrong_answer=self.plan.wrong_answer,
                                  extra_step=self.plan.extra_step, steps=steps, tokens=total,
                                  tool_calls=calls, answer=answer, completed=answer is not None)


class State:
    """Everything shared between handler threads, behind one lock."""

    def __init__(self, scripts: list[Script], seed: int, log_path: Path | None,
                 log_bodies: bool = False) -> None:
        self.scripts = scripts
        self.log_bodies = log_bodies
        self.seed = seed
        self.log_path = log_path
        self.lock = threading.RLock()
        self.stop = threading.Event()
        self.convs: dict[int, Conversation] = {}
        self.openings: dict[tuple[str, str], list[int]] = {}
        self.digests: dict[tuple[str, str], int] = {}
        self.plans: dict[tuple[str, int], Plan] = {}
        self.log: list[dict[str, Any]] = []
        self._log_file: TextIO | None = None

    def open(self) -> None:
        with self.lock:
            self.stop.clear()
            if self.log_path is not None and self._log_file is None:
                self._log_file = self.log_path.open("a", encoding="utf-8")

    def close(self) -> None:
        with self.lock:
            if self._log_file:
                self._log_file.close()
                self._log_file = None

    def record(self, entry: dict[str, Any]) -> None:
        with self.lock:
            entry["seq"] = len(self.log)
            self.log.append(entry)
            if self._log_file:
                self._log_file.write(json.dumps(entry, sort_keys=True) + "\n")
                self._log_file.flush()

    def select(self, view: RequestView) -> Script | None:
        best: Script | None = None
        for script in self.scripts:
            accepted = script.match.accepts(api=view.api, model=view.model, prompt=view.prompt,
                                            everything=view.everything,
                                            tools=view.tools + view.deferred)
            if accepted and (best is None
                             or script.match.specificity > best.match.specificity):
                best = script
        return best

    def plan(self, script: Script, variant: int) -> Plan:
        key = (script.id, variant)
        with self.lock:
            plan = self.plans.get(key)
            if plan is None:
                plan = self.plans[key] = make_plan(script, self.seed, variant)
            return plan

    def conversation(self, view: RequestView, script: Script, run_key: str | None,
                     session: str | None) -> tuple[Conversation, int]:
        """The conversation and step this request belongs to, opening one on a first request.

        A later request names its conversation in the tool-call ids of its history. A first
        request is a retry of the last conversation opened by the same CLI session (or, with
        no session header, the same opening text) when none of that conversation's turns
        completed; otherwise it opens a new conversation. Its variant comes from the run key
        when given, else from the opening text and how many conversations opened with it.
        """
        pos = view.position
        with self.lock:
            if pos is not None:
                conv = self.convs.get(pos.conv)
                if conv is None or conv.plan.variant != pos.variant:  # e.g. after a restart
                    conv = Conversation(pos.conv, script, view.api, view.model,
                                         self.plan(script, pos.variant))
                    self.convs[pos.conv] = conv
                return conv, pos.next_step
            ident = (script.id, session or run_key or view.digest)
            opened = self.openings.setdefault(ident, [])
            if opened:
                last = self.convs[opened[-1]]
                if not any(st.reply for st in last.steps.values()):
                    return last, 0
            if run_key:
                variant = derive("variant", self.seed, script.id, run_key)
            else:
                seen = self.digests.get((script.id, view.digest), 0)
                self.digests[(script.id, view.digest)] = seen + 1
                variant = derive("variant", self.seed, script.id, f"{view.digest}#{seen}")
            number = max(self.convs, default=0) + 1
            conv = Conversation(number, script, view.api, view.model,
                                 self.plan(script, variant))
            self.convs[number] = conv
            opened.append(number)
            return conv, 0
