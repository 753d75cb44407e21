//! Permission requests (`session/request_permission`): the policies that
//! answer them without asking ([`decide`]) and the questions asked on the
//! terminal when the policy is to ask.

use crate::tty::Tty;
use acp::schema::*;

/// How permission requests are answered.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum PermissionPolicy {
    /// Allow everything (`--approve-all`).
    ApproveAll,
    /// Allow tool calls of kind `read` or `search`, deny the rest
    /// (`--approve-reads`).
    ApproveReads,
    /// Deny everything (`--deny-all`; the default without a terminal).
    DenyAll,
    /// Ask on the controlling terminal.
    Ask,
}

/// What the policy decided for one request.
#[derive(Debug, Clone, PartialEq)]
pub enum Decision {
    /// Pick this allowing option.
    Allow(PermissionOption),
    /// Pick this rejecting option.
    Reject(PermissionOption),
    /// Answer `cancelled` (no fitting option, or the turn was cancelled).
    Cancel,
}

/// Picks the option that carries out `allow` (allow_once before
/// allow_always; reject_once before reject_always).
pub fn pick_option(options: &[PermissionOption], allow: bool) -> Decision {
    let order: [PermissionOptionKind; 2] = if allow {
        [
            PermissionOptionKind::AllowOnce,
            PermissionOptionKind::AllowAlways,
        ]
    } else {
        [
            PermissionOptionKind::RejectOnce,
            PermissionOptionKind::RejectAlways,
        ]
    };
    for kind in order {
        if let Some(option) = options.iter().find(|o| o.kind == kind) {
            return if allow {
                Decision::Allow(option.clone())
            } else {
                Decision::Reject(option.clone())
            };
        }
    }
    Decision::Cancel
}

/// Decides a request under a non-interactive policy; `None` for
/// [`PermissionPolicy::Ask`].
pub fn decide(
    policy: PermissionPolicy,
    kind: Option<&ToolKind>,
    options: &[PermissionOption],
) -> Option<Decision> {
    let allow = match policy {
        PermissionPolicy::ApproveAll => true,
        PermissionPolicy::ApproveReads => matches!(kind, Some(ToolKind::Read | ToolKind::Search)),
        PermissionPolicy::DenyAll => false,
        PermissionPolicy::Ask => return None,
    };
    Some(match pick_option(options, allow) {
        // An approving policy with no allow option still must not hang.
        Decision::Cancel if allow => pick_option(options, false),
        other => other,
    })
}

/// Chat: the permission question, with numbered options and their kinds.
pub(crate) fn ask_permission(
    tty: &mut Tty,
    title: &str,
    kind: Option<&str>,
    options: &[PermissionOption],
    color: bool,
) -> Decision {
    let style = crate::style::Style::new(color);
    let kind = kind.map(|k| format!(" ({k})")).unwrap_or_default();
    let mut text = format!("{} {title}{kind}\n", style.yellow_bold("? Permission:"));
    for (i, option) in options.iter().enumerate() {
        text.push_str(&format!(
            "  {}) {} {}\n",
            i + 1,
            option.name,
            style.dim(&format!("[{}]", option.kind))
        ));
    }
    tty.write(&text);
    loop {
        let Some(line) = tty.ask(&format!("Choose 1-{}: ", options.len())) else {
            tty.write("\n");
            return Decision::Cancel;
        };
        if let Some(decision) = chosen(&line, options) {
            return decision;
        }
    }
}

/// `acp exec`: asks on the terminal in plain words; end of input counts as
/// a rejection.
pub(crate) fn ask_on_tty(tty: &mut Tty, title: &str, options: &[PermissionOption]) -> Decision {
    loop {
        let mut text = format!("The agent asks permission: {title}\n");
        for (i, option) in options.iter().enumerate() {
            text.push_str(&format!("  {}) {} [{}]\n", i + 1, option.name, option.kind));
        }
        tty.write(&text);
        let Some(line) = tty.ask(&format!("Choose 1-{}: ", options.len())) else {
            return pick_option(options, false);
        };
        if let Some(decision) = chosen(&line, options) {
            return decision;
        }
    }
}

/// The decision an answer like `2` picks, if it names an option.
fn chosen(line: &str, options: &[PermissionOption]) -> Option<Decision> {
    let option = line
        .trim()
        .parse::<usize>()
        .ok()
        .and_then(|n| n.checked_sub(1))
        .and_then(|i| options.get(i))?;
    Some(match option.kind {
        PermissionOptionKind::AllowOnce | PermissionOptionKind::AllowAlways => {
            Decision::Allow(option.clone())
        }
        _ => Decision::Reject(option.clone()),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn options() -> Vec<PermissionOption> {
        vec![
            PermissionOption::new("always", "Always", PermissionOptionKind::AllowAlways),
            PermissionOption::new("once", "Once", PermissionOptionKind::AllowOnce),
            PermissionOption::new("never", "Never", PermissionOptionKind::RejectAlways),
            PermissionOption::new("no", "No", PermissionOptionKind::RejectOnce),
        ]
    }

    fn id(d: Option<Decision>) -> String {
        match d.unwrap() {
            Decision::Allow(o) => format!("allow {}", o.option_id),
            Decision::Reject(o) => format!("reject {}", o.option_id),
            Decision::Cancel => "cancel".to_owned(),
        }
    }

    #[test]
    fn policies_pick_matching_kinds() {
        let o = options();
        assert_eq!(
            id(decide(PermissionPolicy::ApproveAll, None, &o)),
            "allow once"
        );
        assert_eq!(id(decide(PermissionPolicy::DenyAll, None, &o)), "reject no");
        assert_eq!(
            id(decide(
                PermissionPolicy::ApproveReads,
                Some(&ToolKind::Read),
                &o
            )),
            "allow once"
        );
        assert_eq!(
            id(decide(
                PermissionPolicy::ApproveReads,
                Some(&ToolKind::Search),
                &o
            )),
            "allow once"
        );
        assert_eq!(
            id(decide(
                PermissionPolicy::ApproveReads,
                Some(&ToolKind::Edit),
                &o
            )),
            "reject no"
        );
        assert_eq!(
            id(decide(PermissionPolicy::ApproveReads, None, &o)),
            "reject no"
        );
        assert!(decide(PermissionPolicy::Ask, None, &o).is_none());
        let only_always = vec![o[0].clone(), o[2].clone()];
        assert_eq!(
            id(decide(PermissionPolicy::ApproveAll, None, &only_always)),
            "allow always"
        );
        assert_eq!(
            id(decide(PermissionPolicy::DenyAll, None, &only_always)),
            "reject never"
        );
        let only_allow = vec![o[1].clone()];
        assert_eq!(
            id(decide(PermissionPolicy::DenyAll, None, &only_allow)),
            "cancel"
        );
        let only_reject = vec![o[3].clone()];
        assert_eq!(
            id(decide(PermissionPolicy::ApproveAll, None, &only_reject)),
            "reject no"
        );
    }

    #[test]
    fn an_answer_picks_the_option_it_numbers() {
        let o = options();
        assert_eq!(id(chosen(" 1 ", &o)), "allow always");
        assert_eq!(id(chosen("3", &o)), "reject never");
        assert!(chosen("0", &o).is_none());
        assert!(chosen("5", &o).is_none());
        assert!(chosen("yes", &o).is_none());
    }
}
