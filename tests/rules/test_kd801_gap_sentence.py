"""KD801's sentence on MaxLag against the checker lag claims only what the buffers allow: on the
real 0.8.2.2 demo (small records) the buffers could hold 300,000 records against a lag of 148, and
the story said the lag 'froze' as if the gap proved it."""

from __future__ import annotations

from kafkadiag.rules.kd801_old_consumer_stall_explained import _gap_sentence


def test_a_gap_past_the_buffers_is_records_never_consumed() -> None:
    sentence = _gap_sentence(0, 5000, 1200)
    assert sentence.endswith("its buffers hold at most 1200 records, so the rest was never consumed")


def test_a_gap_within_the_buffers_does_not_prove_a_stall_by_itself() -> None:
    sentence = _gap_sentence(0, 148, 302026)
    assert "could hold up to 302026 records, so the gap alone does not prove a stall" in sentence
    assert "never consumed" not in sentence


def test_without_a_bound_the_gap_is_stated_alone() -> None:
    assert _gap_sentence(3, 900, None).startswith("MaxLag is 3 while the checker lag is 900")
