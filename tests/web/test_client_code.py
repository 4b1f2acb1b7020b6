"""The client's code checks: operation types match schema.graphql (GraphQL Code Generator
fails when they drift, or when an operation no longer fits the schema), tsc --strict and
eslint are clean."""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest

from tests.support.server import ROOT

WEB = ROOT / "web"


def npm(script: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        ["npm", "run", "--silent", script], cwd=WEB, capture_output=True, text=True, check=False
    )


@pytest.mark.parametrize("script", ["codegen:check", "typecheck", "lint"])
def test_client_code_is_clean(web_dist: Path, script: str) -> None:
    result = npm(script)
    assert result.returncode == 0, (
        f"npm run {script}:\n{result.stdout[-3000:]}{result.stderr[-3000:]}"
    )


def test_operation_types_drift_when_the_schema_changes(web_dist: Path, tmp_path: Path) -> None:
    """The drift check is real: against a schema without a field the client uses, it fails."""
    schema = (ROOT / "schema.graphql").read_text()
    assert "  spadesBroken: Boolean!\n" in schema
    changed = tmp_path / "schema.graphql"
    changed.write_text(schema.replace("  spadesBroken: Boolean!\n", ""))
    config = tmp_path / "codegen.yml"
    config.write_text(
        (WEB / "codegen.yml").read_text().replace("schema: ../schema.graphql", f"schema: {changed}")
    )
    result = subprocess.run(
        ["npx", "graphql-codegen", "--config", str(config), "--check"],
        cwd=WEB,
        capture_output=True,
        text=True,
        check=False,
    )
    assert result.returncode != 0
