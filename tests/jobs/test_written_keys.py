"""The keys a table writer has written: a hash not added is never reported as written, and
past the limit every answer is "maybe" (so every batch looks up the earlier rows)."""

from __future__ import annotations

import numpy as np

from jobs.written_keys import WrittenKeys


def keys(*values: int) -> np.ndarray:
    return np.array(values, dtype=np.int64)


def test_only_hashes_that_were_added_are_reported_as_written():
    written = WrittenKeys(limit=100)
    assert not written.might_contain_any(keys(1, 2))  # nothing written yet
    written.add(keys(30, -5, 7))
    written.add(keys(12, 2**63 - 1, -(2**63)))  # a second run of sorted hashes, merged into the first
    assert len(written) == 6
    for hash_ in (30, -5, 7, 12, 2**63 - 1, -(2**63)):
        assert written.might_contain_any(keys(100, hash_, 101)), hash_
    assert not written.might_contain_any(keys(8, 31, -6, 2**63 - 2, 0))  # beside, between and past them
    assert not written.might_contain_any(keys())


def test_past_the_limit_it_keeps_nothing_and_answers_maybe():
    written = WrittenKeys(limit=3)
    written.add(keys(1, 2))
    assert not written.might_contain_any(keys(3))
    written.add(keys(3, 4))
    assert written.overflowed and len(written) == 0
    assert written.might_contain_any(keys(99))
    written.add(keys(5))  # nothing is kept any more
    assert len(written) == 0


def test_a_limit_of_zero_turns_it_off():
    written = WrittenKeys(limit=0)
    assert written.might_contain_any(keys(1))
    written.add(keys(1))
    assert len(written) == 0
