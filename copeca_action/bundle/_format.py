"""Which bundles this build can read, decided before any model parses one.

The models refuse keys they do not know, so a bundle a later copeca-action wrote with a new
field (or a new format) would otherwise fail here as a schema error naming that field, which
reads like damage. Instead its statement is first read as plain JSON for two facts: the
format its `predicateType` names (`https://copeca-action.dev/bundle/v<N>`) and the version
of copeca-action that made it (`predicate.environment.harness_version`). A format above
`FORMAT`, or a field this build does not know in a bundle a later version made, is the
failure `newer` (exit 17): upgrade to verify it. Nothing unknown is ever skipped: a field
this build does not understand is content it cannot check, so it never passes.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass
from typing import Any

from copeca_action.errors import VerificationError

FORMAT = 1
"""The bundle format this build writes and reads, the `v<N>` that ends `PREDICATE_TYPE`.
A change to what a bundle holds that an older build's models would refuse (a new field in
the statement, the manifest, the plan or a record) raises it, and the verifier then reads
every format up to it."""

_PREDICATE = re.compile(r"^https://copeca-action\.dev/bundle/v([1-9][0-9]{0,5})\Z")
_VERSION = re.compile(r"^([0-9]{1,9}(?:\.[0-9]{1,9}){0,9})((a|b|rc)([0-9]{1,9}))?"
                      r"(\.post([0-9]{1,9}))?(\.dev([0-9]{1,9}))?(\+[A-Za-z0-9]+(\.[A-Za-z0-9]+)*)?"
                      r"\Z")


def version_key(version: str) -> tuple[Any, ...] | None:
    """A sort key of a version in PEP 440's normal form (`1.2.0`, `1.2.0rc1`,
    `1.2.0.post1`, `1.3.0.dev2+g1a2b`; the local part is ignored); None for anything
    else."""
    match = _VERSION.match(version)
    if match is None or len(version) > 64:
        return None
    release = [int(part) for part in match.group(1).split(".")]
    while len(release) > 1 and release[-1] == 0:
        release.pop()
    pre = (("a", "b", "rc").index(match.group(3)), int(match.group(4))) if match.group(2) \
        else (3, 0)
    post = int(match.group(6)) if match.group(5) else -1
    dev = int(match.group(8)) if match.group(7) else float("inf")
    if match.group(7) and not match.group(2) and not match.group(5):
        pre = (-1, 0)  # 1.0.dev1 comes before 1.0a1
    return (tuple(release), pre, post, dev)


@dataclass(frozen=True)
class Maker:
    """What a statement says of the build that made it, read before its model; None where
    it says nothing readable."""

    version: str | None
    format: int | None

    @property
    def later(self) -> bool:
        """Made by a later version of copeca-action than this one."""
        from copeca_action import __version__

        theirs = version_key(self.version) if self.version else None
        ours = version_key(__version__)
        return theirs is not None and ours is not None and theirs > ours


def maker_of(statement: bytes) -> Maker:
    """The format and maker a statement names (bytes already checked as JSON)."""
    try:
        raw = json.loads(statement)
    except ValueError:
        return Maker(None, None)
    if not isinstance(raw, dict):
        return Maker(None, None)
    kind = raw.get("predicateType")
    match = _PREDICATE.match(kind) if isinstance(kind, str) else None
    predicate = raw.get("predicate")
    environment = predicate.get("environment") if isinstance(predicate, dict) else None
    version = environment.get("harness_version") if isinstance(environment, dict) else None
    if not isinstance(version, str) or version_key(version) is None:
        version = None
    return Maker(version, int(match.group(1)) if match else None)


def _upgrade(maker: Maker) -> str:
    if maker.version is None:
        return "upgrade copeca-action to verify it"
    if "+" in maker.version:
        return (f"verify it with that build (copeca-action {maker.version}, a local build "
                "never released) or a later release")
    return (f"upgrade to verify it (`pipx run copeca-action=={maker.version} verify ...`, "
            "the same flags)")


def check_format(maker: Maker) -> None:
    """`newer` when the statement names a format later than this build's."""
    if maker.format is None or maker.format <= FORMAT:
        return
    from copeca_action import __version__

    by = f"copeca-action {maker.version}" if maker.version else "a copeca-action"
    raise VerificationError("newer", f"made by {by} (it says; not yet checked) in bundle "
                            f"format v{maker.format}; this build (copeca-action "
                            f"{__version__}) understands bundle formats up to v{FORMAT}: "
                            f"{_upgrade(maker)}. Nothing past the statement's format was "
                            "checked, so this says nothing of the bundle's integrity.")


def unknown_field(maker: Maker, name: str, where: str, checked: bool) -> VerificationError:
    """`newer`: a later build's bundle holds a field (or value) this build's model of
    `name` refuses at `where`. `checked`: the statement that names the maker has passed
    the signature check (else it is only what the statement says)."""
    from copeca_action import __version__

    said = "as its statement says" if checked else "it says; not yet checked"
    return VerificationError("newer", f"made by copeca-action {maker.version} ({said}), a "
                             "later version than this build "
                             f"(copeca-action {__version__}, bundle format v{FORMAT}), and "
                             f"{name} holds {where}, which this build does not understand "
                             f"and so cannot check: {_upgrade(maker)}.")

