"""An ACP agent built on the Python SDK (agent-client-protocol), used by
crates/acp-interop to test our Rust client side against it.

It behaves like interop/js/agent.mjs. For session/prompt (the prompt's text
blocks joined with "\\n"):

1. The text is streamed back exactly, one agent_message_chunk per word (each
   word keeps the whitespace after it), then one chunk "\\n".
2. If the text contains "permission": a pending tool call "call-1" (kind
   edit), one session/request_permission with the options allow
   (allow_once) and reject (reject_once); then a tool_call_update (completed
   when allowed, failed otherwise) and the chunk
   "permission: selected <optionId>\\n" or "permission: cancelled\\n".
3. If the text has the words "read <absolute path>": fs/read_text_file on
   that path; the chunk "file: " + content, or "file error: <message>\\n".
4. If the text contains "slow": the chunk "tick N\\n" every 50 ms for up to
   30 s.

The turn ends with end_turn, or with cancelled as soon as a session/cancel for
the session has arrived.

The sessions have the modes "code" (current) and "plan"; session/set_mode
changes it (an unknown mode is -32602).

Environment: INTEROP_LOG=FILE appends one line per event received;
INTEROP_MINIMAL_INIT=1 answers initialize with only protocolVersion.
Standard output carries the protocol; diagnostics go to standard error.
"""

from __future__ import annotations

import asyncio
import json
import os
import re
from typing import Any

from acp import (
    PROTOCOL_VERSION,
    InitializeResponse,
    NewSessionResponse,
    PromptResponse,
    RequestError,
    run_agent,
)
from acp.schema import (
    AgentCapabilities,
    AgentMessageChunk,
    AllowedOutcome,
    Implementation,
    McpCapabilities,
    PermissionOption,
    PromptCapabilities,
    SessionMode,
    SessionModeState,
    SetSessionModeResponse,
    TextContentBlock,
    ToolCallProgress,
    ToolCallStart,
    ToolCallUpdate,
)

SDK_VERSION = "0.12.1"
TICK_SECONDS = 0.05
MAX_TICKS = 600
WORDS = re.compile(r"\S+\s*|\s+")
READ = re.compile(r"(?:^|\s)read\s+(/\S*)")


def log(line: str) -> None:
    path = os.environ.get("INTEROP_LOG")
    if path:
        with open(path, "a", encoding="utf-8") as f:
            f.write(line + "\n")


def dump(value: Any) -> str:
    if hasattr(value, "model_dump"):
        value = value.model_dump(mode="json", by_alias=True, exclude_none=True)
    elif isinstance(value, list):
        value = [v.model_dump(mode="json", by_alias=True, exclude_none=True) for v in value]
    return json.dumps(value, separators=(",", ":"))


class InteropAgent:
    def __init__(self) -> None:
        self._client: Any = None
        self._sessions: dict[str, dict[str, Any]] = {}

    def on_connect(self, conn: Any) -> None:
        self._client = conn

    async def initialize(self, protocol_version: int, client_capabilities=None, client_info=None, **kwargs):
        log(
            "initialize "
            + json.dumps(
                {
                    "protocolVersion": protocol_version,
                    "clientCapabilities": json.loads(dump(client_capabilities)) if client_capabilities else None,
                    "clientInfo": json.loads(dump(client_info)) if client_info else None,
                },
                separators=(",", ":"),
            )
        )
        version = min(protocol_version, PROTOCOL_VERSION)
        if os.environ.get("INTEROP_MINIMAL_INIT") == "1":
            return InitializeResponse(protocol_version=version)
        return InitializeResponse(
            protocol_version=version,
            agent_capabilities=AgentCapabilities(
                load_session=False,
                prompt_capabilities=PromptCapabilities(image=True, audio=False, embedded_context=True),
                mcp_capabilities=McpCapabilities(http=True, sse=False),
            ),
            auth_methods=[],
            agent_info=Implementation(name="interop-python-agent", title="Interop Python agent", version=SDK_VERSION),
        )

    async def authenticate(self, method_id: str, **kwargs):
        log(f"authenticate {method_id}")
        return None

    async def new_session(self, cwd: str, additional_directories=None, mcp_servers=None, **kwargs):
        session_id = f"py-{len(self._sessions) + 1}"
        self._sessions[session_id] = {"cwd": cwd, "cancelled": None, "mode": "code"}
        log(f"session/new {json.dumps({'cwd': cwd, 'mcpServers': len(mcp_servers or [])})}")
        return NewSessionResponse(
            session_id=session_id,
            modes=SessionModeState(
                current_mode_id="code",
                available_modes=[
                    SessionMode(id="code", name="Code"),
                    SessionMode(id="plan", name="Plan", description="Plans before it edits"),
                ],
            ),
        )

    async def set_session_mode(self, session_id: str, mode_id: str, **kwargs):
        session = self._sessions.get(session_id)
        if session is None:
            raise RequestError.resource_not_found(session_id)
        if mode_id not in ("code", "plan"):
            raise RequestError.invalid_params({"modeId": mode_id, "reason": "no such mode"})
        log(f"session/set_mode {session_id} {mode_id}")
        session["mode"] = mode_id
        return SetSessionModeResponse()

    async def prompt(self, session_id: str, prompt: list, **kwargs):
        session = self._sessions.get(session_id)
        if session is None:
            raise RequestError.resource_not_found(session_id)
        log(f"session/prompt {dump(prompt)}")
        text = "\n".join(block.text for block in prompt if isinstance(block, TextContentBlock))
        cancelled = asyncio.Event()
        session["cancelled"] = cancelled
        try:
            stop = await self._turn(session_id, text, cancelled)
        finally:
            session["cancelled"] = None
        log(f"stop {stop}")
        return PromptResponse(stop_reason=stop)

    async def cancel(self, session_id: str, **kwargs):
        log(f"session/cancel {session_id}")
        session = self._sessions.get(session_id)
        if session and session["cancelled"] is not None:
            session["cancelled"].set()

    async def _say(self, session_id: str, text: str) -> None:
        chunk = AgentMessageChunk(session_update="agent_message_chunk", content=TextContentBlock(type="text", text=text))
        await self._client.session_update(session_id=session_id, update=chunk)

    async def _permission(self, session_id: str) -> None:
        await self._client.session_update(
            session_id=session_id,
            update=ToolCallStart(
                session_update="tool_call", tool_call_id="call-1", title="Edit notes.txt", kind="edit", status="pending"
            ),
        )
        answer = await self._client.request_permission(
            session_id=session_id,
            tool_call=ToolCallUpdate(tool_call_id="call-1", title="Edit notes.txt", kind="edit", status="pending"),
            options=[
                PermissionOption(option_id="allow", name="Allow", kind="allow_once"),
                PermissionOption(option_id="reject", name="Reject", kind="reject_once"),
            ],
        )
        log(f"permission {dump(answer.outcome)}")
        chosen = answer.outcome.option_id if isinstance(answer.outcome, AllowedOutcome) else None
        await self._client.session_update(
            session_id=session_id,
            update=ToolCallProgress(
                session_update="tool_call_update",
                tool_call_id="call-1",
                status="completed" if chosen == "allow" else "failed",
            ),
        )
        await self._say(session_id, f"permission: selected {chosen}\n" if chosen else "permission: cancelled\n")

    async def _read(self, session_id: str, path: str) -> None:
        try:
            reply = await self._client.read_text_file(session_id=session_id, path=path)
            await self._say(session_id, f"file: {reply.content}")
        except RequestError as error:
            log(f"read error {error.code} {error}")
            await self._say(session_id, f"file error: {error}\n")

    async def _turn(self, session_id: str, text: str, cancelled: asyncio.Event) -> str:
        for word in WORDS.findall(text):
            if cancelled.is_set():
                return "cancelled"
            await self._say(session_id, word)
        await self._say(session_id, "\n")
        if "permission" in text and not cancelled.is_set():
            await self._permission(session_id)
        read = READ.search(text)
        if read and not cancelled.is_set():
            await self._read(session_id, read.group(1))
        if "slow" in text:
            for tick in range(1, MAX_TICKS + 1):
                if cancelled.is_set():
                    break
                await self._say(session_id, f"tick {tick}\n")
                try:
                    await asyncio.wait_for(cancelled.wait(), TICK_SECONDS)
                except asyncio.TimeoutError:
                    pass
        return "cancelled" if cancelled.is_set() else "end_turn"


async def main() -> None:
    await run_agent(InteropAgent())
    log("closed")


if __name__ == "__main__":
    asyncio.run(main())
