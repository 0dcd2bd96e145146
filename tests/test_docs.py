"""The docs name what exists: docs/architecture.md's table of modules lists every module of
the project's packages, and nothing that is gone; the sections of docs/deploy-azure.md the code
names are there; and each command in docs/benchmarks.md's summary is a `feedback bench`
subcommand with options it has."""

from __future__ import annotations

import re
import shlex

import typer.main
from typer.exceptions import TyperException

from feedback.cli.bench import app as bench_app
from tests.support.repo import REPO

PACKAGES = ("feedback", "jobs", "producers", "benchmarks", "infra")


def modules() -> set[str]:
    """Every module of the packages, by its name in the table: the file's stem, or for a
    module of a subpackage of `infra` also just its stem (the table groups them by subpackage)."""
    found = set()
    for package in PACKAGES:
        for path in (REPO / package).rglob("*.py"):
            if path.name != "__init__.py" and "samples" not in path.parts:
                found.add(path.stem)
    return found


def test_the_architecture_table_names_every_module_and_no_other():
    text = (REPO / "docs/architecture.md").read_text(encoding="utf-8")
    # the layers' table, and the table of jobs' families
    tables = [text[text.index(head) :].split("\n\n", 1)[0] for head in ("| layer | modules |", "| family | modules |")]
    named = {
        name
        for table in tables
        for cell in re.findall(r"^\| [^|]+ \| (.+) \|$", table, re.M)
        for name in re.findall(r"`(\w+)`", cell)
    }
    missing = sorted(modules() - named)
    assert not missing, f"docs/architecture.md's table does not name: {', '.join(missing)}"
    # A name in the table that is neither a module nor a command or subpackage it mentions is stale.
    commands = {"kafka", "jars", "topics", "status", "demo", "config", "components", "lib", "providers", "sizing"}
    families = {"views", "tables", "scoring", "alerts", "shift_alerts", "common"}  # jobs' subpackages
    stale = sorted(named - modules() - commands - families)
    assert not stale, f"docs/architecture.md's table names what does not exist: {', '.join(stale)}"


# The guides whose sections the code names: the first deploy and the runbook.
GUIDES = ("deploy-azure.md", "operate-azure.md")
SECTION_REFERENCE = re.compile(r"""docs/(deploy-azure|operate-azure)\.md, ["']""")
# The seam between two string literals Python joins ("...deploy-azure.md, "\n    f"Prerequisites").
JOINED_LITERALS = re.compile(r"""["']\s*\n\s*f?["']""")


def guide_headings(name: str) -> list[str]:
    text = (REPO / "docs" / name).read_text()
    return [
        heading.strip(">*# ").rstrip(".*") for heading in re.findall(r"^(?:#+ .+|> \*\*.+?\*\*)", text, re.MULTILINE)
    ]


def test_every_section_of_the_guides_the_code_names_is_there():
    headings = {name: guide_headings(name) for name in GUIDES}
    named = [
        (path.relative_to(REPO), f"{match.group(1)}.md", text[match.end() : match.end() + 80])
        for package in PACKAGES
        for path in (REPO / package).rglob("*.py")
        for text in [JOINED_LITERALS.sub("", path.read_text())]
        for match in SECTION_REFERENCE.finditer(text)
    ]
    assert {guide for _, guide, _ in named} == set(GUIDES), "the code names no section of one of the guides"
    missing = [
        (str(path), guide, rest) for path, guide, rest in named if not any(rest.startswith(h) for h in headings[guide])
    ]
    assert missing == []


def test_every_section_the_docs_name_in_a_guide_is_in_that_guide():
    # `docs/operate-azure.md, "Removing a backend"` in any doc, the README or a docstring lands.
    headings = {name: guide_headings(name) for name in GUIDES}
    reference = re.compile(r"""docs/(deploy-azure|operate-azure)\.md, ["']([^"'\n]+)["']""")
    texts = [REPO / "README.md", *(REPO / "docs").glob("*.md")]
    missing = [
        (str(path.relative_to(REPO)), match.group(2))
        for path in texts
        # lines joined, a quote's "> " marks left out, so that a name broken over two lines is whole
        for match in reference.finditer(" ".join(re.sub(r"(?m)^> ?", "", path.read_text(encoding="utf-8")).split()))
        if not any(
            match.group(2).startswith(h) or h.startswith(match.group(2)) for h in headings[f"{match.group(1)}.md"]
        )
    ]
    assert missing == []


BENCHMARKS_DOC = REPO / "docs" / "benchmarks.md"
SUMMARY_HEADER = "| benchmark | target | figure | met | command | taken (date, commit) |"


def summary_rows() -> list[dict[str, str]]:
    """Each row of docs/benchmarks.md's summary table, by column name."""
    lines = BENCHMARKS_DOC.read_text(encoding="utf-8").splitlines()
    assert SUMMARY_HEADER in lines, f"docs/benchmarks.md has no summary table headed {SUMMARY_HEADER!r}"
    start = lines.index(SUMMARY_HEADER)
    columns = [cell.strip() for cell in SUMMARY_HEADER.strip("|").split("|")]
    rows = []
    for line in lines[start + 2 :]:  # past the header and its |---| line
        if not line.startswith("|"):
            break
        cells = [cell.strip() for cell in line.strip("|").split("|")]
        assert len(cells) == len(columns), f"docs/benchmarks.md's summary: {len(cells)} cells in {line!r}"
        rows.append(dict(zip(columns, cells)))
    return rows


def bench_command_problems(command: str) -> list[str]:
    """What is wrong with a `feedback bench SUBCOMMAND --option value ...` line as the command
    would read it: a subcommand that does not exist, an option it does not have, a value it
    cannot parse. Nothing runs: the arguments are only parsed."""
    words = shlex.split(command)
    if words[:2] != ["feedback", "bench"] or len(words) < 3:
        return [f"{command!r} is not `feedback bench SUBCOMMAND ...`"]
    group = typer.main.get_command(bench_app)
    name, arguments = words[2], words[3:]
    subcommand = group.commands.get(name)
    if subcommand is None:
        return [f"{command!r}: no `feedback bench {name}`; there are {', '.join(sorted(group.commands))}"]
    options = {option for param in subcommand.params for option in (*param.opts, *param.secondary_opts)}
    unknown = [word.split("=")[0] for word in arguments if word.startswith("--") and word.split("=")[0] not in options]
    if unknown:
        return [
            f"{command!r}: `feedback bench {name}` has no {', '.join(unknown)}; it has {', '.join(sorted(options))}"
        ]
    try:
        subcommand.make_context(name, list(arguments))
    except TyperException as error:
        return [f"{command!r}: {error}"]
    return []


def test_every_command_in_the_benchmarks_summary_is_a_bench_subcommand_with_its_options():
    rows = summary_rows()
    assert rows, "docs/benchmarks.md's summary table has no rows"
    problems = []
    for row in rows:
        commands = re.findall(r"`([^`]+)`", row["command"])
        if not commands:
            problems.append(f"{row['benchmark']}: no command in backticks")
        problems += [
            f"{row['benchmark']}: {problem}" for command in commands for problem in bench_command_problems(command)
        ]
    assert problems == []
