"""Which words are everyday English, from the word-piece vocabulary shipped with the
default embedder (no extra data file).

BERT's uncased vocabulary lists whole words roughly by their frequency in English books
and Wikipedia, after the reserved and single-character entries. A word among the first
few thousand ("launched", "air", "editor") is common English: the docs not using it
says little about whether they answer a question. A rarer word, or one the vocabulary
does not hold at all ("telemetry", "pyinstaller"), is specific.
"""

from __future__ import annotations

import json
from functools import lru_cache

COMMON_BELOW = 8000  # vocabulary ids below this are the common whole words


@lru_cache(maxsize=1)
def _common() -> frozenset[str]:
    from doc4llm.index.embed_onnx import TOKENIZER_PATH

    try:
        vocab = json.loads(TOKENIZER_PATH.read_text(encoding="utf-8"))["model"]["vocab"]
    except (OSError, ValueError, KeyError, TypeError):
        return frozenset()  # no vocabulary: every word counts as specific (the old rule)
    return frozenset(w for w, i in vocab.items() if i < COMMON_BELOW and w.isalpha() and len(w) > 1)


def is_common_word(word: str) -> bool:
    return word.casefold() in _common()
