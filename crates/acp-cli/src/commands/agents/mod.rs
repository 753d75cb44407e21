//! `acp agents`: the agents of the config file, and importing Zed's
//! (`acp agents import-zed`: [`import`], reading Zed's settings: [`zed`]).

pub mod import;
pub mod zed;

use crate::config::Config;

/// `acp agents`: prints the agents of the config file at `path`, the
/// default one marked.
pub fn list(config: &Config, path: Option<&std::path::Path>) {
    let origin = path.map(|p| p.display().to_string()).unwrap_or_default();
    if config.agents.is_empty() {
        println!("no agents configured in {origin}");
        println!(
            "add one like this:\n\n[agents.NAME]\ncommand = \"npx\"\nargs = [\"-y\", \"@agentclientprotocol/claude-agent-acp\"]"
        );
    }
    let width = config.agents.keys().map(String::len).max().unwrap_or(0);
    for (name, entry) in &config.agents {
        let mark = if config.default_agent.as_deref() == Some(name) {
            " (default)"
        } else {
            ""
        };
        println!("{name:width$}  {}{mark}", entry.display());
    }
}
