"""`spades serve`, `spades migrate` and `spades schema`."""

from __future__ import annotations

import argparse
import sys


def _serve(args: argparse.Namespace) -> int:
    from app.api.serve import serve

    serve(host=args.host, port=args.port, database_url=args.database_url, workers=args.workers)
    return 0


def _migrate(args: argparse.Namespace) -> int:
    from app.settings import load_settings
    from app.store.migrate import upgrade

    settings = load_settings().with_overrides(database_url=args.database_url)
    upgrade(settings.database_url)
    print(f"database at {settings.database_url} is up to date", file=sys.stderr)
    return 0


def _schema(args: argparse.Namespace) -> int:
    from app.api.graphql.schema import schema_text

    text = schema_text()
    if args.out:
        with open(args.out, "w", encoding="utf-8") as target:
            target.write(text)
    else:
        sys.stdout.write(text)
    return 0


def add_commands(commands: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    """Register serve, migrate and schema."""
    srv = commands.add_parser("serve", help="run the GraphQL server")
    srv.add_argument("--host", default=None)
    srv.add_argument("--port", type=int, default=None)
    srv.add_argument("--database-url", default=None)
    srv.add_argument("--workers", type=int, default=1, help="server processes on one port")
    srv.set_defaults(run=_serve)

    mig = commands.add_parser("migrate", help="apply pending database migrations")
    mig.add_argument("--database-url", default=None)
    mig.set_defaults(run=_migrate)

    sch = commands.add_parser("schema", help="print the GraphQL schema (SDL)")
    sch.add_argument("--out", default=None)
    sch.set_defaults(run=_schema)
