"""`copeca-action scripted serve|check`: the scripted model server in the foreground."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from copeca_action.scripted import ScriptedServer, load_scripts


def register(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    p = sub.add_parser("scripted", help="the scripted model server (no key, no network)",
                       description="Serve per-task scripts over the Anthropic Messages and "
                       "OpenAI Responses APIs on 127.0.0.1, for the real agent CLIs.")
    verbs = p.add_subparsers(dest="scripted_command", metavar="VERB", required=True,
                             help="serve: run the server; check: validate script files")
    serve = verbs.add_parser("serve", help="serve scripts until interrupted")
    serve.add_argument("--scripts", type=Path, required=True, metavar="DIR",
                       help="folder (or file) of script YAML")
    serve.add_argument("--port", type=int, default=0,
                       help="port on 127.0.0.1 (default: a free one, printed)")
    serve.add_argument("--seed", type=int, default=0, help="seed for per-run variation")
    serve.add_argument("--log", type=Path, metavar="FILE",
                       help="append every request as a JSON line to FILE")
    serve.set_defaults(func=run_serve)
    check = verbs.add_parser("check", help="validate script files and list their ids")
    check.add_argument("scripts", type=Path, metavar="DIR", help="folder (or file) of scripts")
    check.set_defaults(func=run_check)


def run_serve(args: argparse.Namespace) -> int:
    if not 0 <= args.port <= 65535:
        print(f"--port: expected 0..65535, got {args.port}", file=sys.stderr)
        return 2
    server = ScriptedServer(args.scripts, seed=args.seed, log_path=args.log, port=args.port)
    server.start()
    print(f"scripted model server: {server.url} ({len(server.scripts)} scripts, "
          f"seed {args.seed}); Ctrl-C stops", flush=True)
    try:
        server.wait()
    except KeyboardInterrupt:
        pass
    finally:
        server.stop()
    return 0


def run_check(args: argparse.Namespace) -> int:
    scripts = load_scripts(args.scripts)
    for script in scripts:
        print(f"{script.id}: {len(script.steps)} steps, {len(script.faults)} faults")
    print(f"ok: {len(scripts)} scripts")
    return 0
