#!/usr/bin/env bash
# The digest of an action folder's files (what the released image was built from), printed
# as `sha256:HEX`. The release workflow records it in image.lock; action.yml compares it
# with its own folder, so an image is used only for exactly the code it was built from (a
# fork, a branch or a SHA between releases builds its own image instead).
# Excluded: image.lock itself, VCS and local caches, node_modules.
set -euo pipefail
cd "${1:?usage: context-digest.sh ACTION-DIR}"
find . \( -path ./.git -o -path ./runners/node_modules -o -path ./.venv \
          -o -name __pycache__ -o -name .mypy_cache -o -name .pytest_cache \
          -o -name .ruff_cache -o -path './.copeca*' \) -prune \
       -o -type f ! -path ./image.lock -print0 \
  | LC_ALL=C sort -z \
  | xargs -0 -r sha256sum \
  | sha256sum \
  | { read -r hex _; echo "sha256:${hex}"; }
