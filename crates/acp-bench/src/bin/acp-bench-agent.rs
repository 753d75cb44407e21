//! `acp-bench-agent`: the agent side of each benchmark run, started by
//! `acp-bench`. See `acp_bench::agent`.

fn main() -> std::process::ExitCode {
    acp_bench::agent::main()
}
