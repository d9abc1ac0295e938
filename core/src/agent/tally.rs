//! A turn's token totals, for the unstable `usage` of the prompt response: the sum of what
//! its model requests reported, counted as their usage events pass on to the session — so no
//! step of the turn carries a counter, and the totals are exactly what the client was shown
//! in the turn's `usage_update`s.

use std::sync::Mutex;

use crate::chat::Message;
use crate::llm::Usage;
use crate::session::events::{EventSink, SessionEvent, Visibility};

/// A sink that passes everything to `inner`, adding up the requests' usage on the way.
pub struct UsageTally<'a> {
    inner: &'a dyn EventSink,
    total: Mutex<Option<Usage>>,
}

impl<'a> UsageTally<'a> {
    pub fn new(inner: &'a dyn EventSink) -> Self {
        UsageTally {
            inner,
            total: Mutex::new(None),
        }
    }

    /// The turn's totals; `None` when no model request reported any (a command's turn).
    pub fn total(&self) -> Option<Usage> {
        *self.total.lock().unwrap_or_else(|e| e.into_inner())
    }
}

impl EventSink for UsageTally<'_> {
    fn emit(&self, event: SessionEvent, visibility: Visibility) {
        if let SessionEvent::Usage {
            request: Some(usage),
            ..
        } = &event
        {
            let mut total = self.total.lock().unwrap_or_else(|e| e.into_inner());
            total.get_or_insert_with(Usage::default).add(usage);
        }
        self.inner.emit(event, visibility);
    }

    fn remember(&self, message: Message) {
        self.inner.remember(message);
    }
}
