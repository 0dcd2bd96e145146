"""Per-channel and workspace pacing of Slack posts (pure)."""

from __future__ import annotations

from jobs.pacing import MARGIN_S, Pacer


def test_a_channel_gets_one_message_an_interval_and_the_other_channel_is_not_held():
    pacer = Pacer.of_rates(1.0, None)
    assert pacer.ready("#neg", 100.0)
    pacer.posting("#neg", 100.0)
    assert not pacer.ready("#neg", 101.0) and pacer.ready("#neg", 101.0 + MARGIN_S)  # a margin for the wire
    assert pacer.ready("#pos", 100.0)


def test_retry_after_holds_its_channel_only_and_never_shortens_a_wait():
    pacer = Pacer.of_rates(1.0, None)
    pacer.posting("#neg", 100.0)
    pacer.hold("#neg", 130.0)
    pacer.hold("#neg", 105.0)
    assert pacer.ready_at("#neg") == 130.0 and pacer.ready("#pos", 100.0)


def test_the_workspace_rate_spaces_posts_across_channels():
    pacer = Pacer.of_rates(1.0, 4.0)
    pacer.posting("#neg", 100.0)
    assert not pacer.ready("#pos", 100.25) and pacer.ready("#pos", 100.25 + MARGIN_S)
