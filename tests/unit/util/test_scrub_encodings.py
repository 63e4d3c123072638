"""Secrets by value: every registered value is found in each common encoding, at any offset,
in files scrubbed in place, and counted."""

from __future__ import annotations

import base64
import json
import re
import urllib.parse
from collections.abc import Callable
from pathlib import Path

import pytest

from copeca_action._util.scrub import (
    Scrubber,
    count_redactions,
    env_secrets,
    register_secret,
    scrub_tree,
)

SECRET = b"pl4nted-S3cret/value+with=odd&chars!"
ENCODERS: dict[str, Callable[[bytes], bytes]] = {
    "raw": lambda b: b,
    "base64": base64.b64encode,
    "base64url": base64.urlsafe_b64encode,
    "hex": lambda b: b.hex().encode(),
    "HEX": lambda b: b.hex().upper().encode(),
    "url": lambda b: urllib.parse.quote(b).encode(),
    "url-plus": lambda b: urllib.parse.quote_plus(b).encode(),
    "json": lambda b: json.dumps(b.decode()).encode(),
}


pytestmark = pytest.mark.usefixtures("clean_registry")


@pytest.mark.parametrize("prefix", [b"", b"a", b"ab", b"abc", b"xyzw"])
@pytest.mark.parametrize("name", sorted(ENCODERS))
def test_each_encoding_at_each_offset_is_redacted(name: str, prefix: bytes) -> None:
    encoded = ENCODERS[name](prefix + SECRET + b"-tail")
    scrubber = Scrubber({"K": SECRET})
    out = scrubber.scrub(b"before " + encoded + b" after")
    assert b"[REDACTED:env:K]" in out
    for other in ENCODERS.values():  # no long piece of any encoding survives
        assert other(SECRET)[4:-4] not in out
    assert scrubber.counts["env:K"] >= 1


def test_registered_values_join_every_scrubber_from_env() -> None:
    register_secret("signing_key", b"\x01\x02binary-key-bytes\xff\xfe")
    scrubber = Scrubber.from_env({})
    data = base64.b64encode(b"zz" + b"\x01\x02binary-key-bytes\xff\xfe")
    assert b"[REDACTED:secret:signing_key]" in scrubber.scrub(data)


def test_secret_inputs_are_secrets_and_settings_are_not() -> None:
    env = {"INPUT_ANTHROPIC_API_KEY": "k" * 20, "INPUT_MY_OWN_TOKEN": "t" * 20,
           "INPUT_SCENARIO": "corpus/scenarios/demo.yaml", "INPUT_OUTPUT_DIR": ".copeca-out"}
    assert set(env_secrets(env)) == {"INPUT_ANTHROPIC_API_KEY", "INPUT_MY_OWN_TOKEN"}


def test_scrub_tree_rewrites_files_and_counts(tmp_path: Path) -> None:
    (tmp_path / "runs" / "r1").mkdir(parents=True)
    (tmp_path / "runs" / "r1" / "stdout.jsonl").write_bytes(
        b'{"out": "' + base64.b64encode(b"x" + SECRET) + b'"}\n')
    (tmp_path / "clean.txt").write_text("nothing here\n")
    (tmp_path / "link").symlink_to(tmp_path / "runs" / "r1" / "stdout.jsonl")
    made = scrub_tree(tmp_path, Scrubber({"K": SECRET}))
    assert made["env:K"] == 1
    text = (tmp_path / "runs" / "r1" / "stdout.jsonl").read_bytes()
    assert base64.b64encode(b"x" + SECRET)[4:-4] not in text
    assert count_redactions(tmp_path) == 1  # the symlink is not followed, nor counted twice
    assert (tmp_path / "clean.txt").read_text() == "nothing here\n"


KEY = "sk-ant-api03-" + "Qm9vN" * 20


@pytest.mark.parametrize(("encode", "width"), [
    (base64.b64encode, 76), (base64.b64encode, 64), (base64.b64encode, 19),
    (lambda b: b.hex().encode(), 60), (lambda b: b.hex().encode(), 30),
    (lambda b: b.hex().encode(), 16)], ids=["b64-76", "b64-64", "b64-19", "hex-60", "hex-30",
                                            "hex-16"])
@pytest.mark.parametrize("escaped", [False, True])
def test_an_encoding_wrapped_over_lines_is_redacted(
        encode: Callable[[bytes], bytes], width: int, escaped: bool) -> None:
    """`env | base64` wraps at 76 columns (PEM at 64), `env | xxd -p` its hex at 60: the
    key's encoding is split by line breaks at a place nobody can predict; in a transcript
    the breaks are JSON escapes."""
    raw = encode(b"PATH=/usr/bin\nANTHROPIC_API_KEY=" + KEY.encode() + b"\n")
    block = b"\n".join(raw[i:i + width] for i in range(0, len(raw), width))
    if escaped:
        block = block.replace(b"\n", b"\\n")
    scrubber = Scrubber({"ANTHROPIC_API_KEY": KEY})
    out = scrubber.scrub(b'{"out":"' + block + b'"}\n')
    assert out == b'{"out":"[REDACTED:env:ANTHROPIC_API_KEY]"}\n'
    assert scrubber.counts["env:ANTHROPIC_API_KEY"] == 1


def test_wrapped_base64_without_a_secret_is_left_alone() -> None:
    other = base64.encodebytes(bytes(range(256)) * 3)
    assert Scrubber({"ANTHROPIC_API_KEY": KEY}).scrub(other) == other


@pytest.mark.parametrize("chunk", [7, 100, 333, 4096])
def test_a_wrapped_block_split_across_stream_pieces_is_still_redacted(chunk: int) -> None:
    encoded = base64.encodebytes(b"ANTHROPIC_API_KEY=" + KEY.encode() + b"\n")
    head = b"a log line, then the agent's `env | base64`\n" * 20
    data = head + encoded + b"done.\n"
    scrubber = Scrubber({"ANTHROPIC_API_KEY": KEY})
    pieces = [data[i:i + chunk] for i in range(0, len(data), chunk)]
    out = b"".join(scrubber.scrub_stream(pieces))
    assert out == head + b"[REDACTED:env:ANTHROPIC_API_KEY]\ndone.\n"


def _u_escape(text: str, every: int = 1) -> str:
    return "".join(f"\\u{ord(c):04x}" if i % every == 0 else c for i, c in enumerate(text))


@pytest.mark.parametrize("form", [
    _u_escape(SECRET.decode()),  # every character `\uXXXX`
    _u_escape(SECRET.decode(), every=3),  # some of them
    _u_escape(SECRET.decode()).upper().replace("\\U", "\\u"),
    "".join(f"\\x{b:02x}" for b in SECRET),  # a `\x` string literal
    re.sub("%[0-9A-F]{2}", lambda m: m.group(0).lower(),
           urllib.parse.quote(SECRET, safe="")),  # lower-case percent-encoding
    urllib.parse.quote(SECRET, safe="!'()*-._~"),  # JavaScript's encodeURIComponent
])
@pytest.mark.parametrize("in_json", [False, True])
def test_escaped_forms_of_a_value_are_redacted(form: str, in_json: bool) -> None:
    """An agent's output may escape a value's characters in ways no fixed list of encodings
    holds; a run of escapes is decoded and redacted when it holds the value. Inside a
    transcript's JSON string the escapes' backslashes are themselves escaped."""
    data = ("url?token=" + form + "&next=1 ok").encode()
    if in_json:
        data = json.dumps({"out": data.decode()}).encode()
    scrubber = Scrubber({"K": SECRET})
    out = scrubber.scrub(data)
    assert b"[REDACTED:env:K]" in out and b"ok" in out
    assert SECRET not in out and form.encode() not in out
    if in_json:
        assert json.loads(out)["out"].endswith(" ok")  # still valid JSON


def test_a_token_shape_hidden_by_escapes_is_redacted() -> None:
    key = "sk-ant-api03-" + "Xy7Zq" * 8
    data = json.dumps({"out": "key: \\u0073" + key[1:] + " done"}).encode()
    out = Scrubber({}).scrub(data)
    assert json.loads(out) == {"out": "key: [REDACTED:anthropic_key] done"}


def test_escapes_without_a_secret_are_left_alone() -> None:
    data = json.dumps({"out": "caf\\u00e9 100%25 https://x/a%20b \\x41\\x42 \\\\u0073k-no"})
    scrubber = Scrubber({"K": SECRET})
    assert scrubber.scrub(data.encode()) == data.encode()
    assert not scrubber.counts


def _claude_delta(text: str, key: str = "text") -> bytes:
    kind = "text_delta" if key == "text" else "input_json_delta"
    return json.dumps({"type": "stream_event", "event": {
        "type": "content_block_delta", "index": 0,
        "delta": {"type": kind, key: text}}}).encode() + b"\n"


@pytest.mark.parametrize("key", ["text", "partial_json"])
def test_a_value_streamed_in_pieces_over_transcript_lines_is_redacted(
        tmp_path: Path, key: str) -> None:
    """Claude Code's `--include-partial-messages` writes each streamed piece of a reply on a
    line of its own: a model that repeats the key it read splits it over two lines."""
    value = "Zk7mQ2xVb9LpR4tW8nYc3Hd6"
    path = tmp_path / "stdout.jsonl"
    path.write_bytes(b'{"type":"system"}\n' + _claude_delta("The key is " + value[:8], key)
                     + _claude_delta(value[8:] + " and more", key) + b'{"type":"result"}\n')
    scrubber = Scrubber({"ANTHROPIC_API_KEY": value})
    assert scrub_tree(tmp_path, scrubber)["env:ANTHROPIC_API_KEY"] == 1
    lines = path.read_bytes().splitlines()
    assert lines[0] == b'{"type":"system"}' and lines[-1] == b'{"type":"result"}'
    texts = [json.loads(line)["event"]["delta"][key] for line in lines[1:3]]
    assert texts == ["The key is [REDACTED:env:ANTHROPIC_API_KEY]",
                     "[REDACTED:env:ANTHROPIC_API_KEY] and more"]
    assert value[:6].encode() not in path.read_bytes()


def test_gemini_delta_messages_are_joined_too(tmp_path: Path) -> None:
    value = "Zk7mQ2xVb9LpR4tW8nYc3Hd6"
    path = tmp_path / "stdout.jsonl"
    path.write_bytes(b"".join(json.dumps({"type": "message", "role": "assistant",
                                          "content": part, "delta": True}).encode() + b"\n"
                              for part in (value[:5], value[5:12], value[12:] + ".")))
    scrub_tree(tmp_path, Scrubber({"GEMINI_API_KEY": value}))
    parts = [json.loads(line)["content"] for line in path.read_bytes().splitlines()]
    assert parts == ["[REDACTED:env:GEMINI_API_KEY]", "[REDACTED:env:GEMINI_API_KEY]",
                     "[REDACTED:env:GEMINI_API_KEY]."]


def test_pieces_that_hold_no_secret_are_left_byte_for_byte(tmp_path: Path) -> None:
    path = tmp_path / "stdout.jsonl"
    data = _claude_delta("Zk7mQ2xV") + _claude_delta("nothing else")
    path.write_bytes(data)
    scrub_tree(tmp_path, Scrubber({"ANTHROPIC_API_KEY": "Zk7mQ2xVb9LpR4tW8nYc3Hd6"}))
    assert path.read_bytes() == data


def test_an_sqlite_database_is_scrubbed_through_sql_and_stays_valid(tmp_path: Path) -> None:
    """Codex keeps its thread history in SQLite: replacing bytes of another length in the
    file corrupted it ("database disk image is malformed"). Values are scrubbed through
    SQL, and no old copy is left in a free page."""
    import sqlite3

    value = "Zk7mQ2xVb9LpR4tW8nYc3Hd6"
    path = tmp_path / "thread_history_1.sqlite"
    con = sqlite3.connect(path)
    con.execute("CREATE TABLE t (id INTEGER PRIMARY KEY, body TEXT, raw BLOB, n INTEGER)")
    for size in (10, 3000, 9000):  # in the page, and spilling over to overflow pages
        con.execute("INSERT INTO t (body, raw, n) VALUES (?, ?, ?)",
                    ("x" * size + value + " end", b"\x00\xff" + value.encode(), size))
    con.commit()
    con.close()
    scrubber = Scrubber({"OPENAI_API_KEY": value})
    assert scrub_tree(tmp_path, scrubber)["env:OPENAI_API_KEY"] == 6
    con = sqlite3.connect(path)
    assert con.execute("PRAGMA integrity_check").fetchone() == ("ok",)
    rows = con.execute("SELECT body, raw, n FROM t ORDER BY id").fetchall()
    con.close()
    assert [r[0] for r in rows] == ["x" * n + "[REDACTED:env:OPENAI_API_KEY] end"
                                    for n in (10, 3000, 9000)]
    assert rows[0][1] == b"\x00\xff[REDACTED:env:OPENAI_API_KEY]"
    assert value.encode() not in path.read_bytes()


def test_a_database_whose_triggers_never_end_does_not_hang_the_scrub(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    import sqlite3

    from copeca_action._util import scrub

    monkeypatch.setattr(scrub, "_SQLITE_TIMEOUT_S", 0.5)
    path = tmp_path / "state.sqlite"
    con = sqlite3.connect(path)
    con.executescript(
        "CREATE TABLE t (body TEXT);"
        "CREATE TRIGGER spin AFTER UPDATE ON t BEGIN SELECT count(*) FROM (WITH RECURSIVE"
        " c(x) AS (SELECT 1 UNION ALL SELECT x + 1 FROM c) SELECT x FROM c); END;")
    con.execute("INSERT INTO t VALUES (?)", ("key " + SECRET.decode(),))
    con.commit()
    con.close()
    scrub_tree(tmp_path, Scrubber({"K": SECRET}))
    assert SECRET not in path.read_bytes()  # the byte pass, once the SQL pass gave up


def test_uncaught_tracebacks_and_engine_log_lines_are_scrubbed(
        monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]) -> None:
    """Both reach stderr (the job's log) with no handler of ours in between; an exception
    message may quote what an agent printed."""
    import logging
    import sys

    from copeca_action._util.scrub import scrub_uncaught
    from copeca_action.engine import _execute

    monkeypatch.setenv("ANTHROPIC_API_KEY", SECRET.decode())
    monkeypatch.setattr(sys, "excepthook", sys.excepthook)
    scrub_uncaught()
    try:
        raise ValueError(f"bad answer: {SECRET.decode()}")
    except ValueError as exc:
        sys.excepthook(type(exc), exc, exc.__traceback__)
    err = capsys.readouterr().err
    assert "ValueError: bad answer: [REDACTED:env:ANTHROPIC_API_KEY]" in err
    assert "Traceback" in err and SECRET.decode() not in err

    records: list[logging.LogRecord] = []
    handler = logging.Handler()
    handler.emit = records.append  # type: ignore[method-assign]
    _execute._LOG.addHandler(handler)
    try:
        try:
            raise ValueError(SECRET.decode())
        except ValueError:
            _execute._LOG.exception("finishing %s failed", SECRET.decode())
    finally:
        _execute._LOG.removeHandler(handler)
    [record] = records
    assert record.exc_info is None and SECRET.decode() not in record.getMessage()
    assert record.getMessage().count("[REDACTED:env:ANTHROPIC_API_KEY]") == 2


def test_every_setting_the_action_declares_is_public() -> None:
    """An input action.yml declares and that is not a credential is a setting: forgotten in
    PUBLIC_INPUTS it would be dropped from the environment and its value (a long enough
    branch or path) redacted everywhere as a secret (`history` was)."""
    import yaml

    from copeca_action._util.scrub import PUBLIC_INPUTS

    action = yaml.safe_load((Path(__file__).resolve().parents[3] / "action.yml").read_text())
    secret = {"github-token", "anthropic-api-key", "openai-api-key", "signing-key"}
    declared = {n.upper().replace("-", "_") for n in action["inputs"] if n not in secret}
    assert declared == set(PUBLIC_INPUTS)


@pytest.mark.parametrize(("text", "redacted"), [
    (b"sk-" + b"a" * 40, True), (b" sk-proj-" + b"b" * 40, True), (b"/sk-" + b"f" * 33, True),
    (b"xsk-" + b"a" * 40, False), (b"-sk-" + b"a" * 40, False),
    (b"task-sk-" + b"d" * 40, False), (b'"sk-' + b"e" * 31, False)])
def test_an_openai_key_shape_starts_where_no_identifier_does(text: bytes, redacted: bool) -> None:
    """The shape's look-behind follows its literal `sk-` (fast on reports full of "task-"):
    a key at the start of the text or after a separator is caught, the tail of an
    identifier is not."""
    out = Scrubber({}).scrub(text)
    assert (b"[REDACTED:openai_key]" in out) is redacted


def _dump_text(chunk: bytes) -> str:
    return "".join(chr(x) if 32 <= x < 127 else "." for x in chunk)


def _od(data: bytes, offsets: bool = False) -> bytes:
    """`od -An -v -tx1`, or with offsets `od -v -tx1` (byte for byte)."""
    lines = [(f"{i:07o}" if offsets else "") + "".join(f" {x:02x}" for x in data[i:i + 16])
             for i in range(0, len(data), 16)]
    return "\n".join([*lines, *([f"{len(data):07o}"] if offsets else [])]).encode() + b"\n"


def _xxd(data: bytes, group: int = 2) -> bytes:
    """`xxd` (two-byte groups, the text column after them) or `xxd -g1`."""
    width = 16 // group * (2 * group + 1)
    lines = []
    for i in range(0, len(data), 16):
        chunk = data[i:i + 16]
        groups = " ".join(chunk[j:j + group].hex() for j in range(0, len(chunk), group))
        lines.append(f"{i:08x}: {groups:<{width}} {_dump_text(chunk)}\n")
    return "".join(lines).encode()


def _hexdump_c(data: bytes) -> bytes:
    """`hexdump -v -C`."""
    lines = []
    for i in range(0, len(data), 16):
        chunk = data[i:i + 16]
        left = " ".join(f"{x:02x}" for x in chunk[:8])
        right = " ".join(f"{x:02x}" for x in chunk[8:])
        lines.append(f"{i:08x}  {left:<23}  {right:<23}  |{_dump_text(chunk)}|")
    return "\n".join([*lines, f"{len(data):08x}"]).encode() + b"\n"


def _joined(sep: str, upper: bool = False, prefix: str = "") -> Callable[[bytes], bytes]:
    return lambda b: sep.join(f"{prefix}{x:02X}" if upper else f"{prefix}{x:02x}"
                              for x in b).encode()


SPACED_HEX: dict[str, Callable[[bytes], bytes]] = {
    "colons": _joined(":"), "COLONS": _joined(":", upper=True), "spaces": _joined(" "),
    "dashes": _joined("-"), "0x-list": _joined(", ", prefix="0x"), "od": _od,
    "od-offsets": lambda b: _od(b, offsets=True), "xxd": _xxd, "xxd-g1": lambda b: _xxd(b, 1),
    "hexdump-C": _hexdump_c,
}
"""Hex with separators (`de:ad:be:ef`, spaced, a C array) and the dumps of `od -tx1`, `xxd`
and `hexdump -C` (their text columns repeat the bytes as characters)."""


@pytest.mark.parametrize("form", sorted(SPACED_HEX))
@pytest.mark.parametrize("before", [b"", b"a", b"ab", b"PATH=/usr/bin\nANTHROPIC_API_KEY="])
@pytest.mark.parametrize("in_json", [False, True])
def test_hex_with_separators_and_hex_dumps_are_redacted(form: str, before: bytes,
                                                        in_json: bool) -> None:
    """`env | od -tx1`, `xxd key`, `hexdump -C`, a MAC-style `de:ad:...`: the bytes are
    joined back (offsets and text columns left out) and the run is redacted whole, text
    column included; in a transcript the lines' breaks are JSON escapes."""
    dump = SPACED_HEX[form](before + KEY.encode() + b"\nHOME=/root\n")
    data = b"the agent ran it:\n" + dump + b"\ndone\n"
    if in_json:
        data = json.dumps({"out": data.decode()}).encode() + b"\n"
    scrubber = Scrubber({"ANTHROPIC_API_KEY": KEY})
    out = scrubber.scrub(data)
    assert b"[REDACTED:env:ANTHROPIC_API_KEY]" in out
    assert scrubber.counts["env:ANTHROPIC_API_KEY"] == 1
    for at in range(len(KEY) - 8):  # no 8 characters of the key in the text column either
        assert KEY[at:at + 8].encode() not in out
    assert b"the agent ran it:" in out and b"done" in out
    if in_json:
        assert json.loads(out)["out"].endswith("done\n")


@pytest.mark.parametrize("chunk", [7, 100, 333, 4096])
@pytest.mark.parametrize("form", ["od", "xxd", "hexdump-C", "colons"])
def test_a_hex_dump_split_across_stream_pieces_is_still_redacted(chunk: int, form: str) -> None:
    dump = SPACED_HEX[form](b"PATH=/usr/bin\nANTHROPIC_API_KEY=" + KEY.encode() + b"\n")
    head = b"a log line, then the agent's `env | xxd`\n" * 20
    data = head + dump + b"\ndone.\n"
    scrubber = Scrubber({"ANTHROPIC_API_KEY": KEY})
    out = b"".join(scrubber.scrub_stream([data[i:i + chunk]
                                          for i in range(0, len(data), chunk)]))
    assert out.startswith(head) and out.endswith(b"done.\n")
    assert b"[REDACTED:env:ANTHROPIC_API_KEY]" in out
    for at in range(len(KEY) - 8):
        assert KEY[at:at + 8].encode() not in out


def test_a_token_shape_in_a_hex_dump_is_redacted() -> None:
    key = "sk-ant-api03-" + "Xy7Zq" * 8  # in no variable: found by its shape
    out = Scrubber({}).scrub(_xxd(b"token=" + key.encode() + b"\n"))
    assert b"[REDACTED:anthropic_key]" in out and b"Xy7Zq" not in out


def test_spaced_hex_and_numbers_without_a_secret_are_left_alone() -> None:
    data = (_od(bytes(range(256))) + _xxd(b"just some bytes, no key in them at all\n")
            + b"[10, 20, 30, 40, 50, 60, 70, 80, 90] 2024-11-27 13:24:05 de:ad:be:ef:00:11\n")
    scrubber = Scrubber({"ANTHROPIC_API_KEY": KEY})
    assert scrubber.scrub(data) == data
    assert not scrubber.counts


@pytest.mark.parametrize("header", [False, True])
@pytest.mark.parametrize("quotetabs", [False, True])
def test_quoted_printable_forms_of_a_value_are_redacted(header: bool, quotetabs: bool) -> None:
    """`quopri`'s forms (a header's `_` for a space and `=5F` for `_`, `=20` with quotetabs)
    of a value holding a space, an underscore and a byte outside ASCII."""
    import quopri

    value = "tok_en with=space é".encode()
    encoded = quopri.encodestring(b"Subject " + value + b" end", quotetabs=quotetabs,
                                  header=header)
    scrubber = Scrubber({"K": value})
    out = scrubber.scrub(encoded)
    assert out.count(b"[REDACTED:env:K]") == 1 and scrubber.counts["env:K"] == 1
    assert b"=3Dspace" not in out and b"=C3=A9" not in out
