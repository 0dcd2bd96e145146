"""`feedback size` (feedback/cli/size.py): the rates it reads, and what it prints."""

from __future__ import annotations

import json

import pytest
from typer.testing import CliRunner

from feedback.cli.main import app
from feedback.core.sizing import MeasuredRates, live_cost_path, rates_path

RATES = MeasuredRates(
    10_000, 1.0, 2.0, 2, 1, 20_000.0, "2026-11-26T10:00:00.000Z", "8 cores (x86_64), test CPU", "abc1234"
)


def run(tmp_path, *args: str):
    return CliRunner().invoke(app, ["--state-dir", str(tmp_path), "size", *args], catch_exceptions=False)


def test_without_the_benchs_files_it_says_the_figures_are_the_fallback_and_how_to_measure(tmp_path):
    result = run(tmp_path, "--rate", "500")
    assert result.exit_code == 0, result.output
    text = " ".join(result.output.split())
    for bench in ("feedback bench cpu", "feedback bench pipeline"):
        assert (
            f"no file of `{bench}` at {tmp_path}" in text and f"Run `{bench}` on a VM of the target node type" in text
        )
    assert "the FALLBACK figures" in text and "live costs: fallback: fallback_rates.json" in text
    assert "Event Hubs: standard, 3 throughput unit(s)" in text  # 1.4 MB/s in at 70% of 1 MB/s a unit
    assert "pulumi config set feedback:eventhubsCapacity 3" in text
    assert "Databricks pipeline job: 2 worker(s) of Standard_D4ds_v5 (a rough floor: measure)" in text
    assert "what this cannot know" in text


def test_the_table_writers_tasks_short_of_the_rate_come_before_the_sizing(tmp_path):
    text = " ".join(run(tmp_path, "--rate", "10000").output.split())
    short = text.index("at 10,000 events/s the table writer needs 5 tasks")
    assert short < text.index("partitions per feedback topic")
    assert "Event Hubs: premium, 10 processing unit(s) (70% of the low end of Microsoft's approximate 5-10 MB/s" in text
    assert "event storage: 7 days of retention keep about 16.2 TB" in text  # a limit, said before the sizing
    assert text.index("event storage: 7 days") < text.index("partitions per feedback topic")
    assert "pulumi config set feedback:jobsTablesTasks 5" in text
    assert "pulumi config set feedback:jobsMaxOffsetsPerTrigger 600000" in text


def live_file(scorer: tuple[float, float], tables: float = 9.0) -> dict:
    """A file of `feedback bench cpu` whose scorer took `scorer` CPU s in 60 s at 200 and at 1,000 events/s,
    and the table writer `tables` at each."""
    point = lambda rate, cpu: {  # noqa: E731
        "rate": rate,
        "events": rate * 60,
        "seconds": 60,
        "idle_s": 20,
        "idle_cpu_s": {"scorer": 1.0, "dispatcher": 0.1, "tables": 1.0},
        "sending_cpu_s": {"scorer": cpu, "dispatcher": 3.0, "tables": tables},
    }
    return {"measured_at": "2026-11-28", "commit": "abc1234", "machine": "8 cores (x86_64), test CPU",
            "points": [point(200, scorer[0]), point(1000, scorer[1])]}  # fmt: skip


def with_cheap_tables(tmp_path) -> None:
    """Files of this machine's benches whose table writer costs next to nothing, so that a rate meets the
    other limits first: the table writer's state partitions and the scorer's partitions."""
    cheap = MeasuredRates(10_000, 0.01, 0.001, 2, 1, 2e6, "2026-11-26T10:00:00.000Z", "test CPU", "abc1234")
    rates_path(tmp_path).parent.mkdir(parents=True, exist_ok=True)
    rates_path(tmp_path).write_text(json.dumps(cheap.to_json()), encoding="utf-8")
    live_cost_path(tmp_path).write_text(json.dumps(live_file((1.2, 3.6), tables=1.0)), encoding="utf-8")


def test_the_files_of_this_machine_are_read_by_default(tmp_path):
    path = rates_path(tmp_path)
    path.parent.mkdir(parents=True)
    path.write_text(json.dumps(RATES.to_json()), encoding="utf-8")
    # the scorer: 0.4 CPU s a second at 200 events/s and 1.2 at 1,000: 0.2 a second and 1 ms an event
    live_cost_path(tmp_path).write_text(json.dumps(live_file((24.0, 72.0))), encoding="utf-8")
    text = " ".join(run(tmp_path, "--rate", "10000", "--backend", "hdinsight").output.split())
    assert "backlog rates: measured," in text and "live costs: measured," in text and "FALLBACK" not in text
    assert "8 cores (x86_64), test CPU" in text
    assert "the scorer, live: 0.20 CPU s a second at its trigger plus 1.00 a 1,000 events (measured," in text
    assert "HDInsight Kafka: 8 workers of Standard_E4_v3, 8 disks each" in text
    assert "(a rough floor" not in text  # measured rates


def test_a_live_costs_file_given_that_cannot_be_read_fails_with_what_to_do(tmp_path):
    bad = tmp_path / "bad.json"
    bad.write_text(json.dumps(live_file((float("nan"), 72.0))), encoding="utf-8")
    # wide enough that the message's path, as long as pytest's temporary folder makes it, is not wrapped
    result = CliRunner().invoke(
        app, ["--state-dir", str(tmp_path), "size", "--rate", "1", "--live-costs", str(bad)], env={"COLUMNS": "1000"}
    )
    assert result.exit_code == 2
    text = " ".join(result.output.split())
    assert f"cannot read {bad}" in text and "finite, non-negative" in text and "Traceback" not in text


def test_a_rates_file_given_that_cannot_be_read_fails_with_what_to_do(tmp_path):
    bad = tmp_path / "bad.json"
    bad.write_text('{"events": 1}', encoding="utf-8")
    result = CliRunner().invoke(app, ["--state-dir", str(tmp_path), "size", "--rate", "1", "--rates", str(bad)])
    assert result.exit_code == 2
    assert "not a rates file" in " ".join(result.output.split())


def test_an_unknown_node_type_is_refused_with_the_known_ones(tmp_path):
    result = CliRunner().invoke(
        app, ["--state-dir", str(tmp_path), "size", "--rate", "1", "--node-type", "Standard_F4s_v2"]
    )
    text = " ".join(result.output.split())
    assert result.exit_code == 2 and "Standard_D4ds_v5, Standard_D8ds_v5, Standard_D16ds_v5" in text


def test_an_unknown_backend_is_refused(tmp_path):
    result = CliRunner().invoke(app, ["--state-dir", str(tmp_path), "size", "--rate", "1", "--backend", "local"])
    assert result.exit_code == 2 and "expected one of eventhubs, hdinsight" in result.output


@pytest.mark.parametrize(("rate", "said"), [("inf", "inf"), ("1e308", "1e+308"), ("nan", "nan")])
def test_a_rate_no_arithmetic_can_size_is_refused_in_one_line(tmp_path, rate, said):
    result = CliRunner().invoke(app, ["--state-dir", str(tmp_path), "size", "--rate", rate])
    assert result.exit_code == 2, result.output
    assert result.output.startswith(f"error: --rate {said}")
    assert len(result.output.strip().splitlines()) <= 2  # one line, wrapped at most once by the console
    assert result.exception is None or isinstance(result.exception, SystemExit)


@pytest.mark.parametrize("figure", ["NaN", "Infinity", "1e400"])
def test_a_rates_file_with_a_figure_that_is_not_finite_is_refused_with_what_to_do(tmp_path, figure):
    rates = tmp_path / "rates.json"
    good = json.dumps(RATES.to_json())
    rates.write_text(good.replace('"scorer_s": 1.0', f'"scorer_s": {figure}'))
    assert rates.read_text() != good
    result = run(tmp_path, "--rate", "100", "--rates", str(rates))
    assert result.exit_code == 2, result.output
    assert "finite, positive counts and times" in " ".join(result.output.split())


def test_a_fractional_rate_is_printed_as_given(tmp_path):
    result = run(tmp_path, "--rate", "1.5")
    assert result.exit_code == 0 and result.output.startswith("1.5 events/s of 1,024 bytes on eventhubs")


@pytest.mark.parametrize("event_bytes", ["1048576", "100000000"])
def test_an_event_too_large_for_a_kafka_request_is_refused_in_one_line(tmp_path, event_bytes):
    result = run(tmp_path, "--rate", "100", "--event-bytes", event_bytes)
    text = " ".join(result.output.split())
    assert result.exit_code == 2 and "events must stay at or under 999,693 bytes" in text
    assert "Traceback" not in result.output


def test_on_hdinsight_the_partition_reason_cites_no_event_hubs_throughput_unit(tmp_path):
    text = " ".join(run(tmp_path, "--rate", "10000", "--backend", "hdinsight").output.split())
    reason = text[text.index("partitions per feedback topic") : text.index("HDInsight Kafka:")]
    assert "throughput unit" not in reason and "Kafka sets no such figure" in reason
    eventhubs = " ".join(run(tmp_path, "--rate", "10000").output.split())
    assert "about 1 MB/s in and 2 MB/s out a partition on Standard" in eventhubs


def test_a_dedicated_cluster_is_named_with_its_capacity_units_and_no_unused_capacity_key(tmp_path):
    with_cheap_tables(tmp_path)
    result = run(tmp_path, "--rate", "100000")
    text = " ".join(result.output.split())
    assert result.exit_code == 0, result.output
    assert (
        "Event Hubs: dedicated, 4 capacity unit(s) (70% of the low end of Microsoft's approximate 100-200 MB/s" in text
    )
    assert "pulumi config set feedback:eventhubsClusterId '<resource id of the Dedicated cluster>'" in text
    assert "a cluster of at least 4 capacity unit(s)" in text
    assert "feedback:eventhubsCapacity" not in text
    assert "publishes no" not in text and "publishes none" not in text


def test_a_plan_a_deployed_stacks_state_partitions_cannot_carry_is_no_plan_to_order(tmp_path):
    # At 100,000 events/s the table writer needs 43 tasks; a stack deployed with 4 state partitions runs 4.
    result = run(tmp_path, "--rate", "100000", "--state-partitions", "4")
    text = " ".join(result.output.split())
    assert result.exit_code == 1, result.output
    assert "the table writer needs 43 tasks, but at most 4 run at once" in text
    assert "not a plan to order: it cannot carry the rate, so no stack config" in text
    assert "about 18,277 events/s at full use, less than 100,000; it would fall behind for good" in text
    assert "What would lift it: 43 state partitions, as many as the tasks the rate needs" in text
    assert "(pulumi config set feedback:jobsTablesStatePartitions 43)" in text
    assert "the table writer then moves to a new checkpoint" in text
    assert "the largest rate this plans as the stack can be set: 18,276 events/s of 1,024 bytes" in text
    assert "stack config:" not in text and "monthly estimate" not in text
    at = ("--state-partitions", "4")
    assert run(tmp_path, "--rate", "18276", *at).exit_code == 0 and run(tmp_path, "--rate", "18277", *at).exit_code == 1


def test_a_new_stacks_plan_chooses_the_state_partitions_the_rate_needs_and_prints_their_line(tmp_path):
    result = run(tmp_path, "--rate", "100000", "--output", "config")
    assert result.exit_code == 0, result.output
    assert "pulumi config set feedback:jobsTablesStatePartitions 43" in result.stdout
    assert "pulumi config set feedback:jobsTablesTasks 43" in result.stdout
    assert run(tmp_path, "--rate", "100000", "--state-partitions", "0").exit_code == 2


def test_a_rate_no_limit_carries_is_refused_with_the_largest_rate_it_plans(tmp_path):
    result = run(tmp_path, "--rate", "1e12")
    text = " ".join(result.output.split())
    assert result.exit_code == 1 and "not a plan to order" in text, result.output
    assert "1,024 an event hub has on Dedicated" in text
    assert "What would lift it: the feed split across namespaces" in text
    assert "the largest rate this plans without a support request: 261,231 events/s" in text
    assert "stack config:" not in text


def test_a_plan_that_needs_a_support_request_prints_its_config_only_when_asked(tmp_path):
    with_cheap_tables(tmp_path)
    result = run(tmp_path, "--rate", "300000")
    text = " ".join(result.output.split())
    assert result.exit_code == 1, result.output
    assert "an Azure support request first: the stack config is printed with --support-request" in text
    assert "12 capacity units is more than the 10 a Dedicated cluster is bought with in the portal" in text
    assert "the largest rate this plans without a support request: 261,231 events/s" in text  # 10 units at 70%
    assert "stack config:" not in text and "monthly estimate" in text
    asked = run(tmp_path, "--rate", "300000", "--support-request")
    assert asked.exit_code == 0, asked.output
    assert "pulumi config set feedback:eventhubsClusterId" in " ".join(asked.output.split())


def test_output_config_prints_the_lines_alone_and_a_refused_plan_nothing(tmp_path):
    result = run(tmp_path, "--rate", "10000", "--output", "config")
    assert result.exit_code == 0 and result.stderr == "", result.output
    lines = result.stdout.splitlines()
    assert lines[0] == "pulumi config set feedback:targetEventsPerSecond 10000"
    assert all(line.startswith("pulumi config set feedback:") for line in lines), lines
    refused = run(tmp_path, "--rate", "100000", "--state-partitions", "4", "--output", "config")
    assert refused.exit_code == 1 and refused.stdout == ""
    assert "feedback size: the largest rate this plans as the stack can be set: 18,276" in refused.stderr


def test_output_json_is_the_whole_plan_with_its_config_lines_and_estimate(tmp_path):
    result = run(tmp_path, "--rate", "10000", "--output", "json")
    assert result.exit_code == 0, result.output
    document = json.loads(result.stdout)
    assert document["plan"]["partitions"]["value"] == 21 and document["plan"]["eventhubs"]["tier"] == "premium"
    assert document["orderable"] and document["carries"] and document["largest_rate"] is None
    config = run(tmp_path, "--rate", "10000", "--output", "config").stdout.splitlines()
    assert document["config_lines"] == config
    assert document["estimate"]["per_month"] > 0 and document["estimate"]["lines"]
    refused = json.loads(run(tmp_path, "--rate", "100000", "--state-partitions", "4", "--output", "json").stdout)
    assert not refused["orderable"] and refused["config_lines"] == [] and refused["largest_rate"] == 18_276
    assert refused["plan"]["refusals"][0]["limit"].startswith("the table writer keeps its de-duplication state")


def test_an_unknown_output_is_refused(tmp_path):
    result = run(tmp_path, "--rate", "100", "--output", "yaml")
    assert result.exit_code == 2 and "expected one of text, config, json" in result.output


def test_each_config_line_is_one_line_at_any_width_so_it_pastes_as_one_command(tmp_path):
    result = CliRunner().invoke(
        app,
        ["--state-dir", str(tmp_path), "size", "--rate", "10000", "--backend", "eventhubs"],
        env={"COLUMNS": "60"},
        catch_exceptions=False,
    )
    lines = result.output.splitlines()
    config = lines[lines.index("stack config:") + 1 :]
    config = config[: config.index("")]  # up to the blank line before the next section
    assert config and all(line.startswith("  pulumi config set feedback:") for line in config), config
    assert any("   # " in line for line in config), config  # a caveat, on its command's line


@pytest.mark.parametrize("event_bytes", ["1", "252"])
def test_an_event_smaller_than_its_envelope_is_refused_in_one_line(tmp_path, event_bytes):
    result = run(tmp_path, "--rate", "100", "--event-bytes", event_bytes)
    text = " ".join(result.output.split())
    assert result.exit_code == 2 and "events are at least 253 bytes" in text, result.output
    assert run(tmp_path, "--rate", "100", "--event-bytes", "253").exit_code == 0
