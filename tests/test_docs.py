"""The documentation shipped in the repository: README.md, SECURITY.md and docs/.

It must stand on its own (no link or path outside the repository, no broken link or
anchor), stay written for the product's users (no tracker or review jargon, a short
front page), and its GraphQL examples and schema excerpts must fit the schema the server
serves."""

from __future__ import annotations

import re
import subprocess
import textwrap
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import graphql
import pytest
from graphql import (
    DocumentNode,
    EnumTypeDefinitionNode,
    ExecutableDefinitionNode,
    GraphQLEnumType,
    GraphQLInputObjectType,
    GraphQLObjectType,
    GraphQLSchema,
    InputObjectTypeDefinitionNode,
    InputObjectTypeExtensionNode,
    InputValueDefinitionNode,
    ObjectTypeDefinitionNode,
    ObjectTypeExtensionNode,
)

from tests.support.server import ROOT

README = ROOT / "README.md"
DOCS = sorted([README, ROOT / "SECURITY.md", *(ROOT / "docs").rglob("*.md")])
README_MAX_LINES = 400

# Places a document may not name: the spec kept outside the repository (a sibling
# folder `shared`, its RULES/API/RECORD/STACK-NOTES files), and machine paths.
OUTSIDE = re.compile(
    r"\.\./shared\b|\bshared/(?:RULES|API|RECORD|STACK-NOTES)\.md|(?<![\w.])/(?:work|tmp)/"
)
# Tracker and review jargon that means nothing to a reader of the product's docs.
JARGON = re.compile(r"\b(issue\s+#?\d+|stop\s+#?\d+|review\s+mends)\b", re.IGNORECASE)

LINK = re.compile(r"(?<!!)\[[^\]]*\]\(([^)\s]+)\)")
CODE_SPAN = re.compile(r"`([^`\n]+)`")
FENCE = re.compile(r"^( {0,3})```(\w*)\n(.*?)^\1```", re.DOTALL | re.MULTILINE)
HEADING = re.compile(r"^(#{1,6}) +(.+?) *$", re.MULTILINE)
# A code span naming a path of the repository, e.g. `app/rules/views.py` or `docs/`.
REPO_PATH = re.compile(r"^(?:app|docs|tests|scripts|web|\.ci)/[\w./-]*$")
# Paths the docs name that are built or installed, never committed.
NOT_COMMITTED = {"web/dist", "web/dist/", "web/.tools", "tests/clients/node_modules"}


def rel(path: Path) -> str:
    """The path relative to the repository root, for messages."""
    return str(path.relative_to(ROOT))


def without_fences(text: str) -> str:
    """The text with its fenced code blocks blanked, each character's position kept
    (links and headings live outside them)."""
    return FENCE.sub(lambda m: re.sub(r"[^\n]", " ", m.group(0)), text)


def slug(heading: str) -> str:
    """The anchor GitHub gives a heading: lowercase, punctuation dropped, spaces to '-'."""
    text = re.sub(r"`|\*\*|\[([^\]]*)\]\([^)]*\)", r"\1", heading).strip().lower()
    return re.sub(r"[^\w\- ]", "", text).replace(" ", "-")


def anchors(path: Path) -> set[str]:
    """Every heading anchor of a markdown file (repeated headings get -1, -2...)."""
    seen: dict[str, int] = {}
    out: set[str] = set()
    for match in HEADING.finditer(without_fences(path.read_text(encoding="utf-8"))):
        base = slug(match.group(2))
        count = seen.get(base, 0)
        seen[base] = count + 1
        out.add(base if count == 0 else f"{base}-{count}")
    return out


def links(path: Path) -> Iterator[str]:
    """The relative link targets of a markdown file (web and mail links left out)."""
    for match in LINK.finditer(without_fences(path.read_text(encoding="utf-8"))):
        target = match.group(1)
        if not re.match(r"^[a-z][a-z0-9+.-]*:", target):
            yield target


@pytest.mark.parametrize("doc", DOCS, ids=rel)
def test_a_document_names_nothing_outside_the_repository(doc: Path) -> None:
    assert OUTSIDE.findall(doc.read_text(encoding="utf-8")) == []


@pytest.mark.parametrize("doc", DOCS, ids=rel)
def test_a_document_speaks_to_users_not_to_the_tracker(doc: Path) -> None:
    assert JARGON.findall(doc.read_text(encoding="utf-8")) == []


def test_the_front_page_stays_short() -> None:
    lines = README.read_text(encoding="utf-8").count("\n")
    assert lines <= README_MAX_LINES, f"README.md has {lines} lines: move detail into docs/"


@pytest.mark.parametrize("doc", DOCS, ids=rel)
def test_every_relative_link_leads_to_a_file_and_heading_of_the_repository(doc: Path) -> None:
    broken = []
    for target in links(doc):
        file_part, _, anchor = target.partition("#")
        dest = (doc.parent / file_part).resolve() if file_part else doc
        if not dest.exists() or not dest.is_relative_to(ROOT):
            broken.append(f"{target}: no such file in the repository")
        elif anchor and dest.suffix == ".md" and anchor not in anchors(dest):
            broken.append(f"{target}: no heading #{anchor} in {rel(dest)}")
    assert broken == []


@pytest.mark.parametrize("doc", DOCS, ids=rel)
def test_every_repository_path_a_document_names_exists(doc: Path) -> None:
    named = {
        span.rstrip(".,")
        for span in CODE_SPAN.findall(without_fences(doc.read_text(encoding="utf-8")))
        if REPO_PATH.match(span)
    }
    missing = sorted(p for p in named if p not in NOT_COMMITTED and not (ROOT / p).exists())
    assert missing == []


def test_the_checks_catch_a_broken_link_a_stray_path_and_jargon(tmp_path: Path) -> None:
    # The offending samples are built from parts, so that the repository holds none.
    jargon, outside = " ".join(["Issue", "17"]), "/".join(["..", "shared", "API.md"])
    page = tmp_path / "page.md"
    page.write_text(f"## Intro\nSee [x](missing.md), [y](#intro) and {outside}; {jargon}.\n")
    assert list(links(page)) == ["missing.md", "#intro"]
    assert anchors(page) == {"intro"}
    assert JARGON.findall(page.read_text()) == [jargon]
    assert len(OUTSIDE.findall(page.read_text())) == 1
    assert OUTSIDE.findall("/".join(["", "work", "x"]) + " " + "/".join(["", "tmp", "y"]))
    assert not JARGON.findall("please do not file public issues; a hard stop (100 ms)")
    assert not OUTSIDE.findall("docs/rules.md, /usr/bin/chromium, web/dist/")
    assert slug("Follow a game: `gameUpdates`") == "follow-a-game-gameupdates"
    assert not REPO_PATH.match("app/api/tables.py: message_view")


# ------------------------------------------------------------------ GraphQL in the docs


@dataclass(frozen=True)
class Block:
    """A fenced graphql block, with the file and the section it sits in."""

    doc: Path
    line: int
    section: str
    text: str

    def __str__(self) -> str:
        return f"{rel(self.doc)}:{self.line}"


def graphql_blocks() -> list[Block]:
    """Every ```graphql block of the documents, with its section's heading."""
    blocks = []
    for doc in DOCS:
        text = doc.read_text(encoding="utf-8")
        headings = [(m.start(), m.group(2)) for m in HEADING.finditer(without_fences(text))]
        for fence in FENCE.finditer(text):
            _indent, language, body = fence.groups()
            if language == "graphql":
                section = next((h for at, h in reversed(headings) if at < fence.start()), "")
                line = text.count("\n", 0, fence.start()) + 1
                blocks.append(Block(doc, line, section, textwrap.dedent(body)))
    return blocks


def is_schema_excerpt(block: Block) -> bool:
    """A block of type definitions (SDL) rather than operations; one that does not parse
    counts as an operation, so that its test reports the syntax error."""
    try:
        document = graphql.parse(block.text)
    except graphql.GraphQLError:
        return False
    return not all(isinstance(d, ExecutableDefinitionNode) for d in document.definitions)


BLOCKS = graphql_blocks()
EXAMPLES = [b for b in BLOCKS if not is_schema_excerpt(b)]
# The core block is the contract's text, checked field by field by tests/server/test_schema.py.
EXCERPTS = [b for b in BLOCKS if is_schema_excerpt(b) and b.section != "Core schema"]


@pytest.fixture(scope="module")
def schema() -> GraphQLSchema:
    """The committed schema.graphql: the schema the server serves."""
    return graphql.build_schema((ROOT / "schema.graphql").read_text(encoding="utf-8"))


def test_the_docs_hold_examples_and_schema_excerpts() -> None:
    assert len(EXAMPLES) >= 30 and len(EXCERPTS) >= 4
    assert any(b.section == "Core schema" for b in BLOCKS)


@pytest.mark.parametrize("block", EXAMPLES, ids=str)
def test_every_example_operation_is_valid_against_the_schema(
    block: Block, schema: GraphQLSchema
) -> None:
    document = graphql.parse(block.text)
    assert all(isinstance(d, ExecutableDefinitionNode) for d in document.definitions)
    assert [e.message for e in graphql.validate(schema, document)] == []


def _input_value(node: InputValueDefinitionNode) -> tuple[str, str | None]:
    default = node.default_value
    return graphql.print_ast(node.type), None if default is None else graphql.print_ast(default)


def _served_input_value(served: object) -> tuple[str, str | None]:
    node = getattr(served, "ast_node", None)
    default = node.default_value if node is not None else None
    return str(getattr(served, "type", "")), None if default is None else graphql.print_ast(default)


def excerpt_mismatches(document: DocumentNode, schema: GraphQLSchema) -> Iterator[str]:
    """What an SDL excerpt says that the served schema does not."""
    for node in document.definitions:
        name = node.name.value if hasattr(node, "name") else "?"
        served = schema.get_type(name)
        if isinstance(node, EnumTypeDefinitionNode):
            values = [v.name.value for v in node.values or ()]
            if not isinstance(served, GraphQLEnumType) or list(served.values) != values:
                yield f"enum {name} {values}"
        elif isinstance(node, ObjectTypeDefinitionNode | ObjectTypeExtensionNode):
            if not isinstance(served, GraphQLObjectType):
                yield f"type {name}"
                continue
            for field in node.fields or ():
                got = served.fields.get(field.name.value)
                if got is None or str(got.type) != graphql.print_ast(field.type):
                    yield f"{name}.{field.name.value}: {graphql.print_ast(field.type)}"
                    continue
                for arg in field.arguments or ():
                    served_arg = got.args.get(arg.name.value)
                    if _input_value(arg) != _served_input_value(served_arg):
                        yield f"{name}.{field.name.value}({arg.name.value})"
        elif isinstance(node, InputObjectTypeDefinitionNode | InputObjectTypeExtensionNode):
            if not isinstance(served, GraphQLInputObjectType):
                yield f"input {name}"
                continue
            for input_field in node.fields or ():
                field_name = input_field.name.value
                if _input_value(input_field) != _served_input_value(served.fields.get(field_name)):
                    yield f"{name}.{field_name}"


@pytest.mark.parametrize("block", EXCERPTS, ids=str)
def test_every_schema_excerpt_matches_the_served_schema(
    block: Block, schema: GraphQLSchema
) -> None:
    assert list(excerpt_mismatches(graphql.parse(block.text), schema)) == []


def test_an_excerpt_that_drifts_is_caught(schema: GraphQLSchema) -> None:
    drifted = graphql.parse(
        "enum BotLevel { BASIC EXPERT }\n"
        "type Table { status: String! nope: Int }\n"
        "input CreateTableInput { turnSeconds: Int = 60 }\n"
        "extend type Query { chat(tableId: ID!, channel: ChatChannel!, last: Int = 10): "
        "[ChatMessage!]! }"
    )
    assert list(excerpt_mismatches(drifted, schema)) == [
        "enum BotLevel ['BASIC', 'EXPERT']",
        "Table.status: String!",
        "Table.nope: Int",
        "CreateTableInput.turnSeconds",
        "Query.chat(last)",
    ]


# ------------------------------------------------------------------ the whole repository

# Committed files another project wrote (vendored) or a tool generated.
VENDORED = (
    "app/api/static/",
    "uv.lock",
    "web/package-lock.json",
    "tests/clients/package-lock.json",
)
MACHINE = re.compile(
    r"\.\./shared\b|\bshared/(?:RULES|API|RECORD|STACK-NOTES)\.md|(?<![\w.])/work/"
)


def tracked_text_files() -> list[Path]:
    """Every committed text file of ours (vendored and generated files left out)."""
    listed = subprocess.run(
        ["git", "ls-files"], cwd=ROOT, capture_output=True, text=True, check=True
    ).stdout.split()
    files = []
    for name in listed:
        path = ROOT / name
        if name.startswith(VENDORED) or path == Path(__file__) or not path.is_file():
            continue
        try:
            path.read_text(encoding="utf-8")
        except UnicodeDecodeError:  # a picture, a binary
            continue
        files.append(path)
    return files


def test_no_committed_file_names_a_place_outside_the_repository() -> None:
    offending = [
        f"{rel(path)}:{number}"
        for path in tracked_text_files()
        for number, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1)
        if MACHINE.search(line)
    ]
    assert offending == []


def test_the_repository_check_catches_a_spec_path_and_a_machine_path() -> None:
    assert MACHINE.search("# see " + "/".join(["..", "shared", "RULES.md"]))
    assert MACHINE.search("open(" + "/".join(["", "work", "shared", "API.md"]) + ")")
    assert not MACHINE.search("docs/rules.md, /usr/bin/chromium, ./shared_views.py")
    assert len(tracked_text_files()) > 100
