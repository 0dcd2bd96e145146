"""Each deployed job, read through databricks-sdk's typed Jobs API classes, says what the program sent.

pulumi-databricks takes a job in camelCase and sends the Jobs API its snake_case settings.
`JobSettings.from_dict` keeps only the fields the Jobs API has and drops the rest without a word,
so a misspelt or misplaced field would never reach Databricks and nothing would say so. This
converts each job's inputs to the API's form, parses them, writes them back, and compares.
"""

from __future__ import annotations

import re
from typing import Any

import pytest
from databricks.sdk.service.jobs import JobSettings

# Inputs of the Terraform provider's own that the Jobs API does not have: `control_run_state`
# restarts a continuous job's run when the job changes (databricks_job's docs).
PROVIDER_ONLY = {"controlRunState"}
# Fields whose values are maps of names the user chose, which keep their spelling.
NAMED_MAPS = {"sparkEnvVars", "sparkConf", "customTags", "tags"}


def snake(name: str) -> str:
    return re.sub(r"(?<!^)(?=[A-Z])", "_", name).lower()


def api_form(value: Any, named: bool = False) -> Any:
    """`value` as the Jobs API spells it: snake_case field names, whole numbers as ints, no
    empty maps (the API leaves an empty field out)."""
    if isinstance(value, dict):
        return {
            key if named else snake(key): api_form(item, key in NAMED_MAPS)
            for key, item in value.items()
            if item not in ({}, None)
        }
    if isinstance(value, list):
        return [api_form(item) for item in value]
    if isinstance(value, float) and value.is_integer():
        return int(value)
    return value


@pytest.fixture(scope="module")
def jobs():
    from tests.support.pulumi_mocks import run_stack

    stack = run_stack(
        slackBotToken="xoxb-fake-1",
        slackAppToken="xapp-fake-1",
        xBearerToken="fake-bearer",
        azureLanguageKey="fake-key",
        azureLanguageEndpoint="https://fbk01.cognitiveservices.azure.com/",
    )
    return stack.of_type("databricks:index/job:Job")


def test_both_jobs_are_deployed(jobs):
    assert sorted(job.inputs["name"] for job in jobs) == ["feedback-pipeline", "feedback-producers"]


@pytest.mark.parametrize("name", ["feedback-pipeline", "feedback-producers"])
def test_every_field_of_a_job_is_one_the_jobs_api_reads_back_unchanged(jobs, name):
    [job] = [job for job in jobs if job.inputs["name"] == name]
    settings = api_form({key: value for key, value in job.inputs.items() if key not in PROVIDER_ONLY})
    assert JobSettings.from_dict(settings).as_dict() == settings


def test_a_field_the_jobs_api_lacks_is_dropped_which_is_why_this_compares(jobs):
    settings = api_form({key: value for key, value in jobs[0].inputs.items() if key not in PROVIDER_ONLY})
    settings["job_clusters"][0]["new_cluster"]["num_worker"] = 2  # misspelt
    assert JobSettings.from_dict(settings).as_dict() != settings
