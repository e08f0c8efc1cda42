"""The MCP SDK's server with what doc4llm adds at the protocol edge.

Imported only by `doc4llm serve` (the SDK takes about a second to import): the SDK
builds schemas from the tool signatures and runs the tools; this subclass, through the
SDK's public methods, publishes compact schemas (`tools/list` is read by every client at
every start), rejects unknown arguments and explains invalid ones in plain words
(`args`), and over stdio answers a line that is not a JSON-RPC message with a JSON-RPC
error (-32700 parse error, -32600 invalid request) and a log line on stderr instead of
dropping it unseen.
"""

from __future__ import annotations

import sys
from typing import Any

from mcp.server.mcpserver import MCPServer
from mcp.server.mcpserver.exceptions import ToolError, UnexpectedToolError
from mcp.server.stdio import stdio_server
from mcp.shared.message import SessionMessage
from mcp.types import INVALID_REQUEST, PARSE_ERROR, ErrorData, JSONRPCError
from pydantic import ValidationError

from doc4llm.errors import InputError
from doc4llm.mcp.args import check_arguments, error_text, explain_validation
from doc4llm.mcp.schemas import compact_schema, outline_schema
from doc4llm.secrets import redact


class DocsMCPServer(MCPServer):
    """MCPServer with compact tool schemas, strict arguments and stdio parse errors."""

    async def list_tools(self):
        """Every tool as the SDK derives it, with its schemas compacted (same meaning,
        a third of the bytes) and its description on one line."""
        out = []
        for tool in await super().list_tools():
            schema = compact_schema(tool.input_schema, optional_null=False)
            out.append(tool.model_copy(update={
                "description": " ".join((tool.description or "").split()),
                "input_schema": schema,
                "output_schema": outline_schema(tool.output_schema) if tool.output_schema else None,
            }))
        return out

    async def call_tool(self, name: str, arguments: dict[str, Any], context: Any = None):
        schemas = {t.name: t.input_schema for t in await self.list_tools()}
        schema = schemas.get(name)
        if schema is not None:
            try:
                arguments = check_arguments(name, arguments, schema)
            except InputError as exc:
                raise ToolError(redact(error_text(exc))) from exc
        try:
            return await super().call_tool(name, arguments, context)
        except ToolError as exc:
            cause = exc.__cause__
            if schema is None or isinstance(exc, UnexpectedToolError) or not isinstance(cause, ValidationError):
                raise
            readable = explain_validation(name, cause.errors(include_url=False), schema)
            raise ToolError(redact(error_text(readable))) from cause

    async def run_stdio_async(self) -> None:
        """The SDK's stdio loop, its read stream filtered by `_ReportBadLines`."""
        async with stdio_server() as (read_stream, write_stream):
            server = self._lowlevel_server  # the SDK's own run_stdio_async does the same
            await server.run(_ReportBadLines(read_stream, write_stream), write_stream,
                             server.create_initialization_options())


class _ReportBadLines:
    """The transport's read stream without its exception items: the SDK's stdio reader
    turns a line it cannot parse into an exception item, which its dispatcher drops with
    a debug log. Here each becomes a JSON-RPC error reply (id null unless the line had a
    usable id) and one stderr line; the content is not logged (it may hold a key)."""

    def __init__(self, inner: Any, write_stream: Any):
        self._inner = inner
        self._write = write_stream

    def __getattr__(self, name: str) -> Any:  # last_context, close, clone: the inner stream's
        return getattr(self._inner, name)

    async def receive(self) -> Any:
        while True:
            item = await self._inner.receive()
            if not isinstance(item, Exception):
                return item
            await self._reply(item)

    def __aiter__(self) -> _ReportBadLines:
        return self

    async def __anext__(self) -> Any:
        import anyio

        try:
            return await self.receive()
        except anyio.EndOfStream:
            raise StopAsyncIteration from None

    async def __aenter__(self) -> _ReportBadLines:
        return self

    async def __aexit__(self, *exc: object) -> None:
        await self._inner.aclose()

    async def _reply(self, exc: Exception) -> None:
        errors = exc.errors(include_url=False) if isinstance(exc, ValidationError) else []
        parse = not errors or errors[0].get("type") == "json_invalid"
        code, what = (PARSE_ERROR, "Parse error: not JSON") if parse else (
            INVALID_REQUEST, "Invalid request: not a JSON-RPC 2.0 message")
        if parse and errors:
            what += f" ({errors[0].get('msg', '')})"
        request_id = None if parse else _request_id(errors)
        print(f"doc4llm: stdin: {what}; replied {code}", file=sys.stderr, flush=True)
        reply = JSONRPCError(jsonrpc="2.0", id=request_id, error=ErrorData(code=code, message=what))
        await self._write.send(SessionMessage(reply))


def _request_id(errors: list[dict[str, Any]]) -> int | str | None:
    """The id of a JSON object that parsed but is no JSON-RPC message, when it has one."""
    for err in errors:
        value = err.get("input")
        if isinstance(value, dict):
            rid = value.get("id")
            if isinstance(rid, (int, str)) and not isinstance(rid, bool):
                return rid
    return None

