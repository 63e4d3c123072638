#!/usr/bin/env python3
"""Build-time: download the corpus's sdist snapshots and check each sha256.

The image then runs the bundled corpus with no network. A mismatch fails the build: a
snapshot that is not the pinned one would silently change every task's answer.
Usage: fetch_snapshots.py CORPUS_DIR DEST_DIR
"""

from __future__ import annotations

import hashlib
import subprocess
import sys
import tempfile
from pathlib import Path

from copeca_action.scenario import load_repos


def sha256_of(path: Path) -> str:
    digest = hashlib.sha256()
    with path.open("rb") as fh:
        for block in iter(lambda: fh.read(1 << 20), b""):
            digest.update(block)
    return digest.hexdigest()


def fetch(corpus: Path, dest: Path) -> int:
    dest.mkdir(parents=True, exist_ok=True)
    failures = 0
    for name, spec in load_repos(corpus / "repos.yaml").items():
        pin = spec.sdist
        if pin is None:
            print(f"{name}: no sdist pin; git snapshots are fetched at run time", flush=True)
            continue
        with tempfile.TemporaryDirectory() as tmp:
            subprocess.run([sys.executable, "-m", "pip", "download", "--quiet", "--no-deps",
                            "--no-binary", ":all:", "--dest", tmp,
                            f"{pin.name}=={pin.version}"], check=True)
            files = sorted(Path(tmp).iterdir())
            if len(files) != 1:
                print(f"{name}: expected one sdist, got {[f.name for f in files]}")
                failures += 1
                continue
            got = sha256_of(files[0])
            if got != pin.sha256:
                print(f"{name}: sha256 {got} differs from the pin {pin.sha256}")
                failures += 1
                continue
            files[0].replace(dest / files[0].name)
            print(f"{name}: {files[0].name} verified", flush=True)
    return 1 if failures else 0


if __name__ == "__main__":
    if len(sys.argv) != 3:
        sys.exit(__doc__)
    sys.exit(fetch(Path(sys.argv[1]), Path(sys.argv[2])))
