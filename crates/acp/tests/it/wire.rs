//! The exact bytes an agent-side connection writes for every error case of the
//! engine's "Errors" rules, with continued service after each.
//!
//! Each test writes exact lines into one end of an in-memory pair whose other
//! end runs an [`AgentSideConnection`], and compares what comes back as whole
//! strings. Every reply is also checked to be a well-formed JSON-RPC 2.0
//! response.

use crate::support;

use acp::schema::*;
use acp::{Agent, AgentSideConnection, ConnectionOptions};
use serde_json::json;
use std::future::pending;
use support::*;

/// The agent behind the raw tests.
struct WireAgent;

impl Agent for WireAgent {
    async fn logout(
        &self,
        _: LogoutRequest,
        _cx: RequestContext<AgentSide>,
    ) -> Result<LogoutResponse, Error> {
        Ok(LogoutResponse::new())
    }
    async fn new_session(
        &self,
        _: NewSessionRequest,
        _cx: RequestContext<AgentSide>,
    ) -> Result<NewSessionResponse, Error> {
        Err(Error::auth_required().data(json!({"authMethods": ["token"], "hint": "log in"})))
    }
    async fn prompt(
        &self,
        req: PromptRequest,
        _cx: RequestContext<AgentSide>,
    ) -> Result<PromptResponse, Error> {
        if req.prompt.first().and_then(ContentBlock::as_text) == Some("panic") {
            panic!("the prompt handler panics on purpose");
        }
        Ok(PromptResponse::new(StopReason::EndTurn))
    }
    async fn ext_method(
        &self,
        req: ExtRequest,
        _cx: RequestContext<AgentSide>,
    ) -> Result<ExtResponse, Error> {
        if &*req.method == "_test/hang" {
            pending::<()>().await;
        }
        Ok(ExtResponse(req.params))
    }
}

fn peer() -> RawPeer {
    peer_with(ConnectionOptions::default())
}

fn peer_with(options: ConnectionOptions) -> RawPeer {
    let (_conn, peer, _io): (AgentSideConnection, _, _) = raw_agent(options, |_| WireAgent);
    peer
}

/// Sends `line` and asserts the reply is exactly `expected` (and well formed).
async fn exchange(peer: &mut RawPeer, line: &str, expected: &str) {
    let got = peer.call(line).await;
    assert_eq!(got, expected, "reply to {line}");
    assert_response_shape(&got);
}

/// A valid request still gets its answer: the connection is serving.
async fn still_serving(peer: &mut RawPeer, id: u32) {
    exchange(
        peer,
        &format!(r#"{{"jsonrpc":"2.0","id":{id},"method":"logout","params":{{}}}}"#),
        &format!(r#"{{"jsonrpc":"2.0","id":{id},"result":{{}}}}"#),
    )
    .await;
}

#[tokio::test]
async fn unparsable_lines_get_parse_error_with_null_id_and_service_continues() {
    let mut peer = peer();
    exchange(
        &mut peer,
        "this is not json",
        r#"{"jsonrpc":"2.0","id":null,"error":{"code":-32700,"message":"Parse error","data":"expected ident"}}"#,
    )
    .await;
    still_serving(&mut peer, 1).await;
    exchange(
        &mut peer,
        r#"{"jsonrpc":"2.0","id":5,"method":"logout""#,
        r#"{"jsonrpc":"2.0","id":null,"error":{"code":-32700,"message":"Parse error","data":"EOF while parsing an object"}}"#,
    )
    .await;
    still_serving(&mut peer, 2).await;
    exchange(
        &mut peer,
        r#"{"jsonrpc":"2.0","id":5,"method":"logout"} trailing"#,
        r#"{"jsonrpc":"2.0","id":null,"error":{"code":-32700,"message":"Parse error","data":"trailing characters"}}"#,
    )
    .await;
    // Invalid UTF-8 inside a string.
    peer.send_bytes(b"{\"jsonrpc\":\"2.0\",\"id\":6,\"method\":\"\xff\xfe\"}\n")
        .await;
    let got = peer.recv().await;
    assert_eq!(
        got,
        r#"{"jsonrpc":"2.0","id":null,"error":{"code":-32700,"message":"Parse error","data":"invalid unicode code point"}}"#
    );
    still_serving(&mut peer, 3).await;
}

#[tokio::test]
async fn json_that_is_not_an_object_is_an_invalid_request() {
    let mut peer = peer();
    let cases = [
        (
            "[]",
            r#"{"jsonrpc":"2.0","id":null,"error":{"code":-32600,"message":"Invalid request","data":"a message must be a JSON object"}}"#,
        ),
        (
            r#"[{"jsonrpc":"2.0","id":1,"method":"logout"}]"#,
            r#"{"jsonrpc":"2.0","id":null,"error":{"code":-32600,"message":"Invalid request","data":"a message must be a JSON object"}}"#,
        ),
        // An array that lines up with the envelope's fields must not be run as a request.
        (
            r#"["2.0",7,"logout",{}]"#,
            r#"{"jsonrpc":"2.0","id":null,"error":{"code":-32600,"message":"Invalid request","data":"a message must be a JSON object"}}"#,
        ),
        (
            r#""logout""#,
            r#"{"jsonrpc":"2.0","id":null,"error":{"code":-32600,"message":"Invalid request","data":"a message must be a JSON object"}}"#,
        ),
        (
            "42",
            r#"{"jsonrpc":"2.0","id":null,"error":{"code":-32600,"message":"Invalid request","data":"a message must be a JSON object"}}"#,
        ),
        (
            "null",
            r#"{"jsonrpc":"2.0","id":null,"error":{"code":-32600,"message":"Invalid request","data":"a message must be a JSON object"}}"#,
        ),
    ];
    for (i, (line, expected)) in cases.into_iter().enumerate() {
        exchange(&mut peer, line, expected).await;
        still_serving(&mut peer, i as u32).await;
    }
}

#[tokio::test]
async fn objects_that_are_not_messages_are_invalid_requests_with_their_id() {
    let mut peer = peer();
    exchange(
        &mut peer,
        r#"{"jsonrpc":"2.0","id":3}"#,
        r#"{"jsonrpc":"2.0","id":3,"error":{"code":-32600,"message":"Invalid request","data":"not a request, notification or response: no `method`, `result` or `error`"}}"#,
    )
    .await;
    exchange(
        &mut peer,
        r#"{"jsonrpc":"2.0","id":"three","params":{}}"#,
        r#"{"jsonrpc":"2.0","id":"three","error":{"code":-32600,"message":"Invalid request","data":"not a request, notification or response: no `method`, `result` or `error`"}}"#,
    )
    .await;
    exchange(
        &mut peer,
        r#"{"jsonrpc":"2.0"}"#,
        r#"{"jsonrpc":"2.0","id":null,"error":{"code":-32600,"message":"Invalid request","data":"not a request, notification or response: no `method`, `result` or `error`"}}"#,
    )
    .await;
    // A request that also carries a result.
    exchange(
        &mut peer,
        r#"{"jsonrpc":"2.0","id":4,"method":"logout","result":{}}"#,
        r#"{"jsonrpc":"2.0","id":4,"error":{"code":-32600,"message":"Invalid request","data":"a request has no `result` or `error`"}}"#,
    )
    .await;
    // A method that is not a string: the id is still found and echoed.
    exchange(
        &mut peer,
        r#"{"jsonrpc":"2.0","id":5,"method":17}"#,
        r#"{"jsonrpc":"2.0","id":5,"error":{"code":-32600,"message":"Invalid request","data":"invalid type: integer `17`, expected a string"}}"#,
    )
    .await;
    // An id of the wrong type cannot be echoed.
    exchange(
        &mut peer,
        r#"{"jsonrpc":"2.0","id":[6],"method":"logout"}"#,
        r#"{"jsonrpc":"2.0","id":null,"error":{"code":-32600,"message":"Invalid request","data":"invalid type: sequence, expected null, an integer or a string"}}"#,
    )
    .await;
    exchange(
        &mut peer,
        r#"{"jsonrpc":"2.0","id":1.5,"method":"logout"}"#,
        r#"{"jsonrpc":"2.0","id":null,"error":{"code":-32600,"message":"Invalid request","data":"request id must be an integer, not a fraction"}}"#,
    )
    .await;
    // An integer past 64 bits is not called a fraction.
    exchange(
        &mut peer,
        r#"{"jsonrpc":"2.0","id":18446744073709551617,"method":"logout"}"#,
        r#"{"jsonrpc":"2.0","id":null,"error":{"code":-32600,"message":"Invalid request","data":"request id is out of the 64-bit integer range"}}"#,
    )
    .await;
    // `1e400` is valid JSON (too large for any number type): an invalid
    // request, not a parse error.
    exchange(
        &mut peer,
        r#"{"jsonrpc":"2.0","id":1e400,"method":"logout"}"#,
        r#"{"jsonrpc":"2.0","id":null,"error":{"code":-32600,"message":"Invalid request","data":"the message cannot be read: number out of range"}}"#,
    )
    .await;
    still_serving(&mut peer, 7).await;
}

#[tokio::test]
async fn integral_ids_in_any_notation_are_integers() {
    let mut peer = peer();
    // `-0` is an integer: answered with the id 0 (the same number).
    exchange(
        &mut peer,
        r#"{"jsonrpc":"2.0","id":-0,"method":"logout","params":{}}"#,
        r#"{"jsonrpc":"2.0","id":0,"result":{}}"#,
    )
    .await;
    exchange(
        &mut peer,
        r#"{"jsonrpc":"2.0","id":1e2,"method":"logout","params":{}}"#,
        r#"{"jsonrpc":"2.0","id":100,"result":{}}"#,
    )
    .await;
    exchange(
        &mut peer,
        r#"{"jsonrpc":"2.0","id":-9223372036854775808,"method":"logout","params":{}}"#,
        r#"{"jsonrpc":"2.0","id":-9223372036854775808,"result":{}}"#,
    )
    .await;
    still_serving(&mut peer, 8).await;
}

#[tokio::test]
async fn missing_or_wrong_jsonrpc_version_is_an_invalid_request() {
    let mut peer = peer();
    for (line, id) in [
        (r#"{"id":1,"method":"logout"}"#, "1"),
        (
            r#"{"jsonrpc":"1.0","id":"v1","method":"logout"}"#,
            r#""v1""#,
        ),
        (r#"{"jsonrpc":"2.0 ","id":2,"method":"logout"}"#, "2"),
        (r#"{"jsonrpc":null,"id":3,"method":"logout"}"#, "3"),
    ] {
        exchange(
            &mut peer,
            line,
            &format!(
                r#"{{"jsonrpc":"2.0","id":{id},"error":{{"code":-32600,"message":"Invalid request","data":"`jsonrpc` must be \"2.0\""}}}}"#
            ),
        )
        .await;
    }
    exchange(
        &mut peer,
        r#"{"jsonrpc":2,"id":4,"method":"logout"}"#,
        r#"{"jsonrpc":"2.0","id":4,"error":{"code":-32600,"message":"Invalid request","data":"invalid type: integer `2`, expected a string"}}"#,
    )
    .await;
    // A notification without `jsonrpc` is answered too (with a null id): it is
    // not a message, so it is not silently ignored.
    exchange(
        &mut peer,
        r#"{"method":"session/cancel","params":{"sessionId":"s"}}"#,
        r#"{"jsonrpc":"2.0","id":null,"error":{"code":-32600,"message":"Invalid request","data":"`jsonrpc` must be \"2.0\""}}"#,
    )
    .await;
    still_serving(&mut peer, 5).await;
}

#[tokio::test]
async fn unknown_methods_get_method_not_found_with_the_id_as_given() {
    let mut peer = peer();
    let not_found = |id: &str, method: &str| {
        format!(
            r#"{{"jsonrpc":"2.0","id":{id},"error":{{"code":-32601,"message":"Method not found","data":{{"method":"{method}"}}}}}}"#
        )
    };
    for id in [
        r#""abc""#,
        "9007199254740993",
        "-9223372036854775808",
        "0",
        r#""92""#,
        "92",
        r#""""#,
        r#""with \"quotes\" and \\ and \u00e9""#,
    ] {
        exchange(
            &mut peer,
            &format!(r#"{{"jsonrpc":"2.0","id":{id},"method":"no/such"}}"#),
            &not_found(
                &serde_json::to_string(&serde_json::from_str::<serde_json::Value>(id).unwrap())
                    .unwrap(),
                "no/such",
            ),
        )
        .await;
    }
    // A method of the other side is unknown here.
    exchange(
        &mut peer,
        r#"{"jsonrpc":"2.0","id":1,"method":"fs/read_text_file","params":{"sessionId":"s","path":"/x"}}"#,
        &not_found("1", "fs/read_text_file"),
    )
    .await;
    still_serving(&mut peer, 2).await;
}

#[tokio::test]
async fn escaped_keys_version_and_method_are_read_like_plain_ones() {
    let mut peer = peer();
    // The same request as `still_serving`'s, every envelope string spelled
    // with escapes (which cannot be borrowed from the line as they are).
    exchange(
        &mut peer,
        r#"{"json\u0072pc":"2.\u0030","\u0069d":7,"meth\u006fd":"log\u006fut","par\u0061ms":{}}"#,
        r#"{"jsonrpc":"2.0","id":7,"result":{}}"#,
    )
    .await;
    exchange(
        &mut peer,
        r#"{"jsonrpc":"2.0","id":8,"method":"no\/such"}"#,
        r#"{"jsonrpc":"2.0","id":8,"error":{"code":-32601,"message":"Method not found","data":{"method":"no/such"}}}"#,
    )
    .await;
    still_serving(&mut peer, 9).await;
}

#[tokio::test]
async fn string_and_number_ids_are_kept_apart() {
    let (_conn, mut peer, _io) = raw_agent(ConnectionOptions::default(), |_| WireAgent);
    // Two requests, ids 92 and "92", both running at once: neither is refused
    // as a duplicate.
    peer.send(r#"{"jsonrpc":"2.0","id":92,"method":"_test/hang","params":{}}"#)
        .await;
    peer.send(r#"{"jsonrpc":"2.0","id":"92","method":"_test/hang","params":{}}"#)
        .await;
    // Cancelling "92" answers only "92".
    peer.send(r#"{"jsonrpc":"2.0","method":"$/cancel_request","params":{"requestId":"92"}}"#)
        .await;
    assert_eq!(
        peer.recv().await,
        r#"{"jsonrpc":"2.0","id":"92","error":{"code":-32800,"message":"Request cancelled"}}"#
    );
    peer.send(r#"{"jsonrpc":"2.0","method":"$/cancel_request","params":{"requestId":92}}"#)
        .await;
    assert_eq!(
        peer.recv().await,
        r#"{"jsonrpc":"2.0","id":92,"error":{"code":-32800,"message":"Request cancelled"}}"#
    );
    still_serving(&mut peer, 1).await;
}

#[tokio::test]
async fn a_second_request_with_a_running_id_is_refused() {
    let mut peer = peer();
    peer.send(r#"{"jsonrpc":"2.0","id":"dup","method":"_test/hang","params":{}}"#)
        .await;
    exchange(
        &mut peer,
        r#"{"jsonrpc":"2.0","id":"dup","method":"logout"}"#,
        r#"{"jsonrpc":"2.0","id":"dup","error":{"code":-32600,"message":"Invalid request","data":"a request with this id is still running"}}"#,
    )
    .await;
    // The first one is still running and can be cancelled.
    exchange(
        &mut peer,
        r#"{"jsonrpc":"2.0","method":"$/cancel_request","params":{"requestId":"dup"}}"#,
        r#"{"jsonrpc":"2.0","id":"dup","error":{"code":-32800,"message":"Request cancelled"}}"#,
    )
    .await;
    // Once it has finished, the id may be used again.
    still_serving(&mut peer, 1).await;
    exchange(
        &mut peer,
        r#"{"jsonrpc":"2.0","id":"dup","method":"logout"}"#,
        r#"{"jsonrpc":"2.0","id":"dup","result":{}}"#,
    )
    .await;
}

#[tokio::test]
async fn notifications_that_cannot_be_handled_get_no_reply() {
    let mut peer = peer();
    for line in [
        // Unknown notification.
        r#"{"jsonrpc":"2.0","method":"no/such"}"#,
        r#"{"jsonrpc":"2.0","method":"no/such","params":{"a":1}}"#,
        // A method of the other side.
        r#"{"jsonrpc":"2.0","method":"session/update","params":{"sessionId":"s","update":{"sessionUpdate":"plan","entries":[]}}}"#,
        // A known notification with params that do not decode.
        r#"{"jsonrpc":"2.0","method":"session/cancel","params":{"sessionId":5}}"#,
        r#"{"jsonrpc":"2.0","method":"session/cancel"}"#,
        // Cancelling a request that does not exist, or with bad params.
        r#"{"jsonrpc":"2.0","method":"$/cancel_request","params":{"requestId":12345}}"#,
        r#"{"jsonrpc":"2.0","method":"$/cancel_request","params":{"requestId":[1]}}"#,
        r#"{"jsonrpc":"2.0","method":"$/cancel_request"}"#,
        // An extension notification nobody handles.
        r#"{"jsonrpc":"2.0","method":"_test/event","params":[1,2]}"#,
    ] {
        peer.send(line).await;
    }
    // The next line written is the answer to this request: nothing came before it.
    still_serving(&mut peer, 77).await;
}

#[tokio::test]
async fn params_that_do_not_decode_get_invalid_params_naming_the_field() {
    let mut peer = peer();
    exchange(
        &mut peer,
        r#"{"jsonrpc":"2.0","id":1,"method":"session/prompt","params":{"sessionId":"s","prompt":[{"type":"text","text":7}]}}"#,
        r#"{"jsonrpc":"2.0","id":1,"error":{"code":-32602,"message":"Invalid params","data":{"path":"prompt[0].text","message":"invalid type: integer `7`, expected a string"}}}"#,
    )
    .await;
    exchange(
        &mut peer,
        r#"{"jsonrpc":"2.0","id":2,"method":"session/prompt","params":{"sessionId":5,"prompt":[]}}"#,
        r#"{"jsonrpc":"2.0","id":2,"error":{"code":-32602,"message":"Invalid params","data":{"path":"sessionId","message":"invalid type: integer `5`, expected a string"}}}"#,
    )
    .await;
    exchange(
        &mut peer,
        r#"{"jsonrpc":"2.0","id":3,"method":"session/prompt","params":{"prompt":[]}}"#,
        r#"{"jsonrpc":"2.0","id":3,"error":{"code":-32602,"message":"Invalid params","data":{"path":"","message":"missing field `sessionId`"}}}"#,
    )
    .await;
    // No params at all for a method with required fields.
    exchange(
        &mut peer,
        r#"{"jsonrpc":"2.0","id":4,"method":"session/prompt"}"#,
        r#"{"jsonrpc":"2.0","id":4,"error":{"code":-32602,"message":"Invalid params","data":{"path":"","message":"missing field `sessionId`"}}}"#,
    )
    .await;
    // Params that are not an object.
    exchange(
        &mut peer,
        r#"{"jsonrpc":"2.0","id":5,"method":"logout","params":"x"}"#,
        r#"{"jsonrpc":"2.0","id":5,"error":{"code":-32602,"message":"Invalid params","data":{"path":"","message":"params must be a JSON object, not a string"}}}"#,
    )
    .await;
    // JSON-RPC allows params by position; ACP's are always objects, and an
    // array must not be read into the struct field by field.
    exchange(
        &mut peer,
        r#"{"jsonrpc":"2.0","id":6,"method":"session/prompt","params":["s",[]]}"#,
        r#"{"jsonrpc":"2.0","id":6,"error":{"code":-32602,"message":"Invalid params","data":{"path":"","message":"params must be a JSON object, not an array"}}}"#,
    )
    .await;
    exchange(
        &mut peer,
        r#"{"jsonrpc":"2.0","id":7,"method":"logout","params":[]}"#,
        r#"{"jsonrpc":"2.0","id":7,"error":{"code":-32602,"message":"Invalid params","data":{"path":"","message":"params must be a JSON object, not an array"}}}"#,
    )
    .await;
    still_serving(&mut peer, 8).await;
}

#[tokio::test]
async fn absent_or_null_params_are_accepted_when_every_field_is_optional() {
    let mut peer = peer();
    exchange(
        &mut peer,
        r#"{"jsonrpc":"2.0","id":1,"method":"logout"}"#,
        r#"{"jsonrpc":"2.0","id":1,"result":{}}"#,
    )
    .await;
    exchange(
        &mut peer,
        r#"{"jsonrpc":"2.0","id":2,"method":"logout","params":null}"#,
        r#"{"jsonrpc":"2.0","id":2,"result":{}}"#,
    )
    .await;
    // Extension requests without params see `{}`.
    exchange(
        &mut peer,
        r#"{"jsonrpc":"2.0","id":3,"method":"_test/echo"}"#,
        r#"{"jsonrpc":"2.0","id":3,"result":{}}"#,
    )
    .await;
    // ... and with params see them byte for byte.
    exchange(
        &mut peer,
        r#"{"jsonrpc":"2.0","id":4,"method":"_test/echo","params":{ "z" : [1, 2.50] }}"#,
        r#"{"jsonrpc":"2.0","id":4,"result":{ "z" : [1, 2.50] }}"#,
    )
    .await;
}

#[tokio::test]
async fn handler_errors_keep_their_code_message_and_data() {
    let mut peer = peer();
    exchange(
        &mut peer,
        r#"{"jsonrpc":"2.0","id":"n","method":"session/new","params":{"cwd":"/w","mcpServers":[]}}"#,
        r#"{"jsonrpc":"2.0","id":"n","error":{"code":-32000,"message":"Authentication required","data":{"authMethods":["token"],"hint":"log in"}}}"#,
    )
    .await;
    still_serving(&mut peer, 1).await;
}

#[tokio::test]
async fn default_bodies_answer_method_not_found_on_the_wire() {
    struct Nothing;
    impl Agent for Nothing {}
    let (_conn, mut peer, _io) = raw_agent(ConnectionOptions::default(), |_| Nothing);
    exchange(
        &mut peer,
        r#"{"jsonrpc":"2.0","id":1,"method":"session/load","params":{"sessionId":"s","cwd":"/w","mcpServers":[]}}"#,
        r#"{"jsonrpc":"2.0","id":1,"error":{"code":-32601,"message":"Method not found"}}"#,
    )
    .await;
}

#[tokio::test]
async fn responses_to_unknown_ids_are_dropped_silently() {
    let mut peer = peer();
    for line in [
        r#"{"jsonrpc":"2.0","id":12345,"result":{}}"#,
        r#"{"jsonrpc":"2.0","id":0,"result":null}"#,
        r#"{"jsonrpc":"2.0","id":"x","result":{"a":1}}"#,
        r#"{"jsonrpc":"2.0","id":7,"error":{"code":-32603,"message":"Internal error"}}"#,
        r#"{"jsonrpc":"2.0","id":null,"error":{"code":-32700,"message":"Parse error"}}"#,
        // Malformed responses: no pending request to fail, and no reply either
        // (their id is one of ours, not the peer's).
        r#"{"jsonrpc":"2.0","id":8,"error":"broken"}"#,
        r#"{"jsonrpc":"2.0","id":9,"result":{},"error":{"code":1,"message":"both"}}"#,
        r#"{"id":10,"result":{}}"#,
    ] {
        peer.send(line).await;
    }
    still_serving(&mut peer, 11).await;
}

#[tokio::test]
async fn an_over_long_line_is_refused_under_its_id_and_the_next_one_served() {
    let mut peer = peer_with(ConnectionOptions::default().max_message_size(1024));
    let filler = "x".repeat(2000);
    let long =
        format!(r#"{{"jsonrpc":"2.0","id":1,"method":"_test/echo","params":{{"f":"{filler}"}}}}"#);
    let size = long.len();
    exchange(
        &mut peer,
        &long,
        &format!(
            r#"{{"jsonrpc":"2.0","id":1,"error":{{"code":-32600,"message":"Invalid request","data":"message of {size} bytes exceeds the limit of 1024 bytes"}}}}"#
        ),
    )
    .await;
    still_serving(&mut peer, 2).await;
    // A line of exactly the limit is fine.
    let head = r#"{"jsonrpc":"2.0","id":3,"method":"_test/echo","params":{"f":""#;
    let tail = r#""}}"#;
    let fits = format!("{head}{}{tail}", "y".repeat(1024 - head.len() - tail.len()));
    assert_eq!(fits.len(), 1024);
    let got = peer.call(&fits).await;
    assert!(
        got.starts_with(r#"{"jsonrpc":"2.0","id":3,"result":{"f":"yyy"#),
        "{got}"
    );
    // Several over-long lines in one write, then a valid one; the one
    // without an id is answered under the null id.
    let burst = format!("{long}\n{long}\r\n{}\n", "z".repeat(5000));
    peer.send_bytes(burst.as_bytes()).await;
    for (id, size) in [("1", size), ("1", size + 1), ("null", 5000)] {
        assert_eq!(
            peer.recv().await,
            format!(
                r#"{{"jsonrpc":"2.0","id":{id},"error":{{"code":-32600,"message":"Invalid request","data":"message of {size} bytes exceeds the limit of 1024 bytes"}}}}"#
            )
        );
    }
    still_serving(&mut peer, 4).await;
}

#[tokio::test]
async fn a_panicking_handler_gets_internal_error_and_the_connection_lives_on() {
    let mut peer = peer();
    exchange(
        &mut peer,
        r#"{"jsonrpc":"2.0","id":1,"method":"session/prompt","params":{"sessionId":"s","prompt":[{"type":"text","text":"panic"}]}}"#,
        r#"{"jsonrpc":"2.0","id":1,"error":{"code":-32603,"message":"Internal error","data":"the handler panicked"}}"#,
    )
    .await;
    still_serving(&mut peer, 2).await;
    exchange(
        &mut peer,
        r#"{"jsonrpc":"2.0","id":3,"method":"session/prompt","params":{"sessionId":"s","prompt":[{"type":"text","text":"fine"}]}}"#,
        r#"{"jsonrpc":"2.0","id":3,"result":{"stopReason":"end_turn"}}"#,
    )
    .await;
}

#[tokio::test]
async fn a_panicking_notification_handler_does_not_stop_the_lane() {
    struct Fragile;
    impl Agent for Fragile {
        async fn logout(
            &self,
            _: LogoutRequest,
            _cx: RequestContext<AgentSide>,
        ) -> Result<LogoutResponse, Error> {
            Ok(LogoutResponse::new())
        }
        async fn ext_notification(
            &self,
            n: ExtNotification,
            _cx: NotificationContext<AgentSide>,
        ) -> Result<(), Error> {
            if &*n.method == "_test/boom" {
                panic!("notification handler panics on purpose");
            }
            Ok(())
        }
        async fn ext_method(
            &self,
            _: ExtRequest,
            _cx: RequestContext<AgentSide>,
        ) -> Result<ExtResponse, Error> {
            Ok(ExtResponse::new(&"after").unwrap())
        }
    }
    let (_conn, mut peer, _io) = raw_agent(ConnectionOptions::default(), |_| Fragile);
    peer.send(r#"{"jsonrpc":"2.0","method":"_test/boom","params":{}}"#)
        .await;
    peer.send(r#"{"jsonrpc":"2.0","method":"_test/boom","params":{}}"#)
        .await;
    peer.send(r#"{"jsonrpc":"2.0","method":"_test/fine","params":{}}"#)
        .await;
    exchange(
        &mut peer,
        r#"{"jsonrpc":"2.0","id":1,"method":"_test/x"}"#,
        r#"{"jsonrpc":"2.0","id":1,"result":"after"}"#,
    )
    .await;
}

#[tokio::test]
async fn blank_lines_crlf_and_a_byte_order_mark_are_tolerated() {
    let mut peer = peer();
    peer.send_bytes(b"\n   \n\t\r\n").await;
    peer.send_bytes("\u{feff}{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"logout\"}\r\n".as_bytes())
        .await;
    assert_eq!(peer.recv().await, r#"{"jsonrpc":"2.0","id":1,"result":{}}"#);
    // A final line without a newline is still read once input ends. End of
    // input closes the connection, which cancels requests still running, so
    // the answer is the result or -32800, depending on which came first.
    peer.send_bytes(br#"{"jsonrpc":"2.0","id":2,"method":"logout"}"#)
        .await;
    peer.close_write();
    let last = peer.recv().await;
    assert!(
        last == r#"{"jsonrpc":"2.0","id":2,"result":{}}"#
            || last
                == r#"{"jsonrpc":"2.0","id":2,"error":{"code":-32800,"message":"Request cancelled"}}"#,
        "{last}"
    );
    assert_eq!(peer.next_line().await, None, "output ends after input ends");
}

#[tokio::test]
async fn responses_fail_or_fulfil_the_pending_request() {
    use acp::ConnectionError;
    let (client, mut peer, _io) = raw_client(ConnectionOptions::default(), |_| Bare);

    // Reads the request the client wrote and returns its id.
    async fn request_id(peer: &mut RawPeer, method: &str) -> i64 {
        let v = peer.recv_json().await;
        assert_eq!(v["method"], method, "{v}");
        v["id"].as_i64().expect("the client uses integer ids")
    }

    // An error response keeps code, message and data.
    let call = tokio::spawn({
        let client = client.clone();
        async move { client.logout(LogoutRequest::new()).await }
    });
    let id = request_id(&mut peer, "logout").await;
    peer.send(&format!(
        r#"{{"jsonrpc":"2.0","id":{id},"error":{{"code":-32099,"message":"custom","data":[1]}}}}"#
    ))
    .await;
    match within("logout", call).await.unwrap() {
        Err(ConnectionError::Remote(e)) => {
            assert_eq!(e, Error::new(-32099, "custom").data(json!([1])));
        }
        other => panic!("{other:?}"),
    }

    // A result that does not decode as the response type names the field.
    let call = tokio::spawn({
        let client = client.clone();
        async move { client.prompt(prompt("s", "hi")).await }
    });
    let id = request_id(&mut peer, "session/prompt").await;
    peer.send(&format!(
        r#"{{"jsonrpc":"2.0","id":{id},"result":{{"stopReason":5}}}}"#
    ))
    .await;
    match within("prompt", call).await.unwrap() {
        Err(ConnectionError::Protocol(e)) => assert_eq!(e.path, "stopReason", "{e}"),
        other => panic!("{other:?}"),
    }

    // Malformed responses fail the request and are not answered.
    for bad in [
        r#""result":{},"error":{"code":1,"message":"both"}"#.to_string(),
        r#""error":"not an object""#.to_string(),
        r#""result":{},"result":{}"#.to_string(),
    ] {
        let call = tokio::spawn({
            let client = client.clone();
            async move { client.logout(LogoutRequest::new()).await }
        });
        let id = request_id(&mut peer, "logout").await;
        peer.send(&format!(r#"{{"jsonrpc":"2.0","id":{id},{bad}}}"#))
            .await;
        match within("logout", call).await.unwrap() {
            Err(ConnectionError::Protocol(_)) => {}
            other => panic!("{bad}: {other:?}"),
        }
    }
    let call = tokio::spawn({
        let client = client.clone();
        async move { client.logout(LogoutRequest::new()).await }
    });
    let id = request_id(&mut peer, "logout").await;
    peer.send(&format!(r#"{{"id":{id},"result":{{}}}}"#)).await;
    assert!(matches!(
        within("logout", call).await.unwrap(),
        Err(ConnectionError::Protocol(_))
    ));

    // Nothing was written in reply to any of them: the next line is the answer
    // to this request.
    exchange(
        &mut peer,
        r#"{"jsonrpc":"2.0","id":"after","method":"fs/read_text_file","params":{"sessionId":"s","path":"/x"}}"#,
        r#"{"jsonrpc":"2.0","id":"after","error":{"code":-32601,"message":"Method not found"}}"#,
    )
    .await;

    // A good response after all that still works, in the usual order of its
    // members, with one more, or with `id` last.
    for shape in [
        r#"{"jsonrpc":"2.0","id":ID,"result":{}}"#,
        r#"{"jsonrpc":"2.0","id":ID,"result":{},"x":[1]}"#,
        r#"{"result":{},"jsonrpc":"2.0","id":ID}"#,
    ] {
        let call = tokio::spawn({
            let client = client.clone();
            async move { client.logout(LogoutRequest::new()).await }
        });
        let id = request_id(&mut peer, "logout").await;
        peer.send(&shape.replace("ID", &id.to_string())).await;
        assert_eq!(
            within("logout", call).await.unwrap().unwrap(),
            LogoutResponse::new(),
            "{shape}"
        );
    }
}

/// Answers every extension method with pretty-printed raw JSON.
struct Pretty;

impl Agent for Pretty {
    async fn ext_method(
        &self,
        _: ExtRequest,
        _cx: RequestContext<AgentSide>,
    ) -> Result<ExtResponse, Error> {
        let raw = serde_json::value::RawValue::from_string("{\n  \"a\": [1,\n 2]\n}".into());
        Ok(ExtResponse(raw.unwrap()))
    }
}

#[tokio::test]
async fn raw_json_with_newlines_still_goes_out_as_one_line() {
    let (_conn, mut peer, _io): (AgentSideConnection, _, _) =
        raw_agent(ConnectionOptions::default(), |_| Pretty);
    exchange(
        &mut peer,
        r#"{"jsonrpc":"2.0","id":1,"method":"_test/pretty"}"#,
        r#"{"jsonrpc":"2.0","id":1,"result":{   "a": [1,  2] }}"#,
    )
    .await;
}

#[tokio::test]
async fn members_in_any_order_and_unknown_members_get_the_same_answer() {
    // Peers usually write jsonrpc, id, method, params in that order (the
    // runtime then decodes the params as it reads the envelope); any order,
    // and members JSON-RPC does not define, must read the same.
    let mut peer = peer();
    let orders = [
        r#"{"jsonrpc":"2.0","id":1,"method":"_test/echo","params":{"a":[1,"x"]}}"#,
        r#"{"params":{"a":[1,"x"]},"method":"_test/echo","id":1,"jsonrpc":"2.0"}"#,
        r#"{"method":"_test/echo","params":{"a":[1,"x"]},"jsonrpc":"2.0","id":1}"#,
        r#"{"jsonrpc":"2.0","method":"_test/echo","params":{"a":[1,"x"]},"id":1}"#,
        r#"{"jsonrpc":"2.0","x-trace":{"span":7},"id":1,"method":"_test/echo","params":{"a":[1,"x"]},"more":null}"#,
    ];
    for line in orders {
        exchange(
            &mut peer,
            line,
            r#"{"jsonrpc":"2.0","id":1,"result":{"a":[1,"x"]}}"#,
        )
        .await;
    }
    // The same for typed params, and for their errors.
    for line in [
        r#"{"jsonrpc":"2.0","id":2,"method":"session/prompt","params":{"sessionId":"s","prompt":[]}}"#,
        r#"{"params":{"sessionId":"s","prompt":[]},"id":2,"jsonrpc":"2.0","method":"session/prompt"}"#,
    ] {
        exchange(
            &mut peer,
            line,
            r#"{"jsonrpc":"2.0","id":2,"result":{"stopReason":"end_turn"}}"#,
        )
        .await;
    }
    for line in [
        r#"{"jsonrpc":"2.0","id":3,"method":"session/prompt","params":{"sessionId":5,"prompt":[]}}"#,
        r#"{"params":{"sessionId":5,"prompt":[]},"method":"session/prompt","jsonrpc":"2.0","id":3}"#,
    ] {
        exchange(
            &mut peer,
            line,
            r#"{"jsonrpc":"2.0","id":3,"error":{"code":-32602,"message":"Invalid params","data":{"path":"sessionId","message":"invalid type: integer `5`, expected a string"}}}"#,
        )
        .await;
    }
    // A member after the params that makes it no request at all.
    exchange(
        &mut peer,
        r#"{"jsonrpc":"2.0","id":4,"method":"logout","params":{},"result":{}}"#,
        r#"{"jsonrpc":"2.0","id":4,"error":{"code":-32600,"message":"Invalid request","data":"a request has no `result` or `error`"}}"#,
    )
    .await;
    still_serving(&mut peer, 5).await;
}
