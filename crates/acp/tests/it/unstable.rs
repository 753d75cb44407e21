//! The unstable methods (cargo features `unstable-*`, forwarded to
//! `acp-schema`): with its feature on, a method is in the `Agent`/`Client`
//! traits and the runtime dispatches it to the handler with typed params; with
//! its feature off, the runtime does not know it (-32601), and the unstable
//! fields of stable messages still reach the peer unchanged.

use crate::support;

use acp::schema::*;
use serde_json::json;
use support::*;

/// Each unstable method the agent handles as a request, and whether this
/// build has its feature.
const AGENT_REQUESTS: &[(&str, bool)] = &[
    (
        "session/set_model",
        cfg!(feature = "unstable-session-model"),
    ),
    ("session/fork", cfg!(feature = "unstable-session-fork")),
    (
        "session/set_title",
        cfg!(feature = "unstable-session-title"),
    ),
    ("providers/list", cfg!(feature = "unstable-providers")),
    ("providers/set", cfg!(feature = "unstable-providers")),
    ("providers/disable", cfg!(feature = "unstable-providers")),
];

#[test]
fn the_features_reach_the_method_tables() {
    // acp's features turn on acp-schema's, whose tables the traits expand.
    for (method, on) in AGENT_REQUESTS {
        assert_eq!(
            AGENT_METHODS.iter().any(|m| m.method == *method),
            *on,
            "{method}"
        );
    }
    assert_eq!(
        CLIENT_METHODS.iter().any(|m| m.method == "mcp/message"),
        cfg!(feature = "unstable-mcp-over-acp")
    );
}

/// The error code of the answer to `line`.
async fn error_code(peer: &mut RawPeer, line: &str) -> i64 {
    let answer = assert_response_shape(&within(line, peer.call(line)).await);
    answer["error"]["code"]
        .as_i64()
        .unwrap_or_else(|| panic!("{line}: expected an error, got {answer}"))
}

#[tokio::test]
async fn unstable_methods_are_dispatched_only_with_their_feature() {
    // Params that no request accepts (a list): with the feature on the
    // runtime decodes them and says they are wrong (-32602); with it off the
    // method is unknown (-32601).
    let (_conn, mut peer, _io) = raw_agent(Default::default(), |_| Trivial);
    for (i, (method, on)) in AGENT_REQUESTS.iter().enumerate() {
        let line = format!(r#"{{"jsonrpc":"2.0","id":{i},"method":"{method}","params":[1]}}"#);
        let expected = if *on { -32602 } else { -32601 };
        assert_eq!(error_code(&mut peer, &line).await, expected, "{method}");
    }
    // `mcp/message` is a request the client handles.
    let (_conn, mut peer, _io) = raw_client(Default::default(), |_| Bare);
    let line = r#"{"jsonrpc":"2.0","id":1,"method":"mcp/message","params":[1]}"#;
    let expected = if cfg!(feature = "unstable-mcp-over-acp") {
        -32602
    } else {
        -32601
    };
    assert_eq!(error_code(&mut peer, line).await, expected, "mcp/message");
}

#[tokio::test]
async fn unstable_fields_of_stable_messages_reach_the_peer_with_or_without_features() {
    // An agent answering `session/new` with models and `session/prompt` with
    // usage, written as raw JSON: the client's typed results carry them,
    // typed with the features, in `extra` without.
    let (client, mut peer, _io) = raw_client(Default::default(), |_| Bare);
    let models = json!({"currentModelId": "small", "availableModels": [
        {"modelId": "small", "name": "Small"}, {"modelId": "large", "name": "Large", "description": "Slow"}]});
    let call = tokio::spawn(async move {
        let new = client
            .new_session(NewSessionRequest::new("/w"))
            .await
            .unwrap();
        let done = client.prompt(prompt("s-1", "hi")).await.unwrap();
        (new, done)
    });
    let req = within("session/new", peer.recv_json()).await;
    peer.send(
        &json!({"jsonrpc": "2.0", "id": req["id"], "result": {"sessionId": "s-1", "models": models}})
            .to_string(),
    )
    .await;
    let req = within("session/prompt", peer.recv_json()).await;
    let usage =
        json!({"totalTokens": 30, "inputTokens": 20, "outputTokens": 10, "cachedReadTokens": 5});
    peer.send(
        &json!({"jsonrpc": "2.0", "id": req["id"], "result": {"stopReason": "end_turn", "usage": usage}})
            .to_string(),
    )
    .await;
    let (new, done) = within("the answers", call).await.unwrap();
    assert_eq!(json_of(&new)["models"], models);
    assert_eq!(json_of(&done)["usage"], usage);
    #[cfg(feature = "unstable-session-model")]
    {
        let m = new.models.as_ref().expect("typed");
        assert_eq!(m.current_model_id.as_str(), "small");
        assert_eq!(m.available_models[1].description.as_deref(), Some("Slow"));
    }
    #[cfg(not(feature = "unstable-session-model"))]
    assert!(new.extra.get("models").is_some());
    #[cfg(feature = "unstable-session-usage")]
    {
        let u = done.usage.as_ref().expect("typed");
        assert_eq!((u.total_tokens, u.cached_read_tokens), (30, Some(5)));
    }
    #[cfg(not(feature = "unstable-session-usage"))]
    assert!(done.extra.get("usage").is_some());
}

/// With every feature: each unstable method round-trips through a connected
/// pair, typed on both sides.
#[cfg(feature = "unstable")]
mod typed {
    use super::*;
    use acp::{Agent, Client};
    use serde_json::Value;
    use std::sync::{Arc, Mutex};

    /// An agent offering two models, usage, forks, titles and providers, and
    /// recording every unstable call as `(method, params)`.
    #[derive(Clone, Default)]
    struct Unstable {
        seen: Arc<Mutex<Vec<(String, Value)>>>,
        model: Arc<Mutex<String>>,
    }

    impl Unstable {
        fn saw(&self, method: &str, params: &impl serde::Serialize) {
            self.seen
                .lock()
                .unwrap()
                .push((method.to_string(), json_of(params)));
        }
        fn models(&self) -> SessionModelState {
            SessionModelState::new(
                self.model.lock().unwrap().clone(),
                vec![
                    ModelInfo::new("small", "Small"),
                    ModelInfo::new("large", "Large").description("Slow, careful"),
                ],
            )
        }
    }

    impl Agent for Unstable {
        async fn new_session(
            &self,
            _: NewSessionRequest,
            _cx: RequestContext<AgentSide>,
        ) -> Result<NewSessionResponse, Error> {
            *self.model.lock().unwrap() = "small".into();
            Ok(NewSessionResponse::new("s-1").models(self.models()))
        }
        async fn set_session_model(
            &self,
            args: SetSessionModelRequest,
            _cx: RequestContext<AgentSide>,
        ) -> Result<SetSessionModelResponse, Error> {
            self.saw("session/set_model", &args);
            if !self
                .models()
                .available_models
                .iter()
                .any(|m| m.model_id == args.model_id)
            {
                return Err(Error::invalid_params().data(json!({"modelId": args.model_id})));
            }
            *self.model.lock().unwrap() = args.model_id.to_string();
            Ok(SetSessionModelResponse::new())
        }
        async fn prompt(
            &self,
            _: PromptRequest,
            _cx: RequestContext<AgentSide>,
        ) -> Result<PromptResponse, Error> {
            let out = if *self.model.lock().unwrap() == "large" {
                40
            } else {
                4
            };
            Ok(PromptResponse::new(StopReason::EndTurn).usage(Usage::new(10 + out, 10, out)))
        }
        async fn fork_session(
            &self,
            args: ForkSessionRequest,
            _cx: RequestContext<AgentSide>,
        ) -> Result<ForkSessionResponse, Error> {
            self.saw("session/fork", &args);
            Ok(ForkSessionResponse::new("s-2").models(self.models()))
        }
        async fn set_session_title(
            &self,
            args: SetSessionTitleRequest,
            _cx: RequestContext<AgentSide>,
        ) -> Result<SetSessionTitleResponse, Error> {
            self.saw("session/set_title", &args);
            Ok(SetSessionTitleResponse::new(args.title.trim()))
        }
        async fn list_providers(
            &self,
            args: ListProvidersRequest,
            _cx: RequestContext<AgentSide>,
        ) -> Result<ListProvidersResponse, Error> {
            self.saw("providers/list", &args);
            Ok(ListProvidersResponse::new(vec![ProviderInfo::new(
                "main",
                vec![LlmProtocol::Anthropic, LlmProtocol::OpenAi],
                true,
            )]))
        }
        async fn set_provider(
            &self,
            args: SetProviderRequest,
            _cx: RequestContext<AgentSide>,
        ) -> Result<SetProviderResponse, Error> {
            self.saw("providers/set", &args);
            Ok(SetProviderResponse::new())
        }
        async fn disable_provider(
            &self,
            args: DisableProviderRequest,
            _cx: RequestContext<AgentSide>,
        ) -> Result<DisableProviderResponse, Error> {
            self.saw("providers/disable", &args);
            Ok(DisableProviderResponse::new())
        }
        async fn mcp_message(
            &self,
            args: MessageMcpNotification,
            _cx: NotificationContext<AgentSide>,
        ) -> Result<(), Error> {
            self.saw("mcp/message", &args);
            Ok(())
        }
    }

    /// A client that provides one MCP server over ACP.
    struct McpHost;

    impl Client for McpHost {
        async fn mcp_message(
            &self,
            args: MessageMcpRequest,
            _cx: RequestContext<ClientSide>,
        ) -> Result<MessageMcpResponse, Error> {
            if args.server_id.as_str() != "editor" {
                return Ok(MessageMcpResponse::error(McpError::new(
                    -32602,
                    "no such server",
                )));
            }
            let params = args.params.map(|p| p.to_value()).unwrap_or(Value::Null);
            let result = json!({"method": args.method, "echo": params});
            Ok(MessageMcpResponse::result(
                RawJson::parse(result.to_string()).unwrap(),
            ))
        }
    }

    #[tokio::test]
    async fn the_session_model_switches_and_usage_follows() {
        let agent = Unstable::default();
        let pair = connect(
            {
                let agent = agent.clone();
                move |_| agent
            },
            |_| McpHost,
        );
        let c = &pair.client;
        let new = within("new", c.new_session(NewSessionRequest::new("/w")))
            .await
            .unwrap();
        let models = new.models.expect("offered");
        assert_eq!(models.current_model_id.as_str(), "small");
        let before = within("prompt", c.prompt(prompt("s-1", "hi")))
            .await
            .unwrap();
        assert_eq!(before.usage.map(|u| u.output_tokens), Some(4));

        within(
            "set_model",
            c.set_session_model(SetSessionModelRequest::new("s-1", "large")),
        )
        .await
        .unwrap();
        let after = within("prompt", c.prompt(prompt("s-1", "hi")))
            .await
            .unwrap();
        assert_eq!(after.usage.map(|u| u.output_tokens), Some(40));

        // A model the agent does not offer: its error reaches the caller, and
        // the model stays.
        let err = within(
            "set_model",
            c.set_session_model(SetSessionModelRequest::new("s-1", "huge")),
        )
        .await
        .unwrap_err();
        match err {
            acp::ConnectionError::Remote(e) => assert_eq!(e.code, ErrorCode::INVALID_PARAMS),
            other => panic!("{other:?}"),
        }
        assert_eq!(*agent.model.lock().unwrap(), "large");
        assert_eq!(
            agent.seen.lock().unwrap().as_slice(),
            [
                (
                    "session/set_model".to_string(),
                    json!({"sessionId": "s-1", "modelId": "large"})
                ),
                (
                    "session/set_model".to_string(),
                    json!({"sessionId": "s-1", "modelId": "huge"})
                ),
            ]
        );
    }

    #[tokio::test]
    async fn fork_title_and_providers_reach_their_handlers() {
        let agent = Unstable::default();
        let pair = connect(
            {
                let agent = agent.clone();
                move |_| agent
            },
            |_| McpHost,
        );
        let c = &pair.client;
        let fork = within(
            "fork",
            c.fork_session(
                ForkSessionRequest::new("s-1", "/w")
                    .system_prompt(SystemPrompt::append("Be brief.")),
            ),
        )
        .await
        .unwrap();
        assert_eq!(fork.session_id.as_str(), "s-2");
        assert!(fork.models.is_some());
        let title = within(
            "title",
            c.set_session_title(SetSessionTitleRequest::new("s-2", "  Notes ")),
        )
        .await
        .unwrap();
        assert_eq!(title.title, "Notes");
        let list = within(
            "providers/list",
            c.list_providers(ListProvidersRequest::new()),
        )
        .await
        .unwrap();
        assert_eq!(list.providers[0].supported[1], LlmProtocol::OpenAi);
        within(
            "providers/set",
            c.set_provider(SetProviderRequest::new(
                "main",
                LlmProtocol::OpenAi,
                "http://127.0.0.1:9/v1",
            )),
        )
        .await
        .unwrap();
        within(
            "providers/disable",
            c.disable_provider(DisableProviderRequest::new("main")),
        )
        .await
        .unwrap();
        c.mcp_message(
            MessageMcpNotification::new("editor", "r-1", "notifications/cancelled")
                .params(RawJson::parse(r#"{"requestId":"r-0"}"#).unwrap()),
        )
        .await
        .unwrap();
        // Notifications are handled in order, after the calls before them;
        // a round trip after it makes sure it was handled.
        within(
            "providers/list",
            c.list_providers(ListProvidersRequest::new()),
        )
        .await
        .unwrap();
        let seen = agent.seen.lock().unwrap().clone();
        let methods: Vec<&str> = seen.iter().map(|(m, _)| m.as_str()).collect();
        assert_eq!(
            methods,
            [
                "session/fork",
                "session/set_title",
                "providers/list",
                "providers/set",
                "providers/disable",
                "mcp/message",
                "providers/list",
            ]
        );
        assert_eq!(
            seen[0].1,
            json!({"sessionId": "s-1", "cwd": "/w",
                   "systemPrompt": {"mode": "append", "content": [{"type": "text", "text": "Be brief."}]}})
        );
        assert_eq!(
            seen[5].1,
            json!({"serverId": "editor", "requestId": "r-1", "method": "notifications/cancelled",
                   "params": {"requestId": "r-0"}})
        );
    }

    #[tokio::test]
    async fn the_agent_calls_an_mcp_server_the_client_provides() {
        let pair = connect(|_| Unstable::default(), |_| McpHost);
        let a = &pair.agent;
        let ok = within(
            "mcp/message",
            a.mcp_message(
                MessageMcpRequest::new("editor", "r-1", "tools/list")
                    .params(RawJson::parse(r#"{"cursor":null}"#).unwrap()),
            ),
        )
        .await
        .unwrap();
        let McpOutcome::Result(result) = &ok.outcome else {
            panic!("{ok:?}")
        };
        assert_eq!(
            result.to_value(),
            json!({"method": "tools/list", "echo": {"cursor": null}})
        );
        // An MCP-level error is a successful ACP answer carrying the error.
        let err = within(
            "mcp/message",
            a.mcp_message(MessageMcpRequest::new("other", "r-2", "tools/list")),
        )
        .await
        .unwrap();
        assert_eq!(
            json_of(&err),
            json!({"error": {"code": -32602, "message": "no such server"}})
        );
    }

    #[tokio::test]
    async fn default_bodies_of_unstable_methods_answer_method_not_found() {
        let pair = connect(|_| Trivial, |_| Bare);
        let c = &pair.client;
        let not_found = |r: Result<_, acp::ConnectionError>| match r {
            Err(acp::ConnectionError::Remote(e)) => e.code == ErrorCode::METHOD_NOT_FOUND,
            _ => false,
        };
        assert!(not_found(
            c.set_session_model(SetSessionModelRequest::new("s", "m"))
                .await
                .map(drop)
        ));
        assert!(not_found(
            c.fork_session(ForkSessionRequest::new("s", "/w"))
                .await
                .map(drop)
        ));
        assert!(not_found(
            c.list_providers(ListProvidersRequest::new())
                .await
                .map(drop)
        ));
        assert!(not_found(
            pair.agent
                .mcp_message(MessageMcpRequest::new("e", "r", "ping"))
                .await
                .map(drop)
        ));
    }
}
