"""Settings (feedback/core/settings.py): flags over the environment over the config file, over a
Databricks secret scope (through the real databricks-sdk, against the workspace stand-in); a
job's parameters into settings, one way for every entry point."""

from pathlib import Path

import pytest

from feedback.core.settings import SECRET_SCOPE_KEYS, SettingsError, job_parameters, load_settings, where_to_set


def test_defaults_to_the_local_backend():
    settings = load_settings()
    assert settings.backend == "local"
    assert settings.missing() == []


def test_flag_beats_environment_beats_config_file(tmp_path, monkeypatch):
    config = tmp_path / "feedback.toml"
    config.write_text('backend = "hdinsight"\nbootstrap_servers = "10.0.0.4:9092"\nlocal_kafka_port = 29092\n')
    monkeypatch.setenv("FEEDBACK_CONFIG", str(config))
    from_file = load_settings()
    assert (from_file.backend, from_file.bootstrap_servers, from_file.local_kafka_port) == (
        "hdinsight",
        "10.0.0.4:9092",
        29092,
    )

    monkeypatch.setenv("FEEDBACK_BOOTSTRAP_SERVERS", "10.0.0.5:9092")
    assert load_settings().bootstrap_servers == "10.0.0.5:9092"
    assert load_settings().local_kafka_port == 29092  # the file still supplies what env does not

    assert load_settings(bootstrap_servers="10.0.0.6:9092").bootstrap_servers == "10.0.0.6:9092"


def test_config_flag_names_a_file(tmp_path):
    config = tmp_path / "other.toml"
    config.write_text('backend = "eventhubs"\n')
    assert load_settings(config_file=config).backend == "eventhubs"
    with pytest.raises(SettingsError, match="does not exist"):
        load_settings(config_file=tmp_path / "absent.toml")


def test_unknown_backend_is_a_clear_error():
    with pytest.raises(SettingsError) as error:
        load_settings(backend="kinesis")
    message = str(error.value)
    assert "backend" in message and "FEEDBACK_BACKEND" in message and "'local', 'hdinsight' or 'eventhubs'" in message


def test_unknown_key_in_the_config_file_is_rejected(tmp_path, monkeypatch):
    config = tmp_path / "feedback.toml"
    config.write_text('bootstrap_server = "typo:9092"\n')
    monkeypatch.setenv("FEEDBACK_CONFIG", str(config))
    with pytest.raises(SettingsError, match="bootstrap_server"):
        load_settings()


@pytest.mark.parametrize(
    ("backend", "missing", "hint"),
    [
        ("hdinsight", "bootstrap_servers", "pulumi stack output kafkaBootstrapServers"),
        ("eventhubs", "eventhubs_connection_string", "FEEDBACK_EVENTHUBS_CONNECTION_STRING"),
    ],
)
def test_missing_backend_settings_name_the_key_and_where_to_set_it(backend, missing, hint):
    settings = load_settings(backend=backend)
    assert settings.missing() == [missing]
    with pytest.raises(SettingsError) as error:
        settings.require_complete()
    assert missing in str(error.value) and hint in str(error.value)
    assert where_to_set(missing) in str(error.value)


def test_secrets_never_appear_in_repr_or_str():
    secret = "Endpoint=sb://ns.servicebus.windows.net/;SharedAccessKeyName=send;SharedAccessKey=c2VjcmV0LWtleQ=="  # pragma: allowlist secret
    settings = load_settings(backend="eventhubs", eventhubs_connection_string=secret)
    assert "c2VjcmV0LWtleQ" not in repr(settings)
    assert "c2VjcmV0LWtleQ" not in str(settings)
    assert settings.eventhubs_connection_string.get_secret_value() == secret


def test_bootstrap_list_is_normalised():
    assert (
        load_settings(bootstrap_servers=" 10.0.0.4:9092 , 10.0.0.5:9092,").bootstrap_servers
        == "10.0.0.4:9092,10.0.0.5:9092"
    )


def test_state_dir_is_a_path():
    assert isinstance(load_settings(state_dir="x/y").kafka_state_dir, Path)


def test_settings_given_to_a_child_process_through_the_environment_come_back_the_same(tmp_path, monkeypatch):
    settings = load_settings(
        state_dir=tmp_path / "state",
        slack_bot_token="xoxb-secret",
        tables_nice=7,
        slack_feedback_channels=["#a", "#b"],
        fail_on_data_loss=False,
        starting_offsets='{"feedback-alerts": {"0": 5}}',
    ).replace(max_offsets_per_trigger=None)
    environment = settings.as_environment()
    assert environment["FEEDBACK_SLACK_BOT_TOKEN"] == "xoxb-secret"
    assert environment["FEEDBACK_MAX_OFFSETS_PER_TRIGGER"] == "null"  # unset, where the default is a value
    for name, value in environment.items():
        monkeypatch.setenv(name, value)
    monkeypatch.setenv("FEEDBACK_CONFIG", str(tmp_path / "none.toml"))
    again = load_settings()
    assert again.model_dump() == settings.model_dump()
    assert again.slack_bot_token.get_secret_value() == "xoxb-secret"


# -- a job's parameters into settings (job_parameters): one way for every entry point --------------


def test_pairs_become_setting_overrides_and_the_jobs_own_options_stay_apart():
    overrides, options = job_parameters(
        ["--part", "tables", "--bootstrap-servers", "10.0.0.4:9092", "--on-databricks", "true"], own=("part",)
    )
    assert overrides == {"bootstrap_servers": "10.0.0.4:9092", "on_databricks": "true"}
    assert options == {"part": "tables"}


def test_a_notebook_passes_the_same_parameters_as_keywords_and_unset_ones_are_left_out():
    overrides, options = job_parameters(
        [], {"trigger": "available-now", "part": "scorer", "table_location": None}, own=("part",)
    )
    assert overrides == {"trigger": "available-now"}
    assert options == {"part": "scorer"}


@pytest.mark.parametrize("argv", [["--backend"], ["backend", "local"], ["--backend", "local", "stray"]])
def test_anything_but_name_value_pairs_is_refused(argv):
    with pytest.raises(SettingsError, match="expected --name value pairs"):
        job_parameters(argv)


@pytest.mark.parametrize("name", sorted(SECRET_SCOPE_KEYS))
def test_a_secret_is_never_a_parameter_and_the_error_says_where_it_goes(name):
    flag = "--" + name.replace("_", "-")
    with pytest.raises(
        SettingsError, match=f"{name} is a secret.*FEEDBACK_{name.upper()}.*'{SECRET_SCOPE_KEYS[name]}'"
    ):
        job_parameters([flag, "s3cr3t"])
    with pytest.raises(SettingsError, match=f"{name} is a secret"):
        job_parameters([], {name: "s3cr3t"})


def test_on_databricks_the_tables_have_no_default_location_and_the_error_names_the_stack_output():
    with pytest.raises(SettingsError) as error:
        load_settings(on_databricks=True).table_for("feedback_scored")
    assert "`pulumi stack output jobsTableLocation`" in str(error.value)
    assert load_settings(on_databricks=True, table_location="/Volumes/c/feedback/state/tables/").table_for("t") == (
        "/Volumes/c/feedback/state/tables/t"
    )
    assert load_settings().table_for("t").endswith("tables/t")  # locally: under the state dir
