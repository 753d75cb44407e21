//! The report: one result per check, filters, and the renderers.

use serde_json::{Value, json};
use std::collections::BTreeSet;
use std::fmt::Write as _;

/// How a check ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Status {
    /// The peer did what the protocol asks.
    Pass,
    /// It did not.
    Fail,
    /// The check could not be judged (a feature not advertised, a step before it failed).
    Skip,
}

impl Status {
    /// `PASS`, `FAIL` or `SKIP`.
    pub fn as_str(self) -> &'static str {
        match self {
            Status::Pass => "PASS",
            Status::Fail => "FAIL",
            Status::Skip => "SKIP",
        }
    }
}

/// What a check's run found.
#[derive(Debug, Clone, PartialEq)]
pub struct Outcome {
    /// PASS, FAIL or SKIP.
    pub status: Status,
    /// Why (for FAIL and SKIP); empty for a plain PASS.
    pub reason: String,
    /// The offending message, shortened.
    pub message: Option<String>,
    /// Things worth knowing that are not failures (unknown fields).
    pub notes: Vec<String>,
}

/// The longest offending message quoted in a report.
pub const MESSAGE_CHARS: usize = 240;

/// `text` cut to `max` characters, with `…` when cut.
pub fn shorten(text: &str, max: usize) -> String {
    if text.chars().count() <= max {
        return text.to_string();
    }
    let cut: String = text.chars().take(max.saturating_sub(1)).collect();
    format!("{cut}…")
}

impl Outcome {
    /// A pass.
    pub fn pass() -> Outcome {
        Outcome {
            status: Status::Pass,
            reason: String::new(),
            message: None,
            notes: Vec::new(),
        }
    }

    /// A failure, and why.
    pub fn fail(reason: impl Into<String>) -> Outcome {
        Outcome {
            status: Status::Fail,
            reason: reason.into(),
            ..Outcome::pass()
        }
    }

    /// A skip, and why.
    pub fn skip(reason: impl Into<String>) -> Outcome {
        Outcome {
            status: Status::Skip,
            reason: reason.into(),
            ..Outcome::pass()
        }
    }

    /// The same outcome quoting the offending message (shortened).
    #[must_use]
    pub fn with_message(mut self, line: &str) -> Outcome {
        self.message = Some(shorten(line, MESSAGE_CHARS));
        self
    }

    /// The same outcome with notes.
    #[must_use]
    pub fn with_notes(mut self, notes: impl IntoIterator<Item = String>) -> Outcome {
        self.notes.extend(notes);
        self
    }
}

/// The result of one check in a report.
#[derive(Debug, Clone, PartialEq)]
pub struct CheckResult {
    /// `area.what`.
    pub name: String,
    /// The area it belongs to.
    pub area: String,
    /// The protocol docs section it comes from (a URL).
    pub doc: String,
    /// What it found (after `--expect` and `--baseline`).
    pub outcome: Outcome,
    /// A failure listed in the baseline: reported, but it does not fail the run.
    pub known: bool,
    /// Listed in the baseline, but it passed.
    pub now_passes: bool,
}

/// Which checks run and how their outcomes count.
#[derive(Debug, Clone, Default)]
pub struct Filters {
    /// Run only checks whose name starts with one of these.
    pub only: Vec<String>,
    /// Do not run checks whose name starts with one of these.
    pub skip: Vec<String>,
    /// Features the author claims: a SKIP of a check needing one is a FAIL.
    pub expect: BTreeSet<String>,
    /// Known failures: they do not fail the run.
    pub baseline: BTreeSet<String>,
}

impl Filters {
    /// Whether the check named `name` runs.
    pub fn selects(&self, name: &str) -> bool {
        (self.only.is_empty() || self.only.iter().any(|p| name.starts_with(p.as_str())))
            && !self.skip.iter().any(|p| name.starts_with(p.as_str()))
    }

    /// Reads a baseline file: one check name a line, `#` starts a comment.
    pub fn parse_baseline(text: &str) -> BTreeSet<String> {
        text.lines()
            .map(|l| l.split('#').next().unwrap_or("").trim())
            .filter(|l| !l.is_empty())
            .map(str::to_string)
            .collect()
    }

    /// The result of a check from its outcome, after `--expect` and `--baseline`.
    pub fn judge(
        &self,
        name: &str,
        area: &str,
        doc: &str,
        feature: Option<&str>,
        mut outcome: Outcome,
    ) -> CheckResult {
        if outcome.status == Status::Skip
            && let Some(f) = feature
            && self.expect.contains(f)
        {
            outcome.status = Status::Fail;
            outcome.reason = format!("skipped, but --expect claims {f}: {}", outcome.reason);
        }
        let listed = self.baseline.contains(name);
        CheckResult {
            name: name.to_string(),
            area: area.to_string(),
            doc: doc.to_string(),
            known: listed && outcome.status == Status::Fail,
            now_passes: listed && outcome.status == Status::Pass,
            outcome,
        }
    }
}

/// A whole run.
#[derive(Debug, Clone)]
pub struct Report {
    /// `agent` or `client`.
    pub side: String,
    /// The command line under test.
    pub command: String,
    /// Every check that ran, in order.
    pub results: Vec<CheckResult>,
}

/// The counts of a report.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Summary {
    /// Checks that passed.
    pub passed: usize,
    /// Checks that failed and are not in the baseline.
    pub failed: usize,
    /// Checks that were skipped.
    pub skipped: usize,
    /// Failures listed in the baseline.
    pub known: usize,
}

impl Report {
    /// The counts.
    pub fn summary(&self) -> Summary {
        let mut s = Summary::default();
        for r in &self.results {
            match r.outcome.status {
                Status::Pass => s.passed += 1,
                Status::Skip => s.skipped += 1,
                Status::Fail if r.known => s.known += 1,
                Status::Fail => s.failed += 1,
            }
        }
        s
    }

    /// Whether the run succeeded: nothing failed outside the baseline.
    pub fn ok(&self) -> bool {
        self.summary().failed == 0
    }

    /// One line per check, grouped by area, and the counts last.
    pub fn text(&self) -> String {
        let mut out = String::new();
        let _ = writeln!(out, "acp check {}: {}", self.side, self.command);
        let mut areas: Vec<&str> = Vec::new();
        for r in &self.results {
            if !areas.contains(&r.area.as_str()) {
                areas.push(&r.area);
            }
        }
        let grouped = areas
            .iter()
            .flat_map(|a| self.results.iter().filter(move |r| r.area == *a));
        let mut area = "";
        for r in grouped {
            if r.area != area {
                area = &r.area;
                let _ = writeln!(out, "\n{area}");
            }
            let o = &r.outcome;
            let _ = write!(out, "  {} {}", o.status.as_str(), r.name);
            if !o.reason.is_empty() {
                let _ = write!(out, ": {}", o.reason);
            }
            if r.known {
                out.push_str(" (known: in the baseline)");
            }
            if r.now_passes {
                out.push_str(" (in the baseline, but passes now: remove it)");
            }
            out.push('\n');
            if let Some(m) = &o.message {
                let _ = writeln!(out, "       message: {m}");
            }
            for n in &o.notes {
                let _ = writeln!(out, "       note: {n}");
            }
            if o.status == Status::Fail {
                let _ = writeln!(out, "       see: {}", r.doc);
            }
        }
        let s = self.summary();
        let _ = write!(
            out,
            "\n{} passed, {} failed, {} skipped",
            s.passed, s.failed, s.skipped
        );
        if s.known > 0 {
            let _ = write!(out, " ({} known failures in the baseline)", s.known);
        }
        out.push('\n');
        out
    }

    /// The report as JSON.
    pub fn json(&self) -> Value {
        let s = self.summary();
        let checks: Vec<Value> = self
            .results
            .iter()
            .map(|r| {
                json!({
                    "name": r.name,
                    "area": r.area,
                    "doc": r.doc,
                    "status": r.outcome.status.as_str(),
                    "reason": r.outcome.reason,
                    "message": r.outcome.message,
                    "notes": r.outcome.notes,
                    "baseline": r.known || r.now_passes,
                })
            })
            .collect();
        json!({
            "side": self.side,
            "command": self.command,
            "checks": checks,
            "summary": {
                "passed": s.passed,
                "failed": s.failed,
                "skipped": s.skipped,
                "known": s.known,
            },
        })
    }

    /// The report as JUnit XML: one test suite, one test case per check.
    pub fn junit(&self) -> String {
        let s = self.summary();
        let mut out = String::from("<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n");
        let _ = writeln!(
            out,
            "<testsuites><testsuite name=\"acp check {}\" tests=\"{}\" failures=\"{}\" skipped=\"{}\">",
            xml(&self.side),
            self.results.len(),
            s.failed,
            s.skipped
        );
        for r in &self.results {
            let o = &r.outcome;
            let _ = write!(
                out,
                "  <testcase classname=\"{}\" name=\"{}\">",
                xml(&r.area),
                xml(&r.name)
            );
            match o.status {
                Status::Pass => {}
                Status::Skip => {
                    let _ = write!(out, "<skipped message=\"{}\"/>", xml(&o.reason));
                }
                Status::Fail if r.known => {
                    let _ = write!(
                        out,
                        "<skipped message=\"known failure (baseline): {}\"/>",
                        xml(&o.reason)
                    );
                }
                Status::Fail => {
                    let body = format!("{}\nsee: {}", o.message.as_deref().unwrap_or(""), r.doc);
                    let _ = write!(
                        out,
                        "<failure message=\"{}\">{}</failure>",
                        xml(&o.reason),
                        xml(&body)
                    );
                }
            }
            out.push_str("</testcase>\n");
        }
        out.push_str("</testsuite></testsuites>\n");
        out
    }
}

fn xml(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    for c in text.chars() {
        match c {
            '&' => out.push_str("&amp;"),
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            '"' => out.push_str("&quot;"),
            '\'' => out.push_str("&apos;"),
            c if (c as u32) < 0x20 && c != '\n' && c != '\t' => {
                let _ = write!(out, "&#x{:x};", c as u32);
            }
            c => out.push(c),
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn report(filters: &Filters) -> Report {
        let doc = "https://agentclientprotocol.com/protocol/prompt-turn";
        Report {
            side: "agent".into(),
            command: "my-agent".into(),
            results: vec![
                filters.judge("prompt.text", "prompt", doc, None, Outcome::pass()),
                filters.judge(
                    "prompt.no-update-after-response",
                    "prompt",
                    doc,
                    None,
                    Outcome::fail("an update <late>").with_message("{\"a\":1}"),
                ),
                filters.judge(
                    "session.load",
                    "session",
                    doc,
                    Some("load"),
                    Outcome::skip("not advertised"),
                ),
            ],
        }
    }

    #[test]
    fn the_text_report_has_a_line_per_check_and_the_counts() {
        let r = report(&Filters::default());
        assert_eq!(
            r.text(),
            "acp check agent: my-agent\n\nprompt\n  PASS prompt.text\n  FAIL prompt.no-update-after-response: an update <late>\n       message: {\"a\":1}\n       see: https://agentclientprotocol.com/protocol/prompt-turn\n\nsession\n  SKIP session.load: not advertised\n\n1 passed, 1 failed, 1 skipped\n"
        );
        assert!(!r.ok());
    }

    #[test]
    fn expect_turns_a_skip_into_a_failure_and_the_baseline_forgives_one() {
        let filters = Filters {
            expect: ["load".to_string()].into(),
            baseline: Filters::parse_baseline(
                "# known\nprompt.no-update-after-response  # issue 4\nprompt.text\n",
            ),
            ..Filters::default()
        };
        let r = report(&filters);
        let s = r.summary();
        assert_eq!((s.passed, s.failed, s.skipped, s.known), (1, 1, 0, 1));
        assert!(r.results[0].now_passes);
        assert!(
            r.results[2]
                .outcome
                .reason
                .starts_with("skipped, but --expect claims load")
        );
        let junit = r.junit();
        assert!(!junit.contains("<failure message=\"an update &lt;late&gt;\">"));
        assert!(
            junit.contains("known failure (baseline): an update &lt;late&gt;"),
            "{junit}"
        );
        assert!(junit.contains("failures=\"1\""), "{junit}");
        assert_eq!(r.json()["summary"]["known"], 1);
    }

    #[test]
    fn only_and_skip_select_by_name_or_prefix() {
        let f = Filters {
            only: vec!["rpc.".into(), "prompt.text".into()],
            skip: vec!["rpc.exit".into()],
            ..Filters::default()
        };
        assert!(f.selects("rpc.parse-error"));
        assert!(f.selects("prompt.text"));
        assert!(!f.selects("rpc.exit-on-eof"));
        assert!(!f.selects("session.new"));
    }
}
