//! ANSI styles for `acp chat`, or none when colour is off.

/// Wraps text in ANSI escape codes when colour is on.
#[derive(Debug, Clone, Copy)]
pub struct Style {
    color: bool,
}

impl Style {
    /// Styles that colour when `color` is true, else leave text as is.
    pub fn new(color: bool) -> Self {
        Style { color }
    }

    /// Whether colour is on.
    pub fn enabled(&self) -> bool {
        self.color
    }

    fn paint(&self, code: &str, text: &str) -> String {
        if self.color {
            format!("\x1b[{code}m{text}\x1b[0m")
        } else {
            text.to_owned()
        }
    }

    /// Bold.
    pub fn bold(&self, text: &str) -> String {
        self.paint("1", text)
    }
    /// Dimmed.
    pub fn dim(&self, text: &str) -> String {
        self.paint("2", text)
    }
    /// Red (removed lines, failures).
    pub fn red(&self, text: &str) -> String {
        self.paint("31", text)
    }
    /// Green (added lines, success).
    pub fn green(&self, text: &str) -> String {
        self.paint("32", text)
    }
    /// Cyan (code, hunk headers).
    pub fn cyan(&self, text: &str) -> String {
        self.paint("36", text)
    }
    /// Yellow.
    pub fn yellow(&self, text: &str) -> String {
        self.paint("33", text)
    }
    /// Bold yellow (questions).
    pub fn yellow_bold(&self, text: &str) -> String {
        self.paint("1;33", text)
    }
    /// Underlined (links).
    pub fn underline(&self, text: &str) -> String {
        self.paint("4", text)
    }
    /// Magenta (tool calls).
    pub fn magenta(&self, text: &str) -> String {
        self.paint("35", text)
    }
}
