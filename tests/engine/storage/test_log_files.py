from engine.storage.log_files import (delete_dir_name, offset_file, offset_from_file,
                                      parse_topic_partition, write_atomically)


def test_offset_file_names_sort_like_offsets(tmp_path):
    names = [offset_file(tmp_path, o, ".log").name for o in (0, 9, 10, 2**40)]
    assert names == sorted(names)
    assert names[1] == "00000000000000000009.log"
    assert offset_from_file(names[3]) == 2**40
    assert offset_from_file("leader-epoch-checkpoint") is None


def test_parse_topic_partition_splits_on_the_last_dash():
    assert parse_topic_partition("my-topic-12") == ("my-topic", 12)
    assert parse_topic_partition("a.b_c-0") == ("a.b_c", 0)
    assert parse_topic_partition("topic") is None
    assert parse_topic_partition("topic-x") is None
    assert parse_topic_partition("-3") is None


def test_delete_dir_name_fits_255_bytes():
    name = delete_dir_name("my-topic-3")
    assert name.startswith("my-topic-3.") and name.endswith("-delete")
    long_name = delete_dir_name("t" * 249 + "-1000")
    assert len(long_name) == 255 and long_name.endswith("-delete")
    assert "-1000." in long_name


def test_write_atomically_leaves_no_temp_file(tmp_path):
    write_atomically(tmp_path / "f", b"one")
    write_atomically(tmp_path / "f", b"two")
    assert [p.name for p in tmp_path.iterdir()] == ["f"]
    assert (tmp_path / "f").read_bytes() == b"two"
