"""The entrypoint's re-exec: after it, the process's own /proc/self/environ (what any
process of the same user reads as /proc/1/environ in the container) holds no secret input,
while the harness still has every value."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

_CHILD = """
import json, os, sys
from copeca_action._util.seal import sealed_environ
env = sealed_environ()
own = open(f"/proc/{os.getpid()}/environ", "rb").read()
fds = sorted(os.listdir(f"/proc/{os.getpid()}/fd"))
print(json.dumps({"pid": os.getpid(), "environ": own.decode(errors="replace"),
                  "token": env.get("INPUT_GITHUB_TOKEN"), "scenario": env.get("INPUT_SCENARIO"),
                  "in_os_environ": "INPUT_GITHUB_TOKEN" in os.environ,
                  "fds": len(fds)}))
"""


def test_reexec_takes_the_secret_inputs_out_of_the_process_environment(tmp_path: Path) -> None:
    script = tmp_path / "child.py"
    script.write_text(_CHILD)
    token = "ghs_" + "p" * 36
    env = {"PATH": os.environ["PATH"], "INPUT_GITHUB_TOKEN": token,
           "INPUT_SCENARIO": "corpus/scenarios/demo.yaml",
           "INPUT_ANTHROPIC_API_KEY": "planted-anthropic-key-123456",
           "PYTHONPATH": str(Path(__file__).resolve().parents[3])}
    proc = subprocess.run([sys.executable, str(script)], env=env, capture_output=True,
                          text=True, timeout=60, check=True)
    out = json.loads(proc.stdout)
    assert out["token"] == token  # the harness still has it
    assert out["scenario"] == "corpus/scenarios/demo.yaml"
    assert token not in out["environ"] and "planted-anthropic-key" not in out["environ"]
    assert "INPUT_SCENARIO=corpus/scenarios/demo.yaml" in out["environ"]  # settings stay
    assert not out["in_os_environ"]  # nor does a child process inherit it
