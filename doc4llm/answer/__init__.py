"""`ask`: answers from the docs with citations, checked by an evaluation loop.

Entry point: `doc4llm.answer.service.ask` (used by the CLI and any other surface).
Modules, in the order a question flows through them: config, llm, rerank_llm, sources,
prompts, synthesis, evaluator, websearch, loop, trace, response, save_web.
"""
