"""reStructuredText -> markdown through pandoc, shipped by pypandoc-binary, under limits.

Why pandoc: its RST reader is complete (grid and list tables, field lists, footnotes,
nested directives) and it writes GitHub markdown with pipe tables and fenced code. The
alternatives fall short: docutils alone has no markdown writer and raises on every Sphinx
directive or role it does not know; rst-to-myst has been unmaintained since 2023; a
Sphinx markdown builder would execute the package's conf.py. Sphinx specifics are
rewritten before pandoc (sphinx_rst.py: object, autodoc and code directives) and inside
it (rst_filter.lua: admonitions, versionadded, roles, object headings). `--sandbox`
forbids pandoc any file or network access, so includes are resolved by includes.py,
inside the extracted archive only.

Limits (a 1 KB document can make pandoc use gigabytes or minutes):
- memory: pandoc's heap is capped (`+RTS -M`); a document over it fails alone;
- CPU: each run gets an RLIMIT_CPU (set with prlimit once it started) and a wall-clock
  timeout as a backstop;
- output: at most MAX_OUTPUT_BYTES are read, then pandoc is stopped;
- time per package: a `PandocBudget` of pandoc CPU seconds shared by all pages of one
  package; pages past it are kept as their raw text and the build says so once. Real
  pages never reach a limit; after two pages that do (a hostile package), what is left
  of the budget shrinks to a few seconds.
"""

from __future__ import annotations

import math
import os
import signal
import subprocess
import threading
from pathlib import Path

from doc4llm.errors import ExternalError
from doc4llm.ingest.packages.sphinx_rst import prepare

FILTER = Path(__file__).with_name("rst_filter.lua")
PAGE_CPU_SECONDS = 10.0  # one document (the largest real pages take ~4 s)
# pages that hit a limit are evidence of a hostile or pathological package: after this
# many, what is left of the budget shrinks to AFTER_FAILURES_SECONDS
FAILURES_BEFORE_SHRINK = 2
AFTER_FAILURES_SECONDS = 5.0
MAX_OUTPUT_BYTES = 8 * 1024 * 1024
WALL_FACTOR = 6  # wall-clock backstop: a busy machine runs a process slower than its CPU time
_SLOTS = threading.BoundedSemaphore(max(1, min(4, os.cpu_count() or 1)))  # pandoc processes at once


def heap_mb() -> int:
    """pandoc's heap cap in MB (`DOC4LLM_PANDOC_HEAP_MB`, default 200: the largest real
    pages need under 100)."""
    try:
        return max(16, int(os.environ.get("DOC4LLM_PANDOC_HEAP_MB") or 200))
    except ValueError:
        return 200


def package_budget_seconds() -> float:
    """Pandoc CPU seconds per package (`DOC4LLM_PANDOC_BUDGET`, default 90: Django 5.0's
    590 pages take about 58, SQLAlchemy 1.4's 164 about 46)."""
    try:
        return max(0.0, float(os.environ.get("DOC4LLM_PANDOC_BUDGET") or 90))
    except ValueError:
        return 90.0


class BudgetSpent(ExternalError):
    """The package's pandoc time is used up: the page stays raw."""


class PandocBudget:
    """Pandoc CPU time left for one package (thread-safe)."""

    def __init__(self, seconds: float | None = None):
        self.total = package_budget_seconds() if seconds is None else seconds
        self.spent = 0.0
        self.raw_pages = 0  # pages kept as raw text because the budget ran out
        self.failed_pages = 0  # pages pandoc could not convert within its limits
        self._lock = threading.Lock()

    def remaining(self) -> float:
        with self._lock:
            return self.total - self.spent

    def charge(self, seconds: float) -> None:
        with self._lock:
            self.spent += seconds

    def note_raw(self, budget: bool) -> None:
        with self._lock:
            if budget:
                self.raw_pages += 1
                return
            self.failed_pages += 1
            if self.failed_pages >= FAILURES_BEFORE_SHRINK:
                self.total = min(self.total, self.spent + AFTER_FAILURES_SECONDS)

    def summary(self) -> list[str]:
        out = []
        if self.raw_pages:
            out.append(f"pandoc time budget ({self.total:.0f} CPU s per package, DOC4LLM_PANDOC_BUDGET) "
                       f"used up: {self.raw_pages} reStructuredText pages kept as raw text")
        if self.failed_pages:
            out.append(f"{self.failed_pages} reStructuredText pages pandoc could not convert within its "
                       f"limits ({PAGE_CPU_SECONDS:.0f} CPU s, {heap_mb()} MB heap): kept as raw text"
                       + (f"; the package's pandoc time was cut to {self.total:.0f} CPU s after "
                          f"{FAILURES_BEFORE_SHRINK} such pages" if self.failed_pages >= FAILURES_BEFORE_SHRINK else ""))
        return out


def pandoc_path() -> str:
    try:
        import pypandoc
    except ImportError as exc:
        raise ExternalError("converting reStructuredText needs pypandoc-binary",
                            hint="pip install pypandoc-binary") from exc
    try:
        return pypandoc.get_pandoc_path()
    except OSError as exc:
        raise ExternalError("pandoc was not found (pypandoc-binary ships it)",
                            hint="pip install pypandoc-binary") from exc


def rst_to_markdown(text: str, budget: PandocBudget | None = None) -> str:
    """Convert one RST document. Raises BudgetSpent when the package's time is used up,
    ExternalError when pandoc fails or exceeds a limit on this document."""
    budget = budget or PandocBudget()
    with _SLOTS:
        cpu = min(PAGE_CPU_SECONDS, budget.remaining())
        if cpu <= 0.05:
            raise BudgetSpent("the package's pandoc time budget is used up")
        argv = [pandoc_path(), "+RTS", f"-M{heap_mb()}m", "-RTS", "--sandbox", "-f", "rst",
                "-t", "gfm-raw_html+pipe_tables", "--wrap=none", "--lua-filter", str(FILTER)]
        code, out, err, used, why = run_limited(argv, prepare(text).encode("utf-8"), cpu)
        budget.charge(used)
    if why:
        raise ExternalError(f"pandoc stopped on one document: {why}")
    if code != 0:
        raise ExternalError("pandoc could not convert the document: "
                            + err.decode("utf-8", "replace").strip()[:300])
    return out.decode("utf-8", errors="replace")


def run_limited(argv: list[str], data: bytes, cpu_seconds: float,
                max_output: int = MAX_OUTPUT_BYTES) -> tuple[int, bytes, bytes, float, str]:
    """Run a converter with a CPU limit, a wall-clock backstop and an output cap:
    (exit code, stdout, stderr head, CPU seconds used, why it was stopped or '')."""
    proc = subprocess.Popen(argv, stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    limit = max(1, math.ceil(cpu_seconds))
    try:
        import resource

        resource.prlimit(proc.pid, resource.RLIMIT_CPU, (limit, limit + 1))
    except (ImportError, AttributeError, OSError, ValueError):
        pass  # no prlimit (not Linux): the wall-clock backstop still holds
    why: list[str] = []
    out = bytearray()
    err = bytearray()

    def feed() -> None:
        try:
            proc.stdin.write(data)
        except (BrokenPipeError, OSError):
            pass
        finally:
            try:
                proc.stdin.close()
            except OSError:
                pass

    def drain_err() -> None:
        while chunk := proc.stderr.read(65536):
            if len(err) < 65536:
                err.extend(chunk[:65536 - len(err)])

    def drain_out() -> None:
        while chunk := proc.stdout.read(65536):
            out.extend(chunk)
            if len(out) > max_output:
                why.append(f"its output passed {max_output // (1024 * 1024)} MB")
                proc.kill()
                break

    def backstop() -> None:
        why.append(f"it ran past {limit * WALL_FACTOR + 10} s")
        proc.kill()

    threads = [threading.Thread(target=f, daemon=True) for f in (feed, drain_err, drain_out)]
    for t in threads:
        t.start()
    timer = threading.Timer(limit * WALL_FACTOR + 10, backstop)
    timer.daemon = True
    timer.start()
    used = 0.0
    try:
        _, status, usage = os.wait4(proc.pid, 0)
        used = usage.ru_utime + usage.ru_stime
        proc.returncode = os.waitstatus_to_exitcode(status)
    except ChildProcessError:
        proc.wait()
    finally:
        timer.cancel()
    for t in threads:
        t.join(timeout=5)
    for stream in (proc.stdout, proc.stderr):
        try:
            stream.close()
        except OSError:
            pass
    code = proc.returncode
    if not why and code is not None and (code == -signal.SIGXCPU or (code == -signal.SIGKILL and used >= limit - 1)):
        why.append(f"it used {limit} s of CPU")
    if not why and b"Heap exhausted" in err:
        why.append("it needed more memory than its heap cap (DOC4LLM_PANDOC_HEAP_MB)")
    return code if code is not None else -1, bytes(out), bytes(err), used, "; ".join(why)

