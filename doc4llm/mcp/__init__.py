"""The MCP stage: `doc4llm serve`'s tools over the same library calls as the CLI.

server.py: the tools and the service behind them; app.py: the SDK's server with compact
schemas, strict arguments and stdio parse errors; args.py: the arguments' shared types and
checks; schemas.py: the typed results and their token budget. Importing this package
imports nothing (the SDK takes about a second to import)."""
