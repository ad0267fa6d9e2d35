"""The alerting rules in contrib/prometheus, checked and unit-tested by the real promtool."""

from __future__ import annotations

import re
import shutil
from pathlib import Path

from kafkadiag.report.prometheus_names import FAMILIES
from tests.prometheus.promtool import RULE_TESTS, RULES, promtool


def test_rules_are_valid_prometheus_rules() -> None:
    result = promtool("check", "rules", str(RULES))
    assert result.returncode == 0, result.stdout + result.stderr
    assert "SUCCESS: 10 rules found" in result.stdout, result.stdout


def test_every_alert_fires_on_its_series_and_stays_silent_on_others() -> None:
    result = promtool("test", "rules", RULE_TESTS.name, cwd=RULE_TESTS.parent)
    assert result.returncode == 0, result.stdout + result.stderr
    assert "SUCCESS" in result.stdout, result.stdout


def test_the_rule_tests_catch_a_changed_threshold(tmp_path: Path) -> None:
    # GIVEN the rules with the no-progress threshold raised from 10 to 20 minutes
    shutil.copy(RULE_TESTS, tmp_path / RULE_TESTS.name)
    text = RULES.read_text()
    assert "kafkadiag_partition_last_progress_timestamp_seconds > 600" in text
    (tmp_path / RULES.name).write_text(
        text.replace("last_progress_timestamp_seconds > 600", "last_progress_timestamp_seconds > 1200")
    )
    # WHEN promtool runs the same tests
    result = promtool("test", "rules", RULE_TESTS.name, cwd=tmp_path)
    # THEN they fail, naming the alert
    assert result.returncode != 0, result.stdout
    assert "KafkaConsumerNoProgress" in result.stdout + result.stderr


def test_rules_use_only_exported_series() -> None:
    text = RULES.read_text()
    used = set(re.findall(r"\bkafkadiag_[a-z_]+", text))
    assert used, text
    assert used <= set(FAMILIES), sorted(used - set(FAMILIES))
