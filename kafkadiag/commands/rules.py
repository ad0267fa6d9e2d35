"""`kafkadiag rules` and `kafkadiag explain`: the rule catalogue, listed or one rule in full."""

from __future__ import annotations

import click

from kafkadiag.commands.completion import complete_rules
from kafkadiag.commands.formats import format_option
from kafkadiag.exitcodes import ExitCode


@click.command("rules", short_help="List the rule catalogue.")
@format_option(("table", "markdown"), "markdown prints docs/rules.md.")
def rules_command(output_format: str) -> int:
    """List the rule catalogue: code, name, severity, title."""
    from kafkadiag.rules.registry import RULES

    if output_format == "markdown":
        from kafkadiag.rules.docs import render_markdown

        click.echo(render_markdown(), nl=False)
        return int(ExitCode.OK)
    from kafkadiag.report.output import report_stream
    from kafkadiag.report.rules_table import render_rules

    with report_stream(None, "table") as stream:
        render_rules(stream, RULES)
    return int(ExitCode.OK)


@click.command("explain", short_help="Print a rule's full text: what, why, what to do.")
@click.argument("code", shell_complete=complete_rules)
def explain_command(code: str) -> int:
    """Print a rule's full text: what it detects, why it matters, what to do."""
    from kafkadiag.errors import UsageError
    from kafkadiag.rules.registry import rule_by_code

    rule = rule_by_code(code)
    if rule is None:
        raise UsageError(f"no rule {code!r}", help_text="`kafkadiag rules` lists the codes and names.")
    from kafkadiag.report.output import report_stream
    from kafkadiag.report.rules_table import render_explanation

    with report_stream(None, "table") as stream:
        render_explanation(stream, rule)
    return int(ExitCode.OK)
