"""The test harness's ROS_DOMAIN_ID ranges (SIM_NODE_TEST_DOMAINS): suites running at the same
time on one machine stay apart when each gets its own range."""
import pytest

from node_harness import domain_range


@pytest.mark.parametrize("text, domains", [
    ("1-101", range(1, 102)),       # the default
    ("102-150", range(102, 151)),
    ("7", range(7, 8)),
    ("0-232", range(0, 233)),
])
def test_a_range_gives_exactly_its_domains(text, domains):
    assert domain_range(text) == domains


@pytest.mark.parametrize("text", ["", "a-b", "5-3", "0-233", "-1-5", "1-"])
def test_a_bad_range_is_refused_saying_what_is_valid(text):
    with pytest.raises(ValueError, match="SIM_NODE_TEST_DOMAINS=.*FIRST-LAST.*<= 232"):
        domain_range(text)


def test_the_default_range_is_1_to_101(monkeypatch):
    monkeypatch.delenv("SIM_NODE_TEST_DOMAINS", raising=False)
    assert domain_range() == range(1, 102)
