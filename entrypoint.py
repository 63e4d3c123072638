#!/usr/bin/env python3
"""The container's entrypoint: action inputs → copeca_action → outputs, summary, comment.

Thin on purpose: everything lives in `copeca_action.github`, which reads the inputs and the
event, decides whether to run (forks, pull_request_target), publishes the result and
returns the exit code chosen by `fail-on`; `run_engine` runs, concludes and signs.

First it re-executes itself with the secret inputs out of its environment (they arrive
through a pipe): PID 1's /proc/1/environ then holds none of them.
"""

import sys

from copeca_action._util.seal import sealed_environ
from copeca_action.github import main, run_engine

if __name__ == "__main__":
    sys.exit(main(env=sealed_environ(), engine=run_engine))
