//! Agents given by URL (`--agent ws://…`): they run as this executable's
//! `acp connect URL`, with the options that reach the remote endpoint.

use crate::cli::RemoteArgs;
use crate::config::ChosenAgent;
use crate::exit::Failure;
use acp::AgentCommand;
use acp::remote::ClientOptions;

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
        flag: format!("--agent {}", crate::config::shell_quote(url)),
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
