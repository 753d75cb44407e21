//! The report's renderers: text grouped by tier, JSON, and JUnit XML.

use super::{CheckResult, Report, Status, Tier};
use serde_json::{Value, json};
use std::fmt::Write as _;

impl Report {
    /// The header line of the text report (printed first when results stream).
    pub fn header(side: &str, command: &str) -> String {
        format!("acp check {side}: {command}\n")
    }

    /// The text report: the results grouped by tier (in run order within
    /// one), the counts per tier, the totals, and the verdict last.
    pub fn text(&self) -> String {
        let mut out = Report::header(&self.side, &self.command);
        out.push_str(&self.tiers_text());
        out
    }

    /// The text report without its header: what follows the streamed results.
    pub fn tiers_text(&self) -> String {
        let mut out = String::new();
        for tier in Tier::ALL {
            let of_tier: Vec<&CheckResult> =
                self.results.iter().filter(|r| r.tier == tier).collect();
            if of_tier.is_empty() {
                continue;
            }
            let _ = writeln!(out, "\n{}{}", tier.as_str(), tier_note(tier));
            for r in of_tier {
                out.push_str(&r.text());
            }
        }
        out.push('\n');
        for tier in Tier::ALL {
            let c = self.tier_count(tier);
            let _ = write!(
                out,
                "{}: {} passed, {} failed, {} skipped",
                tier.as_str(),
                c.passed,
                c.failed,
                c.skipped
            );
            if c.not_tested > 0 {
                let _ = write!(out, ", {} not tested", c.not_tested);
            }
            out.push('\n');
        }
        let s = self.summary();
        let _ = write!(
            out,
            "{} passed, {} failed, {} skipped",
            s.passed, s.failed, s.skipped
        );
        if s.not_tested > 0 {
            let _ = write!(out, ", {} not tested", s.not_tested);
        }
        if s.known > 0 {
            let _ = write!(out, " ({} known failures in the baseline)", s.known);
        }
        out.push('\n');
        out.push_str(self.verdict());
        if !self.conformant() && self.ok() {
            out.push_str(" (every deciding failure is in the baseline)");
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
                let failed = r.outcome.status == Status::Fail;
                json!({
                    "id": r.name,
                    "name": r.name,
                    "tier": r.tier.as_str(),
                    "kit": r.kit,
                    "area": r.area,
                    "doc": r.doc,
                    "status": r.outcome.status.as_str(),
                    "reason": r.outcome.reason,
                    "message": r.outcome.message,
                    "notes": r.outcome.notes,
                    "lines": if failed { r.outcome.lines.clone() } else { Vec::new() },
                    "baseline": r.known || r.now_passes,
                    "decides": r.decides(),
                })
            })
            .collect();
        let mut tiers = serde_json::Map::new();
        for tier in Tier::ALL {
            let c = self.tier_count(tier);
            tiers.insert(
                tier.as_str().to_string(),
                json!({
                    "passed": c.passed,
                    "failed": c.failed,
                    "skipped": c.skipped,
                    "not_tested": c.not_tested,
                }),
            );
        }
        json!({
            "side": self.side,
            "command": self.command,
            "checks": checks,
            "summary": {
                "passed": s.passed,
                "failed": s.failed,
                "skipped": s.skipped,
                "not_tested": s.not_tested,
                "known": s.known,
                "tiers": tiers,
            },
            "conformant": self.conformant(),
            "verdict": if self.conformant() { "CONFORMANT" } else { "NOT CONFORMANT" },
        })
    }

    /// The report as JUnit XML: one test suite, one test case per check.
    pub fn junit(&self) -> String {
        let failures = self
            .results
            .iter()
            .filter(|r| r.decides() && !r.known)
            .count();
        let skipped = self.results.len() - failures - self.summary().passed;
        let mut out = String::from("<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n");
        let _ = writeln!(
            out,
            "<testsuites><testsuite name=\"acp check {}\" tests=\"{}\" failures=\"{}\" skipped=\"{}\">",
            xml(&self.side),
            self.results.len(),
            failures,
            skipped
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
                Status::Skip | Status::NotTested => {
                    let _ = write!(out, "<skipped message=\"{}\"/>", xml(&o.reason));
                }
                Status::Fail if r.known || !r.decides() => {
                    let why = if r.known {
                        "known failure (baseline)".to_string()
                    } else {
                        format!("{} failure (does not decide the verdict)", r.tier.as_str())
                    };
                    let _ = write!(
                        out,
                        "<skipped message=\"{}: {}\"/>",
                        xml(&why),
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

fn tier_note(tier: Tier) -> &'static str {
    match tier {
        Tier::Mandatory | Tier::Capability => "",
        Tier::Advisory => " (a SHOULD: reported, does not decide the verdict)",
        Tier::Informational => " (open behaviour: recorded only)",
    }
}

/// `text` for an XML attribute or element of the JUnit report: escaped by
/// quick-xml, with the characters XML 1.0 cannot hold in any form (control
/// characters other than tab, line feed and carriage return; U+FFFE and
/// U+FFFF) replaced by U+FFFD, so a peer's stray byte cannot make the file
/// unreadable to a CI server.
fn xml(text: &str) -> String {
    let forbidden = |c: char| {
        (c < ' ' && !matches!(c, '\t' | '\n' | '\r')) || matches!(c, '\u{FFFE}' | '\u{FFFF}')
    };
    if text.contains(forbidden) {
        let kept: String = text
            .chars()
            .map(|c| if forbidden(c) { '\u{FFFD}' } else { c })
            .collect();
        quick_xml::escape::escape(&kept).into_owned()
    } else {
        quick_xml::escape::escape(text).into_owned()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn junit_text_is_escaped_and_holds_only_xml_characters() {
        assert_eq!(
            xml("<a href='x'>\"&\"</a>\ttab\nline"),
            "&lt;a href=&apos;x&apos;&gt;&quot;&amp;&quot;&lt;/a&gt;\ttab\nline"
        );
        assert_eq!(
            xml("bell\u{7} esc\u{1b}[0m nul\0 \u{FFFF}"),
            "bell\u{FFFD} esc\u{FFFD}[0m nul\u{FFFD} \u{FFFD}"
        );
    }
}
