"""Every labelled query file against its docs, with and without vectors, checked against
the frozen baselines: one command for "did this change hurt anything?".

    python benchmarks/search/heldout_bench.py [--work DIR] [--only NAME ...] [--lex-only]
        [--no-compare] [--shared ../shared]

Each entry below names its query file and where its docs come from, the way the README
describes them: an sdist's `docs/` folder (`pip download --no-binary :all:`), an npm
package's docs (`npm pack`), a Debian package's files, the bundled `md_docs/`, or the
dev benchmarks in `../shared`. Sources are fetched once into WORK/src (the package
registries are the only network this needs), each set is imported into WORK/NAME with
`doc4llm import` and indexed with `doc4llm index`, then `doc4llm eval --json --compare
benchmarks/search/baselines/NAME_{vec,lex}.json` runs. A missing source (no Debian package, no
../shared, no network) skips that entry with the reason; any regression beyond the
baseline tolerance exits 1.
"""

from __future__ import annotations

import argparse
import gzip
import json
import shutil
import subprocess
import sys
import tarfile
from dataclasses import dataclass
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
BASELINES = Path(__file__).resolve().parent / "baselines"  # NAME_{vec,lex}.json


@dataclass(frozen=True)
class Source:
    kind: str  # "pypi" (sdist), "npm", "path" (a folder on this machine), "repo" (in this checkout)
    spec: str  # `black==26.10.1`, `fastify@5.12.8`, `/usr/share/doc/nodejs/api`, `md_docs`
    sub: str  # folder inside the unpacked source
    set_name: str


@dataclass(frozen=True)
class Entry:
    queries: str  # path from the repo root (`../shared/...` for the dev benchmarks)
    sources: tuple[Source, ...]
    lexical: bool = True  # also run with --embedder none


SHARED = "../shared/benchmarks"
ENTRIES: dict[str, Entry] = {
    "realdocs": Entry(f"{SHARED}/realdocs-dev/queries.json", (
        Source("repo", f"{SHARED}/realdocs-dev/uv", "", "uv@dev"),
        Source("repo", f"{SHARED}/realdocs-dev/pydantic", "", "pydantic@dev"))),
    "mdmem": Entry(f"{SHARED}/mdmem/queries_dev.json", (Source("repo", f"{SHARED}/mdmem/corpus", "", "Mdmem@dev"),)),
    "up": Entry("benchmarks/search/queries/upstream_queries.json", (Source("repo", "md_docs", "", ""),)),
    "code": Entry("benchmarks/code/code_lookup_queries.json", (
        Source("repo", "md_docs", "", ""), Source("repo", "benchmarks/code/code_docs", "", "Code_Examples@latest")),
        lexical=False),
    "node": Entry("benchmarks/search/queries/node_api_queries.json", (Source("path", "/usr/share/doc/nodejs/api", "", "node@18"),)),
    "npm": Entry("benchmarks/search/queries/npm_undici_queries.json", (
        Source("path", "/usr/lib/node_modules/npm/docs/content", "", "npm@11"),
        Source("path", "/usr/lib/node_modules/npm/node_modules/undici/docs/docs", "", "undici@7"))),
    "contrib": Entry("benchmarks/search/queries/node_contributing_queries.json", (
        Source("path", "/usr/share/doc/nodejs/contributing", "", "contributing@18"),)),
    "fp": Entry("benchmarks/search/queries/fastify_pino_queries.json", (
        Source("npm", "fastify@5.12.8", "package/docs", "fastify@5"), Source("npm", "pino@10.4.0", "package/docs", "pino@10"))),
    "pip": Entry("benchmarks/search/queries/pip_myst_queries.json", (Source("path", "/usr/share/doc/python3-pip/html", "", "pip@23"),)),
    "bh": Entry("benchmarks/search/queries/black_hatch_queries.json", (
        Source("pypi", "black==26.10.1", "docs", "black@26"), Source("pypi", "hatch==1.18.2", "docs", "hatch@1"))),
    "ca": Entry("benchmarks/search/queries/cibuildwheel_attrs_queries.json", (
        Source("pypi", "cibuildwheel==4.3.5", "docs", "cibuildwheel@4"), Source("pypi", "attrs==26.1.0", "docs", "attrs@26"))),
    "ss": Entry("benchmarks/search/queries/starlette_structlog_queries.json", (
        Source("pypi", "starlette==1.10.0", "docs", "starlette@1"), Source("pypi", "structlog==26.1.0", "docs", "structlog@26"))),
    "gm": Entry("benchmarks/search/queries/griffe_mkdocstrings_queries.json", (
        Source("pypi", "griffe==2.4.1", "docs", "griffe@2"), Source("pypi", "mkdocstrings==1.0.8", "docs", "mkdocstrings@1"))),
}


class Skip(Exception):
    """The entry's source is not available here."""


def _run(cmd: list[str], **kw) -> subprocess.CompletedProcess:
    return subprocess.run(cmd, capture_output=True, text=True, **kw)


def _unpack(archive: Path, dest: Path) -> None:
    with tarfile.open(archive) as tar:
        tar.extractall(dest, filter="data")


SHARED_DIR = REPO.parent / "shared"  # --shared: where `../shared` is (a worktree sits deeper)


def in_repo(spec: str) -> Path:
    """A path from the repo root, `../shared/...` read from SHARED_DIR."""
    if spec.startswith("../shared/"):
        return SHARED_DIR / spec.removeprefix("../shared/")
    return REPO / spec


def fetch(src: Source, work: Path) -> Path:
    """The folder to import for `src`, fetched into work/src on first use."""
    if src.kind == "repo":
        path = in_repo(src.spec).resolve()
        if not path.exists():
            raise Skip(f"{src.spec} not found (the dev benchmarks live in ../shared)")
        return path
    if src.kind == "path":
        path = Path(src.spec)
        if not path.is_dir():
            raise Skip(f"{src.spec} not found (a Debian package provides it)")
        if any(path.rglob("*.md.gz")):  # Debian compresses larger pages: a plain copy to import
            plain = work / "src" / path.name
            if not plain.exists():
                for f in list(path.rglob("*.md")) + list(path.rglob("*.md.gz")):
                    out = plain / f.relative_to(path).with_suffix("" if f.suffix == ".gz" else f.suffix)
                    out.parent.mkdir(parents=True, exist_ok=True)
                    out.write_bytes(gzip.decompress(f.read_bytes()) if f.suffix == ".gz" else f.read_bytes())
            return plain
        return path
    base = work / "src" / src.spec.replace("==", "-").replace("@", "-")
    if not base.exists():
        tmp = base.with_name(base.name + ".part")
        shutil.rmtree(tmp, ignore_errors=True)
        tmp.mkdir(parents=True)
        if src.kind == "pypi":
            r = _run([sys.executable, "-m", "pip", "download", "-q", "--no-binary", ":all:", "--no-deps",
                      src.spec, "-d", str(tmp)])
            archives = list(tmp.glob("*.tar.gz"))
        else:
            r = _run(["npm", "pack", "-q", src.spec], cwd=tmp)
            archives = list(tmp.glob("*.tgz"))
        if r.returncode or not archives:
            raise Skip(f"could not fetch {src.spec}: {(r.stderr or r.stdout).strip()[-200:]}")
        _unpack(archives[0], tmp)
        tmp.rename(base)
    found = [p / src.sub for p in [base, *base.iterdir()] if p.is_dir() and (p / src.sub).is_dir()]
    if not found:
        raise Skip(f"{src.spec} has no {src.sub}/ folder")
    return found[0]


def prepare(name: str, entry: Entry, work: Path) -> Path:
    docs = work / name
    for src in entry.sources:
        folder = fetch(src, work)
        if src.set_name:
            r = _run(["doc4llm", "import", str(folder), "--set", src.set_name, "--docs-dir", str(docs)])
        else:  # the bundled md_docs: its sets as they are
            docs.mkdir(parents=True, exist_ok=True)
            for s in folder.iterdir():
                if "@" in s.name and s.is_dir() and not (docs / s.name).exists():
                    shutil.copytree(s, docs / s.name)
            continue
        if r.returncode:
            raise Skip(f"import of {folder} failed: {r.stderr.strip()[-200:]}")
    return docs


def evaluate(name: str, entry: Entry, docs: Path, mode: str, compare: bool) -> tuple[dict, bool]:
    cmd = ["doc4llm", "eval", str(in_repo(entry.queries)), "--docs-dir", str(docs), "--json"]
    if mode == "lex":
        cmd += ["--embedder", "none"]
    base = BASELINES / f"{name}_{mode}.json"
    if compare and base.exists():
        cmd += ["--compare", str(base)]
    r = _run(cmd)
    try:
        report = json.loads(r.stdout)
    except json.JSONDecodeError:
        raise Skip(f"eval failed: {r.stderr.strip()[-300:]}") from None
    if "overall" not in report:
        raise Skip(f"eval failed: {report.get('message')}")
    return report, r.returncode == 1 and compare and base.exists()


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--work", type=Path, default=Path("/tmp/doc4llm-heldout"))
    ap.add_argument("--only", nargs="*", choices=sorted(ENTRIES), help="these entries only")
    ap.add_argument("--lex-only", action="store_true", help="skip the runs with vectors")
    ap.add_argument("--no-compare", action="store_true", help="report only, never fail")
    ap.add_argument("--shared", type=Path, help="the shared folder (default: ../shared from the repo)")
    args = ap.parse_args()
    if args.shared:
        global SHARED_DIR
        SHARED_DIR = args.shared.resolve()
    if shutil.which("doc4llm") is None:
        sys.exit("doc4llm is not on PATH: pip install -e . first")
    args.work.mkdir(parents=True, exist_ok=True)
    worse = []
    print(f"{'run':14s} {'top1':>6s} {'top3':>6s} {'mrr':>6s} {'abst':>6s} {'false':>6s}  vs baseline")
    for name in args.only or ENTRIES:
        entry = ENTRIES[name]
        try:
            docs = prepare(name, entry, args.work)
            modes = ["lex"] if args.lex_only else (["vec", "lex"] if entry.lexical else ["vec"])
            if args.lex_only and not entry.lexical:
                continue
            if "vec" in modes:
                subprocess.run(["doc4llm", "index", "--docs-dir", str(docs)], capture_output=True)
            for mode in modes:
                report, regressed = evaluate(name, entry, docs, mode, not args.no_compare)
                o = report["overall"]
                base = BASELINES / f"{name}_{mode}.json"
                b = json.loads(base.read_text())["overall"] if base.exists() else {}
                delta = " ".join(f"{k} {b[k]:.3f}->{o[k]:.3f}" for k in ("top1", "top3", "no_answer_abstention")
                                 if b.get(k) is not None and o.get(k) is not None and abs(b[k] - o[k]) > 1e-9)
                print(f"{name + '_' + mode:14s} {o['top1']:6.3f} {o['top3']:6.3f} {o['mrr']:6.3f} "
                      f"{(o.get('no_answer_abstention') or 0):6.3f} {o['answerable_abstained']:6.3f}  "
                      f"{'REGRESSION ' if regressed else ''}{delta or ('same' if b else 'no baseline')}", flush=True)
                if regressed:
                    worse.append(f"{name}_{mode}")
        except Skip as why:
            print(f"{name:14s} skipped: {why}", flush=True)
    if worse:
        print(f"regressions: {', '.join(worse)}", file=sys.stderr)
    return 1 if worse else 0


if __name__ == "__main__":
    sys.exit(main())
