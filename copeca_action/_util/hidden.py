"""What code the harness starts but does not trust (an agent with its tools, graded code) must
not see: the harness's private places (its HOME, /root, /home, /tmp, the output folder with
every other run), its key files and the credentials of its user's home; and the bubblewrap
arguments that blank them, then show again what that code needs.

One view for both: `copeca_action.agent._process` (agents, MCP servers, a mode's set-up)
and `copeca_action.evaluate._local` (test gradings).
"""

from __future__ import annotations

import os
import sys
from collections.abc import Iterable
from pathlib import Path

from copeca_action._util.scrub import private_dirs, secret_files

HIDDEN_PLACES = ("/root", "/home", "/tmp", "/var/tmp", "/dev/shm")
"""Host folders sandboxed code sees as empty (besides the harness's HOME and private dirs)."""

HOME_CREDENTIALS = (".netrc", ".git-credentials", ".npmrc", ".pypirc", ".yarnrc.yml",
                    ".cargo/credentials", ".cargo/credentials.toml", ".ssh", ".gnupg", ".aws",
                    ".azure", ".kube", ".docker", ".config/gh", ".config/hub",
                    ".config/gcloud", ".config/git/credentials", ".terraform.d")
"""Where the harness user's home keeps credentials (tokens, keys, cloud logins). The home is
blanked whole; these are also masked where a part of it is shown again (a `~/.cargo` on
PATH) or where they are links leading out of it."""


def harness_home() -> Path | None:
    """The harness user's home, resolved (None when unknown or `/`)."""
    try:
        home = Path.home().resolve()
    except RuntimeError:  # no HOME and no password entry
        return None
    return None if home == Path("/") else home


def home_credentials(home: Path | None = None) -> list[Path]:
    """The `HOME_CREDENTIALS` present in the harness user's home (files and folders)."""
    home = harness_home() if home is None else home
    if home is None:
        return []
    return [home / rel for rel in HOME_CREDENTIALS if (home / rel).exists()]


def private_places() -> set[Path]:
    """Everything a sandbox blanks: `HIDDEN_PLACES`, the harness's HOME and every registered
    private folder (the output folder, the worktrees' folder), where they are folders."""
    places = {Path(p) for p in HIDDEN_PLACES if Path(p).is_dir() and not Path(p).is_symlink()}
    home = harness_home()
    places |= {*private_dirs(), *([home] if home is not None else [])}
    return {p for p in places if p.is_dir() and p != Path("/")}


def interpreter_dirs() -> set[Path]:
    """The harness's Python install (its `{python}` runs tools and tests)."""
    return {Path(sys.prefix).resolve(), Path(sys.base_prefix).resolve(),
            Path(sys.executable).resolve().parent}


def tool_roots(hidden: Iterable[Path]) -> set[Path]:
    """The installs the PATH's programs live in when they sit inside a hidden place (pyenv's
    shims in /root/.pyenv, a user's ~/.cargo/bin, nvm's node): the first folder below the
    innermost hidden place holding it (~/.local for /home/runner/.local/bin, where both /home
    and the home are hidden), so `python -m pytest`, `cargo test` or `node` still start.
    Only PATH entries: the rest of HOME stays blank."""
    hidden = set(hidden)
    roots: set[Path] = set()
    for entry in os.environ.get("PATH", "").split(os.pathsep):
        if not entry or not os.path.isabs(entry):
            continue
        path = Path(entry).resolve()
        holders = [place for place in hidden if path != place and path.is_relative_to(place)]
        if holders:
            place = max(holders, key=lambda p: len(p.parts))
            roots.add(place / path.relative_to(place).parts[0])
    return roots


def bwrap_view(hidden: Iterable[Path], *, readable: Iterable[Path] = (),
               writable: Iterable[Path] = ()) -> list[str]:
    """bwrap arguments (after the root's own bind) that blank each `hidden` folder, show
    again those of `readable` (read-only) and `writable` that lie inside one, then replace
    each key file and each home credential still in sight by an empty file or folder."""
    hidden = {h for h in hidden if h.is_dir() and h != Path("/")}
    shown = {p.resolve(): "--ro-bind" for p in readable}
    shown |= {p.resolve(): "--bind" for p in writable}
    inside = [p for p in shown if p.exists() and any(p.is_relative_to(h) for h in hidden)]
    # outermost first, a place blanked before one shown at its depth: a hidden place inside
    # a shown one (the output folder in a shown tool's folder) is blanked again after it
    mounts = sorted([(len(h.parts), 0, h) for h in hidden]
                    + [(len(p.parts), 1, p) for p in inside])
    args: list[str] = []
    for _, show, place in mounts:
        args += [shown[place], str(place), str(place)] if show else ["--tmpfs", str(place)]

    def in_sight(path: Path) -> bool:
        return not any(path.is_relative_to(h) for h in hidden) or any(
            path.is_relative_to(s) for s in inside)

    for path in dict.fromkeys(p.resolve() for p in (*secret_files(), *home_credentials())):
        if not in_sight(path):
            continue
        if path.is_file():  # a link's target: the link leads there, its path is no secret
            args += ["--ro-bind", "/dev/null", str(path)]
        elif path.is_dir():
            args += ["--tmpfs", str(path)]
    return args
