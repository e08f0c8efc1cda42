"""Write doc4llm/search/english_stems.txt.gz: the stems of the common (lower-case) English
words of SCOWL, as Debian's `wamerican` package ships them (/usr/share/dict/american-english).

Run once when the list should change: `apt-get install wamerican`, then
`python scripts/make_english_stems.py [WORDLIST]`. Proper nouns (capitalised entries) and
possessives are left out: a name the docs never mention is what the list must not hold.
The stems are doc4llm's own (`index.tokenize.stem`), so a query word in any inflection
("downsides", "atomically") finds its dictionary entry.

SCOWL: Copyright 2000-2011 by Kevin Atkinson. Permission to use, copy, modify,
distribute and sell these word lists, the associated scripts, the output created from
the scripts, and its documentation for any purpose is hereby granted without fee,
provided that the above copyright notice appears in all copies and that both that
copyright notice and this permission notice appear in supporting documentation. Kevin
Atkinson makes no representations about the suitability of this array for any purpose.
It is provided "as is" without express or implied warranty.
"""

from __future__ import annotations

import gzip
import sys
from pathlib import Path

from doc4llm.index.tokenize import stem
from doc4llm.search.english import STEMS_PATH


def main(source: str = "/usr/share/dict/american-english") -> None:
    words = Path(source).read_text(encoding="utf-8").split()
    stems = sorted({stem(w) for w in words if w.isalpha() and w.islower() and len(w) >= 2})
    # mtime=0: the same list gives the same bytes
    with gzip.GzipFile(STEMS_PATH, "wb", mtime=0) as f:
        f.write(("\n".join(stems) + "\n").encode("utf-8"))
    print(f"{len(stems)} stems from {len(words)} entries -> {STEMS_PATH}", file=sys.stderr)


if __name__ == "__main__":
    main(*sys.argv[1:])
