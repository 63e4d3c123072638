#!/usr/bin/env bash
# Which image runs the benchmark; writes `image=REF` to $GITHUB_OUTPUT.
#
# - RUNNER_IMAGE set to a reference: that image. `build`: build this action's Dockerfile.
# - Else image.lock in this action's own folder (ACTION_PATH: right for nested composite
#   actions, SHA pins and forks, unlike github.action_repository/action_ref): when its
#   `context` equals this folder's files (image/context-digest.sh) and it has a digest for
#   this runner's architecture, pull `IMAGE@DIGEST` and, when `gh` is installed, verify its
#   build provenance (`gh attestation verify`). A pull that fails stops with what to do.
# - No lock, other code or no digest for this architecture: build the Dockerfile, saying so.
set -euo pipefail
: "${ACTION_PATH:?}" "${GITHUB_OUTPUT:?}"
here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
lock="${ACTION_PATH}/image.lock"

emit() { echo "image=$1" >> "${GITHUB_OUTPUT}"; }

build() {
  local tag="copeca-action:local-${GITHUB_RUN_ID:-0}"
  echo "::notice title=copeca-action::$1: building the action's Dockerfile on this runner (several minutes; the published image is used when the action's code is a release, see docs/action.md#the-image)"
  docker build --tag "${tag}" "${ACTION_PATH}"
  emit "${tag}"
}

case "${RUNNER_IMAGE:-}" in
  "") ;;
  build) build "runner-image: build"; exit 0 ;;
  *) emit "${RUNNER_IMAGE}"; exit 0 ;;
esac

if [ ! -f "${lock}" ]; then
  build "no image.lock in ${ACTION_PATH} (not a release)"
  exit 0
fi
field() { sed -n "s/^$1[[:space:]]\{1,\}//p" "${lock}" | head -n 1; }
case "$(uname -m)" in
  x86_64|amd64) arch=amd64 ;;
  aarch64|arm64) arch=arm64 ;;
  *) arch="$(uname -m)" ;;
esac
version="$(field version)"
image="$(field image)"
digest="$(field "${arch}")"
locked="$(field context)"
actual="$("${here}/context-digest.sh" "${ACTION_PATH}")"
if [ "${locked}" != "${actual}" ]; then
  build "this action's files (${actual:0:19}) are not those of release ${version} (${locked:0:19}): a fork, a branch or a commit between releases"
  exit 0
fi
if [ -z "${digest}" ] || [ -z "${image}" ]; then
  build "release ${version} has no image for ${arch}"
  exit 0
fi
case "${digest}" in
  sha256:[0-9a-f]*) ;;
  *) echo "::error title=copeca-action::${lock}: ${arch} digest '${digest}' is not sha256:HEX"; exit 1 ;;
esac
ref="${image}@${digest}"
echo "copeca-action ${version}: pulling ${ref} (${arch})"
if ! out="$(docker pull "${ref}" 2>&1)"; then
  echo "${out}" | tail -n 5
  cat <<MSG
::error title=copeca-action::could not pull ${ref}. What to do: (1) if the package is private (GHCR makes a new package private), make it public under the package's settings, or log in first with a token that can read it (docker/login-action with packages: read); (2) behind a registry mirror or offline, set runner-image to an image you host, or runner-image: build to build the Dockerfile here.
MSG
  exit 1
fi
if command -v gh >/dev/null 2>&1; then
  repo="$(field repository)"
  if ! gh attestation verify "oci://${ref}" --repo "${repo}" >/dev/null 2>"${RUNNER_TEMP:-/tmp}/copeca-attest.err"; then
    echo "::error title=copeca-action::${ref}: its build provenance does not verify against ${repo} ($(tail -n 1 "${RUNNER_TEMP:-/tmp}/copeca-attest.err")). Not running an image of unknown origin; runner-image: build builds the Dockerfile instead."
    exit 1
  fi
  echo "copeca-action: provenance of ${digest} verified (built by ${repo}'s release workflow)"
else
  echo "::notice title=copeca-action::gh is not installed: the image was pulled by digest from image.lock but its provenance was not verified"
fi
emit "${ref}"
