"""The docs name what exists: docs/architecture.md's table of modules lists every module of
the project's packages, and nothing that is gone."""

from __future__ import annotations

import re

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
    table = text[text.index("| layer | modules |") :].split("\n\n", 1)[0]
    named = {
        name for cell in re.findall(r"^\| `[\w.]+` \| (.+) \|$", table, re.M) for name in re.findall(r"`(\w+)`", cell)
    }
    missing = sorted(modules() - named)
    assert not missing, f"docs/architecture.md's table does not name: {', '.join(missing)}"
    # A name in the table that is neither a module nor a command or subpackage it mentions is stale.
    commands = {"kafka", "jars", "topics", "status", "demo", "config", "components", "lib", "providers"}
    stale = sorted(named - modules() - commands)
    assert not stale, f"docs/architecture.md's table names what does not exist: {', '.join(stale)}"


DEPLOY_DOC = REPO / "docs" / "deploy-azure.md"
SECTION_REFERENCE = re.compile(r"""docs/deploy-azure\.md, ["']""")
# The seam between two string literals Python joins ("...deploy-azure.md, "\n    f"Prerequisites").
JOINED_LITERALS = re.compile(r"""["']\s*\n\s*f?["']""")


def test_every_section_of_the_deploy_guide_the_code_names_is_there():
    headings = [
        heading.strip(">*# ").rstrip(".*")
        for heading in re.findall(r"^(?:#+ .+|> \*\*.+?\*\*)", DEPLOY_DOC.read_text(), re.MULTILINE)
    ]
    named = [
        (path.relative_to(REPO), text[match.end() : match.end() + 80])
        for package in PACKAGES
        for path in (REPO / package).rglob("*.py")
        for text in [JOINED_LITERALS.sub("", path.read_text())]
        for match in SECTION_REFERENCE.finditer(text)
    ]
    assert named, "no code names a section of docs/deploy-azure.md"
    missing = [(str(path), rest) for path, rest in named if not any(rest.startswith(h) for h in headings)]
    assert missing == []
