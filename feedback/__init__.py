"""Shared definitions for the feedback analytics platform.

Everything that infra/, producers/ and jobs/ all use lives here: the topic catalogue,
the event schema, the backend settings and the pure builders that turn those settings
into Kafka client and Spark options.
"""

__version__ = "0.1.0"
