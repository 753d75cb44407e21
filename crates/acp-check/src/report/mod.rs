//! The report: one result per check, its requirement and tier, the
//! filters, and the verdict; `render` writes it as text, JSON or JUnit.

mod render;

use std::collections::BTreeSet;
use std::fmt::Write as _;

/// How a check ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Status {
    /// The peer did what the protocol asks.
    Pass,
    /// It did not.
    Fail,
    /// The check could not be judged (a feature not advertised, a step before it failed,
    /// a cancel the turn's end outran).
    Skip,
    /// The check needed a peer that had stopped answering (it cost one
    /// timeout already); the reason names the request it did not answer.
    NotTested,
}

impl Status {
    /// `PASS`, `FAIL`, `SKIP` or `NOT TESTED`.
    pub fn as_str(self) -> &'static str {
        match self {
            Status::Pass => "PASS",
            Status::Fail => "FAIL",
            Status::Skip => "SKIP",
            Status::NotTested => "NOT TESTED",
        }
    }
}

/// How much a requirement weighs in the verdict (the official kit's tiers).
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Tier {
    /// A MUST of the protocol: a failure makes the peer not conformant.
    Mandatory,
    /// Applies only when the peer advertised (or uses) the feature; then it
    /// must work: a failure makes the peer not conformant.
    Capability,
    /// A SHOULD: reported, never decides the verdict.
    Advisory,
    /// Behaviour the protocol leaves open: recorded, never decides the verdict.
    Informational,
}

impl Tier {
    /// Every tier, in the order the report lists them.
    pub const ALL: [Tier; 4] = [
        Tier::Mandatory,
        Tier::Capability,
        Tier::Advisory,
        Tier::Informational,
    ];

    /// `MANDATORY`, `CAPABILITY`, `ADVISORY` or `INFORMATIONAL`.
    pub fn as_str(self) -> &'static str {
        match self {
            Tier::Mandatory => "MANDATORY",
            Tier::Capability => "CAPABILITY",
            Tier::Advisory => "ADVISORY",
            Tier::Informational => "INFORMATIONAL",
        }
    }

    /// Whether a failure of this tier decides the verdict.
    pub fn decides(self) -> bool {
        matches!(self, Tier::Mandatory | Tier::Capability)
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
    /// The wire lines involved (for a failure: the request and what came
    /// back, or the offending line), each cut to [`LINE_CHARS`].
    pub lines: Vec<String>,
}

/// The longest offending message quoted in a report.
pub const MESSAGE_CHARS: usize = 240;

/// The longest wire line kept in [`Outcome::lines`].
pub const LINE_CHARS: usize = 4096;

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
            lines: Vec::new(),
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

    /// A requirement that could not be tested: the peer had stopped answering.
    pub fn not_tested(reason: impl Into<String>) -> Outcome {
        Outcome {
            status: Status::NotTested,
            reason: reason.into(),
            ..Outcome::pass()
        }
    }

    /// The same outcome quoting the offending message (shortened), which is
    /// also kept among the [`lines`](Outcome::lines) involved.
    #[must_use]
    pub fn with_message(mut self, line: &str) -> Outcome {
        self.message = Some(shorten(line, MESSAGE_CHARS));
        self.push_line(line);
        self
    }

    /// The same outcome with more wire lines involved (the request that was
    /// answered wrongly, say).
    #[must_use]
    pub fn with_lines<'a>(mut self, lines: impl IntoIterator<Item = &'a str>) -> Outcome {
        for line in lines {
            self.push_line(line);
        }
        self
    }

    fn push_line(&mut self, line: &str) {
        let line = shorten(line, LINE_CHARS);
        if !self.lines.contains(&line) {
            self.lines.push(line);
        }
    }

    /// The same outcome with notes.
    #[must_use]
    pub fn with_notes(mut self, notes: impl IntoIterator<Item = String>) -> Outcome {
        self.notes.extend(notes);
        self
    }
}

/// What a check is judged as: its requirement.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Requirement<'a> {
    /// The requirement id (the check's name, `area.what`).
    pub name: &'a str,
    /// The area it belongs to.
    pub area: &'a str,
    /// The protocol docs section (a URL).
    pub doc: &'a str,
    /// The feature it needs, for `--expect`.
    pub feature: Option<&'a str>,
    /// Its tier.
    pub tier: Tier,
    /// The official kit's id of the same requirement (`ACP-INIT-001`), if it has one.
    pub kit: Option<&'a str>,
}

/// The result of one check in a report.
#[derive(Debug, Clone, PartialEq)]
pub struct CheckResult {
    /// The requirement id: `area.what`.
    pub name: String,
    /// Its tier.
    pub tier: Tier,
    /// The official kit's id of the same requirement, if it has one.
    pub kit: Option<String>,
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
    /// A failure because `--expect` claimed the feature it needs (decides
    /// the verdict whatever the tier).
    pub claimed: bool,
}

impl CheckResult {
    /// Whether this result makes the peer not conformant: a failure of a
    /// MANDATORY or CAPABILITY requirement, or of a claimed feature.
    pub fn decides(&self) -> bool {
        self.outcome.status == Status::Fail && (self.tier.decides() || self.claimed)
    }

    /// The one-line form of the text report (`  FAIL name (KIT): reason`),
    /// with the message, notes and docs link on the lines below.
    pub fn text(&self) -> String {
        let mut out = String::new();
        let o = &self.outcome;
        let _ = write!(out, "  {} {}", o.status.as_str(), self.name);
        if let Some(kit) = &self.kit {
            let _ = write!(out, " ({kit})");
        }
        if !o.reason.is_empty() {
            let _ = write!(out, ": {}", o.reason);
        }
        if self.known {
            out.push_str(" (known: in the baseline)");
        }
        if self.now_passes {
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
            let _ = writeln!(out, "       see: {}", self.doc);
        }
        out
    }
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
    pub fn judge(&self, req: Requirement<'_>, mut outcome: Outcome) -> CheckResult {
        let mut claimed = false;
        if outcome.status == Status::Skip
            && let Some(f) = req.feature
            && self.expect.contains(f)
        {
            outcome.status = Status::Fail;
            outcome.reason = format!("skipped, but --expect claims {f}: {}", outcome.reason);
            claimed = true;
        }
        let listed = self.baseline.contains(req.name);
        CheckResult {
            name: req.name.to_string(),
            tier: req.tier,
            kit: req.kit.map(str::to_string),
            area: req.area.to_string(),
            doc: req.doc.to_string(),
            known: listed && outcome.status == Status::Fail,
            now_passes: listed && outcome.status == Status::Pass,
            claimed,
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
    /// Checks not tested: the peer had stopped answering.
    pub not_tested: usize,
    /// Failures listed in the baseline.
    pub known: usize,
    /// Failures that decide the verdict (MANDATORY, CAPABILITY, or a
    /// claimed feature), baseline or not.
    pub deciding: usize,
}

/// The counts of one tier: passed, failed, skipped, not tested.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct TierCount {
    /// Passed.
    pub passed: usize,
    /// Failed (baseline or not).
    pub failed: usize,
    /// Skipped.
    pub skipped: usize,
    /// Not tested.
    pub not_tested: usize,
}

impl Report {
    /// The counts.
    pub fn summary(&self) -> Summary {
        let mut s = Summary::default();
        for r in &self.results {
            match r.outcome.status {
                Status::Pass => s.passed += 1,
                Status::Skip => s.skipped += 1,
                Status::NotTested => s.not_tested += 1,
                Status::Fail if r.known => s.known += 1,
                Status::Fail => s.failed += 1,
            }
            if r.decides() {
                s.deciding += 1;
            }
        }
        s
    }

    /// The counts of `tier`.
    pub fn tier_count(&self, tier: Tier) -> TierCount {
        let mut c = TierCount::default();
        for r in self.results.iter().filter(|r| r.tier == tier) {
            match r.outcome.status {
                Status::Pass => c.passed += 1,
                Status::Fail => c.failed += 1,
                Status::Skip => c.skipped += 1,
                Status::NotTested => c.not_tested += 1,
            }
        }
        c
    }

    /// The verdict: no MANDATORY or CAPABILITY requirement (nor a feature
    /// claimed with `--expect`) failed. ADVISORY and INFORMATIONAL results
    /// never decide it; the baseline does not change it.
    pub fn conformant(&self) -> bool {
        !self.results.iter().any(CheckResult::decides)
    }

    /// Whether the run succeeds (exit 0): conformant, or every failure that
    /// decides the verdict is listed in the baseline.
    pub fn ok(&self) -> bool {
        !self.results.iter().any(|r| r.decides() && !r.known)
    }

    /// `VERDICT: CONFORMANT` or `VERDICT: NOT CONFORMANT`.
    pub fn verdict(&self) -> &'static str {
        if self.conformant() {
            "VERDICT: CONFORMANT"
        } else {
            "VERDICT: NOT CONFORMANT"
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn req(name: &str, tier: Tier, kit: Option<&'static str>) -> Requirement<'static> {
        Requirement {
            name: Box::leak(name.to_string().into_boxed_str()),
            area: Box::leak(name.split('.').next().unwrap().to_string().into_boxed_str()),
            doc: "https://agentclientprotocol.com/protocol/prompt-turn",
            feature: if name == "session.load" {
                Some("load")
            } else {
                None
            },
            tier,
            kit,
        }
    }

    fn report(filters: &Filters) -> Report {
        Report {
            side: "agent".into(),
            command: "my-agent".into(),
            results: vec![
                filters.judge(
                    req("prompt.text", Tier::Mandatory, Some("ACP-PROMPT-001")),
                    Outcome::pass(),
                ),
                filters.judge(
                    req("prompt.no-update-after-response", Tier::Mandatory, None),
                    Outcome::fail("an update <late>").with_message("{\"a\":1}"),
                ),
                filters.judge(
                    req("session.load", Tier::Capability, Some("ACP-LOAD-002")),
                    Outcome::skip("not advertised"),
                ),
                filters.judge(
                    req(
                        "rpc.parse-error",
                        Tier::Informational,
                        Some("ACP-INFO-PARSE-001"),
                    ),
                    Outcome::fail("no answer").with_message("{"),
                ),
            ],
        }
    }

    #[test]
    fn the_text_report_groups_by_tier_and_ends_with_the_counts_and_the_verdict() {
        let r = report(&Filters::default());
        assert_eq!(
            r.text(),
            "acp check agent: my-agent\n\
             \nMANDATORY\n\
             \x20 PASS prompt.text (ACP-PROMPT-001)\n\
             \x20 FAIL prompt.no-update-after-response: an update <late>\n\
             \x20      message: {\"a\":1}\n\
             \x20      see: https://agentclientprotocol.com/protocol/prompt-turn\n\
             \nCAPABILITY\n\
             \x20 SKIP session.load (ACP-LOAD-002): not advertised\n\
             \nINFORMATIONAL (open behaviour: recorded only)\n\
             \x20 FAIL rpc.parse-error (ACP-INFO-PARSE-001): no answer\n\
             \x20      message: {\n\
             \x20      see: https://agentclientprotocol.com/protocol/prompt-turn\n\
             \nMANDATORY: 1 passed, 1 failed, 0 skipped\n\
             CAPABILITY: 0 passed, 0 failed, 1 skipped\n\
             ADVISORY: 0 passed, 0 failed, 0 skipped\n\
             INFORMATIONAL: 0 passed, 1 failed, 0 skipped\n\
             1 passed, 2 failed, 1 skipped\n\
             VERDICT: NOT CONFORMANT\n"
        );
        assert!(!r.ok());
        assert!(!r.conformant());
    }

    #[test]
    fn only_mandatory_and_capability_failures_decide_the_verdict() {
        let mut r = report(&Filters::default());
        r.results.remove(1);
        assert!(r.conformant(), "{}", r.text());
        assert!(r.ok());
        assert!(r.text().ends_with("VERDICT: CONFORMANT\n"), "{}", r.text());
        let junit = r.junit();
        assert!(junit.contains("failures=\"0\""), "{junit}");
        assert!(
            junit.contains("INFORMATIONAL failure (does not decide the verdict): no answer"),
            "{junit}"
        );
        let json = r.json();
        assert_eq!(json["verdict"], "CONFORMANT");
        assert_eq!(json["checks"][2]["id"], "rpc.parse-error");
        assert_eq!(json["checks"][2]["tier"], "INFORMATIONAL");
        assert_eq!(json["checks"][2]["kit"], "ACP-INFO-PARSE-001");
        assert_eq!(json["checks"][2]["lines"], serde_json::json!(["{"]));
        assert_eq!(json["checks"][0]["lines"], serde_json::json!([]));
        assert_eq!(json["summary"]["tiers"]["INFORMATIONAL"]["failed"], 1);
    }

    #[test]
    fn expect_turns_a_skip_into_a_deciding_failure_and_the_baseline_forgives_one() {
        let filters = Filters {
            expect: ["load".to_string()].into(),
            baseline: Filters::parse_baseline(
                "# known\nprompt.no-update-after-response  # issue 4\nprompt.text\nsession.load\n",
            ),
            ..Filters::default()
        };
        let r = report(&filters);
        let s = r.summary();
        assert_eq!((s.passed, s.failed, s.skipped, s.known), (1, 1, 0, 2));
        assert!(r.results[0].now_passes);
        assert!(r.results[2].claimed);
        assert!(
            r.results[2]
                .outcome
                .reason
                .starts_with("skipped, but --expect claims load")
        );
        // Every deciding failure is in the baseline: the verdict stays, the run succeeds.
        assert!(!r.conformant());
        assert!(r.ok());
        assert!(
            r.text()
                .ends_with("VERDICT: NOT CONFORMANT (every deciding failure is in the baseline)\n"),
            "{}",
            r.text()
        );
        let junit = r.junit();
        assert!(!junit.contains("<failure message=\"an update &lt;late&gt;\">"));
        assert!(
            junit.contains("known failure (baseline): an update &lt;late&gt;"),
            "{junit}"
        );
        assert!(junit.contains("failures=\"0\""), "{junit}");
        assert_eq!(r.json()["summary"]["known"], 2);
    }

    #[test]
    fn a_not_tested_result_is_counted_and_does_not_decide() {
        let r = Report {
            side: "agent".into(),
            command: "a".into(),
            results: vec![Filters::default().judge(
                req("session.new", Tier::Mandatory, None),
                Outcome::not_tested("the peer stopped answering"),
            )],
        };
        assert!(r.conformant());
        assert!(
            r.text()
                .contains("  NOT TESTED session.new: the peer stopped answering\n"),
            "{}",
            r.text()
        );
        assert!(
            r.text()
                .contains("MANDATORY: 0 passed, 0 failed, 0 skipped, 1 not tested\n")
        );
        assert_eq!(r.summary().not_tested, 1);
        assert!(
            r.junit()
                .contains("<skipped message=\"the peer stopped answering\"/>")
        );
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
