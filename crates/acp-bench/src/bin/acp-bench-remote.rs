//! `acp-bench-remote`: W1 and W2 over a WebSocket vs stdio. See
//! `acp_bench::remote`.

fn main() -> std::process::ExitCode {
    acp_bench::remote::main()
}
