//! Plans of v2: each plan has an id (a session may have several), and each
//! `plan_update` replaces the plan with that id.

use crate::util::{id_type, setters, string_enum, tagged_union, wire_struct};
use crate::{Meta, PlanEntryPriority};

id_type!(
    /// Identifies a plan within a session.
    PlanId
);

wire_struct! {
    /// A plan, created or replaced whole.
    pub struct PlanUpdate {
        /// The plan.
        pub plan: PlanUpdateContent = "plan" (Req),
        /// Extension metadata (of the update).
        pub meta: Option<Meta> = "_meta" (MetaField),
    }
}

impl PlanUpdate {
    /// Reports `plan`.
    pub fn new(plan: impl Into<PlanUpdateContent>) -> Self {
        PlanUpdate {
            plan: plan.into(),
            meta: None,
            extra: Default::default(),
        }
    }
}

setters!(PlanUpdate { opt { meta: Meta } });

tagged_union! {
    /// A plan's content, tagged by `type`. Every kind carries a `planId`.
    pub enum PlanUpdateContent: tag "type" {
        /// A list of entries.
        "items" => Items(PlanItems),
        /// A plan in a file (feature `v2-unstable`).
        "file" => File(PlanFile) if "v2-unstable",
        /// A plan written in Markdown (feature `v2-unstable`).
        "markdown" => Markdown(PlanMarkdown) if "v2-unstable",
    }
}

impl From<PlanItems> for PlanUpdateContent {
    fn from(items: PlanItems) -> Self {
        PlanUpdateContent::Items(items)
    }
}

wire_struct! {
    /// A plan as a list of entries.
    pub struct PlanItems {
        /// The plan's id.
        pub plan_id: PlanId = "planId" (Req),
        /// The entries, in order.
        pub entries: Vec<PlanEntry> = "entries" (ItemsReq),
        /// Extension metadata.
        pub meta: Option<Meta> = "_meta" (MetaField),
    }
}

impl PlanItems {
    /// The plan `plan_id` with `entries`.
    pub fn new(plan_id: impl Into<PlanId>, entries: Vec<PlanEntry>) -> Self {
        PlanItems {
            plan_id: plan_id.into(),
            entries,
            meta: None,
            extra: Default::default(),
        }
    }
}

setters!(PlanItems { opt { meta: Meta } });

wire_struct! {
    /// One step of a plan.
    pub struct PlanEntry {
        /// What the step is.
        pub content: String = "content" (Req),
        /// How much it matters.
        pub priority: PlanEntryPriority = "priority" (Req),
        /// How far it is.
        pub status: PlanEntryStatus = "status" (Req),
        /// Extension metadata.
        pub meta: Option<Meta> = "_meta" (MetaField),
    }
}

impl PlanEntry {
    /// The step `content`.
    pub fn new(
        content: impl Into<String>,
        priority: PlanEntryPriority,
        status: PlanEntryStatus,
    ) -> Self {
        PlanEntry {
            content: content.into(),
            priority,
            status,
            meta: None,
            extra: Default::default(),
        }
    }
}

setters!(PlanEntry { opt { meta: Meta } });

string_enum! {
    /// How far a plan step is.
    pub enum PlanEntryStatus {
        /// Not started.
        "pending" => Pending,
        /// Being worked on.
        "in_progress" => InProgress,
        /// Done.
        "completed" => Completed,
        /// Dropped.
        "cancelled" => Cancelled,
    }
}

#[cfg(feature = "v2-unstable")]
wire_struct! {
    /// A plan kept in a file (feature `v2-unstable`).
    pub struct PlanFile {
        /// The plan's id.
        pub plan_id: PlanId = "planId" (Req),
        /// Where the file is.
        pub uri: String = "uri" (Req),
        /// Extension metadata.
        pub meta: Option<Meta> = "_meta" (MetaField),
    }
}

#[cfg(feature = "v2-unstable")]
impl PlanFile {
    /// The plan `plan_id` in the file at `uri`.
    pub fn new(plan_id: impl Into<PlanId>, uri: impl Into<String>) -> Self {
        PlanFile {
            plan_id: plan_id.into(),
            uri: uri.into(),
            meta: None,
            extra: Default::default(),
        }
    }
}

#[cfg(feature = "v2-unstable")]
setters!(PlanFile { opt { meta: Meta } });

#[cfg(feature = "v2-unstable")]
wire_struct! {
    /// A plan written in Markdown (feature `v2-unstable`).
    pub struct PlanMarkdown {
        /// The plan's id.
        pub plan_id: PlanId = "planId" (Req),
        /// The Markdown text.
        pub content: String = "content" (Req),
        /// Extension metadata.
        pub meta: Option<Meta> = "_meta" (MetaField),
    }
}

#[cfg(feature = "v2-unstable")]
impl PlanMarkdown {
    /// The plan `plan_id` written as `content`.
    pub fn new(plan_id: impl Into<PlanId>, content: impl Into<String>) -> Self {
        PlanMarkdown {
            plan_id: plan_id.into(),
            content: content.into(),
            meta: None,
            extra: Default::default(),
        }
    }
}

#[cfg(feature = "v2-unstable")]
setters!(PlanMarkdown { opt { meta: Meta } });

#[cfg(feature = "v2-unstable")]
wire_struct! {
    /// A plan was removed (feature `v2-unstable`).
    pub struct PlanRemoved {
        /// The plan's id.
        pub plan_id: PlanId = "planId" (Req),
        /// Extension metadata.
        pub meta: Option<Meta> = "_meta" (MetaField),
    }
}

#[cfg(feature = "v2-unstable")]
impl PlanRemoved {
    /// The plan `plan_id` is gone.
    pub fn new(plan_id: impl Into<PlanId>) -> Self {
        PlanRemoved {
            plan_id: plan_id.into(),
            meta: None,
            extra: Default::default(),
        }
    }
}

#[cfg(feature = "v2-unstable")]
setters!(PlanRemoved { opt { meta: Meta } });
