//! The registry's HTTP server for the tests: HTTP/1.1 on 127.0.0.1, one
//! thread per connection and one request per connection; responses set by
//! path, with an ETag (answering `If-None-Match` with 304), a length that
//! lies (a download cut short), or held until a [`Gate`] opens.

use std::collections::HashMap;
use std::io::{BufRead, BufReader, Write};
use std::net::{TcpListener, TcpStream};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Condvar, Mutex};
use std::time::{Duration, Instant};

/// Holds a response until opened.
#[derive(Clone, Default)]
pub struct Gate(Arc<(Mutex<bool>, Condvar)>);

impl Gate {
    pub fn open(&self) {
        *self.0.0.lock().unwrap() = true;
        self.0.1.notify_all();
    }

    pub fn wait(&self) {
        let mut open = self.0.0.lock().unwrap();
        while !*open {
            open = self.0.1.wait(open).unwrap();
        }
    }
}

/// What the server answers for a path.
#[derive(Clone, Default)]
pub struct Route {
    pub status: u16,
    pub body: Vec<u8>,
    pub etag: Option<String>,
    /// Extra header lines.
    pub headers: Vec<String>,
    /// A `Content-Length` to announce instead of the body's (a longer one:
    /// the connection is closed after the body, cut short).
    pub claimed_length: Option<u64>,
    /// Held until opened.
    pub gate: Option<Gate>,
}

impl Route {
    pub fn ok(body: impl Into<Vec<u8>>) -> Route {
        Route {
            status: 200,
            body: body.into(),
            ..Route::default()
        }
    }
}

/// A request the server saw.
#[derive(Clone, Debug, PartialEq)]
pub struct Request {
    pub path: String,
    pub if_none_match: Option<String>,
}

/// An HTTP/1.1 server on 127.0.0.1: one thread per connection, one request
/// per connection.
pub struct Server {
    addr: std::net::SocketAddr,
    routes: Arc<Mutex<HashMap<String, Route>>>,
    log: Arc<Mutex<Vec<Request>>>,
    stop: Arc<AtomicBool>,
    thread: Option<std::thread::JoinHandle<()>>,
}

impl Server {
    pub fn start() -> Server {
        let listener = TcpListener::bind("127.0.0.1:0").unwrap();
        let addr = listener.local_addr().unwrap();
        let routes: Arc<Mutex<HashMap<String, Route>>> = Arc::default();
        let log: Arc<Mutex<Vec<Request>>> = Arc::default();
        let stop = Arc::new(AtomicBool::new(false));
        let thread = {
            let (routes, log, stop) = (routes.clone(), log.clone(), stop.clone());
            std::thread::spawn(move || {
                for conn in listener.incoming() {
                    if stop.load(Ordering::SeqCst) {
                        break;
                    }
                    let Ok(conn) = conn else { continue };
                    let (routes, log) = (routes.clone(), log.clone());
                    std::thread::spawn(move || {
                        let _ = serve(conn, &routes, &log);
                    });
                }
            })
        };
        Server {
            addr,
            routes,
            log,
            stop,
            thread: Some(thread),
        }
    }

    pub fn base(&self) -> String {
        format!("http://{}", self.addr)
    }

    pub fn url(&self, path: &str) -> String {
        format!("{}{path}", self.base())
    }

    pub fn set(&self, path: &str, route: Route) {
        self.routes.lock().unwrap().insert(path.to_owned(), route);
    }

    pub fn requests(&self) -> Vec<Request> {
        self.log.lock().unwrap().clone()
    }

    /// Waits until a request for `path` came (the test fails after 60 s).
    pub fn wait_for(&self, path: &str) {
        let deadline = Instant::now() + Duration::from_secs(60);
        while !self.requests().iter().any(|r| r.path == path) {
            assert!(Instant::now() < deadline, "no request for {path}");
            std::thread::sleep(Duration::from_millis(10));
        }
    }
}

impl Drop for Server {
    fn drop(&mut self) {
        self.stop.store(true, Ordering::SeqCst);
        let _ = TcpStream::connect(self.addr);
        if let Some(thread) = self.thread.take() {
            let _ = thread.join();
        }
    }
}

fn serve(
    conn: TcpStream,
    routes: &Mutex<HashMap<String, Route>>,
    log: &Mutex<Vec<Request>>,
) -> std::io::Result<()> {
    let mut reader = BufReader::new(conn.try_clone()?);
    let mut line = String::new();
    reader.read_line(&mut line)?;
    let path = line.split(' ').nth(1).unwrap_or("").to_owned();
    let mut if_none_match = None;
    loop {
        let mut header = String::new();
        if reader.read_line(&mut header)? == 0 || header == "\r\n" {
            break;
        }
        if let Some((name, value)) = header.split_once(':')
            && name.eq_ignore_ascii_case("if-none-match")
        {
            if_none_match = Some(value.trim().to_owned());
        }
    }
    log.lock().unwrap().push(Request {
        path: path.clone(),
        if_none_match: if_none_match.clone(),
    });
    let route = routes.lock().unwrap().get(&path).cloned();
    let mut conn = conn;
    let Some(route) = route else {
        return conn.write_all(
            b"HTTP/1.1 404 Not Found\r\nContent-Length: 0\r\nConnection: close\r\n\r\n",
        );
    };
    if let Some(gate) = &route.gate {
        gate.wait();
    }
    if route.etag.is_some() && route.etag == if_none_match {
        return conn.write_all(b"HTTP/1.1 304 Not Modified\r\nConnection: close\r\n\r\n");
    }
    let mut head = format!(
        "HTTP/1.1 {} X\r\nContent-Length: {}\r\nConnection: close\r\n",
        route.status,
        route.claimed_length.unwrap_or(route.body.len() as u64)
    );
    if let Some(etag) = &route.etag {
        head.push_str(&format!("ETag: {etag}\r\n"));
    }
    for header in &route.headers {
        head.push_str(&format!("{header}\r\n"));
    }
    head.push_str("\r\n");
    conn.write_all(head.as_bytes())?;
    conn.write_all(&route.body)?;
    conn.flush()
}
