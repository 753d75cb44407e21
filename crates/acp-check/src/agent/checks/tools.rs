//! `tools.*`, `terminals.*`, `fs.*`: what the agent did during the turns,
//! judged over the recorded lines.

use crate::agent::cx::{AgentCx, needs};
use crate::agent::rules;
use crate::report::Outcome;

pub(super) async fn tools_follow(cx: &mut AgentCx) -> Outcome {
    if let Err(e) = cx.ordinary().await {
        return needs("a turn", &e);
    }
    let t = rules::tool_calls(&cx.log.all());
    if let Some(e) = t.orphan {
        return Outcome::fail("a tool_call_update names a tool call never announced")
            .with_message(&e.line);
    }
    if t.announced == 0 {
        return Outcome::skip(
            "the agent made no tool calls (choose a --prompt that makes it use a tool)",
        );
    }
    Outcome::pass()
}

pub(super) async fn tools_forward(cx: &mut AgentCx) -> Outcome {
    if let Err(e) = cx.ordinary().await {
        return needs("a turn", &e);
    }
    let t = rules::tool_calls(&cx.log.all());
    if let Some((e, why)) = t.backwards {
        return Outcome::fail(format!("a status went backwards: {why}")).with_message(&e.line);
    }
    if t.announced == 0 {
        return Outcome::skip(
            "the agent made no tool calls (choose a --prompt that makes it use a tool)",
        );
    }
    Outcome::pass()
}

pub(super) async fn permission_known(cx: &mut AgentCx) -> Outcome {
    if let Err(e) = cx.ordinary().await {
        return needs("a turn", &e);
    }
    let t = rules::tool_calls(&cx.log.all());
    if let Some(e) = t.unknown_permission {
        return Outcome::fail("a permission request names a tool call not announced before it")
            .with_message(&e.line);
    }
    if t.permissions == 0 {
        return Outcome::skip("the agent asked for no permission");
    }
    Outcome::pass()
}

pub(super) async fn terminals_released(cx: &mut AgentCx) -> Outcome {
    if let Err(e) = cx.ordinary().await {
        return needs("a turn", &e);
    }
    match rules::terminals(&cx.log.all()) {
        (0, _) => Outcome::skip("the agent created no terminal"),
        (_, Some((id, e))) => {
            Outcome::fail(format!("terminal {id} was never released")).with_message(&e.line)
        }
        (_, None) => Outcome::pass(),
    }
}

pub(super) async fn fs_absolute(cx: &mut AgentCx) -> Outcome {
    if let Err(e) = cx.ordinary().await {
        return needs("a turn", &e);
    }
    match rules::paths(&cx.log.all()) {
        (0, _) => Outcome::skip("the agent made no fs or terminal call"),
        (_, Some((path, e))) => {
            Outcome::fail(format!("{path:?} is not absolute")).with_message(&e.line)
        }
        (_, None) => Outcome::pass(),
    }
}
