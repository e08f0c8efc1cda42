"""Progress on stderr for long commands (`index`, `scrape`).

On a terminal: tqdm bars with count, rate and time left, one per task ("indexed",
"<set>: embedded"), redrawn in place. Not a terminal (an agent, a pipe, CI): plain lines,
each with the rate and the time left, so a log stays readable and greppable.

The library reports progress as text ("indexed 25/82 pages", "Set@1: embedded 64/1566
sections"); a message with "DONE/TOTAL UNIT" drives the bar of its task, anything else
is printed as a line.
"""

from __future__ import annotations

import re
import sys
import time
from typing import IO, Any

# "label 12/40 unit": the label runs greedily to the last non-digit (a lazy label before `\s*`
# rescanned every space of a message: quadratic); messages may quote page titles
_COUNT = re.compile(r"^(?P<label>(?:.*\D)?)(?P<done>\d+)/(?P<total>\d+)[ \t]*(?P<unit>[a-z]+)?[ \t]*$")


def _eta(seconds: float) -> str:
    seconds = int(seconds)
    return f"{seconds // 3600}h{seconds % 3600 // 60:02d}m" if seconds >= 3600 else \
        f"{seconds // 60}m{seconds % 60:02d}s" if seconds >= 60 else f"{seconds}s"


class Progress:
    """Counted tasks as bars on a TTY, else as plain lines with rate and time left."""

    def __init__(self, stream: IO[str] | None = None, *, tty: bool | None = None, prefix: str = "doc4llm: "):
        self.stream = stream or sys.stderr
        self.tty = self.stream.isatty() if tty is None else tty
        self.prefix = prefix
        self.bars: dict[str, Any] = {}
        self.started: dict[str, tuple[float, int]] = {}

    def __call__(self, message: str) -> None:
        self.message(message)

    def message(self, message: str) -> None:
        m = _COUNT.match(message)
        if not m:
            self.line(message)
            return
        label, unit = m.group("label").strip() or "progress", m.group("unit") or "it"
        done, total = int(m.group("done")), int(m.group("total"))
        if self.tty:
            self._bar(label, unit, total, done)
        else:
            self.line(f"{message}{self._rate(label, done, total, unit)}")

    def count(self, label: str, unit: str, done: int, total: int | None = None, note: str = "") -> None:
        """A task whose total may be unknown (a crawl): count and rate, no time left."""
        if self.tty:
            bar = self._bar(label, unit, total, done)
            if note:
                bar.set_postfix_str(note[-60:], refresh=False)
            return
        shown = f"{done}/{total}" if total else str(done)
        self.line(f"{label} {shown} {unit}{self._rate(label, done, total, unit)}" + (f"  {note}" if note else ""))

    def line(self, text: str) -> None:
        full = f"{self.prefix}{text}"
        if self.bars:
            from tqdm import tqdm

            tqdm.write(full, file=self.stream)
        else:
            print(full, file=self.stream, flush=True)

    def close(self) -> None:
        for bar in self.bars.values():
            bar.close()
        self.bars.clear()

    def __enter__(self) -> Progress:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def _bar(self, label: str, unit: str, total: int | None, done: int):
        from tqdm import tqdm

        bar = self.bars.get(label)
        if bar is None:
            bar = tqdm(total=total, desc=f"{self.prefix}{label}", unit=f" {unit}", file=self.stream,
                       dynamic_ncols=True, leave=True, position=len(self.bars))
            self.bars[label] = bar
        if total and bar.total != total:
            bar.total = total
        bar.update(max(0, done - bar.n))
        return bar

    def _rate(self, label: str, done: int, total: int | None, unit: str) -> str:
        """"  (12.3 pages/s, ~40s left)" from the first report of this task to now."""
        now = time.monotonic()
        t0, d0 = self.started.setdefault(label, (now, done))
        if now - t0 < 0.5 or done <= d0:
            return ""
        rate = (done - d0) / (now - t0)
        left = f", ~{_eta((total - done) / rate)} left" if total and done < total else ""
        return f"  ({rate:.1f} {unit}/s{left})"
