"""sdist pins: find the file (offline first, then the package index), check its sha256
before anything else, unpack it into a bare git repo with one deterministic commit."""

from __future__ import annotations

import html.parser
import os
import re
import shutil
import tarfile
import tempfile
import urllib.parse
import zipfile
from collections.abc import Sequence
from pathlib import Path

from copeca_action._util.hashing import sha256_file
from copeca_action.errors import WorkspaceError
from copeca_action.scenario import SdistPin
from copeca_action.workspace._git import SNAPSHOT_IDENTITY, git

DEFAULT_INDEX = "https://pypi.org/simple"
ARCHIVE_SUFFIXES = (".tar.gz", ".tgz", ".zip", ".tar.bz2", ".tar.xz")
MAX_UNPACKED_BYTES = 2 * 1024**3
"""An sdist that unpacks to more than this is refused (a decompression bomb, or a mistake)."""


def normalise(name: str) -> str:
    """PEP 503 name normalisation."""
    return re.sub(r"[-_.]+", "-", name).lower()


def sdist_filenames(pin: SdistPin) -> list[str]:
    """File names an sdist of this pin may carry (projects spell their names differently)."""
    stems = {pin.name, normalise(pin.name), normalise(pin.name).replace("-", "_")}
    return [f"{stem}-{pin.version}{suffix}" for stem in sorted(stems)
            for suffix in ARCHIVE_SUFFIXES]


def find_local_sdist(pin: SdistPin, dirs: Sequence[Path]) -> Path | None:
    """A file in `dirs` that is this pin: right name and right sha256 (others are ignored)."""
    for folder in dirs:
        for name in sdist_filenames(pin):
            candidate = folder / name
            if candidate.is_file() and sha256_file(candidate) == pin.sha256:
                return candidate
    return None


class _Links(html.parser.HTMLParser):
    def __init__(self) -> None:
        super().__init__()
        self.hrefs: list[str] = []

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        if tag == "a":
            self.hrefs += [v for k, v in attrs if k == "href" and v]


def index_url() -> str:
    """The index the user's pip uses (PIP_INDEX_URL), else PyPI."""
    return os.environ.get("COPECA_INDEX_URL") or os.environ.get("PIP_INDEX_URL") or DEFAULT_INDEX


def download_sdist(pin: SdistPin, dest_dir: Path, index: str | None = None) -> Path:
    """Download the pinned sdist from a PEP 503 simple index; the digest is checked before the
    file is kept. Raises WorkspaceError when the index has no such file or the digest differs."""
    import requests

    base = (index or index_url()).rstrip("/")
    page = f"{base}/{normalise(pin.name)}/"
    try:
        resp = requests.get(page, timeout=60)
        resp.raise_for_status()
    except requests.RequestException as exc:
        raise WorkspaceError(f"sdist {pin.name} {pin.version}: cannot read the index page "
                             f"{page}: {exc}") from exc
    links = _Links()
    links.feed(resp.text)
    wanted = set(sdist_filenames(pin))
    for href in links.hrefs:
        url = urllib.parse.urljoin(page, href)
        filename = urllib.parse.unquote(urllib.parse.urlparse(url).path.rsplit("/", 1)[-1])
        if filename in wanted:
            return _fetch_checked(url.split("#", 1)[0], filename, pin, dest_dir)
    raise WorkspaceError(f"sdist {pin.name} {pin.version}: the index {base} lists no file "
                         f"named {' or '.join(sorted(wanted)[:2])}")


def _fetch_checked(url: str, filename: str, pin: SdistPin, dest_dir: Path) -> Path:
    import requests

    dest_dir.mkdir(parents=True, exist_ok=True)
    fd, tmp_name = tempfile.mkstemp(dir=dest_dir, prefix=".part-")
    tmp = Path(tmp_name)
    try:
        with os.fdopen(fd, "wb") as out, requests.get(url, timeout=120, stream=True) as resp:
            resp.raise_for_status()
            for chunk in resp.iter_content(1 << 20):
                out.write(chunk)
        digest = sha256_file(tmp)
        if digest != pin.sha256:
            raise WorkspaceError(f"sdist {pin.name} {pin.version}: sha256 of {url} is {digest}, "
                                 f"the pin says {pin.sha256}; refusing to use it")
        final = dest_dir / filename
        os.replace(tmp, final)
        return final
    except requests.RequestException as exc:
        raise WorkspaceError(f"sdist {pin.name} {pin.version}: download of {url} failed: "
                             f"{exc}") from exc
    finally:
        tmp.unlink(missing_ok=True)


def unpack(archive: Path, dest: Path) -> Path:
    """Unpack safely (no absolute paths, no escapes, size cap); return the project root (the
    archive's single top-level folder, as sdists have)."""
    dest.mkdir(parents=True, exist_ok=True)
    if archive.name.endswith(".zip"):
        with zipfile.ZipFile(archive) as zf:
            total = sum(i.file_size for i in zf.infolist())
            _check_size(archive, total)
            for info in zf.infolist():
                _check_member(archive, info.filename)
            zf.extractall(dest)
    else:
        with tarfile.open(archive) as tf:
            extract_tar(tf, dest, archive)
    tops = [p for p in dest.iterdir()]
    return tops[0] if len(tops) == 1 and tops[0].is_dir() else dest


def extract_tar(tf: tarfile.TarFile, dest: Path, label: Path) -> None:
    """Extract with the "data" filter's safety: its own where Python has it, else the same
    checks by hand (Python < 3.11.4, such as Debian bookworm's 3.11.2 in the image)."""
    members = tf.getmembers()
    _check_size(label, sum(m.size for m in members))
    if hasattr(tarfile, "data_filter"):
        tf.extractall(dest, filter="data")
    else:
        tf.extractall(dest, members=_safe_members(label, members))


def _safe_members(archive: Path, members: list[tarfile.TarInfo]) -> list[tarfile.TarInfo]:
    """What the "data" filter allows: files, folders and links that stay inside the archive,
    without devices or setuid bits."""
    for m in members:
        _check_member(archive, m.name)
        if not (m.isfile() or m.isdir() or m.issym() or m.islnk()):
            raise WorkspaceError(f"{archive}: {m.name} is not a file, folder or link")
        if m.issym() or m.islnk():
            target = m.linkname if m.islnk() else str(Path(m.name).parent / m.linkname)
            _check_member(archive, target)
        m.mode &= 0o755
    return members


def _check_size(archive: Path, total: int) -> None:
    if total > MAX_UNPACKED_BYTES:
        raise WorkspaceError(f"{archive.name} unpacks to {total:,} bytes, over the "
                             f"{MAX_UNPACKED_BYTES:,}-byte limit")


def _check_member(archive: Path, name: str) -> None:
    parts = name.replace("\\", "/").split("/")
    if name.startswith("/") or ".." in parts:
        raise WorkspaceError(f"{archive.name}: member {name!r} would escape the folder")


def commit_tree(work_tree: Path, git_dir: Path, message: str) -> str:
    """Create (or reuse) the bare repo `git_dir` and commit every file of `work_tree` as one
    root commit with the fixed identity; returns the commit id (the same files → the same id)."""
    if not (git_dir / "HEAD").exists():
        git(["init", "-q", "--bare", str(git_dir)])
    index = git_dir / "index.snapshot"
    env = {"GIT_INDEX_FILE": str(index), **SNAPSHOT_IDENTITY}
    try:
        git(["--work-tree", str(work_tree), "add", "-A", "--force", "."], git_dir=git_dir,
            env=env, cwd=work_tree)
        tree = git(["write-tree"], git_dir=git_dir, env=env).stdout.strip()
        commit = git(["commit-tree", tree, "-F", "-"], git_dir=git_dir, env=env,
                     input_text=message + "\n").stdout.strip()
    finally:
        index.unlink(missing_ok=True)
    return commit


def snapshot_sdist(archive: Path, pin: SdistPin, git_dir: Path) -> str:
    """Unpack `archive` and commit it into `git_dir`; returns the snapshot commit."""
    message = f"{pin.name} {pin.version} (sdist sha256 {pin.sha256})"
    return snapshot_archive(archive, git_dir, message, f"sdist-{pin.version}")


def snapshot_archive(archive: Path, git_dir: Path, message: str, tag: str) -> str:
    """Unpack any source archive (top folder stripped) into one deterministic commit on
    `main` and `refs/tags/<tag>`: shared by the sdist and Debian origins."""
    with tempfile.TemporaryDirectory(prefix="copeca-sdist-") as tmp:
        root = unpack(archive, Path(tmp))
        _drop_nested_git(root)
        commit = commit_tree(root, git_dir, message)
    ref = f"refs/tags/{tag.replace('~', '_').replace(':', '_')}"
    git(["update-ref", ref, commit], git_dir=git_dir)
    git(["symbolic-ref", "HEAD", "refs/heads/main"], git_dir=git_dir)
    git(["update-ref", "refs/heads/main", commit], git_dir=git_dir)
    return commit


def _drop_nested_git(root: Path) -> None:
    """A `.git` inside an archive would turn into a submodule entry; sdists should not have
    one, and if they do it is not part of the project's source."""
    for found in list(root.rglob(".git")):
        if found.is_dir():
            shutil.rmtree(found)
        else:
            found.unlink()
