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
    """`unshare`: no file can be made read-only, the agent writes the repository's config
    and `commondir` too; the harness's git must still obey none of it."""
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
    if "private-hidden" in _process.agent_isolation()[1]:  # bubblewrap: read-only too
        for record in records:
            denied = (cfg.out.root / record.run_dir / "home" / "denied.txt").read_text()
            assert denied.split() == ["store-config-denied", "hooks-denied",
                                      "commondir-denied"]
        store = Path(cfg.store.snapshots()[0].git_dir)
        assert "fsmonitor" not in (store / "config").read_text()
