"""`ask` as a bounded loop (seed 002): search, synthesize, evaluate, then more docs, a web
search, a refinement or return, until the evaluator is satisfied or a budget runs out.

Termination is structural: each pass through the loop costs one evaluation and the
number of evaluations is capped; actions that cannot run (budget spent, no web key) end
the loop instead of asking the evaluator the same question again; and the command's one
deadline (answer.deadline) bounds the whole of it.

Honesty (issue 30): when retrieval abstains, nothing is synthesised from the weak local
matches: the web is searched if configured, else the outcome is "not covered" with the
search's guidance.

What the model says is checked, not trusted (issue 35): an answer none of whose claims
any section holds (doc4llm.grounding) is not returned ("not covered", the closest
sections listed); an evaluator verdict that contradicts its own fields is ignored and
the loop ends on doc4llm's own checks, saying so; a reranking that carries no
information keeps the local order (rerank_llm.uninformative).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from functools import partial
from pathlib import Path

from doc4llm.answer.config import AnswerConfig
from doc4llm.answer.deadline import Deadline, DeadlineExceeded
from doc4llm.answer.evaluator import Evaluation, EvaluationError, evaluate
from doc4llm.answer.llm import NO_MODEL_HINT, LLMClient
from doc4llm.answer.rerank_llm import rerank, rerank_warning
from doc4llm.answer.secrets import redact
from doc4llm.answer.sources import SourceBook, read_section_text
from doc4llm.answer.synthesis import Synthesis, synthesize
from doc4llm.answer.trace import Trace
from doc4llm.answer.websearch import WebSearch
from doc4llm.errors import Doc4llmError, ExternalError

SearchFn = Callable[[str], dict]
UNVERIFIED_CAP = 30  # the most confidence an answer with unchecked claims reports
UNJUDGED_CAP = 50  # a verified answer no usable evaluator verdict judged


@dataclass
class AskDeps:
    search_fn: SearchFn  # query -> search result contract dict (DESIGN.md)
    docs_dir: Path
    llm: LLMClient | None
    web: WebSearch | None
    config: AnswerConfig
    k: int = 5
    web_off_reason: str = "set TAVILY_API_KEY to let ask search the web"
    deadline: Deadline | None = None  # default: the LLM client's (one per command)

    def time_left(self) -> Deadline:
        if self.deadline is None:
            self.deadline = self.llm.deadline if self.llm else Deadline(self.config.deadline_s)
        return self.deadline


@dataclass
class AskOutcome:
    question: str
    search: dict  # the first search's contract dict
    book: SourceBook
    trace: Trace
    answer: Synthesis | None = None
    evaluation: Evaluation | None = None
    warnings: list[str] = field(default_factory=list)
    wanted_web_queries: list[str] = field(default_factory=list)
    evaluated_text: str | None = None  # the answer text `evaluation` judged
    rejected: Synthesis | None = None  # an answer no section supports: not returned

    @property
    def abstained(self) -> bool:
        return bool(self.search.get("abstained"))

    @property
    def verified(self) -> bool:
        """Every claim of the answer returned cites a section that holds it (grounding)."""
        return self.answer is not None and self.answer.verified

    @property
    def judgement(self) -> Evaluation | None:
        """The evaluator's verdict on the answer being returned, when it is a signal (not
        an earlier version's, not one that contradicts itself)."""
        ev = self.evaluation
        if (self.answer is None or ev is None or ev.ignored
                or self.evaluated_text != self.answer.text):
            return None
        return ev

    @property
    def query_type(self) -> str:
        return self.search.get("query_type") or "general"

    @property
    def confidence(self) -> int:
        """A verified answer: the evaluator's confidence when it judged it, else at most
        UNJUDGED_CAP; an answer with claims the sections do not hold: at most
        UNVERIFIED_CAP (never the search's confidence as its own); no answer: the search's
        confidence in the sections, 0 when the docs do not cover the question."""
        search = int(self.search.get("confidence") or 0)
        if self.answer is None:
            return 0 if self.trace.final_action == "not_covered" else search
        if self.answer.not_covered:
            return 0
        judged = self.judgement
        if not self.verified:
            return min(judged.confidence if judged else UNVERIFIED_CAP, UNVERIFIED_CAP)
        return judged.confidence if judged else min(search, UNJUDGED_CAP)


def run_ask(question: str, deps: AskDeps) -> AskOutcome:
    trace = Trace(deps.llm, deps.web)
    deps.time_left()  # starts the clock if the caller gave none
    with trace.step("search", query=question) as step:
        first = deps.search_fn(question)
        step["results"] = len(first.get("results") or [])
        step.update(confidence=first.get("confidence"), abstained=bool(first.get("abstained")))
    out = AskOutcome(question=question, search=first, book=SourceBook(), trace=trace)
    candidates = list(first.get("results") or [])
    reader = partial(read_section_text, deps.docs_dir, char_budget=deps.config.section_char_budget)
    if deps.llm and deps.config.rerank and len(candidates) > 1 and not out.abstained:
        with trace.step("rerank", candidates=len(candidates)) as step:
            candidates, kept_because = rerank(deps.llm, question, out.query_type, candidates,
                                              read_text=reader,
                                              confidence=first.get("confidence"))
            step["reranked"] = kept_because is None
            if kept_because:
                step["kept_local_order"] = redact(kept_because)
                out.warnings.append(rerank_warning(redact(kept_because)))
    _add_docs(out, candidates[:deps.k], question, reader)

    if deps.llm is None:
        trace.final_action = "no_model"
        out.warnings.append(f"no model configured, so no answer text: {NO_MODEL_HINT}")
        return out
    if out.abstained or not out.book.docs:
        # weak local matches are listed, never synthesised from: a small model would
        # answer confidently from them (issue 30)
        out.book.docs_in_prompt = False
        if deps.web is None:
            _not_covered(out, deps)
            return out
        _search_web(out, deps, [question], reason="the local docs do not cover this question")
        if not out.book.web:
            _not_covered(out, deps)
            return out
    if not _synthesize(out, deps, "synthesis"):
        return out
    if _refused(out, deps):
        return out
    _evaluate_until_done(out, deps, reader)
    return out


def _refused(out: AskOutcome, deps: AskDeps) -> bool:
    """True (outcome set) when the answer is one no section supports: the web is tried
    once when configured, else the outcome is "not covered" and the answer is not
    returned (the closest sections are)."""
    if out.answer is None or not out.answer.unsupported:
        return False
    if deps.web is not None and not out.book.web and deps.config.max_web_searches > out.trace.web_searches:
        _search_web(out, deps, [out.question], reason="no local section supports the answer")
        if out.book.web:
            out.book.docs_in_prompt = False
            if not _synthesize(out, deps, "synthesis"):  # the unsupported answer is not kept
                out.rejected, out.answer = out.answer, None
                return True
            if not out.answer.unsupported:
                return False
    out.rejected, out.answer = out.answer, None
    out.trace.final_action = "not_covered"
    found = out.rejected.grounding
    why = ("the model's reply makes no claim" if not found.claims else
           "none of its claims is in the sections given" if not any(c.found_in for c in found.claims)
           else "the claims of it that are in the sections given are not about the question")
    if found.echoed:
        why += "; it repeats the prompt's instructions"
    confidence = int(out.search.get("confidence") or 0)
    out.warnings.append(f"not covered: no answer from the docs is returned, because {why} "
                        f"(search confidence {confidence}); the closest sections are listed, "
                        "not an answer: read them, they may still answer it")
    return True


def _not_covered(out: AskOutcome, deps: AskDeps) -> None:
    out.trace.final_action = "not_covered"
    confidence = int(out.search.get("confidence") or 0)
    found = (f"the search abstained (confidence {confidence})" if out.book.docs
             else "nothing matched")
    hint = ("; the web search found nothing usable" if deps.web is not None else _web_hint(deps))
    out.warnings.append(f"not covered: the local docs do not answer this question ({found}); "
                        "the closest sections are listed, not an answer" + hint)


def _evaluate_until_done(out: AskOutcome, deps: AskDeps, reader: Callable[[dict], str]) -> None:
    cfg, trace = deps.config, out.trace
    tried = [out.question]
    last_outcome = "initial answer"
    for iteration in range(1, cfg.max_iterations + 1):
        available = _available(out, deps)
        if deps.time_left().expired():
            trace.final_action = "deadline"
            out.warnings.append(f"the {deps.time_left().seconds:g} s deadline passed before "
                                "the evaluator judged the answer")
            return
        with trace.step("evaluation", iteration=iteration) as step:
            try:
                ev = evaluate(deps.llm, question=out.question, query_type=out.query_type,
                              answer=out.answer.text, sources=_source_lines(out.book),
                              previous=_previous(out.evaluation, tried, last_outcome),
                              available=available)
            except (EvaluationError, ExternalError) as exc:
                step.update(decision="ERROR", error=redact(exc.message))
                trace.final_action = ("deadline" if isinstance(exc, DeadlineExceeded)
                                      else "evaluation_failed")
                out.warnings.append(f"the evaluator did not judge the answer: {redact(exc.message)}")
                return
            out.evaluation = ev
            out.evaluated_text = out.answer.text
            step.update(decision=ev.action, reason=ev.reason, confidence=ev.confidence,
                        completeness=ev.completeness, repaired=ev.repaired,
                        queries=ev.queries, focus_areas=ev.focus_areas, context=ev.compressed())
            if ev.ignored:
                step["ignored"] = ev.ignored
        if ev.ignored:
            # no signal: the outcome rests on retrieval and the citation check alone
            trace.final_action = "evaluator_ignored"
            out.warnings.append(f"the evaluator's verdict was ignored ({ev.ignored}): "
                                f"{_own_decision(out)}")
            return
        if ev.action == "RETURN_ANSWER":
            trace.final_action = "returned"
            return
        if ev.confidence >= cfg.auto_return_confidence and ev.answers_question:
            trace.final_action = "confident"
            return
        if iteration == cfg.max_iterations:
            trace.final_action = "max_iterations"
            out.warnings.append(f"stopped after {cfg.max_iterations} evaluations; the evaluator "
                                f"still wanted {ev.action}: {ev.reason}")
            _remember_web_wish(out, ev)
            return
        if ev.action == "QUERY_MORE_DOCS":
            if not available["docQueriesRemaining"]:
                _stop(out, "doc_budget_spent", "the evaluator wanted more doc queries but the "
                      "budget is spent", ev)
                return
            before = len(out.book.docs)
            queries = ev.queries[:available["docQueriesRemaining"]]
            _query_docs(out, deps, queries, reader)
            tried += queries
            new = len(out.book.docs) - before
            last_outcome = f"doc queries {queries} added {new} new sections"
            if new and (not _synthesize(out, deps, "synthesis", previous=ev) or _refused(out, deps)):
                return
        elif ev.action == "SEARCH_WEB":
            if not available["webSearchesRemaining"]:
                _remember_web_wish(out, ev)
                _stop(out, "web_unavailable", "the local docs do not answer this; a web search "
                      "would help" + _web_hint(deps), ev)
                return
            before = len(out.book.web)
            _search_web(out, deps, ev.queries[:available["webSearchesRemaining"]],
                        reason=ev.reason)
            new = len(out.book.web) - before
            last_outcome = f"web search added {new} new web sources"
            if new and (not _synthesize(out, deps, "synthesis", previous=ev) or _refused(out, deps)):
                return
        else:  # REFINE_ANSWER
            last_outcome = "answer refined"
            if not _synthesize(out, deps, "refine", previous=ev) or _refused(out, deps):
                return


def _own_decision(out: AskOutcome) -> str:
    """What the loop decided without the evaluator, in words."""
    confidence = int(out.search.get("confidence") or 0)
    found = out.answer.grounding
    if out.answer.verified:
        return (f"the answer is returned on doc4llm's checks: each of its {len(found.claims)} "
                f"claims is in the section it cites (search confidence {confidence})")
    bad = found.unsupported()
    uncited = sum(1 for c in bad if not c.refs)
    parts = ([f"{uncited} cite no section"] if uncited else []) + (
        [f"{len(bad) - uncited} are not in the section they cite"] if len(bad) > uncited else [])
    return (f"the answer is returned as it is: of its {len(found.claims)} claims, "
            f"{' and '.join(parts)} (search confidence {confidence})")


def _synthesize(out: AskOutcome, deps: AskDeps, kind: str, previous: Evaluation | None = None) -> bool:
    """(Re)write the answer from all sources so far; False (with a warning) when the model fails."""
    focus = (previous.focus_areas or previous.still_needed or previous.issues) if previous else None
    with out.trace.step(kind, sources=len(out.book.docs) + len(out.book.web)) as step:
        try:
            result = synthesize(deps.llm, out.question, out.query_type, out.book,
                                previous_answer=out.answer.text if out.answer else None,
                                focus=focus, summary=previous.summary if previous else None)
        except ExternalError as exc:
            step["error"] = redact(exc.message)
            out.trace.final_action = "deadline" if isinstance(exc, DeadlineExceeded) else "llm_error"
            kept = "the previous answer is kept" if out.answer else "no answer text"
            out.warnings.append(f"model call failed, {kept}: {redact(exc.message)}")
            return False
        step["cited"] = [f"[{r}]" for r in result.cited]
        step["claims"] = len(result.grounding.claims)
        step["supported"] = len(result.grounding.supported)
        step["verified"] = result.verified
    out.answer = result
    return True


def _add_docs(out: AskOutcome, results: list[dict], query: str,
              reader: Callable[[dict], str]) -> None:
    for result in results:
        try:
            text = reader(result)
        except (OSError, Doc4llmError) as exc:
            out.warnings.append(f"could not read {result.get('doc_set')}/{result.get('page')}: "
                                f"{getattr(exc, 'message', exc)}")
            continue
        out.book.add_doc(result, text, query)


def _query_docs(out: AskOutcome, deps: AskDeps, queries: list[str],
                reader: Callable[[dict], str]) -> None:
    for query in queries:
        with out.trace.step("doc_query", query=query) as step:
            out.trace.doc_queries += 1
            try:
                found = deps.search_fn(query)
            except Doc4llmError as exc:
                out.warnings.append(f"doc query {query!r} failed: {exc.message}")
                step["error"] = exc.message
                continue
            before = len(out.book.docs)
            _add_docs(out, (found.get("results") or [])[:deps.k], query, reader)
            step["new_sections"] = len(out.book.docs) - before


def _search_web(out: AskOutcome, deps: AskDeps, queries: list[str], reason: str) -> None:
    for query in queries:
        left = deps.time_left().remaining()
        if left < 2:
            out.warnings.append(f"web search {query!r} skipped: the deadline is too close")
            continue
        with out.trace.step("web_search", query=query, reason=reason) as step:
            out.trace.web_searches += 1
            try:
                results = deps.web.search(query, timeout=min(deps.config.timeout_s, left))
            except ExternalError as exc:
                out.warnings.append(exc.message)
                step["error"] = exc.message
                continue
            added = [out.book.add_web(r.title, r.url, r.content, r.score, query) for r in results]
            step["new_web_sources"] = sum(1 for a in added if a)


def _available(out: AskOutcome, deps: AskDeps) -> dict:
    cfg = deps.config
    web_left = (cfg.max_web_searches - out.trace.web_searches) if deps.web else 0
    docs_left = cfg.max_doc_queries - out.trace.doc_queries
    actions = ["RETURN_ANSWER", "REFINE_ANSWER"]
    actions += ["QUERY_MORE_DOCS"] if docs_left > 0 else []
    actions += ["SEARCH_WEB"] if web_left > 0 else []
    return {"actions": actions, "docQueriesRemaining": max(0, docs_left),
            "webSearchesRemaining": max(0, web_left)}


def _previous(ev: Evaluation | None, tried: list[str], last_outcome: str) -> dict | None:
    if ev is None:
        return None
    return {**ev.compressed(), "queriesTried": tried, "lastActionOutcome": last_outcome}


def _source_lines(book: SourceBook) -> list[str]:
    lines = [f"[{d.ref}] {d.doc_set} / {d.title} (lines {d.lines[0]}-{d.lines[1]})"
             for d in book.docs]
    return lines + [f"[{w.ref}] WEB {w.title} {w.url}" for w in book.web]


def _stop(out: AskOutcome, action: str, message: str, ev: Evaluation) -> None:
    out.trace.final_action = action
    out.warnings.append(f"{message} ({ev.reason})" if ev.reason else message)


def _remember_web_wish(out: AskOutcome, ev: Evaluation) -> None:
    if ev.action == "SEARCH_WEB":
        out.wanted_web_queries += [q for q in ev.queries if q not in out.wanted_web_queries]


def _web_hint(deps: AskDeps) -> str:
    if deps.web is None:
        return f"; {deps.web_off_reason}, or run the suggested searches"
    return "; the web search budget is spent"
