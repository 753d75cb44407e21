//! The agent side of the negotiation: [`AgentRouter`] serves a v1 and a v2
//! implementation on one transport and hands each connection to the one its
//! client's `initialize` chooses.

use super::{explain_unknown, explain_unknown_notification};
use crate::IoFuture;
use crate::agent::AgentHandler;
use crate::connection::{AgentSideConnection, Connection};
use crate::engine::{ConnectionOptions, Engine, Handler, HandlerFuture, RequestState, declined};
use crate::error::ConnectionError;
use crate::map::asked_version;
use crate::transport::Transport;
use crate::v2;
use acp_schema::{Error, InitializeRequest, ProtocolVersion, Request, RequestId};
use futures::future::BoxFuture;
use serde_json::value::RawValue;
use std::sync::{Arc, Mutex, OnceLock};

/// An agent implementation that is not there: the type of a version the
/// router does not serve. It has no values.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum NoAgent {}

impl crate::Agent for NoAgent {}
impl v2::Agent for NoAgent {}

type MakeV1<A> = Box<dyn FnOnce(AgentSideConnection) -> A + Send>;
type MakeV2<A> = Box<dyn FnOnce(v2::AgentSideConnection) -> A + Send>;

/// Serves a v1 agent, a v2 agent, or both, from one program: each connection
/// speaks the version its client's `initialize` chooses (see the [module
/// docs](super) for the rules).
///
/// ```no_run
/// # struct EchoV1;
/// # impl acp::Agent for EchoV1 {}
/// # struct EchoV2;
/// # impl acp::v2::Agent for EchoV2 {}
/// # async fn run() -> Result<(), acp::ConnectionError> {
/// acp::negotiate::AgentRouter::new()
///     .v1(|_conn| EchoV1)
///     .v2(|_conn| EchoV2)
///     .serve(acp::Transport::stdio())
///     .await
/// # }
/// ```
pub struct AgentRouter<A1 = NoAgent, A2 = NoAgent> {
    v1: Option<MakeV1<A1>>,
    v2: Option<MakeV2<A2>>,
}

impl AgentRouter {
    /// A router that serves nothing yet: add [`v1`](Self::v1) and/or
    /// [`v2`](Self::v2).
    pub fn new() -> Self {
        AgentRouter { v1: None, v2: None }
    }
}

impl AgentRouter {
    /// Serves v2 clients with the agent `make_agent` builds, and v1 clients
    /// with the same agent through the bridge's translation
    /// ([`crate::bridge::V1Adapter`]; what it maps and loses is in the bridge's
    /// docs): one v2 implementation for both versions.
    pub fn v2_with_v1_adapter<B: v2::Agent>(
        make_agent: impl FnOnce(v2::AgentSideConnection) -> B + Send + 'static,
    ) -> AgentRouter<crate::bridge::V1Adapter, B> {
        type Make<B> = Box<dyn FnOnce(v2::AgentSideConnection) -> B + Send>;
        let shared: Arc<Mutex<Option<Make<B>>>> = Arc::new(Mutex::new(Some(Box::new(make_agent))));
        let for_v1 = shared.clone();
        AgentRouter {
            v1: Some(Box::new(move |down: AgentSideConnection| {
                let make = crate::engine::lock(&for_v1).take();
                crate::bridge::v1_adapter(
                    move |conn| make.expect("the router builds one implementation")(conn),
                    down,
                )
            })),
            v2: Some(Box::new(move |conn: v2::AgentSideConnection| {
                let make = crate::engine::lock(&shared).take();
                make.expect("the router builds one implementation")(conn)
            })),
        }
    }
}

impl Default for AgentRouter {
    fn default() -> Self {
        Self::new()
    }
}

impl<A1: crate::Agent, A2: v2::Agent> AgentRouter<A1, A2> {
    /// Serves v1 clients with the agent `make_agent` builds (once a client
    /// chose v1, with the connection).
    pub fn v1<B: crate::Agent>(
        self,
        make_agent: impl FnOnce(AgentSideConnection) -> B + Send + 'static,
    ) -> AgentRouter<B, A2> {
        AgentRouter {
            v1: Some(Box::new(make_agent)),
            v2: self.v2,
        }
    }

    /// Serves v2 clients with the agent `make_agent` builds (once a client
    /// chose v2, with the connection).
    pub fn v2<B: v2::Agent>(
        self,
        make_agent: impl FnOnce(v2::AgentSideConnection) -> B + Send + 'static,
    ) -> AgentRouter<A1, B> {
        AgentRouter {
            v1: self.v1,
            v2: Some(Box::new(make_agent)),
        }
    }

    /// The versions served, oldest first.
    fn supported(&self) -> Vec<ProtocolVersion> {
        let mut out = Vec::new();
        if self.v1.is_some() {
            out.push(ProtocolVersion::V1);
        }
        if self.v2.is_some() {
            out.push(ProtocolVersion::V2);
        }
        out
    }

    /// Connects to a client over `transport`. Returns a handle that tells the
    /// chosen version, and the I/O future, which must be spawned or awaited;
    /// it ends when the client goes away.
    pub fn connect(
        self,
        transport: Transport,
        options: ConnectionOptions,
    ) -> (RoutedAgent, IoFuture) {
        let (engine, unstarted) = Engine::new(options);
        let version = Arc::new(OnceLock::new());
        let handler = RouterHandler {
            engine: engine.clone(),
            supported: self.supported(),
            make_v1: Mutex::new(self.v1),
            make_v2: Mutex::new(self.v2),
            chosen: OnceLock::new(),
            version: version.clone(),
        };
        let io = unstarted.run(transport, Arc::new(handler));
        (RoutedAgent { engine, version }, io)
    }

    /// Serves one client over `transport` with default options until it goes
    /// away.
    pub async fn serve(self, transport: Transport) -> Result<(), ConnectionError> {
        let (_routed, io) = self.connect(transport, ConnectionOptions::default());
        io.await
    }
}

/// The agent's end of a connection served by an [`AgentRouter`]: which version
/// it speaks, and that version's connection.
#[derive(Clone)]
pub struct RoutedAgent {
    engine: Engine,
    version: Arc<OnceLock<ProtocolVersion>>,
}

impl std::fmt::Debug for RoutedAgent {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("RoutedAgent")
            .field("version", &self.version())
            .field("closed", &self.engine.is_closed())
            .finish()
    }
}

impl RoutedAgent {
    /// The version the client chose, once its `initialize` was read.
    pub fn version(&self) -> Option<ProtocolVersion> {
        self.version.get().copied()
    }

    /// The v1 connection, if the client chose v1.
    pub fn v1(&self) -> Option<AgentSideConnection> {
        (self.version() == Some(ProtocolVersion::V1))
            .then(|| Connection::from_engine(self.engine.clone()))
    }

    /// The v2 connection, if the client chose v2.
    pub fn v2(&self) -> Option<v2::AgentSideConnection> {
        (self.version() == Some(ProtocolVersion::V2))
            .then(|| Connection::from_engine(self.engine.clone()))
    }

    /// The v2 connection of a router that serves only v2 (its only possible
    /// version), before the choice.
    pub(crate) fn connection_v2(&self) -> v2::AgentSideConnection {
        Connection::from_engine(self.engine.clone())
    }

    /// Closes the connection.
    pub fn close(&self) {
        self.engine.close()
    }

    /// Resolves when the connection has closed.
    pub async fn closed(&self) {
        self.engine.closed().await
    }
}

/// The implementation a connection chose.
enum Chosen<A1, A2> {
    V1(AgentHandler<A1>),
    V2(v2::AgentHandler<A2>),
}

impl<A1, A2> Chosen<A1, A2> {
    fn version(&self) -> ProtocolVersion {
        match self {
            Chosen::V1(_) => ProtocolVersion::V1,
            Chosen::V2(_) => ProtocolVersion::V2,
        }
    }
}

struct RouterHandler<A1, A2> {
    engine: Engine,
    supported: Vec<ProtocolVersion>,
    make_v1: Mutex<Option<MakeV1<A1>>>,
    make_v2: Mutex<Option<MakeV2<A2>>>,
    chosen: OnceLock<Chosen<A1, A2>>,
    version: Arc<OnceLock<ProtocolVersion>>,
}

impl<A1: crate::Agent, A2: v2::Agent> RouterHandler<A1, A2> {
    /// The newest served version at or below `asked` (v1 for anything when
    /// v1 is all there is).
    fn select(&self, asked: ProtocolVersion) -> Result<ProtocolVersion, Error> {
        let (v1, v2) = (
            self.supported.contains(&ProtocolVersion::V1),
            self.supported.contains(&ProtocolVersion::V2),
        );
        if v2 && asked >= ProtocolVersion::V2 {
            Ok(ProtocolVersion::V2)
        } else if v1 && (!v2 || asked >= ProtocolVersion::V1) {
            Ok(ProtocolVersion::V1)
        } else {
            Err(acp_schema::v2::unsupported_protocol_version(
                asked,
                self.supported.clone(),
            ))
        }
    }

    /// Builds the chosen implementation (once).
    fn choose(&self, version: ProtocolVersion) -> Result<&Chosen<A1, A2>, Error> {
        if let Some(chosen) = self.chosen.get() {
            return Ok(chosen);
        }
        let chosen = match version {
            ProtocolVersion::V2 => {
                let make = crate::engine::lock(&self.make_v2).take();
                let make = make.ok_or_else(Error::internal_error)?;
                let conn: v2::AgentSideConnection = Connection::from_engine(self.engine.clone());
                Chosen::V2(v2::AgentHandler::new(make(conn.clone()), conn))
            }
            _ => {
                let make = crate::engine::lock(&self.make_v1).take();
                let make = make.ok_or_else(Error::internal_error)?;
                let conn: AgentSideConnection = Connection::from_engine(self.engine.clone());
                Chosen::V1(AgentHandler::new(make(conn.clone()), conn))
            }
        };
        let _ = self.version.set(version);
        Ok(self.chosen.get_or_init(|| chosen))
    }

    /// The client's first `initialize`: chooses the version, then hands the
    /// request (as the chosen version's client would have sent it) to it.
    fn first_initialize(
        &self,
        params: Option<&RawValue>,
        request: &Arc<RequestState>,
    ) -> Result<HandlerFuture, Error> {
        let asked = asked_version(params).ok_or_else(|| {
            Error::invalid_params().data(
                "`initialize` needs `protocolVersion`, an integer from 0 to 65535; \
                 send it again",
            )
        })?;
        let mut version = self.select(asked)?;
        if version == ProtocolVersion::V2
            && self.supported.contains(&ProtocolVersion::V1)
            && v1_shaped(params)
        {
            // A v1 client asking for more than 1: v1's answer, as before v2.
            version = ProtocolVersion::V1;
        }
        if version == ProtocolVersion::V2 && *request.id() == RequestId::Null {
            return Err(
                Error::invalid_request().data("v2 request ids are strings or integers, not null")
            );
        }
        let chosen = self.choose(version)?;
        let rewritten = as_asked_of(params, asked, version);
        let params = rewritten.as_deref().or(params);
        Chosen::request(chosen, InitializeRequest::METHOD, params, request)
    }
}

/// Whether `initialize` params are a v1 client's: not a valid v2
/// `initialize`, no v2 `info` member (a v2 client's broken one is v2's to
/// refuse), and a valid v1 `initialize`.
fn v1_shaped(params: Option<&RawValue>) -> bool {
    #[derive(serde::Deserialize)]
    struct Info<'a> {
        #[serde(borrow, default)]
        info: Option<&'a RawValue>,
    }
    let has_info = params
        .and_then(|p| serde_json::from_str::<Info<'_>>(p.get()).ok())
        .is_some_and(|i| i.info.is_some());
    !has_info
        && acp_schema::decode_params::<acp_schema::v2::InitializeRequest>(params).is_err()
        && acp_schema::decode_params::<InitializeRequest>(params).is_ok()
}

/// `initialize` params as a client of `version` would have sent them, when
/// the client asked for another version (`None`: unchanged).
fn as_asked_of(
    params: Option<&RawValue>,
    asked: ProtocolVersion,
    version: ProtocolVersion,
) -> Option<Box<RawValue>> {
    if asked == version || (version == ProtocolVersion::V1 && asked < ProtocolVersion::V2) {
        return None;
    }
    let decoded = acp_schema::decode_params::<acp_schema::v2::InitializeRequest>(params);
    let Ok(v2) = decoded else {
        if version == ProtocolVersion::V2 {
            return None; // v2's handler refuses it
        }
        // A v1 `initialize` asking for more than 1, handed to v1: asking
        // for 1, every other member as it came.
        let mut v1: serde_json::Map<String, serde_json::Value> =
            serde_json::from_str(params?.get()).ok()?;
        v1.insert("protocolVersion".into(), ProtocolVersion::V1.get().into());
        return serde_json::value::to_raw_value(&v1).ok();
    };
    let encoded = if version == ProtocolVersion::V2 {
        serde_json::value::to_raw_value(&v2.protocol_version(ProtocolVersion::V2))
    } else {
        serde_json::value::to_raw_value(&crate::map::initialize_request_to_v1(v2))
    };
    encoded.ok()
}

impl<A1: crate::Agent, A2: v2::Agent> Chosen<A1, A2> {
    fn request(
        &self,
        method: &str,
        params: Option<&RawValue>,
        request: &Arc<RequestState>,
    ) -> Result<HandlerFuture, Error> {
        let result = match self {
            Chosen::V1(h) => h.request(method, params, request),
            Chosen::V2(h) => h.request(method, params, request),
        };
        result.map_err(|e| explain_unknown(e, method, self.version()))
    }

    fn notification(
        &self,
        method: &str,
        params: Option<&RawValue>,
    ) -> Result<BoxFuture<'static, ()>, Error> {
        let result = match self {
            Chosen::V1(h) => h.notification(method, params),
            Chosen::V2(h) => h.notification(method, params),
        };
        result.map_err(|e| explain_unknown_notification(e, method, self.version()))
    }
}

impl<A1: crate::Agent, A2: v2::Agent> Handler for RouterHandler<A1, A2> {
    fn prepare_request<'de, D: serde::Deserializer<'de>>(
        &self,
        method: &str,
        params: D,
        request: &Arc<RequestState>,
    ) -> Result<HandlerFuture, D::Error> {
        match self.chosen.get() {
            Some(Chosen::V1(h)) => h.prepare_request(method, params, request),
            Some(Chosen::V2(h)) => h.prepare_request(method, params, request),
            None => Err(declined()),
        }
    }

    fn prepare_notification<'de, D: serde::Deserializer<'de>>(
        &self,
        method: &str,
        params: D,
    ) -> Result<BoxFuture<'static, ()>, D::Error> {
        match self.chosen.get() {
            Some(Chosen::V1(h)) => h.prepare_notification(method, params),
            Some(Chosen::V2(h)) => h.prepare_notification(method, params),
            None => Err(declined()),
        }
    }

    fn request(
        &self,
        method: &str,
        params: Option<&RawValue>,
        request: &Arc<RequestState>,
    ) -> Result<HandlerFuture, Error> {
        match self.chosen.get() {
            Some(chosen) => chosen.request(method, params, request),
            None if method == InitializeRequest::METHOD => self.first_initialize(params, request),
            // v1's runtime serves a client that skips `initialize`: so does
            // a router with a v1 implementation, which that client chose.
            None if self.supported.contains(&ProtocolVersion::V1) => self
                .choose(ProtocolVersion::V1)?
                .request(method, params, request),
            None => Err(Error::invalid_request().data(format!(
                "the first request must be `initialize`, not `{method}`"
            ))),
        }
    }

    fn notification(
        &self,
        method: &str,
        params: Option<&RawValue>,
    ) -> Result<BoxFuture<'static, ()>, Error> {
        match self.chosen.get() {
            Some(chosen) => chosen.notification(method, params),
            None if self.supported.contains(&ProtocolVersion::V1) => self
                .choose(ProtocolVersion::V1)?
                .notification(method, params),
            None => Err(Error::invalid_request()
                .data(format!("`{method}` arrived before `initialize`; dropped"))),
        }
    }
}

// The v2-only agent's constructors live here, next to the router they use.
impl v2::AgentSideConnection {
    /// Connects a v2 agent to a client over `transport`, behind the version
    /// check (a client asking for version 1 gets -32022; see
    /// [`AgentRouter`], which serves v1 and v2 from one program).
    ///
    /// `make_agent` is called once the client's `initialize` chose v2, with
    /// the connection. Returns the connection and the I/O future, which must
    /// be spawned or awaited.
    pub fn new<A: v2::Agent>(
        transport: Transport,
        options: ConnectionOptions,
        make_agent: impl FnOnce(v2::AgentSideConnection) -> A + Send + 'static,
    ) -> (v2::AgentSideConnection, IoFuture) {
        let (routed, io) = AgentRouter::new()
            .v2(make_agent)
            .connect(transport, options);
        (routed.connection_v2(), io)
    }

    /// Serves a v2 agent over `transport` with default options until the
    /// client goes away.
    pub async fn serve<A: v2::Agent>(
        transport: Transport,
        make_agent: impl FnOnce(v2::AgentSideConnection) -> A + Send + 'static,
    ) -> Result<(), ConnectionError> {
        let (_conn, io) = Self::new(transport, ConnectionOptions::default(), make_agent);
        io.await
    }
}
