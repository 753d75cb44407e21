//! `acp watch URL`: an operator's read-only look at an `acp serve` server.
//!
//! Without `--connection`, lists the server's connections (`GET
//! /connections`: id, state, age, profile, client address, messages each
//! way, agent). With it, attaches to one (`GET /connections/{id}/watch`)
//! and prints its traffic both ways as it happens, as `acp trace` prints a
//! recording ([`super::live`]), or with `--format json` one
//! JSON object per event (the events of `acp trace --format json`), until
//! the connection closes. Both need the server's token, given as to `acp
//! connect` (`--token-file`, `--token-env`).
//!
//! The server sends a record per message, in the format of `acp record`;
//! a watcher too slow for the connection is told how many records it
//! missed (`{"t":…,"skipped":N}`), which is shown as such.

use super::build::Growing;
use super::live::LiveText;
use crate::cli::watch::WatchArgs;
use crate::cli::{RemoteArgs, TraceFormat};
use crate::config::remote::remote_options;
use crate::exit::{self, Failure};
use crate::recording::{Entry, parse_line};
use acp::remote::ConnectionSummary;
use serde_json::{Value, json};
use std::io::Write;
use std::time::Duration;

/// How long the stream may be quiet before a run of chunks held is shown.
const QUIET: Duration = Duration::from_millis(250);

/// Runs `acp watch`.
pub async fn run(args: WatchArgs, remote: &RemoteArgs) -> Result<u8, Failure> {
    let options = remote_options(remote)?;
    let url = &args.url;
    if !acp::remote::is_url(url) {
        return Err(Failure::usage(format!(
            "{url:?} is not a server's URL (ws://, wss://, http:// or https://)"
        )));
    }
    let connections = acp::remote::list_connections(url, &options)
        .await
        .map_err(|e| Failure::agent(format!("cannot list the connections of {url}: {e}")))?;
    let Some(wanted) = &args.connection else {
        let out = match args.format {
            TraceFormat::Text => listing(&connections),
            TraceFormat::Json => format!("{}\n", listing_json(&connections)),
        };
        print(&out);
        return Ok(exit::OK);
    };
    let connection = pick(&connections, wanted, url)?;
    let mut watch = acp::remote::watch(url, &connection.id, args.from_start, &options)
        .await
        .map_err(|e| Failure::agent(format!("cannot watch connection {}: {e}", connection.id)))?;
    if args.format == TraceFormat::Text {
        print(&format!(
            "watching connection {} of {url} ({}, {} from {}, {}), read-only; Ctrl-C stops\n",
            connection.id, connection.state, connection.profile, connection.peer, connection.agent
        ));
    }
    let mut show = Show::new(args.format);
    let mut number = 0;
    loop {
        let line = match tokio::time::timeout(QUIET, watch.next_line()).await {
            Err(_) => {
                show.quiet();
                continue;
            }
            Ok(Ok(Some(line))) => line,
            Ok(Ok(None)) => break,
            Ok(Err(e)) => {
                show.quiet();
                return Err(Failure::agent(format!(
                    "the watch of connection {} ended: {e}",
                    connection.id
                )));
            }
        };
        number += 1;
        show.line(number, &line);
    }
    show.quiet();
    eprintln!("acp watch: connection {} closed", connection.id);
    Ok(exit::OK)
}

/// Writes to standard output; a closed pipe (`acp watch … | head`) is not
/// worth a message.
fn print(text: &str) {
    let mut stdout = std::io::stdout().lock();
    let _ = stdout
        .write_all(text.as_bytes())
        .and_then(|()| stdout.flush());
}

/// The connection `wanted` names: its id, or a unique prefix of one.
fn pick<'a>(
    connections: &'a [ConnectionSummary],
    wanted: &str,
    url: &str,
) -> Result<&'a ConnectionSummary, Failure> {
    if let Some(exact) = connections.iter().find(|c| c.id == wanted) {
        return Ok(exact);
    }
    let matching: Vec<&ConnectionSummary> = connections
        .iter()
        .filter(|c| !wanted.is_empty() && c.id.starts_with(wanted))
        .collect();
    match matching.as_slice() {
        [one] => Ok(one),
        [] => Err(Failure::usage(format!(
            "{url} has no connection {wanted} (acp watch {url} lists them)"
        ))),
        many => Err(Failure::usage(format!(
            "--connection {wanted} could be any of {}; give more of the id",
            many.iter()
                .map(|c| c.id.as_str())
                .collect::<Vec<_>>()
                .join(", ")
        ))),
    }
}

/// A duration in seconds, readable: `42 s`, `3 min`, `2 h 5 min`.
fn age(seconds: u64) -> String {
    match seconds {
        s if s < 60 => format!("{s} s"),
        s if s < 3600 => format!("{} min", s / 60),
        s => format!("{} h {} min", s / 3600, s % 3600 / 60),
    }
}

/// The connections as a table, oldest first.
pub fn listing(connections: &[ConnectionSummary]) -> String {
    if connections.is_empty() {
        return "no connections\n".to_owned();
    }
    let rows: Vec<[String; 8]> = connections
        .iter()
        .map(|c| {
            [
                c.id.clone(),
                c.state.clone(),
                age(c.age_seconds),
                c.profile.clone(),
                c.peer.clone(),
                c.messages_in.to_string(),
                c.messages_out.to_string(),
                c.agent.clone(),
            ]
        })
        .collect();
    let header = [
        "ID", "STATE", "AGE", "PROFILE", "CLIENT", "IN", "OUT", "AGENT",
    ]
    .map(str::to_owned);
    let mut widths = [0; 8];
    for row in std::iter::once(&header).chain(&rows) {
        for (width, cell) in widths.iter_mut().zip(row) {
            *width = (*width).max(cell.chars().count());
        }
    }
    let mut out = String::new();
    for row in std::iter::once(&header).chain(&rows) {
        let cells: Vec<String> = row
            .iter()
            .zip(widths)
            .enumerate()
            .map(|(i, (cell, width))| match i {
                7 => cell.clone(),
                2 | 5 | 6 => format!("{cell:>width$}"),
                _ => format!("{cell:<width$}"),
            })
            .collect();
        out.push_str(cells.join("  ").trim_end());
        out.push('\n');
    }
    out
}

/// The connections as one JSON document, as the server lists them.
fn listing_json(connections: &[ConnectionSummary]) -> Value {
    let list: Vec<Value> = connections
        .iter()
        .map(|c| {
            json!({
                "id": c.id,
                "state": c.state,
                "ageSeconds": c.age_seconds,
                "profile": c.profile,
                "peer": c.peer,
                "agent": c.agent,
                "messagesIn": c.messages_in,
                "messagesOut": c.messages_out,
                "bufferedBytes": c.buffered_bytes,
                "watchers": c.watchers,
            })
        })
        .collect();
    json!({ "connections": list })
}

/// How the watched lines are shown.
enum Show {
    Text(Box<LiveText>),
    Json(Box<Growing>),
}

impl Show {
    fn new(format: TraceFormat) -> Self {
        match format {
            TraceFormat::Text => Show::Text(Box::default()),
            TraceFormat::Json => Show::Json(Box::default()),
        }
    }

    /// Line `number` of the stream.
    fn line(&mut self, number: usize, line: &str) {
        let value: Option<Value> = serde_json::from_str(line).ok();
        let skipped = value
            .as_ref()
            .and_then(|v| Some((v.get("t")?.as_f64()?, v.get("skipped")?.as_u64()?)));
        let entry = parse_line(line.as_bytes());
        let out = match (self, skipped, entry) {
            (Show::Json(_), Some(_), _) | (Show::Json(_), _, Ok(Entry::Header(_))) => {
                format!("{line}\n")
            }
            (Show::Json(growing), None, Ok(Entry::Record(record))) => {
                let (event, _) = growing.push(number, &record);
                let mut text = serde_json::to_string(&event).unwrap_or_default();
                text.push('\n');
                text
            }
            (Show::Text(live), Some((t, n)), _) => {
                let mut out: String = live.flush().map(|l| l + "\n").unwrap_or_default();
                out.push_str(&format!(
                    "{t:>9.3}  ({n} records left out: this watch fell behind the connection)\n"
                ));
                out
            }
            (Show::Text(_), None, Ok(Entry::Header(header))) => {
                let mut out = String::new();
                if !header.agent.is_empty() {
                    out.push_str(&format!("agent: {}\n", header.agent.join(" ")));
                }
                if !header.started.is_empty() {
                    out.push_str(&format!("started: {}\n", header.started));
                }
                out + "\n"
            }
            (Show::Text(live), None, Ok(Entry::Record(record))) => live
                .push(number, &record)
                .into_iter()
                .map(|l| l + "\n")
                .collect(),
            (_, None, Err(why)) => {
                eprintln!("acp watch: line {number} is not a record ({why}); left out");
                String::new()
            }
        };
        print(&out);
    }

    /// Nothing came for a while (or the stream ended): what is held is
    /// shown.
    fn quiet(&mut self) {
        if let Show::Text(live) = self
            && let Some(line) = live.flush()
        {
            print(&(line + "\n"));
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ages_read_well() {
        assert_eq!(age(42), "42 s");
        assert_eq!(age(185), "3 min");
        assert_eq!(age(7500), "2 h 5 min");
    }
}
