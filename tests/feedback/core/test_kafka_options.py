import pytest

from feedback.core.kafka_options import (
    EVENTHUBS_USER,
    SHADED_PLAIN_LOGIN_MODULE,
    BackendConfigError,
    bootstrap_servers,
    jaas_config,
    jaas_quote,
    kafka_client_config,
    spark_kafka_options,
)
from feedback.core.settings import SettingsError, load_settings

CONNECTION = "Endpoint=sb://feedback-ns.servicebus.windows.net/;SharedAccessKeyName=send;SharedAccessKey=abc/def+ghi=="


def eventhubs(**extra):
    return load_settings(**{"backend": "eventhubs", "eventhubs_connection_string": CONNECTION, **extra})


def test_local_is_plaintext_at_the_local_broker():
    settings = load_settings(local_kafka_port=29092)
    config = kafka_client_config(settings, "producer")
    assert config["bootstrap_servers"] == ["127.0.0.1:29092"]
    assert config["security_protocol"] == "PLAINTEXT"
    assert "sasl_mechanism" not in config
    assert spark_kafka_options(settings, "source") == {
        "kafka.bootstrap.servers": "127.0.0.1:29092",
        "kafka.request.timeout.ms": "30000",
        "kafka.security.protocol": "PLAINTEXT",
        "kafka.fetch.max.wait.ms": "10",
    }
    assert "kafka.fetch.max.wait.ms" not in spark_kafka_options(settings, "sink")
    assert (
        spark_kafka_options(settings.replace(spark_fetch_max_wait_ms=500), "source")["kafka.fetch.max.wait.ms"] == "500"
    )


def test_hdinsight_uses_the_advertised_broker_ips():
    settings = load_settings(backend="hdinsight", bootstrap_servers="10.1.0.11:9092,10.1.0.12:9092")
    assert kafka_client_config(settings, "consumer")["bootstrap_servers"] == ["10.1.0.11:9092", "10.1.0.12:9092"]
    assert spark_kafka_options(settings, "sink")["kafka.bootstrap.servers"] == "10.1.0.11:9092,10.1.0.12:9092"


def test_hdinsight_without_brokers_is_refused_by_name():
    with pytest.raises(SettingsError, match="bootstrap_servers"):
        kafka_client_config(load_settings(backend="hdinsight"), "producer")


def test_eventhubs_client_is_sasl_ssl_plain_with_the_connection_string():
    config = kafka_client_config(eventhubs(), "producer")
    assert config["bootstrap_servers"] == ["feedback-ns.servicebus.windows.net:9093"]
    assert config["security_protocol"] == "SASL_SSL"
    assert config["sasl_mechanism"] == "PLAIN"
    assert config["sasl_plain_username"] == "$ConnectionString"
    assert config["sasl_plain_password"] == CONNECTION


def test_eventhubs_sets_microsofts_recommended_values_explicitly():
    producer = kafka_client_config(eventhubs(), "producer")
    consumer = kafka_client_config(eventhubs(), "consumer")
    assert producer["request_timeout_ms"] == 60_000
    assert producer["metadata_max_age_ms"] == 180_000 and producer["connections_max_idle_ms"] == 180_000
    assert producer["max_request_size"] < 1_046_528
    assert producer["batch_size"] <= producer["max_request_size"]
    assert consumer["session_timeout_ms"] >= 30_000
    assert producer["enable_idempotence"] is True and producer["acks"] == "all"
    assert "transactional_id" not in producer


@pytest.mark.parametrize(("tier", "compression"), [("standard", None), ("premium", "gzip"), ("dedicated", "gzip")])
def test_eventhubs_compression_follows_the_tier(tier, compression):
    assert kafka_client_config(eventhubs(eventhubs_tier=tier), "producer").get("compression_type") == compression
    assert spark_kafka_options(eventhubs(eventhubs_tier=tier), "sink").get("kafka.compression.type") == compression


def test_each_role_gets_only_arguments_its_kafka_python_client_accepts():
    from kafka import KafkaAdminClient, KafkaConsumer, KafkaProducer

    for role, cls in (("producer", KafkaProducer), ("consumer", KafkaConsumer), ("admin", KafkaAdminClient)):
        for settings in (load_settings(), eventhubs()):
            unknown = set(kafka_client_config(settings, role)) - set(cls.DEFAULT_CONFIG)
            assert not unknown, f"{role} would reject {unknown}"


def test_jaas_quoting_keeps_semicolons_equals_and_escapes_quotes():
    tricky = 'Endpoint=sb://n.servicebus.windows.net/;SharedAccessKeyName=a;SharedAccessKey=x"y\\z='
    quoted = jaas_quote(tricky)
    assert quoted == '"Endpoint=sb://n.servicebus.windows.net/;SharedAccessKeyName=a;SharedAccessKey=x\\"y\\\\z="'
    line = jaas_config(eventhubs(eventhubs_connection_string=tricky))
    assert line.startswith("org.apache.kafka.common.security.plain.PlainLoginModule required ")
    assert f'username="{EVENTHUBS_USER}"' in line
    assert line.endswith(f"password={quoted};")


def test_spark_on_databricks_uses_the_shaded_login_module():
    options = spark_kafka_options(eventhubs(on_databricks=True), "source")
    assert options["kafka.sasl.jaas.config"].startswith(SHADED_PLAIN_LOGIN_MODULE + " required")
    assert options["kafka.security.protocol"] == "SASL_SSL" and options["kafka.sasl.mechanism"] == "PLAIN"
    assert options["kafka.bootstrap.servers"] == "feedback-ns.servicebus.windows.net:9093"


def test_a_trusted_ca_reaches_both_clients(tmp_path):
    ca = tmp_path / "ca.pem"
    settings = eventhubs(ssl_cafile=ca, bootstrap_servers="127.0.0.1:29094")
    assert kafka_client_config(settings, "producer")["ssl_cafile"] == str(ca)
    options = spark_kafka_options(settings, "source")
    assert (options["kafka.ssl.truststore.type"], options["kafka.ssl.truststore.location"]) == ("PEM", str(ca))
    assert options["kafka.bootstrap.servers"] == "127.0.0.1:29094"


def test_a_connection_string_without_an_endpoint_is_explained():
    with pytest.raises(BackendConfigError, match="Endpoint=sb://"):
        bootstrap_servers(eventhubs(eventhubs_connection_string="SharedAccessKeyName=a;SharedAccessKey=b"))


def test_readers_sign_in_with_the_listen_connection_string_and_writers_with_the_send_one():
    listen = CONNECTION.replace("SharedAccessKeyName=", "SharedAccessKeyName=listen-")
    settings = load_settings(
        backend="eventhubs", eventhubs_connection_string=CONNECTION, eventhubs_listen_connection_string=listen
    )
    assert kafka_client_config(settings, "consumer")["sasl_plain_password"] == listen
    assert kafka_client_config(settings, "producer")["sasl_plain_password"] == CONNECTION
    assert jaas_quote(listen) in spark_kafka_options(settings, "source")["kafka.sasl.jaas.config"]
    assert jaas_quote(CONNECTION) in spark_kafka_options(settings, "sink")["kafka.sasl.jaas.config"]


def test_without_a_listen_connection_string_readers_use_the_one_connection_string():
    settings = load_settings(backend="eventhubs", eventhubs_connection_string=CONNECTION)
    assert kafka_client_config(settings, "consumer")["sasl_plain_password"] == CONNECTION
