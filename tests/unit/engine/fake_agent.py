"""A stand-in agent CLI for scheduler tests: prints Claude-style stream-json. What it does is
read from a JSON object after `FAKE` in its prompt (`-p PROMPT`):

answer (str), cost (float), exit (int), sleep (s), garbage (bool: print non-JSON only),
tools ([[name, input], ...]), turns ([[input, cache_read], ...]), output_tokens (int),
edit ([file, old, new]), piddir (str: write our pid there, when the folder is seen),
touch (str: create this file), sleep_before_result (s: sleep after the turns are printed,
before the closing `result` line, as a CLI waiting for its last model request),
sleep_once (str: a folder the agent can write; sleep_before_result applies only to the first
run that finds no `slept` marker there, which leaves one),
endpoint_error_once (str: a folder the agent can write; the first run that finds no marker
there leaves one and ends as an endpoint failure does, HTTP 529 after its turns, having spent
`failed_cost`, default `cost`: an infra_error the harness retries),
mcp_failed (str: system/init lists this MCP server with status `failed`, as Claude Code does),
env_file (str: write the environment there, as JSON; a relative path is in its HOME, which
isolation keeps visible, in the run's folder), shell (str: run it with `sh -c` in the working
folder first, as an agent's tool call would).
FAKE_COST_SCALE in the environment multiplies the reported cost (a cheaper arm).
"""

import json
import os
import subprocess
import sys
import time


def main() -> int:
    argv = sys.argv[1:]
    prompt = argv[argv.index("-p") + 1] if "-p" in argv else ""
    spec = json.loads(prompt.split("FAKE", 1)[1]) if "FAKE" in prompt else {}
    model = argv[argv.index("--model") + 1] if "--model" in argv else "fake-model"
    if spec.get("shell"):
        subprocess.run(["sh", "-c", spec["shell"]], check=False)
    if spec.get("piddir") and os.path.isdir(spec["piddir"]):  # an isolated agent's /tmp is
        # blank: the folder is then not there, and the test finds the agent by its command line
        with open(os.path.join(spec["piddir"], str(os.getpid())), "w") as fh:
            fh.write(os.getcwd())
    if spec.get("touch"):
        open(spec["touch"], "w").close()
    if spec.get("env_file"):
        with open(os.path.join(os.environ["HOME"], spec["env_file"]), "w") as fh:
            json.dump(dict(os.environ), fh)
    if spec.get("sleep"):
        time.sleep(float(spec["sleep"]))
    if spec.get("garbage"):
        print("this is not json {{{")
        print("Traceback (most recent call last): segfault")
        return int(spec.get("exit", 0))
    if spec.get("edit"):
        path, old, new = spec["edit"]
        with open(path) as fh:
            text = fh.read()
        with open(path, "w") as fh:
            fh.write(text.replace(old, new))

    def emit(obj: dict) -> None:
        print(json.dumps(obj), flush=True)

    init = {"type": "system", "subtype": "init", "cwd": os.getcwd(), "model": model,
            "claude_code_version": "0.0.0-fake", "tools": ["Read", "Bash"], "session_id": "s"}
    if spec.get("mcp_failed"):
        init["mcp_servers"] = [{"name": spec["mcp_failed"], "status": "failed"}]
    emit(init)
    turns = spec.get("turns") or [[100, 0]]
    tools = spec.get("tools") or []
    out_tokens = int(spec.get("output_tokens", 20))
    total = {"input_tokens": 0, "output_tokens": 0, "cache_creation_input_tokens": 0,
             "cache_read_input_tokens": 0}
    for i, (inp, cread) in enumerate(turns):
        usage = {"input_tokens": inp, "output_tokens": out_tokens,
                 "cache_creation_input_tokens": 0, "cache_read_input_tokens": cread}
        for k, v in usage.items():
            total[k] += v
        last = i == len(turns) - 1
        calls = [] if last else (tools if i == 0 else [])
        content = [{"type": "text", "text": f"step {i}"}]
        content += [{"type": "tool_use", "id": f"t{i}_{j}", "name": n, "input": inp_}
                    for j, (n, inp_) in enumerate(calls)]
        emit({"type": "assistant", "message": {"id": f"m{i}", "model": model,
              "role": "assistant", "content": content, "usage": usage}})
        if calls:
            emit({"type": "user", "message": {"role": "user", "content": [
                {"type": "tool_result", "tool_use_id": f"t{i}_{j}", "content": "ok"}
                for j in range(len(calls))]}})
    if spec.get("sleep_before_result") and (
            not spec.get("sleep_once") or _first(spec["sleep_once"], "slept")):
        time.sleep(float(spec["sleep_before_result"]))
    code = int(spec.get("exit", 0))
    cost = float(spec.get("cost", 0.01))
    status = {}
    if spec.get("endpoint_error_once") and _first(spec["endpoint_error_once"]):
        code, cost = 1, float(spec.get("failed_cost", cost))
        status = {"api_error_status": 529, "result": "API Error: 529 Overloaded"}
    emit({"type": "result", "subtype": "success" if code == 0 else "error_during_execution",
          "is_error": code != 0, "num_turns": len(turns), "duration_ms": 5,
          "result": spec.get("answer", "done"), "total_cost_usd": cost
          * float(os.environ.get("FAKE_COST_SCALE", "1")),
          "usage": total, "session_id": "s", **status})
    return code


def _first(folder: str, marker: str = "failed") -> bool:
    """True once per folder and marker: the run that creates the marker."""
    try:
        os.close(os.open(os.path.join(folder, marker), os.O_CREAT | os.O_EXCL | os.O_WRONLY))
    except FileExistsError:
        return False
    return True


if __name__ == "__main__":
    sys.exit(main())
