"""An agent plants commands in the git data it can reach (its worktree's `.git`, a
`.gitattributes` filter, the snapshot repository's config and hooks, the `commondir` of its
admin folder): the harness's own git calls after the run (capturing the patch, resetting the
pooled worktree for the next run) must run none of them, the patch must be the agent's real
change and the next run must start from a clean checkout. Under bubblewrap the repository's
config, hooks and `commondir` are read-only to the agent as well."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest
from engine_helpers import config, fake, make_corpus, scenario

from copeca_action.agent import _process
from copeca_action.engine import run_plan
from copeca_action.plan import build_plan
from copeca_action.records import read_records

PLANT = r"""
git status --porcelain --ignored > "$HOME/before.txt"; ls -A >> "$HOME/before.txt"
echo 'answer = 42' > answer.py
git add answer.py && git -c user.name=a -c user.email=a@b commit -qm fix \
  && echo committed > "$HOME/committed.txt"
printf '#!/bin/sh\n[ "$(readlink /proc/self/ns/pid)" = "{host_ns}" ] && touch {marker}-$$\ncat\n' \
  > evil.sh; chmod +x evil.sh
admin=$(sed 's/^gitdir: //' .git); repo=$(cd "$admin/../.." && pwd)
git config --file "$repo/config" core.fsmonitor "$PWD/evil.sh" \
  || echo store-config-denied >> "$HOME/denied.txt"
git config --file "$repo/config" filter.lfs.clean "$PWD/evil.sh" 2>/dev/null
{{ mkdir -p "$repo/hooks" && cp evil.sh "$repo/hooks/post-checkout"; }} 2>/dev/null \
  || echo hooks-denied >> "$HOME/denied.txt"
git init -q --bare "$HOME/common" && git config --file "$HOME/common/config" \
  core.fsmonitor "$PWD/evil.sh"
echo "$HOME/common" > "$admin/commondir" 2>/dev/null \
  || echo commondir-denied >> "$HOME/denied.txt"
mv .git .git-was && git init -q . && git config core.fsmonitor "$PWD/evil.sh" \
  && git config filter.lfs.clean "$PWD/evil.sh" && git config core.hooksPath "$PWD" \
  && cp evil.sh pre-commit && cp evil.sh post-index-change && rm .git-was
echo '* filter=lfs' > .gitattributes
"""


_real_works = _process._works


@pytest.mark.parametrize("sandbox", ["auto", "unshare"])
def test_git_commands_an_agent_plants_never_run_in_the_harness(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch, sandbox: str) -> None:
    """`unshare` without its read-only mounts (`_view_works` false), the agent writes the
    repository's config and `commondir` too; the harness's git must still obey none of it.
    With them (`harness-ro`), those writes are refused as under bubblewrap."""
    if sandbox == "unshare":
        if not any(_real_works(v) for v in _process.UNSHARE_AGENT):
            pytest.skip("unshare cannot make a pid namespace here")
        monkeypatch.setattr(_process, "_works",
                            lambda argv: argv[0] != "bwrap" and _real_works(argv))
    marker = tmp_path / "escaped"
    # only outside every agent's pid namespace: the harness (an agent's own git obeying what
    # it planted, or what an earlier run planted under `unshare`, harms only itself)
    shell = PLANT.format(marker=marker, host_ns=os.readlink("/proc/self/ns/pid"))
    corpus = make_corpus(tmp_path, {name: {"prompt": fake(answer="42", shell=shell)}
                                    for name in ("q1", "q2", "q3")})
    cfg = config(tmp_path, corpus, scenario(workers=1))
    run_plan(cfg, build_plan(cfg.scenario, cfg.corpus.tasks), resume=False,
             scenario_text="name: t\n")
    records = read_records(cfg.out.results)
    assert [r.outcome for r in records] == ["ok"] * 3
    assert not list(tmp_path.glob("escaped*"))  # no planted command ran as the harness
    for record in records:
        run_dir = cfg.out.root / record.run_dir
        patch = (run_dir / "patch.diff").read_text()
        assert "+answer = 42" in patch and "+* filter=lfs" in patch
        assert (run_dir / "home" / "committed.txt").is_file()  # its own git still works
        # every run found a clean checkout: nothing of the previous run's, a git that works
        before = (run_dir / "home" / "before.txt").read_text().split()
        assert before == [".git", "app.py", "test_app.py"], json.dumps(before)
    assert cfg.store.snapshots()  # the pool reused the worktree (workers=1, three runs)
    levels = _process.agent_isolation()[1]
    if "private-hidden" in levels or "harness-ro" in levels:  # read-only too
        for record in records:
            denied = (cfg.out.root / record.run_dir / "home" / "denied.txt").read_text()
            assert denied.split() == ["store-config-denied", "hooks-denied",
                                      "commondir-denied"]
        store = Path(cfg.store.snapshots()[0].git_dir)
        assert "fsmonitor" not in (store / "config").read_text()


TAMPER = r"""
printf '#!/bin/sh\n[ "$(readlink /proc/self/ns/pid)" = "{host_ns}" ] && touch {marker}-$$\ncat\n' \
  > "$HOME/evil.sh"; chmod +x "$HOME/evil.sh"
echo 'answer = 42' > answer.py; echo '* filter=lfs' > .gitattributes
for view in {views}/store-*; do
  git config --file "$view/config" filter.lfs.clean "$HOME/evil.sh" 2>/dev/null \
    || echo view-denied >> "$HOME/denied.txt"
done
echo '{{"pid": 1}}' > {views}/owner.json 2>/dev/null || echo owner-denied >> "$HOME/denied.txt"
touch {package}/.agent-probe 2>/dev/null || echo package-denied >> "$HOME/denied.txt"
touch {out}/planted 2>/dev/null || echo out-denied >> "$HOME/denied.txt"
touch {cache}/planted 2>/dev/null || echo cache-denied >> "$HOME/denied.txt"
cat {key} > "$HOME/key.txt"
"""


def test_under_unshare_the_harness_files_are_read_only_to_agents(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """`unshare` cannot blank the harness's folders, but the agent's mount namespace makes
    them read-only: the git views (whose config the harness's git obeys: a filter driver
    there, named by the worktree's `.gitattributes`, ran in the harness when the patch was
    taken), the snapshot cache, the harness's package
    and the output folder; the key file reads empty. The agent's own files stay writable."""
    from copeca_action._util import scrub
    from copeca_action._util.paths import PACKAGE_DIR
    from copeca_action.workspace._git import views_root

    if not any(_real_works(v) for v in _process.UNSHARE_AGENT):
        pytest.skip("unshare cannot make a pid namespace here")
    monkeypatch.setattr(_process, "_works", lambda argv: argv[0] != "bwrap" and _real_works(argv))
    assert _process.agent_isolation()[1] == ["unshare", "pidns", "harness-ro", "keys-hidden"]
    key = tmp_path / "signing.key"
    key.write_text("PRIVATE KEY BYTES")
    monkeypatch.setattr(scrub, "_SECRET_FILES", {key.resolve()})
    marker = tmp_path / "escaped"
    probe = PACKAGE_DIR / ".agent-probe"
    shell = TAMPER.format(marker=marker, host_ns=os.readlink("/proc/self/ns/pid"),
                          views=views_root(), package=PACKAGE_DIR, out=tmp_path / "out",
                          cache=tmp_path / "cache", key=key)
    corpus = make_corpus(tmp_path, {name: {"prompt": fake(answer="42", shell=shell)}
                                    for name in ("q1", "q2")})
    cfg = config(tmp_path, corpus, scenario(workers=1))
    try:
        run_plan(cfg, build_plan(cfg.scenario, cfg.corpus.tasks), resume=False,
                 scenario_text="name: t\n")
        assert not probe.exists()
    finally:
        probe.unlink(missing_ok=True)
    records = read_records(cfg.out.results)
    assert [r.outcome for r in records] == ["ok"] * 2
    assert not list(tmp_path.glob("escaped*"))  # nothing planted ran as the harness
    assert not (tmp_path / "out" / "planted").exists()
    assert json.loads((views_root() / "owner.json").read_text())["pid"] == os.getpid()
    for record in records:
        run_dir = cfg.out.root / record.run_dir
        assert "agent_files_visible" in record.flags  # still readable: said as before
        assert "+answer = 42" in (run_dir / "patch.diff").read_text()
        assert (run_dir / "home" / "key.txt").read_text() == ""
        denied = (run_dir / "home" / "denied.txt").read_text().split()
        assert set(denied) == {"view-denied", "owner-denied", "package-denied", "out-denied",
                               "cache-denied"}, denied  # a view per snapshot seen so far
