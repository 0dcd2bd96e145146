"""The trigger grammar (feedback/core/triggers.py): one grammar for the jobs, the settings and the stack."""

import pytest

from feedback.core.settings import SettingsError, load_settings
from feedback.core.triggers import Trigger, TriggerError, parse_trigger
from infra.lib.job_specs import trigger_problem


@pytest.mark.parametrize(
    "text, trigger, options",
    [
        (
            "processing-time=250ms",
            Trigger("processing-time", "250 milliseconds"),
            {"processingTime": "250 milliseconds"},
        ),
        ("processing-time=1.5s", Trigger("processing-time", "1.5 seconds"), {"processingTime": "1.5 seconds"}),
        (" available-now ", Trigger("available-now"), {"availableNow": True}),
        ("continuous=1s", Trigger("continuous", "1 seconds"), {"continuous": "1 seconds"}),
    ],
)
def test_each_form_becomes_the_writer_option_spark_takes(text, trigger, options):
    assert parse_trigger(text) == trigger
    assert trigger.writer_options() == options


@pytest.mark.parametrize("text", ["every 5s", "processing-time=5h", "processing-time=", "continuous", ""])
def test_a_trigger_outside_the_grammar_is_a_settings_error_that_shows_the_forms(text):
    with pytest.raises(SettingsError, match="is not one of processing-time=250ms.*available-now, continuous=1s"):
        parse_trigger(text)


def test_continuous_is_refused_on_databricks_only():
    assert parse_trigger("continuous=1s", on_databricks=False).kind == "continuous"
    with pytest.raises(TriggerError, match="Azure Databricks does not offer the continuous trigger"):
        parse_trigger("continuous=1s", on_databricks=True)


def test_the_settings_refuse_a_bad_trigger_when_they_load_and_say_where_to_set_it():
    with pytest.raises(
        SettingsError,
        match=r"tables_trigger: .*'every 30s' is not one of.*feedback pipeline run --tables-trigger`, FEEDBACK_TABLES_TRIGGER",
    ):
        load_settings(tables_trigger="every 30s")
    assert load_settings(trigger="processing-time=1s").trigger == "processing-time=1s"


@pytest.mark.parametrize("text", ["processing-time=5h", "every 5s", "processing-time=250"])
def test_the_stack_refuses_what_the_jobs_cannot_parse(text):
    with pytest.raises(TriggerError):
        parse_trigger(text)
    assert trigger_problem(text) == f"trigger {text!r} is not processing-time=<n>ms|s|m"


def test_the_stack_takes_every_processing_time_the_jobs_take():
    for text in ("processing-time=250ms", "processing-time=2.5s", "processing-time=1m"):
        assert parse_trigger(text, on_databricks=True).kind == "processing-time"
        assert trigger_problem(text) is None
