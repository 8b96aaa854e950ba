"""torchcourse.text_table: a table's columns line up in a fixed-width font, in any language."""

from torchcourse.text_table import Column, display_width, padded, text_table


def test_a_cjk_character_takes_two_columns():
    assert display_width("chip") == 4 and display_width("芯片") == 4 and display_width("峰值 T") == 6
    assert padded("芯片", 6) == "芯片  " and padded("12.5", 6, right=True) == "  12.5"
    assert padded("too wide", 3) == "too wide"


def test_each_column_is_as_wide_as_its_widest_text_and_lines_keep_no_trailing_space():
    table = text_table([Column("name"), Column("n", 4, right=True), Column("note")],
                       [["a", "1", ""], ["长名字", "12345", "x"]]).splitlines()
    # the numbers end where their heading does, 12 columns in, though the last line has two-column characters
    assert table == ["name       n note", "a          1", "长名字 12345 x"]
