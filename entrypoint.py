#!/usr/bin/env python3
"""The container's entrypoint: action inputs → copeca_action → outputs, summary, comment.

Thin on purpose: everything lives in `copeca_action.github`, which reads the inputs and the
event, decides whether to run (forks, pull_request_target), publishes the result and
returns the exit code chosen by `fail-on`; `run_engine` runs, concludes and signs.
"""

import sys

from copeca_action.github import main, run_engine

if __name__ == "__main__":
    sys.exit(main(engine=run_engine))
