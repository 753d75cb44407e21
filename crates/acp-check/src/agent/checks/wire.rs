//! `wire.*`: every line the agent wrote, judged after the other checks.

use crate::agent::cx::AgentCx;
use crate::report::Outcome;
use crate::wire::Dir;
use std::collections::HashSet;

/// Every line from the agent processes (not the probe's answers to garbage).
pub(super) async fn wire_json_lines(cx: &mut AgentCx) -> Outcome {
    let _ = cx.init().await;
    let events = cx.log.all();
    if !events.iter().any(|e| e.dir == Dir::In) {
        return Outcome::skip("the agent sent nothing");
    }
    let mut blank = 0;
    for e in events.iter().filter(|e| e.dir == Dir::In) {
        if e.line.is_empty() {
            blank += 1;
            continue;
        }
        if e.value.is_none() || e.envelope.is_none() {
            return Outcome::fail(
                "the agent wrote a line to stdout that is not a JSON-RPC message",
            )
            .with_message(&e.line);
        }
    }
    let notes = (blank > 0).then(|| format!("{blank} empty lines on stdout"));
    Outcome::pass().with_notes(notes)
}

pub(super) async fn wire_strict(cx: &mut AgentCx) -> Outcome {
    let _ = cx.init().await;
    let events = cx.log.all();
    if !events.iter().any(|e| e.dir == Dir::In) {
        return Outcome::skip("the agent sent nothing");
    }
    let mut errors = Vec::new();
    let mut notes: Vec<String> = Vec::new();
    let mut first_bad = None;
    let mut messages = 0;
    for e in events
        .iter()
        .filter(|e| e.dir == Dir::In && e.envelope.is_some())
    {
        messages += 1;
        if !e.findings.errors.is_empty() {
            first_bad.get_or_insert_with(|| e.line.clone());
            errors.extend(e.findings.errors.iter().cloned());
        }
        for n in &e.findings.notes {
            if !notes.contains(n) && notes.len() < 10 {
                notes.push(n.clone());
            }
        }
    }
    if let Some(line) = first_bad {
        let shown: Vec<String> = errors.iter().take(3).cloned().collect();
        return Outcome::fail(format!(
            "{} violations in {messages} messages: {}",
            errors.len(),
            shown.join("; ")
        ))
        .with_message(&line)
        .with_notes(notes);
    }
    Outcome::pass().with_notes(notes)
}

pub(super) async fn wire_responses(cx: &mut AgentCx) -> Outcome {
    let _ = cx.init().await;
    let events = cx.log.all();
    if !events.iter().any(|e| e.dir == Dir::In) {
        return Outcome::skip("the agent sent nothing");
    }
    // (wire, id) of every request the checker sent, and of those answered.
    let mut sent: HashSet<(usize, String)> = HashSet::new();
    let mut answered: HashSet<(usize, String)> = HashSet::new();
    for e in &events {
        match e.dir {
            Dir::Out => {
                if let Some(v) = &e.value
                    && v.get("method").is_some()
                    && let Some(id) = v.get("id")
                {
                    sent.insert((e.wire, id.to_string()));
                }
            }
            Dir::In => {
                if let Some(crate::strict::Envelope::Response { id, .. }) = &e.envelope {
                    if id.is_null() {
                        continue; // answers to lines without a usable id (the probes)
                    }
                    let key = (e.wire, id.to_string());
                    if !sent.contains(&key) {
                        return Outcome::fail(format!(
                            "a response to id {id}, which the checker never sent"
                        ))
                        .with_message(&e.line);
                    }
                    if !answered.insert(key) {
                        return Outcome::fail(format!("request {id} was answered twice"))
                            .with_message(&e.line);
                    }
                }
            }
        }
    }
    // JSON-RPC answers every request: one left for the whole timeout is a failure.
    if let Some(why) = cx.log.stalled() {
        return Outcome::fail(why);
    }
    Outcome::pass()
}
