//! `update_plan`: the model's todo list, shown to the client as the agent plan.
//! The agent reports it itself (a `plan` update); nothing runs here.

use super::{ToolInput, typed};
use crate::llm::ToolSpec;
use acp::schema::{PlanEntry, PlanEntryPriority, PlanEntryStatus};
use serde::Deserialize;
use serde_json::{Value, json};

pub(super) fn spec() -> ToolSpec {
    ToolSpec {
        name: "update_plan".into(),
        description: "Record the plan for the task as a todo list, replacing the previous one. Use it for multi-step work and keep statuses current.".into(),
        parameters: json!({"type": "object", "properties": {
            "entries": {"type": "array", "items": {"type": "object", "properties": {
                "content": {"type": "string"},
                "status": {"type": "string", "enum": ["pending", "in_progress", "completed"]},
                "priority": {"type": "string", "enum": ["high", "medium", "low"]}
            }, "required": ["content", "status"]}}
        }, "required": ["entries"]}),
    }
}

#[derive(Deserialize)]
struct PlanArgs {
    entries: Vec<PlanItem>,
}

#[derive(Deserialize)]
struct PlanItem {
    content: String,
    status: String,
    priority: Option<String>,
}

/// Parses `update_plan` arguments; unknown statuses count as pending and
/// unknown priorities as medium.
pub(super) fn parse(value: Value) -> Result<ToolInput, String> {
    let a: PlanArgs = typed(value, "update_plan")?;
    let entries = a
        .entries
        .into_iter()
        .map(|e| {
            let status = match e.status.as_str() {
                "in_progress" => PlanEntryStatus::InProgress,
                "completed" | "done" => PlanEntryStatus::Completed,
                _ => PlanEntryStatus::Pending,
            };
            let priority = match e.priority.as_deref() {
                Some("high") => PlanEntryPriority::High,
                Some("low") => PlanEntryPriority::Low,
                _ => PlanEntryPriority::Medium,
            };
            PlanEntry::new(e.content, priority, status)
        })
        .collect();
    Ok(ToolInput::UpdatePlan { entries })
}
