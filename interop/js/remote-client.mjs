#!/usr/bin/env node
// An ACP client on the official TypeScript SDK's network transports
// (createHttpStream for http://, createWebSocketStream with the `ws` package
// for ws://), used by crates/acp-cli/tests to drive `acp serve`.
//
//   node remote-client.mjs --url URL [--token TOKEN] [--read PATH]
//
// One connection: initialize (advertising fs read), session/new, then three
// prompts, each introduced on standard output by the line "PROMPT <text>":
//
//   1. "permission": the permission request is answered with the first
//      allow option (line "PERMISSION <toolCallId> <optionId>");
//   2. "read PATH" (with --read PATH): fs/read_text_file is served from the
//      local disk (line "READ <path>");
//   3. "slow": session/cancel is sent once three message chunks arrived.
//
// The text of every agent_message_chunk is printed as it arrives, and after
// each prompt the line "STOP <stopReason>". Exit status 0 when all three
// turns ended, 1 on any error (printed on standard error).

import { readFile } from "node:fs/promises";
import { WebSocket } from "ws";
import { client, methods, PROTOCOL_VERSION } from "@agentclientprotocol/sdk";
import { createHttpStream } from "@agentclientprotocol/sdk/experimental/http-client";
import { createWebSocketStream } from "@agentclientprotocol/sdk/experimental/ws-client";

function parseArgs(argv) {
  const options = { url: null, token: null, read: null };
  for (let i = 0; i < argv.length; i++) {
    const arg = argv[i];
    const value = () => {
      if (i + 1 >= argv.length) throw new Error(`${arg} needs a value`);
      return argv[++i];
    };
    if (arg === "--url") options.url = value();
    else if (arg === "--token") options.token = value();
    else if (arg === "--read") options.read = value();
    else throw new Error(`unexpected argument ${JSON.stringify(arg)}`);
  }
  if (!options.url) throw new Error("usage: remote-client.mjs --url URL [--token TOKEN] [--read PATH]");
  return options;
}

const out = (text) => process.stdout.write(text);

async function main() {
  const options = parseArgs(process.argv.slice(2));
  const headers = options.token ? { Authorization: `Bearer ${options.token}` } : {};
  const url = new URL(options.url);
  const stream =
    url.protocol === "ws:" || url.protocol === "wss:"
      ? createWebSocketStream(options.url, { WebSocket, headers })
      : createHttpStream(options.url, { headers });

  let chunks = 0;
  let onChunk = () => {};
  const app = client({ name: "interop-js-remote-client" })
    .onNotification(methods.client.session.update, ({ params }) => {
      const { update } = params;
      if (update.sessionUpdate === "agent_message_chunk" && update.content.type === "text") {
        out(update.content.text);
        chunks++;
        onChunk(params.sessionId);
      }
    })
    .onRequest(methods.client.session.requestPermission, ({ params }) => {
      const allow = params.options.find((o) => o.kind === "allow_once" || o.kind === "allow_always");
      out(`PERMISSION ${params.toolCall.toolCallId} ${allow ? allow.optionId : "cancelled"}\n`);
      return { outcome: allow ? { outcome: "selected", optionId: allow.optionId } : { outcome: "cancelled" } };
    })
    .onRequest(methods.client.fs.readTextFile, async ({ params }) => {
      out(`READ ${params.path}\n`);
      return { content: await readFile(params.path, "utf8") };
    });

  await app.connectWith(stream, async (agent) => {
    const init = await agent.request(methods.agent.initialize, {
      protocolVersion: PROTOCOL_VERSION,
      clientCapabilities: { fs: { readTextFile: true, writeTextFile: false }, terminal: false },
      clientInfo: { name: "interop-js-remote-client", version: "0.0.0" },
    });
    if (init.protocolVersion !== PROTOCOL_VERSION) throw new Error(`protocol ${init.protocolVersion}`);
    const { sessionId } = await agent.request(methods.agent.session.new, { cwd: process.cwd(), mcpServers: [] });
    const turn = async (text, cancelAfter) => {
      out(`PROMPT ${text}\n`);
      chunks = 0;
      let cancelled = false;
      onChunk = (session) => {
        if (cancelAfter != null && chunks >= cancelAfter && !cancelled) {
          cancelled = true;
          void agent.notify(methods.agent.session.cancel, { sessionId: session });
        }
      };
      const reply = await agent.request(methods.agent.session.prompt, {
        sessionId,
        prompt: [{ type: "text", text }],
      });
      // Notifications that arrived before the reply may still be in dispatch.
      await new Promise((resolve) => setImmediate(resolve));
      out(`\nSTOP ${reply.stopReason}\n`);
    };
    await turn("permission");
    if (options.read) await turn(`read ${options.read}`);
    await turn("slow", 3);
  });
}

main().then(
  () => process.exit(0),
  (error) => {
    process.stderr.write(`[remote-client] error: ${error?.stack ?? error}\n`);
    process.exit(1);
  },
);
