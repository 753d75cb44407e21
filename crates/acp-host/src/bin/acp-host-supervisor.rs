//! `acp-host-supervisor`: the terminal supervisor of `acp-host` as a program
//! of its own, for clients that cannot call
//! `acp_host::supervise_if_requested()` in their own `main`
//! (`SupervisorProgram::Path`). Run by hand, it only says what it is.

fn main() {
    acp_host::supervise_if_requested();
    eprintln!(
        "acp-host-supervisor: runs terminal commands for acp-host; it is started by a client, \
         not by hand"
    );
    std::process::exit(2);
}
