from doc4llm.cli import main

# `python -m doc4llm` behaves as the `doc4llm` script (same name in usage lines and the
# same _DOC4LLM_COMPLETE variable for shell completion).
main(prog_name="doc4llm")
