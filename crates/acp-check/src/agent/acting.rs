//! The acting client: what the checker answers an agent's requests with.
//!
//! File and terminal calls are carried out for real by `acp-host` in the
//! run's temporary workspace. A permission request is answered with the
//! first "allow" option, or `cancelled` once the session's turn is being
//! cancelled, as the prompt-turn docs ask of a client.

use acp_host::{Files, Roots, Sandbox, SupervisorProgram, TerminalSettings, Terminals};
use acp_schema::{
    CreateTerminalRequest, KillTerminalRequest, ReadTextFileRequest, ReleaseTerminalRequest,
    TerminalOutputRequest, WaitForTerminalExitRequest, WriteTextFileRequest,
};
use serde::Serialize;
use serde::de::DeserializeOwned;
use serde_json::{Value, json};
use std::collections::HashSet;
use std::path::Path;
use std::sync::{Arc, Mutex};

use crate::wire::{Answer, BoxFuture};

/// The acting client of a run.
pub struct Acting {
    files: Files,
    terminals: Terminals,
    cancelled: Mutex<HashSet<String>>,
}

impl Acting {
    /// An acting client confined to `workspace`.
    pub fn new(workspace: &Path, supervisor: SupervisorProgram) -> std::io::Result<Arc<Acting>> {
        let roots = Roots::new([workspace])?;
        let settings = TerminalSettings::new(roots.clone())
            .sandbox(Sandbox::off())
            .supervisor(supervisor);
        Ok(Arc::new(Acting {
            files: Files::new(roots),
            terminals: Terminals::new(settings),
            cancelled: Mutex::default(),
        }))
    }

    /// From now on, permission requests of `session` are answered `cancelled`.
    pub fn cancelling(&self, session: &str) {
        self.cancelled.lock().unwrap().insert(session.to_string());
    }

    /// Permission requests of `session` are answered again.
    pub fn resume(&self, session: &str) {
        self.cancelled.lock().unwrap().remove(session);
    }

    /// Ends every terminal still running.
    pub async fn shutdown(&self) {
        self.terminals.shutdown().await;
    }

    /// The answer function for a wire.
    pub fn answer(self: &Arc<Self>) -> Answer {
        let me = self.clone();
        Arc::new(
            move |method: String, params: Value| -> BoxFuture<Result<Value, Value>> {
                let me = me.clone();
                Box::pin(async move { me.handle(&method, params).await })
            },
        )
    }

    async fn handle(&self, method: &str, params: Value) -> Result<Value, Value> {
        match method {
            "fs/read_text_file" => {
                let r: ReadTextFileRequest = decode(params)?;
                reply(self.files.read_text_file(r).await)
            }
            "fs/write_text_file" => {
                let r: WriteTextFileRequest = decode(params)?;
                reply(self.files.write_text_file(r).await)
            }
            "terminal/create" => {
                let r: CreateTerminalRequest = decode(params)?;
                reply(self.terminals.create(r).await)
            }
            "terminal/output" => {
                let r: TerminalOutputRequest = decode(params)?;
                reply(self.terminals.output(&r))
            }
            "terminal/wait_for_exit" => {
                let r: WaitForTerminalExitRequest = decode(params)?;
                reply(self.terminals.wait_for_exit(r).await)
            }
            "terminal/kill" => {
                let r: KillTerminalRequest = decode(params)?;
                reply(self.terminals.kill(r).await)
            }
            "terminal/release" => {
                let r: ReleaseTerminalRequest = decode(params)?;
                reply(self.terminals.release(r).await)
            }
            "session/request_permission" => Ok(self.permission(&params)),
            _ => Err(json!({"code": -32601, "message": format!("method not found: {method}")})),
        }
    }

    fn permission(&self, params: &Value) -> Value {
        let session = params["sessionId"].as_str().unwrap_or("");
        if self.cancelled.lock().unwrap().contains(session) {
            return json!({"outcome": {"outcome": "cancelled"}});
        }
        let options = params["options"].as_array().cloned().unwrap_or_default();
        let pick = ["allow_once", "allow_always"]
            .iter()
            .find_map(|kind| options.iter().find(|o| o["kind"] == *kind))
            .or(options.first());
        match pick.and_then(|o| o["optionId"].as_str()) {
            Some(id) => json!({"outcome": {"outcome": "selected", "optionId": id}}),
            None => json!({"outcome": {"outcome": "cancelled"}}),
        }
    }
}

fn decode<T: DeserializeOwned>(params: Value) -> Result<T, Value> {
    acp_schema::decode_value(params)
        .map_err(|e| json!({"code": -32602, "message": format!("invalid params: {e}")}))
}

fn reply<T: Serialize>(result: Result<T, acp_schema::Error>) -> Result<Value, Value> {
    match result {
        Ok(value) => Ok(serde_json::to_value(value).unwrap_or(Value::Null)),
        Err(error) => Err(serde_json::to_value(error).unwrap_or(Value::Null)),
    }
}
