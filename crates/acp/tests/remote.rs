//! The remote transports (features `websocket`, `http`, `server`).
