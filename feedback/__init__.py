"""Feedback analytics: the shared layers and the `feedback` command.

    feedback.cli        the command a person runs (top layer)
    feedback.devtools   the local broker and the demo
    (benchmarks, then jobs | producers, sit between these and the layers below)
    feedback.clients    one module per outside system
    feedback.core       catalogue, schema, settings, option builders: pure, imports nothing here

docs/architecture.md draws the layers; the import contracts in pyproject.toml enforce them.
"""

__version__ = "0.1.0"
