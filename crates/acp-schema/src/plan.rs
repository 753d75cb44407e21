//! Agent plans: the list of steps an agent intends to take, sent whole with
//! every change so the client can show progress.

use crate::Meta;
use crate::util::{setters, string_enum, wire_struct};

wire_struct! {
    /// An execution plan. Each `plan` update carries the complete list; the client
    /// replaces what it showed before.
    #[derive(Default)]
    pub struct Plan {
        /// Every step of the plan, in order, with its current status.
        pub entries: Vec<PlanEntry> = "entries" (Items),
        /// Extension metadata.
        pub meta: Option<Meta> = "_meta" (MetaField),
    }
}

impl Plan {
    /// A plan made of `entries`.
    pub fn new(entries: Vec<PlanEntry>) -> Self {
        Plan {
            entries,
            meta: None,
            extra: Default::default(),
        }
    }
}

setters!(Plan { opt { meta: Meta } });

wire_struct! {
    /// One step of a plan.
    pub struct PlanEntry {
        /// What the step is meant to achieve, for people to read.
        pub content: String = "content" (Req),
        /// How much the step matters to the overall goal.
        pub priority: PlanEntryPriority = "priority" (Req),
        /// Where the step stands.
        pub status: PlanEntryStatus = "status" (Req),
        /// Extension metadata.
        pub meta: Option<Meta> = "_meta" (MetaField),
    }
}

impl PlanEntry {
    /// A step described by `content`.
    pub fn new(
        content: impl Into<String>,
        priority: impl Into<PlanEntryPriority>,
        status: impl Into<PlanEntryStatus>,
    ) -> Self {
        PlanEntry {
            content: content.into(),
            priority: priority.into(),
            status: status.into(),
            meta: None,
            extra: Default::default(),
        }
    }
}

setters!(PlanEntry { opt { meta: Meta } });

string_enum! {
    /// How important a plan step is.
    pub enum PlanEntryPriority {
        /// Most important.
        "high" => High,
        /// Moderately important.
        "medium" => Medium,
        /// Least important.
        "low" => Low,
    }
}

string_enum! {
    /// Progress of a plan step.
    pub enum PlanEntryStatus {
        /// Not started.
        "pending" => Pending,
        /// Being worked on.
        "in_progress" => InProgress,
        /// Done.
        "completed" => Completed,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::decode;

    #[test]
    fn invalid_entries_are_dropped() {
        let plan: Plan = decode(
            r#"{"entries":[{"content":"a","priority":"high","status":"pending"},{"content":1},{"content":"b","priority":"urgent","status":"blocked"}]}"#,
        )
        .unwrap();
        assert_eq!(plan.entries.len(), 2);
        assert_eq!(
            plan.entries[1].priority,
            PlanEntryPriority::Other("urgent".into())
        );
        assert_eq!(
            serde_json::to_string(&plan).unwrap(),
            r#"{"entries":[{"content":"a","priority":"high","status":"pending"},{"content":"b","priority":"urgent","status":"blocked"}]}"#
        );
        let plan: Plan = decode(r#"{"entries":"nope"}"#).unwrap();
        assert_eq!(serde_json::to_string(&plan).unwrap(), r#"{"entries":[]}"#);
    }
}
