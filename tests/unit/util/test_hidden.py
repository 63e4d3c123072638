"""Programs on PATH that live inside a place graded code sees blank (pyenv's shims under
/root) are shown again, read-only, from their install's folder only."""

from __future__ import annotations

from pathlib import Path

import pytest

from copeca_action._util.hidden import tool_roots


def test_path_entries_inside_hidden_places_show_their_install(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    home = tmp_path / "home"
    shims = home / ".pyenv" / "shims"
    shims.mkdir(parents=True)
    (home / "secrets").mkdir()
    outside = tmp_path / "usr" / "bin"
    outside.mkdir(parents=True)
    monkeypatch.setenv("PATH", f"{shims}:{outside}:relative/bin:")
    assert tool_roots({home.resolve()}) == {home.resolve() / ".pyenv"}
    assert tool_roots(set()) == set()


def test_a_path_entry_in_a_home_under_slash_home_shows_its_install_not_the_home(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """HOME=/home/runner (GitHub's runners) lies in /home, both hidden, and PATH holds
    ~/.local/bin: the folder shown again is ~/.local, never the whole home."""
    homes = (tmp_path / "home").resolve()
    home = homes / "runner"
    (home / ".local" / "bin").mkdir(parents=True)
    monkeypatch.setenv("PATH", str(home / ".local" / "bin"))
    assert tool_roots({homes, home}) == {home / ".local"}
