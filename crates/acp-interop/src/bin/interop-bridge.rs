//! The v1 ↔ v2 bridge of crate `acp` as a program, for `tests/it/v2.rs`:
//!
//! ```text
//! interop-bridge AGENT [ARG…]
//! ```
//!
//! serves a client (of either protocol version) on standard input and output
//! and starts `AGENT` (of either version) behind it, translating when their
//! versions differ (`acp::bridge`). The route taken goes to standard error as
//! one line, `interop-bridge: client v<N>, agent v<M>, translated|piped`,
//! which the tests read. (The CLI's `acp bridge` will be the product form of
//! this; these few lines are all it takes.)

use std::process::ExitCode;

use acp::AgentCommand;
use acp::bridge::Bridge;

#[tokio::main]
async fn main() -> ExitCode {
    let mut args = std::env::args_os().skip(1);
    let Some(program) = args.next() else {
        eprintln!("usage: interop-bridge AGENT [ARG…]");
        return ExitCode::from(2);
    };
    let agent = AgentCommand::new(program).args(args);
    match Bridge::new(agent).serve_stdio().await {
        Ok(route) => {
            let how = if route.translated() {
                "translated"
            } else {
                "piped"
            };
            eprintln!(
                "interop-bridge: client v{}, agent v{}, {how}",
                route.client, route.agent
            );
            ExitCode::SUCCESS
        }
        Err(e) => {
            eprintln!("interop-bridge: {e}");
            ExitCode::FAILURE
        }
    }
}
