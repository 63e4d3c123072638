"""Untrusted text made safe to print: `shown` (one value), `log_safe` (a message of lines),
`one_line` (a page's cell)."""

from __future__ import annotations

from copeca_action._util.text import log_safe, one_line, shown


def test_shown_escapes_what_a_terminal_acts_on_and_keeps_it_visible() -> None:
    assert shown("a\x1b[2Jb\rc\nd\u202ee\x9bf\u2028g\x00") == \
        "a\\x1b[2Jb\\x0dc\\x0ad\\u202ee\\x9bf\\u2028g\\x00"
    assert shown("tâche: ok 🙂") == "tâche: ok 🙂"  # printable text as it is
    assert shown("\x1b" * 100, 10) == "\\x1b\\x1b…"  # cut after escaping, marked


def test_log_safe_keeps_its_lines_and_defuses_workflow_commands() -> None:
    text = "FAILED: x\n  ::add-mask::secret\n::stop-commands::t\nnot :: a command\x1b]8;;u\x07"
    assert log_safe(text).split("\n") == [
        "FAILED: x", "  \\x3a:add-mask::secret", "\\x3a:stop-commands::t",
        "not :: a command\\x1b]8;;u\\x07"]


def test_one_line_drops_c1_controls_too() -> None:
    """U+009B is CSI to a terminal that reads C1 controls, as ESC [ is."""
    assert one_line("a\x9b2Jb\x1b[2Jc\u202ed") == "a2Jb[2Jcd"
