//! The sandbox's policy: what a command Hearth runs may touch. A second axis beside the
//! permission modes — the modes decide *when to ask*, this decides *what a command can
//! reach* once it runs. Pure domain types, no I/O: the mechanism that enforces a [`Policy`]
//! lives behind the process port (`io/process/`, Landlock + seccomp on Linux through
//! `platform/linux`).
//!
//! - `settings.rs`: the `sandbox` configuration setting as the user writes it, validated;
//! - `policy.rs`: a command's resolved policy — the writable set (workspace roots, extra
//!   roots, the session's private temp dir), the network — and the refusal of a root that
//!   holds Hearth's own state;
//! - `adjust.rs`: per-call changes — the session's `sandbox` option, plan mode's narrowing,
//!   a widening the user approved for one run;
//! - `hosts.rs`: whether a host is on an allowlist (the proxy's network allowlist, `fetch`'s
//!   `tools.fetchAllowHosts`);
//! - `denial.rs`: whether a failed command was stopped by the sandbox, and the block that
//!   tells the model so;
//! - `seatbelt.rs`: the policy as a macOS Seatbelt profile (golden-tested on every OS, built
//!   into the engine on macOS only).
//!
//! Only the user sets the policy (configuration, the session's `sandbox` option, approving
//! one run's widening or escalation); nothing the model sends can change it by itself.

mod adjust;
mod denial;
// `split_authority` serves the allowlist proxy, which Linux and macOS have.
#[cfg_attr(not(any(target_os = "linux", target_os = "macos")), allow(dead_code))]
mod hosts;
mod policy;
#[cfg(any(target_os = "macos", test))]
mod seatbelt;
mod settings;

pub use denial::{Denied, find_denial, notice};
pub use hosts::allowed;
#[cfg(any(target_os = "linux", target_os = "macos"))]
pub use hosts::split_authority;
pub use policy::{Policy, Setup};
#[cfg(target_os = "macos")]
pub use seatbelt::profile as seatbelt_profile;
pub use settings::{Bwrap, Mode, Network, Settings};
