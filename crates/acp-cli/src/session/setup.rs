//! The setup of a session, from the options: its directories, how
//! permission requests are answered, and the sandbox of the agent's
//! commands.

use crate::cli::SessionArgs;
use crate::exit::Failure;
use crate::host::ClientSettings;
use crate::host::permission::PermissionPolicy;
use acp_host::{Files, Roots, Sandbox, Support, TerminalSettings};
use std::path::PathBuf;
use std::time::Duration;

/// Directories, permission policy and sandbox of a session, from the
/// options.
pub(crate) struct Setup {
    /// The session's working directory (absolute).
    pub cwd: PathBuf,
    /// The `--add-dir` directories (absolute).
    pub add_dirs: Vec<PathBuf>,
    /// How permission requests are answered.
    pub policy: PermissionPolicy,
    /// The session's directories (confined unless `--allow-outside-cwd`).
    pub roots: Roots,
    /// The sandbox of the agent's commands.
    pub sandbox: Sandbox,
    /// What the sandbox does, in a line for the banner and `--verbose`.
    pub sandbox_state: String,
    /// Whether a person is at a terminal to answer questions (chat, or
    /// exec with a terminal on standard input): a login the agent needs
    /// can then be run right away.
    pub interactive: bool,
    /// `--timeout`.
    pub timeout: Option<Duration>,
    /// `--protocol` (else the agent's config entry says, else 1).
    pub protocol: Option<u8>,
}

impl Setup {
    /// Checks the options; `default_policy` applies without a policy flag.
    pub fn new(args: &SessionArgs, default_policy: PermissionPolicy) -> Result<Self, Failure> {
        let cwd = match &args.cwd {
            Some(dir) => std::path::absolute(dir),
            None => std::env::current_dir(),
        }
        .map_err(|e| Failure::usage(format!("cannot determine the working directory: {e}")))?;
        if !cwd.is_dir() {
            return Err(Failure::usage(format!(
                "--cwd {} is not a directory",
                cwd.display()
            )));
        }
        let add_dirs: Vec<PathBuf> = args
            .add_dirs
            .iter()
            .map(std::path::absolute)
            .collect::<Result<_, _>>()
            .map_err(|e| Failure::usage(format!("bad --add-dir: {e}")))?;
        let roots = Roots::new(std::iter::once(&cwd).chain(&add_dirs))
            .map_err(|e| Failure::usage(format!("bad session directory: {e}")))?
            .confined(!args.allow_outside_cwd);
        let policy = if args.approve_all {
            PermissionPolicy::ApproveAll
        } else if args.approve_reads {
            PermissionPolicy::ApproveReads
        } else if args.deny_all {
            PermissionPolicy::DenyAll
        } else {
            default_policy
        };
        let runs = matches!(policy, PermissionPolicy::ApproveAll | PermissionPolicy::Ask);
        let (sandbox, sandbox_state) = choose_sandbox(args, &roots, runs)?;
        Ok(Setup {
            cwd,
            add_dirs,
            policy,
            roots,
            sandbox,
            sandbox_state,
            interactive: false,
            timeout: args.timeout,
            protocol: args.protocol,
        })
    }

    /// The client settings; `interactive` for `acp chat`.
    pub fn settings(&self, interactive: bool) -> ClientSettings {
        ClientSettings {
            policy: self.policy,
            files: Files::new(self.roots.clone()).max_message_size(super::message_limit()),
            terminal: TerminalSettings::new(self.roots.clone())
                .sandbox(self.sandbox.clone())
                .max_message_size(super::message_limit()),
            protected: crate::config::paths::default_config_path()
                .and_then(|p| p.parent().map(std::path::Path::to_path_buf))
                .into_iter()
                .collect(),
            interactive,
        }
    }

    /// The policy in a line for the banner and `--verbose`.
    pub fn policy_state(&self) -> &'static str {
        match self.policy {
            PermissionPolicy::ApproveAll => {
                "permissions: --approve-all: the agent may write files and run commands \
                 (files of .git and acp's config need a permission naming them)"
            }
            PermissionPolicy::Ask => {
                "permissions: ask: writes and commands need a permission granted this turn, \
                 else you are asked"
            }
            PermissionPolicy::ApproveReads => {
                "permissions: --approve-reads: reads only; nothing is written, no command runs"
            }
            PermissionPolicy::DenyAll => {
                "permissions: --deny-all: nothing is written, no command runs"
            }
        }
    }
}

/// The sandbox the options and the kernel give, and a line saying so.
/// Where the kernel cannot sandbox, says so once on stderr and carries on;
/// `--no-network` there is an error (it cannot be kept).
fn choose_sandbox(
    args: &SessionArgs,
    roots: &Roots,
    runs: bool,
) -> Result<(Sandbox, String), Failure> {
    if !runs {
        return Ok((
            Sandbox::off(),
            "sandbox: not needed (no command runs)".into(),
        ));
    }
    if args.no_sandbox {
        return Ok((
            Sandbox::off(),
            "sandbox: off (--no-sandbox): commands run with your rights".into(),
        ));
    }
    let support = acp_host::sandbox_support();
    match &support {
        Support::Landlock { network, .. } => {
            if args.no_network && !network {
                return Err(Failure::usage(format!(
                    "--no-network needs Landlock ABI 4 or later; this kernel has {support}"
                )));
            }
            let sandbox =
                Sandbox::for_roots(roots.dirs().iter().cloned()).no_network(args.no_network);
            let places: Vec<String> = sandbox
                .writable
                .iter()
                .map(|d| d.display().to_string())
                .collect();
            let net = if args.no_network { ", no network" } else { "" };
            Ok((
                sandbox,
                format!(
                    "sandbox: on ({support}): commands may write only in {}{net}",
                    places.join(", ")
                ),
            ))
        }
        _ => {
            if args.no_network {
                return Err(Failure::usage(format!(
                    "--no-network needs the sandbox, which is unavailable: {support}"
                )));
            }
            eprintln!(
                "acp: the agent's commands cannot be sandboxed here ({support}); they run with \
                 your rights (--no-sandbox silences this)"
            );
            Ok((
                Sandbox::off(),
                format!("sandbox: unavailable ({support}): commands run with your rights"),
            ))
        }
    }
}
