//! What a read waits for: every uncommitted write (`has_pending_writes`), or only the
//! uncommitted permission rules (`has_pending_rules`, `EngineContext::rules`).

use std::sync::mpsc;
use std::time::Duration;

use super::*;
use crate::config::StoreLocation;
use crate::store::RuleRow;

/// A host whose first delivery blocks until the test lets it go, holding the delivery
/// thread (and so every write queued behind it) uncommitted.
struct Gated {
    entered: Mutex<mpsc::Sender<()>>,
    gate: Mutex<mpsc::Receiver<()>>,
}

impl Host for Gated {
    fn deliver(&self, _frame: &str) {
        let _ = self.entered.lock().unwrap().send(());
        let _ = self
            .gate
            .lock()
            .unwrap()
            .recv_timeout(Duration::from_secs(10));
    }
}

fn rule() -> StoreOp {
    StoreOp::AddRule {
        workspace: "/w".into(),
        rule: RuleRow {
            tool: "write".into(),
            pattern: "*".into(),
            allow: true,
        },
    }
}

#[test]
fn only_a_queued_rule_is_a_pending_rule() {
    let store = Arc::new(Store::open(&StoreLocation::Memory).unwrap());
    let (entered_tx, entered) = mpsc::channel();
    let (open, gate) = mpsc::channel();
    let host = Gated {
        entered: Mutex::new(entered_tx),
        gate: Mutex::new(gate),
    };
    let outbox = Outbox::new(Arc::new(host));
    let (thread, _) = outbox.start(store.clone()).unwrap();
    outbox.frame("{}".into());
    entered.recv_timeout(Duration::from_secs(5)).unwrap();

    let other = StoreOp::TurnRunning {
        session_id: "s".into(),
        engine: "engine_1".into(),
        running: true,
    };
    outbox.write(other, None);
    assert!(outbox.has_pending_writes());
    assert!(!outbox.has_pending_rules(), "a write of another kind");
    outbox.write(rule(), None);
    assert!(outbox.has_pending_rules());

    open.send(()).unwrap();
    futures::executor::block_on(outbox.flushed());
    assert!(!outbox.has_pending_writes() && !outbox.has_pending_rules());
    let rules = store.reader().rules("/w").unwrap();
    assert_eq!(rules.len(), 1, "committed once no longer pending");
    outbox.shutdown();
    thread.join().unwrap();
}
