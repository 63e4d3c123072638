#!/usr/bin/env bash
# After image/build-local.sh WORKDIR: run the image's entrypoint in dry-run mode on a reduced
# demo scenario (a gin and a fastapi control task, 2 modes, 2 repetitions; Claude Code, and
# Codex with --codex) with no network, the workspace at /github/workspace and GitHub's
# variables set, then verify the signed bundle on the host. Prints the time of the dry run.
# Usage: image/smoke-dry-run.sh WORKDIR [--codex]
set -euo pipefail
here="$(cd "$(dirname "$0")/.." && pwd)"
work="${1:?usage: image/smoke-dry-run.sh WORKDIR [--codex]}"
shift
exec "${here}/.venv/bin/python" "${here}/image/local_image.py" dry-run "${work}" "$@"
