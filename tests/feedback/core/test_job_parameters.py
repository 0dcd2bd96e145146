"""A job's parameters into settings (feedback.core.settings.job_parameters): one way for every entry point."""

import pytest

from feedback.core.settings import SECRET_SCOPE_KEYS, SettingsError, job_parameters


def test_pairs_become_setting_overrides_and_the_jobs_own_options_stay_apart():
    overrides, options = job_parameters(["--part", "tables", "--bootstrap-servers", "10.0.0.4:9092",
                                         "--on-databricks", "true"], own=("part",))
    assert overrides == {"bootstrap_servers": "10.0.0.4:9092", "on_databricks": "true"}
    assert options == {"part": "tables"}


def test_a_notebook_passes_the_same_parameters_as_keywords_and_unset_ones_are_left_out():
    overrides, options = job_parameters([], {"trigger": "available-now", "part": "scorer", "table_location": None},
                                        own=("part",))
    assert overrides == {"trigger": "available-now"}
    assert options == {"part": "scorer"}


@pytest.mark.parametrize("argv", [["--backend"], ["backend", "local"], ["--backend", "local", "stray"]])
def test_anything_but_name_value_pairs_is_refused(argv):
    with pytest.raises(SettingsError, match="expected --name value pairs"):
        job_parameters(argv)


@pytest.mark.parametrize("name", sorted(SECRET_SCOPE_KEYS))
def test_a_secret_is_never_a_parameter_and_the_error_says_where_it_goes(name):
    flag = "--" + name.replace("_", "-")
    with pytest.raises(SettingsError, match=f"{name} is a secret.*FEEDBACK_{name.upper()}.*'{SECRET_SCOPE_KEYS[name]}'"):
        job_parameters([flag, "s3cr3t"])
    with pytest.raises(SettingsError, match=f"{name} is a secret"):
        job_parameters([], {name: "s3cr3t"})


def test_the_pipeline_entry_point_refuses_a_secret_parameter_before_it_starts_anything():
    from jobs.sentiment_pipeline import main

    with pytest.raises(SystemExit, match="error: slack_bot_token is a secret"):
        main(["--part", "dispatcher", "--slack-bot-token", "xoxb-not-a-token"])


def test_the_price_trend_entry_point_reads_its_parameters_the_same_way():
    from jobs.price_trend import main

    with pytest.raises(SystemExit, match="error: --window 'hourly': expected one of tumbling, sliding"):
        main(["chart", "--window", "hourly"])
    with pytest.raises(SystemExit, match="error: x_bearer_token is a secret"):
        main(["run", "--x-bearer-token", "t"])
