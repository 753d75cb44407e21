#!/usr/bin/env node
// The agent of agent.mjs served over the network by the official TypeScript
// SDK's AcpServer (Streamable HTTP and WebSocket on /acp), used by
// crates/acp-interop to test our Rust client transports against it.
//
//   node remote-server.mjs
//
// Listens on 127.0.0.1 on a free port and prints "listening PORT" on
// standard output. Each connection gets the same agent app (so sessions are
// numbered js-1, js-2, … across connections). Exits when standard input
// closes, so the test that started it never leaves it behind.

import http from "node:http";
import { WebSocketServer } from "ws";
import { AcpServer } from "@agentclientprotocol/sdk/experimental/server";
import {
  createNodeHttpHandler,
  createNodeWebSocketUpgradeHandler,
} from "@agentclientprotocol/sdk/experimental/node";
import { app } from "./agent.mjs";

const server = new AcpServer({ agent: app });
const handle = createNodeHttpHandler(server);
const sockets = new WebSocketServer({ noServer: true });
const upgrade = createNodeWebSocketUpgradeHandler(server, sockets);

const onAcp = (req) => new URL(req.url ?? "/", "http://localhost").pathname === "/acp";

const httpServer = http.createServer((req, res) => {
  if (!onAcp(req)) {
    res.statusCode = 404;
    res.end("Not Found\n");
    return;
  }
  handle(req, res);
});
httpServer.on("upgrade", (req, socket, head) => {
  if (!onAcp(req)) {
    socket.destroy();
    return;
  }
  upgrade(req, socket, head);
});
httpServer.listen(0, "127.0.0.1", () => {
  process.stdout.write(`listening ${httpServer.address().port}\n`);
});

process.stdin.resume();
process.stdin.on("end", async () => {
  await server.close();
  process.exit(0);
});
