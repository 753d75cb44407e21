//! Processes as `/proc` shows them (Linux).

/// What `/proc/PID/stat` says of a process.
pub(crate) struct Stat {
    /// The state letter (`R`, `S`, `Z` for a zombie, …).
    pub state: char,
    /// The parent's process id.
    pub ppid: i32,
    /// The start time, in clock ticks after boot.
    pub start: u64,
}

/// Reads `/proc/PID/stat`; `None` when there is no such process (or no
/// `/proc`).
pub(crate) fn stat(pid: i32) -> Option<Stat> {
    let text = std::fs::read_to_string(format!("/proc/{pid}/stat")).ok()?;
    // The command name, in parentheses, may hold spaces and parentheses.
    let mut fields = text[text.rfind(')')? + 1..].split_whitespace();
    // After the name: the state is field 3, the parent 4, the start time 22.
    let state = fields.next()?.chars().next()?;
    let ppid = fields.next()?.parse().ok()?;
    let start = fields.nth(17)?.parse().ok()?;
    Some(Stat { state, ppid, start })
}

/// Whether process `pid` runs: it exists and is not a zombie waiting to be
/// reaped. Linux only (`/proc`); elsewhere always false.
pub fn is_alive(pid: i32) -> bool {
    stat(pid).is_some_and(|s| !matches!(s.state, 'Z' | 'X'))
}
