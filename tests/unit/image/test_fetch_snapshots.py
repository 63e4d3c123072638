"""image/fetch_snapshots.py: the deb-src entries it adds and the repositories it selects."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[3]
sys.path.insert(0, str(ROOT / "image"))
import fetch_snapshots  # noqa: E402

from copeca_action.scenario import load_repos  # noqa: E402

DEB822 = """Types: deb
URIs: http://mirror.example/debian
Suites: bookworm bookworm-updates
Components: main
Signed-By: /usr/share/keyrings/debian-archive-keyring.gpg

Types: deb deb-src
URIs: http://mirror.example/debian-security
Suites: bookworm-security
Components: main
"""


def test_deb_src_is_added_beside_each_deb_entry_of_both_formats(tmp_path: Path) -> None:
    d = tmp_path / "sources.list.d"
    d.mkdir()
    (d / "debian.sources").write_text(DEB822)
    one_line = tmp_path / "sources.list"
    one_line.write_text("deb http://mirror.example/debian bookworm main\n"
                        "# deb http://old.example/debian bookworm main\n")
    changed = fetch_snapshots.add_deb_src(d, one_line)
    assert changed == [d / "debian.sources", one_line]
    text = (d / "debian.sources").read_text()
    assert text.count("Types: deb deb-src\n") == 2 and "Types: deb\n" not in text
    assert one_line.read_text().splitlines()[-1] == (
        "deb-src http://mirror.example/debian bookworm main")
    assert "deb-src http://old" not in one_line.read_text()  # comments stay comments
    assert fetch_snapshots.add_deb_src(d, one_line) == []  # idempotent


def test_repositories_are_selected_by_words_or_all() -> None:
    repos = load_repos(ROOT / "corpus" / "repos.yaml")
    assert fetch_snapshots.selected(repos, ["1"]) == repos
    assert fetch_snapshots.selected(repos, []) == repos
    assert list(fetch_snapshots.selected(repos, ["gin express"])) == ["gin", "express"]
    assert list(fetch_snapshots.selected(repos, ["gin,ripgrep"])) == ["gin", "ripgrep"]
    with pytest.raises(SystemExit, match="unknown repositories"):
        fetch_snapshots.selected(repos, ["gin", "nope"])
