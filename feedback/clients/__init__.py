"""One module per outside system, behind a small interface: Kafka (admin, producer,
consumer), Slack and the local alerts file, the sentiment analyzers, the Databricks Jobs
API, Maven Central (the local jars). Imports feedback.core only.
"""
