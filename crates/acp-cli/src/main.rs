//! The `acp` command. See the `acp_cli` library for the logic.

use std::process::ExitCode;

fn main() -> ExitCode {
    // A terminal's supervisor is this program started again; it never returns.
    acp_host::supervise_if_requested();
    let cli = acp_cli::cli::Cli::from_env();
    let runtime = match tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
    {
        Ok(runtime) => runtime,
        Err(e) => {
            eprintln!("acp: cannot start the async runtime: {e}");
            return ExitCode::from(acp_cli::exit::AGENT_ERROR);
        }
    };
    let code = match runtime.block_on(acp_cli::run(cli)) {
        Ok(code) => code,
        Err(failure) => {
            eprintln!("acp: {}", failure.message);
            failure.code
        }
    };
    // Background tasks (terminal readers, the connection) are not waited for.
    runtime.shutdown_timeout(std::time::Duration::from_millis(100));
    ExitCode::from(code)
}
