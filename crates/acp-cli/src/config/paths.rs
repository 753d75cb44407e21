//! Where acp keeps its files: the config file, the state directory (the
//! prompt history, the sessions acp had, recordings), the data directory
//! (agents installed from the registry) and the cache directory (the
//! registry's document).

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

/// acp's data directory: `<data dir>/acp` (`~/.local/share/acp`).
pub fn data_dir() -> Option<PathBuf> {
    dirs::data_dir().map(|dir| dir.join("acp"))
}

/// Where agents from the registry are installed: `<data dir>/acp/agents`.
pub fn agents_dir() -> Option<PathBuf> {
    data_dir().map(|dir| dir.join("agents"))
}

/// acp's cache directory: `<cache dir>/acp` (`~/.cache/acp`).
pub fn cache_dir() -> Option<PathBuf> {
    dirs::cache_dir().map(|dir| dir.join("acp"))
}
