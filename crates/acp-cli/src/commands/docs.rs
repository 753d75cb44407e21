//! `acp completions SHELL` and `acp man`: shell completion scripts and
//! manual pages, generated from the same argument definitions ([`Cli`]) that
//! parse the command line, so they list every subcommand and option there is.

use crate::cli::Cli;
use crate::exit::{self, Failure};
use clap::CommandFactory;
use std::io::Write;
use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};

/// The argument definitions, built (subcommands know their full names, such
/// as `acp-agents-import-zed`).
pub fn command() -> clap::Command {
    let mut command = Cli::command();
    command.build();
    command
}

/// The same for the manual: without clap's `help` subcommands (`acp help
/// exec` prints what `acp-exec(1)` says), so no page refers to a page that
/// is not written.
fn man_command() -> clap::Command {
    let mut command = Cli::command().disable_help_subcommand(true);
    command.build();
    command
}

/// Every subcommand at any depth, parents first, with its path of names
/// (`["agents", "import-zed"]`); clap's own `help` subcommands, which print
/// what these pages say, are left out.
pub fn subcommands(command: &clap::Command) -> Vec<(Vec<String>, clap::Command)> {
    fn walk(command: &clap::Command, path: &[String], out: &mut Vec<(Vec<String>, clap::Command)>) {
        let listed = command
            .get_subcommands()
            .filter(|s| !s.is_hide_set() && s.get_name() != "help");
        for sub in listed {
            let mut sub_path = path.to_vec();
            sub_path.push(sub.get_name().to_owned());
            out.push((sub_path.clone(), sub.clone()));
            walk(sub, &sub_path, out);
        }
    }
    let mut out = Vec::new();
    walk(command, &[], &mut out);
    out
}

/// Prints the completion script for `shell` to standard output.
pub fn completions(shell: clap_complete::Shell) -> Result<u8, Failure> {
    let mut script = Vec::new();
    clap_complete::generate(shell, &mut command(), "acp", &mut script);
    print(&script)
}

/// Prints `acp(1)` to standard output, or, with `dir`, writes it and a page
/// per subcommand there (each through a temporary file and a rename, so a
/// page is whole or not there) and lists the files written.
pub fn man(dir: Option<&Path>) -> Result<u8, Failure> {
    let command = man_command();
    let Some(dir) = dir else {
        return print(&render(&command)?);
    };
    let mut pages = vec![(PathBuf::from("acp.1"), render(&command)?)];
    for (path, sub) in subcommands(&command) {
        let name = format!("acp-{}.1", path.join("-"));
        pages.push((PathBuf::from(name), render(&sub)?));
    }
    let mut written = Vec::new();
    for (name, page) in pages {
        let path = dir.join(name);
        write_atomically(&path, &page)
            .map_err(|e| Failure::usage(format!("cannot write {}: {e}", path.display())))?;
        written.push(path.display().to_string());
    }
    print(format!("{}\n", written.join("\n")).as_bytes())
}

/// The manual page of `command` (roff).
pub fn render(command: &clap::Command) -> Result<Vec<u8>, Failure> {
    let mut page = Vec::new();
    clap_mangen::Man::new(command.clone())
        .render(&mut page)
        .map_err(|e| Failure::new(exit::AGENT_ERROR, format!("cannot render the manual: {e}")))?;
    Ok(page)
}

fn print(bytes: &[u8]) -> Result<u8, Failure> {
    let mut stdout = std::io::stdout().lock();
    match stdout.write_all(bytes).and_then(|()| stdout.flush()) {
        Ok(()) => Ok(exit::OK),
        // The reader stopped reading (`acp man | head`): nothing to report.
        Err(e) if e.kind() == std::io::ErrorKind::BrokenPipe => Ok(exit::OK),
        Err(e) => Err(Failure::usage(format!(
            "cannot write to standard output: {e}"
        ))),
    }
}

fn write_atomically(path: &Path, bytes: &[u8]) -> std::io::Result<()> {
    let dir = path.parent().unwrap_or(Path::new("."));
    let file_name = path.file_name().unwrap_or_default().to_string_lossy();
    let mut tmp = tempfile::Builder::new()
        .prefix(&format!(".{file_name}."))
        .tempfile_in(dir)?;
    tmp.write_all(bytes)?;
    // Readable by everyone, like any installed manual page.
    tmp.as_file()
        .set_permissions(std::fs::Permissions::from_mode(0o644))?;
    tmp.as_file().sync_all()?;
    tmp.persist(path).map_err(|e| e.error)?;
    Ok(())
}
