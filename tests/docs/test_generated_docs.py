"""Every page of docs/ that is rendered from the code is the rendering of the code as it is now.

A page that drifts fails here with the command that renders it again.
"""

from __future__ import annotations

import os
import subprocess
import sys
from importlib import resources
from pathlib import Path

import pytest

from kafkadiag.docs import inputs
from kafkadiag.model import DumpFormat
from kafkadiag.readlimits import ENV_VARIABLES
from kafkadiag.report import prometheus_docs
from kafkadiag.rules.docs import render_markdown
from tests.wild.catalogue import TABLE_PAGE, load
from tests.wild.table import render as render_wild_table

REPO = Path(__file__).resolve().parents[2]
DOCS = REPO / "docs"


def test_docs_inputs_md_is_rendered_from_the_format_registry() -> None:
    assert (DOCS / "inputs.md").read_text(encoding="utf-8") == inputs.render(), (
        f"docs/inputs.md is out of date: run `{inputs.COMMAND}`"
    )


def test_docs_rules_md_is_rendered_from_the_rule_registry() -> None:
    assert (DOCS / "rules.md").read_text(encoding="utf-8") == render_markdown(), (
        "docs/rules.md is out of date: run `kafkadiag rules --format markdown > docs/rules.md`"
    )


def test_docs_wild_dumps_md_is_rendered_from_the_catalogue() -> None:
    actual = TABLE_PAGE.read_text(encoding="utf-8") if TABLE_PAGE.exists() else ""
    assert actual == render_wild_table(load()), (
        "docs/wild-dumps.md is stale: python -m tests.wild.table > docs/wild-dumps.md"
    )


def test_docs_prometheus_md_reference_is_rendered_from_the_family_table() -> None:
    text = (DOCS / "prometheus.md").read_text(encoding="utf-8")
    begin, end = prometheus_docs.BEGIN, prometheus_docs.END
    assert begin in text and end in text
    block = text[text.index(begin) : text.index(end) + len(end)] + "\n"
    assert block == prometheus_docs.render(), (
        "docs/prometheus.md is stale: its reference is `python -m kafkadiag.report.prometheus_docs`"
    )


def test_a_format_without_its_section_stops_the_inputs_page() -> None:
    # GIVEN the template with the hotspot section's marker taken out
    template = resources.files("kafkadiag.docs").joinpath("inputs.template.md").read_text("utf-8")
    without_hotspot = template.replace("<!-- format: hotspot -->\n", "")
    # WHEN its sections are matched with the registry THEN the missing format is named
    with pytest.raises(inputs.TemplateError, match="no section .* for hotspot"):
        inputs._sections(without_hotspot)


def test_a_section_naming_no_format_stops_the_inputs_page() -> None:
    template = "<!-- format: hotspot jstack-9000 -->\n### HotSpot\n"
    with pytest.raises(inputs.TemplateError, match="names 'jstack-9000', not a format"):
        inputs._sections(template)


def test_every_format_of_the_registry_has_its_row_and_anchor() -> None:
    page = inputs.render()
    for fmt in DumpFormat:
        assert f"| [`{fmt.value}`](#{fmt.value}) |" in page, fmt
        assert f'<a id="{fmt.value}"></a>' in page, fmt


def test_every_bound_option_on_the_inputs_page_is_one_the_commands_take() -> None:
    for command in (["dump", "parse"], ["dump", "analyze"], ["diagnose"], ["batch"]):
        shown = subprocess.run(
            [sys.executable, "-m", "kafkadiag", *command, "--help"],
            capture_output=True,
            text=True,
            check=False,
            env={**os.environ, "COLUMNS": "200"},
        )
        assert shown.returncode == 0, shown.stderr
        for variable in ENV_VARIABLES:
            assert inputs.option_for(variable) in shown.stdout, (command, variable)
