"""realdocs-dev the way a user meets it: each corpus imported as its own doc set into ONE
docs dir, every query searched across all sets, reported per kind and per corpus.

    python benchmarks/search/realdocs_bench.py [--bench ../shared/benchmarks/realdocs-dev]
        [--docs-dir DIR] [--embedder minilm|none|...] [--json OUT.json] [--failures]

The docs dir is kept (default: a temp dir per run) so a second run with --docs-dir
reuses the imported sets and their index. Abstention is reported on no_answer queries
and false abstention on the answerable ones. `doc4llm eval QUERIES.json --docs-dir DIR`
gives the same report once the sets exist.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import tempfile
from pathlib import Path

os.environ.setdefault("OMP_NUM_THREADS", "1")
REPO = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(REPO))

DEFAULT_BENCH = REPO.parent / "shared" / "benchmarks" / "realdocs-dev"


def prepare(bench: Path, docs_dir: Path) -> list[str]:
    """Import every corpus of the benchmark as `<corpus>@dev` (idempotent)."""
    from doc4llm.ingest.importer import import_path

    data = json.loads((bench / "queries.json").read_text(encoding="utf-8"))
    sets = []
    for corpus, folder in data["corpora"].items():
        name = f"{corpus}@dev"
        import_path(bench / folder, docs_dir, name)
        sets.append(name)
    return sets


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--bench", type=Path, default=DEFAULT_BENCH)
    ap.add_argument("--docs-dir", type=Path)
    ap.add_argument("--embedder", default=None, help="default: the configured embedder")
    ap.add_argument("--json", dest="json_out", type=Path, help="write the full report here")
    ap.add_argument("--failures", action="store_true")
    args = ap.parse_args()
    if not (args.bench / "queries.json").is_file():
        sys.exit(f"no realdocs-dev benchmark at {args.bench} (pass --bench)")
    docs = args.docs_dir or Path(tempfile.mkdtemp(prefix="realdocs-")) / "md_docs"
    docs.mkdir(parents=True, exist_ok=True)
    prepare(args.bench, docs)
    from doc4llm.evaluation import format_report, run_eval

    report = run_eval(args.bench / "queries.json", docs_dir=docs, embedder=args.embedder)
    print(format_report(report, failures=args.failures))
    print(f"docs dir: {docs}", file=sys.stderr)
    if args.json_out:
        args.json_out.write_text(json.dumps(report, indent=1))


if __name__ == "__main__":
    main()
