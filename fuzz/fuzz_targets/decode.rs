//! Arbitrary bytes from the peer, through the line reader and the engine.
//!
//! Each input is read once by a bare `LineReader` (with a tiny buffer, so lines
//! spill and over-long ones are skipped), then written, as the client, to an
//! agent-side connection, followed by a valid `initialize` request that must
//! still be answered. Any panic aborts the process (libFuzzer's panic hook), so
//! a panic anywhere in the runtime, on any task, is a finding.
#![no_main]

use acp::codec::{Frame, LineReader};
use acp::schema::AgentSide;
use acp::schema::{
    Error, ExtRequest, ExtResponse, InitializeRequest, InitializeResponse, PromptRequest,
    PromptResponse, ProtocolVersion, StopReason,
};
use acp::{Agent, AgentSideConnection, ConnectionOptions, RequestContext, Transport};
use libfuzzer_sys::fuzz_target;
use std::sync::OnceLock;
use std::time::Duration;
use tokio::io::{AsyncBufReadExt, AsyncWriteExt, BufReader};

/// Answers the common requests at once; everything else gets the defaults.
struct Trivial;

impl Agent for Trivial {
    async fn initialize(
        &self,
        _: InitializeRequest,
        _cx: RequestContext<AgentSide>,
    ) -> Result<InitializeResponse, Error> {
        Ok(InitializeResponse::new(ProtocolVersion::LATEST))
    }
    async fn prompt(
        &self,
        _: PromptRequest,
        _cx: RequestContext<AgentSide>,
    ) -> Result<PromptResponse, Error> {
        Ok(PromptResponse::new(StopReason::EndTurn))
    }
    async fn ext_method(
        &self,
        req: ExtRequest,
        _cx: RequestContext<AgentSide>,
    ) -> Result<ExtResponse, Error> {
        Ok(ExtResponse(req.params))
    }
}

const PROBE: &[u8] =
    b"\n{\"jsonrpc\":\"2.0\",\"id\":\"fuzz-probe\",\"method\":\"initialize\",\"params\":{\"protocolVersion\":1}}\n";

fn runtime() -> &'static tokio::runtime::Runtime {
    static RUNTIME: OnceLock<tokio::runtime::Runtime> = OnceLock::new();
    RUNTIME.get_or_init(|| {
        tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()
            .expect("a runtime")
    })
}

async fn line_reader(data: &[u8]) {
    let mut lines = LineReader::with_buffer_size(data, 64, 16);
    while let Some(frame) = lines
        .next_frame()
        .await
        .expect("reading memory cannot fail")
    {
        match frame {
            Frame::Message(line) => assert!(!line.is_empty() && line.len() <= 64),
            Frame::TooLong { size, .. } => assert!(size > 64),
        }
    }
}

async fn engine(data: &[u8]) {
    let (agent_end, peer_end) = Transport::memory_pair();
    let options = ConnectionOptions::default().max_message_size(4096);
    let (_conn, io) = AgentSideConnection::new(agent_end, options, |_| Trivial);
    let io = tokio::spawn(io);
    let (reader, mut writer) = peer_end.into_parts();
    let mut reader = BufReader::new(reader);

    let write = async {
        writer.write_all(data).await.expect("write");
        writer.write_all(PROBE).await.expect("write");
        writer.flush().await.expect("flush");
    };
    let read = async {
        let mut line = Vec::new();
        loop {
            line.clear();
            let n = reader.read_until(b'\n', &mut line).await.expect("read");
            assert!(n > 0, "the connection stopped before answering the probe");
            let reply: serde_json_lite::Reply = serde_json_lite::parse(&line);
            if reply.is_probe {
                assert!(
                    reply.has_result,
                    "the probe failed: {}",
                    String::from_utf8_lossy(&line)
                );
                break;
            }
        }
    };
    let served = tokio::time::timeout(Duration::from_secs(10), async {
        tokio::join!(write, read);
    })
    .await;
    assert!(served.is_ok(), "the connection hung");
    drop(writer);
    let ended = tokio::time::timeout(Duration::from_secs(10), io).await;
    assert!(
        ended.is_ok(),
        "the connection did not end after end of input"
    );
}

/// Just enough reading of a reply line to find the probe's answer.
mod serde_json_lite {
    pub struct Reply {
        pub is_probe: bool,
        pub has_result: bool,
    }

    pub fn parse(line: &[u8]) -> Reply {
        let text = std::str::from_utf8(line).expect("replies are UTF-8");
        assert!(text.ends_with('\n'), "every reply ends with a newline");
        assert!(
            text.starts_with(r#"{"jsonrpc":"2.0","id":"#),
            "not a response: {text}"
        );
        Reply {
            is_probe: text.starts_with(r#"{"jsonrpc":"2.0","id":"fuzz-probe","#),
            has_result: text.contains(r#","result":"#),
        }
    }
}

fuzz_target!(|data: &[u8]| {
    runtime().block_on(async {
        line_reader(data).await;
        engine(data).await;
    });
});
