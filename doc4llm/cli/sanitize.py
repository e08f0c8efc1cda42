"""Text bound for a terminal: every C0/C1 control sequence removed.

The implementation lives in `doc4llm/corpus/controls.py`, where the set writer uses it
too (titles and names are cleaned before they are written, not only when printed).
"""

from __future__ import annotations

from doc4llm.corpus.controls import strip_controls

__all__ = ["strip_controls"]
