//! JSON-RPC 2.0: the envelope, error objects, requests to the client and the client's
//! requests in flight.

pub mod envelope;
pub mod error;
pub mod inflight;
pub mod outgoing;

pub use envelope::{Inbound, RequestId};
pub use error::RpcError;
