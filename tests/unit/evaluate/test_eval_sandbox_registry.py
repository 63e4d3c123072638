"""Sandbox registry and the never-pull guard on Dockerfiles (no engine needed)."""

from __future__ import annotations

import pytest

from copeca_action.errors import ConfigError
from copeca_action.evaluate import LocalSandbox, make_sandbox, sandbox_names
from copeca_action.evaluate._docker import base_images
from copeca_action.evaluate._sandbox import cap_output


def test_registry_knows_both_backends_and_names_them_on_error() -> None:
    assert sandbox_names() == ["docker", "local"]
    assert isinstance(make_sandbox("local"), LocalSandbox)
    with pytest.raises(ConfigError, match="unknown sandbox 'kvm'; known: docker, local"):
        make_sandbox("kvm")


def test_base_images_of_a_dockerfile() -> None:
    text = ("ARG V=3\nFROM --platform=linux/amd64 localhost/debian:bookworm AS build\n"
            "RUN make\nFROM build AS test\nfrom scratch\nFROM python:${V}\n"
            "FROM localhost/busybox:1\nCOPY --from=build /x /x\n")
    assert base_images(text) == ["localhost/debian:bookworm", "localhost/busybox:1"]


def test_cap_output_keeps_head_and_tail() -> None:
    text = "HEAD" + "x" * 100_000 + "TAIL"
    capped = cap_output(text, 1000)
    assert capped.startswith("HEAD") and capped.endswith("TAIL") and len(capped) < 1100
    assert cap_output("short", 1000) == "short"
