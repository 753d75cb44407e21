//! The recording test client: real files on disk, real processes for
//! terminals, a fixed answer to permission requests.

use acp::schema::*;
use acp::{Client, NotificationContext, RequestContext};
use serde_json::json;
use std::collections::HashMap;
use std::sync::{Arc, Mutex};
use std::time::Duration;
use tokio::io::AsyncReadExt;

/// A terminal command's exit code or signal.
pub type ExitInfo = (Option<u32>, Option<String>);

#[derive(Default)]
pub struct TermState {
    pub output: Arc<Mutex<String>>,
    pub exit: Option<tokio::sync::watch::Receiver<Option<ExitInfo>>>,
    pub kill: Arc<tokio::sync::Notify>,
}

/// What the test client saw.
#[derive(Default)]
pub struct Recorded {
    pub updates: Mutex<Vec<SessionUpdate>>,
    pub permissions: Mutex<Vec<RequestPermissionRequest>>,
    pub reads: Mutex<Vec<String>>,
    /// The `line` and `limit` of each read.
    pub read_ranges: Mutex<Vec<(Option<u32>, Option<u32>)>>,
    pub writes: Mutex<Vec<(String, String)>>,
    pub terminals_created: Mutex<Vec<CreateTerminalRequest>>,
    pub kills: Mutex<Vec<String>>,
    pub releases: Mutex<Vec<String>>,
    pub terminals: Mutex<HashMap<String, TermState>>,
}

impl Recorded {
    pub fn updates(&self) -> Vec<SessionUpdate> {
        self.updates.lock().unwrap().clone()
    }

    pub fn message_text(&self) -> String {
        self.updates()
            .iter()
            .filter_map(|u| match u {
                SessionUpdate::AgentMessageChunk(c) => c.content.as_text().map(str::to_string),
                _ => None,
            })
            .collect()
    }

    pub fn tool_calls(&self) -> Vec<ToolCall> {
        self.updates()
            .into_iter()
            .filter_map(|u| match u {
                SessionUpdate::ToolCall(c) => Some(c),
                _ => None,
            })
            .collect()
    }

    /// Each tool call with every later update applied.
    pub fn final_tool_calls(&self) -> Vec<ToolCall> {
        let mut calls: Vec<ToolCall> = Vec::new();
        for u in self.updates() {
            match u {
                SessionUpdate::ToolCall(c) => calls.push(c),
                SessionUpdate::ToolCallUpdate(up) => {
                    if let Some(c) = calls.iter_mut().find(|c| c.tool_call_id == up.tool_call_id) {
                        c.apply(&up);
                    }
                }
                _ => {}
            }
        }
        calls
    }
}

/// A test client: real files on disk, real processes for terminals.
#[derive(Clone)]
pub struct TestClient {
    pub rec: Arc<Recorded>,
    pub permission_choice: Arc<Mutex<String>>,
    /// Answer reads with the whole file, whatever `line` and `limit` say
    /// (a careless editor).
    pub whole_files: Arc<std::sync::atomic::AtomicBool>,
    /// Methods answered with more than the 64 MiB one message may take.
    pub oversize: Arc<Mutex<Vec<&'static str>>>,
    /// Methods never answered (a hung editor).
    pub silent: Arc<Mutex<Vec<&'static str>>>,
    /// Methods answered a second after their work is done (a slow editor).
    pub late: Arc<Mutex<Vec<&'static str>>>,
}

/// Bytes of padding that put an answer over the 64 MiB limit.
pub const OVERSIZE: usize = 65 * 1024 * 1024;

impl TestClient {
    pub fn new(choice: &str) -> Self {
        TestClient {
            rec: Arc::new(Recorded::default()),
            permission_choice: Arc::new(Mutex::new(choice.into())),
            whole_files: Arc::default(),
            oversize: Arc::default(),
            silent: Arc::default(),
            late: Arc::default(),
        }
    }

    /// Whether `method` is to be answered over the size limit.
    fn oversized(&self, method: &str) -> bool {
        self.oversize.lock().unwrap().contains(&method)
    }

    /// Never returns if `method` is to be left unanswered.
    async fn maybe_hang(&self, method: &str) {
        if self.silent.lock().unwrap().contains(&method) {
            std::future::pending::<()>().await;
        }
    }
}

impl Client for TestClient {
    async fn session_notification(
        &self,
        n: SessionNotification,
        _cx: NotificationContext<ClientSide>,
    ) -> Result<(), Error> {
        self.rec.updates.lock().unwrap().push(n.update);
        Ok(())
    }

    async fn request_permission(
        &self,
        args: RequestPermissionRequest,
        _cx: RequestContext<ClientSide>,
    ) -> Result<RequestPermissionResponse, Error> {
        self.rec.permissions.lock().unwrap().push(args);
        self.maybe_hang("session/request_permission").await;
        let choice = self.permission_choice.lock().unwrap().clone();
        let answer = RequestPermissionResponse::selected(choice);
        if self.oversized("session/request_permission") {
            let pad = json!({"pad": "p".repeat(OVERSIZE)});
            let meta: Meta = serde_json::from_value(pad).unwrap();
            return Ok(answer.meta(meta));
        }
        Ok(answer)
    }

    async fn read_text_file(
        &self,
        args: ReadTextFileRequest,
        _cx: RequestContext<ClientSide>,
    ) -> Result<ReadTextFileResponse, Error> {
        self.rec.reads.lock().unwrap().push(args.path.clone());
        self.rec
            .read_ranges
            .lock()
            .unwrap()
            .push((args.line, args.limit));
        let text = std::fs::read_to_string(&args.path).map_err(|e| {
            Error::resource_not_found(Some(args.path.clone())).data(json!(e.to_string()))
        })?;
        let whole = self.whole_files.load(std::sync::atomic::Ordering::SeqCst);
        let text = match (args.line, args.limit) {
            _ if whole => text,
            (None, None) => text,
            (l, n) => text
                .split_inclusive('\n')
                .skip(l.unwrap_or(1).saturating_sub(1) as usize)
                .take(n.map(|n| n as usize).unwrap_or(usize::MAX))
                .collect(),
        };
        Ok(ReadTextFileResponse::new(text))
    }

    async fn write_text_file(
        &self,
        args: WriteTextFileRequest,
        _cx: RequestContext<ClientSide>,
    ) -> Result<WriteTextFileResponse, Error> {
        self.rec
            .writes
            .lock()
            .unwrap()
            .push((args.path.clone(), args.content.clone()));
        std::fs::write(&args.path, &args.content)
            .map_err(|e| Error::internal_error().data(json!(e.to_string())))?;
        Ok(WriteTextFileResponse::new())
    }

    async fn create_terminal(
        &self,
        args: CreateTerminalRequest,
        _cx: RequestContext<ClientSide>,
    ) -> Result<CreateTerminalResponse, Error> {
        self.rec
            .terminals_created
            .lock()
            .unwrap()
            .push(args.clone());
        self.maybe_hang("terminal/create").await;
        let mut cmd = tokio::process::Command::new(&args.command);
        cmd.args(&args.args)
            .stdout(std::process::Stdio::piped())
            .stderr(std::process::Stdio::piped())
            .kill_on_drop(true);
        if let Some(cwd) = &args.cwd {
            cmd.current_dir(cwd);
        }
        let mut child = cmd
            .spawn()
            .map_err(|e| Error::internal_error().data(json!(e.to_string())))?;
        let output = Arc::new(Mutex::new(String::new()));
        let kill = Arc::new(tokio::sync::Notify::new());
        let (tx, rx) = tokio::sync::watch::channel(None);
        let (out2, kill2) = (output.clone(), kill.clone());
        let mut stdout = child.stdout.take().unwrap();
        tokio::spawn(async move {
            let mut buf = Vec::new();
            let reader = async {
                let _ = stdout.read_to_end(&mut buf).await;
            };
            let status = tokio::select! {
                s = async { reader.await; child.wait().await } => s.ok(),
                _ = kill2.notified() => { let _ = child.kill().await; None }
            };
            out2.lock()
                .unwrap()
                .push_str(&String::from_utf8_lossy(&buf));
            let exit = match status {
                Some(s) => (s.code().map(|c| c as u32), None),
                None => (None, Some("SIGKILL".to_string())),
            };
            let _ = tx.send(Some(exit));
        });
        let id = format!("term-{}", self.rec.terminals_created.lock().unwrap().len());
        self.rec.terminals.lock().unwrap().insert(
            id.clone(),
            TermState {
                output,
                exit: Some(rx),
                kill,
            },
        );
        if self.late.lock().unwrap().contains(&"terminal/create") {
            tokio::time::sleep(Duration::from_secs(1)).await;
        }
        Ok(CreateTerminalResponse::new(id))
    }

    async fn wait_for_terminal_exit(
        &self,
        args: WaitForTerminalExitRequest,
        _cx: RequestContext<ClientSide>,
    ) -> Result<WaitForTerminalExitResponse, Error> {
        let mut rx = self.rec.terminals.lock().unwrap()[args.terminal_id.as_str()]
            .exit
            .clone()
            .unwrap();
        let exit = rx
            .wait_for(|v| v.is_some())
            .await
            .map_err(|_| Error::internal_error())?
            .clone()
            .unwrap();
        let mut r = WaitForTerminalExitResponse::new();
        if let Some(c) = exit.0 {
            r = r.exit_code(c);
        }
        if let Some(s) = exit.1 {
            r = r.signal(s);
        }
        Ok(r)
    }

    async fn terminal_output(
        &self,
        args: TerminalOutputRequest,
        _cx: RequestContext<ClientSide>,
    ) -> Result<TerminalOutputResponse, Error> {
        let terms = self.rec.terminals.lock().unwrap();
        let t = &terms[args.terminal_id.as_str()];
        let mut output = t.output.lock().unwrap().clone();
        if self.oversized("terminal/output") {
            output.push_str(&"o".repeat(OVERSIZE));
        }
        let mut r = TerminalOutputResponse::new(output, false);
        if let Some((code, sig)) = t.exit.as_ref().and_then(|rx| rx.borrow().clone()) {
            let mut st = TerminalExitStatus::default();
            st.exit_code = code;
            st.signal = sig;
            r = r.exit_status(st);
        }
        Ok(r)
    }

    async fn kill_terminal(
        &self,
        args: KillTerminalRequest,
        _cx: RequestContext<ClientSide>,
    ) -> Result<KillTerminalResponse, Error> {
        self.rec
            .kills
            .lock()
            .unwrap()
            .push(args.terminal_id.to_string());
        self.rec.terminals.lock().unwrap()[args.terminal_id.as_str()]
            .kill
            .notify_one();
        Ok(KillTerminalResponse::new())
    }

    async fn release_terminal(
        &self,
        args: ReleaseTerminalRequest,
        _cx: RequestContext<ClientSide>,
    ) -> Result<ReleaseTerminalResponse, Error> {
        self.rec
            .releases
            .lock()
            .unwrap()
            .push(args.terminal_id.to_string());
        if let Some(t) = self
            .rec
            .terminals
            .lock()
            .unwrap()
            .get(args.terminal_id.as_str())
        {
            t.kill.notify_one();
        }
        Ok(ReleaseTerminalResponse::new())
    }
}
