"""The container's PID 1 holds the action's inputs in its environment, which any process of
the same user can read through /proc/1/environ, however the harness edits `os.environ`
later. `sealed_environ` re-executes the entrypoint once with the secret values taken out of
the environment and handed over through a pipe, read at once and closed: after it, no
process's /proc/<pid>/environ holds them.
"""

from __future__ import annotations

import json
import os
import sys
from collections.abc import Sequence

from copeca_action._util.scrub import drop_harness_secrets, env_secrets, register_secret

SEALED_ENV = "COPECA_SEALED_FD"
"""Set (to the pipe's fd) in the re-executed process."""


def sealed_environ(argv: Sequence[str] | None = None) -> dict[str, str]:
    """In a fresh process: re-exec with a scrubbed environment (does not return). In the
    re-executed one: the full environment (the public part plus the secrets from the pipe),
    with the secrets registered for scrubbing and absent from `os.environ`."""
    fd = os.environ.pop(SEALED_ENV, None)
    if fd is None:
        secrets = env_secrets()
        if not secrets:
            return dict(os.environ)
        read_end, write_end = os.pipe()
        data = json.dumps(secrets).encode()
        if len(data) > 60_000:  # a pipe holds 64 KiB: never block before the exec
            os.close(read_end)
            os.close(write_end)
            return dict(os.environ)
        os.write(write_end, data)
        os.close(write_end)
        os.set_inheritable(read_end, True)
        env = {k: v for k, v in os.environ.items() if k not in secrets}
        env[SEALED_ENV] = str(read_end)
        args = list(argv if argv is not None else [sys.executable, *sys.argv])
        os.execve(args[0], args, env)
    with os.fdopen(int(fd), "rb") as pipe:
        secrets = json.loads(pipe.read() or b"{}")
    for name, value in secrets.items():
        register_secret(f"env:{name}", value)
    full = {**os.environ, **secrets}
    drop_harness_secrets()
    return full
