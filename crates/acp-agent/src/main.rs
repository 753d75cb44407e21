//! The `acp-agent` binary: serves the agent over standard input and output.

use std::path::PathBuf;
use std::process::ExitCode;

const USAGE: &str = "acp-agent: a coding agent speaking the Agent Client Protocol over stdio.

Usage: acp-agent [--data-dir DIR] [--help] [--version]

Start it from an ACP client (an editor). Sessions are stored in DIR (default: the
user's data directory, e.g. ~/.local/share/acp-agent).

Configuration is read from the environment:
  OPENAI_API_KEY, OPENAI_BASE_URL       an OpenAI-compatible API (a base URL alone: a local server)
  ANTHROPIC_API_KEY, ANTHROPIC_BASE_URL the Anthropic API
  ACP_AGENT_MODEL                       provider:model, e.g. openai:gpt-4.1
  ACP_AGENT_MAX_TURN_REQUESTS           most model calls per prompt turn (default 50)
  ACP_AGENT_MAX_OUTPUT_TOKENS           output limit per Anthropic call (default 16000)
  ACP_AGENT_IMAGES                      1 or 0: send images in prompts to the model
  ACP_AGENT_CONTEXT_WINDOW              context size reported to the client (default 128000)
  ACP_AGENT_REQUEST_TIMEOUT_SECS        give up on a silent model after this long (default 300)";

fn main() -> ExitCode {
    let mut data_dir: Option<PathBuf> = None;
    let mut args = std::env::args().skip(1);
    while let Some(arg) = args.next() {
        match arg.as_str() {
            "-h" | "--help" => {
                println!("{USAGE}");
                return ExitCode::SUCCESS;
            }
            "-V" | "--version" => {
                println!("acp-agent {}", env!("CARGO_PKG_VERSION"));
                return ExitCode::SUCCESS;
            }
            "--data-dir" => match args.next() {
                Some(d) => data_dir = Some(PathBuf::from(d)),
                None => {
                    eprintln!("acp-agent: --data-dir needs a directory\n\n{USAGE}");
                    return ExitCode::from(2);
                }
            },
            other => match other.strip_prefix("--data-dir=") {
                Some(d) => data_dir = Some(PathBuf::from(d)),
                None => {
                    eprintln!("acp-agent: unknown argument {other:?}\n\n{USAGE}");
                    return ExitCode::from(2);
                }
            },
        }
    }
    let data_dir = data_dir.or_else(|| {
        directories::ProjectDirs::from("", "", "acp-agent").map(|d| d.data_dir().to_path_buf())
    });
    let store = match data_dir.as_deref().map(acp_agent::store::Store::open) {
        Some(Ok(store)) => store,
        other => {
            match other {
                Some(Err(e)) => eprintln!("acp-agent: {e}; sessions will not be kept"),
                _ => eprintln!(
                    "acp-agent: no data directory (set HOME or pass --data-dir); sessions will not be kept"
                ),
            }
            match acp_agent::store::Store::in_memory() {
                Ok(s) => s,
                Err(e) => {
                    eprintln!("acp-agent: {e}");
                    return ExitCode::FAILURE;
                }
            }
        }
    };
    let runtime = match tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
    {
        Ok(r) => r,
        Err(e) => {
            eprintln!("acp-agent: could not start the async runtime: {e}");
            return ExitCode::FAILURE;
        }
    };
    let config = acp_agent::config::Config::from_env();
    if let Err(msg) = &config.model {
        eprintln!("acp-agent: {msg}");
    }
    let result = runtime.block_on(acp_agent::serve(acp::Transport::stdio(), config, store));
    let code = match result {
        Ok(()) => 0,
        Err(e) => {
            eprintln!("acp-agent: connection error: {e}");
            1
        }
    };
    // Standard input is read on a thread that cannot be interrupted: exit now
    // rather than waiting for it.
    std::process::exit(code);
}
