"""Text without terminal control sequences: for the terminal, and for titles and names
before they are written.

Pages come from the web and from anyone's repository, and their text reaches the
terminal in snippets, reads and tables of contents. An escape sequence in a page could
set the window title, write the clipboard (OSC 52), hide a link behind other text
(OSC 8), or redraw the screen. click strips only CSI colour codes, and only when stdout is
not a terminal; this strips every sequence (CSI, OSC, DCS, SOS, PM, APC, two-byte ESC
sequences, their 8-bit C1 forms) and then every control character left, keeping only
newline and tab. `--json` output keeps the text as is, JSON-escaped (common.emit_json).

Linear time on any input: no pattern can rescan the text after a sequence that never
ends (a string body stops at the next ESC or C1 character).
"""

from __future__ import annotations

import re

_SEQUENCE = re.compile(
    r"(?:\x1b\[|\x9b)[\x30-\x3f]*[\x20-\x2f]*[\x40-\x7e]"  # CSI: parameters, intermediates, final
    # OSC, DCS, SOS, PM, APC (7-bit and 8-bit introducers): a string up to BEL or ST
    r"|(?:\x1b[\]PX^_]|[\x90\x98\x9d\x9e\x9f])[^\x07\x1b\x80-\x9f]*(?:\x07|\x1b\\|\x9c)"
    r"|\x1b[\x20-\x2f]*[\x30-\x7e]"  # any other escape sequence (ESC c, ESC ( B, ESC 7...)
)
_CONTROL = re.compile(r"[\x00-\x08\x0b-\x1f\x7f-\x9f]")  # all of C0 but \t and \n, DEL, C1


def strip_controls(text: str) -> str:
    """`text` without terminal control sequences or control characters (\\t, \\n kept)."""
    if not _CONTROL.search(text):
        return text
    return _CONTROL.sub("", _SEQUENCE.sub("", text))


def clean_name(text: str, *, one_line: bool = True) -> str:
    """A title, file name or source line as it may be written: control sequences and
    characters gone (tabs and newlines too with `one_line`), text that is not UTF-8 (lone
    surrogates from undecodable file names) as U+FFFD."""
    text = strip_controls(text)
    if one_line:
        text = text.replace("\t", " ").replace("\n", " ")
    if any("\ud800" <= c <= "\udfff" for c in text):
        text = text.encode("utf-8", "surrogateescape" if _only_escapes(text) else "replace") \
            .decode("utf-8", "replace")
    return text


def _only_escapes(text: str) -> bool:
    return all("\udc80" <= c <= "\udcff" for c in text if "\ud800" <= c <= "\udfff")
