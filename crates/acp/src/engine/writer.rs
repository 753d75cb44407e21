//! The single writer: every outgoing line, in queue order, batched between flushes.

use super::*;

pub(super) async fn write_loop(
    conn: RpcConnection,
    mut writer: LineWriter<std::pin::Pin<Box<dyn tokio::io::AsyncWrite + Send>>>,
    mut lines: mpsc::UnboundedReceiver<Outgoing>,
    tap: Option<Tap>,
) -> Result<(), ConnectionError> {
    let result = write_lines(&conn, &mut writer, &mut lines, tap.as_ref()).await;
    // Nothing will be written any more: senders waiting for room give up.
    conn.shared.out_room.close();
    if let Err(e) = &result {
        conn.shutdown(Some(e.clone()));
    }
    result
}

async fn write_lines(
    conn: &RpcConnection,
    writer: &mut LineWriter<std::pin::Pin<Box<dyn tokio::io::AsyncWrite + Send>>>,
    lines: &mut mpsc::UnboundedReceiver<Outgoing>,
    tap: Option<&Tap>,
) -> Result<(), ConnectionError> {
    let io = |e: std::io::Error| ConnectionError::Io(Arc::new(e));
    let emit = |item: &Outgoing| {
        conn.shared.dequeued(item);
        if let Some(tap) = tap {
            tap(&TapEvent {
                direction: Direction::Outgoing,
                at: SystemTime::now(),
                line: &item.line,
            });
        }
    };
    loop {
        let next = tokio::select! {
            biased;
            line = lines.recv() => line,
            _ = conn.shared.closed.cancelled() => None,
        };
        let Some(item) = next else { break };
        emit(&item);
        writer.write_line(&item.line).await.map_err(io)?;
        // Write whatever else is ready before paying for a flush; one yield lets
        // a busy producer add to the batch.
        let mut yielded = false;
        loop {
            match lines.try_recv() {
                Ok(item) => {
                    emit(&item);
                    writer.write_line(&item.line).await.map_err(io)?;
                }
                Err(_) if !yielded => {
                    yielded = true;
                    tokio::task::yield_now().await;
                }
                Err(_) => break,
            }
        }
        writer.flush().await.map_err(io)?;
    }
    // Closing: what was queued before the close still goes out, unless the
    // peer stops reading for longer than CLOSE_FLUSH_TIMEOUT.
    let drain = async {
        while let Ok(item) = lines.try_recv() {
            emit(&item);
            writer.write_line(&item.line).await.map_err(io)?;
        }
        writer.flush().await.map_err(io)
    };
    match tokio::time::timeout(CLOSE_FLUSH_TIMEOUT, drain).await {
        Ok(result) => result,
        Err(_) => {
            warn!("the peer stopped reading; unsent output dropped at close");
            Ok(())
        }
    }
}

/// How long closing waits for queued output to reach a peer that is not reading.
const CLOSE_FLUSH_TIMEOUT: std::time::Duration = std::time::Duration::from_secs(5);
