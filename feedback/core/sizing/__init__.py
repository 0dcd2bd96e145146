"""How big a stack a target rate needs, from published limits and measured costs. Pure.

    feedback size --rate 10000                         # the command that prints it
    plan = size(Target(rate=10_000, backend="eventhubs"), FALLBACK_RATES)
    plan.partitions.value, plan.eventhubs.units, plan.databricks.workers

Four parts, each a module:

- `limits`: the vendors' limits and figures, each with its source (Event Hubs' tiers, HDInsight
  Kafka, the Databricks node types, the largest Kafka record). infra/ reads its limits here.
- `rates`: the measured costs: each part's live CPU (`feedback bench cpu`) and the backlog rates
  (`feedback bench pipeline`), from their files or the fallback file beside the module.
- `model`: what is asked (`Target`), the pipeline's own figures, and the traffic a rate makes
  (`traffic`).
- `plan`: `size` returns a `Sizing`: each number with the reasons for it, the stack keys that
  carry it, where the table writer falls short of the rate with the tasks and batch cap asked
  (its tasks stop at its state partitions), the Event Hubs limits the answer meets, where the
  project's own design meets a limit at that rate, and what the arithmetic cannot know; and
  `shortfalls`, a stack's keys against a plan, which `pulumi up`'s config check uses
  (infra/config/checks.py).
- `prices`: the monthly estimate of a plan, from the list prices held in prices.json.

Cores are planned half busy (TARGET_UTILISATION) and disks at most 70% full
(DISK_FILL_FACTOR), each for the reason given there. Rendering is the CLI's
(feedback/cli/size.py). The package's names are its modules' public names.
"""

from feedback.core.sizing.limits import *  # noqa: F403
from feedback.core.sizing.model import *  # noqa: F403
from feedback.core.sizing.plan import *  # noqa: F403
from feedback.core.sizing.prices import *  # noqa: F403
from feedback.core.sizing.rates import *  # noqa: F403
