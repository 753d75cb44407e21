#!/usr/bin/env node
// An ACP agent built on the official TypeScript SDK (@agentclientprotocol/sdk),
// used by crates/acp-interop to test our Rust client side against it.
//
// Behaviour of session/prompt (the prompt's text blocks joined with "\n"):
//
//   1. The text is streamed back exactly, one agent_message_chunk per word
//      (each word keeps the whitespace after it), then one chunk "\n".
//   2. If the text contains "permission": a pending tool call "call-1"
//      (kind edit), one session/request_permission with the options
//      allow (allow_once), reject (reject_once); then a tool_call_update
//      (completed when allowed, failed otherwise) and the chunk
//      "permission: selected <optionId>\n" or "permission: cancelled\n".
//   3. If the text has the words "read <absolute path>": fs/read_text_file
//      on that path; the chunk "file: " + content, or
//      "file error: <message>\n".
//   4. If the text contains "all-updates": session/updates of every stable
//      kind, with most optional fields (see sendAllUpdates); notice and
//      compaction ones only when the client advertised them.
//   5. If the text contains "slow": the chunk "tick N\n" every 50 ms for
//      up to 30 s.
//   The turn ends with end_turn, or with cancelled as soon as a
//   session/cancel for the session has arrived; after a $/cancel_request
//   for the prompt request, the request fails with -32800.
//
// The sessions have the modes "code" (current) and "plan", and one config
// option, "model" ("small" or "large"); session/set_mode and
// session/set_config_option change them (an unknown mode, option or value is
// -32602).
//
// Environment:
//   INTEROP_LOG=FILE       appends one line per event received, for the tests
//                          (e.g. "session/cancel js-1", "stop cancelled").
//   INTEROP_MINIMAL_INIT=1 answers initialize with only protocolVersion, so
//                          the client must apply the capability defaults.
//
// Standard output carries the protocol; diagnostics go to standard error.

import { appendFileSync } from "node:fs";
import { Readable, Writable } from "node:stream";
import { pathToFileURL } from "node:url";
import { agent, methods, ndJsonStream, PROTOCOL_VERSION, RequestError } from "@agentclientprotocol/sdk";

const SDK_VERSION = "2.4.0";
const TICK_MS = 50;
const MAX_TICKS = 600;

function log(line) {
  const file = process.env.INTEROP_LOG;
  if (file) appendFileSync(file, line + "\n");
}

/** What the client advertised in initialize. */
let clientCapabilities = null;

/** Per session: its directory and the controller of the running turn. */
const sessions = new Map();
let sessionCount = 0;

const sleep = (ms, signal) =>
  new Promise((resolve) => {
    const timer = setTimeout(resolve, ms);
    signal?.addEventListener("abort", () => {
      clearTimeout(timer);
      resolve();
    });
  });

const MODES = [
  { id: "code", name: "Code" },
  { id: "plan", name: "Plan", description: "Plans before it edits" },
];
const MODELS = [
  { value: "small", name: "Small" },
  { value: "large", name: "Large", description: "Slower" },
];

/** The session's modes, as session/new answers them. */
function modesOf(session) {
  return { currentModeId: session.mode, availableModes: MODES };
}

/** The session's config options (one: the model). */
function configOptionsOf(session) {
  return [
    {
      type: "select",
      id: "model",
      name: "Model",
      category: "model",
      currentValue: session.model,
      options: MODELS,
    },
  ];
}

function sessionOf(sessionId) {
  const session = sessions.get(sessionId);
  if (!session) throw RequestError.sessionNotFound(sessionId);
  return session;
}

async function say(client, sessionId, text) {
  await client.notify(methods.client.session.update, {
    sessionId,
    update: { sessionUpdate: "agent_message_chunk", content: { type: "text", text } },
  });
}

async function update(client, sessionId, update) {
  await client.notify(methods.client.session.update, { sessionId, update });
}

async function askPermission(client, sessionId) {
  await update(client, sessionId, {
    sessionUpdate: "tool_call",
    toolCallId: "call-1",
    title: "Edit notes.txt",
    kind: "edit",
    status: "pending",
  });
  const answer = await client.request(methods.client.session.requestPermission, {
    sessionId,
    toolCall: { toolCallId: "call-1", title: "Edit notes.txt", kind: "edit", status: "pending" },
    options: [
      { optionId: "allow", name: "Allow", kind: "allow_once" },
      { optionId: "reject", name: "Reject", kind: "reject_once" },
    ],
  });
  log(`permission ${JSON.stringify(answer.outcome)}`);
  const chosen = answer.outcome.outcome === "selected" ? answer.outcome.optionId : null;
  await update(client, sessionId, {
    sessionUpdate: "tool_call_update",
    toolCallId: "call-1",
    status: chosen === "allow" ? "completed" : "failed",
  });
  await say(client, sessionId, chosen ? `permission: selected ${chosen}\n` : "permission: cancelled\n");
}

async function readFile(client, sessionId, path) {
  try {
    const reply = await client.request(methods.client.fs.readTextFile, { sessionId, path });
    await say(client, sessionId, `file: ${reply.content}`);
  } catch (error) {
    log(`read error ${error?.code} ${error?.message}`);
    await say(client, sessionId, `file error: ${error?.message ?? error}\n`);
  }
}

async function sendAllUpdates(client, sessionId) {
  const updates = [
    {
      sessionUpdate: "user_message_chunk",
      content: { type: "text", text: "an earlier question" },
      messageId: "msg-user-1",
    },
    { sessionUpdate: "agent_thought_chunk", content: { type: "text", text: "thinking" } },
    {
      sessionUpdate: "agent_message_chunk",
      content: {
        type: "resource_link",
        uri: "file:///tmp/example.txt",
        name: "example.txt",
        mimeType: "text/plain",
        size: 12,
      },
    },
    {
      sessionUpdate: "agent_message_chunk",
      content: {
        type: "resource",
        resource: { uri: "file:///tmp/embedded.txt", text: "embedded text", mimeType: "text/plain" },
      },
    },
    {
      sessionUpdate: "agent_message_chunk",
      content: { type: "image", data: "aGVsbG8=", mimeType: "image/png" },
    },
    {
      sessionUpdate: "tool_call",
      toolCallId: "call-2",
      title: "Edit /tmp/a.txt",
      kind: "edit",
      status: "in_progress",
      locations: [{ path: "/tmp/a.txt", line: 3 }],
      content: [
        { type: "diff", path: "/tmp/a.txt", oldText: "one\n", newText: "two\n" },
        { type: "content", content: { type: "text", text: "changing a line" } },
      ],
      rawInput: { path: "/tmp/a.txt", nested: { n: 1 } },
    },
    {
      sessionUpdate: "tool_call_update",
      toolCallId: "call-2",
      status: "completed",
      rawOutput: { ok: true },
    },
    {
      sessionUpdate: "plan",
      entries: [
        { content: "Read the code", priority: "high", status: "completed" },
        { content: "Change it", priority: "medium", status: "in_progress" },
        { content: "Run the tests", priority: "low", status: "pending" },
      ],
    },
    {
      sessionUpdate: "available_commands_update",
      availableCommands: [
        { name: "web", description: "Search the web", input: { hint: "query" } },
        { name: "test", description: "Run the tests" },
      ],
    },
    { sessionUpdate: "current_mode_update", currentModeId: "plan" },
    {
      sessionUpdate: "config_option_update",
      configOptions: [
        {
          type: "select",
          id: "model",
          name: "Model",
          category: "model",
          currentValue: "large",
          options: [
            { value: "small", name: "Small" },
            { value: "large", name: "Large", description: "Slower" },
          ],
        },
      ],
    },
    { sessionUpdate: "session_info_update", title: "Interop session", updatedAt: "2026-01-02T03:04:05Z" },
    { sessionUpdate: "usage_update", used: 1200, size: 200000, cost: { amount: 0.25, currency: "USD" } },
  ];
  // These two kinds need the client to have advertised them.
  if (clientCapabilities?.session?.notices) {
    updates.push({
      sessionUpdate: "notice",
      severity: "warning",
      title: "Rate limited",
      description: "Retrying in 1 s",
    });
  }
  if (clientCapabilities?.session?.compaction) {
    updates.push(
      { sessionUpdate: "compaction_update", compactionId: "cmp-1", status: "in_progress" },
      {
        sessionUpdate: "compaction_summary_chunk",
        compactionId: "cmp-1",
        content: { type: "text", text: "summary so far" },
      },
      { sessionUpdate: "compaction_update", compactionId: "cmp-1", status: "completed", summary: null },
    );
  }
  for (const u of updates) await update(client, sessionId, u);
}

async function turn(client, sessionId, text, signal) {
  for (const word of text.match(/\S+\s*|\s+/g) ?? []) {
    if (signal.aborted) return "cancelled";
    await say(client, sessionId, word);
  }
  await say(client, sessionId, "\n");
  if (text.includes("permission") && !signal.aborted) await askPermission(client, sessionId);
  const read = /(?:^|\s)read\s+(\/\S*)/.exec(text);
  if (read && !signal.aborted) await readFile(client, sessionId, read[1]);
  if (text.includes("all-updates") && !signal.aborted) await sendAllUpdates(client, sessionId);
  if (text.includes("slow")) {
    for (let tick = 1; tick <= MAX_TICKS && !signal.aborted; tick++) {
      await say(client, sessionId, `tick ${tick}\n`);
      await sleep(TICK_MS, signal);
    }
  }
  return signal.aborted ? "cancelled" : "end_turn";
}

const app = agent({ name: "interop-js-agent" })
  .onRequest(methods.agent.initialize, ({ params }) => {
    log(`initialize ${JSON.stringify(params)}`);
    clientCapabilities = params.clientCapabilities ?? null;
    const protocolVersion = Math.min(params.protocolVersion, PROTOCOL_VERSION);
    if (process.env.INTEROP_MINIMAL_INIT === "1") return { protocolVersion };
    return {
      protocolVersion,
      agentCapabilities: {
        loadSession: false,
        promptCapabilities: { image: true, audio: false, embeddedContext: true },
        mcpCapabilities: { http: true, sse: false },
        sessionCapabilities: {},
      },
      authMethods: [{ id: "token", name: "API token", description: "Uses INTEROP_TOKEN" }],
      agentInfo: { name: "interop-js-agent", title: "Interop JS agent", version: SDK_VERSION },
    };
  })
  .onRequest(methods.agent.authenticate, ({ params }) => {
    log(`authenticate ${params.methodId}`);
    return {};
  })
  .onRequest(methods.agent.session.new, ({ params }) => {
    const sessionId = `js-${++sessionCount}`;
    sessions.set(sessionId, { cwd: params.cwd, turn: null, mode: "code", model: "small" });
    log(`session/new ${JSON.stringify(params)}`);
    const session = sessions.get(sessionId);
    return { sessionId, modes: modesOf(session), configOptions: configOptionsOf(session) };
  })
  .onRequest(methods.agent.session.setMode, ({ params }) => {
    const session = sessionOf(params.sessionId);
    if (!MODES.some((m) => m.id === params.modeId)) {
      throw RequestError.invalidParams({ modeId: params.modeId }, "no such mode");
    }
    log(`session/set_mode ${params.sessionId} ${params.modeId}`);
    session.mode = params.modeId;
    return {};
  })
  .onRequest(methods.agent.session.setConfigOption, ({ params }) => {
    const session = sessionOf(params.sessionId);
    if (params.configId !== "model" || !MODELS.some((m) => m.value === params.value)) {
      throw RequestError.invalidParams(
        { configId: params.configId, value: params.value },
        "no such option or value",
      );
    }
    log(`session/set_config_option ${params.sessionId} ${params.configId} ${params.value}`);
    session.model = params.value;
    return { configOptions: configOptionsOf(session) };
  })
  .onRequest(methods.agent.session.prompt, async ({ params, client, signal }) => {
    const session = sessionOf(params.sessionId);
    const text = params.prompt
      .filter((block) => block.type === "text")
      .map((block) => block.text)
      .join("\n");
    log(`session/prompt ${JSON.stringify(params.prompt)}`);
    // The turn stops on session/cancel, and on $/cancel_request for this
    // request (which the SDK turns into an abort of `signal`).
    const controller = new AbortController();
    signal.addEventListener("abort", () => controller.abort(), { once: true });
    session.turn = controller;
    try {
      const stopReason = await turn(client, params.sessionId, text, controller.signal);
      if (signal.aborted) {
        log("stop request cancelled");
        throw RequestError.requestCancelled();
      }
      log(`stop ${stopReason}`);
      return { stopReason };
    } finally {
      session.turn = null;
    }
  })
  .onNotification(methods.agent.session.cancel, ({ params }) => {
    log(`session/cancel ${params.sessionId}`);
    sessions.get(params.sessionId)?.turn?.abort();
  });

// Imported (by remote-server.mjs, which serves `app` over the network),
// nothing more; run, it serves one client on stdio.
export { app };

if (import.meta.url === pathToFileURL(process.argv[1] ?? "").href) {
  const stream = ndJsonStream(Writable.toWeb(process.stdout), Readable.toWeb(process.stdin));
  const connection = app.connect(stream);
  await connection.closed;
  log("closed");
}
