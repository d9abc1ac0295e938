//! Per-call changes to what the user configured: the session's own `sandbox` option in place
//! of the configured mode, plan mode's narrowing (read-only, network off), and the widening
//! the user approved for one run (`run_command`'s `sandbox: "widen"`). Each returns a new
//! value; the configured setup is never changed.

use std::path::PathBuf;

use super::policy::{Policy, Setup};
use super::settings::{Mode, Network};

impl Setup {
    /// The setup one call runs under: the session's sandbox `mode` (the user's
    /// `sandbox` config option), and with `read_only` (plan mode) nothing writable but the
    /// temp dir and no network — unless the user switched the sandbox off.
    pub fn for_call(&self, mode: Mode, read_only: bool) -> Setup {
        let mut setup = self.clone();
        setup.settings.mode = mode;
        if read_only && mode != Mode::Off {
            setup.settings.mode = Mode::ReadOnly;
            setup.settings.network = Network::Off;
        }
        setup
    }
}

impl Policy {
    /// This policy with `writable` (canonical) added and the network on if `network`, for one
    /// run the user approved; an error naming a path that holds, or lies in, Hearth's state.
    pub fn widened(
        mut self,
        setup: &Setup,
        writable: &[PathBuf],
        network: bool,
    ) -> Result<Policy, String> {
        for path in writable {
            let own = setup
                .protected
                .iter()
                .find(|own| own.starts_with(path) || path.starts_with(own));
            if let Some(own) = own {
                return Err(format!(
                    "the sandbox cannot make {} writable: it is or holds Hearth's own state \
                     ({}), which no command may write",
                    path.display(),
                    own.display()
                ));
            }
        }
        self.writable.extend(writable.iter().cloned());
        if network {
            self.network = Network::On;
        }
        Ok(self)
    }

    /// This policy with no sandbox at all, for one run the user approved.
    pub fn unconfined(mut self) -> Policy {
        self.mode = Mode::Off;
        self
    }
}

#[cfg(test)]
mod tests {
    use std::path::Path;

    use super::*;

    fn setup() -> Setup {
        Setup {
            protected: vec!["/home/u/.local/share/hearth".into()],
            ..Setup::default()
        }
    }

    #[test]
    fn plan_narrows_to_read_only_without_network_unless_the_sandbox_is_off() {
        let mut on = setup();
        on.settings.network = Network::On;
        let plan = on.for_call(Mode::WorkspaceWrite, true);
        assert_eq!(plan.settings.mode, Mode::ReadOnly);
        assert_eq!(plan.settings.network, Network::Off);
        let ask = on.for_call(Mode::WorkspaceWrite, false);
        assert_eq!(ask.settings.mode, Mode::WorkspaceWrite);
        assert_eq!(ask.settings.network, Network::On);
        assert_eq!(on.for_call(Mode::Off, true).settings.mode, Mode::Off);
    }

    #[test]
    fn widening_adds_paths_and_network_but_never_hearths_state() {
        let setup = setup();
        let policy = Policy::new(&setup, &["/w".into()], "/t".into()).unwrap();
        let wide = policy
            .clone()
            .widened(&setup, &["/home/u/.npm".into()], true)
            .unwrap();
        assert!(wide.may_write(Path::new("/home/u/.npm/x")));
        assert!(wide.network_allowed());
        assert!(!policy.may_write(Path::new("/home/u/.npm/x")));
        for path in ["/home/u", "/home/u/.local/share/hearth/store"] {
            let error = policy
                .clone()
                .widened(&setup, &[path.into()], false)
                .unwrap_err();
            assert!(error.contains("Hearth's own state"), "{error}");
        }
        let off = policy.unconfined();
        assert!(!off.confines());
        assert!(off.may_write(Path::new("/etc/x")));
    }
}
