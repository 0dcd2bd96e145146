"""The Slack Web API stand-in (feedback/devtools/slack_standin.py) as slack_sdk's own WebClient sees
it: chat.postMessage's rate limits (per channel and over the workspace), Block Kit's limits
and the `text` limit, and conversations.history's bounds and paging. The stand-in's
docstring says which Slack documentation each rule follows.

The reliability scenarios (tests/jobs/alerts/test_dispatcher.py, tests/reliability/) trust these
answers: a dispatcher that keeps to Slack's rate is told so by `max_rate`, not by a stand-in
that accepts everything. No retry handlers: every 429 reaches the test.
"""

from __future__ import annotations

import json
import threading
import time

import pytest
from slack_sdk import WebClient
from slack_sdk.errors import SlackApiError

from feedback.devtools.loopback import Request
from feedback.devtools.slack_standin import SlackWebStandIn, StandInProcess

NEGATIVE, POSITIVE = "C0NEGATIVE", "C0POSITIVE"


def web(slack: SlackWebStandIn | StandInProcess) -> WebClient:
    return WebClient(token=slack.token, base_url=slack.base_url, retry_handlers=[])


def retry_after(error: SlackApiError) -> str | None:
    return next((v for k, v in error.response.headers.items() if k.lower() == "retry-after"), None)


def refused(call) -> SlackApiError:
    with pytest.raises(SlackApiError) as caught:
        call()
    return caught.value


# -- rate limits ---------------------------------------------------------------------


def test_a_second_post_to_a_channel_within_its_second_gets_429_and_another_channel_does_not():
    with SlackWebStandIn(channel_rate=1) as slack:
        client = web(slack)
        client.chat_postMessage(channel=NEGATIVE, text="first")
        error = refused(lambda: client.chat_postMessage(channel=NEGATIVE, text="too soon"))
        assert error.response.status_code == 429
        assert retry_after(error) == "1"
        assert error.response.data == {"ok": False, "error": "ratelimited"}
        client.chat_postMessage(channel=POSITIVE, text="another channel")  # channels are independent
    assert [(p.channel, p.text) for p in slack.posts] == [(NEGATIVE, "first"), (POSITIVE, "another channel")]
    assert slack.rate_limited == 1
    assert slack.max_rate("negative-feedback") == slack.max_rate("#positive-feedback") == 1


def test_the_stand_in_in_a_process_of_its_own_enforces_the_rate_and_reports_its_429s_when_it_stops():
    with StandInProcess(channel_rate=1) as slack:
        client = web(slack)
        client.chat_postMessage(channel=NEGATIVE, text="first")
        assert refused(lambda: client.chat_postMessage(channel=NEGATIVE, text="too soon")).response.status_code == 429
        history = client.conversations_history(channel=NEGATIVE)
        assert [m["text"] for m in history["messages"]] == ["first"]
    assert slack.rate_limited == 1


def test_a_post_after_waiting_retry_after_is_accepted():
    with SlackWebStandIn(channel_rate=1) as slack:
        client = web(slack)
        client.chat_postMessage(channel=NEGATIVE, text="first")
        error = refused(lambda: client.chat_postMessage(channel=NEGATIVE, text="too soon"))
        time.sleep(int(retry_after(error)) + 0.25)
        client.chat_postMessage(channel=NEGATIVE, text="after waiting")
    assert [p.text for p in slack.posts_to("negative-feedback")] == ["first", "after waiting"]
    assert slack.rate_limited == 1
    assert slack.max_rate("negative-feedback") == 1


def test_the_workspace_rate_holds_across_channels():
    with SlackWebStandIn(workspace_rate=1) as slack:
        client = web(slack)
        client.chat_postMessage(channel=NEGATIVE, text="first")
        error = refused(lambda: client.chat_postMessage(channel=POSITIVE, text="another channel, too soon"))
        assert (error.response.status_code, retry_after(error)) == (429, "1")
    assert [p.text for p in slack.posts] == ["first"]
    assert slack.rate_limited == 1
    assert slack.max_rate(None) == 1


def at_once(count: int, post) -> list[int]:
    """The HTTP status of `count` posts started together, each `post(i)` in a thread of its own."""
    start, answers = threading.Barrier(count), []

    def run(i: int) -> None:
        start.wait()
        answers.append(post(i))

    threads = [threading.Thread(target=run, args=(i,)) for i in range(count)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(30)
    return answers


def test_concurrent_posts_to_one_channel_never_pass_its_rate():
    """The rate check and the record are one step: of posts arriving together, one gets in.

    Five through slack_sdk (LoopbackHTTP's listen backlog is ThreadingHTTPServer's default of
    5: more connections at once can be reset), and 32 straight into `handle`."""
    with SlackWebStandIn(channel_rate=1) as slack:
        client = web(slack)

        def through_the_client(i: int) -> int:
            try:
                return client.chat_postMessage(channel=NEGATIVE, text=f"post {i}").status_code
            except SlackApiError as error:
                return error.response.status_code

        def into_handle(i: int) -> int:
            body = json.dumps({"channel": NEGATIVE, "text": f"direct {i}"}).encode()
            headers = {"authorization": f"Bearer {slack.token}", "content-type": "application/json"}
            return slack.handle(Request("POST", "/api/chat.postMessage", {}, headers, body)).status

        answers = at_once(5, through_the_client) + at_once(32, into_handle)
    assert len(answers) == 37 and set(answers) <= {200, 429} and 200 in answers
    assert answers.count(200) == len(slack.posts) and answers.count(429) == slack.rate_limited
    assert slack.max_rate("negative-feedback") == 1


def test_max_rate_counts_posts_in_half_open_windows():
    with SlackWebStandIn() as slack:  # no rate enforced: every post is accepted
        client = web(slack)
        for i in range(3):
            client.chat_postMessage(channel=NEGATIVE, text=f"burst {i}")
        client.chat_postMessage(channel=POSITIVE, text="elsewhere")
    assert slack.rate_limited == 0
    assert slack.max_rate("negative-feedback") == 3
    assert slack.max_rate("negative-feedback", window_s=0.0) == 0
    assert slack.max_rate("positive-feedback") == 1
    assert slack.max_rate("product-feedback") == 0
    assert slack.max_rate(None) == 4


# -- message limits --------------------------------------------------------------------


def section(text: str) -> dict:
    return {"type": "section", "text": {"type": "mrkdwn", "text": text}}


def plain(text: str) -> dict:
    return {"type": "plain_text", "text": text}


@pytest.mark.parametrize(
    ("blocks", "pointer"),
    [
        ([section("x")] * 51, "/blocks"),
        ([section("x" * 3001)], "/blocks/0/text/text"),
        ([{"type": "divider"}, {"type": "header", "text": plain("h" * 151)}], "/blocks/1/text/text"),
        ([{"type": "header", "text": {"type": "mrkdwn", "text": "*header*"}}], "/blocks/0/text"),
        ([{"type": "context", "elements": [plain("c")] * 11}], "/blocks/0/elements"),
        ([{"type": "section", "fields": [plain("f")] * 11}], "/blocks/0/fields"),
        ([{"type": "section", "fields": [plain("f"), plain("f" * 2001)]}], "/blocks/0/fields/1/text"),
    ],
    ids=[
        "51-blocks",
        "3001-char-section",
        "151-char-header",
        "mrkdwn-header",
        "11-context-elements",
        "11-fields",
        "2001-char-field",
    ],
)
def test_blocks_over_block_kits_limits_are_refused_and_not_recorded(blocks, pointer):
    with SlackWebStandIn() as slack:
        error = refused(lambda: web(slack).chat_postMessage(channel=NEGATIVE, text="fallback", blocks=blocks))
    assert error.response.status_code == 200
    assert error.response["error"] == "invalid_blocks"
    assert any(f"[json-pointer:{pointer}]" in e for e in error.response["errors"]), error.response["errors"]
    assert slack.posts == []


def test_blocks_at_block_kits_limits_are_posted_and_kept():
    blocks = [
        {"type": "header", "text": plain("h" * 150)},
        section("x" * 3000),
        {"type": "section", "fields": [plain("f" * 2000)] * 10},
        {"type": "context", "elements": [plain("c")] * 10},
    ] + [{"type": "divider"}] * 46
    with SlackWebStandIn() as slack:
        answer = web(slack).chat_postMessage(channel=NEGATIVE, text="fallback", blocks=blocks)
        history = web(slack).conversations_history(channel=NEGATIVE)
    assert answer["ok"] and answer["message"]["blocks"] == blocks
    assert [p.blocks for p in slack.posts] == [blocks]
    assert history["messages"][0]["blocks"] == blocks


def test_blocks_sent_form_encoded_as_a_json_string_are_checked_and_kept_as_a_list():
    with SlackWebStandIn() as slack:
        client = web(slack)
        too_many = json.dumps([section("x")] * 51)
        error = refused(lambda: client.api_call("chat.postMessage", data={"channel": NEGATIVE, "blocks": too_many}))
        assert error.response["error"] == "invalid_blocks"
        client.api_call("chat.postMessage", data={"channel": NEGATIVE, "blocks": json.dumps([section("ok")])})
        error = refused(lambda: client.api_call("chat.postMessage", data={"channel": NEGATIVE, "blocks": "[not json"}))
        assert error.response["error"] == "invalid_blocks_format"
    assert [p.blocks for p in slack.posts] == [[section("ok")]]


def test_a_text_over_40000_characters_is_truncated_and_posted_with_a_warning():
    with SlackWebStandIn() as slack:
        answer = web(slack).chat_postMessage(channel=NEGATIVE, text="a" * 40_000 + "b" * 10)
    assert answer["ok"]
    assert answer["response_metadata"]["warnings"] == ["message_truncated"]
    assert slack.posts[0].text == "a" * 40_000
    assert answer["message"]["text"] == "a" * 40_000


def test_the_invalid_blocks_fault_refuses_one_post_without_recording_it():
    with SlackWebStandIn(faults=["invalid_blocks"]) as slack:
        client = web(slack)
        error = refused(lambda: client.chat_postMessage(channel=NEGATIVE, text="fallback", blocks=[section("x")]))
        assert error.response["error"] == "invalid_blocks"
        client.chat_postMessage(channel=NEGATIVE, text="plain")
    assert [p.text for p in slack.posts] == ["plain"]


def test_a_slow_channel_records_a_post_at_once_and_answers_it_later_while_others_answer():
    with SlackWebStandIn(slow_channels={"#negative-feedback": 5}) as slack:
        client = web(slack)
        answered = threading.Event()
        slow = threading.Thread(
            target=lambda: (client.chat_postMessage(channel=NEGATIVE, text="slow"), answered.set()), daemon=True
        )
        slow.start()
        slack.wait_for(lambda: len(slack.posts_to("negative-feedback")) == 1, 10, "the slow post recorded")
        client.chat_postMessage(channel=POSITIVE, text="answered meanwhile")
        assert not answered.is_set()
        slow.join(30)
        assert answered.is_set()
    assert [p.text for p in slack.posts] == ["slow", "answered meanwhile"]


# -- conversations.history --------------------------------------------------------------


def posted(slack: SlackWebStandIn, count: int) -> list[str]:
    """Post `count` messages to #negative-feedback (and one elsewhere); their ts, oldest first."""
    client = web(slack)
    ts = [client.chat_postMessage(channel=NEGATIVE, text=f"message {i}")["ts"] for i in range(count)]
    client.chat_postMessage(channel=POSITIVE, text="another channel")
    return ts


def test_history_keeps_between_oldest_and_latest_newest_first():
    with SlackWebStandIn() as slack:
        ts = posted(slack, 7)
        client = web(slack)
        between = client.conversations_history(channel=NEGATIVE, oldest=ts[1], latest=ts[5])
        inclusive = client.conversations_history(channel=NEGATIVE, oldest=ts[1], latest=ts[5], inclusive=True)
        before = client.conversations_history(channel=NEGATIVE, latest=ts[2])
        everything = client.conversations_history(channel=NEGATIVE)
    assert [m["ts"] for m in between["messages"]] == [ts[4], ts[3], ts[2]]
    assert [m["ts"] for m in inclusive["messages"]] == [ts[5], ts[4], ts[3], ts[2], ts[1]]
    assert [m["ts"] for m in before["messages"]] == [ts[1], ts[0]]
    assert [m["ts"] for m in everything["messages"]] == ts[::-1]
    assert not everything["has_more"] and everything["response_metadata"]["next_cursor"] == ""
    assert slack.history_calls == 4


@pytest.mark.parametrize("limit", [1, 2, 3, 7, 100])
def test_history_pages_by_limit_return_each_message_once(limit):
    with SlackWebStandIn() as slack:
        ts = posted(slack, 7)
        client = web(slack)
        pages, cursor = [], None
        while True:
            page = client.conversations_history(channel=NEGATIVE, oldest=ts[0], limit=limit, cursor=cursor)
            pages.append([m["ts"] for m in page["messages"]])
            cursor = page["response_metadata"]["next_cursor"]
            assert bool(cursor) == page["has_more"]
            if not page["has_more"]:
                break
    assert all(len(p) <= limit for p in pages)
    assert [t for p in pages for t in p] == ts[:0:-1]  # newest first, each once; ts[0] is not after oldest
    assert slack.history_calls == len(pages) == -(-6 // limit)


def test_history_paging_holds_while_new_messages_arrive():
    """A cursor carries on below the previous page, so a message posted meanwhile does not shift it."""
    with SlackWebStandIn() as slack:
        ts = posted(slack, 4)
        client = web(slack)
        first = client.conversations_history(channel=NEGATIVE, limit=2)
        client.chat_postMessage(channel=NEGATIVE, text="posted while paging")
        second = client.conversations_history(
            channel=NEGATIVE, limit=2, cursor=first["response_metadata"]["next_cursor"]
        )
    assert [m["ts"] for m in first["messages"] + second["messages"]] == ts[::-1]
    assert not second["has_more"]


def test_history_refuses_a_cursor_it_did_not_give():
    with SlackWebStandIn() as slack:
        error = refused(lambda: web(slack).conversations_history(channel=NEGATIVE, cursor="not-a-cursor"))
    assert error.response["error"] == "invalid_cursor"
