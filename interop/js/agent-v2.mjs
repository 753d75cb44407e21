#!/usr/bin/env node
// An ACP protocol v2 agent built on the official TypeScript SDK's
// experimental v2 entry point (@agentclientprotocol/sdk/experimental/v2),
// used by crates/acp-interop to test our Rust v2 client side (and the
// v1 <-> v2 bridge, in front of it) against it.
//
// initialize: protocol version 2 only (the SDK answers a client asking for
// version 1 with -32022), info "interop-js-agent-v2", the baseline session
// capabilities ({}: new, list, resume, close, prompt, cancel).
//
// Behaviour of session/prompt (the prompt's text blocks joined with "\n"):
// the user message is inserted at once (a user_message update with id
// "<session>-user-N", then the answer with that id); the turn runs after
// the answer, in this order:
//
//   1. state_update running.
//   2. If the text contains "think": an agent_thought_chunk "thinking" of
//      message "<session>-thought-N".
//   3. The text is streamed back exactly, one agent_message_chunk of message
//      "<session>-agent-N" per word (each word keeps the whitespace after
//      it), then one chunk "\n".
//   4. If the text contains "permission": a tool_call_update creating the
//      pending tool call "call-1" (kind edit, title "Edit notes.txt", a diff
//      modifying /tmp/notes.txt with a Git patch), state requires_action, one
//      session/request_permission with subject that tool call, title
//      "Allow editing notes.txt?" and the options allow (allow_once) and
//      reject (reject_once); state running again; a tool_call_update to
//      completed (allowed) or failed, and the chunk
//      "permission: selected <optionId>\n" or "permission: cancelled\n".
//   5. If the text contains "plan": a plan_update of plan "plan-1" with the
//      entries "Read" (completed), "Change" (in_progress), "Test" (pending).
//   6. If the text contains "slow": the chunk "tick N\n" every 50 ms for up
//      to 30 s.
//   7. state_update idle with stop reason end_turn, or cancelled as soon as
//      a session/cancel or session/close for the session has arrived.
//
// session/close cancels the running turn and answers once its idle update
// is sent; session/resume replays the conversation (whole messages) with
// replayFrom {"type":"start"}, then sends the state (idle); session/list
// lists every session.
//
// Environment:
//   INTEROP_LOG=FILE  appends one line per event received, for the tests
//                     (e.g. "initialize {…}", "session/cancel js2-1",
//                     "permission {…}", "stop cancelled").
//
// Standard output carries the protocol; diagnostics go to standard error.

import { appendFileSync } from "node:fs";
import { Readable, Writable } from "node:stream";
import { agent, methods, ndJsonStream, PROTOCOL_VERSION, RequestError } from "@agentclientprotocol/sdk/experimental/v2";

const SDK_VERSION = "2.4.0";
const TICK_MS = 50;
const MAX_TICKS = 600;

const PATCH = [
  "diff --git a/tmp/notes.txt b/tmp/notes.txt",
  "--- a/tmp/notes.txt",
  "+++ b/tmp/notes.txt",
  "@@ -1,2 +1,2 @@",
  " keep",
  "-old line",
  "+new line",
  "",
].join("\n");

function log(line) {
  const file = process.env.INTEROP_LOG;
  if (file) appendFileSync(file, line + "\n");
}

/** Per session: its directory, its conversation, its turns (running or held). */
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

function sessionOf(sessionId) {
  const session = sessions.get(sessionId);
  if (!session) throw RequestError.resourceNotFound(sessionId);
  return session;
}

async function update(client, sessionId, update) {
  await client.notify(methods.client.session.update, { sessionId, update });
}

async function askPermission(client, sessionId, signal) {
  const toolCall = {
    toolCallId: "call-1",
    title: "Edit notes.txt",
    kind: "edit",
    status: "pending",
    content: [
      {
        type: "diff",
        changes: [{ operation: "modify", path: "/tmp/notes.txt", fileType: "text" }],
        patch: { format: "git_patch", text: PATCH },
      },
    ],
  };
  await update(client, sessionId, { sessionUpdate: "tool_call_update", ...toolCall });
  await update(client, sessionId, { sessionUpdate: "state_update", state: "requires_action" });
  let outcome;
  try {
    const answer = await client.request(
      methods.client.session.requestPermission,
      {
        sessionId,
        title: "Allow editing notes.txt?",
        description: "The agent wants to change one line.",
        subject: { type: "tool_call", toolCall },
        options: [
          { optionId: "allow", name: "Allow", kind: "allow_once" },
          { optionId: "reject", name: "Reject", kind: "reject_once" },
        ],
      },
      { cancellationSignal: signal, stopWaitingOnCancel: true },
    );
    outcome = answer.outcome;
  } catch (error) {
    log(`permission error ${error?.code}`);
    outcome = { outcome: "cancelled" };
  }
  log(`permission ${JSON.stringify(outcome)}`);
  await update(client, sessionId, { sessionUpdate: "state_update", state: "running" });
  const chosen = outcome.outcome === "selected" ? outcome.optionId : null;
  await update(client, sessionId, {
    sessionUpdate: "tool_call_update",
    toolCallId: "call-1",
    status: chosen === "allow" ? "completed" : "failed",
  });
  return chosen ? `permission: selected ${chosen}\n` : "permission: cancelled\n";
}

/** The turn of prompt number `n`, after its answer; returns the stop reason. */
async function turn(client, sessionId, session, n, text, signal) {
  const reply = `${sessionId}-agent-${n}`;
  let said = "";
  const say = async (words) => {
    said += words;
    await update(client, sessionId, {
      sessionUpdate: "agent_message_chunk",
      messageId: reply,
      content: { type: "text", text: words },
    });
  };
  try {
    await update(client, sessionId, { sessionUpdate: "state_update", state: "running" });
    if (text.includes("think")) {
      await update(client, sessionId, {
        sessionUpdate: "agent_thought_chunk",
        messageId: `${sessionId}-thought-${n}`,
        content: { type: "text", text: "thinking" },
      });
    }
    for (const word of text.match(/\S+\s*|\s+/g) ?? []) {
      if (signal.aborted) break;
      await say(word);
    }
    if (!signal.aborted) await say("\n");
    if (text.includes("permission") && !signal.aborted) await say(await askPermission(client, sessionId, signal));
    if (text.includes("plan") && !signal.aborted) {
      await update(client, sessionId, {
        sessionUpdate: "plan_update",
        plan: {
          type: "items",
          planId: "plan-1",
          entries: [
            { content: "Read", priority: "high", status: "completed" },
            { content: "Change", priority: "medium", status: "in_progress" },
            { content: "Test", priority: "low", status: "pending" },
          ],
        },
      });
    }
    if (text.includes("slow")) {
      for (let tick = 1; tick <= MAX_TICKS && !signal.aborted; tick++) {
        await say(`tick ${tick}\n`);
        await sleep(TICK_MS, signal);
      }
    }
  } finally {
    session.history.push({
      sessionUpdate: "agent_message",
      messageId: reply,
      content: [{ type: "text", text: said }],
    });
  }
  const stopReason = signal.aborted ? "cancelled" : "end_turn";
  await update(client, sessionId, { sessionUpdate: "state_update", state: "idle", stopReason });
  log(`stop ${stopReason}`);
  return stopReason;
}

const app = agent({ name: "interop-js-agent-v2" })
  .onRequest(methods.agent.initialize, ({ params }) => {
    log(`initialize ${JSON.stringify(params)}`);
    return {
      protocolVersion: PROTOCOL_VERSION,
      info: { name: "interop-js-agent-v2", title: "Interop JS agent (v2)", version: SDK_VERSION },
      capabilities: { session: {} },
    };
  })
  .onRequest(methods.agent.session.new, ({ params }) => {
    const sessionId = `js2-${++sessionCount}`;
    sessions.set(sessionId, { cwd: params.cwd, history: [], prompts: 0, controllers: new Set(), done: Promise.resolve() });
    log(`session/new ${JSON.stringify(params)}`);
    return { sessionId };
  })
  .onRequest(methods.agent.session.list, () => ({
    sessions: [...sessions].map(([sessionId, s]) => ({ sessionId, cwd: s.cwd })),
  }))
  .onRequest(methods.agent.session.prompt, ({ params, client }) => {
    const session = sessionOf(params.sessionId);
    const text = params.prompt
      .filter((block) => block.type === "text")
      .map((block) => block.text)
      .join("\n");
    log(`session/prompt ${JSON.stringify(params.prompt)}`);
    const n = ++session.prompts;
    const messageId = `${params.sessionId}-user-${n}`;
    const userMessage = { sessionUpdate: "user_message", messageId, content: params.prompt };
    // One turn at a time: a prompt sent while one runs is held, and inserted
    // (answered) when it ends, unless session/cancel or session/close
    // came first: then it is answered -32800 and never inserted.
    const controller = new AbortController();
    session.controllers.add(controller);
    const previous = session.done;
    const inserted = (async () => {
      await previous;
      if (controller.signal.aborted) {
        session.controllers.delete(controller);
        throw RequestError.requestCancelled();
      }
      session.history.push(userMessage);
      await update(client, params.sessionId, userMessage);
    })();
    session.done = inserted
      .then(() => turn(client, params.sessionId, session, n, text, controller.signal))
      .catch((error) => {
        if (error?.code !== -32800) process.stderr.write(`[agent-v2] turn failed: ${error?.stack ?? error}\n`);
      })
      .finally(() => session.controllers.delete(controller));
    return inserted.then(() => ({ messageId }));
  })
  .onNotification(methods.agent.session.cancel, ({ params }) => {
    log(`session/cancel ${params.sessionId}`);
    for (const controller of sessions.get(params.sessionId)?.controllers ?? []) controller.abort();
  })
  .onRequest(methods.agent.session.close, async ({ params }) => {
    log(`session/close ${params.sessionId}`);
    const session = sessions.get(params.sessionId);
    if (session) {
      for (const controller of session.controllers) controller.abort();
      await session.done;
    }
    return {};
  })
  .onRequest(methods.agent.session.resume, async ({ params, client }) => {
    const session = sessionOf(params.sessionId);
    log(`session/resume ${JSON.stringify(params)}`);
    if (params.replayFrom?.type === "start") {
      for (const message of session.history) await update(client, params.sessionId, message);
    } else if (params.replayFrom) {
      throw RequestError.invalidParams({ replayFrom: params.replayFrom }, "unknown replay cursor");
    }
    await update(client, params.sessionId, { sessionUpdate: "state_update", state: "idle" });
    return {};
  });

const stream = ndJsonStream(Writable.toWeb(process.stdout), Readable.toWeb(process.stdin));
const connection = app.connect(stream);
await connection.closed;
log("closed");
