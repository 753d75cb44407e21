//! The notification lane's bookkeeping, shared by the reader (which decides
//! where a handler runs) and outgoing calls (which tell the reader when a
//! notification handler waits on the peer).

use std::sync::atomic::{AtomicUsize, Ordering};
use tokio::sync::Notify;

tokio::task_local! {
    /// Set while a notification handler of the connection with this id runs.
    pub(super) static IN_NOTIFICATION: usize;
}

/// The notification lane's bookkeeping, read by the reader to decide.
#[derive(Default)]
pub(super) struct LaneState {
    /// Jobs queued on or running in the lane.
    pub(super) backlog: AtomicUsize,
    /// Notification handlers currently awaiting a response from the peer.
    pub(super) waiting_in_notification: AtomicUsize,
    pub(super) waiting_changed: Notify,
}

impl LaneState {
    pub(super) fn idle(&self) -> bool {
        self.backlog.load(Ordering::SeqCst) == 0
    }

    pub(super) fn waiting_starts(&self) {
        self.waiting_in_notification.fetch_add(1, Ordering::SeqCst);
        self.waiting_changed.notify_waiters();
    }

    pub(super) fn waiting_ends(&self) {
        self.waiting_in_notification.fetch_sub(1, Ordering::SeqCst);
    }

    /// Wakes the reader if it waits for room in the lane (at the close).
    pub(super) fn wake(&self) {
        self.waiting_changed.notify_waiters();
    }
}
