"""Every compiled regex held at module level in doc4llm, run (findall) against one
repeated character or short piece at two sizes 8x apart; prints the patterns whose time
grows more than 20x (linear is ~8x, quadratic ~64x).

findall scans from every position, so a pattern that is only ever used anchored
(`match`, `fullmatch`) may be listed without being a problem: check how it is called.
docs/hardening.md lists what this found for issue 29 and what was left alone, and why.

    python benchmarks/hardening/regex_audit.py
"""

from __future__ import annotations

import importlib
import pkgutil
import re
import sys
import time

import doc4llm

ATOMS = [" ", "\n", " \n", "\t", "a", "A", "1", "-", ":", ".", "#", "*", "`", "<", "(", ")", "[", "]", "\\", "/",
         "_", "a ", "a\n", "=", "'", '"', "&", "|", "!", "~", ">", "{", "}", "%", ",", "a:", "a.", "a-", "a/",
         "a_", "- ", "# ", "a=", "::", "a::", ": ", "\n\n ", "aA", "a1", ". ", "-a", "a(", "$", "@", "+"]
PREFIXES = ["", "def f() -> ", "title: a", "with x as ", "Source: ", "> ", "x"]
SMALL, LARGE = 1_500, 12_000


def patterns() -> dict[str, re.Pattern]:
    found: dict[int, tuple[str, re.Pattern]] = {}

    def collect(obj: object, name: str, depth: int = 0) -> None:
        if isinstance(obj, re.Pattern):
            found.setdefault(id(obj), (name, obj))
        elif depth < 3 and isinstance(obj, dict):
            for k, v in obj.items():
                collect(v, f"{name}[{k!r}]", depth + 1)
        elif depth < 3 and isinstance(obj, (list, tuple)):
            for i, v in enumerate(obj):
                collect(v, f"{name}[{i}]", depth + 1)

    for info in pkgutil.walk_packages(doc4llm.__path__, "doc4llm."):
        if info.name.endswith("__main__"):
            continue
        try:
            module = importlib.import_module(info.name)
        except Exception as exc:  # an optional dependency missing: say so, go on
            print(f"skipped {info.name}: {exc}", file=sys.stderr)
            continue
        for key, value in vars(module).items():
            collect(value, f"{info.name}.{key}")
    return dict(found.values())


def _cpu(pattern: re.Pattern, text: str | bytes) -> float:
    best = float("inf")
    for _ in range(2):
        t0 = time.process_time()
        pattern.findall(text)
        best = min(best, time.process_time() - t0)
    return best


def main() -> None:
    found = patterns()
    print(f"{len(found)} patterns", file=sys.stderr)
    rows = []
    for name, pattern in found.items():
        encode = (lambda s: s.encode()) if isinstance(pattern.pattern, bytes) else (lambda s: s)
        worst = None
        for prefix in PREFIXES:
            for atom in ATOMS:
                small = _cpu(pattern, encode(prefix + atom * (SMALL // len(atom)) + "x"))
                large = _cpu(pattern, encode(prefix + atom * (LARGE // len(atom)) + "x"))
                ratio = large / max(small, 2e-4)
                if large > 0.01 and ratio > 20 and (worst is None or ratio > worst[0]):
                    worst = (ratio, large, prefix, atom)
            if worst:
                break
        if worst:
            rows.append((*worst, name, pattern.pattern))
    for ratio, large, prefix, atom, name, source in sorted(rows, key=lambda r: r[0], reverse=True):
        print(f"{ratio:6.1f}x {large * 1000:8.1f} ms  {name}  prefix={prefix!r} atom={atom!r}  {str(source)[:100]!r}")


if __name__ == "__main__":
    main()
