#!/usr/bin/env node
// An ACP client built on the official TypeScript SDK (@agentclientprotocol/sdk),
// used by crates/acp-interop to test our Rust agents against it.
//
//   node client.mjs [--prompt TEXT] [--cwd DIR] [--cancel-after-chunks N]
//                   [--abort-after-chunks N] -- PROGRAM [ARG...]
//
// It starts PROGRAM as the agent, initializes (advertising fs read and write
// and form elicitation, no terminal), opens a session in DIR (default: the current directory),
// sends TEXT (default "Hello") as one prompt and prints to standard output
// the text of every agent_message_chunk as it arrives, then the line
// "STOP <stopReason>" (after a newline if the text did not end with one).
// Everything else (other updates, permission answers, the agent's info)
// is summarised on standard error.
//
// Permission requests are answered with the first option of kind allow_once
// or allow_always (cancelled when there is none); form elicitations are
// accepted with no content. fs/read_text_file and
// fs/write_text_file are served from the local disk. With
// --cancel-after-chunks N, session/cancel is sent once N message chunks
// have arrived. With --abort-after-chunks N, the prompt request itself is
// cancelled instead: the SDK sends $/cancel_request for it.
//
// When the prompt request fails with an error answer, the last line is
// "ERROR <code> <message>" instead of the stop reason.
// Exit status: 0 when a stop reason was printed, 1 on any error.

import { spawn } from "node:child_process";
import { readFile, writeFile } from "node:fs/promises";
import { Readable, Writable } from "node:stream";
import { client, methods, ndJsonStream, PROTOCOL_VERSION, RequestError } from "@agentclientprotocol/sdk";

const USAGE =
  "usage: client.mjs [--prompt TEXT] [--cwd DIR] [--cancel-after-chunks N] [--abort-after-chunks N] -- PROGRAM [ARG...]";

function parseArgs(argv) {
  const options = { prompt: "Hello", cwd: process.cwd(), cancelAfter: null, abortAfter: null, command: [] };
  for (let i = 0; i < argv.length; i++) {
    const arg = argv[i];
    const value = () => {
      if (i + 1 >= argv.length) throw new Error(`${arg} needs a value\n${USAGE}`);
      return argv[++i];
    };
    if (arg === "--") {
      options.command = argv.slice(i + 1);
      break;
    } else if (arg === "--prompt") options.prompt = value();
    else if (arg === "--cwd") options.cwd = value();
    else if (arg === "--cancel-after-chunks") options.cancelAfter = Number(value());
    else if (arg === "--abort-after-chunks") options.abortAfter = Number(value());
    else throw new Error(`unexpected argument ${JSON.stringify(arg)}\n${USAGE}`);
  }
  if (options.command.length === 0) throw new Error(USAGE);
  return options;
}

function note(line) {
  process.stderr.write(`[client] ${line}\n`);
}

/** Lines `line`.. (1-based), at most `limit` of them, as the protocol asks. */
function sliceLines(content, line, limit) {
  if (line == null && limit == null) return content;
  const lines = content.split(/(?<=\n)/);
  const start = Math.max((line ?? 1) - 1, 0);
  const end = limit == null ? lines.length : start + limit;
  return lines.slice(start, end).join("");
}

function fsError(error, path) {
  if (error?.code === "ENOENT") return RequestError.resourceNotFound(path);
  return RequestError.internalError(undefined, String(error?.message ?? error));
}

async function main() {
  const options = parseArgs(process.argv.slice(2));
  const [program, ...args] = options.command;
  const child = spawn(program, args, { stdio: ["pipe", "pipe", "inherit"] });
  const exited = new Promise((resolve) => child.on("exit", (code, signal) => resolve({ code, signal })));
  const spawned = new Promise((resolve, reject) => {
    child.on("spawn", resolve);
    child.on("error", reject);
  });
  await spawned;

  let printed = "";
  let chunks = 0;
  let sessionId = null;
  let agentContext = null;
  let cancelSent = false;
  const abortPrompt = new AbortController();

  const print = (text) => {
    printed += text;
    process.stdout.write(text);
  };

  const app = client({ name: "interop-js-client" })
    .onNotification(methods.client.session.update, ({ params }) => {
      const { update } = params;
      if (update.sessionUpdate === "agent_message_chunk") {
        if (update.content.type === "text") print(update.content.text);
        else note(`agent_message_chunk of type ${update.content.type}`);
        chunks++;
        if (options.cancelAfter != null && chunks >= options.cancelAfter && !cancelSent && sessionId) {
          cancelSent = true;
          note("sending session/cancel");
          void agentContext.notify(methods.agent.session.cancel, { sessionId });
        }
        if (options.abortAfter != null && chunks >= options.abortAfter && !abortPrompt.signal.aborted) {
          note("cancelling the prompt request");
          abortPrompt.abort();
        }
      } else if (update.sessionUpdate === "tool_call" || update.sessionUpdate === "tool_call_update") {
        note(`${update.sessionUpdate} ${update.toolCallId} ${update.status ?? ""}`.trimEnd());
      } else {
        note(update.sessionUpdate);
      }
    })
    .onRequest(methods.client.session.requestPermission, ({ params }) => {
      const allow = params.options.find((o) => o.kind === "allow_once" || o.kind === "allow_always");
      note(`permission for ${params.toolCall.toolCallId}: ${allow ? allow.optionId : "cancelled"}`);
      return { outcome: allow ? { outcome: "selected", optionId: allow.optionId } : { outcome: "cancelled" } };
    })
    .onRequest(methods.client.elicitation.create, ({ params }) => {
      note(`elicitation (${params.mode}) ${JSON.stringify(params.message)}`);
      return { action: "accept", content: {} };
    })
    .onRequest(methods.client.fs.readTextFile, async ({ params }) => {
      note(`read ${params.path}`);
      try {
        const content = await readFile(params.path, "utf8");
        return { content: sliceLines(content, params.line, params.limit) };
      } catch (error) {
        throw fsError(error, params.path);
      }
    })
    .onRequest(methods.client.fs.writeTextFile, async ({ params }) => {
      note(`write ${params.path}`);
      try {
        await writeFile(params.path, params.content, "utf8");
        return {};
      } catch (error) {
        throw fsError(error, params.path);
      }
    });

  const stream = ndJsonStream(Writable.toWeb(child.stdin), Readable.toWeb(child.stdout));
  const outcome = await app.connectWith(stream, async (agent) => {
    agentContext = agent;
    const init = await agent.request(methods.agent.initialize, {
      protocolVersion: PROTOCOL_VERSION,
      clientCapabilities: {
        fs: { readTextFile: true, writeTextFile: true },
        terminal: false,
        elicitation: { form: {} },
      },
      clientInfo: { name: "interop-js-client", version: "0.0.0" },
    });
    note(`agent speaks protocol ${init.protocolVersion}; info ${JSON.stringify(init.agentInfo ?? null)}`);
    if (init.protocolVersion !== PROTOCOL_VERSION) {
      throw new Error(`the agent answered protocol version ${init.protocolVersion}`);
    }
    const session = await agent.request(methods.agent.session.new, { cwd: options.cwd, mcpServers: [] });
    sessionId = session.sessionId;
    note(`session ${sessionId}`);
    let reply;
    try {
      reply = await agent.request(
        methods.agent.session.prompt,
        { sessionId, prompt: [{ type: "text", text: options.prompt }] },
        { cancellationSignal: abortPrompt.signal },
      );
    } catch (error) {
      if (error instanceof RequestError) return { error };
      throw error;
    } finally {
      // Notifications that arrived before the reply may still be in the
      // SDK's dispatch (a chain of promise jobs): let them finish first.
      await new Promise((resolve) => setImmediate(resolve));
    }
    return { stopReason: reply.stopReason };
  });

  if (printed.length > 0 && !printed.endsWith("\n")) print("\n");
  if (outcome.error) print(`ERROR ${outcome.error.code} ${outcome.error.message}\n`);
  else print(`STOP ${outcome.stopReason}\n`);

  child.stdin.end();
  const timer = setTimeout(() => child.kill("SIGKILL"), 5000);
  const status = await exited;
  clearTimeout(timer);
  if (status.code !== 0) note(`agent exited with ${JSON.stringify(status)}`);
  return outcome.error ? 1 : 0;
}

main().then(
  (code) => process.exit(code),
  (error) => {
    process.stderr.write(`[client] error: ${error?.stack ?? error}\n`);
    if (error?.code !== undefined) process.stderr.write(`[client] error code ${error.code} data ${JSON.stringify(error.data)}\n`);
    process.exit(1);
  },
);
