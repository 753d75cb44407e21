//! What the agent may write and run: the [`Gate`] in front of
//! `fs/write_text_file` and `terminal/create`.
//!
//! A permission request the user (or a policy flag) granted becomes a
//! *grant* for the rest of the turn: a grant of a tool call of kind `edit`,
//! `delete` or `move` lets the agent write the files that tool call names in
//! its locations (any file, when it names none); a grant of kind `execute`
//! lets it start terminals; a grant of kind `other` (or none, or one this
//! version does not know) does both. A
//! write or a terminal with no grant behind it is asked about when a person
//! can answer, and refused otherwise.
//!
//! | policy | permission requests | `fs/write_text_file` | `terminal/create` |
//! | --- | --- | --- | --- |
//! | `--approve-all` | allowed | allowed | allowed |
//! | default (ask) | asked | after a grant this turn, else asked | after a grant this turn, else asked |
//! | `--approve-reads` | read and search allowed, the rest denied | never (not offered) | never (not offered) |
//! | `--deny-all` | denied | never (not offered) | never (not offered) |
//!
//! Protected paths need a grant that names them in every policy that lets
//! the agent write: anything inside a `.git` directory (hooks and config run
//! code on the next git command) and acp's own config directory.

use crate::host::permission::PermissionPolicy;
use acp::schema::{Error, ErrorCode, SessionId, ToolKind};
use std::path::{Component, Path, PathBuf};
use std::sync::{Mutex, PoisonError};

/// A granted permission request, valid until the turn ends.
#[derive(Debug, Clone)]
struct Grant {
    session: SessionId,
    kind: Option<ToolKind>,
    /// The files the tool call named (resolved).
    locations: Vec<PathBuf>,
}

impl Grant {
    fn writes(&self) -> bool {
        matches!(
            self.kind,
            None | Some(
                ToolKind::Edit
                    | ToolKind::Delete
                    | ToolKind::Move
                    | ToolKind::OtherKind
                    | ToolKind::Other(_)
            )
        )
    }

    fn runs(&self) -> bool {
        matches!(
            self.kind,
            None | Some(ToolKind::Execute | ToolKind::OtherKind | ToolKind::Other(_))
        )
    }

    fn names(&self, path: &Path) -> bool {
        self.locations.iter().any(|l| l == path)
    }
}

/// What the gate says about one write or terminal.
#[derive(Debug, Clone, PartialEq)]
pub enum Verdict {
    /// Go ahead.
    Allow,
    /// Ask the user this question (refuse where nobody can answer).
    Ask(String),
    /// Refuse with this error.
    Refuse(Error),
}

/// Decides writes and terminals from the policy and the turn's grants.
#[derive(Debug)]
pub struct Gate {
    policy: PermissionPolicy,
    protected: Vec<PathBuf>,
    grants: Mutex<Vec<Grant>>,
}

impl Gate {
    /// A gate for `policy`; `protected` are directories that, besides
    /// `.git`, always need a grant naming the file.
    pub fn new(policy: PermissionPolicy, protected: Vec<PathBuf>) -> Self {
        Gate {
            policy,
            protected,
            grants: Mutex::new(Vec::new()),
        }
    }

    /// Whether the policy lets the agent write at all (and so whether
    /// `fs.writeTextFile` is advertised).
    pub fn offers_writes(&self) -> bool {
        matches!(
            self.policy,
            PermissionPolicy::ApproveAll | PermissionPolicy::Ask
        )
    }

    /// Whether the policy lets the agent run commands at all (and so whether
    /// `terminal` is advertised).
    pub fn offers_terminals(&self) -> bool {
        self.offers_writes()
    }

    /// Notes a granted permission request of `kind` naming `locations`.
    pub fn grant(&self, session: SessionId, kind: Option<ToolKind>, locations: Vec<PathBuf>) {
        self.lock().push(Grant {
            session,
            kind,
            locations,
        });
    }

    /// Forgets the grants (a turn starts or ends).
    pub fn end_turn(&self) {
        self.lock().clear();
    }

    /// Whether `path` (resolved) is protected.
    pub fn is_protected(&self, path: &Path) -> bool {
        path.components()
            .any(|c| c == Component::Normal(".git".as_ref()))
            || self.protected.iter().any(|dir| path.starts_with(dir))
    }

    /// The verdict on writing `path` (resolved) in `session`.
    pub fn check_write(&self, session: &SessionId, path: &Path) -> Verdict {
        if let Some(refusal) = self.not_offered("write files") {
            return Verdict::Refuse(refusal);
        }
        let grants = self.lock();
        let ours = grants
            .iter()
            .filter(|g| &g.session == session && g.writes());
        if self.is_protected(path) {
            if ours.clone().any(|g| g.names(path)) {
                return Verdict::Allow;
            }
            return Verdict::Ask(format!(
                "write {}, a protected file (git internals or acp's config), which no \
                 permission of this turn named",
                path.display()
            ));
        }
        if self.policy == PermissionPolicy::ApproveAll
            || ours
                .clone()
                .any(|g| g.locations.is_empty() || g.names(path))
        {
            return Verdict::Allow;
        }
        Verdict::Ask(format!(
            "write {} (the agent did not ask permission for it this turn)",
            path.display()
        ))
    }

    /// The verdict on running `command` in `session`.
    pub fn check_terminal(&self, session: &SessionId, command: &str) -> Verdict {
        if let Some(refusal) = self.not_offered("run commands") {
            return Verdict::Refuse(refusal);
        }
        if self.policy == PermissionPolicy::ApproveAll
            || self
                .lock()
                .iter()
                .any(|g| &g.session == session && g.runs())
        {
            return Verdict::Allow;
        }
        Verdict::Ask(format!(
            "run `{command}` (the agent did not ask permission to run commands this turn)"
        ))
    }

    /// The refusal when the policy offers no writes and no terminals.
    fn not_offered(&self, what: &str) -> Option<Error> {
        let flag = match self.policy {
            PermissionPolicy::DenyAll => "--deny-all",
            PermissionPolicy::ApproveReads => "--approve-reads",
            _ => return None,
        };
        Some(Error::new(
            ErrorCode::METHOD_NOT_FOUND,
            format!("acp runs with {flag}: the agent may not {what} in this session"),
        ))
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, Vec<Grant>> {
        self.grants.lock().unwrap_or_else(PoisonError::into_inner)
    }
}

/// The refusal of a write or terminal nobody granted.
pub fn refused(question: &str) -> Error {
    Error::new(
        ErrorCode::INVALID_REQUEST,
        format!("refused: {question}; ask for permission first (session/request_permission)"),
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    fn s() -> SessionId {
        SessionId::new("s1")
    }

    #[test]
    fn deny_all_and_approve_reads_offer_nothing_and_refuse() {
        for policy in [PermissionPolicy::DenyAll, PermissionPolicy::ApproveReads] {
            let gate = Gate::new(policy, vec![]);
            assert!(!gate.offers_writes() && !gate.offers_terminals());
            gate.grant(s(), None, vec![]);
            assert!(matches!(
                gate.check_write(&s(), Path::new("/w/a")),
                Verdict::Refuse(_)
            ));
            assert!(matches!(
                gate.check_terminal(&s(), "ls"),
                Verdict::Refuse(_)
            ));
        }
    }

    #[test]
    fn ask_needs_a_grant_of_the_right_kind_this_turn() {
        let gate = Gate::new(PermissionPolicy::Ask, vec![]);
        let file = Path::new("/w/a.rs");
        assert!(matches!(gate.check_write(&s(), file), Verdict::Ask(_)));
        assert!(matches!(gate.check_terminal(&s(), "ls"), Verdict::Ask(_)));
        gate.grant(s(), Some(ToolKind::Read), vec![]);
        assert!(matches!(gate.check_write(&s(), file), Verdict::Ask(_)));
        gate.grant(s(), Some(ToolKind::Edit), vec![PathBuf::from("/w/b.rs")]);
        assert!(matches!(gate.check_write(&s(), file), Verdict::Ask(_)));
        assert_eq!(gate.check_write(&s(), Path::new("/w/b.rs")), Verdict::Allow);
        assert!(matches!(gate.check_terminal(&s(), "ls"), Verdict::Ask(_)));
        gate.grant(s(), Some(ToolKind::Execute), vec![]);
        assert_eq!(gate.check_terminal(&s(), "ls"), Verdict::Allow);
        assert!(matches!(
            gate.check_terminal(&SessionId::new("s2"), "ls"),
            Verdict::Ask(_)
        ));
        gate.end_turn();
        assert!(matches!(gate.check_terminal(&s(), "ls"), Verdict::Ask(_)));
    }

    #[test]
    fn protected_paths_need_a_grant_naming_them_even_with_approve_all() {
        let gate = Gate::new(
            PermissionPolicy::ApproveAll,
            vec![PathBuf::from("/home/u/.config/acp")],
        );
        assert_eq!(
            gate.check_write(&s(), Path::new("/w/src/a.rs")),
            Verdict::Allow
        );
        let hook = Path::new("/w/.git/hooks/post-checkout");
        assert!(matches!(gate.check_write(&s(), hook), Verdict::Ask(_)));
        assert!(matches!(
            gate.check_write(&s(), Path::new("/home/u/.config/acp/config.toml")),
            Verdict::Ask(_)
        ));
        gate.grant(s(), Some(ToolKind::Edit), vec![]);
        assert!(matches!(gate.check_write(&s(), hook), Verdict::Ask(_)));
        gate.grant(s(), Some(ToolKind::Edit), vec![hook.to_path_buf()]);
        assert_eq!(gate.check_write(&s(), hook), Verdict::Allow);
        assert!(!gate.is_protected(Path::new("/w/.github/x")));
    }
}
