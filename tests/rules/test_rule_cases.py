"""Every rule against real captured dumps: each fail case must fire it, each pass case must not.

Cases live in tests/rules/cases/KDnnn.toml:

    [[fail]]
    fixture = "real-old-consumer-stall-0.8.2.2/jstack-l.txt"  # or fixtures = [...] over time
    culprit = "order-worker-orders"                 # the first thread the finding names
    threads = ["order-worker-shipments"]            # more threads the findings must name
    severity = "error"                              # optional
    [[pass]]
    fixture = "real-old-consumer-healthy-0.8.2.2/jstack-l.txt"
"""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

if sys.version_info >= (3, 11):
    import tomllib
else:
    import tomli as tomllib

from kafkadiag.dumps import read_dumps
from kafkadiag.rules.base import Finding, Rule, Severity
from kafkadiag.rules.engine import analyze
from kafkadiag.rules.registry import RULES, rule_by_code

from ..conftest import CAPTURED

CASES = Path(__file__).parent / "cases"


def load_cases(kind: str, tests: bool = False) -> list[tuple[str, dict]]:
    """Dump cases (a fixture), or with `tests` the cluster rules' cases (a test node id)."""
    cases = []
    for path in sorted(CASES.glob("KD*.toml")):
        with path.open("rb") as handle:
            data = tomllib.load(handle)
        for number, case in enumerate(data.get(kind, [])):
            if ("test" in case) == tests:
                cases.append((f"{path.stem}-{kind}-{number}", {"code": path.stem, **case}))
    return cases


def run_case(case: dict) -> list[Finding]:
    paths = case.get("fixtures") or [case["fixture"]]
    dumps = [dump for path in paths for dump in read_dumps(str(CAPTURED / path))]
    report = analyze(dumps, select=[case["code"]])
    return [finding for finding in report.findings if finding.rule == case["code"]]


@pytest.mark.parametrize(("case_id", "case"), load_cases("fail"), ids=[c[0] for c in load_cases("fail")])
def test_fail_case_fires_the_rule(case_id: str, case: dict, monkeypatch: pytest.MonkeyPatch) -> None:
    if "inject_crash" in case:
        crashing = rule_by_code(case["inject_crash"])
        assert crashing is not None

        def explode(self: Rule, context: object) -> list[Finding]:
            raise RuntimeError("injected failure")

        monkeypatch.setattr(crashing, "check", explode)
        paths = [case["fixture"]]
        report = analyze([d for p in paths for d in read_dumps(str(CAPTURED / p))])
        crashed = [f for f in report.findings if f.rule == case["code"]]
        assert crashed and crashed[0].details["crashed_rule"] == case["inject_crash"]
        assert case["inject_crash"] in report.rules_run  # it ran, and the others did too
        assert len(report.rules_run) > 1
        return
    findings = run_case(case)
    assert findings, f"{case['code']} did not fire on {case.get('fixture') or case.get('fixtures')}"
    if "culprit" in case:
        assert findings[0].threads[0] == case["culprit"], [f.threads for f in findings]
    named = {thread for finding in findings for thread in finding.threads}
    for thread in case.get("threads", []):
        assert thread in named, (thread, [f.threads for f in findings])
    for thread in case.get("not_threads", []):
        assert thread not in named, (thread, [f.threads for f in findings])
    if "severity" in case:
        assert findings[0].severity is Severity(case["severity"])
    for finding in findings:
        assert finding.evidence, "every finding quotes its evidence"
        assert finding.remedy.strip()


@pytest.mark.parametrize(("case_id", "case"), load_cases("pass"), ids=[c[0] for c in load_cases("pass")])
def test_pass_case_stays_quiet(case_id: str, case: dict) -> None:
    findings = run_case(case)
    assert not findings, [f.message for f in findings]


@pytest.mark.parametrize(
    ("case_id", "case"),
    load_cases("fail", tests=True) + load_cases("pass", tests=True),
    ids=[c[0] for c in load_cases("fail", tests=True) + load_cases("pass", tests=True)],
)
def test_cluster_rule_cases_name_tests_that_check_the_rule(case_id: str, case: dict) -> None:
    """A cluster rule's fail case names a test that asserts its code; a pass case, a test that
    asserts a diagnosis without it (no findings, or other codes only)."""
    import ast

    from ..conftest import REPO

    path, _, name = case["test"].partition("::")
    text = (REPO / path).read_text(encoding="utf-8")
    (function,) = [n for n in ast.walk(ast.parse(text)) if isinstance(n, ast.FunctionDef) and n.name == name]
    source = ast.get_source_segment(text, function) or ""
    rule = rule_by_code(case["code"])
    assert rule is not None and rule.scope == "cluster"
    if "-fail-" in case_id:
        assert case["code"] in text, f"{case['test']} does not assert {case['code']}"
    else:
        assert "diagnose" in source and ("== []" in source or "ExitCode.OK" in source), case


def test_every_rule_has_at_least_one_fail_and_one_pass_case() -> None:
    fail_codes = {case["code"] for _, case in load_cases("fail") + load_cases("fail", tests=True)}
    pass_codes = {case["code"] for _, case in load_cases("pass") + load_cases("pass", tests=True)}
    missing = [rule.code for rule in RULES if rule.code not in fail_codes or rule.code not in pass_codes]
    assert not missing, f"rules without a fail and a pass case: {missing}"
