"""KD001: a rule raised an exception; its own finding says which and where."""

from __future__ import annotations

from collections.abc import Iterable

from kafkadiag.rules.base import Finding, Rule, Severity
from kafkadiag.rules.context import AnalysisContext


class RuleCrashed(Rule[AnalysisContext]):
    code = "KD001"
    name = "rule-crashed"
    title = "A rule failed on this input"
    severity = Severity.WARNING
    explanation = """
A rule raised an error instead of finishing. The other rules still ran, but what this rule
checks was not checked, so the report may miss a finding. The input is probably unusual in a way
the rule did not expect.
"""
    remedy = """
Report it with the input (or the lines around the quoted place) so the rule can be fixed; until
then, read the dump for what the named rule looks for (see `kafkadiag explain CODE`).
"""

    def check(self, context: AnalysisContext) -> Iterable[Finding]:
        return ()  # the engine creates these findings when another rule fails
