"""doc4llm: the few lines of local documentation that answer an agent's question."""

__version__ = "0.1.0"
