"""Shell commands that print code: Claude's `Bash`, Codex's `exec_command` and
`command_execution`. Parsed, never run."""

from __future__ import annotations

import os
import re
import shlex
from collections.abc import Iterator

from copeca_action.retrieval._repo import Repo
from copeca_action.retrieval._viewed import Collector, prefix_path, result_lines, runs


def command_text(value: object) -> str:
    if isinstance(value, str):
        return value
    if isinstance(value, list) and all(isinstance(v, str) for v in value):
        return shlex.join(value)
    return ""


def _tokens(command: str) -> list[str] | None:
    lexer = shlex.shlex(command, posix=True, punctuation_chars=";&|<>()")
    lexer.whitespace_split = True
    lexer.commenters = ""
    try:
        return list(lexer)
    except ValueError:
        return None


SILENT = "\0silent"
"""Marks a command whose standard output is redirected away: it shows the agent nothing."""


def _pipelines(tokens: list[str]) -> Iterator[list[list[str]]]:
    """Split at `;`, `&&`, `||`, newlines into pipelines, each a list of simple commands.

    Redirections are resolved here: `< FILE` makes FILE an operand (it is read), `> FILE`,
    `>> FILE`, `&> FILE` mark the command SILENT, `2> FILE` and `2>&1` are dropped."""
    pipeline: list[list[str]] = []
    words: list[str] = []
    pending: str | None = None  # the redirection operator waiting for its target
    for token in [*tokens, ";"]:
        if pending is not None and token not in (";", "&&", "||", "|", "&"):
            if pending == "<":
                words.append(token)
            elif pending in (">", ">>", ">|", "&>", "&>>"):
                words.append(SILENT)
            pending = None
            continue
        pending = None
        if token in ("|", "|&"):
            pipeline.append(words)
            words = []
        elif token in (";", "&&", "||", "&", "\n", "(", ")"):
            pipeline.append(words)
            yield [w for w in pipeline if w]
            pipeline, words = [], []
        elif token and token[0] in "<>&" and set(token) <= set("<>&|"):
            fd = words.pop() if words and words[-1] in ("0", "1", "2") else None
            if fd == "2" or token == ">&":
                pending = "drop"
            elif fd == "0" or token == "<":
                pending = "<"
            else:
                pending = token
        else:
            words.append(token)


def run_shell(command: str, result: str | None, out: Collector, cwd: str) -> None:
    tokens = _tokens(command.replace("\n", " ; "))
    if tokens is None:
        return
    for pipeline in _pipelines(tokens):
        if not pipeline:
            continue
        first = _strip_env(pipeline[0])
        if not first:
            continue
        program = first[0].rsplit("/", 1)[-1]
        if program in ("bash", "sh", "zsh") and len(first) >= 3 and first[-2].startswith("-") \
                and "c" in first[-2]:
            run_shell(first[-1], result, out, cwd)
            continue
        if program == "cd" and len(first) == 2:
            cwd = change_dir(first[1], cwd, out.repo)
            continue
        if SILENT in pipeline[-1]:
            continue  # the output went to a file, not to the agent
        _pipeline(program, first[1:], pipeline[1:], result, out, cwd)


def _strip_env(words: list[str]) -> list[str]:
    """Drop leading `VAR=value` assignments and `env`/`command`/`time` wrappers."""
    i = 0
    while i < len(words) and (re.match(r"^[A-Za-z_]\w*=", words[i])
                              or words[i] in ("env", "command", "time", "sudo")):
        i += 1
    return [w for w in words[i:] if w != SILENT]


def change_dir(target: str, cwd: str, repo: Repo) -> str:
    if target.startswith("/"):
        inside = repo.inside(target)
        return cwd if inside is None else inside
    joined = os.path.normpath(os.path.join(cwd, target))
    return "" if joined == "." else joined


def _pipeline(program: str, args: list[str], filters: list[list[str]], result: str | None,
              out: Collector, cwd: str) -> None:
    if program == "git" and args[:1] == ["grep"]:
        program, args = "grep", args[1:]
    if program in GREPS:
        if "--files" not in args:  # `rg --files` lists the tree, like `find`
            _grep_command(program, args, result, out, cwd)
        return
    reads = _reader(program, args, out, cwd)
    if reads is None:
        return
    window, shown = _filters_effect(filters)
    if shown == "names":
        for path, _, _ in reads:
            out.name(path, cwd)
        return
    for path, first, last in reads:
        if window is not None and len(reads) == 1:
            first, last = _narrow((first, last), window)
        if shown == "grep-n" and len(reads) == 1:
            _grep_filter_lines(result, first, last, path, out, cwd)
        elif shown == "grep-n":
            out.name(path, cwd)
        else:
            out.lines(path, first, last, cwd)


def _reader(program: str, args: list[str], out: Collector,
            cwd: str) -> list[tuple[str, int, int | None]] | None:
    """Files a printing command reads and the line window it prints: (path, first, last)."""
    if program in ("cat", "nl", "less", "more", "bat", "batcat"):
        return [(f, 1, None) for f in _operands(args, {"-s", "-v", "-w", "-b", "-i", "-l",
                                                       "-n" if program == "nl" else ""})]
    if program == "sed":
        return _sed(args)
    if program == "awk":
        return _awk(args)
    if program in ("head", "tail"):
        count, files = _head_tail_args(args)
        if count == BAD_COUNT:
            return None  # the command failed: it printed nothing
        window = _head_window if program == "head" else _tail_window
        return [(f, *window(count, f, out, cwd)) for f in files]
    return None


def _operands(args: list[str], takes_value: set[str]) -> list[str]:
    files: list[str] = []
    skip = False
    for arg in args:
        if skip:
            skip = False
        elif arg in takes_value:
            skip = True
        elif arg == "-" or not arg.startswith("-"):
            files.append(arg)
    return [f for f in files if f != "-"]


_SED_RANGE = re.compile(r"^\s*(\d+)\s*(?:,\s*(\d+|\$)\s*)?p\s*$")


def _sed(args: list[str]) -> list[tuple[str, int, int | None]] | None:
    quiet = False
    scripts: list[str] = []
    files: list[str] = []
    i = 0
    while i < len(args):
        arg = args[i]
        if arg in ("-i", "--in-place") or arg.startswith("-i"):
            return None  # editing, not printing
        if arg in ("-n", "--quiet", "--silent"):
            quiet = True
        elif arg == "-e" and i + 1 < len(args):
            scripts.append(args[i + 1])
            i += 1
        elif arg.startswith("-") and len(arg) > 1:
            quiet = quiet or "n" in arg[1:]
        elif not scripts and not any(a == "-e" for a in args):
            scripts.append(arg)
        else:
            files.append(arg)
        i += 1
    if not quiet:
        return [(f, 1, None) for f in files]
    windows = [_sed_window(s) for script in scripts for s in script.split(";") if s.strip()]
    if not windows or any(w is None for w in windows):
        return [(f, 1, 0) for f in files]  # printed lines we cannot tell: the names only
    return [(f, w[0], w[1]) for f in files for w in windows if w is not None]


_AWK_RANGE = re.compile(r"^\s*NR\s*>=?\s*(\d+)\s*&&\s*NR\s*<=?\s*(\d+)\s*(\{\s*print[^}]*\})?\s*$")
_AWK_FROM_TO = re.compile(r"^\s*NR\s*==\s*(\d+)\s*(?:,\s*NR\s*==\s*(\d+))?\s*"
                          r"(\{\s*print[^}]*\})?\s*$")


def _awk(args: list[str]) -> list[tuple[str, int, int | None]] | None:
    """`awk 'NR>=a && NR<=b' FILE` and `awk 'NR==a,NR==b' FILE` print lines a..b; another
    program shows lines we cannot tell (the names only)."""
    operands = _operands(args, {"-F", "-v", "-f"})
    if not operands:
        return None
    script, files = operands[0], operands[1:]
    if match := _AWK_RANGE.match(script):
        first, last = int(match[1]), int(match[2])
        last -= 0 if "<=" in script else 1
        first += 0 if ">=" in script else 1
        return [(f, first, last) for f in files]
    if match := _AWK_FROM_TO.match(script):
        first = int(match[1])
        return [(f, first, int(match[2]) if match[2] else first) for f in files]
    if script.strip() in ("1", "{print}", "{ print }", "{print $0}", "{ print $0 }"):
        return [(f, 1, None) for f in files]
    return [(f, 1, 0) for f in files]


def _sed_window(script: str) -> tuple[int, int | None] | None:
    match = _SED_RANGE.match(script)
    if not match:
        return None
    first = int(match[1])
    if match[2] is None:
        return first, first
    return first, None if match[2] == "$" else int(match[2])


def _head_tail_args(args: list[str]) -> tuple[str | None, list[str]]:
    count: str | None = None
    files: list[str] = []
    i = 0
    while i < len(args):
        arg = args[i]
        if arg in ("-n", "--lines") and i + 1 < len(args):
            count = args[i + 1]
            i += 1
        elif arg.startswith("--lines="):
            count = arg.split("=", 1)[1]
        elif re.match(r"^-n[+]?\d+$", arg):
            count = arg[2:]
        elif re.match(r"^-\d+$", arg):
            count = arg[1:]
        elif arg in ("-c", "--bytes") and i + 1 < len(args):
            i += 1
        elif not arg.startswith("-") or arg == "-":
            files.append(arg)
        i += 1
    if count is not None and not _COUNT.match(count):
        count = BAD_COUNT
    return count, [f for f in files if f != "-"]


BAD_COUNT = "\0bad"
_COUNT = re.compile(r"^[+-]?\d+$")


def _line_total(path: str, out: Collector, cwd: str) -> int:
    rel = out.repo.relative(path, cwd)
    source = out.repo.file(rel) if rel else None
    return source.line_count if source else 0


def _head_window(count: str | None, path: str, out: Collector,
                 cwd: str) -> tuple[int, int | None]:
    """`head -n N`: lines 1..N; `head -n -K`: all but the last K."""
    if count is not None and count.startswith("-"):
        return 1, _line_total(path, out, cwd) - int(count[1:])
    return 1, 10 if count is None else int(count.lstrip("+"))


def _tail_window(count: str | None, path: str, out: Collector,
                 cwd: str) -> tuple[int, int | None]:
    """`tail -n N` (or `-N`): the last N lines; `tail -n +K`: from line K on."""
    if count is not None and count.startswith("+"):
        return max(int(count[1:]), 1), None
    n = 10 if count is None else int(count.lstrip("-"))
    if n == 0:
        return 1, 0
    return max(_line_total(path, out, cwd) - n + 1, 1), None


GREPS = ("grep", "egrep", "fgrep", "rg")
HIDING = frozenset({"wc", "md5sum", "sha1sum", "sha256sum", "sha512sum", "cksum", "true",
                    "file", "stat"})
"""Filters that consume the content without printing any of it."""


def _filters_effect(filters: list[list[str]]) -> tuple[tuple[int, int | None] | None, str]:
    """What the filters after a reader let through: a narrowed line window (`sed -n 'a,bp'`,
    `head -n N`, `tail -n +K`, in the reader's numbering), and whether the content is shown
    (`content`), only its matches with their numbers (`grep-n`), or nothing (`names`)."""
    window: tuple[int, int | None] | None = None
    shown = "content"
    for words in filters:
        words = _strip_env(words)
        if not words:
            continue
        program, args = words[0].rsplit("/", 1)[-1], words[1:]
        step: tuple[int, int | None] | None = None
        if program in HIDING:
            return window, "names"
        if program in GREPS:
            flags = "".join(a[1:] for a in args if a.startswith("-") and not a.startswith("--"))
            if any(f in flags for f in "clqL") or shown != "content":
                return window, "names"
            shown = "grep-n" if "n" in flags else "names"
            continue
        if program == "sed":
            parsed = _sed([*args, "\0stdin"])
            if parsed and len(parsed) == 1:
                step = (parsed[0][1], parsed[0][2])
        elif program == "head":
            count, _ = _head_tail_args(args)
            if count is None or (count != BAD_COUNT and not count.startswith("-")):
                step = (1, 10 if count is None else int(count.lstrip("+")))
        elif program == "tail":
            count, _ = _head_tail_args(args)
            if count is not None and count != BAD_COUNT and count.startswith("+"):
                step = (int(count[1:]), None)
        if step is not None and shown == "content":
            window = step if window is None else _narrow(window, step)
    return window, shown


def _grep_filter_lines(result: str | None, first: int, last: int | None, path: str,
                       out: Collector, cwd: str) -> None:
    """`reader FILE | grep -n PAT`: grep numbers the lines it was given, which start at the
    reader's first line."""
    numbers = sorted({first + int(m[1]) - 1 for line in result_lines(result)
                      if (m := _GREP_HIT_SINGLE.match(line))})
    numbers = [n for n in numbers if last is None or n <= last]
    if not numbers:
        out.name(path, cwd)
        return
    for a, b in runs(numbers):
        out.lines(path, a, b, cwd)


def _narrow(outer: tuple[int, int | None], inner: tuple[int, int | None]) -> tuple[int, int | None]:
    """Apply `inner` (relative numbering) to the lines `outer` selected."""
    first = outer[0] + inner[0] - 1
    last = None if inner[1] is None else outer[0] + inner[1] - 1
    if outer[1] is not None:
        last = outer[1] if last is None else min(last, outer[1])
    return first, last


_GREP_VALUE_OPTS = {"-e", "-f", "-m", "-A", "-B", "-C", "--max-count", "-g", "--glob", "-t",
                    "--type", "--include", "--exclude", "-d", "-D", "--context"}


def _grep_command(program: str, args: list[str], result: str | None, out: Collector,
                  cwd: str) -> None:
    """`grep -n PAT FILE...` shows the matching lines (read from the output when there is one);
    without `-n`, or with `-l`/`-c`, only the names of the files."""
    numbered = program == "rg" and "-N" not in args
    names_only = False
    pattern_given = False
    operands: list[str] = []
    i = 0
    while i < len(args):
        arg = args[i]
        if arg in _GREP_VALUE_OPTS:
            pattern_given = pattern_given or arg in ("-e", "-f")
            i += 2
            continue
        if arg.startswith("--"):
            numbered = numbered or arg == "--line-number"
            names_only = names_only or arg in ("--files-with-matches", "--count")
        elif arg.startswith("-") and len(arg) > 1:
            flags = arg[1:]
            numbered = numbered or "n" in flags
            names_only = names_only or "l" in flags or "c" in flags or "L" in flags
        else:
            operands.append(arg)
        i += 1
    paths = operands if pattern_given else operands[1:]
    files = [p for p in paths if out.repo.relative(p, cwd) is not None]
    single = len(files) == 1 and not any(out.repo.is_dir(p) for p in paths)
    if result and numbered and not names_only and _grep_lines_from_output(
            result, files[0] if single else None, out, cwd):
        return
    if result and not single:
        names = {h for line in result_lines(result)
                 if (h := prefix_path(line, out.repo) or
                     (line if out.repo.relative(line, cwd) else None))}
        for name in sorted(names):
            out.name(name, cwd)
        if names:
            return
    for path in files:
        out.name(path, cwd)


_GREP_HIT_SINGLE = re.compile(r"^(?P<line>\d+)[:-]")
_GREP_HIT = re.compile(r"^(?P<path>.+?)[:-](?P<line>\d+)[:-]")


def _grep_lines_from_output(result: str, single: str | None, out: Collector, cwd: str) -> bool:
    """Matched (and context) line numbers from grep's output: `N:text` for one file,
    `path:N:text` otherwise."""
    hits: dict[str, list[int]] = {}
    for line in result_lines(result):
        if single is not None:
            match = _GREP_HIT_SINGLE.match(line)
            path: str | None = single
        else:
            match = _GREP_HIT.match(line)
            path = match["path"] if match else None
            if path is not None and out.repo.relative(path, cwd) is None:
                continue
        if match and path is not None:
            hits.setdefault(path, []).append(int(match["line"]))
    for path, numbers in hits.items():
        for first, last in runs(sorted(set(numbers))):
            out.lines(path, first, last, cwd)
    return bool(hits)

