import pytest

from benchmarks.producer import parse_producer_performance

# The last two lines ProducerPerformance prints (a progress line, then the summary).
OUTPUT = """\
152310 records sent, 30462.0 records/sec (29.75 MB/sec), 740.2 ms avg latency, 1102.0 ms max latency.
200000 records sent, 51177.136 records/sec (49.98 MB/sec), 312.12 ms avg latency, 1102.00 ms max latency, 280 ms 50th, 700 ms 95th, 900 ms 99th, 1100 ms 99.9th.
"""


def test_the_final_summary_line_is_the_one_reported():
    assert parse_producer_performance(OUTPUT) == (200000, 51177.136, 49.98)


def test_output_without_a_summary_is_an_error_that_shows_the_output():
    with pytest.raises(ValueError, match="Exception in thread"):
        parse_producer_performance("Exception in thread main: TimeoutException\n")
