"""Prepare one checkout per corpus repository for `copeca-action validate --deep`.

Takes each repository from its offline-capable origin in corpus/repos.yaml, using only the
package registries: the PyPI sdist (pip download) or Debian's .orig.tar.gz or .orig.tar.xz
(apt-get source, which needs a deb-src entry), checks the sha256, unpacks it into DIR/<repo> as
a one-commit git repository, and runs the repository's `setup` commands there (express and
yargs: npm install).

    python scripts/prepare_checkouts.py repos fastapi express
"""

from __future__ import annotations

import hashlib
import shutil
import subprocess
import sys
import tarfile
import tempfile
from pathlib import Path

from copeca_action.scenario import RepoSpec, load_corpus
from copeca_action.workspace._debian import download_orig

ROOT = Path(__file__).resolve().parent.parent


def _sha256(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def _download(spec: RepoSpec, into: Path) -> Path:
    if spec.sdist is not None:
        pin = spec.sdist
        subprocess.run([sys.executable, "-m", "pip", "download", "-q", "--no-deps",
                        "--no-binary", ":all:", "-d", str(into), f"{pin.name}=={pin.version}"],
                       check=True)
        want = pin.sha256
    elif spec.debian is not None:
        # the snapshot store's apt download: checks the sha256 and names the file as the pool does
        return download_orig(spec.debian, into)
    else:
        raise SystemExit("no sdist or debian origin")
    for path in into.glob("*.tar.gz"):
        if ".orig-" not in path.name and _sha256(path) == want:
            return path
    raise SystemExit(f"no downloaded tarball has sha256 {want}: {sorted(into.iterdir())}")


def prepare(repo: str, spec: RepoSpec, dest: Path) -> None:
    with tempfile.TemporaryDirectory() as tmp:
        archive = _download(spec, Path(tmp))
        unpacked = Path(tmp) / "x"
        with tarfile.open(archive) as tar:
            tar.extractall(unpacked, filter="data")
        (top,) = list(unpacked.iterdir())
        if dest.exists():
            shutil.rmtree(dest)
        shutil.move(str(top), dest)
    git = ["git", "-c", "user.name=copeca", "-c", "user.email=copeca@localhost"]
    subprocess.run([*git, "init", "-q"], cwd=dest, check=True)
    subprocess.run([*git, "add", "-A", "-f", "."], cwd=dest, check=True)
    subprocess.run([*git, "commit", "-q", "-m", f"{repo} snapshot ({archive.name})"],
                   cwd=dest, check=True)
    for argv in spec.setup:
        subprocess.run(argv, cwd=dest, check=True)
    print(f"{repo}: {dest} from {archive.name}")


def main(argv: list[str]) -> int:
    if not argv:
        print(__doc__)
        return 2
    dest_root = Path(argv[0])
    dest_root.mkdir(parents=True, exist_ok=True)
    repos = load_corpus(ROOT / "corpus").repos
    for repo in argv[1:] or sorted(repos):
        prepare(repo, repos[repo], dest_root / repo)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
