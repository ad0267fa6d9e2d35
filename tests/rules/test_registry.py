"""Invariants of the rule catalogue, and the generated docs kept in step with it."""

from __future__ import annotations

import importlib
import pkgutil
from pathlib import Path

import pytest

import kafkadiag.rules
from kafkadiag.rules.base import Rule, Severity
from kafkadiag.rules.registry import RETIRED_CODES, RULES, rule_by_code

REPO = Path(__file__).resolve().parents[2]
CASES = Path(__file__).parent / "cases"


def rule_modules() -> list[str]:
    return [m.name for m in pkgutil.iter_modules(kafkadiag.rules.__path__) if m.name.startswith("kd")]


def test_codes_and_names_are_unique_and_never_retired() -> None:
    codes = [rule.code for rule in RULES]
    names = [rule.name for rule in RULES]
    assert len(codes) == len(set(codes))
    assert len(names) == len(set(names))
    assert not set(codes) & RETIRED_CODES


def test_every_rule_module_is_registered_and_named_after_its_rule() -> None:
    registered = {rule.__module__.rsplit(".", 1)[1]: rule for rule in RULES}
    modules = rule_modules()
    assert sorted(modules) == sorted(registered), "a kdNNN_*.py module is missing from RULES, or vice versa"
    for module_name, rule in registered.items():
        assert module_name == f"{rule.code.lower()}_{rule.name.replace('-', '_')}", module_name
        module = importlib.import_module(f"kafkadiag.rules.{module_name}")
        rules_in_module = [
            v
            for v in vars(module).values()
            if isinstance(v, type)
            and issubclass(v, Rule)
            and v is not Rule
            and v.__module__ == module.__name__
        ]
        assert rules_in_module == [rule], f"{module_name} must define exactly its one rule"


def test_rules_are_listed_in_code_order() -> None:
    assert [rule.code for rule in RULES] == sorted(rule.code for rule in RULES)


def test_a_malformed_rule_is_refused_when_its_class_is_created() -> None:
    with pytest.raises(TypeError, match="kebab-case"):

        class BadName(Rule):  # noqa: F841 - the class statement itself must fail
            code = "KD999"
            name = "BadName"
            title = "t"
            severity = Severity.INFO
            explanation = "e"
            remedy = "r"

    with pytest.raises(TypeError, match="lacks remedy"):

        class NoRemedy(Rule):  # noqa: F841
            code = "KD998"
            name = "no-remedy"
            title = "t"
            severity = Severity.INFO
            explanation = "e"
            remedy = ""


def test_every_rule_has_fail_and_pass_cases() -> None:
    for rule in RULES:
        case_file = CASES / f"{rule.code}.toml"
        assert case_file.is_file(), f"{rule.code} has no case file {case_file.name}"


def test_lookup_by_code_or_name() -> None:
    assert rule_by_code("kd201") is rule_by_code("fetcher-blocked-on-full-queue") is not None
    assert rule_by_code("kd201").code == "KD201"
    assert rule_by_code("KD999") is None
