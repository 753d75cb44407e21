//! `acp connect URL`, and agents given by URL: a local stdio agent that
//! forwards every line to a remote ACP endpoint and back.
//!
//! An editor that starts agents as subprocesses (Zed's `agent_servers`,
//! JetBrains) runs `acp connect wss://host:8765/acp` as its agent; `acp exec`
//! and `acp chat` do the same for `--agent ws://…`, so a remote agent is
//! started, watched and stopped like any other. When the connection fails,
//! the reason goes to standard error and the program exits with status 1,
//! which the editor shows as the agent's failure.

use crate::cli::RemoteArgs;
use crate::config::ChosenAgent;
use crate::exit::{self, Failure};
use acp::remote::ClientOptions;
use acp::{AgentCommand, Transport};
use tokio::io::{AsyncWriteExt, copy};

/// The agent for `--agent URL`: this executable's `acp connect URL`, with
/// the remote options passed on.
pub fn mirror_agent(url: &str, remote: &RemoteArgs) -> Result<ChosenAgent, Failure> {
    // Fails early, here, on a bad token file or header rather than in the
    // child.
    remote_options(remote)?;
    let exe = std::env::current_exe()
        .map_err(|e| Failure::agent(format!("cannot find the acp executable: {e}")))?;
    let mut command = AgentCommand::new(exe).arg("connect").arg(url);
    for header in &remote.headers {
        command = command.arg("--header").arg(header);
    }
    if let Some(var) = &remote.token_env {
        command = command.arg("--token-env").arg(var);
    }
    if let Some(file) = &remote.token_file {
        command = command.arg("--token-file").arg(file);
    }
    if let Some(file) = &remote.ca_cert {
        command = command.arg("--ca-cert").arg(file);
    }
    Ok(ChosenAgent {
        command,
        label: url.to_owned(),
        flag: format!("--agent {}", crate::session::auth::shell_quote(url)),
        defaults: crate::config::AgentDefaults::default(),
    })
}

/// The client options the remote arguments ask for.
pub fn remote_options(remote: &RemoteArgs) -> Result<ClientOptions, Failure> {
    let mut options = ClientOptions::default();
    for header in &remote.headers {
        let Some((name, value)) = header.split_once(':') else {
            return Err(Failure::usage(format!(
                "bad --header {header:?}: write it as \"Name: value\""
            )));
        };
        options = options.header(name.trim(), value.trim());
    }
    let token = match (&remote.token_env, &remote.token_file) {
        (Some(var), _) => Some(std::env::var(var).map_err(|_| {
            Failure::usage(format!(
                "--token-env {var}: the environment variable is not set"
            ))
        })?),
        (None, Some(file)) => Some(read_token(file)?),
        (None, None) => None,
    };
    if let Some(token) = token {
        options = options.bearer_token(token.trim());
    }
    if let Some(file) = &remote.ca_cert {
        for cert in acp::remote::tls::load_certificates(file)
            .map_err(|e| Failure::usage(format!("--ca-cert: {e}")))?
        {
            options = options.root_certificate(cert);
        }
    }
    Ok(options)
}

/// A token from a file: its content without surrounding whitespace, never
/// empty.
pub fn read_token(file: &std::path::Path) -> Result<String, Failure> {
    let text = std::fs::read_to_string(file).map_err(|e| {
        Failure::usage(format!(
            "cannot read the token file {}: {e}",
            file.display()
        ))
    })?;
    let token = text.trim();
    if token.is_empty() {
        return Err(Failure::usage(format!(
            "the token file {} is empty",
            file.display()
        )));
    }
    Ok(token.to_owned())
}

/// `acp connect URL`: forwards standard input to the remote agent and its
/// messages to standard output until either side ends.
pub async fn run(url: &str, remote: &RemoteArgs) -> Result<u8, Failure> {
    let options = remote_options(remote)?;
    let transport = acp::remote::connect(url, options)
        .await
        .map_err(|e| Failure::agent(format!("cannot connect to {url}: {e}")))?;
    let (mut from_remote, mut to_remote) = transport.into_parts();
    let (mut stdin, mut stdout) = Transport::stdio().into_parts();
    let upstream = async {
        let copied = copy(&mut stdin, &mut to_remote).await;
        // The editor closed our input: end the remote connection too.
        let _ = to_remote.shutdown().await;
        copied
    };
    let downstream = async {
        let copied = copy(&mut from_remote, &mut stdout).await;
        let _ = stdout.flush().await;
        copied
    };
    tokio::pin!(upstream, downstream);
    // The remote side ending ends the run; the editor ending our input
    // lets what the remote still sends through, until it closes too.
    let result = tokio::select! {
        result = &mut downstream => result,
        _ = &mut upstream => downstream.await,
    };
    match result {
        Ok(_) => Ok(exit::OK),
        Err(e) => Err(Failure::agent(format!(
            "the connection to {url} ended: {e}"
        ))),
    }
}
