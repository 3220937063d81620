"""docs/cli.md's reference agrees with the code it describes.

The `--fail-on error` rule lists the progress reasons, which must be exactly
`vocabulary.PROGRESS_REASONS` (what `failures.condition_errors` skips); every
`modelplane bench` subcommand the parser has has its own section, whose heading
names every option its `--help` shows. design/render.md's account of the input
overlay agrees with pruning, the default with a running world.

The reasons in docs/api/*.md's condition tables are not checked against the code
here: no one place in the code says which reasons a condition type can carry (a
function reports whatever reason an `Issue` raised below it carries, on its
`validity_condition`), so they are kept by review.
"""

import argparse
import re
from pathlib import Path

import pytest

from modelplane.core.vocabulary import PROGRESS_REASONS
from modelplane_cli.completion_command import commands
from modelplane_cli.main import build_parser

ROOT = Path(__file__).resolve().parents[1]
CLI_DOC = ROOT / "docs" / "cli.md"
# "... the progress reasons (`PROGRESS_REASONS` in `<file>`: `A`, `B` and `C`) ..."
_PROGRESS = re.compile(r"`PROGRESS_REASONS`\s+in\s+`([^`]+)`:\s+([^)]*)\)")
RENDER_DESIGN = ROOT / "design" / "render.md"
_HEADING = re.compile(r"^## `modelplane bench (\S+)([^`]*)`$", re.M)


def test_the_fail_on_rule_lists_exactly_the_progress_reasons() -> None:
    found = _PROGRESS.findall(CLI_DOC.read_text())
    assert len(found) == 1, "docs/cli.md names `PROGRESS_REASONS` in `<file>`: ... once"
    ((home, listed),) = found
    assert "PROGRESS_REASONS" in (ROOT / home).read_text(), f"{home} does not define it"
    documented = re.findall(r"`(\w+)`", " ".join(listed.split()))
    assert sorted(documented) == sorted(PROGRESS_REASONS), (
        f"docs/cli.md lists {sorted(documented)}; the code: {sorted(PROGRESS_REASONS)}"
    )


def test_the_render_design_says_a_removed_composite_is_pruned() -> None:
    """The overlay once said nothing removed from the sources leaves the world, which
    stopped being true when pruning became the default (`prune`)."""
    text = " ".join(RENDER_DESIGN.read_text().split())

    assert "a document removed from the sources is not deleted from the world" not in text
    assert "A composite removed from the sources is deleted when pruning" in text
    assert "a non-composite document removed from the sources stays in the world" in text


def _bench() -> dict[str, list[str]]:
    """Each `modelplane bench` subcommand and the options its --help shows."""
    bench = commands(build_parser()).subcommands.get("bench")
    if bench is None:
        pytest.skip("modelplane bench needs the dev workspace member (make sync)")
    return {
        name: sorted(
            option
            for option, text in command.options.items()
            if option.startswith("--") and option != "--help" and text != argparse.SUPPRESS
        )
        for name, command in bench.subcommands.items()
    }


def test_every_bench_subcommand_has_a_section_naming_its_options() -> None:
    headings = dict(_HEADING.findall(CLI_DOC.read_text()))
    bench = _bench()
    missing = sorted(set(bench) - set(headings))
    assert not missing, f"docs/cli.md has no `## modelplane bench NAME` section for {missing}"
    unknown = sorted(set(headings) - set(bench))
    assert not unknown, f"docs/cli.md documents bench subcommands the parser lacks: {unknown}"
    unnamed = {
        name: [o for o in options if not re.search(rf"{re.escape(o)}\b", headings[name])]
        for name, options in bench.items()
    }
    unnamed = {name: options for name, options in unnamed.items() if options}
    assert not unnamed, f"docs/cli.md's bench headings lack these options: {unnamed}"
