//! Memory does not grow with the number of calls: a long run of extension
//! requests leaves nothing behind (watched through the resident set size).
#![cfg(target_os = "linux")]

use crate::support;

use acp::Agent;
use acp::schema::*;
use support::*;

struct Echo;

impl Agent for Echo {
    async fn ext_method(
        &self,
        req: ExtRequest,
        _cx: RequestContext<AgentSide>,
    ) -> Result<ExtResponse, Error> {
        Ok(ExtResponse(req.params))
    }
}

/// The resident set size of this process, in bytes.
fn resident() -> usize {
    let statm = std::fs::read_to_string("/proc/self/statm").expect("read /proc/self/statm");
    let pages: usize = statm
        .split_whitespace()
        .nth(1)
        .and_then(|n| n.parse().ok())
        .expect("resident pages");
    pages * 4096
}

#[tokio::test]
async fn extension_requests_do_not_leak() {
    let _one = crate::ONE_AT_A_TIME.lock().await;
    let pair = connect(|_| Echo, |_| Bare);
    // A long method name makes a per-call leak plain: 4 KiB a call, 20 MiB in all.
    let method = format!("_example.test/{}", "m".repeat(4096));
    let call = |i: usize| {
        let request = ExtRequest::new(method.as_str(), &i).unwrap();
        pair.client.ext_method(request)
    };
    for i in 0..500 {
        within("ext request", call(i)).await.unwrap();
    }
    let before = resident();
    for i in 0..5000 {
        within("ext request", call(i)).await.unwrap();
    }
    let grown = resident().saturating_sub(before);
    assert!(
        grown < 8 << 20,
        "resident memory grew by {grown} bytes over 5000 calls"
    );
}
