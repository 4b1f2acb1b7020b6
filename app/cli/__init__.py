"""The `spades` command: one module per family of subcommands, each registering its
own (`add_commands`)."""

from __future__ import annotations

import argparse
from collections.abc import Sequence

from app.cli import admin, database, games, server

# The families of subcommands, in the order `spades --help` lists them.
FAMILIES = (games, server, database, admin)


def build_parser() -> argparse.ArgumentParser:
    """The argument parser of the `spades` command."""
    parser = argparse.ArgumentParser(prog="spades", description="Spades Online")
    commands = parser.add_subparsers(dest="command", required=True)
    for family in FAMILIES:
        family.add_commands(commands)
    return parser


def main(argv: Sequence[str] | None = None) -> None:
    """Entry point of the `spades` console script."""
    args = build_parser().parse_args(argv)
    raise SystemExit(args.run(args))
