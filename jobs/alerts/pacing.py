"""How fast the dispatcher may post: per channel, and over the workspace (pure).

Slack's chat.postMessage "generally allows posting one message per second per channel,
while also maintaining a workspace-wide limit"; bursts above that are allowed, but "there is
no guarantee that messages will be stored or displayed to users"
(https://docs.slack.dev/apis/web-api/rate-limits). So a channel is given at most one message
every `1 / alert_channel_rate` seconds, with no burst, and all channels together at most
`alert_workspace_rate` a second (Slack publishes no number: "several hundred messages per
minute" on the chat.postMessage page; unset, only the channels' rates apply). A 429 holds
its channel for the `Retry-After` Slack names; an outage holds it for `alert_retry_s`.
Channels are paced apart, so one channel's wait never holds another.

A channel's next post waits an interval from the *answer* to its last one (`answered`), not
from its start: Slack counts a post when it arrives, which is after the request starts and
before its answer comes back, so two posts spaced that way reach Slack at least an interval
apart whatever their time on the wire (posts sent exactly an interval apart can arrive closer,
and are then answered 429 and wait a whole `Retry-After`). The cost is one round trip per
message. The workspace interval is counted the same way, from each post's start and answer;
posts to different channels may be on the wire at once, so it holds across channels only as
nearly as their times on the wire agree.

Times are `time.monotonic()` seconds, passed in, so a test can drive the clock.
"""

from __future__ import annotations

from dataclasses import dataclass, field, replace
from types import MappingProxyType
from typing import Mapping, Optional


@dataclass(frozen=True)
class Pacer:
    """When each channel may next be posted to. Each step returns a new Pacer."""

    channel_interval_s: float
    workspace_interval_s: Optional[float] = None
    channel_next: Mapping[str, float] = field(default_factory=lambda: MappingProxyType({}))
    workspace_next: float = 0.0

    @classmethod
    def of_rates(cls, channel_rate: float, workspace_rate: Optional[float]) -> "Pacer":
        return cls(1 / channel_rate, 1 / workspace_rate if workspace_rate else None)

    def ready_at(self, channel: str) -> float:
        """The earliest time a message may be posted to `channel`."""
        return max(self.channel_next.get(channel, 0.0), self.workspace_next)

    def ready(self, channel: str, now: float) -> bool:
        return self.ready_at(channel) <= now

    def posting(self, channel: str, now: float) -> "Pacer":
        """A post to `channel` starts now: the next waits a channel interval (and a workspace one),
        from its answer (`answered`) when that comes later."""
        return self.answered(channel, now)

    def answered(self, channel: str, now: float) -> "Pacer":
        """Slack answered a post to `channel` now: the next waits an interval from here."""
        workspace_next = self.workspace_next
        if self.workspace_interval_s:
            workspace_next = max(workspace_next, now + self.workspace_interval_s)
        return replace(self.hold(channel, now + self.channel_interval_s), workspace_next=workspace_next)

    def hold(self, channel: str, until: float) -> "Pacer":
        """Nothing goes to `channel` before `until` (Retry-After, or an outage's wait)."""
        if not until > self.channel_next.get(channel, 0.0):  # never shorter (nor a NaN Retry-After)
            return self
        return replace(self, channel_next=MappingProxyType({**self.channel_next, channel: until}))
