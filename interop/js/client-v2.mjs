#!/usr/bin/env node
// An ACP protocol v2 client built on the official TypeScript SDK's
// experimental v2 entry point (@agentclientprotocol/sdk/experimental/v2),
// used by crates/acp-interop to test our Rust v2 agents (and the v1 <-> v2
// bridge) against it.
//
//   node client-v2.mjs [--prompt TEXT]... [--cwd DIR] [--cancel-after-chunks N]
//                      [--list] [--resume] -- PROGRAM [ARG...]
//
// It starts PROGRAM as the agent and initializes with protocol version 2
// (advertising form elicitation), then opens a session in DIR (default: the
// current directory) with the SDK's session helper (buildSession) and sends
// each TEXT (default "Hello") as one prompt, one after the other. For each
// prompt it prints to standard output the text of every agent_message_chunk
// as it arrives, then the line "STOP <stopReason>" (after a newline if the
// text did not end with one) when the session's idle state_update comes.
// The prompt's acknowledgement (the user message's id) must match a
// user_message update of the session; otherwise the line is
// "MISMATCH <ack id> <user message ids seen>".
//
// With --list, after the prompts: session/list, and one line per session
// "SESSION <sessionId> <cwd>". With --resume, after that: session/close,
// then session/resume with replayFrom {"type":"start"}, and one line per
// replayed message "REPLAY <sessionUpdate> <messageId> <text>", then
// "STATE <state> <stopReason or ->" for the snapshot that ends the replay,
// then "RESUMED".
//
// Permission requests are answered with the first option of kind
// allow_once or allow_always (cancelled when there is none); form
// elicitations are accepted with no content. With --cancel-after-chunks N,
// session/cancel is sent once N message chunks of the turn have arrived.
// Everything else (other updates, permission answers, the agent's info) is
// summarised on standard error, one line each: "[client] <what>".
//
// When a request fails with an error answer, the last line is
// "ERROR <code> <message>". Exit status: 0 when every step ended as above,
// 1 on any error.

import { spawn } from "node:child_process";
import { Readable, Writable } from "node:stream";
import { client, methods, ndJsonStream, PROTOCOL_VERSION, RequestError } from "@agentclientprotocol/sdk/experimental/v2";

const USAGE =
  "usage: client-v2.mjs [--prompt TEXT]... [--cwd DIR] [--cancel-after-chunks N] [--list] [--resume] -- PROGRAM [ARG...]";

function parseArgs(argv) {
  const options = { prompts: [], cwd: process.cwd(), cancelAfter: null, list: false, resume: false, command: [] };
  for (let i = 0; i < argv.length; i++) {
    const arg = argv[i];
    const value = () => {
      if (i + 1 >= argv.length) throw new Error(`${arg} needs a value\n${USAGE}`);
      return argv[++i];
    };
    if (arg === "--") {
      options.command = argv.slice(i + 1);
      break;
    } else if (arg === "--prompt") options.prompts.push(value());
    else if (arg === "--cwd") options.cwd = value();
    else if (arg === "--cancel-after-chunks") options.cancelAfter = Number(value());
    else if (arg === "--list") options.list = true;
    else if (arg === "--resume") options.resume = true;
    else throw new Error(`unexpected argument ${JSON.stringify(arg)}\n${USAGE}`);
  }
  if (options.command.length === 0) throw new Error(USAGE);
  if (options.prompts.length === 0) options.prompts.push("Hello");
  return options;
}

function note(line) {
  process.stderr.write(`[client] ${line}\n`);
}

/** The text of a content block, or a placeholder naming its type. */
function textOf(block) {
  return block?.type === "text" ? block.text : `<${block?.type}>`;
}

/** One line on standard error for an update the output does not show. */
function describe(update) {
  switch (update.sessionUpdate) {
    case "tool_call_update":
      return `tool_call_update ${update.toolCallId} ${update.status ?? ""} ${update.title ?? ""}`.trimEnd() +
        (update.content ?? [])
          .map((c) => (c.type === "diff" ? ` diff ${c.changes.map((ch) => `${ch.operation} ${ch.path}`).join(",")}` : ` ${c.type}`))
          .join("");
    case "plan_update":
      return `plan_update ${update.plan.type} ${(update.plan.entries ?? []).map((e) => `${e.content}:${e.status}`).join(",")}`;
    case "state_update":
      return `state_update ${update.state}`;
    case "user_message":
    case "agent_message":
    case "agent_thought":
      return `${update.sessionUpdate} ${update.messageId} ${(update.content ?? []).map(textOf).join("")}`;
    case "agent_thought_chunk":
      return `agent_thought_chunk ${update.messageId} ${textOf(update.content)}`;
    default:
      return update.sessionUpdate;
  }
}

async function main() {
  const options = parseArgs(process.argv.slice(2));
  const [program, ...args] = options.command;
  const child = spawn(program, args, { stdio: ["pipe", "pipe", "inherit"] });
  const exited = new Promise((resolve) => child.on("exit", (code, signal) => resolve({ code, signal })));
  await new Promise((resolve, reject) => {
    child.on("spawn", resolve);
    child.on("error", reject);
  });

  let printed = "";
  const print = (text) => {
    printed += text;
    process.stdout.write(text);
  };
  const endLine = () => {
    if (printed.length > 0 && !printed.endsWith("\n")) print("\n");
  };

  const app = client({ name: "interop-js-client-v2" })
    .onRequest(methods.client.session.requestPermission, ({ params }) => {
      const allow = params.options.find((o) => o.kind === "allow_once" || o.kind === "allow_always");
      const subject = params.subject?.type === "tool_call" ? ` ${params.subject.toolCall.toolCallId}` : "";
      note(`permission "${params.title}"${subject}: ${allow ? allow.optionId : "cancelled"}`);
      return { outcome: allow ? { outcome: "selected", optionId: allow.optionId } : { outcome: "cancelled" } };
    })
    .onRequest(methods.client.elicitation.create, ({ params }) => {
      note(`elicitation (${params.mode}) ${JSON.stringify(params.message)}`);
      return { action: "accept", content: {} };
    });

  const stream = ndJsonStream(Writable.toWeb(child.stdin), Readable.toWeb(child.stdout));
  const outcome = await app.connectWith(stream, async (agent) => {
    try {
      const init = await agent.request(methods.agent.initialize, {
        protocolVersion: PROTOCOL_VERSION,
        info: { name: "interop-js-client-v2", version: "0.0.0" },
        capabilities: { elicitation: { form: {} } },
      });
      note(`agent speaks protocol ${init.protocolVersion}; info ${JSON.stringify(init.info)}; capabilities ${JSON.stringify(init.capabilities)}`);
      if (init.protocolVersion !== PROTOCOL_VERSION) {
        throw new Error(`the agent answered protocol version ${init.protocolVersion}`);
      }

      const session = await agent.buildSession(options.cwd).start();
      note(`session ${session.sessionId}`);

      for (const text of options.prompts) {
        const userMessages = [];
        let chunks = 0;
        let cancelSent = false;
        // The answer comes once the message is inserted; the updates come
        // on their own: read them until idle, then take the answer.
        const ack = session.prompt(text);
        ack.catch(() => {});
        let stopReason;
        for (;;) {
          const message = await session.nextUpdate();
          if (message.kind === "stop") {
            stopReason = message.stopReason ?? "-";
            break;
          }
          const { update } = message;
          if (update.sessionUpdate === "agent_message_chunk") {
            print(textOf(update.content));
            chunks++;
            if (options.cancelAfter != null && chunks >= options.cancelAfter && !cancelSent) {
              cancelSent = true;
              note("sending session/cancel");
              await agent.notify(methods.agent.session.cancel, { sessionId: session.sessionId });
            }
          } else {
            if (update.sessionUpdate === "user_message") userMessages.push(update.messageId);
            note(describe(update));
          }
        }
        const { messageId } = await ack;
        note(`prompt acknowledged: ${messageId}`);
        endLine();
        if (!userMessages.includes(messageId)) {
          print(`MISMATCH ${messageId} ${userMessages.join(",") || "-"}\n`);
        }
        print(`STOP ${stopReason}\n`);
      }

      if (options.list) {
        const listed = await agent.request(methods.agent.session.list, {});
        for (const info of listed.sessions) print(`SESSION ${info.sessionId} ${info.cwd}\n`);
      }

      if (options.resume) {
        await agent.request(methods.agent.session.close, { sessionId: session.sessionId });
        note("closed");
        const resumed = agent.request(methods.agent.session.resume, {
          sessionId: session.sessionId,
          cwd: options.cwd,
          replayFrom: { type: "start" },
        });
        resumed.catch(() => {});
        for (;;) {
          const message = await session.nextUpdate();
          const { update } = message;
          if (update.sessionUpdate === "state_update") {
            print(`STATE ${update.state} ${update.stopReason ?? "-"}\n`);
            if (update.state !== "running") break;
            continue;
          }
          if (message.kind === "stop") break;
          if ("messageId" in update && Array.isArray(update.content)) {
            print(`REPLAY ${update.sessionUpdate} ${update.messageId} ${update.content.map(textOf).join("")}\n`);
          } else {
            note(`replayed ${describe(update)}`);
          }
        }
        await resumed;
        print("RESUMED\n");
      }
      session.dispose();
      return {};
    } catch (error) {
      if (error instanceof RequestError) return { error };
      throw error;
    }
  });

  if (outcome.error) {
    endLine();
    print(`ERROR ${outcome.error.code} ${outcome.error.message}\n`);
    if (outcome.error.data !== undefined) note(`error data ${JSON.stringify(outcome.error.data)}`);
  }

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
