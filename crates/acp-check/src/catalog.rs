//! Checks as data, and running a list of them.

use crate::report::{CheckResult, Filters, Outcome};
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

/// Runs the checks `filters` selects, in order, and judges each outcome.
pub async fn run_all<C: Send>(
    checks: &[Check<C>],
    cx: &mut C,
    filters: &Filters,
) -> Vec<CheckResult> {
    let mut results = Vec::new();
    for check in checks {
        if !filters.selects(check.name) {
            continue;
        }
        let outcome = match tokio::time::timeout(CHECK_LIMIT, (check.run)(cx)).await {
            Ok(outcome) => outcome,
            Err(_) => Outcome::fail(format!(
                "the check did not finish within {} s",
                CHECK_LIMIT.as_secs()
            )),
        };
        let doc = format!("{DOCS}{}", check.doc);
        results.push(filters.judge(check.name, check.area, &doc, check.feature, outcome));
    }
    results
}

/// The check list as a Markdown table (for the README).
pub fn markdown<C>(checks: &[Check<C>]) -> String {
    let mut out = String::from("| check | feature | rule | docs |\n| --- | --- | --- | --- |\n");
    for c in checks {
        out.push_str(&format!(
            "| `{}` | {} | {} | [{}]({DOCS}{}) |\n",
            c.name,
            c.feature.unwrap_or(""),
            c.rule,
            c.doc,
            c.doc
        ));
    }
    out
}
