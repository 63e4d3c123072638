"""The `copeca-action` command: one subcommand module per verb under copeca_action/_cli/.

Start-up imports only the module of the verb being run: the top-level help comes from the
table below (a test keeps it equal to what each module registers), so `copeca-action --help`
and `copeca-action analyze` do not pay for the bundle, GitHub or engine code.
"""

from __future__ import annotations

import argparse
import importlib
import os
import sys
from collections.abc import Sequence
from typing import TYPE_CHECKING, NoReturn

from copeca_action import __version__

if TYPE_CHECKING:
    from copeca_action.errors import CopecaError

COMMANDS: dict[str, str] = {
    "analyze": "cost per correct, intervals and verdict from results",
    "badge": "write badge.json (shields.io endpoint) and badge.svg",
    "check-task": "check that a task's tests tell right from wrong",
    "context": "retrieval metrics of a ContextBench-format prediction",
    "demo": "run the bundled offline demo (fastapi, scripted model)",
    "eval": "evaluate the patches of an experiment's log tree",
    "init": "scaffold a benchmark for your tool and a PR workflow",
    "keygen": "make an Ed25519 key pair for signing bundles",
    "list": "list the corpus tasks",
    "merge": "verify shard bundles and merge them into one signed bundle",
    "plan": "expand a scenario into its runs (optionally one shard), or (--power) say what it "
            "can detect and what it will cost",
    "run": "run a scenario: every task × arm × model × repetition",
    "schema": "write (or check) the JSON Schemas of every contract",
    "scripted": "the scripted model server (no key, no network)",
    "snapshot": "fetch, list and verify pinned repository snapshots",
    "validate": "check tasks, scenarios, modes, runners and repo pins",
    "verify": "verify a .copeca bundle: hashes, signature, completeness",
}
"""Every verb and its one-line help, in the order `--help` lists them."""


def module_of(command: str) -> str:
    """The module under copeca_action._cli that registers `command`."""
    return f"copeca_action._cli.{command.replace('-', '_')}"


def command_in(argv: Sequence[str]) -> str | None:
    """The verb named on the command line (the first word that is not an option), if known.
    The top-level parser has only flags without values, so the first word is the verb."""
    for word in argv:
        if word == "--":
            return None
        if not word.startswith("-"):
            return word if word in COMMANDS else None
    return None


def build_parser(argv: Sequence[str] | None = None, *,
                 full: bool = False) -> argparse.ArgumentParser:
    """The parser; with `full`, every verb's module is
    imported and registers its options. Otherwise only the named verb's module is imported
    and the other verbs are listed by name and help."""
    parser = argparse.ArgumentParser(
        prog="copeca-action",
        description="Cost per correct answer of CLI coding agents, with and without your tool.")
    parser.add_argument("--version", action="version", version=f"%(prog)s {__version__}")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND", required=True)
    wanted = None if full else command_in(sys.argv[1:] if argv is None else argv)
    for name, help_text in COMMANDS.items():
        if full or name == wanted:
            importlib.import_module(module_of(name)).register(sub)
        else:
            sub.add_parser(name, help=help_text)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    code, _ = _main(argv)
    return code


def console() -> NoReturn:
    """The installed `copeca-action` command. A verb that only reads files and prints
    (`analyze`, `validate`, `list`) leaves through `os._exit` once its output is flushed and
    the `atexit` handlers have run: the interpreter's teardown (freeing numpy's and
    pydantic's modules one by one) took about 40 ms of a one-record `analyze`. Not while a
    thread other than this one runs (the normal exit waits for it). pydantic loads no
    plugin here (`_util.plugins`)."""
    from copeca_action._util.plugins import no_pydantic_plugins

    no_pydantic_plugins()
    code, fast = _main(None)
    if fast and _alone():
        try:
            sys.stdout.flush()
            sys.stderr.flush()
        except BrokenPipeError:  # a closed pipe (`| head`): what was asked for was printed
            pass
        else:
            import atexit

            atexit._run_exitfuncs()
            os._exit(code)
    sys.exit(code)


def _alone() -> bool:
    """No Python thread but the main one (threading is imported only if one was started)."""
    threading = sys.modules.get("threading")
    return threading is None or threading.active_count() == 1


def _main(argv: Sequence[str] | None) -> tuple[int, bool]:
    """(exit code, whether the verb may skip the interpreter's teardown)."""
    from copeca_action._util.scrub import capture_env, drop_harness_secrets, scrub_uncaught

    capture_env()  # the environment's secrets stay known to the scrubber once removed
    scrub_uncaught()  # a traceback may quote a secret
    drop_harness_secrets()  # tokens the CLI never uses: no child process inherits them
    args = build_parser(argv).parse_args(argv)
    from copeca_action.errors import CopecaError, os_error

    fast = bool(getattr(args, "fast_exit", False))
    try:
        return args.func(args), fast
    except CopecaError as exc:
        _report(exc)
        return exc.exit_code, fast
    except KeyboardInterrupt:
        print("interrupted", file=sys.stderr)
        return 130, False
    except OSError as exc:  # a full disk, a folder where a file was expected: named, exit 2
        _report(os_error(exc))
        return 2, False


def _report(exc: CopecaError) -> None:
    """The error as the user sees it (the console code is loaded only when one happens)."""
    from copeca_action._cli._output import report_error

    report_error(exc)


if __name__ == "__main__":
    console()
