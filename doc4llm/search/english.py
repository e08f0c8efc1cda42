"""Which words are everyday English, from the word-piece vocabulary shipped with the
default embedder.

BERT's uncased vocabulary lists whole words roughly by their frequency in English books
and Wikipedia, after the reserved and single-character entries. A word among the first
few thousand ("launched", "air", "editor") is common English: the docs not using it
says little about whether they answer a question. A rarer word, or one the vocabulary
does not hold at all ("telemetry", "pyinstaller"), is specific.

`common_words.txt` holds those words (ids below COMMON_BELOW, alphabetic, 2+ letters),
derived once from `index/models/minilm-l6-tokenizer.json` (a test checks they agree):
reading it costs ~1 ms, parsing the 700 KB tokenizer file ~20 ms of a search's start-up.
"""

from __future__ import annotations

from functools import lru_cache
from pathlib import Path

COMMON_BELOW = 8000  # vocabulary ids below this are the common whole words
WORDS_PATH = Path(__file__).with_name("common_words.txt")
# stems of SCOWL's lower-case English words (scripts/make_english_stems.py): what "is an
# English word at all" means, as opposed to a name written in lower case (protobuf, zstd)
STEMS_PATH = Path(__file__).with_name("english_stems.txt.gz")


def derive_common_words(vocab: dict[str, int]) -> list[str]:
    """The word list as written to common_words.txt (for the test that keeps it in sync)."""
    return sorted(w for w, i in vocab.items() if i < COMMON_BELOW and w.isalpha() and len(w) > 1)


@lru_cache(maxsize=1)
def _common() -> frozenset[str]:
    try:
        return frozenset(WORDS_PATH.read_text(encoding="utf-8").split())
    except OSError:
        return frozenset()  # no list: every word counts as specific (the old rule)


def is_common_word(word: str) -> bool:
    return word.casefold() in _common()


@lru_cache(maxsize=1)
def _stems() -> frozenset[str]:
    import gzip

    try:
        with gzip.open(STEMS_PATH, "rt", encoding="utf-8") as f:
            return frozenset(f.read().split())
    except (OSError, EOFError, UnicodeDecodeError):  # missing or damaged: no list
        return frozenset()


def is_english(word: str) -> bool:
    """A dictionary word in any inflection ("downsides"), or two run together ("allowlist",
    "endpoint"): docs may phrase it otherwise. False for a name written in lower case
    (protobuf, zstd, loguru, kubernetes), which docs that never mention it cannot cover.
    Loaded on first use (~10 ms), only for words the docs never mention."""
    from doc4llm.index.tokenize import stem

    stems = _stems()
    if not stems:
        return True  # no list: nothing is known to be a name
    w = word.casefold()
    if len(w) < 3 or not w.isalpha() or stem(w) in stems:
        return True
    return any(stem(w[:i]) in stems and stem(w[i:]) in stems for i in range(3, len(w) - 2))
