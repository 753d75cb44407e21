//! `acp trace FILE --html OUT`: the timeline as one self-contained HTML
//! page.
//!
//! Everything is in the page: the style, a small script, and the messages.
//! It loads nothing: its Content-Security-Policy allows no source at all
//! but its own style and the one script, named by its SHA-256 hash, so even
//! a message that somehow slipped past escaping could not run code or reach
//! the network. Every text taken from the recording is escaped.
//!
//! The page shows the header, the counts, one table row per session turn
//! (with a bar for its duration), and the timeline: one row per event (runs
//! of chunks joined, as in the text), errors in red, each row's message
//! behind a collapsible `<details>`. The search box hides the rows that do
//! not contain what is typed (in any message, case-insensitive); a
//! `#q=WORDS` fragment in the address fills it in when the page opens.

use super::model::{Event, Row, Timeline, What, rows};
use super::text::{arrow, describe, ms};
use base64::Engine as _;
use sha2::Digest as _;
use std::fmt::Write as _;

/// How much of one message the page shows; the rest is left out (the
/// record file has it).
pub const MAX_SHOWN: usize = 64 * 1024;

const STYLE: &str = "
body { font: 14px/1.4 system-ui, sans-serif; margin: 0; color: #1d1d1f; background: #fff; }
header { position: sticky; top: 0; background: #f6f7f9; border-bottom: 1px solid #d0d4da; padding: 10px 16px; z-index: 1; }
h1 { font-size: 18px; margin: 0 0 4px; }
.meta { color: #555; margin: 0 0 6px; word-break: break-all; }
.counts span { display: inline-block; margin-right: 14px; }
.counts b { font-variant-numeric: tabular-nums; }
#search { width: 28em; padding: 4px 6px; font: inherit; }
main { padding: 8px 16px 40px; }
table.turns { border-collapse: collapse; margin: 8px 0 16px; }
table.turns td, table.turns th { padding: 3px 10px; text-align: left; border-bottom: 1px solid #e3e6ea; }
.bar { display: inline-block; height: 10px; background: #3b7ddd; vertical-align: middle; min-width: 2px; }
ol#timeline { list-style: none; padding: 0; margin: 0; font: 13px/1.45 ui-monospace, monospace; }
ol#timeline li { padding: 2px 6px; border-bottom: 1px solid #f0f1f3; }
ol#timeline li.in-turn { border-left: 3px solid #9dbcf0; }
ol#timeline li.turn-edge { background: #e6f0ff; font-weight: 600; }
ol#timeline li.error { background: #fde2e2; }
ol#timeline li.stderr { color: #6b5200; }
.t { display: inline-block; width: 6.5em; text-align: right; color: #777; margin-right: 8px; }
details { display: inline; }
details[open] { display: block; }
summary { cursor: pointer; display: inline; color: #1d1d1f; list-style: none; }
summary::before { content: '▸ '; color: #777; }
details[open] > summary::before { content: '▾ '; }
table.turns tr.error td { background: #fde2e2; }
pre { background: #f6f7f9; border: 1px solid #e3e6ea; padding: 6px 8px; margin: 4px 0 6px 7.5em; white-space: pre-wrap; word-break: break-all; font-weight: 400; }
.warn { color: #a40000; }
";

const SCRIPT: &str = r#"
(function () {
  var box = document.getElementById('search');
  var rows = Array.prototype.slice.call(document.querySelectorAll('#timeline > li'));
  var shown = document.getElementById('shown');
  function apply() {
    var q = box.value.trim().toLowerCase();
    var n = 0;
    rows.forEach(function (li) {
      var hit = q === '' || li.textContent.toLowerCase().indexOf(q) >= 0;
      li.hidden = !hit;
      if (hit) { n += 1; }
    });
    shown.textContent = n + ' of ' + rows.length + ' rows';
  }
  box.addEventListener('input', apply);
  document.getElementById('expand').addEventListener('click', function () {
    document.querySelectorAll('#timeline details').forEach(function (d) { if (!d.closest('li').hidden) { d.open = true; } });
  });
  document.getElementById('collapse').addEventListener('click', function () {
    document.querySelectorAll('#timeline details').forEach(function (d) { d.open = false; });
  });
  var m = /^#q=(.*)$/.exec(location.hash);
  if (m) { box.value = decodeURIComponent(m[1].replace(/\+/g, ' ')); }
  apply();
  document.body.setAttribute('data-ready', 'yes');
})();
"#;

/// Escapes text for HTML content and attribute values (`&`, `<`, `>`, `'`
/// and `"`).
pub fn escape(text: &str) -> String {
    quick_xml::escape::escape(text).into_owned()
}

fn script_hash() -> String {
    let digest = sha2::Sha256::digest(SCRIPT.as_bytes());
    base64::engine::general_purpose::STANDARD.encode(digest)
}

/// The page for `timeline`; `name` is the recording's file name.
pub fn render(timeline: &Timeline, name: &str) -> String {
    let mut out = String::new();
    let _ = write!(
        out,
        "<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n\
         <meta http-equiv=\"Content-Security-Policy\" content=\"default-src 'none'; \
         style-src 'unsafe-inline'; script-src 'sha256-{}'\">\n\
         <meta name=\"viewport\" content=\"width=device-width\">\n\
         <title>acp trace: {}</title>\n<style>{STYLE}</style>\n</head>\n<body>\n<header>\n",
        script_hash(),
        escape(name)
    );
    let _ = writeln!(out, "<h1>acp trace: {}</h1>", escape(name));
    let mut meta = Vec::new();
    if !timeline.agent.is_empty() {
        meta.push(format!(
            "agent: <code>{}</code>",
            escape(&timeline.agent.join(" "))
        ));
    }
    if !timeline.started.is_empty() {
        meta.push(format!("started {}", escape(&timeline.started)));
    }
    if timeline.redacted {
        meta.push("redacted".to_owned());
    }
    let _ = writeln!(out, "<p class=\"meta\">{}</p>", meta.join(" · "));
    counts(timeline, &mut out);
    out.push_str(
        "<p><input id=\"search\" type=\"search\" placeholder=\"Search the messages\" aria-label=\"Search\"> \
         <button id=\"expand\">Expand all</button> <button id=\"collapse\">Collapse all</button> \
         <span id=\"shown\"></span></p>\n</header>\n<main>\n",
    );
    for warning in &timeline.warnings {
        let _ = writeln!(out, "<p class=\"warn\">warning: {}</p>", escape(warning));
    }
    turns(timeline, &mut out);
    out.push_str("<ol id=\"timeline\">\n");
    for row in rows(&timeline.events) {
        timeline_row(&row, &mut out);
    }
    let _ = write!(
        out,
        "</ol>\n</main>\n<script>{SCRIPT}</script>\n</body>\n</html>\n"
    );
    out
}

fn counts(timeline: &Timeline, out: &mut String) {
    let c = &timeline.counts;
    let items = [
        ("sessions", c.sessions),
        ("turns", c.turns),
        ("requests", c.requests),
        ("notifications", c.notifications),
        ("tool calls", c.tool_calls),
        ("permission questions", c.permissions),
        ("errors", c.errors),
        ("client lines", c.client.lines),
        ("agent lines", c.agent.lines),
        ("stderr lines", c.stderr.lines),
    ];
    out.push_str("<p class=\"counts\" id=\"counts\">");
    for (what, n) in items {
        let _ = write!(out, "<span><b>{n}</b> {what}</span>");
    }
    out.push_str("</p>\n");
}

fn turns(timeline: &Timeline, out: &mut String) {
    let all: Vec<_> = timeline
        .sessions
        .iter()
        .flat_map(|s| s.turns.iter().map(move |t| (s, t)))
        .collect();
    if all.is_empty() {
        return;
    }
    let longest = all
        .iter()
        .filter_map(|(_, t)| t.duration_ms)
        .fold(0.0f64, f64::max)
        .max(0.001);
    out.push_str(
        "<table class=\"turns\" id=\"turns\"><tr><th>session</th><th>turn</th><th>prompt</th>\
         <th>ended</th><th>duration</th><th></th><th>tool calls</th><th>permissions</th></tr>\n",
    );
    for (session, turn) in all {
        let end = match (&turn.error, &turn.stop_reason) {
            (Some(e), _) => format!("error {} {}", e.code, e.message),
            (None, Some(stop)) => stop.clone(),
            (None, None) => "unfinished".to_owned(),
        };
        let width = turn.duration_ms.map_or(0.0, |d| d / longest * 200.0);
        let class = if turn.error.is_some() {
            " class=\"error\""
        } else {
            ""
        };
        let calls: Vec<String> = turn
            .tool_calls
            .iter()
            .map(|c| {
                let last = c.statuses.last().map(|s| s.status.as_str()).unwrap_or("?");
                format!("{} ({last})", c.title)
            })
            .collect();
        let permissions: Vec<String> = turn.permissions.iter().map(|p| p.answer.clone()).collect();
        let _ = writeln!(
            out,
            "<tr{class}><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td>\
             <td><span class=\"bar\" style=\"width:{width:.0}px\"></span></td><td>{}</td><td>{}</td></tr>",
            escape(&session.id),
            turn.n,
            escape(&super::model::preview(&turn.prompt, 80)),
            escape(&end),
            escape(&ms(turn.duration_ms)),
            escape(&calls.join(", ")),
            escape(&permissions.join(", ")),
        );
    }
    out.push_str("</table>\n");
}

fn shown(text: &str) -> String {
    if text.len() <= MAX_SHOWN {
        return escape(text);
    }
    let mut cut = MAX_SHOWN;
    while !text.is_char_boundary(cut) {
        cut -= 1;
    }
    format!(
        "{}\n… ({} more bytes are in the record file)",
        escape(&text[..cut]),
        text.len() - cut
    )
}

fn body(event: &Event) -> String {
    match (&event.message, &event.text) {
        (Some(message), _) => {
            serde_json::to_string_pretty(message).unwrap_or_else(|_| message.to_string())
        }
        (None, Some(text)) => text.clone(),
        (None, None) => String::new(),
    }
}

fn timeline_row(row: &Row<'_>, out: &mut String) {
    let (event, label, details) = match row {
        Row::Event(event) => {
            let Some(label) = describe(event) else {
                // Responses shown on their request's row still get a row
                // of their own here, so their message can be read.
                let label = response_label(event);
                return write_row(out, event, &label, &body(event));
            };
            (*event, label, body(event))
        }
        Row::Chunks {
            first,
            kind,
            count,
            text,
            ..
        } => {
            let times = if *count > 1 {
                format!(" ×{count}")
            } else {
                String::new()
            };
            let label = format!(
                "{} {kind}{times} {}",
                arrow(first.from),
                super::model::preview(text, 120)
            );
            (*first, label, text.clone())
        }
    };
    write_row(out, event, &label, &details);
}

fn response_label(event: &Event) -> String {
    match &event.what {
        What::Response {
            id,
            method,
            latency_ms,
            ..
        } => format!(
            "{} answer #{id} to {}: {} in {}",
            arrow(event.from),
            method.as_deref().unwrap_or("?"),
            if event.summary.is_empty() {
                "ok"
            } else {
                &event.summary
            },
            ms(*latency_ms)
        ),
        _ => String::new(),
    }
}

fn write_row(out: &mut String, event: &Event, label: &str, details: &str) {
    let mut classes = vec![format!("from-{}", event.from.as_str())];
    if event.turn.is_some() {
        classes.push("in-turn".to_owned());
    }
    if super::text::is_turn_edge(event) {
        classes.push("turn-edge".to_owned());
    }
    if event.error {
        classes.push("error".to_owned());
    }
    if matches!(event.what, What::Stderr) {
        classes.push("stderr".to_owned());
    }
    let _ = write!(
        out,
        "<li class=\"{}\" data-record=\"{}\"><span class=\"t\">{:.3}</span>",
        classes.join(" "),
        event.record,
        event.t
    );
    if details.is_empty() {
        let _ = writeln!(out, "{}</li>", escape(label));
    } else {
        let _ = writeln!(
            out,
            "<details><summary>{}</summary><pre>{}</pre></details></li>",
            escape(label),
            shown(details)
        );
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn text_is_escaped_for_content_and_attributes() {
        assert_eq!(
            escape("<script>alert('x')</script> & \"q\""),
            "&lt;script&gt;alert(&apos;x&apos;)&lt;/script&gt; &amp; &quot;q&quot;"
        );
    }

    #[test]
    fn the_policy_names_the_script_by_its_hash() {
        let page = render(
            &Timeline::of(&crate::recording::Recording::parse(b"{\"acpRecord\":1}\n").unwrap()),
            "x",
        );
        assert!(page.contains(&format!("script-src 'sha256-{}'", script_hash())));
        assert_eq!(page.matches("<script>").count(), 1);
        assert!(!page.contains("http://") && !page.contains("https://"));
    }
}
