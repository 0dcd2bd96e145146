"""What a client that could not connect to Event Hubs is told: the cause the broker gave, or
every likely one (feedback/clients/kafka_client.py `_unavailable`; the broker itself in
tests/backends/test_eventhubs.py)."""

from __future__ import annotations

from kafka.errors import KafkaTimeoutError

from feedback.clients.kafka_client import _unavailable
from feedback.core.settings import load_settings

CONNECTION = "Endpoint=sb://fbk01-hubs.servicebus.windows.net/;SharedAccessKeyName=send;SharedAccessKey=c2VjcmV0"


def told(last_failure, login_failed=False) -> str:
    settings = load_settings(backend="eventhubs", eventhubs_connection_string=CONNECTION)
    return " ".join(str(_unavailable(settings, "producer", KafkaTimeoutError(), last_failure, login_failed)).split())


def test_a_firewall_refusal_names_the_networking_rules_not_the_password():
    message = told(
        "<BrokerConnection ...> SaslAuthenticationFailedError: TOPIC_AUTHORIZATION_FAILED: "
        "The request was rejected by firewall checks."
    )
    assert "refused this client's address" in message and "Networking settings" in message
    assert "The request was rejected by firewall checks." in message
    assert "eventhubs_connection_string" not in message


def test_a_refused_login_without_a_reason_lists_the_password_the_tier_and_the_network():
    for message in (told("SaslAuthenticationFailedError: SASL_AUTHENTICATION_FAILED"), told(None, login_failed=True)):
        assert "(1) eventhubs_connection_string (FEEDBACK_EVENTHUBS_CONNECTION_STRING)" in message
        assert "(2) the namespace is on the Basic tier, which has no Kafka endpoint" in message
        assert "(3) the namespace's networking rules do not allow this client's address" in message
        assert "c2VjcmV0" not in message
