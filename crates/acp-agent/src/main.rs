//! The `acp-agent` binary: serves the agent over standard input and output.

use std::path::PathBuf;
use std::process::ExitCode;

const USAGE: &str = "acp-agent: a coding agent speaking the Agent Client Protocol over stdio.

Usage: acp-agent [--config PATH] [--data-dir DIR] [--help] [--version]
       acp-agent [--data-dir DIR] --check-store | --recover-store

Start it from an ACP client (an editor). Sessions are stored in DIR (default: the
user's data directory, e.g. ~/.local/share/acp-agent), in sessions.sqlite3.

  --check-store    check the session store thoroughly, print what was found and exit
                   (0: sound, 1: damaged)
  --recover-store  move the session store aside (it is kept, as a backup) and start a
                   fresh one holding every session that can still be read; run it while
                   no acp-agent uses DIR

Settings come from a TOML config file and from the environment, which overrides
the file. The file is PATH, by default {default}
(a missing default file is fine).

  file setting          environment variable
  openai.api_key        OPENAI_API_KEY                  key of an OpenAI-compatible API
  openai.base_url       OPENAI_BASE_URL                 its base URL (set alone: a local server)
  anthropic.api_key     ANTHROPIC_API_KEY               key of the Anthropic API
  anthropic.base_url    ANTHROPIC_BASE_URL              its base URL
  model                 ACP_AGENT_MODEL                 provider:model, e.g. openai:gpt-4.1
  models                (file only)                     models offered, e.g. [\"openai:gpt-4.1\", \"openai:o4-mini\"];
                                                        the first is the default when no model is set
  max_turn_requests     ACP_AGENT_MAX_TURN_REQUESTS     most model calls per prompt turn (default 50)
  max_output_tokens     ACP_AGENT_MAX_OUTPUT_TOKENS     output limit per Anthropic call (default 16000)
  thinking_budget       ACP_AGENT_THINKING_BUDGET       Anthropic extended thinking: tokens to think (off by default)
  images                ACP_AGENT_IMAGES                true or false (1 or 0): send images in prompts to the model
  context_window        ACP_AGENT_CONTEXT_WINDOW        context size reported to the client (default 128000)
  request_timeout_secs  ACP_AGENT_REQUEST_TIMEOUT_SECS  give up on a silent model after this long (default 300)
  max_retries           ACP_AGENT_MAX_RETRIES           retries of a model call that failed in a passing way
                                                        (429, 5xx, a broken stream; default 4, 0: none)
  compact_at_percent    ACP_AGENT_COMPACT_AT_PERCENT    summarise older turns when the conversation takes this
                                                        share of context_window (default 80, 0: never)

Example config.toml (keep a file holding API keys readable by you alone):
  model = \"openai:qwen3:8b\"
  [openai]
  base_url = \"http://localhost:11434/v1\"";

/// The usage text, naming the default config file.
fn usage() -> String {
    let default = acp_agent::config::ConfigFile::default_path().map_or_else(
        || "none without a home directory".to_string(),
        |p| p.display().to_string(),
    );
    USAGE.replace("{default}", &default)
}

/// Whether others than the owner may read the file at `path` (Unix only).
fn readable_by_others(path: &std::path::Path) -> bool {
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        std::fs::metadata(path).is_ok_and(|m| m.permissions().mode() & 0o044 != 0)
    }
    #[cfg(not(unix))]
    {
        let _ = path;
        false
    }
}

/// What the command line asks for besides serving.
#[derive(PartialEq)]
enum StoreCommand {
    Check,
    Recover,
}

/// Runs `--check-store` or `--recover-store` on the store in `dir`.
fn store_command(command: StoreCommand, dir: &std::path::Path) -> ExitCode {
    match command {
        StoreCommand::Check => {
            let report = acp_agent::store::recover::check(dir);
            println!("{report}");
            if report.is_ok() {
                ExitCode::SUCCESS
            } else {
                ExitCode::FAILURE
            }
        }
        StoreCommand::Recover => match acp_agent::store::recover::recover(dir) {
            Ok(report) => {
                println!("{report}");
                ExitCode::SUCCESS
            }
            Err(e) => {
                eprintln!("acp-agent: {e}");
                ExitCode::FAILURE
            }
        },
    }
}

fn main() -> ExitCode {
    // A terminal's supervisor is this program started again; it never returns.
    acp_host::supervise_if_requested();
    let mut data_dir: Option<PathBuf> = None;
    let mut config_path: Option<PathBuf> = None;
    let mut store_cmd: Option<StoreCommand> = None;
    let mut args = std::env::args().skip(1);
    while let Some(arg) = args.next() {
        let (name, inline) = match arg.split_once('=') {
            Some((name, value)) if name.starts_with("--") => (name, Some(value.to_string())),
            _ => (arg.as_str(), None),
        };
        match name {
            "-h" | "--help" if inline.is_none() => {
                println!("{}", usage());
                return ExitCode::SUCCESS;
            }
            "-V" | "--version" if inline.is_none() => {
                println!("acp-agent {}", env!("CARGO_PKG_VERSION"));
                return ExitCode::SUCCESS;
            }
            "--check-store" | "--recover-store" if inline.is_none() => {
                let cmd = if name == "--check-store" {
                    StoreCommand::Check
                } else {
                    StoreCommand::Recover
                };
                if store_cmd.as_ref().is_some_and(|c| *c != cmd) {
                    eprintln!(
                        "acp-agent: --check-store and --recover-store go alone\n\n{}",
                        usage()
                    );
                    return ExitCode::from(2);
                }
                store_cmd = Some(cmd);
            }
            "--data-dir" | "--config" => {
                let Some(value) = inline.or_else(|| args.next()).filter(|v| !v.is_empty()) else {
                    let what = if name == "--config" {
                        "a file"
                    } else {
                        "a directory"
                    };
                    eprintln!("acp-agent: {name} needs {what}\n\n{}", usage());
                    return ExitCode::from(2);
                };
                if name == "--config" {
                    config_path = Some(PathBuf::from(value));
                } else {
                    data_dir = Some(PathBuf::from(value));
                }
            }
            _ => {
                eprintln!("acp-agent: unknown argument {arg:?}\n\n{}", usage());
                return ExitCode::from(2);
            }
        }
    }
    let data_dir = data_dir.or_else(|| {
        directories::ProjectDirs::from("", "", "acp-agent").map(|d| d.data_dir().to_path_buf())
    });
    if let Some(cmd) = store_cmd {
        let Some(dir) = data_dir else {
            eprintln!("acp-agent: no data directory (set HOME or pass --data-dir)");
            return ExitCode::from(2);
        };
        return store_command(cmd, &dir);
    }
    // A file named on the command line must exist; the default one may not.
    let (config_path, required) = match config_path {
        Some(p) => (Some(p), true),
        None => (acp_agent::config::ConfigFile::default_path(), false),
    };
    let file = match config_path
        .as_deref()
        .map(|p| acp_agent::config::ConfigFile::load(p, required))
    {
        Some(Ok(file)) => file,
        Some(Err(e)) => {
            eprintln!("acp-agent: {e}");
            return ExitCode::FAILURE;
        }
        None => None,
    };
    if let Some(file) = &file
        && file.has_api_key()
        && readable_by_others(file.path())
    {
        eprintln!(
            "acp-agent: warning: {} holds API keys and other users can read it (chmod 600 it)",
            file.path().display()
        );
    }
    // The store is opened and checked on a thread of its own; a problem is
    // also the answer to every request that needs the store.
    let store = match data_dir.as_deref() {
        Some(dir) => acp_agent::store::Store::open(dir),
        None => {
            eprintln!(
                "acp-agent: no data directory (set HOME or pass --data-dir); sessions are kept in memory only"
            );
            acp_agent::store::Store::in_memory()
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
    let config = acp_agent::config::Config::load(file.as_ref());
    if let Err(msg) = &config.model {
        eprintln!("acp-agent: {msg}");
    }
    let checked = store.clone();
    runtime.spawn(async move {
        if let Err(e) = checked.health().await {
            eprintln!("acp-agent: {e} {}", e.advice());
        }
    });
    let kept = store.clone();
    let result = runtime.block_on(acp_agent::serve(acp::Transport::stdio(), config, store));
    // Closed cleanly, the store folds its log into its file.
    runtime.block_on(async {
        let _ = tokio::time::timeout(std::time::Duration::from_secs(5), kept.close()).await;
    });
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
