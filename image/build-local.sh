#!/usr/bin/env bash
# Build the action's image with podman, offline from any registry: a Debian bookworm base made
# here with debootstrap, the host's CA bundle passed as the `extra_ca` build secret (for
# TLS-intercepting proxies), then a smoke run of the entrypoint on a fork pull request event.
# Prints the time of each step and the image size.
# Usage: image/build-local.sh [WORKDIR]   (default: a new temp dir; needs root, podman,
#        runc, debootstrap; runners/package.json + package-lock.json must exist)
set -euo pipefail
here="$(cd "$(dirname "$0")/.." && pwd)"
work="${1:-$(mktemp -d /tmp/copeca-image.XXXXXX)}"
mkdir -p "${work}"
cat > "${work}/containers.conf" <<CONF
[containers]
default_ulimits = ["nofile=20000:20000", "nproc=4096:4096"]
[engine]
runtime = "runc"
cgroup_manager = "cgroupfs"
events_logger = "file"
CONF
cat > "${work}/storage.conf" <<CONF
[storage]
driver = "overlay"
graphroot = "${work}/graph"
runroot = "${work}/run"
CONF
export CONTAINERS_CONF="${work}/containers.conf" CONTAINERS_STORAGE_CONF="${work}/storage.conf"
mirror="$(sed -n 's/^URIs: *//p' /etc/apt/sources.list.d/debian.sources 2>/dev/null | head -1)"
mirror="${mirror:-http://deb.debian.org/debian}"
ca="${EXTRA_CA:-/etc/ssl/certs/ca-certificates.crt}"

step() { local t0=$SECONDS; "$@"; echo "time: $((SECONDS - t0)) s for: ${*:1:2}" >&2; }

if ! podman image exists localhost/debian:bookworm; then
  step debootstrap --variant=minbase bookworm "${work}/rootfs" "${mirror}" >"${work}/debootstrap.log"
  step bash -c "tar -C '${work}/rootfs' -c . | podman import - localhost/debian:bookworm >/dev/null"
fi
context="${work}/context"
rm -rf "${context}" && mkdir -p "${context}"
git -C "${here}" ls-files -z --cached --others --exclude-standard \
  | (cd "${here}" && xargs -0 tar -c) | tar -x -C "${context}"
step podman build --pull=never --network=host --format docker \
  --build-arg BASE_IMAGE=localhost/debian:bookworm \
  --secret "id=extra_ca,src=${ca}" -t localhost/copeca-action:local "${context}" \
  >"${work}/build.log"
podman image inspect localhost/copeca-action:local --format 'image size: {{.Size}} bytes'

# Smoke: a fork pull request without secrets must be skipped (exit 0) with outputs written.
mkdir -p "${work}/ws" "${work}/tmp"
python3 - "${here}" "${work}/tmp/event.json" <<'PY'
import json, sys, pathlib
root = pathlib.Path(sys.argv[1])
src = root.parent / "shared/contracts/webhook-payloads/pull_request.opened.json"
data = json.loads(src.read_text()) if src.is_file() else {
    "action": "opened", "number": 1, "repository": {"full_name": "o/r"},
    "pull_request": {"number": 1, "head": {"repo": {"full_name": "o/r"}}}}
data["pull_request"]["head"]["repo"]["full_name"] = "mallory/fork"
pathlib.Path(sys.argv[2]).write_text(json.dumps(data))
PY
: >"${work}/tmp/output"
step podman run --rm --pull=never --network=none --workdir /github/workspace \
  -v "${work}/ws:/github/workspace" -v "${work}/tmp:${work}/tmp" \
  -e GITHUB_WORKSPACE=/github/workspace -e "COPECA_HOST_WORKSPACE=${work}/ws" \
  -e GITHUB_ACTIONS=true -e GITHUB_EVENT_NAME=pull_request \
  -e "GITHUB_EVENT_PATH=${work}/tmp/event.json" -e "GITHUB_OUTPUT=${work}/tmp/output" \
  -e INPUT_SCENARIO=demo -e INPUT_COMMENT=never localhost/copeca-action:local
grep -A1 '^verdict<<' "${work}/tmp/output" | tail -1 | grep -qx skipped
echo "ok: image built and the entrypoint skipped a fork pull request (work dir: ${work})"
