from producers.position import RecentIds


def test_recent_ids_drop_a_second_delivery_and_forget_the_oldest_beyond_the_limit():
    recent = RecentIds(3, ["a", "b"])  # as loaded from a saved position
    assert "a" in recent and "c" not in recent
    recent.add("c")
    recent.add("d")
    assert "a" not in recent and [i for i in "bcd" if i in recent] == ["b", "c", "d"]
    assert recent.saved() == ["b", "c", "d"]


def test_recent_ids_save_the_newest_oldest_first():
    recent = RecentIds(5, ["a", "b", "c", "d"])
    assert recent.saved(2) == ["c", "d"]
