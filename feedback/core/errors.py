"""The error every wrong or missing setting raises, whichever core module finds it, and the
line a producer prints when it stops for good on Databricks."""


class SettingsError(ValueError):
    """A setting is missing or wrong; the message says which and where to set it."""


# What a producer task prints when an error that retrying cannot fix stops it on Databricks
# (feedback/cli/producer.py): the task then ends as a success, so the job's other producers keep
# running, and `feedback databricks status` and `errors` find the line in the task's output.
STOPPED_FOR_GOOD = "stopped for good:"
