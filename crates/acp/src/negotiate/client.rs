//! The client side of the negotiation: [`ClientRouter`] asks for v2 and
//! speaks what the agent answers (v2, or v1 when it has a v1 client too).

use super::{explain_unknown, explain_unknown_notification};
use crate::IoFuture;
use crate::client::ClientHandler;
use crate::connection::{ClientSideConnection, Connection};
use crate::engine::{ConnectionOptions, Engine, Handler, HandlerFuture, RequestState, declined};
use crate::error::ConnectionError;
use crate::transport::Transport;
use crate::v2;
use acp_schema::{Error, ProtocolVersion};
use futures::future::BoxFuture;
use serde_json::value::RawValue;
use std::sync::atomic::{AtomicI64, Ordering};
use std::sync::{Arc, Mutex, OnceLock};

/// A client implementation that is not there: the type of the v1 fallback of
/// a [`ClientRouter`] that has none. It has no values.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum NoClient {}

impl crate::Client for NoClient {}
impl v2::Client for NoClient {}

type MakeV1<C> = Box<dyn FnOnce(ClientSideConnection) -> C + Send>;
type MakeV2<C> = Box<dyn FnOnce(v2::ClientSideConnection) -> C + Send>;

/// A client that asks for protocol v2 and speaks what the agent answers: v2,
/// or v1 if it was given a v1 client as a fallback (see the [module
/// docs](super) for the rules).
///
/// ```no_run
/// # struct MyV1;
/// # impl acp::Client for MyV1 {}
/// # struct MyV2;
/// # impl acp::v2::Client for MyV2 {}
/// # async fn run(transport: acp::Transport) -> Result<(), acp::ConnectionError> {
/// use acp::negotiate::{ClientRouter, Negotiated};
/// use acp::schema::{Implementation, v2};
///
/// let (negotiating, io) = ClientRouter::new(|_conn| MyV2)
///     .v1(|_conn| MyV1)
///     .connect(transport, acp::ConnectionOptions::default());
/// tokio::spawn(io);
/// let hello = v2::InitializeRequest::new(Implementation::new("my-editor", "1.0.0"));
/// match negotiating.initialize(hello).await? {
///     Negotiated::V2 { connection, response } => { /* v2 calls */ }
///     Negotiated::V1 { connection, response } => { /* v1 calls */ }
/// }
/// # Ok(())
/// # }
/// ```
pub struct ClientRouter<C2, C1 = NoClient> {
    v2: MakeV2<C2>,
    v1: Option<MakeV1<C1>>,
    v1_capabilities: Option<acp_schema::ClientCapabilities>,
}

impl<C2: v2::Client> ClientRouter<C2> {
    /// A client that speaks v2 with the client `make_client` builds (once the
    /// agent answered 2, with the connection).
    pub fn new(make_client: impl FnOnce(v2::ClientSideConnection) -> C2 + Send + 'static) -> Self {
        ClientRouter {
            v2: Box::new(make_client),
            v1: None,
            v1_capabilities: None,
        }
    }
}

impl<C2: v2::Client, C1: crate::Client> ClientRouter<C2, C1> {
    /// Speaks v1 with the client `make_client` builds when the agent answers 1.
    pub fn v1<D: crate::Client>(
        self,
        make_client: impl FnOnce(ClientSideConnection) -> D + Send + 'static,
    ) -> ClientRouter<C2, D> {
        ClientRouter {
            v2: self.v2,
            v1: Some(Box::new(make_client)),
            v1_capabilities: self.v1_capabilities,
        }
    }

    /// The capabilities a v1 agent reads in our `initialize` (with a v1
    /// fallback): a v1 client that serves `fs/*` or `terminal/*` says so
    /// here. By default, those of a v2 client translated: no file system, no
    /// terminal (see the [module docs](super)).
    #[must_use]
    pub fn v1_capabilities(mut self, capabilities: acp_schema::ClientCapabilities) -> Self {
        self.v1_capabilities = Some(capabilities);
        self
    }

    /// Connects to an agent over `transport` (for an agent in a child process,
    /// [`AgentProcess::transport`](crate::AgentProcess)). Returns what sends
    /// `initialize`, and the I/O future, which must be spawned or awaited.
    pub fn connect(
        self,
        transport: Transport,
        options: ConnectionOptions,
    ) -> (Negotiating<C2, C1>, IoFuture) {
        let (engine, unstarted) = Engine::new(options);
        let handler = Arc::new(RouterHandler {
            engine: engine.clone(),
            initialize: AtomicI64::new(-1),
            make_v2: Mutex::new(Some(self.v2)),
            make_v1: Mutex::new(self.v1),
            v1_capabilities: self.v1_capabilities,
            chosen: OnceLock::new(),
        });
        let io = unstarted.run(transport, handler.clone());
        (Negotiating { engine, handler }, io)
    }
}

/// A connection whose version is not chosen yet: send
/// [`initialize`](Self::initialize).
pub struct Negotiating<C2, C1 = NoClient> {
    engine: Engine,
    handler: Arc<RouterHandler<C2, C1>>,
}

impl<C2, C1> std::fmt::Debug for Negotiating<C2, C1> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Negotiating").finish_non_exhaustive()
    }
}

/// The version the agent answered, with that version's connection and
/// `initialize` result.
#[derive(Debug)]
#[allow(clippy::large_enum_variant)] // one per connection
pub enum Negotiated {
    /// The agent speaks v1 (and the client had a v1 fallback).
    V1 {
        /// The v1 connection.
        connection: ClientSideConnection,
        /// The agent's `initialize` result.
        response: acp_schema::InitializeResponse,
    },
    /// The agent speaks v2.
    V2 {
        /// The v2 connection.
        connection: v2::ClientSideConnection,
        /// The agent's `initialize` result.
        response: acp_schema::v2::InitializeResponse,
    },
}

impl Negotiated {
    /// The version the connection speaks.
    pub fn version(&self) -> ProtocolVersion {
        match self {
            Negotiated::V1 { .. } => ProtocolVersion::V1,
            Negotiated::V2 { .. } => ProtocolVersion::V2,
        }
    }
}

impl<C2: v2::Client, C1: crate::Client> Negotiating<C2, C1> {
    /// Sends `initialize` (asking for `request.protocol_version`, 2 unless
    /// set otherwise) and reads the answer as the version it names.
    ///
    /// Fails with the agent's error (-32022 when it speaks nothing at or
    /// below the version asked for), with
    /// [`ConnectionError::UnsupportedVersion`] when the agent answers a
    /// version this client has no implementation of (the connection is then
    /// closed), or with [`ConnectionError::Protocol`] when the result does not
    /// decode as that version's.
    pub async fn initialize(
        self,
        request: acp_schema::v2::InitializeRequest,
    ) -> Result<Negotiated, ConnectionError> {
        let asked = request.protocol_version;
        let handler = &self.handler;
        let method = <acp_schema::v2::InitializeRequest as acp_schema::Request>::METHOD;
        let observe = |id| handler.initialize.store(id, Ordering::SeqCst);
        // With a v1 fallback, v1's members too, for a v1 agent to read.
        let raw = if crate::engine::lock(&handler.make_v1).is_some() {
            let params = crate::map::initialize_params_for_either(
                &request,
                handler.v1_capabilities.as_ref(),
            );
            self.engine.call_observed(method, &params, observe).await?
        } else {
            self.engine.call_observed(method, &request, observe).await?
        };
        let decode = |e: acp_schema::DecodeError| ConnectionError::Protocol(e);
        let text = acp_schema::params_text(Some(&raw));
        match self.handler.chosen.get().map(Chosen::version) {
            Some(ProtocolVersion::V2) => Ok(Negotiated::V2 {
                connection: Connection::from_engine(self.engine.clone()),
                response: acp_schema::decode(text).map_err(decode)?,
            }),
            Some(_) => Ok(Negotiated::V1 {
                connection: Connection::from_engine(self.engine.clone()),
                response: acp_schema::decode(text).map_err(decode)?,
            }),
            None => {
                self.engine.close();
                let answered = crate::map::asked_version(Some(&raw));
                Err(ConnectionError::UnsupportedVersion {
                    asked: asked.get(),
                    answered: answered.map(ProtocolVersion::get),
                })
            }
        }
    }
}

/// The implementation a connection chose.
enum Chosen<C1, C2> {
    V1(ClientHandler<C1>),
    V2(v2::ClientHandler<C2>),
}

impl<C1, C2> Chosen<C1, C2> {
    fn version(&self) -> ProtocolVersion {
        match self {
            Chosen::V1(_) => ProtocolVersion::V1,
            Chosen::V2(_) => ProtocolVersion::V2,
        }
    }
}

struct RouterHandler<C2, C1> {
    engine: Engine,
    /// The id of our `initialize` (-1 until it is sent).
    initialize: AtomicI64,
    make_v2: Mutex<Option<MakeV2<C2>>>,
    make_v1: Mutex<Option<MakeV1<C1>>>,
    /// What a v1 agent reads as our capabilities, if not the default.
    v1_capabilities: Option<acp_schema::ClientCapabilities>,
    chosen: OnceLock<Chosen<C1, C2>>,
}

impl<C2: v2::Client, C1: crate::Client> Handler for RouterHandler<C2, C1> {
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
        let Some(chosen) = self.chosen.get() else {
            return Err(Error::invalid_request().data(format!(
                "`{method}` arrived before the answer to `initialize` chose a protocol version"
            )));
        };
        let result = match chosen {
            Chosen::V1(h) => h.request(method, params, request),
            Chosen::V2(h) => h.request(method, params, request),
        };
        result.map_err(|e| explain_unknown(e, method, chosen.version()))
    }

    fn notification(
        &self,
        method: &str,
        params: Option<&RawValue>,
    ) -> Result<BoxFuture<'static, ()>, Error> {
        let Some(chosen) = self.chosen.get() else {
            return Err(Error::invalid_request().data(format!(
                "`{method}` arrived before the answer to `initialize`; dropped"
            )));
        };
        let result = match chosen {
            Chosen::V1(h) => h.notification(method, params),
            Chosen::V2(h) => h.notification(method, params),
        };
        result.map_err(|e| explain_unknown_notification(e, method, chosen.version()))
    }

    fn result_seen(&self, id: i64, result: &RawValue) {
        if id != self.initialize.load(Ordering::SeqCst) || self.chosen.get().is_some() {
            return;
        }
        let chosen = match crate::map::asked_version(Some(result)) {
            Some(ProtocolVersion::V2) => {
                let Some(make) = crate::engine::lock(&self.make_v2).take() else {
                    return;
                };
                let conn: v2::ClientSideConnection = Connection::from_engine(self.engine.clone());
                Chosen::V2(v2::ClientHandler::new(make(conn.clone()), conn))
            }
            Some(ProtocolVersion::V1) => {
                let Some(make) = crate::engine::lock(&self.make_v1).take() else {
                    return;
                };
                let conn: ClientSideConnection = Connection::from_engine(self.engine.clone());
                Chosen::V1(ClientHandler::new(make(conn.clone()), conn))
            }
            _ => return,
        };
        let _ = self.chosen.set(chosen);
    }
}
