"""Which language a code block is in: from its fence label, or guessed from its text.

Docs label fences loosely (`py`, `sh`, `jsonc`, `console`) or not at all (the upstream
corpus is 4-space indented code with no label), and sometimes wrongly. A cheap signal
score picks candidates and a tree-sitter parse confirms them: the grammar that parses
the text cleanly wins, so a Python block in a `javascript` fence is still chunked and
verified as Python.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass

from doc4llm.code import grammars

# fence label / file extension -> tree-sitter-language-pack name
ALIASES: dict[str, str] = {
    "py": "python", "python3": "python", "py3": "python", "pyi": "python", "python": "python",
    "js": "javascript", "jsx": "javascript", "mjs": "javascript", "cjs": "javascript",
    "node": "javascript", "javascript": "javascript",
    "ts": "typescript", "mts": "typescript", "cts": "typescript", "typescript": "typescript",
    "tsx": "tsx",
    "sh": "bash", "shell": "bash", "zsh": "bash", "console": "bash", "shellscript": "bash",
    "bash": "bash", "shell-session": "bash",
    "yml": "yaml", "yaml": "yaml",
    "json": "json", "jsonc": "json", "json5": "json", "jsonl": "json",
    "golang": "go", "go": "go",
    "rs": "rust", "rust": "rust",
    "rb": "ruby", "ruby": "ruby",
    "c++": "cpp", "cc": "cpp", "cxx": "cpp", "hpp": "cpp", "cpp": "cpp", "h": "c", "c": "c",
    "cs": "csharp", "c#": "csharp", "csharp": "csharp",
    "kt": "kotlin", "kts": "kotlin", "kotlin": "kotlin", "java": "java", "swift": "swift",
    "toml": "toml", "html": "html", "xml": "xml", "css": "css", "scss": "scss", "sql": "sql",
    "php": "php", "lua": "lua", "dockerfile": "dockerfile", "docker": "dockerfile",
    "hcl": "hcl", "terraform": "hcl", "tf": "hcl", "md": "markdown", "markdown": "markdown",
    "ps1": "powershell", "powershell": "powershell", "r": "r", "scala": "scala",
    "ex": "elixir", "elixir": "elixir", "zig": "zig", "dart": "dart", "make": "make",
    "makefile": "make", "ini": "ini", "graphql": "graphql", "proto": "proto",
}

# Labels that say "this is not code": no grammar, no detection.
PLAIN_LABELS = {"text", "txt", "plain", "plaintext", "output", "log", "none"}

# Signals per language, matched line-wise (MULTILINE); weight per match, capped per signal.
# Code blocks are untrusted text, so every pattern is linear: indentation is `[ \t]*`, never
# `\s*` (which runs on across every following blank line: `" \n" * 4000` took 33 s), no two
# neighbouring repeats can take the same characters (`->\s*[\w ]+` split 19,000 spaces every
# way: 8 s), and an unanchored `\w+X` is `\wX` (tried from each letter of a long word).
_EOL = r"[ \t\r]*$"
_SIGNALS: dict[str, list[tuple[str, int]]] = {
    "python": [
        (r"^[ \t]*def \w+\(.*\)[ \t]*(?:->[ \t]*[\w\[\],.|][\w\[\],.| ]*)?:" + _EOL, 4),
        (r"^[ \t]*class \w+(?:\(.*\))?:" + _EOL, 4),
        (r"^[ \t]*(?:from [\w.]+ )?import [\w.]+", 3), (r"\bself\.\w+", 2),
        (r"^[ \t]*(?:elif|except|finally)\b.*:$", 3),
        (r"\b(?:None|True|False)\b", 1), (r"^[ \t]*@\w", 1), (r"\bprint\(", 1), (r"^[ \t]*async def ", 3),
        (r'^[ \t]*"""', 2), (r"^[ \t]*with .+ as \w+:", 3), (r"^[ \t]*if __name__ ==", 4),
    ],
    "typescript": [
        (r"^[ \t]*(?:export )?interface \w", 4), (r"^[ \t]*(?:export )?type \w+(?:<.*>)? =", 4),
        (r":[ \t]*(?:string|number|boolean|void|unknown|any|never)\b", 3), (r"\w<[A-Z]\w*>", 1),
        (r"^[ \t]*(?:export )?enum \w", 2), (r"\b(?:private|public|readonly|implements)\b", 2),
        (r"\bas (?:const|string|number|any)\b", 2),
    ],
    "javascript": [
        (r"^[ \t]*(?:export )?(?:const|let|var) \w+ =", 2),
        (r"^[ \t]*(?:export (?:default )?)?(?:async )?function\*? ?\w*\(", 3),
        (r"=>", 1), (r"\brequire\(['\"]", 3), (r"\bconsole\.\w+\(", 2),
        (r"^[ \t]*import .* from ['\"]", 3), (r"^[ \t]*(?:module\.)?exports\b", 3), (r"\bawait\b", 1),
        (r"[;{}]" + _EOL, 1),
    ],
    "go": [
        (r"^package \w", 5), (r"^func (?:\(\w+ \*?\w+\) )?\w+\(", 5), (r":=", 2),
        (r"\bfmt\.\w+\(", 3), (r"^import \($", 4), (r"^type \w+ (?:struct|interface) \{", 5),
        (r"\berr != nil\b", 4),
    ],
    "rust": [
        (r"^[ \t]*(?:pub(?:\(crate\))? )?fn \w", 5), (r"\blet mut\b", 4),
        (r"^[ \t]*use [\w:]+(?:::\{.*\})?;", 4),
        (r"^[ \t]*impl\b", 4), (r"^[ \t]*#\[\w", 3), (r"\w::\w", 1), (r"\b(?:Some|Ok|Err)\(", 2),
        (r"\w!\(", 2), (r"&mut\b|&self\b", 3),
    ],
    "bash": [
        (r"^#!.*\b(?:ba|z)?sh\b", 6), (r"^[ \t]*\$ \w", 3),
        (r"^[ \t]*(?:sudo |export |cd |echo |curl |wget |npm |npx |pnpm |yarn |bun |pip3? |uv |git |docker |"
         r"brew |apt(?:-get)? |mkdir |chmod |rm |cp |mv |ls |cat |source |claude |opencode |go |cargo |"
         r"python3? -m |which |choco |scoop |winget |nix |paru |make |kubectl |gh |ssh |tar |grep |sed |jq )", 3),
        (r"^[ \t]*[A-Z_][A-Z0-9_]*=\S+ [a-z]", 3),
        (r"^[ \t]*\w+=\S*$", 1), (r"\s(?:\|\||&&|\|)\s", 1), (r"\$\{?\w+\}?", 1), (r"^[ \t]*#\s", 1),
        (r"\s--?[a-z][\w-]*", 1), (r"^[ \t]*(?:if \[|fi$|then$|do$|done$|esac$)", 3),
    ],
    "yaml": [
        (r"^[ \t]*[\w.-]+:" + _EOL, 2), (r"^[ \t]*[\w.-]+: \S", 2), (r"^[ \t]*- [\w\"']", 1),
        (r"^---" + _EOL, 2),
    ],
}
_COMPILED = {lang: [(re.compile(p, re.MULTILINE), w) for p, w in sigs] for lang, sigs in _SIGNALS.items()}
_SAMPLE_CHARS = 20_000  # signals read a prefix; enough to recognise any language
_CAP_PER_SIGNAL = 12


@dataclass(frozen=True)
class LangGuess:
    """The language used for a block, and whether it disagrees with the fence label."""

    lang: str | None
    label: str | None
    detected: bool  # the language was guessed (no label, or the label was wrong)
    label_mismatch: bool  # a label named a parseable language but the text is another one


def normalize_label(label: str | None) -> str | None:
    """`{.python}` / `py title="x.py"` / `Python` -> 'python'; plain-text labels -> None."""
    if not label:
        return None
    word = label.strip().split()[0] if label.strip() else ""
    word = word.strip("{}.").lower()
    if not word or word in PLAIN_LABELS:
        return None
    return ALIASES.get(word, word)


def signal_scores(code: str) -> dict[str, int]:
    """Signal score per language (JSON by a real parse; others by the regex signals)."""
    sample = code[:_SAMPLE_CHARS]
    scores: dict[str, int] = {}
    stripped = sample.lstrip()
    if stripped[:1] in "{[" and _looks_like_json(code):
        scores["json"] = 100
    for lang, signals in _COMPILED.items():
        total = sum(min(len(rx.findall(sample)), _CAP_PER_SIGNAL) * w for rx, w in signals)
        if total:
            scores[lang] = total
    if "typescript" in scores and "javascript" in scores:
        scores["typescript"] += scores["javascript"]  # TS is a superset of JS
    return scores


def _looks_like_json(code: str) -> bool:
    try:
        json.loads(code)
        return True
    except ValueError:
        # JSON with comments or a trailing fragment: trust the grammar instead.
        tree = grammars.parse(code, "json")
        return tree is not None and not tree.root_node.has_error


def detect_language(code: str) -> str | None:
    """Best guess for unlabelled code, or None for prose, prompts and output text."""
    scores = signal_scores(code)
    candidates = sorted((s, lang) for lang, s in scores.items() if s >= 3)
    candidates.reverse()
    if not candidates:
        return None
    best_score = candidates[0][0]
    # Among plausible candidates (within reach of the best), a clean parse wins.
    for score, lang in candidates[:4]:
        if score * 3 < best_score:
            break
        tree = grammars.parse(code, lang)
        if tree is not None and not tree.root_node.has_error:
            return lang
    return candidates[0][1]


def resolve_language(label: str | None, code: str) -> LangGuess:
    """The language to parse a block with: its label when the label holds up, else a guess."""
    named = normalize_label(label)
    if label and named is None:  # explicitly plain text
        return LangGuess(None, label, detected=False, label_mismatch=False)
    if named is None:
        return LangGuess(detect_language(code), None, detected=True, label_mismatch=False)
    tree = grammars.parse(code, named)
    if tree is None or not tree.root_node.has_error:
        return LangGuess(named, label, detected=False, label_mismatch=False)
    guess = detect_language(code)
    if guess and guess != named:
        other = grammars.parse(code, guess)
        if other is not None and not other.root_node.has_error:
            return LangGuess(guess, label, detected=True, label_mismatch=True)
    return LangGuess(named, label, detected=False, label_mismatch=False)
