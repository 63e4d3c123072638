#!/usr/bin/env bash
# Build the action's image with podman, offline from any registry: a Debian bookworm base made
# here with debootstrap (cached), the host's CA bundle as the `extra_ca` build secret (for
# TLS-intercepting proxies), then a smoke run of the entrypoint on a fork pull request event.
# Prints the time of each step and the image size. The work is image/local_image.py's, the
# same code as the CI test tests/integration/action/test_image.py.
# Usage: image/build-local.sh [WORKDIR] [--toolchains 0|1] [--fetch-snapshots 1|0|"REPO ..."]
#        (default: a new temp dir, no toolchains, every snapshot; needs root, podman, runc,
#        debootstrap and the project's venv: `make install`)
set -euo pipefail
here="$(cd "$(dirname "$0")/.." && pwd)"
work="${1:-$(mktemp -d /tmp/copeca-image.XXXXXX)}"
shift || true
py="${here}/.venv/bin/python"
"${py}" "${here}/image/local_image.py" build "${work}" "$@"
"${py}" "${here}/image/local_image.py" fork-smoke "${work}"
echo "work dir: ${work} (its podman storage is under ${work}/podman)"
