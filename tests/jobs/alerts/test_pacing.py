"""Per-channel and workspace pacing of Slack posts (pure)."""

from __future__ import annotations

from jobs.alerts.pacing import Pacer


def test_a_channel_gets_one_message_an_interval_and_the_other_channel_is_not_held():
    pacer = Pacer.of_rates(1.0, None)
    assert pacer.ready("#neg", 100.0)
    pacer = pacer.posting("#neg", 100.0)
    assert not pacer.ready("#neg", 100.99) and pacer.ready("#neg", 101.0)
    assert pacer.ready("#pos", 100.0)


def test_the_next_post_waits_an_interval_from_the_answer_to_the_last():
    pacer = Pacer.of_rates(1.0, None)
    pacer = pacer.posting("#neg", 100.0)
    pacer = pacer.answered("#neg", 100.3)  # it reached Slack somewhere in between
    assert not pacer.ready("#neg", 101.29) and pacer.ready("#neg", 101.3)


def test_retry_after_holds_its_channel_only_and_never_shortens_a_wait():
    pacer = Pacer.of_rates(1.0, None)
    pacer = pacer.posting("#neg", 100.0)
    pacer = pacer.hold("#neg", 130.0)
    pacer = pacer.hold("#neg", 105.0)
    pacer = pacer.answered("#neg", 100.2)
    assert pacer.ready_at("#neg") == 130.0 and pacer.ready("#pos", 100.0)


def test_the_workspace_rate_spaces_posts_across_channels():
    pacer = Pacer.of_rates(1.0, 4.0)
    pacer = pacer.posting("#neg", 100.0)
    assert not pacer.ready("#pos", 100.2) and pacer.ready("#pos", 100.25)
    pacer = pacer.answered("#neg", 100.1)
    assert not pacer.ready("#pos", 100.3) and pacer.ready("#pos", 100.35)


def test_a_step_returns_a_new_pacer_and_leaves_the_one_it_was_given_as_it_was():
    pacer = Pacer.of_rates(1.0, 4.0)
    later = pacer.posting("#neg", 100.0).hold("#pos", 200.0)
    assert pacer.ready("#neg", 100.0) and pacer.ready("#pos", 100.0)
    assert later.ready_at("#neg") == 101.0 and later.ready_at("#pos") == 200.0


def test_a_retry_after_that_is_not_a_number_holds_nothing():
    pacer = Pacer.of_rates(1.0, None).hold("#neg", float("nan"))
    assert pacer.ready("#neg", 5.0)
