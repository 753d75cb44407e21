//! A loopback TCP proxy for tests of a network that fails: it passes bytes
//! both ways between its clients and a server, and can sever every
//! connection at once (both sides see the socket close, without a word of
//! the protocol), or send new connections to another server (the server
//! "restarted" as far as its clients can tell).

use std::io::{Read, Write};
use std::net::{Shutdown, SocketAddr, TcpListener, TcpStream};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};

pub struct Proxy {
    pub addr: SocketAddr,
    shared: Arc<Shared>,
}

struct Shared {
    target: Mutex<SocketAddr>,
    /// Both sockets of every connection passed on now.
    open: Mutex<Vec<TcpStream>>,
    stopped: AtomicBool,
}

impl Proxy {
    /// A proxy on a free loopback port to `target`.
    pub fn start(target: SocketAddr) -> Proxy {
        let listener = TcpListener::bind("127.0.0.1:0").unwrap();
        let addr = listener.local_addr().unwrap();
        let shared = Arc::new(Shared {
            target: Mutex::new(target),
            open: Mutex::new(Vec::new()),
            stopped: AtomicBool::new(false),
        });
        let accepting = Arc::clone(&shared);
        std::thread::spawn(move || {
            for client in listener.incoming() {
                if accepting.stopped.load(Ordering::SeqCst) {
                    return;
                }
                let Ok(client) = client else { continue };
                let target = *accepting.target.lock().unwrap();
                let Ok(server) = TcpStream::connect(target) else {
                    continue;
                };
                let _ = client.set_nodelay(true);
                let _ = server.set_nodelay(true);
                {
                    let mut open = accepting.open.lock().unwrap();
                    open.push(client.try_clone().unwrap());
                    open.push(server.try_clone().unwrap());
                }
                pipe(client.try_clone().unwrap(), server.try_clone().unwrap());
                pipe(server, client);
            }
        });
        Proxy { addr, shared }
    }

    /// The address of a served URL (`ws://127.0.0.1:PORT/acp`).
    pub fn addr_of(url: &str) -> SocketAddr {
        let rest = url.split_once("://").unwrap().1;
        rest.split('/').next().unwrap().parse().unwrap()
    }

    /// The proxy's URL for the server's `/acp`, over WebSocket.
    pub fn ws_url(&self) -> String {
        format!("ws://{}/acp", self.addr)
    }

    /// The proxy's URL for the server's `/acp`, over Streamable HTTP.
    pub fn http_url(&self) -> String {
        format!("http://{}/acp", self.addr)
    }

    /// Closes every connection passed on now, both ways.
    pub fn sever(&self) {
        for socket in self.shared.open.lock().unwrap().drain(..) {
            let _ = socket.shutdown(Shutdown::Both);
        }
    }

    /// Sends new connections to `target` from now on.
    pub fn retarget(&self, target: SocketAddr) {
        *self.shared.target.lock().unwrap() = target;
    }
}

impl Drop for Proxy {
    fn drop(&mut self) {
        self.shared.stopped.store(true, Ordering::SeqCst);
        self.sever();
        // Wakes the accepting thread so that it sees it is stopped.
        let _ = TcpStream::connect(self.addr);
    }
}

/// Copies `from` to `to` on a thread of its own until either ends, then
/// closes both.
fn pipe(mut from: TcpStream, mut to: TcpStream) {
    std::thread::spawn(move || {
        let mut buffer = [0u8; 16 * 1024];
        loop {
            match from.read(&mut buffer) {
                Ok(0) | Err(_) => break,
                Ok(n) => {
                    if to.write_all(&buffer[..n]).is_err() {
                        break;
                    }
                }
            }
        }
        let _ = from.shutdown(Shutdown::Both);
        let _ = to.shutdown(Shutdown::Both);
    });
}
