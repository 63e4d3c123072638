"""The `copeca-action` command: one subcommand module per verb under copeca_action/_cli/."""

from __future__ import annotations

import argparse
import importlib
import pkgutil
import sys
from collections.abc import Sequence

from copeca_action import __version__
from copeca_action._cli._output import report_error
from copeca_action._util.scrub import capture_env, drop_harness_secrets
from copeca_action.errors import CopecaError, os_error


def command_modules() -> list[str]:
    """Every public module of copeca_action._cli is one verb with `register(subparsers)`."""
    from copeca_action import _cli

    return sorted(m.name for m in pkgutil.iter_modules(_cli.__path__)
                  if not m.name.startswith("_"))


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="copeca-action",
        description="Cost per correct answer of CLI coding agents, with and without your tool.")
    parser.add_argument("--version", action="version", version=f"%(prog)s {__version__}")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND", required=True)
    for name in command_modules():
        importlib.import_module(f"copeca_action._cli.{name}").register(sub)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    capture_env()  # the environment's secrets stay known to the scrubber once removed
    drop_harness_secrets()  # tokens the CLI never uses: no child process inherits them
    args = build_parser().parse_args(argv)
    try:
        code: int = args.func(args)
        return code
    except CopecaError as exc:
        report_error(exc)
        return exc.exit_code
    except KeyboardInterrupt:
        print("interrupted", file=sys.stderr)
        return 130
    except OSError as exc:  # a full disk, a folder where a file was expected: named, exit 2
        report_error(os_error(exc))
        return 2


if __name__ == "__main__":
    sys.exit(main())
