//! Where acp keeps its files: the config file, and the state directory
//! (the prompt history, the sessions acp had, recordings).

use std::path::PathBuf;

/// Where the config file is read from unless `--config` says otherwise.
pub fn default_config_path() -> Option<PathBuf> {
    dirs::config_dir().map(|dir| dir.join("acp").join("config.toml"))
}

/// The default config path as text, for messages.
pub fn config_path_hint() -> String {
    default_config_path()
        .map(|p| p.display().to_string())
        .unwrap_or_else(|| "the acp config file".to_owned())
}

/// acp's state directory: `<state dir>/acp` (the data dir where there is
/// no state dir).
pub fn state_dir() -> Option<PathBuf> {
    dirs::state_dir()
        .or_else(dirs::data_dir)
        .map(|dir| dir.join("acp"))
}

/// Where the prompt history is kept: `<state dir>/acp/history`.
pub fn history_path() -> Option<PathBuf> {
    state_dir().map(|dir| dir.join("history"))
}
