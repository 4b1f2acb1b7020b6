"""Moderation's pure rules (docs/rules.md, Moderation): who may be sanctioned, the bounds
of a mute and a note, and the limit of 10 stored reports in any hour (hypothesis)."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from app.rules.errors import ErrorCode, RuleError
from app.rules.moderation import (
    REPORT_WINDOW_SECONDS,
    REPORTS_PER_WINDOW,
    Role,
    check_may_sanction,
    check_mute_minutes,
    clean_note,
    clean_reason,
    mute_active,
    report_wait,
)

IDS = st.sampled_from(["a", "b", "c"])
ROLES = st.sampled_from(list(Role))


@given(actor=st.one_of(st.none(), IDS), target=IDS, role=ROLES)
def test_nobody_sanctions_an_admin_or_themselves_and_anyone_else_may_be(
    actor: str | None, target: str, role: Role
) -> None:
    forbidden = role is Role.ADMIN or actor == target
    try:
        check_may_sanction(actor, target, role)
    except RuleError as refusal:
        assert forbidden and refusal.code is ErrorCode.FORBIDDEN
    else:
        assert not forbidden


def test_only_moderators_and_admins_moderate() -> None:
    assert [r for r in Role if r.moderates] == [Role.MODERATOR, Role.ADMIN]


@given(st.integers(min_value=-(2**40), max_value=2**40))
def test_a_mute_lasts_one_minute_to_a_week(minutes: int) -> None:
    if 1 <= minutes <= 10_080:
        assert check_mute_minutes(minutes) == minutes
    else:
        with pytest.raises(RuleError) as refused:
            check_mute_minutes(minutes)
        assert refused.value.code is ErrorCode.BAD_USER_INPUT


@pytest.mark.parametrize("value", [True, 5.0, "5", None])
def test_a_mute_length_is_a_whole_number(value: object) -> None:
    with pytest.raises(RuleError):
        check_mute_minutes(value)


def test_a_note_is_at_most_500_characters_and_a_reason_1_to_500() -> None:
    assert clean_note(None) is None and clean_note("   ") is None
    assert clean_note(" x ") == "x" and clean_note("n" * 500) == "n" * 500
    for bad in ("n" * 501, 5):
        with pytest.raises(RuleError):
            clean_note(bad)
    assert clean_reason("  spam ") == "spam"
    for bad_reason in ("", "  ", "r" * 501, None):
        with pytest.raises(RuleError):
            clean_reason(bad_reason)


def test_a_mute_holds_until_it_ends_or_is_lifted() -> None:
    assert mute_active(ends_at=100.0, lifted_at=None, now=99.0)
    assert not mute_active(ends_at=100.0, lifted_at=None, now=100.0)
    assert not mute_active(ends_at=100.0, lifted_at=50.0, now=60.0)


@settings(max_examples=200, deadline=None)
@given(st.lists(st.floats(min_value=0, max_value=4 * REPORT_WINDOW_SECONDS), max_size=60))
def test_never_more_than_ten_reports_are_stored_in_any_hour_and_none_is_refused_needlessly(
    attempts: list[float],
) -> None:
    stored: list[float] = []
    for at in sorted(attempts):
        in_window = [t for t in stored if t > at - REPORT_WINDOW_SECONDS]
        wait = report_wait(stored, at)
        if wait is None:
            assert len(in_window) < REPORTS_PER_WINDOW
            stored.append(at)
        else:
            assert len(in_window) == REPORTS_PER_WINDOW
            # Waiting as told frees a place, and not waiting as long does not.
            assert report_wait(stored, at + wait + 1e-6) is None
            if wait > 1e-3:
                assert report_wait(stored, at + wait - 1e-3) is not None
    for at in stored:
        assert sum(1 for t in stored if at - REPORT_WINDOW_SECONDS < t <= at) <= 10
