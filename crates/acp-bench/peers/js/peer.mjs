#!/usr/bin/env node
// The acp-bench workloads on the official TypeScript SDK
// (@agentclientprotocol/sdk): its client drives its agent over the pipes of a
// child process, as acp-bench does with the Rust runtime.
//
//   node peer.mjs client "W1 count=200000 bytes=40 update=0"
//   node peer.mjs agent        (started by the client, on stdio)
//
// The client prints one JSON line: the timed window (the prompt turn), the
// bytes on the wire, its own CPU time and peak RSS, the agent's (which the
// agent writes to standard error as it exits), what its handlers counted,
// and the agent's findings from the prompt response's `_meta`. acp-bench
// checks the counts with the same code as for its own rows.

import { spawn } from "node:child_process";
import { Readable, Writable } from "node:stream";
import { fileURLToPath } from "node:url";
import { agent, client, methods, ndJsonStream, PROTOCOL_VERSION } from "@agentclientprotocol/sdk";

const SESSION_ID = "bench-1";
const READ_PATH = "/bench/read.txt";
const WRITE_PATH = "/bench/write.txt";
const AGENT_STATS = "acp-bench-peer-agent:";
// The SDK refuses lines over 32 MiB by default; W4 sends one of 50 MiB. Both
// sides get the limit the Rust runtime has by default (64 MiB).
const STREAM_OPTIONS = { maxMessageBytes: 64 * 1024 * 1024 };

function parseSpec(text) {
  const [id, ...words] = text.trim().split(/\s+/);
  const workload = { W1: "stream", W2: "rpc", W3: "concurrent", W4: "large" }[id];
  if (!workload) throw new Error(`no workload in ${JSON.stringify(text)}`);
  const spec = { workload, count: 0, bytes: 0, update: 0 };
  for (const word of words) {
    const [key, value] = word.split("=");
    if (!(key in spec) || key === "workload" || !/^\d+$/.test(value ?? "")) {
      throw new Error(`bad word ${JSON.stringify(word)}`);
    }
    spec[key] = Number(value);
  }
  return spec;
}

/** `len` bytes of the same ASCII text acp-bench sends. */
function text(len) {
  const pattern = "the quick brown fox jumps over the lazy dog ";
  return pattern.repeat(Math.ceil(len / pattern.length)).slice(0, len);
}

function cpuNs() {
  const usage = process.resourceUsage();
  return (usage.userCPUTime + usage.systemCPUTime) * 1000;
}

// ---------------------------------------------------------------------------
// The agent.

async function runWorkload(peer, sessionId, spec) {
  let done = 0;
  let bad = 0;
  const meta = {};
  if (spec.workload === "stream") {
    const chunk = text(spec.bytes);
    for (let i = 0; i < spec.count; i++) {
      await peer.notify(methods.client.session.update, {
        sessionId,
        update: { sessionUpdate: "agent_message_chunk", content: { type: "text", text: chunk } },
      });
      done++;
    }
  } else if (spec.workload === "rpc") {
    const latencies = new Array(spec.count);
    for (let i = 0; i < spec.count; i++) {
      const started = process.hrtime.bigint();
      const reply = await peer.request(methods.client.fs.readTextFile, { sessionId, path: READ_PATH });
      latencies[i] = Number(process.hrtime.bigint() - started);
      done++;
      if (reply.content.length !== spec.bytes) bad++;
    }
    latencies.sort((a, b) => a - b);
    const at = (q) => latencies[Math.min(Math.max(Math.ceil(latencies.length * q), 1), latencies.length) - 1];
    if (latencies.length > 0) {
      meta.p50_ns = at(0.5);
      meta.p99_ns = at(0.99);
    }
  } else if (spec.workload === "concurrent") {
    const requests = [];
    for (let i = 0; i < spec.count; i++) {
      requests.push(peer.request(methods.client.fs.readTextFile, { sessionId, path: READ_PATH }));
    }
    for (const reply of await Promise.all(requests)) {
      done++;
      if (reply.content.length !== spec.bytes) bad++;
    }
  } else {
    await peer.request(methods.client.fs.writeTextFile, { sessionId, path: WRITE_PATH, content: text(spec.bytes) });
    await peer.notify(methods.client.session.update, {
      sessionId,
      update: { sessionUpdate: "agent_message_chunk", content: { type: "text", text: text(spec.update) } },
    });
    done = 2;
  }
  return { done, bad, ...meta };
}

async function runAgent() {
  const app = agent({ name: "acp-bench-js-agent" })
    .onRequest(methods.agent.initialize, () => ({ protocolVersion: PROTOCOL_VERSION }))
    .onRequest(methods.agent.session.new, () => ({ sessionId: SESSION_ID }))
    .onRequest(methods.agent.session.prompt, async ({ params, client: peer }) => {
      const first = params.prompt[0];
      if (first?.type !== "text") throw new Error("the prompt has no text");
      const findings = await runWorkload(peer, params.sessionId, parseSpec(first.text));
      return { stopReason: "end_turn", _meta: findings };
    });
  const stream = ndJsonStream(Writable.toWeb(process.stdout), Readable.toWeb(process.stdin), STREAM_OPTIONS);
  const connection = app.connect(stream);
  await connection.closed;
}

// ---------------------------------------------------------------------------
// The client.

/** A pass-through stream that counts the bytes it carries into `counter.bytes`. */
function counting(counter) {
  return new TransformStream({
    transform(chunk, controller) {
      counter.bytes += chunk.byteLength;
      controller.enqueue(chunk);
    },
  });
}

async function runClient(specText) {
  const spec = parseSpec(specText);
  const child = spawn(process.execPath, [fileURLToPath(import.meta.url), "agent"], {
    stdio: ["pipe", "pipe", "pipe"],
  });
  const exited = new Promise((resolve) => child.on("exit", (code, signal) => resolve({ code, signal })));
  await new Promise((resolve, reject) => {
    child.on("spawn", resolve);
    child.on("error", reject);
  });
  let agentStats = null;
  let stderr = "";
  child.stderr.setEncoding("utf8");
  child.stderr.on("data", (data) => {
    stderr += data;
    let newline;
    while ((newline = stderr.indexOf("\n")) >= 0) {
      const line = stderr.slice(0, newline);
      stderr = stderr.slice(newline + 1);
      if (line.startsWith(AGENT_STATS)) agentStats = line.slice(AGENT_STATS.length).trim();
      else process.stderr.write(`[agent] ${line}\n`);
    }
  });

  const wire = { bytes: 0 };
  const outgoing = counting(wire);
  void outgoing.readable.pipeTo(Writable.toWeb(child.stdin)).catch(() => {});
  const incoming = Readable.toWeb(child.stdout).pipeThrough(counting(wire));

  const tally = { chunks: 0, chunk_bytes: 0, reads: 0, writes: 0, bad: 0 };
  const file = spec.workload === "rpc" || spec.workload === "concurrent" ? text(spec.bytes) : "";
  const app = client({ name: "acp-bench-js-client" })
    .onNotification(methods.client.session.update, ({ params }) => {
      const { update } = params;
      if (update.sessionUpdate === "agent_message_chunk") {
        tally.chunks++;
        tally.chunk_bytes += update.content.type === "text" ? update.content.text.length : 0;
      } else {
        tally.bad++;
      }
    })
    .onRequest(methods.client.fs.readTextFile, () => {
      tally.reads++;
      return { content: file };
    })
    .onRequest(methods.client.fs.writeTextFile, ({ params }) => {
      tally.writes++;
      if (params.content.length !== spec.bytes) tally.bad++;
      return {};
    });

  const stream = ndJsonStream(outgoing.writable, incoming, STREAM_OPTIONS);
  const turn = await app.connectWith(stream, async (peer) => {
    await peer.request(methods.agent.initialize, {
      protocolVersion: PROTOCOL_VERSION,
      clientCapabilities: { fs: { readTextFile: true, writeTextFile: true } },
    });
    const session = await peer.request(methods.agent.session.new, { cwd: "/", mcpServers: [] });
    const before = wire.bytes;
    const started = process.hrtime.bigint();
    const reply = await peer.request(methods.agent.session.prompt, {
      sessionId: session.sessionId,
      prompt: [{ type: "text", text: specText }],
    });
    // Notifications that arrived before the reply may still be in the SDK's
    // dispatch (a chain of promise jobs): the turn ends once they are handled.
    await new Promise((resolve) => setImmediate(resolve));
    const wallNs = Number(process.hrtime.bigint() - started);
    return { wallNs, wireBytes: wire.bytes - before, findings: reply._meta ?? null };
  });

  child.stdin.end();
  const status = await exited;
  if (status.code !== 0) throw new Error(`the agent exited with ${JSON.stringify(status)}`);
  if (agentStats === null) throw new Error("the agent did not report its CPU time and RSS");
  const stat = (key) => {
    const word = agentStats.split(/\s+/).find((w) => w.startsWith(`${key}=`));
    return word ? Number(word.slice(key.length + 1)) : 0;
  };
  process.stdout.write(
    JSON.stringify({
      wall_ns: turn.wallNs,
      wire_bytes: turn.wireBytes,
      client_cpu_ns: cpuNs(),
      client_rss_kib: process.resourceUsage().maxRSS,
      agent_cpu_ns: stat("cpu_ns"),
      agent_rss_kib: stat("rss_kib"),
      ...tally,
      findings: turn.findings,
    }) + "\n",
  );
}

const [mode, specText] = process.argv.slice(2);
if (mode === "agent") {
  try {
    await runAgent();
  } finally {
    process.stderr.write(`${AGENT_STATS} cpu_ns=${cpuNs()} rss_kib=${process.resourceUsage().maxRSS}\n`);
  }
} else if (mode === "client" && specText) {
  await runClient(specText);
  process.exit(0);
} else {
  process.stderr.write("usage: peer.mjs agent | client SPEC\n");
  process.exit(2);
}
