"""The keys a table writer has written, as 64-bit hashes (pure: numpy arrays in, answers out).

A batch none of whose keys was written before can hold no replay and no duplicate of an
earlier batch, so the table writer need not read the tables' earlier rows for it
(jobs/table_writer.py): that read is much of a small batch's time, and grows with the tables.

A key is what the scorer puts in a record's Kafka key (jobs/scoring.py): the event id of a
`feedback-scored` record (the id of a row in `feedback_scored` or `feedback_duplicates`), and
`topic:partition:offset` of a `feedback-deadletter` record (a dead letter's source position).
So a batch's keys are hashed from its Kafka keys without parsing a record. Hashes are Spark's
`xxhash64`, computed in the same JVM from the keys in Kafka and from the rows in the tables.

A hash found here only means the batch looks up the earlier rows, as it always did: a
collision costs a look-up, never a wrong answer. A hash missing here for a key that was
written would be a wrong answer, so keys are added before their rows are appended, and
`WrittenKeys` are rebuilt from the tables whenever a table writer starts.

Memory: 8 bytes a key. Past `limit` keys (setting `tables_written_hashes_max`) it forgets
them and answers "maybe" from then on, so every batch looks up the earlier rows.
"""

from __future__ import annotations

import logging

import numpy as np

log = logging.getLogger(__name__)


class WrittenKeys:
    """The hashes of the keys written so far, sorted, at most `limit` of them."""

    def __init__(self, limit: int):
        self.limit = limit
        self.overflowed = limit == 0
        self._hashes = np.empty(0, dtype=np.int64)

    def __len__(self) -> int:
        return len(self._hashes)

    def add(self, hashes: np.ndarray) -> None:
        """Remember `hashes` (int64); past the limit, forget all and answer "maybe" from then on."""
        if self.overflowed or not len(hashes):
            return
        if len(self._hashes) + len(hashes) > self.limit:
            log.warning(
                "the table writer has written more than %d keys (setting tables_written_hashes_max): "
                "every batch now looks up the earlier rows in the tables",
                self.limit,
            )
            self.overflowed = True
            self._hashes = np.empty(0, dtype=np.int64)
            return
        merged = np.concatenate([self._hashes, np.sort(np.asarray(hashes, dtype=np.int64))])
        merged.sort(kind="stable")  # two sorted runs: a merge, linear in the keys held
        self._hashes = merged

    def might_contain_any(self, hashes: np.ndarray) -> bool:
        """False only if no hash of `hashes` was added (so no key of them was written)."""
        if self.overflowed:
            return True
        if not len(hashes) or not len(self._hashes):
            return False
        hashes = np.asarray(hashes, dtype=np.int64)
        at = np.minimum(np.searchsorted(self._hashes, hashes), len(self._hashes) - 1)
        return bool(np.any(self._hashes[at] == hashes))
