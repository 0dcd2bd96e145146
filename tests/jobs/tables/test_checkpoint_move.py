"""The pure parts of the table writer's move to a new checkpoint: the seed batch's range, and
the offsets as Spark writes them. The move itself runs on the real broker and Spark in
test_table_writer.py."""

from __future__ import annotations

from kafka.errors import UnsupportedVersionError

from jobs.tables import checkpoint_move
from jobs.tables.checkpoint_move import Seed, offsets_json, parse_offsets, seed_range


def test_offsets_read_from_a_checkpoint_are_written_back_as_spark_writes_them():
    line = '{"feedback-deadletter":{"0":1},"feedback-scored":{"0":3,"1":7,"10":2,"2":7}}'
    offsets = parse_offsets(line)
    assert offsets["feedback-scored"][10] == 2
    assert parse_offsets(offsets_json(offsets)) == offsets
    assert offsets_json({"b": {1: 5, 0: 4}}) == '{"b":{"0":4,"1":5}}'


def test_the_seed_reads_the_horizon_before_the_mark_and_no_record_the_old_checkpoint_never_read():
    mark = {"t": {0: 100, 1: 50}}
    first = {"t": {0: 10, 1: 0, 2: 7}}  # partition 2 added after the old checkpoint's last batch
    since = {"t": {0: 60, 1: 55, 2: 9}}  # partition 1: nothing within the horizon before the mark
    start, end = seed_range(mark, first, since, initial={"t": {0: 80, 1: 0}})
    assert end == {"t": {0: 100, 1: 50, 2: 7}}  # the mark; a new partition from its first record
    assert start == {"t": {0: 80, 1: 50, 2: 7}}  # not before the old start, never past the end
    start, _ = seed_range(mark, first, {"t": {0: 5, 1: 0, 2: 0}}, initial={})
    assert start == {"t": {0: 10, 1: 0, 2: 7}}  # never before the first retained record


def test_a_seed_of_no_record_plans_no_seed_batch():
    line = offsets_json({"t": {0: 4}})
    assert Seed("4-state-partitions", 8, line, line, "aside").seed_batch is None
    seed = Seed("4-state-partitions", 8, offsets_json({"t": {0: 1}}), line, "aside")
    assert (seed.records, seed.seed_batch) == (3, 0)


def test_a_broker_that_does_not_look_offsets_up_by_time_seeds_from_all_it_retains(monkeypatch):
    def offsets_since(settings, topic, since_ms):
        if since_ms is not None:
            raise UnsupportedVersionError("ListOffsets by timestamp")
        return {0: 3}, {0: 3}

    monkeypatch.setattr(checkpoint_move, "offsets_since", offsets_since)
    first, since = checkpoint_move.horizon_offsets(None, ["t"], 1_000)
    assert first == since == {"t": {0: 3}}
