//! The WebSocket profile's client: one text frame per message.

use super::{ClientOptions, FromEngine, ToEngine, authority, engine_pipe, refused};
use crate::codec::Frame;
use crate::transport::Transport;
use futures::{SinkExt, StreamExt};
use std::io;
use std::sync::Arc;
use tokio::io::{AsyncRead, AsyncWrite};
use tokio::net::TcpStream;
use tokio_tungstenite::tungstenite::protocol::WebSocketConfig;
use tokio_tungstenite::tungstenite::protocol::frame::coding::CloseCode;
use tokio_tungstenite::tungstenite::{
    self, Message, client::IntoClientRequest, protocol::CloseFrame,
};

trait Io: AsyncRead + AsyncWrite + Unpin + Send {}
impl<T: AsyncRead + AsyncWrite + Unpin + Send> Io for T {}

pub(super) async fn connect(uri: ::http::Uri, options: &ClientOptions) -> io::Result<Transport> {
    let secure = uri.scheme_str() == Some("wss");
    let (host, port) = authority(&uri, secure)?;
    let mut request = uri
        .clone()
        .into_client_request()
        .map_err(|e| io::Error::new(io::ErrorKind::InvalidInput, e.to_string()))?;
    for (name, value) in &options.header_map()? {
        request.headers_mut().append(name, value.clone());
    }
    let config = WebSocketConfig::default()
        .max_message_size(Some(options.max_message_size))
        .max_frame_size(Some(options.max_message_size));
    let open = async {
        let tcp = TcpStream::connect((host.as_str(), port))
            .await
            .map_err(|e| {
                io::Error::new(e.kind(), format!("cannot connect to {host}:{port}: {e}"))
            })?;
        let _ = tcp.set_nodelay(true);
        let stream: Box<dyn Io> = if secure {
            let tls = Arc::new(crate::remote::tls::client_config(
                &options.root_certificates,
                true,
            )?);
            let name = rustls_pki_types::ServerName::try_from(host.clone())
                .map_err(|e| io::Error::new(io::ErrorKind::InvalidInput, e.to_string()))?;
            let stream = tokio_rustls::TlsConnector::from(tls)
                .connect(name, tcp)
                .await
                .map_err(|e| {
                    io::Error::new(e.kind(), format!("TLS with {host}:{port} failed: {e}"))
                })?;
            Box::new(stream)
        } else {
            Box::new(tcp)
        };
        tokio_tungstenite::client_async_with_config(request, stream, Some(config))
            .await
            .map_err(|e| handshake_error(e, &uri))
    };
    let (socket, _response) = tokio::time::timeout(options.connect_timeout, open)
        .await
        .map_err(|_| {
            io::Error::new(
                io::ErrorKind::TimedOut,
                format!(
                    "connecting to {uri} took longer than {} s",
                    options.connect_timeout.as_secs()
                ),
            )
        })??;
    let (transport, to_engine, from_engine) = engine_pipe(options.max_message_size);
    tokio::spawn(bridge(socket, to_engine, from_engine));
    Ok(transport)
}

fn handshake_error(error: tungstenite::Error, uri: &::http::Uri) -> io::Error {
    match error {
        tungstenite::Error::Http(response) => {
            let body = response
                .body()
                .as_deref()
                .map(String::from_utf8_lossy)
                .unwrap_or_default()
                .into_owned();
            refused(response.status(), "the WebSocket upgrade", &body)
        }
        tungstenite::Error::Io(e) => io::Error::new(e.kind(), format!("WebSocket to {uri}: {e}")),
        other => io::Error::other(format!("WebSocket to {uri}: {other}")),
    }
}

/// Why the server's close ends the engine's input: `None` for a normal
/// close (code 1000, or none).
fn close_error(frame: Option<&CloseFrame>) -> Option<io::Error> {
    let frame = frame?;
    if frame.code == CloseCode::Normal {
        return None;
    }
    let reason = if frame.reason.is_empty() {
        String::new()
    } else {
        format!(": {}", frame.reason)
    };
    Some(io::Error::new(
        io::ErrorKind::ConnectionAborted,
        format!(
            "the server closed the WebSocket (code {}){reason}",
            u16::from(frame.code)
        ),
    ))
}

async fn bridge<S>(
    socket: tokio_tungstenite::WebSocketStream<S>,
    engine: ToEngine,
    mut from_engine: FromEngine,
) where
    S: AsyncRead + AsyncWrite + Unpin + Send + 'static,
{
    let (mut sink, mut stream) = socket.split();
    // What the engine writes goes out as text frames; its end closes the
    // socket.
    let outgoing = tokio::spawn(async move {
        loop {
            match from_engine.next_frame().await {
                Ok(Some(Frame::Message(line))) => {
                    let text = String::from_utf8_lossy(line).into_owned();
                    if sink.send(Message::text(text)).await.is_err() {
                        return;
                    }
                }
                Ok(Some(Frame::TooLong { .. })) => {}
                Ok(None) | Err(_) => {
                    let _ = sink.send(Message::Close(None)).await;
                    let _ = sink.close().await;
                    return;
                }
            }
        }
    });
    loop {
        match stream.next().await {
            Some(Ok(Message::Text(text))) => {
                if !engine.deliver(text.as_bytes().to_vec()).await {
                    break;
                }
            }
            Some(Ok(Message::Close(frame))) => {
                if let Some(error) = close_error(frame.as_ref()) {
                    engine.fail(error).await;
                }
                break;
            }
            // Binary frames are not ACP; pings are answered by the library.
            Some(Ok(_)) => {}
            Some(Err(tungstenite::Error::ConnectionClosed)) => break,
            None => {
                engine
                    .fail(io::Error::new(
                        io::ErrorKind::ConnectionAborted,
                        "the connection to the server was lost (no WebSocket close)",
                    ))
                    .await;
                break;
            }
            Some(Err(e)) => {
                engine
                    .fail(io::Error::new(
                        io::ErrorKind::ConnectionAborted,
                        format!("the WebSocket connection failed: {e}"),
                    ))
                    .await;
                break;
            }
        }
    }
    outgoing.abort();
}
