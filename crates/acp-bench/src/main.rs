//! `acp-bench`: the benchmark driver, and the client side of each run.
//! See the `acp_bench` library docs.

fn main() -> std::process::ExitCode {
    acp_bench::driver::main()
}
