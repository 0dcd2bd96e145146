"""The Pulumi program: HDInsight Kafka and an Azure Databricks workspace in peered networks.

`__main__.py` runs it (Pulumi.yaml: `main: infra/`); `config/` reads and checks the stack
config once (`config/keys.py` declares every key); `stack.py` is the table of contents that
creates the components; `components/` holds one ComponentResource per concern; `providers/`
the dynamic providers that talk to Ambari's REST API and the HDInsight management API; `lib/`
pure helpers. See docs/deploy-azure.md.
"""
