"""An ACP client built on the Python SDK (agent-client-protocol), used by
crates/acp-interop to test our Rust agents against it.

    python client.py [--prompt TEXT] [--cwd DIR] [--cancel-after-chunks N]
                     [--write-returns-none] -- PROGRAM [ARG...]

It behaves like interop/js/client.mjs: it starts PROGRAM as the agent,
initializes (advertising fs read and write, no terminal), opens a session in
DIR (default: the current directory), sends TEXT (default "Hello") as one
prompt and prints to standard output the text of every agent_message_chunk as
it arrives, then the line "STOP <stopReason>" (after a newline if the text did
not end with one). Other updates and permission answers are summarised on
standard error.

Permission requests are answered with the first option of kind allow_once or
allow_always (cancelled when there is none); fs/read_text_file and
fs/write_text_file are served from the local disk. With
--cancel-after-chunks N, session/cancel is sent once N message chunks have
arrived. With --write-returns-none, the write_text_file handler returns None,
which the SDK's Client interface allows and sends as `"result": null`.

Exit status: 0 when a stop reason was printed, 1 on any error.
"""

from __future__ import annotations

import argparse
import asyncio
import os
import sys
from typing import Any

from acp import (
    PROTOCOL_VERSION,
    ReadTextFileResponse,
    RequestError,
    RequestPermissionResponse,
    WriteTextFileResponse,
    spawn_agent_process,
    text_block,
)
from acp.schema import (
    AgentMessageChunk,
    AllowedOutcome,
    ClientCapabilities,
    DeniedOutcome,
    FileSystemCapabilities,
    Implementation,
    TextContentBlock,
    ToolCallProgress,
    ToolCallStart,
)


def note(line: str) -> None:
    print(f"[client] {line}", file=sys.stderr, flush=True)


def slice_lines(content: str, line: int | None, limit: int | None) -> str:
    if line is None and limit is None:
        return content
    lines = content.splitlines(keepends=True)
    start = max((line or 1) - 1, 0)
    end = len(lines) if limit is None else start + limit
    return "".join(lines[start:end])


def fs_error(error: OSError, path: str) -> RequestError:
    if isinstance(error, FileNotFoundError):
        return RequestError.resource_not_found(path)
    return RequestError.internal_error({"details": str(error)})


class InteropClient:
    def __init__(self, cancel_after: int | None, write_returns_none: bool) -> None:
        self.write_returns_none = write_returns_none
        self.printed = ""
        self.chunks = 0
        self.cancel_after = cancel_after
        self.cancel_sent = False
        self.session_id: str | None = None
        self.agent: Any = None
        self.background: set[asyncio.Task[Any]] = set()

    def print(self, text: str) -> None:
        self.printed += text
        sys.stdout.write(text)
        sys.stdout.flush()

    async def session_update(self, session_id: str, update: Any, **kwargs: Any) -> None:
        if isinstance(update, AgentMessageChunk):
            if isinstance(update.content, TextContentBlock):
                self.print(update.content.text)
            else:
                note(f"agent_message_chunk of type {update.content.type}")
            self.chunks += 1
            if (
                self.cancel_after is not None
                and self.chunks >= self.cancel_after
                and not self.cancel_sent
                and self.session_id is not None
            ):
                self.cancel_sent = True
                note("sending session/cancel")
                task = asyncio.create_task(self.agent.cancel(session_id=self.session_id))
                self.background.add(task)
                task.add_done_callback(self.background.discard)
        elif isinstance(update, (ToolCallStart, ToolCallProgress)):
            status = f" {update.status}" if update.status else ""
            note(f"{update.session_update} {update.tool_call_id}{status}")
        else:
            note(getattr(update, "session_update", type(update).__name__))

    async def request_permission(self, session_id: str, tool_call: Any, options: list, **kwargs: Any):
        allow = next((o for o in options if o.kind in ("allow_once", "allow_always")), None)
        note(f"permission for {tool_call.tool_call_id}: {allow.option_id if allow else 'cancelled'}")
        if allow is None:
            return RequestPermissionResponse(outcome=DeniedOutcome(outcome="cancelled"))
        return RequestPermissionResponse(outcome=AllowedOutcome(outcome="selected", option_id=allow.option_id))

    async def read_text_file(self, session_id: str, path: str, line=None, limit=None, **kwargs: Any):
        note(f"read {path}")
        try:
            with open(path, encoding="utf-8") as f:
                content = f.read()
        except OSError as error:
            raise fs_error(error, path) from None
        return ReadTextFileResponse(content=slice_lines(content, line, limit))

    async def write_text_file(self, session_id: str, path: str, content: str, **kwargs: Any):
        note(f"write {path}")
        try:
            with open(path, "w", encoding="utf-8") as f:
                f.write(content)
        except OSError as error:
            raise fs_error(error, path) from None
        return None if self.write_returns_none else WriteTextFileResponse()


async def run(options: argparse.Namespace) -> None:
    program, *args = options.command
    client = InteropClient(options.cancel_after_chunks, options.write_returns_none)
    async with spawn_agent_process(
        lambda agent: client,
        program,
        *args,
        env=dict(os.environ),
        transport_kwargs={"stderr": None},
    ) as (conn, process):
        client.agent = conn
        init = await conn.initialize(
            protocol_version=PROTOCOL_VERSION,
            client_capabilities=ClientCapabilities(
                fs=FileSystemCapabilities(read_text_file=True, write_text_file=True), terminal=False
            ),
            client_info=Implementation(name="interop-python-client", version="0.0.0"),
        )
        info = init.agent_info.model_dump(by_alias=True, exclude_none=True) if init.agent_info else None
        note(f"agent speaks protocol {init.protocol_version}; info {info}")
        if init.protocol_version != PROTOCOL_VERSION:
            raise RuntimeError(f"the agent answered protocol version {init.protocol_version}")
        session = await conn.new_session(cwd=options.cwd, mcp_servers=[])
        client.session_id = session.session_id
        note(f"session {session.session_id}")
        reply = await conn.prompt(session_id=session.session_id, prompt=[text_block(options.prompt)])
        if client.printed and not client.printed.endswith("\n"):
            client.print("\n")
        client.print(f"STOP {reply.stop_reason}\n")
    if process.returncode not in (0, None):
        note(f"agent exited with {process.returncode}")


def main() -> int:
    parser = argparse.ArgumentParser(description="A minimal ACP client on the Python SDK.")
    parser.add_argument("--prompt", default="Hello")
    parser.add_argument("--cwd", default=os.getcwd())
    parser.add_argument("--cancel-after-chunks", type=int, default=None)
    parser.add_argument("--write-returns-none", action="store_true")
    parser.add_argument("command", nargs=argparse.REMAINDER)
    options = parser.parse_args()
    if options.command[:1] == ["--"]:
        options.command = options.command[1:]
    if not options.command:
        parser.error("missing the agent command after --")
    try:
        asyncio.run(run(options))
    except RequestError as error:
        note(f"error: {error} (code {error.code}, data {error.data})")
        return 1
    except Exception as error:  # noqa: BLE001 - report anything and fail
        note(f"error: {type(error).__name__}: {error}")
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
