#!/usr/bin/env bash
# After image/build-local.sh: run the image's entrypoint in dry-run mode on a reduced demo
# scenario (Claude Code only, 2 tasks, 2 repetitions) with no network, the workspace at
# /github/workspace and GitHub's variables set, then verify the signed bundle on the host.
# Prints the time of the dry run. Usage: image/smoke-dry-run.sh WORKDIR (build-local.sh's).
set -euo pipefail
here="$(cd "$(dirname "$0")/.." && pwd)"
work="${1:?usage: image/smoke-dry-run.sh WORKDIR}"
export CONTAINERS_CONF="${work}/containers.conf" CONTAINERS_STORAGE_CONF="${work}/storage.conf"
ws="${work}/dry-ws" tmp="${work}/dry-tmp"
rm -rf "${ws}" "${tmp}" && mkdir -p "${ws}/benchmark" "${tmp}"
cat > "${ws}/benchmark/pr.yaml" <<'YAML'
name: pr-dry
tasks:
  include: ["fastapi/locate-unique-id", "fastapi/control-prompt-words"]
modes: [baseline, codesearch]
models: [claude-sonnet-4-5]
model_runner_map:
  claude-sonnet-4-5: claude
repetitions: 2
budget_usd: 5.0
workers: 2
seed: 7
thresholds:
  min_runs: 2
YAML
python3 - "${here}" "${tmp}/event.json" <<'PY'
import json, sys, pathlib
src = pathlib.Path(sys.argv[1]).parent / "shared/contracts/webhook-payloads/pull_request.opened.json"
data = json.loads(src.read_text()) if src.is_file() else {
    "action": "opened", "number": 1, "repository": {"full_name": "o/r"},
    "pull_request": {"number": 1, "head": {"repo": {"full_name": "o/r"}}}}
pathlib.Path(sys.argv[2]).write_text(json.dumps(data))
PY
python3 - "${tmp}/key.pem" <<'PY'
import sys
from cryptography.hazmat.primitives import serialization
from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey
key = Ed25519PrivateKey.generate()
open(sys.argv[1], "wb").write(key.private_bytes(serialization.Encoding.PEM,
    serialization.PrivateFormat.PKCS8, serialization.NoEncryption()))
PY
: >"${tmp}/output"
t0=$SECONDS
INPUT_SIGNING_KEY="$(cat "${tmp}/key.pem")" podman run --rm --pull=never --network=none \
  --workdir /github/workspace -v "${ws}:/github/workspace" -v "${tmp}:${tmp}" \
  -e GITHUB_WORKSPACE=/github/workspace -e "COPECA_HOST_WORKSPACE=${ws}" \
  -e GITHUB_ACTIONS=true -e GITHUB_EVENT_NAME=pull_request \
  -e "GITHUB_EVENT_PATH=${tmp}/event.json" -e "GITHUB_OUTPUT=${tmp}/output" \
  -e "GITHUB_STEP_SUMMARY=${tmp}/summary.md" -e INPUT_SIGNING_KEY \
  -e INPUT_SCENARIO=benchmark/pr.yaml -e INPUT_DRY_RUN=true -e INPUT_COMMENT=never \
  -e INPUT_FAIL_ON=never localhost/copeca-action:local
echo "time: $((SECONDS - t0)) s for: the dry run in the container" >&2
verdict="$(grep -A1 '^verdict<<' "${tmp}/output" | tail -1)"
bundle="$(grep -A1 '^bundle-path<<' "${tmp}/output" | tail -1)"
case "${verdict}" in improvement|regression|inconclusive|invalid) ;; *)
  echo "unexpected verdict: ${verdict:-none}" >&2; exit 1;; esac
"${here}/.venv/bin/copeca-action" verify --require-signature "${bundle}"
echo "ok: dry run in the image: verdict ${verdict}, bundle ${bundle} verified"
