//! Checks as data, and running a list of them.

use crate::report::{CheckResult, Filters, Outcome, Requirement, Status, Tier};
use crate::wire::Log;
use std::future::Future;
use std::pin::Pin;
use std::time::Duration;

/// What a check's run function returns.
pub type Run<'a> = Pin<Box<dyn Future<Output = Outcome> + Send + 'a>>;

/// One check, run against a context `C` (the life of the peer under test).
pub struct Check<C> {
    /// `area.what`, unique in its list.
    pub name: &'static str,
    /// What the report groups it under.
    pub area: &'static str,
    /// The protocol docs section the rule comes from.
    pub doc: &'static str,
    /// The feature it needs, for `--expect` (none: every peer must pass it).
    pub feature: Option<&'static str>,
    /// How much it weighs in the verdict.
    pub tier: Tier,
    /// The official kit's id of the same requirement (`ACP-INIT-001`), if
    /// the kit has it.
    pub kit: Option<&'static str>,
    /// One sentence: what passes.
    pub rule: &'static str,
    /// Runs it.
    pub run: for<'a> fn(&'a mut C) -> Run<'a>,
}

impl<C> std::fmt::Debug for Check<C> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Check").field("name", &self.name).finish()
    }
}

/// The protocol docs.
pub const DOCS: &str = "https://agentclientprotocol.com/protocol/";

/// The longest a single check may take, however it waits.
pub const CHECK_LIMIT: Duration = Duration::from_secs(120);

/// Runs the checks `filters` selects, in order, and judges each outcome;
/// `decided` sees each result as soon as it is decided (the streamed
/// report). A failure that quotes no line carries the last lines exchanged
/// while its check ran. A check during which a wait was cut short because its peer had
/// stopped answering (see [`Wire::stall_after`](crate::wire::Wire::stall_after))
/// is NOT TESTED, unless it passed.
pub async fn run_all<C: Send>(
    checks: &[Check<C>],
    cx: &mut C,
    log: &Log,
    filters: &Filters,
    decided: &mut (dyn FnMut(&CheckResult) + Send),
) -> Vec<CheckResult> {
    let mut results = Vec::new();
    for check in checks {
        if !filters.selects(check.name) {
            continue;
        }
        let cut_short = log.cut_short();
        let from = log.len();
        let mut outcome = match tokio::time::timeout(CHECK_LIMIT, (check.run)(cx)).await {
            Ok(outcome) => outcome,
            Err(_) => Outcome::fail(format!(
                "the check did not finish within {} s",
                CHECK_LIMIT.as_secs()
            )),
        };
        if log.cut_short() > cut_short && outcome.status != Status::Pass {
            let why = outcome.reason.clone();
            outcome = Outcome::not_tested(match why.find(crate::wire::STOPPED_ANSWERING) {
                Some(_) => why,
                None => format!(
                    "not tested: the peer {} earlier ({why})",
                    crate::wire::STOPPED_ANSWERING
                ),
            });
        }
        if outcome.status == Status::Fail && outcome.lines.is_empty() {
            outcome = outcome.with_lines(wire_lines(log, from).iter().map(String::as_str));
        }
        let doc = format!("{DOCS}{}", check.doc);
        let req = Requirement {
            name: check.name,
            area: check.area,
            doc: &doc,
            feature: check.feature,
            tier: check.tier,
            kit: check.kit,
        };
        let result = filters.judge(req, outcome);
        decided(&result);
        results.push(result);
    }
    results
}

/// How many lines of the wire a failure carries when its check named none.
pub const FAILURE_LINES: usize = 10;

/// The last [`FAILURE_LINES`] lines exchanged from log place `from` on,
/// `> ` before a line to the peer, `< ` before one from it.
fn wire_lines(log: &Log, from: usize) -> Vec<String> {
    let events = log.since(from);
    let skip = events.len().saturating_sub(FAILURE_LINES);
    events
        .iter()
        .skip(skip)
        .map(|e| {
            let dir = match e.dir {
                crate::wire::Dir::Out => '>',
                crate::wire::Dir::In => '<',
            };
            format!("{dir} {}", e.line)
        })
        .collect()
}

/// The check list as a Markdown table (for the README): the requirement
/// id, its tier, the official kit's id of it, the feature, the rule and
/// the docs section.
pub fn markdown<C>(checks: &[Check<C>]) -> String {
    let mut out = String::from(
        "| requirement | tier | kit | feature | rule | docs |\n| --- | --- | --- | --- | --- | --- |\n",
    );
    for c in checks {
        out.push_str(&format!(
            "| `{}` | {} | {} | {} | {} | [{}]({DOCS}{}) |\n",
            c.name,
            c.tier.as_str(),
            c.kit.map(|k| format!("`{k}`")).unwrap_or_default(),
            c.feature.unwrap_or(""),
            c.rule,
            c.doc,
            c.doc
        ));
    }
    out
}

/// For the README tests: whether `readme` holds `table` right after the
/// heading `heading`; with `BLESS=1` in the environment a stale table there
/// is rewritten in the file (and the test passes).
#[cfg(test)]
pub(crate) fn readme_has(heading: &str, table: &str) -> bool {
    // The agent's and the client's tests run in parallel on the one file.
    static README: std::sync::Mutex<()> = std::sync::Mutex::new(());
    let _only_one = README.lock().unwrap_or_else(|e| e.into_inner());
    let path = concat!(env!("CARGO_MANIFEST_DIR"), "/README.md");
    let readme = std::fs::read_to_string(path).expect("README.md");
    if readme.contains(table) {
        return true;
    }
    if std::env::var_os("BLESS").is_none() {
        return false;
    }
    let at = readme.find(heading).expect("the heading is in the README");
    let start = at + readme[at..].find("\n|").expect("a table after the heading") + 1;
    let end = start
        + readme[start..]
            .find("\n\n")
            .map(|n| n + 1)
            .unwrap_or(readme.len() - start);
    let blessed = format!("{}{}{}", &readme[..start], table, &readme[end..]);
    std::fs::write(path, blessed).expect("README.md written");
    true
}
